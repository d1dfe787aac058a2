/*
 * test_sim_ref.c - the simulator against its references: the scalable
 * mode against the exact one, the per-component and replayed passes
 * against from-scratch filling, determinism, and the property "simulated
 * time >= LP bound" for every compiler on seeded random traffic.
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
#include "sim_fix.h"

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

UNIT_MAIN("sim_ref",
	  UNIT_TEST(test_sim__scalable_close_to_exact),
	  UNIT_TEST(test_sim__components_match_reference),
	  UNIT_TEST(test_sim__replay_matches_reference),
	  UNIT_TEST(test_sim__deterministic),
	  UNIT_TEST(test_sim__never_beats_lp_bound))
