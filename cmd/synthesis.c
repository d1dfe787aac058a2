/*
 * synthesis.c - the measured synthesis time of a report row (synthesis.h),
 * one definition for `fast compare`, `fast sweep` and `fast gate`.
 *
 * Reading the thread-CPU clock is a system call (about 0.6 us on the
 * machine this was written on, more under load): against a 1 us decision
 * or a 2 us baseline compile that would be most of the number.  So a
 * sample is the mean of a batch of k runs back to back, k sized from the
 * warm-up so that a batch lasts at least SAMPLE_MIN_S (k = 1 for anything
 * slower); the median is over SYNTH_REPEATS such samples.
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

int synth_median(const char *algo, const struct fast_topo *t, const struct fast_matrix *mx,
		 const struct fast_algo_opts *ao, double *med, struct fast_err *err)
{
	static struct fast_plan p[BATCH_MAX]; /* cmd/ only: one thread */
	double x[SYNTH_REPEATS], t0;
	struct bench_stats st;
	int k, rc = 0;

	t0 = bench_cpu_now(); /* a warm-up more, timed to size the batches */
	if (fast_compile_matrix(algo, t, mx, ao, &p[0], err) < 0)
		return err->code;
	k = batch_of(bench_cpu_now() - t0);
	fast_plan_free(&p[0]);
	for (int r = 0; r < SYNTH_REPEATS && rc == 0; r++) {
		int made = 0;
		t0 = bench_cpu_now();
		while (made < k && fast_compile_matrix(algo, t, mx, ao, &p[made], err) == 0)
			made++;
		x[r] = (bench_cpu_now() - t0) / k;
		if (made < k)
			rc = err->code;
		while (made > 0) /* the plans are freed outside the timing */
			fast_plan_free(&p[--made]);
	}
	if (rc < 0)
		return rc;
	bench_stats_of(x, SYNTH_REPEATS, &st);
	*med = st.median;
	return 0;
}

void synth_decision_median(const struct fast_topo *t, const uint64_t *D,
			   const struct fast_algo_opts *ao, struct fast_auto_choice *ch,
			   double *decision_s, struct bench_stats *st)
{
	double x[SYNTH_REPEATS], t0;
	struct bench_stats own;
	int k;

	fast_auto_choose(t, D, ao, ch); /* the warm-up */
	t0 = bench_cpu_now();
	fast_auto_choose(t, D, ao, ch); /* sizes the batches */
	k = batch_of(bench_cpu_now() - t0);
	for (int r = 0; r < SYNTH_REPEATS; r++) {
		t0 = bench_cpu_now();
		for (int b = 0; b < k; b++)
			fast_auto_choose(t, D, ao, ch);
		x[r] = (bench_cpu_now() - t0) / k;
	}
	if (!st)
		st = &own;
	bench_stats_of(x, SYNTH_REPEATS, st);
	*decision_s = st->median;
}

int synth_measure(const char *algo, const struct fast_topo *t, const struct fast_matrix *mx,
		  const struct fast_algo_opts *ao, double chosen_s, double *synth_s,
		  double *decision_s, struct fast_err *err)
{
	struct fast_auto_choice ch;
	double dec, s = chosen_s;
	int rc;

	if (strcmp(algo, "auto") != 0) {
		if (decision_s)
			*decision_s = 0;
		return synth_median(algo, t, mx, ao, synth_s, err);
	}
	synth_decision_median(t, mx->bytes, ao, &ch, &dec, NULL);
	if (isnan(s) && (rc = synth_median(ch.algo[ch.best], t, mx, ao, &s, err)) < 0)
		return rc;
	*synth_s = dec + s;
	if (decision_s)
		*decision_s = dec;
	return 0;
}
