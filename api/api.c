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
#include "api/api_internal.h"
#include "fast/api.h"
#include "fast/bound.h"
#include "fast/check.h"
#include "fast/plan.h"
#include "fast/prog.h"
#include "fast/sim.h"
#include "fast/topo.h"
#include "fast/traffic.h"

/* the library's error into the caller's; returns its code */
int api_give(struct fast_api_error *out, const struct fast_err *e)
{
	if (out) {
		out->code = e->code;
		snprintf(out->msg, sizeof out->msg, "%s", e->msg);
	}
	return e->code;
}

int api_fail(struct fast_api_error *out, int code, const char *fmt, ...)
{
	struct fast_err e;
	va_list ap;

	va_start(ap, fmt);
	fast_err_vset(&e, code, fmt, ap);
	va_end(ap);
	return api_give(out, &e);
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

int api_mem_open(struct mem *m, struct fast_api_error *err)
{
	m->buf = NULL;
	m->len = 0;
	m->f = open_memstream(&m->buf, &m->len);
	return m->f ? 0 : api_fail(err, FAST_ENOMEM, "out of memory");
}

/* rc: the writer's result (0 or a code already given to err) */
int api_mem_close(struct mem *m, int rc, char **json, struct fast_api_error *err)
{
	bool bad = ferror(m->f) != 0;

	if (fclose(m->f) != 0)
		bad = true;
	if (rc == 0 && bad)
		rc = api_fail(err, FAST_ENOMEM, "out of memory writing JSON");
	if (rc < 0) {
		free(m->buf);
		return rc;
	}
	*json = m->buf;
	return 0;
}

/* The command line's default limits (include/fast/common.h): every reader
 * takes them (some need them given). */
const struct fast_limits *api_limits(struct fast_limits *l)
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
		return api_fail(err, FAST_ENOMEM, "out of memory");
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
		return api_fail(err, FAST_EUSAGE, "no preset name");
	if (fast_topo_preset(name, servers, gpus, api_limits(&lim), &t, &e) < 0)
		return api_give(err, &e);
	return topo_new(out, &t, err);
}

int fast_api_topo_load(const char *path, struct fast_api_topo **out, struct fast_api_error *err)
{
	struct fast_topo t;
	struct fast_limits lim;
	struct fast_err e;

	if (fast_topo_load(path, api_limits(&lim), &t, &e) < 0)
		return api_give(err, &e);
	return topo_new(out, &t, err);
}

int fast_api_topo_parse(const char *text, const char *name, struct fast_api_topo **out,
			struct fast_api_error *err)
{
	struct fast_topo t;
	struct fast_limits lim;
	struct fast_err e;

	if (fast_topo_parse(text, strlen(text), name ? name : "topology", api_limits(&lim), &t, &e) < 0)
		return api_give(err, &e);
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

uint64_t fast_api_topo_hash(const struct fast_api_topo *t)
{
	return fast_topo_hash(&t->t);
}

int fast_api_topo_set_nics(struct fast_api_topo *t, uint32_t nics, const uint32_t *server,
			   const uint32_t *nic, const double *fraction, size_t n,
			   struct fast_api_error *err)
{
	struct fast_topo *c = malloc(sizeof *c); /* a copy: all or nothing */
	struct fast_limits lim;
	struct fast_err e;
	int rc = 0;

