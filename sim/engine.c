/*
 * engine.c - the simulator's event loop: fast_sim_run() sets up an engine
 * (setup.c), then pops timed events (step launches, flow starts, chunk
 * checks) and flow completions in time order, moving transfers through
 * idle -> pending -> active -> done and steps through ready -> launched ->
 * done, and asks maxmin.c for new rates after every change; by rank,
 * rank.c says when a transfer may start and moves GPUs through their
 * waves.  The model and its invariants are described in internal.h.
 */
#include "internal.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void fast_sim_opts_default(struct fast_sim_opts *o)
{
	memset(o, 0, sizeof *o);
	o->congestion = true;
	o->sync = FAST_SIM_SYNC_IMPL;
	o->epsilon = 0.0;
	o->timeline = false;
}

enum fast_sim_sync fast_sim_sync_of(const struct fast_topo *t, const char *algo,
				    enum fast_sim_sync asked)
{
	if (asked != FAST_SIM_SYNC_IMPL)
		return asked;
	return fast_topo_impl(t, algo)->sync == FAST_IMPL_SYNC_RANK ? FAST_SIM_SYNC_RANK
								    : FAST_SIM_SYNC_STEP;
}

/* --- transfers and steps --------------------------------------------------- */

/* By rank with steps in flight: has either GPU of transfer xi not yet
 * started a flow of its step's tier? */
static bool tier_fresh(const struct sim_engine *e, uint32_t xi)
{
	const struct fast_xfer *t = &e->x->xfers[xi];
	uint8_t bit = (uint8_t)(1u << (e->x->steps[e->xs[xi].step].tier == FAST_TIER_OUT));

	return e->tiers_seen && (!(e->tiers_seen[t->from] & bit) || !(e->tiers_seen[t->to] & bit));
}

/* Make chunk x->chunk of transfer xi ready at time t if its step has
 * launched and its pipelined deps allow it (by rank: if its GPUs have
 * reached its wave). */
int sim_try_ready(struct sim_engine *e, uint32_t xi, double t)
{
	struct sim_transfer *x = &e->xs[xi];
	struct sim_step_state *s = &e->st[x->step];
	struct sim_path *f = &e->fl[xi];
	bool pays;
	double delay;

	if (x->state != X_IDLE || !s->launched || x->chunk >= s->chunks)
		return 0;
	if (e->pipe_left[s->c0 + x->chunk] != 0)
		return 0;
	if (e->by_rank && !sim_rank_ready(e, xi, x->chunk))
		return 0;
	/* with chunks or steps in flight, one in every in_flight pays (by
	 * rank, also a GPU's first flow of its tier: nothing overlaps it) */
	pays = fast_impl_pays(e->im, s->depth) || tier_fresh(e, xi);
	delay = (x->chunk ? fast_impl_pays(e->im, x->chunk) : pays) ? s->alpha : 0.0;
	if (e->by_rank) {
		/* entering a wave costs the rank its step's overhead */
		if ((x->chunk == 0 || sim_chunk_wave(e, xi, x->chunk - 1) != sim_chunk_wave(e, xi, x->chunk)) &&
		    pays)
			delay += s->overhead;
		if (e->out_steps[x->step].ready_s > t)
			e->out_steps[x->step].ready_s = t;
	}
	x->cbytes = sim_chunk_bytes(x->bytes, s->chunks, x->chunk);
	x->state = X_PENDING;
	if (x->cbytes == 0 || f->nres == 0)
		return ev_push(&e->ev, t, EV_START, xi, 0);
	return ev_push(&e->ev, t + delay, EV_START, xi, 0);
}

static int step_ready(struct sim_engine *e, uint32_t si, double t)
{
	struct sim_step_state *s = &e->st[si];

	bool pays = s->bytes && fast_impl_pays(e->im, s->depth);

	s->ready = true;
	e->out_steps[si].ready_s = t;
	e->out_steps[si].start_s = INF_TIME;
	return ev_push(&e->ev, pays ? t + s->overhead : t, EV_LAUNCH, si, 0);
}

static int step_done(struct sim_engine *e, uint32_t si, double t)
{
	struct sim_step_state *s = &e->st[si];
	int rc;

	s->done = true;
	e->out_steps[si].end_s = t;
	if (e->out_steps[si].start_s == INF_TIME)
		e->out_steps[si].start_s = t;
	for (uint32_t k = 0; k < s->nrdep; k++) {
		const struct sim_dep *d = &e->rdeps[s->rdep0 + k];
		if (d->pipelined)
			continue;
		if (--e->st[d->step].full_left == 0 && (rc = step_ready(e, d->step, t)) < 0)
			return rc;
	}
	return 0;
}

