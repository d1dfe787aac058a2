/*
 * compile_tokens.c - FAST on token traffic, fast_sched_fast_tokens()
 * (algo.h), and the token helpers it shares with hier (tokens_internal.h).
 *
 * Dispatch.  A token of GPU s needing server B != server(s) crosses to B
 * once (per-server dedup): the deduplicated traffic is the virtual byte
 * matrix D of tokens_internal.h, and FAST's own compiler
 * (fast_sched_fast, compile_fast.c: intrinsic step, balancing into
 * lanes, the server matrix and its Birkhoff stages, one REDIST per stage)
 * schedules it unchanged.  Its plan is then read through the streams:
 * every piece (s, c, off, len) of D becomes the pieces of the groups it
 * covers, so the lanes carry each group once per remote server, the
 * intrinsic step copies it to each destination on src's server, and the
 * token REDIST (plan.h) replicates what a stage delivered to B_i to every
 * destination GPU of the group on B.  Scale-out bytes are exactly the
 * per-server dedup volume, sum over g of bytes(g) * |servers(Dest(g)) \
 * {server(src(g))}|.
 *
 * Combine is the mirror, on the same lanes and stages: lane (B -> A, i)
 * carries what dispatch lane (A -> B, i) carries, each piece with the mask
 * of Dest(g) on B, and the stages are dispatch's in reverse order (the
 * schedule reversed in time), with inverse permutations and the same
 * budgets.  Before each rail stage, the contributions of what it sends
 * from B_i are gathered onto B_i and summed there (a gather and a REDUCE
 * step per stage, each gather waiting for the one before so that
 * scale-up does them in stage order); the stage's REDIST forwards what
 * A_i received to src(g).  So the first stage is dispatch's last, the
 * smallest (split_tail), and its gather and sum, which nothing hides,
 * are short.  Local contributions go to src directly, after the first
 * gather (which they would slow down).
 *
 * NICs of unequal shares (a slow or failed NIC: compile_fast_nics.c).
 * The stages are then explicit out steps of pieces, each sender paired
 * with a receiver by NIC rate rather than by rail, and the byte compiler
 * leaves their redistribution to this file (fast_sched_fast_crossings):
 * after each out step, what it delivered to x on server B goes on to
 * every destination of its group on B but x (the token REDIST, written
 * out: replicate()).  Combine mirrors that (mirror_explicit()): per
 * dispatch out step, last first, the gather and sum onto x, the step
 * reversed (x sends back to the GPU that sent to it, with the mask of
 * Dest(g) on B), and that GPU forwards to src(g).
 *
 * Workload: a compile per matrix (an MoE layer's dispatch or combine,
 * thousands of groups on tens to hundreds of GPUs).  The piece count
 * grows by the groups a byte piece spans; all arithmetic is on integers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fast/algo.h"
#include "lib/compile/compile_fast_internal.h"
#include "lib/compile/tokens_internal.h"

/* --- streams ----------------------------------------------------------- */

void tok_streams_free(struct tok_streams *ts)
{
	if (!ts)
		return;
	free(ts->D);
	free(ts->key0);
	free(ts->grp);
	free(ts->at);
	memset(ts, 0, sizeof *ts);
}

uint64_t tok_server_mask(const struct fast_matrix *m, uint32_t g, uint32_t b, uint32_t G)
{
	const struct fast_group *gr = &m->groups[g];
	uint64_t mask = 0;

	for (uint32_t i = 0; i < gr->ndst; i++)
		if (m->dsts[gr->dst0 + i] / G == b)
			mask |= UINT64_C(1) << i;
	return mask;
}

/* Call visit(ts, key, g) for every stream entry of group g, in the order
 * entries are laid out: the local destinations, then the remote servers
 * ascending (Dest(g) is ascending, so a server's GPUs are adjacent). */
static void entries_of(struct tok_streams *ts, uint32_t g,
		       void (*visit)(struct tok_streams *, size_t, uint32_t))
{
	const struct fast_matrix *m = ts->m;
	const struct fast_group *gr = &m->groups[g];
	uint32_t s = gr->src, a = s / ts->G, last = UINT32_MAX;

	for (uint32_t i = 0; i < gr->ndst; i++) {
		uint32_t d = m->dsts[gr->dst0 + i], b = d / ts->G;
		if (b == a) {
			if (d != s)
				visit(ts, (size_t)s * ts->ng + d, g);
		} else if (b != last) {
			visit(ts, (size_t)s * ts->ng + tok_out_col(ts, s, b), g);
			last = b;
		}
	}
}

