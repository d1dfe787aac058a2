/*
 * test_tokens.c - the schedules of token traffic (lib/compile/compile_tokens.c,
 * fast; lib/compile/baselines.c, hier; lib/compile/algo.c, fast_compile): on
 * hand-built token matrices and seeded random ones over 1-6 servers x 1-8
 * GPUs, dispatch and combine, every plan passes fast_plan_check
 * and a naive token walk of this file (which refuses mutants), and its
 * scale-out bytes are exactly the per-server dedup volume (a token crosses
 * to each remote server of its destinations once); dedup=gpu and the
 * other baselines compile the per-GPU byte matrix as BYTES plans and say
 * so in their options.
 */
#include <CUnit/Basic.h>

#include "unit.h"
#include <stdlib.h>
#include <string.h>

#include "fast/algo.h"
#include "lib/workload/gen.h"
#include "fast/check.h"
#include "fast/plan.h"
#include "fast/traffic.h"
#include "tok.h"

static struct fast_topo mk_topo(uint32_t N, uint32_t G)
{
	return unit_topo(N, G, FAST_UP_SWITCH, (struct fast_tier){ 450, 1, 1.0, 0 },
			 (struct fast_tier){ 50, 3, 1.0, 0 });
}

static void free_matrix(struct fast_matrix *m)
{
	free(m->bytes);
	free(m->groups);
	free(m->dsts);
	memset(m, 0, sizeof *m);
}

/* A token matrix of kind k from (src, ndst, dsts..., tokens) records,
 * built group by group with tok.h's builder. */
static void mk_matrix(struct fast_matrix *m, enum fast_traffic_kind k, uint32_t ng,
		      uint64_t token_bytes, const uint32_t *rec, uint32_t ngroups)
{
	struct fast_traffic t;
	uint32_t at = 0;

	tok_init(&t, ng, k, token_bytes);
	for (uint32_t g = 0; g < ngroups; g++) {
		uint32_t n = rec[at + 1];
		tok_group(&t, rec[at], rec[at + 2 + n], n, rec + at + 2);
		at += 3 + n;
	}
	*m = t.m[0];
	memset(&t.m[0], 0, sizeof t.m[0]);
	fast_traffic_free(&t);
	snprintf(m->label, sizeof m->label, "t");
	CU_ASSERT_EQUAL_FATAL(fast_matrix_bytes_from_groups(m, ng, NULL), 0);
}

/* Random groups: up to 40 of them, sources anywhere, 1..min(8, ng)
 * distinct destinations (src among them sometimes), 1..9 tokens. */
static void random_matrix(struct fast_matrix *m, enum fast_traffic_kind k, uint32_t ng,
			  struct fast_rng *rng)
{
	uint32_t ngroups = 1 + (uint32_t)fast_rng_below(rng, 40), *rec, at = 0;
	uint64_t token_bytes = 1 + fast_rng_below(rng, 6);

	rec = calloc((size_t)ngroups * (3 + ng), sizeof *rec);
	for (uint32_t g = 0; g < ngroups; g++) {
		uint32_t kmax = ng < 8 ? ng : 8, n = 1 + (uint32_t)fast_rng_below(rng, kmax), c = 0;
		rec[at] = (uint32_t)fast_rng_below(rng, ng);
		/* n distinct destinations, ascending: a random subset by selection */
		for (uint32_t d = 0; d < ng && c < n; d++)
			if (fast_rng_below(rng, ng - d) < n - c)
				rec[at + 2 + c++] = d;
		rec[at + 1] = n;
		rec[at + 2 + n] = 1 + (uint32_t)fast_rng_below(rng, 9);
		at += 3 + n;
	}
	mk_matrix(m, k, ng, token_bytes, rec, ngroups);
	free(rec);
}

