/*
 * test_sim_tokens.c - the simulator on token plans: reductions by hand,
 * and relayed, replicated and partially reduced plans (hand-made, random,
 * deduplicating) and every algorithm's, each proved by the checker,
 * against the token bound.
 */
#include <CUnit/Basic.h>

#include "unit.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fast/algo.h"
#include "fast/bound.h"
#include "fast/check.h"
#include "fast/sim.h"
#include "sim_fix.h"
#include "tok.h"

/* --- token plans ------------------------------------------------------ */

/* Prove token plan p correct for matrix m, simulate it (REDIST expands
 * over its groups) and return the time; the bound of m too. */
static double tok_sim(const struct fast_topo *t, const struct fast_plan *p,
		      const struct fast_matrix *m, struct fast_sim_result *r, double *bound_s)
{
	struct fast_bound b;
	struct fast_err err = { 0 };
	int rc = unit_check_matrix(p, t, m, &err);

	if (rc != 0)
		fprintf(stderr, "check: %s\n", err.msg);
	CU_ASSERT_FATAL(rc == 0);
	rc = unit_sim(t, p, m, NULL, r, &err);
	if (rc != 0)
		fprintf(stderr, "sim: %s\n", err.msg);
	CU_ASSERT_FATAL(rc == 0);
	CU_ASSERT_FATAL(fast_bound_compute(t, m, false, &b, &err) == 0);
	*bound_s = b.lp_s;
	return r->time_s;
}

static void tok_xfer(struct fast_plan *p, uint32_t from, uint32_t to, uint32_t g, uint32_t mask,
		     uint64_t len)
{
	CU_ASSERT_FATAL(fast_plan_add_xfer(p, from, to, NULL) == 0);
	CU_ASSERT_FATAL(fast_plan_add_piece(p, g, mask, 0, len, NULL) == 0);
}

/* A sum of n inputs of L bytes moves (n + 1) L bytes over the GPU's
 * reduction resource at scale-up bandwidth.  1 x 4, no latency or
 * overheads; combine group (GPU 0, {1, 2, 3}), L = 100 MB:
 *   step 0 up   GPU 2 -> 1 contribution {2}             L / Bu = 1 ms
 *   step 1 sum  at GPU 1: {1} + {2}                     3L / Bu = 3 ms
 *   step 2 up   GPU 1 -> 0 {1,2} and GPU 3 -> 0 {3}     2L / Bu = 2 ms
 * (the two share GPU 0's ingress port): 6 ms. */
