/*
 * check.c - the byte-exact proof that a plan delivers a traffic matrix
 * (check.h).  The plan comes as a view (plan.h: validated, and expanded
 * to explicit transfers when compact), and then:
 *
 *  1. local properties of every transfer: pieces inside their message,
 *     transfer bytes = sum of pieces, tier-up transfers inside one server,
 *     local copies (from == to) carry only the diagonal, and for FAST plans
 *     every tier-out step is one-to-one at NIC level and concurrent
 *     tier-out steps share no NIC (check_local.c);
 *  2. a walk in topological order with, per step, the set of its ancestors
 *     (a bitset over step ids; a second bitset marks ancestors reached
 *     through at least one whole-step dependency, the others being reached
 *     only through pipelined ones).  Every arriving piece is recorded
 *     once per (GPU, message) with its step and its position in its
 *     transfer's byte stream, so that the chunk of any of its bytes is
 *     computed, not stored (a piece cut into k chunks is one record, not
 *     k: with pipelined sends also cut per chunk, storing k records would
 *     make every query scan k of them, k^2 per piece); a send of bytes the
 *     sender did not originate must be covered by arrivals at the sender in
 *     ancestor steps (pipelined-only ancestors: in chunks <= the sending
 *     chunk);
 *  3. every byte of every message arrives at its destination exactly once
 *     (final records sorted per message and swept).
 *
 * Memory: bitsets live only until their last dependent is processed, so a
 * chain-like plan of 10^4..10^5 steps holds a few of them; arrival records
 * are 48 bytes per piece arriving anywhere (whatever its chunks).  Work is
 * linear in the pieces plus the chunk segments of pipelined sends, times
 * the arrivals of the same message at the same GPU (usually one).
 *
 * Files: check.c holds the state, the walk (2) and the entry points;
 * check_local.c stage 1, check_deliver.c stage 3; check_internal.h is
 * what they share.
 */
#include "lib/check/check_internal.h"

#include <stdlib.h>
#include <string.h>

/* End of the bytes of h that arrived in chunks 0..ch of its step (h->lo
 * when none did). */
static uint64_t rec_end_by_chunk(const struct rec *r, const struct fast_hold *h, uint32_t ch)
{
	uint64_t lim;

	if (r->chunks <= 1 || ch + 1 >= r->chunks)
		return h->hi;
	lim = fast_plan_chunk_start(r->len, r->chunks, ch + 1);
	if (lim <= r->pos)
		return h->lo;
	return lim - r->pos >= h->hi - h->lo ? h->hi : h->lo + (lim - r->pos);
}

/* --- the checker state (check_internal.h) ------------------------------- */

int fast_check_oom(struct checker *c)
{
	return fast_err_set(c->err, FAST_ENOMEM, "check: out of memory");
}

static uint64_t *bits_get(struct checker *c)
{
	uint64_t *b = c->npool ? c->pool[--c->npool] : fast_calloc(c->words, sizeof *b);
	if (b)
		memset(b, 0, c->words * sizeof *b);
	return b;
}

static void bits_put(struct checker *c, uint64_t **b)
{
	if (*b)
		c->pool[c->npool++] = *b;
	*b = NULL;
}

static bool bit(const uint64_t *b, uint32_t i)
{
	return (b[i / 64] >> (i % 64)) & 1;
}
/* --- what a piece is, per kind of plan ------------------------------------- */

/* Bytes of the message a piece is part of: D[src][dst], or its group's. */
uint64_t fast_check_msg_size(const struct checker *c, const struct fast_piece *pc)
{
	if (c->kind == FAST_TRAFFIC_BYTES)
		return c->D[(uint64_t)pc->src * c->ng + pc->dst];
	return fast_group_bytes(c->m, pc->src);
}

/* Position of GPU d in Dest(g) (its bit in a mask), or -1. */
int fast_check_dest_pos(const struct fast_matrix *m, uint32_t g, uint32_t d)
{
	const struct fast_group *gr = &m->groups[g];
	for (uint32_t i = 0; i < gr->ndst; i++)
		if (m->dsts[gr->dst0 + i] == d)
			return (int)i;
	return -1;
}

/* Does GPU x hold the piece's bytes from the start?  Its own message;
 * its own group (dispatch); its own contribution, alone (combine). */
