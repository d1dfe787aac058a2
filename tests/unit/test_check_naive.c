/*
 * test_check_naive.c - the plan checker against naive per-byte references:
 * random byte plans on one server (direct or relayed messages, deps dropped
 * or flipped) and random token plans (dispatch forwarding trees, combine
 * partial sums, in chunks, then perturbed); the checker and the reference
 * must agree on every verdict, and each verdict must occur.
 */
#include <CUnit/Basic.h>

#include "unit.h"
#include <stdlib.h>
#include <string.h>

#include "fast/check.h"
#include "check_fix.h"
#include "tok.h"

/* --- the checker against a naive reference ------------------------------ */

#define RN 6  /* steps */
#define RB 8  /* bytes per message */

/* level[u]: 2 if step t reaches u through a path with a whole-step edge,
 * 1 if only through pipelined paths, 0 if not at all (plain DFS) */
static void naive_reach(const struct fast_plan *p, uint32_t t, int *level)
{
	int seen[RN][2] = { { 0 } };
	uint32_t stack[4 * RN * RN][2];
	int top = 0;
	memset(level, 0, RN * sizeof *level);
	stack[top][0] = t;
	stack[top++][1] = 0;
	while (top) {
		top--;
		uint32_t v = stack[top][0], full = stack[top][1];
		const struct fast_step *s = &p->steps[v];
		for (uint32_t j = 0; j < s->ndeps; j++) {
			uint32_t u = p->deps[s->dep0 + j].step;
			uint32_t f = full || !p->deps[s->dep0 + j].pipelined;
			if (seen[u][f])
				continue;
			seen[u][f] = 1;
			if ((int)(f + 1) > level[u])
				level[u] = (int)f + 1;
			stack[top][0] = u;
			stack[top++][1] = f;
		}
	}
}

static uint32_t naive_chunk(uint64_t L, uint32_t k, uint64_t pos)
{
	for (uint32_t c = 0; c < k; c++)
		if ((c * L) / k <= pos && pos < ((c + 1) * L) / k)
			return c;
	return UINT32_MAX;
}

/* 0 correct, 1 a send of bytes not held, 2 a delivery defect */
static int naive_check(const struct fast_plan *p)
{
	int count[NG][NG][RB] = { { { 0 } } };
	for (uint32_t t = 0; t < p->nsteps; t++) {
		const struct fast_step *s = &p->steps[t];
		int level[RN];
		naive_reach(p, t, level);
		for (uint32_t j = 0; j < s->nxfers; j++) {
			const struct fast_xfer *x = &p->xfers[s->xfer0 + j];
			uint64_t pos = 0;
			for (uint32_t k = 0; k < x->npieces; k++) {
				const struct fast_piece *pc = &p->pieces[x->piece0 + k];
				for (uint64_t b = pc->off; b < pc->off + pc->len; b++, pos++) {
					uint32_t c = naive_chunk(x->bytes, s->chunks, pos);
					bool held = pc->src == x->from;
					/* any arrival of byte b at x->from usable here? */
					for (uint32_t u = 0; u < p->nsteps && !held; u++) {
						const struct fast_step *su = &p->steps[u];
						if (!level[u])
							continue;
						for (uint32_t j2 = 0; j2 < su->nxfers && !held; j2++) {
							const struct fast_xfer *y = &p->xfers[su->xfer0 + j2];
							uint64_t pos2 = 0;
							for (uint32_t k2 = 0; k2 < y->npieces; k2++) {
								const struct fast_piece *q = &p->pieces[y->piece0 + k2];
								if (y->to == x->from && q->src == pc->src &&
								    q->dst == pc->dst && q->off <= b &&
								    b < q->off + q->len) {
									uint32_t cu = naive_chunk(y->bytes, su->chunks,
												  pos2 + b - q->off);
									if (level[u] == 2 || cu <= c)
										held = true;
								}
								pos2 += q->len;
							}
						}
					}
					if (!held)
						return 1;
				}
			}
		}
	}
	for (uint32_t t = 0; t < p->nsteps; t++) {
		const struct fast_step *s = &p->steps[t];
		for (uint32_t j = 0; j < s->nxfers; j++) {
			const struct fast_xfer *x = &p->xfers[s->xfer0 + j];
			for (uint32_t k = 0; k < x->npieces; k++) {
				const struct fast_piece *pc = &p->pieces[x->piece0 + k];
				if (x->to == pc->dst)
					for (uint64_t b = pc->off; b < pc->off + pc->len; b++)
						count[pc->src][pc->dst][b]++;
			}
		}
	}
	for (int a = 0; a < NG; a++)
		for (int b = 0; b < NG; b++)
			for (int i = 0; i < RB; i++)
				if (a != b && count[a][b][i] != 1)
					return 2;
	return 0;
}

