/*
 * sim.h - the two-tier flow-level simulator (`fast sim`, `fast compare`;
 * docs/DESIGN.md "Simulator").
 *
 * Workload: one plan (any algorithm, compact or explicit) on one topology.
 * The plan is taken as an open view (fast_plan_view_open()); every transfer of a step
 * with k chunks becomes k sequential flows (chunk c of a transfer is a
 * flow that becomes ready when the step has launched, chunk c of every
 * pipelined dependency is done, and chunk c-1 of the same transfer is
 * done).  A flow starts its tier's latency alpha after it is ready.  A
 * step launches its tier's per-step overhead after all its full
 * dependencies are done (at time 0 when it has none); a step that moves
 * no bytes costs nothing and is done when its dependencies are.
 *
 * Synchronisation (opts.sync).  The above is FAST_SIM_SYNC_STEP (`--sync
 * step`, the default): a dependency is on the whole step, as the plan
 * format defines it, a barrier over every GPU.  FAST_SIM_SYNC_RANK
 * (`--sync rank`) models how the executor runs a plan instead (exec/README.md
 * "How a plan runs"): the DAG is cut into waves (fast_plan_waves, include/fast/plan.h,
 * the same cut exec/prog.c makes: a (step, chunk) node one wave after the
 * last node it waits for, pipelined chunks included), and every GPU walks
 * its own waves in order with no global barrier.  Chunk c of a transfer
 * between GPUs A and B, of wave w, is ready when chunk c-1 of it is done
 * and both A and B have finished every flow of theirs of waves before w
 * (a GPU with nothing in a wave passes through it).  It starts after its
 * tier's alpha, plus its step's tier overhead when it is the first chunk
 * of the transfer in that wave (the rank's cost of entering a wave).
 * Zero-time flows (no bytes, or a GPU to itself) wait for their wave like
 * the others but hold nobody up.  A step's ready_s is then its first
 * flow's ready time; a step with no transfers is reported at the end of
 * its dependencies.
 *
 * Waves in flight (opts.in_flight 2, by rank only: `fast run`'s default,
 * exec/README.md "Waves in flight").  A GPU's waves are those it has a
 * flow in; its wave k may begin once its waves before k - 1 are done.
 * Then a transfer of wave k is ready when both its GPUs may begin k and
 * what its sender reads of the sender's wave k - 1 has arrived: nothing
 * when none of its pieces reached the sender in k - 1 (its own bytes,
 * bytes of earlier waves); the sender's scale-up arrivals of k - 1 when
 * only scale-up flows brought them; all of k - 1 otherwise.  A send is
 * held at least as long as the sends of its wave to the same peer before
 * it (the order both ends see).  This is the executor's rule
 * (plan.h and prog.h, FAST_FLIGHT_*) read off the plan's pieces, one
 * class per transfer.  Not with sync step: FAST_EUSAGE.
 *
 * Implementation (topo.h, "implementations"): the plan runs as the
 * topology's entry for its schedule (the plan's algo; the default entry
 * for any other) says.  Its sync is the default of opts.sync
 * (FAST_SIM_SYNC_IMPL).  Its call_us (and call_out_us when a scale-out step
 * moves bytes) is paid once, before anything: every
 * step without dependencies becomes ready (by rank: every GPU enters its
 * first wave) at call_us, and the completion is at least call_us.  With
 * in_flight k > 1, a chunk c > 0 of a transfer pays its tier's alpha only
 * when c is a multiple of k, and a step at depth d of the plan's DAG (the
 * longest chain of dependencies, pipelined or not, from a step without
 * any: 0) pays its per-step overhead, and its first chunks their alpha,
 * only when d is a multiple of k.  Its up_engine caps a GPU's scale-up
 * egress and ingress: a switch port's capacity is min(the port's, the
 * cap); on a mesh, where a GPU's G - 1 links together are above the cap,
 * every GPU gets a copy egress and a copy ingress resource at the cap
 * (FAST_RES_COPY_*) that its scale-up flows also cross.  Its out_GBps caps
 * a scale-out port at min(the port's rate, GPUs behind it x the cap), and
 * its reduce_GBps is the reduction resource's rate.  A topology whose
 * entries are all neutral simulates exactly as before.
 *
 * Resources (each a capacity in bytes/s = line rate x efficiency):
 *  - scale-up, switch: an egress and an ingress port per GPU;
 *    mesh: one directed link per ordered GPU pair of a server;
 *  - scale-out: an egress and an ingress per (server, port) (topo.h "NICs
 *    and ports": P = min(K, G) ports a server, the port's rate the sum of
 *    its NICs'); GPU l of a server sends and receives through port
 *    fast_topo_port_of(l), so GPUs behind one NIC share it and a GPU with
 *    several NICs drives them together.  With K = G, port i is NIC i on
 *    rail i; any port reaches any port;
 *  - with core_oversub > 1: one core of capacity (sum of every NIC's
 *    rate)/oversub shared by every cross-server flow;
 *  - in a plan with REDUCE steps (token combine plans, plan.h), one
 *    reduction resource per GPU at its scale-up bandwidth (the switch
 *    port's, or its G-1 mesh links' together).  A sum of n inputs of len
 *    bytes is one flow of (n + 1) * len bytes on it: the inputs read and
 *    the result written, over memory as fast as the GPU's scale-up
 *    (an assumption: HBM is faster, so this is conservative); the
 *    arithmetic is free (it hides behind the memory traffic), and the
 *    step pays its tier's (up) overhead and latency like any other.
 *    Reductions share only this resource, not the ports or NICs.
 * A tier-up transfer between GPUs of one server uses (egress port of src,
 * ingress port of dst) or the mesh link src->dst; a tier-out transfer uses
 * (scale-out egress port of src, ingress port of dst [, core]); one with bytes over
 * a port that is down (every NIC of it at fraction 0) is bad input.  A transfer from a GPU
 * to itself uses nothing and takes no time, except a REDUCE step's sums.  A tier-up transfer between
 * servers is bad input.
 *
 * Sharing: concurrent flows share every resource max-min fairly
 * (progressive filling), except a core whose topology says core_sharing
 * demand (topo.h): it is left out of the filling, so each flow's rate is
 * what it offers the core, and while the flows through it offer more than
 * its capacity C each runs at its offer x C / (their offers together).  Congestion (incast): a port's ingress carrying k
 * concurrent flows runs at factor(k) = max(floor, 1 - slope*(k - thr)) of
 * its capacity when k > thr (struct fast_congestion of the topology).
 * Loss and timeouts (only when the topology sets rto_us): a scale-out flow
 * that would start while its ingress NIC already carries rto_senders
 * flows is lost and starts rto_count x rto_us later instead, without a
 * second check (the retransmission goes through).  Lossless fabrics and
 * one-sender-per-NIC stages (FAST's) never pay it; many-to-one phases
 * (fanout) pay whole timeouts, whatever their size.
 *
 * Exactness: with epsilon = 0 (the default) the max-min allocation is
 * exact at every event: after each change, progressive filling re-runs on
 * the connected components of the flow-resource graph that changed (the
 * allocation separates over components; one-to-one FAST stages are many
 * tiny components), or on everything when that part is large.
 * With epsilon > 0 (the scalable mode, for 10^5..10^6 concurrent flows)
 * completions do not reallocate until some resource has gained more than
 * epsilon of its capacity (from completed flows or a lifted incast
 * penalty); then, and at every arrival, only the flows at the changed
 * resources are re-filled ("repair": one hop, against the capacity the
 * other flows leave), with a full exact pass whenever repairs have
 * re-filled as many flows as are active (amortised O(1) full passes per
 * "generation" of flows).  Rates stay feasible throughout; the result is
 * slightly pessimistic.  A demand-shared core runs exact whatever epsilon
 * (its factor depends on every flow through it).  `fast bench sim` measures the error against the
 * exact mode (docs/benchmarks.md holds the measured figures).
 *
 * Bandwidth figures are nccl-tests' (fast_bw, include/fast/common.h, the same
 * function `fast run` reports with): algbw = S / time, where S is the
 * largest per-GPU max(bytes sent, bytes received), the diagonal (a GPU's
 * own chunk) INCLUDED, of opts.traffic, the matrix the plan serves; busbw
 * = algbw * (n - 1) / n with n = N*G.  Without opts.traffic, S is taken
 * from the bytes the plan delivers to their destinations, counting the
 * diagonal only where the plan copies it explicitly (a plan may leave it
 * implicit: then give the traffic).
 *
 * Ownership: fast_sim_run() fills a struct fast_sim_result whose arrays it
 * owns; fast_sim_result_free() releases them (NULL-safe, idempotent).
 */
