/*
 * bvn_match.c - the perfect matchings behind the Birkhoff decomposition
 * (bvn.c): a bitset mirror of the remaining matrix's support, Hopcroft-Karp
 * for the first matching of a round sequence, and the repair of one freed
 * row by a single augmenting-path search, a word of columns at a time.
 * The rounds of a decomposition free a few rows each, so repair, not a
 * fresh matching, is what they pay for; n is the number of servers (up to
 * a few thousand), the matrix dense.
 */
#include "lib/compile/bvn_internal.h"

#include <stdlib.h>
#include <string.h>

void fast_bvn_matcher_free(struct matcher *m)
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
bool fast_bvn_matcher_alloc(struct matcher *m, uint32_t n)
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
		fast_bvn_matcher_free(m);
		return false;
	}
	return true;
}

/* Start over on R: nothing matched, the support = the non-zero entries. */
void fast_bvn_matcher_reset(struct matcher *m, uint64_t *R)
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

bool fast_bvn_matcher_init(struct matcher *m, uint64_t *R, uint32_t n)
{
	if (!fast_bvn_matcher_alloc(m, n))
		return false;
	fast_bvn_matcher_reset(m, R);
	return true;
}

static void match(struct matcher *m, uint32_t u, uint32_t v)
{
	m->rm[u] = (int32_t)v;
	m->cm[v] = (int32_t)u;
	m->freec[v / 64] &= ~(UINT64_C(1) << (v % 64));
}

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

/* Hopcroft-Karp's first phase from an empty matching: every row is free
 * at layer 0 and every column free, so the phase matches each row in turn
 * to its first column still free (a search of depth one); the same
 * without the layering pass. */
static void hk_first_phase(struct matcher *m)
{
	uint32_t n = m->n, W = m->W;

	for (uint32_t u = 0; u < n; u++) {
		const uint64_t *row = m->sup + (size_t)u * W;
		for (uint32_t x = 0; x < W; x++) {
			uint64_t hit = row[x] & m->freec[x];
			if (hit) {
				match(m, u, x * 64 + (uint32_t)__builtin_ctzll(hit));
				break;
			}
		}
	}
}

/* Maximum matching on the support; true when it is perfect. */
bool fast_bvn_hopcroft_karp(struct matcher *m)
{
	uint32_t n = m->n, first_matched = 0;

	while (first_matched < n && m->rm[first_matched] < 0)
		first_matched++;
	if (first_matched == n)
		hk_first_phase(m);
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
bool fast_bvn_repair_row(struct matcher *m, uint32_t r)
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

