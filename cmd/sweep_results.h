/*
 * sweep_results.h - the results file of `fast sweep` (cmd/sweep.c): the
 * map from a case's key to its index, opening the file under its lock and
 * resuming from the rows already in it, appending a row crash-safely,
 * upgrading a file of a previous version and the final sort by case
 * index.  The file's columns are those of cmd/sweep_case.h; the locking
 * and crash-safety rules are described at the top of cmd/sweep.c.
 *
 * Every function returning int returns an exit status after printing
 * (0 ok), except sweep_keymap_build, which fills err instead.
 */
#ifndef FAST_CMD_SWEEP_RESULTS_H
#define FAST_CMD_SWEEP_RESULTS_H

#include "sweep_case.h"
#include "sweep_spec.h"

/* Key of every case of a spec, and an open-addressing index on them.
 * Owns its strings; sweep_keymap_free releases them. */
struct sweep_keymap {
	char **keys;     /* per case */
	uint64_t *slot;  /* case id + 1; 0 empty */
	size_t cap;
};

/* Returns 0, FAST_ENOMEM, or FAST_EINPUT when two cases of the spec have
 * the same key (they would run twice and leave one row); err is set. */
int sweep_keymap_build(const struct sweep_spec *s, const char *spec_path, struct sweep_keymap *km,
		       struct fast_err *err);
/* Case id of key, or -1. */
int64_t sweep_keymap_find(const struct sweep_keymap *km, const char *key);
/* Free the n keys of km and its index. */
void sweep_keymap_free(struct sweep_keymap *km, uint64_t n);

/* Take the lock on the results file (waiting while another sweep holds
 * it) and mark the cases already in it in done[0..ncases), counting them
 * in *resumed.  Drops a torn last line.  *version: the file's version (an
 * older one is upgraded by sweep_results_upgrade); *fd_out: its locked
 * O_APPEND descriptor. */
int sweep_results_open(const char *path, const struct sweep_keymap *km, uint64_t ncases,
		       uint8_t *done, uint64_t *resumed, int *version, int *fd_out);
/* One write(2) of the whole line on an O_APPEND descriptor, then
 * fdatasync: a row is in the file whole or not at all. */
int sweep_append_line(int fd, const char *line, size_t len);
/* Fill the label and ident of row r (identity columns filled by
 * sweep_spec_case) of algorithm variant a in group g, whose matrix is D. */
void sweep_case_measures(const struct sweep_spec *s, uint32_t g, uint32_t a, const struct fast_matrix *M,
			 const char *label, struct sweep_row *r);
/* Rewrite the results file of an older version (fd: its descriptor,
 * locked) in this version's columns before rows are appended to it. */
int sweep_results_upgrade(const char *path, int fd, const struct sweep_spec *s,
			  const struct sweep_keymap *km, int version);
/* Rewrite the file with rows sorted by case index, in this version's
 * columns (version: the file's).  Atomic: temporary file and rename. */
int sweep_results_sort(const char *path, const struct sweep_spec *s, const struct sweep_keymap *km,
		       int version);

#endif
