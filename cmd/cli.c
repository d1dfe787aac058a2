/*
 * cli.c - option scanning, common inputs, error reporting and atomic
 * output files for every subcommand (see cli.h).
 */
#define _GNU_SOURCE
#include "cli.h"
#include "cli_algo.h"

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

bool cli_inputs_option(struct cli_scan *s, struct cli_inputs *in)
{
	uint64_t m;

	if (cli_value(s, "--topo", &in->topo_path) || cli_value(s, "--preset", &in->preset) ||
	    cli_u32(s, "--servers", 1, 1u << 20, &in->servers) ||
	    cli_u32(s, "--gpus", 1, 1u << 16, &in->gpus))
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

/* The traffic cli_load_topo() read for a preset's shape, kept for the
 * cli_load_traffic() that follows (every command loads the topology
 * first): one read of the file.  Process-wide, like the file records. */
static struct {
	bool have;
	char path[PATH_MAX];
	struct fast_traffic t;
} early;

static void early_drop(void)
{
	if (early.have)
		fast_traffic_free(&early.t);
	early.have = false;
}

/* "give --servers N --gpus G with N x G = ng (e.g. ...)": flags that fit
 * ng GPUs, with as many GPUs per server as divide both ng and g (servers
 * of the preset, partly used), else the most below g that divide ng. */
static void shape_hint(uint32_t ng, uint32_t g, char *buf, size_t len)
{
	uint32_t k = (uint32_t)fast_gcd_u64(ng, g ? g : 1);

	/* g prime to ng (--gpus 5 for 12): the largest divisor of ng below g */
	for (uint32_t d = g < ng ? g : ng; k == 1 && d > 1; d--)
		if (ng % d == 0)
			k = d;

	snprintf(buf, len, "give --servers N --gpus G with N x G = %u (e.g. --servers %u --gpus %u)",
		 ng, ng / k, k);
}

/* The preset's GPUs per server (--gpus, else its own); 0 after printing
 * why the preset does not load. */
static int preset_gpus(const struct cli_inputs *in, uint32_t *gpus)
{
	struct fast_topo t;
	struct fast_err err;

	if (fast_topo_preset(in->preset, 1, in->gpus, NULL, &t, &err) < 0)
		return cli_report(&err);
	*gpus = t.gpus;
	return 0;
}

/* Servers from the traffic's GPU count (no --servers given): 0 and
 * *servers set, or an exit status after printing. */
static int servers_from_traffic(const struct cli_inputs *in, uint32_t *servers)
{
	struct fast_err err;
	uint32_t g = 0;
	int rc;

	if ((rc = preset_gpus(in, &g)) != 0)
		return rc;
	early_drop();
	cli_input(in->traffic_path);
	if (fast_traffic_load(in->traffic_path, &in->lim, &early.t, &err) < 0)
		return cli_report(&err);
	early.have = true;
	snprintf(early.path, sizeof early.path, "%s", in->traffic_path);
	if (early.t.ng % g != 0) {
		char hint[160];
		uint32_t ng = early.t.ng;
		shape_hint(ng, g, hint, sizeof hint);
		early_drop();
		return cli_fail(FAST_EINPUT, "%s: %u GPUs is not a multiple of %u GPUs per server%s: %s",
				in->traffic_path, ng, g, in->gpus ? " (--gpus)" : "", hint);
	}
	*servers = early.t.ng / g;
	return 0;
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
		cli_input(in->topo_path);
		rc = fast_topo_load(in->topo_path, &in->lim, out, &err);
	} else if (in->preset) {
		uint32_t servers = in->servers;
		if (!servers && in->traffic_path && (rc = servers_from_traffic(in, &servers)) != 0)
			return rc;
		rc = fast_topo_preset(in->preset, servers, in->gpus, &in->lim, out, &err);
	} else {
		return cli_fail(FAST_EUSAGE, "no topology: give --topo FILE or --preset NAME");
	}
	if (rc < 0) {
		early_drop();
		return cli_report(&err);
	}
	return 0;
}

int cli_load_traffic(const struct cli_inputs *in, const struct fast_topo *topo,
		     struct fast_traffic *out)
{
	struct fast_err err;
	struct fast_traffic t;

