/*
 * test_baselines.c - the baseline schedules (lib/compile/baselines.c): every
 * baseline passes fast_plan_check on seeded random matrices (zero rows and
 * columns, a hot receiver, tiny and large messages, local copies) over 1-8
 * servers x 1-8 GPUs, and each has its documented shape: fanout's two
 * concurrent steps, nccl's batches of `peers` rounds, pxn's and hier's
 * chunk-aligned pipelined forwarding, spreadout's NG-1 rounds.  A naive
 * holder walk (independent of lib/check/check.c) double-checks delivery.
 */
#include <CUnit/Basic.h>

#include "unit.h"
#include <stdlib.h>
#include <string.h>

#include "fast/algo.h"
#include "fast/check.h"
#include "fast/plan.h"

typedef int (*compile_fn)(const struct fast_topo *, const uint64_t *,
			  const struct fast_algo_opts *, struct fast_plan *, struct fast_err *);

static const struct {
	const char *name;
	compile_fn fn;
} algos[] = {
	{ "fanout", fast_sched_fanout },
	{ "nccl", fast_sched_nccl },
	{ "pxn", fast_sched_pxn },
	{ "spreadout", fast_sched_spreadout },
	{ "hier", fast_sched_hier },
};
#define NALGOS (sizeof(algos) / sizeof(algos[0]))

static struct fast_topo mk_topo(uint32_t N, uint32_t G)
{
	return unit_topo(N, G, FAST_UP_SWITCH, (struct fast_tier){ 450, 0, 1.0, 0 },
			 (struct fast_tier){ 50, 0, 1.0, 0 });
}

/* Random matrix: sizes from 1 byte to ~2 MiB, ~20% zeros, one zero row,
 * one zero column, one hot receiver, non-zero diagonal. */
static uint64_t *random_matrix(uint32_t ng, struct fast_rng *rng)
{
	uint64_t *D = calloc((size_t)ng * ng, sizeof(uint64_t));
	uint32_t zr = (uint32_t)fast_rng_below(rng, ng), zc = (uint32_t)fast_rng_below(rng, ng);
	uint32_t hot = (uint32_t)fast_rng_below(rng, ng);

	if (!D)
		return NULL;
	for (uint32_t i = 0; i < ng; i++)
		for (uint32_t j = 0; j < ng; j++) {
			uint64_t v;
			switch (fast_rng_below(rng, 5)) {
			case 0: v = 0; break;
			case 1: v = 1 + fast_rng_below(rng, 7); break; /* fewer bytes than chunks */
			default: v = 1 + fast_rng_below(rng, UINT64_C(2) << 20); break;
			}
			if (j == hot)
				v *= 12;
			if (ng > 2 && (i == zr || j == zc))
				v = 0;
			D[(size_t)i * ng + j] = v;
		}
	return D;
}

static bool depends(const struct fast_plan *p, uint32_t s, uint32_t on, uint32_t *pipelined)
{
	const struct fast_step *st = &p->steps[s];
	for (uint32_t i = 0; i < st->ndeps; i++)
		if (p->deps[st->dep0 + i].step == on) {
			if (pipelined)
				*pipelined = p->deps[st->dep0 + i].pipelined;
			return true;
		}
	return false;
}

/* Naive reference: steps are built in dependency order (every dep points
 * to an earlier id), every piece is a whole message.  A GPU may send a
 * message when it is the source or received it in a step this step
 * depends on (transitively); every message arrives at its destination
 * exactly once and nowhere else except at relays that send it on. */
