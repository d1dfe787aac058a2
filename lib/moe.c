/*
 * moe.c - MoE layouts, token counting and import of real routing data
 * (moe.h).  The data set is small (at most a few MB per file, ~10^5
 * tokens per layer): files are read whole and scanned once per layer; the
 * code favours strict validation with "file:line" messages over speed.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"
#include "json.h"
#include "moe.h"

__extension__ typedef unsigned __int128 u128;

/* --- layout -------------------------------------------------------------- */

int fast_placement_parse(const char *name, enum fast_placement *out, struct fast_err *err)
{
	if (strcmp(name, "contiguous") == 0)
		*out = FAST_PLACE_CONTIGUOUS;
	else if (strcmp(name, "round-robin") == 0)
		*out = FAST_PLACE_ROUND_ROBIN;
	else
		return fast_err_set(err, FAST_EUSAGE,
				    "unknown placement '%.40s' (known: contiguous, round-robin)", name);
	return 0;
}

const char *fast_placement_name(enum fast_placement p)
{
	return p == FAST_PLACE_ROUND_ROBIN ? "round-robin" : "contiguous";
}

int fast_moe_layout_check(const struct fast_moe_layout *l, struct fast_err *err)
{
	if (l->ng == 0 || l->experts == 0)
		return fast_err_set(err, FAST_EINPUT, "an EP group needs at least one GPU and one expert");
	if (l->experts < l->ng && l->ng % l->experts != 0)
		return fast_err_set(err, FAST_EINPUT,
				    "%u experts on %u GPUs: with fewer experts than GPUs the GPU count "
				    "must be a multiple of the experts (each expert replicated)",
				    l->experts, l->ng);
	return 0;
}

uint32_t fast_moe_expert_gpu(const struct fast_moe_layout *l, uint32_t expert, uint32_t src)
{
	uint32_t ng = l->ng, E = l->experts;

	if (E >= ng) {
		if (l->experts_at == FAST_PLACE_ROUND_ROBIN)
			return expert % ng;
		return (uint32_t)((uint64_t)expert * ng / E);
	} else {
		uint32_t r = ng / E, k = src % r;
		if (l->experts_at == FAST_PLACE_ROUND_ROBIN)
			return expert + k * E;
		return expert * r + k;
	}
}

uint32_t fast_moe_token_src(const struct fast_moe_layout *l, uint64_t token, uint64_t ntokens)
{
	if (l->tokens_at == FAST_PLACE_ROUND_ROBIN)
		return (uint32_t)(token % l->ng);
	return (uint32_t)((u128)token * l->ng / ntokens);
}

void fast_moe_tokens_free(struct fast_moe_tokens *t)
{
	if (!t)
		return;
	free(t->ids);
	t->ids = NULL;
	t->ntokens = 0;
}

void fast_moe_groups_free(struct fast_moe_groups *g)
{
	if (!g)
		return;
	free(g->tokens);
	free(g->counts);
	g->tokens = g->counts = NULL;
	g->ngroups = 0;
}

/* --- counting ----------------------------------------------------------- */

int fast_moe_count_tokens(const struct fast_moe_layout *l, const struct fast_moe_tokens *t,
			  bool dedup, uint64_t *counts, struct fast_err *err)
{
	uint32_t ng = l->ng, K = t->topk;
	uint64_t *stamp;

	for (uint64_t i = 0; i < t->ntokens * K; i++)
		if (t->ids[i] >= l->experts)
			return fast_err_set(err, FAST_EINPUT, "token %llu: expert %u out of range (%u experts)",
					    (unsigned long long)(i / K), t->ids[i], l->experts);
	stamp = fast_calloc(ng, sizeof *stamp);
	if (!stamp)
		return fast_err_set(err, FAST_ENOMEM, "out of memory");
	for (uint32_t g = 0; g < ng; g++)
		stamp[g] = UINT64_MAX;
	for (uint64_t tok = 0; tok < t->ntokens; tok++) {
		uint32_t s = fast_moe_token_src(l, tok, t->ntokens);
		for (uint32_t j = 0; j < K; j++) {
			uint32_t d = fast_moe_expert_gpu(l, t->ids[tok * K + j], s);
			if (dedup && stamp[d] == tok)
				continue;
			stamp[d] = tok;
			counts[(size_t)s * ng + d]++;
		}
	}
	free(stamp);
	return 0;
}

