/*
 * sweep_spec_axes.c - the axis readers of the sweep spec (sweep_spec.c):
 * a member that is a scalar or an array of distinct values, read as
 * numbers in a range, sizes with units, strings, or names of a table's
 * values, each error naming the value's JSON path, a repeated value
 * refused (it would make the same cases twice); and the bounded growing
 * arrays the parsed spec is made of.  A spec is a few KiB written by hand,
 * so the limits, not speed, are the point.
 */
#include "sweep_spec_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- axis values ------------------------------------------------------------ */

/* Iterate a scalar-or-array member: the values into out[] (at most max).
 * Absent: *n = 0. */
int sweep_axis_values(struct fast_jctx *c, const struct fast_jv *obj, const char *key,
		      const struct fast_jv **out, uint32_t max, uint32_t *n)
{
	const struct fast_jv *v = fast_jv_get(obj, key);
	size_t old;

	*n = 0;
	if (!v)
		return 0;
	if (fast_jv_type(v) != FAST_JARRAY) {
		out[(*n)++] = v;
		return 0;
	}
	old = fast_jctx_push_key(c, key);
	if (fast_jv_size(v) == 0)
		return fast_jctx_fail(c, FAST_EINPUT, "must not be empty");
	if (fast_jv_size(v) > max)
		return fast_jctx_fail(c, FAST_ELIMIT, "more than %u values", max);
	for (const struct fast_jv *e = fast_jv_first(v); e; e = fast_jv_next(e))
		out[(*n)++] = e;
	fast_jctx_pop(c, old);
	return 0;
}

/* Push the path of value i of member key (scalar: just the key). */
size_t sweep_axis_path(struct fast_jctx *c, const struct fast_jv *obj, const char *key,
		       uint32_t i)
{
	size_t old = fast_jctx_push_key(c, key);
	if (fast_jv_type(fast_jv_get(obj, key)) == FAST_JARRAY)
		fast_jctx_push_index(c, i);
	return old;
}

/* Refuse value i of axis key: it repeats an earlier value (shown), which
 * would make the same cases twice. */
int sweep_axis_dup(struct fast_jctx *c, const struct fast_jv *obj, const char *key, uint32_t i,
		   const char *shown)
{
	size_t old = sweep_axis_path(c, obj, key, i);
	int rc = fast_jctx_fail(c, FAST_EINPUT, "duplicate value %s", shown);
	fast_jctx_pop(c, old);
	return rc;
}

int sweep_axis_doubles(struct fast_jctx *c, const struct fast_jv *obj, const char *key,
		       double min, double max, bool min_excl, double *out, uint32_t *n)
{
	const struct fast_jv *v[MAX_AXIS];
	int rc = sweep_axis_values(c, obj, key, v, MAX_AXIS, n);

	for (uint32_t i = 0; rc == 0 && i < *n; i++) {
		size_t old = sweep_axis_path(c, obj, key, i);
		rc = fast_jv_as_double(c, v[i], min, max, min_excl, &out[i]);
		fast_jctx_pop(c, old);
		for (uint32_t j = 0; rc == 0 && j < i; j++)
			if (out[j] == out[i]) {
				char shown[32];
				snprintf(shown, sizeof shown, "%.9g", out[i]);
				rc = sweep_axis_dup(c, obj, key, i, shown);
			}
	}
	return rc;
}

int sweep_axis_u64(struct fast_jctx *c, const struct fast_jv *obj, const char *key, uint64_t min,
		   uint64_t max, uint64_t *out, uint32_t *n)
{
	const struct fast_jv *v[MAX_AXIS];
	int rc = sweep_axis_values(c, obj, key, v, MAX_AXIS, n);

	for (uint32_t i = 0; rc == 0 && i < *n; i++) {
		size_t old = sweep_axis_path(c, obj, key, i);
		rc = fast_jv_as_u64(c, v[i], max, &out[i]);
		if (rc == 0 && out[i] < min)
			rc = fast_jctx_fail(c, FAST_EINPUT, "must be >= %llu (got %llu)",
					    (unsigned long long)min, (unsigned long long)out[i]);
		fast_jctx_pop(c, old);
		for (uint32_t j = 0; rc == 0 && j < i; j++)
			if (out[j] == out[i]) {
				char shown[32];
				snprintf(shown, sizeof shown, "%llu", (unsigned long long)out[i]);
				rc = sweep_axis_dup(c, obj, key, i, shown);
			}
	}
	return rc;
}

