/*
 * test_sim_impl.c - the simulator running a plan as its schedule's
 * implementation does (topo.h "implementations", sim.h "Implementation"),
 * each mechanism against its closed form: scale-up copies capped by SMs
 * or the copy engine (switch ports, and a mesh's copy resources), a
 * scale-out cap, the reduction's rate, chunks and steps in flight paying
 * latency and overhead once per pipeline, the fixed cost per call, each
 * schedule's default synchronisation (an explicit one wins), and a
 * neutral implementation giving the same times as none.
 */
#include <CUnit/Basic.h>

#include "unit.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fast/algo.h"
#include "fast/sim.h"
#include "sim_fix.h"
#include "tok.h"

/* Schedule `algo`'s entry of t, neutral, for the test to set. */
static struct fast_impl *entry(struct fast_topo *t, const char *algo)
{
	struct fast_impl *m = (struct fast_impl *)fast_topo_impl(t, algo);

	CU_ASSERT_PTR_NOT_EQUAL_FATAL(m, &t->impl[0]);
	fast_impl_neutral(m);
	return m;
}

/* The plan's time as its schedule's implementation runs it. */
static double impl_time(const struct fast_topo *t, const struct fast_plan *p)
{
	struct fast_sim_result r;
	double s = sim_sync(t, p, FAST_SIM_SYNC_IMPL, &r);

	fast_sim_result_free(&r);
	return s;
}

/* One scale-up transfer of `algo`: GPU 0 -> 1 of 10 MB. */
static void one_up(struct fast_plan *p, const char *algo)
{
	fast_plan_init(p, 2, 2, algo);
	step(p, FAST_TIER_UP);
	add_xfer(p, 0, 1, 10 * MB);
}

static void test_sim_impl__sm_copies_cap_a_switch_port(void)
{
	struct fast_topo t = topo_small(2, 2, FAST_UP_SWITCH);
	struct fast_impl *m = entry(&t, "hier");
	struct fast_plan p;

	m->engine = FAST_ENGINE_SM;
	m->sms = 4;
	m->engine_GBps = 5; /* 20 GB/s < the port's 100 */
	one_up(&p, "hier");
	NEAR(impl_time(&t, &p), UP_O + UP_A + 10e6 / (4 * 5e9));
	fast_plan_free(&p);
	/* another schedule's plan runs on the link */
	one_up(&p, "fanout");
	NEAR(impl_time(&t, &p), UP_O + UP_A + 10e6 / UP_BW);
	fast_plan_free(&p);
	/* the copy engine; a cap above the link is none */
	m->engine = FAST_ENGINE_CE;
	m->engine_GBps = 40;
	one_up(&p, "hier");
	NEAR(impl_time(&t, &p), UP_O + UP_A + 10e6 / 40e9);
	m->engine_GBps = 400;
	NEAR(impl_time(&t, &p), UP_O + UP_A + 10e6 / UP_BW);
	fast_plan_free(&p);
}

/* On a mesh the cap is a GPU's, over its links together: GPU 0 sends 10 MB
 * to each of its 3 peers at once, a link each (100 GB/s), through its copy
 * egress at 60 GB/s: 30 MB / 60 GB/s; one peer alone runs at its link. */
static void test_sim_impl__sm_copies_cap_a_mesh_gpu(void)
{
	struct fast_topo t = topo_small(1, 4, FAST_UP_MESH);
	struct fast_impl *m = entry(&t, "fanout");
	struct fast_plan p;
	struct fast_sim_result r;
	char name[64];

	m->engine = FAST_ENGINE_SM;
	m->sms = 12;
	m->engine_GBps = 5;
	fast_plan_init(&p, 1, 4, "fanout");
	step(&p, FAST_TIER_UP);
	for (uint32_t d = 1; d < 4; d++)
		add_xfer(&p, 0, d, 10 * MB);
	NEAR(sim_sync(&t, &p, FAST_SIM_SYNC_IMPL, &r), UP_O + UP_A + 30e6 / 60e9);
	/* after the 16 links and the 4 NIC ports' egresses and ingresses */
	CU_ASSERT_EQUAL(r.nres, 24 + 2 * 4);
	CU_ASSERT_EQUAL(r.res[24].kind, FAST_RES_COPY_EGRESS);
	CU_ASSERT_EQUAL(r.res[24].bytes, 30 * MB);
	CU_ASSERT_EQUAL(r.res[28 + 1].kind, FAST_RES_COPY_INGRESS);
	CU_ASSERT_EQUAL(r.res[28 + 1].bytes, 10 * MB);
	CU_ASSERT_STRING_EQUAL(fast_sim_res_name(&t, &r.res[24], name, sizeof name), "s0 copy0 out");
	NEAR(r.res[24].cap_Bps, 60e9);
	fast_sim_result_free(&r);
	fast_plan_free(&p);
	/* one peer: min(link, cap) */
	fast_plan_init(&p, 1, 4, "fanout");
	step(&p, FAST_TIER_UP);
	add_xfer(&p, 0, 1, 10 * MB);
	NEAR(impl_time(&t, &p), UP_O + UP_A + 10e6 / 60e9);
	/* a cap above the links together adds no resource */
	m->engine_GBps = 50;
	NEAR(sim_sync(&t, &p, FAST_SIM_SYNC_IMPL, &r), UP_O + UP_A + 10e6 / UP_BW);
	CU_ASSERT_EQUAL(r.nres, 24);
	fast_sim_result_free(&r);
	fast_plan_free(&p);
}

