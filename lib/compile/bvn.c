/*
 * bvn.c - padding, exact Birkhoff-von Neumann decomposition with matching
 * repair, quantised decompositions, trimming, the stage cost model and the
 * ordering of terms.  See bvn.h for the contracts; the matcher the rounds
 * use (Hopcroft-Karp and the one-row repair) is in bvn_match.c, the
 * alpha-aware search over quanta and hybrids (fast_bvn_search) in
 * bvn_search.c, and what they share in bvn_internal.h.
 *
 * The decomposition is Birkhoff's greedy algorithm: take a perfect matching
 * on the support of the remaining matrix R, subtract its smallest entry w
 * along the matching, repeat.  Each round zeroes at least one entry, so the
 * remaining matrix moves to a strictly smaller face of the Birkhoff polytope
 * (dimension at most (n-1)^2), hence at most n^2 - 2n + 2 rounds.  Only
 * the rows whose matched entry reached zero lose their partner; the rest of
 * the matching stays valid on the new support, so a round costs O(n) plus
 * one augmenting-path search per freed row instead of a fresh matching.
 * A perfect matching always exists while R != 0 because every line of R
 * sums to the same positive value (Konig-Egervary).
 *
 * The matrix is kept dense (n x n uint64): n is the number of servers, and
 * a row scan of a few hundred entries is cheaper than list upkeep.
 */
#include "lib/compile/bvn.h"
#include "lib/compile/bvn_internal.h"

#include <stdlib.h>
#include <string.h>

void fast_bvn_free(struct fast_bvn *b)
{
	if (!b)
		return;
	free(b->perm);
	free(b->weight);
	b->perm = NULL;
	b->weight = NULL;
	b->nterms = 0;
}

/* *R += the gpus entries of row, *r = their sum, *cnt += the non-zero
 * ones; false when *R overflows.  Plain adds (which vectorise) while every
 * entry is under 2^48 and there are at most 2^16: the sum then fits, and
 * the running *R overflows iff *R + sum does; else entry by entry. */
static bool add_row(const uint64_t *row, uint32_t gpus, uint64_t *R, uint64_t *r, uint64_t *cnt)
{
	uint64_t sum = 0, any = 0, c = 0;

	for (uint32_t j = 0; j < gpus; j++) {
		sum += row[j];
		any |= row[j];
		c += row[j] != 0;
	}
	*cnt += c;
	*r = sum;
	if (!(any >> 48) && gpus <= UINT32_C(1) << 16)
		return fast_add_u64(*R, sum, R);
	for (uint32_t j = 0; j < gpus; j++) /* sum <= *R: no overflow while *R has none */
		if (!fast_add_u64(*R, row[j], R))
			return false;
	return true;
}

int fast_bvn_server_loads(const uint64_t *D, uint32_t servers, uint32_t gpus, uint64_t *S,
			  uint64_t *load, uint64_t *nnz, struct fast_err *err)
{
	size_t ng = (size_t)servers * gpus;
	uint64_t *tmp = fast_calloc((size_t)servers * servers + 1, sizeof *tmp), cnt = 0;

	if (!tmp)
		return fast_err_set(err, FAST_ENOMEM, "server matrix: out of memory");
	for (uint32_t a = 0; a < servers; a++)
		for (uint32_t b = 0; b < servers; b++) {
			uint64_t R = 0;
			if (a == b)
				continue;
			for (uint32_t i = 0; i < gpus; i++) {
				const uint64_t *row = D + ((size_t)a * gpus + i) * ng + (size_t)b * gpus;
				uint64_t r;
				if (!add_row(row, gpus, &R, &r, &cnt)) {
					free(tmp);
					return fast_err_set(err, FAST_EINPUT,
							    "traffic: bytes from server %u to server %u overflow 64 bits",
							    a, b);
				}
				if (load)
					load[((size_t)a * servers + b) * gpus + i] = r;
			}
			tmp[(size_t)a * servers + b] = R / gpus + (R % gpus != 0);
		}
	memcpy(S, tmp, (size_t)servers * servers * sizeof *S);
	free(tmp);
	if (nnz)
		*nnz = cnt;
	return 0;
}

