/*
 * bvn_search.c - the alpha-aware decomposition behind `--stages auto`
 * (fast_bvn_search, bvn.h; not `--algo auto`, which is algo_auto.c): a
 * search over quanta, each candidate decomposed with a running lower bound
 * that stops it once it cannot beat the best so far, improved by pairwise
 * exchange, and for small server counts hybrids of an exact prefix with a
 * quantised cover.  Built on the exact decomposition's matcher, terms and
 * trim (bvn.c, bvn_match.c, shared through bvn_internal.h).
 */
#include "lib/compile/bvn.h"
#include "lib/compile/bvn_internal.h"

#include <stdlib.h>
#include <string.h>

/* --- alpha-aware search ------------------------------------------------ */

/* The quantum search: candidates run with a tracker, so a candidate stops
 * as soon as its running modelled time passes the best complete one. */
struct search {
	const uint64_t *S;
	uint32_t n;
	struct fast_bvn_model m;
	uint64_t *rem, *line; /* the tracker's: n x n, 2n */
	uint32_t *nz;         /* 2n, the tracker's */
	uint64_t *line0;      /* 2n: the tracker's start on S (fast_bvn_tracker_lines) */
	uint32_t *nz0;        /* 2n, the same */
	uint32_t *scratch; /* 3n words for exchange() */
	struct work *wk;   /* the candidates' scratch */
	struct fast_bvn best;     /* trimmed */
	struct fast_bvn best_raw; /* the same before trimming */
	double best_t; /* < 0: none yet */
	uint32_t tried;
};

/* Pairwise exchange between terms of equal weight, a local improvement of
 * the stage costs.  For terms k and l, the rows split into the cycles of
 * A -> perm_l^-1(perm_k(A)); swapping the targets of one whole cycle
 * between k and l leaves both permutations valid and, the weights being
 * equal, the sum w_k P_k + w_l P_l unchanged (the decomposition stays
 * exact).  A term's trimmed weight is about the largest entry of S it
 * carries, so each cycle puts its larger side in the earlier term: for the
 * pair that minimises (largest of k) + (largest of l), and over all pairs
 * it groups large entries with large ones.  O(pairs * n); the pairs per
 * term are capped so that a pass stays near 2 * 10^4 pairs. */
#define DONE UINT32_MAX

static void exchange(struct fast_bvn *b, const uint64_t *S, uint32_t *scratch)
{
	uint32_t n = b->n, K = b->nterms, *sg = scratch, *cyc = scratch + n, len;
	uint32_t window = K > 1 ? 20000 / K : 0;
	uint32_t *inv;
	uint64_t *v;

	if (K < 2)
		return;
	/* v[k * n + A] = the entry term k carries for row A (0 when idle);
	 * inv[k * n + B] = the row term k sends to column B, kept up to date
	 * through the swaps (a swapped cycle keeps its set of columns) */
	v = fast_calloc((size_t)K * n, sizeof *v);
	inv = fast_calloc((size_t)K * n, sizeof *inv);
	if (!v || !inv) {
		free(v);
		free(inv);
		return; /* an optimisation only */
	}
	for (uint32_t k = 0; k < K; k++)
		for (uint32_t a = 0; a < n; a++) {
			uint32_t c = b->perm[(size_t)k * n + a];
			v[(size_t)k * n + a] = c == a ? 0 : S[(size_t)a * n + c];
			inv[(size_t)k * n + c] = a;
		}
	if (window < 1)
		window = 1;
	for (uint32_t k = 0; k + 1 < K; k++) {
		uint32_t *pk = b->perm + (size_t)k * n, *ik = inv + (size_t)k * n;
		uint64_t *vk = v + (size_t)k * n;
		uint32_t last = k + window < K - 1 ? k + window : K - 1;
		for (uint32_t l = k + 1; l <= last; l++) {
			uint32_t *pl = b->perm + (size_t)l * n, *il = inv + (size_t)l * n;
			uint64_t *vl = v + (size_t)l * n;
			if (b->weight[l] != b->weight[k])
				continue;
			/* sg = the cycle map, one load a step; a row is marked
			 * DONE as its cycle is walked (a swap keeps every other
			 * cycle's rows, columns and so map) */
			for (uint32_t a = 0; a < n; a++)
				sg[a] = il[pk[a]];
			for (uint32_t a = 0; a < n; a++) {
				uint64_t mk, ml;
				uint32_t c;
				if (sg[a] == a || sg[a] == DONE)
					continue; /* a fixed row, or a cycle seen */
				mk = vk[a];
				ml = vl[a];
				len = 0;
				cyc[len++] = a;
				c = sg[a];
				sg[a] = DONE;
				while (c != a) {
					uint32_t next = sg[c];
					sg[c] = DONE;
					cyc[len++] = c;
					mk = vk[c] > mk ? vk[c] : mk;
					ml = vl[c] > ml ? vl[c] : ml;
					c = next;
				}
				if (ml <= mk)
					continue;
				/* swap the cycle's targets: its rows' targets are
				 * distinct in k and in l, so the rows may go in any
				 * order */
				for (uint32_t x = 0; x < len; x++) {
					uint32_t r = cyc[x], ck = pk[r], cl = pl[r];
					uint64_t tv = vk[r];
					pk[r] = cl;
					pl[r] = ck;
					vk[r] = vl[r];
					vl[r] = tv;
					ik[cl] = r;
					il[ck] = r;
				}
			}
		}
	}
	free(v);
	free(inv);
}