int fast_moe_count_groups(const struct fast_moe_layout *l, const struct fast_moe_groups *g,
			  uint64_t *counts, struct fast_err *err)
{
	uint32_t ng = l->ng, E = g->experts;
	uint64_t T = 0, start = 0, *nsrc, *share;
	int rc = 0;

	if (E > l->experts)
		return fast_err_set(err, FAST_EINPUT, "%u experts in the data, %u in the layout", E,
				    l->experts);
	for (uint32_t i = 0; i < g->ngroups; i++)
		T += g->tokens[i];
	nsrc = fast_calloc(ng, sizeof *nsrc);
	share = fast_calloc(ng, sizeof *share);
	if (!nsrc || !share) {
		free(nsrc);
		free(share);
		return fast_err_set(err, FAST_ENOMEM, "out of memory");
	}
	for (uint32_t i = 0; i < g->ngroups && rc == 0; i++) {
		const uint64_t *c = g->counts + (size_t)i * E;

		memset(nsrc, 0, ng * sizeof *nsrc);
		for (uint64_t tok = start; tok < start + g->tokens[i]; tok++)
			nsrc[fast_moe_token_src(l, tok, T)]++;
		start += g->tokens[i];
		for (uint32_t e = 0; e < E && rc == 0; e++) {
			if (c[e] == 0)
				continue;
			if (g->tokens[i] == 0) {
				rc = fast_err_set(err, FAST_EINPUT,
						  "group %u: %llu selections of expert %u but no tokens", i,
						  (unsigned long long)c[e], e);
				break;
			}
			rc = fast_apportion(c[e], nsrc, ng, e, share, err);
			for (uint32_t s = 0; s < ng && rc == 0; s++)
				if (share[s])
					counts[(size_t)s * ng + fast_moe_expert_gpu(l, e, s)] += share[s];
		}
	}
	free(nsrc);
	free(share);
	return rc;
}

/* --- text scanning ------------------------------------------------------ */

struct lines {
	const char *p, *end;
	uint32_t no;
};

/* Lines of text[0..len), after a UTF-8 byte-order mark if there is one
 * (spreadsheet exports start with it). */
static struct lines lines_of(const char *text, size_t len)
{
	struct lines it = { text, text + len, 0 };

	if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
		it.p += 3;
	return it;
}

/* Next line without its "\n" and any carriage returns before it (CRLF
 * files, and CRCRLF ones converted twice); false at the end. */
