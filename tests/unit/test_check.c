/*
 * test_check.c - the plan checker on byte plans: hand-built good plans pass
 * (direct, a tiny FAST plan with lanes, rail stages and redistributions, a
 * chunked pipelined forward) and hand-broken ones fail with the right
 * message; random piece splits and every compiler's plans pass.  Against
 * naive references: test_check_naive.c; token plans: test_check_tokens.c.
 */
#include <CUnit/Basic.h>

#include "unit.h"
#include <stdlib.h>
#include <string.h>

#include "fast/algo.h"
#include "fast/check.h"
#include "check_fix.h"

/* D for the FAST plan: server 0 -> server 1 is unbalanced (GPU 0 sends 150
 * bytes, GPU 1 sends 10), server 1 -> server 0 is balanced. */
static void fast_matrix(uint64_t *D)
{
	memset(D, 0, NG * NG * sizeof *D);
	D[0 * NG + 0] = 5;   /* diagonal: implicit */
	D[0 * NG + 1] = 7;   /* intrinsic */
	D[0 * NG + 2] = 100;
	D[0 * NG + 3] = 50;
	D[1 * NG + 2] = 10;
	D[2 * NG + 0] = 30;
	D[3 * NG + 1] = 30;
}

/* Steps: 0 balance (up), 1 stage (out, w=50), 2 redist 1, 3 stage (out,
 * w=30), 4 redist 3, 5 intrinsic (up).  Lane targets are 80 bytes. */
static void build_fast(struct fast_plan *p, bool dep_4_on_3)
{
	struct fast_err err;
	uint32_t perm[2] = { 1, 0 };

	fast_plan_init(p, 2, 2, "fast");
	/* lanes after balancing: GPU 0 keeps D[0][2] 0..80, GPU 1 gets the rest */
	OK(fast_plan_add_lane(p, 0, 1, 0, &err));
	OK(fast_plan_add_lane_piece(p, 0, 2, 0, 80, &err));
	OK(fast_plan_add_lane(p, 0, 1, 1, &err));
	OK(fast_plan_add_lane_piece(p, 1, 2, 0, 10, &err));
	OK(fast_plan_add_lane_piece(p, 0, 3, 0, 50, &err));
	OK(fast_plan_add_lane_piece(p, 0, 2, 80, 20, &err));
	OK(fast_plan_add_lane(p, 1, 0, 0, &err));
	OK(fast_plan_add_lane_piece(p, 2, 0, 0, 30, &err));
	OK(fast_plan_add_lane(p, 1, 0, 1, &err));
	OK(fast_plan_add_piece(p, 3, 1, 0, 30, &err)); /* add_piece follows the open lane */

	CU_ASSERT_EQUAL(fast_plan_add_step(p, FAST_STEP_EXPLICIT, FAST_TIER_UP, &err), 0);
	OK(fast_plan_add_xfer(p, 0, 1, &err));
	OK(fast_plan_add_piece(p, 0, 3, 0, 50, &err));
	OK(fast_plan_add_piece(p, 0, 2, 80, 20, &err));

	CU_ASSERT_EQUAL(fast_plan_add_step(p, FAST_STEP_RAIL, FAST_TIER_OUT, &err), 1);
	OK(fast_plan_add_dep(p, 1, 0, false, &err));
	OK(fast_plan_set_perm(p, perm, 50, &err));

	CU_ASSERT_EQUAL(fast_plan_add_step(p, FAST_STEP_REDIST, FAST_TIER_UP, &err), 2);
	OK(fast_plan_add_dep(p, 2, 1, false, &err));
	OK(fast_plan_set_redist(p, 1, &err));

	CU_ASSERT_EQUAL(fast_plan_add_step(p, FAST_STEP_RAIL, FAST_TIER_OUT, &err), 3);
	OK(fast_plan_add_dep(p, 3, 1, false, &err));
	OK(fast_plan_set_perm(p, perm, 30, &err));

	CU_ASSERT_EQUAL(fast_plan_add_step(p, FAST_STEP_REDIST, FAST_TIER_UP, &err), 4);
	if (dep_4_on_3)
		OK(fast_plan_add_dep(p, 4, 3, false, &err));
	else
		OK(fast_plan_add_dep(p, 4, 1, false, &err));
	OK(fast_plan_set_redist(p, 3, &err));

	CU_ASSERT_EQUAL(fast_plan_add_step(p, FAST_STEP_EXPLICIT, FAST_TIER_UP, &err), 5);
	OK(fast_plan_add_xfer(p, 0, 1, &err));
	OK(fast_plan_add_piece(p, 0, 1, 0, 7, &err));
}