static void count_entry(struct tok_streams *ts, size_t key, uint32_t g)
{
	(void)g;
	ts->key0[key + 1]++;
}

static void place_entry(struct tok_streams *ts, size_t key, uint32_t g)
{
	size_t e = ts->key0[key]++; /* key0 is the fill cursor during placement */
	ts->grp[e] = g;
	ts->at[e] = ts->D[key];
	ts->D[key] += fast_group_bytes(ts->m, g);
}

static void add_entry(struct tok_streams *ts, size_t key, uint32_t g)
{
	ts->D[key] += fast_group_bytes(ts->m, g);
}

void tok_dedup_matrix(const struct fast_topo *topo, const struct fast_matrix *m, uint64_t *D)
{
	uint32_t ng = topo->servers * topo->gpus;
	struct tok_streams t = { m, topo->servers, topo->gpus, ng, D, NULL, NULL, NULL };

	memset(D, 0, (size_t)ng * ng * sizeof *D);
	for (uint32_t g = 0; g < m->ngroups; g++)
		entries_of(&t, g, add_entry);
}

int tok_streams_build(struct tok_streams *ts, const struct fast_topo *topo,
		      const struct fast_matrix *m, struct fast_err *err)
{
	uint32_t G = topo->gpus, ng = topo->servers * topo->gpus;
	size_t nk = (size_t)ng * ng, ne;
	struct tok_streams t = { m, topo->servers, G, ng, NULL, NULL, NULL, NULL };

	/* every stream is a part of a row of m's per-GPU byte matrix (a
	 * group counted once where that row counts it once per destination),
	 * whose sums the loader checked: no overflow below */
	if (m->kind == FAST_TRAFFIC_BYTES)
		return fast_err_set(err, FAST_EINPUT, "%s: not token traffic", m->label);
	t.D = fast_calloc(nk, sizeof *t.D);
	t.key0 = fast_calloc(nk + 1, sizeof *t.key0);
	if (!t.D || !t.key0)
		goto oom;
	for (uint32_t g = 0; g < m->ngroups; g++)
		entries_of(&t, g, count_entry);
	for (size_t k = 0; k < nk; k++)
		t.key0[k + 1] += t.key0[k];
	ne = t.key0[nk];
	t.grp = fast_calloc(ne ? ne : 1, sizeof *t.grp);
	t.at = fast_calloc(ne ? ne : 1, sizeof *t.at);
	if (!t.grp || !t.at)
		goto oom;
	for (uint32_t g = 0; g < m->ngroups; g++)
		entries_of(&t, g, place_entry);
	/* placement advanced each key0[k] to the start of k + 1: shift back */
	memmove(t.key0 + 1, t.key0, nk * sizeof *t.key0);
	t.key0[0] = 0;
	*ts = t;
	return 0;
oom:
	tok_streams_free(&t);
	return fast_err_set(err, FAST_ENOMEM, "%s: out of memory (token streams)", m->label);
}

/* --- the builder ------------------------------------------------------- */

void tok_build_init(struct tok_build *tb, struct fast_plan *p, const struct fast_matrix *m,
		    uint32_t N, uint32_t G, struct fast_err *err)
{
	memset(tb, 0, sizeof *tb);
	tb->p = p;
	tb->m = m;
	tb->N = N;
	tb->G = G;
	tb->err = err;
}

void tok_build_free(struct tok_build *tb)
{
	if (!tb)
		return;
	free(tb->items);
	free(tb->mv);
	fast_holds_free(&tb->masks);
	tb->items = NULL;
	tb->mv = NULL;
}

static int tok_oom(struct tok_build *tb, const char *what)
{
	return fast_err_set(tb->err, FAST_ENOMEM, "%s: out of memory (%s)", tb->m->label, what);
}

static int item_add(struct tok_build *tb, uint32_t g, uint32_t from, uint32_t to, uint64_t off,
		    uint64_t len)
{
	if (FAST_GROW(tb->items, tb->cap_items, tb->nitems + 1) < 0)
		return tok_oom(tb, "token pieces");
	tb->items[tb->nitems++] = (struct tok_item){ g, from, to, off, len };
	return 0;
}