/* sum over g of bytes(g) * |servers(Dest(g)) \ {server(src(g))}| */
static uint64_t dedup_volume(const struct fast_matrix *m, uint32_t G)
{
	uint64_t v = 0;

	for (uint32_t g = 0; g < m->ngroups; g++) {
		const struct fast_group *gr = &m->groups[g];
		uint32_t last = UINT32_MAX;
		for (uint32_t i = 0; i < gr->ndst; i++) {
			uint32_t b = m->dsts[gr->dst0 + i] / G;
			if (b != gr->src / G && b != last)
				v += fast_group_bytes(m, g);
			last = b;
		}
	}
	return v;
}


/* --- a naive reference, independent of lib/check/check.c and lib/plan/plan.c ----------
 * Expands RAIL (lane cursors) and REDIST (the token rules of plan.h) by
 * itself, then walks the steps in id order (the compilers' dependencies
 * point backwards) with holdings (gpu, g, off, len, mask, arrival step):
 * a transfer may send only what its sender held from the start or got in
 * a step it depends on, transitively (pipelining is taken as a full
 * wait, which is stricter). */

struct hold {
	uint32_t gpu, g;
	uint64_t off, len, mask;
	size_t step; /* SIZE_MAX: from the start */
};

struct walk {
	const struct fast_plan *p;
	const struct fast_matrix *m;
	uint32_t G;
	struct hold *h;
	size_t nh, cap;
	bool *anc; /* nsteps x nsteps: anc[s * n + t]: s waits for t, transitively */
	bool ok;
};

static void hold_add(struct walk *w, uint32_t gpu, uint32_t g, uint64_t off, uint64_t len,
		     uint64_t mask, size_t step)
{
	if (w->nh == w->cap) {
		w->cap = w->cap ? 2 * w->cap : 256;
		w->h = realloc(w->h, w->cap * sizeof *w->h);
	}
	w->h[w->nh++] = (struct hold){ gpu, g, off, len, mask, step };
}

/* Does gpu hold every byte of (g, [off, off + len), mask) for step s? */
static bool holds(const struct walk *w, uint32_t gpu, uint32_t g, uint64_t off, uint64_t len,
		  uint64_t mask, size_t s)
{
	size_t n = w->p->nsteps;

	for (uint64_t b = off; b < off + len; b++) {
		bool found = false;
		for (size_t k = 0; k < w->nh && !found; k++) {
			const struct hold *x = &w->h[k];
			found = x->gpu == gpu && x->g == g && x->mask == mask && x->off <= b &&
				b < x->off + x->len && (x->step == SIZE_MAX || w->anc[s * n + x->step]);
		}
		if (!found)
			return false;
	}
	return true;
}

static uint64_t mask_of(const struct walk *w, const struct fast_piece *pc)
{
	return w->m->kind == FAST_TRAFFIC_COMBINE ? w->p->masks[pc->dst] : 0;
}

/* One transfer of step s: from sends pieces pc[0..n) to `to`. */
static void send(struct walk *w, size_t s, uint32_t from, uint32_t to,
		 const struct fast_piece *pc, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		uint64_t mask = mask_of(w, &pc[k]);
		if (!holds(w, from, pc[k].src, pc[k].off, pc[k].len, mask, s)) {
			w->ok = false;
			fprintf(stderr, "step %zu: GPU %u sends g%u [%llu,+%llu) it does not hold\n", s,
				from, pc[k].src, (unsigned long long)pc[k].off,
				(unsigned long long)pc[k].len);
		}
		if (from != to)
			hold_add(w, to, pc[k].src, pc[k].off, pc[k].len, mask, s);
	}
}