/* a direct plan for any D on 2x2: intra-server transfers in step 0 (up),
 * cross-server in step 1 (out), one piece per message */
static void build_direct(struct fast_plan *p, const uint64_t *D, const char *algo)
{
	struct fast_err err;
	fast_plan_init(p, 2, 2, algo);
	for (int tier = 0; tier < 2; tier++) {
		fast_plan_add_step(p, FAST_STEP_EXPLICIT, (enum fast_tier_id)tier, &err);
		for (uint32_t s = 0; s < NG; s++)
			for (uint32_t d = 0; d < NG; d++) {
				if (s == d || !D[s * NG + d] || (s / 2 != d / 2) != (tier == 1))
					continue;
				OK(fast_plan_add_xfer(p, s, d, &err));
				OK(fast_plan_add_piece(p, s, d, 0, D[s * NG + d], &err));
			}
	}
}

static int check(const struct fast_plan *p, const uint64_t *D, struct fast_err *err)
{
	struct fast_topo t = topo2x2();
	memset(err, 0, sizeof *err);
	return unit_check(p, &t, D, err);
}

/* check p against D: the code must be `code` and, when text is given, the
 * message must contain it (printed on a mismatch, to ease fixing) */
static void expect(const struct fast_plan *p, const uint64_t *D, int code, const char *text,
		   int line)
{
	struct fast_err e;
	int rc = check(p, D, &e);
	bool ok = rc == code && (!text || strstr(e.msg, text));
	CU_ASSERT(ok);
	if (!ok)
		fprintf(stderr, "\n  line %d: got %d: %s\n", line, rc, rc ? e.msg : "");
}
#define EXPECT(p, D, code, text) expect(p, D, code, text, __LINE__)

static void test_check__fast_plan_passes(void)
{
	uint64_t D[NG * NG];
	struct fast_plan p;
	fast_matrix(D);
	build_fast(&p, true);
	EXPECT(&p, D, 0, NULL);
	fast_plan_free(&p);
}

static void test_check__direct_plan_passes_and_diagonal_is_implicit(void)
{
	uint64_t D[NG * NG];
	struct fast_plan p;
	struct fast_err err;
	for (int i = 0; i < NG * NG; i++)
		D[i] = 16 + (uint64_t)i;
	build_direct(&p, D, "fanout");
	EXPECT(&p, D, 0, NULL);
	/* an explicit local copy of part of the diagonal must then cover it all */
	OK(fast_plan_add_xfer(&p, 3, 3, &err));
	OK(fast_plan_add_piece(&p, 3, 3, 0, 10, &err));
	EXPECT(&p, D, FAST_ECHECK, "D[3][3] bytes 10..31 never reach GPU 3");
	p.pieces[p.npieces - 1].len = 31;
	p.xfers[p.nxfers - 1].bytes = 31;
	EXPECT(&p, D, 0, NULL);
	fast_plan_free(&p);
}

static void test_check__dropped_piece(void)
{
	uint64_t D[NG * NG];
	struct fast_plan p;
	struct fast_err err;
	for (int i = 0; i < NG * NG; i++)
		D[i] = 100;
	build_direct(&p, D, "fanout");
	/* shorten the last transfer's only piece: bytes 60..100 are dropped */
	p.pieces[p.npieces - 1].len = 60;
	p.xfers[p.nxfers - 1].bytes = 60;
	EXPECT(&p, D, FAST_ECHECK, "D[3][1] bytes 60..100 never reach GPU 1");
	fast_plan_free(&p);
	(void)err;
}

static void test_check__duplicated_piece(void)
{
	uint64_t D[NG * NG];
	struct fast_plan p;
	struct fast_err err;
	memset(D, 0, sizeof D);
	D[0 * NG + 2] = 100;
	build_direct(&p, D, "fanout");
	OK(fast_plan_add_xfer(&p, 0, 2, &err));
	OK(fast_plan_add_piece(&p, 0, 2, 40, 10, &err));
	EXPECT(&p, D, FAST_ECHECK,
	       "D[0][2] bytes 40..50 are delivered twice to GPU 2: by step 1 transfer 0 piece 0 "
	       "and by step 1 transfer 1 piece 0");
	fast_plan_free(&p);
}

