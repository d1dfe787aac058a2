/*
 * holds.h - which byte ranges of a message a GPU holds: the one store the
 * checker (lib/check/check.c), the MSCCL exporter (lib/export/msccl.c) and the
 * executor's program builder (exec/prog.c) keep while they walk a plan in
 * dependency order.
 *
 * A record is a range [lo, hi) under a 64-bit key that the caller packs
 * (the checker and the exporter: (GPU, src, dst), or (GPU, group) for a
 * token plan; the builder, which serves one rank: (src, dst)), in whatever
 * unit it counts (bytes, MSCCL chunks), with a 32-bit tag: the mask
 * dimension of combine plans, whose values are (group, range, mask) (the
 * checker tags a record with the index of its mask and filters on it in
 * its clip function; 0 where there is no mask).  Records are appended, never removed; the records of one key
 * form a list, newest first.  What else a caller knows of a record (the
 * step it arrived in, where it lives) it keeps in its own arrays indexed
 * by the record's id, which is its position in append order.
 *
 * Workload: one record per piece arriving anywhere (10^6..10^7 for the
 * largest plans), queries mostly answered by the newest record of a key.
 * The key index is open addressing with linear probing, grown to keep it
 * at most half full (no fixed bucket count); records are 24 bytes.
 *
 * Ownership: a struct fast_holds owns its arrays; fast_holds_free releases
 * them (NULL-safe) and leaves an empty store.  A zeroed struct is empty.
 */
#ifndef FAST_HOLDS_H
#define FAST_HOLDS_H

#include "fast/common.h"

#define FAST_HOLDS_END UINT32_MAX /* ends a key's list; "none" */

struct fast_hold {
	uint64_t lo, hi; /* the range [lo, hi), lo < hi */
	uint32_t next;   /* the key's previous record, FAST_HOLDS_END ends */
	uint32_t tag;    /* the caller's, e.g. which sum of contributions the bytes are */
};

struct fast_holds {
	uint64_t *keys; /* key + 1; 0 = empty slot */
	uint32_t *head; /* newest record of the slot's key */
	size_t cap, used;
	struct fast_hold *recs;
	size_t nrecs, cap_recs;
	struct { uint64_t lo, hi; } *iv; /* cover() scratch */
	size_t cap_iv;
};

void fast_holds_free(struct fast_holds *h);

/* Append [lo, hi) (lo < hi) under key; *id (may be NULL) gets its record
 * id.  0, or FAST_ENOMEM (also beyond 2^32 - 1 records) with the store
 * unchanged. */
int fast_holds_add(struct fast_holds *h, uint64_t key, uint64_t lo, uint64_t hi, uint32_t *id);
/* The same with a tag (fast_holds_add tags 0). */
int fast_holds_add_tagged(struct fast_holds *h, uint64_t key, uint64_t lo, uint64_t hi,
			  uint32_t tag, uint32_t *id);

/* The newest record of key, FAST_HOLDS_END when none; walk on with
 * h->recs[id].next. */
uint32_t fast_holds_first(const struct fast_holds *h, uint64_t key);

/* The newest record of key that contains pos, FAST_HOLDS_END when none. */
uint32_t fast_holds_find(const struct fast_holds *h, uint64_t key, uint64_t pos);

/* A caller's view of record id for one query: the end of the part of
 * [rec.lo, rec.hi) that counts (rec.hi: all of it; rec.lo or less: none),
 * e.g. only what arrived in steps the querying step depends on. */
typedef uint64_t (*fast_holds_clip)(void *ctx, uint32_t id, const struct fast_hold *rec);

/* Is [lo, hi) covered by the union of key's records (each cut by clip when
 * clip is not NULL)?  Returns 0 with *gap_lo = hi when it is; otherwise 1
 * with [*gap_lo, *gap_hi) the first byte range of [lo, hi) not covered.
 * FAST_ENOMEM (scratch) otherwise. */
int fast_holds_cover(struct fast_holds *h, uint64_t key, uint64_t lo, uint64_t hi,
		     fast_holds_clip clip, void *ctx, uint64_t *gap_lo, uint64_t *gap_hi);

#endif