static void test_sim_impl__out_cap(void)
{
	struct fast_topo t = topo_small(2, 2, FAST_UP_SWITCH);
	struct fast_impl *m = entry(&t, "nccl");
	struct fast_plan p;

	m->out_GBps = 4;
	fast_plan_init(&p, 2, 2, "nccl");
	step(&p, FAST_TIER_OUT);
	add_xfer(&p, 0, 2, 10 * MB);
	NEAR(impl_time(&t, &p), OUT_O + OUT_A + 10e6 / 4e9);
	fast_plan_free(&p);
}

/* test_sim_tokens.c's reduction (1 x 4, combine group (0, {1, 2, 3}), L = 100 MB):
 * the sum of 2 inputs at GPU 1 moves 3L over its reduction resource, at
 * the implementation's rate instead of the scale-up's. */
static void test_sim_impl__reduction_at_its_rate(void)
{
	struct fast_topo t = topo_small(1, 4, FAST_UP_SWITCH);
	struct fast_impl *m = entry(&t, "hier");
	struct fast_traffic tr;
	struct fast_plan p;
	struct fast_sim_result r;
	struct fast_err err = { 0 };
	int m1, m2, m12, m3;

	t.up.latency_us = t.up.step_overhead_us = 0;
	m->reduce_GBps = 600;
	tok_init(&tr, 4, FAST_TRAFFIC_COMBINE, 100 * MB);
	tok_group(&tr, 0, 1, 3, (const uint32_t[]){ 1, 2, 3 });
	tok_done(&tr);
	fast_plan_init(&p, 1, 4, "hier");
	p.kind = FAST_TRAFFIC_COMBINE;
	m1 = fast_plan_add_mask(&p, 0x1, NULL);
	m2 = fast_plan_add_mask(&p, 0x2, NULL);
	m12 = fast_plan_add_mask(&p, 0x3, NULL);
	m3 = fast_plan_add_mask(&p, 0x4, NULL);
	CU_ASSERT_FATAL(m1 >= 0 && m2 >= 0 && m12 >= 0 && m3 >= 0);
	step(&p, FAST_TIER_UP);
	CU_ASSERT_FATAL(fast_plan_add_xfer(&p, 2, 1, NULL) == 0);
	CU_ASSERT_FATAL(fast_plan_add_piece(&p, 0, (uint32_t)m2, 0, 100 * MB, NULL) == 0);
	CU_ASSERT_FATAL(fast_plan_add_step(&p, FAST_STEP_REDUCE, FAST_TIER_UP, NULL) == 1);
	CU_ASSERT_FATAL(fast_plan_add_dep(&p, 1, 0, false, NULL) == 0);
	CU_ASSERT_FATAL(fast_plan_add_xfer(&p, 1, 1, NULL) == 0);
	CU_ASSERT_FATAL(fast_plan_add_piece(&p, 0, (uint32_t)m1, 0, 100 * MB, NULL) == 0);
	CU_ASSERT_FATAL(fast_plan_add_piece(&p, 0, (uint32_t)m2, 0, 100 * MB, NULL) == 0);
	step(&p, FAST_TIER_UP);
	CU_ASSERT_FATAL(fast_plan_add_dep(&p, 2, 1, false, NULL) == 0);
	CU_ASSERT_FATAL(fast_plan_add_xfer(&p, 1, 0, NULL) == 0);
	CU_ASSERT_FATAL(fast_plan_add_piece(&p, 0, (uint32_t)m12, 0, 100 * MB, NULL) == 0);
	CU_ASSERT_FATAL(fast_plan_add_xfer(&p, 3, 0, NULL) == 0);
	CU_ASSERT_FATAL(fast_plan_add_piece(&p, 0, (uint32_t)m3, 0, 100 * MB, NULL) == 0);
	CU_ASSERT_EQUAL_FATAL(unit_sim(&t, &p, &tr.m[0], NULL, &r, &err), 0);
	/* 1 ms, then 300 MB at 600 GB/s, then 2 ms */
	NEAR(r.time_s, 1e-3 + 0.5e-3 + 2e-3);
	NEAR(r.steps[1].end_s - r.steps[1].start_s, 0.5e-3);
	fast_sim_result_free(&r);
	fast_plan_free(&p);
	fast_traffic_free(&tr);
}

