/*
 * cli.h - what every subcommand shares: option scanning, the common input
 * options of the command-line contract (docs/DESIGN.md), loading inputs,
 * safe output files, and reporting errors with the contract's exit codes.
 * One header, three modules: option scanning, common inputs, errors,
 * progress and exit status in cli.c; loading inputs in cli_load.c; the
 * files a command reads and writes, and outputs, in cli_files.c.
 *
 * Exit codes: 0 ok; 1 a check failed; 2 usage; 3 bad input; 4 runtime.
 * Only cmd/ prints and exits.
 */
#ifndef FAST_CLI_H
#define FAST_CLI_H

#include <stdio.h>

#include "fast/common.h"
#include "fast/topo.h"
#include "fast/traffic.h"
#include "fast/plan.h"

/* A subcommand: a row of the dispatch table in main.c, git-style.  flags
 * say which of the common inputs (cli_inputs_option) it takes: any other
 * is a usage error where it is scanned ("--plan does not apply here"). */
enum cmd_flag {
	CMD_TOPO = 1u << 0,    /* --topo, --preset, --servers, --gpus */
	CMD_TRAFFIC = 1u << 1, /* --traffic */
	CMD_MATRIX = 1u << 2,  /* --matrix */
	CMD_PLAN = 1u << 3,    /* --plan */
	CMD_OUT = 1u << 4,     /* -o, --output */
	CMD_ALGO = 1u << 5,    /* compiles: --help lists the algorithm table (cli_algo.h) */
	CMD_STREAM = 1u << 6,  /* stdout is rows written as measured (nccl-tests' way),
				* never held (main.c): under mpirun a rank is killed
				* when another fails, and must not take its rows along */
};

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	unsigned flags;      /* enum cmd_flag */
	const char *summary; /* one line, for `fast --help` */
	const char *usage;   /* --help text (its first line is the short usage) */
};

/* The dispatch table lives in main.c; the entry after the last has a NULL
 * name. */
extern const struct cmd fast_commands[];
const struct cmd *cli_find_command(const char *name);
/* c's --help text: its usage, then what its flags add (CMD_ALGO). */
void cli_print_usage(const struct cmd *c, FILE *f);

/* --- option scanning ----------------------------------------------------
 * for (cli_begin(&s, argc, argv, cmd); cli_more(&s); ) {
 *	if (cli_inputs_option(&s, &in)) continue;
 *	if (cli_flag(&s, "--no-congestion")) { ...; continue; }
 *	if (cli_value(&s, "--algo", &algo)) continue;
 *	return cli_unknown(&s);
 * }
 * Values are taken as "--opt VALUE" or "--opt=VALUE".  Non-option words are
 * collected in s.pos (at most 8).  A usage error has already been reported
 * when s.failed is set: return 2.  `--help` prints the usage, sets s.help. */
struct cli_scan {
	int argc, i;
	char **argv;
	const struct cmd *cmd;
	const char *arg;     /* current argument */
	const char *pos[8];  /* positional words */
	int npos;
	bool failed, help;
	/* the option names tried on the current argument, for the "did you
	 * mean" of cli_unknown(): the option loop tries every name of the
	 * command before it gives up.  The pointers are kept, not the text:
	 * a name given to cli_flag()/cli_value() must outlive the loop (a
	 * literal, or a table's string; never a local buffer) */
	const char *tried[96];
	size_t ntried;
};
void cli_begin(struct cli_scan *s, int argc, char **argv, const char *cmdname);
/* Advance to the next option; handles --help and positionals itself. */
bool cli_more(struct cli_scan *s);
bool cli_flag(struct cli_scan *s, const char *name);
bool cli_value(struct cli_scan *s, const char *name, const char **out);
/* Typed values: a malformed value is a usage error (s->failed). */
bool cli_u32(struct cli_scan *s, const char *name, uint32_t min, uint32_t max, uint32_t *out);
bool cli_u64(struct cli_scan *s, const char *name, uint64_t *out);
bool cli_size(struct cli_scan *s, const char *name, uint64_t *out); /* 64M, 1GiB */
bool cli_double(struct cli_scan *s, const char *name, double min, double max, double *out);
/* Report "unknown option" (with the closest option the command knows,
 * when one is near: "did you mean '--traffic'?") and return 2. */
int cli_unknown(struct cli_scan *s);
/* The candidate closest to word (fast_suggest(): edit distance at most 2),
 * else NULL: the one "did you mean" of options, commands, presets and
 * algorithms. */
const char *cli_suggest(const char *word, const char *const *candidates, size_t n);
/* After the option loop: the exit status when the command ends here (2
 * after a usage error, 0 after --help, 2 with a message for a word that is
 * not an option when the command takes none), else -1: go on. */
