/*
 * topo.c - the fabric description: named presets built from published
 * figures, the strict JSON loader (schemas/topology.schema.json), range
 * validation and the normalised writer that prints every field.
 *
 * Workload: a topology is a few hundred bytes; it is loaded once per
 * command.  Everything here is a plain value computation: no allocation
 * survives a call.
 *
 * Defaults of optional JSON fields (the schema documents the same values):
 *   name "custom"; latency_us 0; efficiency 1; step_overhead_us 0;
 *   scale_out.nics_per_server = gpus_per_server (one NIC per GPU);
 *   scale_out.nic_overrides [] (every NIC at the nominal rate; topo_nics.c);
 *   scale_out.core_oversubscription 1 (non-blocking core);
 *   scale_out.core_sharing "maxmin" (written and hashed only when "demand");
 *   congestion {incast_threshold 1, incast_slope 0, incast_floor 1}
 *   (no incast loss); congestion {rto_us 0 (no loss/timeout regime),
 *   rto_senders 1, rto_count 1}; source "".
 */
#include "fast/topo.h"

#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/model/topo_internal.h"

/* Ranges accepted for each dimension before the N*G limit applies (the
 * same bounds as the --servers/--gpus options). */
#define MAX_SERVERS (1u << 20)
#define MAX_GPUS_PER_SERVER (1u << 16)

#define DEFAULT_SERVERS 4u
#define DEFAULT_GPUS 8u

/*
 * The presets, in one table so that calibration (sim/) edits one place.
 *
 * Figures (docs/figures.md):
 *  - FAST paper (Lei et al., arXiv 2505.09764) section 5 testbeds: 4 x 8
 *    H200 with NVLink 450 GB/s per GPU per direction and 400 Gb/s
 *    InfiniBand per GPU; 4 x 8 MI300X with an Infinity Fabric full mesh of
 *    448 GB/s per GPU in total over 7 links (64 GB/s per link per
 *    direction) and 100 Gb/s RoCEv2 with DCQCN.
 *  - Achievable payload rates of the paper's artifact: 400 Gb/s ~ 48.85
 *    GB/s, 100 Gb/s ~ 11 GB/s, H200 NVLink ~ 380 GB/s.  They give the
 *    efficiencies 48.85/50, 11/12.5 and 380/450.
 *  - Per-message alpha of the artifact's alpha-beta link presets: scale-up
 *    0.1 us, 400 Gb/s Ethernet 0.7 us, InfiniBand 1.7 us.
 *
 * Estimates of this project (stated, not measured):
 *  - Per-step overheads: 2 us for a scale-up step (about one kernel launch
 *    plus a flag handshake between GPUs of a server) and 5 us for a
 *    scale-out stage (proxy/NIC work-request posting and the completion
 *    round trip that ends a stage, a few RDMA latencies).
 *  - MI300X Infinity Fabric efficiency 0.8: no published payload rate in the
 *    reference table; xGMI links typically reach about 80% of line rate.
 *  - Incast: InfiniBand's credit-based flow control loses little when many
 *    senders target one NIC (slope 0.005 per extra sender, floor 0.9);
 *    RoCE with DCQCN loses much more (slope 0.02 per extra sender, floor
 *    0.5).  Both were calibrated with the simulator on the paper's Zipf 0.8
 *    outcomes and validated on its uniform-random ones
 *    (results/calibration.md, which also shows why the first RoCE estimate
 *    was dropped).  The 400 Gb/s `mi300x` preset shares the RoCE model:
 *    DCQCN's behaviour, not the link rate, sets it.  They live here only.
 */
/* One schedule's implementation in a preset (its entry whole). */
struct preset_impl {
	const char *sched; /* a name of fast_topo_impl_names() */
	struct fast_impl impl;
};

/* The implementations of a preset: the default, then the schedules that
 * differ from it, and where every number comes from. */
struct preset_impls {
	struct fast_impl deflt;
	struct preset_impl sched[FAST_IMPL_SCHEDS];
	size_t n;
	const char *source;
};

struct preset {
	const char *name;
	enum fast_up_kind up_kind;
	struct fast_tier up, out;
	struct fast_congestion congestion;
	const char *source;
	const struct preset_impls *impls; /* NULL: none (every entry neutral) */
};

#define IB_CONGESTION { 1.0, 0.005, 0.9 }
#define ROCE_CONGESTION { 1.0, 0.02, 0.5 }