static void naive_walk(const struct fast_plan *p, const uint64_t *D, uint32_t ng)
{
	size_t ns = p->nsteps;
	uint8_t *reach = calloc(ns ? ns * ns : 1, 1); /* reach[a*ns+b]: a waits for b */
	uint32_t *arrivals = calloc((size_t)ng * ng, sizeof(uint32_t));
	bool ok = true;

	CU_ASSERT_PTR_NOT_NULL_FATAL(reach);
	CU_ASSERT_PTR_NOT_NULL_FATAL(arrivals);
	for (size_t a = 0; a < ns; a++) {
		const struct fast_step *st = &p->steps[a];
		for (uint32_t i = 0; i < st->ndeps; i++) {
			uint32_t b = p->deps[st->dep0 + i].step;
			if (b >= a) {
				ok = false;
				continue;
			}
			reach[a * ns + b] = 1;
			for (size_t c = 0; c < ns; c++)
				if (reach[b * ns + c])
					reach[a * ns + c] = 1;
		}
	}
	for (size_t a = 0; a < ns; a++) {
		const struct fast_step *st = &p->steps[a];
		for (uint32_t x = 0; x < st->nxfers; x++) {
			const struct fast_xfer *xf = &p->xfers[st->xfer0 + x];
			for (uint32_t k = 0; k < xf->npieces; k++) {
				const struct fast_piece *pc = &p->pieces[xf->piece0 + k];
				bool held = pc->src == xf->from;
				if (pc->off != 0 || pc->len != D[(size_t)pc->src * ng + pc->dst])
					ok = false;
				/* did it arrive at xf->from in a step a waits for? */
				for (size_t b = 0; !held && b < a; b++) {
					const struct fast_step *sb = &p->steps[b];
					if (!reach[a * ns + b])
						continue;
					for (uint32_t y = 0; y < sb->nxfers; y++) {
						const struct fast_xfer *yf = &p->xfers[sb->xfer0 + y];
						if (yf->to != xf->from)
							continue;
						for (uint32_t q = 0; q < yf->npieces; q++)
							if (p->pieces[yf->piece0 + q].src == pc->src &&
							    p->pieces[yf->piece0 + q].dst == pc->dst)
								held = true;
					}
				}
				if (!held)
					ok = false;
				if (xf->to == pc->dst)
					arrivals[(size_t)pc->src * ng + pc->dst]++;
			}
		}
	}
	for (uint32_t s = 0; s < ng; s++)
		for (uint32_t d = 0; d < ng; d++) {
			uint32_t want = s != d && D[(size_t)s * ng + d] ? 1 : 0;
			if (arrivals[(size_t)s * ng + d] != want)
				ok = false;
		}
	CU_ASSERT(ok);
	free(reach);
	free(arrivals);
}

static void test_baselines__pass_check_on_random_matrices(void)
{
	static const uint32_t sizes[][2] = {
		{ 1, 1 }, { 1, 2 }, { 1, 8 }, { 2, 1 }, { 2, 2 }, { 2, 3 }, { 3, 4 },
		{ 4, 2 }, { 5, 3 }, { 8, 1 }, { 2, 8 }, { 4, 8 }, { 8, 8 },
	};
	struct fast_rng rng;
	int checked = 0;

	fast_rng_seed(&rng, 2024);
	for (size_t z = 0; z < sizeof(sizes) / sizeof(sizes[0]); z++)
		for (int rep = 0; rep < 2; rep++) {
			uint32_t N = sizes[z][0], G = sizes[z][1], ng = N * G;
			struct fast_topo t = mk_topo(N, G);
			uint64_t *D = random_matrix(ng, &rng);
			struct fast_algo_opts o;

			CU_ASSERT_PTR_NOT_NULL_FATAL(D);
			memset(&o, 0, sizeof(o));
			o.peers = rep ? 3 : 0;             /* 0 = NCCL's 8 */
			o.chunk_bytes = rep ? 100000 : 0;  /* odd chunk size */
			for (size_t a = 0; a < NALGOS; a++) {
				struct fast_plan p;
				struct fast_err err;
				int rc = algos[a].fn(&t, D, &o, &p, &err);
				CU_ASSERT_EQUAL_FATAL(rc, 0);
				CU_ASSERT_STRING_EQUAL(p.algo, algos[a].name);
				rc = fast_plan_validate(&p, &err);
				CU_ASSERT_EQUAL(rc, 0);
				if (rc)
					fprintf(stderr, "\n%s %ux%u: %s\n", algos[a].name, N, G, err.msg);
				rc = unit_check(&p, &t, D, &err);
				CU_ASSERT_EQUAL(rc, 0);
				if (rc)
					fprintf(stderr, "\n%s %ux%u: %s\n", algos[a].name, N, G, err.msg);
				if (ng <= 32)
					naive_walk(&p, D, ng);
				fast_plan_free(&p);
				checked++;
			}
			free(D);
		}
	CU_ASSERT_EQUAL(checked, 13 * 2 * 5);
}

