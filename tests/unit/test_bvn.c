/*
 * test_bvn.c - padding and Birkhoff-von Neumann decomposition: exact
 * reassembly, sum of weights, the n^2 - 2n + 2 term bound, the padding
 * counter-example, a naive reference (fresh brute-force matching every
 * round), quantised coverage, trimming, the alpha-aware search never
 * losing to exact in its own model, and its answers pinned across its
 * speed-ups.
 */
#include <CUnit/Basic.h>

#include "unit.h"
#include <stdlib.h>
#include <string.h>

#include "lib/compile/bvn.h"

/* test_bvn__auto_decompositions_pinned: the fingerprint of the search's
 * answers before its speed-ups (issue #16, point 4) */
#define AUTO_FINGERPRINT UINT64_C(0xb7833825a7f76ad8)
/* test_bvn__auto_server_matrices_pinned: the same on server matrices of
 * generated traffic, taken before the second round of speed-ups */
#define AUTO_SERVER_FINGERPRINT UINT64_C(0x51074702b32578d8)

static uint64_t *random_matrix(struct fast_rng *rng, uint32_t n, int kind)
{
	uint64_t *S = calloc((size_t)n * n + 1, sizeof *S);
	for (uint32_t i = 0; i < n; i++)
		for (uint32_t j = 0; j < n; j++) {
			uint64_t v = 0;
			switch (kind) {
			case 0: /* dense small */
				v = fast_rng_below(rng, 10);
				break;
			case 1: /* sparse */
				v = fast_rng_below(rng, 4) == 0 ? 1 + fast_rng_below(rng, 1000) : 0;
				break;
			case 2: /* large values */
				v = fast_rng_below(rng, UINT64_C(1) << 40);
				break;
			default: /* hotspot row/col */
				v = (i == 0 || j == n - 1) ? 1000 + fast_rng_below(rng, 100)
							   : fast_rng_below(rng, 3);
				break;
			}
			S[(size_t)i * n + j] = i == j ? 0 : v;
		}
	return S;
}

static bool is_perm(const uint32_t *p, uint32_t n)
{
	bool seen[64] = { 0 };
	for (uint32_t i = 0; i < n; i++) {
		if (p[i] >= n || seen[p[i]])
			return false;
		seen[p[i]] = true;
	}
	return true;
}

/* Check b reassembles S exactly with the documented properties. */
static void check_exact(const uint64_t *S, uint32_t n, uint64_t M, const struct fast_bvn *b)
{
	uint64_t *R = calloc((size_t)n * n + 1, sizeof *R), sum = 0;
	CU_ASSERT_FATAL(R != NULL);
	CU_ASSERT(b->nterms <= fast_bvn_max_terms(n));
	for (uint32_t k = 0; k < b->nterms; k++) {
		CU_ASSERT(is_perm(b->perm + (size_t)k * n, n));
		CU_ASSERT(b->weight[k] > 0);
		sum += b->weight[k];
		for (uint32_t i = 0; i < n; i++)
			R[(size_t)i * n + b->perm[(size_t)k * n + i]] += b->weight[k];
	}
	CU_ASSERT_EQUAL(sum, M);
	CU_ASSERT_EQUAL(b->total, M);
	CU_ASSERT(memcmp(R, S, (size_t)n * n * sizeof *R) == 0);
	free(R);
}

static void test_bvn__pad_makes_lines_equal(void)
{
	struct fast_rng rng;
	fast_rng_seed(&rng, 1);
	for (int it = 0; it < 200; it++) {
		uint32_t n = 1 + (uint32_t)fast_rng_below(&rng, 12);
		uint64_t *S = random_matrix(&rng, n, it % 4), *P, M, mx = 0;
		P = calloc((size_t)n * n, sizeof *P);
		memcpy(P, S, (size_t)n * n * sizeof *P);
		CU_ASSERT_EQUAL_FATAL(fast_bvn_pad(P, n, &M, NULL), 0);
		for (uint32_t i = 0; i < n; i++) {
			uint64_t r = 0, c = 0, rs = 0, cs = 0;
			for (uint32_t j = 0; j < n; j++) {
				r += P[i * n + j];
				c += P[j * n + i];
				rs += S[i * n + j];
				cs += S[j * n + i];
				CU_ASSERT(P[i * n + j] >= S[i * n + j]);
			}
			CU_ASSERT_EQUAL(r, M);
			CU_ASSERT_EQUAL(c, M);
			mx = rs > mx ? rs : mx;
			mx = cs > mx ? cs : mx;
		}
		CU_ASSERT_EQUAL(M, mx);
		free(S);
		free(P);
	}
}