/* Chunk c of step si is complete when it launched, its pipelined deps'
 * chunk c are done and all its transfers finished chunk c. */
static int step_chunk_check(struct sim_engine *e, uint32_t si, uint32_t c, double t)
{
	struct sim_step_state *s = &e->st[si];
	int rc;

	if (!s->launched || e->pipe_left[s->c0 + c] != 0 || e->chunk_left[s->c0 + c] != 0)
		return 0;
	e->chunk_left[s->c0 + c] = UINT32_MAX; /* reported once */
	s->chunks_done++;
	for (uint32_t k = 0; k < s->nrdep; k++) {
		const struct sim_dep *d = &e->rdeps[s->rdep0 + k];
		struct sim_step_state *ds;
		if (!d->pipelined)
			continue;
		ds = &e->st[d->step];
		if (--e->pipe_left[ds->c0 + c] != 0)
			continue;
		if (!ds->launched)
			continue;
		if (ds->nx == 0) {
			if ((rc = ev_push(&e->ev, t, EV_CHUNK, d->step, c)) < 0)
				return rc;
			continue;
		}
		for (uint32_t j = 0; j < ds->nx; j++)
			if ((rc = sim_try_ready(e, ds->x0 + j, t)) < 0)
				return rc;
	}
	if (s->chunks_done == s->chunks)
		return step_done(e, si, t);
	return 0;
}

static int chunk_finished(struct sim_engine *e, uint32_t xi, double t)
{
	struct sim_transfer *x = &e->xs[xi];
	struct sim_step_state *s = &e->st[x->step];
	struct sim_path *f = &e->fl[xi];
	uint32_t c = x->chunk;
	int rc;

	if (f->nres) {
		for (uint32_t k = 0; k < f->nres; k++)
			e->rinfo[f->res[k]].bytes += x->cbytes;
		if (x->cbytes)
			x->t_last = t;
	}
	x->chunk++;
	x->state = x->chunk >= s->chunks ? X_DONE : X_IDLE;
	if (e->chunk_left[s->c0 + c] > 0 && e->chunk_left[s->c0 + c] != UINT32_MAX)
		e->chunk_left[s->c0 + c]--;
	if ((rc = step_chunk_check(e, x->step, c, t)) < 0)
		return rc;
	if (e->by_rank && f->nres && x->cbytes && (rc = sim_rank_flow_done(e, xi, c, t)) < 0)
		return rc;
	if (x->state == X_IDLE)
		return sim_try_ready(e, xi, t);
	return 0;
}

/* Note resources whose flows changed: the next allocation starts from them. */
static void mark_dirty(struct sim_engine *e, const uint32_t *res, uint32_t nres)
{
	if (e->all_dirty)
		return;
	for (uint32_t k = 0; k < nres; k++) {
		struct sim_resource *r = &e->rs[res[k]];
		if (r->dirty)
			continue;
		r->dirty = true;
		e->dirty[e->ndirty++] = res[k];
	}
}

/* Scalable mode: capacity a completed flow leaves unused until the next
 * allocation (its rate, plus what a lifted incast penalty gives back). */
static void add_freed(struct sim_engine *e, const uint32_t *res, uint32_t nres, double rate)
{
	for (uint32_t k = 0; k < nres; k++) {
		struct sim_resource *r = &e->rs[res[k]];
		double gain = rate;
		if (r->ingress_nic && e->opts.congestion)
			gain += r->base * (fast_incast_factor(&e->topo->congestion, r->n) -
					   fast_incast_factor(&e->topo->congestion, r->n + 1));
		r->freed += gain;
		if (r->freed > e->opts.epsilon * r->cap)
			e->must_recompute = true;
	}
}

/* Flow xi starts at t: it takes the next active position; its resources
 * list that position. */
