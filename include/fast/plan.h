/*
 * plan.h - the plan IR: the one format that the compiler and baselines
 * produce and that the checker, simulator, exporters and executor consume
 * (docs/DESIGN.md, "The plan IR").
 *
 * A plan serves one traffic matrix.  It is a DAG of steps.  Every step has
 * an id (== its index), a tier (up = scale-up, out = scale-out) and the
 * steps it waits for.  Bytes carry provenance as pieces: a piece
 * (src, dst, off, len) is the byte range [off, off+len) of message D[src][dst].
 *
 * Step kinds:
 *  - EXPLICIT: transfers (from GPU, to GPU, ordered pieces).
 *  - RAIL (tier out): k >= 1 server permutations P_j, each with a byte
 *    budget w_j.  For every server A and every B != A that some P_j sends A
 *    to, lane (A -> B, rail i) may carry w(A, B) = sum of w_j over the j
 *    with P_j[A] = B: every GPU A_i sends the next <= w(A, B) bytes of that
 *    lane to B_i.  k = 1 is a one-to-one stage (each NIC sends to one NIC
 *    and receives from one); a step of k > 1 permutations (a "grouped"
 *    stage, plan file version 4) lets each NIC send to up to k servers at
 *    once, and receive from up to k: one step's latency and overhead for
 *    k stages, paid for with incast at the receivers.  Lanes are consumed
 *    in the order of the rail steps' ids (a cursor per lane).  P_j[A] == A
 *    means server A idles in permutation j (a padded diagonal slot).  Rail
 *    steps with no dependency between them run at once; packed FAST stages
 *    (compile_fast_packed.c) do that with lanes on disjoint rails, and the
 *    checker refuses a "fast" plan where two such steps share a sending or
 *    a receiving NIC.
 *  - REDIST (tier up): implied redistribution of rail step `stage`: each
 *    receiving GPU B_i forwards every piece it got in that stage whose
 *    orig dst is not B_i to that dst (one transfer per (B_i, dst) pair,
 *    pieces in arrival order).
 *
 * Lanes: lane (A -> B, rail i) is the ordered piece list that GPU A_i holds
 * for server B after balancing.  A != B; each (A, B, i) is declared at most
 * once; an absent lane is empty (a compiler need not declare empty lanes).
 *
 * Expansion (fast_plan_expand, the one routine every consumer uses):
 *  - a RAIL step becomes one transfer A_i -> B_i per server A, rail i and
 *    server B != A it sends A to, whose lane still has bytes (A ascending,
 *    then i, then B ascending; no empty transfers), carrying the lane's
 *    next <= w(A, B) bytes; a piece straddling the budget is cut at the
 *    byte offset, its rest going to the lane's next rail step.  Cursors
 *    advance in ascending rail-step id order.
 *  - a REDIST step becomes one transfer per (receiver B_i, dst) pair,
 *    ordered by receiver then dst, pieces in arrival order; pieces whose
 *    dst is B_i are final and not forwarded.
 *  - every expanded step is EXPLICIT (budget, perm and stage are dropped);
 *    ids, tiers, deps and chunks are kept.
 * Bytes a lane still holds after its last rail step are never sent:
 * fast_plan_check reports them by lane.
 *
 * Chunks: a step may have chunks = k > 1: each of its transfers is cut into
 * k consecutive byte ranges of its piece stream, chunk c covering stream
 * bytes [floor(c*L/k), floor((c+1)*L/k)).  A dependency marked pipelined
 * (both steps must have the same k) means chunk c of this step waits only
 * for chunk c of that step, which is how a forwarding hop overlaps the hop
 * before it (NCCL PXN, DeepEP).  An unmarked dependency waits for the whole
 * step.
 *
 * Token plans (kind DISPATCH or COMBINE: the plan serves a matrix of
 * token groups, traffic.h).  The message is the group: a piece
 * (src = g, dst = k, off, len) is the byte range [off, off+len) of group
 * g's message (tokens * token_bytes bytes); k is 0 in a dispatch plan and
 * in a combine plan indexes plan->masks, the set of contributions the
 * piece carries (bit i = the i-th GPU of Dest(g), ascending; non-zero,
 * below bit ndst).  A GPU holds values: (g, byte range, mask).
 *  - DISPATCH: src(g) holds all of g from the start; a transfer sends
 *    bytes its sender holds (from the start or received in a step it
 *    depends on, transitively), as often as the plan says (replication is
 *    sending held bytes again); the plan is correct iff at the end every
 *    d in Dest(g) holds every byte of g.  REDIST forwards a received piece
 *    of g to every GPU of Dest(g) on the receiver's server other than the
 *    receiver (one transfer per (receiver, dst) pair, as for bytes).
 *  - COMBINE: every d in Dest(g) holds its contribution (g, all, {d})
 *    from the start; a transfer sends a value its sender holds, mask
 *    included; a REDUCE step (tier up) sums: each of its transfers has
 *    from == to == the GPU x, and its pieces, the inputs, are one group,
 *    one byte range and pairwise-disjoint masks, all held by x; x then
 *    holds (g, range, union of the masks).  A REDUCE at src(g) is refused
 *    (the final sum is implicit).  A REDUCE step has one chunk, and each
 *    of its transfers (a sum) >= 1 inputs; its bytes are the sum of its
 *    inputs' lengths (what the GPU reads).  Values are not consumed by
 *    sending or summing.  An EXPLICIT transfer with from == to is refused
 *    in a combine plan (a sum is a REDUCE step) and in a dispatch plan may
 *    carry only groups of that GPU.  The plan is correct iff for every byte
 *    of g the masks of the pieces src(g) receives (plus its own
 *    contribution when src is in Dest(g)) partition Dest(g): every
 *    contribution counted exactly once.  REDIST forwards a received piece
 *    of g to src(g) unless the receiver is src(g).
 * A plan of kind BYTES may serve a token matrix: it is a plan over its
 * per-GPU byte matrix (traffic.h), checked against it.  What needs the
 * groups (agreement, REDIST, summaries, the check) takes the matrix:
 * fast_plan_fits_matrix, fast_plan_expand, fast_plan_view_open.  The
 * file format (version 3) is in docs/formats.md, "Token plans: plan file format
 * version 3".
 *
 * Storage is flat arrays indexed by (first, count) ranges so that a plan is
 * a handful of allocations.  Ownership: a struct fast_plan owns all its
 * arrays; fast_plan_free() releases them (NULL-safe).  A struct
 * fast_planset owns its plans.
 */
