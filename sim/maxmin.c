/*
 * maxmin.c - the simulator's rate allocation: max-min fair rates by
 * progressive filling over the flow-resource graph, exact (per changed
 * component, or a full pass that replays the still-valid prefix of the
 * last one) or scalable (lazy local repair, epsilon > 0).  See internal.h
 * for the model.  One idea, and the allocation reads best whole, so it is
 * kept in one file.
 */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Every active flow into the heap (after a full pass). */
static void ih_rebuild(struct sim_engine *e)
{
	ih_clear(&e->fin, e->hpos);
	for (uint32_t a = 0; a < e->nactive; a++)
		e->fin.a[e->fin.n++] = (struct kv){ e->hot[a].fin, e->hot[a].x };
	kv_heapify(&e->fin);
	for (size_t i = 0; i < e->fin.n; i++)
		e->hpos[e->fin.a[i].id] = (uint32_t)i;
}

/* Collect the part of the flow-resource graph that changed since the last
 * allocation: the connected components holding a dirty resource (the max-
 * min allocation separates over components, so the others keep their
 * rates).  Returns false when that part is large (a full pass is cheaper):
 * then the caller reallocates everything. */
static bool collect_component(struct sim_engine *e, uint32_t *nf, uint32_t *nrc)
{
	uint32_t limit = e->nactive / 4 + 64, f = 0, r = 0;

	if (e->all_dirty || e->opts.reference || e->demand)
		return false; /* demand: the core's factor depends on every flow through it */
	if (e->bfs_skip) {
		/* the last searches found one big component: back off */
		e->bfs_skip--;
		return false;
	}
	e->stamp++;
	for (uint32_t i = 0; i < e->ndirty; i++) {
		struct sim_resource *rs = &e->rs[e->dirty[i]];
		if (rs->mark != e->stamp) {
			rs->mark = e->stamp;
			e->cres[r++] = e->dirty[i];
		}
	}
	for (uint32_t i = 0; i < r; i++) {
		const struct sim_resource *rs = &e->rs[e->cres[i]];
		const struct sim_slot *l = e->lists + rs->l0;
		for (uint32_t j = 0; j < rs->n; j++) {
			/* a flow is taken from the list of its first resource */
			if (l[j].k == 0) {
				if (f == limit) {
					/* a few changes reaching this far: one big
					 * component (fanout), not many small ones */
					if (e->ndirty <= 8)
						e->bfs_skip = 15;
					return false;
				}
				e->cflows[f++] = l[j].pos;
			}
			for (uint32_t k = 0; k < 2 && l[j].o[k] != NO_RES; k++) {
				struct sim_resource *r2 = &e->rs[l[j].o[k]];
				if (r2->mark != e->stamp) {
					r2->mark = e->stamp;
					e->cres[r++] = l[j].o[k];
				}
			}
		}
	}
	*nf = f;
	*nrc = r;
	return true;
}

/* Scalable mode: re-fill only the flows at the resources that changed
 * since the last allocation (one hop), against what the other flows
 * leave of each resource they touch; the others keep their rates, so the
 * result stays feasible.  Returns 1 when it did so, 0 when a full pass is
 * due instead (the changed part is large, or repairs since the last full
 * pass have re-filled as many flows as are active: amortised, a full
 * pass then costs no more than the repairs did). */
