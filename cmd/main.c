/*
 * main.c - the `fast` entry point: a git-style dispatch table of
 * subcommands.  Each cmd/<name>.c defines `const struct cmd fast_cmd_<name>`;
 * the build generates the table (build/.../cmd_table.h) from the files
 * present, so adding a subcommand is adding one file.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

#define X(name) extern const struct cmd fast_cmd_##name;
#include "cmd_table.h"
#undef X

const struct cmd *const fast_commands[] = {
#define X(name) &fast_cmd_##name,
#include "cmd_table.h"
#undef X
	NULL,
};

static void usage(FILE *f)
{
	fputs("usage: fast <command> [options]\n"
	      "       fast help <command> | fast <command> --help | fast --version\n\n"
	      "Compile, prove, bound, simulate and run all-to-all(v) schedules on\n"
	      "two-tier GPU clusters (FAST: intra-server balancing + Birkhoff stages).\n\n"
	      "Commands:\n",
	      f);
	for (const struct cmd *const *c = fast_commands; *c; c++)
		fprintf(f, "  %-10s %s\n", (*c)->name, (*c)->summary);
	fputs("\nCommon options: --topo FILE | --preset NAME [--servers N] [--gpus G],\n"
	      "  --traffic FILE [--matrix I], --plan FILE, -o FILE (- = stdout), --json.\n"
	      "Exit codes: 0 ok, 1 check failed, 2 usage, 3 bad input, 4 runtime failure.\n",
	      f);
}

int main(int argc, char **argv)
{
	const struct cmd *c;

	/* a closed pipe must surface as a failed write, not a signal: it is
	 * then told from other write failures (see cli_stdout_finish) */
	signal(SIGPIPE, SIG_IGN);
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
		if (!c) {
			fprintf(stderr, "fast: unknown command '%.60s'; see 'fast --help'\n", argv[2]);
			return 2;
		}
		fputs(c->usage, stdout);
		return cli_stdout_finish();
	}
	c = cli_find_command(argv[1]);
	if (!c) {
		fprintf(stderr, "fast: unknown command '%.60s'; see 'fast --help'\n", argv[1]);
		return 2;
	}
	{
		int rc = c->fn(argc - 1, argv + 1);
		return cli_status(rc, cli_stdout_finish());
	}
}
