/*
 * test_auto_ports.c - `--algo auto` on fabrics that are not ideal
 * (lib/compile/algo_auto_ports.c): a GPU's NIC time is its port's bytes at
 * its port's rate (GPUs sharing a NIC add up, a GPU driving two NICs
 * halves it, a slow NIC stretches it), a cut-off GPU's bytes load its
 * proxy's port, the baselines' predictions follow the simulator's ports
 * as they track it on an ideal fabric, and the decision with its floors
 * (a feature left to a pass of its own) chooses what the full predictions
 * choose.
 */
#include <CUnit/Basic.h>

#include "unit.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fast/algo.h"
#include "fast/sim.h"
#include "lib/compile/algo_auto.h"
#include "lib/workload/gen.h"

static struct fast_topo preset(uint32_t N, uint32_t G)
{
	struct fast_limits lim;
	struct fast_topo t;
	struct fast_err err;

	fast_limits_default(&lim);
	CU_ASSERT_EQUAL_FATAL(fast_topo_preset("h200", N, G, &lim, &t, &err), 0);
	return t;
}

/* The predicted T_sim of algo in choice c. */
static double sim_of(const struct fast_auto_choice *c, const char *algo)
{
	for (uint32_t a = 0; a < c->n; a++)
		if (strcmp(c->algo[a], algo) == 0)
			return c->sim_s[a];
	CU_FAIL("no such candidate");
	return 0;
}

/* fanout on 2 x 4 where GPUs 0, 1 and 2 each send 64 MiB to server 1
 * (the rest nothing): its volume term is the most loaded port's bytes at
 * its rate -- 64 MiB at B_out with a NIC each, 128 MiB when 0 and 1 share
 * one, 32 MiB with two NICs each, 128 MiB when GPU 1's NIC is down and
 * GPU 2 is its proxy. */
static void test_auto_ports__fanout_volume_on_the_ports(void)
{
	static const struct {
		uint32_t nics, down;
		double mib;
	} cases[] = { { 4, 0, 64 }, { 2, 0, 128 }, { 8, 0, 32 }, { 4, 1, 128 } };
	uint64_t D[64] = { 0 };

	D[0 * 8 + 4] = D[1 * 8 + 5] = D[2 * 8 + 6] = UINT64_C(64) << 20;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct fast_topo t = preset(2, 4);
		struct fast_auto_choice c;
		const struct fast_algo *a = fast_algo_find("fanout");
		double lat = fmax(fast_tier_step_s(&t.out), fast_tier_step_s(&t.up)), want;
		t.nics = cases[i].nics;
		if (cases[i].down)
			unit_set_nic(&t, 0, 1, 0.0);
		fast_auto_predict(&t, D, NULL, &c);
		want = a->model.k_lat * lat +
		       a->model.k_vol * cases[i].mib * (1 << 20) / fast_tier_Bps(&t.out);
		CU_ASSERT_DOUBLE_EQUAL(sim_of(&c, "fanout"), want, want * 1e-9);
	}
}

/* A slower NIC never makes a schedule predict faster, and slows those
 * that send through it. */
static void test_auto_ports__a_slow_nic_slows_the_predictions(void)
{
	struct fast_limits lim;
	struct fast_gen_opts g;
	struct fast_traffic tr;
	struct fast_err err;
	struct fast_topo ideal = preset(4, 8), slow = ideal;
	struct fast_auto_choice a, b;

	fast_limits_default(&lim);
	fast_gen_defaults(&g);
	g.pattern = FAST_GEN_UNIFORM;
	g.ng = 32;
	g.seed = 3;
	g.mean_bytes = UINT64_C(16) << 20;
	CU_ASSERT_EQUAL_FATAL(fast_gen_traffic(&g, &lim, &tr, &err), 0);
	unit_set_nic(&slow, 2, 5, 0.25);
	fast_auto_predict(&ideal, tr.m[0].bytes, NULL, &a);
	fast_auto_predict(&slow, tr.m[0].bytes, NULL, &b);
	CU_ASSERT_EQUAL_FATAL(a.n, b.n);
	for (uint32_t k = 0; k < a.n; k++)
		CU_ASSERT(b.sim_s[k] >= a.sim_s[k] * (1 - 1e-12));
	CU_ASSERT(sim_of(&b, "fanout") > 2 * sim_of(&a, "fanout"));
	CU_ASSERT(sim_of(&b, "hier") > 2 * sim_of(&a, "hier"));
	CU_ASSERT(sim_of(&b, "fast") > sim_of(&a, "fast"));
	fast_traffic_free(&tr);
}

/* predicted / simulated within [1 / F, F]: measured 0.76 (spreadout,
 * 2 NICs a GPU, 64 MiB) to 1.20 (hier, skewed 64 MiB) on the cases below;
 * test_auto.c allows 2 on the ideal fabric */
#define FACTOR 1.5

static double simulate(const char *algo, const struct fast_topo *t, const uint64_t *D)
{
	struct fast_matrix m = fast_matrix_of(D, fast_topo_ngpus(t));
	struct fast_sim_result r;
	struct fast_sim_opts so;
	struct fast_plan p;
	struct fast_err err;
	double time_s = 0;

	fast_sim_opts_default(&so);
	so.traffic = D;
	CU_ASSERT_EQUAL_FATAL(fast_compile(algo, t, &m, NULL, &p, &err), 0);
	if (unit_sim(t, &p, NULL, &so, &r, &err) == 0) {
		time_s = r.time_s;
		fast_sim_result_free(&r);
	} else {
		fprintf(stderr, "\n%s: %s\n", algo, err.msg);
	}
	fast_plan_free(&p);
	return time_s;
}

