/*
 * moe.h - mixture-of-experts traffic: where experts and tokens live on an
 * expert-parallel (EP) group of GPUs, how routed tokens become byte
 * matrices, and import of real routing measurements (the data set of
 * data/moe, see its README.md) into traffic traces.
 *
 * The workload: a MoE layer's dispatch all-to-all sends each token from the
 * GPU that holds it (its source) to the GPUs holding the experts the router
 * chose for it; the combine all-to-all sends the results back, so combine
 * is the transpose of dispatch.  A token is sent once to a GPU even when
 * several of its chosen experts live there (as DeepEP and similar
 * dispatchers deduplicate per rank); the diagonal holds the tokens whose
 * experts are local, a copy that never crosses a link.
 *
 * Layout (struct fast_moe_layout):
 *   experts: contiguous   expert e on GPU floor(e * ng / E) (blocks of E/ng)
 *            round-robin  expert e on GPU e mod ng
 *     With fewer experts than GPUs (E < ng, ng a multiple of E) each expert
 *     has r = ng / E replicas (contiguous: GPUs e*r .. e*r+r-1; round-robin:
 *     GPUs e, e+E, e+2E, ...) and a token from source s uses replica s mod r.
 *   tokens:  contiguous   the T tokens, in data order, cut into ng blocks
 *                         (token t on GPU floor(t * ng / T))
 *            round-robin  token t on GPU t mod ng
 *
 * Real data: two kinds of measurement, two methods.
 *   per-token routing (DeepSeek-V2-Lite, intent task: every token's top-6)
 *     gives the exact dispatch matrix for a layout: count, per token, the
 *     distinct GPUs of its experts.
 *   per-expert counts (OLMoE / Mixtral per domain, DeepSeek-V2-Lite per
 *     sequence for the other tasks, switch-base-128 pooled) give only how
 *     many tokens chose each expert in a group of tokens.  Each group's
 *     selections of expert e are split over the source GPUs in proportion
 *     to the group's tokens on each source (largest remainder, exact
 *     integers), i.e. the assumption is that routing does not depend on
 *     which GPU holds a token.  Co-selection is unknown, so every
 *     (token, expert) selection is one token copy: no per-GPU
 *     deduplication, an upper bound on the deduplicated dispatch (exact for
 *     a dispatcher that sends one copy per selected expert, and exact
 *     whenever a token's experts all live on distinct GPUs).
 *
 * Bytes per token default to the model's hidden size in bf16 (2 bytes per
 * element): DeepSeek-V2-Lite 2048 -> 4096 B, OLMoE 2048 -> 4096 B,
 * Mixtral-8x7B 4096 -> 8192 B, switch-base-128 768 -> 1536 B.
 *
 * Files are read whole (fast_read_file); parse errors name "file:line".
 * Ownership: struct fast_moe_tokens and struct fast_moe_groups own their
 * arrays (release with their _free, NULL-safe); fast_moe_import fills a
 * struct fast_traffic the caller frees with fast_traffic_free().
 */
#ifndef FAST_MOE_H
#define FAST_MOE_H

#include "fast/common.h"
#include "fast/topo.h"
#include "fast/traffic.h"

struct fast_moe_routing; /* lib/workload/moe_routing.h */
struct fast_moe_place;   /* lib/workload/moe_place.h */

enum fast_placement {
	FAST_PLACE_CONTIGUOUS = 0,
	FAST_PLACE_ROUND_ROBIN = 1,
};

/* "contiguous" or "round-robin" (FAST_EUSAGE otherwise). */
int fast_placement_parse(const char *name, enum fast_placement *out, struct fast_err *err);
const char *fast_placement_name(enum fast_placement p);

struct fast_moe_layout {
	uint32_t ng;                  /* GPUs of the EP group */
	uint32_t experts;             /* E */
	enum fast_placement experts_at; /* expert -> GPU */
	enum fast_placement tokens_at;  /* token -> source GPU */
	/* NULL, or an explicit placement of one layer (moe_place.h): expert
	 * e's replicas on GPUs rep_gpu[rep_off[e] .. rep_off[e + 1]), which
	 * replace experts_at.  A token of GPU s uses (replica choice): with
	 * spread false, a replica on s, else one on s's server (servers of
	 * gpus_per_server GPUs), else any; among the candidates, the
	 * (s mod their number)-th; with spread true, always the (s mod
	 * replicas)-th of all.  Byte and token traffic both route by it. */
	const uint32_t *rep_off, *rep_gpu;
	uint32_t gpus_per_server;
	bool spread;
};

