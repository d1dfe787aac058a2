/*
 * relay.c - scale-out through a peer when a GPU's NIC is down (relay.h):
 * the proxies, and the one rewrite of a plan that sends a cut-off GPU's
 * cross-server bytes through its proxy.  Every baseline (baselines.c)
 * passes its plan through fast_relay_plan, so that fanout, nccl, pxn,
 * spreadout and hier route around a failed NIC the same way, in one
 * place, and a fabric with no NIC down gets the very plan it got before.
 *
 * Workload: a baseline's plan, up to 10^5 steps and 10^7 pieces; the
 * rewrite is two linear passes (the plan is built anew: steps, their
 * dependencies and transfers must be contiguous, plan.h).
 */
#include <stdlib.h>
#include <string.h>

#include "fast/algo.h"
#include "lib/compile/relay.h"

uint32_t fast_relay_chunks_for(uint64_t largest, uint64_t chunk)
{
	uint64_t k = chunk ? largest / chunk + (largest % chunk != 0) : 1;

	if (k < 1)
		k = 1;
	if (k > FAST_ALGO_MAX_CHUNKS)
		k = FAST_ALGO_MAX_CHUNKS;
	return (uint32_t)k;
}

/* --- proxies ---------------------------------------------------------------- */

/* The j-th local GPU behind port q (j < fast_topo_port_gpus(t, q)). */
static uint32_t port_gpu(const struct fast_topo *t, uint32_t q, uint32_t j)
{
	if (t->nics >= t->gpus)
		return q;
	/* GPU l is behind NIC floor(l K / G): the first GPU of q is ceil(q G / K) */
	return (uint32_t)(((uint64_t)q * t->gpus + t->nics - 1) / t->nics) + j;
}

/* Server s's cut-off GPUs' proxies into proxy (global indices); taken[G]
 * counts how often each local GPU was taken.  Returns the cut-off count. */
static uint32_t server_proxies(const struct fast_topo *t, uint32_t s, uint32_t *proxy,
			       uint32_t *taken)
{
	uint32_t G = t->gpus, P = fast_topo_ports(t), depth = 0, cut = 0;

	for (uint32_t q = 0; q < P; q++) {
		uint32_t n = fast_topo_port_gpus(t, q);
		depth = n > depth ? n : depth;
	}
	memset(taken, 0, G * sizeof *taken);
	if (fast_topo_server_out_Bps(t, s) <= 0.0)
		return 0;
	for (uint32_t l = 0; l < G; l++) {
		uint32_t p = fast_topo_port_of(t, l), best = l, least = UINT32_MAX;
		if (fast_topo_port_Bps(t, s, p) > 0.0)
			continue;
		/* candidates: behind each up port after p cyclically, j-th GPU first */
		for (uint32_t j = 0; j < depth; j++)
			for (uint32_t i = 1; i <= P; i++) {
				uint32_t q = (p + i) % P;
				if (j >= fast_topo_port_gpus(t, q) || fast_topo_port_Bps(t, s, q) <= 0.0)
					continue;
				uint32_t c = port_gpu(t, q, j);
				if (taken[c] < least) {
					least = taken[c];
					best = c;
				}
			}
		taken[best]++;
		proxy[s * G + l] = s * G + best;
		cut++;
	}
	return cut;
}

int fast_relay_proxies(const struct fast_topo *t, uint32_t *proxy, struct fast_err *err)
{
	uint32_t ng = t->servers * t->gpus, stack[64], *taken = stack;
	int cut = 0;

	for (uint32_t g = 0; g < ng; g++)
		proxy[g] = g;
	if (fast_topo_nics_ideal(t))
		return 0;
	if (t->gpus > 64 && !(taken = malloc(t->gpus * sizeof *taken)))
		return fast_err_set(err, FAST_ENOMEM, "relay: out of memory for %u GPUs", t->gpus);
	for (uint32_t s = 0; s < t->servers; s++)
		cut += (int)server_proxies(t, s, proxy, taken);
	if (taken != stack)
		free(taken);
	return cut;
}