static void test_sim__reduce_costs_memory_bytes(void)
{
	struct fast_topo t = topo_small(1, 4, FAST_UP_SWITCH);
	struct fast_traffic tr;
	struct fast_plan p;
	struct fast_sim_result r;
	double bound_s;
	int m1, m2, m12, m3;
	char name[64];

	t.up.latency_us = t.up.step_overhead_us = 0;
	tok_init(&tr, 4, FAST_TRAFFIC_COMBINE, 100 * MB);
	tok_group(&tr, 0, 1, 3, (const uint32_t[]){ 1, 2, 3 });
	tok_done(&tr);
	fast_plan_init(&p, 1, 4, "test");
	p.kind = FAST_TRAFFIC_COMBINE;
	m1 = fast_plan_add_mask(&p, 0x1, NULL);
	m2 = fast_plan_add_mask(&p, 0x2, NULL);
	m12 = fast_plan_add_mask(&p, 0x3, NULL);
	m3 = fast_plan_add_mask(&p, 0x4, NULL);
	CU_ASSERT_FATAL(m1 >= 0 && m2 >= 0 && m12 >= 0 && m3 >= 0);
	step(&p, FAST_TIER_UP);
	tok_xfer(&p, 2, 1, 0, (uint32_t)m2, 100 * MB);
	CU_ASSERT_FATAL(fast_plan_add_step(&p, FAST_STEP_REDUCE, FAST_TIER_UP, NULL) == 1);
	CU_ASSERT_FATAL(fast_plan_add_dep(&p, 1, 0, false, NULL) == 0);
	tok_xfer(&p, 1, 1, 0, (uint32_t)m1, 100 * MB);
	CU_ASSERT_FATAL(fast_plan_add_piece(&p, 0, (uint32_t)m2, 0, 100 * MB, NULL) == 0);
	step(&p, FAST_TIER_UP);
	CU_ASSERT_FATAL(fast_plan_add_dep(&p, 2, 1, false, NULL) == 0);
	tok_xfer(&p, 1, 0, 0, (uint32_t)m12, 100 * MB);
	tok_xfer(&p, 3, 0, 0, (uint32_t)m3, 100 * MB);

	tok_sim(&t, &p, &tr.m[0], &r, &bound_s);
	NEAR(r.time_s, 6e-3);
	NEAR(r.steps[1].end_s - r.steps[1].start_s, 3e-3);
	CU_ASSERT_EQUAL(r.steps[1].bytes, 300 * MB);
	/* without the traffic, the size is what a GPU sends or receives
	 * between GPUs (sums excluded): GPU 0 receives 2L */
	CU_ASSERT_EQUAL(r.gpu_bytes, 200 * MB);
	{
		const struct fast_sim_res *red = &r.res[r.nres - 4 + 1];
		CU_ASSERT_EQUAL(red->kind, FAST_RES_GPU_REDUCE);
		CU_ASSERT_EQUAL(red->gpu, 1);
		CU_ASSERT_EQUAL(red->bytes, 300 * MB);
		CU_ASSERT_STRING_EQUAL(fast_sim_res_name(&t, red, name, sizeof name), "s0 gpu1 reduce");
	}
	CU_ASSERT(r.time_s >= bound_s);
	CU_ASSERT(bound_s > 0);
	fast_sim_result_free(&r);
	fast_plan_free(&p);
	fast_traffic_free(&tr);
}

/* A dispatch token relayed through a third server (A -> B -> C), B a
 * destination and not: the token bound counts A's egress, B's and C's
 * ingress once, and the relayed plans take at least that. */
static void test_sim__relayed_token_plans_above_bound(void)
{
	struct fast_topo t = topo_small(3, 2, FAST_UP_SWITCH);
	const uint64_t L = 50 * MB;

	for (int through_dest = 0; through_dest < 2; through_dest++) {
		struct fast_traffic tr;
		struct fast_plan p;
		struct fast_sim_result r;
		double bound_s;

		tok_init(&tr, 6, FAST_TRAFFIC_DISPATCH, L);
		if (through_dest)
			tok_group(&tr, 0, 1, 2, (const uint32_t[]){ 2, 4 });
		else
			tok_group(&tr, 0, 1, 1, (const uint32_t[]){ 4 });
		tok_done(&tr);
		fast_plan_init(&p, 3, 2, "test");
		p.kind = FAST_TRAFFIC_DISPATCH;
		step(&p, FAST_TIER_OUT);
		tok_xfer(&p, 0, 2, 0, 0, L);
		step(&p, FAST_TIER_OUT);
		CU_ASSERT_FATAL(fast_plan_add_dep(&p, 1, 0, false, NULL) == 0);
		tok_xfer(&p, 2, 4, 0, 0, L);
		tok_sim(&t, &p, &tr.m[0], &r, &bound_s);
		/* two hops of L over 10 GB/s NICs, each after its step's
		 * overhead and latency */
		NEAR(r.time_s, 2 * ((double)L / OUT_BW + OUT_A + OUT_O));
		CU_ASSERT(r.time_s >= bound_s);
		/* L leaves server 0 over 2 NICs at best (relayed over fast
		 * scale-up): half of one hop */
		CU_ASSERT(bound_s >= (double)L / (2 * OUT_BW) * (1 - 1e-9));
		fast_sim_result_free(&r);
		fast_plan_free(&p);
		fast_traffic_free(&tr);
	}
}

/* A combine whose contributions from server C are relayed through B and
 * reduced there with B's before one value crosses to A; and the two
 * example token plans (rail stages, redistribution over groups, a partial
 * sum).  Simulated time >= token bound for each. */
