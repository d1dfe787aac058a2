/*
 * cli.c - option scanning, common inputs, error reporting and atomic
 * output files for every subcommand (see cli.h).
 */
#define _GNU_SOURCE
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const struct cmd *cli_find_command(const char *name)
{
	for (const struct cmd *const *c = fast_commands; *c; c++)
		if (strcmp((*c)->name, name) == 0)
			return *c;
	return NULL;
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
		if (strcmp(s->arg, "--help") == 0 || strcmp(s->arg, "-h") == 0) {
			if (s->cmd)
				fputs(s->cmd->usage, stdout);
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

bool cli_flag(struct cli_scan *s, const char *name)
{
	return strcmp(s->arg, name) == 0;
}

bool cli_value(struct cli_scan *s, const char *name, const char **out)
{
	size_t n = strlen(name);

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
	if (!*v || *end || errno || x != x || x < min || x > max) {
		cli_usage_error(cmdname(s), "%s: '%.40s' is not a number in [%g, %g]", name, v,
				min, max);
		s->failed = true;
		return true;
	}
	*out = x;
	return true;
}

int cli_unknown(struct cli_scan *s)
{
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

void cli_inputs_init(struct cli_inputs *in)
{
	memset(in, 0, sizeof *in);
	in->matrix = -1;
	fast_limits_default(&in->lim);
}

bool cli_inputs_option(struct cli_scan *s, struct cli_inputs *in)
{
	uint64_t m;

	if (cli_value(s, "--topo", &in->topo_path) || cli_value(s, "--preset", &in->preset) ||
	    cli_u32(s, "--servers", 1, 1u << 20, &in->servers) ||
	    cli_u32(s, "--gpus", 1, 1u << 16, &in->gpus) ||
	    cli_value(s, "--traffic", &in->traffic_path) ||
	    cli_value(s, "--plan", &in->plan_path) || cli_value(s, "-o", &in->out_path) ||
	    cli_value(s, "--output", &in->out_path) ||
	    cli_u32(s, "--max-gpus", 1, 1u << 30, &in->lim.max_gpus))
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
		return true;
	}
	return false;
}

int cli_report(const struct fast_err *err)
{
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

	fputs("fast: warning: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int cli_load_topo(const struct cli_inputs *in, struct fast_topo *out)
{
	struct fast_err err;
	int rc;

	if (in->topo_path && in->preset)
		return cli_usage_error("topo", "give either --topo or --preset, not both");
	if (in->topo_path) {
		if (in->servers || in->gpus)
			return cli_usage_error("topo", "--servers/--gpus scale a --preset, not a --topo file");
		rc = fast_topo_load(in->topo_path, &in->lim, out, &err);
	} else if (in->preset) {
		rc = fast_topo_preset(in->preset, in->servers, in->gpus, &in->lim, out, &err);
	} else {
		return cli_fail(FAST_EUSAGE, "no topology: give --topo FILE or --preset NAME");
	}
	return rc < 0 ? cli_report(&err) : 0;
}

int cli_load_traffic(const struct cli_inputs *in, const struct fast_topo *topo,
		     struct fast_traffic *out)
{
	struct fast_err err;
	struct fast_traffic t;

	if (!in->traffic_path)
		return cli_fail(FAST_EUSAGE, "no traffic: give --traffic FILE");
	if (fast_traffic_load(in->traffic_path, &in->lim, &t, &err) < 0)
		return cli_report(&err);
	if (topo && fast_traffic_check_topo(&t, topo, in->traffic_path, &err) < 0) {
		fast_traffic_free(&t);
		return cli_report(&err);
	}
	if (in->matrix >= 0) {
		if ((uint64_t)in->matrix >= t.count) {
			uint32_t count = t.count;
			fast_traffic_free(&t);
			return cli_fail(FAST_EUSAGE, "--matrix %lld: %s has %u matrices (0..%u)",
					(long long)in->matrix, in->traffic_path, count,
					count ? count - 1 : 0);
		}
		/* keep only the chosen matrix, moved to index 0 */
		uint32_t k = (uint32_t)in->matrix;
		for (uint32_t i = 0; i < t.count; i++)
			if (i != k)
				free(t.m[i].bytes);
		if (k != 0)
			t.m[0] = t.m[k];
		t.count = 1;
	}
	*out = t;
	return 0;
}

int cli_load_plans(const struct cli_inputs *in, struct fast_planset *out)
{
	struct fast_err err;

	if (!in->plan_path)
		return cli_fail(FAST_EUSAGE, "no plan: give --plan FILE");
	if (fast_planset_load(in->plan_path, &in->lim, out, &err) < 0)
		return cli_report(&err);
	return 0;
}

/* The plan serving matrix m (index m of the traffic when all are loaded,
 * or the chosen one): NULL with a message when there is none. */
const struct fast_plan *cli_plan_for(const struct fast_planset *ps, const struct cli_inputs *in,
				     uint32_t m, uint32_t nmat, struct fast_err *err)
{
	if (in->matrix >= 0) {
		uint32_t want = (uint32_t)in->matrix;
		if (ps->count == 1 && ps->plans[0].matrix == want)
			return &ps->plans[0];
		for (uint32_t i = 0; i < ps->count; i++)
			if (ps->plans[i].matrix == want)
				return &ps->plans[i];
		fast_err_set(err, FAST_EINPUT, "%s: no plan serves matrix %u", in->plan_path, want);
		return NULL;
	}
	if (ps->count != nmat) {
		fast_err_set(err, FAST_EINPUT,
			     "%s holds %u plans but %s has %u matrices (use --matrix I for one)",
			     in->plan_path, ps->count, in->traffic_path, nmat);
		return NULL;
	}
	if (ps->plans[m].matrix != m) {
		fast_err_set(err, FAST_EINPUT, "%s: /plans/%u/matrix: plan %u serves matrix %u, not %u",
			     in->plan_path, m, m, ps->plans[m].matrix, m);
		return NULL;
	}
	return &ps->plans[m];
}

static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;
	char ra[PATH_MAX], rb[PATH_MAX];

	if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
		return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
	/* the output may not exist yet: compare resolved paths */
	if (realpath(a, ra) && realpath(b, rb))
		return strcmp(ra, rb) == 0;
	return strcmp(a, b) == 0;
}

int cli_out_open(struct cli_out *o, const char *path, const char *const *inputs)
{
	const char *slash;
	int fd;

	memset(o, 0, sizeof *o);
	if (!path || strcmp(path, "-") == 0) {
		o->f = stdout;
		o->is_stdout = true;
		return 0;
	}
	for (size_t i = 0; inputs && inputs[i]; i++)
		if (same_file(path, inputs[i]))
			return cli_fail(FAST_EUSAGE, "refusing to write output '%.200s': it is also an input",
					path);
	if (strlen(path) + 16 >= sizeof o->tmp)
		return cli_fail(FAST_EUSAGE, "output path too long");
	{
		/* a device, pipe or socket (/dev/full, a FIFO, /dev/stdout) is
		 * written in place: renaming over it would replace the node */
		struct stat st;
		if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
			if (S_ISDIR(st.st_mode))
				return cli_fail(FAST_EUSAGE, "output '%.200s' is a directory", path);
			o->f = fopen(path, "w");
			if (!o->f)
				return cli_fail(FAST_EIO, "cannot open output '%.200s': %s", path,
						strerror(errno));
			o->direct = true;
			snprintf(o->path, sizeof o->path, "%s", path);
			return 0;
		}
	}
	snprintf(o->path, sizeof o->path, "%s", path);
	slash = strrchr(path, '/');
	if (slash)
		snprintf(o->tmp, sizeof o->tmp, "%.*s/.%s.XXXXXX", (int)(slash - path), path,
			 slash + 1);
	else
		snprintf(o->tmp, sizeof o->tmp, ".%s.XXXXXX", path);
	fd = mkstemp(o->tmp);
	if (fd < 0)
		return cli_fail(FAST_EIO, "cannot create output '%.200s': %s", path, strerror(errno));
	o->f = fdopen(fd, "w");
	if (!o->f) {
		close(fd);
		unlink(o->tmp);
		return cli_fail(FAST_EIO, "cannot create output '%.200s': %s", path, strerror(errno));
	}
	return 0;
}

int cli_out_commit(struct cli_out *o)
{
	int bad;

	if (o->is_stdout)
		return cli_stdout_finish();
	if (o->direct) {
		bad = fflush(o->f) != 0 || ferror(o->f);
		if (fclose(o->f) != 0)
			bad = 1;
		o->f = NULL;
		return bad ? cli_fail(FAST_EIO, "writing '%.200s' failed: %s", o->path,
				      strerror(errno))
			   : 0;
	}
	bad = fflush(o->f) != 0 || ferror(o->f);
	bad |= fsync(fileno(o->f)) != 0 && errno != EINVAL;
	if (fclose(o->f) != 0)
		bad = 1;
	o->f = NULL;
	if (bad) {
		int e = errno;
		unlink(o->tmp);
		return cli_fail(FAST_EIO, "writing '%.200s' failed: %s", o->path, strerror(e));
	}
	/* mkstemp creates 0600: give the file the usual permissions */
	{
		mode_t um = umask(0);
		umask(um);
		chmod(o->tmp, 0666 & ~um);
	}
	if (rename(o->tmp, o->path) != 0) {
		int e = errno;
		unlink(o->tmp);
		return cli_fail(FAST_EIO, "cannot rename output into '%.200s': %s", o->path,
				strerror(e));
	}
	return 0;
}

void cli_out_abort(struct cli_out *o)
{
	if (!o || o->is_stdout || !o->f)
		return;
	fclose(o->f);
	o->f = NULL;
	if (!o->direct)
		unlink(o->tmp);
}

int cli_stdout_finish(void)
{
	if (fflush(stdout) != 0 || ferror(stdout))
		return cli_fail(FAST_EIO, "writing to standard output failed: %s", strerror(errno));
	return 0;
}
