/*
 * auto.c - `--algo auto` (auto.h): a closed-form predictor of each
 * schedule's simulated time, a synthesis-cost model, and the choice.
 *
 * The predictor reads the matrix once (O(n^2), n = N * G; gather()) and
 * gathers per GPU the bytes it sends and receives across servers and
 * within its server, the rail loads PXN and hier put on each NIC, the
 * server matrix's largest row or column and largest entry; spreadout's per-round maxima and
 * the largest cross message come from a second pass (second_pass()),
 * made only when floors under spreadout's and hier's predictions do not
 * already rule them out (decide()).  Then, with
 * a = alpha + per-step overhead of a tier and B its effective rate
 * (bw x efficiency), per algorithm (the simulator's model, sim/sim.h):
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
 * Cost of the decision: linear in the n^2 entries read (measured: README,
 * "Choosing the schedule").
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auto.h"

/* Per-algorithm constants, in table order (fast, fanout, nccl, pxn,
 * spreadout, hier).
 *
 * FIT (T_sim): `fast compare --preset P --servers 4 --gpus 8 --traffic T
 * --algos fast,fanout,nccl,pxn,spreadout,hier,auto --json` on P in {h200,
 * mi300x-100g}, uniform, Zipf 0.8 and the DeepSeek trace at 4 KiB
 * and 16 KiB (K_LAT = 1 / median of predicted / simulated with K = 1) and
 * 64 MiB..4 GiB per GPU (K_VOL likewise), from the rows of
 * `bash results/auto_study.sh` (4 x 8; its predicted_sim_s column) with
 * every K = 1; results/auto_check.py prints the errors left (README).
 *
 * FIT (S): the medians of thread-CPU time over 15 compiles after one
 * warm-up that `fast compare --preset h200 --servers N --gpus 8 --traffic
 * T --algos fast,fanout,nccl,pxn,spreadout,hier --json` reports as
 * synthesis_s, T = `fast gen --pattern zipf --mean-bytes 4G` for N = 4
 * and N = 16 (S32 = the 4 x 8 median, P = log4 of the 16 x 8 / 4 x 8
 * ratio), this machine, 2026-12-01, under load (19 runnable on 2 cores):
 * thread-CPU time, so the load inflates it only through cache misses. */
enum kind { K_FAST, K_FANOUT, K_NCCL, K_PXN, K_SPREADOUT, K_HIER };

struct model {
	const char *algo; /* the table's name: models[k] is fast_algos[k] (test_auto) */
	enum kind kind;
	double k_lat, k_vol;
	double s32, p; /* synthesis: S32 seconds at 32 GPUs, exponent */
};