static void test_baselines__deterministic(void)
{
	struct fast_rng rng;
	struct fast_topo t = mk_topo(3, 4);
	uint64_t *D;

	fast_rng_seed(&rng, 5);
	D = random_matrix(12, &rng);
	CU_ASSERT_PTR_NOT_NULL_FATAL(D);
	for (size_t a = 0; a < NALGOS; a++) {
		struct fast_plan p1, p2;
		struct fast_err err;
		CU_ASSERT_EQUAL_FATAL(algos[a].fn(&t, D, NULL, &p1, &err), 0);
		CU_ASSERT_EQUAL_FATAL(algos[a].fn(&t, D, NULL, &p2, &err), 0);
		CU_ASSERT_EQUAL(fast_plan_hash(&p1), fast_plan_hash(&p2));
		CU_ASSERT(p1.nsteps > 0);
		fast_plan_free(&p1);
		fast_plan_free(&p2);
	}
	free(D);
}

static uint64_t *dense_matrix(uint32_t ng, uint64_t v)
{
	uint64_t *D = calloc((size_t)ng * ng, sizeof(uint64_t));
	if (!D)
		return NULL;
	for (uint32_t i = 0; i < ng; i++)
		for (uint32_t j = 0; j < ng; j++)
			D[(size_t)i * ng + j] = i == j ? 0 : v + i + 3 * j;
	return D;
}

static void test_baselines__fanout_two_concurrent_steps(void)
{
	struct fast_topo t = mk_topo(3, 4);
	uint64_t *D = dense_matrix(12, 1000);
	struct fast_plan p;
	struct fast_err err;

	CU_ASSERT_PTR_NOT_NULL_FATAL(D);
	CU_ASSERT_EQUAL_FATAL(fast_sched_fanout(&t, D, NULL, &p, &err), 0);
	CU_ASSERT_EQUAL_FATAL(p.nsteps, 2);
	CU_ASSERT_EQUAL(p.steps[0].tier, FAST_TIER_OUT);
	CU_ASSERT_EQUAL(p.steps[1].tier, FAST_TIER_UP);
	CU_ASSERT_EQUAL(p.steps[0].ndeps + p.steps[1].ndeps, 0);
	CU_ASSERT_EQUAL(p.steps[0].nxfers, 12 * 8);
	CU_ASSERT_EQUAL(p.steps[1].nxfers, 12 * 3);
	fast_plan_free(&p);
	free(D);
}

/* Round of a transfer: (to - from) mod ng. */
static uint32_t round_of(const struct fast_xfer *x, uint32_t ng)
{
	return (x->to + ng - x->from) % ng;
}

/* The step of a one-transfer-per-step nccl plan that sends from -> to. */
static uint32_t step_of(const struct fast_plan *p, uint32_t from, uint32_t to)
{
	for (uint32_t s = 0; s < p->nsteps; s++) {
		const struct fast_xfer *x = &p->xfers[p->steps[s].xfer0];
		if (p->steps[s].nxfers && x->from == from && x->to == to)
			return s;
	}
	return UINT32_MAX;
}

