/*
 * plan_validate.c - structural validation of a plan (plan.h:
 * fast_plan_validate: ranges, pieces, deps, lanes, and for token plans
 * masks and reduce steps), the agreement of a token plan with the matrix
 * it serves (fast_plan_fits_matrix), its topological order
 * (fast_plan_topo_order, smallest ready step id first) and the executor's
 * waves over that order (fast_plan_waves).  Every pass is linear or
 * n log n in the plan size.
 */
#include "fast/plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- validation and order ------------------------------------------------ */

static bool range_ok(uint64_t first, uint64_t count, size_t n)
{
	return first <= n && count <= n - first;
}

/* A piece of a byte plan names D[src][dst] (two GPUs); of a token plan
 * (src = group, dst = mask index) its group is checked against the
 * traffic (fast_plan_fits_matrix), its dst here: 0 in a dispatch plan, an
 * index of plan->masks in a combine plan. */
static int check_piece(const struct fast_plan *p, const struct fast_piece *pc, uint32_t ng,
		       struct fast_err *err, const char *where, uint64_t where_a, uint64_t where_b,
		       uint64_t k)
{
	const char *inner = where[0] == 's' ? "transfer" : "rail";
	uint64_t end;
	if (p->kind == FAST_TRAFFIC_BYTES && (pc->src >= ng || pc->dst >= ng))
		return fast_err_set(err, FAST_EINPUT,
				    "%s %llu %s %llu piece %llu: D[%u][%u] names a GPU out of range "
				    "(plan has %u GPUs)", where, (unsigned long long)where_a,
				    inner, (unsigned long long)where_b,
				    (unsigned long long)k, pc->src, pc->dst, ng);
	if (p->kind == FAST_TRAFFIC_DISPATCH && pc->dst != 0)
		return fast_err_set(err, FAST_EINPUT,
				    "%s %llu %s %llu piece %llu: a dispatch piece has no mask (got "
				    "%u, not 0)", where, (unsigned long long)where_a, inner,
				    (unsigned long long)where_b, (unsigned long long)k, pc->dst);
	if (p->kind == FAST_TRAFFIC_COMBINE && pc->dst >= p->nmasks)
		return fast_err_set(err, FAST_EINPUT,
				    "%s %llu %s %llu piece %llu: mask %u out of range (plan has %zu "
				    "masks)", where, (unsigned long long)where_a, inner,
				    (unsigned long long)where_b, (unsigned long long)k, pc->dst,
				    p->nmasks);
	if (pc->len == 0)
		return fast_err_set(err, FAST_EINPUT,
				    "%s %llu %s %llu piece %llu: length must be > 0", where,
				    (unsigned long long)where_a, inner, (unsigned long long)where_b,
				    (unsigned long long)k);
	if (!fast_add_u64(pc->off, pc->len, &end))
		return fast_err_set(err, FAST_EINPUT,
				    "%s %llu %s %llu piece %llu: offset + length overflows", where,
				    (unsigned long long)where_a, inner, (unsigned long long)where_b,
				    (unsigned long long)k);
	return 0;
}

/* A REDUCE step's transfer j: a sum at one GPU of pieces of one group and
 * one byte range whose masks are pairwise disjoint (pieces already
 * checked one by one). */
