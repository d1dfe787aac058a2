/*
 * bvn.h - exact integer Birkhoff-von Neumann decomposition of the FAST
 * server matrix (docs/DESIGN.md, "FAST, as this project implements it", steps
 * 4 and 5), and the alpha-aware variant that trades a little padding for
 * far fewer stages.
 *
 * Workload: one n x n matrix of byte counts per traffic matrix, n = servers
 * (4 .. a few hundred), dense or sparse.  Padding raises entries (the
 * diagonal too) until every line sums to M, the largest row or column sum;
 * the decomposition then writes S' = sum_k w_k P_k with integer weights,
 * sum_k w_k = M and at most n^2 - 2n + 2 terms.  It finds one perfect
 * matching on the support (Hopcroft-Karp), and after each subtraction only
 * re-augments the rows whose matched entry went to zero: the expensive
 * matching is computed once, not once per term.
 *
 * Ownership: a struct fast_bvn owns its arrays; fast_bvn_free() releases
 * them (NULL-safe, idempotent).  Outputs are written only on success.
 */
#ifndef FAST_BVN_H
#define FAST_BVN_H

#include "fast/common.h"

struct fast_bvn {
	uint32_t n;       /* matrix size */
	uint32_t nterms;  /* K */
	uint32_t *perm;   /* nterms * n: term k sends row A to column perm[k*n + A] */
	uint64_t *weight; /* nterms weights, > 0 */
	uint64_t total;   /* sum of weights: M of the padded matrix (until trimmed) */
	uint64_t quantum; /* 1 for an exact decomposition, q for a quantised one */
};

void fast_bvn_free(struct fast_bvn *b);

/* FAST's server matrix (docs/DESIGN.md, steps 2-3) of an ng x ng traffic matrix
 * D on `servers` servers of `gpus` GPUs: S[A][B] = ceil(sum_i r_i / G),
 * r_i = bytes GPU A_i sends to server B, S[A][A] = 0.  S (servers^2,
 * caller allocated) is written only on success; FAST_EINPUT if a sum
 * overflows 64 bits. */
int fast_bvn_server_matrix(const uint64_t *D, uint32_t servers, uint32_t gpus, uint64_t *S,
			   struct fast_err *err);
/* The same in the one pass over D that also gives the balancing inputs:
 * load[(A * servers + B) * gpus + i] = r_i for every A != B (the A == B
 * entries untouched; load written even on failure) and *nnz = the number
 * of non-zero entries of D between different servers. */
int fast_bvn_server_loads(const uint64_t *D, uint32_t servers, uint32_t gpus, uint64_t *S,
			  uint64_t *load, uint64_t *nnz, struct fast_err *err);

/* Largest bound on the number of terms: n^2 - 2n + 2 (1 for n <= 1). */
uint64_t fast_bvn_max_terms(uint32_t n);

/* Pad S (n x n, row-major) in place: raise entries, the diagonal included,
 * until every row and column sums to M = the largest row or column sum of
 * the input; *M_out receives M.  Deficits are filled northwest-corner
 * style, so at most 2n - 1 entries change.  FAST_EINPUT if a line sum
 * overflows 64 bits (S is then unchanged). */
int fast_bvn_pad(uint64_t *S, uint32_t n, uint64_t *M_out, struct fast_err *err);

/* Decompose S (n x n) whose rows and columns all sum to the same M:
 * S = sum_k weight[k] * P_k exactly, sum weight = M, nterms <= n^2-2n+2.
 * FAST_EINPUT if the line sums differ or overflow, FAST_ENOMEM.  M = 0
 * gives zero terms. */
int fast_bvn_decompose(const uint64_t *S, uint32_t n, struct fast_bvn *out,
		       struct fast_err *err);

/* Quantised decomposition: S_q = ceil(S / q) (entrywise, in units of q),
 * padded, decomposed, weights multiplied back by q.  The result covers S:
 * for every (A, B), sum_{k: perm_k(A) = B} weight[k] >= S[A][B].  q = 1 is
 * pad + exact decomposition of a copy of S.  S is not modified. */
int fast_bvn_quantized(const uint64_t *S, uint32_t n, uint64_t q, struct fast_bvn *out,
		       struct fast_err *err);

/* Reduce each weight to what some row actually still needs when the terms
 * are applied in order to the (unpadded) matrix S, and drop terms that
 * then carry nothing (all-idle terms included: a row idles where
 * perm[A] == A).  Every row still moves exactly the same bytes in the same
 * terms, so coverage of S is kept.  Never fails. */
void fast_bvn_trim(struct fast_bvn *b, const uint64_t *S);

/* Cost model of a stage sequence: K non-idle terms cost K * stage_s plus
 * sum of weights / Bps (one NIC per server row moves at Bps). */
struct fast_bvn_model {
	double stage_s; /* per-stage cost: scale-out latency + step overhead, s */
	double Bps;     /* effective NIC bandwidth, bytes/s */
};
double fast_bvn_time(const struct fast_bvn *b, const struct fast_bvn_model *m);

/* What the alpha-aware search did. */
struct fast_bvn_search_info {
	uint32_t candidates;   /* decompositions tried */
	uint64_t quantum;      /* chosen q (1 = exact won) */
	double time_s;         /* modelled time of the choice (after trimming) */
	double exact_time_s;   /* modelled time of exact, or a lower bound of it */
	bool exact_computed;   /* false: exact stopped once it could not win, and
				  exact_time_s is only a lower bound */
	uint32_t prefix;       /* > 0: the choice is a hybrid, this many exact
				  bottleneck terms and then the quantised cover
				  (quantum q) of what they leave; q = 1: all exact */
};

/* Alpha-aware decomposition of the unpadded matrix S: tries quanta from the
 * largest entry down by octaves (then half an octave either side of the best) and
 * finally q = 1 (exact), trims each, and keeps the one with the least
 * modelled time in decomposition order (ties: smaller q).  For 3 <= n <= 64
 * it then tries hybrids: exact bottleneck (max-min) terms first, and the
 * remainder they leave covered by the same quantum search, the prefix cut
 * where the remaining bottleneck falls under M / 2^(j/2); a hybrid is kept
 * only if it models faster (info->prefix tells).  A candidate is
 * abandoned as soon as its running modelled time (which only grows) plus a
 * lower bound of what its remaining terms must cost passes the best
 * complete one, so it can never be worse than exact in the model, and a
 * losing exact costs only its first terms.  Candidates share one scratch
 * (no allocation per candidate).  FAST_EINPUT if a line sum of S overflows
 * 64 bits, FAST_ENOMEM.  info may be NULL. */
int fast_bvn_search(const uint64_t *S, uint32_t n, const struct fast_bvn_model *m,
		  struct fast_bvn *out, struct fast_bvn_search_info *info,
		  struct fast_err *err);

enum fast_bvn_order {
	FAST_BVN_AS_FOUND = 0,
	FAST_BVN_LARGEST_FIRST = 1,
	FAST_BVN_SMALLEST_FIRST = 2,
};
/* Reorder the terms by weight (stable: ties keep decomposition order). */
int fast_bvn_sort(struct fast_bvn *b, enum fast_bvn_order order, struct fast_err *err);

#endif
