/*
 * prog_wave.c - one wave of the program builder's walk (prog.c has the
 * design: waves, holdings, staging, token values, passes): the holdings
 * store, what a value is to this rank (own, land), the values of combine
 * plans, a transfer chunk's fragments, and the sends, receives and sums a
 * wave emits.
 */
#include <stdlib.h>
#include <string.h>

#include "exec/prog_internal.h"

static bool tokens(const struct builder *b)
{
	return b->kind != FAST_TRAFFIC_BYTES;
}

/* The store's key of value (src, dst) (struct hold). */
uint64_t fast_prog_hkey(const struct builder *b, uint32_t src, uint32_t dst)
{
	if (b->kind == FAST_TRAFFIC_BYTES)
		return (uint64_t)src * b->ng + dst;
	return (uint64_t)src << 32 | dst;
}

static int add_hold(struct builder *b, const struct hold *h)
{
	uint32_t id;

	if (fast_holds_add(&b->held, fast_prog_hkey(b, h->src, h->dst), h->off, h->off + h->len,
			   &id) < 0 ||
	    FAST_GROW(b->at, b->cap_at, (size_t)id + 1) < 0)
		return FAST_ENOMEM;
	b->at[id] = h->at_recv ? (struct held_at){ h->off, NO_BLOCK, h->rmsg, b->wave, h->cls }
			       : (struct held_at){ h->soff, h->block, 0, b->wave, h->cls };
	return 0;
}

/* A block filled in the current wave; placed in the arena by place_blocks. */
static int new_block(struct builder *b, uint64_t size, uint32_t *id)
{
	struct block blk = { 0, size, b->wave, b->wave, b->prev_wave };

	if (PUSH(b->blocks, b->nblocks, b->cap_blocks, blk))
		return FAST_ENOMEM;
	*id = (uint32_t)b->nblocks - 1;
	return 0;
}

static struct fast_loc stage_loc(uint32_t block, uint64_t off)
{
	return (struct fast_loc){ LOC_STAGE, block, off };
}

/* --- values of combine plans ------------------------------------------------- */

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, c = *(const uint64_t *)y;

	return (a > c) - (a < c);
}

/* The id of a set of contributions: its position among the plan's distinct
 * masks (sorted), or after them for a sum no piece names (appended). */
static int val_id(struct builder *b, uint64_t mask, uint32_t *id)
{
	size_t lo = 0, hi = b->nsorted;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (b->vals[mid] < mask)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < b->nsorted && b->vals[lo] == mask) {
		*id = (uint32_t)lo;
		return 0;
	}
	for (size_t i = b->nsorted; i < b->nvals; i++)
		if (b->vals[i] == mask) {
			*id = (uint32_t)i;
			return 0;
		}
	if (PUSH(b->vals, b->nvals, b->cap_vals, mask))
		return FAST_ENOMEM;
	*id = (uint32_t)b->nvals - 1;
	return 0;
}

int fast_prog_values_init(struct builder *b)
{
	const struct fast_plan *p = b->p;

	b->vid = fast_calloc(p->nmasks ? p->nmasks : 1, sizeof *b->vid);
	b->vals = fast_calloc(p->nmasks ? p->nmasks : 1, sizeof *b->vals);
	if (!b->vid || !b->vals)
		return FAST_ENOMEM;
	b->cap_vals = p->nmasks ? p->nmasks : 1;
	memcpy(b->vals, p->masks, p->nmasks * sizeof *b->vals);
	qsort(b->vals, p->nmasks, sizeof *b->vals, cmp_u64);
	for (size_t i = 0; i < p->nmasks; i++)
		if (b->nvals == 0 || b->vals[b->nvals - 1] != b->vals[i])
			b->vals[b->nvals++] = b->vals[i];
	b->nsorted = b->nvals;
	for (size_t k = 0; k < p->nmasks; k++)
		if (val_id(b, p->masks[k], &b->vid[k]) < 0)
			return FAST_ENOMEM;
	return 0;
}

/* --- what a value is to this rank ------------------------------------------ */

