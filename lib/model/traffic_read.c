/*
 * traffic_read.c - reading traffic: the strict JSON loader (dense rows,
 * sparse triples or token groups, schemas/traffic.schema.json), the
 * nccl-tests alltoallv matrix reader, and the sum checks both run.
 *
 * Workload: up to lim->max_gpus GPUs (16384 by default: a 2 GiB matrix),
 * lim->max_matrices matrices and lim->max_traffic_bytes of dense matrices
 * in all (4 GiB by default: every matrix is held dense, so twelve empty
 * sparse matrices of 16384 GPUs, a file of a few hundred bytes, would
 * need 24 GiB and minutes of scanning).  Dimensions are checked before anything is
 * allocated; every row, column, matrix and file total is checked for 64-bit
 * overflow at load time so that consumers may add bytes freely.
 *
 * nccl-tests matrix format: N lines of N whitespace-separated non-negative
 * decimal integers (bytes D[s][d], line s, column d); blank lines are
 * ignored.  A file whose first non-blank character is a digit (or '#') is
 * read as one; anything else is JSON.  A UTF-8 byte-order mark before
 * either is skipped.  '#' comment lines are refused with their own message:
 * nccl-tests' alltoallv_perf reads whitespace-separated numbers only (its
 * strtod stops at a '#'), so a file with comments would not run there.
 */
#include "lib/model/traffic_internal.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/base/json.h"

/* --- sums ---------------------------------------------------------------- */

/*
 * Check that every row sum, column sum and the total of matrix b fit in 64
 * bits; on success *total receives the total.  col is scratch of ng words.
 * Returns the failing kind and index through *what / *index.
 */
enum overflow { OV_NONE, OV_ROW, OV_COL, OV_TOTAL };

static enum overflow check_sums(const uint64_t *b, uint32_t ng, uint64_t *col,
				uint32_t *index, uint64_t *total)
{
	uint64_t tot = 0;

	memset(col, 0, (size_t)ng * sizeof *col);
	for (uint32_t s = 0; s < ng; s++) {
		const uint64_t *row = b + (size_t)s * ng;
		uint64_t rs = 0;
		for (uint32_t d = 0; d < ng; d++) {
			if (!fast_add_u64(rs, row[d], &rs)) {
				*index = s;
				return OV_ROW;
			}
			if (!fast_add_u64(col[d], row[d], &col[d])) {
				*index = d;
				return OV_COL;
			}
		}
		if (!fast_add_u64(tot, rs, &tot))
			return OV_TOTAL;
	}
	*total = tot;
	return OV_NONE;
}

/* Run check_sums on every matrix and the total over all of them; errors
 * name the matrix with the file's JSON path convention. */
static int check_all_sums(const struct fast_traffic *t, const char *name, bool json,
			  struct fast_err *err)
{
	uint64_t *col = fast_calloc(t->ng, sizeof *col);
	uint64_t grand = 0;
	int rc = 0;

	if (!col)
		return fast_err_set(err, FAST_ENOMEM, "%s: out of memory", name);
	for (uint32_t k = 0; k < t->count && rc == 0; k++) {
		uint32_t idx = 0;
		uint64_t tot = 0;
		char where[64];

		if (json)
			snprintf(where, sizeof where, "/matrices/%u", k);
		else
			snprintf(where, sizeof where, "matrix");
		switch (check_sums(t->m[k].bytes, t->ng, col, &idx, &tot)) {
		case OV_ROW:
			rc = fast_err_set(err, FAST_EINPUT,
					  "%s: %s: the sum of row %u overflows 64 bits", name, where,
					  idx);
			break;
		case OV_COL:
			rc = fast_err_set(err, FAST_EINPUT,
					  "%s: %s: the sum of column %u overflows 64 bits", name,
					  where, idx);
			break;
		case OV_TOTAL:
			rc = fast_err_set(err, FAST_EINPUT,
					  "%s: %s: the total bytes overflow 64 bits", name, where);
			break;
		case OV_NONE:
			if (!fast_add_u64(grand, tot, &grand))
				rc = fast_err_set(err, FAST_EINPUT,
						  "%s: the total bytes over all matrices overflow 64 bits",
						  name);
			break;
		}
	}
	free(col);
	return rc;
}

