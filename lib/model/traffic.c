/*
 * traffic.c - all-to-all(v) traffic matrices: allocation (within the
 * limits of traffic_read.c's file comment), byte matrices from token
 * groups, the writers (JSON, nccl-tests matrix), summary statistics and
 * the transpose that turns a MoE dispatch into its combine.  Reading is
 * traffic_read.c; traffic_internal.h is what the two share.
 */
#include "lib/model/traffic_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/base/json.h"

const struct fast_limits *fast_traffic_limits(const struct fast_limits *lim,
					       struct fast_limits *tmp)
{
	if (lim)
		return lim;
	fast_limits_default(tmp);
	return tmp;
}

/* A zeroed matrix of `cells` entries.  Up to 32 MiB it starts on a
 * 64-byte line (as malloc's large blocks, 16 bytes past one, do not), so
 * that the rows of a multiple of 8 GPUs do too and --algo auto's
 * decision reads them with whole-line vector loads (lib/compile/algo_auto_feat.c,
 * gather8_avx512; fast_auto_choose at 16 x 8, medians of 31 batches in
 * six alternating rounds: 1.83-2.57 us against 2.03-2.81 us 16 bytes
 * past a line, as calloc's blocks start); above, calloc's untouched zero
 * pages are worth more than the alignment. */
static uint64_t *matrix_alloc(size_t cells)
{
	size_t size = cells * sizeof(uint64_t), line = 64;
	uint64_t *m;

	if (cells == 0 || size > (UINT64_C(32) << 20))
		return fast_calloc(cells, sizeof(uint64_t));
	m = aligned_alloc(line, (size + line - 1) / line * line);
	if (m)
		memset(m, 0, size);
	return m;
}

int fast_traffic_alloc(struct fast_traffic *t, uint32_t ng, uint32_t count,
		       const struct fast_limits *lim, struct fast_err *err)
{
	struct fast_limits dl;
	struct fast_traffic r;
	size_t cells;

	lim = fast_traffic_limits(lim, &dl);
	if (ng == 0)
		return fast_err_set(err, FAST_EINPUT, "traffic needs at least 1 GPU");
	if (ng > lim->max_gpus)
		return fast_err_set(err, FAST_ELIMIT,
				    "%u GPUs is over the limit of %u (raise it with --max-gpus)",
				    ng, lim->max_gpus);
	if (count > lim->max_matrices)
		return fast_err_set(err, FAST_ELIMIT, "%u matrices is over the limit of %u",
				    count, lim->max_matrices);
	if (__builtin_mul_overflow((size_t)ng, (size_t)ng, &cells))
		return fast_err_set(err, FAST_ENOMEM, "a %u x %u matrix does not fit in memory",
				    ng, ng);
	/* every matrix is held dense, however few entries a sparse file
	 * gives: refuse what the budget cannot hold before allocating */
	{
		unsigned __int128 need = (unsigned __int128)cells * count * sizeof(uint64_t);
		if (need > lim->max_traffic_bytes) {
			char a[32], b[32];
			if (need > UINT64_MAX)
				snprintf(a, sizeof a, "more than 16 EiB");
			else
				fast_size_format((uint64_t)need, a, sizeof a);
			fast_size_format(lim->max_traffic_bytes, b, sizeof b);
			if (strchr(b, '.')) /* rounded: give the limit exactly */
				snprintf(b, sizeof b, "%llu B",
					 (unsigned long long)lim->max_traffic_bytes);
			return fast_err_set(err, FAST_ELIMIT,
					    "%u matrices of %u x %u GPUs need %s in memory (dense, 8 "
					    "bytes per pair), over the limit of %s (raise it with "
					    "--max-traffic-bytes)",
					    count, ng, ng, a, b);
		}
	}
	memset(&r, 0, sizeof r);
	r.ng = ng;
	r.m = fast_calloc(count, sizeof *r.m);
	if (!r.m)
		return fast_err_set(err, FAST_ENOMEM, "out of memory for %u matrices", count);
	for (uint32_t i = 0; i < count; i++) {
		snprintf(r.m[i].label, sizeof r.m[i].label, "m%u", i);
		r.m[i].ng = ng;
		r.m[i].bytes = matrix_alloc(cells);
		if (!r.m[i].bytes) {
			r.count = i;
			fast_traffic_free(&r);
			return fast_err_set(err, FAST_ENOMEM,
					    "out of memory for %u matrices of %u x %u", count, ng,
					    ng);
		}
	}
	r.count = count;
	*t = r;
	return 0;
}

