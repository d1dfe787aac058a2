/*
 * test_bound_nics.c - the lower bounds and the checker on clusters as they
 * are (topo.h, "NICs and ports"): a NIC that is down makes its GPUs relay
 * over scale-up, a slow one shares its work with relays, GPUs sharing a
 * NIC share one port row, a GPU driving two NICs has twice the port, the
 * core counts only the NICs that run; the pruning of the byte LP keeps
 * the maximum with unequal ports; the checker refuses a transfer through a
 * NIC that is down (and not one through a slow NIC); and the property:
 * on seeded random fabrics (shapes, K, slow and down NICs) and traffic
 * (bytes and tokens), every plan the checker accepts simulates in no less
 * than the combined bound (bound_s: the LP shifted by the latency floor).
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
#include "tok.h"

#define GB 1000000000ull

static struct fast_topo mk_topo(uint32_t N, uint32_t G, enum fast_up_kind kind,
				double up_GBps, double out_GBps)
{
	return unit_topo(N, G, kind, (struct fast_tier){ up_GBps, 0, 1.0, 0 },
			 (struct fast_tier){ out_GBps, 0, 1.0, 0 });
}

static bool close_rel(double a, double b, double rel)
{
	return fabs(a - b) <= rel * fmax(fabs(a), fabs(b)) + 1e-300;
}

/* --- the bound by hand ------------------------------------------------------ */

/* GPU 0 sends 4 GB across; its NIC is down, so every byte relays to GPU
 * 1 over a 0.5 GB/s scale-up port: 8 s (NIC 1 needs 4 s).  Closed form:
 * 4 GB over the one NIC left, 4 s. */
static void test_bound_nics__down_nic_relays_over_scaleup(void)
{
	struct fast_topo t = mk_topo(2, 2, FAST_UP_SWITCH, 0.5, 1);
	uint64_t D[16] = { 0 };
	struct fast_bound b;
	struct fast_err err;

	D[0 * 4 + 2] = 4 * GB;
	unit_set_nic(&t, 0, 0, 0.0);
	CU_ASSERT_EQUAL_FATAL(unit_bound(&t, D, false, &b, &err), 0);
	CU_ASSERT_DOUBLE_EQUAL(b.closed_s, 4.0, 1e-12);
	CU_ASSERT_EQUAL(b.closed_server, 0);
	CU_ASSERT_DOUBLE_EQUAL(b.lp_s, 8.0, 1e-9);
	CU_ASSERT_STRING_EQUAL(b.binding, "server 0 scale-up port 0 egress");
	/* closed form alone: the same */
	CU_ASSERT_EQUAL_FATAL(unit_bound(&t, D, true, &b, &err), 0);
	CU_ASSERT_DOUBLE_EQUAL(b.closed_s, 4.0, 1e-12);
}

/* The same with NIC 0 at a quarter: it carries 4 - x at 0.25 GB/s, the
 * port x at 0.5: (4 - x) / 0.25 = x / 0.5 at x = 8/3, T = 16/3 s.
 * Closed form: 4 GB over 1.25 NICs, 3.2 s. */
