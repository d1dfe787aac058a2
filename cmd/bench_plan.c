/*
 * bench_plan.c - `fast bench plan`: how fast FAST synthesises plans, on one
 * core.  For N in {4, 8, 16, 40, 64, 128, 512} servers x 8 GPUs, random and
 * Zipf(0.8) traffic generated in-process with the project RNG (256 MiB per
 * GPU), exact and alpha-aware stages: (a) the decomposition alone, (b) the
 * whole synthesis matrix -> compact plan in memory (repeated compiles into
 * the last plan's arrays with one scratch, fast_sched_fast_into, as a
 * caller compiling matrix after matrix does), (c) expansion to
 * explicit pieces in ns per piece, with the stage count and plan size.
 * Then the alpha-aware report at 1024 GPUs (h200, 64 MiB .. 4 GiB per GPU):
 * modelled scale-out time of exact and alpha-aware stages against the floor
 * M/B + (N-1)(alpha + overhead), a stages-vs-time curve, and the peak
 * memory of a 4096-GPU compile (measured in a child process).  Medians with min/max over repeats; each
 * repeat runs the work enough times to last >= 1 ms.  Times are the CPU
 * time of the benchmarking thread (CLOCK_THREAD_CPUTIME_ID): one core's
 * work, not inflated when a shared machine deschedules the benchmark.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "cli.h"
#include "fast/algo.h"
#include "lib/compile/bvn.h"

#define GPUS 8

/* --- traffic ----------------------------------------------------------- */

enum pattern { PAT_RANDOM, PAT_ZIPF };
static const char *const pattern_names[] = { "random", "zipf0.8" };

/* Pair weights: rand() % 1024 or a bounded Zipf(0.8) over 1..1024 (the
 * paper's microbenchmarks), scaled so the mean per-GPU send is about
 * per_gpu bytes; diagonal zero. */
static uint64_t *make_traffic(uint32_t ng, enum pattern pat, uint64_t per_gpu, uint64_t seed)
{
	static double cdf[1024];
	static bool have_cdf;
	struct fast_rng rng;
	uint64_t *D = fast_calloc((size_t)ng * ng, sizeof *D), *w = NULL, sum = 0, unit;

	if (!D)
		return NULL;
	if (!have_cdf) {
		double acc = 0;
		for (int v = 1; v <= 1024; v++)
			cdf[v - 1] = (acc += pow(v, -0.8));
		for (int v = 0; v < 1024; v++)
			cdf[v] /= acc;
		have_cdf = true;
	}
	fast_rng_seed(&rng, seed);
	w = D; /* weights first, scaled in place */
	for (size_t s = 0; s < ng; s++)
		for (size_t d = 0; d < ng; d++) {
			uint64_t v;
			if (pat == PAT_RANDOM) {
				v = fast_rng_below(&rng, 1024);
			} else {
				double u = fast_rng_double(&rng);
				size_t lo = 0, hi = 1023;
				while (lo < hi) {
					size_t mid = (lo + hi) / 2;
					if (cdf[mid] < u)
						lo = mid + 1;
					else
						hi = mid;
				}
				v = lo + 1;
			}
			w[s * ng + d] = s == d ? 0 : v;
			sum += s == d ? 0 : v;
		}
	unit = sum ? per_gpu * ng / sum : 1;
	if (unit == 0)
		unit = 1;
	for (size_t k = 0; k < (size_t)ng * ng; k++)
		D[k] *= unit;
	return D;
}

/* --- timing ------------------------------------------------------------- */

/* A piece of work: returns the seconds of its timed region, < 0 on error. */
typedef double (*work_fn)(void *ctx);

