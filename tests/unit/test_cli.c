/*
 * test_cli.c - the option scanner every subcommand shares (cmd/cli.c):
 * both value spellings, typed values and their ranges, positionals,
 * --help, and that a malformed value is a usage error, never a value.
 * The scanner prints its usage errors on stderr; these tests pin the
 * outcome (s.failed, exit status of cli_end), the golden tests the text.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cli.h"
#include "cmd/cli_algo.h"
#include "unit.h"

static int noop(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

const struct cmd fast_commands[] = {
	{ "tcmd", noop, CMD_TOPO | CMD_TRAFFIC | CMD_MATRIX | CMD_PLAN | CMD_OUT, "a test command",
	  "fast tcmd [--x N]\n" },
	{ "ncmd", noop, CMD_TOPO, "takes a topology only", "fast ncmd --preset NAME\n" },
	{ NULL, NULL, 0, NULL, NULL },
};

/* Scan argv (NULL-terminated, argv[0] the command name) with a fixed set
 * of options; returns cli_end's status, or 2 for an unknown option. */
struct seen {
	const char *name;
	uint32_t n;
	uint64_t size;
	double f;
	bool flag;
};

static int scan(char **argv, struct seen *o, struct cli_scan *s)
{
	int argc = 0;

	while (argv[argc])
		argc++;
	memset(o, 0, sizeof *o);
	for (cli_begin(s, argc, argv, "tcmd"); cli_more(s);) {
		if (cli_flag(s, "--flag")) {
			o->flag = true;
			continue;
		}
		if (cli_value(s, "--name", &o->name) || cli_u32(s, "-n", 1, 100, &o->n) ||
		    cli_size(s, "--size", &o->size) || cli_double(s, "-f", 1, 1e6, &o->f))
			continue;
		return cli_unknown(s);
	}
	return cli_end(s, true);
}

#define ARGV(...) ((char *[]){ "tcmd", __VA_ARGS__, NULL })

static void test_cli__both_value_spellings(void)
{
	struct seen o;
	struct cli_scan s;

	CU_ASSERT_EQUAL(scan(ARGV("--name", "a", "-n=7", "--flag"), &o, &s), -1);
	CU_ASSERT_STRING_EQUAL(o.name, "a");
	CU_ASSERT_EQUAL(o.n, 7);
	CU_ASSERT_TRUE(o.flag);
	CU_ASSERT_EQUAL(scan(ARGV("--name=b=c", "-n", "100"), &o, &s), -1);
	CU_ASSERT_STRING_EQUAL(o.name, "b=c");
	CU_ASSERT_EQUAL(o.n, 100);
	/* an empty value after '=' is a value, not a missing one */
	CU_ASSERT_EQUAL(scan(ARGV("--name="), &o, &s), -1);
	CU_ASSERT_STRING_EQUAL(o.name, "");
}

static void test_cli__prefix_is_not_the_option(void)
{
	struct seen o;
	struct cli_scan s;

	/* --names is not --name with a value */
	CU_ASSERT_EQUAL(scan(ARGV("--names", "x"), &o, &s), 2);
	CU_ASSERT_PTR_NULL(o.name);
	CU_ASSERT_EQUAL(scan(ARGV("--flagx"), &o, &s), 2);
	CU_ASSERT_FALSE(o.flag);
}

static void test_cli__missing_value_is_usage_error(void)
{
	struct seen o;
	struct cli_scan s;

	CU_ASSERT_EQUAL(scan(ARGV("--name"), &o, &s), 2);
	CU_ASSERT_TRUE(s.failed);
	CU_ASSERT_PTR_NULL(o.name);
	CU_ASSERT_EQUAL(scan(ARGV("--flag", "-n"), &o, &s), 2);
	CU_ASSERT_EQUAL(o.n, 0);
}

