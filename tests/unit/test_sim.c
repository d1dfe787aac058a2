/*
 * test_sim.c - the flow-level simulator against closed forms: one flow,
 * fair sharing, one-to-one stages (explicit and compact rail form), DAG
 * chains, chunked pipelines, per-GPU waves (--sync rank), mesh links, incast congestion, the scalable
 * mode against the exact one, timeline writers, bad plans, and the
 * property "simulated time >= LP bound" for every compiler on seeded
 * random traffic; token plans: reductions by hand, and relayed, replicated
 * and partially reduced plans (hand-made, random, deduplicating) and
 * every algorithm's, each proved by the checker, against the token bound.
 */
#include <CUnit/Basic.h>

#include "unit.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fast/algo.h"
#include "fast/bound.h"
#include "fast/check.h"
#include "fast/sim.h"
#include "tok.h"

#define MB (UINT64_C(1000000))

/* 2 servers x 2 GPUs (or G) with round numbers: scale-up 100 GB/s, NIC
 * 10 GB/s, efficiency 1, alpha 1 us / 2 us, overhead 3 us / 5 us. */
static struct fast_topo topo_small(uint32_t N, uint32_t G, enum fast_up_kind kind)
{
	struct fast_topo t = unit_topo(N, G, kind, (struct fast_tier){ 100.0, 1.0, 1.0, 3.0 },
				       (struct fast_tier){ 10.0, 2.0, 1.0, 5.0 });

	t.congestion = (struct fast_congestion){ 1.0, 0.0, 1.0 };
	return t;
}

#define UP_A 1e-6
#define UP_O 3e-6
#define OUT_A 2e-6
#define OUT_O 5e-6
#define UP_BW 100e9
#define OUT_BW 10e9

static void add_xfer(struct fast_plan *p, uint32_t from, uint32_t to, uint64_t bytes)
{
	CU_ASSERT_FATAL(fast_plan_add_xfer(p, from, to, NULL) == 0);
	CU_ASSERT_FATAL(fast_plan_add_piece(p, from, to, 0, bytes, NULL) == 0);
}

static int step(struct fast_plan *p, enum fast_tier_id tier)
{
	int s = fast_plan_add_step(p, FAST_STEP_EXPLICIT, tier, NULL);
	CU_ASSERT_FATAL(s >= 0);
	return s;
}

static double sim_time(const struct fast_topo *t, const struct fast_plan *p,
		       const struct fast_sim_opts *o, struct fast_sim_result *r)
{
	struct fast_err err = { 0 };
	int rc = unit_sim(t, p, NULL, o, r, &err);
	if (rc != 0)
		fprintf(stderr, "sim: %s\n", err.msg);
	CU_ASSERT_FATAL(rc == 0);
	return r->time_s;
}

#define NEAR(a, b) CU_ASSERT(fabs((a) - (b)) <= 1e-9 * fabs(b) + 1e-15)

static void test_sim__one_flow(void)
{
	struct fast_topo t = topo_small(2, 2, FAST_UP_SWITCH);
	struct fast_plan p;
	struct fast_sim_result r;

	fast_plan_init(&p, 2, 2, "test");
	step(&p, FAST_TIER_OUT);
	add_xfer(&p, 0, 2, 10 * MB);
	NEAR(sim_time(&t, &p, NULL, &r), OUT_O + OUT_A + 10e6 / OUT_BW);
	NEAR(r.steps[0].ready_s, 0.0);
	NEAR(r.steps[0].start_s, OUT_O + OUT_A);
	/* algbw: 10 MB / time; busbw = algbw * 3/4 */
	NEAR(r.algbw_GBps, 10e6 / r.time_s / 1e9);
	NEAR(r.busbw_GBps, r.algbw_GBps * 3.0 / 4.0);
	CU_ASSERT_EQUAL(r.gpu_bytes, 10 * MB);
	fast_sim_result_free(&r);

	/* with the traffic, the size is nccl-tests': GPU 0's own chunk (the
	 * diagonal, never moved) counts, as in `fast run` */
	{
		uint64_t D[16] = { 0 };
		struct fast_sim_opts o;
		D[0 * 4 + 0] = 3 * MB;
		D[0 * 4 + 2] = 10 * MB;
		fast_sim_opts_default(&o);
		o.traffic = D;
		sim_time(&t, &p, &o, &r);
		CU_ASSERT_EQUAL(r.gpu_bytes, 13 * MB);
		CU_ASSERT_EQUAL(r.gpu_bytes, fast_a2a_size(D, 4));
		NEAR(r.algbw_GBps, 13e6 / r.time_s / 1e9);
		NEAR(r.busbw_GBps, r.algbw_GBps * 3.0 / 4.0);
		fast_sim_result_free(&r);
	}

	/* the same on scale-up */
	fast_plan_free(&p);
	fast_plan_init(&p, 2, 2, "test");
	step(&p, FAST_TIER_UP);
	add_xfer(&p, 0, 1, 10 * MB);
	NEAR(sim_time(&t, &p, NULL, &r), UP_O + UP_A + 10e6 / UP_BW);
	fast_sim_result_free(&r);
	fast_plan_free(&p);
}

static void test_sim__two_flows_share_port(void)
{
	struct fast_topo t = topo_small(2, 2, FAST_UP_SWITCH);
	struct fast_plan p;
	struct fast_sim_result r;
	uint32_t nic_out0 = 2 * 4 + 0; /* switch: 2*NG up ports, then NIC egress */

	fast_plan_init(&p, 2, 2, "test");
	step(&p, FAST_TIER_OUT);
	add_xfer(&p, 0, 2, 10 * MB);
	add_xfer(&p, 0, 3, 10 * MB);
	/* each at half rate: 10 MB at 5 GB/s */
	NEAR(sim_time(&t, &p, NULL, &r), OUT_O + OUT_A + 10e6 / (OUT_BW / 2));
	CU_ASSERT_EQUAL(r.res[nic_out0].kind, FAST_RES_NIC_EGRESS);
	CU_ASSERT_EQUAL(r.res[nic_out0].bytes, 20 * MB);
	CU_ASSERT_EQUAL(r.res[nic_out0].max_flows, 2);
	CU_ASSERT(r.res[nic_out0].util > 0.99 * (20e6 / OUT_BW) / r.time_s);
	fast_sim_result_free(&r);

	/* unequal flows: the small one ends at 2*5MB/10GB/s, then the big one
	 * runs alone: 5 + 15 MB at full rate after that */
	fast_plan_free(&p);
	fast_plan_init(&p, 2, 2, "test");
	step(&p, FAST_TIER_OUT);
	add_xfer(&p, 0, 2, 5 * MB);
	add_xfer(&p, 0, 3, 20 * MB);
	NEAR(sim_time(&t, &p, NULL, &r), OUT_O + OUT_A + 25e6 / OUT_BW);
	fast_sim_result_free(&r);
	fast_plan_free(&p);
}

/* max-min, not proportional: flows a (0->2) and b (0->3) share NIC 0
 * egress; c (1->3) shares NIC 3 ingress with b.  Max-min: a = b = c = 5. */
static void test_sim__max_min_three_flows(void)
{
	struct fast_topo t = topo_small(2, 2, FAST_UP_SWITCH);
	struct fast_plan p;
	struct fast_sim_result r;

	t.out.latency_us = 0;
	t.out.step_overhead_us = 0;
	fast_plan_init(&p, 2, 2, "test");
	step(&p, FAST_TIER_OUT);
	add_xfer(&p, 0, 2, 10 * MB); /* a */
	add_xfer(&p, 0, 3, 10 * MB); /* b */
	add_xfer(&p, 1, 3, 30 * MB); /* c */
	/* all at 5 GB/s until a and b finish at 2 ms; c then has 20 MB at
	 * 10 GB/s: 4 ms in all */
	NEAR(sim_time(&t, &p, NULL, &r), 4e-3);
	fast_sim_result_free(&r);
	fast_plan_free(&p);

	/* a alone on NIC 2 ingress, b and c into NIC 3: egress 0 carries a, b;
	 * b is limited to 5 by NIC 3 (shared with c), a takes the other 5 */
	fast_plan_init(&p, 2, 2, "test");
	step(&p, FAST_TIER_OUT);
	add_xfer(&p, 0, 2, 5 * MB);
	add_xfer(&p, 0, 3, 5 * MB);
	add_xfer(&p, 1, 3, 5 * MB);
	NEAR(sim_time(&t, &p, NULL, &r), 1e-3);
	fast_sim_result_free(&r);
	fast_plan_free(&p);
}

