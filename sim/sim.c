/*
 * sim.c - the event-driven, flow-level simulator (see sim.h for the model).
 *
 * Workload assumed: plans of 10^2..10^6 transfers, up to ~10^6 of them in
 * flight at once (the fanout baseline at 1024 GPUs), a few thousand
 * resources.  Every transfer has at most one flow in flight (its chunks
 * run one after another), so a transfer's slot doubles as its flow.
 *
 * Events: a heap of timed events (step launches after the per-step
 * overhead, flow starts after alpha, zero-time completions) and an indexed
 * 4-ary heap of flow completions (finish time under the current rates; a
 * changed rate moves the flow's one entry).  Rates are a max-min fair
 * allocation by progressive filling: resources sit in a heap keyed by
 * their fair share (remaining capacity / unfrozen flows), the smallest
 * share freezes its flows at that rate.  Shares only grow as flows freeze
 * elsewhere (a flow frozen at level L <= share removes L from the capacity
 * and one from the count), so a stale key is a lower bound and is raised
 * in place when it surfaces; a handful of resources are scanned instead.
 *
 * Exact mode reallocates after every event, but only over the connected
 * components of the flow-resource graph that hold a changed resource (the
 * allocation separates over components: a FAST stage is ~N*G tiny ones, a
 * server's redistribution one small one).  When the changed part is large
 * (fanout: one component of everything) it reallocates everything and
 * finds the next completions by a linear scan ("scan mode", no heap), and
 * backs off from searching components for a while.  Scalable mode
 * (epsilon > 0) reallocates lazily and locally (see sim.h and repair()).
 * Cost of one exact allocation: O(component paths + its resources).
 *
 * A full exact pass does not visit flows while it fills: each list slot
 * carries the flow's other resources, a flow is frozen by the first of
 * its resources to freeze (so it is unfrozen while none of the others
 * has), and its rate is that resource's level, read in the scan that
 * follows.  And it does not search again for what still holds: a
 * completion leaves every freezing step before its flow's bottleneck as
 * it was (the flow's resources only gain share), so the next pass replays
 * that prefix of the last one at the recorded levels and searches only
 * from there (recompute(), "replay").  Arrivals void the record.
 */
#include "heap.h"
#include "sim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define INF_TIME HUGE_VAL

void fast_sim_opts_default(struct fast_sim_opts *o)
{
	memset(o, 0, sizeof *o);
	o->congestion = true;
	o->epsilon = 0.0;
	o->timeline = false;
}

double fast_sim_incast_factor(const struct fast_congestion *c, uint32_t k)
{
	double f;

	if (!c || (double)k <= c->incast_threshold || c->incast_slope <= 0.0)
		return 1.0;
	f = 1.0 - c->incast_slope * ((double)k - c->incast_threshold);
	if (f < c->incast_floor)
		f = c->incast_floor;
	if (f > 1.0)
		f = 1.0;
	if (f <= 0.0)
		f = 1e-3; /* a validated topology has floor > 0; never stall */
	return f;
}

const char *fast_sim_res_name(const struct fast_topo *topo, const struct fast_sim_res *r,
			      char *buf, size_t len)
{
	uint32_t G = topo->gpus ? topo->gpus : 1;
	uint32_t s = r->gpu / G, i = r->gpu % G;

	switch (r->kind) {
	case FAST_RES_UP_EGRESS:
		snprintf(buf, len, "s%u up%u out", s, i);
		break;
	case FAST_RES_UP_INGRESS:
		snprintf(buf, len, "s%u up%u in", s, i);
		break;
	case FAST_RES_MESH_LINK:
		snprintf(buf, len, "s%u link %u->%u", s, i, r->peer % G);
		break;
	case FAST_RES_NIC_EGRESS:
		snprintf(buf, len, "s%u NIC%u out", s, i);
		break;
	case FAST_RES_NIC_INGRESS:
		snprintf(buf, len, "s%u NIC%u in", s, i);
		break;
	case FAST_RES_CORE:
		snprintf(buf, len, "core");
		break;
	}
	return buf;
}

void fast_sim_result_free(struct fast_sim_result *r)
{
	if (!r)
		return;
	free(r->steps);
	free(r->res);
	free(r->act);
	r->steps = NULL;
	r->res = NULL;
	r->act = NULL;
	r->nsteps = r->nres = 0;
	r->nact = 0;
}

/* --- engine state ------------------------------------------------------- */

enum xstate { X_IDLE = 0, X_PENDING, X_ACTIVE, X_DONE };

#define NO_RES UINT32_MAX

/* A transfer's resources, set up once. */
struct flow {
	uint32_t res[3];
	uint32_t nres;
};

/* An active flow, stored by position (dense, swap-removed): what every
 * allocation walks (64 bytes).  The rate a repair computes is scratch by
 * position in e->nrate. */
struct hot {
	double rate, rem, t_upd, fin;
	uint32_t res[3];
	uint32_t nres;
	uint32_t x;     /* its transfer */
	uint32_t mark;  /* == e->stamp once visited or frozen (this pass) */
};

struct xf {
	uint32_t step;
	uint32_t chunk;   /* chunk in flight or next to start */
	uint32_t state;
	uint32_t apos;    /* index in the active array */
	uint32_t pos[3];  /* index in each resource's active list */
	uint64_t bytes;   /* whole transfer */
	uint64_t cbytes;  /* current chunk */
	double t_first, t_last;
	double inherit;   /* scalable mode: rate reserved for the next chunk */
	uint64_t inherit_gen; /* valid while no allocation happened since */
};