static void test_check__pieces_not_tiling(void)
{
	uint64_t D[NG * NG];
	struct fast_plan p;
	struct fast_err err;
	memset(D, 0, sizeof D);
	D[1 * NG + 3] = 100;
	fast_plan_init(&p, 2, 2, "fanout");
	fast_plan_add_step(&p, FAST_STEP_EXPLICIT, FAST_TIER_OUT, &err);
	OK(fast_plan_add_xfer(&p, 1, 3, &err));
	OK(fast_plan_add_piece(&p, 1, 3, 0, 30, &err));
	OK(fast_plan_add_piece(&p, 1, 3, 40, 60, &err));
	EXPECT(&p, D, FAST_ECHECK, "D[1][3] bytes 30..40 never reach GPU 3");
	/* overlap instead of gap */
	p.pieces[1].off = 20;
	p.pieces[1].len = 80;
	p.xfers[0].bytes = 110;
	EXPECT(&p, D, FAST_ECHECK, "D[1][3] bytes 20..30 are delivered twice");
	/* outside the message */
	p.pieces[1].off = 30;
	p.pieces[1].len = 80;
	EXPECT(&p, D, FAST_ECHECK, "piece 1 (D[1][3] bytes 30..110): outside the message");
	/* transfer bytes that lie about their pieces */
	p.pieces[1].len = 70;
	p.xfers[0].bytes = 99;
	EXPECT(&p, D, FAST_ECHECK, "says 99 bytes but its pieces add up to 100");
	fast_plan_free(&p);
}

static void test_check__forward_before_arrival(void)
{
	uint64_t D[NG * NG];
	struct fast_plan p;
	struct fast_err err;
	memset(D, 0, sizeof D);
	D[0 * NG + 3] = 64;
	/* step 0: GPU 1 forwards to 3 what only arrives from GPU 0 in step 1 */
	fast_plan_init(&p, 2, 2, "pxn");
	fast_plan_add_step(&p, FAST_STEP_EXPLICIT, FAST_TIER_OUT, &err);
	OK(fast_plan_add_xfer(&p, 1, 3, &err));
	OK(fast_plan_add_piece(&p, 0, 3, 0, 64, &err));
	fast_plan_add_step(&p, FAST_STEP_EXPLICIT, FAST_TIER_UP, &err);
	OK(fast_plan_add_dep(&p, 1, 0, false, &err));
	OK(fast_plan_add_xfer(&p, 0, 1, &err));
	OK(fast_plan_add_piece(&p, 0, 3, 0, 64, &err));
	EXPECT(&p, D, FAST_ECHECK,
	       "step 0 transfer 0 (GPU 1 -> GPU 3) piece 0 (D[0][3] bytes 0..64): GPU 1 does not "
	       "hold bytes 0..64 at this step (they arrive in step 1, which step 0 does not "
	       "depend on)");
	fast_plan_free(&p);
}

static void test_check__forward_without_dependency(void)
{
	uint64_t D[NG * NG];
	struct fast_plan p;
	fast_matrix(D);
	/* redistribution 4 depends on stage 1 only, not on stage 3 it forwards */
	build_fast(&p, false);
	EXPECT(&p, D, FAST_ECHECK,
	       "step 4 transfer 0 (GPU 3 -> GPU 2) piece 0 (D[0][2] bytes 80..100): GPU 3 does "
	       "not hold bytes 80..100 at this step (they arrive in step 3, which step 4 does "
	       "not depend on)");
	fast_plan_free(&p);
}

static void test_check__lane_leftover_and_bad_lane(void)
{
	uint64_t D[NG * NG];
	struct fast_plan p;
	fast_matrix(D);
	build_fast(&p, true);
	p.budgets[p.steps[3].budget0] = 20; /* stage 3 too small: lane 0->1 keeps 10 bytes */
	EXPECT(&p, D, FAST_ECHECK,
	       "lane (server 0 -> server 1, rail 0): 10 of its 80 bytes are never sent");
	p.budgets[p.steps[3].budget0] = 30;
	D[1 * NG + 2] = 5; /* the lane's piece D[1][2] 0..10 is outside it */
	EXPECT(&p, D, FAST_ECHECK, "lane (server 0 -> server 1, rail 1) piece 0");
	fast_plan_free(&p);
}

