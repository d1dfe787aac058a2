/*
 * auto.c - `--algo auto` (auto.h): a closed-form predictor of each
 * schedule's simulated time, a synthesis-cost model, and the choice.
 *
 * The predictor reads the matrix once (O(n^2), n = N * G; gather()) and
 * gathers per GPU the bytes it sends and receives across servers and
 * within its server, PXN's rail loads on each NIC, the server matrix's
 * largest row or column, and either hier's NIC loads and the largest
 * cross message (gather_g, gather8_avx2) or the largest server pair
 * (packed FAST's tiles; gather8_avx512).  Spreadout's per-round maxima,
 * and the pair or hier's loads where the pass taken did not find them,
 * come from passes of their own (second_pass(), pair_pass(),
 * hier_pass()), made only when floors under those candidates'
 * predictions do not already rule them out (decide()).  Then, with
 * a = alpha + per-step overhead of a tier and B its effective rate
 * (bw x efficiency), per algorithm (the simulator's model, include/fast/sim.h):
 *
 *   fanout    lat = max(a_out, a_up)
 *             vol = max(send_x / B_out, recv_x / (B_out f(k_in)), intra / B_up)
 *   nccl      lat = ceil((n-1)/P) a_out; vol as fanout with f(min(P, k_in))
 *   pxn       lat = ceil((n-1)/P) (a_out + a_up); vol with the NIC egress
 *             loads of rail-aligned relaying and the relayed bytes on scale-up
 *   spreadout sum over the n-1 synchronised rounds of
 *             max(a_out + largest cross message / B_out, a_up + largest local / B_up)
 *   hier      lat = a_out + a_up; vol = rail-aligned NIC loads /
 *             (B_out f((N-1) G)) + one chunk's forwarding, or the local
 *             traffic / B_up (on a mesh: per link, and the forwarding
 *             spread over the G - 1 links)
 *   fast      lat = 2 a_up + (N-1) a_out; vol = largest server row or
 *             column / (G B_out) (the Birkhoff stages carry it at line rate)
 *             + the last stage's redistribution; or its packed stages
 *             (packed_predict()) where they predict less, as FAST
 *             compiles them there
 * where f(k) is the incast factor of the topology's congestion model and
 * k_in the most cross-server senders of one GPU.  The prediction is
 *     T_sim(a) = K_LAT[a] lat + K_VOL[a] vol,
 * with the factors below fitted against `fast sim` (see FIT).
 *
 * Near-ties (TIE_REL, TIE_ABS_S) go to the first candidate in the table.
 *
 * Synthesis-cost model: S(a) = S32[a] (n / 32)^P[a] seconds, a power law
 * in the GPU count through the medians at 4 x 8 and 16 x 8, times
 * 0.1 + 0.9 x (cross-server messages / n (n - G)) for a baseline, and
 * for FAST where it packs its stages (packed_synth()).
 *
 * Cost of the decision: linear in the n^2 entries read.  With G = 8 on a
 * CPU with AVX-512 (gather8_avx512: one strip of 8 rows at a time, the
 * pair in the same pass, hier's loads left to hier_pass), `fast bench
 * auto` (thread-CPU medians, 2026-12-01 19:15-19:17 UTC, load 0.4 on 2
 * cores, three rounds alternating with the previous binary) measured
 * 0.31-0.62 us at 4 x 8 and 1.88-2.69 us at 16 x 8, against 0.49-0.87 and
 * 4.0-5.3 us for the previous pass (two strips at a time, hier's loads in
 * it, the pair a pass of its own) in the same rounds; the pass alone 0.17
 * and 1.7 us, hier_pass 0.09 and 1.6 us, pair_pass 0.05 and 1.1 us.  GCC
 * unrolls the 8-row loops only when told to (#pragma GCC unroll): without
 * it the same pass took 5.2 us at
 * 16 x 8.  With AVX2 only (gather8_avx2) 0.8 and 5.4 us; gather_g, which
 * also finds the largest message, runs 9-15% more instructions than the
 * first scalar pass (callgrind).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/compile/auto.h"
#include "lib/compile/tokens_internal.h"

/* Per-algorithm constants, in table order (fast, fanout, nccl, pxn,
 * spreadout, hier).
 *
 * FIT (T_sim): `fast compare --preset P --servers 4 --gpus 8 --traffic T
 * --algos fast,fanout,nccl,pxn,spreadout,hier,auto --json` on P in {h200,
 * mi300x-100g}, uniform, Zipf 0.8 and the DeepSeek trace at 4 KiB
 * and 16 KiB (K_LAT = 1 / median of predicted / simulated with K = 1) and
 * 64 MiB..4 GiB per GPU (K_VOL likewise), from the rows of
 * `bash results/auto_study.sh` (4 x 8; its predicted_sim_s column) with
 * every K = 1; results/auto_check.py prints the errors left (docs/algorithms.md).
 *
 * FIT (S): the medians of thread-CPU time over 15 compiles after one
 * warm-up that `fast compare --preset h200 --servers N --gpus 8 --traffic
 * T --algos fast,fanout,nccl,pxn,spreadout,hier --json` reports as
 * synthesis_s, three runs each, on the dense cases T = `fast gen
 * --pattern P --mean-bytes M` with uniform 4K and 64K and Zipf 16M (and
 * Zipf 4G at N = 4) for N = 4 and N = 16: S32 = the median of the 4 x 8
 * samples, P = log4 of the 16 x 8 / 4 x 8 medians' ratio; this machine,
 * 2026-12-01 16:50-17:00 UTC, load 0.7-1.1, in the warm process of
 * cmd/main.c (keep_freed_memory: before it, every plan of a few MB paid
 * its page faults again on each compile, 2-3x these times at 16 x 8). */
