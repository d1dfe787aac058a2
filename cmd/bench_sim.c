/*
 * bench_sim.c - `fast bench sim`: the simulator's performance targets
 * (the "Two-tier simulator" issue) and the error of its scalable mode.
 *
 *   case                                   target
 *   FAST plan, 1024 GPUs (h200 128x8)       <= 2 s
 *   fanout, 256 GPUs (65k flows), exact     <= 10 s
 *   fanout, 1024 GPUs (1M flows), scalable  <= 60 s
 *   scalable vs exact (fanout, where exact is feasible)  <= 1 % error
 *
 * Traffic: the `random` pattern (the paper's rand() % 1024), 256 MiB mean
 * per GPU, seed 1, generated in process.  Times are the simulation only
 * (the plan is compiled first, outside the timer), over REPEATS runs of the
 * same plan: the median and [min..max].  Targets are judged on the median
 * CPU time of the simulation (getrusage): wall time on a shared machine
 * measures the neighbours; both are printed.  --quick shrinks every case
 * (256 / 64 / 256 GPUs) and runs each once, for CI.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "bench.h"
#include "cli.h"
#include "fast/algo.h"
#include "lib/workload/gen.h"
#include "fast/sim.h"

#define SCALABLE_EPSILON 0.02
#define REPEATS 3

struct row {
	const char *what;
	const char *algo;
	uint32_t servers;
	double epsilon;
	double target_s; /* 0: none */
	/* measured: medians over the repeats, and the CPU range */
	double time_s, wall_s, cpu_s, cpu_min, cpu_max;
	uint64_t flows, events, allocs;
	double err;      /* relative to exact (scalable rows with a reference) */
	bool have_err;
	bool ok;
};

static int measure(struct row *r, unsigned repeats, struct fast_err *err)
{
	struct fast_topo t;
	struct fast_plan p;
	struct fast_sim_opts so;
	struct { double cpu[REPEATS], wall[REPEATS]; } m;
	struct bench_stats cs, ws;
	int rc = 0;

	if ((rc = bench_random_plan(r->algo, r->servers, 8, &t, NULL, &p, err)) < 0)
		return rc;
	fast_sim_opts_default(&so);
	so.epsilon = r->epsilon;
	for (unsigned k = 0; k < repeats && rc == 0; k++) {
		struct fast_sim_result res;
		struct fast_plan_view v; /* opened in the timing, as the commands do */
		double w = fast_now(), c = bench_cpu_now();
		if ((rc = fast_plan_view_open(&v, &p, NULL, err)) == 0) {
			rc = fast_sim_run(&t, &v, &so, &res, err);
			fast_plan_view_close(&v);
		}
		m.cpu[k] = bench_cpu_now() - c;
		m.wall[k] = fast_now() - w;
		if (rc < 0)
			break;
		r->time_s = res.time_s; /* the same every time: deterministic */
		r->flows = res.flows;
		r->events = res.events;
		r->allocs = res.recomputes;
		fast_sim_result_free(&res);
	}
	fast_plan_free(&p);
	if (rc < 0)
		return rc;
	bench_stats_of(m.cpu, repeats, &cs);
	bench_stats_of(m.wall, repeats, &ws);
	r->cpu_s = cs.median;
	r->cpu_min = cs.min;
	r->cpu_max = cs.max;
	r->wall_s = ws.median;
	r->ok = r->target_s <= 0 || r->cpu_s <= r->target_s;
	return 0;
}