static void test_sim__reduced_token_plans_above_bound(void)
{
	struct fast_topo t = topo_small(3, 2, FAST_UP_SWITCH);
	const uint64_t L = 20 * MB;
	struct fast_traffic tr;
	struct fast_plan p;
	struct fast_sim_result r;
	double bound_s;
	int m0, m1, m2, m012;

	/* group (GPU 0, {2, 3, 4}): bits 0, 1, 2 = GPUs 2, 3, 4 */
	tok_init(&tr, 6, FAST_TRAFFIC_COMBINE, L);
	tok_group(&tr, 0, 1, 3, (const uint32_t[]){ 2, 3, 4 });
	tok_done(&tr);
	fast_plan_init(&p, 3, 2, "test");
	p.kind = FAST_TRAFFIC_COMBINE;
	m0 = fast_plan_add_mask(&p, 0x1, NULL);
	m1 = fast_plan_add_mask(&p, 0x2, NULL);
	m2 = fast_plan_add_mask(&p, 0x4, NULL);
	m012 = fast_plan_add_mask(&p, 0x7, NULL);
	CU_ASSERT_FATAL(m0 >= 0 && m1 >= 0 && m2 >= 0 && m012 >= 0);
	step(&p, FAST_TIER_OUT);
	tok_xfer(&p, 4, 2, 0, (uint32_t)m2, L);
	step(&p, FAST_TIER_UP);
	tok_xfer(&p, 3, 2, 0, (uint32_t)m1, L);
	CU_ASSERT_FATAL(fast_plan_add_step(&p, FAST_STEP_REDUCE, FAST_TIER_UP, NULL) == 2);
	CU_ASSERT_FATAL(fast_plan_add_dep(&p, 2, 0, false, NULL) == 0);
	CU_ASSERT_FATAL(fast_plan_add_dep(&p, 2, 1, false, NULL) == 0);
	tok_xfer(&p, 2, 2, 0, (uint32_t)m0, L);
	CU_ASSERT_FATAL(fast_plan_add_piece(&p, 0, (uint32_t)m1, 0, L, NULL) == 0);
	CU_ASSERT_FATAL(fast_plan_add_piece(&p, 0, (uint32_t)m2, 0, L, NULL) == 0);
	step(&p, FAST_TIER_OUT);
	CU_ASSERT_FATAL(fast_plan_add_dep(&p, 3, 2, false, NULL) == 0);
	tok_xfer(&p, 2, 0, 0, (uint32_t)m012, L);
	tok_sim(&t, &p, &tr.m[0], &r, &bound_s);
	/* out hop, then the sum of 3 inputs (4L over 100 GB/s), then out */
	NEAR(r.time_s, 2 * ((double)L / OUT_BW + OUT_A + OUT_O) + 4.0 * (double)L / UP_BW + UP_A + UP_O);
	CU_ASSERT(r.time_s >= bound_s);
	CU_ASSERT(bound_s > 0);
	fast_sim_result_free(&r);
	fast_plan_free(&p);
	fast_traffic_free(&tr);

	for (int combine = 0; combine < 2; combine++) {
		struct fast_topo t2 = topo_small(2, 2, FAST_UP_SWITCH);
		if (combine)
			tok_combine_example(&tr, &p);
		else
			tok_dispatch_example(&tr, &p);
		tok_sim(&t2, &p, &tr.m[0], &r, &bound_s);
		CU_ASSERT(r.time_s >= bound_s);
		CU_ASSERT(bound_s > 0);
		fast_sim_result_free(&r);
		fast_plan_free(&p);
		fast_traffic_free(&tr);
	}
}

/* A step moving bytes [off, off+len) of group g (mask index mk) from one
 * GPU to another, after step dep (-1: none); returns its id. */