#ifndef FAST_PLAN_H
#define FAST_PLAN_H

#include <stdio.h>

#include "common.h"
#include "topo.h"
#include "traffic.h"

/* Plan file versions: 1 named gpus_per_server "gpus"; 2 is the byte plan
 * format (what a set of byte plans is still written as, byte for byte); 3
 * adds token plans ("kind", "masks", token pieces, "reduce" steps) and is
 * written when a set holds one; 4 adds rail steps of several permutations
 * ("perms" and a list of "bytes") and is written when a set holds one.
 * All four are read. */
#define FAST_PLAN_VERSION 4
#define FAST_PLAN_VERSION_GROUPED 4
#define FAST_PLAN_VERSION_TOKENS 3
#define FAST_PLAN_VERSION_BYTES 2
/* Most chunks a step may have (validation and the reader refuse more):
 * bounds the checker's work per piece. */
#define FAST_PLAN_MAX_CHUNKS 65536u

enum fast_tier_id { FAST_TIER_UP = 0, FAST_TIER_OUT = 1 };
enum fast_step_kind {
	FAST_STEP_EXPLICIT = 0,
	FAST_STEP_RAIL = 1,
	FAST_STEP_REDIST = 2,
	FAST_STEP_REDUCE = 3, /* combine plans only; see "Token plans" */
};

/* The one name of a step's kind in reports, timelines and tables: "rail",
 * "redist", or for an EXPLICIT step its tier, "up" or "out". */
const char *fast_step_kind_name(enum fast_step_kind kind, enum fast_tier_id tier);

struct fast_piece {
	uint32_t src, dst; /* the original message D[src][dst] */
	uint64_t off, len; /* byte range within it; len > 0 */
};

struct fast_xfer {
	uint32_t from, to;        /* GPUs */
	uint32_t piece0, npieces; /* range in plan->pieces */
	uint64_t bytes;           /* sum of piece lengths */
};

