/*
 * test_grouped.c - rail steps of several permutations (plan.h, RAIL;
 * docs/formats.md, plan version 4): what a grouped step lets each lane
 * carry, its expansion, validation, the file format, the checker (a FAST
 * plan's grouped step may send from a NIC to as many NICs as it has
 * permutations; the same transfers in an explicit step may not), and the
 * simulator (one step's costs, incast at k senders); and FAST's choice of
 * grouping (compile_fast_group.c): one step of all where the per-step
 * cost dominates, one permutation a step where there is none, the one
 * step's model against the simulator, and its recursion over groups
 * (fast_group_chain, which stops lengthening a group on a bound) equal to
 * the plain recursion that tries every group.
 */
#define _POSIX_C_SOURCE 200809L
#include <CUnit/Basic.h>

#include "unit.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fast/algo.h"
#include "fast/check.h"
#include "fast/plan.h"
#include "fast/sim.h"
#include "lib/compile/compile_fast_internal.h" /* fast_group_chain */
#include "plan_fix.h"                          /* write_set() */

#define N3 3
#define G2 2
#define NG (N3 * G2)

/* D[s][d] = 10 + s + d between servers, 0 within. */
static void matrix(uint64_t *D)
{
	for (uint32_t s = 0; s < NG; s++)
		for (uint32_t d = 0; d < NG; d++)
			D[s * NG + d] = s / G2 == d / G2 ? 0 : 10 + s + d;
}

/* Lane (A -> B, i) unbalanced: GPU A_i's messages to B_0 and B_1. */
static uint64_t lane_bytes(const uint64_t *D, uint32_t a, uint32_t b, uint32_t i)
{
	return D[(a * G2 + i) * NG + b * G2] + D[(a * G2 + i) * NG + b * G2 + 1];
}

/* A FAST plan of 3 x 2: the lanes, one rail step of the two shifts (each
 * budget the largest lane of its shift) and its redistribution. */
static void build(struct fast_plan *p, const uint64_t *D)
{
	struct fast_err err;
	uint32_t perms[2 * N3] = { 1, 2, 0, 2, 0, 1 };
	uint64_t w[2] = { 0, 0 };

	fast_plan_init(p, N3, G2, "fast");
	for (uint32_t a = 0; a < N3; a++)
		for (uint32_t b = 0; b < N3; b++)
			for (uint32_t i = 0; i < G2 && a != b; i++) {
				uint64_t lb = lane_bytes(D, a, b, i);
				uint32_t s = (b + N3 - a) % N3 - 1;
				OK(fast_plan_add_lane(p, a, b, i, &err));
				for (uint32_t j = 0; j < G2; j++)
					OK(fast_plan_add_lane_piece(p, a * G2 + i, b * G2 + j, 0,
								    D[(a * G2 + i) * NG + b * G2 + j],
								    &err));
				if (lb > w[s])
					w[s] = lb;
			}
	CU_ASSERT_EQUAL(fast_plan_add_step(p, FAST_STEP_RAIL, FAST_TIER_OUT, &err), 0);
	OK(fast_plan_set_perms(p, 2, perms, w, &err));
	CU_ASSERT_EQUAL(fast_plan_add_step(p, FAST_STEP_REDIST, FAST_TIER_UP, &err), 1);
	OK(fast_plan_add_dep(p, 1, 0, false, &err));
	OK(fast_plan_set_redist(p, 0, &err));
}

