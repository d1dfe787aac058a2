/*
 * plan.c - `fast plan` compiles one plan per traffic matrix with the chosen
 * algorithm (FAST or a baseline, lib/algo.h) and writes the plan set, each
 * plan labelled with the matrix it serves.  Thin: options in, one
 * fast_compile() per matrix, fast_planset_write() out.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "lib/algo.h"

static const char usage[] =
	"fast plan (--topo FILE | --preset NAME [--servers N] [--gpus G])\n"
	"          --traffic FILE [--matrix I] [--algo NAME] [options] [-o PLAN]\n"
	"\n"
	"Compile a schedule for every matrix of the traffic (or only --matrix I)\n"
	"and write the plan file (one plan per matrix, labelled as the matrix).\n"
	"\n"
	"Options:\n"
	"  --algo NAME        fast (default), fanout, nccl, pxn, spreadout, hier\n"
	"  --stages MODE      fast: auto (default: alpha-aware, fewer larger stages\n"
	"                     when the topology's per-stage cost makes them pay;\n"
	"                     exact when exact wins) or exact (Birkhoff decomposition)\n"
	"  --order ORDER      fast: largest-first (default), smallest-first or\n"
	"                     decomposition: the order of the rail stages\n"
	"  --balance MODE     fast: jit (default: the tiles stage 1 needs are\n"
	"                     balanced first, the rest while stage 1 runs) or\n"
	"                     upfront (all balancing before stage 1, as the paper)\n"
	"  --peers K          nccl/pxn: peers in flight per round (default 8)\n"
	"  --chunk BYTES      pxn/hier: forwarding chunk (e.g. 512K; default: the\n"
	"                     algorithm's own)\n"
	"  --transpose        schedule the transpose of each matrix (MoE combine)\n"
	"  --max-gpus N       refuse more than N GPUs in total (default 16384)\n"
	"  --max-traffic-bytes B  refuse traffic whose dense matrices need more (default 4G)\n"
	"  -o FILE            plan file to write (- = stdout, the default)\n";

static int pick(const char *what, const char *val, const char *const *names, int *out)
{
	for (int k = 0; names[k]; k++)
		if (strcmp(val, names[k]) == 0) {
			*out = k;
			return 0;
		}
	return cli_usage_error("plan", "%s: unknown value '%.40s'", what, val);
}

static void summary(const struct fast_plan *p)
{
	uint32_t out = 0, up = 0;

	for (size_t s = 0; s < p->nsteps; s++)
		p->steps[s].tier == FAST_TIER_OUT ? out++ : up++;
	fprintf(stderr, "plan %s: %s, %zu steps (%u scale-out, %u scale-up), %zu lanes, %zu pieces%s%s\n",
		p->label, p->algo, p->nsteps, out, up, p->nlanes, p->npieces,
		p->options[0] ? ", " : "", p->options);
}

static int run(int argc, char **argv)
{
	static const char *const stages[] = { "auto", "exact", NULL };
	static const char *const orders[] = { "decomposition", "largest-first", "smallest-first",
					      NULL };
	static const char *const balances[] = { "upfront", "jit", NULL };
	struct cli_inputs in;
	struct cli_scan s;
	struct cli_out o;
	struct fast_topo topo;
	struct fast_traffic t;
	struct fast_planset ps = { 0, NULL };
	struct fast_algo_opts opts;
	struct fast_err err;
	const char *algo = "fast", *v;
	bool transpose = false, fast_only = false;
	int rc, k = 0;

	cli_inputs_init(&in);
	fast_algo_opts_default(&opts);
	for (cli_begin(&s, argc, argv, "plan"); cli_more(&s);) {
		if (cli_inputs_option(&s, &in))
			continue;
		if (cli_value(&s, "--algo", &algo))
			continue;
		if (cli_value(&s, "--stages", &v)) {
			if (!s.failed && pick("--stages", v, stages, &k))
				return 2;
			opts.stages = k ? FAST_STAGES_EXACT : FAST_STAGES_AUTO;
			fast_only = true;
			continue;
		}
		if (cli_value(&s, "--order", &v)) {
			/* `fast sim`/`compare` spell them largest / smallest */
			if (!s.failed && strcmp(v, "largest") == 0)
				v = "largest-first";
			else if (!s.failed && strcmp(v, "smallest") == 0)
				v = "smallest-first";
			if (!s.failed && pick("--order", v, orders, &k))
				return 2;
			opts.order = (enum fast_stage_order)k;
			fast_only = true;
			continue;
		}
		if (cli_value(&s, "--balance", &v)) {
			if (!s.failed && pick("--balance", v, balances, &k))
				return 2;
			opts.balance = k ? FAST_BALANCE_JIT : FAST_BALANCE_UPFRONT;
			fast_only = true;
			continue;
		}
		if (cli_u32(&s, "--peers", 1, 1u << 20, &opts.peers) ||
		    cli_size(&s, "--chunk", &opts.chunk_bytes))
			continue;
		if (cli_flag(&s, "--transpose")) {
			transpose = true;
			continue;
		}
		return cli_unknown(&s);
	}
	if (s.help)
		return 0;
	if ((rc = cli_end(&s, false)) >= 0)
		return rc;
	if (in.plan_path)
		return cli_usage_error("plan", "--plan does not apply here (plan writes one: -o)");
	if (!fast_algo_known(algo))
		return cli_usage_error("plan", "--algo: unknown algorithm '%.40s' (known: fast, "
					       "fanout, nccl, pxn, spreadout, hier)", algo);
	if (fast_only && strcmp(algo, "fast") != 0)
		return cli_usage_error("plan", "--stages, --order and --balance apply to --algo fast");
	if ((rc = cli_load_topo(&in, &topo)) != 0)
		return rc;
	if ((rc = cli_load_traffic(&in, &topo, &t)) != 0)
		return rc;
	if ((rc = cli_out_open(&o, in.out_path)) != 0) {
		fast_traffic_free(&t);
		return rc;
	}
	ps.plans = fast_calloc(t.count ? t.count : 1, sizeof *ps.plans);
	if (!ps.plans) {
		cli_out_abort(&o);
		fast_traffic_free(&t);
		return cli_fail(FAST_ENOMEM, "plan: out of memory");
	}
	for (uint32_t i = 0; i < t.count; i++) {
		struct fast_plan *p = &ps.plans[i];
		if ((transpose && (rc = fast_matrix_transpose(t.m[i].bytes, t.ng, &err)) < 0) ||
		    (rc = fast_compile(algo, &topo, t.m[i].bytes, &opts, p, &err)) < 0) {
			fast_err_prefix(&err, "%s: matrix %u (%s)", in.traffic_path,
					in.matrix >= 0 ? (uint32_t)in.matrix : i, t.m[i].label);
			cli_out_abort(&o);
			fast_planset_free(&ps);
			fast_traffic_free(&t);
			return cli_report(&err);
		}
		ps.count = i + 1;
		snprintf(p->label, sizeof p->label, "%s", t.m[i].label);
		p->matrix = in.matrix >= 0 ? (uint32_t)in.matrix : i;
		if (isatty(STDERR_FILENO))
			summary(p);
	}
	fast_traffic_free(&t);
	if (fast_planset_write(&ps, o.f, &err) < 0) {
		fast_planset_free(&ps);
		return cli_out_fail(&o, &err);
	}
	fast_planset_free(&ps);
	return cli_out_commit(&o);
}

const struct cmd fast_cmd_plan = { "plan", run, "compile a schedule (FAST or a baseline) into a plan file",
				   usage };
