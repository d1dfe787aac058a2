/*
 * case.c - one case evaluated (include/fast/eval.h): the bound, every
 * row compiled (auto: decided once), the synthesis timed side by side,
 * every row simulated once.
 *
 * Workload: a case per matrix of `fast compare` (a handful of rows) or
 * per case of a sweep (one row), thousands of cases a study; the
 * simulation dominates, so what this file saves is simulations and
 * decisions, never a copy of a matrix.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fast/eval.h"
#include "lib/compile/algo_auto.h"

_Static_assert(FAST_AUTO_MAX <= FAST_CASE_MAX_CANDIDATES, "auto's candidates fit a row");

void fast_case_init(struct fast_case *c, const struct fast_topo *topo,
		    const struct fast_matrix *m)
{
	memset(c, 0, sizeof *c);
	c->topo = topo;
	c->matrix = m;
	c->bound = FAST_CASE_BOUND_LP;
	c->simulate = true;
	fast_sim_opts_default(&c->sim);
}

/* The simulator options of row k (the matrix's traffic for the bandwidth's
 * size, the row's timeline). */
static struct fast_sim_opts row_sim_opts(const struct fast_case *c, uint32_t k)
{
	struct fast_sim_opts so = c->sim;

	so.traffic = c->matrix ? c->matrix->bytes : NULL;
	so.timeline = c->algos[k].timeline;
	return so;
}

/* --- auto's decision, its candidates' simulations kept ---------------------
 *
 * On token traffic auto simulates every candidate with the evaluator in
 * its options.  When that is fast_sim_evaluator and the case's simulator
 * options give the same times (timeline and traffic change no time), the
 * evaluator below stands in for it: the same times, so the same choice,
 * with each candidate's whole result kept, and the chosen one's is the
 * row's.  Its ctx is this struct itself, not const: the results kept
 * are the caller's, the times are those of the evaluator it replaces. */
struct keep_eval {
	struct fast_plan_eval eval;
	struct fast_sim_opts opts;
	uint32_t n;                   /* candidates simulated, in order */
	struct fast_sim_result res[FAST_AUTO_MAX];
	size_t nsteps[FAST_AUTO_MAX]; /* their plans' steps (a check) */
};

static int keep_time(const struct fast_plan_eval *e, const struct fast_topo *topo,
		     const struct fast_matrix *m, const struct fast_plan *p, double *time_s,
		     struct fast_err *err)
{
	struct keep_eval *ke = (struct keep_eval *)(uintptr_t)e->ctx;
	struct fast_sim_result r;
	struct fast_plan_view v;
	int rc;

	if ((rc = fast_plan_view_open(&v, p, m, err)) < 0)
		return rc;
	rc = fast_sim_run(topo, &v, &ke->opts, &r, err);
	fast_plan_view_close(&v);
	if (rc < 0)
		return rc;
	*time_s = r.time_s;
	if (ke->n < FAST_AUTO_MAX) {
		ke->nsteps[ke->n] = p->nsteps;
		ke->res[ke->n++] = r;
	} else {
		fast_sim_result_free(&r);
	}
	return 0;
}

/* Do options so time a plan as fast_sim_evaluator does? */
static bool times_as_default(const struct fast_sim_opts *so)
{
	struct fast_sim_opts d;

	fast_sim_opts_default(&d);
	return so->congestion == d.congestion && so->sync == d.sync && so->epsilon == d.epsilon &&
	       so->reference == d.reference;
}

/* Copy choice ch into row w. */
static void row_choice(struct fast_case_row *w, const struct fast_auto_choice *ch)
{
	w->is_auto = true;
	w->evaluated_choice = ch->evaluated;
	w->ncand = ch->n;
	w->chosen = ch->best;
	for (uint32_t j = 0; j < ch->n; j++)
		w->cand[j] = (struct fast_case_candidate){ ch->algo[j], ch->dedup[j], ch->sim_s[j],
							   ch->synth_s[j] };
}

/* Auto's row k: one decision and the chosen plan into w->own.  Byte
 * traffic: the decision with every candidate's full prediction (the
 * report's), then the chosen schedule compiled as fast_auto_choose_matrix
 * compiles it; token traffic: fast_auto_choose_matrix, whose simulation
 * of the chosen plan becomes the row's where keep_eval may stand in. */
static int decide_auto(const struct fast_case *c, uint32_t k, struct fast_case_row *w,
		       struct fast_err *err)
{
	const struct fast_case_algo *a = &c->algos[k];
	const struct fast_matrix *m = c->matrix;
	struct fast_algo_opts o = a->opts;
	struct fast_auto_choice ch;
	struct keep_eval ke;
	bool keep = c->simulate && m->kind != FAST_TRAFFIC_BYTES &&
		    a->opts.eval == fast_sim_evaluator() && times_as_default(&c->sim);
	int rc;

