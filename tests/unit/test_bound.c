/*
 * test_bound.c - the closed-form and LP lower bounds: hand-computed optima,
 * a scale-up bottleneck where the LP is strictly above the closed form,
 * mesh relaying over a third GPU, and properties on seeded random matrices
 * (LP >= closed form; LP == closed form when scale-up is free; the result
 * does not depend on the order in which the warm-started LPs are solved);
 * the token bound by hand, its mirror symmetry, its relation to the byte
 * LP, and byte plans of token traffic simulated against it.
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

#define GB 1000000000ull

static void test_bound__closed_form_exact_2x2(void)
{
	struct fast_topo t = mk_topo(2, 2, FAST_UP_SWITCH, 100, 1);
	uint64_t D[16] = { 0 };
	struct fast_bound b;
	struct fast_err err;

	/* server 0: GPU0 sends 3 GB to GPU2, GPU1 sends 1 GB to GPU3, plus
	 * 1 GB intra and a local copy; server egress 4 GB over 2 NICs of
	 * 1 GB/s = 2 s, and relaying 1 GB over a 100 GB/s port is free. */
	D[0 * 4 + 2] = 3 * GB;
	D[1 * 4 + 3] = 1 * GB;
	D[0 * 4 + 1] = 1 * GB;
	D[1 * 4 + 1] = 7 * GB; /* diagonal: free */
	CU_ASSERT_EQUAL_FATAL(unit_bound(&t, D, false, &b, &err), 0);
	CU_ASSERT_DOUBLE_EQUAL(b.closed_s, 2.0, 1e-12);
	CU_ASSERT_EQUAL(b.closed_server, 0);
	CU_ASSERT_EQUAL(b.closed_is_ingress, 0);
	CU_ASSERT_DOUBLE_EQUAL(b.lp_s, 2.0, 1e-9);
	/* server 0 solved; server 1's upper bound (2 s) cannot beat it */
	CU_ASSERT_EQUAL(b.lps_solved, 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(b.binding, "NIC"));
}

