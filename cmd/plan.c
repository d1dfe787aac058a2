/*
 * plan.c - `fast plan` compiles one plan per traffic matrix with the chosen
 * algorithm (FAST or a baseline, include/fast/algo.h) and writes the plan set, each
 * plan labelled with the matrix it serves.  Thin: options in, one
 * fast_compile() per matrix, fast_planset_write() out.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "builtin.h"
#include "cli.h"
#include "cli_algo.h"
#include "fast/sim.h"

const char cmd_plan_usage[] =
	"fast plan (--topo FILE | --preset NAME [--servers N] [--gpus G])\n"
	"          [--nics K] [--nic S:K=F ...]\n"
	"          --traffic FILE [--matrix I] [--algo NAME] [options] [-o PLAN]\n"
	"\n"
	"Compile a schedule for every matrix of the traffic (or only --matrix I)\n"
	"and write the plan file (one plan per matrix, labelled as the matrix).\n"
	"\n"
	"Options (the compiler options and algorithms are listed below):\n"
	"  --algo NAME        the algorithm (default fast)\n"
	"  --transpose        schedule the transpose of each matrix (MoE combine)\n"
	"  --max-gpus N       refuse more than N GPUs in total (default 16384)\n"
	"  --max-traffic-bytes B  refuse traffic whose dense matrices need more (default 4G)\n"
	"  --max-groups N     refuse traffic of more than N token groups (default 16777216)\n"
	"  -o FILE            plan file to write (- = stdout, the default)\n";

static void summary(const struct fast_plan *p)
{
	uint32_t out = 0, up = 0;

	for (size_t s = 0; s < p->nsteps; s++)
		p->steps[s].tier == FAST_TIER_OUT ? out++ : up++;
	fprintf(stderr, "plan %s: %s, %zu steps (%u scale-out, %u scale-up), %zu lanes, %zu pieces%s%s\n",
		p->label, p->algo, p->nsteps, out, up, p->nlanes, p->npieces,
		p->options[0] ? ", " : "", p->options);
}

int cmd_plan(int argc, char **argv)
{
	struct cli_inputs in;
	struct cli_scan s;
	struct cli_out o;
	struct fast_topo topo;
	struct fast_traffic t;
	struct fast_planset ps = { 0, NULL };
	struct fast_algo_opts opts;
	struct fast_err err;
	const char *algo = "fast";
	bool transpose = false;
	unsigned given = 0;
	int rc;

	cli_inputs_init(&in);
	fast_sim_algo_opts_default(&opts);
	for (cli_begin(&s, argc, argv, "plan"); cli_more(&s);) {
		if (cli_inputs_option(&s, &in))
			continue;
		if (cli_value(&s, "--algo", &algo))
			continue;
		if (cli_algo_option(&s, &opts, &given))
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
	if ((rc = cli_algo_known("plan", "--algo", algo, NULL, 0)) != 0 ||
	    (rc = cli_algo_applies("plan", &algo, 1, given)) != 0)
		return rc;
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
		if (transpose) /* token traffic: a dispatch becomes its combine */
			fast_matrix_other_phase(&t.m[i]);
		if ((rc = fast_compile(algo, &topo, &t.m[i], &opts, p, &err)) < 0) {
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
