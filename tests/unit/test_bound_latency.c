/*
 * test_bound_latency.c - the combined bound (bound.h bound_s: the
 * bandwidth bounds shifted by what a plan waits before its first byte on
 * a tier flows, docs/DESIGN.md "The latency floor") against closed forms,
 * and the property it must keep: on random cases of every shape (1 x G,
 * N x 1, 2 x 2 up to 3 x 8, mesh and switch, the h200 and mi300x presets,
 * K NICs per server, random alpha and step overheads including 0, sizes
 * from a byte to MiB, sparse matrices and silent GPUs, token traffic),
 * no plan of any schedule that the checker accepts simulates (by step and
 * by rank) in less time than bound_s.
 */
#include <CUnit/Basic.h>

#include "unit.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fast/algo.h"
#include "fast/common.h"
#include "fast/plan.h"
#include "tok.h"

#define CASES 1000

/* 2 x 2 switch, scale-up 1 us + 3 us, scale-out 2 us + 5 us at 10 GB/s:
 * one byte across servers gives 7 us + 0.1 ns, one within a server
 * min(4, 7) us + its LP term; no bytes, 0. */
static void test_bound__latency_closed_forms(void)
{
	struct fast_topo t = unit_topo(2, 2, FAST_UP_SWITCH, (struct fast_tier){ 100.0, 1.0, 1.0, 3.0 },
				       (struct fast_tier){ 10.0, 2.0, 1.0, 5.0 });
	uint64_t D[16] = { 0 };
	struct fast_bound b;
	struct fast_err err = { 0 };

	CU_ASSERT_FATAL(unit_bound(&t, D, false, &b, &err) == 0);
	CU_ASSERT_EQUAL(b.bound_s, 0.0);
	CU_ASSERT_EQUAL(b.latency_s, 0.0);
	D[0 * 4 + 2] = 1000;
	CU_ASSERT_FATAL(unit_bound(&t, D, false, &b, &err) == 0);
	CU_ASSERT(fabs(b.latency_s - 7e-6) < 1e-15);
	CU_ASSERT(fabs(b.bound_s - (7e-6 + 1000 / 20e9)) < 1e-15);
	CU_ASSERT(b.lp_s > 0 && b.lp_s < b.bound_s); /* the LP stays bandwidth only */
	CU_ASSERT_FATAL(unit_bound(&t, D, true, &b, &err) == 0);
	CU_ASSERT(fabs(b.bound_s - (7e-6 + 1000 / 20e9)) < 1e-15);
	D[0 * 4 + 2] = 0;
	D[0 * 4 + 1] = 1000;
	CU_ASSERT_FATAL(unit_bound(&t, D, false, &b, &err) == 0);
	CU_ASSERT(fabs(b.latency_s - 4e-6) < 1e-15);
	CU_ASSERT(fabs(b.bound_s - (4e-6 + b.lp_s)) < 1e-15);
}

/* A random tier: bandwidth 10..400 GB/s, alpha and overhead 0 (one time
 * in four each) or up to 20 us. */
static struct fast_tier rand_tier(struct fast_rng *rng)
{
	struct fast_tier x = { 10.0 + 390.0 * fast_rng_double(rng), 0.0, 1.0, 0.0 };

	if (fast_rng_below(rng, 4))
		x.latency_us = 20.0 * fast_rng_double(rng);
	if (fast_rng_below(rng, 4))
		x.step_overhead_us = 20.0 * fast_rng_double(rng);
	x.efficiency = 0.5 + 0.5 * fast_rng_double(rng);
	return x;
}

/* Case i's topology: a shape of the list, mesh or switch, or a preset
 * with its latencies replaced one time in two. */
static struct fast_topo rand_topo(struct fast_rng *rng)
{
	static const uint32_t shapes[][2] = { { 1, 4 }, { 1, 8 }, { 3, 1 }, { 5, 1 }, { 2, 2 },
					      { 2, 4 }, { 4, 4 }, { 3, 8 } };
	static const char *presets[] = { "h200", "mi300x-100g" };
	const uint32_t *sh = shapes[fast_rng_below(rng, 8)];
	struct fast_topo t;
	struct fast_limits lim;
	struct fast_err err = { 0 };

	if (fast_rng_below(rng, 4) == 0) {
		fast_limits_default(&lim);
		CU_ASSERT_FATAL(fast_topo_preset(presets[fast_rng_below(rng, 2)], 1 + (uint32_t)fast_rng_below(rng, 4),
						 8, &lim, &t, &err) == 0);
		if (fast_rng_below(rng, 2)) {
			t.up.latency_us = rand_tier(rng).latency_us;
			t.out.step_overhead_us = rand_tier(rng).step_overhead_us;
		}
		return t;
	}
	t = unit_topo(sh[0], sh[1], fast_rng_below(rng, 2) ? FAST_UP_MESH : FAST_UP_SWITCH,
		      rand_tier(rng), rand_tier(rng));
	t.congestion = (struct fast_congestion){ 1.0, 0.0, 1.0 };
	if (sh[1] % 2 == 0 && fast_rng_below(rng, 3) == 0)
		t.nics = sh[1] / 2;
	return t;
}

/* A random matrix: each pair present with probability 1/2 or 1 (dense),
 * a GPU silent one time in eight, sizes log-uniform from 1 B to 4 MiB or
 * all tiny (1..4096 B). */