int fast_bvn_server_matrix(const uint64_t *D, uint32_t servers, uint32_t gpus, uint64_t *S,
			   struct fast_err *err)
{
	return fast_bvn_server_loads(D, servers, gpus, S, NULL, NULL, err);
}

uint64_t fast_bvn_max_terms(uint32_t n)
{
	if (n <= 1)
		return 1;
	return (uint64_t)n * n - 2 * (uint64_t)n + 2;
}

/* Row and column sums with overflow checks; false on overflow. */
bool fast_bvn_line_sums(const uint64_t *S, uint32_t n, uint64_t *row, uint64_t *col)
{
	memset(row, 0, n * sizeof *row);
	memset(col, 0, n * sizeof *col);
	for (uint32_t i = 0; i < n; i++)
		for (uint32_t j = 0; j < n; j++) {
			uint64_t v = S[(size_t)i * n + j];
			if (!fast_add_u64(row[i], v, &row[i]) || !fast_add_u64(col[j], v, &col[j]))
				return false;
		}
	return true;
}

/* fast_bvn_pad with the caller's scratch: row and col hold n entries;
 * sums_fit: the line sums are known not to overflow. */
static int pad_with(uint64_t *S, uint32_t n, uint64_t *row, uint64_t *col, bool sums_fit,
		    uint64_t *M_out, struct fast_err *err)
{
	uint64_t M = 0;
	uint32_t i = 0, j = 0;

	if (sums_fit)
		fast_line_sums(S, n, row, col);
	else if (!fast_bvn_line_sums(S, n, row, col))
		return fast_err_set(err, FAST_EINPUT, "server matrix: a line sum overflows 64 bits");
	for (uint32_t k = 0; k < n; k++) {
		if (row[k] > M)
			M = row[k];
		if (col[k] > M)
			M = col[k];
	}
	/* deficits, then northwest-corner fill: the total row deficit equals
	 * the total column deficit (n*M - sum), so both pointers finish
	 * together and at most 2n - 1 entries are raised */
	for (uint32_t k = 0; k < n; k++) {
		row[k] = M - row[k];
		col[k] = M - col[k];
	}
	while (i < n && j < n) {
		uint64_t a;
		if (row[i] == 0) {
			i++;
			continue;
		}
		if (col[j] == 0) {
			j++;
			continue;
		}
		a = row[i] < col[j] ? row[i] : col[j];
		S[(size_t)i * n + j] += a; /* <= M: no overflow */
		row[i] -= a;
		col[j] -= a;
	}
	*M_out = M;
	return 0;
}

int fast_bvn_pad(uint64_t *S, uint32_t n, uint64_t *M_out, struct fast_err *err)
{
	uint64_t *row, *col;
	int rc;

	if (n == 0) {
		*M_out = 0;
		return 0;
	}
	row = fast_calloc(n, sizeof *row);
	col = fast_calloc(n, sizeof *col);
	if (!row || !col) {
		free(row);
		free(col);
		return fast_err_set(err, FAST_ENOMEM, "padding a %ux%u matrix: out of memory", n, n);
	}
	rc = pad_with(S, n, row, col, false, M_out, err);
	free(row);
	free(col);
	return rc;
}

/* --- the decomposition ------------------------------------------------- */

bool fast_bvn_terms_push(struct terms *t, const int32_t *rm, uint64_t w, uint64_t max_terms)
{
	if (t->count == t->cap) {
		uint64_t cap = t->cap ? (uint64_t)t->cap * 2 : 4 * (uint64_t)t->n + 4;
		uint32_t *p;
		uint64_t *wt;
		if (cap > max_terms)
			cap = max_terms;
		if (cap <= t->count || cap > UINT32_MAX)
			return false;
		p = fast_reallocarray(t->perm, (size_t)cap * t->n, sizeof *p);
		if (!p)
			return false;
		t->perm = p;
		wt = fast_reallocarray(t->weight, (size_t)cap, sizeof *wt);
		if (!wt)
			return false;
		t->weight = wt;
		t->cap = (uint32_t)cap;
	}
	for (uint32_t i = 0; i < t->n; i++)
		t->perm[(size_t)t->count * t->n + i] = (uint32_t)rm[i];
	t->weight[t->count++] = w;
	return true;
}

