/*
 * test_plan.c - the plan IR: builder ranges, expansion of lanes / rail
 * stages / redistributions (pieces split across stages), validation,
 * cycles, the JSON round trip (byte-identical, same hash), reader errors
 * with JSON paths, and summaries (peak staging).  Token plans:
 * test_plan_tokens.c.
 */
#define _POSIX_C_SOURCE 200809L
#include <CUnit/Basic.h>

#include "unit.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fast/plan.h"
#include "plan_fix.h"

static void test_plan__builder_ranges(void)
{
	struct fast_plan p;
	struct fast_err err;

	build_fast(&p);
	CU_ASSERT_EQUAL(p.nsteps, 6);
	CU_ASSERT_EQUAL(p.nlanes, 4);
	CU_ASSERT_EQUAL(p.lanes[1].npieces, 3);
	CU_ASSERT_EQUAL(p.lanes[1].bytes, 80);
	CU_ASSERT_EQUAL(p.steps[0].nxfers, 1);
	CU_ASSERT_EQUAL(p.xfers[p.steps[0].xfer0].bytes, 70);
	CU_ASSERT_EQUAL(p.steps[1].kind, FAST_STEP_RAIL);
	CU_ASSERT_EQUAL(p.perm[p.steps[3].perm0], 1);
	CU_ASSERT_EQUAL(p.budgets[p.steps[3].budget0], 30);
	CU_ASSERT_EQUAL(p.steps[4].stage, 3);
	CU_ASSERT_EQUAL(p.steps[5].chunks, 2);
	CU_ASSERT_EQUAL(p.steps[4].ndeps, 1);
	CU_ASSERT_EQUAL(p.deps[p.steps[4].dep0].step, 3);
	CU_ASSERT_EQUAL(fast_plan_validate(&p, &err), 0);

	/* misuse is reported, not corrupting */
	CU_ASSERT_EQUAL(fast_plan_add_dep(&p, 2, 0, false, &err), FAST_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "not the last step"));
	OK(fast_plan_add_step(&p, FAST_STEP_RAIL, FAST_TIER_OUT, &err));
	CU_ASSERT_EQUAL(fast_plan_add_xfer(&p, 0, 1, &err), FAST_EINPUT);
	CU_ASSERT_EQUAL(fast_plan_set_redist(&p, 1, &err), FAST_EINPUT);
	fast_plan_free(&p);
	fast_plan_free(&p); /* idempotent */
	fast_plan_free(NULL);

	fast_plan_init(&p, 1, 2, "x");
	CU_ASSERT_EQUAL(fast_plan_add_xfer(&p, 0, 1, &err), FAST_EINPUT);
	CU_ASSERT_EQUAL(fast_plan_add_piece(&p, 0, 1, 0, 1, &err), FAST_EINPUT);
	/* a transfer's pieces must stay contiguous */
	OK(fast_plan_add_step(&p, FAST_STEP_EXPLICIT, FAST_TIER_UP, &err));
	OK(fast_plan_add_xfer(&p, 0, 1, &err));
	OK(fast_plan_add_piece(&p, 0, 1, 0, 1, &err));
	fast_plan_free(&p);
}

