/*
 * prog.c - turn a plan's explicit form into one rank's program (see exec.h):
 * waves of copies, sends and receives over the send buffer, the receive
 * buffer and a staging arena.  Pure computation: no MPI, no device.
 *
 * Waves.  A node is (step, chunk).  Its level is one more than the largest
 * level of what it waits for (chunk c of a pipelined dependency, every
 * chunk of a plain one), and never below the level of the chunk before it
 * in the same step.  Nodes run in (level, step id, chunk) order; all ranks
 * compute the same order, so both ends of a message agree on its wave and
 * on its position among the messages of the same pair.
 *
 * Holdings.  While walking the waves the builder tracks where every byte
 * this rank holds lives: its own messages in the send buffer, bytes that
 * reached their destination in the receive buffer, bytes in transit in
 * staging blocks.  Within a wave, sends read only what was held when the
 * wave began; receives become holdings when it ends.  A rank asked to send
 * bytes it does not hold is a plan error (FAST_ECHECK).
 *
 * Staging.  A received chunk whose bytes are all final and contiguous goes
 * straight into the receive buffer; otherwise it lands in a staging block
 * (final bytes are then copied out).  A block lives from the wave it is
 * filled in until the end of the last wave that reads it, in dependency
 * (wave) order: a relay may forward the same bytes several times (a spare
 * copy, then the real one; token replication), and bytes it receives but
 * never forwards free their block at the end of the wave they arrive in.
 * Pack blocks (a send gathered from several places) live for their wave.
 * While walking the waves, staging locations name their block (loc.msg)
 * and an offset in it; when the walk is done every block's lifetime is
 * known, blocks are placed first fit with coalescing in the order the walk
 * made them (the frees of a wave before the next wave's blocks), and the
 * locations are rewritten to arena offsets.  The arena is the high-water
 * mark.
 *
 * Token plans (prog.h, fast_prog_build_tokens).  A value is (src, dst):
 * message D[src][dst] of a byte plan, group src of a dispatch plan (dst
 * 0), group src with the contributions of value id dst of a combine plan
 * (the plan's distinct masks, sorted, then the sums no piece names).  What
 * a value is to this rank decides everything else: own() (held from the
 * start in the send buffer) and land() (where arriving bytes go: final
 * into the receive buffer, held there for forwarding when a dispatch
 * destination relays them; summed into the result at a combine src; else
 * staging).  A REDUCE transfer is a new staging block: its first input
 * copied, the others added.
 *
 * Passes.  With passes = k > 1 the plan runs k times, pass j on the slice
 * [floor(j*M/k), floor((j+1)*M/k)) of every message of M bytes, chunks
 * merged (a chunk boundary inside a slice has no meaning), one pass after
 * the other: the staging arena shrinks roughly k-fold.
 */
#include <stdlib.h>
#include <string.h>

#include "exec/prog.h"
#include "lib/holds.h"

#define ALIGN 64u

/* --- growable arrays (common.h) ------------------------------------------- */

#define PUSH(arr, n, cap, val)                                          \
	(FAST_GROW(arr, cap, (n) + 1) ? FAST_ENOMEM : ((arr)[(n)++] = (val), 0))

/* --- staging allocator ------------------------------------------------------ */

struct span {
	uint64_t off, len;
};
struct alloc {
	struct span *free; size_t nfree, cap_free;
	uint64_t top, high;
};

static int arena_alloc(struct alloc *a, uint64_t n, uint64_t *off)
{
	n = (n + ALIGN - 1) / ALIGN * ALIGN;
	for (size_t i = 0; i < a->nfree; i++) {
		if (a->free[i].len >= n) {
			*off = a->free[i].off;
			a->free[i].off += n;
			a->free[i].len -= n;
			if (a->free[i].len == 0) {
				memmove(&a->free[i], &a->free[i + 1], (a->nfree - i - 1) * sizeof *a->free);
				a->nfree--;
			}
			return 0;
		}
	}
	*off = a->top;
	a->top += n;
	if (a->top > a->high)
		a->high = a->top;
	return 0;
}

