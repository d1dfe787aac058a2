/*
 * check_deliver.c - stage 3 of the checker (check.c has the whole proof):
 * every byte of every message arrives at its destination exactly once,
 * from the final records the walk made, sorted per message and swept;
 * for token plans per group (dispatch) and per contribution (combine).
 */
#include "lib/check/check_internal.h"

#include <stdlib.h>
#include <string.h>

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

/* --- 3. exactly-once delivery ---------------------------------------------- */

int fast_check_deliveries(struct checker *c)
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
int fast_check_dispatch_deliveries(struct checker *c)
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
				return fast_check_oom(c);
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
int fast_check_combine_deliveries(struct checker *c)
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
		int self = fast_check_dest_pos(m, g, gr->src);

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
				return fast_check_oom(c);
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