bool fast_check_own(const struct checker *c, uint32_t x, const struct fast_piece *pc)
{
	int i;

	switch (c->kind) {
	case FAST_TRAFFIC_DISPATCH:
		return c->m->groups[pc->src].src == x;
	case FAST_TRAFFIC_COMBINE:
		i = fast_check_dest_pos(c->m, pc->src, x);
		return i >= 0 && c->vmask[pc->dst] == UINT64_C(1) << i;
	default:
		return pc->src == x;
	}
}

/* Holdings key of GPU g for the piece's message. */
uint64_t fast_check_hold_key(const struct checker *c, uint32_t g, const struct fast_piece *pc)
{
	if (c->kind == FAST_TRAFFIC_BYTES)
		return ((uint64_t)g * c->ng + pc->src) * c->ng + pc->dst;
	return (uint64_t)g * c->m->ngroups + pc->src;
}

/* "D[s][d] is N bytes" / "group g is N bytes": the size of a piece's
 * message, for "outside the message". */
void fast_check_size_name(char *buf, size_t len, const struct checker *c,
			  const struct fast_piece *pc)
{
	unsigned long long size = fast_check_msg_size(c, pc);

	if (c->kind == FAST_TRAFFIC_BYTES)
		snprintf(buf, len, "D[%u][%u] is %llu bytes", pc->src, pc->dst, size);
	else
		snprintf(buf, len, "group %u is %llu bytes", pc->src, size);
}

/* The piece as a message names it: "D[s][d] bytes a..b", "group g bytes
 * a..b" or, combine, "group g bytes a..b of 0xMASK". */
void fast_check_piece_name(char *buf, size_t len, const struct checker *c,
			   const struct fast_piece *pc)
{
	unsigned long long lo = pc->off, hi = pc->off + pc->len;

	if (c->kind == FAST_TRAFFIC_BYTES)
		snprintf(buf, len, "D[%u][%u] bytes %llu..%llu", pc->src, pc->dst, lo, hi);
	else if (c->kind == FAST_TRAFFIC_DISPATCH)
		snprintf(buf, len, "group %u bytes %llu..%llu", pc->src, lo, hi);
	else
		snprintf(buf, len, "group %u bytes %llu..%llu of 0x%llx", pc->src, lo, hi,
			 (unsigned long long)c->vmask[pc->dst]);
}

void fast_check_where(char *buf, size_t len, const struct checker *c, uint32_t t, uint32_t j,
		      uint32_t k)
{
	const struct fast_step *s = &c->e->steps[t];
	const struct fast_xfer *x = &c->e->xfers[s->xfer0 + j];
	char pn[96];

	fast_check_piece_name(pn, sizeof pn, c, &c->e->pieces[x->piece0 + k]);
	if (s->kind == FAST_STEP_REDUCE)
		snprintf(buf, len, "step %u sum %u (at GPU %u) input %u (%s)", t, j, x->to, k, pn);
	else
		snprintf(buf, len, "step %u transfer %u (GPU %u -> GPU %u) piece %u (%s)", t, j,
			 x->from, x->to, k, pn);
}
/* --- 2. holding ----------------------------------------------------------- */

/* Why bytes [lo, ...) of message (src, dst) are not usable by GPU g in
 * chunk ch of step t: find a transfer that brings them to g. */
static bool same_msg(const struct checker *c, const struct fast_piece *a,
		     const struct fast_piece *b)
{
	if (a->src != b->src)
		return false;
	if (c->kind == FAST_TRAFFIC_COMBINE)
		return c->vmask[a->dst] == c->vmask[b->dst];
	return a->dst == b->dst;
}