static void test_plan__expand_splits_pieces_across_stages(void)
{
	struct fast_plan p, e;
	struct fast_err err;
	const struct fast_step *s;

	build_fast(&p);
	OK(fast_plan_expand(&p, NULL, &e, &err));
	CU_ASSERT_EQUAL_FATAL(e.nsteps, 6);
	CU_ASSERT_EQUAL(e.nlanes, 0);
	for (size_t t = 0; t < e.nsteps; t++) {
		CU_ASSERT_EQUAL(e.steps[t].kind, FAST_STEP_EXPLICIT);
		CU_ASSERT_EQUAL(e.steps[t].tier, p.steps[t].tier);
		CU_ASSERT_EQUAL(e.steps[t].ndeps, p.steps[t].ndeps);
	}
	CU_ASSERT_EQUAL(e.steps[5].chunks, 2);
	/* stage 1: GPU0->2 D[0][2] 0..50; GPU1->3 D[1][2] 0..10, D[0][3] 0..40;
	 * GPU2->0 D[2][0] 0..30; GPU3->1 D[3][1] 0..30 */
	s = &e.steps[1];
	CU_ASSERT_EQUAL_FATAL(s->nxfers, 4);
	CU_ASSERT(e.xfers[s->xfer0].from == 0 && e.xfers[s->xfer0].to == 2);
	CU_ASSERT_EQUAL(e.xfers[s->xfer0].bytes, 50);
	piece_is(&e, e.xfers[s->xfer0].piece0, 0, 2, 0, 50);
	CU_ASSERT(e.xfers[s->xfer0 + 1].from == 1 && e.xfers[s->xfer0 + 1].to == 3);
	CU_ASSERT_EQUAL_FATAL(e.xfers[s->xfer0 + 1].npieces, 2);
	piece_is(&e, e.xfers[s->xfer0 + 1].piece0, 1, 2, 0, 10);
	piece_is(&e, e.xfers[s->xfer0 + 1].piece0 + 1, 0, 3, 0, 40);
	CU_ASSERT(e.xfers[s->xfer0 + 2].from == 2 && e.xfers[s->xfer0 + 2].to == 0);
	/* redist 2: GPU 3 forwards D[1][2] 0..10 to GPU 2 */
	s = &e.steps[2];
	CU_ASSERT_EQUAL_FATAL(s->nxfers, 1);
	CU_ASSERT(e.xfers[s->xfer0].from == 3 && e.xfers[s->xfer0].to == 2);
	piece_is(&e, e.xfers[s->xfer0].piece0, 1, 2, 0, 10);
	/* stage 3: the rest of the cut pieces; server 1's lanes are empty */
	s = &e.steps[3];
	CU_ASSERT_EQUAL_FATAL(s->nxfers, 2);
	piece_is(&e, e.xfers[s->xfer0].piece0, 0, 2, 50, 30);
	CU_ASSERT_EQUAL_FATAL(e.xfers[s->xfer0 + 1].npieces, 2);
	piece_is(&e, e.xfers[s->xfer0 + 1].piece0, 0, 3, 40, 10);
	piece_is(&e, e.xfers[s->xfer0 + 1].piece0 + 1, 0, 2, 80, 20);
	s = &e.steps[4];
	CU_ASSERT_EQUAL_FATAL(s->nxfers, 1);
	piece_is(&e, e.xfers[s->xfer0].piece0, 0, 2, 80, 20);
	/* explicit steps copied */
	CU_ASSERT_EQUAL(e.steps[0].nxfers, 1);
	CU_ASSERT_EQUAL(e.xfers[e.steps[0].xfer0].bytes, 70);
	CU_ASSERT_EQUAL(fast_plan_validate(&e, &err), 0);
	fast_plan_free(&e);

	/* malformed compact forms */
	p.steps[4].stage = 2;
	CU_ASSERT_EQUAL(fast_plan_expand(&p, NULL, &e, &err), FAST_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "step 4: redistributes step 2, which is not a rail step"));
	p.steps[4].stage = 40;
	CU_ASSERT_EQUAL(fast_plan_expand(&p, NULL, &e, &err), FAST_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "redistributes unknown step 40"));
	fast_plan_free(&p);
}