static void rand_matrix(struct fast_rng *rng, uint64_t *D, uint32_t ng)
{
	bool dense = fast_rng_below(rng, 2), tiny = fast_rng_below(rng, 2);

	for (uint32_t i = 0; i < ng; i++) {
		bool silent = fast_rng_below(rng, 8) == 0;
		for (uint32_t j = 0; j < ng; j++) {
			uint64_t *d = &D[(size_t)i * ng + j];
			*d = 0;
			if (i == j || silent || (!dense && fast_rng_below(rng, 2)))
				continue;
			*d = tiny ? 1 + fast_rng_below(rng, 4096)
				  : (uint64_t)exp(fast_rng_double(rng) * log(4.0 * 1048576));
		}
	}
}

/* Simulate p both ways; count the runs and fail (with the case) on one
 * below the bound (slack 1e-9 relative). */
static void sim_both(const struct fast_topo *t, const struct fast_plan *p, const struct fast_matrix *mx,
		     const struct fast_bound *b, const char *algo, int ci, unsigned *runs, double *tight)
{
	for (int m = FAST_SIM_SYNC_STEP; m <= FAST_SIM_SYNC_RANK; m++) {
		struct fast_sim_opts o;
		struct fast_sim_result r;
		struct fast_err err = { 0 };
		fast_sim_opts_default(&o);
		o.sync = (enum fast_sim_sync)m;
		if (unit_sim(t, p, mx, &o, &r, &err) != 0) {
			fprintf(stderr, "case %d %s: sim: %s\n", ci, algo, err.msg);
			CU_FAIL("sim");
			continue;
		}
		(*runs)++;
		if (b->bound_s > 0 && r.time_s / b->bound_s < *tight)
			*tight = r.time_s / b->bound_s;
		if (!(r.time_s >= b->bound_s * (1 - 1e-9))) {
			fprintf(stderr, "case %d %s (sync %d) on %ux%u: sim %.9g < bound %.9g\n", ci, algo, m,
				t->servers, t->gpus, r.time_s, b->bound_s);
			CU_FAIL("simulated below the bound");
		}
		fast_sim_result_free(&r);
	}
}

struct tally {
	unsigned runs, refused, token_cases;
	double tight;
};

/* Every schedule's plan for mx that the checker accepts, simulated both
 * ways against mx's bound. */
static void run_case(const struct fast_topo *t, const struct fast_matrix *mx, int ci, struct tally *y)
{
	struct fast_bound b;
	struct fast_err err = { 0 };

	CU_ASSERT_FATAL(fast_bound_compute(t, mx, false, &b, &err) == 0);
	CU_ASSERT(b.bound_s >= b.lp_s && b.bound_s >= b.closed_s);
	for (const struct fast_algo *al = fast_algos; al->name; al++) {
		struct fast_algo_opts ao;
		struct fast_plan p;
		fast_algo_opts_default(&ao);
		if (fast_compile(al->name, t, mx, &ao, &p, &err) != 0) {
			y->refused++;
			continue;
		}
		if (unit_check_matrix(&p, t, mx, &err) == 0)
			sim_both(t, &p, mx, &b, al->name, ci, &y->runs, &y->tight);
		else
			y->refused++;
		fast_plan_free(&p);
	}
}

/* One case in five is token traffic (dispatch or combine, 1..7168 bytes a
 * token, random groups), the rest byte matrices. */
static void test_bound__latency_never_beaten(void)
{
	struct fast_rng rng;
	struct tally y = { 0, 0, 0, HUGE_VAL };
	int ncases = unit_cases(CASES);

	fast_rng_seed(&rng, 2505);
	for (int ci = 0; ci < ncases; ci++) {
		struct fast_topo t = rand_topo(&rng);
		uint32_t ng = fast_topo_ngpus(&t);
		struct fast_matrix mx;

		if (fast_rng_below(&rng, 5) == 0) {
			struct fast_traffic tr;
			enum fast_traffic_kind k = fast_rng_below(&rng, 2) ? FAST_TRAFFIC_DISPATCH
									   : FAST_TRAFFIC_COMBINE;
			tok_init(&tr, ng, k, 1 + fast_rng_below(&rng, 7168));
			tok_random_groups(&tr, &rng, 1 + (uint32_t)fast_rng_below(&rng, 3 * ng),
					  ng < 6 ? ng : 6, t.gpus, 64);
			tok_done(&tr);
			run_case(&t, &tr.m[0], ci, &y);
			y.token_cases++;
			fast_traffic_free(&tr);
			continue;
		}
		uint64_t *D = calloc((size_t)ng * ng, sizeof *D);
		CU_ASSERT_FATAL(D != NULL);
		rand_matrix(&rng, D, ng);
		mx = fast_matrix_of(D, ng);
		run_case(&t, &mx, ci, &y);
		free(D);
	}
	fprintf(stderr, "\n  %d cases (%u of token traffic), %u simulations, %u plans not made "
		"or refused, smallest time / bound %.6f\n", ncases, y.token_cases, y.runs, y.refused, y.tight);
	CU_ASSERT(y.runs >= 2 * (unsigned)ncases);
}

UNIT_MAIN("bound_latency", UNIT_TEST(test_bound__latency_closed_forms),
	  UNIT_TEST(test_bound__latency_never_beaten))