	if (!c)
		return api_fail(err, FAST_ENOMEM, "out of memory");
	*c = t->t;
	if (nics) {
		c->nics = nics;
		for (uint32_t i = 0; i < c->noverrides && rc == 0; i++)
			if (c->nic_override[i].nic >= nics)
				rc = fast_err_set(&e, FAST_EINPUT,
						  "nics %u: the topology overrides NIC %u of server %u",
						  nics, c->nic_override[i].nic, c->nic_override[i].server);
	}
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = fast_topo_set_nic(c, server[i], nic[i], fraction[i], &e);
	if (rc == 0)
		rc = fast_topo_validate(c, api_limits(&lim), &e);
	if (rc == 0)
		t->t = *c;
	free(c);
	return rc < 0 ? api_give(err, &e) : 0;
}

int fast_api_topo_json(const struct fast_api_topo *t, char **json, struct fast_api_error *err)
{
	struct mem m;
	struct fast_err e;
	int rc;

	if ((rc = api_mem_open(&m, err)) < 0)
		return rc;
	rc = fast_topo_write(&t->t, m.f, &e) < 0 ? api_give(err, &e) : 0;
	return api_mem_close(&m, rc, json, err);
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
		return api_fail(err, FAST_EINPUT, "traffic: %s", p == 0 ? "no GPUs (P = 0)" : "no matrices");
	if (!(h = calloc(1, sizeof *h)))
		return api_fail(err, FAST_ENOMEM, "out of memory");
	if (fast_traffic_alloc(&h->t, p, count, api_limits(&lim), &e) < 0) {
		free(h);
		return api_give(err, &e);
	}
	for (uint32_t k = 0; k < count; k++)
		for (size_t c = 0; c < cells; c++) {
			size_t at = (size_t)k * cells + c;
			uint64_t v;
			if (s && s[at] < 0) {
				fast_api_traffic_free(h);
				return api_fail(err, FAST_EINPUT,
					    "traffic: /matrices/%u/rows/%zu/%zu: bytes must be a "
					    "non-negative integer (got %lld)",
					    k, c / p, c % p, (long long)s[at]);
			}
			v = s ? (uint64_t)s[at] : u[at];
			if (v > FAST_JSON_MAX_BYTES) {
				fast_api_traffic_free(h);
				return api_fail(err, FAST_EINPUT,
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
		return api_give(err, &e);
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
		return api_fail(err, FAST_ENOMEM, "out of memory");
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

	if (fast_traffic_load(path, api_limits(&lim), &t, &e) < 0)
		return api_give(err, &e);
	return traffic_take(&t, path, out, err);
}

int fast_api_traffic_parse(const char *text, const char *name, struct fast_api_traffic **out,
			   struct fast_api_error *err)
{
	struct fast_traffic t;
	struct fast_limits lim;
	struct fast_err e;

	if (fast_traffic_parse(text, strlen(text), name ? name : "traffic", api_limits(&lim), &t, &e) < 0)
		return api_give(err, &e);
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
		return api_fail(err, FAST_EUSAGE, "matrix %u: the traffic has %u matrices", k, t->t.count);
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

	if ((rc = api_mem_open(&m, err)) < 0)
		return rc;
	rc = fast_traffic_write(&t->t, false, m.f, &e) < 0 ? api_give(err, &e) : 0;
	return api_mem_close(&m, rc, json, err);
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
int api_compile_options(const char *const *names, const char *const *values, size_t n,
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
			return api_fail(err, FAST_EUSAGE, "unknown compiler option '%.40s' (known: %s)",
				    names[i], known);
		}
		if (fast_algo_option_parse(opt, values[i], o, &e) < 0)
			return api_fail(err, FAST_EUSAGE, "--%s: %s", opt->name, e.msg);
		*given |= opt->bit;
	}
	return 0;
}

/* cmd/cli_algo.c's cli_algo_known and cli_algo_applies, in their words */
int api_algo_applies(const char *algo, unsigned given, struct fast_api_error *err)
{
	const struct fast_algo *a = fast_algo_find(algo);

	if (!a) {
		char known[128];
		const char *near = fast_algo_suggest(algo ? algo : "", NULL, 0);
		fast_algo_list(known, sizeof known);
		if (near)
			return api_fail(err, FAST_EUSAGE,
				    "--algo: unknown algorithm '%.40s' (known: %s); did you mean '%s'?",
				    algo ? algo : "", known, near);
		return api_fail(err, FAST_EUSAGE, "--algo: unknown algorithm '%.40s' (known: %s)",
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
		return api_fail(err, FAST_EUSAGE, "--%s applies to --algo %s only", opt->name, to);
	}
	return 0;
}

static int plans_new(struct fast_api_plans **out, const char *name, struct fast_api_error *err)
{
	struct fast_api_plans *h = calloc(1, sizeof *h);

	if (!h)
		return api_fail(err, FAST_ENOMEM, "out of memory");
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
	if ((rc = api_compile_options(names, values, n, &o, &given, err)) < 0 ||
	    (rc = api_algo_applies(algo, given, err)) < 0)
		return rc;
	if (fast_traffic_check_topo(t, &topo->t, tr->name, &e) < 0)
		return api_give(err, &e);
	if ((rc = plans_new(&h, "plans", err)) < 0)
		return rc;
	if (!(h->ps.plans = calloc(t->count ? t->count : 1, sizeof *h->ps.plans))) {
		free(h);
		return api_fail(err, FAST_ENOMEM, "out of memory");
	}
	for (uint32_t i = 0; i < t->count; i++) {
		struct fast_plan *p = &h->ps.plans[i];
		if (fast_compile(algo, &topo->t, &t->m[i], &o, p, &e) < 0) {
			fast_err_prefix(&e, "%s: matrix %u (%s)", tr->name, i, t->m[i].label);
			fast_api_plans_free(h);
			return api_give(err, &e);
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

	if (fast_planset_load(path, api_limits(&lim), &ps, &e) < 0)
		return api_give(err, &e);
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
	if (fast_planset_parse(text, strlen(text), name, api_limits(&lim), &ps, &e) < 0)
		return api_give(err, &e);
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

	if ((rc = api_mem_open(&m, err)) < 0)
		return rc;
	rc = fast_planset_write(&ps->ps, m.f, &e) < 0 ? api_give(err, &e) : 0;
	return api_mem_close(&m, rc, json, err);
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
		return api_fail(err, FAST_EUSAGE, "plan %u: %s holds %u plans", i, ps->name, ps->ps.count);
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

