/*
 * test_fast.c - the FAST compiler: a property test over >= 1000 seeded
 * matrices (1-16 servers x 1-8 GPUs; random, Zipf, hotspot, sparse) and
 * edge cases (all zeros, one server, one GPU per server, one non-zero
 * entry, everything to one GPU, a silent server, byte counts near 2^53).
 * Every plan passes fast_plan_check and an independent checker here
 * (holding along the DAG, exactly-once delivery, one-to-one NICs per
 * stage); lanes hold exactly the balanced loads; stages cover the server
 * matrix within the n^2 - 2n + 2 bound; the same input gives the same hash.
 */
#include <CUnit/Basic.h>

#include "unit.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fast/algo.h"
#include "lib/compile/bvn.h"
#include "fast/check.h"
#include "fast/plan.h"

static struct fast_topo topo_of(uint32_t N, uint32_t G)
{
	struct fast_topo t = unit_topo(N, G, FAST_UP_SWITCH, (struct fast_tier){ 450, 0.1, 0.85, 2 },
				       (struct fast_tier){ 50, 1.7, 0.977, 5 });

	t.congestion = (struct fast_congestion){ 1, 0.01, 0.5 };
	return t;
}

/* --- an independent checker on the expanded plan ------------------------- */

struct arrival {
	uint32_t gpu, src, dst, step;
	uint64_t off, len;
};