static int check_reduce(const struct fast_plan *p, size_t t, uint32_t j,
			const struct fast_xfer *x, struct fast_err *err)
{
	const struct fast_piece *first = &p->pieces[x->piece0];
	uint64_t seen = 0;

	if (x->from != x->to)
		return fast_err_set(err, FAST_EINPUT,
				    "step %zu sum %u: a reduce sums at one GPU (got GPU %u -> GPU %u)",
				    t, j, x->from, x->to);
	if (x->npieces == 0)
		return fast_err_set(err, FAST_EINPUT, "step %zu sum %u: a sum has >= 1 inputs", t, j);
	for (uint32_t k = 0; k < x->npieces; k++) {
		const struct fast_piece *pc = &p->pieces[x->piece0 + k];
		uint64_t mask = p->masks[pc->dst];
		if (pc->src != first->src || pc->off != first->off || pc->len != first->len)
			return fast_err_set(err, FAST_EINPUT,
					    "step %zu sum %u piece %u: the inputs of a sum are one group "
					    "and one byte range (group %u bytes %llu..%llu, not group "
					    "%u bytes %llu..%llu as piece 0)", t, j, k, pc->src,
					    (unsigned long long)pc->off,
					    (unsigned long long)(pc->off + pc->len), first->src,
					    (unsigned long long)first->off,
					    (unsigned long long)(first->off + first->len));
		if (seen & mask)
			return fast_err_set(err, FAST_EINPUT,
					    "step %zu sum %u piece %u: contributions 0x%llx are already "
					    "in an earlier input (the inputs of a sum are disjoint)", t,
					    j, k, (unsigned long long)(seen & mask));
		seen |= mask;
	}
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Permutation j of rail step t is a permutation of the servers (seen:
 * servers entries of scratch).  A step of one permutation names it "perm"
 * as before; of several, "permutation j". */
static int check_perm(const struct fast_plan *p, size_t t, uint32_t j, const uint32_t *perm,
		      bool *seen, struct fast_err *err)
{
	const struct fast_step *s = &p->steps[t];
	char name[48] = "perm";

	if (s->nperms > 1)
		snprintf(name, sizeof name, "permutation %u", j);
	memset(seen, 0, p->servers * sizeof *seen);
	for (uint32_t a = 0; a < p->servers; a++) {
		uint32_t b = perm[a];
		if (b >= p->servers)
			return fast_err_set(err, FAST_EINPUT,
					    "step %zu: %s[%u] = %u is not a server (plan has %u "
					    "servers)", t, name, a, b, p->servers);
		if (seen[b])
			return fast_err_set(err, FAST_EINPUT,
					    "step %zu: %s is not a permutation (server %u appears "
					    "twice)", t, name, b);
		seen[b] = true;
	}
	return 0;
}

static int validate_step(const struct fast_plan *p, size_t t, uint32_t ng, bool *seen,
			 struct fast_err *err)
{
	const struct fast_step *s = &p->steps[t];

	if ((unsigned)s->kind > FAST_STEP_REDUCE)
		return fast_err_set(err, FAST_EINPUT, "step %zu: unknown kind %d", t, (int)s->kind);
	if (s->kind == FAST_STEP_REDUCE) {
		if (p->kind != FAST_TRAFFIC_COMBINE)
			return fast_err_set(err, FAST_EINPUT,
					    "step %zu: a reduce step belongs to a combine plan (this "
					    "is a %s plan)", t, fast_traffic_kind_name(p->kind));
		if (s->tier != FAST_TIER_UP)
			return fast_err_set(err, FAST_EINPUT, "step %zu: a reduce step must be tier up",
					    t);
		if (s->chunks != 1)
			return fast_err_set(err, FAST_EINPUT,
					    "step %zu: a reduce step has one chunk (got %u)", t,
					    s->chunks);
	}
	if ((unsigned)s->tier > FAST_TIER_OUT)
		return fast_err_set(err, FAST_EINPUT, "step %zu: unknown tier %d", t, (int)s->tier);
	if (s->chunks == 0 || s->chunks > FAST_PLAN_MAX_CHUNKS)
		return fast_err_set(err, FAST_EINPUT, "step %zu: chunks must be in 1..%u (got %u)", t,
				    FAST_PLAN_MAX_CHUNKS, s->chunks);
	if (!range_ok(s->dep0, s->ndeps, p->ndeps))
		return fast_err_set(err, FAST_EINPUT, "step %zu: dependency range out of bounds", t);
	for (uint32_t j = 0; j < s->ndeps; j++) {
		const struct fast_dep *d = &p->deps[s->dep0 + j];
		if (d->step >= p->nsteps)
			return fast_err_set(err, FAST_EINPUT,
					    "step %zu: dependency %u names unknown step %u (plan has "
					    "%zu steps)", t, j, d->step, p->nsteps);
		if (d->step == t)
			return fast_err_set(err, FAST_EINPUT, "step %zu: depends on itself", t);
		if (d->pipelined && p->steps[d->step].chunks != s->chunks)
			return fast_err_set(err, FAST_EINPUT,
					    "step %zu: pipelined dependency on step %u needs equal chunk "
					    "counts (%u here, %u there)", t, d->step, s->chunks,
					    p->steps[d->step].chunks);
	}
	if ((s->kind == FAST_STEP_RAIL || s->kind == FAST_STEP_REDIST) && s->nxfers != 0)
		return fast_err_set(err, FAST_EINPUT, "step %zu: a %s step has no explicit transfers",
				    t, s->kind == FAST_STEP_RAIL ? "rail" : "redistribution");
	if (!range_ok(s->xfer0, s->nxfers, p->nxfers))
		return fast_err_set(err, FAST_EINPUT, "step %zu: transfer range out of bounds", t);
	for (uint32_t j = 0; j < s->nxfers; j++) {
		const struct fast_xfer *x = &p->xfers[s->xfer0 + j];
		if (x->from >= ng || x->to >= ng)
			return fast_err_set(err, FAST_EINPUT,
					    "step %zu transfer %u: GPU %u -> GPU %u out of range (plan "
					    "has %u GPUs)", t, j, x->from, x->to, ng);
		if (!range_ok(x->piece0, x->npieces, p->npieces))
			return fast_err_set(err, FAST_EINPUT,
					    "step %zu transfer %u: piece range out of bounds", t, j);
		for (uint32_t k = 0; k < x->npieces; k++)
			if (check_piece(p, &p->pieces[x->piece0 + k], ng, err, "step", t, j, k) < 0)
				return FAST_EINPUT;
		if (s->kind == FAST_STEP_REDUCE && check_reduce(p, t, j, x, err) < 0)
			return FAST_EINPUT;
	}
	if (s->kind == FAST_STEP_RAIL) {
		if (s->tier != FAST_TIER_OUT)
			return fast_err_set(err, FAST_EINPUT, "step %zu: a rail step must be tier out", t);
		if (s->nperms == 0)
			return fast_err_set(err, FAST_EINPUT, "step %zu: a rail step has no permutation",
					    t);
		if ((uint64_t)s->nperms * p->servers > UINT32_MAX ||
		    !range_ok(s->perm0, s->nperms * p->servers, p->nperm) ||
		    !range_ok(s->budget0, s->nperms, p->nbudgets))
			return fast_err_set(err, FAST_EINPUT, "step %zu: permutation out of bounds", t);
		for (uint32_t j = 0; j < s->nperms; j++)
			if (check_perm(p, t, j, p->perm + s->perm0 + (size_t)j * p->servers, seen,
				       err) < 0)
				return FAST_EINPUT;
	}
	if (s->kind == FAST_STEP_REDIST) {
		if (s->tier != FAST_TIER_UP)
			return fast_err_set(err, FAST_EINPUT,
					    "step %zu: a redistribution step must be tier up", t);
		if (s->stage >= p->nsteps)
			return fast_err_set(err, FAST_EINPUT,
					    "step %zu: redistributes unknown step %u (plan has %zu "
					    "steps)", t, s->stage, p->nsteps);
		if (p->steps[s->stage].kind != FAST_STEP_RAIL)
			return fast_err_set(err, FAST_EINPUT,
					    "step %zu: redistributes step %u, which is not a rail step",
					    t, s->stage);
	}
	return 0;
}

static int validate_lanes(const struct fast_plan *p, uint32_t ng, struct fast_err *err)
{
	uint64_t *keys;
	int rc = 0;

	if (p->nlanes == 0)
		return 0;
	keys = fast_calloc(p->nlanes, sizeof *keys);
	if (!keys)
		return fast_err_set(err, FAST_ENOMEM, "plan: out of memory (lanes)");
	for (size_t l = 0; l < p->nlanes && rc == 0; l++) {
		const struct fast_lane *ln = &p->lanes[l];
		if (ln->src_server >= p->servers || ln->dst_server >= p->servers ||
		    ln->rail >= p->gpus) {
			rc = fast_err_set(err, FAST_EINPUT,
					  "lane %zu (server %u -> server %u, rail %u): out of range "
					  "(plan has %u servers of %u GPUs)", l, ln->src_server,
					  ln->dst_server, ln->rail, p->servers, p->gpus);
			break;
		}
		if (ln->src_server == ln->dst_server) {
			rc = fast_err_set(err, FAST_EINPUT,
					  "lane %zu (server %u -> server %u, rail %u): a lane joins two "
					  "different servers", l, ln->src_server, ln->dst_server, ln->rail);
			break;
		}
		if (!range_ok(ln->piece0, ln->npieces, p->npieces)) {
			rc = fast_err_set(err, FAST_EINPUT, "lane %zu: piece range out of bounds", l);
			break;
		}
		for (uint32_t k = 0; k < ln->npieces && rc == 0; k++)
			rc = check_piece(p, &p->pieces[ln->piece0 + k], ng, err, "lane", l, ln->rail, k);
		keys[l] = ((uint64_t)ln->src_server * p->servers + ln->dst_server) * p->gpus +
			  ln->rail;
	}
	if (rc == 0) {
		qsort(keys, p->nlanes, sizeof *keys, cmp_u64);
		for (size_t l = 1; l < p->nlanes; l++)
			if (keys[l] == keys[l - 1]) {
				uint64_t k = keys[l];
				rc = fast_err_set(err, FAST_EINPUT,
						  "lane (server %llu -> server %llu, rail %llu) declared "
						  "twice",
						  (unsigned long long)(k / p->gpus / p->servers),
						  (unsigned long long)(k / p->gpus % p->servers),
						  (unsigned long long)(k % p->gpus));
				break;
			}
	}
	free(keys);
	return rc;
}

int fast_plan_validate(const struct fast_plan *p, struct fast_err *err)
{
	uint64_t ng64 = (uint64_t)p->servers * p->gpus;
	bool *seen;
	int rc = 0;

	if (p->servers == 0 || p->gpus == 0)
		return fast_err_set(err, FAST_EINPUT, "plan: servers and gpus must be >= 1 (got %u x %u)",
				    p->servers, p->gpus);
	if (ng64 > INT32_MAX)
		return fast_err_set(err, FAST_EINPUT, "plan: %u servers x %u GPUs is too many",
				    p->servers, p->gpus);
	if (p->nsteps > INT32_MAX)
		return fast_err_set(err, FAST_EINPUT, "plan: too many steps");
	if ((unsigned)p->kind > FAST_TRAFFIC_COMBINE)
		return fast_err_set(err, FAST_EINPUT, "plan: unknown kind %d", (int)p->kind);
	if (p->kind != FAST_TRAFFIC_COMBINE && p->nmasks)
		return fast_err_set(err, FAST_EINPUT, "plan: a %s plan has no masks (got %zu)",
				    fast_traffic_kind_name(p->kind), p->nmasks);
	for (size_t k = 0; k < p->nmasks; k++)
		if (p->masks[k] == 0)
			return fast_err_set(err, FAST_EINPUT,
					    "plan: mask %zu is empty (a value carries >= 1 contributions)",
					    k);
	seen = fast_calloc(p->servers, sizeof *seen);
	if (!seen)
		return fast_err_set(err, FAST_ENOMEM, "plan: out of memory");
	for (size_t t = 0; t < p->nsteps && rc == 0; t++)
		rc = validate_step(p, t, (uint32_t)ng64, seen, err);
	free(seen);
	if (rc == 0)
		rc = validate_lanes(p, (uint32_t)ng64, err);
	if (rc == 0 && p->nsteps) {
		uint32_t *order = fast_calloc(p->nsteps, sizeof *order);
		if (!order)
			return fast_err_set(err, FAST_ENOMEM, "plan: out of memory");
		rc = fast_plan_topo_order(p, order, err);
		free(order);
	}
	return rc;
}

/* min-heap of step ids: the topological order takes the smallest ready id
 * first, so a plan whose deps all point backwards is in id order. */
static void heap_push(uint32_t *h, size_t *n, uint32_t v)
{
	size_t i = (*n)++;
	while (i > 0 && h[(i - 1) / 2] > v) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = v;
}

static uint32_t heap_pop(uint32_t *h, size_t *n)
{
	uint32_t top = h[0], v = h[--*n];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= *n)
			break;
		if (c + 1 < *n && h[c + 1] < h[c])
			c++;
		if (h[c] >= v)
			break;
		h[i] = h[c];
		i = c;
	}
	if (*n)
		h[i] = v;
	return top;
}

