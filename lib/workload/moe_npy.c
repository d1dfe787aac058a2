/*
 * moe_npy.c - the NumPy .npy reader of routing and placement files
 * (moe_npy.h), and the header of the arrays we write, from NumPy's own description of the format (numpy/lib/format.py,
 * "NPY format", versions 1.0 to 3.0):
 *
 *   6 bytes  magic "\x93NUMPY"
 *   2 bytes  major, minor version (1.0, 2.0 or 3.0)
 *   2 bytes  header length, little-endian (version 1); 4 bytes (2 and 3)
 *   header   a Python dict literal with exactly the keys 'descr',
 *            'fortran_order' and 'shape', padded with spaces and ended by
 *            a newline (ASCII in 1 and 2, UTF-8 in 3)
 *   data     the elements, C order when fortran_order is False
 *
 * Only what routing needs is accepted: integer dtypes of 1, 2, 4 or 8
 * bytes, little-endian ('<', or '|' for one byte), C order, at most three
 * dimensions; the data must be exactly as long as the shape says.  The
 * file is read whole by the caller and viewed in place.
 */
#include <string.h>

#include "lib/workload/moe_npy.h"

/* A cursor over the header dict. */
struct hdr {
	const char *p, *end, *name;
	struct fast_err *err;
};

static void skip_ws(struct hdr *h)
{
	while (h->p < h->end && (*h->p == ' ' || *h->p == '\t' || *h->p == '\n' || *h->p == '\r'))
		h->p++;
}

static int bad(struct hdr *h, const char *what)
{
	return fast_err_set(h->err, FAST_EINPUT, "%s: header: %s", h->name, what);
}

static bool eat(struct hdr *h, char c)
{
	skip_ws(h);
	if (h->p < h->end && *h->p == c) {
		h->p++;
		return true;
	}
	return false;
}

/* A quoted string (' or ", no escapes: NumPy writes none in these keys)
 * into buf; false when there is none or it does not fit. */
static bool quoted(struct hdr *h, char *buf, size_t size)
{
	char q;
	const char *s;

	skip_ws(h);
	if (h->p >= h->end || (*h->p != '\'' && *h->p != '"'))
		return false;
	q = *h->p++;
	s = h->p;
	while (h->p < h->end && *h->p != q)
		h->p++;
	if (h->p >= h->end || (size_t)(h->p - s) >= size)
		return false;
	memcpy(buf, s, (size_t)(h->p - s));
	buf[h->p - s] = '\0';
	h->p++;
	return true;
}

static bool word(struct hdr *h, const char *w)
{
	size_t n = strlen(w);

	skip_ws(h);
	if ((size_t)(h->end - h->p) >= n && memcmp(h->p, w, n) == 0) {
		h->p += n;
		return true;
	}
	return false;
}

/* 'descr': '<i8' and friends. */
static int parse_descr(struct hdr *h, struct fast_npy *a)
{
	char d[32];

	if (!quoted(h, d, sizeof d))
		return bad(h, "'descr' is not a simple dtype string (structured arrays are not routing)");
	if (d[0] == '>')
		return fast_err_set(h->err, FAST_EINPUT,
				    "%s: header: dtype '%s' is big-endian (write it little-endian: "
				    "a.astype('<%s'))",
				    h->name, d, d + 1);
	if ((d[0] != '<' && d[0] != '|' && d[0] != '=') || (d[1] != 'i' && d[1] != 'u') ||
	    (strcmp(d + 2, "1") && strcmp(d + 2, "2") && strcmp(d + 2, "4") && strcmp(d + 2, "8")))
		return fast_err_set(h->err, FAST_EINPUT,
				    "%s: header: dtype '%.20s' is not an integer type (int8..int64, "
				    "uint8..uint64)",
				    h->name, d);
	a->is_signed = d[1] == 'i';
	a->itemsize = (uint32_t)(d[2] - '0');
	if (a->itemsize > 1 && d[0] == '|')
		return bad(h, "a multi-byte dtype without byte order");
	return 0;
}

