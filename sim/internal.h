/*
 * internal.h - the simulator's engine state, shared by the sim/ sources (private,
 * not installed).  The event-driven, flow-level simulator (see sim.h for
 * the model): engine.c runs the events, maxmin.c allocates rates, setup.c
 * builds the engine, report.c the results; heap.h holds the heaps.
 *
 * Workload assumed: plans of 10^2..10^6 transfers, up to ~10^6 of them in
 * flight at once (the fanout baseline at 1024 GPUs), a few thousand
 * resources.  Every transfer has at most one flow in flight (its chunks
 * run one after another), so a transfer's slot doubles as its flow.
 *
 * Events: a heap of timed events (step launches after the per-step
 * overhead, flow starts after alpha, zero-time completions) and an indexed
 * 4-ary heap of flow completions (finish time under the current rates; a
 * changed rate moves the flow's one entry).  Rates are a max-min fair
 * allocation by progressive filling: resources sit in a heap keyed by
 * their fair share (remaining capacity / unfrozen flows), the smallest
 * share freezes its flows at that rate.  Shares only grow as flows freeze
 * elsewhere (a flow frozen at level L <= share removes L from the capacity
 * and one from the count), so a stale key is a lower bound and is raised
 * in place when it surfaces; a handful of resources are scanned instead.
 *
 * Exact mode reallocates after every event, but only over the connected
 * components of the flow-resource graph that hold a changed resource (the
 * allocation separates over components: a FAST stage is ~N*G tiny ones, a
 * server's redistribution one small one).  When the changed part is large
 * (fanout: one component of everything) it reallocates everything and
 * finds the next completions by a linear scan ("scan mode", no heap), and
 * backs off from searching components for a while.  Scalable mode
 * (epsilon > 0) reallocates lazily and locally (see sim.h and repair() in maxmin.c).
 * Cost of one exact allocation: O(component paths + its resources).
 *
 * A full exact pass does not visit flows while it fills: each list slot
 * carries the flow's other resources, a flow is frozen by the first of
 * its resources to freeze (so it is unfrozen while none of the others
 * has), and its rate is that resource's level, read in the scan that
 * follows.  And it does not search again for what still holds: a
 * completion leaves every freezing step before its flow's bottleneck as
 * it was (the flow's resources only gain share), so the next pass replays
 * that prefix of the last one at the recorded levels and searches only
 * from there (sim_recompute(), "replay").  Arrivals void the record.
 */
#ifndef FAST_SIM_INTERNAL_H
#define FAST_SIM_INTERNAL_H

#include "heap.h"
#include "fast/sim.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define INF_TIME HUGE_VAL

enum xstate { X_IDLE = 0, X_PENDING, X_ACTIVE, X_DONE };

#define NO_RES UINT32_MAX

/* A transfer's resources, set up once: at most a scale-out port pair and
 * the core, or a mesh link and its GPUs' copy resources. */
struct sim_path {
	uint32_t res[3];
	uint32_t nres;
};

/* An active flow, stored by position (dense, swap-removed): what every
 * allocation walks (64 bytes).  The rate a repair computes is scratch by
 * position in e->nrate. */
struct sim_active_flow {
	double rate, rem, t_upd, fin;
	uint32_t res[3];
	uint32_t nres;
	uint32_t x;     /* its transfer */
	uint32_t mark;  /* == e->stamp once visited or frozen (this pass) */
};

struct sim_transfer {
	uint32_t step;
	uint32_t chunk;   /* chunk in flight or next to start */
	uint32_t state;
	uint32_t apos;    /* index in the active array */
	uint32_t pos[3];  /* index in each resource's active list */
	uint64_t bytes;   /* whole transfer */
	uint64_t cbytes;  /* current chunk */
	double t_first, t_last;
	double inherit;   /* scalable mode: rate reserved for the next chunk */
	uint64_t inherit_gen; /* valid while no allocation happened since */
};