/* Does this rank hold value (src, dst) from the start, in its send buffer
 * (message *msg there)?  Byte plans: its own messages; dispatch: the
 * groups it is the src of; combine: its own contribution. */
static bool own(const struct builder *b, uint32_t src, uint32_t dst, uint32_t *msg)
{
	switch (b->kind) {
	case FAST_TRAFFIC_BYTES:
		*msg = dst;
		return src == b->rank;
	case FAST_TRAFFIC_DISPATCH:
		*msg = src;
		return b->m->groups[src].src == b->rank;
	default:
		*msg = src;
		return b->dest_bit[src] >= 0 && b->vals[dst] == UINT64_C(1) << b->dest_bit[src];
	}
}

/* What becomes of bytes of value (src, dst) that arrive at this rank. */
enum { LAND_STAGE = 0, LAND_FINAL = 1, LAND_SUM = 2 };
static int land(const struct builder *b, uint32_t src, uint32_t dst, uint32_t *rmsg)
{
	switch (b->kind) {
	case FAST_TRAFFIC_BYTES:
		*rmsg = src;
		return dst == b->rank ? LAND_FINAL : LAND_STAGE;
	case FAST_TRAFFIC_DISPATCH:
		*rmsg = src;
		return b->dest_bit[src] >= 0 && b->m->groups[src].src != b->rank ? LAND_FINAL
										 : LAND_STAGE;
	default:
		*rmsg = src;
		return b->m->groups[src].src == b->rank ? LAND_SUM : LAND_STAGE;
	}
}

/* Fragment f arrives at this rank, in staging block blk at soff, or (blk
 * NO_BLOCK, only for LAND_FINAL) straight into the receive buffer: what
 * happens at the end of the wave is queued, final bytes are counted.  cls
 * is the class (prog.h) of reading it where it lands, in the rank's next
 * wave: FREE when a local copy brings it, UP or ALL when a scale-up or a
 * scale-out message does; ALL when it is read from where a post-copy
 * moves it. */
static int arrive(struct builder *b, const struct fast_piece *f, uint32_t blk, uint64_t soff,
		  uint32_t cls)
{
	uint32_t rmsg;
	int l = land(b, f->src, f->dst, &rmsg);
	struct hold h = { f->src, f->dst, f->off, f->len, soff, blk, POST_NONE, 1, rmsg, 0, cls };

	if (l == LAND_FINAL) {
		h.post = blk == NO_BLOCK ? POST_NONE : POST_COPY;
		if (h.post == POST_COPY && cls != FAST_FLIGHT_FREE)
			h.cls = FAST_FLIGHT_ALL; /* read from the receive buffer */
		if (b->kind == FAST_TRAFFIC_BYTES) {
			b->final_bytes[f->src] += f->len;
			if (b->final_wave[f->src] != b->wave || h.cls > b->final_cls[f->src])
				b->final_cls[f->src] = (uint8_t)h.cls;
			b->final_wave[f->src] = b->wave;
			h.keep = 0; /* read from the receive buffer by source_segs */
		} else {
			h.at_recv = 1; /* forwarded on from the receive buffer */
		}
	} else if (l == LAND_SUM) {
		h.post = POST_ADD;
		b->summed[f->src] += f->len * (uint64_t)__builtin_popcountll(b->vals[f->dst]);
	}
	if (h.post == POST_NONE && !h.keep)
		return 0;
	return PUSH(b->pending, b->npending, b->cap_pending, h);
}

/* --- program output -------------------------------------------------------- */

/* Copy c starts where l ends, on both sides. */
bool fast_prog_continues(const struct fast_pcopy *l, const struct fast_pcopy *c)
{
	return l->op == c->op && l->dst.kind == c->dst.kind && l->dst.msg == c->dst.msg &&
	       l->src.kind == c->src.kind && l->src.msg == c->src.msg &&
	       l->dst.off + l->len == c->dst.off && l->src.off + l->len == c->src.off;
}