/* --- the rewrite ------------------------------------------------------------ */

/* What a step of the given plan becomes: the new ids of its parts (-1:
 * none), the relayed hops' chunks. */
struct parts {
	int pre, main, rel, post;
	uint32_t chunks;
};

/* A byte plan's piece that a cut-off GPU was to receive on its way
 * elsewhere (hier's rail hop, forwarded over scale-up next): its proxy
 * holds it instead, or, when the proxy is its destination, it arrived. */
#define ARRIVED UINT32_MAX

struct held {
	uint32_t gpu, src, dst; /* key: the GPU that was to hold it, the piece */
	uint64_t off;
	uint32_t now;           /* who holds it (ARRIVED: delivered); gpu = UINT32_MAX: empty */
};

struct relay {
	const struct fast_plan *p;
	const uint32_t *proxy;
	struct parts *parts;  /* [p->nsteps] */
	struct held *held;    /* open addressing, cap a power of two; NULL: none */
	size_t cap;
	uint8_t *holds_less;  /* [ng]: a GPU that has entries in held */
	bool bytes;           /* a byte plan (a piece's dst is its final GPU) */
	struct fast_plan q;   /* the plan being built */
};

static bool cut_from(const struct relay *r, const struct fast_xfer *x)
{
	return r->proxy[x->from] != x->from;
}

static bool cut_to(const struct relay *r, const struct fast_xfer *x)
{
	return r->proxy[x->to] != x->to;
}

static bool relayed(const struct relay *r, const struct fast_step *st, const struct fast_xfer *x)
{
	return st->kind == FAST_STEP_EXPLICIT && st->tier == FAST_TIER_OUT &&
	       (cut_from(r, x) || cut_to(r, x));
}

/* Does the last hop proxy(to) -> to carry piece pc of a relayed transfer
 * to `to`?  A token plan's pieces all go on; a byte plan's only those
 * whose destination is `to` (the others are held by the proxy). */
static bool goes_on(const struct relay *r, const struct fast_piece *pc, uint32_t to)
{
	return !r->bytes || pc->dst == to;
}

static struct held *held_slot(const struct relay *r, uint32_t gpu, const struct fast_piece *pc)
{
	uint64_t h = fast_hash_u64(fast_hash_u64(fast_hash_u64(fast_hash_u64(FAST_HASH_INIT, gpu),
							      pc->src), pc->dst), pc->off);
	size_t i = (size_t)h & (r->cap - 1);

	while (r->held[i].gpu != UINT32_MAX &&
	       !(r->held[i].gpu == gpu && r->held[i].src == pc->src && r->held[i].dst == pc->dst &&
		 r->held[i].off == pc->off))
		i = (i + 1) & (r->cap - 1);
	return &r->held[i];
}

/* Pass 1: each step's parts and their ids, in step order; returns the new
 * step count, and in *moved the pieces a proxy will hold for others.
 * piped[s]: a step is pipelined on s. */
static size_t classify(struct relay *r, const uint8_t *piped, size_t *moved)
{
	const struct fast_plan *p = r->p;
	int n = 0;

	*moved = 0;
	for (size_t s = 0; s < p->nsteps; s++) {
		const struct fast_step *st = &p->steps[s];
		bool pre = false, post = false, rel = false, direct = st->nxfers == 0;
		bool keep = st->chunks > 1 || piped[s];
		uint64_t largest = 0;
		for (uint32_t d = 0; d < st->ndeps; d++)
			keep = keep || p->deps[st->dep0 + d].pipelined;
		for (uint32_t i = 0; i < st->nxfers; i++) {
			const struct fast_xfer *x = &p->xfers[st->xfer0 + i];
			if (!relayed(r, st, x)) {
				direct = true;
				continue;
			}
			rel = true;
			pre = pre || cut_from(r, x);
			largest = x->bytes > largest ? x->bytes : largest;
			for (uint32_t k = 0; cut_to(r, x) && k < x->npieces; k++) {
				bool on = goes_on(r, &p->pieces[x->piece0 + k], x->to);
				post = post || on;
				*moved += !on;
			}
		}
		/* ids in the order the parts are emitted: first hops, S, relayed, last hops */
		r->parts[s].pre = pre ? n++ : -1;
		r->parts[s].main = direct ? n++ : -1;
		r->parts[s].rel = rel ? n++ : -1;
		r->parts[s].post = post ? n++ : -1;
		r->parts[s].chunks =
			keep ? st->chunks : fast_relay_chunks_for(largest, FAST_RELAY_CHUNK_BYTES);
	}
	return (size_t)n;
}

