/*
 * bench_bound.c - `fast bench bound`: how long the lower bounds take
 * (include/fast/bound.h) from 64 to 4096 GPUs (8 per server), on a switch (h200
 * preset) and a mesh (mi300x preset), on the paper's skewed traffic (Zipf
 * 0.8) and on hot receivers (hotspot: 1 GPU in 16 takes half of every
 * GPU's bytes, so that ingress relaying over scale-up is in play), 64 MiB
 * per GPU; each topology also with its scale-up slowed to the NIC line
 * rate, where most servers' LPs must be solved.  Reports medians over repeats of the GLPK part
 * (build + per-server solves) and of the whole computation (which adds the
 * O(NG^2) pass over the matrix), and the target: the whole bound within
 * 1 s at 4096 GPUs on one core.
 */
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"
#include "cli.h"
#include "fast/bound.h"
#include "lib/workload/gen.h"
#include "lib/base/json.h"

#define TARGET_S 1.0
#define TARGET_GPUS 4096u

struct row {
	uint32_t gpus;
	const char *traffic;
	const char *preset;
	const char *kind;
	bool slow;        /* scale-up slowed to the NIC line rate */
	uint32_t lps;
	double ratio;
	struct bench_stats solve, total;
};

static int measure(const struct fast_topo *t, const uint64_t *D, int reps, struct row *r,
		   struct fast_err *err)
{
	struct fast_matrix m = fast_matrix_of(D, fast_topo_ngpus(t));
	double solve[16], total[16];
	struct fast_bound b;

	for (int i = 0; i < reps; i++) {
		double t0 = fast_now();
		int rc = fast_bound_compute(t, &m, false, &b, err);
		if (rc < 0)
			return rc;
		total[i] = fast_now() - t0;
		solve[i] = b.solve_s;
	}
	r->lps = b.lps_solved;
	r->ratio = b.closed_s > 0 ? b.lp_s / b.closed_s : 0;
	bench_stats_of(solve, (size_t)reps, &r->solve);
	bench_stats_of(total, (size_t)reps, &r->total);
	return 0;
}

int fast_bench_bound(const struct bench_opts *o)
{
	static const uint32_t sizes_full[] = { 64, 256, 1024, 4096 };
	static const uint32_t sizes_quick[] = { 64, 256 };
	static const char *const presets[] = { "h200", "mi300x" };
	/* as the preset, then with scale-up slowed to the NIC's line rate:
	 * relaying costs, the per-server upper bounds are loose, and most
	 * servers' LPs must be solved (the solver's worst case here) */
	const uint32_t *sizes = o->quick ? sizes_quick : sizes_full;
	size_t nsizes = o->quick ? 2 : 4;
	int reps = o->quick ? 3 : 5;
	struct row rows[32];
	size_t nrows = 0;
	struct fast_limits lim;
	struct fast_err err;
	bool met = true, measured_target = false;

	fast_limits_default(&lim);
	for (size_t z = 0; z < nsizes; z++)
		for (int pat = 0; pat < 2; pat++) {
			struct fast_gen_opts g;
			struct fast_traffic tr;

			fast_gen_defaults(&g);
			g.ng = sizes[z];
			g.seed = 1;
			if (pat == 0) {
				g.pattern = FAST_GEN_ZIPF;
				g.skew = 0.8;
			} else {
				g.pattern = FAST_GEN_HOTSPOT;
				g.hot = sizes[z] / 16;
				g.fraction = 0.5;
			}
			if (fast_gen_traffic(&g, &lim, &tr, &err) < 0)
				return cli_report(&err);
			for (size_t k = 0; k < 4; k++) {
				struct fast_topo t;
				struct row *r = &rows[nrows];
				if (fast_topo_preset(presets[k % 2], sizes[z] / 8, 8, &lim, &t, &err) < 0) {
					fast_traffic_free(&tr);
					return cli_report(&err);
				}
				r->slow = k >= 2;
				if (r->slow)
					t.up.bw_GBps = t.out.bw_GBps;
				if (measure(&t, tr.m[0].bytes, reps, r, &err) < 0) {
					fast_traffic_free(&tr);
					return cli_report(&err);
				}
				r->gpus = sizes[z];
				r->traffic = pat == 0 ? "zipf" : "hotspot";
				r->preset = presets[k % 2];
				r->kind = t.up_kind == FAST_UP_MESH ? "mesh" : "switch";
				if (r->gpus == TARGET_GPUS) {
					measured_target = true;
					if (r->total.median > TARGET_S)
						met = false;
				}
				nrows++;
			}
			fast_traffic_free(&tr);
		}

	if (o->json) {
		printf("{\"traffic\": {\"zipf\": \"skew 0.8\", \"hotspot\": \"1 in 16 GPUs hot, fraction 0.5\", "
		       "\"mean_bytes\": 67108864, \"seed\": 1}, \"repeats\": %d, "
		       "\"target\": {\"gpus_total\": %u, \"total_s\": ",
		       reps, TARGET_GPUS);
		fast_json_put_double(stdout, TARGET_S);
		printf(", \"met\": %s}, \"results\": [", measured_target ? (met ? "true" : "false") : "null");
		for (size_t i = 0; i < nrows; i++) {
			const struct row *r = &rows[i];
			printf("%s{\"gpus_total\": %u, \"traffic\": \"%s\", \"preset\": \"%s\", "
			       "\"scale_up\": \"%s\", \"scale_up_at_nic_rate\": %s, \"lps\": %u, "
			       "\"lp_over_closed\": ",
			       i ? ", " : "", r->gpus, r->traffic, r->preset, r->kind,
			       r->slow ? "true" : "false", r->lps);
			fast_json_put_double(stdout, r->ratio);
			printf(", \"solve_s\": {\"median\": ");
			fast_json_put_double(stdout, r->solve.median);
			printf(", \"min\": ");
			fast_json_put_double(stdout, r->solve.min);
			printf(", \"max\": ");
			fast_json_put_double(stdout, r->solve.max);
			printf("}, \"total_s\": {\"median\": ");
			fast_json_put_double(stdout, r->total.median);
			printf(", \"min\": ");
			fast_json_put_double(stdout, r->total.min);
			printf(", \"max\": ");
			fast_json_put_double(stdout, r->total.max);
			printf("}}");
		}
		printf("]}");
	} else {
		printf("lower bounds: 64 MiB per GPU (zipf 0.8; hotspot 1/16 hot, 0.5), 8 GPUs per "
		       "server, median of %d runs\n", reps);
		printf("(scaleup 'slow': scale-up bandwidth lowered to the NIC line rate)\n");
		printf("%6s  %-8s %-7s %-12s %5s %10s %12s %12s\n", "gpus", "traffic", "preset",
		       "scaleup", "lps", "lp/closed", "glpk_ms", "total_ms");
		for (size_t i = 0; i < nrows; i++) {
			const struct row *r = &rows[i];
			char kind[16];
			snprintf(kind, sizeof kind, "%s%s", r->kind, r->slow ? " slow" : "");
			printf("%6u  %-8s %-7s %-12s %5u %10.4f %12.3f %12.3f\n", r->gpus, r->traffic,
			       r->preset, kind, r->lps, r->ratio, r->solve.median * 1e3,
			       r->total.median * 1e3);
		}
		if (measured_target)
			printf("target: whole bound <= %.1f s at %u GPUs: %s\n", TARGET_S, TARGET_GPUS,
			       met ? "met" : "MISSED");
	}
	return !met && o->strict ? 1 : 0;
}