static int activate(struct sim_engine *e, uint32_t xi, double t)
{
	struct sim_transfer *x = &e->xs[xi];
	const struct sim_path *f = &e->fl[xi];
	uint32_t pos = e->nactive++;
	struct sim_active_flow *h = &e->hot[pos];

	x->state = X_ACTIVE;
	x->apos = pos;
	h->x = xi;
	h->mark = 0;
	h->nres = f->nres;
	h->rem = (double)x->cbytes;
	h->rate = 0.0;
	h->t_upd = t;
	h->fin = INF_TIME;
	for (uint32_t k = 0; k < f->nres; k++) {
		struct sim_resource *r = &e->rs[f->res[k]];
		h->res[k] = f->res[k];
		struct sim_slot *sl = &e->lists[r->l0 + r->n];
		uint32_t no = 0;
		x->pos[k] = r->n++;
		sl->pos = pos;
		sl->k = k;
		sl->o[0] = sl->o[1] = NO_RES;
		for (uint32_t i = 0; i < f->nres; i++)
			if (i != k)
				sl->o[no++] = f->res[i];
		if (r->n > e->rinfo[f->res[k]].max_flows)
			e->rinfo[f->res[k]].max_flows = r->n;
	}
	if (x->inherit > 0.0 && x->inherit_gen == e->recomputes && !e->scan) {
		/* the previous chunk's rate, held for it: still feasible */
		h->rate = x->inherit;
		for (uint32_t k = 0; k < h->nres; k++)
			e->rs[h->res[k]].load += h->rate;
		h->fin = t + h->rem / h->rate;
		ih_update(&e->fin, e->hpos, xi, h->fin);
		if (h->fin < e->next_fin)
			e->next_fin = h->fin;
	} else {
		e->arrivals = true;
		e->seq_ok = false;
		mark_dirty(e, h->res, h->nres);
	}
	x->inherit = 0.0;
	if (x->chunk == 0)
		x->t_first = t;
	if (e->out_steps[x->step].start_s > t)
		e->out_steps[x->step].start_s = t;
	if (e->tiers_seen) {
		const struct fast_xfer *tx = &e->x->xfers[xi];
		uint8_t bit = (uint8_t)(1u << (e->x->steps[x->step].tier == FAST_TIER_OUT));
		e->tiers_seen[tx->from] |= bit;
		e->tiers_seen[tx->to] |= bit;
	}
	e->flows++;
	return 0;
}

/* Remove flow xi: out of its resources' lists, and the last active flow
 * moves into its position. */
static void deactivate(struct sim_engine *e, uint32_t xi)
{
	struct sim_transfer *x = &e->xs[xi];
	uint32_t pos = x->apos, last;
	struct sim_active_flow *h = &e->hot[pos];

	mark_dirty(e, h->res, h->nres);
	for (uint32_t k = 0; k < h->nres; k++)
		e->rs[h->res[k]].load -= h->rate;
	if (e->seq_ok) {
		/* the last full pass holds up to this flow's bottleneck */
		const uint32_t *b = NULL;
		for (uint32_t k = 0; k < h->nres; k++) {
			const struct sim_level *r = &e->lv[h->res[k]];
			if (r->popn > e->seq_p0 && (!b || r->popn < e->lv[*b].popn))
				b = &h->res[k];
		}
		if (!b)
			e->seq_ok = false;
		else if (e->rs[*b].seqi < e->seq_cut)
			e->seq_cut = e->rs[*b].seqi;
	}
	for (uint32_t k = 0; k < h->nres; k++) {
		uint32_t ri = h->res[k];
		struct sim_resource *r = &e->rs[ri];
		uint32_t slot = x->pos[k];
		uint32_t mpos = e->lists[r->l0 + --r->n].pos;
		if (mpos != pos) {
			const struct sim_active_flow *m = &e->hot[mpos];
			struct sim_transfer *mx = &e->xs[m->x];
			e->lists[r->l0 + slot] = e->lists[r->l0 + r->n];
			for (uint32_t j = 0; j < m->nres; j++)
				if (m->res[j] == ri)
					mx->pos[j] = slot;
		}
	}
	last = --e->nactive;
	if (pos != last) {
		struct sim_transfer *mx;
		e->hot[pos] = e->hot[last];
		mx = &e->xs[e->hot[pos].x];
		mx->apos = pos;
		for (uint32_t k = 0; k < e->hot[pos].nres; k++)
			e->lists[e->rs[e->hot[pos].res[k]].l0 + mx->pos[k]].pos = pos;
	}
	x->state = X_IDLE;
}