/* Expand and walk p; then the end condition of plan.h for its kind. */
static bool naive_check(const struct fast_plan *p, const struct fast_matrix *m, uint32_t G)
{
	size_t n = p->nsteps;
	struct walk w = { p, m, G, NULL, 0, 0, calloc(n * n + 1, sizeof(bool)), true };
	uint64_t *cur = calloc(p->nlanes + 1, sizeof *cur); /* bytes of each lane already sent */
	/* per rail step: what it delivered, (to, piece) */
	struct fast_piece **got = calloc(n + 1, sizeof *got);
	uint32_t **got_to = calloc(n + 1, sizeof *got_to);
	size_t *ngot = calloc(n + 1, sizeof *ngot);
	bool combine = m->kind == FAST_TRAFFIC_COMBINE;

	for (size_t s = 0; s < n; s++) {
		const struct fast_step *st = &p->steps[s];
		for (uint32_t j = 0; j < st->ndeps; j++) {
			size_t t = p->deps[st->dep0 + j].step;
			CU_ASSERT_FATAL(t < s);
			w.anc[s * n + t] = true;
			for (size_t u = 0; u < t; u++)
				w.anc[s * n + u] |= w.anc[t * n + u];
		}
	}
	for (uint32_t g = 0; g < m->ngroups; g++) {
		const struct fast_group *gr = &m->groups[g];
		if (!combine)
			hold_add(&w, gr->src, g, 0, fast_group_bytes(m, g), 0, SIZE_MAX);
		for (uint32_t i = 0; combine && i < gr->ndst; i++)
			hold_add(&w, m->dsts[gr->dst0 + i], g, 0, fast_group_bytes(m, g),
				 UINT64_C(1) << i, SIZE_MAX);
	}
	for (size_t s = 0; s < n; s++) {
		const struct fast_step *st = &p->steps[s];
		if (st->kind == FAST_STEP_EXPLICIT)
			for (uint32_t x = 0; x < st->nxfers; x++) {
				const struct fast_xfer *xf = &p->xfers[st->xfer0 + x];
				send(&w, s, xf->from, xf->to, p->pieces + xf->piece0, xf->npieces);
			}
		if (st->kind == FAST_STEP_REDUCE)
			for (uint32_t x = 0; x < st->nxfers; x++) {
				const struct fast_xfer *xf = &p->xfers[st->xfer0 + x];
				const struct fast_piece *pc = p->pieces + xf->piece0;
				uint64_t u = 0;
				send(&w, s, xf->from, xf->to, pc, xf->npieces);
				for (uint32_t j = 0; j < xf->npieces; j++) {
					if (xf->from != xf->to || pc[j].src != pc[0].src ||
					    pc[j].off != pc[0].off || pc[j].len != pc[0].len ||
					    (u & p->masks[pc[j].dst]))
						w.ok = false;
					u |= p->masks[pc[j].dst];
				}
				hold_add(&w, xf->to, pc[0].src, pc[0].off, pc[0].len, u, s);
			}
		/* a step of several permutations: each in turn, its budget from
		 * where the one before left the lane */
		for (uint32_t q = 0; st->kind == FAST_STEP_RAIL && q < st->nperms; q++) {
			const uint32_t *perm = p->perm + st->perm0 + (size_t)q * p->servers;
			uint64_t budget = p->budgets[st->budget0 + q];
			for (uint32_t a = 0; a < p->servers; a++)
				for (uint32_t i = 0; i < G && perm[a] != a; i++)
					for (size_t l = 0; l < p->nlanes; l++) {
						const struct fast_lane *ln = &p->lanes[l];
						uint64_t pos = 0, lo = cur[l], hi = cur[l] + budget;
						uint32_t from = a * G + i, to = perm[a] * G + i;
						if (ln->src_server != a || ln->dst_server != perm[a] ||
						    ln->rail != i)
							continue;
						for (uint32_t j = 0; j < ln->npieces; j++) {
							struct fast_piece pc = p->pieces[ln->piece0 + j];
							uint64_t b0 = pos > lo ? pos : lo;
							uint64_t b1 = pos + pc.len < hi ? pos + pc.len : hi;
							pos += pc.len;
							if (b0 >= b1)
								continue;
							pc.off += b0 - (pos - pc.len);
							pc.len = b1 - b0;
							send(&w, s, from, to, &pc, 1);
							got[s] = realloc(got[s], (ngot[s] + 1) * sizeof **got);
							got_to[s] = realloc(got_to[s], (ngot[s] + 1) * sizeof **got_to);
							got[s][ngot[s]] = pc;
							got_to[s][ngot[s]++] = to;
						}
						cur[l] = hi < ln->bytes ? hi : ln->bytes;
					}
		}
		if (st->kind == FAST_STEP_REDIST)
			for (size_t k = 0; k < ngot[st->stage]; k++) {
				const struct fast_piece *pc = &got[st->stage][k];
				const struct fast_group *gr = &m->groups[pc->src];
				uint32_t rx = got_to[st->stage][k];
				if (combine && rx != gr->src)
					send(&w, s, rx, gr->src, pc, 1);
				for (uint32_t i = 0; !combine && i < gr->ndst; i++) {
					uint32_t d = m->dsts[gr->dst0 + i];
					if (d / G == rx / G && d != rx)
						send(&w, s, rx, d, pc, 1);
				}
			}
	}
	for (size_t l = 0; l < p->nlanes; l++)
		if (cur[l] != p->lanes[l].bytes)
			w.ok = false;
	/* the end: dispatch, every destination holds every byte; combine,
	 * the masks src received (and its own) partition Dest(g), per byte */
	for (uint32_t g = 0; g < m->ngroups && w.ok; g++) {
		const struct fast_group *gr = &m->groups[g];
		uint64_t all = gr->ndst == 64 ? UINT64_MAX : (UINT64_C(1) << gr->ndst) - 1;
		for (uint64_t b = 0; b < fast_group_bytes(m, g) && w.ok; b++) {
			uint64_t u = 0;
			for (uint32_t i = 0; !combine && i < gr->ndst; i++) {
				bool found = false;
				for (size_t k = 0; k < w.nh && !found; k++)
					found = w.h[k].gpu == m->dsts[gr->dst0 + i] && w.h[k].g == g &&
						w.h[k].off <= b && b < w.h[k].off + w.h[k].len;
				w.ok = w.ok && found;
			}
			for (size_t k = 0; combine && k < w.nh; k++) {
				const struct hold *x = &w.h[k];
				bool own = x->step == SIZE_MAX;
				if (x->gpu != gr->src || x->g != g || b < x->off || b >= x->off + x->len)
					continue;
				/* received pieces, and the initial own contribution */
				if (!own && p->steps[x->step].kind == FAST_STEP_REDUCE)
					continue; /* a sum at src is not allowed; none is made */
				if (u & x->mask)
					w.ok = false;
				u |= x->mask;
			}
			if (combine && u != all)
				w.ok = false;
		}
	}
	for (size_t s = 0; s < n; s++) {
		free(got[s]);
		free(got_to[s]);
	}
	free(got);
	free(got_to);
	free(ngot);
	free(cur);
	free(w.anc);
	free(w.h);
	return w.ok;
}