static void test_bound_nics__slow_nic_shares_with_relays(void)
{
	struct fast_topo t = mk_topo(2, 2, FAST_UP_SWITCH, 0.5, 1);
	uint64_t D[16] = { 0 };
	struct fast_bound b;
	struct fast_err err;

	D[0 * 4 + 2] = 4 * GB;
	unit_set_nic(&t, 0, 0, 0.25);
	CU_ASSERT_EQUAL_FATAL(unit_bound(&t, D, false, &b, &err), 0);
	CU_ASSERT_DOUBLE_EQUAL(b.closed_s, 3.2, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(b.lp_s, 16.0 / 3.0, 1e-9);
	/* the receiving side mirrored: GPU 2's NIC slow instead */
	memset(D, 0, sizeof D);
	D[0 * 4 + 2] = 4 * GB;
	t = mk_topo(2, 2, FAST_UP_SWITCH, 0.5, 1);
	unit_set_nic(&t, 1, 0, 0.25);
	CU_ASSERT_EQUAL_FATAL(unit_bound(&t, D, false, &b, &err), 0);
	/* server 0 sends 4 GB from GPU 0: its NIC 0 at full rate alone takes
	 * 4 - x with x / 0.5 relayed: 8/3 s; server 1's is the slower */
	CU_ASSERT_DOUBLE_EQUAL(b.lp_s, 16.0 / 3.0, 1e-9);
	CU_ASSERT_EQUAL(b.lp_server, 1);
	/* NIC 0's ingress and the forwarding scale-up port bind together */
	CU_ASSERT_EQUAL(strncmp(b.binding, "server 1 ", 9), 0);
}

/* Two GPUs behind one NIC (K = 1, G = 2): the port carries both GPUs'
 * bytes at the NIC's rate, one row.  GPU 0 alone sending 1 GB takes 1 s
 * (it has the whole NIC: a row per GPU at half the rate would say 2 s,
 * which is no bound); both sending 1 GB take 2 s.  Relays inside the
 * port gain nothing, so fast scale-up does not help. */
static void test_bound_nics__shared_nic_is_one_port(void)
{
	struct fast_topo t = mk_topo(2, 2, FAST_UP_SWITCH, 100, 1);
	uint64_t D[16] = { 0 };
	struct fast_bound b;
	struct fast_err err;

	t.nics = 1;
	D[0 * 4 + 2] = 1 * GB;
	CU_ASSERT_EQUAL_FATAL(unit_bound(&t, D, false, &b, &err), 0);
	CU_ASSERT_DOUBLE_EQUAL(b.closed_s, 1.0, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(b.lp_s, 1.0, 1e-9);
	D[1 * 4 + 3] = 1 * GB;
	CU_ASSERT_EQUAL_FATAL(unit_bound(&t, D, false, &b, &err), 0);
	CU_ASSERT_DOUBLE_EQUAL(b.lp_s, 2.0, 1e-9);
	CU_ASSERT_STRING_EQUAL(b.binding, "server 0 NIC 0 egress");

	/* G = 4, K = 2: GPUs 0, 1 behind NIC 0, GPUs 2, 3 behind NIC 1.  GPU
	 * 0 and 1 send 2 GB each; slow scale-up (0.5 GB/s per port) moves x
	 * to NIC 1 from each: (4 - 2x) = x / 0.5 at x = 1, T = 2 s */
	t = mk_topo(2, 4, FAST_UP_SWITCH, 0.5, 1);
	t.nics = 2;
	uint64_t E[64] = { 0 };
	E[0 * 8 + 4] = 2 * GB;
	E[1 * 8 + 5] = 2 * GB;
	CU_ASSERT_EQUAL_FATAL(unit_bound(&t, E, false, &b, &err), 0);
	CU_ASSERT_DOUBLE_EQUAL(b.closed_s, 2.0, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(b.lp_s, 2.0, 1e-9);
	/* NIC 1 down: everything leaves through NIC 0, 4 s */
	unit_set_nic(&t, 0, 1, 0.0);
	CU_ASSERT_EQUAL_FATAL(unit_bound(&t, E, false, &b, &err), 0);
	CU_ASSERT_DOUBLE_EQUAL(b.lp_s, 4.0, 1e-9);
}

/* A GPU driving two NICs (K = 4, G = 2): its port runs at 2 NICs' rate,
 * named by both; with one of the two down, at one. */
static void test_bound_nics__striped_port(void)
{
	struct fast_topo t = mk_topo(2, 2, FAST_UP_SWITCH, 0.001, 1);
	uint64_t D[16] = { 0 };
	struct fast_bound b;
	struct fast_err err;

	t.nics = 4;
	D[0 * 4 + 2] = 4 * GB;
	CU_ASSERT_EQUAL_FATAL(unit_bound(&t, D, false, &b, &err), 0);
	CU_ASSERT_DOUBLE_EQUAL(b.closed_s, 1.0, 1e-12); /* 4 NICs */
	CU_ASSERT(close_rel(b.lp_s, 2.0, 1e-3));        /* a trickle relays */
	CU_ASSERT_STRING_EQUAL(b.binding, "server 0 NICs 0-1 egress");
	unit_set_nic(&t, 0, 1, 0.0);
	CU_ASSERT_EQUAL_FATAL(unit_bound(&t, D, false, &b, &err), 0);
	CU_ASSERT(close_rel(b.lp_s, 4.0, 1e-3));
}

/* An oversubscribed core carries the NICs that run: 4 NICs of 1 GB/s
 * with one down and 2:1 oversubscription is 1.5 GB/s for 6 GB across
 * (servers balanced, scale-up free): 4 s, above each server's 2 s. */
static void test_bound_nics__core_counts_nics_up(void)
{
	struct fast_topo t = mk_topo(2, 2, FAST_UP_SWITCH, 100, 1);
	uint64_t D[16] = { 0 };
	struct fast_bound b;
	struct fast_err err;

	t.core_oversub = 2.0;
	D[0 * 4 + 2] = D[1 * 4 + 3] = 1500000000ull;
	D[2 * 4 + 0] = D[3 * 4 + 1] = 1500000000ull;
	unit_set_nic(&t, 1, 1, 0.0);
	CU_ASSERT_EQUAL_FATAL(unit_bound(&t, D, false, &b, &err), 0);
	CU_ASSERT_DOUBLE_EQUAL(b.closed_s, 3.0, 1e-12); /* server 1: 3 GB, one NIC */
	CU_ASSERT_DOUBLE_EQUAL(b.lp_s, 4.0, 1e-9);
	CU_ASSERT_PTR_NOT_NULL(strstr(b.binding, "core"));
}

/* Token traffic: one token of GPU 0 for GPUs 2 and 3 (4 GB), GPU 0's NIC
 * down and scale-up slow (0.5 GB/s): the token relays to GPU 1 over
 * scale-up, 8 s; closed form 4 GB over server 0's one NIC, 4 s. */
static void test_bound_nics__tokens_down_nic(void)
{
	struct fast_topo t = mk_topo(2, 2, FAST_UP_SWITCH, 0.5, 1);
	struct fast_traffic tr;
	struct fast_bound b;
	struct fast_err err;

	unit_set_nic(&t, 0, 0, 0.0);
	tok_init(&tr, 4, FAST_TRAFFIC_DISPATCH, GB);
	tok_group(&tr, 0, 4, 2, (uint32_t[]){ 2, 3 });
	tok_done(&tr);
	CU_ASSERT_EQUAL_FATAL(fast_bound_compute(&t, &tr.m[0], false, &b, &err), 0);
	CU_ASSERT_DOUBLE_EQUAL(b.closed_s, 4.0, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(b.lp_s, 8.0, 1e-9);
	CU_ASSERT_STRING_EQUAL(b.binding, "server 0 scale-up port 0 egress");
	fast_traffic_free(&tr);
}

/* --- random fabrics and traffic --------------------------------------------- */

/* Up to n overrides at random NICs (fractions from down to 0.8), never
 * leaving a server with every NIC down. */
static void random_overrides(struct fast_topo *t, struct fast_rng *rng, uint32_t n)
{
	static const double fr[] = { 0.0, 0.0, 0.1, 0.25, 0.5, 0.8 };

	for (uint32_t i = 0; i < n; i++) {
		uint32_t s = (uint32_t)fast_rng_below(rng, t->servers);
		uint32_t k = (uint32_t)fast_rng_below(rng, t->nics);
		double old = fast_topo_nic_fraction(t, s, k), up = 0;
		unit_set_nic(t, s, k, fr[fast_rng_below(rng, sizeof fr / sizeof fr[0])]);
		for (uint32_t j = 0; j < t->nics; j++)
			up += fast_topo_nic_fraction(t, s, j);
		if (up == 0)
			unit_set_nic(t, s, k, old);
	}
}

/* Traffic of one of four kinds: uniform random, a hot receiver, one GPU
 * sending much more, or Zipf-like weights (rank^-0.8) over shuffled pairs;
 * about a quarter of the pairs empty. */
static void random_traffic(uint64_t *D, uint32_t ng, struct fast_rng *rng)
{
	uint32_t style = (uint32_t)fast_rng_below(rng, 4);
	uint32_t hot = (uint32_t)fast_rng_below(rng, ng);

	for (uint32_t i = 0; i < ng; i++)
		for (uint32_t j = 0; j < ng; j++) {
			uint64_t v = (1 + fast_rng_below(rng, 1024)) * 4096;
			if (style == 3)
				v = (uint64_t)(4096.0 * 1024 *
					       pow(1.0 + (double)fast_rng_below(rng, ng * ng), -0.8));
			if (fast_rng_below(rng, 4) == 0 || i == j)
				v = 0;
			if ((style == 1 && j == hot) || (style == 2 && i == hot))
				v *= 12;
			D[(size_t)i * ng + j] = v;
		}
}

/* Pruning with unequal ports: LP_s depends only on server s's rows,
 * columns and intra block, so max over s of bound(M_s) == bound(M) (see
 * test_bound's pruning reference); a feasible point that is not one
 * (an upper bound below the optimum) would skip the maximum somewhere. */
static void test_bound_nics__pruning_with_unequal_ports(void)
{
	struct fast_rng rng;

	fast_rng_seed(&rng, 4242);
	for (int rep = 0; rep < 12; rep++) {
		uint32_t N = 5, G = 4, ng = N * G;
		static const uint32_t ks[] = { 2, 4, 8 };
		struct fast_topo t = mk_topo(N, G, rep % 2 ? FAST_UP_MESH : FAST_UP_SWITCH,
					     rep % 3 == 0 ? 0.3 : rep % 3 == 1 ? 2.0 : 20.0, 1);
		uint64_t *D = calloc((size_t)ng * ng, sizeof(uint64_t));
		uint64_t *M = calloc((size_t)ng * ng, sizeof(uint64_t));
		struct fast_bound b, bs;
		struct fast_err err;
		double ref = 0;

		CU_ASSERT_PTR_NOT_NULL_FATAL(D);
		CU_ASSERT_PTR_NOT_NULL_FATAL(M);
		t.nics = ks[rep % 3];
		random_overrides(&t, &rng, 2 + (uint32_t)fast_rng_below(&rng, 4));
		random_traffic(D, ng, &rng);
		CU_ASSERT_EQUAL_FATAL(unit_bound(&t, D, false, &b, &err), 0);
		CU_ASSERT(b.lp_s >= b.closed_s);
		for (uint32_t s = 0; s < N; s++) {
			for (uint32_t i = 0; i < ng; i++)
				for (uint32_t j = 0; j < ng; j++)
					M[(size_t)i * ng + j] =
						i / G == s || j / G == s ? D[(size_t)i * ng + j] : 0;
			CU_ASSERT_EQUAL_FATAL(unit_bound(&t, M, false, &bs, &err), 0);
			ref = fmax(ref, bs.lp_s);
		}
		CU_ASSERT(close_rel(b.lp_s, ref, 1e-9));
		free(D);
		free(M);
	}
}

/* --- the checker ------------------------------------------------------------ */

/* A plan compiled for the healthy fabric sends from every GPU: with one
 * NIC down the checker refuses it, naming the step, transfer, piece, GPUs
 * and NIC; with that NIC slow it is correct. */
static void test_bound_nics__check_refuses_down_nic(void)
{
	struct fast_topo t = mk_topo(2, 2, FAST_UP_SWITCH, 10, 1), bad;
	uint64_t D[16];
	struct fast_matrix m;
	struct fast_plan p;
	struct fast_err err;

	for (uint32_t i = 0; i < 16; i++)
		D[i] = i % 5 == 0 ? 0 : 1000 + i;
	m = fast_matrix_of(D, 4);
	CU_ASSERT_EQUAL_FATAL(fast_compile("fanout", &t, &m, NULL, &p, &err), 0);
	CU_ASSERT_EQUAL(unit_check(&p, &t, D, &err), 0);
	bad = t;
	unit_set_nic(&bad, 1, 1, 0.0);
	CU_ASSERT_EQUAL(unit_check(&p, &bad, D, &err), FAST_ECHECK);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "crosses server 1 NIC 1, which is down"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "GPU 3"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "piece 0"));
	bad = t;
	unit_set_nic(&bad, 1, 1, 0.25);
	CU_ASSERT_EQUAL(unit_check(&p, &bad, D, &err), 0);
	/* both ends of the first transfer across (GPU 0 -> GPU 2) down */
	bad = t;
	unit_set_nic(&bad, 0, 0, 0.0);
	unit_set_nic(&bad, 1, 0, 0.0);
	CU_ASSERT_EQUAL(unit_check(&p, &bad, D, &err), FAST_ECHECK);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "which are down"));
	fast_plan_free(&p);
}