/*
 * How each schedule's real implementation runs on the testbeds (topo.h,
 * "implementations"; docs/models.md "Implementations" has the sources and
 * what each moves).  An entry: sync, in_flight, up_engine (kind, SMs, GB/s
 * per SM or the engine's), out_GBps, reduce_GBps, call_us, call_out_us.
 *  - NCCL / RCCL (nccl, pxn; fanout where NCCL runs it): a channel's FIFO
 *    holds NCCL_STEPS = 8 steps in flight (NCCL src/include/device.h, kept
 *    by RCCL).  On NVIDIA its copies within a server are SM copies: an
 *    in-node alltoall reaches 335 GB/s busbw on 4 x H100 (NCCL 2.30.4,
 *    500 MB: NVIDIA/nccl #2169), NVLink 4 as on H200; 32 SMs (NCCL's most
 *    channels, an SM each) of 335 / 32 GB/s: the split is an estimate, the
 *    product measured.  RCCL's in-node rate on MI300X: no figure found,
 *    the link's.
 *  - DeepEP (hier on NVIDIA): its tests run 24 SMs; with 24 SMs its
 *    intranode dispatch reached 169 GB/s on GB200 (DeepEP #394), whose
 *    NVLink (900 GB/s) does not bind, and the test counts a rank's own
 *    tokens, 1/8 of what it receives on 8 GPUs, which cross no link: 169 x
 *    7/8 / 24 = 6.16 GB/s per SM (an estimate for Hopper's SMs; on H800,
 *    NVLink-bound, 153-160 GB/s: the README, pplx-kernels #10).  16 chunks
 *    in flight: its default dispatch config at 32 ranks keeps an RDMA
 *    buffer of 128 tokens in chunks of 8 (deep_ep/buffer.py).
 *  - SpreadOut: each GPU walks its own rounds (sync rank): against the
 *    FAST paper's SpreadOut measurements, 29-35% too slow by step and
 *    within 5% by rank (issue 29).
 *  - FAST: as this project runs it (exec/): a rank keeps two waves in
 *    flight (exec/README.md "Waves in flight": the next wave's messages
 *    whose bytes it holds go out while a wave runs), so of a chain of
 *    steps one in two pays its latency and overhead; the rest as the
 *    testbed's fitted topologies carry it.  The cuda and hip backends hold
 *    two waves as the host one does (a stream and an NCCL communicator per
 *    wave in flight), tested on a mock device runtime and compiled, not
 *    yet run on a GPU.  The FAST paper's own prototype on
 *    its MI300X testbed costs about 0.6 ms a call (its bandwidth at 65 MB
 *    per GPU 17-24% below the model, at 8.3 GB within 4-13%: issue 29), a
 *    figure of that implementation, not of the schedule: docs/models.md
 *    ("Implementations") shows the topology that adds it; the presets do
 *    not, so that FAST / bound (fast gate) stays a measure of the plan.
 * No published per-call cost of NCCL, RCCL or DeepEP is used: 0
 * (`fast calibrate --up-alltoall/--out-alltoall` fits NCCL's).
 */
