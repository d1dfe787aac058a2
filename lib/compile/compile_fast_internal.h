/*
 * compile_fast_internal.h - what the FAST compiler's files share: the
 * builder (its scratch slots, the handovers it records, the plan it
 * writes), the rails a tile is balanced onto, the shift and wave
 * arithmetic of packed stages, the balancing groups of balance=jit, and
 * the entry points of each part: balancing (compile_fast_balance.c), the
 * staged step graph (compile_fast_steps.c), packed stages and the model
 * that chooses them (compile_fast_packed.c), driven by compile_fast.c.
 * Not part of the library's interface (algo.h is).
 */
#ifndef FAST_COMPILE_FAST_INTERNAL_H
#define FAST_COMPILE_FAST_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "fast/algo.h"
#include "lib/compile/bvn.h"

struct move {
	uint32_t group; /* the balancing group whose step carries it (jit; else 0) */
	uint32_t key;   /* (A * G + from rail) * G + to rail */
	uint32_t piece; /* the handed piece, as it stands in its lane (plan->pieces) */
};

/* The builder's scratch slots (struct fast_scratch). */
enum { SC_LOAD, SC_S, SC_FIRST, SC_MOVES, SC_TMP, SC_CNT, SC_BUDGET, SC_TARGET };

/* How a compile sees the NICs (compile_fast_nics.c).  IDEAL: one NIC per
 * GPU at the nominal rate, the path every plan was built on before NICs
 * could differ, kept as it was.  UNIFORM: every GPU's share of its port
 * (topo.h) the same, but K != G: the same lanes, the models at that
 * share, packed stages on whole ports.  WEIGHTED: shares differ (a slow
 * or failed NIC, K not a divisor or multiple of G): lane targets in
 * proportion to them, see compile_fast_nics.c. */
enum nic_mode { NICS_IDEAL = 0, NICS_UNIFORM, NICS_WEIGHTED };

/* The weight of a GPU whose share is the fastest (r0): weights are
 * fixed-point fractions of it, so that the plan is all integer work. */
#define NIC_W1 65536u

struct nics; /* compile_fast_nics.c: the weights, orders and cursors */

struct builder {
	uint32_t N, G, ng;
	const uint64_t *D;
	uint64_t *load; /* N * N * G: load[(A * N + B) * G + i] = r_i of tile (A, B) */
	uint64_t *S;    /* N * N server matrix */
	uint32_t *first; /* N * N: balancing group of the first (ordered) stage with perm[A] == B */
	uint64_t nnz;    /* non-zero cross-server entries of D */
	struct move *moves;
	size_t nmoves;
	struct fast_scratch *sc; /* owns load, S, first, moves and fast_balance_sort's arrays */
	bool keep;               /* sc is the caller's, kept for the next compile */
	bool jit;
	bool fine_groups;        /* jit: a balancing group per octave of stages (group_index) */
	uint32_t ngroups;        /* balancing groups (1 unless jit) */
	bool redist;             /* explicit stages: with their redistribution (not for tokens) */
	double fwd;              /* token plans: what their scale-up work moves per lane
				  * byte, in byte plans' redistributions (the models'
				  * rho; compile_tokens.c); 0: a byte plan */
	bool packed;             /* packed stages: tile (A, A + d) on the rails of shift d */
	uint64_t *budget;        /* packed: N - 1 budgets, shift d at d - 1 (the largest lane) */
	uint64_t *budget_time;   /* WEIGHTED, packed: N - 1 wave times in r0-bytes, else NULL */
	uint64_t *tt;            /* G: the lane targets of the tile being balanced */
	enum nic_mode mode;
	uint32_t P;              /* packed stages: ports they share out (G unless K < G) */
	uint32_t pdiv;           /* packed stages: GPUs per port (1 unless K < G) */
	double r0;               /* bytes/s of a lane of weight NIC_W1 (not IDEAL) */
	struct nics *nx;         /* WEIGHTED: weights and orders, else NULL */
	size_t lane_pieces;      /* pieces the lanes hold (plan->pieces[0, lane_pieces)) */
	/* staged: rail step r carries the terms gstart[r] .. gstart[r + 1] - 1
	 * (compile_fast_group.c); nrail 0: one term a step, gstart unused */
	uint32_t *gstart;        /* owned, nrail + 1 entries */
	uint32_t nrail;
	uint32_t *dstart;        /* owned: the unbalanced schedule's grouping, ndirect + 1
				  * entries (compile_fast_direct.c) */
	uint32_t ndirect;
	struct fast_plan *p;
	struct fast_err *err;
};
static inline int oom(struct builder *bd, const char *what)
{
	return fast_err_set(bd->err, FAST_ENOMEM, "fast: out of memory (%s)", what);
}