void fast_traffic_free(struct fast_traffic *t)
{
	if (!t)
		return;
	for (uint32_t i = 0; i < t->count && t->m; i++) {
		free(t->m[i].bytes);
		free(t->m[i].groups);
		free(t->m[i].dsts);
		free(t->m[i].compute_pairs);
	}
	free(t->m);
	memset(t, 0, sizeof *t);
}

struct fast_matrix fast_matrix_of(const uint64_t *bytes, uint32_t ng)
{
	struct fast_matrix m;

	memset(&m, 0, sizeof m);
	m.ng = ng;
	m.bytes = (uint64_t *)bytes; /* borrowed: the operations only read it */
	return m;
}

const char *fast_traffic_kind_name(enum fast_traffic_kind k)
{
	switch (k) {
	case FAST_TRAFFIC_DISPATCH:
		return "dispatch";
	case FAST_TRAFFIC_COMBINE:
		return "combine";
	default:
		return "bytes";
	}
}

int fast_matrix_bytes_from_groups(struct fast_matrix *m, uint32_t ng, struct fast_err *err)
{
	m->ng = ng;
	memset(m->bytes, 0, (size_t)ng * ng * sizeof *m->bytes);
	for (uint32_t g = 0; g < m->ngroups; g++) {
		const struct fast_group *gr = &m->groups[g];
		uint64_t b;
		if (gr->src >= ng)
			return fast_err_set(err, FAST_EINPUT, "group %u: source GPU %u is not below %u",
					    g, gr->src, ng);
		if (gr->ndst == 0 || gr->ndst > FAST_GROUP_MAX_DESTS ||
		    gr->dst0 > m->ndsts || gr->ndst > m->ndsts - gr->dst0)
			return fast_err_set(err, FAST_EINPUT,
					    "group %u: needs 1 to %u destination GPUs", g,
					    FAST_GROUP_MAX_DESTS);
		if (__builtin_mul_overflow(gr->tokens, m->token_bytes, &b))
			return fast_err_set(err, FAST_EINPUT, "group %u: bytes exceed 64 bits", g);
		for (uint32_t i = 0; i < gr->ndst; i++) {
			uint32_t d = m->dsts[gr->dst0 + i];
			if (d >= ng)
				return fast_err_set(err, FAST_EINPUT,
						    "group %u: destination GPU %u is not below %u", g,
						    d, ng);
			if (i > 0 && d <= m->dsts[gr->dst0 + i - 1])
				return fast_err_set(err, FAST_EINPUT,
						    "group %u: destinations must be ascending and distinct",
						    g);
			uint64_t *cell = m->kind == FAST_TRAFFIC_COMBINE
						 ? &m->bytes[(size_t)d * ng + gr->src]
						 : &m->bytes[(size_t)gr->src * ng + d];
			if (__builtin_add_overflow(*cell, b, cell))
				return fast_err_set(err, FAST_EINPUT,
						    "group %u: the byte matrix entry exceeds 64 bits", g);
		}
	}
	return 0;
}


int fast_traffic_check_topo(const struct fast_traffic *t, const struct fast_topo *topo,
			    const char *name, struct fast_err *err)
{
	uint32_t want = fast_topo_ngpus(topo);

	if (t->ng != want)
		return fast_err_set(err, FAST_EINPUT,
				    "%s: traffic has %u GPUs but the topology has %u (%u servers "
				    "x %u GPUs)",
				    name, t->ng, want, topo->servers, topo->gpus);
	return 0;
}

/* --- writers ------------------------------------------------------------- */

bool fast_traffic_has_tokens(const struct fast_traffic *t)
{
	for (uint32_t k = 0; k < t->count; k++)
		if (t->m[k].kind != FAST_TRAFFIC_BYTES)
			return true;
	return false;
}

/* "kind", "token_bytes" and one group per line. */
static void write_groups(const struct fast_matrix *m, FILE *f)
{
	fprintf(f, ",\n      \"kind\": \"%s\",\n      \"token_bytes\": %llu,\n      \"groups\": [",
		fast_traffic_kind_name(m->kind), (unsigned long long)m->token_bytes);
	for (uint32_t g = 0; g < m->ngroups && !ferror(f); g++) {
		const struct fast_group *gr = &m->groups[g];
		fprintf(f, "%s\n        [%u, [", g ? "," : "", gr->src);
		for (uint32_t i = 0; i < gr->ndst; i++)
			fprintf(f, i ? ", %u" : "%u", m->dsts[gr->dst0 + i]);
		fprintf(f, "], %llu]", (unsigned long long)gr->tokens);
	}
	fputs(m->ngroups ? "\n      ]\n    }" : "]\n    }", f);
}

