/*
 * test_plan_tokens.c - the plan IR on token plans: validation, fitting a
 * token matrix, the expansion of redistributions, the JSON round trip and
 * reader errors with JSON paths.
 */
#define _POSIX_C_SOURCE 200809L
#include <CUnit/Basic.h>

#include "unit.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fast/plan.h"
#include "plan_fix.h"
#include "tok.h"

/* --- token plans ----------------------------------------------------------- */

static void expect_invalid(const struct fast_plan *p, const char *msg)
{
	struct fast_err err;
	int rc = fast_plan_validate(p, &err);
	CU_ASSERT_EQUAL(rc, FAST_EINPUT);
	if (rc != FAST_EINPUT || strcmp(err.msg, msg)) {
		CU_FAIL("wrong validation result");
		fprintf(stderr, "\n  got %d: %s\n  want: %s\n", rc, rc ? err.msg : "", msg);
	}
}

static void test_plan__token_validation(void)
{
	struct fast_traffic t;
	struct fast_plan p;
	struct fast_err err;

	tok_dispatch_example(&t, &p);
	OK(fast_plan_validate(&p, &err));
	p.pieces[p.npieces - 1].dst = 1;
	expect_invalid(&p, "step 2 transfer 0 piece 0: a dispatch piece has no mask (got 1, not 0)");
	p.pieces[p.npieces - 1].dst = 0;
	p.pieces[0].dst = 2;
	expect_invalid(&p, "lane 0 rail 0 piece 0: a dispatch piece has no mask (got 2, not 0)");
	p.pieces[0].dst = 0;
	OK(fast_plan_add_mask(&p, 1, &err));
	expect_invalid(&p, "plan: a dispatch plan has no masks (got 1)");
	p.kind = FAST_TRAFFIC_BYTES;
	p.pieces[0].dst = 2; /* (a valid byte piece D[0][2]) */
	p.pieces[1].dst = 0;
	p.pieces[p.npieces - 1].dst = 1;
	expect_invalid(&p, "plan: a bytes plan has no masks (got 1)");
	p.kind = FAST_TRAFFIC_DISPATCH;
	p.pieces[0].dst = p.pieces[1].dst = p.pieces[p.npieces - 1].dst = 0;
	p.nmasks = 0;
	p.kind = (enum fast_traffic_kind)7;
	expect_invalid(&p, "plan: unknown kind 7");
	p.kind = FAST_TRAFFIC_DISPATCH;
	p.steps[2].kind = FAST_STEP_REDUCE;
	expect_invalid(&p, "step 2: a reduce step belongs to a combine plan (this is a dispatch plan)");
	p.kind = FAST_TRAFFIC_BYTES;
	expect_invalid(&p, "step 2: a reduce step belongs to a combine plan (this is a bytes plan)");
	fast_plan_free(&p);
	fast_traffic_free(&t);

	tok_combine_example(&t, &p);
	OK(fast_plan_validate(&p, &err));
	struct fast_xfer *sum = &p.xfers[p.steps[1].xfer0];
	struct fast_piece *in = &p.pieces[sum->piece0];
	p.pieces[p.xfers[p.steps[0].xfer0].piece0].dst = 4;
	expect_invalid(&p, "step 0 transfer 0 piece 0: mask 4 out of range (plan has 4 masks)");
	p.pieces[p.xfers[p.steps[0].xfer0].piece0].dst = 1;
	p.masks[3] = 0;
	expect_invalid(&p, "plan: mask 3 is empty (a value carries >= 1 contributions)");
	p.masks[3] = 1;
	p.steps[1].tier = FAST_TIER_OUT;
	expect_invalid(&p, "step 1: a reduce step must be tier up");
	p.steps[1].tier = FAST_TIER_UP;
	p.steps[1].chunks = 2;
	expect_invalid(&p, "step 1: a reduce step has one chunk (got 2)");
	p.steps[1].chunks = 1;
	sum->to = 3;
	expect_invalid(&p, "step 1 sum 0: a reduce sums at one GPU (got GPU 2 -> GPU 3)");
	sum->to = 2;
	in[1].src = 1;
	expect_invalid(&p, "step 1 sum 0 piece 1: the inputs of a sum are one group and one byte "
			   "range (group 1 bytes 0..12, not group 0 bytes 0..12 as piece 0)");
	in[1].src = 0;
	in[1].off = 4;
	in[1].len = 8;
	expect_invalid(&p, "step 1 sum 0 piece 1: the inputs of a sum are one group and one byte "
			   "range (group 0 bytes 4..12, not group 0 bytes 0..12 as piece 0)");
	in[1].off = 0;
	in[1].len = 12;
	in[1].dst = 2; /* 0x6 overlaps 0x2 */
	expect_invalid(&p, "step 1 sum 0 piece 1: contributions 0x2 are already in an earlier "
			   "input (the inputs of a sum are disjoint)");
	in[1].dst = 1;
	OK(fast_plan_validate(&p, &err));
	/* a reduce step carries sums, so it is not compact */
	p.nlanes = 0;
	p.steps[2].kind = FAST_STEP_EXPLICIT;
	CU_ASSERT_FALSE(fast_plan_is_compact(&p));
	fast_plan_free(&p);
	fast_traffic_free(&t);
}