#ifndef FAST_SIM_H
#define FAST_SIM_H

/* the public headers include each other by name (one folder, include/fast/,
 * in the tree and installed): -I$PREFIX/include is enough */
#include "algo.h"
#include "common.h"
#include "plan.h"
#include "topo.h"

/* When a step's transfers may start (the model above, "Synchronisation"). */
enum fast_sim_sync {
	FAST_SIM_SYNC_STEP = 0, /* after every transfer of its dependencies */
	FAST_SIM_SYNC_RANK,     /* per GPU, wave by wave, as the executor runs */
	FAST_SIM_SYNC_IMPL,     /* as the topology's implementation of the plan's
				 * schedule says (default; step when it says nothing) */
};

/* The sync a plan of schedule algo runs with on t when asked for `asked`:
 * asked itself unless FAST_SIM_SYNC_IMPL, else the implementation's. */
enum fast_sim_sync fast_sim_sync_of(const struct fast_topo *t, const char *algo,
				    enum fast_sim_sync asked);

struct fast_sim_opts {
	bool congestion;   /* apply the topology's incast model (default on) */
	enum fast_sim_sync sync;
	double epsilon;    /* 0: exact max-min at every event (default) */
	bool timeline;     /* record per (resource, step) activity */
	bool reference;    /* naive reference for tests: exact, and every
			    * allocation a full progressive filling */
	const uint64_t *traffic; /* the N*G x N*G matrix the plan serves, for
				  * the bandwidth's size (NULL: from the plan) */
	uint32_t in_flight; /* by rank: the executor's waves in flight, 1 or 2
			     * (0 reads as 1; "Waves in flight" above) */
};
void fast_sim_opts_default(struct fast_sim_opts *o);