static const struct model models[] = {
	/* fast: S32 and P from its medians at 4 KiB..4 MiB per GPU (4 x 8 about
	 * 10 us, 16 x 8 80-130 us: results/auto_study*.csv), where its S can
	 * decide; at 4 GiB Zipf 16 x 8 it measured 1.448 ms, immaterial
	 * against the milliseconds FAST saves there.  The baselines: 4 x 8 and
	 * 16 x 8 medians on dense Zipf 4 GiB: fanout 14.9 us /
	 * 277 us, nccl 49.7 us / 1.634 ms, pxn 93.5 us / 1.297 ms, spreadout
	 * 19.1 us / 296 us, hier 29.3 us / 527 us (the 4 x 8 medians of three
	 * runs, 2026-12-01 14:51, load 2.6; the first fit's 5.45, 29.3, 35.9,
	 * 7.99 and 11.2 us were 1.7-2.7x under what compare measures, which
	 * made auto pick fanout or hier where FAST was faster).  fast's K_LAT
	 * refit for its packed stages (which it compiles at these sizes since):
	 * 0.955 / 0.962, the median predicted / simulated of the 12 FIT rows
	 * at 4 KiB and 16 KiB with K_LAT = 0.955 (0.955..1.003; `SIZES="4K
	 * 16K" bash results/auto_study.sh build/bin/fast OUT 4`, 2026-12-01) */
	{ "fast", K_FAST, 0.993, 1.0, 10.0e-6, 1.70 },
	{ "fanout", K_FANOUT, 1.0, 1.0, 14.9e-6, 2.11 },
	{ "nccl", K_NCCL, 0.83, 1.0, 49.7e-6, 2.52 },
	{ "pxn", K_PXN, 0.57, 1.0, 93.5e-6, 1.90 },
	{ "spreadout", K_SPREADOUT, 1.0, 1.0, 19.1e-6, 1.98 },
	{ "hier", K_HIER, 0.785, 1.08, 29.3e-6, 2.09 },
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

/* FAST's synthesis when it packs its stages: at least the staged cost,
 * and the handovers it writes -- a tile moves to a share of the rails,
 * so about every cross message is handed over once -- scale with the
 * messages, as a baseline's.  PACKED_S32 and PACKED_P through the `fast
 * compare --preset h200 --gpus 8 --algos fast` medians of synthesis_s on
 * dense uniform traffic (`fast gen --pattern uniform --mean-bytes 4K` and
 * 64K, five runs each, 2026-12-01, load 2.2-3.7): 20.3 us at 4 x 8, 706 us
 * at 16 x 8 (15 live plans of a packed compile's size fault their pages
 * in: the staged ones, with few handovers, measured 13.6 and 82 us). */
#define PACKED_S32 20.3e-6
#define PACKED_P 2.56

static double packed_synth(double staged, double n, double G, double log_n32, uint64_t nnz)
{
	double full = n * (n - G), S = PACKED_S32 * exp(PACKED_P * log_n32);

	if (full > 0 && (double)nnz < full)
		S *= 0.1 + 0.9 * (double)nnz / full;
	return S > staged ? S : staged;
}

double fast_auto_synth_model(const char *algo, uint32_t N, uint32_t G, uint64_t nnz)
{
	const struct model *m = model_of(algo);
	double n = (double)N * G;

	return m ? synth_of(m, n, G, log(n / 32.0), nnz) : 0;
}

/* The simulator's incast factor (sim/sim.h, struct fast_congestion). */
static double incast(const struct fast_congestion *c, double k)
{
	double f;

	if (k <= c->incast_threshold || c->incast_slope <= 0.0)
		return 1.0;
	f = 1.0 - c->incast_slope * (k - c->incast_threshold);
	return f < c->incast_floor ? c->incast_floor : f;
}

static double rate(const struct fast_tier *t)
{
	return t->bw_GBps * 1e9 * t->efficiency;
}

static double step_s(const struct fast_tier *t)
{
	return (t->latency_us + t->step_overhead_us) * 1e-6;
}

/* What one pass over the matrix gathers. */
struct feat {
	uint64_t send_x, recv_x, intra;    /* per-GPU maxima */
	uint64_t pxn_nic, pxn_up;          /* PXN: NIC egress, scale-up load */
	uint64_t hier_nic, srv;            /* hier NIC ingress; server row/col */
	uint64_t hier_link, intra_msg;     /* mesh: hier's forwarding per link; largest local message */
	uint32_t k_in;                     /* most cross senders of one GPU */
	uint64_t block_max, total;     /* most bytes one GPU sends one other server; 0 for an empty matrix */
	uint64_t pair;                 /* most bytes one server sends one other (packed FAST's tiles) */
	uint64_t nnz;                  /* non-zero cross-server messages */
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

/* gather(): returns -1 on allocation failure.  Per source server A, its
 * G rows, four at a time: per row and destination block, the block's sum
 * in a register (sends, hier's NIC loads, the rail); per column, the
 * strip's sum in acc, folded into the receive sums and PXN's NIC loads
 * once per strip, and the non-zero count into the senders -- two stores
 * per four messages.  The largest cross message and spreadout's round maxima
 * would be a compare and a store more per message: second_pass() makes
 * them when they decide (decide()). */
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
				      const uint32_t G, uint64_t *ab, uint64_t *cb, uint64_t *sum)
{

	if (R == 4) {
		const uint64_t *b1 = blk + stride, *b2 = b1 + stride, *b3 = b2 + stride;
		uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
		for (uint32_t j = 0; j < G; j++) {
			uint64_t v0 = blk[j], v1 = b1[j], v2 = b2[j], v3 = b3[j];
			s0 += v0, s1 += v1, s2 += v2, s3 += v3;
			ab[j] += (v0 + v1) + (v2 + v3);
			cb[j] += (uint64_t)(v0 != 0) + (v1 != 0) + (v2 != 0) + (v3 != 0);
		}
		sum[0] += s0, sum[1] += s1, sum[2] += s2, sum[3] += s3;
	} else {
		for (uint32_t k = 0; k < R; k++)
			for (uint32_t j = 0; j < G; j++) {
				uint64_t v = blk[k * stride + j];
				sum[k] += v, ab[j] += v, cb[j] += v != 0;
			}
	}
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
	uint64_t *pr; /* per destination server: the strip's sum to it */
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
		cross_block(blk, ng, R, G, g->acc + B * G, g->kin + B * G, sum);
		g->pr[B] += (R == 4 ? (sum[0] + sum[1]) + (sum[2] + sum[3]) : sum[0]);
		for (uint32_t k = 0; k < R; k++) {
			f->block_max = max64(f->block_max, sum[k]);
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

static ALWAYS_INLINE int gather_g(const struct fast_topo *t, const uint64_t *D, struct feat *f,
				  const uint32_t G)
{
	uint32_t N = t->servers, ng = N * G;
	size_t words = (size_t)ng * GATHER_WORDS + N;
	uint64_t stack[STACK_GPUS * (GATHER_WORDS + 1)];
	uint64_t *buf = words <= sizeof stack / sizeof stack[0] ? stack : malloc(words * sizeof *buf);
	uint64_t *sx, *rx, *si, *ri, *po, *rl, *hi, *kin, *acc, *pr;
	struct garrays ga;

	if (!buf)
		return -1;
	/* the sums first, zeroed; sx, si, rl, po are written whole; acc per strip */
	rx = buf, ri = rx + ng, hi = ri + ng, kin = hi + ng;
	sx = kin + ng, si = sx + ng, rl = si + ng, po = rl + ng, acc = po + ng, pr = acc + ng;
	ga = (struct garrays){ sx, rx, si, ri, po, rl, hi, kin, acc, pr };
	memset(buf, 0, (size_t)ng * 4 * sizeof *buf);
	memset(f, 0, sizeof *f);
	for (uint32_t A = 0; A < N; A++) {
		const uint64_t *strip = D + (size_t)A * G * ng;
		uint32_t i = 0;
		memset(acc, 0, (size_t)ng * sizeof *acc);
		memset(pr, 0, (size_t)N * sizeof *pr);
		for (; i + 4 <= G; i += 4)
			strip_rows(strip, N, G, A, i, 4, &ga, f);
		for (; i < G; i++)
			strip_rows(strip, N, G, A, i, 1, &ga, f);
		for (uint32_t B = 0; B < N; B++)
			if (B != A)
				f->pair = max64(f->pair, pr[B]);
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
	for (uint32_t B = 0; B < N; B++) {
		uint64_t srow = 0, scol = 0;
		for (uint32_t j = 0; j < G; j++) {
			uint32_t g = B * G + j;
			/* PXN's scale-up: local traffic, relays sent (off-rail cross
			 * bytes), relays received (what rail j of this server carries
			 * for others, less its own) */
			uint64_t up = si[g] + ri[g] + (sx[g] - rl[g]) + (po[g] - rl[g]);
			srow += sx[g], scol += rx[g];
			f->send_x = max64(f->send_x, sx[g]);
			f->recv_x = max64(f->recv_x, rx[g]);
			f->intra = max64(f->intra, max64(si[g], ri[g]));
			f->pxn_nic = max64(f->pxn_nic, max64(po[g], rx[g]));
			f->pxn_up = max64(f->pxn_up, up);
			f->hier_nic = max64(f->hier_nic, max64(sx[g], hi[g]));
			/* hier on a mesh: B_j forwards what it got on rail j over its
			 * G - 1 links (evenly: the per-link split would cost the
			 * decision as much again) */
			f->hier_link = max64(f->hier_link, G > 1 ? hi[g] / (G - 1) : 0);
			if (kin[g] > f->k_in)
				f->k_in = (uint32_t)kin[g];
			f->nnz += kin[g];
		}
		f->srv = max64(f->srv, max64(srow, scol));
	}
	if (buf != stack)
		free(buf);
	return 0;
}

/* gather_g with the constant G = 8 of every preset, whose block loops the
 * compiler can unroll (the decision's cost: README, "Benchmarks"); any
 * other G as it comes. */
static int gather(const struct fast_topo *t, const uint64_t *D, struct feat *f)
{
	return t->gpus == 8 ? gather_g(t, D, f, 8) : gather_g(t, D, f, t->gpus);
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
 *     max(a_out + largest cross message / B_out, a_up + largest local / B_up),
 * and the largest cross message (hier's piece).  Returns -1 on
 * allocation failure. */
static int second_pass(const struct fast_topo *t, const uint64_t *D, double *spread_s,
		       uint64_t *largest_cross)
{
	uint32_t N = t->servers, G = t->gpus, ng = N * G;
	uint64_t stack[STACK_GPUS * 2];
	uint64_t *mo = (size_t)ng * 2 <= sizeof stack / sizeof stack[0] ? stack : malloc((size_t)ng * 2 * sizeof *mo);
	uint64_t *mu, big = 0;
	double Bu = rate(&t->up), Bo = rate(&t->out), au = step_s(&t->up), ao = step_s(&t->out), sum = 0;

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
		big = max64(big, mo[d]);
	}
	if (mo != stack)
		free(mo);
	*spread_s = sum;
	*largest_cross = big;
	return 0;
}

/* A floor under second_pass()'s spread_s from gather's features alone: the rounds that
 * carry cross traffic number at least k_in (a GPU's senders sit in
 * distinct rounds) and their largest messages add up to at least any
 * GPU's cross sends or receives; the local ones likewise. */
static double spread_floor(const struct fast_topo *t, const struct feat *f)
{
	double o = (double)f->k_in * step_s(&t->out) +
		   (double)(f->send_x > f->recv_x ? f->send_x : f->recv_x) / rate(&t->out);
	double u = (double)f->intra / rate(&t->up);

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
	double Bu = rate(&t->up), Bo = rate(&t->out), au = step_s(&t->up), ao = step_s(&t->out);
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
	double Bu = rate(&t->up), Bo = rate(&t->out), au = step_s(&t->up), ao = step_s(&t->out);
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

/* A floor under the largest cross message: a GPU's G messages to one
 * server carry block_max bytes.  *exact when it settles hier's piece,
 * min(chunk, largest). */
static uint64_t largest_floor(uint64_t block_max, uint32_t G, uint64_t chunk, bool *exact)
{
	uint64_t lo = block_max / G + (block_max % G != 0);

	*exact = block_max == 0 || lo >= chunk;
	return lo;
}

/* The predictor's error band (results/auto_check.py: most candidates
 * within 3% at the sizes where they compete). */
#define TIE_REL 0.03
#define TIE_ABS_S 0.5e-6

/* fast_auto_choose (every = false) and fast_auto_predict (every = true).
 * First every candidate from gather's features, spreadout and hier (when
 * the floor under the largest message leaves its piece open) from floors; the second pass is made when
 * one of those floors (less a rounding margin) comes within the tie band
 * of the best exact prediction -- else neither can be chosen, nor move the
 * best, and the choice is the full prediction's. */
static void decide(const struct fast_topo *topo, const uint64_t *D, const struct fast_algo_opts *opts,
		   bool every, struct fast_auto_choice *out)
{
	struct fast_algo_opts def;
	struct feat f;
	bool have = gather(topo, D, &f) == 0, lazy[FAST_AUTO_MAX], need = false;
	double n = (double)topo->servers * topo->gpus, ln = log(n / 32.0);
	double best = INFINITY, T[FAST_AUTO_MAX], floor_s;

	if (!opts) {
		fast_algo_opts_default(&def);
		opts = &def;
	}
	memset(out, 0, sizeof *out);
	floor_s = have ? spread_floor(topo, &f) : 0;
	/* models[k] is the table's entry k (test_auto checks it) */
	for (uint32_t k = 0; k < NMODELS && k < FAST_AUTO_MAX; k++) {
		const struct model *m = &models[k];
		const struct fast_algo *a = &fast_algos[k];
		uint64_t chunk = opts->chunk_bytes ? opts->chunk_bytes : a->default_chunk_bytes, lo;
		bool exact = true;
		out->algo[k] = a->name;
		out->n++;
		lazy[k] = false;
		T[k] = 0;
		if (!have) /* out of memory: FAST, the default, predicted 0 so that it is chosen */
			continue;
		lo = largest_floor(f.block_max, topo->gpus, chunk, &exact);
		lazy[k] = f.total && (m->kind == K_SPREADOUT || (m->kind == K_HIER && !exact));
		bool packs = false;
		out->synth_s[k] = synth_of(m, n, topo->gpus, ln, f.nnz);
		out->sim_s[k] = predict(topo, &f, m, a, opts, floor_s, lo, &packs);
		if (packs) /* FAST compiles packed stages: their synthesis */
			out->synth_s[k] = packed_synth(out->synth_s[k], n, topo->gpus, ln, f.nnz);
		T[k] = out->sim_s[k] + out->synth_s[k];
		if (!lazy[k])
			best = dmin(best, T[k]);
	}
	for (uint32_t k = 0; k < out->n; k++)
		need = need || (lazy[k] && (every || out->sim_s[k] * (1 - 1e-9) + out->synth_s[k] <=
							 best * (1 + TIE_REL) + TIE_ABS_S));
	if (need) {
		double spread_s;
		uint64_t largest;
		bool ok = second_pass(topo, D, &spread_s, &largest) == 0;
		for (uint32_t k = 0; ok && k < out->n; k++)
			if (lazy[k]) {
				out->sim_s[k] = predict(topo, &f, &models[k], &fast_algos[k], opts, spread_s,
							largest, NULL);
				T[k] = out->sim_s[k] + out->synth_s[k];
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