/* Complete every flow due by t + tol. */
static int complete_due(struct sim_engine *e, double t, double tol)
{
	int rc;

	if (e->scan) {
		uint32_t n = 0;
		for (uint32_t k = 0; k < e->ndue; k++) {
			const struct sim_transfer *x = &e->xs[e->due[k]];
			if (x->state == X_ACTIVE && e->hot[x->apos].fin <= t + tol)
				e->due[n++] = e->due[k];
		}
		e->ndue = 0;
		for (uint32_t k = 0; k < n; k++) {
			deactivate(e, e->due[k]);
			if ((rc = chunk_finished(e, e->due[k], t)) < 0)
				return rc;
		}
		if (n)
			e->must_recompute = true;
		e->next_fin = INF_TIME; /* until the allocation that follows */
		return 0;
	}
	for (;;) {
		struct kv k;
		struct sim_transfer *x;
		struct sim_active_flow hv;

		if (!e->fin.n || e->fin.a[0].k > t + tol)
			break;
		k = e->fin.a[0];
		ih_remove(&e->fin, e->hpos, k.id);
		x = &e->xs[k.id];
		hv = e->hot[x->apos];
		deactivate(e, k.id);
		if ((rc = chunk_finished(e, k.id, t)) < 0)
			return rc;
		if (e->exact) {
			e->must_recompute = true;
			continue;
		}
		/* counted as freed even when the next chunk follows and keeps
		 * the rate: the alpha gap idles it */
		add_freed(e, hv.res, hv.nres, hv.rate);
		if (x->state == X_PENDING && x->cbytes > 0) {
			x->inherit = hv.rate;
			x->inherit_gen = e->recomputes;
		}
	}
	fin_settle(e);
	return 0;
}

/* The loss/timeout regime: a scale-out flow starting while its ingress
 * NIC already carries rto_senders flows overflows the switch buffer (the
 * bytes in flight into one port exceed it) and is lost. */
static bool lost(const struct sim_engine *e, uint32_t xi)
{
	const struct sim_path *f = &e->fl[xi];

	if (e->rto_s <= 0.0 || !e->opts.congestion)
		return false;
	for (uint32_t k = 0; k < f->nres; k++) {
		const struct sim_resource *r = &e->rs[f->res[k]];
		if (r->ingress_nic)
			return (double)r->n >= e->topo->rto.senders;
	}
	return false;
}

static int process_event(struct sim_engine *e, const struct ev *v)
{
	int rc;

	switch (v->type) {
	case EV_LAUNCH: {
		struct sim_step_state *s = &e->st[v->id];
		s->launched = true;
		if (s->nx == 0) {
			for (uint32_t c = 0; c < s->chunks; c++)
				if ((rc = step_chunk_check(e, v->id, c, v->t)) < 0)
					return rc;
			return 0;
		}
		for (uint32_t j = 0; j < s->nx; j++)
			if ((rc = sim_try_ready(e, s->x0 + j, v->t)) < 0)
				return rc;
		return 0;
	}
	case EV_START: {
		struct sim_transfer *x = &e->xs[v->id];
		if (x->cbytes == 0 || e->fl[v->id].nres == 0) {
			x->state = X_ACTIVE; /* zero-time flow */
			return chunk_finished(e, v->id, v->t);
		}
		if (v->aux == 0 && lost(e, v->id)) {
			/* waits out the timeouts, then goes (aux 1: not lost twice) */
			e->rto_losses++;
			x->inherit = 0.0;
			return ev_push(&e->ev, v->t + e->rto_s, EV_START, v->id, 1);
		}
		return activate(e, v->id, v->t);
	}
	case EV_CHUNK:
		return step_chunk_check(e, v->id, v->aux, v->t);
	}
	return 0;
}

static void sim_engine_free(struct sim_engine *e)
{
	free(e->xs);
	free(e->fl);
	free(e->st);
	free(e->pipe_left);
	free(e->chunk_left);
	free(e->rdeps);
	free(e->rs);
	free(e->rinfo);
	free(e->lists);
	free(e->popseq);
	free(e->lv);
	free(e->hot);
	free(e->nrate);
	free(e->cflows);
	free(e->cres);
	free(e->dirty);
	free(e->slist);
	free(e->due);
	free(e->hpos);
	free(e->ev.a);
	free(e->fin.a);
	free(e->fill.a);
	free(e->node_wave);
	free(e->gw);
	free(e->gw0);
	free(e->gcur);
	free(e->gx);
	free(e->gcls);
	free(e->up_left);
	free(e->tiers_seen);
}

/* --sync rank: no step waits for another (the waves do); every GPU enters
 * its first wave once the call's fixed cost is paid. */