/* Slots of a dense-matrix nccl plan (at most 256 ranks: one step per
 * message): the send r -> r+i of round i waits exactly for r's send of
 * round i-P and for the delivery to r+i of round i-P (from r+P), and
 * rounds appear in order. */
static void nccl_slots_shape(const struct fast_plan *p, uint32_t ng, uint32_t G, uint32_t P)
{
	uint32_t last_round = 1;

	CU_ASSERT_EQUAL(p->nsteps, ng * (ng - 1));
	for (uint32_t s = 0; s < p->nsteps; s++) {
		const struct fast_step *st = &p->steps[s];
		const struct fast_xfer *xf = &p->xfers[st->xfer0];
		uint32_t i = round_of(xf, ng), r = xf->from, d = xf->to;
		CU_ASSERT_EQUAL_FATAL(st->nxfers, 1);
		CU_ASSERT_EQUAL(st->chunks, 1);
		CU_ASSERT_EQUAL(r / G != d / G, st->tier == FAST_TIER_OUT);
		CU_ASSERT(i >= last_round);
		last_round = i;
		if (i <= P) {
			CU_ASSERT_EQUAL(st->ndeps, 0);
			continue;
		}
		{
			uint32_t own = step_of(p, r, (r + i - P) % ng);
			uint32_t recv = step_of(p, (r + P) % ng, d);
			CU_ASSERT(depends(p, s, own, NULL));
			CU_ASSERT(depends(p, s, recv, NULL));
			CU_ASSERT_EQUAL(st->ndeps, own == recv ? 1 : 2);
		}
	}
}

static void test_baselines__nccl_slots_of_peers(void)
{
	uint32_t N = 3, G = 4, ng = 12;
	struct fast_topo t = mk_topo(N, G);
	uint64_t *D = dense_matrix(ng, 1000);
	struct fast_algo_opts o;
	struct fast_plan p;
	struct fast_err err;

	CU_ASSERT_PTR_NOT_NULL_FATAL(D);
	memset(&o, 0, sizeof(o));
	o.peers = 4;
	CU_ASSERT_EQUAL_FATAL(fast_sched_nccl(&t, D, &o, &p, &err), 0);
	nccl_slots_shape(&p, ng, G, 4);
	CU_ASSERT_STRING_EQUAL(p.options, "peers=4");
	fast_plan_free(&p);

	/* the default is NCCL's 8 peers */
	CU_ASSERT_EQUAL_FATAL(fast_sched_nccl(&t, D, NULL, &p, &err), 0);
	nccl_slots_shape(&p, ng, G, 8);
	CU_ASSERT_STRING_EQUAL(p.options, "peers=8");
	fast_plan_free(&p);
	free(D);
}

/* A zero-byte message occupies no slot: the next round on that slot waits
 * for the slot's last non-empty round, on both ends. */
static void test_baselines__nccl_empty_message_frees_slot(void)
{
	uint32_t N = 3, G = 4, ng = 12;
	struct fast_topo t = mk_topo(N, G);
	uint64_t *D = dense_matrix(ng, 1000);
	struct fast_algo_opts o;
	struct fast_plan p;
	struct fast_err err;
	uint32_t s;

	CU_ASSERT_PTR_NOT_NULL_FATAL(D);
	memset(&o, 0, sizeof(o));
	o.peers = 4;
	D[0 * ng + 5] = 0; /* rank 0, round 5 (slot 1) */
	D[6 * ng + 9] = 0; /* rank 9 receives nothing in round 3 (slot 3) */
	CU_ASSERT_EQUAL_FATAL(fast_sched_nccl(&t, D, &o, &p, &err), 0);
	CU_ASSERT_EQUAL(p.nsteps, ng * (ng - 1) - 2);
	/* 0 -> 9, round 9: rank 0's previous send on slot 1 is round 1 (0 -> 1);
	 * 9's previous receive on slot 1 is round 5 (4 -> 9) */
	s = step_of(&p, 0, 9);
	CU_ASSERT_FATAL(s != UINT32_MAX);
	CU_ASSERT(depends(&p, s, step_of(&p, 0, 1), NULL));
	CU_ASSERT(depends(&p, s, step_of(&p, 4, 9), NULL));
	CU_ASSERT_EQUAL(p.steps[s].ndeps, 2);
	/* 2 -> 9, round 7 (slot 3): 9 received nothing in round 3, and round
	 * 7 is the slot's second round: only rank 2's round 3 send */
	s = step_of(&p, 2, 9);
	CU_ASSERT_FATAL(s != UINT32_MAX);
	CU_ASSERT(depends(&p, s, step_of(&p, 2, 5), NULL));
	CU_ASSERT_EQUAL(p.steps[s].ndeps, 1);
	CU_ASSERT_EQUAL(unit_check(&p, &t, D, &err), 0);
	fast_plan_free(&p);
	free(D);
}

