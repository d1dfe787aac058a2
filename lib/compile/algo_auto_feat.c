/*
 * algo_auto_feat.c - the features `--algo auto` predicts from
 * (algo_auto_internal.h, struct feat): one pass over the n x n matrix
 * (n = N * G) and the passes of their own that make a lazy feature exact.
 *
 * The pass (auto_gather()) gathers per GPU the bytes it sends and
 * receives across servers and within its server, PXN's rail loads on
 * each NIC, the server matrix's largest row or column, and either hier's
 * NIC loads and the largest cross message (gather_g, gather8_avx2) or the
 * largest server pair (packed FAST's tiles; gather8_avx512).  Spreadout's
 * per-round maxima, and the pair or hier's loads where the pass taken did
 * not find them, come from passes of their own (auto_spread_pass() in
 * algo_auto_spread.c, auto_pair_pass(), auto_hier_pass()), which the choice (algo_auto.c)
 * makes only when floors under those candidates' predictions do not
 * already rule them out: the schedules' refine hooks
 * (algo_auto_model.c) call them.
 *
 * Workload: every rank of `fast run --algo auto`, once per matrix, before
 * any compile.  Cost: linear in the n^2 entries read.  With G = 8 on a
 * CPU with AVX-512 (gather8_avx512: one strip of 8 rows at a time, the
 * pair in the same pass, hier's loads left to auto_hier_pass), `fast
 * bench auto` (thread-CPU medians, 2026-12-01 19:15-19:17 UTC, load 0.4
 * on 2 cores, three rounds alternating with the previous binary) measured
 * 0.31-0.62 us at 4 x 8 and 1.88-2.69 us at 16 x 8, against 0.49-0.87 and
 * 4.0-5.3 us for the previous pass (two strips at a time, hier's loads in
 * it, the pair a pass of its own) in the same rounds; the pass alone 0.17
 * and 1.7 us, hier_pass 0.09 and 1.6 us, pair_pass 0.05 and 1.1 us.  GCC
 * unrolls the 8-row loops only when told to (#pragma GCC unroll): without
 * it the same pass took 5.2 us at 16 x 8.  With AVX2 only (gather8_avx2)
 * 0.8 and 5.4 us; gather_g, which also finds the largest message, runs
 * 9-15% more instructions than the first scalar pass (callgrind).
 */
#include <stdlib.h>
#include <string.h>

#include "lib/compile/algo_auto_internal.h"

/* Up to this many GPUs the work arrays live on the stack (20 KiB at 256
 * GPUs): the decision at 4 x 8 must cost under a microsecond, and malloc
 * is a good part of that. */
#define GATHER_WORDS 9 /* per-GPU arrays of gather */

/* gather_g(), the scalar pass for any G: returns -1 on allocation
 * failure.  Per source server A, its G rows, four at a time: per row and
 * destination block, the block's sum in a register (sends, hier's NIC
 * loads, the rail), the largest message; per column, the strip's sum in
 * acc, folded into the receive sums and PXN's NIC loads once per strip,
 * and the non-zero count into the senders -- two stores per four
 * messages.  Spreadout's round maxima would be a compare and a store more
 * per message: auto_spread_pass() makes them when they decide (decide()). */
#if defined(__GNUC__)
#define ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define ALWAYS_INLINE inline
#endif

/* R rows (R = 4 or 1, a constant where inlined) of a strip against the
 * cross block at blk (stride: the matrix's row): each row's block sum into
 * sum[], the strip's column sums and non-zero counts.  R rows a column:
 * one store of each sum and count for R messages.  The four rows are
 * written out: GCC at -O2 keeps sum[] in memory otherwise. */
static ALWAYS_INLINE void cross_block(const uint64_t *blk, size_t stride, const uint32_t R,
				      const uint32_t G, uint64_t *ab, uint64_t *cb, uint64_t *sum,
				      uint64_t *big)
{
	uint64_t m = 0;

	if (R == 4) {
		const uint64_t *b1 = blk + stride, *b2 = b1 + stride, *b3 = b2 + stride;
		uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
		for (uint32_t j = 0; j < G; j++) {
			uint64_t v0 = blk[j], v1 = b1[j], v2 = b2[j], v3 = b3[j];
			s0 += v0, s1 += v1, s2 += v2, s3 += v3;
			ab[j] += (v0 + v1) + (v2 + v3);
			cb[j] += (uint64_t)(v0 != 0) + (v1 != 0) + (v2 != 0) + (v3 != 0);
			m = max64(m, max64(max64(v0, v1), max64(v2, v3)));
		}
		sum[0] += s0, sum[1] += s1, sum[2] += s2, sum[3] += s3;
	} else {
		for (uint32_t k = 0; k < R; k++)
			for (uint32_t j = 0; j < G; j++) {
				uint64_t v = blk[k * stride + j];
				sum[k] += v, ab[j] += v, cb[j] += v != 0;
				m = max64(m, v);
			}
	}
	*big = max64(*big, m);
}