struct fast_dep {
	uint32_t step;
	uint32_t pipelined; /* 1: chunk c waits for chunk c of step */
};

struct fast_lane {
	uint32_t src_server, dst_server, rail;
	uint32_t piece0, npieces; /* range in plan->pieces */
	uint64_t bytes;
};

struct fast_step {
	enum fast_step_kind kind;
	enum fast_tier_id tier;
	uint32_t dep0, ndeps;   /* range in plan->deps */
	uint32_t chunks;        /* >= 1 */
	/* EXPLICIT */
	uint32_t xfer0, nxfers; /* range in plan->xfers */
	/* RAIL: nperms permutations, P_j = plan->perm[perm0 + j * servers ..
	 * perm0 + (j + 1) * servers), with budgets w_j = plan->budgets[budget0
	 * + j] (bytes per lane) */
	uint32_t perm0, nperms; /* nperms >= 1 */
	uint32_t budget0;
	/* REDIST */
	uint32_t stage;         /* id of the RAIL step it redistributes */
};

/* What the builder appends pieces to: the transfer or the lane started
 * last, or nothing (a step was started since, or nothing yet). */
enum fast_open_kind { FAST_OPEN_NONE = 0, FAST_OPEN_XFER = 1, FAST_OPEN_LANE = 2 };

struct fast_plan {
	char label[FAST_NAME_MAX]; /* label of the matrix it serves */
	uint32_t matrix;           /* index of that matrix in its trace */
	char algo[32];             /* "fast", "fanout", ... */
	enum fast_traffic_kind kind; /* BYTES, or a token plan (see above) */
	char options[128];         /* compiler options, informational */
	uint32_t servers, gpus;

	struct fast_step *steps;   size_t nsteps, cap_steps;
	struct fast_dep *deps;     size_t ndeps, cap_deps;
	struct fast_xfer *xfers;   size_t nxfers, cap_xfers;
	struct fast_piece *pieces; size_t npieces, cap_pieces;
	struct fast_lane *lanes;   size_t nlanes, cap_lanes;
	uint32_t *perm;            size_t nperm, cap_perm;
	uint64_t *budgets;         size_t nbudgets, cap_budgets; /* rail budgets */
	uint64_t *masks;           size_t nmasks, cap_masks; /* combine plans */

	/* builder state: what fast_plan_add_piece(s) appends to */
	enum fast_open_kind open_kind;
};

struct fast_planset {
	uint32_t count;
	struct fast_plan *plans; /* owned */
};

/* --- building (used by the compilers) --------------------------------- */

void fast_plan_init(struct fast_plan *p, uint32_t servers, uint32_t gpus, const char *algo);
void fast_plan_free(struct fast_plan *p);
/* Empty p as fast_plan_init does, but keep its arrays and capacities for
 * the next build (p: a plan, or zeroed memory); free with fast_plan_free. */
void fast_plan_reset(struct fast_plan *p, uint32_t servers, uint32_t gpus, const char *algo);
void fast_planset_free(struct fast_planset *ps);

/* Append a step; returns its id (>= 0) or FAST_ENOMEM.  The step's ranges
 * start empty at the current ends of the arrays; add deps, transfers and
 * pieces right after creating it (they must be contiguous). */
int fast_plan_add_step(struct fast_plan *p, enum fast_step_kind kind,
		       enum fast_tier_id tier, struct fast_err *err);
int fast_plan_add_dep(struct fast_plan *p, uint32_t step, uint32_t on,
		      bool pipelined, struct fast_err *err);
/* Start a transfer in the last step; pieces follow with add_piece. */
int fast_plan_add_xfer(struct fast_plan *p, uint32_t from, uint32_t to,
		       struct fast_err *err);
/* Append a piece to the last transfer (or the last lane when adding to a
 * lane, see fast_plan_add_lane). */
int fast_plan_add_piece(struct fast_plan *p, uint32_t src, uint32_t dst,
			uint64_t off, uint64_t len, struct fast_err *err);
/* Start a lane; pieces follow with fast_plan_add_lane_piece. */
int fast_plan_add_lane(struct fast_plan *p, uint32_t src_server,
		       uint32_t dst_server, uint32_t rail, struct fast_err *err);
