/*
 * sweep_results.c - the results file of `fast sweep` (sweep_results.h):
 * which cases a file already holds (by key), its lock, resume after a torn
 * last line, crash-safe appends, the upgrade of a previous version's file
 * and the final sort by case index.  The sweep's scheduling of cases over
 * workers and ranks stays in cmd/sweep.c; this file only reads and writes
 * the CSV.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "lib/base/json.h"
#include "sweep_results.h"

/* Returns 0, FAST_ENOMEM, or FAST_EINPUT when two cases of the spec have
 * the same key (they would run twice and leave one row); err is set. */
int sweep_keymap_build(const struct sweep_spec *s, const char *spec_path, struct sweep_keymap *km,
		       struct fast_err *err)
{
	memset(km, 0, sizeof *km);
	km->keys = fast_calloc(s->ncases ? s->ncases : 1, sizeof *km->keys);
	for (km->cap = 64; km->cap < 2 * s->ncases; km->cap *= 2)
		;
	km->slot = fast_calloc(km->cap, sizeof *km->slot);
	if (!km->keys || !km->slot)
		return fast_err_set(err, FAST_ENOMEM, "out of memory");
	for (uint32_t g = 0; g < s->ngroups; g++)
		for (uint32_t k = 0; k < s->groups[g].ncases; k++) {
			struct sweep_row r;
			uint64_t id = s->groups[g].case0 + k;
			size_t h;
			sweep_spec_case(s, g, id, &r, NULL, NULL);
			km->keys[id] = strdup(r.key);
			if (!km->keys[id])
				return fast_err_set(err, FAST_ENOMEM, "out of memory");
			h = fast_hash_bytes(FAST_HASH_INIT, r.key, strlen(r.key)) & (km->cap - 1);
			while (km->slot[h]) {
				if (strcmp(km->keys[km->slot[h] - 1], r.key) == 0)
					return fast_err_set(err, FAST_EINPUT, "%s: cases %llu and %llu are the same case (%.300s): remove the duplicate axis value or traffic entry",
							spec_path, (unsigned long long)(km->slot[h] - 1),
							(unsigned long long)id, r.key);
				h = (h + 1) & (km->cap - 1);
			}
			km->slot[h] = id + 1;
		}
	return 0;
}

/* Case id of key, or -1. */
int64_t sweep_keymap_find(const struct sweep_keymap *km, const char *key)
{
	size_t h = fast_hash_bytes(FAST_HASH_INIT, key, strlen(key)) & (km->cap - 1);

	for (; km->slot[h]; h = (h + 1) & (km->cap - 1))
		if (strcmp(km->keys[km->slot[h] - 1], key) == 0)
			return (int64_t)(km->slot[h] - 1);
	return -1;
}

void sweep_keymap_free(struct sweep_keymap *km, uint64_t n)
{
	for (uint64_t i = 0; km->keys && i < n; i++)
		free(km->keys[i]);
	free(km->keys);
	free(km->slot);
}

/* Open (creating) path for appending and take its lock: exclusive, held
 * until the descriptor (and every copy of it in forked workers) closes.
 * Waits, after saying so, while another sweep holds it.  Returns an exit
 * status after printing. */
static int results_lock(const char *path, int *fd_out)
{
	bool told = false;

	for (;;) {
		struct stat held, named;
		int fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0666), rc;

		if (fd < 0)
			return cli_fail(FAST_EIO, "cannot open '%.200s': %s", path, strerror(errno));
		while ((rc = flock(fd, LOCK_EX | (told ? 0 : LOCK_NB))) != 0 && errno == EINTR)
			;
		if (rc != 0 && errno == EWOULDBLOCK) {
			cli_warn("%s: another fast sweep is writing it; waiting for it to finish", path);
			told = true;
			close(fd);
			continue;
		}
		if (rc != 0 && (errno == ENOLCK || errno == EOPNOTSUPP)) {
			/* a file system without locks: run as before, unguarded */
			cli_warn("%s: cannot lock it (%s): another sweep into it would lose rows",
				 path, strerror(errno));
			*fd_out = fd;
			return 0;
		}
		if (rc != 0) {
			rc = errno;
			close(fd);
			return cli_fail(FAST_EIO, "cannot lock '%.200s': %s", path, strerror(rc));
		}
		/* the lock must be on the file the path names now, not on one
		 * that the other sweep's final rewrite renamed away */
		if (fstat(fd, &held) == 0 && stat(path, &named) == 0 && held.st_dev == named.st_dev &&
		    held.st_ino == named.st_ino) {
			*fd_out = fd;
			return 0;
		}
		close(fd);
	}
}

