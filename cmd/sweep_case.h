/*
 * sweep_case.h - one what-if case (plan, bound, simulate one matrix on one
 * topology with one algorithm) and its results row, shared by `fast
 * sweep` (cmd/sweep.c) and `fast gate` (cmd/gate.c), so that a gate
 * baseline and a sweep results file are the same CSV.
 *
 * Results CSV (one header line, then one line per case, comma separated,
 * no quoting: text fields never contain commas, quotes or newlines):
 *
 *   case         index of the case in the spec's Cartesian product
 *   key          the case's identity (every parameter, ';'-separated);
 *                a resumed sweep skips the keys already in the file
 *   topo         preset name or topology file name
 *   servers gpus_per_server gpus_total
 *   up_GBps out_GBps   scale-up / scale-out line rates used
 *   traffic      generator pattern with parameters, or trace:<file>
 *   seed         generator seed (0 for traces)
 *   size_bytes   mean per-GPU send bytes (the axis value for generated
 *                traffic; total / GPUs for traces)
 *   matrix label which matrix of the traffic
 *   algo options compiler and its options ("-" for defaults)
 *   status       ok, or error:<message>
 *   time_s       simulated completion time (seconds, as every time column)
 *   algbw_GBps busbw_GBps   nccl-tests definitions (sim.h)
 *   bound_s      the bound ratios divide by: the LP and closed form shifted
 *                by the latency every plan pays (bound.h bound_s; with the
 *                spec's "bound": "closed", the closed form shifted; empty
 *                when not computed)
 *   closed_s     closed-form bound
 *   ratio        time / bound (bound_s when computed, else closed form)
 *   rail_stages steps   plan shape
 *   synthesis_s  measured plan synthesis time (include/fast/eval.h: the
 *                median thread-CPU time of 15 compiles after a warm-up;
 *                auto: its decision's median plus the chosen schedule's;
 *                empty for a given plan)
 *   ident        16 hex digits naming what the row measured, whatever the
 *                file names: a hash of the topology's parameters, the
 *                matrix bytes, its index and label, the algorithm with
 *                every option (or "a given plan") and the simulator
 *                options (sweep_row_ident); empty when unknown.  `fast
 *                gate --baseline` matches rows by it and nothing else.
 *   time_with_synthesis_s   time_s + synthesis_s
 *   lp_s latency_s   the LP alone and the latency floor (bound.h)
 *
 * Numbers print with %.9g (empty when absent), so serial, forked and MPI
 * runs write identical rows apart from the two measured columns,
 * synthesis_s and time_with_synthesis_s (columns 25 and 27: the new column
 * went last so that the reproducible ones keep their places).  Lines end in "\n"; a
 * reader also takes "\r\n" (a CSV written by Python or a spreadsheet).
 *
 * Versions: the header line is the version.  Version 5 (this one) adds
 * lp_s and latency_s and makes bound_s the combined bound (before: the
 * LP); an older row upgraded by a sweep of its spec gets them from its
 * topology, one read otherwise keeps its LP as bound_s and lp_s, latency_s
 * empty.  Version 4 added
 * time_with_synthesis_s and measures synthesis_s as above (before: one
 * compile's wall time); a row of an older version reads with
 * time_with_synthesis_s = time_s + synthesis_s.  Version 3 named
 * the columns by the outputs' convention (times in seconds, `_s`; gpus ->
 * gpus_per_server, ngpus -> gpus_total, synth_us -> synthesis_s); version
 * 2 had the same columns with times in microseconds (time_us, bound_us,
 * closed_us, synth_us); version 1 had version 2's without ident
 * (sweep_csv_version tells them apart, so readers can name the fix).
 */
#ifndef FAST_CMD_SWEEP_CASE_H
#define FAST_CMD_SWEEP_CASE_H

#include <stdio.h>

#include "cli.h"
#include "fast/algo.h"
#include "fast/bound.h"
#include "fast/eval.h"
#include "fast/sim.h"

#define SWEEP_KEY_MAX 600
#define SWEEP_CSV_VERSION 5 /* the version sweep_csv_header is */
#define SWEEP_NCOLS 29
#define SWEEP_IDENT_LEN 16

extern const char sweep_csv_header[]; /* with the trailing newline */

/* The version of the results CSV whose text starts at text[0..len): 4
 * (sweep_csv_header), 3 (without time_with_synthesis_s), 2 (also in
 * microseconds), 1 (microseconds, without ident) or 0 (not a results
 * file).  *body receives the offset of the first row (after the
 * header's "\n" or "\r\n"). */