static void test_cli__integers_checked(void)
{
	struct seen o;
	struct cli_scan s;

	CU_ASSERT_EQUAL(scan(ARGV("-n", "1"), &o, &s), -1);
	CU_ASSERT_EQUAL(o.n, 1);
	/* out of range, negative, trailing junk, empty, overflow: never a value */
	CU_ASSERT_EQUAL(scan(ARGV("-n", "0"), &o, &s), 2);
	CU_ASSERT_EQUAL(o.n, 0);
	CU_ASSERT_EQUAL(scan(ARGV("-n", "101"), &o, &s), 2);
	CU_ASSERT_EQUAL(scan(ARGV("-n", "-3"), &o, &s), 2);
	CU_ASSERT_EQUAL(scan(ARGV("-n", "7x"), &o, &s), 2);
	CU_ASSERT_EQUAL(scan(ARGV("-n="), &o, &s), 2);
	CU_ASSERT_EQUAL(scan(ARGV("-n", "99999999999999999999999"), &o, &s), 2);
	CU_ASSERT_EQUAL(scan(ARGV("-n", "4294967297"), &o, &s), 2); /* 2^32 + 1 */
	CU_ASSERT_EQUAL(o.n, 0);
}

static void test_cli__sizes_and_doubles(void)
{
	struct seen o;
	struct cli_scan s;

	CU_ASSERT_EQUAL(scan(ARGV("--size", "64M", "-f", "1"), &o, &s), -1);
	CU_ASSERT_EQUAL(o.size, 64ull << 20);
	CU_ASSERT_DOUBLE_EQUAL(o.f, 1.0, 0.0);
	CU_ASSERT_EQUAL(scan(ARGV("--size=1GiB", "-f=1e6"), &o, &s), -1);
	CU_ASSERT_EQUAL(o.size, 1ull << 30);
	CU_ASSERT_DOUBLE_EQUAL(o.f, 1e6, 0.0);
	CU_ASSERT_EQUAL(scan(ARGV("--size", "lots"), &o, &s), 2);
	CU_ASSERT_EQUAL(scan(ARGV("-f", "0.5"), &o, &s), 2);
	CU_ASSERT_EQUAL(scan(ARGV("-f", "nan"), &o, &s), 2);
	CU_ASSERT_EQUAL(scan(ARGV("-f", "inf"), &o, &s), 2);
	CU_ASSERT_EQUAL(scan(ARGV("-f", "2e6"), &o, &s), 2);
	CU_ASSERT_DOUBLE_EQUAL(o.f, 0.0, 0.0);
}

static void test_cli__positionals_and_help(void)
{
	struct seen o;
	struct cli_scan s;

	CU_ASSERT_EQUAL(scan(ARGV("a", "--flag", "b", "-"), &o, &s), -1);
	CU_ASSERT_EQUAL(s.npos, 3);
	CU_ASSERT_STRING_EQUAL(s.pos[0], "a");
	CU_ASSERT_STRING_EQUAL(s.pos[2], "-"); /* "-" is a word: stdin/stdout */
	/* more words than the scanner keeps: a usage error, not a drop */
	CU_ASSERT_EQUAL(scan(ARGV("1", "2", "3", "4", "5", "6", "7", "8", "9"), &o, &s), 2);
	/* --help stops the scan before later errors: exit 0 */
	CU_ASSERT_EQUAL(scan(ARGV("--help", "-n", "0"), &o, &s), 0);
	CU_ASSERT_TRUE(s.help);
	CU_ASSERT_EQUAL(o.n, 0);
	/* a command that takes no words refuses one */
	{
		char *argv[] = { "tcmd", "stray", NULL };
		struct cli_scan t;

		cli_begin(&t, 2, argv, "tcmd");
		while (cli_more(&t))
			;
		CU_ASSERT_EQUAL(cli_end(&t, false), 2);
		CU_ASSERT_EQUAL(cli_end(&t, true), -1);
	}
}

static void test_cli__common_inputs(void)
{
	char *argv[] = { "tcmd", "--preset", "h200", "--servers=2", "--matrix", "3",
			 "--traffic", "t.json", "-o", "out.json", "--json", NULL };
	struct cli_inputs in;
	struct cli_scan s;
	int argc = (int)(sizeof argv / sizeof argv[0]) - 1;

	cli_inputs_init(&in);
	CU_ASSERT_EQUAL(in.matrix, -1);
	for (cli_begin(&s, argc, argv, "tcmd"); cli_more(&s);)
		CU_ASSERT_TRUE_FATAL(cli_inputs_option(&s, &in));
	CU_ASSERT_EQUAL(cli_end(&s, false), -1);
	CU_ASSERT_STRING_EQUAL(in.preset, "h200");
	CU_ASSERT_EQUAL(in.servers, 2);
	CU_ASSERT_EQUAL(in.gpus, 0);
	CU_ASSERT_EQUAL(in.matrix, 3);
	CU_ASSERT_STRING_EQUAL(in.traffic_path, "t.json");
	CU_ASSERT_STRING_EQUAL(in.out_path, "out.json");
	CU_ASSERT_TRUE(in.json);
	{
		char *bad[] = { "tcmd", "--matrix", "4294967296", NULL };

		cli_inputs_init(&in);
		for (cli_begin(&s, 3, bad, "tcmd"); cli_more(&s);)
			CU_ASSERT_TRUE(cli_inputs_option(&s, &in));
		CU_ASSERT_EQUAL(cli_end(&s, false), 2);
	}
}