#define BOUND_MARGIN 1e-9 /* relative: far above the rounding of a few thousand sums */

void fast_bvn_tracker_lines(const uint64_t *S, uint32_t n, uint64_t *line, uint32_t *nz)
{
	memset(line, 0, 2 * (size_t)n * sizeof *line);
	memset(nz, 0, 2 * (size_t)n * sizeof *nz);
	for (uint32_t i = 0; i < n; i++)
		for (uint32_t j = 0; j < n; j++) {
			uint64_t v = S[(size_t)i * n + j];
			if (i == j || !v)
				continue;
			line[i] += v; /* no overflow: the caller checked */
			line[n + j] += v;
			nz[i]++;
			nz[n + j]++;
		}
}

void fast_bvn_tracker_start(struct tracker *tr, uint32_t n, const uint64_t *line0,
			    const uint32_t *nz0)
{
	memcpy(tr->rem, tr->S, (size_t)n * n * sizeof *tr->rem);
	memcpy(tr->line, line0, 2 * (size_t)n * sizeof *tr->line);
	memcpy(tr->nz, nz0, 2 * (size_t)n * sizeof *tr->nz);
	tr->t = 0;
	tr->L_ub = 0;
	tr->d_ub = 0;
	for (uint32_t k = 0; k < 2 * n; k++) {
		tr->L_ub = line0[k] > tr->L_ub ? line0[k] : tr->L_ub;
		tr->d_ub = nz0[k] > tr->d_ub ? nz0[k] : tr->d_ub;
	}
}

static bool track(struct tracker *tr, uint32_t n, const int32_t *rm, uint64_t w)
{
	uint64_t need = 0, L = 0;
	uint32_t d = 0;

	for (uint32_t a = 0; a < n; a++) {
		uint64_t *r, s;
		uint32_t j = (uint32_t)rm[a];
		if (j == a)
			continue;
		r = &tr->rem[(size_t)a * n + j];
		s = *r < w ? *r : w;
		if (!s)
			continue;
		*r -= s;
		tr->line[a] -= s;
		tr->line[n + j] -= s;
		if (*r == 0) {
			tr->nz[a]--;
			tr->nz[n + j]--;
		}
		need = s > need ? s : need;
	}
	if (!need)
		return false;
	tr->t += tr->m.stage_s + (double)need / tr->m.Bps;
	if (tr->t > tr->limit)
		return true;
	/* the bound from the stale maxima is at least the exact one (the
	 * rounded operations are monotone): under the limit, so is this */
	if (!(tr->t + tr->d_ub * tr->m.stage_s + (double)tr->L_ub / tr->m.Bps >
	      tr->limit * (1 + BOUND_MARGIN)))
		return false;
	for (uint32_t k = 0; k < 2 * n; k++) {
		L = tr->line[k] > L ? tr->line[k] : L;
		d = tr->nz[k] > d ? tr->nz[k] : d;
	}
	tr->L_ub = L;
	tr->d_ub = d;
	return tr->t + d * tr->m.stage_s + (double)L / tr->m.Bps >
	       tr->limit * (1 + BOUND_MARGIN);
}

void fast_bvn_work_free(struct work *w)
{
	free(w->R);
	free(w->rem);
	free(w->row);
	free(w->col);
	free(w->freed);
	fast_bvn_matcher_free(&w->m);
	free(w->t.perm);
	free(w->t.weight);
	memset(w, 0, sizeof *w);
}

/* false (nothing to free) when out of memory */
bool fast_bvn_work_init(struct work *w, uint32_t n)
{
	size_t nn = (size_t)n * n;

	memset(w, 0, sizeof *w);
	w->n = n;
	w->t.n = n;
	w->R = fast_calloc(nn + 1, sizeof *w->R);
	w->rem = fast_calloc(nn + 1, sizeof *w->rem);
	w->row = fast_calloc(n + 1, sizeof *w->row);
	w->col = fast_calloc(n + 1, sizeof *w->col);
	w->freed = fast_calloc(n + 1, sizeof *w->freed);
	if (!w->R || !w->rem || !w->row || !w->col || !w->freed || !fast_bvn_matcher_alloc(&w->m, n)) {
		fast_bvn_work_free(w);
		return false;
	}
	return true;
}