static void test_plan__redist_groups_by_receiver_and_dst(void)
{
	struct fast_plan p, e;
	struct fast_err err;
	uint32_t perm[2] = { 1, 0 };

	/* 2 servers x 3 GPUs; lane 0->1 rail 0 carries pieces for GPUs 4, 3, 5, 4 */
	fast_plan_init(&p, 2, 3, "fast");
	OK(fast_plan_add_lane(&p, 0, 1, 0, &err));
	OK(fast_plan_add_lane_piece(&p, 0, 4, 0, 5, &err));
	OK(fast_plan_add_lane_piece(&p, 0, 3, 0, 5, &err));
	OK(fast_plan_add_lane_piece(&p, 0, 5, 0, 5, &err));
	OK(fast_plan_add_lane_piece(&p, 0, 4, 5, 5, &err));
	OK(fast_plan_add_step(&p, FAST_STEP_RAIL, FAST_TIER_OUT, &err));
	OK(fast_plan_set_perm(&p, perm, 100, &err));
	OK(fast_plan_add_step(&p, FAST_STEP_REDIST, FAST_TIER_UP, &err));
	OK(fast_plan_add_dep(&p, 1, 0, false, &err));
	OK(fast_plan_set_redist(&p, 0, &err));
	OK(fast_plan_expand(&p, NULL, &e, &err));
	/* GPU 3 receives; D[0][3] is final; forwards to 4 (two pieces) then 5 */
	CU_ASSERT_EQUAL_FATAL(e.steps[1].nxfers, 2);
	const struct fast_xfer *x = &e.xfers[e.steps[1].xfer0];
	CU_ASSERT(x[0].from == 3 && x[0].to == 4 && x[0].npieces == 2 && x[0].bytes == 10);
	piece_is(&e, x[0].piece0, 0, 4, 0, 5);
	piece_is(&e, x[0].piece0 + 1, 0, 4, 5, 5);
	CU_ASSERT(x[1].from == 3 && x[1].to == 5 && x[1].npieces == 1);
	fast_plan_free(&e);
	fast_plan_free(&p);
}

static void test_plan__validate_rejects(void)
{
	struct fast_plan p;
	struct fast_err err;

	build_fast(&p);
	p.perm[p.steps[1].perm0] = 0; /* [0, 0] */
	CU_ASSERT_EQUAL(fast_plan_validate(&p, &err), FAST_EINPUT);
	CU_ASSERT_STRING_EQUAL(err.msg, "step 1: perm is not a permutation (server 0 appears twice)");
	p.perm[p.steps[1].perm0] = 1;
	p.pieces[0].len = 0;
	CU_ASSERT_EQUAL(fast_plan_validate(&p, &err), FAST_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "length must be > 0"));
	p.pieces[0].len = 80;
	p.lanes[1].rail = 0; /* lane (0 -> 1, rail 0) twice */
	CU_ASSERT_EQUAL(fast_plan_validate(&p, &err), FAST_EINPUT);
	CU_ASSERT_STRING_EQUAL(err.msg, "lane (server 0 -> server 1, rail 0) declared twice");
	p.lanes[1].rail = 1;
	p.steps[5].chunks = 2;
	p.deps[p.steps[4].dep0].pipelined = 1; /* 4 (1 chunk) pipelined on 3 (1 chunk): fine */
	CU_ASSERT_EQUAL(fast_plan_validate(&p, &err), 0);
	p.steps[3].chunks = 3;
	CU_ASSERT_EQUAL(fast_plan_validate(&p, &err), FAST_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "needs equal chunk counts"));
	p.steps[3].chunks = 1;
	p.steps[1].tier = FAST_TIER_UP;
	CU_ASSERT_EQUAL(fast_plan_validate(&p, &err), FAST_EINPUT);
	CU_ASSERT_STRING_EQUAL(err.msg, "step 1: a rail step must be tier out");
	fast_plan_free(&p);
}

static void test_plan__cycles_and_order(void)
{
	struct fast_plan p;
	struct fast_err err;
	uint32_t order[6];

	build_fast(&p);
	OK(fast_plan_topo_order(&p, order, &err));
	for (uint32_t i = 0; i < 6; i++)
		CU_ASSERT_EQUAL(order[i], i); /* deps point backwards: id order */
	/* 1 waits for 4: 1 -> 4 -> 3 -> 1 */
	p.deps[p.steps[1].dep0].step = 4;
	CU_ASSERT_EQUAL(fast_plan_topo_order(&p, order, &err), FAST_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "dependency cycle"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "1 -> 4 -> 3 -> 1"));
	CU_ASSERT_EQUAL(fast_plan_validate(&p, &err), FAST_EINPUT);
	fast_plan_free(&p);

	/* forward deps are fine when acyclic: 0 waits for 1 */
	fast_plan_init(&p, 1, 2, "x");
	OK(fast_plan_add_step(&p, FAST_STEP_EXPLICIT, FAST_TIER_UP, &err));
	OK(fast_plan_add_dep(&p, 0, 1, false, &err));
	OK(fast_plan_add_step(&p, FAST_STEP_EXPLICIT, FAST_TIER_UP, &err));
	OK(fast_plan_topo_order(&p, order, &err));
	CU_ASSERT(order[0] == 1 && order[1] == 0);
	fast_plan_free(&p);
}

