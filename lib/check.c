/*
 * check.c - the byte-exact proof that a plan delivers a traffic matrix
 * (check.h).  The plan comes as a view (plan.h: validated, and expanded
 * to explicit transfers when compact), and then:
 *
 *  1. local properties of every transfer: pieces inside their message,
 *     transfer bytes = sum of pieces, tier-up transfers inside one server,
 *     local copies (from == to) carry only the diagonal, and for FAST plans
 *     every tier-out step is one-to-one at NIC level;
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
 */
#include "check.h"
#include "holds.h"

#include <stdlib.h>
#include <string.h>

/* --- arrival records: the holdings store, keyed by (GPU, message) --------- */

/* What the checker knows of an arrival record besides its message range
 * (the store's [lo, hi)), indexed by the record's id. */
struct rec {
	uint64_t pos, len;   /* stream byte of lo in its transfer; the transfer's bytes */
	uint32_t step;
	uint32_t chunks;     /* of its step; 1 when no step depends on it pipelined */
};

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

/* --- final deliveries ----------------------------------------------------- */

struct final {
	uint64_t msg;  /* src * ng + dst; a combine plan's: the group */
	uint64_t lo, hi;
	uint32_t step, xfer, piece;
	uint32_t tag;  /* combine: index of its mask in checker.vmask */
};

static int cmp_final(const void *a, const void *b)
{
	const struct final *x = a, *y = b;
	if (x->msg != y->msg)
		return x->msg < y->msg ? -1 : 1;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->hi != y->hi)
		return x->hi < y->hi ? -1 : 1;
	if (x->step != y->step)
		return x->step < y->step ? -1 : 1;
	if (x->xfer != y->xfer)
		return x->xfer < y->xfer ? -1 : 1;
	return x->piece < y->piece ? -1 : x->piece > y->piece;
}

/* --- the checker state ---------------------------------------------------- */

struct checker {
	const struct fast_plan *e; /* explicit form */
	const struct fast_plan *p; /* as given (for lanes and rail steps) */
	const uint64_t *D;         /* byte plans */
	enum fast_traffic_kind kind;
	const struct fast_matrix *m; /* token plans: the groups */
	uint64_t *vmask;           /* combine: masks of values, the plan's then the sums' */
	size_t nvmask, cap_vmask;
	uint32_t ng, G;
	bool pipelined; /* any pipelined dep: keep the second bitset */
	size_t words;   /* per bitset */
	uint64_t **any, **full;   /* per step, NULL when not live */
	uint64_t **pool;          /* free bitsets */
	size_t npool;
	uint32_t *refs;           /* dependents not yet processed */
	bool *pipe_in, *pipe_out; /* has a pipelined dep / is one's pipelined dep */
	struct fast_holds arr;    /* arrivals not back at their origin */
	struct rec *recs;         /* per arrival record id */
	size_t cap_recs;
	struct final *finals;
	size_t nfinals, cap_finals;
	struct fast_err *err;
};

static int oom(struct checker *c)
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
static uint64_t msg_size(const struct checker *c, const struct fast_piece *pc)
{
	if (c->kind == FAST_TRAFFIC_BYTES)
		return c->D[(uint64_t)pc->src * c->ng + pc->dst];
	return fast_group_bytes(c->m, pc->src);
}

/* Position of GPU d in Dest(g) (its bit in a mask), or -1. */
static int dest_pos(const struct fast_matrix *m, uint32_t g, uint32_t d)
{
	const struct fast_group *gr = &m->groups[g];
	for (uint32_t i = 0; i < gr->ndst; i++)
		if (m->dsts[gr->dst0 + i] == d)
			return (int)i;
	return -1;
}

/* Does GPU x hold the piece's bytes from the start?  Its own message;
 * its own group (dispatch); its own contribution, alone (combine). */
static bool own(const struct checker *c, uint32_t x, const struct fast_piece *pc)
{
	int i;

	switch (c->kind) {
	case FAST_TRAFFIC_DISPATCH:
		return c->m->groups[pc->src].src == x;
	case FAST_TRAFFIC_COMBINE:
		i = dest_pos(c->m, pc->src, x);
		return i >= 0 && c->vmask[pc->dst] == UINT64_C(1) << i;
	default:
		return pc->src == x;
	}
}

