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
		fast_auto_predict(&t, tr.m[0].bytes, NULL, &c);
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

/* The decision (fast_auto_choose, which may stop at floors under
 * spreadout's and hier's predictions) chooses what the full prediction
 * chooses, with the same predictions but those floors, on seeded matrices
 * of both presets, dense and sparse, 4 KiB to 1 GiB per pair; the floors
 * are taken on some and the second pass on others */
static void test_auto__decision_is_the_full_predictions_choice(void)
{
	static const char *presets[] = { "h200", "mi300x-100g" };
	static const enum fast_gen_pattern pats[] = { FAST_GEN_UNIFORM, FAST_GEN_ZIPF, FAST_GEN_HOTSPOT };
	unsigned floors = 0, full = 0;
	uint64_t seed = 1;

	for (int pr = 0; pr < 2; pr++)
		for (uint32_t N = 1; N <= 8; N *= 2)
			for (int pt = 0; pt < 3; pt++)
				for (int z = 12; z <= 30; z += 6)
					for (int sparse = 0; sparse < 2; sparse++) {
						struct fast_limits lim;
						struct fast_topo t;
						struct fast_traffic tr;
						struct fast_gen_opts g;
						struct fast_err err;
						struct fast_auto_choice c, p;
						uint32_t ng = N * 8;
						fast_limits_default(&lim);
						CU_ASSERT_EQUAL_FATAL(fast_topo_preset(presets[pr], N, 8, &lim, &t, &err), 0);
						fast_gen_defaults(&g);
						g.pattern = pats[pt];
						g.ng = ng;
						g.seed = seed++;
						g.mean_bytes = UINT64_C(1) << z;
						CU_ASSERT_EQUAL_FATAL(fast_gen_traffic(&g, &lim, &tr, &err), 0);
						for (uint64_t i = 0; sparse && i < (uint64_t)ng * ng; i++)
							if ((i * 2654435761u >> 7) % 3)
								tr.m[0].bytes[i] = 0;
						fast_auto_choose(&t, tr.m[0].bytes, NULL, &c);
						fast_auto_predict(&t, tr.m[0].bytes, NULL, &p);
						CU_ASSERT_EQUAL(c.best, p.best);
						CU_ASSERT_EQUAL(c.n, p.n);
						for (uint32_t a = 0; a < c.n; a++) {
							CU_ASSERT_EQUAL(c.synth_s[a], p.synth_s[a]);
							if (strcmp(c.algo[a], "spreadout") != 0 &&
							    strcmp(c.algo[a], "hier") != 0) {
								CU_ASSERT_EQUAL(c.sim_s[a], p.sim_s[a]);
							} else {
								CU_ASSERT(c.sim_s[a] <= p.sim_s[a]);
								floors += c.sim_s[a] < p.sim_s[a];
								full += c.sim_s[a] == p.sim_s[a];
							}
						}
						fast_traffic_free(&tr);
					}
	CU_ASSERT(floors > 0);
	CU_ASSERT(full > 0);
}

/* A GPU's bytes to itself are no traffic: a diagonal larger than every
 * message (the largest of its block, on a mesh where the largest local
 * message sets fanout's time) changes no prediction */
static void test_auto__the_diagonal_is_no_traffic(void)
{
	struct fast_limits lim;
	struct fast_topo t;
	struct fast_err err;
	struct fast_auto_choice a, b;
	uint32_t ng = 16;
	uint64_t D[16 * 16], Z[16 * 16];

	fast_limits_default(&lim);
	CU_ASSERT_EQUAL_FATAL(fast_topo_preset("mi300x-100g", 2, 8, &lim, &t, &err), 0);
	for (uint32_t s = 0; s < ng; s++)
		for (uint32_t d = 0; d < ng; d++) {
			Z[s * ng + d] = s == d ? 0 : (UINT64_C(1) << 20) + 4096 * ((s * 7 + d * 3) % 11);
			D[s * ng + d] = s == d ? UINT64_C(1) << 34 : Z[s * ng + d];
		}
	fast_auto_predict(&t, D, NULL, &a);
	fast_auto_predict(&t, Z, NULL, &b);
	CU_ASSERT_EQUAL(a.best, b.best);
	for (uint32_t k = 0; k < a.n; k++) {
		CU_ASSERT_EQUAL(a.sim_s[k], b.sim_s[k]);
		CU_ASSERT_EQUAL(a.synth_s[k], b.synth_s[k]);
	}
	fast_auto_choose(&t, D, NULL, &a);
	fast_auto_choose(&t, Z, NULL, &b);
	CU_ASSERT_EQUAL(memcmp(&a, &b, sizeof a), 0);
}

/* The decision takes each candidate's constants by its place in the
 * algorithm table: on a dense matrix its S is the model's for the name
 * (FAST's, packing its stages here, more: packed_synth in lib/auto.c) */
static void test_auto__candidates_are_the_table_in_order(void)
{
	struct fast_topo t;
	struct fast_traffic tr;
	struct fast_auto_choice c;
	uint32_t k = 0;

	setup(&samples[0], &t, &tr); /* uniform: every message non-zero */
	fast_auto_choose(&t, tr.m[0].bytes, NULL, &c);
	for (const struct fast_algo *a = fast_algos; a->name; a++) {
		if (strcmp(a->name, "auto") == 0)
			continue;
		CU_ASSERT_FATAL(k < c.n);
		CU_ASSERT_STRING_EQUAL(c.algo[k], a->name);
		if (strcmp(a->name, "fast") == 0) { /* packed at this size: more */
			CU_ASSERT(c.synth_s[k] > fast_auto_synth_model(a->name, 4, 8, 32 * 24));
		} else {
			CU_ASSERT_EQUAL(c.synth_s[k], fast_auto_synth_model(a->name, 4, 8, 32 * 24));
		}
		k++;
	}
	CU_ASSERT_EQUAL(k, c.n);
	fast_traffic_free(&tr);
}

UNIT_MAIN("auto", UNIT_TEST(test_auto__predictor_tracks_simulation),
	  UNIT_TEST(test_auto__choice_near_the_best),
	  UNIT_TEST(test_auto__deterministic_plan_of_the_choice),
	  UNIT_TEST(test_auto__empty_matrix_chooses_fast),
	  UNIT_TEST(test_auto__decision_is_the_full_predictions_choice),
	  UNIT_TEST(test_auto__candidates_are_the_table_in_order),
	  UNIT_TEST(test_auto__the_diagonal_is_no_traffic))
