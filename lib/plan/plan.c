/*
 * plan.c - the plan IR (plan.h): building a plan step by step and
 * expanding its compact forms (lanes, rail stages, implied
 * redistributions) into explicit transfers.  The expansion stays with the
 * builder because it is the builder's hot client: it appends every piece
 * through fast_plan_add_piece / fast_plan_add_xfer, which the compiler
 * inlines only within one file (in a file of its own, every piece costs
 * one more call).  The compilers' bulk path (room written in place and
 * committed, reservations, trimming) is plan_space.c; validation and
 * topological order are in plan_validate.c, the JSON file format in
 * plan_json.c (and its reader plan_json_read.c), the plan view and
 * summaries in plan_view.c, hashing, the plan's identity, in plan_hash.c;
 * plan.h is the one header of them all.
 *
 * Workload: plans for up to thousands of GPUs, 10^4..10^5 steps and 10^5..10^7
 * pieces.  Storage is a handful of flat arrays grown by doubling; every pass
 * here is linear (or n log n) in the plan size.
 */
#include "fast/plan.h"
#include "lib/plan/plan_internal.h"

#include <stdlib.h>
#include <string.h>

/* --- building ------------------------------------------------------------ */

void fast_plan_init(struct fast_plan *p, uint32_t servers, uint32_t gpus, const char *algo)
{
	memset(p, 0, sizeof *p);
	p->servers = servers;
	p->gpus = gpus;
	if (algo)
		snprintf(p->algo, sizeof p->algo, "%s", algo);
}

void fast_plan_reset(struct fast_plan *p, uint32_t servers, uint32_t gpus, const char *algo)
{
	struct fast_plan keep = *p;

	fast_plan_init(p, servers, gpus, algo);
	p->steps = keep.steps;
	p->cap_steps = keep.cap_steps;
	p->deps = keep.deps;
	p->cap_deps = keep.cap_deps;
	p->xfers = keep.xfers;
	p->cap_xfers = keep.cap_xfers;
	p->pieces = keep.pieces;
	p->cap_pieces = keep.cap_pieces;
	p->lanes = keep.lanes;
	p->cap_lanes = keep.cap_lanes;
	p->perm = keep.perm;
	p->cap_perm = keep.cap_perm;
	p->budgets = keep.budgets;
	p->cap_budgets = keep.cap_budgets;
	p->masks = keep.masks;
	p->cap_masks = keep.cap_masks;
}

void fast_plan_free(struct fast_plan *p)
{
	if (!p)
		return;
	free(p->steps);
	free(p->deps);
	free(p->xfers);
	free(p->pieces);
	free(p->lanes);
	free(p->perm);
	free(p->budgets);
	free(p->masks);
	memset(p, 0, sizeof *p);
}

void fast_planset_free(struct fast_planset *ps)
{
	if (!ps)
		return;
	for (uint32_t i = 0; i < ps->count; i++)
		fast_plan_free(&ps->plans[i]);
	free(ps->plans);
	ps->plans = NULL;
	ps->count = 0;
}

const char *fast_step_kind_name(enum fast_step_kind kind, enum fast_tier_id tier)
{
	switch (kind) {
	case FAST_STEP_RAIL:
		return "rail";
	case FAST_STEP_REDIST:
		return "redist";
	case FAST_STEP_REDUCE:
		return "reduce";
	default:
		return tier == FAST_TIER_OUT ? "out" : "up";
	}
}

/* Make room for one more element of size sz in *arr (n used, *cap allocated). */
static int grow(void **arr, size_t n, size_t *cap, size_t sz, struct fast_err *err)
{
	if (n < *cap)
		return 0;
	/* ranges are uint32_t: at most UINT32_MAX - 1 elements per array */
	if (n >= UINT32_MAX - 1)
		return fast_err_set(err, FAST_ENOMEM, "plan: more than %u elements in one array",
				    UINT32_MAX - 1);
	if (fast_grow(arr, cap, n + 1, sz, 16) < 0)
		return fast_err_set(err, FAST_ENOMEM, "plan: out of memory (%zu elements)",
				    *cap ? *cap * 2 : (size_t)16);
	return 0;
}