static void test_sim__one_to_one_stage(void)
{
	struct fast_topo t = topo_small(2, 2, FAST_UP_SWITCH);
	struct fast_plan p;
	struct fast_sim_result r;
	uint32_t perm[2] = { 1, 0 };

	fast_plan_init(&p, 2, 2, "test");
	step(&p, FAST_TIER_OUT);
	add_xfer(&p, 0, 2, 10 * MB);
	add_xfer(&p, 1, 3, 10 * MB);
	add_xfer(&p, 2, 0, 10 * MB);
	add_xfer(&p, 3, 1, 10 * MB);
	NEAR(sim_time(&t, &p, NULL, &r), OUT_O + OUT_A + 10e6 / OUT_BW);
	fast_sim_result_free(&r);
	fast_plan_free(&p);

	/* the same as a compact rail stage: lanes + permutation + budget */
	fast_plan_init(&p, 2, 2, "fast");
	for (uint32_t a = 0; a < 2; a++)
		for (uint32_t i = 0; i < 2; i++) {
			uint32_t src = a * 2 + i, dst = (1 - a) * 2 + i;
			CU_ASSERT_FATAL(fast_plan_add_lane(&p, a, 1 - a, i, NULL) == 0);
			CU_ASSERT_FATAL(fast_plan_add_lane_piece(&p, src, dst, 0, 10 * MB, NULL) == 0);
		}
	CU_ASSERT_FATAL(fast_plan_add_step(&p, FAST_STEP_RAIL, FAST_TIER_OUT, NULL) == 0);
	CU_ASSERT_FATAL(fast_plan_set_perm(&p, perm, 10 * MB, NULL) == 0);
	CU_ASSERT_FATAL(fast_plan_add_step(&p, FAST_STEP_REDIST, FAST_TIER_UP, NULL) == 1);
	CU_ASSERT_FATAL(fast_plan_add_dep(&p, 1, 0, false, NULL) == 0);
	CU_ASSERT_FATAL(fast_plan_set_redist(&p, 0, NULL) == 0);
	/* nothing to redistribute: the empty redist step costs nothing */
	NEAR(sim_time(&t, &p, NULL, &r), OUT_O + OUT_A + 10e6 / OUT_BW);
	CU_ASSERT_EQUAL(r.steps[0].kind, FAST_STEP_RAIL);
	CU_ASSERT_EQUAL(r.steps[1].bytes, 0);
	NEAR(r.steps[1].end_s, r.steps[0].end_s);
	fast_sim_result_free(&r);
	fast_plan_free(&p);
}

/* A chain on 2 x 2: 10 MB GPU 0 -> 2 out, then 2 -> 3 up, then 3 -> 1 out,
 * each step after the one before. */
static void chain_plan(struct fast_plan *p)
{
	fast_plan_init(p, 2, 2, "test");
	step(p, FAST_TIER_OUT);
	add_xfer(p, 0, 2, 10 * MB);
	step(p, FAST_TIER_UP);
	CU_ASSERT_FATAL(fast_plan_add_dep(p, 1, 0, false, NULL) == 0);
	add_xfer(p, 2, 3, 10 * MB);
	step(p, FAST_TIER_OUT);
	CU_ASSERT_FATAL(fast_plan_add_dep(p, 2, 1, false, NULL) == 0);
	add_xfer(p, 3, 1, 10 * MB);
}

static void test_sim__dag_chain_adds(void)
{
	struct fast_topo t = topo_small(2, 2, FAST_UP_SWITCH);
	struct fast_plan p;
	struct fast_sim_result r;
	double hop1 = OUT_O + OUT_A + 10e6 / OUT_BW, hop2 = UP_O + UP_A + 10e6 / UP_BW;

	chain_plan(&p);
	NEAR(sim_time(&t, &p, NULL, &r), 2 * hop1 + hop2);
	NEAR(r.steps[1].ready_s, hop1);
	NEAR(r.steps[1].end_s, hop1 + hop2);
	NEAR(r.steps[2].start_s, hop1 + hop2 + OUT_O + OUT_A);
	fast_sim_result_free(&r);
	fast_plan_free(&p);
}

static void test_sim__chunked_pipeline_overlaps(void)
{
	struct fast_topo t = topo_small(2, 2, FAST_UP_SWITCH);
	struct fast_plan p;
	struct fast_sim_result r;
	const uint32_t k = 8;
	double unpipelined = (OUT_O + OUT_A + 16e6 / OUT_BW) + (UP_O + UP_A + 16e6 / UP_BW);
	/* hop 1 is the slower: its k chunks run back to back (alpha each);
	 * hop 2 trails by one chunk */
	double expect = OUT_O + k * (OUT_A + 2e6 / OUT_BW) + UP_A + 2e6 / UP_BW;

	fast_plan_init(&p, 2, 2, "test");
	step(&p, FAST_TIER_OUT);
	CU_ASSERT_FATAL(fast_plan_set_chunks(&p, k, NULL) == 0);
	add_xfer(&p, 0, 2, 16 * MB);
	step(&p, FAST_TIER_UP);
	CU_ASSERT_FATAL(fast_plan_set_chunks(&p, k, NULL) == 0);
	CU_ASSERT_FATAL(fast_plan_add_dep(&p, 1, 0, true, NULL) == 0);
	add_xfer(&p, 2, 3, 16 * MB);
	NEAR(sim_time(&t, &p, NULL, &r), expect);
	CU_ASSERT(r.time_s < unpipelined);
	CU_ASSERT(r.flows == 2 * k);
	fast_sim_result_free(&r);
	fast_plan_free(&p);
}

/* --sync rank (sim.h "Synchronisation"): each GPU walks its own waves. */
static double sim_sync(const struct fast_topo *t, const struct fast_plan *p, enum fast_sim_sync m,
		       struct fast_sim_result *r)
{
	struct fast_sim_opts o;

	fast_sim_opts_default(&o);
	o.sync = m;
	return sim_time(t, p, &o, r);
}

/* Two GPU pairs on their own NICs, two steps (the second depends on the
 * first), the big transfer first on one pair and second on the other:
 * by step the time is the sum of the steps' maxima, by rank the largest
 * of the pairs' sums.  A chain of one transfer per step is the same
 * either way. */
static void test_sim__rank_sync_no_barrier(void)
{
	struct fast_topo t = topo_small(2, 2, FAST_UP_SWITCH);
	struct fast_plan p;
	struct fast_sim_result r;
	double big = 10e6 / OUT_BW, small = 1e6 / OUT_BW, per = OUT_O + OUT_A;

	fast_plan_init(&p, 2, 2, "test");
	step(&p, FAST_TIER_OUT);
	add_xfer(&p, 0, 2, 10 * MB);
	add_xfer(&p, 1, 3, 1 * MB);
	step(&p, FAST_TIER_OUT);
	CU_ASSERT_FATAL(fast_plan_add_dep(&p, 1, 0, false, NULL) == 0);
	add_xfer(&p, 0, 2, 1 * MB);
	add_xfer(&p, 1, 3, 10 * MB);
	NEAR(sim_sync(&t, &p, FAST_SIM_SYNC_STEP, &r), 2 * per + big + big);
	fast_sim_result_free(&r);
	NEAR(sim_sync(&t, &p, FAST_SIM_SYNC_RANK, &r), 2 * per + big + small);
	/* step 1's first transfer is ready when pair 1-3 finished its wave 0 */
	NEAR(r.steps[1].ready_s, per + small);
	NEAR(r.steps[1].start_s, 2 * per + small);
	NEAR(r.steps[0].end_s, per + big);
	fast_sim_result_free(&r);
	fast_plan_free(&p);

	/* test_sim__dag_chain_adds's chain */
	chain_plan(&p);
	NEAR(sim_sync(&t, &p, FAST_SIM_SYNC_RANK, &r),
	     2 * (OUT_O + OUT_A + 10e6 / OUT_BW) + UP_O + UP_A + 10e6 / UP_BW);
	fast_sim_result_free(&r);
	fast_plan_free(&p);
}

/* A GPU moves to its next wave when all of its flows of the wave are done,
 * as the executor's wave_end waits for all of them: step 2 depends on step
 * 1 only, but its sender, GPU 2, also receives step 0's big transfer in
 * wave 0.  By step it waits for step 1 alone; by rank for GPU 2's whole
 * wave.  A GPU with nothing in a wave (GPU 3 in wave 0) passes through. */
static void test_sim__rank_sync_waits_for_whole_wave(void)
{
	struct fast_topo t = topo_small(2, 2, FAST_UP_SWITCH);
	struct fast_plan p;
	struct fast_sim_result r;
	double hop_up = UP_O + UP_A + 1e6 / UP_BW, hop_out = OUT_O + OUT_A + 10e6 / OUT_BW;

	fast_plan_init(&p, 2, 2, "test");
	step(&p, FAST_TIER_OUT);
	add_xfer(&p, 0, 2, 10 * MB);
	step(&p, FAST_TIER_UP);
	add_xfer(&p, 0, 1, 1 * MB);
	step(&p, FAST_TIER_UP);
	CU_ASSERT_FATAL(fast_plan_add_dep(&p, 2, 1, false, NULL) == 0);
	add_xfer(&p, 2, 3, 1 * MB);
	sim_sync(&t, &p, FAST_SIM_SYNC_STEP, &r);
	NEAR(r.steps[2].end_s, 2 * hop_up);
	NEAR(r.time_s, hop_out);
	fast_sim_result_free(&r);
	sim_sync(&t, &p, FAST_SIM_SYNC_RANK, &r);
	NEAR(r.steps[2].ready_s, hop_out);
	NEAR(r.steps[2].end_s, hop_out + hop_up);
	NEAR(r.time_s, hop_out + hop_up);
	fast_sim_result_free(&r);
	/* a step with no transfers is reported at the end of its dependencies */
	step(&p, FAST_TIER_UP);
	CU_ASSERT_FATAL(fast_plan_add_dep(&p, 3, 1, false, NULL) == 0);
	sim_sync(&t, &p, FAST_SIM_SYNC_RANK, &r);
	NEAR(r.steps[3].ready_s, hop_up);
	NEAR(r.steps[3].start_s, hop_up);
	NEAR(r.steps[3].end_s, hop_up);
	fast_sim_result_free(&r);
	fast_plan_free(&p);
}