static int tok_move(struct fast_plan *p, uint32_t G, uint32_t from, uint32_t to, uint32_t g,
		    uint32_t mk, uint64_t off, uint64_t len, int dep)
{
	int s = step(p, from / G == to / G ? FAST_TIER_UP : FAST_TIER_OUT);
	if (dep >= 0)
		CU_ASSERT_FATAL(fast_plan_add_dep(p, (uint32_t)s, (uint32_t)dep, false, NULL) == 0);
	CU_ASSERT_FATAL(fast_plan_add_xfer(p, from, to, NULL) == 0);
	CU_ASSERT_FATAL(fast_plan_add_piece(p, g, mk, off, len, NULL) == 0);
	return s;
}

/* A GPU other than a and b, off both their servers when there is one
 * (a third server to relay through), at random. */
static uint32_t tok_relay(struct fast_rng *rng, uint32_t N, uint32_t G, uint32_t a, uint32_t b)
{
	uint32_t ng = N * G;
	for (int tries = 0; tries < 64; tries++) {
		uint32_t r = (uint32_t)fast_rng_below(rng, ng);
		if (r != a && r != b && (N < 3 || (r / G != a / G && r / G != b / G)))
			return r;
	}
	return (a + 1) % ng == b ? (a + 2) % ng : (a + 1) % ng;
}

/* Random dispatch plan: each half of each group travels a random tree from
 * its source, one transfer a step, every destination reached once, some
 * hops relayed through a GPU that is no destination (a third server when
 * there is one), some copies replicated from a destination. */
static void tok_random_dispatch(struct fast_rng *rng, const struct fast_matrix *m, uint32_t N,
				uint32_t G, struct fast_plan *p)
{
	fast_plan_init(p, N, G, "random");
	p->kind = FAST_TRAFFIC_DISPATCH;
	for (uint32_t g = 0; g < m->ngroups; g++) {
		const struct fast_group *gr = &m->groups[g];
		uint64_t b = fast_group_bytes(m, g), cut = b / 2;
		for (int half = 0; half < 2; half++) {
			uint64_t off = half ? cut : 0, len = half ? b - cut : cut;
			uint32_t holder[FAST_GROUP_MAX_DESTS + 1];
			int at[FAST_GROUP_MAX_DESTS + 1], nh = 1;
			if (!len)
				continue;
			holder[0] = gr->src;
			at[0] = -1;
			for (uint32_t k = 0; k < gr->ndst; k++) {
				uint32_t d = m->dsts[gr->dst0 + k];
				uint32_t h = (uint32_t)fast_rng_below(rng, (uint64_t)nh);
				int s = at[h];
				uint32_t from = holder[h];
				if (d == gr->src)
					continue; /* the local copy is implicit */
				if (fast_rng_below(rng, 3) == 0) {
					uint32_t r = tok_relay(rng, N, G, from, d);
					bool is_dest = false;
					for (uint32_t q = 0; q < gr->ndst; q++)
						is_dest |= m->dsts[gr->dst0 + q] == r;
					if (!is_dest) {
						s = tok_move(p, G, from, r, g, 0, off, len, s);
						from = r;
					}
				}
				s = tok_move(p, G, from, d, g, 0, off, len, s);
				holder[nh] = d;
				at[nh++] = s;
			}
		}
	}
}

/* Random combine plan: per group, values (GPU, mask, step) start as the
 * contributions off src; random pairs meet (one moved to the other's GPU,
 * now and then through a relay) and are summed there; what is left goes to
 * src.  src's own contribution never moves. */