static inline uint64_t msg(const struct builder *bd, uint32_t a, uint32_t i, uint32_t b, uint32_t j)
{
	return bd->D[((size_t)a * bd->G + i) * bd->ng + (size_t)b * bd->G + j];
}

/* The rails a tile is balanced onto: rail i is one of them iff
 * (i / div) % mod == res (mod = 1, res = 0: all G; packed stages: the
 * rails of its shift, whole ports of div GPUs each), each with lane
 * target t, the others 0. */
struct rails {
	uint32_t mod, res, div;
	uint64_t t;
};

/* The shift index (d - 1) of tile (A, B) in packed stages, d = B - A mod N. */
static inline uint32_t shift_of(uint32_t N, uint32_t a, uint32_t b)
{
	return (b + N - a) % N - 1;
}

/* Packed stages: how many shifts share the rails at once (shift s runs on
 * the rails i % mod == s % mod, in wave s / mod). */
static inline uint32_t pack_mod(uint32_t N, uint32_t G)
{
	uint32_t M = N > 1 ? N - 1 : 1;
	return M < G ? M : G;
}

/* The balancing group of stage k under balance=jit: group 0 is the first
 * stage, group 1 all the others.  The first stage waits only for its own
 * tiles (one per server); the rest are balanced while it runs, and stage
 * 2 waits for them (scale-up is many times faster than a NIC, so that is
 * hidden behind stage 1 and its redistribution).  Measured on the
 * simulator, finer groups (2^j - 1 .. 2^(j+1) - 2, or one per stage) gain
 * nothing for alpha-aware stages, and cost compile time: each group splits
 * every sender's handovers into one more transfer.  Where NICs differ
 * (`fine`: WEIGHTED staged) a GPU behind a down NIC hands over every byte
 * it sends across, through one scale-up port: as one step that took
 * longer than stage 1 (0.66 ms against 0.40 ms at 16 x 8 h200, 256 MiB
 * uniform, NIC 1:3 down), so there the groups are the octaves, stages
 * 2^j - 1 .. 2^(j+1) - 2: each is balanced while the stages before it
 * run (that plan: 6.36 -> 6.09 ms, 1.027 x the bound). */
static inline uint32_t group_index(uint32_t k, bool fine)
{
	uint32_t j = 0;

	if (!fine)
		return k > 0;
	while ((k + 1) >> (j + 1))
		j++;
	return j;
}

/* The first stage of stage k's group. */
static inline uint32_t group_start(uint32_t k, bool fine)
{
	return fine ? (UINT32_C(1) << group_index(k, true)) - 1 : k > 0;
}

/* The per-step costs and rates of the model (as the alpha-aware search and
 * split_tail: a = latency + step overhead of a tier, B = fast_tier_Bps). */
struct cost {
	double a_up, a_out, Bu, Bo;
	double l_up; /* the scale-up latency alone: what a redistribution that
		      * waits on its rail step pipelined pays after it (its step
		      * overhead runs while the rail step does) */
	uint32_t k;  /* rail steps in flight (the topology's implementation of
		      * fast, topo.h): of a chain of rail steps, the one at
		      * position d pays a_out only when k divides d (>= 1) */
	double rho; /* seconds per lane byte of a redistribution (split_tail) */
	double Bb;  /* bytes/s of a GPU's handovers: its switch port, or its G - 1
		     * mesh links together (a donor's bytes go to several peers) */
};

