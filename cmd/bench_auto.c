/*
 * bench_auto.c - `fast bench auto`: the cost of `--algo auto`'s decision
 * (fast_auto_choose, lib/compile/algo_auto.c), what every rank of `fast run --algo
 * auto` pays per matrix before it compiles.
 *
 * Cases: h200 and mi300x-100g at 4 x 8 and 16 x 8 GPUs, uniform and Zipf
 * 0.8 traffic at 4 MiB mean per GPU (seed 1).  Each row is the decision's
 * median thread-CPU time as `fast compare` reports it (decision_s,
 * eval/synth.c: 15 samples, each the mean of a batch of decisions
 * lasting at least 20 us) with [min..max] of the samples, and what was
 * chosen.  Target (issue 16): <= 1 us at 4 x 8, every case.
 */
#include <stdio.h>

#include "bench.h"
#include "cli.h"
#include "lib/workload/gen.h"
#include "fast/eval.h"
#include "lib/compile/algo_auto.h"

#define TARGET_S 1e-6

int fast_bench_auto(const struct bench_opts *o)
{
	static const char *presets[] = { "h200", "mi300x-100g" };
	static const uint32_t servers[] = { 4, 16 };
	static const enum fast_gen_pattern pats[] = { FAST_GEN_UNIFORM, FAST_GEN_ZIPF };
	static const char *pat_names[] = { "uniform", "zipf0.8" };
	bool first = true, met = true;
	double worst = 0;

	if (o->json)
		printf("{\"per_gpu_bytes\": 4194304, \"gpus_per_server\": 8, \"rows\": [");
	else
		printf("auto's decision, thread-CPU time, 4 MiB per GPU; median [min..max] of 15 samples\n"
		       "  %-12s %5s %-8s %28s  %s\n", "preset", "GPUs", "traffic", "decision us", "chosen");
	for (int pr = 0; pr < 2; pr++)
		for (int n = 0; n < (o->quick ? 1 : 2); n++)
			for (int pt = 0; pt < 2; pt++) {
				struct fast_limits lim;
				struct fast_topo t;
				struct fast_traffic tr;
				struct fast_gen_opts g;
				struct fast_err err;
				struct fast_auto_choice ch;
				struct fast_synth_unit dec = { .algo = NULL, .opts = NULL }; /* the decision */
				double med;
				fast_limits_default(&lim);
				fast_gen_defaults(&g);
				g.pattern = pats[pt];
				g.ng = servers[n] * 8;
				g.seed = 1;
				g.mean_bytes = UINT64_C(4) << 20;
				if (fast_topo_preset(presets[pr], servers[n], 8, &lim, &t, &err) < 0 ||
				    fast_gen_traffic(&g, &lim, &tr, &err) < 0)
					return cli_report(&err);
				/* the process's first measurement runs cold (measured:
				 * 1.13-1.46 us where the same case gives 0.96 later) */
				for (int run = first ? 0 : 1; run < 2; run++)
					if (fast_synth_time(&t, &tr.m[0], &dec, 1, &err) < 0) {
						fast_traffic_free(&tr);
						return cli_report(&err);
					}
				fast_auto_choose(&t, tr.m[0].bytes, NULL, &ch);
				med = dec.median_s;
				fast_traffic_free(&tr);
				if (servers[n] == 4) {
					met = met && med <= TARGET_S;
					worst = med > worst ? med : worst;
				}
				if (o->json)
					printf("%s\n  {\"preset\": \"%s\", \"servers\": %u, \"gpus_total\": %u, "
					       "\"traffic\": \"%s\", \"decision_s\": {\"median\": %.4g, \"min\": %.4g, "
					       "\"max\": %.4g}, \"chosen\": \"%s\"}",
					       first ? "" : ",", presets[pr], servers[n], g.ng, pat_names[pt], med,
					       dec.min_s, dec.max_s, ch.algo[ch.best]);
				else
					printf("  %-12s %5u %-8s %8.3f [%7.3f..%7.3f]  %s\n", presets[pr], g.ng,
					       pat_names[pt], med * 1e6, dec.min_s * 1e6, dec.max_s * 1e6,
					       ch.algo[ch.best]);
				first = false;
			}
	if (o->json)
		printf("\n], \"targets\": [{\"what\": \"decision at 32 GPUs, worst case (s)\", \"limit\": %g, "
		       "\"got\": %.4g, \"met\": %s}]}\n", TARGET_S, worst, met ? "true" : "false");
	else
		printf("  target: decision at 32 GPUs <= 1 us: %s (worst %.3f us)\n", met ? "met" : "MISSED",
		       worst * 1e6);
	return !met && o->strict ? 1 : 0;
}