enum fast_sim_res_kind {
	FAST_RES_UP_EGRESS = 0, /* switch port, GPU -> switch */
	FAST_RES_UP_INGRESS,    /* switch port, switch -> GPU */
	FAST_RES_MESH_LINK,     /* directed mesh link gpu -> peer */
	FAST_RES_NIC_EGRESS,
	FAST_RES_NIC_INGRESS,
	FAST_RES_CORE,
	FAST_RES_GPU_REDUCE,    /* a GPU's reductions (plans with REDUCE steps) */
	FAST_RES_COPY_EGRESS,   /* mesh: a GPU's scale-up copies out, where its
				 * schedule's engine caps them (topo.h) */
	FAST_RES_COPY_INGRESS,  /* mesh: ... and in */
};

struct fast_sim_res {
	enum fast_sim_res_kind kind;
	uint32_t gpu;     /* the GPU (port, NIC) or the link's source */
	uint32_t peer;    /* mesh link destination; else = gpu */
	uint32_t port;    /* NIC egress/ingress: the scale-out port within its
			   * server (topo.h); gpu is then the port's first GPU */
	double cap_Bps;   /* effective capacity (no congestion) */
	uint64_t bytes;   /* carried */
	double util;      /* bytes / (cap_Bps * time) */
	uint32_t max_flows; /* most concurrent flows seen */
};

struct fast_sim_step {
	enum fast_step_kind kind; /* of the (compact) plan's step */
	enum fast_tier_id tier;
	double ready_s;   /* all full deps done */
	double start_s;   /* first flow started (ready_s if none) */
	double end_s;     /* last flow done */
	uint64_t bytes;   /* bytes moved (expanded transfers, self copies excluded) */
	uint32_t transfers;
};

/* Timeline: activity of one step on one resource (first flow start, last
 * flow end, bytes), sorted by (resource, start). */
