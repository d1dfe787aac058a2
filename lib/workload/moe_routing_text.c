/*
 * moe_routing_text.c - the text formats of routing files (moe_routing.h;
 * docs/formats.md, "Routing files"):
 *
 *   .jsonl  one JSON object per line: Megatron-LM's router trace records
 *           ({"layer", "top_indices": [[ids of a token], ...], optional
 *           "rank", "topk", "num_tokens", "block", "mtp_idx", ...}: one per
 *           (step, layer) of one rank) or one token per line ({"experts":
 *           [ids], optional "layer", "src"}).  Fields we do not use are
 *           ignored (the tracer adds sidecar offsets); MTP records (an
 *           "mtp_idx", or a "block" other than "decoder") are skipped.
 *   .json   counts as nested arrays: [layers][experts] or
 *           [layers][gpus][experts] (what json.dump(t.tolist()) writes).
 *   .csv    a header, then rows: expert ids (columns e0..e{k-1}, optional
 *           layer, src, token) or counts (columns expert, count, optional
 *           layer, src), told apart by the header.
 *
 * Messages: "file:LINE: what" (and "file:LINE: /json/path: what").
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/base/json.h"
#include "lib/base/lines.h"
#include "lib/workload/moe_internal.h"
#include "lib/workload/moe_routing.h"

#define MAX_TOPK 1024u
#define MAX_LAYER 1000000u

static bool blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t')
			return false;
	return true;
}

/* --- JSON lines --------------------------------------------------------- */

/* A JSON integer id into *out (|v| < 2^53); fails at c's path. */
static int json_int(struct fast_jctx *c, const struct fast_jv *v, int64_t *out)
{
	double d;

	if (fast_jv_type(v) != FAST_JNUMBER)
		return fast_jctx_fail(c, FAST_EINPUT, "expected an integer, got %s",
				      fast_jtype_name(fast_jv_type(v)));
	d = fast_jv_number(v);
	if (d != floor(d) || fabs(d) > 9007199254740992.0)
		return fast_jctx_fail(c, FAST_EINPUT, "not an integer expert id (got %.17g)", d);
	*out = (int64_t)d;
	return 0;
}

/* One token's ids (a JSON array) into b, at c's path. */
static int json_token(struct fast_jctx *c, const struct fast_jv *arr, uint32_t layer, uint32_t src,
		      struct fast_moe_rows *b, uint32_t E)
{
	int64_t ids[MAX_TOPK];
	size_t k = 0;
	char msg[160];
	int rc, bad;

	if (fast_jv_type(arr) != FAST_JARRAY)
		return fast_jctx_fail(c, FAST_EINPUT, "a token's experts must be an array, got %s",
				      fast_jtype_name(fast_jv_type(arr)));
	if (fast_jv_size(arr) == 0 || fast_jv_size(arr) > MAX_TOPK)
		return fast_jctx_fail(c, FAST_EINPUT, "top_k %zu (1..%u)", fast_jv_size(arr), MAX_TOPK);
	if (b->topk && fast_jv_size(arr) != b->topk)
		return fast_jctx_fail(c, FAST_EINPUT, "%zu experts, earlier tokens chose %u",
				      fast_jv_size(arr), b->topk);
	for (const struct fast_jv *v = fast_jv_first(arr); v; v = fast_jv_next(v), k++) {
		size_t old = fast_jctx_push_index(c, k);
		rc = json_int(c, v, &ids[k]);
		fast_jctx_pop(c, old);
		if (rc < 0)
			return rc;
	}
	bad = fast_moe_routing_token_bad(ids, (uint32_t)k, E, msg, sizeof msg);
	if (bad >= 0) {
		size_t old = fast_jctx_push_index(c, (size_t)bad);
		rc = fast_jctx_fail(c, FAST_EINPUT, "%s", msg);
		fast_jctx_pop(c, old);
		return rc;
	}
	b->topk = (uint32_t)k;
	return fast_moe_rows_add(b, layer, src, ids, c->err);
}

