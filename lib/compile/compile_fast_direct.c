/*
 * compile_fast_direct.c - FAST's unbalanced ("direct") schedule and its
 * model: every lane holds its own GPU's bytes (lane target the largest
 * r_i of its tile: no handover, no balancing step), and the N - 1 shifts
 * A -> A + d carry them, rail-aligned as hier's scale-out, each followed
 * by the redistribution of what it brought.  The shifts (the terms, in d
 * order, each with the largest lane of its tiles as budget) go into rail
 * steps of one or more of them, grouped as the balanced terms are
 * (compile_fast_group.c, the recursion g(i, r) at its top): a group
 * [i, j) of shifts costs, at chain position r,
 *     rail(i, j, r) = [a_out where r pays] + X(i, j) / (B_out f(j - i)),
 * X the busiest NIC's bytes over the group, egress or ingress (exact:
 * prefix sums per NIC, shift by shift), and its redistribution
 *     red(i, j) = l_up + Y(i, j) / B_up,
 * Y the busiest scale-up port's forwarded bytes (a switch port, out of
 * B_i or into B_j; on a mesh the link B_i -> B_j), waiting on its rail
 * step pipelined, so only the latency is left after it.  One group is
 * one rail step of every shift, the schedule of a single step; more pay
 * where steps are in flight (the second rail step's a_out hidden) and
 * the last redistribution is long.  Token plans (the builder's fwd > 0):
 * D's columns do not say where a token goes on, so red = l_up + X rho.
 *
 * Cost: the prefix sums are (K + 1) x (2 N G + the ports or links)
 * words.  With at most two rail steps in flight (every preset) more than
 * two groups would pay a_out twice, so only one group or two are tried:
 * O(K (2 N G + ports)); with more in flight, the recursion, O(K^2 (2 N G +
 * ports)).  Past DIRECT_WORK or DIRECT_WORDS only the one step is
 * modelled, in one pass over the loads and D.  None of it runs where a
 * floor from the loads (floor_s) shows the schedule cannot beat the best
 * found already (large transfers: the unbalanced NICs' bytes alone).  The
 * grouping found is kept (bd->dstart) for fast_direct_setup.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/compile/compile_fast_internal.h"

#define DIRECT_WORK (UINT64_C(1) << 26)
#define DIRECT_WORDS (UINT64_C(1) << 22)

/* What the model reads, shift by shift: the prefix sums over the
 * shifts' order of every NIC's bytes (egress of A_i, ingress of B_i: 2 N
 * G) and every scale-up port's or link's forwarded bytes (nf). */
struct dmodel {
	uint32_t K;       /* shifts that carry bytes */
	uint32_t *d;      /* K: the shift of term k */
	size_t nn, nf;    /* entries per prefix row */
	uint64_t *nic;    /* (K + 1) nn */
	uint64_t *fwd;    /* (K + 1) nf */
	double *g;        /* (K + 1) k */
	uint32_t *next;   /* (K + 1) k */
};

static size_t fwd_entries(const struct builder *bd, const struct fast_topo *topo)
{
	if (bd->fwd > 0)
		return 0; /* token plans: red from X */
	return topo->up_kind == FAST_UP_MESH ? (size_t)bd->N * bd->G * bd->G
					     : (size_t)2 * bd->N * bd->G;
}

/* Add shift d's tiles to the row at (nic, fwd): A_i's lane to A + d out
 * of NIC (A, i) and into (A + d, i); B_i's forwards to B_j. */
static void add_shift(const struct builder *bd, bool mesh, uint32_t d, uint64_t *nic,
		      uint64_t *fwd)
{
	uint32_t N = bd->N, G = bd->G;

	for (uint32_t a = 0; a < N; a++) {
		uint32_t b = (a + d) % N;
		for (uint32_t i = 0; i < G; i++) {
			uint64_t r = bd->load[((size_t)a * N + b) * G + i];
			nic[(size_t)a * G + i] += r;
			nic[(size_t)(N + b) * G + i] += r;
			for (uint32_t j = 0; fwd && j < G; j++) {
				uint64_t v = msg(bd, a, i, b, j);
				if (j == i || !v)
					continue;
				if (mesh) {
					fwd[((size_t)b * G + i) * G + j] += v;
				} else {
					fwd[(size_t)b * G + i] += v;
					fwd[(size_t)(N + b) * G + j] += v;
				}
			}
		}
	}
}

/* The largest entry of row j less row i. */
static uint64_t most(const uint64_t *p, size_t n, uint32_t i, uint32_t j)
{
	const uint64_t *ri = p + (size_t)i * n, *rj = p + (size_t)j * n;
	uint64_t x = 0;

	for (size_t e = 0; e < n; e++)
		x = rj[e] - ri[e] > x ? rj[e] - ri[e] : x;
	return x;
}

