/*
 * test_auto_feat.c - the feature pass of `--algo auto` (the vector and
 * scalar gathers of lib/compile/algo_auto_feat.c) against a naive
 * reference, field by field, and the decision against the previous one.
 *
 * lib/compile/algo_auto*.c are included, as test_exec includes exec/, so that
 * their static feature pass can be checked field by field.
 */
#include <string.h>

#include "lib/compile/algo_auto.c"
#include "lib/compile/algo_auto_feat.c"
#include "lib/compile/algo_auto_model.c"
#include "lib/compile/algo_auto_tokens.c"
#include "unit.h"

/* --- the feature pass against a naive reference -------------------------- */

/* The features from their definitions, one message at a time (the
 * previous code's block_max too: the most bytes one GPU sends one other
 * server, from which the previous decision took hier's floor). */
struct ref_feat {
	uint64_t send_x, recv_x, intra, pxn_nic, pxn_up, hier_nic, srv, hier_link, intra_msg;
	uint64_t largest, total, nnz, block_max, pair;
	uint32_t k_in, k_in_min;
};

static void ref_gather(const struct fast_topo *t, const uint64_t *D, struct ref_feat *r)
{
	uint32_t N = t->servers, G = t->gpus, ng = N * G;
	uint64_t *sx = calloc(ng, 8), *rx = calloc(ng, 8), *si = calloc(ng, 8), *ri = calloc(ng, 8);
	uint64_t *rl = calloc(ng, 8), *po = calloc(ng, 8), *hi = calloc(ng, 8), *kin = calloc(ng, 8);

	CU_ASSERT_FATAL(sx && rx && si && ri && rl && po && hi && kin);
	memset(r, 0, sizeof *r);
	r->k_in_min = N ? UINT32_MAX : 0;
	for (uint32_t s = 0; s < ng; s++)
		for (uint32_t d = 0; d < ng; d++) {
			uint64_t v = D[(size_t)s * ng + d];
			uint32_t A = s / G, i = s % G, B = d / G, j = d % G;
			if (s == d)
				continue;
			r->total += v;
			if (A == B) {
				si[s] += v, ri[d] += v;
				r->intra_msg = v > r->intra_msg ? v : r->intra_msg;
				continue;
			}
			sx[s] += v, rx[d] += v, kin[d] += v != 0;
			r->largest = v > r->largest ? v : r->largest;
			rl[s] += j == i ? v : 0;  /* rail: the same local index */
			po[A * G + j] += v;       /* PXN: rail j of server A carries column j */
			hi[B * G + i] += v;       /* hier: A_i -> B_i, then forwarded */
		}
	for (uint32_t s = 0; s < ng; s++)
		for (uint32_t B = 0; B < N; B++) {
			uint64_t b = 0;
			if (B == s / G)
				continue;
			for (uint32_t j = 0; j < G; j++)
				b += D[(size_t)s * ng + B * G + j];
			r->block_max = b > r->block_max ? b : r->block_max;
		}
	for (uint32_t A = 0; A < N; A++) /* the largest server pair */
		for (uint32_t B = 0; B < N; B++) {
			uint64_t b = 0;
			if (B == A)
				continue;
			for (uint32_t i = 0; i < G; i++)
				for (uint32_t j = 0; j < G; j++)
					b += D[(size_t)(A * G + i) * ng + B * G + j];
			r->pair = b > r->pair ? b : r->pair;
		}
	for (uint32_t B = 0; B < N; B++) {
		uint64_t row = 0, col = 0;
		for (uint32_t j = 0; j < G; j++) {
			uint32_t g = B * G + j;
			uint64_t up = si[g] + ri[g] + (sx[g] - rl[g]) + (po[g] - rl[g]);
			uint64_t link = G > 1 ? hi[g] / (G - 1) : 0;
			row += sx[g], col += rx[g];
#define REF_MAX(f, v) r->f = (v) > r->f ? (v) : r->f
			REF_MAX(send_x, sx[g]);
			REF_MAX(recv_x, rx[g]);
			REF_MAX(intra, si[g]);
			REF_MAX(intra, ri[g]);
			REF_MAX(pxn_nic, po[g]);
			REF_MAX(pxn_nic, rx[g]);
			REF_MAX(pxn_up, up);
			REF_MAX(hier_nic, sx[g]);
			REF_MAX(hier_nic, hi[g]);
			REF_MAX(hier_link, link);
			REF_MAX(k_in, (uint32_t)kin[g]);
			r->k_in_min = kin[g] < r->k_in_min ? (uint32_t)kin[g] : r->k_in_min;
			r->nnz += kin[g];
		}
		REF_MAX(srv, row);
		REF_MAX(srv, col);
#undef REF_MAX
	}
	free(sx), free(rx), free(si), free(ri), free(rl), free(po), free(hi), free(kin);
}