static void expect_misfit(const struct fast_plan *p, const struct fast_matrix *m, uint32_t ng,
			  const char *msg)
{
	struct fast_err err;
	struct fast_matrix on = *m; /* m as if it had ng GPUs */
	int rc;

	on.ng = ng;
	rc = fast_plan_fits_matrix(p, &on, &err);
	CU_ASSERT_EQUAL(rc, FAST_EINPUT);
	if (rc != FAST_EINPUT || strcmp(err.msg, msg)) {
		CU_FAIL("wrong agreement result");
		fprintf(stderr, "\n  got %d: %s\n  want: %s\n", rc, rc ? err.msg : "", msg);
	}
}

static void test_plan__token_fits_matrix(void)
{
	struct fast_traffic t, tc;
	struct fast_plan p, pc, b;
	struct fast_err err;

	tok_dispatch_example(&t, &p);
	tok_combine_example(&tc, &pc);
	OK(fast_plan_fits_matrix(&p, &t.m[0], &err));
	OK(fast_plan_fits_matrix(&pc, &tc.m[0], &err));
	expect_misfit(&p, &t.m[0], 8, "the traffic has 8 GPUs, the plan is for 2 servers x 2 GPUs");
	expect_misfit(&p, &tc.m[0], 4, "a dispatch plan cannot serve a combine matrix");
	t.m[0].kind = FAST_TRAFFIC_BYTES;
	expect_misfit(&p, &t.m[0], 4, "a dispatch plan cannot serve a bytes matrix");
	t.m[0].kind = FAST_TRAFFIC_DISPATCH;
	/* a byte plan serves a token matrix through its per-GPU bytes */
	fast_plan_init(&b, 2, 2, "x");
	OK(fast_plan_fits_matrix(&b, &t.m[0], &err));
	fast_plan_free(&b);
	p.pieces[p.npieces - 1].src = 2;
	expect_misfit(&p, &t.m[0], 4,
		      "step 2 transfer 0 piece 0: group 2 out of range (the matrix has 2 groups)");
	p.pieces[p.npieces - 1].src = 0;
	p.pieces[p.npieces - 1].off = 4;
	expect_misfit(&p, &t.m[0], 4,
		      "step 2 transfer 0 piece 0: group 0 bytes 4..16 outside its 12 bytes");
	p.pieces[p.npieces - 1].off = 0;
	p.pieces[1].len = 9;
	expect_misfit(&p, &t.m[0], 4, "lane (server 1 -> server 0, rail 0) piece 0: group 1 bytes "
				      "0..9 outside its 8 bytes");
	p.pieces[1].len = 8;
	OK(fast_plan_fits_matrix(&p, &t.m[0], &err));
	/* g1 of the combine matrix has 2 destinations: 0x4 names a third */
	pc.pieces[1].dst = 1;
	expect_misfit(&pc, &tc.m[0], 4, "lane (server 0 -> server 1, rail 0) piece 0: mask 0x4 "
					"names a contribution beyond the 2 destinations of group 1");
	fast_plan_free(&p);
	fast_plan_free(&pc);
	fast_traffic_free(&t);
	fast_traffic_free(&tc);
}