/* An optional non-negative integer field; *have says whether it is there. */
static int opt_u32(struct fast_jctx *c, const struct fast_jv *obj, const char *key, uint32_t max,
		   uint32_t *out, bool *have)
{
	uint64_t v;
	int rc;

	*have = fast_jv_get(obj, key) != NULL;
	if (!*have)
		return 0;
	rc = fast_jv_get_u64(c, obj, key, true, max, &v);
	if (rc == 0)
		*out = (uint32_t)v;
	return rc;
}

/* One record (a line's object). */
static int jsonl_record(struct fast_jctx *c, const struct fast_jv *o, struct fast_moe_rows *b,
			uint32_t E)
{
	const struct fast_jv *ti = fast_jv_get(o, "top_indices"), *ex = fast_jv_get(o, "experts");
	const struct fast_jv *block = fast_jv_get(o, "block");
	uint32_t layer = 0, src = 0, x = 0;
	bool have_layer, have_src, have;
	int rc;

	if (fast_jv_type(o) != FAST_JOBJECT)
		return fast_jctx_fail(c, FAST_EINPUT, "a line must hold a JSON object");
	if (!ti == !ex)
		return fast_jctx_fail(c, FAST_EINPUT,
				      "a record needs \"top_indices\" (a Megatron-LM router trace "
				      "record) or \"experts\" (one token), not %s",
				      ti ? "both" : "neither");
	if (fast_jv_get(o, "mtp_idx") ||
	    (block && fast_jv_type(block) == FAST_JSTRING && strcmp(fast_jv_string(block), "decoder")))
		return 0; /* a multi-token-prediction layer: not the decoder's routing */
	if ((rc = opt_u32(c, o, "layer", MAX_LAYER, &layer, &have_layer)) < 0)
		return rc;
	if (ti && !have_layer)
		return fast_jctx_fail(c, FAST_EINPUT, "a router trace record needs \"layer\"");
	if ((rc = opt_u32(c, o, ti ? "rank" : "src", 1u << 20, &src, &have_src)) < 0)
		return rc;
	if (b->n && have_src != b->have_src)
		return fast_jctx_fail(c, FAST_EINPUT,
				      "%s \"%s\" (the source GPU) and earlier records %s: give it for "
				      "all or none",
				      have_src ? "has" : "has no", ti ? "rank" : "src",
				      b->have_src ? "do" : "do not");
	b->have_src = have_src;
	if (ex) {
		size_t old = fast_jctx_push_key(c, "experts");
		rc = json_token(c, ex, layer, src, b, E);
		fast_jctx_pop(c, old);
		return rc;
	}
	if (fast_jv_type(ti) != FAST_JARRAY)
		return fast_jctx_fail(c, FAST_EINPUT, "\"top_indices\" must be an array");
	if ((rc = opt_u32(c, o, "num_tokens", UINT32_MAX, &x, &have)) < 0)
		return rc;
	if (have && x != fast_jv_size(ti))
		return fast_jctx_fail(c, FAST_EINPUT, "\"num_tokens\" %u, but %zu rows in \"top_indices\"",
				      x, fast_jv_size(ti));
	if ((rc = opt_u32(c, o, "topk", MAX_TOPK, &x, &have)) < 0)
		return rc;
	if (have && fast_jv_size(ti) && (x == 0 || (b->topk && x != b->topk)))
		return fast_jctx_fail(c, FAST_EINPUT, "\"topk\" %u, earlier tokens chose %u", x, b->topk);
	if (have && !b->topk)
		b->topk = x;
	size_t old = fast_jctx_push_key(c, "top_indices"), i = 0;
	for (const struct fast_jv *t = fast_jv_first(ti); t && rc == 0; t = fast_jv_next(t), i++) {
		size_t o2 = fast_jctx_push_index(c, i);
		rc = json_token(c, t, layer, src, b, E);
		fast_jctx_pop(c, o2);
	}
	fast_jctx_pop(c, old);
	return rc;
}