#define IMPL(sync, flights, engine, sms, GBps, call) \
	{ FAST_IMPL_SYNC_##sync, flights, FAST_ENGINE_##engine, sms, GBps, 0, 0, call, 0 }
#define NEUTRAL_IMPL IMPL(STEP, 1, LINK, 0, 0, 0)
#define NCCL_NVIDIA IMPL(STEP, 8, SM, 32, 335.0 / 32, 0)
#define FAST_EXEC IMPL(STEP, 2, LINK, 0, 0, 0) /* FAST_IN_FLIGHT_MAX waves (prog.h) */

static const struct preset_impls nvidia_impls = {
	NEUTRAL_IMPL,
	{ { "nccl", NCCL_NVIDIA },
	  { "pxn", NCCL_NVIDIA },
	  { "fanout", NCCL_NVIDIA },
	  { "hier", IMPL(STEP, 16, SM, 24, 169.0 * 7 / 8 / 24, 0) },
	  { "spreadout", IMPL(RANK, 1, LINK, 0, 0, 0) },
	  { "fast", FAST_EXEC } },
	6,
	"NCCL (nccl, pxn, fanout): 8 steps in flight (NCCL_STEPS, src/include/device.h); "
	"in-node copies 335 GB/s (alltoall busbw, 4 x H100, NCCL 2.30.4: NVIDIA/nccl #2169) "
	"as 32 SMs (NCCL's most channels: an estimate) x 10.47 GB/s. DeepEP (hier): 24 SMs "
	"(its tests) x 6.16 GB/s (169 GB/s intranode dispatch on GB200, DeepEP #394, less "
	"the 1/8 of own tokens: an estimate for Hopper), 16 RDMA chunks in flight (its "
	"default config, deep_ep/buffer.py). SpreadOut: by rank (issue 29: within 5% of the "
	"FAST paper's SpreadOut by rank, 29-35% too slow by step). FAST: 2 waves in flight "
	"(this project's executor, exec/README.md: host, cuda and hip backends alike; the "
	"GPU path tested on a mock device, not yet on a GPU). "
	"No per-call costs: 0",
};

static const struct preset_impls amd_impls = {
	NEUTRAL_IMPL,
	{ { "nccl", IMPL(STEP, 8, LINK, 0, 0, 0) },
	  { "pxn", IMPL(STEP, 8, LINK, 0, 0, 0) },
	  { "spreadout", IMPL(RANK, 1, LINK, 0, 0, 0) },
	  { "fast", FAST_EXEC } },
	4,
	"RCCL (nccl, pxn): 8 steps in flight (NCCL_STEPS, kept by RCCL); its in-node rate: "
	"no figure found, the link's. SpreadOut: by rank (issue 29: within 5% of the FAST "
	"paper's SpreadOut by rank, 29-35% too slow by step). FAST as this project runs it: "
	"2 waves in flight (exec/README.md: host and hip backends alike; the GPU path tested "
	"on a mock device, not yet on a GPU), the paper "
	"prototype's ~0.6 ms a call not included (docs/models.md). No per-call costs: 0",
};

static const struct preset presets[] = {
	{ "h200", FAST_UP_SWITCH,
	  { 450.0, 0.1, 380.0 / 450.0, 2.0 },
	  { 50.0, 1.7, 48.85 / 50.0, 5.0 },
	  IB_CONGESTION,
	  "FAST paper (arXiv 2505.09764) sec. 5 NVIDIA testbed: 8x H200 per server, "
	  "NVLink 450 GB/s per GPU per direction, 400 Gb/s InfiniBand per GPU; "
	  "efficiency from the paper artifact's payload rates (NVLink 380 GB/s, "
	  "400 Gb/s = 48.85 GB/s); alpha from its link presets (scale-up 0.1 us, "
	  "InfiniBand 1.7 us); step overheads and incast model: project estimates", &nvidia_impls },
	{ "h100", FAST_UP_SWITCH,
	  { 450.0, 0.1, 380.0 / 450.0, 2.0 },
	  { 50.0, 1.7, 48.85 / 50.0, 5.0 },
	  IB_CONGESTION,
	  "H100 SXM: NVLink 4, 18 links = 900 GB/s bidirectional = 450 GB/s per "
	  "GPU per direction (NVIDIA H100 datasheet); 400 Gb/s InfiniBand NDR per "
	  "GPU as in DGX H100; efficiency and alpha as the h200 preset (FAST "
	  "paper artifact constants); step overheads and incast model: project "
	  "estimates", &nvidia_impls },
	{ "mi300x", FAST_UP_MESH,
	  { 64.0, 0.1, 0.8, 2.0 },
	  { 50.0, 0.7, 48.85 / 50.0, 5.0 },
	  ROCE_CONGESTION,
	  "FAST paper (arXiv 2505.09764) sec. 5 AMD testbed: 8x MI300X per server, "
	  "Infinity Fabric full mesh, 448 GB/s per GPU in total over 7 links = 64 "
	  "GB/s per link per direction (efficiency 0.8: project estimate); "
	  "scale-out 400 Gb/s Ethernet per GPU (48.85 GB/s payload, alpha 0.7 us: "
	  "paper artifact constants); RoCE/DCQCN incast model and step overheads: "
	  "project estimates", &amd_impls },
	{ "mi300x-100g", FAST_UP_MESH,
	  { 64.0, 0.1, 0.8, 2.0 },
	  { 12.5, 0.7, 11.0 / 12.5, 5.0 },
	  ROCE_CONGESTION,
	  "FAST paper (arXiv 2505.09764) sec. 5 AMD testbed as measured: 8x MI300X "
	  "per server, Infinity Fabric full mesh 448 GB/s per GPU over 7 links = "
	  "64 GB/s per link per direction (efficiency 0.8: project estimate); "
	  "100 Gb/s RoCEv2 with DCQCN per GPU (11 GB/s payload: paper artifact); "
	  "alpha 0.1 us scale-up, 0.7 us Ethernet (paper artifact link presets); "
	  "RoCE/DCQCN incast model calibrated on the paper's Zipf outcomes (results/calibration.md), step overheads: project estimates", &amd_impls },
};

#define NPRESETS (sizeof presets / sizeof presets[0])

const char *const *fast_topo_preset_names(void)
{
	/* the same order as presets[]; test_topo checks that every name loads */
	static const char *const names[] = {
		"h200", "h100", "mi300x", "mi300x-100g", NULL,
	};
	_Static_assert(sizeof names / sizeof names[0] == NPRESETS + 1,
		       "one name per preset");
	return names;
}

/* A preset's implementations into t (every entry neutral without). */
static void preset_impls_set(struct fast_topo *t, const struct preset_impls *pi)
{
	const char *const *names = fast_topo_impl_names();

	fast_impl_neutral(&t->impl[0]);
	t->impl_source[0] = '\0';
	if (pi) {
		t->impl[0] = pi->deflt;
		snprintf(t->impl_source, sizeof t->impl_source, "%s", pi->source);
	}
	for (size_t i = 0; i < FAST_IMPL_SCHEDS; i++) {
		t->impl[1 + i] = t->impl[0];
		for (size_t k = 0; pi && k < pi->n; k++)
			if (strcmp(pi->sched[k].sched, names[i]) == 0)
				t->impl[1 + i] = pi->sched[k].impl;
	}
}

/* N x G against the limit, with the message every caller shares. */
static int check_dims(uint32_t servers, uint32_t gpus, const struct fast_limits *lim,
		      struct fast_err *err)
{
	uint64_t ng = (uint64_t)servers * gpus;

	if (lim && ng > lim->max_gpus)
		return fast_err_set(err, FAST_ELIMIT,
				    "%u servers x %u GPUs = %llu GPUs is over the limit of %u "
				    "(raise it with --max-gpus)",
				    servers, gpus, (unsigned long long)ng, lim->max_gpus);
	return 0;
}

int fast_topo_preset(const char *name, uint32_t servers, uint32_t gpus,
		     const struct fast_limits *lim, struct fast_topo *out,
		     struct fast_err *err)
{
	const struct preset *p = NULL;
	struct fast_topo t;
	int rc;

	for (size_t i = 0; i < NPRESETS; i++)
		if (strcmp(presets[i].name, name) == 0)
			p = &presets[i];
	if (!p) {
		char known[128] = "", hint[64] = "";
		const char *near = fast_suggest(name, fast_topo_preset_names(), NPRESETS);
		for (size_t i = 0; i < NPRESETS; i++)
			snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s",
				 i ? ", " : "", presets[i].name);
		if (near)
			snprintf(hint, sizeof hint, "did you mean '%s'? ", near);
		return fast_err_set(err, FAST_EUSAGE, "unknown preset '%.40s' (%sknown: %s)", name,
				    hint, known);
	}
	memset(&t, 0, sizeof t);
	snprintf(t.name, sizeof t.name, "%s", p->name);
	t.servers = servers ? servers : DEFAULT_SERVERS;
	t.gpus = gpus ? gpus : DEFAULT_GPUS;
	t.up_kind = p->up_kind;
	t.up = p->up;
	t.out = p->out;
	t.core_oversub = 1.0;
	t.nics = t.gpus;
	t.congestion = p->congestion;
	snprintf(t.source, sizeof t.source, "%s", p->source);
	preset_impls_set(&t, p->impls);
	rc = check_dims(t.servers, t.gpus, lim, err);
	if (rc < 0)
		return rc;
	rc = fast_topo_validate(&t, lim, err);
	if (rc < 0)
		return rc;
	*out = t;
	return 0;
}

