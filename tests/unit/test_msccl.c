/*
 * test_msccl.c - the MSCCL exporter (lib/export/msccl.c) against a reference
 * interpreter: every program is executed chunk by chunk (send/recv
 * matched in order per GPU pair and channel, dependencies honoured) with
 * input chunks labelled by (GPU, offset), and every output chunk must hold
 * exactly the input chunk the alltoallv layout says, written once.
 */
#include <CUnit/Basic.h>

#include "unit.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/export/msccl.h"

/* --- reference interpreter ----------------------------------------------- */

struct q_item {
	uint32_t from, to, cnt;
	int32_t chan;
	uint64_t *tok;
	bool taken;
};

/* Run m; 0 on success, or a negative code with a reason in why. */
static int interpret(const struct fast_msccl *m, char *why, size_t wl)
{
	uint32_t ng = m->ngpus;
	uint64_t **bufs = calloc((size_t)ng * 3, sizeof *bufs);
	uint32_t **writes = calloc((size_t)ng, sizeof *writes);
	uint32_t *pc = calloc(m->ntbs, sizeof *pc);
	uint32_t *first = calloc(ng + 1, sizeof *first); /* first block of each GPU */
	struct q_item *q = calloc(m->nsteps + 1, sizeof *q);
	size_t nq = 0;
	int rc = 0;
	bool progress = true;

	for (uint32_t g = 0; g < ng; g++) {
		bufs[g * 3 + 0] = calloc(m->i_chunks[g] + 1, sizeof(uint64_t));
		bufs[g * 3 + 1] = calloc(m->o_chunks[g] + 1, sizeof(uint64_t));
		bufs[g * 3 + 2] = calloc(m->s_chunks[g] + 1, sizeof(uint64_t));
		writes[g] = calloc(m->o_chunks[g] + 1, sizeof(uint32_t));
		for (uint64_t c = 0; c < m->i_chunks[g]; c++)
			bufs[g * 3][c] = ((uint64_t)g << 32 | c) + 1;
	}
	for (uint32_t t = m->ntbs; t-- > 0;)
		first[m->tbs[t].gpu] = t;
	while (progress) {
		progress = false;
		for (uint32_t t = 0; t < m->ntbs; t++) {
			const struct fast_msccl_tb *tb = &m->tbs[t];
			while (pc[t] < tb->nsteps) {
				const struct fast_msccl_step *st = &m->steps[tb->step0 + pc[t]];
				uint32_t g = tb->gpu;
				if (st->depid >= 0) {
					uint32_t dt = first[g] + (uint32_t)st->depid;
					if (dt >= m->ntbs || m->tbs[dt].gpu != g) {
						snprintf(why, wl, "gpu %u: depid %d out of range", g, st->depid);
						rc = -1;
						goto out;
					}
					if (pc[dt] <= (uint32_t)st->deps)
						break; /* not done yet */
				}
				if (st->op == FAST_MSCCL_NOP) {
					pc[t]++;
					progress = true;
					continue;
				}
				uint64_t *src = st->srcoff >= 0 ? bufs[g * 3 + st->srcbuf] + st->srcoff : NULL;
				uint64_t *dst = st->dstoff >= 0 ? bufs[g * 3 + st->dstbuf] + st->dstoff : NULL;
				if (st->op == FAST_MSCCL_SEND) {
					q[nq].from = g;
					q[nq].to = (uint32_t)tb->send;
					q[nq].cnt = st->cnt;
					q[nq].chan = tb->chan;
					q[nq].tok = malloc(st->cnt * sizeof(uint64_t));
					for (uint32_t c = 0; c < st->cnt; c++) {
						if (!src[c]) {
							snprintf(why, wl, "gpu %u block %u step %u sends an empty chunk", g, tb->id, pc[t]);
							rc = -1;
							goto out;
						}
						q[nq].tok[c] = src[c];
					}
					nq++;
				} else {
					const uint64_t *tok;
					if (st->op == FAST_MSCCL_RECV) {
						size_t k;
						for (k = 0; k < nq; k++)
							if (!q[k].taken && q[k].from == (uint32_t)tb->recv && q[k].to == g &&
							    q[k].chan == tb->chan)
								break;
						if (k == nq)
							break; /* wait for the send */
						if (q[k].cnt != st->cnt) {
							snprintf(why, wl, "gpu %u: recv of %u chunks matched a send of %u", g, st->cnt, q[k].cnt);
							rc = -1;
							goto out;
						}
						q[k].taken = true;
						tok = q[k].tok;
					} else {
						tok = src;
					}
					for (uint32_t c = 0; c < st->cnt; c++) {
						if (!tok[c]) {
							snprintf(why, wl, "gpu %u copies an empty chunk", g);
							rc = -1;
							goto out;
						}
						dst[c] = tok[c];
						if (st->dstbuf == FAST_MSCCL_OUT)
							writes[g][st->dstoff + c]++;
					}
				}
				pc[t]++;
				progress = true;
			}
		}
	}
	for (uint32_t t = 0; t < m->ntbs; t++)
		if (pc[t] < m->tbs[t].nsteps) {
			snprintf(why, wl, "deadlock: gpu %u block %u stuck at step %u", m->tbs[t].gpu, m->tbs[t].id, pc[t]);
			rc = -2;
			goto out;
		}
	for (size_t k = 0; k < nq; k++)
		if (!q[k].taken) {
			snprintf(why, wl, "a send %u->%u was never received", q[k].from, q[k].to);
			rc = -3;
			goto out;
		}
	/* the layout: input (s, d) at prefix over d, output at prefix over s */
	for (uint32_t d = 0; d < ng; d++) {
		uint64_t o = 0;
		for (uint32_t s = 0; s < ng; s++) {
			uint64_t in = 0;
			for (uint32_t k = 0; k < d; k++)
				in += m->q[(uint64_t)s * ng + k];
			for (uint64_t c = 0; c < m->q[(uint64_t)s * ng + d]; c++, o++) {
				uint64_t want = ((uint64_t)s << 32 | (in + c)) + 1;
				if (writes[d][o] != 1 || bufs[d * 3 + 1][o] != want) {
					snprintf(why, wl, "gpu %u output chunk %llu: written %u times, holds %llx, want %llx",
						 d, (unsigned long long)o, writes[d][o],
						 (unsigned long long)bufs[d * 3 + 1][o], (unsigned long long)want);
					rc = -4;
					goto out;
				}
			}
		}
		if (o != m->o_chunks[d]) {
			snprintf(why, wl, "gpu %u: o_chunks %llu, layout %llu", d,
				 (unsigned long long)m->o_chunks[d], (unsigned long long)o);
			rc = -5;
			goto out;
		}
	}
out:
	for (uint32_t g = 0; g < ng; g++) {
		free(bufs[g * 3]);
		free(bufs[g * 3 + 1]);
		free(bufs[g * 3 + 2]);
		free(writes[g]);
	}
	for (size_t k = 0; k < nq; k++)
		free(q[k].tok);
	free(bufs);
	free(writes);
	free(pc);
	free(first);
	free(q);
	return rc;
}