/* "name:1:COL: msg" of a one-line parse -> "path:LINE:COL: msg". */
static void renumber(struct fast_err *err, const char *name)
{
	size_t n = strlen(name);
	char tmp[FAST_ERRMSG_MAX];

	if (!err || strncmp(err->msg, name, n) != 0 || strncmp(err->msg + n, ":1:", 3) != 0)
		return;
	snprintf(tmp, sizeof tmp, "%s:%s", name, err->msg + n + 3);
	memcpy(err->msg, tmp, sizeof tmp);
}

int fast_moe_routing_jsonl(const char *text, size_t len, struct fast_moe_routing *r,
			   struct fast_err *err)
{
	struct fast_lines it = fast_lines_of(text, len);
	struct fast_moe_rows b = { 0 };
	const char *s;
	size_t n;
	int rc = 0;

	while (rc == 0 && fast_lines_next(&it, &s, &n)) {
		struct fast_json *doc;
		struct fast_jctx c;
		char name[300];

		if (blank(s, n))
			continue;
		snprintf(name, sizeof name, "%s:%u", r->path, it.no);
		rc = fast_json_parse(s, n, name, &doc, err);
		if (rc < 0) {
			renumber(err, name);
			break;
		}
		fast_jctx_init(&c, name, err);
		rc = jsonl_record(&c, fast_json_root(doc), &b, r->experts);
		fast_json_free(doc);
	}
	if (rc == 0)
		rc = fast_moe_rows_finish(&b, r, err);
	fast_moe_rows_free(&b);
	return rc;
}

/* --- JSON counts -------------------------------------------------------- */

/* The lengths of a rectangular nested array of depth 2 or 3 into dims. */
static int json_dims(struct fast_jctx *c, const struct fast_jv *root, uint64_t *dims, uint32_t *nd)
{
	const struct fast_jv *v = root;

	*nd = 0;
	while (fast_jv_type(v) == FAST_JARRAY && *nd < 4) {
		dims[(*nd)++] = fast_jv_size(v);
		v = fast_jv_first(v);
		if (!v)
			break;
	}
	if (*nd < 2 || *nd > 3 || (v && fast_jv_type(v) == FAST_JARRAY))
		return fast_jctx_fail(c, FAST_EINPUT,
				      "counts must be a [layers][experts] or [layers][gpus][experts] "
				      "array of integers");
	return 0;
}

/* Walk the array at depth d, checking lengths and filling counts. */
static int json_fill(struct fast_jctx *c, const struct fast_jv *v, const uint64_t *dims,
		     uint32_t nd, uint32_t d, uint64_t *counts, uint64_t *at)
{
	size_t i = 0;
	int rc = 0;

	if (fast_jv_type(v) != FAST_JARRAY || fast_jv_size(v) != dims[d])
		return fast_jctx_fail(c, FAST_EINPUT, "expected an array of %llu (the array is not "
						      "rectangular)",
				      (unsigned long long)dims[d]);
	for (const struct fast_jv *e = fast_jv_first(v); e && rc == 0; e = fast_jv_next(e), i++) {
		size_t old = fast_jctx_push_index(c, i);
		if (d + 1 < nd)
			rc = json_fill(c, e, dims, nd, d + 1, counts, at);
		else
			rc = fast_jv_as_u64(c, e, FAST_JSON_MAX_BYTES, &counts[(*at)++]);
		fast_jctx_pop(c, old);
	}
	return rc;
}

int fast_moe_routing_json(const char *text, size_t len, struct fast_moe_routing *r,
			  struct fast_err *err)
{
	struct fast_json *doc;
	struct fast_jctx c;
	uint64_t dims[4], at = 0;
	uint32_t nd;
	int rc = fast_json_parse(text, len, r->path, &doc, err);