/* Does the rail step at position d of its chain pay a_out (struct cost k)? */
static inline bool cost_pays(const struct cost *c, uint64_t d)
{
	return c->k <= 1 || d % c->k == 0;
}

/* What balancing costs either way, from one pass over the tiles: per
 * GPU, the bytes it hands over or receives (at most its deficit) in each
 * balancing step, group 0 -- the tiles of the first term (staged; first =
 * its permutation, NULL when there is none) or of wave 0 (packed), which
 * the first stage (wave) waits for -- and group 1, the others, which the
 * second waits for (all are group 0 when balance=upfront).  bal[packed]
 * [group] is the step's modelled time: a_up plus the busiest GPU's bytes
 * over its rate Bb (struct cost), 0 when nothing moves.  Also the packed
 * budgets: shift s's is the largest lane target of its tiles
 * (bd->budget). */
struct balance_cost {
	double bal[2][2];
	bool packable; /* WEIGHTED: every tile has a live rail on its shift's ports */
};

/* FAST's staged plan for the token compiler (compile_tokens.c): as
 * fast_sched_fast_staged, but where NICs differ its stages are explicit
 * out steps alone, without their redistribution, which the token
 * compiler writes (a token goes on to every destination on the server);
 * fwd as struct builder's.  Errors as fast_sched_fast. */
int fast_sched_fast_crossings(const struct fast_topo *topo, const uint64_t *D,
			      const struct fast_algo_opts *opts, double fwd, struct fast_plan *out,
			      struct fast_err *err);

/* --- balancing (compile_fast_balance.c) --- */

/* The rails of tile (A, B): all G with target S[A][B]; packed, those of
 * its shift, each with target ceil(sum r_i / their count). */
struct rails fast_balance_rails(const struct builder *bd, bool packed, uint32_t a, uint32_t b);
/* tt[i]: rail i's lane target (tt: G). */
void fast_balance_targets(const struct rails *rs, uint32_t G, uint64_t *tt);
/* Balance tile (A, B) onto its rails: its lanes, pieces and handovers. */
int fast_balance_tile(struct builder *bd, uint32_t a, uint32_t b);
/* Sort the handovers by (balancing group, key), for the steps. */
int fast_balance_sort(struct builder *bd);

/* --- NICs as they are (compile_fast_nics.c) --- */

/* The NIC mode of topo (bd->mode, r0, P, pdiv) and, WEIGHTED, the
 * weights and orders (bd->nx).  FAST_ENOMEM. */
int fast_nics_setup(struct builder *bd, const struct fast_topo *topo);
void fast_nics_free(struct builder *bd);
/* WEIGHTED: the server matrix from the loads, in time (r0-bytes).
 * FAST_EINPUT on overflow or a tile no pair of live NICs can carry. */
int fast_nics_server_matrix(struct builder *bd);
/* WEIGHTED: tt[i], the lane target of rail i (sender A_i) of tile (A, B)
 * (packed stages: fast_nics_packed_targets); returns the largest. */
uint64_t fast_nics_targets(const struct builder *bd, uint32_t a, uint32_t b, uint64_t *tt);
/* WEIGHTED, packed stages: tt[i] of tile (A, B) on its shift's ports,
 * rail-aligned, and *T its time in r0-bytes (UINT64_MAX, every tt 0:
 * no live rail of the shift joins A to B); returns the largest tt. */
uint64_t fast_nics_packed_targets(const struct builder *bd, uint32_t a, uint32_t b, uint64_t *tt,
				  uint64_t *T);
/* WEIGHTED, staged: stage k of bv as an explicit out step and (unless
 * !bd->redist) its redistribution, after the steps in deps (< 0: none);
 * the out step's id, or an error. */
int fast_nics_stage(struct builder *bd, const struct fast_bvn *bv, uint32_t k, const int *deps,
		    int ndeps);
/* After explicit stages: the lanes and their pieces dropped. */
void fast_nics_drop_lanes(struct builder *bd);
/* Whether stages are explicit steps (WEIGHTED, staged). */
static inline bool fast_nics_explicit(const struct builder *bd)
{
	return bd->nx && !bd->packed;
}