/*
 * The range of every number of a topology, in one table: the loader checks
 * each number against its row as it reads it (get_num) and
 * fast_topo_validate() checks them all, so files, presets, sweep variants
 * and fitted topologies obey the same limits
 * (schemas/topology.schema.json states the same ones).  The bounds are the
 * physically meaningful ones, not what a double can hold: 1e-300 GB/s is a
 * valid double but no fabric, and it makes the simulator's rates underflow.
 *  - bandwidths: 1 kB/s (1e-6 GB/s) to 1 PB/s per port;
 *  - latencies and per-step overheads: 0 to 1 s;
 *  - efficiency and incast floor: fractions of the line rate, at least 0.1%
 *    (FAST_TOPO_MIN_FRACTION) and at most 1;
 *  - incast slope: the fraction lost per extra sender, at most all of it;
 *  - core oversubscription: 1 (non-blocking) to 1000;
 *  - loss/timeout regime: a timeout of 0 (off) to 10 s (an RDMA RC
 *    retry timeout reaches seconds), 0 to 1e9 senders, 0 to 100 timeouts.
 * Rows marked opt are default-off terms: written and hashed only when
 * fast_topo_rto_on(), so a topology without them keeps its identity.
 */
#define FIELD(path, member, min, max, unit) \
	{ path, offsetof(struct fast_topo, member), min, max, unit, false }
#define OPT_FIELD(path, member, min, max, unit) \
	{ path, offsetof(struct fast_topo, member), min, max, unit, true }