/* Scale-out bytes of a compact plan whose lanes are all sent: its lanes
 * and its `out` transfers. */
static uint64_t naive_bytes_out(const struct fast_plan *p)
{
	uint64_t v = 0;

	for (size_t l = 0; l < p->nlanes; l++)
		v += p->lanes[l].bytes;
	for (size_t s = 0; s < p->nsteps; s++)
		for (uint32_t x = 0; p->steps[s].tier == FAST_TIER_OUT && x < p->steps[s].nxfers; x++)
			v += p->xfers[p->steps[s].xfer0 + x].bytes;
	return v;
}

/* Compile, check, and return bytes_out (UINT64_MAX on a failure, which
 * the asserts report). */
static uint64_t compile_checked(const char *algo, const struct fast_topo *t,
				const struct fast_matrix *m, const struct fast_algo_opts *o,
				enum fast_traffic_kind want_kind)
{
	struct fast_plan p;
	struct fast_plan_summary s;
	struct fast_err err;
	uint64_t out = UINT64_MAX;

	if (fast_compile(algo, t, m, o, &p, &err) != 0) {
		CU_FAIL("compile failed");
		fprintf(stderr, "%s: %s\n", algo, err.msg);
		return out;
	}
	CU_ASSERT_EQUAL(p.kind, want_kind);
	if (unit_check_matrix(&p, t, m, &err) != 0) {
		CU_FAIL("plan fails the checker");
		fprintf(stderr, "%s %s on %ux%u: %s\n", algo, fast_traffic_kind_name(m->kind),
			t->servers, t->gpus, err.msg);
	} else if (p.kind == FAST_TRAFFIC_BYTES) {
		if (
		    unit_summarize(&p, &s, NULL, &err) != 0) {
			CU_FAIL("byte plan fails the checker");
			fprintf(stderr, "%s: %s\n", algo, err.msg);
		} else {
			out = s.bytes_out;
		}
	} else if (!naive_check(&p, m, t->gpus)) {
		CU_FAIL("token plan fails the naive check");
		fprintf(stderr, "%s %s on %ux%u\n", algo, fast_traffic_kind_name(m->kind), t->servers,
			t->gpus);
	} else {
		/* the library's view: validation, expansion over the groups and
		 * the summary; its explicit form passes the naive walk too */
		struct fast_plan_view v;
		CU_ASSERT_EQUAL_FATAL(fast_plan_view_open(&v, &p, m, &err), 0);
		CU_ASSERT(naive_check(v.x, m, t->gpus));
		CU_ASSERT_EQUAL(fast_plan_summarize(&v, &s, NULL, &err), 0);
		CU_ASSERT_EQUAL(s.bytes_out, naive_bytes_out(&p));
		out = s.bytes_out;
		fast_plan_view_close(&v);
	}
	fast_plan_free(&p);
	return out;
}

