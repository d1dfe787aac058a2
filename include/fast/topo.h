/*
 * topo.h - the two-tier fabric: N servers of G GPUs, a scale-up tier inside
 * each server (an NVSwitch-style switch or a full GPU mesh) and a scale-out
 * tier of K NICs per server (K = G by default: rail i = NIC of local GPU i)
 * behind a core that is non-blocking unless oversubscribed.
 *
 * NICs and ports (docs/DESIGN.md, "NICs as they are").  A GPU reaches the
 * scale-out tier through one *port*: with K <= G, port p is NIC p and
 * local GPU l uses NIC floor(l * K / G) (GPUs share a NIC); with K > G,
 * port l is GPU l's group of NICs k with floor(k * G / K) = l, striped
 * (a GPU drives several NICs).  So a server has P = min(K, G) ports, and
 * a port's rate is the sum of its NICs' rates.  Each NIC runs at a
 * fraction of scale_out's nominal rate (1 unless overridden; 0 = down).
 *
 * Units (docs/DESIGN.md): bandwidths in GB/s (1e9 B/s) per direction, latencies
 * and per-step overheads in microseconds, efficiency = achievable payload /
 * line rate.  GPU g lives on server g / G with local index g % G.
 *
 * A struct fast_topo is a plain value: no pointers, copy it freely.
 */
#ifndef FAST_TOPO_H
#define FAST_TOPO_H

#include <stdio.h>

#include "common.h"

enum fast_up_kind {
	FAST_UP_SWITCH = 0, /* bw_GBps = per-GPU port into the switch */
	FAST_UP_MESH = 1,   /* bw_GBps = each direct GPU-GPU link */
};

struct fast_tier {
	double bw_GBps;          /* line rate per port/link/NIC, per direction */
	double latency_us;       /* alpha: per-message latency */
	double efficiency;       /* [0.001, 1]: payload rate / line rate */
	double step_overhead_us; /* launch + synchronisation cost per step */
};

/*
 * Incast model used by the simulator: an ingress (NIC, or scale-up port)
 * receiving from k concurrent senders runs at
 *     factor(k) = max(floor, 1 - slope * (k - threshold))   when k > threshold
 * times its effective bandwidth, and at full effective bandwidth otherwise.
 * InfiniBand's credit flow control loses little (small slope); RoCE with
 * DCQCN loses much.
 */
struct fast_congestion {
	double incast_threshold; /* senders before any loss */
	double incast_slope;     /* efficiency lost per extra sender */
	double incast_floor;     /* lowest factor, in [0.001, 1] */
};

/*
 * Loss and retransmission timeouts (JSON /congestion/rto_*; off while us is
 * 0): a scale-out flow that starts while its ingress NIC already carries
 * `senders` flows (about the switch buffer / one flow's burst) is lost and
 * starts count x us later, once (TCP's minimum RTO, or an RDMA RC
 * transport's retry timeout, times the retries).  A default-off term:
 * written and hashed only when on.
 */
struct fast_rto {
	double us;
	double senders;
	double count;
};

#define FAST_NAME_MAX 64
#define FAST_SOURCE_MAX 512
/* NIC rate overrides a topology may carry (JSON scale_out.nic_overrides,
 * --nic S:K=F): a degraded or failed NIC is an exception, not a table. */
#define FAST_NIC_OVERRIDES_MAX 256
#define FAST_NICS_MAX 1024u /* NICs per server */

/* NIC `nic` of server `server` runs at `fraction` of the nominal rate
 * (scale_out.bw_GBps x efficiency); 0 = down. */
struct fast_nic_override {
	uint32_t server, nic;
	double fraction;
};

/*
 * How each schedule's real implementation runs (JSON /implementation;
 * docs/models.md, "Implementations").  The plan says what moves where and
 * after what; an implementation runs it with its own machinery, and the
 * simulator runs a plan as the implementation of its schedule (the plan's
 * "algo") does:
 *  - sync: how its steps wait when the user gives no --sync (step: the
 *    plan's barrier per step; rank: each GPU walks its own waves);
 *  - in_flight: how many links of a chain overlap -- chunks of a transfer,
 *    and steps that wait on steps (NCCL's channel FIFO, DeepEP's chunks in
 *    its buffers): the tier's latency and per-step overhead are paid by one
 *    in every in_flight of them, not by each (1: by each, as the plan says);
 *  - up_engine: what moves its scale-up bytes: the link at its effective
 *    rate, `sms` SMs of `engine_GBps` each (a kernel's copies: a cap of sms
 *    x engine_GBps on a GPU's scale-up egress and ingress), or the copy
 *    engine at engine_GBps;
 *  - out_GBps: the most a GPU's scale-out transfers reach (0: the NIC's
 *    rate; a port's GPUs share their caps);
 *  - reduce_GBps: the rate of its reductions (combine; 0: the GPU's
 *    scale-up rate, as sim.h says);
 *  - call_us: a fixed cost per collective call (kernel launches, stream
 *    synchronisation, the control path), before its first byte moves;
 *    call_out_us more when the call crosses servers (a network proxy
 *    posting the first sends: NCCL's).
 * Every entry neutral (fast_impl_neutral) is the model before there were
 * implementations: the topology then hashes, writes and simulates as one
 * without the member.  Caps only lower a rate (min with the fabric's).
 */