static void build_pipelined(struct fast_plan *p, bool reversed)
{
	struct fast_err err;
	fast_plan_init(p, 2, 2, "pxn");
	fast_plan_add_step(p, FAST_STEP_EXPLICIT, FAST_TIER_UP, &err);
	OK(fast_plan_set_chunks(p, 4, &err));
	OK(fast_plan_add_xfer(p, 0, 1, &err));
	OK(fast_plan_add_piece(p, 0, 3, 0, 100, &err));
	fast_plan_add_step(p, FAST_STEP_EXPLICIT, FAST_TIER_OUT, &err);
	OK(fast_plan_set_chunks(p, 4, &err));
	OK(fast_plan_add_dep(p, 1, 0, true, &err));
	OK(fast_plan_add_xfer(p, 1, 3, &err));
	if (reversed) {
		OK(fast_plan_add_piece(p, 0, 3, 50, 50, &err));
		OK(fast_plan_add_piece(p, 0, 3, 0, 50, &err));
	} else {
		OK(fast_plan_add_piece(p, 1, 3, 0, 40, &err)); /* its own bytes first */
		OK(fast_plan_add_piece(p, 0, 3, 0, 100, &err));
	}
}

static void test_check__pipelined_chunks(void)
{
	uint64_t D[NG * NG];
	struct fast_plan p;
	memset(D, 0, sizeof D);
	D[0 * NG + 3] = 100;
	D[1 * NG + 3] = 40;
	build_pipelined(&p, false);
	EXPECT(&p, D, 0, NULL);
	fast_plan_free(&p);

	/* chunk 0 of step 1 forwards D[0][3] 50..75, which arrives in chunk 2 */
	D[1 * NG + 3] = 0;
	build_pipelined(&p, true);
	EXPECT(&p, D, FAST_ECHECK,
	       "step 1 transfer 0 (GPU 1 -> GPU 3) piece 0 (D[0][3] bytes 50..100), chunk 0: "
	       "GPU 1 does not hold bytes 50..75 at this point (they arrive in chunk 2 of step "
	       "0, and chunk 0 of step 1 waits only for chunks 0..0 of it)");
	/* the same with a whole-step dependency passes */
	p.deps[0].pipelined = 0;
	EXPECT(&p, D, 0, NULL);
	fast_plan_free(&p);
}

static void test_check__chunks_through_a_chain(void)
{
	uint64_t D[NG * NG];
	struct fast_plan p;
	struct fast_err err;
	memset(D, 0, sizeof D);
	D[0 * NG + 3] = 100;
	/* 0 -> 1 (chunked) ; 1 -> 3 pipelined on it ; then a whole step on 1
	 * reaching 0 transitively through a pipelined edge is still whole */
	build_pipelined(&p, true);
	p.deps[0].pipelined = 0; /* step 1 waits for all of step 0 */
	fast_plan_add_step(&p, FAST_STEP_EXPLICIT, FAST_TIER_UP, &err);
	OK(fast_plan_set_chunks(&p, 4, &err));
	OK(fast_plan_add_dep(&p, 2, 1, true, &err));
	/* step 2: GPU 1 re-sends (a copy) to GPU 0 what it got in step 0 */
	OK(fast_plan_add_xfer(&p, 1, 0, &err));
	OK(fast_plan_add_piece(&p, 0, 3, 50, 50, &err));
	EXPECT(&p, D, 0, NULL);
	fast_plan_free(&p);
}

