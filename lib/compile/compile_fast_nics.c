/*
 * compile_fast_nics.c - FAST on NICs as they are (docs/algorithms.md,
 * "FAST on NICs as they are, measured"): a server's GPUs reach the scale-out
 * tier through ports (topo.h) that may differ in rate -- a slow NIC, a
 * failed one (rate 0), K NICs that do not divide evenly among G GPUs.
 * FAST then balances each tile so that every NIC finishes at the same
 * time, and moves nothing over a NIC that is down.
 *
 * Weights.  GPU g's share of its port (fast_topo_gpu_out_Bps) is its
 * weight, in fixed point: NIC_W1 is the fastest share r0, 0 a GPU behind
 * a down port.  Pairing.  Tile (A, B) sends from A's GPUs to B's over
 * pairs (A_i, B_m), one peer each: every server lists its GPUs by port
 * size, then port rate (fastest first), then index, and position j of A
 * pairs with position j of B, so fast ports meet fast ports and each
 * port meets one port (NIC-level one-to-one; equal-sized ports line up
 * because every server has the same ports).  Matching sorted rates
 * maximises sum_j min(w_Aj, w_Bj), the pair's capacity C_AB.  On equal
 * shares every list is 0..G-1: pair i is rail i.  Ports of unequal size
 * (K < G not dividing G) pair with their size.  Where that leaves two
 * servers no live pair (the live NICs of one all serve a number of GPUs
 * that no live NIC of the other does), every server lists the GPUs
 * behind a live NIC first instead: position 0 is live on every server
 * (a valid topology leaves each a live NIC), so every tile has a pair,
 * at the price of a NIC that may meet two.
 *
 * Time, not bytes.  Tile (A, B) of R bytes needs T = ceil(R W1 / C_AB)
 * in r0-bytes (the bytes a lane of weight W1 moves in that time); pair j
 * gets the lane target ceil(T c_j / W1), c_j = min(w_Aj, w_Bj), so every
 * pair of the tile finishes at T / r0 and a pair with a down end gets
 * nothing.  S[A][B] = T is decomposed as before (the alpha-aware search
 * at r0), and a stage of weight w lets pair j send ceil(w c_j / W1) more
 * bytes of its lane: every lane of a stage runs for w / r0, so the
 * stage's time is its weight at r0 whatever the rates.  A RAIL step
 * cannot say that (its budget is one byte count for every lane, and
 * every lane goes rail i to rail i), so such stages are explicit steps:
 * an out step of the lanes' pieces, then its redistribution over
 * scale-up as a REDIST would expand (plan.h), and the lanes, which only
 * fed them, are dropped from the plan.
 *
 * The token compiler takes the out steps alone (bd->redist false) and
 * writes its own redistribution, which replicates a token to every
 * destination on the server (compile_tokens.c).  Packed stages stay
 * RAIL steps: each tile is in one, rail-aligned on its shift's ports
 * (fast_nics_packed_targets), so one budget empties every lane and
 * every lane of a tile ends together.
 *
 * Cost: nothing on an ideal fabric (one test of the topology); WEIGHTED
 * adds O(N G) weights and orders, O(G) per tile, and per stage O(N G)
 * plus the pieces it sends (each lane is read once, through its cursor)
 * and redistributes.  All arithmetic after the weights is integer.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/compile/compile_fast_internal.h"

__extension__ typedef unsigned __int128 u128;

/* Where a lane's next stage starts: piece j, byte off within it. */
struct cursor {
	uint32_t j;
	uint64_t off;
};

struct nics {
	uint32_t K;         /* NICs per server */
	uint32_t *port;     /* G: the port of each local GPU */
	uint32_t *wt;       /* N * G: GPU weights (NIC_W1 = r0, 0 = down) */
	uint32_t *ord;      /* N * G: server A's position j -> local GPU */
	uint32_t *pos;      /* N * G: server A's local GPU -> position */
	uint32_t *lane;     /* explicit: N * N * G, lane (A, B, i) + 1 (0: none) */
	struct cursor *cur; /* explicit: per lane */
	size_t *cnt;        /* explicit: G + 1, redistribution's counting sort */
	uint64_t *bytes;    /* explicit: G */
};