static void test_plan__json_round_trip_is_identical(void)
{
	struct fast_plan plans[2];
	struct fast_planset ps = { 2, plans }, back;
	struct fast_limits lim;
	struct fast_err err;
	size_t len1, len2;
	char *a, *b;

	fast_limits_default(&lim);
	build_fast(&plans[0]);
	build_fast(&plans[1]);
	plans[1].matrix = 1;
	snprintf(plans[1].label, sizeof plans[1].label, "layer1/combine");
	plans[1].deps[plans[1].steps[4].dep0].pipelined = 1;
	CU_ASSERT_NOT_EQUAL(fast_plan_hash(&plans[0]), fast_plan_hash(&plans[1]));
	a = write_set(&ps, &len1);
	OK(fast_planset_parse(a, len1, "p.json", &lim, &back, &err));
	CU_ASSERT_EQUAL_FATAL(back.count, 2);
	b = write_set(&back, &len2);
	CU_ASSERT_EQUAL(len1, len2);
	CU_ASSERT_STRING_EQUAL(a, b);
	for (int i = 0; i < 2; i++) {
		CU_ASSERT_EQUAL(fast_plan_hash(&plans[i]), fast_plan_hash(&back.plans[i]));
		CU_ASSERT_STRING_EQUAL(plans[i].label, back.plans[i].label);
		CU_ASSERT_STRING_EQUAL(plans[i].options, back.plans[i].options);
	}
	/* label and options are not part of the identity; content is */
	snprintf(back.plans[0].label, sizeof back.plans[0].label, "other");
	CU_ASSERT_EQUAL(fast_plan_hash(&plans[0]), fast_plan_hash(&back.plans[0]));
	back.plans[0].pieces[3].off++;
	CU_ASSERT_NOT_EQUAL(fast_plan_hash(&plans[0]), fast_plan_hash(&back.plans[0]));
	free(a);
	free(b);
	fast_planset_free(&back);
	fast_plan_free(&plans[0]);
	fast_plan_free(&plans[1]);
}

/* parse a one-plan file whose steps are `steps`; return the error text */
static int parse_steps(const char *steps, struct fast_err *err)
{
	char text[2048];
	struct fast_limits lim;
	struct fast_planset ps;
	int rc;

	fast_limits_default(&lim);
	snprintf(text, sizeof text,
		 "{\"version\":1,\"kind\":\"fast-plan\",\"plans\":[{\"label\":\"m0\",\"matrix\":0,"
		 "\"algo\":\"x\",\"servers\":2,\"gpus\":2,\"steps\":[%s]}]}", steps);
	memset(err, 0, sizeof *err);
	rc = fast_planset_parse(text, strlen(text), "p.json", &lim, &ps, err);
	if (rc == 0)
		fast_planset_free(&ps);
	return rc;
}

static void expect_parse(const char *steps, const char *msg)
{
	struct fast_err err;
	int rc = parse_steps(steps, &err);
	CU_ASSERT_EQUAL(rc, FAST_EINPUT);
	CU_ASSERT_STRING_EQUAL(err.msg, msg);
	if (rc != FAST_EINPUT || strcmp(err.msg, msg))
		fprintf(stderr, "\n  got %d: %s\n", rc, err.msg);
}

