/*
 * test_eval.c - the case evaluator (include/fast/eval.h) against the naive
 * reference it replaces: each row's plan compiled and simulated on its own
 * (fast_compile, fast_sim_run on its view) and the bound computed apart give
 * the same times, bandwidths and bound; auto's row on token traffic, whose
 * simulation is its decision's, is the chosen plan simulated afresh, with
 * the default simulator options and with others; a failed row stops the
 * case with its stage; synthesis is timed for compiled rows only.
 */
#include <CUnit/Basic.h>

#include "unit.h"
#include <math.h>

#include "fast/eval.h"
#include "tok.h"

static struct fast_topo preset(uint32_t N, uint32_t G)
{
	struct fast_limits lim;
	struct fast_topo t;
	struct fast_err err;

	fast_limits_default(&lim);
	if (fast_topo_preset("h200", N, G, &lim, &t, &err) < 0)
		tok_die(err.msg);
	return t;
}

/* Random byte traffic on ng GPUs (seeded). */
static void byte_traffic(struct fast_traffic *tr, uint32_t ng, uint64_t seed)
{
	struct fast_limits lim;
	struct fast_err err;
	struct fast_rng rng;

	fast_limits_default(&lim);
	if (fast_traffic_alloc(tr, ng, 1, &lim, &err) < 0)
		tok_die(err.msg);
	fast_rng_seed(&rng, seed);
	for (uint64_t i = 0; i < (uint64_t)ng * ng; i++)
		tr->m[0].bytes[i] = (1 + fast_rng_below(&rng, 1024)) * 4096;
}

/* Row k of r against row algo compiled and simulated on its own. */
static void check_row(const struct fast_topo *t, const struct fast_matrix *m,
		      const struct fast_case *c, const struct fast_case_row *w, const char *algo)
{
	struct fast_sim_opts so = c->sim;
	struct fast_sim_result ref;
	struct fast_plan p;
	struct fast_err err;
	struct fast_algo_opts o;

	fast_algo_opts_default(&o);
	o.eval = fast_sim_evaluator();
	CU_ASSERT_FATAL(w->evaluated && w->simulated && w->plan);
	CU_ASSERT_FATAL(fast_compile(algo, t, m, &o, &p, &err) == 0);
	CU_ASSERT_EQUAL(p.nsteps, w->plan->nsteps);
	so.traffic = m->bytes;
	CU_ASSERT_FATAL(unit_sim(t, &p, m, &so, &ref, &err) == 0);
	CU_ASSERT_EQUAL(ref.time_s, w->sim.time_s);
	CU_ASSERT_EQUAL(ref.algbw_GBps, w->sim.algbw_GBps);
	CU_ASSERT_EQUAL(ref.nsteps, w->sim.nsteps);
	fast_sim_result_free(&ref);
	fast_plan_free(&p);
}

/* Every row of a case of algos on m, then each against the reference. */
static void check_case(const struct fast_topo *t, const struct fast_matrix *m,
		       const struct fast_sim_opts *so)
{
	static const char *const algos[] = { "fast", "nccl", "hier", "auto" };
	struct fast_case_algo a[4];
	struct fast_case c;
	struct fast_case_result r;
	struct fast_bound b;
	struct fast_err err;

	fast_case_init(&c, t, m);
	c.sim = *so;
	c.algos = a;
	c.nalgos = 4;
	for (uint32_t k = 0; k < 4; k++) {
		a[k] = (struct fast_case_algo){ .algo = algos[k] };
		fast_algo_opts_default(&a[k].opts);
		a[k].opts.eval = fast_sim_evaluator();
	}
	CU_ASSERT_FATAL(fast_case_eval(&c, &r, &err) == 0);
	CU_ASSERT_FATAL(fast_bound_compute(t, m, false, &b, &err) == 0);
	CU_ASSERT(r.bounded);
	CU_ASSERT_EQUAL(r.bound.lp_s, b.lp_s);
	CU_ASSERT_EQUAL(r.bound.closed_s, b.closed_s);
	for (uint32_t k = 0; k < 4; k++)
		check_row(t, m, &c, &r.rows[k], algos[k]);
	CU_ASSERT(r.rows[3].is_auto && r.rows[3].ncand > 1 && r.rows[3].chosen < r.rows[3].ncand);
	CU_ASSERT(isnan(r.rows[0].synth_s)); /* not asked */
	fast_case_result_free(&r);
	fast_case_result_free(&r); /* idempotent */
}