/* A new step of the given kind, tier and chunks: its id, or FAST_E*. */
static int add_step(struct relay *r, enum fast_step_kind kind, enum fast_tier_id tier,
		    uint32_t chunks, struct fast_err *err)
{
	int id = fast_plan_add_step(&r->q, kind, tier, err);

	if (id >= 0)
		r->q.steps[id].chunks = chunks;
	return id;
}

/* The dependencies of old step s, as the new step id waits for them:
 * each on every part of the step it names but its first hops. */
static int add_deps(struct relay *r, int id, size_t s, struct fast_err *err)
{
	const struct fast_step *st = &r->p->steps[s];
	int rc = 0;

	for (uint32_t d = 0; rc == 0 && d < st->ndeps; d++) {
		const struct fast_dep *dp = &r->p->deps[st->dep0 + d];
		const struct parts *on = &r->parts[dp->step];
		int ids[3] = { on->main, on->rel, on->post };
		for (int k = 0; rc == 0 && k < 3; k++)
			if (ids[k] >= 0)
				rc = fast_plan_add_dep(&r->q, (uint32_t)id, (uint32_t)ids[k],
						       dp->pipelined != 0, err);
	}
	return rc;
}

/* Which of a transfer's pieces a copy carries. */
enum pick {
	PICK_ALL,
	PICK_ON,    /* those the last hop takes on (goes_on) */
	PICK_KEPT,  /* those its sender holds (not in held) */
	PICK_MOVED, /* those its sender's proxy holds for it */
};

static bool picked(struct relay *r, const struct fast_xfer *x, const struct fast_piece *pc,
		   enum pick pick)
{
	const struct held *h;

	if (pick == PICK_ALL)
		return true;
	if (pick == PICK_ON)
		return goes_on(r, pc, x->to);
	h = held_slot(r, x->from, pc);
	return pick == PICK_KEPT ? h->gpu == UINT32_MAX : h->gpu != UINT32_MAX && h->now != ARRIVED;
}

/* The picked pieces of transfer x of the given plan, from `from` to `to`,
 * as a transfer of the new plan (none when no piece is picked). */
static int copy_xfer(struct relay *r, const struct fast_xfer *x, uint32_t from, uint32_t to,
		     enum pick pick, struct fast_err *err)
{
	bool open = false;
	int rc = 0;

	for (uint32_t k = 0; rc == 0 && k < x->npieces; k++) {
		const struct fast_piece *pc = &r->p->pieces[x->piece0 + k];
		if (!picked(r, x, pc, pick))
			continue;
		if (!open && (rc = fast_plan_add_xfer(&r->q, from, to, err)) < 0)
			break;
		open = true;
		rc = fast_plan_add_piece(&r->q, pc->src, pc->dst, pc->off, pc->len, err);
	}
	return rc;
}

/* The relayed hop of transfer x, proxy(from) -> proxy(to) = pt; when x->to
 * is cut off, the pieces that do not go on are the proxy's to hold from
 * now on (byte plans), or have arrived when it is their destination. */
static int relayed_hop(struct relay *r, const struct fast_xfer *x, uint32_t pt,
		       struct fast_err *err)
{
	for (uint32_t k = 0; pt != x->to && k < x->npieces; k++) {
		const struct fast_piece *pc = &r->p->pieces[x->piece0 + k];
		struct held *h;
		if (goes_on(r, pc, x->to))
			continue;
		h = held_slot(r, x->to, pc);
		*h = (struct held){ x->to, pc->src, pc->dst, pc->off, pc->dst == pt ? ARRIVED : pt };
		r->holds_less[x->to] = 1;
	}
	return copy_xfer(r, x, r->proxy[x->from], pt, PICK_ALL, err);
}

