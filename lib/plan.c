/*
 * plan.c - the plan IR (plan.h): building, structural validation,
 * topological order, hashing, expansion of the compact forms (lanes, rail
 * stages, implied redistributions) into explicit transfers, the JSON file
 * format (schemas/plan.schema.json) and summaries.
 *
 * Workload: plans for up to thousands of GPUs, 10^4..10^5 steps and 10^5..10^7
 * pieces.  Storage is a handful of flat arrays grown by doubling; every pass
 * here is linear (or n log n) in the plan size.
 */
#include "plan.h"

#include <stdlib.h>
#include <string.h>

#include "json.h"

/* --- building ------------------------------------------------------------ */

void fast_plan_init(struct fast_plan *p, uint32_t servers, uint32_t gpus, const char *algo)
{
	memset(p, 0, sizeof *p);
	p->servers = servers;
	p->gpus = gpus;
	if (algo)
		snprintf(p->algo, sizeof p->algo, "%s", algo);
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

static struct fast_step *last_step(struct fast_plan *p, const char *what, struct fast_err *err)
{
	if (p->nsteps == 0) {
		fast_err_set(err, FAST_EINPUT, "plan builder: %s before the first step", what);
		return NULL;
	}
	return &p->steps[p->nsteps - 1];
}

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
	s->chunks = 1;
	p->open_kind = FAST_OPEN_NONE;
	return (int)p->nsteps++;
}

int fast_plan_add_dep(struct fast_plan *p, uint32_t step, uint32_t on, bool pipelined,
		      struct fast_err *err)
{
	struct fast_step *s = last_step(p, "a dependency", err);
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
	struct fast_step *s = last_step(p, "a transfer", err);
	if (!s)
		return FAST_EINPUT;
	if (s->kind != FAST_STEP_EXPLICIT)
		return fast_err_set(err, FAST_EINPUT,
				    "plan builder: transfer added to step %zu, which is not EXPLICIT",
				    p->nsteps - 1);
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

/* Room for n more pieces at the end of the piece array, for the caller to
 * write in place and commit with fast_plan_commit_lanes/_xfers (NULL and
 * FAST_ENOMEM on exhaustion). */
static struct fast_piece *piece_space(struct fast_plan *p, size_t n, struct fast_err *err)
{
	if (n > UINT32_MAX - 1 - p->npieces) {
		fast_err_set(err, FAST_ENOMEM, "plan: more than %u elements in one array",
			     UINT32_MAX - 1);
		return NULL;
	}
	if (p->npieces + n > p->cap_pieces &&
	    fast_grow((void **)&p->pieces, &p->cap_pieces, p->npieces + n, sizeof *p->pieces,
		      16) < 0) {
		fast_err_set(err, FAST_ENOMEM, "plan: out of memory (%zu elements)", p->npieces + n);
		return NULL;
	}
	return p->pieces + p->npieces;
}

int fast_plan_lane_space(struct fast_plan *p, size_t nl, size_t np, struct fast_lane **lanes,
			 struct fast_piece **pieces, struct fast_err *err)
{
	struct fast_piece *at = piece_space(p, np, err);

	if (!at)
		return FAST_ENOMEM;
	if (nl > UINT32_MAX - 1 - p->nlanes ||
	    (p->nlanes + nl > p->cap_lanes &&
	     fast_grow((void **)&p->lanes, &p->cap_lanes, p->nlanes + nl, sizeof *p->lanes, 16) < 0))
		return fast_err_set(err, FAST_ENOMEM, "plan: out of memory (%zu lanes)",
				    p->nlanes + nl);
	*lanes = p->lanes + p->nlanes;
	*pieces = at;
	return 0;
}

int fast_plan_commit_lanes(struct fast_plan *p, size_t k, struct fast_err *err)
{
	size_t at = p->npieces;

	if (k > p->cap_lanes - p->nlanes)
		return fast_err_set(err, FAST_EINPUT, "plan builder: %zu lanes committed beyond the space",
				    k);
	for (size_t l = 0; l < k; l++) {
		struct fast_lane *ln = &p->lanes[p->nlanes + l];
		if (ln->npieces > p->cap_pieces - at)
			return fast_err_set(err, FAST_EINPUT,
					    "plan builder: lane pieces committed beyond the space");
		ln->piece0 = (uint32_t)at;
		at += ln->npieces;
	}
	p->nlanes += k;
	p->npieces = at;
	if (k)
		p->open_kind = FAST_OPEN_LANE;
	return 0;
}

int fast_plan_xfer_space(struct fast_plan *p, size_t nx, size_t np, struct fast_xfer **xfers,
			 struct fast_piece **pieces, struct fast_err *err)
{
	struct fast_piece *at = piece_space(p, np, err);

