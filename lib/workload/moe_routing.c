/*
 * moe_routing.c - a user's routing file (moe_routing.h): the choice of
 * reader by extension, the .npy readers (expert ids, counts, token
 * sources), the sorting of tokens into layers, and the per-layer views
 * fast_moe_import takes (a copy of a layer's tokens, or its counts as
 * token copies).  The text formats are read in moe_routing_text.c, the NPY
 * container in moe_npy.c.  Routing files are at most a few GB and read
 * whole; ids are kept as 16-bit expert numbers (at most 65536 experts).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/base/json.h"
#include "lib/workload/moe_internal.h"
#include "lib/workload/moe_routing.h"

#define MAX_EXPERTS 65536u
#define MAX_TOPK 1024u

void fast_moe_routing_free(struct fast_moe_routing *r)
{
	if (!r)
		return;
	for (uint32_t i = 0; r->tok && i < r->nlayers; i++)
		fast_moe_tokens_free(&r->tok[i]);
	free(r->tok);
	free(r->layers);
	free(r->counts);
	r->tok = NULL;
	r->layers = NULL;
	r->counts = NULL;
	r->nlayers = 0;
}

int fast_moe_routing_find(const struct fast_moe_routing *r, uint32_t layer)
{
	for (uint32_t i = 0; i < r->nlayers; i++)
		if (r->layers[i] == layer)
			return (int)i;
	return -1;
}

int fast_moe_routing_token_bad(const int64_t *ids, uint32_t k, uint32_t E, char *msg, size_t n)
{
	for (uint32_t j = 0; j < k; j++) {
		if (ids[j] < 0 || ids[j] >= (int64_t)E) {
			snprintf(msg, n, "expert id %lld out of range (%u experts: 0..%u)",
				 (long long)ids[j], E, E - 1);
			return (int)j;
		}
		for (uint32_t i = 0; i < j; i++)
			if (ids[i] == ids[j]) {
				snprintf(msg, n, "expert %lld chosen twice by one token (top-k %u)",
					 (long long)ids[j], k);
				return (int)j;
			}
	}
	return -1;
}

/* --- tokens in file order, sorted into layers ---------------------------- */

int fast_moe_rows_add(struct fast_moe_rows *b, uint32_t layer, uint32_t src, const int64_t *ids,
		      struct fast_err *err)
{
	if (b->n == b->cap) {
		uint64_t cap = b->cap ? 2 * b->cap : 1024;
		uint32_t *l = realloc(b->layer, cap * sizeof *l), *s;
		uint16_t *d;

		if (l)
			b->layer = l;
		s = l ? realloc(b->src, cap * sizeof *s) : NULL;
		if (s)
			b->src = s;
		d = s ? realloc(b->ids, cap * b->topk * sizeof *d) : NULL;
		if (!d)
			return fast_err_set(err, FAST_ENOMEM, "out of memory reading routing");
		b->ids = d;
		b->cap = cap;
	}
	b->layer[b->n] = layer;
	b->src[b->n] = b->have_src ? src : 0;
	for (uint32_t j = 0; j < b->topk; j++)
		b->ids[b->n * b->topk + j] = (uint16_t)ids[j];
	b->n++;
	return 0;
}

void fast_moe_rows_free(struct fast_moe_rows *b)
{
	if (!b)
		return;
	free(b->layer);
	free(b->src);
	free(b->ids);
	b->layer = b->src = NULL;
	b->ids = NULL;
	b->n = b->cap = 0;
}

/* Allocate r->tok for the distinct layers of b (r->layers set). */
static int rows_layers(const struct fast_moe_rows *b, struct fast_moe_routing *r,
		       struct fast_err *err)
{
	uint32_t *v = NULL, n = 0;

	for (uint64_t i = 0; i < b->n; i++) {
		uint32_t k = 0;
		while (k < n && v[k] != b->layer[i])
			k++;
		if (k < n)
			continue;
		if (n % 64 == 0) {
			uint32_t *g = realloc(v, (n + 64) * sizeof *g);
			if (!g) {
				free(v);
				return fast_err_set(err, FAST_ENOMEM, "out of memory");
			}
			v = g;
		}
		v[n++] = b->layer[i];
	}
	qsort(v, n, sizeof *v, fast_moe_u32_cmp);
	r->layers = v;
	r->nlayers = n;
	r->tok = fast_calloc(n, sizeof *r->tok);
	if (!r->tok)
		return fast_err_set(err, FAST_ENOMEM, "out of memory");
	return 0;
}