enum kind { K_FAST, K_FANOUT, K_NCCL, K_PXN, K_SPREADOUT, K_HIER };

struct model {
	const char *algo; /* the table's name: models[k] is fast_algos[k] (test_auto) */
	enum kind kind;
	double k_lat, k_vol;
	double s32, p; /* synthesis: S32 seconds at 32 GPUs, exponent */
};

static const struct model models[] = {
	/* S32 / the 16 x 8 medians: fast (its staged stages: Zipf 16M) 11.0 /
	 * 140.6 us; fanout 14.7 / 300 us, nccl 48.9 / 851 us, pxn 67.5 /
	 * 1225 us, spreadout 19.4 / 300 us, hier 29.8 / 532 us (pxn measured
	 * 105 us at Zipf 4G 4 x 8, its chunks: immaterial against the 80 ms
	 * there).  fast's K_LAT refit for its packed stages (which it compiles
	 * at these sizes since): 0.955 / 0.962, the median predicted /
	 * simulated of the 12 FIT rows at 4 KiB and 16 KiB with K_LAT = 0.955
	 * (0.955..1.003; `SIZES="4K 16K" bash results/auto_study.sh
	 * build/bin/fast OUT 4`, 2026-12-01) */
	{ "fast", K_FAST, 0.993, 1.0, 11.0e-6, 1.84 },
	{ "fanout", K_FANOUT, 1.0, 1.0, 14.7e-6, 2.18 },
	{ "nccl", K_NCCL, 0.83, 1.0, 48.9e-6, 2.06 },
	{ "pxn", K_PXN, 0.57, 1.0, 67.5e-6, 2.09 },
	{ "spreadout", K_SPREADOUT, 1.0, 1.0, 19.4e-6, 1.98 },
	{ "hier", K_HIER, 0.785, 1.08, 29.8e-6, 2.08 },
};
#define NMODELS (sizeof models / sizeof models[0])

static const struct model *model_of(const char *algo)
{
	for (size_t k = 0; k < NMODELS; k++)
		if (strcmp(models[k].algo, algo) == 0)
			return &models[k];
	return NULL;
}

/* S of model m with ln(n / 32) = log_n32 (computed once per decision) */
static double synth_of(const struct model *m, double n, double G, double log_n32, uint64_t nnz)
{
	double full = n * (n - G), S = m->s32 * exp(m->p * log_n32);

	/* a baseline writes one transfer per message: it scales with the
	 * cross-server messages (the fit was on dense matrices); 0.1 of it is
	 * per-GPU setup.  FAST's cost follows its decomposition, not nnz. */
	if (m->kind != K_FAST && full > 0 && (double)nnz < full)
		S *= 0.1 + 0.9 * (double)nnz / full;
	return S;
}

/* FAST's synthesis when it packs its stages: the handovers it writes --
 * a tile moves to a share of the rails, so about every cross message is
 * handed over once, a large one split between rails -- grow with the
 * messages, the rest (tiles, steps, per-GPU setup) not: S x (0.65 + 0.5 x
 * cross messages / n (n - G)).  PACKED_S32 and PACKED_P from the FIT (S)
 * runs above, dense uniform 4K and 64K: 12.0 us at 4 x 8 and 165.5 us at
 * 16 x 8; the share from Zipf 0.8 at 16 x 8 (`fast compare --preset h200
 * --servers 16 --gpus 8 --algos fast,fanout,auto`, three runs each, load
 * about 1): 4K (6.3% of the messages non-zero) 111-125 us, 16K (25%)
 * 105-163, 64K (49%) 191-206, 256K (68%) 204-251, 1M (82%) 150-260 --
 * skewed traffic splits more messages than uniform. */
#define PACKED_S32 12.0e-6
#define PACKED_P 1.89

static double packed_synth(double n, double G, double log_n32, uint64_t nnz)
{
	double full = n * (n - G), S = PACKED_S32 * exp(PACKED_P * log_n32);

	/* continuous at full, where dense uniform measured 1 / 1.15 of it */
	return full > 0 ? S * (0.65 + 0.5 * (double)nnz / full) : S;
}

double fast_auto_synth_model(const char *algo, uint32_t N, uint32_t G, uint64_t nnz)
{
	const struct model *m = model_of(algo);
	double n = (double)N * G;

	return m ? synth_of(m, n, G, log(n / 32.0), nnz) : 0;
}

/* The simulator's incast factor (include/fast/sim.h, struct fast_congestion). */
static double incast(const struct fast_congestion *c, double k)
{
	double f;

	if (k <= c->incast_threshold || c->incast_slope <= 0.0)
		return 1.0;
	f = 1.0 - c->incast_slope * (k - c->incast_threshold);
	return f < c->incast_floor ? c->incast_floor : f;
}