static void test_bvn__pad_counterexample_uses_diagonal(void)
{
	/* without a diagonal no completion exists; with it, (2,2) idles */
	uint64_t M = 7, S[9] = { 0, 7, 0, 7, 0, 0, 0, 0, 0 }, got;
	struct fast_bvn b;
	CU_ASSERT_EQUAL_FATAL(fast_bvn_pad(S, 3, &got, NULL), 0);
	CU_ASSERT_EQUAL(got, M);
	CU_ASSERT_EQUAL(S[8], M);
	CU_ASSERT_EQUAL_FATAL(fast_bvn_decompose(S, 3, &b, NULL), 0);
	check_exact(S, 3, M, &b);
	CU_ASSERT_EQUAL(b.nterms, 1);
	CU_ASSERT_EQUAL(b.perm[2], 2u);
	fast_bvn_free(&b);
}

static void test_bvn__exact_reassembles(void)
{
	struct fast_rng rng;
	fast_rng_seed(&rng, 2);
	for (int it = 0; it < 400; it++) {
		uint32_t n = 1 + (uint32_t)fast_rng_below(&rng, 24);
		uint64_t *S = random_matrix(&rng, n, it % 4), M;
		struct fast_bvn b;
		CU_ASSERT_EQUAL_FATAL(fast_bvn_pad(S, n, &M, NULL), 0);
		CU_ASSERT_EQUAL_FATAL(fast_bvn_decompose(S, n, &b, NULL), 0);
		check_exact(S, n, M, &b);
		fast_bvn_free(&b);
		fast_bvn_free(&b); /* idempotent */
		free(S);
	}
}

