/*
 * run_measure.c - one row of `fast run`: one matrix at one size.  The
 * program is prepared (on the fly: from the gathered rows) before anything
 * large is allocated, the row is checked against the host's memory, the
 * send buffer is filled with a byte pattern of (source, destination,
 * offset), the collective runs once (verified with -c 1), -w warm-ups and
 * -n timed iterations (the slowest rank's time each), and the row's
 * staging, synthesis and cache counters are gathered.  Every status is
 * agreed over the ranks and said once (run_report_agreed).
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#include "run.h"

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

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* A failure said once (collective): every rank learns the worst (largest)
 * exit status; the lowest rank whose failure is its own (not "rank N
 * failed", which the executor says where another rank failed) prints its
 * message, or rank 0 when no rank has one of its own. */
int run_report_agreed(const struct run_ctx *c, int st, const struct fast_err *err)
{
	bool mine = st && strncmp(err->msg, "rank ", 5) != 0;
	int in[2] = { st, mine ? -c->rank : INT_MIN }, out[2] = { 0, INT_MIN };

	MPI_Allreduce(in, out, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	if (out[0] && (out[1] == INT_MIN ? c->rank == 0 : -out[1] == c->rank))
		cli_report(err);
	return out[0];
}

/* What one row moves: a byte matrix (buffers per peer, the byte pattern
 * of (source, destination, offset)) or, run by a token program, a token
 * matrix (buffers per group, prog.h's token patterns).  Either way every
 * rank starts from what it knows alone: its row of send counts, or the
 * groups whose tokens it owns (its routing), gathered each call. */
struct work {
	const uint64_t *D;            /* bytes */
	const struct fast_matrix *m;  /* tokens (the groups the program serves); NULL: bytes */
	struct fast_matrix sorted;    /* tokens on the fly from a file not in src order: m's
				       * groups stably sorted by src (owned), what the
				       * gather gives */
	bool gather;                  /* tokens: served as gathered from every rank's own */
	struct fast_matrix mine;      /* tokens: this rank's groups (a view into m) */
	struct fast_matrix gathered;  /* tokens: every rank's, as gathered */
	uint64_t *row, *col, *Dg;     /* bytes: own counts, the gathered matrix */
	uint32_t nmsg;                /* displacements: peers or groups */
	uint64_t *sd, *rd, stot, rtot;
};

static void gathered_free(struct work *w)
{
	free(w->gathered.bytes);
	free(w->gathered.groups);
	free(w->gathered.dsts);
	memset(&w->gathered, 0, sizeof w->gathered);
}

static void work_free(struct work *w)
{
	gathered_free(w);
	free(w->sorted.groups);
	free(w->row);
	free(w->col);
	free(w->Dg);
	free(w->sd);
	free(w->rd);
}

/* The buffers' layout on this rank (its counts, displacements, totals). */
static int work_init(struct run_ctx *c, struct work *w, const uint64_t *D,
		     const struct fast_matrix *m, struct fast_err *err)
{
	uint32_t ng = (uint32_t)c->size, r = (uint32_t)c->rank;

	memset(w, 0, sizeof *w);
	w->D = D;
	w->m = m;
	if (m) {
		/* Gathered, the groups come in rank order, each rank's in its
		 * order: the file's order when it is by src (as tools write
		 * it).  Otherwise a replayed plan, which names the file's
		 * groups, serves the file's matrix as every rank loaded it, and
		 * on the fly the program serves the groups sorted by src. */
		bool by_src = true;
		for (uint32_t k = 1; k < m->ngroups && by_src; k++)
			by_src = m->groups[k - 1].src <= m->groups[k].src;
		w->gather = by_src || !c->plan;
		if (!by_src && !c->plan) {
			uint64_t *at = fast_calloc((size_t)ng + 1, sizeof *at);
			w->sorted = *m;
			w->sorted.groups = fast_calloc(m->ngroups, sizeof *w->sorted.groups);
			if (!at || !w->sorted.groups) {
				free(at);
				return fast_err_set(err, FAST_ENOMEM, "run: out of memory");
			}
			/* counting sort: stable */
			for (uint32_t k = 0; k < m->ngroups; k++)
				at[m->groups[k].src + 1]++;
			for (uint32_t s = 0; s < ng; s++)
				at[s + 1] += at[s];
			for (uint32_t k = 0; k < m->ngroups; k++)
				w->sorted.groups[at[m->groups[k].src]++] = m->groups[k];
			free(at);
			w->m = m = &w->sorted;
		}
	}
	w->nmsg = m ? m->ngroups : ng;
	w->sd = fast_calloc(w->nmsg + 1, sizeof *w->sd);
	w->rd = fast_calloc(w->nmsg + 1, sizeof *w->rd);
	if (!m) {
		w->row = fast_calloc(ng, sizeof *w->row);
		w->col = fast_calloc(ng, sizeof *w->col);
		w->Dg = fast_calloc((size_t)ng * ng, sizeof *w->Dg);
	}
	if (!w->sd || !w->rd || (!m && (!w->row || !w->col || !w->Dg)))
		return fast_err_set(err, FAST_ENOMEM, "run: out of memory");
	for (uint32_t i = 0; i < w->nmsg; i++) {
		uint64_t s, v;
		if (m) {
			bool snd, rcv;
			fast_token_role(m, i, r, &snd, &rcv);
			s = snd ? fast_group_bytes(m, i) : 0;
			v = rcv ? fast_group_bytes(m, i) : 0;
		} else {
			s = w->row[i] = D[(size_t)r * ng + i];
			v = w->col[i] = D[(size_t)i * ng + r];
		}
		w->sd[i] = w->stot;
		w->rd[i] = w->rtot;
		w->stot += s;
		w->rtot += v;
	}
	if (m) {
		/* groups are in ascending src now: this rank's are a run */
		uint32_t k = 0;
		while (k < m->ngroups && m->groups[k].src < r)
			k++;
		w->mine = *m;
		w->mine.groups = m->groups + k;
		for (w->mine.ngroups = 0; k + w->mine.ngroups < m->ngroups &&
					  m->groups[k + w->mine.ngroups].src == r;)
			w->mine.ngroups++;
	}
	return 0;
}

static void work_fill(const struct run_ctx *c, const struct work *w, uint8_t *hs)
{
	uint32_t r = (uint32_t)c->rank;

	for (uint32_t i = 0; i < w->nmsg; i++) {
		if (w->m) {
			bool snd, rcv;
			int bit = fast_token_role(w->m, i, r, &snd, &rcv);
			for (uint64_t k = 0; snd && k < fast_group_bytes(w->m, i); k++)
				hs[w->sd[i] + k] = fast_token_send_byte(w->m, i, bit, k);
		} else {
			for (uint64_t k = 0; k < w->row[i]; k++)
				hs[w->sd[i] + k] = pattern(r, i, k);
		}
	}
}

static uint64_t work_wrong(const struct run_ctx *c, const struct work *w, const uint8_t *hr)
{
	uint32_t r = (uint32_t)c->rank;
	uint64_t wrong = 0;

	for (uint32_t i = 0; i < w->nmsg; i++) {
		if (w->m) {
			bool snd, rcv;
			fast_token_role(w->m, i, r, &snd, &rcv);
			for (uint64_t k = 0; rcv && k < fast_group_bytes(w->m, i); k++)
				wrong += hr[w->rd[i] + k] != fast_token_expect_byte(w->m, i, k);
		} else {
			for (uint64_t k = 0; k < w->col[i]; k++)
				wrong += hr[w->rd[i] + k] != pattern(i, r, k);
		}
	}
	return wrong;
}

/* Prepare the program from what every rank knows alone, gathered: its send
 * counts (the matrix), or its groups (the token matrix). */
static int prepare(struct run_ctx *c, struct work *w, struct fast_prog **prog,
		   struct fast_err *err)
{
	int rc;

	if (w->m && !w->gather)
		return fast_exec_prepare(c->x, c->plan, w->m, prog, err);
	if (w->m) {
		gathered_free(w);
		if ((rc = fast_exec_gather_groups(c->x, &w->mine, &w->gathered, err)) < 0)
			return rc;
		return fast_exec_prepare(c->x, c->plan, &w->gathered, prog, err);
	}
	/* the real MoE case: every rank knows only its own send counts */
	if ((rc = fast_exec_gather_matrix(c->x, w->row, w->col, w->Dg, err)) < 0)
		return rc;
	if (!c->mpi) {
		struct fast_matrix bm = fast_matrix_of(w->Dg, (uint32_t)c->size);

		if ((rc = fast_exec_prepare(c->x, c->plan, &bm, prog, err)) < 0)
			return rc;
	}
	return 0;
}

/* One collective, timed; prepared: prepare() was just called for it (the
 * first call of a row, prepared before the buffers were allocated). */
static int one_op(struct run_ctx *c, bool prepared, struct work *w, const void *sb, void *rb,
		  struct fast_prog **prog, double *elapsed, struct fast_err *err)
{
	int rc;
	double t0;

	if (!prepared && (rc = prepare(c, w, prog, err)) < 0)
		return rc;
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	if (c->mpi && !w->m)
		rc = fast_exec_run_mpi(c->x, w->Dg, sb, w->sd, rb, w->rd, err);
	else
		rc = fast_exec_run(c->x, *prog, sb, w->sd, rb, w->rd, err);
	*elapsed = MPI_Wtime() - t0;
	return rc;
}

/* --- memory ----------------------------------------------------------------------- */

/* Bytes of memory this host has available: $FAST_MEM_AVAILABLE (a size,
 * "16G": for tests and for hosts whose /proc lies, as in some
 * containers), else MemAvailable of /proc/meminfo, else the free pages;
 * 0 when unknown.  *from says which. */
uint64_t run_host_mem_available(const char **from)
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

/* Adds that stop at UINT64_MAX: totals of many ranks' needs. */
static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* One machine's ranks together (the ranks r with c->machine[r] == m):
 * their buffers and their staging, summed, and the memory available (the
 * least any of them read; 0 = unknown). */
struct machine_need {
	uint64_t buffers, staging, avail;
	int ranks;
};
static struct machine_need machine_need(const struct run_ctx *c, int m)
{
	struct machine_need t = { 0, 0, UINT64_MAX, 0 };

	for (int r = m; r < c->size; r++)
		if (c->machine[r] == m) {
			t.buffers = sat_add(t.buffers, c->mem_need[2 * r]);
			t.staging = sat_add(t.staging, c->mem_need[2 * r + 1]);
			if (c->mem_avail[r] < t.avail)
				t.avail = c->mem_avail[r];
			t.ranks++;
		}
	return t;
}

/* The largest staging cap under which machine m's ranks fit: the largest
 * C with buffers + sum over its ranks of min(staging, C) <= avail (a cap
 * bounds every rank's arena and shrinks none past it: exec.c prepare());
 * 0 when even C = 0 does not fit. */
static uint64_t machine_cap(const struct run_ctx *c, int m, const struct machine_need *t)
{
	uint64_t lo = 0, hi = 0;

	if (t->buffers >= t->avail)
		return 0;
	for (int r = m; r < c->size; r++)
		if (c->machine[r] == m && c->mem_need[2 * r + 1] > hi)
			hi = c->mem_need[2 * r + 1];
	while (lo < hi) { /* the largest C in [lo, hi] that fits */
		uint64_t mid = lo + (hi - lo + 1) / 2, sum = t->buffers;
		for (int r = m; r < c->size; r++)
			if (c->machine[r] == m)
				sum = sat_add(sum, c->mem_need[2 * r + 1] < mid ? c->mem_need[2 * r + 1] : mid);
		if (sum <= t->avail)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/* Will the row fit in the memory of every machine?  What a rank
 * allocates: the send and receive buffers (stot + rtot) and their host
 * copies for the byte pattern and the check (as many again), plus the
 * staging arena of the program; on a GPU backend the buffers and the
 * arena are device memory, not counted here (the backend reports a
 * failed allocation).  The matrices themselves (ng^2 x 8 bytes each) are
 * already loaded.  The ranks of one machine (run.c machines(): one
 * kernel, whatever hosts MPI sees) share its memory, so what they need
 * together is held against what it has available: a skewed matrix's hot
 * receiver may need far more than an equal share.  Collective: every rank
 * learns every rank's need, and the advice holds for all machines: the
 * largest --max-staging under which every machine fits (when the buffers
 * alone fit everywhere), else the largest size that fits everywhere
 * (what the ranks need grows about linearly with the size).  0, or
 * FAST_ELIMIT on every rank; the message is said by the lowest rank of
 * the lowest machine that lacks memory (the other ranks' start with
 * "rank ": run_report_agreed()). */
static int memory_agree(const struct run_ctx *c, uint64_t size, uint64_t stot, uint64_t rtot,
			const struct fast_prog *prog, struct fast_err *err)
{
	bool host = strcmp(c->o->backend, "host") == 0;
	uint64_t staging = 0, mine[2], cap = UINT64_MAX, fit_size = UINT64_MAX;
	struct machine_need lack = { 0, 0, 0, 0 };
	int first = -1;
	char a[32], b[32], d[32], e[32], hint[160], names[64] = "";

	if (prog) {
		struct fast_prog_info info;
		fast_prog_info(prog, &info);
		staging = info.staging_bytes;
	}
	mine[0] = sat_add(stot, rtot);
	mine[0] = host ? sat_add(mine[0], mine[0]) : mine[0];
	mine[1] = host ? staging : 0;
	MPI_Allgather(mine, 2, MPI_UINT64_T, c->mem_need, 2, MPI_UINT64_T, MPI_COMM_WORLD);
	for (int m = 0; m < c->size; m++) {
		struct machine_need t;
		uint64_t need;
		if (c->machine[m] != m)
			continue; /* not a machine's lowest rank */
		t = machine_need(c, m);
		need = sat_add(t.buffers, t.staging);
		if (!t.avail || need <= t.avail)
			continue;
		if (first < 0) {
			first = m;
			lack = t;
		}
		{
			uint64_t cm = machine_cap(c, m, &t);
			cap = cm < cap ? cm : cap;
		}
		{
			uint64_t sm = (uint64_t)((double)size * ((double)t.avail / (double)need));
			fit_size = sm < fit_size ? sm : fit_size;
		}
	}
	if (first < 0)
		return 0;
	if (c->machine[c->rank] != first)
		return fast_err_set(err, FAST_ELIMIT, "rank %d: the ranks of another machine lack memory", c->rank);
	if (cap >= (1u << 20))
		snprintf(hint, sizeof hint, "give --max-staging %lluM", (unsigned long long)(cap >> 20));
	else if (fit_size >= (1u << 20))
		snprintf(hint, sizeof hint, "run a smaller size (-b %lluM -e %lluM scale the matrix) or fewer ranks on this machine",
			 (unsigned long long)(fit_size >> 20), (unsigned long long)(fit_size >> 20));
	else
		snprintf(hint, sizeof hint, "run a smaller size (-b %llu -e %llu scale the matrix) or fewer ranks on this machine",
			 (unsigned long long)fit_size, (unsigned long long)fit_size);
	if (c->machine_hosts > 1)
		snprintf(names, sizeof names, " (one machine under %d host names)", c->machine_hosts);
	return fast_err_set(err, FAST_ELIMIT,
			    "not enough memory on host %s%s: its %d ranks need %s in total (buffers and their host copies %s, staging %s) and %s is available (%s): %s",
			    c->host, names, lack.ranks, fast_size_format(sat_add(lack.buffers, lack.staging), a, sizeof a),
			    fast_size_format(lack.buffers, b, sizeof b), fast_size_format(lack.staging, d, sizeof d),
			    fast_size_format(lack.avail, e, sizeof e), c->mem_from, hint);
}

/* The row's staging, synthesis and cache figures, agreed over the ranks
 * (collective): the largest staging and synthesis time, every rank's
 * staging at rank 0 (out->staging_rank, the caller's to free), the plan
 * cache's hits and lookups since st0. */
static void row_stats(struct run_ctx *c, struct fast_prog *prog, const struct fast_matrix *m,
		      const struct fast_exec_stats *st0, double synth, struct run_row *out)
{
	uint32_t ng = (uint32_t)c->size;
	struct fast_exec_stats st2;
	uint64_t stg = 0, stg_max = 0;
	double syn_max = 0;

	fast_exec_get_stats(c->x, &st2);
	if (!c->mpi || m) {
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
	out->hits = st2.cache_hits - st0->cache_hits;
	out->lookups = out->hits + st2.cache_misses - st0->cache_misses;
}

/* One row: every rank's status, agreed and said once (run_report_agreed). */
int run_measure(struct run_ctx *c, uint32_t matrix, const char *label, const uint64_t *D,
		const struct fast_matrix *m, struct run_row *out)
{
	struct run_opts *o = c->o;
	uint32_t ng = (uint32_t)c->size;
	uint64_t size = 0, wrong = 0, all_wrong = 0;
	uint8_t *hs = NULL, *hr = NULL;
	void *sb = NULL, *rb = NULL;
	double *times = NULL, synth = 0, sum = 0;
	struct fast_prog *prog = NULL;
	struct fast_exec_stats st0, st1;
	struct fast_err err = { 0, "" };
	struct work w;
	int rc = 0, st = 0;

	memset(out, 0, sizeof *out);
	times = fast_calloc(o->iters, sizeof *times);
	if ((rc = work_init(c, &w, D, m, &err)) < 0)
		goto done;
	if (!times) {
		rc = fast_err_set(&err, FAST_ENOMEM, "run: out of memory");
		goto done;
	}
	size = fast_a2a_size(D, ng);
	/* compiled before anything large is allocated: the staging arena is
	 * known then, and a row that will not fit is refused up front */
	fast_exec_get_stats(c->x, &st0);
	st1 = st0;
	if ((rc = prepare(c, &w, &prog, &err)) < 0)
		goto done;
	if ((rc = memory_agree(c, size, w.stot, w.rtot, prog, &err)) < 0)
		goto done;
	if ((rc = fast_exec_alloc(c->x, w.stot, &sb, &err)) < 0 ||
	    (rc = fast_exec_alloc(c->x, w.rtot, &rb, &err)) < 0)
		goto done;
	hs = malloc(w.stot ? w.stot : 1);
	hr = malloc(w.rtot ? w.rtot : 1);
	if (!hs || !hr) {
		rc = fast_err_set(&err, FAST_ENOMEM, "run: out of memory for %llu + %llu bytes",
				  (unsigned long long)w.stot, (unsigned long long)w.rtot);
		goto done;
	}
	work_fill(c, &w, hs);
	if ((rc = fast_exec_upload(c->x, sb, hs, w.stot, &err)) < 0)
		goto done;
	/* first call: compiled above (timed as synthesis), and verifies when -c 1 */
	memset(hr, 0xff, w.rtot ? w.rtot : 1);
	if ((rc = fast_exec_upload(c->x, rb, hr, w.rtot, &err)) < 0)
		goto done;
	{
		double el;
		rc = one_op(c, true, &w, sb, rb, &prog, &el, &err);
		if (rc < 0)
			goto done;
		{
			struct fast_exec_stats st2;
			fast_exec_get_stats(c->x, &st2);
			synth = st2.synth_s - st1.synth_s;
		}
	}
	if (o->check) {
		if ((rc = fast_exec_download(c->x, hr, rb, w.rtot, &err)) < 0)
			goto done;
		/* Fault injection for the test suite: FAST_TEST_CORRUPT_RANK=r
		 * flips a bit of rank r's first received byte before the check,
		 * so that tests can prove a wrong byte is counted and fails the
		 * run. */
		const char *corrupt = getenv("FAST_TEST_CORRUPT_RANK");
		if (corrupt && *corrupt && atoi(corrupt) == c->rank && w.rtot)
			hr[0] ^= 1;
		wrong = work_wrong(c, &w, hr);
	}
	for (uint32_t i = 0; i < o->warmup; i++) {
		double el;
		if ((rc = one_op(c, false, &w, sb, rb, &prog, &el, &err)) < 0)
			goto done;
	}
	for (uint32_t i = 0; i < o->iters; i++) {
		double el, worst = 0;
		if ((rc = one_op(c, false, &w, sb, rb, &prog, &el, &err)) < 0)
			goto done;
		MPI_Allreduce(&el, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
		times[i] = worst;
		sum += worst;
	}
	MPI_Allreduce(&wrong, &all_wrong, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
	row_stats(c, prog, m, &st0, synth, out);
	qsort(times, o->iters, sizeof *times, cmp_double);
	out->matrix = matrix;
	snprintf(out->label, sizeof out->label, "%s", label);
	out->size = size;
	out->total = w.stot;
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
	out->moves = m ? m->kind : FAST_TRAFFIC_BYTES;
done:
	st = run_report_agreed(c, rc < 0 ? fast_err_exit_status(rc) : 0, &err);
	fast_exec_free(c->x, sb);
	fast_exec_free(c->x, rb);
	free(hs);
	free(hr);
	work_free(&w);
	free(times);
	return st;
}
