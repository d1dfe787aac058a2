/*
 * synthesis.c - the measured synthesis time of a report row (synthesis.h),
 * one definition for `fast compare`, `fast sweep` and `fast gate`.
 *
 * Reading the thread-CPU clock is a system call (about 0.6 us on the
 * machine this was written on, more under load): against a 1 us decision
 * or a 2 us baseline compile that would be most of the number.  So a
 * sample is the mean of a batch of k runs back to back, k sized from the
 * warm-up so that a batch lasts at least SAMPLE_MIN_S (k = 1 for anything
 * slower); the median is over SYNTH_REPEATS such samples.  The rows of
 * one report are sampled in turn (synth_units), so that their ratios are
 * measured side by side: a process here can change speed by 1.2-1.7x
 * mid-run (docs/algorithms.md, "Choosing the schedule"), which measured one schedule
 * after another would put on some rows and not on others.
 */
#include <math.h>
#include <string.h>

#include "bench.h"
#include "synthesis.h"

#define SAMPLE_MIN_S 20e-6
#define BATCH_MAX 64

/* Runs in a batch after a warm-up that took warm_s. */
static int batch_of(double warm_s)
{
	double k = warm_s > 0 ? ceil(SAMPLE_MIN_S / warm_s) : BATCH_MAX;
	return k < 1 ? 1 : k > BATCH_MAX ? BATCH_MAX : (int)k;
}

/* One unit's batch: k compiles (or decisions) back to back; returns the
 * mean seconds of one, or a negative FAST_E* code with err set. */
static int unit_batch(const struct synth_unit *u, const struct fast_topo *t,
		      const struct fast_matrix *mx, int k, double *mean, struct fast_err *err)
{
	static struct fast_plan p[BATCH_MAX]; /* cmd/ only: one thread */
	struct fast_auto_choice ch;
	double t0 = bench_cpu_now();
	int made = 0, rc = 0;

	if (!u->algo) {
		for (int b = 0; b < k && rc == 0; b++)
			rc = fast_auto_choose_matrix(t, mx, u->ao, &ch, NULL, err);
	} else {
		while (made < k && fast_compile_matrix(u->algo, t, mx, u->ao, &p[made], err) == 0)
			made++;
		if (made < k)
			rc = err->code;
	}
	*mean = (bench_cpu_now() - t0) / k;
	while (made > 0) /* the plans are freed outside the timing */
		fast_plan_free(&p[--made]);
	return rc;
}

int synth_units(const struct fast_topo *t, const struct fast_matrix *mx, struct synth_unit *u,
		uint32_t n, struct fast_err *err)
{
	enum { MAX_UNITS = 64 };
	double x[MAX_UNITS][SYNTH_REPEATS], warm;
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
	/* sample r of every unit in turn: a change of the machine's speed
	 * during the run falls on every unit alike */
	for (int r = 0; r < SYNTH_REPEATS; r++)
		for (uint32_t j = 0; j < n; j++)
			if ((rc = unit_batch(&u[j], t, mx, k[j], &x[j][r], err)) < 0)
				return rc;
	for (uint32_t j = 0; j < n; j++) {
		bench_stats_of(x[j], SYNTH_REPEATS, &u[j].st);
		u[j].median_s = u[j].st.median;
	}
	return 0;
}

int synth_measure(const char *algo, const struct fast_topo *t, const struct fast_matrix *mx,
		  const struct fast_algo_opts *ao, double *synth_s, double *decision_s,
		  struct fast_err *err)
{
	struct synth_unit u[2] = { { .algo = algo, .ao = ao }, { .algo = NULL, .ao = ao } };
	bool is_auto = strcmp(algo, "auto") == 0;
	struct fast_auto_choice ch;
	struct fast_algo_opts chosen;
	int rc;

	if (decision_s)
		*decision_s = 0;
	if (is_auto) { /* the decision and the chosen (with its dedup) side by side */
		if ((rc = fast_auto_choose_matrix(t, mx, ao, &ch, NULL, err)) < 0)
			return rc;
		fast_auto_opts_of(&ch, ch.best, ao, &chosen);
		u[0].algo = ch.algo[ch.best];
		u[0].ao = &chosen;
	}
	if (is_auto && ch.evaluated) { /* the decision compiles the chosen too */
		if ((rc = synth_units(t, mx, &u[1], 1, err)) < 0)
			return rc;
		*synth_s = u[1].median_s;
		if (decision_s)
			*decision_s = u[1].median_s;
		return 0;
	}
	if ((rc = synth_units(t, mx, u, is_auto ? 2 : 1, err)) < 0)
		return rc;
	*synth_s = u[0].median_s + (is_auto ? u[1].median_s : 0);
	if (is_auto && decision_s)
		*decision_s = u[1].median_s;
	return 0;
}