/* No barrier: one huge message holds up only the rounds of its own slot;
 * no step of another slot waits for it, even transitively. */
static void test_baselines__nccl_no_global_barrier(void)
{
	uint32_t N = 3, G = 4, ng = 12, P = 4;
	struct fast_topo t = mk_topo(N, G);
	uint64_t *D = dense_matrix(ng, 1000);
	struct fast_algo_opts o;
	struct fast_plan p;
	struct fast_err err;
	uint32_t hot, waiting = 0;
	uint8_t *reach;

	CU_ASSERT_PTR_NOT_NULL_FATAL(D);
	memset(&o, 0, sizeof(o));
	o.peers = P;
	D[0 * ng + 1] = UINT64_C(1) << 30; /* round 1, slot 1 */
	CU_ASSERT_EQUAL_FATAL(fast_sched_nccl(&t, D, &o, &p, &err), 0);
	hot = step_of(&p, 0, 1);
	CU_ASSERT_FATAL(hot != UINT32_MAX);
	reach = calloc(p.nsteps, 1); /* reach[s]: s waits for hot */
	CU_ASSERT_PTR_NOT_NULL_FATAL(reach);
	for (uint32_t s = 0; s < p.nsteps; s++) {
		const struct fast_step *st = &p.steps[s];
		for (uint32_t k = 0; k < st->ndeps; k++) {
			uint32_t on = p.deps[st->dep0 + k].step;
			CU_ASSERT_FATAL(on < s);
			if (on == hot || reach[on])
				reach[s] = 1;
		}
		if (reach[s]) {
			CU_ASSERT_EQUAL(round_of(&p.xfers[st->xfer0], ng) % P, 1);
			waiting++;
		}
	}
	CU_ASSERT(waiting > 0);
	CU_ASSERT(waiting < p.nsteps / 2);
	free(reach);
	fast_plan_free(&p);
	free(D);
}

/* Above 256 ranks a step holds one server's messages of one round. */
static void test_baselines__nccl_large_groups_by_server(void)
{
	uint32_t N = 33, G = 8, ng = N * G;
	struct fast_topo t = mk_topo(N, G);
	uint64_t *D = calloc((size_t)ng * ng, sizeof(uint64_t));
	struct fast_rng rng;
	struct fast_err err;

	CU_ASSERT_PTR_NOT_NULL_FATAL(D);
	fast_rng_seed(&rng, 11);
	for (size_t x = 0; x < (size_t)ng * ng; x++)
		D[x] = fast_rng_below(&rng, 4) ? 0 : 1 + fast_rng_below(&rng, 300000);
	for (int a = 0; a < 2; a++) {
		struct fast_plan p;
		CU_ASSERT_EQUAL_FATAL((a ? fast_sched_pxn : fast_sched_nccl)(&t, D, NULL, &p, &err), 0);
		for (uint32_t s = 0; s < p.nsteps; s++) {
			const struct fast_step *st = &p.steps[s];
			const struct fast_xfer *x0 = &p.xfers[st->xfer0];
			for (uint32_t x = 0; x < st->nxfers; x++) {
				const struct fast_xfer *xf = &p.xfers[st->xfer0 + x];
				const struct fast_piece *pc = &p.pieces[xf->piece0];
				CU_ASSERT_EQUAL(pc->src / G, p.pieces[x0->piece0].src / G);
				/* one round: the original messages' distance */
				CU_ASSERT_EQUAL((pc->dst + ng - pc->src) % ng,
						(p.pieces[x0->piece0].dst + ng -
						 p.pieces[x0->piece0].src) % ng);
			}
		}
		CU_ASSERT(p.nsteps <= 3 * N * (ng - 1)); /* per message: ~3x more */
		CU_ASSERT_EQUAL(unit_check(&p, &t, D, &err), 0);
		fast_plan_free(&p);
	}
	free(D);
}