/* Pipelined chunks follow the executor's waves (fast_plan_waves, the cut
 * exec/prog.c makes): chunk c of the second step waits for chunk c of the
 * first, which puts every chunk of the first step in wave 0 and of the
 * second in wave 1; so by rank the hops do not overlap.  Within a wave a
 * transfer's chunks run back to back, the overhead paid once. */
static void test_sim__rank_sync_pipelined_chunks_by_wave(void)
{
	struct fast_topo t = topo_small(2, 2, FAST_UP_SWITCH);
	struct fast_plan p;
	struct fast_plan_waves w;
	struct fast_sim_result r;
	struct fast_err err = { 0 };
	const uint32_t k = 8;
	double pipelined = OUT_O + k * (OUT_A + 2e6 / OUT_BW) + UP_A + 2e6 / UP_BW;
	double by_wave = OUT_O + k * (OUT_A + 2e6 / OUT_BW) + UP_O + k * (UP_A + 2e6 / UP_BW);

	fast_plan_init(&p, 2, 2, "test");
	step(&p, FAST_TIER_OUT);
	CU_ASSERT_FATAL(fast_plan_set_chunks(&p, k, NULL) == 0);
	add_xfer(&p, 0, 2, 16 * MB);
	step(&p, FAST_TIER_UP);
	CU_ASSERT_FATAL(fast_plan_set_chunks(&p, k, NULL) == 0);
	CU_ASSERT_FATAL(fast_plan_add_dep(&p, 1, 0, true, NULL) == 0);
	add_xfer(&p, 2, 3, 16 * MB);
	CU_ASSERT_FATAL(fast_plan_waves(&p, 1, &w, &err) == 0);
	CU_ASSERT_EQUAL(w.nwaves, 2);
	CU_ASSERT_EQUAL(w.node0[1], k);
	CU_ASSERT_EQUAL(w.node0[2], 2 * k);
	for (uint32_t c = 0; c < k; c++) {
		CU_ASSERT_EQUAL(w.wave[c], 0);
		CU_ASSERT_EQUAL(w.wave[k + c], 1);
	}
	fast_plan_waves_free(&w);
	fast_plan_waves_free(&w); /* idempotent */
	NEAR(sim_sync(&t, &p, FAST_SIM_SYNC_STEP, &r), pipelined);
	fast_sim_result_free(&r);
	NEAR(sim_sync(&t, &p, FAST_SIM_SYNC_RANK, &r), by_wave);
	CU_ASSERT(r.flows == 2 * k);
	fast_sim_result_free(&r);
	fast_plan_free(&p);
}

static void test_sim__mesh_links(void)
{
	struct fast_topo t = topo_small(1, 3, FAST_UP_MESH);
	struct fast_plan p;
	struct fast_sim_result r;

	/* 0->1 and 0->2 use different links: both at full link rate */
	fast_plan_init(&p, 1, 3, "test");
	step(&p, FAST_TIER_UP);
	add_xfer(&p, 0, 1, 10 * MB);
	add_xfer(&p, 0, 2, 10 * MB);
	NEAR(sim_time(&t, &p, NULL, &r), UP_O + UP_A + 10e6 / UP_BW);
	CU_ASSERT_EQUAL(r.res[0 * 3 + 1].kind, FAST_RES_MESH_LINK);
	CU_ASSERT_EQUAL(r.res[0 * 3 + 1].bytes, 10 * MB);
	fast_sim_result_free(&r);
	fast_plan_free(&p);

	/* a relay 0->1->2 pays two hops over two links; direct 0->2 in
	 * parallel shares nothing with it */
	fast_plan_init(&p, 1, 3, "test");
	step(&p, FAST_TIER_UP);
	CU_ASSERT_FATAL(fast_plan_add_xfer(&p, 0, 1, NULL) == 0);
	CU_ASSERT_FATAL(fast_plan_add_piece(&p, 0, 2, 0, 10 * MB, NULL) == 0);
	step(&p, FAST_TIER_UP);
	CU_ASSERT_FATAL(fast_plan_add_dep(&p, 1, 0, false, NULL) == 0);
	CU_ASSERT_FATAL(fast_plan_add_xfer(&p, 1, 2, NULL) == 0);
	CU_ASSERT_FATAL(fast_plan_add_piece(&p, 0, 2, 0, 10 * MB, NULL) == 0);
	NEAR(sim_time(&t, &p, NULL, &r), 2 * (UP_O + UP_A + 10e6 / UP_BW));
	CU_ASSERT_EQUAL(r.gpu_bytes, 10 * MB); /* delivered once, relay excluded */
	fast_sim_result_free(&r);
	fast_plan_free(&p);
}

static void test_sim__incast_congestion(void)
{
	struct fast_topo t = topo_small(5, 1, FAST_UP_SWITCH);
	struct fast_plan p;
	struct fast_sim_result r;
	struct fast_sim_opts o;
	double off, on;

	t.congestion = (struct fast_congestion){ 1.0, 0.1, 0.5 };
	CU_ASSERT(fabs(fast_incast_factor(&t.congestion, 1) - 1.0) < 1e-12);
	CU_ASSERT(fabs(fast_incast_factor(&t.congestion, 4) - 0.7) < 1e-12);
	CU_ASSERT(fabs(fast_incast_factor(&t.congestion, 40) - 0.5) < 1e-12);
	fast_plan_init(&p, 5, 1, "test");
	step(&p, FAST_TIER_OUT);
	for (uint32_t s = 1; s < 5; s++)
		add_xfer(&p, s, 0, 10 * MB);
	fast_sim_opts_default(&o);
	o.congestion = false;
	off = sim_time(&t, &p, &o, &r);
	NEAR(off, OUT_O + OUT_A + 40e6 / OUT_BW);
	fast_sim_result_free(&r);
	o.congestion = true;
	on = sim_time(&t, &p, &o, &r);
	NEAR(on, OUT_O + OUT_A + 40e6 / (0.7 * OUT_BW));
	fast_sim_result_free(&r);
	fast_plan_free(&p);
}

/* The loss/timeout regime on a hand-computable incast: servers 1 and 2
 * send 10 MB each to server 0 in one step.  Off (rto.us 0, whatever the
 * other two say), they share NIC 0's ingress: O + A + 20 MB / B.  On with
 * rto.senders 1 and 2 x 1 ms: the second flow finds one flow in the
 * ingress and is lost; the first runs alone (1 ms), the second starts
 * 2 ms after the launch and runs alone: O + A + 3 ms.  A one-to-one stage
 * (one sender per NIC, FAST's) never loses. */
static void test_sim__rto_loss_timeout(void)
{
	struct fast_topo t = topo_small(3, 1, FAST_UP_SWITCH);
	struct fast_plan p, q;
	struct fast_sim_result r;
	struct fast_sim_opts o;

	fast_plan_init(&p, 3, 1, "test");
	step(&p, FAST_TIER_OUT);
	add_xfer(&p, 1, 0, 10 * MB);
	add_xfer(&p, 2, 0, 10 * MB);
	t.rto = (struct fast_rto){ 0.0, 0.0, 3.0 }; /* off: us is 0 */
	NEAR(sim_time(&t, &p, NULL, &r), OUT_O + OUT_A + 20e6 / OUT_BW);
	CU_ASSERT_EQUAL(r.rto_losses, 0);
	fast_sim_result_free(&r);
	t.rto = (struct fast_rto){ 1000.0, 1.0, 2.0 };
	NEAR(sim_time(&t, &p, NULL, &r), OUT_O + OUT_A + 2e-3 + 10e6 / OUT_BW);
	CU_ASSERT_EQUAL(r.rto_losses, 1);
	fast_sim_result_free(&r);
	t.rto.senders = 2; /* the buffer holds both */
	NEAR(sim_time(&t, &p, NULL, &r), OUT_O + OUT_A + 20e6 / OUT_BW);
	fast_sim_result_free(&r);
	t.rto.senders = 1;
	fast_sim_opts_default(&o);
	o.congestion = false; /* --no-congestion turns it off too */
	NEAR(sim_time(&t, &p, &o, &r), OUT_O + OUT_A + 20e6 / OUT_BW);
	fast_sim_result_free(&r);

	fast_plan_init(&q, 3, 1, "test");
	step(&q, FAST_TIER_OUT);
	add_xfer(&q, 1, 0, 10 * MB);
	add_xfer(&q, 2, 1, 10 * MB);
	add_xfer(&q, 0, 2, 10 * MB);
	NEAR(sim_time(&t, &q, NULL, &r), OUT_O + OUT_A + 10e6 / OUT_BW);
	CU_ASSERT_EQUAL(r.rto_losses, 0);
	fast_sim_result_free(&r);
	fast_plan_free(&q);
	fast_plan_free(&p);
}