/* Holdings key of GPU g for the piece's message. */
static uint64_t hold_key(const struct checker *c, uint32_t g, const struct fast_piece *pc)
{
	if (c->kind == FAST_TRAFFIC_BYTES)
		return ((uint64_t)g * c->ng + pc->src) * c->ng + pc->dst;
	return (uint64_t)g * c->m->ngroups + pc->src;
}

/* "D[s][d] is N bytes" / "group g is N bytes": the size of a piece's
 * message, for "outside the message". */
static void size_name(char *buf, size_t len, const struct checker *c, const struct fast_piece *pc)
{
	unsigned long long size = msg_size(c, pc);

	if (c->kind == FAST_TRAFFIC_BYTES)
		snprintf(buf, len, "D[%u][%u] is %llu bytes", pc->src, pc->dst, size);
	else
		snprintf(buf, len, "group %u is %llu bytes", pc->src, size);
}

/* The piece as a message names it: "D[s][d] bytes a..b", "group g bytes
 * a..b" or, combine, "group g bytes a..b of 0xMASK". */
static void piece_name(char *buf, size_t len, const struct checker *c, const struct fast_piece *pc)
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

static void where(char *buf, size_t len, const struct checker *c, uint32_t t, uint32_t j,
		  uint32_t k)
{
	const struct fast_step *s = &c->e->steps[t];
	const struct fast_xfer *x = &c->e->xfers[s->xfer0 + j];
	char pn[96];

	piece_name(pn, sizeof pn, c, &c->e->pieces[x->piece0 + k]);
	if (s->kind == FAST_STEP_REDUCE)
		snprintf(buf, len, "step %u sum %u (at GPU %u) input %u (%s)", t, j, x->to, k, pn);
	else
		snprintf(buf, len, "step %u transfer %u (GPU %u -> GPU %u) piece %u (%s)", t, j,
			 x->from, x->to, k, pn);
}

/* --- 1. local properties -------------------------------------------------- */

struct cap {
	uint64_t key, bytes;
};

static int cmp_cap(const void *a, const void *b)
{
	const struct cap *x = a, *y = b;
	return x->key < y->key ? -1 : x->key > y->key;
}

/* Lane pieces inside their messages, and every lane emptied by the rail
 * stages of its server pair (a leftover is never sent: name the lane). */
static int check_lanes(struct checker *c)
{
	const struct fast_plan *p = c->p;
	struct cap *caps = NULL;
	size_t n = 0, m = 0, w = 0;
	int rc = 0;

	if (p->nlanes == 0)
		return 0;
	for (size_t l = 0; l < p->nlanes; l++) {
		const struct fast_lane *ln = &p->lanes[l];
		for (uint32_t k = 0; k < ln->npieces; k++) {
			const struct fast_piece *pc = &p->pieces[ln->piece0 + k];
			char pn[96], sz[96];
			if (pc->off + pc->len > msg_size(c, pc)) {
				piece_name(pn, sizeof pn, c, pc);
				size_name(sz, sizeof sz, c, pc);
				return fast_err_set(c->err, FAST_ECHECK,
						    "lane (server %u -> server %u, rail %u) piece %u "
						    "(%s): outside the message (%s)", ln->src_server,
						    ln->dst_server, ln->rail, k, pn, sz);
			}
		}
	}
	/* bytes the rail stages let each server pair carry per rail */
	for (size_t t = 0; t < p->nsteps; t++)
		if (p->steps[t].kind == FAST_STEP_RAIL && p->steps[t].budget)
			n += p->servers;
	caps = fast_calloc(n ? n : 1, sizeof *caps);
	if (!caps)
		return oom(c);
	for (size_t t = 0; t < p->nsteps; t++) {
		const struct fast_step *s = &p->steps[t];
		if (s->kind != FAST_STEP_RAIL || !s->budget)
			continue;
		for (uint32_t a = 0; a < p->servers; a++) {
			uint32_t b = p->perm[s->perm0 + a];
			if (b == a)
				continue;
			caps[m].key = (uint64_t)a * p->servers + b;
			caps[m++].bytes = s->budget;
		}
	}
	if (m > 1)
		qsort(caps, m, sizeof *caps, cmp_cap);
	for (size_t i = 0; i < m; i++) { /* merge equal keys, saturating */
		if (w && caps[w - 1].key == caps[i].key) {
			if (!fast_add_u64(caps[w - 1].bytes, caps[i].bytes, &caps[w - 1].bytes))
				caps[w - 1].bytes = UINT64_MAX;
		} else {
			caps[w++] = caps[i];
		}
	}
	for (size_t l = 0; l < p->nlanes && rc == 0; l++) {
		const struct fast_lane *ln = &p->lanes[l];
		struct cap key = { (uint64_t)ln->src_server * p->servers + ln->dst_server, 0 };
		const struct cap *hit = w ? bsearch(&key, caps, w, sizeof *caps, cmp_cap) : NULL;
		uint64_t carried = hit ? hit->bytes : 0;
		if (ln->bytes > carried)
			rc = fast_err_set(c->err, FAST_ECHECK,
					  "lane (server %u -> server %u, rail %u): %llu of its %llu "
					  "bytes are never sent (the rail stages from server %u to "
					  "server %u carry %llu bytes per rail)", ln->src_server,
					  ln->dst_server, ln->rail,
					  (unsigned long long)(ln->bytes - carried),
					  (unsigned long long)ln->bytes, ln->src_server, ln->dst_server,
					  (unsigned long long)carried);
	}
	free(caps);
	return rc;
}

