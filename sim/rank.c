/*
 * rank.c - the simulator by rank (--sync rank, sim.h "Synchronisation" and
 * "Waves in flight"): every GPU's waves listed from the plan's wave cut,
 * the class of each send with two in flight, when a transfer may start,
 * a GPU moving on as its flows end, and the steps without transfers
 * reported at the end.  The engine (engine.c) calls in where its step
 * barriers would be.
 */
#include "internal.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

/* --- the waves, listed ------------------------------------------------------ */

/* One walk over the nodes in wave order (order[], node_step[node] its
 * step) and, in each, every GPU taking part in a transfer (its sender,
 * and its receiver when another GPU), so each GPU meets its waves in
 * ascending order.  The first walk (fill false) counts each GPU's waves
 * (ne) and listed transfers (ni); the second, on zeroed counters, places
 * them at the offsets those counts gave (gw0, i0). */
static void list_waves(struct sim_engine *e, const uint32_t *order, const uint32_t *node_step,
		       uint32_t nnodes, const uint32_t *i0, uint32_t *last, uint32_t *ne,
		       uint32_t *ni, bool fill)
{
	for (uint32_t k = 0; k < nnodes; k++) {
		uint32_t node = order[k], w = e->node_wave[node];
		const struct sim_step_state *s = &e->st[node_step[node]];
		uint32_t c = node - s->c0;
		for (uint32_t j = 0; j < s->nx; j++) {
			uint32_t xi = s->x0 + j;
			const struct fast_xfer *t = &e->x->xfers[xi];
			uint32_t gs[2] = { t->from, t->to };
			bool counted = e->fl[xi].nres > 0 &&
				       sim_chunk_bytes(e->xs[xi].bytes, s->chunks, c) > 0;
			for (uint32_t q = 0; q < (t->to != t->from ? 2u : 1u); q++) {
				uint32_t g = gs[q];
				if (last[g] != w) {
					last[g] = w;
					if (fill)
						e->gw[e->gw0[g] + ne[g]] =
							(struct sim_gpu_wave){ w, 0, i0[g] + ni[g], 0 };
					ne[g]++;
				}
				if (fill) {
					struct sim_gpu_wave *gw = &e->gw[e->gw0[g] + ne[g] - 1];
					e->gx[i0[g] + ni[g]] = xi;
					gw->nx++;
					gw->left += counted;
					if (e->flight && counted && q == 1 &&
					    e->x->steps[node_step[node]].tier == FAST_TIER_UP)
						e->up_left[e->gw0[g] + ne[g] - 1]++;
				}
				ni[g]++;
			}
		}
	}
}

/* Does transfer y carry a byte of piece P? */
static bool carries(const struct fast_plan *x, const struct fast_xfer *y, const struct fast_piece *P)
{
	for (uint32_t k = 0; k < y->npieces; k++) {
		const struct fast_piece *q = &x->pieces[y->piece0 + k];
		if (q->src == P->src && q->dst == P->dst && q->off < P->off + P->len &&
		    P->off < q->off + q->len)
			return true;
	}
	return false;
}

/* Two waves in flight (sim.h "Waves in flight"): the class of every send
 * of GPU g's wave k by what its pieces read of g's wave k - 1 -- FREE
 * when no piece of it arrived there, UP when only scale-up flows brought
 * them, ALL when a scale-out flow did -- then lifted to the class of the
 * wave's sends to the same peer before it.  Local transfers (a GPU to
 * itself) make bytes FREE, as the executor's pre-copies do. */