/* The core's share, the term `fast calibrate --fit-run` fits for the
 * testbed's aggregate ceiling: 2 x 2 GPUs, every GPU sends 10 MB to its
 * peer on the other server.  Non-blocking: each flow has its own NICs,
 * 1 ms.  Oversubscription 2: one core of 4 x 10 GB/s / 2 = 20 GB/s
 * carries all four, 5 GB/s each, 2 ms.  A server-local flow does not use
 * it. */
static void test_sim__core_oversubscription(void)
{
	struct fast_topo t = topo_small(2, 2, FAST_UP_SWITCH);
	struct fast_plan p;
	struct fast_sim_result r;

	fast_plan_init(&p, 2, 2, "test");
	step(&p, FAST_TIER_OUT);
	add_xfer(&p, 0, 2, 10 * MB);
	add_xfer(&p, 1, 3, 10 * MB);
	add_xfer(&p, 2, 0, 10 * MB);
	add_xfer(&p, 3, 1, 10 * MB);
	NEAR(sim_time(&t, &p, NULL, &r), OUT_O + OUT_A + 10e6 / OUT_BW);
	fast_sim_result_free(&r);
	t.core_oversub = 2.0;
	NEAR(sim_time(&t, &p, NULL, &r), OUT_O + OUT_A + 10e6 / (OUT_BW / 2));
	fast_sim_result_free(&r);
	fast_plan_free(&p);
}

/* random transfers in a few dependent steps */
static void random_plan(struct fast_plan *p, uint32_t N, uint32_t G, uint64_t seed)
{
	struct fast_rng rng;
	uint32_t ng = N * G;

	fast_rng_seed(&rng, seed);
	fast_plan_init(p, N, G, "test");
	for (uint32_t s = 0; s < 3; s++) {
		step(p, FAST_TIER_OUT);
		if (s)
			CU_ASSERT_FATAL(fast_plan_add_dep(p, s, s - 1, false, NULL) == 0);
		for (uint32_t i = 0; i < ng; i++)
			for (uint32_t j = 0; j < ng; j++)
				if (i / G != j / G && fast_rng_below(&rng, 3) == 0)
					add_xfer(p, i, j, 1 + fast_rng_below(&rng, 8 * MB));
	}
}

static void test_sim__scalable_close_to_exact(void)
{
	struct fast_topo t = topo_small(4, 4, FAST_UP_SWITCH);
	struct fast_plan p;
	struct fast_sim_result r;
	struct fast_sim_opts o;
	double exact, approx;
	uint64_t rec_exact;

	t.congestion = (struct fast_congestion){ 2.0, 0.05, 0.5 };
	for (uint64_t seed = 1; seed <= 3; seed++) {
		random_plan(&p, 4, 4, seed);
		fast_sim_opts_default(&o);
		exact = sim_time(&t, &p, &o, &r);
		rec_exact = r.recomputes;
		fast_sim_result_free(&r);
		o.epsilon = 0.01;
		approx = sim_time(&t, &p, &o, &r);
		CU_ASSERT(fabs(approx - exact) <= 0.01 * exact);
		CU_ASSERT(r.recomputes <= rec_exact);
		fast_sim_result_free(&r);
		fast_plan_free(&p);
	}
}

/* The component-restricted exact allocation against the naive reference
 * (full progressive filling at every event), on chunked random plans and
 * on FAST and pxn plans. */
static void test_sim__components_match_reference(void)
{
	struct fast_topo t = topo_small(4, 4, FAST_UP_SWITCH);
	struct fast_sim_opts o;
	struct fast_sim_result a, b;
	struct fast_plan p;

	t.congestion = (struct fast_congestion){ 2.0, 0.05, 0.5 };
	for (uint64_t seed = 11; seed <= 13; seed++) {
		random_plan(&p, 4, 4, seed);
		p.steps[1].chunks = 3;
		p.steps[2].chunks = 3;
		CU_ASSERT_FATAL(fast_plan_add_step(&p, FAST_STEP_EXPLICIT, FAST_TIER_UP, NULL) >= 0);
		for (uint32_t g = 0; g < 16; g++)
			add_xfer(&p, g, (g / 4) * 4 + (g + 1) % 4, MB + g * 1000);
		fast_sim_opts_default(&o);
		sim_time(&t, &p, &o, &a);
		o.reference = true;
		sim_time(&t, &p, &o, &b);
		CU_ASSERT(fabs(a.time_s - b.time_s) <= 1e-9 * b.time_s);
		for (uint32_t s = 0; s < a.nsteps; s++)
			CU_ASSERT(fabs(a.steps[s].end_s - b.steps[s].end_s) <= 1e-9 * b.time_s);
		CU_ASSERT(a.recomputes == b.recomputes);
		fast_sim_result_free(&a);
		fast_sim_result_free(&b);
		fast_plan_free(&p);
	}
	{
		struct fast_topo h;
		struct fast_limits lim;
		struct fast_rng rng;
		uint32_t ng;
		uint64_t *D;
		const char *algos[] = { "fast", "pxn", "hier", "fanout", "nccl" };

		fast_limits_default(&lim);
		CU_ASSERT_FATAL(fast_topo_preset("h200", 4, 4, &lim, &h, NULL) == 0);
		ng = fast_topo_ngpus(&h);
		D = calloc((size_t)ng * ng, sizeof *D);
		CU_ASSERT_FATAL(D != NULL);
		fast_rng_seed(&rng, 5);
		for (uint32_t i = 0; i < ng * ng; i++)
			D[i] = (i % (ng + 1) == 0) ? 0 : 512 * (1 + fast_rng_below(&rng, 2048));
		for (int k = 0; k < 5; k++) {
			struct fast_algo_opts ao;
			fast_algo_opts_default(&ao);
			struct fast_matrix mx = fast_matrix_of(D, fast_topo_ngpus(&h));
			CU_ASSERT_FATAL(fast_compile(algos[k], &h, &mx, &ao, &p, NULL) == 0);
			fast_sim_opts_default(&o);
			sim_time(&h, &p, &o, &a);
			o.reference = true;
			sim_time(&h, &p, &o, &b);
			CU_ASSERT(fabs(a.time_s - b.time_s) <= 1e-9 * b.time_s);
			for (uint32_t s = 0; s < a.nsteps; s++)
				CU_ASSERT(fabs(a.steps[s].end_s - b.steps[s].end_s) <= 1e-9 * b.time_s);
			fast_sim_result_free(&a);
			fast_sim_result_free(&b);
			fast_plan_free(&p);
		}
		free(D);
	}
}

/* The full exact passes of a fanout (one big component): each reuses the
 * prefix of the last pass that a completion leaves as it was, and fills
 * by resource levels.  Against the naive reference (every pass from
 * scratch): the same completion time of every step and transfer count,
 * with and without incast, on uniform-ish and skewed sizes; and the
 * replay really happened. */
static void test_sim__replay_matches_reference(void)
{
	for (int cong = 0; cong < 2; cong++) {
		for (uint64_t seed = 21; seed <= 22; seed++) {
			struct fast_topo t = topo_small(6, 4, FAST_UP_SWITCH);
			struct fast_sim_opts o;
			struct fast_sim_result a, b;
			struct fast_plan p;
			struct fast_rng rng;
			uint32_t ng = 24;

			if (cong)
				t.congestion = (struct fast_congestion){ 3.0, 0.04, 0.4 };
			fast_rng_seed(&rng, seed);
			fast_plan_init(&p, 6, 4, "test");
			step(&p, FAST_TIER_OUT);
			for (uint32_t i = 0; i < ng; i++)
				for (uint32_t j = 0; j < ng; j++) {
					uint64_t w = 1 + fast_rng_below(&rng, 1024);
					if (i / 4 == j / 4)
						continue;
					if (seed == 22 && j % 5 == 0)
						w *= 8; /* hot receivers */
					add_xfer(&p, i, j, 4096 * w);
				}
			fast_sim_opts_default(&o);
			o.congestion = cong;
			sim_time(&t, &p, &o, &a);
			o.reference = true;
			sim_time(&t, &p, &o, &b);
			CU_ASSERT(a.replayed > 0);
			CU_ASSERT(b.replayed == 0);
			CU_ASSERT(fabs(a.time_s - b.time_s) <= 1e-12 * b.time_s);
			CU_ASSERT(a.events == b.events);
			for (uint32_t s = 0; s < a.nsteps; s++)
				CU_ASSERT(fabs(a.steps[s].end_s - b.steps[s].end_s) <= 1e-12 * b.time_s);
			fast_sim_result_free(&a);
			fast_sim_result_free(&b);
			fast_plan_free(&p);
		}
	}
}

