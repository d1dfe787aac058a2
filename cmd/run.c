/*
 * run.c - `fast run`: the MPI executor's benchmark harness (under mpirun,
 * one rank per GPU).  It replays a plan file or compiles plans on the fly
 * from every rank's send counts, times the all-to-all(v) like nccl-tests
 * (-n iterations after -w warm-ups, -c verification, -b/-e/-f sweeps) and
 * prints nccl-tests' columns, aggregated over ranks (the slowest rank's
 * time), plus synthesis time, staging and plan-cache hits.
 *
 * `fast run` is the only subcommand that calls MPI_Init.  Every decision
 * that could split the ranks (bad input on one of them, counts that do not
 * match) is agreed with MPI_Allreduce before any point-to-point traffic, so
 * a failure ends every rank with the same exit status instead of a hang.
 * At start the ranks compare the options that decide which collectives run
 * and a hash of their inputs' contents (fast_exec_agree); a failure is said
 * once, by the lowest rank that has it (report_agreed).
 */
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#include "builtin.h"
#include "cli.h"
#include "cli_algo.h"
#include "exec/exec.h"
#include "lib/json.h"
#include "lib/algo.h"

const char cmd_run_usage[] =
	"mpirun -np NG fast run (--topo FILE | --preset NAME [--servers N] [--gpus G])\n"
	"       (--plan FILE | --algo fast|fanout|nccl|pxn|spreadout|hier|auto|mpi)\n"
	"       --traffic FILE [--matrix I] [--backend host|cuda|hip] [-n ITERS] [-w WARMUP]\n"
	"       [-c 0|1] [-b MIN -e MAX -f FACTOR] [--max-staging BYTES] [--json]\n"
	"\n"
	"Run all-to-all(v) traffic over MPI, one rank per GPU: rank r is GPU r of the\n"
	"topology, on server r / G (several emulated servers may share one host).\n"
	"\n"
	"  --plan FILE        replay plans from a file (the plan serving each matrix)\n"
	"  --algo NAME        compile on the fly (default fast): each rank takes its own\n"
	"                     row of the matrix (its send counts), the rows are gathered\n"
	"                     with MPI_Allgather, each rank checks what it will receive\n"
	"                     against its column, and every rank compiles the same plan\n"
	"                     (checked by plan hash); `auto` chooses per matrix from\n"
	"                     the gathered matrix alone, so every rank chooses the same\n"
	"                     schedule (the plan hash names it); `mpi` runs MPI_Alltoallv\n"
	"                     instead\n"
	"  --traffic FILE     traffic (JSON or nccl-tests matrix); every matrix in turn\n"
	"                     unless --matrix I\n"
	"  --backend NAME     host (CPU memory, default), cuda or hip (GPU builds:\n"
	"                     make GPU=cuda|hip)\n"
	"  -n ITERS           timed iterations (default 20)\n"
	"  -w WARMUP          untimed warm-up iterations (default 5)\n"
	"  -c 0|1             verify the received bytes (default 1): every byte carries a\n"
	"                     pattern of (source, destination, offset); #wrong counts bad\n"
	"                     bytes over all ranks and any wrong byte makes the exit status 1\n"
	"  -b MIN -e MAX -f F sweep sizes MIN, MIN*F, ... <= MAX (nccl-tests' series: MAX\n"
	"                     only when it lands on it) by scaling the matrix so that its\n"
	"                     largest per-GPU send or receive total is exactly the size;\n"
	"                     compiled anew at each size, so not with --plan (a plan's\n"
	"                     byte counts are fixed)\n"
	"  --max-staging B    cap staging bytes per rank: the plan then runs in passes,\n"
	"                     each on a slice of every message\n"
	"  --device D         GPU backends: device ordinal (default local rank mod count)\n"
	"  --json             machine-readable results\n"
	"\n"
	"Columns (nccl-tests' definitions): size = largest per-GPU max(send, receive)\n"
	"bytes, a GPU's chunk to itself included (as fast sim counts it), count =\n"
	"elements (bytes), time = mean over iterations of the slowest rank (us),\n"
	"median likewise, algbw = size / time, busbw = algbw * (n-1)/n,\n"
	"#wrong = bad bytes over all ranks, synth = plan compile + program build of the\n"
	"slowest rank (us; 0 when cached), staging = largest staging arena of a rank,\n"
	"cache = plan-cache hits / lookups of rank 0 over the run.  The closing lines\n"
	"are nccl-tests': '# Out of bounds values : N OK|FAILED' and '# Avg bus\n"
	"bandwidth    : B' (the mean busbw of the rows; with NCCL_TESTS_MIN_BW=GBps\n"
	"set, OK or FAILED and exit 1 below 90% of it).\n"
	"Memory: before a row allocates anything, each rank's buffers, their host\n"
	"copies and its staging arena are checked against its share of the host's\n"
	"MemAvailable (FAST_MEM_AVAILABLE=BYTES overrides it); a row that does not fit\n"
	"is refused (exit 3) with a --max-staging or a size that fits every rank.\n"
	"Progress (rows done) on stderr of rank 0 when it is a terminal; under mpirun,\n"
	"whose ranks write stderr to a pipe, with FAST_PROGRESS=1 (mpirun -x).\n"
	"Every rank must be given the same options (but --device) and inputs: they\n"
	"are compared at start, and ranks that disagree stop with one message.\n"
	"Exit: 0 ok, 1 wrong bytes or a plan the checker refuses, 2 usage (also\n"
	"options that differ between ranks), 3 bad input (also inputs whose contents\n"
	"differ between ranks, a plan file without a plan for every matrix), 4 MPI\n"
	"or device failure.\n";

struct opts {
	struct cli_inputs in;
	const char *algo, *backend;
	uint32_t iters, warmup, check;
	uint64_t minb, maxb, max_staging;
	double factor;
	bool sweep;
	int device;
};