/* A transfer of n chunks alone on a NIC: with k in flight it pays alpha
 * ceil(n / k) times, not n. */
static void test_sim_impl__chunks_in_flight_pay_latency_once(void)
{
	struct fast_topo t = topo_small(2, 2, FAST_UP_SWITCH);
	struct fast_impl *m = entry(&t, "hier");
	struct fast_plan p;
	const uint32_t n = 8;

	fast_plan_init(&p, 2, 2, "hier");
	step(&p, FAST_TIER_OUT);
	CU_ASSERT_FATAL(fast_plan_set_chunks(&p, n, NULL) == 0);
	add_xfer(&p, 0, 2, 16 * MB);
	NEAR(impl_time(&t, &p), OUT_O + n * OUT_A + 16e6 / OUT_BW);
	m->in_flight = 8;
	NEAR(impl_time(&t, &p), OUT_O + OUT_A + 16e6 / OUT_BW);
	m->in_flight = 3; /* chunks 0, 3, 6 */
	NEAR(impl_time(&t, &p), OUT_O + 3 * OUT_A + 16e6 / OUT_BW);
	fast_plan_free(&p);
}

/* A chain of 5 steps, each one transfer waiting on the one before: with k
 * in flight the steps at depths 0, k, 2k, ... pay alpha and overhead. */
static void test_sim_impl__steps_in_flight_pay_overhead_once(void)
{
	struct fast_topo t = topo_small(2, 2, FAST_UP_SWITCH);
	struct fast_impl *m = entry(&t, "nccl");
	struct fast_plan p;
	double bytes = 5 * 2e6 / OUT_BW;

	fast_plan_init(&p, 2, 2, "nccl");
	for (uint32_t s = 0; s < 5; s++) {
		step(&p, FAST_TIER_OUT);
		if (s)
			CU_ASSERT_FATAL(fast_plan_add_dep(&p, s, s - 1, false, NULL) == 0);
		add_xfer(&p, 0, 2, 2 * MB);
	}
	NEAR(impl_time(&t, &p), 5 * (OUT_O + OUT_A) + bytes);
	m->in_flight = 8;
	NEAR(impl_time(&t, &p), (OUT_O + OUT_A) + bytes);
	m->in_flight = 2; /* depths 0, 2, 4 */
	NEAR(impl_time(&t, &p), 3 * (OUT_O + OUT_A) + bytes);
	/* by rank the same chain: the wave entry's overhead likewise */
	{
		struct fast_sim_result r;
		NEAR(sim_sync(&t, &p, FAST_SIM_SYNC_RANK, &r), 3 * (OUT_O + OUT_A) + bytes);
		fast_sim_result_free(&r);
	}
	fast_plan_free(&p);
}

/* In flight, a flow never starts before its tier's alpha + overhead (the
 * bound's latency floor): depth counts steps of the step's own tier, so a
 * scale-out step fed by a scale-up hop pays its own tier's costs; and by
 * rank a GPU's first flow of a tier pays, whatever its step's depth. */