/* Every baseline's predicted T_sim within a factor of its simulated time
 * on 4 x 8 fabrics with NICs shared, doubled, slow and down, uniform and
 * skewed traffic from 64 KiB to 64 MiB a message. */
static void test_auto_ports__baselines_track_the_simulator(void)
{
	static const struct {
		uint32_t nics;
		double f; /* server 1 NIC 3's rate (0: down) */
	} fabrics[] = { { 8, 0.0 }, { 8, 0.25 }, { 4, 1.0 }, { 4, 0.0 }, { 16, 0.0 } };
	static const enum fast_gen_pattern pats[] = { FAST_GEN_UNIFORM, FAST_GEN_ZIPF };
	unsigned n = 0;

	for (size_t k = 0; k < sizeof fabrics / sizeof fabrics[0]; k++)
		for (int pt = 0; pt < 2; pt++)
			for (int z = 16; z <= 26; z += 10) {
				struct fast_limits lim;
				struct fast_gen_opts g;
				struct fast_traffic tr;
				struct fast_err err;
				struct fast_topo t = preset(4, 8);
				struct fast_auto_choice c;
				t.nics = fabrics[k].nics;
				unit_set_nic(&t, 1, 3, fabrics[k].f);
				if (t.nics == 16)
					unit_set_nic(&t, 1, 2, 0.0); /* GPU 1's two NICs */
				fast_limits_default(&lim);
				fast_gen_defaults(&g);
				g.pattern = pats[pt];
				g.ng = 32;
				g.seed = 11;
				g.mean_bytes = UINT64_C(1) << z;
				CU_ASSERT_EQUAL_FATAL(fast_gen_traffic(&g, &lim, &tr, &err), 0);
				fast_auto_predict(&t, tr.m[0].bytes, NULL, &c);
				for (uint32_t a = 0; a < c.n; a++) {
					double sim, r;
					if (strcmp(c.algo[a], "fast") == 0)
						continue; /* FAST's own compiler's, not the baselines' */
					sim = simulate(c.algo[a], &t, tr.m[0].bytes);
					r = sim > 0 ? c.sim_s[a] / sim : 0;
					CU_ASSERT(r > 1 / FACTOR && r < FACTOR);
					if (getenv("FAST_TEST_VERBOSE") || !(r > 1 / FACTOR && r < FACTOR))
						fprintf(stderr, "\nK=%u f=%.2f pat %d 2^%d %s: predicted %.4g simulated %.4g (%.2f)",
							t.nics, fabrics[k].f, pt, z, c.algo[a], c.sim_s[a], sim, r);
					n++;
				}
				fast_traffic_free(&tr);
			}
	CU_ASSERT_EQUAL(n, 5 * 2 * 2 * 5);
}

/* On random degraded fabrics the decision (floors where a feature is
 * left to a pass of its own) chooses what the full predictions choose,
 * and each floor is under its full prediction. */
static void test_auto_ports__decision_is_the_full_predictions_choice(void)
{
	static const enum fast_gen_pattern pats[] = { FAST_GEN_UNIFORM, FAST_GEN_ZIPF, FAST_GEN_HOTSPOT };
	static const uint32_t nics[] = { 4, 8, 16 };
	struct fast_rng rng;
	unsigned cases = 0;

	fast_rng_seed(&rng, 2505);
	for (uint32_t N = 2; N <= 8; N *= 2)
		for (int pt = 0; pt < 3; pt++)
			for (int z = 12; z <= 30; z += 9) {
				struct fast_limits lim;
				struct fast_gen_opts g;
				struct fast_traffic tr;
				struct fast_err err;
				struct fast_topo t = preset(N, 8);
				struct fast_auto_choice c, p;
				t.nics = nics[fast_rng_below(&rng, 3)];
				for (uint32_t s = 0; s < N; s++)
					unit_set_nic(&t, s, (uint32_t)fast_rng_below(&rng, t.nics),
						fast_rng_below(&rng, 2) ? 0.0 : 0.3);
				fast_limits_default(&lim);
				fast_gen_defaults(&g);
				g.pattern = pats[pt];
				g.ng = N * 8;
				g.seed = fast_rng_next(&rng);
				g.mean_bytes = UINT64_C(1) << z;
				CU_ASSERT_EQUAL_FATAL(fast_gen_traffic(&g, &lim, &tr, &err), 0);
				fast_auto_choose(&t, tr.m[0].bytes, NULL, &c);
				fast_auto_predict(&t, tr.m[0].bytes, NULL, &p);
				CU_ASSERT_EQUAL(c.best, p.best);
				for (uint32_t a = 0; a < c.n; a++)
					CU_ASSERT(c.sim_s[a] + c.synth_s[a] <=
						  (p.sim_s[a] + p.synth_s[a]) * (1 + 1e-12));
				cases++;
				fast_traffic_free(&tr);
			}
	CU_ASSERT_EQUAL(cases, 27);
}

UNIT_MAIN("auto_ports",
	  UNIT_TEST(test_auto_ports__fanout_volume_on_the_ports),
	  UNIT_TEST(test_auto_ports__a_slow_nic_slows_the_predictions),
	  UNIT_TEST(test_auto_ports__baselines_track_the_simulator),
	  UNIT_TEST(test_auto_ports__decision_is_the_full_predictions_choice))