int cli_end(const struct cli_scan *s, bool positionals);
/* Report a usage error (one line + short usage on stderr); returns 2. */
int cli_usage_error(const char *cmdname, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* --- common inputs ------------------------------------------------------- */
struct cli_inputs {
	const char *topo_path, *preset;
	uint32_t servers, gpus;  /* 0 = preset default */
	uint32_t nics;           /* --nics K: NICs per server (0 = the topology's) */
	uint32_t nnic;           /* --nic S:K=F overrides, in the order given */
	struct fast_nic_override nic[FAST_NIC_OVERRIDES_MAX];
	const char *traffic_path;
	int64_t matrix;          /* -1 = all */
	const char *plan_path;
	const char *out_path;    /* -o */
	bool json;
	struct fast_limits lim;
};
void cli_inputs_init(struct cli_inputs *in);
/* Consume one of --topo --preset --servers --gpus --nics --nic --traffic
 * --matrix --plan -o --json --max-gpus --max-traffic-bytes.  One the command's flags do
 * not include (struct cmd) is a usage error: s->failed. */
bool cli_inputs_option(struct cli_scan *s, struct cli_inputs *in);
/* The whole option loop of a command that takes the common inputs alone
 * (cli_inputs_option) and no positionals, into *in: as cli_end, -1 to go
 * on, else the exit status. */
int cli_scan_inputs(int argc, char **argv, const char *cmdname, struct cli_inputs *in);

/* Load the topology named by the inputs (a usage error if none was given
 * and required).  Returns an exit status (0 on success) after printing.
 *
 * The shape of a --preset: GPUs per server from --gpus, else the preset's;
 * servers from --servers, else, when a --traffic is given, from the
 * traffic's GPU count (a 16-GPU traffic on h200 is 2 x 8), else the
 * preset's.  A traffic whose GPU count is not a multiple of the GPUs per
 * server is refused (exit 3) with the flags that would fit it.  The
 * traffic read for its GPU count is kept for the cli_load_traffic() of
 * the same inputs, which takes it instead of reading the file again.
 * --nics K then sets the NICs per server and each --nic S:K=F overrides a
 * NIC's rate (a later one of the same NIC replaces a file's), and the
 * result is validated again (a server with every NIC down is refused). */
int cli_load_topo(const struct cli_inputs *in, struct fast_topo *out);
/* Load the traffic, check it against topo (when non-NULL) and keep only
 * --matrix when given.  Returns an exit status after printing.  A
 * mismatch with a --preset's shape names the --servers/--gpus that fit. */
int cli_load_traffic(const struct cli_inputs *in, const struct fast_topo *topo,
		     struct fast_traffic *out);
int cli_load_plans(const struct cli_inputs *in, struct fast_planset *out);
/* The plan serving matrix m of nmat loaded (index m of the traffic when
 * all are loaded, or the --matrix one): plan i serves matrix i, a plan file
 * for all matrices holds one plan per matrix.  NULL with a message in err
 * (FAST_EINPUT) when there is none. */
const struct fast_plan *cli_plan_for(const struct fast_planset *ps, const struct cli_inputs *in,
				     uint32_t m, uint32_t nmat, struct fast_err *err);

/* --- errors -------------------------------------------------------------- */
/* Print "fast: <category>: <message>" to stderr and return the exit status
 * of err->code. */
int cli_report(const struct fast_err *err);
int cli_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* --- the files a command reads and writes -------------------------------
 * One rule for every command and every output option (-o, --svg,
 * --timeline, --write-baseline, ...): an output may not be a file the
 * command reads, nor a file another of its outputs writes.  "The same
 * file" is the same device and inode for a file that exists (so a symlink,
 * "./x", "d/../x" or a hard link to an input is the same file) or the same
 * canonical path (realpath() of its directory plus its name) for one that
 * does not exist yet.  Devices, FIFOs and sockets (/dev/null, /dev/full, a
 * pipe) are written in place and never refused; "-" is standard output.
 *
 * cli_load_topo(), cli_load_traffic() and cli_load_plans() record their
 * file themselves; a command that reads any other file records it with
 * cli_input() before it opens its outputs.  The records live until the
 * process exits. */
void cli_input(const char *path);
/* Record every regular file under dir (symlinks followed) as an input:
 * for a command that reads a data set whose files only the library names
 * (fast trace import). */
void cli_input_tree(const char *dir);
/* The rule above for one output path, without opening it: 0, or 2 after
 * printing why it is refused (4 when the records ran out of memory). */
