/*
 * main.c - the `fast` entry point: the git-style dispatch table of
 * subcommands, {name, fn, flags} with the summary `fast --help` lists and
 * the --help text.  The flags say which common inputs a command takes
 * (cli.h, enum cmd_flag): cli_inputs_option() refuses the others.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "builtin.h"
#include "cli.h"

const struct cmd fast_commands[] = {
	{ "bench", cmd_bench, 0,
	  "measure synthesis, bound and simulator performance", cmd_bench_usage },
	{ "bound", cmd_bound, CMD_TOPO | CMD_TRAFFIC | CMD_MATRIX | CMD_OUT,
	  "lower bounds on completion time (closed form, GLPK LP)", cmd_bound_usage },
	{ "calibrate", cmd_calibrate, CMD_TOPO | CMD_OUT,
	  "fit a topology to nccl-tests tables and DeepEP logs", cmd_calibrate_usage },
	{ "check", cmd_check, CMD_TOPO | CMD_TRAFFIC | CMD_MATRIX | CMD_PLAN,
	  "prove a plan correct for its traffic (exit 1 if not)", cmd_check_usage },
	{ "compare", cmd_compare, CMD_TOPO | CMD_TRAFFIC | CMD_MATRIX | CMD_ALGO,
	  "compare schedules on simulated time and the bound", cmd_compare_usage },
	{ "export", cmd_export, CMD_TRAFFIC | CMD_MATRIX | CMD_PLAN | CMD_OUT,
	  "write a plan as an MSCCL XML algorithm", cmd_export_usage },
	{ "gate", cmd_gate, CMD_TOPO | CMD_TRAFFIC | CMD_MATRIX | CMD_PLAN | CMD_ALGO,
	  "CI optimality gate: fail when time / bound exceeds a limit", cmd_gate_usage },
	{ "gen", cmd_gen, CMD_TOPO | CMD_OUT,
	  "generate synthetic traffic (uniform, random, zipf, hotspot, moe)", cmd_gen_usage },
	{ "inspect", cmd_inspect, CMD_MATRIX | CMD_PLAN | CMD_TRAFFIC,
	  "summarise a plan: steps, bytes per tier, relaying, staging", cmd_inspect_usage },
	{ "plan", cmd_plan, CMD_TOPO | CMD_TRAFFIC | CMD_MATRIX | CMD_OUT | CMD_ALGO,
	  "compile a schedule (FAST or a baseline) into a plan file", cmd_plan_usage },
	{ "run", cmd_run, CMD_TOPO | CMD_TRAFFIC | CMD_MATRIX | CMD_PLAN | CMD_STREAM,
	  "run all-to-all(v) plans under mpirun (MPI executor)", cmd_run_usage },
	{ "sim", cmd_sim, CMD_TOPO | CMD_TRAFFIC | CMD_MATRIX | CMD_PLAN | CMD_ALGO,
	  "simulate a plan on a two-tier fabric", cmd_sim_usage },
	{ "sweep", cmd_sweep, 0,
	  "what-if studies: plan, bound and simulate a spec's cases", cmd_sweep_usage },
	{ "topo", cmd_topo, CMD_TOPO | CMD_OUT,
	  "show a topology or list the presets", cmd_topo_usage },
	{ "trace", cmd_trace, 0,
	  "import real MoE routing data as traffic (trace import)", cmd_trace_usage },
	{ "traffic", cmd_traffic, CMD_TOPO | CMD_TRAFFIC | CMD_MATRIX | CMD_OUT,
	  "summarise or convert a traffic file", cmd_traffic_usage },
	{ NULL, NULL, 0, NULL, NULL },
};

static void usage(FILE *f)
{
	fputs("usage: fast <command> [options]\n"
	      "       fast help <command> | fast <command> --help | fast --version\n\n"
	      "Compile, prove, bound, simulate and run all-to-all(v) schedules on\n"
	      "two-tier GPU clusters (FAST: intra-server balancing + Birkhoff stages).\n\n"
	      "Commands:\n",
	      f);
	for (const struct cmd *c = fast_commands; c->name; c++)
		fprintf(f, "  %-10s %s\n", c->name, c->summary);
	fputs("\nCommon options: --topo FILE | --preset NAME [--servers N] [--gpus G],\n"
	      "  [--nics K] [--nic S:K=F] (K NICs per server; server S's NIC K at F of\n"
	      "  its rate, 0 = down; repeatable),\n"
	      "  --traffic FILE [--matrix I], --plan FILE, -o FILE (- = stdout), --json.\n"
	      "Exit codes: 0 ok, 1 check failed, 2 usage, 3 bad input, 4 runtime failure.\n",
	      f);
}

/* A word that names no command: exit 2, with the closest command. */
static int unknown_command(const char *word)
{
	const char *names[sizeof fast_commands / sizeof fast_commands[0]];
	const char *near;
	size_t n = 0;

	for (const struct cmd *c = fast_commands; c->name; c++)
		names[n++] = c->name;
	near = cli_suggest(word, names, n);
	if (near)
		fprintf(stderr, "fast: unknown command '%.60s'; did you mean '%s'? See 'fast --help'\n",
			word, near);
	else
		fprintf(stderr, "fast: unknown command '%.60s'; see 'fast --help'\n", word);
	return 2;
}

/* A process of this tool compiles plan after plan (fast run on the fly,
 * one per matrix; compare, sweep and gate time 15 compiles per row).  By
 * default glibc maps a block above 128 KiB afresh and unmaps it when
 * freed, and hands the heap's free top back above twice that, so a plan of
 * a few MB -- fanout's or packed FAST's at 16 x 8 -- pays its page faults
 * again on every compile: 466 us of a packed compile's 600 there, 306 us
 * of fanout's 550 (docs/algorithms.md, "Choosing the schedule").  Up to 32 MiB (glibc's
 * largest heap threshold) blocks come from the heap, and freed memory
 * stays with the process up to 1 GiB, as any warm process keeps it. */
static void keep_freed_memory(void)
{
#if defined(__GLIBC__)
	mallopt(M_MMAP_THRESHOLD, 32 << 20);
	mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
}

int main(int argc, char **argv)
{
	const struct cmd *c;

	/* a closed pipe must surface as a failed write, not a signal: it is
	 * then told from other write failures (see cli_stdout_finish) */
	signal(SIGPIPE, SIG_IGN);
	keep_freed_memory();
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(stdout);
		return cli_stdout_finish();
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
		printf("fast %s\n", FAST_VERSION);
		return cli_stdout_finish();
	}
	if (strcmp(argv[1], "help") == 0) {
		if (argc < 3) {
			usage(stdout);
			return cli_stdout_finish();
		}
		c = cli_find_command(argv[2]);
		if (!c)
			return unknown_command(argv[2]);
		cli_print_usage(c, stdout);
		return cli_stdout_finish();
	}
	c = cli_find_command(argv[1]);
	if (!c)
		return unknown_command(argv[1]);
	{
		/* a failed command leaves standard output empty: what it printed
		 * before it failed is dropped (cli_stdout_release); a command
		 * whose output is a stream of measured rows (CMD_STREAM: fast
		 * run, whose --json document is written whole at its end)
		 * writes as it goes */
		int rc;
		if (c->flags & CMD_STREAM)
			return c->fn(argc - 1, argv + 1);
		cli_stdout_hold();
		rc = c->fn(argc - 1, argv + 1);
		return cli_status(rc, cli_stdout_release(rc));
	}
}