int fast_plan_add_lane_piece(struct fast_plan *p, uint32_t src, uint32_t dst,
			     uint64_t off, uint64_t len, struct fast_err *err);
/* Lanes in bulk, in place (FAST's tiles, where a builder call per lane or
 * piece cost a sixth or a third of a compile): room for nl lanes and np
 * pieces, returned in *lanes and *pieces for the caller to write (valid
 * until the next builder call that adds or reserves); the caller fills
 * the first k lanes' src_server, dst_server, rail and npieces, their
 * pieces one lane after
 * the other from (*pieces)[0], and bytes, the sum of its pieces' lengths
 * (contents are the caller's, as everywhere in the builder: the bytes are
 * known in the loop that cuts the pieces); fast_plan_commit_lanes appends
 * them, setting each lane's piece0, and leaves the last one open. */
int fast_plan_lane_space(struct fast_plan *p, size_t nl, size_t np, struct fast_lane **lanes,
			 struct fast_piece **pieces, struct fast_err *err);
int fast_plan_commit_lanes(struct fast_plan *p, size_t k, struct fast_err *err);
/* Transfers of the last (EXPLICIT) step in bulk, in place, the same way:
 * the caller fills the first k transfers' from, to, npieces and bytes and
 * their pieces one transfer after the other; fast_plan_commit_xfers
 * appends them to the step, setting each piece0, and leaves the last one
 * open. */
int fast_plan_xfer_space(struct fast_plan *p, size_t nx, size_t np, struct fast_xfer **xfers,
			 struct fast_piece **pieces, struct fast_err *err);
int fast_plan_commit_xfers(struct fast_plan *p, size_t k, struct fast_err *err);
/* Capacity for at least the given totals of steps, deps, transfers, pieces
 * and lanes (0: leave that array as it is; above UINT32_MAX: UINT32_MAX),
 * so that a compiler that knows upper bounds appends without regrowing.
 * Contents are unchanged; FAST_ENOMEM. */
int fast_plan_reserve(struct fast_plan *p, uint64_t steps, uint64_t deps, uint64_t xfers,
		      uint64_t pieces, uint64_t lanes, struct fast_err *err);
/* Give back the pieces array's unused capacity when it exceeds slack
 * bytes (a generous reserve that was not needed).  Never fails: the array
 * stays as it was when the allocator cannot shrink it. */
void fast_plan_trim(struct fast_plan *p, size_t slack);
/* Index of mask in plan->masks (appended unless it is the last one
 * added), for a combine piece's dst: >= 0, or FAST_ENOMEM. */
int fast_plan_add_mask(struct fast_plan *p, uint64_t mask, struct fast_err *err);
/* Set the last step's permutation (servers entries, copied) and budget. */
int fast_plan_set_perm(struct fast_plan *p, const uint32_t *perm, uint64_t budget,
		       struct fast_err *err);
/* Set the last step's k >= 1 permutations (k * servers entries, P_j at
 * perms + j * servers) and their budgets (k entries), copied: a rail step
 * of several permutations (plan.h, RAIL).  FAST_EINPUT for k = 0. */
int fast_plan_set_perms(struct fast_plan *p, uint32_t k, const uint32_t *perms,
			const uint64_t *budgets, struct fast_err *err);

/* What rail step s lets server a send (RAIL above): for each server b != a
 * that a permutation of s sends a to, b and w(a, b), the sum of those
 * permutations' budgets (saturating at UINT64_MAX), written to to[] and
 * w[] (room for s->nperms entries each) by ascending b; returns how many.
 * The step must be validated (fast_plan_validate). */
uint32_t fast_plan_rail_row(const struct fast_plan *p, const struct fast_step *s, uint32_t a,
			    uint32_t *to, uint64_t *w);
/* The same on bare arrays: k permutations of n servers (P_j at perms +
 * j * n) with budgets w[0 .. k), the row of server a. */
uint32_t fast_plan_perms_row(const uint32_t *perms, const uint64_t *budgets, uint32_t k,
			     uint32_t n, uint32_t a, uint32_t *to, uint64_t *w);