static int measure(work_fn f, void *ctx, int reps, struct bench_stats *st)
{
	double x[32], t;
	int inner = 1;

	if (reps > 32)
		reps = 32;
	t = f(ctx); /* warm-up and calibration */
	if (t < 0)
		return -1;
	if (t > 1.0) { /* slow enough: one sample is the measurement */
		bench_stats_of(&t, 1, st);
		return 0;
	}
	if (t < 1e-3)
		inner = (int)(1e-3 / (t > 1e-9 ? t : 1e-9)) + 1;
	if (inner > 100000)
		inner = 100000;
	for (int r = 0; r < reps; r++) {
		double sum = 0;
		for (int k = 0; k < inner; k++) {
			t = f(ctx);
			if (t < 0)
				return -1;
			sum += t;
		}
		x[r] = sum / inner;
	}
	bench_stats_of(x, (size_t)reps, st);
	return 0;
}

struct job {
	struct fast_topo topo;
	const uint64_t *D;
	uint64_t *S; /* server matrix */
	struct fast_algo_opts opts;
	struct fast_plan plan; /* the last compiled plan (kept for expansion) */
	struct fast_scratch scratch; /* the compiles' builder arrays */
	bool have_plan;
	uint32_t K;
	uint64_t expanded_pieces;
	struct fast_err err;
};

static struct fast_bvn_model model_of(const struct fast_topo *t)
{
	struct fast_bvn_model m;
	m.stage_s = fast_tier_step_s(&t->out);
	m.Bps = fast_tier_Bps(&t->out);
	return m;
}

static double work_decompose(void *ctx)
{
	struct job *j = ctx;
	uint32_t N = j->topo.servers;
	struct fast_bvn b;
	double t0 = bench_cpu_now(), t;
	int rc;

	if (j->opts.stages == FAST_STAGES_EXACT) {
		uint64_t *P = fast_calloc((size_t)N * N, sizeof *P), M;
		if (!P)
			return -1;
		memcpy(P, j->S, (size_t)N * N * sizeof *P);
		rc = fast_bvn_pad(P, N, &M, &j->err);
		if (rc == 0)
			rc = fast_bvn_decompose(P, N, &b, &j->err);
		free(P);
	} else {
		struct fast_bvn_model m = model_of(&j->topo);
		rc = fast_bvn_search(j->S, N, &m, &b, NULL, &j->err);
	}
	t = bench_cpu_now() - t0;
	if (rc < 0)
		return -1;
	fast_bvn_free(&b);
	return t;
}

/* Repeated compiles build into the last plan's arrays with the same
 * scratch, as a caller compiling matrix after matrix does
 * (fast_sched_fast_into). */
static double work_compile(void *ctx)
{
	struct job *j = ctx;
	double t0 = bench_cpu_now(), t;

	j->have_plan = true; /* holds arrays to free even on failure */
	if (fast_sched_fast_into(&j->topo, j->D, &j->opts, &j->plan, &j->scratch, &j->err) < 0)
		return -1;
	t = bench_cpu_now() - t0;
	return t;
}

static double work_expand(void *ctx)
{
	struct job *j = ctx;
	struct fast_plan e;
	double t0 = bench_cpu_now(), t;

	if (fast_plan_expand(&j->plan, NULL, &e, &j->err) < 0)
		return -1;
	t = bench_cpu_now() - t0;
	j->expanded_pieces = e.npieces;
	fast_plan_free(&e);
	return t;
}

static uint64_t plan_bytes(const struct fast_plan *p)
{
	return p->nsteps * sizeof *p->steps + p->ndeps * sizeof *p->deps +
	       p->nxfers * sizeof *p->xfers + p->npieces * sizeof *p->pieces +
	       p->nlanes * sizeof *p->lanes + p->nperm * sizeof *p->perm;
}

static void human_time(double s, char *buf, size_t len)
{
	if (s < 1e-3)
		snprintf(buf, len, "%.1f us", s * 1e6);
	else if (s < 1)
		snprintf(buf, len, "%.2f ms", s * 1e3);
	else
		snprintf(buf, len, "%.2f s", s);
}

static void human_stats(const struct bench_stats *st, char *buf, size_t len)
{
	char a[20], b[20], c[20];
	human_time(st->median, a, sizeof a);
	human_time(st->min, b, sizeof b);
	human_time(st->max, c, sizeof c);
	snprintf(buf, len, "%s [%s..%s]", a, b, c);
}