static void test_plan__reader_errors_have_paths(void)
{
	struct fast_err err;

	CU_ASSERT_EQUAL(parse_steps("{\"id\":0,\"tier\":\"up\",\"deps\":[],\"transfers\":"
				    "[[0,1,[[0,1,0,8]]]]}", &err), 0);
	expect_parse("{\"id\":0,\"tier\":\"up\",\"deps\":[3],\"transfers\":[]}",
		     "p.json: /plans/0/steps/0/deps/0: unknown step 3 (the plan has 1 steps)");
	expect_parse("{\"id\":0,\"tier\":\"up\",\"deps\":[],\"transfers\":[[0,9,[]]]}",
		     "p.json: /plans/0/steps/0/transfers/0/1: GPU 9 out of range (0..3)");
	expect_parse("{\"id\":0,\"tier\":\"up\",\"deps\":[],\"transfers\":[[0,1,[[0,1,0,0]]]]}",
		     "p.json: /plans/0/steps/0/transfers/0/2/0/3: piece length must be > 0");
	expect_parse("{\"id\":1,\"tier\":\"up\",\"deps\":[],\"transfers\":[]}",
		     "p.json: /plans/0/steps/0/id: step ids must equal their index (expected 0, got 1)");
	expect_parse("{\"id\":0,\"tier\":\"sideways\",\"deps\":[],\"transfers\":[]}",
		     "p.json: /plans/0/steps/0/tier: tier must be \"up\" or \"out\" (got \"sideways\")");
	expect_parse("{\"id\":0,\"tier\":\"out\",\"deps\":[],\"rail\":{\"perm\":[1,1],\"bytes\":4}}",
		     "p.json: /plans/0/steps/0/rail/perm/1: not a permutation: server 1 appears twice");
	expect_parse("{\"id\":0,\"tier\":\"up\",\"deps\":[]}",
		     "p.json: /plans/0/steps/0: a step has exactly one of \"transfers\", \"rail\", \"redist\" or \"reduce\"");
	expect_parse("{\"id\":0,\"tier\":\"up\",\"deps\":[1],\"transfers\":[]},"
		     "{\"id\":1,\"tier\":\"up\",\"deps\":[0],\"transfers\":[]}",
		     "p.json: /plans/0: step 0: dependency cycle (step 0 -> 1 -> 0, each waiting for the next)");
	expect_parse("{\"id\":0,\"tier\":\"up\",\"deps\":[],\"transfers\":[]},"
		     "{\"id\":1,\"tier\":\"up\",\"deps\":[],\"redist\":0}",
		     "p.json: /plans/0/steps/1/redist: step 0 is not a rail step");
	expect_parse("{\"id\":0,\"tier\":\"up\",\"chunks\":2,\"deps\":[],\"transfers\":[]},"
		     "{\"id\":1,\"tier\":\"up\",\"deps\":[{\"step\":0,\"pipelined\":true}],\"transfers\":[]}",
		     "p.json: /plans/0/steps/1/deps/0: a pipelined dependency needs equal chunk counts (1 here, 2 in step 0)");
	expect_parse("{\"id\":0,\"tier\":\"up\",\"deps\":[],\"transfers\":[], \"Deps\":[]}",
		     "p.json: /plans/0/steps/0: unknown key \"Deps\" (keys are case-sensitive: did you mean \"deps\"?)");
	expect_parse("{\"id\":0,\"tier\":\"up\",\"deps\":[],\"transfers\":[[0,1,[[0,1,0,9007199254740994]]]]}",
		     "p.json: /plans/0/steps/0/transfers/0/2/0/3: 9007199254740994 is above 2^53, the largest integer a JSON number carries exactly");

	/* file-level errors */
	struct fast_limits lim;
	struct fast_planset ps;
	fast_limits_default(&lim);
	const char *v4 = "{\"version\":5,\"kind\":\"fast-plan\",\"plans\":[]}";
	CU_ASSERT_EQUAL(fast_planset_parse(v4, strlen(v4), "p.json", &lim, &ps, &err), FAST_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "p.json: /version: unsupported plan version 5 "
					       "(this build reads versions 1 to 4)"));
	const char *none = "{\"version\":1,\"kind\":\"fast-plan\",\"plans\":[]}";
	CU_ASSERT_EQUAL(fast_planset_parse(none, strlen(none), "p.json", &lim, &ps, &err), FAST_EINPUT);
	CU_ASSERT_STRING_EQUAL(err.msg, "p.json: /plans: a plan file holds at least one plan");
	const char *big = "{\"version\":1,\"kind\":\"fast-plan\",\"plans\":[{\"matrix\":0,\"algo\":\"x\","
			  "\"servers\":1000,\"gpus\":1000,\"steps\":[]}]}";
	CU_ASSERT_EQUAL(fast_planset_parse(big, strlen(big), "p.json", &lim, &ps, &err), FAST_ELIMIT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "p.json: /plans/0/gpus: 1000 servers x 1000 GPUs"));
}