static void test_baselines__spreadout_has_ng_minus_1_rounds(void)
{
	uint32_t N = 2, G = 3, ng = 6;
	struct fast_topo t = mk_topo(N, G);
	uint64_t *D = dense_matrix(ng, 77);
	struct fast_plan p;
	struct fast_err err;
	uint32_t last_round = 0, rounds = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(D);
	CU_ASSERT_EQUAL_FATAL(fast_sched_spreadout(&t, D, NULL, &p, &err), 0);
	for (uint32_t s = 0; s < p.nsteps; s++) {
		const struct fast_step *st = &p.steps[s];
		uint32_t r = round_of(&p.xfers[st->xfer0], ng);
		CU_ASSERT(st->nxfers > 0);
		for (uint32_t x = 0; x < st->nxfers; x++)
			CU_ASSERT_EQUAL(round_of(&p.xfers[st->xfer0 + x], ng), r);
		CU_ASSERT(r >= last_round);
		if (r != last_round) {
			rounds++;
			last_round = r;
		}
		/* every step of round r > 1 waits for every step of round r-1 */
		for (uint32_t q = 0; q < s; q++)
			if (round_of(&p.xfers[p.steps[q].xfer0], ng) == r - 1)
				CU_ASSERT(depends(&p, s, q, NULL));
		if (r == 1)
			CU_ASSERT_EQUAL(st->ndeps, 0);
	}
	CU_ASSERT_EQUAL(rounds, ng - 1);
	CU_ASSERT_EQUAL(last_round, ng - 1);
	fast_plan_free(&p);
	free(D);
}

/* Check that `fwd` has a pipelined dependency on `feed`, the same chunk
 * count k > 1, and that its transfer t carries the same piece as the
 * feeding step's transfer t, starting where that one ended. */
static void assert_pipelined(const struct fast_plan *p, uint32_t fwd, uint32_t feed)
{
	const struct fast_step *f = &p->steps[fwd], *u = &p->steps[feed];
	uint32_t pl = 0;

	CU_ASSERT(depends(p, fwd, feed, &pl));
	CU_ASSERT_EQUAL(pl, 1);
	CU_ASSERT_EQUAL(f->chunks, u->chunks);
	CU_ASSERT(f->chunks > 1);
	CU_ASSERT(f->nxfers <= u->nxfers);
	for (uint32_t t = 0; t < f->nxfers && t < u->nxfers; t++) {
		const struct fast_xfer *a = &p->xfers[u->xfer0 + t], *b = &p->xfers[f->xfer0 + t];
		const struct fast_piece *pa = &p->pieces[a->piece0], *pb = &p->pieces[b->piece0];
		CU_ASSERT_EQUAL(a->npieces, 1);
		CU_ASSERT_EQUAL(b->npieces, 1);
		CU_ASSERT_EQUAL(a->to, b->from);
		CU_ASSERT(pa->src == pb->src && pa->dst == pb->dst && pa->len == pb->len);
	}
}