	if (m->kind == FAST_TRAFFIC_BYTES) {
		fast_auto_predict(c->topo, m->bytes, &a->opts, &ch);
		fast_auto_opts_of(&ch, ch.best, &a->opts, &o);
		if ((rc = fast_compile(ch.algo[ch.best], c->topo, m, &o, &w->own, err)) < 0)
			return rc;
		row_choice(w, &ch);
		return 0;
	}
	if (keep) {
		memset(&ke, 0, sizeof ke);
		ke.opts = row_sim_opts(c, k);
		ke.eval = (struct fast_plan_eval){ "sim", keep_time, &ke };
		o.eval = &ke.eval;
	}
	rc = fast_auto_choose_matrix(c->topo, m, &o, &ch, &w->own, err);
	if (rc == 0)
		row_choice(w, &ch);
	/* the chosen candidate's simulation is the row's when every candidate
	 * was simulated here, once, in order */
	for (uint32_t j = 0; keep && j < ke.n; j++) {
		if (rc == 0 && j == ch.best && ch.evaluated && ke.n == ch.n &&
		    ke.nsteps[j] == w->own.nsteps) {
			w->sim = ke.res[j];
			w->simulated = true;
		} else {
			fast_sim_result_free(&ke.res[j]);
		}
	}
	return rc;
}

/* Row k compiled (or given) into w. */
static int compile_row(const struct fast_case *c, uint32_t k, struct fast_case_row *w,
		       struct fast_err *err)
{
	const struct fast_case_algo *a = &c->algos[k];
	int rc;

	w->synth_s = w->decision_s = NAN;
	if (!a->algo) {
		w->plan = a->plan;
		return 0;
	}
	if (strcmp(a->algo, "auto") == 0)
		rc = decide_auto(c, k, w, err);
	else
		rc = fast_compile(a->algo, c->topo, c->matrix, &a->opts, &w->own, err);
	if (rc == 0)
		w->plan = &w->own;
	return rc;
}

/* --- synthesis ---------------------------------------------------------- */

/* Do options a and b compile algo's plan for m alike?  (dedup only
 * matters on token traffic) */
static bool same_opts(const char *algo, const struct fast_matrix *m, const struct fast_algo_opts *a,
		      const struct fast_algo_opts *b)
{
	const struct fast_algo *d = fast_algo_find(algo);
	unsigned bits = d ? d->options : ~0u;
	char x[160], y[160];

	if (m->kind == FAST_TRAFFIC_BYTES)
		bits &= ~(unsigned)FAST_OPT_DEDUP;
	fast_algo_opts_name(a, bits, "/", x, sizeof x);
	fast_algo_opts_name(b, bits, "/", y, sizeof y);
	return strcmp(x, y) == 0;
}

/* Every compiled row's synthesis side by side: a unit per row; an auto
 * row's its decision's plus the chosen schedule's -- that of a row of the
 * same schedule and options where the case has one (the same samples),
 * else a unit of its own.  An evaluated decision compiled the chosen plan
 * itself: its time is the decision's alone. */
static int time_synthesis(const struct fast_case *c, struct fast_case_result *r,
			  struct fast_err *err)
{
	enum { MAX_ROWS = 32 };
	struct fast_synth_unit u[2 * MAX_ROWS];
	struct fast_algo_opts chosen_ao[MAX_ROWS];
	uint32_t row_unit[MAX_ROWS], chosen_unit[MAX_ROWS], n = 0;
	int rc;

	if (c->nalgos > MAX_ROWS)
		return fast_err_set(err, FAST_EUSAGE, "synthesis: %u rows, at most %d", c->nalgos,
				    MAX_ROWS);
	for (uint32_t k = 0; k < c->nalgos; k++) {
		row_unit[k] = chosen_unit[k] = UINT32_MAX;
		if (c->algos[k].algo && !r->rows[k].is_auto) {
			row_unit[k] = n;
			u[n++] = (struct fast_synth_unit){ c->algos[k].algo, &c->algos[k].opts, 0, 0, 0 };
		}
	}
	for (uint32_t k = 0; k < c->nalgos; k++) {
		const struct fast_case_row *w = &r->rows[k];
		const char *chosen;
		if (!w->is_auto)
			continue;
		row_unit[k] = n;
		u[n++] = (struct fast_synth_unit){ NULL, &c->algos[k].opts, 0, 0, 0 };
		if (w->evaluated_choice)
			continue;
		chosen = w->cand[w->chosen].algo;
		chosen_ao[k] = c->algos[k].opts;
		chosen_ao[k].dedup = w->cand[w->chosen].dedup;
		for (uint32_t j = 0; j < c->nalgos && chosen_unit[k] == UINT32_MAX; j++)
			if (c->algos[j].algo && strcmp(c->algos[j].algo, chosen) == 0 &&
			    same_opts(chosen, c->matrix, &c->algos[j].opts, &chosen_ao[k]))
				chosen_unit[k] = row_unit[j];
		if (chosen_unit[k] == UINT32_MAX) {
			chosen_unit[k] = n;
			u[n++] = (struct fast_synth_unit){ chosen, &chosen_ao[k], 0, 0, 0 };
		}
	}
	if ((rc = fast_synth_time(c->topo, c->matrix, u, n, err)) < 0)
		return rc;
	for (uint32_t k = 0; k < c->nalgos; k++) {
		struct fast_case_row *w = &r->rows[k];
		if (row_unit[k] == UINT32_MAX)
			continue;
		w->synth_s = u[row_unit[k]].median_s;
		if (w->is_auto) {
			w->decision_s = w->synth_s;
			if (chosen_unit[k] != UINT32_MAX)
				w->synth_s += u[chosen_unit[k]].median_s;
		}
	}
	return 0;
}

