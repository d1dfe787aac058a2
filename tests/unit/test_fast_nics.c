/*
 * test_fast_nics.c - FAST on NICs as they are (lib/compile/compile_fast_nics.c):
 * a tile's bytes leave (and arrive) over each GPU in proportion to its
 * share of its port, so every NIC finishes together (one slow NIC, GPUs
 * sharing a NIC, a GPU driving several, a failed NIC); a property test
 * over seeded degraded topologies (slow NICs only, and with failed ones
 * whose GPUs relay through their peers) and matrices: every plan passes
 * fast_plan_check, delivers every byte, no scale-out transfer touches a
 * down port, and every out step is one-to-one at port level; token plans
 * likewise; an ideal fabric compiles the plan it always did, with or
 * without an override list of 1.0s; and what cannot be built is refused
 * with a reason.
 */
#include <CUnit/Basic.h>

#include "unit.h"
#include "tok.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fast/algo.h"
#include "fast/check.h"
#include "fast/plan.h"

static struct fast_topo topo_of(uint32_t N, uint32_t G, uint32_t K)
{
	struct fast_topo t = unit_topo(N, G, FAST_UP_SWITCH, (struct fast_tier){ 450, 0.1, 0.85, 2 },
				       (struct fast_tier){ 50, 1.7, 0.977, 5 });

	t.nics = K;
	t.congestion = (struct fast_congestion){ 1, 0.01, 0.5 };
	return t;
}

static bool port_down(const struct fast_topo *t, uint32_t g)
{
	return fast_topo_gpu_out_Bps(t, g) <= 0;
}

/* Bytes each GPU sends (out[g]) and receives (in[g]) over scale-out in
 * the expanded plan e. */
static void out_bytes(const struct fast_plan *e, uint64_t *out, uint64_t *in)
{
	for (size_t s = 0; s < e->nsteps; s++) {
		const struct fast_step *st = &e->steps[s];
		if (st->tier != FAST_TIER_OUT)
			continue;
		for (uint32_t x = 0; x < st->nxfers; x++) {
			const struct fast_xfer *xf = &e->xfers[st->xfer0 + x];
			out[xf->from] += xf->bytes;
			in[xf->to] += xf->bytes;
		}
	}
}

/* Whether every two servers have live ports of one size, FAST's pairing
 * by size; where not, it pairs live GPUs first and a port may meet two
 * (compile_fast_nics.c). */
static bool pairs_by_size(const struct fast_topo *t)
{
	uint32_t P = fast_topo_ports(t);

	for (uint32_t a = 0; a < t->servers; a++)
		for (uint32_t b = 0; b < t->servers; b++) {
			bool found = a == b;
			for (uint32_t p = 0; p < P && !found; p++)
				for (uint32_t q = 0; q < P && !found; q++)
					found = fast_topo_port_Bps(t, a, p) > 0 &&
						fast_topo_port_Bps(t, b, q) > 0 &&
						fast_topo_port_gpus(t, p) == fast_topo_port_gpus(t, q);
			if (!found)
				return false;
		}
	return true;
}

/* Defects of an expanded plan on topology t: a scale-out transfer at a
 * down port, or (where FAST pairs by size) an out step in which a port
 * sends to (receives from) two ports. */
static int port_defects(const struct fast_plan *e, const struct fast_topo *t)
{
	uint32_t G = t->gpus, P = fast_topo_ports(t), np = t->servers * P;
	uint32_t *to = malloc((np + 1) * sizeof *to), *from = malloc((np + 1) * sizeof *from);
	int bad = 0;
	bool one_to_one = pairs_by_size(t);

	CU_ASSERT_FATAL(to && from);
	for (size_t s = 0; s < e->nsteps; s++) {
		const struct fast_step *st = &e->steps[s];
		if (st->tier != FAST_TIER_OUT)
			continue;
		for (uint32_t k = 0; k < np; k++)
			to[k] = from[k] = UINT32_MAX;
		for (uint32_t x = 0; x < st->nxfers; x++) {
			const struct fast_xfer *xf = &e->xfers[st->xfer0 + x];
			uint32_t a = xf->from / G * P + fast_topo_port_of(t, xf->from % G);
			uint32_t b = xf->to / G * P + fast_topo_port_of(t, xf->to % G);
			if (xf->from == xf->to)
				continue;
			if (port_down(t, xf->from) || port_down(t, xf->to))
				bad++;
			if (one_to_one && ((to[a] != UINT32_MAX && to[a] != b) ||
					   (from[b] != UINT32_MAX && from[b] != a)))
				bad++;
			to[a] = b;
			from[b] = a;
		}
	}
	free(to);
	free(from);
	return bad;
}