int cli_out_check(const char *path);
/* cli_out_check() for every output a command will write (NULL entries
 * are standard output), and none the same file as another: a command
 * with several outputs calls it before writing the first, so a refusal
 * leaves nothing written. */
int cli_outs_check(const char *const *paths, size_t n);

/* --- outputs ------------------------------------------------------------- */
/* Output to a temporary file in the target's directory, renamed into place
 * on commit; "-" (or a NULL path) is stdout.  The temporary file is
 * removed on failure and on SIGINT, SIGTERM and SIGHUP (unless the signal
 * was ignored when the command started, as for a background job): the
 * handler unlinks it and re-raises the signal with its default action, so
 * an interrupted command leaves neither a partial output nor a hidden
 * temporary file. */
struct cli_out {
	FILE *f;
	bool is_stdout;
	bool direct; /* not a regular file: written in place, no rename */
	int slot;    /* index of the temporary file in the signal registry */
	char path[4096];
	char tmp[4096];
};
/* Returns an exit status (0 ok, 2 refused by cli_out_check(), 4 cannot
 * create) after printing.  A successful open records the path as an
 * output of the command. */
int cli_out_open(struct cli_out *o, const char *path);
/* Flush, check for write errors, rename into place.  A failed write is
 * exit 4 and leaves no file behind. */
int cli_out_commit(struct cli_out *o);
/* Remove the temporary file (after a failure). NULL-safe. */
void cli_out_abort(struct cli_out *o);
/* Abort o after its writer failed with err and return the exit status:
 * err's (printed), or 0 quietly when o is a pipe whose reader has gone
 * (see below). */
int cli_out_fail(struct cli_out *o, const struct fast_err *err);

/* Check that stdout took everything: 0, or 4 after printing (once).
 *
 * A closed pipe is not an error: when standard output (or an output that
 * is a FIFO) is a pipe whose reader has gone, as in `fast ... | head -1`,
 * the reader has what it wanted; the command stops quietly and its exit
 * status is what it would have been otherwise (0 for a command that only
 * prints), so `set -o pipefail` scripts do not break.  Every other write
 * failure (a full disk, /dev/full, an I/O error) is exit 4. */
int cli_stdout_finish(void);

/* Standard output held until the command's exit status is known, so that
 * a failed command prints no partial result (main.c, around every
 * command).  cli_stdout_hold() makes descriptor 1 an unlinked temporary
 * file, or a memfd where none can be made (nothing is held when standard
 * output is closed or neither can be made: the output is then written as
 * it comes).
 * cli_stdout_release(status) puts the real standard output back and
 * copies what the command printed to it when status is 0 or 1 (a verdict
 * with its whole report), or drops it (2, 3, 4); returns
 * cli_stdout_finish()'s status, or 4 after printing when the held copy of
 * a result could not be written or read.  While held, an output path that names
 * standard output (/dev/stdout) is written as "-" is. */
void cli_stdout_hold(void);
int cli_stdout_release(int status);

/* --- progress -------------------------------------------------------------
 * What long work is doing: "\r<what> i/n" on stderr while it runs, only
 * when stderr is a terminal (a file or a pipe gets nothing; FAST_PROGRESS=1
 * forces it on, as under mpirun, whose ranks write stderr to a pipe, and
 * FAST_PROGRESS=0 off), at most ten
 * updates a second (the first always shows), the line cleared by
 * cli_progress_end() so that later output starts on a clean line.
 *
 *	struct cli_progress pr;
 *	cli_progress_begin(&pr, "compare", n);
 *	for (i = 0; i < n; i++) { work(i); cli_progress_step(&pr, i + 1); }
 *	cli_progress_end(&pr);
 *
 * Output printed in between (results on a terminal, a warning) follows
 * cli_progress_clear().  what is not copied. */
struct cli_progress {
	const char *what;
	uint64_t n;
	double last;  /* fast_now() of the last update; < 0: none yet */
	int width;    /* characters of the last update, to clear */
	bool on;
};
void cli_progress_begin(struct cli_progress *p, const char *what, uint64_t n);
void cli_progress_step(struct cli_progress *p, uint64_t done);
/* Erase the line (before printing results to a terminal); the next step
 * draws it again.  cli_progress_end() erases it for good. */
void cli_progress_clear(struct cli_progress *p);
void cli_progress_end(struct cli_progress *p);

/* --- exit status --------------------------------------------------------- */
/* The exit status of a command that ended with two statuses a then b (a
 * check verdict and a write, say): a failure to run, write, read or parse
 * (2, 3, 4) beats a failed check (1), which beats 0; between two of 2, 3
 * and 4 the first stands.  So a failing gate whose report cannot be
 * written exits 4, not 1. */
int cli_status(int a, int b);

#endif