/* --- plan helpers ---------------------------------------------------------- */

static int tier_of(uint32_t a, uint32_t b, uint32_t G)
{
	return a / G == b / G ? FAST_TIER_UP : FAST_TIER_OUT;
}

/* One step per transfer, all direct: D[s][d] whole. */
static void direct_plan(struct fast_plan *p, uint32_t N, uint32_t G, const uint64_t *D)
{
	struct fast_err err;
	uint32_t ng = N * G;

	fast_plan_init(p, N, G, "test");
	for (uint32_t s = 0; s < ng; s++)
		for (uint32_t d = 0; d < ng; d++) {
			if (s == d || !D[s * ng + d])
				continue;
			CU_ASSERT_FATAL(fast_plan_add_step(p, FAST_STEP_EXPLICIT, tier_of(s, d, G), &err) >= 0);
			CU_ASSERT_FATAL(fast_plan_add_xfer(p, s, d, &err) == 0);
			CU_ASSERT_FATAL(fast_plan_add_piece(p, s, d, 0, D[s * ng + d], &err) == 0);
		}
}

static void build_ok(const struct fast_plan *p, const uint64_t *D, const struct fast_msccl_opts *o,
		     struct fast_msccl *m)
{
	struct fast_err err;
	char why[256] = "";
	int rc = fast_msccl_build(p, D, o, m, &err);

