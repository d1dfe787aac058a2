/*
 * gen.h - deterministic synthetic traffic: the patterns of the FAST paper's
 * microbenchmarks and a synthetic MoE router, filling a struct fast_traffic.
 *
 * Patterns (NG GPUs, mean per-GPU send size M = mean_bytes):
 *   uniform  every off-diagonal pair the same size: M / (NG - 1) rounded to
 *            the nearest multiple of 512 bytes (at least 512 when M > 0).
 *   random   pair weights uniform in 0..1023 (the paper's rand() % 1024),
 *            diagonal zero, scaled so the total is NG * M: 512-byte units
 *            apportioned to pairs in proportion to their weights by the
 *            largest-remainder method (exact integers), so every pair is a
 *            multiple of 512 and the mean per-GPU send is exactly M when M
 *            is a multiple of 512 (otherwise NG * M / 512 rounded to units).
 *   zipf     the same with weights drawn from a bounded Zipf over 1..1024:
 *            P(v) proportional to v^-skew (skew 0 = uniform over 1..1024).
 *            The Gini of the pair sizes rises with skew up to about 1.2;
 *            beyond it the mass piles on v = 1 and Gini falls again while
 *            max/mean keeps rising (real MoE traffic: 0.4-0.8, paper 5).
 *   hotspot  `hot` receivers drawn from the seed; every sender sends M
 *            bytes, a fraction `fraction` of it spread evenly over the hot
 *            receivers (other than itself) and the rest evenly over the
 *            other receivers, in 512-byte units.  A sender with no hot (or
 *            no cold) peer sends everything to the other kind.
 *   moe      each GPU holds `tokens` tokens per step; each token picks topk
 *            distinct experts out of E with probability proportional to
 *            (rank + 1)^-alpha (alpha 0 = balanced), the ranks a random
 *            permutation drawn from the seed; between steps each expert
 *            swaps rank with a random expert with probability `drift`.
 *            Experts are placed contiguously or round-robin (moe.h); a token
 *            is sent once to a GPU even if several of its experts live
 *            there.  Each step gives "stepS/dispatch" (token copies x
 *            token_bytes; the diagonal = tokens whose experts are local) and
 *            "stepS/combine" (its transpose).  With mean_bytes set, the
 *            bytes per token are replaced by round(NG * steps * M / total
 *            token copies of all dispatch matrices) (at least 1), so the
 *            mean per-GPU dispatch send (diagonal included) over the steps
 *            is M up to that rounding.  With `groups`, the matrices are
 *            token traffic (traffic.h): each token is one token of its
 *            GPU going to the distinct GPUs of its experts, grouped by
 *            source then first appearance (fast_groups); the random draws
 *            are the same, so their byte view is the byte output exactly.
 * Non-MoE patterns give `matrices` matrices "m0", "m1", ... from one
 * random stream.
 *
 * Determinism: every random draw comes from fast_rng (xoshiro256**).  Real
 * numbers enter only through the Zipf and popularity weights x^-s, which
 * are computed with fast_det_pow (frexp/ldexp and + - * / only, no libm
 * pow/exp/log whose last bit varies between libraries) and then turned
 * into integer tickets (floor(w * 2^40), at least 1); every draw and every
 * apportionment is integer arithmetic.  With IEEE-754 doubles and no FMA
 * contraction (-std=c11 disables it in GCC; gen.c turns it off for clang,
 * which would fuse on arm64 or -march=native and change last bits) the same
 * seed gives the same bytes on every machine; a unit test pins checksums.
 * The hotspot split rounds fraction * units with one IEEE multiply.
 */
#ifndef FAST_GEN_H
#define FAST_GEN_H

#include "fast/common.h"
#include "lib/workload/moe.h"
#include "fast/topo.h"
#include "fast/traffic.h"

enum fast_gen_pattern {
	FAST_GEN_UNIFORM = 0,
	FAST_GEN_RANDOM,
	FAST_GEN_ZIPF,
	FAST_GEN_HOTSPOT,
	FAST_GEN_MOE,
};

/* Alignment of generated pair sizes (the paper's microbenchmarks). */
#define FAST_GEN_ALIGN 512u
/* Mean per-GPU send of the matrix patterns when mean_bytes is 0. */
#define FAST_GEN_DEFAULT_MEAN (UINT64_C(64) << 20)

struct fast_gen_moe {
	uint32_t tokens;      /* per GPU per step */
	uint32_t topk;        /* experts per token, <= experts */
	uint32_t experts;     /* E */
	double alpha;         /* popularity exponent >= 0; 0 = balanced */
	enum fast_placement placement;
	uint64_t token_bytes; /* bytes per token copy */
	uint32_t steps;
	double drift;         /* in [0, 1]: per-expert rank swap probability */
	bool groups;          /* token traffic: DISPATCH / COMBINE matrices of token
			       * groups (traffic.h) whose byte view is the byte output */
};

struct fast_gen_opts {
	enum fast_gen_pattern pattern;
	uint32_t ng;          /* GPUs */
	uint64_t seed;
	uint64_t mean_bytes;  /* M; 0 = FAST_GEN_DEFAULT_MEAN, or for moe:
			       * keep token_bytes */
	uint32_t matrices;    /* non-moe patterns */
	double skew;          /* zipf exponent >= 0 */
	uint32_t hot;         /* hotspot receivers, 1..ng */
	double fraction;      /* hotspot share in [0, 1] */
	struct fast_gen_moe moe;
};

/* Defaults: mean_bytes 0 (64 MiB; moe: token_bytes), 1 matrix, skew 0.8,
 * 1 hot receiver with 0.5,
 * moe: 4096 tokens, top-8 of 256 experts (DeepSeek-V3's router), alpha 0,
 * contiguous, 14336 bytes per token (hidden 7168 in bf16), 1 step, drift
 * 0.  Caller sets pattern, ng and seed. */
void fast_gen_defaults(struct fast_gen_opts *o);

/* "uniform" "random" "zipf" "hotspot" "moe" (FAST_EUSAGE otherwise). */
int fast_gen_pattern_parse(const char *name, enum fast_gen_pattern *out,
			   struct fast_err *err);
const char *fast_gen_pattern_name(enum fast_gen_pattern p);

/* Generate.  Errors: FAST_EUSAGE for out-of-range options (named in the
 * message), FAST_ELIMIT for sizes beyond lim or byte counts beyond 2^53,
 * FAST_ENOMEM.  out is written only on success; the caller frees it with
 * fast_traffic_free().  t->source describes the pattern and seed. */
int fast_gen_traffic(const struct fast_gen_opts *o, const struct fast_limits *lim,
		     struct fast_traffic *out, struct fast_err *err);

/* base^expo for base > 0 computed with + - * / and frexp/ldexp only: the
 * same value on every IEEE-754 machine (accurate to a few ulps). */
double fast_det_pow(double base, double expo);

#endif