static void test_grouped__rail_row_sums_budgets_by_destination(void)
{
	struct fast_plan p;
	struct fast_err err;
	uint32_t perms[2 * N3] = { 1, 0, 2, 1, 2, 0 }, to[2];
	uint64_t w[2], bud[2] = { 5, 7 };

	fast_plan_init(&p, N3, G2, "fast");
	OK(fast_plan_add_step(&p, FAST_STEP_RAIL, FAST_TIER_OUT, &err));
	OK(fast_plan_set_perms(&p, 2, perms, bud, &err));
	/* server 0 goes to 1 in both: one destination, 5 + 7 */
	CU_ASSERT_EQUAL(fast_plan_rail_row(&p, &p.steps[0], 0, to, w), 1);
	CU_ASSERT(to[0] == 1 && w[0] == 12);
	/* server 1: to 0 (5), to 2 (7), ascending */
	CU_ASSERT_EQUAL(fast_plan_rail_row(&p, &p.steps[0], 1, to, w), 2);
	CU_ASSERT(to[0] == 0 && w[0] == 5 && to[1] == 2 && w[1] == 7);
	/* server 2 idles in the first (2 -> 2), goes to 0 in the second */
	CU_ASSERT_EQUAL(fast_plan_rail_row(&p, &p.steps[0], 2, to, w), 1);
	CU_ASSERT(to[0] == 0 && w[0] == 7);
	CU_ASSERT_EQUAL(fast_plan_validate(&p, &err), 0);
	/* builder misuse */
	CU_ASSERT_EQUAL(fast_plan_set_perms(&p, 0, perms, bud, &err), FAST_EINPUT);
	OK(fast_plan_add_step(&p, FAST_STEP_EXPLICIT, FAST_TIER_OUT, &err));
	CU_ASSERT_EQUAL(fast_plan_set_perms(&p, 2, perms, bud, &err), FAST_EINPUT);
	fast_plan_free(&p);
}

static void test_grouped__validate_names_the_permutation(void)
{
	struct fast_plan p;
	struct fast_err err;
	uint32_t perms[2 * N3] = { 1, 2, 0, 2, 2, 1 };
	uint64_t bud[2] = { 1, 1 };

	fast_plan_init(&p, N3, G2, "fast");
	OK(fast_plan_add_step(&p, FAST_STEP_RAIL, FAST_TIER_OUT, &err));
	OK(fast_plan_set_perms(&p, 2, perms, bud, &err));
	CU_ASSERT_EQUAL(fast_plan_validate(&p, &err), FAST_EINPUT);
	CU_ASSERT_STRING_EQUAL(err.msg, "step 0: permutation 1 is not a permutation (server 2 "
					"appears twice)");
	p.perm[p.steps[0].perm0 + 4] = 7;
	CU_ASSERT_EQUAL(fast_plan_validate(&p, &err), FAST_EINPUT);
	CU_ASSERT_STRING_EQUAL(err.msg, "step 0: permutation 1[1] = 7 is not a server (plan has "
					"3 servers)");
	fast_plan_free(&p);
}

static void test_grouped__expansion_is_sender_rail_destination(void)
{
	uint64_t D[NG * NG];
	struct fast_plan p, e;
	struct fast_err err;
	uint32_t at = 0;

	matrix(D);
	build(&p, D);
	OK(fast_plan_expand(&p, NULL, &e, &err));
	CU_ASSERT_EQUAL_FATAL(e.steps[0].nxfers, N3 * G2 * 2);
	for (uint32_t a = 0; a < N3; a++)
		for (uint32_t i = 0; i < G2; i++)
			for (uint32_t b = 0; b < N3; b++) {
				const struct fast_xfer *x;
				if (b == a)
					continue;
				x = &e.xfers[e.steps[0].xfer0 + at++];
				CU_ASSERT(x->from == a * G2 + i && x->to == b * G2 + i);
				/* every lane fits its shift's budget: all of it goes */
				CU_ASSERT_EQUAL(x->bytes, lane_bytes(D, a, b, i));
			}
	/* the redistribution forwards what is not final at the receiver:
	 * one piece per lane, to the GPU of the other rail */
	CU_ASSERT_EQUAL(e.steps[1].nxfers, NG);
	fast_plan_free(&e);
	fast_plan_free(&p);
}

