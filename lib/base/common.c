/*
 * common.c - errors, byte sizes, the deterministic generator, hashing,
 * checked allocation and largest-remainder apportionment.  Everything here
 * is pure and reentrant.
 */
#define _POSIX_C_SOURCE 200809L
#include "fast/common.h"

#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int fast_err_vset(struct fast_err *err, int code, const char *fmt, va_list ap)
{
	if (err) {
		err->code = code;
		vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	}
	return code;
}

int fast_err_set(struct fast_err *err, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fast_err_vset(err, code, fmt, ap);
	va_end(ap);
	return code;
}

void fast_err_prefix(struct fast_err *err, const char *fmt, ...)
{
	char pre[FAST_ERRMSG_MAX], old[FAST_ERRMSG_MAX];
	va_list ap;

	if (!err)
		return;
	va_start(ap, fmt);
	vsnprintf(pre, sizeof pre, fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof old);
	old[sizeof old - 1] = '\0';
	{
		/* "pre: old", truncated to the buffer (no snprintf: the compiler
		 * rightly warns that two full buffers cannot fit in one) */
		size_t np = strlen(pre), no = strlen(old), cap = sizeof err->msg - 1;
		if (np > cap)
			np = cap;
		memcpy(err->msg, pre, np);
		if (np + 2 <= cap) {
			memcpy(err->msg + np, ": ", 2);
			np += 2;
		}
		if (no > cap - np)
			no = cap - np;
		memcpy(err->msg + np, old, no);
		err->msg[np + no] = '\0';
	}
}

int fast_err_exit_status(int code)
{
	switch (code) {
	case FAST_OK:
		return 0;
#define FAST_X_STATUS(name, val, status, text) \
	case FAST_##name:                      \
		return status;
		FAST_ERROR_LIST(FAST_X_STATUS)
#undef FAST_X_STATUS
	}
	return 4;
}

const char *fast_err_name(int code)
{
	switch (code) {
	case FAST_OK:
		return "ok";
#define FAST_X_NAME(name, val, status, text) \
	case FAST_##name:                    \
		return text;
		FAST_ERROR_LIST(FAST_X_NAME)
#undef FAST_X_NAME
	}
	return "error";
}

struct suffix {
	const char *name;
	uint64_t mult;
};

static const struct suffix suffixes[] = {
	{ "", 1 },
	{ "B", 1 },
	{ "K", UINT64_C(1) << 10 },
	{ "M", UINT64_C(1) << 20 },
	{ "G", UINT64_C(1) << 30 },
	{ "T", UINT64_C(1) << 40 },
	{ "KiB", UINT64_C(1) << 10 },
	{ "MiB", UINT64_C(1) << 20 },
	{ "GiB", UINT64_C(1) << 30 },
	{ "TiB", UINT64_C(1) << 40 },
	{ "KB", UINT64_C(1000) },
	{ "MB", UINT64_C(1000000) },
	{ "GB", UINT64_C(1000000000) },
	{ "TB", UINT64_C(1000000000000) },
};

int fast_size_parse(const char *text, uint64_t *out, struct fast_err *err)
{
	const char *p = text;
	uint64_t whole = 0, frac_num = 0, frac_den = 1;
	int digits = 0;

	if (!text || !*text)
		return fast_err_set(err, FAST_EUSAGE, "empty size");
	while (isdigit((unsigned char)*p)) {
		if (!fast_mul_u64(whole, 10, &whole) ||
		    !fast_add_u64(whole, (uint64_t)(*p - '0'), &whole))
			return fast_err_set(err, FAST_EUSAGE,
					    "size '%.40s' overflows 64 bits", text);
		p++;
		digits++;
	}
	if (*p == '.') {
		p++;
		while (isdigit((unsigned char)*p)) {
			if (frac_den >= UINT64_C(1000000000))
				return fast_err_set(err, FAST_EUSAGE,
						    "size '%.40s' has too many decimals", text);
			frac_num = frac_num * 10 + (uint64_t)(*p - '0');
			frac_den *= 10;
			p++;
			digits++;
		}
	}
	if (!digits)
		return fast_err_set(err, FAST_EUSAGE,
				    "size '%.40s' is not a number (expected e.g. 64M, 1GiB, 500MB)", text);
	for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
		uint64_t total, fr;
		if (strcmp(p, suffixes[i].name) != 0)
			continue;
		if (!fast_mul_u64(whole, suffixes[i].mult, &total))
			return fast_err_set(err, FAST_EUSAGE,
					    "size '%.40s' overflows 64 bits", text);
		/* frac_num < frac_den <= 1e9 and mult <= 2^40: no overflow */
		if (frac_num) {
			if (suffixes[i].mult >= (UINT64_C(1) << 44) ||
			    (frac_num * suffixes[i].mult) % frac_den)
				return fast_err_set(err, FAST_EUSAGE,
						    "size '%.40s' is not a whole number of bytes", text);
			fr = frac_num * suffixes[i].mult / frac_den;
			if (!fast_add_u64(total, fr, &total))
				return fast_err_set(err, FAST_EUSAGE,
						    "size '%.40s' overflows 64 bits", text);
		}
		*out = total;
		return 0;
	}
	return fast_err_set(err, FAST_EUSAGE,
			    "size '%.40s' has an unknown suffix (use K, M, G, KiB, MiB, GiB, KB, MB, GB)",
			    text);
}