static int emit_op(struct builder *b, uint32_t op, struct fast_loc dst, struct fast_loc src,
		   uint64_t len)
{
	struct fast_pcopy c = { dst, src, len, op };
	struct fast_prog *p = b->prog;
	size_t pre0 = p->waves[p->nwaves - 1].pre0;

	/* extend the previous copy of the same phase and class when both
	 * sides continue it */
	if (p->ncopies > b->copy_floor && fast_prog_continues(&p->copies[p->ncopies - 1], &c) &&
	    (p->ncopies - 1 < pre0 || b->ccls[p->ncopies - 1 - pre0] == b->cur_cls)) {
		p->copies[p->ncopies - 1].len += len;
		return 0;
	}
	if (PUSH(p->copies, p->ncopies, p->cap_copies, c))
		return FAST_ENOMEM;
	return fast_prog_note_copy(b, p->ncopies - 1);
}

static int emit_copy(struct builder *b, struct fast_loc dst, struct fast_loc src, uint64_t len)
{
	return emit_op(b, FAST_POP_COPY, dst, src, len);
}

/* --- fragments of a transfer chunk --------------------------------------- */

static uint64_t cut(uint64_t L, uint64_t c, uint64_t k)
{
	return (uint64_t)(((unsigned __int128)L * c) / k);
}

/* The length of the message piece pc is a range of, in *M, and the value
 * it names, in *f (its src and dst: a combine piece's mask index becomes
 * a value id).  FAST_EINPUT for a piece outside the traffic. */
static int piece_value(struct builder *b, const struct fast_piece *pc, uint64_t *M,
		       struct fast_piece *f)
{
	*f = *pc;
	if (b->kind == FAST_TRAFFIC_BYTES) {
		if (pc->src >= b->ng || pc->dst >= b->ng)
			return fast_err_set(b->err, FAST_EINPUT, "plan: piece of message %u->%u out of range",
					    pc->src, pc->dst);
		*M = b->D[(size_t)pc->src * b->ng + pc->dst];
	} else {
		if (pc->src >= b->m->ngroups)
			return fast_err_set(b->err, FAST_EINPUT,
					    "plan: piece of group %u, the traffic has %u groups", pc->src,
					    b->m->ngroups);
		if (b->kind == FAST_TRAFFIC_DISPATCH && pc->dst != 0)
			return fast_err_set(b->err, FAST_EINPUT,
					    "plan: dispatch piece of group %u with contributions %u (must be 0)",
					    pc->src, pc->dst);
		if (b->kind == FAST_TRAFFIC_COMBINE) {
			uint32_t nd = b->m->groups[pc->src].ndst;
			uint64_t mask = pc->dst < b->p->nmasks ? b->p->masks[pc->dst] : 0;
			if (mask == 0 || (nd < 64 && mask >> nd))
				return fast_err_set(b->err, FAST_EINPUT,
						    "plan: combine piece of group %u: mask %u is not a non-empty set of its %u destinations",
						    pc->src, pc->dst, nd);
			f->dst = b->vid[pc->dst];
		}
		*M = fast_group_bytes(b->m, pc->src);
	}
	if (pc->off + pc->len < pc->off || pc->off + pc->len > *M)
		return fast_err_set(b->err, FAST_EINPUT,
				    "plan does not match the traffic: piece [%llu, +%llu) of %s %u->%u, which has %llu bytes",
				    (unsigned long long)pc->off, (unsigned long long)pc->len,
				    tokens(b) ? "group" : "message", pc->src, pc->dst,
				    (unsigned long long)*M);
	return 0;
}

/* Fill b->frags with the value ranges of stream bytes [lo, hi) of
 * transfer x, clipped to pass j of `passes`.  Returns the bytes. */