static void test_sim__deterministic(void)
{
	struct fast_topo t = topo_small(4, 4, FAST_UP_SWITCH);
	struct fast_plan p;
	struct fast_sim_result a, b;

	random_plan(&p, 4, 4, 7);
	sim_time(&t, &p, NULL, &a);
	sim_time(&t, &p, NULL, &b);
	CU_ASSERT(a.time_s == b.time_s);
	CU_ASSERT(a.events == b.events);
	for (uint32_t s = 0; s < a.nsteps; s++)
		CU_ASSERT(a.steps[s].end_s == b.steps[s].end_s);
	fast_sim_result_free(&a);
	fast_sim_result_free(&b);
	fast_plan_free(&p);
}

static void test_sim__timeline_writers(void)
{
	struct fast_topo t = topo_small(2, 2, FAST_UP_SWITCH);
	struct fast_plan p;
	struct fast_sim_result r;
	struct fast_sim_opts o;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	fast_plan_init(&p, 2, 2, "test");
	step(&p, FAST_TIER_OUT);
	add_xfer(&p, 0, 2, 10 * MB);
	add_xfer(&p, 1, 3, 10 * MB);
	step(&p, FAST_TIER_UP);
	CU_ASSERT_FATAL(fast_plan_add_dep(&p, 1, 0, false, NULL) == 0);
	add_xfer(&p, 2, 3, 1 * MB);
	fast_sim_opts_default(&o);
	o.timeline = true;
	sim_time(&t, &p, &o, &r);
	/* step 0 on 4 NIC resources, step 1 on 2 scale-up ports */
	CU_ASSERT_EQUAL(r.nact, 6);
	f = open_memstream(&buf, &len);
	CU_ASSERT_FATAL(f != NULL);
	CU_ASSERT(fast_sim_write_trace(&t, &r, f, NULL) == 0);
	fclose(f);
	CU_ASSERT(strstr(buf, "\"traceEvents\"") != NULL);
	CU_ASSERT(strstr(buf, "\"ph\":\"X\"") != NULL);
	CU_ASSERT(strstr(buf, "NIC 0 egress") != NULL);
	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	CU_ASSERT(fast_sim_write_svg(&t, &r, "t", f, NULL) == 0);
	fclose(f);
	CU_ASSERT(strncmp(buf, "<svg", 4) == 0);
	CU_ASSERT(strstr(buf, "server 1 scale-up") != NULL);
	/* one scale-out step: a server's NICs share one row, named by them */
	CU_ASSERT(strstr(buf, ">server 0 NICs 0-1<") != NULL);
	CU_ASSERT(strstr(buf, ">server 0 NIC 1<") == NULL);
	CU_ASSERT(strstr(buf, "</svg>") != NULL);
	free(buf);
	fast_sim_result_free(&r);
	fast_plan_free(&p);
}

/* Steps that overlap on a server's NICs (a baseline's concurrent steps)
 * get one Gantt row per NIC, labelled with it. */
static void test_sim__svg_rows_per_nic(void)
{
	struct fast_topo t = topo_small(2, 2, FAST_UP_SWITCH);
	struct fast_plan p;
	struct fast_sim_result r;
	struct fast_sim_opts o;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	fast_plan_init(&p, 2, 2, "test");
	step(&p, FAST_TIER_OUT);
	add_xfer(&p, 0, 2, 10 * MB);
	step(&p, FAST_TIER_OUT);
	add_xfer(&p, 1, 3, 10 * MB);
	fast_sim_opts_default(&o);
	o.timeline = true;
	sim_time(&t, &p, &o, &r);
	f = open_memstream(&buf, &len);
	CU_ASSERT_FATAL(f != NULL);
	CU_ASSERT(fast_sim_write_svg(&t, &r, "t", f, NULL) == 0);
	fclose(f);
	CU_ASSERT(strstr(buf, ">server 0 NIC 0<") != NULL);
	CU_ASSERT(strstr(buf, ">server 1 NIC 1<") != NULL);
	CU_ASSERT(strstr(buf, "NICs 0-1") == NULL);
	CU_ASSERT(strstr(buf, "a row per NIC") != NULL);
	free(buf);
	fast_sim_result_free(&r);
	fast_plan_free(&p);
}

static void test_sim__rejects_bad_plans(void)
{
	struct fast_topo t = topo_small(2, 2, FAST_UP_SWITCH);
	struct fast_plan p;
	struct fast_sim_result r;
	struct fast_err err = { 0 };

	/* scale-up between servers */
	fast_plan_init(&p, 2, 2, "test");
	step(&p, FAST_TIER_UP);
	add_xfer(&p, 0, 2, MB);
	CU_ASSERT_EQUAL(unit_sim(&t, &p, NULL, NULL, &r, &err), FAST_EINPUT);
	CU_ASSERT(strstr(err.msg, "step 0") != NULL);
	fast_plan_free(&p);

	/* wrong dimensions */
	fast_plan_init(&p, 4, 2, "test");
	CU_ASSERT_EQUAL(unit_sim(&t, &p, NULL, NULL, &r, &err), FAST_EINPUT);
	fast_plan_free(&p);
}

/* Property: for every compiler, on seeded random traffic, the plan is
 * correct and its simulated time is at least the LP bound. */
static void test_sim__never_beats_lp_bound(void)
{
	const char *presets[] = { "h200", "mi300x-100g" };
	struct fast_rng rng;

	fast_rng_seed(&rng, 42);
	for (int pi = 0; pi < 2; pi++) {
		struct fast_topo t;
		struct fast_limits lim;
		struct fast_err err = { 0 };
		uint32_t ng;
		uint64_t *D;
		struct fast_bound b;

		fast_limits_default(&lim);
		CU_ASSERT_FATAL(fast_topo_preset(presets[pi], 3, 4, &lim, &t, &err) == 0);
		ng = fast_topo_ngpus(&t);
		D = calloc((size_t)ng * ng, sizeof *D);
		CU_ASSERT_FATAL(D != NULL);
		for (int trial = 0; trial < 3; trial++) {
			for (uint32_t i = 0; i < ng * ng; i++)
				D[i] = (i % (ng + 1) == 0) ? 0 : 512 * fast_rng_below(&rng, 4096);
			CU_ASSERT_FATAL(unit_bound(&t, D, false, &b, &err) == 0);
			for (const struct fast_algo *al = fast_algos; al->name; al++) {
				struct fast_algo_opts ao;
				struct fast_plan p;
				struct fast_sim_result r;
				fast_algo_opts_default(&ao);
				struct fast_matrix mx = fast_matrix_of(D, fast_topo_ngpus(&t));
				if (fast_compile(al->name, &t, &mx, &ao, &p, &err) != 0) {
					fprintf(stderr, "compile %s: %s\n", al->name, err.msg);
					CU_FAIL("compile");
					continue;
				}
				/* explicit, and as the preset's implementation says */
				for (int m = FAST_SIM_SYNC_STEP; m <= FAST_SIM_SYNC_IMPL; m++) {
					sim_sync(&t, &p, (enum fast_sim_sync)m, &r);
					/* the bound with its latency floor, which the
					 * implementations' steps in flight must keep */
					if (!(r.time_s >= b.bound_s * (1 - 1e-9)))
						fprintf(stderr, "%s on %s (sync %d): sim %.9g < bound %.9g\n", al->name,
							presets[pi], m, r.time_s, b.bound_s);
					CU_ASSERT(r.time_s >= b.bound_s * (1 - 1e-9));
					fast_sim_result_free(&r);
				}
				fast_plan_free(&p);
			}
		}
		free(D);
	}
}

/* --- token plans ------------------------------------------------------ */

/* Prove token plan p correct for matrix m, simulate it (REDIST expands
 * over its groups) and return the time; the bound of m too. */
static double tok_sim(const struct fast_topo *t, const struct fast_plan *p,
		      const struct fast_matrix *m, struct fast_sim_result *r, double *bound_s)
{
	struct fast_bound b;
	struct fast_err err = { 0 };
	int rc = unit_check_matrix(p, t, m, &err);

	if (rc != 0)
		fprintf(stderr, "check: %s\n", err.msg);
	CU_ASSERT_FATAL(rc == 0);
	rc = unit_sim(t, p, m, NULL, r, &err);
	if (rc != 0)
		fprintf(stderr, "sim: %s\n", err.msg);
	CU_ASSERT_FATAL(rc == 0);
	CU_ASSERT_FATAL(fast_bound_compute(t, m, false, &b, &err) == 0);
	*bound_s = b.lp_s;
	return r->time_s;
}

static void tok_xfer(struct fast_plan *p, uint32_t from, uint32_t to, uint32_t g, uint32_t mask,
		     uint64_t len)
{
	CU_ASSERT_FATAL(fast_plan_add_xfer(p, from, to, NULL) == 0);
	CU_ASSERT_FATAL(fast_plan_add_piece(p, g, mask, 0, len, NULL) == 0);
}

/* A sum of n inputs of L bytes moves (n + 1) L bytes over the GPU's
 * reduction resource at scale-up bandwidth.  1 x 4, no latency or
 * overheads; combine group (GPU 0, {1, 2, 3}), L = 100 MB:
 *   step 0 up   GPU 2 -> 1 contribution {2}             L / Bu = 1 ms
 *   step 1 sum  at GPU 1: {1} + {2}                     3L / Bu = 3 ms
 *   step 2 up   GPU 1 -> 0 {1,2} and GPU 3 -> 0 {3}     2L / Bu = 2 ms
 * (the two share GPU 0's ingress port): 6 ms. */