int fast_traffic_check_sums(const struct fast_traffic *t, const char *name, struct fast_err *err)
{
	return check_all_sums(t, name, true, err);
}

/* --- JSON ---------------------------------------------------------------- */

static const char *const root_keys[] = { "version", "gpus_total", "gpus", "source", "matrices",
					  NULL };
static const char *const matrix_keys[] = { "label", "kind", "token_bytes", "groups", "rows",
					    "entries", "compute_pairs", NULL };

/* One byte count at the current path. */
static int as_bytes(struct fast_jctx *c, const struct fast_jv *v, uint64_t *out)
{
	double d;

	if (fast_jv_type(v) != FAST_JNUMBER)
		return fast_jctx_fail(c, FAST_EINPUT,
				      "bytes must be a non-negative integer (got %s)",
				      fast_jtype_name(fast_jv_type(v)));
	d = fast_jv_number(v);
	if (!(d >= 0) || d != floor(d))
		return fast_jctx_fail(c, FAST_EINPUT,
				      "bytes must be a non-negative integer (got %.17g)", d);
	if (d > (double)FAST_JSON_MAX_BYTES)
		return fast_jctx_fail(c, FAST_EINPUT,
				      "bytes %.17g are above 2^53, the largest integer a JSON "
				      "number carries exactly",
				      d);
	*out = (uint64_t)d;
	return 0;
}

static int load_dense(struct fast_jctx *c, const struct fast_jv *rows, uint32_t ng,
		      uint64_t *b)
{
	size_t nrows = fast_jv_size(rows), s = 0;
	int rc;

	if ((rc = fast_jv_expect_array(c, rows)) < 0)
		return rc;
	if (nrows != ng)
		return fast_jctx_fail(c, FAST_EINPUT,
				      "has %zu rows, expected %u (gpus): the matrix must be "
				      "gpus x gpus",
				      nrows, ng);
	for (const struct fast_jv *r = fast_jv_first(rows); r; r = fast_jv_next(r), s++) {
		size_t old = fast_jctx_push_index(c, s), d = 0;
		size_t ncols = fast_jv_size(r);

		if ((rc = fast_jv_expect_array(c, r)) < 0)
			return rc;
		if (ncols != ng)
			return fast_jctx_fail(c, FAST_EINPUT,
					      "row has %zu entries, expected %u (gpus): the matrix "
					      "must be square",
					      ncols, ng);
		for (const struct fast_jv *x = fast_jv_first(r); x; x = fast_jv_next(x), d++) {
			size_t o2 = fast_jctx_push_index(c, d);
			if ((rc = as_bytes(c, x, &b[s * ng + d])) < 0)
				return rc;
			fast_jctx_pop(c, o2);
		}
		fast_jctx_pop(c, old);
	}
	return 0;
}

/* A GPU id in [0, ng) at the current path. */
static int as_gpu(struct fast_jctx *c, const struct fast_jv *v, const char *what, uint32_t ng,
		  uint32_t *out)
{
	double d;

	if (fast_jv_type(v) != FAST_JNUMBER)
		return fast_jctx_fail(c, FAST_EINPUT, "%s must be a GPU id (got %s)", what,
				      fast_jtype_name(fast_jv_type(v)));
	d = fast_jv_number(v);
	if (!(d >= 0) || d != floor(d))
		return fast_jctx_fail(c, FAST_EINPUT, "%s must be a GPU id (got %.17g)", what, d);
	if (d >= ng)
		return fast_jctx_fail(c, FAST_EINPUT,
				      "%s %.17g is out of range (gpus = %u, ids 0..%u)", what, d,
				      ng, ng - 1);
	*out = (uint32_t)d;
	return 0;
}