int fast_moe_rows_finish(struct fast_moe_rows *b, struct fast_moe_routing *r,
			 struct fast_err *err)
{
	uint32_t K = b->topk;
	uint64_t *fill;
	int rc;

	if (b->n == 0)
		return fast_err_set(err, FAST_EINPUT, "%s: no tokens", r->path);
	if ((rc = rows_layers(b, r, err)) < 0)
		return rc;
	r->kind = FAST_ROUTING_IDS;
	r->topk = K;
	r->ngpus = 0;
	for (uint64_t i = 0; i < b->n; i++) {
		struct fast_moe_tokens *t = &r->tok[fast_moe_routing_find(r, b->layer[i])];
		t->ntokens++;
		if (b->have_src && b->src[i] >= r->ngpus)
			r->ngpus = b->src[i] + 1;
	}
	fill = fast_calloc(r->nlayers, sizeof *fill);
	for (uint32_t l = 0; fill && l < r->nlayers; l++) {
		struct fast_moe_tokens *t = &r->tok[l];
		t->topk = K;
		t->ids = fast_calloc(t->ntokens * K, sizeof *t->ids);
		t->src = b->have_src ? fast_calloc(t->ntokens, sizeof *t->src) : NULL;
		if (!t->ids || (b->have_src && !t->src)) {
			free(fill);
			fill = NULL;
		}
	}
	if (!fill)
		return fast_err_set(err, FAST_ENOMEM, "out of memory");
	for (uint64_t i = 0; i < b->n; i++) {
		uint32_t l = (uint32_t)fast_moe_routing_find(r, b->layer[i]);
		struct fast_moe_tokens *t = &r->tok[l];
		memcpy(t->ids + fill[l] * K, b->ids + i * K, K * sizeof *t->ids);
		if (t->src)
			t->src[fill[l]] = b->src[i];
		fill[l]++;
	}
	free(fill);
	fast_moe_rows_free(b);
	return 0;
}

int fast_moe_routing_alloc_counts(struct fast_moe_routing *r, uint32_t n, uint64_t per,
				  struct fast_err *err)
{
	r->layers = fast_calloc(n ? n : 1, sizeof *r->layers);
	r->counts = per && n ? fast_calloc((size_t)n * per, sizeof *r->counts) : NULL;
	if (!r->layers || (n && per && !r->counts))
		return fast_err_set(err, FAST_ENOMEM, "out of memory");
	for (uint32_t i = 0; i < n; i++)
		r->layers[i] = i;
	r->nlayers = n;
	return 0;
}

int fast_moe_routing_check_sums(const struct fast_moe_routing *r, struct fast_err *err)
{
	uint64_t per = (uint64_t)r->experts * (r->kind == FAST_ROUTING_SRC_COUNTS ? r->ngpus : 1);

	for (uint32_t l = 0; l < r->nlayers; l++) {
		uint64_t sum = 0;
		for (uint64_t i = 0; i < per; i++)
			if (!fast_add_u64(sum, r->counts[l * per + i], &sum) || sum > FAST_JSON_MAX_BYTES)
				return fast_err_set(err, FAST_EINPUT,
						    "%s: layer %u: the counts add up to more than 2^53",
						    r->path, r->layers[l]);
	}
	return 0;
}

/* --- .npy ---------------------------------------------------------------- */

static int npy_fail(const struct fast_moe_routing *r, const struct fast_npy *a, uint64_t i,
		    const char *what, struct fast_err *err)
{
	char pos[96];

	fast_npy_pos(a, i, pos, sizeof pos);
	return fast_err_set(err, FAST_EINPUT, "%s: %s: %s", r->path, pos, what);
}

/* The token sources of src_path: a 1-D array of ntokens values. */
static int npy_sources(const char *path, const struct fast_limits *lim, uint64_t ntokens,
		       uint32_t **out, struct fast_err *err)
{
	struct fast_npy a;
	char *text;
	size_t len;
	uint32_t *s = NULL;
	int rc = fast_read_file(path, lim->max_file_bytes, &text, &len, err);

	if (rc == 0)
		rc = fast_npy_parse(text, len, path, &a, err);
	if (rc == 0 && (a.ndim != 1 || a.shape[0] != ntokens))
		rc = fast_err_set(err, FAST_EINPUT,
				  "%s: shape: token sources must be a 1-D array of %llu (one per "
				  "token)",
				  path, (unsigned long long)ntokens);
	if (rc == 0 && !(s = fast_calloc(ntokens ? ntokens : 1, sizeof *s)))
		rc = fast_err_set(err, FAST_ENOMEM, "out of memory");
	for (uint64_t i = 0; rc == 0 && i < ntokens; i++) {
		int64_t v = fast_npy_at(&a, i);
		if (v < 0 || v > (int64_t)UINT32_MAX)
			rc = fast_err_set(err, FAST_EINPUT, "%s: [%llu]: source GPU %lld is not a GPU",
					  path, (unsigned long long)i, (long long)v);
		else
			s[i] = (uint32_t)v;
	}
	free(text);
	if (rc < 0) {
		free(s);
		return rc;
	}
	*out = s;
	return 0;
}

