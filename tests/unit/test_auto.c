/*
 * test_auto.c - `--algo auto` (lib/compile/algo_auto*.c): the closed-form predictor
 * against the simulator on seeded cases, the choice against the simulated
 * times of every candidate (byte and token traffic), determinism, and what
 * an auto plan records.  The feature pass: test_auto_feat.c.
 *
 * lib/compile/algo_auto*.c are included, as test_exec includes exec/, so that
 * their static functions can be called.
 */
#include <math.h>
#include <string.h>

#include "lib/compile/algo_auto.c"
#include "lib/compile/algo_auto_feat.c"
#include "lib/compile/algo_auto_model.c"
#include "lib/compile/algo_auto_tokens.c"
#include "lib/workload/gen.h"
#include "fast/sim.h"
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
	struct fast_matrix mx = fast_matrix_of(D, fast_topo_ngpus(t));
	CU_ASSERT_EQUAL_FATAL(fast_compile(algo, t, &mx, NULL, &p, &err), 0);
	CU_ASSERT_EQUAL_FATAL(unit_sim(t, &p, NULL, &so, &r, &err), 0);
	time_s = r.time_s;
	fast_sim_result_free(&r);
	fast_plan_free(&p);
	return time_s;
}

/* Every candidate's predicted T_sim within a factor of the simulated one
 * (the bound: the largest error measured on these cases, docs/algorithms.md) */
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
		struct fast_auto_choice c, p; /* p: the full predictions, its S exact */
		double best = INFINITY, chosen = 0;
		setup(&samples[k], &t, &tr);
		fast_auto_choose(&t, tr.m[0].bytes, NULL, &c);
		fast_auto_predict(&t, tr.m[0].bytes, NULL, &p);
		for (uint32_t a = 0; a < c.n; a++) {
			double T = simulate(c.algo[a], &t, tr.m[0].bytes) + p.synth_s[a];
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
	struct fast_matrix mx = fast_matrix_of(tr.m[0].bytes, fast_topo_ngpus(&t));
	CU_ASSERT_EQUAL_FATAL(fast_compile("auto", &t, &mx, NULL, &pa, &err), 0);
	CU_ASSERT_EQUAL_FATAL(fast_compile(c1.algo[c1.best], &t, &mx, NULL, &pc, &err), 0);
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

/* The decision (fast_auto_choose, which may stop at the floors under
 * spreadout's, FAST's and hier's predictions) chooses what the full prediction
 * chooses, with the same predictions but those floors, on seeded matrices of both
 * presets, dense and sparse, 4 KiB to 1 GiB per pair; the floor is taken
 * on some and the second pass on others */
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
							double tc = c.sim_s[a] + c.synth_s[a], tp = p.sim_s[a] + p.synth_s[a];
							if (strcmp(c.algo[a], "spreadout") != 0 && strcmp(c.algo[a], "fast") != 0 &&
							    strcmp(c.algo[a], "hier") != 0) {
								CU_ASSERT_EQUAL(c.synth_s[a], p.synth_s[a]);
								CU_ASSERT_EQUAL(c.sim_s[a], p.sim_s[a]);
							} else { /* a floor, or the full prediction */
								CU_ASSERT(tc <= tp);
								floors += tc < tp;
								full += c.sim_s[a] == p.sim_s[a] && c.synth_s[a] == p.synth_s[a];
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
 * (FAST groups its stages here: its own model's; packing them it would be
 * more, packed_synth in lib/compile/algo_auto_model.c) */
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
		CU_ASSERT_EQUAL(c.synth_s[k], fast_auto_synth_model(a->name, 4, 8, 32 * 24));
		k++;
	}
	CU_ASSERT_EQUAL(k, c.n);
	fast_traffic_free(&tr);
}

/* --- token traffic ------------------------------------------------------ */

/* Simulated time (the simulator's defaults, as the commands run it) of
 * plan p, compiled for matrix m. */