static const struct field {
	const char *path;
	size_t off;        /* offset of the double in struct fast_topo */
	double min, max;   /* inclusive */
	const char *unit;  /* appended to the bounds in messages */
	bool opt;          /* the loss/timeout term: hashed only when on */
} fields[] = {
	FIELD("/scale_up/bw_GBps", up.bw_GBps, FAST_TOPO_MIN_GBPS, FAST_TOPO_MAX_GBPS, " GB/s"),
	FIELD("/scale_up/latency_us", up.latency_us, 0, FAST_TOPO_MAX_US, " us"),
	FIELD("/scale_up/efficiency", up.efficiency, FAST_TOPO_MIN_FRACTION, 1, ""),
	FIELD("/scale_up/step_overhead_us", up.step_overhead_us, 0, FAST_TOPO_MAX_US, " us"),
	FIELD("/scale_out/bw_GBps", out.bw_GBps, FAST_TOPO_MIN_GBPS, FAST_TOPO_MAX_GBPS, " GB/s"),
	FIELD("/scale_out/latency_us", out.latency_us, 0, FAST_TOPO_MAX_US, " us"),
	FIELD("/scale_out/efficiency", out.efficiency, FAST_TOPO_MIN_FRACTION, 1, ""),
	FIELD("/scale_out/step_overhead_us", out.step_overhead_us, 0, FAST_TOPO_MAX_US, " us"),
	FIELD("/scale_out/core_oversubscription", core_oversub, 1, FAST_TOPO_MAX_OVERSUB, ""),
	FIELD("/congestion/incast_threshold", congestion.incast_threshold, 0, 1e9, ""),
	FIELD("/congestion/incast_slope", congestion.incast_slope, 0, 1, ""),
	FIELD("/congestion/incast_floor", congestion.incast_floor, FAST_TOPO_MIN_FRACTION, 1, ""),
	OPT_FIELD("/congestion/rto_us", rto.us, 0, 1e7, " us"),
	OPT_FIELD("/congestion/rto_senders", rto.senders, 0, 1e9, ""),
	OPT_FIELD("/congestion/rto_count", rto.count, 0, 100, ""),
};

static double field_of(const struct fast_topo *t, const struct field *f);

/* The fabric alone: shape, kind, every field, the NICs. */
static uint64_t hash_fabric(const struct fast_topo *t)
{
	uint64_t h = fast_hash_str(FAST_HASH_INIT, "fast topology 1");

	h = fast_hash_u64(h, t->servers);
	h = fast_hash_u64(h, t->gpus);
	h = fast_hash_u64(h, (uint64_t)t->up_kind);
	for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
		if (!fields[i].opt || fast_topo_rto_on(t))
			h = fast_hash_double(h, field_of(t, &fields[i]));
	if (t->core_sharing != FAST_CORE_MAXMIN) /* the default keeps its identity */
		h = fast_hash_str(h, fast_core_sharing_name(t->core_sharing));
	return topo_hash_nics(t, h);
}

uint64_t fast_topo_hash(const struct fast_topo *t)
{
	return topo_hash_impl(t, hash_fabric(t));
}

uint64_t fast_topo_hash_of(const struct fast_topo *t, const char *algo)
{
	return topo_hash_impl_of(t, algo, hash_fabric(t));
}

const char *fast_core_sharing_name(enum fast_core_sharing s)
{
	return s == FAST_CORE_DEMAND ? "demand" : "maxmin";
}

double *fast_topo_field(struct fast_topo *t, const char *path, double *min, double *max)
{
	for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
		if (strcmp(fields[i].path, path) == 0) {
			if (min)
				*min = fields[i].min;
			if (max)
				*max = fields[i].max;
			return (double *)((char *)t + fields[i].off);
		}
	return topo_impl_field(t, path, min, max);
}

static const char *num(char buf[32], double v)
{
	return fast_num_format(v, buf, 32);
}

static int check_value(const struct field *f, double v, struct fast_err *err)
{
	char got[32];

	if (!isfinite(v))
		return fast_err_set(err, FAST_EINPUT, "%s: must be a finite number", f->path);
	if (!(v >= f->min) || !(v <= f->max))
		return fast_err_set(err, FAST_EINPUT, "%s: must be in [%g, %g]%s (got %s)",
				    f->path, f->min, f->max, f->unit, num(got, v));
	return 0;
}

static double field_of(const struct fast_topo *t, const struct field *f)
{
	double v;

	memcpy(&v, (const char *)t + f->off, sizeof v);
	return v;
}

/*
 * The slowest rate a tier's port can run at: line rate x efficiency x the
 * incast floor, and for scale-out its share of an oversubscribed core.
 * Each factor can be in range while the product is no fabric (1e-6 GB/s
 * x 0.001 x 0.001 / 1000); it must reach FAST_TOPO_MIN_GBPS too.
 */
static int check_rate(const char *tier, const struct fast_tier *x, double floor_,
		      double oversub, struct fast_err *err)
{
	double r = x->bw_GBps * x->efficiency * floor_ / oversub;
	char a[32], b[32], c[32], d[32];

	if (r >= FAST_TOPO_MIN_GBPS)
		return 0;
	if (oversub != 1)
		return fast_err_set(err, FAST_EINPUT,
				    "/%s: its slowest rate bw_GBps x efficiency x incast_floor / "
				    "core_oversubscription = %s x %s x %s / %s = %g GB/s is below "
				    "%g GB/s",
				    tier, num(a, x->bw_GBps), num(b, x->efficiency), num(c, floor_),
				    num(d, oversub), r, FAST_TOPO_MIN_GBPS);
	return fast_err_set(err, FAST_EINPUT,
			    "/%s: its slowest rate bw_GBps x efficiency x incast_floor = %s x %s x "
			    "%s = %g GB/s is below %g GB/s",
			    tier, num(a, x->bw_GBps), num(b, x->efficiency), num(c, floor_),
			    r, FAST_TOPO_MIN_GBPS);
}