/* The closest candidate within distance 2 (and half the word), else NULL. */
static void test_cli__suggest(void)
{
	static const char *const c[] = { "plan", "sim", "sweep", NULL, "spreadout", "hier" };
	size_t n = sizeof c / sizeof c[0];

	CU_ASSERT_STRING_EQUAL(cli_suggest("plna", c, n), "plan");  /* transposition: 2 */
	CU_ASSERT_STRING_EQUAL(cli_suggest("simm", c, n), "sim");   /* insertion */
	CU_ASSERT_STRING_EQUAL(cli_suggest("swep", c, n), "sweep"); /* deletion */
	CU_ASSERT_STRING_EQUAL(cli_suggest("spredout", c, n), "spreadout");
	CU_ASSERT_STRING_EQUAL(cli_suggest("hir", c, n), "hier");
	CU_ASSERT_PTR_NULL(cli_suggest("frobnicate", c, n));
	CU_ASSERT_PTR_NULL(cli_suggest("x", c, n));   /* 2 edits of a 1-letter word */
	CU_ASSERT_PTR_NULL(cli_suggest("plxyz", c, n)); /* 3 edits */
	CU_ASSERT_PTR_NULL(cli_suggest(NULL, c, n));
	CU_ASSERT_PTR_NULL(cli_suggest("plan", c, 0));
	/* the first of equally close ones */
	{
		static const char *const d[] = { "ab", "ac" };
		CU_ASSERT_STRING_EQUAL(cli_suggest("aa", d, 2), "ab");
	}
}

/* A common input the command's flags leave out is refused where it is
 * scanned; the limits and --json are every command's. */
static void test_cli__flags_refuse_inputs(void)
{
	char *ok[] = { "ncmd", "--preset", "h200", "--json", "--max-gpus", "64", NULL };
	char *bad[][4] = { { "ncmd", "--plan", "p.json", NULL }, { "ncmd", "-o", "x", NULL },
			   { "ncmd", "--traffic=t.json", NULL, NULL },
			   { "ncmd", "--matrix", "1", NULL } };
	struct cli_inputs in;
	struct cli_scan s;

	cli_inputs_init(&in);
	for (cli_begin(&s, 6, ok, "ncmd"); cli_more(&s);)
		CU_ASSERT_TRUE_FATAL(cli_inputs_option(&s, &in));
	CU_ASSERT_EQUAL(cli_end(&s, false), -1);
	for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
		int argc = bad[k][2] ? 3 : 2;
		cli_inputs_init(&in);
		for (cli_begin(&s, argc, bad[k], "ncmd"); cli_more(&s);)
			CU_ASSERT_TRUE(cli_inputs_option(&s, &in));
		CU_ASSERT_TRUE(s.failed);
		CU_ASSERT_EQUAL(cli_end(&s, false), 2);
	}
}

/* Compiler options through the table: aliases, the bits given, bad
 * values, and which algorithms an option applies to. */