static int repair(struct sim_engine *e, double t)
{
	struct kvheap *h = &e->fill;
	uint32_t nf = 0, nrc = 0, off = 0, epoch;

	if (e->all_dirty || e->repair_work > e->nactive)
		return 0;
	e->stamp++;
	for (uint32_t i = 0; i < e->ndirty; i++) {
		const struct sim_resource *rs = &e->rs[e->dirty[i]];
		const struct sim_slot *l = e->lists + rs->l0;
		for (uint32_t j = 0; j < rs->n; j++) {
			if (e->hot[l[j].pos].mark == e->stamp)
				continue;
			e->hot[l[j].pos].mark = e->stamp;
			if (nf > e->nactive / 2)
				return 0;
			e->cflows[nf++] = l[j].pos;
		}
	}
	e->recomputes++;
	epoch = ++e->stamp; /* fresh: differs from the marks just made */
	e->repair_work += nf;
	/* the sub-problem's resources, their flow counts and free capacity */
	for (uint32_t i = 0; i < nf; i++) {
		const struct sim_active_flow *f = &e->hot[e->cflows[i]];
		for (uint32_t k = 0; k < f->nres; k++) {
			struct sim_resource *r = &e->rs[f->res[k]];
			if (r->mark != e->stamp) {
				r->mark = e->stamp;
				r->scnt = 0;
				r->rcap = r->load;
				e->cres[nrc++] = f->res[k];
			}
			r->scnt++;
			r->rcap -= f->rate; /* what the fixed flows use, so far */
		}
	}
	h->n = 0;
	for (uint32_t i = 0; i < nrc; i++) {
		struct sim_resource *r = &e->rs[e->cres[i]];
		double fixed = r->rcap > 0.0 ? r->rcap : 0.0;
		r->cap = r->base;
		if (r->ingress_nic && e->opts.congestion)
			r->cap *= fast_incast_factor(&e->topo->congestion, r->n);
		r->rcap = r->cap - fixed;
		if (r->rcap < 0.0)
			r->rcap = 0.0;
		r->rcnt = r->scnt;
		r->sl0 = off;
		off += r->scnt;
		r->scnt = 0;
		r->freed = 0.0;
		h->a[h->n++] = (struct kv){ r->rcap / r->rcnt, e->cres[i] };
	}
	for (uint32_t i = 0; i < nf; i++) {
		const struct sim_active_flow *f = &e->hot[e->cflows[i]];
		for (uint32_t k = 0; k < f->nres; k++) {
			struct sim_resource *r = &e->rs[f->res[k]];
			e->slist[r->sl0 + r->scnt++] = e->cflows[i];
		}
	}
	kv_heapify(h);
	while (h->n) {
		struct kv top = h->a[0];
		struct sim_resource *r = &e->rs[top.id];
		double share;

		if (r->rcnt == 0) {
			kv_pop(h);
			continue;
		}
		share = (r->rcap > 0.0 ? r->rcap : 0.0) / r->rcnt;
		if (share < top.k)
			share = top.k;
		if (share > top.k * (1.0 + 1e-12)) {
			h->a[0].k = share;
			kv_down(h->a, h->n, 0, NULL);
			continue;
		}
		kv_pop(h);
		for (uint32_t j = 0; j < r->scnt; j++) {
			uint32_t a = e->slist[r->sl0 + j];
			const struct sim_active_flow *f = &e->hot[a];
			if (e->hot[a].mark == epoch)
				continue;
			e->hot[a].mark = epoch;
			e->nrate[a] = share;
			for (uint32_t k = 0; k < f->nres; k++) {
				struct sim_resource *r2;
				if (f->res[k] == top.id)
					continue;
				r2 = &e->rs[f->res[k]];
				r2->rcap -= share;
				r2->rcnt--;
			}
		}
		r->rcnt = 0;
	}
	for (uint32_t i = 0; i < nf; i++) {
		struct sim_active_flow *f = &e->hot[e->cflows[i]];
		double nrate = e->nrate[e->cflows[i]];
		f->rem -= f->rate * (t - f->t_upd);
		if (f->rem < 0.0)
			f->rem = 0.0;
		f->t_upd = t;
		for (uint32_t k = 0; k < f->nres; k++)
			e->rs[f->res[k]].load += nrate - f->rate;
		f->rate = nrate;
		f->fin = f->rate > 0.0 ? t + f->rem / f->rate : INF_TIME;
		ih_update(&e->fin, e->hpos, f->x, f->fin);
	}
	for (uint32_t i = 0; i < e->ndirty; i++)
		e->rs[e->dirty[i]].dirty = false;
	e->ndirty = 0;
	fin_settle(e);
	e->arrivals = false;
	e->must_recompute = false;
	return 1;
}

/* Freeze resource r at share: its flows not frozen yet (none of their
 * other resources frozen since pop count p0) take share (flow_rate finds
 * it), and their other resources lose it.  Returns how many it froze. */
static uint32_t freeze(struct sim_engine *e, uint32_t rid, double share, uint64_t p0)
{
	struct sim_resource *r = &e->rs[rid];
	const struct sim_slot *l = e->lists + r->l0;
	uint32_t n = r->rcnt;

	e->lv[rid].level = share;
	e->lv[rid].popn = ++e->npop;
	r->seqi = e->npopseq;
	e->popseq[e->npopseq++] = rid;
	for (uint32_t j = 0; j < r->n; j++) {
		uint32_t o0 = l[j].o[0], o1 = l[j].o[1];
		struct sim_resource *a, *b;
		if (o0 == NO_RES)
			continue;
		if (e->lv[o0].popn > p0)
			continue;
		a = &e->rs[o0];
		if (o1 != NO_RES) {
			if (e->lv[o1].popn > p0)
				continue;
			b = &e->rs[o1];
			b->rcap -= share;
			b->rcnt--;
			b->touched = true;
		}
		a->rcap -= share;
		a->rcnt--;
		a->touched = true;
	}
	r->rcnt = 0;
	r->rcap = 0.0;
	return n;
}