static int arena_free(struct alloc *a, uint64_t off, uint64_t n)
{
	size_t i;

	n = (n + ALIGN - 1) / ALIGN * ALIGN;
	for (i = 0; i < a->nfree && a->free[i].off < off; i++)
		;
	if (FAST_GROW(a->free, a->cap_free, a->nfree + 1))
		return FAST_ENOMEM;
	memmove(&a->free[i + 1], &a->free[i], (a->nfree - i) * sizeof *a->free);
	a->free[i] = (struct span){ off, n };
	a->nfree++;
	/* coalesce with the next, then the previous */
	if (i + 1 < a->nfree && a->free[i].off + a->free[i].len == a->free[i + 1].off) {
		a->free[i].len += a->free[i + 1].len;
		memmove(&a->free[i + 1], &a->free[i + 2], (a->nfree - i - 2) * sizeof *a->free);
		a->nfree--;
	}
	if (i > 0 && a->free[i - 1].off + a->free[i - 1].len == a->free[i].off) {
		a->free[i - 1].len += a->free[i].len;
		memmove(&a->free[i], &a->free[i + 1], (a->nfree - i - 1) * sizeof *a->free);
		a->nfree--;
		i--;
	}
	/* give the last span back to the top */
	if (i == a->nfree - 1 && a->free[i].off + a->free[i].len == a->top) {
		a->top = a->free[i].off;
		a->nfree--;
	}
	return 0;
}

/* --- holdings ------------------------------------------------------------------ */

struct block {
	uint64_t off, size;
	uint64_t born, last; /* waves (over all passes): filled, last read */
};

#define NO_BLOCK UINT32_MAX

/* What happens to bytes that arrived, at the end of their wave. */
enum { POST_NONE = 0, POST_COPY = 1, POST_ADD = 2 };

/* Bytes arriving in a wave.  (src, dst) name the value: message D[src][dst]
 * (byte plans), group src (dispatch, dst 0), group src with the
 * contributions of value id dst (combine, builder.vals). */
struct hold {
	uint32_t src, dst;
	uint64_t off, len;   /* message range */
	uint64_t soff;       /* where it starts in its block */
	uint32_t block;      /* NO_BLOCK: received straight into the receive buffer */
	uint32_t post;       /* POST_*: copied out of staging into / summed into rmsg */
	uint32_t keep;       /* 1: becomes a holding (readable by later sends) */
	uint32_t rmsg;       /* receive-buffer message of post and of a holding there */
	uint32_t at_recv;    /* the holding is the receive buffer's copy */
};

/* Where a holding (a record of the store, by id) lives: its block and
 * where its first byte is in it, or (block NO_BLOCK) the receive buffer's
 * message rmsg at offset soff. */
struct held_at {
	uint64_t soff;
	uint32_t block, rmsg;
};

struct builder {
	const struct fast_plan *p;
	const uint64_t *D;            /* byte plans */
	const struct fast_matrix *m;  /* token plans */
	enum fast_traffic_kind kind;
	uint32_t rank, ng, gpus;
	struct fast_prog *prog;
	struct alloc arena;
	struct block *blocks; size_t nblocks, cap_blocks;
	struct fast_holds held;  /* value ranges held, keyed by hkey() */
	struct held_at *at; size_t cap_at;
	struct hold *pending; size_t npending, cap_pending;
	uint64_t wave;         /* the wave being walked, counted over passes */
	uint64_t *final_bytes; /* byte plans, per src: bytes that reached this rank as final */
	/* token plans */
	int32_t *dest_bit;     /* per group: this rank's index in Dest(g), -1 if none */
	uint64_t *summed;      /* combine, per group at its src: bytes x contributions arrived */
	uint32_t *vid;         /* combine: plan mask index -> value id */
	uint64_t *vals; size_t nvals, nsorted, cap_vals; /* combine: distinct masks, sorted prefix */
	/* scratch */
	struct fast_piece *frags; size_t nfrags, cap_frags;
	struct fast_piece *big; size_t nbig, cap_big;
	struct fast_loc *segs; uint64_t *seglen; size_t nsegs, cap_segs, cap_seglen;
	uint32_t *seg_block;     size_t cap_seg_block;
	size_t copy_floor;       /* first copy emit_copy may extend */
	struct fast_err *err;
};

static bool tokens(const struct builder *b)
{
	return b->kind != FAST_TRAFFIC_BYTES;
}