static void test_grouped__checker_takes_k_peers_from_a_grouped_step_only(void)
{
	uint64_t D[NG * NG];
	struct fast_topo t = unit_topo(N3, G2, FAST_UP_SWITCH, (struct fast_tier){ 100, 1, 1, 1 },
				       (struct fast_tier){ 10, 1, 1, 1 });
	struct fast_plan p, e;
	struct fast_plan_summary sm;
	struct fast_err err;

	matrix(D);
	build(&p, D);
	CU_ASSERT_EQUAL(unit_check(&p, &t, D, &err), 0);
	OK(unit_summarize(&p, &sm, NULL, &err));
	CU_ASSERT_EQUAL(sm.rail_stages, 1);
	/* the same transfers as an explicit out step: one-to-one is refused */
	OK(fast_plan_expand(&p, NULL, &e, &err));
	CU_ASSERT_EQUAL(unit_check(&e, &t, D, &err), FAST_ECHECK);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "a fast tier out step must be one-to-one"));
	fast_plan_free(&e);
	/* a budget a byte short leaves a lane's last byte unsent */
	p.budgets[p.steps[0].budget0 + 1]--;
	CU_ASSERT_EQUAL(unit_check(&p, &t, D, &err), FAST_ECHECK);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "1 of its"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "bytes are never sent"));
	fast_plan_free(&p);
}

/* Parse a one-plan file of 3 x 2 at `version` whose only step is `step`. */
static int parse_step(int version, const char *step, struct fast_err *err)
{
	char text[1024];
	struct fast_limits lim;
	struct fast_planset ps;
	int rc;

	fast_limits_default(&lim);
	snprintf(text, sizeof text,
		 "{\"version\":%d,\"kind\":\"fast-plan\",\"plans\":[{\"label\":\"m0\",\"matrix\":0,"
		 "\"algo\":\"fast\",\"servers\":3,\"gpus_per_server\":2,\"steps\":[%s]}]}",
		 version, step);
	memset(err, 0, sizeof *err);
	rc = fast_planset_parse(text, strlen(text), "p.json", &lim, &ps, err);
	if (rc == 0)
		fast_planset_free(&ps);
	return rc;
}

static void expect_parse(int version, const char *step, const char *msg)
{
	struct fast_err err;
	int rc = parse_step(version, step, &err);

	CU_ASSERT_EQUAL(rc, msg ? FAST_EINPUT : 0);
	if (msg)
		CU_ASSERT_STRING_EQUAL(err.msg, msg);
	if (msg ? rc != FAST_EINPUT || strcmp(err.msg, msg) : rc != 0)
		fprintf(stderr, "\n  got %d: %s\n", rc, err.msg);
}