int fast_plan_topo_order(const struct fast_plan *p, uint32_t *order, struct fast_err *err)
{
	size_t n = p->nsteps, nh = 0, done = 0;
	uint32_t *indeg, *start, *adj, *heap;
	int rc = 0;

	if (n == 0)
		return 0;
	indeg = fast_calloc(n, sizeof *indeg);
	start = fast_calloc(n + 1, sizeof *start);
	adj = fast_calloc(p->ndeps ? p->ndeps : 1, sizeof *adj);
	heap = fast_calloc(n, sizeof *heap);
	if (!indeg || !start || !adj || !heap) {
		rc = fast_err_set(err, FAST_ENOMEM, "plan: out of memory (order)");
		goto out;
	}
	/* dependents in CSR form: u -> t for every dep of t on u */
	for (size_t t = 0; t < n; t++) {
		const struct fast_step *s = &p->steps[t];
		if (!range_ok(s->dep0, s->ndeps, p->ndeps)) {
			rc = fast_err_set(err, FAST_EINPUT, "step %zu: dependency range out of bounds", t);
			goto out;
		}
		for (uint32_t j = 0; j < s->ndeps; j++) {
			uint32_t u = p->deps[s->dep0 + j].step;
			if (u >= n) {
				rc = fast_err_set(err, FAST_EINPUT,
						  "step %zu: dependency %u names unknown step %u (plan "
						  "has %zu steps)", t, j, u, n);
				goto out;
			}
			start[u + 1]++;
			indeg[t]++;
		}
	}
	for (size_t u = 0; u < n; u++)
		start[u + 1] += start[u];
	{
		uint32_t *fill = heap; /* reuse as a cursor array before the walk */
		memcpy(fill, start, n * sizeof *fill);
		for (size_t t = 0; t < n; t++) {
			const struct fast_step *s = &p->steps[t];
			for (uint32_t j = 0; j < s->ndeps; j++)
				adj[fill[p->deps[s->dep0 + j].step]++] = (uint32_t)t;
		}
	}
	for (size_t t = 0; t < n; t++)
		if (indeg[t] == 0)
			heap_push(heap, &nh, (uint32_t)t);
	while (nh) {
		uint32_t u = heap_pop(heap, &nh);
		order[done++] = u;
		for (uint32_t e = start[u]; e < start[u + 1]; e++)
			if (--indeg[adj[e]] == 0)
				heap_push(heap, &nh, adj[e]);
	}
	if (done < n) {
		/* every step left has a dep left: walking deps backwards from
		 * any of them must revisit a step, which lies on a cycle */
		uint32_t t = 0;
		while (indeg[t] == 0)
			t++;
		memset(start, 0, (n + 1) * sizeof *start); /* visit marks */
		while (!start[t]) {
			const struct fast_step *s = &p->steps[t];
			start[t] = 1;
			for (uint32_t j = 0; j < s->ndeps; j++) {
				uint32_t u = p->deps[s->dep0 + j].step;
				if (indeg[u] != 0) {
					t = u;
					break;
				}
			}
		}
		/* t is on the cycle: list it (at most a few ids) */
		char buf[160];
		size_t len = 0;
		uint32_t c = t;
		int k = 0;
		do {
			len += (size_t)snprintf(buf + len, sizeof buf - len, "%u -> ", c);
			const struct fast_step *s = &p->steps[c];
			for (uint32_t j = 0; j < s->ndeps; j++) {
				uint32_t u = p->deps[s->dep0 + j].step;
				if (indeg[u] != 0 && start[u]) {
					c = u;
					break;
				}
			}
			k++;
		} while (c != t && k < 8 && len < sizeof buf - 40);
		if (c == t)
			snprintf(buf + len, sizeof buf - len, "%u", t);
		else
			snprintf(buf + len, sizeof buf - len, "...");
		rc = fast_err_set(err, FAST_EINPUT,
				  "step %u: dependency cycle (step %s, each waiting for the next)", t, buf);
	}
out:
	free(indeg);
	free(start);
	free(adj);
	free(heap);
	return rc;
}