static void test_plan__token_redist_expansion(void)
{
	struct fast_traffic t;
	struct fast_plan p, e;
	struct fast_err err;
	const struct fast_xfer *x;

	tok_dispatch_example(&t, &p);
	/* the groups are needed to know where a redistribution goes */
	CU_ASSERT_EQUAL(fast_plan_expand(&p, NULL, &e, &err), FAST_EINPUT);
	CU_ASSERT_STRING_EQUAL(err.msg, "step 1: the redistribution of a dispatch plan needs the "
					"traffic it serves (its groups)");
	OK(fast_plan_expand(&p, &t.m[0], &e, &err));
	CU_ASSERT_EQUAL(e.kind, FAST_TRAFFIC_DISPATCH);
	CU_ASSERT_EQUAL(e.nlanes, 0);
	/* rail: GPU 0 -> 2 g0, GPU 2 -> 0 g1 */
	CU_ASSERT_EQUAL_FATAL(e.steps[0].nxfers, 2);
	x = &e.xfers[e.steps[0].xfer0];
	CU_ASSERT(x[0].from == 0 && x[0].to == 2 && x[0].bytes == 12);
	CU_ASSERT(x[1].from == 2 && x[1].to == 0 && x[1].bytes == 8);
	/* redist: by receiver: GPU 0 copies g1 to 1 (its other destination on
	 * server 0), GPU 2 copies g0 to 3 (not to 1: another server) */
	CU_ASSERT_EQUAL_FATAL(e.steps[1].nxfers, 2);
	x = &e.xfers[e.steps[1].xfer0];
	CU_ASSERT(x[0].from == 0 && x[0].to == 1);
	piece_is(&e, x[0].piece0, 1, 0, 0, 8);
	CU_ASSERT(x[1].from == 2 && x[1].to == 3);
	piece_is(&e, x[1].piece0, 0, 0, 0, 12);
	CU_ASSERT_EQUAL(fast_plan_validate(&e, &err), 0);
	/* the plan must fit the matrix it is expanded for */
	fast_plan_free(&e);
	t.m[0].ngroups = 1;
	CU_ASSERT_EQUAL(fast_plan_expand(&p, &t.m[0], &e, &err), FAST_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "group 1 out of range"));
	t.m[0].ngroups = 2;
	fast_plan_free(&p);
	fast_traffic_free(&t);

	/* combine: a piece of g goes on to src(g) unless it is there */
	uint32_t perm[2] = { 1, 0 };
	tok_init(&t, 4, FAST_TRAFFIC_COMBINE, 4);
	tok_group(&t, 0, 1, 2, (const uint32_t[]){ 2, 3 });
	tok_group(&t, 1, 1, 1, (const uint32_t[]){ 3 });
	tok_done(&t);
	fast_plan_init(&p, 2, 2, "x");
	p.kind = FAST_TRAFFIC_COMBINE;
	OK(fast_plan_add_mask(&p, 0x2, &err));
	OK(fast_plan_add_mask(&p, 0x1, &err));
	OK(fast_plan_add_lane(&p, 1, 0, 1, &err)); /* GPU 3 -> GPU 1 */
	OK(fast_plan_add_lane_piece(&p, 0, 0, 0, 4, &err)); /* g0, GPU 3's part */
	OK(fast_plan_add_lane_piece(&p, 1, 1, 0, 4, &err)); /* g1 at its src */
	OK(fast_plan_add_step(&p, FAST_STEP_RAIL, FAST_TIER_OUT, &err));
	OK(fast_plan_set_perm(&p, perm, 8, &err));
	OK(fast_plan_add_step(&p, FAST_STEP_REDIST, FAST_TIER_UP, &err));
	OK(fast_plan_add_dep(&p, 1, 0, false, &err));
	OK(fast_plan_set_redist(&p, 0, &err));
	OK(fast_plan_expand(&p, &t.m[0], &e, &err));
	CU_ASSERT_EQUAL_FATAL(e.steps[1].nxfers, 1);
	x = &e.xfers[e.steps[1].xfer0];
	CU_ASSERT(x->from == 1 && x->to == 0 && x->npieces == 1);
	piece_is(&e, x->piece0, 0, 0, 0, 4);
	CU_ASSERT_EQUAL(e.nmasks, 2);
	fast_plan_free(&e);
	fast_plan_free(&p);
	fast_traffic_free(&t);
}

