/*
 * bench_check.c - `fast bench check`: how the plan checker (lib/check/check.c)
 * scales with the chunks of pipelined steps, the input that once made it
 * quadratic (docs/benchmarks.md has the before and after).
 *
 * Case: a pxn plan for h200 2 x 4 GPUs, random traffic (the paper's
 * rand() % 1024, 256 MiB mean per GPU, seed 1), compiled in process; every
 * chunked step (the forwarding hops and the hops they pipeline on) is then
 * given K chunks, K = 1024 .. 65536 (FAST_PLAN_MAX_CHUNKS).  Each row is
 * the median CPU time of fast_plan_check over REPEATS runs (getrusage: on
 * a shared machine wall time measures the neighbours) and [min..max].
 * Targets: K = 65536 checks in <= 1 s, and time grows at most 1.3 times
 * as fast as K from K/4 to K (log ratio: 1 = linear, 2 = quadratic).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "bench.h"
#include "cli.h"
#include "fast/algo.h"
#include "fast/check.h"
#include "lib/workload/gen.h"

#define REPEATS 3
#define TARGET_S 1.0
#define TARGET_EXPONENT 1.3

struct row {
	uint32_t chunks;
	uint32_t steps; /* steps given the chunks */
	double cpu_s, cpu_min, cpu_max;
};

static int measure(struct row *r, struct fast_plan *p, const struct fast_topo *t,
		   const struct fast_matrix *m, unsigned repeats, struct fast_err *err)
{
	double cpu[REPEATS];
	struct bench_stats st;

	r->steps = 0;
	for (size_t s = 0; s < p->nsteps; s++)
		if (p->steps[s].chunks > 1) {
			p->steps[s].chunks = r->chunks;
			r->steps++;
		}
	for (unsigned k = 0; k < repeats; k++) {
		double c = bench_cpu_now();
		struct fast_plan_view v; /* opened in the timing: validation and expansion count */
		int rc = fast_plan_view_open(&v, p, m, err);
		if (rc == 0) {
			rc = fast_plan_check(&v, t, err);
			fast_plan_view_close(&v);
		}
		cpu[k] = bench_cpu_now() - c;
		if (rc < 0)
			return rc;
	}
	bench_stats_of(cpu, repeats, &st);
	r->cpu_s = st.median;
	r->cpu_min = st.min;
	r->cpu_max = st.max;
	return 0;
}

int fast_bench_check(const struct bench_opts *o)
{
	struct row rows[] = { { .chunks = 1024 }, { .chunks = 4096 }, { .chunks = 16384 },
			      { .chunks = FAST_PLAN_MAX_CHUNKS } };
	const size_t n = sizeof rows / sizeof rows[0];
	unsigned repeats = o->quick ? 1 : REPEATS;
	struct fast_topo t;
	struct fast_traffic tr;
	struct fast_plan p;
	struct fast_err err;
	double exponent;
	bool time_ok, growth_ok;

	if (bench_random_plan("pxn", 2, 4, &t, &tr, &p, &err) < 0) {
		fprintf(stderr, "fast bench check: %s\n", err.msg);
		return 4;
	}
	for (size_t i = 0; i < n; i++)
		if (measure(&rows[i], &p, &t, &tr.m[0], repeats, &err) < 0) {
			fprintf(stderr, "fast bench check: pxn plan with %u chunks: %s\n",
				rows[i].chunks, err.msg);
			fast_plan_free(&p);
			fast_traffic_free(&tr);
			return 4;
		}
	fast_plan_free(&p);
	fast_traffic_free(&tr);
	/* growth from K/4 to K: the last two rows; a time too small to
	 * measure cannot show growth */
	exponent = rows[n - 2].cpu_s > 0 && rows[n - 1].cpu_s > 0
		? log(rows[n - 1].cpu_s / rows[n - 2].cpu_s) /
			  log((double)rows[n - 1].chunks / rows[n - 2].chunks)
		: 0.0;
	time_ok = rows[n - 1].cpu_s <= TARGET_S;
	growth_ok = exponent <= TARGET_EXPONENT;
	if (o->json) {
		printf("{\"case\": \"pxn h200 2x4 random 256 MiB/GPU seed 1\", \"rows\": [");
		for (size_t i = 0; i < n; i++)
			printf("%s\n  {\"chunks\": %u, \"chunked_steps\": %u, \"cpu_s\": %.6f, "
			       "\"cpu_min_s\": %.6f, \"cpu_max_s\": %.6f}",
			       i ? "," : "", rows[i].chunks, rows[i].steps, rows[i].cpu_s,
			       rows[i].cpu_min, rows[i].cpu_max);
		printf("\n], \"growth_exponent\": %.4f, \"targets\": ["
		       "{\"what\": \"check at %u chunks (s)\", \"limit\": %g, \"got\": %.6f, \"met\": %s}, "
		       "{\"what\": \"growth exponent\", \"limit\": %g, \"got\": %.4f, \"met\": %s}], "
		       "\"ok\": %s}\n",
		       exponent, rows[n - 1].chunks, TARGET_S, rows[n - 1].cpu_s,
		       time_ok ? "true" : "false", TARGET_EXPONENT, exponent,
		       growth_ok ? "true" : "false", time_ok && growth_ok ? "true" : "false");
	} else {
		printf("checker (pxn plan, h200 2 x 4, random 256 MiB/GPU, seed 1; every chunked step\n"
		       "given K chunks; CPU time of fast_plan_check, median [min..max] of %u runs)\n",
		       repeats);
		printf("  %8s %14s %28s\n", "chunks", "chunked steps", "cpu s");
		for (size_t i = 0; i < n; i++)
			printf("  %8u %14u %10.4f [%.4f..%.4f]\n", rows[i].chunks, rows[i].steps,
			       rows[i].cpu_s, rows[i].cpu_min, rows[i].cpu_max);
		printf("  growth %u -> %u chunks: time ~ chunks^%.2f (1 linear, 2 quadratic)\n",
		       rows[n - 2].chunks, rows[n - 1].chunks, exponent);
		printf("  targets: %u chunks <= %g s: %s; exponent <= %g: %s\n", rows[n - 1].chunks,
		       TARGET_S, time_ok ? "ok" : "MISSED", TARGET_EXPONENT,
		       growth_ok ? "ok" : "MISSED");
	}
	return !(time_ok && growth_ok) && o->strict ? 1 : 0;
}