/* Transfer x of a step not relayed: from its sender what it holds, from
 * the sender's proxy what that holds for it (unless that is x->to, which
 * then has it); pieces that arrived early are not sent again. */
static int direct(struct relay *r, const struct fast_xfer *x, struct fast_err *err)
{
	uint32_t pf = r->proxy[x->from];
	int rc;

	if (!r->holds_less[x->from])
		return copy_xfer(r, x, x->from, x->to, PICK_ALL, err);
	if ((rc = copy_xfer(r, x, x->from, x->to, PICK_KEPT, err)) < 0 || pf == x->to)
		return rc;
	return copy_xfer(r, x, pf, x->to, PICK_MOVED, err);
}

/* Does x send a piece its sender's proxy holds for it? */
static bool holds_for(struct relay *r, const struct fast_xfer *x)
{
	for (uint32_t k = 0; r->holds_less[x->from] && k < x->npieces; k++)
		if (held_slot(r, x->from, &r->p->pieces[x->piece0 + k])->gpu != UINT32_MAX)
			return true;
	return false;
}

/* Which transfers of a step a part carries, and between whom. */
enum hop { HOP_PRE, HOP_MAIN, HOP_REL, HOP_POST };

static int copy_xfers(struct relay *r, const struct fast_step *st, enum hop hop,
		      struct fast_err *err)
{
	int rc = 0;

	for (uint32_t i = 0; rc == 0 && i < st->nxfers; i++) {
		const struct fast_xfer *x = &r->p->xfers[st->xfer0 + i];
		uint32_t pf = r->proxy[x->from], pt = r->proxy[x->to];
		bool moved = relayed(r, st, x);

		if (hop == HOP_MAIN && !moved)
			rc = direct(r, x, err);
		else if (moved && holds_for(r, x))
			rc = fast_err_set(err, FAST_EINPUT,
					  "relay: GPU %u sends across servers what it was to "
					  "receive across servers, and both NICs are down", x->from);
		else if (hop == HOP_PRE && moved && pf != x->from)
			rc = copy_xfer(r, x, x->from, pf, PICK_ALL, err);
		else if (hop == HOP_REL && moved)
			rc = relayed_hop(r, x, pt, err);
		else if (hop == HOP_POST && moved && pt != x->to)
			rc = copy_xfer(r, x, pt, x->to, PICK_ON, err);
	}
	return rc;
}

/* Old step s as its parts (ids as classify() numbered them). */
static int emit(struct relay *r, size_t s, struct fast_err *err)
{
	const struct fast_step *st = &r->p->steps[s];
	const struct parts *pt = &r->parts[s];
	int id, rc = 0;

	if (pt->pre >= 0 &&
	    ((id = rc = add_step(r, FAST_STEP_EXPLICIT, FAST_TIER_UP, pt->chunks, err)) < 0 ||
	     (rc = add_deps(r, id, s, err)) < 0 || (rc = copy_xfers(r, st, HOP_PRE, err)) < 0))
		return rc;
	if (pt->main >= 0) {
		if ((id = rc = add_step(r, st->kind, st->tier, st->chunks, err)) < 0 ||
		    (rc = add_deps(r, id, s, err)) < 0 || (rc = copy_xfers(r, st, HOP_MAIN, err)) < 0)
			return rc;
	}
	if (pt->rel >= 0 &&
	    ((id = rc = add_step(r, FAST_STEP_EXPLICIT, FAST_TIER_OUT, pt->chunks, err)) < 0 ||
	     (rc = add_deps(r, id, s, err)) < 0 ||
	     (pt->pre >= 0 &&
	      (rc = fast_plan_add_dep(&r->q, (uint32_t)id, (uint32_t)pt->pre, true, err)) < 0) ||
	     (rc = copy_xfers(r, st, HOP_REL, err)) < 0))
		return rc;
	if (pt->post >= 0 &&
	    ((id = rc = add_step(r, FAST_STEP_EXPLICIT, FAST_TIER_UP, pt->chunks, err)) < 0 ||
	     (rc = fast_plan_add_dep(&r->q, (uint32_t)id, (uint32_t)pt->rel, true, err)) < 0 ||
	     (rc = copy_xfers(r, st, HOP_POST, err)) < 0))
		return rc;
	return 0;
}

