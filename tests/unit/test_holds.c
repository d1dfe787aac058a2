/*
 * test_holds.c - lib/holds: the store of byte ranges held per key, tested
 * against a naive reference (a flat list of every record, scanned newest
 * first, and a byte map for coverage) on seeded random range sets, with
 * enough keys to grow the index many times; and the growable array of
 * lib/common that it and its users grow with.
 */
#include <CUnit/Basic.h>

#include "unit.h"
#include <stdlib.h>
#include <string.h>

#include "lib/base/holds.h"

#define SPAN 96u /* bytes per key in the random sets: small, so ranges overlap */

struct ref {
	uint64_t key, lo, hi;
};

/* Newest reference record of key containing pos (by id), or END. */
static uint32_t ref_find(const struct ref *r, size_t n, uint64_t key, uint64_t pos)
{
	for (size_t i = n; i-- > 0;)
		if (r[i].key == key && r[i].lo <= pos && pos < r[i].hi)
			return (uint32_t)i;
	return FAST_HOLDS_END;
}

/* The clip used in the tests: record id counts up to lo + (id % 3) * len / 2
 * (none, half, all), like the checker's "only the chunks that arrived". */
static uint64_t clip_by_id(void *ctx, uint32_t id, const struct fast_hold *h)
{
	(void)ctx;
	return h->lo + (id % 3) * (h->hi - h->lo) / 2;
}

/* Reference coverage of [lo, hi) of key: first uncovered byte range. */
static int ref_cover(const struct ref *r, size_t n, uint64_t key, uint64_t lo, uint64_t hi,
		     int clipped, uint64_t *glo, uint64_t *ghi)
{
	unsigned char have[SPAN] = { 0 };
	uint64_t a;

	for (size_t i = 0; i < n; i++) {
		uint64_t end = r[i].hi;
		if (r[i].key != key)
			continue;
		if (clipped)
			end = r[i].lo + (i % 3) * (r[i].hi - r[i].lo) / 2;
		for (uint64_t b = r[i].lo; b < end; b++)
			have[b] = 1;
	}
	for (a = lo; a < hi && have[a]; a++)
		;
	if (a == hi) {
		*glo = hi;
		return 0;
	}
	*glo = a;
	for (; a < hi && !have[a]; a++)
		;
	*ghi = a;
	return 1;
}

static void test_holds__matches_naive_reference(void)
{
	struct fast_rng rng;

	fast_rng_seed(&rng, 13);
	for (int round = 0; round < 40; round++) {
		struct fast_holds h;
		size_t n = 1 + fast_rng_below(&rng, round < 20 ? 60 : 3000);
		uint64_t nkeys = 1 + fast_rng_below(&rng, round < 20 ? 4 : 2000);
		struct ref *r = calloc(n, sizeof *r);

		CU_ASSERT_FATAL(r != NULL);
		memset(&h, 0, sizeof h);
		for (size_t i = 0; i < n; i++) {
			uint32_t id = 0;
			/* keys spread over 64 bits, like (GPU, src, dst) packings */
			r[i].key = fast_rng_below(&rng, nkeys) * UINT64_C(0x9e3779b97f4a7c15);
			r[i].lo = fast_rng_below(&rng, SPAN - 1);
			r[i].hi = r[i].lo + 1 + fast_rng_below(&rng, SPAN - r[i].lo);
			CU_ASSERT_FATAL(fast_holds_add(&h, r[i].key, r[i].lo, r[i].hi, &id) == 0);
			CU_ASSERT_EQUAL(id, (uint32_t)i); /* ids are append order */
		}
		CU_ASSERT_EQUAL(h.nrecs, n);
		CU_ASSERT(h.used * 2 <= h.cap); /* the index stays at most half full */
		for (int q = 0; q < 400; q++) {
			uint64_t key = fast_rng_below(&rng, nkeys + 1) * UINT64_C(0x9e3779b97f4a7c15);
			uint64_t pos = fast_rng_below(&rng, SPAN);
			uint64_t lo = fast_rng_below(&rng, SPAN - 1);
			uint64_t hi = lo + 1 + fast_rng_below(&rng, SPAN - lo);
			uint64_t g1 = 0, g2 = 0, e1 = 0, e2 = 0;
			int clipped = q & 1, got, want;

			CU_ASSERT_EQUAL(fast_holds_find(&h, key, pos), ref_find(r, n, key, pos));
			got = fast_holds_cover(&h, key, lo, hi, clipped ? clip_by_id : NULL, NULL, &g1,
					       &e1);
			want = ref_cover(r, n, key, lo, hi, clipped, &g2, &e2);
			CU_ASSERT_EQUAL(got, want);
			CU_ASSERT_EQUAL(g1, g2);
			if (got == 1 && want == 1)
				CU_ASSERT_EQUAL(e1, e2);
		}
		/* a key's list: every record of the key, newest first */
		{
			uint64_t key = r[n - 1].key;
			size_t i = n;
			for (uint32_t id = fast_holds_first(&h, key); id != FAST_HOLDS_END;
			     id = h.recs[id].next) {
				while (i-- > 0 && r[i].key != key)
					;
				CU_ASSERT_EQUAL(id, (uint32_t)i);
			}
			while (i-- > 0)
				CU_ASSERT_NOT_EQUAL(r[i].key, key);
		}
		fast_holds_free(&h);
		CU_ASSERT_EQUAL(h.nrecs, 0);
		CU_ASSERT_EQUAL(fast_holds_first(&h, 0), FAST_HOLDS_END);
		free(r);
	}
	fast_holds_free(NULL);
}

