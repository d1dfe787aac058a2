/*
 * test_common.c - lib/common: the error list and its exit statuses, checked
 * arithmetic, byte-size parsing and formatting, the deterministic random
 * generator (pinned against an independent reference), hashing and checked
 * allocation.
 */
#include <CUnit/Basic.h>

#include "unit.h"
#include <stdlib.h>
#include <string.h>

#include "fast/common.h"

static void test_common__error_list_statuses_and_names(void)
{
	/* docs/DESIGN.md: 1 check failed, 2 usage, 3 bad input, 4 runtime */
	CU_ASSERT_EQUAL(fast_err_exit_status(FAST_OK), 0);
	CU_ASSERT_EQUAL(fast_err_exit_status(FAST_EINPUT), 3);
	CU_ASSERT_EQUAL(fast_err_exit_status(FAST_ECHECK), 1);
	CU_ASSERT_EQUAL(fast_err_exit_status(FAST_EUSAGE), 2);
	CU_ASSERT_EQUAL(fast_err_exit_status(FAST_ENOMEM), 4);
	CU_ASSERT_EQUAL(fast_err_exit_status(FAST_EIO), 4);
	CU_ASSERT_EQUAL(fast_err_exit_status(FAST_ELIMIT), 3);
	CU_ASSERT_EQUAL(fast_err_exit_status(FAST_ESOLVER), 4);
	CU_ASSERT_EQUAL(fast_err_exit_status(FAST_ERUNTIME), 4);
	CU_ASSERT_EQUAL(fast_err_exit_status(-999), 4);
	CU_ASSERT_STRING_EQUAL(fast_err_name(FAST_EINPUT), "bad input");
	CU_ASSERT_STRING_EQUAL(fast_err_name(FAST_EUSAGE), "usage");
	CU_ASSERT_STRING_EQUAL(fast_err_name(FAST_ELIMIT), "limit exceeded");
	CU_ASSERT_STRING_EQUAL(fast_err_name(FAST_OK), "ok");
	CU_ASSERT_STRING_EQUAL(fast_err_name(-999), "error");
	/* every code is negative and distinct */
	{
		static const int codes[] = { FAST_EINPUT, FAST_ECHECK, FAST_EUSAGE, FAST_ENOMEM,
					     FAST_EIO, FAST_ELIMIT, FAST_ESOLVER, FAST_ERUNTIME };
		size_t n = sizeof codes / sizeof codes[0];
		for (size_t i = 0; i < n; i++) {
			CU_ASSERT(codes[i] < 0);
			for (size_t j = i + 1; j < n; j++)
				CU_ASSERT(codes[i] != codes[j]);
		}
	}
}

static void test_common__err_set_and_prefix(void)
{
	struct fast_err err = { 0 };

	CU_ASSERT_EQUAL(fast_err_set(&err, FAST_EINPUT, "%s: must be > %d", "/x", 0), FAST_EINPUT);
	CU_ASSERT_EQUAL(err.code, FAST_EINPUT);
	CU_ASSERT_STRING_EQUAL(err.msg, "/x: must be > 0");
	fast_err_prefix(&err, "%s", "topo.json");
	CU_ASSERT_STRING_EQUAL(err.msg, "topo.json: /x: must be > 0");
	/* a NULL err is allowed: the code still comes back */
	CU_ASSERT_EQUAL(fast_err_set(NULL, FAST_EIO, "x"), FAST_EIO);
	fast_err_prefix(NULL, "y");
	/* long messages are truncated, never overflow */
	{
		char big[2 * FAST_ERRMSG_MAX];
		memset(big, 'a', sizeof big - 1);
		big[sizeof big - 1] = '\0';
		fast_err_set(&err, FAST_EINPUT, "%s", big);
		CU_ASSERT_EQUAL(strlen(err.msg), FAST_ERRMSG_MAX - 1);
	}
}

static void test_common__checked_arithmetic(void)
{
	uint64_t r = 7;

	CU_ASSERT_TRUE(fast_add_u64(1, 2, &r));
	CU_ASSERT_EQUAL(r, 3);
	CU_ASSERT_FALSE(fast_add_u64(UINT64_MAX, 1, &r));
	CU_ASSERT_EQUAL(r, 3); /* untouched on overflow */
	CU_ASSERT_TRUE(fast_add_u64(UINT64_MAX - 1, 1, &r));
	CU_ASSERT_EQUAL(r, UINT64_MAX);
	CU_ASSERT_TRUE(fast_mul_u64(UINT64_C(1) << 32, (UINT64_C(1) << 32) - 1, &r));
	CU_ASSERT_FALSE(fast_mul_u64(UINT64_C(1) << 32, UINT64_C(1) << 32, &r));
	CU_ASSERT_EQUAL(r, (UINT64_C(1) << 32) * ((UINT64_C(1) << 32) - 1));
}