static void test_plan__token_json_round_trip(void)
{
	struct fast_traffic t, tc;
	struct fast_plan plans[3];
	struct fast_planset ps = { 3, plans }, back;
	struct fast_limits lim;
	struct fast_err err;
	size_t len1, len2;
	char *a, *b;

	fast_limits_default(&lim);
	tok_dispatch_example(&t, &plans[0]);
	tok_combine_example(&tc, &plans[1]);
	plans[1].masks[3] = UINT64_C(0x8000000000000001); /* all 64 bits exact */
	build_fast(&plans[2]);
	a = write_set(&ps, &len1);
	CU_ASSERT_EQUAL(strncmp(a, "{\"version\":3,", 13), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(a, "\"kind\":\"dispatch\",\"lanes\":[\n[0,1,0,[[0,0,12]]]"));
	CU_ASSERT_PTR_NOT_NULL(strstr(a, "\"kind\":\"combine\",\"masks\":[\"0x2\",\"0x4\",\"0x6\","
					 "\"0x8000000000000001\"]"));
	CU_ASSERT_PTR_NOT_NULL(strstr(a, "\"reduce\":[\n[2,[[0,0,12,0],[0,0,12,1]]]]"));
	OK(fast_planset_parse(a, len1, "p.json", &lim, &back, &err));
	CU_ASSERT_EQUAL_FATAL(back.count, 3);
	b = write_set(&back, &len2);
	CU_ASSERT_STRING_EQUAL(a, b);
	for (int i = 0; i < 3; i++) {
		CU_ASSERT_EQUAL(back.plans[i].kind, plans[i].kind);
		CU_ASSERT_EQUAL(fast_plan_hash(&plans[i]), fast_plan_hash(&back.plans[i]));
	}
	CU_ASSERT_EQUAL(back.plans[1].steps[1].kind, FAST_STEP_REDUCE);
	CU_ASSERT_EQUAL(back.plans[1].masks[3], UINT64_C(0x8000000000000001));
	/* the kind is part of a plan's identity */
	back.plans[0].kind = FAST_TRAFFIC_COMBINE;
	CU_ASSERT_NOT_EQUAL(fast_plan_hash(&plans[0]), fast_plan_hash(&back.plans[0]));
	free(a);
	free(b);
	fast_planset_free(&back);
	/* byte plans alone are still version 2 */
	ps.plans = &plans[2];
	ps.count = 1;
	a = write_set(&ps, &len1);
	CU_ASSERT_EQUAL(strncmp(a, "{\"version\":2,", 13), 0);
	free(a);
	for (int i = 0; i < 3; i++)
		fast_plan_free(&plans[i]);
	fast_traffic_free(&t);
	fast_traffic_free(&tc);
}

/* parse a one-plan version `version` file with plan fields `fields` */
static void expect_token_parse(int version, const char *fields, const char *msg)
{
	char text[2048];
	struct fast_limits lim;
	struct fast_planset ps;
	struct fast_err err;
	int rc;

	fast_limits_default(&lim);
	snprintf(text, sizeof text,
		 "{\"version\":%d,\"kind\":\"fast-plan\",\"plans\":[{\"matrix\":0,\"algo\":\"x\","
		 "\"servers\":2,\"gpus_per_server\":2,%s}]}", version, fields);
	memset(&err, 0, sizeof err);
	rc = fast_planset_parse(text, strlen(text), "p.json", &lim, &ps, &err);
	if (rc == 0)
		fast_planset_free(&ps);
	if (!msg) {
		CU_ASSERT_EQUAL(rc, 0);
		if (rc)
			fprintf(stderr, "\n  got %d: %s\n", rc, err.msg);
		return;
	}
	CU_ASSERT_EQUAL(rc, FAST_EINPUT);
	if (rc != FAST_EINPUT || strcmp(err.msg, msg)) {
		CU_FAIL("wrong reader error");
		fprintf(stderr, "\n  got %d: %s\n  want: %s\n", rc, err.msg, msg);
	}
}

