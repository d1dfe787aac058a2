/*
 * test_check_tokens.c - the plan checker on hand-built token plans:
 * dispatch and combine (relays, replication, partial sums) pass and their
 * broken variants fail with the right message, and a byte plan over a
 * token matrix is checked against its per-GPU bytes.
 */
#include <CUnit/Basic.h>

#include "unit.h"
#include <stdlib.h>
#include <string.h>

#include "fast/check.h"
#include "check_fix.h"
#include "tok.h"

/* --- token plans ------------------------------------------------------------ */

/* check token plan p against t's matrix: code, and the message must
 * contain text when given */
static void expect_tok(const struct fast_plan *p, const struct fast_traffic *t, int code,
		       const char *text, int line)
{
	struct fast_topo tp = topo2x2();
	struct fast_err e;
	int rc;

	memset(&e, 0, sizeof e);
	rc = unit_check_matrix(p, &tp, &t->m[0], &e);
	bool ok = rc == code && (!text || strstr(e.msg, text));
	CU_ASSERT(ok);
	if (!ok)
		fprintf(stderr, "\n  line %d: got %d: %s\n  want %d: %s\n", line, rc,
			rc ? e.msg : "", code, text ? text : "");
}

/* Append an up step of one transfer from -> to carrying (g, off, len, k),
 * waiting for dep (or nothing when dep < 0). */
static uint32_t tok_send(struct fast_plan *p, uint32_t from, uint32_t to, uint32_t g,
			 uint64_t off, uint64_t len, uint32_t k, int dep)
{
	struct fast_err err;
	int t = fast_plan_add_step(p, FAST_STEP_EXPLICIT, FAST_TIER_UP, &err);
	CU_ASSERT_FATAL(t >= 0);
	if (dep >= 0)
		OK(fast_plan_add_dep(p, (uint32_t)t, (uint32_t)dep, false, &err));
	OK(fast_plan_add_xfer(p, from, to, &err));
	OK(fast_plan_add_piece(p, g, k, off, len, &err));
	return (uint32_t)t;
}

static void test_check__token_dispatch(void)
{
	struct fast_traffic t, tc;
	struct fast_plan p, pc;
	struct fast_plan_view v;
	struct fast_topo tp = topo2x2();
	struct fast_err err;

	tok_dispatch_example(&t, &p);
	expect_tok(&p, &t, 0, NULL, __LINE__);
	/* replication may deliver a byte twice: GPU 3 copies g0 back to GPU 2 */
	tok_send(&p, 3, 2, 0, 0, 12, 0, 1);
	expect_tok(&p, &t, 0, NULL, __LINE__);
	/* sending bytes not held: GPU 3 gets g0 in step 1, step 4 does not wait */
	tok_send(&p, 3, 2, 0, 4, 4, 0, -1);
	expect_tok(&p, &t, FAST_ECHECK,
		   "step 4 transfer 0 (GPU 3 -> GPU 2) piece 0 (group 0 bytes 4..8): GPU 3 does "
		   "not hold bytes 4..8 at this step (they arrive in step 1, which step 4 does not "
		   "depend on)", __LINE__);
	p.nsteps = 4;
	/* a GPU that never receives a group does not hold it */
	tok_send(&p, 3, 2, 1, 0, 8, 0, 1);
	expect_tok(&p, &t, FAST_ECHECK,
		   "step 4 transfer 0 (GPU 3 -> GPU 2) piece 0 (group 1 bytes 0..8): GPU 3 does not "
		   "hold bytes 0..8 at this step (no step brings them to GPU 3)", __LINE__);
	fast_plan_free(&p);
	fast_traffic_free(&t);

	/* the final holdings: drop the replication to GPU 1 */
	tok_dispatch_example(&t, &p);
	p.steps[2].nxfers = 0;
	expect_tok(&p, &t, FAST_ECHECK, "group 0 (GPU 0, 3 tokens) bytes 0..12 never reach GPU 1",
		   __LINE__);
	/* part of it */
	p.steps[2].nxfers = 1;
	p.pieces[p.xfers[p.steps[2].xfer0].piece0].len = 8;
	p.xfers[p.steps[2].xfer0].bytes = 8;
	expect_tok(&p, &t, FAST_ECHECK, "group 0 (GPU 0, 3 tokens) bytes 8..12 never reach GPU 1",
		   __LINE__);
	p.pieces[p.xfers[p.steps[2].xfer0].piece0].len = 12;
	p.xfers[p.steps[2].xfer0].bytes = 12;
	/* a local copy carries only the GPU's own groups */
	tok_send(&p, 0, 0, 0, 0, 12, 0, -1);
	expect_tok(&p, &t, 0, NULL, __LINE__);
	p.pieces[p.npieces - 1].src = 1;
	p.pieces[p.npieces - 1].len = 8;
	p.xfers[p.nxfers - 1].bytes = 8;
	expect_tok(&p, &t, FAST_ECHECK, "a local copy (GPU 0 -> GPU 0) may carry only groups of "
					"GPU 0", __LINE__);
	p.nsteps = 3;
	/* tiers still hold: the redistribution cannot cross servers */
	p.steps[2].tier = FAST_TIER_UP;
	p.xfers[p.steps[2].xfer0].to = 2;
	expect_tok(&p, &t, FAST_ECHECK, "a tier up transfer crosses servers", __LINE__);
	p.xfers[p.steps[2].xfer0].to = 1;
	/* a lane's bytes must all be sent by its rail stages */
	p.perm[p.steps[0].perm0] = 1;
	p.budgets[p.steps[0].budget0] = 10;
	expect_tok(&p, &t, FAST_ECHECK, "lane (server 0 -> server 1, rail 0): 2 of its 12 bytes are "
					"never sent", __LINE__);
	p.budgets[p.steps[0].budget0] = 100;
	/* agreement with the traffic is bad input */
	tok_combine_example(&tc, &pc);
	fast_plan_free(&pc); /* only its traffic is wanted */
	expect_tok(&p, &tc, FAST_EINPUT, "a dispatch plan cannot serve a combine matrix", __LINE__);
	p.pieces[p.xfers[p.steps[2].xfer0].piece0].off = 1;
	expect_tok(&p, &t, FAST_EINPUT, "step 2 transfer 0 piece 0: group 0 bytes 1..13 outside "
					"its 12 bytes", __LINE__);
	p.pieces[p.xfers[p.steps[2].xfer0].piece0].off = 0;
	/* a view opened without the groups cannot check a token plan */
	p.steps[1].kind = FAST_STEP_EXPLICIT; /* (no REDIST: it opens) */
	p.nlanes = 0;
	p.steps[0].kind = FAST_STEP_EXPLICIT;
	OK(fast_plan_view_open(&v, &p, NULL, &err));
	CU_ASSERT_EQUAL(fast_plan_check(&v, &tp, &err), FAST_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "a dispatch plan is checked against its traffic's "
					       "groups"));
	fast_plan_view_close(&v);
	fast_plan_free(&p);
	fast_traffic_free(&t);
	fast_traffic_free(&tc);
}