	if (!at)
		return FAST_ENOMEM;
	if (nx > UINT32_MAX - 1 - p->nxfers ||
	    (p->nxfers + nx > p->cap_xfers &&
	     fast_grow((void **)&p->xfers, &p->cap_xfers, p->nxfers + nx, sizeof *p->xfers, 16) < 0))
		return fast_err_set(err, FAST_ENOMEM, "plan: out of memory (%zu transfers)",
				    p->nxfers + nx);
	*xfers = p->xfers + p->nxfers;
	*pieces = at;
	return 0;
}

int fast_plan_commit_xfers(struct fast_plan *p, size_t k, struct fast_err *err)
{
	struct fast_step *s = last_step(p, "a transfer", err);
	size_t at = p->npieces;

	if (!s)
		return FAST_EINPUT;
	if (s->kind != FAST_STEP_EXPLICIT)
		return fast_err_set(err, FAST_EINPUT,
				    "plan builder: transfer added to step %zu, which is not EXPLICIT",
				    p->nsteps - 1);
	if (k == 0)
		return 0;
	if (k > p->cap_xfers - p->nxfers)
		return fast_err_set(err, FAST_EINPUT,
				    "plan builder: %zu transfers committed beyond the space", k);
	if (s->nxfers == 0)
		s->xfer0 = (uint32_t)p->nxfers;
	else if (s->xfer0 + s->nxfers != p->nxfers)
		return fast_err_set(err, FAST_EINPUT,
				    "plan builder: step %zu's transfers are not contiguous", p->nsteps - 1);
	for (size_t j = 0; j < k; j++) {
		struct fast_xfer *x = &p->xfers[p->nxfers + j];
		if (x->npieces > p->cap_pieces - at)
			return fast_err_set(err, FAST_EINPUT,
					    "plan builder: transfer pieces committed beyond the space");
		x->piece0 = (uint32_t)at;
		at += x->npieces;
	}
	p->nxfers += k;
	s->nxfers += (uint32_t)k;
	p->npieces = at;
	p->open_kind = FAST_OPEN_XFER;
	return 0;
}

/* Capacity for want elements of sz bytes in *arr (see fast_plan_reserve). */
static int reserve_one(void **arr, size_t *cap, uint64_t want, size_t sz, struct fast_err *err)
{
	void *x;

	if (want > UINT32_MAX)
		want = UINT32_MAX;
	if (*cap >= want)
		return 0;
	x = fast_reallocarray(*arr, (size_t)want, sz);
	if (!x)
		return fast_err_set(err, FAST_ENOMEM, "plan: out of memory (%llu elements)",
				    (unsigned long long)want);
	*arr = x;
	*cap = (size_t)want;
	return 0;
}

int fast_plan_reserve(struct fast_plan *p, uint64_t steps, uint64_t deps, uint64_t xfers,
		      uint64_t pieces, uint64_t lanes, struct fast_err *err)
{
	int rc;

	if ((rc = reserve_one((void **)&p->steps, &p->cap_steps, steps, sizeof *p->steps, err)) < 0 ||
	    (rc = reserve_one((void **)&p->deps, &p->cap_deps, deps, sizeof *p->deps, err)) < 0 ||
	    (rc = reserve_one((void **)&p->xfers, &p->cap_xfers, xfers, sizeof *p->xfers, err)) < 0 ||
	    (rc = reserve_one((void **)&p->pieces, &p->cap_pieces, pieces, sizeof *p->pieces,
			      err)) < 0 ||
	    (rc = reserve_one((void **)&p->lanes, &p->cap_lanes, lanes, sizeof *p->lanes, err)) < 0)
		return rc;
	return 0;
}

void fast_plan_trim(struct fast_plan *p, size_t slack)
{
	void *x;

	if (!p->npieces || (p->cap_pieces - p->npieces) * sizeof *p->pieces <= slack)
		return;
	x = realloc(p->pieces, p->npieces * sizeof *p->pieces);
	if (x) {
		p->pieces = x;
		p->cap_pieces = p->npieces;
	}
}

int fast_plan_set_perm(struct fast_plan *p, const uint32_t *perm, uint64_t budget,
		       struct fast_err *err)
{
	struct fast_step *s = last_step(p, "a permutation", err);
	if (!s)
		return FAST_EINPUT;
	if (s->kind != FAST_STEP_RAIL)
		return fast_err_set(err, FAST_EINPUT,
				    "plan builder: permutation set on step %zu, which is not RAIL",
				    p->nsteps - 1);
	size_t at = p->nperm;
	for (uint32_t a = 0; a < p->servers; a++) {
		if (GROW(p, perm, err) < 0) {
			p->nperm = at;
			return FAST_ENOMEM;
		}
		p->perm[p->nperm++] = perm[a];
	}
	s->perm0 = (uint32_t)at;
	s->budget = budget;
	return 0;
}

int fast_plan_set_chunks(struct fast_plan *p, uint32_t chunks, struct fast_err *err)
{
	struct fast_step *s = last_step(p, "a chunk count", err);
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
	struct fast_step *s = last_step(p, "a redistributed stage", err);
	if (!s)
		return FAST_EINPUT;
	if (s->kind != FAST_STEP_REDIST)
		return fast_err_set(err, FAST_EINPUT,
				    "plan builder: stage set on step %zu, which is not REDIST",
				    p->nsteps - 1);
	s->stage = stage;
	return 0;
}

/* --- validation and order ------------------------------------------------ */

static bool range_ok(uint64_t first, uint64_t count, size_t n)
{
	return first <= n && count <= n - first;
}

static int check_piece(const struct fast_piece *pc, uint32_t ng, struct fast_err *err,
		       const char *where, uint64_t where_a, uint64_t where_b, uint64_t k)
{
	uint64_t end;
	if (pc->src >= ng || pc->dst >= ng)
		return fast_err_set(err, FAST_EINPUT,
				    "%s %llu %s %llu piece %llu: D[%u][%u] names a GPU out of range "
				    "(plan has %u GPUs)", where, (unsigned long long)where_a,
				    where[0] == 's' ? "transfer" : "rail", (unsigned long long)where_b,
				    (unsigned long long)k, pc->src, pc->dst, ng);
	if (pc->len == 0)
		return fast_err_set(err, FAST_EINPUT,
				    "%s %llu %s %llu piece %llu: length must be > 0", where,
				    (unsigned long long)where_a,
				    where[0] == 's' ? "transfer" : "rail", (unsigned long long)where_b,
				    (unsigned long long)k);
	if (!fast_add_u64(pc->off, pc->len, &end))
		return fast_err_set(err, FAST_EINPUT,
				    "%s %llu %s %llu piece %llu: offset + length overflows", where,
				    (unsigned long long)where_a,
				    where[0] == 's' ? "transfer" : "rail", (unsigned long long)where_b,
				    (unsigned long long)k);
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int validate_step(const struct fast_plan *p, size_t t, uint32_t ng, bool *seen,
			 struct fast_err *err)
{
	const struct fast_step *s = &p->steps[t];

	if ((unsigned)s->kind > FAST_STEP_REDIST)
		return fast_err_set(err, FAST_EINPUT, "step %zu: unknown kind %d", t, (int)s->kind);
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
	if (s->kind != FAST_STEP_EXPLICIT && s->nxfers != 0)
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
			if (check_piece(&p->pieces[x->piece0 + k], ng, err, "step", t, j, k) < 0)
				return FAST_EINPUT;
	}
	if (s->kind == FAST_STEP_RAIL) {
		if (s->tier != FAST_TIER_OUT)
			return fast_err_set(err, FAST_EINPUT, "step %zu: a rail step must be tier out", t);
		if (!range_ok(s->perm0, p->servers, p->nperm))
			return fast_err_set(err, FAST_EINPUT, "step %zu: permutation out of bounds", t);
		memset(seen, 0, p->servers * sizeof *seen);
		for (uint32_t a = 0; a < p->servers; a++) {
			uint32_t b = p->perm[s->perm0 + a];
			if (b >= p->servers)
				return fast_err_set(err, FAST_EINPUT,
						    "step %zu: perm[%u] = %u is not a server (plan has "
						    "%u servers)", t, a, b, p->servers);
			if (seen[b])
				return fast_err_set(err, FAST_EINPUT,
						    "step %zu: perm is not a permutation (server %u "
						    "appears twice)", t, b);
			seen[b] = true;
		}
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
			rc = check_piece(&p->pieces[ln->piece0 + k], ng, err, "lane", l, ln->rail, k);
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

/* --- hashing -------------------------------------------------------------- */

/* Values are hashed as little-endian 64-bit words through a small buffer,
 * so the identity is the same on every machine and independent of how the
 * arrays are laid out (ranges are followed, not copied). */
struct hasher {
	uint64_t h;
	size_t n;
	unsigned char buf[4096];
};

static void hput(struct hasher *hs, uint64_t v)
{
	if (hs->n + 8 > sizeof hs->buf) {
		hs->h = fast_hash_bytes(hs->h, hs->buf, hs->n);
		hs->n = 0;
	}
	for (int i = 0; i < 8; i++)
		hs->buf[hs->n++] = (unsigned char)(v >> (8 * i));
}

static void hput_pieces(struct hasher *hs, const struct fast_plan *p, uint32_t p0, uint32_t n)
{
	hput(hs, n);
	for (uint32_t k = 0; k < n; k++) {
		const struct fast_piece *pc = &p->pieces[p0 + k];
		hput(hs, pc->src);
		hput(hs, pc->dst);
		hput(hs, pc->off);
		hput(hs, pc->len);
	}
}

uint64_t fast_plan_hash(const struct fast_plan *p)
{
	struct hasher hs;
	size_t alen = strnlen(p->algo, sizeof p->algo);

	hs.h = FAST_HASH_INIT;
	hs.n = 0;
	hput(&hs, 1); /* the hash's own version: a file format version (FAST_PLAN_VERSION) does not change a plan's identity */
	hput(&hs, p->matrix);
	hput(&hs, alen);
	for (size_t i = 0; i < alen; i++)
		hput(&hs, (unsigned char)p->algo[i]);
	hput(&hs, p->servers);
	hput(&hs, p->gpus);
	hput(&hs, p->nlanes);
	for (size_t l = 0; l < p->nlanes; l++) {
		const struct fast_lane *ln = &p->lanes[l];
		hput(&hs, ln->src_server);
		hput(&hs, ln->dst_server);
		hput(&hs, ln->rail);
		hput_pieces(&hs, p, ln->piece0, ln->npieces);
	}
	hput(&hs, p->nsteps);
	for (size_t t = 0; t < p->nsteps; t++) {
		const struct fast_step *s = &p->steps[t];
		hput(&hs, (uint64_t)s->kind);
		hput(&hs, (uint64_t)s->tier);
		hput(&hs, s->chunks);
		hput(&hs, s->ndeps);
		for (uint32_t j = 0; j < s->ndeps; j++) {
			hput(&hs, p->deps[s->dep0 + j].step);
			hput(&hs, p->deps[s->dep0 + j].pipelined);
		}
		switch (s->kind) {
		case FAST_STEP_EXPLICIT:
			hput(&hs, s->nxfers);
			for (uint32_t j = 0; j < s->nxfers; j++) {
				const struct fast_xfer *x = &p->xfers[s->xfer0 + j];
				hput(&hs, x->from);
				hput(&hs, x->to);
				hput_pieces(&hs, p, x->piece0, x->npieces);
			}
			break;
		case FAST_STEP_RAIL:
			for (uint32_t a = 0; a < p->servers; a++)
				hput(&hs, p->perm[s->perm0 + a]);
			hput(&hs, s->budget);
			break;
		case FAST_STEP_REDIST:
			hput(&hs, s->stage);
			break;
		}
	}
	return fast_hash_bytes(hs.h, hs.buf, hs.n);
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

/* --- the view -------------------------------------------------------------- */

bool fast_plan_is_compact(const struct fast_plan *p)
{
	if (p->nlanes > 0)
		return true;
	for (size_t t = 0; t < p->nsteps; t++)
		if (p->steps[t].kind != FAST_STEP_EXPLICIT)
			return true;
	return false;
}

int fast_plan_view_open(struct fast_plan_view *v, const struct fast_plan *p,
			struct fast_err *err)
{
	int rc;

	if (!fast_plan_is_compact(p)) {
		if ((rc = fast_plan_validate(p, err)) < 0)
			return rc;
		v->given = v->x = p;
		v->owned = false;
		memset(&v->own, 0, sizeof v->own);
		return 0;
	}
	/* expansion validates the compact form first, and yields a valid
	 * explicit plan: nothing is validated twice */
	if ((rc = fast_plan_expand(p, &v->own, err)) < 0)
		return rc;
	v->given = p;
	v->x = &v->own;
	v->owned = true;
	return 0;
}

void fast_plan_view_close(struct fast_plan_view *v)
{
	if (!v)
		return;
	if (v->owned)
		fast_plan_free(&v->own);
	memset(v, 0, sizeof *v);
}

int fast_plan_fits_topo(const struct fast_plan *p, const struct fast_topo *topo,
			struct fast_err *err)
{
	if (p->servers != topo->servers || p->gpus != topo->gpus)
		return fast_err_set(err, FAST_EINPUT,
				    "the plan is for %u servers x %u GPUs, the topology has %u x %u",
				    p->servers, p->gpus, topo->servers, topo->gpus);
	return 0;
}

int fast_plan_fits_traffic(const struct fast_plan *p, uint32_t traffic_ng, struct fast_err *err)
{
	if ((uint64_t)p->servers * p->gpus != traffic_ng)
		return fast_err_set(err, FAST_EINPUT,
				    "the traffic has %u GPUs, the plan is for %u servers x %u GPUs",
				    traffic_ng, p->servers, p->gpus);
	return 0;
}

/* --- files ---------------------------------------------------------------- */

/*
 * Format (schemas/plan.schema.json): one object per plan, one line per
 * lane, step and transfer, numbers as exact integers.  The writer emits a
 * canonical form, so write -> read -> write is byte-identical:
 *   lanes     [src_server, dst_server, rail, [[src, dst, off, len], ...]]
 *   steps     {"id", "tier", "chunks" (only when > 1), "deps", and exactly
 *             one of "transfers" | "rail" | "redist"}
 *   deps      a step id, or {"step": id, "pipelined": true}
 *   transfers [from, to, [[src, dst, off, len], ...]]
 *   rail      {"perm": [servers entries], "bytes": w}
 *   redist    id of the rail step redistributed
 */

static void put_pieces(FILE *f, const struct fast_plan *p, uint32_t p0, uint32_t n)
{
	fputc('[', f);
	for (uint32_t k = 0; k < n; k++) {
		const struct fast_piece *pc = &p->pieces[p0 + k];
		fprintf(f, "%s[%u,%u,%llu,%llu]", k ? "," : "", pc->src, pc->dst,
			(unsigned long long)pc->off, (unsigned long long)pc->len);
	}
	fputc(']', f);
}

static void write_step(FILE *f, const struct fast_plan *p, size_t t)
{
	const struct fast_step *s = &p->steps[t];

	fprintf(f, "{\"id\":%zu,\"tier\":\"%s\"", t, s->tier == FAST_TIER_OUT ? "out" : "up");
	if (s->chunks > 1)
		fprintf(f, ",\"chunks\":%u", s->chunks);
	fputs(",\"deps\":[", f);
	for (uint32_t j = 0; j < s->ndeps; j++) {
		const struct fast_dep *d = &p->deps[s->dep0 + j];
		if (d->pipelined)
			fprintf(f, "%s{\"step\":%u,\"pipelined\":true}", j ? "," : "", d->step);
		else
			fprintf(f, "%s%u", j ? "," : "", d->step);
	}
	fputc(']', f);
	switch (s->kind) {
	case FAST_STEP_EXPLICIT:
		fputs(",\"transfers\":[", f);
		for (uint32_t j = 0; j < s->nxfers; j++) {
			const struct fast_xfer *x = &p->xfers[s->xfer0 + j];
			fprintf(f, "%s\n[%u,%u,", j ? "," : "", x->from, x->to);
			put_pieces(f, p, x->piece0, x->npieces);
			fputc(']', f);
		}
		fputs("]}", f);
		break;
	case FAST_STEP_RAIL:
		fputs(",\"rail\":{\"perm\":[", f);
		for (uint32_t a = 0; a < p->servers; a++)
			fprintf(f, "%s%u", a ? "," : "", p->perm[s->perm0 + a]);
		fprintf(f, "],\"bytes\":%llu}}", (unsigned long long)s->budget);
		break;
	case FAST_STEP_REDIST:
		fprintf(f, ",\"redist\":%u}", s->stage);
		break;
	}
}

static void write_plan(FILE *f, const struct fast_plan *p)
{
	fputs("{\"label\":", f);
	fast_json_put_string(f, p->label);
	fprintf(f, ",\"matrix\":%u,\"algo\":", p->matrix);
	fast_json_put_string(f, p->algo);
	fputs(",\"options\":", f);
	fast_json_put_string(f, p->options);
	fprintf(f, ",\"servers\":%u,\"gpus_per_server\":%u,", p->servers, p->gpus);
	if (p->nlanes) {
		fputs("\"lanes\":[", f);
		for (size_t l = 0; l < p->nlanes; l++) {
			const struct fast_lane *ln = &p->lanes[l];
			fprintf(f, "%s\n[%u,%u,%u,", l ? "," : "", ln->src_server, ln->dst_server,
				ln->rail);
			put_pieces(f, p, ln->piece0, ln->npieces);
			fputc(']', f);
		}
		fputs("],", f);
	}
	fputs("\"steps\":[", f);
	for (size_t t = 0; t < p->nsteps; t++) {
		fputs(t ? ",\n" : "\n", f);
		write_step(f, p, t);
	}
	fputs("]}", f);
}

int fast_planset_write(const struct fast_planset *ps, FILE *f, struct fast_err *err)
{
	fprintf(f, "{\"version\":%d,\"kind\":\"fast-plan\",\"plans\":[", FAST_PLAN_VERSION);
	for (uint32_t i = 0; i < ps->count; i++) {
		fputs(i ? ",\n" : "\n", f);
		write_plan(f, &ps->plans[i]);
	}
	fputs("\n]}\n", f);
	if (ferror(f))
		return fast_err_set(err, FAST_EIO, "plan: write error");
	return 0;
}

/* Reading.  Every element is checked where it stands, so that errors name
 * the JSON path; whole-plan properties (cycles, duplicate lanes) come from
 * fast_plan_validate afterwards, prefixed with the plan's path. */

static int u64_at(struct fast_jctx *c, const struct fast_jv *v, size_t idx, uint64_t max,
		  uint64_t *out)
{
	size_t old = fast_jctx_push_index(c, idx);
	int rc = fast_jv_as_u64(c, v, max, out);
	fast_jctx_pop(c, old);
	return rc;
}

static int u32_at(struct fast_jctx *c, const struct fast_jv *v, size_t idx, uint32_t max,
		  const char *what, uint32_t *out)
{
	size_t old = fast_jctx_push_index(c, idx);
	uint64_t x;
	int rc = fast_jv_as_u64(c, v, UINT32_MAX, &x);
	if (rc == 0 && x >= max)
		rc = fast_jctx_fail(c, FAST_EINPUT, "%s %llu out of range (0..%u)", what,
				    (unsigned long long)x, max - 1);
	if (rc == 0)
		*out = (uint32_t)x;
	fast_jctx_pop(c, old);
	return rc;
}

/* v must be an array of exactly n elements; their values into el[]. */
static int tuple(struct fast_jctx *c, const struct fast_jv *v, size_t n, const char *what,
		 const struct fast_jv **el)
{
	size_t k = 0;
	if (fast_jv_type(v) != FAST_JARRAY)
		return fast_jctx_fail(c, FAST_EINPUT, "expected %s, got %s", what,
				      fast_jtype_name(fast_jv_type(v)));
	for (const struct fast_jv *e = fast_jv_first(v); e; e = fast_jv_next(e)) {
		if (k == n)
			return fast_jctx_fail(c, FAST_EINPUT, "expected %s (too many elements)", what);
		el[k++] = e;
	}
	if (k != n)
		return fast_jctx_fail(c, FAST_EINPUT, "expected %s (%zu elements, not %zu)", what, n,
				      k);
	return 0;
}

/* pieces list of a transfer (lane = false) or a lane */
static int read_pieces(struct fast_jctx *c, const struct fast_jv *v, struct fast_plan *p,
		       bool lane, struct fast_err *err)
{
	uint32_t ng = p->servers * p->gpus;
	size_t idx = 0;
	int rc;

	if (fast_jv_expect_array(c, v) < 0)
		return FAST_EINPUT;
	for (const struct fast_jv *e = fast_jv_first(v); e; e = fast_jv_next(e), idx++) {
		const struct fast_jv *el[4];
		uint32_t src, dst;
		uint64_t off, len;
		size_t old = fast_jctx_push_index(c, idx);
		rc = tuple(c, e, 4, "a piece [src, dst, offset, length]", el);
		if (rc == 0)
			rc = u32_at(c, el[0], 0, ng, "GPU", &src);
		if (rc == 0)
			rc = u32_at(c, el[1], 1, ng, "GPU", &dst);
		if (rc == 0)
			rc = u64_at(c, el[2], 2, FAST_JSON_MAX_BYTES, &off);
		if (rc == 0)
			rc = u64_at(c, el[3], 3, FAST_JSON_MAX_BYTES, &len);
		if (rc == 0 && len == 0) {
			size_t o2 = fast_jctx_push_index(c, 3);
			rc = fast_jctx_fail(c, FAST_EINPUT, "piece length must be > 0");
			fast_jctx_pop(c, o2);
		}
		if (rc == 0) {
			rc = lane ? fast_plan_add_lane_piece(p, src, dst, off, len, err)
				  : fast_plan_add_piece(p, src, dst, off, len, err);
			if (rc < 0)
				rc = fast_jctx_fail(c, rc, "%s", err ? err->msg : "out of memory");
		}
		fast_jctx_pop(c, old);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int read_lanes(struct fast_jctx *c, const struct fast_jv *v, struct fast_plan *p,
		      struct fast_err *err)
{
	size_t idx = 0;
	int rc = 0;

	if (fast_jv_expect_array(c, v) < 0)
		return FAST_EINPUT;
	for (const struct fast_jv *e = fast_jv_first(v); e && rc == 0; e = fast_jv_next(e), idx++) {
		const struct fast_jv *el[4];
		uint32_t a, b, r;
		size_t old = fast_jctx_push_index(c, idx);
		rc = tuple(c, e, 4, "a lane [src_server, dst_server, rail, pieces]", el);
		if (rc == 0)
			rc = u32_at(c, el[0], 0, p->servers, "server", &a);
		if (rc == 0)
			rc = u32_at(c, el[1], 1, p->servers, "server", &b);
		if (rc == 0)
			rc = u32_at(c, el[2], 2, p->gpus, "rail", &r);
		if (rc == 0 && a == b)
			rc = fast_jctx_fail(c, FAST_EINPUT, "a lane joins two different servers (got "
					    "%u -> %u)", a, b);
		if (rc == 0) {
			rc = fast_plan_add_lane(p, a, b, r, err);
			if (rc < 0)
				rc = fast_jctx_fail(c, rc, "%s", err ? err->msg : "out of memory");
		}
		if (rc == 0) {
			size_t o2 = fast_jctx_push_index(c, 3);
			rc = read_pieces(c, el[3], p, true, err);
			fast_jctx_pop(c, o2);
		}
		fast_jctx_pop(c, old);
	}
	return rc;
}

static int read_deps(struct fast_jctx *c, const struct fast_jv *v, struct fast_plan *p,
		     uint32_t t, size_t nsteps, struct fast_err *err)
{
	static const char *const dep_keys[] = { "step", "pipelined", NULL };
	size_t idx = 0;
	int rc = 0;

	if (fast_jv_expect_array(c, v) < 0)
		return FAST_EINPUT;
	for (const struct fast_jv *e = fast_jv_first(v); e && rc == 0; e = fast_jv_next(e), idx++) {
		size_t old = fast_jctx_push_index(c, idx);
		uint64_t on = 0;
		bool pipelined = false;
		if (fast_jv_type(e) == FAST_JOBJECT) {
			rc = fast_jv_expect_object(c, e, dep_keys);
			if (rc == 0)
				rc = fast_jv_get_u64(c, e, "step", true, UINT32_MAX, &on);
			if (rc == 0)
				rc = fast_jv_get_bool(c, e, "pipelined", false, &pipelined);
		} else if (fast_jv_type(e) == FAST_JNUMBER) {
			rc = fast_jv_as_u64(c, e, UINT32_MAX, &on);
		} else {
			rc = fast_jctx_fail(c, FAST_EINPUT,
					    "expected a step id or {\"step\", \"pipelined\"}, got %s",
					    fast_jtype_name(fast_jv_type(e)));
		}
		if (rc == 0 && on >= nsteps)
			rc = fast_jctx_fail(c, FAST_EINPUT, "unknown step %llu (the plan has %zu steps)",
					    (unsigned long long)on, nsteps);
		if (rc == 0 && on == t)
			rc = fast_jctx_fail(c, FAST_EINPUT, "step %u depends on itself", t);
		if (rc == 0) {
			rc = fast_plan_add_dep(p, t, (uint32_t)on, pipelined, err);
			if (rc < 0)
				rc = fast_jctx_fail(c, rc, "%s", err ? err->msg : "out of memory");
		}
		fast_jctx_pop(c, old);
	}
	return rc;
}

static int read_transfers(struct fast_jctx *c, const struct fast_jv *v, struct fast_plan *p,
			  struct fast_err *err)
{
	uint32_t ng = p->servers * p->gpus;
	size_t idx = 0;
	int rc = 0;

	if (fast_jv_expect_array(c, v) < 0)
		return FAST_EINPUT;
	for (const struct fast_jv *e = fast_jv_first(v); e && rc == 0; e = fast_jv_next(e), idx++) {
		const struct fast_jv *el[3];
		uint32_t from, to;
		size_t old = fast_jctx_push_index(c, idx);
		rc = tuple(c, e, 3, "a transfer [from, to, pieces]", el);
		if (rc == 0)
			rc = u32_at(c, el[0], 0, ng, "GPU", &from);
		if (rc == 0)
			rc = u32_at(c, el[1], 1, ng, "GPU", &to);
		if (rc == 0) {
			rc = fast_plan_add_xfer(p, from, to, err);
			if (rc < 0)
				rc = fast_jctx_fail(c, rc, "%s", err ? err->msg : "out of memory");
		}
		if (rc == 0) {
			size_t o2 = fast_jctx_push_index(c, 2);
			rc = read_pieces(c, el[2], p, false, err);
			fast_jctx_pop(c, o2);
		}
		fast_jctx_pop(c, old);
	}
	return rc;
}

static int read_rail(struct fast_jctx *c, const struct fast_jv *v, struct fast_plan *p,
		     struct fast_err *err)
{
	static const char *const rail_keys[] = { "perm", "bytes", NULL };
	const struct fast_jv *pv;
	uint32_t *perm = NULL;
	bool *seen = NULL;
	uint64_t w = 0;
	size_t idx = 0, old;
	int rc;

	rc = fast_jv_expect_object(c, v, rail_keys);
	if (rc == 0)
		rc = fast_jv_get_u64(c, v, "bytes", true, FAST_JSON_MAX_BYTES, &w);
	if (rc < 0)
		return rc;
	pv = fast_jv_get(v, "perm");
	if (!pv)
		return fast_jctx_fail(c, FAST_EINPUT, "missing required key \"perm\"");
	old = fast_jctx_push_key(c, "perm");
	perm = fast_calloc(p->servers, sizeof *perm);
	seen = fast_calloc(p->servers, sizeof *seen);
	if (!perm || !seen)
		rc = fast_jctx_fail(c, FAST_ENOMEM, "out of memory");
	else if (fast_jv_expect_array(c, pv) < 0)
		rc = FAST_EINPUT;
	for (const struct fast_jv *e = rc ? NULL : fast_jv_first(pv); e && rc == 0;
	     e = fast_jv_next(e), idx++) {
		uint32_t b;
		if (idx == p->servers) {
			rc = fast_jctx_fail(c, FAST_EINPUT, "a permutation of %u servers has more "
					    "than %u entries", p->servers, p->servers);
			break;
		}
		rc = u32_at(c, e, idx, p->servers, "server", &b);
		if (rc == 0 && seen[b]) {
			size_t o2 = fast_jctx_push_index(c, idx);
			rc = fast_jctx_fail(c, FAST_EINPUT,
					    "not a permutation: server %u appears twice", b);
			fast_jctx_pop(c, o2);
		}
		if (rc == 0) {
			seen[b] = true;
			perm[idx] = b;
		}
	}
	if (rc == 0 && idx != p->servers)
		rc = fast_jctx_fail(c, FAST_EINPUT, "a permutation of %u servers has %u entries "
				    "(got %zu)", p->servers, p->servers, idx);
	fast_jctx_pop(c, old);
	if (rc == 0) {
		rc = fast_plan_set_perm(p, perm, w, err);
		if (rc < 0)
			rc = fast_jctx_fail(c, rc, "%s", err ? err->msg : "out of memory");
	}
	free(perm);
	free(seen);
	return rc;
}

static int read_step(struct fast_jctx *c, const struct fast_jv *v, struct fast_plan *p,
		     size_t t, size_t nsteps, struct fast_err *err)
{
	static const char *const step_keys[] = { "id", "tier", "chunks", "deps", "transfers",
						 "rail", "redist", NULL };
	const struct fast_jv *xv, *rv, *dv, *deps;
	char tier[16];
	uint64_t id;
	uint32_t chunks = 1;
	enum fast_tier_id tid;
	enum fast_step_kind kind;
	size_t old;
	int rc;

	rc = fast_jv_expect_object(c, v, step_keys);
	if (rc == 0)
		rc = fast_jv_get_u64(c, v, "id", true, UINT32_MAX, &id);
	if (rc == 0 && id != t) {
		old = fast_jctx_push_key(c, "id");
		rc = fast_jctx_fail(c, FAST_EINPUT, "step ids must equal their index (expected %zu, "
				    "got %llu)", t, (unsigned long long)id);
		fast_jctx_pop(c, old);
	}
	if (rc == 0)
		rc = fast_jv_get_string(c, v, "tier", true, tier, sizeof tier);
	if (rc < 0)
		return rc;
	if (strcmp(tier, "up") == 0) {
		tid = FAST_TIER_UP;
	} else if (strcmp(tier, "out") == 0) {
		tid = FAST_TIER_OUT;
	} else {
		old = fast_jctx_push_key(c, "tier");
		rc = fast_jctx_fail(c, FAST_EINPUT, "tier must be \"up\" or \"out\" (got \"%s\")", tier);
		fast_jctx_pop(c, old);
		return rc;
	}
	rc = fast_jv_get_u32(c, v, "chunks", false, 1, FAST_PLAN_MAX_CHUNKS, &chunks);
	if (rc < 0)
		return rc;
	xv = fast_jv_get(v, "transfers");
	rv = fast_jv_get(v, "rail");
	dv = fast_jv_get(v, "redist");
	if ((xv != NULL) + (rv != NULL) + (dv != NULL) != 1)
		return fast_jctx_fail(c, FAST_EINPUT, "a step has exactly one of \"transfers\", "
				      "\"rail\" or \"redist\"");
	kind = xv ? FAST_STEP_EXPLICIT : rv ? FAST_STEP_RAIL : FAST_STEP_REDIST;
	rc = fast_plan_add_step(p, kind, tid, err);
	if (rc < 0)
		return fast_jctx_fail(c, rc, "%s", err ? err->msg : "out of memory");
	p->steps[t].chunks = chunks;
	deps = fast_jv_get(v, "deps");
	if (deps) {
		old = fast_jctx_push_key(c, "deps");
		rc = read_deps(c, deps, p, (uint32_t)t, nsteps, err);
		fast_jctx_pop(c, old);
		if (rc < 0)
			return rc;
	}
	if (xv) {
		old = fast_jctx_push_key(c, "transfers");
		rc = read_transfers(c, xv, p, err);
		fast_jctx_pop(c, old);
	} else if (rv) {
		old = fast_jctx_push_key(c, "rail");
		if (tid != FAST_TIER_OUT)
			rc = fast_jctx_fail(c, FAST_EINPUT, "a rail step must be tier \"out\"");
		else
			rc = read_rail(c, rv, p, err);
		fast_jctx_pop(c, old);
	} else {
		uint64_t stage;
		old = fast_jctx_push_key(c, "redist");
		rc = fast_jv_as_u64(c, dv, UINT32_MAX, &stage);
		if (rc == 0 && stage >= nsteps)
			rc = fast_jctx_fail(c, FAST_EINPUT, "unknown step %llu (the plan has %zu steps)",
					    (unsigned long long)stage, nsteps);
		if (rc == 0 && tid != FAST_TIER_UP)
			rc = fast_jctx_fail(c, FAST_EINPUT, "a redistribution step must be tier \"up\"");
		if (rc == 0)
			p->steps[t].stage = (uint32_t)stage;
		fast_jctx_pop(c, old);
	}
	return rc;
}

/* Cross-step properties that need every step read: redistributed steps
 * are rail steps, pipelined deps join steps of equal chunk counts. */
static int check_cross_steps(struct fast_jctx *c, const struct fast_plan *p)
{
	for (size_t t = 0; t < p->nsteps; t++) {
		const struct fast_step *s = &p->steps[t];
		size_t o1 = fast_jctx_push_key(c, "steps"), o2;
		fast_jctx_push_index(c, t);
		if (s->kind == FAST_STEP_REDIST && p->steps[s->stage].kind != FAST_STEP_RAIL) {
			o2 = fast_jctx_push_key(c, "redist");
			(void)o2;
			fast_jctx_fail(c, FAST_EINPUT, "step %u is not a rail step", s->stage);
			fast_jctx_pop(c, o1);
			return FAST_EINPUT;
		}
		for (uint32_t j = 0; j < s->ndeps; j++) {
			const struct fast_dep *d = &p->deps[s->dep0 + j];
			if (d->pipelined && p->steps[d->step].chunks != s->chunks) {
				fast_jctx_push_key(c, "deps");
				fast_jctx_push_index(c, j);
				fast_jctx_fail(c, FAST_EINPUT,
					       "a pipelined dependency needs equal chunk counts (%u "
					       "here, %u in step %u)", s->chunks,
					       p->steps[d->step].chunks, d->step);
				fast_jctx_pop(c, o1);
				return FAST_EINPUT;
			}
		}
		fast_jctx_pop(c, o1);
	}
	return 0;
}

static int read_plan(struct fast_jctx *c, const struct fast_jv *v, const struct fast_limits *lim,
		     struct fast_plan *p, struct fast_err *err)
{
	static const char *const plan_keys[] = { "label", "matrix", "algo", "options", "servers",
						 "gpus_per_server", "gpus", "lanes", "steps", NULL };
	uint32_t servers = 0, gpus = 0, matrix = 0;
	const char *gk = NULL;
	char algo[32];
	const struct fast_jv *sv, *lv;
	size_t old, nsteps, idx = 0;
	int rc;

	rc = fast_jv_expect_object(c, v, plan_keys);
	if (rc == 0)
		rc = fast_jv_get_u32(c, v, "servers", true, 1, UINT32_MAX, &servers);
	/* version 1 called gpus_per_server "gpus"; either name is read */
	if (rc == 0 && !(gk = fast_jv_renamed(c, v, "gpus_per_server", "gpus")))
		rc = FAST_EINPUT;
	if (rc == 0)
		rc = fast_jv_get_u32(c, v, gk, true, 1, UINT32_MAX, &gpus);
	if (rc == 0 && (uint64_t)servers * gpus > lim->max_gpus) {
		old = fast_jctx_push_key(c, gk);
		rc = fast_jctx_fail(c, FAST_ELIMIT, "%u servers x %u GPUs is above the limit of %u "
				    "GPUs (raise it with --max-gpus)", servers, gpus, lim->max_gpus);
		fast_jctx_pop(c, old);
	}
	if (rc == 0)
		rc = fast_jv_get_u32(c, v, "matrix", true, 0, UINT32_MAX, &matrix);
	if (rc == 0)
		rc = fast_jv_get_string(c, v, "algo", true, algo, sizeof algo);
	if (rc < 0)
		return rc;
	fast_plan_init(p, servers, gpus, algo);
	p->matrix = matrix;
	rc = fast_jv_get_string(c, v, "label", false, p->label, sizeof p->label);
	if (rc == 0)
		rc = fast_jv_get_string(c, v, "options", false, p->options, sizeof p->options);
	lv = fast_jv_get(v, "lanes");
	if (rc == 0 && lv) {
		old = fast_jctx_push_key(c, "lanes");
		rc = read_lanes(c, lv, p, err);
		fast_jctx_pop(c, old);
	}
	sv = fast_jv_get(v, "steps");
	if (rc == 0 && !sv)
		rc = fast_jctx_fail(c, FAST_EINPUT, "missing required key \"steps\"");
	if (rc < 0)
		goto fail;
	old = fast_jctx_push_key(c, "steps");
	if (fast_jv_expect_array(c, sv) < 0) {
		rc = FAST_EINPUT;
	} else {
		nsteps = fast_jv_size(sv);
		for (const struct fast_jv *e = fast_jv_first(sv); e && rc == 0;
		     e = fast_jv_next(e), idx++) {
			size_t o2 = fast_jctx_push_index(c, idx);
			rc = read_step(c, e, p, idx, nsteps, err);
			fast_jctx_pop(c, o2);
		}
	}
	fast_jctx_pop(c, old);
	if (rc == 0)
		rc = check_cross_steps(c, p);
	if (rc == 0) {
		p->open_kind = FAST_OPEN_NONE;
		rc = fast_plan_validate(p, err);
		if (rc < 0) {
			char msg[FAST_ERRMSG_MAX];
			snprintf(msg, sizeof msg, "%s", err ? err->msg : "invalid plan");
			rc = fast_jctx_fail(c, rc, "%s", msg);
		}
	}
	if (rc == 0)
		return 0;
fail:
	fast_plan_free(p);
	return rc;
}

int fast_planset_parse(const char *text, size_t len, const char *name,
		       const struct fast_limits *lim, struct fast_planset *out,
		       struct fast_err *err)
{
	static const char *const root_keys[] = { "version", "kind", "plans", NULL };
	struct fast_json *doc = NULL;
	struct fast_jctx c;
	struct fast_planset ps = { 0, NULL };
	const struct fast_jv *root, *pv;
	uint64_t version = 0;
	char kind[32];
	size_t n, idx = 0, old;
	int rc;

	rc = fast_json_parse(text, len, name, &doc, err);
	if (rc < 0)
		return rc;
	fast_jctx_init(&c, name, err);
	root = fast_json_root(doc);
	/* a topology or traffic file given as --plan: say so, not "unknown key" */
	if (fast_jv_type(root) == FAST_JOBJECT && !fast_jv_get(root, "plans") &&
	    (fast_jv_get(root, "matrices") || fast_jv_get(root, "scale_out")))
		rc = fast_jctx_fail(&c, FAST_EINPUT,
				    "this is a %s file, not a plan file (make one with fast plan)",
				    fast_jv_get(root, "matrices") ? "traffic" : "topology");
	else
		rc = fast_jv_expect_object(&c, root, root_keys);
	if (rc == 0)
		rc = fast_jv_get_u64(&c, root, "version", true, UINT32_MAX, &version);
	if (rc == 0 && (version < 1 || version > FAST_PLAN_VERSION)) {
		old = fast_jctx_push_key(&c, "version");
		rc = fast_jctx_fail(&c, FAST_EINPUT, "unsupported plan version %llu (this build reads "
				    "versions 1 to %d)", (unsigned long long)version, FAST_PLAN_VERSION);
		fast_jctx_pop(&c, old);
	}
	if (rc == 0)
		rc = fast_jv_get_string(&c, root, "kind", true, kind, sizeof kind);
	if (rc == 0 && strcmp(kind, "fast-plan") != 0) {
		old = fast_jctx_push_key(&c, "kind");
		rc = fast_jctx_fail(&c, FAST_EINPUT, "expected \"fast-plan\" (got \"%s\")", kind);
		fast_jctx_pop(&c, old);
	}
	pv = fast_jv_get(root, "plans");
	if (rc == 0 && !pv)
		rc = fast_jctx_fail(&c, FAST_EINPUT, "missing required key \"plans\"");
	if (rc < 0)
		goto out;
	old = fast_jctx_push_key(&c, "plans");
	if (fast_jv_expect_array(&c, pv) < 0) {
		rc = FAST_EINPUT;
	} else if ((n = fast_jv_size(pv)) == 0) {
		rc = fast_jctx_fail(&c, FAST_EINPUT, "a plan file holds at least one plan");
	} else if (n > lim->max_matrices) {
		rc = fast_jctx_fail(&c, FAST_ELIMIT, "%zu plans is above the limit of %u", n,
				    lim->max_matrices);
	} else if (!(ps.plans = fast_calloc(n, sizeof *ps.plans))) {
		rc = fast_jctx_fail(&c, FAST_ENOMEM, "out of memory");
	} else {
		for (const struct fast_jv *e = fast_jv_first(pv); e && rc == 0;
		     e = fast_jv_next(e), idx++) {
			size_t o2 = fast_jctx_push_index(&c, idx);
			rc = read_plan(&c, e, lim, &ps.plans[idx], err);
			fast_jctx_pop(&c, o2);
			if (rc == 0)
				ps.count++;
		}
	}
	fast_jctx_pop(&c, old);
out:
	fast_json_free(doc);
	if (rc < 0) {
		fast_planset_free(&ps);
		return rc;
	}
	*out = ps;
	return 0;
}

int fast_planset_load(const char *path, const struct fast_limits *lim,
		      struct fast_planset *out, struct fast_err *err)
{
	char *text;
	size_t len;
	int rc = fast_read_file(path, lim->max_file_bytes, &text, &len, err);
	if (rc < 0)
		return rc;
	rc = fast_planset_parse(text, len, path, lim, out, err);
	free(text);
	return rc;
}

/* --- summaries ------------------------------------------------------------ */

/* Staging on an explicit, valid plan (see plan.h for the definition). */
static int staging(const struct fast_plan *e, uint64_t *peak, struct fast_err *err)
{
	uint32_t ng = e->servers * e->gpus;
	uint64_t *held = fast_calloc(ng, sizeof *held);
	uint32_t *order = fast_calloc(e->nsteps ? e->nsteps : 1, sizeof *order);
	int rc = 0;

	if (!held || !order) {
		rc = fast_err_set(err, FAST_ENOMEM, "plan: out of memory (staging)");
		goto out;
	}
	memset(peak, 0, ng * sizeof *peak);
	rc = fast_plan_topo_order(e, order, err);
	if (rc < 0)
		goto out;
	for (size_t i = 0; i < e->nsteps; i++) {
		const struct fast_step *s = &e->steps[order[i]];
		for (uint32_t j = 0; j < s->nxfers; j++) {
			const struct fast_xfer *x = &e->xfers[s->xfer0 + j];
			for (uint32_t k = 0; k < x->npieces; k++) {
				const struct fast_piece *pc = &e->pieces[x->piece0 + k];
				if (x->to != pc->src && x->to != pc->dst && x->to != x->from)
					held[x->to] += pc->len;
			}
			if (held[x->to] > peak[x->to])
				peak[x->to] = held[x->to];
		}
		for (uint32_t j = 0; j < s->nxfers; j++) {
			const struct fast_xfer *x = &e->xfers[s->xfer0 + j];
			if (x->from == x->to)
				continue;
			for (uint32_t k = 0; k < x->npieces; k++) {
				const struct fast_piece *pc = &e->pieces[x->piece0 + k];
				if (x->from != pc->src && x->from != pc->dst)
					held[x->from] -= pc->len < held[x->from] ? pc->len
										 : held[x->from];
			}
		}
	}
out:
	free(held);
	free(order);
	return rc;
}

int fast_plan_summarize_view(const struct fast_plan_view *v, struct fast_plan_summary *out,
			     uint64_t *peak, struct fast_err *err)
{
	const struct fast_plan *p = v->given, *e = v->x;
	struct fast_plan_summary sm;
	uint64_t *own = NULL;
	int rc;

	memset(&sm, 0, sizeof sm);
	for (size_t t = 0; t < p->nsteps; t++) {
		const struct fast_step *s = &p->steps[t];
		if (s->tier == FAST_TIER_UP)
			sm.steps_up++;
		else
			sm.steps_out++;
		if (s->kind == FAST_STEP_RAIL)
			sm.rail_stages++;
	}
	for (size_t t = 0; t < e->nsteps; t++) {
		const struct fast_step *s = &e->steps[t];
		uint64_t step_bytes = 0;
		for (uint32_t j = 0; j < s->nxfers; j++) {
			const struct fast_xfer *x = &e->xfers[s->xfer0 + j];
			sm.transfers++;
			sm.pieces += x->npieces;
			if (x->from == x->to)
				continue; /* a local copy moves nothing over a link */
			step_bytes += x->bytes;
			for (uint32_t k = 0; k < x->npieces; k++)
				if (e->pieces[x->piece0 + k].src != x->from)
					sm.bytes_relayed += e->pieces[x->piece0 + k].len;
		}
		if (s->tier == FAST_TIER_UP)
			sm.bytes_up += step_bytes;
		else
			sm.bytes_out += step_bytes;
		if (step_bytes > sm.largest_step_bytes) {
			sm.largest_step_bytes = step_bytes;
			sm.largest_step = (uint32_t)t;
		}
	}
	if (!peak) {
		peak = own = fast_calloc((size_t)e->servers * e->gpus, sizeof *peak);
		if (!peak)
			return fast_err_set(err, FAST_ENOMEM, "plan: out of memory (summary)");
	}
	rc = staging(e, peak, err);
	if (rc == 0) {
		for (uint32_t g = 0; g < e->servers * e->gpus; g++)
			if (peak[g] > sm.peak_staging) {
				sm.peak_staging = peak[g];
				sm.peak_staging_gpu = g;
			}
		*out = sm;
	}
	free(own);
	return rc;
}

int fast_plan_staging(const struct fast_plan *p, uint64_t *peak, struct fast_err *err)
{
	struct fast_plan_view v;
	struct fast_plan_summary sm;
	int rc = fast_plan_view_open(&v, p, err);

	if (rc < 0)
		return rc;
	rc = fast_plan_summarize_view(&v, &sm, peak, err);
	fast_plan_view_close(&v);
	return rc;
}

int fast_plan_summarize(const struct fast_plan *p, struct fast_plan_summary *out,
			struct fast_err *err)
{
	struct fast_plan_view v;
	int rc = fast_plan_view_open(&v, p, err);

	if (rc < 0)
		return rc;
	rc = fast_plan_summarize_view(&v, out, NULL, err);
	fast_plan_view_close(&v);
	return rc;
}