/* The budget of permutation j of rail step s. */
static inline uint64_t fast_plan_rail_budget(const struct fast_plan *p, const struct fast_step *s,
					     uint32_t j)
{
	return p->budgets[s->budget0 + j];
}
/* Set the last step's chunk count (1..FAST_PLAN_MAX_CHUNKS; default 1). */
int fast_plan_set_chunks(struct fast_plan *p, uint32_t chunks, struct fast_err *err);
/* Set the last step's redistributed stage (a REDIST step; stage = id of a
 * RAIL step, which may be added later: validation checks it). */
int fast_plan_set_redist(struct fast_plan *p, uint32_t stage, struct fast_err *err);

/*
 * Builder contract (all of the above): the plan must have been initialised
 * with fast_plan_init().  Steps, deps, transfers and lanes are appended;
 * deps, transfers, the permutation, chunks and stage always go to the LAST
 * step (add_dep's `step` must be that step: FAST_EINPUT otherwise), pieces
 * to the transfer or lane started most recently.  Only appending can fail
 * with FAST_ENOMEM; misuse (no step yet, a transfer in a non-EXPLICIT step,
 * a permutation on a non-RAIL step, a piece after its transfer's range was
 * closed by a later lane) is FAST_EINPUT.  The builder does not validate
 * contents (GPU ranges, lengths): fast_plan_validate() does.
 */

/* Chunk c of a transfer carrying L bytes in k chunks starts at stream byte
 * floor(c * L / k) (c <= k; c == k gives L), computed without overflow. */
static inline uint64_t fast_plan_chunk_start(uint64_t L, uint32_t k, uint32_t c)
{
	return (uint64_t)c * (L / k) + ((uint64_t)c * (L % k)) / k;
}

/* The chunk (0..k-1) that stream byte pos (< L) of such a transfer is in:
 * the largest c with fast_plan_chunk_start(L, k, c) <= pos. */
static inline uint32_t fast_plan_chunk_of(uint64_t L, uint32_t k, uint64_t pos)
{
	uint32_t lo = 0, hi = k - 1;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo + 1) / 2;
		if (fast_plan_chunk_start(L, k, mid) <= pos)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/* --- expansion (the one routine every consumer uses) ------------------ */

/* Expand RAIL and REDIST steps into EXPLICIT ones: out gets the same steps
 * (ids, tiers, deps, chunks) with every transfer and piece explicit and no
 * lanes.  m is the matrix the plan serves, which a token plan's REDIST
 * steps need (Dest(g) and src(g), "Token plans" above): it may be NULL for
 * a byte plan or a token plan without REDIST steps (FAST_EINPUT naming the
 * step otherwise); when given the plan must fit it (fast_plan_fits_matrix).
 * Fails (FAST_EINPUT) on a malformed compact form: a lane missing, a stage
 * id out of range, a REDIST of a non-RAIL step.  out is written only on
 * success; free it with fast_plan_free. */
int fast_plan_expand(const struct fast_plan *p, const struct fast_matrix *m, struct fast_plan *out,
		     struct fast_err *err);

/* --- the view every consumer takes ------------------------------------ */

/*
 * A plan as consumers read it: validated once and, when compact (lanes,
 * RAIL or REDIST steps), expanded once.  `given` is the plan as given (the
 * checker reads its lanes and rail budgets, summaries count its steps);
 * `x` its explicit form: `given` itself when that has only EXPLICIT steps
 * and no lanes (aliased, not copied), otherwise the view's own expansion.
 * The checker, summaries, staging, the simulator, the MSCCL exporter and
 * the executor's program builder all take a view, so a command that does
 * several of these opens one view and pays for one validation and at most
 * one expansion.
 *
 * Ownership: the view owns its expansion (fast_plan_view_close frees it,
 * NULL-safe); `given` must outlive the view.  `x` may point into the view
 * itself: do not copy a struct fast_plan_view, pass its address.
 */
struct fast_plan_view {
	const struct fast_plan *given;
	const struct fast_plan *x;
	const struct fast_matrix *m; /* the matrix served (token plans), or NULL */
	struct fast_plan own;
	bool owned;
};

/* Does p have compact parts (lanes, RAIL or REDIST steps; REDUCE steps
 * are explicit)? */
bool fast_plan_is_compact(const struct fast_plan *p);

