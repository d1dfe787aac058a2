/*
 * eval.c - the simulator as include/fast/algo.h's plan evaluator (sim.h): the time
 * `--algo auto` weighs its token-traffic candidates by.
 *
 * A candidate is simulated as `fast sim` simulates a plan (fast_sim_run on
 * a view opened with the matrix it serves, a token plan expanding over its groups) with
 * the evaluator's options, no timeline; only the completion time is kept.
 */
#include "fast/sim.h"

static int sim_time(const struct fast_plan_eval *e, const struct fast_topo *topo,
		    const struct fast_matrix *m, const struct fast_plan *p, double *time_s,
		    struct fast_err *err)
{
	struct fast_sim_opts so;
	struct fast_sim_result r;
	struct fast_plan_view v;
	int rc;

	if (e->ctx)
		so = *(const struct fast_sim_opts *)e->ctx;
	else
		fast_sim_opts_default(&so);
	so.timeline = false;
	so.traffic = NULL; /* only the bandwidth's size needs it */
	if ((rc = fast_plan_view_open(&v, p, m, err)) < 0)
		return rc;
	rc = fast_sim_run(topo, &v, &so, &r, err);
	fast_plan_view_close(&v);
	if (rc < 0)
		return rc;
	*time_s = r.time_s;
	fast_sim_result_free(&r);
	return 0;
}

const struct fast_plan_eval *fast_sim_evaluator(void)
{
	static const struct fast_plan_eval sim = { "sim", sim_time, NULL };

	return &sim;
}

void fast_sim_algo_opts_default(struct fast_algo_opts *o)
{
	fast_algo_opts_default(o);
	o->eval = fast_sim_evaluator();
}

void fast_sim_evaluator_init(struct fast_sim_eval *se, const struct fast_sim_opts *o)
{
	se->opts = *o;
	se->opts.timeline = false;
	se->opts.traffic = NULL;
	se->eval = (struct fast_plan_eval){ "sim", sim_time, &se->opts };
}