/* freeze() for a component pass: a few flows, in cache; visiting them
 * costs less than the bookkeeping of levels.  Frozen flows are marked with
 * epoch and get their rate in e->nrate. */
static uint32_t freeze_flows(struct sim_engine *e, uint32_t rid, double share, uint32_t epoch)
{
	struct sim_resource *r = &e->rs[rid];
	const struct sim_slot *l = e->lists + r->l0;
	uint32_t n = r->rcnt;

	for (uint32_t j = 0; j < r->n; j++) {
		struct sim_active_flow *f = &e->hot[l[j].pos];
		if (f->mark == epoch)
			continue;
		f->mark = epoch;
		e->nrate[l[j].pos] = share;
		for (uint32_t k = 0; k < f->nres; k++) {
			struct sim_resource *r2;
			if (f->res[k] == rid)
				continue;
			r2 = &e->rs[f->res[k]];
			r2->rcap -= share;
			r2->rcnt--;
			r2->touched = true;
		}
	}
	r->rcnt = 0;
	r->rcap = 0.0;
	return n;
}

/* A flow's max-min rate after a pass that started at pop count p0: the
 * level of the first of its resources the pass froze. */
static inline double flow_rate(const struct sim_engine *e, const struct sim_active_flow *f, uint64_t p0)
{
	const struct sim_level *best = NULL;

	if (f->nres == 2) {
		/* the common case, without branches on which one it is */
		const struct sim_level *x = &e->lv[f->res[0]], *y = &e->lv[f->res[1]];
		uint64_t px = x->popn > p0 ? x->popn : UINT64_MAX;
		uint64_t py = y->popn > p0 ? y->popn : UINT64_MAX;
		double l = px <= py ? x->level : y->level;
		return (px & py) == UINT64_MAX ? 0.0 : l;
	}
	for (uint32_t k = 0; k < f->nres; k++) {
		const struct sim_level *r = &e->lv[f->res[k]];
		if (r->popn > p0 && (!best || r->popn < best->popn))
			best = r;
	}
	return best ? best->level : 0.0;
}

/* The resources to fill (cres[0..nrc)) start from their capacity under
 * the current incast, with all their flows unfrozen. */
static void fill_reset(struct sim_engine *e, uint32_t nrc)
{
	for (uint32_t i = 0; i < nrc; i++) {
		uint32_t ri = e->cres[i];
		struct sim_resource *r = &e->rs[ri];
		r->freed = 0.0;
		if (r->n == 0)
			continue;
		r->cap = r->base;
		if (r->ingress_nic && e->opts.congestion)
			r->cap *= fast_incast_factor(&e->topo->congestion, r->n);
		r->rcap = r->cap;
		r->rcnt = r->n;
	}
}

/* The smallest share among a few resources, by a scan that also raises
 * the touched ones' keys and drops those with no unfrozen flow.  False
 * when none is left. */
static bool bottleneck_scan(struct sim_engine *e, uint32_t *rid, double *share)
{
	struct kvheap *h = &e->fill;
	size_t k = 0;
	struct kv best = { INF_TIME, UINT32_MAX };

	for (size_t i = 0; i < h->n; i++) {
		struct kv v = h->a[i];
		struct sim_resource *c = &e->rs[v.id];
		if (c->rcnt == 0)
			continue;
		if (c->touched) {
			/* (an untouched share is what it was) */
			double sh = (c->rcap > 0.0 ? c->rcap : 0.0) / c->rcnt;
			if (sh > v.k)
				v.k = sh; /* shares never decrease; rounding only */
			c->touched = false;
		}
		h->a[k++] = v;
		if (v.k < best.k || (v.k == best.k && v.id < best.id))
			best = v;
	}
	h->n = k;
	if (best.id == UINT32_MAX)
		return false;
	*rid = best.id;
	*share = best.k;
	return true;
}

/* The smallest share among many resources, from the lazy heap: a stale
 * key is a lower bound, raised in place when it surfaces.  False when the
 * heap is empty. */
