/*
 * synthesis.h - a schedule's measured synthesis time, as every report of
 * it means it (`fast compare`, the synthesis_s column of `fast sweep` and
 * `fast gate`): the median thread-CPU time of SYNTH_REPEATS compiles after
 * one warm-up in the same process.  For auto: its decision's median (timed
 * the same way, lib/compile/algo_auto.h) plus the chosen schedule's synthesis.
 *
 * Measured times appear only in reports, never in plans.  Thread-CPU time
 * (bench_cpu_now), since wall time on a shared machine measures the
 * neighbours too; a sample below 20 us is the mean of a batch of runs, so
 * that the clock's own cost stays out of it (cmd/synthesis.c).
 */
#ifndef FAST_CMD_SYNTHESIS_H
#define FAST_CMD_SYNTHESIS_H

#include "bench.h"
#include "lib/compile/algo_auto.h"

#define SYNTH_REPEATS 15

/* A unit of synthesis to time: the compile of algo (auto included: its
 * whole compile; token traffic: the token schedules, as
 * fast_compile_matrix), or with algo NULL auto's decision alone
 * (fast_auto_choose), with options ao. */
struct synth_unit {
	const char *algo;
	const struct fast_algo_opts *ao;
	double median_s;       /* out: the median of its SYNTH_REPEATS samples */
	struct bench_stats st; /* out: their statistics (st.median == median_s) */
};

/* Every unit's median, after a warm-up of its own (the caller's compile of
 * the same case warmed the caches before it), sample r of every unit
 * taken in turn.  Returns 0 or a negative FAST_E* code with err set (at
 * most 64 units).  Not reentrant. */
int synth_units(const struct fast_topo *t, const struct fast_matrix *mx, struct synth_unit *u,
		uint32_t n, struct fast_err *err);

/* The synthesis of one algo's row into *synth_s: its median, or for auto
 * its decision's median (*decision_s, may be NULL; 0 for another
 * algorithm) plus the chosen schedule's, the two sampled in turn.
 * Returns 0 or a negative FAST_E* code with err set. */
int synth_measure(const char *algo, const struct fast_topo *t, const struct fast_matrix *mx,
		  const struct fast_algo_opts *ao, double *synth_s, double *decision_s,
		  struct fast_err *err);

#endif