/* What a local copy (from == to) may carry: the diagonal D[x][x] (byte
 * plans), a group of x's own (dispatch); nothing in a combine plan (a sum
 * is a reduce step; a contribution of src(g) is counted there anyway). */
static int local_copy(struct checker *c, const struct fast_xfer *x, const struct fast_piece *pc,
		      uint32_t t, uint32_t j, uint32_t k)
{
	char loc[256];

	if (c->kind == FAST_TRAFFIC_BYTES ? pc->src == x->from && pc->dst == x->from
	    : c->kind == FAST_TRAFFIC_DISPATCH && c->m->groups[pc->src].src == x->from)
		return 0;
	where(loc, sizeof loc, c, t, j, k);
	if (c->kind == FAST_TRAFFIC_BYTES)
		return fast_err_set(c->err, FAST_ECHECK,
				    "%s: a local copy (GPU %u -> GPU %u) may carry only the diagonal "
				    "D[%u][%u]", loc, x->from, x->to, x->from, x->from);
	if (c->kind == FAST_TRAFFIC_DISPATCH)
		return fast_err_set(c->err, FAST_ECHECK,
				    "%s: a local copy (GPU %u -> GPU %u) may carry only groups of "
				    "GPU %u", loc, x->from, x->to, x->from);
	return fast_err_set(c->err, FAST_ECHECK,
			    "%s: a combine plan has no local copies (GPU %u -> GPU %u): a sum is "
			    "a reduce step", loc, x->from, x->to);
}

/* Pieces inside messages, byte sums, tiers, local copies, reduces not at
 * a group's source, and for FAST plans one-to-one tier-out steps. */