	if (rc < 0)
		fprintf(stderr, "build: %s\n", err.msg);
	CU_ASSERT_FATAL(rc == 0);
	rc = interpret(m, why, sizeof why);
	if (rc)
		fprintf(stderr, "interpret: %s\n", why);
	CU_ASSERT(rc == 0);
}

/* --- tests ------------------------------------------------------------------ */

static void test_msccl__direct_exact(void)
{
	uint64_t D[16];
	struct fast_plan p;
	struct fast_msccl m;
	struct fast_msccl_opts o;

	for (int i = 0; i < 16; i++)
		D[i] = (uint64_t)(i % 5 + 1) * 4096;
	direct_plan(&p, 2, 2, D);
	fast_msccl_opts_default(&o);
	build_ok(&p, D, &o, &m);
	CU_ASSERT_EQUAL(m.chunk_bytes, 4096);
	CU_ASSERT_EQUAL(m.rounded_bytes, 0);
	CU_ASSERT_EQUAL(m.ngpus, 4);
	/* every message, diagonal included, in chunks of 4096 */
	for (int i = 0; i < 16; i++)
		CU_ASSERT_EQUAL(m.q[i], D[i] / 4096);
	/* link counts equal the plan's per-pair bytes / C */
	for (int s = 0; s < 4; s++)
		for (int d = 0; d < 4; d++)
			CU_ASSERT_EQUAL(m.link_chunks[s * 4 + d], s == d ? 0 : D[s * 4 + d] / 4096);
	CU_ASSERT_EQUAL(m.max_tb_steps, 0);
	fast_msccl_free(&m);
	fast_plan_free(&p);
}

static void test_msccl__rounding_reported(void)
{
	uint64_t D[4] = { 0, 1000, 2500, 0 };
	struct fast_plan p;
	struct fast_msccl m;
	struct fast_msccl_opts o;

	direct_plan(&p, 2, 1, D);
	fast_msccl_opts_default(&o);
	o.chunk_bytes = 1024;
	build_ok(&p, D, &o, &m);
	CU_ASSERT_EQUAL(m.q[1], 1);     /* 1000 -> 1 chunk (24 B more) */
	CU_ASSERT_EQUAL(m.q[2], 2);     /* 2500 -> 2 chunks (452 B less) */
	CU_ASSERT_EQUAL(m.rounded_bytes, 24 + 452);
	CU_ASSERT_EQUAL(m.total_bytes, 3500);
	fast_msccl_free(&m);
	/* a message far below the chunk still gets one chunk */
	o.chunk_bytes = 1 << 20;
	build_ok(&p, D, &o, &m);
	CU_ASSERT_EQUAL(m.q[1], 1);
	CU_ASSERT_EQUAL(m.q[2], 1);
	fast_msccl_free(&m);
	fast_plan_free(&p);
}

static void test_msccl__max_cnt_splits(void)
{
	uint64_t D[4] = { 0, 200 * 512, 0, 0 };
	struct fast_plan p;
	struct fast_msccl m;
	struct fast_msccl_opts o;

	direct_plan(&p, 2, 1, D);
	fast_msccl_opts_default(&o);
	o.chunk_bytes = 512;
	build_ok(&p, D, &o, &m);
	/* 200 chunks in steps of <= 64: 4 sends and 4 receives */
	CU_ASSERT_EQUAL(m.nsteps, 8);
	for (size_t i = 0; i < m.nsteps; i++)
		CU_ASSERT(m.steps[i].cnt <= 64);
	fast_msccl_free(&m);
	fast_plan_free(&p);
}

