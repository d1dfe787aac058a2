/*
 * sweep_run.h - the case runner's per-case steps as `fast sweep` and `fast
 * gate` take them: one case of a sweep spec made into its results row
 * (generated matrix, shared group bound, compile and simulate), and one
 * matrix of a gate made into its row and verdict (identity of the trace
 * case, check of a given plan, bound, compile and simulate, the ratio
 * limit and the comparison with a baseline row).  The steps themselves
 * (sweep_case_eval, sweep_row_ident) are in
 * cmd/sweep_case.h; cmd/sweep.c and cmd/gate.c keep the options, the
 * scheduling of cases and the output.
 */
#ifndef FAST_CMD_SWEEP_RUN_H
#define FAST_CMD_SWEEP_RUN_H

#include "sweep_case.h"
#include "sweep_spec.h"

/* Case id (matrix m, algorithm variant a) of group g of spec s into row r.
 * gen: the group's traffic (sweep_spec_traffic), gen_err: its error when
 * that failed, else NULL.  bound/bounded: the group matrix's bound, made
 * by the first case of the matrix that runs (*bounded false) and reused by
 * the others.  A failure is recorded in r->status ("error:..."). */
void sweep_run_case(const struct sweep_spec *s, uint32_t g, uint64_t id, uint32_t m, uint32_t a,
		    const struct fast_traffic *gen, const struct fast_err *gen_err,
		    struct sweep_row *bound, bool *bounded, struct sweep_row *r);

/* The identity columns of the row of matrix `matrix` (label, bytes D) of
 * the trace traffic_path on topology t named topo_name, planned by algo
 * with options (ao; NULL: a given plan), and its ident: the key is that of
 * the same case in a sweep over this trace. */
void sweep_row_trace_identity(struct sweep_row *r, const struct fast_topo *t, const char *topo_name,
			      const char *traffic_path, uint32_t matrix, const char *label,
			      const struct fast_matrix *M, const char *algo, const char *options,
			      const struct fast_algo_opts *ao, const struct sweep_eval *ev);

/* A matrix of `fast gate`: its row and what fails it. */
struct gate_verdict {
	struct sweep_row row;
	double base_s;   /* baseline time, NaN if none */
	bool over_ratio, regressed, incorrect, failed, no_base;
	char why[200];
};

/* Evaluate matrix mi (M) of a gate into x (zeroed by the
 * caller): its row's identity, the check of the given plan (given non-NULL,
 * gv its open view, closed here) or a compile with algo and ao (options:
 * their name), the bound and the simulation; sets x->failed, incorrect or
 * over_ratio (time / bound > max_ratio) with x->why, and x->base_s NaN. */
void gate_case_eval(const struct fast_topo *t, const char *topo_name, const char *traffic_path,
		    uint32_t mi, const struct fast_matrix *M, const char *algo,
		    const struct fast_algo_opts *ao, const char *options, const struct fast_plan *given,
		    struct fast_plan_view *gv, const struct sweep_eval *ev, double max_ratio,
		    struct gate_verdict *x);
/* Compare x's row with its baseline row b (NULL: none): sets x->no_base
 * when b is missing or has no time (with x->why when require_base), else
 * x->base_s and x->regressed (time over b's by more than tol, relative). */
void gate_case_compare(struct gate_verdict *x, const struct sweep_row *b, double tol,
		       bool require_base);

#endif