static int copy_bvn(const struct fast_bvn *b, struct fast_bvn *out)
{
	*out = *b;
	out->perm = fast_calloc((size_t)b->nterms * b->n + 1, sizeof *out->perm);
	out->weight = fast_calloc((size_t)b->nterms + 1, sizeof *out->weight);
	if (!out->perm || !out->weight) {
		free(out->perm);
		free(out->weight);
		out->perm = NULL;
		out->weight = NULL;
		return FAST_ENOMEM;
	}
	if (b->nterms) {
		memcpy(out->perm, b->perm, (size_t)b->nterms * b->n * sizeof *out->perm);
		memcpy(out->weight, b->weight, (size_t)b->nterms * sizeof *out->weight);
	}
	return 0;
}

/* Try quantum q; *completed tells whether it ran to the end (and so its
 * time is known, in *t). */
static int try_quantum(struct search *sr, uint64_t q, bool polish, bool *completed, double *t,
		       struct fast_err *err)
{
	struct tracker tr;
	struct fast_bvn b, raw;
	int rc;

	tr.S = sr->S;
	tr.rem = sr->rem;
	tr.line = sr->line;
	tr.nz = sr->nz;
	tr.m = sr->m;
	tr.limit = sr->best_t < 0 ? 1e300 : sr->best_t;
	fast_bvn_tracker_start(&tr, sr->n, sr->line0, sr->nz0);
	sr->tried++;
	*completed = false;
	*t = tr.limit;
	/* S is the caller's checked matrix or what a prefix leaves of it */
	rc = fast_bvn_quantized_with(sr->wk, sr->S, sr->n, q, true, &tr, &b, err);
	if (rc < 0)
		return rc;
	if (rc == ABORTED)
		return 0;
	*completed = true;
	if (polish)
		exchange(&b, sr->S, sr->scratch);
	if ((rc = copy_bvn(&b, &raw)) < 0) {
		fast_bvn_free(&b);
		return fast_err_set(err, rc, "alpha-aware decomposition: out of memory");
	}
	fast_bvn_trim_with(&b, sr->S, sr->wk->rem);
	*t = fast_bvn_time(&b, &sr->m);
	if (sr->best_t < 0 || *t < sr->best_t || (*t == sr->best_t && q < sr->best.quantum)) {
		fast_bvn_free(&sr->best);
		fast_bvn_free(&sr->best_raw);
		sr->best = b;
		sr->best_raw = raw;
		sr->best_t = *t;
	} else {
		fast_bvn_free(&b);
		fast_bvn_free(&raw);
	}
	return 0;
}

/* The quantum search on sr->S, whose largest entry is big: from q =
 * min(start, big) (q = big: every non-zero entry becomes one unit, a
 * permutation cover of the support, trimmed) down by octaves; stop after
 * `patience` octaves without improvement (the modelled time is about
 * unimodal in log q), then try half an octave on either side of the best.
 * Only candidates that beat sr->best_t are kept (best_t < 0: none yet). */
static int quanta(struct search *sr, uint64_t big, uint64_t start, int patience,
		  struct fast_err *err)
{
	uint64_t qbest;
	bool done;
	double t;
	int rc, worse = 0;