static void test_baselines__pxn_relays_rail_aligned_in_chunks(void)
{
	uint32_t N = 2, G = 4, ng = 8;
	struct fast_topo t = mk_topo(N, G);
	uint64_t *D = dense_matrix(ng, 1 << 20); /* 1 MiB: 8+ chunks of 128 KiB */
	struct fast_plan p;
	struct fast_err err;
	uint32_t relayed_steps = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(D);
	CU_ASSERT_EQUAL_FATAL(fast_sched_pxn(&t, D, NULL, &p, &err), 0);
	for (uint32_t s = 0; s < p.nsteps; s++) {
		const struct fast_step *st = &p.steps[s];
		if (st->tier != FAST_TIER_OUT)
			continue;
		for (uint32_t x = 0; x < st->nxfers; x++) {
			const struct fast_xfer *xf = &p.xfers[st->xfer0 + x];
			CU_ASSERT_EQUAL(xf->from % G, xf->to % G); /* rail-aligned */
		}
		for (uint32_t i = 0; i < st->ndeps; i++)
			if (p.deps[st->dep0 + i].pipelined) {
				uint32_t feed = p.deps[st->dep0 + i].step;
				CU_ASSERT_EQUAL(p.steps[feed].tier, FAST_TIER_UP);
				CU_ASSERT_EQUAL(st->chunks, 9); /* ceil((1 MiB + 28) / 128 KiB) */
				assert_pipelined(&p, s, feed);
				relayed_steps++;
			}
	}
	CU_ASSERT_EQUAL(relayed_steps, 8 * 3); /* one per off-rail cross message */
	CU_ASSERT_EQUAL_FATAL(unit_check(&p, &t, D, &err), 0);
	fast_plan_free(&p);
	free(D);
}

static void test_baselines__hier_two_hops_pipelined(void)
{
	uint32_t N = 3, G = 4, ng = 12;
	struct fast_topo t = mk_topo(N, G);
	uint64_t *D = dense_matrix(ng, 3u << 20);
	struct fast_algo_opts o;
	struct fast_plan p;
	struct fast_err err;

	CU_ASSERT_PTR_NOT_NULL_FATAL(D);
	memset(&o, 0, sizeof(o));
	o.chunk_bytes = 1 << 20;
	CU_ASSERT_EQUAL_FATAL(fast_sched_hier(&t, D, &o, &p, &err), 0);
	CU_ASSERT_EQUAL_FATAL(p.nsteps, 3);
	CU_ASSERT_EQUAL(p.steps[0].tier, FAST_TIER_OUT);
	CU_ASSERT_EQUAL(p.steps[1].tier, FAST_TIER_UP);
	CU_ASSERT_EQUAL(p.steps[2].tier, FAST_TIER_UP);
	CU_ASSERT_EQUAL(p.steps[0].chunks, 4); /* ceil((3 MiB + 44) / 1 MiB) */
	assert_pipelined(&p, 1, 0);
	CU_ASSERT_EQUAL(p.steps[2].ndeps, 0);
	CU_ASSERT_EQUAL(p.steps[0].nxfers, 12 * 8);      /* every cross message */
	CU_ASSERT_EQUAL(p.steps[1].nxfers, 12 * 8 * 3 / 4); /* those off-rail */
	CU_ASSERT_EQUAL(p.steps[2].nxfers, 12 * 3);
	for (uint32_t x = 0; x < p.steps[0].nxfers; x++) {
		const struct fast_xfer *xf = &p.xfers[p.steps[0].xfer0 + x];
		CU_ASSERT_EQUAL(xf->from % G, xf->to % G);
	}
	CU_ASSERT_EQUAL_FATAL(unit_check(&p, &t, D, &err), 0);
	fast_plan_free(&p);
	free(D);
}

/* Negative control for the chunk alignment the baselines rely on: a
 * two-hop relay whose first hop carries the message's halves in reverse
 * order delivers chunk 0's bytes to the relay only in its last chunk, so a
 * pipelined forward of the message in order must fail the checker, while
 * the aligned form (what pxn and hier emit) passes. */