struct rxf {
	uint32_t from, to, src, dst;
	uint64_t off, len;
};

/* Random plans on one server of 4 GPUs: every message routed directly or
 * through a relay in 1-2 pieces, relays waiting (pipelined or not) for the
 * step that brings their bytes, then deps dropped or flipped at random;
 * the checker and the naive reference must agree on the verdict. */
static void test_check__agrees_with_naive_reference(void)
{
	struct fast_rng rng;
	struct fast_topo t = topo2x2();
	int verdicts[3] = { 0, 0, 0 };
	t.servers = 1;
	t.gpus = NG;
	fast_rng_seed(&rng, 11);
	for (int iter = 0; iter < 400; iter++) {
		uint64_t D[NG * NG];
		struct fast_plan p;
		struct fast_err err;
		uint32_t chunks[RN];
		/* per step: up to 12 transfers of one piece each, staged here */
		struct rxf xf[RN][16];
		int nx[RN] = { 0 };
		bool dep[RN][RN] = { { false } }, pipe[RN][RN] = { { false } };

		for (int i = 0; i < NG * NG; i++)
			D[i] = i % (NG + 1) ? RB : 0;
		for (int k = 0; k < RN; k++)
			chunks[k] = 1 + (uint32_t)fast_rng_below(&rng, 3);
		for (uint32_t a = 0; a < NG; a++)
			for (uint32_t b = 0; b < NG; b++) {
				if (a == b)
					continue;
				uint64_t cut = fast_rng_below(&rng, 2) ? 1 + fast_rng_below(&rng, RB - 1) : RB;
				for (uint64_t off = 0; off < RB; off = cut, cut = RB) {
					uint32_t relay = (uint32_t)fast_rng_below(&rng, NG);
					uint32_t s1 = (uint32_t)fast_rng_below(&rng, RN - 1);
					if (relay == a || relay == b || nx[s1] == 16) {
						if (nx[s1] < 16)
							xf[s1][nx[s1]++] = (struct rxf){ a, b, a, b, off, cut - off };
						continue;
					}
					uint32_t s2 = s1 + 1 + (uint32_t)fast_rng_below(&rng, RN - 1 - s1);
					if (nx[s2] == 16)
						continue;
					xf[s1][nx[s1]++] = (struct rxf){ a, relay, a, b, off, cut - off };
					xf[s2][nx[s2]++] = (struct rxf){ relay, b, a, b, off, cut - off };
					dep[s2][s1] = true;
					if (chunks[s2] == chunks[s1] && fast_rng_below(&rng, 2))
						pipe[s2][s1] = true;
				}
			}
		/* perturb: drop, add or flip deps (only towards lower ids: acyclic) */
		for (int x = 0; x < RN; x++)
			for (int y = 0; y < x; y++) {
				uint64_t r = fast_rng_below(&rng, 20);
				if (r == 0)
					dep[x][y] = false;
				else if (r == 1)
					dep[x][y] = true;
				else if (r == 2 && chunks[x] == chunks[y])
					pipe[x][y] = !pipe[x][y];
			}
		fast_plan_init(&p, 1, NG, "x");
		for (uint32_t k = 0; k < RN; k++) {
			OK(fast_plan_add_step(&p, FAST_STEP_EXPLICIT, FAST_TIER_UP, &err));
			OK(fast_plan_set_chunks(&p, chunks[k], &err));
			for (uint32_t y = 0; y < k; y++)
				if (dep[k][y])
					OK(fast_plan_add_dep(&p, k, y, pipe[k][y], &err));
			/* shuffle, then merge runs of equal (from, to) into one
			 * transfer: pieces then sit at different stream offsets
			 * (and chunks) in the arrival and the forwarding step */
			for (int i = nx[k] - 1; i > 0; i--) {
				int r = (int)fast_rng_below(&rng, (uint64_t)i + 1);
				struct rxf tmp = xf[k][i];
				xf[k][i] = xf[k][r];
				xf[k][r] = tmp;
			}
			for (int i = 0; i < nx[k]; i++) {
				int lead = -1;
				for (int h = 0; h < i; h++)
					if (xf[k][h].from == xf[k][i].from && xf[k][h].to == xf[k][i].to)
						lead = h;
				if (lead >= 0)
					continue; /* added with its group below */
				OK(fast_plan_add_xfer(&p, xf[k][i].from, xf[k][i].to, &err));
				OK(fast_plan_add_piece(&p, xf[k][i].src, xf[k][i].dst, xf[k][i].off,
						       xf[k][i].len, &err));
				for (int h = i + 1; h < nx[k]; h++)
					if (xf[k][h].from == xf[k][i].from && xf[k][h].to == xf[k][i].to)
						OK(fast_plan_add_piece(&p, xf[k][h].src, xf[k][h].dst,
								       xf[k][h].off, xf[k][h].len, &err));
				/* sometimes a second piece in the same transfer: a
				 * different message the sender owns, or a duplicate */
				if (xf[k][i].from == xf[k][i].src && fast_rng_below(&rng, 8) == 0)
					OK(fast_plan_add_piece(&p, xf[k][i].src, xf[k][i].dst, 0, 1, &err));
			}
		}
		int want = naive_check(&p);
		memset(&err, 0, sizeof err);
		int rc = unit_check(&p, &t, D, &err);
		int got = rc == 0 ? 0 : strstr(err.msg, "does not hold") ? 1 : 2;
		CU_ASSERT_EQUAL(rc == 0 || rc == FAST_ECHECK, true);
		CU_ASSERT_EQUAL(got, want);
		if (got != want)
			fprintf(stderr, "\n  iter %d: naive %d, checker %d: %s\n", iter, want, got,
				err.msg);
		verdicts[want]++;
		fast_plan_free(&p);
	}
	/* the generator exercises all three verdicts */
	if (getenv("FAST_TEST_VERBOSE"))
		fprintf(stderr, "\n  verdicts %d %d %d\n", verdicts[0], verdicts[1], verdicts[2]);
	CU_ASSERT(verdicts[0] > 20 && verdicts[1] > 20 && verdicts[2] > 20);
	if (!(verdicts[0] > 20 && verdicts[1] > 20 && verdicts[2] > 20))
		fprintf(stderr, "\n  verdicts %d %d %d\n", verdicts[0], verdicts[1], verdicts[2]);
}

