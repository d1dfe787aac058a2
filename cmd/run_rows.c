/*
 * run_rows.c - the rows of `fast run`: each matrix in turn, at its own size
 * or scaled to each size of the -b/-e/-f series (nccl-tests' sizes), each
 * measured by run_measure(), printed as nccl-tests' columns (or --json)
 * by rank 0, and nccl-tests' closing lines (out-of-bounds values, average
 * bus bandwidth against NCCL_TESTS_MIN_BW).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "lib/base/json.h"
#include "fast/algo.h"
#include "run.h"

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

static void print_header(const struct run_ctx *c)
{
	const struct run_opts *o = c->o;

	printf("# fast run: %d ranks, topology %s (%u servers x %u GPUs), backend %s, %s %s\n",
	       c->size, c->topo.name, c->topo.servers, c->topo.gpus, o->backend,
	       o->in.plan_path ? "plan" : "algo", o->in.plan_path ? o->in.plan_path : o->algo);
	printf("# traffic %s, iterations %u, warm-up %u, check %u%s", o->in.traffic_path, o->iters,
	       o->warmup, o->check, o->max_staging ? ", staging capped" : "");
	if (c->x)
		printf(", %u wave%s in flight", fast_exec_in_flight(c->x),
		       fast_exec_in_flight(c->x) > 1 ? "s" : "");
	printf("\n");
	printf("#\n");
	printf("# %6s %-16s %12s %12s %5s %10s %10s %8s %8s %8s %10s %12s %6s %9s\n", "matrix", "label",
	       "size", "count", "type", "time", "median", "algbw", "busbw", "#wrong", "synth",
	       "staging", "passes", "cache");
	printf("# %6s %-16s %12s %12s %5s %10s %10s %8s %8s %8s %10s %12s %6s %9s\n", "", "", "(B)",
	       "(elements)", "", "(us)", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(B)", "", "hit/look");
}

static void print_row(const struct run_row *w)
{
	char cache[32];

	snprintf(cache, sizeof cache, "%llu/%llu", (unsigned long long)w->hits,
		 (unsigned long long)w->lookups);
	printf("  %6u %-16.16s %12llu %12llu %5s %10.1f %10.1f %8.3f %8.3f %8llu %10.1f %12llu %6u %9s\n",
	       w->matrix, w->label, (unsigned long long)w->size, (unsigned long long)w->size, "uint8",
	       w->time_us, w->median_us, w->algbw, w->busbw, (unsigned long long)w->wrong,
	       w->synth_us, (unsigned long long)w->staging, w->passes, cache);
}

static void print_json(const struct run_ctx *c, const struct run_row *rows, size_t n)
{
	const struct run_opts *o = c->o;

	printf("{\"ranks\": %d, \"topology\": ", c->size);
	json_string(c->topo.name);
	printf(", \"servers\": %u, \"gpus_per_server\": %u, \"gpus_total\": %u, \"backend\": ",
	       c->topo.servers, c->topo.gpus, fast_topo_ngpus(&c->topo));
	json_string(o->backend);
	printf(", \"%s\": ", o->in.plan_path ? "plan" : "algo");
	json_string(o->in.plan_path ? o->in.plan_path : o->algo);
	printf(", \"traffic\": ");
	json_string(o->in.traffic_path);
	printf(", \"iters\": %u, \"warmup\": %u, \"check\": %u, \"max_staging_bytes\": %llu",
	       o->iters, o->warmup, o->check, (unsigned long long)o->max_staging);
	if (c->x)
		printf(", \"in_flight\": %u", fast_exec_in_flight(c->x));
	printf(", \"rows\": [");
	for (size_t i = 0; i < n; i++) {
		const struct run_row *w = &rows[i];
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
		printf(", \"staging_bytes\": %llu, \"passes\": %u, \"waves\": %u, \"moves\": \"%s\", "
		       "\"cache_hits\": %llu, \"cache_lookups\": %llu",
		       (unsigned long long)w->staging, w->passes, w->waves,
		       fast_traffic_kind_name(w->moves), (unsigned long long)w->hits,
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
static bool next_size(const struct run_opts *o, uint64_t *size)
{
	double next = ceil((double)*size * o->factor);

	if (*size >= o->maxb || next > (double)o->maxb || next <= (double)*size)
		return false;
	*size = (uint64_t)next;
	return true;
}

/* Rows a matrix gives: the sizes of the series, or 1. */
static uint64_t sweep_steps(const struct run_opts *o)
{
	uint64_t n = 1, size = o->minb;

	while (o->sweep && next_size(o, &size))
		n++;
	return n;
}

bool run_as_tokens(const struct run_ctx *c, const struct fast_matrix *m,
		   const struct fast_plan *plan)
{
	const struct fast_algo *a;

	if (m->kind == FAST_TRAFFIC_BYTES || c->mpi)
		return false;
	if (plan)
		return plan->kind != FAST_TRAFFIC_BYTES;
	a = fast_algo_find(c->o->algo);
	return a && a->compile_tokens; /* fast_exec_opts' dedup: server */
}

int run_rows(struct run_ctx *c, const struct fast_traffic *t, const struct fast_planset *ps)
{
	struct run_opts *o = c->o;
	struct run_row *rows = NULL;
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
			struct run_row w;
			const uint64_t *D = t->m[m].bytes;
			if (o->sweep) {
				scale(t->m[m].bytes, ng, base, size, Ds);
				D = Ds;
			}
			st = run_measure(c, orig, t->m[m].label, D,
					 run_as_tokens(c, &t->m[m], c->plan) ? &t->m[m] : NULL, &w);
			if (st) {
				free(w.staging_rank);
				break;
			}
			if (nrows == cap) {
				struct run_row *nr = fast_reallocarray(rows, cap ? cap * 2 : 16, sizeof *rows);
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