void fast_nics_free(struct builder *bd)
{
	struct nics *nx = bd->nx;

	free(bd->budget_time);
	bd->budget_time = NULL;
	if (!nx)
		return;
	free(nx->wt);
	free(nx->port);
	free(nx->ord);
	free(nx->pos);
	free(nx->lane);
	free(nx->cur);
	free(nx->cnt);
	free(nx->bytes);
	free(nx);
	bd->nx = NULL;
}

/* Whether local GPU o goes before local GPU i in a server's position
 * order (see the top): port size, weight (fastest first), index; with
 * live_first, a GPU behind a live NIC before one behind a down one. */
static bool goes_before(const struct fast_topo *topo, const uint32_t *wt, bool live_first,
			uint32_t o, uint32_t i)
{
	uint32_t so = fast_topo_port_gpus(topo, fast_topo_port_of(topo, o));
	uint32_t si = fast_topo_port_gpus(topo, fast_topo_port_of(topo, i));

	if (live_first && (wt[o] > 0) != (wt[i] > 0))
		return wt[o] > 0;
	return so < si || (so == si && wt[o] >= wt[i]);
}

/* Server s's position order, ord (position -> GPU) and pos (its inverse);
 * an insertion sort (G is small), stable on the index. */
static void order_server(const struct fast_topo *topo, const uint32_t *wt, bool live_first,
			 uint32_t *ord, uint32_t *pos)
{
	uint32_t G = topo->gpus;

	for (uint32_t i = 0; i < G; i++) {
		uint32_t j = i;
		while (j > 0 && !goes_before(topo, wt, live_first, ord[j - 1], i)) {
			ord[j] = ord[j - 1];
			j--;
		}
		ord[j] = i;
	}
	for (uint32_t j = 0; j < G; j++)
		pos[ord[j]] = j;
}

/* The shares of every GPU: the mode, r0, and when they differ the
 * weights. */
static bool shares(struct builder *bd, const struct fast_topo *topo, double *share)
{
	bool uniform = true;
	double r0 = 0;

	for (uint32_t g = 0; g < bd->ng; g++) {
		share[g] = fast_topo_gpu_out_Bps(topo, g);
		uniform = uniform && share[g] == share[0];
		if (share[g] > r0)
			r0 = share[g];
	}
	bd->r0 = r0 > 0 ? r0 : 1; /* a validated topology has a live NIC */
	return uniform;
}

static void order_servers(struct builder *bd, const struct fast_topo *topo, bool live_first)
{
	struct nics *nx = bd->nx;

	for (uint32_t s = 0; s < bd->N; s++)
		order_server(topo, nx->wt + (size_t)s * bd->G, live_first, nx->ord + (size_t)s * bd->G,
			     nx->pos + (size_t)s * bd->G);
}

static bool tile_pairs(const struct builder *bd, uint32_t a, uint32_t b);

/* Whether every two servers have a pair of live NICs (O(N^2 G)). */
static bool every_tile_pairs(const struct builder *bd)
{
	for (uint32_t a = 0; a < bd->N; a++)
		for (uint32_t b = 0; b < bd->N; b++)
			if (a != b && !tile_pairs(bd, a, b))
				return false;
	return true;
}

int fast_nics_setup(struct builder *bd, const struct fast_topo *topo)
{
	uint32_t N = bd->N, G = bd->G;
	struct nics *nx;
	double *share;
	bool uniform;

	bd->P = G;
	bd->pdiv = 1;
	bd->nx = NULL;
	/* nics 0: a structure filled by hand before NICs were counted, which
	 * means the default, one per GPU */
	if (topo->nics == 0 || fast_topo_nics_ideal(topo)) {
		bd->mode = NICS_IDEAL;
		bd->r0 = fast_tier_Bps(&topo->out);
		return 0;
	}
	share = fast_calloc(bd->ng, sizeof *share);
	if (!share)
		return oom(bd, "NICs");
	uniform = shares(bd, topo, share);
	/* equal shares on equal ports: the ideal path at r0, packed stages
	 * on whole ports (two shifts never share a NIC) */
	if (uniform && (topo->nics >= G || G % topo->nics == 0)) {
		free(share);
		bd->mode = NICS_UNIFORM;
		if (topo->nics < G) {
			bd->P = topo->nics;
			bd->pdiv = G / topo->nics;
		}
		return 0;
	}
	bd->mode = NICS_WEIGHTED;
	bd->P = fast_topo_ports(topo); /* packed stages: whole ports */
	nx = fast_calloc(1, sizeof *nx);
	if (nx) {
		nx->wt = fast_calloc((size_t)N * G, sizeof *nx->wt);
		nx->port = fast_calloc(G, sizeof *nx->port);
		nx->ord = fast_calloc((size_t)N * G, sizeof *nx->ord);
		nx->pos = fast_calloc((size_t)N * G, sizeof *nx->pos);
	}
	bd->nx = nx;
	bd->budget_time = fast_calloc(N, sizeof *bd->budget_time);
	if (!nx || !nx->wt || !nx->port || !nx->ord || !nx->pos || !bd->budget_time) {
		free(share);
		return oom(bd, "NICs");
	}
	nx->K = topo->nics;
	for (uint32_t i = 0; i < G; i++)
		nx->port[i] = fast_topo_port_of(topo, i);
	for (uint32_t g = 0; g < bd->ng; g++) {
		double w = share[g] / bd->r0 * NIC_W1 + 0.5;
		nx->wt[g] = share[g] > 0 ? (w < 1 ? 1 : w > NIC_W1 ? NIC_W1 : (uint32_t)w) : 0;
	}
	free(share);
	order_servers(bd, topo, false);
	if (!every_tile_pairs(bd))
		order_servers(bd, topo, true);
	return 0;
}