/* The store's key of value (src, dst) (struct hold). */
static uint64_t hkey(const struct builder *b, uint32_t src, uint32_t dst)
{
	if (b->kind == FAST_TRAFFIC_BYTES)
		return (uint64_t)src * b->ng + dst;
	return (uint64_t)src << 32 | dst;
}

static int add_hold(struct builder *b, const struct hold *h)
{
	uint32_t id;

	if (fast_holds_add(&b->held, hkey(b, h->src, h->dst), h->off, h->off + h->len, &id) < 0 ||
	    FAST_GROW(b->at, b->cap_at, (size_t)id + 1) < 0)
		return FAST_ENOMEM;
	b->at[id] = h->at_recv ? (struct held_at){ h->off, NO_BLOCK, h->rmsg }
			       : (struct held_at){ h->soff, h->block, 0 };
	return 0;
}

/* A block filled in the current wave; placed in the arena by place_blocks. */
static int new_block(struct builder *b, uint64_t size, uint32_t *id)
{
	struct block blk = { 0, size, b->wave, b->wave };

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

static int values_init(struct builder *b)
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
 * happens at the end of the wave is queued, final bytes are counted. */
static int arrive(struct builder *b, const struct fast_piece *f, uint32_t blk, uint64_t soff)
{
	uint32_t rmsg;
	int l = land(b, f->src, f->dst, &rmsg);
	struct hold h = { f->src, f->dst, f->off, f->len, soff, blk, POST_NONE, 1, rmsg, 0 };

	if (l == LAND_FINAL) {
		h.post = blk == NO_BLOCK ? POST_NONE : POST_COPY;
		if (b->kind == FAST_TRAFFIC_BYTES) {
			b->final_bytes[f->src] += f->len;
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
static bool continues(const struct fast_pcopy *l, const struct fast_pcopy *c)
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


	/* extend the previous copy of the same phase when both sides continue it */
	if (p->ncopies > b->copy_floor && continues(&p->copies[p->ncopies - 1], &c)) {
		p->copies[p->ncopies - 1].len += len;
		return 0;
	}
	return PUSH(p->copies, p->ncopies, p->cap_copies, c);
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
	if (b->kind == FAST_TRAFFIC_BYTES && f->dst == r)
		return add_seg(b, (struct fast_loc){ LOC_RECV, f->src, f->off }, f->len, NO_BLOCK);
	/* the newest holding of each byte: every holding stays readable, its
	 * block lives until its last reader */
	for (uint64_t pos = f->off; pos < f->off + f->len;) {
		uint32_t id = fast_holds_find(&b->held, hkey(b, f->src, f->dst), pos);
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

struct node {
	uint32_t step, chunk;
};

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
	if (PUSH(b->prog->sends, b->prog->nsends, b->prog->cap_sends, m))
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
			if ((rc = source_segs(b, &f, step)) < 0)
				return rc;
			if (land(b, f.src, f.dst, &rmsg) == LAND_FINAL) {
				dst = (struct fast_loc){ LOC_RECV, rmsg, f.off };
			} else {
				if (new_block(b, f.len, &blk))
					return FAST_ENOMEM;
				dst = stage_loc(blk, 0);
			}
			if (arrive(b, &f, blk, 0))
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
		for (size_t i = 0; i < b->nfrags; i++)
			if ((rc = source_segs(b, &b->frags[i], step)) < 0)
				return rc;
		if ((rc = send_segs(b, x->to, total)) < 0)
			return rc;
	}
	for (size_t i = 0; i < b->nbig; i++) {
		b->nsegs = 0;
		if ((rc = source_segs(b, &b->big[i], step)) < 0 ||
		    (rc = send_segs(b, x->to, b->big[i].len)) < 0)
			return rc;
	}
	return 0;
}

/* The packed message of the small fragments in b->frags (total bytes). */
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
			if (arrive(b, &b->frags[i], NO_BLOCK, 0))
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
		if (arrive(b, &b->frags[i], blk, pos))
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
		if (arrive(b, f, blk, 0) ||
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
		struct hold h = { first.src, 0, lo, hi - lo, 0, blk, POST_NONE, 1, 0, 0 };
		if (val_id(b, mask, &h.dst) || PUSH(b->pending, b->npending, b->cap_pending, h))
			return FAST_ENOMEM;
	}
	return 0;
}

static int run_wave(struct builder *b, const struct node *nodes, size_t n, uint32_t passes,
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
	g->waves[g->nwaves - 1].post0 = (uint32_t)g->ncopies;
	b->copy_floor = g->ncopies;
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
	}
	return 0;
}

/* --- levels ------------------------------------------------------------------ */

static int order_nodes(const struct fast_plan *p, uint32_t passes, struct node **out_nodes,
		       size_t *out_n, size_t **out_wave0, uint32_t *out_levels, struct fast_err *err)
{
	size_t nsteps = p->nsteps, nnodes = 0;
	uint32_t *order = NULL, *maxlev = NULL, levels = 0;
	size_t *base = NULL, *lev = NULL, *count = NULL, *wave0 = NULL;
	struct node *nodes = NULL;
	int rc = FAST_ENOMEM;

	order = fast_calloc(nsteps ? nsteps : 1, sizeof *order);
	maxlev = fast_calloc(nsteps ? nsteps : 1, sizeof *maxlev);
	base = fast_calloc(nsteps + 1, sizeof *base);
	if (!order || !maxlev || !base)
		goto out;
	for (size_t s = 0; s < nsteps; s++)
		base[s + 1] = base[s] + (passes > 1 ? 1 : p->steps[s].chunks ? p->steps[s].chunks : 1);
	nnodes = base[nsteps];
	lev = fast_calloc(nnodes ? nnodes : 1, sizeof *lev);
	if (!lev)
		goto out;
	if ((rc = fast_plan_topo_order(p, order, err)) < 0)
		goto out;
	for (size_t i = 0; i < nsteps; i++) {
		uint32_t s = order[i];
		const struct fast_step *st = &p->steps[s];
		uint32_t k = (uint32_t)(base[s + 1] - base[s]);
		for (uint32_t c = 0; c < k; c++) {
			size_t L = c > 0 ? lev[base[s] + c - 1] : 0;
			for (uint32_t d = 0; d < st->ndeps; d++) {
				const struct fast_dep *dp = &p->deps[st->dep0 + d];
				uint32_t dk = (uint32_t)(base[dp->step + 1] - base[dp->step]);
				size_t need;
				if (dp->pipelined && passes == 1 && dk == k)
					need = lev[base[dp->step] + c] + 1;
				else
					need = (size_t)maxlev[dp->step] + 1;
				if (need > L)
					L = need;
			}
			lev[base[s] + c] = L;
			if (L > maxlev[s])
				maxlev[s] = (uint32_t)L;
			if (L + 1 > levels)
				levels = (uint32_t)(L + 1);
		}
	}
	rc = FAST_ENOMEM;
	count = fast_calloc((size_t)levels + 1, sizeof *count);
	wave0 = fast_calloc((size_t)levels + 1, sizeof *wave0);
	nodes = fast_calloc(nnodes ? nnodes : 1, sizeof *nodes);
	if (!count || !wave0 || !nodes)
		goto out;
	for (size_t i = 0; i < nnodes; i++)
		count[lev[i]]++;
	for (uint32_t l = 0; l < levels; l++)
		wave0[l + 1] = wave0[l] + count[l];
	memcpy(count, wave0, ((size_t)levels + 1) * sizeof *count);
	for (size_t s = 0; s < nsteps; s++)
		for (size_t c = 0; c < base[s + 1] - base[s]; c++)
			nodes[count[lev[base[s] + c]]++] = (struct node){ (uint32_t)s, (uint32_t)c };
	*out_nodes = nodes;
	*out_n = nnodes;
	*out_wave0 = wave0;
	*out_levels = levels;
	nodes = NULL;
	wave0 = NULL;
	rc = 0;
out:
	if (rc == FAST_ENOMEM && err && !err->msg[0])
		fast_err_set(err, FAST_ENOMEM, "executor: out of memory ordering the plan");
	free(order);
	free(maxlev);
	free(base);
	free(lev);
	free(count);
	free(wave0);
	free(nodes);
	return rc;
}

/* --- placing the staging blocks ------------------------------------------------ */

static void relocate(const struct builder *b, struct fast_loc *l)
{
	if (l->kind == LOC_STAGE) {
		l->off += b->blocks[l->msg].off;
		l->msg = 0;
	}
}

/* Join the copies of a phase that continue each other now that staging
 * locations are arena offsets (while walking, only copies within one block
 * could be seen to continue).  The waves' copy ranges tile prog->copies in
 * order, so the array is compacted in place. */
static void merge_copies(struct fast_prog *g)
{
	size_t k = 0;

	for (size_t w = 0; w < g->nwaves; w++) {
		struct fast_pwave *wv = &g->waves[w];
		uint32_t *first[2] = { &wv->pre0, &wv->post0 }, *count[2] = { &wv->npre, &wv->npost };
		for (int ph = 0; ph < 2; ph++) {
			size_t at = k, from = *first[ph];
			for (size_t i = from; i < from + *count[ph]; i++) {
				if (k > at && continues(&g->copies[k - 1], &g->copies[i]))
					g->copies[k - 1].len += g->copies[i].len;
				else
					g->copies[k++] = g->copies[i];
			}
			*first[ph] = (uint32_t)at;
			*count[ph] = (uint32_t)(k - at);
		}
	}
	g->ncopies = k;
}

/* Place every block in the arena, in the order the walk made them (their
 * fill waves ascend): before a block filled in wave w, every block last
 * read before w is freed.  That is the first-fit allocator run online with
 * the lifetimes known, so two blocks share bytes only when their lives do
 * not overlap.  Then staging locations become arena offsets. */
static int cmp_end(const void *x, const void *y)
{
	const uint64_t *a = x, *b = y;

	return a[0] != b[0] ? (a[0] < b[0] ? -1 : 1) : (a[1] > b[1]) - (a[1] < b[1]);
}

static int place_blocks(struct builder *b)
{
	struct fast_prog *g = b->prog;
	size_t n = b->nblocks, k = 0;
	uint64_t (*ends)[2] = fast_calloc(n ? n : 1, sizeof *ends); /* (last wave, block) */
	int rc = 0;

	if (!ends)
		return FAST_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		ends[i][0] = b->blocks[i].last;
		ends[i][1] = i;
	}
	qsort(ends, n, sizeof *ends, cmp_end);
	for (size_t i = 0; i < n && rc == 0; i++) {
		struct block *blk = &b->blocks[i];
		for (; k < n && ends[k][0] < blk->born && rc == 0; k++)
			rc = arena_free(&b->arena, b->blocks[ends[k][1]].off, b->blocks[ends[k][1]].size);
		if (rc == 0)
			rc = arena_alloc(&b->arena, blk->size, &blk->off);
	}
	for (size_t i = 0; i < g->ncopies; i++) {
		relocate(b, &g->copies[i].dst);
		relocate(b, &g->copies[i].src);
	}
	for (size_t i = 0; i < g->nsends; i++)
		relocate(b, &g->sends[i].at);
	for (size_t i = 0; i < g->nrecvs; i++)
		relocate(b, &g->recvs[i].at);
	merge_copies(g);
	free(ends);
	return rc;
}

