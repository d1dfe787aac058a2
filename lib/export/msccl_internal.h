/*
 * msccl_internal.h - what the MSCCL export's files share: the chunk map
 * and the chunk arithmetic of msccl_chunks.c, used by the program builder
 * (msccl.c).  Not part of the library's interface (msccl.h is).
 */
#ifndef FAST_MSCCL_INTERNAL_H
#define FAST_MSCCL_INTERNAL_H

#include <stdint.h>

#include "fast/plan.h"
#include "lib/export/msccl.h"

/* Chunks in one GPU's input or output buffer: checked before the program
 * is built, whose size grows with them (a step per max_cnt chunks), so
 * that a small explicit chunk on large messages is refused up front
 * instead of building gigabytes (MSCCL's runtime already refuses 256
 * steps in a thread block, 2^14 chunks at max_cnt 64). */
#define EXPORT_MAX_CHUNKS (1u << 20)

/* Chunk boundary of byte position pos of a message of L bytes in q chunks:
 * round(pos * q / L), exact in 128 bits. */
static inline uint64_t fast_msccl_boundary(uint64_t pos, uint64_t L, uint64_t q)
{
	unsigned __int128 num;

	if (L == 0 || pos >= L)
		return q;
	num = (unsigned __int128)pos * q * 2 + L;
	return (uint64_t)(num / ((unsigned __int128)L * 2));
}

/* Message sizes into L (ng x ng): D when given, else the bytes that reach
 * their destination; FAST_EINPUT on a piece out of range. */
int fast_msccl_message_sizes(const struct fast_plan *x, const uint64_t *D, uint32_t ng,
			     uint64_t *L, struct fast_err *err);
/* The chunk size when none is given: the gcd of every size and piece
 * boundary, or the smallest multiple of it within max_chunks per buffer. */
uint64_t fast_msccl_auto_chunk(const struct fast_plan *x, const uint64_t *L, uint32_t ng,
			       uint32_t max_chunks);
/* m->q (chunks per message, m->chunk_bytes = C) and the counts of what
 * rounding changes: total_bytes, rounded_bytes, boundary_moves,
 * dropped_pieces; FAST_ELIMIT when a chunk count overflows. */
int fast_msccl_quantise(const struct fast_plan *x, const uint64_t *L, uint32_t ng, uint64_t C,
			struct fast_msccl *m, struct fast_err *err);
/* The buffer layout: in_off, out_off (ng x ng), m->i_chunks and
 * m->o_chunks; FAST_ELIMIT past EXPORT_MAX_CHUNKS in a buffer. */
int fast_msccl_layout(uint32_t ng, uint64_t C, struct fast_msccl *m, uint64_t *in_off,
		      uint64_t *out_off, struct fast_err *err);

#endif