static void explain(const struct checker *c, uint32_t g, const struct fast_piece *want,
		    uint64_t lo, uint32_t t, uint32_t ch, char *buf, size_t len)
{
	const struct fast_plan *e = c->e;
	for (uint32_t u = 0; u < e->nsteps; u++) {
		const struct fast_step *s = &e->steps[u];
		for (uint32_t j = 0; j < s->nxfers; j++) {
			const struct fast_xfer *x = &e->xfers[s->xfer0 + j];
			uint64_t pos = 0;
			if (x->to != g)
				continue;
			if (s->kind == FAST_STEP_REDUCE) { /* a sum: its value is the union */
				const struct fast_piece *pc = &e->pieces[x->piece0];
				uint64_t un = 0;
				for (uint32_t k = 0; k < x->npieces; k++)
					un |= c->vmask[e->pieces[x->piece0 + k].dst];
				if (pc->src == want->src && un == c->vmask[want->dst] && pc->off <= lo &&
				    lo < pc->off + pc->len) {
					snprintf(buf, len, u == t ? " (they are summed in this same step)"
							 : " (they are summed in step %u, which step %u "
							   "does not depend on)", u, t);
					return;
				}
				continue;
			}
			for (uint32_t k = 0; k < x->npieces; k++) {
				const struct fast_piece *pc = &e->pieces[x->piece0 + k];
				if (same_msg(c, pc, want) && pc->off <= lo && lo < pc->off + pc->len) {
					uint64_t at = pos + (lo - pc->off);
					uint32_t uc = fast_plan_chunk_of(x->bytes, s->chunks, at);
					if (u == t)
						snprintf(buf, len, " (they arrive in this same step)");
					else if (c->any[t] && bit(c->any[t], u) && s->chunks > 1)
						snprintf(buf, len,
							 " (they arrive in chunk %u of step %u, and chunk "
							 "%u of step %u waits only for chunks 0..%u of it)",
							 uc, u, ch, t, ch);
					else
						snprintf(buf, len,
							 " (they arrive in step %u, which step %u does "
							 "not depend on)", u, t);
					return;
				}
				pos += pc->len;
			}
		}
	}
	snprintf(buf, len, " (no step brings them to GPU %u)", g);
}

/* The part of an arrival record usable in the query's step and chunk:
 * none unless its step is an ancestor; only its chunks <= ch when reached
 * only through pipelined deps. */
struct usable {
	const struct checker *c;
	const uint64_t *any, *full;
	uint32_t ch;
	uint64_t mask; /* combine: only values of this mask count */
};

static uint64_t usable_end(void *ctx, uint32_t id, const struct fast_hold *h)
{
	const struct usable *u = ctx;
	const struct rec *r = &u->c->recs[id];

	if (!bit(u->any, r->step))
		return h->lo;
	if (u->c->kind == FAST_TRAFFIC_COMBINE && u->c->vmask[h->tag] != u->mask)
		return h->lo;
	return bit(u->full, r->step) ? h->hi : rec_end_by_chunk(r, h, u->ch);
}

/* Does GPU g hold message bytes [lo, hi) of (src, dst) in chunk ch of step
 * t?  0, or ECHECK with the message. */
static int held(struct checker *c, uint32_t g, const struct fast_piece *pc, uint64_t lo,
		uint64_t hi, uint32_t t, uint32_t ch, uint32_t j, uint32_t k)
{
	uint64_t key = fast_check_hold_key(c, g, pc);
	struct usable u = { c, c->any[t], c->pipelined ? c->full[t] : c->any[t], ch,
			    c->kind == FAST_TRAFFIC_COMBINE ? c->vmask[pc->dst] : 0 };
	uint32_t r = fast_holds_first(&c->arr, key);
	uint64_t cur, gap_end;
	char loc[256], why[160];
	int rc;

	/* the common case, decided here: the newest arrival covers it */
	if (r != FAST_HOLDS_END && c->arr.recs[r].lo <= lo && c->arr.recs[r].hi >= hi &&
	    usable_end(&u, r, &c->arr.recs[r]) >= hi)
		return 0;
	rc = fast_holds_cover(&c->arr, key, lo, hi, usable_end, &u, &cur, &gap_end);
	if (rc < 0)
		return fast_check_oom(c);
	if (rc == 0)
		return 0;
	fast_check_where(loc, sizeof loc, c, t, j, k);
	explain(c, g, pc, cur, t, ch, why, sizeof why);
	if (c->e->steps[t].chunks > 1)
		return fast_err_set(c->err, FAST_ECHECK,
				    "%s, chunk %u: GPU %u does not hold bytes %llu..%llu at this point%s",
				    loc, ch, g, (unsigned long long)cur, (unsigned long long)gap_end,
				    why);
	return fast_err_set(c->err, FAST_ECHECK,
			    "%s: GPU %u does not hold bytes %llu..%llu at this step%s", loc, g,
			    (unsigned long long)cur, (unsigned long long)gap_end, why);
}