static void test_plan__summary_and_staging(void)
{
	struct fast_plan p;
	struct fast_plan_summary sm;
	struct fast_err err;
	uint64_t peak[4];

	build_fast(&p);
	OK(unit_summarize(&p, &sm, NULL, &err));
	CU_ASSERT_EQUAL(sm.steps_up, 4);
	CU_ASSERT_EQUAL(sm.steps_out, 2);
	CU_ASSERT_EQUAL(sm.rail_stages, 2);
	/* up: balance 70 + redist 10 + redist 20 + intrinsic 7 */
	CU_ASSERT_EQUAL(sm.bytes_up, 107);
	/* out: stage 1 50+50+30+30, stage 3 30+30 */
	CU_ASSERT_EQUAL(sm.bytes_out, 220);
	/* relayed: GPU 1 sends 70 bytes of GPU 0's in stages; GPU 3 forwards 30 */
	CU_ASSERT_EQUAL(sm.bytes_relayed, 100);
	CU_ASSERT_EQUAL(sm.largest_step, 1);
	CU_ASSERT_EQUAL(sm.largest_step_bytes, 160);
	CU_ASSERT_EQUAL(sm.transfers, 1 + 4 + 1 + 2 + 1 + 1);
	/* staging: GPU 1 holds GPU 0's 70 bytes after balancing (peak); GPU 3
	 * holds 10 then 20 relay bytes */
	CU_ASSERT_EQUAL(sm.peak_staging, 70);
	CU_ASSERT_EQUAL(sm.peak_staging_gpu, 1);
	OK(unit_summarize(&p, &(struct fast_plan_summary){ 0 }, peak, &err));
	CU_ASSERT(peak[0] == 0 && peak[1] == 70 && peak[2] == 0 && peak[3] == 20);
	fast_plan_free(&p);
}

/* The view: an explicit plan is aliased, a compact one expanded once into
 * an owned explicit plan; a malformed plan opens nothing; the one-walk
 * summary agrees with summarize + staging; the agreement checks word their
 * refusals once. */
static void test_plan__view_aliases_or_expands(void)
{
	struct fast_plan p, e;
	struct fast_plan_view v, w;
	struct fast_plan_summary a, b;
	struct fast_topo t;
	struct fast_err err;
	uint64_t peak[4], peak2[4];

	build_fast(&p);
	CU_ASSERT(fast_plan_is_compact(&p));
	OK(fast_plan_view_open(&v, &p, NULL, &err));
	CU_ASSERT(v.owned && v.given == &p && v.x == &v.own);
	CU_ASSERT(!fast_plan_is_compact(v.x));
	CU_ASSERT_EQUAL(v.x->nsteps, p.nsteps);
	OK(fast_plan_expand(&p, NULL, &e, &err));
	CU_ASSERT_EQUAL(fast_plan_hash(v.x), fast_plan_hash(&e));
	/* explicit: aliased (the executor hashed an expanded copy before: the
	 * same identity), same summary from either */
	{
		struct fast_plan e2;
		OK(fast_plan_expand(&e, NULL, &e2, &err));
		CU_ASSERT_EQUAL(fast_plan_hash(&e2), fast_plan_hash(&e));
		fast_plan_free(&e2);
	}
	OK(fast_plan_view_open(&w, &e, NULL, &err));
	CU_ASSERT(!w.owned && w.given == &e && w.x == &e);
	OK(fast_plan_summarize(&v, &a, peak, &err));
	OK(unit_summarize(&p, &b, NULL, &err));
	CU_ASSERT_EQUAL(memcmp(&a, &b, sizeof a), 0);
	OK(unit_summarize(&p, &(struct fast_plan_summary){ 0 }, peak2, &err));
	CU_ASSERT_EQUAL(memcmp(peak, peak2, sizeof peak), 0);
	OK(fast_plan_summarize(&w, &b, NULL, &err));
	CU_ASSERT_EQUAL(a.bytes_up, b.bytes_up);
	CU_ASSERT_EQUAL(a.peak_staging, b.peak_staging);
	CU_ASSERT_EQUAL(b.rail_stages, 0); /* counted on the plan as given */
	fast_plan_view_close(&w);
	fast_plan_view_close(&v);
	fast_plan_view_close(NULL);
	/* agreement checks */
	memset(&t, 0, sizeof t);
	t.servers = 2;
	t.gpus = 2;
	OK(fast_plan_fits_topo(&p, &t, &err));
	OK(fast_plan_fits_traffic(&p, 4, &err));
	t.servers = 3;
	CU_ASSERT_EQUAL(fast_plan_fits_topo(&p, &t, &err), FAST_EINPUT);
	CU_ASSERT_STRING_EQUAL(err.msg, "the plan is for 2 servers x 2 GPUs, the topology has 3 x 2");
	CU_ASSERT_EQUAL(fast_plan_fits_traffic(&p, 6, &err), FAST_EINPUT);
	CU_ASSERT_STRING_EQUAL(err.msg, "the traffic has 6 GPUs, the plan is for 2 servers x 2 GPUs");
	/* malformed: nothing opened */
	CU_ASSERT_FATAL(e.ndeps > 0);
	e.deps[0].step = 99;
	memset(&w, 0x5a, sizeof w);
	memcpy(&v, &w, sizeof v);
	CU_ASSERT_EQUAL(fast_plan_view_open(&w, &e, NULL, &err), FAST_EINPUT);
	CU_ASSERT_EQUAL(memcmp(&v, &w, sizeof v), 0); /* written only on success */
	fast_plan_free(&e);
	fast_plan_free(&p);
}