/* --- waves ------------------------------------------------------------------ */

void fast_plan_waves_free(struct fast_plan_waves *w)
{
	if (!w)
		return;
	free(w->node0);
	free(w->wave);
	w->node0 = NULL;
	w->wave = NULL;
	w->nwaves = 0;
}

int fast_plan_waves(const struct fast_plan *p, uint32_t passes, struct fast_plan_waves *out,
		    struct fast_err *err)
{
	size_t nsteps = p->nsteps;
	struct fast_plan_waves w = { 0 };
	uint32_t *order = fast_calloc(nsteps ? nsteps : 1, sizeof *order);
	uint32_t *maxw = fast_calloc(nsteps ? nsteps : 1, sizeof *maxw); /* by step */
	int rc;

	w.node0 = fast_calloc(nsteps + 1, sizeof *w.node0);
	if (!order || !maxw || !w.node0) {
		rc = fast_err_set(err, FAST_ENOMEM, "plan: out of memory (waves)");
		goto out;
	}
	for (size_t s = 0; s < nsteps; s++)
		w.node0[s + 1] = w.node0[s] + (passes > 1 || !p->steps[s].chunks ? 1 : p->steps[s].chunks);
	w.wave = fast_calloc(w.node0[nsteps] ? w.node0[nsteps] : 1, sizeof *w.wave);
	if (!w.wave) {
		rc = fast_err_set(err, FAST_ENOMEM, "plan: out of memory (waves)");
		goto out;
	}
	if ((rc = fast_plan_topo_order(p, order, err)) < 0)
		goto out;
	for (size_t i = 0; i < nsteps; i++) {
		uint32_t s = order[i];
		const struct fast_step *st = &p->steps[s];
		size_t k = w.node0[s + 1] - w.node0[s];
		for (size_t c = 0; c < k; c++) {
			uint32_t L = c > 0 ? w.wave[w.node0[s] + c - 1] : 0;
			for (uint32_t d = 0; d < st->ndeps; d++) {
				const struct fast_dep *dp = &p->deps[st->dep0 + d];
				size_t dk = w.node0[dp->step + 1] - w.node0[dp->step];
				uint32_t need = dp->pipelined && passes <= 1 && dk == k
					? w.wave[w.node0[dp->step] + c] + 1 : maxw[dp->step] + 1;
				if (need > L)
					L = need;
			}
			w.wave[w.node0[s] + c] = L;
			if (L > maxw[s])
				maxw[s] = L;
			if (L + 1 > w.nwaves)
				w.nwaves = L + 1;
		}
	}
	*out = w;
	w.node0 = NULL;
	w.wave = NULL;
out:
	fast_plan_waves_free(&w);
	free(order);
	free(maxw);
	return rc;
}
