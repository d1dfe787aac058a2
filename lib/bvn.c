/*
 * bvn.c - padding, exact Birkhoff-von Neumann decomposition with matching
 * repair, quantised (alpha-aware) decompositions, trimming and the stage
 * cost model.  See bvn.h for the contracts.
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
#include "bvn.h"

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

int fast_bvn_server_matrix(const uint64_t *D, uint32_t servers, uint32_t gpus, uint64_t *S,
			   struct fast_err *err)
{
	size_t ng = (size_t)servers * gpus;
	uint64_t *tmp = fast_calloc((size_t)servers * servers + 1, sizeof *tmp);

	if (!tmp)
		return fast_err_set(err, FAST_ENOMEM, "server matrix: out of memory");
	for (uint32_t a = 0; a < servers; a++)
		for (uint32_t b = 0; b < servers; b++) {
			uint64_t R = 0;
			if (a == b)
				continue;
			for (uint32_t i = 0; i < gpus; i++) {
				const uint64_t *row = D + ((size_t)a * gpus + i) * ng + (size_t)b * gpus;
				for (uint32_t j = 0; j < gpus; j++)
					if (!fast_add_u64(R, row[j], &R)) {
						free(tmp);
						return fast_err_set(err, FAST_EINPUT,
								    "traffic: bytes from server %u to server %u overflow 64 bits",
								    a, b);
					}
			}
			tmp[(size_t)a * servers + b] = R / gpus + (R % gpus != 0);
		}
	memcpy(S, tmp, (size_t)servers * servers * sizeof *S);
	free(tmp);
	return 0;
}

uint64_t fast_bvn_max_terms(uint32_t n)
{
	if (n <= 1)
		return 1;
	return (uint64_t)n * n - 2 * (uint64_t)n + 2;
}

/* Row and column sums with overflow checks; false on overflow. */
static bool line_sums(const uint64_t *S, uint32_t n, uint64_t *row, uint64_t *col)
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

/* fast_bvn_pad with the caller's scratch: row and col hold n entries. */
static int pad_with(uint64_t *S, uint32_t n, uint64_t *row, uint64_t *col, uint64_t *M_out,
		    struct fast_err *err)
{
	uint64_t M = 0;
	uint32_t i = 0, j = 0;

	if (!line_sums(S, n, row, col))
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
	rc = pad_with(S, n, row, col, M_out, err);
	free(row);
	free(col);
	return rc;
}

/* --- the decomposition ------------------------------------------------- */

/*
 * The support of R is mirrored in one bitset per row (W = ceil(n / 64)
 * words), so that a search step finds the next unvisited or free column of
 * a row a word at a time: a full augmenting-path search costs O(n * W)
 * instead of O(n^2), which is what makes a round that frees every row (a
 * quantised candidate whose matched entries all reach zero together)
 * affordable.
 */
struct matcher {
	uint32_t n, W;
	uint64_t *R;      /* remaining matrix, n x n, owned by the caller */
	uint64_t *sup;    /* n x W: bit v of row u set iff R[u][v] > 0 */
	uint64_t *freec;  /* W: free (unmatched) columns */
	uint64_t *seen;   /* W: columns visited by the current search */
	int32_t *rm, *cm; /* row -> matched column, column -> matched row, -1 free */
	int32_t *dist, *it, *queue, *par;
};

static void matcher_free(struct matcher *m)
{
	free(m->sup);
	free(m->freec);
	free(m->seen);
	free(m->rm);
	free(m->cm);
	free(m->dist);
	free(m->it);
	free(m->queue);
	free(m->par);
}

/* Arrays for an n x n matcher; false (all freed) when out of memory. */
static bool matcher_alloc(struct matcher *m, uint32_t n)
{
	memset(m, 0, sizeof *m);
	m->n = n;
	m->W = (n + 63) / 64;
	m->sup = fast_calloc((size_t)n * m->W + 1, sizeof *m->sup);
	m->freec = fast_calloc(m->W + 1, sizeof *m->freec);
	m->seen = fast_calloc(m->W + 1, sizeof *m->seen);
	m->rm = fast_calloc(n + 1, sizeof *m->rm);
	m->cm = fast_calloc(n + 1, sizeof *m->cm);
	m->dist = fast_calloc(n + 1, sizeof *m->dist);
	m->it = fast_calloc(n + 1, sizeof *m->it);
	m->queue = fast_calloc(n + 1, sizeof *m->queue);
	m->par = fast_calloc(n + 1, sizeof *m->par);
	if (!m->sup || !m->freec || !m->seen || !m->rm || !m->cm || !m->dist || !m->it ||
	    !m->queue || !m->par) {
		matcher_free(m);
		return false;
	}
	return true;
}

/* Start over on R: nothing matched, the support = the non-zero entries. */
static void matcher_reset(struct matcher *m, uint64_t *R)
{
	uint32_t n = m->n;

	m->R = R;
	memset(m->sup, 0, (size_t)n * m->W * sizeof *m->sup);
	memset(m->freec, 0, m->W * sizeof *m->freec);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t *row = m->sup + (size_t)i * m->W;
		m->rm[i] = m->cm[i] = -1;
		m->freec[i / 64] |= UINT64_C(1) << (i % 64);
		for (uint32_t j = 0; j < n; j++)
			if (R[(size_t)i * n + j])
				row[j / 64] |= UINT64_C(1) << (j % 64);
	}
}