/* ng >= 1, E >= 1, and E >= ng or ng a multiple of E (FAST_EINPUT). */
int fast_moe_layout_check(const struct fast_moe_layout *l, struct fast_err *err);
/* GPU holding the replica of expert `expert` used by tokens of GPU src. */
uint32_t fast_moe_expert_gpu(const struct fast_moe_layout *l, uint32_t expert, uint32_t src);
/* Source GPU of token `token` out of ntokens (token < ntokens). */
uint32_t fast_moe_token_src(const struct fast_moe_layout *l, uint64_t token, uint64_t ntokens);

/* Per-token routing: ids[t * topk + j] is the j-th expert of token t;
 * src[t], when src is not NULL, the GPU the token starts on (a routing
 * file that says it), else the layout's rule (fast_moe_token_src). */
struct fast_moe_tokens {
	uint64_t ntokens;
	uint32_t topk;
	uint32_t nseq;  /* lines (sequences) read */
	uint16_t *ids;  /* ntokens * topk, owned */
	uint32_t *src;  /* NULL or ntokens source GPUs (< the layout's ng), owned */
};
void fast_moe_tokens_free(struct fast_moe_tokens *t);

/* Add token copies to counts (ng x ng, row = source, col = destination):
 * with dedup, one per token and distinct destination GPU; without, one per
 * (token, expert).  Expert ids must be < l->experts (FAST_EINPUT). */
int fast_moe_count_tokens(const struct fast_moe_layout *l, const struct fast_moe_tokens *t,
			  bool dedup, uint64_t *counts, struct fast_err *err);

/* Add to pairs[g] (ng entries) the (token, expert) pairs GPU g computes:
 * one per token and expert, at the GPU of the replica the token uses (the
 * column sums of fast_moe_count_tokens without dedup).  FAST_EINPUT for
 * an expert id out of range. */
int fast_moe_tokens_pairs(const struct fast_moe_layout *l, const struct fast_moe_tokens *t,
			  uint64_t *pairs, struct fast_err *err);

/* Add every token of t to b as one token of its source GPU going to the
 * distinct GPUs of its experts (traffic.h token groups; a token is on
 * GPU fast_moe_token_src, its j-th expert on fast_moe_expert_gpu), so that
 * the byte view of the groups is fast_moe_count_tokens with dedup.
 * FAST_EINPUT for an expert id out of range or a token on more than
 * FAST_GROUP_MAX_DESTS GPUs; the builder's errors (FAST_ELIMIT). */
int fast_moe_group_tokens(const struct fast_moe_layout *l, const struct fast_moe_tokens *t,
			  struct fast_groups *b, struct fast_err *err);

/* Per-expert counts of consecutive groups of tokens (sequences, or one
 * group for pooled counts): group g holds tokens[g] tokens, the next ones
 * in data order, and counts[g * experts + e] selections of expert e. */
struct fast_moe_groups {
	uint32_t ngroups, experts;
	uint64_t *tokens;  /* ngroups, owned */
	uint64_t *counts;  /* ngroups * experts, owned */
};
void fast_moe_groups_free(struct fast_moe_groups *g);

/* Add token copies to counts by the proportional method above.  A group
 * with selections but no tokens is FAST_EINPUT. */
int fast_moe_count_groups(const struct fast_moe_layout *l, const struct fast_moe_groups *g,
			  uint64_t *counts, struct fast_err *err);

/* Parsers (name is used in messages as "name:line: ...").
 * DeepSeek ESFT raw file (raw_intent/expert_weights_L.txt): one line per
 * sequence, topk * n expert ids (tab separated), two tabs, then topk * n
 * gate weights; a token's ids are distinct and < experts. */
int fast_moe_parse_deepseek_raw(const char *text, size_t len, const char *name,
				uint32_t experts, uint32_t topk, struct fast_moe_tokens *out,
				struct fast_err *err);
/* DeepSeek ESFT per_sequence_expert_counts.csv: header
 * "task,moe_layer,seq,ntokens,e0,...,e{E-1}"; rows of (task, layer) give
 * sequences 0, 1, ... in order, each with sum of counts = topk * ntokens. */
