/*
 * moe_parse.c - the parsers of real routing data (moe.h): DeepSeek's raw
 * per-token routing and the per-sequence and per-expert count CSVs, each
 * checked strictly with "file:line" messages.  The data set is small (at
 * most a few MB per file, ~10^5 tokens per layer): files are read whole and
 * scanned once per layer; the code favours strict validation over speed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/workload/moe.h"
#include "lib/base/lines.h"
#include "lib/workload/moe_internal.h"

/* --- text scanning ------------------------------------------------------ */

struct field {
	const char *s;
	size_t n;
};

/* Split s[0..n) at sep into at most max fields; returns the count (more
 * than max means too many). */
static size_t split(const char *s, size_t n, char sep, struct field *f, size_t max)
{
	size_t k = 0, a = 0;

	for (size_t i = 0; i <= n; i++)
		if (i == n || s[i] == sep) {
			if (k < max) {
				f[k].s = s + a;
				f[k].n = i - a;
			}
			k++;
			a = i + 1;
		}
	return k;
}

static bool field_is(const struct field *f, const char *text)
{
	return f->n == strlen(text) && memcmp(f->s, text, f->n) == 0;
}

/* Strict non-negative decimal integer up to 2^53. */
static bool field_u64(const struct field *f, uint64_t *out)
{
	uint64_t x = 0;

	if (f->n == 0 || f->n > 16)
		return false;
	for (size_t i = 0; i < f->n; i++) {
		if (f->s[i] < '0' || f->s[i] > '9')
			return false;
		x = x * 10 + (uint64_t)(f->s[i] - '0');
	}
	if (x > FAST_JSON_MAX_BYTES)
		return false;
	*out = x;
	return true;
}

/* A decimal number (gate weight): digits, one optional '.', optional
 * exponent; checked by hand so that no locale is involved. */
static bool field_number(const struct field *f)
{
	size_t i = 0, digits = 0;

	if (i < f->n && (f->s[i] == '-' || f->s[i] == '+'))
		i++;
	for (; i < f->n && f->s[i] >= '0' && f->s[i] <= '9'; i++)
		digits++;
	if (i < f->n && f->s[i] == '.')
		for (i++; i < f->n && f->s[i] >= '0' && f->s[i] <= '9'; i++)
			digits++;
	if (digits && i < f->n && (f->s[i] == 'e' || f->s[i] == 'E')) {
		size_t d = 0;
		i++;
		if (i < f->n && (f->s[i] == '-' || f->s[i] == '+'))
			i++;
		for (; i < f->n && f->s[i] >= '0' && f->s[i] <= '9'; i++)
			d++;
		if (!d)
			return false;
	}
	return digits && i == f->n;
}

/* Quote a field in messages, capped. */
#define FQ(f) (int)((f)->n > 40 ? 40 : (f)->n), (f)->s

/* A header field for messages, capped at 40 bytes, with bytes that do not
 * print (a stray '\r', a byte-order mark) escaped: "column 6 is 'count',
 * expected 'count'" must never happen. */
static const char *quote(const struct field *f, char *buf, size_t size)
{
	size_t j = 0;

	for (size_t i = 0; i < f->n && i < 40 && j + 5 < size; i++) {
		unsigned char ch = (unsigned char)f->s[i];
		if (ch == '\r')
			j += (size_t)snprintf(buf + j, size - j, "\\r");
		else if (ch < 0x20 || ch >= 0x7f || ch == '\\')
			j += (size_t)snprintf(buf + j, size - j, "\\x%02x", ch);
		else
			buf[j++] = (char)ch;
	}
	buf[j] = '\0';
	return buf;
}

/* --- DeepSeek raw per-token routing ------------------------------------ */

int fast_moe_parse_deepseek_raw(const char *text, size_t len, const char *name,
				uint32_t experts, uint32_t topk, struct fast_moe_tokens *out,
				struct fast_err *err)
{
	struct fast_lines it = fast_lines_of(text, len);
	struct fast_moe_tokens t = { 0, topk, 0, NULL, NULL };
	struct field *f = NULL;
	uint64_t cap = 0;
	size_t fcap = 0;
	const char *s;
	size_t n;
	int rc = 0;