/* --- the property: every accepted plan takes at least the bound ------------- */

/* The local GPU nearest after l (cyclically) whose port is up. */
static uint32_t up_gpu(const struct fast_topo *t, uint32_t g)
{
	uint32_t G = t->gpus, s = g / G;

	for (uint32_t d = 0; d < G; d++) {
		uint32_t l = (g % G + d) % G;
		if (fast_topo_port_Bps(t, s, fast_topo_port_of(t, l)) > 0)
			return s * G + l;
	}
	return g; /* a server with every NIC down: validation refuses it */
}

/* A plan that keeps off the NICs that are down, which no compiler does
 * yet: every cross-server message goes over scale-up to the nearest GPU
 * of its server whose port is up (step 0, with the intra-server
 * messages), across between such GPUs (step 1), and over scale-up to its
 * destination (step 2). */
static void detour_plan(const struct fast_topo *t, const uint64_t *D, struct fast_plan *p)
{
	uint32_t G = t->gpus, ng = fast_topo_ngpus(t);
	struct fast_err err;

	fast_plan_init(p, t->servers, G, "detour");
	for (int st = 0; st < 3; st++) {
		int id = fast_plan_add_step(p, FAST_STEP_EXPLICIT, st == 1 ? FAST_TIER_OUT : FAST_TIER_UP,
					    &err);
		CU_ASSERT_FATAL(id == st);
		if (st > 0)
			CU_ASSERT_EQUAL_FATAL(fast_plan_add_dep(p, (uint32_t)st, (uint32_t)st - 1, false,
								&err), 0);
		for (uint32_t i = 0; i < ng; i++)
			for (uint32_t j = 0; j < ng; j++) {
				uint64_t len = D[(size_t)i * ng + j];
				uint32_t a = up_gpu(t, i), b = up_gpu(t, j), from, to;
				if (!len || i == j)
					continue;
				if (i / G == j / G) {
					if (st != 0)
						continue;
					from = i, to = j;
				} else if (st == 0) {
					from = i, to = a;
				} else if (st == 1) {
					from = a, to = b;
				} else {
					from = b, to = j;
				}
				if (from == to)
					continue;
				CU_ASSERT_EQUAL_FATAL(fast_plan_add_xfer(p, from, to, &err), 0);
				CU_ASSERT_EQUAL_FATAL(fast_plan_add_piece(p, i, j, 0, len, &err), 0);
			}
	}
}