static void test_bvn__term_bound_tight_cases(void)
{
	/* a full matrix of distinct powers makes the greedy take many terms;
	 * the bound must still hold */
	uint32_t n = 6;
	uint64_t S[36], M;
	struct fast_bvn b;
	for (uint32_t i = 0; i < n * n; i++)
		S[i] = UINT64_C(1) << (i % 37);
	CU_ASSERT_EQUAL_FATAL(fast_bvn_pad(S, n, &M, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(fast_bvn_decompose(S, n, &b, NULL), 0);
	check_exact(S, n, M, &b);
	CU_ASSERT(b.nterms <= 26);
	CU_ASSERT(b.nterms >= n); /* every entry of a row is its own term */
	fast_bvn_free(&b);
}

/* Naive reference: every round, the lexicographically first permutation on
 * the support, found by brute force (n <= 6). */
static bool first_perm(const uint64_t *R, uint32_t n, uint32_t *p, uint32_t row, uint32_t used)
{
	if (row == n)
		return true;
	for (uint32_t c = 0; c < n; c++) {
		if ((used & (1u << c)) || !R[row * n + c])
			continue;
		p[row] = c;
		if (first_perm(R, n, p, row + 1, used | (1u << c)))
			return true;
	}
	return false;
}

static void test_bvn__matches_naive_reference(void)
{
	struct fast_rng rng;
	fast_rng_seed(&rng, 3);
	for (int it = 0; it < 200; it++) {
		uint32_t n = 1 + (uint32_t)fast_rng_below(&rng, 6), p[8];
		uint64_t *S = random_matrix(&rng, n, it % 4), M, R[64], back[64] = { 0 };
		uint64_t nsum = 0, nterms = 0;
		struct fast_bvn b;
		CU_ASSERT_EQUAL_FATAL(fast_bvn_pad(S, n, &M, NULL), 0);
		memcpy(R, S, (size_t)n * n * sizeof *R);
		for (;;) {
			uint64_t w = UINT64_MAX, left = 0;
			for (uint32_t k = 0; k < n * n; k++)
				left += R[k];
			if (!left)
				break;
			CU_ASSERT_FATAL(first_perm(R, n, p, 0, 0));
			for (uint32_t i = 0; i < n; i++)
				w = R[i * n + p[i]] < w ? R[i * n + p[i]] : w;
			for (uint32_t i = 0; i < n; i++) {
				R[i * n + p[i]] -= w;
				back[i * n + p[i]] += w;
			}
			nsum += w;
			nterms++;
		}
		CU_ASSERT(memcmp(back, S, (size_t)n * n * sizeof *S) == 0);
		CU_ASSERT_EQUAL(nsum, M);
		CU_ASSERT(nterms <= fast_bvn_max_terms(n));
		CU_ASSERT_EQUAL_FATAL(fast_bvn_decompose(S, n, &b, NULL), 0);
		check_exact(S, n, M, &b);
		/* both are greedy on the same face lattice: same bound, same sum */
		CU_ASSERT(b.nterms <= fast_bvn_max_terms(n));
		fast_bvn_free(&b);
		free(S);
	}
}

static void test_bvn__unequal_lines_rejected(void)
{
	uint64_t S[4] = { 1, 2, 3, 4 };
	struct fast_bvn b = { 0 };
	struct fast_err err = { 0 };
	CU_ASSERT_EQUAL(fast_bvn_decompose(S, 2, &b, &err), FAST_EINPUT);
	CU_ASSERT(strstr(err.msg, "line sums differ") != NULL);
	CU_ASSERT(b.perm == NULL);
}

static void test_bvn__overflow_rejected(void)
{
	uint64_t S[4] = { 0, UINT64_MAX, UINT64_MAX, 1 }, copy[4], M = 99;
	struct fast_err err = { 0 };
	memcpy(copy, S, sizeof S);
	CU_ASSERT_EQUAL(fast_bvn_pad(S, 2, &M, &err), FAST_EINPUT);
	CU_ASSERT(memcmp(copy, S, sizeof S) == 0);
	CU_ASSERT_EQUAL(M, 99);
}

/* The server matrix and loads are the exact sums whatever the entry
 * sizes (plain adds below 2^48, checked ones above), and a pair whose
 * bytes overflow 64 bits is named. */
static void test_bvn__server_loads_exact_and_overflow(void)
{
	enum { SV = 3, G = 4, NG = SV * G };
	static uint64_t D[NG * NG];
	uint64_t S[SV * SV], load[SV * SV * G], nnz = 0, want_nnz = 0;
	struct fast_rng rng;
	struct fast_err err = { 0 };
	fast_rng_seed(&rng, 48);
	for (int it = 0; it < 200; it++) {
		want_nnz = 0;
		for (size_t k = 0; k < NG * NG; k++) {
			uint32_t s = (uint32_t)(k / NG) / G, d = (uint32_t)(k % NG) / G;
			/* some matrices with entries over 2^48, sums still under 2^64 */
			uint64_t big = it % 2 ? UINT64_C(1) << 58 : UINT64_C(1) << 20;
			D[k] = fast_rng_below(&rng, 3) ? fast_rng_below(&rng, big) : 0;
			want_nnz += s != d && D[k];
		}
		CU_ASSERT_EQUAL_FATAL(fast_bvn_server_loads(D, SV, G, S, load, &nnz, &err), 0);
		CU_ASSERT_EQUAL(nnz, want_nnz);
		for (uint32_t a = 0; a < SV; a++)
			for (uint32_t b = 0; b < SV; b++) {
				uint64_t R = 0;
				if (a == b) {
					CU_ASSERT_EQUAL(S[a * SV + b], 0);
					continue;
				}
				for (uint32_t i = 0; i < G; i++) {
					uint64_t r = 0;
					for (uint32_t j = 0; j < G; j++)
						r += D[(a * G + i) * NG + b * G + j];
					CU_ASSERT_EQUAL(load[(a * SV + b) * G + i], r);
					R += r;
				}
				CU_ASSERT_EQUAL(S[a * SV + b], R / G + (R % G != 0));
			}
	}
	memset(D, 0, sizeof D);
	D[(1 * G + 0) * NG + 2 * G + 1] = UINT64_MAX / 2 + 1; /* server 1 -> 2: 2^64 */
	D[(1 * G + 3) * NG + 2 * G + 0] = UINT64_MAX / 2 + 1;
	CU_ASSERT_EQUAL(fast_bvn_server_loads(D, SV, G, S, load, &nnz, &err), FAST_EINPUT);
	CU_ASSERT(strstr(err.msg, "server 1 to server 2 overflow 64 bits") != NULL);
	D[(1 * G + 3) * NG + 2 * G + 0] = UINT64_MAX / 2; /* just fits */
	CU_ASSERT_EQUAL(fast_bvn_server_loads(D, SV, G, S, load, &nnz, &err), 0);
	CU_ASSERT_EQUAL(S[1 * SV + 2], UINT64_MAX / G + 1);
}

static void test_bvn__zero_and_huge(void)
{
	uint64_t Z[9] = { 0 }, M, H[4];
	struct fast_bvn b;
	CU_ASSERT_EQUAL(fast_bvn_pad(Z, 3, &M, NULL), 0);
	CU_ASSERT_EQUAL(M, 0);
	CU_ASSERT_EQUAL(fast_bvn_decompose(Z, 3, &b, NULL), 0);
	CU_ASSERT_EQUAL(b.nterms, 0);
	fast_bvn_free(&b);
	H[0] = 0;
	H[1] = (UINT64_C(1) << 62) + 3;
	H[2] = (UINT64_C(1) << 53) + 1;
	H[3] = 0;
	CU_ASSERT_EQUAL(fast_bvn_pad(H, 2, &M, NULL), 0);
	CU_ASSERT_EQUAL(fast_bvn_decompose(H, 2, &b, NULL), 0);
	check_exact(H, 2, M, &b);
	fast_bvn_free(&b);
}

/* Coverage: applying the terms in order moves every byte of S. */
static void check_covers(const uint64_t *S, uint32_t n, const struct fast_bvn *b, bool exact_sends)
{
	uint64_t *rem = calloc((size_t)n * n + 1, sizeof *rem);
	memcpy(rem, S, (size_t)n * n * sizeof *rem);
	for (uint32_t k = 0; k < b->nterms; k++)
		for (uint32_t a = 0; a < n; a++) {
			uint32_t c = b->perm[(size_t)k * n + a];
			uint64_t *r = &rem[(size_t)a * n + c];
			if (c == a)
				continue;
			*r -= *r < b->weight[k] ? *r : b->weight[k];
		}
	for (uint32_t a = 0; a < n; a++)
		for (uint32_t c = 0; c < n; c++)
			if (a != c)
				CU_ASSERT_EQUAL(rem[(size_t)a * n + c], 0);
	(void)exact_sends;
	free(rem);
}

static void test_bvn__quantized_and_trimmed_cover(void)
{
	struct fast_rng rng;
	fast_rng_seed(&rng, 4);
	for (int it = 0; it < 300; it++) {
		uint32_t n = 1 + (uint32_t)fast_rng_below(&rng, 20);
		uint64_t *S = random_matrix(&rng, n, it % 4), q = 1 + fast_rng_below(&rng, 5000);
		struct fast_bvn b;
		uint32_t before;
		CU_ASSERT_EQUAL_FATAL(fast_bvn_quantized(S, n, q, &b, NULL), 0);
		CU_ASSERT(b.nterms <= fast_bvn_max_terms(n));
		for (uint32_t k = 0; k < b.nterms; k++)
			CU_ASSERT(b.weight[k] % q == 0);
		check_covers(S, n, &b, false);
		before = b.nterms;
		fast_bvn_trim(&b, S);
		CU_ASSERT(b.nterms <= before);
		check_covers(S, n, &b, true);
		for (uint32_t k = 0; k < b.nterms; k++)
			CU_ASSERT(b.weight[k] > 0);
		fast_bvn_free(&b);
		free(S);
	}
}

static void test_bvn__auto_never_worse_than_exact(void)
{
	struct fast_rng rng;
	fast_rng_seed(&rng, 5);
	for (int it = 0; it < 120; it++) {
		uint32_t n = 2 + (uint32_t)fast_rng_below(&rng, 16);
		uint64_t *S = random_matrix(&rng, n, it % 4);
		struct fast_bvn_model m = { .stage_s = (double)fast_rng_below(&rng, 50) * 1e-6,
					    .Bps = 1e3 + (double)fast_rng_below(&rng, 50) * 1e9 };
		struct fast_bvn a, e;
		struct fast_bvn_search_info info;
		CU_ASSERT_EQUAL_FATAL(fast_bvn_search(S, n, &m, &a, &info, NULL), 0);
		CU_ASSERT_EQUAL_FATAL(fast_bvn_quantized(S, n, 1, &e, NULL), 0);
		fast_bvn_trim(&e, S);
		CU_ASSERT(fast_bvn_time(&a, &m) <= fast_bvn_time(&e, &m) * (1 + 1e-12));
		CU_ASSERT(info.time_s == fast_bvn_time(&a, &m));
		CU_ASSERT(info.candidates >= 1);
		check_covers(S, n, &a, true);
		fast_bvn_free(&a);
		fast_bvn_free(&e);
		free(S);
	}
}

static void test_bvn__auto_wins_when_stages_are_costly(void)
{
	/* 32 servers, ~1 GB per row, 10 us per stage: exact needs hundreds of
	 * stages, the quantised one far fewer */
	struct fast_rng rng;
	uint32_t n = 32;
	uint64_t *S = calloc((size_t)n * n, sizeof *S);
	struct fast_bvn_model m = { .stage_s = 10e-6, .Bps = 48e9 };
	struct fast_bvn a, e;
	struct fast_bvn_search_info info;
	fast_rng_seed(&rng, 6);
	for (uint32_t i = 0; i < n; i++)
		for (uint32_t j = 0; j < n; j++)
			S[i * n + j] = i == j ? 0 : 16000000 + fast_rng_below(&rng, 32000000);
	CU_ASSERT_EQUAL_FATAL(fast_bvn_search(S, n, &m, &a, &info, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(fast_bvn_quantized(S, n, 1, &e, NULL), 0);
	fast_bvn_trim(&e, S);
	CU_ASSERT(a.nterms < e.nterms);
	CU_ASSERT(info.quantum > 1);
	CU_ASSERT(fast_bvn_time(&a, &m) < fast_bvn_time(&e, &m));
	fast_bvn_free(&a);
	fast_bvn_free(&e);
	free(S);
}

static void test_bvn__sort_is_stable(void)
{
	uint32_t n = 2;
	uint32_t perm[8] = { 0, 1, 1, 0, 1, 0, 1, 0 };
	uint64_t w[4] = { 3, 5, 3, 1 };
	struct fast_bvn b = { .n = n, .nterms = 4, .total = 12, .quantum = 1 };
	b.perm = malloc(sizeof perm);
	b.weight = malloc(sizeof w);
	memcpy(b.perm, perm, sizeof perm);
	memcpy(b.weight, w, sizeof w);
	CU_ASSERT_EQUAL(fast_bvn_sort(&b, FAST_BVN_LARGEST_FIRST, NULL), 0);
	CU_ASSERT(b.weight[0] == 5 && b.weight[1] == 3 && b.weight[2] == 3 && b.weight[3] == 1);
	CU_ASSERT(b.perm[2] == 0 && b.perm[4] == 1); /* the two 3s kept their order */
	CU_ASSERT_EQUAL(fast_bvn_sort(&b, FAST_BVN_SMALLEST_FIRST, NULL), 0);
	CU_ASSERT(b.weight[0] == 1 && b.weight[1] == 3 && b.weight[2] == 3 && b.weight[3] == 5);
	CU_ASSERT(b.perm[2] == 0 && b.perm[4] == 1);
	fast_bvn_free(&b);
}

/* On a dense, noisy near-uniform matrix (the server matrix of random
 * traffic) with a per-stage cost of 2% of an entry, the bottleneck-prefix
 * hybrid wins: it covers S, beats every plain quantised octave in the
 * model, keeps the padding under 6.25% of M with under half the exact terms,
 * and is deterministic. */
static void test_bvn__hybrid_beats_plain_quanta(void)
{
	struct fast_rng rng;
	int hybrids = 0;
	fast_rng_seed(&rng, 11);
	for (int it = 0; it < 20; it++) {
		uint32_t n = 8 + (uint32_t)fast_rng_below(&rng, 17);
		uint64_t *S = calloc((size_t)n * n, sizeof *S), big = 0, M = 0, sw = 0;
		struct fast_bvn_model m = { .stage_s = 2e-6, .Bps = 1e9 }; /* 2000 B a stage */
		struct fast_bvn a, a2, e;
		struct fast_bvn_search_info info;
		double ta;
		for (uint32_t i = 0; i < n; i++) {
			uint64_t r = 0;
			for (uint32_t j = 0; j < n; j++) {
				uint64_t v = i == j ? 0 : 80000 + fast_rng_below(&rng, 40000);
				S[(size_t)i * n + j] = v;
				big = v > big ? v : big;
				r += v;
			}
			M = r > M ? r : M;
		}
		for (uint32_t j = 0; j < n; j++) {
			uint64_t c = 0;
			for (uint32_t i = 0; i < n; i++)
				c += S[(size_t)i * n + j];
			M = c > M ? c : M;
		}
		CU_ASSERT_EQUAL_FATAL(fast_bvn_search(S, n, &m, &a, &info, NULL), 0);
		ta = fast_bvn_time(&a, &m);
		check_covers(S, n, &a, false);
		hybrids += info.prefix > 0;
		for (uint64_t q = big; q >= 2; q /= 2) {
			struct fast_bvn b;
			CU_ASSERT_EQUAL_FATAL(fast_bvn_quantized(S, n, q, &b, NULL), 0);
			fast_bvn_trim(&b, S);
			CU_ASSERT(ta <= fast_bvn_time(&b, &m) * (1 + 1e-12));
			fast_bvn_free(&b);
		}
		CU_ASSERT_EQUAL_FATAL(fast_bvn_quantized(S, n, 1, &e, NULL), 0);
		fast_bvn_trim(&e, S);
		for (uint32_t k = 0; k < a.nterms; k++) {
			CU_ASSERT(is_perm(a.perm + (size_t)k * n, n));
			CU_ASSERT(a.weight[k] > 0);
			sw += a.weight[k];
		}
		CU_ASSERT(sw <= M + M / 16);
		CU_ASSERT(2 * a.nterms < e.nterms);
		CU_ASSERT_EQUAL_FATAL(fast_bvn_search(S, n, &m, &a2, NULL, NULL), 0);
		CU_ASSERT_EQUAL(a2.nterms, a.nterms);
		CU_ASSERT(a.nterms == a2.nterms &&
			  memcmp(a.perm, a2.perm, (size_t)a.nterms * n * sizeof *a.perm) == 0 &&
			  memcmp(a.weight, a2.weight, a.nterms * sizeof *a.weight) == 0);
		fast_bvn_free(&a);
		fast_bvn_free(&a2);
		fast_bvn_free(&e);
		free(S);
	}
	CU_ASSERT(hybrids >= 15);
}

/* FNV-1a over the words of a decomposition */
static uint64_t fingerprint(uint64_t h, const struct fast_bvn *b, const struct fast_bvn_search_info *info)
{
	uint64_t words[3] = { b->nterms, info->quantum, info->prefix };
	for (int k = 0; k < 3; k++)
		h = (h ^ words[k]) * UINT64_C(1099511628211);
	for (size_t k = 0; k < (size_t)b->nterms * b->n; k++)
		h = (h ^ b->perm[k]) * UINT64_C(1099511628211);
	for (uint32_t k = 0; k < b->nterms; k++)
		h = (h ^ b->weight[k]) * UINT64_C(1099511628211);
	return h;
}

/* The search's bookkeeping (one scratch for all candidates, the threshold
 * support on a heap, word-parallel matching, abandoning a candidate on a
 * lower bound of what is left) changes its speed, not its answers: the
 * fingerprint of its decompositions of seeded matrices (1..80 servers, so
 * more than one 64-bit word of columns; sparse, dense, large, skewed and
 * near-uniform; stage costs from none to large) is pinned to the one the
 * search gave before those changes, and every result covers its matrix. */
static void test_bvn__auto_decompositions_pinned(void)
{
	struct fast_rng rng;
	uint64_t h = UINT64_C(14695981039346656037);
	fast_rng_seed(&rng, 16);
	for (int it = 0; it < 160; it++) {
		uint32_t n = it < 150 ? 1 + (uint32_t)fast_rng_below(&rng, 40)
				      : 65 + (uint32_t)fast_rng_below(&rng, 16);
		uint64_t *S;
		struct fast_bvn_model m = { .stage_s = (double)fast_rng_below(&rng, 30) * 1e-6,
					    .Bps = 1e8 + (double)fast_rng_below(&rng, 100) * 1e8 };
		struct fast_bvn a;
		struct fast_bvn_search_info info;
		if (it % 5 == 4) { /* near-uniform: the hybrid's case */
			S = calloc((size_t)n * n + 1, sizeof *S);
			for (uint32_t i = 0; i < n; i++)
				for (uint32_t j = 0; j < n; j++)
					S[(size_t)i * n + j] =
						i == j ? 0 : 80000 + fast_rng_below(&rng, 40000);
			m.stage_s = 2e-6;
			m.Bps = 1e9;
		} else {
			S = random_matrix(&rng, n, it % 4);
		}
		CU_ASSERT_EQUAL_FATAL(fast_bvn_search(S, n, &m, &a, &info, NULL), 0);
		check_covers(S, n, &a, true);
		h = fingerprint(h, &a, &info);
		fast_bvn_free(&a);
		free(S);
	}
	CU_ASSERT_EQUAL(h, AUTO_FINGERPRINT);
}

/* The quantised matrix is ceil(S / q) exactly, at every entry size (the
 * quotient is taken through a double reciprocal below 2^52): a 1 x 1
 * matrix [x] decomposes into one term of weight ceil(x / q) * q. */
static void test_bvn__quantized_rounds_up_exactly(void)
{
	struct fast_rng rng;
	fast_rng_seed(&rng, 52);
	for (int it = 0; it < 20000; it++) {
		uint64_t q = 2 + fast_rng_below(&rng, it % 3 == 0 ? 1000 : UINT64_C(1) << 40);
		uint64_t k = fast_rng_below(&rng, (UINT64_C(1) << 53) / q);
		uint64_t x = k * q + (uint64_t)(it % 5) - 2; /* around a multiple of q */
		struct fast_bvn b;
		if (it % 7 == 0)
			x = (UINT64_C(1) << 52) - 3 + fast_rng_below(&rng, 6);
		CU_ASSERT_EQUAL_FATAL(fast_bvn_quantized(&x, 1, q, &b, NULL), 0);
		if (x == 0) {
			CU_ASSERT_EQUAL(b.nterms, 0);
		} else {
			CU_ASSERT_EQUAL(b.nterms, 1);
			CU_ASSERT_EQUAL(b.weight[0], (x / q + (x % q != 0)) * q);
		}
		fast_bvn_free(&b);
	}
}

/* The same pin on what the search meets in use: the server matrices
 * (4 GPUs a server) of random, skewed (Zipf-like) and sparse traffic on
 * 2..64 servers at 64 KiB, 4 MiB and 256 MiB per GPU, with h200's stage
 * cost and NIC and a slower, costlier-stage network (hybrids win about a
 * quarter of the 54). */
static void test_bvn__auto_server_matrices_pinned(void)
{
	static const uint64_t per_gpu[3] = { UINT64_C(64) << 10, UINT64_C(4) << 20,
					     UINT64_C(256) << 20 };
	static const struct fast_bvn_model models[2] = { { 6.7e-6, 4.885e10 },
							 { 12e-6, 1.2e10 } };
	struct fast_rng rng;
	uint64_t h = UINT64_C(14695981039346656037);
	int it = 0;
	fast_rng_seed(&rng, 64);
	for (uint32_t n = 2; n <= 64; n += n < 12 ? 1 : 7)
		for (int pat = 0; pat < 3; pat++, it++) {
			uint32_t ng = 4 * n;
			uint64_t *D = calloc((size_t)ng * ng, sizeof *D), *S = calloc((size_t)n * n, 8);
			uint64_t sum = 0, unit;
			struct fast_bvn a;
			struct fast_bvn_search_info info;
			for (size_t k = 0; k < (size_t)ng * ng; k++) {
				double u = fast_rng_double(&rng);
				uint64_t v = pat == 0   ? fast_rng_below(&rng, 1024)
					     : pat == 1 ? (uint64_t)(1024 * u * u * u * u * u)
							: (fast_rng_below(&rng, 100) < 85 ? 0 : fast_rng_below(&rng, 1024));
				D[k] = k / ng == k % ng ? 0 : v;
				sum += D[k];
			}
			unit = sum ? per_gpu[it % 3] * ng / sum : 1;
			for (size_t k = 0; k < (size_t)ng * ng; k++)
				D[k] *= unit ? unit : 1;
			CU_ASSERT_EQUAL_FATAL(fast_bvn_server_matrix(D, n, 4, S, NULL), 0);
			CU_ASSERT_EQUAL_FATAL(fast_bvn_search(S, n, &models[it % 2], &a, &info, NULL), 0);
			check_covers(S, n, &a, true);
			h = fingerprint(h, &a, &info);
			fast_bvn_free(&a);
			free(D);
			free(S);
		}
	CU_ASSERT_EQUAL(h, AUTO_SERVER_FINGERPRINT);
}

/* A matrix whose line sums overflow is bad input for the search too (and
 * one just under is fine). */
static void test_bvn__auto_overflow_rejected(void)
{
	uint64_t T[9] = { 0, UINT64_MAX, 1, 1, 0, 0, 0, 0, 0 };
	uint64_t S[4] = { 0, UINT64_MAX / 2 + 1, UINT64_MAX / 2 + 1, 0 };
	struct fast_bvn_model m = { .stage_s = 1e-6, .Bps = 1e9 };
	struct fast_bvn a = { 0 };
	struct fast_err err = { 0 };
	CU_ASSERT_EQUAL(fast_bvn_search(T, 3, &m, &a, NULL, &err), FAST_EINPUT);
	CU_ASSERT(strstr(err.msg, "overflows 64 bits") != NULL);
	CU_ASSERT(a.perm == NULL);
	CU_ASSERT_EQUAL_FATAL(fast_bvn_search(S, 2, &m, &a, NULL, &err), 0);
	check_covers(S, 2, &a, true);
	fast_bvn_free(&a);
}

UNIT_MAIN("bvn",
	  UNIT_TEST(test_bvn__pad_makes_lines_equal),
	  UNIT_TEST(test_bvn__pad_counterexample_uses_diagonal),
	  UNIT_TEST(test_bvn__exact_reassembles),
	  UNIT_TEST(test_bvn__term_bound_tight_cases),
	  UNIT_TEST(test_bvn__matches_naive_reference),
	  UNIT_TEST(test_bvn__unequal_lines_rejected),
	  UNIT_TEST(test_bvn__overflow_rejected),
	  UNIT_TEST(test_bvn__server_loads_exact_and_overflow),
	  UNIT_TEST(test_bvn__zero_and_huge),
	  UNIT_TEST(test_bvn__quantized_and_trimmed_cover),
	  UNIT_TEST(test_bvn__quantized_rounds_up_exactly),
	  UNIT_TEST(test_bvn__auto_never_worse_than_exact),
	  UNIT_TEST(test_bvn__auto_wins_when_stages_are_costly),
	  UNIT_TEST(test_bvn__hybrid_beats_plain_quanta),
	  UNIT_TEST(test_bvn__auto_decompositions_pinned),
	  UNIT_TEST(test_bvn__auto_server_matrices_pinned),
	  UNIT_TEST(test_bvn__auto_overflow_rejected),
	  UNIT_TEST(test_bvn__sort_is_stable))