int fast_traffic_write(const struct fast_traffic *t, bool sparse, FILE *f,
		       struct fast_err *err)
{
	uint32_t ng = t->ng;

	fprintf(f, "{\n  \"version\": %d,\n  \"gpus_total\": %u,\n  \"source\": ",
		fast_traffic_has_pairs(t)    ? FAST_TRAFFIC_VERSION
		: fast_traffic_has_tokens(t) ? FAST_TRAFFIC_VERSION_TOKENS
					     : FAST_TRAFFIC_VERSION_BYTES,
		ng);
	fast_json_put_string(f, t->source);
	fputs(",\n  \"matrices\": [", f);
	for (uint32_t k = 0; k < t->count && !ferror(f); k++) {
		const uint64_t *b = t->m[k].bytes;
		bool first = true;

		fputs(k ? ",\n    {\n      \"label\": " : "\n    {\n      \"label\": ", f);
		fast_json_put_string(f, t->m[k].label);
		fast_traffic_write_pairs(&t->m[k], ng, f);
		if (t->m[k].kind != FAST_TRAFFIC_BYTES) {
			write_groups(&t->m[k], f);
			continue;
		}
		fputs(sparse ? ",\n      \"entries\": [" : ",\n      \"rows\": [", f);
		for (uint32_t s = 0; s < ng && !ferror(f); s++) {
			if (sparse) {
				for (uint32_t d = 0; d < ng; d++) {
					uint64_t v = b[(size_t)s * ng + d];
					if (!v)
						continue;
					fprintf(f, "%s\n        [%u, %u, %llu]", first ? "" : ",",
						s, d, (unsigned long long)v);
					first = false;
				}
				continue;
			}
			fputs(s ? ",\n        [" : "\n        [", f);
			for (uint32_t d = 0; d < ng; d++)
				fprintf(f, d ? ", %llu" : "%llu",
					(unsigned long long)b[(size_t)s * ng + d]);
			fputc(']', f);
		}
		fputs(sparse && first ? "]\n    }" : "\n      ]\n    }", f);
	}
	fputs("\n  ]\n}\n", f);
	if (ferror(f))
		return fast_err_set(err, FAST_EIO, "writing the traffic failed");
	return 0;
}

int fast_traffic_write_nccl(const struct fast_traffic *t, uint32_t index, FILE *f,
			    uint64_t *changed, struct fast_err *err)
{
	uint64_t nchanged = 0;
	uint32_t ng = t->ng;

	if (index >= t->count)
		return fast_err_set(err, FAST_EUSAGE, "matrix %u does not exist (%u matrices)",
				    index, t->count);
	for (uint32_t s = 0; s < ng && !ferror(f); s++) {
		for (uint32_t d = 0; d < ng; d++) {
			uint64_t v = t->m[index].bytes[(size_t)s * ng + d];
			/* round up: a non-empty message stays non-empty; v <= 2^53
			 * on every loaded matrix, but saturate rather than wrap */
			uint64_t r = v > UINT64_MAX - 15 ? v & ~UINT64_C(15) : (v + 15) & ~UINT64_C(15);
			if (r != v)
				nchanged++;
			fprintf(f, d ? " %llu" : "%llu", (unsigned long long)r);
		}
		fputc('\n', f);
	}
	if (ferror(f))
		return fast_err_set(err, FAST_EIO, "writing the matrix failed");
	if (changed)
		*changed = nchanged;
	return 0;
}

/* --- statistics ---------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/*
 * Gini coefficient of the off-diagonal pair sizes x_1 <= ... <= x_n:
 *     G = sum_i (2i - n - 1) x_i / (n sum_i x_i)
 * 0 when every pair carries the same bytes, (n-1)/n when one pair carries
 * everything.  The z zero pairs sort first and add nothing, so only the
 * non-zero ones are sorted (ranks z+1..n): scratch and sorting scale with
 * the pairs that carry bytes, not with ng^2 (sparse traffic of 16384 GPUs).
 * NAN if the scratch array cannot be allocated.
 */