static void tok_random_combine(struct fast_rng *rng, const struct fast_matrix *m, uint32_t N,
			       uint32_t G, struct fast_plan *p)
{
	fast_plan_init(p, N, G, "random");
	p->kind = FAST_TRAFFIC_COMBINE;
	for (uint32_t g = 0; g < m->ngroups; g++) {
		const struct fast_group *gr = &m->groups[g];
		uint64_t b = fast_group_bytes(m, g);
		uint32_t gpu[FAST_GROUP_MAX_DESTS];
		uint64_t mask[FAST_GROUP_MAX_DESTS];
		int at[FAST_GROUP_MAX_DESTS];
		uint32_t n = 0;

		for (uint32_t k = 0; k < gr->ndst; k++)
			if (m->dsts[gr->dst0 + k] != gr->src) {
				gpu[n] = m->dsts[gr->dst0 + k];
				mask[n] = UINT64_C(1) << k;
				at[n++] = -1;
			}
		while (n >= 2 && fast_rng_below(rng, 4) != 0) {
			uint32_t x = (uint32_t)fast_rng_below(rng, n), y = (uint32_t)fast_rng_below(rng, n - 1);
			int mx, my, mxy, s;
			if (y >= x)
				y++;
			if (gpu[x] != gpu[y]) {
				uint32_t from = gpu[x];
				mx = fast_plan_add_mask(p, mask[x], NULL);
				CU_ASSERT_FATAL(mx >= 0);
				if (fast_rng_below(rng, 3) == 0) {
					uint32_t r = tok_relay(rng, N, G, from, gpu[y]);
					if (r != gr->src) {
						at[x] = tok_move(p, G, from, r, g, (uint32_t)mx, 0, b, at[x]);
						from = r;
					}
				}
				at[x] = tok_move(p, G, from, gpu[y], g, (uint32_t)mx, 0, b, at[x]);
				gpu[x] = gpu[y];
			}
			mx = fast_plan_add_mask(p, mask[x], NULL);
			my = fast_plan_add_mask(p, mask[y], NULL);
			mxy = fast_plan_add_mask(p, mask[x] | mask[y], NULL);
			CU_ASSERT_FATAL(mx >= 0 && my >= 0 && mxy >= 0);
			s = fast_plan_add_step(p, FAST_STEP_REDUCE, FAST_TIER_UP, NULL);
			CU_ASSERT_FATAL(s >= 0);
			if (at[x] >= 0)
				CU_ASSERT_FATAL(fast_plan_add_dep(p, (uint32_t)s, (uint32_t)at[x], false, NULL) == 0);
			if (at[y] >= 0 && at[y] != at[x])
				CU_ASSERT_FATAL(fast_plan_add_dep(p, (uint32_t)s, (uint32_t)at[y], false, NULL) == 0);
			CU_ASSERT_FATAL(fast_plan_add_xfer(p, gpu[y], gpu[y], NULL) == 0);
			CU_ASSERT_FATAL(fast_plan_add_piece(p, g, (uint32_t)mx, 0, b, NULL) == 0);
			CU_ASSERT_FATAL(fast_plan_add_piece(p, g, (uint32_t)my, 0, b, NULL) == 0);
			mask[y] |= mask[x];
			at[y] = s;
			gpu[x] = gpu[n - 1];
			mask[x] = mask[n - 1];
			at[x] = at[n - 1];
			n--;
		}
		for (uint32_t v = 0; v < n; v++) {
			int mv = fast_plan_add_mask(p, mask[v], NULL);
			CU_ASSERT_FATAL(mv >= 0);
			tok_move(p, G, gpu[v], gr->src, g, (uint32_t)mv, 0, b, at[v]);
		}
	}
}

/* Deduplicating plans, one step a phase.  Dispatch: each group crosses
 * once to every remote server that needs it, entering at one of its
 * destinations there (in turn), which copies it to the others over
 * scale-up; local destinations get theirs from src.  Combine, mirrored:
 * the contributions of each remote server are gathered at one of them,
 * summed there and cross once to src; local ones go straight to src. */
static void tok_dedup_plan(const struct fast_matrix *m, uint32_t N, uint32_t G,
			   struct fast_plan *p)
{
	bool combine = m->kind == FAST_TRAFFIC_COMBINE;
	uint32_t turn;