static void test_tokens__random_dedup_plans_check_and_cross_once(void)
{
	static const uint32_t sizes[][2] = { { 1, 1 }, { 1, 4 }, { 2, 1 }, { 2, 2 }, { 3, 2 },
					     { 2, 8 }, { 4, 4 }, { 6, 3 }, { 5, 8 } };
	struct fast_rng rng;

	fast_rng_seed(&rng, 15);
	for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++)
		for (int rep = 0; rep < 4; rep++)
			for (int k = FAST_TRAFFIC_DISPATCH; k <= FAST_TRAFFIC_COMBINE; k++) {
				struct fast_topo t = mk_topo(sizes[z][0], sizes[z][1]);
				struct fast_matrix m;
				struct fast_algo_opts o;
				uint64_t v;
				random_matrix(&m, (enum fast_traffic_kind)k, t.servers * t.gpus, &rng);
				v = dedup_volume(&m, t.gpus);
				fast_algo_opts_default(&o);
				CU_ASSERT_EQUAL(compile_checked("fast", &t, &m, &o, m.kind), v);
				CU_ASSERT_EQUAL(compile_checked("hier", &t, &m, &o, m.kind), v);
				o.chunk_bytes = 1 + fast_rng_below(&rng, 9000); /* many rounds */
				CU_ASSERT_EQUAL(compile_checked("hier", &t, &m, &o, m.kind), v);
				o.stages = FAST_STAGES_EXACT;
				o.balance = FAST_BALANCE_UPFRONT;
				CU_ASSERT_EQUAL(compile_checked("fast", &t, &m, &o, m.kind), v);
				free_matrix(&m);
			}
}

/* Server 1 of a 2 x 4 cluster holds the experts of GPU 0's tokens: with
 * dedup a group crosses once, without it once per destination GPU. */