/* Server 0 = GPUs 0,1; server 1 = GPUs 2,3.  GPU 0 sends its message to
 * GPU 3 in two halves: half 1 via GPU 1 (rail 1 -> GPU 3), half 2 via GPU
 * 2 (rail 0, then scale-up to 3).  The relays forward from scratch after
 * the receive that brought the chunks. */
static void relay_plan(struct fast_plan *p)
{
	struct fast_err err;
	int a, b, c, d;

	fast_plan_init(p, 2, 2, "test");
	a = fast_plan_add_step(p, FAST_STEP_EXPLICIT, FAST_TIER_UP, &err);
	CU_ASSERT_FATAL(a >= 0);
	CU_ASSERT(fast_plan_add_xfer(p, 0, 1, &err) == 0);
	CU_ASSERT(fast_plan_add_piece(p, 0, 3, 0, 3000, &err) == 0);
	b = fast_plan_add_step(p, FAST_STEP_EXPLICIT, FAST_TIER_OUT, &err);
	CU_ASSERT_FATAL(b >= 0);
	CU_ASSERT(fast_plan_add_xfer(p, 0, 2, &err) == 0);
	CU_ASSERT(fast_plan_add_piece(p, 0, 3, 3000, 5000, &err) == 0);
	CU_ASSERT(fast_plan_add_xfer(p, 1, 3, &err) == 0);
	CU_ASSERT(fast_plan_add_piece(p, 1, 3, 0, 1000, &err) == 0);
	c = fast_plan_add_step(p, FAST_STEP_EXPLICIT, FAST_TIER_OUT, &err);
	CU_ASSERT_FATAL(c >= 0);
	CU_ASSERT(fast_plan_add_dep(p, (uint32_t)c, (uint32_t)a, false, &err) == 0);
	CU_ASSERT(fast_plan_add_xfer(p, 1, 3, &err) == 0);
	/* forward in two pieces that cut the received range differently */
	CU_ASSERT(fast_plan_add_piece(p, 0, 3, 0, 1000, &err) == 0);
	CU_ASSERT(fast_plan_add_piece(p, 0, 3, 1000, 2000, &err) == 0);
	d = fast_plan_add_step(p, FAST_STEP_EXPLICIT, FAST_TIER_UP, &err);
	CU_ASSERT_FATAL(d >= 0);
	CU_ASSERT(fast_plan_add_dep(p, (uint32_t)d, (uint32_t)b, false, &err) == 0);
	CU_ASSERT(fast_plan_add_dep(p, (uint32_t)d, (uint32_t)c, false, &err) == 0);
	CU_ASSERT(fast_plan_add_xfer(p, 2, 3, &err) == 0);
	CU_ASSERT(fast_plan_add_piece(p, 0, 3, 3000, 5000, &err) == 0);
}

static void test_msccl__relay_uses_scratch_and_deps(void)
{
	uint64_t D[16] = { 0 };
	struct fast_plan p;
	struct fast_msccl m;
	struct fast_msccl_opts o;
	size_t scratch_sends = 0;

	D[0 * 4 + 3] = 8000;
	D[1 * 4 + 3] = 1000;
	relay_plan(&p);
	fast_msccl_opts_default(&o);
	build_ok(&p, D, &o, &m);
	CU_ASSERT_EQUAL(m.chunk_bytes, 1000);
	CU_ASSERT_EQUAL(m.s_chunks[1], 3);
	CU_ASSERT_EQUAL(m.s_chunks[2], 5);
	CU_ASSERT_EQUAL(m.s_chunks[0], 0);
	CU_ASSERT_EQUAL(m.s_chunks[3], 0);
	for (uint32_t t = 0; t < m.ntbs; t++)
		for (uint32_t s = 0; s < m.tbs[t].nsteps; s++) {
			const struct fast_msccl_step *st = &m.steps[m.tbs[t].step0 + s];
			if (st->op == FAST_MSCCL_SEND && st->srcbuf == FAST_MSCCL_SCRATCH) {
				scratch_sends++;
				CU_ASSERT(st->depid >= 0); /* waits for its receive */
			}
		}
	CU_ASSERT_EQUAL(scratch_sends, 3);
	/* link counts: 0->1 3 chunks, 0->2 5, 1->3 1 + 3, 2->3 5 */
	CU_ASSERT_EQUAL(m.link_chunks[0 * 4 + 1], 3);
	CU_ASSERT_EQUAL(m.link_chunks[0 * 4 + 2], 5);
	CU_ASSERT_EQUAL(m.link_chunks[1 * 4 + 3], 4);
	CU_ASSERT_EQUAL(m.link_chunks[2 * 4 + 3], 5);
	fast_msccl_free(&m);
	fast_plan_free(&p);
}