/* Take the lock on the results file and mark the cases already in it.
 * Drops a torn last line.  *version: the file's version (an older one is
 * upgraded by results_sort).  Returns an exit status after printing. */
int sweep_results_open(const char *path, const struct sweep_keymap *km, uint64_t ncases,
		       uint8_t *done, uint64_t *resumed, int *version, int *fd_out)
{
	int fd = -1, rc;
	struct stat st;
	char *text = NULL;
	size_t len = 0, body = 0, hl = strlen(sweep_csv_header);
	struct fast_err err;
	uint64_t lineno = 1;

	*resumed = 0;
	*version = SWEEP_CSV_VERSION;
	if ((rc = results_lock(path, &fd)) != 0)
		return rc;
	if (fstat(fd, &st) != 0) {
		close(fd);
		return cli_fail(FAST_EIO, "cannot stat '%.200s': %s", path, strerror(errno));
	}
	if (st.st_size > 0 && fast_read_file(path, UINT64_C(1) << 34, &text, &len, &err) < 0) {
		close(fd);
		return cli_report(&err);
	}
	if (len > 0 && text[len - 1] != '\n') {
		char *nl = memrchr(text, '\n', len);
		size_t keep = nl ? (size_t)(nl - text) + 1 : 0;
		cli_warn("%s: dropping a torn last line (%zu bytes, no newline)", path, len - keep);
		if (ftruncate(fd, (off_t)keep) != 0) {
			free(text);
			close(fd);
			return cli_fail(FAST_EIO, "cannot truncate '%.200s': %s", path, strerror(errno));
		}
		len = keep;
		text[len] = '\0';
	}
	if (len == 0) {
		if (write(fd, sweep_csv_header, hl) != (ssize_t)hl || fdatasync(fd) != 0) {
			free(text);
			close(fd);
			return cli_fail(FAST_EIO, "writing '%.200s' failed: %s", path, strerror(errno));
		}
	} else if ((*version = sweep_csv_version(text, len, &body)) == 0) {
		free(text);
		close(fd);
		return cli_fail(FAST_EINPUT, "%s:1: not a results file with the columns of this version (header differs)", path);
	} else {
		if (*version < SWEEP_CSV_VERSION)
			cli_warn("%s: a results file of version %d: its rows are kept, in this version's columns%s",
				 path, *version, *version == 1 ? " and with the ident column" : "");
		for (char *p = text + body; *p;) {
			char *nl = strchr(p, '\n');
			struct sweep_row r;
			int64_t id;
			*nl = '\0';
			lineno++;
			if (sweep_row_parse_version(p, *version, &r, NULL) < 0) {
				free(text);
				close(fd);
				return cli_fail(FAST_EINPUT, "%s:%llu: malformed row", path,
						(unsigned long long)lineno);
			}
			id = sweep_keymap_find(km, r.key);
			if (id >= 0 && (uint64_t)id < ncases && !done[id]) {
				done[id] = 1;
				(*resumed)++;
			}
			p = nl + 1;
		}
	}
	free(text);
	*fd_out = fd;
	return 0;
}

/* One write(2) of the whole line on an O_APPEND descriptor, then
 * fdatasync: a row is in the file whole or not at all. */
int sweep_append_line(int fd, const char *line, size_t len)
{
	ssize_t n = write(fd, line, len);

	if (n != (ssize_t)len)
		return cli_fail(FAST_EIO, "appending a result row failed: %s",
				n < 0 ? strerror(errno) : "short write");
	if (fdatasync(fd) != 0 && errno != EINVAL)
		return cli_fail(FAST_EIO, "syncing the results failed: %s", strerror(errno));
	return 0;
}

/* --- identity of a case ----------------------------------------------- */

/* Fill the label and ident of row r (identity columns filled by
 * sweep_spec_case) of algorithm variant a in group g, whose matrix is M. */
void sweep_case_measures(const struct sweep_spec *s, uint32_t g, uint32_t a, const struct fast_matrix *M,
			 const char *label, struct sweep_row *r)
{
	snprintf(r->label, sizeof r->label, "%s", label);
	sweep_sanitize(r->label);
	sweep_row_ident(r, &s->topos[s->groups[g].topo].topo, M, &s->algos[a].opts, &s->eval);
}

/* The traffic of the last group asked for (rows come in case order). */
struct gen_cache {
	uint32_t g;
	bool ok;
	struct fast_traffic t;
};