	if (!in->traffic_path)
		return cli_fail(FAST_EUSAGE, "no traffic: give --traffic FILE");
	cli_input(in->traffic_path);
	if (early.have && strcmp(early.path, in->traffic_path) == 0) {
		t = early.t;
		early.have = false;
	} else if (fast_traffic_load(in->traffic_path, &in->lim, &t, &err) < 0) {
		return cli_report(&err);
	}
	if (topo && fast_traffic_check_topo(&t, topo, in->traffic_path, &err) < 0) {
		if (in->preset) {
			char hint[160];
			shape_hint(t.ng, topo->gpus, hint, sizeof hint);
			if (!in->gpus && t.ng % topo->gpus == 0)
				snprintf(hint, sizeof hint, "give --servers %u (or leave it out)",
					 t.ng / topo->gpus);
			else if (!in->gpus && t.ng % topo->servers == 0)
				snprintf(hint, sizeof hint, "give --servers %u --gpus %u", topo->servers,
					 t.ng / topo->servers);
			snprintf(err.msg + strlen(err.msg), sizeof err.msg - strlen(err.msg), ": %s",
				 hint);
		}
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
			if (i != k) {
				free(t.m[i].bytes);
				free(t.m[i].groups);
				free(t.m[i].dsts);
			}
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
	cli_input(in->plan_path);
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

/* --- the files a command reads and writes (see cli.h) ------------------ */

struct known {
	bool have_id; /* dev/ino of a regular file that existed when recorded */
	dev_t dev;
	ino_t ino;
	char canon[PATH_MAX];
	char name[PATH_MAX]; /* as the command was given it */
};

struct known_set {
	struct known *v;
	size_t n, cap;
	bool lost; /* a record was lost to a failed allocation */
};

/* Process-wide, as a command's files are: the inputs it read and the
 * outputs it opened. */
static struct known_set files_read, files_written;

/* The canonical path of a file that may not exist yet: realpath() of it
 * when it exists, else realpath() of its directory plus its last
 * component (a dangling symlink is replaced by the rename, so its own
 * path is the one written).  Falls back to the path as given. */
static void canon_path(const char *path, char out[PATH_MAX])
{
	char dir[PATH_MAX], rdir[PATH_MAX];
	const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;

	if (realpath(path, out))
		return;
	if (!slash)
		snprintf(dir, sizeof dir, ".");
	else if (slash == path)
		snprintf(dir, sizeof dir, "/");
	else
		snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
	if (realpath(dir, rdir) &&
	    snprintf(out, PATH_MAX, "%s/%s", strcmp(rdir, "/") ? rdir : "", base) < PATH_MAX)
		return;
	snprintf(out, PATH_MAX, "%s", path);
}

static void identify(const char *path, struct known *k)
{
	struct stat st;

	memset(k, 0, sizeof *k);
	if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
		k->have_id = true;
		k->dev = st.st_dev;
		k->ino = st.st_ino;
	}
	canon_path(path, k->canon);
	snprintf(k->name, sizeof k->name, "%s", path);
}

static void known_add(struct known_set *set, const struct known *k)
{
	if (set->n == set->cap) {
		size_t cap = set->cap ? 2 * set->cap : 8;
		struct known *v = realloc(set->v, cap * sizeof *v);
		if (!v) {
			set->lost = true;
			return;
		}
		set->v = v;
		set->cap = cap;
	}
	set->v[set->n++] = *k;
}

static const struct known *known_find(const struct known_set *set, const struct known *k)
{
	for (size_t i = 0; i < set->n; i++) {
		const struct known *x = &set->v[i];
		if ((x->have_id && k->have_id && x->dev == k->dev && x->ino == k->ino) ||
		    strcmp(x->canon, k->canon) == 0)
			return x;
	}
	return NULL;
}

void cli_input(const char *path)
{
	struct known k;

	if (!path || !*path)
		return;
	identify(path, &k);
	known_add(&files_read, &k);
}

static int record_tree_file(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)ftw;
	if (type == FTW_F && S_ISREG(st->st_mode))
		cli_input(path);
	/* a data set is a few dozen files: stop a runaway walk */
	return files_read.n > (1u << 16);
}

void cli_input_tree(const char *dir)
{
	if (dir && *dir)
		nftw(dir, record_tree_file, 16, 0);
}

/* An output written in place (a device, FIFO or socket) or standard
 * output: outside the rule. */
static bool written_in_place(const char *path)
{
	struct stat st;

	return !path || strcmp(path, "-") == 0 ||
	       (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode));
}