static int fragments(struct builder *b, const struct fast_xfer *x, uint64_t lo, uint64_t hi,
		     uint32_t j, uint32_t passes, uint64_t *total)
{
	const struct fast_plan *p = b->p;
	uint64_t pos = 0, sum = 0;
	int rc;

	b->nfrags = 0;
	for (uint32_t i = 0; i < x->npieces && pos < hi; i++) {
		const struct fast_piece *pc = &p->pieces[x->piece0 + i];
		uint64_t a = pos > lo ? pos : lo, e = pos + pc->len < hi ? pos + pc->len : hi;
		uint64_t M, s0, s1, o0, o1;
		struct fast_piece f;

		if (a < e) {
			if ((rc = piece_value(b, pc, &M, &f)) < 0)
				return rc;
			o0 = pc->off + (a - pos);
			o1 = pc->off + (e - pos);
			s0 = cut(M, j, passes);
			s1 = cut(M, j + 1, passes);
			if (o0 < s0)
				o0 = s0;
			if (o1 > s1)
				o1 = s1;
			if (o0 < o1) {
				f.off = o0;
				f.len = o1 - o0;
				if (PUSH(b->frags, b->nfrags, b->cap_frags, f))
					return FAST_ENOMEM;
				sum += o1 - o0;
			}
		}
		pos += pc->len;
	}
	*total = sum;
	return 0;
}

/* Source segments of fragment f on this rank, appended to b->segs. */
static int add_seg(struct builder *b, struct fast_loc at, uint64_t len, uint32_t block)
{
	size_t n = b->nsegs;

	if (n > 0) {
		struct fast_loc *l = &b->segs[n - 1];
		if (l->kind == at.kind && l->msg == at.msg && l->off + b->seglen[n - 1] == at.off &&
		    b->seg_block[n - 1] == block) {
			b->seglen[n - 1] += len;
			return 0;
		}
	}
	if (FAST_GROW(b->segs, b->cap_segs, n + 1) ||
	    FAST_GROW(b->seglen, b->cap_seglen, n + 1) ||
	    FAST_GROW(b->seg_block, b->cap_seg_block, n + 1))
		return FAST_ENOMEM;
	b->segs[n] = at;
	b->seglen[n] = len;
	b->seg_block[n] = block;
	b->nsegs = n + 1;
	return 0;
}

static int source_segs(struct builder *b, const struct fast_piece *f, uint32_t step)
{
	uint32_t r = b->rank, msg;

	if (own(b, f->src, f->dst, &msg))
		return add_seg(b, (struct fast_loc){ LOC_SEND, msg, f->off }, f->len, NO_BLOCK);
	if (b->kind == FAST_TRAFFIC_BYTES && f->dst == r) {
		uint32_t c = fast_prog_read_cls(b, b->final_wave[f->src], b->final_cls[f->src]);
		b->seg_cls = c > b->seg_cls ? c : b->seg_cls;
		return add_seg(b, (struct fast_loc){ LOC_RECV, f->src, f->off }, f->len, NO_BLOCK);
	}
	/* the newest holding of each byte: every holding stays readable, its
	 * block lives until its last reader */
	for (uint64_t pos = f->off; pos < f->off + f->len;) {
		uint32_t id = fast_holds_find(&b->held, fast_prog_hkey(b, f->src, f->dst), pos);
		const struct fast_hold *h;
		const struct held_at *at;
		uint64_t end, n;
		int rc;
		if (id == FAST_HOLDS_END) {
			if (b->kind == FAST_TRAFFIC_COMBINE)
				return fast_err_set(b->err, FAST_ECHECK,
						    "plan: step %u: GPU %u sends byte %llu of group %u with contributions %#llx, which it does not hold then",
						    step, r, (unsigned long long)pos, f->src,
						    (unsigned long long)b->vals[f->dst]);
			if (tokens(b))
				return fast_err_set(b->err, FAST_ECHECK,
						    "plan: step %u: GPU %u sends byte %llu of group %u, which it does not hold then",
						    step, r, (unsigned long long)pos, f->src);
			return fast_err_set(b->err, FAST_ECHECK,
					    "plan: step %u: GPU %u sends byte %llu of message %u->%u, which it does not hold then",
					    step, r, (unsigned long long)pos, f->src, f->dst);
		}
		h = &b->held.recs[id];
		at = &b->at[id];
		{
			uint32_t c = fast_prog_read_cls(b, at->wave, at->cls);
			b->seg_cls = c > b->seg_cls ? c : b->seg_cls;
		}
		end = h->hi < f->off + f->len ? h->hi : f->off + f->len;
		n = end - pos;
		if (at->block == NO_BLOCK)
			rc = add_seg(b, (struct fast_loc){ LOC_RECV, at->rmsg, at->soff + (pos - h->lo) }, n,
				     NO_BLOCK);
		else
			rc = add_seg(b, stage_loc(at->block, at->soff + (pos - h->lo)), n, at->block);
		if (rc < 0)
			return FAST_ENOMEM;
		pos = end;
	}
	return 0;
}