static int flight_classes(struct sim_engine *e)
{
	const struct fast_plan *x = e->x;
	uint8_t *peer_cls = fast_calloc(e->ng ? e->ng : 1, 1);

	if (!peer_cls)
		return FAST_ENOMEM;
	for (uint32_t g = 0; g < e->ng; g++) {
		for (uint32_t k = e->gw0[g] + 1; k < e->gw0[g + 1]; k++) {
			const struct sim_gpu_wave *w = &e->gw[k], *p = &e->gw[k - 1];
			for (uint32_t i = w->x0; i < w->x0 + w->nx; i++) {
				const struct fast_xfer *t = &x->xfers[e->gx[i]];
				uint8_t cls = FAST_FLIGHT_FREE;
				if (t->from != g || t->to == g)
					continue;
				for (uint32_t pc = 0; pc < t->npieces && cls != FAST_FLIGHT_ALL; pc++) {
					const struct fast_piece *P = &x->pieces[t->piece0 + pc];
					if (P->src == g)
						continue; /* its own bytes */
					for (uint32_t j = p->x0; j < p->x0 + p->nx && cls != FAST_FLIGHT_ALL; j++) {
						const struct fast_xfer *y = &x->xfers[e->gx[j]];
						if (y->to != g || y->from == g || !carries(x, y, P))
							continue;
						if (x->steps[e->xs[e->gx[j]].step].tier == FAST_TIER_UP)
							cls = cls > FAST_FLIGHT_UP ? cls : FAST_FLIGHT_UP;
						else
							cls = FAST_FLIGHT_ALL;
					}
				}
				if (cls < peer_cls[t->to])
					cls = peer_cls[t->to];
				peer_cls[t->to] = e->gcls[i] = cls;
			}
			for (uint32_t i = w->x0; i < w->x0 + w->nx; i++)
				peer_cls[x->xfers[e->gx[i]].to] = 0;
		}
	}
	free(peer_cls);
	return 0;
}

int sim_build_waves(struct sim_engine *e, struct fast_err *err)
{
	struct fast_plan_waves w;
	uint32_t nnodes = 0, *order, *node_step, *cnt, *i0, *last, *ne, *ni;
	uint64_t nent = 0, nitems = 0;
	int rc;

	if ((rc = fast_plan_waves(e->x, 1, &w, err)) < 0)
		return rc;
	for (uint32_t si = 0; si < e->nsteps; si++) /* the engine numbers nodes alike */
		assert(w.node0[si] == e->st[si].c0);
	nnodes = (uint32_t)w.node0[e->nsteps];
	e->node_wave = w.wave;
	w.wave = NULL;
	fast_plan_waves_free(&w);
	order = fast_calloc(nnodes ? nnodes : 1, sizeof *order);
	node_step = fast_calloc(nnodes ? nnodes : 1, sizeof *node_step);
	cnt = fast_calloc((size_t)nnodes + 1, sizeof *cnt); /* waves <= nodes */
	i0 = fast_calloc((size_t)e->ng + 1, sizeof *i0);
	last = fast_calloc(e->ng ? e->ng : 1, sizeof *last);
	ne = fast_calloc(e->ng ? e->ng : 1, sizeof *ne);
	ni = fast_calloc(e->ng ? e->ng : 1, sizeof *ni);
	e->gw0 = fast_calloc((size_t)e->ng + 1, sizeof *e->gw0);
	e->gcur = fast_calloc(e->ng ? e->ng : 1, sizeof *e->gcur);
	if (!order || !node_step || !cnt || !i0 || !last || !ne || !ni || !e->gw0 || !e->gcur)
		goto nomem;
	/* the nodes by wave (counting sort; a node's wave < nnodes) */
	for (uint32_t si = 0; si < e->nsteps; si++)
		for (uint32_t c = 0; c < e->st[si].chunks; c++)
			node_step[e->st[si].c0 + c] = si;
	for (uint32_t n = 0; n < nnodes; n++)
		cnt[e->node_wave[n] + 1]++;
	for (uint32_t l = 0; l < nnodes; l++)
		cnt[l + 1] += cnt[l];
	for (uint32_t n = 0; n < nnodes; n++)
		order[cnt[e->node_wave[n]]++] = n;
	memset(last, 0xff, e->ng * sizeof *last);
	list_waves(e, order, node_step, nnodes, i0, last, ne, ni, false);
	for (uint32_t g = 0; g < e->ng; g++) {
		nent += ne[g];
		nitems += ni[g];
		e->gw0[g + 1] = e->gw0[g] + ne[g];
		i0[g + 1] = i0[g] + ni[g];
		e->gcur[g] = e->gw0[g];
	}
	if (nitems > UINT32_MAX) {
		rc = fast_err_set(err, FAST_ELIMIT, "simulator: too many transfers for --sync rank");
		goto out;
	}
	e->gw = fast_calloc(nent ? nent : 1, sizeof *e->gw);
	e->gx = fast_calloc(nitems ? nitems : 1, sizeof *e->gx);
	if (!e->gw || !e->gx)
		goto nomem;
	if (e->flight && (!(e->up_left = fast_calloc(nent ? nent : 1, sizeof *e->up_left)) ||
			  !(e->gcls = fast_calloc(nitems ? nitems : 1, sizeof *e->gcls))))
		goto nomem;
	memset(last, 0xff, e->ng * sizeof *last);
	memset(ne, 0, e->ng * sizeof *ne);
	memset(ni, 0, e->ng * sizeof *ni);
	list_waves(e, order, node_step, nnodes, i0, last, ne, ni, true);
	if (e->flight && flight_classes(e) < 0)
		goto nomem;
	rc = 0;
	goto out;
nomem:
	rc = fast_err_set(err, FAST_ENOMEM, "simulator: out of memory for the waves");
out:
	free(order);
	free(node_step);
	free(cnt);
	free(i0);
	free(last);
	free(ne);
	free(ni);
	return rc;
}