int fast_bench_sim(const struct bench_opts *o)
{
	/* servers of 8 GPUs: FAST at 1024, fanout exact at 256, fanout
	 * scalable at 1024; then scalable vs exact on two sizes */
	struct row rows[] = {
		{ .what = "FAST plan", .algo = "fast", .servers = o->quick ? 32 : 128, .epsilon = 0.0, .target_s = 2.0 },
		{ .what = "fanout exact", .algo = "fanout", .servers = o->quick ? 8 : 32, .epsilon = 0.0, .target_s = 10.0 },
		{ .what = "fanout scalable", .algo = "fanout", .servers = o->quick ? 16 : 128, .epsilon = SCALABLE_EPSILON, .target_s = 60.0 },
		{ .what = "fanout exact (ref)", .algo = "fanout", .servers = o->quick ? 4 : 16, .epsilon = 0.0, .target_s = 0.0 },
		{ .what = "fanout scalable", .algo = "fanout", .servers = o->quick ? 4 : 16, .epsilon = SCALABLE_EPSILON, .target_s = 0.0 },
		{ .what = "fanout scalable", .algo = "fanout", .servers = o->quick ? 8 : 32, .epsilon = SCALABLE_EPSILON, .target_s = 0.0 },
	};
	const size_t n = sizeof rows / sizeof rows[0];
	struct fast_err err;
	bool all_ok = true;

	for (size_t i = 0; i < n; i++) {
		if (measure(&rows[i], o->quick ? 1 : REPEATS, &err) < 0) {
			fprintf(stderr, "fast bench sim: %s at %u GPUs: %s\n", rows[i].what,
				rows[i].servers * 8, err.msg);
			return 4;
		}
	}
	/* errors of the scalable rows against the exact run of the same size */
	for (size_t i = 0; i < n; i++) {
		if (rows[i].epsilon <= 0)
			continue;
		for (size_t j = 0; j < n; j++)
			if (rows[j].epsilon <= 0 && rows[j].servers == rows[i].servers &&
			    strcmp(rows[j].algo, rows[i].algo) == 0) {
				rows[i].err = (rows[i].time_s - rows[j].time_s) / rows[j].time_s;
				rows[i].have_err = true;
				if (rows[i].err > 0.01 || rows[i].err < -0.01)
					rows[i].ok = false;
			}
	}
	for (size_t i = 0; i < n; i++)
		all_ok &= rows[i].ok;

	if (o->json) {
		printf("{\"epsilon\": %g, \"rows\": [", SCALABLE_EPSILON);
		for (size_t i = 0; i < n; i++) {
			const struct row *r = &rows[i];
			printf("%s\n  {\"case\": \"%s\", \"algo\": \"%s\", \"gpus_total\": %u, \"epsilon\": %g, "
			       "\"sim_time_s\": %.9g, \"cpu_s\": %.4f, \"cpu_min_s\": %.4f, \"cpu_max_s\": %.4f, "
			       "\"wall_s\": %.4f, \"flows\": %llu, "
			       "\"events\": %llu, \"allocations\": %llu, \"flows_per_s\": %.0f, ",
			       i ? "," : "", r->what, r->algo, r->servers * 8, r->epsilon, r->time_s,
			       r->cpu_s, r->cpu_min, r->cpu_max, r->wall_s, (unsigned long long)r->flows,
			       (unsigned long long)r->events, (unsigned long long)r->allocs,
			       r->cpu_s > 0 ? r->flows / r->cpu_s : 0.0);
			if (r->target_s > 0)
				printf("\"target_s\": %g, ", r->target_s);
			if (r->have_err)
				printf("\"error_vs_exact\": %.6g, ", r->err);
			printf("\"ok\": %s}", r->ok ? "true" : "false");
		}
		printf("\n], \"ok\": %s}\n", all_ok ? "true" : "false");
	} else {
		printf("simulator (h200, random 256 MiB/GPU, seed 1; CPU time of the simulation, median\n"
		       "[min..max] of %u runs, and the median wall time)\n", o->quick ? 1 : REPEATS);
		printf("  %-20s %6s %8s %22s %9s %9s %9s %12s %8s %7s %s\n", "case", "GPUs", "epsilon",
		       "cpu s", "(wall s)", "flows", "allocs", "flows/s", "target", "error", "");
		for (size_t i = 0; i < n; i++) {
			const struct row *r = &rows[i];
			char tgt[16] = "-", er[16] = "-";
			if (r->target_s > 0)
				snprintf(tgt, sizeof tgt, "<=%gs", r->target_s);
			if (r->have_err)
				snprintf(er, sizeof er, "%+.3f%%", 100 * r->err);
			char cpu[48];
			snprintf(cpu, sizeof cpu, "%.3f [%.3f..%.3f]", r->cpu_s, r->cpu_min, r->cpu_max);
			printf("  %-20s %6u %8g %22s %9.3f %9llu %9llu %12.0f %8s %7s %s\n", r->what,
			       r->servers * 8, r->epsilon, cpu, r->wall_s,
			       (unsigned long long)r->flows, (unsigned long long)r->allocs,
			       r->cpu_s > 0 ? r->flows / r->cpu_s : 0.0, tgt, er,
			       r->ok ? "ok" : "MISSED");
		}
	}
	return !all_ok && o->strict ? 1 : 0;
}