/* The reference interpreter must notice a corrupted program. */
static void test_msccl__interpreter_catches_corruption(void)
{
	uint64_t D[16] = { 0 };
	struct fast_plan p;
	struct fast_msccl m;
	struct fast_msccl_opts o;
	struct fast_err err;
	char why[256];
	size_t i;

	D[0 * 4 + 3] = 8000;
	D[1 * 4 + 3] = 1000;
	relay_plan(&p);
	fast_msccl_opts_default(&o);
	CU_ASSERT_FATAL(fast_msccl_build(&p, D, &o, &m, &err) == 0);
	CU_ASSERT(interpret(&m, why, sizeof why) == 0);
	for (i = 0; i < m.nsteps; i++)
		if (m.steps[i].op == FAST_MSCCL_RECV && m.steps[i].dstbuf == FAST_MSCCL_OUT)
			break;
	CU_ASSERT_FATAL(i < m.nsteps);
	m.steps[i].dstoff += 1; /* lands one chunk off */
	CU_ASSERT(interpret(&m, why, sizeof why) != 0);
	m.steps[i].dstoff -= 1;
	m.steps[i].cnt += 1;    /* no longer matches its send */
	CU_ASSERT(interpret(&m, why, sizeof why) != 0);
	fast_msccl_free(&m);
	fast_plan_free(&p);
}

static void test_msccl__nop_carries_extra_deps(void)
{
	/* GPU 2 receives from 0 (step 0) and 1 (step 1); step 2 depends on
	 * both and sends from 2's input to 3: two ordering dependencies in
	 * two receive blocks, so one of them rides a nop. */
	uint64_t D[16] = { 0 };
	struct fast_plan p;
	struct fast_msccl m;
	struct fast_msccl_opts o;
	struct fast_err err;
	size_t nops = 0;
	int a, b, c;

	D[0 * 4 + 2] = 100;
	D[1 * 4 + 2] = 100;
	D[2 * 4 + 3] = 100;
	fast_plan_init(&p, 2, 2, "test");
	a = fast_plan_add_step(&p, FAST_STEP_EXPLICIT, FAST_TIER_OUT, &err);
	CU_ASSERT(fast_plan_add_xfer(&p, 0, 2, &err) == 0);
	CU_ASSERT(fast_plan_add_piece(&p, 0, 2, 0, 100, &err) == 0);
	b = fast_plan_add_step(&p, FAST_STEP_EXPLICIT, FAST_TIER_OUT, &err);
	CU_ASSERT(fast_plan_add_xfer(&p, 1, 2, &err) == 0);
	CU_ASSERT(fast_plan_add_piece(&p, 1, 2, 0, 100, &err) == 0);
	c = fast_plan_add_step(&p, FAST_STEP_EXPLICIT, FAST_TIER_UP, &err);
	CU_ASSERT_FATAL(a >= 0 && b >= 0 && c >= 0);
	CU_ASSERT(fast_plan_add_dep(&p, (uint32_t)c, (uint32_t)a, false, &err) == 0);
	CU_ASSERT(fast_plan_add_dep(&p, (uint32_t)c, (uint32_t)b, false, &err) == 0);
	CU_ASSERT(fast_plan_add_xfer(&p, 2, 3, &err) == 0);
	CU_ASSERT(fast_plan_add_piece(&p, 2, 3, 0, 100, &err) == 0);
	fast_msccl_opts_default(&o);
	build_ok(&p, D, &o, &m);
	for (size_t i = 0; i < m.nsteps; i++)
		if (m.steps[i].op == FAST_MSCCL_NOP) {
			nops++;
			CU_ASSERT(m.steps[i].depid >= 0);
		}
	CU_ASSERT_EQUAL(nops, 1);
	fast_msccl_free(&m);
	fast_plan_free(&p);
}