static void test_grouped__file_is_version_4_and_round_trips(void)
{
	uint64_t D[NG * NG];
	struct fast_plan p;
	struct fast_planset ps = { 1, &p }, back;
	struct fast_limits lim;
	struct fast_err err;
	size_t len1, len2;
	char *a, *b;

	matrix(D);
	build(&p, D);
	fast_limits_default(&lim);
	a = write_set(&ps, &len1);
	CU_ASSERT_EQUAL(strncmp(a, "{\"version\":4,", 13), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(a, "\"rail\":{\"perms\":[[1,2,0],[2,0,1]],\"bytes\":["));
	OK(fast_planset_parse(a, len1, "p.json", &lim, &back, &err));
	b = write_set(&back, &len2);
	CU_ASSERT_EQUAL(len1, len2);
	CU_ASSERT_STRING_EQUAL(a, b);
	CU_ASSERT_EQUAL(fast_plan_hash(&p), fast_plan_hash(&back.plans[0]));
	/* the permutations are part of the identity, and their order */
	{
		struct fast_plan *bp = &back.plans[0];
		uint32_t *pm = bp->perm + bp->steps[0].perm0, tmp[N3];
		memcpy(tmp, pm, sizeof tmp);
		memmove(pm, pm + N3, sizeof tmp);
		memcpy(pm + N3, tmp, sizeof tmp);
	}
	CU_ASSERT_NOT_EQUAL(fast_plan_hash(&p), fast_plan_hash(&back.plans[0]));
	free(a);
	free(b);
	fast_planset_free(&back);
	fast_plan_free(&p);

	expect_parse(4, "{\"id\":0,\"tier\":\"out\",\"deps\":[],\"rail\":{\"perms\":[[1,2,0],"
			"[2,0,1]],\"bytes\":[3,4]}}", NULL);
	expect_parse(3, "{\"id\":0,\"tier\":\"out\",\"deps\":[],\"rail\":{\"perms\":[[1,2,0],"
			"[2,0,1]],\"bytes\":[3,4]}}",
		     "p.json: /plans/0/steps/0/rail: a rail step of several permutations needs "
		     "plan version 4 (the file says 3)");
	expect_parse(4, "{\"id\":0,\"tier\":\"out\",\"deps\":[],\"rail\":{\"perms\":[[1,2,0]],"
			"\"bytes\":[3]}}",
		     "p.json: /plans/0/steps/0/rail/perms: \"perms\" lists 2 or more permutations "
		     "(got 1; one is \"perm\")");
	expect_parse(4, "{\"id\":0,\"tier\":\"out\",\"deps\":[],\"rail\":{\"perms\":[[1,2,0],"
			"[2,0,1]],\"bytes\":[3]}}",
		     "p.json: /plans/0/steps/0/rail/bytes: 1 budgets for 2 permutations: one each");
	expect_parse(4, "{\"id\":0,\"tier\":\"out\",\"deps\":[],\"rail\":{\"perms\":[[1,2,0],"
			"[2,2,1]],\"bytes\":[3,4]}}",
		     "p.json: /plans/0/steps/0/rail/perms/1/1: not a permutation: server 2 appears "
		     "twice");
	expect_parse(4, "{\"id\":0,\"tier\":\"out\",\"deps\":[],\"rail\":{\"perms\":[[1,2,0],"
			"[2,0,1]],\"bytes\":[3,-4]}}",
		     "p.json: /plans/0/steps/0/rail/bytes/1: must be a non-negative integer (got -4)");
	expect_parse(4, "{\"id\":0,\"tier\":\"out\",\"deps\":[],\"rail\":{\"perm\":[1,2,0],"
			"\"perms\":[[1,2,0],[2,0,1]],\"bytes\":[3,4]}}",
		     "p.json: /plans/0/steps/0/rail: a rail step has \"perm\" or \"perms\", not both");
}

/* A grouped step pays its tier's costs once and shares each NIC among its
 * k flows, the receiving one slowed by incast at k senders: N = 3, G = 1,
 * every GPU sends w to each other, as one step of both shifts and as two
 * one-permutation steps in a row. */