int fast_topo_validate(const struct fast_topo *t, const struct fast_limits *lim,
		       struct fast_err *err)
{
	int rc;

	if (t->servers < 1 || t->servers > MAX_SERVERS)
		return fast_err_set(err, FAST_EINPUT, "/servers: must be in [1, %u] (got %u)",
				    MAX_SERVERS, t->servers);
	if (t->gpus < 1 || t->gpus > MAX_GPUS_PER_SERVER)
		return fast_err_set(err, FAST_EINPUT,
				    "/gpus_per_server: must be in [1, %u] (got %u)",
				    MAX_GPUS_PER_SERVER, t->gpus);
	if ((rc = check_dims(t->servers, t->gpus, lim, err)) < 0)
		return rc;
	if (t->up_kind != FAST_UP_SWITCH && t->up_kind != FAST_UP_MESH)
		return fast_err_set(err, FAST_EINPUT, "/scale_up/kind: must be \"switch\" or \"mesh\"");
	for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
		if ((rc = check_value(&fields[i], field_of(t, &fields[i]), err)) < 0)
			return rc;
	if ((rc = check_rate("scale_up", &t->up, t->congestion.incast_floor, 1, err)) < 0 ||
	    (rc = check_rate("scale_out", &t->out, t->congestion.incast_floor, t->core_oversub,
			     err)) < 0)
		return rc;
	if ((rc = topo_validate_nics(t, err)) < 0)
		return rc;
	return topo_validate_impl(t, err);
}

/* --- loading ------------------------------------------------------------ */

static const char *const root_keys[] = {
	"version", "name", "servers", "gpus_per_server", "scale_up",
	"scale_out", "congestion", "implementation", "source", NULL,
};
static const char *const up_keys[] = {
	"kind", "bw_GBps", "latency_us", "efficiency", "step_overhead_us", NULL,
};
static const char *const out_keys[] = {
	"nics_per_server", "bw_GBps", "latency_us", "efficiency", "step_overhead_us",
	"core_oversubscription", "core_sharing", "nic_overrides", NULL,
};
static const char *const cong_keys[] = {
	"incast_threshold", "incast_slope", "incast_floor", "rto_us", "rto_senders",
	"rto_count", NULL,
};

/* A number member at c's path, checked against its fields[] row as it is
 * read, so that the first wrong number in the file is the one reported. */
static int get_num(struct fast_jctx *c, const struct fast_jv *o, const char *key,
		   bool required, double *out)
{
	double v = 0;
	int rc = fast_jv_get_double(c, o, key, required, -DBL_MAX, DBL_MAX, false, &v);

	if (rc < 0 || !fast_jv_get(o, key))
		return rc;
	for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
		const char *p = fields[i].path;
		if (strncmp(p, c->path, c->len) == 0 && p[c->len] == '/' &&
		    strcmp(p + c->len + 1, key) == 0) {
			if ((rc = check_value(&fields[i], v, c->err)) < 0) {
				fast_err_prefix(c->err, "%s", c->file);
				return rc;
			}
			break;
		}
	}
	*out = v;
	return 0;
}

/* The members every tier shares; bw_GBps is required, the rest optional. */
static int load_tier(struct fast_jctx *c, const struct fast_jv *o, struct fast_tier *t)
{
	int rc;

	t->latency_us = 0;
	t->efficiency = 1;
	t->step_overhead_us = 0;
	if ((rc = get_num(c, o, "bw_GBps", true, &t->bw_GBps)) < 0 ||
	    (rc = get_num(c, o, "latency_us", false, &t->latency_us)) < 0 ||
	    (rc = get_num(c, o, "efficiency", false, &t->efficiency)) < 0 ||
	    (rc = get_num(c, o, "step_overhead_us", false, &t->step_overhead_us)) < 0)
		return rc;
	return 0;
}

static int load_scale_up(struct fast_jctx *c, const struct fast_jv *root, struct fast_topo *t)
{
	const struct fast_jv *o = fast_jv_get(root, "scale_up");
	const struct fast_jv *kind;
	size_t old;
	int rc;

	if (!o)
		return fast_jctx_fail(c, FAST_EINPUT, "missing required key \"scale_up\"");
	old = fast_jctx_push_key(c, "scale_up");
	if ((rc = fast_jv_expect_object(c, o, up_keys)) < 0)
		return rc;
	kind = fast_jv_get(o, "kind");
	if (!kind)
		return fast_jctx_fail(c, FAST_EINPUT, "missing required key \"kind\"");
	{
		size_t k = fast_jctx_push_key(c, "kind");
		const char *s = fast_jv_string(kind);
		if (!s)
			return fast_jctx_fail(c, FAST_EINPUT, "expected string, got %s",
					      fast_jtype_name(fast_jv_type(kind)));
		if (strcmp(s, "switch") == 0)
			t->up_kind = FAST_UP_SWITCH;
		else if (strcmp(s, "mesh") == 0)
			t->up_kind = FAST_UP_MESH;
		else
			return fast_jctx_fail(c, FAST_EINPUT,
					      "must be \"switch\" or \"mesh\" (got \"%.40s\")", s);
		fast_jctx_pop(c, k);
	}
	if ((rc = load_tier(c, o, &t->up)) < 0)
		return rc;
	fast_jctx_pop(c, old);
	return 0;
}

