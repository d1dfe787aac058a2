/*
 * calib.h - fit a topology's per-tier latency and efficiency to a user's
 * own measurements (`fast calibrate`).
 *
 * Model (the simulator's, for one transfer on one tier): time = alpha +
 * bytes / (line rate x efficiency).  A least-squares line through the
 * measured (bytes on the link, time) points gives alpha (intercept) and the
 * achieved bandwidth (1 / slope); efficiency = achieved / line rate.  Line
 * rate stays as the topology says: from throughput alone, line rate and
 * efficiency cannot be told apart.
 *
 * Inputs: nccl-tests output of sendrecv_perf (one peer: every byte crosses
 * one link of the tier) and alltoall_perf (n ranks, G per server: each rank
 * sends size/n to each peer, so size (n - G) / n bytes leave through its NIC,
 * the scale-out tier), and `fast run --json` output of a uniform traffic
 * (treated like alltoall_perf with size = per-GPU bytes).
 */
#ifndef FAST_CALIB_H
#define FAST_CALIB_H

#include "fast/common.h"
#include "fast/topo.h"

enum fast_calib_kind { FAST_CALIB_SENDRECV, FAST_CALIB_ALLTOALL, FAST_CALIB_FASTRUN };

#define FAST_CALIB_MAX_POINTS 4096

struct fast_calib_points {
	size_t n;
	double bytes[FAST_CALIB_MAX_POINTS]; /* bytes crossing the fitted tier per link */
	double time_us[FAST_CALIB_MAX_POINTS];
	double size[FAST_CALIB_MAX_POINTS];  /* the row's size column (per rank) */
	size_t line[FAST_CALIB_MAX_POINTS];  /* its line (a --fast-run row: its index) */
};

/* Parse a measurement file into points for `tier` of topology t (ranks:
 * the nccl-tests run's rank count for alltoall; 0 = the topology's GPUs).
 * FAST_EINPUT with "file:line: ..." on malformed input or too few points. */
int fast_calib_parse(const char *text, size_t len, const char *name, enum fast_calib_kind kind,
		     const struct fast_topo *t, uint32_t ranks, struct fast_calib_points *out,
		     struct fast_err *err);

struct fast_calib_fit {
	double latency_us;      /* alpha, >= 0 */
	double achieved_GBps;   /* 1 / slope */
	double efficiency;      /* achieved / line rate */
	double r2;              /* coefficient of determination */
	double max_rel_err;     /* max |model - measured| / measured over the points */
	double mean_rel_err;
	size_t points;
};

/* Least-squares fit; FAST_EINPUT when the points do not determine a line
 * (fewer than 2 distinct sizes, or time not increasing with size). */
int fast_calib_fit(const struct fast_calib_points *p, double line_rate_GBps,
		   struct fast_calib_fit *out, struct fast_err *err);

/* --- fitting model terms on whole collectives --------------------------
 * The per-step costs, the core's share and the loss/timeout regime do not
 * show in a point-to-point sweep; they are fitted on timed collectives:
 * `fast run --json` rows of the fitting cells of a grid (an algorithm on a
 * traffic), each simulated with candidate values and compared with its
 * measured median.  The simulator is the model, so the search is
 * derivative-free (the simulated time is piecewise smooth in each term). */

#define FAST_CALIB_MAX_ROWS 4096

/* One `fast run --json` output: its algorithm, traffic file and each row's
 * matrix index and median time. */
struct fast_calib_run {
	char algo[64];
	char traffic[4096];
	size_t n;
	uint32_t matrix[FAST_CALIB_MAX_ROWS];
	double median_us[FAST_CALIB_MAX_ROWS];
};

/* Parse `fast run --json` output.  FAST_EINPUT ("name: /rows/3: ...") when
 * it is not such output or names no traffic file. */
int fast_calib_parse_run(const char *text, size_t len, const char *name,
			 struct fast_calib_run *out, struct fast_err *err);

/* A term to fit: its topology JSON path (fast_topo_field()) and the range
 * searched, on a log scale when lo > 0 and log is set. */
struct fast_calib_term {
	const char *path;
	double lo, hi;
	bool log;
};

/* The cost of candidate values x[0..n-1] (HUGE_VAL: infeasible); ctx is the
 * caller's. */
typedef double (*fast_calib_cost_fn)(void *ctx, const double *x);

/* Minimise cost over the box of the terms: the best of the start and
 * 16 x n Halton points over the box, then Hooke-Jeeves pattern search
 * (steps doubled on success, halved on failure, a pattern move after each
 * successful sweep) until every step is under 1e-6 of its range or
 * max_evals evaluations were spent.  x holds the start on entry (clamped
 * to the box) and the best point on return; *best its cost.
 * Deterministic.  FAST_EINPUT when no point tried was feasible. */
int fast_calib_minimize(const struct fast_calib_term *terms, size_t n, fast_calib_cost_fn cost,
			void *ctx, unsigned max_evals, double *x, double *best, struct fast_err *err);

/* --- DeepEP's test logs (calib_deepep.c) ---------------------------------
 * The output of deepseek-ai/DeepEP's tests/test_intranode.py and
 * tests/test_internode.py: the run's [config] line and its tuned
 * "[tuning] Best dispatch|combine" lines (every version's format). */

#define FAST_CALIB_EP_MAX_ROWS 64

enum fast_calib_ep_kind { FAST_CALIB_EP_DISPATCH, FAST_CALIB_EP_COMBINE };

struct fast_calib_ep_row {
	enum fast_calib_ep_kind kind;
	bool fp8;           /* dispatch of FP8 tokens (combine is BF16) */
	uint32_t sms;       /* SMs the kernel ran on */
	double time_us;     /* the kernel's time; 0: the line prints none */
	double nvl_GBps;    /* rank 0's NVLink bytes / time, as printed */
	double rdma_GBps;   /* its RDMA bytes / time (internode; else 0) */
	size_t line;
};

struct fast_calib_ep_log {
	uint32_t tokens, hidden, topk; /* per rank; hidden elements; experts per token */
	uint32_t topk_groups;          /* internode: servers a token may reach (0: not printed) */
	size_t n;
	struct fast_calib_ep_row rows[FAST_CALIB_EP_MAX_ROWS];
};

/* Parse a log.  FAST_EINPUT ("name:line: ...") on a malformed Best line,
 * and when there is no [config] line or no Best line. */
int fast_calib_parse_deepep(const char *text, size_t len, const char *name,
			    struct fast_calib_ep_log *out, struct fast_err *err);
/* Bytes of one token as the log's test sends it: hidden x 2 (BF16), or
 * hidden + hidden / 32 (FP8 with a 4-byte scale per 128 elements). */
uint64_t fast_calib_ep_token_bytes(const struct fast_calib_ep_log *log, bool fp8);

/* --- a term that a measured time decides ----------------------------------- */

/* The x in [lo, hi] (lo > 0) at which time(x) = target, for a time that
 * falls as x grows (a rate): bisection on log x to a relative 1e-9 or 200
 * evaluations.  Where time(hi) > target the measurement is faster than
 * any x gives: *x = hi, returns 1; where time(lo) < target, slower:
 * *x = lo, returns 1; else 0.  FAST_EINPUT when time fails (HUGE_VAL). */
typedef double (*fast_calib_time_fn)(void *ctx, double x);
int fast_calib_solve(fast_calib_time_fn time, void *ctx, double target, double lo, double hi,
		     double *x, struct fast_err *err);

#endif
