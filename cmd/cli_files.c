/*
 * cli_files.c - the files a command reads and writes (see cli.h): the rule
 * that an output is neither an input nor another output (by device and
 * inode, else by canonical path), outputs written to a temporary file and
 * renamed into place, the signal handlers that remove that temporary file,
 * and the closed-pipe rule for standard output and FIFOs.
 */
#define _GNU_SOURCE
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* Standard output while it is held (cli_stdout_hold()): the real one,
 * moved aside to a descriptor of its own, and the temporary file that
 * stands in for it on descriptor 1 (its device and inode tell a path that
 * names it, /dev/stdout, /dev/fd/1).  held_real < 0: not held. */
static int held_real = -1, held_tmp = -1;
static dev_t held_dev;
static ino_t held_ino;

/* path names standard output: "-", NULL, or while standard output is held
 * a path that opens its temporary file (/dev/stdout, /proc/self/fd/1),
 * which must be written as stdout is, not truncated or renamed over. */
static bool names_stdout(const char *path)
{
	struct stat st;

	return !path || strcmp(path, "-") == 0 ||
	       (held_real >= 0 && stat(path, &st) == 0 && st.st_dev == held_dev &&
		st.st_ino == held_ino);
}

/* An output written in place (a device, FIFO or socket) or standard
 * output: outside the rule. */
static bool written_in_place(const char *path)
{
	struct stat st;

	return names_stdout(path) ||
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
	if (names_stdout(path)) {
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

/* --- standard output, held until the command ends ------------------------
 * A command prints its result as it goes (a table row, a JSON element per
 * plan) and may still fail after the first line: a plan that needs its
 * traffic, a matrix out of range, a case late in a loop.  Rather than each
 * command building its document before printing it, descriptor 1 is a
 * temporary file while the command runs, and the whole of it is copied to
 * the real standard output when the command ends with a result (0, or 1
 * for a verdict: a failed check, a gate over its limit, whose report is
 * whole and is the answer); a failure (2, 3, 4) throws it away.  Holding
 * the descriptor, not the FILE, catches every writer alike (printf, a
 * library writing to stdout, an output named "-" or /dev/stdout). */

void cli_stdout_hold(void)
{
	struct stat st;
	FILE *tmp;

	/* a closed standard output stays closed: its writes fail as before
	 * (and the temporary file must not take descriptor 1 by accident) */
	if (held_real >= 0 || fcntl(STDOUT_FILENO, F_GETFD) < 0)
		return;
	fflush(stdout);
	/* descriptors of our own, above 2 (0 or 2 may be closed, and
	 * tmpfile() may have taken one), closed in children that exec */
	tmp = tmpfile();
	if (tmp) {
		held_tmp = fcntl(fileno(tmp), F_DUPFD_CLOEXEC, 3);
		fclose(tmp);
	}
#ifdef MFD_CLOEXEC
	if (held_tmp < 0) { /* no writable temporary directory: memory */
		int fd = memfd_create("fast-stdout", MFD_CLOEXEC);
		if (fd >= 0) {
			held_tmp = fcntl(fd, F_DUPFD_CLOEXEC, 3);
			close(fd);
		}
	}
#endif
	if (held_tmp < 0)
		return; /* nowhere to hold it: written as it comes */
	held_real = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
	if (held_real < 0 || fstat(held_tmp, &st) != 0 || dup2(held_tmp, STDOUT_FILENO) < 0) {
		close(held_tmp);
		if (held_real >= 0)
			close(held_real);
		held_tmp = held_real = -1;
		return;
	}
	held_dev = st.st_dev;
	held_ino = st.st_ino;
}

int cli_stdout_release(int status)
{
	char buf[1 << 16];
	bool bad;
	ssize_t n = 0;
	int e;

	if (held_real < 0)
		return cli_stdout_finish();
	bad = fflush(stdout) != 0 || ferror(stdout);
	e = errno;
	dup2(held_real, STDOUT_FILENO);
	close(held_real);
	held_real = -1;
	clearerr(stdout);
	if (status != 0 && status != 1) {
		/* a failure: its result goes, and so does a failure to hold it */
		close(held_tmp);
		held_tmp = -1;
		return cli_stdout_finish();
	}
	if (!bad && lseek(held_tmp, 0, SEEK_SET) != 0)
		bad = true, e = errno;
	if (!bad) {
		while ((n = read(held_tmp, buf, sizeof buf)) != 0) {
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0 || fwrite(buf, 1, (size_t)n, stdout) != (size_t)n)
				break;
		}
		if (n < 0)
			bad = true, e = errno;
	}
	close(held_tmp);
	held_tmp = -1;
	if (bad)
		return cli_fail(FAST_EIO, "holding standard output failed: %s", strerror(e));
	return cli_stdout_finish();
}