/* The blocks the source segments read live at least to the end of this wave. */
static void mark_read(struct builder *b)
{
	for (size_t i = 0; i < b->nsegs; i++)
		if (b->seg_block[i] != NO_BLOCK)
			b->blocks[b->seg_block[i]].last = b->wave;
}

/* --- one wave ---------------------------------------------------------------- */

static uint32_t server_of(const struct builder *b, uint32_t g)
{
	return g / b->gpus;
}

/* Fragments of DIRECT_MIN bytes or more travel as messages of their own,
 * straight from where the sender holds them into where the receiver keeps
 * them (no packing, no unpacking); smaller ones are packed into one message
 * per transfer chunk.  Both ends see the same fragments, so they split
 * alike: the packed message first, then the large fragments in order. */
#define DIRECT_MIN (UINT64_C(32) << 10)

static int split_big(struct builder *b, uint64_t *total)
{
	size_t k = 0;

	b->nbig = 0;
	for (size_t i = 0; i < b->nfrags; i++) {
		if (b->frags[i].len >= DIRECT_MIN) {
			if (PUSH(b->big, b->nbig, b->cap_big, b->frags[i]))
				return FAST_ENOMEM;
			*total -= b->frags[i].len;
		} else {
			b->frags[k++] = b->frags[i];
		}
	}
	b->nfrags = k;
	return 0;
}

/* One message to `to` from the source segments in b->segs (total bytes):
 * sent in place when they are one segment, packed into a block otherwise. */
static int send_segs(struct builder *b, uint32_t to, uint64_t total)
{
	struct fast_pmsg m = { to, server_of(b, to) != server_of(b, b->rank), b->segs[0], total };

	b->cur_cls = b->seg_cls;
	if (b->nsegs > 1) {
		uint32_t blk;
		uint64_t done = 0;
		if (new_block(b, total, &blk))
			return FAST_ENOMEM;
		m.at = stage_loc(blk, 0);
		for (size_t s = 0; s < b->nsegs; s++) {
			struct fast_loc d = m.at;
			d.off += done;
			if (emit_copy(b, d, b->segs[s], b->seglen[s]))
				return FAST_ENOMEM;
			done += b->seglen[s];
		}
	}
	if (PUSH(b->prog->sends, b->prog->nsends, b->prog->cap_sends, m) ||
	    fast_prog_note_send(b, b->prog->nsends - 1))
		return FAST_ENOMEM;
	mark_read(b);
	return 0;
}

