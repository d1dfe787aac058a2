/*
 * plan_json_read.c - the strict reader of the plan file format (the
 * format is described in plan_json.c, next to the writer whose canonical
 * form it reads back): fast_planset_parse / fast_planset_load check every
 * field against the limits in struct fast_limits and name the JSON path
 * of what is wrong.
 */
#include "fast/plan.h"

#include <stdlib.h>
#include <string.h>

#include "lib/base/json.h"

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
		uint32_t src, dst = 0;
		uint64_t off, len;
		size_t li = 3; /* index of the length */
		size_t old = fast_jctx_push_index(c, idx);
		if (p->kind == FAST_TRAFFIC_BYTES) {
			rc = tuple(c, e, 4, "a piece [src, dst, offset, length]", el);
			if (rc == 0)
				rc = u32_at(c, el[0], 0, ng, "GPU", &src);
			if (rc == 0)
				rc = u32_at(c, el[1], 1, ng, "GPU", &dst);
			if (rc == 0)
				rc = u64_at(c, el[2], 2, FAST_JSON_MAX_BYTES, &off);
		} else {
			bool comb = p->kind == FAST_TRAFFIC_COMBINE;
			li = 2;
			rc = comb ? tuple(c, e, 4, "a combine piece [group, offset, length, mask]", el)
				  : tuple(c, e, 3, "a dispatch piece [group, offset, length]", el);
			if (rc == 0)
				rc = u32_at(c, el[0], 0, UINT32_MAX, "group", &src);
			if (rc == 0)
				rc = u64_at(c, el[1], 1, FAST_JSON_MAX_BYTES, &off);
			if (rc == 0 && comb)
				rc = p->nmasks ? u32_at(c, el[3], 3, (uint32_t)p->nmasks, "mask", &dst)
					       : fast_jctx_fail(c, FAST_EINPUT,
								"a combine piece needs a mask, and "
								"the plan has no \"masks\"");
		}
		if (rc == 0)
			rc = u64_at(c, el[li], li, FAST_JSON_MAX_BYTES, &len);
		if (rc == 0 && len == 0) {
			size_t o2 = fast_jctx_push_index(c, li);
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

/* The transfers of an explicit step, [[from, to, pieces], ...], or with
 * sum set those of a reduce step, [[gpu, pieces], ...]: each sum is a
 * transfer gpu -> gpu with >= 1 inputs (what a sum must be otherwise is
 * checked by fast_plan_validate). */
static int read_transfers(struct fast_jctx *c, const struct fast_jv *v, struct fast_plan *p,
			  bool sum, struct fast_err *err)
{
	uint32_t ng = p->servers * p->gpus;
	size_t idx = 0, npos = sum ? 1 : 2; /* where the pieces are */
	int rc = 0;

	if (fast_jv_expect_array(c, v) < 0)
		return FAST_EINPUT;
	for (const struct fast_jv *e = fast_jv_first(v); e && rc == 0; e = fast_jv_next(e), idx++) {
		const struct fast_jv *el[3];
		uint32_t from = 0, to;
		size_t old = fast_jctx_push_index(c, idx);
		rc = tuple(c, e, npos + 1, sum ? "a sum [gpu, pieces]" : "a transfer [from, to, pieces]",
			   el);
		if (rc == 0)
			rc = u32_at(c, el[0], 0, ng, "GPU", &from);
		to = from;
		if (rc == 0 && !sum)
			rc = u32_at(c, el[1], 1, ng, "GPU", &to);
		if (rc == 0) {
			rc = fast_plan_add_xfer(p, from, to, err);
			if (rc < 0)
				rc = fast_jctx_fail(c, rc, "%s", err ? err->msg : "out of memory");
		}
		if (rc == 0) {
			size_t o2 = fast_jctx_push_index(c, npos);
			if (sum && fast_jv_type(el[npos]) == FAST_JARRAY && fast_jv_size(el[npos]) == 0)
				rc = fast_jctx_fail(c, FAST_EINPUT, "a sum has >= 1 inputs");
			else
				rc = read_pieces(c, el[npos], p, false, err);
			fast_jctx_pop(c, o2);
		}
		fast_jctx_pop(c, old);
	}
	return rc;
}

/* One permutation of the servers, the array v, into perm (seen: scratch
 * of servers entries). */
static int read_perm(struct fast_jctx *c, const struct fast_jv *v, const struct fast_plan *p,
		     uint32_t *perm, bool *seen)
{
	size_t idx = 0;
	int rc = 0;

	if (fast_jv_expect_array(c, v) < 0)
		return FAST_EINPUT;
	memset(seen, 0, p->servers * sizeof *seen);
	for (const struct fast_jv *e = fast_jv_first(v); e && rc == 0; e = fast_jv_next(e), idx++) {
		uint32_t b;
		if (idx == p->servers)
			return fast_jctx_fail(c, FAST_EINPUT, "a permutation of %u servers has more "
					      "than %u entries", p->servers, p->servers);
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
	return rc;
}

/* "perms" (version 4): k >= 2 permutations, and "bytes" a list of k
 * budgets; into perms (k * servers) and w (k), allocated here. */
static int read_perms(struct fast_jctx *c, const struct fast_jv *v, const struct fast_plan *p,
		      uint64_t version, uint32_t **perms, uint64_t **w, uint32_t *k)
{
	const struct fast_jv *pv = fast_jv_get(v, "perms"), *bv = fast_jv_get(v, "bytes");
	bool *seen = NULL;
	size_t n = 0, old, idx = 0;
	int rc = 0;

	if (version < FAST_PLAN_VERSION_GROUPED)
		return fast_jctx_fail(c, FAST_EINPUT, "a rail step of several permutations needs "
				      "plan version %d (the file says %llu)",
				      FAST_PLAN_VERSION_GROUPED, (unsigned long long)version);
	old = fast_jctx_push_key(c, "perms");
	if (fast_jv_expect_array(c, pv) < 0)
		rc = FAST_EINPUT;
	else if ((n = fast_jv_size(pv)) < 2)
		rc = fast_jctx_fail(c, FAST_EINPUT, "\"perms\" lists 2 or more permutations (got "
				    "%zu; one is \"perm\")", n);
	fast_jctx_pop(c, old);
	if (rc < 0)
		return rc;
	old = fast_jctx_push_key(c, "bytes");
	if (!bv)
		rc = fast_jctx_fail(c, FAST_EINPUT, "missing required key \"bytes\"");
	else if (fast_jv_expect_array(c, bv) < 0)
		rc = FAST_EINPUT;
	else if (fast_jv_size(bv) != n)
		rc = fast_jctx_fail(c, FAST_EINPUT, "%zu budgets for %zu permutations: one each",
				    fast_jv_size(bv), n);
	fast_jctx_pop(c, old);
	if (rc < 0)
		return rc;
	*perms = fast_calloc(n * p->servers, sizeof **perms);
	*w = fast_calloc(n, sizeof **w);
	seen = fast_calloc(p->servers, sizeof *seen);
	if (!*perms || !*w || !seen) {
		free(seen);
		return fast_jctx_fail(c, FAST_ENOMEM, "out of memory");
	}
	old = fast_jctx_push_key(c, "perms");
	for (const struct fast_jv *e = fast_jv_first(pv); e && rc == 0; e = fast_jv_next(e), idx++) {
		size_t o2 = fast_jctx_push_index(c, idx);
		rc = read_perm(c, e, p, *perms + idx * p->servers, seen);
		fast_jctx_pop(c, o2);
	}
	fast_jctx_pop(c, old);
	old = fast_jctx_push_key(c, "bytes");
	idx = 0;
	for (const struct fast_jv *e = rc ? NULL : fast_jv_first(bv); e && rc == 0;
	     e = fast_jv_next(e), idx++)
		rc = u64_at(c, e, idx, FAST_JSON_MAX_BYTES, &(*w)[idx]);
	fast_jctx_pop(c, old);
	free(seen);
	*k = (uint32_t)n;
	return rc;
}

/* A rail step: {"perm": [...], "bytes": w}, or (version 4) {"perms":
 * [[...], ...], "bytes": [w_1, ...]}. */
static int read_rail(struct fast_jctx *c, const struct fast_jv *v, struct fast_plan *p,
		     uint64_t version, struct fast_err *err)
{
	static const char *const rail_keys[] = { "perm", "perms", "bytes", NULL };
	const struct fast_jv *pv;
	uint32_t *perm = NULL, k = 1;
	uint64_t *w = NULL;
	bool *seen = NULL;
	size_t old;
	int rc;

	rc = fast_jv_expect_object(c, v, rail_keys);
	if (rc < 0)
		return rc;
	if (fast_jv_get(v, "perm") && fast_jv_get(v, "perms"))
		return fast_jctx_fail(c, FAST_EINPUT, "a rail step has \"perm\" or \"perms\", "
				      "not both");
	if (fast_jv_get(v, "perms")) {
		rc = read_perms(c, v, p, version, &perm, &w, &k);
	} else {
		w = fast_calloc(1, sizeof *w);
		perm = fast_calloc(p->servers, sizeof *perm);
		seen = fast_calloc(p->servers, sizeof *seen);
		if (!w || !perm || !seen)
			rc = fast_jctx_fail(c, FAST_ENOMEM, "out of memory");
		if (rc == 0)
			rc = fast_jv_get_u64(c, v, "bytes", true, FAST_JSON_MAX_BYTES, w);
		pv = rc ? NULL : fast_jv_get(v, "perm");
		if (rc == 0 && !pv)
			rc = fast_jctx_fail(c, FAST_EINPUT, "missing required key \"perm\"");
		if (rc == 0) {
			old = fast_jctx_push_key(c, "perm");
			rc = read_perm(c, pv, p, perm, seen);
			fast_jctx_pop(c, old);
		}
	}
	if (rc == 0) {
		rc = fast_plan_set_perms(p, k, perm, w, err);
		if (rc < 0)
			rc = fast_jctx_fail(c, rc, "%s", err ? err->msg : "out of memory");
	}
	free(perm);
	free(w);
	free(seen);
	return rc;
}

static int read_step(struct fast_jctx *c, const struct fast_jv *v, struct fast_plan *p,
		     size_t t, size_t nsteps, uint64_t version, struct fast_err *err)
{
	static const char *const step_keys[] = { "id", "tier", "chunks", "deps", "transfers",
						 "rail", "redist", "reduce", NULL };
	const struct fast_jv *xv, *rv, *dv, *uv, *deps;
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
	uv = fast_jv_get(v, "reduce");
	if ((xv != NULL) + (rv != NULL) + (dv != NULL) + (uv != NULL) != 1)
		return fast_jctx_fail(c, FAST_EINPUT, "a step has exactly one of \"transfers\", "
				      "\"rail\", \"redist\" or \"reduce\"");
	if (uv && p->kind != FAST_TRAFFIC_COMBINE) {
		old = fast_jctx_push_key(c, "reduce");
		rc = fast_jctx_fail(c, FAST_EINPUT, "a reduce step belongs to a combine plan (this is "
				    "a %s plan)", fast_traffic_kind_name(p->kind));
		fast_jctx_pop(c, old);
		return rc;
	}
	if (uv && tid != FAST_TIER_UP) {
		old = fast_jctx_push_key(c, "tier");
		rc = fast_jctx_fail(c, FAST_EINPUT, "a reduce step must be tier \"up\"");
		fast_jctx_pop(c, old);
		return rc;
	}
	kind = xv ? FAST_STEP_EXPLICIT : rv ? FAST_STEP_RAIL : dv ? FAST_STEP_REDIST
						       : FAST_STEP_REDUCE;
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
		rc = read_transfers(c, xv, p, false, err);
		fast_jctx_pop(c, old);
	} else if (uv) {
		old = fast_jctx_push_key(c, "reduce");
		rc = read_transfers(c, uv, p, true, err);
		fast_jctx_pop(c, old);
	} else if (rv) {
		old = fast_jctx_push_key(c, "rail");
		if (tid != FAST_TIER_OUT)
			rc = fast_jctx_fail(c, FAST_EINPUT, "a rail step must be tier \"out\"");
		else
			rc = read_rail(c, rv, p, version, err);
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

/* "masks": canonical hex strings ("0x" and 1..16 lower-case digits, no
 * leading zero, non-zero), appended to p->masks in order. */
static int read_masks(struct fast_jctx *c, const struct fast_jv *v, struct fast_plan *p,
		      struct fast_err *err)
{
	size_t idx = 0;
	int rc = 0;

	if (fast_jv_expect_array(c, v) < 0)
		return FAST_EINPUT;
	if (fast_jv_size(v) > 0 &&
	    FAST_GROW(p->masks, p->cap_masks, fast_jv_size(v)) < 0)
		return fast_jctx_fail(c, FAST_ENOMEM, "out of memory");
	for (const struct fast_jv *e = fast_jv_first(v); e && rc == 0; e = fast_jv_next(e), idx++) {
		size_t old = fast_jctx_push_index(c, idx);
		const char *str = fast_jv_type(e) == FAST_JSTRING ? fast_jv_string(e) : NULL;
		size_t n = str ? strlen(str) : 0;
		uint64_t mask = 0;
		bool ok = str && n >= 3 && n <= 18 && str[0] == '0' && str[1] == 'x' && str[2] != '0';
		for (size_t i = 2; ok && i < n; i++) {
			char ch = str[i];
			if (ch >= '0' && ch <= '9')
				mask = mask << 4 | (uint64_t)(ch - '0');
			else if (ch >= 'a' && ch <= 'f')
				mask = mask << 4 | (uint64_t)(ch - 'a' + 10);
			else
				ok = false;
		}
		if (!ok)
			rc = fast_jctx_fail(c, FAST_EINPUT,
					    "a mask is a non-zero hex string like \"0x3f\" (lower case, "
					    "no leading zeros)");
		else
			p->masks[p->nmasks++] = mask;
		fast_jctx_pop(c, old);
	}
	(void)err;
	return rc;
}

/* "kind" (version 3): absent or "bytes" for a byte plan. */
static int read_kind(struct fast_jctx *c, const struct fast_jv *v, uint64_t version,
		     struct fast_plan *p)
{
	char kind[16];
	size_t old;
	int rc;

	if (!fast_jv_get(v, "kind"))
		return 0;
	old = fast_jctx_push_key(c, "kind");
	if (version < 3)
		rc = fast_jctx_fail(c, FAST_EINPUT, "a plan's kind needs plan version 3 (the file "
				    "says %llu)", (unsigned long long)version);
	else
		rc = 0;
	fast_jctx_pop(c, old);
	if (rc == 0)
		rc = fast_jv_get_string(c, v, "kind", true, kind, sizeof kind);
	if (rc < 0)
		return rc;
	if (strcmp(kind, "bytes") == 0)
		p->kind = FAST_TRAFFIC_BYTES;
	else if (strcmp(kind, "dispatch") == 0)
		p->kind = FAST_TRAFFIC_DISPATCH;
	else if (strcmp(kind, "combine") == 0)
		p->kind = FAST_TRAFFIC_COMBINE;
	else {
		old = fast_jctx_push_key(c, "kind");
		rc = fast_jctx_fail(c, FAST_EINPUT, "kind must be \"bytes\", \"dispatch\" or "
				    "\"combine\" (got \"%s\")", kind);
		fast_jctx_pop(c, old);
	}
	return rc;
}

static int read_plan(struct fast_jctx *c, const struct fast_jv *v, const struct fast_limits *lim,
		     uint64_t version, struct fast_plan *p, struct fast_err *err)
{
	static const char *const plan_keys[] = { "label", "matrix", "algo", "options", "servers",
						 "gpus_per_server", "gpus", "kind", "masks", "lanes",
						 "steps", NULL };
	uint32_t servers = 0, gpus = 0, matrix = 0;
	const char *gk = NULL;
	char algo[32];
	const struct fast_jv *sv, *lv, *mv;
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
	if (rc == 0)
		rc = read_kind(c, v, version, p);
	mv = fast_jv_get(v, "masks");
	if (rc == 0 && mv) {
		old = fast_jctx_push_key(c, "masks");
		if (p->kind != FAST_TRAFFIC_COMBINE)
			rc = fast_jctx_fail(c, FAST_EINPUT, "only a combine plan has masks (this is a "
					    "%s plan)", fast_traffic_kind_name(p->kind));
		else
			rc = read_masks(c, mv, p, err);
		fast_jctx_pop(c, old);
	}
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
			rc = read_step(c, e, p, idx, nsteps, version, err);
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
			rc = read_plan(&c, e, lim, version, &ps.plans[idx], err);
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

