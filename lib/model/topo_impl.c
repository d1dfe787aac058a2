/*
 * topo_impl.c - how each schedule's real implementation runs (topo.h,
 * "implementations"): the entries, their caps, and those parts of loading,
 * validating, hashing, writing and naming fields of a topology.
 *
 * JSON (schemas/topology.schema.json, /implementation): an object with an
 * optional "default" entry, an entry per schedule that needs one (its
 * fields over the default's) and a "source" text.  In memory every entry
 * is complete (impl[0] the default, impl[1 + i] schedule i), so a lookup
 * is an index; the writer gives the default whole and each schedule only
 * the fields where it differs, so that what it writes reads back equal.
 *
 * A topology whose entries are all neutral has no "implementation" in its
 * normalised form and hashes as before there were implementations.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lib/model/topo_internal.h"

static const char *const names[FAST_IMPL_SCHEDS + 1] = {
	"fast", "fanout", "nccl", "pxn", "spreadout", "hier", NULL,
};

const char *const *fast_topo_impl_names(void)
{
	return names;
}

/* The slot of schedule name (0: the default, for any other name). */
static size_t slot_of(const char *name)
{
	for (size_t i = 0; name && i < FAST_IMPL_SCHEDS; i++)
		if (strcmp(names[i], name) == 0)
			return 1 + i;
	return 0;
}

/* "default" or the schedule's name: how messages and JSON name a slot. */
static const char *slot_name(size_t slot)
{
	return slot ? names[slot - 1] : "default";
}

const struct fast_impl *fast_topo_impl(const struct fast_topo *t, const char *algo)
{
	return &t->impl[slot_of(algo)];
}

void fast_impl_neutral(struct fast_impl *m)
{
	memset(m, 0, sizeof *m);
	m->sync = FAST_IMPL_SYNC_STEP;
	m->in_flight = 1;
	m->engine = FAST_ENGINE_LINK;
}

/* in_flight as it counts: a zeroed entry (a topology built in memory) is
 * the neutral one. */
static uint32_t flights(const struct fast_impl *m)
{
	return m->in_flight ? m->in_flight : 1;
}

/* Field by field (an entry may carry bytes of an engine it does not use:
 * sms of a CE engine mean nothing, and compare equal here). */
static bool impl_equal(const struct fast_impl *a, const struct fast_impl *b)
{
	if (a->sync != b->sync || flights(a) != flights(b) || a->engine != b->engine ||
	    a->out_GBps != b->out_GBps || a->reduce_GBps != b->reduce_GBps ||
	    a->call_us != b->call_us || a->call_out_us != b->call_out_us)
		return false;
	if (a->engine == FAST_ENGINE_SM)
		return a->sms == b->sms && a->engine_GBps == b->engine_GBps;
	return a->engine == FAST_ENGINE_LINK || a->engine_GBps == b->engine_GBps;
}

bool fast_impl_is_neutral(const struct fast_impl *m)
{
	struct fast_impl n;

	fast_impl_neutral(&n);
	return impl_equal(m, &n);
}

bool fast_topo_impl_on(const struct fast_topo *t)
{
	for (size_t i = 0; i <= FAST_IMPL_SCHEDS; i++)
		if (!fast_impl_is_neutral(&t->impl[i]))
			return true;
	return false;
}

double fast_impl_up_cap_Bps(const struct fast_impl *m)
{
	switch (m->engine) {
	case FAST_ENGINE_SM:
		return (double)m->sms * m->engine_GBps * 1e9;
	case FAST_ENGINE_CE:
		return m->engine_GBps * 1e9;
	case FAST_ENGINE_LINK:
		break;
	}
	return 0;
}

double fast_impl_up_Bps(const struct fast_impl *m, const struct fast_topo *t)
{
	double link = fast_tier_Bps(&t->up), cap = fast_impl_up_cap_Bps(m);

	return cap > 0 && cap < link ? cap : link;
}

double fast_impl_out_Bps(const struct fast_impl *m, double port_Bps, uint32_t gpus)
{
	double cap = m->out_GBps * 1e9 * gpus;

	return cap > 0 && cap < port_Bps ? cap : port_Bps;
}

/* --- the numbers, their ranges, their JSON paths --------------------------- */

#define MAX_IN_FLIGHT 1000000u
#define MAX_SMS 100000u
#define MAX_CALL_US 1e7 /* 10 s */