static void test_sim__reduce_costs_memory_bytes(void)
{
	struct fast_topo t = topo_small(1, 4, FAST_UP_SWITCH);
	struct fast_traffic tr;
	struct fast_plan p;
	struct fast_sim_result r;
	double bound_s;
	int m1, m2, m12, m3;
	char name[64];

	t.up.latency_us = t.up.step_overhead_us = 0;
	tok_init(&tr, 4, FAST_TRAFFIC_COMBINE, 100 * MB);
	tok_group(&tr, 0, 1, 3, (const uint32_t[]){ 1, 2, 3 });
	tok_done(&tr);
	fast_plan_init(&p, 1, 4, "test");
	p.kind = FAST_TRAFFIC_COMBINE;
	m1 = fast_plan_add_mask(&p, 0x1, NULL);
	m2 = fast_plan_add_mask(&p, 0x2, NULL);
	m12 = fast_plan_add_mask(&p, 0x3, NULL);
	m3 = fast_plan_add_mask(&p, 0x4, NULL);
	CU_ASSERT_FATAL(m1 >= 0 && m2 >= 0 && m12 >= 0 && m3 >= 0);
	step(&p, FAST_TIER_UP);
	tok_xfer(&p, 2, 1, 0, (uint32_t)m2, 100 * MB);
	CU_ASSERT_FATAL(fast_plan_add_step(&p, FAST_STEP_REDUCE, FAST_TIER_UP, NULL) == 1);
	CU_ASSERT_FATAL(fast_plan_add_dep(&p, 1, 0, false, NULL) == 0);
	tok_xfer(&p, 1, 1, 0, (uint32_t)m1, 100 * MB);
	CU_ASSERT_FATAL(fast_plan_add_piece(&p, 0, (uint32_t)m2, 0, 100 * MB, NULL) == 0);
	step(&p, FAST_TIER_UP);
	CU_ASSERT_FATAL(fast_plan_add_dep(&p, 2, 1, false, NULL) == 0);
	tok_xfer(&p, 1, 0, 0, (uint32_t)m12, 100 * MB);
	tok_xfer(&p, 3, 0, 0, (uint32_t)m3, 100 * MB);

	tok_sim(&t, &p, &tr.m[0], &r, &bound_s);
	NEAR(r.time_s, 6e-3);
	NEAR(r.steps[1].end_s - r.steps[1].start_s, 3e-3);
	CU_ASSERT_EQUAL(r.steps[1].bytes, 300 * MB);
	/* without the traffic, the size is what a GPU sends or receives
	 * between GPUs (sums excluded): GPU 0 receives 2L */
	CU_ASSERT_EQUAL(r.gpu_bytes, 200 * MB);
	{
		const struct fast_sim_res *red = &r.res[r.nres - 4 + 1];
		CU_ASSERT_EQUAL(red->kind, FAST_RES_GPU_REDUCE);
		CU_ASSERT_EQUAL(red->gpu, 1);
		CU_ASSERT_EQUAL(red->bytes, 300 * MB);
		CU_ASSERT_STRING_EQUAL(fast_sim_res_name(&t, red, name, sizeof name), "s0 gpu1 reduce");
	}
	CU_ASSERT(r.time_s >= bound_s);
	CU_ASSERT(bound_s > 0);
	fast_sim_result_free(&r);
	fast_plan_free(&p);
	fast_traffic_free(&tr);
}

/* A dispatch token relayed through a third server (A -> B -> C), B a
 * destination and not: the token bound counts A's egress, B's and C's
 * ingress once, and the relayed plans take at least that. */
static void test_sim__relayed_token_plans_above_bound(void)
{
	struct fast_topo t = topo_small(3, 2, FAST_UP_SWITCH);
	const uint64_t L = 50 * MB;

	for (int through_dest = 0; through_dest < 2; through_dest++) {
		struct fast_traffic tr;
		struct fast_plan p;
		struct fast_sim_result r;
		double bound_s;

		tok_init(&tr, 6, FAST_TRAFFIC_DISPATCH, L);
		if (through_dest)
			tok_group(&tr, 0, 1, 2, (const uint32_t[]){ 2, 4 });
		else
			tok_group(&tr, 0, 1, 1, (const uint32_t[]){ 4 });
		tok_done(&tr);
		fast_plan_init(&p, 3, 2, "test");
		p.kind = FAST_TRAFFIC_DISPATCH;
		step(&p, FAST_TIER_OUT);
		tok_xfer(&p, 0, 2, 0, 0, L);
		step(&p, FAST_TIER_OUT);
		CU_ASSERT_FATAL(fast_plan_add_dep(&p, 1, 0, false, NULL) == 0);
		tok_xfer(&p, 2, 4, 0, 0, L);
		tok_sim(&t, &p, &tr.m[0], &r, &bound_s);
		/* two hops of L over 10 GB/s NICs, each after its step's
		 * overhead and latency */
		NEAR(r.time_s, 2 * ((double)L / OUT_BW + OUT_A + OUT_O));
		CU_ASSERT(r.time_s >= bound_s);
		/* L leaves server 0 over 2 NICs at best (relayed over fast
		 * scale-up): half of one hop */
		CU_ASSERT(bound_s >= (double)L / (2 * OUT_BW) * (1 - 1e-9));
		fast_sim_result_free(&r);
		fast_plan_free(&p);
		fast_traffic_free(&tr);
	}
}

/* A combine whose contributions from server C are relayed through B and
 * reduced there with B's before one value crosses to A; and the two
 * example token plans (rail stages, redistribution over groups, a partial
 * sum).  Simulated time >= token bound for each. */
static void test_sim__reduced_token_plans_above_bound(void)
{
	struct fast_topo t = topo_small(3, 2, FAST_UP_SWITCH);
	const uint64_t L = 20 * MB;
	struct fast_traffic tr;
	struct fast_plan p;
	struct fast_sim_result r;
	double bound_s;
	int m0, m1, m2, m012;

	/* group (GPU 0, {2, 3, 4}): bits 0, 1, 2 = GPUs 2, 3, 4 */
	tok_init(&tr, 6, FAST_TRAFFIC_COMBINE, L);
	tok_group(&tr, 0, 1, 3, (const uint32_t[]){ 2, 3, 4 });
	tok_done(&tr);
	fast_plan_init(&p, 3, 2, "test");
	p.kind = FAST_TRAFFIC_COMBINE;
	m0 = fast_plan_add_mask(&p, 0x1, NULL);
	m1 = fast_plan_add_mask(&p, 0x2, NULL);
	m2 = fast_plan_add_mask(&p, 0x4, NULL);
	m012 = fast_plan_add_mask(&p, 0x7, NULL);
	CU_ASSERT_FATAL(m0 >= 0 && m1 >= 0 && m2 >= 0 && m012 >= 0);
	step(&p, FAST_TIER_OUT);
	tok_xfer(&p, 4, 2, 0, (uint32_t)m2, L);
	step(&p, FAST_TIER_UP);
	tok_xfer(&p, 3, 2, 0, (uint32_t)m1, L);
	CU_ASSERT_FATAL(fast_plan_add_step(&p, FAST_STEP_REDUCE, FAST_TIER_UP, NULL) == 2);
	CU_ASSERT_FATAL(fast_plan_add_dep(&p, 2, 0, false, NULL) == 0);
	CU_ASSERT_FATAL(fast_plan_add_dep(&p, 2, 1, false, NULL) == 0);
	tok_xfer(&p, 2, 2, 0, (uint32_t)m0, L);
	CU_ASSERT_FATAL(fast_plan_add_piece(&p, 0, (uint32_t)m1, 0, L, NULL) == 0);
	CU_ASSERT_FATAL(fast_plan_add_piece(&p, 0, (uint32_t)m2, 0, L, NULL) == 0);
	step(&p, FAST_TIER_OUT);
	CU_ASSERT_FATAL(fast_plan_add_dep(&p, 3, 2, false, NULL) == 0);
	tok_xfer(&p, 2, 0, 0, (uint32_t)m012, L);
	tok_sim(&t, &p, &tr.m[0], &r, &bound_s);
	/* out hop, then the sum of 3 inputs (4L over 100 GB/s), then out */
	NEAR(r.time_s, 2 * ((double)L / OUT_BW + OUT_A + OUT_O) + 4.0 * (double)L / UP_BW + UP_A + UP_O);
	CU_ASSERT(r.time_s >= bound_s);
	CU_ASSERT(bound_s > 0);
	fast_sim_result_free(&r);
	fast_plan_free(&p);
	fast_traffic_free(&tr);

	for (int combine = 0; combine < 2; combine++) {
		struct fast_topo t2 = topo_small(2, 2, FAST_UP_SWITCH);
		if (combine)
			tok_combine_example(&tr, &p);
		else
			tok_dispatch_example(&tr, &p);
		tok_sim(&t2, &p, &tr.m[0], &r, &bound_s);
		CU_ASSERT(r.time_s >= bound_s);
		CU_ASSERT(bound_s > 0);
		fast_sim_result_free(&r);
		fast_plan_free(&p);
		fast_traffic_free(&tr);
	}
}