static void test_cli__algo_options(void)
{
	char *argv[] = { "tcmd", "--order=largest", "--stages", "exact", "--chunk", "1M", NULL };
	char *bad[] = { "tcmd", "--balance", "later", NULL };
	const char *fast[] = { "fast" }, *two[] = { "nccl", "hier" };
	struct fast_algo_opts o;
	struct cli_scan s;
	unsigned given = 0;

	fast_algo_opts_default(&o);
	o.order = FAST_ORDER_DECOMPOSITION;
	for (cli_begin(&s, 6, argv, "tcmd"); cli_more(&s);)
		CU_ASSERT_TRUE_FATAL(cli_algo_option(&s, &o, &given));
	CU_ASSERT_EQUAL(cli_end(&s, false), -1);
	CU_ASSERT_EQUAL(o.order, FAST_ORDER_LARGEST_FIRST);
	CU_ASSERT_EQUAL(o.stages, FAST_STAGES_EXACT);
	CU_ASSERT_EQUAL(o.chunk_bytes, UINT64_C(1) << 20);
	CU_ASSERT_EQUAL(given, FAST_OPT_ORDER | FAST_OPT_STAGES | FAST_OPT_CHUNK);
	for (cli_begin(&s, 3, bad, "tcmd"); cli_more(&s);)
		CU_ASSERT_TRUE(cli_algo_option(&s, &o, &given));
	CU_ASSERT_EQUAL(cli_end(&s, false), 2);
	CU_ASSERT_EQUAL(o.balance, FAST_BALANCE_JIT); /* unchanged */
	CU_ASSERT_EQUAL(cli_algo_applies("tcmd", fast, 1, FAST_OPT_ORDER | FAST_OPT_STAGES), 0);
	CU_ASSERT_EQUAL(cli_algo_applies("tcmd", fast, 1, FAST_OPT_CHUNK), 2);
	CU_ASSERT_EQUAL(cli_algo_applies("tcmd", two, 2, FAST_OPT_CHUNK | FAST_OPT_PEERS), 0);
	CU_ASSERT_EQUAL(cli_algo_applies("tcmd", two, 2, FAST_OPT_BALANCE), 2);
	CU_ASSERT_EQUAL(cli_algo_known("tcmd", "--algo", "pxn", NULL, 0), 0);
	CU_ASSERT_EQUAL(cli_algo_known("tcmd", "--algo", "pxm", NULL, 0), 2);
	{
		static const char *const mpi[] = { "mpi" };
		CU_ASSERT_EQUAL(cli_algo_known("tcmd", NULL, "mpi", mpi, 1), 0);
	}
}

/* The option loop tried every name before cli_unknown(): s.tried holds
 * them, and the closest is the hint. */
static void test_cli__unknown_option_candidates(void)
{
	struct seen o;
	struct cli_scan s;

	CU_ASSERT_EQUAL(scan(ARGV("--nmae", "x"), &o, &s), 2);
	CU_ASSERT_EQUAL(s.ntried, 5);
	CU_ASSERT_STRING_EQUAL(cli_suggest("--nmae", s.tried, s.ntried), "--name");
	CU_ASSERT_STRING_EQUAL(cli_suggest("--siz", s.tried, s.ntried), "--size");
	CU_ASSERT_PTR_NULL(cli_suggest("--verbose", s.tried, s.ntried));
}

/* Progress goes to stderr only when it is a terminal (or FAST_PROGRESS=1):
 * stderr redirected to a file gets nothing, forced it gets "\rwhat i/n"
 * and the erasing line. */
static void test_cli__progress_only_on_a_terminal(void)
{
	struct cli_progress p;
	char buf[256] = "";
	FILE *f = tmpfile();
	int saved = dup(STDERR_FILENO);
	size_t n;

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fflush(stderr);
	dup2(fileno(f), STDERR_FILENO);
	unsetenv("FAST_PROGRESS");
	cli_progress_begin(&p, "quiet", 2);
	cli_progress_step(&p, 1);
	cli_progress_end(&p);
	setenv("FAST_PROGRESS", "1", 1);
	cli_progress_begin(&p, "loud", 2);
	cli_progress_step(&p, 1);
	cli_progress_step(&p, 2); /* within 0.1 s of the first: not drawn */
	cli_progress_end(&p);
	unsetenv("FAST_PROGRESS");
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(f);
	n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = '\0';
	fclose(f);
	CU_ASSERT_STRING_EQUAL(buf, "\rloud 1/2\r" "        " "\r");
}

UNIT_MAIN("cli", UNIT_TEST(test_cli__both_value_spellings), UNIT_TEST(test_cli__prefix_is_not_the_option),
	  UNIT_TEST(test_cli__missing_value_is_usage_error), UNIT_TEST(test_cli__integers_checked),
	  UNIT_TEST(test_cli__sizes_and_doubles), UNIT_TEST(test_cli__positionals_and_help),
	  UNIT_TEST(test_cli__common_inputs), UNIT_TEST(test_cli__suggest),
	  UNIT_TEST(test_cli__flags_refuse_inputs), UNIT_TEST(test_cli__algo_options),
	  UNIT_TEST(test_cli__unknown_option_candidates),
	  UNIT_TEST(test_cli__progress_only_on_a_terminal))
