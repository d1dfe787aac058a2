/*
 * compile_fast_balance.c - FAST's sender balancing (step 2 of
 * compile_fast.c): each tile (A, B != A) is spread over its rails so that
 * no lane holds more than the lane target, donors handing the excess of
 * their streams, in order, to receivers; the tile's lanes and pieces are
 * written in place in the plan and every handover is recorded as a move,
 * then the moves are sorted by (balancing group, sender, receiver) so that
 * compile_fast_steps.c emits one transfer per pair.  This is the hot part
 * of a compile (one pass over D, O(N^2 G^2) pieces): no builder call per
 * piece, no allocation per tile.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/compile/compile_fast_internal.h"

/* Donor cursor of one tile: current donor rail d, positioned at stream
 * byte t of its stream (message j, offset off). */
struct donor {
	uint32_t d, j;
	uint64_t off;
};

/* How many of G rails rs holds (G / div ports of div rails each). */
static uint32_t rail_count(const struct rails *rs, uint32_t G)
{
	uint32_t P = G / rs->div;

	return rs->res < P ? (P - rs->res + rs->mod - 1) / rs->mod * rs->div : 0;
}

/* tt[i]: rail i's lane target (tt: G). */
void fast_balance_targets(const struct rails *rs, uint32_t G, uint64_t *tt)
{
	if (rs->div == 1) { /* a port per GPU: the usual case, kept tight */
		for (uint32_t i = 0, k = 0; i < G; i++) {
			tt[i] = k == rs->res ? rs->t : 0;
			if (++k == rs->mod)
				k = 0;
		}
		return;
	}
	for (uint32_t i = 0, k = 0, c = 0; i < G; i++) {
		tt[i] = k == rs->res ? rs->t : 0;
		if (++c < rs->div)
			continue;
		c = 0;
		if (++k == rs->mod)
			k = 0;
	}
}
static void donor_next(const struct builder *bd, uint32_t a, uint32_t b, const uint64_t *r,
		       const uint64_t *tt, struct donor *dn)
{
	uint64_t cum = 0, t;

	while (dn->d < bd->G && r[dn->d] <= tt[dn->d])
		dn->d++;
	if (dn->d == bd->G)
		return;
	t = tt[dn->d];
	for (dn->j = 0; dn->j < bd->G; dn->j++) {
		uint64_t len = msg(bd, a, dn->d, b, dn->j);
		if (cum + len > t) {
			dn->off = t - cum;
			return;
		}
		cum += len;
	}
}

/* Room for `moves` more handovers, so that the hot loop below writes them
 * in place (as it writes pieces, in the plan's piece space: a builder call
 * per piece cost a third of a compile). */
static int room(struct builder *bd, uint64_t moves)
{
	struct move *m = fast_scratch_room(bd->sc, SC_MOVES, bd->nmoves + moves, sizeof *m);

	if (!m)
		return oom(bd, "balancing");
	bd->moves = m;
	return 0;
}

/* The rails of tile (A, B): all G with target S[A][B]; packed, those of
 * its shift, each with target ceil(sum r_i / their count). */
struct rails fast_balance_rails(const struct builder *bd, bool packed, uint32_t a, uint32_t b)
{
	const uint64_t *r = &bd->load[((size_t)a * bd->N + b) * bd->G];
	struct rails rs = { 1, 0, 1, bd->S[(size_t)a * bd->N + b] };
	uint64_t sum = 0, cnt;

	if (!packed)
		return rs;
	rs.mod = pack_mod(bd->N, bd->P);
	rs.div = bd->pdiv;
	rs.res = shift_of(bd->N, a, b) % rs.mod;
	for (uint32_t i = 0; i < bd->G; i++)
		sum += r[i]; /* a row sum of D's tile: S's sums did not overflow */
	cnt = rail_count(&rs, bd->G);
	rs.t = sum / cnt + (sum % cnt != 0);
	return rs;
}

/* Balance tile (A, B) onto its rails (fast_balance_rails()): declare its non-empty
 * lanes and record handovers (a rail outside them is a donor of all it
 * holds).  A tile writes at most G^2 own pieces and G^2 + 2G handed ones
 * (a split per donor and per receiver). */