static bool matcher_init(struct matcher *m, uint64_t *R, uint32_t n)
{
	if (!matcher_alloc(m, n))
		return false;
	matcher_reset(m, R);
	return true;
}

static void match(struct matcher *m, uint32_t u, uint32_t v)
{
	m->rm[u] = (int32_t)v;
	m->cm[v] = (int32_t)u;
	m->freec[v / 64] &= ~(UINT64_C(1) << (v % 64));
}

static void unmatch_row(struct matcher *m, uint32_t u)
{
	uint32_t v = (uint32_t)m->rm[u];
	m->cm[v] = -1;
	m->rm[u] = -1;
	m->freec[v / 64] |= UINT64_C(1) << (v % 64);
}

#define HK_INF INT32_MAX

/* Hopcroft-Karp layering: BFS from all free rows; true if some free
 * column is reachable.  A matched row is reached only through its own
 * column, so "column seen" stands for "row labelled": the columns of a row
 * are taken a word at a time, in the same order as one by one. */
static bool hk_bfs(struct matcher *m)
{
	uint32_t n = m->n, W = m->W, head = 0, tail = 0;
	bool found = false;

	for (uint32_t u = 0; u < n; u++) {
		if (m->rm[u] < 0) {
			m->dist[u] = 0;
			m->queue[tail++] = (int32_t)u;
		} else {
			m->dist[u] = HK_INF;
		}
	}
	memset(m->seen, 0, W * sizeof *m->seen);
	while (head < tail) {
		uint32_t u = (uint32_t)m->queue[head++];
		const uint64_t *row = m->sup + (size_t)u * W;
		for (uint32_t x = 0; x < W; x++) {
			uint64_t cand = row[x] & ~m->seen[x];
			if (!cand)
				continue;
			m->seen[x] |= cand;
			if (cand & m->freec[x]) {
				found = true;
				cand &= ~m->freec[x];
			}
			for (; cand; cand &= cand - 1) {
				int32_t w = m->cm[x * 64 + (uint32_t)__builtin_ctzll(cand)];
				m->dist[w] = m->dist[u] + 1;
				m->queue[tail++] = w;
			}
		}
	}
	return found;
}

/* Hopcroft-Karp augmentation along the layers (depth <= layers).  The
 * support does not change during a phase, so a row's columns are read a
 * word at a time, resuming at it[u]. */
static bool hk_dfs(struct matcher *m, uint32_t u)
{
	const uint64_t *row = m->sup + (size_t)u * m->W;
	uint32_t from = (uint32_t)m->it[u];

	for (uint32_t x = from / 64; from < m->n && x < m->W; x++) {
		uint64_t cand = row[x];
		if (x == from / 64)
			cand &= ~UINT64_C(0) << (from % 64);
		for (; cand; cand &= cand - 1) {
			uint32_t v = x * 64 + (uint32_t)__builtin_ctzll(cand);
			int32_t w = m->cm[v];
			m->it[u] = (int32_t)(v + 1);
			if (w < 0 || (m->dist[w] == m->dist[u] + 1 && hk_dfs(m, (uint32_t)w))) {
				match(m, u, v);
				return true;
			}
		}
	}
	m->it[u] = (int32_t)m->n;
	m->dist[u] = HK_INF;
	return false;
}

/* Maximum matching on the support; true when it is perfect. */
static bool hopcroft_karp(struct matcher *m)
{
	uint32_t n = m->n;

	while (hk_bfs(m)) {
		for (uint32_t u = 0; u < n; u++)
			m->it[u] = 0;
		for (uint32_t u = 0; u < n; u++)
			if (m->rm[u] < 0)
				(void)hk_dfs(m, u);
	}
	for (uint32_t u = 0; u < n; u++)
		if (m->rm[u] < 0)
			return false;
	return true;
}

/* Re-match free row r: a free column of its own row if there is one,
 * else one BFS for an augmenting path, a word of columns at a time. */
static bool repair_row(struct matcher *m, uint32_t r)
{
	uint32_t W = m->W, head = 0, tail = 0;

	for (uint32_t x = 0; x < W; x++) {
		uint64_t hit = m->sup[(size_t)r * W + x] & m->freec[x];
		if (hit) {
			match(m, r, x * 64 + (uint32_t)__builtin_ctzll(hit));
			return true;
		}
	}
	memset(m->seen, 0, W * sizeof *m->seen);
	m->queue[tail++] = (int32_t)r;
	while (head < tail) {
		uint32_t u = (uint32_t)m->queue[head++];
		const uint64_t *row = m->sup + (size_t)u * W;
		for (uint32_t x = 0; x < W; x++) {
			uint64_t cand = row[x] & ~m->seen[x];
			if (!cand)
				continue;
			m->seen[x] |= cand;
			/* the word's first free column ends the search: the
			 * columns before it would only be queued */
			if (cand & m->freec[x]) {
				uint64_t h = cand & m->freec[x];
				cand &= ~((h & (~h + 1)) - 1);
			}
			for (; cand; cand &= cand - 1) {
				uint32_t v = x * 64 + (uint32_t)__builtin_ctzll(cand);
				m->par[v] = (int32_t)u;
				if (m->cm[v] < 0) {
					/* flip the path back to r */
					int32_t c = (int32_t)v;
					while (c >= 0) {
						int32_t pu = m->par[c];
						int32_t next = m->rm[pu];
						match(m, (uint32_t)pu, (uint32_t)c);
						c = next;
					}
					return true;
				}
				m->queue[tail++] = m->cm[v];
			}
		}
	}
	return false;
}

