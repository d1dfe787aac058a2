/*
 * test_sim_flight.c - the simulator with two waves in flight (sim.h
 * "Waves in flight", --sync rank --in-flight 2), each rule against its
 * closed form on 2 servers x 2 GPUs: a send of the GPU's own bytes runs
 * beside the wave before it; one forwarding bytes that arrived over
 * scale-out waits for all of that wave, one forwarding scale-up arrivals
 * only for those; a send to a peer waits as long as the wave's sends to
 * that peer before it; a third wave waits for the first; one wave in
 * flight is by rank as before; every schedule's plans run; and the
 * options it is refused with.
 */
#include <CUnit/Basic.h>

#include "unit.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fast/algo.h"
#include "fast/sim.h"
#include "sim_fix.h"

#define HOP_OUT(b) (OUT_O + OUT_A + (b) / OUT_BW)
#define HOP_UP(b) (UP_O + UP_A + (b) / UP_BW)

static double flight(const struct fast_topo *t, const struct fast_plan *p, uint32_t k,
		     struct fast_sim_result *r)
{
	struct fast_sim_opts o;

	fast_sim_opts_default(&o);
	o.sync = FAST_SIM_SYNC_RANK;
	o.in_flight = k;
	return sim_time(t, p, &o, r);
}

/* a transfer carrying piece (src, dst) of `bytes` */
static void add_fwd(struct fast_plan *p, uint32_t from, uint32_t to, uint32_t src, uint32_t dst,
		    uint64_t bytes)
{
	CU_ASSERT_FATAL(fast_plan_add_xfer(p, from, to, NULL) == 0);
	CU_ASSERT_FATAL(fast_plan_add_piece(p, src, dst, 0, bytes, NULL) == 0);
}

/* GPU 0: 10 MB out to GPU 2, then (an ordering, no data) 10 MB of its own
 * to GPU 1 over scale-up.  One wave in flight: one after the other; two:
 * the second runs beside the first. */
static void test_sim_flight__own_bytes_overlap(void)
{
	struct fast_topo t = topo_small(2, 2, FAST_UP_SWITCH);
	struct fast_plan p;
	struct fast_sim_result r;

	fast_plan_init(&p, 2, 2, "test");
	step(&p, FAST_TIER_OUT);
	add_xfer(&p, 0, 2, 10 * MB);
	step(&p, FAST_TIER_UP);
	CU_ASSERT_FATAL(fast_plan_add_dep(&p, 1, 0, false, NULL) == 0);
	add_xfer(&p, 0, 1, 10 * MB);
	NEAR(flight(&t, &p, 1, &r), HOP_OUT(10e6) + HOP_UP(10e6));
	fast_sim_result_free(&r);
	NEAR(flight(&t, &p, 2, &r), HOP_OUT(10e6));
	NEAR(r.steps[1].end_s, HOP_UP(10e6));
	fast_sim_result_free(&r);
	fast_plan_free(&p);
}

/* GPU 2 forwards to GPU 3 what it received from GPU 0 over scale-out:
 * the forward waits for the arrival whatever the waves in flight. */
static void test_sim_flight__scale_out_arrival_waits(void)
{
	struct fast_topo t = topo_small(2, 2, FAST_UP_SWITCH);
	struct fast_plan p;
	struct fast_sim_result r;

	fast_plan_init(&p, 2, 2, "test");
	step(&p, FAST_TIER_OUT);
	add_fwd(&p, 0, 2, 0, 3, 10 * MB);
	step(&p, FAST_TIER_UP);
	CU_ASSERT_FATAL(fast_plan_add_dep(&p, 1, 0, false, NULL) == 0);
	add_fwd(&p, 2, 3, 0, 3, 10 * MB);
	NEAR(flight(&t, &p, 2, &r), HOP_OUT(10e6) + HOP_UP(10e6));
	NEAR(r.steps[1].start_s, HOP_OUT(10e6) + UP_O + UP_A);
	fast_sim_result_free(&r);
	fast_plan_free(&p);
}

/* GPU 1 receives 1 MB from GPU 0 over scale-up and 10 MB from GPU 2 over
 * scale-out in its first wave, then forwards the scale-up bytes to GPU 3:
 * with two in flight that forward waits only for the scale-up arrival, with
 * one for the whole wave.  If the forwarded bytes had come over scale-out,
 * it would wait for the whole wave either way. */