/* --- token plans against a naive reference ------------------------------------ */

#define RT 9  /* steps of a random token plan */
#define RG 3  /* groups */
#define RS 32 /* sends (or sums) per step */

/* a send (from -> to) or, in a reduce step, one input of the sum at `to`
 * (from == to; the inputs of one sum share `sum`) */
struct tsend {
	uint32_t from, to, g, sum;
	uint64_t off, len, mask;
};

struct tgen {
	struct fast_rng *rng;
	bool combine;
	struct tsend x[RT][RS];
	int n[RT], nsums[RT];
	bool dep[RT][RT], pipe[RT][RT];
	uint32_t chunks[RT];
};

static bool treduce(const struct tgen *G, int k)
{
	return G->combine && k % 3 == 2;
}

/* a random step after `after` of the kind wanted, -1 when there is none */
static int tnext(struct tgen *G, int after, bool reduce)
{
	int cand[RT], n = 0;
	for (int k = after + 1; k < RT; k++)
		if (treduce(G, k) == reduce && G->n[k] < RS - 4)
			cand[n++] = k;
	return n ? cand[fast_rng_below(G->rng, (uint64_t)n)] : -1;
}

static int tsend(struct tgen *G, int after, uint32_t from, uint32_t to, uint32_t g, uint64_t off,
		 uint64_t len, uint64_t mask)
{
	int k = tnext(G, after, false);
	if (k < 0)
		return -1;
	G->x[k][G->n[k]++] = (struct tsend){ from, to, g, 0, off, len, mask };
	if (after >= 0)
		G->dep[k][after] = true;
	return k;
}