struct st {
	uint32_t full_left;
	uint32_t x0, nx;
	uint32_t chunks, c0;
	uint32_t chunks_done;
	uint32_t rdep0, nrdep;
	bool launched, ready, done;
	double overhead, alpha;
	uint64_t bytes;   /* over resources */
};

struct rdep {
	uint32_t step;
	uint32_t pipelined;
};

/* An entry of a resource's active list: the flow's active position, which
 * of its resources the list's is, and its other resources (NO_RES-
 * padded), so searches and filling need not visit flows. */
struct slot {
	uint32_t pos;
	uint32_t k;
	uint32_t o[2];
};

/* When a resource last froze its flows, and at what share: read for every
 * flow by a full pass, so apart (16 bytes a resource: in L1). */
struct lvl {
	uint64_t popn;   /* the popn-th resource frozen (e->npop) ... */
	double level;    /* ... at this share */
};

struct res {
	/* what progressive filling touches, first */
	double rcap;     /* progressive filling scratch */
	uint32_t rcnt;
	uint32_t n;      /* flows in its active list */
	uint32_t l0;     /* list storage offset */
	bool touched;    /* rcap/rcnt changed since its share was computed */
	bool dirty;      /* in e->dirty: changed since the last allocation */
	bool ingress_nic;
	uint32_t mark;   /* == e->stamp once visited by collect_component */
	uint32_t seqi;   /* its index in e->popseq */
	double base;     /* effective capacity */
	double cap;      /* after incast at the last allocation */
	double freed;    /* capacity gained since the last allocation */
	double load;     /* scalable mode: sum of its active flows' rates */
	uint32_t scnt, sl0; /* scalable repair: sub-problem list */
};

struct eng {
	const struct fast_topo *topo;
	const struct fast_plan *x;   /* explicit plan */
	struct fast_sim_opts opts;
	uint32_t ng, G, N;
	double alpha[2], overhead[2];
	double rto_s;      /* a lost flow's wait (0: no loss/timeout regime) */
	uint64_t rto_losses;

	uint32_t nx;
	struct xf *xs;
	struct flow *fl;
	uint32_t nsteps;
	struct st *st;
	uint32_t *pipe_left, *chunk_left;
	struct rdep *rdeps;

	uint32_t nr;
	struct res *rs;
	struct fast_sim_res *rinfo;
	struct slot *lists;
	uint64_t npop, replayed;
	struct lvl *lv;    /* by resource */
	/* exact mode: the resources the last full pass froze, in order; its
	 * first seq_cut steps still hold (seq_ok: no arrival since, only
	 * completions of flows whose bottleneck came at seq_cut or later) */
	uint32_t *popseq, npopseq, seq_cut;
	uint64_t seq_p0;   /* e->npop when that pass started */
	bool seq_ok;

	struct hot *hot;   /* by active position */
	double *nrate;     /* by active position: a repair's new rate */
	uint32_t *cflows;  /* component scratch: active positions */
	uint32_t *cres;    /* component scratch: resources */
	uint32_t *dirty;   /* resources changed since the last allocation */
	uint32_t ndirty;
	uint32_t stamp;
	uint32_t bfs_skip;
	bool all_dirty;
	uint64_t full_allocs;
	uint32_t *slist;   /* scalable repair: flows (positions) per resource */
	bool scan;         /* exact mode after a full pass: finish times are
			    * scanned, due[] holds the earliest, no heap */
	uint32_t *due, ndue;
	uint32_t *hpos;    /* slot of each transfer in the completion heap */
	uint64_t repair_work; /* flows re-filled by repairs since the last full pass */
	uint32_t nactive;
	bool exact;
	double next_fin;

	struct evheap ev;
	struct kvheap fin, fill;

	bool arrivals, must_recompute;
	uint64_t events, recomputes, flows;
	struct fast_sim_step *out_steps;
};

/* bytes of chunk c of L split into k: floor((c+1)L/k) - floor(cL/k) */
static uint64_t chunk_bytes(uint64_t L, uint32_t k, uint32_t c)
{
	uint64_t q = L / k, r = L % k;
	uint64_t a = (uint64_t)c * q + ((uint64_t)c * r) / k;
	uint64_t b = (uint64_t)(c + 1) * q + ((uint64_t)(c + 1) * r) / k;
	return b - a;
}

/* Make chunk x->chunk of transfer xi ready at time t if its step has
 * launched and its pipelined deps allow it. */
static int try_ready(struct eng *e, uint32_t xi, double t)
{
	struct xf *x = &e->xs[xi];
	struct st *s = &e->st[x->step];
	struct flow *f = &e->fl[xi];

	if (x->state != X_IDLE || !s->launched || x->chunk >= s->chunks)
		return 0;
	if (e->pipe_left[s->c0 + x->chunk] != 0)
		return 0;
	x->cbytes = chunk_bytes(x->bytes, s->chunks, x->chunk);
	x->state = X_PENDING;
	if (x->cbytes == 0 || f->nres == 0)
		return ev_push(&e->ev, t, EV_START, xi, 0);
	return ev_push(&e->ev, t + s->alpha, EV_START, xi, 0);
}

static int step_ready(struct eng *e, uint32_t si, double t)
{
	struct st *s = &e->st[si];

	s->ready = true;
	e->out_steps[si].ready_s = t;
	e->out_steps[si].start_s = INF_TIME;
	return ev_push(&e->ev, s->bytes ? t + s->overhead : t, EV_LAUNCH, si, 0);
}