/* Decompose w->R (equal line sums M, destroyed) into out, weights times
 * scale.  With a tracker, returns ABORTED (out untouched) once the running
 * modelled time passes tr->limit. */
static int decompose_core(struct work *wk, uint32_t n, uint64_t M, uint64_t scale,
			  struct tracker *tr, struct fast_bvn *out, struct fast_err *err)
{
	struct matcher *m = &wk->m;
	struct terms *t = &wk->t;
	uint64_t *R = wk->R, left = M, max_terms = fast_bvn_max_terms(n), total;
	int32_t *freed = wk->freed;

	if (!fast_mul_u64(M, scale, &total))
		return fast_err_set(err, FAST_EINPUT, "decomposition: padded sum overflows 64 bits");
	if (M == 0) {
		memset(out, 0, sizeof *out);
		out->n = n;
		out->quantum = scale;
		return 0;
	}
	fast_bvn_matcher_reset(m, R);
	t->count = 0;
	if (!fast_bvn_hopcroft_karp(m))
		return fast_err_set(err, FAST_ERUNTIME,
				    "decomposition: no perfect matching on the support (lines unequal?)");
	while (left > 0) {
		uint64_t w = UINT64_MAX;
		uint32_t nfreed = 0;

		for (uint32_t i = 0; i < n; i++) {
			uint64_t v = R[(size_t)i * n + (uint32_t)m->rm[i]];
			if (v < w)
				w = v;
		}
		if (!fast_bvn_terms_push(t, m->rm, w * scale, max_terms))
			return fast_err_set(err, t->count >= max_terms ? FAST_ERUNTIME : FAST_ENOMEM,
					    "decomposition of %ux%u: %s", n, n,
					    t->count >= max_terms ? "term bound exceeded"
								  : "out of memory");
		if (tr && track(tr, n, m->rm, w * scale))
			return ABORTED;
		for (uint32_t i = 0; i < n; i++) {
			uint32_t j = (uint32_t)m->rm[i];
			uint64_t *e = &R[(size_t)i * n + j];
			*e -= w;
			if (*e == 0) {
				freed[nfreed++] = (int32_t)i;
				m->sup[(size_t)i * m->W + j / 64] &= ~(UINT64_C(1) << (j % 64));
			}
		}
		left -= w;
		if (left == 0)
			break;
		for (uint32_t k = 0; k < nfreed; k++)
			fast_bvn_unmatch_row(m, (uint32_t)freed[k]);
		for (uint32_t k = 0; k < nfreed; k++)
			if (!fast_bvn_repair_row(m, (uint32_t)freed[k]))
				return fast_err_set(err, FAST_ERUNTIME,
						    "decomposition: matching repair failed (lines unequal?)");
	}
	/* the terms move to out; the next decomposition grows a new buffer */
	memset(out, 0, sizeof *out);
	out->n = n;
	out->nterms = t->count;
	out->perm = t->perm;
	out->weight = t->weight;
	out->total = total;
	out->quantum = scale;
	t->perm = NULL;
	t->weight = NULL;
	t->count = t->cap = 0;
	return 0;
}

int fast_bvn_decompose(const uint64_t *S, uint32_t n, struct fast_bvn *out,
		       struct fast_err *err)
{
	struct work wk;
	uint64_t M;
	int rc;

	if (n == 0) {
		memset(out, 0, sizeof *out);
		out->quantum = 1;
		return 0;
	}
	if (!fast_bvn_work_init(&wk, n))
		return fast_err_set(err, FAST_ENOMEM, "decomposition of %ux%u: out of memory", n, n);
	if (!fast_bvn_line_sums(S, n, wk.row, wk.col)) {
		rc = fast_err_set(err, FAST_EINPUT, "decomposition: a line sum overflows 64 bits");
		goto out;
	}
	M = wk.row[0];
	for (uint32_t i = 0; i < n; i++)
		if (wk.row[i] != M || wk.col[i] != M) {
			rc = fast_err_set(err, FAST_EINPUT,
					  "decomposition: line sums differ (row 0 = %llu, %s %u = %llu); pad first",
					  (unsigned long long)M, wk.row[i] != M ? "row" : "column", i,
					  (unsigned long long)(wk.row[i] != M ? wk.row[i] : wk.col[i]));
			goto out;
		}
	memcpy(wk.R, S, (size_t)n * n * sizeof *wk.R);
	rc = decompose_core(&wk, n, M, 1, NULL, out, err);
out:
	fast_bvn_work_free(&wk);
	return rc;
}