static bool bottleneck_heap(struct sim_engine *e, uint32_t *rid, double *share)
{
	struct kvheap *h = &e->fill;

	for (;;) {
		struct sim_resource *r;
		struct kv top;
		if (!h->n)
			return false;
		top = h->a[0];
		r = &e->rs[top.id];
		if (r->rcnt == 0) {
			kv_pop(h);
			continue;
		}
		*share = (r->rcap > 0.0 ? r->rcap : 0.0) / r->rcnt;
		if (*share < top.k)
			*share = top.k; /* shares never decrease; rounding only */
		if (*share > top.k * (1.0 + 1e-12)) {
			/* stale key: raise it in place */
			h->a[0].k = *share;
			kv_down(h->a, h->n, 0, NULL);
			continue;
		}
		kv_pop(h);
		*rid = top.id;
		return true;
	}
}

/* Progressive filling of cres[0..nrc) until no flow is unfrozen: the
 * smallest share freezes its flows at that rate. */
static void fill(struct sim_engine *e, uint32_t nrc, uint32_t unfrozen, bool part,
		 uint64_t p0, uint32_t epoch)
{
	struct kvheap *h = &e->fill;
	bool small;

	for (uint32_t i = 0; i < nrc && unfrozen; i++) {
		struct sim_resource *r = &e->rs[e->cres[i]];
		if (e->demand && e->cres[i] == e->core_res)
			continue; /* no limit while filling: demand_scale() */
		if (r->n && r->rcnt) {
			h->a[h->n++] = (struct kv){ (r->rcap > 0.0 ? r->rcap : 0.0) / r->rcnt, e->cres[i] };
			r->touched = false;
		}
	}
	/* a few resources (a server's redistribution, a one-to-one stage's
	 * pair): scan for the bottleneck; many: the lazy heap */
	small = h->n <= 32;
	if (!small)
		kv_heapify(h);
	for (;;) {
		uint32_t rid;
		double share;

		if (!(small ? bottleneck_scan(e, &rid, &share) : bottleneck_heap(e, &rid, &share)))
			break;
		/* a flow's rate is the level of its first resource to
		 * freeze (flow_rate) */
		unfrozen -= part ? freeze_flows(e, rid, share, epoch) : freeze(e, rid, share, p0);
		if (unfrozen == 0)
			break; /* the resources left have no flow to freeze */
	}
}

/* core_sharing demand (topo.h): the core left out of the filling, every
 * flow's filled rate is the rate it offers the core; when the flows
 * through it offer more than its capacity C, each gets its offer x C /
 * (their offers together): a processor serving packets in the order they
 * arrive gives each flow its share of the arrivals.  Returns that factor
 * (1 while the core is not saturated) for a full pass from pop count p0. */
static double demand_scale(const struct sim_engine *e, uint64_t p0)
{
	const struct sim_resource *c = &e->rs[e->core_res];
	const struct sim_slot *l = e->lists + c->l0;
	double offered = 0.0;

	for (uint32_t j = 0; j < c->n; j++)
		offered += flow_rate(e, &e->hot[l[j].pos], p0);
	return offered > c->base ? c->base / offered : 1.0;
}

/* A flow's rate after a full pass from p0: its max-min level, times the
 * core's factor (e->core_scale, demand_scale()) when it crosses a
 * demand-shared core. */
static inline double pass_rate(const struct sim_engine *e, const struct sim_active_flow *f,
			       uint64_t p0)
{
	double r = flow_rate(e, f, p0);

	if (e->demand && f->nres == 3 && f->res[2] == e->core_res)
		r *= e->core_scale;
	return r;
}

/* Scan mode (after an exact full pass): every active flow advanced to t
 * under its old rate, its finish time under the new one, and the earliest
 * ones into due[]; no heap. */
static void settle_scan(struct sim_engine *e, double t, uint64_t p0)
{
	double next = INF_TIME, lim = INF_TIME;
	uint32_t ndue = 0;

	for (uint32_t a = 0; a < e->nactive; a++) {
		struct sim_active_flow *f = &e->hot[a];
		f->rem -= f->rate * (t - f->t_upd);
		if (f->rem < 0.0)
			f->rem = 0.0;
		f->t_upd = t;
		f->rate = pass_rate(e, f, p0);
		f->fin = f->rate > 0.0 ? t + f->rem / f->rate : INF_TIME;
		if (f->fin > lim)
			continue;
		if (f->fin < next) {
			double keep = f->fin * (1 + 4e-12) + 4e-18;
			uint32_t k = 0;
			for (uint32_t j = 0; j < ndue; j++)
				if (e->hot[e->xs[e->due[j]].apos].fin <= keep)
					e->due[k++] = e->due[j];
			ndue = k;
			next = f->fin;
			lim = keep;
		}
		e->due[ndue++] = f->x;
	}
	e->ndue = ndue;
	e->next_fin = next;
	ih_clear(&e->fin, e->hpos);
	e->scan = true;
}