static int add_final(struct checker *c, const struct fast_piece *pc, uint32_t t, uint32_t j,
		     uint32_t k, uint32_t tag)
{
	if (c->nfinals == c->cap_finals &&
	    fast_grow((void **)&c->finals, &c->cap_finals, c->nfinals + 1, sizeof *c->finals,
		      4096) < 0)
		return fast_check_oom(c);
	struct final *f = &c->finals[c->nfinals++];
	f->msg = c->kind == FAST_TRAFFIC_BYTES ? (uint64_t)pc->src * c->ng + pc->dst : pc->src;
	f->lo = pc->off;
	f->hi = pc->off + pc->len;
	f->step = t;
	f->xfer = j;
	f->piece = k;
	f->tag = tag;
	return 0;
}

/* Record one arrival of [lo, hi) under key with tag, as step t's at
 * stream position r.pos. */
static int add_rec(struct checker *c, uint64_t key, uint64_t lo, uint64_t hi, uint32_t tag,
		   struct rec r)
{
	uint32_t id;

	if (fast_holds_add_tagged(&c->arr, key, lo, hi, tag, &id) < 0 ||
	    ((size_t)id >= c->cap_recs &&
	     fast_grow((void **)&c->recs, &c->cap_recs, (size_t)id + 1, sizeof *c->recs, 4096) < 0))
		return fast_check_oom(c);
	c->recs[id] = r;
	return 0;
}

/* A reduce step's sums: GPU x then holds (g, range, union of the inputs'
 * masks), a new value whose mask is appended to c->vmask. */
static int arrive_sums(struct checker *c, uint32_t t)
{
	const struct fast_step *s = &c->e->steps[t];
	int rc;

	for (uint32_t j = 0; j < s->nxfers; j++) {
		const struct fast_xfer *x = &c->e->xfers[s->xfer0 + j];
		const struct fast_piece *pc = &c->e->pieces[x->piece0];
		uint64_t u = 0;
		for (uint32_t k = 0; k < x->npieces; k++)
			u |= c->vmask[c->e->pieces[x->piece0 + k].dst];
		if (c->nvmask >= UINT32_MAX || FAST_GROW(c->vmask, c->cap_vmask, c->nvmask + 1) < 0)
			return fast_check_oom(c);
		c->vmask[c->nvmask] = u;
		if ((rc = add_rec(c, fast_check_hold_key(c, x->to, pc), pc->off, pc->off + pc->len,
				  (uint32_t)c->nvmask, (struct rec){ 0, pc->len, t, 1 })) < 0)
			return rc;
		c->nvmask++;
	}
	return 0;
}

/* Arrivals of step t: one record per piece not back at its origin (held
 * there anyway), with its stream position so that the chunk of each byte
 * can be computed when some step depends on t pipelined (otherwise every
 * descendant sees all of t: chunks 1). */
static int arrive(struct checker *c, uint32_t t)
{
	const struct fast_step *s = &c->e->steps[t];
	uint32_t chunks = s->chunks > 1 && c->pipe_out[t] ? s->chunks : 1;
	int rc;

	if (s->kind == FAST_STEP_REDUCE)
		return arrive_sums(c, t);
	for (uint32_t j = 0; j < s->nxfers; j++) {
		const struct fast_xfer *x = &c->e->xfers[s->xfer0 + j];
		uint64_t pos = 0;
		for (uint32_t k = 0; k < x->npieces; k++) {
			const struct fast_piece *pc = &c->e->pieces[x->piece0 + k];
			struct rec r = { pos, x->bytes, t, chunks };
			uint32_t origin = pc->src, tag = 0;
			pos += pc->len;
			if (c->kind == FAST_TRAFFIC_BYTES) {
				if (x->to == pc->dst && (rc = add_final(c, pc, t, j, k, 0)) < 0)
					return rc;
			} else {
				/* dispatch: finals are the holdings at Dest(g) (deliveries);
				 * combine: what src(g) receives is its final sum's input */
				origin = c->m->groups[pc->src].src;
				tag = c->kind == FAST_TRAFFIC_COMBINE ? pc->dst : 0;
				if (c->kind == FAST_TRAFFIC_COMBINE && x->to == origin &&
				    (rc = add_final(c, pc, t, j, k, tag)) < 0)
					return rc;
				if (c->kind == FAST_TRAFFIC_COMBINE)
					origin = UINT32_MAX; /* a contribution is held anywhere */
			}
			if (x->to == origin)
				continue;
			if ((rc = add_rec(c, fast_check_hold_key(c, x->to, pc), pc->off, pc->off + pc->len, tag,
					  r)) < 0)
				return rc;
		}
	}
	return 0;
}

