/*
 * token_groups.c - token traffic (traffic.h "Token traffic"): the builder
 * that turns routed tokens into groups (trace import and the MoE
 * generator both use it, so that both number groups the same way), the
 * copy of a dispatch's groups into its combine, and the bytes crossing
 * servers with per-GPU and per-server deduplication.
 *
 * Workload: up to lim->max_groups groups (2^24 by default) of up to 64
 * destinations, built from up to tens of millions of tokens; the builder
 * finds a token's group in an open-addressing hash table keyed by (src,
 * destination list), amortised O(ndst) per token.
 */
#include <stdlib.h>
#include <string.h>

#include "fast/traffic.h"

void fast_groups_init(struct fast_groups *b, uint32_t ng, uint64_t max_groups)
{
	memset(b, 0, sizeof *b);
	b->ng = ng;
	b->max_groups = max_groups < UINT32_MAX ? max_groups : UINT32_MAX - 1;
}

void fast_groups_free(struct fast_groups *b)
{
	if (!b)
		return;
	free(b->groups);
	free(b->dsts);
	free(b->slot);
	fast_groups_init(b, b->ng, b->max_groups);
}

static uint64_t key_hash(uint32_t src, const uint32_t *d, uint32_t n)
{
	uint64_t h = fast_hash_u64(FAST_HASH_INIT, src);

	for (uint32_t i = 0; i < n; i++)
		h = fast_hash_u64(h, d[i]);
	return h;
}

static bool same_key(const struct fast_groups *b, const struct fast_group *g, uint32_t src,
		     const uint32_t *d, uint32_t n)
{
	return g->src == src && g->ndst == n &&
	       memcmp(b->dsts + g->dst0, d, n * sizeof *d) == 0;
}

/* Rebuild the table at nslot slots (a power of two). */
static int rehash(struct fast_groups *b, uint32_t nslot)
{
	uint32_t *slot = fast_calloc(nslot, sizeof *slot);

	if (!slot)
		return -1;
	for (uint32_t g = 0; g < b->n; g++) {
		const struct fast_group *gr = &b->groups[g];
		uint64_t i = key_hash(gr->src, b->dsts + gr->dst0, gr->ndst) & (nslot - 1);
		while (slot[i])
			i = (i + 1) & (nslot - 1);
		slot[i] = g + 1;
	}
	free(b->slot);
	b->slot = slot;
	b->nslot = nslot;
	return 0;
}

/* Room for one more group and n more destinations. */
static int reserve(struct fast_groups *b, uint32_t n, struct fast_err *err)
{
	if (b->n == b->cap) {
		uint64_t cap = b->cap ? (uint64_t)b->cap * 2 : 256;
		struct fast_group *g;
		if (cap > b->max_groups)
			cap = b->max_groups;
		g = fast_reallocarray(b->groups, (size_t)cap, sizeof *g);
		if (!g)
			return fast_err_set(err, FAST_ENOMEM, "out of memory for %llu token groups",
					    (unsigned long long)cap);
		b->groups = g;
		b->cap = (uint32_t)cap;
	}
	if (b->nd + n > b->dcap) {
		uint64_t cap = b->dcap ? b->dcap * 2 : 1024;
		uint32_t *d;
		while (cap < b->nd + n)
			cap *= 2;
		if (cap > UINT32_MAX)
			cap = UINT32_MAX;
		if (b->nd + n > cap)
			return fast_err_set(err, FAST_ELIMIT,
					    "more than 2^32 destination ids in one matrix");
		d = fast_reallocarray(b->dsts, (size_t)cap, sizeof *d);
		if (!d)
			return fast_err_set(err, FAST_ENOMEM, "out of memory for token groups");
		b->dsts = d;
		b->dcap = cap;
	}
	if ((uint64_t)2 * (b->n + 1) >= b->nslot &&
	    rehash(b, b->nslot ? b->nslot * 2 : 512) < 0)
		return fast_err_set(err, FAST_ENOMEM, "out of memory for token groups");
	return 0;
}

int fast_groups_add(struct fast_groups *b, uint32_t src, const uint32_t *dsts, uint32_t ndst,
		    uint64_t tokens, struct fast_err *err)
{
	uint64_t i;
	int rc;

	if (src >= b->ng || ndst == 0 || ndst > FAST_GROUP_MAX_DESTS)
		return fast_err_set(err, FAST_EINPUT,
				    "a token of GPU %u with %u destination GPUs (GPUs 0..%u, 1 to %u "
				    "destinations)",
				    src, ndst, b->ng - 1, FAST_GROUP_MAX_DESTS);
	for (uint32_t k = 0; k < ndst; k++)
		if (dsts[k] >= b->ng || (k > 0 && dsts[k] <= dsts[k - 1]))
			return fast_err_set(err, FAST_EINPUT,
					    "a token's destination GPUs must be ascending, distinct "
					    "and below %u",
					    b->ng);
	if (b->nslot) {
		for (i = key_hash(src, dsts, ndst) & (b->nslot - 1); b->slot[i];
		     i = (i + 1) & (b->nslot - 1)) {
			struct fast_group *g = &b->groups[b->slot[i] - 1];
			if (same_key(b, g, src, dsts, ndst)) {
				if (!fast_add_u64(g->tokens, tokens, &g->tokens))
					return fast_err_set(err, FAST_EINPUT,
							    "a token group's count exceeds 64 bits");
				return 0;
			}
		}
	}
	if (b->n >= b->max_groups)
		return fast_err_set(err, FAST_ELIMIT,
				    "more than %llu token groups (raise it with --max-groups)",
				    (unsigned long long)b->max_groups);
	if ((rc = reserve(b, ndst, err)) < 0)
		return rc;
	for (i = key_hash(src, dsts, ndst) & (b->nslot - 1); b->slot[i]; i = (i + 1) & (b->nslot - 1))
		;
	b->slot[i] = b->n + 1;
	b->groups[b->n] = (struct fast_group){ src, (uint32_t)b->nd, ndst, tokens };
	memcpy(b->dsts + b->nd, dsts, ndst * sizeof *dsts);
	b->nd += ndst;
	b->n++;
	return 0;
}

