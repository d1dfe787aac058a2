/*
 * test_check.c - the plan checker: hand-built good plans pass (direct,
 * a tiny FAST plan with lanes, rail stages and redistributions, a chunked
 * pipelined forward) and hand-broken ones fail with the right message.
 */
#include <CUnit/Basic.h>

#include "unit.h"
#include <stdlib.h>
#include <string.h>

#include "fast/algo.h"
#include "fast/check.h"
#include "tok.h"

#define NG 4 /* 2 servers x 2 GPUs */

static struct fast_topo topo2x2(void)
{
	struct fast_topo t;
	memset(&t, 0, sizeof t);
	t.servers = 2;
	t.gpus = 2;
	return t;
}

#define OK(x)                                            \
	do {                                             \
		int ok_ = (x);                           \
		CU_ASSERT_EQUAL_FATAL(ok_ < 0 ? ok_ : 0, 0); \
	} while (0)

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

/* --- the checker against a naive reference ------------------------------ */

#define RN 6  /* steps */
#define RB 8  /* bytes per message */

/* level[u]: 2 if step t reaches u through a path with a whole-step edge,
 * 1 if only through pipelined paths, 0 if not at all (plain DFS) */
static void naive_reach(const struct fast_plan *p, uint32_t t, int *level)
{
	int seen[RN][2] = { { 0 } };
	uint32_t stack[4 * RN * RN][2];
	int top = 0;
	memset(level, 0, RN * sizeof *level);
	stack[top][0] = t;
	stack[top++][1] = 0;
	while (top) {
		top--;
		uint32_t v = stack[top][0], full = stack[top][1];
		const struct fast_step *s = &p->steps[v];
		for (uint32_t j = 0; j < s->ndeps; j++) {
			uint32_t u = p->deps[s->dep0 + j].step;
			uint32_t f = full || !p->deps[s->dep0 + j].pipelined;
			if (seen[u][f])
				continue;
			seen[u][f] = 1;
			if ((int)(f + 1) > level[u])
				level[u] = (int)f + 1;
			stack[top][0] = u;
			stack[top++][1] = f;
		}
	}
}

static uint32_t naive_chunk(uint64_t L, uint32_t k, uint64_t pos)
{
	for (uint32_t c = 0; c < k; c++)
		if ((c * L) / k <= pos && pos < ((c + 1) * L) / k)
			return c;
	return UINT32_MAX;
}

/* 0 correct, 1 a send of bytes not held, 2 a delivery defect */
static int naive_check(const struct fast_plan *p)
{
	int count[NG][NG][RB] = { { { 0 } } };
	for (uint32_t t = 0; t < p->nsteps; t++) {
		const struct fast_step *s = &p->steps[t];
		int level[RN];
		naive_reach(p, t, level);
		for (uint32_t j = 0; j < s->nxfers; j++) {
			const struct fast_xfer *x = &p->xfers[s->xfer0 + j];
			uint64_t pos = 0;
			for (uint32_t k = 0; k < x->npieces; k++) {
				const struct fast_piece *pc = &p->pieces[x->piece0 + k];
				for (uint64_t b = pc->off; b < pc->off + pc->len; b++, pos++) {
					uint32_t c = naive_chunk(x->bytes, s->chunks, pos);
					bool held = pc->src == x->from;
					/* any arrival of byte b at x->from usable here? */
					for (uint32_t u = 0; u < p->nsteps && !held; u++) {
						const struct fast_step *su = &p->steps[u];
						if (!level[u])
							continue;
						for (uint32_t j2 = 0; j2 < su->nxfers && !held; j2++) {
							const struct fast_xfer *y = &p->xfers[su->xfer0 + j2];
							uint64_t pos2 = 0;
							for (uint32_t k2 = 0; k2 < y->npieces; k2++) {
								const struct fast_piece *q = &p->pieces[y->piece0 + k2];
								if (y->to == x->from && q->src == pc->src &&
								    q->dst == pc->dst && q->off <= b &&
								    b < q->off + q->len) {
									uint32_t cu = naive_chunk(y->bytes, su->chunks,
												  pos2 + b - q->off);
									if (level[u] == 2 || cu <= c)
										held = true;
								}
								pos2 += q->len;
							}
						}
					}
					if (!held)
						return 1;
				}
			}
		}
	}
	for (uint32_t t = 0; t < p->nsteps; t++) {
		const struct fast_step *s = &p->steps[t];
		for (uint32_t j = 0; j < s->nxfers; j++) {
			const struct fast_xfer *x = &p->xfers[s->xfer0 + j];
			for (uint32_t k = 0; k < x->npieces; k++) {
				const struct fast_piece *pc = &p->pieces[x->piece0 + k];
				if (x->to == pc->dst)
					for (uint64_t b = pc->off; b < pc->off + pc->len; b++)
						count[pc->src][pc->dst][b]++;
			}
		}
	}
	for (int a = 0; a < NG; a++)
		for (int b = 0; b < NG; b++)
			for (int i = 0; i < RB; i++)
				if (a != b && count[a][b][i] != 1)
					return 2;
	return 0;
}