static void json_stats(FILE *f, const char *name, const struct bench_stats *st)
{
	fprintf(f, "\"%s\":{\"median\":%.9g,\"min\":%.9g,\"max\":%.9g,\"q1\":%.9g,\"q3\":%.9g}",
		name, st->median, st->min, st->max, st->q1, st->q3);
}

/* --- targets ------------------------------------------------------------- */

struct target {
	const char *what;
	double limit, got;
	bool met;
	bool lower; /* lower is better: got <= limit */
	bool ratio; /* limit and got are ratios, not seconds */
};

struct report {
	FILE *j;      /* JSON text (memstream), or NULL in human mode */
	bool first;
	struct target targets[32];
	int ntargets;
	double auto_syn[2]; /* the auto row's synthesis median of the current N, per pattern */
	bool progress;
	unsigned long long rss_compile; /* peak RSS after the largest compiles */
};

static void target(struct report *r, const char *what, double limit, double got, bool lower_better,
		   bool ratio)
{
	struct target *t;
	if (r->ntargets == (int)(sizeof r->targets / sizeof r->targets[0]))
		return;
	t = &r->targets[r->ntargets++];
	t->what = what;
	t->limit = limit;
	t->got = got;
	t->met = lower_better ? got <= limit : got >= limit;
	t->lower = lower_better;
	t->ratio = ratio;
}

/* --- the synthesis table ----------------------------------------------------- */

static int reps_for(uint32_t N, bool quick)
{
	if (quick)
		return 3;
	return N <= 16 ? 15 : N <= 64 ? 9 : N <= 128 ? 5 : 3;
}

/* The synthesis targets, one core (servers x 8 GPUs): exact at
 * 64 / 320 / 1024 GPUs; alpha-aware at 64 GPUs within 1.25x of exact
 * (measured side by side: auto's row runs just before exact's, same
 * matrix) and <= 30 us, <= 1.5 ms at 320, <= 15 ms at 1024, <= 1 s at
 * 4096. */
static void synth_targets(struct report *r, uint32_t N, enum pattern pat,
			  enum fast_stages_mode mode, double median)
{
	static char names[32][72];
	static int nn;
	bool exact = mode == FAST_STAGES_EXACT;
	uint32_t ng = N * GPUS;
	double lim = 0;

	if (exact && N == 8)
		lim = 30e-6;
	else if (exact && N == 40)
		lim = 3e-3;
	else if (exact && N == 128)
		lim = 300e-3;
	else if (!exact && N == 8)
		lim = 30e-6;
	else if (!exact && N == 40)
		lim = 1.5e-3;
	else if (!exact && N == 128)
		lim = 15e-3;
	else if (!exact && N == 512)
		lim = 1.0;
	if (!exact)
		r->auto_syn[pat] = median;
	if (lim > 0 && nn < 32) {
		snprintf(names[nn], sizeof names[nn], "synthesis %s, %u GPUs, %s",
			 exact ? "exact" : "auto", ng, pattern_names[pat]);
		target(r, names[nn++], lim, median, true, false);
	}
	if (exact && N == 8 && r->auto_syn[pat] > 0 && median > 0 && nn < 32) {
		snprintf(names[nn], sizeof names[nn], "synthesis auto / exact, %u GPUs, %s", ng,
			 pattern_names[pat]);
		target(r, names[nn++], 1.25, r->auto_syn[pat] / median, true, true);
	}
}

