/*
 * algo_auto.h - `--algo auto` (not `--stages auto`, lib/compile/bvn_search.c):
 * per matrix, choose the schedule with the least predicted completion time including its synthesis,
 *     T(a) = T_sim(a) + S(a),
 * over the compilers of the algorithm table (algo.h), each with the given
 * options.
 *
 * Workload: one decision per matrix, on every rank of `fast run --algo
 * auto`, before any compile; it must cost far less than it saves (about a
 * microsecond at 4 x 8).  So nothing here simulates or compiles: T_sim(a)
 * comes from a closed-form cost model of the simulator (per-step latency
 * and overhead on the critical path, plus the bytes over the bottleneck
 * port at its effective rate, lib/compile/algo_auto_model.c) computed in one
 * pass over the matrix (lib/compile/algo_auto_feat.c; two when spreadout
 * may win), and S(a) from a synthesis-cost model with constants fitted on
 * this machine.  Both are each schedule's own, in its row of the
 * algorithm table (struct fast_algo_model; lib/compile/algo.c states the
 * constants with the command that fitted them): the choice iterates the
 * table (lib/compile/algo_auto.c), so a schedule added there is a
 * candidate.
 * Both are pure functions of (topology, matrix, options): every rank
 * chooses the same schedule, and the plan holds no measured time.
 *
 * Token traffic (kind DISPATCH or COMBINE) is the exception: there the
 * token compilers cost 0.3-40 ms anyway, and the closed form errs too much
 * on token plans, so with an evaluator in the options (the simulator's,
 * which every command and the executor pass) auto compiles and simulates
 * every candidate and takes the least simulated time
 * (fast_auto_choose_matrix).  The simulator is deterministic: every rank
 * still chooses the same plan.
 */
#ifndef FAST_ALGO_AUTO_H
#define FAST_ALGO_AUTO_H

#include "fast/algo.h"

/* Candidates: the table's algorithms other than auto itself; on token
 * traffic also the token plans (dedup=server) of those that have one. */
#define FAST_AUTO_MAX 8

struct fast_auto_choice {
	uint32_t n;                         /* candidates considered */
	const char *algo[FAST_AUTO_MAX];    /* their names (the table's strings) */
	enum fast_dedup_mode dedup[FAST_AUTO_MAX]; /* token traffic: the plan's dedup; else FAST_DEDUP_GPU */
	double sim_s[FAST_AUTO_MAX];        /* predicted T_sim (evaluated: the evaluator's time) */
	double synth_s[FAST_AUTO_MAX];      /* predicted S (evaluated: 0, not weighed) */
	uint32_t best;                      /* index of the choice */
	bool evaluated;                     /* sim_s from opts->eval, not predicted */
};

/* Choose for matrix D (ng x ng, ng = N * G of topo) with options opts
 * (NULL: defaults).  Fills *out; never fails.  Near-ties (within 3% + 0.5
 * us of the least predicted T) go to the candidate first in the table, so
 * the result is deterministic.  The decision itself: spreadout's sim_s may
 * be only a floor under its prediction, where that floor already rules it
 * out (its rounds cost a second pass over the matrix).  D on a 64-byte
 * line (as fast_traffic_alloc gives) is read faster; any D is correct. */
void fast_auto_choose(const struct fast_topo *topo, const uint64_t *D,
		      const struct fast_algo_opts *opts, struct fast_auto_choice *out);
/* The same choice with every candidate's full prediction (for reports). */
void fast_auto_predict(const struct fast_topo *topo, const uint64_t *D,
		       const struct fast_algo_opts *opts, struct fast_auto_choice *out);