static void test_grouped__sim_one_step_and_incast_at_k_senders(void)
{
	const double bw = 10, lat_us = 1, ovh_us = 2, w = 1e6;
	struct fast_topo t = unit_topo(3, 1, FAST_UP_SWITCH, (struct fast_tier){ 100, 0, 1, 0 },
				       (struct fast_tier){ bw, lat_us, 1, ovh_us });
	uint64_t D[9];
	uint32_t perms[6] = { 1, 2, 0, 2, 0, 1 };
	uint64_t bud[2] = { (uint64_t)w, (uint64_t)w };
	struct fast_plan g, s;
	struct fast_sim_opts o;
	struct fast_sim_result r;
	struct fast_err err;
	double f, want;

	t.congestion = (struct fast_congestion){ 1, 0.1, 0.5 };
	f = fast_incast_factor(&t.congestion, 2); /* 0.9 */
	for (uint32_t x = 0; x < 9; x++)
		D[x] = x / 3 == x % 3 ? 0 : (uint64_t)w;
	fast_plan_init(&g, 3, 1, "fast");
	fast_plan_init(&s, 3, 1, "fast");
	for (uint32_t a = 0; a < 3; a++)
		for (uint32_t b = 0; b < 3; b++)
			if (a != b) {
				OK(fast_plan_add_lane(&g, a, b, 0, &err));
				OK(fast_plan_add_lane_piece(&g, a, b, 0, (uint64_t)w, &err));
				OK(fast_plan_add_lane(&s, a, b, 0, &err));
				OK(fast_plan_add_lane_piece(&s, a, b, 0, (uint64_t)w, &err));
			}
	OK(fast_plan_add_step(&g, FAST_STEP_RAIL, FAST_TIER_OUT, &err));
	OK(fast_plan_set_perms(&g, 2, perms, bud, &err));
	OK(fast_plan_add_step(&s, FAST_STEP_RAIL, FAST_TIER_OUT, &err));
	OK(fast_plan_set_perm(&s, perms, (uint64_t)w, &err));
	OK(fast_plan_add_step(&s, FAST_STEP_RAIL, FAST_TIER_OUT, &err));
	OK(fast_plan_add_dep(&s, 1, 0, false, &err));
	OK(fast_plan_set_perm(&s, perms + 3, (uint64_t)w, &err));
	CU_ASSERT_EQUAL(unit_check(&g, &t, D, &err), 0);
	CU_ASSERT_EQUAL(unit_check(&s, &t, D, &err), 0);
	fast_sim_opts_default(&o);
	o.traffic = D;
	/* each ingress carries 2 flows at f of its rate: each flow w at bw f / 2 */
	OK(unit_sim(&t, &g, NULL, &o, &r, &err));
	want = (ovh_us + lat_us) * 1e-6 + 2 * w / (bw * 1e9 * f);
	CU_ASSERT_DOUBLE_EQUAL(r.time_s, want, want * 1e-9);
	fast_sim_result_free(&r);
	/* one sender a NIC, no incast, but each step's costs */
	OK(unit_sim(&t, &s, NULL, &o, &r, &err));
	want = 2 * ((ovh_us + lat_us) * 1e-6 + w / (bw * 1e9));
	CU_ASSERT_DOUBLE_EQUAL(r.time_s, want, want * 1e-9);
	fast_sim_result_free(&r);
	/* without the incast model the grouped step is the bytes' time */
	o.congestion = false;
	OK(unit_sim(&t, &g, NULL, &o, &r, &err));
	want = (ovh_us + lat_us) * 1e-6 + 2 * w / (bw * 1e9);
	CU_ASSERT_DOUBLE_EQUAL(r.time_s, want, want * 1e-9);
	fast_sim_result_free(&r);
	fast_plan_free(&g);
	fast_plan_free(&s);
}

/* --- FAST's choice (compile_fast_group.c) ------------------------------ */

static struct fast_topo h200(uint32_t N, uint32_t G)
{
	struct fast_topo t;
	struct fast_limits lim;

	fast_limits_default(&lim);
	CU_ASSERT_FATAL(fast_topo_preset("h200", N, G, &lim, &t, NULL) == 0);
	return t;
}

/* FAST's implementation with k rail steps in flight (the preset's: 2). */
static void fast_in_flight(struct fast_topo *t, uint32_t k)
{
	const char *const *names = fast_topo_impl_names();

	for (size_t i = 0; names[i]; i++)
		if (strcmp(names[i], "fast") == 0)
			t->impl[1 + i].in_flight = k;
}

/* D[s][d] = e between servers, e / 4 within, skewed by source when skew. */
static uint64_t *traffic(uint32_t N, uint32_t G, uint64_t e, bool skew)
{
	uint32_t ng = N * G;
	uint64_t *D = calloc((size_t)ng * ng, sizeof *D);

	CU_ASSERT_FATAL(D != NULL);
	for (uint32_t s = 0; s < ng; s++)
		for (uint32_t d = 0; d < ng; d++)
			D[(size_t)s * ng + d] = s == d ? 0 : (s / G == d / G ? e / 4 : e) *
							       (skew ? 1 + (s * 7 + d * 3) % 5 : 1);
	return D;
}