	for (uint64_t q = start < big ? start : big; q >= 2 && worse < patience; q /= 2) {
		double before = sr->best_t;
		/* the first one (a permutation cover of the support, all
		 * weights equal) gains most from exchange: polish it now */
		if ((rc = try_quantum(sr, q, q == big, &done, &t, err)) < 0)
			return rc;
		worse = done && (before < 0 || t < before) ? 0 : worse + 1;
	}
	qbest = sr->best.quantum;
	if (qbest > 1) {
		static const double f[] = { 0.7071, 1.4142 };
		for (size_t k = 0; k < sizeof f / sizeof f[0]; k++) {
			double qd = (double)qbest * f[k];
			if (qd < 2 || qd > (double)big)
				continue;
			if ((rc = try_quantum(sr, (uint64_t)qd, false, &done, &t, err)) < 0)
				return rc;
		}
	}
	return 0;
}

/*
 * Bottleneck-prefix hybrids.  A quantised decomposition rounds every entry
 * up, which costs bytes on every line; an exact one costs a stage per
 * term, and most of its terms carry little.  The hybrid takes the large
 * terms exactly and covers only the small remainder by the quantum
 * search.  The exact part uses threshold ("bottleneck") matchings: a
 * perfect matching among the entries >= r of the padded matrix, r lowered
 * by 1/32 whenever none exists, so each term takes about the largest
 * weight any permutation can take, and a few terms carry most of M.  Each
 * time the largest line of what S still needs falls under M / 2^(j/2),
 * the remainder gets the quantum search (limited to what could still win),
 * and the prefix plus its cover is a candidate; the complete bottleneck
 * decomposition is one too.  All candidates are judged by the same trimmed
 * model as the others, so the hybrid never loses to them in the model.
 */

#define HYBRID_MAX_N 64 /* above: quantum search only (synthesis-time budget) */
#define PATIENCE 1 /* octaves without improvement before a checkpoint's search stops */

/*
 * The entries of R outside the threshold support, a max-heap by value.  The
 * support is always {R[i][j] >= r, > 0}: entries only decrease, and only
 * while matched (inside the support), so an entry's value is fixed while it
 * waits here.  Lowering r then adds exactly the entries of [r', r) by
 * popping, instead of a scan of all n^2 entries per step, and a step that
 * adds nothing (the heap's top is under r') needs no matching attempt: the
 * matching and the support are the same as after the failed one.
 */
struct waiting {
	uint64_t v; /* the entry's value (the heap key) */
	uint32_t x; /* i * n + j */
};

struct pending {
	struct waiting *h;
	uint32_t len;
};

static bool pending_above(const struct pending *p, uint64_t lo)
{
	return p->len > 0 && p->h[0].v >= lo;
}

static void pending_sift_down(struct pending *p, uint32_t k)
{
	struct waiting e = p->h[k], *h = p->h;

	for (;;) {
		uint32_t c = 2 * k + 1;
		if (c >= p->len)
			break;
		if (c + 1 < p->len && h[c + 1].v > h[c].v)
			c++;
		if (h[c].v <= e.v)
			break;
		h[k] = h[c];
		k = c;
	}
	h[k] = e;
}

static void pending_push(struct pending *p, uint64_t v, uint32_t x)
{
	uint32_t k = p->len++;

	while (k > 0 && p->h[(k - 1) / 2].v < v) {
		p->h[k] = p->h[(k - 1) / 2];
		k = (k - 1) / 2;
	}
	p->h[k].v = v;
	p->h[k].x = x;
}

/* Put every positive entry of R under r on the heap, the rest (>= r) in the
 * support. */
static void pending_init(struct pending *p, struct matcher *m, uint64_t r)
{
	uint32_t n = m->n;

	p->len = 0;
	for (uint32_t i = 0; i < n; i++)
		for (uint32_t j = 0; j < n; j++) {
			uint64_t v = m->R[(size_t)i * n + j];
			if (v >= r)
				m->sup[(size_t)i * m->W + j / 64] |= UINT64_C(1) << (j % 64);
			else if (v) {
				p->h[p->len].v = v;
				p->h[p->len++].x = i * n + j;
			}
		}
	for (uint32_t k = p->len / 2; k-- > 0;)
		pending_sift_down(p, k);
}

/* Move every waiting entry >= lo into the support; true when one of them
 * lies in a row the last failed matching search reached (only then can a
 * new search augment: fast_bvn_row_reached). */