/* seen: ng*ng bits, zeroed by the caller. */
static int load_sparse(struct fast_jctx *c, const struct fast_jv *entries, uint32_t ng,
		       uint64_t *b, unsigned char *seen)
{
	size_t i = 0;
	int rc;

	if ((rc = fast_jv_expect_array(c, entries)) < 0)
		return rc;
	for (const struct fast_jv *e = fast_jv_first(entries); e; e = fast_jv_next(e), i++) {
		size_t old = fast_jctx_push_index(c, i), o2, cell;
		const struct fast_jv *x;
		uint32_t src, dst;
		uint64_t bytes;

		if ((rc = fast_jv_expect_array(c, e)) < 0)
			return rc;
		if (fast_jv_size(e) != 3)
			return fast_jctx_fail(c, FAST_EINPUT,
					      "an entry is [src, dst, bytes]: expected 3 numbers, "
					      "got %zu",
					      fast_jv_size(e));
		x = fast_jv_first(e);
		o2 = fast_jctx_push_index(c, 0);
		if ((rc = as_gpu(c, x, "src", ng, &src)) < 0)
			return rc;
		fast_jctx_pop(c, o2);
		x = fast_jv_next(x);
		o2 = fast_jctx_push_index(c, 1);
		if ((rc = as_gpu(c, x, "dst", ng, &dst)) < 0)
			return rc;
		fast_jctx_pop(c, o2);
		x = fast_jv_next(x);
		o2 = fast_jctx_push_index(c, 2);
		if ((rc = as_bytes(c, x, &bytes)) < 0)
			return rc;
		fast_jctx_pop(c, o2);
		cell = (size_t)src * ng + dst;
		if (seen[cell / 8] & (1u << (cell % 8)))
			return fast_jctx_fail(c, FAST_EINPUT,
					      "duplicate entry for src %u, dst %u (each pair at most "
					      "once)",
					      src, dst);
		seen[cell / 8] |= (unsigned char)(1u << (cell % 8));
		b[cell] = bytes;
		fast_jctx_pop(c, old);
	}
	return 0;
}

/* --- token matrices ------------------------------------------------------ */

/* Running totals of one file's token groups against lim->max_groups. */
struct group_budget {
	uint64_t groups, max;
};

/* Destination ids the groups array will need: the sizes of its members'
 * destination lists, counted before anything is allocated (members of the
 * wrong shape count 0 here and are reported by load_group). */
static size_t count_dests(const struct fast_jv *groups)
{
	size_t n = 0;

	for (const struct fast_jv *g = fast_jv_first(groups); g; g = fast_jv_next(g)) {
		const struct fast_jv *d;
		if (fast_jv_type(g) != FAST_JARRAY || fast_jv_size(g) != 3)
			continue;
		d = fast_jv_next(fast_jv_first(g));
		if (fast_jv_type(d) == FAST_JARRAY && fast_jv_size(d) <= FAST_GROUP_MAX_DESTS)
			n += fast_jv_size(d);
	}
	return n;
}

/* Group [src, [d0, d1, ...], tokens] at the current path into out->groups[g],
 * its destinations appended at out->dsts[out->ndsts ...]. */
static int load_group(struct fast_jctx *c, const struct fast_jv *v, uint32_t ng,
		      struct fast_matrix *out, uint32_t g)
{
	struct fast_group *gr = &out->groups[g];
	const struct fast_jv *x, *dl;
	size_t o2, i = 0;
	uint64_t tokens, bytes;
	int rc;