	if (topk == 0 || topk > experts || experts > 65535)
		return fast_err_set(err, FAST_EUSAGE, "%s: bad model shape (top-%u of %u)", name,
				    topk, experts);
	while (rc == 0 && fast_lines_next(&it, &s, &n)) {
		const char *sep = NULL;
		size_t nid, nw;

		for (size_t i = 0; i + 1 < n; i++)
			if (s[i] == '\t' && s[i + 1] == '\t') {
				sep = s + i;
				break;
			}
		if (n == 0) {
			rc = fast_err_set(err, FAST_EINPUT, "%s:%u: empty line", name, it.no);
			break;
		}
		if (!sep) {
			rc = fast_err_set(err, FAST_EINPUT,
					  "%s:%u: expected expert ids, two tabs, then gate weights",
					  name, it.no);
			break;
		}
		/* count fields first, then size the buffer */
		nid = split(s, (size_t)(sep - s), '\t', NULL, 0);
		nw = split(sep + 2, n - (size_t)(sep + 2 - s), '\t', NULL, 0);
		if (nid % topk != 0) {
			rc = fast_err_set(err, FAST_EINPUT,
					  "%s:%u: %zu expert ids is not a multiple of top-%u", name,
					  it.no, nid, topk);
			break;
		}
		if (nw != nid) {
			rc = fast_err_set(err, FAST_EINPUT, "%s:%u: %zu expert ids but %zu gate weights",
					  name, it.no, nid, nw);
			break;
		}
		if (nid > fcap) {
			struct field *nf = fast_reallocarray(f, nid, sizeof *f);
			if (!nf) {
				rc = fast_err_set(err, FAST_ENOMEM, "out of memory");
				break;
			}
			f = nf;
			fcap = nid;
		}
		if ((t.ntokens + nid / topk) * topk > cap) {
			uint64_t ncap = cap ? cap * 2 : 4096;
			uint16_t *ni;
			while (ncap < (t.ntokens + nid / topk) * topk)
				ncap *= 2;
			ni = fast_reallocarray(t.ids, (size_t)ncap, sizeof *ni);
			if (!ni) {
				rc = fast_err_set(err, FAST_ENOMEM, "out of memory");
				break;
			}
			t.ids = ni;
			cap = ncap;
		}
		split(sep + 2, n - (size_t)(sep + 2 - s), '\t', f, fcap);
		for (size_t i = 0; i < nw && rc == 0; i++)
			if (!field_number(&f[i]))
				rc = fast_err_set(err, FAST_EINPUT,
						  "%s:%u: gate weight %zu: '%.*s' is not a number", name,
						  it.no, i + 1, FQ(&f[i]));
		split(s, (size_t)(sep - s), '\t', f, fcap);
		for (size_t i = 0; i < nid && rc == 0; i++) {
			uint64_t e;
			if (!field_u64(&f[i], &e) || e >= experts) {
				rc = fast_err_set(err, FAST_EINPUT,
						  "%s:%u: expert id %zu: '%.*s' is not an expert (0..%u)",
						  name, it.no, i + 1, FQ(&f[i]), experts - 1);
				break;
			}
			/* a token's experts are distinct */
			for (size_t j = i - i % topk; j < i; j++)
				if (t.ids[t.ntokens * topk + j] == e) {
					rc = fast_err_set(err, FAST_EINPUT,
							  "%s:%u: token %zu chooses expert %llu twice",
							  name, it.no, i / topk + 1, (unsigned long long)e);
					break;
				}
			t.ids[t.ntokens * topk + i] = (uint16_t)e;
		}
		if (rc == 0) {
			t.ntokens += nid / topk;
			t.nseq++;
		}
	}
	free(f);
	if (rc == 0 && t.ntokens == 0)
		rc = fast_err_set(err, FAST_EINPUT, "%s: no tokens", name);
	if (rc < 0) {
		free(t.ids);
		return rc;
	}
	*out = t;
	return 0;
}