/* more chunks than bytes: most chunks are empty */
static void test_check__more_chunks_than_bytes(void)
{
	uint64_t D[NG * NG];
	struct fast_plan p;
	struct fast_err err;
	memset(D, 0, sizeof D);
	D[0 * NG + 3] = 5;
	for (int reversed = 0; reversed < 2; reversed++) {
		fast_plan_init(&p, 2, 2, "pxn");
		fast_plan_add_step(&p, FAST_STEP_EXPLICIT, FAST_TIER_UP, &err);
		OK(fast_plan_set_chunks(&p, 64, &err));
		OK(fast_plan_add_xfer(&p, 0, 1, &err));
		OK(fast_plan_add_piece(&p, 0, 3, 0, 5, &err));
		fast_plan_add_step(&p, FAST_STEP_EXPLICIT, FAST_TIER_OUT, &err);
		OK(fast_plan_set_chunks(&p, 64, &err));
		OK(fast_plan_add_dep(&p, 1, 0, true, &err));
		OK(fast_plan_add_xfer(&p, 1, 3, &err));
		if (reversed) {
			OK(fast_plan_add_piece(&p, 0, 3, 4, 1, &err));
			OK(fast_plan_add_piece(&p, 0, 3, 0, 4, &err));
			/* byte 4 is stream byte 0 here, in chunk 12 (chunks 0..11
			 * are empty: chunk c starts at floor(5c/64)); stream byte 4
			 * in step 0, chunk 63 there */
			EXPECT(&p, D, FAST_ECHECK,
			       "chunk 12: GPU 1 does not hold bytes 4..5 at this point (they arrive "
			       "in chunk 63 of step 0, and chunk 12 of step 1 waits only for chunks "
			       "0..12 of it)");
		} else {
			OK(fast_plan_add_piece(&p, 0, 3, 0, 5, &err));
			EXPECT(&p, D, 0, NULL);
		}
		fast_plan_free(&p);
	}
	fast_plan_init(&p, 2, 2, "pxn");
	fast_plan_add_step(&p, FAST_STEP_EXPLICIT, FAST_TIER_UP, &err);
	CU_ASSERT_EQUAL(fast_plan_set_chunks(&p, FAST_PLAN_MAX_CHUNKS + 1, &err), FAST_EINPUT);
	p.steps[0].chunks = FAST_PLAN_MAX_CHUNKS + 1;
	EXPECT(&p, D, FAST_EINPUT, "step 0: chunks must be in 1..65536");
	fast_plan_free(&p);
}

/* The most chunks a step may have, on a message cut in two pieces whose
 * order differs between the arriving and the forwarding step: every
 * chunk's bytes are found (one arrival record per piece, whatever the
 * chunks), and the first chunk that forwards bytes arriving later is
 * named exactly. */
static void test_check__max_chunks_pieces_reordered(void)
{
	const uint64_t L = 1000003, half = 500000;
	const uint32_t K = FAST_PLAN_MAX_CHUNKS;
	uint64_t D[NG * NG];
	struct fast_plan p;
	struct fast_err err;
	char want[256];

	memset(D, 0, sizeof D);
	D[0 * NG + 3] = L;
	for (int v = 0; v < 3; v++) {
		fast_plan_init(&p, 2, 2, "pxn");
		fast_plan_add_step(&p, FAST_STEP_EXPLICIT, FAST_TIER_UP, &err);
		OK(fast_plan_set_chunks(&p, K, &err));
		OK(fast_plan_add_xfer(&p, 0, 1, &err));
		if (v == 0) {
			OK(fast_plan_add_piece(&p, 0, 3, 0, L, &err));
		} else { /* the upper half first */
			OK(fast_plan_add_piece(&p, 0, 3, half, L - half, &err));
			OK(fast_plan_add_piece(&p, 0, 3, 0, half, &err));
		}
		fast_plan_add_step(&p, FAST_STEP_EXPLICIT, FAST_TIER_OUT, &err);
		OK(fast_plan_set_chunks(&p, K, &err));
		OK(fast_plan_add_dep(&p, 1, 0, true, &err));
		OK(fast_plan_add_xfer(&p, 1, 3, &err));
		if (v == 2) { /* forwarded in the order it arrives: held */
			OK(fast_plan_add_piece(&p, 0, 3, half, L - half, &err));
			OK(fast_plan_add_piece(&p, 0, 3, 0, half, &err));
		} else {
			OK(fast_plan_add_piece(&p, 0, 3, 0, L, &err));
		}
		if (v == 1) {
			/* chunk 0 forwards bytes 0..chunk_start(1), which arrive at
			 * stream byte L - half of step 0 */
			uint64_t e = fast_plan_chunk_start(L, K, 1);
			snprintf(want, sizeof want,
				 "step 1 transfer 0 (GPU 1 -> GPU 3) piece 0 (D[0][3] bytes 0..%llu), "
				 "chunk 0: GPU 1 does not hold bytes 0..%llu at this point (they arrive "
				 "in chunk %u of step 0, and chunk 0 of step 1 waits only for chunks "
				 "0..0 of it)", (unsigned long long)L, (unsigned long long)e,
				 fast_plan_chunk_of(L, K, L - half));
			EXPECT(&p, D, FAST_ECHECK, want);
			p.deps[0].pipelined = 0; /* waiting for all of step 0: held */
		}
		EXPECT(&p, D, 0, NULL);
		fast_plan_free(&p);
	}
}