/* The rail steps of p: how many, and the most permutations one holds. */
static uint32_t rails_of(const struct fast_plan *p, uint32_t *most)
{
	uint32_t n = 0;

	*most = 0;
	for (size_t s = 0; s < p->nsteps; s++)
		if (p->steps[s].kind == FAST_STEP_RAIL) {
			n++;
			*most = p->steps[s].nperms > *most ? p->steps[s].nperms : *most;
		}
	return n;
}

/* stages=grouped: the same plans as the default (stages=auto), which
 * groups since the committed results were measured again with it. */
static struct fast_algo_opts grouped(void)
{
	struct fast_algo_opts o;

	fast_algo_opts_default(&o);
	o.stages = FAST_STAGES_GROUPED;
	return o;
}

/* Per-step costs far above the bytes' time: one rail step of (at least)
 * the N - 1 shifts when every rail step pays them, whatever the skew; two
 * in flight, more rail steps may follow the first (grouped, or packed
 * waves), of which only the first pays: the simulated time is that one
 * step's cost and little more.  The plans are correct; the default
 * (stages=auto) is the same plan. */
static void test_grouped__large_alpha_takes_one_step_of_all(void)
{
	struct fast_algo_opts o = grouped();
	struct fast_sim_opts so;
	struct fast_sim_result r;
	struct fast_err err;

	fast_sim_opts_default(&so);
	for (int skew = 0; skew < 4; skew++) {
		struct fast_topo t = h200(6, 4);
		uint64_t *D = traffic(6, 4, 4096, skew & 1);
		struct fast_plan p;
		uint32_t most, n;
		t.out.step_overhead_us = 1000;
		fast_in_flight(&t, skew < 2 ? 1 : 2);
		CU_ASSERT_FATAL(fast_sched_fast(&t, D, &o, &p, &err) == 0);
		n = rails_of(&p, &most);
		CU_ASSERT(skew >= 2 || (n == 1 && most >= 5));
		CU_ASSERT(strncmp(p.options, "stages=grouped(", 15) == 0);
		CU_ASSERT_EQUAL(unit_check(&p, &t, D, &err), 0);
		so.traffic = D;
		CU_ASSERT_EQUAL_FATAL(unit_sim(&t, &p, NULL, &so, &r, &err), 0);
		CU_ASSERT(r.time_s > 1000e-6 && r.time_s < 1100e-6);
		fast_sim_result_free(&r);
		fast_plan_free(&p);
		CU_ASSERT_FATAL(fast_sched_fast(&t, D, NULL, &p, &err) == 0);
		CU_ASSERT_EQUAL(rails_of(&p, &most), n);
		CU_ASSERT(strncmp(p.options, "stages=auto(", 12) == 0);
		fast_plan_free(&p);
		free(D);
	}
}

/* No per-step cost: grouping saves nothing and costs incast, so every
 * rail step is one permutation, as before grouping (and balanced). */
static void test_grouped__zero_alpha_keeps_one_permutation_a_step(void)
{
	struct fast_algo_opts o = grouped();
	struct fast_err err;

	for (int skew = 0; skew < 2; skew++) {
		struct fast_topo t = h200(6, 4);
		uint64_t *D = traffic(6, 4, UINT64_C(1) << 20, skew);
		struct fast_plan p;
		uint32_t most;
		t.out.step_overhead_us = t.out.latency_us = 0;
		t.up.step_overhead_us = t.up.latency_us = 0;
		CU_ASSERT_FATAL(fast_sched_fast(&t, D, &o, &p, &err) == 0);
		CU_ASSERT(rails_of(&p, &most) > 1);
		CU_ASSERT_EQUAL(most, 1);
		CU_ASSERT_PTR_NULL(strstr(p.options, "steps="));
		CU_ASSERT_PTR_NULL(strstr(p.options, "direct"));
		CU_ASSERT_EQUAL(unit_check(&p, &t, D, &err), 0);
		fast_plan_free(&p);
		free(D);
	}
}