static bool pending_pop_to(struct pending *p, struct matcher *m, uint64_t lo)
{
	bool reached = false;

	while (pending_above(p, lo)) {
		uint32_t x = p->h[0].x, i = x / m->n, j = x % m->n;
		m->sup[(size_t)i * m->W + j / 64] |= UINT64_C(1) << (j % 64);
		reached |= fast_bvn_row_reached(m, i);
		p->h[0] = p->h[--p->len];
		if (p->len)
			pending_sift_down(p, 0);
	}
	return reached;
}

/* Candidate: the first nprefix terms of t (raw weights), then cover
 * (trimmed against what the prefix leaves of S); kept in sr->best if its
 * trimmed modelled time beats it.  quantum = the cover's (1: none). */
static int hybrid_candidate(struct search *sr, const struct terms *t, const struct fast_bvn *cover,
			    uint64_t quantum, uint32_t *prefix_out, struct fast_err *err)
{
	uint32_t n = sr->n, K = t->count + (cover ? cover->nterms : 0);
	struct fast_bvn b;
	double tm;

	memset(&b, 0, sizeof b);
	b.n = n;
	b.nterms = K;
	b.quantum = quantum;
	b.perm = fast_calloc((size_t)K * n + 1, sizeof *b.perm);
	b.weight = fast_calloc((size_t)K + 1, sizeof *b.weight);
	if (!b.perm || !b.weight) {
		fast_bvn_free(&b);
		return fast_err_set(err, FAST_ENOMEM, "alpha-aware decomposition: out of memory");
	}
	memcpy(b.perm, t->perm, (size_t)t->count * n * sizeof *b.perm);
	memcpy(b.weight, t->weight, (size_t)t->count * sizeof *b.weight);
	if (cover && cover->nterms) {
		memcpy(b.perm + (size_t)t->count * n, cover->perm,
		       (size_t)cover->nterms * n * sizeof *b.perm);
		memcpy(b.weight + t->count, cover->weight, cover->nterms * sizeof *b.weight);
	}
	fast_bvn_trim_with(&b, sr->S, sr->wk->rem);
	tm = fast_bvn_time(&b, &sr->m);
	if (sr->best_t < 0 || tm < sr->best_t) {
		fast_bvn_free(&sr->best);
		fast_bvn_free(&sr->best_raw); /* no exchange polish for hybrids */
		sr->best = b;
		sr->best_t = tm;
		*prefix_out = t->count;
	} else {
		fast_bvn_free(&b);
	}
	return 0;
}

/* One hybrid search's state: the padded matrix R being decomposed, its
 * matcher and the entries waiting below the support threshold; what S
 * still needs after the prefix found so far (rem), with its line sums
 * (row, col) and off-diagonal non-zero counts (rc_nz, cc_nz); the
 * prefix's terms; and a checkpoint's scratch (snap, line0, nz0). */
struct hyb {
	uint32_t n;
	uint64_t *R, *rem, *snap, *row, *col, *line0;
	uint32_t *rc_nz, *cc_nz, *nz0;
	struct matcher m;
	struct terms t;
	struct pending pend;
};

static void hyb_free(struct hyb *h)
{
	if (h->m.n)
		fast_bvn_matcher_free(&h->m);
	free(h->t.perm);
	free(h->t.weight);
	free(h->R);
	free(h->rem);
	free(h->snap);
	free(h->row);
	free(h->col);
	free(h->rc_nz);
	free(h->cc_nz);
	free(h->line0);
	free(h->nz0);
	free(h->pend.h);
}

/* R = S padded (*M its line sum; 0: nothing to decompose), rem = S with
 * its line sums and counts, *r = R's largest entry; then, when M > 0,
 * the matcher on the support of the entries >= r, the rest pending. */
static int hyb_init(struct hyb *h, const struct search *sr, uint64_t *M, uint64_t *r,
		    struct fast_err *err)
{
	uint32_t n = sr->n;
	size_t nn = (size_t)n * n;
	int rc;