int fast_balance_tile(struct builder *bd, uint32_t a, uint32_t b)
{
	uint32_t N = bd->N, G = bd->G;
	const uint64_t *r = &bd->load[((size_t)a * N + b) * G];
	const uint64_t *row = bd->D + (size_t)a * G * bd->ng + (size_t)b * G; /* D[A_0][B_0] */
	uint64_t t, excess = 0, *tt = bd->tt;
	struct rails rs;
	uint32_t group = bd->jit ? bd->first[(size_t)a * N + b] : 0;
	struct donor dn = { 0, 0, 0 };
	struct fast_plan *p = bd->p;
	struct fast_piece *pc;
	struct fast_lane *ln;
	struct move *mv;
	size_t nl = 0;
	int rc;

	if (bd->nx) {
		t = fast_nics_targets(bd, a, b, tt);
	} else {
		rs = fast_balance_rails(bd, bd->packed, a, b);
		t = rs.t;
	}
	if (t == 0)
		return 0;
	if ((rc = room(bd, (uint64_t)G * G + 2 * G)) < 0)
		return rc;
	/* the tile's lanes and pieces are written in place and committed
	 * once (a builder call per lane, or per piece, cost a sixth, or a
	 * third, of a compile) */
	if ((rc = fast_plan_lane_space(p, G, 2 * (size_t)G * G + 2 * G, &ln, &pc, bd->err)) < 0)
		return rc;
	mv = bd->moves + bd->nmoves;
	if (!bd->nx)
		fast_balance_targets(&rs, G, tt);
	for (uint32_t i = 0; i < G; i++)
		if (r[i] > tt[i])
			excess += r[i] - tt[i];
	if (excess)
		donor_next(bd, a, b, r, tt, &dn);
	for (uint32_t i = 0; i < G; i++) {
		uint64_t ti = tt[i], own = r[i] < ti ? r[i] : ti, recv = 0, left;
		struct fast_piece *first;
		if (r[i] < ti) {
			recv = ti - r[i] < excess ? ti - r[i] : excess;
			excess -= recv;
		}
		if (own + recv == 0)
			continue;
		first = pc;
		left = own;
		for (uint32_t j = 0; j < G && left; j++) {
			uint64_t len = row[(size_t)i * bd->ng + j], take = len < left ? len : left;
			if (!take)
				continue;
			pc->src = a * G + i;
			pc->dst = b * G + j;
			pc->off = 0;
			pc->len = take;
			pc++;
			left -= take;
		}
		left = recv;
		if (left) {
			/* the donor cursor in registers while it walks (through
			 * the struct, each step reloaded what it had just stored) */
			uint32_t d = dn.d, j = dn.j;
			uint64_t off = dn.off;
			const uint64_t *drow = row + (size_t)d * bd->ng;
			while (left) {
				uint64_t len, take;
				if (j == G) { /* donor exhausted: the next one */
					dn = (struct donor){ d + 1, 0, 0 };
					donor_next(bd, a, b, r, tt, &dn);
					d = dn.d, j = dn.j, off = dn.off;
					drow = row + (size_t)d * bd->ng;
					continue;
				}
				len = drow[j];
				if (off == len) {
					j++;
					off = 0;
					continue;
				}
				take = len - off < left ? len - off : left;
				pc->src = a * G + d;
				pc->dst = b * G + j;
				pc->off = off;
				pc->len = take;
				mv->group = group;
				mv->key = (a * G + d) * G + i;
				mv->piece = (uint32_t)(pc - p->pieces);
				pc++;
				mv++;
				off += take;
				left -= take;
			}
			dn = (struct donor){ d, j, off };
		}
		ln[nl].src_server = a;
		ln[nl].dst_server = b;
		ln[nl].rail = i;
		ln[nl].npieces = (uint32_t)(pc - first);
		ln[nl++].bytes = own + recv;
	}
	if ((rc = fast_plan_commit_lanes(p, nl, bd->err)) < 0)
		return rc;
	bd->nmoves = (size_t)(mv - bd->moves);
	return 0;
}

/* Stable counting sort of the moves by (balancing group, key), in one
 * pass. */
int fast_balance_sort(struct builder *bd)
{
	size_t n = bd->nmoves, nk = (size_t)bd->N * bd->G * bd->G;
	size_t nb = nk * bd->ngroups, *cnt, cap;
	struct move *tmp;

	if (n == 0)
		return 0;
	cnt = fast_scratch_room(bd->sc, SC_CNT, nb + 1, sizeof *cnt);
	tmp = fast_scratch_room(bd->sc, SC_TMP, n, sizeof *tmp);
	if (!cnt || !tmp)
		return oom(bd, "balancing");
	memset(cnt, 0, (nb + 1) * sizeof *cnt);
	for (size_t k = 0; k < n; k++)
		cnt[bd->moves[k].group * nk + bd->moves[k].key + 1]++;
	for (size_t k = 1; k <= nb; k++)
		cnt[k] += cnt[k - 1];
	for (size_t k = 0; k < n; k++)
		tmp[cnt[bd->moves[k].group * nk + bd->moves[k].key]++] = bd->moves[k];
	/* the sorted array becomes the moves (their slots swap) */
	bd->sc->buf[SC_TMP] = bd->sc->buf[SC_MOVES];
	bd->sc->buf[SC_MOVES] = tmp;
	cap = bd->sc->cap[SC_TMP];
	bd->sc->cap[SC_TMP] = bd->sc->cap[SC_MOVES];
	bd->sc->cap[SC_MOVES] = cap;
	bd->moves = tmp;
	if (!bd->keep) { /* a one-off compile: no peak memory for reuse */
		for (unsigned slot = SC_TMP; slot <= SC_CNT; slot++) {
			free(bd->sc->buf[slot]);
			bd->sc->buf[slot] = NULL;
			bd->sc->cap[slot] = 0;
		}
	}
	return 0;
}
