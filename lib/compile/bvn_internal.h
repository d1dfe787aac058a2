/*
 * bvn_internal.h - what bvn.c (the exact and quantised decompositions),
 * bvn_match.c (their matcher) and bvn_search.c (the alpha-aware search)
 * share: the matcher, the term list, the running-trim tracker and the
 * per-call scratch.  Not part of the library's interface (bvn.h is).
 */
#ifndef FAST_BVN_INTERNAL_H
#define FAST_BVN_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/compile/bvn.h"

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

struct terms {
	uint32_t n, count, cap;
	uint32_t *perm;
	uint64_t *weight;
};

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
	/* upper bounds of the largest line and count, exact as of the last
	 * scan: both only fall, so while t plus the bound they give stays
	 * under the limit no term needs the 2n scan */
	uint64_t L_ub;
	uint32_t d_ub;
};

#define ABORTED 1

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

/* Row and column sums with overflow checks; false on overflow. */
bool fast_bvn_line_sums(const uint64_t *S, uint32_t n, uint64_t *row, uint64_t *col);

/* --- the matcher (bvn_match.c) --- */

void fast_bvn_matcher_free(struct matcher *m);
/* Arrays for an n x n matcher; false (all freed) when out of memory. */
bool fast_bvn_matcher_alloc(struct matcher *m, uint32_t n);
/* Start over on R: nothing matched, the support = the non-zero entries. */
void fast_bvn_matcher_reset(struct matcher *m, uint64_t *R);
/* fast_bvn_matcher_alloc, then fast_bvn_matcher_reset. */
bool fast_bvn_matcher_init(struct matcher *m, uint64_t *R, uint32_t n);
/* Free row u and its column (inline: the rounds free rows one by one). */
static inline void fast_bvn_unmatch_row(struct matcher *m, uint32_t u)
{
	uint32_t v = (uint32_t)m->rm[u];
	m->cm[v] = -1;
	m->rm[u] = -1;
	m->freec[v / 64] |= UINT64_C(1) << (v % 64);
}
#define HK_INF INT32_MAX /* dist of a row no search reached */

/* Maximum matching on the support; true when it is perfect. */
bool fast_bvn_hopcroft_karp(struct matcher *m);
/* After fast_bvn_hopcroft_karp returned false: whether row u lies on an
 * alternating path from a free row.  Its last search found no augmenting
 * path, so until the support gains an entry in such a row another call
 * would find none either (and change nothing). */
static inline bool fast_bvn_row_reached(const struct matcher *m, uint32_t u)
{
	return m->dist[u] != HK_INF;
}

/* Re-match free row r (its matched entry went to zero): a free column of
 * its own row if there is one, else one search for an augmenting path;
 * false when there is none. */
bool fast_bvn_repair_row(struct matcher *m, uint32_t r);

/* --- terms, tracker and scratch (bvn.c) --- */

bool fast_bvn_terms_push(struct terms *t, const int32_t *rm, uint64_t w, uint64_t max_terms);

/* The tracker's starting lines of S: line (2n) = off-diagonal row sums
 * (0..n-1) and column sums (n..), nz (2n) = their non-zero entries.  The
 * sums must not overflow (the caller checked the line sums of S). */
void fast_bvn_tracker_lines(const uint64_t *S, uint32_t n, uint64_t *line, uint32_t *nz);
/* rem = tr->S, line and nz = the starting lines line0 and nz0 of it
 * (fast_bvn_tracker_lines, computed once per matrix), t = 0 */
void fast_bvn_tracker_start(struct tracker *tr, uint32_t n, const uint64_t *line0,
			    const uint32_t *nz0);

void fast_bvn_work_free(struct work *w);
/* false (nothing to free) when out of memory */
bool fast_bvn_work_init(struct work *w, uint32_t n);

/* ceil(S / q) entrywise into wk->R, padded, decomposed (with a tracker:
 * ABORTED once the running modelled time passes tr->limit).  sums_fit:
 * the caller checked that no line sum of S overflows 64 bits (those of
 * ceil(S / q) <= S then cannot either, and are summed unchecked). */
int fast_bvn_quantized_with(struct work *wk, const uint64_t *S, uint32_t n, uint64_t q,
			    bool sums_fit, struct tracker *tr, struct fast_bvn *out,
			    struct fast_err *err);

/* fast_bvn_trim with the caller's n x n scratch. */
void fast_bvn_trim_with(struct fast_bvn *b, const uint64_t *S, uint64_t *rem);

#endif