/* scale_out.core_sharing: "maxmin" (also when absent) or "demand". */
static int load_core_sharing(struct fast_jctx *c, const struct fast_jv *o,
			     enum fast_core_sharing *out)
{
	const struct fast_jv *v = fast_jv_get(o, "core_sharing");
	const char *s;
	size_t k;

	*out = FAST_CORE_MAXMIN;
	if (!v)
		return 0;
	k = fast_jctx_push_key(c, "core_sharing");
	if (!(s = fast_jv_string(v)))
		return fast_jctx_fail(c, FAST_EINPUT, "expected string, got %s",
				      fast_jtype_name(fast_jv_type(v)));
	if (strcmp(s, "demand") == 0)
		*out = FAST_CORE_DEMAND;
	else if (strcmp(s, "maxmin") != 0)
		return fast_jctx_fail(c, FAST_EINPUT,
				      "must be \"maxmin\" or \"demand\" (got \"%.40s\")", s);
	fast_jctx_pop(c, k);
	return 0;
}

static int load_scale_out(struct fast_jctx *c, const struct fast_jv *root, struct fast_topo *t)
{
	const struct fast_jv *o = fast_jv_get(root, "scale_out");
	size_t old;
	int rc;

	if (!o)
		return fast_jctx_fail(c, FAST_EINPUT, "missing required key \"scale_out\"");
	old = fast_jctx_push_key(c, "scale_out");
	if ((rc = fast_jv_expect_object(c, o, out_keys)) < 0 ||
	    (rc = topo_load_nics(c, o, t)) < 0)
		return rc;
	if ((rc = load_tier(c, o, &t->out)) < 0)
		return rc;
	t->core_oversub = 1.0;
	if ((rc = get_num(c, o, "core_oversubscription", false, &t->core_oversub)) < 0 ||
	    (rc = load_core_sharing(c, o, &t->core_sharing)) < 0)
		return rc;
	fast_jctx_pop(c, old);
	return 0;
}

static int load_congestion(struct fast_jctx *c, const struct fast_jv *root,
			   struct fast_congestion *g, struct fast_rto *l)
{
	const struct fast_jv *o = fast_jv_get(root, "congestion");
	size_t old;
	int rc;

	g->incast_threshold = 1;
	g->incast_slope = 0;
	g->incast_floor = 1;
	l->us = 0;
	l->senders = 1;
	l->count = 1;
	if (!o)
		return 0;
	old = fast_jctx_push_key(c, "congestion");
	if ((rc = fast_jv_expect_object(c, o, cong_keys)) < 0 ||
	    (rc = get_num(c, o, "incast_threshold", false, &g->incast_threshold)) < 0 ||
	    (rc = get_num(c, o, "incast_slope", false, &g->incast_slope)) < 0 ||
	    (rc = get_num(c, o, "incast_floor", false, &g->incast_floor)) < 0 ||
	    (rc = get_num(c, o, "rto_us", false, &l->us)) < 0 ||
	    (rc = get_num(c, o, "rto_senders", false, &l->senders)) < 0 ||
	    (rc = get_num(c, o, "rto_count", false, &l->count)) < 0)
		return rc;
	fast_jctx_pop(c, old);
	return 0;
}

static int load_root(struct fast_jctx *c, const struct fast_jv *root,
		     const struct fast_limits *lim, struct fast_topo *t)
{
	uint64_t version = 0;
	int rc;

	if ((rc = fast_jv_expect_object(c, root, root_keys)) < 0)
		return rc;
	if ((rc = fast_jv_get_u64(c, root, "version", true, UINT32_MAX, &version)) < 0)
		return rc;
	if (version != 1) {
		fast_jctx_push_key(c, "version");
		return fast_jctx_fail(c, FAST_EINPUT,
				      "unsupported version %llu (this build reads version 1)",
				      (unsigned long long)version);
	}
	snprintf(t->name, sizeof t->name, "custom");
	if ((rc = fast_jv_get_string(c, root, "name", false, t->name, sizeof t->name)) < 0 ||
	    (rc = fast_jv_get_u32(c, root, "servers", true, 1, MAX_SERVERS, &t->servers)) < 0 ||
	    (rc = fast_jv_get_u32(c, root, "gpus_per_server", true, 1, MAX_GPUS_PER_SERVER,
				  &t->gpus)) < 0)
		return rc;
	if (lim && (uint64_t)t->servers * t->gpus > lim->max_gpus)
		return fast_jctx_fail(c, FAST_ELIMIT,
				      "%u servers x %u GPUs = %llu GPUs is over the limit of %u "
				      "(raise it with --max-gpus)",
				      t->servers, t->gpus,
				      (unsigned long long)t->servers * t->gpus, lim->max_gpus);
	if ((rc = load_scale_up(c, root, t)) < 0 || (rc = load_scale_out(c, root, t)) < 0 ||
	    (rc = load_congestion(c, root, &t->congestion, &t->rto)) < 0 ||
	    (rc = topo_load_impl(c, root, t)) < 0)
		return rc;
	t->source[0] = '\0';
	return fast_jv_get_string(c, root, "source", false, t->source, sizeof t->source);
}