static void test_check__incast_in_fast_out_step(void)
{
	uint64_t D[NG * NG];
	struct fast_plan p;
	memset(D, 0, sizeof D);
	D[0 * NG + 2] = 10;
	D[1 * NG + 2] = 10;
	build_direct(&p, D, "fast");
	EXPECT(&p, D, FAST_ECHECK,
	       "step 1 transfer 1 (GPU 1 -> GPU 2): incast: the NIC of GPU 2 also receives from "
	       "GPU 0 in this step");
	/* the same plan is fine for a baseline */
	snprintf(p.algo, sizeof p.algo, "fanout");
	EXPECT(&p, D, 0, NULL);
	fast_plan_free(&p);
}

static void test_check__tier_up_across_servers(void)
{
	uint64_t D[NG * NG];
	struct fast_plan p;
	struct fast_err err;
	memset(D, 0, sizeof D);
	D[0 * NG + 2] = 10;
	fast_plan_init(&p, 2, 2, "fanout");
	fast_plan_add_step(&p, FAST_STEP_EXPLICIT, FAST_TIER_UP, &err);
	OK(fast_plan_add_xfer(&p, 0, 2, &err));
	OK(fast_plan_add_piece(&p, 0, 2, 0, 10, &err));
	EXPECT(&p, D, FAST_ECHECK, "a tier up transfer crosses servers (0 -> 1)");
	fast_plan_free(&p);
}

static void test_check__malformed_is_bad_input(void)
{
	uint64_t D[NG * NG];
	struct fast_plan p;
	struct fast_topo big = topo2x2();
	struct fast_err err;
	fast_matrix(D);

	build_fast(&p, true);
	p.deps[0].step = 4; /* step 1 waits for 4, 4 -> 3 -> 1: a cycle */
	EXPECT(&p, D, FAST_EINPUT, "dependency cycle");
	p.deps[0].step = 99;
	EXPECT(&p, D, FAST_EINPUT, "step 1: dependency 0 names unknown step 99");
	fast_plan_free(&p);

	build_fast(&p, true);
	p.xfers[0].to = 9;
	EXPECT(&p, D, FAST_EINPUT, "step 0 transfer 0: GPU 0 -> GPU 9 out of range");
	fast_plan_free(&p);

	build_fast(&p, true);
	big.servers = 3;
	CU_ASSERT_EQUAL(unit_check(&p, &big, D, &err), FAST_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "the plan is for 2 servers x 2 GPUs"));
	fast_plan_free(&p);
}

/* property: random direct plans with random piece splits pass; removing a
 * random piece always fails */
static void test_check__random_split_plans(void)
{
	struct fast_rng rng;
	fast_rng_seed(&rng, 7);
	for (int iter = 0; iter < 50; iter++) {
		uint64_t D[NG * NG];
		struct fast_plan p;
		struct fast_err err;
		for (int i = 0; i < NG * NG; i++)
			D[i] = fast_rng_below(&rng, 3) ? fast_rng_below(&rng, 200) : 0;
		fast_plan_init(&p, 2, 2, "spreadout");
		fast_plan_add_step(&p, FAST_STEP_EXPLICIT, FAST_TIER_UP, &err);
		for (uint32_t s = 0; s < NG; s++)
			for (uint32_t d = 0; d < NG; d++) {
				if (s == d || !D[s * NG + d])
					continue;
				if (s / 2 != d / 2) {
					/* cross: relay through the GPU on d's rail */
					uint32_t via = (s / 2) * 2 + d % 2;
					if (via != s) {
						OK(fast_plan_add_xfer(&p, s, via, &err));
						OK(fast_plan_add_piece(&p, s, d, 0, D[s * NG + d], &err));
					}
					continue;
				}
				OK(fast_plan_add_xfer(&p, s, d, &err));
				uint64_t off = 0;
				while (off < D[s * NG + d]) {
					uint64_t len = 1 + fast_rng_below(&rng, D[s * NG + d] - off);
					OK(fast_plan_add_piece(&p, s, d, off, len, &err));
					off += len;
				}
			}
		fast_plan_add_step(&p, FAST_STEP_EXPLICIT, FAST_TIER_OUT, &err);
		OK(fast_plan_add_dep(&p, 1, 0, false, &err));
		for (uint32_t s = 0; s < NG; s++)
			for (uint32_t d = 0; d < NG; d++) {
				if (s / 2 == d / 2 || !D[s * NG + d])
					continue;
				OK(fast_plan_add_xfer(&p, (s / 2) * 2 + d % 2, d, &err));
				OK(fast_plan_add_piece(&p, s, d, 0, D[s * NG + d], &err));
			}
		EXPECT(&p, D, 0, NULL);
		/* shortening any piece of more than one byte breaks the plan */
		for (size_t v = 0; v < p.npieces; v++) {
			if (p.pieces[v].len < 2)
				continue;
			p.pieces[v].len--;
			struct fast_err e;
			CU_ASSERT_EQUAL(check(&p, D, &e), FAST_ECHECK);
			p.pieces[v].len++;
		}
		fast_plan_free(&p);
	}
}