/* Spreadout's rounds from their definition (round d: GPU s sends s + d)
 * as its implementation runs them (sync, rates, per-step
 * costs where a tier's rounds so far -- its step's depth -- are a multiple
 * of in_flight, and by rank at a GPU's first message of the tier): by
 * step the sum of each round's largest message times, by rank each GPU
 * entering round d when its own messages of the rounds before are done
 * (every message's end the later of its GPUs' times, plus its own). */
static double ref_spread(const struct fast_topo *t, const uint64_t *D)
{
	const struct fast_impl *m = fast_topo_impl(t, "spreadout");
	uint32_t ng = t->servers * t->gpus, k = m->in_flight ? m->in_flight : 1, w[2] = { 0, 0 };
	double Bo = fast_impl_out_Bps(m, fast_tier_Bps(&t->out), 1), Bu = fast_impl_up_Bps(m, t);
	double sum = 0, E[1024], nx[1024], end = 0;
	bool seen[1024][2];

	CU_ASSERT_FATAL(ng <= 1024);
	for (uint32_t g = 0; g < ng; g++)
		E[g] = 0, seen[g][0] = seen[g][1] = false;
	for (uint32_t d = 1; d < ng; d++) {
		uint64_t mx[2] = { 0, 0 };
		for (uint32_t g = 0; g < ng; g++)
			nx[g] = E[g];
		for (uint32_t s = 0; s < ng; s++) {
			uint32_t r = (s + d) % ng;
			uint64_t v = D[(size_t)s * ng + r];
			int c = r / t->gpus != s / t->gpus;
			bool pays = w[c] % k == 0 || (k > 1 && (!seen[s][c] || !seen[r][c]));
			double e;
			mx[c] = v > mx[c] ? v : mx[c];
			if (!v)
				continue;
			e = (E[s] > E[r] ? E[s] : E[r]) + (pays ? fast_tier_step_s(c ? &t->out : &t->up) : 0) +
			    (double)v / (c ? Bo : Bu);
			nx[s] = e > nx[s] ? e : nx[s];
			nx[r] = e > nx[r] ? e : nx[r];
			end = e > end ? e : end;
		}
		for (uint32_t s = 0; s < ng; s++) {
			uint32_t r = (s + d) % ng;
			int c = r / t->gpus != s / t->gpus;
			if (D[(size_t)s * ng + r])
				seen[s][c] = seen[r][c] = true;
		}
		for (uint32_t g = 0; g < ng; g++)
			E[g] = nx[g];
		double o = mx[1] ? (w[1] % k == 0 ? fast_tier_step_s(&t->out) : 0) + (double)mx[1] / Bo : 0;
		double u = mx[0] ? (w[0] % k == 0 ? fast_tier_step_s(&t->up) : 0) + (double)mx[0] / Bu : 0;
		sum += o > u ? o : u;
		w[0] += mx[0] != 0;
		w[1] += mx[1] != 0;
	}
	return m->sync == FAST_IMPL_SYNC_RANK ? end : sum;
}

/* The full prediction's decision: every candidate predicted exactly --
 * spreadout's rounds, FAST's largest server pair -- on the reference's
 * features (f: gather's, the reference's written over it, so that a
 * feature added later goes in as gather computes it), and the tie rule.
 * fast_auto_choose must choose as it does, from its floors, and
 * fast_auto_predict must give its predictions bit for bit. */
static void ref_decide(const struct fast_topo *t, const uint64_t *D, const struct fast_algo_opts *o,
		       const struct ref_feat *r, struct feat f, struct fast_auto_choice *out)
{
	struct fast_auto_feat x;
	double best = INFINITY, T[FAST_AUTO_MAX];

	f.send_x = r->send_x, f.recv_x = r->recv_x, f.intra = r->intra, f.pxn_nic = r->pxn_nic;
	f.pxn_up = r->pxn_up, f.hier_nic = r->hier_nic, f.srv = r->srv, f.hier_link = r->hier_link;
	f.intra_msg = r->intra_msg, f.k_in = r->k_in, f.total = r->total, f.nnz = r->nnz;
	f.k_in_min = r->k_in_min;
	f.largest = r->largest, f.pair = r->pair;
	f.exact_pair = f.exact_hier = true;
	feat_init(&x, t, D);
	x.f = f;
	x.spread_s = ref_spread(t, D), x.exact_spread = true;
	memset(out, 0, sizeof *out);
	for (const struct fast_algo *a = fast_algos; a->name; a++) {
		uint32_t k = out->n;
		if (!a->model.predict)
			continue;
		out->algo[k] = a->name;
		out->dedup[k] = FAST_DEDUP_GPU;
		out->n++;
		CU_ASSERT(!a->model.predict(a, &x, o, &out->sim_s[k], &out->synth_s[k])); /* exact */
		T[k] = out->sim_s[k] + out->synth_s[k];
		best = dmin(best, T[k]);
	}
	for (uint32_t k = 0; k < out->n; k++)
		if (T[k] <= best * (1 + TIE_REL) + TIE_ABS_S) {
			out->best = k;
			break;
		}
}

