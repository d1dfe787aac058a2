/*
 * gen.c - deterministic synthetic traffic (gen.h): uniform, random and
 * Zipf pair sizes as in the FAST paper's microbenchmarks, hotspots, and a
 * synthetic top-k MoE router with power-law expert popularity.
 *
 * Workload: matrices of up to a few thousand GPUs, generated once per
 * study; clarity and exact reproducibility matter more than speed.  All
 * sampling is integer: weights become integer tickets, draws are
 * fast_rng_below() over cumulative tickets, scaling is a largest-remainder
 * apportionment in 128-bit integers (fast_apportion, common.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/workload/gen.h"

/* Fused multiply-add changes last bits, and with them the integer tickets:
 * forbid contraction (GCC already does in ISO C mode, -std=c11; clang
 * contracts by default where the target has FMA, e.g. arm64). */
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

__extension__ typedef unsigned __int128 u128;

#define LN2 0.693147180559945309417232121458176568
#define TICKET_SCALE 1099511627776.0 /* 2^40 */

/* --- deterministic pow ------------------------------------------------- */

/* log(x) for finite x > 0: exact binary exponent (frexp) plus the atanh
 * series of the mantissa; only correctly rounded IEEE operations. */
static double det_log(double x)
{
	int e;
	double m = frexp(x, &e), y, y2, term, s;

	if (m < 0.70710678118654752440) {
		m *= 2.0;
		e--;
	}
	y = (m - 1.0) / (m + 1.0); /* |y| <= 0.172 */
	y2 = y * y;
	term = y;
	s = y;
	for (int k = 1; k <= 24; k++) {
		term *= y2;
		s += term / (double)(2 * k + 1);
	}
	return (double)e * LN2 + 2.0 * s;
}

/* exp(x): reduce by multiples of ln 2 (floor is exact), Taylor series on
 * |r| <= 0.35, scale back with ldexp (exact). */
static double det_exp(double x)
{
	double k, r, term = 1.0, s = 1.0;

	if (x < -745.0)
		return 0.0;
	if (x > 709.0)
		return HUGE_VAL;
	k = floor(x / LN2 + 0.5);
	r = x - k * LN2;
	for (int i = 1; i <= 27; i++) {
		term *= r / (double)i;
		s += term;
	}
	return ldexp(s, (int)k);
}

double fast_det_pow(double base, double expo)
{
	if (expo == 0.0 || base == 1.0)
		return 1.0;
	return det_exp(expo * det_log(base));
}

/* Integer ticket of a weight in (0, 1]: floor(w * 2^40), at least 1. */
static uint64_t ticket(double w)
{
	double t = floor(w * TICKET_SCALE);
	return t < 1.0 ? 1 : (uint64_t)t;
}

/* --- names and defaults ------------------------------------------------ */

static const char *const pattern_names[] = { "uniform", "random", "zipf", "hotspot", "moe" };

int fast_gen_pattern_parse(const char *name, enum fast_gen_pattern *out, struct fast_err *err)
{
	for (size_t i = 0; i < sizeof pattern_names / sizeof pattern_names[0]; i++)
		if (strcmp(name, pattern_names[i]) == 0) {
			*out = (enum fast_gen_pattern)i;
			return 0;
		}
	return fast_err_set(err, FAST_EUSAGE,
			    "unknown pattern '%.40s' (known: uniform, random, zipf, hotspot, moe)",
			    name);
}

const char *fast_gen_pattern_name(enum fast_gen_pattern p)
{
	return (unsigned)p < sizeof pattern_names / sizeof pattern_names[0] ? pattern_names[p]
									    : "?";
}

void fast_gen_defaults(struct fast_gen_opts *o)
{
	memset(o, 0, sizeof *o);
	o->pattern = FAST_GEN_RANDOM;
	o->ng = 32;
	o->seed = 1;
	o->mean_bytes = 0; /* FAST_GEN_DEFAULT_MEAN for matrix patterns */
	o->matrices = 1;
	o->skew = 0.8;
	o->hot = 1;
	o->fraction = 0.5;
	o->moe.tokens = 4096;
	o->moe.topk = 8;
	o->moe.experts = 256;
	o->moe.alpha = 0.0;
	o->moe.placement = FAST_PLACE_CONTIGUOUS;
	o->moe.token_bytes = 14336;
	o->moe.steps = 1;
	o->moe.drift = 0.0;
}

/* --- sampling ---------------------------------------------------------- */