static int synth_row(struct report *r, uint32_t N, enum pattern pat, enum fast_stages_mode mode,
		     bool quick, bool with_expand)
{
	struct job j;
	struct bench_stats dec, syn, exp = { 0, 0, 0, 0, 0 };
	const char *mname = mode == FAST_STAGES_EXACT ? "exact" : "auto";
	uint32_t ng = N * GPUS;
	int reps = reps_for(N, quick), rc = 0;
	double exp_ns[3] = { 0, 0, 0 };

	memset(&j, 0, sizeof j);
	if (fast_topo_preset("h200", N, GPUS, NULL, &j.topo, &j.err) < 0)
		return cli_report(&j.err);
	j.D = make_traffic(ng, pat, UINT64_C(256) << 20, 1000 + N);
	j.S = fast_calloc((size_t)N * N, sizeof *j.S);
	if (!j.D || !j.S) {
		free((void *)j.D);
		free(j.S);
		return cli_fail(FAST_ENOMEM, "bench: out of memory (%u GPUs)", ng);
	}
	fast_algo_opts_default(&j.opts);
	j.opts.stages = mode;
	if (fast_bvn_server_matrix(j.D, N, GPUS, j.S, &j.err) < 0 ||
	    measure(work_decompose, &j, reps, &dec) < 0 ||
	    measure(work_compile, &j, reps, &syn) < 0) {
		rc = cli_report(&j.err);
		goto out;
	}
	for (size_t s = 0; s < j.plan.nsteps; s++)
		j.K += j.plan.steps[s].kind == FAST_STEP_RAIL;
	if (with_expand) {
		if (measure(work_expand, &j, N >= 512 ? 1 : reps > 5 ? 5 : reps, &exp) < 0) {
			rc = cli_report(&j.err);
			goto out;
		}
		exp_ns[0] = exp.median / (double)j.expanded_pieces * 1e9;
		exp_ns[1] = exp.min / (double)j.expanded_pieces * 1e9;
		exp_ns[2] = exp.max / (double)j.expanded_pieces * 1e9;
	}
	if (r->j) {
		fprintf(r->j, "%s\n  {\"gpus_total\":%u,\"servers\":%u,\"pattern\":\"%s\",\"stages\":\"%s\","
			"\"rail_stages\":%u,\"steps\":%zu,\"lanes\":%zu,\"pieces\":%zu,"
			"\"plan_bytes\":%llu,",
			r->first ? "" : ",", ng, N, pattern_names[pat], mname, j.K, j.plan.nsteps,
			j.plan.nlanes, j.plan.npieces, (unsigned long long)plan_bytes(&j.plan));
		json_stats(r->j, "decompose_s", &dec);
		fputc(',', r->j);
		json_stats(r->j, "synthesis_s", &syn);
		if (with_expand)
			fprintf(r->j, ",\"expand_s_per_piece\":{\"median\":%.4g,\"min\":%.4g,"
				"\"max\":%.4g},\"expanded_pieces\":%llu",
				exp_ns[0] * 1e-9, exp_ns[1] * 1e-9, exp_ns[2] * 1e-9,
				(unsigned long long)j.expanded_pieces);
		fputc('}', r->j);
		r->first = false;
	} else {
		char a[80], b[80], e[48];
		human_stats(&dec, a, sizeof a);
		human_stats(&syn, b, sizeof b);
		if (with_expand)
			snprintf(e, sizeof e, "%.1f [%.1f..%.1f]", exp_ns[0], exp_ns[1], exp_ns[2]);
		else
			snprintf(e, sizeof e, "-");
		printf("%5u %4u %-8s %-5s %7u %-30s %-30s %-20s %9zu %8.1f\n", ng, N,
		       pattern_names[pat], mname, j.K, a, b, e, j.plan.npieces,
		       (double)plan_bytes(&j.plan) / (1 << 20));
		fflush(stdout);
	}
	synth_targets(r, N, pat, mode, syn.median);
out:
	if (j.have_plan)
		fast_plan_free(&j.plan);
	fast_scratch_free(&j.scratch);
	free((void *)j.D);
	free(j.S);
	return rc;
}

/* --- the alpha-aware report ------------------------------------------------- */

/* The stages-vs-time curve at 1 GiB per GPU, random: plain quantised
 * decompositions of every quantum (S: N x N scratch). */
