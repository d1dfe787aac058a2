/*
 * common.h - error reporting, checked arithmetic, byte sizes and the
 * deterministic random generator shared by every module of lib/.
 *
 * lib/ never prints or exits: a fallible function returns 0 or a negative
 * FAST_E* code and, on failure only, writes a message into the caller's
 * struct fast_err.  The message is printable as is ("file: /json/path: what
 * is wrong").  The command layer maps codes to exit statuses with
 * fast_err_exit_status().
 */
#ifndef FAST_COMMON_H
#define FAST_COMMON_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FAST_VERSION "0.1.0"

/* One list generates the codes, their names and their exit statuses
 * (docs/DESIGN.md: 1 check failed, 2 usage, 3 bad input, 4 runtime). */
#define FAST_ERROR_LIST(X)                                  \
	X(EINPUT, -1, 3, "bad input")                       \
	X(ECHECK, -2, 1, "check failed")                    \
	X(EUSAGE, -3, 2, "usage")                           \
	X(ENOMEM, -4, 4, "out of memory")                   \
	X(EIO, -5, 4, "i/o error")                          \
	X(ELIMIT, -6, 3, "limit exceeded")                  \
	X(ESOLVER, -7, 4, "solver failure")                 \
	X(ERUNTIME, -8, 4, "runtime failure")

enum fast_errcode {
	FAST_OK = 0,
#define FAST_X_ENUM(name, val, status, text) FAST_##name = val,
	FAST_ERROR_LIST(FAST_X_ENUM)
#undef FAST_X_ENUM
};

#define FAST_ERRMSG_MAX 512

/* Filled only on failure; code is one of the negative FAST_E* values. */
struct fast_err {
	int code;
	char msg[FAST_ERRMSG_MAX];
};

/* Record an error (err may be NULL) and return code, so that callers can
 * write `return fast_err_set(err, FAST_EINPUT, "...")`. */