/* rail(i, j, r) + red(i, j) parts of the group [i, j) (see the top). */
static void group_s(const struct dmodel *dm, const struct cost *c, const struct fast_topo *topo,
		    uint32_t N, uint32_t i, uint32_t j, double *bytes_s, double *full_s, double *red_s)
{
	uint64_t X = most(dm->nic, dm->nn, i, j);

	*full_s = (double)X / c->Bo;
	*bytes_s = *full_s / fast_group_incast(topo, j - i, N);
	if (dm->nf) {
		uint64_t Y = most(dm->fwd, dm->nf, i, j);
		*red_s = Y ? c->l_up + (double)Y / c->Bu : 0;
	} else {
		*red_s = c->l_up + (double)X * c->rho;
	}
}

/* The best of one group [0, K) and two, [0, s) and [s, K): with at most
 * two rail steps in flight the recursion's choice among groupings that
 * pay a_out once (more groups pay it again), without its K^2 terms;
 * dm->g[0] and the split in dm->next[0] (K: one group). */
static void one_or_two(struct dmodel *dm, const struct cost *c, const struct fast_topo *topo,
		       uint32_t N)
{
	uint32_t K = dm->K;
	double bytes, full, red, b2, r2;

	group_s(dm, c, topo, N, 0, K, &bytes, &full, &red);
	dm->g[0] = c->a_out + bytes + red;
	dm->next[0] = K;
	for (uint32_t s = 1; s < K; s++) {
		double rest, t;
		group_s(dm, c, topo, N, 0, s, &bytes, &full, &red);
		group_s(dm, c, topo, N, s, K, &b2, &full, &r2);
		rest = (cost_pays(c, 1) ? c->a_out : 0) + b2 + r2;
		t = c->a_out + bytes + (red > rest ? red : rest);
		if (t < dm->g[0]) {
			dm->g[0] = t;
			dm->next[0] = s;
		}
	}
}

/* The shifts' groups for fast_group_chain. */
struct shifts_ctx {
	const struct dmodel *dm;
	const struct cost *c;
	const struct fast_topo *topo;
	uint32_t N;
};

static void shift_parts(const void *ctx, uint32_t i, uint32_t j, double *bytes_s, double *full_s,
			double *red_s)
{
	const struct shifts_ctx *x = ctx;

	group_s(x->dm, x->c, x->topo, x->N, i, j, bytes_s, full_s, red_s);
}

/* g(i, r) for every i and r, from the end (compile_fast_group.c). */
static void recurse(struct dmodel *dm, const struct cost *c, const struct fast_topo *topo,
		    uint32_t N, uint32_t L)
{
	struct shifts_ctx x = { dm, c, topo, N };

	fast_group_chain(c, dm->K, L, shift_parts, &x, dm->g, dm->next);
}

/* The shifts that carry bytes, in d order, into dm->d; their count. */
static uint32_t shifts(const struct builder *bd, uint32_t *d)
{
	uint32_t N = bd->N, G = bd->G, K = 0;

	for (uint32_t s = 1; s < N; s++) {
		bool any = false;
		for (uint32_t a = 0; a < N && !any; a++)
			for (uint32_t i = 0; i < G && !any; i++)
				any = bd->load[((size_t)a * N + (a + s) % N) * G + i] != 0;
		if (any)
			d[K++] = s;
	}
	return K;
}

/* A floor under every grouping's modelled time: a_out, the busiest NIC's
 * bytes of all the shifts at the NIC's full rate (a NIC's groups add up,
 * and incast only slows them), the scale-up latency of the last
 * redistribution; from the loads alone, O(N^2 G). */
static double floor_s(const struct builder *bd, const struct cost *c)
{
	uint32_t N = bd->N, G = bd->G;
	uint64_t X = 0, *nic = fast_calloc((size_t)2 * N * G, sizeof *nic);

	if (!nic)
		return 0; /* no floor: the model decides */
	for (uint32_t a = 0; a < N; a++)
		for (uint32_t b = 0; b < N; b++)
			for (uint32_t i = 0; i < G && a != b; i++) {
				uint64_t r = bd->load[((size_t)a * N + b) * G + i];
				nic[(size_t)a * G + i] += r;
				nic[(size_t)(N + b) * G + i] += r;
			}
	for (size_t k = 0; k < (size_t)2 * N * G; k++)
		X = nic[k] > X ? nic[k] : X;
	free(nic);
	return c->a_out + (double)X / c->Bo + c->l_up;
}