static double sim_time_of(const struct fast_topo *t, const struct fast_matrix *m,
		       const struct fast_plan *p)
{
	struct fast_sim_result r;
	struct fast_sim_opts so;
	struct fast_err err;
	double time_s;

	fast_sim_opts_default(&so);
	so.traffic = m->bytes;
	CU_ASSERT_EQUAL_FATAL(unit_sim(t, p, m, &so, &r, &err), 0);
	time_s = r.time_s;
	fast_sim_result_free(&r);
	return time_s;
}

/* Simulated time of algo compiled for matrix m with dedup d. */
static double simulate_compiled(const char *algo, enum fast_dedup_mode d,
				const struct fast_algo_opts *base, const struct fast_topo *t,
				const struct fast_matrix *m)
{
	struct fast_algo_opts o = *base;
	struct fast_plan p;
	struct fast_err err;
	double time_s;

	o.dedup = d;
	CU_ASSERT_EQUAL_FATAL(fast_compile(algo, t, m, &o, &p, &err), 0);
	time_s = sim_time_of(t, m, &p);
	fast_plan_free(&p);
	return time_s;
}

/* Seeded random MoE token traffic (dispatch and combine of one step) on a
 * random preset, servers and GPUs: case i's topology into *t. */
static void token_case(uint32_t i, struct fast_topo *t, struct fast_traffic *tr)
{
	static const char *presets[] = { "h200", "mi300x-100g", "mi300x" };
	static const uint32_t gpus[] = { 2, 4, 8 };
	static const double alphas[] = { 0, 0.6, 1.2, 2.0 };
	struct fast_rng rng;
	struct fast_limits lim;
	struct fast_gen_opts g;
	struct fast_err err;
	uint64_t x;
	uint32_t N, G;

	fast_rng_seed(&rng, i);
	x = fast_rng_next(&rng);
	N = 2 + (uint32_t)(x % 3), G = gpus[(x >> 8) % 3];

	fast_limits_default(&lim);
	CU_ASSERT_EQUAL_FATAL(fast_topo_preset(presets[(x >> 16) % 3], N, G, &lim, t, &err), 0);
	fast_gen_defaults(&g);
	g.pattern = FAST_GEN_MOE;
	g.ng = N * G;
	g.seed = i;
	g.moe.groups = true;
	g.moe.tokens = 8u << ((x >> 20) % 5);                /* 8 .. 128 per GPU */
	g.moe.experts = g.ng << ((x >> 24) % 3);             /* 1, 2, 4 per GPU */
	g.moe.topk = 1 + (uint32_t)((x >> 28) % 8);
	if (g.moe.topk > g.moe.experts)
		g.moe.topk = g.moe.experts;
	g.moe.alpha = alphas[(x >> 32) % 4];
	g.moe.token_bytes = UINT64_C(1024) << ((x >> 36) % 7); /* 1 KiB .. 64 KiB */
	CU_ASSERT_EQUAL_FATAL(fast_gen_traffic(&g, &lim, tr, &err), 0);
}

#define TOKEN_CASES 250 /* two matrices each: 500 cases */

/* Every plan token traffic allows, in auto's order (auto.h): each
 * algorithm's token plan (dedup=server; fast, hier) before its byte plan
 * (dedup=gpu).  Written out here, not taken from auto.c. */
static const struct {
	const char *algo;
	enum fast_dedup_mode dedup;
} token_plans[] = {
	{ "fast", FAST_DEDUP_SERVER }, { "fast", FAST_DEDUP_GPU },      { "fanout", FAST_DEDUP_GPU },
	{ "nccl", FAST_DEDUP_GPU },    { "pxn", FAST_DEDUP_GPU },       { "spreadout", FAST_DEDUP_GPU },
	{ "hier", FAST_DEDUP_SERVER }, { "hier", FAST_DEDUP_GPU },
};
#define NPLANS (sizeof token_plans / sizeof token_plans[0])

