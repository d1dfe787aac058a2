/*
 * sweep_spec_internal.h - what the sweep spec's parser (sweep_spec.c) and
 * its axis readers (sweep_spec_axes.c) share.  An axis is a member that is
 * a scalar or an array of at most MAX_AXIS distinct values; every reader
 * fails through the JSON context, with the value's path in the message.
 * Not used outside the sweep spec (sweep_spec.h is its interface).
 */
#ifndef FAST_SWEEP_SPEC_INTERNAL_H
#define FAST_SWEEP_SPEC_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fast/common.h"
#include "lib/base/json.h"

#define MAX_AXIS 4096u

/* Iterate a scalar-or-array member: the values into out[] (at most max).
 * Absent: *n = 0. */
int sweep_axis_values(struct fast_jctx *c, const struct fast_jv *obj, const char *key,
		      const struct fast_jv **out, uint32_t max, uint32_t *n);

/* Push the path of value i of member key (scalar: just the key). */
size_t sweep_axis_path(struct fast_jctx *c, const struct fast_jv *obj, const char *key,
		       uint32_t i);

/* Refuse value i of axis key: it repeats an earlier value (shown), which
 * would make the same cases twice. */
int sweep_axis_dup(struct fast_jctx *c, const struct fast_jv *obj, const char *key, uint32_t i,
		   const char *shown);

int sweep_axis_doubles(struct fast_jctx *c, const struct fast_jv *obj, const char *key,
		       double min, double max, bool min_excl, double *out, uint32_t *n);

int sweep_axis_u64(struct fast_jctx *c, const struct fast_jv *obj, const char *key, uint64_t min,
		   uint64_t max, uint64_t *out, uint32_t *n);

/* Strings; each must be one of names (when non-NULL): out gets the index. */
int sweep_axis_strings(struct fast_jctx *c, const struct fast_jv *obj, const char *key,
		       const char **out, uint32_t *n);

int sweep_axis_enum(struct fast_jctx *c, const struct fast_jv *obj, const char *key,
		    const char *const *names, int *out, uint32_t *n);

int sweep_axis_sizes(struct fast_jctx *c, const struct fast_jv *obj, const char *key,
		     uint64_t *out, uint32_t *n);

int sweep_spec_push(void **arr, uint32_t *n, size_t sz, struct fast_err *err);

#endif