	if ((rc = fast_jv_expect_array(c, v)) < 0)
		return rc;
	if (fast_jv_size(v) != 3)
		return fast_jctx_fail(c, FAST_EINPUT,
				      "a group is [src, [destination GPUs], tokens]: expected 3 "
				      "members, got %zu",
				      fast_jv_size(v));
	x = fast_jv_first(v);
	o2 = fast_jctx_push_index(c, 0);
	if ((rc = as_gpu(c, x, "src", ng, &gr->src)) < 0)
		return rc;
	fast_jctx_pop(c, o2);
	dl = fast_jv_next(x);
	o2 = fast_jctx_push_index(c, 1);
	if ((rc = fast_jv_expect_array(c, dl)) < 0)
		return rc;
	if (fast_jv_size(dl) == 0 || fast_jv_size(dl) > FAST_GROUP_MAX_DESTS)
		return fast_jctx_fail(c, FAST_EINPUT,
				      "needs 1 to %u destination GPUs (got %zu)",
				      FAST_GROUP_MAX_DESTS, fast_jv_size(dl));
	gr->dst0 = out->ndsts;
	gr->ndst = (uint32_t)fast_jv_size(dl);
	for (const struct fast_jv *d = fast_jv_first(dl); d; d = fast_jv_next(d), i++) {
		size_t o3 = fast_jctx_push_index(c, i);
		uint32_t id;
		if ((rc = as_gpu(c, d, "destination", ng, &id)) < 0)
			return rc;
		if (i > 0 && id <= out->dsts[out->ndsts - 1])
			return fast_jctx_fail(c, FAST_EINPUT,
					      "destination %u after %u: destinations must be "
					      "ascending and distinct",
					      id, out->dsts[out->ndsts - 1]);
		out->dsts[out->ndsts++] = id;
		fast_jctx_pop(c, o3);
	}
	fast_jctx_pop(c, o2);
	o2 = fast_jctx_push_index(c, 2);
	x = fast_jv_next(dl);
	if ((rc = fast_jv_as_u64(c, x, FAST_JSON_MAX_BYTES, &tokens)) < 0)
		return rc;
	if (tokens == 0)
		return fast_jctx_fail(c, FAST_EINPUT, "tokens must be >= 1 (got 0)");
	if (!fast_mul_u64(tokens, out->token_bytes, &bytes) || bytes > FAST_JSON_MAX_BYTES)
		return fast_jctx_fail(c, FAST_EINPUT,
				      "%llu tokens of %llu bytes are above 2^53 bytes",
				      (unsigned long long)tokens, (unsigned long long)out->token_bytes);
	gr->tokens = tokens;
	fast_jctx_pop(c, o2);
	return 0;
}

/* A token matrix at the current path: "kind", "token_bytes" and "groups"
 * of m into out (out->bytes allocated, filled here from the groups). */