int tok_streams_cut(const struct tok_streams *ts, uint32_t s, uint32_t c, uint64_t off,
		    uint64_t len, uint32_t x, struct tok_build *tb)
{
	size_t key = (size_t)s * ts->ng + c, lo = ts->key0[key], hi = ts->key0[key + 1];
	int rc;

	/* the last entry starting at or before off */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (ts->at[mid] <= off)
			lo = mid;
		else
			hi = mid;
	}
	for (size_t e = lo; len > 0; e++) {
		uint32_t g = ts->grp[e];
		uint64_t in = off - ts->at[e], b = fast_group_bytes(ts->m, g);
		uint64_t take = b - in < len ? b - in : len;
		if ((rc = item_add(tb, g, s, x, in, take)) < 0)
			return rc;
		off += take;
		len -= take;
	}
	return 0;
}

int tok_mask(struct tok_build *tb, uint64_t mask)
{
	uint32_t r = fast_holds_first(&tb->masks, mask);
	int k;

	if (r != FAST_HOLDS_END)
		return (int)tb->masks.recs[r].tag;
	/* a new mask is never equal to the last one added, so this appends */
	if ((k = fast_plan_add_mask(tb->p, mask, tb->err)) < 0)
		return k;
	if (fast_holds_add_tagged(&tb->masks, mask, 0, 1, (uint32_t)k, NULL) < 0)
		return tok_oom(tb, "masks");
	return k;
}

int tok_push(struct tok_build *tb, uint32_t from, uint32_t to, uint32_t unit, uint32_t g,
	     uint32_t k, uint64_t off, uint64_t len)
{
	if (FAST_GROW(tb->mv, tb->cap_mv, tb->nmv + 1) < 0)
		return tok_oom(tb, "transfers");
	tb->mv[tb->nmv] = (struct tok_move){ from, to, unit, tb->nmv, { g, k, off, len } };
	tb->nmv++;
	return 0;
}

