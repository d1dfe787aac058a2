/*
 * plan_expand.c - expansion of a plan's compact forms (lanes, rail stages,
 * implied redistributions) into explicit transfers: fast_plan_expand, the
 * form every consumer that walks transfers one by one reads.  Linear (or
 * n log n for the sorts) in the size of the expanded plan.
 */
#include "plan.h"

#include <stdlib.h>
#include <string.h>

/* --- expansion ------------------------------------------------------------ */

struct lane_key {
	uint64_t key;
	uint32_t lane;
};

static int cmp_lane_key(const void *a, const void *b)
{
	const struct lane_key *x = a, *y = b;
	return x->key < y->key ? -1 : x->key > y->key;
}

static int64_t find_lane(const struct lane_key *keys, size_t n, uint64_t key)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (keys[mid].key < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && keys[lo].key == key ? (int64_t)keys[lo].lane : -1;
}

/* Pass 1: every rail step's transfers, in ascending step id order (which
 * is the order lane cursors are consumed in), into scratch step railx[t]. */
static int expand_rails(const struct fast_plan *p, struct fast_plan *scratch, uint32_t *railx,
			struct fast_err *err)
{
	struct lane_key *keys = NULL;
	uint32_t *cur_piece = NULL;
	uint64_t *cur_off = NULL;
	int rc = 0;
	size_t nl = p->nlanes ? p->nlanes : 1;

	keys = fast_calloc(nl, sizeof *keys);
	cur_piece = fast_calloc(nl, sizeof *cur_piece);
	cur_off = fast_calloc(nl, sizeof *cur_off);
	if (!keys || !cur_piece || !cur_off) {
		rc = fast_err_set(err, FAST_ENOMEM, "plan: out of memory (expansion)");
		goto out;
	}
	for (size_t l = 0; l < p->nlanes; l++) {
		const struct fast_lane *ln = &p->lanes[l];
		keys[l].key = ((uint64_t)ln->src_server * p->servers + ln->dst_server) * p->gpus +
			      ln->rail;
		keys[l].lane = (uint32_t)l;
	}
	if (p->nlanes > 1)
		qsort(keys, p->nlanes, sizeof *keys, cmp_lane_key);

	for (size_t t = 0; t < p->nsteps; t++) {
		const struct fast_step *s = &p->steps[t];
		if (s->kind != FAST_STEP_RAIL)
			continue;
		rc = fast_plan_add_step(scratch, FAST_STEP_EXPLICIT, FAST_TIER_OUT, err);
		if (rc < 0)
			goto out;
		railx[t] = (uint32_t)rc;
		rc = 0;
		if (s->budget == 0)
			continue;
		for (uint32_t a = 0; a < p->servers; a++) {
			uint32_t b = p->perm[s->perm0 + a];
			if (b == a)
				continue; /* idle (padded diagonal) slot */
			for (uint32_t i = 0; i < p->gpus; i++) {
				uint64_t key = ((uint64_t)a * p->servers + b) * p->gpus + i;
				int64_t l = find_lane(keys, p->nlanes, key);
				if (l < 0)
					continue; /* an absent lane is empty */
				const struct fast_lane *ln = &p->lanes[l];
				uint64_t left = s->budget;
				bool started = false;
				while (left > 0 && cur_piece[l] < ln->npieces) {
					const struct fast_piece *pc = &p->pieces[ln->piece0 + cur_piece[l]];
					uint64_t avail = pc->len - cur_off[l];
					uint64_t take = avail < left ? avail : left;
					if (!started) {
						rc = fast_plan_add_xfer(scratch, a * p->gpus + i,
									b * p->gpus + i, err);
						if (rc < 0)
							goto out;
						started = true;
					}
					rc = fast_plan_add_piece(scratch, pc->src, pc->dst,
								 pc->off + cur_off[l], take, err);
					if (rc < 0)
						goto out;
					left -= take;
					cur_off[l] += take;
					if (cur_off[l] == pc->len) {
						cur_piece[l]++;
						cur_off[l] = 0;
					}
				}
			}
		}
	}
out:
	free(keys);
	free(cur_piece);
	free(cur_off);
	return rc;
}

struct redist_item {
	uint32_t to, dst, seq; /* receiving GPU, final GPU, arrival order */
	uint32_t piece;        /* index in scratch->pieces */
};