static void test_sim_impl__in_flight_keeps_the_latency_floor(void)
{
	struct fast_topo t = topo_small(2, 2, FAST_UP_SWITCH);
	struct fast_plan p;
	struct fast_sim_result r;

	entry(&t, "pxn")->in_flight = 8;
	/* step 0 up 0 -> 1 of 1 kB (done at 4.01 us), step 1 out 1 -> 3
	 * pipelined on it (PXN's relay): at its own 5 + 2 us, not at 4.01 */
	fast_plan_init(&p, 2, 2, "pxn");
	step(&p, FAST_TIER_UP);
	add_xfer(&p, 0, 1, 1000);
	step(&p, FAST_TIER_OUT);
	CU_ASSERT_FATAL(fast_plan_add_dep(&p, 1, 0, true, NULL) == 0);
	add_xfer(&p, 1, 3, 1000);
	sim_sync(&t, &p, FAST_SIM_SYNC_STEP, &r);
	NEAR(r.steps[0].end_s, UP_O + UP_A + 1e3 / UP_BW);
	NEAR(r.steps[1].start_s, OUT_O + OUT_A);
	fast_sim_result_free(&r);
	fast_plan_free(&p);
	/* by rank: step 1 (depth 1) on GPUs 1 and 3, idle in wave 0, still pays */
	fast_plan_init(&p, 2, 2, "pxn");
	step(&p, FAST_TIER_OUT);
	add_xfer(&p, 0, 2, 10 * MB);
	step(&p, FAST_TIER_OUT);
	CU_ASSERT_FATAL(fast_plan_add_dep(&p, 1, 0, false, NULL) == 0);
	add_xfer(&p, 1, 3, 1 * MB);
	sim_sync(&t, &p, FAST_SIM_SYNC_RANK, &r);
	NEAR(r.steps[1].start_s, OUT_O + OUT_A);
	fast_sim_result_free(&r);
	fast_plan_free(&p);
}

/* The fixed cost is paid once per call, before the first byte, by step and
 * by rank, and by a call that moves nothing; its part for crossing servers
 * only by a call that does. */
static void test_sim_impl__call_cost_once(void)
{
	struct fast_topo t = topo_small(2, 2, FAST_UP_SWITCH);
	struct fast_impl *m = entry(&t, "fast");
	struct fast_plan p;
	struct fast_sim_result r;
	double chain = 2 * (OUT_O + OUT_A + 1e6 / OUT_BW);

	m->call_us = 600;
	fast_plan_init(&p, 2, 2, "fast");
	step(&p, FAST_TIER_OUT);
	add_xfer(&p, 0, 2, 1 * MB);
	step(&p, FAST_TIER_OUT);
	CU_ASSERT_FATAL(fast_plan_add_dep(&p, 1, 0, false, NULL) == 0);
	add_xfer(&p, 0, 2, 1 * MB);
	NEAR(sim_sync(&t, &p, FAST_SIM_SYNC_STEP, &r), 600e-6 + chain);
	NEAR(r.steps[0].ready_s, 600e-6);
	fast_sim_result_free(&r);
	NEAR(sim_sync(&t, &p, FAST_SIM_SYNC_RANK, &r), 600e-6 + chain);
	fast_sim_result_free(&r);
	fast_plan_free(&p);
	fast_plan_init(&p, 2, 2, "fast");
	NEAR(impl_time(&t, &p), 600e-6);
	fast_plan_free(&p);
	/* call_out_us: only a call whose plan crosses servers pays it */
	m->call_out_us = 40;
	fast_plan_init(&p, 2, 2, "fast");
	step(&p, FAST_TIER_OUT);
	add_xfer(&p, 0, 2, 1 * MB);
	NEAR(impl_time(&t, &p), 640e-6 + OUT_O + OUT_A + 1e6 / OUT_BW);
	fast_plan_free(&p);
	fast_plan_init(&p, 2, 2, "fast");
	step(&p, FAST_TIER_UP);
	add_xfer(&p, 0, 1, 1 * MB);
	NEAR(impl_time(&t, &p), 600e-6 + UP_O + UP_A + 1e6 / UP_BW);
	fast_plan_free(&p);
}

/* Each schedule's default synchronisation: test_sim.c's two pairs, the big
 * transfer first on one and second on the other (by step the sum of the
 * steps' maxima, by rank the largest of the pairs' sums). */