	fast_plan_init(p, N, G, "dedup");
	p->kind = m->kind;
	/* steps = phases, each after the one before; dispatch: 0 out
	 * (crossings), 1 up (copies); combine: 0 up (gathers), 1 reduce,
	 * 2 out (crossings) */
	for (int phase = 0; phase < (combine ? 3 : 2); phase++) {
		int s = phase == 1 && combine ? fast_plan_add_step(p, FAST_STEP_REDUCE, FAST_TIER_UP, NULL)
					      : step(p, (phase == 0) == combine ? FAST_TIER_UP : FAST_TIER_OUT);
		CU_ASSERT_FATAL(s == phase);
		if (phase > 0)
			CU_ASSERT_FATAL(fast_plan_add_dep(p, (uint32_t)phase, (uint32_t)phase - 1, false,
							  NULL) == 0);
		turn = 0;
		for (uint32_t g = 0; g < m->ngroups; g++) {
			const struct fast_group *gr = &m->groups[g];
			uint64_t b = fast_group_bytes(m, g);
			for (uint32_t k0 = 0; k0 < gr->ndst;) {
				uint32_t B = m->dsts[gr->dst0 + k0] / G, k1 = k0, e, n;
				uint64_t all = 0;
				while (k1 < gr->ndst && m->dsts[gr->dst0 + k1] / G == B) {
					all |= UINT64_C(1) << k1;
					k1++;
				}
				n = k1 - k0;
				e = k0 + turn++ % n; /* the entry (exit) GPU of server B */
				for (uint32_t k = k0; k < k1; k++) {
					uint32_t d = m->dsts[gr->dst0 + k];
					int mk = combine ? fast_plan_add_mask(p, UINT64_C(1) << k, NULL) : 0;
					CU_ASSERT_FATAL(mk >= 0);
					if (d == gr->src)
						continue;
					if (B == gr->src / G) {
						/* local: straight from src / to src */
						if (phase == (combine ? 0 : 1))
							tok_xfer(p, combine ? d : gr->src, combine ? gr->src : d,
								 g, (uint32_t)mk, b);
					} else if (k == e) {
						if (!combine && phase == 0)
							tok_xfer(p, gr->src, d, g, 0, b);
						if (combine && phase == 1 && n > 1) {
							CU_ASSERT_FATAL(fast_plan_add_xfer(p, d, d, NULL) == 0);
							for (uint32_t q = k0; q < k1; q++) {
								int mq = fast_plan_add_mask(p, UINT64_C(1) << q, NULL);
								CU_ASSERT_FATAL(mq >= 0);
								CU_ASSERT_FATAL(fast_plan_add_piece(p, g, (uint32_t)mq, 0, b,
												    NULL) == 0);
							}
						}
						if (combine && phase == 2) {
							int ma = fast_plan_add_mask(p, all, NULL);
							CU_ASSERT_FATAL(ma >= 0);
							tok_xfer(p, d, gr->src, g, (uint32_t)ma, b);
						}
					} else if (phase == (combine ? 0 : 1)) {
						uint32_t de = m->dsts[gr->dst0 + e];
						tok_xfer(p, combine ? d : de, combine ? de : d, g, (uint32_t)mk, b);
					}
				}
				k0 = k1;
			}
		}
	}
}

/* Property: random checker-accepted token plans -- relays through third
 * servers, replication from destinations, partial sums anywhere -- on
 * seeded random token traffic never simulate below the token bound, on
 * fabrics where scale-up is fast, as slow as a NIC, or slower, without
 * latency or overheads (the bound's own model; with one GPU a server
 * some of them meet it exactly, so a bound too high fails here). */