#define GROW(p, name, err) \
	grow((void **)&(p)->name, (p)->n##name, &(p)->cap_##name, sizeof *(p)->name, err)


int fast_plan_add_step(struct fast_plan *p, enum fast_step_kind kind, enum fast_tier_id tier,
		       struct fast_err *err)
{
	if (p->nsteps >= INT32_MAX)
		return fast_err_set(err, FAST_ENOMEM, "plan: too many steps");
	if (GROW(p, steps, err) < 0)
		return FAST_ENOMEM;
	struct fast_step *s = &p->steps[p->nsteps];
	memset(s, 0, sizeof *s);
	s->kind = kind;
	s->tier = tier;
	s->dep0 = (uint32_t)p->ndeps;
	s->xfer0 = (uint32_t)p->nxfers;
	s->perm0 = (uint32_t)p->nperm;
	s->budget0 = (uint32_t)p->nbudgets;
	s->chunks = 1;
	p->open_kind = FAST_OPEN_NONE;
	return (int)p->nsteps++;
}

int fast_plan_add_dep(struct fast_plan *p, uint32_t step, uint32_t on, bool pipelined,
		      struct fast_err *err)
{
	struct fast_step *s = fast_plan_last_step(p, "a dependency", err);
	if (!s)
		return FAST_EINPUT;
	if (step != p->nsteps - 1)
		return fast_err_set(err, FAST_EINPUT,
				    "plan builder: dependency added to step %u, not the last step %zu",
				    step, p->nsteps - 1);
	if (s->ndeps == 0)
		s->dep0 = (uint32_t)p->ndeps;
	else if (s->dep0 + s->ndeps != p->ndeps)
		return fast_err_set(err, FAST_EINPUT, "plan builder: step %u's deps are not contiguous",
				    step);
	if (GROW(p, deps, err) < 0)
		return FAST_ENOMEM;
	p->deps[p->ndeps].step = on;
	p->deps[p->ndeps].pipelined = pipelined ? 1 : 0;
	p->ndeps++;
	s->ndeps++;
	return 0;
}

int fast_plan_add_xfer(struct fast_plan *p, uint32_t from, uint32_t to, struct fast_err *err)
{
	struct fast_step *s = fast_plan_xfer_step(p, err);
	if (!s)
		return FAST_EINPUT;
	if (s->nxfers == 0)
		s->xfer0 = (uint32_t)p->nxfers;
	else if (s->xfer0 + s->nxfers != p->nxfers)
		return fast_err_set(err, FAST_EINPUT,
				    "plan builder: step %zu's transfers are not contiguous", p->nsteps - 1);
	if (GROW(p, xfers, err) < 0)
		return FAST_ENOMEM;
	struct fast_xfer *x = &p->xfers[p->nxfers++];
	x->from = from;
	x->to = to;
	x->piece0 = (uint32_t)p->npieces;
	x->npieces = 0;
	x->bytes = 0;
	s->nxfers++;
	p->open_kind = FAST_OPEN_XFER;
	return 0;
}

/* Append a piece to a range (piece0, npieces, bytes) that must end at the
 * end of the piece array. */
static int append_piece(struct fast_plan *p, uint32_t *piece0, uint32_t *npieces,
			uint64_t *bytes, uint32_t src, uint32_t dst, uint64_t off, uint64_t len,
			const char *what, struct fast_err *err)
{
	uint64_t nb;
	if (*npieces == 0)
		*piece0 = (uint32_t)p->npieces;
	else if (*piece0 + *npieces != p->npieces)
		return fast_err_set(err, FAST_EINPUT,
				    "plan builder: the %s's pieces are not contiguous (another "
				    "transfer or lane was started since)", what);
	if (!fast_add_u64(*bytes, len, &nb))
		return fast_err_set(err, FAST_EINPUT, "plan builder: %s bytes overflow", what);
	if (GROW(p, pieces, err) < 0)
		return FAST_ENOMEM;
	struct fast_piece *pc = &p->pieces[p->npieces++];
	pc->src = src;
	pc->dst = dst;
	pc->off = off;
	pc->len = len;
	(*npieces)++;
	*bytes = nb;
	return 0;
}

int fast_plan_add_piece(struct fast_plan *p, uint32_t src, uint32_t dst, uint64_t off,
			uint64_t len, struct fast_err *err)
{
	if (p->open_kind == FAST_OPEN_LANE)
		return fast_plan_add_lane_piece(p, src, dst, off, len, err);
	if (p->open_kind != FAST_OPEN_XFER || p->nxfers == 0)
		return fast_err_set(err, FAST_EINPUT, "plan builder: piece added with no open transfer");
	struct fast_xfer *x = &p->xfers[p->nxfers - 1];
	return append_piece(p, &x->piece0, &x->npieces, &x->bytes, src, dst, off, len,
			    "transfer", err);
}

int fast_plan_add_lane(struct fast_plan *p, uint32_t src_server, uint32_t dst_server,
		       uint32_t rail, struct fast_err *err)
{
	if (GROW(p, lanes, err) < 0)
		return FAST_ENOMEM;
	struct fast_lane *l = &p->lanes[p->nlanes++];
	l->src_server = src_server;
	l->dst_server = dst_server;
	l->rail = rail;
	l->piece0 = (uint32_t)p->npieces;
	l->npieces = 0;
	l->bytes = 0;
	p->open_kind = FAST_OPEN_LANE;
	return 0;
}

int fast_plan_add_lane_piece(struct fast_plan *p, uint32_t src, uint32_t dst, uint64_t off,
			     uint64_t len, struct fast_err *err)
{
	if (p->nlanes == 0)
		return fast_err_set(err, FAST_EINPUT, "plan builder: lane piece added with no lane");
	struct fast_lane *l = &p->lanes[p->nlanes - 1];
	return append_piece(p, &l->piece0, &l->npieces, &l->bytes, src, dst, off, len, "lane",
			    err);
}

int fast_plan_add_mask(struct fast_plan *p, uint64_t mask, struct fast_err *err)
{
	if (p->nmasks > 0 && p->masks[p->nmasks - 1] == mask)
		return (int)(p->nmasks - 1);
	if (p->nmasks >= INT32_MAX)
		return fast_err_set(err, FAST_ENOMEM, "plan: too many masks");
	if (GROW(p, masks, err) < 0)
		return FAST_ENOMEM;
	p->masks[p->nmasks] = mask;
	return (int)p->nmasks++;
}

int fast_plan_set_perms(struct fast_plan *p, uint32_t k, const uint32_t *perms,
			const uint64_t *budgets, struct fast_err *err)
{
	struct fast_step *s = fast_plan_last_step(p, "a permutation", err);
	size_t at = p->nperm, bat = p->nbudgets, n = (size_t)k * p->servers;
	if (!s)
		return FAST_EINPUT;
	if (s->kind != FAST_STEP_RAIL)
		return fast_err_set(err, FAST_EINPUT,
				    "plan builder: permutation set on step %zu, which is not RAIL",
				    p->nsteps - 1);
	if (k == 0)
		return fast_err_set(err, FAST_EINPUT,
				    "plan builder: step %zu: a rail step has >= 1 permutations",
				    p->nsteps - 1);
	if (p->nperm + n >= UINT32_MAX - 1 || p->nbudgets + k >= UINT32_MAX - 1)
		return fast_err_set(err, FAST_ENOMEM, "plan: more than %u elements in one array",
				    UINT32_MAX - 1);
	if (FAST_GROW(p->perm, p->cap_perm, p->nperm + n) < 0 ||
	    FAST_GROW(p->budgets, p->cap_budgets, p->nbudgets + k) < 0)
		return fast_err_set(err, FAST_ENOMEM, "plan: out of memory (permutations)");
	memcpy(p->perm + at, perms, n * sizeof *perms);
	memcpy(p->budgets + bat, budgets, (size_t)k * sizeof *budgets);
	p->nperm += n;
	p->nbudgets += k;
	s->perm0 = (uint32_t)at;
	s->budget0 = (uint32_t)bat;
	s->nperms = k;
	return 0;
}

int fast_plan_set_perm(struct fast_plan *p, const uint32_t *perm, uint64_t budget,
		       struct fast_err *err)
{
	return fast_plan_set_perms(p, 1, perm, &budget, err);
}

uint32_t fast_plan_rail_row(const struct fast_plan *p, const struct fast_step *s, uint32_t a,
			    uint32_t *to, uint64_t *w)
{
	return fast_plan_perms_row(p->perm + s->perm0, p->budgets + s->budget0, s->nperms,
				   p->servers, a, to, w);
}

uint32_t fast_plan_perms_row(const uint32_t *perms, const uint64_t *budgets, uint32_t k,
			     uint32_t N, uint32_t a, uint32_t *to, uint64_t *w)
{
	uint32_t n = 0, m = 0;

	for (uint32_t j = 0; j < k; j++) {
		uint32_t b = perms[(size_t)j * N + a];
		if (b == a)
			continue; /* idle (padded diagonal) slot */
		to[n] = b;
		w[n++] = budgets[j];
	}
	/* shell sort by destination (k is up to a few hundred), then a
	 * destination met twice adds its budgets */
	for (uint32_t gap = n / 2; gap > 0; gap = gap == 2 ? 1 : gap * 5 / 11)
		for (uint32_t i = gap; i < n; i++) {
			uint32_t b = to[i], at = i;
			uint64_t wi = w[i];
			for (; at >= gap && to[at - gap] > b; at -= gap) {
				to[at] = to[at - gap];
				w[at] = w[at - gap];
			}
			to[at] = b;
			w[at] = wi;
		}
	for (uint32_t i = 0; i < n; i++) {
		if (m > 0 && to[m - 1] == to[i]) {
			if (!fast_add_u64(w[m - 1], w[i], &w[m - 1]))
				w[m - 1] = UINT64_MAX;
			continue;
		}
		to[m] = to[i];
		w[m++] = w[i];
	}
	return m;
}

int fast_plan_set_chunks(struct fast_plan *p, uint32_t chunks, struct fast_err *err)
{
	struct fast_step *s = fast_plan_last_step(p, "a chunk count", err);
	if (!s)
		return FAST_EINPUT;
	if (chunks == 0 || chunks > FAST_PLAN_MAX_CHUNKS)
		return fast_err_set(err, FAST_EINPUT,
				    "plan builder: step %zu: chunks must be in 1..%u (got %u)",
				    p->nsteps - 1, FAST_PLAN_MAX_CHUNKS, chunks);
	s->chunks = chunks;
	return 0;
}

int fast_plan_set_redist(struct fast_plan *p, uint32_t stage, struct fast_err *err)
{
	struct fast_step *s = fast_plan_last_step(p, "a redistributed stage", err);
	if (!s)
		return FAST_EINPUT;
	if (s->kind != FAST_STEP_REDIST)
		return fast_err_set(err, FAST_EINPUT,
				    "plan builder: stage set on step %zu, which is not REDIST",
				    p->nsteps - 1);
	s->stage = stage;
	return 0;
}

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

/* Lane cursors of the expansion: where each lane's unsent bytes start. */
struct cursors {
	const struct lane_key *keys;
	uint32_t *piece;
	uint64_t *off;
};

/* One transfer from GPU `from` to GPU `to` of the next <= left bytes of
 * lane (a -> b, rail i), cutting a piece that straddles the budget; none
 * when the lane is absent or empty. */
static int send_lane(const struct fast_plan *p, struct cursors *cu, uint32_t a, uint32_t b,
		     uint32_t i, uint64_t left, struct fast_plan *scratch, struct fast_err *err)
{
	uint64_t key = ((uint64_t)a * p->servers + b) * p->gpus + i;
	int64_t l = find_lane(cu->keys, p->nlanes, key);
	const struct fast_lane *ln;
	bool started = false;
	int rc;

	if (l < 0)
		return 0; /* an absent lane is empty */
	ln = &p->lanes[l];
	while (left > 0 && cu->piece[l] < ln->npieces) {
		const struct fast_piece *pc = &p->pieces[ln->piece0 + cu->piece[l]];
		uint64_t avail = pc->len - cu->off[l];
		uint64_t take = avail < left ? avail : left;
		if (!started) {
			rc = fast_plan_add_xfer(scratch, a * p->gpus + i, b * p->gpus + i, err);
			if (rc < 0)
				return rc;
			started = true;
		}
		rc = fast_plan_add_piece(scratch, pc->src, pc->dst, pc->off + cu->off[l], take, err);
		if (rc < 0)
			return rc;
		left -= take;
		cu->off[l] += take;
		if (cu->off[l] == pc->len) {
			cu->piece[l]++;
			cu->off[l] = 0;
		}
	}
	return 0;
}

/* Pass 1: every rail step's transfers, in ascending step id order (which
 * is the order lane cursors are consumed in), into scratch step railx[t]:
 * sender server a, then rail i, then destination server b (plan.h). */
static int expand_rails(const struct fast_plan *p, struct fast_plan *scratch, uint32_t *railx,
			struct fast_err *err)
{
	struct lane_key *keys = NULL;
	struct cursors cu;
	uint32_t *to = NULL, k = 1;
	uint64_t *w = NULL;
	int rc = 0;
	size_t nl = p->nlanes ? p->nlanes : 1;

	for (size_t t = 0; t < p->nsteps; t++)
		if (p->steps[t].kind == FAST_STEP_RAIL && p->steps[t].nperms > k)
			k = p->steps[t].nperms;
	keys = fast_calloc(nl, sizeof *keys);
	cu.keys = keys;
	cu.piece = fast_calloc(nl, sizeof *cu.piece);
	cu.off = fast_calloc(nl, sizeof *cu.off);
	to = fast_calloc(k, sizeof *to);
	w = fast_calloc(k, sizeof *w);
	if (!keys || !cu.piece || !cu.off || !to || !w) {
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

	for (size_t t = 0; t < p->nsteps && rc == 0; t++) {
		const struct fast_step *s = &p->steps[t];
		if (s->kind != FAST_STEP_RAIL)
			continue;
		rc = fast_plan_add_step(scratch, FAST_STEP_EXPLICIT, FAST_TIER_OUT, err);
		if (rc < 0)
			goto out;
		railx[t] = (uint32_t)rc;
		rc = 0;
		for (uint32_t a = 0; a < p->servers && rc == 0; a++) {
			uint32_t nb = fast_plan_rail_row(p, s, a, to, w);
			for (uint32_t i = 0; i < p->gpus && rc == 0; i++)
				for (uint32_t d = 0; d < nb && rc == 0; d++)
					rc = send_lane(p, &cu, a, to[d], i, w[d], scratch, err);
		}
	}
out:
	free(keys);
	free(cu.piece);
	free(cu.off);
	free(to);
	free(w);
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

/* The items of one token piece received by GPU `to` in a rail stage:
 * where the redistribution forwards it (plan.h): a dispatch piece of g to
 * every GPU of Dest(g) on to's server but to; a combine piece of g to
 * src(g) unless that is `to` (a byte piece goes to its dst unless that is
 * `to`: expand_redist, inline).  Appends to items[*n] (room for gpus
 * entries). */
static void redist_targets(const struct fast_plan *sp, const struct fast_matrix *m, uint32_t to,
			   const struct fast_piece *pc, uint32_t piece, uint32_t *seq,
			   struct redist_item *items, size_t *n)
{
	const struct fast_group *g = &m->groups[pc->src];
	if (sp->kind == FAST_TRAFFIC_COMBINE) {
		if (g->src != to) {
			items[*n] = (struct redist_item){ to, g->src, (*seq)++, piece };
			(*n)++;
		}
		return;
	}
	for (uint32_t i = 0; i < g->ndst; i++) {
		uint32_t d = m->dsts[g->dst0 + i];
		if (d / sp->gpus != to / sp->gpus || d == to)
			continue;
		items[*n] = (struct redist_item){ to, d, (*seq)++, piece };
		(*n)++;
	}
}

/* The implied redistribution of a rail stage: each receiving GPU forwards
 * every piece to its targets (redist_targets), one transfer per (receiver,
 * dst) pair ordered by receiver then dst, pieces in arrival order. */
static int expand_redist(const struct fast_plan *scratch, const struct fast_matrix *m,
			 uint32_t sstep, struct fast_plan *out, struct fast_err *err)
{
	const struct fast_step *s = &scratch->steps[sstep];
	size_t n = 0, cap = 0;
	struct redist_item *items = NULL;
	int rc = 0;
	uint32_t seq = 0;

	for (uint32_t j = 0; j < s->nxfers; j++)
		cap += scratch->xfers[s->xfer0 + j].npieces;
	if (scratch->kind == FAST_TRAFFIC_DISPATCH) /* up to gpus - 1 copies of a piece */
		cap *= scratch->gpus;
	items = fast_calloc(cap ? cap : 1, sizeof *items);
	if (!items)
		return fast_err_set(err, FAST_ENOMEM, "plan: out of memory (redistribution)");
	for (uint32_t j = 0; j < s->nxfers; j++) {
		const struct fast_xfer *x = &scratch->xfers[s->xfer0 + j];
		for (uint32_t k = 0; k < x->npieces; k++) {
			const struct fast_piece *pc = &scratch->pieces[x->piece0 + k];
			if (scratch->kind != FAST_TRAFFIC_BYTES) {
				redist_targets(scratch, m, x->to, pc, x->piece0 + k, &seq, items, &n);
				continue;
			}
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

/* A token plan's REDIST step needs the matrix: FAST_EINPUT naming the
 * first one when m is NULL. */
static int redist_needs_matrix(const struct fast_plan *p, const struct fast_matrix *m,
			       struct fast_err *err)
{
	if (p->kind == FAST_TRAFFIC_BYTES || m)
		return 0;
	for (size_t t = 0; t < p->nsteps; t++)
		if (p->steps[t].kind == FAST_STEP_REDIST)
			return fast_err_set(err, FAST_EINPUT,
					    "step %zu: the redistribution of a %s plan needs the "
					    "traffic it serves (its groups)", t,
					    fast_traffic_kind_name(p->kind));
	return 0;
}

int fast_plan_expand(const struct fast_plan *p, const struct fast_matrix *m, struct fast_plan *out,
		     struct fast_err *err)
{
	struct fast_plan scratch, e;
	uint32_t *railx = NULL;
	int rc;

	if ((rc = fast_plan_validate(p, err)) < 0 ||
	    (m && (rc = fast_plan_fits_matrix(p, m, err)) < 0) ||
	    (rc = redist_needs_matrix(p, m, err)) < 0)
		return rc;
	fast_plan_init(&scratch, p->servers, p->gpus, p->algo);
	scratch.kind = p->kind;
	fast_plan_init(&e, p->servers, p->gpus, p->algo);
	memcpy(e.label, p->label, sizeof e.label);
	memcpy(e.options, p->options, sizeof e.options);
	e.matrix = p->matrix;
	e.kind = p->kind;
	if (p->nmasks > 0) { /* copied as they are: pieces index them */
		if (FAST_GROW(e.masks, e.cap_masks, p->nmasks) < 0) {
			rc = fast_err_set(err, FAST_ENOMEM, "plan: out of memory (masks)");
			goto fail;
		}
		memcpy(e.masks, p->masks, p->nmasks * sizeof *p->masks);
		e.nmasks = p->nmasks;
	}
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
		rc = fast_plan_add_step(&e,
					s->kind == FAST_STEP_REDUCE ? FAST_STEP_REDUCE
								    : FAST_STEP_EXPLICIT,
					s->tier, err);
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
		case FAST_STEP_REDUCE:
			rc = copy_xfers(p, s, &e, err);
			break;
		case FAST_STEP_RAIL:
			rc = copy_xfers(&scratch, &scratch.steps[railx[t]], &e, err);
			break;
		case FAST_STEP_REDIST:
			rc = expand_redist(&scratch, m, railx[s->stage], &e, err);
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