int fast_err_set(struct fast_err *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int fast_err_vset(struct fast_err *err, int code, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));
/* Prefix an existing message ("prefix: old message"). */
void fast_err_prefix(struct fast_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Exit status for a code: 0 for FAST_OK, 1..4 otherwise. */
int fast_err_exit_status(int code);
/* Short category name of a code ("bad input"). */
const char *fast_err_name(int code);

/* Checked 64-bit arithmetic: return false on overflow (the result is then
 * left untouched). */
static inline bool fast_add_u64(uint64_t a, uint64_t b, uint64_t *out)
{
	uint64_t r;
	if (__builtin_add_overflow(a, b, &r))
		return false;
	*out = r;
	return true;
}

static inline bool fast_mul_u64(uint64_t a, uint64_t b, uint64_t *out)
{
	uint64_t r;
	if (__builtin_mul_overflow(a, b, &r))
		return false;
	*out = r;
	return true;
}

/* Dimension limits enforced before allocating (raise with --max-gpus): one
 * home here, next to the errors, since every reader in lib/ (topology,
 * traffic, plan, trace import, generators) takes them; limits.c fills the
 * defaults. */
struct fast_limits {
	uint32_t max_gpus;     /* N * G */
	uint32_t max_matrices; /* per traffic or plan file */
	uint64_t max_file_bytes;
	uint64_t max_traffic_bytes; /* dense matrices of one traffic: count x N^2 x 8 */
	uint64_t max_groups;   /* token groups of one traffic, all matrices */
};
#define FAST_DEFAULT_MAX_GPUS 16384u
#define FAST_DEFAULT_MAX_MATRICES 65536u
#define FAST_DEFAULT_MAX_FILE_BYTES (UINT64_C(4) << 30)
#define FAST_DEFAULT_MAX_TRAFFIC_BYTES (UINT64_C(4) << 30)
/* 2^24 groups: 384 MiB of groups plus at most 4 GiB of destination ids */
#define FAST_DEFAULT_MAX_GROUPS (UINT64_C(1) << 24)
void fast_limits_default(struct fast_limits *lim);

/* Largest byte count a JSON number carries exactly (2^53). */
#define FAST_JSON_MAX_BYTES (UINT64_C(1) << 53)

/* Parse a byte size: a decimal integer with an optional suffix.  K, M, G,
 * T, KiB, MiB, GiB, TiB are powers of 1024 (as nccl-tests reads them); KB,
 * MB, GB, TB powers of 1000; B or no suffix are bytes.  Fractions are
 * accepted when the result is a whole number of bytes ("1.5K").  Returns 0,
 * or FAST_EUSAGE for malformed or overflowing input. */
int fast_size_parse(const char *text, uint64_t *out, struct fast_err *err);
/* Human form of a byte count into buf ("256 MiB", "1.50 GiB", "512 B"). */
const char *fast_size_format(uint64_t bytes, char *buf, size_t len);
/* v in %g style with the fewest significant digits (at least 6) that read
 * back as exactly v, so that a bound like 1.0000001 never prints as the "1"
 * it excludes; returns buf.  32 bytes always suffice. */
const char *fast_num_format(double v, char *buf, size_t len);

/* Bandwidth of an all-to-all(v) among n ranks, nccl-tests' definitions
 * (alltoall.cu) -- the one place `fast sim`, `compare`, `sweep`, `gate`
 * and `run` take them from, so simulated and measured figures compare:
 *  - size: the largest per-GPU max(bytes sent, bytes received), the GPU's
 *    own chunk (the diagonal D[g][g]) included, as nccl-tests counts a
 *    rank's whole send buffer (count x type size x nranks);
 *  - algbw = size / time (GB/s, 1e9 bytes);
 *  - busbw = algbw x (n - 1) / n: a rank's own chunk never crosses a link.
 * fast_a2a_size takes the n x n row-major matrix (sums cannot overflow on
 * a loaded traffic: checked at load time); fast_bw is 0 when time <= 0. */
uint64_t fast_a2a_size(const uint64_t *D, uint32_t n);
/* Row and column sums of the n x n row-major M into row[n] and col[n],
 * with plain adds (which vectorise): for matrices whose sums are known to
 * fit, as a loaded traffic's (checked at load time). */
void fast_line_sums(const uint64_t *M, uint32_t n, uint64_t *row, uint64_t *col);
struct fast_bw {
	uint64_t size;
	double algbw_GBps, busbw_GBps;
};
void fast_bw(uint64_t size, double time_s, uint32_t n, struct fast_bw *out);

/* Deterministic random generator (xoshiro256**, seeded by splitmix64):
 * the same seed gives the same sequence on every machine. */
struct fast_rng {
	uint64_t s[4];
};
void fast_rng_seed(struct fast_rng *rng, uint64_t seed);
uint64_t fast_rng_next(struct fast_rng *rng);
/* Uniform in [0, n) without modulo bias; n > 0. */
uint64_t fast_rng_below(struct fast_rng *rng, uint64_t n);
/* Uniform double in [0, 1). */
double fast_rng_double(struct fast_rng *rng);

/* Monotonic wall clock in seconds (for synthesis timings in reports). */
double fast_now(void);

/* 64-bit FNV-1a over a byte range, chained through h (start with
 * FAST_HASH_INIT).  Used for plan identity across ranks and plan caches. */
#define FAST_HASH_INIT UINT64_C(0xcbf29ce484222325)
uint64_t fast_hash_bytes(uint64_t h, const void *data, size_t len);
/* The same over values, independent of the host's byte order: an integer
 * as 8 little-endian bytes, a double by its bits (-0 as 0), a string by its
 * length then its bytes (so "ab","c" and "a","bc" differ). */
uint64_t fast_hash_u64(uint64_t h, uint64_t v);
/* Greatest common divisor (gcd(a, 0) = a). */
uint64_t fast_gcd_u64(uint64_t a, uint64_t b);
uint64_t fast_hash_double(uint64_t h, double v);
uint64_t fast_hash_str(uint64_t h, const char *s);

/* Allocation helpers that check the element-count multiplication; return
 * NULL on overflow or exhaustion (callers report FAST_ENOMEM). */
void *fast_calloc(size_t n, size_t size);
void *fast_reallocarray(void *p, size_t n, size_t size);

/* The candidate closest to word for a "did you mean" hint: the first of
 * the n candidates at the smallest edit distance (insertions, deletions,
 * substitutions and swaps of adjacent characters), when that distance is
 * at most 2 and smaller than word's length without its leading dashes (so
 * "-x" suggests nothing); else NULL.  An exact match is returned as is.
 * NULL entries are skipped; the result points into candidates.  "Did you
 * mean" for commands, algorithms, options and presets (cmd/cli.h's
 * cli_suggest is this). */
const char *fast_suggest(const char *word, const char *const *candidates, size_t n);

/* Split `total` units over n entries in proportion to weights w (sum > 0)
 * by the largest-remainder method: out[i] = floor(total * w[i] / W) plus
 * one for the entries with the largest remainders, ties to the lowest
 * (i - rotate) mod n.  sum(out) == total exactly.  Returns FAST_ENOMEM or
 * FAST_EINPUT (all weights zero with total > 0); out untouched then. */
int fast_apportion(uint64_t total, const uint64_t *w, uint32_t n, uint32_t rotate,
		   uint64_t *out, struct fast_err *err);

/* The growable array: make room for `need` elements of `size` bytes in
 * *arr, which has *cap allocated.  The capacity doubles (from min_cap when
 * the array is empty) until need fits, so n appends cost O(n).  0, or
 * FAST_ENOMEM with *arr and *cap unchanged (the caller words the error).
 * FAST_GROW(arr, cap, need) is the call for a typed pointer `arr` (the
 * common case, room enough, decided inline). */
int fast_grow(void **arr, size_t *cap, size_t need, size_t size, size_t min_cap);
#define FAST_GROW(arr, cap, need)                                                  \
	((size_t)(need) <= (cap) ? 0 : fast_grow((void **)&(arr), &(cap), (need),   \
						  sizeof *(arr), 64))

/* Scratch arrays kept between calls by their owner, so that repeated calls
 * of a library function that takes one reuse memory instead of allocating
 * (and, above the allocator's mapping threshold, faulting in) fresh arrays
 * each time.  Explicit, not a hidden cache: the caller owns it, one per
 * thread.  Zero it before first use; fast_scratch_free frees it.  The user
 * numbers the slots; a slot's contents are its user's between calls. */
#define FAST_SCRATCH_SLOTS 8
struct fast_scratch {
	void *buf[FAST_SCRATCH_SLOTS];
	size_t cap[FAST_SCRATCH_SLOTS]; /* bytes */
};

/* Slot `slot`'s array with room for n elements of size bytes, its
 * contents kept (the capacity doubles, so growing it n times costs O(n));
 * NULL on exhaustion, the slot unchanged. */
void *fast_scratch_room(struct fast_scratch *s, unsigned slot, size_t n, size_t size);
void fast_scratch_free(struct fast_scratch *s); /* NULL: nothing; zeroed after */

#endif