static int start_by_rank(struct sim_engine *e)
{
	int rc;

	for (uint32_t si = 0; si < e->nsteps; si++) {
		struct sim_step_state *s = &e->st[si];
		s->launched = s->ready = true;
		e->out_steps[si].ready_s = e->out_steps[si].start_s = INF_TIME;
		for (uint32_t c = 0; c < s->chunks && s->nx == 0; c++)
			if ((rc = step_chunk_check(e, si, c, e->call_s)) < 0)
				return rc;
	}
	for (uint32_t g = 0; g < e->ng; g++)
		if ((rc = sim_rank_enter(e, g, e->call_s)) < 0)
			return rc;
	return 0;
}

static int run(struct sim_engine *e, struct fast_err *err)
{
	double t = 0.0;
	int rc;

	if (e->by_rank && (rc = start_by_rank(e)) < 0)
		goto oom;
	for (uint32_t si = 0; si < e->nsteps && !e->by_rank; si++)
		if (e->st[si].full_left == 0 && (rc = step_ready(e, si, e->call_s)) < 0)
			goto oom;
	for (;;) {
		double tE = e->ev.n ? e->ev.a[0].t : INF_TIME;
		double tF = e->next_fin;
		double tol;

		if (tE == INF_TIME && tF == INF_TIME)
			break;
		t = tE < tF ? tE : tF;
		tol = t * 1e-12 + 1e-18;
		e->events++;
		if (tF <= t + tol && (rc = complete_due(e, t, tol)) < 0)
			goto oom;
		while (e->ev.n && e->ev.a[0].t <= t + tol) {
			struct ev v = ev_pop(&e->ev);
			v.t = t > v.t ? t : v.t;
			if ((rc = process_event(e, &v)) < 0)
				goto oom;
		}
		if ((e->arrivals || e->must_recompute) && (rc = sim_recompute(e, t)) < 0)
			goto oom;
	}
	for (uint32_t si = 0; si < e->nsteps; si++)
		if (!e->st[si].done)
			return fast_err_set(err, FAST_EINPUT,
					    "plan: step %u never completes (a dependency cycle or a pipelined dependency it cannot meet)",
					    si);
	return e->by_rank ? sim_rank_report_empty(e, err) : 0;
oom:
	return fast_err_set(err, rc, "simulator: out of memory");
}

/* What the engine needs of its inputs besides a valid plan. */
static int sim_inputs_ok(const struct fast_topo *topo, const struct fast_plan *p,
			 const struct fast_sim_opts *o, struct fast_err *err)
{
	if (o->epsilon < 0.0 || !(o->epsilon < 1.0))
		return fast_err_set(err, FAST_EUSAGE, "simulator: epsilon must be in [0, 1) (got %g)",
				    o->epsilon);
	if (o->sync != FAST_SIM_SYNC_STEP && o->sync != FAST_SIM_SYNC_RANK &&
	    o->sync != FAST_SIM_SYNC_IMPL)
		return fast_err_set(err, FAST_EUSAGE, "simulator: unknown sync mode %d", (int)o->sync);
	if (o->in_flight > FAST_IN_FLIGHT_MAX)
		return fast_err_set(err, FAST_EUSAGE, "simulator: %u waves in flight (at most %u)",
				    o->in_flight, FAST_IN_FLIGHT_MAX);
	if (topo->nics < 1 || topo->nics > FAST_NICS_MAX)
		return fast_err_set(err, FAST_EINPUT, "topology: %u NICs per server (must be in [1, %u])",
				    topo->nics, FAST_NICS_MAX);
	return fast_plan_fits_topo(p, topo, err);
}

