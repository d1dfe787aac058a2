/*
 * plan_space.c - the plan builder's bulk path (plan.h): room for many
 * lanes, transfers and pieces at the end of their arrays, written in place
 * by the caller and committed in one call, reservations from upper bounds
 * before a compile, and trimming of what a finished plan did not use.
 * This is how the compilers write plans of 10^5..10^7 pieces: a builder
 * call per piece (plan.c) cost a third of a compile.
 */
#include "fast/plan.h"
#include "lib/plan/plan_internal.h"

#include <stdlib.h>
#include <string.h>

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

/* Room for add more elements after the n of *arr (capacity *cap, size
 * bytes each), n + add kept below UINT32_MAX (ids are 32-bit); else
 * FAST_ENOMEM, "plan: out of memory (N what)". */
static int array_space(void **arr, size_t *cap, size_t n, size_t add, size_t size,
		       const char *what, struct fast_err *err)
{
	if (add > UINT32_MAX - 1 - n || (n + add > *cap && fast_grow(arr, cap, n + add, size, 16) < 0))
		return fast_err_set(err, FAST_ENOMEM, "plan: out of memory (%zu %s)", n + add, what);
	return 0;
}

int fast_plan_lane_space(struct fast_plan *p, size_t nl, size_t np, struct fast_lane **lanes,
			 struct fast_piece **pieces, struct fast_err *err)
{
	struct fast_piece *at = piece_space(p, np, err);

	if (!at)
		return FAST_ENOMEM;
	if (array_space((void **)&p->lanes, &p->cap_lanes, p->nlanes, nl, sizeof *p->lanes, "lanes",
			err) < 0)
		return FAST_ENOMEM;
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
	if (array_space((void **)&p->xfers, &p->cap_xfers, p->nxfers, nx, sizeof *p->xfers,
			"transfers", err) < 0)
		return FAST_ENOMEM;
	*xfers = p->xfers + p->nxfers;
	*pieces = at;
	return 0;
}

int fast_plan_commit_xfers(struct fast_plan *p, size_t k, struct fast_err *err)
{
	struct fast_step *s = fast_plan_xfer_step(p, err);
	size_t at = p->npieces;

	if (!s)
		return FAST_EINPUT;
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