static int cmp_redist(const void *a, const void *b)
{
	const struct redist_item *x = a, *y = b;
	if (x->to != y->to)
		return x->to < y->to ? -1 : 1;
	if (x->dst != y->dst)
		return x->dst < y->dst ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Sort items by (to, dst, seq) as cmp_redist does, in linear time: they
 * come in seq order, so two stable counting passes (dst, then to) do it.
 * Returns -1 (items untouched) when out of memory or a GPU is out of
 * range. */
static int sort_redist(struct redist_item *items, size_t n, uint32_t ng)
{
	struct redist_item *tmp = fast_calloc(n, sizeof *tmp);
	uint32_t *cnt = fast_calloc((size_t)ng + 1, sizeof *cnt);
	int rc = -1;

	if (!tmp || !cnt)
		goto out;
	for (size_t i = 0; i < n; i++)
		if (items[i].to >= ng || items[i].dst >= ng)
			goto out;
	for (size_t i = 0; i < n; i++)
		cnt[items[i].dst + 1]++;
	for (uint32_t g = 0; g < ng; g++)
		cnt[g + 1] += cnt[g];
	for (size_t i = 0; i < n; i++)
		tmp[cnt[items[i].dst]++] = items[i];
	memset(cnt, 0, ((size_t)ng + 1) * sizeof *cnt);
	for (size_t i = 0; i < n; i++)
		cnt[tmp[i].to + 1]++;
	for (uint32_t g = 0; g < ng; g++)
		cnt[g + 1] += cnt[g];
	for (size_t i = 0; i < n; i++)
		items[cnt[tmp[i].to]++] = tmp[i];
	rc = 0;
out:
	free(tmp);
	free(cnt);
	return rc;
}

/* The implied redistribution of a rail stage: each receiving GPU forwards
 * every piece whose orig dst is another GPU, one transfer per (receiver,
 * dst) pair ordered by receiver then dst, pieces in arrival order. */
static int expand_redist(const struct fast_plan *scratch, uint32_t sstep, struct fast_plan *out,
			 struct fast_err *err)
{
	const struct fast_step *s = &scratch->steps[sstep];
	size_t n = 0, cap = 0;
	struct redist_item *items = NULL;
	int rc = 0;
	uint32_t seq = 0;

	for (uint32_t j = 0; j < s->nxfers; j++)
		cap += scratch->xfers[s->xfer0 + j].npieces;
	items = fast_calloc(cap ? cap : 1, sizeof *items);
	if (!items)
		return fast_err_set(err, FAST_ENOMEM, "plan: out of memory (redistribution)");
	for (uint32_t j = 0; j < s->nxfers; j++) {
		const struct fast_xfer *x = &scratch->xfers[s->xfer0 + j];
		for (uint32_t k = 0; k < x->npieces; k++) {
			const struct fast_piece *pc = &scratch->pieces[x->piece0 + k];
			if (pc->dst == x->to)
				continue; /* final at the receiver */
			items[n].to = x->to;
			items[n].dst = pc->dst;
			items[n].seq = seq++;
			items[n].piece = x->piece0 + k;
			n++;
		}
	}
	if (n > 1 && sort_redist(items, n, scratch->servers * scratch->gpus) < 0)
		qsort(items, n, sizeof *items, cmp_redist); /* (no memory: in place) */
	for (size_t i = 0; i < n && rc == 0; i++) {
		const struct fast_piece *pc = &scratch->pieces[items[i].piece];
		if (i == 0 || items[i].to != items[i - 1].to || items[i].dst != items[i - 1].dst)
			rc = fast_plan_add_xfer(out, items[i].to, items[i].dst, err);
		if (rc == 0)
			rc = fast_plan_add_piece(out, pc->src, pc->dst, pc->off, pc->len, err);
	}
	free(items);
	return rc;
}

static int copy_xfers(const struct fast_plan *src, const struct fast_step *s,
		      struct fast_plan *out, struct fast_err *err)
{
	for (uint32_t j = 0; j < s->nxfers; j++) {
		const struct fast_xfer *x = &src->xfers[s->xfer0 + j];
		if (fast_plan_add_xfer(out, x->from, x->to, err) < 0)
			return err ? err->code : FAST_ENOMEM;
		for (uint32_t k = 0; k < x->npieces; k++) {
			const struct fast_piece *pc = &src->pieces[x->piece0 + k];
			if (fast_plan_add_piece(out, pc->src, pc->dst, pc->off, pc->len, err) < 0)
				return err ? err->code : FAST_ENOMEM;
		}
	}
	return 0;
}

int fast_plan_expand(const struct fast_plan *p, struct fast_plan *out, struct fast_err *err)
{
	struct fast_plan scratch, e;
	uint32_t *railx = NULL;
	int rc;

	rc = fast_plan_validate(p, err);
	if (rc < 0)
		return rc;
	fast_plan_init(&scratch, p->servers, p->gpus, p->algo);
	fast_plan_init(&e, p->servers, p->gpus, p->algo);
	memcpy(e.label, p->label, sizeof e.label);
	memcpy(e.options, p->options, sizeof e.options);
	e.matrix = p->matrix;
	railx = fast_calloc(p->nsteps ? p->nsteps : 1, sizeof *railx);
	if (!railx) {
		rc = fast_err_set(err, FAST_ENOMEM, "plan: out of memory (expansion)");
		goto fail;
	}
	rc = expand_rails(p, &scratch, railx, err);
	if (rc < 0)
		goto fail;
	for (size_t t = 0; t < p->nsteps; t++) {
		const struct fast_step *s = &p->steps[t];
		rc = fast_plan_add_step(&e, FAST_STEP_EXPLICIT, s->tier, err);
		if (rc < 0)
			goto fail;
		e.steps[t].chunks = s->chunks;
		for (uint32_t j = 0; j < s->ndeps && rc >= 0; j++)
			rc = fast_plan_add_dep(&e, (uint32_t)t, p->deps[s->dep0 + j].step,
					       p->deps[s->dep0 + j].pipelined != 0, err);
		if (rc < 0)
			goto fail;
		switch (s->kind) {
		case FAST_STEP_EXPLICIT:
			rc = copy_xfers(p, s, &e, err);
			break;
		case FAST_STEP_RAIL:
			rc = copy_xfers(&scratch, &scratch.steps[railx[t]], &e, err);
			break;
		case FAST_STEP_REDIST:
			rc = expand_redist(&scratch, railx[s->stage], &e, err);
			break;
		}
		if (rc < 0)
			goto fail;
	}
	e.open_kind = FAST_OPEN_NONE;
	fast_plan_free(&scratch);
	free(railx);
	*out = e;
	return 0;
fail:
	fast_plan_free(&scratch);
	fast_plan_free(&e);
	free(railx);
	return rc;
}