struct terms {
	uint32_t n, count, cap;
	uint32_t *perm;
	uint64_t *weight;
};

static bool terms_push(struct terms *t, const int32_t *rm, uint64_t w, uint64_t max_terms)
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

/* Optional running trim of the terms as they are found, against the
 * unpadded matrix S, to give up on a candidate as soon as it cannot beat
 * the best one so far: the running modelled time only grows, and what is
 * left of S still needs, from the remaining terms, a stage per non-zero
 * entry of its densest line and the bytes of its fullest line, so
 * t + d * stage + L / B bounds the candidate's final time from below.
 * Abandoning on that bound drops only candidates that would have been
 * abandoned later (the margin covers rounding in the sums). */
struct tracker {
	const uint64_t *S;
	uint64_t *rem;  /* n x n: what S still needs */
	uint64_t *line; /* 2n: off-diagonal bytes rows (0..n-1), columns (n..) still need */
	uint32_t *nz;   /* 2n: their non-zero entries */
	struct fast_bvn_model m;
	double limit, t;
};

#define ABORTED 1
#define BOUND_MARGIN 1e-9 /* relative: far above the rounding of a few thousand sums */

/* rem = S, and its line sums and counts off the diagonal */
static void tracker_start(struct tracker *tr, uint32_t n)
{
	memcpy(tr->rem, tr->S, (size_t)n * n * sizeof *tr->rem);
	memset(tr->line, 0, 2 * (size_t)n * sizeof *tr->line);
	memset(tr->nz, 0, 2 * (size_t)n * sizeof *tr->nz);
	for (uint32_t i = 0; i < n; i++)
		for (uint32_t j = 0; j < n; j++) {
			uint64_t v = tr->S[(size_t)i * n + j];
			if (i == j || !v)
				continue;
			tr->line[i] += v; /* no overflow: fast_bvn_auto checked */
			tr->line[n + j] += v;
			tr->nz[i]++;
			tr->nz[n + j]++;
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
	for (uint32_t k = 0; k < 2 * n; k++) {
		L = tr->line[k] > L ? tr->line[k] : L;
		d = tr->nz[k] > d ? tr->nz[k] : d;
	}
	return tr->t + d * tr->m.stage_s + (double)L / tr->m.Bps >
	       tr->limit * (1 + BOUND_MARGIN);
}

/*
 * Scratch for decompositions, allocated once per call of the public
 * functions and reused by every candidate of the alpha-aware search: a
 * search tries tens of candidates, most of which stop after a few terms,
 * so their setup must not be a dozen allocations.
 */
struct work {
	uint32_t n;
	uint64_t *R;        /* n x n: the (quantised, padded) matrix being decomposed */
	uint64_t *rem;      /* n x n: fast_bvn_trim's remainder */
	uint64_t *row, *col; /* n: line sums */
	int32_t *freed;     /* n: rows whose matched entry went to zero */
	struct matcher m;
	struct terms t;     /* the terms found; handed to the result on success */
};

static void work_free(struct work *w)
{
	free(w->R);
	free(w->rem);
	free(w->row);
	free(w->col);
	free(w->freed);
	matcher_free(&w->m);
	free(w->t.perm);
	free(w->t.weight);
	memset(w, 0, sizeof *w);
}

/* false (nothing to free) when out of memory */
static bool work_init(struct work *w, uint32_t n)
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
	if (!w->R || !w->rem || !w->row || !w->col || !w->freed || !matcher_alloc(&w->m, n)) {
		work_free(w);
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
	matcher_reset(m, R);
	t->count = 0;
	if (!hopcroft_karp(m))
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
		if (!terms_push(t, m->rm, w * scale, max_terms))
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
			unmatch_row(m, (uint32_t)freed[k]);
		for (uint32_t k = 0; k < nfreed; k++)
			if (!repair_row(m, (uint32_t)freed[k]))
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
	if (!work_init(&wk, n))
		return fast_err_set(err, FAST_ENOMEM, "decomposition of %ux%u: out of memory", n, n);
	if (!line_sums(S, n, wk.row, wk.col)) {
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
	work_free(&wk);
	return rc;
}

/* ceil(S / q) entrywise into wk->R, padded, decomposed. */
static int quantized(struct work *wk, const uint64_t *S, uint32_t n, uint64_t q,
		     struct tracker *tr, struct fast_bvn *out, struct fast_err *err)
{
	uint64_t *R = wk->R, M;
	int rc;

	if (q == 1)
		memcpy(R, S, (size_t)n * n * sizeof *R);
	else
		for (size_t k = 0; k < (size_t)n * n; k++)
			R[k] = S[k] / q + (S[k] % q != 0);
	if ((rc = pad_with(R, n, wk->row, wk->col, &M, err)) < 0)
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
	if (!work_init(&wk, n))
		return fast_err_set(err, FAST_ENOMEM, "decomposition of %ux%u: out of memory", n, n);
	rc = quantized(&wk, S, n, q, NULL, out, err);
	work_free(&wk);
	return rc;
}

/* fast_bvn_trim with the caller's n x n scratch. */
static void trim_with(struct fast_bvn *b, const uint64_t *S, uint64_t *rem)
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
	trim_with(b, S, rem);
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

/* --- alpha-aware search ------------------------------------------------ */

/* The quantum search: candidates run with a tracker, so a candidate stops
 * as soon as its running modelled time passes the best complete one. */
struct search {
	const uint64_t *S;
	uint32_t n;
	struct fast_bvn_model m;
	uint64_t *rem, *line; /* the tracker's: n x n, 2n */
	uint32_t *nz;         /* 2n, the tracker's */
	uint32_t *scratch; /* 3n words for exchange() */
	struct work *wk;   /* the candidates' scratch */
	struct fast_bvn best;     /* trimmed */
	struct fast_bvn best_raw; /* the same before trimming */
	double best_t; /* < 0: none yet */
	uint32_t tried;
};

/* Pairwise exchange between terms of equal weight, a local improvement of
 * the stage costs.  For terms k and l, the rows split into the cycles of
 * A -> perm_l^-1(perm_k(A)); swapping the targets of one whole cycle
 * between k and l leaves both permutations valid and, the weights being
 * equal, the sum w_k P_k + w_l P_l unchanged (the decomposition stays
 * exact).  A term's trimmed weight is about the largest entry of S it
 * carries, so each cycle puts its larger side in the earlier term: for the
 * pair that minimises (largest of k) + (largest of l), and over all pairs
 * it groups large entries with large ones.  O(pairs * n); the pairs per
 * term are capped so that a pass stays near 2 * 10^4 pairs. */
#define DONE UINT32_MAX

static void exchange(struct fast_bvn *b, const uint64_t *S, uint32_t *scratch)
{
	uint32_t n = b->n, K = b->nterms, *sg = scratch, *cyc = scratch + n, len;
	uint32_t window = K > 1 ? 20000 / K : 0;
	uint32_t *inv;
	uint64_t *v;

	if (K < 2)
		return;
	/* v[k * n + A] = the entry term k carries for row A (0 when idle);
	 * inv[k * n + B] = the row term k sends to column B, kept up to date
	 * through the swaps (a swapped cycle keeps its set of columns) */
	v = fast_calloc((size_t)K * n, sizeof *v);
	inv = fast_calloc((size_t)K * n, sizeof *inv);
	if (!v || !inv) {
		free(v);
		free(inv);
		return; /* an optimisation only */
	}
	for (uint32_t k = 0; k < K; k++)
		for (uint32_t a = 0; a < n; a++) {
			uint32_t c = b->perm[(size_t)k * n + a];
			v[(size_t)k * n + a] = c == a ? 0 : S[(size_t)a * n + c];
			inv[(size_t)k * n + c] = a;
		}
	if (window < 1)
		window = 1;
	for (uint32_t k = 0; k + 1 < K; k++) {
		uint32_t *pk = b->perm + (size_t)k * n, *ik = inv + (size_t)k * n;
		uint64_t *vk = v + (size_t)k * n;
		uint32_t last = k + window < K - 1 ? k + window : K - 1;
		for (uint32_t l = k + 1; l <= last; l++) {
			uint32_t *pl = b->perm + (size_t)l * n, *il = inv + (size_t)l * n;
			uint64_t *vl = v + (size_t)l * n;
			if (b->weight[l] != b->weight[k])
				continue;
			/* sg = the cycle map, one load a step; a row is marked
			 * DONE as its cycle is walked (a swap keeps every other
			 * cycle's rows, columns and so map) */
			for (uint32_t a = 0; a < n; a++)
				sg[a] = il[pk[a]];
			for (uint32_t a = 0; a < n; a++) {
				uint64_t mk, ml;
				uint32_t c;
				if (sg[a] == a || sg[a] == DONE)
					continue; /* a fixed row, or a cycle seen */
				mk = vk[a];
				ml = vl[a];
				len = 0;
				cyc[len++] = a;
				c = sg[a];
				sg[a] = DONE;
				while (c != a) {
					uint32_t next = sg[c];
					sg[c] = DONE;
					cyc[len++] = c;
					mk = vk[c] > mk ? vk[c] : mk;
					ml = vl[c] > ml ? vl[c] : ml;
					c = next;
				}
				if (ml <= mk)
					continue;
				/* swap the cycle's targets: its rows' targets are
				 * distinct in k and in l, so the rows may go in any
				 * order */
				for (uint32_t x = 0; x < len; x++) {
					uint32_t r = cyc[x], ck = pk[r], cl = pl[r];
					uint64_t tv = vk[r];
					pk[r] = cl;
					pl[r] = ck;
					vk[r] = vl[r];
					vl[r] = tv;
					ik[cl] = r;
					il[ck] = r;
				}
			}
		}
	}
	free(v);
	free(inv);
}

static int copy_bvn(const struct fast_bvn *b, struct fast_bvn *out)
{
	*out = *b;
	out->perm = fast_calloc((size_t)b->nterms * b->n + 1, sizeof *out->perm);
	out->weight = fast_calloc((size_t)b->nterms + 1, sizeof *out->weight);
	if (!out->perm || !out->weight) {
		free(out->perm);
		free(out->weight);
		out->perm = NULL;
		out->weight = NULL;
		return FAST_ENOMEM;
	}
	if (b->nterms) {
		memcpy(out->perm, b->perm, (size_t)b->nterms * b->n * sizeof *out->perm);
		memcpy(out->weight, b->weight, (size_t)b->nterms * sizeof *out->weight);
	}
	return 0;
}

/* Try quantum q; *completed tells whether it ran to the end (and so its
 * time is known, in *t). */
static int try_quantum(struct search *sr, uint64_t q, bool polish, bool *completed, double *t,
		       struct fast_err *err)
{
	struct tracker tr;
	struct fast_bvn b, raw;
	int rc;

	tr.S = sr->S;
	tr.rem = sr->rem;
	tr.line = sr->line;
	tr.nz = sr->nz;
	tr.m = sr->m;
	tr.limit = sr->best_t < 0 ? 1e300 : sr->best_t;
	tr.t = 0;
	tracker_start(&tr, sr->n);
	sr->tried++;
	*completed = false;
	*t = tr.limit;
	rc = quantized(sr->wk, sr->S, sr->n, q, &tr, &b, err);
	if (rc < 0)
		return rc;
	if (rc == ABORTED)
		return 0;
	*completed = true;
	if (polish)
		exchange(&b, sr->S, sr->scratch);
	if ((rc = copy_bvn(&b, &raw)) < 0) {
		fast_bvn_free(&b);
		return fast_err_set(err, rc, "alpha-aware decomposition: out of memory");
	}
	trim_with(&b, sr->S, sr->wk->rem);
	*t = fast_bvn_time(&b, &sr->m);
	if (sr->best_t < 0 || *t < sr->best_t || (*t == sr->best_t && q < sr->best.quantum)) {
		fast_bvn_free(&sr->best);
		fast_bvn_free(&sr->best_raw);
		sr->best = b;
		sr->best_raw = raw;
		sr->best_t = *t;
	} else {
		fast_bvn_free(&b);
		fast_bvn_free(&raw);
	}
	return 0;
}

/* The quantum search on sr->S, whose largest entry is big: from q =
 * min(start, big) (q = big: every non-zero entry becomes one unit, a
 * permutation cover of the support, trimmed) down by octaves; stop after
 * `patience` octaves without improvement (the modelled time is about
 * unimodal in log q), then try half an octave on either side of the best.
 * Only candidates that beat sr->best_t are kept (best_t < 0: none yet). */
static int quanta(struct search *sr, uint64_t big, uint64_t start, int patience,
		  struct fast_err *err)
{
	uint64_t qbest;
	bool done;
	double t;
	int rc, worse = 0;

	for (uint64_t q = start < big ? start : big; q >= 2 && worse < patience; q /= 2) {
		double before = sr->best_t;
		/* the first one (a permutation cover of the support, all
		 * weights equal) gains most from exchange: polish it now */
		if ((rc = try_quantum(sr, q, q == big, &done, &t, err)) < 0)
			return rc;
		worse = done && (before < 0 || t < before) ? 0 : worse + 1;
	}
	qbest = sr->best.quantum;
	if (qbest > 1) {
		static const double f[] = { 0.7071, 1.4142 };
		for (size_t k = 0; k < sizeof f / sizeof f[0]; k++) {
			double qd = (double)qbest * f[k];
			if (qd < 2 || qd > (double)big)
				continue;
			if ((rc = try_quantum(sr, (uint64_t)qd, false, &done, &t, err)) < 0)
				return rc;
		}
	}
	return 0;
}

/*
 * Bottleneck-prefix hybrids.  A quantised decomposition rounds every entry
 * up, which costs bytes on every line; an exact one costs a stage per
 * term, and most of its terms carry little.  The hybrid takes the large
 * terms exactly and covers only the small remainder by the quantum
 * search.  The exact part uses threshold ("bottleneck") matchings: a
 * perfect matching among the entries >= r of the padded matrix, r lowered
 * by 1/32 whenever none exists, so each term takes about the largest
 * weight any permutation can take, and a few terms carry most of M.  Each
 * time the largest line of what S still needs falls under M / 2^(j/2),
 * the remainder gets the quantum search (limited to what could still win),
 * and the prefix plus its cover is a candidate; the complete bottleneck
 * decomposition is one too.  All candidates are judged by the same trimmed
 * model as the others, so the hybrid never loses to them in the model.
 */

#define HYBRID_MAX_N 64 /* above: quantum search only (synthesis-time budget) */
#define PATIENCE 1 /* octaves without improvement before a checkpoint's search stops */

/*
 * The entries of R outside the threshold support, a max-heap by value.  The
 * support is always {R[i][j] >= r, > 0}: entries only decrease, and only
 * while matched (inside the support), so an entry's value is fixed while it
 * waits here.  Lowering r then adds exactly the entries of [r', r) by
 * popping, instead of a scan of all n^2 entries per step, and a step that
 * adds nothing (the heap's top is under r') needs no matching attempt: the
 * matching and the support are the same as after the failed one.
 */
struct waiting {
	uint64_t v; /* the entry's value (the heap key) */
	uint32_t x; /* i * n + j */
};

struct pending {
	struct waiting *h;
	uint32_t len;
};

static bool pending_above(const struct pending *p, uint64_t lo)
{
	return p->len > 0 && p->h[0].v >= lo;
}

static void pending_sift_down(struct pending *p, uint32_t k)
{
	struct waiting e = p->h[k], *h = p->h;

	for (;;) {
		uint32_t c = 2 * k + 1;
		if (c >= p->len)
			break;
		if (c + 1 < p->len && h[c + 1].v > h[c].v)
			c++;
		if (h[c].v <= e.v)
			break;
		h[k] = h[c];
		k = c;
	}
	h[k] = e;
}

static void pending_push(struct pending *p, uint64_t v, uint32_t x)
{
	uint32_t k = p->len++;

	while (k > 0 && p->h[(k - 1) / 2].v < v) {
		p->h[k] = p->h[(k - 1) / 2];
		k = (k - 1) / 2;
	}
	p->h[k].v = v;
	p->h[k].x = x;
}

/* Put every positive entry of R under r on the heap, the rest (>= r) in the
 * support. */
static void pending_init(struct pending *p, struct matcher *m, uint64_t r)
{
	uint32_t n = m->n;

	p->len = 0;
	for (uint32_t i = 0; i < n; i++)
		for (uint32_t j = 0; j < n; j++) {
			uint64_t v = m->R[(size_t)i * n + j];
			if (v >= r)
				m->sup[(size_t)i * m->W + j / 64] |= UINT64_C(1) << (j % 64);
			else if (v) {
				p->h[p->len].v = v;
				p->h[p->len++].x = i * n + j;
			}
		}
	for (uint32_t k = p->len / 2; k-- > 0;)
		pending_sift_down(p, k);
}

/* Move every waiting entry >= lo into the support. */
static void pending_pop_to(struct pending *p, struct matcher *m, uint64_t lo)
{
	while (pending_above(p, lo)) {
		uint32_t x = p->h[0].x, i = x / m->n, j = x % m->n;
		m->sup[(size_t)i * m->W + j / 64] |= UINT64_C(1) << (j % 64);
		p->h[0] = p->h[--p->len];
		if (p->len)
			pending_sift_down(p, 0);
	}
}

/* Candidate: the first nprefix terms of t (raw weights), then cover
 * (trimmed against what the prefix leaves of S); kept in sr->best if its
 * trimmed modelled time beats it.  quantum = the cover's (1: none). */
static int hybrid_candidate(struct search *sr, const struct terms *t, const struct fast_bvn *cover,
			    uint64_t quantum, uint32_t *prefix_out, struct fast_err *err)
{
	uint32_t n = sr->n, K = t->count + (cover ? cover->nterms : 0);
	struct fast_bvn b;
	double tm;

	memset(&b, 0, sizeof b);
	b.n = n;
	b.nterms = K;
	b.quantum = quantum;
	b.perm = fast_calloc((size_t)K * n + 1, sizeof *b.perm);
	b.weight = fast_calloc((size_t)K + 1, sizeof *b.weight);
	if (!b.perm || !b.weight) {
		fast_bvn_free(&b);
		return fast_err_set(err, FAST_ENOMEM, "alpha-aware decomposition: out of memory");
	}
	memcpy(b.perm, t->perm, (size_t)t->count * n * sizeof *b.perm);
	memcpy(b.weight, t->weight, (size_t)t->count * sizeof *b.weight);
	if (cover && cover->nterms) {
		memcpy(b.perm + (size_t)t->count * n, cover->perm,
		       (size_t)cover->nterms * n * sizeof *b.perm);
		memcpy(b.weight + t->count, cover->weight, cover->nterms * sizeof *b.weight);
	}
	trim_with(&b, sr->S, sr->wk->rem);
	tm = fast_bvn_time(&b, &sr->m);
	if (sr->best_t < 0 || tm < sr->best_t) {
		fast_bvn_free(&sr->best);
		fast_bvn_free(&sr->best_raw); /* no exchange polish for hybrids */
		sr->best = b;
		sr->best_t = tm;
		*prefix_out = t->count;
	} else {
		fast_bvn_free(&b);
	}
	return 0;
}

static int hybrid(struct search *sr, uint32_t *prefix_out, struct fast_err *err)
{
	uint32_t n = sr->n;
	size_t nn = (size_t)n * n;
	uint64_t *R = NULL, *rem = NULL, *snap = NULL, *row = NULL, *col = NULL;
	uint32_t *rc_nz = NULL, *cc_nz = NULL, d;
	uint64_t M, left, r = 0, L = 0, max_terms = fast_bvn_max_terms(n), qlast = UINT64_MAX;
	double tp = 0, level;
	struct matcher m;
	struct terms t = { .n = n };
	struct pending pend = { 0 };
	int rc = 0;

	memset(&m, 0, sizeof m);
	pend.h = fast_calloc(nn + 1, sizeof *pend.h);
	R = fast_calloc(nn + 1, sizeof *R);
	rem = fast_calloc(nn + 1, sizeof *rem);
	snap = fast_calloc(nn + 1, sizeof *snap);
	row = fast_calloc(n + 1, sizeof *row);
	col = fast_calloc(n + 1, sizeof *col);
	rc_nz = fast_calloc(n + 1, sizeof *rc_nz);
	cc_nz = fast_calloc(n + 1, sizeof *cc_nz);
	if (!R || !rem || !snap || !row || !col || !rc_nz || !cc_nz || !pend.h) {
		rc = fast_err_set(err, FAST_ENOMEM, "alpha-aware decomposition: out of memory");
		goto out;
	}
	memcpy(R, sr->S, nn * sizeof *R);
	memcpy(rem, sr->S, nn * sizeof *rem);
	if ((rc = fast_bvn_pad(R, n, &M, err)) < 0)
		goto out;
	(void)line_sums(sr->S, n, row, col); /* no overflow: pad checked */
	for (uint32_t i = 0; i < n; i++)
		for (uint32_t j = 0; j < n; j++)
			if (i != j && sr->S[(size_t)i * n + j]) {
				rc_nz[i]++;
				cc_nz[j]++;
			}
	for (size_t k = 0; k < nn; k++)
		r = R[k] > r ? R[k] : r;
	if (M == 0)
		goto out;
	if (!matcher_init(&m, R, n)) {
		rc = fast_err_set(err, FAST_ENOMEM, "alpha-aware decomposition: out of memory");
		goto out;
	}
	memset(m.sup, 0, (size_t)n * m.W * sizeof *m.sup);
	pending_init(&pend, &m, r);
	level = (double)M * 0.70710678;
	for (left = M; left > 0;) {
		uint64_t w = UINT64_MAX, need = 0;

		while (!hopcroft_karp(&m)) {
			/* lower r by 1/32 steps until some entry joins */
			do {
				if (r <= 1) {
					rc = fast_err_set(err, FAST_ERUNTIME,
							  "decomposition: no perfect matching on the support");
					goto out;
				}
				r = r - r / 32 - 1;
			} while (!pending_above(&pend, r));
			pending_pop_to(&pend, &m, r);
		}
		for (uint32_t i = 0; i < n; i++) {
			uint64_t v = R[(size_t)i * n + (uint32_t)m.rm[i]];
			w = v < w ? v : w;
		}
		if (!terms_push(&t, m.rm, w, max_terms)) {
			rc = fast_err_set(err, t.count >= max_terms ? FAST_ERUNTIME : FAST_ENOMEM,
					  "decomposition of %ux%u: %s", n, n,
					  t.count >= max_terms ? "term bound exceeded" : "out of memory");
			goto out;
		}
		for (uint32_t i = 0; i < n; i++) {
			uint32_t j = (uint32_t)m.rm[i];
			uint64_t *e = &R[(size_t)i * n + j];
			if (j != i) {
				uint64_t *q = &rem[(size_t)i * n + j], s = *q < w ? *q : w;
				if (s && s == *q) {
					rc_nz[i]--;
					cc_nz[j]--;
				}
				*q -= s;
				row[i] -= s;
				col[j] -= s;
				need = s > need ? s : need;
			}
			*e -= w;
			if (*e < r) {
				m.sup[(size_t)i * m.W + j / 64] &= ~(UINT64_C(1) << (j % 64));
				unmatch_row(&m, i);
				if (*e)
					pending_push(&pend, *e, i * n + j);
			}
		}
		left -= w;
		if (need)
			tp += sr->m.stage_s + (double)need / sr->m.Bps;
		L = 0;
		d = 0;
		for (uint32_t i = 0; i < n; i++) {
			L = row[i] > L ? row[i] : L;
			L = col[i] > L ? col[i] : L;
			d = rc_nz[i] > d ? rc_nz[i] : d;
			d = cc_nz[i] > d ? cc_nz[i] : d;
		}
		/* what is left needs L bytes on its fullest line and a stage
		 * per non-zero entry of its densest line: tp + L / B + d * c
		 * bounds every completion of this prefix, and never decreases
		 * along it (a term costs c + need / B and lowers L by at most
		 * need, d by at most one) */
		if (sr->best_t >= 0 &&
		    tp + (double)L / sr->m.Bps + d * sr->m.stage_s >= sr->best_t)
			goto out;
		if (L == 0 || left == 0) {
			rc = hybrid_candidate(sr, &t, NULL, 1, prefix_out, err);
			goto out;
		}
		if ((double)L <= level) {
			struct search sub = *sr;
			uint64_t big = 0;

			while (level >= (double)L)
				level *= 0.70710678;
			memcpy(snap, rem, nn * sizeof *snap);
			for (size_t k = 0; k < nn; k++)
				big = snap[k] > big ? snap[k] : big;
			sub.S = snap;
			memset(&sub.best, 0, sizeof sub.best);
			memset(&sub.best_raw, 0, sizeof sub.best_raw);
			sub.best_t = sr->best_t < 0 ? -1 : sr->best_t - tp;
			sub.tried = 0;
			/* the remainder shrinks as the prefix grows: start an
			 * octave above the last checkpoint's quantum */
			rc = quanta(&sub, big, qlast > UINT64_MAX / 2 ? UINT64_MAX : 2 * qlast,
				    PATIENCE, err);
			sr->tried += sub.tried;
			if (rc == 0 && sub.best.nterms) {
				qlast = sub.best.quantum;
				rc = hybrid_candidate(sr, &t, &sub.best, sub.best.quantum, prefix_out,
						      err);
			}
			fast_bvn_free(&sub.best);
			fast_bvn_free(&sub.best_raw);
			if (rc < 0)
				goto out;
		}
	}
out:
	if (m.n)
		matcher_free(&m);
	free(t.perm);
	free(t.weight);
	free(R);
	free(rem);
	free(snap);
	free(row);
	free(col);
	free(rc_nz);
	free(cc_nz);
	free(pend.h);
	return rc;
}

int fast_bvn_auto(const uint64_t *S, uint32_t n, const struct fast_bvn_model *m,
		  struct fast_bvn *out, struct fast_bvn_auto_info *info,
		  struct fast_err *err)
{
	struct search sr;
	struct work wk;
	uint64_t big = 0;
	bool exact_done = false;
	double t, exact_t = 0;
	uint32_t prefix = 0;
	int rc = 0;

	if (!(m->Bps > 0) || !(m->stage_s >= 0))
		return fast_err_set(err, FAST_EUSAGE, "alpha-aware decomposition: bad cost model");
	memset(&sr, 0, sizeof sr);
	sr.S = S;
	sr.n = n;
	sr.m = *m;
	sr.best_t = -1;
	sr.rem = fast_calloc((size_t)n * n + 1, sizeof *sr.rem);
	sr.scratch = fast_calloc(3 * (size_t)n + 1, sizeof *sr.scratch);
	sr.line = fast_calloc(2 * (size_t)n + 1, sizeof *sr.line);
	sr.nz = fast_calloc(2 * (size_t)n + 1, sizeof *sr.nz);
	if (!sr.rem || !sr.scratch || !sr.line || !sr.nz || !work_init(&wk, n)) {
		free(sr.rem);
		free(sr.scratch);
		free(sr.line);
		free(sr.nz);
		return fast_err_set(err, FAST_ENOMEM, "alpha-aware decomposition: out of memory");
	}
	sr.wk = &wk;
	/* the exact candidate would fail on this later; the tracker's line
	 * sums need it */
	if (!line_sums(S, n, wk.row, wk.col)) {
		rc = fast_err_set(err, FAST_EINPUT, "server matrix: a line sum overflows 64 bits");
		goto fail;
	}
	for (size_t k = 0; k < (size_t)n * n; k++)
		big = S[k] > big ? S[k] : big;

	if ((rc = quanta(&sr, big, big, 3, err)) < 0)
		goto fail;
	/* exact last: it runs only as long as it could still win */
	if ((rc = try_quantum(&sr, 1, false, &exact_done, &exact_t, err)) < 0)
		goto fail;
	/* polish the winner by a pass of pairwise exchange, kept only if it
	 * models faster (the support cover had its pass already: a pass costs
	 * about a third of a 1024-GPU compile) */
	if (sr.best_raw.nterms > 1 && sr.best.quantum != big) {
		exchange(&sr.best_raw, S, sr.scratch);
		trim_with(&sr.best_raw, S, wk.rem);
		t = fast_bvn_time(&sr.best_raw, m);
		if (t < sr.best_t) {
			fast_bvn_free(&sr.best);
			sr.best = sr.best_raw;
			memset(&sr.best_raw, 0, sizeof sr.best_raw);
			sr.best_t = t;
		}
	}
	/* bottleneck prefixes with a covered remainder (small n only) */
	if (n >= 3 && n <= HYBRID_MAX_N && (rc = hybrid(&sr, &prefix, err)) < 0)
		goto fail;
	if (info) {
		info->prefix = prefix;
		info->candidates = sr.tried;
		info->quantum = sr.best.quantum;
		info->time_s = sr.best_t;
		info->exact_computed = exact_done;
		info->exact_time_s = exact_t;
	}
	free(sr.rem);
	free(sr.scratch);
	free(sr.line);
	free(sr.nz);
	work_free(&wk);
	fast_bvn_free(&sr.best_raw);
	*out = sr.best;
	return 0;
fail:
	free(sr.rem);
	free(sr.scratch);
	free(sr.line);
	free(sr.nz);
	work_free(&wk);
	fast_bvn_free(&sr.best_raw);
	fast_bvn_free(&sr.best);
	return rc;
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