/* What one pass over the matrix gathers. */
struct feat {
	uint64_t send_x, recv_x, intra;    /* per-GPU maxima */
	uint64_t pxn_nic, pxn_up;          /* PXN: NIC egress, scale-up load */
	uint64_t hier_nic, srv;            /* hier NIC ingress; server row/col */
	uint64_t hier_link, intra_msg;     /* mesh: hier's forwarding per link; largest local message */
	uint32_t k_in;                     /* most cross senders of one GPU */
	uint64_t largest, total;       /* most bytes in one cross-server message (hier's piece); 0 for an empty matrix */
	uint64_t pair;                 /* most bytes one server sends one other (packed FAST's tiles): pair_pass(), else a floor */
	uint64_t nnz;                  /* non-zero cross-server messages */
	uint64_t srv_in;               /* the largest server column (a floor under hier's loads) */
	/* which of the lazy features the pass made exact: pair (else a floor,
	 * pair_pass()), hier_nic, hier_link and largest (else floors,
	 * hier_pass()) */
	bool exact_pair, exact_hier;
};

static uint64_t max64(uint64_t a, uint64_t b) { return a > b ? a : b; }
/* fmax and fmin without their NaN rules (no NaN here): inline compares */
static double dmax(double a, double b) { return a > b ? a : b; }
static double dmin(double a, double b) { return a < b ? a : b; }

/* Up to this many GPUs the work arrays live on the stack (20 KiB at 256
 * GPUs): the decision at 4 x 8 must cost under a microsecond, and malloc
 * is a good part of that. */
#define STACK_GPUS 256
#define GATHER_WORDS 9 /* per-GPU arrays of gather */