/* --- CSV ------------------------------------------------------------------ */

int fast_moe_groups_alloc(struct fast_moe_groups *g, uint32_t n, uint32_t experts,
			  struct fast_err *err)
{
	uint64_t *nt = fast_reallocarray(g->tokens, n, sizeof *nt);

	if (nt)
		g->tokens = nt;
	uint64_t *nc = nt ? fast_reallocarray(g->counts, (size_t)n * experts, sizeof *nc) : NULL;
	if (!nc)
		return fast_err_set(err, FAST_ENOMEM, "out of memory");
	g->counts = nc;
	return 0;
}

/* The header of the per-sequence file: task,moe_layer,seq,ntokens,e0.. */
static int check_seq_header(const struct field *f, size_t nf, uint32_t experts,
			    const char *name, struct fast_err *err)
{
	static const char *const head[] = { "task", "moe_layer", "seq", "ntokens" };
	char want[32], got[200];

	if (nf != 4 + (size_t)experts)
		return fast_err_set(err, FAST_EINPUT,
				    "%s:1: header has %zu columns, expected %u (task,moe_layer,seq,"
				    "ntokens,e0..e%u)",
				    name, nf, 4 + experts, experts - 1);
	for (size_t i = 0; i < nf; i++) {
		if (i < 4)
			snprintf(want, sizeof want, "%s", head[i]);
		else
			snprintf(want, sizeof want, "e%zu", i - 4);
		if (!field_is(&f[i], want))
			return fast_err_set(err, FAST_EINPUT, "%s:1: column %zu is '%s', expected '%s'",
					    name, i + 1, quote(&f[i], got, sizeof got), want);
	}
	return 0;
}

static const char *const counts_head[] = { "model", "selection", "domain", "layer", "expert",
					   "count" };

static int check_counts_header(const struct field *f, size_t nf, const char *name,
			       struct fast_err *err)
{
	char got[200];

	if (nf != 6)
		return fast_err_set(err, FAST_EINPUT,
				    "%s:1: header has %zu columns, expected 6 "
				    "(model,selection,domain,layer,expert,count)",
				    name, nf);
	for (size_t i = 0; i < 6; i++)
		if (!field_is(&f[i], counts_head[i]))
			return fast_err_set(err, FAST_EINPUT, "%s:1: column %zu is '%s', expected '%s'",
					    name, i + 1, quote(&f[i], got, sizeof got), counts_head[i]);
	return 0;
}

/* Scan a CSV: header check, then each row split into exactly ncol fields;
 * row() sees the fields and returns 0 or an error. */
typedef int (*row_fn)(void *ctx, const struct field *f, uint32_t line, struct fast_err *err);

static int scan_csv(const char *text, size_t len, const char *name, size_t ncol,
		    int (*header)(const struct field *, size_t, void *, struct fast_err *),
		    row_fn row, void *ctx, struct fast_err *err)
{
	struct fast_lines it = fast_lines_of(text, len);
	struct field *f = fast_calloc(ncol + 1, sizeof *f);
	const char *s;
	size_t n, nf;
	int rc = 0;

	if (!f)
		return fast_err_set(err, FAST_ENOMEM, "out of memory");
	if (!fast_lines_next(&it, &s, &n)) {
		free(f);
		return fast_err_set(err, FAST_EINPUT, "%s:1: empty file, expected a CSV header", name);
	}
	nf = split(s, n, ',', f, ncol + 1);
	rc = header(f, nf, ctx, err);
	while (rc == 0 && fast_lines_next(&it, &s, &n)) {
		if (n == 0) {
			rc = fast_err_set(err, FAST_EINPUT, "%s:%u: empty line", name, it.no);
			break;
		}
		if (memchr(s, '"', n)) {
			rc = fast_err_set(err, FAST_EINPUT, "%s:%u: quoted fields are not supported",
					  name, it.no);
			break;
		}
		nf = split(s, n, ',', f, ncol + 1);
		if (nf != ncol) {
			rc = fast_err_set(err, FAST_EINPUT, "%s:%u: %zu fields, expected %zu", name,
					  it.no, nf, ncol);
			break;
		}
		rc = row(ctx, f, it.no, err);
	}
	if (rc == 0 && it.no < 2)
		rc = fast_err_set(err, FAST_EINPUT, "%s: has a header but no rows", name);
	free(f);
	return rc;
}