/* Validate p and expand it when compact, with the matrix the plan serves
 * (it knows its GPU count), checked with fast_plan_fits_matrix and kept in
 * v->m (it must outlive the view): what a token plan needs for its REDIST
 * steps and its summary, and what fast_plan_check checks against.  m may
 * be NULL (a view for what needs no traffic: export, a byte plan's
 * summary).  0, or FAST_EINPUT (malformed, naming the step; a misfit) /
 * FAST_ENOMEM; *v is written only on success. */
int fast_plan_view_open(struct fast_plan_view *v, const struct fast_plan *p,
			const struct fast_matrix *m, struct fast_err *err);
void fast_plan_view_close(struct fast_plan_view *v);

/* The agreement checks of a plan with its inputs, one wording each, for
 * every consumer.  FAST_EINPUT when the plan's N x G differs from the
 * topology's / when the traffic has another number of GPUs than the plan. */
int fast_plan_fits_topo(const struct fast_plan *p, const struct fast_topo *topo,
			struct fast_err *err);
int fast_plan_fits_traffic(const struct fast_plan *p, uint32_t traffic_ng,
			   struct fast_err *err);

/* Agreement of a plan with the matrix it serves: the GPU count m->ng
 * (as fast_plan_fits_traffic); the kind (a token plan serves a matrix of
 * its kind; a BYTES plan any matrix, through its per-GPU bytes); and for
 * token plans every piece (transfers and lanes) names a group of m
 * (< ngroups), lies within its tokens * token_bytes bytes, and in a
 * combine plan carries a mask below bit ndst of its group.  FAST_EINPUT
 * naming the step, transfer and piece (or lane). */
int fast_plan_fits_matrix(const struct fast_plan *p, const struct fast_matrix *m,
			  struct fast_err *err);

/* Structural validation: ids, dep ranges, tiers, GPU and server ranges,
 * permutations are permutations, chunk counts of pipelined deps match,
 * piece lengths > 0, no cycle.  Token plans (what needs no traffic): a
 * dispatch plan's pieces have dst 0 and it has no masks; a combine plan's
 * pieces index plan->masks, every mask non-zero; a byte plan has no masks;
 * REDUCE steps only in combine plans, tier up, one chunk, and every
 * transfer a sum at one GPU (from == to) of >= 1 pieces of one group and
 * one byte range with pairwise-disjoint masks.  FAST_EINPUT naming the
 * step. */
int fast_plan_validate(const struct fast_plan *p, struct fast_err *err);

/* A topological order of the steps (ids), into order[nsteps] (caller
 * allocated).  FAST_EINPUT naming a step on a cycle. */
int fast_plan_topo_order(const struct fast_plan *p, uint32_t *order, struct fast_err *err);

/* Waves: how the executor cuts the DAG (exec/README.md "How a plan runs";
 * exec/prog.c runs a rank's waves in order, the simulator's `--sync rank`
 * models that, include/fast/sim.h).  A node is (step, chunk); step s has the nodes
 * node0[s] .. node0[s + 1] - 1, one per chunk (one for a step of 0
 * chunks), or exactly one when passes > 1 (a chunk boundary inside a pass
 * slice has no meaning).  A node's wave is one more than the largest wave
 * of what it waits for (chunk c of a pipelined dependency with as many
 * chunks, every chunk of any other dependency), and never below the wave
 * of the chunk before it in the same step; nwaves = 1 + the largest wave
 * (0 for no steps).  Ownership: fast_plan_waves() allocates node0 and
 * wave, fast_plan_waves_free() releases them (NULL-safe, idempotent).
 * FAST_EINPUT on a cycle, FAST_ENOMEM; *out is written only on success. */
struct fast_plan_waves {
	size_t *node0;   /* [nsteps + 1] */
	uint32_t *wave;  /* [node0[nsteps]], by node */
	uint32_t nwaves;
};
int fast_plan_waves(const struct fast_plan *p, uint32_t passes, struct fast_plan_waves *out,
		    struct fast_err *err);
void fast_plan_waves_free(struct fast_plan_waves *w);

/* Waves in flight: a rank may post its next wave while one is under way
 * (at most FAST_IN_FLIGHT_MAX at once), each op of it as soon as what it
 * reads of the rank's previous wave has arrived -- FAST_FLIGHT_FREE
 * nothing of it, _UP its scale-up arrivals, _ALL the rest.  The executor
 * orders a program's ops by it (prog.h, "Waves in flight"); the simulator
 * models it by rank (sim.h, "Waves in flight"). */