/* --- the step graph (compile_fast_steps.c) --- */

/* One balancing step of the moves [*at, end of group), returning its id. */
int fast_steps_balance(struct builder *bd, size_t *at, int prev);
/* The intrinsic step (tiles (A, A) over scale-up) after step `after`. */
int fast_steps_intrinsic(struct builder *bd, int after);
/* The staged schedule's steps for the terms of bv. */
int fast_steps_staged(struct builder *bd, const struct fast_bvn *bv);

/* --- packed stages and the model (compile_fast_packed.c) --- */

struct cost fast_packed_cost(const struct fast_topo *topo);
/* The balancing steps' modelled times either way, and bd->budget. */
int fast_packed_balance_costs(struct builder *bd, const struct cost *c, const uint32_t *first,
			      struct balance_cost *out);
/* Modelled time of the packed schedule. */
double fast_packed_s(const struct builder *bd, const struct cost *c, const struct balance_cost *bc);
/* Modelled time of the staged schedule bv (ordered, trimmed, split). */
double fast_staged_s(const struct cost *c, const struct fast_bvn *bv,
		     const struct balance_cost *bc);
/* The packed steps. */
int fast_packed_steps(struct builder *bd);

/* --- grouped stages (compile_fast_group.c) --- */

/* The grouping of bv's terms (ordered, trimmed, split) into rail steps of
 * least modelled time: bd->gstart and bd->nrail, and *time_s; bv of fewer
 * than two terms is left alone (*time_s INFINITY).  FAST_ENOMEM. */
int fast_group_choose(struct builder *bd, const struct cost *c, const struct fast_topo *topo,
		      const struct fast_bvn *bv, double *time_s);
/* The incast factor at m senders a receiving NIC, m capped at N - 1. */
double fast_group_incast(const struct fast_topo *topo, uint32_t m, uint32_t N);
/* A group [i, j) of a chain of K terms or shifts, one rail step: its
 * bytes' time over the scale-out tier (without a_out), the same at the
 * full rate (no incast: full_s <= bytes_s) and its redistribution's
 * time. */
typedef void fast_group_parts_fn(const void *ctx, uint32_t i, uint32_t j, double *bytes_s,
				 double *full_s, double *red_s);
/* The recursion of compile_fast_group.c's top over groups of at most L:
 * g(i, r) = min over j of [a_out where c pays at r] + bytes(i, j) +
 * max(red(i, j), g(j, r + 1 mod k)), g(K, .) = 0, into g and next
 * ((K + 1) k each, [i k + r]; next the j chosen). */
void fast_group_chain(const struct cost *c, uint32_t K, uint32_t L, fast_group_parts_fn *parts,
		      const void *ctx, double *g, uint32_t *next);
/* --- unbalanced stages (compile_fast_direct.c) --- */

/* Modelled time of the unbalanced schedule (every lane its own GPU's
 * bytes, the N - 1 shifts grouped into rail steps) into *time_s
 * (INFINITY where nothing crosses, or where it cannot be under beat),
 * its grouping into bd->dstart and bd->ndirect.  FAST_ENOMEM. */
int fast_direct_choose(struct builder *bd, const struct cost *c, const struct fast_topo *topo,
		       double beat, double *time_s);
/* Make it the schedule: bd->S the largest r_i of each tile, bv the
 * shifts (replacing what it held), the grouping fast_direct_choose
 * found into bd->gstart and bd->nrail.  FAST_ENOMEM. */
int fast_direct_setup(struct builder *bd, struct fast_bvn *bv);
/* The rail step (or, nrail 0, the term) of term k's stage group. */
static inline uint32_t rail_of(const struct builder *bd, uint32_t k)
{
	uint32_t lo = 0, hi;

	if (!bd->nrail)
		return k;
	hi = bd->nrail - 1;
	while (lo < hi) { /* the last group starting at or before k */
		uint32_t mid = lo + (hi - lo + 1) / 2;
		if (bd->gstart[mid] <= k)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

#endif