static void test_plan__token_reader_errors(void)
{
	const char *up = "\"steps\":[{\"id\":0,\"tier\":\"up\",\"deps\":[],";

	expect_token_parse(3, "\"kind\":\"dispatch\",\"steps\":[{\"id\":0,\"tier\":\"up\",\"deps\":[],"
			      "\"transfers\":[[0,1,[[5,0,4]]]]}]", NULL);
	expect_token_parse(3, "\"kind\":\"bytes\",\"steps\":[]", NULL);
	expect_token_parse(2, "\"kind\":\"dispatch\",\"steps\":[]",
			   "p.json: /plans/0/kind: a plan's kind needs plan version 3 (the file says 2)");
	expect_token_parse(3, "\"kind\":\"tokens\",\"steps\":[]",
			   "p.json: /plans/0/kind: kind must be \"bytes\", \"dispatch\" or \"combine\" "
			   "(got \"tokens\")");
	expect_token_parse(3, "\"kind\":\"dispatch\",\"masks\":[\"0x1\"],\"steps\":[]",
			   "p.json: /plans/0/masks: only a combine plan has masks (this is a dispatch plan)");
	expect_token_parse(3, "\"masks\":[],\"steps\":[]",
			   "p.json: /plans/0/masks: only a combine plan has masks (this is a bytes plan)");
	const char *bad_masks[] = { "\"0x0\"", "\"0x03\"", "\"0X3\"", "\"0x3F\"", "\"3\"", "3",
				    "\"0x10000000000000000\"", "\"0x\"", "\"0x3g\"" };
	for (size_t i = 0; i < sizeof bad_masks / sizeof *bad_masks; i++) {
		char f[256];
		snprintf(f, sizeof f, "\"kind\":\"combine\",\"masks\":[\"0x1\",%s],\"steps\":[]",
			 bad_masks[i]);
		expect_token_parse(3, f, "p.json: /plans/0/masks/1: a mask is a non-zero hex string "
					 "like \"0x3f\" (lower case, no leading zeros)");
	}
	char f[512];
	snprintf(f, sizeof f, "\"kind\":\"dispatch\",%s\"transfers\":[[0,1,[[5,0,0,4]]]]}]", up);
	expect_token_parse(3, f, "p.json: /plans/0/steps/0/transfers/0/2/0: expected a dispatch "
				 "piece [group, offset, length] (too many elements)");
	snprintf(f, sizeof f, "\"kind\":\"dispatch\",%s\"transfers\":[[0,1,[[5,0,0]]]]}]", up);
	expect_token_parse(3, f, "p.json: /plans/0/steps/0/transfers/0/2/0/2: piece length must be > 0");
	snprintf(f, sizeof f, "\"kind\":\"combine\",\"masks\":[\"0x1\"],%s\"transfers\":[[0,1,"
		 "[[5,0,4]]]]}]", up);
	expect_token_parse(3, f, "p.json: /plans/0/steps/0/transfers/0/2/0: expected a combine "
				 "piece [group, offset, length, mask] (4 elements, not 3)");
	snprintf(f, sizeof f, "\"kind\":\"combine\",\"masks\":[\"0x1\"],%s\"transfers\":[[0,1,"
		 "[[5,0,4,1]]]]}]", up);
	expect_token_parse(3, f, "p.json: /plans/0/steps/0/transfers/0/2/0/3: mask 1 out of range (0..0)");
	snprintf(f, sizeof f, "\"kind\":\"combine\",%s\"transfers\":[[0,1,[[5,0,4,0]]]]}]", up);
	expect_token_parse(3, f, "p.json: /plans/0/steps/0/transfers/0/2/0: a combine piece needs "
				 "a mask, and the plan has no \"masks\"");
	snprintf(f, sizeof f, "\"kind\":\"dispatch\",%s\"reduce\":[[0,[[5,0,4]]]]}]", up);
	expect_token_parse(3, f, "p.json: /plans/0/steps/0/reduce: a reduce step belongs to a "
				 "combine plan (this is a dispatch plan)");
	expect_token_parse(3, "\"kind\":\"combine\",\"masks\":[\"0x1\"],\"steps\":[{\"id\":0,"
			      "\"tier\":\"out\",\"deps\":[],\"reduce\":[]}]",
			   "p.json: /plans/0/steps/0/tier: a reduce step must be tier \"up\"");
	snprintf(f, sizeof f, "\"kind\":\"combine\",\"masks\":[\"0x1\"],%s\"reduce\":[[0,[]]]}]", up);
	expect_token_parse(3, f, "p.json: /plans/0/steps/0/reduce/0/1: a sum has >= 1 inputs");
	snprintf(f, sizeof f, "\"kind\":\"combine\",\"masks\":[\"0x1\",\"0x3\"],%s\"reduce\":"
		 "[[0,[[5,0,4,0],[5,0,4,1]]]]}]", up);
	expect_token_parse(3, f, "p.json: /plans/0: step 0 sum 0 piece 1: contributions 0x1 are "
				 "already in an earlier input (the inputs of a sum are disjoint)");
	snprintf(f, sizeof f, "\"kind\":\"combine\",\"masks\":[\"0x1\",\"0x2\"],%s\"reduce\":"
		 "[[4,[[5,0,4,0],[5,0,4,1]]]]}]", up);
	expect_token_parse(3, f, "p.json: /plans/0/steps/0/reduce/0/0: GPU 4 out of range (0..3)");
	snprintf(f, sizeof f, "\"kind\":\"combine\",\"masks\":[\"0x1\",\"0x2\"],%s\"reduce\":"
		 "[[3,[[5,0,4,0],[5,0,4,1]]]]}]", up);
	expect_token_parse(3, f, NULL);
}

UNIT_MAIN("plan_tokens",
	  UNIT_TEST(test_plan__token_validation),
	  UNIT_TEST(test_plan__token_fits_matrix),
	  UNIT_TEST(test_plan__token_redist_expansion),
	  UNIT_TEST(test_plan__token_json_round_trip),
	  UNIT_TEST(test_plan__token_reader_errors))