/* Lanes and transfers written in place and committed in bulk build what
 * one call per lane, transfer and piece builds; reserve keeps contents,
 * trim gives back spare capacity; misuse is refused. */
static void test_plan__bulk_builder_matches_piecewise(void)
{
	struct fast_plan a, b;
	struct fast_err err;
	const struct fast_piece pcs[3] = { { 0, 2, 0, 5 }, { 1, 3, 4, 6 }, { 0, 3, 0, 1 } };

	fast_plan_init(&b, 2, 2, "t");
	OK(fast_plan_reserve(&b, 4, 4, 4, 1000, 8, &err));
	CU_ASSERT(b.cap_pieces >= 1000 && b.cap_steps >= 4 && b.cap_lanes >= 8);
	CU_ASSERT_EQUAL(b.npieces, 0);
	fast_plan_free(&b);

	/* lanes and transfers written in place, committed in bulk: the same
	 * plan as one call per lane, transfer and piece */
	{
		struct fast_lane *ln;
		struct fast_xfer *x;
		struct fast_piece *pc;
		fast_plan_init(&a, 2, 2, "t");
		fast_plan_init(&b, 2, 2, "t");
		OK(fast_plan_add_lane(&a, 0, 1, 0, &err));
		OK(fast_plan_add_piece(&a, 0, 2, 0, 5, &err));
		OK(fast_plan_add_piece(&a, 1, 3, 4, 6, &err));
		OK(fast_plan_add_lane(&a, 0, 1, 1, &err));
		OK(fast_plan_add_piece(&a, 0, 3, 0, 1, &err));
		OK(fast_plan_lane_space(&b, 2, 3, &ln, &pc, &err));
		memcpy(pc, pcs, sizeof pcs);
		ln[0] = (struct fast_lane){ 0, 1, 0, 0, 2, 11 };
		ln[1] = (struct fast_lane){ 0, 1, 1, 0, 1, 1 };
		OK(fast_plan_commit_lanes(&b, 2, &err));
		CU_ASSERT_EQUAL(b.lanes[1].piece0, 2);
		for (int k = 0; k < 2; k++) {
			struct fast_plan *p = k ? &b : &a;
			CU_ASSERT_FATAL(fast_plan_add_step(p, FAST_STEP_EXPLICIT, FAST_TIER_UP, &err) == 0);
		}
		OK(fast_plan_add_xfer(&a, 0, 1, &err));
		OK(fast_plan_add_piece(&a, 0, 1, 0, 3, &err));
		OK(fast_plan_add_xfer(&a, 2, 3, &err));
		OK(fast_plan_add_piece(&a, 2, 3, 0, 4, &err));
		OK(fast_plan_add_piece(&a, 2, 3, 4, 4, &err));
		OK(fast_plan_xfer_space(&b, 2, 3, &x, &pc, &err));
		x[0] = (struct fast_xfer){ 0, 1, 0, 1, 3 };
		x[1] = (struct fast_xfer){ 2, 3, 0, 2, 8 };
		pc[0] = (struct fast_piece){ 0, 1, 0, 3 };
		pc[1] = (struct fast_piece){ 2, 3, 0, 4 };
		pc[2] = (struct fast_piece){ 2, 3, 4, 4 };
		OK(fast_plan_commit_xfers(&b, 2, &err));
		CU_ASSERT_EQUAL(fast_plan_hash(&a), fast_plan_hash(&b));
		CU_ASSERT_EQUAL(b.steps[0].nxfers, 2);
		CU_ASSERT_EQUAL(b.xfers[1].piece0, 4);
		/* the last transfer stays open: a piece goes to it */
		OK(fast_plan_add_piece(&b, 2, 3, 8, 1, &err));
		CU_ASSERT_EQUAL(b.xfers[1].bytes, 9);
		OK(fast_plan_validate(&b, &err));
		fast_plan_trim(&b, 0);
		CU_ASSERT_EQUAL(b.cap_pieces, b.npieces);
		CU_ASSERT_EQUAL(b.pieces[5].off, 4);
		/* transfers on a step that is not EXPLICIT are refused */
		CU_ASSERT_FATAL(fast_plan_add_step(&b, FAST_STEP_RAIL, FAST_TIER_OUT, &err) == 1);
		OK(fast_plan_xfer_space(&b, 1, 1, &x, &pc, &err));
		CU_ASSERT_EQUAL(fast_plan_commit_xfers(&b, 1, &err), FAST_EINPUT);
		fast_plan_free(&a);
		fast_plan_free(&b);
	}
}