/* 'shape': (), (n,), (a, b) or (a, b, c). */
static int parse_shape(struct hdr *h, struct fast_npy *a)
{
	if (!eat(h, '('))
		return bad(h, "'shape' is not a tuple");
	a->ndim = 0;
	a->count = 1;
	for (;;) {
		uint64_t v = 0;
		bool digit = false;

		if (eat(h, ')'))
			return 0;
		skip_ws(h);
		while (h->p < h->end && *h->p >= '0' && *h->p <= '9') {
			if (v > (UINT64_MAX - 9) / 10)
				return bad(h, "a dimension is too large");
			v = v * 10 + (uint64_t)(*h->p++ - '0');
			digit = true;
		}
		if (!digit)
			return bad(h, "'shape' holds something other than integers");
		if (a->ndim == FAST_NPY_MAXDIM)
			return fast_err_set(h->err, FAST_EINPUT,
					    "%s: header: more than %d dimensions", h->name,
					    FAST_NPY_MAXDIM);
		a->shape[a->ndim++] = v;
		if (!fast_mul_u64(a->count, v, &a->count))
			return bad(h, "the shape's element count overflows");
		if (!eat(h, ',')) {
			if (!eat(h, ')'))
				return bad(h, "'shape' is not a tuple");
			return 0;
		}
	}
}

/* The header dict: each of the three keys once, nothing else. */
static int parse_dict(struct hdr *h, struct fast_npy *a)
{
	bool seen[3] = { false, false, false };
	int rc;

	if (!eat(h, '{'))
		return bad(h, "not a dict");
	while (!eat(h, '}')) {
		char key[32];
		int k;

		if (!quoted(h, key, sizeof key))
			return bad(h, "a key is not a string");
		k = strcmp(key, "descr") == 0		? 0
		    : strcmp(key, "fortran_order") == 0 ? 1
		    : strcmp(key, "shape") == 0		? 2
							: -1;
		if (k < 0 || seen[k])
			return fast_err_set(h->err, FAST_EINPUT, "%s: header: %s key '%.20s'", h->name,
					    k < 0 ? "unknown" : "repeated", key);
		seen[k] = true;
		if (!eat(h, ':'))
			return bad(h, "a key without ':'");
		if (k == 0)
			rc = parse_descr(h, a);
		else if (k == 2)
			rc = parse_shape(h, a);
		else if (word(h, "True"))
			rc = fast_err_set(h->err, FAST_EINPUT,
					  "%s: header: Fortran order (write it in C order: "
					  "numpy.ascontiguousarray)",
					  h->name);
		else
			rc = word(h, "False") ? 0 : bad(h, "'fortran_order' is not True or False");
		if (rc < 0)
			return rc;
		if (!eat(h, ',')) {
			if (!eat(h, '}'))
				return bad(h, "entries not separated by ','");
			break;
		}
	}
	if (!seen[0] || !seen[1] || !seen[2])
		return fast_err_set(h->err, FAST_EINPUT, "%s: header: no '%s'", h->name,
				    !seen[0] ? "descr" : !seen[1] ? "fortran_order" : "shape");
	skip_ws(h);
	if (h->p != h->end)
		return bad(h, "text after the dict");
	return 0;
}

int fast_npy_parse(const char *buf, size_t len, const char *name, struct fast_npy *out,
		   struct fast_err *err)
{
	const unsigned char *u = (const unsigned char *)buf;
	struct fast_npy a = { 0 };
	struct hdr h;
	size_t pre, hlen;
	uint64_t need;
	int rc;