/* Sends of step t, then its arrivals.  A sent piece is cut at the step's
 * chunk boundaries (stream bytes of its transfer) only when t has a
 * pipelined dep (otherwise every ancestor is a whole-step one). */
static int walk_step(struct checker *c, uint32_t t)
{
	const struct fast_step *s = &c->e->steps[t];
	bool cut = s->chunks > 1 && c->pipe_in[t];
	int rc;

	for (uint32_t j = 0; j < s->nxfers; j++) {
		const struct fast_xfer *x = &c->e->xfers[s->xfer0 + j];
		uint64_t pos = 0;
		uint32_t ch = cut ? 0 : s->chunks - 1;
		for (uint32_t k = 0; k < x->npieces; k++) {
			const struct fast_piece *pc = &c->e->pieces[x->piece0 + k];
			uint64_t end = pos + pc->len;
			if (fast_check_own(c, x->from, pc)) {
				pos = end; /* held from the start */
				continue;
			}
			while (pos < end) {
				uint64_t cend = cut
					? fast_plan_chunk_start(x->bytes, s->chunks, ch + 1) : end;
				if (cend <= pos) {
					/* skip empty chunks in one go */
					ch = fast_plan_chunk_of(x->bytes, s->chunks, pos);
					continue;
				}
				uint64_t seg = (cend < end ? cend : end) - pos;
				uint64_t lo = pc->off + (pos + pc->len - end);
				if ((rc = held(c, x->from, pc, lo, lo + seg, t, ch, j, k)) < 0)
					return rc;
				pos += seg;
			}
		}
	}
	return arrive(c, t);
}

static int walk(struct checker *c)
{
	const struct fast_plan *e = c->e;
	const uint32_t *order = c->order;
	size_t n = e->nsteps;
	int rc = 0;

	c->words = (n + 63) / 64;
	for (size_t d = 0; d < e->ndeps; d++)
		if (e->deps[d].pipelined)
			c->pipelined = true;
	c->any = fast_calloc(n ? n : 1, sizeof *c->any);
	c->full = fast_calloc(n ? n : 1, sizeof *c->full);
	c->pool = fast_calloc(2 * n + 2, sizeof *c->pool);
	c->refs = fast_calloc(n ? n : 1, sizeof *c->refs);
	c->pipe_in = fast_calloc(n ? n : 1, sizeof *c->pipe_in);
	c->pipe_out = fast_calloc(n ? n : 1, sizeof *c->pipe_out);
	if (!c->any || !c->full || !c->pool || !c->refs || !c->pipe_in || !c->pipe_out) {
		rc = fast_check_oom(c);
		goto out;
	}
	for (size_t d = 0; d < e->ndeps; d++)
		c->refs[e->deps[d].step]++;
	for (size_t t = 0; t < n; t++)
		for (uint32_t d = 0; d < e->steps[t].ndeps; d++)
			if (e->deps[e->steps[t].dep0 + d].pipelined) {
				c->pipe_in[t] = true;
				c->pipe_out[e->deps[e->steps[t].dep0 + d].step] = true;
			}
	for (size_t i = 0; i < n && rc == 0; i++) {
		uint32_t t = order[i];
		const struct fast_step *s = &e->steps[t];
		c->any[t] = bits_get(c);
		if (c->pipelined)
			c->full[t] = bits_get(c);
		if (!c->any[t] || (c->pipelined && !c->full[t])) {
			rc = fast_check_oom(c);
			break;
		}
		for (uint32_t d = 0; d < s->ndeps; d++) {
			uint32_t u = e->deps[s->dep0 + d].step;
			bool pipe = e->deps[s->dep0 + d].pipelined != 0;
			uint64_t *a = c->any[t], *ua = c->any[u];
			for (size_t w = 0; w < c->words; w++)
				a[w] |= ua[w];
			a[u / 64] |= UINT64_C(1) << (u % 64);
			if (c->pipelined) {
				uint64_t *f = c->full[t];
				const uint64_t *src = pipe ? c->full[u] : ua;
				for (size_t w = 0; w < c->words; w++)
					f[w] |= src[w];
				if (!pipe)
					f[u / 64] |= UINT64_C(1) << (u % 64);
			}
		}
		for (uint32_t d = 0; d < s->ndeps; d++) {
			uint32_t u = e->deps[s->dep0 + d].step;
			if (--c->refs[u] == 0) {
				bits_put(c, &c->any[u]);
				bits_put(c, &c->full[u]);
			}
		}
		rc = walk_step(c, t);
		if (c->refs[t] == 0) {
			bits_put(c, &c->any[t]);
			bits_put(c, &c->full[t]);
		}
	}
out:
	if (c->any)
		for (size_t t = 0; t < n; t++)
			free(c->any[t]);
	if (c->full)
		for (size_t t = 0; t < n; t++)
			free(c->full[t]);
	if (c->pool)
		for (size_t i = 0; i < c->npool; i++)
			free(c->pool[i]);
	free(c->any);
	free(c->full);
	free(c->pool);
	free(c->refs);
	free(c->pipe_in);
	free(c->pipe_out);
	c->pipe_in = c->pipe_out = NULL;
	c->any = c->full = c->pool = NULL;
	c->refs = NULL;
	return rc;
}
int fast_plan_check(const struct fast_plan_view *v, const struct fast_topo *topo,
		    struct fast_err *err)
{
	const struct fast_plan *p = v->given;
	struct checker c;
	int rc;