/* Expert ids: [tokens, top_k], [layers, tokens, top_k] or, tokens_first,
 * [tokens, layers, top_k]. */
static int npy_ids(const struct fast_moe_routing_opt *opt, const struct fast_npy *a,
		   struct fast_moe_routing *r, struct fast_err *err)
{
	uint64_t L = a->ndim == 3 ? a->shape[opt->tokens_first ? 1 : 0] : 1;
	uint64_t T = a->ndim == 3 ? a->shape[opt->tokens_first ? 0 : 1] : a->shape[0];
	uint64_t K = a->shape[a->ndim - 1];
	int64_t ids[MAX_TOPK];
	char msg[160];
	int rc;

	if (a->ndim < 2)
		return fast_err_set(err, FAST_EINPUT,
				    "%s: shape: %u-D; expert ids are [tokens, top_k] or [layers, tokens, "
				    "top_k]",
				    r->path, a->ndim);
	if (K == 0 || K > MAX_TOPK || L > 4096)
		return fast_err_set(err, FAST_EINPUT, "%s: shape: top_k %llu, layers %llu (1..%u, 1..4096)",
				    r->path, (unsigned long long)K, (unsigned long long)L, MAX_TOPK);
	if ((rc = fast_moe_routing_alloc_counts(r, (uint32_t)L, 0, err)) < 0)
		return rc;
	r->tok = fast_calloc(L, sizeof *r->tok);
	if (!r->tok)
		return fast_err_set(err, FAST_ENOMEM, "out of memory");
	r->topk = (uint32_t)K;
	for (uint64_t l = 0; l < L; l++) {
		struct fast_moe_tokens *t = &r->tok[l];
		t->ntokens = T;
		t->topk = (uint32_t)K;
		if (!(t->ids = fast_calloc(T * K + 1, sizeof *t->ids)))
			return fast_err_set(err, FAST_ENOMEM, "out of memory");
		for (uint64_t tok = 0; tok < T; tok++) {
			uint64_t base = opt->tokens_first ? (tok * L + l) * K : (l * T + tok) * K;
			for (uint64_t j = 0; j < K; j++)
				ids[j] = fast_npy_at(a, base + j);
			int bad = fast_moe_routing_token_bad(ids, (uint32_t)K, r->experts, msg, sizeof msg);
			if (bad >= 0)
				return npy_fail(r, a, base + (uint64_t)bad, msg, err);
			for (uint64_t j = 0; j < K; j++)
				t->ids[tok * K + j] = (uint16_t)ids[j];
		}
	}
	return 0;
}

/* Counts: [layers, experts] or [layers, gpus, experts]. */
static int npy_counts(const struct fast_moe_routing_opt *opt, const struct fast_npy *a,
		      struct fast_moe_routing *r, struct fast_err *err)
{
	uint64_t L = a->shape[0], E = a->ndim >= 2 ? a->shape[a->ndim - 1] : 0;
	int rc;