struct seq_ctx {
	const char *name, *task;
	uint32_t layer, experts, topk;
	struct fast_moe_groups g;
	uint32_t cap;
	/* layer discovery */
	bool discover;
	uint32_t *layers, nlayers, lcap;
};

static int seq_header(const struct field *f, size_t nf, void *ctx, struct fast_err *err)
{
	struct seq_ctx *c = ctx;
	return check_seq_header(f, nf, c->experts, c->name, err);
}

int fast_moe_add_layer(uint32_t **v, uint32_t *n, uint32_t *cap, uint32_t layer,
		       struct fast_err *err)
{
	for (uint32_t i = 0; i < *n; i++)
		if ((*v)[i] == layer)
			return 0;
	if (*n == *cap) {
		uint32_t nc = *cap ? *cap * 2 : 16;
		uint32_t *nv = fast_reallocarray(*v, nc, sizeof *nv);
		if (!nv)
			return fast_err_set(err, FAST_ENOMEM, "out of memory");
		*v = nv;
		*cap = nc;
	}
	(*v)[(*n)++] = layer;
	return 0;
}

static int seq_row(void *ctx, const struct field *f, uint32_t line, struct fast_err *err)
{
	struct seq_ctx *c = ctx;
	uint64_t layer, seq, ntok, sum = 0, x;
	uint64_t *cnt;
	int rc;

	if (!field_u64(&f[1], &layer) || layer > UINT32_MAX)
		return fast_err_set(err, FAST_EINPUT, "%s:%u: moe_layer: '%.*s' is not a layer number",
				    c->name, line, FQ(&f[1]));
	if (!field_is(&f[0], c->task))
		return 0;
	if (c->discover)
		return fast_moe_add_layer(&c->layers, &c->nlayers, &c->lcap, (uint32_t)layer, err);
	if (layer != c->layer)
		return 0;
	if (!field_u64(&f[2], &seq) || seq != c->g.ngroups)
		return fast_err_set(err, FAST_EINPUT, "%s:%u: seq: '%.*s', expected %u (sequences in order)",
				    c->name, line, FQ(&f[2]), c->g.ngroups);
	if (!field_u64(&f[3], &ntok))
		return fast_err_set(err, FAST_EINPUT, "%s:%u: ntokens: '%.*s' is not a count", c->name,
				    line, FQ(&f[3]));
	if (c->g.ngroups == c->cap) {
		uint32_t nc = c->cap ? c->cap * 2 : 64;
		rc = fast_moe_groups_alloc(&c->g, nc, c->experts, err);
		if (rc < 0)
			return rc;
		c->cap = nc;
	}
	cnt = c->g.counts + (size_t)c->g.ngroups * c->experts;
	for (uint32_t e = 0; e < c->experts; e++) {
		if (!field_u64(&f[4 + e], &x))
			return fast_err_set(err, FAST_EINPUT, "%s:%u: e%u: '%.*s' is not a count", c->name,
					    line, e, FQ(&f[4 + e]));
		cnt[e] = x;
		sum += x;
	}
	if (sum != ntok * c->topk)
		return fast_err_set(err, FAST_EINPUT,
				    "%s:%u: expert counts sum to %llu, expected top-%u x %llu tokens = %llu",
				    c->name, line, (unsigned long long)sum, c->topk,
				    (unsigned long long)ntok, (unsigned long long)(ntok * c->topk));
	c->g.tokens[c->g.ngroups++] = ntok;
	return 0;
}