static void test_msccl__forwarding_unheld_chunks_fails(void)
{
	struct fast_plan p;
	struct fast_msccl m;
	struct fast_msccl_opts o;
	struct fast_err err;

	/* GPU 2 "forwards" bytes of message 0->1 it never received */
	fast_plan_init(&p, 1, 3, "test");
	CU_ASSERT(fast_plan_add_step(&p, FAST_STEP_EXPLICIT, FAST_TIER_UP, &err) >= 0);
	CU_ASSERT(fast_plan_add_xfer(&p, 2, 1, &err) == 0);
	CU_ASSERT(fast_plan_add_piece(&p, 0, 1, 0, 100, &err) == 0);
	fast_msccl_opts_default(&o);
	CU_ASSERT_EQUAL(fast_msccl_build(&p, NULL, &o, &m, &err), FAST_EINPUT);
	CU_ASSERT(strstr(err.msg, "does not hold") != NULL);
	fast_plan_free(&p);
}

/* Random two-hop plans: each message is cut into random pieces, each piece
 * goes direct or through a random relay (sent in hop 1, forwarded in hop
 * 2, possibly re-cut); random chunk sizes force rounding.  Each hop is a
 * scale-up step and a scale-out step. */
struct hop {
	uint32_t from, to, s, d;
	uint64_t off, len;
};

static void add_hop_steps(struct fast_plan *p, const struct hop *h, size_t n, uint32_t G,
			  const int *after, int nafter, int *ids)
{
	struct fast_err err;

	for (int tier = 0; tier < 2; tier++) {
		int id = fast_plan_add_step(p, FAST_STEP_EXPLICIT, (enum fast_tier_id)tier, &err);
		CU_ASSERT_FATAL(id >= 0);
		ids[tier] = id;
		for (int k = 0; k < nafter; k++)
			CU_ASSERT(fast_plan_add_dep(p, (uint32_t)id, (uint32_t)after[k], false, &err) == 0);
		for (size_t i = 0; i < n; i++) {
			if (tier_of(h[i].from, h[i].to, G) != tier)
				continue;
			CU_ASSERT(fast_plan_add_xfer(p, h[i].from, h[i].to, &err) == 0);
			CU_ASSERT(fast_plan_add_piece(p, h[i].s, h[i].d, h[i].off, h[i].len, &err) == 0);
		}
	}
}

