/*
 * compile_fast_group.c - how FAST's staged schedule is cut into rail
 * steps (stages=auto, one NIC per GPU at one rate): the terms of the
 * decomposition, in their order, go into rail steps of one or more
 * permutations each (plan.h, RAIL).  A step of m permutations pays its
 * tier's latency and overhead once where m steps of one pay it m times,
 * and its NICs each serve m peers: the receiving NIC at m senders runs at
 * the incast factor f(m) (topo.h), and a row busy in one term and idle in
 * another evens out inside a step.  At small sizes few steps of many
 * terms win (the N - 1 chained steps were what FAST lost to fanout and
 * hier); at large ones the incast costs more than the steps it saves, and
 * the model keeps one permutation a step.  Each rail step's
 * redistribution waits on it pipelined (compile_fast_steps.c): launched
 * with it, it pays only the scale-up latency after it.
 *
 * The model (struct cost: a = latency + step overhead of a tier, l_up the
 * scale-up latency, B a tier's rate, rho the redistribution's seconds per
 * lane byte, k the rail steps in flight), on the trimmed, ordered terms
 * w_k, P_k:
 *  - c_k(A), the lane bytes row A carries in term k (the trim's walk over
 *    the server matrix S), and the same by column (receiving server);
 *  - a group [i, j) of terms, one rail step at position r of the chain:
 *    X(i, j), the largest row or column sum of c over it; rail(i, j, r) =
 *    [a_out where k divides r] + X / (B_out f(m)), m = min(j - i, N - 1)
 *    senders a receiver; its redistribution red(i, j) = l_up + X rho,
 *    overlapping what follows;
 *  - after a group ends, the rest takes g(i, r) = min over j of
 *    rail(i, j, r) + max(red(i, j), g(j, r + 1 mod k)), g(K, .) = 0:
 *    dynamic programming over groups of at most L terms, O(K L N + k K L);
 *  - the first group [0, k1) waits for the balancing of its tiles (bal0:
 *    a_up plus the busiest GPU's handovers over Bb), the second for the
 *    other tiles' (bal1, balance=jit; with upfront all is bal0):
 *      T(k1) = bal0 + rail(0, k1, 0) + max(red(0, k1),
 *              max(0, bal1 - rail(0, k1, 0)) + g(k1, 1 mod k)),
 *    the least over k1 <= L, each k1's balancing updated from the last
 *    (the tiles of term k1 move from the second step to the first).
 * With every group of one term this is the staged model
 * (compile_fast_packed.c, fast_staged_s) but for the redistributions,
 * which it lets outlast the next stage.
 *
 * Unbalanced ("direct") stages: compile_fast_direct.c.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/compile/compile_fast_internal.h"

/* Most terms a group takes (and the first group's sizes tried): beyond
 * N - 1 a NIC meets the same server again, and the work is O(K L N), kept
 * under GROUP_WORK (a few ms); 0 where even groups of two would pass it,
 * or the prefix sums (2 K N words) GROUP_WORDS: many terms on many servers
 * are bytes' work, where grouping gains nothing. */
#define GROUP_WORK (UINT64_C(1) << 26)
#define GROUP_WORDS (UINT64_C(1) << 22)
static uint32_t group_cap(uint32_t K, uint32_t N)
{
	uint64_t L = N - 1 > 64 ? N - 1 : 64;

	if (L > 256)
		L = 256;
	if (L > K)
		L = K;
	while (L > 1 && (uint64_t)K * L * N > GROUP_WORK)
		L /= 2;
	return L < 2 || (uint64_t)K * N > GROUP_WORDS ? 0 : (uint32_t)L;
}

double fast_group_incast(const struct fast_topo *topo, uint32_t m, uint32_t N)
{
	return fast_incast_factor(&topo->congestion, m < N - 1 ? m : N - 1);
}

/* The DP's workspace, carved from one allocation. */
struct work {
	uint64_t *row, *col; /* (K + 1) * N prefix sums of c by row and by column */
	uint64_t *acc;       /* 4 * N * G: balancing per (group, direction, GPU) */
	uint8_t *in0;        /* N * N: tile in the first group */
	double *g;           /* (K + 1) k: g(i) with the group at i at chain
			      * position r mod k, at [i k + r] */
	uint32_t *next;      /* (K + 1) k: where that g's first group ends */
};

