/*
 * json.c - the one user of cJSON: strict parsing with line:column syntax
 * errors, case-sensitive member access, unknown/duplicate key rejection,
 * exact integer conversion, and JSON-path error messages.
 *
 * Workload: input files of up to a few hundred MB (large sparse traffic or
 * plan files); every accessor is linear in the size of the node it walks.
 */
#include "lib/base/json.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

struct fast_json {
	cJSON *root;
};

/* struct fast_jv is never defined: a const struct fast_jv * is a cJSON *. */
static const cJSON *J(const struct fast_jv *v)
{
	return (const cJSON *)(const void *)v;
}

static const struct fast_jv *V(const cJSON *c)
{
	return (const struct fast_jv *)(const void *)c;
}

static void line_col(const char *text, const char *at, size_t *line, size_t *col)
{
	*line = 1;
	*col = 1;
	for (const char *p = text; p < at; p++) {
		if (*p == '\n') {
			(*line)++;
			*col = 1;
		} else {
			(*col)++;
		}
	}
}

/* The first '[' or '{' (outside strings) that opens level
 * CJSON_NESTING_LIMIT + 1, where cJSON stops parsing; NULL if none.
 * Only called after a failed parse, to tell depth from syntax. */
static const char *too_deep(const char *text, size_t len)
{
	size_t depth = 0;
	bool in_string = false;

	for (const char *p = text; p < text + len; p++) {
		if (in_string) {
			if (*p == '\\' && p + 1 < text + len)
				p++;
			else if (*p == '"')
				in_string = false;
		} else if (*p == '"') {
			in_string = true;
		} else if (*p == '[' || *p == '{') {
			if (++depth > CJSON_NESTING_LIMIT)
				return p;
		} else if ((*p == ']' || *p == '}') && depth > 0) {
			depth--;
		}
	}
	return NULL;
}

/* Length of the valid UTF-8 prefix of s[0..n) (RFC 3629: no overlong
 * forms, no surrogates, nothing above U+10FFFF); n when all of it is. */
static size_t utf8_valid_prefix(const unsigned char *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		unsigned char c = s[i];
		size_t k;
		unsigned char lo = 0x80, hi = 0xbf;

		if (c < 0x80) {
			uint64_t w;
			/* ASCII, the common case: eight bytes at a time */
			while (i + 8 <= n) {
				memcpy(&w, s + i, 8);
				if (w & UINT64_C(0x8080808080808080))
					break;
				i += 8;
			}
			if (i < n && s[i] < 0x80)
				i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf)
			k = 1;
		else if (c >= 0xe0 && c <= 0xef)
			k = 2;
		else if (c >= 0xf0 && c <= 0xf4)
			k = 3;
		else
			return i;
		if (c == 0xe0)
			lo = 0xa0; /* overlong */
		else if (c == 0xed)
			hi = 0x9f; /* surrogates */
		else if (c == 0xf0)
			lo = 0x90; /* overlong */
		else if (c == 0xf4)
			hi = 0x8f; /* above U+10FFFF */
		if (k >= n - i)
			return i; /* truncated sequence */
		if (s[i + 1] < lo || s[i + 1] > hi)
			return i;
		for (size_t j = 2; j <= k; j++)
			if (s[i + j] < 0x80 || s[i + j] > 0xbf)
				return i;
		i += k + 1;
	}
	return n;
}

/* The first string (key or value) under v that is not valid UTF-8, as
 * "name: /path: ..." in c.  cJSON copies a string's bytes as they are, so
 * a label or name would reach the writers and make a file that stricter
 * JSON readers refuse.  Called only when the text is not valid UTF-8. */
static int check_utf8_string(struct fast_jctx *c, const char *s, const char *what,
			     const char *where)
{
	size_t n = strlen(s), at = utf8_valid_prefix((const unsigned char *)s, n);

	if (at == n)
		return 0;
	return fast_jctx_fail(c, FAST_EINPUT, "%s is not valid UTF-8 (byte 0x%02x at offset %zu%s)",
			      what, (unsigned char)s[at], at, where);
}

static int check_utf8(struct fast_jctx *c, const cJSON *v)
{
	size_t idx = 0;

	for (const cJSON *m = v->child; m; m = m->next, idx++) {
		size_t old;
		int rc;

		if (m->string) {
			if ((rc = check_utf8_string(c, m->string, "a key", " of the key")) < 0)
				return rc;
			old = fast_jctx_push_key(c, m->string);
		} else {
			old = fast_jctx_push_index(c, idx);
		}
		if ((m->type & 0xff) == cJSON_String && m->valuestring &&
		    (rc = check_utf8_string(c, m->valuestring, "string", "")) < 0)
			return rc;
		if ((rc = check_utf8(c, m)) < 0)
			return rc;
		fast_jctx_pop(c, old);
	}
	return 0;
}