struct sim_step_state {
	uint32_t full_left;
	uint32_t x0, nx;
	uint32_t chunks, c0;
	uint32_t chunks_done;
	uint32_t rdep0, nrdep;
	bool launched, ready, done;
	double overhead, alpha;
	uint32_t depth;   /* steps of its tier on its longest chain of dependencies (in_flight) */
	uint64_t bytes;   /* over resources */
};

struct sim_dep {
	uint32_t step;
	uint32_t pipelined;
};

/* --sync rank: one wave a GPU takes part in.  Its transfers (one entry per
 * chunk of theirs in the wave) are e->gx[x0 .. x0 + nx); left counts the
 * flows of them that take time and are not done. */
struct sim_gpu_wave {
	uint32_t wave;
	uint32_t left;
	uint32_t x0, nx;
};

/* An entry of a resource's active list: the flow's active position, which
 * of its resources the list's is, and its other resources (NO_RES-
 * padded), so searches and filling need not visit flows. */
struct sim_slot {
	uint32_t pos;
	uint32_t k;
	uint32_t o[2];
};

/* When a resource last froze its flows, and at what share: read for every
 * flow by a full pass, so apart (16 bytes a resource: in L1). */
struct sim_level {
	uint64_t popn;   /* the popn-th resource frozen (e->npop) ... */
	double level;    /* ... at this share */
};

struct sim_resource {
	/* what progressive filling touches, first */
	double rcap;     /* progressive filling scratch */
	uint32_t rcnt;
	uint32_t n;      /* flows in its active list */
	uint32_t l0;     /* list storage offset */
	bool touched;    /* rcap/rcnt changed since its share was computed */
	bool dirty;      /* in e->dirty: changed since the last allocation */
	bool ingress_nic;
	uint32_t mark;   /* == e->stamp once visited by collect_component */
	uint32_t seqi;   /* its index in e->popseq */
	double base;     /* effective capacity */
	double cap;      /* after incast at the last allocation */
	double freed;    /* capacity gained since the last allocation */
	double load;     /* scalable mode: sum of its active flows' rates */
	uint32_t scnt, sl0; /* scalable repair: sub-problem list */
};

struct sim_engine {
	const struct fast_topo *topo;
	const struct fast_plan *x;   /* explicit plan */
	const struct fast_impl *im;  /* the implementation of its schedule */
	struct fast_sim_opts opts;
	uint32_t ng, G, N;
	double alpha[2], overhead[2];
	double call_s;     /* im's fixed cost: when the first steps are ready */
	bool copy_res;     /* mesh: per-GPU copy resources at im's engine cap */
	double rto_s;      /* a lost flow's wait (0: no loss/timeout regime) */
	uint64_t rto_losses;

	uint32_t nx;
	struct sim_transfer *xs;
	struct sim_path *fl;
	uint32_t nsteps;
	struct sim_step_state *st;
	uint32_t *pipe_left, *chunk_left;
	struct sim_dep *rdeps;

	uint32_t nr;
	struct sim_resource *rs;
	struct fast_sim_res *rinfo;
	struct sim_slot *lists;
	uint64_t npop, replayed;
	struct sim_level *lv;    /* by resource */
	/* exact mode: the resources the last full pass froze, in order; its
	 * first seq_cut steps still hold (seq_ok: no arrival since, only
	 * completions of flows whose bottleneck came at seq_cut or later) */
	uint32_t *popseq, npopseq, seq_cut;
	uint64_t seq_p0;   /* e->npop when that pass started */
	bool seq_ok;