/* The double members an entry has outside its engine: name, offset,
 * range (0 or in [FAST_TOPO_MIN_GBPS, FAST_TOPO_MAX_GBPS] for rates, 0 = off). */
static const struct num {
	const char *key;
	size_t off;
	bool rate;   /* 0 (off) or a rate in range */
	const char *unit;
} nums[] = {
	{ "out_GBps", offsetof(struct fast_impl, out_GBps), true, " GB/s" },
	{ "reduce_GBps", offsetof(struct fast_impl, reduce_GBps), true, " GB/s" },
	{ "call_us", offsetof(struct fast_impl, call_us), false, " us" },
	{ "call_out_us", offsetof(struct fast_impl, call_out_us), false, " us" },
};
#define NNUMS (sizeof nums / sizeof nums[0])

static double *num_at(struct fast_impl *m, const struct num *n)
{
	return (double *)((char *)m + n->off);
}

static void num_range(const struct num *n, double *min, double *max)
{
	*min = 0;
	*max = n->rate ? FAST_TOPO_MAX_GBPS : MAX_CALL_US;
}

/* What is wrong with value v of n (NULL: nothing), into buf. */
static const char *num_problem(const struct num *n, double v, char *buf, size_t len)
{
	double min, max;
	char got[32];

	num_range(n, &min, &max);
	if (!isfinite(v))
		return "must be a finite number";
	if (!(v >= min) || !(v <= max) || (n->rate && v > 0 && v < FAST_TOPO_MIN_GBPS)) {
		if (n->rate)
			snprintf(buf, len, "must be 0 (no cap) or in [%g, %g]%s (got %s)",
				 FAST_TOPO_MIN_GBPS, max, n->unit, fast_num_format(v, got, sizeof got));
		else
			snprintf(buf, len, "must be in [%g, %g]%s (got %s)", min, max, n->unit,
				 fast_num_format(v, got, sizeof got));
		return buf;
	}
	return NULL;
}

/* What is wrong with an engine rate v (SM: per SM, x sms), or NULL. */
static const char *rate_problem(double v, char *buf, size_t len)
{
	char got[32];

	if (isfinite(v) && v >= FAST_TOPO_MIN_GBPS && v <= FAST_TOPO_MAX_GBPS)
		return NULL;
	snprintf(buf, len, "must be in [%g, %g] GB/s (got %s)", FAST_TOPO_MIN_GBPS,
		 FAST_TOPO_MAX_GBPS, fast_num_format(v, got, sizeof got));
	return buf;
}

/* --- validation ------------------------------------------------------------ */

static int validate_entry(const struct fast_impl *m, size_t slot, struct fast_err *err)
{
	const char *at = slot_name(slot), *why;
	char buf[160];

	if (m->sync != FAST_IMPL_SYNC_STEP && m->sync != FAST_IMPL_SYNC_RANK)
		return fast_err_set(err, FAST_EINPUT,
				    "/implementation/%s/sync: must be \"step\" or \"rank\"", at);
	if (flights(m) > MAX_IN_FLIGHT)
		return fast_err_set(err, FAST_EINPUT,
				    "/implementation/%s/in_flight: must be in [1, %u] (got %u)", at,
				    MAX_IN_FLIGHT, m->in_flight);
	for (size_t i = 0; i < NNUMS; i++)
		if ((why = num_problem(&nums[i], *num_at((struct fast_impl *)m, &nums[i]), buf,
				       sizeof buf)))
			return fast_err_set(err, FAST_EINPUT, "/implementation/%s/%s: %s", at,
					    nums[i].key, why);
	switch (m->engine) {
	case FAST_ENGINE_LINK:
		return 0;
	case FAST_ENGINE_SM:
		if (m->sms < 1 || m->sms > MAX_SMS)
			return fast_err_set(err, FAST_EINPUT,
					    "/implementation/%s/up_engine/sms: must be in [1, %u] (got %u)",
					    at, MAX_SMS, m->sms);
		if ((why = rate_problem(m->engine_GBps, buf, sizeof buf)))
			return fast_err_set(err, FAST_EINPUT,
					    "/implementation/%s/up_engine/GBps_per_sm: %s", at, why);
		return 0;
	case FAST_ENGINE_CE:
		if ((why = rate_problem(m->engine_GBps, buf, sizeof buf)))
			return fast_err_set(err, FAST_EINPUT, "/implementation/%s/up_engine/GBps: %s",
					    at, why);
		return 0;
	}
	return fast_err_set(err, FAST_EINPUT,
			    "/implementation/%s/up_engine/kind: must be \"link\", \"sm\" or \"ce\"", at);
}

