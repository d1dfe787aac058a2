/*
 * tokens_internal.h - what the token-aware compilers share (compile_tokens.c:
 * fast; baselines.c: hier): the deduplicated streams of a token matrix, the
 * masks of a combine plan, and the scale-up steps every per-server dedup
 * schedule has (direct local copies; gather and reduce before a combine
 * crossing; forwards after a dispatch crossing).  Not part of the
 * library's interface (algo.h is).
 *
 * Streams.  With per-server dedup, GPU s sends a group g needing server
 * B != server(s) across once: the bytes GPU s has for server B are the
 * stream (s, B), the groups of src s with a destination on B, whole and
 * in group order.  The bytes s has for a GPU d on its own server (d != s)
 * are the local stream (s, d), the groups of src s with d in Dest(g).
 * Both are laid out as a virtual ng x ng byte matrix D: D[s][d] for the
 * local stream, D[s][B * G + s % G] for the stream (s, B) (the column on
 * s's rail; which GPU of B names it is immaterial, a byte schedule of D
 * only has to send it to server B), so that a byte schedule of D is a
 * token schedule once its pieces are read through the streams
 * (tok_streams_cut).  The diagonal and every other entry are 0.
 *
 * Combine plans mirror dispatch: a group's contributions on a remote
 * server B are gathered onto the GPU x that carries its bytes across and
 * summed there (a REDUCE) before crossing; contributions on src's own
 * server go to src directly.
 *
 * Ownership: a struct tok_streams owns its arrays (tok_streams_free); a
 * struct tok_build owns its scratch (tok_build_free), not the plan.
 */
#ifndef FAST_TOKENS_INTERNAL_H
#define FAST_TOKENS_INTERNAL_H

#include "lib/base/holds.h"
#include "fast/plan.h"
#include "fast/topo.h"
#include "fast/traffic.h"

struct tok_streams {
	const struct fast_matrix *m;
	uint32_t N, G, ng;
	uint64_t *D;    /* ng * ng, as above */
	size_t *key0;   /* ng * ng + 1: the entries of stream (s, c) are [key0[s*ng+c], key0[s*ng+c+1]) */
	uint32_t *grp;  /* the group of each entry */
	uint64_t *at;   /* the stream offset of each entry */
};

/* Build the streams of token matrix m (kind DISPATCH or COMBINE, groups
 * in range: the loader's guarantee) on topo.  FAST_EINPUT if m's stream
 * sums overflow 64 bits, FAST_ENOMEM. */
int tok_streams_build(struct tok_streams *ts, const struct fast_topo *topo,
		      const struct fast_matrix *m, struct fast_err *err);
void tok_streams_free(struct tok_streams *ts);
/* Only the virtual matrix D of the streams above into D (ng x ng, the
 * caller's; overwritten), as tok_streams_build lays it out: what
 * `--algo auto` predicts the token plans from.  m's sums as there. */
void tok_dedup_matrix(const struct fast_topo *topo, const struct fast_matrix *m, uint64_t *D);

/* The column of D that names stream (s, server b). */
static inline uint32_t tok_out_col(const struct tok_streams *ts, uint32_t s, uint32_t b)
{
	return b * ts->G + s % ts->G;
}

/* Bits of Dest(g) (bit i = the i-th destination) on server b. */
uint64_t tok_server_mask(const struct fast_matrix *m, uint32_t g, uint32_t b, uint32_t G);

/* A byte range of one group, with the GPUs it goes between. */
struct tok_item {
	uint32_t g;
	uint32_t from, to; /* as the caller uses them */
	uint64_t off, len;
};

struct tok_move {
	uint32_t from, to, unit; /* transfers are one per (from, to, unit) */
	size_t seq;              /* push order: pieces keep it within a transfer */
	struct fast_piece pc;
};

/* A plan under construction with its scratch. */
struct tok_build {
	struct fast_plan *p;
	const struct fast_matrix *m;
	uint32_t N, G;
	struct tok_item *items; size_t nitems, cap_items;
	struct tok_move *mv;    size_t nmv, cap_mv;
	struct fast_holds masks; /* mask -> one record [0, 1) tagged with its index in p->masks */
	struct fast_err *err;
};

void tok_build_init(struct tok_build *tb, struct fast_plan *p, const struct fast_matrix *m,
		    uint32_t N, uint32_t G, struct fast_err *err);
void tok_build_free(struct tok_build *tb);

/* Append to tb->items the pieces of stream (s, c) covering stream bytes
 * [off, off + len) (within D[s][c]), one item per group touched, with
 * from = s and to = x.  0 or FAST_ENOMEM. */
int tok_streams_cut(const struct tok_streams *ts, uint32_t s, uint32_t c, uint64_t off,
		    uint64_t len, uint32_t x, struct tok_build *tb);

/* The index in p->masks of mask (added once), >= 0, or FAST_ENOMEM. */
int tok_mask(struct tok_build *tb, uint64_t mask);

/* Queue a piece (g, k, off, len) to move from -> to in transfer `unit`. */
int tok_push(struct tok_build *tb, uint32_t from, uint32_t to, uint32_t unit, uint32_t g,
	     uint32_t k, uint64_t off, uint64_t len);

/* Emit the queued moves as a new step of kind/tier, waiting (fully) for
 * the steps deps[0..n) that are >= 0: one transfer per (from, to, unit),
 * ascending, pieces in push order.  *id = the step, or -1 and no step
 * when nothing is queued.  Clears the queue. */
int tok_emit(struct tok_build *tb, enum fast_step_kind kind, enum fast_tier_id tier,
	     const int *deps, int n, int *id);

/* The direct copies over scale-up between src(g) and the destinations on
 * its server (dispatch src -> d; combine d -> src, mask {d}), one step
 * waiting for step `after` when >= 0; *id as tok_emit. */
int tok_local_step(struct tok_build *tb, int after, int *id);

/* Combine, before a crossing: for every item (g, to = x on server B, off,
 * len), the contributions of Dest(g) on B other than x's go to x (a
 * gather step waiting for step `after`, when >= 0), and where there are
 * two or more of them x sums them (a REDUCE step waiting for the gather),
 * so that x holds (g, [off, off + len), tok_server_mask(g, B)).  *gid,
 * *rid: the steps, or -1 where none was needed.  Uses tb->items as is. */
int tok_gather_reduce(struct tok_build *tb, int after, int *gid, int *rid);

#endif