/* The index of candidate name among the table's */
static uint32_t cand_of(const char *name)
{
	uint32_t k = 0;

	for (const struct fast_algo *a = fast_algos; a->name && strcmp(a->name, name); a++)
		k += a->model.predict != NULL;
	return k;
}

static uint64_t mix64(uint64_t *x)
{
	uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

enum ref_pattern { P_UNIFORM, P_SKEWED, P_SPARSE, P_EMPTY, P_ONE_HOT, P_HOT_DIAGONAL, P_OVERFLOW, P_PATTERNS };

/* One seeded matrix: mean pair bytes `pair` (uniform within 0.5..1.5x;
 * skewed: x u^6, a few zeros; sparse: two thirds zero; one message;
 * a diagonal above every message; near 2^64, where the sums wrap) */
static void ref_matrix(enum ref_pattern p, uint32_t ng, uint64_t pair, uint64_t seed, uint64_t *D)
{
	uint64_t x = seed;

	for (size_t e = 0; e < (size_t)ng * ng; e++) {
		uint64_t r = mix64(&x), u = r >> 11; /* 53 random bits */
		double f = (double)u / 9007199254740992.0;
		switch (p) {
		case P_UNIFORM:
			D[e] = (uint64_t)((double)pair * (0.5 + f));
			break;
		case P_SKEWED:
			D[e] = r % 16 == 0 ? 0 : (uint64_t)((double)pair * 4 * f * f * f * f * f * f);
			break;
		case P_SPARSE:
			D[e] = r % 3 ? 0 : (uint64_t)((double)pair * (0.5 + f));
			break;
		case P_HOT_DIAGONAL:
			D[e] = e % ((size_t)ng + 1) == 0 ? UINT64_C(1) << 60 : (uint64_t)((double)pair * (0.5 + f));
			break;
		case P_OVERFLOW:
			D[e] = r % 4 == 0 ? UINT64_MAX - r % 1024 : (r % 4 == 1 ? (UINT64_C(1) << 63) + r % 4096 : r >> (r % 64));
			break;
		default:
			D[e] = 0;
		}
	}
	if (p == P_ONE_HOT)
		D[mix64(&x) % ((size_t)ng * ng)] = pair;
}

/* gather's features, by whichever path this CPU takes (a vector one for
 * G = 8 where the CPU has it), the scalar path's and, where the CPU has
 * AVX2, the AVX2 path's, all equal the reference's; the second pass's
 * rounds too.  The previous decision's
 * choice and, for fast_auto_predict, its every prediction are the
 * current code's: on 3 presets, 1..64 servers of 8 GPUs and 1..5 or 6
 * servers of 1..16 GPUs, every pattern, 4 KiB..4 GiB per pair, two chunk
 * sizes for hier; where a block sum wraps past 2^64 (P_OVERFLOW, beyond
 * any input the loaders accept: 2^53 a message) only the features. */
static void test_auto__feature_pass_matches_reference(void)
{
	static const char *presets[] = { "h200", "mi300x-100g", "mi300x" };
	static const uint32_t shapes[][2] = { { 1, 8 }, { 2, 8 }, { 3, 8 }, { 4, 8 }, { 5, 8 }, { 8, 8 },
					      { 16, 8 }, { 33, 8 }, { 64, 8 }, { 1, 1 }, { 3, 1 }, { 2, 2 },
					      { 5, 3 }, { 4, 4 }, { 3, 5 }, { 2, 7 }, { 6, 9 }, { 2, 16 } };
	static const uint64_t pairs[] = { UINT64_C(4) << 10, UINT64_C(64) << 10, UINT64_C(1) << 20,
					  UINT64_C(64) << 20, UINT64_C(4) << 30 };
	unsigned matrices = 0, choices = 0, picked[FAST_AUTO_MAX] = { 0 };
	uint64_t seed = 11;

	for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; sh++) {
		uint32_t N = shapes[sh][0], G = shapes[sh][1], ng = N * G;
		uint64_t *D = malloc((size_t)ng * ng * sizeof *D);
		CU_ASSERT_FATAL(D != NULL);
		for (int pr = 0; pr < 3; pr++)
			for (int p = 0; p < P_PATTERNS; p++)
				for (size_t z = 0; z < sizeof pairs / sizeof pairs[0]; z++) {
					struct fast_limits lim;
					struct fast_topo t;
					struct fast_err err;
					struct fast_algo_opts o;
					struct ref_feat r;
					struct feat f, fg, f2;
					double spread;
					/* the large shapes: fewer sizes */
					if (ng >= 256 && z % 2)
						continue;
					fast_limits_default(&lim);
					CU_ASSERT_EQUAL_FATAL(fast_topo_preset(presets[pr], N, G, &lim, &t, &err), 0);
					ref_matrix((enum ref_pattern)p, ng, pairs[z], seed++, D);
					ref_gather(&t, D, &r);
					CU_ASSERT_EQUAL_FATAL(auto_gather(&t, D, &f), 0);
					/* the pair where the taken path found it, hier's
					 * loads from their pass where it did not */
					if (f.exact_pair)
						CU_ASSERT_EQUAL(f.pair, r.pair);
					if (!f.exact_hier) {
						struct feat h = f;
						auto_hier_floors(&t, &h); /* floors, never above */
						CU_ASSERT(h.hier_nic <= r.hier_nic && h.hier_link <= r.hier_link &&
							  h.largest <= r.largest);
					}
					CU_ASSERT_EQUAL_FATAL(auto_hier_pass(&t, D, &f), 0);
					CU_ASSERT_EQUAL_FATAL(gather_g(&t, D, &fg, G), 0);
					f2 = fg;
#if defined(__x86_64__) && defined(__GNUC__)
					if (G == 8 && __builtin_cpu_supports("avx2"))
						CU_ASSERT_EQUAL_FATAL(gather8_avx2(D, N, &f2), 0);
#endif
					matrices++;
					for (int path = 0; path < 3; path++) {
						const struct feat *q = path == 2 ? &f2 : path ? &fg : &f;
						bool same = q->send_x == r.send_x && q->recv_x == r.recv_x &&
							    q->intra == r.intra && q->pxn_nic == r.pxn_nic &&
							    q->pxn_up == r.pxn_up && q->hier_nic == r.hier_nic &&
							    q->srv == r.srv && q->hier_link == r.hier_link &&
							    q->intra_msg == r.intra_msg && q->k_in == r.k_in &&
							    q->k_in_min == r.k_in_min &&
							    q->largest == r.largest && q->total == r.total &&
							    q->nnz == r.nnz;
						CU_ASSERT(same);
						if (!same)
							fprintf(stderr, "\n%s %ux%u pattern %d pair %llu: %s path differs\n",
								presets[pr], N, G, p, (unsigned long long)pairs[z],
								path == 2 ? "AVX2" : path ? "scalar" : "taken");
					}
					CU_ASSERT_EQUAL(auto_spread_pass(&t, D, &spread), 0);
					CU_ASSERT_EQUAL(spread, ref_spread(&t, D));
					CU_ASSERT_EQUAL(auto_pair_pass(&t, D), r.pair); /* the pass this CPU takes */
					CU_ASSERT_EQUAL(pair_pass_g(D, N, G), r.pair);
					if (r.largest > UINT64_MAX / G) /* block sums may wrap */
						continue;
					fast_algo_opts_default(&o);
					for (int ck = 0; ck < 2; ck++) {
						struct fast_auto_choice c, c0, pn;
						o.chunk_bytes = ck ? UINT64_C(4) << 10 : 0;
						fast_auto_choose(&t, D, &o, &c);
						fast_auto_predict(&t, D, &o, &pn);
						ref_decide(&t, D, &o, &r, f, &c0);
						CU_ASSERT_EQUAL(c.best, c0.best);
						CU_ASSERT_EQUAL(pn.best, c0.best);
						CU_ASSERT_EQUAL(memcmp(&pn, &c0, sizeof pn), 0);
						if (c.best != c0.best || memcmp(&pn, &c0, sizeof pn) != 0)
							fprintf(stderr, "\n%s %ux%u pattern %d pair %llu chunk %d: chose %s, "
								"fully predicted %s\n", presets[pr], N, G, p,
								(unsigned long long)pairs[z], ck, c.algo[c.best],
								c0.algo[c0.best]);
						choices++;
						picked[c.best]++;
					}
				}
		free(D);
	}
	/* the cases reach several choices, not one */
	CU_ASSERT(matrices >= 1500);
	CU_ASSERT(choices >= 2500);
	CU_ASSERT(picked[cand_of("fast")] > 0 && picked[cand_of("fanout")] > 0 &&
		  picked[cand_of("hier")] + picked[cand_of("pxn")] + picked[cand_of("nccl")] > 0);
}

UNIT_MAIN("auto_feat",
	  UNIT_TEST(test_auto__feature_pass_matches_reference))