/* Compile D on t, check it, and return its port defects (-1: refused;
 * -2: refused as it may be, packed stages over a shift whose NICs are
 * down). */
static int compile_check(const struct fast_topo *t, const uint64_t *D,
			 const struct fast_algo_opts *o, struct fast_plan *p)
{
	struct fast_matrix m = fast_matrix_of(D, t->servers * t->gpus);
	struct fast_plan_view v;
	struct fast_err err;
	int bad, rc;

	if ((rc = fast_sched_fast(t, D, o, p, &err)) != 0) {
		if (rc == FAST_EUSAGE && o && o->stages == FAST_STAGES_PACKED &&
		    strstr(err.msg, "a shift's NICs are down"))
			return -2;
		fprintf(stderr, "compile: %s\n", err.msg);
		return -1;
	}
	CU_ASSERT_FATAL(fast_plan_view_open(&v, p, &m, &err) == 0);
	bad = fast_plan_check(&v, t, &err) != 0;
	if (bad)
		fprintf(stderr, "check (%ux%u, K %u): %s\n", t->servers, t->gpus, t->nics, err.msg);
	bad += port_defects(v.x, t);
	fast_plan_view_close(&v);
	return bad;
}

/* One tile's bytes, all from server `from` to server `to` of a 2-server
 * fabric whose server 0 has the odd NICs: GPU i of server 0 sends (or
 * receives) them in proportion to its share of its port, to within the
 * rounding of the lane targets (< 2 bytes each, the last lane filled
 * short by their sum). */
static void one_tile(const struct fast_topo *t, uint32_t from, uint32_t to)
{
	uint32_t G = t->gpus, ng = 2 * G;
	uint64_t *D = calloc((size_t)ng * ng, sizeof *D), R = 0, *out, *in;
	struct fast_plan p, e;
	struct fast_err err;
	double sum = 0;

	out = calloc(ng, sizeof *out);
	in = calloc(ng, sizeof *in);
	CU_ASSERT_FATAL(D && out && in);
	for (uint32_t i = 0; i < G; i++) /* uneven rows: balancing moves bytes */
		for (uint32_t j = 0; j < G; j++) {
			uint64_t v = 1000003 * (1 + (i == 0) * 5) + 7919 * j;
			D[(size_t)(from * G + i) * ng + to * G + j] = v;
			R += v;
		}
	CU_ASSERT_FATAL(compile_check(t, D, NULL, &p) == 0);
	CU_ASSERT_FATAL(fast_plan_expand(&p, NULL, &e, &err) == 0);
	out_bytes(&e, out, in);
	for (uint32_t i = 0; i < G; i++)
		sum += fast_topo_gpu_out_Bps(t, i);
	for (uint32_t i = 0; i < G; i++) {
		double share = fast_topo_gpu_out_Bps(t, i) / sum;
		uint64_t got = from == 0 ? out[i] : in[i];
		CU_ASSERT(fabs((double)got - share * (double)R) <= 2.0 * G + 2);
		if (share == 0)
			CU_ASSERT_EQUAL(got, 0);
	}
	fast_plan_free(&p);
	fast_plan_free(&e);
	free(D);
	free(out);
	free(in);
}

static void test_fast_nics__lane_targets_by_rate(void)
{
	struct fast_topo t;

	/* one slow NIC: its GPU sends half of what the others do */
	t = topo_of(2, 4, 4);
	unit_set_nic(&t, 0, 1, 0.5);
	one_tile(&t, 0, 1);
	/* and receives half */
	one_tile(&t, 1, 0);
	/* K < G: GPUs 0, 1 share NIC 0 at half its rate, 2, 3 NIC 1 */
	t = topo_of(2, 4, 2);
	unit_set_nic(&t, 0, 0, 0.5);
	one_tile(&t, 0, 1);
	one_tile(&t, 1, 0);
	/* K > G: GPU 1 drives NICs 2 and 3, one of them down */
	t = topo_of(2, 4, 8);
	unit_set_nic(&t, 0, 2, 0);
	one_tile(&t, 0, 1);
	one_tile(&t, 1, 0);
	/* a failed NIC: its GPU neither sends nor receives across */
	t = topo_of(2, 4, 4);
	unit_set_nic(&t, 0, 3, 0);
	one_tile(&t, 0, 1);
	one_tile(&t, 1, 0);
}

