/*
 * api_auto.c - auto's row of `fast compare`, for callers that build the
 * rest of the comparison themselves (python/fast's compare): per matrix,
 * the case evaluator (include/fast/eval.h) with one "auto" row and the
 * bound (LP plus latency floor), as cmd/compare.c runs it with --no-timing, and the row's
 * fields as its --json prints them.  Synthesis is never timed here, so
 * eval/synth.c's static storage is not touched: the call is as reentrant
 * as the rest of api.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_internal.h"
#include "fast/algo.h"
#include "fast/eval.h"
#include "fast/sim.h"
#include "lib/base/json.h"

/* "name": value, the shortest exact decimal (cmd/compare.c's put_field) */
static void put(FILE *f, const char *name, double v)
{
	fprintf(f, ", \"%s\": ", name);
	fast_json_put_double(f, v);
}

/* Candidate c as compare's row names it: on token traffic with its dedup. */
static void put_candidate_name(FILE *f, bool tokens, const struct fast_case_candidate *c)
{
	if (tokens)
		fprintf(f, "\"%s:dedup=%s\"", c->algo, c->dedup == FAST_DEDUP_GPU ? "gpu" : "server");
	else
		fprintf(f, "\"%s\"", c->algo);
}

static int put_row(FILE *f, const struct fast_topo *t, const struct fast_matrix *M,
		   const struct fast_case_result *r, uint32_t i, struct fast_err *err)
{
	const struct fast_case_row *w = &r->rows[0];
	bool tokens = M->kind != FAST_TRAFFIC_BYTES;
	struct fast_sim_nic *nics;
	uint32_t nn;
	int rc;

	fprintf(f, "%s\n  {\"matrix\": %u", i ? "," : "", i);
	put(f, "bound_s", r->bound.bound_s);
	put(f, "lp_s", r->bound.lp_s);
	put(f, "latency_s", r->bound.latency_s);
	fprintf(f, ", \"binding\": \"%s\"", r->bound.binding);
	put(f, "time_s", w->sim.time_s);
	put(f, "algbw_GBps", w->sim.algbw_GBps);
	fprintf(f, ", \"bytes_out\": %llu, \"chosen\": ", (unsigned long long)w->bytes_out);
	put_candidate_name(f, tokens, &w->cand[w->chosen]);
	put(f, "predicted_sim_s", w->cand[w->chosen].sim_s);
	put(f, "predicted_synthesis_s", w->cand[w->chosen].synth_s);
	fprintf(f, ", \"candidates\": {");
	for (uint32_t j = 0; j < w->ncand; j++) {
		fprintf(f, "%s", j ? ", " : "");
		put_candidate_name(f, tokens, &w->cand[j]);
		fprintf(f, ": {\"predicted_sim_s\": ");
		fast_json_put_double(f, w->cand[j].sim_s);
		fprintf(f, ", \"predicted_synthesis_s\": ");
		fast_json_put_double(f, w->cand[j].synth_s);
		fprintf(f, "}");
	}
	fprintf(f, "}");
	if ((rc = fast_sim_nics(t, &w->sim, &nics, &nn, err)) < 0)
		return rc;
	fast_sim_json_row_nics(f, nics, nn, !fast_topo_nics_ideal(t));
	free(nics);
	fprintf(f, "}");
	return 0;
}

int fast_api_auto_json(const struct fast_api_topo *topo, const struct fast_api_traffic *tr,
		       const char *const *names, const char *const *values, size_t n,
		       const char *const *sim_names, const char *const *sim_values, size_t sim_n,
		       char **json, struct fast_api_error *err)
{
	const struct fast_traffic *t = &tr->t;
	struct sim_settings s;
	struct fast_case_algo a = { .algo = "auto" };
	struct fast_err e;
	struct mem m;
	unsigned given;
	int rc;

	fast_sim_algo_opts_default(&a.opts);
	if ((rc = api_compile_options(names, values, n, &a.opts, &given, err)) < 0 ||
	    (rc = api_algo_applies("auto", given, err)) < 0 ||
	    (rc = api_sim_options(sim_names, sim_values, sim_n, &s, err)) < 0)
		return rc;
	if (fast_traffic_check_topo(t, &topo->t, tr->name, &e) < 0)
		return api_give(err, &e);
	if ((rc = api_mem_open(&m, err)) < 0)
		return rc;
	fprintf(m.f, "[");
	for (uint32_t i = 0; i < t->count && rc == 0; i++) {
		struct fast_case c;
		struct fast_case_result r;
		fast_case_init(&c, &topo->t, &t->m[i]);
		c.sim = s.so;
		c.algos = &a;
		c.nalgos = 1;
		if (fast_case_eval(&c, &r, &e) < 0) {
			if (r.bound_rc == 0 && r.nrows && r.rows[0].stage &&
			    strcmp(r.rows[0].stage, "sim") == 0)
				fast_err_prefix(&e, "auto");
			rc = api_give(err, &e);
		} else if (put_row(m.f, &topo->t, &t->m[i], &r, i, &e) < 0) {
			rc = api_give(err, &e);
		}
		fast_case_result_free(&r);
	}
	if (rc == 0)
		fprintf(m.f, "\n]\n");
	return api_mem_close(&m, rc, json, err);
}