/* Prefix sums of the bytes each row and column carries, term by term. */
static void carried(const struct builder *bd, const struct fast_bvn *bv, struct work *w,
		    uint64_t *rem)
{
	uint32_t N = bd->N;

	memcpy(rem, bd->S, (size_t)N * N * sizeof *rem);
	memset(w->row, 0, (size_t)N * sizeof *w->row);
	memset(w->col, 0, (size_t)N * sizeof *w->col);
	for (uint32_t k = 0; k < bv->nterms; k++) {
		const uint32_t *p = bv->perm + (size_t)k * N;
		uint64_t *r0 = w->row + (size_t)k * N, *r1 = r0 + N;
		uint64_t *c0 = w->col + (size_t)k * N, *c1 = c0 + N;
		memcpy(r1, r0, N * sizeof *r1);
		memcpy(c1, c0, N * sizeof *c1);
		for (uint32_t a = 0; a < N; a++) {
			uint64_t *r = &rem[(size_t)a * N + p[a]], s;
			if (p[a] == a)
				continue;
			s = *r < bv->weight[k] ? *r : bv->weight[k];
			*r -= s;
			r1[a] += s;
			c1[p[a]] += s;
		}
	}
}

/* X(i, j): the largest row or column sum of the terms [i, j). */
static uint64_t group_bytes(const struct work *w, uint32_t N, uint32_t i, uint32_t j)
{
	const uint64_t *ri = w->row + (size_t)i * N, *rj = w->row + (size_t)j * N;
	const uint64_t *ci = w->col + (size_t)i * N, *cj = w->col + (size_t)j * N;
	uint64_t x = 0;

	for (uint32_t a = 0; a < N; a++) {
		if (rj[a] - ri[a] > x)
			x = rj[a] - ri[a];
		if (cj[a] - ci[a] > x)
			x = cj[a] - ci[a];
	}
	return x;
}

/* A rail step of m senders a receiver carrying X, at chain position r
 * (in flight, struct cost k: a_out only where it pays). */
static double rail_s(const struct cost *c, const struct fast_topo *topo, uint32_t N, uint64_t X,
		     uint32_t m, uint32_t r)
{
	return (cost_pays(c, r) ? c->a_out : 0) + (double)X / (c->Bo * fast_group_incast(topo, m, N));
}

void fast_group_chain(const struct cost *c, uint32_t K, uint32_t L, fast_group_parts_fn *parts,
		      const void *ctx, double *g, uint32_t *next)
{
	uint32_t k = c->k;

	for (uint32_t r = 0; r < k; r++) {
		g[(size_t)K * k + r] = 0;
		next[(size_t)K * k + r] = K;
	}
	for (uint32_t i = K; i-- > 0;) {
		double all, all_incast, all_red, gmax = INFINITY;
		for (uint32_t r = 0; r < k; r++)
			g[(size_t)i * k + r] = INFINITY;
		/* every grouping of [i, K) pays at least all = its bytes at the
		 * full rate (a group's busiest line carries at most its parts'
		 * together), so a first group [i, j) costs at least all plus
		 * its incast's extra, bytes - full, which only grows with j:
		 * once that reaches every g(i, r) found, no longer group wins */
		parts(ctx, i, K, &all_incast, &all, &all_red);
		for (uint32_t j = i + 1; j <= K && j - i <= L; j++) {
			double bytes, full, red;
			parts(ctx, i, j, &bytes, &full, &red);
			if (all + (bytes - full) > gmax * (1 + 1e-9))
				break;
			for (uint32_t r = 0; r < k; r++) {
				double gj = g[(size_t)j * k + (r + 1) % k];
				double t = (cost_pays(c, r) ? c->a_out : 0) + bytes + (red > gj ? red : gj);
				if (t < g[(size_t)i * k + r]) {
					g[(size_t)i * k + r] = t;
					next[(size_t)i * k + r] = j;
				}
			}
			gmax = 0;
			for (uint32_t r = 0; r < k; r++)
				gmax = g[(size_t)i * k + r] > gmax ? g[(size_t)i * k + r] : gmax;
		}
	}
}

/* The terms' groups: what a group [i, j) of terms costs (see the top). */
struct terms {
	const struct cost *c;
	const struct fast_topo *topo;
	const struct work *w;
	uint32_t N;
};

static void term_parts(const void *ctx, uint32_t i, uint32_t j, double *bytes_s, double *full_s,
		       double *red_s)
{
	const struct terms *t = ctx;
	uint64_t X = group_bytes(t->w, t->N, i, j);

	*full_s = (double)X / t->c->Bo;
	*bytes_s = *full_s / fast_group_incast(t->topo, j - i, t->N);
	*red_s = t->c->l_up + (double)X * t->c->rho;
}

/* Move tile (a, b)'s balancing from the second step (group 1) to the
 * first; *sign -1 takes it out of group 1, +1 puts it in group 0. */
static void tile_balance(const struct builder *bd, struct work *w, uint32_t a, uint32_t b,
			 uint32_t grp, int sign)
{
	uint32_t N = bd->N, G = bd->G;
	const uint64_t *r = &bd->load[((size_t)a * N + b) * G];
	uint64_t t = bd->S[(size_t)a * N + b];
	uint64_t *send = w->acc + (size_t)grp * 2 * N * G, *recv = send + (size_t)N * G;

	for (uint32_t i = 0; i < G; i++) {
		uint64_t *x = r[i] > t ? &send[(size_t)a * G + i] : &recv[(size_t)a * G + i];
		uint64_t d = r[i] > t ? r[i] - t : t - r[i];
		*x = sign > 0 ? *x + d : *x - d;
	}
}