int fast_moe_parse_seq_csv(const char *text, size_t len, const char *name,
			   const char *task, uint32_t layer, uint32_t experts, uint32_t topk,
			   struct fast_moe_groups *out, struct fast_err *err);
/* OLMoE expert_counts.csv: header "model,selection,domain,layer,expert,
 * count"; the rows of (model, selection, domain, layer) name each expert
 * once; tokens = sum / k where k = topk for selection "topk", 1 for
 * "top1" (must divide).  One group. */
int fast_moe_parse_counts_csv(const char *text, size_t len, const char *name,
			      const char *model, const char *selection, const char *domain,
			      uint32_t layer, uint32_t experts, uint32_t topk,
			      struct fast_moe_groups *out, struct fast_err *err);
/* Distinct layers present in a CSV for the filter (sorted ascending): for
 * the per-sequence file model/selection are NULL and domain is the task.
 * *out is malloc'ed (caller frees); *n may be 0. */
int fast_moe_csv_layers(const char *text, size_t len, const char *name, bool per_sequence,
			const char *model, const char *selection, const char *domain,
			uint32_t **out, uint32_t *n, struct fast_err *err);

/* Models of the data set (--source names). */
struct fast_moe_model {
	const char *name;       /* "deepseek-v2-lite", "olmoe", "mixtral", ... */
	const char *title;      /* model id, for provenance */
	const char *origin;     /* repository and folder, licence */
	uint32_t experts, topk, hidden;
	const char *default_domain;
	const char *domains;    /* comma-separated, for messages */
};
/* NULL for an unknown name. */
const struct fast_moe_model *fast_moe_model_find(const char *name);
/* NULL-terminated list of model names. */
const char *const *fast_moe_model_names(void);

struct fast_moe_import {
	const char *source;        /* model name (fast_moe_model_find) */
	const char *data_dir;      /* the data set root (data/moe); the caller finds it */
	const char *domain;        /* NULL = model default (task for DeepSeek) */
	const char *selection;     /* OLMoE/Mixtral: "topk" (NULL) or "top1" */
	const uint32_t *layers;    /* NULL or nlayers == 0: every layer present */
	uint32_t nlayers;
	uint32_t ng;               /* EP size */
	uint32_t gpus_per_server;  /* for provenance text only; 0 = not said */
	enum fast_placement experts_at, tokens_at;
	uint64_t token_bytes;      /* 0 = the model's default (hidden * 2) */
	bool no_dedup;             /* per-token data: one copy per (token, expert) */
	bool tokens;               /* token groups (DISPATCH / COMBINE matrices, traffic.h)
				    * instead of byte matrices; per-token data only */
	bool no_combine;           /* only dispatch matrices */
	/* NULL, or called after each layer with the layers built and their
	 * number (the command's progress line; lib/ does not print) */
	void (*progress)(void *arg, uint32_t done, uint32_t n);
	void *progress_arg;
	/* explicit placements (moe_place.h), replacing experts_at: place_path,
	 * a file of one map per imported layer, or eplb (R = eplb_redundant): EPLB's
	 * hierarchical policy with R redundant experts on each layer's own
	 * loads, written to place_out when not NULL (its phy2log is the
	 * caller's to free with fast_moe_place_free) */
	const char *place_path;
	uint32_t eplb_redundant;
	bool eplb;
	bool replica_local;         /* the replica choice: local (else spread, the default) */
	struct fast_moe_place *place_out;
	/* NULL, or a user's routing (moe_routing.h, fast_moe_routing_load)
	 * imported instead of `source` (then ignored): the same layouts,
	 * dedup, token traffic and combine as the data set; token_bytes is
	 * required (the file does not say the hidden size) */
	const struct fast_moe_routing *routing;
};

/* Build a trace with, per layer in ascending order, "layerL/dispatch" and
 * (unless no_combine) "layerL/combine" = its transpose, each with the
 * layer's compute_pairs (traffic.h: per GPU, its (token, expert) pairs); switch-base-128
 * has one pooled layer, labelled "pooled/...".  t->source names the data
 * set, its licence and the method.  Errors: FAST_EUSAGE (unknown source,
 * domain, selection or layer), FAST_EINPUT (unreadable or malformed data,
 * "file:line: ..."), FAST_ELIMIT (sizes), FAST_ENOMEM. */
int fast_moe_import(const struct fast_moe_import *opt, const struct fast_limits *lim,
		    struct fast_traffic *out, struct fast_err *err);

#endif