static int move_cmp(const void *pa, const void *pb)
{
	const struct tok_move *a = pa, *b = pb;

	if (a->from != b->from)
		return a->from < b->from ? -1 : 1;
	if (a->to != b->to)
		return a->to < b->to ? -1 : 1;
	if (a->unit != b->unit)
		return a->unit < b->unit ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static bool same_xfer(const struct tok_move *a, const struct tok_move *b)
{
	return a->from == b->from && a->to == b->to && a->unit == b->unit;
}

int tok_emit(struct tok_build *tb, enum fast_step_kind kind, enum fast_tier_id tier,
	     const int *deps, int n, int *id)
{
	struct fast_plan *p = tb->p;
	struct fast_xfer *x;
	struct fast_piece *pc;
	size_t nx = 0;
	int step, rc;

	*id = -1;
	if (tb->nmv == 0)
		return 0;
	qsort(tb->mv, tb->nmv, sizeof *tb->mv, move_cmp);
	if ((step = fast_plan_add_step(p, kind, tier, tb->err)) < 0)
		return step;
	for (int k = 0; k < n; k++)
		if (deps[k] >= 0 &&
		    (rc = fast_plan_add_dep(p, (uint32_t)step, (uint32_t)deps[k], false, tb->err)) < 0)
			return rc;
	for (size_t k = 0; k < tb->nmv; k++)
		nx += k == 0 || !same_xfer(&tb->mv[k - 1], &tb->mv[k]);
	if ((rc = fast_plan_xfer_space(p, nx, tb->nmv, &x, &pc, tb->err)) < 0)
		return rc;
	nx = 0;
	for (size_t k = 0; k < tb->nmv; k++) {
		const struct tok_move *v = &tb->mv[k];
		if (k == 0 || !same_xfer(v - 1, v))
			x[nx++] = (struct fast_xfer){ v->from, v->to, 0, 0, 0 };
		x[nx - 1].npieces++;
		x[nx - 1].bytes += v->pc.len;
		pc[k] = v->pc;
	}
	tb->nmv = 0;
	if ((rc = fast_plan_commit_xfers(p, nx, tb->err)) < 0)
		return rc;
	*id = step;
	return 0;
}

int tok_local_step(struct tok_build *tb, int after, int *id)
{
	const struct fast_matrix *m = tb->m;
	bool combine = m->kind == FAST_TRAFFIC_COMBINE;
	int rc;

	for (uint32_t g = 0; g < m->ngroups; g++) {
		const struct fast_group *gr = &m->groups[g];
		uint64_t len = fast_group_bytes(m, g);
		for (uint32_t i = 0; i < gr->ndst; i++) {
			uint32_t d = m->dsts[gr->dst0 + i];
			int k = 0;
			if (d == gr->src || d / tb->G != gr->src / tb->G)
				continue;
			if (combine && (k = tok_mask(tb, UINT64_C(1) << i)) < 0)
				return k;
			rc = combine ? tok_push(tb, d, gr->src, 0, g, (uint32_t)k, 0, len)
				     : tok_push(tb, gr->src, d, 0, g, 0, 0, len);
			if (rc < 0)
				return rc;
		}
	}
	return tok_emit(tb, FAST_STEP_EXPLICIT, FAST_TIER_UP, &after, 1, id);
}

int tok_gather_reduce(struct tok_build *tb, int after, int *gid, int *rid)
{
	const struct fast_matrix *m = tb->m;
	int rc, k;

	for (size_t t = 0; t < tb->nitems; t++) { /* the gather */
		const struct tok_item *it = &tb->items[t];
		const struct fast_group *gr = &m->groups[it->g];
		uint32_t b = it->to / tb->G;
		for (uint32_t i = 0; i < gr->ndst; i++) {
			uint32_t d = m->dsts[gr->dst0 + i];
			if (d / tb->G != b || d == it->to)
				continue;
			if ((k = tok_mask(tb, UINT64_C(1) << i)) < 0 ||
			    (rc = tok_push(tb, d, it->to, 0, it->g, (uint32_t)k, it->off, it->len)) < 0)
				return k < 0 ? k : rc;
		}
	}
	if ((rc = tok_emit(tb, FAST_STEP_EXPLICIT, FAST_TIER_UP, &after, 1, gid)) < 0)
		return rc;
	for (size_t t = 0; t < tb->nitems; t++) { /* one sum per item of 2+ contributions */
		const struct tok_item *it = &tb->items[t];
		const struct fast_group *gr = &m->groups[it->g];
		uint64_t mask = tok_server_mask(m, it->g, it->to / tb->G, tb->G);
		if ((mask & (mask - 1)) == 0)
			continue;
		for (uint32_t i = 0; i < gr->ndst; i++) {
			if (!(mask >> i & 1))
				continue;
			if ((k = tok_mask(tb, UINT64_C(1) << i)) < 0 ||
			    (rc = tok_push(tb, it->to, it->to, (uint32_t)t, it->g, (uint32_t)k, it->off,
					   it->len)) < 0)
				return k < 0 ? k : rc;
		}
	}
	return tok_emit(tb, FAST_STEP_REDUCE, FAST_TIER_UP, gid, 1, rid);
}

/* --- FAST --------------------------------------------------------------- */

/* Read every piece of byte plan bp (over ts->D) through the streams: a
 * piece (s, c, off, len) becomes the group pieces (g, 0, off', len') it
 * covers, in stream order.  Transfers and lanes keep their bytes. */
static int remap(const struct tok_streams *ts, struct fast_plan *bp, struct tok_build *tb)
{
	struct fast_piece *np = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;

	for (int pass = 0; pass < 2 && rc == 0; pass++) {
		size_t count = pass == 0 ? bp->nxfers : bp->nlanes;
		for (size_t k = 0; k < count && rc == 0; k++) {
			uint32_t *piece0 = pass == 0 ? &bp->xfers[k].piece0 : &bp->lanes[k].piece0;
			uint32_t *npieces = pass == 0 ? &bp->xfers[k].npieces : &bp->lanes[k].npieces;
			size_t start = n;
			tb->nitems = 0;
			for (uint32_t j = 0; j < *npieces && rc == 0; j++) {
				const struct fast_piece *pc = &bp->pieces[*piece0 + j];
				rc = tok_streams_cut(ts, pc->src, pc->dst, pc->off, pc->len, 0, tb);
			}
			if (rc == 0 && FAST_GROW(np, cap, n + tb->nitems) < 0)
				rc = tok_oom(tb, "token pieces");
			for (size_t t = 0; rc == 0 && t < tb->nitems; t++)
				np[n++] = (struct fast_piece){ tb->items[t].g, 0, tb->items[t].off,
							       tb->items[t].len };
			if (n - start > UINT32_MAX || n > UINT32_MAX)
				rc = fast_err_set(tb->err, FAST_ELIMIT, "%s: too many token pieces",
						  tb->m->label);
			*piece0 = (uint32_t)start;
			*npieces = (uint32_t)(n - start);
		}
	}
	if (rc < 0) {
		free(np);
		return rc;
	}
	free(bp->pieces);
	bp->pieces = np;
	bp->npieces = n;
	bp->cap_pieces = cap;
	bp->open_kind = FAST_OPEN_NONE;
	return 0;
}

/* Where a lane's next rail step starts: piece j, byte off within it. */
struct cursor {
	uint32_t j;
	uint64_t off;
};

/* A combine stage's gather and reduce, chained after the previous gather
 * (*prev_gather), then, after the first gather only (it is exposed), the
 * local sums (*local_done, *local).  0 or a negative code. */
static int stage_gather(struct tok_build *tb, int *prev_gather, int *gid, int *rid,
			bool *local_done, int *local)
{
	int rc = tok_gather_reduce(tb, *prev_gather, gid, rid);

	if (rc < 0)
		return rc;
	if (*gid >= 0)
		*prev_gather = *gid;
	if (!*local_done && (rc = tok_local_step(tb, *gid, local)) < 0)
		return rc;
	*local_done = true;
	return 0;
}

/* The mirror of dispatch rail step s (k permutations, plan.h): into inv
 * (k * N) the inverse permutations, and into tb's items what it sends,
 * each lane's next <= w bytes, cut as the expansion cuts them: combine
 * lane (B -> A, i) carries dispatch lane (A -> B, i) with the budget
 * w(A, B) of the dispatch step.  to, w: room for k entries. */
static int mirror_items(struct tok_build *tb, const struct fast_plan *dp, const struct fast_step *s,
			const int32_t *lane_of, struct cursor *cur, uint32_t *inv, uint32_t *to,
			uint64_t *w)
{
	uint32_t N = tb->N, G = tb->G, k = s->nperms;
	int rc = 0;

	for (uint32_t j = 0; j < k; j++)
		for (uint32_t a = 0; a < N; a++)
			inv[(size_t)j * N + dp->perm[s->perm0 + (size_t)j * N + a]] = a;
	tb->nitems = 0;
	for (uint32_t b = 0; b < N && rc == 0; b++) {
		uint32_t nb = fast_plan_perms_row(inv, dp->budgets + s->budget0, k, N, b, to, w);
		for (uint32_t i = 0; i < G && rc == 0; i++)
			for (uint32_t d = 0; d < nb && rc == 0; d++) {
				int32_t l = lane_of[((size_t)b * N + to[d]) * G + i];
				const struct fast_lane *ln;
				uint64_t left = w[d];
				if (l < 0)
					continue;
				ln = &dp->lanes[l];
				while (left && cur[l].j < ln->npieces && rc == 0) {
					const struct fast_piece *pc = &dp->pieces[ln->piece0 + cur[l].j];
					uint64_t rest = pc->len - cur[l].off, take = rest < left ? rest : left;
					rc = item_add(tb, pc->src, b * G + i, b * G + i, pc->off + cur[l].off,
						      take);
					left -= take;
					cur[l].off += take;
					if (cur[l].off == pc->len) {
						cur[l].j++;
						cur[l].off = 0;
					}
				}
			}
	}
	return rc;
}

/* The combine plan cp mirroring dispatch token plan dp (see the top). */
static int mirror(const struct fast_plan *dp, struct tok_build *tb)
{
	uint32_t N = tb->N, G = tb->G, kmax = 1;
	struct fast_plan *cp = tb->p;
	int32_t *lane_of = fast_calloc((size_t)N * N * G, sizeof *lane_of);
	struct cursor *cur = fast_calloc(dp->nlanes ? dp->nlanes : 1, sizeof *cur);
	uint32_t *inv, *to;
	uint64_t *w;
	int rc = 0, local = -1, prev_gather = -1, prev_rail = -1;
	bool local_done = false;

	for (size_t t = 0; t < dp->nsteps; t++)
		if (dp->steps[t].kind == FAST_STEP_RAIL && dp->steps[t].nperms > kmax)
			kmax = dp->steps[t].nperms;
	inv = fast_calloc((size_t)kmax * N, sizeof *inv);
	to = fast_calloc(kmax, sizeof *to);
	w = fast_calloc(kmax, sizeof *w);
	if (!lane_of || !cur || !inv || !to || !w) {
		rc = tok_oom(tb, "combine stages");
		goto out;
	}
	for (size_t k = 0; k < (size_t)N * N * G; k++)
		lane_of[k] = -1;
	/* lane (B -> A, i) carries dispatch lane (A -> B, i), with masks */
	for (size_t l = 0; l < dp->nlanes && rc == 0; l++) {
		const struct fast_lane *ln = &dp->lanes[l];
		lane_of[((size_t)ln->dst_server * N + ln->src_server) * G + ln->rail] = (int32_t)l;
		rc = fast_plan_add_lane(cp, ln->dst_server, ln->src_server, ln->rail, tb->err);
		for (uint32_t j = 0; j < ln->npieces && rc >= 0; j++) {
			const struct fast_piece *pc = &dp->pieces[ln->piece0 + j];
			int k = tok_mask(tb, tok_server_mask(tb->m, pc->src, ln->dst_server, G));
			rc = k < 0 ? k
				   : fast_plan_add_lane_piece(cp, pc->src, (uint32_t)k, pc->off, pc->len,
							      tb->err);
		}
	}
	if (rc < 0)
		goto out;
	/* dispatch's stages in reverse (time reversed: its last stage, the
	 * smallest, whose redistribution was exposed, becomes the first,
	 * whose gather and sum are exposed) */
	for (size_t t = dp->nsteps; t-- > 0 && rc == 0;) {
		const struct fast_step *s = &dp->steps[t];
		int gid, rid, rail, deps[3];
		if (s->kind != FAST_STEP_RAIL)
			continue;
		rc = mirror_items(tb, dp, s, lane_of, cur, inv, to, w);
		if (rc < 0)
			break;
		if (tb->nitems == 0) /* its lanes went in the stages before */
			continue;
		if ((rc = stage_gather(tb, &prev_gather, &gid, &rid, &local_done, &local)) < 0)
			break;
		if ((rail = fast_plan_add_step(cp, FAST_STEP_RAIL, FAST_TIER_OUT, tb->err)) < 0) {
			rc = rail;
			break;
		}
		deps[0] = prev_rail;
		deps[1] = gid;
		deps[2] = rid;
		for (int k = 0; k < 3 && rc >= 0; k++)
			if (deps[k] >= 0)
				rc = fast_plan_add_dep(cp, (uint32_t)rail, (uint32_t)deps[k], false, tb->err);
		if (rc < 0 ||
		    (rc = fast_plan_set_perms(cp, s->nperms, inv, dp->budgets + s->budget0,
					      tb->err)) < 0 ||
		    (rc = fast_plan_add_step(cp, FAST_STEP_REDIST, FAST_TIER_UP, tb->err)) < 0)
			break;
		if ((rc = fast_plan_add_dep(cp, (uint32_t)rc, (uint32_t)rail, false, tb->err)) < 0 ||
		    (rc = fast_plan_set_redist(cp, (uint32_t)rail, tb->err)) < 0)
			break;
		prev_rail = rail;
		rc = 0;
	}
	if (rc >= 0 && !local_done)
		rc = tok_local_step(tb, -1, &local);
out:
	free(lane_of);
	free(cur);
	free(inv);
	free(to);
	free(w);
	return rc < 0 ? rc : 0;
}

/* The dispatch plan dp's explicit stages (see the top): after each out
 * step t, one up step of what it delivered, on to every destination of
 * the group on the receiver's server but the receiver. */
static int replicate(struct tok_build *tb)
{
	struct fast_plan *dp = tb->p;
	const struct fast_matrix *m = tb->m;
	size_t nsteps = dp->nsteps;
	int rc = 0;

	for (size_t t = 0; t < nsteps && rc == 0; t++) {
		struct fast_step s = dp->steps[t]; /* a copy: tok_emit adds steps */
		int dep = (int)t, id;
		if (s.kind != FAST_STEP_EXPLICIT || s.tier != FAST_TIER_OUT)
			continue;
		for (uint32_t j = 0; j < s.nxfers && rc == 0; j++) {
			struct fast_xfer x = dp->xfers[s.xfer0 + j];
			for (uint32_t k = 0; k < x.npieces && rc == 0; k++) {
				struct fast_piece pc = dp->pieces[x.piece0 + k];
				const struct fast_group *gr = &m->groups[pc.src];
				for (uint32_t i = 0; i < gr->ndst && rc == 0; i++) {
					uint32_t d = m->dsts[gr->dst0 + i];
					if (d / tb->G == x.to / tb->G && d != x.to)
						rc = tok_push(tb, x.to, d, 0, pc.src, 0, pc.off, pc.len);
				}
			}
		}
		if (rc == 0)
			rc = tok_emit(tb, FAST_STEP_EXPLICIT, FAST_TIER_UP, &dep, 1, &id);
	}
	return rc;
}

/* The combine plan mirroring dispatch token plan dp of explicit stages
 * (see the top). */
static int mirror_explicit(const struct fast_plan *dp, struct tok_build *tb)
{
	const struct fast_matrix *m = tb->m;
	int rc = 0, local = -1, prev_gather = -1, prev_out = -1;
	bool local_done = false;

	for (size_t t = dp->nsteps; t-- > 0 && rc == 0;) {
		const struct fast_step *s = &dp->steps[t];
		int gid, rid, out, fwd, deps[3];
		if (s->kind != FAST_STEP_EXPLICIT || s->tier != FAST_TIER_OUT || !s->nxfers)
			continue;
		/* items: what x = to carried across, from = whom it came from */
		tb->nitems = 0;
		for (uint32_t j = 0; j < s->nxfers && rc == 0; j++) {
			const struct fast_xfer *x = &dp->xfers[s->xfer0 + j];
			for (uint32_t k = 0; k < x->npieces && rc == 0; k++) {
				const struct fast_piece *pc = &dp->pieces[x->piece0 + k];
				rc = item_add(tb, pc->src, x->from, x->to, pc->off, pc->len);
			}
		}
		if (rc < 0 ||
		    (rc = stage_gather(tb, &prev_gather, &gid, &rid, &local_done, &local)) < 0)
			break;
		for (int pass = 0; pass < 2 && rc == 0; pass++) {
			for (size_t i = 0; i < tb->nitems && rc >= 0; i++) {
				const struct tok_item *it = &tb->items[i];
				uint32_t src = m->groups[it->g].src;
				int k = tok_mask(tb, tok_server_mask(m, it->g, it->to / tb->G, tb->G));
				if (k < 0)
					rc = k;
				else if (pass == 0) /* back across */
					rc = tok_push(tb, it->to, it->from, 0, it->g, (uint32_t)k, it->off,
						      it->len);
				else if (src != it->from) /* on to the group's source */
					rc = tok_push(tb, it->from, src, 0, it->g, (uint32_t)k, it->off,
						      it->len);
			}
			deps[0] = prev_out;
			deps[1] = gid;
			deps[2] = rid;
			if (rc >= 0 && pass == 0)
				rc = tok_emit(tb, FAST_STEP_EXPLICIT, FAST_TIER_OUT, deps, 3, &out);
			else if (rc >= 0)
				rc = tok_emit(tb, FAST_STEP_EXPLICIT, FAST_TIER_UP, &out, 1, &fwd);
		}
		prev_out = out;
	}
	if (rc >= 0 && !local_done)
		rc = tok_local_step(tb, -1, &local);
	return rc < 0 ? rc : 0;
}

/* What the redistribution moves, per lane byte, in a byte plan's
 * redistributions (struct builder's fwd, for the choice of stages), from
 * its busiest GPU: a token crossing to server B on rail i (its source's)
 * goes on from B_i to its other destinations on B (dispatch: B_i sends
 * them, each destination receives them), or (combine) they come to B_i
 * and are summed there, n + 1 inputs and the result through the GPU's
 * scale-up.  A byte plan's redistribution moves (G - 1) / G of each lane
 * byte; this is the busiest GPU's bytes over the mean NIC's lane bytes,
 * in those units.  1 when nothing crosses. */
static double tok_fwd(const struct fast_matrix *m, uint32_t N, uint32_t G)
{
	uint32_t ng = N * G;
	uint64_t *in = fast_calloc((size_t)2 * ng, sizeof *in), *out, most = 0;
	double cross = 0;

	if (!in || G < 2) {
		free(in);
		return 1; /* a model only */
	}
	out = in + ng;
	for (uint32_t g = 0; g < m->ngroups; g++) {
		const struct fast_group *gr = &m->groups[g];
		uint64_t bytes = fast_group_bytes(m, g);
		uint32_t A = gr->src / G, i = gr->src % G;
		for (uint32_t k = 0, k1; k < gr->ndst; k = k1) {
			uint32_t B = m->dsts[gr->dst0 + k] / G, x = B * G + i, n = 0;
			bool at_x = false;
			for (k1 = k; k1 < gr->ndst && m->dsts[gr->dst0 + k1] / G == B; k1++) {
				uint32_t d = m->dsts[gr->dst0 + k1];
				n++;
				at_x = at_x || d == x;
				if (B != A && d != x)
					in[d] += bytes; /* dispatch: forwarded to d */
			}
			if (B == A)
				continue;
			cross += (double)bytes;
			out[x] += (n - at_x) * bytes;
			if (m->kind == FAST_TRAFFIC_COMBINE) /* gathered to x and summed */
				in[x] += (n - at_x) * bytes + (n > 1 || !at_x ? (n + 1) * bytes : 0);
		}
	}
	for (uint32_t d = 0; d < ng; d++) {
		uint64_t t = m->kind == FAST_TRAFFIC_COMBINE ? in[d] : in[d] > out[d] ? in[d] : out[d];
		most = t > most ? t : most;
	}
	free(in);
	if (!(cross > 0))
		return 1;
	return (double)most / (cross / ng) * G / (G - 1);
}

int fast_sched_fast_tokens(const struct fast_topo *topo, const struct fast_matrix *m,
			   const struct fast_algo_opts *opts, struct fast_plan *out,
			   struct fast_err *err)
{
	struct tok_streams ts;
	struct tok_build tb;
	struct fast_plan bp, cp;
	bool explicit_stages;
	int rc;

	/* staged only: combine mirrors dispatch's stages as one chain in
	 * reverse (mirror()), which would run packed stages, each on a share
	 * of the rails, one after another; asked for, they are refused rather
	 * than quietly compiled staged */
	if (opts && opts->stages == FAST_STAGES_PACKED)
		return fast_err_set(err, FAST_EUSAGE,
				    "fast: --stages packed is not built for token traffic with "
				    "--dedup server (its combine replays the stages as one chain); "
				    "use --stages auto or exact, or --dedup gpu");
	if ((rc = tok_streams_build(&ts, topo, m, err)) < 0)
		return rc;
	if ((rc = fast_sched_fast_crossings(topo, ts.D, opts, tok_fwd(m, topo->servers, topo->gpus),
					     &bp, err)) < 0) {
		tok_streams_free(&ts);
		return rc;
	}
	/* RAIL stages, or explicit ones (NICs of unequal shares) */
	explicit_stages = !fast_plan_is_compact(&bp);
	tok_build_init(&tb, &bp, m, topo->servers, topo->gpus, err);
	rc = remap(&ts, &bp, &tb);
	bp.kind = FAST_TRAFFIC_DISPATCH;
	if (rc == 0 && explicit_stages)
		rc = replicate(&tb);
	tok_build_free(&tb);
	tok_streams_free(&ts);
	if (rc == 0 && m->kind == FAST_TRAFFIC_COMBINE) {
		fast_plan_init(&cp, topo->servers, topo->gpus, "fast");
		cp.kind = FAST_TRAFFIC_COMBINE;
		memcpy(cp.options, bp.options, sizeof cp.options);
		tok_build_init(&tb, &cp, m, topo->servers, topo->gpus, err);
		rc = explicit_stages ? mirror_explicit(&bp, &tb) : mirror(&bp, &tb);
		tok_build_free(&tb);
		fast_plan_free(&bp);
		bp = cp;
	}
	if (rc < 0) {
		fast_plan_free(&bp);
		return rc;
	}
	*out = bp;
	return 0;
}