static void test_sim_flight__scale_up_arrival_waits_alone(void)
{
	struct fast_topo t = topo_small(2, 2, FAST_UP_SWITCH);
	struct fast_plan p;
	struct fast_sim_result r;
	double fwd = HOP_UP(1e6) + HOP_OUT(1e6);

	fast_plan_init(&p, 2, 2, "test");
	step(&p, FAST_TIER_UP);
	add_fwd(&p, 0, 1, 0, 3, 1 * MB);
	step(&p, FAST_TIER_OUT);
	add_fwd(&p, 2, 1, 2, 1, 10 * MB);
	step(&p, FAST_TIER_OUT);
	CU_ASSERT_FATAL(fast_plan_add_dep(&p, 2, 0, false, NULL) == 0);
	add_fwd(&p, 1, 3, 0, 3, 1 * MB);
	NEAR(flight(&t, &p, 2, &r), HOP_OUT(10e6));
	NEAR(r.steps[2].end_s, fwd);
	fast_sim_result_free(&r);
	NEAR(flight(&t, &p, 1, &r), HOP_OUT(10e6) + HOP_OUT(1e6));
	fast_sim_result_free(&r);
	fast_plan_free(&p);

	/* a forward of scale-out bytes instead: GPU 2's 10 MB, on to GPU 0 */
	fast_plan_init(&p, 2, 2, "test");
	step(&p, FAST_TIER_UP);
	add_fwd(&p, 0, 1, 0, 1, 1 * MB);
	step(&p, FAST_TIER_OUT);
	add_fwd(&p, 2, 1, 2, 0, 10 * MB);
	step(&p, FAST_TIER_UP);
	CU_ASSERT_FATAL(fast_plan_add_dep(&p, 2, 1, false, NULL) == 0);
	add_fwd(&p, 1, 0, 2, 0, 10 * MB);
	NEAR(flight(&t, &p, 2, &r), HOP_OUT(10e6) + HOP_UP(10e6));
	fast_sim_result_free(&r);
	fast_plan_free(&p);
}

/* Two sends of GPU 1's second wave to GPU 3: the first forwards scale-out
 * arrivals (waits for the wave before), the second its own bytes -- held
 * behind the first, as both ends see a pair's messages in one order.  To
 * GPU 0 instead, its own bytes go at once. */
static void test_sim_flight__a_peer_keeps_its_order(void)
{
	struct fast_topo t = topo_small(2, 2, FAST_UP_SWITCH);
	struct fast_plan p;
	struct fast_sim_result r;

	for (uint32_t to = 3; to != UINT32_MAX; to = to == 3 ? 0 : UINT32_MAX) {
		fast_plan_init(&p, 2, 2, "test");
		step(&p, FAST_TIER_OUT);
		add_fwd(&p, 2, 1, 2, 3, 10 * MB);
		step(&p, FAST_TIER_OUT);
		CU_ASSERT_FATAL(fast_plan_add_dep(&p, 1, 0, false, NULL) == 0);
		add_fwd(&p, 1, 3, 2, 3, 1 * MB);
		step(&p, to == 3 ? FAST_TIER_OUT : FAST_TIER_UP);
		CU_ASSERT_FATAL(fast_plan_add_dep(&p, 2, 0, false, NULL) == 0);
		add_fwd(&p, 1, to, 1, to, 1 * MB);
		flight(&t, &p, 2, &r);
		if (to == 3) {
			CU_ASSERT(r.steps[2].start_s >= r.steps[0].end_s);
		} else {
			NEAR(r.steps[2].end_s, HOP_UP(1e6));
		}
		fast_sim_result_free(&r);
		fast_plan_free(&p);
	}
}

/* GPU 0's own bytes in three chained waves (out 10 MB to GPU 2, up 1 MB
 * to GPU 1, out 1 MB to GPU 3): the second runs beside the first, the
 * third only once the first is done -- at most two waves in flight. */