/* A step moving bytes [off, off+len) of group g (mask index mk) from one
 * GPU to another, after step dep (-1: none); returns its id. */
static int tok_move(struct fast_plan *p, uint32_t G, uint32_t from, uint32_t to, uint32_t g,
		    uint32_t mk, uint64_t off, uint64_t len, int dep)
{
	int s = step(p, from / G == to / G ? FAST_TIER_UP : FAST_TIER_OUT);
	if (dep >= 0)
		CU_ASSERT_FATAL(fast_plan_add_dep(p, (uint32_t)s, (uint32_t)dep, false, NULL) == 0);
	CU_ASSERT_FATAL(fast_plan_add_xfer(p, from, to, NULL) == 0);
	CU_ASSERT_FATAL(fast_plan_add_piece(p, g, mk, off, len, NULL) == 0);
	return s;
}

/* A GPU other than a and b, off both their servers when there is one
 * (a third server to relay through), at random. */
static uint32_t tok_relay(struct fast_rng *rng, uint32_t N, uint32_t G, uint32_t a, uint32_t b)
{
	uint32_t ng = N * G;
	for (int tries = 0; tries < 64; tries++) {
		uint32_t r = (uint32_t)fast_rng_below(rng, ng);
		if (r != a && r != b && (N < 3 || (r / G != a / G && r / G != b / G)))
			return r;
	}
	return (a + 1) % ng == b ? (a + 2) % ng : (a + 1) % ng;
}

/* Random dispatch plan: each half of each group travels a random tree from
 * its source, one transfer a step, every destination reached once, some
 * hops relayed through a GPU that is no destination (a third server when
 * there is one), some copies replicated from a destination. */
static void tok_random_dispatch(struct fast_rng *rng, const struct fast_matrix *m, uint32_t N,
				uint32_t G, struct fast_plan *p)
{
	fast_plan_init(p, N, G, "random");
	p->kind = FAST_TRAFFIC_DISPATCH;
	for (uint32_t g = 0; g < m->ngroups; g++) {
		const struct fast_group *gr = &m->groups[g];
		uint64_t b = fast_group_bytes(m, g), cut = b / 2;
		for (int half = 0; half < 2; half++) {
			uint64_t off = half ? cut : 0, len = half ? b - cut : cut;
			uint32_t holder[FAST_GROUP_MAX_DESTS + 1];
			int at[FAST_GROUP_MAX_DESTS + 1], nh = 1;
			if (!len)
				continue;
			holder[0] = gr->src;
			at[0] = -1;
			for (uint32_t k = 0; k < gr->ndst; k++) {
				uint32_t d = m->dsts[gr->dst0 + k];
				uint32_t h = (uint32_t)fast_rng_below(rng, (uint64_t)nh);
				int s = at[h];
				uint32_t from = holder[h];
				if (d == gr->src)
					continue; /* the local copy is implicit */
				if (fast_rng_below(rng, 3) == 0) {
					uint32_t r = tok_relay(rng, N, G, from, d);
					bool is_dest = false;
					for (uint32_t q = 0; q < gr->ndst; q++)
						is_dest |= m->dsts[gr->dst0 + q] == r;
					if (!is_dest) {
						s = tok_move(p, G, from, r, g, 0, off, len, s);
						from = r;
					}
				}
				s = tok_move(p, G, from, d, g, 0, off, len, s);
				holder[nh] = d;
				at[nh++] = s;
			}
		}
	}
}

/* Random combine plan: per group, values (GPU, mask, step) start as the
 * contributions off src; random pairs meet (one moved to the other's GPU,
 * now and then through a relay) and are summed there; what is left goes to
 * src.  src's own contribution never moves. */
static void tok_random_combine(struct fast_rng *rng, const struct fast_matrix *m, uint32_t N,
			       uint32_t G, struct fast_plan *p)
{
	fast_plan_init(p, N, G, "random");
	p->kind = FAST_TRAFFIC_COMBINE;
	for (uint32_t g = 0; g < m->ngroups; g++) {
		const struct fast_group *gr = &m->groups[g];
		uint64_t b = fast_group_bytes(m, g);
		uint32_t gpu[FAST_GROUP_MAX_DESTS];
		uint64_t mask[FAST_GROUP_MAX_DESTS];
		int at[FAST_GROUP_MAX_DESTS];
		uint32_t n = 0;

		for (uint32_t k = 0; k < gr->ndst; k++)
			if (m->dsts[gr->dst0 + k] != gr->src) {
				gpu[n] = m->dsts[gr->dst0 + k];
				mask[n] = UINT64_C(1) << k;
				at[n++] = -1;
			}
		while (n >= 2 && fast_rng_below(rng, 4) != 0) {
			uint32_t x = (uint32_t)fast_rng_below(rng, n), y = (uint32_t)fast_rng_below(rng, n - 1);
			int mx, my, mxy, s;
			if (y >= x)
				y++;
			if (gpu[x] != gpu[y]) {
				uint32_t from = gpu[x];
				mx = fast_plan_add_mask(p, mask[x], NULL);
				CU_ASSERT_FATAL(mx >= 0);
				if (fast_rng_below(rng, 3) == 0) {
					uint32_t r = tok_relay(rng, N, G, from, gpu[y]);
					if (r != gr->src) {
						at[x] = tok_move(p, G, from, r, g, (uint32_t)mx, 0, b, at[x]);
						from = r;
					}
				}
				at[x] = tok_move(p, G, from, gpu[y], g, (uint32_t)mx, 0, b, at[x]);
				gpu[x] = gpu[y];
			}
			mx = fast_plan_add_mask(p, mask[x], NULL);
			my = fast_plan_add_mask(p, mask[y], NULL);
			mxy = fast_plan_add_mask(p, mask[x] | mask[y], NULL);
			CU_ASSERT_FATAL(mx >= 0 && my >= 0 && mxy >= 0);
			s = fast_plan_add_step(p, FAST_STEP_REDUCE, FAST_TIER_UP, NULL);
			CU_ASSERT_FATAL(s >= 0);
			if (at[x] >= 0)
				CU_ASSERT_FATAL(fast_plan_add_dep(p, (uint32_t)s, (uint32_t)at[x], false, NULL) == 0);
			if (at[y] >= 0 && at[y] != at[x])
				CU_ASSERT_FATAL(fast_plan_add_dep(p, (uint32_t)s, (uint32_t)at[y], false, NULL) == 0);
			CU_ASSERT_FATAL(fast_plan_add_xfer(p, gpu[y], gpu[y], NULL) == 0);
			CU_ASSERT_FATAL(fast_plan_add_piece(p, g, (uint32_t)mx, 0, b, NULL) == 0);
			CU_ASSERT_FATAL(fast_plan_add_piece(p, g, (uint32_t)my, 0, b, NULL) == 0);
			mask[y] |= mask[x];
			at[y] = s;
			gpu[x] = gpu[n - 1];
			mask[x] = mask[n - 1];
			at[x] = at[n - 1];
			n--;
		}
		for (uint32_t v = 0; v < n; v++) {
			int mv = fast_plan_add_mask(p, mask[v], NULL);
			CU_ASSERT_FATAL(mv >= 0);
			tok_move(p, G, gpu[v], gr->src, g, (uint32_t)mv, 0, b, at[v]);
		}
	}
}

/* Deduplicating plans, one step a phase.  Dispatch: each group crosses
 * once to every remote server that needs it, entering at one of its
 * destinations there (in turn), which copies it to the others over
 * scale-up; local destinations get theirs from src.  Combine, mirrored:
 * the contributions of each remote server are gathered at one of them,
 * summed there and cross once to src; local ones go straight to src. */
static void tok_dedup_plan(const struct fast_matrix *m, uint32_t N, uint32_t G,
			   struct fast_plan *p)
{
	bool combine = m->kind == FAST_TRAFFIC_COMBINE;
	uint32_t turn;

