/*
 * api.c - libfast.so's interface for foreign callers (include/fast/api.h):
 * opaque handles over the library's own types, errors copied into the
 * caller's struct fast_api_error, strings written through open_memstream
 * by the writers the commands use (fast_planset_write, fast_topo_write,
 * fast_traffic_write, lib/bound/bound_json.c, sim/sim_json.c), so a caller
 * gets the bytes the command line prints.  A facade: every decision is
 * the library's; this file converts and composes, nothing else.  No
 * globals: the handles are all the state there is.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fast/algo.h"
#include "fast/api.h"
#include "fast/bound.h"
#include "fast/check.h"
#include "fast/plan.h"
#include "fast/prog.h"
#include "fast/sim.h"
#include "fast/topo.h"
#include "fast/traffic.h"

struct fast_api_topo {
	struct fast_topo t;
};
struct fast_api_traffic {
	struct fast_traffic t;
	char name[256]; /* the file, or "traffic": messages name it */
};
struct fast_api_plans {
	struct fast_planset ps;
	char name[256]; /* the file, or "plans": messages name it */
};
struct fast_api_prog {
	struct fast_prog *p;
};

_Static_assert((int)FAST_API_EINPUT == (int)FAST_EINPUT && (int)FAST_API_ECHECK == (int)FAST_ECHECK &&
		       (int)FAST_API_EUSAGE == (int)FAST_EUSAGE && (int)FAST_API_ENOMEM == (int)FAST_ENOMEM &&
		       (int)FAST_API_EIO == (int)FAST_EIO && (int)FAST_API_ELIMIT == (int)FAST_ELIMIT &&
		       (int)FAST_API_ESOLVER == (int)FAST_ESOLVER && (int)FAST_API_ERUNTIME == (int)FAST_ERUNTIME,
	       "api.h's codes are common.h's");
_Static_assert(sizeof ((struct fast_api_error *)0)->msg >= FAST_ERRMSG_MAX, "room for a message");

/* the library's error into the caller's; returns its code */
static int give(struct fast_api_error *out, const struct fast_err *e)
{
	if (out) {
		out->code = e->code;
		snprintf(out->msg, sizeof out->msg, "%s", e->msg);
	}
	return e->code;
}