	memset(h, 0, sizeof *h);
	h->n = n;
	h->t.n = n;
	h->pend.h = fast_calloc(nn + 1, sizeof *h->pend.h);
	h->R = fast_calloc(nn + 1, sizeof *h->R);
	h->rem = fast_calloc(nn + 1, sizeof *h->rem);
	h->snap = fast_calloc(nn + 1, sizeof *h->snap);
	h->row = fast_calloc(n + 1, sizeof *h->row);
	h->col = fast_calloc(n + 1, sizeof *h->col);
	h->rc_nz = fast_calloc(n + 1, sizeof *h->rc_nz);
	h->cc_nz = fast_calloc(n + 1, sizeof *h->cc_nz);
	h->line0 = fast_calloc(2 * (size_t)n, sizeof *h->line0);
	h->nz0 = fast_calloc(2 * (size_t)n, sizeof *h->nz0);
	if (!h->R || !h->rem || !h->snap || !h->row || !h->col || !h->rc_nz || !h->cc_nz ||
	    !h->pend.h || !h->line0 || !h->nz0)
		return fast_err_set(err, FAST_ENOMEM, "alpha-aware decomposition: out of memory");
	memcpy(h->R, sr->S, nn * sizeof *h->R);
	memcpy(h->rem, sr->S, nn * sizeof *h->rem);
	if ((rc = fast_bvn_pad(h->R, n, M, err)) < 0)
		return rc;
	(void)fast_bvn_line_sums(sr->S, n, h->row, h->col); /* no overflow: pad checked */
	for (uint32_t i = 0; i < n; i++)
		for (uint32_t j = 0; j < n; j++)
			if (i != j && sr->S[(size_t)i * n + j]) {
				h->rc_nz[i]++;
				h->cc_nz[j]++;
			}
	*r = 0;
	for (size_t k = 0; k < nn; k++)
		*r = h->R[k] > *r ? h->R[k] : *r;
	if (*M == 0)
		return 0;
	if (!fast_bvn_matcher_init(&h->m, h->R, n))
		return fast_err_set(err, FAST_ENOMEM, "alpha-aware decomposition: out of memory");
	memset(h->m.sup, 0, (size_t)n * h->m.W * sizeof *h->m.sup);
	pending_init(&h->pend, &h->m, *r);
	return 0;
}

/* Subtract term (the matching, weight w) from R, and what it carries
 * from rem and its lines; entries of R that fall below r leave the
 * support (pending while non-zero).  Returns the most the term carries
 * for one pair: its stage's budget. */
static uint64_t hyb_subtract(struct hyb *h, uint64_t w, uint64_t r)
{
	uint32_t n = h->n;
	struct matcher *m = &h->m;
	uint64_t need = 0;

	for (uint32_t i = 0; i < n; i++) {
		uint32_t j = (uint32_t)m->rm[i];
		uint64_t *e = &h->R[(size_t)i * n + j];
		if (j != i) {
			uint64_t *q = &h->rem[(size_t)i * n + j], s = *q < w ? *q : w;
			if (s && s == *q) {
				h->rc_nz[i]--;
				h->cc_nz[j]--;
			}
			*q -= s;
			h->row[i] -= s;
			h->col[j] -= s;
			need = s > need ? s : need;
		}
		*e -= w;
		if (*e < r) {
			m->sup[(size_t)i * m->W + j / 64] &= ~(UINT64_C(1) << (j % 64));
			fast_bvn_unmatch_row(m, i);
			if (*e)
				pending_push(&h->pend, *e, i * n + j);
		}
	}
	return need;
}

/* A checkpoint: the remainder rem searched over quanta as a matrix of its
 * own, from an octave above the last checkpoint's quantum (*qlast), and
 * the prefix with its best cover offered as a candidate; tp is the
 * prefix's modelled time. */
static int hyb_checkpoint(struct search *sr, struct hyb *h, double tp, uint64_t *qlast,
			  uint32_t *prefix_out, struct fast_err *err)
{
	uint32_t n = h->n;
	size_t nn = (size_t)n * n;
	struct search sub = *sr;
	uint64_t big = 0;
	int rc;

	memcpy(h->snap, h->rem, nn * sizeof *h->snap);
	for (size_t k = 0; k < nn; k++)
		big = h->snap[k] > big ? h->snap[k] : big;
	sub.S = h->snap;
	sub.line0 = h->line0;
	sub.nz0 = h->nz0;
	/* the tracker's start on snap, from the line sums and counts kept
	 * (those off the diagonal; the diagonal of S is never subtracted) */
	for (uint32_t i = 0; i < n; i++) {
		uint64_t dg = h->snap[(size_t)i * n + i];
		h->line0[i] = h->row[i] - dg;
		h->line0[n + i] = h->col[i] - dg;
		h->nz0[i] = h->rc_nz[i];
		h->nz0[n + i] = h->cc_nz[i];
	}
	memset(&sub.best, 0, sizeof sub.best);
	memset(&sub.best_raw, 0, sizeof sub.best_raw);
	sub.best_t = sr->best_t < 0 ? -1 : sr->best_t - tp;
	sub.tried = 0;
	/* the remainder shrinks as the prefix grows: start an octave above
	 * the last checkpoint's quantum */
	rc = quanta(&sub, big, *qlast > UINT64_MAX / 2 ? UINT64_MAX : 2 * *qlast, PATIENCE, err);
	sr->tried += sub.tried;
	if (rc == 0 && sub.best.nterms) {
		*qlast = sub.best.quantum;
		rc = hybrid_candidate(sr, &h->t, &sub.best, sub.best.quantum, prefix_out, err);
	}
	fast_bvn_free(&sub.best);
	fast_bvn_free(&sub.best_raw);
	return rc;
}