/* The peer (local index on B) of sender A_i in tile (A, B). */
static inline uint32_t peer(const struct nics *nx, uint32_t G, uint32_t a, uint32_t b, uint32_t i)
{
	return nx->ord[(size_t)b * G + nx->pos[(size_t)a * G + i]];
}

/* Capacity of pair (A_i, its peer on B): the slower end's weight. */
static inline uint64_t pair_w(const struct nics *nx, uint32_t G, uint32_t a, uint32_t b, uint32_t i)
{
	uint32_t x = nx->wt[(size_t)a * G + i], y = nx->wt[(size_t)b * G + peer(nx, G, a, b, i)];

	return x < y ? x : y;
}

/* ceil(x * y / z), z > 0; false when it exceeds 64 bits. */
static bool mul_div_up(uint64_t x, uint64_t y, uint64_t z, uint64_t *out)
{
	u128 v = ((u128)x * y + z - 1) / z;

	if (v > UINT64_MAX)
		return false;
	*out = (uint64_t)v;
	return true;
}

/* T of tile (A, B), in r0-bytes (0 when it is empty); false when no pair
 * can carry it or T overflows. */
static bool tile_time(const struct builder *bd, uint32_t a, uint32_t b, uint64_t *T)
{
	const uint64_t *r = &bd->load[((size_t)a * bd->N + b) * bd->G];
	uint64_t R = 0, C = 0;

	for (uint32_t i = 0; i < bd->G; i++) {
		R += r[i]; /* a part of a row sum of D: the loads checked it */
		C += pair_w(bd->nx, bd->G, a, b, i);
	}
	*T = 0;
	if (R == 0)
		return true;
	return C > 0 && mul_div_up(R, NIC_W1, C, T);
}

/* Whether some pair of tile (A, B) has both ends up. */
static bool tile_pairs(const struct builder *bd, uint32_t a, uint32_t b)
{
	for (uint32_t i = 0; i < bd->G; i++)
		if (pair_w(bd->nx, bd->G, a, b, i))
			return true;
	return false;
}

uint64_t fast_nics_targets(const struct builder *bd, uint32_t a, uint32_t b, uint64_t *tt)
{
	uint64_t T, most = 0;

	if (bd->packed)
		return fast_nics_packed_targets(bd, a, b, tt, &T);
	if (!tile_time(bd, a, b, &T))
		T = 0; /* fast_nics_server_matrix refused it */
	for (uint32_t i = 0; i < bd->G; i++) {
		/* T c / W1 <= T: no overflow */
		mul_div_up(T, pair_w(bd->nx, bd->G, a, b, i), NIC_W1, &tt[i]);
		if (tt[i] > most)
			most = tt[i];
	}
	return most;
}