/* The simulated time of auto's plan for m with options o (its evaluator,
 * dedup), auto's choice into *c. */
static double simulate_auto(const struct fast_algo_opts *o, const struct fast_topo *t,
			    const struct fast_matrix *m, struct fast_auto_choice *c)
{
	struct fast_plan p;
	struct fast_err err;
	double time_s;

	CU_ASSERT_EQUAL_FATAL(fast_compile("auto", t, m, o, &p, &err), 0);
	time_s = sim_time_of(t, m, &p);
	fast_plan_free(&p);
	CU_ASSERT_EQUAL_FATAL(fast_auto_choose_matrix(t, m, o, c, NULL, &err), 0);
	return time_s;
}

/* Property (issue 23, its Done-when): on token traffic auto weighs every
 * plan the traffic allows, each algorithm's byte plan (dedup=gpu) and
 * fast's and hier's token plans (dedup=server).  With the simulator as
 * its evaluator (what every command and the executor give it), the plan
 * it compiles, simulated here, is within its stated tolerance (3% + 0.5
 * us) of the best of those plans, each compiled and simulated here, and
 * so within it of the default schedule (fast, dedup=server): on every one
 * of the 500 cases.  With --dedup gpu, the same over the byte plans (every
 * fifth case).  Without an evaluator (a lib-only caller) the closed form
 * decides: its record is kept below. */
