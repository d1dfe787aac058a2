/*
 * cache.c - the executor's plan cache: programs keyed by a hash of what
 * they depend on (plan or algorithm, topology, matrix, staging cap).
 *
 * Workload: a MoE model repeats a handful of routing matrices (layers,
 * dispatch and combine) over thousands of iterations; compiling a FAST
 * plan for 64 GPUs takes milliseconds, a lookup microseconds.  A small LRU
 * (16 entries by default) with linear search is enough.
 */
#include <stdlib.h>

#include "fast/prog.h"

int fast_cache_init(struct fast_cache *c, uint32_t cap, struct fast_err *err)
{
	c->n = 0;
	c->cap = cap ? cap : 16;
	c->clock = c->hits = c->misses = 0;
	c->e = fast_calloc(c->cap, sizeof *c->e);
	if (!c->e)
		return fast_err_set(err, FAST_ENOMEM, "plan cache: out of memory");
	return 0;
}

struct fast_prog *fast_cache_get(struct fast_cache *c, uint64_t key)
{
	for (uint32_t i = 0; i < c->n; i++) {
		if (c->e[i].key == key) {
			c->e[i].used = ++c->clock;
			c->hits++;
			return c->e[i].prog;
		}
	}
	c->misses++;
	return NULL;
}

void fast_cache_put(struct fast_cache *c, uint64_t key, struct fast_prog *prog)
{
	uint32_t slot = c->n;

	for (uint32_t i = 0; i < c->n; i++) {
		if (c->e[i].key == key) {
			slot = i;
			break;
		}
	}
	if (slot == c->n && c->n == c->cap) {
		slot = 0;
		for (uint32_t i = 1; i < c->n; i++)
			if (c->e[i].used < c->e[slot].used)
				slot = i;
	}
	if (slot < c->n)
		fast_prog_free(c->e[slot].prog);
	else
		c->n++;
	c->e[slot].key = key;
	c->e[slot].used = ++c->clock;
	c->e[slot].prog = prog;
}

void fast_cache_free(struct fast_cache *c)
{
	if (!c || !c->e)
		return;
	for (uint32_t i = 0; i < c->n; i++)
		fast_prog_free(c->e[i].prog);
	free(c->e);
	c->e = NULL;
	c->n = 0;
}

uint64_t fast_matrix_hash(uint64_t h, const uint64_t *D, uint32_t ng)
{
	h = fast_hash_bytes(h, &ng, sizeof ng);
	return fast_hash_bytes(h, D, (size_t)ng * ng * sizeof *D);
}

uint64_t fast_groups_hash(uint64_t h, const struct fast_matrix *m)
{
	uint32_t kind = (uint32_t)m->kind;

	h = fast_hash_bytes(h, &kind, sizeof kind);
	h = fast_hash_bytes(h, &m->token_bytes, sizeof m->token_bytes);
	h = fast_hash_bytes(h, &m->ngroups, sizeof m->ngroups);
	for (uint32_t g = 0; g < m->ngroups; g++) {
		const struct fast_group *gr = &m->groups[g];
		h = fast_hash_bytes(h, &gr->src, sizeof gr->src);
		h = fast_hash_bytes(h, &gr->ndst, sizeof gr->ndst);
		h = fast_hash_bytes(h, &gr->tokens, sizeof gr->tokens);
		h = fast_hash_bytes(h, m->dsts + gr->dst0, gr->ndst * sizeof *m->dsts);
	}
	return h;
}