uint64_t fast_nics_packed_targets(const struct builder *bd, uint32_t a, uint32_t b, uint64_t *tt,
				  uint64_t *T)
{
	const struct nics *nx = bd->nx;
	const uint64_t *r = &bd->load[((size_t)a * bd->N + b) * bd->G];
	uint32_t G = bd->G, mod = pack_mod(bd->N, bd->P), res = shift_of(bd->N, a, b) % mod;
	uint64_t R = 0, C = 0, most = 0;

	for (uint32_t i = 0; i < G; i++) {
		uint32_t x = nx->wt[(size_t)a * G + i], y = nx->wt[(size_t)b * G + i];
		tt[i] = nx->port[i] % mod == res ? (x < y ? x : y) : 0; /* c_i, for now */
		C += tt[i];
		R += r[i];
	}
	*T = 0;
	if (R && (C == 0 || !mul_div_up(R, NIC_W1, C, T)))
		*T = UINT64_MAX; /* no live rail of the shift, or overflow */
	for (uint32_t i = 0; i < G; i++) {
		if (*T == UINT64_MAX || !mul_div_up(*T, tt[i], NIC_W1, &tt[i]))
			tt[i] = 0;
		if (tt[i] > most)
			most = tt[i];
	}
	return most;
}

int fast_nics_server_matrix(struct builder *bd)
{
	uint32_t N = bd->N;

	for (uint32_t a = 0; a < N; a++)
		for (uint32_t b = 0; b < N; b++) {
			uint64_t T;
			if (a == b)
				continue;
			if (!tile_time(bd, a, b, &T)) {
				if (!tile_pairs(bd, a, b))
					return fast_err_set(bd->err, FAST_EINPUT,
							    "fast: no pairing of live NICs joins server %u "
							    "to server %u (their live NICs serve different "
							    "numbers of GPUs: K = %u does not divide G = %u)",
							    a, b, bd->nx->K, bd->G);
				return fast_err_set(bd->err, FAST_EINPUT,
						    "fast: the time of tile %u -> %u overflows 64 bits", a, b);
			}
			bd->S[(size_t)a * N + b] = T;
		}
	return 0;
}

/* explicit stages: which lane each (A, B, sender) is, and the cursors */
static int index_lanes(struct builder *bd)
{
	struct nics *nx = bd->nx;
	const struct fast_plan *p = bd->p;
	size_t n = (size_t)bd->N * bd->N * bd->G;

	nx->lane = fast_calloc(n, sizeof *nx->lane);
	nx->cur = fast_calloc(p->nlanes ? p->nlanes : 1, sizeof *nx->cur);
	nx->cnt = fast_calloc((size_t)bd->G + 1, sizeof *nx->cnt);
	nx->bytes = fast_calloc(bd->G, sizeof *nx->bytes);
	if (!nx->lane || !nx->cur || !nx->cnt || !nx->bytes)
		return oom(bd, "stages");
	for (size_t l = 0; l < p->nlanes; l++) {
		const struct fast_lane *ln = &p->lanes[l];
		nx->lane[((size_t)ln->src_server * bd->N + ln->dst_server) * bd->G + ln->rail] =
			(uint32_t)l + 1;
	}
	return 0;
}

/* The next <= budget bytes of lane l as a transfer from -> to (none when
 * the lane is empty). */
static int send_lane(struct builder *bd, uint32_t l, uint64_t budget, uint32_t from, uint32_t to)
{
	struct fast_plan *p = bd->p;
	const struct fast_lane *ln = &p->lanes[l];
	struct cursor *c = &bd->nx->cur[l];
	struct fast_piece *pc;
	struct fast_xfer *x;
	uint64_t sent = 0;
	uint32_t n = 0;
	int rc;

	if (c->j == ln->npieces || budget == 0)
		return 0;
	if ((rc = fast_plan_xfer_space(p, 1, ln->npieces - c->j, &x, &pc, bd->err)) < 0)
		return rc;
	while (sent < budget && c->j < ln->npieces) {
		struct fast_piece in = p->pieces[ln->piece0 + c->j];
		uint64_t take = in.len - c->off < budget - sent ? in.len - c->off : budget - sent;
		pc[n++] = (struct fast_piece){ in.src, in.dst, in.off + c->off, take };
		sent += take;
		c->off += take;
		if (c->off == in.len) {
			c->j++;
			c->off = 0;
		}
	}
	*x = (struct fast_xfer){ from, to, 0, n, sent };
	return fast_plan_commit_xfers(p, 1, bd->err);
}

/* The redistribution of out transfer t: what arrived at its receiver
 * for another GPU of the server, one transfer per destination
 * (ascending), pieces in arrival order. */