static void test_sim__random_token_plans_above_bound(void)
{
	struct fast_rng rng;
	int runs = 0;

	fast_rng_seed(&rng, 1515);
	for (int trial = 0; trial < 48; trial++) {
		uint32_t N = 2 + (uint32_t)fast_rng_below(&rng, 3), G = 1 + (uint32_t)fast_rng_below(&rng, 4);
		uint32_t ng = N * G;
		bool combine = trial % 2, mesh = (trial / 2) % 2;
		struct fast_topo t = topo_small(N, G, mesh ? FAST_UP_MESH : FAST_UP_SWITCH);
		struct fast_traffic tr;
		struct fast_plan p;
		struct fast_sim_result r;
		double bound_s;

		t.up.latency_us = t.up.step_overhead_us = 0;
		t.out.latency_us = t.out.step_overhead_us = 0;
		t.up.bw_GBps = (double[]){ 100.0, 10.0, 4.0, 1.0 }[(trial / 4) % 4];
		tok_init(&tr, ng, combine ? FAST_TRAFFIC_COMBINE : FAST_TRAFFIC_DISPATCH, 1000);
		tok_random_groups(&tr, &rng, 2 * ng, 8, G, 5000);
		tok_done(&tr);
		for (int dedup = 0; dedup < 2; dedup++) {
			if (dedup)
				tok_dedup_plan(&tr.m[0], N, G, &p);
			else if (combine)
				tok_random_combine(&rng, &tr.m[0], N, G, &p);
			else
				tok_random_dispatch(&rng, &tr.m[0], N, G, &p);
			tok_sim(&t, &p, &tr.m[0], &r, &bound_s);
			if (!(r.time_s >= bound_s * (1 - 1e-9)))
				fprintf(stderr, "trial %d (%s): simulated %.9g s < token bound %.9g s\n",
					trial, dedup ? "dedup" : "random", r.time_s, bound_s);
			CU_ASSERT(r.time_s >= bound_s * (1 - 1e-9));
			runs++;
			fast_sim_result_free(&r);
			fast_plan_free(&p);
		}
		fast_traffic_free(&tr);
	}
	CU_ASSERT_EQUAL(runs, 2 * 48);
}

/* Property: every algorithm's plan for random token traffic (fast and
 * hier deduplicating over the groups, the others and --dedup gpu on the
 * per-GPU bytes) is proved by the checker and simulates at or above the
 * token bound, on the presets' fabrics. */
static void test_sim__token_schedules_above_bound(void)
{
	const char *presets[] = { "h200", "mi300x-100g" };
	struct fast_rng rng;
	int runs = 0;

	fast_rng_seed(&rng, 77);
	for (int pi = 0; pi < 2; pi++)
		for (int combine = 0; combine < 2; combine++) {
			struct fast_topo t;
			struct fast_limits lim;
			struct fast_err err = { 0 };
			struct fast_traffic tr;
			uint32_t ng, G = 4;

			fast_limits_default(&lim);
			CU_ASSERT_FATAL(fast_topo_preset(presets[pi], 3, G, &lim, &t, &err) == 0);
			ng = fast_topo_ngpus(&t);
			tok_init(&tr, ng, combine ? FAST_TRAFFIC_COMBINE : FAST_TRAFFIC_DISPATCH, 4096);
			tok_random_groups(&tr, &rng, 6 * ng, 6, G, 400);
			tok_done(&tr);
			for (const struct fast_algo *al = fast_algos; al->name; al++)
				for (int dedup = 0; dedup < (al->compile_tokens ? 2 : 1); dedup++) {
					struct fast_algo_opts ao;
					struct fast_plan p;
					struct fast_sim_result r;
					double bound_s;
					fast_algo_opts_default(&ao);
					ao.dedup = dedup ? FAST_DEDUP_GPU : FAST_DEDUP_SERVER;
					if (fast_compile(al->name, &t, &tr.m[0], &ao, &p, &err) != 0) {
						fprintf(stderr, "compile %s: %s\n", al->name, err.msg);
						CU_FAIL("compile");
						continue;
					}
					tok_sim(&t, &p, &tr.m[0], &r, &bound_s);
					if (!(r.time_s >= bound_s * (1 - 1e-9)))
						fprintf(stderr, "%s (%s) on %s: sim %.9g < token bound %.9g\n",
							al->name, p.options, presets[pi], r.time_s, bound_s);
					CU_ASSERT(r.time_s >= bound_s * (1 - 1e-9));
					runs++;
					fast_sim_result_free(&r);
					fast_plan_free(&p);
				}
			fast_traffic_free(&tr);
		}
	CU_ASSERT(runs >= 2 * 2 * 8); /* six algorithms, two with both modes */
}

UNIT_MAIN("sim_tokens",
	  UNIT_TEST(test_sim__reduce_costs_memory_bytes),
	  UNIT_TEST(test_sim__relayed_token_plans_above_bound),
	  UNIT_TEST(test_sim__reduced_token_plans_above_bound),
	  UNIT_TEST(test_sim__random_token_plans_above_bound),
	  UNIT_TEST(test_sim__token_schedules_above_bound))