/* dispatch of group g's bytes [off, off+len): a random forwarding tree
 * from src(g) to every destination, some hops through a relay, some
 * destinations served twice */
static void tgen_dispatch(struct tgen *G, const struct fast_matrix *m, uint32_t g, uint64_t off,
			  uint64_t len)
{
	const struct fast_group *gr = &m->groups[g];
	uint32_t hg[2 * NG + 2];
	int hs[2 * NG + 2], nh = 1;

	hg[0] = gr->src;
	hs[0] = -1;
	for (uint32_t i = 0; i < gr->ndst; i++) {
		uint32_t d = m->dsts[gr->dst0 + i];
		int h = (int)fast_rng_below(G->rng, (uint64_t)nh), k;
		if (d == gr->src)
			continue;
		if (hg[h] == d)
			h = 0;
		if (fast_rng_below(G->rng, 3) == 0) {
			uint32_t r = (uint32_t)fast_rng_below(G->rng, NG);
			if (r == hg[h] || r == d || (k = tsend(G, hs[h], hg[h], r, g, off, len, 0)) < 0)
				continue;
			hg[nh] = r;
			hs[nh++] = k;
			h = nh - 1;
		}
		if ((k = tsend(G, hs[h], hg[h], d, g, off, len, 0)) < 0)
			continue;
		hg[nh] = d;
		hs[nh++] = k;
		if (fast_rng_below(G->rng, 8) == 0) /* replication: once more */
			tsend(G, hs[h], hg[h], d, g, off, len, 0);
	}
}

/* combine of group g's bytes [off, off+len): contributions merged in
 * random partial sums (a value moved to another's GPU, then summed there
 * by a reduce step), the results sent to src(g), some through a relay */
static void tgen_combine(struct tgen *G, const struct fast_matrix *m, uint32_t g, uint64_t off,
			 uint64_t len)
{
	const struct fast_group *gr = &m->groups[g];
	uint32_t vg[NG];
	int vs[NG], nv = 0, k;
	uint64_t vm[NG];

	for (uint32_t i = 0; i < gr->ndst; i++)
		if (m->dsts[gr->dst0 + i] != gr->src) {
			vg[nv] = m->dsts[gr->dst0 + i];
			vs[nv] = -1;
			vm[nv++] = UINT64_C(1) << i;
		}
	while (nv > 1 && fast_rng_below(G->rng, 3) != 0) {
		int a = (int)fast_rng_below(G->rng, (uint64_t)nv), b = (a + 1) % nv;
		if (vg[a] == gr->src)
			break;
		if (vg[b] != vg[a]) {
			if ((k = tsend(G, vs[b], vg[b], vg[a], g, off, len, vm[b])) < 0)
				break;
			vs[b] = k;
		}
		int r = tnext(G, vs[a] > vs[b] ? vs[a] : vs[b], true);
		if (r < 0)
			break;
		uint32_t id = (uint32_t)G->nsums[r]++;
		G->x[r][G->n[r]++] = (struct tsend){ vg[a], vg[a], g, id, off, len, vm[a] };
		G->x[r][G->n[r]++] = (struct tsend){ vg[a], vg[a], g, id, off, len, vm[b] };
		if (vs[a] >= 0)
			G->dep[r][vs[a]] = true;
		if (vs[b] >= 0)
			G->dep[r][vs[b]] = true;
		vs[a] = r;
		vm[a] |= vm[b];
		vg[b] = vg[nv - 1];
		vs[b] = vs[nv - 1];
		vm[b] = vm[nv - 1];
		nv--;
	}
	for (int v = 0; v < nv; v++) {
		uint32_t at = vg[v];
		int s = vs[v];
		if (fast_rng_below(G->rng, 3) == 0) {
			uint32_t r = (uint32_t)fast_rng_below(G->rng, NG);
			if (r != at && r != gr->src && (k = tsend(G, s, at, r, g, off, len, vm[v])) >= 0) {
				at = r;
				s = k;
			}
		}
		tsend(G, s, at, gr->src, g, off, len, vm[v]);
	}
}