/* --- walking them ----------------------------------------------------------- */

/* The wave GPU g is in: the first it has not finished (UINT32_MAX after
 * its last). */
static uint32_t gpu_wave(const struct sim_engine *e, uint32_t g)
{
	return e->gcur[g] < e->gw0[g + 1] ? e->gw[e->gcur[g]].wave : UINT32_MAX;
}

/* Both GPUs of transfer xi have finished their waves before its chunk c's
 * (one wave in flight). */
static bool wave_reached(const struct sim_engine *e, uint32_t xi, uint32_t c)
{
	const struct fast_xfer *t = &e->x->xfers[xi];
	uint32_t w = sim_chunk_wave(e, xi, c);

	return gpu_wave(e, t->from) >= w && gpu_wave(e, t->to) >= w;
}

/* GPU g's entry (index into gw) for wave w: it has one for every wave of
 * its transfers. */
static uint32_t entry_of(const struct sim_engine *e, uint32_t g, uint32_t w)
{
	uint32_t lo = e->gw0[g], hi = e->gw0[g + 1];

	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (e->gw[mid].wave <= w)
			lo = mid;
		else
			hi = mid;
	}
	assert(lo < e->gw0[g + 1] && e->gw[lo].wave == w);
	return lo;
}

/* Two waves in flight: may chunk c of transfer xi start (sim.h "Waves in
 * flight")?  Both GPUs have finished their waves before the one before
 * its wave k, and its sender what its class waits for of k - 1. */
static bool flight_ready(const struct sim_engine *e, uint32_t xi, uint32_t c)
{
	const struct fast_xfer *t = &e->x->xfers[xi];
	uint32_t w = sim_chunk_wave(e, xi, c), ks = entry_of(e, t->from, w);
	const struct sim_gpu_wave *s = &e->gw[ks];

	if (t->to == t->from) /* a local copy: once its wave may begin */
		return e->gcur[t->from] + 1 >= ks;
	if (e->gcur[t->to] + 1 < entry_of(e, t->to, w) || e->gcur[t->from] + 1 < ks)
		return false;
	if (e->gcur[t->from] >= ks)
		return true;
	for (uint32_t i = s->x0; i < s->x0 + s->nx; i++)
		if (e->gx[i] == xi)
			return e->gcls[i] == FAST_FLIGHT_FREE ||
			       (e->gcls[i] == FAST_FLIGHT_UP && e->up_left[ks - 1] == 0);
	return false;
}