static int check_known(const char *path, struct known *k)
{
	const struct known *x;

	identify(path, k);
	if (files_read.lost || files_written.lost)
		return cli_fail(FAST_ENOMEM, "out of memory recording the command's files");
	if ((x = known_find(&files_read, k)) != NULL) {
		if (strcmp(x->name, path) == 0)
			return cli_fail(FAST_EUSAGE, "refusing to write output '%.200s': it is also an input",
					path);
		return cli_fail(FAST_EUSAGE,
				"refusing to write output '%.200s': it is the input '%.200s'", path,
				x->name);
	}
	if ((x = known_find(&files_written, k)) != NULL)
		return cli_fail(FAST_EUSAGE,
				"refusing to write output '%.200s': output '%.200s' of this command is the same file",
				path, x->name);
	return 0;
}

int cli_out_check(const char *path)
{
	struct known k;

	return written_in_place(path) ? 0 : check_known(path, &k);
}

int cli_outs_check(const char *const *paths, size_t n)
{
	struct known a, b;
	int rc;

	for (size_t i = 0; i < n; i++) {
		if (written_in_place(paths[i]))
			continue;
		if ((rc = check_known(paths[i], &a)) != 0)
			return rc;
		for (size_t j = 0; j < i; j++) {
			if (written_in_place(paths[j]))
				continue;
			identify(paths[j], &b);
			if ((a.have_id && b.have_id && a.dev == b.dev && a.ino == b.ino) ||
			    strcmp(a.canon, b.canon) == 0)
				return cli_fail(FAST_EUSAGE,
						"refusing to write output '%.200s': output '%.200s' of this command is the same file",
						paths[i], paths[j]);
		}
	}
	return 0;
}

/* --- temporary files removed on a signal ---------------------------------
 * The handler may only make async-signal-safe calls: it unlinks the paths
 * whose slot is in use and re-raises.  A slot's path is written before it
 * is marked in use, and both happen with the signals blocked, so the
 * handler never sees half a path nor misses a file mkstemp() created. */

#define TMP_SLOTS 8
static char tmp_paths[TMP_SLOTS][4096];
static volatile sig_atomic_t tmp_used[TMP_SLOTS];
static const int cleanup_signals[] = { SIGINT, SIGTERM, SIGHUP };

static void on_signal(int sig)
{
	for (int i = 0; i < TMP_SLOTS; i++)
		if (tmp_used[i])
			unlink(tmp_paths[i]);
	/* SA_RESETHAND restored the default action: this kills us once the
	 * handler returns and the signal is unblocked */
	raise(sig);
}

static void install_handlers(void)
{
	static bool done;
	struct sigaction sa, old;

	if (done)
		return;
	done = true;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof cleanup_signals / sizeof cleanup_signals[0]; i++) {
		/* a signal ignored from the start (nohup, a background job)
		 * stays ignored */
		if (sigaction(cleanup_signals[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
			sigaction(cleanup_signals[i], &sa, NULL);
	}
}

static void block_signals(bool block, sigset_t *saved)
{
	sigset_t set;

	if (!block) {
		sigprocmask(SIG_SETMASK, saved, NULL);
		return;
	}
	sigemptyset(&set);
	for (size_t i = 0; i < sizeof cleanup_signals / sizeof cleanup_signals[0]; i++)
		sigaddset(&set, cleanup_signals[i]);
	sigprocmask(SIG_BLOCK, &set, saved);
}

/* Create the temporary file o->tmp (a template) and register it; returns
 * the fd or -1 with errno set. */
static int tmp_create(struct cli_out *o)
{
	sigset_t saved;
	int fd, e, slot = -1;

	install_handlers();
	block_signals(true, &saved);
	for (int i = 0; i < TMP_SLOTS && slot < 0; i++)
		if (!tmp_used[i])
			slot = i;
	if (slot < 0) {
		block_signals(false, &saved);
		errno = EMFILE;
		return -1;
	}
	fd = mkstemp(o->tmp);
	e = errno;
	if (fd >= 0) {
		memcpy(tmp_paths[slot], o->tmp, sizeof o->tmp);
		tmp_used[slot] = 1;
		o->slot = slot;
	}
	block_signals(false, &saved);
	errno = e;
	return fd;
}

/* Rename (to != NULL) or remove the temporary file and release its slot,
 * with the signals blocked.  Returns rename()'s result. */
static int tmp_finish(struct cli_out *o, const char *to)
{
	sigset_t saved;
	int rc = 0, e = 0;

	block_signals(true, &saved);
	if (to) {
		rc = rename(o->tmp, to);
		e = errno;
		if (rc != 0)
			unlink(o->tmp);
	} else {
		unlink(o->tmp);
	}
	if (o->slot >= 0)
		tmp_used[o->slot] = 0;
	o->slot = -1;
	block_signals(false, &saved);
	errno = e;
	return rc;
}

/* --- closed pipes -------------------------------------------------------- */

/* fd is a pipe or socket whose reader has gone (poll() reports an error or
 * hang-up on a write end then). */
static bool reader_gone(int fd)
{
	struct stat st;
	struct pollfd p = { .fd = fd, .events = POLLOUT };

	if (fd < 0 || fstat(fd, &st) != 0 || !(S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)))
		return false;
	return poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP));
}

