/*
 * topo.h - the two-tier fabric: N servers of G GPUs, a scale-up tier inside
 * each server (an NVSwitch-style switch or a full GPU mesh) and a scale-out
 * tier of one NIC per GPU (rail i = NIC of local GPU i) behind a core that
 * is non-blocking unless oversubscribed.
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

struct fast_topo {
	char name[FAST_NAME_MAX]; /* preset name, or the file's "name" */
	uint32_t servers;         /* N >= 1 */
	uint32_t gpus;            /* G >= 1, GPUs (and NICs) per server */
	enum fast_up_kind up_kind;
	struct fast_tier up;      /* scale-up tier */
	struct fast_tier out;     /* scale-out tier, one NIC per GPU */
	double core_oversub;      /* >= 1; 1 = non-blocking core */
	struct fast_congestion congestion;
	struct fast_rto rto;      /* zero: off */
	char source[FAST_SOURCE_MAX]; /* where the numbers come from */
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

/* The fabric's identity: shape, scale-up kind and every model number (not
 * the name or source text), chained into FAST_HASH_INIT.  Two topologies
 * with the same hash simulate and plan alike; used to key plan caches, to
 * check that MPI ranks agree, and in result idents. */
uint64_t fast_topo_hash(const struct fast_topo *t);

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
 * "/scale_out/step_overhead_us", "/congestion/rto_us", ...): a pointer
 * into t and its inclusive range, or NULL for an unknown path. */
double *fast_topo_field(struct fast_topo *t, const char *path, double *min, double *max);
/* Is the loss/timeout term on (rto_us and rto_count > 0)? */
static inline bool fast_topo_rto_on(const struct fast_topo *t)
{
	return t->rto.us > 0 && t->rto.count > 0;
}

/* Write the normalised JSON form (every field explicit) to f.  Returns
 * FAST_EIO if the stream reports an error. */
int fast_topo_write(const struct fast_topo *t, FILE *f, struct fast_err *err);

#endif