/* The group of case id: the last with case0 <= id. */
static uint32_t group_of(const struct sweep_spec *s, uint64_t id)
{
	uint32_t lo = 0, hi = s->ngroups;

	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (s->groups[mid].case0 <= id)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* A row of a file before version 5 (bound_s and lp_s the LP; with "bound":
 * "closed" the closed form alone) of case id: the combined bound from its
 * topology, and the ratio over it. */
static void upgrade_bound(const struct sweep_spec *s, uint64_t id, struct sweep_row *r)
{
	struct fast_bound b;

	if (isnan(r->lp_s) && isnan(r->closed_s))
		return;
	memset(&b, 0, sizeof b);
	b.lp_s = isnan(r->lp_s) ? 0.0 : r->lp_s;
	b.closed_s = isnan(r->closed_s) ? 0.0 : r->closed_s;
	fast_bound_latency(&b, &s->topos[s->groups[group_of(s, id)].topo].topo);
	r->bound_s = b.bound_s;
	r->latency_s = b.latency_s;
	if (!isnan(r->time_s) && b.bound_s > 0)
		r->ratio = r->time_s / b.bound_s;
}

/* The ident of case id, for a row of a previous-version file; "" when its
 * traffic cannot be generated. */
static void upgrade_ident(const struct sweep_spec *s, uint64_t id, struct gen_cache *gc,
			  char *ident, size_t len)
{
	uint32_t lo = group_of(s, id), m, a;
	struct sweep_row r;
	const struct fast_matrix *M;
	const char *label = NULL;
	struct fast_err err;

	if (gc->g != lo) {
		fast_traffic_free(&gc->t);
		gc->g = lo;
		gc->ok = sweep_spec_traffic(s, lo, &gc->t, &err) == 0;
	}
	ident[0] = '\0';
	sweep_spec_case(s, lo, id, &r, &m, &a);
	if (!gc->ok || !(M = sweep_spec_matrix(s, lo, &gc->t, m, &label)))
		return;
	sweep_case_measures(s, lo, a, M, label, &r);
	snprintf(ident, len, "%s", r.ident);
}

/* Rewrite the results file of an older version (fd: its descriptor,
 * locked) in this version's columns before rows are appended to it, so a
 * file never mixes versions: version-1 rows of cases of the spec get their
 * ident, other rows keep theirs (or none).  One write(2) of the whole
 * file after truncating it.  Returns an exit status after printing. */
/* Replace the file's text by buf without losing it on a full disk: the
 * room for the new text is reserved first (posix_fallocate, the old text
 * still in place; on failure the file is left as it was), then the text is
 * written over it from offset 0 through a second descriptor (fd is
 * O_APPEND, and its flock stays held) and the file cut to its length.  The
 * file cannot be renamed over instead: the lock lives on this inode. */
static int rewrite_in_place(const char *path, int fd, const char *buf, size_t blen)
{
	struct stat st;
	int wfd, e;

	if (fstat(fd, &st) != 0)
		return cli_fail(FAST_EIO, "upgrading '%.200s': %s", path, strerror(errno));
	if ((e = posix_fallocate(fd, 0, (off_t)blen)) != 0) {
		/* cut what a partial reservation may have added: the old text stays */
		bool cut = ftruncate(fd, st.st_size) == 0;
		return cli_fail(FAST_EIO, "upgrading '%.200s' needs %zu bytes: %s; its rows are unchanged%s",
				path, blen, strerror(e), cut ? "" : " (zero bytes may follow them)");
	}
	wfd = open(path, O_WRONLY | O_CLOEXEC);
	if (wfd < 0 || pwrite(wfd, buf, blen, 0) != (ssize_t)blen || ftruncate(wfd, (off_t)blen) != 0 ||
	    fdatasync(wfd) != 0) {
		e = errno;
		if (wfd >= 0)
			close(wfd);
		return cli_fail(FAST_EIO, "upgrading '%.200s' failed: %s", path, strerror(e));
	}
	close(wfd);
	return 0;
}

int sweep_results_upgrade(const char *path, int fd, const struct sweep_spec *s,
			  const struct sweep_keymap *km, int version)
{
	struct gen_cache gc = { UINT32_MAX, false, { 0 } };
	char *text = NULL, *buf = NULL, row[4096];
	size_t len, body = 0, blen = 0;
	struct fast_err err;
	FILE *mem;
	int rc = 0;

	if (fast_read_file(path, UINT64_C(1) << 34, &text, &len, &err) < 0)
		return cli_report(&err);
	sweep_csv_version(text, len, &body);
	if (!(mem = open_memstream(&buf, &blen))) {
		free(text);
		return cli_fail(FAST_ENOMEM, "out of memory");
	}
	fputs(sweep_csv_header, mem);
	for (char *p = text + body; *p;) {
		char *nl = strchr(p, '\n');
		struct sweep_row r;
		bool had = true;
		int64_t id;
		if (!nl)
			break;
		*nl = '\0';
		if (sweep_row_parse_version(p, version, &r, &had) == 0) {
			id = sweep_keymap_find(km, r.key);
			if (!had && id >= 0 && (uint64_t)id < s->ncases)
				upgrade_ident(s, (uint64_t)id, &gc, r.ident, sizeof r.ident);
			if (version < 5 && id >= 0 && (uint64_t)id < s->ncases)
				upgrade_bound(s, (uint64_t)id, &r);
			if (sweep_row_format(&r, row, sizeof row))
				fputs(row, mem);
		}
		p = nl + 1;
	}
	fast_traffic_free(&gc.t);
	free(text);
	if (fclose(mem) != 0 || !buf) {
		free(buf);
		return cli_fail(FAST_ENOMEM, "out of memory");
	}
	rc = rewrite_in_place(path, fd, buf, blen);
	free(buf);
	return rc;
}

struct line {
	uint64_t order;
	char *full, *rest; /* the line; after its case column */
	bool had_ident;    /* false: a row of a previous-version file */
};

static int cmp_line(const void *a, const void *b)
{
	const struct line *x = a, *y = b;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* Rewrite the file with rows sorted by case index (rows of keys the spec
 * no longer has keep their order, after the others; duplicates of a key
 * are dropped), in this version's columns (version: the file's).  Atomic:
 * temporary file and rename. */
int sweep_results_sort(const char *path, const struct sweep_spec *s, const struct sweep_keymap *km,
		       int version)
{
	char *text = NULL;
	size_t len, body = 0, n = 0, cap = 0;
	uint64_t ncases = s->ncases;
	struct line *lines = NULL;
	uint8_t *seen = fast_calloc(ncases ? ncases : 1, 1);
	struct gen_cache gc = { UINT32_MAX, false, { 0 } };
	struct fast_err err;
	struct cli_out out;
	uint64_t extra = 0;
	int rc;

	if (!seen)
		return cli_fail(FAST_ENOMEM, "out of memory");
	if (fast_read_file(path, UINT64_C(1) << 34, &text, &len, &err) < 0) {
		free(seen);
		return cli_report(&err);
	}
	sweep_csv_version(text, len, &body);
	for (char *p = text + body; *p;) {
		char *nl = strchr(p, '\n');
		char *comma = strchr(p, ',');
		struct sweep_row r;
		bool had = true;
		int64_t id;
		if (!nl)
			break;
		*nl = '\0';
		if (nl > p && nl[-1] == '\r')
			nl[-1] = '\0';
		if (sweep_row_parse_version(p, version, &r, &had) == 0 &&
		    comma) {
			id = sweep_keymap_find(km, r.key);
			if (id < 0 || !seen[id]) {
				if (n == cap) {
					cap = cap ? cap * 2 : 1024;
					lines = fast_reallocarray(lines, cap, sizeof *lines);
					if (!lines) {
						free(text);
						free(seen);
						return cli_fail(FAST_ENOMEM, "out of memory");
					}
				}
				if (id >= 0)
					seen[id] = 1;
				lines[n].order = id >= 0 ? (uint64_t)id : ncases + extra++;
				lines[n].full = p;
				lines[n].rest = comma + 1;
				lines[n].had_ident = had;
				n++;
			}
		}
		p = nl + 1;
	}
	qsort(lines, n, sizeof *lines, cmp_line);
	if ((rc = cli_out_open(&out, path)) == 0) {
		fputs(sweep_csv_header, out.f);
		for (size_t i = 0; i < n; i++) {
			char ident[SWEEP_IDENT_LEN + 1] = "";
			const char *sep = lines[i].had_ident ? "" : ",";
			if (lines[i].order < ncases) {
				if (!lines[i].had_ident)
					upgrade_ident(s, lines[i].order, &gc, ident, sizeof ident);
				fprintf(out.f, "%llu,%s%s%s\n", (unsigned long long)lines[i].order,
					lines[i].rest, sep, ident);
			} else { /* a key the spec no longer has: the row as it was */
				fprintf(out.f, "%s%s\n", lines[i].full, sep);
			}
		}
		rc = cli_out_commit(&out);
	}
	fast_traffic_free(&gc.t);
	free(lines);
	free(text);
	free(seen);
	return rc;
}