struct fast_sim_activity {
	uint32_t res, step;
	double t0, t1;
	uint64_t bytes;
};

struct fast_sim_result {
	double time_s;             /* completion of the last step */
	uint32_t ngpus;
	uint32_t nsteps;
	struct fast_sim_step *steps;
	uint32_t nres;
	struct fast_sim_res *res;
	uint64_t gpu_bytes;        /* S of the algbw definition (size) */
	double algbw_GBps, busbw_GBps;
	/* engine counters */
	uint64_t flows;            /* flows simulated (chunks of transfers) */
	uint64_t events;           /* distinct event times */
	uint64_t recomputes;       /* max-min allocations computed */
	uint64_t full_allocs;      /* of which over all active flows */
	uint64_t replayed;         /* resources frozen again by replaying the
	                            * valid prefix of the last full pass */
	uint64_t rto_losses;       /* flows that waited out retransmission
	                            * timeouts (the topology's loss/timeout
	                            * regime; 0 when it is off) */
	double wall_s;             /* time spent in fast_sim_run */
	size_t nact;
	struct fast_sim_activity *act; /* only with opts.timeline */
};

/* Simulate the plan of view v (plan.h: validated, and expanded when
 * compact, once; a token plan's view opened with its matrix, over whose
 * groups its REDIST steps expanded) on topo.  The plan must match topo's
 * N and G.  Returns 0 and fills *out; FAST_EUSAGE for bad options,
 * FAST_EINPUT for a plan the topology cannot run (another N x G, a cycle,
 * a tier-up transfer between servers), FAST_ENOMEM.  out is written only
 * on success.  Simulating a bare plan p: fast_plan_view_open(&v, p, m,
 * err), fast_sim_run(topo, &v, ...), fast_plan_view_close(&v). */
int fast_sim_run(const struct fast_topo *topo, const struct fast_plan_view *v,
		 const struct fast_sim_opts *opts, struct fast_sim_result *out, struct fast_err *err);
void fast_sim_result_free(struct fast_sim_result *r);

/* Short name of a resource, e.g. "s1 NIC3 in", "s0 up2 out",
 * "s0 link 2->5", "core"; on a topology whose NICs are not one per GPU at
 * the nominal rate (fast_topo_nics_ideal false) a scale-out port is named
 * by its NICs: "server 1 NIC 3 in", "server 0 NICs 2-3 out". */
const char *fast_sim_res_name(const struct fast_topo *topo, const struct fast_sim_res *r,
			      char *buf, size_t len);

/* --- per NIC (sim/nics.c) --------------------------------------------
 * The engine's scale-out resources are ports; a NIC's figures are its
 * port's when the port is one NIC (K <= G), and its share by rate of its
 * port's bytes when a GPU drives several (K > G): each NIC of a port is
 * then as busy as the port. */
struct fast_sim_nic {
	uint32_t server, nic;
	double rate_Bps;   /* nominal x efficiency x fraction; 0 = down */
	uint64_t bytes[2]; /* [0] sent (egress), [1] received (ingress) */
	double util[2];    /* bytes / (rate_Bps x completion time); 0 when down */
};

/* Every NIC of topology t (N x K, server-major: NIC k of server s at
 * s x K + k) for a result r simulated on t, into *out (the caller's, to
 * free()) and *n.  FAST_EINPUT when r is not t's shape, FAST_ENOMEM; *out
 * and *n are written only on success. */
int fast_sim_nics(const struct fast_topo *t, const struct fast_sim_result *r,
		  struct fast_sim_nic **out, uint32_t *n, struct fast_err *err);
/* The busiest NIC direction of nics[n] that carried bytes: the highest
 * utilisation, ties to the first (by server, NIC, sent before received),
 * into *i and *dir (0 sent, 1 received); false (nothing written) when no
 * NIC carried bytes. */
bool fast_sim_busiest_nic(const struct fast_sim_nic *nics, uint32_t n, uint32_t *i, int *dir);

