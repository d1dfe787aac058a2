/*
 * msccl.h - export a plan as an MSCCL algorithm (the XML that MSCCL and
 * RCCL's MSCCL path load: <algo> / <gpu> / <tb> / <step>), for
 * `fast export --format msccl`.
 *
 * The XML format moves whole chunks of one size per collective call, so the
 * export quantises: with chunk size C, message D[s][d] of L > 0 bytes
 * becomes q = max(1, round(L / C)) chunks, and a byte position b of that
 * message maps to chunk boundary round(b * q / L).  The map is monotone
 * and sends 0 -> 0 and L -> q, so the pieces that partition a message
 * partition its chunks too: every piece becomes a (possibly empty)
 * consecutive chunk range, relays forward exactly the chunks they
 * received, and the destination gets exactly q chunks.  The bytes changed
 * by rounding (sum over messages of |q*C - L|) are reported.
 *
 * Buffers (alltoallv packed into MSCCL's alltoall): GPU s's input buffer
 * ("i") holds its messages back to back in destination order, message
 * (s, d) at chunk in_off[s][d]; GPU d's output buffer ("o") holds what it
 * receives in source order, message (s, d) at chunk out_off[s][d]; a GPU
 * that relays keeps the chunks it forwards in its scratch buffer ("s"),
 * one slot per received chunk (no reuse).  The diagonal (a local copy) is
 * exported as "cpy" steps when the caller passes the matrix.
 *
 * Thread blocks: per GPU one block per send peer (send=peer, recv=-1) and
 * one per receive peer (send=-1, recv=peer), plus one local-copy block
 * (send=-1, recv=-1, chan 0).  Pair (A -> B) uses channel ((B - A) mod NG - 1) mod nchannels
 * on both ends, with nchannels chosen so that a channel holds at most
 * FAST_MSCCL_MAX_TB_PER_CHANNEL blocks of a GPU when possible.  The plan's
 * transfers are emitted in a topological order of its steps, each piece
 * as steps of at most max_cnt chunks, the send on A and the matching
 * receive on B with the same counts in the same order.  Dependencies: a
 * step that forwards scratch chunks waits for the receive step that
 * brought them (MSCCL's depid/deps; several dependencies are carried by
 * preceding "nop" steps), and the first step of a plan step in a block
 * waits for the last step, on the same GPU, of each plan step it depends
 * on.  Every dependency points to a step emitted earlier, so the program
 * cannot deadlock.
 *
 * Ownership: struct fast_msccl owns its arrays; fast_msccl_free() releases
 * them (NULL-safe).
 */
#ifndef FAST_MSCCL_H
#define FAST_MSCCL_H

#include <stdio.h>

#include "fast/common.h"
#include "fast/plan.h"

#define FAST_MSCCL_MAX_TB_PER_CHANNEL 32u /* MSCCL's per-channel block limit */
#define FAST_MSCCL_MAX_STEPS 256u         /* MSCCL's steps per block */
#define FAST_MSCCL_MAX_CHANNELS 32u

enum fast_msccl_buf { FAST_MSCCL_IN = 0, FAST_MSCCL_OUT = 1, FAST_MSCCL_SCRATCH = 2 };
enum fast_msccl_op { FAST_MSCCL_SEND = 0, FAST_MSCCL_RECV = 1, FAST_MSCCL_COPY = 2,
		     FAST_MSCCL_NOP = 3 };

struct fast_msccl_opts {
	uint64_t chunk_bytes; /* C; 0 = automatic (see fast_msccl_build) */
	uint32_t max_chunks;  /* automatic C: most chunks in one GPU's buffer (default 1024) */
	uint32_t max_cnt;     /* most chunks per step (default 64; MSCCL needs < 72) */
	char name[64];        /* <algo name=...>; default "fast-<algo>" */
	char proto[16];       /* "Simple" (default), "LL", "LL128" */
	bool pad;             /* uniform buffers: every GPU's i_chunks and o_chunks
			       * = nchunksperloop (MSCCL's alltoall calls every rank
			       * with the same count); the layout is unchanged and
			       * the tails are never touched */
};
void fast_msccl_opts_default(struct fast_msccl_opts *o);

struct fast_msccl_step {
	enum fast_msccl_op op;
	enum fast_msccl_buf srcbuf, dstbuf;
	int64_t srcoff, dstoff; /* chunk offsets; -1 for a nop */
	uint32_t cnt;
	int32_t depid, deps;    /* block and step waited for; -1 none */
	uint8_t hasdep;         /* another step waits for this one */
};

struct fast_msccl_tb {
	uint32_t gpu, id;       /* id: index among the GPU's blocks */
	int32_t send, recv;     /* peers, -1 none */
	int32_t chan;           /* 0 for the local-copy block */
	uint32_t step0, nsteps; /* range in steps[] (blocks are contiguous) */
};

struct fast_msccl {
	uint32_t ngpus, nchannels, nchunksperloop;
	char name[64], proto[16];
	uint64_t *i_chunks, *o_chunks, *s_chunks; /* per GPU */
	struct fast_msccl_tb *tbs; uint32_t ntbs; /* sorted by (gpu, id) */
	struct fast_msccl_step *steps; size_t nsteps;
	/* quantisation report */
	uint64_t chunk_bytes;
	uint64_t total_bytes;    /* bytes of the exported messages */
	uint64_t rounded_bytes;  /* sum |q*C - L| */
	uint64_t boundary_moves; /* piece boundaries that were not chunk aligned */
	uint64_t dropped_pieces; /* pieces rounded to no chunk */
	/* MSCCL runtime limits this program exceeds (0 = fits) */
	uint32_t max_tb_steps, max_tbs_per_channel;
	/* chunk counts per GPU pair as link traffic: link[a * ngpus + b] */
	uint64_t *link_chunks;
	/* q[s * ngpus + d]: chunks of message (s, d) */
	uint64_t *q;
};

/* Build the MSCCL program of plan p (compact or explicit; expanded by
 * fast_plan_view_open).  D (ng x ng, may be NULL) adds the diagonal local
 * copies; message sizes otherwise come from the pieces that reach their
 * destination.  Automatic chunk size: the gcd of every message size and
 * piece boundary when that keeps every buffer within max_chunks chunks,
 * else ceil(largest buffer / max_chunks) rounded up to a multiple of that
 * gcd.  Returns 0, FAST_EINPUT for
 * a malformed plan, FAST_ELIMIT when a count overflows MSCCL's int
 * attributes, FAST_ENOMEM.  out is written only on success. */
int fast_msccl_build(const struct fast_plan *p, const uint64_t *D,
		     const struct fast_msccl_opts *o, struct fast_msccl *out,
		     struct fast_err *err);
/* The same on an open view of the plan (plan.h). */
int fast_msccl_build_view(const struct fast_plan_view *v, const uint64_t *D,
			  const struct fast_msccl_opts *o, struct fast_msccl *out,
			  struct fast_err *err);
void fast_msccl_free(struct fast_msccl *m);

/* Write the XML (deterministic; the header comment states the chunk size
 * and rounding).  FAST_EIO on a stream error. */
int fast_msccl_write(const struct fast_msccl *m, FILE *f, struct fast_err *err);

#endif