static uint64_t size_ok(const char *text)
{
	struct fast_err err = { 0 };
	uint64_t v = 12345;
	int rc = fast_size_parse(text, &v, &err);
	CU_ASSERT_EQUAL(rc, 0);
	if (rc)
		fprintf(stderr, "\n  '%s' rejected: %s\n", text, err.msg);
	return v;
}

static void size_bad(const char *text, const char *needle)
{
	struct fast_err err = { 0 };
	uint64_t v = 12345;

	CU_ASSERT_EQUAL(fast_size_parse(text, &v, &err), FAST_EUSAGE);
	CU_ASSERT_EQUAL(err.code, FAST_EUSAGE);
	CU_ASSERT_EQUAL(v, 12345); /* untouched on failure */
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, needle));
	if (!strstr(err.msg, needle))
		fprintf(stderr, "\n  '%s': got '%s', wanted '%s'\n", text, err.msg, needle);
}

static void test_common__size_binary_and_decimal_suffixes(void)
{
	CU_ASSERT_EQUAL(size_ok("0"), 0);
	CU_ASSERT_EQUAL(size_ok("512"), 512);
	CU_ASSERT_EQUAL(size_ok("512B"), 512);
	/* K, M, G, T and KiB.. are powers of 1024 (nccl-tests) */
	CU_ASSERT_EQUAL(size_ok("1K"), 1024);
	CU_ASSERT_EQUAL(size_ok("64M"), UINT64_C(64) << 20);
	CU_ASSERT_EQUAL(size_ok("1G"), UINT64_C(1) << 30);
	CU_ASSERT_EQUAL(size_ok("2T"), UINT64_C(2) << 40);
	CU_ASSERT_EQUAL(size_ok("1KiB"), 1024);
	CU_ASSERT_EQUAL(size_ok("3MiB"), UINT64_C(3) << 20);
	CU_ASSERT_EQUAL(size_ok("1GiB"), UINT64_C(1) << 30);
	CU_ASSERT_EQUAL(size_ok("1TiB"), UINT64_C(1) << 40);
	/* KB, MB, GB, TB are powers of 1000 */
	CU_ASSERT_EQUAL(size_ok("1KB"), 1000);
	CU_ASSERT_EQUAL(size_ok("500MB"), UINT64_C(500000000));
	CU_ASSERT_EQUAL(size_ok("2GB"), UINT64_C(2000000000));
	CU_ASSERT_EQUAL(size_ok("1TB"), UINT64_C(1000000000000));
	CU_ASSERT_EQUAL(size_ok("18446744073709551615"), UINT64_MAX);
	CU_ASSERT_EQUAL(size_ok("16777215T"), ((UINT64_C(1) << 24) - 1) << 40);
}

static void test_common__size_fractions(void)
{
	CU_ASSERT_EQUAL(size_ok("1.5K"), 1536);
	CU_ASSERT_EQUAL(size_ok("0.5KB"), 500);
	CU_ASSERT_EQUAL(size_ok("2.25MiB"), (UINT64_C(9) << 20) / 4);
	CU_ASSERT_EQUAL(size_ok("1.000GB"), UINT64_C(1000000000));
	CU_ASSERT_EQUAL(size_ok(".5K"), 512);
	CU_ASSERT_EQUAL(size_ok("4."), 4);
	size_bad("1.5", "whole number of bytes");
	size_bad("1.3K", "whole number of bytes");
	size_bad("0.0001KB", "whole number of bytes");
	size_bad("1.0000000001K", "too many decimals");
}

static void test_common__size_overflow_and_garbage(void)
{
	size_bad("18446744073709551616", "overflows 64 bits");
	size_bad("99999999999999999999999", "overflows 64 bits");
	size_bad("16777216T", "overflows 64 bits");
	size_bad("17179869184G", "overflows 64 bits");
	size_bad("18446744073709551615K", "overflows 64 bits");
	size_bad("", "empty size");
	size_bad("abc", "not a number");
	size_bad("-1", "not a number");
	size_bad("K", "not a number");
	size_bad(".", "not a number");
	size_bad("1k", "unknown suffix");
	size_bad("1 K", "unknown suffix");
	size_bad("1KiBB", "unknown suffix");
	size_bad("1Ki", "unknown suffix");
	size_bad("1e6", "unknown suffix");
	size_bad("0x10", "unknown suffix");
	size_bad("12M ", "unknown suffix");
	{
		struct fast_err err;
		uint64_t v = 3;
		CU_ASSERT_EQUAL(fast_size_parse(NULL, &v, &err), FAST_EUSAGE);
		CU_ASSERT_EQUAL(v, 3);
	}
}