static void test_tokens__hand_built_dedup_factor(void)
{
	static const uint32_t rec[] = {
		0, 3, 4, 5, 6, 10,  /* 10 tokens of GPU 0 to three GPUs of server 1 */
		0, 2, 1, 7, 4,      /* 4 tokens: one local, one remote */
		3, 2, 3, 4, 2,      /* 2 tokens: src itself and one remote */
		5, 2, 0, 1, 1,      /* 1 token of server 1 to two GPUs of server 0 */
	};
	struct fast_topo t = mk_topo(2, 4);
	struct fast_algo_opts o;

	fast_algo_opts_default(&o);
	for (int k = FAST_TRAFFIC_DISPATCH; k <= FAST_TRAFFIC_COMBINE; k++) {
		struct fast_matrix m;
		mk_matrix(&m, (enum fast_traffic_kind)k, 8, 100, rec, 4);
		CU_ASSERT_EQUAL(dedup_volume(&m, 4), (10 + 4 + 2 + 1) * 100);
		CU_ASSERT_EQUAL(compile_checked("fast", &t, &m, &o, m.kind), 1700);
		CU_ASSERT_EQUAL(compile_checked("hier", &t, &m, &o, m.kind), 1700);
		o.dedup = FAST_DEDUP_GPU;
		CU_ASSERT_EQUAL(compile_checked("fast", &t, &m, &o, FAST_TRAFFIC_BYTES),
				(30 + 4 + 2 + 2) * 100);
		CU_ASSERT_EQUAL(compile_checked("hier", &t, &m, &o, FAST_TRAFFIC_BYTES),
				(30 + 4 + 2 + 2) * 100);
		o.dedup = FAST_DEDUP_SERVER;
		free_matrix(&m);
	}
}

/* Combine sums inside the expert server: the REDUCE steps sum on one GPU
 * disjoint contributions of one group and range; a group with three
 * contributions on server 1 is summed there (one REDUCE transfer of three
 * inputs per range) before it crosses. */
static void test_tokens__combine_reduces_before_crossing(void)
{
	static const uint32_t rec[] = { 0, 3, 4, 5, 6, 10 };
	struct fast_topo t = mk_topo(2, 4);
	struct fast_matrix m;
	const char *algos[] = { "fast", "hier" };

	mk_matrix(&m, FAST_TRAFFIC_COMBINE, 8, 100, rec, 1);
	for (int a = 0; a < 2; a++) {
		struct fast_plan p;
		struct fast_err err;
		uint64_t reduced = 0;
		CU_ASSERT_EQUAL_FATAL(fast_compile(algos[a], &t, &m, NULL, &p, &err), 0);
		for (size_t s = 0; s < p.nsteps; s++) {
			const struct fast_step *st = &p.steps[s];
			if (st->kind != FAST_STEP_REDUCE)
				continue;
			for (uint32_t x = 0; x < st->nxfers; x++) {
				const struct fast_xfer *xf = &p.xfers[st->xfer0 + x];
				uint64_t seen = 0;
				CU_ASSERT_EQUAL(xf->from, xf->to);
				CU_ASSERT_EQUAL(xf->from / 4, 1);
				CU_ASSERT_EQUAL(xf->npieces, 3);
				for (uint32_t j = 0; j < xf->npieces; j++) {
					const struct fast_piece *pc = &p.pieces[xf->piece0 + j];
					CU_ASSERT_EQUAL(pc->len, p.pieces[xf->piece0].len);
					CU_ASSERT_EQUAL(pc->off, p.pieces[xf->piece0].off);
					CU_ASSERT_EQUAL(seen & p.masks[pc->dst], 0);
					seen |= p.masks[pc->dst];
				}
				CU_ASSERT_EQUAL(seen, 7);
				reduced += p.pieces[xf->piece0].len;
			}
		}
		CU_ASSERT_EQUAL(reduced, 1000); /* every byte summed once */
		CU_ASSERT(naive_check(&p, &m, 4));
		CU_ASSERT_EQUAL(unit_check_matrix(&p, &t, &m, &err), 0);
		fast_plan_free(&p);
	}
	free_matrix(&m);
}

/* The other baselines, and fast/hier with dedup=gpu, serve the per-GPU
 * byte matrix: a BYTES plan that records "dedup=gpu"; on byte traffic
 * nothing is appended. */