enum fast_impl_sync {
	FAST_IMPL_SYNC_STEP = 0,
	FAST_IMPL_SYNC_RANK = 1,
};

enum fast_impl_engine {
	FAST_ENGINE_LINK = 0, /* the scale-up link at its effective rate (no cap) */
	FAST_ENGINE_SM = 1,   /* sms SMs of engine_GBps each */
	FAST_ENGINE_CE = 2,   /* the copy engine at engine_GBps */
};

struct fast_impl {
	enum fast_impl_sync sync;
	uint32_t in_flight;           /* >= 1 (0 reads as 1: a zeroed entry is neutral) */
	enum fast_impl_engine engine;
	uint32_t sms;                 /* FAST_ENGINE_SM: SMs copying */
	double engine_GBps;           /* SM: per SM; CE: the engine's rate */
	double out_GBps;              /* 0: no cap */
	double reduce_GBps;           /* 0: the scale-up rate */
	double call_us;               /* fixed cost per call */
	double call_out_us;           /* more when it crosses servers */
};

/* Schedules an implementation entry may name: the compilers of algo.h
 * (tests/unit/test_topo_impl.c checks this list against fast_algos[]).
 * Entry 0 of struct fast_topo's impl[] is the default, entry 1 + i the
 * schedule fast_topo_impl_names()[i]. */
#define FAST_IMPL_SCHEDS 6
#define FAST_IMPL_SOURCE_MAX 1024

struct fast_topo {
	char name[FAST_NAME_MAX]; /* preset name, or the file's "name" */
	uint32_t servers;         /* N >= 1 */
	uint32_t gpus;            /* G >= 1, GPUs (and NICs) per server */
	enum fast_up_kind up_kind;
	struct fast_tier up;      /* scale-up tier */
	struct fast_tier out;     /* scale-out tier, one NIC per GPU */
	double core_oversub;      /* >= 1; 1 = non-blocking core */
	uint32_t nics;            /* K >= 1 NICs per server (scale_out.nics_per_server) */
	uint32_t noverrides;      /* entries of nic_override[], sorted by (server, nic) */
	struct fast_nic_override nic_override[FAST_NIC_OVERRIDES_MAX];
	struct fast_congestion congestion;
	struct fast_rto rto;      /* zero: off */
	char source[FAST_SOURCE_MAX]; /* where the numbers come from */
	/* implementations: [0] the default, [1 + i] schedule i, each complete
	 * (a schedule's entry is the default with its own fields over it) */
	struct fast_impl impl[1 + FAST_IMPL_SCHEDS];
	char impl_source[FAST_IMPL_SOURCE_MAX]; /* where their numbers come from */
};

/* Physical ranges of the numbers (lib/model/topo.c lists every field's). */
#define FAST_TOPO_MIN_GBPS 1e-6     /* 1 kB/s: also the slowest rate a port may reach */
#define FAST_TOPO_MAX_GBPS 1e6      /* 1 PB/s per port: anything above is a typo */
#define FAST_TOPO_MAX_US 1e6        /* 1 s per message or step */
#define FAST_TOPO_MIN_FRACTION 1e-3 /* efficiency, incast floor: at least 0.1% */
#define FAST_TOPO_MAX_OVERSUB 1e3

static inline uint32_t fast_topo_ngpus(const struct fast_topo *t)
{
	return t->servers * t->gpus;
}

/* --- NICs and ports ----------------------------------------------------- */

/* Scale-out ports per server: min(K, G). */
static inline uint32_t fast_topo_ports(const struct fast_topo *t)
{
	return t->nics < t->gpus ? t->nics : t->gpus;
}

/* The port of local GPU l (l < G). */
static inline uint32_t fast_topo_port_of(const struct fast_topo *t, uint32_t l)
{
	return t->nics < t->gpus ? (uint32_t)((uint64_t)l * t->nics / t->gpus) : l;
}

/* The fraction of the nominal rate NIC k of server s runs at (1 unless
 * overridden, 0 when down). */