/* Index i with cum[i-1] <= u < cum[i] for u uniform below cum[n-1]. */
static uint32_t draw(struct fast_rng *rng, const uint64_t *cum, uint32_t n)
{
	uint64_t u = fast_rng_below(rng, cum[n - 1]);
	uint32_t lo = 0, hi = n - 1;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (cum[mid] > u)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* --- the matrix patterns ----------------------------------------------- */

static int check_total(uint64_t mean, uint32_t ng, uint64_t *total, struct fast_err *err)
{
	uint64_t t;

	if (!fast_mul_u64(mean, ng, &t) || t > FAST_JSON_MAX_BYTES)
		return fast_err_set(err, FAST_ELIMIT,
				    "--mean-bytes %llu x %u GPUs exceeds 2^53 bytes per matrix",
				    (unsigned long long)mean, ng);
	*total = t;
	return 0;
}

static void fill_uniform(uint64_t *m, uint32_t ng, uint64_t mean)
{
	uint64_t units, den;

	if (ng < 2)
		return;
	den = (uint64_t)(ng - 1) * FAST_GEN_ALIGN;
	units = (mean + den / 2) / den;
	if (units == 0 && mean > 0)
		units = 1;
	for (uint32_t s = 0; s < ng; s++)
		for (uint32_t d = 0; d < ng; d++)
			m[(size_t)s * ng + d] = s == d ? 0 : units * FAST_GEN_ALIGN;
}

/* Pair weights w (ng*(ng-1), row-major without the diagonal) scaled to a
 * total of round(total / 512) units of 512 bytes. */
static int scale_pairs(uint64_t *m, uint32_t ng, uint64_t *w, uint64_t total,
		       struct fast_err *err)
{
	uint32_t n = ng * (ng - 1);
	uint64_t units = (total + FAST_GEN_ALIGN / 2) / FAST_GEN_ALIGN, sum = 0;
	uint64_t *u;
	size_t k = 0;
	int rc;

	for (uint32_t i = 0; i < n; i++)
		sum += w[i];
	if (sum == 0) /* every draw was 0: fall back to equal weights */
		for (uint32_t i = 0; i < n; i++)
			w[i] = 1;
	u = fast_calloc(n, sizeof *u);
	if (!u)
		return fast_err_set(err, FAST_ENOMEM, "out of memory");
	rc = fast_apportion(units, w, n, 0, u, err);
	if (rc == 0)
		for (uint32_t s = 0; s < ng; s++)
			for (uint32_t d = 0; d < ng; d++)
				m[(size_t)s * ng + d] = s == d ? 0 : u[k++] * FAST_GEN_ALIGN;
	free(u);
	return rc;
}

static int fill_random(uint64_t *m, uint32_t ng, uint64_t total, struct fast_rng *rng,
		       const uint64_t *zipf_cum, struct fast_err *err)
{
	uint32_t n;
	uint64_t *w;
	int rc;

	if (ng < 2)
		return 0;
	if ((uint64_t)ng * (ng - 1) > UINT32_MAX)
		return fast_err_set(err, FAST_ELIMIT, "%u GPUs: too many pairs for random sizes", ng);
	n = ng * (ng - 1);
	w = fast_calloc(n, sizeof *w);
	if (!w)
		return fast_err_set(err, FAST_ENOMEM, "out of memory");
	for (uint32_t i = 0; i < n; i++)
		w[i] = zipf_cum ? (uint64_t)draw(rng, zipf_cum, 1024) + 1
				: fast_rng_below(rng, 1024);
	rc = scale_pairs(m, ng, w, total, err);
	free(w);
	return rc;
}

static int fill_hotspot(uint64_t *m, uint32_t ng, uint64_t mean, const bool *is_hot,
			double fraction, struct fast_err *err)
{
	uint64_t units = (mean + FAST_GEN_ALIGN / 2) / FAST_GEN_ALIGN;
	uint64_t *w, *u;
	int rc = 0;

	if (ng < 2)
		return 0;
	if (units == 0 && mean > 0)
		units = 1;
	w = fast_calloc(ng, sizeof *w);
	u = fast_calloc(ng, sizeof *u);
	if (!w || !u) {
		free(w);
		free(u);
		return fast_err_set(err, FAST_ENOMEM, "out of memory");
	}
	for (uint32_t s = 0; s < ng && rc == 0; s++) {
		uint32_t nhot = 0, ncold = 0;
		uint64_t hot_units, cold_units;
		uint64_t *row = m + (size_t)s * ng;

		for (uint32_t d = 0; d < ng; d++)
			if (d != s) {
				if (is_hot[d])
					nhot++;
				else
					ncold++;
			}
		if (nhot == 0)
			hot_units = 0;
		else if (ncold == 0)
			hot_units = units;
		else {
			double h = floor(fraction * (double)units + 0.5);
			hot_units = h >= (double)units ? units : (uint64_t)h;
		}
		cold_units = units - hot_units;
		/* even split within each kind, remainders rotating with s */
		for (int kind = 0; kind < 2 && rc == 0; kind++) {
			for (uint32_t d = 0; d < ng; d++)
				w[d] = d != s && is_hot[d] == (kind == 0);
			if ((kind == 0 ? nhot : ncold) == 0)
				continue;
			rc = fast_apportion(kind == 0 ? hot_units : cold_units, w, ng, s, u, err);
			for (uint32_t d = 0; d < ng && rc == 0; d++)
				if (w[d])
					row[d] = u[d] * FAST_GEN_ALIGN;
		}
	}
	free(w);
	free(u);
	return rc;
}

/* --- moe ---------------------------------------------------------------- */

struct moe_state {
	const struct fast_gen_moe *p;
	struct fast_moe_layout layout;
	uint32_t *order;     /* order[r] = expert of popularity rank r */
	uint64_t *rank_tk;   /* tickets of rank r */
	uint64_t *tk;        /* tickets of expert e (this step) */
	uint64_t *cum;       /* cumulative tk */
	uint64_t *estamp;    /* expert chosen by token (stamp) */
	uint64_t *gstamp;    /* GPU already counted for token (stamp) */
	uint32_t *chosen;
};

static void moe_free(struct moe_state *st)
{
	free(st->order);
	free(st->rank_tk);
	free(st->tk);
	free(st->cum);
	free(st->estamp);
	free(st->gstamp);
	free(st->chosen);
}

static void moe_step_weights(struct moe_state *st)
{
	uint32_t E = st->p->experts;

	for (uint32_t r = 0; r < E; r++)
		st->tk[st->order[r]] = st->rank_tk[r];
	for (uint32_t e = 0; e < E; e++)
		st->cum[e] = st->tk[e] + (e ? st->cum[e - 1] : 0);
}

/* Draw topk distinct experts for one token (stamp = token id). */
static void moe_pick(struct moe_state *st, struct fast_rng *rng, uint64_t stamp)
{
	uint32_t E = st->p->experts, K = st->p->topk;

	for (uint32_t j = 0; j < K; j++) {
		uint32_t e = 0;
		bool ok = false;

		/* rejection first; a long run of repeats (heavy skew, k close
		 * to E) falls back to drawing from the remaining experts */
		for (int tries = 0; tries < 64 && !ok; tries++) {
			e = draw(rng, st->cum, E);
			ok = st->estamp[e] != stamp;
		}
		if (!ok) {
			uint64_t rest = 0, u;

			for (uint32_t x = 0; x < E; x++)
				if (st->estamp[x] != stamp)
					rest += st->tk[x];
			u = fast_rng_below(rng, rest);
			for (e = 0; e < E; e++) {
				if (st->estamp[e] == stamp)
					continue;
				if (u < st->tk[e])
					break;
				u -= st->tk[e];
			}
		}
		st->estamp[e] = stamp;
		st->chosen[j] = e;
	}
}

/* Ascending insertion sort of a token's few destination GPUs. */
static void sort_small(uint32_t *v, uint32_t n)
{
	for (uint32_t i = 1; i < n; i++)
		for (uint32_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
			uint32_t x = v[j];
			v[j] = v[j - 1];
			v[j - 1] = x;
		}
}

/* The counts of every step's dispatch (token copies) times B bytes per
 * token, its combine (the transpose, or the token groups reversed), the
 * labels and the source line. */
static int moe_finish(const struct fast_gen_opts *o, uint64_t B, struct fast_traffic *t,
		      struct fast_err *err)
{
	const struct fast_gen_moe *p = &o->moe;
	uint32_t ng = o->ng;
	int rc;

	for (uint32_t step = 0; step < p->steps; step++) {
		uint64_t *c = t->m[2 * step].bytes, sum = 0, tot;

		for (size_t i = 0; i < (size_t)ng * ng; i++)
			sum += c[i];
		if (!fast_mul_u64(sum, B, &tot) || tot > FAST_JSON_MAX_BYTES)
			return fast_err_set(err, FAST_ELIMIT,
					    "step %u: %llu token copies x %llu bytes exceeds 2^53 bytes",
					    step, (unsigned long long)sum, (unsigned long long)B);
		for (size_t i = 0; i < (size_t)ng * ng; i++)
			c[i] *= B;
		if (p->groups) {
			t->m[2 * step].token_bytes = B;
			rc = fast_matrix_copy_groups(&t->m[2 * step + 1], &t->m[2 * step],
						     FAST_TRAFFIC_COMBINE, err);
		} else {
			memcpy(t->m[2 * step + 1].bytes, c, (size_t)ng * ng * sizeof *c);
			rc = fast_matrix_transpose(t->m[2 * step + 1].bytes, ng, err);
		}
		if (rc < 0)
			return rc;
		snprintf(t->m[2 * step].label, sizeof t->m[0].label, "step%u/dispatch", step);
		snprintf(t->m[2 * step + 1].label, sizeof t->m[0].label, "step%u/combine", step);
	}
	snprintf(t->source, sizeof t->source,
		 "generated: moe tokens=%u topk=%u experts=%u alpha=%g placement=%s "
		 "token_bytes=%llu%s steps=%u drift=%g seed=%llu%s (fast gen)",
		 p->tokens, p->topk, p->experts, p->alpha, fast_placement_name(p->placement),
		 (unsigned long long)B, o->mean_bytes ? " (scaled to --mean-bytes)" : "",
		 p->steps, p->drift, (unsigned long long)o->seed,
		 p->groups ? " token groups" : "");
	return 0;
}

static int gen_moe(const struct fast_gen_opts *o, uint64_t max_groups, struct fast_rng *rng,
		   struct fast_traffic *t, struct fast_err *err)
{
	const struct fast_gen_moe *p = &o->moe;
	uint32_t ng = o->ng, E = p->experts, K = p->topk, *dl;
	struct moe_state st = { 0 };
	struct fast_groups gb;
	uint64_t stamp = 0, copies = 0, B = p->token_bytes;
	int rc = 0;

	st.p = p;
	st.layout.ng = ng;
	st.layout.experts = E;
	st.layout.experts_at = p->placement;
	st.layout.tokens_at = FAST_PLACE_CONTIGUOUS;
	rc = fast_moe_layout_check(&st.layout, err);
	if (rc < 0) {
		if (err)
			err->code = FAST_EUSAGE;
		return FAST_EUSAGE;
	}
	st.order = fast_calloc(E, sizeof *st.order);
	st.rank_tk = fast_calloc(E, sizeof *st.rank_tk);
	st.tk = fast_calloc(E, sizeof *st.tk);
	st.cum = fast_calloc(E, sizeof *st.cum);
	st.estamp = fast_calloc(E, sizeof *st.estamp);
	st.gstamp = fast_calloc(ng, sizeof *st.gstamp);
	st.chosen = fast_calloc(K, sizeof *st.chosen);
	dl = fast_calloc(K, sizeof *dl);
	if (!st.order || !st.rank_tk || !st.tk || !st.cum || !st.estamp || !st.gstamp ||
	    !st.chosen || !dl) {
		moe_free(&st);
		free(dl);
		return fast_err_set(err, FAST_ENOMEM, "out of memory");
	}
	for (uint32_t e = 0; e < E; e++) {
		st.order[e] = e;
		st.estamp[e] = UINT64_MAX;
		st.rank_tk[e] = ticket(fast_det_pow((double)e + 1.0, -p->alpha));
	}
	for (uint32_t g = 0; g < ng; g++)
		st.gstamp[g] = UINT64_MAX;
	/* popularity ranks: a random permutation (Fisher-Yates) */
	for (uint32_t i = E; i > 1; i--) {
		uint32_t j = (uint32_t)fast_rng_below(rng, i), x = st.order[i - 1];
		st.order[i - 1] = st.order[j];
		st.order[j] = x;
	}
	for (uint32_t step = 0; step < p->steps && rc == 0; step++) {
		uint64_t *c = t->m[2 * step].bytes;

		if (step > 0 && p->drift > 0.0) {
			uint64_t thr = (uint64_t)floor(p->drift * 4294967296.0);
			for (uint32_t r = 0; r < E; r++)
				if (fast_rng_below(rng, UINT64_C(1) << 32) < thr) {
					uint32_t j = (uint32_t)fast_rng_below(rng, E), x = st.order[r];
					st.order[r] = st.order[j];
					st.order[j] = x;
				}
		}
		moe_step_weights(&st);
		fast_groups_init(&gb, ng, max_groups);
		for (uint32_t s = 0; s < ng && rc == 0; s++)
			for (uint32_t tok = 0; tok < p->tokens && rc == 0; tok++, stamp++) {
				uint32_t nd = 0;
				moe_pick(&st, rng, stamp);
				for (uint32_t j = 0; j < K; j++) {
					uint32_t d = fast_moe_expert_gpu(&st.layout, st.chosen[j], s);
					if (st.gstamp[d] != stamp) {
						st.gstamp[d] = stamp;
						c[(size_t)s * ng + d]++;
						copies++;
						dl[nd++] = d;
					}
				}
				if (p->groups) {
					sort_small(dl, nd);
					rc = fast_groups_add(&gb, s, dl, nd, 1, err);
				}
			}
		/* bytes per token are known after the last step: 1 for now, as
		 * the counts in c (which the byte view then is) */
		if (rc == 0 && p->groups) {
			max_groups -= gb.n;
			rc = fast_groups_finish(&gb, FAST_TRAFFIC_DISPATCH, 1, &t->m[2 * step], err);
		}
		fast_groups_free(&gb);
	}
	free(dl);
	moe_free(&st);
	if (rc < 0)
		return rc;
	if (o->mean_bytes) {
		/* bytes per token so that the mean per-GPU dispatch is M */
		u128 num = (u128)o->mean_bytes * ng * p->steps;
		u128 b = (2 * num + copies) / (2 * (u128)copies);
		if (b > FAST_JSON_MAX_BYTES)
			return fast_err_set(err, FAST_ELIMIT, "--mean-bytes is too large");
		B = b ? (uint64_t)b : 1;
	}
	return moe_finish(o, B, t, err);
}

/* --- entry point ------------------------------------------------------- */

static int check_opts(const struct fast_gen_opts *o, struct fast_err *err)
{
	const struct fast_gen_moe *p = &o->moe;

	if (o->ng == 0)
		return fast_err_set(err, FAST_EUSAGE, "no GPUs");
	if (o->pattern == FAST_GEN_MOE) {
		if (p->experts == 0 || p->experts > 65535)
			return fast_err_set(err, FAST_EUSAGE, "--experts must be in [1, 65535] (got %u)",
					    p->experts);
		if (p->topk == 0 || p->topk > p->experts)
			return fast_err_set(err, FAST_EUSAGE, "--topk must be in [1, %u] (got %u)",
					    p->experts, p->topk);
		if (p->tokens == 0)
			return fast_err_set(err, FAST_EUSAGE, "--tokens must be >= 1");
		if (p->steps == 0 || p->steps > 32768)
			return fast_err_set(err, FAST_EUSAGE, "--steps must be in [1, 32768] (got %u)",
					    p->steps);
		if (!(p->alpha >= 0.0 && p->alpha <= 16.0))
			return fast_err_set(err, FAST_EUSAGE, "--alpha must be in [0, 16] (got %g)",
					    p->alpha);
		if (!(p->drift >= 0.0 && p->drift <= 1.0))
			return fast_err_set(err, FAST_EUSAGE, "--drift must be in [0, 1] (got %g)",
					    p->drift);
		if (p->token_bytes == 0 && o->mean_bytes == 0)
			return fast_err_set(err, FAST_EUSAGE, "--token-bytes must be >= 1");
		if (p->groups && p->topk > FAST_GROUP_MAX_DESTS && o->ng > FAST_GROUP_MAX_DESTS)
			return fast_err_set(err, FAST_EUSAGE,
					    "--token-groups: a token of --topk %u can reach more than "
					    "the %u destination GPUs of a token group",
					    p->topk, FAST_GROUP_MAX_DESTS);
		return 0;
	}
	if (o->matrices == 0)
		return fast_err_set(err, FAST_EUSAGE, "--matrices must be >= 1");
	if (!(o->skew >= 0.0 && o->skew <= 16.0))
		return fast_err_set(err, FAST_EUSAGE, "--skew must be in [0, 16] (got %g)", o->skew);
	if (o->pattern == FAST_GEN_HOTSPOT) {
		if (o->hot == 0 || o->hot > o->ng)
			return fast_err_set(err, FAST_EUSAGE, "--hot must be in [1, %u] (got %u)",
					    o->ng, o->hot);
		if (!(o->fraction >= 0.0 && o->fraction <= 1.0))
			return fast_err_set(err, FAST_EUSAGE, "--fraction must be in [0, 1] (got %g)",
					    o->fraction);
	}
	return 0;
}

static int gen_matrices(const struct fast_gen_opts *o, struct fast_rng *rng,
			struct fast_traffic *t, struct fast_err *err)
{
	uint32_t ng = o->ng;
	uint64_t total = 0, zipf_cum[1024];
	bool *is_hot = NULL;
	char mean[32];
	int rc;

	uint64_t M = o->mean_bytes ? o->mean_bytes : FAST_GEN_DEFAULT_MEAN;

	rc = check_total(M, ng, &total, err);
	if (rc < 0)
		return rc;
	fast_size_format(M, mean, sizeof mean);
	switch (o->pattern) {
	case FAST_GEN_ZIPF:
		for (uint32_t v = 0; v < 1024; v++)
			zipf_cum[v] = ticket(fast_det_pow((double)v + 1.0, -o->skew)) +
				      (v ? zipf_cum[v - 1] : 0);
		snprintf(t->source, sizeof t->source,
			 "generated: zipf skew=%g mean=%s seed=%llu (fast gen)", o->skew, mean,
			 (unsigned long long)o->seed);
		break;
	case FAST_GEN_HOTSPOT: {
		uint32_t *perm = fast_calloc(ng, sizeof *perm);
		is_hot = fast_calloc(ng, sizeof *is_hot);
		if (!perm || !is_hot) {
			free(perm);
			free(is_hot);
			return fast_err_set(err, FAST_ENOMEM, "out of memory");
		}
		/* the hot receivers: the first `hot` of a partial shuffle */
		for (uint32_t i = 0; i < ng; i++)
			perm[i] = i;
		for (uint32_t i = 0; i < o->hot; i++) {
			uint32_t j = i + (uint32_t)fast_rng_below(rng, ng - i), x = perm[i];
			perm[i] = perm[j];
			perm[j] = x;
			is_hot[perm[i]] = true;
		}
		free(perm);
		size_t n = (size_t)snprintf(t->source, sizeof t->source,
					    "generated: hotspot hot=%u fraction=%g mean=%s seed=%llu "
					    "(fast gen) receivers",
					    o->hot, o->fraction, mean, (unsigned long long)o->seed);
		for (uint32_t g = 0; g < ng && n + 16 < sizeof t->source; g++)
			if (is_hot[g])
				n += (size_t)snprintf(t->source + n, sizeof t->source - n, " %u", g);
		break;
	}
	default:
		snprintf(t->source, sizeof t->source, "generated: %s mean=%s seed=%llu (fast gen)",
			 fast_gen_pattern_name(o->pattern), mean, (unsigned long long)o->seed);
		break;
	}
	for (uint32_t k = 0; k < t->count && rc == 0; k++) {
		uint64_t *m = t->m[k].bytes;
		switch (o->pattern) {
		case FAST_GEN_UNIFORM:
			fill_uniform(m, ng, M);
			break;
		case FAST_GEN_RANDOM:
			rc = fill_random(m, ng, total, rng, NULL, err);
			break;
		case FAST_GEN_ZIPF:
			rc = fill_random(m, ng, total, rng, zipf_cum, err);
			break;
		case FAST_GEN_HOTSPOT:
			rc = fill_hotspot(m, ng, M, is_hot, o->fraction, err);
			break;
		default:
			break;
		}
	}
	free(is_hot);
	return rc;
}

int fast_gen_traffic(const struct fast_gen_opts *o, const struct fast_limits *lim,
		     struct fast_traffic *out, struct fast_err *err)
{
	struct fast_traffic t;
	struct fast_rng rng;
	uint32_t count;
	int rc;

	rc = check_opts(o, err);
	if (rc < 0)
		return rc;
	count = o->pattern == FAST_GEN_MOE ? 2 * o->moe.steps : o->matrices;
	rc = fast_traffic_alloc(&t, o->ng, count, lim, err);
	if (rc < 0)
		return rc;
	fast_rng_seed(&rng, o->seed);
	if (o->pattern == FAST_GEN_MOE)
		rc = gen_moe(o, lim ? lim->max_groups : FAST_DEFAULT_MAX_GROUPS, &rng, &t, err);
	else
		rc = gen_matrices(o, &rng, &t, err);
	if (rc < 0) {
		fast_traffic_free(&t);
		return rc;
	}
	*out = t;
	return 0;
}