	if (a->ndim < 2)
		return fast_err_set(err, FAST_EINPUT,
				    "%s: shape: %u-D; counts are [layers, experts] or [layers, gpus, "
				    "experts]",
				    r->path, a->ndim);
	if (E == 0 || E > MAX_EXPERTS || L == 0 || L > 4096)
		return fast_err_set(err, FAST_EINPUT, "%s: shape: %llu layers of %llu experts (1..4096, 1..%u)",
				    r->path, (unsigned long long)L, (unsigned long long)E, MAX_EXPERTS);
	if (opt->experts && opt->experts != E)
		return fast_err_set(err, FAST_EINPUT, "%s: shape: %llu experts, --experts says %u",
				    r->path, (unsigned long long)E, opt->experts);
	r->experts = (uint32_t)E;
	r->kind = a->ndim == 3 ? FAST_ROUTING_SRC_COUNTS : FAST_ROUTING_COUNTS;
	if (a->ndim == 3) {
		if (a->shape[1] == 0 || a->shape[1] > (1u << 20))
			return fast_err_set(err, FAST_EINPUT, "%s: shape: %llu GPUs", r->path,
					    (unsigned long long)a->shape[1]);
		r->ngpus = (uint32_t)a->shape[1];
	}
	if ((rc = fast_moe_routing_alloc_counts(r, (uint32_t)L, a->count / L, err)) < 0)
		return rc;
	for (uint64_t i = 0; i < a->count; i++) {
		int64_t v = fast_npy_at(a, i);
		if (v < 0)
			return npy_fail(r, a, i, "a negative count", err);
		if ((uint64_t)v > FAST_JSON_MAX_BYTES)
			return npy_fail(r, a, i, "a count over 2^53", err);
		r->counts[i] = (uint64_t)v;
	}
	return fast_moe_routing_check_sums(r, err);
}

static int load_npy(const struct fast_moe_routing_opt *opt, const struct fast_limits *lim,
		    const char *text, size_t len, struct fast_moe_routing *r, struct fast_err *err)
{
	struct fast_npy a;
	int rc = fast_npy_parse(text, len, r->path, &a, err);

	if (rc < 0)
		return rc;
	if (opt->counts)
		return npy_counts(opt, &a, r, err);
	if (opt->src_path && a.ndim == 3 && a.shape[opt->tokens_first ? 0 : 1] == 0)
		return fast_err_set(err, FAST_EINPUT, "%s: no tokens", r->path);
	rc = npy_ids(opt, &a, r, err);
	if (rc == 0 && opt->src_path) {
		uint32_t *s = NULL;
		rc = npy_sources(opt->src_path, lim, r->tok[0].ntokens, &s, err);
		for (uint32_t l = 0; rc == 0 && l < r->nlayers; l++) {
			r->tok[l].src = fast_calloc(r->tok[l].ntokens + 1, sizeof *s);
			if (!r->tok[l].src)
				rc = fast_err_set(err, FAST_ENOMEM, "out of memory");
			else
				memcpy(r->tok[l].src, s, r->tok[l].ntokens * sizeof *s);
		}
		for (uint64_t i = 0; rc == 0 && i < r->tok[0].ntokens; i++)
			if (s[i] >= r->ngpus)
				r->ngpus = s[i] + 1;
		free(s);
	}
	return rc;
}

/* --- entry points -------------------------------------------------------- */

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), m = strlen(tail);

	return n >= m && strcmp(s + n - m, tail) == 0;
}

int fast_moe_routing_load(const struct fast_moe_routing_opt *opt, const struct fast_limits *lim,
			  struct fast_moe_routing *out, struct fast_err *err)
{
	struct fast_moe_routing r = { 0 };
	struct fast_limits dl;
	char *text = NULL;
	size_t len;
	int rc;

	if (!lim) {
		fast_limits_default(&dl);
		lim = &dl;
	}
	snprintf(r.path, sizeof r.path, "%s", opt->path);
	r.experts = opt->experts;
	r.format = ends_with(opt->path, ".npy")	   ? "npy"
		   : ends_with(opt->path, ".jsonl") ? "jsonl"
		   : ends_with(opt->path, ".json")  ? "json"
		   : ends_with(opt->path, ".csv")   ? "csv"
						    : NULL;
	if (!r.format)
		return fast_err_set(err, FAST_EUSAGE,
				    "--routing %.80s: unknown format (by extension: .npy, .jsonl, "
				    ".json, .csv)",
				    opt->path);
	if (opt->experts > MAX_EXPERTS)
		return fast_err_set(err, FAST_EUSAGE, "--experts %u: at most %u", opt->experts,
				    MAX_EXPERTS);
	if (opt->counts && strcmp(r.format, "npy") != 0)
		return fast_err_set(err, FAST_EUSAGE,
				    "--counts applies to .npy (the other formats say what they hold)");
	if ((opt->src_path || opt->tokens_first) && strcmp(r.format, "npy") != 0)
		return fast_err_set(err, FAST_EUSAGE,
				    "--token-src and --axes apply to .npy expert ids");
	if (!opt->experts && ((!opt->counts && strcmp(r.format, "npy") == 0) ||
			      strcmp(r.format, "jsonl") == 0))
		return fast_err_set(err, FAST_EUSAGE,
				    "--experts E is needed: expert ids (%s) do not say how many "
				    "experts the model has",
				    r.format);
	rc = fast_read_file(opt->path, lim->max_file_bytes, &text, &len, err);
	if (rc < 0)
		return rc;
	if (strcmp(r.format, "npy") == 0)
		rc = load_npy(opt, lim, text, len, &r, err);
	else if (strcmp(r.format, "jsonl") == 0)
		rc = fast_moe_routing_jsonl(text, len, &r, err);
	else if (strcmp(r.format, "json") == 0)
		rc = fast_moe_routing_json(text, len, &r, err);
	else
		rc = fast_moe_routing_csv(text, len, &r, err);
	free(text);
	if (rc == 0 && r.kind == FAST_ROUTING_IDS && r.experts == 0)
		rc = fast_err_set(err, FAST_EUSAGE,
				  "--experts E is needed: %s holds expert ids, not how many experts "
				  "the model has",
				  opt->path);
	if (rc < 0) {
		fast_moe_routing_free(&r);
		return rc;
	}
	*out = r;
	return 0;
}