/* The bottleneck-prefix hybrids described above; stops once no completion
 * of the prefix can beat the best candidate. */
static int hybrid(struct search *sr, uint32_t *prefix_out, struct fast_err *err)
{
	uint32_t n = sr->n, d;
	uint64_t M = 0, left, r = 0, L = 0, max_terms = fast_bvn_max_terms(n), qlast = UINT64_MAX;
	double tp = 0, level;
	struct hyb h;
	int rc;

	if ((rc = hyb_init(&h, sr, &M, &r, err)) < 0 || M == 0)
		goto out;
	level = (double)M * 0.70710678;
	for (left = M; left > 0;) {
		uint64_t w = UINT64_MAX, need;

		while (!fast_bvn_hopcroft_karp(&h.m)) {
			/* lower r by 1/32 steps until some entry joins a row the
			 * failed search reached (entries elsewhere join too, but
			 * alone they leave that search's answer as it was) */
			do {
				if (r <= 1) {
					rc = fast_err_set(err, FAST_ERUNTIME,
							  "decomposition: no perfect matching on the support");
					goto out;
				}
				r = r - r / 32 - 1;
			} while (!pending_above(&h.pend, r) || !pending_pop_to(&h.pend, &h.m, r));
		}
		for (uint32_t i = 0; i < n; i++) {
			uint64_t v = h.R[(size_t)i * n + (uint32_t)h.m.rm[i]];
			w = v < w ? v : w;
		}
		if (!fast_bvn_terms_push(&h.t, h.m.rm, w, max_terms)) {
			rc = fast_err_set(err, h.t.count >= max_terms ? FAST_ERUNTIME : FAST_ENOMEM,
					  "decomposition of %ux%u: %s", n, n,
					  h.t.count >= max_terms ? "term bound exceeded" : "out of memory");
			goto out;
		}
		need = hyb_subtract(&h, w, r);
		left -= w;
		if (need)
			tp += sr->m.stage_s + (double)need / sr->m.Bps;
		L = 0;
		d = 0;
		for (uint32_t i = 0; i < n; i++) {
			L = h.row[i] > L ? h.row[i] : L;
			L = h.col[i] > L ? h.col[i] : L;
			d = h.rc_nz[i] > d ? h.rc_nz[i] : d;
			d = h.cc_nz[i] > d ? h.cc_nz[i] : d;
		}
		/* what is left needs L bytes on its fullest line and a stage
		 * per non-zero entry of its densest line: tp + L / B + d * c
		 * bounds every completion of this prefix, and never decreases
		 * along it (a term costs c + need / B and lowers L by at most
		 * need, d by at most one) */
		if (sr->best_t >= 0 &&
		    tp + (double)L / sr->m.Bps + d * sr->m.stage_s >= sr->best_t)
			goto out;
		if (L == 0 || left == 0) {
			rc = hybrid_candidate(sr, &h.t, NULL, 1, prefix_out, err);
			goto out;
		}
		if ((double)L <= level) {
			while (level >= (double)L)
				level *= 0.70710678;
			if ((rc = hyb_checkpoint(sr, &h, tp, &qlast, prefix_out, err)) < 0)
				goto out;
		}
	}
out:
	hyb_free(&h);
	return rc;
}

int fast_bvn_search(const uint64_t *S, uint32_t n, const struct fast_bvn_model *m,
		  struct fast_bvn *out, struct fast_bvn_search_info *info,
		  struct fast_err *err)
{
	struct search sr;
	struct work wk;
	uint64_t big = 0;
	bool exact_done = false;
	double t, exact_t = 0;
	uint32_t prefix = 0;
	int rc = 0;

