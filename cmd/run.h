/*
 * run.h - the parts of `fast run` (cmd/run.c) shared by its modules: the
 * options, the per-process context and one results row.  run.c parses the
 * command line, reads and agrees on the inputs across ranks and sets up the
 * executor; run_measure.c measures one row (one matrix at one size);
 * run_rows.c walks the matrices and the -b/-e/-f sizes and prints the rows.
 * Every function here is collective: every rank calls it alike.
 */
#ifndef FAST_CMD_RUN_H
#define FAST_CMD_RUN_H

#include "cli.h"
#include "fast/exec.h"

/* The command line (run.c parse()). */
struct run_opts {
	struct cli_inputs in;
	const char *algo, *backend;
	uint32_t iters, warmup, check;
	uint64_t minb, maxb, max_staging;
	uint32_t in_flight; /* --in-flight: 0 the backend's most */
	double factor;
	bool sweep;
	int device;
};

/* One rank's view of the run: its options, executor, topology and host. */
struct run_ctx {
	struct run_opts *o;
	struct fast_exec *x;
	struct fast_topo topo;
	int rank, size;
	const struct fast_plan *plan; /* replay */
	bool mpi;
	/* Memory is checked per machine (one kernel: run.c machines()), not
	 * per MPI host: the arrays have one entry per rank, owned here. */
	int *machine;                 /* the lowest rank on each rank's machine */
	uint64_t *mem_avail;          /* bytes each rank read as its machine's available; 0 = unknown */
	uint64_t *mem_need;           /* scratch: each rank's buffers and staging (2 per rank) */
	const char *mem_from;         /* where this rank's reading comes from */
	char host[64];                /* this rank's hostname, for messages */
	int machine_hosts;            /* distinct hostnames on this rank's machine */
};

/* One measured row (nccl-tests' columns), alike on every rank but
 * staging_rank. */
struct run_row {
	uint32_t matrix;
	char label[FAST_NAME_MAX];
	uint64_t size, total;
	double time_us, median_us, algbw, busbw, synth_us;
	uint64_t wrong, staging;
	uint64_t *staging_rank; /* per rank (rank 0 only; owned by the row) */
	uint32_t passes, waves;
	uint64_t hits, lookups;
	enum fast_traffic_kind moves; /* bytes, or the token groups of a dispatch / combine */
};

/* A failure said once: every rank learns the worst (largest) exit status
 * st of any rank, and one rank prints its err (see run_measure.c).
 * Returns that status. */
int run_report_agreed(const struct run_ctx *c, int st, const struct fast_err *err);
/* Measure one row: matrix D (ng x ng, every rank's copy alike) compiled or
 * replayed (c->plan), run -w + -n times and checked (-c); with m (token
 * traffic whose byte matrix is D, run_as_tokens) its groups instead.  out is written
 * (its staging_rank owned by the caller, freed even on failure); returns
 * the agreed exit status. */
int run_measure(struct run_ctx *c, uint32_t matrix, const char *label, const uint64_t *D,
		const struct fast_matrix *m, struct run_row *out);
/* Does matrix m run as tokens, m passed to run_measure (a token program
 * over its groups, buffers per group), rather than over its per-GPU byte
 * matrix?  When m is token traffic and not run by MPI_Alltoallv: with
 * plan (replayed, may be NULL) a token plan, on the fly an algorithm that
 * compiles token plans (fast, hier: deduplicated per server). */
bool run_as_tokens(const struct run_ctx *c, const struct fast_matrix *m,
		   const struct fast_plan *plan);
/* Bytes of memory this machine has available, for all its ranks together
 * ($FAST_MEM_AVAILABLE, else /proc/meminfo's MemAvailable, else the free
 * pages); 0 when unknown, *from says which. */
uint64_t run_host_mem_available(const char **from);
/* Every row of the run (each matrix of t, at each size of the sweep), with
 * the plan serving it from ps (NULL: compiled on the fly), printed by rank
 * 0 as it goes, then nccl-tests' closing lines.  Returns the exit status. */
int run_rows(struct run_ctx *c, const struct fast_traffic *t, const struct fast_planset *ps);

#endif