int fast_topo_parse(const char *text, size_t len, const char *name,
		    const struct fast_limits *lim, struct fast_topo *out,
		    struct fast_err *err)
{
	struct fast_json *doc = NULL;
	struct fast_jctx c;
	struct fast_topo t;
	int rc;

	rc = fast_json_parse(text, len, name, &doc, err);
	if (rc < 0)
		return rc;
	memset(&t, 0, sizeof t);
	fast_jctx_init(&c, name, err);
	rc = load_root(&c, fast_json_root(doc), lim, &t);
	fast_json_free(doc);
	if (rc < 0)
		return rc;
	/* the loader checked types; the ranges are fast_topo_validate()'s */
	rc = fast_topo_validate(&t, lim, err);
	if (rc < 0) {
		fast_err_prefix(err, "%s", name);
		return rc;
	}
	*out = t;
	return 0;
}

int fast_topo_load(const char *path, const struct fast_limits *lim,
		   struct fast_topo *out, struct fast_err *err)
{
	char *text = NULL;
	size_t len = 0;
	uint64_t max = lim ? lim->max_file_bytes : FAST_DEFAULT_MAX_FILE_BYTES;
	int rc;

	rc = fast_read_file(path, max, &text, &len, err);
	if (rc < 0)
		return rc;
	rc = fast_topo_parse(text, len, path, lim, out, err);
	free(text);
	return rc;
}

/* --- writing ------------------------------------------------------------ */

static void put_field(FILE *f, const char *indent, const char *key, double v, bool last)
{
	fprintf(f, "%s\"%s\": ", indent, key);
	fast_json_put_double(f, v);
	fputs(last ? "\n" : ",\n", f);
}

static void put_tier(FILE *f, const struct fast_tier *t, bool more)
{
	put_field(f, "    ", "bw_GBps", t->bw_GBps, false);
	put_field(f, "    ", "latency_us", t->latency_us, false);
	put_field(f, "    ", "efficiency", t->efficiency, false);
	put_field(f, "    ", "step_overhead_us", t->step_overhead_us, !more);
}

int fast_topo_write(const struct fast_topo *t, FILE *f, struct fast_err *err)
{
	fputs("{\n  \"version\": 1,\n  \"name\": ", f);
	fast_json_put_string(f, t->name);
	fprintf(f, ",\n  \"servers\": %u,\n  \"gpus_per_server\": %u,\n", t->servers, t->gpus);
	fprintf(f, "  \"scale_up\": {\n    \"kind\": \"%s\",\n",
		t->up_kind == FAST_UP_MESH ? "mesh" : "switch");
	put_tier(f, &t->up, false);
	fprintf(f, "  },\n  \"scale_out\": {\n    \"nics_per_server\": %u,\n", t->nics);
	topo_write_nics(t, f);
	put_tier(f, &t->out, true);
	put_field(f, "    ", "core_oversubscription", t->core_oversub,
		  t->core_sharing == FAST_CORE_MAXMIN);
	if (t->core_sharing != FAST_CORE_MAXMIN)
		fprintf(f, "    \"core_sharing\": \"%s\"\n", fast_core_sharing_name(t->core_sharing));
	fputs("  },\n  \"congestion\": {\n", f);
	put_field(f, "    ", "incast_threshold", t->congestion.incast_threshold, false);
	put_field(f, "    ", "incast_slope", t->congestion.incast_slope, false);
	put_field(f, "    ", "incast_floor", t->congestion.incast_floor, !fast_topo_rto_on(t));
	if (fast_topo_rto_on(t)) {
		put_field(f, "    ", "rto_us", t->rto.us, false);
		put_field(f, "    ", "rto_senders", t->rto.senders, false);
		put_field(f, "    ", "rto_count", t->rto.count, true);
	}
	fputs("  },\n", f);
	topo_write_impl(t, f);
	fputs("  \"source\": ", f);
	fast_json_put_string(f, t->source);
	fputs("\n}\n", f);
	if (ferror(f))
		return fast_err_set(err, FAST_EIO, "writing the topology failed");
	return 0;
}