/* --- the simulator as a plan evaluator (sim/eval.c) ------------------
 * include/fast/algo.h's struct fast_plan_eval: `--algo auto` on token traffic
 * compiles every candidate and takes the least time the evaluator gives
 * (lib/compile/algo_auto.h).  lib/ may not call the simulator, so the caller passes it
 * in struct fast_algo_opts's eval: every command that compiles and the
 * executor pass fast_sim_evaluator(), so that they all choose the same
 * plan (the simulator is deterministic). */

/* The simulator with default options (fast_sim_opts_default: the
 * topology's congestion model, step sync, exact), name "sim".  A constant:
 * never freed. */
const struct fast_plan_eval *fast_sim_evaluator(void);

/* The simulator with the caller's options o (copied; timeline and traffic
 * ignored) into se, whose eval member is the evaluator: se is the
 * caller's and must outlive its use. */
struct fast_sim_eval {
	struct fast_plan_eval eval;
	struct fast_sim_opts opts;
};
void fast_sim_evaluator_init(struct fast_sim_eval *se, const struct fast_sim_opts *o);

/* The compiler options every command and the executor start from:
 * fast_algo_opts_default with fast_sim_evaluator() as auto's evaluator. */
void fast_sim_algo_opts_default(struct fast_algo_opts *o);

/* --- JSON (sim/sim_json.c): `fast sim --json`, one writer for the command
 * and the library API (include/fast/api.h) ------------------------------ */

struct fast_bound;
/* Indices of the (at most k) most utilised resources that carried bytes,
 * by utilisation, ties by index, into idx[k]; returns how many. */
uint32_t fast_sim_top_resources(const struct fast_sim_result *r, uint32_t *idx, uint32_t k);
/* The document: head, then a plan object per simulated plan (first: the
 * first one), then tail.  b: the plan's bound (NULL: "bound_s": null); so:
 * the options it ran with; steps: per-step times; timing: the simulator's
 * wall time.  A plan object lists every NIC (fast_sim_nics) and the
 * busiest; it returns 0, or FAST_ENOMEM (the object then unfinished).
 * Stream errors are the caller's to check (ferror). */
void fast_sim_json_head(FILE *f, const struct fast_topo *t);
int fast_sim_json_plan(FILE *f, const struct fast_topo *t, const struct fast_plan *p,
		       const struct fast_sim_result *r, const struct fast_bound *b,
		       const struct fast_sim_opts *so, bool steps, bool timing, bool first,
		       struct fast_err *err);
/* One NIC as a JSON object ({"server", "nic", "rate_GBps", "out_bytes",
 * "in_bytes", "out_util", "in_util"}), and the member "busiest_nic": NIC
 * c in direction dir (fast_sim_busiest_nic) as {"server", "nic",
 * "direction", "bytes", "util"}, or null when c is NULL (no NIC carried
 * bytes): what fast sim and fast compare print. */
void fast_sim_json_nic(FILE *f, const struct fast_sim_nic *c);
void fast_sim_json_busiest_nic(FILE *f, const struct fast_sim_nic *c, int dir);
/* A compare row's NIC members: ', "busiest_nic": ...' of the n NICs, and
 * with list ', "nics": [...]' (fast compare and the library's auto row). */
void fast_sim_json_row_nics(FILE *f, const struct fast_sim_nic *nics, uint32_t n, bool list);
void fast_sim_json_tail(FILE *f);

/* --- timelines (sim/timeline.c) ------------------------------------- */

/* Chrome trace (traceEvents JSON, opens in Perfetto): one process per
 * server, one thread per scale-out port (NIC) / scale-up port direction,
 * one event per (step, resource) activity.  Requires a result run with
 * opts.timeline.  FAST_EIO on a stream error. */
int fast_sim_write_trace(const struct fast_topo *topo, const struct fast_sim_result *r,
			 FILE *f, struct fast_err *err);
/* SVG Gantt chart: per server its NIC rows (one for all its NICs, or one
 * per scale-out port -- a NIC, or the NICs one GPU drives -- when steps
 * overlap on them, as a baseline's do) and a scale-up
 * row, bars coloured by step kind, a time axis and a legend.  title may be
 * NULL. */
int fast_sim_write_svg(const struct fast_topo *topo, const struct fast_sim_result *r,
		       const char *title, FILE *f, struct fast_err *err);

#endif
