/*
 * sweep_run.c - the per-case work of `fast sweep` and `fast gate`
 * (sweep_run.h): a spec case or a gate matrix is made into its results
 * row with the case runner's steps (cmd/sweep_case.c), and a gate row is
 * judged against its ratio limit and baseline.  The command files
 * (cmd/sweep.c, cmd/gate.c) parse options, schedule the cases and write
 * the output.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fast/check.h"
#include "sweep_results.h"
#include "sweep_run.h"

void sweep_run_case(const struct sweep_spec *s, uint32_t g, uint64_t id, uint32_t m, uint32_t a,
		    const struct fast_traffic *gen, const struct fast_err *gen_err,
		    struct sweep_row *bound, bool *bounded, struct sweep_row *r)
{
	const struct fast_topo *t = &s->topos[s->groups[g].topo].topo;
	const struct fast_matrix *M = NULL;
	const uint64_t *D = NULL;
	const char *label = NULL;

	sweep_spec_case(s, g, id, r, NULL, NULL);
	if (gen_err) {
		snprintf(r->status, sizeof r->status, "error:traffic: %.120s", gen_err->msg);
		sweep_sanitize(r->status);
	} else {
		M = sweep_spec_matrix(s, g, gen, m, &label);
		D = M ? M->bytes : NULL;
		if (!D) {
			snprintf(r->status, sizeof r->status, "error:traffic: matrix %u not generated", m);
		} else {
			struct sweep_case_plan cp = { s->algos[a].algo, &s->algos[a].opts, NULL, NULL };
			sweep_case_measures(s, g, a, M, label, r);
			sweep_case_eval(t, M, &cp, &s->eval, bound, bounded, r);
		}
	}
}

void sweep_row_trace_identity(struct sweep_row *r, const struct fast_topo *t, const char *topo_name,
			      const char *traffic_path, uint32_t matrix, const char *label,
			      const struct fast_matrix *M, const char *algo, const char *options,
			      const struct fast_algo_opts *ao, const struct sweep_eval *ev)
{
	const uint64_t *D = M->bytes;
	uint32_t ng = fast_topo_ngpus(t);
	uint64_t total = 0;

	for (uint64_t i = 0; i < (uint64_t)ng * ng; i++)
		total += D[i];
	r->case_id = matrix;
	snprintf(r->topo, sizeof r->topo, "%s", topo_name);
	sweep_sanitize(r->topo);
	r->servers = t->servers;
	r->gpus = t->gpus;
	r->ngpus = ng;
	r->up_GBps = t->up.bw_GBps;
	r->out_GBps = t->out.bw_GBps;
	snprintf(r->traffic, sizeof r->traffic, "trace:%.150s", traffic_path);
	sweep_sanitize(r->traffic);
	for (char *p = r->traffic; *p; p++)
		if (*p == ';')
			*p = '/';
	r->seed = 0;
	r->size_bytes = ng ? total / ng : 0;
	r->matrix = matrix;
	snprintf(r->label, sizeof r->label, "%s", label);
	sweep_sanitize(r->label);
	snprintf(r->algo, sizeof r->algo, "%s", algo);
	sweep_sanitize(r->algo);
	snprintf(r->options, sizeof r->options, "%s", options);
	sweep_sanitize(r->options);
	/* the key of the same case in a sweep over this trace */
	snprintf(r->key, sizeof r->key,
		 "topo=%s;N=%u;G=%u;up=%.9g;out=%.9g;traffic=%s;seed=0;size=0;m=%u;algo=%s;opts=%s",
		 r->topo, t->servers, t->gpus, t->up.bw_GBps, t->out.bw_GBps, r->traffic, matrix,
		 r->algo, r->options);
	sweep_sanitize(r->key);
	sweep_row_ident(r, t, M, ao, ev);
}

void gate_case_eval(const struct fast_topo *t, const char *topo_name, const char *traffic_path,
		    uint32_t mi, const struct fast_matrix *M, const char *algo,
		    const struct fast_algo_opts *ao, const char *options, const struct fast_plan *given,
		    struct fast_plan_view *gv, const struct sweep_eval *ev, double max_ratio,
		    struct gate_verdict *x)
{
	struct sweep_row *r = &x->row;

	sweep_row_init(r);
	sweep_row_trace_identity(r, t, topo_name, traffic_path, mi, M->label, M,
				 given ? given->algo : algo, given ? "plan" : options,
				 given ? NULL : ao, ev);
	x->base_s = NAN;
	if (given) {
		struct fast_err err;
		int c = fast_plan_check(gv, t, &err);
		if (c < 0) {
			x->incorrect = true;
			snprintf(x->why, sizeof x->why, "plan check: %.180s", err.msg);
		}
	}
	{
		struct sweep_case_plan cp = { algo, ao, given, given ? gv : NULL };
		struct sweep_row shared;
		bool bounded = false;
		sweep_case_eval(t, M, &cp, ev, &shared, &bounded, r);
	}
	if (given)
		fast_plan_view_close(gv);
	if (strcmp(r->status, "ok") != 0) {
		x->failed = true;
		snprintf(x->why, sizeof x->why, "%.190s", r->status);
	} else if (!x->incorrect && !isnan(r->ratio) && r->ratio > max_ratio) {
		x->over_ratio = true;
		snprintf(x->why, sizeof x->why, "time/bound %.4f > %.4f", r->ratio, max_ratio);
	}
}

void gate_case_compare(struct gate_verdict *x, const struct sweep_row *b, double tol,
		       bool require_base)
{
	const struct sweep_row *r = &x->row;

	if (!b || isnan(b->time_s)) {
		size_t l = strlen(x->why);
		x->no_base = true;
		if (require_base)
			snprintf(x->why + l, sizeof x->why - l, "%sno baseline row (ident %s%s)",
				 l ? "; " : "", r->ident, b ? ": the baseline row has no time" : "");
	} else {
		x->base_s = b->time_s;
		if (r->time_s > b->time_s * (1.0 + tol)) {
			size_t l = strlen(x->why);
			x->regressed = true;
			snprintf(x->why + l, sizeof x->why - l, "%stime %.6g us > baseline %.6g us + %.4g%%",
				 l ? "; " : "", r->time_s * 1e6, b->time_s * 1e6, tol * 100);
		}
	}
}
