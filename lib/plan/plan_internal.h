/*
 * plan_internal.h - what the plan builder's files (plan.c, plan_space.c)
 * share.  Not part of the library's interface (plan.h is).
 */
#ifndef FAST_PLAN_INTERNAL_H
#define FAST_PLAN_INTERNAL_H

#include "fast/plan.h"

/* The step being built: the last one (NULL and FAST_EINPUT in err, naming
 * `what` was added, before the first step). */
static inline struct fast_step *fast_plan_last_step(struct fast_plan *p, const char *what, struct fast_err *err)
{
	if (p->nsteps == 0) {
		fast_err_set(err, FAST_EINPUT, "plan builder: %s before the first step", what);
		return NULL;
	}
	return &p->steps[p->nsteps - 1];
}

/* The step being built, which must take transfers (EXPLICIT or REDUCE);
 * else NULL and FAST_EINPUT in err. */
static inline struct fast_step *fast_plan_xfer_step(struct fast_plan *p, struct fast_err *err)
{
	struct fast_step *s = fast_plan_last_step(p, "a transfer", err);

	if (s && s->kind != FAST_STEP_EXPLICIT && s->kind != FAST_STEP_REDUCE) {
		fast_err_set(err, FAST_EINPUT,
			     "plan builder: transfer added to step %zu, which is not EXPLICIT or "
			     "REDUCE", p->nsteps - 1);
		return NULL;
	}
	return s;
}

#endif