int fast_json_parse(const char *text, size_t len, const char *name,
		    struct fast_json **out, struct fast_err *err)
{
	const char *end = NULL;
	cJSON *root;
	struct fast_json *doc;

	root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
	if (!root) {
		size_t line, col;
		const char *at = end ? end : cJSON_GetErrorPtr();
		if (!at || at < text || at > text + len)
			at = text + len;
		{
			const char *deep = too_deep(text, len);
			if (deep && deep <= at) {
				line_col(text, deep, &line, &col);
				return fast_err_set(err, FAST_EINPUT,
						    "%s:%zu:%zu: JSON nested deeper than %d levels "
						    "(the parser's limit)",
						    name, line, col, CJSON_NESTING_LIMIT);
			}
		}
		line_col(text, at, &line, &col);
		if (at >= text + len)
			return fast_err_set(err, FAST_EINPUT,
					    "%s:%zu:%zu: JSON syntax error: unexpected end of input",
					    name, line, col);
		{
			/* quote the text at the error, up to the end of its line */
			size_t n = 0;
			while (n < 20 && at + n < text + len && at[n] != '\n' && at[n] != '\r')
				n++;
			return fast_err_set(err, FAST_EINPUT,
					    "%s:%zu:%zu: JSON syntax error near '%.*s'", name, line,
					    col, (int)n, at);
		}
	}
	/* trailing garbage after the value */
	if (end) {
		const char *p = end;
		while (p < text + len && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
			p++;
		if (p < text + len && *p) {
			size_t line, col;
			line_col(text, p, &line, &col);
			cJSON_Delete(root);
			return fast_err_set(err, FAST_EINPUT,
					    "%s:%zu:%zu: JSON syntax error: trailing characters after the document",
					    name, line, col);
		}
	}
	if (utf8_valid_prefix((const unsigned char *)text, len) < len) {
		struct fast_jctx c;
		int rc;

		fast_jctx_init(&c, name, err);
		rc = (root->type & 0xff) == cJSON_String
			     ? fast_jctx_fail(&c, FAST_EINPUT, "string is not valid UTF-8")
			     : check_utf8(&c, root);
		if (rc < 0) {
			cJSON_Delete(root);
			return rc;
		}
	}
	doc = malloc(sizeof *doc);
	if (!doc) {
		cJSON_Delete(root);
		return fast_err_set(err, FAST_ENOMEM, "%s: out of memory parsing JSON", name);
	}
	doc->root = root;
	*out = doc;
	return 0;
}

void fast_json_free(struct fast_json *doc)
{
	if (!doc)
		return;
	cJSON_Delete(doc->root);
	free(doc);
}

const struct fast_jv *fast_json_root(const struct fast_json *doc)
{
	return V(doc->root);
}

int fast_read_file(const char *path, uint64_t max_bytes, char **out, size_t *len,
		   struct fast_err *err)
{
	FILE *f;
	struct stat st;
	char *buf;
	size_t cap, n = 0;