static int load_tokens(struct fast_jctx *c, const struct fast_jv *m, uint64_t version,
		       uint32_t ng, struct group_budget *budget, struct fast_matrix *out)
{
	const struct fast_jv *kind = fast_jv_get(m, "kind"), *groups;
	struct fast_err e2;
	size_t old, n, nd;
	uint32_t g = 0;
	int rc;

	old = fast_jctx_push_key(c, "kind");
	if (fast_jv_type(kind) != FAST_JSTRING)
		return fast_jctx_fail(c, FAST_EINPUT,
				      "must be \"dispatch\" or \"combine\" (got %s)",
				      fast_jtype_name(fast_jv_type(kind)));
	if (strcmp(fast_jv_string(kind), "dispatch") == 0)
		out->kind = FAST_TRAFFIC_DISPATCH;
	else if (strcmp(fast_jv_string(kind), "combine") == 0)
		out->kind = FAST_TRAFFIC_COMBINE;
	else
		return fast_jctx_fail(c, FAST_EINPUT,
				      "must be \"dispatch\" or \"combine\" (got \"%.40s\"; a byte "
				      "matrix has no kind)",
				      fast_jv_string(kind));
	if (version < 3)
		return fast_jctx_fail(c, FAST_EINPUT,
				      "token matrices need version 3 (the file says %llu)",
				      (unsigned long long)version);
	fast_jctx_pop(c, old);
	if (fast_jv_get(m, "rows") || fast_jv_get(m, "entries"))
		return fast_jctx_fail(c, FAST_EINPUT,
				      "a token matrix has \"groups\", not \"%s\" (its byte matrix "
				      "is derived from the groups)",
				      fast_jv_get(m, "rows") ? "rows" : "entries");
	if ((rc = fast_jv_get_u64(c, m, "token_bytes", true, FAST_JSON_MAX_BYTES,
				  &out->token_bytes)) < 0)
		return rc;
	if (out->token_bytes == 0) {
		fast_jctx_push_key(c, "token_bytes");
		return fast_jctx_fail(c, FAST_EINPUT, "must be >= 1 (got 0)");
	}
	if (!(groups = fast_jv_get(m, "groups")))
		return fast_jctx_fail(c, FAST_EINPUT, "missing required key \"groups\"");
	old = fast_jctx_push_key(c, "groups");
	if ((rc = fast_jv_expect_array(c, groups)) < 0)
		return rc;
	n = fast_jv_size(groups);
	if (n > budget->max - budget->groups)
		return fast_jctx_fail(c, FAST_ELIMIT,
				      "%zu groups make %llu in the file, over the limit of %llu "
				      "(raise it with --max-groups)",
				      n, (unsigned long long)(budget->groups + n),
				      (unsigned long long)budget->max);
	budget->groups += n;
	nd = count_dests(groups);
	if (nd > UINT32_MAX) /* only with --max-groups far above its default */
		return fast_jctx_fail(c, FAST_ELIMIT,
				      "%zu destination ids in one matrix, over 2^32", nd);
	out->groups = fast_calloc(n ? n : 1, sizeof *out->groups);
	out->dsts = fast_calloc(nd ? nd : 1, sizeof *out->dsts);
	if (!out->groups || !out->dsts)
		return fast_jctx_fail(c, FAST_ENOMEM, "out of memory for %zu groups", n);
	for (const struct fast_jv *v = fast_jv_first(groups); v; v = fast_jv_next(v), g++) {
		size_t o2 = fast_jctx_push_index(c, g);
		if ((rc = load_group(c, v, ng, out, g)) < 0)
			return rc;
		out->ngroups = g + 1;
		fast_jctx_pop(c, o2);
	}
	if ((rc = fast_matrix_bytes_from_groups(out, ng, &e2)) < 0)
		return fast_jctx_fail(c, rc, "%s", e2.msg);
	/* the byte view's messages are what plans cut into pieces whose
	 * offsets a JSON number must carry exactly, as in a byte matrix */
	for (size_t i = 0; i < (size_t)ng * ng; i++)
		if (out->bytes[i] > FAST_JSON_MAX_BYTES)
			return fast_jctx_fail(c, FAST_EINPUT,
					      "GPU %zu sends GPU %zu %llu bytes in all, above 2^53 "
					      "(the byte matrix of the groups)",
					      i / ng, i % ng, (unsigned long long)out->bytes[i]);
	fast_jctx_pop(c, old);
	return 0;
}

static int load_matrix(struct fast_jctx *c, const struct fast_jv *m, uint64_t version,
		       uint32_t ng, struct group_budget *budget, struct fast_matrix *out,
		       unsigned char **seen)
{
	const struct fast_jv *rows, *entries;
	int rc;

	if ((rc = fast_jv_expect_object(c, m, matrix_keys)) < 0)
		return rc;
	if ((rc = fast_jv_get_string(c, m, "label", false, out->label, sizeof out->label)) < 0 ||
	    (rc = fast_traffic_read_pairs(c, m, version, ng, out)) < 0)
		return rc;
	if (fast_jv_get(m, "kind"))
		return load_tokens(c, m, version, ng, budget, out);
	if (fast_jv_get(m, "groups") || fast_jv_get(m, "token_bytes"))
		return fast_jctx_fail(c, FAST_EINPUT,
				      "\"%s\" needs \"kind\": \"dispatch\" or \"combine\"",
				      fast_jv_get(m, "groups") ? "groups" : "token_bytes");
	rows = fast_jv_get(m, "rows");
	entries = fast_jv_get(m, "entries");
	if (rows && entries)
		return fast_jctx_fail(c, FAST_EINPUT,
				      "has both \"rows\" and \"entries\" (give one)");
	if (!rows && !entries)
		return fast_jctx_fail(c, FAST_EINPUT,
				      "needs \"rows\" (dense), \"entries\" (sparse) or \"groups\" "
				      "(tokens)");
	if (rows) {
		size_t old = fast_jctx_push_key(c, "rows");
		if ((rc = load_dense(c, rows, ng, out->bytes)) < 0)
			return rc;
		fast_jctx_pop(c, old);
		return 0;
	}
	if (!*seen) {
		*seen = fast_calloc(((size_t)ng * ng + 7) / 8, 1);
		if (!*seen)
			return fast_jctx_fail(c, FAST_ENOMEM, "out of memory");
	} else {
		memset(*seen, 0, ((size_t)ng * ng + 7) / 8);
	}
	{
		size_t old = fast_jctx_push_key(c, "entries");
		if ((rc = load_sparse(c, entries, ng, out->bytes, *seen)) < 0)
			return rc;
		fast_jctx_pop(c, old);
	}
	return 0;
}

