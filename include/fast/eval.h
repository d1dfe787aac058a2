/*
 * eval.h - evaluate one case: a matrix on a topology, its bound, each of
 * several schedules compiled (or a given plan), its synthesis timed and
 * its plan simulated (eval/case.c, eval/synth.c).  The one evaluator
 * behind `fast compare` (a case per matrix, a row per algorithm), `fast
 * sim` (a row per plan), `fast sweep` (a case per spec case) and `fast
 * gate` (a case per matrix): the commands parse options and print.
 *
 * Work per case: the bound once; per row one compile (auto: one decision,
 * whose chosen plan is the row's) and one simulation of the matrix.  On
 * token traffic auto's decision simulates every candidate; where the
 * case's simulator options are those of the decision's evaluator
 * (fast_sim_evaluator: congestion on, step sync, exact), the chosen
 * candidate's simulation is the row's, so the chosen plan is not
 * simulated a second time.  Synthesis is timed (when asked) after every
 * row is compiled, the rows side by side (eval/synth.c), auto's decision
 * once: the timing is the only part whose numbers change between runs.
 *
 * Ownership: fast_case_eval fills a struct fast_case_result whose rows,
 * plans and simulation results it owns; fast_case_result_free releases
 * them (NULL-safe, idempotent).  Rows hold pointers into the result and
 * into the case (a given plan): read them in place, never copy a row.
 *
 * Errors: a failed bound is recorded (bound_rc, bound_err) and the rows
 * are still evaluated.  The rows are compiled in order, then timed, then
 * simulated in order; the first failure is recorded in its row (stage
 * "plan": the compile, auto's decision or the synthesis timing, that on
 * row 0; "sim") and ends the case: no row is evaluated after it (rows
 * compiled before it keep their plans).  The call returns 0, or the first
 * failure's negative FAST_E* code (the bound's first, then the row's) with
 * err set to its message: the result is filled either way and must be
 * freed; only FAST_ENOMEM before any row leaves it without rows.
 */
#ifndef FAST_EVAL_H
#define FAST_EVAL_H

#include "algo.h"
#include "bound.h"
#include "common.h"
#include "plan.h"
#include "sim.h"
#include "topo.h"
#include "traffic.h"

/* Which bound a case computes. */
enum fast_case_bound {
	FAST_CASE_BOUND_LP = 0,     /* fast_bound_compute: closed form and LP */
	FAST_CASE_BOUND_CLOSED = 1, /* fast_bound_compute closed_only: closed form only */
	FAST_CASE_BOUND_NONE = 2,
};

/* A row of a case: a schedule to compile, or a plan given. */
struct fast_case_algo {
	const char *algo;            /* a name of the algorithm table, "auto" included;
				      * NULL: the given plan below */
	struct fast_algo_opts opts;  /* its options (opts.eval: auto's evaluator) */
	const struct fast_plan *plan;      /* algo NULL: the plan, for the case's matrix */
	const struct fast_plan_view *view; /* algo NULL: plan's open view, or NULL
					    * (simulated from plan and the matrix) */
	bool timeline;               /* simulate with a timeline (sim.h) */
};

struct fast_case {
	const struct fast_topo *topo;
	const struct fast_matrix *matrix; /* NULL only with given plans: no bound */
	const struct fast_case_algo *algos;
	uint32_t nalgos;
	enum fast_case_bound bound;
	bool simulate;
	struct fast_sim_opts sim;    /* traffic is the matrix's, timeline the row's */
	bool synthesis;              /* time every compiled row's synthesis */
};
/* A case of topo and m with no rows: LP bound, simulated with the
 * default simulator options, synthesis not timed. */
void fast_case_init(struct fast_case *c, const struct fast_topo *topo,
		    const struct fast_matrix *m);

/* auto's candidates, as its row reports them (lib/compile/algo_auto.h). */
#define FAST_CASE_MAX_CANDIDATES 8
struct fast_case_candidate {
	const char *algo;            /* the table's string */
	enum fast_dedup_mode dedup;  /* token traffic: the plan's; else FAST_DEDUP_GPU */
	double sim_s;                /* predicted T_sim, or the evaluator's time */
	double synth_s;              /* predicted synthesis (evaluated: 0) */
};

struct fast_case_row {
	bool evaluated;              /* compiled (or given) and, if asked, simulated */
	int rc;                      /* 0, or the row's failure (stage, err) */
	const char *stage;           /* "plan" or "sim" on failure, else NULL */
	struct fast_err err;
	const struct fast_plan *plan; /* the compiled plan (own) or the given one; NULL
				       * when the compile failed */
	struct fast_plan own;
	bool simulated;
	struct fast_sim_result sim;  /* when simulated */
	uint64_t bytes_out;          /* bytes of the simulated scale-out steps */
	/* synthesis (case.synthesis, compiled rows): the median thread-CPU
	 * time of FAST_SYNTH_REPEATS compiles; auto: its decision's median
	 * (decision_s) plus the chosen schedule's (NaN when not timed) */
	double synth_s, decision_s;
	/* auto: its choice, every candidate with its prediction */
	bool is_auto, evaluated_choice; /* evaluated: times by the evaluator */
	uint32_t ncand, chosen;
	struct fast_case_candidate cand[FAST_CASE_MAX_CANDIDATES];
};

struct fast_case_result {
	bool bounded;                /* bound computed */
	int bound_rc;                /* 0, or its failure (bound_err) */
	struct fast_err bound_err;
	struct fast_bound bound;
	uint32_t nrows;
	struct fast_case_row *rows;  /* one per case algorithm, in order */
};

/* Evaluate case c into *out (see the top of this file).  Not reentrant
 * while timing synthesis (its batches use static plan storage). */
int fast_case_eval(const struct fast_case *c, struct fast_case_result *out,
		   struct fast_err *err);
void fast_case_result_free(struct fast_case_result *r);

/* --- synthesis timing (eval/synth.c) ---------------------------------
 * A schedule's measured synthesis time as every report means it: the
 * median thread-CPU time of FAST_SYNTH_REPEATS compiles after one warm-up
 * in the same process; a sample under 20 us is the mean of a batch of
 * runs, so that the clock's own cost stays out of it.  Measured times
 * appear only in reports, never in plans. */
#define FAST_SYNTH_REPEATS 15

/* A unit to time: the compile of algo (auto included: its whole compile;
 * token traffic as fast_compile), or with algo NULL auto's decision
 * alone (fast_auto_choose_matrix), with options opts (NULL: defaults). */
struct fast_synth_unit {
	const char *algo;
	const struct fast_algo_opts *opts;
	double median_s, min_s, max_s; /* out: of its samples */
};

/* Time every unit, after a warm-up of its own, sample r of every unit
 * taken in turn (a change of the machine's speed falls on all alike).
 * 0, or a negative FAST_E* code with err set (at most 64 units).  Not
 * reentrant. */
int fast_synth_time(const struct fast_topo *t, const struct fast_matrix *m,
		    struct fast_synth_unit *u, uint32_t n, struct fast_err *err);

#endif