int fast_groups_finish(struct fast_groups *b, enum fast_traffic_kind kind, uint64_t token_bytes,
		       struct fast_matrix *m, struct fast_err *err)
{
	struct fast_group *g = fast_calloc(b->n ? b->n : 1, sizeof *g);
	uint32_t *d = fast_calloc(b->nd ? b->nd : 1, sizeof *d);
	uint32_t *start = fast_calloc((size_t)b->ng + 1, sizeof *start);
	uint32_t nd = 0;

	if (!g || !d || !start) {
		free(g);
		free(d);
		free(start);
		return fast_err_set(err, FAST_ENOMEM, "out of memory for %u token groups", b->n);
	}
	/* stable counting sort by source: first appearance within a source */
	for (uint32_t i = 0; i < b->n; i++)
		start[b->groups[i].src + 1]++;
	for (uint32_t s = 0; s < b->ng; s++)
		start[s + 1] += start[s];
	for (uint32_t i = 0; i < b->n; i++)
		g[start[b->groups[i].src]++] = b->groups[i];
	for (uint32_t i = 0; i < b->n; i++) {
		memcpy(d + nd, b->dsts + g[i].dst0, g[i].ndst * sizeof *d);
		g[i].dst0 = nd;
		nd += g[i].ndst;
	}
	free(start);
	free(m->groups);
	free(m->dsts);
	m->kind = kind;
	m->token_bytes = token_bytes;
	m->groups = g;
	m->ngroups = b->n;
	m->dsts = d;
	m->ndsts = nd;
	fast_groups_free(b);
	return fast_matrix_bytes_from_groups(m, b->ng, err);
}

int fast_matrix_copy_groups(struct fast_matrix *dst, const struct fast_matrix *src,
			    enum fast_traffic_kind kind, struct fast_err *err)
{
	struct fast_group *g = fast_calloc(src->ngroups ? src->ngroups : 1, sizeof *g);
	uint32_t *d = fast_calloc(src->ndsts ? src->ndsts : 1, sizeof *d);

	if (!g || !d) {
		free(g);
		free(d);
		return fast_err_set(err, FAST_ENOMEM, "out of memory for %u token groups",
				    src->ngroups);
	}
	memcpy(g, src->groups, src->ngroups * sizeof *g);
	memcpy(d, src->dsts, src->ndsts * sizeof *d);
	dst->kind = kind;
	dst->token_bytes = src->token_bytes;
	dst->groups = g;
	dst->ngroups = src->ngroups;
	dst->dsts = d;
	dst->ndsts = src->ndsts;
	return fast_matrix_bytes_from_groups(dst, src->ng, err);
}

int fast_matrix_dedup_bytes(const struct fast_matrix *m, uint32_t gpus_per_server,
			    uint64_t *per_gpu, uint64_t *per_server, struct fast_err *err)
{
	uint32_t ng = m->ng;
	uint32_t G = gpus_per_server ? gpus_per_server : ng;
	uint64_t pg = 0, ps = 0;

	if (m->kind == FAST_TRAFFIC_BYTES) {
		for (uint32_t s = 0; s < ng; s++)
			for (uint32_t d = 0; d < ng; d++)
				if (s / G != d / G &&
				    !fast_add_u64(pg, m->bytes[(size_t)s * ng + d], &pg))
					return fast_err_set(err, FAST_EINPUT,
							    "bytes crossing servers exceed 64 bits");
		ps = pg;
	}
	for (uint32_t g = 0; g < m->ngroups && m->kind != FAST_TRAFFIC_BYTES; g++) {
		const struct fast_group *gr = &m->groups[g];
		const uint32_t *d = m->dsts + gr->dst0;
		uint32_t home = gr->src / G, gpus = 0, servers = 0;
		uint64_t b = fast_group_bytes(m, g), x;

		/* destinations ascend, so their servers do: count the changes */
		for (uint32_t i = 0; i < gr->ndst; i++) {
			uint32_t sv = d[i] / G;
			if (sv == home)
				continue;
			gpus++;
			servers += i == 0 || d[i - 1] / G != sv;
		}
		if (!fast_mul_u64(b, gpus, &x) || !fast_add_u64(pg, x, &pg) ||
		    !fast_mul_u64(b, servers, &x) || !fast_add_u64(ps, x, &ps))
			return fast_err_set(err, FAST_EINPUT,
					    "group %u: bytes crossing servers exceed 64 bits", g);
	}
	if (per_gpu)
		*per_gpu = pg;
	if (per_server)
		*per_server = ps;
	return 0;
}