int fast_direct_choose(struct builder *bd, const struct cost *c, const struct fast_topo *topo,
		       double beat, double *time_s)
{
	uint32_t N = bd->N, G = bd->G, k = c->k, K, L;
	bool mesh = topo->up_kind == FAST_UP_MESH;
	struct dmodel dm;
	size_t words, rows;
	uint32_t *gs;
	char *m;
	int rc = 0;

	*time_s = INFINITY;
	bd->ndirect = 0;
	if (floor_s(bd, c) >= beat)
		return 0; /* it cannot win: left unmodelled, INFINITY */
	memset(&dm, 0, sizeof dm);
	dm.nn = (size_t)2 * N * G;
	dm.nf = fwd_entries(bd, topo);
	dm.d = fast_calloc(N, sizeof *dm.d);
	if (!dm.d)
		return oom(bd, "direct stages");
	K = dm.K = shifts(bd, dm.d);
	if (K == 0) {
		free(dm.d);
		return 0;
	}
	/* the prefix rows kept: every shift's, or (too large) the two ends */
	words = ((size_t)K + 1) * (dm.nn + dm.nf);
	L = (k <= 2 ? 2 : (uint64_t)K) * K * (dm.nn + dm.nf) <= DIRECT_WORK && words <= DIRECT_WORDS ? K
												     : 1;
	rows = L == 1 ? 2 : (size_t)K + 1;
	m = fast_calloc(rows * (dm.nn + dm.nf) * sizeof(uint64_t) +
			((size_t)K + 1) * k * (sizeof(double) + sizeof(uint32_t)), 1);
	gs = fast_reallocarray(bd->dstart, (size_t)K + 1, sizeof *gs);
	if (!m || !gs) {
		free(m);
		free(dm.d);
		if (gs)
			bd->dstart = gs;
		return oom(bd, "direct stages");
	}
	bd->dstart = gs;
	dm.nic = (uint64_t *)(void *)m;
	dm.fwd = dm.nic + rows * dm.nn;
	dm.g = (double *)(void *)(dm.fwd + rows * dm.nf);
	dm.next = (uint32_t *)(void *)(dm.g + ((size_t)K + 1) * k);
	if (L == 1) { /* row 1 holds all of them; one group, rows 0 and 1 */
		for (uint32_t t = 0; t < K; t++)
			add_shift(bd, mesh, dm.d[t], dm.nic + dm.nn, dm.nf ? dm.fwd + dm.nf : NULL);
		dm.K = 1;
		recurse(&dm, c, topo, N, 1);
		dm.next[0] = K;
		dm.K = K;
	} else {
		for (uint32_t t = 0; t < K; t++) {
			memcpy(dm.nic + (t + 1) * dm.nn, dm.nic + t * dm.nn, dm.nn * sizeof *dm.nic);
			memcpy(dm.fwd + (t + 1) * dm.nf, dm.fwd + t * dm.nf, dm.nf * sizeof *dm.fwd);
			add_shift(bd, mesh, dm.d[t], dm.nic + (t + 1) * dm.nn,
				  dm.nf ? dm.fwd + (t + 1) * dm.nf : NULL);
		}
		if (k <= 2)
			one_or_two(&dm, c, topo, N);
		else
			recurse(&dm, c, topo, N, L);
	}
	*time_s = dm.g[0];
	/* the grouping: one or two groups from next[0] alone, else the chain */
	for (uint32_t i = 0, r = 0; i < K; r = (r + 1) % k) {
		gs[bd->ndirect++] = i;
		i = L == 1 || k <= 2 ? (i == 0 ? dm.next[0] : K) : dm.next[(size_t)i * k + r];
	}
	gs[bd->ndirect] = K;
	free(m);
	free(dm.d);
	return rc;
}

int fast_direct_setup(struct builder *bd, struct fast_bvn *bv)
{
	uint32_t N = bd->N, G = bd->G, k = 0;
	uint32_t *perm = fast_calloc((size_t)(N - 1) * N, sizeof *perm);
	uint64_t *wt = fast_calloc(N - 1, sizeof *wt);
	uint32_t *gs = fast_reallocarray(bd->gstart, (size_t)bd->ndirect + 1, sizeof *gs);

	if (!perm || !wt || !gs) {
		free(perm);
		free(wt);
		if (gs)
			bd->gstart = gs;
		return oom(bd, "stages");
	}
	/* the grouping fast_direct_choose found (from the loads) */
	bd->gstart = gs;
	memcpy(gs, bd->dstart, ((size_t)bd->ndirect + 1) * sizeof *gs);
	bd->nrail = bd->ndirect;
	/* lane target of a tile: its largest r_i, so nothing is handed over */
	for (uint32_t a = 0; a < N; a++)
		for (uint32_t b = 0; b < N; b++) {
			const uint64_t *r = &bd->load[((size_t)a * N + b) * G];
			uint64_t tgt = 0;
			for (uint32_t i = 0; i < G && a != b; i++)
				tgt = r[i] > tgt ? r[i] : tgt;
			bd->S[(size_t)a * N + b] = tgt;
		}
	/* the shifts that carry bytes, in d order (as fast_direct_choose) */
	for (uint32_t d = 1; d < N; d++) {
		uint64_t w = 0;
		for (uint32_t a = 0; a < N; a++) {
			uint64_t s = bd->S[(size_t)a * N + (a + d) % N];
			w = s > w ? s : w;
		}
		if (!w)
			continue;
		for (uint32_t a = 0; a < N; a++)
			perm[(size_t)k * N + a] = (a + d) % N;
		wt[k++] = w;
	}
	fast_bvn_free(bv);
	bv->n = N;
	bv->nterms = k;
	bv->perm = perm;
	bv->weight = wt;
	bv->quantum = 1;
	bv->total = 0;
	for (uint32_t j = 0; j < k; j++)
		bv->total += wt[j];
	if (k == 0)
		bd->nrail = 0;
	return 0;
}