double fast_topo_nic_fraction(const struct fast_topo *t, uint32_t s, uint32_t k);

/* Port p of a server: its NICs [*k0, *k1) and the number of local GPUs
 * behind it (1 when K >= G). */
void fast_topo_port_nics(const struct fast_topo *t, uint32_t p, uint32_t *k0, uint32_t *k1);
uint32_t fast_topo_port_gpus(const struct fast_topo *t, uint32_t p);

/* Port p of server s in nominal NICs: the sum of its NICs' fractions (1 a
 * healthy NIC, 0 down), and server s's NICs so counted.  Exact (whole
 * numbers) on an ideal fabric, which is why the bound and the simulator's
 * core count capacity in these units. */
double fast_topo_port_nics_up(const struct fast_topo *t, uint32_t s, uint32_t p);
double fast_topo_server_nics_up(const struct fast_topo *t, uint32_t s);

/* "NIC K" or "NICs K0-K1": port p's NICs, into buf (len bytes, truncated);
 * returns the port's NIC count.  What every output names a port by. */
uint32_t fast_topo_port_name(const struct fast_topo *t, uint32_t p, char *buf, size_t len);

/* Effective rate of port p of server s in bytes per second: the sum of its
 * NICs' rates (nominal x efficiency x fraction); 0 when all are down. */
double fast_topo_port_Bps(const struct fast_topo *t, uint32_t s, uint32_t p);

/* GPU g's (global index) share of its port: port rate / GPUs behind it --
 * the rate each gets when all of them send at once, and the weight by
 * which FAST balances a server's cross-server bytes.  0 = no way out. */
double fast_topo_gpu_out_Bps(const struct fast_topo *t, uint32_t g);

/* Sum of server s's port rates (bytes per second). */
double fast_topo_server_out_Bps(const struct fast_topo *t, uint32_t s);

/* One NIC per GPU, every NIC at the nominal rate: the fabric every plan
 * and bound was built for before NICs could differ.  Code that keeps
 * byte-identical results on it tests this. */
bool fast_topo_nics_ideal(const struct fast_topo *t);

/* Set (or replace) the override of NIC k of server s; FAST_EINPUT naming
 * the override when s or k is out of range or f outside [0, 1], FAST_ELIMIT
 * past FAST_NIC_OVERRIDES_MAX.  Validate the topology afterwards (a server
 * with every NIC down is refused there). */
int fast_topo_set_nic(struct fast_topo *t, uint32_t s, uint32_t k, double f,
		      struct fast_err *err);

/* The fabric's identity: shape, scale-up kind and every model number (not
 * the name or source text), chained into FAST_HASH_INIT.  Two topologies
 * with the same hash simulate and plan alike; used to key plan caches, to
 * check that MPI ranks agree, and in result idents. */
uint64_t fast_topo_hash(const struct fast_topo *t);
/* What a result of schedule algo on t depends on: the fabric and algo's
 * own implementation (none when it is neutral), so that another
 * schedule's entry changing leaves the result's identity as it was; for a
 * name that is not a schedule's ("auto" chooses among them all, NULL)
 * every entry, as fast_topo_hash. */
uint64_t fast_topo_hash_of(const struct fast_topo *t, const char *algo);

/* Effective bandwidth in bytes per second: line rate x efficiency. */
static inline double fast_tier_Bps(const struct fast_tier *tier)
{
	return tier->bw_GBps * 1e9 * tier->efficiency;
}

/* Seconds a step costs on the tier before its bytes: latency + per-step
 * overhead (the alpha of the cost models). */
static inline double fast_tier_step_s(const struct fast_tier *tier)
{
	return (tier->latency_us + tier->step_overhead_us) * 1e-6;
}

/* The incast factor of an ingress (a NIC's, as the topology's congestion
 * model says) with k concurrent senders: 1 up to incast_threshold, then
 * incast_slope lost per extra sender, never below incast_floor (1 when
 * c is NULL or the slope 0).  The one formula the simulator's rates
 * (sim/maxmin.c) and auto's predictions (lib/compile/algo_auto_model.c)
 * share, so that the predictor models what the simulator runs. */
static inline double fast_incast_factor(const struct fast_congestion *c, double k)
{
	double f;

	if (!c || k <= c->incast_threshold || c->incast_slope <= 0.0)
		return 1.0;
	f = 1.0 - c->incast_slope * (k - c->incast_threshold);
	if (f < c->incast_floor)
		f = c->incast_floor;
	if (f > 1.0)
		f = 1.0;
	if (f <= 0.0)
		f = 1e-3; /* a validated topology has floor > 0; never stall */
	return f;
}

