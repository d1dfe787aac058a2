/*
 * compile_fast.c - the FAST plan compiler, fast_sched_fast() (algo.h) (docs/DESIGN.md, "FAST, as this project
 * implements it"): intrinsic traffic over scale-up, sender balancing into
 * lanes, the server matrix, padding and Birkhoff decomposition (bvn.c),
 * one RAIL step per term and one implied REDIST step per stage; or, where
 * latency dominates, packed stages (see "packed stages" below): the N - 1
 * server shifts at once on disjoint rails.
 *
 * Workload: one compile per traffic matrix, on every rank of a job when the
 * executor compiles on the fly, for up to a few thousand GPUs.  The plan is
 * compact: lanes hold the O(N^2 G^2) pieces once, stages are O(K N).  All
 * arithmetic is on integers, so the plan is byte-identical everywhere.
 *
 * Balancing (step 2): for each tile (A, B != A), GPU A_i must send r_i
 * bytes to server B; the lane target is t = ceil(sum_i r_i / G).  The bytes
 * of A_i for B form a stream (messages to B_0, B_1, ... in order); a GPU
 * keeps the first min(r_i, t) bytes of its stream and donors (r_i > t) hand
 * the rest, in donor order, to receivers (r_i < t) in receiver order, each
 * receiver filled to t before the next.  So lane (A -> B, i) holds its own
 * kept prefix followed by what it received, and every lane holds at most t
 * bytes; S[A][B] = t.
 *
 * Stages (steps 4-6): the terms of the decomposition (exact, or the
 * alpha-aware choice of bvn.c), put in the requested order (with
 * balance=jit, the long term needing the least balancing first: see
 * first_least_balancing()) and trimmed: a
 * stage's budget is the most any of its lanes still holds when it runs
 * (never less than the padding-free need, so every byte still goes), and
 * terms that carry nothing -- all-idle padding -- are dropped.  The local
 * copies D[s][s] get no transfer: the checker takes an uncarried diagonal
 * as an implicit local copy.
 *
 * Pipeline (step 8): balancing first; the intrinsic step waits for the
 * first balancing step and then overlaps stage 1; stage k+1 waits for
 * stage k; redistribution k waits for stage k and overlaps stage k+1.
 * With balance=jit the handovers move in two `up` steps: first those of
 * the tiles stage 1 uses, which stage 1 waits for, then all the others,
 * which stage 2 waits for, so each lane is complete before its cursor
 * starts (checker rule: a GPU sends only what it holds) and scale-up does
 * the urgent ones first (see group_index()).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fast/algo.h"
#include "lib/compile/bvn.h"

struct move {
	uint32_t group; /* the balancing group whose step carries it (jit; else 0) */
	uint32_t key;   /* (A * G + from rail) * G + to rail */
	uint32_t piece; /* the handed piece, as it stands in its lane (plan->pieces) */
};

/* The builder's scratch slots (struct fast_scratch). */
enum { SC_LOAD, SC_S, SC_FIRST, SC_MOVES, SC_TMP, SC_CNT, SC_BUDGET, SC_TARGET };

struct builder {
	uint32_t N, G, ng;
	const uint64_t *D;
	uint64_t *load; /* N * N * G: load[(A * N + B) * G + i] = r_i of tile (A, B) */
	uint64_t *S;    /* N * N server matrix */
	uint32_t *first; /* N * N: balancing group of the first (ordered) stage with perm[A] == B */
	uint64_t nnz;    /* non-zero cross-server entries of D */
	struct move *moves;
	size_t nmoves;
	struct fast_scratch *sc; /* owns load, S, first, moves and sort_moves' arrays */
	bool keep;               /* sc is the caller's, kept for the next compile */
	bool jit;
	bool packed;             /* packed stages: tile (A, A + d) on the rails of shift d */
	uint64_t *budget;        /* packed: N - 1 budgets, shift d at d - 1 (the largest lane) */
	uint64_t *tt;            /* G: the lane targets of the tile being balanced */
	struct fast_plan *p;
	struct fast_err *err;
};

static int oom(struct builder *bd, const char *what)
{
	return fast_err_set(bd->err, FAST_ENOMEM, "fast: out of memory (%s)", what);
}

static uint64_t msg(const struct builder *bd, uint32_t a, uint32_t i, uint32_t b, uint32_t j)
{
	return bd->D[((size_t)a * bd->G + i) * bd->ng + (size_t)b * bd->G + j];
}

/* Reserve the plan's pieces and lanes once, from upper bounds: a tile's
 * lanes hold its non-zero messages plus at most one split per donor and
 * per receiver, its handovers at most as many again, the intrinsic step at
 * most N G^2.  Unused capacity is never touched, so it costs address space, not
 * memory; it saves the copies and faults of repeated doubling. */
static int reserve(struct builder *bd, uint64_t pieces, uint64_t lanes)
{
	return fast_plan_reserve(bd->p, 0, 0, 0, pieces, lanes, bd->err);
}