static void test_holds__empty_store_and_edge_ranges(void)
{
	struct fast_holds h;
	uint64_t g = 0, e = 0;

	memset(&h, 0, sizeof h);
	CU_ASSERT_EQUAL(fast_holds_find(&h, 7, 0), FAST_HOLDS_END);
	CU_ASSERT_EQUAL(fast_holds_cover(&h, 7, 3, 9, NULL, NULL, &g, &e), 1);
	CU_ASSERT(g == 3 && e == 9);
	CU_ASSERT_EQUAL(fast_holds_add(&h, 7, 0, 4, NULL), 0);
	CU_ASSERT_EQUAL(fast_holds_add(&h, 7, 6, 10, NULL), 0);
	CU_ASSERT_EQUAL(fast_holds_find(&h, 7, 4), FAST_HOLDS_END); /* hi is exclusive */
	CU_ASSERT_EQUAL(fast_holds_find(&h, 7, 3), 0);
	CU_ASSERT_EQUAL(fast_holds_cover(&h, 7, 0, 10, NULL, NULL, &g, &e), 1);
	CU_ASSERT(g == 4 && e == 6);
	CU_ASSERT_EQUAL(fast_holds_add(&h, 7, 3, 7, NULL), 0);
	CU_ASSERT_EQUAL(fast_holds_cover(&h, 7, 0, 10, NULL, NULL, &g, &e), 0);
	CU_ASSERT_EQUAL(g, 10);
	CU_ASSERT_EQUAL(fast_holds_find(&h, 7, 3), 2); /* the newest holding wins */
	/* key 0 is a key like any other (slots store key + 1) */
	CU_ASSERT_EQUAL(fast_holds_add(&h, 0, 0, 1, NULL), 0);
	CU_ASSERT_EQUAL(fast_holds_find(&h, 0, 0), 3);
	fast_holds_free(&h);
}

static void test_holds__grow_doubles_and_keeps_contents(void)
{
	uint32_t *a = NULL;
	size_t cap = 0;

	CU_ASSERT_EQUAL(FAST_GROW(a, cap, 1), 0);
	CU_ASSERT_EQUAL(cap, 64);
	for (uint32_t i = 0; i < 1000; i++) {
		CU_ASSERT_FATAL(FAST_GROW(a, cap, (size_t)i + 1) == 0);
		a[i] = i * 3;
	}
	CU_ASSERT_EQUAL(cap, 1024);
	for (uint32_t i = 0; i < 1000; i++)
		CU_ASSERT_EQUAL(a[i], i * 3);
	CU_ASSERT_EQUAL(fast_grow((void **)&a, &cap, 5000, sizeof *a, 16), 0);
	CU_ASSERT_EQUAL(cap, 8192);
	CU_ASSERT_EQUAL(a[999], 2997);
	/* exhaustion leaves the array as it was */
	CU_ASSERT_EQUAL(fast_grow((void **)&a, &cap, SIZE_MAX / 2, sizeof *a, 16), FAST_ENOMEM);
	CU_ASSERT_EQUAL(cap, 8192);
	CU_ASSERT_EQUAL(a[999], 2997);
	free(a);
}

UNIT_MAIN("holds",
	  UNIT_TEST(test_holds__matches_naive_reference),
	  UNIT_TEST(test_holds__empty_store_and_edge_ranges),
	  UNIT_TEST(test_holds__grow_doubles_and_keeps_contents))