	if (!(m->Bps > 0) || !(m->stage_s >= 0))
		return fast_err_set(err, FAST_EUSAGE, "alpha-aware decomposition: bad cost model");
	memset(&sr, 0, sizeof sr);
	sr.S = S;
	sr.n = n;
	sr.m = *m;
	sr.best_t = -1;
	sr.rem = fast_calloc((size_t)n * n + 1, sizeof *sr.rem);
	sr.scratch = fast_calloc(3 * (size_t)n + 1, sizeof *sr.scratch);
	sr.line = fast_calloc(2 * (size_t)n + 1, sizeof *sr.line);
	sr.nz = fast_calloc(2 * (size_t)n + 1, sizeof *sr.nz);
	sr.line0 = fast_calloc(2 * (size_t)n + 1, sizeof *sr.line0);
	sr.nz0 = fast_calloc(2 * (size_t)n + 1, sizeof *sr.nz0);
	if (!sr.rem || !sr.scratch || !sr.line || !sr.nz || !sr.line0 || !sr.nz0 ||
	    !fast_bvn_work_init(&wk, n)) {
		free(sr.rem);
		free(sr.scratch);
		free(sr.line);
		free(sr.nz);
		free(sr.line0);
		free(sr.nz0);
		return fast_err_set(err, FAST_ENOMEM, "alpha-aware decomposition: out of memory");
	}
	sr.wk = &wk;
	/* the exact candidate would fail on this later; the tracker's line
	 * sums need it */
	if (!fast_bvn_line_sums(S, n, wk.row, wk.col)) {
		rc = fast_err_set(err, FAST_EINPUT, "server matrix: a line sum overflows 64 bits");
		goto fail;
	}
	for (size_t k = 0; k < (size_t)n * n; k++)
		big = S[k] > big ? S[k] : big;
	fast_bvn_tracker_lines(S, n, sr.line0, sr.nz0);

	if (n <= HYBRID_MAX_N) {
		/* best first: the support cover (polished), then exact, then
		 * the octaves below the cover, each stopped as soon as it
		 * cannot beat the better of the two.  On skewed traffic exact
		 * is often the best quantised candidate's equal, and run last
		 * it let the octaves before it complete */
		bool done;
		if ((rc = try_quantum(&sr, big, true, &done, &t, err)) < 0)
			goto fail;
		if ((rc = try_quantum(&sr, 1, false, &exact_done, &exact_t, err)) < 0)
			goto fail;
		if ((rc = quanta(&sr, big, big / 2, 3, err)) < 0)
			goto fail;
	} else {
		if ((rc = quanta(&sr, big, big, 3, err)) < 0)
			goto fail;
		/* exact last: it runs only as long as it could still win */
		if ((rc = try_quantum(&sr, 1, false, &exact_done, &exact_t, err)) < 0)
			goto fail;
	}
	/* polish the winner by a pass of pairwise exchange, kept only if it
	 * models faster (the support cover had its pass already: a pass costs
	 * about a third of a 1024-GPU compile) */
	if (sr.best_raw.nterms > 1 && sr.best.quantum != big) {
		exchange(&sr.best_raw, S, sr.scratch);
		fast_bvn_trim_with(&sr.best_raw, S, wk.rem);
		t = fast_bvn_time(&sr.best_raw, m);
		if (t < sr.best_t) {
			fast_bvn_free(&sr.best);
			sr.best = sr.best_raw;
			memset(&sr.best_raw, 0, sizeof sr.best_raw);
			sr.best_t = t;
		}
	}
	/* bottleneck prefixes with a covered remainder (small n only) */
	if (n >= 3 && n <= HYBRID_MAX_N && (rc = hybrid(&sr, &prefix, err)) < 0)
		goto fail;
	if (info) {
		info->prefix = prefix;
		info->candidates = sr.tried;
		info->quantum = sr.best.quantum;
		info->time_s = sr.best_t;
		info->exact_computed = exact_done;
		info->exact_time_s = exact_t;
	}
	*out = sr.best;
	memset(&sr.best, 0, sizeof sr.best);
	rc = 0;
fail:
	free(sr.rem);
	free(sr.scratch);
	free(sr.line);
	free(sr.nz);
	free(sr.line0);
	free(sr.nz0);
	fast_bvn_work_free(&wk);
	fast_bvn_free(&sr.best_raw);
	fast_bvn_free(&sr.best);
	return rc;
}