int topo_validate_impl(const struct fast_topo *t, struct fast_err *err)
{
	int rc;

	for (size_t i = 0; i <= FAST_IMPL_SCHEDS; i++)
		if ((rc = validate_entry(&t->impl[i], i, err)) < 0)
			return rc;
	return 0;
}

/* --- loading --------------------------------------------------------------- */

static const char *const entry_keys[] = {
	"sync", "in_flight", "up_engine", "out_GBps", "reduce_GBps", "call_us", "call_out_us", NULL,
};
static const char *const engine_keys[][4] = {
	[FAST_ENGINE_LINK] = { "kind", NULL },
	[FAST_ENGINE_SM] = { "kind", "sms", "GBps_per_sm", NULL },
	[FAST_ENGINE_CE] = { "kind", "GBps", NULL },
};
static const char *const engine_kinds[] = { "link", "sm", "ce" };

/* A string member key of o among the choices (n of them) into *out. */
static int get_choice(struct fast_jctx *c, const struct fast_jv *o, const char *key,
		      const char *const *choices, size_t n, const char *expected, int *out)
{
	const struct fast_jv *v = fast_jv_get(o, key);
	size_t old;
	const char *s;

	if (!v)
		return 0;
	old = fast_jctx_push_key(c, key);
	if (!(s = fast_jv_string(v)))
		return fast_jctx_fail(c, FAST_EINPUT, "expected string, got %s",
				      fast_jtype_name(fast_jv_type(v)));
	for (size_t i = 0; i < n; i++)
		if (strcmp(s, choices[i]) == 0) {
			*out = (int)i;
			fast_jctx_pop(c, old);
			return 0;
		}
	return fast_jctx_fail(c, FAST_EINPUT, "must be %s (got \"%.40s\")", expected, s);
}

/* A rate member of an engine, required, checked as read. */
static int get_rate(struct fast_jctx *c, const struct fast_jv *o, const char *key, double *out)
{
	double v = 0;
	char buf[160];
	const char *why;
	int rc = fast_jv_get_double(c, o, key, true, -DBL_MAX, DBL_MAX, false, &v);

	if (rc < 0)
		return rc;
	if ((why = rate_problem(v, buf, sizeof buf))) {
		size_t old = fast_jctx_push_key(c, key);
		rc = fast_jctx_fail(c, FAST_EINPUT, "%s", why);
		fast_jctx_pop(c, old);
		return rc;
	}
	*out = v;
	return 0;
}

/* "up_engine": {"kind": ..., ...} of entry o into m (c at the entry). */
static int load_engine(struct fast_jctx *c, const struct fast_jv *o, struct fast_impl *m)
{
	const struct fast_jv *e = fast_jv_get(o, "up_engine");
	int kind = -1, rc;
	size_t old;

	if (!e)
		return 0;
	old = fast_jctx_push_key(c, "up_engine");
	if (fast_jv_type(e) != FAST_JOBJECT)
		return fast_jctx_fail(c, FAST_EINPUT, "expected object, got %s",
				      fast_jtype_name(fast_jv_type(e)));
	if ((rc = get_choice(c, e, "kind", engine_kinds, 3, "\"link\", \"sm\" or \"ce\"", &kind)) < 0)
		return rc;
	if (kind < 0)
		return fast_jctx_fail(c, FAST_EINPUT, "missing required key \"kind\"");
	if ((rc = fast_jv_expect_object(c, e, engine_keys[kind])) < 0)
		return rc;
	m->engine = (enum fast_impl_engine)kind;
	m->sms = 0;
	m->engine_GBps = 0;
	if (kind == FAST_ENGINE_SM &&
	    ((rc = fast_jv_get_u32(c, e, "sms", true, 1, MAX_SMS, &m->sms)) < 0 ||
	     (rc = get_rate(c, e, "GBps_per_sm", &m->engine_GBps)) < 0))
		return rc;
	if (kind == FAST_ENGINE_CE && (rc = get_rate(c, e, "GBps", &m->engine_GBps)) < 0)
		return rc;
	fast_jctx_pop(c, old);
	return 0;
}