/* Presets: "h200", "h100", "mi300x", "mi300x-100g".  servers/gpus of 0 keep
 * the preset's defaults (4 servers, 8 GPUs).  Returns FAST_EUSAGE for an
 * unknown name (the message lists the known ones). */
int fast_topo_preset(const char *name, uint32_t servers, uint32_t gpus,
		     const struct fast_limits *lim, struct fast_topo *out,
		     struct fast_err *err);
/* NULL-terminated list of preset names. */
const char *const *fast_topo_preset_names(void);

/* Load and validate a topology JSON file (schemas/topology.schema.json).
 * Errors are FAST_EINPUT/FAST_ELIMIT with "path: /json/path: message". */
int fast_topo_load(const char *path, const struct fast_limits *lim,
		   struct fast_topo *out, struct fast_err *err);
/* The same from a NUL-terminated buffer; name is used in messages. */
int fast_topo_parse(const char *text, size_t len, const char *name,
		    const struct fast_limits *lim, struct fast_topo *out,
		    struct fast_err *err);
/* Check every number against its physical range (bandwidths in
 * [1e-6, 1e6] GB/s, efficiency in [0.001, 1], ...) and each tier's slowest
 * rate (bw x efficiency x incast floor [/ oversubscription]) against
 * FAST_TOPO_MIN_GBPS.  Returns FAST_EINPUT naming the field:
 * "/scale_out/bw_GBps: must be in [1e-06, 1e+06] GB/s (got 1e-300)". */
int fast_topo_validate(const struct fast_topo *t, const struct fast_limits *lim,
		       struct fast_err *err);
/* The model number at JSON path (a row of lib/model/topo.c's fields[] table:
 * "/scale_out/step_overhead_us", "/congestion/rto_us", ..., or an
 * implementation's number, "/implementation/<entry>/<member>" with entry
 * "default" or a schedule and member out_GBps, reduce_GBps, call_us,
 * call_out_us, or the engine's rate, up_engine/GBps_per_sm (SMs) or
 * up_engine/GBps (copy engine): lib/model/topo_impl.c, what calibrate
 * fits): a pointer into t and its inclusive range, or NULL for an unknown
 * path. */
double *fast_topo_field(struct fast_topo *t, const char *path, double *min, double *max);
/* Is the loss/timeout term on (rto_us and rto_count > 0)? */
static inline bool fast_topo_rto_on(const struct fast_topo *t)
{
	return t->rto.us > 0 && t->rto.count > 0;
}

/* --- implementations (lib/model/topo_impl.c) ---------------------------- */

/* "fast", "fanout", "nccl", "pxn", "spreadout", "hier", NULL. */
const char *const *fast_topo_impl_names(void);
/* The implementation of schedule algo: its entry, or the default's for
 * any other name (NULL, "auto", "mpi"). */
const struct fast_impl *fast_topo_impl(const struct fast_topo *t, const char *algo);
/* The neutral entry: step, one in flight, the link, no caps, no cost. */
void fast_impl_neutral(struct fast_impl *m);
bool fast_impl_is_neutral(const struct fast_impl *m);
/* Does any entry differ from the neutral one? */
bool fast_topo_impl_on(const struct fast_topo *t);
/* The cap m's engine puts on a GPU's scale-up egress (and ingress), in
 * bytes/s: sms x engine_GBps, engine_GBps, or 0 (the link: none). */
double fast_impl_up_cap_Bps(const struct fast_impl *m);
/* Schedule algo's effective scale-up rate of one GPU's port (switch) in
 * bytes/s: min(the port's, the engine's cap); and of a scale-out port of
 * `gpus` GPUs: min(port_Bps, gpus x out cap). */
double fast_impl_up_Bps(const struct fast_impl *m, const struct fast_topo *t);
double fast_impl_out_Bps(const struct fast_impl *m, double port_Bps, uint32_t gpus);
/* Does chain position `pos` (a chunk's index in its transfer, or a step's
 * depth in the plan's DAG) pay its latency and per-step overhead: one in
 * every in_flight does. */
static inline bool fast_impl_pays(const struct fast_impl *m, uint64_t pos)
{
	return m->in_flight <= 1 || pos % m->in_flight == 0;
}

/* One override as the topology file writes it: {"server": S, "nic": K,
 * "fraction": F} (every document that lists overrides writes them so). */
void fast_topo_put_nic_override(FILE *f, const struct fast_nic_override *o);

/* Write the normalised JSON form (every field explicit) to f.  Returns
 * FAST_EIO if the stream reports an error. */
int fast_topo_write(const struct fast_topo *t, FILE *f, struct fast_err *err);

#endif