static int redistribute(struct builder *bd, size_t t)
{
	struct fast_plan *p = bd->p;
	struct nics *nx = bd->nx;
	struct fast_xfer in = p->xfers[t], *x;
	struct fast_piece *pc;
	uint32_t G = bd->G, base = in.to / G * G, nx_out = 0;
	size_t np = 0, at = 0;
	int rc;

	memset(nx->cnt, 0, ((size_t)G + 1) * sizeof *nx->cnt);
	memset(nx->bytes, 0, G * sizeof *nx->bytes);
	for (uint32_t q = 0; q < in.npieces; q++) {
		const struct fast_piece *c = &p->pieces[in.piece0 + q];
		if (c->dst == in.to)
			continue; /* final */
		nx->cnt[c->dst - base]++;
		nx->bytes[c->dst - base] += c->len;
		np++;
	}
	for (uint32_t d = 0; d < G; d++)
		nx_out += nx->cnt[d] != 0;
	if (!nx_out)
		return 0;
	if ((rc = fast_plan_xfer_space(p, nx_out, np, &x, &pc, bd->err)) < 0)
		return rc;
	nx_out = 0;
	for (uint32_t d = 0; d < G; d++) { /* cnt becomes each destination's start */
		size_t c = nx->cnt[d];
		if (c)
			x[nx_out++] = (struct fast_xfer){ in.to, base + d, 0, (uint32_t)c, nx->bytes[d] };
		nx->cnt[d] = at;
		at += c;
	}
	for (uint32_t q = 0; q < in.npieces; q++) {
		const struct fast_piece *c = &p->pieces[in.piece0 + q];
		if (c->dst != in.to)
			pc[nx->cnt[c->dst - base]++] = *c;
	}
	return fast_plan_commit_xfers(p, nx_out, bd->err);
}

/* A step of kind `tier` after the steps in deps (< 0: none). */
static int step_after(struct builder *bd, enum fast_tier_id tier, const int *deps, int ndeps)
{
	int id = fast_plan_add_step(bd->p, FAST_STEP_EXPLICIT, tier, bd->err), rc;

	for (int k = 0; k < ndeps && id >= 0; k++)
		if (deps[k] >= 0 &&
		    (rc = fast_plan_add_dep(bd->p, (uint32_t)id, (uint32_t)deps[k], false, bd->err)) < 0)
			return rc;
	return id;
}

int fast_nics_stage(struct builder *bd, const struct fast_bvn *bv, uint32_t k, const int *deps,
		    int ndeps)
{
	struct nics *nx = bd->nx;
	uint32_t N = bd->N, G = bd->G;
	const uint32_t *perm = bv->perm + (size_t)k * N;
	uint64_t w = bv->weight[k];
	size_t x0;
	int out, red, rc;

	if (!nx->lane && (rc = index_lanes(bd)) < 0)
		return rc;
	if ((out = step_after(bd, FAST_TIER_OUT, deps, ndeps)) < 0)
		return out;
	x0 = bd->p->nxfers;
	for (uint32_t a = 0; a < N; a++) {
		uint32_t b = perm[a];
		if (b == a)
			continue;
		for (uint32_t i = 0; i < G; i++) {
			uint32_t l = nx->lane[((size_t)a * N + b) * G + i];
			uint64_t budget = 0;
			if (!l)
				continue;
			/* w c / W1 <= w: no overflow */
			mul_div_up(w, pair_w(nx, G, a, b, i), NIC_W1, &budget);
			if ((rc = send_lane(bd, l - 1, budget, a * G + i,
					    b * G + peer(nx, G, a, b, i))) < 0)
				return rc;
		}
	}
	if (!bd->redist) /* the caller's (compile_tokens.c) */
		return out;
	if ((red = step_after(bd, FAST_TIER_UP, &out, 1)) < 0)
		return red;
	for (size_t t = x0, end = bd->p->nxfers; t < end; t++)
		if ((rc = redistribute(bd, t)) < 0)
			return rc;
	return out;
}

void fast_nics_drop_lanes(struct builder *bd)
{
	struct fast_plan *p = bd->p;
	size_t L = bd->lane_pieces;

	memmove(p->pieces, p->pieces + L, (p->npieces - L) * sizeof *p->pieces);
	p->npieces -= L;
	for (size_t t = 0; t < p->nxfers; t++)
		p->xfers[t].piece0 -= (uint32_t)L;
	p->nlanes = 0;
	p->open_kind = FAST_OPEN_NONE;
}