/* Entry o's members over *m, each checked as read (c at the entry). */
static int load_entry(struct fast_jctx *c, const struct fast_jv *o, struct fast_impl *m)
{
	int sync = (int)m->sync, rc;
	static const char *const syncs[] = { "step", "rank" };

	if ((rc = fast_jv_expect_object(c, o, entry_keys)) < 0 ||
	    (rc = get_choice(c, o, "sync", syncs, 2, "\"step\" or \"rank\"", &sync)) < 0 ||
	    (rc = fast_jv_get_u32(c, o, "in_flight", false, 1, MAX_IN_FLIGHT, &m->in_flight)) < 0 ||
	    (rc = load_engine(c, o, m)) < 0)
		return rc;
	m->sync = (enum fast_impl_sync)sync;
	for (size_t i = 0; i < NNUMS; i++) {
		double v = *num_at(m, &nums[i]);
		char buf[160];
		const char *why;
		if ((rc = fast_jv_get_double(c, o, nums[i].key, false, -DBL_MAX, DBL_MAX, false, &v)) < 0)
			return rc;
		if ((why = num_problem(&nums[i], v, buf, sizeof buf))) {
			fast_jctx_push_key(c, nums[i].key);
			return fast_jctx_fail(c, FAST_EINPUT, "%s", why);
		}
		*num_at(m, &nums[i]) = v;
	}
	return 0;
}

int topo_load_impl(struct fast_jctx *c, const struct fast_jv *root, struct fast_topo *t)
{
	const struct fast_jv *o = fast_jv_get(root, "implementation"), *d;
	const char *keys[FAST_IMPL_SCHEDS + 3];
	size_t old = 0, k = 0;
	int rc;

	fast_impl_neutral(&t->impl[0]);
	t->impl_source[0] = '\0';
	if (o) {
		keys[k++] = "default";
		for (size_t i = 0; i < FAST_IMPL_SCHEDS; i++)
			keys[k++] = names[i];
		keys[k++] = "source";
		keys[k] = NULL;
		old = fast_jctx_push_key(c, "implementation");
		if ((rc = fast_jv_expect_object(c, o, keys)) < 0 ||
		    (rc = fast_jv_get_string(c, o, "source", false, t->impl_source,
					     sizeof t->impl_source)) < 0)
			return rc;
		if ((d = fast_jv_get(o, "default"))) {
			size_t at = fast_jctx_push_key(c, "default");
			if ((rc = load_entry(c, d, &t->impl[0])) < 0)
				return rc;
			fast_jctx_pop(c, at);
		}
	}
	for (size_t i = 1; i <= FAST_IMPL_SCHEDS; i++) {
		t->impl[i] = t->impl[0];
		if (o && (d = fast_jv_get(o, names[i - 1]))) {
			size_t at = fast_jctx_push_key(c, names[i - 1]);
			if ((rc = load_entry(c, d, &t->impl[i])) < 0)
				return rc;
			fast_jctx_pop(c, at);
		}
	}
	if (o)
		fast_jctx_pop(c, old);
	return 0;
}

/* --- identity, fields, writing ---------------------------------------------- */

static uint64_t hash_entry(uint64_t h, const struct fast_impl *m)
{
	h = fast_hash_u64(h, (uint64_t)m->sync);
	h = fast_hash_u64(h, flights(m));
	h = fast_hash_u64(h, (uint64_t)m->engine);
	h = fast_hash_u64(h, m->engine == FAST_ENGINE_SM ? m->sms : 0);
	h = fast_hash_double(h, m->engine == FAST_ENGINE_LINK ? 0 : m->engine_GBps);
	for (size_t i = 0; i < NNUMS; i++)
		h = fast_hash_double(h, *num_at((struct fast_impl *)m, &nums[i]));
	return h;
}

uint64_t topo_hash_impl_of(const struct fast_topo *t, const char *algo, uint64_t h)
{
	size_t slot = slot_of(algo);

	if (!slot)
		return topo_hash_impl(t, h);
	if (fast_impl_is_neutral(&t->impl[slot]))
		return h;
	return hash_entry(fast_hash_str(h, algo), &t->impl[slot]);
}