/* ceil(x / q) for q >= 2: below 2^52 through the double reciprocal,
 * corrected to the exact quotient (the estimate is off by at most one,
 * x and the quotient being exact in a double); a 64-bit division costs
 * several times as much, and a candidate quantises all n^2 entries. */
static inline uint64_t ceil_div(uint64_t x, uint64_t q, double rq)
{
	uint64_t f;

	if (x >> 52)
		return x / q + (x % q != 0);
	f = (uint64_t)((double)x * rq);
	if (f * q > x)
		f--;
	else if (x - f * q >= q)
		f++;
	return f + (f * q != x);
}

/* ceil(S / q) entrywise into wk->R, padded, decomposed. */
int fast_bvn_quantized_with(struct work *wk, const uint64_t *S, uint32_t n, uint64_t q,
			    bool sums_fit, struct tracker *tr, struct fast_bvn *out,
			    struct fast_err *err)
{
	uint64_t *R = wk->R, M;
	int rc;

	if (q == 1) {
		memcpy(R, S, (size_t)n * n * sizeof *R);
	} else {
		double rq = 1.0 / (double)q;
		for (size_t k = 0; k < (size_t)n * n; k++)
			R[k] = ceil_div(S[k], q, rq);
	}
	if ((rc = pad_with(R, n, wk->row, wk->col, sums_fit, &M, err)) < 0)
		return rc;
	return decompose_core(wk, n, M, q, tr, out, err);
}

int fast_bvn_quantized(const uint64_t *S, uint32_t n, uint64_t q, struct fast_bvn *out,
		       struct fast_err *err)
{
	struct work wk;
	int rc;

	if (q == 0)
		return fast_err_set(err, FAST_EUSAGE, "decomposition: quantum must be > 0");
	if (n == 0) {
		memset(out, 0, sizeof *out);
		out->quantum = q;
		return 0;
	}
	if (!fast_bvn_work_init(&wk, n))
		return fast_err_set(err, FAST_ENOMEM, "decomposition of %ux%u: out of memory", n, n);
	rc = fast_bvn_quantized_with(&wk, S, n, q, false, NULL, out, err);
	fast_bvn_work_free(&wk);
	return rc;
}

/* fast_bvn_trim with the caller's n x n scratch. */
void fast_bvn_trim_with(struct fast_bvn *b, const uint64_t *S, uint64_t *rem)
{
	uint32_t n = b->n, kept = 0;
	uint64_t total = 0;

	if (b->nterms == 0)
		return;
	memcpy(rem, S, (size_t)n * n * sizeof *rem);
	for (uint32_t k = 0; k < b->nterms; k++) {
		const uint32_t *p = b->perm + (size_t)k * n;
		uint64_t w = b->weight[k], need = 0;
		for (uint32_t a = 0; a < n; a++) {
			uint64_t *r;
			uint64_t s;
			if (p[a] == a)
				continue; /* idle row: its slot is padding */
			r = &rem[(size_t)a * n + p[a]];
			s = *r < w ? *r : w;
			*r -= s;
			if (s > need)
				need = s;
		}
		if (need == 0)
			continue;
		if (kept != k)
			memmove(b->perm + (size_t)kept * n, p, n * sizeof *p);
		b->weight[kept++] = need;
		total += need;
	}
	b->nterms = kept;
	b->total = total;
}

void fast_bvn_trim(struct fast_bvn *b, const uint64_t *S)
{
	uint64_t *rem;

	if (b->nterms == 0)
		return;
	rem = fast_calloc((size_t)b->n * b->n, sizeof *rem);
	if (!rem)
		return; /* untrimmed is still correct */
	fast_bvn_trim_with(b, S, rem);
	free(rem);
}