/* The same for matrix m of a traffic, and, when plan is not NULL, the
 * chosen plan into *plan (as fast_compile compiles the chosen
 * schedule with its dedup; the caller frees it).  0, or a negative FAST_E*
 * code with err set (a compile or the evaluator failed); *out and *plan
 * are written only on success.
 *
 * Byte traffic: fast_auto_choose on m->bytes (every candidate's dedup
 * FAST_DEDUP_GPU), opts->eval ignored.  Token traffic: the candidates are,
 * in this order, each algorithm's token plan (dedup=server: fast, hier; a
 * token crosses to a server once, then is replicated or reduced over
 * scale-up) before its byte plan (dedup=gpu), or with opts->dedup ==
 * FAST_DEDUP_GPU the byte plans only; near-ties go to the first, fast's
 * token plan (the default).  With an evaluator (opts->eval: the commands
 * and the executor pass the simulator's, include/fast/sim.h) every candidate is
 * compiled and timed by it and the least time wins (out->evaluated;
 * synth_s 0): the choice is then within the tie band of the best
 * candidate's evaluated time by construction, at the cost of every
 * candidate's compile and evaluation.  Without one (a lib-only caller) its
 * T_sim is predicted in closed form (lib/compile/algo_auto_tokens.c, token_predict; synthesis
 * not weighed), one pass over the groups and one over an ng x ng matrix
 * more than on bytes. */
int fast_auto_choose_matrix(const struct fast_topo *topo, const struct fast_matrix *m,
			    const struct fast_algo_opts *opts, struct fast_auto_choice *out,
			    struct fast_plan *plan, struct fast_err *err);

/* Options o of the candidate k of c: o with dedup set to the candidate's. */
void fast_auto_opts_of(const struct fast_auto_choice *c, uint32_t k, const struct fast_algo_opts *o,
		       struct fast_algo_opts *out);

/* Predicted synthesis time (s) of algo on an N x G topology whose matrix
 * has nnz non-zero cross-server messages (its row's model, staged for fast);
 * 0 for a name without one (auto) or unknown. */
double fast_auto_synth_model(const char *algo, uint32_t N, uint32_t G, uint64_t nnz);

/* The `auto` entry of the table: choose, compile the choice; the plan's
 * algo is the chosen schedule's name (the checker applies its rules) and
 * its options say that auto chose it, with the predicted times. */
int fast_sched_auto(const struct fast_topo *topo, const uint64_t *D,
		    const struct fast_algo_opts *opts, struct fast_plan *out,
		    struct fast_err *err);
/* The same on token traffic m, with either dedup (fast_auto_choose_matrix;
 * the table's compile_tokens of auto, so that fast_compile adds the
 * chosen plan's "dedup=" to its options).  The options begin "auto: by sim
 * of 8 candidates: hier dedup=server sim_s=1.234e-05" when the choice was
 * evaluated, "auto: predicted sim_s=..." when predicted. */
int fast_sched_auto_tokens(const struct fast_topo *topo, const struct fast_matrix *m,
			   const struct fast_algo_opts *opts, struct fast_plan *out,
			   struct fast_err *err);

/* The table's model hooks (struct fast_algo_model, algo.h), one closed
 * form per schedule (lib/compile/algo_auto_model.c). */
bool fast_auto_model_fast(const struct fast_algo *a, const struct fast_auto_feat *x,
			  const struct fast_algo_opts *o, double *sim_s, double *synth_s);
bool fast_auto_model_fanout(const struct fast_algo *a, const struct fast_auto_feat *x,
			    const struct fast_algo_opts *o, double *sim_s, double *synth_s);
bool fast_auto_model_nccl(const struct fast_algo *a, const struct fast_auto_feat *x,
			  const struct fast_algo_opts *o, double *sim_s, double *synth_s);
bool fast_auto_model_pxn(const struct fast_algo *a, const struct fast_auto_feat *x,
			 const struct fast_algo_opts *o, double *sim_s, double *synth_s);
bool fast_auto_model_spreadout(const struct fast_algo *a, const struct fast_auto_feat *x,
			       const struct fast_algo_opts *o, double *sim_s, double *synth_s);
bool fast_auto_model_hier(const struct fast_algo *a, const struct fast_auto_feat *x,
			  const struct fast_algo_opts *o, double *sim_s, double *synth_s);
/* The refine hooks: FAST's largest server pair, hier's loads,
 * spreadout's rounds (0, or -1 when out of memory). */
int fast_auto_refine_pair(struct fast_auto_feat *x);
int fast_auto_refine_hier(struct fast_auto_feat *x);
int fast_auto_refine_rounds(struct fast_auto_feat *x);

#endif