/* a_up plus the busiest GPU of balancing group grp over Bb; 0 when
 * nothing moves. */
static double balance_s(const struct builder *bd, const struct cost *c, const struct work *w,
			uint32_t grp)
{
	const uint64_t *x = w->acc + (size_t)grp * 2 * bd->N * bd->G;
	uint64_t most = 0;

	for (size_t k = 0; k < (size_t)2 * bd->N * bd->G; k++)
		if (x[k] > most)
			most = x[k];
	return most ? c->a_up + (double)most / c->Bb : 0;
}

/* The groups found: [0, k1), then g's choices from k1 on, into
 * bd->gstart (bd->nrail groups, gstart[nrail] = K). */
static int keep_groups(struct builder *bd, const struct work *w, uint32_t k1, uint32_t K,
		       uint32_t k)
{
	uint32_t *gs = fast_reallocarray(bd->gstart, (size_t)K + 1, sizeof *gs);

	if (!gs)
		return oom(bd, "stage groups");
	bd->gstart = gs;
	bd->nrail = 0;
	gs[bd->nrail++] = 0;
	for (uint32_t i = k1, r = 1 % k; i < K; i = w->next[(size_t)i * k + r], r = (r + 1) % k)
		gs[bd->nrail++] = i;
	gs[bd->nrail] = K;
	return 0;
}

int fast_group_choose(struct builder *bd, const struct cost *c, const struct fast_topo *topo,
		      const struct fast_bvn *bv, double *time_s)
{
	uint32_t N = bd->N, G = bd->G, K = bv->nterms, L, best_k1 = 1, k = c->k;
	size_t kn = ((size_t)K + 1) * N, bytes;
	struct work w;
	uint64_t *rem;
	double best = INFINITY;
	char *m;
	int rc;

	*time_s = INFINITY;
	if (K < 2 || (L = group_cap(K, N)) == 0)
		return 0;
	bytes = (2 * kn + (size_t)4 * N * G + (size_t)N * N) * sizeof(uint64_t) +
		((size_t)K + 1) * k * (sizeof(double) + sizeof(uint32_t)) + (size_t)N * N;
	m = fast_calloc(bytes, 1);
	if (!m)
		return oom(bd, "stage groups");
	w.row = (uint64_t *)(void *)m;
	w.col = w.row + kn;
	w.acc = w.col + kn;
	rem = w.acc + (size_t)4 * N * G;
	w.g = (double *)(void *)(rem + (size_t)N * N);
	w.next = (uint32_t *)(void *)(w.g + ((size_t)K + 1) * k);
	w.in0 = (uint8_t *)(w.next + ((size_t)K + 1) * k);
	carried(bd, bv, &w, rem);
	{
		struct terms t = { c, topo, &w, N };
		fast_group_chain(c, K, L, term_parts, &t, w.g, w.next);
	}
	/* every tile in the second balancing step (jit), or all in the first */
	for (uint32_t a = 0; a < N; a++)
		for (uint32_t b = 0; b < N; b++)
			if (a != b && bd->S[(size_t)a * N + b])
				tile_balance(bd, &w, a, b, bd->jit ? 1 : 0, +1);
	for (uint32_t k1 = 1; k1 <= L; k1++) {
		const uint32_t *p = bv->perm + (size_t)(k1 - 1) * N;
		uint64_t X = group_bytes(&w, N, 0, k1);
		double rail, red, bal0, bal1, wait, t;
		for (uint32_t a = 0; bd->jit && a < N; a++) {
			uint8_t *in = &w.in0[(size_t)a * N + p[a]];
			if (p[a] == a || *in || !bd->S[(size_t)a * N + p[a]])
				continue;
			*in = 1;
			tile_balance(bd, &w, a, p[a], 1, -1);
			tile_balance(bd, &w, a, p[a], 0, +1);
		}
		rail = rail_s(c, topo, N, X, k1, 0);
		bal0 = balance_s(bd, c, &w, 0);
		/* the first group's balancing and rail step only grow with
		 * k1 and bound its time: past the best, so is every larger k1 */
		if (bal0 + rail >= best)
			break;
		bal1 = balance_s(bd, c, &w, 1);
		red = c->l_up + (double)X * c->rho;
		wait = bal1 - rail > 0 ? bal1 - rail : 0;
		t = bal0 + rail +
		    (k1 == K ? red : fmax(red, wait + w.g[(size_t)k1 * k + 1 % k]));
		if (t < best) {
			best = t;
			best_k1 = k1;
		}
	}
	rc = keep_groups(bd, &w, best_k1, K, k);
	free(m);
	if (rc == 0)
		*time_s = best;
	return rc;
}
