/*
 * prog_internal.h - what prog.c (the walk over the waves, staging
 * placement, the entry points) and prog_wave.c (one wave: holdings,
 * values, fragments, sends, receives and sums) share: the builder's state
 * and the four functions that cross.  Not part of the executor's interface
 * (prog.h is).
 */
#ifndef FAST_PROG_INTERNAL_H
#define FAST_PROG_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "fast/prog.h"
#include "lib/base/holds.h"

/* --- growable arrays (common.h) ------------------------------------------- */

#define PUSH(arr, n, cap, val)                                          \
	(FAST_GROW(arr, cap, (n) + 1) ? FAST_ENOMEM : ((arr)[(n)++] = (val), 0))

/* --- staging allocator (prog.c) --------------------------------------------- */

struct span {
	uint64_t off, len;
};
struct alloc {
	struct span *free; size_t nfree, cap_free;
	uint64_t top, high;
};

/* --- holdings ------------------------------------------------------------------ */

struct block {
	uint64_t off, size;
	uint64_t born, last; /* waves (over all passes): filled, last read */
	uint64_t prev;       /* the rank's wave before `born` (NO_WAVE: none) */
};

#define NO_WAVE UINT64_MAX

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
	uint32_t cls;        /* FAST_FLIGHT_* of reading it in the rank's next wave */
};

/* Where a holding (a record of the store, by id) lives: its block and
 * where its first byte is in it, or (block NO_BLOCK) the receive buffer's
 * message rmsg at offset soff. */
struct held_at {
	uint64_t soff;
	uint32_t block, rmsg;
	uint64_t wave;    /* the wave it arrived in */
	uint32_t cls;     /* FAST_FLIGHT_* of reading it in the rank's next wave */
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
	struct fast_holds held;  /* value ranges held, keyed by fast_prog_hkey() */
	struct held_at *at; size_t cap_at;
	struct hold *pending; size_t npending, cap_pending;
	uint64_t wave;         /* the wave being walked, counted over passes */
	uint64_t prev_wave;    /* the last wave in which this rank did something */
	uint32_t in_flight;    /* 1 or 2 (prog.h) */
	uint64_t *final_bytes; /* byte plans, per src: bytes that reached this rank as final */
	uint64_t *final_wave;  /* byte plans, per src: the last wave final bytes arrived in */
	uint8_t *final_cls;    /* ... and the class of reading them in the next */
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
	/* waves in flight (prog_flight.c): the class of what is being emitted
	 * and of every pre-copy and send of the wave so far */
	uint32_t seg_cls, cur_cls;
	uint8_t *ccls; size_t cap_ccls; /* by copy index - the wave's pre0 */
	uint8_t *scls; size_t cap_scls; /* by send index - the wave's send0 */
	uint8_t *peer_cls;              /* ng: scratch, zero between waves */
	struct fast_err *err;
};

/* A node of the walk: chunk `chunk` of step `step` (prog.c's Waves). */
struct node {
	uint32_t step, chunk;
};

/* prog_flight.c */
uint32_t fast_prog_read_cls(const struct builder *b, uint64_t wave, uint32_t cls);
int fast_prog_note_copy(struct builder *b, size_t at);
int fast_prog_note_send(struct builder *b, size_t at);
int fast_prog_order_wave(struct builder *b, struct fast_pwave *w);

/* prog_wave.c */
uint64_t fast_prog_hkey(const struct builder *b, uint32_t src, uint32_t dst);
int fast_prog_values_init(struct builder *b);
bool fast_prog_continues(const struct fast_pcopy *l, const struct fast_pcopy *c);
int fast_prog_run_wave(struct builder *b, const struct node *nodes, size_t n, uint32_t passes,
		       uint32_t j);

#endif