static double gini(const uint64_t *b, uint32_t ng)
{
	size_t n = (size_t)ng * ng - ng, nz = 0, j = 0, z;
	double num = 0, sum = 0;
	uint64_t *x;

	if (n == 0)
		return 0;
	for (uint32_t s = 0; s < ng; s++)
		for (uint32_t d = 0; d < ng; d++)
			nz += s != d && b[(size_t)s * ng + d] != 0;
	if (nz == 0)
		return 0;
	x = malloc(nz * sizeof *x);
	if (!x)
		return NAN;
	for (uint32_t s = 0; s < ng; s++)
		for (uint32_t d = 0; d < ng; d++)
			if (s != d && b[(size_t)s * ng + d] != 0)
				x[j++] = b[(size_t)s * ng + d];
	qsort(x, nz, sizeof *x, cmp_u64);
	z = n - nz;
	for (size_t i = 0; i < nz; i++) {
		num += (2.0 * (double)(z + i + 1) - (double)n - 1.0) * (double)x[i];
		sum += (double)x[i];
	}
	free(x);
	return num / ((double)n * sum);
}

/*
 * Rows and columns count only off-diagonal bytes: the bytes a GPU sends to
 * (receives from) other GPUs, which are what links carry.  Sums cannot
 * overflow on a loaded matrix (checked at load time); on others they wrap.
 */
void fast_traffic_stats(const uint64_t *bytes, uint32_t ng, uint32_t gpus_per_server,
			struct fast_traffic_stats *out)
{
	struct fast_traffic_stats st;
	uint32_t G = gpus_per_server ? gpus_per_server : ng;
	uint32_t nservers = ng ? (ng + G - 1) / G : 0;
	uint64_t *col = calloc(ng ? ng : 1, sizeof *col);
	uint64_t *egress = calloc(nservers ? nservers : 1, sizeof *egress);
	uint64_t *ingress = calloc(nservers ? nservers : 1, sizeof *ingress);
	uint64_t off = 0;

	memset(&st, 0, sizeof st);
	for (uint32_t s = 0; s < ng; s++) {
		uint64_t row = 0;
		for (uint32_t d = 0; d < ng; d++) {
			uint64_t v = bytes[(size_t)s * ng + d];
			st.total += v;
			if (s == d) {
				st.local += v;
				continue;
			}
			row += v;
			if (col)
				col[d] += v;
			if (s / G == d / G) {
				st.intra += v;
			} else {
				st.inter += v;
				if (egress && ingress) {
					egress[s / G] += v;
					ingress[d / G] += v;
				}
			}
		}
		off += row;
		if (row > st.max_row || s == 0) {
			st.max_row = row;
			st.hot_sender = s;
		}
	}
	for (uint32_t d = 0; d < ng && col; d++)
		if (col[d] > st.max_col || d == 0) {
			st.max_col = col[d];
			st.hot_receiver = d;
		}
	for (uint32_t a = 0; a < nservers && egress && ingress; a++) {
		if (egress[a] > st.max_server_egress)
			st.max_server_egress = egress[a];
		if (ingress[a] > st.max_server_ingress)
			st.max_server_ingress = ingress[a];
	}
	st.mean_row = ng ? (double)off / ng : 0;
	st.mean_col = st.mean_row;
	st.row_skew = st.mean_row > 0 ? (double)st.max_row / st.mean_row : 0;
	st.col_skew = st.mean_col > 0 ? (double)st.max_col / st.mean_col : 0;
	st.gini = gini(bytes, ng);
	if (!col || !egress || !ingress)
		st.gini = NAN; /* partial statistics: flag them */
	free(col);
	free(egress);
	free(ingress);
	*out = st;
}

int fast_matrix_transpose(uint64_t *bytes, uint32_t ng, struct fast_err *err)
{
	(void)err; /* in place: cannot fail */
	for (uint32_t s = 0; s < ng; s++)
		for (uint32_t d = s + 1; d < ng; d++) {
			uint64_t tmp = bytes[(size_t)s * ng + d];
			bytes[(size_t)s * ng + d] = bytes[(size_t)d * ng + s];
			bytes[(size_t)d * ng + s] = tmp;
		}
	return 0;
}

void fast_matrix_other_phase(struct fast_matrix *m)
{
	fast_matrix_transpose(m->bytes, m->ng, NULL);
	if (m->kind == FAST_TRAFFIC_DISPATCH)
		m->kind = FAST_TRAFFIC_COMBINE;
	else if (m->kind == FAST_TRAFFIC_COMBINE)
		m->kind = FAST_TRAFFIC_DISPATCH;
}