/* The reallocated flows (cflows[0..nf) of a part, or all) advanced to t
 * under their old rates, their finish times under the new ones into the
 * completion heap. */
static void settle_heap(struct sim_engine *e, double t, bool part, uint32_t nf, uint64_t p0)
{
	for (uint32_t i = 0; i < nf; i++) {
		uint32_t a = part ? e->cflows[i] : i;
		struct sim_active_flow *f = &e->hot[a];
		double nrate = part ? e->nrate[a] : flow_rate(e, f, p0);
		if (part && nrate == f->rate)
			continue; /* same rate: its finish time and heap entry hold */
		f->rem -= f->rate * (t - f->t_upd);
		if (f->rem < 0.0)
			f->rem = 0.0;
		f->t_upd = t;
		f->rate = nrate;
		f->fin = f->rate > 0.0 ? t + f->rem / f->rate : INF_TIME;
		if (part)
			ih_update(&e->fin, e->hpos, f->x, f->fin);
	}
	if (!part) {
		ih_rebuild(e);
		/* exact loads again (scalable repairs keep them incrementally) */
		for (uint32_t ri = 0; !e->exact && ri < e->nr; ri++)
			e->rs[ri].load = 0.0;
		for (uint32_t a = 0; !e->exact && a < e->nactive; a++)
			for (uint32_t k = 0; k < e->hot[a].nres; k++)
				e->rs[e->hot[a].res[k]].load += e->hot[a].rate;
	}
	fin_settle(e);
}

/* Max-min fair rates (progressive filling) for the changed components at
 * time t (or all active flows), then their finish times into the
 * completion heap. */
int sim_recompute(struct sim_engine *e, double t)
{
	uint32_t nf = 0, nrc = 0, unfrozen, replay, epoch;
	uint64_t p0;
	bool part;
	int rc;

	if (!e->exact) {
		if ((rc = repair(e, t)) != 0)
			return rc < 0 ? rc : 0;
		e->all_dirty = true; /* a full pass */
		e->repair_work = 0;
	}
	e->recomputes++;
	p0 = e->npop;
	part = collect_component(e, &nf, &nrc);
	epoch = ++e->stamp; /* fresh: differs from the search's marks */
	replay = !part && e->exact && e->seq_ok && !e->arrivals && !e->opts.reference && !e->demand
		 ? e->seq_cut : 0;
	if (replay > e->npopseq)
		replay = e->npopseq;
	e->npopseq = 0;
	e->seq_cut = UINT32_MAX;
	e->seq_ok = !part && e->exact;
	e->seq_p0 = p0;
	for (uint32_t i = 0; i < e->ndirty; i++)
		e->rs[e->dirty[i]].dirty = false;
	e->ndirty = 0;
	e->all_dirty = false;
	if (!part) {
		nrc = 0;
		e->full_allocs++;
		for (uint32_t ri = 0; ri < e->nr; ri++) {
			e->rs[ri].freed = 0.0;
			if (e->rs[ri].n)
				e->cres[nrc++] = ri;
		}
	}
	e->fill.n = 0;
	fill_reset(e, nrc);
	/* the steps of the last full pass before the earliest completed
	 * flow's bottleneck happen again, identically (the resources such a
	 * flow used only gain share: one flow fewer, less incast), at the
	 * levels they had: no search for them */
	unfrozen = part ? nf : e->nactive;
	for (uint32_t i = 0; i < replay && unfrozen; i++) {
		uint32_t rid = e->popseq[i];
		unfrozen -= freeze(e, rid, e->lv[rid].level, p0);
		e->replayed++;
	}
	fill(e, nrc, unfrozen, part, p0, epoch);
	/* advance each reallocated flow to t under its old rate, then its
	 * finish time under the new one */
	if (!part) {
		nf = e->nactive;
	} else if (e->scan) {
		/* leaving scan mode: every active flow into the heap */
		ih_rebuild(e);
		e->scan = false;
	}
	if (e->demand)
		e->core_scale = demand_scale(e, p0); /* a full exact pass: collect_component */
	if (!part && e->exact)
		settle_scan(e, t, p0);
	else
		settle_heap(e, t, part, nf, p0);
	e->arrivals = false;
	e->must_recompute = false;
	return 0;
}