static int cmp_arrival(const void *a, const void *b)
{
	const struct arrival *x = a, *y = b;
	if (x->gpu != y->gpu)
		return x->gpu < y->gpu ? -1 : 1;
	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	if (x->dst != y->dst)
		return x->dst < y->dst ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

/* ancestors: bitset per step of the steps it depends on transitively */
static uint64_t *ancestors(const struct fast_plan *e, size_t *words)
{
	size_t n = e->nsteps, w = (n + 63) / 64;
	uint64_t *bits = calloc(n * w + 1, sizeof *bits);
	uint32_t *order = calloc(n + 1, sizeof *order);
	CU_ASSERT_FATAL(bits && order);
	CU_ASSERT_FATAL(fast_plan_topo_order(e, order, NULL) == 0);
	for (size_t k = 0; k < n; k++) {
		uint32_t s = order[k];
		const struct fast_step *st = &e->steps[s];
		for (uint32_t d = 0; d < st->ndeps; d++) {
			uint32_t on = e->deps[st->dep0 + d].step;
			bits[s * w + on / 64] |= UINT64_C(1) << (on % 64);
			for (size_t x = 0; x < w; x++)
				bits[s * w + x] |= bits[on * w + x];
		}
	}
	free(order);
	*words = w;
	return bits;
}

static bool holds(const struct arrival *arr, size_t narr, const uint64_t *anc, size_t w,
		  uint32_t step, uint32_t gpu, const struct fast_piece *pc)
{
	/* union of the arrivals at gpu of this message in ancestor steps must
	 * cover [off, off + len) */
	struct arrival key = { gpu, pc->src, pc->dst, 0, 0, 0 };
	size_t lo = 0, hi = narr;
	uint64_t need = pc->off, end = pc->off + pc->len;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (cmp_arrival(&arr[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t k = lo; k < narr && need < end; k++) {
		const struct arrival *a = &arr[k];
		if (a->gpu != gpu || a->src != pc->src || a->dst != pc->dst)
			break;
		if (!(anc[(size_t)step * w + a->step / 64] >> (a->step % 64) & 1))
			continue;
		if (a->off <= need && a->off + a->len > need)
			need = a->off + a->len;
	}
	return need >= end;
}

/* The naive reference of the checker's NIC rule: every two tier-out
 * steps that send from (receive at) one GPU, one an ancestor of the other. */
static int nic_shared(const struct fast_plan *e, const uint64_t *anc, size_t w)
{
	int bad = 0;

	for (size_t s = 0; s < e->nsteps; s++)
		for (size_t u = s + 1; u < e->nsteps; u++) {
			const struct fast_step *a = &e->steps[s], *b = &e->steps[u];
			bool shared = false;
			if (a->tier != FAST_TIER_OUT || b->tier != FAST_TIER_OUT ||
			    anc[s * w + u / 64] >> (u % 64) & 1 || anc[u * w + s / 64] >> (s % 64) & 1)
				continue;
			for (uint32_t x = 0; x < a->nxfers && !shared; x++)
				for (uint32_t y = 0; y < b->nxfers && !shared; y++) {
					const struct fast_xfer *p = &e->xfers[a->xfer0 + x];
					const struct fast_xfer *q = &e->xfers[b->xfer0 + y];
					shared = p->from != p->to && q->from != q->to &&
						 (p->from == q->from || p->to == q->to);
				}
			bad += shared;
		}
	return bad;
}

/* Returns the number of defects found (0 = correct). */
static int verify(const struct fast_plan *cp, const struct fast_topo *topo, const uint64_t *D)
{
	struct fast_plan e;
	struct fast_err err;
	uint32_t N = topo->servers, G = topo->gpus, ng = N * G;
	size_t narr = 0, nfinal = 0, w;
	struct arrival *arr, *fin;
	uint64_t *anc;
	int bad = 0;

	if (fast_plan_expand(cp, NULL, &e, &err) != 0) {
		fprintf(stderr, "expand: %s\n", err.msg);
		return 1;
	}
	arr = calloc(e.npieces + 1, sizeof *arr);
	fin = calloc(e.npieces + 1, sizeof *fin);
	CU_ASSERT_FATAL(arr && fin);
	for (size_t s = 0; s < e.nsteps; s++) {
		const struct fast_step *st = &e.steps[s];
		int *sends = calloc(ng, sizeof *sends), *recvs = calloc(ng, sizeof *recvs);
		/* a rail step of k permutations: k peers a NIC */
		int kp = cp->steps[s].kind == FAST_STEP_RAIL ? (int)cp->steps[s].nperms : 1;
		for (uint32_t x = 0; x < st->nxfers; x++) {
			const struct fast_xfer *xf = &e.xfers[st->xfer0 + x];
			uint64_t sum = 0;
			if (st->tier == FAST_TIER_OUT) {
				/* one-to-one NICs (k-to-k), rail aligned, across servers */
				if (++sends[xf->from] > kp || ++recvs[xf->to] > kp ||
				    xf->from % G != xf->to % G || xf->from / G == xf->to / G)
					bad++;
			} else if (xf->from / G != xf->to / G) {
				bad++; /* scale-up stays in a server */
			}
			for (uint32_t k = 0; k < xf->npieces; k++) {
				const struct fast_piece *pc = &e.pieces[xf->piece0 + k];
				struct arrival a = { xf->to, pc->src, pc->dst, (uint32_t)s, pc->off, pc->len };
				sum += pc->len;
				if (pc->len == 0 || pc->off + pc->len > D[(size_t)pc->src * ng + pc->dst])
					bad++;
				if (xf->to == pc->dst)
					fin[nfinal++] = a;
				else
					arr[narr++] = a;
			}
			if (sum != xf->bytes)
				bad++;
		}
		free(sends);
		free(recvs);
	}
	qsort(arr, narr, sizeof *arr, cmp_arrival);
	anc = ancestors(&e, &w);
	bad += nic_shared(&e, anc, w);
	/* (1) every relayed piece is held by its sender at that point */
	for (size_t s = 0; s < e.nsteps; s++) {
		const struct fast_step *st = &e.steps[s];
		for (uint32_t x = 0; x < st->nxfers; x++) {
			const struct fast_xfer *xf = &e.xfers[st->xfer0 + x];
			for (uint32_t k = 0; k < xf->npieces; k++) {
				const struct fast_piece *pc = &e.pieces[xf->piece0 + k];
				if (pc->src != xf->from &&
				    !holds(arr, narr, anc, w, (uint32_t)s, xf->from, pc))
					bad++;
			}
		}
	}
	/* (3) final arrivals tile every off-diagonal message exactly once */
	qsort(fin, nfinal, sizeof *fin, cmp_arrival);
	{
		/* walk by destination: fin sorted by (gpu = dst, src, off) */
		size_t k = 0;
		for (uint32_t d = 0; d < ng; d++)
			for (uint32_t s = 0; s < ng; s++) {
				uint64_t at = 0, len = D[(size_t)s * ng + d];
				while (k < nfinal && fin[k].gpu == d && fin[k].src == s) {
					if (fin[k].off != at)
						bad++;
					at = fin[k].off + fin[k].len;
					k++;
				}
				if (s != d && at != len)
					bad++;
			}
		if (k != nfinal)
			bad++;
	}
	free(anc);
	free(arr);
	free(fin);
	fast_plan_free(&e);
	return bad;
}

/* Lanes hold exactly the balanced loads (packed stages: on the rails of
 * the tile's shift; unbalanced, stages=auto(direct): each GPU's own);
 * stages cover S within the bound. */
static int verify_compact(const struct fast_plan *p, const struct fast_topo *topo,
			  const uint64_t *D)
{
	uint32_t N = topo->servers, G = topo->gpus, ng = N * G, rails = 0;
	bool packed = strstr(p->options, "packed") != NULL;
	bool direct = strstr(p->options, "direct") != NULL;
	uint64_t *S = calloc((size_t)N * N, sizeof *S), *lane = calloc((size_t)N * N * G + 1, 8);
	uint64_t *cover = calloc((size_t)N * N, sizeof *cover);
	int bad = 0;

	CU_ASSERT_FATAL(S && lane && cover);
	CU_ASSERT_FATAL(fast_bvn_server_matrix(D, N, G, S, NULL) == 0);
	for (size_t l = 0; l < p->nlanes; l++) {
		const struct fast_lane *ln = &p->lanes[l];
		lane[((size_t)ln->src_server * N + ln->dst_server) * G + ln->rail] = ln->bytes;
	}
	for (uint32_t a = 0; a < N; a++)
		for (uint32_t b = 0; b < N; b++) {
			uint64_t r[64], t = S[a * N + b], excess = 0, sum = 0, tgt[64];
			if (a == b)
				continue;
			for (uint32_t i = 0; i < G; i++) {
				r[i] = 0;
				for (uint32_t j = 0; j < G; j++)
					r[i] += D[(size_t)(a * G + i) * ng + b * G + j];
				sum += r[i];
			}
			for (uint32_t i = 0; i < G; i++)
				tgt[i] = direct ? r[i] : t;
			if (packed) {
				/* shift d = b - a: the rails i = d - 1 mod min(N - 1, G) */
				uint32_t mod = N - 1 < G ? N - 1 : G, res = ((b + N - a) % N - 1) % mod;
				uint64_t cnt = 0;
				for (uint32_t i = 0; i < G; i++)
					cnt += i % mod == res;
				for (uint32_t i = 0; i < G; i++)
					tgt[i] = i % mod == res ? (sum + cnt - 1) / cnt : 0;
			}
			for (uint32_t i = 0; i < G; i++)
				if (r[i] > tgt[i])
					excess += r[i] - tgt[i];
			for (uint32_t i = 0; i < G; i++) {
				uint64_t ti = tgt[i], want = r[i] < ti ? r[i] : ti;
				if (r[i] < ti) {
					uint64_t got = ti - r[i] < excess ? ti - r[i] : excess;
					want += got;
					excess -= got;
				}
				if (lane[((size_t)a * N + b) * G + i] != want)
					bad++;
			}
		}
	for (size_t s = 0; s < p->nsteps; s++) {
		const struct fast_step *st = &p->steps[s];
		if (st->kind != FAST_STEP_RAIL)
			continue;
		rails++;
		for (uint32_t j = 0; j < st->nperms; j++)
			for (uint32_t a = 0; a < N; a++)
				cover[a * N + p->perm[st->perm0 + (size_t)j * N + a]] +=
					p->budgets[st->budget0 + j];
	}
	for (uint32_t a = 0; a < N; a++)
		for (uint32_t b = 0; b < N; b++)
			if (a != b && cover[a * N + b] < S[a * N + b])
				bad++;
	if (rails > fast_bvn_max_terms(N))
		bad++;
	free(S);
	free(lane);
	free(cover);
	return bad;
}

/* --- generators ---------------------------------------------------------- */

enum kind { K_RANDOM, K_ZIPF, K_HOTSPOT, K_SPARSE, K_NKINDS };

static uint64_t *gen(struct fast_rng *rng, uint32_t ng, enum kind k, bool diag)
{
	uint64_t *D = calloc((size_t)ng * ng + 1, sizeof *D);
	uint32_t hot = (uint32_t)fast_rng_below(rng, ng);
	for (uint32_t s = 0; s < ng; s++)
		for (uint32_t d = 0; d < ng; d++) {
			uint64_t v = 0;
			switch (k) {
			case K_RANDOM:
				v = fast_rng_below(rng, 1024) * 512;
				break;
			case K_ZIPF: {
				double u = fast_rng_double(rng);
				/* inverse-CDF-ish heavy tail, bounded */
				v = (uint64_t)(1024.0 * pow(1.0 - u, 1.0 / 0.8 * 4.0)) * 512 +
				    fast_rng_below(rng, 3);
				break;
			}
			case K_HOTSPOT:
				v = d == hot ? 100000 + fast_rng_below(rng, 1000) : fast_rng_below(rng, 50);
				break;
			default:
				v = fast_rng_below(rng, 8) == 0 ? 1 + fast_rng_below(rng, 5000) : 0;
				break;
			}
			D[(size_t)s * ng + d] = s == d && !diag ? 0 : v;
		}
	return D;
}

static void random_opts(struct fast_rng *rng, struct fast_algo_opts *o)
{
	fast_algo_opts_default(o);
	o->stages = (enum fast_stages_mode)fast_rng_below(rng, 3); /* auto, exact, packed */
	o->order = (enum fast_stage_order)fast_rng_below(rng, 3);
	o->balance = fast_rng_below(rng, 2) ? FAST_BALANCE_JIT : FAST_BALANCE_UPFRONT;
}

/* The plan and scratch that check_one's second compile reuses, from case
 * to case of every size (fast_sched_fast_into): it must build the same
 * plan as a fresh compile. */
static struct fast_plan reused;
static struct fast_scratch reused_scratch;

/* fast_plan_check on every plan; the independent checker too when deep. */
static int check_one(const struct fast_topo *t, const uint64_t *D, const struct fast_algo_opts *o,
		     bool deep)
{
	struct fast_plan p, *q = &reused;
	struct fast_err err;
	int bad = 0;

	if (fast_sched_fast(t, D, o, &p, &err) != 0) {
		fprintf(stderr, "compile: %s\n", err.msg);
		return 1;
	}
	if (unit_check(&p, t, D, &err) != 0) {
		fprintf(stderr, "check (%ux%u, %s): %s\n", t->servers, t->gpus, p.options, err.msg);
		bad++;
	}
	if (deep)
		bad += verify(&p, t, D);
	bad += verify_compact(&p, t, D);
	CU_ASSERT_FATAL(fast_sched_fast_into(t, D, o, q, &reused_scratch, &err) == 0);
	if (fast_plan_hash(&p) != fast_plan_hash(q) || strcmp(p.options, q->options) != 0 ||
	    strcmp(p.algo, q->algo) != 0 || unit_check(q, t, D, &err) != 0)
		bad++;
	fast_plan_free(&p);
	return bad;
}

static void test_fast__property_random_matrices(void)
{
	struct fast_rng rng;
	int cases = 0, bad = 0, ncases = unit_cases(1000);
	fast_rng_seed(&rng, 42);
	for (int it = 0; it < ncases; it++) {
		uint32_t N = 1 + (uint32_t)fast_rng_below(&rng, 16);
		uint32_t G = 1 + (uint32_t)fast_rng_below(&rng, 8);
		struct fast_topo t = topo_of(N, G);
		struct fast_algo_opts o;
		uint64_t *D = gen(&rng, N * G, (enum kind)(it % K_NKINDS), it % 7 == 0);
		random_opts(&rng, &o);
		if (fast_rng_below(&rng, 4) == 0)
			t.out.step_overhead_us = 0; /* alpha-aware leans to exact */
		int b = check_one(&t, D, &o, it % 2 == 0);
		if (b)
			fprintf(stderr, "case %d: %ux%u kind %d: %d defects\n", it, N, G, it % K_NKINDS, b);
		bad += b;
		cases++;
		free(D);
	}
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT_EQUAL(cases, ncases);
	fast_plan_free(&reused);
	fast_scratch_free(&reused_scratch);
}

static void one_case(uint32_t N, uint32_t G, uint64_t *D)
{
	struct fast_topo t = topo_of(N, G);
	struct fast_algo_opts o;
	for (int m = 0; m < 16; m++) {
		fast_algo_opts_default(&o);
		o.stages = m & 1 ? FAST_STAGES_EXACT
			 : m & 8 ? (m & 4 ? FAST_STAGES_GROUPED : FAST_STAGES_PACKED)
				 : FAST_STAGES_AUTO;
		o.balance = m & 2 ? FAST_BALANCE_JIT : FAST_BALANCE_UPFRONT;
		o.order = m & 4 ? FAST_ORDER_LARGEST_FIRST : FAST_ORDER_SMALLEST_FIRST;
		CU_ASSERT_EQUAL(check_one(&t, D, &o, true), 0);
	}
}

static void test_fast__edge_cases(void)
{
	uint32_t N = 4, G = 4, ng = 16;
	uint64_t *D = calloc(ng * ng, sizeof *D);
	struct fast_plan p;

	/* all zeros: an empty plan */
	one_case(N, G, D);
	CU_ASSERT_EQUAL(fast_sched_fast(&(struct fast_topo){ 0 }, D, NULL, &p, NULL), FAST_EINPUT);
	/* single non-zero entry */
	D[3 * ng + 12] = 12345;
	one_case(N, G, D);
	/* everything to one GPU */
	memset(D, 0, ng * ng * sizeof *D);
	for (uint32_t s = 0; s < ng; s++)
		D[s * ng + 5] = s == 5 ? 0 : 1000 + s;
	one_case(N, G, D);
	/* one silent server (server 2 sends and receives nothing) */
	for (uint32_t s = 0; s < ng; s++)
		for (uint32_t d = 0; d < ng; d++)
			D[s * ng + d] = s / G == 2 || d / G == 2 || s == d ? 0 : 100 * s + d + 1;
	one_case(N, G, D);
	/* byte counts near 2^53 */
	for (uint32_t s = 0; s < ng; s++)
		for (uint32_t d = 0; d < ng; d++)
			D[s * ng + d] = s == d ? 0 : (UINT64_C(1) << 53) - 1 - s * 7 - d;
	one_case(N, G, D);
	free(D);
	{
		/* one server; one GPU per server */
		struct fast_rng rng;
		uint64_t *E;
		fast_rng_seed(&rng, 9);
		E = gen(&rng, 8, K_RANDOM, true);
		one_case(1, 8, E);
		free(E);
		E = gen(&rng, 8, K_RANDOM, false);
		one_case(8, 1, E);
		free(E);
		E = gen(&rng, 1, K_RANDOM, true);
		one_case(1, 1, E);
		free(E);
	}
}

static void test_fast__overflow_is_bad_input(void)
{
	uint32_t N = 2, G = 2, ng = 4;
	uint64_t D[16] = { 0 };
	struct fast_topo t = topo_of(N, G);
	struct fast_plan p;
	struct fast_err err = { 0 };
	D[0 * ng + 2] = UINT64_MAX;
	D[0 * ng + 3] = 5;
	CU_ASSERT_EQUAL(fast_sched_fast(&t, D, NULL, &p, &err), FAST_EINPUT);
	CU_ASSERT(strstr(err.msg, "overflow") != NULL);
}

static void test_fast__auto_fewer_stages_at_scale(void)
{
	/* 16 servers x 8, ~256 MiB per GPU: auto needs far fewer stages */
	struct fast_rng rng;
	uint32_t N = 16, G = 8, ng = N * G;
	struct fast_topo t = topo_of(N, G);
	uint64_t *D = calloc((size_t)ng * ng, sizeof *D);
	struct fast_algo_opts o;
	struct fast_plan a, e;
	struct fast_plan_summary sa, se;
	fast_rng_seed(&rng, 11);
	for (uint32_t s = 0; s < ng; s++)
		for (uint32_t d = 0; d < ng; d++)
			D[(size_t)s * ng + d] = s == d ? 0 : fast_rng_below(&rng, 1024) * 4096;
	fast_algo_opts_default(&o);
	CU_ASSERT_FATAL(fast_sched_fast(&t, D, &o, &a, NULL) == 0);
	o.stages = FAST_STAGES_EXACT;
	CU_ASSERT_FATAL(fast_sched_fast(&t, D, &o, &e, NULL) == 0);
	CU_ASSERT_FATAL(unit_summarize(&a, &sa, NULL, NULL) == 0);
	CU_ASSERT_FATAL(unit_summarize(&e, &se, NULL, NULL) == 0);
	CU_ASSERT(sa.rail_stages < se.rail_stages);
	CU_ASSERT(strncmp(a.options, "stages=auto(q=", 14) == 0);
	CU_ASSERT_EQUAL(strcmp(a.algo, "fast"), 0);
	fast_plan_free(&a);
	fast_plan_free(&e);
	free(D);
}

/* Defaults (alpha-aware, largest first, balancing just in time): at most
 * two balancing steps besides the intrinsic one, and the last stage split
 * (the same permutation twice, a small part last) so that little
 * redistribution is left after the last rail step; the plan checks. */
static void test_fast__jit_groups_and_tail_split(void)
{
	struct fast_rng rng;
	uint32_t N = 4, G = 8, ng = N * G, up = 0, last = 0, prev = 0, nrail = 0;
	struct fast_topo t = topo_of(N, G);
	uint64_t *D = calloc((size_t)ng * ng, sizeof *D), first_budget = 0;
	struct fast_algo_opts o;
	struct fast_plan p;
	fast_rng_seed(&rng, 12);
	for (uint32_t s = 0; s < ng; s++)
		for (uint32_t d = 0; d < ng; d++)
			D[(size_t)s * ng + d] = s == d ? 0 : fast_rng_below(&rng, 1 << 20) * 16;
	fast_algo_opts_default(&o);
	CU_ASSERT_EQUAL(o.balance, FAST_BALANCE_JIT);
	CU_ASSERT_EQUAL(o.order, FAST_ORDER_LARGEST_FIRST);
	CU_ASSERT_EQUAL(check_one(&t, D, &o, true), 0);
	CU_ASSERT_FATAL(fast_sched_fast(&t, D, &o, &p, NULL) == 0);
	for (size_t k = 0; k < p.nsteps; k++) {
		const struct fast_step *st = &p.steps[k];
		if (st->kind == FAST_STEP_EXPLICIT && st->tier == FAST_TIER_UP)
			up++;
		if (st->kind != FAST_STEP_RAIL)
			continue;
		if (nrail++ == 0)
			first_budget = p.budgets[st->budget0];
		prev = last;
		last = (uint32_t)k;
	}
	CU_ASSERT(up <= 3);
	CU_ASSERT_FATAL(nrail >= 2);
	CU_ASSERT(p.budgets[p.steps[last].budget0] * 4 < first_budget);
	CU_ASSERT(memcmp(p.perm + p.steps[last].perm0, p.perm + p.steps[prev].perm0,
			 N * sizeof *p.perm) == 0);
	fast_plan_free(&p);
	free(D);
}

/* The checkers above must be able to fail: break plans and watch. */
static void test_fast__broken_plans_are_caught(void)
{
	uint32_t N = 3, G = 4, ng = N * G;
	struct fast_topo t = topo_of(N, G);
	uint64_t *D = calloc((size_t)ng * ng, sizeof *D);
	struct fast_algo_opts o;
	struct fast_plan p;
	struct fast_err err;
	size_t last = 0, first = SIZE_MAX;

	/* GPU 0 of every server is hot: balancing must hand bytes over */
	for (uint32_t s = 0; s < ng; s++)
		for (uint32_t d = 0; d < ng; d++)
			D[(size_t)s * ng + d] = s / G == d / G ? 0 : (s % G == 0 ? 100000 : 10) + d;
	fast_algo_opts_default(&o);
	o.stages = FAST_STAGES_EXACT;
	CU_ASSERT_FATAL(fast_sched_fast(&t, D, &o, &p, NULL) == 0);
	CU_ASSERT_EQUAL(verify(&p, &t, D), 0);
	CU_ASSERT_EQUAL(unit_check(&p, &t, D, NULL), 0);
	for (size_t s = 0; s < p.nsteps; s++)
		if (p.steps[s].kind == FAST_STEP_RAIL) {
			last = s;
			first = first == SIZE_MAX ? s : first;
		}
	CU_ASSERT_FATAL(first != SIZE_MAX && p.steps[first].ndeps == 1);
	/* a stage that no longer waits for balancing */
	p.steps[first].ndeps = 0;
	CU_ASSERT(verify(&p, &t, D) > 0);
	CU_ASSERT_EQUAL(unit_check(&p, &t, D, &err), FAST_ECHECK);
	p.steps[first].ndeps = 1;
	/* a stage one byte short */
	p.budgets[p.steps[last].budget0]--;
	CU_ASSERT(verify(&p, &t, D) > 0);
	CU_ASSERT(verify_compact(&p, &t, D) > 0);
	CU_ASSERT_EQUAL(unit_check(&p, &t, D, &err), FAST_ECHECK);
	p.budgets[p.steps[last].budget0]++;
	/* a lane one byte short */
	p.lanes[0].bytes--;
	p.pieces[p.lanes[0].piece0].len--;
	CU_ASSERT(verify(&p, &t, D) > 0);
	CU_ASSERT(verify_compact(&p, &t, D) > 0);
	CU_ASSERT(unit_check(&p, &t, D, &err) < 0);
	fast_plan_free(&p);
	free(D);
}

static void test_fast__dispatch_by_name(void)
{
	struct fast_algo_opts o;
	struct fast_err err;
	struct fast_plan p;
	uint64_t D[4] = { 0, 7, 9, 0 };
	struct fast_topo t = topo_of(2, 1);
	size_t k = 0;
	fast_algo_opts_default(&o);
	CU_ASSERT_EQUAL(o.stages, FAST_STAGES_AUTO);
	CU_ASSERT_EQUAL(o.peers, 8);
	CU_ASSERT_EQUAL(o.chunk_bytes, 0);
	while (fast_algos[k].name)
		CU_ASSERT(fast_algo_known(fast_algos[k++].name));
	CU_ASSERT_EQUAL(k, 7); /* with auto */
	CU_ASSERT(!fast_algo_known("fastest"));
	CU_ASSERT(!fast_algo_known(NULL));
	struct fast_matrix mx = fast_matrix_of(D, fast_topo_ngpus(&t));
	CU_ASSERT_EQUAL(fast_compile("fastest", &t, &mx, &o, &p, &err), FAST_EUSAGE);
	CU_ASSERT(strstr(err.msg, "fastest") != NULL);
	CU_ASSERT_EQUAL_FATAL(fast_compile("fast", &t, &mx, NULL, &p, &err), 0);
	CU_ASSERT_EQUAL(verify(&p, &t, D), 0);
	fast_plan_free(&p);
}

/* The longest chain of rail steps through dependencies (ids ascend along
 * FAST's dependencies). */
static uint32_t rail_depth(const struct fast_plan *p)
{
	uint32_t *depth = calloc(p->nsteps + 1, sizeof *depth), most = 0;

	CU_ASSERT_FATAL(depth != NULL);
	for (size_t t = 0; t < p->nsteps; t++) {
		const struct fast_step *s = &p->steps[t];
		for (uint32_t j = 0; j < s->ndeps; j++) {
			uint32_t u = p->deps[s->dep0 + j].step;
			CU_ASSERT(u < t);
			if (depth[u] > depth[t])
				depth[t] = depth[u];
		}
		depth[t] += s->kind == FAST_STEP_RAIL;
		if (depth[t] > most)
			most = depth[t];
	}
	free(depth);
	return most;
}

/* stages=packed on many shapes: every plan checks (and passes the naive
 * NIC rule in verify()), one rail step per shift that carries anything,
 * and the rail steps chain ceil((N - 1) / G) deep where every shift
 * carries (one wave when N - 1 <= G). */
static void test_fast__packed_stages(void)
{
	struct fast_rng rng;
	int bad = 0, cases = 0, ncases = unit_cases(400);

	fast_rng_seed(&rng, 7);
	for (int it = 0; it < ncases; it++) {
		uint32_t N = 2 + (uint32_t)fast_rng_below(&rng, 19), G = 1 + (uint32_t)fast_rng_below(&rng, 8);
		uint32_t ng = N * G, rails = 0, shifts = 0, mod = N - 1 < G ? N - 1 : G;
		struct fast_topo t = topo_of(N, G);
		struct fast_algo_opts o;
		struct fast_plan p;
		struct fast_err err;
		uint64_t *D = gen(&rng, ng, (enum kind)(it % K_NKINDS), false);
		bool all = true;
		for (uint32_t r = 0; r < ng; r++) /* some empty rows */
			if (fast_rng_below(&rng, 5) == 0)
				memset(D + (size_t)r * ng, 0, ng * sizeof *D);
		fast_algo_opts_default(&o);
		o.stages = FAST_STAGES_PACKED;
		o.balance = it % 3 ? FAST_BALANCE_JIT : FAST_BALANCE_UPFRONT;
		CU_ASSERT_FATAL(fast_sched_fast(&t, D, &o, &p, &err) == 0);
		bad += check_one(&t, D, &o, true);
		for (uint32_t d = 1; d < N; d++) {
			bool any = false;
			for (uint32_t a = 0; a < N && !any; a++)
				for (uint32_t i = 0; i < G && !any; i++)
					for (uint32_t j = 0; j < G && !any; j++)
						any = D[(size_t)(a * G + i) * ng + ((a + d) % N) * G + j] != 0;
			shifts += any;
			all = all && any;
		}
		for (size_t k = 0; k < p.nsteps; k++)
			rails += p.steps[k].kind == FAST_STEP_RAIL;
		CU_ASSERT_EQUAL(rails, shifts);
		if (all)
			CU_ASSERT_EQUAL(rail_depth(&p), (N - 1 + mod - 1) / mod);
		CU_ASSERT(strncmp(p.options, "stages=packed ", 14) == 0);
		fast_plan_free(&p);
		free(D);
		cases++;
	}
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT_EQUAL(cases, ncases);
	fast_plan_free(&reused);
	fast_scratch_free(&reused_scratch);
}

/* The rail steps of p, and the permutations they hold. */
static uint32_t rail_steps(const struct fast_plan *p, uint32_t *perms)
{
	uint32_t rails = 0;

	*perms = 0;
	for (size_t s = 0; s < p->nsteps; s++)
		if (p->steps[s].kind == FAST_STEP_RAIL) {
			rails++;
			*perms += p->steps[s].nperms;
		}
	return rails;
}

/* stages=auto groups where latency dominates (16 x 8, 4 KiB per GPU: the
 * N - 1 shifts in one or two rail steps, the second in flight) and where
 * many stages would each pay their costs (64 MiB: several rail steps, some
 * of several permutations); stages=grouped is the same plan, its options
 * saying what was asked; exact never groups or packs. */
static void test_fast__auto_groups_small_and_many_stages(void)
{
	uint32_t N = 16, G = 8, ng = N * G;
	struct fast_topo t = topo_of(N, G);
	uint64_t *D = calloc((size_t)ng * ng, sizeof *D);
	struct fast_algo_opts o;
	struct fast_plan p, q;
	struct fast_err err;
	const uint64_t per[2] = { 4096, UINT64_C(64) << 20 };

	CU_ASSERT_FATAL(D != NULL);
	for (int k = 0; k < 2; k++) {
		uint32_t rails, perms;
		for (uint32_t s = 0; s < ng; s++)
			for (uint32_t d = 0; d < ng; d++)
				D[(size_t)s * ng + d] = s == d ? 0 : per[k] / (ng - 1);
		fast_algo_opts_default(&o);
		CU_ASSERT_FATAL(fast_sched_fast(&t, D, &o, &p, &err) == 0);
		CU_ASSERT(strncmp(p.options, "stages=auto(q=", 14) == 0 && strstr(p.options, ",steps="));
		rails = rail_steps(&p, &perms);
		CU_ASSERT(k ? rails > 1 && perms > rails : rails <= 2 && perms >= N - 1);
		o.stages = FAST_STAGES_GROUPED;
		CU_ASSERT_FATAL(fast_sched_fast(&t, D, &o, &q, &err) == 0);
		CU_ASSERT(strncmp(q.options, "stages=grouped(q=", 17) == 0);
		CU_ASSERT_EQUAL(fast_plan_hash(&q), fast_plan_hash(&p));
		fast_plan_free(&q);
		fast_plan_free(&p);
		o.stages = FAST_STAGES_EXACT;
		CU_ASSERT_FATAL(fast_sched_fast(&t, D, &o, &p, &err) == 0);
		CU_ASSERT(strncmp(p.options, "stages=exact ", 13) == 0);
		rails = rail_steps(&p, &perms);
		CU_ASSERT(rails == perms);
		fast_plan_free(&p);
	}
	free(D);
}

UNIT_MAIN("fast",
	  UNIT_TEST(test_fast__property_random_matrices),
	  UNIT_TEST(test_fast__edge_cases),
	  UNIT_TEST(test_fast__overflow_is_bad_input),
	  UNIT_TEST(test_fast__auto_fewer_stages_at_scale),
	  UNIT_TEST(test_fast__jit_groups_and_tail_split),
	  UNIT_TEST(test_fast__broken_plans_are_caught),
	  UNIT_TEST(test_fast__dispatch_by_name),
	  UNIT_TEST(test_fast__packed_stages),
	  UNIT_TEST(test_fast__auto_groups_small_and_many_stages))