/* The same for the strip's own block (rows i..i+R-1 of it): the rows'
 * sums, the column sums, the largest message off the diagonal into *big.
 * The four rows take the largest of all and check it against their
 * diagonal entries (a GPU's bytes to itself, usually 0): only where one of
 * those could be it are they left out one by one. */
static ALWAYS_INLINE void local_block(const uint64_t *blk, size_t stride, const uint32_t R,
				      const uint32_t G, uint32_t i, uint64_t *ab, uint64_t *sum,
				      uint64_t *big)
{
	uint64_t m = 0;

	if (R == 4) {
		const uint64_t *b1 = blk + stride, *b2 = b1 + stride, *b3 = b2 + stride;
		uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0, diag;
		for (uint32_t j = 0; j < G; j++) {
			uint64_t v0 = blk[j], v1 = b1[j], v2 = b2[j], v3 = b3[j];
			s0 += v0, s1 += v1, s2 += v2, s3 += v3;
			ab[j] += (v0 + v1) + (v2 + v3);
			m = max64(m, max64(max64(v0, v1), max64(v2, v3)));
		}
		sum[0] += s0, sum[1] += s1, sum[2] += s2, sum[3] += s3;
		diag = max64(max64(blk[i], b1[i + 1]), max64(b2[i + 2], b3[i + 3]));
		if (m > diag || m == 0) {
			*big = max64(*big, m);
			return;
		}
		m = 0;
		for (uint32_t k = 0; k < R; k++)
			for (uint32_t j = 0; j < G; j++)
				m = max64(m, j == i + k ? 0 : blk[k * stride + j]);
	} else {
		for (uint32_t k = 0; k < R; k++)
			for (uint32_t j = 0; j < G; j++) {
				uint64_t v = blk[k * stride + j];
				sum[k] += v, ab[j] += v;
				m = max64(m, j == i + k ? 0 : v);
			}
	}
	*big = max64(*big, m);
}

/* gather's arrays, per GPU (acc: per strip) */
struct garrays {
	uint64_t *sx, *rx, *si, *ri, *po, *rl, *hi, *kin, *acc;
};

/* Rows i..i+R-1 of strip A (R = 4 or 1) into g and f. */
static ALWAYS_INLINE void strip_rows(const uint64_t *strip, uint32_t N, const uint32_t G, uint32_t A,
				     uint32_t i, const uint32_t R, const struct garrays *g,
				     struct feat *f)
{
	uint32_t ng = N * G, s = A * G + i;
	uint64_t cross[4] = { 0 }, rail[4] = { 0 };
	const uint64_t *row = strip + (size_t)i * ng;

	for (uint32_t B = 0; B < N; B++) {
		const uint64_t *blk = row + (size_t)B * G;
		uint64_t sum[4] = { 0 };
		if (B == A) {
			local_block(blk, ng, R, G, i, g->acc + B * G, sum, &f->intra_msg);
			for (uint32_t k = 0; k < R; k++)
				g->si[s + k] = sum[k] - blk[(size_t)k * ng + i + k]; /* less the diagonal */
			continue;
		}
		cross_block(blk, ng, R, G, g->acc + B * G, g->kin + B * G, sum, &f->largest);
		for (uint32_t k = 0; k < R; k++) {
			cross[k] += sum[k], rail[k] += blk[(size_t)k * ng + i + k];
			g->hi[B * G + i + k] += sum[k]; /* hier: A_i -> B_i, then forwarded */
		}
	}
	for (uint32_t k = 0; k < R; k++) {
		g->sx[s + k] = cross[k];
		g->rl[s + k] = rail[k];
		f->total += cross[k] + g->si[s + k];
	}
}

/* The per-GPU sums of g (sx, rx, si, ri, po, rl, hi, kin: ng = N * G
 * each) into f's maxima, f->nnz and f->srv. */
