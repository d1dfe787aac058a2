/*
 * test_routing.c - a user's routing files (lib/workload/moe_routing.h):
 * the NPY container (versions 1 to 3, header dicts as NumPy writes them
 * and as a hand-written one might, the refusals), element reads with
 * sign extension, the per-token checks, and the even split of plain
 * counts over sources.  The byte-exact comparison of whole imports with
 * an independent computation is the golden case trace_routing_reference.
 */
#include <CUnit/Basic.h>

#include "unit.h"
#include <stdlib.h>
#include <string.h>

#include "lib/workload/moe_routing.h"

/* An .npy image: magic, version, header length, header, data. */
static size_t npy(unsigned char *buf, int version, const char *hdr, const void *data, size_t n)
{
	size_t h = strlen(hdr), pre = version == 1 ? 10 : 12;

	memcpy(buf, "\x93NUMPY", 6);
	buf[6] = (unsigned char)version;
	buf[7] = 0;
	buf[8] = (unsigned char)(h & 0xff);
	buf[9] = (unsigned char)(h >> 8);
	if (version > 1)
		buf[10] = buf[11] = 0;
	memcpy(buf + pre, hdr, h);
	memcpy(buf + pre + h, data, n);
	return pre + h + n;
}

static void test_routing__npy_versions_and_headers(void)
{
	static const char *const hdrs[] = {
		"{'descr': '<i2', 'fortran_order': False, 'shape': (2, 3), }          \n",
		"{\"shape\": (2,3), \"descr\": \"<i2\", \"fortran_order\": False}\n",
		"{'fortran_order': False, 'shape': (2, 3,), 'descr': '<i2'}\n",
	};
	const int16_t v[6] = { 0, 1, -2, 300, -32768, 7 };
	unsigned char buf[256];
	struct fast_npy a;
	struct fast_err err;

	for (int version = 1; version <= 3; version++)
		for (size_t i = 0; i < sizeof hdrs / sizeof hdrs[0]; i++) {
			size_t n = npy(buf, version, hdrs[i], v, sizeof v);
			CU_ASSERT_EQUAL_FATAL(fast_npy_parse((char *)buf, n, "a.npy", &a, &err), 0);
			CU_ASSERT_EQUAL(a.version, (uint32_t)version);
			CU_ASSERT_EQUAL(a.ndim, 2);
			CU_ASSERT_EQUAL(a.shape[0], 2);
			CU_ASSERT_EQUAL(a.shape[1], 3);
			for (int k = 0; k < 6; k++)
				CU_ASSERT_EQUAL(fast_npy_at(&a, (uint64_t)k), v[k]);
		}
}

static void test_routing__npy_refusals(void)
{
	static const struct {
		const char *hdr;
		size_t data;
		const char *msg;
	} cases[] = {
		{ "{'descr': '>i4', 'fortran_order': False, 'shape': (2,)}\n", 8,
		  "a.npy: header: dtype '>i4' is big-endian (write it little-endian: a.astype('<i4'))" },
		{ "{'descr': '<f8', 'fortran_order': False, 'shape': (2,)}\n", 16,
		  "a.npy: header: dtype '<f8' is not an integer type (int8..int64, uint8..uint64)" },
		{ "{'descr': '<i4', 'fortran_order': True, 'shape': (2,)}\n", 8,
		  "a.npy: header: Fortran order (write it in C order: numpy.ascontiguousarray)" },
		{ "{'descr': '<i4', 'fortran_order': False, 'shape': (3,)}\n", 8,
		  "a.npy: truncated: 8 bytes of data, 12 expected for the shape" },
		{ "{'descr': '<i4', 'fortran_order': False, 'shape': (1,)}\n", 8,
		  "a.npy: 4 bytes after the data the shape says (a second array, or a wrong shape)" },
		{ "{'descr': '<i4', 'fortran_order': False, 'shape': (1, 1, 1, 1)}\n", 4,
		  "a.npy: header: more than 3 dimensions" },
		{ "{'descr': '<i4', 'shape': (1,)}\n", 4, "a.npy: header: no 'fortran_order'" },
		{ "{'descr': '<i4', 'fortran_order': False, 'shape': (1,), 'x': 1}\n", 4,
		  "a.npy: header: unknown key 'x'" },
		{ "{'descr': [('a', '<i4')], 'fortran_order': False, 'shape': (1,)}\n", 4,
		  "a.npy: header: 'descr' is not a simple dtype string (structured arrays are not routing)" },
	};
	unsigned char buf[256], zero[16] = { 0 };
	struct fast_npy a;
	struct fast_err err;

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		size_t n = npy(buf, 1, cases[i].hdr, zero, cases[i].data);
		CU_ASSERT_EQUAL(fast_npy_parse((char *)buf, n, "a.npy", &a, &err), FAST_EINPUT);
		CU_ASSERT_STRING_EQUAL(err.msg, cases[i].msg);
	}
	buf[6] = 4;
	CU_ASSERT_EQUAL(fast_npy_parse((char *)buf, 64, "a.npy", &a, &err), FAST_EINPUT);
	CU_ASSERT_STRING_EQUAL(err.msg, "a.npy: NPY version 4.0 (read: 1.0, 2.0, 3.0)");
	CU_ASSERT_EQUAL(fast_npy_parse("PK\3\4 a zip", 11, "a.npz", &a, &err), FAST_EINPUT);
}