/* The port rule can fail: the plan for the healthy fabric sends over the
 * failed NIC. */
static void test_fast_nics__healthy_plan_crosses_down_port(void)
{
	struct fast_topo t = topo_of(2, 4, 4), bad = t;
	uint64_t D[64] = { 0 };
	struct fast_plan p, e;
	struct fast_err err;

	for (uint32_t i = 0; i < 4; i++)
		D[i * 8 + 4 + i] = 4096;
	unit_set_nic(&bad, 0, 3, 0);
	CU_ASSERT_FATAL(fast_sched_fast(&t, D, NULL, &p, &err) == 0);
	CU_ASSERT_FATAL(fast_plan_expand(&p, NULL, &e, &err) == 0);
	CU_ASSERT(port_defects(&e, &bad) > 0);
	CU_ASSERT_EQUAL(port_defects(&e, &t), 0);
	fast_plan_free(&p);
	fast_plan_free(&e);
}

/* --- the property test ----------------------------------------------------- */

/* A degraded fabric: K from {G, G/2, 2G, 1..2G}, a few NICs slow and,
 * when `down`, some failed (each server keeps a live one). */
static struct fast_topo random_topo(struct fast_rng *rng, uint32_t N, uint32_t G, bool down)
{
	uint32_t pick = (uint32_t)fast_rng_below(rng, 4), K;
	struct fast_topo t;

	K = pick == 0 ? G : pick == 1 ? (G / 2 ? G / 2 : 1) : pick == 2 ? 2 * G
							    : 1 + (uint32_t)fast_rng_below(rng, 2 * G);
	t = topo_of(N, G, K);
	for (uint32_t s = 0; s < N; s++) {
		uint32_t live = K;
		for (uint32_t k = 0; k < K; k++) {
			uint32_t r = (uint32_t)fast_rng_below(rng, 8);
			if (r == 0 && down && live > 1) {
				unit_set_nic(&t, s, k, 0);
				live--;
			} else if (r == 1) {
				unit_set_nic(&t, s, k, 0.1 + 0.8 * fast_rng_double(rng));
			}
		}
	}
	if (fast_topo_nics_ideal(&t)) /* always something to route around */
		unit_set_nic(&t, 0, 0, 0.25);
	return t;
}

static uint64_t *random_matrix(struct fast_rng *rng, uint32_t ng)
{
	uint64_t *D = calloc((size_t)ng * ng + 1, sizeof *D);
	uint32_t kind = (uint32_t)fast_rng_below(rng, 3);

	CU_ASSERT_FATAL(D != NULL);
	for (uint32_t s = 0; s < ng; s++)
		for (uint32_t d = 0; d < ng; d++) {
			uint64_t v = kind == 0 ? fast_rng_below(rng, 1024) * 512
				     : kind == 1 ? (uint64_t)(1024.0 * pow(fast_rng_double(rng), 6)) * 512 +
						     fast_rng_below(rng, 3)
				     : fast_rng_below(rng, 6) == 0 ? 1 + fast_rng_below(rng, 50000) : 0;
			D[(size_t)s * ng + d] = s == d ? 0 : v;
		}
	return D;
}

static void test_fast_nics__degraded_plans_check(void)
{
	struct fast_rng rng;
	struct fast_plan again = { 0 };
	struct fast_scratch sc = { { 0 }, { 0 } };
	int bad = 0, refused = 0, packed = 0;

	fast_rng_seed(&rng, 2505);
	for (int it = 0; it < 600; it++) {
		uint32_t N = 2 + (uint32_t)fast_rng_below(&rng, 5), G = 1 + (uint32_t)fast_rng_below(&rng, 8);
		struct fast_topo t = random_topo(&rng, N, G, it % 2 == 0);
		uint64_t *D = random_matrix(&rng, N * G);
		struct fast_algo_opts o;
		struct fast_plan p;
		struct fast_err err;
		int b;
		fast_algo_opts_default(&o);
		o.stages = (enum fast_stages_mode)fast_rng_below(&rng, 3); /* auto, exact, packed */
		o.order = (enum fast_stage_order)fast_rng_below(&rng, 3);
		o.balance = fast_rng_below(&rng, 2) ? FAST_BALANCE_JIT : FAST_BALANCE_UPFRONT;
		b = compile_check(&t, D, &o, &p);
		if (b == -2) {
			refused++;
			free(D);
			continue;
		}
		if (b) {
			fprintf(stderr, "case %d: %ux%u K %u: %d defects\n", it, N, G, t.nics, b);
			bad++;
		}
		packed += b == 0 && strstr(p.options, "packed") != NULL;
		/* a reused plan and scratch build the same plan */
		CU_ASSERT_FATAL(fast_sched_fast_into(&t, D, &o, &again, &sc, &err) == 0);
		CU_ASSERT_EQUAL(fast_plan_hash(&p), fast_plan_hash(&again));
		if (b >= 0)
			fast_plan_free(&p);
		free(D);
	}
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT(refused < 60);
	CU_ASSERT(packed > 100);
	fast_plan_free(&again);
	fast_scratch_free(&sc);
}