/* --- build ---------------------------------------------------------------------- */

void fast_prog_free(struct fast_prog *g)
{
	if (!g)
		return;
	free(g->waves);
	free(g->copies);
	free(g->sends);
	free(g->recvs);
	free(g);
}

static void builder_free(struct builder *b)
{
	free(b->arena.free);
	free(b->blocks);
	fast_holds_free(&b->held);
	free(b->at);
	free(b->pending);
	free(b->final_bytes);
	free(b->dest_bit);
	free(b->summed);
	free(b->vid);
	free(b->vals);
	free(b->frags);
	free(b->big);
	free(b->segs);
	free(b->seglen);
	free(b->seg_block);
}

/* Put n copies before everything else the program does (the first wave's
 * pre-copies, a wave made for them when there is none). */
static int prepend_copies(struct fast_prog *g, const struct fast_pcopy *c, size_t n)
{
	if (n == 0)
		return 0;
	if (g->nwaves == 0) {
		struct fast_pwave w = { 0 };
		if (PUSH(g->waves, g->nwaves, g->cap_waves, w))
			return FAST_ENOMEM;
	}
	if (FAST_GROW(g->copies, g->cap_copies, g->ncopies + n))
		return FAST_ENOMEM;
	memmove(g->copies + n, g->copies, g->ncopies * sizeof *g->copies);
	memcpy(g->copies, c, n * sizeof *c);
	g->ncopies += n;
	g->waves[0].npre += (uint32_t)n;
	g->waves[0].post0 += (uint32_t)n;
	for (size_t i = 1; i < g->nwaves; i++) {
		g->waves[i].pre0 += (uint32_t)n;
		g->waves[i].post0 += (uint32_t)n;
	}
	return 0;
}