static void test_eval__bytes_match_reference(void)
{
	struct fast_topo t = preset(2, 4);
	struct fast_sim_opts so;
	struct fast_traffic tr;

	fast_sim_opts_default(&so);
	for (uint64_t seed = 1; seed <= 3; seed++) {
		byte_traffic(&tr, 8, seed);
		check_case(&t, &tr.m[0], &so);
		fast_traffic_free(&tr);
	}
}

/* auto on token traffic keeps its chosen candidate's simulation (default
 * options) or simulates it again (others): either way the reference's. */
static void test_eval__tokens_auto_row_is_the_chosen_plan_simulated(void)
{
	struct fast_topo t = preset(2, 4);
	struct fast_sim_opts so;
	struct fast_traffic tr;
	struct fast_rng rng;

	for (int opts = 0; opts < 2; opts++) {
		fast_sim_opts_default(&so);
		so.congestion = opts == 0;
		fast_rng_seed(&rng, 7);
		tok_init(&tr, 8, FAST_TRAFFIC_DISPATCH, 4096);
		tok_random_groups(&tr, &rng, 40, 4, 4, 16);
		tok_done(&tr);
		check_case(&t, &tr.m[0], &so);
		fast_traffic_free(&tr);
	}
}

/* A case of the n rows a on m, each row's options the defaults. */
static void rows_case(struct fast_case *c, const struct fast_topo *t, const struct fast_matrix *m,
		      struct fast_case_algo *a, uint32_t n)
{
	for (uint32_t k = 0; k < n; k++)
		fast_algo_opts_default(&a[k].opts);
	fast_case_init(c, t, m);
	c->algos = a;
	c->nalgos = n;
}

static void test_eval__failed_row_stops_the_case(void)
{
	struct fast_topo t = preset(2, 2);
	struct fast_case_algo a[2] = { { .algo = "nope" }, { .algo = "fast" } };
	struct fast_case c;
	struct fast_case_result r;
	struct fast_traffic tr;
	struct fast_err err;

	byte_traffic(&tr, 4, 1);
	rows_case(&c, &t, &tr.m[0], a, 2);
	CU_ASSERT_EQUAL(fast_case_eval(&c, &r, &err), FAST_EUSAGE);
	CU_ASSERT_PTR_NOT_NULL_FATAL(r.rows);
	CU_ASSERT_EQUAL(r.rows[0].rc, FAST_EUSAGE);
	CU_ASSERT_STRING_EQUAL(r.rows[0].stage, "plan");
	CU_ASSERT_STRING_EQUAL(r.rows[0].err.msg, err.msg);
	CU_ASSERT(!r.rows[0].evaluated && !r.rows[1].evaluated && !r.rows[1].simulated);
	CU_ASSERT(r.bounded); /* the bound does not depend on the rows */
	fast_case_result_free(&r);
	fast_traffic_free(&tr);
}

static void test_eval__synthesis_timed_for_compiled_rows(void)
{
	struct fast_topo t = preset(2, 2);
	struct fast_case_algo a[3] = { { .algo = "fast" }, { .algo = "auto" }, { .algo = NULL } };
	struct fast_case c;
	struct fast_case_result r;
	struct fast_traffic tr;
	struct fast_plan given;
	struct fast_err err;

	byte_traffic(&tr, 4, 2);
	rows_case(&c, &t, &tr.m[0], a, 3);
	CU_ASSERT_FATAL(fast_compile("nccl", &t, &tr.m[0], &a[0].opts, &given, &err) == 0);
	a[2].plan = &given;
	c.synthesis = true;
	c.bound = FAST_CASE_BOUND_CLOSED;
	CU_ASSERT_FATAL(fast_case_eval(&c, &r, &err) == 0);
	CU_ASSERT(r.rows[0].synth_s > 0 && isnan(r.rows[0].decision_s));
	CU_ASSERT(r.rows[1].decision_s > 0 && r.rows[1].synth_s >= r.rows[1].decision_s);
	CU_ASSERT(isnan(r.rows[2].synth_s)); /* a given plan has none */
	CU_ASSERT(r.rows[2].plan == &given && r.rows[2].simulated);
	CU_ASSERT(r.bounded && r.bound.closed_s > 0);
	fast_case_result_free(&r);
	fast_plan_free(&given);
	fast_traffic_free(&tr);
}

UNIT_MAIN("eval",
	  UNIT_TEST(test_eval__bytes_match_reference),
	  UNIT_TEST(test_eval__tokens_auto_row_is_the_chosen_plan_simulated),
	  UNIT_TEST(test_eval__failed_row_stops_the_case),
	  UNIT_TEST(test_eval__synthesis_timed_for_compiled_rows))
