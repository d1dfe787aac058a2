/*
 * cli_algo.c - compiler options on the command line (see cli_algo.h).
 */
#include "cli_algo.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>


/* "--order" for the option "order".  The scanner keeps the names it tried
 * for its "did you mean" (cli_unknown), so they must outlive this call:
 * one string per table row, made on first use. */
static const char *flag_of(const struct fast_algo_option *opt)
{
	static char flags[32][40];
	size_t i = (size_t)(opt - fast_algo_options);

	assert(i < sizeof flags / sizeof flags[0]);
	if (!flags[i][0])
		snprintf(flags[i], sizeof flags[i], "--%s", opt->name);
	return flags[i];
}

bool cli_algo_option(struct cli_scan *s, struct fast_algo_opts *o, unsigned *given)
{
	const struct fast_algo_option *opt;
	struct fast_err err;
	const char *flag = NULL, *v = NULL;

	if (strncmp(s->arg, "--", 2) != 0)
		return false;
	for (opt = fast_algo_options; opt->name; opt++) {
		flag = flag_of(opt);
		if (cli_value(s, flag, &v))
			break;
	}
	if (!opt->name)
		return false;
	if (s->failed)
		return true;
	if (fast_algo_option_parse(opt, v, o, &err) < 0) {
		cli_usage_error(s->cmd ? s->cmd->name : "?", "%s: %s", flag, err.msg);
		s->failed = true;
		return true;
	}
	*given |= opt->bit;
	return true;
}

int cli_algo_known(const char *cmd, const char *opt, const char *name,
		   const char *const *extra, size_t n_extra)
{
	const char *near;
	char known[128];
	size_t len;

	if (fast_algo_known(name))
		return 0;
	for (size_t i = 0; i < n_extra; i++)
		if (strcmp(name, extra[i]) == 0)
			return 0;
	fast_algo_list(known, sizeof known);
	for (size_t i = 0; i < n_extra; i++)
		if ((len = strlen(known)) < sizeof known)
			snprintf(known + len, sizeof known - len, ", %s", extra[i]);
	near = fast_algo_suggest(name, extra, n_extra);
	if (near)
		return cli_usage_error(cmd, "%s%sunknown algorithm '%.40s' (known: %s); did you mean '%s'?",
				       opt ? opt : "", opt ? ": " : "", name, known, near);
	return cli_usage_error(cmd, "%s%sunknown algorithm '%.40s' (known: %s)", opt ? opt : "",
			       opt ? ": " : "", name, known);
}

int cli_algo_applies(const char *cmd, const char *const *algos, size_t n, unsigned given)
{
	for (const struct fast_algo_option *opt = fast_algo_options; opt->name; opt++) {
		char to[96] = "";
		size_t len = 0;
		bool used = false;
		if (!(given & opt->bit))
			continue;
		for (size_t i = 0; i < n; i++) {
			const struct fast_algo *a = fast_algo_find(algos[i]);
			used |= a && (a->options & opt->bit);
		}
		if (used)
			continue;
		for (const struct fast_algo *a = fast_algos; a->name && len < sizeof to; a++)
			if (a->options & opt->bit)
				len += (size_t)snprintf(to + len, sizeof to - len, "%s%s", len ? ", " : "",
							a->name);
		return cli_usage_error(cmd, "--%s applies to --algo %s only", opt->name, to);
	}
	return 0;
}

/* The lines of text, the first after `first`, the others indented. */
static void put_lines(FILE *f, const char *first, const char *text, int indent)
{
	const char *p = text;

	fputs(first, f);
	for (;;) {
		const char *nl = strchr(p, '\n');
		fprintf(f, "%.*s\n", nl ? (int)(nl - p) : (int)strlen(p), p);
		if (!nl)
			return;
		p = nl + 1;
		fprintf(f, "%*s", indent, "");
	}
}

void cli_algo_usage(FILE *f)
{
	enum { COL = 21 }; /* where the help text starts, as in the usage texts */
	char head[96];

	fputs("\nAlgorithms (--algo NAME):\n", f);
	for (const struct fast_algo *a = fast_algos; a->name; a++) {
		char chunk[32];
		fprintf(f, "  %-12s %s\n", a->name, a->summary);
		if (a->default_chunk_bytes)
			fprintf(f, "  %-12s (default chunk %s)\n", "",
				fast_size_format(a->default_chunk_bytes, chunk, sizeof chunk));
	}
	fputs("\nCompiler options:\n", f);
	for (const struct fast_algo_option *o = fast_algo_options; o->name; o++) {
		int n = snprintf(head, sizeof head, "  --%s %s", o->name, o->metavar);
		if (n <= COL - 2) {
			snprintf(head + n, sizeof head - (size_t)n, "%*s", COL - n, "");
			put_lines(f, head, o->help, COL);
		} else { /* a long name: the text starts on the next line */
			fprintf(f, "%s\n%*s", head, COL, "");
			put_lines(f, "", o->help, COL);
		}
	}
}