struct rxf {
	uint32_t from, to, src, dst;
	uint64_t off, len;
};

/* Random plans on one server of 4 GPUs: every message routed directly or
 * through a relay in 1-2 pieces, relays waiting (pipelined or not) for the
 * step that brings their bytes, then deps dropped or flipped at random;
 * the checker and the naive reference must agree on the verdict. */
static void test_check__agrees_with_naive_reference(void)
{
	struct fast_rng rng;
	struct fast_topo t = topo2x2();
	int verdicts[3] = { 0, 0, 0 };
	t.servers = 1;
	t.gpus = NG;
	fast_rng_seed(&rng, 11);
	for (int iter = 0; iter < 400; iter++) {
		uint64_t D[NG * NG];
		struct fast_plan p;
		struct fast_err err;
		uint32_t chunks[RN];
		/* per step: up to 12 transfers of one piece each, staged here */
		struct rxf xf[RN][16];
		int nx[RN] = { 0 };
		bool dep[RN][RN] = { { false } }, pipe[RN][RN] = { { false } };

		for (int i = 0; i < NG * NG; i++)
			D[i] = i % (NG + 1) ? RB : 0;
		for (int k = 0; k < RN; k++)
			chunks[k] = 1 + (uint32_t)fast_rng_below(&rng, 3);
		for (uint32_t a = 0; a < NG; a++)
			for (uint32_t b = 0; b < NG; b++) {
				if (a == b)
					continue;
				uint64_t cut = fast_rng_below(&rng, 2) ? 1 + fast_rng_below(&rng, RB - 1) : RB;
				for (uint64_t off = 0; off < RB; off = cut, cut = RB) {
					uint32_t relay = (uint32_t)fast_rng_below(&rng, NG);
					uint32_t s1 = (uint32_t)fast_rng_below(&rng, RN - 1);
					if (relay == a || relay == b || nx[s1] == 16) {
						if (nx[s1] < 16)
							xf[s1][nx[s1]++] = (struct rxf){ a, b, a, b, off, cut - off };
						continue;
					}
					uint32_t s2 = s1 + 1 + (uint32_t)fast_rng_below(&rng, RN - 1 - s1);
					if (nx[s2] == 16)
						continue;
					xf[s1][nx[s1]++] = (struct rxf){ a, relay, a, b, off, cut - off };
					xf[s2][nx[s2]++] = (struct rxf){ relay, b, a, b, off, cut - off };
					dep[s2][s1] = true;
					if (chunks[s2] == chunks[s1] && fast_rng_below(&rng, 2))
						pipe[s2][s1] = true;
				}
			}
		/* perturb: drop, add or flip deps (only towards lower ids: acyclic) */
		for (int x = 0; x < RN; x++)
			for (int y = 0; y < x; y++) {
				uint64_t r = fast_rng_below(&rng, 20);
				if (r == 0)
					dep[x][y] = false;
				else if (r == 1)
					dep[x][y] = true;
				else if (r == 2 && chunks[x] == chunks[y])
					pipe[x][y] = !pipe[x][y];
			}
		fast_plan_init(&p, 1, NG, "x");
		for (uint32_t k = 0; k < RN; k++) {
			OK(fast_plan_add_step(&p, FAST_STEP_EXPLICIT, FAST_TIER_UP, &err));
			OK(fast_plan_set_chunks(&p, chunks[k], &err));
			for (uint32_t y = 0; y < k; y++)
				if (dep[k][y])
					OK(fast_plan_add_dep(&p, k, y, pipe[k][y], &err));
			/* shuffle, then merge runs of equal (from, to) into one
			 * transfer: pieces then sit at different stream offsets
			 * (and chunks) in the arrival and the forwarding step */
			for (int i = nx[k] - 1; i > 0; i--) {
				int r = (int)fast_rng_below(&rng, (uint64_t)i + 1);
				struct rxf tmp = xf[k][i];
				xf[k][i] = xf[k][r];
				xf[k][r] = tmp;
			}
			for (int i = 0; i < nx[k]; i++) {
				int lead = -1;
				for (int h = 0; h < i; h++)
					if (xf[k][h].from == xf[k][i].from && xf[k][h].to == xf[k][i].to)
						lead = h;
				if (lead >= 0)
					continue; /* added with its group below */
				OK(fast_plan_add_xfer(&p, xf[k][i].from, xf[k][i].to, &err));
				OK(fast_plan_add_piece(&p, xf[k][i].src, xf[k][i].dst, xf[k][i].off,
						       xf[k][i].len, &err));
				for (int h = i + 1; h < nx[k]; h++)
					if (xf[k][h].from == xf[k][i].from && xf[k][h].to == xf[k][i].to)
						OK(fast_plan_add_piece(&p, xf[k][h].src, xf[k][h].dst,
								       xf[k][h].off, xf[k][h].len, &err));
				/* sometimes a second piece in the same transfer: a
				 * different message the sender owns, or a duplicate */
				if (xf[k][i].from == xf[k][i].src && fast_rng_below(&rng, 8) == 0)
					OK(fast_plan_add_piece(&p, xf[k][i].src, xf[k][i].dst, 0, 1, &err));
			}
		}
		int want = naive_check(&p);
		memset(&err, 0, sizeof err);
		int rc = unit_check(&p, &t, D, &err);
		int got = rc == 0 ? 0 : strstr(err.msg, "does not hold") ? 1 : 2;
		CU_ASSERT_EQUAL(rc == 0 || rc == FAST_ECHECK, true);
		CU_ASSERT_EQUAL(got, want);
		if (got != want)
			fprintf(stderr, "\n  iter %d: naive %d, checker %d: %s\n", iter, want, got,
				err.msg);
		verdicts[want]++;
		fast_plan_free(&p);
	}
	/* the generator exercises all three verdicts */
	if (getenv("FAST_TEST_VERBOSE"))
		fprintf(stderr, "\n  verdicts %d %d %d\n", verdicts[0], verdicts[1], verdicts[2]);
	CU_ASSERT(verdicts[0] > 20 && verdicts[1] > 20 && verdicts[2] > 20);
	if (!(verdicts[0] > 20 && verdicts[1] > 20 && verdicts[2] > 20))
		fprintf(stderr, "\n  verdicts %d %d %d\n", verdicts[0], verdicts[1], verdicts[2]);
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


/* --- token plans against a naive reference ------------------------------------ */

#define RT 9  /* steps of a random token plan */
#define RG 3  /* groups */
#define RS 32 /* sends (or sums) per step */

/* a send (from -> to) or, in a reduce step, one input of the sum at `to`
 * (from == to; the inputs of one sum share `sum`) */
struct tsend {
	uint32_t from, to, g, sum;
	uint64_t off, len, mask;
};

struct tgen {
	struct fast_rng *rng;
	bool combine;
	struct tsend x[RT][RS];
	int n[RT], nsums[RT];
	bool dep[RT][RT], pipe[RT][RT];
	uint32_t chunks[RT];
};

static bool treduce(const struct tgen *G, int k)
{
	return G->combine && k % 3 == 2;
}

/* a random step after `after` of the kind wanted, -1 when there is none */
static int tnext(struct tgen *G, int after, bool reduce)
{
	int cand[RT], n = 0;
	for (int k = after + 1; k < RT; k++)
		if (treduce(G, k) == reduce && G->n[k] < RS - 4)
			cand[n++] = k;
	return n ? cand[fast_rng_below(G->rng, (uint64_t)n)] : -1;
}

static int tsend(struct tgen *G, int after, uint32_t from, uint32_t to, uint32_t g, uint64_t off,
		 uint64_t len, uint64_t mask)
{
	int k = tnext(G, after, false);
	if (k < 0)
		return -1;
	G->x[k][G->n[k]++] = (struct tsend){ from, to, g, 0, off, len, mask };
	if (after >= 0)
		G->dep[k][after] = true;
	return k;
}

/* dispatch of group g's bytes [off, off+len): a random forwarding tree
 * from src(g) to every destination, some hops through a relay, some
 * destinations served twice */
static void tgen_dispatch(struct tgen *G, const struct fast_matrix *m, uint32_t g, uint64_t off,
			  uint64_t len)
{
	const struct fast_group *gr = &m->groups[g];
	uint32_t hg[2 * NG + 2];
	int hs[2 * NG + 2], nh = 1;

	hg[0] = gr->src;
	hs[0] = -1;
	for (uint32_t i = 0; i < gr->ndst; i++) {
		uint32_t d = m->dsts[gr->dst0 + i];
		int h = (int)fast_rng_below(G->rng, (uint64_t)nh), k;
		if (d == gr->src)
			continue;
		if (hg[h] == d)
			h = 0;
		if (fast_rng_below(G->rng, 3) == 0) {
			uint32_t r = (uint32_t)fast_rng_below(G->rng, NG);
			if (r == hg[h] || r == d || (k = tsend(G, hs[h], hg[h], r, g, off, len, 0)) < 0)
				continue;
			hg[nh] = r;
			hs[nh++] = k;
			h = nh - 1;
		}
		if ((k = tsend(G, hs[h], hg[h], d, g, off, len, 0)) < 0)
			continue;
		hg[nh] = d;
		hs[nh++] = k;
		if (fast_rng_below(G->rng, 8) == 0) /* replication: once more */
			tsend(G, hs[h], hg[h], d, g, off, len, 0);
	}
}

/* combine of group g's bytes [off, off+len): contributions merged in
 * random partial sums (a value moved to another's GPU, then summed there
 * by a reduce step), the results sent to src(g), some through a relay */
static void tgen_combine(struct tgen *G, const struct fast_matrix *m, uint32_t g, uint64_t off,
			 uint64_t len)
{
	const struct fast_group *gr = &m->groups[g];
	uint32_t vg[NG];
	int vs[NG], nv = 0, k;
	uint64_t vm[NG];

	for (uint32_t i = 0; i < gr->ndst; i++)
		if (m->dsts[gr->dst0 + i] != gr->src) {
			vg[nv] = m->dsts[gr->dst0 + i];
			vs[nv] = -1;
			vm[nv++] = UINT64_C(1) << i;
		}
	while (nv > 1 && fast_rng_below(G->rng, 3) != 0) {
		int a = (int)fast_rng_below(G->rng, (uint64_t)nv), b = (a + 1) % nv;
		if (vg[a] == gr->src)
			break;
		if (vg[b] != vg[a]) {
			if ((k = tsend(G, vs[b], vg[b], vg[a], g, off, len, vm[b])) < 0)
				break;
			vs[b] = k;
		}
		int r = tnext(G, vs[a] > vs[b] ? vs[a] : vs[b], true);
		if (r < 0)
			break;
		uint32_t id = (uint32_t)G->nsums[r]++;
		G->x[r][G->n[r]++] = (struct tsend){ vg[a], vg[a], g, id, off, len, vm[a] };
		G->x[r][G->n[r]++] = (struct tsend){ vg[a], vg[a], g, id, off, len, vm[b] };
		if (vs[a] >= 0)
			G->dep[r][vs[a]] = true;
		if (vs[b] >= 0)
			G->dep[r][vs[b]] = true;
		vs[a] = r;
		vm[a] |= vm[b];
		vg[b] = vg[nv - 1];
		vs[b] = vs[nv - 1];
		vm[b] = vm[nv - 1];
		nv--;
	}
	for (int v = 0; v < nv; v++) {
		uint32_t at = vg[v];
		int s = vs[v];
		if (fast_rng_below(G->rng, 3) == 0) {
			uint32_t r = (uint32_t)fast_rng_below(G->rng, NG);
			if (r != at && r != gr->src && (k = tsend(G, s, at, r, g, off, len, vm[v])) >= 0) {
				at = r;
				s = k;
			}
		}
		tsend(G, s, at, gr->src, g, off, len, vm[v]);
	}
}

/* the plan of G: explicit steps tier out (sends of one (from, to) pair in
 * one transfer), reduce steps tier up (a transfer per sum) */
static void tgen_plan(const struct tgen *G, struct fast_plan *p)
{
	struct fast_err err;

	fast_plan_init(p, 2, 2, "test");
	p->kind = G->combine ? FAST_TRAFFIC_COMBINE : FAST_TRAFFIC_DISPATCH;
	for (int k = 0; k < RT; k++) {
		bool red = treduce(G, k);
		OK(fast_plan_add_step(p, red ? FAST_STEP_REDUCE : FAST_STEP_EXPLICIT,
				      red ? FAST_TIER_UP : FAST_TIER_OUT, &err));
		OK(fast_plan_set_chunks(p, G->chunks[k], &err));
		for (int y = 0; y < k; y++)
			if (G->dep[k][y])
				OK(fast_plan_add_dep(p, (uint32_t)k, (uint32_t)y,
						     G->pipe[k][y] && G->chunks[k] == G->chunks[y], &err));
		bool done[RS] = { false };
		for (int i = 0; i < G->n[k]; i++) {
			if (done[i])
				continue;
			OK(fast_plan_add_xfer(p, G->x[k][i].from, G->x[k][i].to, &err));
			for (int h = i; h < G->n[k]; h++) {
				const struct tsend *a = &G->x[k][i], *b = &G->x[k][h];
				if (done[h] || a->from != b->from || a->to != b->to ||
				    (red && a->sum != b->sum))
					continue;
				uint32_t mk = 0;
				if (G->combine) {
					int r = fast_plan_add_mask(p, b->mask, &err);
					OK(r);
					mk = (uint32_t)r;
				}
				OK(fast_plan_add_piece(p, b->g, mk, b->off, b->len, &err));
				done[h] = true;
			}
		}
	}
}

/* The naive reference, per byte, from the plan alone and the groups:
 * 0 correct, 1 a send (or a sum's input) not held, 2 a wrong final
 * holding (dispatch: a destination lacks a byte; combine: a contribution
 * not counted exactly once at the source). */
static int tnaive(const struct fast_plan *p, const struct fast_matrix *m)
{
	/* lv[t][u]: 2 when t reaches u through a path with a whole-step
	 * dependency, 1 through pipelined ones only, 0 not at all (steps
	 * depend on lower ids only: one pass in id order) */
	int lv[RT][RT] = { { 0 } };
	int n = (int)p->nsteps;

	for (int t = 0; t < n; t++)
		for (uint32_t j = 0; j < p->steps[t].ndeps; j++) {
			const struct fast_dep *d = &p->deps[p->steps[t].dep0 + j];
			int u = (int)d->step, e = d->pipelined ? 1 : 2;
			if (e > lv[t][u])
				lv[t][u] = e;
			for (int w = 0; w < n; w++) {
				int via = lv[u][w] == 0 ? 0 : (e == 2 || lv[u][w] == 2) ? 2 : 1;
				if (via > lv[t][w])
					lv[t][w] = via;
			}
		}
	/* every piece sent (or summed) must be held by its sender */
	for (int t = 0; t < n; t++) {
		const struct fast_step *s = &p->steps[t];
		for (uint32_t j = 0; j < s->nxfers; j++) {
			const struct fast_xfer *x = &p->xfers[s->xfer0 + j];
			uint64_t pos = 0;
			for (uint32_t k = 0; k < x->npieces; k++) {
				const struct fast_piece *pc = &p->pieces[x->piece0 + k];
				const struct fast_group *gr = &m->groups[pc->src];
				uint64_t want = p->kind == FAST_TRAFFIC_COMBINE ? p->masks[pc->dst] : 0;
				for (uint64_t b = pc->off; b < pc->off + pc->len; b++, pos++) {
					uint32_t ch = naive_chunk(x->bytes, s->chunks, pos);
					bool held = false;
					if (p->kind == FAST_TRAFFIC_DISPATCH)
						held = gr->src == x->from;
					else
						for (uint32_t i = 0; i < gr->ndst; i++)
							if (m->dsts[gr->dst0 + i] == x->from &&
							    want == UINT64_C(1) << i)
								held = true;
					for (int u = 0; u < n && !held; u++) {
						const struct fast_step *su = &p->steps[u];
						if (!lv[t][u])
							continue;
						for (uint32_t j2 = 0; j2 < su->nxfers && !held; j2++) {
							const struct fast_xfer *y = &p->xfers[su->xfer0 + j2];
							uint64_t un = 0, pos2 = 0;
							bool in = false;
							if (y->to != x->from)
								continue;
							for (uint32_t k2 = 0; k2 < y->npieces; k2++) {
								const struct fast_piece *q = &p->pieces[y->piece0 + k2];
								bool here = q->src == pc->src && q->off <= b &&
									    b < q->off + q->len;
								/* in chunk <= ch, or a whole-step ancestor */
								bool early = lv[t][u] == 2 ||
									     (here && naive_chunk(y->bytes, su->chunks,
												  pos2 + b - q->off) <= ch);
								pos2 += q->len;
								if (su->kind == FAST_STEP_REDUCE) {
									un |= p->masks[q->dst];
									in = in || here;
								} else if (here && early &&
									   (p->kind == FAST_TRAFFIC_DISPATCH ||
									    p->masks[q->dst] == want)) {
									held = true;
								}
							}
							if (su->kind == FAST_STEP_REDUCE && in && un == want)
								held = true;
						}
					}
					if (!held)
						return 1;
				}
			}
		}
	}
	/* final holdings */
	for (uint32_t g = 0; g < m->ngroups; g++) {
		const struct fast_group *gr = &m->groups[g];
		for (uint64_t b = 0; b < fast_group_bytes(m, g); b++)
			for (uint32_t i = 0; i < gr->ndst; i++) {
				uint32_t d = m->dsts[gr->dst0 + i];
				int count = p->kind == FAST_TRAFFIC_COMBINE && d == gr->src;
				bool got = d == gr->src;
				for (size_t xi = 0; xi < p->nxfers; xi++) {
					const struct fast_xfer *x = &p->xfers[xi];
					if (x->from == x->to)
						continue; /* a sum, or a local copy: nothing arrives */
					for (uint32_t k = 0; k < x->npieces; k++) {
						const struct fast_piece *q = &p->pieces[x->piece0 + k];
						if (q->src != g || b < q->off || b >= q->off + q->len)
							continue;
						if (p->kind == FAST_TRAFFIC_DISPATCH && x->to == d)
							got = true;
						if (p->kind == FAST_TRAFFIC_COMBINE && x->to == gr->src &&
						    (p->masks[q->dst] >> i & 1))
							count++;
					}
				}
				if (p->kind == FAST_TRAFFIC_DISPATCH ? !got : count != 1)
					return 2;
			}
	}
	return 0;
}

/* Random small token plans, dispatch (forwarding trees with relays and
 * replication) and combine (partial sums, relays), explicit steps in 1..3
 * chunks with pipelined dependencies where the chunk counts agree, then
 * deps dropped or added, sends dropped or repeated and masks changed at
 * random: the checker and the naive reference must agree on every
 * verdict, and each verdict must occur. */
static void test_check__tokens_agree_with_naive_reference(void)
{
	struct fast_rng rng;
	struct fast_topo tp = topo2x2();
	int verdicts[2][3] = { { 0 } };

	fast_rng_seed(&rng, 15);
	for (int iter = 0; iter < 1200; iter++) {
		struct fast_traffic t;
		struct fast_plan p;
		struct fast_err err;
		static struct tgen G;
		bool combine = iter % 2;

		memset(&G, 0, sizeof G);
		G.rng = &rng;
		G.combine = combine;
		for (int k = 0; k < RT; k++)
			G.chunks[k] = treduce(&G, k) ? 1 : 1 + (uint32_t)fast_rng_below(&rng, 3);
		for (int x = 0; x < RT; x++)
			for (int y = 0; y < x; y++)
				G.pipe[x][y] = fast_rng_below(&rng, 2);
		tok_init(&t, NG, combine ? FAST_TRAFFIC_COMBINE : FAST_TRAFFIC_DISPATCH, 2);
		for (int g = 0; g < RG; g++) {
			uint32_t d[NG], nd = 0;
			uint32_t src = (uint32_t)fast_rng_below(&rng, NG);
			uint64_t pick = 1 + fast_rng_below(&rng, (1u << NG) - 1);
			for (uint32_t i = 0; i < NG; i++)
				if (pick >> i & 1)
					d[nd++] = i;
			tok_group(&t, src, 1 + fast_rng_below(&rng, 3), nd, d);
		}
		tok_done(&t);
		for (uint32_t g = 0; g < RG; g++) {
			uint64_t size = fast_group_bytes(&t.m[0], g);
			uint64_t cut = fast_rng_below(&rng, 2) ? 1 + fast_rng_below(&rng, size - 1) : size;
			for (uint64_t off = 0; off < size; off = cut, cut = size) {
				if (combine)
					tgen_combine(&G, &t.m[0], g, off, cut - off);
				else
					tgen_dispatch(&G, &t.m[0], g, off, cut - off);
			}
		}
		/* perturb: deps (only towards lower ids: acyclic), explicit sends */
		for (int x = 0; x < RT; x++)
			for (int y = 0; y < x; y++) {
				uint64_t r = fast_rng_below(&rng, 30);
				if (r == 0)
					G.dep[x][y] = false;
				else if (r == 1)
					G.dep[x][y] = true;
			}
		int last = RT - 1;
		while (treduce(&G, last))
			last--;
		for (int k = 0; k < RT; k++) {
			if (treduce(&G, k) || !G.n[k])
				continue;
			uint64_t r = fast_rng_below(&rng, 24);
			int i = (int)fast_rng_below(&rng, (uint64_t)G.n[k]);
			if (r == 0)
				G.x[k][i] = G.x[k][--G.n[k]]; /* dropped */
			else if (r == 1 && k < last && G.n[last] < RS)
				G.x[last][G.n[last]++] = G.x[k][i]; /* repeated last */
			else if (r == 2 && combine) { /* another set of contributions */
				const struct fast_group *gr = &t.m[0].groups[G.x[k][i].g];
				uint64_t mk = G.x[k][i].mask ^
					      UINT64_C(1) << fast_rng_below(&rng, gr->ndst);
				if (mk)
					G.x[k][i].mask = mk;
			}
		}
		tgen_plan(&G, &p);
		int want = tnaive(&p, &t.m[0]);
		memset(&err, 0, sizeof err);
		int rc = unit_check_matrix(&p, &tp, &t.m[0], &err);
		int got = rc == 0 ? 0 : strstr(err.msg, "does not hold") ? 1 : 2;
		CU_ASSERT(rc == 0 || rc == FAST_ECHECK);
		CU_ASSERT_EQUAL(got, want);
		if (got != want || (rc != 0 && rc != FAST_ECHECK))
			fprintf(stderr, "\n  iter %d (%s): naive %d, checker %d (%d): %s\n", iter,
				combine ? "combine" : "dispatch", want, got, rc, err.msg);
		verdicts[combine][want]++;
		fast_plan_free(&p);
		fast_traffic_free(&t);
	}
	if (getenv("FAST_TEST_VERBOSE"))
		fprintf(stderr, "\n  verdicts dispatch %d %d %d, combine %d %d %d\n", verdicts[0][0],
			verdicts[0][1], verdicts[0][2], verdicts[1][0], verdicts[1][1], verdicts[1][2]);
	for (int c = 0; c < 2; c++)
		for (int v = 0; v < 3; v++) {
			CU_ASSERT(verdicts[c][v] > 30);
			if (verdicts[c][v] <= 30)
				fprintf(stderr, "\n  %s verdict %d seen only %d times\n",
					c ? "combine" : "dispatch", v, verdicts[c][v]);
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
	  UNIT_TEST(test_check__agrees_with_naive_reference),
	  UNIT_TEST(test_check__every_compiler_passes),
	  UNIT_TEST(test_check__token_dispatch),
	  UNIT_TEST(test_check__token_combine),
	  UNIT_TEST(test_check__byte_plan_on_token_matrix),
	  UNIT_TEST(test_check__tokens_agree_with_naive_reference))