/* chunk boundaries against the naive definition floor(c * L / k) */
static void test_plan__chunk_boundaries(void)
{
	struct fast_rng rng;
	fast_rng_seed(&rng, 3);
	for (int i = 0; i < 2000; i++) {
		uint64_t L = 1 + fast_rng_below(&rng, i < 1000 ? 100 : UINT64_C(1) << 40);
		uint32_t k = 1 + (uint32_t)fast_rng_below(&rng, 300);
		uint32_t c = (uint32_t)fast_rng_below(&rng, k + 1);
		unsigned __int128 naive = (unsigned __int128)c * L / k;
		CU_ASSERT_EQUAL(fast_plan_chunk_start(L, k, c), (uint64_t)naive);
		uint64_t pos = fast_rng_below(&rng, L);
		uint32_t ch = fast_plan_chunk_of(L, k, pos);
		CU_ASSERT(fast_plan_chunk_start(L, k, ch) <= pos);
		CU_ASSERT(pos < fast_plan_chunk_start(L, k, ch + 1));
	}
	CU_ASSERT_EQUAL(fast_plan_chunk_start(UINT64_C(1) << 53, FAST_PLAN_MAX_CHUNKS,
					      FAST_PLAN_MAX_CHUNKS), UINT64_C(1) << 53);
}

UNIT_MAIN("plan",
	  UNIT_TEST(test_plan__builder_ranges),
	  UNIT_TEST(test_plan__expand_splits_pieces_across_stages),
	  UNIT_TEST(test_plan__redist_groups_by_receiver_and_dst),
	  UNIT_TEST(test_plan__validate_rejects),
	  UNIT_TEST(test_plan__cycles_and_order),
	  UNIT_TEST(test_plan__json_round_trip_is_identical),
	  UNIT_TEST(test_plan__reader_errors_have_paths),
	  UNIT_TEST(test_plan__summary_and_staging),
	  UNIT_TEST(test_plan__view_aliases_or_expands),
	  UNIT_TEST(test_plan__bulk_builder_matches_piecewise),
	  UNIT_TEST(test_plan__chunk_boundaries))