enum { FAST_FLIGHT_FREE = 0, FAST_FLIGHT_UP = 1, FAST_FLIGHT_ALL = 2 };
#define FAST_IN_FLIGHT_MAX 2u

/* Identity of a plan (all content except label/options), for cross-rank
 * agreement and caches. */
uint64_t fast_plan_hash(const struct fast_plan *p);

/* --- files ------------------------------------------------------------ */

/* Stream a plan set as JSON (schemas/plan.schema.json).  FAST_EIO on a
 * stream error. */
int fast_planset_write(const struct fast_planset *ps, FILE *f, struct fast_err *err);
/* Load a plan file; the reader is bounded by the file size and lim.  Errors
 * are FAST_EINPUT with the JSON path. */
int fast_planset_load(const char *path, const struct fast_limits *lim,
		      struct fast_planset *out, struct fast_err *err);
int fast_planset_parse(const char *text, size_t len, const char *name,
		       const struct fast_limits *lim, struct fast_planset *out,
		       struct fast_err *err);

/* --- summaries -------------------------------------------------------- */

struct fast_plan_summary {
	uint32_t steps_up, steps_out;
	uint32_t rail_stages;
	uint64_t bytes_up, bytes_out; /* bytes moved per tier (expanded) */
	uint64_t bytes_relayed;       /* bytes of pieces sent by a GPU that is not their orig src */
	uint64_t largest_step_bytes;
	uint32_t largest_step;
	uint64_t pieces;              /* after expansion */
	uint64_t transfers;           /* after expansion */
	uint64_t peak_staging;        /* max over GPUs of bytes held for others */
	uint32_t peak_staging_gpu;
};
/* Summarise an (expanded or compact) plan; the plan is validated (and
 * expanded internally when compact).  Counts of steps and rail stages are
 * of the plan as given; bytes, pieces and transfers of its expansion.
 * Local copies (transfers with from == to) count as transfers and pieces
 * but move no bytes over a tier.
 *
 * Staging (what an executor must buffer): walk the expanded plan's steps
 * in the order of fast_plan_topo_order() (smallest ready id first).  In
 * each step, first every transfer's pieces arrive: a piece adds its length
 * to the receiving GPU's staging count unless that GPU is the piece's orig
 * src or orig dst (a GPU's own sends and its final bytes are not staging);
 * then the step's sends release: a piece sent by a GPU that is neither its
 * orig src nor dst subtracts its length from the sender's count (a relay
 * byte is freed once it is sent on).  The peak staging of a GPU is the
 * largest count it reaches after some step's arrivals.  Steps that may run
 * concurrently are counted one after the other in that order, so the
 * figure is a property of the plan and the order, not of a timed run: a
 * GPU that in reality still holds relay bytes of one step while a
 * concurrent step (ordered after the one that sends them on) delivers more
 * can hold more than reported.  Local copies (from == to) stage nothing.
 *
 * Token plans (summarised on a view opened with their matrix,
 * fast_plan_view_open; FAST_EINPUT without it): a piece's "orig src" is
 * its origin (src(g) in dispatch; in combine the GPU whose own
 * contribution, alone, the value is) and its "orig dst" its final place
 * (every GPU of Dest(g) in dispatch, src(g) in combine).  bytes_relayed
 * counts pieces sent by a GPU that is not their origin.  A REDUCE step at
 * x replaces the inputs x staged by one value of the sum's length (which
 * x then stages until it sends it on).  bytes_out, as for every plan, is
 * the bytes of tier-out steps (local copies excluded): the bytes crossing
 * servers when every tier-out transfer joins two servers, as the
 * compilers' do (the checker does not require it).
 *
 * On an open view (a bare plan p: fast_plan_view_open(&v, p, m, err)
 * first), in one walk: the summary, and when peak is not NULL the per-GPU
 * peak staging bytes (peak[servers * gpus], caller allocated) of which the
 * summary's peak_staging is the largest. */
int fast_plan_summarize(const struct fast_plan_view *v, struct fast_plan_summary *out,
			uint64_t *peak, struct fast_err *err);

#endif