static void test_auto__tokens_choice_near_the_best_simulated(void)
{
	uint32_t cases = 0, near = 0, over_def = 0, token_wins = 0, pred_near = 0, pred_over_def = 0,
		 gpu_cases = 0, gpu_near = 0;
	double worst = 0, pred_worst = 0;
	struct fast_algo_opts sim_o, gpu_o, pred_o;

	fast_algo_opts_default(&pred_o);
	sim_o = pred_o;
	sim_o.eval = fast_sim_evaluator();
	gpu_o = sim_o;
	gpu_o.dedup = FAST_DEDUP_GPU;
	for (uint32_t i = 0; i < TOKEN_CASES; i++) {
		struct fast_topo t;
		struct fast_traffic tr;
		token_case(i, &t, &tr);
		for (uint32_t mi = 0; mi < tr.count; mi++) {
			const struct fast_matrix *m = &tr.m[mi];
			struct fast_auto_choice c, pred;
			struct fast_err err;
			double best = INFINITY, best_gpu = INFINITY, sim[NPLANS], def, T, Tp;
			uint32_t arg = 0;
			CU_ASSERT(m->kind == FAST_TRAFFIC_DISPATCH || m->kind == FAST_TRAFFIC_COMBINE);
			for (uint32_t k = 0; k < NPLANS; k++) {
				sim[k] = simulate_compiled(token_plans[k].algo, token_plans[k].dedup, &pred_o,
							   &t, m);
				if (sim[k] < best)
					best = sim[k], arg = k;
				if (token_plans[k].dedup == FAST_DEDUP_GPU)
					best_gpu = fmin(best_gpu, sim[k]);
			}
			def = sim[0]; /* fast, dedup=server: the default schedule */
			T = simulate_auto(&sim_o, &t, m, &c);
			cases++;
			CU_ASSERT(c.evaluated && c.n == NPLANS);
			for (uint32_t k = 0; k < c.n && k < NPLANS; k++)
				CU_ASSERT(strcmp(c.algo[k], token_plans[k].algo) == 0 &&
					  c.dedup[k] == token_plans[k].dedup);
			/* the simulator is deterministic: auto's plan is the
			 * candidate it names, simulated alike */
			CU_ASSERT_EQUAL(T, sim[c.best]);
			token_wins += c.dedup[c.best] == FAST_DEDUP_SERVER;
			near += T <= best * (1 + TIE_REL) + TIE_ABS_S;
			over_def += T > def * (1 + TIE_REL) + TIE_ABS_S;
			worst = fmax(worst, T / def);
			CU_ASSERT(T <= best * (1 + TIE_REL) + TIE_ABS_S);
			CU_ASSERT(T <= def * (1 + TIE_REL) + TIE_ABS_S);
			/* the closed form (no evaluator): the same candidates */
			CU_ASSERT_EQUAL_FATAL(fast_auto_choose_matrix(&t, m, &pred_o, &pred, NULL, &err), 0);
			CU_ASSERT(!pred.evaluated && pred.n == NPLANS);
			Tp = sim[pred.best];
			pred_near += Tp <= best * (1 + TIE_REL) + TIE_ABS_S;
			pred_over_def += Tp > def * (1 + TIE_REL) + TIE_ABS_S;
			pred_worst = fmax(pred_worst, Tp / def);
			if (cases % 5 == 0) { /* --dedup gpu: byte plans only */
				double Tg = simulate_auto(&gpu_o, &t, m, &c);
				gpu_cases++;
				CU_ASSERT(c.evaluated && c.n == 6 && c.dedup[c.best] == FAST_DEDUP_GPU);
				gpu_near += Tg <= best_gpu * (1 + TIE_REL) + TIE_ABS_S;
			}
#ifdef AUTO_TOKENS_VERBOSE
			if (Tp > best * (1 + TIE_REL) + TIE_ABS_S)
				fprintf(stderr, "case %u/%u %s %ux%u: predicted %s:%d %.2f us, best %s:%d %.2f us\n",
					i, mi, t.name, t.servers, t.gpus, pred.algo[pred.best],
					pred.dedup[pred.best], Tp * 1e6, token_plans[arg].algo,
					token_plans[arg].dedup, best * 1e6);
#else
			(void)arg;
#endif
		}
		fast_traffic_free(&tr);
	}
#ifdef AUTO_TOKENS_VERBOSE
	fprintf(stderr, "\ntokens: %u cases; by simulation within the band of the best %u, over the "
		"default's band %u, worst / default %.3f, token plans chosen %u; closed form: %u, %u, "
		"%.3f; dedup=gpu: %u of %u\n",
		cases, near, over_def, worst, token_wins, pred_near, pred_over_def, pred_worst, gpu_near,
		gpu_cases);
#endif
	CU_ASSERT(cases >= 500);
	CU_ASSERT_EQUAL(near, cases);
	CU_ASSERT_EQUAL(over_def, 0);
	CU_ASSERT_EQUAL(gpu_near, gpu_cases);
	CU_ASSERT(gpu_cases >= 100);
	CU_ASSERT(token_wins > 0 && token_wins < cases); /* both kinds of plan are chosen */
	/* the closed form's record on these cases (its token predictions err
	 * by 0.6-1.4x): with FAST's grouped rail steps and two waves in
	 * flight predicted, 400 of 500 within the band of the best, 13 over
	 * the default's band, at worst 1.285 x the default (staged only: 347,
	 * 25 and 1.29; before the implementations: 379, 30 and 1.29); asserted
	 * with a margin so that it does not get worse unnoticed */
	CU_ASSERT(pred_near >= 385);
	CU_ASSERT(pred_over_def <= 20);
	CU_ASSERT(pred_worst <= 1.32);
}

UNIT_MAIN("auto",
	  UNIT_TEST(test_auto__predictor_tracks_simulation),
	  UNIT_TEST(test_auto__choice_near_the_best),
	  UNIT_TEST(test_auto__deterministic_plan_of_the_choice),
	  UNIT_TEST(test_auto__empty_matrix_chooses_fast),
	  UNIT_TEST(test_auto__decision_is_the_full_predictions_choice),
	  UNIT_TEST(test_auto__candidates_are_the_table_in_order),
	  UNIT_TEST(test_auto__the_diagonal_is_no_traffic),
	  UNIT_TEST(test_auto__tokens_choice_near_the_best_simulated))