static int relay_plan(bool reversed, const struct fast_topo *t, const uint64_t *D)
{
	struct fast_plan p;
	struct fast_err err;
	uint64_t len = D[0 * 4 + 3], half = len / 2;
	int rc, id;

	fast_plan_init(&p, 2, 2, "hier");
	id = fast_plan_add_step(&p, FAST_STEP_EXPLICIT, FAST_TIER_OUT, &err);
	CU_ASSERT_EQUAL_FATAL(id, 0);
	p.steps[0].chunks = 4;
	CU_ASSERT_EQUAL_FATAL(fast_plan_add_xfer(&p, 0, 2, &err), 0);
	if (reversed) {
		CU_ASSERT_EQUAL_FATAL(fast_plan_add_piece(&p, 0, 3, half, len - half, &err), 0);
		CU_ASSERT_EQUAL_FATAL(fast_plan_add_piece(&p, 0, 3, 0, half, &err), 0);
	} else {
		CU_ASSERT_EQUAL_FATAL(fast_plan_add_piece(&p, 0, 3, 0, len, &err), 0);
	}
	id = fast_plan_add_step(&p, FAST_STEP_EXPLICIT, FAST_TIER_UP, &err);
	CU_ASSERT_EQUAL_FATAL(id, 1);
	p.steps[1].chunks = 4;
	CU_ASSERT_EQUAL_FATAL(fast_plan_add_dep(&p, 1, 0, true, &err), 0);
	CU_ASSERT_EQUAL_FATAL(fast_plan_add_xfer(&p, 2, 3, &err), 0);
	CU_ASSERT_EQUAL_FATAL(fast_plan_add_piece(&p, 0, 3, 0, len, &err), 0);
	rc = unit_check(&p, t, D, &err);
	fast_plan_free(&p);
	return rc;
}

static void test_baselines__misaligned_chunks_fail_check(void)
{
	struct fast_topo t = mk_topo(2, 2);
	uint64_t D[16] = { 0 };

	D[0 * 4 + 3] = 1000;
	CU_ASSERT_EQUAL(relay_plan(false, &t, D), 0);
	CU_ASSERT_EQUAL(relay_plan(true, &t, D), FAST_ECHECK);
}

static void test_baselines__no_traffic_no_steps(void)
{
	struct fast_topo t = mk_topo(2, 2);
	uint64_t D[16] = { 0 };
	struct fast_err err;

	D[0] = D[5] = 100; /* local copies only */
	for (size_t a = 0; a < NALGOS; a++) {
		struct fast_plan p;
		CU_ASSERT_EQUAL_FATAL(algos[a].fn(&t, D, NULL, &p, &err), 0);
		CU_ASSERT_EQUAL(p.nsteps, 0);
		CU_ASSERT_EQUAL(unit_check(&p, &t, D, &err), 0);
		fast_plan_free(&p);
	}
}

UNIT_MAIN("baselines",
	  UNIT_TEST(test_baselines__pass_check_on_random_matrices),
	  UNIT_TEST(test_baselines__deterministic),
	  UNIT_TEST(test_baselines__fanout_two_concurrent_steps),
	  UNIT_TEST(test_baselines__nccl_slots_of_peers),
	  UNIT_TEST(test_baselines__nccl_empty_message_frees_slot),
	  UNIT_TEST(test_baselines__nccl_no_global_barrier),
	  UNIT_TEST(test_baselines__nccl_large_groups_by_server),
	  UNIT_TEST(test_baselines__spreadout_has_ng_minus_1_rounds),
	  UNIT_TEST(test_baselines__pxn_relays_rail_aligned_in_chunks),
	  UNIT_TEST(test_baselines__hier_two_hops_pipelined),
	  UNIT_TEST(test_baselines__misaligned_chunks_fail_check),
	  UNIT_TEST(test_baselines__no_traffic_no_steps))