int fast_moe_routing_tokens(const struct fast_moe_routing *r, uint32_t layer, uint32_t ng,
			    struct fast_moe_tokens *t, struct fast_err *err)
{
	int i = fast_moe_routing_find(r, layer);
	const struct fast_moe_tokens *s;
	struct fast_moe_tokens c = { 0 };

	if (i < 0 || r->kind != FAST_ROUTING_IDS)
		return fast_err_set(err, FAST_EINPUT, "%s: no tokens of layer %u", r->path, layer);
	s = &r->tok[i];
	c.ntokens = s->ntokens;
	c.topk = s->topk;
	c.ids = fast_calloc(s->ntokens * s->topk + 1, sizeof *c.ids);
	c.src = s->src ? fast_calloc(s->ntokens ? s->ntokens : 1, sizeof *c.src) : NULL;
	if (!c.ids || (s->src && !c.src)) {
		fast_moe_tokens_free(&c);
		return fast_err_set(err, FAST_ENOMEM, "out of memory");
	}
	memcpy(c.ids, s->ids, s->ntokens * s->topk * sizeof *c.ids);
	for (uint64_t k = 0; s->src && k < s->ntokens; k++) {
		if (s->src[k] >= ng) {
			fast_moe_tokens_free(&c);
			return fast_err_set(err, FAST_EINPUT,
					    "%s: layer %u token %llu: source GPU %u, but EP%u has GPUs "
					    "0..%u",
					    r->path, layer, (unsigned long long)k, s->src[k], ng, ng - 1);
		}
		c.src[k] = s->src[k];
	}
	*t = c;
	return 0;
}

int fast_moe_routing_count(const struct fast_moe_routing *r, const struct fast_moe_layout *l,
			   uint32_t layer, uint64_t *counts, struct fast_err *err)
{
	int i = fast_moe_routing_find(r, layer);
	uint32_t ng = l->ng, E = r->experts;
	uint64_t *one, *share;
	int rc = 0;

	if (i < 0 || r->kind == FAST_ROUTING_IDS)
		return fast_err_set(err, FAST_EINPUT, "%s: no counts of layer %u", r->path, layer);
	if (r->kind == FAST_ROUTING_SRC_COUNTS) {
		const uint64_t *c = r->counts + (size_t)i * r->ngpus * E;
		if (r->ngpus != ng)
			return fast_err_set(err, FAST_EINPUT,
					    "%s: counts of %u source GPUs, but the EP group has %u",
					    r->path, r->ngpus, ng);
		for (uint32_t s = 0; s < ng; s++)
			for (uint32_t e = 0; e < E; e++)
				counts[(size_t)s * ng + fast_moe_expert_gpu(l, e, s)] += c[(size_t)s * E + e];
		return 0;
	}
	one = fast_calloc(ng, sizeof *one);
	share = fast_calloc(ng, sizeof *share);
	for (uint32_t s = 0; one && s < ng; s++)
		one[s] = 1;
	if (!one || !share)
		rc = fast_err_set(err, FAST_ENOMEM, "out of memory");
	for (uint32_t e = 0; rc == 0 && e < E; e++) {
		rc = fast_apportion(r->counts[(size_t)i * E + e], one, ng, e, share, err);
		for (uint32_t s = 0; rc == 0 && s < ng; s++)
			counts[(size_t)s * ng + fast_moe_expert_gpu(l, e, s)] += share[s];
	}
	free(one);
	free(share);
	return rc;
}