static int step_done(struct eng *e, uint32_t si, double t)
{
	struct st *s = &e->st[si];
	int rc;

	s->done = true;
	e->out_steps[si].end_s = t;
	if (e->out_steps[si].start_s == INF_TIME)
		e->out_steps[si].start_s = t;
	for (uint32_t k = 0; k < s->nrdep; k++) {
		const struct rdep *d = &e->rdeps[s->rdep0 + k];
		if (d->pipelined)
			continue;
		if (--e->st[d->step].full_left == 0 && (rc = step_ready(e, d->step, t)) < 0)
			return rc;
	}
	return 0;
}

/* Chunk c of step si is complete when it launched, its pipelined deps'
 * chunk c are done and all its transfers finished chunk c. */
static int step_chunk_check(struct eng *e, uint32_t si, uint32_t c, double t)
{
	struct st *s = &e->st[si];
	int rc;

	if (!s->launched || e->pipe_left[s->c0 + c] != 0 || e->chunk_left[s->c0 + c] != 0)
		return 0;
	e->chunk_left[s->c0 + c] = UINT32_MAX; /* reported once */
	s->chunks_done++;
	for (uint32_t k = 0; k < s->nrdep; k++) {
		const struct rdep *d = &e->rdeps[s->rdep0 + k];
		struct st *ds;
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
			if ((rc = try_ready(e, ds->x0 + j, t)) < 0)
				return rc;
	}
	if (s->chunks_done == s->chunks)
		return step_done(e, si, t);
	return 0;
}

static int chunk_finished(struct eng *e, uint32_t xi, double t)
{
	struct xf *x = &e->xs[xi];
	struct st *s = &e->st[x->step];
	struct flow *f = &e->fl[xi];
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
	if (x->state == X_IDLE)
		return try_ready(e, xi, t);
	return 0;
}

static void mark_dirty(struct eng *e, const uint32_t *res, uint32_t nres);

/* Flow xi starts at t: it takes the next active position; its resources
 * list that position. */
static int activate(struct eng *e, uint32_t xi, double t)
{
	struct xf *x = &e->xs[xi];
	const struct flow *f = &e->fl[xi];
	uint32_t pos = e->nactive++;
	struct hot *h = &e->hot[pos];

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
		struct res *r = &e->rs[f->res[k]];
		h->res[k] = f->res[k];
		struct slot *sl = &e->lists[r->l0 + r->n];
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
	e->flows++;
	return 0;
}

/* Remove flow xi: out of its resources' lists, and the last active flow
 * moves into its position. */