/* gather_g(), the scalar pass for any G: returns -1 on allocation
 * failure.  Per source server A, its G rows, four at a time: per row and
 * destination block, the block's sum in a register (sends, hier's NIC
 * loads, the rail), the largest message; per column, the strip's sum in
 * acc, folded into the receive sums and PXN's NIC loads once per strip,
 * and the non-zero count into the senders -- two stores per four
 * messages.  Spreadout's round maxima would be a compare and a store more
 * per message: second_pass() makes them when they decide (decide()). */
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
			f->nnz += g->kin[x];
		}
		f->srv = max64(f->srv, max64(srow, scol));
		f->srv_in = max64(f->srv_in, scol);
	}
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
	__m512i *Z, rx = zero, kin = zero, nnz = zero, pair = zero, pv[8];
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
static int gather(const struct fast_topo *t, const uint64_t *D, struct feat *f)
{
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

static uint64_t pair_pass(const struct fast_topo *t, const uint64_t *D)
{
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
static int hier_pass(const struct fast_topo *t, const uint64_t *D, struct feat *f)
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
static void hier_floors(const struct fast_topo *t, struct feat *f)
{
	uint32_t G = t->gpus, ng = t->servers * G;
	uint64_t share = f->srv_in / G;

	f->hier_nic = max64(f->send_x, share);
	f->hier_link = G > 1 ? share / (G - 1) : 0;
	f->largest = ng > G ? f->send_x / (ng - G) : 0;
}

/* m[d] = max(m[d], row[d]) for d in [lo, hi) (m is offset by the caller
 * so that m[d] is round d - src's slot). */
static void rounds(const uint64_t *row, uint32_t lo, uint32_t hi, uint64_t *m)
{
	for (uint32_t d = lo; d < hi; d++)
		m[d] = max64(m[d], row[d]);
}

/* The second pass: spreadout's predicted time before its factor, over
 * the n - 1 synchronised rounds d (GPU s sends to s + d), the sum of
 *     max(a_out + largest cross message / B_out, a_up + largest local / B_up).
 * Returns -1 on allocation failure. */
static int second_pass(const struct fast_topo *t, const uint64_t *D, double *spread_s)
{
	uint32_t N = t->servers, G = t->gpus, ng = N * G;
	uint64_t stack[STACK_GPUS * 2];
	uint64_t *mo = (size_t)ng * 2 <= sizeof stack / sizeof stack[0] ? stack : malloc((size_t)ng * 2 * sizeof *mo);
	uint64_t *mu;
	double Bu = fast_tier_Bps(&t->up), Bo = fast_tier_Bps(&t->out), sum = 0;
	double au = fast_tier_step_s(&t->up), ao = fast_tier_step_s(&t->out);

	if (!mo)
		return -1;
	mu = mo + ng;
	memset(mo, 0, (size_t)ng * 2 * sizeof *mo);
	for (uint32_t s = 0; s < ng; s++) {
		const uint64_t *row = D + (size_t)s * ng;
		uint32_t A = s / G;
		/* round d - s: contiguous within each range */
		rounds(row, (A + 1) * G, ng, mo - s);
		rounds(row, 0, A * G, mo + ng - s);
		rounds(row, s + 1, (A + 1) * G, mu - s);
		rounds(row, A * G, s, mu + ng - s);
	}
	for (uint32_t d = 1; d < ng; d++) {
		double o = mo[d] ? ao + (double)mo[d] / Bo : 0, u = mu[d] ? au + (double)mu[d] / Bu : 0;
		sum += o > u ? o : u;
	}
	if (mo != stack)
		free(mo);
	*spread_s = sum;
	return 0;
}

/* A floor under second_pass()'s spread_s from gather's features alone: the rounds that
 * carry cross traffic number at least k_in (a GPU's senders sit in
 * distinct rounds) and their largest messages add up to at least any
 * GPU's cross sends or receives; the local ones likewise. */
static double spread_floor(const struct fast_topo *t, const struct feat *f)
{
	double o = (double)f->k_in * fast_tier_step_s(&t->out) +
		   (double)(f->send_x > f->recv_x ? f->send_x : f->recv_x) / fast_tier_Bps(&t->out);
	double u = (double)f->intra / fast_tier_Bps(&t->up);

	return o > u ? o : u;
}

/* FAST's packed stages (compile_fast.c): the N - 1 shifts on
 * mod = min(N - 1, G) rail classes of at least G / mod rails, in
 * ceil((N - 1) / mod) waves; a stage's budget the largest server pair
 * over its rails.  lat = 2 a_up + waves a_out (balancing, the waves, the
 * redistribution); vol = the waves' budgets / B_out, the first
 * balancing step (what a GPU's cross sends to wave 0's servers leave its
 * rail: a share 1 - rails / G), the time the second (the other waves')
 * is not hidden behind wave 0, and the last redistribution, as
 * split_tail's rho. */
static double packed_predict(const struct fast_topo *t, const struct feat *f,
			     const struct model *m, double up)
{
	uint32_t N = t->servers, G = t->gpus, M = N > 1 ? N - 1 : 1, mod = M < G ? M : G;
	double Bu = fast_tier_Bps(&t->up), Bo = fast_tier_Bps(&t->out);
	double au = fast_tier_step_s(&t->up), ao = fast_tier_step_s(&t->out);
	double rails = (double)(G / mod), waves = (double)((M + mod - 1) / mod);
	double budget = (double)f->pair / rails, off = 1 - rails / G, w0 = (double)mod / M;
	double bal0 = (double)f->send_x * w0 * off / Bu, bal1 = (double)f->send_x * (1 - w0) * off / Bu;
	double rho = (t->up_kind == FAST_UP_MESH ? 1.0 : (double)(G - 1)) / G / Bu;
	double stage = budget / Bo, lat = 2 * au + waves * ao;
	double vol = waves * stage + bal0 + dmax(0, bal1 - (ao + stage)) + budget * rho;

	return m->k_lat * lat + m->k_vol * dmax(vol, up);
}

/* Predicted T_sim of model m (lat, vol as above), spreadout's from
 * spread_s, hier's with the largest cross message `largest` (a floor under
 * either gives a floor under the prediction: it grows with both). */
static double predict(const struct fast_topo *t, const struct feat *f, const struct model *m,
		      const struct fast_algo *a, const struct fast_algo_opts *o, double spread_s,
		      uint64_t largest, bool *packs)
{
	uint32_t N = t->servers, G = t->gpus, ng = N * G;
	double Bu = fast_tier_Bps(&t->up), Bo = fast_tier_Bps(&t->out);
	double au = fast_tier_step_s(&t->up), ao = fast_tier_step_s(&t->out);
	double P = o->peers ? o->peers : 8, R = ceil((double)(ng > 1 ? ng - 1 : 1) / P);
	bool mesh = t->up_kind == FAST_UP_MESH;
	/* local traffic: a switch port carries a GPU's sum, a mesh link one message */
	double lat = 0, vol = 0, up = (double)(mesh ? f->intra_msg : f->intra) / Bu, kin = f->k_in;
	uint64_t chunk = o->chunk_bytes ? o->chunk_bytes : a->default_chunk_bytes;

	if (!f->total)
		return 0;
	switch (m->kind) {
	case K_SPREADOUT:
		return m->k_vol * spread_s;
	case K_FANOUT:
		lat = ao > au ? ao : au;
		vol = dmax(dmax((double)f->send_x / Bo, (double)f->recv_x / (Bo * incast(&t->congestion, kin))), up);
		break;
	case K_NCCL:
		lat = R * ao;
		vol = dmax(dmax((double)f->send_x / Bo,
				(double)f->recv_x / (Bo * incast(&t->congestion, dmin(P, kin)))), up);
		break;
	case K_PXN:
		lat = R * (ao + au);
		vol = dmax((double)f->pxn_nic / (Bo * incast(&t->congestion, dmin(P, kin))),
			   (double)f->pxn_up / Bu);
		break;
	case K_HIER: {
		double piece = (double)(chunk < largest ? chunk : largest);
		double fwd = piece * (mesh ? 1 : G) / Bu;
		lat = ao + au;
		/* one transfer per message: (N - 1) G flows into a NIC */
		vol = dmax((double)f->hier_nic / (Bo * incast(&t->congestion, (N > 1 ? N - 1 : 1) * G)) + fwd, up);
		if (mesh) /* forwarding B_i -> B_j on one link each */
			vol = dmax(vol, (double)f->hier_link / Bu);
		break;
	}
	case K_FAST: {
		double rail = (double)f->srv / ((double)G * Bo), packed;
		lat = 2 * au + (N > 1 ? N - 1 : 1) * ao;
		vol = dmax(rail + rail / (N > 1 ? N - 1 : 1) * Bo / Bu, up);
		/* FAST compiles the packed stages where they model faster
		 * (compile_fast.c): the least of the two, as it chooses */
		packed = packed_predict(t, f, m, up);
		if (o->stages == FAST_STAGES_PACKED ||
		    (o->stages == FAST_STAGES_AUTO && N > 2 && packed < m->k_lat * lat + m->k_vol * vol)) {
			if (packs)
				*packs = true;
			return packed;
		}
		break;
	}
	}
	return m->k_lat * lat + m->k_vol * vol;
}

/* The predictor's error band (results/auto_check.py: most candidates
 * within 3% at the sizes where they compete). */
#define TIE_REL 0.03
#define TIE_ABS_S 0.5e-6

/* FAST's prediction and synthesis (packed or staged, as it compiles
 * them: predict()) into sim_s, synth_s; returns their sum. */
static double fast_T(const struct fast_topo *t, const struct feat *f, const struct fast_algo_opts *o,
		     double n, double ln, double *sim_s, double *synth_s)
{
	bool packs = false;

	*sim_s = predict(t, f, &models[K_FAST], &fast_algos[K_FAST], o, 0, f->largest, &packs);
	/* FAST compiles packed stages or staged ones: that one's synthesis */
	*synth_s = packs ? packed_synth(n, t->gpus, ln, f->nnz)
			 : synth_of(&models[K_FAST], n, t->gpus, ln, f->nnz);
	return *sim_s + *synth_s;
}

/* A floor under fast_T() while f->pair is only a floor (packed_predict()
 * grows with it): the lesser of the staged T and the packed T at that
 * pair, each with its own synthesis, whichever FAST then compiles. */
static double fast_T_floor(const struct fast_topo *t, const struct feat *f, const struct fast_algo_opts *o,
			   double n, double ln, double *sim_s, double *synth_s)
{
	struct fast_algo_opts staged = *o, packed = *o;
	double s0, y0, s1, y1, T0, T1;

	staged.stages = FAST_STAGES_EXACT; /* the staged prediction of either mode */
	packed.stages = FAST_STAGES_PACKED;
	T1 = fast_T(t, f, &packed, n, ln, &s1, &y1);
	if (o->stages == FAST_STAGES_PACKED) {
		*sim_s = s1, *synth_s = y1;
		return T1;
	}
	T0 = fast_T(t, f, &staged, n, ln, &s0, &y0);
	*sim_s = T0 <= T1 ? s0 : s1, *synth_s = T0 <= T1 ? y0 : y1;
	return T0 <= T1 ? T0 : T1;
}

/* fast_auto_choose (every = false) and fast_auto_predict (every = true).
 * First every candidate from gather's features, with floors where gather
 * left a feature to a pass of its own: spreadout's rounds (second_pass(),
 * always), FAST's largest server pair where it may pack its stages
 * (pair_pass(), where gather did not find it: the largest server row or
 * column has N - 1 entries off the diagonal, so pair >= srv / (N - 1)),
 * hier's loads and largest message (hier_pass(), likewise: hier_floors()).
 * The pass that makes a floor exact is made when the floor (less a
 * rounding margin) comes within the tie band of the best exact
 * prediction -- else that candidate can be neither chosen nor the best,
 * and the choice is the full prediction's -- cheapest pass first, each
 * exact prediction lowering the best that the next floor must come near.
 * The floors matter at 16 x 8 and up, where a pass costs about a
 * microsecond (docs/algorithms.md, "Choosing the schedule"). */
static void decide(const struct fast_topo *topo, const uint64_t *D, const struct fast_algo_opts *opts,
		   bool every, struct fast_auto_choice *out)
{
	struct fast_algo_opts def;
	struct feat f;
	bool have = gather(topo, D, &f) == 0, lazy[FAST_AUTO_MAX];
	double n = (double)topo->servers * topo->gpus, ln = log(n / 32.0);
	double best = INFINITY, T[FAST_AUTO_MAX], floor_s;
	bool fast_lazy;

	if (!opts) {
		fast_algo_opts_default(&def);
		opts = &def;
	}
	memset(out, 0, sizeof *out);
	floor_s = have ? spread_floor(topo, &f) : 0;
	/* FAST's packed stages read the largest server pair: a floor until
	 * pair_pass() (never read where FAST cannot pack) */
	fast_lazy = have && f.total && !f.exact_pair && topo->servers > 2 && opts->stages != FAST_STAGES_EXACT;
	if (have && !f.exact_pair)
		f.pair = topo->servers > 1 ? f.srv / (topo->servers - 1) : 0;
	if (have && !f.exact_hier)
		hier_floors(topo, &f);
	/* models[k] is the table's entry k (test_auto checks it) */
	for (uint32_t k = 0; k < NMODELS && k < FAST_AUTO_MAX; k++) {
		const struct model *m = &models[k];
		const struct fast_algo *a = &fast_algos[k];
		out->algo[k] = a->name;
		out->dedup[k] = FAST_DEDUP_GPU; /* the byte matrix */
		out->n++;
		lazy[k] = false;
		T[k] = 0;
		if (!have) /* out of memory: FAST, the default, predicted 0 so that it is chosen */
			continue;
		if (m->kind == K_FAST) {
			lazy[k] = fast_lazy;
			T[k] = (lazy[k] ? fast_T_floor : fast_T)(topo, &f, opts, n, ln, &out->sim_s[k],
								 &out->synth_s[k]);
		} else {
			lazy[k] = f.total && (m->kind == K_SPREADOUT || (m->kind == K_HIER && !f.exact_hier));
			out->synth_s[k] = synth_of(m, n, topo->gpus, ln, f.nnz);
			out->sim_s[k] = predict(topo, &f, m, a, opts, floor_s, f.largest, NULL);
			T[k] = out->sim_s[k] + out->synth_s[k];
		}
		if (!lazy[k])
			best = dmin(best, T[k]);
	}
	/* the floors, cheapest pass first (at 16 x 8: FAST's pair 1.1 us,
	 * hier's about as much, spreadout's rounds more) */
	for (int pass = 0; pass < 3; pass++) {
		static const enum kind order[] = { K_FAST, K_HIER, K_SPREADOUT };
		double spread_s;
		for (uint32_t k = 0; k < out->n; k++) {
			if (!lazy[k] || models[k].kind != order[pass] ||
			    !(every || T[k] * (1 - 1e-9) <= best * (1 + TIE_REL) + TIE_ABS_S))
				continue;
			if (order[pass] == K_FAST) {
				f.pair = pair_pass(topo, D);
				T[k] = fast_T(topo, &f, opts, n, ln, &out->sim_s[k], &out->synth_s[k]);
			} else {
				if (order[pass] == K_HIER ? hier_pass(topo, D, &f) < 0
							  : second_pass(topo, D, &spread_s) < 0)
					continue; /* out of memory: the floor stays */
				out->sim_s[k] = predict(topo, &f, &models[k], &fast_algos[k], opts,
							order[pass] == K_HIER ? floor_s : spread_s, f.largest, NULL);
				T[k] = out->sim_s[k] + out->synth_s[k];
			}
			lazy[k] = false;
			best = dmin(best, T[k]);
		}
	}
	for (uint32_t k = 0; k < out->n; k++)
		best = dmin(best, T[k]);
	/* near a tie the predictor's error decides, not the schedules: take the
	 * first in the table (fast, the default, first) of those within
	 * TIE_REL + TIE_ABS_S of the least prediction */
	for (uint32_t k = 0; k < out->n; k++)
		if (T[k] <= best * (1 + TIE_REL) + TIE_ABS_S) {
			out->best = k;
			break;
		}
}

void fast_auto_choose(const struct fast_topo *topo, const uint64_t *D,
		      const struct fast_algo_opts *opts, struct fast_auto_choice *out)
{
	decide(topo, D, opts, false, out);
}

/* --- token traffic -----------------------------------------------------
 *
 * A token plan (dedup=server) of fast or hier is, across servers, a byte
 * schedule of the deduplicated streams (tokens_internal.h: the virtual
 * matrix D' of tok_dedup_matrix, a token once per remote server, on the
 * sender's rail), so its T_sim is predicted as that algorithm's on D'
 * (fast staged: token plans never pack), plus the scale-up work a byte
 * plan of D' lacks: what the GPU that received a stream replicates to the
 * other destinations on its server (dispatch), or gathers from them and
 * sums (combine), rep below: one scale-up step's latency (its bytes
 * hide behind the crossing, token_predict()).
 *
 * On token traffic the choice is by T_sim alone: the token compilers
 * build a piece per group and server, 0.3-40 ms at 2 x 8 and 4 x 8 on the
 * MoE traces (`fast compare`, 2026 measurements in the commit message),
 * against 5-50 us for a byte plan of the same traffic, so T_sim + S would
 * rule out every token plan, the default included, while those plans
 * are what production dispatchers run (DeepEP computes its layout on the
 * GPU).  This closed form is what a caller without an evaluator gets; it
 * errs by 0.6-1.4x on token plans (379 of test_auto's 500 token cases
 * within the tie band of the best, 30 over the default's): the commands
 * and the executor pass the simulator instead (evaluate_matrix below),
 * whose choice is within the band on all 500. */

/* Per GPU x, the bytes x replicates over scale-up after receiving the
 * streams of its rail (dispatch: to each other destination of a group on
 * x's server; combine: the contributions it gathers): the largest into
 * *rep.  -1 on allocation failure. */
static int token_rep(const struct fast_topo *t, const struct fast_matrix *m, uint64_t *rep)
{
	uint32_t G = t->gpus, ng = t->servers * G;
	uint64_t *r = fast_calloc(ng, sizeof *r), best = 0;

	if (!r)
		return -1;
	for (uint32_t g = 0; g < m->ngroups; g++) {
		const struct fast_group *gr = &m->groups[g];
		uint64_t bytes = fast_group_bytes(m, g);
		uint32_t s = gr->src, a = s / G;
		for (uint32_t i = 0; i < gr->ndst;) {
			uint32_t b = m->dsts[gr->dst0 + i] / G, x = b * G + s % G, k = 0;
			bool x_in = false;
			for (; i < gr->ndst && m->dsts[gr->dst0 + i] / G == b; i++, k++)
				x_in |= m->dsts[gr->dst0 + i] == x;
			if (b != a)
				r[x] += bytes * (k - x_in);
		}
	}
	for (uint32_t x = 0; x < ng; x++)
		best = max64(best, r[x]);
	free(r);
	*rep = best;
	return 0;
}

/* Predicted T_sim of fast's (hier_k false) or hier's token plan of m. */
static double token_predict(const struct fast_topo *t, const struct feat *f, uint64_t rep,
			    bool hier, const struct fast_algo_opts *o)
{
	struct fast_algo_opts staged = *o;
	double Bu = fast_tier_Bps(&t->up), au = fast_tier_step_s(&t->up);
	enum kind k = hier ? K_HIER : K_FAST;

	staged.stages = FAST_STAGES_EXACT; /* token plans stay staged */
	/* the replication's bandwidth term, rep / B_up, made the predictions
	 * worse on the 500 cases of test_auto (fast: median predicted /
	 * simulated 1.10 with it over the last stage, 1.02 without; hier
	 * 0.89 as a rate limit, 1.01 without): it hides behind the crossing.
	 * Its step's latency stays. */
	(void)Bu;
	return predict(t, f, &models[k], &fast_algos[k], &staged, 0, f->largest, NULL) + (rep ? au : 0);
}

void fast_auto_opts_of(const struct fast_auto_choice *c, uint32_t k, const struct fast_algo_opts *o,
		       struct fast_algo_opts *out)
{
	if (o)
		*out = *o;
	else
		fast_algo_opts_default(out);
	out->dedup = c->dedup[k];
}

/* The candidates of token traffic, predicted (no evaluator). */
static void predict_matrix(const struct fast_topo *topo, const struct fast_matrix *m,
			   const struct fast_algo_opts *opts, struct fast_auto_choice *out)
{
	struct fast_algo_opts def, gpu;
	struct fast_auto_choice b;
	uint32_t ng = topo->servers * topo->gpus;
	uint64_t *Dd, rep = 0;
	struct feat f;
	double T[FAST_AUTO_MAX], best = INFINITY;

	if (!opts) {
		fast_algo_opts_default(&def);
		opts = &def;
	}
	if (opts->dedup == FAST_DEDUP_GPU) {
		fast_auto_choose(topo, m->bytes, opts, out);
		return;
	}
	gpu = *opts;
	gpu.dedup = FAST_DEDUP_GPU;
	decide(topo, m->bytes, &gpu, true, &b); /* full predictions: no floors */
	memset(out, 0, sizeof *out);
	Dd = fast_calloc((size_t)ng * ng, sizeof *Dd);
	bool have = Dd && token_rep(topo, m, &rep) == 0;
	if (have) {
		tok_dedup_matrix(topo, m, Dd);
		have = gather_g(topo, Dd, &f, topo->gpus) == 0;
	}
	free(Dd);
	for (uint32_t k = 0; k < b.n && out->n < FAST_AUTO_MAX; k++) {
		const struct fast_algo *a = fast_algo_find(b.algo[k]);
		if (a->compile_tokens && have) {
			uint32_t j = out->n++;
			out->algo[j] = b.algo[k];
			out->dedup[j] = FAST_DEDUP_SERVER;
			out->sim_s[j] = f.total ? token_predict(topo, &f, rep, models[k].kind == K_HIER, opts) : 0;
			out->synth_s[j] = 0; /* not modelled: see above */
		}
		if (out->n < FAST_AUTO_MAX) {
			uint32_t j = out->n++;
			out->algo[j] = b.algo[k];
			out->dedup[j] = FAST_DEDUP_GPU;
			out->sim_s[j] = b.sim_s[k];
			out->synth_s[j] = b.synth_s[k];
		}
	}
	for (uint32_t k = 0; k < out->n; k++)
		best = dmin(best, T[k] = out->sim_s[k]);
	for (uint32_t k = 0; k < out->n; k++)
		if (T[k] <= best * (1 + TIE_REL) + TIE_ABS_S) {
			out->best = k;
			break;
		}
}

/* --- token traffic, by evaluation ----------------------------------------
 *
 * With an evaluator (opts->eval, the simulator's in every command and the
 * executor) the token-traffic choice is not predicted but measured: every
 * candidate's plan is compiled, exactly as fast_compile_matrix compiles it
 * with that candidate's dedup, and timed by the evaluator; the least time
 * wins, near-ties to the first in the candidates' order.  The closed form
 * above errs by 0.6-1.4x on token plans (test_auto's 500 cases), too much
 * to keep the choice within the tie band of the best; the token compilers
 * already cost 0.3-40 ms, and a simulation of a candidate costs about as
 * much as its compile, so measuring costs a small multiple of the default
 * schedule's compile alone.  The plans are kept until the choice is made,
 * so the chosen one is not compiled twice. */

/* The candidates of m in order into out (names, dedups, n): per algorithm
 * of the table its token plan (dedup=server, where it has one and opts
 * allows it) before its byte plan. */
static void token_candidates(const struct fast_algo_opts *opts, struct fast_auto_choice *out)
{
	memset(out, 0, sizeof *out);
	for (const struct fast_algo *a = fast_algos; a->name && out->n < FAST_AUTO_MAX; a++) {
		if (a->compile == fast_compile_auto)
			continue;
		if (a->compile_tokens && opts->dedup == FAST_DEDUP_SERVER) {
			out->algo[out->n] = a->name;
			out->dedup[out->n++] = FAST_DEDUP_SERVER;
		}
		if (out->n < FAST_AUTO_MAX) {
			out->algo[out->n] = a->name;
			out->dedup[out->n++] = FAST_DEDUP_GPU;
		}
	}
}

static int evaluate_matrix(const struct fast_topo *topo, const struct fast_matrix *m,
			   const struct fast_algo_opts *opts, struct fast_auto_choice *out,
			   struct fast_plan *chosen, struct fast_err *err)
{
	const struct fast_plan_eval *ev = opts->eval;
	struct fast_plan p[FAST_AUTO_MAX];
	struct fast_auto_choice c;
	double best = INFINITY;
	uint32_t made = 0, pick = 0;
	int rc = 0;

	token_candidates(opts, &c);
	c.evaluated = true;
	for (; made < c.n; made++) {
		struct fast_algo_opts o;
		fast_auto_opts_of(&c, made, opts, &o);
		o.eval = NULL; /* no candidate is auto */
		if ((rc = fast_compile_matrix(c.algo[made], topo, m, &o, &p[made], err)) < 0)
			break; /* p[made] was not made */
		if ((rc = ev->time(ev, topo, m, &p[made], &c.sim_s[made], err)) < 0) {
			fast_plan_free(&p[made]);
			break;
		}
		c.synth_s[made] = 0; /* not part of this choice (see above) */
		best = dmin(best, c.sim_s[made]);
	}
	if (rc < 0) { /* made: the candidate that failed */
		fast_err_prefix(err, "auto: %s (dedup=%s)", c.algo[made],
				c.dedup[made] == FAST_DEDUP_GPU ? "gpu" : "server");
		while (made > 0)
			fast_plan_free(&p[--made]);
		return rc;
	}
	while (c.sim_s[pick] > best * (1 + TIE_REL) + TIE_ABS_S)
		pick++;
	c.best = pick;
	for (uint32_t k = 0; k < made; k++)
		if (k != pick || !chosen)
			fast_plan_free(&p[k]);
	if (chosen)
		*chosen = p[pick];
	*out = c;
	return 0;
}

int fast_auto_choose_matrix(const struct fast_topo *topo, const struct fast_matrix *m,
			    const struct fast_algo_opts *opts, struct fast_auto_choice *out,
			    struct fast_plan *plan, struct fast_err *err)
{
	struct fast_algo_opts def, o;
	struct fast_auto_choice c;
	int rc;

	if (!opts) {
		fast_algo_opts_default(&def);
		opts = &def;
	}
	if (m->kind != FAST_TRAFFIC_BYTES && opts->eval)
		return evaluate_matrix(topo, m, opts, out, plan, err);
	if (m->kind == FAST_TRAFFIC_BYTES)
		fast_auto_choose(topo, m->bytes, opts, &c);
	else
		predict_matrix(topo, m, opts, &c);
	if (plan) {
		fast_auto_opts_of(&c, c.best, opts, &o);
		if ((rc = fast_compile_matrix(c.algo[c.best], topo, m, &o, plan, err)) < 0)
			return rc;
	}
	*out = c;
	return 0;
}

void fast_auto_predict(const struct fast_topo *topo, const uint64_t *D,
		       const struct fast_algo_opts *opts, struct fast_auto_choice *out)
{
	decide(topo, D, opts, true, out);
}

int fast_compile_auto(const struct fast_topo *topo, const uint64_t *D,
		      const struct fast_algo_opts *opts, struct fast_plan *out,
		      struct fast_err *err)
{
	struct fast_auto_choice c;
	const struct fast_algo *a;
	struct fast_plan p;
	char inner[sizeof p.options];
	int rc, n;

	fast_auto_choose(topo, D, opts, &c);
	a = fast_algo_find(c.algo[c.best]);
	if ((rc = a->compile(topo, D, opts, &p, err)) < 0)
		return rc;
	/* the plan's algo stays the schedule's own name; the options record
	 * the choice (deterministic predictions, never a measured time) */
	memcpy(inner, p.options, sizeof inner);
	n = snprintf(p.options, sizeof p.options, "auto: predicted sim_s=%.4g synthesis_s=%.3g",
		     c.sim_s[c.best], c.synth_s[c.best]);
	if (inner[0] && n > 0 && (size_t)n + 2 < sizeof p.options)
		snprintf(p.options + n, sizeof p.options - (size_t)n, "; %.*s",
			 (int)(sizeof p.options - (size_t)n - 3), inner);
	*out = p;
	return 0;
}

int fast_compile_auto_tokens(const struct fast_topo *topo, const struct fast_matrix *m,
			     const struct fast_algo_opts *opts, struct fast_plan *out,
			     struct fast_err *err)
{
	struct fast_auto_choice c;
	struct fast_plan p;
	char inner[sizeof p.options], *end;
	int rc, n;

	if ((rc = fast_auto_choose_matrix(topo, m, opts, &c, &p, err)) < 0)
		return rc;
	/* fast_compile_matrix, which calls this, adds the plan's "dedup=":
	 * the chosen plan's own is dropped here (it ends the options) */
	memcpy(inner, p.options, sizeof inner);
	if ((end = strstr(inner, "dedup=")) != NULL) {
		while (end > inner && end[-1] == ' ')
			end--;
		*end = '\0';
	}
	if (c.evaluated)
		n = snprintf(p.options, sizeof p.options,
			     "auto: by %s of %u candidates: %s dedup=%s %s_s=%.4g",
			     opts->eval->name, c.n, c.algo[c.best],
			     c.dedup[c.best] == FAST_DEDUP_GPU ? "gpu" : "server", opts->eval->name,
			     c.sim_s[c.best]);
	else
		n = snprintf(p.options, sizeof p.options, "auto: predicted sim_s=%.4g synthesis_s=%.3g",
			     c.sim_s[c.best], c.synth_s[c.best]);
	if (inner[0] && n > 0 && (size_t)n + 2 < sizeof p.options)
		snprintf(p.options + n, sizeof p.options - (size_t)n, "; %.*s",
			 (int)(sizeof p.options - (size_t)n - 3), inner);
	*out = p;
	return 0;
}