/* property: every compiler's plan passes on random matrices (zeros,
 * odd sizes and a skewed row included) on a few small shapes */
static void test_check__every_compiler_passes(void)
{
	static const uint32_t shapes[][2] = { { 2, 2 }, { 3, 2 }, { 2, 4 }, { 4, 3 } };
	struct fast_limits lim;
	struct fast_rng rng;
	fast_limits_default(&lim);
	fast_rng_seed(&rng, 5);
	for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; sh++) {
		struct fast_topo topo;
		struct fast_err err;
		uint32_t ng = shapes[sh][0] * shapes[sh][1];
		uint64_t *D = calloc((size_t)ng * ng, sizeof *D);
		CU_ASSERT_PTR_NOT_NULL_FATAL(D);
		OK(fast_topo_preset("h200", shapes[sh][0], shapes[sh][1], &lim, &topo, &err));
		for (uint32_t i = 0; i < ng * ng; i++)
			D[i] = fast_rng_below(&rng, 4) ? fast_rng_below(&rng, 5000) : 0;
		for (uint32_t d = 0; d < ng; d++)
			D[d] += 100000; /* GPU 0 sends much more */
		for (const struct fast_algo *al = fast_algos; al->name; al++) {
			struct fast_plan p;
			struct fast_algo_opts o;
			fast_algo_opts_default(&o);
			struct fast_matrix mx = fast_matrix_of(D, fast_topo_ngpus(&topo));
			int rc = fast_compile(al->name, &topo, &mx, &o, &p, &err);
			CU_ASSERT_EQUAL(rc, 0);
			if (rc < 0) {
				fprintf(stderr, "\n  %s %ux%u: compile: %s\n", al->name, shapes[sh][0],
					shapes[sh][1], err.msg);
				continue;
			}
			rc = unit_check(&p, &topo, D, &err);
			CU_ASSERT_EQUAL(rc, 0);
			if (rc < 0)
				fprintf(stderr, "\n  %s %ux%u: %s\n", al->name, shapes[sh][0],
					shapes[sh][1], err.msg);
			fast_plan_free(&p);
		}
		free(D);
	}
}

UNIT_MAIN("check",
	  UNIT_TEST(test_check__fast_plan_passes),
	  UNIT_TEST(test_check__direct_plan_passes_and_diagonal_is_implicit),
	  UNIT_TEST(test_check__dropped_piece),
	  UNIT_TEST(test_check__duplicated_piece),
	  UNIT_TEST(test_check__pieces_not_tiling),
	  UNIT_TEST(test_check__forward_before_arrival),
	  UNIT_TEST(test_check__forward_without_dependency),
	  UNIT_TEST(test_check__lane_leftover_and_bad_lane),
	  UNIT_TEST(test_check__pipelined_chunks),
	  UNIT_TEST(test_check__chunks_through_a_chain),
	  UNIT_TEST(test_check__more_chunks_than_bytes),
	  UNIT_TEST(test_check__max_chunks_pieces_reordered),
	  UNIT_TEST(test_check__incast_in_fast_out_step),
	  UNIT_TEST(test_check__tier_up_across_servers),
	  UNIT_TEST(test_check__malformed_is_bad_input),
	  UNIT_TEST(test_check__random_split_plans),
	  UNIT_TEST(test_check__every_compiler_passes))