const char *fast_size_format(uint64_t bytes, char *buf, size_t len)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	double v = (double)bytes;
	int u = 0;

	while (v >= 1024.0 && u < 6) {
		v /= 1024.0;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%llu B", (unsigned long long)bytes);
	else if (v == floor(v))
		snprintf(buf, len, "%.0f %s", v, units[u]);
	else
		snprintf(buf, len, "%.2f %s", v, units[u]);
	return buf;
}

const char *fast_num_format(double v, char *buf, size_t len)
{
	for (int prec = 6; prec <= 17; prec++) {
		snprintf(buf, len, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	return buf;
}

void fast_line_sums(const uint64_t *M, uint32_t n, uint64_t *row, uint64_t *col)
{
	memset(col, 0, (size_t)n * sizeof *col);
	for (uint32_t i = 0; i < n; i++) {
		const uint64_t *r = M + (size_t)i * n;
		uint64_t sum = 0;
		for (uint32_t j = 0; j < n; j++) {
			sum += r[j];
			col[j] += r[j];
		}
		row[i] = sum;
	}
}

uint64_t fast_a2a_size(const uint64_t *D, uint32_t n)
{
	uint64_t size = 0, *col = fast_calloc(n ? n : 1, sizeof *col);

	for (uint32_t i = 0; i < n; i++) {
		uint64_t sent = 0, recv = 0;
		for (uint32_t j = 0; j < n; j++) {
			sent += D[(size_t)i * n + j];
			if (col)
				col[j] += D[(size_t)i * n + j];
			else /* no scratch: the same sums, column by column */
				recv += D[(size_t)j * n + i];
		}
		size = sent > size ? sent : size;
		size = recv > size ? recv : size;
	}
	for (uint32_t j = 0; col && j < n; j++)
		size = col[j] > size ? col[j] : size;
	free(col);
	return size;
}

void fast_bw(uint64_t size, double time_s, uint32_t n, struct fast_bw *out)
{
	out->size = size;
	out->algbw_GBps = time_s > 0 ? (double)size / time_s / 1e9 : 0.0;
	out->busbw_GBps = n > 0 ? out->algbw_GBps * (double)(n - 1) / (double)n : 0.0;
}

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

void fast_rng_seed(struct fast_rng *rng, uint64_t seed)
{
	uint64_t x = seed;
	for (int i = 0; i < 4; i++)
		rng->s[i] = splitmix64(&x);
}

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t fast_rng_next(struct fast_rng *rng)
{
	uint64_t *s = rng->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

uint64_t fast_rng_below(struct fast_rng *rng, uint64_t n)
{
	/* rejection sampling keeps the distribution exactly uniform */
	uint64_t limit = UINT64_MAX - UINT64_MAX % n;
	uint64_t x;
	do
		x = fast_rng_next(rng);
	while (x >= limit);
	return x % n;
}

double fast_rng_double(struct fast_rng *rng)
{
	return (double)(fast_rng_next(rng) >> 11) * 0x1.0p-53;
}

double fast_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

uint64_t fast_hash_bytes(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;
	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= UINT64_C(0x100000001b3);
	}
	return h;
}

uint64_t fast_gcd_u64(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t r = a % b;
		a = b;
		b = r;
	}
	return a;
}

uint64_t fast_hash_u64(uint64_t h, uint64_t v)
{
	unsigned char b[8];

	for (int i = 0; i < 8; i++)
		b[i] = (unsigned char)(v >> (8 * i));
	return fast_hash_bytes(h, b, sizeof b);
}

uint64_t fast_hash_double(uint64_t h, double v)
{
	uint64_t bits;

	if (v == 0)
		v = 0; /* -0 and 0 are the same value */
	memcpy(&bits, &v, sizeof bits);
	return fast_hash_u64(h, bits);
}

uint64_t fast_hash_str(uint64_t h, const char *s)
{
	size_t n = strlen(s);

	return fast_hash_bytes(fast_hash_u64(h, n), s, n);
}

void *fast_calloc(size_t n, size_t size)
{
	if (n == 0 || size == 0)
		return calloc(1, 1);
	if (n > SIZE_MAX / size)
		return NULL;
	return calloc(n, size);
}

void *fast_reallocarray(void *p, size_t n, size_t size)
{
	size_t total;
	if (__builtin_mul_overflow(n, size, &total))
		return NULL;
	return realloc(p, total ? total : 1);
}

/* Optimal-string-alignment distance, capped: rows of at most 64 + 1
 * entries (longer words are not typos of an option name). */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), r[3][65];

	if (la > 64 || lb > 64)
		return SIZE_MAX;
	for (size_t j = 0; j <= lb; j++)
		r[0][j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t *cur = r[i % 3], *prev = r[(i + 2) % 3], *prev2 = r[(i + 1) % 3];
		cur[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t cost = a[i - 1] != b[j - 1];
			size_t v = prev[j - 1] + cost;
			if (prev[j] + 1 < v)
				v = prev[j] + 1;
			if (cur[j - 1] + 1 < v)
				v = cur[j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    prev2[j - 2] + 1 < v)
				v = prev2[j - 2] + 1;
			cur[j] = v;
		}
	}
	return r[la % 3][lb];
}