/* The server matrix (FAST_EINPUT on overflow) and the loads r_i of every
 * tile, which are parts of its sums, in one pass over D. */
static int loads(struct builder *bd)
{
	return fast_bvn_server_loads(bd->D, bd->N, bd->G, bd->S, bd->load, &bd->nnz, bd->err);
}

/* Donor cursor of one tile: current donor rail d, positioned at stream
 * byte t of its stream (message j, offset off). */
struct donor {
	uint32_t d, j;
	uint64_t off;
};

/* The rails a tile is balanced onto: rail i is one of them iff i % mod ==
 * res (mod = 1, res = 0: all G; packed stages: the rails of its shift),
 * each with lane target t, the others 0. */
struct rails {
	uint32_t mod, res;
	uint64_t t;
};

/* How many of G rails rs holds. */
static uint32_t rail_count(const struct rails *rs, uint32_t G)
{
	return rs->res < G ? (G - rs->res + rs->mod - 1) / rs->mod : 0;
}

/* tt[i]: rail i's lane target (tt: G). */
static void targets(const struct rails *rs, uint32_t G, uint64_t *tt)
{
	for (uint32_t i = 0, k = 0; i < G; i++) {
		tt[i] = k == rs->res ? rs->t : 0;
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

/* The shift index (d - 1) of tile (A, B) in packed stages, d = B - A mod N. */
static uint32_t shift_of(uint32_t N, uint32_t a, uint32_t b)
{
	return (b + N - a) % N - 1;
}

/* Packed stages: how many shifts share the rails at once (shift s runs on
 * the rails i % mod == s % mod, in wave s / mod). */
static uint32_t pack_mod(uint32_t N, uint32_t G)
{
	uint32_t M = N > 1 ? N - 1 : 1;
	return M < G ? M : G;
}

/* The rails of tile (A, B): all G with target S[A][B]; packed, those of
 * its shift, each with target ceil(sum r_i / their count). */
static struct rails tile_rails(const struct builder *bd, bool packed, uint32_t a, uint32_t b)
{
	const uint64_t *r = &bd->load[((size_t)a * bd->N + b) * bd->G];
	struct rails rs = { 1, 0, bd->S[(size_t)a * bd->N + b] };
	uint64_t sum = 0, cnt;

	if (!packed)
		return rs;
	rs.mod = pack_mod(bd->N, bd->G);
	rs.res = shift_of(bd->N, a, b) % rs.mod;
	for (uint32_t i = 0; i < bd->G; i++)
		sum += r[i]; /* a row sum of D's tile: S's sums did not overflow */
	cnt = rail_count(&rs, bd->G);
	rs.t = sum / cnt + (sum % cnt != 0);
	return rs;
}

/* Balance tile (A, B) onto its rails (tile_rails()): declare its non-empty
 * lanes and record handovers (a rail outside them is a donor of all it
 * holds).  A tile writes at most G^2 own pieces and G^2 + 2G handed ones
 * (a split per donor and per receiver). */
static int tile(struct builder *bd, uint32_t a, uint32_t b)
{
	uint32_t N = bd->N, G = bd->G;
	const uint64_t *r = &bd->load[((size_t)a * N + b) * G];
	const uint64_t *row = bd->D + (size_t)a * G * bd->ng + (size_t)b * G; /* D[A_0][B_0] */
	struct rails rs = tile_rails(bd, bd->packed, a, b);
	uint64_t t = rs.t, excess = 0, *tt = bd->tt;
	uint32_t group = bd->jit ? bd->first[(size_t)a * N + b] : 0;
	struct donor dn = { 0, 0, 0 };
	struct fast_plan *p = bd->p;
	struct fast_piece *pc;
	struct fast_lane *ln;
	struct move *mv;
	size_t nl = 0;
	int rc;

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
	targets(&rs, G, tt);
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

/* The balancing group of stage k under balance=jit: group 0 is the first
 * stage, group 1 all the others.  The first stage waits only for its own
 * tiles (one per server); the rest are balanced while it runs, and stage
 * 2 waits for them (scale-up is many times faster than a NIC, so that is
 * hidden behind stage 1 and its redistribution).  Measured on the
 * simulator, finer groups (2^j - 1 .. 2^(j+1) - 2, or one per stage) gain
 * nothing for alpha-aware stages, and cost compile time: each group splits
 * every sender's handovers into one more transfer. */
static uint32_t group_index(uint32_t k)
{
	return k > 0;
}

/* The first stage of stage k's group. */
static uint32_t group_start(uint32_t k)
{
	return k > 0;
}

/* Stable counting sort of the moves by (balancing group, key), in one
 * pass. */
static int sort_moves(struct builder *bd)
{
	size_t n = bd->nmoves, nk = (size_t)bd->N * bd->G * bd->G;
	size_t nb = nk * (bd->jit ? 2 : 1), *cnt, cap;
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

/* One balancing step of the moves [*at, end of stage), returning its id. */
static int balance_step(struct builder *bd, size_t *at, int prev)
{
	uint32_t G = bd->G, group = bd->moves[*at].group;
	int id = fast_plan_add_step(bd->p, FAST_STEP_EXPLICIT, FAST_TIER_UP, bd->err), rc;

	if (id < 0)
		return id;
	if (prev >= 0 && (rc = fast_plan_add_dep(bd->p, (uint32_t)id, (uint32_t)prev, false,
						 bd->err)) < 0)
		return rc;
	while (*at < bd->nmoves && bd->moves[*at].group == group) {
		/* one transfer per (from, to) pair: moves are sorted by key */
		uint32_t key = bd->moves[*at].key, from = key / G, to = key / (G * G) * G + key % G;
		size_t n = 0, end = *at;
		struct fast_piece *pc;
		struct fast_xfer *x;
		uint64_t bytes = 0;
		while (end < bd->nmoves && bd->moves[end].group == group && bd->moves[end].key == key)
			end++;
		/* copies of the lane pieces handed over, read after the space
		 * is made (it may move the array) */
		if ((rc = fast_plan_xfer_space(bd->p, 1, end - *at, &x, &pc, bd->err)) < 0)
			return rc;
		for (; *at < end; (*at)++) {
			pc[n] = bd->p->pieces[bd->moves[*at].piece];
			bytes += pc[n++].len; /* part of a row sum of D: no overflow */
		}
		*x = (struct fast_xfer){ from, to, 0, (uint32_t)n, bytes };
		if ((rc = fast_plan_commit_xfers(bd->p, 1, bd->err)) < 0)
			return rc;
	}
	return id;
}

/* Intrinsic traffic: tiles (A, A) over scale-up, one transfer per pair. */
static int intrinsic_step(struct builder *bd, int after)
{
	uint32_t N = bd->N, G = bd->G;
	bool any = false;
	int id = -1, rc;

	for (uint32_t a = 0; a < N && !any; a++)
		for (uint32_t i = 0; i < G && !any; i++)
			for (uint32_t j = 0; j < G && !any; j++)
				any = i != j && msg(bd, a, i, a, j);
	if (!any)
		return 0;
	id = fast_plan_add_step(bd->p, FAST_STEP_EXPLICIT, FAST_TIER_UP, bd->err);
	if (id < 0)
		return id;
	if (after >= 0 && (rc = fast_plan_add_dep(bd->p, (uint32_t)id, (uint32_t)after, false,
						  bd->err)) < 0)
		return rc;
	/* one transfer of one piece per pair, written in place and committed
	 * once per server */
	for (uint32_t a = 0; a < N; a++) {
		struct fast_xfer *x;
		struct fast_piece *pc;
		size_t k = 0;
		if ((rc = fast_plan_xfer_space(bd->p, (size_t)G * G, (size_t)G * G, &x, &pc,
					       bd->err)) < 0)
			return rc;
		for (uint32_t i = 0; i < G; i++)
			for (uint32_t j = 0; j < G; j++) {
				uint64_t len = msg(bd, a, i, a, j);
				if (i == j || !len)
					continue;
				x[k] = (struct fast_xfer){ a * G + i, a * G + j, 0, 1, len };
				pc[k++] = (struct fast_piece){ a * G + i, a * G + j, 0, len };
			}
		if ((rc = fast_plan_commit_xfers(bd->p, k, bd->err)) < 0)
			return rc;
	}
	return 0;
}

/* Reserve the step graph once: steps (a rail and a redistribution per
 * stage, two balancing steps, the intrinsic step), their dependencies (at
 * most three per stage and two more) and transfers (intrinsic pairs and at
 * most one per handover): the doubling of the plan builder cost a twentieth
 * of a small compile. */
static int reserve_graph(struct builder *bd, uint32_t K)
{
	return fast_plan_reserve(bd->p, 2 * (uint64_t)K + 4, 3 * (uint64_t)K + 4,
				 (uint64_t)bd->N * bd->G * bd->G + bd->nmoves + 1, 0, 0, bd->err);
}

static int steps(struct builder *bd, const struct fast_bvn *bv)
{
	size_t at = 0;
	int prev_bal = -1, prev_rail = -1, rc;
	bool intrinsic_done = false;

	if (bd->nmoves && !bd->jit) {
		prev_bal = balance_step(bd, &at, -1);
		if (prev_bal < 0)
			return prev_bal;
	}
	for (uint32_t k = 0; k < bv->nterms; k++) {
		int bal = -1, rail;
		if (bd->jit && at < bd->nmoves && bd->moves[at].group == group_index(k) &&
		    group_start(k) == k) {
			bal = balance_step(bd, &at, prev_bal);
			if (bal < 0)
				return bal;
			prev_bal = bal;
		}
		if (!intrinsic_done) {
			if ((rc = intrinsic_step(bd, prev_bal)) < 0)
				return rc;
			intrinsic_done = true;
		}
		rail = fast_plan_add_step(bd->p, FAST_STEP_RAIL, FAST_TIER_OUT, bd->err);
		if (rail < 0)
			return rail;
		if (prev_rail >= 0 &&
		    (rc = fast_plan_add_dep(bd->p, (uint32_t)rail, (uint32_t)prev_rail, false, bd->err)) < 0)
			return rc;
		if (bal >= 0 || (k == 0 && prev_bal >= 0)) {
			rc = fast_plan_add_dep(bd->p, (uint32_t)rail,
					       (uint32_t)(bal >= 0 ? bal : prev_bal), false, bd->err);
			if (rc < 0)
				return rc;
		}
		rc = fast_plan_set_perm(bd->p, bv->perm + (size_t)k * bd->N, bv->weight[k], bd->err);
		if (rc < 0)
			return rc;
		rc = fast_plan_add_step(bd->p, FAST_STEP_REDIST, FAST_TIER_UP, bd->err);
		if (rc < 0)
			return rc;
		if ((rc = fast_plan_add_dep(bd->p, (uint32_t)rc, (uint32_t)rail, false, bd->err)) < 0 ||
		    (rc = fast_plan_set_redist(bd->p, (uint32_t)rail, bd->err)) < 0)
			return rc;
		prev_rail = rail;
	}
	if (!intrinsic_done && (rc = intrinsic_step(bd, prev_bal)) < 0)
		return rc;
	return 0;
}

/* --- packed stages ----------------------------------------------------------
 * Where latency dominates, N - 1 chained stages cost N - 1 scale-out steps
 * whatever the size.  One-to-one is per NIC and a server has G of them, so
 * the N - 1 shifts P_d(A) = A + d mod N (each server pair in exactly one)
 * can run at once on disjoint rails: shift d - 1 = s gets the rails
 * i % mod == s % mod, mod = min(N - 1, G), in wave s / mod (one wave when
 * N - 1 <= G).  Tile (A, A + d) is balanced onto its shift's rails only;
 * one RAIL step per shift, its budget the largest lane (the lane target,
 * ceil(tile sum / rails): every tile's rails hold its sum, none more than
 * the target, so one holds it), waiting for balancing and, from wave 1
 * on, for the step of the wave before on the same rails, so a NIC serves
 * one step at a time (the checker's rule).  The price: more balancing
 * over scale-up (a tile moves to a share of the rails) and every
 * redistribution exposed at once at the end. */

/* The per-step costs and rates of the model (as the alpha-aware search and
 * split_tail: a = latency + step overhead of a tier, B = fast_tier_Bps). */
struct cost {
	double a_up, a_out, Bu, Bo;
	double rho; /* seconds per lane byte of a redistribution (split_tail) */
};

static struct cost cost_of(const struct fast_topo *topo)
{
	uint32_t G = topo->gpus;
	struct cost c;

	c.a_up = fast_tier_step_s(&topo->up);
	c.a_out = fast_tier_step_s(&topo->out);
	c.Bu = fast_tier_Bps(&topo->up);
	c.Bo = fast_tier_Bps(&topo->out);
	if (!(c.Bu > 0))
		c.Bu = 1; /* validated topologies never get here */
	if (!(c.Bo > 0))
		c.Bo = 1;
	c.rho = G < 2 ? 0 : (topo->up_kind == FAST_UP_MESH ? 1.0 : (double)(G - 1)) / G / c.Bu;
	return c;
}

/* What balancing costs either way, from one pass over the tiles: per
 * GPU, the bytes it hands over or receives (at most its deficit) in each
 * balancing step, group 0 -- the tiles of the first term (staged; first =
 * its permutation, NULL when there is none) or of wave 0 (packed), which
 * the first stage (wave) waits for -- and group 1, the others, which the
 * second waits for (all are group 0 when balance=upfront).  bal[packed]
 * [group] is the step's modelled time: a_up plus the busiest switch port
 * over B_up, 0 when nothing moves.  Also the packed budgets: shift s's is
 * the largest lane target of its tiles (bd->budget). */
struct balance_cost {
	double bal[2][2];
};

static int balance_costs(struct builder *bd, const struct cost *c, const uint32_t *first,
			 struct balance_cost *out)
{
	uint32_t N = bd->N, G = bd->G, mod = pack_mod(N, G);
	uint64_t most[2][2] = { { 0, 0 }, { 0, 0 } }, *acc;

	/* acc[(packed * 2 + group) * 2 + recv][i]: the server's GPU i */
	acc = fast_scratch_room(bd->sc, SC_TMP, (size_t)8 * G, sizeof *acc);
	if (!acc)
		return oom(bd, "stage model");
	memset(bd->budget, 0, (size_t)N * sizeof *bd->budget);
	for (uint32_t a = 0; a < N; a++) {
		memset(acc, 0, (size_t)8 * G * sizeof *acc);
		for (uint32_t b = 0; b < N; b++) {
			const uint64_t *r = &bd->load[((size_t)a * N + b) * G];
			uint64_t ts = bd->S[(size_t)a * N + b];
			struct rails rs;
			uint32_t s, gp, gs;
			if (b == a || ts == 0)
				continue;
			s = shift_of(N, a, b);
			rs = tile_rails(bd, true, a, b); /* the packed lane targets, as tile() */
			targets(&rs, G, bd->tt);
			if (rs.t > bd->budget[s])
				bd->budget[s] = rs.t;
			gp = bd->jit && s >= mod;
			gs = bd->jit && first && first[a] != b;
			for (uint32_t i = 0; i < G; i++) {
				uint64_t t = bd->tt[i];
				uint64_t *ap = acc + (size_t)(4 + gp * 2) * G, *as = acc + (size_t)gs * 2 * G;
				if (r[i] > t)
					ap[i] += r[i] - t;
				else
					ap[G + i] += t - r[i];
				if (r[i] > ts)
					as[i] += r[i] - ts;
				else
					as[G + i] += ts - r[i];
			}
		}
		for (uint32_t q = 0; q < 8; q++)
			for (uint32_t i = 0; i < G; i++)
				if (acc[(size_t)q * G + i] > most[q / 4][q / 2 % 2])
					most[q / 4][q / 2 % 2] = acc[(size_t)q * G + i];
	}
	for (int p = 0; p < 2; p++)
		for (int g = 0; g < 2; g++)
			out->bal[p][g] = most[p][g] ? c->a_up + (double)most[p][g] / c->Bu : 0;
	return 0;
}

/* Modelled time of the packed schedule: wave 0 starts after its
 * balancing, a later wave after the one before on its rails and the
 * second balancing step; then the last wave's redistribution. */
static double packed_s(const struct builder *bd, const struct cost *c, const struct balance_cost *bc)
{
	uint32_t M = bd->N - 1, mod = pack_mod(bd->N, bd->G);
	double bal0 = bc->bal[1][0], bal1 = bal0 + bc->bal[1][1];
	double end = 0;

	for (uint32_t res = 0; res < mod; res++) {
		double t = bal0;
		uint64_t last = 0;
		for (uint32_t s = res; s < M; s += mod)
			if (bd->budget[s]) {
				if (s >= mod && t < bal1)
					t = bal1;
				t += c->a_out + (double)bd->budget[s] / c->Bo;
				last = bd->budget[s];
			}
		if (last)
			t += c->a_up + (double)last * c->rho;
		if (t > end)
			end = t;
	}
	return end;
}

/* Modelled time of the staged schedule bv (ordered, trimmed, split):
 * the first stage after its balancing, the second after the other
 * balancing step too, the rest (fast_bvn_time), the last stage's
 * redistribution. */
static double staged_s(const struct cost *c, const struct fast_bvn *bv,
		       const struct balance_cost *bc)
{
	struct fast_bvn_model m = { c->a_out, c->Bo };
	double t;

	if (bv->nterms == 0)
		return 0;
	t = bc->bal[0][0] + fast_bvn_time(bv, &m);
	if (bv->nterms > 1) { /* stage 2 waits for the second balancing step */
		double first = c->a_out + (double)bv->weight[0] / c->Bo;
		double wait = bc->bal[0][1] - first;
		if (wait > 0)
			t += wait;
	}
	return t + c->a_up + (double)bv->weight[bv->nterms - 1] * c->rho;
}

/* The packed steps: balancing (with jit, wave 0's tiles first, the rest
 * while wave 0 runs), the intrinsic step, per shift a RAIL step and its
 * REDIST. */
static int steps_packed(struct builder *bd)
{
	uint32_t N = bd->N, M = N - 1, mod = pack_mod(N, bd->G);
	uint32_t *perm;
	int *last, bal0 = -1, bal1 = -1, rc = 0;
	size_t at = 0;

	perm = fast_calloc(N, sizeof *perm);
	last = fast_calloc(mod, sizeof *last);
	if (!perm || !last) {
		rc = oom(bd, "stages");
		goto out;
	}
	for (uint32_t k = 0; k < mod; k++)
		last[k] = -1;
	if (bd->nmoves && bd->moves[0].group == 0 && (bal0 = balance_step(bd, &at, -1)) < 0) {
		rc = bal0;
		goto out;
	}
	if ((rc = intrinsic_step(bd, bal0)) < 0)
		goto out;
	for (uint32_t s = 0; s < M; s++) {
		int rail, deps[2];
		if (s == mod && at < bd->nmoves && (bal1 = balance_step(bd, &at, bal0)) < 0) {
			rc = bal1;
			goto out;
		}
		if (!bd->budget[s])
			continue;
		for (uint32_t a = 0; a < N; a++)
			perm[a] = (a + s + 1) % N;
		if ((rail = fast_plan_add_step(bd->p, FAST_STEP_RAIL, FAST_TIER_OUT, bd->err)) < 0) {
			rc = rail;
			goto out;
		}
		/* the balancing of its tiles, the step before on its rails */
		deps[0] = s < mod ? bal0 : bal1 >= 0 ? bal1 : bal0;
		deps[1] = last[s % mod];
		if (deps[0] >= 0 && deps[0] == deps[1])
			deps[1] = -1;
		for (int k = 0; k < 2 && rc >= 0; k++)
			if (deps[k] >= 0)
				rc = fast_plan_add_dep(bd->p, (uint32_t)rail, (uint32_t)deps[k], false, bd->err);
		if (rc < 0 || (rc = fast_plan_set_perm(bd->p, perm, bd->budget[s], bd->err)) < 0 ||
		    (rc = fast_plan_add_step(bd->p, FAST_STEP_REDIST, FAST_TIER_UP, bd->err)) < 0)
			goto out;
		if ((rc = fast_plan_add_dep(bd->p, (uint32_t)rc, (uint32_t)rail, false, bd->err)) < 0 ||
		    (rc = fast_plan_set_redist(bd->p, (uint32_t)rail, bd->err)) < 0)
			goto out;
		last[s % mod] = rail;
		rc = 0;
	}
out:
	free(perm);
	free(last);
	return rc;
}

/* Split the last stage while that pays: its redistribution over
 * scale-up is exposed after the last rail step, so the last term
 * (perm, w) becomes (perm, w - x) then (perm, x), with x chosen so that
 * the redistribution of the w - x part takes as long as the rail time of
 * the x part, and only the x part's redistribution is left exposed.  One
 * split saves (w - x) * rho of exposure for one more stage (out and up
 * per-step costs); each lane still sends the same bytes to the same
 * server, in two parts.  rho and beta are seconds per lane byte of
 * redistribution (a share (G - 1) / G crosses a GPU's switch port; on a
 * mesh each link carries 1 / G) and of a rail stage.  The stage count
 * stays within the Birkhoff bound n^2 - 2n + 2. */
static int split_tail(struct fast_bvn *bv, const struct fast_topo *topo, struct fast_err *err)
{
	uint32_t n = bv->n, G = topo->gpus;
	double up = fast_tier_Bps(&topo->up), out = fast_tier_Bps(&topo->out);
	double beta, rho, cost;

	if (bv->nterms == 0 || G < 2 || !(up > 0) || !(out > 0))
		return 0;
	beta = 1 / out;
	rho = (topo->up_kind == FAST_UP_MESH ? 1.0 : (double)(G - 1)) / G / up;
	cost = fast_tier_step_s(&topo->out) + fast_tier_step_s(&topo->up);
	for (int splits = 0; splits < 16 && bv->nterms < fast_bvn_max_terms(n); splits++) {
		uint64_t w = bv->weight[bv->nterms - 1], x;
		uint32_t *perm;
		uint64_t *wt;
		x = (uint64_t)((double)w * (rho / (rho + beta)));
		if (x == 0 || x >= w || (double)(w - x) * rho <= cost)
			break;
		perm = fast_reallocarray(bv->perm, ((size_t)bv->nterms + 1) * n, sizeof *perm);
		if (!perm)
			return fast_err_set(err, FAST_ENOMEM, "fast: out of memory (stages)");
		bv->perm = perm;
		wt = fast_reallocarray(bv->weight, (size_t)bv->nterms + 1, sizeof *wt);
		if (!wt)
			return fast_err_set(err, FAST_ENOMEM, "fast: out of memory (stages)");
		bv->weight = wt;
		memcpy(perm + (size_t)bv->nterms * n, perm + ((size_t)bv->nterms - 1) * n,
		       n * sizeof *perm);
		wt[bv->nterms - 1] = w - x;
		wt[bv->nterms++] = x;
	}
	return 0;
}

/* balance=jit: stage 1 waits for the balancing of its tiles with every
 * NIC idle, while later stages' balancing hides behind stage 1.  So among
 * the terms within a quarter of the largest weight (a stage long enough
 * to hide the rest), the one whose tiles need the least balancing goes
 * first -- cost: the largest excess of one GPU over its lane target, the
 * longest handover -- and the others keep their order.  What it gains
 * (FAST / bound with and without it) is in docs/algorithms.md, "Compiler options,
 * measured".  Switching only when the cost at least halves, or choosing by
 * a model of both balancing steps against the stage, did worse on average. */
static int first_least_balancing(struct builder *bd, struct fast_bvn *bv)
{
	uint32_t N = bd->N, G = bd->G, best = 0, *row;
	uint64_t best_cost = UINT64_MAX, wmax = 0, w;

	for (uint32_t k = 0; k < bv->nterms; k++)
		if (bv->weight[k] > wmax)
			wmax = bv->weight[k];
	for (uint32_t k = 0; k < bv->nterms; k++) {
		uint64_t cost = 0;
		if (bv->weight[k] < wmax - wmax / 4)
			continue;
		for (uint32_t a = 0; a < N; a++) {
			uint32_t b = bv->perm[(size_t)k * N + a];
			uint64_t t = bd->S[(size_t)a * N + b];
			const uint64_t *r = &bd->load[((size_t)a * N + b) * G];
			if (b == a)
				continue;
			for (uint32_t i = 0; i < G; i++)
				if (r[i] > t && r[i] - t > cost)
					cost = r[i] - t;
		}
		if (cost < best_cost) {
			best_cost = cost;
			best = k;
		}
	}
	if (best == 0)
		return 0;
	row = fast_calloc(N, sizeof *row);
	if (!row)
		return oom(bd, "stage order");
	memcpy(row, bv->perm + (size_t)best * N, N * sizeof *row);
	memmove(bv->perm + N, bv->perm, (size_t)best * N * sizeof *bv->perm);
	memcpy(bv->perm, row, N * sizeof *row);
	w = bv->weight[best];
	memmove(bv->weight + 1, bv->weight, best * sizeof *bv->weight);
	bv->weight[0] = w;
	free(row);
	return 0;
}

/* Decompose the server matrix as the options say, ordered and trimmed. */
static int decompose(struct builder *bd, const struct fast_topo *topo,
		     const struct fast_algo_opts *o, struct fast_bvn *bv, uint64_t *quantum)
{
	uint32_t N = bd->N;
	int rc;

	if (o->stages == FAST_STAGES_EXACT) {
		/* q = 1: pad a copy and decompose it exactly */
		rc = fast_bvn_quantized(bd->S, N, 1, bv, bd->err);
		*quantum = 1;
	} else {
		struct fast_bvn_model m;
		struct fast_bvn_auto_info info;
		m.stage_s = fast_tier_step_s(&topo->out);
		m.Bps = fast_tier_Bps(&topo->out);
		if (!(m.Bps > 0))
			m.Bps = 1; /* validated topologies never get here */
		rc = fast_bvn_auto(bd->S, N, &m, bv, &info, bd->err);
		*quantum = info.quantum;
	}
	if (rc < 0)
		return rc;
	rc = fast_bvn_sort(bv, o->order == FAST_ORDER_LARGEST_FIRST    ? FAST_BVN_LARGEST_FIRST
			       : o->order == FAST_ORDER_SMALLEST_FIRST ? FAST_BVN_SMALLEST_FIRST
								       : FAST_BVN_AS_FOUND,
			   bd->err);
	if (rc < 0) {
		fast_bvn_free(bv);
		return rc;
	}
	if (bd->jit && (rc = first_least_balancing(bd, bv)) < 0) {
		fast_bvn_free(bv);
		return rc;
	}
	fast_bvn_trim(bv, bd->S);
	/* the parts of a split term stay trimmed: the lane that needed w
	 * needs w - x of the first part and x of the second */
	if ((rc = split_tail(bv, topo, bd->err)) < 0) {
		fast_bvn_free(bv);
		return rc;
	}
	return 0;
}

/* Packed or staged (stages=auto: the one of less modelled time; packed
 * only where may_pack: the token compiler, which refuses stages=packed,
 * passes false), then the plan. */
static int compile(const struct fast_topo *topo, const uint64_t *D,
		   const struct fast_algo_opts *opts, bool may_pack, struct fast_plan *plan,
		   struct fast_scratch *scratch, struct fast_err *err)
{
	struct fast_scratch own = { { 0 }, { 0 } };
	struct builder bd;
	struct fast_plan p;
	struct fast_bvn bv = { 0 };
	struct fast_algo_opts defaults;
	uint64_t quantum = 1, tiles;
	bool chose = false; /* stages=auto chose packed */
	int rc;

	if (!opts) {
		fast_algo_opts_default(&defaults);
		opts = &defaults;
	}
	p = *plan; /* built locally, handed back at the end either way */
	fast_plan_reset(&p, topo->servers, topo->gpus, "fast");
	*plan = p;
	if (topo->servers == 0 || topo->gpus == 0 ||
	    (uint64_t)topo->servers * topo->gpus > INT32_MAX)
		return fast_err_set(err, FAST_EINPUT, "fast: bad topology size %u x %u",
				    topo->servers, topo->gpus);
	memset(&bd, 0, sizeof bd);
	bd.N = topo->servers;
	bd.G = topo->gpus;
	bd.ng = bd.N * bd.G;
	bd.D = D;
	bd.jit = opts->balance == FAST_BALANCE_JIT;
	bd.err = err;
	bd.p = &p;
	bd.sc = scratch ? scratch : &own;
	bd.keep = scratch != NULL;
	bd.load = fast_scratch_room(bd.sc, SC_LOAD, (size_t)bd.N * bd.N * bd.G, sizeof *bd.load);
	bd.S = fast_scratch_room(bd.sc, SC_S, (size_t)bd.N * bd.N, sizeof *bd.S);
	bd.first = fast_scratch_room(bd.sc, SC_FIRST, (size_t)bd.N * bd.N, sizeof *bd.first);
	bd.budget = fast_scratch_room(bd.sc, SC_BUDGET, bd.N, sizeof *bd.budget);
	bd.tt = fast_scratch_room(bd.sc, SC_TARGET, bd.G, sizeof *bd.tt);
	bd.packed = may_pack && opts->stages == FAST_STAGES_PACKED && bd.N > 1;
	if (!bd.load || !bd.S || !bd.first || !bd.budget || !bd.tt) {
		rc = oom(&bd, "server matrix");
		goto out;
	}
	/* loads() writes S and every load but the unread diagonal tiles' */
	memset(bd.first, 0, (size_t)bd.N * bd.N * sizeof *bd.first);
	tiles = (uint64_t)bd.N * (bd.N - 1);
	if ((rc = loads(&bd)) < 0 ||
	    (rc = reserve(&bd, 2 * (bd.nnz + 2 * tiles * bd.G) + (uint64_t)bd.N * bd.G * bd.G,
			  tiles * bd.G)) < 0 ||
	    (!bd.packed && (rc = decompose(&bd, topo, opts, &bv, &quantum)) < 0))
		goto out;
	/* two servers: one shift on all rails, the staged schedule itself
	 * (split_tail aside): auto considers packing from three on */
	if (may_pack && (bd.packed || (bd.N > 2 && opts->stages == FAST_STAGES_AUTO))) {
		struct cost c = cost_of(topo);
		struct balance_cost bc;
		if ((rc = balance_costs(&bd, &c, bv.nterms ? bv.perm : NULL, &bc)) < 0)
			goto out;
		if (!bd.packed && packed_s(&bd, &c, &bc) < staged_s(&c, &bv, &bc)) {
			bd.packed = chose = true;
			fast_bvn_free(&bv);
		}
	}
	if (bd.packed && bd.jit) /* group 1: the waves after the first */
		for (uint32_t a = 0; a < bd.N; a++)
			for (uint32_t b = 0; b < bd.N; b++)
				bd.first[(size_t)a * bd.N + b] =
					a != b && shift_of(bd.N, a, b) >= pack_mod(bd.N, bd.G);
	for (size_t k = bd.jit ? bv.nterms : 0; k-- > 0;)
		for (uint32_t a = 0; a < bd.N; a++)
			bd.first[(size_t)a * bd.N + bv.perm[k * bd.N + a]] = group_index((uint32_t)k);
	for (uint32_t a = 0; a < bd.N; a++)
		for (uint32_t b = 0; b < bd.N; b++)
			if (a != b && (rc = tile(&bd, a, b)) < 0)
				goto out;
	if ((rc = reserve(&bd, p.npieces + bd.nmoves + (uint64_t)bd.N * bd.G * bd.G, 0)) < 0 ||
	    (rc = sort_moves(&bd)) < 0 ||
	    (rc = reserve_graph(&bd, bd.packed ? bd.N - 1 : bv.nterms)) < 0 ||
	    (rc = bd.packed ? steps_packed(&bd) : steps(&bd, &bv)) < 0)
		goto out;
	{
		/* the plan's record of its options, spelled as the table spells them */
		char order[32], balance[32], stages[32] = "exact";
		fast_algo_option_print(fast_algo_option_find("order"), opts, order, sizeof order);
		fast_algo_option_print(fast_algo_option_find("balance"), opts, balance, sizeof balance);
		if (bd.packed)
			snprintf(stages, sizeof stages, chose ? "auto(packed)" : "packed");
		else if (opts->stages != FAST_STAGES_EXACT)
			snprintf(stages, sizeof stages, "auto(q=%llu)", (unsigned long long)quantum);
		snprintf(p.options, sizeof p.options, "stages=%s order=%s balance=%s", stages, order,
			 balance);
	}
out:
	if (rc < 0)
		fast_plan_reset(&p, bd.N, bd.G, "fast");
	*plan = p;
	fast_bvn_free(&bv);
	fast_scratch_free(&own);
	return rc;
}

int fast_sched_fast_into(const struct fast_topo *topo, const uint64_t *D,
			   const struct fast_algo_opts *opts, struct fast_plan *plan,
			   struct fast_scratch *scratch, struct fast_err *err)
{
	return compile(topo, D, opts, true, plan, scratch, err);
}

/* fast_sched_fast and fast_sched_fast_staged */
static int compile_trimmed(const struct fast_topo *topo, const uint64_t *D,
			   const struct fast_algo_opts *opts, bool may_pack, struct fast_plan *out,
			   struct fast_err *err)
{
	struct fast_plan p;
	int rc;

	memset(&p, 0, sizeof p);
	if ((rc = compile(topo, D, opts, may_pack, &p, NULL, err)) < 0) {
		fast_plan_free(&p);
		return rc;
	}
	/* give back a large unused reserve (mapped memory: shrinking is a
	 * remap); small ones stay, the allocator reuses them best as they are */
	fast_plan_trim(&p, 16u << 20);
	*out = p;
	return 0;
}

int fast_sched_fast_staged(const struct fast_topo *topo, const uint64_t *D,
			     const struct fast_algo_opts *opts, struct fast_plan *out,
			     struct fast_err *err)
{
	return compile_trimmed(topo, D, opts, false, out, err);
}

int fast_sched_fast(const struct fast_topo *topo, const uint64_t *D,
		      const struct fast_algo_opts *opts, struct fast_plan *out,
		      struct fast_err *err)
{
	return compile_trimmed(topo, D, opts, true, out, err);
}