struct prop_tally {
	int cases, accepted, refused, below, degraded_accepted;
};

/* Bound of m (bytes, or token groups: the token LP), then every
 * compiler's plan (token plans from the token compilers) and the detour
 * over m's bytes: those the checker accepts are simulated and must take
 * at least the bound. */
static void prop_case(const struct fast_topo *t, const struct fast_matrix *m,
		      struct prop_tally *pt)
{
	bool ideal = fast_topo_nics_ideal(t);
	struct fast_sim_opts so;
	struct fast_bound b;
	struct fast_err err;

	fast_sim_opts_default(&so);
	CU_ASSERT_EQUAL_FATAL(fast_bound_compute(t, m, false, &b, &err), 0);
	pt->cases++;
	for (const struct fast_algo *al = fast_algos;; al++) {
		struct fast_sim_result r;
		struct fast_plan p;
		if (al->name) {
			if (fast_compile(al->name, t, m, NULL, &p, &err) < 0) {
				CU_FAIL("compile failed");
				fprintf(stderr, "\n  %s: %s\n", al->name, err.msg);
				continue;
			}
		} else {
			detour_plan(t, m->bytes, &p);
		}
		if (unit_check_matrix(&p, t, m, &err) < 0) {
			CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "which "));
			pt->refused++;
		} else if (unit_sim(t, &p, m, &so, &r, &err) == 0) {
			pt->accepted++;
			pt->degraded_accepted += !ideal;
			if (r.time_s >= b.bound_s * (1 - 1e-9))
				pt->below++;
			else
				fprintf(stderr, "\n  %s on %s %ux%u K=%u (%u overrides): simulated "
					"%.9g s < bound %.9g s (LP %.9g s)\n", p.algo,
					fast_traffic_kind_name(m->kind), t->servers, t->gpus, t->nics,
					t->noverrides, r.time_s, b.bound_s, b.lp_s);
			fast_sim_result_free(&r);
		} else {
			CU_FAIL("simulation failed");
			fprintf(stderr, "\n  %s: %s\n", p.algo, err.msg);
		}
		fast_plan_free(&p);
		if (!al->name)
			break;
	}
}

