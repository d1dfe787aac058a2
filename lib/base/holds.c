/*
 * holds.c - the store of byte ranges held per key (holds.h): an
 * open-addressing index from key to its newest record, and the records in
 * append order, each linking to the key's previous one.
 */
#include "lib/base/holds.h"

#include <stdlib.h>
#include <string.h>

#define MIN_SLOTS 1024u

void fast_holds_free(struct fast_holds *h)
{
	if (!h)
		return;
	free(h->keys);
	free(h->head);
	free(h->recs);
	free(h->iv);
	memset(h, 0, sizeof *h);
}

static uint64_t mix(uint64_t k)
{
	k ^= k >> 33;
	k *= UINT64_C(0xff51afd7ed558ccd);
	k ^= k >> 33;
	return k;
}

static int rehash(struct fast_holds *h)
{
	size_t nc = h->cap ? h->cap * 2 : MIN_SLOTS;
	uint64_t *nk = fast_calloc(nc, sizeof *nk);
	uint32_t *nh = fast_calloc(nc, sizeof *nh);

	if (!nk || !nh) {
		free(nk);
		free(nh);
		return FAST_ENOMEM;
	}
	for (size_t i = 0; i < h->cap; i++) {
		size_t j;
		if (!h->keys[i])
			continue;
		for (j = mix(h->keys[i]) & (nc - 1); nk[j]; j = (j + 1) & (nc - 1))
			;
		nk[j] = h->keys[i];
		nh[j] = h->head[i];
	}
	free(h->keys);
	free(h->head);
	h->keys = nk;
	h->head = nh;
	h->cap = nc;
	return 0;
}

/* The slot of key, or of the empty slot where it would go; SIZE_MAX when
 * the index is empty. */
static size_t slot_of(const struct fast_holds *h, uint64_t key)
{
	size_t j;

	if (!h->cap)
		return SIZE_MAX;
	for (j = mix(key + 1) & (h->cap - 1); h->keys[j] && h->keys[j] != key + 1;
	     j = (j + 1) & (h->cap - 1))
		;
	return j;
}

int fast_holds_add(struct fast_holds *h, uint64_t key, uint64_t lo, uint64_t hi, uint32_t *id)
{
	return fast_holds_add_tagged(h, key, lo, hi, 0, id);
}

int fast_holds_add_tagged(struct fast_holds *h, uint64_t key, uint64_t lo, uint64_t hi,
			  uint32_t tag, uint32_t *id)
{
	size_t j;

	if (h->nrecs >= FAST_HOLDS_END ||
	    (h->nrecs == h->cap_recs &&
	     fast_grow((void **)&h->recs, &h->cap_recs, h->nrecs + 1, sizeof *h->recs, 4096) < 0))
		return FAST_ENOMEM;
	j = slot_of(h, key);
	if (j == SIZE_MAX || !h->keys[j]) {
		if ((h->used + 1) * 2 > h->cap) {
			if (rehash(h) < 0)
				return FAST_ENOMEM;
			j = slot_of(h, key);
		}
		h->keys[j] = key + 1;
		h->head[j] = FAST_HOLDS_END;
		h->used++;
	}
	h->recs[h->nrecs] = (struct fast_hold){ lo, hi, h->head[j], tag };
	h->head[j] = (uint32_t)h->nrecs;
	if (id)
		*id = (uint32_t)h->nrecs;
	h->nrecs++;
	return 0;
}

uint32_t fast_holds_first(const struct fast_holds *h, uint64_t key)
{
	size_t j = slot_of(h, key);

	return j == SIZE_MAX || !h->keys[j] ? FAST_HOLDS_END : h->head[j];
}

uint32_t fast_holds_find(const struct fast_holds *h, uint64_t key, uint64_t pos)
{
	for (uint32_t r = fast_holds_first(h, key); r != FAST_HOLDS_END; r = h->recs[r].next)
		if (h->recs[r].lo <= pos && pos < h->recs[r].hi)
			return r;
	return FAST_HOLDS_END;
}

static int cmp_iv(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;
	return x[0] < y[0] ? -1 : x[0] > y[0];
}

int fast_holds_cover(struct fast_holds *h, uint64_t key, uint64_t lo, uint64_t hi,
		     fast_holds_clip clip, void *ctx, uint64_t *gap_lo, uint64_t *gap_hi)
{
	uint64_t cur = lo, gap_end = hi;
	size_t n = 0;

	for (uint32_t r = fast_holds_first(h, key); r != FAST_HOLDS_END; r = h->recs[r].next) {
		const struct fast_hold *rec = &h->recs[r];
		uint64_t rhi;
		if (rec->hi <= lo || rec->lo >= hi)
			continue;
		rhi = clip ? clip(ctx, r, rec) : rec->hi;
		if (rhi > rec->hi)
			rhi = rec->hi;
		if (rhi <= lo || rhi <= rec->lo)
			continue;
		if (rec->lo <= lo && rhi >= hi) {
			*gap_lo = hi; /* the common case: one record covers it */
			return 0;
		}
		if (FAST_GROW(h->iv, h->cap_iv, n + 1) < 0)
			return FAST_ENOMEM;
		h->iv[n].lo = rec->lo;
		h->iv[n++].hi = rhi;
	}
	if (n > 1)
		qsort(h->iv, n, sizeof *h->iv, cmp_iv);
	for (size_t i = 0; i < n; i++) {
		if (h->iv[i].lo > cur) {
			gap_end = h->iv[i].lo;
			break;
		}
		if (h->iv[i].hi > cur)
			cur = h->iv[i].hi;
	}
	if (cur >= hi) {
		*gap_lo = hi;
		return 0;
	}
	*gap_lo = cur;
	*gap_hi = gap_end < hi ? gap_end : hi;
	return 1;
}