int fast_moe_parse_seq_csv(const char *text, size_t len, const char *name, const char *task,
			   uint32_t layer, uint32_t experts, uint32_t topk,
			   struct fast_moe_groups *out, struct fast_err *err)
{
	struct seq_ctx c = { 0 };
	int rc;

	c.name = name;
	c.task = task;
	c.layer = layer;
	c.experts = experts;
	c.topk = topk;
	c.g.experts = experts;
	rc = scan_csv(text, len, name, 4 + (size_t)experts, seq_header, seq_row, &c, err);
	if (rc == 0 && c.g.ngroups == 0)
		rc = fast_err_set(err, FAST_EUSAGE, "%s: no rows for task '%.40s', layer %u", name, task,
				  layer);
	if (rc < 0) {
		fast_moe_groups_free(&c.g);
		return rc;
	}
	*out = c.g;
	return 0;
}

struct counts_ctx {
	const char *name, *model, *selection, *domain;
	uint32_t layer, experts;
	uint64_t *counts;
	bool *seen;
	uint32_t nseen;
	bool discover;
	uint32_t *layers, nlayers, lcap;
};

static int counts_header(const struct field *f, size_t nf, void *ctx, struct fast_err *err)
{
	struct counts_ctx *c = ctx;
	return check_counts_header(f, nf, c->name, err);
}

static int counts_row(void *ctx, const struct field *f, uint32_t line, struct fast_err *err)
{
	struct counts_ctx *c = ctx;
	uint64_t layer, e, x;

	if (!field_u64(&f[3], &layer) || layer > UINT32_MAX)
		return fast_err_set(err, FAST_EINPUT, "%s:%u: layer: '%.*s' is not a layer number",
				    c->name, line, FQ(&f[3]));
	if (!field_u64(&f[4], &e))
		return fast_err_set(err, FAST_EINPUT, "%s:%u: expert: '%.*s' is not an expert id",
				    c->name, line, FQ(&f[4]));
	if (!field_u64(&f[5], &x))
		return fast_err_set(err, FAST_EINPUT, "%s:%u: count: '%.*s' is not a count", c->name,
				    line, FQ(&f[5]));
	if (!field_is(&f[0], c->model) || !field_is(&f[1], c->selection) ||
	    !field_is(&f[2], c->domain))
		return 0;
	if (c->discover)
		return fast_moe_add_layer(&c->layers, &c->nlayers, &c->lcap, (uint32_t)layer, err);
	if (layer != c->layer)
		return 0;
	if (e >= c->experts)
		return fast_err_set(err, FAST_EINPUT, "%s:%u: expert %llu out of range (%u experts)",
				    c->name, line, (unsigned long long)e, c->experts);
	if (c->seen[e])
		return fast_err_set(err, FAST_EINPUT, "%s:%u: expert %llu of layer %u listed twice",
				    c->name, line, (unsigned long long)e, c->layer);
	c->seen[e] = true;
	c->nseen++;
	c->counts[e] = x;
	return 0;
}

int fast_moe_parse_counts_csv(const char *text, size_t len, const char *name,
			      const char *model, const char *selection, const char *domain,
			      uint32_t layer, uint32_t experts, uint32_t topk,
			      struct fast_moe_groups *out, struct fast_err *err)
{
	struct counts_ctx c = { 0 };
	struct fast_moe_groups g = { 0 };
	uint64_t sum = 0, k;
	int rc;