static bool next_line(struct lines *it, const char **s, size_t *n)
{
	const char *nl;

	if (it->p >= it->end)
		return false;
	nl = memchr(it->p, '\n', (size_t)(it->end - it->p));
	*s = it->p;
	*n = (size_t)((nl ? nl : it->end) - it->p);
	it->p = nl ? nl + 1 : it->end;
	while (*n && (*s)[*n - 1] == '\r')
		(*n)--;
	it->no++;
	return true;
}

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
	struct lines it = lines_of(text, len);
	struct fast_moe_tokens t = { 0, topk, 0, NULL };
	struct field *f = NULL;
	uint64_t cap = 0;
	size_t fcap = 0;
	const char *s;
	size_t n;
	int rc = 0;

	if (topk == 0 || topk > experts || experts > 65535)
		return fast_err_set(err, FAST_EUSAGE, "%s: bad model shape (top-%u of %u)", name,
				    topk, experts);
	while (rc == 0 && next_line(&it, &s, &n)) {
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

static int groups_alloc(struct fast_moe_groups *g, uint32_t n, uint32_t experts,
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
	struct lines it = lines_of(text, len);
	struct field *f = fast_calloc(ncol + 1, sizeof *f);
	const char *s;
	size_t n, nf;
	int rc = 0;

	if (!f)
		return fast_err_set(err, FAST_ENOMEM, "out of memory");
	if (!next_line(&it, &s, &n)) {
		free(f);
		return fast_err_set(err, FAST_EINPUT, "%s:1: empty file, expected a CSV header", name);
	}
	nf = split(s, n, ',', f, ncol + 1);
	rc = header(f, nf, ctx, err);
	while (rc == 0 && next_line(&it, &s, &n)) {
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

static int add_layer(uint32_t **v, uint32_t *n, uint32_t *cap, uint32_t layer,
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
		return add_layer(&c->layers, &c->nlayers, &c->lcap, (uint32_t)layer, err);
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
		rc = groups_alloc(&c->g, nc, c->experts, err);
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
		return add_layer(&c->layers, &c->nlayers, &c->lcap, (uint32_t)layer, err);
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
		rc = groups_alloc(&g, 1, experts, err);
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

static int u32_cmp(const void *a, const void *b)
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
		struct lines it = lines_of(text, len);
		const char *s;
		size_t hn;

		c.name = name;
		c.task = domain;
		c.discover = true;
		/* the column count comes from the header line */
		if (!next_line(&it, &s, &hn))
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
		qsort(layers, nl, sizeof *layers, u32_cmp);
	*out = layers;
	*n = nl;
	return 0;
}

/* --- models -------------------------------------------------------------- */

enum kind { KIND_DEEPSEEK, KIND_COUNTS, KIND_SWITCH };

struct model_def {
	struct fast_moe_model pub; /* first: fast_moe_model_find returns it */
	enum kind kind;
	const char *folder;
	const char *csv_model; /* model column of expert_counts.csv */
};

static const struct model_def models[] = {
	{ { "deepseek-v2-lite", "DeepSeek-V2-Lite",
	    "deepseek-ai/ESFT results/expert_scores, MIT (LICENSE-CODE; model under the "
	    "DeepSeek License)",
	    64, 6, 2048, "intent", "intent, law, summary, translation" },
	  KIND_DEEPSEEK, "esft_deepseek_v2lite", NULL },
	{ { "olmoe", "OLMoE-1B-7B", "allenai/OLMoE scripts/routing_output, Apache-2.0", 64, 8,
	    2048, "arxiv", "arxiv, book, c4, github, wikipedia, tulu" },
	  KIND_COUNTS, "olmoe_allenai", "olmoe" },
	{ { "olmoe-sft", "OLMoE-1B-7B SFT", "allenai/OLMoE scripts/routing_output, Apache-2.0",
	    64, 8, 2048, "tulu", "tulu" },
	  KIND_COUNTS, "olmoe_allenai", "olmoe-sft" },
	{ { "olmoe-dpo", "OLMoE-1B-7B DPO", "allenai/OLMoE scripts/routing_output, Apache-2.0",
	    64, 8, 2048, "tulu", "tulu" },
	  KIND_COUNTS, "olmoe_allenai", "olmoe-dpo" },
	{ { "mixtral", "Mixtral-8x7B", "allenai/OLMoE scripts/routing_output, Apache-2.0", 8, 2,
	    4096, "arxiv", "arxiv, book, c4, github, wikipedia" },
	  KIND_COUNTS, "olmoe_allenai", "mistral" },
	{ { "switch128", "google/switch-base-128", "cyanmishra92/specMoE, MIT", 128, 1, 768,
	    "pooled", "pooled" },
	  KIND_SWITCH, "specmoe_switch128", NULL },
};

#define NMODELS (sizeof models / sizeof models[0])

const struct fast_moe_model *fast_moe_model_find(const char *name)
{
	for (size_t i = 0; i < NMODELS; i++)
		if (strcmp(models[i].pub.name, name) == 0)
			return &models[i].pub;
	return NULL;
}

const char *const *fast_moe_model_names(void)
{
	static const char *const names[] = { "deepseek-v2-lite", "olmoe", "olmoe-sft",
					     "olmoe-dpo", "mixtral", "switch128", NULL };
	return names;
}

/* --- import -------------------------------------------------------------- */

static int path_join(char *buf, size_t size, const char *a, const char *b, const char *c,
		     struct fast_err *err)
{
	int n = snprintf(buf, size, "%s/%s%s%s", a, b, c ? "/" : "", c ? c : "");
	if (n < 0 || (size_t)n >= size)
		return fast_err_set(err, FAST_EUSAGE, "data path too long");
	return 0;
}

/* Layers with a raw_intent/expert_weights_L.txt file, ascending. */
static int raw_layers(const char *dir, uint32_t **out, uint32_t *n, struct fast_err *err)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	uint32_t *v = NULL, nv = 0, cap = 0;
	int rc = 0;

	if (!d)
		return fast_err_set(err, FAST_EINPUT, "%s: %s", dir, strerror(errno));
	while (rc == 0 && (de = readdir(d)) != NULL) {
		unsigned layer;
		char tail[8];
		if (sscanf(de->d_name, "expert_weights_%u.%7s", &layer, tail) == 2 &&
		    strcmp(tail, "txt") == 0)
			rc = add_layer(&v, &nv, &cap, layer, err);
	}
	closedir(d);
	if (rc < 0) {
		free(v);
		return rc;
	}
	if (nv)
		qsort(v, nv, sizeof *v, u32_cmp);
	*out = v;
	*n = nv;
	return 0;
}

static int switch_counts(const char *path, const struct fast_limits *lim, uint32_t experts,
			 struct fast_moe_groups *out, struct fast_err *err)
{
	struct fast_json *doc = NULL;
	struct fast_jctx c;
	struct fast_moe_groups g = { 0 };
	const struct fast_jv *dist, *m;
	char *text = NULL;
	size_t len;
	bool *seen = NULL;
	uint64_t sum = 0;
	uint32_t nseen = 0;
	int rc;

	rc = fast_read_file(path, lim->max_file_bytes, &text, &len, err);
	if (rc < 0)
		return rc;
	rc = fast_json_parse(text, len, path, &doc, err);
	free(text);
	if (rc < 0)
		return rc;
	fast_jctx_init(&c, path, err);
	g.experts = experts;
	rc = groups_alloc(&g, 1, experts, err);
	seen = fast_calloc(experts, sizeof *seen);
	if (rc == 0 && !seen)
		rc = fast_err_set(err, FAST_ENOMEM, "out of memory");
	dist = fast_jv_get(fast_json_root(doc), "expert_distribution");
	if (rc == 0 && (!dist || fast_jv_type(dist) != FAST_JOBJECT))
		rc = fast_jctx_fail(&c, FAST_EINPUT, "missing object \"expert_distribution\"");
	if (rc == 0) {
		size_t old = fast_jctx_push_key(&c, "expert_distribution");
		for (m = fast_jv_first(dist); m && rc == 0; m = fast_jv_next(m)) {
			const char *key = fast_jv_key(m);
			char *end;
			unsigned long e;
			uint64_t x;
			size_t o2 = fast_jctx_push_key(&c, key);

			errno = 0;
			e = strtoul(key, &end, 10);
			if (!*key || *end || errno || key[0] == '-' || e >= experts)
				rc = fast_jctx_fail(&c, FAST_EINPUT, "not an expert id (0..%u)",
						    experts - 1);
			else if (seen[e])
				rc = fast_jctx_fail(&c, FAST_EINPUT, "expert listed twice");
			else if ((rc = fast_jv_as_u64(&c, m, FAST_JSON_MAX_BYTES, &x)) == 0) {
				seen[e] = true;
				nseen++;
				g.counts[e] = x;
				sum += x;
			}
			fast_jctx_pop(&c, o2);
		}
		if (rc == 0 && nseen != experts)
			rc = fast_jctx_fail(&c, FAST_EINPUT, "%u of %u experts listed", nseen, experts);
		fast_jctx_pop(&c, old);
	}
	fast_json_free(doc);
	free(seen);
	if (rc < 0) {
		fast_moe_groups_free(&g);
		return rc;
	}
	g.ngroups = 1;
	g.tokens[0] = sum; /* top-1: one selection per token */
	*out = g;
	return 0;
}

/* Import state shared by the per-layer steps. */
struct imp {
	const struct fast_moe_import *opt;
	const struct model_def *md;
	const struct fast_limits *lim;
	struct fast_moe_layout layout;
	const char *domain, *selection;
	char path[4096];
	char *text; /* the CSV, read once */
	size_t len;
	bool per_token; /* DeepSeek raw intent */
};

static int layer_counts(struct imp *im, uint32_t layer, uint64_t *counts, struct fast_err *err)
{
	const struct model_def *md = im->md;
	struct fast_moe_groups g = { 0 };
	int rc;

	if (im->per_token) {
		struct fast_moe_tokens t;
		char file[64], *text;
		size_t len;

		snprintf(file, sizeof file, "expert_weights_%u.txt", layer);
		rc = path_join(im->path, sizeof im->path, im->opt->data_dir, md->folder,
			       "raw_intent", err);
		if (rc == 0) {
			size_t n = strlen(im->path);
			if (n + 1 + strlen(file) >= sizeof im->path)
				return fast_err_set(err, FAST_EUSAGE, "data path too long");
			snprintf(im->path + n, sizeof im->path - n, "/%s", file);
		}
		if (rc < 0)
			return rc;
		rc = fast_read_file(im->path, im->lim->max_file_bytes, &text, &len, err);
		if (rc < 0)
			return rc;
		rc = fast_moe_parse_deepseek_raw(text, len, im->path, md->pub.experts, md->pub.topk,
						 &t, err);
		free(text);
		if (rc < 0)
			return rc;
		rc = fast_moe_count_tokens(&im->layout, &t, !im->opt->no_dedup, counts, err);
		fast_moe_tokens_free(&t);
		return rc;
	}
	if (md->kind == KIND_SWITCH)
		rc = switch_counts(im->path, im->lim, md->pub.experts, &g, err);
	else if (md->kind == KIND_DEEPSEEK)
		rc = fast_moe_parse_seq_csv(im->text, im->len, im->path, im->domain, layer,
					    md->pub.experts, md->pub.topk, &g, err);
	else
		rc = fast_moe_parse_counts_csv(im->text, im->len, im->path, md->csv_model,
					       im->selection, im->domain, layer, md->pub.experts,
					       md->pub.topk, &g, err);
	if (rc == 0)
		rc = fast_moe_count_groups(&im->layout, &g, counts, err);
	fast_moe_groups_free(&g);
	return rc;
}

static bool has_layer(const uint32_t *v, uint32_t n, uint32_t x)
{
	for (uint32_t i = 0; i < n; i++)
		if (v[i] == x)
			return true;
	return false;
}

static void describe(const struct imp *im, uint64_t B, struct fast_traffic *t)
{
	const struct fast_moe_import *o = im->opt;
	const struct model_def *md = im->md;
	char ep[48];
	const char *method;

	if (o->gpus_per_server && o->ng % o->gpus_per_server == 0)
		snprintf(ep, sizeof ep, "EP%u (%ux%u)", o->ng, o->ng / o->gpus_per_server,
			 o->gpus_per_server);
	else
		snprintf(ep, sizeof ep, "EP%u", o->ng);
	if (im->per_token)
		method = o->no_dedup ? "per-token routing, one copy per (token, expert)"
				     : "per-token routing, exact dispatch (a token sent once per GPU)";
	else if (md->kind == KIND_DEEPSEEK)
		method = "per-sequence expert counts split over sources by token share, one copy "
			 "per (token, expert)";
	else
		method = "per-expert counts split over sources by token share, one copy per "
			 "(token, expert)";
	snprintf(t->source, sizeof t->source,
		 "%s %s %s%s%s: %s; %s; %s, experts %s, tokens %s, %llu B/token (hidden %u bf16: "
		 "%s) (fast trace import)",
		 md->pub.name, md->kind == KIND_DEEPSEEK ? "task" : "domain", im->domain,
		 md->kind == KIND_COUNTS ? " selection " : "",
		 md->kind == KIND_COUNTS ? im->selection : "", md->pub.origin, method, ep,
		 fast_placement_name(o->experts_at), fast_placement_name(o->tokens_at),
		 (unsigned long long)B, md->pub.hidden,
		 B == 2ull * md->pub.hidden ? "default" : "overridden");
}

int fast_moe_import(const struct fast_moe_import *opt, const struct fast_limits *lim,
		    struct fast_traffic *out, struct fast_err *err)
{
	struct imp im = { 0 };
	struct fast_traffic t = { 0 };
	struct fast_limits dl;
	uint32_t *present = NULL, npresent = 0, nl, per;
	const uint32_t *layers;
	uint64_t B;
	int rc;

	if (!lim) {
		fast_limits_default(&dl);
		lim = &dl;
	}
	im.opt = opt;
	im.lim = lim;
	im.md = (const struct model_def *)fast_moe_model_find(opt->source ? opt->source : "");
	if (!im.md)
		return fast_err_set(err, FAST_EUSAGE,
				    "unknown source '%.40s' (known: deepseek-v2-lite, olmoe, olmoe-sft, "
				    "olmoe-dpo, mixtral, switch128)",
				    opt->source ? opt->source : "");
	im.layout.ng = opt->ng;
	im.layout.experts = im.md->pub.experts;
	im.layout.experts_at = opt->experts_at;
	im.layout.tokens_at = opt->tokens_at;
	rc = fast_moe_layout_check(&im.layout, err);
	if (rc < 0) {
		fast_err_prefix(err, "%s", im.md->pub.name);
		if (err)
			err->code = FAST_EUSAGE;
		return FAST_EUSAGE;
	}
	if (opt->ng > lim->max_gpus)
		return fast_err_set(err, FAST_ELIMIT, "EP%u exceeds the limit of %u GPUs", opt->ng,
				    lim->max_gpus);
	B = opt->token_bytes ? opt->token_bytes : 2ull * im.md->pub.hidden;
	im.domain = opt->domain ? opt->domain : im.md->pub.default_domain;
	im.selection = opt->selection ? opt->selection : "topk";
	if (im.md->kind != KIND_COUNTS && opt->selection && strcmp(opt->selection, "topk") != 0)
		return fast_err_set(err, FAST_EUSAGE, "%s: --selection applies to OLMoE and Mixtral only",
				    im.md->pub.name);
	if (im.md->kind == KIND_COUNTS && strcmp(im.selection, "topk") != 0 &&
	    strcmp(im.selection, "top1") != 0)
		return fast_err_set(err, FAST_EUSAGE, "unknown selection '%.40s' (known: topk, top1)",
				    im.selection);
	if (im.md->kind == KIND_SWITCH && strcmp(im.domain, "pooled") != 0)
		return fast_err_set(err, FAST_EUSAGE, "switch128 has no domains (its counts are pooled)");
	im.per_token = im.md->kind == KIND_DEEPSEEK && strcmp(im.domain, "intent") == 0;

	/* the data file, and the layers it has */
	if (im.per_token) {
		rc = path_join(im.path, sizeof im.path, opt->data_dir, im.md->folder, "raw_intent", err);
		if (rc == 0)
			rc = raw_layers(im.path, &present, &npresent, err);
	} else if (im.md->kind == KIND_SWITCH) {
		rc = path_join(im.path, sizeof im.path, opt->data_dir, im.md->folder,
			       "maximum_real_traces.json", err);
		if (rc == 0 && opt->nlayers)
			rc = fast_err_set(err, FAST_EUSAGE,
					  "switch128 has one pooled layer: give no --layers");
		if (rc == 0) {
			present = fast_calloc(1, sizeof *present);
			npresent = 1;
			if (!present)
				rc = fast_err_set(err, FAST_ENOMEM, "out of memory");
		}
	} else {
		bool seq = im.md->kind == KIND_DEEPSEEK;
		rc = path_join(im.path, sizeof im.path, opt->data_dir, im.md->folder,
			       seq ? "per_sequence_expert_counts.csv" : "expert_counts.csv", err);
		if (rc == 0)
			rc = fast_read_file(im.path, lim->max_file_bytes, &im.text, &im.len, err);
		if (rc == 0)
			rc = fast_moe_csv_layers(im.text, im.len, im.path, seq, im.md->csv_model,
						 im.selection, im.domain, &present, &npresent, err);
	}
	if (rc == 0 && npresent == 0)
		rc = fast_err_set(err, FAST_EUSAGE, "%s: no data for %s '%.40s' (known: %s)",
				  im.md->pub.name, im.md->kind == KIND_DEEPSEEK ? "task" : "domain",
				  im.domain, im.md->pub.domains);
	layers = opt->nlayers ? opt->layers : present;
	nl = opt->nlayers ? opt->nlayers : npresent;
	for (uint32_t i = 0; rc == 0 && i < nl; i++) {
		if (!has_layer(present, npresent, layers[i]))
			rc = fast_err_set(err, FAST_EUSAGE, "%s %s: no layer %u (layers %u..%u)",
					  im.md->pub.name, im.domain, layers[i], present[0],
					  present[npresent - 1]);
		for (uint32_t j = 0; rc == 0 && j < i; j++)
			if (layers[j] == layers[i])
				rc = fast_err_set(err, FAST_EUSAGE, "layer %u given twice", layers[i]);
	}
	per = opt->no_combine ? 1 : 2;
	if (rc == 0 && (uint64_t)nl * per > lim->max_matrices)
		rc = fast_err_set(err, FAST_ELIMIT, "%u matrices exceed the limit of %u", nl * per,
				  lim->max_matrices);
	if (rc == 0)
		rc = fast_traffic_alloc(&t, opt->ng, nl * per, lim, err);
	for (uint32_t i = 0; rc == 0 && i < nl; i++) {
		uint64_t *m = t.m[i * per].bytes, sum = 0, tot;
		size_t nn = (size_t)opt->ng * opt->ng;

		rc = layer_counts(&im, layers[i], m, err);
		for (size_t k = 0; rc == 0 && k < nn; k++)
			sum += m[k];
		if (rc == 0 && (!fast_mul_u64(sum, B, &tot) || tot > FAST_JSON_MAX_BYTES))
			rc = fast_err_set(err, FAST_ELIMIT,
					  "layer %u: %llu token copies x %llu bytes exceeds 2^53 bytes",
					  layers[i], (unsigned long long)sum, (unsigned long long)B);
		for (size_t k = 0; rc == 0 && k < nn; k++)
			m[k] *= B;
		if (rc == 0) {
			char prefix[32];
			if (im.md->kind == KIND_SWITCH)
				snprintf(prefix, sizeof prefix, "pooled");
			else
				snprintf(prefix, sizeof prefix, "layer%u", layers[i]);
			snprintf(t.m[i * per].label, sizeof t.m[0].label, "%s/dispatch", prefix);
			if (per == 2) {
				memcpy(t.m[i * per + 1].bytes, m, nn * sizeof *m);
				rc = fast_matrix_transpose(t.m[i * per + 1].bytes, opt->ng, err);
				snprintf(t.m[i * per + 1].label, sizeof t.m[0].label, "%s/combine",
					 prefix);
			}
		}
		if (rc == 0 && opt->progress)
			opt->progress(opt->progress_arg, i + 1, nl);
	}
	free(present);
	free(im.text);
	if (rc < 0) {
		fast_traffic_free(&t);
		return rc;
	}
	describe(&im, B, &t);
	*out = t;
	return 0;
}