	struct sim_active_flow *hot;   /* by active position */
	double *nrate;     /* by active position: a repair's new rate */
	uint32_t *cflows;  /* component scratch: active positions */
	uint32_t *cres;    /* component scratch: resources */
	uint32_t *dirty;   /* resources changed since the last allocation */
	uint32_t ndirty;
	uint32_t stamp;
	uint32_t bfs_skip;
	bool all_dirty;
	uint64_t full_allocs;
	uint32_t *slist;   /* scalable repair: flows (positions) per resource */
	bool scan;         /* exact mode after a full pass: finish times are
			    * scanned, due[] holds the earliest, no heap */
	uint32_t *due, ndue;
	uint32_t *hpos;    /* slot of each transfer in the completion heap */
	uint64_t repair_work; /* flows re-filled by repairs since the last full pass */
	uint32_t nactive;
	bool exact;
	/* core_sharing demand with a core (topo.h): the core (resource
	 * core_res) is left out of the filling, and every flow through it
	 * gets its filled rate x core_scale (maxmin.c, demand_scale()) */
	bool demand;
	uint32_t core_res;
	double core_scale;
	double next_fin;

	struct evheap ev;
	struct kvheap fin, fill;

	bool arrivals, must_recompute;
	uint64_t events, recomputes, flows;
	struct fast_sim_step *out_steps;

	/* --sync rank (sim.h "Synchronisation"): node_wave[st[s].c0 + c] is
	 * the wave of chunk c of step s; GPU g's waves are gw[gw0[g] ..
	 * gw0[g + 1]) ascending, gcur[g] the first it has not finished. */
	bool by_rank;
	uint8_t *tiers_seen; /* by rank, in_flight > 1: per GPU, bit t once a
			      * tier-t flow of it started (its first pays) */
	uint32_t *node_wave;
	struct sim_gpu_wave *gw;
	uint32_t *gw0, *gcur, *gx;
	/* by rank, two waves in flight (sim.h "Waves in flight"): gcls[i]
	 * the class (FAST_FLIGHT_*) of item gx[i] where its GPU sends it;
	 * up_left[k] the scale-up arrivals of entry gw[k] not yet done */
	bool flight;
	uint8_t *gcls;
	uint32_t *up_left;
};

/* bytes of chunk c of L split into k: floor((c+1)L/k) - floor(cL/k) */
static inline uint64_t sim_chunk_bytes(uint64_t L, uint32_t k, uint32_t c)
{
	uint64_t q = L / k, r = L % k;
	uint64_t a = (uint64_t)c * q + ((uint64_t)c * r) / k;
	uint64_t b = (uint64_t)(c + 1) * q + ((uint64_t)(c + 1) * r) / k;
	return b - a;
}

static inline void fin_settle(struct sim_engine *e)
{
	e->next_fin = e->fin.n ? e->fin.a[0].k : INF_TIME;
}

/* maxmin.c */
int sim_recompute(struct sim_engine *e, double t);

/* setup.c */
int sim_build_steps(struct sim_engine *e, struct fast_err *err);
int sim_build_resources(struct sim_engine *e, struct fast_err *err);
int sim_build_transfers(struct sim_engine *e, struct fast_err *err);
/* rank.c: every GPU's waves (by rank), with two in flight each send's class */
int sim_build_waves(struct sim_engine *e, struct fast_err *err);

/* engine.c: make the next chunk of transfer xi ready at t if it may */
int sim_try_ready(struct sim_engine *e, uint32_t xi, double t);

/* rank.c, by rank: may chunk c of transfer xi start; GPU g entering its
 * wave gcur[g]; chunk c of xi done; the steps without transfers reported
 * at the end of their dependencies. */
bool sim_rank_ready(const struct sim_engine *e, uint32_t xi, uint32_t c);
int sim_rank_enter(struct sim_engine *e, uint32_t g, double t);
int sim_rank_flow_done(struct sim_engine *e, uint32_t xi, uint32_t c, double t);
int sim_rank_report_empty(struct sim_engine *e, struct fast_err *err);

/* the wave of chunk c of transfer xi (by rank) */
static inline uint32_t sim_chunk_wave(const struct sim_engine *e, uint32_t xi, uint32_t c)
{
	return e->node_wave[e->st[e->xs[xi].step].c0 + c];
}

/* report.c */
uint64_t sim_gpu_bytes(const struct fast_plan *x, uint32_t ng);
int sim_build_timeline(struct sim_engine *e, struct fast_sim_result *out, struct fast_err *err);

#endif