	fast_plan_init(p, N, G, "dedup");
	p->kind = m->kind;
	/* steps = phases, each after the one before; dispatch: 0 out
	 * (crossings), 1 up (copies); combine: 0 up (gathers), 1 reduce,
	 * 2 out (crossings) */
	for (int phase = 0; phase < (combine ? 3 : 2); phase++) {
		int s = phase == 1 && combine ? fast_plan_add_step(p, FAST_STEP_REDUCE, FAST_TIER_UP, NULL)
					      : step(p, (phase == 0) == combine ? FAST_TIER_UP : FAST_TIER_OUT);
		CU_ASSERT_FATAL(s == phase);
		if (phase > 0)
			CU_ASSERT_FATAL(fast_plan_add_dep(p, (uint32_t)phase, (uint32_t)phase - 1, false,
							  NULL) == 0);
		turn = 0;
		for (uint32_t g = 0; g < m->ngroups; g++) {
			const struct fast_group *gr = &m->groups[g];
			uint64_t b = fast_group_bytes(m, g);
			for (uint32_t k0 = 0; k0 < gr->ndst;) {
				uint32_t B = m->dsts[gr->dst0 + k0] / G, k1 = k0, e, n;
				uint64_t all = 0;
				while (k1 < gr->ndst && m->dsts[gr->dst0 + k1] / G == B) {
					all |= UINT64_C(1) << k1;
					k1++;
				}
				n = k1 - k0;
				e = k0 + turn++ % n; /* the entry (exit) GPU of server B */
				for (uint32_t k = k0; k < k1; k++) {
					uint32_t d = m->dsts[gr->dst0 + k];
					int mk = combine ? fast_plan_add_mask(p, UINT64_C(1) << k, NULL) : 0;
					CU_ASSERT_FATAL(mk >= 0);
					if (d == gr->src)
						continue;
					if (B == gr->src / G) {
						/* local: straight from src / to src */
						if (phase == (combine ? 0 : 1))
							tok_xfer(p, combine ? d : gr->src, combine ? gr->src : d,
								 g, (uint32_t)mk, b);
					} else if (k == e) {
						if (!combine && phase == 0)
							tok_xfer(p, gr->src, d, g, 0, b);
						if (combine && phase == 1 && n > 1) {
							CU_ASSERT_FATAL(fast_plan_add_xfer(p, d, d, NULL) == 0);
							for (uint32_t q = k0; q < k1; q++) {
								int mq = fast_plan_add_mask(p, UINT64_C(1) << q, NULL);
								CU_ASSERT_FATAL(mq >= 0);
								CU_ASSERT_FATAL(fast_plan_add_piece(p, g, (uint32_t)mq, 0, b,
												    NULL) == 0);
							}
						}
						if (combine && phase == 2) {
							int ma = fast_plan_add_mask(p, all, NULL);
							CU_ASSERT_FATAL(ma >= 0);
							tok_xfer(p, d, gr->src, g, (uint32_t)ma, b);
						}
					} else if (phase == (combine ? 0 : 1)) {
						uint32_t de = m->dsts[gr->dst0 + e];
						tok_xfer(p, combine ? d : de, combine ? de : d, g, (uint32_t)mk, b);
					}
				}
				k0 = k1;
			}
		}
	}
}

/* Property: random checker-accepted token plans -- relays through third
 * servers, replication from destinations, partial sums anywhere -- on
 * seeded random token traffic never simulate below the token bound, on
 * fabrics where scale-up is fast, as slow as a NIC, or slower, without
 * latency or overheads (the bound's own model; with one GPU a server
 * some of them meet it exactly, so a bound too high fails here). */
static void test_sim__random_token_plans_above_bound(void)
{
	struct fast_rng rng;
	int runs = 0;

	fast_rng_seed(&rng, 1515);
	for (int trial = 0; trial < 48; trial++) {
		uint32_t N = 2 + (uint32_t)fast_rng_below(&rng, 3), G = 1 + (uint32_t)fast_rng_below(&rng, 4);
		uint32_t ng = N * G;
		bool combine = trial % 2, mesh = (trial / 2) % 2;
		struct fast_topo t = topo_small(N, G, mesh ? FAST_UP_MESH : FAST_UP_SWITCH);
		struct fast_traffic tr;
		struct fast_plan p;
		struct fast_sim_result r;
		double bound_s;

		t.up.latency_us = t.up.step_overhead_us = 0;
		t.out.latency_us = t.out.step_overhead_us = 0;
		t.up.bw_GBps = (double[]){ 100.0, 10.0, 4.0, 1.0 }[(trial / 4) % 4];
		tok_init(&tr, ng, combine ? FAST_TRAFFIC_COMBINE : FAST_TRAFFIC_DISPATCH, 1000);
		tok_random_groups(&tr, &rng, 2 * ng, 8, G, 5000);
		tok_done(&tr);
		for (int dedup = 0; dedup < 2; dedup++) {
			if (dedup)
				tok_dedup_plan(&tr.m[0], N, G, &p);
			else if (combine)
				tok_random_combine(&rng, &tr.m[0], N, G, &p);
			else
				tok_random_dispatch(&rng, &tr.m[0], N, G, &p);
			tok_sim(&t, &p, &tr.m[0], &r, &bound_s);
			if (!(r.time_s >= bound_s * (1 - 1e-9)))
				fprintf(stderr, "trial %d (%s): simulated %.9g s < token bound %.9g s\n",
					trial, dedup ? "dedup" : "random", r.time_s, bound_s);
			CU_ASSERT(r.time_s >= bound_s * (1 - 1e-9));
			runs++;
			fast_sim_result_free(&r);
			fast_plan_free(&p);
		}
		fast_traffic_free(&tr);
	}
	CU_ASSERT_EQUAL(runs, 2 * 48);
}

/* Property: every algorithm's plan for random token traffic (fast and
 * hier deduplicating over the groups, the others and --dedup gpu on the
 * per-GPU bytes) is proved by the checker and simulates at or above the
 * token bound, on the presets' fabrics. */
static void test_sim__token_schedules_above_bound(void)
{
	const char *presets[] = { "h200", "mi300x-100g" };
	struct fast_rng rng;
	int runs = 0;

	fast_rng_seed(&rng, 77);
	for (int pi = 0; pi < 2; pi++)
		for (int combine = 0; combine < 2; combine++) {
			struct fast_topo t;
			struct fast_limits lim;
			struct fast_err err = { 0 };
			struct fast_traffic tr;
			uint32_t ng, G = 4;

			fast_limits_default(&lim);
			CU_ASSERT_FATAL(fast_topo_preset(presets[pi], 3, G, &lim, &t, &err) == 0);
			ng = fast_topo_ngpus(&t);
			tok_init(&tr, ng, combine ? FAST_TRAFFIC_COMBINE : FAST_TRAFFIC_DISPATCH, 4096);
			tok_random_groups(&tr, &rng, 6 * ng, 6, G, 400);
			tok_done(&tr);
			for (const struct fast_algo *al = fast_algos; al->name; al++)
				for (int dedup = 0; dedup < (al->compile_tokens ? 2 : 1); dedup++) {
					struct fast_algo_opts ao;
					struct fast_plan p;
					struct fast_sim_result r;
					double bound_s;
					fast_algo_opts_default(&ao);
					ao.dedup = dedup ? FAST_DEDUP_GPU : FAST_DEDUP_SERVER;
					if (fast_compile(al->name, &t, &tr.m[0], &ao, &p, &err) != 0) {
						fprintf(stderr, "compile %s: %s\n", al->name, err.msg);
						CU_FAIL("compile");
						continue;
					}
					tok_sim(&t, &p, &tr.m[0], &r, &bound_s);
					if (!(r.time_s >= bound_s * (1 - 1e-9)))
						fprintf(stderr, "%s (%s) on %s: sim %.9g < token bound %.9g\n",
							al->name, p.options, presets[pi], r.time_s, bound_s);
					CU_ASSERT(r.time_s >= bound_s * (1 - 1e-9));
					runs++;
					fast_sim_result_free(&r);
					fast_plan_free(&p);
				}
			fast_traffic_free(&tr);
		}
	CU_ASSERT(runs >= 2 * 2 * 8); /* six algorithms, two with both modes */
}

UNIT_MAIN("sim",
	  UNIT_TEST(test_sim__one_flow),
	  UNIT_TEST(test_sim__reduce_costs_memory_bytes),
	  UNIT_TEST(test_sim__relayed_token_plans_above_bound),
	  UNIT_TEST(test_sim__reduced_token_plans_above_bound),
	  UNIT_TEST(test_sim__random_token_plans_above_bound),
	  UNIT_TEST(test_sim__token_schedules_above_bound),
	  UNIT_TEST(test_sim__two_flows_share_port),
	  UNIT_TEST(test_sim__max_min_three_flows),
	  UNIT_TEST(test_sim__one_to_one_stage),
	  UNIT_TEST(test_sim__dag_chain_adds),
	  UNIT_TEST(test_sim__chunked_pipeline_overlaps),
	  UNIT_TEST(test_sim__rank_sync_no_barrier),
	  UNIT_TEST(test_sim__rank_sync_waits_for_whole_wave),
	  UNIT_TEST(test_sim__rank_sync_pipelined_chunks_by_wave),
	  UNIT_TEST(test_sim__mesh_links),
	  UNIT_TEST(test_sim__incast_congestion),
	  UNIT_TEST(test_sim__rto_loss_timeout),
	  UNIT_TEST(test_sim__core_oversubscription),
	  UNIT_TEST(test_sim__scalable_close_to_exact),
	  UNIT_TEST(test_sim__components_match_reference),
	  UNIT_TEST(test_sim__replay_matches_reference),
	  UNIT_TEST(test_sim__deterministic),
	  UNIT_TEST(test_sim__timeline_writers),
	  UNIT_TEST(test_sim__svg_rows_per_nic),
	  UNIT_TEST(test_sim__rejects_bad_plans),
	  UNIT_TEST(test_sim__never_beats_lp_bound))