static int load_json(const char *text, size_t len, const char *name,
		     const struct fast_limits *lim, struct fast_traffic *out,
		     struct fast_err *err)
{
	struct fast_json *doc = NULL;
	const struct fast_jv *root, *mats;
	struct fast_traffic t;
	struct fast_jctx c;
	struct group_budget budget = { 0, lim->max_groups };
	unsigned char *seen = NULL;
	uint64_t version = 0, ng = 0;
	const char *gk;
	size_t nm, k = 0;
	int rc;

	memset(&t, 0, sizeof t);
	if ((rc = fast_json_parse(text, len, name, &doc, err)) < 0)
		return rc;
	root = fast_json_root(doc);
	fast_jctx_init(&c, name, err);
	if ((rc = fast_jv_expect_object(&c, root, root_keys)) < 0 ||
	    (rc = fast_jv_get_u64(&c, root, "version", true, UINT32_MAX, &version)) < 0)
		goto out;
	if (version < 1 || version > FAST_TRAFFIC_VERSION) {
		fast_jctx_push_key(&c, "version");
		rc = fast_jctx_fail(&c, FAST_EINPUT,
				    "unsupported version %llu (this build reads versions 1 to %d)",
				    (unsigned long long)version, FAST_TRAFFIC_VERSION);
		goto out;
	}
	/* version 1 called gpus_total "gpus"; either name is read */
	if (!(gk = fast_jv_renamed(&c, root, "gpus_total", "gpus"))) {
		rc = FAST_EINPUT;
		goto out;
	}
	if ((rc = fast_jv_get_u64(&c, root, gk, true, FAST_JSON_MAX_BYTES, &ng)) < 0)
		goto out;
	if (ng == 0 || ng > lim->max_gpus) {
		fast_jctx_push_key(&c, gk);
		if (ng == 0)
			rc = fast_jctx_fail(&c, FAST_EINPUT, "must be >= 1 (got 0)");
		else
			rc = fast_jctx_fail(&c, FAST_ELIMIT,
					    "%llu GPUs is over the limit of %u (raise it with "
					    "--max-gpus)",
					    (unsigned long long)ng, lim->max_gpus);
		goto out;
	}
	mats = fast_jv_get(root, "matrices");
	if (!mats) {
		rc = fast_jctx_fail(&c, FAST_EINPUT, "missing required key \"matrices\"");
		goto out;
	}
	fast_jctx_push_key(&c, "matrices");
	if ((rc = fast_jv_expect_array(&c, mats)) < 0)
		goto out;
	nm = fast_jv_size(mats);
	if (nm == 0 || nm > lim->max_matrices) {
		rc = nm == 0 ? fast_jctx_fail(&c, FAST_EINPUT, "needs at least one matrix")
			     : fast_jctx_fail(&c, FAST_ELIMIT,
					      "%zu matrices is over the limit of %u", nm,
					      lim->max_matrices);
		goto out;
	}
	if ((rc = fast_traffic_alloc(&t, (uint32_t)ng, (uint32_t)nm, lim, err)) < 0) {
		fast_err_prefix(err, "%s", name);
		goto out;
	}
	t.source[0] = '\0';
	for (const struct fast_jv *m = fast_jv_first(mats); m; m = fast_jv_next(m), k++) {
		size_t old = fast_jctx_push_index(&c, k);
		if ((rc = load_matrix(&c, m, version, t.ng, &budget, &t.m[k], &seen)) < 0)
			goto out;
		fast_jctx_pop(&c, old);
	}
	fast_jctx_init(&c, name, err);
	if ((rc = fast_jv_get_string(&c, root, "source", false, t.source, sizeof t.source)) < 0)
		goto out;
	rc = check_all_sums(&t, name, true, err);
out:
	free(seen);
	fast_json_free(doc);
	if (rc < 0) {
		fast_traffic_free(&t);
		return rc;
	}
	*out = t;
	return 0;
}

