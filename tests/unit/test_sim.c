/*
 * test_sim.c - the flow-level simulator against closed forms: one flow,
 * fair sharing, one-to-one stages (explicit and compact rail form), DAG
 * chains, chunked pipelines, per-GPU waves (--sync rank), mesh links,
 * incast congestion, loss timeouts, core oversubscription; the timeline
 * writers and bad plans.  Against references: test_sim_ref.c; token
 * plans: test_sim_tokens.c.
 */
#include <CUnit/Basic.h>

#include "unit.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fast/sim.h"
#include "sim_fix.h"

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

UNIT_MAIN("sim",
	  UNIT_TEST(test_sim__one_flow),
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
	  UNIT_TEST(test_sim__timeline_writers),
	  UNIT_TEST(test_sim__svg_rows_per_nic),
	  UNIT_TEST(test_sim__rejects_bad_plans))