static void test_fast_nics__token_plans_avoid_down_ports(void)
{
	struct fast_rng rng;
	int bad = 0, explicit_stages = 0;

	fast_rng_seed(&rng, 77);
	for (int it = 0; it < 150; it++) {
		uint32_t N = 2 + (uint32_t)fast_rng_below(&rng, 3), G = 2 + (uint32_t)fast_rng_below(&rng, 4);
		struct fast_topo t = random_topo(&rng, N, G, true);
		enum fast_traffic_kind kind = it % 2 ? FAST_TRAFFIC_COMBINE : FAST_TRAFFIC_DISPATCH;
		struct fast_traffic tr;
		struct fast_plan p;
		struct fast_plan_view v;
		struct fast_err err;
		int rc;
		tok_init(&tr, N * G, kind, 64);
		tok_random_groups(&tr, &rng, 40, 6, G, 9);
		tok_done(&tr);
		rc = fast_sched_fast_tokens(&t, &tr.m[0], NULL, &p, &err);
		if (rc != 0)
			fprintf(stderr, "token case %d: %s\n", it, err.msg);
		CU_ASSERT_FATAL(rc == 0);
		explicit_stages += !fast_plan_is_compact(&p);
		CU_ASSERT_FATAL(fast_plan_view_open(&v, &p, &tr.m[0], &err) == 0);
		if (fast_plan_check(&v, &t, &err) != 0) {
			fprintf(stderr, "token case %d: %s\n", it, err.msg);
			bad++;
		}
		bad += port_defects(v.x, &t);
		fast_plan_view_close(&v);
		fast_plan_free(&p);
		fast_traffic_free(&tr);
	}
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT(explicit_stages > 50);
}

/* An ideal fabric, with or without overrides of 1.0, compiles the plan
 * it always did (the fast path); equal shares on K != G keep its lanes. */
static void test_fast_nics__ideal_path_unchanged(void)
{
	struct fast_rng rng;

	fast_rng_seed(&rng, 5);
	for (int it = 0; it < 20; it++) {
		uint32_t N = 2 + (uint32_t)fast_rng_below(&rng, 6), G = 2 * (1 + (uint32_t)fast_rng_below(&rng, 4));
		struct fast_topo t = topo_of(N, G, G), ones = t, half = topo_of(N, G, G / 2);
		uint64_t *D = random_matrix(&rng, N * G);
		struct fast_algo_opts o;
		struct fast_plan a, b, c;
		struct fast_err err;
		fast_algo_opts_default(&o);
		o.stages = (enum fast_stages_mode)fast_rng_below(&rng, 3);
		for (uint32_t s = 0; s < N; s++)
			unit_set_nic(&ones, s, (uint32_t)fast_rng_below(&rng, G), 1.0);
		CU_ASSERT_FATAL(fast_sched_fast(&t, D, &o, &a, &err) == 0);
		CU_ASSERT_FATAL(fast_sched_fast(&ones, D, &o, &b, &err) == 0);
		CU_ASSERT_EQUAL(fast_plan_hash(&a), fast_plan_hash(&b));
		CU_ASSERT_STRING_EQUAL(a.options, b.options);
		/* K = G / 2 at equal shares: the same lanes (the stages may
		 * differ: a GPU's share is half a NIC) */
		o.stages = FAST_STAGES_EXACT;
		fast_plan_free(&a);
		CU_ASSERT_FATAL(fast_sched_fast(&t, D, &o, &a, &err) == 0);
		CU_ASSERT_FATAL(fast_sched_fast(&half, D, &o, &c, &err) == 0);
		CU_ASSERT_EQUAL_FATAL(a.nlanes, c.nlanes);
		for (size_t l = 0; l < a.nlanes; l++) {
			const struct fast_lane *x = &a.lanes[l], *y = &c.lanes[l];
			CU_ASSERT(x->src_server == y->src_server && x->dst_server == y->dst_server &&
				  x->rail == y->rail && x->bytes == y->bytes &&
				  x->npieces == y->npieces && x->piece0 == y->piece0);
			for (uint32_t k = 0; k < x->npieces; k++) {
				const struct fast_piece *u = &a.pieces[x->piece0 + k];
				const struct fast_piece *w = &c.pieces[y->piece0 + k];
				CU_ASSERT(u->src == w->src && u->dst == w->dst && u->off == w->off &&
					  u->len == w->len);
			}
		}
		fast_plan_free(&a);
		fast_plan_free(&b);
		fast_plan_free(&c);
		free(D);
	}
}