/* Strings; each must be one of names (when non-NULL): out gets the index. */
int sweep_axis_strings(struct fast_jctx *c, const struct fast_jv *obj, const char *key,
		       const char **out, uint32_t *n)
{
	const struct fast_jv *v[MAX_AXIS];
	int rc = sweep_axis_values(c, obj, key, v, MAX_AXIS, n);

	for (uint32_t i = 0; rc == 0 && i < *n; i++) {
		size_t old = sweep_axis_path(c, obj, key, i);
		if (fast_jv_type(v[i]) != FAST_JSTRING)
			rc = fast_jctx_fail(c, FAST_EINPUT, "must be a string (got %s)",
					    fast_jtype_name(fast_jv_type(v[i])));
		else
			out[i] = fast_jv_string(v[i]);
		fast_jctx_pop(c, old);
		for (uint32_t j = 0; rc == 0 && j < i; j++)
			if (strcmp(out[j], out[i]) == 0) {
				char shown[48];
				snprintf(shown, sizeof shown, "'%.40s'", out[i]);
				rc = sweep_axis_dup(c, obj, key, i, shown);
			}
	}
	return rc;
}

int sweep_axis_enum(struct fast_jctx *c, const struct fast_jv *obj, const char *key,
		    const char *const *names, int *out, uint32_t *n)
{
	const char *v[MAX_AXIS];
	int rc = sweep_axis_strings(c, obj, key, v, n);

	for (uint32_t i = 0; rc == 0 && i < *n; i++) {
		int k;
		for (k = 0; names[k] && strcmp(names[k], v[i]) != 0; k++)
			;
		if (!names[k]) {
			size_t old = sweep_axis_path(c, obj, key, i);
			char known[160] = "";
			for (int j = 0; names[j]; j++)
				snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s",
					 j ? ", " : "", names[j]);
			rc = fast_jctx_fail(c, FAST_EINPUT, "unknown value '%.40s' (known: %s)", v[i], known);
			fast_jctx_pop(c, old);
		}
		out[i] = k;
	}
	return rc;
}

int sweep_axis_sizes(struct fast_jctx *c, const struct fast_jv *obj, const char *key,
		     uint64_t *out, uint32_t *n)
{
	const struct fast_jv *v[MAX_AXIS];
	int rc = sweep_axis_values(c, obj, key, v, MAX_AXIS, n);

	for (uint32_t i = 0; rc == 0 && i < *n; i++) {
		size_t old = sweep_axis_path(c, obj, key, i);
		if (fast_jv_type(v[i]) == FAST_JSTRING) {
			struct fast_err e2;
			if (fast_size_parse(fast_jv_string(v[i]), &out[i], &e2) < 0)
				rc = fast_jctx_fail(c, FAST_EINPUT, "%s", e2.msg);
		} else {
			rc = fast_jv_as_u64(c, v[i], FAST_JSON_MAX_BYTES, &out[i]);
		}
		if (rc == 0 && out[i] == 0)
			rc = fast_jctx_fail(c, FAST_EINPUT, "a size must be > 0");
		fast_jctx_pop(c, old);
		for (uint32_t j = 0; rc == 0 && j < i; j++)
			if (out[j] == out[i]) {
				char shown[48];
				snprintf(shown, sizeof shown, "%llu bytes", (unsigned long long)out[i]);
				rc = sweep_axis_dup(c, obj, key, i, shown);
			}
	}
	return rc;
}

/* --- growing arrays -------------------------------------------------------- */

/* Each array holds at most PUSH_MAX_BYTES: a few KiB of spec with long axes
 * (2048 presets x 2048 x 2048 bandwidth overrides) must not ask for
 * gigabytes.  Arrays grow by doubling: the capacity is the next power of
 * two >= *n, so a push reallocates only when *n is 0 or a power of two. */
#define PUSH_MAX_BYTES (UINT64_C(64) << 20)

int sweep_spec_push(void **arr, uint32_t *n, size_t sz, struct fast_err *err)
{
	void *p = *arr;

	if (*n >= (1u << 24) || ((uint64_t)*n + 1) * sz > PUSH_MAX_BYTES)
		return fast_err_set(err, FAST_ELIMIT, "sweep spec: too many cases (%u and more)", *n);
	if ((*n & (*n - 1)) == 0) {
		p = fast_reallocarray(*arr, *n ? (size_t)*n * 2 : 1, sz);
		if (!p)
			return fast_err_set(err, FAST_ENOMEM, "sweep spec: out of memory");
		*arr = p;
	}
	memset((char *)p + (size_t)*n * sz, 0, sz);
	(*n)++;
	return 0;
}