	if (rc < 0)
		return rc;
	fast_jctx_init(&c, r->path, err);
	rc = json_dims(&c, fast_json_root(doc), dims, &nd);
	if (rc == 0 && (dims[0] == 0 || dims[0] > 4096 || dims[nd - 1] == 0 ||
			dims[nd - 1] > 65536 || (nd == 3 && (dims[1] == 0 || dims[1] > (1u << 20)))))
		rc = fast_jctx_fail(&c, FAST_EINPUT, "%llu layers of %llu experts (1..4096, 1..65536)",
				    (unsigned long long)dims[0], (unsigned long long)dims[nd - 1]);
	if (rc == 0 && r->experts && r->experts != dims[nd - 1])
		rc = fast_jctx_fail(&c, FAST_EINPUT, "%llu experts, --experts says %u",
				    (unsigned long long)dims[nd - 1], r->experts);
	if (rc == 0) {
		r->kind = nd == 3 ? FAST_ROUTING_SRC_COUNTS : FAST_ROUTING_COUNTS;
		r->experts = (uint32_t)dims[nd - 1];
		r->ngpus = nd == 3 ? (uint32_t)dims[1] : 0;
		rc = fast_moe_routing_alloc_counts(r, (uint32_t)dims[0],
						   (nd == 3 ? dims[1] : 1) * dims[nd - 1], err);
	}
	if (rc == 0)
		rc = json_fill(&c, fast_json_root(doc), dims, nd, 0, r->counts, &at);
	fast_json_free(doc);
	if (rc == 0)
		rc = fast_moe_routing_check_sums(r, err);
	return rc;
}

/* --- CSV ---------------------------------------------------------------- */

#define MAX_COLS (MAX_TOPK + 8)

struct csv {
	const struct fast_moe_routing *r;
	uint32_t line;
	struct fast_err *err;
	int layer, src, expert, count; /* column indexes, -1 when absent */
	int e[MAX_TOPK];              /* column of expert id j */
	uint32_t k, ncols;
};

static int csv_fail(const struct csv *c, const char *what)
{
	return fast_err_set(c->err, FAST_EINPUT, "%s:%u: %s", c->r->path, c->line, what);
}

/* Field i of the row (fields split at ','), as a decimal integer. */
static bool csv_int(const char *s, size_t n, int64_t *out)
{
	size_t i = 0;
	int64_t v = 0;
	bool neg = false;

	while (n && (s[n - 1] == ' '))
		n--;
	while (i < n && s[i] == ' ')
		i++;
	if (i < n && s[i] == '-') {
		neg = true;
		i++;
	}
	if (i == n || n - i > 16)
		return false;
	for (; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (s[i] - '0');
	}
	*out = neg ? -v : v;
	return true;
}

/* The header: which column is what. */
static int csv_header(struct csv *c, const char *s, size_t n)
{
	size_t a = 0;
	uint32_t col = 0;

	c->layer = c->src = c->expert = c->count = -1;
	for (uint32_t j = 0; j < MAX_TOPK; j++)
		c->e[j] = -1;
	for (size_t i = 0; i <= n; i++) {
		char name[32];
		size_t len = i - a;
		unsigned long j;
		char *end;

		if (i < n && s[i] != ',')
			continue;
		if (col == MAX_COLS)
			return csv_fail(c, "too many columns");
		snprintf(name, sizeof name, "%.*s", (int)(len > 31 ? 31 : len), s + a);
		a = i + 1;
		if (strcmp(name, "layer") == 0 && c->layer < 0)
			c->layer = (int)col;
		else if (strcmp(name, "src") == 0 && c->src < 0)
			c->src = (int)col;
		else if (strcmp(name, "expert") == 0 && c->expert < 0)
			c->expert = (int)col;
		else if (strcmp(name, "count") == 0 && c->count < 0)
			c->count = (int)col;
		else if (name[0] == 'e' && name[1] >= '0' && name[1] <= '9' &&
			 (j = strtoul(name + 1, &end, 10)) < MAX_TOPK && !*end && c->e[j] < 0) {
			c->e[j] = (int)col;
			if (j + 1 > c->k)
				c->k = (uint32_t)j + 1;
		} else if (strcmp(name, "token") != 0)
			return fast_err_set(c->err, FAST_EINPUT,
					    "%s:%u: unknown or repeated column '%s' (known: layer, src, "
					    "token, e0..e{k-1}; or layer, src, expert, count)",
					    c->r->path, c->line, name);
		col++;
	}
	c->ncols = col;
	for (uint32_t j = 0; j < c->k; j++)
		if (c->e[j] < 0)
			return csv_fail(c, "expert columns must be e0, e1, ... without a gap");
	if (c->k && (c->expert >= 0 || c->count >= 0))
		return csv_fail(c,
				"a header has expert id columns (e0..) or expert,count columns, not both");
	if (!c->k && (c->expert < 0 || c->count < 0))
		return csv_fail(c,
				"no routing columns: give e0..e{k-1} (expert ids) or expert,count");
	return 0;
}