/* What FAST cannot build is refused with the reason. */
static void test_fast_nics__refusals(void)
{
	struct fast_topo t;
	struct fast_algo_opts o;
	struct fast_traffic tr;
	struct fast_plan p;
	struct fast_err err;

	uint64_t D3[36] = { 0 };

	/* packed stages are rail-aligned: on 3 servers x 2 GPUs shift 1
	 * (tile 0 -> 1) runs on rail 0, down at server 0; auto stages
	 * route it */
	t = topo_of(3, 2, 2);
	unit_set_nic(&t, 0, 0, 0);
	D3[1 * 6 + 2] = 1000;
	fast_algo_opts_default(&o);
	o.stages = FAST_STAGES_PACKED;
	CU_ASSERT_EQUAL(fast_sched_fast(&t, D3, &o, &p, &err), FAST_EUSAGE);
	CU_ASSERT(strstr(err.msg, "--stages packed: a shift's NICs are down") != NULL);
	CU_ASSERT_EQUAL(compile_check(&t, D3, NULL, &p), 0);
	fast_plan_free(&p);
	/* K = 3 NICs for G = 4 GPUs: ports of 2, 1 and 1 GPUs; server 0's
	 * live NIC serves two GPUs, server 1's one: no pairing by size joins
	 * them, so live GPUs pair first (a NIC meets two); bytes and tokens
	 * both cross, checked, on live NICs only */
	t = topo_of(2, 4, 3);
	unit_set_nic(&t, 0, 1, 0);
	unit_set_nic(&t, 0, 2, 0);
	unit_set_nic(&t, 1, 0, 0);
	tok_init(&tr, 8, FAST_TRAFFIC_DISPATCH, 8);
	tok_group(&tr, 0, 3, 1, (const uint32_t[]){ 7 });
	tok_group(&tr, 1, 6, 2, (const uint32_t[]){ 0, 3 });
	tok_done(&tr);
	CU_ASSERT_EQUAL(compile_check(&t, tr.m[0].bytes, NULL, &p), 0);
	fast_plan_free(&p);
	CU_ASSERT_EQUAL_FATAL(fast_sched_fast_tokens(&t, &tr.m[0], NULL, &p, &err), 0);
	CU_ASSERT_EQUAL(unit_check_matrix(&p, &t, &tr.m[0], &err), 0);
	fast_plan_free(&p);
	/* live rails disjoint (rail 0 at server 0, rail 1 at server 1): the
	 * stages pair them, token plans too */
	fast_traffic_free(&tr);
	t = topo_of(2, 2, 2);
	unit_set_nic(&t, 0, 1, 0);
	unit_set_nic(&t, 1, 0, 0);
	tok_init(&tr, 4, FAST_TRAFFIC_DISPATCH, 8);
	tok_group(&tr, 0, 3, 2, (const uint32_t[]){ 2, 3 });
	tok_done(&tr);
	CU_ASSERT_EQUAL(compile_check(&t, tr.m[0].bytes, NULL, &p), 0);
	fast_plan_free(&p);
	CU_ASSERT_EQUAL_FATAL(fast_sched_fast_tokens(&t, &tr.m[0], NULL, &p, &err), 0);
	CU_ASSERT_EQUAL(unit_check_matrix(&p, &t, &tr.m[0], &err), 0);
	fast_plan_free(&p);
	fast_traffic_free(&tr);
}

UNIT_MAIN("fast_nics",
	  UNIT_TEST(test_fast_nics__lane_targets_by_rate),
	  UNIT_TEST(test_fast_nics__healthy_plan_crosses_down_port),
	  UNIT_TEST(test_fast_nics__degraded_plans_check),
	  UNIT_TEST(test_fast_nics__token_plans_avoid_down_ports),
	  UNIT_TEST(test_fast_nics__ideal_path_unchanged),
	  UNIT_TEST(test_fast_nics__refusals))