	if ((rc = fast_plan_fits_topo(p, topo, err)) < 0)
		return rc;
	memset(&c, 0, sizeof c);
	c.p = p;
	c.e = v->x;
	c.kind = p->kind;
	c.m = v->m;
	c.D = v->m ? v->m->bytes : NULL;
	c.ng = p->servers * p->gpus;
	c.G = p->gpus;
	c.topo = topo;
	c.err = err;
	if (c.kind != FAST_TRAFFIC_BYTES && !c.m)
		return fast_err_set(err, FAST_EINPUT, "check: a %s plan is checked against its "
				    "traffic's groups (open the view with the matrix)",
				    fast_traffic_kind_name(c.kind));
	if (c.kind == FAST_TRAFFIC_BYTES && !c.D)
		return fast_err_set(err, FAST_EINPUT, "check: no matrix to check the plan against");
	if (c.kind == FAST_TRAFFIC_COMBINE && p->nmasks) {
		if (FAST_GROW(c.vmask, c.cap_vmask, p->nmasks) < 0)
			return fast_check_oom(&c);
		memcpy(c.vmask, p->masks, p->nmasks * sizeof *c.vmask);
		c.nvmask = p->nmasks;
	}
	rc = fast_check_down_ports(&c);
	if (rc == 0)
		rc = fast_check_lanes(&c);
	if (rc == 0)
		rc = fast_check_transfers(&c);
	/* one topological order for the NIC rule and the walk */
	if (rc == 0 && !(c.order = fast_calloc(c.e->nsteps ? c.e->nsteps : 1, sizeof *c.order)))
		rc = fast_check_oom(&c);
	if (rc == 0)
		rc = fast_plan_topo_order(c.e, c.order, err);
	if (rc == 0)
		rc = fast_check_nic_order(&c);
	if (rc == 0)
		rc = walk(&c);
	if (rc == 0)
		rc = c.kind == FAST_TRAFFIC_BYTES ? fast_check_deliveries(&c)
		     : c.kind == FAST_TRAFFIC_DISPATCH ? fast_check_dispatch_deliveries(&c)
						      : fast_check_combine_deliveries(&c);
	fast_holds_free(&c.arr);
	free(c.order);
	free(c.recs);
	free(c.finals);
	free(c.vmask);
	free(c.down);
	return rc;
}
