/*
 * api_run.c - libfast.so's facade (include/fast/api.h), its second half:
 * a plan checked against its traffic, the bounds and the simulation as
 * the JSON the command line prints, and a rank's program of a plan as
 * plain arrays.  The handles and error helpers are api_internal.h's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_internal.h"
#include "fast/algo.h"
#include "fast/bound.h"
#include "fast/check.h"
#include "fast/sim.h"

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
		return api_give(err, &e);
	for (uint32_t m = 0; m < t->count; m++)
		if (!plan_for(ps, m, t->count, &e))
			return api_give(err, &e);
	for (uint32_t m = 0; m < t->count; m++) {
		const struct fast_plan *p = &ps->ps.plans[m];
		struct fast_plan_view v;
		int rc = fast_plan_view_open(&v, p, &t->m[m], &e);
		if (rc == 0) {
			rc = fast_plan_check(&v, &topo->t, &e);
			fast_plan_view_close(&v);
		}
		if (rc == FAST_ECHECK)
			fast_err_prefix(&e, "plan %u (%s, matrix %u)", m, p->label, p->matrix);
		else if (rc < 0)
			fast_err_prefix(&e, "%s: /plans/%u", ps->name, m);
		if (rc < 0)
			return api_give(err, &e);
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
		return api_give(err, &e);
	if ((rc = api_mem_open(&m, err)) < 0)
		return rc;
	fprintf(m.f, "{\n  \"topology\": ");
	fast_bound_json_topo(m.f, &topo->t);
	fprintf(m.f, ",\n  \"bounds\": [\n");
	for (uint32_t i = 0; i < t->count && rc == 0; i++) {
		struct fast_bound b;
		if (fast_bound_compute(&topo->t, &t->m[i], closed_only, &b, &e) < 0) {
			fast_err_prefix(&e, "matrix %u (%s)", i, t->m[i].label);
			rc = api_give(err, &e);
			break;
		}
		fast_bound_json(m.f, &b, i, t->m[i].label, closed_only, timing);
		fprintf(m.f, "%s\n", i + 1 < t->count ? "," : "");
	}
	if (rc == 0)
		fprintf(m.f, "  ]\n}\n");
	return api_mem_close(&m, rc, json, err);
}

static int on_off(const char *name, const char *v, bool *out, struct fast_api_error *err)
{
	if (strcmp(v, "on") == 0 || strcmp(v, "true") == 0 || strcmp(v, "1") == 0)
		*out = true;
	else if (strcmp(v, "off") == 0 || strcmp(v, "false") == 0 || strcmp(v, "0") == 0)
		*out = false;
	else
		return api_fail(err, FAST_EUSAGE, "%s: '%.40s' is not on or off", name, v);
	return 0;
}

int api_sim_options(const char *const *names, const char *const *values, size_t n,
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
				rc = api_fail(err, FAST_EUSAGE, "--sync: '%.40s' is not step or rank", v);
		} else if (strcmp(k, "epsilon") == 0) {
			char *end;
			double e = strtod(v, &end);
			if (end == v || *end || !(e >= 0 && e < 1))
				rc = api_fail(err, FAST_EUSAGE, "--epsilon: '%.40s' is not a number in [0, 1)", v);
			s->so.epsilon = e;
		} else if (strcmp(k, "in_flight") == 0) {
			if (strcmp(v, "1") == 0 || strcmp(v, "2") == 0)
				s->so.in_flight = (uint32_t)(*v - '0');
			else
				rc = api_fail(err, FAST_EUSAGE, "--in-flight: '%.40s' is not 1 or 2", v);
		} else {
			rc = api_fail(err, FAST_EUSAGE, "unknown simulator option '%.40s' (known: "
				  "congestion, sync, in_flight, epsilon, steps, check)", k);
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

	if ((rc = api_sim_options(names, values, n, &s, err)) < 0)
		return rc;
	if (traf && fast_traffic_check_topo(traf, t, tr->name, &e) < 0)
		return api_give(err, &e);
	if (ps->ps.count == 0)
		return api_fail(err, FAST_EINPUT, "%s: no plans", ps->name);
	/* every plan proved for its matrix before anything is simulated
	 * (fast sim --plan --traffic; cmd/sim_common.c's simc_check_plan) */
	for (uint32_t i = 0; traf && s.check && i < ps->ps.count; i++) {
		const struct fast_plan *p = &ps->ps.plans[i];
		struct fast_plan_view v;
		if (p->matrix >= traf->count)
			continue;
		rc = fast_plan_view_open(&v, p, &traf->m[p->matrix], &e);
		if (rc == 0) {
			rc = fast_plan_check(&v, t, &e);
			fast_plan_view_close(&v);
		}
		if (rc == FAST_ECHECK)
			fast_err_prefix(&e, "%s: plan %u (%s, matrix %u) is incorrect for the traffic",
					ps->name, i, p->label, p->matrix);
		else if (rc < 0)
			fast_err_prefix(&e, "%s: /plans/%u", ps->name, i);
		if (rc < 0)
			return api_give(err, &e);
	}
	if ((rc = api_mem_open(&m, err)) < 0)
		return rc;
	fast_sim_json_head(m.f, t);
	for (uint32_t i = 0; i < ps->ps.count && rc == 0; i++) {
		const struct fast_plan *p = &ps->ps.plans[i];
		const struct fast_matrix *M =
			traf && traf->count && p->matrix < traf->count ? &traf->m[p->matrix] : NULL;
		struct fast_sim_opts so = s.so;
		struct fast_sim_result r;
		struct fast_plan_view v;
		struct fast_bound b;
		int sr;

		so.traffic = M ? M->bytes : NULL;
		if ((sr = fast_plan_view_open(&v, p, M, &e)) == 0) {
			sr = fast_sim_run(t, &v, &so, &r, &e);
			fast_plan_view_close(&v);
		}
		if (sr < 0) {
			fast_err_prefix(&e, "%s: plan %u (%s)", ps->name, p->matrix, p->label);
			rc = api_give(err, &e);
			break;
		}
		if (M && fast_bound_compute(t, M, false, &b, &e) < 0) {
			fast_sim_result_free(&r);
			rc = api_give(err, &e);
			break;
		}
		sr = fast_sim_json_plan(m.f, t, p, &r, M ? &b : NULL, &so, s.steps, false, i == 0, &e);
		fast_sim_result_free(&r);
		if (sr < 0) {
			rc = api_give(err, &e);
			break;
		}
	}
	if (rc == 0)
		fast_sim_json_tail(m.f);
	return api_mem_close(&m, rc, json, err);
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
		return api_fail(err, FAST_EUSAGE, "plan %u: %s holds %u plans", i, ps->name, ps->ps.count);
	p = &ps->ps.plans[i];
	if (p->matrix >= t->count)
		return api_fail(err, FAST_EINPUT, "%s: plan %u serves matrix %u; the traffic has %u",
			    ps->name, i, p->matrix, t->count);
	if (rank >= t->ng)
		return api_fail(err, FAST_EUSAGE, "rank %u: the traffic has %u GPUs", rank, t->ng);
	if (passes < 1)
		return api_fail(err, FAST_EUSAGE, "passes must be >= 1");
	M = &t->m[p->matrix];
	if (!(h = calloc(1, sizeof *h)))
		return api_fail(err, FAST_ENOMEM, "out of memory");
	if (fast_plan_view_open(&v, p, M, &e) < 0) {
		free(h);
		fast_err_prefix(&e, "%s: /plans/%u", ps->name, i);
		return api_give(err, &e);
	}
	/* one wave at a time: the program's layout, no staging kept for a
	 * second wave in flight */
	rc = p->kind == FAST_TRAFFIC_BYTES ? fast_prog_build(&v, M->bytes, rank, passes, 1, &h->p, &e)
					   : fast_prog_build_tokens(&v, M, rank, passes, 1, &h->p, &e);
	fast_plan_view_close(&v);
	if (rc < 0) {
		free(h);
		return api_give(err, &e);
	}
	*out = h;
	return 0;
}

void fast_api_prog_info(const struct fast_api_prog *p, struct fast_api_prog_info *out)
{
	const struct fast_prog *g = p->p;
	struct fast_prog_info i;

	fast_prog_info(g, &i); /* the executor's own summary of a program */
	memset(out, 0, sizeof *out);
	out->rank = g->rank;
	out->ng = g->ng;
	out->passes = i.passes;
	out->nwaves = i.waves;
	out->kind = (uint32_t)g->kind;
	out->nmsgs = g->nmsgs;
	out->staging_bytes = i.staging_bytes;
	out->nsends = i.sends;
	out->nrecvs = i.recvs;
	out->ncopies = i.copies;
	out->plan_hash = i.plan_hash;
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