/* What a rank does before the plan's first wave: the diagonal of a byte
 * plan (a local copy, unless the plan moves it itself); a dispatch
 * group's copy to its own src when that is one of its destinations; a
 * combine result starting as its src's own contribution, or zero. */
static int start_copies(struct builder *b)
{
	struct fast_prog *g = b->prog;
	struct fast_pcopy *c = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;

	if (b->kind == FAST_TRAFFIC_BYTES) {
		uint64_t diag = b->D[(size_t)b->rank * b->ng + b->rank];
		if (diag > 0 && b->final_bytes[b->rank] == 0) {
			struct fast_pcopy d = { { LOC_RECV, b->rank, 0 }, { LOC_SEND, b->rank, 0 }, diag,
						FAST_POP_COPY };
			b->final_bytes[b->rank] = diag;
			return prepend_copies(g, &d, 1);
		}
		return 0;
	}
	for (uint32_t k = 0; k < b->m->ngroups && rc == 0; k++) {
		const struct fast_group *gr = &b->m->groups[k];
		struct fast_loc to = { LOC_RECV, k, 0 };
		struct fast_pcopy d = { to, { LOC_SEND, k, 0 }, fast_group_bytes(b->m, k), FAST_POP_COPY };
		if (gr->src != b->rank || d.len == 0)
			continue;
		if (b->dest_bit[k] < 0) {
			if (b->kind == FAST_TRAFFIC_DISPATCH)
				continue;
			d.op = FAST_POP_ZERO;
			d.src = to;
		}
		rc = PUSH(c, n, cap, d);
	}
	if (rc == 0)
		rc = prepend_copies(g, c, n);
	free(c);
	return rc;
}