int sweep_csv_version(const char *text, size_t len, size_t *body);

struct sweep_row {
	uint64_t case_id;
	char key[SWEEP_KEY_MAX];
	char topo[FAST_NAME_MAX];
	uint32_t servers, gpus, ngpus;
	double up_GBps, out_GBps;
	char traffic[160];
	uint64_t seed, size_bytes;
	uint32_t matrix;
	char label[FAST_NAME_MAX];
	char algo[32], options[64];
	char status[160];
	double time_s, algbw_GBps, busbw_GBps, bound_s, closed_s, ratio; /* NaN: absent */
	uint32_t rail_stages, steps;
	double synth_s, time_with_synth_s;
	double lp_s, latency_s; /* NaN: absent (rows before version 5: latency) */
	char ident[SWEEP_IDENT_LEN + 1]; /* "" when unknown */
};

/* A row with every measured field absent. */
void sweep_row_init(struct sweep_row *r);
/* Format r as one CSV line ending in '\n' into buf; returns its length,
 * or 0 if it does not fit. */
size_t sweep_row_format(const struct sweep_row *r, char *buf, size_t len);
/* Parse one CSV line (without or with its '\n' or "\r\n").  Returns 0,
 * or -1 when the line does not have the columns of sweep_csv_header. */
int sweep_row_parse(const char *line, struct sweep_row *r);
/* The same for a line of a version-1 file, which may also hold rows of
 * version 2 (a version-2 sweep appended them): ident is left empty for a
 * version-1 row; *had_ident tells which it was.  Times in microseconds. */
int sweep_row_parse_v1(const char *line, struct sweep_row *r, bool *had_ident);
/* A line of a file of that version (1 to 5: sweep_csv_version), its
 * times converted to seconds; *had_ident (may be NULL) as above. */
int sweep_row_parse_version(const char *line, int version, struct sweep_row *r, bool *had_ident);
/* Replace characters that the CSV cannot carry (',', '"', newlines,
 * control characters) by '_' in s. */
void sweep_sanitize(char *s);

/* the case evaluator's modes (include/fast/eval.h) */
enum sweep_bound_mode {
	SWEEP_BOUND_LP = FAST_CASE_BOUND_LP,
	SWEEP_BOUND_CLOSED = FAST_CASE_BOUND_CLOSED,
	SWEEP_BOUND_NONE = FAST_CASE_BOUND_NONE,
};

struct sweep_eval {
	bool simulate;
	enum sweep_bound_mode bound;
	struct fast_sim_opts sim;
};
void sweep_eval_default(struct sweep_eval *e);

/* What a case runs: algo with options opts, or the plan given (given
 * non-NULL, view: its open view or NULL; algo names it, opts NULL). */
struct sweep_case_plan {
	const char *algo;
	const struct fast_algo_opts *opts;
	const struct fast_plan *given;
	const struct fast_plan_view *view;
};

/* Evaluate the case of row r (include/fast/eval.h's fast_case_eval): matrix
 * M bounded per e's mode unless *bounded (then shared's bound fields
 * are r's), compiled (cp), its synthesis timed and simulated; fill the
 * measured fields of r (time, bandwidths, stages, steps, synthesis, ratio,
 * status: the bound's error first, then the row's as "error:plan: ..." or
 * "error:sim: ...").  A bound made here goes to shared (its fields and
 * status) and sets *bounded, for the other cases of the matrix.  Returns
 * 0, or the negative error also recorded in r->status. */
int sweep_case_eval(const struct fast_topo *t, const struct fast_matrix *M,
		    const struct sweep_case_plan *cp, const struct sweep_eval *e,
		    struct sweep_row *shared, bool *bounded, struct sweep_row *r);

/* Fill r->ident from what the row measures: the topology's parameters
 * (not its name), matrix D's bytes, r->matrix, r->label, r->algo, the
 * algorithm options ao and the simulator options of e.  ao NULL: a given
 * plan (fast gate --plan), known only by the algorithm it names (its
 * "options" string also records choices the compiler made, such as the
 * stage count, so a changed plan would never meet its baseline).  Call
 * it with the identity columns filled. */
void sweep_row_ident(struct sweep_row *r, const struct fast_topo *t, const struct fast_matrix *M,
		     const struct fast_algo_opts *ao, const struct sweep_eval *e);

#endif