static void test_sim_impl__default_sync_per_schedule(void)
{
	struct fast_topo t = topo_small(2, 2, FAST_UP_SWITCH);
	struct fast_plan p, q;
	struct fast_sim_result r;
	double big = 10e6 / OUT_BW, small = 1e6 / OUT_BW, per = OUT_O + OUT_A;
	const char *algos[2] = { "spreadout", "fanout" };
	struct fast_plan *plans[2] = { &p, &q };

	entry(&t, "spreadout")->sync = FAST_IMPL_SYNC_RANK;
	for (int i = 0; i < 2; i++) {
		fast_plan_init(plans[i], 2, 2, algos[i]);
		step(plans[i], FAST_TIER_OUT);
		add_xfer(plans[i], 0, 2, 10 * MB);
		add_xfer(plans[i], 1, 3, 1 * MB);
		step(plans[i], FAST_TIER_OUT);
		CU_ASSERT_FATAL(fast_plan_add_dep(plans[i], 1, 0, false, NULL) == 0);
		add_xfer(plans[i], 0, 2, 1 * MB);
		add_xfer(plans[i], 1, 3, 10 * MB);
	}
	NEAR(impl_time(&t, &p), 2 * per + big + small);
	NEAR(impl_time(&t, &q), 2 * per + big + big);
	CU_ASSERT_EQUAL(fast_sim_sync_of(&t, "spreadout", FAST_SIM_SYNC_IMPL), FAST_SIM_SYNC_RANK);
	CU_ASSERT_EQUAL(fast_sim_sync_of(&t, "nccl", FAST_SIM_SYNC_IMPL), FAST_SIM_SYNC_STEP);
	/* an explicit --sync wins */
	NEAR(sim_sync(&t, &p, FAST_SIM_SYNC_STEP, &r), 2 * per + big + big);
	fast_sim_result_free(&r);
	NEAR(sim_sync(&t, &q, FAST_SIM_SYNC_RANK, &r), 2 * per + big + small);
	fast_sim_result_free(&r);
	fast_plan_free(&p);
	fast_plan_free(&q);
}

/* A neutral implementation (every member written out) is no
 * implementation: every compiler's plan takes the same time to the bit. */
static void test_sim_impl__neutral_changes_nothing(void)
{
	struct fast_topo a, b;
	struct fast_limits lim;
	struct fast_err err = { 0 };
	struct fast_rng rng;
	uint32_t ng;
	uint64_t *D;

	fast_limits_default(&lim);
	CU_ASSERT_FATAL(fast_topo_preset("h200", 2, 4, &lim, &a, &err) == 0);
	for (size_t i = 0; i <= FAST_IMPL_SCHEDS; i++)
		fast_impl_neutral(&a.impl[i]);
	b = a;
	for (size_t i = 0; i <= FAST_IMPL_SCHEDS; i++)
		memset(&b.impl[i], 0, sizeof b.impl[i]);
	ng = fast_topo_ngpus(&a);
	D = calloc((size_t)ng * ng, sizeof *D);
	CU_ASSERT_FATAL(D != NULL);
	fast_rng_seed(&rng, 7);
	for (uint32_t i = 0; i < ng * ng; i++)
		D[i] = i % (ng + 1) ? 512 * fast_rng_below(&rng, 4096) : 0;
	for (const struct fast_algo *al = fast_algos; al->name; al++) {
		struct fast_algo_opts ao;
		struct fast_plan p;
		struct fast_matrix mx = fast_matrix_of(D, ng);
		fast_algo_opts_default(&ao);
		CU_ASSERT_FATAL(fast_compile(al->name, &a, &mx, &ao, &p, &err) == 0);
		CU_ASSERT_EQUAL(impl_time(&a, &p), impl_time(&b, &p));
		fast_plan_free(&p);
	}
	free(D);
}

UNIT_MAIN("sim_impl",
	  UNIT_TEST(test_sim_impl__sm_copies_cap_a_switch_port),
	  UNIT_TEST(test_sim_impl__sm_copies_cap_a_mesh_gpu),
	  UNIT_TEST(test_sim_impl__out_cap),
	  UNIT_TEST(test_sim_impl__reduction_at_its_rate),
	  UNIT_TEST(test_sim_impl__chunks_in_flight_pay_latency_once),
	  UNIT_TEST(test_sim_impl__steps_in_flight_pay_overhead_once),
	  UNIT_TEST(test_sim_impl__in_flight_keeps_the_latency_floor),
	  UNIT_TEST(test_sim_impl__call_cost_once),
	  UNIT_TEST(test_sim_impl__default_sync_per_schedule),
	  UNIT_TEST(test_sim_impl__neutral_changes_nothing))