static void test_check__token_combine(void)
{
	struct fast_traffic t;
	struct fast_plan p;
	struct fast_err err;

	tok_combine_example(&t, &p);
	expect_tok(&p, &t, 0, NULL, __LINE__);
	/* GPU 1's contribution twice */
	tok_send(&p, 1, 0, 0, 4, 4, 3, -1);
	expect_tok(&p, &t, FAST_ECHECK,
		   "group 0 (GPU 0, 3 tokens) bytes 4..8: the contribution of GPU 1 is counted "
		   "twice at GPU 0: by step 3 transfer 0 piece 0 and by step 4 transfer 0 piece 0",
		   __LINE__);
	p.nsteps = 4;
	/* GPU 2's own contribution to g1 sent away and back */
	int k2 = fast_plan_add_mask(&p, 0x2, &err);
	OK(k2);
	uint32_t out = tok_send(&p, 2, 3, 1, 0, 8, (uint32_t)k2, -1);
	tok_send(&p, 3, 2, 1, 0, 8, (uint32_t)k2, (int)out);
	expect_tok(&p, &t, FAST_ECHECK,
		   "group 1 (GPU 2, 2 tokens) bytes 0..8: the contribution of GPU 2 is counted "
		   "twice at GPU 2: it is its own, and step 5 transfer 0 piece 0 brings it again",
		   __LINE__);
	p.nsteps = 4;
	/* GPU 1's contribution missing, wholly or in part */
	p.steps[3].nxfers = 0;
	expect_tok(&p, &t, FAST_ECHECK,
		   "group 0 (GPU 0, 3 tokens) bytes 0..12: the contribution of GPU 1 never reaches "
		   "GPU 0", __LINE__);
	p.steps[3].nxfers = 1;
	p.pieces[p.xfers[p.steps[3].xfer0].piece0].len = 8;
	p.xfers[p.steps[3].xfer0].bytes = 8;
	expect_tok(&p, &t, FAST_ECHECK,
		   "group 0 (GPU 0, 3 tokens) bytes 8..12: the contribution of GPU 1 never reaches "
		   "GPU 0", __LINE__);
	p.pieces[p.xfers[p.steps[3].xfer0].piece0].len = 12;
	p.xfers[p.steps[3].xfer0].bytes = 12;
	expect_tok(&p, &t, 0, NULL, __LINE__);
	/* a sum's inputs must be held: step 1 without its dep on step 0 */
	p.steps[1].ndeps = 0;
	expect_tok(&p, &t, FAST_ECHECK,
		   "step 1 sum 0 (at GPU 2) input 1 (group 0 bytes 0..12 of 0x4): GPU 2 does not "
		   "hold bytes 0..12 at this step (they arrive in step 0, which step 1 does not "
		   "depend on)", __LINE__);
	p.steps[1].ndeps = 1;
	/* a value is sent with its mask: GPU 1 never holds 0x6 */
	p.pieces[p.xfers[p.steps[3].xfer0].piece0].dst = 2;
	expect_tok(&p, &t, FAST_ECHECK,
		   "step 3 transfer 0 (GPU 1 -> GPU 0) piece 0 (group 0 bytes 0..12 of 0x6): GPU 1 "
		   "does not hold bytes 0..12 at this step (no step brings them to GPU 1)", __LINE__);
	/* GPU 2 holds 0x6 (its sum) but not 0x2 | 0x4 as one value before it */
	p.pieces[p.xfers[p.steps[3].xfer0].piece0].dst = 3;
	p.pieces[p.lanes[0].piece0].dst = 2;
	p.steps[2].ndeps = 0;
	expect_tok(&p, &t, FAST_ECHECK,
		   "step 2 transfer 1 (GPU 2 -> GPU 0) piece 0 (group 0 bytes 0..12 of 0x6): GPU 2 "
		   "does not hold bytes 0..12 at this step (they are summed in step 1, which step 2 "
		   "does not depend on)", __LINE__);
	p.steps[2].ndeps = 1;
	expect_tok(&p, &t, 0, NULL, __LINE__);
	/* a reduce at src(g) is refused */
	int r = fast_plan_add_step(&p, FAST_STEP_REDUCE, FAST_TIER_UP, &err);
	OK(r);
	OK(fast_plan_add_dep(&p, (uint32_t)r, 2, false, &err));
	OK(fast_plan_add_dep(&p, (uint32_t)r, 3, false, &err));
	OK(fast_plan_add_xfer(&p, 0, 0, &err));
	OK(fast_plan_add_piece(&p, 0, 2, 0, 12, &err));
	OK(fast_plan_add_piece(&p, 0, 3, 0, 12, &err));
	expect_tok(&p, &t, FAST_ECHECK,
		   "step 4 sum 0 (at GPU 0) input 0 (group 0 bytes 0..12 of 0x6): GPU 0 is the "
		   "source of group 0, where the sum is implicit (a reduce there is refused)", __LINE__);
	p.nsteps = 4;
	/* no local copies in a combine plan */
	tok_send(&p, 1, 1, 0, 0, 12, 3, -1);
	expect_tok(&p, &t, FAST_ECHECK, "a combine plan has no local copies (GPU 1 -> GPU 1): a sum "
					"is a reduce step", __LINE__);
	fast_plan_free(&p);

	/* a contribution may be relayed and summed on the way: GPU 1's goes
	 * 1 -> 3 (out) -> 2 and joins GPU 2's sum, which crosses once */
	struct fast_plan q;
	fast_plan_init(&q, 2, 2, "test");
	q.kind = FAST_TRAFFIC_COMBINE;
	uint32_t m2 = (uint32_t)fast_plan_add_mask(&q, 0x2, &err);
	uint32_t m4 = (uint32_t)fast_plan_add_mask(&q, 0x4, &err);
	uint32_t m1 = (uint32_t)fast_plan_add_mask(&q, 0x1, &err);
	uint32_t m7 = (uint32_t)fast_plan_add_mask(&q, 0x7, &err);
	uint32_t s0 = tok_send(&q, 3, 2, 0, 0, 12, m4, -1);
	uint32_t s1 = tok_send(&q, 1, 3, 0, 0, 12, m1, -1);
	q.steps[s1].tier = FAST_TIER_OUT;
	uint32_t s2 = tok_send(&q, 3, 2, 0, 0, 12, m1, (int)s1);
	r = fast_plan_add_step(&q, FAST_STEP_REDUCE, FAST_TIER_UP, &err);
	OK(r);
	OK(fast_plan_add_dep(&q, (uint32_t)r, s0, false, &err));
	OK(fast_plan_add_dep(&q, (uint32_t)r, s2, false, &err));
	OK(fast_plan_add_xfer(&q, 2, 2, &err));
	OK(fast_plan_add_piece(&q, 0, m2, 0, 12, &err));
	OK(fast_plan_add_piece(&q, 0, m4, 0, 12, &err));
	OK(fast_plan_add_piece(&q, 0, m1, 0, 12, &err));
	uint32_t s4 = tok_send(&q, 2, 0, 0, 0, 12, m7, r);
	q.steps[s4].tier = FAST_TIER_OUT;
	uint32_t s5 = tok_send(&q, 0, 2, 1, 0, 8, m1, -1);
	q.steps[s5].tier = FAST_TIER_OUT;
	expect_tok(&q, &t, 0, NULL, __LINE__);
	/* the sum may not wait for the relay's second hop */
	q.steps[r].ndeps = 1;
	expect_tok(&q, &t, FAST_ECHECK,
		   "step 3 sum 0 (at GPU 2) input 2 (group 0 bytes 0..12 of 0x1): GPU 2 does not "
		   "hold bytes 0..12 at this step (they arrive in step 2, which step 3 does not "
		   "depend on)", __LINE__);
	fast_plan_free(&q);
	fast_traffic_free(&t);

	/* a combine redistribution forwards what crossed to src(g) */
	uint32_t perm[2] = { 1, 0 };
	tok_init(&t, NG, FAST_TRAFFIC_COMBINE, 4);
	tok_group(&t, 0, 1, 2, (const uint32_t[]){ 2, 3 });
	tok_group(&t, 1, 1, 1, (const uint32_t[]){ 3 });
	tok_done(&t);
	fast_plan_init(&q, 2, 2, "test");
	q.kind = FAST_TRAFFIC_COMBINE;
	m1 = (uint32_t)fast_plan_add_mask(&q, 0x1, &err);
	m2 = (uint32_t)fast_plan_add_mask(&q, 0x2, &err);
	OK(fast_plan_add_lane(&q, 1, 0, 1, &err)); /* GPU 3 -> GPU 1 */
	OK(fast_plan_add_lane_piece(&q, 0, m2, 0, 4, &err)); /* on to GPU 0 */
	OK(fast_plan_add_lane_piece(&q, 1, m1, 0, 4, &err)); /* final at GPU 1 */
	OK(fast_plan_add_lane(&q, 1, 0, 0, &err)); /* GPU 2 -> GPU 0 */
	OK(fast_plan_add_lane_piece(&q, 0, m1, 0, 4, &err));
	OK(fast_plan_add_step(&q, FAST_STEP_RAIL, FAST_TIER_OUT, &err));
	OK(fast_plan_set_perm(&q, perm, 8, &err));
	OK(fast_plan_add_step(&q, FAST_STEP_REDIST, FAST_TIER_UP, &err));
	OK(fast_plan_add_dep(&q, 1, 0, false, &err));
	OK(fast_plan_set_redist(&q, 0, &err));
	expect_tok(&q, &t, 0, NULL, __LINE__);
	q.steps[1].kind = FAST_STEP_EXPLICIT; /* no redistribution */
	expect_tok(&q, &t, FAST_ECHECK,
		   "group 0 (GPU 0, 1 tokens) bytes 0..4: the contribution of GPU 3 never reaches "
		   "GPU 0", __LINE__);
	fast_plan_free(&q);
	fast_traffic_free(&t);
}