int fast_sim_run(const struct fast_topo *topo, const struct fast_plan_view *v,
		 const struct fast_sim_opts *opts, struct fast_sim_result *out, struct fast_err *err)
{
	const struct fast_plan *p = v->given;
	struct fast_sim_opts o;
	struct sim_engine e;
	struct fast_sim_result r;
	double t0 = fast_now();
	int rc;

	if (opts)
		o = *opts;
	else
		fast_sim_opts_default(&o);
	if ((rc = sim_inputs_ok(topo, p, &o, err)) < 0)
		return rc;

	memset(&e, 0, sizeof e);
	memset(&r, 0, sizeof r);
	e.topo = topo;
	e.x = v->x;
	e.im = fast_topo_impl(topo, p->algo);
	e.call_s = e.im->call_us * 1e-6;
	e.opts = o;
	e.N = topo->servers;
	e.G = topo->gpus;
	e.ng = e.N * e.G;
	e.alpha[0] = topo->up.latency_us * 1e-6;
	e.alpha[1] = topo->out.latency_us * 1e-6;
	e.overhead[0] = topo->up.step_overhead_us * 1e-6;
	e.overhead[1] = topo->out.step_overhead_us * 1e-6;
	if (fast_topo_rto_on(topo))
		e.rto_s = topo->rto.count * topo->rto.us * 1e-6;

	r.nsteps = (uint32_t)p->nsteps;
	r.steps = fast_calloc(r.nsteps ? r.nsteps : 1, sizeof *r.steps);
	if (!r.steps) {
		rc = fast_err_set(err, FAST_ENOMEM, "simulator: out of memory");
		goto fail;
	}
	e.out_steps = r.steps;
	e.by_rank = fast_sim_sync_of(topo, p->algo, o.sync) == FAST_SIM_SYNC_RANK;
	e.flight = e.by_rank && o.in_flight > 1;
	if (o.in_flight > 1 && !e.by_rank) {
		rc = fast_err_set(err, FAST_EUSAGE,
				  "simulator: %u waves in flight are modelled by rank: give --sync rank",
				  o.in_flight);
		goto fail;
	}
	if (e.by_rank && e.im->in_flight > 1 &&
	    !(e.tiers_seen = fast_calloc(e.ng ? e.ng : 1, sizeof *e.tiers_seen))) {
		rc = fast_err_set(err, FAST_ENOMEM, "simulator: out of memory");
		goto fail;
	}
	if ((rc = sim_build_steps(&e, err)) < 0 || (rc = sim_build_resources(&e, err)) < 0 ||
	    (rc = sim_build_transfers(&e, err)) < 0 || (e.by_rank && (rc = sim_build_waves(&e, err)) < 0))
		goto fail;
	for (uint32_t si = 0; si < e.nsteps; si++)
		if (p->steps[si].tier == FAST_TIER_OUT && e.st[si].bytes) { /* the call crosses */
			e.call_s += e.im->call_out_us * 1e-6;
			break;
		}
	if (o.reference)
		o.epsilon = 0.0;
	e.opts = o;
	e.exact = o.epsilon <= 0.0 || e.demand; /* demand: exact passes (sim.h) */
	e.next_fin = INF_TIME;
	if (kv_reserve(&e.fin, (size_t)e.nx + 1) < 0 || kv_reserve(&e.fill, (size_t)e.nr * 4 + 16) < 0) {
		rc = fast_err_set(err, FAST_ENOMEM, "simulator: out of memory");
		goto fail;
	}
	if ((rc = run(&e, err)) < 0)
		goto fail;

	for (uint32_t si = 0; si < r.nsteps; si++) {
		r.steps[si].kind = p->steps[si].kind;
		r.steps[si].tier = p->steps[si].tier;
		r.steps[si].bytes = e.st[si].bytes;
		r.steps[si].transfers = e.st[si].nx;
		if (r.steps[si].end_s > r.time_s)
			r.time_s = r.steps[si].end_s;
	}
	if (r.time_s < e.call_s) /* a call costs its fixed cost, whatever it moves */
		r.time_s = e.call_s;
	r.ngpus = e.ng;
	r.nres = e.nr;
	r.res = e.rinfo;
	e.rinfo = NULL;
	for (uint32_t ri = 0; ri < r.nres; ri++)
		r.res[ri].util = r.time_s > 0 && r.res[ri].cap_Bps > 0 ? (double)r.res[ri].bytes / (r.res[ri].cap_Bps * r.time_s) : 0.0;
	{
		struct fast_bw bw;
		fast_bw(o.traffic ? fast_a2a_size(o.traffic, e.ng) : sim_gpu_bytes(e.x, e.ng), r.time_s,
			e.ng, &bw);
		r.gpu_bytes = bw.size;
		r.algbw_GBps = bw.algbw_GBps;
		r.busbw_GBps = bw.busbw_GBps;
	}
	r.flows = e.flows;
	r.events = e.events;
	r.recomputes = e.recomputes;
	r.full_allocs = e.full_allocs;
	r.rto_losses = e.rto_losses;
	r.replayed = e.replayed;
	if (o.timeline && (rc = sim_build_timeline(&e, &r, err)) < 0)
		goto fail;
	r.wall_s = fast_now() - t0;
	sim_engine_free(&e);
	*out = r;
	return 0;
fail:
	sim_engine_free(&e);
	fast_sim_result_free(&r);
	return rc;
}