double fast_bvn_time(const struct fast_bvn *b, const struct fast_bvn_model *m)
{
	uint32_t n = b->n, k_eff = 0;
	uint64_t bytes = 0;

	for (uint32_t k = 0; k < b->nterms; k++) {
		const uint32_t *p = b->perm + (size_t)k * n;
		uint32_t a = 0;
		while (a < n && p[a] == a)
			a++;
		if (a == n)
			continue; /* everyone idles: never run */
		k_eff++;
		bytes += b->weight[k];
	}
	return k_eff * m->stage_s + (double)bytes / m->Bps;
}

/* a goes before c in the order (strictly: ties keep their positions) */
static bool before(uint64_t a, uint64_t c, enum fast_bvn_order order)
{
	return order == FAST_BVN_LARGEST_FIRST ? a > c : a < c;
}

int fast_bvn_sort(struct fast_bvn *b, enum fast_bvn_order order, struct fast_err *err)
{
	uint32_t n = b->n, K = b->nterms, *idx, *tmp;
	uint64_t *w;
	bool sorted = true;

	if (order == FAST_BVN_AS_FOUND || K < 2)
		return 0;
	for (uint32_t k = 1; k < K && sorted; k++)
		sorted = !before(b->weight[k], b->weight[k - 1], order);
	if (sorted)
		return 0;
	idx = fast_calloc(2 * (size_t)K + n, sizeof *idx);
	w = fast_calloc(K, sizeof *w);
	if (!idx || !w) {
		free(idx);
		free(w);
		return fast_err_set(err, FAST_ENOMEM, "sorting %u stages: out of memory", K);
	}
	tmp = idx + K;
	for (uint32_t k = 0; k < K; k++)
		idx[k] = k;
	/* stable bottom-up merge sort of the indices, runs of 8 by insertion */
	for (uint32_t lo = 0; lo < K; lo += 8) {
		uint32_t hi = lo + 8 < K ? lo + 8 : K;
		for (uint32_t k = lo + 1; k < hi; k++) {
			uint32_t x = idx[k], j = k;
			while (j > lo && before(b->weight[x], b->weight[idx[j - 1]], order)) {
				idx[j] = idx[j - 1];
				j--;
			}
			idx[j] = x;
		}
	}
	for (uint32_t width = 8; width < K; width *= 2) {
		for (uint32_t lo = 0; lo < K; lo += 2 * width) {
			uint32_t mid = lo + width < K ? lo + width : K;
			uint32_t hi = lo + 2 * width < K ? lo + 2 * width : K;
			uint32_t a = lo, c = mid, o = lo;
			while (a < mid && c < hi)
				tmp[o++] = before(b->weight[idx[c]], b->weight[idx[a]], order) ? idx[c++]
											: idx[a++];
			while (a < mid)
				tmp[o++] = idx[a++];
			while (c < hi)
				tmp[o++] = idx[c++];
		}
		memcpy(idx, tmp, K * sizeof *idx);
	}
	/* apply in place, cycle by cycle, through one spare row (tmp + K):
	 * position k takes term idx[k] */
	for (uint32_t k = 0; k < K; k++)
		w[k] = b->weight[idx[k]];
	memcpy(b->weight, w, K * sizeof *w);
	for (uint32_t k = 0; k < K; k++)
		tmp[k] = 0; /* done marks */
	for (uint32_t k = 0; k < K; k++) {
		uint32_t *spare = tmp + K, at = k;
		if (tmp[k] || idx[k] == k)
			continue;
		memcpy(spare, b->perm + (size_t)k * n, n * sizeof *spare);
		while (idx[at] != k) {
			memcpy(b->perm + (size_t)at * n, b->perm + (size_t)idx[at] * n, n * sizeof *spare);
			tmp[at] = 1;
			at = idx[at];
		}
		memcpy(b->perm + (size_t)at * n, spare, n * sizeof *spare);
		tmp[at] = 1;
	}
	free(idx);
	free(w);
	return 0;
}