/* The one step's model is the simulator's time (equal messages, so no
 * balancing and no max-min imbalance): a_out + X / (B_out f(N - 1)), X a
 * NIC's bytes, then the scale-up latency (the redistribution waits on the
 * rail step pipelined: its overhead runs beside it) + Y / B_up, Y the
 * bytes a GPU forwards.  One rail step in flight, so that one step it is. */
static void test_grouped__one_step_model_is_the_simulators(void)
{
	const uint32_t N = 8, G = 4;
	const uint64_t e = 2048;
	struct fast_topo t = h200(N, G);
	uint64_t *D = traffic(N, G, e, false);
	struct fast_plan p;
	struct fast_sim_opts o;
	struct fast_sim_result r;
	struct fast_err err;
	struct fast_algo_opts go = grouped();
	uint32_t most;
	double X = (double)(N - 1) * G * e, Y = (double)(N - 1) * (G - 1) * e, want;

	fast_in_flight(&t, 1);
	CU_ASSERT_FATAL(fast_sched_fast(&t, D, &go, &p, &err) == 0);
	CU_ASSERT_EQUAL_FATAL(rails_of(&p, &most), 1);
	fast_sim_opts_default(&o);
	o.traffic = D;
	CU_ASSERT_EQUAL_FATAL(unit_sim(&t, &p, NULL, &o, &r, &err), 0);
	want = fast_tier_step_s(&t.out) +
	       X / (fast_tier_Bps(&t.out) * fast_incast_factor(&t.congestion, N - 1)) +
	       t.up.latency_us * 1e-6 + Y / fast_tier_Bps(&t.up);
	CU_ASSERT_DOUBLE_EQUAL(r.time_s, want, want * 0.01);
	if (fabs(r.time_s - want) > want * 0.01)
		fprintf(stderr, "\n  simulated %.3f us, modelled %.3f us\n", r.time_s * 1e6,
			want * 1e6);
	fast_sim_result_free(&r);
	fast_plan_free(&p);
	free(D);
}

/* A chain for fast_group_chain: per term, the bytes each of E lines
 * carries, as prefix sums; a group's bytes are its busiest line's, at an
 * incast factor that falls with its size (as term_parts and shift_parts
 * give them). */
#define CHAIN_MAX 24
#define CHAIN_E 5
struct chain {
	uint64_t pre[CHAIN_MAX + 1][CHAIN_E];
	double Bo, slope, rho, l_up;
};

static void chain_parts(const void *ctx, uint32_t i, uint32_t j, double *bytes_s, double *full_s,
			double *red_s)
{
	const struct chain *ch = ctx;
	uint64_t X = 0;
	double f = 1 - ch->slope * (double)(j - i - 1);

	for (int e = 0; e < CHAIN_E; e++)
		X = ch->pre[j][e] - ch->pre[i][e] > X ? ch->pre[j][e] - ch->pre[i][e] : X;
	*full_s = (double)X / ch->Bo;
	*bytes_s = *full_s / (f > 0.5 ? f : 0.5);
	*red_s = ch->l_up + (double)X * ch->rho;
}

/* The recursion tried over every group, as compile_fast_group.c's top
 * states it (the same order and the same strict comparison). */