/* --- nccl-tests matrix ---------------------------------------------------- */

struct cursor {
	const char *p, *end, *line0; /* line0: start of the current line */
	size_t line;
};

static bool is_blank(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\v' || ch == '\f';
}

static size_t col_of(const struct cursor *k, const char *at)
{
	return (size_t)(at - k->line0) + 1;
}

/* Count the whitespace-separated tokens from p to the end of its line. */
static size_t count_tokens(const char *p, const char *end)
{
	size_t n = 0;
	while (p < end && *p != '\n') {
		while (p < end && is_blank(*p))
			p++;
		if (p >= end || *p == '\n')
			break;
		n++;
		while (p < end && !is_blank(*p) && *p != '\n')
			p++;
	}
	return n;
}

/* Skip blank lines; return false at the end of input. */
static bool next_line(struct cursor *k)
{
	for (;;) {
		const char *q = k->p;
		while (q < k->end && is_blank(*q))
			q++;
		if (q >= k->end)
			return false;
		if (*q != '\n')
			return true;
		k->p = q + 1;
		k->line0 = k->p;
		k->line++;
	}
}

/* The message for a '#' at tok: comments are not part of the format. */
static int refuse_comment(const struct cursor *k, const char *tok, const char *name,
			  struct fast_err *err)
{
	return fast_err_set(err, FAST_EINPUT,
			    "%s:%zu:%zu: '#' comments are not allowed in an nccl-tests matrix "
			    "(nccl-tests' alltoallv_perf reads numbers only)",
			    name, k->line, col_of(k, tok));
}

/* Parse one line of exactly n numbers into row[]. */
static int parse_row(struct cursor *k, const char *name, uint32_t n, uint64_t *row,
		     struct fast_err *err)
{
	uint32_t got = 0;

	for (;;) {
		const char *tok;
		uint64_t v = 0;
		bool big = false;

		while (k->p < k->end && is_blank(*k->p))
			k->p++;
		if (k->p >= k->end || *k->p == '\n')
			break;
		tok = k->p;
		if (*tok == '#')
			return refuse_comment(k, tok, name, err);
		while (k->p < k->end && !is_blank(*k->p) && *k->p != '\n')
			k->p++;
		if (got == n)
			return fast_err_set(err, FAST_EINPUT,
					    "%s:%zu:%zu: row %zu has more than %u entries: the "
					    "matrix must be square (N lines of N numbers)",
					    name, k->line, col_of(k, tok), k->line, n);
		for (const char *q = tok; q < k->p; q++) {
			if (!isdigit((unsigned char)*q))
				return fast_err_set(err, FAST_EINPUT,
						    "%s:%zu:%zu: expected a non-negative integer "
						    "byte count, got '%.*s'",
						    name, k->line, col_of(k, tok),
						    (int)(k->p - tok > 20 ? 20 : k->p - tok), tok);
			if (!big && (!fast_mul_u64(v, 10, &v) ||
				     !fast_add_u64(v, (uint64_t)(*q - '0'), &v)))
				big = true;
		}
		if (big || v > FAST_JSON_MAX_BYTES)
			return fast_err_set(err, FAST_EINPUT,
					    "%s:%zu:%zu: %.*s bytes are above 2^53, the largest "
					    "byte count this tool carries",
					    name, k->line, col_of(k, tok),
					    (int)(k->p - tok > 30 ? 30 : k->p - tok), tok);
		row[got++] = v;
	}
	if (got != n)
		return fast_err_set(err, FAST_EINPUT,
				    "%s:%zu:%zu: row %zu has %u entries, expected %u (the first "
				    "row's count): the matrix must be square",
				    name, k->line, col_of(k, k->p), k->line, got, n);
	return 0;
}