/* the plan of G: explicit steps tier out (sends of one (from, to) pair in
 * one transfer), reduce steps tier up (a transfer per sum) */
static void tgen_plan(const struct tgen *G, struct fast_plan *p)
{
	struct fast_err err;

	fast_plan_init(p, 2, 2, "test");
	p->kind = G->combine ? FAST_TRAFFIC_COMBINE : FAST_TRAFFIC_DISPATCH;
	for (int k = 0; k < RT; k++) {
		bool red = treduce(G, k);
		OK(fast_plan_add_step(p, red ? FAST_STEP_REDUCE : FAST_STEP_EXPLICIT,
				      red ? FAST_TIER_UP : FAST_TIER_OUT, &err));
		OK(fast_plan_set_chunks(p, G->chunks[k], &err));
		for (int y = 0; y < k; y++)
			if (G->dep[k][y])
				OK(fast_plan_add_dep(p, (uint32_t)k, (uint32_t)y,
						     G->pipe[k][y] && G->chunks[k] == G->chunks[y], &err));
		bool done[RS] = { false };
		for (int i = 0; i < G->n[k]; i++) {
			if (done[i])
				continue;
			OK(fast_plan_add_xfer(p, G->x[k][i].from, G->x[k][i].to, &err));
			for (int h = i; h < G->n[k]; h++) {
				const struct tsend *a = &G->x[k][i], *b = &G->x[k][h];
				if (done[h] || a->from != b->from || a->to != b->to ||
				    (red && a->sum != b->sum))
					continue;
				uint32_t mk = 0;
				if (G->combine) {
					int r = fast_plan_add_mask(p, b->mask, &err);
					OK(r);
					mk = (uint32_t)r;
				}
				OK(fast_plan_add_piece(p, b->g, mk, b->off, b->len, &err));
				done[h] = true;
			}
		}
	}
}

/* The naive reference, per byte, from the plan alone and the groups:
 * 0 correct, 1 a send (or a sum's input) not held, 2 a wrong final
 * holding (dispatch: a destination lacks a byte; combine: a contribution
 * not counted exactly once at the source). */