	if (strcmp(selection, "topk") != 0 && strcmp(selection, "top1") != 0)
		return fast_err_set(err, FAST_EUSAGE, "unknown selection '%.40s' (known: topk, top1)",
				    selection);
	k = strcmp(selection, "topk") == 0 ? topk : 1;
	c.name = name;
	c.model = model;
	c.selection = selection;
	c.domain = domain;
	c.layer = layer;
	c.experts = experts;
	c.counts = fast_calloc(experts, sizeof *c.counts);
	c.seen = fast_calloc(experts, sizeof *c.seen);
	if (!c.counts || !c.seen) {
		free(c.counts);
		free(c.seen);
		return fast_err_set(err, FAST_ENOMEM, "out of memory");
	}
	rc = scan_csv(text, len, name, 6, counts_header, counts_row, &c, err);
	if (rc == 0 && c.nseen == 0)
		rc = fast_err_set(err, FAST_EUSAGE,
				  "%s: no rows for model '%.40s', selection '%.40s', domain '%.40s', "
				  "layer %u",
				  name, model, selection, domain, layer);
	if (rc == 0 && c.nseen != experts) {
		uint32_t e = 0;
		while (c.seen[e])
			e++;
		rc = fast_err_set(err, FAST_EINPUT,
				  "%s: layer %u of %.40s/%.40s/%.40s: expert %u missing (%u of %u listed)",
				  name, layer, model, selection, domain, e, c.nseen, experts);
	}
	for (uint32_t e = 0; rc == 0 && e < experts; e++)
		sum += c.counts[e];
	if (rc == 0 && sum % k != 0)
		rc = fast_err_set(err, FAST_EINPUT,
				  "%s: layer %u of %.40s/%.40s/%.40s: %llu selections is not a "
				  "multiple of top-%llu",
				  name, layer, model, selection, domain, (unsigned long long)sum,
				  (unsigned long long)k);
	free(c.seen);
	if (rc == 0) {
		g.experts = experts;
		rc = fast_moe_groups_alloc(&g, 1, experts, err);
	}
	if (rc < 0) {
		free(c.counts);
		fast_moe_groups_free(&g);
		return rc;
	}
	g.ngroups = 1;
	g.tokens[0] = sum / k;
	memcpy(g.counts, c.counts, experts * sizeof *c.counts);
	free(c.counts);
	*out = g;
	return 0;
}

int fast_moe_u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* Header of either file, checked without knowing the expert count: the
 * per-sequence header's own width is taken as the expected one. */
static int any_seq_header(const struct field *f, size_t nf, void *ctx, struct fast_err *err)
{
	struct seq_ctx *c = ctx;

	if (nf < 5)
		return fast_err_set(err, FAST_EINPUT, "%s:1: header has %zu columns", c->name, nf);
	return check_seq_header(f, nf, (uint32_t)(nf - 4), c->name, err);
}

int fast_moe_csv_layers(const char *text, size_t len, const char *name, bool per_sequence,
			const char *model, const char *selection, const char *domain,
			uint32_t **out, uint32_t *n, struct fast_err *err)
{
	int rc;
	uint32_t *layers, nl;

	if (per_sequence) {
		struct seq_ctx c = { 0 };
		struct fast_lines it = fast_lines_of(text, len);
		const char *s;
		size_t hn;

		c.name = name;
		c.task = domain;
		c.discover = true;
		/* the column count comes from the header line */
		if (!fast_lines_next(&it, &s, &hn))
			return fast_err_set(err, FAST_EINPUT, "%s:1: empty file, expected a CSV header",
					    name);
		c.experts = (uint32_t)(split(s, hn, ',', NULL, 0) - 4);
		if (c.experts == 0 || c.experts > 65535)
			return fast_err_set(err, FAST_EINPUT, "%s:1: bad header", name);
		rc = scan_csv(text, len, name, 4 + (size_t)c.experts, any_seq_header, seq_row, &c, err);
		layers = c.layers;
		nl = c.nlayers;
	} else {
		struct counts_ctx c = { 0 };
		c.name = name;
		c.model = model;
		c.selection = selection;
		c.domain = domain;
		c.discover = true;
		rc = scan_csv(text, len, name, 6, counts_header, counts_row, &c, err);
		layers = c.layers;
		nl = c.nlayers;
	}
	if (rc < 0) {
		free(layers);
		return rc;
	}
	if (nl)
		qsort(layers, nl, sizeof *layers, fast_moe_u32_cmp);
	*out = layers;
	*n = nl;
	return 0;
}