static int fail(struct fast_api_error *out, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail(struct fast_api_error *out, int code, const char *fmt, ...)
{
	struct fast_err e;
	va_list ap;

	va_start(ap, fmt);
	fast_err_vset(&e, code, fmt, ap);
	va_end(ap);
	return give(out, &e);
}

const char *fast_api_version(void)
{
	return FAST_VERSION " (api 1)";
}

int fast_api_exit_status(int code)
{
	return fast_err_exit_status(code);
}

void fast_api_algo_list(char *buf, size_t len)
{
	fast_algo_list(buf, len);
}

void fast_api_string_free(char *s)
{
	free(s);
}

/* A string written by fn(f, ctx) into *json, or the writer's error. */
struct mem {
	FILE *f;
	char *buf;
	size_t len;
};

static int mem_open(struct mem *m, struct fast_api_error *err)
{
	m->buf = NULL;
	m->len = 0;
	m->f = open_memstream(&m->buf, &m->len);
	return m->f ? 0 : fail(err, FAST_ENOMEM, "out of memory");
}

/* rc: the writer's result (0 or a code already given to err) */
static int mem_close(struct mem *m, int rc, char **json, struct fast_api_error *err)
{
	bool bad = ferror(m->f) != 0;

	if (fclose(m->f) != 0)
		bad = true;
	if (rc == 0 && bad)
		rc = fail(err, FAST_ENOMEM, "out of memory writing JSON");
	if (rc < 0) {
		free(m->buf);
		return rc;
	}
	*json = m->buf;
	return 0;
}

/* The command line's default limits (include/fast/common.h): every reader
 * takes them (some need them given). */
static const struct fast_limits *limits(struct fast_limits *l)
{
	fast_limits_default(l);
	return l;
}

/* --- topology --------------------------------------------------------- */

static int topo_new(struct fast_api_topo **out, const struct fast_topo *t,
		    struct fast_api_error *err)
{
	struct fast_api_topo *h = malloc(sizeof *h);

	if (!h)
		return fail(err, FAST_ENOMEM, "out of memory");
	h->t = *t;
	*out = h;
	return 0;
}

int fast_api_topo_preset(const char *name, uint32_t servers, uint32_t gpus,
			 struct fast_api_topo **out, struct fast_api_error *err)
{
	struct fast_topo t;
	struct fast_limits lim;
	struct fast_err e;

	if (!name)
		return fail(err, FAST_EUSAGE, "no preset name");
	if (fast_topo_preset(name, servers, gpus, limits(&lim), &t, &e) < 0)
		return give(err, &e);
	return topo_new(out, &t, err);
}

int fast_api_topo_load(const char *path, struct fast_api_topo **out, struct fast_api_error *err)
{
	struct fast_topo t;
	struct fast_limits lim;
	struct fast_err e;

	if (fast_topo_load(path, limits(&lim), &t, &e) < 0)
		return give(err, &e);
	return topo_new(out, &t, err);
}

int fast_api_topo_parse(const char *text, const char *name, struct fast_api_topo **out,
			struct fast_api_error *err)
{
	struct fast_topo t;
	struct fast_limits lim;
	struct fast_err e;

	if (fast_topo_parse(text, strlen(text), name ? name : "topology", limits(&lim), &t, &e) < 0)
		return give(err, &e);
	return topo_new(out, &t, err);
}

void fast_api_topo_shape(const struct fast_api_topo *t, uint32_t *servers, uint32_t *gpus)
{
	*servers = t->t.servers;
	*gpus = t->t.gpus;
}

void fast_api_topo_name(const struct fast_api_topo *t, char *buf, size_t len)
{
	snprintf(buf, len, "%s", t->t.name);
}

int fast_api_topo_json(const struct fast_api_topo *t, char **json, struct fast_api_error *err)
{
	struct mem m;
	struct fast_err e;
	int rc;

	if ((rc = mem_open(&m, err)) < 0)
		return rc;
	rc = fast_topo_write(&t->t, m.f, &e) < 0 ? give(err, &e) : 0;
	return mem_close(&m, rc, json, err);
}

void fast_api_topo_free(struct fast_api_topo *t)
{
	free(t);
}

/* --- traffic ------------------------------------------------------------ */

static int traffic_new(uint32_t p, uint32_t count, const uint64_t *u, const int64_t *s,
		       struct fast_api_traffic **out, struct fast_api_error *err)
{
	struct fast_api_traffic *h;
	struct fast_limits lim;
	struct fast_err e;
	size_t cells = (size_t)p * p;

	if (p == 0 || count == 0)
		return fail(err, FAST_EINPUT, "traffic: %s", p == 0 ? "no GPUs (P = 0)" : "no matrices");
	if (!(h = calloc(1, sizeof *h)))
		return fail(err, FAST_ENOMEM, "out of memory");
	if (fast_traffic_alloc(&h->t, p, count, limits(&lim), &e) < 0) {
		free(h);
		return give(err, &e);
	}
	for (uint32_t k = 0; k < count; k++)
		for (size_t c = 0; c < cells; c++) {
			size_t at = (size_t)k * cells + c;
			uint64_t v;
			if (s && s[at] < 0) {
				fast_api_traffic_free(h);
				return fail(err, FAST_EINPUT,
					    "traffic: /matrices/%u/rows/%zu/%zu: bytes must be a "
					    "non-negative integer (got %lld)",
					    k, c / p, c % p, (long long)s[at]);
			}
			v = s ? (uint64_t)s[at] : u[at];
			if (v > FAST_JSON_MAX_BYTES) {
				fast_api_traffic_free(h);
				return fail(err, FAST_EINPUT,
					    "traffic: /matrices/%u/rows/%zu/%zu: bytes must be at most "
					    "2^53 (got %llu)",
					    k, c / p, c % p, (unsigned long long)v);
			}
			h->t.m[k].bytes[c] = v;
		}
	snprintf(h->t.source, sizeof h->t.source, "arrays");
	snprintf(h->name, sizeof h->name, "traffic");
	if (fast_traffic_check_sums(&h->t, "traffic", &e) < 0) {
		fast_api_traffic_free(h);
		return give(err, &e);
	}
	*out = h;
	return 0;
}

int fast_api_traffic_new_u64(uint32_t p, uint32_t count, const uint64_t *bytes,
			     struct fast_api_traffic **out, struct fast_api_error *err)
{
	return traffic_new(p, count, bytes, NULL, out, err);
}

int fast_api_traffic_new_i64(uint32_t p, uint32_t count, const int64_t *bytes,
			     struct fast_api_traffic **out, struct fast_api_error *err)
{
	return traffic_new(p, count, NULL, bytes, out, err);
}

static int traffic_take(struct fast_traffic *t, const char *name, struct fast_api_traffic **out,
			struct fast_api_error *err)
{
	struct fast_api_traffic *h = malloc(sizeof *h);

	if (!h) {
		fast_traffic_free(t);
		return fail(err, FAST_ENOMEM, "out of memory");
	}
	h->t = *t;
	snprintf(h->name, sizeof h->name, "%s", name);
	*out = h;
	return 0;
}

int fast_api_traffic_load(const char *path, struct fast_api_traffic **out,
			  struct fast_api_error *err)
{
	struct fast_traffic t;
	struct fast_limits lim;
	struct fast_err e;

	if (fast_traffic_load(path, limits(&lim), &t, &e) < 0)
		return give(err, &e);
	return traffic_take(&t, path, out, err);
}

int fast_api_traffic_parse(const char *text, const char *name, struct fast_api_traffic **out,
			   struct fast_api_error *err)
{
	struct fast_traffic t;
	struct fast_limits lim;
	struct fast_err e;

	if (fast_traffic_parse(text, strlen(text), name ? name : "traffic", limits(&lim), &t, &e) < 0)
		return give(err, &e);
	return traffic_take(&t, name ? name : "traffic", out, err);
}

void fast_api_traffic_shape(const struct fast_api_traffic *t, uint32_t *p, uint32_t *count)
{
	*p = t->t.ng;
	*count = t->t.count;
}

int fast_api_traffic_matrix(const struct fast_api_traffic *t, uint32_t k, uint64_t *bytes,
			    char *label, size_t len, uint32_t *kind, struct fast_api_error *err)
{
	if (k >= t->t.count)
		return fail(err, FAST_EUSAGE, "matrix %u: the traffic has %u matrices", k, t->t.count);
	if (bytes)
		memcpy(bytes, t->t.m[k].bytes, (size_t)t->t.ng * t->t.ng * sizeof *bytes);
	if (label && len)
		snprintf(label, len, "%s", t->t.m[k].label);
	if (kind)
		*kind = (uint32_t)t->t.m[k].kind;
	return 0;
}

int fast_api_traffic_json(const struct fast_api_traffic *t, char **json,
			  struct fast_api_error *err)
{
	struct mem m;
	struct fast_err e;
	int rc;

	if ((rc = mem_open(&m, err)) < 0)
		return rc;
	rc = fast_traffic_write(&t->t, false, m.f, &e) < 0 ? give(err, &e) : 0;
	return mem_close(&m, rc, json, err);
}

void fast_api_traffic_free(struct fast_api_traffic *t)
{
	if (!t)
		return;
	fast_traffic_free(&t->t);
	free(t);
}

/* --- compile, plans -------------------------------------------------------- */

/* The compile options names[i] = values[i] into o, as the command line's
 * --NAME VALUE (same messages); *given: their FAST_OPT_* bits. */
static int compile_options(const char *const *names, const char *const *values, size_t n,
			   struct fast_algo_opts *o, unsigned *given, struct fast_api_error *err)
{
	*given = 0;
	for (size_t i = 0; i < n; i++) {
		const struct fast_algo_option *opt = fast_algo_option_find(names[i]);
		struct fast_err e;
		if (!opt) {
			char known[160] = "";
			size_t len = 0;
			for (const struct fast_algo_option *q = fast_algo_options; q->name; q++)
				len += (size_t)snprintf(known + len, len < sizeof known ? sizeof known - len : 0,
							"%s%s", len ? ", " : "", q->name);
			return fail(err, FAST_EUSAGE, "unknown compiler option '%.40s' (known: %s)",
				    names[i], known);
		}
		if (fast_algo_option_parse(opt, values[i], o, &e) < 0)
			return fail(err, FAST_EUSAGE, "--%s: %s", opt->name, e.msg);
		*given |= opt->bit;
	}
	return 0;
}

/* cmd/cli_algo.c's cli_algo_known and cli_algo_applies, in their words */
static int algo_applies(const char *algo, unsigned given, struct fast_api_error *err)
{
	const struct fast_algo *a = fast_algo_find(algo);

	if (!a) {
		char known[128];
		const char *near = fast_algo_suggest(algo ? algo : "", NULL, 0);
		fast_algo_list(known, sizeof known);
		if (near)
			return fail(err, FAST_EUSAGE,
				    "--algo: unknown algorithm '%.40s' (known: %s); did you mean '%s'?",
				    algo ? algo : "", known, near);
		return fail(err, FAST_EUSAGE, "--algo: unknown algorithm '%.40s' (known: %s)",
			    algo ? algo : "", known);
	}
	for (const struct fast_algo_option *opt = fast_algo_options; opt->name; opt++) {
		char to[96] = "";
		size_t len = 0;
		if (!(given & opt->bit) || (a->options & opt->bit))
			continue;
		for (const struct fast_algo *b = fast_algos; b->name && len < sizeof to; b++)
			if (b->options & opt->bit)
				len += (size_t)snprintf(to + len, sizeof to - len, "%s%s",
							len ? ", " : "", b->name);
		return fail(err, FAST_EUSAGE, "--%s applies to --algo %s only", opt->name, to);
	}
	return 0;
}

static int plans_new(struct fast_api_plans **out, const char *name, struct fast_api_error *err)
{
	struct fast_api_plans *h = calloc(1, sizeof *h);

	if (!h)
		return fail(err, FAST_ENOMEM, "out of memory");
	snprintf(h->name, sizeof h->name, "%s", name);
	*out = h;
	return 0;
}

int fast_api_compile(const struct fast_api_topo *topo, const struct fast_api_traffic *tr,
		     const char *algo, const char *const *names, const char *const *values,
		     size_t n, struct fast_api_plans **out, struct fast_api_error *err)
{
	const struct fast_traffic *t = &tr->t;
	struct fast_algo_opts o;
	struct fast_api_plans *h = NULL;
	struct fast_err e;
	unsigned given;
	int rc;

	fast_algo_opts_default(&o);
	o.eval = fast_sim_evaluator(); /* auto chooses as the commands do */
	if (!algo)
		algo = "fast";
	if ((rc = compile_options(names, values, n, &o, &given, err)) < 0 ||
	    (rc = algo_applies(algo, given, err)) < 0)
		return rc;
	if (fast_traffic_check_topo(t, &topo->t, tr->name, &e) < 0)
		return give(err, &e);
	if ((rc = plans_new(&h, "plans", err)) < 0)
		return rc;
	if (!(h->ps.plans = calloc(t->count ? t->count : 1, sizeof *h->ps.plans))) {
		free(h);
		return fail(err, FAST_ENOMEM, "out of memory");
	}
	for (uint32_t i = 0; i < t->count; i++) {
		struct fast_plan *p = &h->ps.plans[i];
		if (fast_compile_matrix(algo, &topo->t, &t->m[i], &o, p, &e) < 0) {
			fast_err_prefix(&e, "%s: matrix %u (%s)", tr->name, i, t->m[i].label);
			fast_api_plans_free(h);
			return give(err, &e);
		}
		h->ps.count = i + 1;
		snprintf(p->label, sizeof p->label, "%s", t->m[i].label);
		p->matrix = i;
	}
	*out = h;
	return 0;
}

int fast_api_plans_load(const char *path, struct fast_api_plans **out, struct fast_api_error *err)
{
	struct fast_planset ps;
	struct fast_limits lim;
	struct fast_err e;
	int rc;

	if (fast_planset_load(path, limits(&lim), &ps, &e) < 0)
		return give(err, &e);
	if ((rc = plans_new(out, path, err)) < 0) {
		fast_planset_free(&ps);
		return rc;
	}
	(*out)->ps = ps;
	return 0;
}

int fast_api_plans_parse(const char *text, const char *name, struct fast_api_plans **out,
			 struct fast_api_error *err)
{
	struct fast_planset ps;
	struct fast_limits lim;
	struct fast_err e;
	int rc;

	if (!name)
		name = "plans";
	if (fast_planset_parse(text, strlen(text), name, limits(&lim), &ps, &e) < 0)
		return give(err, &e);
	if ((rc = plans_new(out, name, err)) < 0) {
		fast_planset_free(&ps);
		return rc;
	}
	(*out)->ps = ps;
	return 0;
}

int fast_api_plans_json(const struct fast_api_plans *ps, char **json, struct fast_api_error *err)
{
	struct mem m;
	struct fast_err e;
	int rc;

	if ((rc = mem_open(&m, err)) < 0)
		return rc;
	rc = fast_planset_write(&ps->ps, m.f, &e) < 0 ? give(err, &e) : 0;
	return mem_close(&m, rc, json, err);
}

uint32_t fast_api_plans_count(const struct fast_api_plans *ps)
{
	return ps->ps.count;
}

int fast_api_plan_info(const struct fast_api_plans *ps, uint32_t i, char *algo, char *label,
		       size_t len, uint32_t *matrix, struct fast_api_error *err)
{
	const struct fast_plan *p;

	if (i >= ps->ps.count)
		return fail(err, FAST_EUSAGE, "plan %u: %s holds %u plans", i, ps->name, ps->ps.count);
	p = &ps->ps.plans[i];
	if (algo && len)
		snprintf(algo, len, "%s", p->algo);
	if (label && len)
		snprintf(label, len, "%s", p->label);
	if (matrix)
		*matrix = p->matrix;
	return 0;
}

void fast_api_plans_free(struct fast_api_plans *ps)
{
	if (!ps)
		return;
	fast_planset_free(&ps->ps);
	free(ps);
}

/* --- check, bound, simulate -------------------------------------------------- */

/* The plan serving matrix m of nmat (cmd/cli_load.c's cli_plan_for for a
 * whole traffic, in its words). */
static const struct fast_plan *plan_for(const struct fast_api_plans *h, uint32_t m, uint32_t nmat,
					struct fast_err *e)
{
	const struct fast_planset *ps = &h->ps;

	if (ps->count != nmat) {
		fast_err_set(e, FAST_EINPUT, "%s holds %u plans but traffic has %u matrices", h->name,
			     ps->count, nmat);
		return NULL;
	}
	if (ps->plans[m].matrix != m) {
		fast_err_set(e, FAST_EINPUT, "%s: /plans/%u/matrix: plan %u serves matrix %u, not %u",
			     h->name, m, m, ps->plans[m].matrix, m);
		return NULL;
	}
	return &ps->plans[m];
}

int fast_api_check(const struct fast_api_topo *topo, const struct fast_api_traffic *tr,
		   const struct fast_api_plans *ps, struct fast_api_error *err)
{
	const struct fast_traffic *t = &tr->t;
	struct fast_err e;

	if (fast_traffic_check_topo(t, &topo->t, tr->name, &e) < 0)
		return give(err, &e);
	for (uint32_t m = 0; m < t->count; m++)
		if (!plan_for(ps, m, t->count, &e))
			return give(err, &e);
	for (uint32_t m = 0; m < t->count; m++) {
		const struct fast_plan *p = &ps->ps.plans[m];
		int rc = fast_plan_check_matrix(p, &topo->t, &t->m[m], t->ng, &e);
		if (rc == FAST_ECHECK)
			fast_err_prefix(&e, "plan %u (%s, matrix %u)", m, p->label, p->matrix);
		else if (rc < 0)
			fast_err_prefix(&e, "%s: /plans/%u", ps->name, m);
		if (rc < 0)
			return give(err, &e);
	}
	return 0;
}

int fast_api_bound_json(const struct fast_api_topo *topo, const struct fast_api_traffic *tr,
			int closed_only, int timing, char **json, struct fast_api_error *err)
{
	const struct fast_traffic *t = &tr->t;
	struct fast_err e;
	struct mem m;
	int rc;

	if (fast_traffic_check_topo(t, &topo->t, tr->name, &e) < 0)
		return give(err, &e);
	if ((rc = mem_open(&m, err)) < 0)
		return rc;
	fprintf(m.f, "{\n  \"topology\": ");
	fast_bound_json_topo(m.f, &topo->t);
	fprintf(m.f, ",\n  \"bounds\": [\n");
	for (uint32_t i = 0; i < t->count && rc == 0; i++) {
		struct fast_bound b;
		if ((closed_only ? fast_bound_matrix_closed(&topo->t, &t->m[i], &b, &e)
				 : fast_bound_matrix(&topo->t, &t->m[i], &b, &e)) < 0) {
			fast_err_prefix(&e, "matrix %u (%s)", i, t->m[i].label);
			rc = give(err, &e);
			break;
		}
		fast_bound_json(m.f, &b, i, t->m[i].label, closed_only, timing);
		fprintf(m.f, "%s\n", i + 1 < t->count ? "," : "");
	}
	if (rc == 0)
		fprintf(m.f, "  ]\n}\n");
	return mem_close(&m, rc, json, err);
}

static int on_off(const char *name, const char *v, bool *out, struct fast_api_error *err)
{
	if (strcmp(v, "on") == 0 || strcmp(v, "true") == 0 || strcmp(v, "1") == 0)
		*out = true;
	else if (strcmp(v, "off") == 0 || strcmp(v, "false") == 0 || strcmp(v, "0") == 0)
		*out = false;
	else
		return fail(err, FAST_EUSAGE, "%s: '%.40s' is not on or off", name, v);
	return 0;
}

struct sim_settings {
	struct fast_sim_opts so;
	bool steps, check;
};

static int sim_options(const char *const *names, const char *const *values, size_t n,
		       struct sim_settings *s, struct fast_api_error *err)
{
	int rc = 0;

	fast_sim_opts_default(&s->so);
	s->steps = false;
	s->check = true;
	for (size_t i = 0; i < n && rc == 0; i++) {
		const char *k = names[i], *v = values[i];
		if (strcmp(k, "congestion") == 0) {
			rc = on_off(k, v, &s->so.congestion, err);
		} else if (strcmp(k, "steps") == 0) {
			rc = on_off(k, v, &s->steps, err);
		} else if (strcmp(k, "check") == 0) {
			rc = on_off(k, v, &s->check, err);
		} else if (strcmp(k, "sync") == 0) {
			if (strcmp(v, "step") == 0)
				s->so.sync = FAST_SIM_SYNC_STEP;
			else if (strcmp(v, "rank") == 0)
				s->so.sync = FAST_SIM_SYNC_RANK;
			else
				rc = fail(err, FAST_EUSAGE, "--sync: '%.40s' is not step or rank", v);
		} else if (strcmp(k, "epsilon") == 0) {
			char *end;
			double e = strtod(v, &end);
			if (end == v || *end || !(e >= 0 && e < 1))
				rc = fail(err, FAST_EUSAGE, "--epsilon: '%.40s' is not a number in [0, 1)", v);
			s->so.epsilon = e;
		} else {
			rc = fail(err, FAST_EUSAGE, "unknown simulator option '%.40s' (known: "
				  "congestion, sync, epsilon, steps, check)", k);
		}
	}
	return rc;
}

int fast_api_sim_json(const struct fast_api_topo *topo, const struct fast_api_traffic *tr,
		      const struct fast_api_plans *ps, const char *const *names,
		      const char *const *values, size_t n, char **json, struct fast_api_error *err)
{
	const struct fast_topo *t = &topo->t;
	const struct fast_traffic *traf = tr ? &tr->t : NULL;
	struct sim_settings s;
	struct fast_err e;
	struct mem m;
	int rc;

	if ((rc = sim_options(names, values, n, &s, err)) < 0)
		return rc;
	if (traf && fast_traffic_check_topo(traf, t, tr->name, &e) < 0)
		return give(err, &e);
	if (ps->ps.count == 0)
		return fail(err, FAST_EINPUT, "%s: no plans", ps->name);
	/* every plan proved for its matrix before anything is simulated
	 * (fast sim --plan --traffic; cmd/sim_common.c's simc_check_plan) */
	for (uint32_t i = 0; traf && s.check && i < ps->ps.count; i++) {
		const struct fast_plan *p = &ps->ps.plans[i];
		struct fast_plan_view v;
		if (p->matrix >= traf->count)
			continue;
		rc = fast_plan_view_open_m(&v, p, &traf->m[p->matrix], traf->ng, &e);
		if (rc == 0) {
			rc = fast_plan_check_view(&v, t, traf->m[p->matrix].bytes, &e);
			fast_plan_view_close(&v);
		}
		if (rc == FAST_ECHECK)
			fast_err_prefix(&e, "%s: plan %u (%s, matrix %u) is incorrect for the traffic",
					ps->name, i, p->label, p->matrix);
		else if (rc < 0)
			fast_err_prefix(&e, "%s: /plans/%u", ps->name, i);
		if (rc < 0)
			return give(err, &e);
	}
	if ((rc = mem_open(&m, err)) < 0)
		return rc;
	fast_sim_json_head(m.f, t);
	for (uint32_t i = 0; i < ps->ps.count && rc == 0; i++) {
		const struct fast_plan *p = &ps->ps.plans[i];
		const struct fast_matrix *M =
			traf && traf->count && p->matrix < traf->count ? &traf->m[p->matrix] : NULL;
		struct fast_sim_opts so = s.so;
		struct fast_sim_result r;
		struct fast_bound b;

		so.traffic = M ? M->bytes : NULL;
		if (fast_sim_run_m(t, p, M, &so, &r, &e) < 0) {
			fast_err_prefix(&e, "%s: plan %u (%s)", ps->name, p->matrix, p->label);
			rc = give(err, &e);
			break;
		}
		if (M && fast_bound_matrix(t, M, &b, &e) < 0) {
			fast_sim_result_free(&r);
			rc = give(err, &e);
			break;
		}
		fast_sim_json_plan(m.f, t, p, &r, M ? &b : NULL, &so, s.steps, false, i == 0);
		fast_sim_result_free(&r);
	}
	if (rc == 0)
		fast_sim_json_tail(m.f);
	return mem_close(&m, rc, json, err);
}

/* --- per-rank programs ------------------------------------------------------ */

int fast_api_prog_build(const struct fast_api_traffic *tr, const struct fast_api_plans *ps,
			uint32_t i, uint32_t rank, uint32_t passes, struct fast_api_prog **out,
			struct fast_api_error *err)
{
	const struct fast_traffic *t = &tr->t;
	const struct fast_plan *p;
	const struct fast_matrix *M;
	struct fast_plan_view v;
	struct fast_api_prog *h;
	struct fast_err e;
	int rc;

	if (i >= ps->ps.count)
		return fail(err, FAST_EUSAGE, "plan %u: %s holds %u plans", i, ps->name, ps->ps.count);
	p = &ps->ps.plans[i];
	if (p->matrix >= t->count)
		return fail(err, FAST_EINPUT, "%s: plan %u serves matrix %u; the traffic has %u",
			    ps->name, i, p->matrix, t->count);
	if (rank >= t->ng)
		return fail(err, FAST_EUSAGE, "rank %u: the traffic has %u GPUs", rank, t->ng);
	if (passes < 1)
		return fail(err, FAST_EUSAGE, "passes must be >= 1");
	M = &t->m[p->matrix];
	if (!(h = calloc(1, sizeof *h)))
		return fail(err, FAST_ENOMEM, "out of memory");
	if (fast_plan_view_open_m(&v, p, M, t->ng, &e) < 0) {
		free(h);
		fast_err_prefix(&e, "%s: /plans/%u", ps->name, i);
		return give(err, &e);
	}
	rc = p->kind == FAST_TRAFFIC_BYTES ? fast_prog_build(&v, M->bytes, rank, passes, &h->p, &e)
					   : fast_prog_build_tokens(&v, M, rank, passes, &h->p, &e);
	fast_plan_view_close(&v);
	if (rc < 0) {
		free(h);
		return give(err, &e);
	}
	*out = h;
	return 0;
}

void fast_api_prog_info(const struct fast_api_prog *p, struct fast_api_prog_info *out)
{
	const struct fast_prog *g = p->p;

	memset(out, 0, sizeof *out);
	out->rank = g->rank;
	out->ng = g->ng;
	out->passes = g->passes;
	out->nwaves = (uint32_t)g->nwaves;
	out->kind = (uint32_t)g->kind;
	out->nmsgs = g->nmsgs;
	out->staging_bytes = g->staging;
	out->nsends = g->nsends;
	out->nrecvs = g->nrecvs;
	out->ncopies = g->ncopies;
	out->plan_hash = g->plan_hash;
}

static void put_msgs(const struct fast_pmsg *m, size_t n, uint64_t *out)
{
	for (size_t i = 0; out && i < n; i++, out += 6) {
		out[0] = m[i].peer;
		out[1] = m[i].out;
		out[2] = m[i].at.kind;
		out[3] = m[i].at.msg;
		out[4] = m[i].at.off;
		out[5] = m[i].len;
	}
}

void fast_api_prog_arrays(const struct fast_api_prog *p, uint64_t *waves, uint64_t *sends,
			  uint64_t *recvs, uint64_t *copies)
{
	const struct fast_prog *g = p->p;

	for (size_t i = 0; waves && i < g->nwaves; i++, waves += 8) {
		const struct fast_pwave *w = &g->waves[i];
		uint64_t row[8] = { w->pre0, w->npre, w->send0, w->nsend,
				    w->recv0, w->nrecv, w->post0, w->npost };
		memcpy(waves, row, sizeof row);
	}
	put_msgs(g->sends, g->nsends, sends);
	put_msgs(g->recvs, g->nrecvs, recvs);
	for (size_t i = 0; copies && i < g->ncopies; i++, copies += 8) {
		const struct fast_pcopy *c = &g->copies[i];
		uint64_t row[8] = { c->dst.kind, c->dst.msg, c->dst.off, c->src.kind,
				    c->src.msg, c->src.off, c->len, c->op };
		memcpy(copies, row, sizeof row);
	}
}

void fast_api_prog_free(struct fast_api_prog *p)
{
	if (!p)
		return;
	fast_prog_free(p->p);
	free(p);
}