static void test_common__num_format_reads_back(void)
{
	char buf[32];

	CU_ASSERT_STRING_EQUAL(fast_num_format(1.0000001, buf, sizeof buf), "1.0000001");
	CU_ASSERT_STRING_EQUAL(fast_num_format(1e6, buf, sizeof buf), "1e+06");
	CU_ASSERT_STRING_EQUAL(fast_num_format(0.5, buf, sizeof buf), "0.5");
	CU_ASSERT_STRING_EQUAL(fast_num_format(1e-300, buf, sizeof buf), "1e-300");
	CU_ASSERT_STRING_EQUAL(fast_num_format(0.1 + 0.2, buf, sizeof buf), "0.30000000000000004");
	CU_ASSERT_EQUAL(strtod(fast_num_format(48.85 / 50, buf, sizeof buf), NULL), 48.85 / 50);
}

static void test_common__size_format(void)
{
	char buf[32];

	CU_ASSERT_STRING_EQUAL(fast_size_format(0, buf, sizeof buf), "0 B");
	CU_ASSERT_STRING_EQUAL(fast_size_format(1023, buf, sizeof buf), "1023 B");
	CU_ASSERT_STRING_EQUAL(fast_size_format(1024, buf, sizeof buf), "1 KiB");
	CU_ASSERT_STRING_EQUAL(fast_size_format(1536, buf, sizeof buf), "1.50 KiB");
	CU_ASSERT_STRING_EQUAL(fast_size_format(UINT64_C(256) << 20, buf, sizeof buf), "256 MiB");
	CU_ASSERT_STRING_EQUAL(fast_size_format(UINT64_C(3) << 29, buf, sizeof buf), "1.50 GiB");
	/* a short buffer is truncated, not overrun */
	CU_ASSERT_EQUAL(strlen(fast_size_format(UINT64_C(1536), buf, 4)), 3);
}

static void test_common__rng_is_deterministic(void)
{
	/* reference values: xoshiro256** seeded by splitmix64, computed by an
	 * independent implementation (Python) of the published algorithms */
	struct fast_rng a, b;

	fast_rng_seed(&a, 0);
	CU_ASSERT_EQUAL(fast_rng_next(&a), UINT64_C(0x99ec5f36cb75f2b4));
	CU_ASSERT_EQUAL(fast_rng_next(&a), UINT64_C(0xbf6e1f784956452a));
	CU_ASSERT_EQUAL(fast_rng_next(&a), UINT64_C(0x1a5f849d4933e6e0));
	fast_rng_seed(&a, 42);
	CU_ASSERT_EQUAL(fast_rng_next(&a), UINT64_C(0x15780b2e0c2ec716));
	CU_ASSERT_EQUAL(fast_rng_next(&a), UINT64_C(0x6104d9866d113a7e));
	CU_ASSERT_EQUAL(fast_rng_next(&a), UINT64_C(0xae17533239e499a1));

	/* same seed, same stream; different seeds, different streams */
	fast_rng_seed(&a, 7);
	fast_rng_seed(&b, 7);
	for (int i = 0; i < 1000; i++)
		CU_ASSERT_EQUAL_FATAL(fast_rng_next(&a), fast_rng_next(&b));
	fast_rng_seed(&b, 8);
	CU_ASSERT_NOT_EQUAL(fast_rng_next(&a), fast_rng_next(&b));
}

static void test_common__rng_below_and_double_ranges(void)
{
	struct fast_rng r;
	unsigned hist[10] = { 0 };
	const int n = 100000;

	fast_rng_seed(&r, 1);
	for (int i = 0; i < n; i++) {
		uint64_t x = fast_rng_below(&r, 10);
		double d = fast_rng_double(&r);
		CU_ASSERT_FATAL(x < 10);
		CU_ASSERT_FATAL(d >= 0.0 && d < 1.0);
		hist[x]++;
	}
	/* uniform: each bucket within 5% of n/10 (about 10 sigma) */
	for (int i = 0; i < 10; i++)
		CU_ASSERT(hist[i] > n / 10 * 95 / 100 && hist[i] < n / 10 * 105 / 100);
	CU_ASSERT_EQUAL(fast_rng_below(&r, 1), 0);
	/* a bound above 2^63 still stays in range */
	for (int i = 0; i < 1000; i++)
		CU_ASSERT_FATAL(fast_rng_below(&r, (UINT64_C(1) << 63) + 3) < (UINT64_C(1) << 63) + 3);
}

static void test_common__hash_fnv1a(void)
{
	uint64_t h = fast_hash_bytes(FAST_HASH_INIT, "a", 1);
	CU_ASSERT_EQUAL(fast_hash_bytes(FAST_HASH_INIT, "", 0), FAST_HASH_INIT);
	CU_ASSERT_EQUAL(h, UINT64_C(0xaf63dc4c8601ec8c));
	/* chaining equals hashing the concatenation */
	CU_ASSERT_EQUAL(fast_hash_bytes(fast_hash_bytes(FAST_HASH_INIT, "ab", 2), "cd", 2),
			fast_hash_bytes(FAST_HASH_INIT, "abcd", 4));
}