/* Does this rank end with exactly what it must receive? */
static int check_received(struct builder *b)
{
	uint32_t r = b->rank;

	if (b->kind == FAST_TRAFFIC_BYTES) {
		for (uint32_t s = 0; s < b->ng; s++) {
			uint64_t want = b->D[(size_t)s * b->ng + r];
			if (b->final_bytes[s] != want)
				return fast_err_set(b->err, FAST_ECHECK,
						    "plan: GPU %u receives %llu bytes of message %u->%u, which has %llu",
						    r, (unsigned long long)b->final_bytes[s], s, r,
						    (unsigned long long)want);
		}
		return 0;
	}
	for (uint32_t k = 0; k < b->m->ngroups; k++) {
		const struct fast_group *gr = &b->m->groups[k];
		uint64_t M = fast_group_bytes(b->m, k), lo = 0, hi = 0;
		int rc;
		if (b->kind == FAST_TRAFFIC_DISPATCH && b->dest_bit[k] >= 0 && gr->src != r && M > 0) {
			rc = fast_holds_cover(&b->held, hkey(b, k, 0), 0, M, NULL, NULL, &lo, &hi);
			if (rc < 0)
				return FAST_ENOMEM;
			if (rc > 0)
				return fast_err_set(b->err, FAST_ECHECK,
						    "plan: GPU %u never receives bytes [%llu, %llu) of group %u (from GPU %u)",
						    r, (unsigned long long)lo, (unsigned long long)hi, k,
						    gr->src);
		}
		if (b->kind == FAST_TRAFFIC_COMBINE && gr->src == r) {
			uint64_t want = M * gr->ndst, got = b->summed[k] + (b->dest_bit[k] >= 0 ? M : 0);
			if (got != want)
				return fast_err_set(b->err, FAST_ECHECK,
						    "plan: GPU %u sums %llu bytes x contributions of group %u, which needs %llu (%u contributions of %llu bytes)",
						    r, (unsigned long long)got, k, (unsigned long long)want,
						    gr->ndst, (unsigned long long)M);
		}
	}
	return 0;
}

