/*
 * synthesis.c - the measured synthesis time of a report row (synthesis.h),
 * one definition for `fast compare`, `fast sweep` and `fast gate`.
 */
#include <math.h>
#include <string.h>

#include "bench.h"
#include "synthesis.h"

int synth_median(const char *algo, const struct fast_topo *t, const uint64_t *D,
		 const struct fast_algo_opts *ao, double *med, struct fast_err *err)
{
	double x[SYNTH_REPEATS];
	struct bench_stats st;

	for (int r = 0; r < SYNTH_REPEATS; r++) {
		struct fast_plan p;
		double t0 = bench_cpu_now();
		if (fast_compile(algo, t, D, ao, &p, err) < 0)
			return err->code;
		x[r] = bench_cpu_now() - t0;
		fast_plan_free(&p);
	}
	bench_stats_of(x, SYNTH_REPEATS, &st);
	*med = st.median;
	return 0;
}

void synth_decision_median(const struct fast_topo *t, const uint64_t *D,
			   const struct fast_algo_opts *ao, struct fast_auto_choice *ch,
			   double *decision_s)
{
	double x[SYNTH_REPEATS];
	struct bench_stats st;

	fast_auto_choose(t, D, ao, ch);
	for (int r = 0; r < SYNTH_REPEATS; r++) {
		double t0 = bench_cpu_now();
		fast_auto_choose(t, D, ao, ch);
		x[r] = bench_cpu_now() - t0;
	}
	bench_stats_of(x, SYNTH_REPEATS, &st);
	*decision_s = st.median;
}

int synth_measure(const char *algo, const struct fast_topo *t, const uint64_t *D,
		  const struct fast_algo_opts *ao, double chosen_s, double *synth_s,
		  double *decision_s, struct fast_err *err)
{
	struct fast_auto_choice ch;
	double dec, s = chosen_s;
	int rc;

	if (strcmp(algo, "auto") != 0) {
		if (decision_s)
			*decision_s = 0;
		return synth_median(algo, t, D, ao, synth_s, err);
	}
	synth_decision_median(t, D, ao, &ch, &dec);
	if (isnan(s) && (rc = synth_median(ch.algo[ch.best], t, D, ao, &s, err)) < 0)
		return rc;
	*synth_s = dec + s;
	if (decision_s)
		*decision_s = dec;
	return 0;
}