uint64_t topo_hash_impl(const struct fast_topo *t, uint64_t h)
{
	if (!fast_topo_impl_on(t))
		return h;
	h = fast_hash_str(h, "implementation");
	for (size_t i = 0; i <= FAST_IMPL_SCHEDS; i++)
		h = hash_entry(h, &t->impl[i]);
	return h;
}

double *topo_impl_field(struct fast_topo *t, const char *path, double *min, double *max)
{
	static const char head[] = "/implementation/";
	const char *p, *slash;
	struct fast_impl *m = NULL;

	if (strncmp(path, head, sizeof head - 1) != 0)
		return NULL;
	p = path + sizeof head - 1;
	if (!(slash = strchr(p, '/')))
		return NULL;
	for (size_t i = 0; i <= FAST_IMPL_SCHEDS && !m; i++) {
		const char *n = slot_name(i);
		if (strlen(n) == (size_t)(slash - p) && strncmp(p, n, (size_t)(slash - p)) == 0)
			m = &t->impl[i];
	}
	if (!m)
		return NULL;
	p = slash + 1;
	for (size_t i = 0; i < NNUMS; i++)
		if (strcmp(p, nums[i].key) == 0) {
			double lo, hi;
			num_range(&nums[i], &lo, &hi);
			if (min)
				*min = lo;
			if (max)
				*max = hi;
			return num_at(m, &nums[i]);
		}
	if ((m->engine == FAST_ENGINE_SM && strcmp(p, "up_engine/GBps_per_sm") == 0) ||
	    (m->engine == FAST_ENGINE_CE && strcmp(p, "up_engine/GBps") == 0)) {
		if (min)
			*min = FAST_TOPO_MIN_GBPS;
		if (max)
			*max = FAST_TOPO_MAX_GBPS;
		return &m->engine_GBps;
	}
	return NULL;
}

static void put_num(FILE *f, bool *first, const char *key, double v)
{
	fprintf(f, "%s\n      \"%s\": ", *first ? "" : ",", key);
	fast_json_put_double(f, v);
	*first = false;
}

/* The members of m where it differs from base (every member when base is
 * NULL), as the body of an object at the entries' indentation. */
static void put_entry(FILE *f, const struct fast_impl *m, const struct fast_impl *base)
{
	static const char *const syncs[] = { "step", "rank" };
	bool first = true;

	if (!base || m->sync != base->sync) {
		fprintf(f, "%s\n      \"sync\": \"%s\"", first ? "" : ",", syncs[m->sync]);
		first = false;
	}
	if (!base || flights(m) != flights(base)) {
		fprintf(f, "%s\n      \"in_flight\": %u", first ? "" : ",", flights(m));
		first = false;
	}
	if (!base || m->engine != base->engine || m->sms != base->sms ||
	    m->engine_GBps != base->engine_GBps) {
		fprintf(f, "%s\n      \"up_engine\": {\"kind\": \"%s\"", first ? "" : ",",
			engine_kinds[m->engine]);
		if (m->engine == FAST_ENGINE_SM)
			fprintf(f, ", \"sms\": %u, \"GBps_per_sm\": ", m->sms);
		else if (m->engine == FAST_ENGINE_CE)
			fputs(", \"GBps\": ", f);
		if (m->engine != FAST_ENGINE_LINK)
			fast_json_put_double(f, m->engine_GBps);
		fputc('}', f);
		first = false;
	}
	for (size_t i = 0; i < NNUMS; i++) {
		double v = *num_at((struct fast_impl *)m, &nums[i]);
		if (!base || v != *num_at((struct fast_impl *)base, &nums[i]))
			put_num(f, &first, nums[i].key, v);
	}
	fputs("\n    }", f);
}

void topo_write_impl(const struct fast_topo *t, FILE *f)
{
	if (!fast_topo_impl_on(t))
		return;
	fputs("  \"implementation\": {\n    \"default\": {", f);
	put_entry(f, &t->impl[0], NULL);
	for (size_t i = 1; i <= FAST_IMPL_SCHEDS; i++) {
		if (impl_equal(&t->impl[i], &t->impl[0]))
			continue;
		fprintf(f, ",\n    \"%s\": {", names[i - 1]);
		put_entry(f, &t->impl[i], &t->impl[0]);
	}
	fputs(",\n    \"source\": ", f);
	fast_json_put_string(f, t->impl_source);
	fputs("\n  },\n", f);
}