static int tnaive(const struct fast_plan *p, const struct fast_matrix *m)
{
	/* lv[t][u]: 2 when t reaches u through a path with a whole-step
	 * dependency, 1 through pipelined ones only, 0 not at all (steps
	 * depend on lower ids only: one pass in id order) */
	int lv[RT][RT] = { { 0 } };
	int n = (int)p->nsteps;

	for (int t = 0; t < n; t++)
		for (uint32_t j = 0; j < p->steps[t].ndeps; j++) {
			const struct fast_dep *d = &p->deps[p->steps[t].dep0 + j];
			int u = (int)d->step, e = d->pipelined ? 1 : 2;
			if (e > lv[t][u])
				lv[t][u] = e;
			for (int w = 0; w < n; w++) {
				int via = lv[u][w] == 0 ? 0 : (e == 2 || lv[u][w] == 2) ? 2 : 1;
				if (via > lv[t][w])
					lv[t][w] = via;
			}
		}
	/* every piece sent (or summed) must be held by its sender */
	for (int t = 0; t < n; t++) {
		const struct fast_step *s = &p->steps[t];
		for (uint32_t j = 0; j < s->nxfers; j++) {
			const struct fast_xfer *x = &p->xfers[s->xfer0 + j];
			uint64_t pos = 0;
			for (uint32_t k = 0; k < x->npieces; k++) {
				const struct fast_piece *pc = &p->pieces[x->piece0 + k];
				const struct fast_group *gr = &m->groups[pc->src];
				uint64_t want = p->kind == FAST_TRAFFIC_COMBINE ? p->masks[pc->dst] : 0;
				for (uint64_t b = pc->off; b < pc->off + pc->len; b++, pos++) {
					uint32_t ch = naive_chunk(x->bytes, s->chunks, pos);
					bool held = false;
					if (p->kind == FAST_TRAFFIC_DISPATCH)
						held = gr->src == x->from;
					else
						for (uint32_t i = 0; i < gr->ndst; i++)
							if (m->dsts[gr->dst0 + i] == x->from &&
							    want == UINT64_C(1) << i)
								held = true;
					for (int u = 0; u < n && !held; u++) {
						const struct fast_step *su = &p->steps[u];
						if (!lv[t][u])
							continue;
						for (uint32_t j2 = 0; j2 < su->nxfers && !held; j2++) {
							const struct fast_xfer *y = &p->xfers[su->xfer0 + j2];
							uint64_t un = 0, pos2 = 0;
							bool in = false;
							if (y->to != x->from)
								continue;
							for (uint32_t k2 = 0; k2 < y->npieces; k2++) {
								const struct fast_piece *q = &p->pieces[y->piece0 + k2];
								bool here = q->src == pc->src && q->off <= b &&
									    b < q->off + q->len;
								/* in chunk <= ch, or a whole-step ancestor */
								bool early = lv[t][u] == 2 ||
									     (here && naive_chunk(y->bytes, su->chunks,
												  pos2 + b - q->off) <= ch);
								pos2 += q->len;
								if (su->kind == FAST_STEP_REDUCE) {
									un |= p->masks[q->dst];
									in = in || here;
								} else if (here && early &&
									   (p->kind == FAST_TRAFFIC_DISPATCH ||
									    p->masks[q->dst] == want)) {
									held = true;
								}
							}
							if (su->kind == FAST_STEP_REDUCE && in && un == want)
								held = true;
						}
					}
					if (!held)
						return 1;
				}
			}
		}
	}
	/* final holdings */
	for (uint32_t g = 0; g < m->ngroups; g++) {
		const struct fast_group *gr = &m->groups[g];
		for (uint64_t b = 0; b < fast_group_bytes(m, g); b++)
			for (uint32_t i = 0; i < gr->ndst; i++) {
				uint32_t d = m->dsts[gr->dst0 + i];
				int count = p->kind == FAST_TRAFFIC_COMBINE && d == gr->src;
				bool got = d == gr->src;
				for (size_t xi = 0; xi < p->nxfers; xi++) {
					const struct fast_xfer *x = &p->xfers[xi];
					if (x->from == x->to)
						continue; /* a sum, or a local copy: nothing arrives */
					for (uint32_t k = 0; k < x->npieces; k++) {
						const struct fast_piece *q = &p->pieces[x->piece0 + k];
						if (q->src != g || b < q->off || b >= q->off + q->len)
							continue;
						if (p->kind == FAST_TRAFFIC_DISPATCH && x->to == d)
							got = true;
						if (p->kind == FAST_TRAFFIC_COMBINE && x->to == gr->src &&
						    (p->masks[q->dst] >> i & 1))
							count++;
					}
				}
				if (p->kind == FAST_TRAFFIC_DISPATCH ? !got : count != 1)
					return 2;
			}
	}
	return 0;
}

/* Random small token plans, dispatch (forwarding trees with relays and
 * replication) and combine (partial sums, relays), explicit steps in 1..3
 * chunks with pipelined dependencies where the chunk counts agree, then
 * deps dropped or added, sends dropped or repeated and masks changed at
 * random: the checker and the naive reference must agree on every
 * verdict, and each verdict must occur. */