static int parse(int argc, char **argv, struct opts *o, bool *help)
{
	struct cli_scan s;
	int end;
	uint32_t dev = UINT32_MAX;
	bool have_b = false, have_e = false, have_f = false;

	memset(o, 0, sizeof *o);
	cli_inputs_init(&o->in);
	o->iters = 20;
	o->warmup = 5;
	o->check = 1;
	o->factor = 2;
	o->device = -1;
	for (cli_begin(&s, argc, argv, "run"); cli_more(&s);) {
		if (cli_inputs_option(&s, &o->in) || cli_value(&s, "--algo", &o->algo) ||
		    cli_value(&s, "--backend", &o->backend) ||
		    cli_u32(&s, "-n", 1, 1000000, &o->iters) ||
		    cli_u32(&s, "-w", 0, 1000000, &o->warmup) || cli_u32(&s, "-c", 0, 1, &o->check) ||
		    cli_size(&s, "--max-staging", &o->max_staging) ||
		    cli_u32(&s, "--device", 0, 1 << 16, &dev))
			continue;
		if (cli_size(&s, "-b", &o->minb)) {
			have_b = true;
			continue;
		}
		if (cli_size(&s, "-e", &o->maxb)) {
			have_e = true;
			continue;
		}
		if (cli_double(&s, "-f", 1.0000001, 1e6, &o->factor)) {
			have_f = true;
			continue;
		}
		return cli_unknown(&s);
	}
	*help = s.help;
	if ((end = cli_end(&s, false)) >= 0)
		return end;
	if (dev != UINT32_MAX)
		o->device = (int)dev;
	if (!o->backend)
		o->backend = "host";
	if (o->in.plan_path && o->algo)
		return cli_usage_error("run", "give either --plan or --algo, not both");
	if (!o->in.plan_path && !o->algo)
		o->algo = "fast";
	static const char *const mpi[] = { "mpi" }; /* MPI_Alltoallv itself */

	if (o->algo && (end = cli_algo_known("run", NULL, o->algo, mpi, 1)) != 0)
		return end;
	if (!o->in.traffic_path)
		return cli_usage_error("run", "no traffic: give --traffic FILE");
	if (have_b || have_e || have_f) {
		if (!have_b || !have_e)
			return cli_usage_error("run", "a sweep needs both -b MIN and -e MAX");
		if (o->minb == 0 || o->maxb < o->minb)
			return cli_usage_error("run", "-b/-e: need 0 < MIN <= MAX");
		/* a plan's steps carry byte counts for its own matrix: scaling
		 * them would slice every chunk anew, which is compiling, not
		 * replaying */
		if (o->in.plan_path)
			return cli_usage_error("run", "-b/-e/-f recompile the scaled matrix at every size, and a --plan holds fixed byte counts: sweep with --algo NAME, or replay the plan without -b/-e/-f");
		o->sweep = true;
	}
	return 0;
}

/* --- byte pattern -------------------------------------------------------------- */

/* Never 0xff, the value the receive buffer is filled with before a check. */
static inline uint8_t pattern(uint32_t s, uint32_t d, uint64_t o)
{
	uint64_t x = (o + 1) * UINT64_C(0x9E3779B97F4A7C15) ^ (uint64_t)s * UINT64_C(0xBF58476D1CE4E5B9) ^
		     ((uint64_t)d + 1) * UINT64_C(0x94D049BB133111EB);
	x ^= x >> 29;
	x *= UINT64_C(0xBF58476D1CE4E5B9);
	x ^= x >> 32;
	return (uint8_t)(x % 255);
}

/* --- one measurement ------------------------------------------------------------- */

struct ctx {
	struct opts *o;
	struct fast_exec *x;
	struct fast_topo topo;
	int rank, size;
	const struct fast_plan *plan; /* replay */
	bool mpi;
	int local_ranks;              /* ranks on this host (shared memory) */
	uint64_t mem_avail;           /* bytes available on this host; 0 = unknown */
	const char *mem_from;         /* where mem_avail comes from */
};