static int check_transfers(struct checker *c)
{
	const struct fast_plan *e = c->e;
	bool fast = strcmp(e->algo, "fast") == 0;
	uint32_t *send_peer = NULL, *recv_peer = NULL, *stamp_s = NULL, *stamp_r = NULL;
	char loc[256];
	int rc = 0;

	if (fast) {
		send_peer = fast_calloc(c->ng, sizeof *send_peer);
		recv_peer = fast_calloc(c->ng, sizeof *recv_peer);
		stamp_s = fast_calloc(c->ng, sizeof *stamp_s);
		stamp_r = fast_calloc(c->ng, sizeof *stamp_r);
		if (!send_peer || !recv_peer || !stamp_s || !stamp_r) {
			rc = oom(c);
			goto out;
		}
	}
	for (uint32_t t = 0; t < e->nsteps && rc == 0; t++) {
		const struct fast_step *s = &e->steps[t];
		for (uint32_t j = 0; j < s->nxfers && rc == 0; j++) {
			const struct fast_xfer *x = &e->xfers[s->xfer0 + j];
			uint64_t sum = 0;
			for (uint32_t k = 0; k < x->npieces; k++) {
				const struct fast_piece *pc = &e->pieces[x->piece0 + k];
				if (pc->off + pc->len > msg_size(c, pc)) {
					char sz[96];
					where(loc, sizeof loc, c, t, j, k);
					size_name(sz, sizeof sz, c, pc);
					rc = fast_err_set(c->err, FAST_ECHECK,
							  "%s: outside the message (%s)", loc, sz);
					break;
				}
				if (s->kind == FAST_STEP_REDUCE && c->m->groups[pc->src].src == x->to) {
					where(loc, sizeof loc, c, t, j, k);
					rc = fast_err_set(c->err, FAST_ECHECK,
							  "%s: GPU %u is the source of group %u, where the "
							  "sum is implicit (a reduce there is refused)",
							  loc, x->to, pc->src);
					break;
				}
				if (s->kind != FAST_STEP_REDUCE && x->from == x->to &&
				    (rc = local_copy(c, x, pc, t, j, k)) < 0)
					break;
				if (!fast_add_u64(sum, pc->len, &sum))
					sum = UINT64_MAX; /* cannot equal x->bytes */
			}
			if (rc)
				break;
			if (sum != x->bytes) {
				rc = fast_err_set(c->err, FAST_ECHECK,
						  "step %u transfer %u (GPU %u -> GPU %u): says %llu bytes "
						  "but its pieces add up to %llu", t, j, x->from, x->to,
						  (unsigned long long)x->bytes, (unsigned long long)sum);
				break;
			}
			if (s->tier == FAST_TIER_UP && x->from / c->G != x->to / c->G) {
				rc = fast_err_set(c->err, FAST_ECHECK,
						  "step %u transfer %u (GPU %u -> GPU %u): a tier up "
						  "transfer crosses servers (%u -> %u)", t, j, x->from,
						  x->to, x->from / c->G, x->to / c->G);
				break;
			}
			if (!fast || s->tier != FAST_TIER_OUT || x->from == x->to)
				continue;
			/* one NIC per GPU: NIC-level one-to-one is GPU-level */
			if (stamp_s[x->from] == t + 1 && send_peer[x->from] != x->to) {
				rc = fast_err_set(c->err, FAST_ECHECK,
						  "step %u transfer %u (GPU %u -> GPU %u): the NIC of GPU "
						  "%u also sends to GPU %u in this step; a fast tier out "
						  "step must be one-to-one", t, j, x->from, x->to, x->from,
						  send_peer[x->from]);
				break;
			}
			if (stamp_r[x->to] == t + 1 && recv_peer[x->to] != x->from) {
				rc = fast_err_set(c->err, FAST_ECHECK,
						  "step %u transfer %u (GPU %u -> GPU %u): incast: the NIC "
						  "of GPU %u also receives from GPU %u in this step; a fast "
						  "tier out step must be one-to-one", t, j, x->from, x->to,
						  x->to, recv_peer[x->to]);
				break;
			}
			stamp_s[x->from] = stamp_r[x->to] = t + 1;
			send_peer[x->from] = x->to;
			recv_peer[x->to] = x->from;
		}
	}
out:
	free(send_peer);
	free(recv_peer);
	free(stamp_s);
	free(stamp_r);
	return rc;
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
	uint64_t key = hold_key(c, g, pc);
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
		return oom(c);
	if (rc == 0)
		return 0;
	where(loc, sizeof loc, c, t, j, k);
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
		return oom(c);
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
		return oom(c);
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
			return oom(c);
		c->vmask[c->nvmask] = u;
		if ((rc = add_rec(c, hold_key(c, x->to, pc), pc->off, pc->off + pc->len,
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
			if ((rc = add_rec(c, hold_key(c, x->to, pc), pc->off, pc->off + pc->len, tag,
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
			if (own(c, x->from, pc)) {
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
	size_t n = e->nsteps;
	uint32_t *order = NULL;
	int rc = 0;

	c->words = (n + 63) / 64;
	for (size_t d = 0; d < e->ndeps; d++)
		if (e->deps[d].pipelined)
			c->pipelined = true;
	order = fast_calloc(n ? n : 1, sizeof *order);
	c->any = fast_calloc(n ? n : 1, sizeof *c->any);
	c->full = fast_calloc(n ? n : 1, sizeof *c->full);
	c->pool = fast_calloc(2 * n + 2, sizeof *c->pool);
	c->refs = fast_calloc(n ? n : 1, sizeof *c->refs);
	c->pipe_in = fast_calloc(n ? n : 1, sizeof *c->pipe_in);
	c->pipe_out = fast_calloc(n ? n : 1, sizeof *c->pipe_out);
	if (!order || !c->any || !c->full || !c->pool || !c->refs || !c->pipe_in || !c->pipe_out) {
		rc = oom(c);
		goto out;
	}
	rc = fast_plan_topo_order(e, order, c->err);
	if (rc < 0)
		goto out;
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
			rc = oom(c);
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
	free(order);
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

/* --- 3. exactly-once delivery ---------------------------------------------- */

static int deliveries(struct checker *c)
{
	uint64_t nmsg = (uint64_t)c->ng * c->ng;
	size_t i = 0;

	if (c->nfinals > 1)
		qsort(c->finals, c->nfinals, sizeof *c->finals, cmp_final);
	for (uint64_t m = 0; m < nmsg; m++) {
		uint32_t src = (uint32_t)(m / c->ng), dst = (uint32_t)(m % c->ng);
		uint64_t size = c->D[m], cur = 0;
		const struct final *prev = NULL;
		bool any = i < c->nfinals && c->finals[i].msg == m;

		for (; i < c->nfinals && c->finals[i].msg == m; i++) {
			const struct final *f = &c->finals[i];
			if (f->lo < cur)
				return fast_err_set(c->err, FAST_ECHECK,
						    "D[%u][%u] bytes %llu..%llu are delivered twice to GPU "
						    "%u: by step %u transfer %u piece %u and by step %u "
						    "transfer %u piece %u", src, dst,
						    (unsigned long long)f->lo,
						    (unsigned long long)(f->hi < cur ? f->hi : cur), dst,
						    prev->step, prev->xfer, prev->piece, f->step, f->xfer,
						    f->piece);
			if (f->lo > cur)
				return fast_err_set(c->err, FAST_ECHECK,
						    "D[%u][%u] bytes %llu..%llu never reach GPU %u", src,
						    dst, (unsigned long long)cur, (unsigned long long)f->lo,
						    dst);
			cur = f->hi;
			prev = f;
		}
		if (src == dst && !any)
			continue; /* the diagonal: an implicit local copy */
		if (cur < size)
			return fast_err_set(c->err, FAST_ECHECK, "D[%u][%u] bytes %llu..%llu never reach "
					    "GPU %u", src, dst, (unsigned long long)cur,
					    (unsigned long long)size, dst);
	}
	return 0;
}

/* Dispatch: every d in Dest(g) but src(g) ends holding every byte of g
 * (its arrivals in any step; replication may deliver a byte more than
 * once). */
static int dispatch_deliveries(struct checker *c)
{
	const struct fast_matrix *m = c->m;

	for (uint32_t g = 0; g < m->ngroups; g++) {
		const struct fast_group *gr = &m->groups[g];
		uint64_t size = fast_group_bytes(m, g), lo, hi;
		for (uint32_t i = 0; i < gr->ndst; i++) {
			uint32_t d = m->dsts[gr->dst0 + i];
			int rc;
			if (d == gr->src)
				continue; /* a local copy, held from the start */
			rc = fast_holds_cover(&c->arr, (uint64_t)d * m->ngroups + g, 0, size, NULL, NULL,
					      &lo, &hi);
			if (rc < 0)
				return oom(c);
			if (rc)
				return fast_err_set(c->err, FAST_ECHECK,
						    "group %u (GPU %u, %llu tokens) bytes %llu..%llu never "
						    "reach GPU %u", g, gr->src,
						    (unsigned long long)gr->tokens, (unsigned long long)lo,
						    (unsigned long long)hi, d);
		}
	}
	return 0;
}

struct event {
	uint64_t pos;
	uint32_t fin;  /* index in c->finals */
	int delta;     /* +1 the value starts counting at pos, -1 it stops */
};

static int cmp_event(const void *a, const void *b)
{
	const struct event *x = a, *y = b;
	if (x->pos != y->pos)
		return x->pos < y->pos ? -1 : 1;
	if (x->delta != y->delta)
		return x->delta < y->delta ? -1 : 1; /* ends before starts */
	return x->fin < y->fin ? -1 : x->fin > y->fin;
}

/* Why contribution i of group g is not counted once in [a, b): name the
 * values src(g) receives that hold it there (two of them), or none. */
static int partition_fail(struct checker *c, uint32_t g, uint32_t i, uint32_t count, uint64_t a,
			  uint64_t b, size_t f0, size_t f1)
{
	const struct fast_group *gr = &c->m->groups[g];
	uint32_t d = c->m->dsts[gr->dst0 + i];
	const struct final *hit[2] = { NULL, NULL };
	int n = 0;

	if (count == 0)
		return fast_err_set(c->err, FAST_ECHECK,
				    "group %u (GPU %u, %llu tokens) bytes %llu..%llu: the contribution "
				    "of GPU %u never reaches GPU %u", g, gr->src,
				    (unsigned long long)gr->tokens, (unsigned long long)a,
				    (unsigned long long)b, d, gr->src);
	for (size_t f = f0; f < f1 && n < 2; f++)
		if (c->finals[f].lo <= a && a < c->finals[f].hi &&
		    (c->vmask[c->finals[f].tag] >> i & 1))
			hit[n++] = &c->finals[f];
	if (n == 1) /* the other count is src(g)'s own contribution */
		return fast_err_set(c->err, FAST_ECHECK,
				    "group %u (GPU %u, %llu tokens) bytes %llu..%llu: the contribution "
				    "of GPU %u is counted twice at GPU %u: it is its own, and step %u "
				    "transfer %u piece %u brings it again", g, gr->src,
				    (unsigned long long)gr->tokens, (unsigned long long)a,
				    (unsigned long long)b, d, gr->src, hit[0]->step, hit[0]->xfer,
				    hit[0]->piece);
	return fast_err_set(c->err, FAST_ECHECK,
			    "group %u (GPU %u, %llu tokens) bytes %llu..%llu: the contribution of "
			    "GPU %u is counted twice at GPU %u: by step %u transfer %u piece %u and "
			    "by step %u transfer %u piece %u", g, gr->src,
			    (unsigned long long)gr->tokens, (unsigned long long)a,
			    (unsigned long long)b, d, gr->src, hit[0]->step, hit[0]->xfer,
			    hit[0]->piece, hit[1] ? hit[1]->step : 0, hit[1] ? hit[1]->xfer : 0,
			    hit[1] ? hit[1]->piece : 0);
}

/* Combine: for every byte of g, the masks of the values src(g) receives,
 * with its own contribution when src(g) is in Dest(g), partition Dest(g).
 * A sweep over the start and end of every received value, counting each
 * contribution, per group. */
static int combine_deliveries(struct checker *c)
{
	const struct fast_matrix *m = c->m;
	struct event *ev = NULL;
	size_t i = 0, cap = 0;
	int rc = 0;

	if (c->nfinals > 1)
		qsort(c->finals, c->nfinals, sizeof *c->finals, cmp_final);
	for (uint32_t g = 0; g < m->ngroups && rc == 0; g++) {
		const struct fast_group *gr = &m->groups[g];
		uint64_t size = fast_group_bytes(m, g), at = 0;
		uint32_t cnt[FAST_GROUP_MAX_DESTS] = { 0 }, bad = gr->ndst;
		size_t f0 = i, n = 0, e = 0;
		int self = dest_pos(m, g, gr->src);

		for (; i < c->nfinals && c->finals[i].msg == g; i++)
			n++;
		if (self >= 0) {
			cnt[self] = 1;
			bad--;
		}
		if (2 * n > cap) {
			free(ev);
			cap = 2 * n;
			if (!(ev = fast_calloc(cap, sizeof *ev)))
				return oom(c);
		}
		for (size_t f = f0; f < i; f++) {
			ev[e++] = (struct event){ c->finals[f].lo, (uint32_t)f, +1 };
			ev[e++] = (struct event){ c->finals[f].hi, (uint32_t)f, -1 };
		}
		if (e > 1)
			qsort(ev, e, sizeof *ev, cmp_event);
		for (size_t k = 0; k <= e && rc == 0; k++) {
			uint64_t next = k < e ? ev[k].pos : size;
			if (next > at && bad) {
				for (uint32_t b = 0; b < gr->ndst; b++)
					if (cnt[b] != 1) {
						rc = partition_fail(c, g, b, cnt[b], at, next, f0, i);
						break;
					}
				break;
			}
			at = next;
			if (k == e)
				break;
			uint64_t mk = c->vmask[c->finals[ev[k].fin].tag];
			for (uint32_t b = 0; b < gr->ndst; b++) {
				if (!(mk >> b & 1))
					continue;
				bool was = cnt[b] == 1;
				cnt[b] = ev[k].delta > 0 ? cnt[b] + 1 : cnt[b] - 1;
				bad += was ? 1 : cnt[b] == 1 ? (uint32_t)-1 : 0;
			}
		}
	}
	free(ev);
	return rc;
}

/* The checker over a view of a plan of any kind. */
static int check_kind(const struct fast_plan_view *v, const struct fast_topo *topo,
		      const uint64_t *D, struct fast_err *err)
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
	c.D = D ? D : v->m ? v->m->bytes : NULL;
	c.ng = p->servers * p->gpus;
	c.G = p->gpus;
	c.err = err;
	if (c.kind != FAST_TRAFFIC_BYTES && !c.m)
		return fast_err_set(err, FAST_EINPUT, "check: a %s plan is checked against its "
				    "traffic's groups (open the view with the matrix)",
				    fast_traffic_kind_name(c.kind));
	if (c.kind == FAST_TRAFFIC_BYTES && !c.D)
		return fast_err_set(err, FAST_EINPUT, "check: no matrix to check the plan against");
	if (c.kind == FAST_TRAFFIC_COMBINE && p->nmasks) {
		if (FAST_GROW(c.vmask, c.cap_vmask, p->nmasks) < 0)
			return oom(&c);
		memcpy(c.vmask, p->masks, p->nmasks * sizeof *c.vmask);
		c.nvmask = p->nmasks;
	}
	rc = check_lanes(&c);
	if (rc == 0)
		rc = check_transfers(&c);
	if (rc == 0)
		rc = walk(&c);
	if (rc == 0)
		rc = c.kind == FAST_TRAFFIC_BYTES ? deliveries(&c)
		     : c.kind == FAST_TRAFFIC_DISPATCH ? dispatch_deliveries(&c)
						      : combine_deliveries(&c);
	fast_holds_free(&c.arr);
	free(c.recs);
	free(c.finals);
	free(c.vmask);
	return rc;
}

int fast_plan_check_view(const struct fast_plan_view *v, const struct fast_topo *topo,
			 const uint64_t *D, struct fast_err *err)
{
	return check_kind(v, topo, D, err);
}

int fast_plan_check(const struct fast_plan *p, const struct fast_topo *topo, const uint64_t *D,
		    struct fast_err *err)
{
	struct fast_plan_view v;
	int rc;

	if ((rc = fast_plan_view_open(&v, p, err)) < 0)
		return rc;
	rc = fast_plan_check_view(&v, topo, D, err);
	fast_plan_view_close(&v);
	return rc;
}

int fast_plan_check_matrix(const struct fast_plan *p, const struct fast_topo *topo,
			   const struct fast_matrix *m, uint32_t ng, struct fast_err *err)
{
	struct fast_plan_view v;
	int rc;

	if ((rc = fast_plan_view_open_m(&v, p, m, ng, err)) < 0)
		return rc;
	rc = fast_plan_check_view(&v, topo, m->bytes, err);
	fast_plan_view_close(&v);
	return rc;
}