static ALWAYS_INLINE void finish_g(uint32_t N, const uint32_t G, const struct garrays *g, struct feat *f)
{
	uint64_t kmin = UINT64_MAX;

	for (uint32_t B = 0; B < N; B++) {
		uint64_t srow = 0, scol = 0;
		for (uint32_t j = 0; j < G; j++) {
			uint32_t x = B * G + j;
			/* PXN's scale-up: local traffic, relays sent (off-rail cross
			 * bytes), relays received (what rail j of this server carries
			 * for others, less its own) */
			uint64_t up = g->si[x] + g->ri[x] + (g->sx[x] - g->rl[x]) + (g->po[x] - g->rl[x]);
			srow += g->sx[x], scol += g->rx[x];
			f->send_x = max64(f->send_x, g->sx[x]);
			f->recv_x = max64(f->recv_x, g->rx[x]);
			f->intra = max64(f->intra, max64(g->si[x], g->ri[x]));
			f->pxn_nic = max64(f->pxn_nic, max64(g->po[x], g->rx[x]));
			f->pxn_up = max64(f->pxn_up, up);
			f->hier_nic = max64(f->hier_nic, max64(g->sx[x], g->hi[x]));
			/* hier on a mesh: B_j forwards what it got on rail j over its
			 * G - 1 links (evenly: the per-link split would cost the
			 * decision as much again) */
			f->hier_link = max64(f->hier_link, G > 1 ? g->hi[x] / (G - 1) : 0);
			if (g->kin[x] > f->k_in)
				f->k_in = (uint32_t)g->kin[x];
			kmin = g->kin[x] < kmin ? g->kin[x] : kmin;
			f->nnz += g->kin[x];
		}
		f->srv = max64(f->srv, max64(srow, scol));
		f->srv_in = max64(f->srv_in, scol);
	}
	f->k_in_min = N ? (uint32_t)kmin : 0;
	f->exact_hier = true; /* gather_g and gather8_avx2 find hier's loads too */
}

