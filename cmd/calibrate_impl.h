/*
 * calibrate_impl.h - the part of `fast calibrate` that fits how schedules'
 * implementations run (topo.h, "implementations") to what users have:
 * nccl-tests alltoall_perf tables (the NCCL schedules' scale-up engine and
 * their fixed cost per call) and DeepEP's test logs (hier's scale-up
 * engine, scale-out rate and reduction rate), each by simulating the
 * logged run with the candidate value until it takes the measured time.
 */
#ifndef FAST_CMD_CALIBRATE_IMPL_H
#define FAST_CMD_CALIBRATE_IMPL_H

#include <stdbool.h>

#include "fast/algo.h"
#include "fast/topo.h"
#include "lib/calib/calib.h"

#define CALIB_RUNS_MAX 192 /* measured runs reported: table rows and DeepEP rows */

/* One measured run, simulated on the fitted topology. */
struct calib_run {
	const char *src;     /* the file */
	size_t line;         /* its line */
	char what[48];       /* "alltoall 1048576 B", "dispatch BF16", ... */
	uint32_t sms;        /* DeepEP: the kernel's SMs; else 0 */
	double measured_us, sim_us;
	bool fit;            /* a fitted value was chosen to match it */
};

/* One fitted term: the schedules it went to, its JSON path's tail, the
 * value, and where it came from. */
struct calib_term {
	char scheds[32];
	char term[24];
	char value[48];
	char from[96];
};

struct calib_impl_in {
	const char *up_alltoall;   /* --up-alltoall: one server's alltoall_perf */
	const char *out_alltoall;  /* --out-alltoall: the cluster's (its call cost) */
	uint32_t ranks;            /* --ranks of the cluster's run (0: N x G) */
	const char *ep_intra, *ep_inter; /* --deepep-intranode, --deepep-internode */
	uint32_t experts;          /* --experts of the DeepEP runs */
	const struct fast_limits *lim;
};

struct calib_impl_out {
	size_t nruns, nterms;
	struct calib_run runs[CALIB_RUNS_MAX];
	struct calib_term terms[16];
};

/* --- what calibrate_impl.c and calibrate_deepep.c share -------------------- */

/* Schedule algo's plan for matrix m, simulated on *t (the caller's: a fit
 * changes it between simulations). */
struct sim_case {
	const struct fast_topo *t;
	const struct fast_matrix *m;
	struct fast_plan p;
	bool compiled;
};

/* Schedule sched's implementation in t, to change. */
struct fast_impl *calib_entry(struct fast_topo *t, const char *sched);
/* Compile c (default options); FAST_EINPUT with err set on failure. */
int calib_case_compile(struct sim_case *c, const char *algo, const struct fast_topo *t,
		       const struct fast_matrix *m, struct fast_err *err);
void calib_case_free(struct sim_case *c);
/* c's simulated time in us (HUGE_VAL when the simulation fails). */
double calib_case_us(const struct sim_case *c);
/* *slot in [lo, hi] so that c takes target_us: 0, -2 (no value reaches
 * it: *slot at the bound nearer, warned naming what) or an exit status. */
int calib_solve(const struct sim_case *c, double *slot, double lo, double hi, double target_us,
		const char *what);
void calib_add_run(struct calib_impl_out *out, const char *src, size_t line, const char *what,
		   uint32_t sms, double measured, double sim, bool fit);
void calib_add_term(struct calib_impl_out *out, const char *scheds, const char *term,
		    const char *from, const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* t's server 0 alone into t1, validated: 0 or an exit status. */
int calib_one_server(const struct fast_topo *t, struct fast_topo *t1, const struct fast_limits *lim);
/* The DeepEP fits (calibrate_deepep.c): 0 or an exit status. */
int calib_deepep_fit(const struct calib_impl_in *in, struct fast_topo *topo,
		     struct calib_impl_out *out);

/* Does in ask for any of these fits? */
bool calib_impl_wanted(const struct calib_impl_in *in);
/* Fit into topo's implementations (after the tiers' fits) and simulate
 * every measured run on the result into *out; 0, or an exit status after
 * printing the error.  Warnings (a run faster or slower than any value
 * of a term gives) go to stderr. */
int calib_impl_fit(const struct calib_impl_in *in, struct fast_topo *topo,
		   struct calib_impl_out *out);
/* The report: a table (human) or the members "implementation": [...],
 * "runs": [...] followed by a comma (json). */
void calib_impl_print(const struct calib_impl_out *out, bool json);

#endif
