/*
 * plan.c - the plan IR (plan.h): building a plan step by step and hashing it.
 * Validation and topological order are in plan_validate.c, expansion of the
 * compact forms in plan_expand.c, the JSON file format in plan_json.c, the
 * plan view and summaries in plan_view.c; plan.h is the one header of all five.
 *
 * Workload: plans for up to thousands of GPUs, 10^4..10^5 steps and 10^5..10^7
 * pieces.  Storage is a handful of flat arrays grown by doubling; every pass
 * here is linear (or n log n) in the plan size.
 */
#include "plan.h"

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