/* --- simulation ---------------------------------------------------------- */

static int simulate_row(const struct fast_case *c, uint32_t k, struct fast_case_row *w,
			struct fast_err *err)
{
	const struct fast_case_algo *a = &c->algos[k];
	struct fast_sim_opts so = row_sim_opts(c, k);
	int rc = 0;

	if (!w->simulated) {
		/* a given plan's open view; a compiled one's, its token plan
		 * expanding over the groups of its matrix */
		struct fast_plan_view v;
		if (!a->algo && a->view)
			rc = fast_sim_run(c->topo, a->view, &so, &w->sim, err);
		else if ((rc = fast_plan_view_open(&v, w->plan, c->matrix, err)) == 0) {
			rc = fast_sim_run(c->topo, &v, &so, &w->sim, err);
			fast_plan_view_close(&v);
		}
		if (rc < 0)
			return rc;
		w->simulated = true;
	}
	w->bytes_out = 0;
	for (uint32_t i = 0; i < w->sim.nsteps; i++)
		if (w->sim.steps[i].tier == FAST_TIER_OUT)
			w->bytes_out += w->sim.steps[i].bytes;
	return 0;
}

/* --- the case -------------------------------------------------------------- */

static void bound_case(const struct fast_case *c, struct fast_case_result *r)
{
	if (c->bound == FAST_CASE_BOUND_NONE || !c->matrix)
		return;
	r->bound_rc = fast_bound_compute(c->topo, c->matrix, c->bound == FAST_CASE_BOUND_CLOSED,
					 &r->bound, &r->bound_err);
	r->bounded = r->bound_rc == 0;
}

/* Row k's failure at stage into its record; returns rc. */
static int row_failed(struct fast_case_row *w, const char *stage, int rc, const struct fast_err *e)
{
	w->rc = rc;
	w->stage = stage;
	w->err = *e;
	return rc;
}

/* The rows: every compile, the synthesis, every simulation; stops at the
 * first failure (recorded in its row). */
static int eval_rows(const struct fast_case *c, struct fast_case_result *r)
{
	struct fast_err e;
	int rc;

	for (uint32_t k = 0; k < c->nalgos; k++)
		if ((rc = compile_row(c, k, &r->rows[k], &e)) < 0)
			return row_failed(&r->rows[k], "plan", rc, &e);
	if (c->synthesis && (rc = time_synthesis(c, r, &e)) < 0)
		return row_failed(&r->rows[0], "plan", rc, &e);
	for (uint32_t k = 0; k < c->nalgos; k++) {
		if (c->simulate && (rc = simulate_row(c, k, &r->rows[k], &e)) < 0)
			return row_failed(&r->rows[k], "sim", rc, &e);
		r->rows[k].evaluated = true;
	}
	return 0;
}

int fast_case_eval(const struct fast_case *c, struct fast_case_result *out,
		   struct fast_err *err)
{
	int rc;

	memset(out, 0, sizeof *out);
	out->rows = fast_calloc(c->nalgos ? c->nalgos : 1, sizeof *out->rows);
	if (!out->rows)
		return fast_err_set(err, FAST_ENOMEM, "out of memory");
	out->nrows = c->nalgos;
	bound_case(c, out);
	rc = eval_rows(c, out);
	if (out->bound_rc < 0) {
		*err = out->bound_err;
		return out->bound_rc;
	}
	for (uint32_t k = 0; rc < 0 && k < out->nrows; k++)
		if (out->rows[k].rc < 0)
			*err = out->rows[k].err;
	return rc;
}

void fast_case_result_free(struct fast_case_result *r)
{
	if (!r || !r->rows)
		return;
	for (uint32_t k = 0; k < r->nrows; k++) {
		if (r->rows[k].plan == &r->rows[k].own)
			fast_plan_free(&r->rows[k].own);
		fast_sim_result_free(&r->rows[k].sim);
	}
	free(r->rows);
	r->rows = NULL;
	r->nrows = 0;
}