/* The new plan: the given plan's header, its steps as their parts. */
static int rebuild(struct relay *r, size_t nsteps, struct fast_err *err)
{
	const struct fast_plan *p = r->p;
	int rc;

	fast_plan_init(&r->q, p->servers, p->gpus, p->algo);
	memcpy(r->q.label, p->label, sizeof r->q.label);
	memcpy(r->q.options, p->options, sizeof r->q.options);
	r->q.matrix = p->matrix;
	r->q.kind = p->kind;
	/* what the plan had at least (the hops grow it further) */
	rc = fast_plan_reserve(&r->q, nsteps, p->ndeps, p->nxfers, p->npieces, 0, err);
	for (size_t s = 0; rc == 0 && s < p->nsteps; s++)
		rc = emit(r, s, err);
	return rc;
}

int fast_relay_plan(const struct fast_topo *t, struct fast_plan *p, struct fast_err *err)
{
	size_t ng = (size_t)p->servers * p->gpus;
	size_t nsteps, moved;
	struct relay r;
	uint32_t *proxy;
	uint8_t *piped;
	int rc;

	if (fast_topo_nics_ideal(t) || p->nsteps == 0)
		return 0;
	if (fast_plan_is_compact(p))
		return fast_err_set(err, FAST_EINPUT, "relay: the %s plan has compact steps", p->algo);
	memset(&r, 0, sizeof r);
	r.p = p;
	proxy = fast_calloc(ng, sizeof *proxy);
	piped = fast_calloc(p->nsteps, 1);
	r.parts = fast_calloc(p->nsteps, sizeof *r.parts);
	if (!proxy || !piped || !r.parts) {
		rc = fast_err_set(err, FAST_ENOMEM, "relay: out of memory for %zu steps", p->nsteps);
		goto out;
	}
	if ((rc = fast_relay_proxies(t, proxy, err)) <= 0)
		goto out; /* nothing cut off (0), or out of memory */
	r.proxy = proxy;
	for (size_t d = 0; d < p->ndeps; d++)
		if (p->deps[d].pipelined)
			piped[p->deps[d].step] = 1;
	r.bytes = p->kind == FAST_TRAFFIC_BYTES;
	nsteps = classify(&r, piped, &moved);
	for (r.cap = 16; r.cap < 2 * moved; r.cap *= 2)
		;
	r.held = moved ? fast_calloc(r.cap, sizeof *r.held) : NULL;
	r.holds_less = fast_calloc(ng, 1);
	if ((moved && !r.held) || !r.holds_less) {
		rc = fast_err_set(err, FAST_ENOMEM, "relay: out of memory for %zu pieces", moved);
		goto out;
	}
	for (size_t i = 0; r.held && i < r.cap; i++)
		r.held[i].gpu = UINT32_MAX;
	rc = rebuild(&r, nsteps, err);
	if (rc < 0) {
		fast_plan_free(&r.q);
		goto out;
	}
	/* a combine plan's pieces index its masks: they move over as they are */
	r.q.masks = p->masks, r.q.nmasks = p->nmasks, r.q.cap_masks = p->cap_masks;
	p->masks = NULL, p->nmasks = p->cap_masks = 0;
	fast_plan_free(p);
	*p = r.q;
out:
	free(proxy);
	free(piped);
	free(r.parts);
	free(r.held);
	free(r.holds_less);
	return rc < 0 ? rc : 0;
}