static void test_bound_nics__below_simulated_plans(void)
{
	static const uint32_t shapes[][2] = { { 2, 2 }, { 2, 4 }, { 4, 4 }, { 3, 8 } };
	static const double ups[] = { 0.5, 2, 8 }; /* scale-up / NIC */
	struct prop_tally pt = { 0 };
	struct fast_limits lim;
	struct fast_rng rng;

	fast_limits_default(&lim);
	fast_rng_seed(&rng, 2505);
	for (int c = 0, ncases = unit_cases(320); c < ncases; c++) {
		uint32_t N = shapes[c % 4][0], G = shapes[c % 4][1], ng = N * G;
		uint32_t ks[3] = { G / 2, G, 2 * G }, nk = G % 2 ? 2 : 3;
		uint64_t *D = calloc((size_t)ng * ng, sizeof *D);
		struct fast_topo t;
		struct fast_err err;

		CU_ASSERT_PTR_NOT_NULL_FATAL(D);
		if (c % 5 == 4) {
			/* a preset's latencies, overheads and incast model */
			CU_ASSERT_EQUAL_FATAL(fast_topo_preset(c % 2 ? "h200" : "mi300x", N, G, &lim,
							       &t, &err), 0);
		} else {
			t = mk_topo(N, G, fast_rng_below(&rng, 3) ? FAST_UP_SWITCH : FAST_UP_MESH,
				    50 * ups[fast_rng_below(&rng, 3)], 50);
		}
		/* one case in four ideal; the others any K, overrides or not */
		if (c % 4 != 1) {
			t.nics = ks[G % 2 ? 1 : fast_rng_below(&rng, nk)];
			random_overrides(&t, &rng, (uint32_t)fast_rng_below(&rng, 4));
		}
		if (c % 8 < 6) {
			struct fast_matrix m = fast_matrix_of(D, ng);
			random_traffic(D, ng, &rng);
			prop_case(&t, &m, &pt);
		} else {
			/* token traffic, dispatch or combine */
			struct fast_traffic tr;
			tok_init(&tr, ng, c % 8 == 6 ? FAST_TRAFFIC_DISPATCH : FAST_TRAFFIC_COMBINE,
				 7168);
			tok_random_groups(&tr, &rng, 4 * ng, G < 6 ? G : 6, G, 200);
			tok_done(&tr);
			prop_case(&t, &tr.m[0], &pt);
			fast_traffic_free(&tr);
		}
		free(D);
	}
	fprintf(stderr, "\n  %d cases: %d plans accepted and simulated (%d on degraded fabrics), "
		"%d refused, %d at or above the bound\n", pt.cases, pt.accepted,
		pt.degraded_accepted, pt.refused, pt.below);
	CU_ASSERT(pt.cases >= unit_cases(300));
	CU_ASSERT(pt.accepted > pt.cases);
	CU_ASSERT(pt.degraded_accepted > pt.cases);
	CU_ASSERT_EQUAL(pt.below, pt.accepted);
}

UNIT_MAIN("bound_nics",
	  UNIT_TEST(test_bound_nics__down_nic_relays_over_scaleup),
	  UNIT_TEST(test_bound_nics__slow_nic_shares_with_relays),
	  UNIT_TEST(test_bound_nics__shared_nic_is_one_port),
	  UNIT_TEST(test_bound_nics__striped_port),
	  UNIT_TEST(test_bound_nics__core_counts_nics_up),
	  UNIT_TEST(test_bound_nics__tokens_down_nic),
	  UNIT_TEST(test_bound_nics__pruning_with_unequal_ports),
	  UNIT_TEST(test_bound_nics__check_refuses_down_nic),
	  UNIT_TEST(test_bound_nics__below_simulated_plans))