/* Ready what may start of GPU g's entry k. */
static int try_entry(struct sim_engine *e, uint32_t g, uint32_t k, double t)
{
	int rc;

	if (k >= e->gw0[g + 1])
		return 0;
	for (uint32_t i = e->gw[k].x0; i < e->gw[k].x0 + e->gw[k].nx; i++)
		if ((rc = sim_try_ready(e, e->gx[i], t)) < 0)
			return rc;
	return 0;
}

/* GPU g has entered its wave gcur[g]: ready its transfers there, and pass
 * on at once through waves with nothing (left) that takes time; with two
 * in flight, also what may start of the wave after. */
int sim_rank_enter(struct sim_engine *e, uint32_t g, double t)
{
	int rc;

	for (; e->gcur[g] < e->gw0[g + 1]; e->gcur[g]++) {
		if ((rc = try_entry(e, g, e->gcur[g], t)) < 0)
			return rc;
		if (e->gw[e->gcur[g]].left)
			break;
	}
	return e->flight ? try_entry(e, g, e->gcur[g] + 1, t) : 0;
}

/* Chunk c of transfer xi, a flow that took time, is done: one less for
 * each of its GPUs in its wave (their current one; with two in flight
 * perhaps the one after), which, when it was the last of their current
 * wave, ends. */
int sim_rank_flow_done(struct sim_engine *e, uint32_t xi, uint32_t c, double t)
{
	const struct fast_xfer *x = &e->x->xfers[xi];
	uint32_t gs[2] = { x->from, x->to };
	int rc;

	for (uint32_t q = 0; q < (x->to != x->from ? 2u : 1u); q++) {
		uint32_t g = gs[q], k = e->flight ? entry_of(e, g, sim_chunk_wave(e, xi, c)) : e->gcur[g];
		struct sim_gpu_wave *w = &e->gw[k];
		--w->left;
		/* the last scale-up arrival of a wave frees the next's UP sends */
		if (e->flight && q == 1 && e->x->steps[e->xs[xi].step].tier == FAST_TIER_UP &&
		    --e->up_left[k] == 0 && (rc = try_entry(e, g, k + 1, t)) < 0)
			return rc;
		if (w->left == 0 && k == e->gcur[g]) {
			e->gcur[g]++;
			if ((rc = sim_rank_enter(e, g, t)) < 0)
				return rc;
		}
	}
	return 0;
}

bool sim_rank_ready(const struct sim_engine *e, uint32_t xi, uint32_t c)
{
	return e->flight ? flight_ready(e, xi, c) : wave_reached(e, xi, c);
}

/* --sync rank: a step with no transfers is reported at the end of its
 * dependencies (in a topological order, so theirs are known). */
int sim_rank_report_empty(struct sim_engine *e, struct fast_err *err)
{
	uint32_t *order = fast_calloc(e->nsteps ? e->nsteps : 1, sizeof *order);
	int rc;

	if (!order)
		return fast_err_set(err, FAST_ENOMEM, "simulator: out of memory");
	if ((rc = fast_plan_topo_order(e->x, order, err)) == 0) {
		for (uint32_t i = 0; i < e->nsteps; i++) {
			const struct fast_step *s = &e->x->steps[order[i]];
			struct fast_sim_step *o = &e->out_steps[order[i]];
			double end = e->call_s;
			if (s->nxfers)
				continue;
			for (uint32_t k = 0; k < s->ndeps; k++)
				if (e->out_steps[e->x->deps[s->dep0 + k].step].end_s > end)
					end = e->out_steps[e->x->deps[s->dep0 + k].step].end_s;
			o->ready_s = o->start_s = o->end_s = end;
		}
	}
	free(order);
	return rc;
}