	f = fopen(path, "rb");
	if (!f)
		return fast_err_set(err, FAST_EINPUT, "%s: cannot open: %s", path, strerror(errno));
	if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
		fclose(f);
		return fast_err_set(err, FAST_EINPUT, "%s: is a directory", path);
	}
	if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size > max_bytes) {
		fclose(f);
		return fast_err_set(err, FAST_ELIMIT,
				    "%s: file is %llu bytes, over the limit of %llu bytes",
				    path, (unsigned long long)st.st_size,
				    (unsigned long long)max_bytes);
	}
	cap = S_ISREG(st.st_mode) && st.st_size > 0 ? (size_t)st.st_size + 1 : 65536;
	buf = malloc(cap);
	if (!buf) {
		fclose(f);
		return fast_err_set(err, FAST_ENOMEM, "%s: out of memory reading file", path);
	}
	for (;;) {
		size_t got;
		if (n + 1 >= cap) {
			char *nb;
			if ((uint64_t)cap > max_bytes) {
				free(buf);
				fclose(f);
				return fast_err_set(err, FAST_ELIMIT,
						    "%s: input is over the limit of %llu bytes", path,
						    (unsigned long long)max_bytes);
			}
			nb = realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				fclose(f);
				return fast_err_set(err, FAST_ENOMEM, "%s: out of memory reading file",
						    path);
			}
			buf = nb;
			cap *= 2;
		}
		got = fread(buf + n, 1, cap - 1 - n, f);
		n += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		free(buf);
		fclose(f);
		return fast_err_set(err, FAST_EINPUT, "%s: read error: %s", path, strerror(errno));
	}
	fclose(f);
	if ((uint64_t)n > max_bytes) {
		free(buf);
		return fast_err_set(err, FAST_ELIMIT, "%s: input is over the limit of %llu bytes",
				    path, (unsigned long long)max_bytes);
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

enum fast_jtype fast_jv_type(const struct fast_jv *v)
{
	const cJSON *c = J(v);

	if (!c)
		return FAST_JINVALID;
	switch (c->type & 0xff) {
	case cJSON_NULL:
		return FAST_JNULL;
	case cJSON_False:
	case cJSON_True:
		return FAST_JBOOL;
	case cJSON_Number:
		return FAST_JNUMBER;
	case cJSON_String:
		return FAST_JSTRING;
	case cJSON_Array:
		return FAST_JARRAY;
	case cJSON_Object:
		return FAST_JOBJECT;
	default:
		return FAST_JINVALID;
	}
}

const char *fast_jtype_name(enum fast_jtype t)
{
	static const char *const names[] = { "null",  "boolean", "number", "string",
					     "array", "object",  "invalid" };
	return (unsigned)t <= FAST_JINVALID ? names[t] : "invalid";
}

const struct fast_jv *fast_jv_get(const struct fast_jv *obj, const char *key)
{
	if (fast_jv_type(obj) != FAST_JOBJECT)
		return NULL;
	return V(cJSON_GetObjectItemCaseSensitive(J(obj), key));
}

size_t fast_jv_size(const struct fast_jv *v)
{
	size_t n = 0;
	if (fast_jv_type(v) != FAST_JARRAY && fast_jv_type(v) != FAST_JOBJECT)
		return 0;
	for (const cJSON *c = J(v)->child; c; c = c->next)
		n++;
	return n;
}

const struct fast_jv *fast_jv_first(const struct fast_jv *v)
{
	if (fast_jv_type(v) != FAST_JARRAY && fast_jv_type(v) != FAST_JOBJECT)
		return NULL;
	return V(J(v)->child);
}

const struct fast_jv *fast_jv_next(const struct fast_jv *v)
{
	return v ? V(J(v)->next) : NULL;
}

const char *fast_jv_key(const struct fast_jv *v)
{
	return v ? J(v)->string : NULL;
}

double fast_jv_number(const struct fast_jv *v)
{
	return v ? J(v)->valuedouble : 0.0;
}

const char *fast_jv_string(const struct fast_jv *v)
{
	return fast_jv_type(v) == FAST_JSTRING ? J(v)->valuestring : NULL;
}

bool fast_jv_bool(const struct fast_jv *v)
{
	return v && (J(v)->type & 0xff) == cJSON_True;
}

void fast_jctx_init(struct fast_jctx *c, const char *file, struct fast_err *err)
{
	c->file = file;
	c->path[0] = '\0';
	c->len = 0;
	c->err = err;
}

/* Append "/" and the n bytes of comp to the path, cut where the path is
 * full.  Every array element and object member read pushes one: written
 * by hand, not with snprintf (which made path keeping the larger part of
 * reading a plan file). */
static size_t push(struct fast_jctx *c, const char *comp, size_t n)
{
	size_t old = c->len, room = sizeof c->path - 1 - c->len;

	if (room > 0) {
		c->path[c->len++] = '/';
		room--;
		if (n > room)
			n = room;
		memcpy(c->path + c->len, comp, n);
		c->len += n;
	}
	c->path[c->len] = '\0';
	return old;
}

size_t fast_jctx_push_key(struct fast_jctx *c, const char *key)
{
	/* JSON Pointer escaping: ~ -> ~0, / -> ~1; cap the shown length */
	char buf[80];
	size_t j = 0;
	for (const char *p = key; *p && j + 3 < sizeof buf; p++) {
		if (*p == '~') {
			buf[j++] = '~';
			buf[j++] = '0';
		} else if (*p == '/') {
			buf[j++] = '~';
			buf[j++] = '1';
		} else {
			buf[j++] = *p;
		}
	}
	return push(c, buf, j);
}

size_t fast_jctx_push_index(struct fast_jctx *c, size_t index)
{
	char buf[24];
	size_t at = sizeof buf;

	do {
		buf[--at] = (char)('0' + index % 10);
		index /= 10;
	} while (index);
	return push(c, buf + at, sizeof buf - at);
}

void fast_jctx_pop(struct fast_jctx *c, size_t old_len)
{
	c->len = old_len;
	c->path[old_len] = '\0';
}

int fast_jctx_fail(struct fast_jctx *c, int code, const char *fmt, ...)
{
	char msg[FAST_ERRMSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return fast_err_set(c->err, code, "%s: %s: %s", c->file, c->len ? c->path : "/", msg);
}

static int expect_type(struct fast_jctx *c, const struct fast_jv *v, enum fast_jtype want)
{
	enum fast_jtype got = fast_jv_type(v);
	if (got != want)
		return fast_jctx_fail(c, FAST_EINPUT, "expected %s, got %s", fast_jtype_name(want),
				      fast_jtype_name(got));
	return 0;
}

int fast_jv_expect_object(struct fast_jctx *c, const struct fast_jv *v,
			  const char *const *allowed)
{
	size_t nallowed = 0;
	uint64_t seen_lo = 0;
	unsigned char *seen;
	int rc = 0;

	if (expect_type(c, v, FAST_JOBJECT) < 0)
		return FAST_EINPUT;
	while (allowed && allowed[nallowed])
		nallowed++;
	seen = nallowed > 64 ? calloc(nallowed, 1) : NULL;
	if (nallowed > 64 && !seen)
		return fast_jctx_fail(c, FAST_ENOMEM, "out of memory");
	for (const cJSON *m = J(v)->child; m && rc == 0; m = m->next) {
		size_t k;
		for (k = 0; k < nallowed; k++)
			if (strcmp(m->string, allowed[k]) == 0)
				break;
		if (k == nallowed) {
			/* name a case-insensitive near miss: cJSON users often rely on it */
			const char *hint = NULL;
			for (size_t h = 0; h < nallowed; h++)
				if (strcasecmp(m->string, allowed[h]) == 0)
					hint = allowed[h];
			if (hint)
				rc = fast_jctx_fail(c, FAST_EINPUT,
						    "unknown key \"%.60s\" (keys are case-sensitive: did you mean \"%s\"?)",
						    m->string, hint);
			else
				rc = fast_jctx_fail(c, FAST_EINPUT, "unknown key \"%.60s\"",
						    m->string);
			break;
		}
		if (seen ? seen[k] : (seen_lo >> k) & 1) {
			rc = fast_jctx_fail(c, FAST_EINPUT, "duplicate key \"%.60s\"", m->string);
			break;
		}
		if (seen)
			seen[k] = 1;
		else
			seen_lo |= UINT64_C(1) << k;
	}
	free(seen);
	return rc;
}

int fast_jv_expect_array(struct fast_jctx *c, const struct fast_jv *v)
{
	return expect_type(c, v, FAST_JARRAY);
}

int fast_jv_as_u64(struct fast_jctx *c, const struct fast_jv *v, uint64_t max, uint64_t *out)
{
	double d;

	if (fast_jv_type(v) != FAST_JNUMBER)
		return fast_jctx_fail(c, FAST_EINPUT, "expected a non-negative integer, got %s",
				      fast_jtype_name(fast_jv_type(v)));
	d = J(v)->valuedouble;
	if (!(d >= 0) || d != floor(d))
		return fast_jctx_fail(c, FAST_EINPUT, "must be a non-negative integer (got %.17g)",
				      d);
	if (max > FAST_JSON_MAX_BYTES)
		max = FAST_JSON_MAX_BYTES;
	if (d > (double)max) {
		if (max == FAST_JSON_MAX_BYTES)
			return fast_jctx_fail(c, FAST_EINPUT,
					      "%.17g is above 2^53, the largest integer a JSON number carries exactly",
					      d);
		return fast_jctx_fail(c, FAST_EINPUT, "must be at most %llu (got %.17g)",
				      (unsigned long long)max, d);
	}
	*out = (uint64_t)d;
	return 0;
}

int fast_jv_as_double(struct fast_jctx *c, const struct fast_jv *v, double min, double max,
		      bool min_exclusive, double *out)
{
	double d;

	if (fast_jv_type(v) != FAST_JNUMBER)
		return fast_jctx_fail(c, FAST_EINPUT, "expected a number, got %s",
				      fast_jtype_name(fast_jv_type(v)));
	d = J(v)->valuedouble;
	if (!isfinite(d))
		return fast_jctx_fail(c, FAST_EINPUT, "must be a finite number");
	if (min_exclusive ? !(d > min) : !(d >= min))
		return fast_jctx_fail(c, FAST_EINPUT, "must be %s %g (got %g)",
				      min_exclusive ? ">" : ">=", min, d);
	if (d > max)
		return fast_jctx_fail(c, FAST_EINPUT, "must be <= %g (got %g)", max, d);
	*out = d;
	return 0;
}

/* Shared prologue of the member getters: find the key, push it. */
static const struct fast_jv *member(struct fast_jctx *c, const struct fast_jv *obj,
				    const char *key, bool required, int *rc, size_t *old)
{
	const struct fast_jv *v = fast_jv_get(obj, key);

	*rc = 0;
	if (!v) {
		if (required)
			*rc = fast_jctx_fail(c, FAST_EINPUT, "missing required key \"%s\"", key);
		return NULL;
	}
	*old = fast_jctx_push_key(c, key);
	return v;
}

int fast_jv_get_u64(struct fast_jctx *c, const struct fast_jv *obj, const char *key,
		    bool required, uint64_t max, uint64_t *out)
{
	size_t old = 0;
	int rc;
	const struct fast_jv *v = member(c, obj, key, required, &rc, &old);

	if (!v)
		return rc;
	rc = fast_jv_as_u64(c, v, max, out);
	fast_jctx_pop(c, old);
	return rc;
}

const char *fast_jv_renamed(struct fast_jctx *c, const struct fast_jv *obj, const char *key,
			    const char *old_key)
{
	if (!fast_jv_get(obj, old_key))
		return key;
	if (!fast_jv_get(obj, key))
		return old_key;
	fast_jctx_push_key(c, old_key);
	fast_jctx_fail(c, FAST_EINPUT, "both \"%s\" and its new name \"%s\": give one", old_key, key);
	return NULL;
}

int fast_jv_get_u32(struct fast_jctx *c, const struct fast_jv *obj, const char *key,
		    bool required, uint32_t min, uint32_t max, uint32_t *out)
{
	size_t old = 0;
	int rc;
	uint64_t x = 0;
	const struct fast_jv *v = member(c, obj, key, required, &rc, &old);

	if (!v)
		return rc;
	rc = fast_jv_as_u64(c, v, UINT32_MAX, &x);
	if (rc == 0 && (x < min || x > max))
		rc = fast_jctx_fail(c, FAST_EINPUT, "must be in [%u, %u] (got %llu)", min, max,
				    (unsigned long long)x);
	if (rc == 0)
		*out = (uint32_t)x;
	fast_jctx_pop(c, old);
	return rc;
}

int fast_jv_get_double(struct fast_jctx *c, const struct fast_jv *obj, const char *key,
		       bool required, double min, double max, bool min_exclusive, double *out)
{
	size_t old = 0;
	int rc;
	const struct fast_jv *v = member(c, obj, key, required, &rc, &old);

	if (!v)
		return rc;
	rc = fast_jv_as_double(c, v, min, max, min_exclusive, out);
	fast_jctx_pop(c, old);
	return rc;
}

int fast_jv_get_bool(struct fast_jctx *c, const struct fast_jv *obj, const char *key,
		     bool required, bool *out)
{
	size_t old = 0;
	int rc;
	const struct fast_jv *v = member(c, obj, key, required, &rc, &old);

	if (!v)
		return rc;
	rc = expect_type(c, v, FAST_JBOOL);
	if (rc == 0)
		*out = fast_jv_bool(v);
	fast_jctx_pop(c, old);
	return rc;
}

int fast_jv_get_string(struct fast_jctx *c, const struct fast_jv *obj, const char *key,
		       bool required, char *buf, size_t size)
{
	size_t old = 0;
	int rc;
	const struct fast_jv *v = member(c, obj, key, required, &rc, &old);

	if (!v)
		return rc;
	rc = expect_type(c, v, FAST_JSTRING);
	if (rc == 0) {
		const char *s = fast_jv_string(v);
		size_t n = strlen(s);
		if (n >= size)
			rc = fast_jctx_fail(c, FAST_EINPUT, "string is too long (%zu characters, at most %zu)",
					    n, size - 1);
		else
			memcpy(buf, s, n + 1);
	}
	fast_jctx_pop(c, old);
	return rc;
}

void fast_json_put_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		default:
			if (*p < 0x20)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

void fast_json_put_double(FILE *f, double v)
{
	if (!isfinite(v)) {
		fputs("null", f);
		return;
	}
	if (v == floor(v) && fabs(v) < 9007199254740992.0) {
		fprintf(f, "%.0f", v);
		return;
	}
	{ /* the shortest decimal that reads back exactly */
		char buf[40];
		fputs(fast_num_format(v, buf, sizeof buf), f);
	}
}