/* The token-plan state: this rank's place in every group, the values. */
static int tokens_init(struct builder *b)
{
	const struct fast_matrix *m = b->m;

	b->dest_bit = fast_calloc(m->ngroups ? m->ngroups : 1, sizeof *b->dest_bit);
	b->summed = fast_calloc(m->ngroups ? m->ngroups : 1, sizeof *b->summed);
	if (!b->dest_bit || !b->summed)
		return FAST_ENOMEM;
	for (uint32_t k = 0; k < m->ngroups; k++) {
		const struct fast_group *gr = &m->groups[k];
		b->dest_bit[k] = -1;
		if (gr->src >= b->ng || gr->ndst > FAST_GROUP_MAX_DESTS ||
		    (uint64_t)gr->dst0 + gr->ndst > m->ndsts)
			return fast_err_set(b->err, FAST_EINPUT, "traffic: group %u out of range", k);
		for (uint32_t i = 0; i < gr->ndst; i++)
			if (m->dsts[gr->dst0 + i] == b->rank)
				b->dest_bit[k] = (int32_t)i;
	}
	return b->kind == FAST_TRAFFIC_COMBINE ? values_init(b) : 0;
}

static int build(const struct fast_plan_view *v, const uint64_t *D, const struct fast_matrix *m,
		 uint32_t rank, uint32_t passes, struct fast_prog **out, struct fast_err *err)
{
	const struct fast_plan *p = v->x;
	struct builder b;
	struct node *nodes = NULL;
	size_t nnodes = 0, *wave0 = NULL;
	uint32_t levels = 0;
	struct fast_prog *g;
	int rc;

	if (!p->gpus || !p->servers)
		return fast_err_set(err, FAST_EINPUT, "plan: no GPUs");
	if (rank >= p->servers * p->gpus)
		return fast_err_set(err, FAST_EINPUT, "executor: rank %u outside the plan's %u GPUs",
				    rank, p->servers * p->gpus);
	if (passes == 0)
		passes = 1;
	memset(&b, 0, sizeof b);
	if (err)
		err->msg[0] = '\0';
	b.p = p;
	b.D = D;
	b.m = m;
	b.kind = m ? m->kind : FAST_TRAFFIC_BYTES;
	b.rank = rank;
	b.ng = p->servers * p->gpus;
	b.gpus = p->gpus;
	b.err = err;
	g = calloc(1, sizeof *g);
	b.final_bytes = fast_calloc(b.ng, sizeof *b.final_bytes);
	if (!g || !b.final_bytes) {
		free(g);
		builder_free(&b);
		return fast_err_set(err, FAST_ENOMEM, "executor: out of memory");
	}
	g->rank = rank;
	g->ng = b.ng;
	g->passes = passes;
	g->plan_hash = fast_plan_hash(p);
	g->kind = b.kind;
	g->nmsgs = m ? m->ngroups : b.ng;
	b.prog = g;
	if (m && (rc = tokens_init(&b)) < 0)
		goto fail;
	if ((rc = order_nodes(p, passes, &nodes, &nnodes, &wave0, &levels, err)) < 0)
		goto fail;
	g->plan_waves = levels;
	for (uint32_t j = 0; j < passes; j++) {
		for (uint32_t l = 0; l < levels; l++) {
			b.wave = (uint64_t)j * levels + l;
			rc = run_wave(&b, nodes + wave0[l], wave0[l + 1] - wave0[l], passes, j);
			if (rc < 0)
				goto fail;
		}
	}
	if (place_blocks(&b) < 0 || start_copies(&b) < 0)
		goto nomem;
	if ((rc = check_received(&b)) < 0)
		goto fail;
	for (size_t i = 0; i < g->ncopies; i++)
		g->sums += g->copies[i].op != FAST_POP_COPY;
	g->staging = b.arena.high;
	free(nodes);
	free(wave0);
	builder_free(&b);
	*out = g;
	return 0;
nomem:
	rc = fast_err_set(err, FAST_ENOMEM, "executor: out of memory building the program");
fail:
	if (rc == FAST_ENOMEM && err && !err->msg[0])
		fast_err_set(err, FAST_ENOMEM, "executor: out of memory building the program");
	free(nodes);
	free(wave0);
	builder_free(&b);
	fast_prog_free(g);
	return rc;
}