/* The sends (and local copies) of this rank in transfer x, chunk [lo, hi). */
static int do_send(struct builder *b, uint32_t step, const struct fast_xfer *x, uint64_t lo,
		   uint64_t hi, uint32_t j, uint32_t passes)
{
	uint64_t total;
	int rc;

	if ((rc = fragments(b, x, lo, hi, j, passes, &total)) < 0)
		return rc;
	if (total == 0)
		return 0;
	if (x->to == b->rank) {
		/* a local transfer: copy each fragment to where it belongs now */
		for (size_t i = 0; i < b->nfrags; i++) {
			struct fast_piece f = b->frags[i];
			struct fast_loc dst;
			uint64_t done = 0;
			uint32_t blk = NO_BLOCK, rmsg;
			b->nsegs = 0;
			b->seg_cls = FAST_FLIGHT_FREE;
			if ((rc = source_segs(b, &f, step)) < 0)
				return rc;
			b->cur_cls = b->seg_cls;
			if (land(b, f.src, f.dst, &rmsg) == LAND_FINAL) {
				dst = (struct fast_loc){ LOC_RECV, rmsg, f.off };
			} else {
				if (new_block(b, f.len, &blk))
					return FAST_ENOMEM;
				dst = stage_loc(blk, 0);
			}
			if (arrive(b, &f, blk, 0, FAST_FLIGHT_FREE))
				return FAST_ENOMEM;
			for (size_t s = 0; s < b->nsegs; s++) {
				struct fast_loc d = dst;
				d.off += done;
				if (emit_copy(b, d, b->segs[s], b->seglen[s]))
					return FAST_ENOMEM;
				done += b->seglen[s];
			}
			mark_read(b);
		}
		return 0;
	}
	if ((rc = split_big(b, &total)) < 0)
		return rc;
	if (total > 0) {
		b->nsegs = 0;
		b->seg_cls = FAST_FLIGHT_FREE;
		for (size_t i = 0; i < b->nfrags; i++)
			if ((rc = source_segs(b, &b->frags[i], step)) < 0)
				return rc;
		if ((rc = send_segs(b, x->to, total)) < 0)
			return rc;
	}
	for (size_t i = 0; i < b->nbig; i++) {
		b->nsegs = 0;
		b->seg_cls = FAST_FLIGHT_FREE;
		if ((rc = source_segs(b, &b->big[i], step)) < 0 ||
		    (rc = send_segs(b, x->to, b->big[i].len)) < 0)
			return rc;
	}
	return 0;
}

/* The packed message of the small fragments in b->frags (total bytes). */
/* The class of reading, in the rank's next wave, what x brings. */
static uint32_t recv_cls(const struct builder *b, const struct fast_xfer *x)
{
	return server_of(b, x->from) != server_of(b, b->rank) ? FAST_FLIGHT_ALL : FAST_FLIGHT_UP;
}

static int recv_small(struct builder *b, const struct fast_xfer *x, uint64_t total)
{
	uint64_t pos = 0;
	bool direct = true;
	uint32_t blk, rmsg = 0, prev = 0;
	struct fast_pmsg m;

	for (size_t i = 0; i < b->nfrags && direct; i++) {
		const struct fast_piece *f = &b->frags[i];
		if (land(b, f->src, f->dst, &rmsg) != LAND_FINAL)
			direct = false;
		else if (i > 0 && (rmsg != prev || f->off != b->frags[i - 1].off + b->frags[i - 1].len))
			direct = false;
		prev = rmsg;
	}
	m.peer = x->from;
	m.out = server_of(b, x->from) != server_of(b, b->rank);
	m.len = total;
	if (direct) {
		land(b, b->frags[0].src, b->frags[0].dst, &rmsg);
		m.at = (struct fast_loc){ LOC_RECV, rmsg, b->frags[0].off };
		for (size_t i = 0; i < b->nfrags; i++)
			if (arrive(b, &b->frags[i], NO_BLOCK, 0, recv_cls(b, x)))
				return FAST_ENOMEM;
		return PUSH(b->prog->recvs, b->prog->nrecvs, b->prog->cap_recvs, m);
	}
	if (new_block(b, total, &blk))
		return FAST_ENOMEM;
	m.at = stage_loc(blk, 0);
	if (PUSH(b->prog->recvs, b->prog->nrecvs, b->prog->cap_recvs, m))
		return FAST_ENOMEM;
	/* post-copies are emitted after every receive of the wave */
	for (size_t i = 0; i < b->nfrags; i++) {
		if (arrive(b, &b->frags[i], blk, pos, recv_cls(b, x)))
			return FAST_ENOMEM;
		pos += b->frags[i].len;
	}
	return 0;
}

