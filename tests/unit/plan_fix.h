/*
 * plan_fix.h - what the plan IR's suites (test_plan*.c) share: the tiny
 * FAST plan, a piece compared field by field (printed on a mismatch), and
 * a plan set written to a string (caller frees).
 */
#ifndef FAST_TEST_PLAN_FIX_H
#define FAST_TEST_PLAN_FIX_H

#include <stdio.h>

#include "fast/plan.h"
#include "unit.h"

/* The tiny FAST plan of test_check.c (2 servers x 2 GPUs): lanes 0->1 of
 * 80 bytes each, stage 1 (w = 50), redist 2, stage 3 (w = 30), redist 4,
 * intrinsic step 5, balancing step 0. */
static inline void build_fast(struct fast_plan *p)
{
	struct fast_err err;
	uint32_t perm[2] = { 1, 0 };

	fast_plan_init(p, 2, 2, "fast");
	snprintf(p->label, sizeof p->label, "m0");
	snprintf(p->options, sizeof p->options, "stages=exact \"q\"");
	OK(fast_plan_add_lane(p, 0, 1, 0, &err));
	OK(fast_plan_add_lane_piece(p, 0, 2, 0, 80, &err));
	OK(fast_plan_add_lane(p, 0, 1, 1, &err));
	OK(fast_plan_add_lane_piece(p, 1, 2, 0, 10, &err));
	OK(fast_plan_add_lane_piece(p, 0, 3, 0, 50, &err));
	OK(fast_plan_add_lane_piece(p, 0, 2, 80, 20, &err));
	OK(fast_plan_add_lane(p, 1, 0, 0, &err));
	OK(fast_plan_add_lane_piece(p, 2, 0, 0, 30, &err));
	OK(fast_plan_add_lane(p, 1, 0, 1, &err));
	OK(fast_plan_add_lane_piece(p, 3, 1, 0, 30, &err));

	OK(fast_plan_add_step(p, FAST_STEP_EXPLICIT, FAST_TIER_UP, &err));
	OK(fast_plan_add_xfer(p, 0, 1, &err));
	OK(fast_plan_add_piece(p, 0, 3, 0, 50, &err));
	OK(fast_plan_add_piece(p, 0, 2, 80, 20, &err));
	OK(fast_plan_add_step(p, FAST_STEP_RAIL, FAST_TIER_OUT, &err));
	OK(fast_plan_add_dep(p, 1, 0, false, &err));
	OK(fast_plan_set_perm(p, perm, 50, &err));
	OK(fast_plan_add_step(p, FAST_STEP_REDIST, FAST_TIER_UP, &err));
	OK(fast_plan_add_dep(p, 2, 1, false, &err));
	OK(fast_plan_set_redist(p, 1, &err));
	OK(fast_plan_add_step(p, FAST_STEP_RAIL, FAST_TIER_OUT, &err));
	OK(fast_plan_add_dep(p, 3, 1, false, &err));
	OK(fast_plan_set_perm(p, perm, 30, &err));
	OK(fast_plan_add_step(p, FAST_STEP_REDIST, FAST_TIER_UP, &err));
	OK(fast_plan_add_dep(p, 4, 3, false, &err));
	OK(fast_plan_set_redist(p, 3, &err));
	OK(fast_plan_add_step(p, FAST_STEP_EXPLICIT, FAST_TIER_UP, &err));
	OK(fast_plan_set_chunks(p, 2, &err));
	OK(fast_plan_add_xfer(p, 0, 1, &err));
	OK(fast_plan_add_piece(p, 0, 1, 0, 7, &err));
}

static inline void piece_is(const struct fast_plan *p, uint32_t idx, uint32_t src, uint32_t dst,
			    uint64_t off, uint64_t len)
{
	const struct fast_piece *pc = &p->pieces[idx];
	CU_ASSERT(pc->src == src && pc->dst == dst && pc->off == off && pc->len == len);
	if (!(pc->src == src && pc->dst == dst && pc->off == off && pc->len == len))
		fprintf(stderr, "\n  piece %u is D[%u][%u] %llu+%llu, want D[%u][%u] %llu+%llu\n",
			idx, pc->src, pc->dst, (unsigned long long)pc->off,
			(unsigned long long)pc->len, src, dst, (unsigned long long)off,
			(unsigned long long)len);
}

static inline char *write_set(const struct fast_planset *ps, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	struct fast_err err;
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT_EQUAL(fast_planset_write(ps, f, &err), 0);
	fclose(f);
	return buf;
}

#endif