int fast_prog_build(const struct fast_plan_view *v, const uint64_t *D, uint32_t rank,
		    uint32_t passes, struct fast_prog **out, struct fast_err *err)
{
	if (v->x->kind != FAST_TRAFFIC_BYTES)
		return fast_err_set(err, FAST_EINPUT,
				    "plan: a %s plan needs the token groups it serves, not a byte matrix",
				    fast_traffic_kind_name(v->x->kind));
	return build(v, D, NULL, rank, passes, out, err);
}

int fast_prog_build_tokens(const struct fast_plan_view *v, const struct fast_matrix *m,
			   uint32_t rank, uint32_t passes, struct fast_prog **out,
			   struct fast_err *err)
{
	if (m->kind == FAST_TRAFFIC_BYTES || v->x->kind != m->kind)
		return fast_err_set(err, FAST_EINPUT, "plan: a %s plan for %s traffic",
				    fast_traffic_kind_name(v->x->kind), fast_traffic_kind_name(m->kind));
	return build(v, NULL, m, rank, passes, out, err);
}

int fast_token_role(const struct fast_matrix *m, uint32_t g, uint32_t r, bool *sends,
		    bool *recvs)
{
	const struct fast_group *gr = &m->groups[g];
	int bit = -1;

	for (uint32_t i = 0; i < gr->ndst; i++)
		if (m->dsts[gr->dst0 + i] == r)
			bit = (int)i;
	*sends = m->kind == FAST_TRAFFIC_DISPATCH ? gr->src == r : bit >= 0;
	*recvs = m->kind == FAST_TRAFFIC_DISPATCH ? bit >= 0 : gr->src == r;
	return bit;
}

uint8_t fast_token_send_byte(const struct fast_matrix *m, uint32_t g, int i, uint64_t o)
{
	if (m->kind == FAST_TRAFFIC_DISPATCH)
		return fast_token_row_byte(g, o / m->token_bytes, o % m->token_bytes);
	return fast_token_contrib_byte(g, (uint32_t)i, o);
}

uint8_t fast_token_expect_byte(const struct fast_matrix *m, uint32_t g, uint64_t o)
{
	uint8_t sum = 0;

	if (m->kind == FAST_TRAFFIC_DISPATCH)
		return fast_token_row_byte(g, o / m->token_bytes, o % m->token_bytes);
	for (uint32_t i = 0; i < m->groups[g].ndst; i++)
		sum = (uint8_t)(sum + fast_token_contrib_byte(g, i, o));
	return sum;
}

void fast_prog_add_bytes(void *dst, const void *src, uint64_t n)
{
	const uint64_t hi = UINT64_C(0x8080808080808080);
	unsigned char *d = dst;
	const unsigned char *s = src;
	uint64_t i = 0;

	/* eight bytes at a time: the low seven bits of each byte add without
	 * reaching the next byte, the top bit is their carry xor both tops */
	for (; i + 8 <= n; i += 8) {
		uint64_t a, b, r;
		memcpy(&a, d + i, 8);
		memcpy(&b, s + i, 8);
		r = ((a & ~hi) + (b & ~hi)) ^ ((a ^ b) & hi);
		memcpy(d + i, &r, 8);
	}
	for (; i < n; i++)
		d[i] = (unsigned char)(d[i] + s[i]);
}

void fast_prog_info(const struct fast_prog *g, struct fast_prog_info *o)
{
	memset(o, 0, sizeof *o);
	o->waves = (uint32_t)g->nwaves;
	o->passes = g->passes;
	o->staging_bytes = g->staging;
	o->sends = g->nsends;
	o->recvs = g->nrecvs;
	o->copies = g->ncopies;
	o->sums = g->sums;
	o->plan_hash = g->plan_hash;
	for (size_t i = 0; i < g->nsends; i++)
		o->bytes_sent += g->sends[i].len;
	for (size_t i = 0; i < g->nrecvs; i++)
		o->bytes_recv += g->recvs[i].len;
}