/* --- outputs ------------------------------------------------------------- */

int cli_out_open(struct cli_out *o, const char *path)
{
	const char *slash;
	struct known k;
	struct stat st;
	int fd, rc;

	memset(o, 0, sizeof *o);
	o->slot = -1;
	if (!path || strcmp(path, "-") == 0) {
		o->f = stdout;
		o->is_stdout = true;
		return 0;
	}
	if (strlen(path) + 16 >= sizeof o->tmp)
		return cli_fail(FAST_EUSAGE, "output path too long");
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return cli_fail(FAST_EUSAGE, "output '%.200s' is a directory", path);
	snprintf(o->path, sizeof o->path, "%s", path);
	if (written_in_place(path)) {
		/* a device, pipe or socket (/dev/full, a FIFO, /dev/stdout) is
		 * written in place: renaming over it would replace the node */
		o->f = fopen(path, "w");
		if (!o->f)
			return cli_fail(FAST_EIO, "cannot open output '%.200s': %s", path,
					strerror(errno));
		o->direct = true;
		return 0;
	}
	if ((rc = check_known(path, &k)) != 0)
		return rc;
	slash = strrchr(path, '/');
	if (slash)
		snprintf(o->tmp, sizeof o->tmp, "%.*s/.%s.XXXXXX", (int)(slash - path), path,
			 slash + 1);
	else
		snprintf(o->tmp, sizeof o->tmp, ".%s.XXXXXX", path);
	fd = tmp_create(o);
	if (fd < 0)
		return cli_fail(FAST_EIO, "cannot create output '%.200s': %s", path, strerror(errno));
	o->f = fdopen(fd, "w");
	if (!o->f) {
		int e = errno;
		close(fd);
		tmp_finish(o, NULL);
		return cli_fail(FAST_EIO, "cannot create output '%.200s': %s", path, strerror(e));
	}
	known_add(&files_written, &k);
	return 0;
}

int cli_out_commit(struct cli_out *o)
{
	int bad, e;

	if (o->is_stdout)
		return cli_stdout_finish();
	if (o->direct) {
		bool gone;
		bad = fflush(o->f) != 0 || ferror(o->f);
		e = errno;
		gone = bad && reader_gone(fileno(o->f));
		if (fclose(o->f) != 0 && !bad)
			bad = 1, e = errno;
		o->f = NULL;
		return bad && !gone ? cli_fail(FAST_EIO, "writing '%.200s' failed: %s", o->path,
					       strerror(e))
				    : 0;
	}
	bad = fflush(o->f) != 0 || ferror(o->f);
	e = errno;
	if (!bad && fsync(fileno(o->f)) != 0 && errno != EINVAL)
		bad = 1, e = errno;
	if (fclose(o->f) != 0 && !bad)
		bad = 1, e = errno;
	o->f = NULL;
	if (bad) {
		tmp_finish(o, NULL);
		return cli_fail(FAST_EIO, "writing '%.200s' failed: %s", o->path, strerror(e));
	}
	/* mkstemp creates 0600: give the file the usual permissions */
	{
		mode_t um = umask(0);
		umask(um);
		chmod(o->tmp, 0666 & ~um);
	}
	if (tmp_finish(o, o->path) != 0)
		return cli_fail(FAST_EIO, "cannot rename output into '%.200s': %s", o->path,
				strerror(errno));
	return 0;
}

void cli_out_abort(struct cli_out *o)
{
	if (!o || o->is_stdout || !o->f)
		return;
	fclose(o->f);
	o->f = NULL;
	if (!o->direct)
		tmp_finish(o, NULL);
}

int cli_out_fail(struct cli_out *o, const struct fast_err *err)
{
	bool gone = o->f && ferror(o->f) && reader_gone(fileno(o->f));

	cli_out_abort(o);
	return gone ? 0 : cli_report(err);
}

int cli_stdout_finish(void)
{
	static bool reported;
	int e;

	if (fflush(stdout) == 0 && !ferror(stdout))
		return 0;
	e = errno;
	if (reader_gone(STDOUT_FILENO))
		return 0;
	if (reported)
		return 4;
	reported = true;
	return cli_fail(FAST_EIO, "writing to standard output failed: %s", strerror(e));
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