static void deactivate(struct eng *e, uint32_t xi)
{
	struct xf *x = &e->xs[xi];
	uint32_t pos = x->apos, last;
	struct hot *h = &e->hot[pos];

	mark_dirty(e, h->res, h->nres);
	for (uint32_t k = 0; k < h->nres; k++)
		e->rs[h->res[k]].load -= h->rate;
	if (e->seq_ok) {
		/* the last full pass holds up to this flow's bottleneck */
		const uint32_t *b = NULL;
		for (uint32_t k = 0; k < h->nres; k++) {
			const struct lvl *r = &e->lv[h->res[k]];
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
		struct res *r = &e->rs[ri];
		uint32_t slot = x->pos[k];
		uint32_t mpos = e->lists[r->l0 + --r->n].pos;
		if (mpos != pos) {
			const struct hot *m = &e->hot[mpos];
			struct xf *mx = &e->xs[m->x];
			e->lists[r->l0 + slot] = e->lists[r->l0 + r->n];
			for (uint32_t j = 0; j < m->nres; j++)
				if (m->res[j] == ri)
					mx->pos[j] = slot;
		}
	}
	last = --e->nactive;
	if (pos != last) {
		struct xf *mx;
		e->hot[pos] = e->hot[last];
		mx = &e->xs[e->hot[pos].x];
		mx->apos = pos;
		for (uint32_t k = 0; k < e->hot[pos].nres; k++)
			e->lists[e->rs[e->hot[pos].res[k]].l0 + mx->pos[k]].pos = pos;
	}
	x->state = X_IDLE;
}

/* Scalable mode: capacity a completed flow leaves unused until the next
 * allocation (its rate, plus what a lifted incast penalty gives back). */
static void add_freed(struct eng *e, const uint32_t *res, uint32_t nres, double rate)
{
	for (uint32_t k = 0; k < nres; k++) {
		struct res *r = &e->rs[res[k]];
		double gain = rate;
		if (r->ingress_nic && e->opts.congestion)
			gain += r->base * (fast_sim_incast_factor(&e->topo->congestion, r->n) -
					   fast_sim_incast_factor(&e->topo->congestion, r->n + 1));
		r->freed += gain;
		if (r->freed > e->opts.epsilon * r->cap)
			e->must_recompute = true;
	}
}

/* Every active flow into the heap (after a full pass). */
static void ih_rebuild(struct eng *e)
{
	ih_clear(&e->fin, e->hpos);
	for (uint32_t a = 0; a < e->nactive; a++)
		e->fin.a[e->fin.n++] = (struct kv){ e->hot[a].fin, e->hot[a].x };
	kv_heapify(&e->fin);
	for (size_t i = 0; i < e->fin.n; i++)
		e->hpos[e->fin.a[i].id] = (uint32_t)i;
}

static void fin_settle(struct eng *e)
{
	e->next_fin = e->fin.n ? e->fin.a[0].k : INF_TIME;
}

/* Collect the part of the flow-resource graph that changed since the last
 * allocation: the connected components holding a dirty resource (the max-
 * min allocation separates over components, so the others keep their
 * rates).  Returns false when that part is large (a full pass is cheaper):
 * then the caller reallocates everything. */
static bool collect_component(struct eng *e, uint32_t *nf, uint32_t *nrc)
{
	uint32_t limit = e->nactive / 4 + 64, f = 0, r = 0;

	if (e->all_dirty || e->opts.reference)
		return false;
	if (e->bfs_skip) {
		/* the last searches found one big component: back off */
		e->bfs_skip--;
		return false;
	}
	e->stamp++;
	for (uint32_t i = 0; i < e->ndirty; i++) {
		struct res *rs = &e->rs[e->dirty[i]];
		if (rs->mark != e->stamp) {
			rs->mark = e->stamp;
			e->cres[r++] = e->dirty[i];
		}
	}
	for (uint32_t i = 0; i < r; i++) {
		const struct res *rs = &e->rs[e->cres[i]];
		const struct slot *l = e->lists + rs->l0;
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
				struct res *r2 = &e->rs[l[j].o[k]];
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

static void mark_dirty(struct eng *e, const uint32_t *res, uint32_t nres)
{
	if (e->all_dirty)
		return;
	for (uint32_t k = 0; k < nres; k++) {
		struct res *r = &e->rs[res[k]];
		if (r->dirty)
			continue;
		r->dirty = true;
		e->dirty[e->ndirty++] = res[k];
	}
}

/* Scalable mode: re-fill only the flows at the resources that changed
 * since the last allocation (one hop), against what the other flows
 * leave of each resource they touch; the others keep their rates, so the
 * result stays feasible.  Returns 1 when it did so, 0 when a full pass is
 * due instead (the changed part is large, or repairs since the last full
 * pass have re-filled as many flows as are active: amortised, a full
 * pass then costs no more than the repairs did). */
static int repair(struct eng *e, double t)
{
	struct kvheap *h = &e->fill;
	uint32_t nf = 0, nrc = 0, off = 0, epoch;

	if (e->all_dirty || e->repair_work > e->nactive)
		return 0;
	e->stamp++;
	for (uint32_t i = 0; i < e->ndirty; i++) {
		const struct res *rs = &e->rs[e->dirty[i]];
		const struct slot *l = e->lists + rs->l0;
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
		const struct hot *f = &e->hot[e->cflows[i]];
		for (uint32_t k = 0; k < f->nres; k++) {
			struct res *r = &e->rs[f->res[k]];
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
		struct res *r = &e->rs[e->cres[i]];
		double fixed = r->rcap > 0.0 ? r->rcap : 0.0;
		r->cap = r->base;
		if (r->ingress_nic && e->opts.congestion)
			r->cap *= fast_sim_incast_factor(&e->topo->congestion, r->n);
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
		const struct hot *f = &e->hot[e->cflows[i]];
		for (uint32_t k = 0; k < f->nres; k++) {
			struct res *r = &e->rs[f->res[k]];
			e->slist[r->sl0 + r->scnt++] = e->cflows[i];
		}
	}
	kv_heapify(h);
	while (h->n) {
		struct kv top = h->a[0];
		struct res *r = &e->rs[top.id];
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
			const struct hot *f = &e->hot[a];
			if (e->hot[a].mark == epoch)
				continue;
			e->hot[a].mark = epoch;
			e->nrate[a] = share;
			for (uint32_t k = 0; k < f->nres; k++) {
				struct res *r2;
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
		struct hot *f = &e->hot[e->cflows[i]];
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
static uint32_t freeze(struct eng *e, uint32_t rid, double share, uint64_t p0)
{
	struct res *r = &e->rs[rid];
	const struct slot *l = e->lists + r->l0;
	uint32_t n = r->rcnt;

	e->lv[rid].level = share;
	e->lv[rid].popn = ++e->npop;
	r->seqi = e->npopseq;
	e->popseq[e->npopseq++] = rid;
	for (uint32_t j = 0; j < r->n; j++) {
		uint32_t o0 = l[j].o[0], o1 = l[j].o[1];
		struct res *a, *b;
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
static uint32_t freeze_flows(struct eng *e, uint32_t rid, double share, uint32_t epoch)
{
	struct res *r = &e->rs[rid];
	const struct slot *l = e->lists + r->l0;
	uint32_t n = r->rcnt;

	for (uint32_t j = 0; j < r->n; j++) {
		struct hot *f = &e->hot[l[j].pos];
		if (f->mark == epoch)
			continue;
		f->mark = epoch;
		e->nrate[l[j].pos] = share;
		for (uint32_t k = 0; k < f->nres; k++) {
			struct res *r2;
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
static inline double flow_rate(const struct eng *e, const struct hot *f, uint64_t p0)
{
	const struct lvl *best = NULL;

	if (f->nres == 2) {
		/* the common case, without branches on which one it is */
		const struct lvl *x = &e->lv[f->res[0]], *y = &e->lv[f->res[1]];
		uint64_t px = x->popn > p0 ? x->popn : UINT64_MAX;
		uint64_t py = y->popn > p0 ? y->popn : UINT64_MAX;
		double l = px <= py ? x->level : y->level;
		return (px & py) == UINT64_MAX ? 0.0 : l;
	}
	for (uint32_t k = 0; k < f->nres; k++) {
		const struct lvl *r = &e->lv[f->res[k]];
		if (r->popn > p0 && (!best || r->popn < best->popn))
			best = r;
	}
	return best ? best->level : 0.0;
}

/* Max-min fair rates (progressive filling) for the changed components at
 * time t (or all active flows), then their finish times into the
 * completion heap. */
static int recompute(struct eng *e, double t)
{
	struct kvheap *h = &e->fill;
	uint32_t nf = 0, nrc = 0, unfrozen, replay, epoch;
	uint64_t p0;
	bool part, small;
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
	replay = !part && e->exact && e->seq_ok && !e->arrivals && !e->opts.reference ? e->seq_cut : 0;
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
	h->n = 0;
	for (uint32_t i = 0; i < nrc; i++) {
		uint32_t ri = e->cres[i];
		struct res *r = &e->rs[ri];
		r->freed = 0.0;
		if (r->n == 0)
			continue;
		r->cap = r->base;
		if (r->ingress_nic && e->opts.congestion)
			r->cap *= fast_sim_incast_factor(&e->topo->congestion, r->n);
		r->rcap = r->cap;
		r->rcnt = r->n;
	}
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
	for (uint32_t i = 0; i < nrc && unfrozen; i++) {
		struct res *r = &e->rs[e->cres[i]];
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
		struct res *r;
		uint32_t rid;
		double share;

		if (small) {
			size_t k = 0;
			struct kv best = { INF_TIME, UINT32_MAX };
			for (size_t i = 0; i < h->n; i++) {
				struct kv v = h->a[i];
				struct res *c = &e->rs[v.id];
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
				break;
			rid = best.id;
			share = best.k;
		} else {
			struct kv top;
			if (!h->n)
				break;
			top = h->a[0];
			r = &e->rs[top.id];
			if (r->rcnt == 0) {
				kv_pop(h);
				continue;
			}
			share = (r->rcap > 0.0 ? r->rcap : 0.0) / r->rcnt;
			if (share < top.k)
				share = top.k; /* shares never decrease; rounding only */
			if (share > top.k * (1.0 + 1e-12)) {
				/* stale key: raise it in place */
				h->a[0].k = share;
				kv_down(h->a, h->n, 0, NULL);
				continue;
			}
			kv_pop(h);
			rid = top.id;
		}
		/* a flow's rate is the level of its first resource to
		 * freeze (flow_rate) */
		unfrozen -= part ? freeze_flows(e, rid, share, epoch) : freeze(e, rid, share, p0);
		if (unfrozen == 0)
			break; /* the resources left have no flow to freeze */
	}
	/* advance each reallocated flow to t under its old rate, then its
	 * finish time under the new one */
	if (!part) {
		nf = e->nactive;
	} else if (e->scan) {
		/* leaving scan mode: every active flow into the heap */
		ih_rebuild(e);
		e->scan = false;
	}
	if (!part && e->exact) {
		/* scan mode: finish times and the earliest ones, no heap */
		double next = INF_TIME, lim = INF_TIME;
		uint32_t ndue = 0;
		for (uint32_t a = 0; a < e->nactive; a++) {
			struct hot *f = &e->hot[a];
			f->rem -= f->rate * (t - f->t_upd);
			if (f->rem < 0.0)
				f->rem = 0.0;
			f->t_upd = t;
			f->rate = flow_rate(e, f, p0);
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
		e->arrivals = false;
		e->must_recompute = false;
		return 0;
	}
	for (uint32_t i = 0; i < nf; i++) {
		uint32_t a = part ? e->cflows[i] : i;
		struct hot *f = &e->hot[a];
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
	e->arrivals = false;
	e->must_recompute = false;
	return 0;
}

/* Complete every flow due by t + tol. */
static int complete_due(struct eng *e, double t, double tol)
{
	int rc;

	if (e->scan) {
		uint32_t n = 0;
		for (uint32_t k = 0; k < e->ndue; k++) {
			const struct xf *x = &e->xs[e->due[k]];
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
		struct xf *x;
		struct hot hv;

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
static bool lost(const struct eng *e, uint32_t xi)
{
	const struct flow *f = &e->fl[xi];

	if (e->rto_s <= 0.0 || !e->opts.congestion)
		return false;
	for (uint32_t k = 0; k < f->nres; k++) {
		const struct res *r = &e->rs[f->res[k]];
		if (r->ingress_nic)
			return (double)r->n >= e->topo->rto.senders;
	}
	return false;
}

static int process_event(struct eng *e, const struct ev *v)
{
	int rc;

	switch (v->type) {
	case EV_LAUNCH: {
		struct st *s = &e->st[v->id];
		s->launched = true;
		if (s->nx == 0) {
			for (uint32_t c = 0; c < s->chunks; c++)
				if ((rc = step_chunk_check(e, v->id, c, v->t)) < 0)
					return rc;
			return 0;
		}
		for (uint32_t j = 0; j < s->nx; j++)
			if ((rc = try_ready(e, s->x0 + j, v->t)) < 0)
				return rc;
		return 0;
	}
	case EV_START: {
		struct xf *x = &e->xs[v->id];
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

/* --- setup --------------------------------------------------------------- */

static uint32_t res_up_egress(uint32_t g) { return g; }
static uint32_t res_up_ingress(const struct eng *e, uint32_t g) { return e->ng + g; }
static uint32_t res_mesh(const struct eng *e, uint32_t from, uint32_t to)
{
	uint32_t s = from / e->G;
	return s * e->G * e->G + (from % e->G) * e->G + (to % e->G);
}
static uint32_t nic_base(const struct eng *e)
{
	return e->topo->up_kind == FAST_UP_MESH ? e->N * e->G * e->G : 2 * e->ng;
}

static int build_resources(struct eng *e, struct fast_err *err)
{
	const struct fast_topo *t = e->topo;
	uint32_t nb = nic_base(e);
	bool core = t->core_oversub > 1.0 && t->servers > 1;

	e->nr = nb + 2 * e->ng + (core ? 1 : 0);
	e->rs = fast_calloc(e->nr, sizeof *e->rs);
	e->rinfo = fast_calloc(e->nr, sizeof *e->rinfo);
	if (!e->rs || !e->rinfo)
		return fast_err_set(err, FAST_ENOMEM, "simulator: out of memory for %u resources", e->nr);
	for (uint32_t ri = 0; ri < e->nr; ri++) {
		struct fast_sim_res *ri_ = &e->rinfo[ri];
		struct res *r = &e->rs[ri];
		if (ri < nb) {
			if (t->up_kind == FAST_UP_MESH) {
				uint32_t s = ri / (e->G * e->G), i = (ri / e->G) % e->G, j = ri % e->G;
				ri_->kind = FAST_RES_MESH_LINK;
				ri_->gpu = s * e->G + i;
				ri_->peer = s * e->G + j;
			} else {
				ri_->kind = ri < e->ng ? FAST_RES_UP_EGRESS : FAST_RES_UP_INGRESS;
				ri_->gpu = ri_->peer = ri % e->ng;
			}
			r->base = fast_tier_Bps(&t->up);
		} else if (ri < nb + 2 * e->ng) {
			uint32_t k = ri - nb;
			ri_->kind = k < e->ng ? FAST_RES_NIC_EGRESS : FAST_RES_NIC_INGRESS;
			ri_->gpu = ri_->peer = k % e->ng;
			r->base = fast_tier_Bps(&t->out);
			r->ingress_nic = k >= e->ng;
		} else {
			ri_->kind = FAST_RES_CORE;
			r->base = (double)e->ng * fast_tier_Bps(&t->out) / t->core_oversub;
		}
		ri_->cap_Bps = r->base;
		r->cap = r->base;
	}
	return 0;
}

static int build_transfers(struct eng *e, struct fast_err *err)
{
	const struct fast_plan *x = e->x;
	uint32_t nb = nic_base(e);
	bool core = e->topo->core_oversub > 1.0 && e->N > 1;
	uint32_t *cnt;
	uint64_t total = 0;

	if (x->nxfers > UINT32_MAX - 1)
		return fast_err_set(err, FAST_ELIMIT, "simulator: too many transfers (%zu)", x->nxfers);
	e->nx = (uint32_t)x->nxfers;
	e->xs = fast_calloc(e->nx ? e->nx : 1, sizeof *e->xs);
	e->fl = fast_calloc(e->nx ? e->nx : 1, sizeof *e->fl);
	e->hot = fast_calloc(e->nx ? e->nx : 1, sizeof *e->hot);
	e->nrate = fast_calloc(e->nx ? e->nx : 1, sizeof *e->nrate);
	e->cflows = fast_calloc(e->nx ? e->nx : 1, sizeof *e->cflows);
	e->cres = fast_calloc(e->nr ? e->nr : 1, sizeof *e->cres);
	e->dirty = fast_calloc(e->nr ? e->nr : 1, sizeof *e->dirty);
	e->slist = fast_calloc(e->nx ? 3 * (size_t)e->nx : 1, sizeof *e->slist);
	e->due = fast_calloc(e->nx ? e->nx : 1, sizeof *e->due);
	e->hpos = fast_calloc(e->nx ? e->nx : 1, sizeof *e->hpos);
	cnt = fast_calloc(e->nr + 1, sizeof *cnt);
	if (!e->xs || !e->fl || !e->hot || !e->nrate || !e->cflows || !e->cres || !e->dirty || !e->slist || !e->due || !e->hpos || !cnt) {
		free(cnt);
		return fast_err_set(err, FAST_ENOMEM, "simulator: out of memory for %u transfers", e->nx);
	}
	memset(e->hpos, 0xff, (size_t)(e->nx ? e->nx : 1) * sizeof *e->hpos); /* NO_SLOT */
	for (uint32_t si = 0; si < e->nsteps; si++) {
		const struct fast_step *s = &x->steps[si];
		for (uint32_t j = 0; j < s->nxfers; j++) {
			uint32_t xi = s->xfer0 + j;
			const struct fast_xfer *t = &x->xfers[xi];
			struct flow *f = &e->fl[xi];

			e->xs[xi].step = si;
			e->xs[xi].bytes = t->bytes;
			if (t->from >= e->ng || t->to >= e->ng) {
				free(cnt);
				return fast_err_set(err, FAST_EINPUT,
						    "plan: step %u transfer %u: GPU out of range (%u -> %u, %u GPUs)",
						    si, j, t->from, t->to, e->ng);
			}
			if (t->from == t->to || t->bytes == 0)
				continue;
			if (s->tier == FAST_TIER_UP) {
				if (t->from / e->G != t->to / e->G) {
					free(cnt);
					return fast_err_set(err, FAST_EINPUT,
							    "plan: step %u transfer %u: scale-up transfer between servers (GPU %u -> %u)",
							    si, j, t->from, t->to);
				}
				if (e->topo->up_kind == FAST_UP_MESH) {
					f->res[f->nres++] = res_mesh(e, t->from, t->to);
				} else {
					f->res[f->nres++] = res_up_egress(t->from);
					f->res[f->nres++] = res_up_ingress(e, t->to);
				}
			} else {
				f->res[f->nres++] = nb + t->from;
				f->res[f->nres++] = nb + e->ng + t->to;
				if (core && t->from / e->G != t->to / e->G)
					f->res[f->nres++] = nb + 2 * e->ng;
			}
			for (uint32_t k = 0; k < f->nres; k++)
				cnt[f->res[k]]++;
			e->st[si].bytes += t->bytes;
			total += f->nres;
		}
	}
	e->lists = fast_calloc(total ? total : 1, sizeof *e->lists);
	e->popseq = fast_calloc(e->nr ? e->nr : 1, sizeof *e->popseq);
	e->lv = fast_calloc(e->nr ? e->nr : 1, sizeof *e->lv);
	if (!e->lists || !e->popseq || !e->lv) {
		free(cnt);
		return fast_err_set(err, FAST_ENOMEM, "simulator: out of memory");
	}
	{
		uint32_t off = 0;
		for (uint32_t ri = 0; ri < e->nr; ri++) {
			e->rs[ri].l0 = off;
			off += cnt[ri];
		}
	}
	free(cnt);
	return 0;
}

static int build_steps(struct eng *e, struct fast_err *err)
{
	const struct fast_plan *x = e->x;
	uint64_t nch = 0;
	uint32_t *nr;

	e->nsteps = (uint32_t)x->nsteps;
	e->st = fast_calloc(e->nsteps ? e->nsteps : 1, sizeof *e->st);
	e->rdeps = fast_calloc(x->ndeps ? x->ndeps : 1, sizeof *e->rdeps);
	nr = fast_calloc(e->nsteps + 1, sizeof *nr);
	if (!e->st || !e->rdeps || !nr) {
		free(nr);
		return fast_err_set(err, FAST_ENOMEM, "simulator: out of memory for %u steps", e->nsteps);
	}
	for (uint32_t si = 0; si < e->nsteps; si++) {
		const struct fast_step *s = &x->steps[si];
		struct st *t = &e->st[si];
		t->x0 = s->xfer0;
		t->nx = s->nxfers;
		t->chunks = s->chunks ? s->chunks : 1;
		t->c0 = (uint32_t)nch;
		nch += t->chunks;
		t->alpha = e->alpha[s->tier == FAST_TIER_OUT];
		t->overhead = e->overhead[s->tier == FAST_TIER_OUT];
		for (uint32_t k = 0; k < s->ndeps; k++) {
			const struct fast_dep *d = &x->deps[s->dep0 + k];
			if (d->step >= e->nsteps)
				return free(nr), fast_err_set(err, FAST_EINPUT,
							      "plan: step %u: dependency on unknown step %u", si, d->step);
			nr[d->step]++;
		}
	}
	if (nch > UINT32_MAX / 2)
		return free(nr), fast_err_set(err, FAST_ELIMIT, "simulator: too many chunks");
	e->pipe_left = fast_calloc(nch ? nch : 1, sizeof *e->pipe_left);
	e->chunk_left = fast_calloc(nch ? nch : 1, sizeof *e->chunk_left);
	if (!e->pipe_left || !e->chunk_left)
		return free(nr), fast_err_set(err, FAST_ENOMEM, "simulator: out of memory");
	{
		uint32_t off = 0;
		for (uint32_t si = 0; si < e->nsteps; si++) {
			e->st[si].rdep0 = off;
			off += nr[si];
			nr[si] = 0;
		}
	}
	for (uint32_t si = 0; si < e->nsteps; si++) {
		const struct fast_step *s = &x->steps[si];
		struct st *t = &e->st[si];
		for (uint32_t c = 0; c < t->chunks; c++)
			e->chunk_left[t->c0 + c] = t->nx;
		for (uint32_t k = 0; k < s->ndeps; k++) {
			const struct fast_dep *d = &x->deps[s->dep0 + k];
			struct st *on = &e->st[d->step];
			bool pipe = d->pipelined && on->chunks == t->chunks;
			e->rdeps[on->rdep0 + nr[d->step]++] = (struct rdep){ si, pipe };
			if (pipe) {
				for (uint32_t c = 0; c < t->chunks; c++)
					e->pipe_left[t->c0 + c]++;
			} else {
				t->full_left++;
			}
		}
	}
	for (uint32_t si = 0; si < e->nsteps; si++)
		e->st[si].nrdep = nr[si];
	free(nr);
	return 0;
}

/* S of the algbw definition (sim.h) without the traffic: per-GPU bytes
 * delivered (a piece counts where it reaches its orig dst; explicit local
 * copies included) */
static uint64_t gpu_bytes(const struct fast_plan *x, uint32_t ng)
{
	uint64_t *snd = fast_calloc(2 * (size_t)ng, sizeof *snd), best = 0;

	if (!snd)
		return 0;
	for (size_t i = 0; i < x->nxfers; i++) {
		const struct fast_xfer *t = &x->xfers[i];
		for (uint32_t k = 0; k < t->npieces; k++) {
			const struct fast_piece *p = &x->pieces[t->piece0 + k];
			if (p->dst != t->to || p->src >= ng || p->dst >= ng)
				continue;
			snd[p->src] += p->len;
			snd[ng + p->dst] += p->len;
		}
	}
	for (uint32_t g = 0; g < 2 * ng; g++)
		if (snd[g] > best)
			best = snd[g];
	free(snd);
	return best;
}

static int cmp_act(const void *a, const void *b)
{
	const struct fast_sim_activity *x = a, *y = b;
	if (x->res != y->res)
		return x->res < y->res ? -1 : 1;
	if (x->t0 != y->t0)
		return x->t0 < y->t0 ? -1 : 1;
	return x->step < y->step ? -1 : x->step > y->step;
}

/* Aggregate the transfers' activity per (resource, step). */
static int build_timeline(struct eng *e, struct fast_sim_result *out, struct fast_err *err)
{
	struct fast_sim_activity *act = NULL, *scratch;
	uint32_t *touched;
	size_t n = 0, cap = 0;

	scratch = fast_calloc(e->nr, sizeof *scratch);
	touched = fast_calloc(e->nr, sizeof *touched);
	if (!scratch || !touched)
		goto oom;
	for (uint32_t ri = 0; ri < e->nr; ri++)
		scratch[ri].step = UINT32_MAX;
	for (uint32_t si = 0; si < e->nsteps; si++) {
		const struct st *s = &e->st[si];
		uint32_t nt = 0;
		for (uint32_t j = 0; j < s->nx; j++) {
			uint32_t xi = s->x0 + j;
			const struct flow *f = &e->fl[xi];
			const struct xf *x = &e->xs[xi];
			for (uint32_t k = 0; k < f->nres; k++) {
				struct fast_sim_activity *a = &scratch[f->res[k]];
				if (a->step != si) {
					*a = (struct fast_sim_activity){ f->res[k], si, x->t_first, x->t_last, 0 };
					touched[nt++] = f->res[k];
				}
				if (x->t_first < a->t0)
					a->t0 = x->t_first;
				if (x->t_last > a->t1)
					a->t1 = x->t_last;
				a->bytes += x->bytes;
			}
		}
		if (n + nt > cap) {
			size_t nc = cap ? cap : 1024;
			while (nc < n + nt)
				nc *= 2;
			struct fast_sim_activity *na = fast_reallocarray(act, nc, sizeof *na);
			if (!na)
				goto oom;
			act = na;
			cap = nc;
		}
		for (uint32_t k = 0; k < nt; k++)
			act[n++] = scratch[touched[k]];
	}
	if (n)
		qsort(act, n, sizeof *act, cmp_act);
	free(scratch);
	free(touched);
	out->act = act;
	out->nact = n;
	return 0;
oom:
	free(act);
	free(scratch);
	free(touched);
	return fast_err_set(err, FAST_ENOMEM, "simulator: out of memory for the timeline");
}

static void eng_free(struct eng *e)
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
}

static int run(struct eng *e, struct fast_err *err)
{
	double t = 0.0;
	int rc;

	for (uint32_t si = 0; si < e->nsteps; si++)
		if (e->st[si].full_left == 0 && (rc = step_ready(e, si, 0.0)) < 0)
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
		if ((e->arrivals || e->must_recompute) && (rc = recompute(e, t)) < 0)
			goto oom;
	}
	for (uint32_t si = 0; si < e->nsteps; si++)
		if (!e->st[si].done)
			return fast_err_set(err, FAST_EINPUT,
					    "plan: step %u never completes (a dependency cycle or a pipelined dependency it cannot meet)",
					    si);
	return 0;
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
	return fast_plan_fits_topo(p, topo, err);
}

int fast_sim_run(const struct fast_topo *topo, const struct fast_plan *p,
		 const struct fast_sim_opts *opts, struct fast_sim_result *out,
		 struct fast_err *err)
{
	struct fast_sim_opts o;
	struct fast_plan_view v;
	int rc;

	if (opts)
		o = *opts;
	else
		fast_sim_opts_default(&o);
	/* the cheap refusals before the plan is validated and expanded */
	if ((rc = sim_inputs_ok(topo, p, &o, err)) < 0)
		return rc;
	if ((rc = fast_plan_view_open(&v, p, err)) < 0)
		return rc;
	rc = fast_sim_run_view(topo, &v, &o, out, err);
	fast_plan_view_close(&v);
	return rc;
}

int fast_sim_run_view(const struct fast_topo *topo, const struct fast_plan_view *v,
		      const struct fast_sim_opts *opts, struct fast_sim_result *out,
		      struct fast_err *err)
{
	const struct fast_plan *p = v->given;
	struct fast_sim_opts o;
	struct eng e;
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
	if ((rc = build_steps(&e, err)) < 0 || (rc = build_resources(&e, err)) < 0 ||
	    (rc = build_transfers(&e, err)) < 0)
		goto fail;
	if (o.reference)
		o.epsilon = 0.0;
	e.opts = o;
	e.exact = o.epsilon <= 0.0;
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
	r.ngpus = e.ng;
	r.nres = e.nr;
	r.res = e.rinfo;
	e.rinfo = NULL;
	for (uint32_t ri = 0; ri < r.nres; ri++)
		r.res[ri].util = r.time_s > 0 ? (double)r.res[ri].bytes / (r.res[ri].cap_Bps * r.time_s) : 0.0;
	{
		struct fast_bw bw;
		fast_bw(o.traffic ? fast_a2a_size(o.traffic, e.ng) : gpu_bytes(e.x, e.ng), r.time_s,
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
	if (o.timeline && (rc = build_timeline(&e, &r, err)) < 0)
		goto fail;
	r.wall_s = fast_now() - t0;
	eng_free(&e);
	*out = r;
	return 0;
fail:
	eng_free(&e);
	fast_sim_result_free(&r);
	return rc;
}