/* A byte plan over a token matrix is checked against its per-GPU bytes:
 * one transfer per (src, dst) entry (fanout), on the command path. */
static void test_check__byte_plan_on_token_matrix(void)
{
	struct fast_traffic t;
	struct fast_plan tp, p;
	struct fast_err err;

	for (int kind = 0; kind < 2; kind++) {
		if (kind == 0)
			tok_dispatch_example(&t, &tp);
		else
			tok_combine_example(&t, &tp);
		const uint64_t *D = t.m[0].bytes;
		fast_plan_init(&p, 2, 2, "fanout");
		for (int tier = 0; tier < 2; tier++) {
			OK(fast_plan_add_step(&p, FAST_STEP_EXPLICIT, (enum fast_tier_id)tier, &err));
			for (uint32_t s = 0; s < NG; s++)
				for (uint32_t d = 0; d < NG; d++) {
					if (s == d || !D[s * NG + d] || (s / 2 != d / 2) != (tier == 1))
						continue;
					OK(fast_plan_add_xfer(&p, s, d, &err));
					OK(fast_plan_add_piece(&p, s, d, 0, D[s * NG + d], &err));
				}
		}
		expect_tok(&p, &t, 0, NULL, __LINE__);
		p.pieces[0].len--;
		p.xfers[0].bytes--;
		expect_tok(&p, &t, FAST_ECHECK, "never reach", __LINE__);
		fast_plan_free(&p);
		fast_plan_free(&tp);
		fast_traffic_free(&t);
	}
}

UNIT_MAIN("check_tokens",
	  UNIT_TEST(test_check__token_dispatch),
	  UNIT_TEST(test_check__token_combine),
	  UNIT_TEST(test_check__byte_plan_on_token_matrix))
