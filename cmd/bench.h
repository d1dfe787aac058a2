/*
 * bench.h - the sections of `fast bench` (cmd/bench.c): synthesis
 * (cmd/bench_plan.c), lower bounds (cmd/bench_bound.c), the simulator
 * (cmd/bench_sim.c) and the plan checker (cmd/bench_check.c).  One small file per section, one shared harness: the
 * dispatcher parses the options, prints the section headings and wraps the
 * JSON; a section only measures and prints its own part.
 *
 * Section contract: print results to stdout only (progress to stderr, and
 * only when stderr is a terminal); with o->json print exactly one JSON value
 * (an object) and nothing else on stdout -- the dispatcher writes
 * {"plan": <value>, "bound": <value>, ...} around them; a section that
 * fails prints no JSON at all and the dispatcher writes null for it (so
 * print the value at the end, on success); without --json, human tables.  Return an exit status (0 ok; 1 when a stated target is missed
 * only if o->strict; 4 runtime failure).  Measured times appear only here,
 * never in plans.
 */
#ifndef FAST_BENCH_H
#define FAST_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bench_opts {
	bool quick;  /* CI: small sizes, few repeats */
	bool json;   /* one JSON value per section */
	bool strict; /* a missed target is exit status 1 */
};

struct bench_section {
	const char *name;
	int (*fn)(const struct bench_opts *o);
	const char *summary;
};

int fast_bench_plan(const struct bench_opts *o);  /* cmd/bench_plan.c */
int fast_bench_bound(const struct bench_opts *o); /* cmd/bench_bound.c */
int fast_bench_sim(const struct bench_opts *o);   /* cmd/bench_sim.c */
int fast_bench_check(const struct bench_opts *o); /* cmd/bench_check.c */
int fast_bench_auto(const struct bench_opts *o);  /* cmd/bench_auto.c */

/* Timing statistics over repeats (seconds), shared by the sections. */
struct bench_stats {
	double median, min, max, q1, q3;
};
/* Sort x[0..n) in place and fill st (n >= 1). */
void bench_stats_of(double *x, size_t n, struct bench_stats *st);
/* Peak resident set size of this process in bytes (getrusage). */
unsigned long long bench_peak_rss(void);
/* CPU time of the calling thread in seconds (CLOCK_THREAD_CPUTIME_ID):
 * what a section times, since wall time on a shared machine measures the
 * neighbours too. */
double bench_cpu_now(void);

struct fast_topo;
struct fast_traffic;
struct fast_plan;
struct fast_err;
/* The sections' standard case: h200 with servers x gpus, one random
 * matrix of 256 MiB mean per GPU pair (seed 1), compiled by algo into p.
 * The traffic is kept in tr when tr is non-NULL (the caller frees it),
 * else freed.  Returns 0 or a negative FAST_E* code with err set. */
int bench_random_plan(const char *algo, uint32_t servers, uint32_t gpus, struct fast_topo *t,
		      struct fast_traffic *tr, struct fast_plan *p, struct fast_err *err);

#endif