const char *fast_suggest(const char *word, const char *const *candidates, size_t n)
{
	const char *best = NULL, *bare = word;
	size_t best_d = 3;

	if (!word)
		return NULL;
	while (*bare == '-')
		bare++;
	for (size_t i = 0; i < n; i++) {
		size_t d;
		if (!candidates[i])
			continue;
		d = edit_distance(word, candidates[i]);
		if (d < best_d) {
			best_d = d;
			best = candidates[i];
		}
	}
	return best && (best_d == 0 || best_d < strlen(bare)) ? best : NULL;
}

int fast_grow(void **arr, size_t *cap, size_t need, size_t size, size_t min_cap)
{
	size_t nc;
	void *p;

	if (need <= *cap)
		return 0;
	nc = *cap ? *cap : (min_cap ? min_cap : 1);
	while (nc < need) {
		if (nc > SIZE_MAX / 2)
			return FAST_ENOMEM;
		nc *= 2;
	}
	p = fast_reallocarray(*arr, nc, size);
	if (!p)
		return FAST_ENOMEM;
	*arr = p;
	*cap = nc;
	return 0;
}

void *fast_scratch_room(struct fast_scratch *s, unsigned slot, size_t n, size_t size)
{
	size_t need;

	assert(slot < FAST_SCRATCH_SLOTS);
	if (size && n > SIZE_MAX / size)
		return NULL;
	need = n * size;
	if ((need > s->cap[slot] || !s->buf[slot]) &&
	    fast_grow(&s->buf[slot], &s->cap[slot], need > 64 ? need : 64, 1, 64) < 0)
		return NULL;
	return s->buf[slot];
}

void fast_scratch_free(struct fast_scratch *s)
{
	if (!s)
		return;
	for (unsigned k = 0; k < FAST_SCRATCH_SLOTS; k++)
		free(s->buf[k]);
	memset(s, 0, sizeof *s);
}

/* --- apportionment (gen.c's scaling, moe.c's shares) ---------------------- */

__extension__ typedef unsigned __int128 u128;

struct rem {
	u128 r;
	uint32_t key, i;
};

static int rem_cmp(const void *a, const void *b)
{
	const struct rem *x = a, *y = b;

	if (x->r != y->r)
		return x->r > y->r ? -1 : 1;
	return x->key < y->key ? -1 : x->key > y->key;
}

int fast_apportion(uint64_t total, const uint64_t *w, uint32_t n, uint32_t rotate,
		   uint64_t *out, struct fast_err *err)
{
	u128 W = 0;
	uint64_t given = 0, left, *tmp;
	struct rem *rs;

	for (uint32_t i = 0; i < n; i++)
		W += w[i];
	if (W == 0) {
		if (total != 0)
			return fast_err_set(err, FAST_EINPUT,
					    "cannot split %llu units: every weight is zero",
					    (unsigned long long)total);
		memset(out, 0, (size_t)n * sizeof *out);
		return 0;
	}
	tmp = fast_calloc(n, sizeof *tmp);
	rs = fast_calloc(n, sizeof *rs);
	if (!tmp || !rs) {
		free(tmp);
		free(rs);
		return fast_err_set(err, FAST_ENOMEM, "out of memory apportioning %u entries", n);
	}
	for (uint32_t i = 0; i < n; i++) {
		u128 q = (u128)total * w[i];
		tmp[i] = (uint64_t)(q / W);
		given += tmp[i];
		rs[i].r = q % W;
		rs[i].key = (uint32_t)(((uint64_t)i + n - rotate % n) % n);
		rs[i].i = i;
	}
	left = total - given; /* < n: each floor loses less than one unit */
	if (left) {
		qsort(rs, n, sizeof *rs, rem_cmp);
		for (uint64_t j = 0; j < left; j++)
			tmp[rs[j].i]++;
	}
	memcpy(out, tmp, (size_t)n * sizeof *out);
	free(tmp);
	free(rs);
	return 0;
}