static int do_recv(struct builder *b, const struct fast_xfer *x, uint64_t lo, uint64_t hi,
		   uint32_t j, uint32_t passes)
{
	uint64_t total;
	int rc;

	if ((rc = fragments(b, x, lo, hi, j, passes, &total)) < 0 ||
	    (rc = split_big(b, &total)) < 0)
		return rc;
	if (total > 0 && (rc = recv_small(b, x, total)) < 0)
		return rc;
	for (size_t i = 0; i < b->nbig; i++) {
		const struct fast_piece *f = &b->big[i];
		uint32_t blk = NO_BLOCK, rmsg;
		struct fast_pmsg m = { x->from, server_of(b, x->from) != server_of(b, b->rank),
				       { LOC_RECV, 0, f->off }, f->len };
		if (land(b, f->src, f->dst, &rmsg) == LAND_FINAL) {
			m.at.msg = rmsg;
		} else {
			if (new_block(b, f->len, &blk))
				return FAST_ENOMEM;
			m.at = stage_loc(blk, 0);
		}
		if (arrive(b, f, blk, 0, recv_cls(b, x)) ||
		    PUSH(b->prog->recvs, b->prog->nrecvs, b->prog->cap_recvs, m))
			return FAST_ENOMEM;
	}
	return 0;
}

/* The sum of REDUCE transfer x's inputs (all held here, one group, one
 * range, disjoint contributions), chunk c of k, clipped to pass j: a new
 * staging block, the first input copied into it and the others added,
 * held with the union of the contributions from the end of the wave. */
static int do_reduce(struct builder *b, uint32_t step, const struct fast_xfer *x, uint32_t c,
		     uint32_t k, uint32_t j, uint32_t passes)
{
	const struct fast_plan *p = b->p;
	struct fast_piece first, f;
	uint64_t M, lo, hi, mask = 0;
	uint32_t blk;
	int rc;

	if (b->kind != FAST_TRAFFIC_COMBINE)
		return fast_err_set(b->err, FAST_EINPUT, "plan: step %u: a reduction outside a combine plan",
				    step);
	if (x->from != x->to || x->npieces == 0)
		return fast_err_set(b->err, FAST_EINPUT,
				    "plan: step %u: a reduction must sum on one GPU (transfer %u -> %u)",
				    step, x->from, x->to);
	if ((rc = piece_value(b, &p->pieces[x->piece0], &M, &first)) < 0)
		return rc;
	lo = first.off + cut(first.len, c, k);
	hi = first.off + cut(first.len, c + 1, k);
	if (lo < cut(M, j, passes))
		lo = cut(M, j, passes);
	if (hi > cut(M, j + 1, passes))
		hi = cut(M, j + 1, passes);
	if (lo >= hi)
		return 0;
	if (new_block(b, hi - lo, &blk))
		return FAST_ENOMEM;
	/* every op of the sum in one class: the latest of its inputs' */
	b->seg_cls = FAST_FLIGHT_FREE;
	for (uint32_t i = 0; i < x->npieces; i++) {
		if ((rc = piece_value(b, &p->pieces[x->piece0 + i], &M, &f)) < 0)
			return rc;
		f.off = lo;
		f.len = hi - lo;
		b->nsegs = 0;
		if ((rc = source_segs(b, &f, step)) < 0)
			return rc;
	}
	b->cur_cls = b->seg_cls;
	for (uint32_t i = 0; i < x->npieces; i++) {
		uint64_t done = 0;
		if ((rc = piece_value(b, &p->pieces[x->piece0 + i], &M, &f)) < 0)
			return rc;
		if (f.src != first.src || f.off != first.off || f.len != first.len ||
		    (mask & b->vals[f.dst]))
			return fast_err_set(b->err, FAST_EINPUT,
					    "plan: step %u: reduction on GPU %u: input %u is not the same range of group %u with other contributions",
					    step, x->from, i, first.src);
		mask |= b->vals[f.dst];
		f.off = lo;
		f.len = hi - lo;
		b->nsegs = 0;
		if ((rc = source_segs(b, &f, step)) < 0)
			return rc;
		for (size_t s = 0; s < b->nsegs; s++) {
			if (emit_op(b, i ? FAST_POP_ADD : FAST_POP_COPY, stage_loc(blk, done), b->segs[s],
				    b->seglen[s]))
				return FAST_ENOMEM;
			done += b->seglen[s];
		}
		mark_read(b);
	}
	{
		struct hold h = { first.src, 0, lo, hi - lo, 0, blk, POST_NONE, 1, 0, 0, FAST_FLIGHT_FREE };
		if (val_id(b, mask, &h.dst) || PUSH(b->pending, b->npending, b->cap_pending, h))
			return FAST_ENOMEM;
	}
	return 0;
}

