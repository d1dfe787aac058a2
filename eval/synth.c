/*
 * synth.c - the measured synthesis time of a report row (include/fast/eval.h),
 * one definition for `fast compare`, `fast sweep`, `fast gate` and `fast
 * bench auto`.
 *
 * Thread-CPU time (CLOCK_THREAD_CPUTIME_ID), since wall time on a shared
 * machine measures the neighbours too.  Reading that clock is a system
 * call (about 0.6 us on the machine this was written on, more under
 * load): against a 1 us decision or a 2 us baseline compile that would be
 * most of the number.  So a sample is the mean of a batch of k runs back
 * to back, k sized from the warm-up so that a batch lasts at least
 * SAMPLE_MIN_S (k = 1 for anything slower); the median is over
 * FAST_SYNTH_REPEATS such samples.  The units of one report are sampled in
 * turn, so that their ratios are measured side by side: a process here
 * can change speed by 1.2-1.7x mid-run (docs/algorithms.md, "Choosing the
 * schedule"), which measured one schedule after another would put on some
 * rows and not on others.  A clock read is a measurement, so it lives
 * here, above lib/ (which reads no clock for its results).
 */
#include <math.h>
#include <stdlib.h>
#include <time.h>

#include "fast/eval.h"
#include "lib/compile/algo_auto.h"

#define SAMPLE_MIN_S 20e-6
#define BATCH_MAX 64
#define MAX_UNITS 64

static double cpu_now(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return fast_now();
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Runs in a batch after a warm-up that took warm_s. */
static int batch_of(double warm_s)
{
	double k = warm_s > 0 ? ceil(SAMPLE_MIN_S / warm_s) : BATCH_MAX;
	return k < 1 ? 1 : k > BATCH_MAX ? BATCH_MAX : (int)k;
}

/* One unit's batch: k compiles (or decisions) back to back; returns the
 * mean seconds of one, or a negative FAST_E* code with err set. */
static int unit_batch(const struct fast_synth_unit *u, const struct fast_topo *t,
		      const struct fast_matrix *mx, int k, double *mean, struct fast_err *err)
{
	static struct fast_plan p[BATCH_MAX]; /* not reentrant (eval.h) */
	struct fast_auto_choice ch;
	double t0 = cpu_now();
	int made = 0, rc = 0;

	if (!u->algo) {
		for (int b = 0; b < k && rc == 0; b++)
			rc = fast_auto_choose_matrix(t, mx, u->opts, &ch, NULL, err);
	} else {
		while (made < k && fast_compile(u->algo, t, mx, u->opts, &p[made], err) == 0)
			made++;
		if (made < k)
			rc = err->code;
	}
	*mean = (cpu_now() - t0) / k;
	while (made > 0) /* the plans are freed outside the timing */
		fast_plan_free(&p[--made]);
	return rc;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int fast_synth_time(const struct fast_topo *t, const struct fast_matrix *mx,
		    struct fast_synth_unit *u, uint32_t n, struct fast_err *err)
{
	double x[MAX_UNITS][FAST_SYNTH_REPEATS], warm;
	int k[MAX_UNITS], rc;

	if (n > MAX_UNITS)
		return fast_err_set(err, FAST_EUSAGE, "synthesis: %u rows, at most %d", n, MAX_UNITS);
	/* each unit's warm-up, timed to size its batches (a decision's twice:
	 * its first call is the warm-up) */
	for (uint32_t j = 0; j < n; j++) {
		if (!u[j].algo && (rc = unit_batch(&u[j], t, mx, 1, &warm, err)) < 0)
			return rc;
		if ((rc = unit_batch(&u[j], t, mx, 1, &warm, err)) < 0)
			return rc;
		k[j] = batch_of(warm);
	}
	for (int r = 0; r < FAST_SYNTH_REPEATS; r++)
		for (uint32_t j = 0; j < n; j++)
			if ((rc = unit_batch(&u[j], t, mx, k[j], &x[j][r], err)) < 0)
				return rc;
	for (uint32_t j = 0; j < n; j++) {
		qsort(x[j], FAST_SYNTH_REPEATS, sizeof x[j][0], by_value);
		u[j].min_s = x[j][0];
		u[j].max_s = x[j][FAST_SYNTH_REPEATS - 1];
		u[j].median_s = x[j][FAST_SYNTH_REPEATS / 2]; /* an odd count */
	}
	return 0;
}