static void test_bound__scaleup_bottleneck_lp_above_closed(void)
{
	/* all cross traffic from GPU 0 (4 GB to GPU 2); NICs 1 GB/s, scale-up
	 * ports 0.5 GB/s.  Server 0: NIC 0 carries 4 - x, the port carries x
	 * to NIC 1: 4 - x <= T, x <= T/2 -> T = 8/3 s.  Closed form: 2 s. */
	struct fast_topo t = mk_topo(2, 2, FAST_UP_SWITCH, 0.5, 1);
	uint64_t D[16] = { 0 };
	struct fast_bound b;
	struct fast_err err;

	D[0 * 4 + 2] = 4 * GB;
	CU_ASSERT_EQUAL_FATAL(unit_bound(&t, D, false, &b, &err), 0);
	CU_ASSERT_DOUBLE_EQUAL(b.closed_s, 2.0, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(b.lp_s, 8.0 / 3.0, 1e-9);
	CU_ASSERT(b.lp_s > b.closed_s * 1.3);
	CU_ASSERT_EQUAL(b.lp_server, 0);
	CU_ASSERT_STRING_EQUAL(b.binding, "server 0 NIC 0 egress");

	/* the same on the receiving side only: server 1's GPU 3 receives
	 * 4 GB from GPU 0 and 0 from GPU 1; server 0's NICs are balanced by
	 * giving GPU 1 the other source: then server 1 binds, on ingress */
	memset(D, 0, sizeof(D));
	D[0 * 4 + 3] = 2 * GB;
	D[1 * 4 + 3] = 2 * GB;
	CU_ASSERT_EQUAL_FATAL(unit_bound(&t, D, false, &b, &err), 0);
	CU_ASSERT_DOUBLE_EQUAL(b.lp_s, 8.0 / 3.0, 1e-9);
	CU_ASSERT_EQUAL(b.lp_server, 1);
	CU_ASSERT_STRING_EQUAL(b.binding, "server 1 NIC 1 ingress");
}

static void test_bound__mesh_relays_over_third_gpu(void)
{
	/* one server, 3 GPUs, 2 GB from GPU 0 to GPU 1 over 1 GB/s links:
	 * direct only would take 2 s; half over 0->2->1 takes 1 s.  On a
	 * switch the port of GPU 0 carries all 2 GB: 2 s. */
	struct fast_topo t = mk_topo(1, 3, FAST_UP_MESH, 1, 1);
	uint64_t D[9] = { 0 };
	struct fast_bound b;
	struct fast_err err;

	D[0 * 3 + 1] = 2 * GB;
	CU_ASSERT_EQUAL_FATAL(unit_bound(&t, D, false, &b, &err), 0);
	CU_ASSERT_DOUBLE_EQUAL(b.closed_s, 0.0, 1e-15);
	CU_ASSERT_DOUBLE_EQUAL(b.lp_s, 1.0, 1e-9);
	CU_ASSERT_PTR_NOT_NULL(strstr(b.binding, "server 0 link 0->"));

	/* four GPUs: three disjoint paths, 2/3 s */
	{
		struct fast_topo t4 = mk_topo(1, 4, FAST_UP_MESH, 1, 1);
		uint64_t D4[16] = { 0 };
		D4[0 * 4 + 1] = 2 * GB;
		CU_ASSERT_EQUAL_FATAL(unit_bound(&t4, D4, false, &b, &err), 0);
		CU_ASSERT_DOUBLE_EQUAL(b.lp_s, 2.0 / 3.0, 1e-9);
	}

	t.up_kind = FAST_UP_SWITCH;
	CU_ASSERT_EQUAL_FATAL(unit_bound(&t, D, false, &b, &err), 0);
	CU_ASSERT_DOUBLE_EQUAL(b.lp_s, 2.0, 1e-9);
	CU_ASSERT_STRING_EQUAL(b.binding, "server 0 scale-up port 0 egress");
}

static void test_bound__mesh_cross_traffic_relays_through_mesh(void)
{
	/* 2 servers x 3 GPUs, mesh links 0.5 GB/s, NICs 1 GB/s; GPU 0 sends
	 * 6 GB to GPU 3 (local 0 of server 1).  Server 0: NIC 0 carries
	 * 6 - x1 - x2, relays to NIC 1 and 2 go over links 0->1, 0->2 and
	 * two-hop paths 0->2->1, 0->1->2; GPU 0's two out-links bound the
	 * relayed total: x1 + x2 <= 2 * 0.5 T.  6 - T = T -> T = 3 s;
	 * closed form 6 / 3 = 2 s. */
	struct fast_topo t = mk_topo(2, 3, FAST_UP_MESH, 0.5, 1);
	uint64_t D[36] = { 0 };
	struct fast_bound b;
	struct fast_err err;

	D[0 * 6 + 3] = 6 * GB;
	CU_ASSERT_EQUAL_FATAL(unit_bound(&t, D, false, &b, &err), 0);
	CU_ASSERT_DOUBLE_EQUAL(b.closed_s, 2.0, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(b.lp_s, 3.0, 1e-9);
}

static void test_bound__zero_traffic_is_zero(void)
{
	struct fast_topo t = mk_topo(3, 2, FAST_UP_SWITCH, 10, 1);
	uint64_t D[36] = { 0 };
	struct fast_bound b;
	struct fast_err err;

	for (int i = 0; i < 6; i++)
		D[i * 6 + i] = 5 * GB; /* local copies only */
	CU_ASSERT_EQUAL_FATAL(unit_bound(&t, D, false, &b, &err), 0);
	CU_ASSERT_EQUAL(b.closed_s, 0.0);
	CU_ASSERT_EQUAL(b.lp_s, 0.0);
	CU_ASSERT_EQUAL(b.lps_solved, 0);
}

static void test_bound__oversubscribed_core(void)
{
	/* 1 GB between every pair of GPUs on different servers: per-server
	 * egress is 2 GPUs x 4 GB = 8 GB over 2 GB/s -> 4 s; a 4:1 core
	 * carries 24 GB at 6 x 1 / 4 GB/s -> 16 s */
	struct fast_topo t = mk_topo(3, 2, FAST_UP_SWITCH, 100, 1);
	uint64_t D[36];
	struct fast_bound b;
	struct fast_err err;

	for (int i = 0; i < 36; i++)
		D[i] = (i / 6) / 2 == (i % 6) / 2 ? 0 : GB;
	CU_ASSERT_EQUAL_FATAL(unit_bound(&t, D, false, &b, &err), 0);
	CU_ASSERT_DOUBLE_EQUAL(b.lp_s, 4.0, 1e-9);
	CU_ASSERT_PTR_NULL(strstr(b.binding, "core"));
	t.core_oversub = 4.0;
	CU_ASSERT_EQUAL_FATAL(unit_bound(&t, D, false, &b, &err), 0);
	CU_ASSERT_DOUBLE_EQUAL(b.closed_s, 4.0, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(b.lp_s, 16.0, 1e-9);
	CU_ASSERT_PTR_NOT_NULL(strstr(b.binding, "core"));
}

/* A random matrix: mostly uniform, some zero rows/columns, one hot pair. */
static void random_matrix(uint64_t *D, uint32_t ng, struct fast_rng *rng)
{
	uint32_t zero_row = (uint32_t)fast_rng_below(rng, ng);
	uint32_t hot = (uint32_t)fast_rng_below(rng, ng);
	for (uint32_t i = 0; i < ng; i++)
		for (uint32_t j = 0; j < ng; j++) {
			uint64_t v = fast_rng_below(rng, 1024) * 512;
			if (fast_rng_below(rng, 4) == 0)
				v = 0;
			if (i == zero_row)
				v = 0;
			if (j == hot)
				v *= 12;
			D[(size_t)i * ng + j] = v;
		}
}

static double naive_closed(const struct fast_topo *t, const uint64_t *D)
{
	uint32_t G = t->gpus, ng = t->servers * G;
	double best = 0;
	for (uint32_t s = 0; s < t->servers; s++) {
		double eg = 0, in = 0;
		for (uint32_t i = 0; i < ng; i++)
			for (uint32_t j = 0; j < ng; j++) {
				if (i / G == s && j / G != s)
					eg += (double)D[(size_t)i * ng + j];
				if (j / G == s && i / G != s)
					in += (double)D[(size_t)i * ng + j];
			}
		best = fmax(best, fmax(eg, in));
	}
	return best / (G * t->out.bw_GBps * 1e9 * t->out.efficiency);
}

static void test_bound__lp_at_least_closed_random(void)
{
	struct fast_rng rng;
	int cases = 0, strict = 0;

	fast_rng_seed(&rng, 42);
	for (int kind = 0; kind < 2; kind++)
		for (uint32_t N = 1; N <= 5; N++)
			for (uint32_t G = 1; G <= 8; G += (G < 4 ? 1 : 4)) {
				double up = kind ? 3.0 + (double)fast_rng_below(&rng, 30) : 20.0;
				struct fast_topo t = mk_topo(N, G, kind ? FAST_UP_MESH : FAST_UP_SWITCH,
							     up, 12.5);
				uint32_t ng = N * G;
				uint64_t *D = calloc((size_t)ng * ng, sizeof(uint64_t));
				struct fast_bound b;
				struct fast_err err;

				CU_ASSERT_PTR_NOT_NULL_FATAL(D);
				random_matrix(D, ng, &rng);
				CU_ASSERT_EQUAL(unit_bound(&t, D, false, &b, &err), 0);
				CU_ASSERT(b.lp_s >= b.closed_s);
				{
					/* both closed forms against a naive reference */
					struct fast_bound c;
					double ref = naive_closed(&t, D);
					unit_bound(&t, D, true, &c, NULL);
					CU_ASSERT(close_rel(c.closed_s, ref, 1e-12));
					CU_ASSERT(close_rel(b.closed_s, ref, 1e-12));
					CU_ASSERT_EQUAL(c.closed_server, b.closed_server);
					CU_ASSERT_EQUAL(c.closed_is_ingress, b.closed_is_ingress);
				}
				CU_ASSERT(b.solve_s >= 0);
				if (N > 1 && G >= 4)
					CU_ASSERT(b.closed_s > 0);
				if (b.lp_s > b.closed_s * 1.001)
					strict++;
				cases++;
				free(D);
			}
	CU_ASSERT_EQUAL(cases, 2 * 5 * 5);
	CU_ASSERT(strict >= 5); /* slow meshes/switches make relaying count */
}

static void test_bound__lp_equals_closed_when_scaleup_free(void)
{
	struct fast_rng rng;

	fast_rng_seed(&rng, 7);
	for (int kind = 0; kind < 2; kind++)
		for (uint32_t N = 2; N <= 6; N += 2)
			for (uint32_t G = 2; G <= 8; G *= 2) {
				struct fast_topo t = mk_topo(N, G, kind ? FAST_UP_MESH : FAST_UP_SWITCH,
							     1e6, 1);
				uint32_t ng = N * G;
				uint64_t *D = calloc((size_t)ng * ng, sizeof(uint64_t));
				struct fast_bound b;
				struct fast_err err;

				CU_ASSERT_PTR_NOT_NULL_FATAL(D);
				random_matrix(D, ng, &rng);
				CU_ASSERT_EQUAL_FATAL(unit_bound(&t, D, false, &b, &err), 0);
				CU_ASSERT(close_rel(b.lp_s, b.closed_s, 1e-9));
				free(D);
			}
}

static void test_bound__independent_of_server_order(void)
{
	/* the LPs are warm-started from the previous server's basis: the
	 * optimum must not depend on which server came before.  Reverse the
	 * servers (block permutation) and compare. */
	struct fast_rng rng;

	fast_rng_seed(&rng, 99);
	for (int kind = 0; kind < 2; kind++) {
		uint32_t N = 6, G = 4, ng = N * G;
		struct fast_topo t = mk_topo(N, G, kind ? FAST_UP_MESH : FAST_UP_SWITCH, 4, 5);
		uint64_t *D = calloc((size_t)ng * ng, sizeof(uint64_t));
		uint64_t *R = calloc((size_t)ng * ng, sizeof(uint64_t));
		struct fast_bound b1, b2;
		struct fast_err err;

		CU_ASSERT_PTR_NOT_NULL_FATAL(D);
		CU_ASSERT_PTR_NOT_NULL_FATAL(R);
		random_matrix(D, ng, &rng);
		for (uint32_t i = 0; i < ng; i++)
			for (uint32_t j = 0; j < ng; j++) {
				uint32_t ri = (N - 1 - i / G) * G + i % G;
				uint32_t rj = (N - 1 - j / G) * G + j % G;
				R[(size_t)ri * ng + rj] = D[(size_t)i * ng + j];
			}
		CU_ASSERT_EQUAL_FATAL(unit_bound(&t, D, false, &b1, &err), 0);
		CU_ASSERT_EQUAL_FATAL(unit_bound(&t, R, false, &b2, &err), 0);
		CU_ASSERT(close_rel(b1.lp_s, b2.lp_s, 1e-9));
		CU_ASSERT_EQUAL(b1.lp_server, N - 1 - b2.lp_server);
		CU_ASSERT(b1.lp_s > b1.closed_s); /* slow scale-up matters here */
		free(D);
		free(R);
	}
}

/* Pruning must not skip the maximum: server 0 has the largest upper bound
 * (its 2 GB intra message on the direct link alone: 2 s) but an optimum of
 * 1 s (half over the third GPU); servers 1 and 2 exchange 1.05 GB per rail,
 * balanced, so their bound and optimum are both 1.05 s and they must still
 * be solved after server 0. */
static void test_bound__pruning_keeps_the_maximum(void)
{
	struct fast_topo t = mk_topo(3, 3, FAST_UP_MESH, 1, 1);
	uint64_t D[81] = { 0 };
	struct fast_bound b;
	struct fast_err err;

	D[0 * 9 + 1] = 2 * GB;
	for (uint32_t i = 0; i < 3; i++)
		D[(3 + i) * 9 + 6 + i] = 1050000000ull;
	CU_ASSERT_EQUAL_FATAL(unit_bound(&t, D, false, &b, &err), 0);
	CU_ASSERT_DOUBLE_EQUAL(b.lp_s, 1.05, 1e-9);
	CU_ASSERT_EQUAL(b.lp_server, 1);
	CU_ASSERT_EQUAL(b.lps_solved, 2); /* server 2 pruned: 1.05 <= 1.05 */
}

/* Pruning reference: the LP of server s depends only on server s's rows,
 * columns and intra block, and grows with its data, so keeping only the
 * rows and columns of server s (matrix M_s) keeps LP_s and shrinks every
 * other server's LP: max over s of bound(M_s) == bound(M).  A wrong upper
 * bound in the pruning would skip the maximum somewhere. */
static void test_bound__pruning_matches_per_server_reference(void)
{
	struct fast_rng rng;

	fast_rng_seed(&rng, 1234);
	for (int kind = 0; kind < 2; kind++)
		for (int rep = 0; rep < 3; rep++) {
			uint32_t N = 5, G = 4, ng = N * G;
			struct fast_topo t = mk_topo(N, G, kind ? FAST_UP_MESH : FAST_UP_SWITCH,
						     rep == 0 ? 0.3 : rep == 1 ? 2.0 : 20.0, 1);
			uint64_t *D = calloc((size_t)ng * ng, sizeof(uint64_t));
			uint64_t *M = calloc((size_t)ng * ng, sizeof(uint64_t));
			struct fast_bound b, bs;
			struct fast_err err;
			double ref = 0;

			CU_ASSERT_PTR_NOT_NULL_FATAL(D);
			CU_ASSERT_PTR_NOT_NULL_FATAL(M);
			random_matrix(D, ng, &rng);
			/* per-server skew: server s's GPU s%G sends s times more */
			for (uint32_t i = 0; i < ng; i++)
				if (i % G == (i / G) % G)
					for (uint32_t j = 0; j < ng; j++)
						D[(size_t)i * ng + j] *= 1 + i / G;
			CU_ASSERT_EQUAL_FATAL(unit_bound(&t, D, false, &b, &err), 0);
			for (uint32_t s = 0; s < N; s++) {
				for (uint32_t i = 0; i < ng; i++)
					for (uint32_t j = 0; j < ng; j++)
						M[(size_t)i * ng + j] = i / G == s || j / G == s
							? D[(size_t)i * ng + j] : 0;
				CU_ASSERT_EQUAL_FATAL(unit_bound(&t, M, false, &bs, &err), 0);
				ref = fmax(ref, bs.lp_s);
			}
			CU_ASSERT(close_rel(b.lp_s, ref, 1e-9));
			CU_ASSERT(b.lps_solved >= 1 && b.lps_solved <= N);
			free(D);
			free(M);
		}
}

/* The bound holds for every plan: the simulated time of each baseline
 * (and FAST) is at least the LP bound, on switches and meshes whose
 * scale-up is slow enough for relaying to matter. */
static void test_bound__below_simulated_plans(void)
{
	static const char *const names[] = { "fast", "fanout", "nccl", "pxn", "spreadout", "hier" };
	struct fast_rng rng;
	int below = 0, runs = 0;

	fast_rng_seed(&rng, 77);
	for (int kind = 0; kind < 2; kind++)
		for (int rep = 0; rep < 3; rep++) {
			uint32_t N = 2 + (uint32_t)rep, G = 4, ng = N * G;
			struct fast_topo t = mk_topo(N, G, kind ? FAST_UP_MESH : FAST_UP_SWITCH,
						     rep == 0 ? 2.0 : 60.0, 12.5);
			uint64_t *D = calloc((size_t)ng * ng, sizeof(uint64_t));
			struct fast_sim_opts so;
			struct fast_bound b;
			struct fast_err err;

			CU_ASSERT_PTR_NOT_NULL_FATAL(D);
			random_matrix(D, ng, &rng);
			CU_ASSERT_EQUAL_FATAL(unit_bound(&t, D, false, &b, &err), 0);
			fast_sim_opts_default(&so);
			for (size_t a = 0; a < sizeof(names) / sizeof(names[0]); a++) {
				struct fast_plan p;
				struct fast_sim_result r;
				struct fast_algo_opts o;
				fast_algo_opts_default(&o);
				struct fast_matrix mx = fast_matrix_of(D, fast_topo_ngpus(&t));
				if (fast_compile(names[a], &t, &mx, &o, &p, &err) < 0) {
					CU_FAIL("compile failed");
					continue;
				}
				if (unit_sim(&t, &p, NULL, &so, &r, &err) == 0) {
					runs++;
					if (r.time_s >= b.lp_s * (1 - 1e-9))
						below++;
					else
						fprintf(stderr, "\n%s: simulated %.9g s < LP bound %.9g s\n",
							names[a], r.time_s, b.lp_s);
					fast_sim_result_free(&r);
				} else {
					CU_FAIL("simulation failed");
				}
				fast_plan_free(&p);
			}
			free(D);
		}
	CU_ASSERT_EQUAL(runs, 2 * 3 * 6);
	CU_ASSERT_EQUAL(below, runs);
}

/* --- token traffic --------------------------------------------------- */

/* One token of GPU 0 for GPUs 2 and 3 (server 1), 4 GB: it enters server 1
 * once, 4 GB over its 2 NICs = 2 s; scale-up is fast, so the copy to the
 * second GPU is free.  The per-GPU byte matrix counts it twice (4 s). */
static void test_bound__tokens_cross_once_per_server(void)
{
	struct fast_topo t = mk_topo(2, 2, FAST_UP_SWITCH, 100, 1);
	struct fast_traffic tr;
	struct fast_bound b, bytes;
	struct fast_err err;

	tok_init(&tr, 4, FAST_TRAFFIC_DISPATCH, GB);
	tok_group(&tr, 0, 4, 2, (uint32_t[]){ 2, 3 });
	tok_done(&tr);
	CU_ASSERT_EQUAL_FATAL(fast_bound_compute(&t, &tr.m[0], false, &b, &err), 0);
	CU_ASSERT_DOUBLE_EQUAL(b.closed_s, 2.0, 1e-12);
	CU_ASSERT_EQUAL(b.closed_server, 0);
	CU_ASSERT_EQUAL(b.closed_is_ingress, 0);
	CU_ASSERT_DOUBLE_EQUAL(b.lp_s, 2.0, 1e-9);
	CU_ASSERT_EQUAL_FATAL(unit_bound(&t, tr.m[0].bytes, false, &bytes, &err), 0);
	CU_ASSERT_DOUBLE_EQUAL(bytes.lp_s, 4.0, 1e-9);
	{
		struct fast_bound c;
		CU_ASSERT_EQUAL_FATAL(fast_bound_compute(&t, &tr.m[0], true, &c, &err), 0);
		CU_ASSERT_DOUBLE_EQUAL(c.closed_s, 2.0, 1e-12);
	}
	fast_traffic_free(&tr);
}

/* Scale-up as slow as a NIC (1 GB/s), 2 x 4 GPUs.  One 8 GB group of
 * GPU 0 for GPU 4: it leaves GPU 0 over its NIC or its port (2 tau >= 8)
 * and arrives at GPU 4 over its NIC or its port: 4 s, twice the closed
 * form (8 GB over 4 NICs).  Then every GPU of server 0 sends a 4 GB group
 * to all of server 1 with scale-up at 0.5 GB/s: server 1 takes 16 GB in
 * (4 s over 4 NICs) but every GPU there needs all 16 GB, over its NIC or
 * its port, 1.5 GB/s together: 32/3 s.  A plan that dedups cannot beat
 * that (replicating 16 GB to 3 more GPUs over 0.5 GB/s ports takes 24 s);
 * one that sends each GPU its copy over its own NIC takes 16 s. */
static void test_bound__tokens_each_gpu_over_nic_or_scaleup(void)
{
	struct fast_topo t = mk_topo(2, 4, FAST_UP_SWITCH, 1, 1);
	struct fast_traffic tr;
	struct fast_bound b;
	struct fast_err err;

	tok_init(&tr, 8, FAST_TRAFFIC_DISPATCH, GB);
	tok_group(&tr, 0, 8, 1, (uint32_t[]){ 4 });
	tok_done(&tr);
	CU_ASSERT_EQUAL_FATAL(fast_bound_compute(&t, &tr.m[0], false, &b, &err), 0);
	CU_ASSERT_DOUBLE_EQUAL(b.closed_s, 2.0, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(b.lp_s, 4.0, 1e-9);
	fast_traffic_free(&tr);

	t = mk_topo(2, 4, FAST_UP_SWITCH, 0.5, 1);
	tok_init(&tr, 8, FAST_TRAFFIC_DISPATCH, GB);
	for (uint32_t i = 0; i < 4; i++)
		tok_group(&tr, i, 4, 4, (uint32_t[]){ 4, 5, 6, 7 });
	tok_done(&tr);
	CU_ASSERT_EQUAL_FATAL(fast_bound_compute(&t, &tr.m[0], false, &b, &err), 0);
	CU_ASSERT_DOUBLE_EQUAL(b.closed_s, 4.0, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(b.lp_s, 32.0 / 3.0, 1e-9);
	CU_ASSERT_EQUAL(b.lp_server, 1);
	fast_traffic_free(&tr);
}

/* Combine is the mirror of dispatch: the same groups give the same bound,
 * with egress and ingress exchanged. */
static void test_bound__tokens_combine_mirrors_dispatch(void)
{
	struct fast_rng rng;

	fast_rng_seed(&rng, 15);
	for (int kind = 0; kind < 2; kind++)
		for (uint32_t N = 2; N <= 4; N++) {
			uint32_t G = 4, ng = N * G;
			struct fast_topo t = mk_topo(N, G, kind ? FAST_UP_MESH : FAST_UP_SWITCH,
						     kind ? 2 : 3, 1);
			struct fast_traffic d, c;
			struct fast_bound bd, bc;
			struct fast_err err;

			tok_init(&d, ng, FAST_TRAFFIC_DISPATCH, 4096);
			tok_init(&c, ng, FAST_TRAFFIC_COMBINE, 4096);
			for (uint32_t g = 0; g < 3 * ng; g++) {
				uint32_t src = (uint32_t)fast_rng_below(&rng, ng), dst[8], n = 0;
				uint64_t tokens = 1 + fast_rng_below(&rng, 64);
				for (uint32_t x = 0; x < ng && n < 8; x++)
					if (fast_rng_below(&rng, 4) == 0)
						dst[n++] = x;
				if (!n)
					dst[n++] = (src + G) % ng;
				tok_group(&d, src, tokens, n, dst);
				tok_group(&c, src, tokens, n, dst);
			}
			tok_done(&d);
			tok_done(&c);
			CU_ASSERT_EQUAL_FATAL(fast_bound_compute(&t, &d.m[0], false, &bd, &err), 0);
			CU_ASSERT_EQUAL_FATAL(fast_bound_compute(&t, &c.m[0], false, &bc, &err), 0);
			CU_ASSERT(close_rel(bd.lp_s, bc.lp_s, 1e-9));
			CU_ASSERT(close_rel(bd.closed_s, bc.closed_s, 1e-12));
			CU_ASSERT(bd.lp_s >= bd.closed_s);
			fast_traffic_free(&d);
			fast_traffic_free(&c);
		}
}

/* Groups of one destination are a byte matrix: the token LP is then a
 * relaxation of the byte LP (bound.c), so at most it, and its closed form
 * is the byte closed form. */
static void test_bound__tokens_single_destination_relaxes_bytes(void)
{
	struct fast_rng rng;
	int strict = 0;

	fast_rng_seed(&rng, 5);
	for (int kind = 0; kind < 2; kind++)
		for (uint32_t N = 1; N <= 4; N++)
			for (uint32_t G = 1; G <= 8; G *= 2) {
				uint32_t ng = N * G;
				struct fast_topo t = mk_topo(N, G, kind ? FAST_UP_MESH : FAST_UP_SWITCH,
							     0.5 + (double)fast_rng_below(&rng, 8), 1);
				struct fast_traffic tr;
				struct fast_bound bt, bb;
				struct fast_err err;

				tok_init(&tr, ng, FAST_TRAFFIC_DISPATCH, 1000);
				for (uint32_t i = 0; i < ng; i++)
					for (uint32_t j = 0; j < ng; j++)
						if (fast_rng_below(&rng, 3))
							tok_group(&tr, i, 1 + fast_rng_below(&rng, 1000) *
									 (j == 0 ? 8 : 1), 1, &j);
				tok_done(&tr);
				CU_ASSERT_EQUAL_FATAL(fast_bound_compute(&t, &tr.m[0], false, &bt, &err), 0);
				CU_ASSERT_EQUAL_FATAL(unit_bound(&t, tr.m[0].bytes, false, &bb, &err), 0);
				CU_ASSERT(bt.lp_s <= bb.lp_s * (1 + 1e-7) + 1e-15);
				CU_ASSERT(bt.lp_s >= bt.closed_s);
				CU_ASSERT(close_rel(bt.closed_s, bb.closed_s, 1e-12));
				if (bt.lp_s > bt.closed_s * 1.001)
					strict++;
				fast_traffic_free(&tr);
			}
	CU_ASSERT(strict >= 3); /* slow scale-up makes the per-GPU rows count */
}

/* A plan over the per-GPU byte matrix is a plan for the token traffic, so
 * every baseline's simulated time is at least the token bound (seeded
 * random multi-destination dispatch and combine, switch and mesh). */
static void test_bound__tokens_below_byte_plans(void)
{
	static const char *const names[] = { "fanout", "fast", "hier" };
	struct fast_rng rng;
	int runs = 0, below = 0;

	fast_rng_seed(&rng, 2026);
	for (int kind = 0; kind < 2; kind++)
		for (int combine = 0; combine < 2; combine++)
			for (uint32_t N = 2; N <= 3; N++) {
				uint32_t G = 4, ng = N * G;
				struct fast_topo t = mk_topo(N, G, kind ? FAST_UP_MESH : FAST_UP_SWITCH,
							     kind ? 3 : 6, 1);
				struct fast_traffic tr;
				struct fast_bound b;
				struct fast_err err;
				struct fast_sim_opts so;

				fast_sim_opts_default(&so);
				tok_init(&tr, ng, combine ? FAST_TRAFFIC_COMBINE : FAST_TRAFFIC_DISPATCH,
					7168);
				tok_random_groups(&tr, &rng, 4 * ng, 6, G, 200);
				tok_done(&tr);
				CU_ASSERT_EQUAL_FATAL(fast_bound_compute(&t, &tr.m[0], false, &b, &err), 0);
				CU_ASSERT(b.lp_s > 0);
				for (size_t a = 0; a < sizeof names / sizeof *names; a++) {
					struct fast_plan p;
					struct fast_sim_result r;
					struct fast_algo_opts o;
					fast_algo_opts_default(&o);
					struct fast_matrix mx = fast_matrix_of(tr.m[0].bytes, fast_topo_ngpus(&t));
					if (fast_compile(names[a], &t, &mx, &o, &p, &err) < 0) {
						CU_FAIL("compile failed");
						continue;
					}
					CU_ASSERT_EQUAL(unit_check_matrix(&p, &t, &tr.m[0], &err), 0);
					if (unit_sim(&t, &p, NULL, &so, &r, &err) == 0) {
						runs++;
						if (r.time_s >= b.lp_s * (1 - 1e-9))
							below++;
						else
							fprintf(stderr, "\n%s: simulated %.9g s < token bound %.9g s\n",
								names[a], r.time_s, b.lp_s);
						fast_sim_result_free(&r);
					} else {
						CU_FAIL("simulation failed");
					}
					fast_plan_free(&p);
				}
				fast_traffic_free(&tr);
			}
	CU_ASSERT_EQUAL(runs, 2 * 2 * 2 * 3);
	CU_ASSERT_EQUAL(below, runs);
}

/* A group naming a GPU beyond the topology is refused, not read. */
static void test_bound__tokens_out_of_range_refused(void)
{
	struct fast_topo t = mk_topo(1, 2, FAST_UP_SWITCH, 1, 1);
	struct fast_traffic tr;
	struct fast_bound b;
	struct fast_err err;

	tok_init(&tr, 4, FAST_TRAFFIC_DISPATCH, 8);
	tok_group(&tr, 0, 1, 1, (uint32_t[]){ 3 });
	tok_done(&tr);
	CU_ASSERT_EQUAL(fast_bound_compute(&t, &tr.m[0], false, &b, &err), FAST_EINPUT);
	CU_ASSERT_EQUAL(fast_bound_compute(&t, &tr.m[0], true, &b, &err), FAST_EINPUT);
	fast_traffic_free(&tr);
}

UNIT_MAIN("bound",
	  UNIT_TEST(test_bound__closed_form_exact_2x2),
	  UNIT_TEST(test_bound__scaleup_bottleneck_lp_above_closed),
	  UNIT_TEST(test_bound__mesh_relays_over_third_gpu),
	  UNIT_TEST(test_bound__mesh_cross_traffic_relays_through_mesh),
	  UNIT_TEST(test_bound__zero_traffic_is_zero),
	  UNIT_TEST(test_bound__oversubscribed_core),
	  UNIT_TEST(test_bound__lp_at_least_closed_random),
	  UNIT_TEST(test_bound__lp_equals_closed_when_scaleup_free),
	  UNIT_TEST(test_bound__pruning_keeps_the_maximum),
	  UNIT_TEST(test_bound__pruning_matches_per_server_reference),
	  UNIT_TEST(test_bound__below_simulated_plans),
	  UNIT_TEST(test_bound__independent_of_server_order),
	  UNIT_TEST(test_bound__tokens_cross_once_per_server),
	  UNIT_TEST(test_bound__tokens_each_gpu_over_nic_or_scaleup),
	  UNIT_TEST(test_bound__tokens_combine_mirrors_dispatch),
	  UNIT_TEST(test_bound__tokens_single_destination_relaxes_bytes),
	  UNIT_TEST(test_bound__tokens_below_byte_plans),
	  UNIT_TEST(test_bound__tokens_out_of_range_refused))