int fast_prog_run_wave(struct builder *b, const struct node *nodes, size_t n, uint32_t passes,
		       uint32_t j)
{
	const struct fast_plan *p = b->p;
	struct fast_prog *g = b->prog;
	struct fast_pwave w = { 0 };
	int rc;

	w.pre0 = (uint32_t)g->ncopies;
	w.send0 = (uint32_t)g->nsends;
	w.recv0 = (uint32_t)g->nrecvs;
	if (PUSH(g->waves, g->nwaves, g->cap_waves, w))
		return FAST_ENOMEM;
	b->npending = 0;
	b->copy_floor = g->ncopies;
	for (int phase = 0; phase < 2; phase++) {
		for (size_t i = 0; i < n; i++) {
			const struct fast_step *st = &p->steps[nodes[i].step];
			uint32_t k = passes > 1 || st->chunks == 0 ? 1 : st->chunks;
			for (uint32_t t = 0; t < st->nxfers; t++) {
				const struct fast_xfer *x = &p->xfers[st->xfer0 + t];
				uint64_t lo = cut(x->bytes, nodes[i].chunk, k);
				uint64_t hi = cut(x->bytes, nodes[i].chunk + 1, k);
				if (st->kind == FAST_STEP_REDUCE) {
					if (phase == 0 && x->from == b->rank &&
					    (rc = do_reduce(b, nodes[i].step, x, nodes[i].chunk, k, j, passes)) < 0)
						return rc;
					continue;
				}
				if (lo == hi)
					continue;
				if (phase == 0 && x->from == b->rank)
					rc = do_send(b, nodes[i].step, x, lo, hi, j, passes);
				else if (phase == 1 && x->to == b->rank && x->from != b->rank)
					rc = do_recv(b, x, lo, hi, j, passes);
				else
					continue;
				if (rc < 0)
					return rc;
			}
		}
	}
	g->waves[g->nwaves - 1].npre = (uint32_t)(g->ncopies - w.pre0);
	g->waves[g->nwaves - 1].nsend = (uint32_t)(g->nsends - w.send0);
	g->waves[g->nwaves - 1].nrecv = (uint32_t)(g->nrecvs - w.recv0);
	if ((rc = fast_prog_order_wave(b, &g->waves[g->nwaves - 1])) < 0)
		return rc;
	g->waves[g->nwaves - 1].post0 = (uint32_t)g->ncopies;
	b->copy_floor = g->ncopies;
	b->cur_cls = FAST_FLIGHT_ALL;
	/* post-copies of final bytes received into staging, sums into the
	 * result; new holdings */
	for (size_t i = 0; i < b->npending; i++) {
		struct hold *h = &b->pending[i];
		if (h->post != POST_NONE &&
		    emit_op(b, h->post == POST_ADD ? FAST_POP_ADD : FAST_POP_COPY,
			    (struct fast_loc){ LOC_RECV, h->rmsg, h->off }, stage_loc(h->block, h->soff),
			    h->len))
			return FAST_ENOMEM;
		if (h->keep && add_hold(b, h))
			return FAST_ENOMEM;
	}
	g->waves[g->nwaves - 1].npost = (uint32_t)(g->ncopies - g->waves[g->nwaves - 1].post0);
	/* drop a wave in which this rank does nothing */
	{
		struct fast_pwave *l = &g->waves[g->nwaves - 1];
		if (!l->npre && !l->nsend && !l->nrecv && !l->npost)
			g->nwaves--;
		else
			b->prev_wave = b->wave;
	}
	return 0;
}

