/*
 * test_auto.c - `--algo auto` (lib/auto.c): the closed-form predictor
 * against the simulator on seeded cases, the choice against the simulated
 * times of every candidate, determinism, and what an auto plan records.
 */
#include <math.h>
#include <string.h>

#include "lib/auto.h"
#include "lib/gen.h"
#include "sim/sim.h"
#include "unit.h"

/* predicted / simulated stays within [1 / F, F] */
#define AUTO_TEST_FACTOR 2.0

struct sample {
	const char *preset;
	enum fast_gen_pattern pattern;
	uint64_t mean;
};

static const struct sample samples[] = {
	{ "h200", FAST_GEN_UNIFORM, UINT64_C(4) << 10 },
	{ "h200", FAST_GEN_ZIPF, UINT64_C(4) << 10 },
	{ "h200", FAST_GEN_ZIPF, UINT64_C(1) << 20 },
	{ "h200", FAST_GEN_ZIPF, UINT64_C(256) << 20 },
	{ "mi300x-100g", FAST_GEN_UNIFORM, UINT64_C(64) << 10 },
	{ "mi300x-100g", FAST_GEN_ZIPF, UINT64_C(4) << 20 },
	{ "mi300x-100g", FAST_GEN_ZIPF, UINT64_C(256) << 20 },
};

/* h200 / mi300x-100g 4 x 8 and one seeded matrix of the sample. */
static void setup(const struct sample *s, struct fast_topo *t, struct fast_traffic *tr)
{
	struct fast_limits lim;
	struct fast_gen_opts g;
	struct fast_err err;

	fast_limits_default(&lim);
	CU_ASSERT_EQUAL_FATAL(fast_topo_preset(s->preset, 4, 8, &lim, t, &err), 0);
	fast_gen_defaults(&g);
	g.pattern = s->pattern;
	g.ng = 32;
	g.seed = 7;
	g.mean_bytes = s->mean;
	CU_ASSERT_EQUAL_FATAL(fast_gen_traffic(&g, &lim, tr, &err), 0);
}

static double simulate(const char *algo, const struct fast_topo *t, const uint64_t *D)
{
	struct fast_plan p;
	struct fast_sim_result r;
	struct fast_sim_opts so;
	struct fast_err err;
	double time_s;

	fast_sim_opts_default(&so);
	so.traffic = D;
	CU_ASSERT_EQUAL_FATAL(fast_compile(algo, t, D, NULL, &p, &err), 0);
	CU_ASSERT_EQUAL_FATAL(fast_sim_run(t, &p, &so, &r, &err), 0);
	time_s = r.time_s;
	fast_sim_result_free(&r);
	fast_plan_free(&p);
	return time_s;
}

/* Every candidate's predicted T_sim within a factor of the simulated one
 * (the bound: the largest error measured on these cases, README) */
static void test_auto__predictor_tracks_simulation(void)
{
	for (size_t k = 0; k < sizeof samples / sizeof samples[0]; k++) {
		struct fast_topo t;
		struct fast_traffic tr;
		struct fast_auto_choice c;
		setup(&samples[k], &t, &tr);
		fast_auto_choose(&t, tr.m[0].bytes, NULL, &c);
		CU_ASSERT_EQUAL(c.n, 6);
		for (uint32_t a = 0; a < c.n; a++) {
			double sim = simulate(c.algo[a], &t, tr.m[0].bytes), r = c.sim_s[a] / sim;
			CU_ASSERT(sim > 0);
			CU_ASSERT(r > 1 / AUTO_TEST_FACTOR && r < AUTO_TEST_FACTOR);
			if (!(r > 1 / AUTO_TEST_FACTOR && r < AUTO_TEST_FACTOR))
				fprintf(stderr, "\n%s %llu %s: predicted %.4g simulated %.4g\n", samples[k].preset,
					(unsigned long long)samples[k].mean, c.algo[a], c.sim_s[a], sim);
		}
		fast_traffic_free(&tr);
	}
}

/* With the synthesis model's S, the choice is within the slack of
 * the best simulated candidate: T(choice) <= 1.02 min T + 2 us */
static void test_auto__choice_near_the_best(void)
{
	for (size_t k = 0; k < sizeof samples / sizeof samples[0]; k++) {
		struct fast_topo t;
		struct fast_traffic tr;
		struct fast_auto_choice c;
		double best = INFINITY, chosen = 0;
		setup(&samples[k], &t, &tr);
		fast_auto_choose(&t, tr.m[0].bytes, NULL, &c);
		for (uint32_t a = 0; a < c.n; a++) {
			double T = simulate(c.algo[a], &t, tr.m[0].bytes) + c.synth_s[a];
			best = fmin(best, T);
			if (a == c.best)
				chosen = T;
		}
		CU_ASSERT(chosen <= 1.02 * best + 2e-6);
		fast_traffic_free(&tr);
	}
}

/* The same inputs give the same choice; the auto plan is the chosen
 * schedule's plan (same hash, its name in algo) with the choice in options */
static void test_auto__deterministic_plan_of_the_choice(void)
{
	struct fast_topo t;
	struct fast_traffic tr;
	struct fast_auto_choice c1, c2;
	struct fast_plan pa, pc;
	struct fast_err err;

	setup(&samples[2], &t, &tr);
	fast_auto_choose(&t, tr.m[0].bytes, NULL, &c1);
	fast_auto_choose(&t, tr.m[0].bytes, NULL, &c2);
	CU_ASSERT_EQUAL(memcmp(&c1, &c2, sizeof c1), 0);
	CU_ASSERT_EQUAL_FATAL(fast_compile("auto", &t, tr.m[0].bytes, NULL, &pa, &err), 0);
	CU_ASSERT_EQUAL_FATAL(fast_compile(c1.algo[c1.best], &t, tr.m[0].bytes, NULL, &pc, &err), 0);
	CU_ASSERT_STRING_EQUAL(pa.algo, c1.algo[c1.best]);
	CU_ASSERT_EQUAL(fast_plan_hash(&pa), fast_plan_hash(&pc));
	CU_ASSERT_EQUAL(strncmp(pa.options, "auto: predicted sim_s=", 22), 0);
	fast_plan_free(&pa);
	fast_plan_free(&pc);
	fast_traffic_free(&tr);
}

/* An empty matrix is predicted free for every candidate: the table's
 * first (fast, the default) is chosen */
static void test_auto__empty_matrix_chooses_fast(void)
{
	struct fast_topo t;
	struct fast_limits lim;
	struct fast_err err;
	struct fast_auto_choice c;
	uint64_t D[32 * 32] = { 0 };

	fast_limits_default(&lim);
	CU_ASSERT_EQUAL_FATAL(fast_topo_preset("h200", 4, 8, &lim, &t, &err), 0);
	fast_auto_choose(&t, D, NULL, &c);
	for (uint32_t a = 0; a < c.n; a++)
		CU_ASSERT_EQUAL(c.sim_s[a], 0);
	/* S decides: the cheapest synthesis */
	CU_ASSERT_STRING_EQUAL(c.algo[c.best], "fanout");
	CU_ASSERT(fast_auto_synth_model("fast", 4, 8, 0) > 0);
	CU_ASSERT_EQUAL(fast_auto_synth_model("ring", 4, 8, 0), 0);
}

UNIT_MAIN("auto", UNIT_TEST(test_auto__predictor_tracks_simulation),
	  UNIT_TEST(test_auto__choice_near_the_best),
	  UNIT_TEST(test_auto__deterministic_plan_of_the_choice),
	  UNIT_TEST(test_auto__empty_matrix_chooses_fast))