/* The row's fields; false when the count is wrong. */
static bool csv_row(const struct csv *c, const char *s, size_t n, int64_t *v, uint32_t *bad)
{
	size_t a = 0;
	uint32_t col = 0;

	for (size_t i = 0; i <= n; i++) {
		if (i < n && s[i] != ',')
			continue;
		if (col >= c->ncols)
			return false;
		if (!csv_int(s + a, i - a, &v[col]))
			*bad = *bad ? *bad : col + 1;
		col++;
		a = i + 1;
	}
	return col == c->ncols;
}

/* One (layer, src, expert, count) row of a counts file, kept in rows. */
struct crow {
	uint32_t layer, src, expert;
	uint64_t count;
};

static int csv_counts(struct csv *c, struct crow *rows, uint64_t n, struct fast_moe_routing *r)
{
	uint32_t *layers = NULL, nl = 0, cap = 0, E = 0, G = 0;
	int rc = 0;

	for (uint64_t i = 0; i < n && rc == 0; i++) {
		rc = fast_moe_add_layer(&layers, &nl, &cap, rows[i].layer, c->err);
		E = rows[i].expert + 1 > E ? rows[i].expert + 1 : E;
		G = rows[i].src + 1 > G ? rows[i].src + 1 : G;
	}
	if (rc == 0 && n == 0)
		rc = fast_err_set(c->err, FAST_EINPUT, "%s: no counts", r->path);
	if (rc == 0 && r->experts && E > r->experts)
		rc = fast_err_set(c->err, FAST_EINPUT, "%s: expert %u out of range (--experts %u)",
				  r->path, E - 1, r->experts);
	if (rc < 0) {
		free(layers);
		return rc;
	}
	qsort(layers, nl, sizeof *layers, fast_moe_u32_cmp);
	r->experts = r->experts ? r->experts : E;
	r->kind = c->src >= 0 ? FAST_ROUTING_SRC_COUNTS : FAST_ROUTING_COUNTS;
	r->ngpus = c->src >= 0 ? G : 0;
	rc = fast_moe_routing_alloc_counts(r, nl, (uint64_t)(c->src >= 0 ? G : 1) * r->experts,
					   c->err);
	if (rc == 0)
		memcpy(r->layers, layers, nl * sizeof *layers);
	free(layers);
	for (uint64_t i = 0; i < n && rc == 0; i++) {
		uint32_t l = (uint32_t)fast_moe_routing_find(r, rows[i].layer);
		uint64_t *x = &r->counts[((uint64_t)l * (r->ngpus ? r->ngpus : 1) + rows[i].src) *
					 r->experts + rows[i].expert];
		if (!fast_add_u64(*x, rows[i].count, x) || *x > FAST_JSON_MAX_BYTES)
			rc = fast_err_set(c->err, FAST_EINPUT, "%s: layer %u expert %u: counts over 2^53",
					  r->path, rows[i].layer, rows[i].expert);
	}
	return rc == 0 ? fast_moe_routing_check_sums(r, c->err) : rc;
}