static void test_tokens__byte_baselines_record_it(void)
{
	static const uint32_t rec[] = { 0, 3, 4, 5, 6, 10, 5, 2, 0, 1, 1 };
	const char *algos[] = { "fanout", "nccl", "pxn", "spreadout", "auto" };
	struct fast_topo t = mk_topo(2, 4);
	struct fast_matrix m;
	struct fast_err err;

	mk_matrix(&m, FAST_TRAFFIC_DISPATCH, 8, 100, rec, 2);
	for (size_t a = 0; a < sizeof algos / sizeof algos[0]; a++) {
		struct fast_plan p;
		const char *o;
		CU_ASSERT_EQUAL(compile_checked(algos[a], &t, &m, NULL, FAST_TRAFFIC_BYTES),
				(30 + 2) * 100);
		CU_ASSERT_EQUAL_FATAL(fast_compile(algos[a], &t, &m, NULL, &p, &err), 0);
		o = strstr(p.options, "dedup=gpu");
		CU_ASSERT_PTR_NOT_NULL(o);
		CU_ASSERT(o && o[strlen("dedup=gpu")] == '\0');
		fast_plan_free(&p);
	}
	m.kind = FAST_TRAFFIC_BYTES; /* the same bytes as a byte matrix */
	for (size_t a = 0; a < sizeof algos / sizeof algos[0]; a++) {
		struct fast_plan p;
		CU_ASSERT_EQUAL_FATAL(fast_compile(algos[a], &t, &m, NULL, &p, &err), 0);
		CU_ASSERT_PTR_NULL(strstr(p.options, "dedup"));
		CU_ASSERT_EQUAL(p.kind, FAST_TRAFFIC_BYTES);
		fast_plan_free(&p);
	}
	free_matrix(&m);
}

/* The naive reference can fail: a plan whose last stage is cut short, or
 * whose combine loses a contribution, is refused. */
static void test_tokens__naive_check_refuses_mutants(void)
{
	static const uint32_t rec[] = { 0, 3, 4, 5, 6, 10, 0, 2, 1, 7, 4, 5, 2, 0, 1, 1 };
	struct fast_topo t = mk_topo(2, 4);

	for (int k = FAST_TRAFFIC_DISPATCH; k <= FAST_TRAFFIC_COMBINE; k++) {
		struct fast_matrix m;
		struct fast_plan p;
		struct fast_err err;
		mk_matrix(&m, (enum fast_traffic_kind)k, 8, 3, rec, 3);
		for (int mut = 0; mut < 3; mut++) {
			const char *algo = mut == 2 ? "hier" : "fast";
			bool done = false;
			CU_ASSERT_EQUAL_FATAL(fast_compile(algo, &t, &m, NULL, &p, &err), 0);
			CU_ASSERT(naive_check(&p, &m, 4));
		CU_ASSERT_EQUAL(unit_check_matrix(&p, &t, &m, &err), 0);
			for (size_t s = p.nsteps; s-- > 0 && !done;) {
				struct fast_step *st = &p.steps[s];
				if (mut == 0 && st->kind == FAST_STEP_RAIL &&
				    p.budgets[st->budget0 + st->nperms - 1] > 1) {
					p.budgets[st->budget0 + st->nperms - 1]--; /* the last stage, a byte short */
					done = true;
				} else if (mut > 0 && st->kind == FAST_STEP_EXPLICIT &&
					   st->nxfers > 0 && p.xfers[st->xfer0].npieces > 0 &&
					   p.pieces[p.xfers[st->xfer0].piece0].len > 1) {
					p.pieces[p.xfers[st->xfer0].piece0].len--;
					done = true;
				}
			}
			CU_ASSERT(done);
			CU_ASSERT(!naive_check(&p, &m, 4));
			CU_ASSERT_EQUAL(unit_check_matrix(&p, &t, &m, &err), FAST_ECHECK);
			fast_plan_free(&p);
		}
		free_matrix(&m);
	}
}