static void test_sim_flight__at_most_two_waves(void)
{
	struct fast_topo t = topo_small(2, 2, FAST_UP_SWITCH);
	struct fast_plan p;
	struct fast_sim_result r;

	fast_plan_init(&p, 2, 2, "test");
	step(&p, FAST_TIER_OUT);
	add_xfer(&p, 0, 2, 10 * MB);
	step(&p, FAST_TIER_UP);
	CU_ASSERT_FATAL(fast_plan_add_dep(&p, 1, 0, false, NULL) == 0);
	add_xfer(&p, 0, 1, 1 * MB);
	step(&p, FAST_TIER_OUT);
	CU_ASSERT_FATAL(fast_plan_add_dep(&p, 2, 1, false, NULL) == 0);
	add_xfer(&p, 0, 3, 1 * MB);
	NEAR(flight(&t, &p, 2, &r), HOP_OUT(10e6) + HOP_OUT(1e6));
	NEAR(r.steps[1].end_s, HOP_UP(1e6));
	NEAR(r.steps[2].start_s, HOP_OUT(10e6) + OUT_O + OUT_A);
	fast_sim_result_free(&r);
	fast_plan_free(&p);
}

/* Every schedule's plans, on random matrices over a 4 x 4 fabric with a
 * NIC at a quarter: two waves in flight run them through (no GPU left
 * waiting: every flow of one wave's run, every step ending by the
 * completion). */
static void test_sim_flight__every_schedule_runs(void)
{
	struct fast_topo t = topo_small(4, 4, FAST_UP_SWITCH);
	struct fast_rng rng;
	uint32_t ng = 16;
	uint64_t *D = calloc((size_t)ng * ng, sizeof *D);
	struct fast_err err = { 0 };

	CU_ASSERT_FATAL(D != NULL);
	unit_set_nic(&t, 1, 2, 0.25);
	fast_rng_seed(&rng, 11);
	for (int trial = 0; trial < 4; trial++) {
		for (uint32_t i = 0; i < ng * ng; i++)
			D[i] = i % (ng + 1) ? 4096 * fast_rng_below(&rng, 256) : 0;
		for (const struct fast_algo *al = fast_algos; al->name; al++) {
			struct fast_algo_opts ao;
			struct fast_plan p;
			struct fast_sim_result r1, r2;
			struct fast_matrix mx = fast_matrix_of(D, ng);
			fast_algo_opts_default(&ao);
			CU_ASSERT_FATAL(fast_compile(al->name, &t, &mx, &ao, &p, &err) == 0);
			flight(&t, &p, 1, &r1);
			flight(&t, &p, 2, &r2);
			CU_ASSERT(r2.flows == r1.flows);
			CU_ASSERT(r2.time_s > 0.0);
			for (uint32_t s = 0; s < r2.nsteps; s++)
				CU_ASSERT(r2.steps[s].end_s <= r2.time_s + 1e-12);
			fast_sim_result_free(&r1);
			fast_sim_result_free(&r2);
			fast_plan_free(&p);
		}
	}
	free(D);
}

/* Refused: more than two waves; two by step (the barrier leaves none in
 * flight). */
static void test_sim_flight__refused(void)
{
	struct fast_topo t = topo_small(2, 2, FAST_UP_SWITCH);
	struct fast_plan p;
	struct fast_sim_result r;
	struct fast_sim_opts o;
	struct fast_err err = { 0 };

	fast_plan_init(&p, 2, 2, "test");
	step(&p, FAST_TIER_OUT);
	add_xfer(&p, 0, 2, 1 * MB);
	fast_sim_opts_default(&o);
	o.sync = FAST_SIM_SYNC_RANK;
	o.in_flight = 3;
	CU_ASSERT(unit_sim(&t, &p, NULL, &o, &r, &err) == FAST_EUSAGE);
	CU_ASSERT(strstr(err.msg, "waves in flight") != NULL);
	o.sync = FAST_SIM_SYNC_STEP;
	o.in_flight = 2;
	CU_ASSERT(unit_sim(&t, &p, NULL, &o, &r, &err) == FAST_EUSAGE);
	CU_ASSERT(strstr(err.msg, "--sync rank") != NULL);
	fast_plan_free(&p);
}

UNIT_MAIN("sim_flight",
	  UNIT_TEST(test_sim_flight__own_bytes_overlap),
	  UNIT_TEST(test_sim_flight__scale_out_arrival_waits),
	  UNIT_TEST(test_sim_flight__scale_up_arrival_waits_alone),
	  UNIT_TEST(test_sim_flight__a_peer_keeps_its_order),
	  UNIT_TEST(test_sim_flight__at_most_two_waves),
	  UNIT_TEST(test_sim_flight__every_schedule_runs),
	  UNIT_TEST(test_sim_flight__refused))
