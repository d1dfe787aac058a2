/*
 * bench_stats.c - how the tool measures itself: the thread-CPU clock,
 * peak memory and the statistics of a handful of samples, for `fast
 * bench` (the synthesis_s column of compare, sweep and gate is measured
 * by eval/synth.c).
 */
#include <sys/resource.h>
#include <time.h>

#include "bench.h"
#include "fast/common.h"

void bench_stats_of(double *x, size_t n, struct bench_stats *st)
{
	/* insertion sort: n is a handful of repeats */
	for (size_t i = 1; i < n; i++) {
		double v = x[i];
		size_t j = i;
		while (j > 0 && x[j - 1] > v) {
			x[j] = x[j - 1];
			j--;
		}
		x[j] = v;
	}
	st->min = x[0];
	st->max = x[n - 1];
	st->median = n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
	st->q1 = x[(n - 1) / 4];
	st->q3 = x[(3 * (n - 1) + 3) / 4 < n ? (3 * (n - 1) + 3) / 4 : n - 1];
}

unsigned long long bench_peak_rss(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return 0;
	return (unsigned long long)ru.ru_maxrss * 1024ull; /* Linux: KiB */
}

double bench_cpu_now(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return fast_now();
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
