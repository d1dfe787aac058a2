/*
 * plan.h - the plan IR: the one format that the compiler and baselines
 * produce and that the checker, simulator, exporters and executor consume
 * (DESIGN.md, "The plan IR").
 *
 * A plan serves one traffic matrix.  It is a DAG of steps.  Every step has
 * an id (== its index), a tier (up = scale-up, out = scale-out) and the
 * steps it waits for.  Bytes carry provenance as pieces: a piece
 * (src, dst, off, len) is the byte range [off, off+len) of message D[src][dst].
 *
 * Step kinds:
 *  - EXPLICIT: transfers (from GPU, to GPU, ordered pieces).
 *  - RAIL (tier out): a server permutation perm[A] = B and a byte budget w.
 *    Every GPU A_i with perm[A] != A sends the next <= w bytes of its lane
 *    (A -> perm[A], rail i) to B_i.  Lanes are consumed in the order of the
 *    rail steps' ids (a cursor per lane).  perm[A] == A means server A idles
 *    (a padded diagonal slot).
 *  - REDIST (tier up): implied redistribution of rail step `stage`: each
 *    receiving GPU B_i forwards every piece it got in that stage whose
 *    orig dst is not B_i to that dst (one transfer per (B_i, dst) pair,
 *    pieces in arrival order).
 *
 * Lanes: lane (A -> B, rail i) is the ordered piece list that GPU A_i holds
 * for server B after balancing.
 *
 * Chunks: a step may have chunks = k > 1: each of its transfers is cut into
 * k consecutive byte ranges of its piece stream, chunk c covering stream
 * bytes [floor(c*L/k), floor((c+1)*L/k)).  A dependency marked pipelined
 * (both steps must have the same k) means chunk c of this step waits only
 * for chunk c of that step, which is how a forwarding hop overlaps the hop
 * before it (NCCL PXN, DeepEP).  An unmarked dependency waits for the whole
 * step.
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

#define FAST_PLAN_VERSION 1

enum fast_tier_id { FAST_TIER_UP = 0, FAST_TIER_OUT = 1 };
enum fast_step_kind { FAST_STEP_EXPLICIT = 0, FAST_STEP_RAIL = 1, FAST_STEP_REDIST = 2 };

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
	/* RAIL */
	uint32_t perm0;         /* plan->perm[perm0 .. perm0 + servers) */
	uint64_t budget;        /* w: bytes per GPU in this stage */
	/* REDIST */
	uint32_t stage;         /* id of the RAIL step it redistributes */
};

struct fast_plan {
	char label[FAST_NAME_MAX]; /* label of the matrix it serves */
	uint32_t matrix;           /* index of that matrix in its trace */
	char algo[32];             /* "fast", "fanout", ... */
	char options[128];         /* compiler options, informational */
	uint32_t servers, gpus;

	struct fast_step *steps;   size_t nsteps, cap_steps;
	struct fast_dep *deps;     size_t ndeps, cap_deps;
	struct fast_xfer *xfers;   size_t nxfers, cap_xfers;
	struct fast_piece *pieces; size_t npieces, cap_pieces;
	struct fast_lane *lanes;   size_t nlanes, cap_lanes;
	uint32_t *perm;            size_t nperm, cap_perm;
};

struct fast_planset {
	uint32_t count;
	struct fast_plan *plans; /* owned */
};

/* --- building (used by the compilers) --------------------------------- */

void fast_plan_init(struct fast_plan *p, uint32_t servers, uint32_t gpus, const char *algo);
void fast_plan_free(struct fast_plan *p);
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
/* Set the last step's permutation (servers entries, copied). */
int fast_plan_set_perm(struct fast_plan *p, const uint32_t *perm, uint64_t budget,
		       struct fast_err *err);

/* --- expansion (the one routine every consumer uses) ------------------ */

/* Expand RAIL and REDIST steps into EXPLICIT ones: out gets the same steps
 * (ids, tiers, deps, chunks) with every transfer and piece explicit and no
 * lanes.  Fails (FAST_EINPUT) on a malformed compact form: a lane missing,
 * a stage id out of range, a REDIST of a non-RAIL step.  out is written
 * only on success; free it with fast_plan_free. */
int fast_plan_expand(const struct fast_plan *p, struct fast_plan *out,
		     struct fast_err *err);

/* Structural validation: ids, dep ranges, tiers, GPU and server ranges,
 * permutations are permutations, chunk counts of pipelined deps match,
 * piece lengths > 0, no cycle.  FAST_EINPUT naming the step. */
int fast_plan_validate(const struct fast_plan *p, struct fast_err *err);

/* A topological order of the steps (ids), into order[nsteps] (caller
 * allocated).  FAST_EINPUT naming a step on a cycle. */
int fast_plan_topo_order(const struct fast_plan *p, uint32_t *order, struct fast_err *err);

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
/* Summarise an (expanded or compact) plan. */
int fast_plan_summarize(const struct fast_plan *p, struct fast_plan_summary *out,
			struct fast_err *err);

#endif