/* nccl-tests' alltoall: size is a rank's whole send (or receive) buffer,
 * its own chunk included; busbw = algbw (n-1)/n */
static void test_common__a2a_size_and_bandwidth(void)
{
	/* GPU 1 sends 2+30+4 = 36 (diagonal 30 included), GPU 2 receives
	 * 3+4+20 = 27; without the diagonal GPU 1 would send 6 */
	const uint64_t D[9] = { 1, 2, 3, 2, 30, 4, 0, 0, 20 };
	struct fast_bw bw;

	CU_ASSERT_EQUAL(fast_a2a_size(D, 3), 36);
	CU_ASSERT_EQUAL(fast_a2a_size(D, 1), 1);
	fast_bw(36, 2e-9, 3, &bw);
	CU_ASSERT_EQUAL(bw.size, 36);
	CU_ASSERT_DOUBLE_EQUAL(bw.algbw_GBps, 18.0, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(bw.busbw_GBps, 12.0, 1e-12);
	fast_bw(36, 0, 3, &bw); /* no time: no bandwidth */
	CU_ASSERT_EQUAL(bw.algbw_GBps, 0);
	CU_ASSERT_EQUAL(bw.busbw_GBps, 0);
	fast_bw(36, 1e-9, 1, &bw); /* one rank: nothing crosses a link */
	CU_ASSERT_DOUBLE_EQUAL(bw.algbw_GBps, 36.0, 1e-12);
	CU_ASSERT_EQUAL(bw.busbw_GBps, 0);
}

static void test_common__checked_allocation(void)
{
	void *p = fast_calloc(0, 8);
	CU_ASSERT_PTR_NOT_NULL(p);
	free(p);
	CU_ASSERT_PTR_NULL(fast_calloc(SIZE_MAX / 2, 4));
	CU_ASSERT_PTR_NULL(fast_reallocarray(NULL, SIZE_MAX / 2, 4));
	p = fast_reallocarray(NULL, 16, 4);
	CU_ASSERT_PTR_NOT_NULL(p);
	free(p);
}

static void test_common__suggest_closest_within_two_edits(void)
{
	const char *const opts[] = { "--traffic", "--topo", "--preset", "--plan", "--max-staging" };
	const char *const presets[] = { "h200", "h100", "mi300x", "mi300x-100g" };

	CU_ASSERT_STRING_EQUAL(fast_suggest("--trafic", opts, 5), "--traffic");     /* deletion */
	CU_ASSERT_STRING_EQUAL(fast_suggest("--prset", opts, 5), "--preset");
	CU_ASSERT_STRING_EQUAL(fast_suggest("--tpoo", opts, 5), "--topo");          /* swap */
	CU_ASSERT_STRING_EQUAL(fast_suggest("--max-stagign", opts, 5), "--max-staging");
	CU_ASSERT_STRING_EQUAL(fast_suggest("--plan", opts, 5), "--plan");          /* exact */
	CU_ASSERT_PTR_NULL(fast_suggest("--frobnicate", opts, 5));                 /* too far */
	CU_ASSERT_PTR_NULL(fast_suggest("-x", opts, 5));
	/* ties: the first candidate */
	CU_ASSERT_STRING_EQUAL(fast_suggest("h300", presets, 4), "h200");
	CU_ASSERT_STRING_EQUAL(fast_suggest("mi300", presets, 4), "mi300x");
	CU_ASSERT_PTR_NULL(fast_suggest("a", presets, 4));
	CU_ASSERT_PTR_NULL(fast_suggest("h200", presets, 0));
}

UNIT_MAIN("common",
	  UNIT_TEST(test_common__error_list_statuses_and_names),
	  UNIT_TEST(test_common__err_set_and_prefix),
	  UNIT_TEST(test_common__checked_arithmetic),
	  UNIT_TEST(test_common__size_binary_and_decimal_suffixes),
	  UNIT_TEST(test_common__size_fractions),
	  UNIT_TEST(test_common__size_overflow_and_garbage),
	  UNIT_TEST(test_common__num_format_reads_back),
	  UNIT_TEST(test_common__size_format),
	  UNIT_TEST(test_common__rng_is_deterministic),
	  UNIT_TEST(test_common__rng_below_and_double_ranges),
	  UNIT_TEST(test_common__hash_fnv1a),
	  UNIT_TEST(test_common__a2a_size_and_bandwidth),
	  UNIT_TEST(test_common__checked_allocation),
	  UNIT_TEST(test_common__suggest_closest_within_two_edits))
