/*
 * heap.h - the simulator's heaps (private to sim/, not installed).
 *
 * Two kinds: a binary heap of timed events ordered by (time, seq), so
 * that ties resolve in the order they were scheduled (deterministic), and
 * a 4-ary (key, id) min-heap used for flow completions and for progressive
 * filling (ties by id keep results deterministic).  The completion heap is
 * indexed: pos[x] is entry x's slot (NO_SLOT when absent), so a changed
 * finish time moves its one entry (no stale entries to skip).  Plain and
 * indexed heaps share one sift-down; the index is NULL for a plain one.
 *
 * Every function here runs in the simulator's inner loops and the build
 * has no link-time optimisation, so they are static inline in this header
 * rather than in a .c file of their own.
 */
#ifndef FAST_SIM_HEAP_H
#define FAST_SIM_HEAP_H

#include "fast/sim.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum ev_type { EV_LAUNCH = 0, EV_START = 1, EV_CHUNK = 2 };

struct ev {
	double t;
	uint64_t seq;
	uint32_t id, aux;
	uint32_t type;
};

struct evheap {
	struct ev *a;
	size_t n, cap;
	uint64_t seq;
};

static inline bool ev_less(const struct ev *x, const struct ev *y)
{
	return x->t < y->t || (x->t == y->t && x->seq < y->seq);
}

static inline int ev_push(struct evheap *h, double t, uint32_t type, uint32_t id, uint32_t aux)
{
	size_t i;

	if (h->n == h->cap && fast_grow((void **)&h->a, &h->cap, h->n + 1, sizeof *h->a, 1024) < 0)
		return FAST_ENOMEM;
	i = h->n++;
	h->a[i] = (struct ev){ t, h->seq++, id, aux, type };
	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (!ev_less(&h->a[i], &h->a[p]))
			break;
		struct ev tmp = h->a[p];
		h->a[p] = h->a[i];
		h->a[i] = tmp;
		i = p;
	}
	return 0;
}

static inline struct ev ev_pop(struct evheap *h)
{
	struct ev top = h->a[0];
	size_t i = 0, n = --h->n;

	h->a[0] = h->a[n];
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < n && ev_less(&h->a[l], &h->a[m]))
			m = l;
		if (r < n && ev_less(&h->a[r], &h->a[m]))
			m = r;
		if (m == i)
			break;
		struct ev tmp = h->a[m];
		h->a[m] = h->a[i];
		h->a[i] = tmp;
		i = m;
	}
	return top;
}

struct kv {
	double k;
	uint32_t id;
};

struct kvheap {
	struct kv *a;
	size_t n, cap;
};

#define NO_SLOT UINT32_MAX

static inline bool kv_less(const struct kv *x, const struct kv *y)
{
	return x->k < y->k || (x->k == y->k && x->id < y->id);
}

/* a[i] = v, and v's slot recorded when the heap is indexed */
static inline void kv_set(struct kv *a, uint32_t *pos, size_t i, struct kv v)
{
	a[i] = v;
	if (pos)
		pos[v.id] = (uint32_t)i;
}

/* Sift a[i] down a 4-ary heap of n: half the depth of a binary one,
 * children in one cache line (16-byte entries).  pos: the index, or NULL. */
static inline void kv_down(struct kv *a, size_t n, size_t i, uint32_t *pos)
{
	struct kv v = a[i];

	for (;;) {
		size_t c = 4 * i + 1, m, end;
		if (c >= n)
			break;
		m = c;
		end = c + 4 < n ? c + 4 : n;
		for (size_t j = c + 1; j < end; j++)
			if (kv_less(&a[j], &a[m]))
				m = j;
		if (!kv_less(&a[m], &v))
			break;
		kv_set(a, pos, i, a[m]);
		i = m;
	}
	kv_set(a, pos, i, v);
}

static inline void kv_up(struct kv *a, size_t i, uint32_t *pos)
{
	struct kv v = a[i];

	while (i > 0) {
		size_t p = (i - 1) / 4;
		if (!kv_less(&v, &a[p]))
			break;
		kv_set(a, pos, i, a[p]);
		i = p;
	}
	kv_set(a, pos, i, v);
}

static inline void kv_heapify(struct kvheap *h)
{
	for (size_t i = h->n / 4 + 1; i-- > 0;)
		if (i < h->n)
			kv_down(h->a, h->n, i, NULL);
}

/* capacity is reserved by the caller */
static inline struct kv kv_pop(struct kvheap *h)
{
	struct kv top = h->a[0];

	h->a[0] = h->a[--h->n];
	kv_down(h->a, h->n, 0, NULL);
	return top;
}

static inline int kv_reserve(struct kvheap *h, size_t n)
{
	if (n <= h->cap)
		return 0;
	return fast_grow((void **)&h->a, &h->cap, n, sizeof *h->a, 256);
}

/* Indexed heap: insert entry x with key k, or move it there. */
static inline void ih_update(struct kvheap *h, uint32_t *pos, uint32_t x, double k)
{
	uint32_t p = pos[x];

	if (p == NO_SLOT) {
		p = (uint32_t)h->n++;
		h->a[p] = (struct kv){ k, x };
		kv_up(h->a, p, pos);
		return;
	}
	if (k < h->a[p].k) {
		h->a[p].k = k;
		kv_up(h->a, p, pos);
	} else {
		h->a[p].k = k;
		kv_down(h->a, h->n, p, pos);
	}
}

static inline void ih_remove(struct kvheap *h, uint32_t *pos, uint32_t x)
{
	uint32_t p = pos[x];
	struct kv last;

	if (p == NO_SLOT)
		return;
	pos[x] = NO_SLOT;
	last = h->a[--h->n];
	if (p == h->n)
		return;
	kv_set(h->a, pos, p, last);
	if (p > 0 && kv_less(&last, &h->a[(p - 1) / 4]))
		kv_up(h->a, p, pos);
	else
		kv_down(h->a, h->n, p, pos);
}

static inline void ih_clear(struct kvheap *h, uint32_t *pos)
{
	for (size_t i = 0; i < h->n; i++)
		pos[h->a[i].id] = NO_SLOT;
	h->n = 0;
}

#endif
