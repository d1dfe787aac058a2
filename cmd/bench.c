/*
 * bench.c - `fast bench plan|bound|sim|check|auto|all`: the shared benchmark harness.
 * It parses the options, runs the sections of bench.h in order and wraps
 * their output (a heading per section for humans; one JSON object keyed by
 * section with --json).  The sections live in cmd/bench_<name>.c.
 */
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "builtin.h"
#include "cli.h"
#include "fast/algo.h"
#include "lib/workload/gen.h"

static const struct bench_section sections[] = {
	{ "plan", fast_bench_plan, "synthesis: decomposition, compile, expansion; alpha-aware stages" },
	{ "bound", fast_bench_bound, "lower bounds: closed form and LP solve times" },
	{ "sim", fast_bench_sim, "simulator: events per second, plans of growing size" },
	{ "check", fast_bench_check, "plan checker: time against the chunks of pipelined steps" },
	{ "auto", fast_bench_auto, "--algo auto: the decision's cost per matrix" },
};

#define NSECTIONS (sizeof sections / sizeof sections[0])

const char cmd_bench_usage[] =
	"fast bench plan|bound|sim|check|auto|all [--quick] [--json] [--strict]\n"
	"\n"
	"Measure the toolchain on this machine (one core) and print the results:\n"
	"  plan   synthesis times (decomposition, whole compile, expansion per\n"
	"         piece) for 4..512 servers x 8 GPUs, random and Zipf(0.8)\n"
	"         traffic, exact and alpha-aware stages; the alpha-aware report\n"
	"         at 1024 GPUs; peak memory at 4096 GPUs\n"
	"  bound  lower-bound computation times\n"
	"  sim    simulator throughput\n"
	"  check  plan checker time against chunks (pxn, 1024..65536 chunks)\n"
	"  auto   the cost of --algo auto's decision at 4 x 8 and 16 x 8 GPUs\n"
	"  all    every section\n"
	"\n"
	"Options:\n"
	"  --quick    small sizes and few repeats (CI)\n"
	"  --json     one JSON object keyed by section on stdout\n"
	"  --strict   exit 1 when a stated performance target is missed\n";

int bench_random_plan(const char *algo, uint32_t servers, uint32_t gpus, struct fast_topo *t,
		      struct fast_traffic *tr, struct fast_plan *p, struct fast_err *err)
{
	struct fast_limits lim;
	struct fast_gen_opts g;
	struct fast_traffic own;
	struct fast_algo_opts ao;
	int rc;

	fast_limits_default(&lim);
	if ((rc = fast_topo_preset("h200", servers, gpus, &lim, t, err)) < 0)
		return rc;
	fast_gen_defaults(&g);
	g.pattern = FAST_GEN_RANDOM;
	g.ng = fast_topo_ngpus(t);
	g.seed = 1;
	g.mean_bytes = UINT64_C(256) << 20;
	if (!tr)
		tr = &own;
	if ((rc = fast_gen_traffic(&g, &lim, tr, err)) < 0)
		return rc;
	fast_algo_opts_default(&ao);
	struct fast_matrix mx = fast_matrix_of(tr->m[0].bytes, fast_topo_ngpus(t));
	rc = fast_compile(algo, t, &mx, &ao, p, err);
	if (rc < 0 || tr == &own)
		fast_traffic_free(tr);
	return rc;
}

int cmd_bench(int argc, char **argv)
{
	struct bench_opts o = { false, false, false };
	struct cli_scan s;
	int end;
	const char *what;
	int worst = 0, n = 0;

	for (cli_begin(&s, argc, argv, "bench"); cli_more(&s);) {
		if (cli_flag(&s, "--quick")) {
			o.quick = true;
			continue;
		}
		if (cli_flag(&s, "--json")) {
			o.json = true;
			continue;
		}
		if (cli_flag(&s, "--strict")) {
			o.strict = true;
			continue;
		}
		return cli_unknown(&s);
	}
	if ((end = cli_end(&s, true)) >= 0)
		return end;
	if (s.npos != 1)
		return cli_usage_error("bench", "give one section: plan, bound, sim, check or all");
	what = s.pos[0];
	if (strcmp(what, "all") != 0) {
		size_t k = 0;
		while (k < NSECTIONS && strcmp(what, sections[k].name) != 0)
			k++;
		if (k == NSECTIONS)
			return cli_usage_error("bench", "unknown section '%.40s' (plan, bound, sim, check, all)",
					       what);
	}
	if (o.json)
		fputs("{", stdout);
	for (size_t k = 0; k < NSECTIONS; k++) {
		int rc;
		if (strcmp(what, "all") != 0 && strcmp(what, sections[k].name) != 0)
			continue;
		if (o.json)
			printf("%s\n\"%s\": ", n ? "," : "", sections[k].name);
		else
			printf("%s== %s: %s ==\n", n ? "\n" : "", sections[k].name, sections[k].summary);
		fflush(stdout);
		rc = sections[k].fn(&o);
		n++;
		if (rc > worst)
			worst = rc;
		if (rc == 4 || rc == 2 || rc == 3)
			break; /* main.c drops what was printed */
	}
	if (o.json)
		fputs("\n}\n", stdout);
	return worst;
}