/* One data row: a token into b, or a count row into *cr. */
static int csv_data(struct csv *c, const int64_t *v, struct fast_moe_rows *b, struct crow *cr)
{
	int64_t layer = c->layer >= 0 ? v[c->layer] : 0, src = c->src >= 0 ? v[c->src] : 0;
	int64_t ids[MAX_TOPK];
	char msg[160];
	int bad;

	if (layer < 0 || layer > MAX_LAYER)
		return csv_fail(c, "layer is not a layer number");
	if (src < 0 || src >= (1 << 20))
		return csv_fail(c, "src is not a GPU");
	if (!c->k) {
		if (v[c->expert] < 0 || (c->r->experts && v[c->expert] >= c->r->experts) ||
		    v[c->expert] >= 65536)
			return fast_err_set(c->err, FAST_EINPUT,
					    "%s:%u: expert %lld out of range (%u experts: 0..%u)",
					    c->r->path, c->line, (long long)v[c->expert],
					    c->r->experts ? c->r->experts : 65536,
					    (c->r->experts ? c->r->experts : 65536) - 1);
		if (v[c->count] < 0 || (uint64_t)v[c->count] > FAST_JSON_MAX_BYTES)
			return csv_fail(c, "count is negative or over 2^53");
		*cr = (struct crow){ (uint32_t)layer, (uint32_t)src, (uint32_t)v[c->expert],
				     (uint64_t)v[c->count] };
		return 0;
	}
	for (uint32_t j = 0; j < c->k; j++)
		ids[j] = v[c->e[j]];
	bad = fast_moe_routing_token_bad(ids, c->k, c->r->experts, msg, sizeof msg);
	if (bad >= 0)
		return fast_err_set(c->err, FAST_EINPUT, "%s:%u: e%d: %s", c->r->path, c->line, bad, msg);
	return fast_moe_rows_add(b, (uint32_t)layer, (uint32_t)src, ids, c->err);
}

int fast_moe_routing_csv(const char *text, size_t len, struct fast_moe_routing *r,
			 struct fast_err *err)
{
	struct fast_lines it = fast_lines_of(text, len);
	struct csv c = { .r = r, .err = err };
	struct fast_moe_rows b = { 0 };
	struct crow *rows = NULL;
	uint64_t nrows = 0, cap = 0;
	int64_t v[MAX_COLS];
	const char *s;
	size_t n;
	int rc = 0;

	if (!fast_lines_next(&it, &s, &n))
		return fast_err_set(err, FAST_EINPUT, "%s: empty (a header line is needed)", r->path);
	c.line = it.no;
	if ((rc = csv_header(&c, s, n)) < 0)
		return rc;
	if (c.k && !r->experts)
		return fast_err_set(err, FAST_EUSAGE,
				    "--experts E is needed: %s holds expert ids, not how many experts "
				    "the model has",
				    r->path);
	b.topk = c.k;
	b.have_src = c.src >= 0;
	while (rc == 0 && fast_lines_next(&it, &s, &n)) {
		uint32_t bad = 0;

		c.line = it.no;
		if (blank(s, n))
			continue;
		if (!csv_row(&c, s, n, v, &bad))
			rc = fast_err_set(err, FAST_EINPUT, "%s:%u: expected %u fields", r->path, c.line,
					  c.ncols);
		else if (bad)
			rc = fast_err_set(err, FAST_EINPUT, "%s:%u: field %u is not an integer", r->path,
					  c.line, bad);
		else if (!c.k && nrows == cap) {
			struct crow *g = realloc(rows, (cap = cap ? 2 * cap : 256) * sizeof *g);
			if (!g)
				rc = fast_err_set(err, FAST_ENOMEM, "out of memory");
			else
				rows = g;
		}
		if (rc == 0)
			rc = csv_data(&c, v, &b, c.k ? NULL : &rows[nrows]);
		if (rc == 0 && !c.k)
			nrows++;
	}
	if (rc == 0)
		rc = c.k ? fast_moe_rows_finish(&b, r, err) : csv_counts(&c, rows, nrows, r);
	fast_moe_rows_free(&b);
	free(rows);
	return rc;
}