struct row {
	uint32_t matrix;
	char label[FAST_NAME_MAX];
	uint64_t size, total;
	double time_us, median_us, algbw, busbw, synth_us;
	uint64_t wrong, staging;
	uint64_t *staging_rank; /* per rank (rank 0 only; owned by the row) */
	uint32_t passes, waves;
	uint64_t hits, lookups;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* A failure said once (collective): every rank learns the worst (largest)
 * exit status; the lowest rank whose failure is its own (not "rank N
 * failed", which the executor says where another rank failed) prints its
 * message, or rank 0 when no rank has one of its own. */
static int report_agreed(const struct ctx *c, int st, const struct fast_err *err)
{
	bool mine = st && strncmp(err->msg, "rank ", 5) != 0;
	int in[2] = { st, mine ? -c->rank : INT_MIN }, out[2] = { 0, INT_MIN };

	MPI_Allreduce(in, out, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	if (out[0] && (out[1] == INT_MIN ? c->rank == 0 : -out[1] == c->rank))
		cli_report(err);
	return out[0];
}

/* Prepare the program (on-the-fly: from the gathered rows) and run once. */
static int prepare(struct ctx *c, const uint64_t *row_counts, const uint64_t *col_counts,
		   uint64_t *Dg, struct fast_prog **prog, struct fast_err *err)
{
	int rc;

	/* the real MoE case: every rank knows only its own send counts */
	if ((rc = fast_exec_gather_matrix(c->x, row_counts, col_counts, Dg, err)) < 0)
		return rc;
	if (!c->mpi && (rc = fast_exec_prepare(c->x, c->plan, Dg, prog, err)) < 0)
		return rc;
	return 0;
}

/* One collective, timed; prepared: prepare() was just called for it (the
 * first call of a row, prepared before the buffers were allocated). */
static int one_op(struct ctx *c, bool prepared, const uint64_t *row_counts,
		  const uint64_t *col_counts, uint64_t *Dg, const void *sb, const uint64_t *sd,
		  void *rb, const uint64_t *rd, struct fast_prog **prog, double *elapsed,
		  struct fast_err *err)
{
	int rc;
	double t0;

	if (!prepared && (rc = prepare(c, row_counts, col_counts, Dg, prog, err)) < 0)
		return rc;
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	if (c->mpi)
		rc = fast_exec_run_mpi(c->x, Dg, sb, sd, rb, rd, err);
	else
		rc = fast_exec_run(c->x, *prog, sb, sd, rb, rd, err);
	*elapsed = MPI_Wtime() - t0;
	return rc;
}

/* --- memory ----------------------------------------------------------------------- */

/* Bytes of memory this host has available: $FAST_MEM_AVAILABLE (a size,
 * "16G": for tests and for hosts whose /proc lies, as in some
 * containers), else MemAvailable of /proc/meminfo, else the free pages;
 * 0 when unknown.  *from says which. */
static uint64_t host_mem_available(const char **from)
{
	const char *env = getenv("FAST_MEM_AVAILABLE");
	uint64_t v = 0;
	FILE *f;

	if (env && *env) {
		struct fast_err err;
		*from = "FAST_MEM_AVAILABLE";
		return fast_size_parse(env, &v, &err) == 0 ? v : 0;
	}
	if ((f = fopen("/proc/meminfo", "r")) != NULL) {
		char line[128];
		unsigned long long kb;
		while (fgets(line, sizeof line, f))
			if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) {
				v = (uint64_t)kb * 1024;
				break;
			}
		fclose(f);
		if (v) {
			*from = "MemAvailable";
			return v;
		}
	}
	{
		long pages = sysconf(_SC_AVPHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
		*from = "free pages";
		return pages > 0 && psize > 0 ? (uint64_t)pages * (uint64_t)psize : 0;
	}
}

/* Will this rank's row fit in its share of the host's memory?  What it
 * allocates: the send and receive buffers (stot + rtot) and their host
 * copies for the byte pattern and the check (as many again), plus the
 * staging arena of the program; on a GPU backend the buffers and the
 * arena are device memory, not counted here (the backend reports a
 * failed allocation).  The matrices themselves (ng^2 x 8 bytes each) are
 * already loaded.  Collective: every rank learns whether any rank lacks
 * memory, and the advice holds for all of them: the largest --max-staging
 * every rank has room for (when the buffers alone fit everywhere), else
 * the largest size that fits everywhere (what a rank needs grows about
 * linearly with the size).  0, or FAST_ELIMIT on every rank (the message
 * of a rank that fits starts with "rank ", so report_agreed() says the
 * lowest failing rank's). */
static int memory_agree(const struct ctx *c, uint64_t size, uint64_t stot, uint64_t rtot,
			const struct fast_prog *prog, struct fast_err *err)
{
	bool host = strcmp(c->o->backend, "host") == 0;
	uint64_t staging = 0, buffers, need, share, loc[3], glob[3] = { 1, 0, 0 };
	char a[32], b[32], d[32], e[32], f[32], hint[160];

	if (prog) {
		struct fast_prog_info info;
		fast_prog_info(prog, &info);
		staging = info.staging_bytes;
	}
	buffers = (stot + rtot) * (host ? 2 : 1);
	need = buffers + (host ? staging : 0);
	share = c->mem_avail / (uint64_t)(c->local_ranks > 0 ? c->local_ranks : 1);
	loc[0] = !c->mem_avail || need <= share;                        /* fits */
	loc[1] = host && share > buffers ? share - buffers : 0;         /* room for staging */
	loc[2] = need > share ? (uint64_t)((double)size * ((double)share / (double)need)) : UINT64_MAX;
	MPI_Allreduce(loc, glob, 3, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
	if (glob[0])
		return 0;
	if (loc[0])
		return fast_err_set(err, FAST_ELIMIT, "rank %d: another rank lacks memory", c->rank);
	if (glob[1] >= (1u << 20))
		snprintf(hint, sizeof hint, "give --max-staging %lluM",
			 (unsigned long long)(glob[1] >> 20));
	else if (glob[2] >= (1u << 20))
		snprintf(hint, sizeof hint, "run a smaller size (-b %lluM -e %lluM scale the matrix) or fewer ranks per host",
			 (unsigned long long)(glob[2] >> 20), (unsigned long long)(glob[2] >> 20));
	else
		snprintf(hint, sizeof hint, "run a smaller size (-b %llu -e %llu scale the matrix) or fewer ranks per host",
			 (unsigned long long)glob[2], (unsigned long long)glob[2]);
	return fast_err_set(err, FAST_ELIMIT,
			    "not enough memory: rank %d needs %s (buffers and their host copies %s, staging %s) but has %s (%s %s / %d ranks on this host): %s",
			    c->rank, fast_size_format(need, a, sizeof a),
			    fast_size_format(buffers, b, sizeof b), fast_size_format(staging, d, sizeof d),
			    fast_size_format(share, e, sizeof e), c->mem_from,
			    fast_size_format(c->mem_avail, f, sizeof f), c->local_ranks, hint);
}

/* One row: every rank's status, agreed and said once (report_agreed). */
static int measure(struct ctx *c, uint32_t matrix, const char *label, const uint64_t *D,
		   struct row *out)
{
	struct opts *o = c->o;
	uint32_t ng = (uint32_t)c->size, r = (uint32_t)c->rank;
	uint64_t *row = NULL, *col = NULL, *sd = NULL, *rd = NULL, *Dg = NULL;
	uint64_t stot = 0, rtot = 0, size = 0, wrong = 0, all_wrong = 0;
	uint8_t *hs = NULL, *hr = NULL;
	void *sb = NULL, *rb = NULL;
	double *times = NULL, synth = 0, sum = 0;
	struct fast_prog *prog = NULL;
	struct fast_exec_stats st0, st1;
	struct fast_err err = { 0, "" };
	int rc = 0, st = 0;

	memset(out, 0, sizeof *out);
	row = fast_calloc(ng, sizeof *row);
	col = fast_calloc(ng, sizeof *col);
	sd = fast_calloc(ng, sizeof *sd);
	rd = fast_calloc(ng, sizeof *rd);
	Dg = fast_calloc((size_t)ng * ng, sizeof *Dg);
	times = fast_calloc(o->iters, sizeof *times);
	if (!row || !col || !sd || !rd || !Dg || !times) {
		rc = fast_err_set(&err, FAST_ENOMEM, "run: out of memory");
		goto done;
	}
	for (uint32_t i = 0; i < ng; i++) {
		row[i] = D[(size_t)r * ng + i];
		col[i] = D[(size_t)i * ng + r];
		sd[i] = stot;
		rd[i] = rtot;
		stot += row[i];
		rtot += col[i];
	}
	size = fast_a2a_size(D, ng);
	/* compiled before anything large is allocated: the staging arena is
	 * known then, and a row that will not fit is refused up front */
	fast_exec_get_stats(c->x, &st0);
	st1 = st0;
	if ((rc = prepare(c, row, col, Dg, &prog, &err)) < 0)
		goto done;
	if ((rc = memory_agree(c, size, stot, rtot, prog, &err)) < 0)
		goto done;
	if ((rc = fast_exec_alloc(c->x, stot, &sb, &err)) < 0 ||
	    (rc = fast_exec_alloc(c->x, rtot, &rb, &err)) < 0)
		goto done;
	hs = malloc(stot ? stot : 1);
	hr = malloc(rtot ? rtot : 1);
	if (!hs || !hr) {
		rc = fast_err_set(&err, FAST_ENOMEM, "run: out of memory for %llu + %llu bytes",
				  (unsigned long long)stot, (unsigned long long)rtot);
		goto done;
	}
	for (uint32_t d = 0; d < ng; d++)
		for (uint64_t k = 0; k < row[d]; k++)
			hs[sd[d] + k] = pattern(r, d, k);
	if ((rc = fast_exec_upload(c->x, sb, hs, stot, &err)) < 0)
		goto done;
	/* first call: compiled above (timed as synthesis), and verifies when -c 1 */
	memset(hr, 0xff, rtot ? rtot : 1);
	if ((rc = fast_exec_upload(c->x, rb, hr, rtot, &err)) < 0)
		goto done;
	{
		double el;
		rc = one_op(c, true, row, col, Dg, sb, sd, rb, rd, &prog, &el, &err);
		if (rc < 0)
			goto done;
		{
			struct fast_exec_stats st2;
			fast_exec_get_stats(c->x, &st2);
			synth = st2.synth_s - st1.synth_s;
		}
	}
	if (o->check) {
		if ((rc = fast_exec_download(c->x, hr, rb, rtot, &err)) < 0)
			goto done;
		for (uint32_t s = 0; s < ng; s++)
			for (uint64_t k = 0; k < col[s]; k++)
				wrong += hr[rd[s] + k] != pattern(s, r, k);
	}
	for (uint32_t i = 0; i < o->warmup; i++) {
		double el;
		if ((rc = one_op(c, false, row, col, Dg, sb, sd, rb, rd, &prog, &el, &err)) < 0)
			goto done;
	}
	for (uint32_t i = 0; i < o->iters; i++) {
		double el, worst = 0;
		if ((rc = one_op(c, false, row, col, Dg, sb, sd, rb, rd, &prog, &el, &err)) < 0)
			goto done;
		MPI_Allreduce(&el, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
		times[i] = worst;
		sum += worst;
	}
	MPI_Allreduce(&wrong, &all_wrong, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
	{
		struct fast_exec_stats st2;
		uint64_t stg = 0, stg_max = 0;
		double syn_max = 0;
		fast_exec_get_stats(c->x, &st2);
		if (!c->mpi) {
			struct fast_prog_info info;
			fast_prog_info(prog, &info);
			stg = info.staging_bytes;
			out->passes = info.passes;
			out->waves = info.waves;
		}
		MPI_Allreduce(&stg, &stg_max, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
		if (c->rank == 0)
			out->staging_rank = fast_calloc(ng, sizeof *out->staging_rank);
		MPI_Gather(&stg, 1, MPI_UINT64_T, out->staging_rank, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
		MPI_Allreduce(&synth, &syn_max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
		out->staging = stg_max;
		out->synth_us = syn_max * 1e6;
		out->hits = st2.cache_hits - st0.cache_hits;
		out->lookups = out->hits + st2.cache_misses - st0.cache_misses;
	}
	qsort(times, o->iters, sizeof *times, cmp_double);
	out->matrix = matrix;
	snprintf(out->label, sizeof out->label, "%s", label);
	out->size = size;
	out->total = stot;
	out->time_us = sum / o->iters * 1e6;
	out->median_us = (o->iters % 2 ? times[o->iters / 2]
				       : (times[o->iters / 2 - 1] + times[o->iters / 2]) / 2) * 1e6;
	{
		struct fast_bw bw;
		fast_bw(size, out->time_us * 1e-6, ng, &bw);
		out->algbw = bw.algbw_GBps;
		out->busbw = bw.busbw_GBps;
	}
	out->wrong = all_wrong;
done:
	st = report_agreed(c, rc < 0 ? fast_err_exit_status(rc) : 0, &err);
	fast_exec_free(c->x, sb);
	fast_exec_free(c->x, rb);
	free(hs);
	free(hr);
	free(row);
	free(col);
	free(sd);
	free(rd);
	free(Dg);
	free(times);
	return st;
}

/* --- output -------------------------------------------------------------------------- */

static void json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\')
			printf("\\%c", ch);
		else if (ch < 0x20)
			printf("\\u%04x", ch);
		else
			putchar(ch);
	}
	putchar('"');
}

static void print_header(const struct ctx *c)
{
	const struct opts *o = c->o;

	printf("# fast run: %d ranks, topology %s (%u servers x %u GPUs), backend %s, %s %s\n",
	       c->size, c->topo.name, c->topo.servers, c->topo.gpus, o->backend,
	       o->in.plan_path ? "plan" : "algo", o->in.plan_path ? o->in.plan_path : o->algo);
	printf("# traffic %s, iterations %u, warm-up %u, check %u%s\n", o->in.traffic_path, o->iters,
	       o->warmup, o->check, o->max_staging ? ", staging capped" : "");
	printf("#\n");
	printf("# %6s %-16s %12s %12s %5s %10s %10s %8s %8s %8s %10s %12s %6s %9s\n", "matrix", "label",
	       "size", "count", "type", "time", "median", "algbw", "busbw", "#wrong", "synth",
	       "staging", "passes", "cache");
	printf("# %6s %-16s %12s %12s %5s %10s %10s %8s %8s %8s %10s %12s %6s %9s\n", "", "", "(B)",
	       "(elements)", "", "(us)", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(B)", "", "hit/look");
}

static void print_row(const struct row *w)
{
	char cache[32];

	snprintf(cache, sizeof cache, "%llu/%llu", (unsigned long long)w->hits,
		 (unsigned long long)w->lookups);
	printf("  %6u %-16.16s %12llu %12llu %5s %10.1f %10.1f %8.3f %8.3f %8llu %10.1f %12llu %6u %9s\n",
	       w->matrix, w->label, (unsigned long long)w->size, (unsigned long long)w->size, "uint8",
	       w->time_us, w->median_us, w->algbw, w->busbw, (unsigned long long)w->wrong,
	       w->synth_us, (unsigned long long)w->staging, w->passes, cache);
}

static void print_json(const struct ctx *c, const struct row *rows, size_t n)
{
	const struct opts *o = c->o;

	printf("{\"ranks\": %d, \"topology\": ", c->size);
	json_string(c->topo.name);
	printf(", \"servers\": %u, \"gpus_per_server\": %u, \"gpus_total\": %u, \"backend\": ",
	       c->topo.servers, c->topo.gpus, fast_topo_ngpus(&c->topo));
	json_string(o->backend);
	printf(", \"%s\": ", o->in.plan_path ? "plan" : "algo");
	json_string(o->in.plan_path ? o->in.plan_path : o->algo);
	printf(", \"traffic\": ");
	json_string(o->in.traffic_path);
	printf(", \"iters\": %u, \"warmup\": %u, \"check\": %u, \"max_staging_bytes\": %llu, \"rows\": [",
	       o->iters, o->warmup, o->check, (unsigned long long)o->max_staging);
	for (size_t i = 0; i < n; i++) {
		const struct row *w = &rows[i];
		printf("%s\n  {\"matrix\": %u, \"label\": ", i ? "," : "", w->matrix);
		json_string(w->label);
		/* measured times and bandwidths: the shortest exact decimal, as
		 * every JSON number */
		printf(", \"size_bytes\": %llu, \"count\": %llu, \"type\": \"uint8\", \"time_s\": ",
		       (unsigned long long)w->size, (unsigned long long)w->size);
		fast_json_put_double(stdout, w->time_us / 1e6);
		printf(", \"median_s\": ");
		fast_json_put_double(stdout, w->median_us / 1e6);
		printf(", \"algbw_GBps\": ");
		fast_json_put_double(stdout, w->algbw);
		printf(", \"busbw_GBps\": ");
		fast_json_put_double(stdout, w->busbw);
		printf(", \"wrong\": %llu, \"synthesis_s\": ", (unsigned long long)w->wrong);
		fast_json_put_double(stdout, w->synth_us / 1e6);
		printf(", \"staging_bytes\": %llu, \"passes\": %u, \"waves\": %u, \"cache_hits\": %llu, "
		       "\"cache_lookups\": %llu",
		       (unsigned long long)w->staging, w->passes, w->waves, (unsigned long long)w->hits,
		       (unsigned long long)w->lookups);
		if (w->staging_rank) {
			printf(", \"staging_bytes_per_rank\": [");
			for (int r = 0; r < c->size; r++)
				printf("%s%llu", r ? ", " : "", (unsigned long long)w->staging_rank[r]);
			printf("]");
		}
		printf("}");
	}
	printf("\n]}\n");
}

/* --- topology vs hosts ------------------------------------------------------------------ */

static void host_layout_notes(const struct ctx *c)
{
	MPI_Comm host;
	int host_rank = 0, leader = c->rank;
	int *leaders = calloc((size_t)c->size, sizeof *leaders);
	uint32_t G = c->topo.gpus, N = c->topo.servers;

	if (!leaders)
		return;
	MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL, &host);
	MPI_Comm_rank(host, &host_rank);
	MPI_Bcast(&leader, 1, MPI_INT, 0, host); /* host id: world rank of its first rank */
	MPI_Allgather(&leader, 1, MPI_INT, leaders, 1, MPI_INT, MPI_COMM_WORLD);
	MPI_Comm_free(&host);
	if (c->rank == 0) {
		uint32_t split = 0, hosts = 0, shared = 0;
		for (int i = 0; i < c->size; i++)
			hosts += leaders[i] == i;
		for (uint32_t s = 0; s < N; s++)
			for (uint32_t g = 1; g < G; g++)
				if (leaders[s * G + g] != leaders[s * G]) {
					split++;
					break;
				}
		for (uint32_t s = 1; s < N; s++)
			for (uint32_t t = 0; t < s; t++)
				if (leaders[s * G] == leaders[t * G]) {
					shared++;
					break;
				}
		if (split)
			cli_warn("the MPI shared-memory split disagrees with the topology: %u of %u servers span several hosts (their scale-up traffic crosses the host network)",
				 split, N);
		if (shared)
			fprintf(stderr, "fast run: note: %u servers emulated on %u host%s (normal for tests: scale-up and scale-out share the host)\n",
				N, hosts, hosts == 1 ? "" : "s");
	}
	free(leaders);
}

/* --- entry ---------------------------------------------------------------------------------- */

/* D scaled so that its size (fast_a2a_size(): the largest per-GPU send or
 * receive total, base for D) is exactly target, as nccl-tests' sizes are.
 * Every entry is first scaled down to a whole byte (floor), which can leave
 * the largest line up to ng - 1 bytes short; the bytes missing are then
 * added one each to that line's non-zero entries with the largest
 * remainders, skipping an entry whose other line (its column for a row)
 * would go over target.  No line ends over target; the largest one
 * reaches it unless every entry of it is blocked (then the size stays
 * below, by less than ng bytes). */
static void scale(const uint64_t *D, uint32_t ng, uint64_t base, uint64_t target, uint64_t *out)
{
	uint64_t *rs, *cs, best = 0, deficit;
	uint32_t line = 0;
	bool is_row = true;

	for (size_t i = 0; i < (size_t)ng * ng; i++)
		out[i] = base ? (uint64_t)(((unsigned __int128)D[i] * target) / base) : 0;
	rs = fast_calloc(ng, sizeof *rs);
	cs = fast_calloc(ng, sizeof *cs);
	if (!base || !rs || !cs)
		goto out; /* no memory: the floor alone, a few bytes short */
	/* the line of D whose total is base (the first such) */
	for (uint32_t i = 0; i < ng; i++)
		for (uint32_t j = 0; j < ng; j++) {
			rs[i] += D[(size_t)i * ng + j];
			cs[j] += D[(size_t)i * ng + j];
		}
	for (uint32_t i = 0; i < ng; i++) {
		if (rs[i] > best)
			best = rs[i], line = i, is_row = true;
		if (cs[i] > best)
			best = cs[i], line = i, is_row = false;
	}
	memset(rs, 0, ng * sizeof *rs);
	memset(cs, 0, ng * sizeof *cs);
	for (uint32_t i = 0; i < ng; i++)
		for (uint32_t j = 0; j < ng; j++) {
			rs[i] += out[(size_t)i * ng + j];
			cs[j] += out[(size_t)i * ng + j];
		}
	deficit = target - (is_row ? rs[line] : cs[line]);
	while (deficit > 0) {
		size_t pick = SIZE_MAX;
		uint64_t rem = 0;
		for (uint32_t k = 0; k < ng; k++) {
			size_t at = is_row ? (size_t)line * ng + k : (size_t)k * ng + line;
			uint64_t other = is_row ? cs[k] : rs[k];
			uint64_t r = (uint64_t)(((unsigned __int128)D[at] * target) % base);
			/* an entry takes at most one byte: out == floor */
			if (!D[at] || other >= target ||
			    out[at] != (uint64_t)(((unsigned __int128)D[at] * target) / base))
				continue;
			if (pick == SIZE_MAX || r > rem)
				pick = at, rem = r;
		}
		if (pick == SIZE_MAX)
			break;
		out[pick]++;
		rs[pick / ng]++;
		cs[pick % ng]++;
		deficit--;
	}
out:
	free(rs);
	free(cs);
}

/* The size after *size in the -b/-e/-f series (nccl-tests' rule: each
 * size times the factor, while it is at most -e; -e itself is run when the
 * series lands on it, as -b 1K -e 16K -f 4 does and -f 3 does not), rounded
 * up to a whole byte.  false at the end of the series. */
static bool next_size(const struct opts *o, uint64_t *size)
{
	double next = ceil((double)*size * o->factor);

	if (*size >= o->maxb || next > (double)o->maxb || next <= (double)*size)
		return false;
	*size = (uint64_t)next;
	return true;
}

/* Rows a matrix gives: the sizes of the series, or 1. */
static uint64_t sweep_steps(const struct opts *o)
{
	uint64_t n = 1, size = o->minb;

	while (o->sweep && next_size(o, &size))
		n++;
	return n;
}

static int run_all(struct ctx *c, const struct fast_traffic *t, const struct fast_planset *ps)
{
	struct opts *o = c->o;
	struct row *rows = NULL;
	size_t nrows = 0, cap = 0;
	uint64_t *Ds = NULL, wrong = 0;
	uint32_t ng = t->ng;
	double busbw_sum = 0;
	struct cli_progress pr;
	int st = 0;

	Ds = fast_calloc((size_t)ng * ng, sizeof *Ds);
	if (!Ds)
		return cli_fail(FAST_ENOMEM, "run: out of memory");
	if (c->rank == 0 && !o->in.json)
		print_header(c);
	/* rank 0 says how far it is (rows: matrices x sizes) */
	cli_progress_begin(&pr, "run", (uint64_t)t->count * sweep_steps(o));
	if (c->rank != 0)
		pr.on = false;
	for (uint32_t m = 0; m < t->count && st == 0; m++) {
		uint32_t orig = o->in.matrix >= 0 ? (uint32_t)o->in.matrix : m;
		uint64_t base = fast_a2a_size(t->m[m].bytes, ng);
		uint64_t size = o->sweep ? o->minb : base;

		/* found up front (cmd_run): alike on every rank */
		c->plan = ps ? cli_plan_for(ps, &o->in, m, t->count, NULL) : NULL;
		for (;;) {
			struct row w;
			const uint64_t *D = t->m[m].bytes;
			if (o->sweep) {
				scale(t->m[m].bytes, ng, base, size, Ds);
				D = Ds;
			}
			st = measure(c, orig, t->m[m].label, D, &w);
			if (st) {
				free(w.staging_rank);
				break;
			}
			if (nrows == cap) {
				struct row *nr = fast_reallocarray(rows, cap ? cap * 2 : 16, sizeof *rows);
				if (!nr) {
					free(w.staging_rank);
					st = cli_fail(FAST_ENOMEM, "run: out of memory");
					break;
				}
				rows = nr;
				cap = cap ? cap * 2 : 16;
			}
			rows[nrows++] = w;
			wrong += w.wrong;
			busbw_sum += w.busbw;
			cli_progress_step(&pr, nrows);
			if (c->rank == 0 && !o->in.json) {
				cli_progress_clear(&pr);
				print_row(&w);
				fflush(stdout);
			}
			if (!o->sweep || !next_size(o, &size))
				break;
		}
	}
	cli_progress_end(&pr);
	if (st == 0) {
		/* nccl-tests' closing lines: the mean busbw over the rows, checked
		 * against NCCL_TESTS_MIN_BW (GB/s) when set: below 90% of it fails */
		const char *env = getenv("NCCL_TESTS_MIN_BW");
		double avg = nrows ? busbw_sum / (double)nrows : 0, min_bw = env && *env ? atof(env) : -1;
		int low = min_bw >= 0 && avg < min_bw * 0.9;

		MPI_Bcast(&low, 1, MPI_INT, 0, MPI_COMM_WORLD); /* rank 0's environment decides */
		if (c->rank == 0 && o->in.json) {
			print_json(c, rows, nrows);
		} else if (c->rank == 0) {
			struct fast_exec_stats s;
			fast_exec_get_stats(c->x, &s);
			printf("# plan cache: %llu hits, %llu misses; synthesis %.1f us in total (rank 0)\n",
			       (unsigned long long)s.cache_hits, (unsigned long long)s.cache_misses,
			       s.synth_s * 1e6);
			printf("# Out of bounds values : %llu %s\n", (unsigned long long)wrong,
			       wrong ? "FAILED" : "OK");
			printf("# Avg bus bandwidth    : %g %s\n", avg,
			       min_bw < 0 ? "" : low ? "FAILED" : "OK");
			printf("#\n");
		}
		if (wrong) {
			if (c->rank == 0)
				fprintf(stderr, "fast run: %llu wrong bytes\n", (unsigned long long)wrong);
			st = 1;
		} else if (low) {
			if (c->rank == 0)
				fprintf(stderr, "fast run: average bus bandwidth %g GB/s is below 90%% of NCCL_TESTS_MIN_BW %g\n",
					avg, min_bw);
			st = 1;
		}
	}
	for (size_t i = 0; i < nrows; i++)
		free(rows[i].staging_rank);
	free(rows);
	free(Ds);
	return st;
}

/* --- start: inputs and agreement ------------------------------------------------------ */

/* This process's rank as the MPI launcher gave it (before MPI_Init), or -1
 * when it was not started by one: then usage errors end it without MPI. */
static int launcher_rank(void)
{
	const char *names[] = { "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK" };

	for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
		const char *v = getenv(names[i]);
		if (v && *v)
			return atoi(v);
	}
	return -1;
}

/* stdout and stderr to /dev/null while ranks other than 0 read the command
 * line and the inputs: an error all ranks hit alike is printed once. */
struct muted {
	int fd[2];
};
static void mute(struct muted *m, bool on)
{
	int null = on ? open("/dev/null", O_WRONLY) : -1;

	m->fd[0] = m->fd[1] = -1;
	if (null < 0)
		return;
	fflush(stdout);
	for (int i = 0; i < 2; i++) {
		m->fd[i] = dup(i + 1);
		if (m->fd[i] >= 0)
			dup2(null, i + 1);
	}
	close(null);
}
static void unmute(struct muted *m)
{
	fflush(stdout);
	for (int i = 0; i < 2; i++)
		if (m->fd[i] >= 0) {
			dup2(m->fd[i], i + 1);
			close(m->fd[i]);
			m->fd[i] = -1;
		}
}

struct inputs {
	struct opts o;
	bool help, have_ps;
	struct fast_topo topo;
	struct fast_traffic t;
	struct fast_planset ps;
};

static void inputs_free(struct inputs *in)
{
	fast_traffic_free(&in->t);
	if (in->have_ps)
		fast_planset_free(&in->ps);
	in->have_ps = false;
}

/* Parse and load (printing what is wrong): an exit status. */
static int inputs_read(int argc, char **argv, struct inputs *in)
{
	int st;

	memset(in, 0, sizeof *in);
	st = parse(argc, argv, &in->o, &in->help);
	if (st || in->help)
		return st;
	if ((st = cli_load_topo(&in->o.in, &in->topo)) == 0 &&
	    (st = cli_load_traffic(&in->o.in, &in->topo, &in->t)) == 0 && in->o.in.plan_path) {
		st = cli_load_plans(&in->o.in, &in->ps);
		in->have_ps = st == 0;
	}
	return st;
}

/* Every rank read its inputs: agree on the worst status (and on --help);
 * the lowest rank that failed says why, once.  Returns the exit status,
 * or -1 to go on. */
static int inputs_agree(int argc, char **argv, struct inputs *in, int st, int rank)
{
	int mine[2] = { st, in->help }, all[2] = { 0, 0 }, who = st ? rank : INT_MAX, first = 0;

	MPI_Allreduce(mine, all, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	if (!all[0])
		return all[1] ? 0 : -1;
	MPI_Allreduce(&who, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	if (rank == first && first != 0) {
		/* it read them muted: read them again, aloud */
		struct inputs again;
		inputs_read(argc, argv, &again);
		inputs_free(&again);
	}
	return all[0];
}

static uint64_t hash_str(uint64_t h, const char *s)
{
	return fast_hash_bytes(h, s, strlen(s) + 1);
}

static uint64_t traffic_hash(const struct fast_traffic *t)
{
	uint64_t h = fast_hash_bytes(FAST_HASH_INIT, &t->count, sizeof t->count);

	for (uint32_t m = 0; m < t->count; m++)
		h = fast_matrix_hash(hash_str(h, t->m[m].label), t->m[m].bytes, t->ng);
	return h;
}

static uint64_t plans_hash(const struct inputs *in)
{
	uint64_t h = FAST_HASH_INIT;

	if (!in->have_ps)
		return 0;
	h = fast_hash_bytes(h, &in->ps.count, sizeof in->ps.count);
	for (uint32_t i = 0; i < in->ps.count; i++) {
		uint64_t ph = fast_plan_hash(&in->ps.plans[i]);
		h = fast_hash_bytes(hash_str(h, in->ps.plans[i].label), &ph, sizeof ph);
	}
	return h;
}

/* What every rank must have alike: the options that decide which
 * collectives run (iterations, sizes, passes, algorithm, backend) and the
 * contents of the inputs. */
static int options_agree(const struct inputs *in, struct fast_err *err)
{
	const struct opts *o = &in->o;
	char factor[32];
	uint64_t fbits;
	const char *algo = o->algo ? o->algo : "none (--plan)";
	struct fast_agree f[] = {
		{ "-n", FAST_EUSAGE, o->iters, NULL, false },
		{ "-w", FAST_EUSAGE, o->warmup, NULL, false },
		{ "-c", FAST_EUSAGE, o->check, NULL, false },
		{ "-b", FAST_EUSAGE, o->sweep ? o->minb : 0, NULL, false },
		{ "-e", FAST_EUSAGE, o->sweep ? o->maxb : 0, NULL, false },
		{ "-f", FAST_EUSAGE, 0, factor, false },
		{ "--max-staging", FAST_EUSAGE, o->max_staging, NULL, false },
		{ "--matrix", FAST_EUSAGE, (uint64_t)(o->in.matrix + 1), NULL, false },
		{ "--algo", FAST_EUSAGE, hash_str(FAST_HASH_INIT, algo), algo, false },
		{ "--backend", FAST_EUSAGE, hash_str(FAST_HASH_INIT, o->backend), o->backend, false },
		{ "--servers", FAST_EINPUT, in->topo.servers, NULL, false },
		{ "--gpus", FAST_EINPUT, in->topo.gpus, NULL, false },
		{ "the topology", FAST_EINPUT, fast_topo_hash(&in->topo), NULL, true },
		{ "--traffic", FAST_EINPUT, traffic_hash(&in->t), NULL, true },
		{ "--plan", FAST_EINPUT, plans_hash(in), NULL, true },
	};

	memcpy(&fbits, &o->factor, sizeof fbits);
	f[5].value = o->sweep ? fbits : 0;
	snprintf(factor, sizeof factor, "%g", o->sweep ? o->factor : 0.0);
	return fast_exec_agree(MPI_COMM_WORLD, f, sizeof f / sizeof *f, err);
}

int cmd_run(int argc, char **argv)
{
	struct inputs in;
	struct ctx c;
	struct fast_exec_opts eo;
	struct fast_err err;
	struct muted mu;
	int st, inited = 0, lrank = launcher_rank();

	mute(&mu, lrank > 0);
	st = inputs_read(argc, argv, &in);
	unmute(&mu);
	if (lrank < 0 && (st == 2 || in.help)) {
		/* not under a launcher: a usage error or --help needs no MPI */
		inputs_free(&in);
		return st;
	}
	memset(&c, 0, sizeof c);
	c.o = &in.o;
	c.mpi = in.o.algo && strcmp(in.o.algo, "mpi") == 0;
	MPI_Initialized(&inited);
	if (!inited && MPI_Init(&argc, &argv) != MPI_SUCCESS) {
		inputs_free(&in);
		return cli_fail(FAST_ERUNTIME, "MPI_Init failed");
	}
	MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
	MPI_Comm_size(MPI_COMM_WORLD, &c.size);

	/* inputs: every rank read them; a failure anywhere stops everyone,
	 * before any other collective */
	if ((st = inputs_agree(argc, argv, &in, st, c.rank)) >= 0)
		goto out;
	if ((st = options_agree(&in, &err)) < 0) {
		st = report_agreed(&c, fast_err_exit_status(st), &err);
		goto out;
	}
	c.topo = in.topo;
	if ((uint64_t)c.size != (uint64_t)c.topo.servers * c.topo.gpus) {
		if (c.rank == 0)
			cli_fail(FAST_EINPUT,
				 "%d MPI ranks for a topology of %u GPUs (%u servers x %u): run mpirun -np %u",
				 c.size, c.topo.servers * c.topo.gpus, c.topo.servers, c.topo.gpus,
				 c.topo.servers * c.topo.gpus);
		st = 3;
		goto out;
	}
	/* a plan for every matrix, found before anything runs */
	for (uint32_t m = 0; in.have_ps && m < in.t.count; m++) {
		if (!cli_plan_for(&in.ps, &in.o.in, m, in.t.count, &err)) {
			st = report_agreed(&c, 3, &err);
			goto out;
		}
	}
	host_layout_notes(&c);
	{
		/* each rank's share of its host's memory (memory_fits) */
		MPI_Comm host;
		MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, c.rank, MPI_INFO_NULL, &host);
		MPI_Comm_size(host, &c.local_ranks);
		MPI_Comm_free(&host);
		c.mem_avail = host_mem_available(&c.mem_from);
	}
	fast_exec_opts_default(&eo);
	eo.backend = in.o.backend;
	eo.algo = in.o.algo ? in.o.algo : "fast";
	eo.max_staging = in.o.max_staging;
	eo.device = in.o.device;
	if (fast_exec_create(MPI_COMM_WORLD, &c.topo, &eo, &c.x, &err) < 0) {
		st = report_agreed(&c, fast_err_exit_status(err.code), &err);
		goto out;
	}
	if (c.rank == 0 && fast_exec_notes(c.x)[0])
		fprintf(stderr, "fast run: note: %s\n", fast_exec_notes(c.x));
	{
		/* Fault injection for the test suite: FAST_TEST_KILL_RANK=r makes
		 * rank r die abruptly before the first iteration, so that tests can
		 * prove a dead rank ends the job (Open MPI aborts it, naming the
		 * rank) instead of leaving the others waiting forever. */
		const char *kill_rank = getenv("FAST_TEST_KILL_RANK");
		if (kill_rank && *kill_rank && atoi(kill_rank) == c.rank) {
			fprintf(stderr, "fast run: rank %d: FAST_TEST_KILL_RANK: dying now\n", c.rank);
			fflush(stderr);
			abort();
		}
	}
	st = run_all(&c, &in.t, in.have_ps ? &in.ps : NULL);
	if (st == 0 && c.rank == 0)
		st = cli_stdout_finish();
out:
	fast_exec_destroy(c.x);
	inputs_free(&in);
	fflush(stdout);
	MPI_Finalize();
	return st;
}