	if (len < 10 || memcmp(buf, "\x93NUMPY", 6) != 0)
		return fast_err_set(err, FAST_EINPUT, "%s: not a .npy file (no \\x93NUMPY magic)", name);
	if (u[6] < 1 || u[6] > 3 || u[7] != 0)
		return fast_err_set(err, FAST_EINPUT, "%s: NPY version %u.%u (read: 1.0, 2.0, 3.0)",
				    name, u[6], u[7]);
	a.version = u[6];
	if (a.version == 1) {
		pre = 10;
		hlen = (size_t)u[8] | (size_t)u[9] << 8;
	} else {
		if (len < 12)
			return fast_err_set(err, FAST_EINPUT, "%s: truncated header", name);
		pre = 12;
		hlen = (size_t)u[8] | (size_t)u[9] << 8 | (size_t)u[10] << 16 | (size_t)u[11] << 24;
	}
	if (hlen > len - pre)
		return fast_err_set(err, FAST_EINPUT,
				    "%s: truncated header (%zu bytes announced, %zu present)", name,
				    hlen, len - pre);
	h.p = buf + pre;
	h.end = buf + pre + hlen;
	h.name = name;
	h.err = err;
	if ((rc = parse_dict(&h, &a)) < 0)
		return rc;
	if (!fast_mul_u64(a.count, a.itemsize, &need))
		return fast_err_set(err, FAST_EINPUT, "%s: header: the shape is too large", name);
	if (need > len - pre - hlen)
		return fast_err_set(err, FAST_EINPUT,
				    "%s: truncated: %zu bytes of data, %llu expected for the shape",
				    name, len - pre - hlen, (unsigned long long)need);
	if (need < len - pre - hlen)
		return fast_err_set(err, FAST_EINPUT,
				    "%s: %llu bytes after the data the shape says (a second array, "
				    "or a wrong shape)",
				    name, (unsigned long long)(len - pre - hlen - need));
	a.data = u + pre + hlen;
	*out = a;
	return 0;
}

int64_t fast_npy_at(const struct fast_npy *a, uint64_t i)
{
	const unsigned char *p = a->data + i * a->itemsize;
	uint64_t v = 0;

	for (uint32_t b = 0; b < a->itemsize; b++)
		v |= (uint64_t)p[b] << (8 * b);
	if (a->is_signed && a->itemsize < 8 && (v >> (8 * a->itemsize - 1)) & 1)
		v |= ~UINT64_C(0) << (8 * a->itemsize); /* sign-extend */
	if (!a->is_signed && v > (uint64_t)INT64_MAX)
		return INT64_MAX;
	return (int64_t)v;
}

void fast_npy_pos(const struct fast_npy *a, uint64_t i, char *buf, size_t n)
{
	uint64_t idx[FAST_NPY_MAXDIM];
	size_t used = 0;

	for (uint32_t d = a->ndim; d-- > 0;) {
		idx[d] = a->shape[d] ? i % a->shape[d] : 0;
		i = a->shape[d] ? i / a->shape[d] : 0;
	}
	for (uint32_t d = 0; d < a->ndim && used < n; d++)
		used += (size_t)snprintf(buf + used, n - used, "%s%llu", d ? ", " : "[",
					 (unsigned long long)idx[d]);
	if (used < n)
		snprintf(buf + used, n - used, "]");
}

void fast_npy_write_header(FILE *f, const char *descr, uint32_t ndim, const uint64_t *shape)
{
	char head[256];
	size_t n, pad;

	n = (size_t)snprintf(head, sizeof head, "{'descr': '%s', 'fortran_order': False, 'shape': (",
			     descr);
	for (uint32_t d = 0; d < ndim; d++)
		n += (size_t)snprintf(head + n, sizeof head - n, "%s%llu", d ? ", " : "",
				      (unsigned long long)shape[d]);
	n += (size_t)snprintf(head + n, sizeof head - n, "%s), }", ndim == 1 ? "," : "");
	/* magic (6), version (2), length (2), header and its newline: 64 | total */
	pad = (64 - (10 + n + 1) % 64) % 64;
	fwrite("\x93NUMPY\x01\x00", 1, 8, f);
	fputc((int)((n + pad + 1) & 0xff), f);
	fputc((int)((n + pad + 1) >> 8), f);
	fwrite(head, 1, n, f);
	for (size_t i = 0; i < pad; i++)
		fputc(' ', f);
	fputc('\n', f);
}
