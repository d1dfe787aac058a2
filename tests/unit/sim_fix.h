/*
 * sim_fix.h - what the simulator's suites (test_sim*.c) share: a small
 * topology with round numbers and its constants, one-piece transfers and
 * explicit steps added to a bare plan (asserted: the suites build valid
 * ones), the simulated time of a plan (under a --sync mode too), and NEAR
 * for closed forms.
 */
#ifndef FAST_TEST_SIM_FIX_H
#define FAST_TEST_SIM_FIX_H

#include <math.h>

#include "unit.h"

#define MB (UINT64_C(1000000))

/* 2 servers x 2 GPUs (or G) with round numbers: scale-up 100 GB/s, NIC
 * 10 GB/s, efficiency 1, alpha 1 us / 2 us, overhead 3 us / 5 us. */
static inline struct fast_topo topo_small(uint32_t N, uint32_t G, enum fast_up_kind kind)
{
	struct fast_topo t = unit_topo(N, G, kind, (struct fast_tier){ 100.0, 1.0, 1.0, 3.0 },
				       (struct fast_tier){ 10.0, 2.0, 1.0, 5.0 });

	t.congestion = (struct fast_congestion){ 1.0, 0.0, 1.0 };
	return t;
}

#define UP_A 1e-6
#define UP_O 3e-6
#define OUT_A 2e-6
#define OUT_O 5e-6
#define UP_BW 100e9
#define OUT_BW 10e9

static inline void add_xfer(struct fast_plan *p, uint32_t from, uint32_t to, uint64_t bytes)
{
	CU_ASSERT_FATAL(fast_plan_add_xfer(p, from, to, NULL) == 0);
	CU_ASSERT_FATAL(fast_plan_add_piece(p, from, to, 0, bytes, NULL) == 0);
}

static inline int step(struct fast_plan *p, enum fast_tier_id tier)
{
	int s = fast_plan_add_step(p, FAST_STEP_EXPLICIT, tier, NULL);
	CU_ASSERT_FATAL(s >= 0);
	return s;
}

static inline double sim_time(const struct fast_topo *t, const struct fast_plan *p,
			      const struct fast_sim_opts *o, struct fast_sim_result *r)
{
	struct fast_err err = { 0 };
	int rc = unit_sim(t, p, NULL, o, r, &err);
	if (rc != 0)
		fprintf(stderr, "sim: %s\n", err.msg);
	CU_ASSERT_FATAL(rc == 0);
	return r->time_s;
}

#define NEAR(a, b) CU_ASSERT(fabs((a) - (b)) <= 1e-9 * fabs(b) + 1e-15)

/* --sync rank (sim.h "Synchronisation"): each GPU walks its own waves. */
static inline double sim_sync(const struct fast_topo *t, const struct fast_plan *p,
			      enum fast_sim_sync m, struct fast_sim_result *r)
{
	struct fast_sim_opts o;

	fast_sim_opts_default(&o);
	o.sync = m;
	return sim_time(t, p, &o, r);
}

#endif