static void test_msccl__random_plans_execute(void)
{
	struct fast_rng rng;

	fast_rng_seed(&rng, 42);
	for (int iter = 0; iter < 60; iter++) {
		uint32_t N = 1 + (uint32_t)fast_rng_below(&rng, 3), G = 1 + (uint32_t)fast_rng_below(&rng, 3);
		uint32_t ng = N * G;
		uint64_t *D = calloc((size_t)ng * ng, sizeof *D);
		size_t cap = (size_t)ng * ng * 16 * 2 + 1, n1 = 0, n2 = 0;
		struct hop *h1 = calloc(cap, sizeof *h1), *h2 = calloc(cap, sizeof *h2);
		struct fast_plan p;
		struct fast_msccl m;
		struct fast_msccl_opts o;
		int ids1[2], ids2[2];

		for (uint32_t i = 0; i < ng * ng; i++)
			D[i] = fast_rng_below(&rng, 4) ? fast_rng_below(&rng, 5000) : 0;
		for (uint32_t s = 0; s < ng; s++)
			for (uint32_t d = 0; d < ng; d++) {
				uint64_t L = D[s * ng + d], off = 0;
				int pieces = 0;
				if (s == d || !L)
					continue;
				while (off < L) {
					uint64_t len = ++pieces == 16 ? L - off : 1 + fast_rng_below(&rng, L - off);
					uint32_t via = (uint32_t)fast_rng_below(&rng, ng);
					if (fast_rng_below(&rng, 2) || via == s)
						via = d;
					h1[n1++] = (struct hop){ s, via, s, d, off, len };
					if (via != d) {
						uint64_t cut = len > 1 ? 1 + fast_rng_below(&rng, len - 1) : len;
						h2[n2++] = (struct hop){ via, d, s, d, off, cut };
						if (cut < len)
							h2[n2++] = (struct hop){ via, d, s, d, off + cut, len - cut };
					}
					off += len;
				}
			}
		fast_plan_init(&p, N, G, "test");
		add_hop_steps(&p, h1, n1, G, NULL, 0, ids1);
		add_hop_steps(&p, h2, n2, G, ids1, 2, ids2);
		fast_msccl_opts_default(&o);
		o.chunk_bytes = iter % 3 == 0 ? 0 : 1 + fast_rng_below(&rng, 700);
		o.max_cnt = 1 + (uint32_t)fast_rng_below(&rng, 64);
		build_ok(&p, iter % 2 ? D : NULL, &o, &m);
		if (o.chunk_bytes == 0)
			CU_ASSERT(m.chunk_bytes >= 1);
		fast_msccl_free(&m);
		fast_plan_free(&p);
		free(h1);
		free(h2);
		free(D);
	}
}

static void test_msccl__xml_shape(void)
{
	uint64_t D[4] = { 0, 2048, 1024, 0 };
	struct fast_plan p;
	struct fast_msccl m;
	struct fast_msccl_opts o;
	struct fast_err err;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	size_t steps = 0;

	direct_plan(&p, 2, 1, D);
	fast_msccl_opts_default(&o);
	snprintf(o.name, sizeof o.name, "a<b&\"c\"");
	build_ok(&p, D, &o, &m);
	f = open_memstream(&buf, &len);
	CU_ASSERT_FATAL(f != NULL);
	CU_ASSERT(fast_msccl_write(&m, f, &err) == 0);
	fclose(f);
	CU_ASSERT(strstr(buf, "name=\"a&lt;b&amp;&quot;c&quot;\"") != NULL);
	CU_ASSERT(strstr(buf, "coll=\"alltoall\" inplace=\"0\"") != NULL);
	CU_ASSERT(strstr(buf, "nchunksperloop=\"2\" ngpus=\"2\"") != NULL);
	CU_ASSERT(strstr(buf, "<gpu id=\"0\" i_chunks=\"2\" o_chunks=\"1\" s_chunks=\"0\">") != NULL);
	for (const char *s = buf; (s = strstr(s, "<step ")); s++)
		steps++;
	CU_ASSERT_EQUAL(steps, m.nsteps);
	free(buf);
	fast_msccl_free(&m);
	fast_plan_free(&p);
}

UNIT_MAIN("msccl",
	  UNIT_TEST(test_msccl__direct_exact),
	  UNIT_TEST(test_msccl__rounding_reported),
	  UNIT_TEST(test_msccl__max_cnt_splits),
	  UNIT_TEST(test_msccl__relay_uses_scratch_and_deps),
	  UNIT_TEST(test_msccl__interpreter_catches_corruption),
	  UNIT_TEST(test_msccl__nop_carries_extra_deps),
	  UNIT_TEST(test_msccl__forwarding_unheld_chunks_fails),
	  UNIT_TEST(test_msccl__random_plans_execute),
	  UNIT_TEST(test_msccl__xml_shape))
