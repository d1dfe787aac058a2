/*
 * moe_routing.h - a user's own MoE routing (`fast trace import --routing
 * FILE`): NumPy .npy arrays, JSON lines (Megatron-LM's router trace, or
 * one object per token), JSON nested arrays and CSV, holding either the
 * experts each token chose or per-expert counts; read into per-layer
 * struct fast_moe_tokens or counts, which fast_moe_import (moe.h) turns
 * into traffic by the same code as the bundled data set.  The formats,
 * and the upstream versions they were read from, are in docs/formats.md
 * ("Routing files").
 *
 * Internal to lib/workload (moe.h is the interface the command uses; this
 * header is included by root path "lib/workload/moe_routing.h").
 * Ownership: struct fast_moe_routing owns everything it points to; release
 * with fast_moe_routing_free (NULL-safe, idempotent).  Errors name the file
 * and the position: "file: [l, t, j]: ..." (.npy element index),
 * "file:LINE: ..." (text formats).
 */
#ifndef FAST_MOE_ROUTING_H
#define FAST_MOE_ROUTING_H

#include "fast/common.h"
#include "lib/workload/moe.h"
#include "lib/workload/moe_npy.h"

/* --- routing ------------------------------------------------------------ */

enum fast_routing_kind {
	FAST_ROUTING_IDS = 0,        /* expert ids per token */
	FAST_ROUTING_COUNTS = 1,     /* [layers, experts] selections */
	FAST_ROUTING_SRC_COUNTS = 2, /* [layers, gpus, experts] selections per source GPU */
};

struct fast_moe_routing {
	enum fast_routing_kind kind;
	char path[256];              /* for messages and the provenance text */
	const char *format;          /* "npy", "jsonl", "json", "csv" */
	uint32_t experts, topk;      /* topk: IDS only */
	uint32_t ngpus;              /* SRC_COUNTS: sources; IDS: 1 + largest source given, or 0 */
	uint32_t nlayers;
	uint32_t *layers;            /* nlayers layer numbers, ascending, distinct */
	struct fast_moe_tokens *tok; /* IDS: nlayers; tok[i].src NULL when no sources given */
	uint64_t *counts;            /* COUNTS: nlayers * experts; SRC_COUNTS: nlayers * ngpus * experts */
};

struct fast_moe_routing_opt {
	const char *path;
	uint32_t experts;            /* 0: from the file (counts); ids need it */
	bool counts;                 /* .npy: the array holds counts, not ids */
	bool tokens_first;           /* .npy 3-D ids: [tokens, layers, top_k] (vLLM) */
	const char *src_path;        /* .npy ids: NULL or a 1-D array of token source GPUs */
};

/* Read the routing of opt->path by its extension (.npy, .jsonl, .json,
 * .csv; anything else is FAST_EUSAGE).  Checks: expert ids in
 * [0, experts), no expert twice in one token, one top_k throughout,
 * counts that sum within 2^53 per layer.  FAST_EINPUT naming file and
 * position, FAST_EUSAGE (an option the file needs or contradicts),
 * FAST_ELIMIT, FAST_ENOMEM. */
int fast_moe_routing_load(const struct fast_moe_routing_opt *opt, const struct fast_limits *lim,
			  struct fast_moe_routing *out, struct fast_err *err);
void fast_moe_routing_free(struct fast_moe_routing *r);

/* Index of layer number `layer` in r, or -1. */
int fast_moe_routing_find(const struct fast_moe_routing *r, uint32_t layer);

/* A copy of layer `layer`'s tokens (IDS) into *t (caller frees with
 * fast_moe_tokens_free); FAST_EINPUT when a token's source GPU is not
 * below ng. */
int fast_moe_routing_tokens(const struct fast_moe_routing *r, uint32_t layer, uint32_t ng,
			    struct fast_moe_tokens *t, struct fast_err *err);

/* Add layer `layer`'s token copies (COUNTS, SRC_COUNTS) to counts (ng x
 * ng): per-source counts go to the GPU of each expert's replica for that
 * source; plain counts are split evenly over the ng sources first (largest
 * remainder, fast_apportion rotated by the expert id).  FAST_EINPUT when
 * the file's GPUs are not the layout's. */
int fast_moe_routing_count(const struct fast_moe_routing *r, const struct fast_moe_layout *l,
			   uint32_t layer, uint64_t *counts, struct fast_err *err);

/* Parsers of the text formats (moe_routing_text.c), into r whose path,
 * format and experts (0 = from the file) the caller set. */
int fast_moe_routing_jsonl(const char *text, size_t len, struct fast_moe_routing *r,
			   struct fast_err *err);
int fast_moe_routing_json(const char *text, size_t len, struct fast_moe_routing *r,
			  struct fast_err *err);
int fast_moe_routing_csv(const char *text, size_t len, struct fast_moe_routing *r,
			 struct fast_err *err);

/* Tokens of the text formats in file order, before they are sorted into
 * layers: token i is in layer[i], starts on src[i] (when have_src) and
 * chose ids[i * topk ..].  Each token must have been checked
 * (fast_moe_routing_token_bad).  Ownership: the arrays, until
 * fast_moe_routing_rows_finish moves them into a routing; _rows_free
 * (NULL-safe) releases what is left. */
struct fast_moe_rows {
	uint64_t n, cap;
	uint32_t topk;     /* 0 until the first token */
	bool have_src;     /* fixed by the first token */
	uint32_t *layer, *src;
	uint16_t *ids;
};
/* Append one token (src ignored unless have_src); FAST_ENOMEM. */
int fast_moe_rows_add(struct fast_moe_rows *b, uint32_t layer, uint32_t src, const int64_t *ids,
		      struct fast_err *err);
/* Sort the tokens into r's layers (ascending layer numbers, file order
 * within a layer): sets r->layers, nlayers, tok, topk, ngpus.  FAST_EINPUT
 * "r->path: no tokens" when there are none. */
int fast_moe_rows_finish(struct fast_moe_rows *b, struct fast_moe_routing *r,
			 struct fast_err *err);
void fast_moe_rows_free(struct fast_moe_rows *b);

/* Set r's layers to 0 .. n-1 and allocate r->counts (nlayers * per,
 * zeroed); FAST_ENOMEM. */
int fast_moe_routing_alloc_counts(struct fast_moe_routing *r, uint32_t n, uint64_t per,
				  struct fast_err *err);
/* After counts are filled: every layer's sum <= 2^53 (FAST_EINPUT naming
 * the layer otherwise). */
int fast_moe_routing_check_sums(const struct fast_moe_routing *r, struct fast_err *err);
/* Check one token's ids ids[0..k) (each in [0, E), none twice): -1 when
 * they are fine, else the index of the first bad one, with "what is
 * wrong" in msg (size n). */
int fast_moe_routing_token_bad(const int64_t *ids, uint32_t k, uint32_t E, char *msg, size_t n);

#endif
