/*
 * cli.c - what every subcommand's option loop and error path share (see
 * cli.h): the command lookup and --help, option scanning with its "did you
 * mean", the common input options, error and warning reporting (which
 * erase the progress line first, so both live here), the progress line and
 * the combined exit status.  Loading the inputs is cli_load.c; the files a
 * command reads and writes (the same-file rule, atomic outputs, closed
 * pipes) are cli_files.c.
 */
#define _GNU_SOURCE
#include "cli.h"
#include "cli_algo.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void progress_erase(void);

const struct cmd *cli_find_command(const char *name)
{
	for (const struct cmd *c = fast_commands; c->name; c++)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

void cli_print_usage(const struct cmd *c, FILE *f)
{
	fputs(c->usage, f);
	if (c->flags & CMD_ALGO)
		cli_algo_usage(f);
}

const char *cli_suggest(const char *word, const char *const *candidates, size_t n)
{
	return fast_suggest(word, candidates, n);
}

static const char *short_usage(const struct cmd *c)
{
	return c && c->usage ? c->usage : "";
}

int cli_usage_error(const char *cmdname, const char *fmt, ...)
{
	const struct cmd *c = cli_find_command(cmdname);
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	progress_erase();
	fprintf(stderr, "fast %s: %s\n", cmdname, msg);
	if (c) {
		/* first line of the usage only: the rest is for --help */
		const char *u = short_usage(c);
		const char *nl = strchr(u, '\n');
		fprintf(stderr, "usage: %.*s\n", nl ? (int)(nl - u) : (int)strlen(u), u);
	}
	fprintf(stderr, "Try 'fast %s --help'.\n", cmdname);
	return 2;
}

void cli_begin(struct cli_scan *s, int argc, char **argv, const char *cmdname)
{
	memset(s, 0, sizeof *s);
	s->argc = argc;
	s->argv = argv;
	s->i = 0; /* argv[0] is the command name */
	s->cmd = cli_find_command(cmdname);
}

static const char *cmdname(const struct cli_scan *s)
{
	return s->cmd ? s->cmd->name : (s->argv && s->argv[0] ? s->argv[0] : "?");
}

bool cli_more(struct cli_scan *s)
{
	for (;;) {
		if (s->failed || s->help)
			return false;
		s->i++;
		if (s->i >= s->argc)
			return false;
		s->arg = s->argv[s->i];
		s->ntried = 0;
		if (strcmp(s->arg, "--help") == 0 || strcmp(s->arg, "-h") == 0) {
			if (s->cmd)
				cli_print_usage(s->cmd, stdout);
			s->help = true;
			return false;
		}
		if (s->arg[0] == '-' && s->arg[1] != '\0')
			return true;
		if (s->npos >= (int)(sizeof s->pos / sizeof s->pos[0])) {
			cli_usage_error(cmdname(s), "too many arguments ('%.40s')", s->arg);
			s->failed = true;
			return false;
		}
		s->pos[s->npos++] = s->arg;
	}
}

static void tried(struct cli_scan *s, const char *name)
{
	if (s->ntried < sizeof s->tried / sizeof s->tried[0])
		s->tried[s->ntried++] = name;
}

bool cli_flag(struct cli_scan *s, const char *name)
{
	tried(s, name);
	return strcmp(s->arg, name) == 0;
}

bool cli_value(struct cli_scan *s, const char *name, const char **out)
{
	size_t n = strlen(name);

	tried(s, name);
	if (strncmp(s->arg, name, n) != 0)
		return false;
	if (s->arg[n] == '=') {
		*out = s->arg + n + 1;
		return true;
	}
	if (s->arg[n] != '\0')
		return false;
	if (s->i + 1 >= s->argc) {
		cli_usage_error(cmdname(s), "option '%s' needs a value", name);
		s->failed = true;
		return true;
	}
	*out = s->argv[++s->i];
	return true;
}

bool cli_u64(struct cli_scan *s, const char *name, uint64_t *out)
{
	const char *v;
	char *end;
	unsigned long long x;

	if (!cli_value(s, name, &v))
		return false;
	if (s->failed)
		return true;
	errno = 0;
	x = strtoull(v, &end, 10);
	if (!*v || *end || errno || v[0] == '-') {
		cli_usage_error(cmdname(s), "%s: '%.40s' is not a non-negative integer", name, v);
		s->failed = true;
		return true;
	}
	*out = x;
	return true;
}

bool cli_u32(struct cli_scan *s, const char *name, uint32_t min, uint32_t max, uint32_t *out)
{
	uint64_t x = 0;

	if (!cli_u64(s, name, &x))
		return false;
	if (s->failed)
		return true;
	if (x < min || x > max) {
		cli_usage_error(cmdname(s), "%s: %llu is out of range [%u, %u]", name,
				(unsigned long long)x, min, max);
		s->failed = true;
		return true;
	}
	*out = (uint32_t)x;
	return true;
}

bool cli_size(struct cli_scan *s, const char *name, uint64_t *out)
{
	const char *v;
	struct fast_err err;

	if (!cli_value(s, name, &v))
		return false;
	if (s->failed)
		return true;
	if (fast_size_parse(v, out, &err) < 0) {
		cli_usage_error(cmdname(s), "%s: %s", name, err.msg);
		s->failed = true;
	}
	return true;
}

bool cli_double(struct cli_scan *s, const char *name, double min, double max, double *out)
{
	const char *v;
	char *end;
	double x;

	if (!cli_value(s, name, &v))
		return false;
	if (s->failed)
		return true;
	errno = 0;
	x = strtod(v, &end);
	if (!*v || *end || x != x) {
		cli_usage_error(cmdname(s), "%s: '%.40s' is not a number", name, v);
		s->failed = true;
		return true;
	}
	if (errno == ERANGE || x < min || x > max) {
		/* the bounds with every digit that matters: -f's 1.0000001 must
		 * not print as the "1" it excludes */
		char lo[32], hi[32];
		cli_usage_error(cmdname(s), "%s: %.40s is out of range [%s, %s]", name, v,
				fast_num_format(min, lo, sizeof lo),
				fast_num_format(max, hi, sizeof hi));
		s->failed = true;
		return true;
	}
	*out = x;
	return true;
}

int cli_unknown(struct cli_scan *s)
{
	/* "--trafic=x" is compared by its name */
	char word[64];
	const char *eq = strchr(s->arg, '='), *near;

	snprintf(word, sizeof word, "%.*s", eq ? (int)(eq - s->arg) : (int)strlen(s->arg), s->arg);
	near = cli_suggest(word, s->tried, s->ntried);
	if (near && strcmp(near, word) != 0)
		return cli_usage_error(cmdname(s), "unknown option '%.60s' (did you mean '%s'?)",
				       s->arg, near);
	return cli_usage_error(cmdname(s), "unknown option '%.60s'", s->arg);
}

int cli_end(const struct cli_scan *s, bool positionals)
{
	if (s->failed)
		return 2;
	if (s->help)
		return 0;
	if (!positionals && s->npos)
		return cli_usage_error(cmdname(s), "unexpected argument '%.60s'", s->pos[0]);
	return -1;
}

int cli_scan_inputs(int argc, char **argv, const char *cmdname, struct cli_inputs *in)
{
	struct cli_scan s;

	for (cli_begin(&s, argc, argv, cmdname); cli_more(&s);) {
		if (cli_inputs_option(&s, in))
			continue;
		return cli_unknown(&s);
	}
	if (s.help)
		return 0;
	return cli_end(&s, false);
}

void cli_inputs_init(struct cli_inputs *in)
{
	memset(in, 0, sizeof *in);
	in->matrix = -1;
	fast_limits_default(&in->lim);
}

/* After the common input s->arg was consumed: refuse it when the command's
 * flags do not include need.  Returns true (the option was consumed). */
static bool taken(struct cli_scan *s, unsigned need)
{
	if (!s->failed && s->cmd && !(s->cmd->flags & need)) {
		cli_usage_error(s->cmd->name, "%.*s does not apply here",
				(int)strcspn(s->arg, "="), s->arg);
		s->failed = true;
	}
	return true;
}

/* --nic S:K=F: server S, NIC K, F the fraction of the nominal rate (0 =
 * down).  The ranges of S and K are checked once the topology is known. */
static bool nic_option(struct cli_scan *s, struct cli_inputs *in)
{
	const char *v;
	char *end;
	unsigned long srv, nic;
	double f;

	if (!cli_value(s, "--nic", &v))
		return false;
	if (s->failed)
		return true;
	errno = 0;
	srv = strtoul(v, &end, 10);
	if (end == v || *end != ':' || errno || v[0] == '-' || srv > UINT32_MAX)
		goto bad;
	v = end + 1;
	nic = strtoul(v, &end, 10);
	if (end == v || *end != '=' || errno || v[0] == '-' || nic > UINT32_MAX)
		goto bad;
	v = end + 1;
	f = strtod(v, &end);
	if (end == v || *end || errno)
		goto bad;
	if (!(f >= 0.0 && f <= 1.0)) {
		cli_usage_error(cmdname(s), "--nic %s: the fraction %.40s is not in [0, 1] (0 = down)",
				s->arg[5] == '=' ? s->arg + 6 : s->argv[s->i], v);
		s->failed = true;
		return true;
	}
	for (uint32_t i = 0; i < in->nnic; i++)
		if (in->nic[i].server == srv && in->nic[i].nic == nic) {
			cli_usage_error(cmdname(s), "--nic: server %lu NIC %lu is given twice", srv,
					nic);
			s->failed = true;
			return true;
		}
	if (in->nnic >= FAST_NIC_OVERRIDES_MAX) {
		cli_usage_error(cmdname(s), "--nic: more than %d overrides", FAST_NIC_OVERRIDES_MAX);
		s->failed = true;
		return true;
	}
	in->nic[in->nnic++] = (struct fast_nic_override){ (uint32_t)srv, (uint32_t)nic, f };
	return true;
bad:
	cli_usage_error(cmdname(s), "--nic: '%.40s' is not S:K=F (server S, NIC K, F in [0, 1])",
			s->arg[5] == '=' ? s->arg + 6 : s->argv[s->i]);
	s->failed = true;
	return true;
}

bool cli_inputs_option(struct cli_scan *s, struct cli_inputs *in)
{
	uint64_t m;

	if (cli_value(s, "--topo", &in->topo_path) || cli_value(s, "--preset", &in->preset) ||
	    cli_u32(s, "--servers", 1, 1u << 20, &in->servers) ||
	    cli_u32(s, "--gpus", 1, 1u << 16, &in->gpus) ||
	    cli_u32(s, "--nics", 1, FAST_NICS_MAX, &in->nics) || nic_option(s, in))
		return taken(s, CMD_TOPO);
	if (cli_value(s, "--traffic", &in->traffic_path))
		return taken(s, CMD_TRAFFIC);
	if (cli_value(s, "--plan", &in->plan_path))
		return taken(s, CMD_PLAN);
	if (cli_value(s, "-o", &in->out_path) || cli_value(s, "--output", &in->out_path))
		return taken(s, CMD_OUT);
	if (cli_u32(s, "--max-gpus", 1, 1u << 30, &in->lim.max_gpus) ||
	    cli_size(s, "--max-traffic-bytes", &in->lim.max_traffic_bytes) ||
	    cli_u64(s, "--max-groups", &in->lim.max_groups))
		return true;
	if (cli_flag(s, "--json")) {
		in->json = true;
		return true;
	}
	if (cli_u64(s, "--matrix", &m)) {
		if (!s->failed && m > INT32_MAX) {
			cli_usage_error(cmdname(s), "--matrix: %llu is out of range",
					(unsigned long long)m);
			s->failed = true;
		}
		in->matrix = (int64_t)m;
		return taken(s, CMD_MATRIX);
	}
	return false;
}

int cli_report(const struct fast_err *err)
{
	progress_erase();
	fprintf(stderr, "fast: %s: %s\n", fast_err_name(err->code), err->msg);
	return fast_err_exit_status(err->code);
}

int cli_fail(int code, const char *fmt, ...)
{
	struct fast_err err;
	va_list ap;

	va_start(ap, fmt);
	fast_err_vset(&err, code, fmt, ap);
	va_end(ap);
	return cli_report(&err);
}

void cli_warn(const char *fmt, ...)
{
	va_list ap;

	progress_erase();
	fputs("fast: warning: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* --- progress ------------------------------------------------------------ */

/* The progress line on screen, erased before an error or a warning is
 * printed (cli_report, cli_warn, cli_usage_error). */
static struct cli_progress *progress_shown;

static void progress_erase(void)
{
	if (progress_shown)
		cli_progress_clear(progress_shown);
}

void cli_progress_begin(struct cli_progress *p, const char *what, uint64_t n)
{
	memset(p, 0, sizeof *p);
	p->what = what;
	p->n = n;
	p->last = -1;
	p->on = isatty(STDERR_FILENO) == 1;
	/* forced: under mpirun a rank's stderr is a pipe to the terminal */
	{
		const char *env = getenv("FAST_PROGRESS");
		if (env && *env)
			p->on = strcmp(env, "0") != 0;
	}
}

void cli_progress_step(struct cli_progress *p, uint64_t done)
{
	double now;
	int w;

	if (!p->on)
		return;
	now = fast_now();
	if (p->last >= 0 && now - p->last < 0.1)
		return;
	p->last = now;
	progress_shown = p;
	w = fprintf(stderr, "\r%s %llu/%llu", p->what, (unsigned long long)done,
		    (unsigned long long)p->n);
	if (w > 0 && w - 1 < p->width)
		fprintf(stderr, "%*s", p->width - (w - 1), "");
	if (w > 0 && w - 1 > p->width)
		p->width = w - 1;
	fflush(stderr);
}

void cli_progress_clear(struct cli_progress *p)
{
	if (p->on && p->width > 0) {
		fprintf(stderr, "\r%*s\r", p->width, "");
		fflush(stderr);
	}
	p->width = 0;
}

void cli_progress_end(struct cli_progress *p)
{
	cli_progress_clear(p);
	p->on = false;
	if (progress_shown == p)
		progress_shown = NULL;
}

int cli_status(int a, int b)
{
	if (a == 0 || (a == 1 && b != 0))
		return b;
	return a;
}