static void test_routing__npy_unsigned_and_wide(void)
{
	const uint8_t u8[2] = { 255, 1 };
	const uint64_t u64[2] = { UINT64_MAX, 5 };
	unsigned char buf[256];
	struct fast_npy a;
	struct fast_err err;
	size_t n = npy(buf, 1, "{'descr': '|u1', 'fortran_order': False, 'shape': (2,)}\n", u8, 2);

	CU_ASSERT_EQUAL_FATAL(fast_npy_parse((char *)buf, n, "a.npy", &a, &err), 0);
	CU_ASSERT_EQUAL(fast_npy_at(&a, 0), 255);
	n = npy(buf, 1, "{'descr': '<u8', 'fortran_order': False, 'shape': (2,)}\n", u64, 16);
	CU_ASSERT_EQUAL_FATAL(fast_npy_parse((char *)buf, n, "a.npy", &a, &err), 0);
	CU_ASSERT_EQUAL(fast_npy_at(&a, 0), INT64_MAX);
	CU_ASSERT_EQUAL(fast_npy_at(&a, 1), 5);
}

static void test_routing__token_checks(void)
{
	const int64_t ok[3] = { 0, 7, 3 }, dup[3] = { 1, 2, 1 }, range[3] = { 1, 8, 2 };
	const int64_t neg[2] = { -1, 0 };
	char msg[160];

	CU_ASSERT_EQUAL(fast_moe_routing_token_bad(ok, 3, 8, msg, sizeof msg), -1);
	CU_ASSERT_EQUAL(fast_moe_routing_token_bad(dup, 3, 8, msg, sizeof msg), 2);
	CU_ASSERT_STRING_EQUAL(msg, "expert 1 chosen twice by one token (top-k 3)");
	CU_ASSERT_EQUAL(fast_moe_routing_token_bad(range, 3, 8, msg, sizeof msg), 1);
	CU_ASSERT_STRING_EQUAL(msg, "expert id 8 out of range (8 experts: 0..7)");
	CU_ASSERT_EQUAL(fast_moe_routing_token_bad(neg, 2, 8, msg, sizeof msg), 0);
}

/* Plain counts go evenly over the sources, the remainder to sources e,
 * e+1, ... (mod ng); per-source counts go where they say. */
static void test_routing__counts_split(void)
{
	uint32_t layer0 = 0;
	uint64_t c[2] = { 5, 2 }, counts[4] = { 0 };
	struct fast_moe_routing r = { 0 };
	struct fast_moe_layout l = { .ng = 2, .experts = 2 };
	struct fast_err err;

	snprintf(r.path, sizeof r.path, "c.json");
	r.kind = FAST_ROUTING_COUNTS;
	r.experts = 2;
	r.nlayers = 1;
	r.layers = &layer0;
	r.counts = c;
	/* expert 0 (GPU 0): 3 from source 0, 2 from 1; expert 1 (GPU 1): 1 and 1 */
	CU_ASSERT_EQUAL_FATAL(fast_moe_routing_count(&r, &l, 0, counts, &err), 0);
	CU_ASSERT_EQUAL(counts[0], 3);
	CU_ASSERT_EQUAL(counts[1], 1);
	CU_ASSERT_EQUAL(counts[2], 2);
	CU_ASSERT_EQUAL(counts[3], 1);
	r.kind = FAST_ROUTING_SRC_COUNTS;
	r.ngpus = 1; /* [1][2] counts for an EP2 layout */
	CU_ASSERT_EQUAL(fast_moe_routing_count(&r, &l, 0, counts, &err), FAST_EINPUT);
	CU_ASSERT_STRING_EQUAL(err.msg, "c.json: counts of 1 source GPUs, but the EP group has 2");
	CU_ASSERT_EQUAL(fast_moe_routing_count(&r, &l, 3, counts, &err), FAST_EINPUT);
}

UNIT_MAIN("routing",
	  UNIT_TEST(test_routing__npy_versions_and_headers),
	  UNIT_TEST(test_routing__npy_refusals),
	  UNIT_TEST(test_routing__npy_unsigned_and_wide),
	  UNIT_TEST(test_routing__token_checks),
	  UNIT_TEST(test_routing__counts_split))