static int alpha_curve(struct report *r, uint32_t N, uint64_t *S, const struct fast_bvn_model *m)
{
	uint64_t *D = make_traffic(N * GPUS, PAT_RANDOM, UINT64_C(1) << 30, 79), M = 0;
	struct fast_err err;
	bool first = true;

	if (!D || fast_bvn_server_matrix(D, N, GPUS, S, &err) < 0) {
		free(D);
		return cli_fail(FAST_ENOMEM, "bench: out of memory");
	}
	free(D);
	for (uint32_t i = 0; i < N * N; i++)
		M = S[i] > M ? S[i] : M;
	if (r->j)
		fputs("]},\n\"curve\":[", r->j);
	else
		printf("\nstages vs modelled time, 1 GiB per GPU, random: plain quantised "
		       "decompositions (q = quantum), trimmed, before the exchange polish\n"
		       "%14s %8s %12s %10s\n", "q (bytes)", "K", "sum w (MB)", "T (ms)");
	for (uint64_t q = (uint64_t)1 << 40; q >= 1; q /= 2) {
		struct fast_bvn b;
		double t;
		if (q > 2 * M && q > 1)
			continue;
		if (fast_bvn_quantized(S, N, q, &b, &err) < 0)
			return cli_report(&err);
		fast_bvn_trim(&b, S);
		t = fast_bvn_time(&b, m);
		if (r->j)
			fprintf(r->j, "%s{\"quantum\":%llu,\"stages\":%u,\"sum_w\":%llu,\"time_s\":%.9g}",
				first ? "" : ",", (unsigned long long)q, b.nterms,
				(unsigned long long)b.total, t);
		else
			printf("%14llu %8u %12.1f %10.3f\n", (unsigned long long)q, b.nterms,
			       (double)b.total / 1e6, t * 1e3);
		first = false;
		fast_bvn_free(&b);
		if (q < 4096 && q > 1)
			q = 2; /* then exact */
	}
	if (r->j)
		fputs("]", r->j);
	return 0;
}

static int alpha_report(struct report *r, bool quick)
{
	static const uint64_t sizes[] = { UINT64_C(64) << 20, UINT64_C(256) << 20, UINT64_C(1) << 30,
					  UINT64_C(4) << 30 };
	uint32_t N = quick ? 16 : 128, ng = N * GPUS;
	struct fast_topo topo;
	struct fast_err err;
	struct fast_bvn_model m;
	uint64_t *S = fast_calloc((size_t)N * N, sizeof *S);
	bool first = true;

	if (!S)
		return cli_fail(FAST_ENOMEM, "bench: out of memory");
	if (fast_topo_preset("h200", N, GPUS, NULL, &topo, &err) < 0) {
		free(S);
		return cli_report(&err);
	}
	m = model_of(&topo);
	if (r->j)
		fprintf(r->j, "],\n\"alpha_aware\":{\"gpus_total\":%u,\"servers\":%u,\"preset\":\"h200\","
			"\"stage_cost_s\":%.9g,\"nic_GBps\":%.9g,\"rows\":[", ng, N, m.stage_s, m.Bps / 1e9);
	else
		printf("\nalpha-aware stages, %u GPUs (%u x %u, h200: %.1f us per stage, %.2f GB/s "
		       "per NIC); modelled scale-out time\n"
		       "%-8s %-9s %8s %10s %8s %10s %10s %8s %8s\n",
		       ng, N, GPUS, m.stage_s * 1e6, m.Bps / 1e9, "per-GPU", "pattern", "K exact",
		       "T exact", "K auto", "T auto", "floor", "exact/a", "auto/fl");
	for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++)
		for (int pat = 0; pat < 2; pat++) {
			uint64_t *D = make_traffic(ng, (enum pattern)pat, sizes[z], 77 + z), M = 0;
			struct fast_bvn e, a;
			struct fast_bvn_search_info info;
			double te, ta, floor_s;
			char sz[32];
			if (!D || fast_bvn_server_matrix(D, N, GPUS, S, &err) < 0) {
				free(D);
				free(S);
				return D ? cli_report(&err) : cli_fail(FAST_ENOMEM, "bench: out of memory");
			}
			free(D);
			if (fast_bvn_quantized(S, N, 1, &e, &err) < 0 ||
			    fast_bvn_search(S, N, &m, &a, &info, &err) < 0) {
				free(S);
				return cli_report(&err);
			}
			fast_bvn_trim(&e, S);
			for (uint32_t i = 0; i < N; i++) {
				uint64_t rs = 0, cs = 0;
				for (uint32_t k = 0; k < N; k++) {
					rs += S[(size_t)i * N + k];
					cs += S[(size_t)k * N + i];
				}
				M = rs > M ? rs : M;
				M = cs > M ? cs : M;
			}
			te = fast_bvn_time(&e, &m);
			ta = fast_bvn_time(&a, &m);
			floor_s = (double)M / m.Bps + (N - 1) * m.stage_s;
			fast_size_format(sizes[z], sz, sizeof sz);
			if (r->j) {
				fprintf(r->j, "%s\n  {\"per_gpu_bytes\":%llu,\"pattern\":\"%s\","
					"\"exact_stages\":%u,\"exact_s\":%.9g,\"auto_stages\":%u,"
					"\"auto_s\":%.9g,\"auto_quantum\":%llu,\"floor_s\":%.9g,"
					"\"M_bytes\":%llu}",
					first ? "" : ",", (unsigned long long)sizes[z],
					pattern_names[pat], e.nterms, te, a.nterms, ta,
					(unsigned long long)info.quantum, floor_s,
					(unsigned long long)M);
				first = false;
			} else {
				printf("%-8s %-9s %8u %8.2fms %8u %8.2fms %8.2fms %7.2fx %7.3fx\n", sz,
				       pattern_names[pat], e.nterms, te * 1e3, a.nterms, ta * 1e3,
				       floor_s * 1e3, te / ta, ta / floor_s);
			}
			if (sizes[z] == UINT64_C(1) << 30 && !quick)
				target(r, pat ? "alpha-aware vs exact at 1 GiB/GPU, zipf0.8 (x faster)"
					      : "alpha-aware vs exact at 1 GiB/GPU, random (x faster)",
				       3.0, te / ta, false, true);
			fast_bvn_free(&e);
			fast_bvn_free(&a);
		}
	{
		int rc = alpha_curve(r, N, S, &m);
		free(S);
		return rc;
	}
}