/* The synthetic router (lib/workload/gen.c, token groups), skewed (alpha 1.2) and
 * balanced, 2-4 servers x 4-8 GPUs: dispatch and combine plans of fast
 * and hier pass the checkers and cross the dedup volume exactly; fast
 * with dedup moves fewer scale-out bytes than fast on the per-GPU bytes
 * (top-6 of 4 experts per GPU: every one of these traffics has tokens
 * with two destinations on one remote server). */
static void test_tokens__synthetic_router(void)
{
	static const uint32_t sizes[][2] = { { 2, 4 }, { 4, 4 }, { 3, 8 } };
	struct fast_limits lim;

	fast_limits_default(&lim);
	for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++)
		for (int skew = 0; skew < 2; skew++) {
			struct fast_topo t = mk_topo(sizes[z][0], sizes[z][1]);
			struct fast_gen_opts g;
			struct fast_traffic tr;
			struct fast_err err;
			fast_gen_defaults(&g);
			g.pattern = FAST_GEN_MOE;
			g.ng = t.servers * t.gpus;
			g.seed = 3 + z;
			g.moe.tokens = 24;
			g.moe.topk = 6;
			g.moe.experts = 4 * g.ng;
			g.moe.alpha = skew ? 1.2 : 0;
			g.moe.token_bytes = 5;
			g.moe.groups = true;
			CU_ASSERT_EQUAL_FATAL(fast_gen_traffic(&g, &lim, &tr, &err), 0);
			CU_ASSERT_EQUAL(tr.count, 2);
			for (uint32_t i = 0; i < tr.count; i++) {
				const struct fast_matrix *m = &tr.m[i];
				struct fast_algo_opts o;
				uint64_t v = dedup_volume(m, t.gpus), gpu;
				CU_ASSERT(m->kind == FAST_TRAFFIC_DISPATCH || m->kind == FAST_TRAFFIC_COMBINE);
				fast_algo_opts_default(&o);
				CU_ASSERT_EQUAL(compile_checked("fast", &t, m, &o, m->kind), v);
				CU_ASSERT_EQUAL(compile_checked("hier", &t, m, &o, m->kind), v);
				o.dedup = FAST_DEDUP_GPU;
				gpu = compile_checked("fast", &t, m, &o, FAST_TRAFFIC_BYTES);
				CU_ASSERT(gpu > v);
			}
			fast_traffic_free(&tr);
		}
}

/* A token matrix without groups (nothing to send), and one whose tokens
 * all stay on their server: plans with nothing crossing, for both. */
static void test_tokens__nothing_crosses(void)
{
	static const uint32_t rec[] = { 0, 2, 0, 1, 3, 3, 1, 2, 1 };
	struct fast_topo t = mk_topo(2, 2);

	for (int k = FAST_TRAFFIC_DISPATCH; k <= FAST_TRAFFIC_COMBINE; k++)
		for (uint32_t n = 0; n < 3; n += 2) {
			struct fast_matrix m;
			mk_matrix(&m, (enum fast_traffic_kind)k, 4, 8, rec, n);
			CU_ASSERT_EQUAL(compile_checked("fast", &t, &m, NULL, m.kind), 0);
			CU_ASSERT_EQUAL(compile_checked("hier", &t, &m, NULL, m.kind), 0);
			free_matrix(&m);
		}
}

UNIT_MAIN("tokens",
	  UNIT_TEST(test_tokens__nothing_crosses),
	  UNIT_TEST(test_tokens__synthetic_router),
	  UNIT_TEST(test_tokens__naive_check_refuses_mutants),
	  UNIT_TEST(test_tokens__random_dedup_plans_check_and_cross_once),
	  UNIT_TEST(test_tokens__hand_built_dedup_factor),
	  UNIT_TEST(test_tokens__combine_reduces_before_crossing),
	  UNIT_TEST(test_tokens__byte_baselines_record_it))