static ALWAYS_INLINE int gather_g(const struct fast_topo *t, const uint64_t *D, struct feat *f,
				  const uint32_t G)
{
	uint32_t N = t->servers, ng = N * G;
	size_t words = (size_t)ng * GATHER_WORDS;
	uint64_t stack[STACK_GPUS * GATHER_WORDS];
	uint64_t *buf = words <= sizeof stack / sizeof stack[0] ? stack : malloc(words * sizeof *buf);
	uint64_t *sx, *rx, *si, *ri, *po, *rl, *hi, *kin, *acc;
	struct garrays ga;

	if (!buf)
		return -1;
	/* the sums first, zeroed; sx, si, rl, po are written whole; acc per strip */
	rx = buf, ri = rx + ng, hi = ri + ng, kin = hi + ng;
	sx = kin + ng, si = sx + ng, rl = si + ng, po = rl + ng, acc = po + ng;
	ga = (struct garrays){ sx, rx, si, ri, po, rl, hi, kin, acc };
	memset(buf, 0, (size_t)ng * 4 * sizeof *buf);
	memset(f, 0, sizeof *f);
	for (uint32_t A = 0; A < N; A++) {
		const uint64_t *strip = D + (size_t)A * G * ng;
		uint32_t i = 0;
		memset(acc, 0, (size_t)ng * sizeof *acc);
		for (; i + 4 <= G; i += 4)
			strip_rows(strip, N, G, A, i, 4, &ga, f);
		for (; i < G; i++)
			strip_rows(strip, N, G, A, i, 1, &ga, f);
		for (uint32_t j = 0; j < G; j++) {
			uint32_t c = A * G + j;
			uint64_t rail = 0; /* PXN: rail j of server A carries its column j */
			ri[c] += acc[c] - strip[(size_t)j * ng + c]; /* less the diagonal */
			for (uint32_t B = 0; B < N; B++) {
				c = B * G + j;
				if (B == A)
					continue;
				rx[c] += acc[c], rail += acc[c];
			}
			po[A * G + j] = rail;
		}
	}
	finish_g(N, G, &ga, f);
	if (buf != stack)
		free(buf);
	return 0;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/* G = 8 with AVX-512 (every preset's G; gather8()): a block row, one
 * GPU's messages to one server, is one 512-bit vector of 8 x uint64.
 * Instead of each row's block sums, the pass keeps two sums of the blocks:
 * per source server A, T_A = the sum of its cross blocks (8 vectors in
 * registers: row sums = sends, diagonal = rail, column sums = PXN's NIC
 * loads), and per destination server B, C_B = the sum of the blocks it
 * receives (8 vectors in memory: row sums = hier's NIC loads, column sums
 * = receives), plus the zeros per column and the largest message: about
 * 4.5 vector operations per 8 messages (two strips share C_B's loads and
 * stores and one count of zeros), the horizontal sums once per server.
 * Rows that start off a 64-byte line (malloc's 16 mod 64) split every
 * load: 2.90-3.04 us against 2.61-2.83 us at 16 x 8, which is why
 * fast_traffic_alloc aligns its matrices (lib/model/traffic.c).
 * Sums wrap as the scalar code's do (mod 2^64, in any order the same),
 * so both give the same features on any matrix, and ranks on different
 * CPUs choose alike. */
#define AVX512 __attribute__((target("avx512f")))

/* lane i: the sum of v[i]'s lanes */
static AVX512 ALWAYS_INLINE __m512i rowsums8(const __m512i *v)
{
	__m512i a[4], b[2];

	/* pairs of rows: lanes (2q, 2q + 1) hold rows 2r, 2r + 1's pair q sums */
#pragma GCC unroll 4
	for (int r = 0; r < 4; r++)
		a[r] = _mm512_add_epi64(_mm512_unpacklo_epi64(v[2 * r], v[2 * r + 1]),
					_mm512_unpackhi_epi64(v[2 * r], v[2 * r + 1]));
	/* fours of rows: 128-bit lane pairs added */
#pragma GCC unroll 2
	for (int r = 0; r < 2; r++)
		b[r] = _mm512_add_epi64(_mm512_shuffle_i64x2(a[2 * r], a[2 * r + 1], _MM_SHUFFLE(2, 0, 2, 0)),
					_mm512_shuffle_i64x2(a[2 * r], a[2 * r + 1], _MM_SHUFFLE(3, 1, 3, 1)));
	return _mm512_add_epi64(_mm512_shuffle_i64x2(b[0], b[1], _MM_SHUFFLE(2, 0, 2, 0)),
				_mm512_shuffle_i64x2(b[0], b[1], _MM_SHUFFLE(3, 1, 3, 1)));
}

/* lane j: the sum of the v[i]'s lanes j */
static AVX512 ALWAYS_INLINE __m512i colsums8(const __m512i *v)
{
	return _mm512_add_epi64(_mm512_add_epi64(_mm512_add_epi64(v[0], v[1]), _mm512_add_epi64(v[2], v[3])),
				_mm512_add_epi64(_mm512_add_epi64(v[4], v[5]), _mm512_add_epi64(v[6], v[7])));
}

/* lane i: v[i]'s lane i */
static AVX512 ALWAYS_INLINE __m512i diag8(const __m512i *v)
{
	__m512i d = v[0];

#pragma GCC unroll 8
	for (int i = 1; i < 8; i++)
		d = _mm512_mask_mov_epi64(d, (__mmask8)(1u << i), v[i]);
	return d;
}

/* the sum of v's lanes, mod 2^64 (GCC's _mm512_reduce_add_epi64 adds
 * them as signed long long: undefined where the sums wrap) */
static AVX512 ALWAYS_INLINE uint64_t hsum8(__m512i v)
{
	__m256i a = _mm256_add_epi64(_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64(v, 1));
	__m128i b = _mm_add_epi64(_mm256_castsi256_si128(a), _mm256_extracti128_si256(a, 1));

	return (uint64_t)_mm_cvtsi128_si64(_mm_add_epi64(b, _mm_unpackhi_epi64(b, b)));
}

/* gather8_avx512's running maxima and sums over the strips (lanes: a
 * server's GPUs) */
struct acc8 {
	__m512i im, sx, intra, up, po, tot;
	uint64_t srv;
};

/* Strip A (rows at strip) once its T is complete: its local block and
 * T's sums into a. */
static AVX512 ALWAYS_INLINE void strip8(const uint64_t *strip, size_t ng, uint32_t A, const __m512i *t,
				       struct acc8 *a)
{
	__m512i v[8], d, sx, si, ri, rl, po, up;

	/* the local block: its messages off the diagonal */
#pragma GCC unroll 8
	for (int i = 0; i < 8; i++) {
		v[i] = _mm512_loadu_si512(strip + (size_t)A * 8 + i * ng);
		a->im = _mm512_max_epu64(a->im, _mm512_maskz_mov_epi64((__mmask8)~(1u << i), v[i]));
	}
	d = diag8(v);
	si = _mm512_sub_epi64(rowsums8(v), d);
	ri = _mm512_sub_epi64(colsums8(v), d);
	sx = rowsums8(t), rl = diag8(t), po = colsums8(t);
	/* PXN's scale-up, as gather_g's */
	up = _mm512_add_epi64(_mm512_add_epi64(si, ri),
			      _mm512_add_epi64(_mm512_sub_epi64(sx, rl), _mm512_sub_epi64(po, rl)));
	a->sx = _mm512_max_epu64(a->sx, sx);
	a->intra = _mm512_max_epu64(a->intra, _mm512_max_epu64(si, ri));
	a->up = _mm512_max_epu64(a->up, up);
	a->po = _mm512_max_epu64(a->po, po);
	a->tot = _mm512_add_epi64(a->tot, _mm512_add_epi64(sx, si));
	a->srv = max64(a->srv, hsum8(sx));
}

/* The zeros of rows x, y of a block into n (32-bit lanes j and 8 + j:
 * column j's, from x and from y). */
#define ZEROS2(n, x, y)                                                                  \
	(n = _mm512_mask_add_epi32(n, _mm512_kunpackb(_mm512_testn_epi64_mask(y, y),     \
						      _mm512_testn_epi64_mask(x, x)),    \
				   n, one))

/* gather for G = 8 (gather_g's features, and the largest server pair:
 * exact_pair; hier's loads and the largest message are hier_pass's:
 * hier is chosen only at sizes where that pass costs nothing against
 * the time); -1 on allocation failure.  One strip at a time, B by B: a
 * block is 8 vectors, one per row, each added into its row's cross sum
 * T (registers), the block's column sums s (a tree of 7 adds) into C_B
 * (the receives per GPU: memory, one vector per server) and into a
 * batch of eight blocks whose lanes rowsums8 turns into block totals
 * (the pair), plus the zeros per column: about 4.2 vector operations per
 * 8 messages, one store per 8 vectors.  Work: C and the zero counts, 2
 * vectors per server (on the stack up to STACK_GPUS GPUs). */
static AVX512 int gather8_avx512(const uint64_t *D, uint32_t N, struct feat *f)
{
	const size_t ng = (size_t)N * 8, words = (size_t)N * 2;
	const __m512i zero = _mm512_setzero_si512(), one = _mm512_set1_epi32(1);
	__m512i stack[STACK_GPUS / 8 * 2];
	__m512i *C = words <= sizeof stack / sizeof stack[0] ? stack : aligned_alloc(64, words * sizeof *C);
	__m512i *Z, rx = zero, kin = zero, kinmin = _mm512_set1_epi64(-1), nnz = zero, pair = zero, pv[8];
	struct acc8 a = { zero, zero, zero, zero, zero, zero, 0 };
	uint64_t srv_in = 0;
	uint32_t q = 0;

	if (!C)
		return -1;
	Z = C + N;
	for (size_t w = 0; w < words; w++)
		C[w] = zero;
	for (uint32_t A = 0; A < N; A++) {
		const uint64_t *strip = D + (size_t)A * 8 * ng;
		__m512i t[8] = { zero, zero, zero, zero, zero, zero, zero, zero };
		for (uint32_t B = 0; B < N; B++) {
			const uint64_t *p = strip + (size_t)B * 8;
			__m512i x[8], n = Z[B];
			if (B == A)
				continue;
#pragma GCC unroll 8
			for (int i = 0; i < 8; i++) {
				x[i] = _mm512_loadu_si512(p + i * ng);
				t[i] = _mm512_add_epi64(t[i], x[i]);
			}
			ZEROS2(n, x[0], x[1]), ZEROS2(n, x[2], x[3]);
			ZEROS2(n, x[4], x[5]), ZEROS2(n, x[6], x[7]);
			Z[B] = n;
			pv[q] = colsums8(x);
			C[B] = _mm512_add_epi64(C[B], pv[q]);
			if (++q == 8) {
				pair = _mm512_max_epu64(pair, rowsums8(pv));
				q = 0;
			}
		}
		strip8(strip, ng, A, t, &a);
	}
	if (q > 0) { /* the last batch, padded with zeros */
		for (; q < 8; q++)
			pv[q] = zero;
		pair = _mm512_max_epu64(pair, rowsums8(pv));
	}
	for (uint32_t B = 0; B < N; B++) {
		__m512i zb = _mm512_add_epi64(_mm512_cvtepu32_epi64(_mm512_castsi512_si256(Z[B])),
					      _mm512_cvtepu32_epi64(_mm512_extracti64x4_epi64(Z[B], 1)));
		__m512i k = _mm512_sub_epi64(_mm512_set1_epi64((long long)(N - 1) * 8), zb);
		rx = _mm512_max_epu64(rx, C[B]);
		kin = _mm512_max_epu64(kin, k);
		kinmin = _mm512_min_epu64(kinmin, k);
		nnz = _mm512_add_epi64(nnz, k);
		srv_in = max64(srv_in, hsum8(C[B]));
	}
	if (C != stack)
		free(C);
	memset(f, 0, sizeof *f);
	f->send_x = _mm512_reduce_max_epu64(a.sx);
	f->recv_x = _mm512_reduce_max_epu64(rx);
	f->intra = _mm512_reduce_max_epu64(a.intra);
	f->pxn_nic = _mm512_reduce_max_epu64(_mm512_max_epu64(a.po, rx));
	f->pxn_up = _mm512_reduce_max_epu64(a.up);
	f->srv = max64(a.srv, srv_in);
	f->srv_in = srv_in;
	f->intra_msg = _mm512_reduce_max_epu64(a.im);
	f->k_in = (uint32_t)_mm512_reduce_max_epu64(kin);
	f->k_in_min = N ? (uint32_t)_mm512_reduce_min_epu64(kinmin) : 0;
	f->total = hsum8(a.tot);
	f->nnz = hsum8(nnz);
	f->pair = N > 1 ? _mm512_reduce_max_epu64(pair) : 0;
	f->exact_pair = true;
	return 0;
}

/* hier_pass for G = 8: strip by strip as gather8_avx512, a block's row
 * sums (rowsums8: lane i, what GPU i sends server B) added into H_B
 * (hier's NIC loads of server B, one vector per server) and the largest
 * message. */
static AVX512 int hier_pass8_avx512(const uint64_t *D, uint32_t N, uint64_t *hi_max, uint64_t *big)
{
	const size_t ng = (size_t)N * 8;
	__m512i stack[STACK_GPUS / 8];
	__m512i *H = N <= sizeof stack / sizeof stack[0] ? stack : aligned_alloc(64, N * sizeof *H);
	__m512i hi = _mm512_setzero_si512(), m = hi;

	if (!H)
		return -1;
	for (uint32_t B = 0; B < N; B++)
		H[B] = _mm512_setzero_si512();
	for (uint32_t A = 0; A < N; A++) {
		const uint64_t *strip = D + (size_t)A * 8 * ng;
		for (uint32_t B = 0; B < N; B++) {
			const uint64_t *p = strip + (size_t)B * 8;
			__m512i x[8];
			if (B == A)
				continue;
#pragma GCC unroll 8
			for (int i = 0; i < 8; i++) {
				x[i] = _mm512_loadu_si512(p + i * ng);
				m = _mm512_max_epu64(m, x[i]);
			}
			H[B] = _mm512_add_epi64(H[B], rowsums8(x));
		}
	}
	for (uint32_t B = 0; B < N; B++)
		hi = _mm512_max_epu64(hi, H[B]);
	if (H != stack)
		free(H);
	*hi_max = _mm512_reduce_max_epu64(hi);
	*big = _mm512_reduce_max_epu64(m);
	return 0;
}

/* G = 8 with AVX2 (no AVX-512): each GPU's row at a time, a block row
 * two 256-bit vectors; the row's cross sum in registers (sends, rail,
 * PXN's loads), C_B's row, the zeros per column and the largest message
 * (unsigned: compared with the sign bit flipped) in vectors, the local
 * block and the per-GPU maxima as gather_g's (finish_g).  Work: 17 words
 * per GPU (on the stack up to 9 STACK_GPUS / 17 = 135 GPUs). */
#define AVX2 __attribute__((target("avx2")))

static AVX2 int gather8_avx2(const uint64_t *D, uint32_t N, struct feat *f)
{
	const size_t ng = (size_t)N * 8, words = ng * 17;
	const __m256i zero = _mm256_setzero_si256(), sign = _mm256_set1_epi64x(INT64_MIN);
	uint64_t stack[STACK_GPUS * GATHER_WORDS];
	uint64_t *C = words <= sizeof stack / sizeof stack[0] ? stack : malloc(words * sizeof *C);
	uint64_t *Z, big[4];
	__m256i mb = sign; /* the largest message, sign bit flipped */
	struct garrays g;

	if (!C)
		return -1;
	/* C_B's rows (8 words per GPU), then the zeros, the receives, hier's
	 * loads and the non-zero counts (summed at the end), then the rest */
	Z = C + 8 * ng;
	g.rx = Z + ng, g.hi = g.rx + ng, g.kin = g.hi + ng, g.ri = g.kin + ng;
	g.sx = g.ri + ng, g.si = g.sx + ng, g.rl = g.si + ng, g.po = g.rl + ng, g.acc = NULL;
	memset(C, 0, words * sizeof *C);
	memset(f, 0, sizeof *f);
	for (uint32_t s = 0; s < ng; s++) {
		const uint64_t *row = D + s * ng;
		uint32_t A = s / 8, i = s % 8;
		__m256i t0 = zero, t1 = zero;
		uint64_t t[8], loc = 0;
		for (uint32_t B = 0; B < N; B++) {
			const uint64_t *p = row + (size_t)B * 8;
			__m256i x0, x1, *c, *z;
			if (B == A)
				continue;
			x0 = _mm256_loadu_si256((const __m256i *)p);
			x1 = _mm256_loadu_si256((const __m256i *)(p + 4));
			c = (__m256i *)(C + ((size_t)B * 8 + i) * 8);
			z = (__m256i *)(Z + (size_t)B * 8);
			t0 = _mm256_add_epi64(t0, x0), t1 = _mm256_add_epi64(t1, x1);
			_mm256_storeu_si256(c, _mm256_add_epi64(_mm256_loadu_si256(c), x0));
			_mm256_storeu_si256(c + 1, _mm256_add_epi64(_mm256_loadu_si256(c + 1), x1));
			_mm256_storeu_si256(z, _mm256_sub_epi64(_mm256_loadu_si256(z), _mm256_cmpeq_epi64(x0, zero)));
			_mm256_storeu_si256(z + 1, _mm256_sub_epi64(_mm256_loadu_si256(z + 1), _mm256_cmpeq_epi64(x1, zero)));
			x0 = _mm256_xor_si256(x0, sign), x1 = _mm256_xor_si256(x1, sign);
			mb = _mm256_blendv_epi8(mb, x0, _mm256_cmpgt_epi64(x0, mb));
			mb = _mm256_blendv_epi8(mb, x1, _mm256_cmpgt_epi64(x1, mb));
		}
		_mm256_storeu_si256((__m256i *)t, t0);
		_mm256_storeu_si256((__m256i *)(t + 4), t1);
		for (uint32_t j = 0; j < 8; j++) {
			uint64_t v = row[A * 8 + j];
			g.sx[s] += t[j];
			g.po[A * 8 + j] += t[j]; /* PXN: rail j of server A carries column j */
			if (j == i)
				continue;
			loc += v, g.ri[A * 8 + j] += v;
			f->intra_msg = max64(f->intra_msg, v);
		}
		g.rl[s] = t[i], g.si[s] = loc;
		f->total += g.sx[s] + loc;
	}
	for (size_t c = 0; c < ng; c++) { /* c = B * 8 + i: C_B's row i */
		for (uint32_t j = 0; j < 8; j++) {
			g.hi[c] += C[c * 8 + j];
			g.rx[c / 8 * 8 + j] += C[c * 8 + j];
		}
		g.kin[c] = (uint64_t)(N - 1) * 8 - Z[c];
	}
	finish_g(N, 8, &g, f);
	_mm256_storeu_si256((__m256i *)big, _mm256_xor_si256(mb, sign));
	f->largest = max64(max64(big[0], big[1]), max64(big[2], big[3]));
	if (C != stack)
		free(C);
	return 0;
}

/* pair_pass for G = 8: a strip's block to B is 8 vectors, added into one;
 * eight servers' sums at a time summed across by rowsums8. */
static AVX512 uint64_t pair_pass8_avx512(const uint64_t *D, uint32_t N)
{
	const size_t ng = (size_t)N * 8;
	__m512i best = _mm512_setzero_si512(), v[8];
	uint32_t k = 0;

	for (uint32_t A = 0; A < N; A++) {
		const uint64_t *s = D + (size_t)A * 8 * ng;
		for (uint32_t B = 0; B < N; B++) {
			const uint64_t *p = s + (size_t)B * 8;
			__m512i x;
			if (B == A)
				continue;
			x = _mm512_add_epi64(_mm512_add_epi64(_mm512_add_epi64(_mm512_loadu_si512(p), _mm512_loadu_si512(p + ng)),
							      _mm512_add_epi64(_mm512_loadu_si512(p + 2 * ng), _mm512_loadu_si512(p + 3 * ng))),
					     _mm512_add_epi64(_mm512_add_epi64(_mm512_loadu_si512(p + 4 * ng), _mm512_loadu_si512(p + 5 * ng)),
							      _mm512_add_epi64(_mm512_loadu_si512(p + 6 * ng), _mm512_loadu_si512(p + 7 * ng))));
			v[k++] = x;
			if (k == 8) {
				best = _mm512_max_epu64(best, rowsums8(v));
				k = 0;
			}
		}
	}
	for (; k > 0 && k < 8; k++) /* pad the last batch with zeros */
		v[k] = _mm512_setzero_si512();
	if (k == 8)
		best = _mm512_max_epu64(best, rowsums8(v));
	return _mm512_reduce_max_epu64(best);
}

static int gather8(const struct fast_topo *t, const uint64_t *D, struct feat *f)
{
	if (__builtin_cpu_supports("avx512f"))
		return gather8_avx512(D, t->servers, f);
	return __builtin_cpu_supports("avx2") ? gather8_avx2(D, t->servers, f) : gather_g(t, D, f, 8);
}
#else
static int gather8(const struct fast_topo *t, const uint64_t *D, struct feat *f)
{
	return gather_g(t, D, f, 8);
}
#endif

/* G = 8, every preset's, by gather8 (the decision's cost: docs/algorithms.md,
 * "Choosing the schedule"); any other G by gather_g as it comes. */
int auto_gather(const struct fast_topo *t, const uint64_t *D, struct feat *f)
{
	if (!fast_topo_nics_ideal(t))
		return auto_gather_all(t, D, f);
	return t->gpus == 8 ? gather8(t, D, f) : gather_g(t, D, f, t->gpus);
}

/* The largest server pair: max over A != B of S[A][B], the bytes server
 * A's GPUs send server B's (packed FAST's tiles, packed_predict()).  A
 * pass of its own, made only where FAST's prediction from the floor
 * srv / (N - 1) (the largest server row or column has N - 1 entries off
 * the diagonal) could be chosen or come near the best (decide()). */
static ALWAYS_INLINE uint64_t pair_pass_g(const uint64_t *D, uint32_t N, const uint32_t G)
{
	uint32_t ng = N * G;
	uint64_t best = 0;

	for (uint32_t A = 0; A < N; A++)
		for (uint32_t B = 0; B < N; B++) {
			uint64_t s = 0;
			if (B == A)
				continue;
			for (uint32_t i = 0; i < G; i++) {
				const uint64_t *blk = D + ((size_t)A * G + i) * ng + (size_t)B * G;
				for (uint32_t j = 0; j < G; j++)
					s += blk[j];
			}
			best = max64(best, s);
		}
	return best;
}

uint64_t auto_pair_pass(const struct fast_topo *t, const uint64_t *D)
{
	if (!fast_topo_nics_ideal(t)) { /* at the slowest server's ports */
		double e = (double)pair_pass_g(D, t->servers, t->gpus) * auto_ports_pair_factor(t);
		return e >= 18446744073709549568.0 ? UINT64_MAX : (uint64_t)e;
	}
#if defined(__x86_64__) && defined(__GNUC__)
	if (t->gpus == 8 && __builtin_cpu_supports("avx512f"))
		return pair_pass8_avx512(D, t->servers);
#endif
	return t->gpus == 8 ? pair_pass_g(D, t->servers, 8) : pair_pass_g(D, t->servers, t->gpus);
}

/* Hier's loads and the largest cross message where gather left floors
 * (exact_hier false: gather8_avx512): a pass of its own, made only where
 * hier's prediction from the floors could be chosen or come near the best
 * (decide()); -1 on allocation failure. */
int auto_hier_pass(const struct fast_topo *t, const uint64_t *D, struct feat *f)
{
	struct feat g;

	if (f->exact_hier)
		return 0;
#if defined(__x86_64__) && defined(__GNUC__)
	if (t->gpus == 8 && __builtin_cpu_supports("avx512f")) {
		uint64_t hi, big;
		if (hier_pass8_avx512(D, t->servers, &hi, &big) < 0)
			return -1;
		f->hier_nic = max64(f->send_x, hi);
		f->hier_link = hi / 7; /* (max hi) / (G - 1): the division is monotone */
		f->largest = big;
		f->exact_hier = true;
		return 0;
	}
#endif
	/* no pass of its own elsewhere: gather_g's (every feature) */
	if (gather_g(t, D, &g, t->gpus) < 0)
		return -1;
	f->hier_nic = g.hier_nic, f->hier_link = g.hier_link, f->largest = g.largest;
	f->exact_hier = true;
	return 0;
}

/* Floors under hier's features from the others' (exact_hier false): a NIC
 * of hier's receives at least the GPU's own sends and its server's
 * share srv_in / G of what the server receives; the largest message is
 * at least a GPU's cross sends over its n - G destinations. */
void auto_hier_floors(const struct fast_topo *t, struct feat *f)
{
	uint32_t G = t->gpus, ng = t->servers * G;
	uint64_t share = f->srv_in / G;

	f->hier_nic = max64(f->send_x, share);
	f->hier_link = G > 1 ? share / (G - 1) : 0;
	f->largest = ng > G ? f->send_x / (ng - G) : 0;
}

/* gather_g's features; on a fabric that is not ideal, the scale-out ones
 * on its ports (algo_auto_ports.c). */
int auto_gather_all(const struct fast_topo *t, const uint64_t *D, struct feat *f)
{
	if (gather_g(t, D, f, t->gpus) < 0)
		return -1;
	return fast_topo_nics_ideal(t) ? 0 : auto_ports_adjust(t, D, f);
}