static void test_check__tokens_agree_with_naive_reference(void)
{
	struct fast_rng rng;
	struct fast_topo tp = topo2x2();
	int verdicts[2][3] = { { 0 } };

	fast_rng_seed(&rng, 15);
	for (int iter = 0; iter < 1200; iter++) {
		struct fast_traffic t;
		struct fast_plan p;
		struct fast_err err;
		static struct tgen G;
		bool combine = iter % 2;

		memset(&G, 0, sizeof G);
		G.rng = &rng;
		G.combine = combine;
		for (int k = 0; k < RT; k++)
			G.chunks[k] = treduce(&G, k) ? 1 : 1 + (uint32_t)fast_rng_below(&rng, 3);
		for (int x = 0; x < RT; x++)
			for (int y = 0; y < x; y++)
				G.pipe[x][y] = fast_rng_below(&rng, 2);
		tok_init(&t, NG, combine ? FAST_TRAFFIC_COMBINE : FAST_TRAFFIC_DISPATCH, 2);
		for (int g = 0; g < RG; g++) {
			uint32_t d[NG], nd = 0;
			uint32_t src = (uint32_t)fast_rng_below(&rng, NG);
			uint64_t pick = 1 + fast_rng_below(&rng, (1u << NG) - 1);
			for (uint32_t i = 0; i < NG; i++)
				if (pick >> i & 1)
					d[nd++] = i;
			tok_group(&t, src, 1 + fast_rng_below(&rng, 3), nd, d);
		}
		tok_done(&t);
		for (uint32_t g = 0; g < RG; g++) {
			uint64_t size = fast_group_bytes(&t.m[0], g);
			uint64_t cut = fast_rng_below(&rng, 2) ? 1 + fast_rng_below(&rng, size - 1) : size;
			for (uint64_t off = 0; off < size; off = cut, cut = size) {
				if (combine)
					tgen_combine(&G, &t.m[0], g, off, cut - off);
				else
					tgen_dispatch(&G, &t.m[0], g, off, cut - off);
			}
		}
		/* perturb: deps (only towards lower ids: acyclic), explicit sends */
		for (int x = 0; x < RT; x++)
			for (int y = 0; y < x; y++) {
				uint64_t r = fast_rng_below(&rng, 30);
				if (r == 0)
					G.dep[x][y] = false;
				else if (r == 1)
					G.dep[x][y] = true;
			}
		int last = RT - 1;
		while (treduce(&G, last))
			last--;
		for (int k = 0; k < RT; k++) {
			if (treduce(&G, k) || !G.n[k])
				continue;
			uint64_t r = fast_rng_below(&rng, 24);
			int i = (int)fast_rng_below(&rng, (uint64_t)G.n[k]);
			if (r == 0)
				G.x[k][i] = G.x[k][--G.n[k]]; /* dropped */
			else if (r == 1 && k < last && G.n[last] < RS)
				G.x[last][G.n[last]++] = G.x[k][i]; /* repeated last */
			else if (r == 2 && combine) { /* another set of contributions */
				const struct fast_group *gr = &t.m[0].groups[G.x[k][i].g];
				uint64_t mk = G.x[k][i].mask ^
					      UINT64_C(1) << fast_rng_below(&rng, gr->ndst);
				if (mk)
					G.x[k][i].mask = mk;
			}
		}
		tgen_plan(&G, &p);
		int want = tnaive(&p, &t.m[0]);
		memset(&err, 0, sizeof err);
		int rc = unit_check_matrix(&p, &tp, &t.m[0], &err);
		int got = rc == 0 ? 0 : strstr(err.msg, "does not hold") ? 1 : 2;
		CU_ASSERT(rc == 0 || rc == FAST_ECHECK);
		CU_ASSERT_EQUAL(got, want);
		if (got != want || (rc != 0 && rc != FAST_ECHECK))
			fprintf(stderr, "\n  iter %d (%s): naive %d, checker %d (%d): %s\n", iter,
				combine ? "combine" : "dispatch", want, got, rc, err.msg);
		verdicts[combine][want]++;
		fast_plan_free(&p);
		fast_traffic_free(&t);
	}
	if (getenv("FAST_TEST_VERBOSE"))
		fprintf(stderr, "\n  verdicts dispatch %d %d %d, combine %d %d %d\n", verdicts[0][0],
			verdicts[0][1], verdicts[0][2], verdicts[1][0], verdicts[1][1], verdicts[1][2]);
	for (int c = 0; c < 2; c++)
		for (int v = 0; v < 3; v++) {
			CU_ASSERT(verdicts[c][v] > 30);
			if (verdicts[c][v] <= 30)
				fprintf(stderr, "\n  %s verdict %d seen only %d times\n",
					c ? "combine" : "dispatch", v, verdicts[c][v]);
		}
}

UNIT_MAIN("check_naive",
	  UNIT_TEST(test_check__agrees_with_naive_reference),
	  UNIT_TEST(test_check__tokens_agree_with_naive_reference))