/* Peak memory of one compile (and, with expand, its expansion) at N x 8
 * GPUs, in a child process so that nothing else this benchmark allocated
 * counts: the child's maxrss, the traffic matrix included.  0 on failure. */
static unsigned long long child_peak(uint32_t N, bool expand)
{
	struct rusage ru;
	int status;
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return 0;
	if (pid == 0) {
		struct fast_topo topo;
		struct fast_algo_opts opts;
		struct fast_plan p, e;
		uint64_t *D;
		if (fast_topo_preset("h200", N, GPUS, NULL, &topo, NULL) < 0)
			_exit(1);
		D = make_traffic(N * GPUS, PAT_RANDOM, UINT64_C(256) << 20, 1000 + N);
		fast_algo_opts_default(&opts);
		if (!D || fast_sched_fast(&topo, D, &opts, &p, NULL) < 0)
			_exit(1);
		if (expand && fast_plan_expand(&p, NULL, &e, NULL) < 0)
			_exit(1);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return 0;
	if (getrusage(RUSAGE_CHILDREN, &ru) != 0)
		return 0;
	return (unsigned long long)ru.ru_maxrss * 1024ull;
}

int fast_bench_plan(const struct bench_opts *o)
{
	static const uint32_t full[] = { 4, 8, 16, 40, 64, 128, 512 };
	static const uint32_t small[] = { 4, 8, 16 };
	const uint32_t *ns = o->quick ? small : full;
	size_t nn = o->quick ? 3 : 7;
	struct report r;
	char *buf = NULL;
	size_t len = 0;
	unsigned long long rss4096 = 0;
	int rc = 0, missed = 0;

	memset(&r, 0, sizeof r);
	r.first = true;
	r.progress = isatty(STDERR_FILENO);
	if (o->json) {
		r.j = open_memstream(&buf, &len);
		if (!r.j)
			return cli_fail(FAST_ENOMEM, "bench: out of memory");
		fputs("{\"per_gpu_bytes\":268435456,\"gpus_per_server\":8,\"synthesis\":[", r.j);
	} else {
		printf("synthesis, CPU time of one core, 256 MiB per GPU; median [min..max] over repeats\n"
		       "%5s %4s %-8s %-5s %7s %-30s %-30s %-20s %9s %8s\n", "GPUs", "N", "pattern",
		       "mode", "K", "(a) decomposition", "(b) matrix -> plan", "(c) expand ns/piece",
		       "pieces", "plan MiB");
	}
	for (size_t k = 0; k < nn && rc == 0; k++)
		for (int pat = 0; pat < 2 && rc == 0; pat++)
			for (int mode = 0; mode < 2 && rc == 0; mode++) {
				enum fast_stages_mode md = mode ? FAST_STAGES_EXACT : FAST_STAGES_AUTO;
				/* exact at 4096 GPUs: ~N^2 = 260k stages, timed
				 * once, not expanded (the expansion of that many
				 * stages is the consumers' problem: auto is the
				 * mode for this size) */
				if (r.progress)
					fprintf(stderr, "bench plan: %u GPUs %s %s...\n", ns[k] * GPUS,
						pattern_names[pat], mode ? "exact" : "auto");
				rc = synth_row(&r, ns[k], (enum pattern)pat, md, o->quick,
					       !(ns[k] >= 512 && md == FAST_STAGES_EXACT));
			}
	if (rc == 0)
		rc = alpha_report(&r, o->quick);
	if (rc == 0 && !o->quick) {
		/* children in this order: RUSAGE_CHILDREN keeps the largest */
		r.rss_compile = child_peak(512, false);
		rss4096 = child_peak(512, true);
	}
	if (rc == 0) {
		if (r.j) {
			fprintf(r.j, ",\n\"peak_rss_bytes\":%llu,\"peak_rss_4096_gpus_compile_bytes\":%llu,"
				"\"peak_rss_4096_gpus_expand_bytes\":%llu,\"targets\":[",
				bench_peak_rss(), r.rss_compile, rss4096);
			for (int t = 0; t < r.ntargets; t++)
				fprintf(r.j, "%s{\"what\":\"%s\",\"limit\":%.9g,\"got\":%.9g,\"met\":%s}",
					t ? "," : "", r.targets[t].what, r.targets[t].limit,
					r.targets[t].got, r.targets[t].met ? "true" : "false");
			fputs("]}", r.j);
		} else {
			printf("\npeak RSS of this benchmark: %.1f MiB", bench_peak_rss() / 1048576.0);
			if (rss4096)
				printf("\npeak RSS of one 4096-GPU compile (auto, random, 256 MiB/GPU, the "
				       "128 MiB matrix included): %.1f MiB; with its expansion: %.1f MiB",
				       r.rss_compile / 1048576.0, rss4096 / 1048576.0);
			printf("\n\ntargets\n");
			for (int t = 0; t < r.ntargets; t++) {
				const struct target *x = &r.targets[t];
				char a[32], b[32];
				if (x->ratio) {
					snprintf(a, sizeof a, "%s %.2fx",
						 x->lower ? "<=" : ">=", x->limit);
					snprintf(b, sizeof b, "%.2fx", x->got);
				} else {
					human_time(x->limit, a + 3, sizeof a - 3);
					memcpy(a, "<= ", 3);
					human_time(x->got, b, sizeof b);
				}
				printf("  %-52s %-12s %-12s %s\n", x->what, a, b, x->met ? "met" : "MISSED");
			}
		}
	}
	for (int t = 0; t < r.ntargets; t++)
		missed += !r.targets[t].met;
	if (r.j) {
		fclose(r.j);
		if (rc == 0)
			fwrite(buf, 1, len, stdout);
		free(buf);
	}
	if (rc == 0 && missed && o->strict)
		return 1;
	return rc;
}