static int load_nccl(const char *text, size_t len, const char *name,
		     const struct fast_limits *lim, struct fast_traffic *out,
		     struct fast_err *err)
{
	struct cursor k = { text, text + len, text, 1 };
	struct fast_traffic t;
	size_t n, rows = 0;
	int rc;

	if (!next_line(&k))
		return fast_err_set(err, FAST_EINPUT, "%s: empty matrix", name);
	{
		const char *q = k.p;
		while (q < k.end && is_blank(*q))
			q++;
		if (*q == '#')
			return refuse_comment(&k, q, name, err);
	}
	n = count_tokens(k.p, k.end);
	if (n > lim->max_gpus)
		return fast_err_set(err, FAST_ELIMIT,
				    "%s:%zu:1: the first row has %zu entries: %zu GPUs is over the "
				    "limit of %u (raise it with --max-gpus)",
				    name, k.line, n, n, lim->max_gpus);
	if ((rc = fast_traffic_alloc(&t, (uint32_t)n, 1, lim, err)) < 0) {
		fast_err_prefix(err, "%s", name);
		return rc;
	}
	snprintf(t.source, sizeof t.source, "nccl-tests alltoallv matrix");
	while (next_line(&k)) {
		if (rows == n) {
			rc = fast_err_set(err, FAST_EINPUT,
					  "%s:%zu:1: more than %zu rows: the matrix must be square "
					  "(the first row has %zu entries)",
					  name, k.line, n, n);
			goto fail;
		}
		if ((rc = parse_row(&k, name, (uint32_t)n, t.m[0].bytes + rows * n, err)) < 0)
			goto fail;
		rows++;
	}
	if (rows != n) {
		rc = fast_err_set(err, FAST_EINPUT,
				  "%s: has %zu rows, expected %zu: the matrix must be square "
				  "(the first row has %zu entries)",
				  name, rows, n, n);
		goto fail;
	}
	if ((rc = check_all_sums(&t, name, false, err)) < 0)
		goto fail;
	*out = t;
	return 0;
fail:
	fast_traffic_free(&t);
	return rc;
}

int fast_traffic_parse(const char *text, size_t len, const char *name,
		       const struct fast_limits *lim, struct fast_traffic *out,
		       struct fast_err *err)
{
	struct fast_limits dl;
	size_t i = 0;

	lim = fast_traffic_limits(lim, &dl);
	/* a byte-order mark is an encoding artefact, not content (RFC 8259
	 * lets a JSON reader ignore it) */
	if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0) {
		text += 3;
		len -= 3;
	}
	while (i < len && isspace((unsigned char)text[i]))
		i++;
	if (i == len)
		return fast_err_set(err, FAST_EINPUT,
				    "%s: empty file (expected traffic JSON or an nccl-tests matrix)",
				    name);
	if (isdigit((unsigned char)text[i]) || text[i] == '#')
		return load_nccl(text, len, name, lim, out, err);
	return load_json(text, len, name, lim, out, err);
}

int fast_traffic_load(const char *path, const struct fast_limits *lim,
		      struct fast_traffic *out, struct fast_err *err)
{
	struct fast_limits dl;
	char *text = NULL;
	size_t len = 0;
	int rc;

	lim = fast_traffic_limits(lim, &dl);
	if ((rc = fast_read_file(path, lim->max_file_bytes, &text, &len, err)) < 0)
		return rc;
	rc = fast_traffic_parse(text, len, path, lim, out, err);
	free(text);
	return rc;
}