static void chain_plain(const struct cost *c, uint32_t K, uint32_t L, const struct chain *ch,
			double *g, uint32_t *next)
{
	uint32_t k = c->k;

	for (uint32_t r = 0; r < k; r++) {
		g[(size_t)K * k + r] = 0;
		next[(size_t)K * k + r] = K;
	}
	for (uint32_t i = K; i-- > 0;)
		for (uint32_t r = 0; r < k; r++) {
			g[(size_t)i * k + r] = INFINITY;
			for (uint32_t j = i + 1; j <= K && j - i <= L; j++) {
				double bytes, full, red, gj = g[(size_t)j * k + (r + 1) % k], t;
				chain_parts(ch, i, j, &bytes, &full, &red);
				t = (cost_pays(c, r) ? c->a_out : 0) + bytes + (red > gj ? red : gj);
				if (t < g[(size_t)i * k + r]) {
					g[(size_t)i * k + r] = t;
					next[(size_t)i * k + r] = j;
				}
			}
		}
}

/* The bound fast_group_chain stops on (every grouping of the rest pays its
 * bytes at the full rate) changes no choice: on random chains (1..24
 * terms, skewed lines, per-step costs from none to large, incast from
 * none to steep, 1..3 steps in flight, groups capped or not) its g and
 * next equal the plain recursion's exactly. */
static void test_grouped__chain_bound_keeps_every_choice(void)
{
	struct fast_rng rng;

	fast_rng_seed(&rng, 28);
	for (int it = 0; it < unit_cases(2000); it++) {
		struct chain ch;
		struct cost c;
		uint32_t K = 1 + (uint32_t)fast_rng_below(&rng, CHAIN_MAX);
		uint32_t L = fast_rng_below(&rng, 3) ? K : 1 + (uint32_t)fast_rng_below(&rng, K);
		double g1[(CHAIN_MAX + 1) * 3], g2[(CHAIN_MAX + 1) * 3];
		uint32_t n1[(CHAIN_MAX + 1) * 3], n2[(CHAIN_MAX + 1) * 3];

		memset(&c, 0, sizeof c);
		memset(&ch, 0, sizeof ch);
		c.k = 1 + (uint32_t)fast_rng_below(&rng, 3);
		c.a_out = (double)fast_rng_below(&rng, 4) * 5e-6;
		ch.Bo = 5e10;
		ch.slope = (double)fast_rng_below(&rng, 4) * 0.02;
		ch.rho = (double)fast_rng_below(&rng, 3) * 1e-11;
		ch.l_up = 1e-7;
		for (uint32_t t = 0; t < K; t++)
			for (int e = 0; e < CHAIN_E; e++) {
				uint64_t scale = UINT64_C(1) << (10 + 2 * fast_rng_below(&rng, 8));
				ch.pre[t + 1][e] = ch.pre[t][e] + fast_rng_below(&rng, scale);
			}
		fast_group_chain(&c, K, L, chain_parts, &ch, g1, n1);
		chain_plain(&c, K, L, &ch, g2, n2);
		for (size_t x = 0; x < (size_t)(K + 1) * c.k; x++) {
			CU_ASSERT_EQUAL(g1[x], g2[x]);
			CU_ASSERT_EQUAL(n1[x], n2[x]);
		}
	}
}

UNIT_MAIN("grouped",
	  UNIT_TEST(test_grouped__rail_row_sums_budgets_by_destination),
	  UNIT_TEST(test_grouped__validate_names_the_permutation),
	  UNIT_TEST(test_grouped__expansion_is_sender_rail_destination),
	  UNIT_TEST(test_grouped__checker_takes_k_peers_from_a_grouped_step_only),
	  UNIT_TEST(test_grouped__file_is_version_4_and_round_trips),
	  UNIT_TEST(test_grouped__sim_one_step_and_incast_at_k_senders),
	  UNIT_TEST(test_grouped__large_alpha_takes_one_step_of_all),
	  UNIT_TEST(test_grouped__zero_alpha_keeps_one_permutation_a_step),
	  UNIT_TEST(test_grouped__one_step_model_is_the_simulators),
	  UNIT_TEST(test_grouped__chain_bound_keeps_every_choice))
