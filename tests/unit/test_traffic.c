/*
 * test_traffic.c - lib/traffic: allocation limits, the JSON loader (dense
 * and sparse, every kind of bad value with its JSON path, 64-bit sum
 * overflow), the nccl-tests matrix reader (line:column errors), the writers
 * (seeded random round trips, 16-byte rounding), statistics against naive
 * references, transpose and the topology check.  Token traffic:
 * test_traffic_tokens.c.
 */
#define _POSIX_C_SOURCE 200809L
#include <CUnit/Basic.h>

#include "unit.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fast/traffic.h"
#include "traffic_fix.h"

static void test_traffic__alloc_labels_zeroes_and_limits(void)
{
	struct fast_limits lim;
	struct fast_traffic t;
	struct fast_err err = { 0 };

	fast_limits_default(&lim);
	CU_ASSERT_EQUAL_FATAL(fast_traffic_alloc(&t, 3, 2, &lim, &err), 0);
	CU_ASSERT_EQUAL(t.ng, 3);
	CU_ASSERT_EQUAL(t.count, 2);
	CU_ASSERT_STRING_EQUAL(t.m[0].label, "m0");
	CU_ASSERT_STRING_EQUAL(t.m[1].label, "m1");
	for (int i = 0; i < 9; i++)
		CU_ASSERT_EQUAL(t.m[1].bytes[i], 0);
	fast_traffic_free(&t);
	fast_traffic_free(&t); /* idempotent */
	fast_traffic_free(NULL);
	CU_ASSERT_EQUAL(t.count, 0);

	memset(&t, 0x5a, sizeof t);
	/* refused before allocating: 2^30 GPUs would be 8 EiB */
	CU_ASSERT_EQUAL(fast_traffic_alloc(&t, 1u << 30, 1, &lim, &err), FAST_ELIMIT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "over the limit of 16384"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "--max-gpus"));
	CU_ASSERT_EQUAL(fast_traffic_alloc(&t, 2, FAST_DEFAULT_MAX_MATRICES + 1, &lim, &err),
			FAST_ELIMIT);
	CU_ASSERT_EQUAL(fast_traffic_alloc(&t, 0, 1, &lim, &err), FAST_EINPUT);
	CU_ASSERT_EQUAL(((unsigned char *)&t)[0], 0x5a);
}

static void test_traffic__dense_and_sparse_load_the_same(void)
{
	struct fast_traffic t;
	struct fast_err err = { 0 };
	static const uint64_t want[9] = { 0, 5, 0, 7, 9007199254740992u, 1, 0, 0, 3 };

	CU_ASSERT_EQUAL_FATAL(
		parse("{\"version\": 1, \"gpus\": 3, \"source\": \"hand\", \"matrices\": ["
		      "{\"label\": \"dispatch\", \"rows\": [[0, 5, 0], [7, 9007199254740992, 1], "
		      "[0, 0, 3]]},"
		      "{\"entries\": [[0, 1, 5], [1, 0, 7], [1, 1, 9007199254740992], [1, 2, 1], "
		      "[2, 2, 3], [2, 0, 0]]}]}",
		      &t, &err),
		0);
	CU_ASSERT_EQUAL(t.ng, 3);
	CU_ASSERT_EQUAL(t.count, 2);
	CU_ASSERT_STRING_EQUAL(t.source, "hand");
	CU_ASSERT_STRING_EQUAL(t.m[0].label, "dispatch");
	CU_ASSERT_STRING_EQUAL(t.m[1].label, "m1");
	CU_ASSERT(memcmp(t.m[0].bytes, want, sizeof want) == 0);
	CU_ASSERT(memcmp(t.m[1].bytes, want, sizeof want) == 0);
	fast_traffic_free(&t);

	/* source is optional; an empty entries list is an all-zero matrix;
	 * 1.0 is an integer */
	CU_ASSERT_EQUAL_FATAL(parse("{\"matrices\": [{\"entries\": []}, {\"rows\": [[1.0]]}], "
				    "\"gpus\": 1, \"version\": 1}",
				    &t, &err),
			      0);
	CU_ASSERT_STRING_EQUAL(t.source, "");
	CU_ASSERT_EQUAL(t.m[0].bytes[0], 0);
	CU_ASSERT_EQUAL(t.m[1].bytes[0], 1);
	fast_traffic_free(&t);
}

#define DOC(gpus, mats) "{\"version\": 1, \"gpus\": " gpus ", \"matrices\": [" mats "]}"

static void test_traffic__bad_json_names_file_and_path(void)
{
	expect_error("{\"version\": 1,\n  \"gpus\": 2\n  \"matrices\": []}", FAST_EINPUT,
		     "t.json:3:3: JSON syntax error");
	expect_error("   \n\t ", FAST_EINPUT, "t.json: empty file");
	expect_error("", FAST_EINPUT, "t.json: empty file");
	expect_error(DOC("2", "{\"rows\": [[0, 1], [-1, 0]]}"), FAST_EINPUT,
		     "t.json: /matrices/0/rows/1/0: bytes must be a non-negative integer (got -1)");
	expect_error(DOC("2", "{\"rows\": [[0, 1.5], [1, 0]]}"), FAST_EINPUT,
		     "t.json: /matrices/0/rows/0/1: bytes must be a non-negative integer (got 1.5)");
	expect_error(DOC("2", "{\"rows\": [[0, \"1\"], [1, 0]]}"), FAST_EINPUT,
		     "t.json: /matrices/0/rows/0/1: bytes must be a non-negative integer (got string)");
	expect_error(DOC("2", "{\"rows\": [[0, 1], [9007199254740994, 0]]}"), FAST_EINPUT,
		     "t.json: /matrices/0/rows/1/0: bytes 9007199254740994 are above 2^53");
	expect_error(DOC("2", "{\"rows\": [[0, 1], [1e300, 0]]}"), FAST_EINPUT,
		     "/matrices/0/rows/1/0: bytes 1.0000000000000001e+300 are above 2^53");
	expect_error(DOC("2", "{\"rows\": [[0, 1], [1, 0, 2]]}"), FAST_EINPUT,
		     "t.json: /matrices/0/rows/1: row has 3 entries, expected 2 (gpus)");
	expect_error(DOC("3", "{\"rows\": [[0, 1, 0], [1, 0, 2]]}"), FAST_EINPUT,
		     "t.json: /matrices/0/rows: has 2 rows, expected 3 (gpus)");
	expect_error(DOC("2", "{\"rows\": [[0, 1], 5]}"), FAST_EINPUT,
		     "t.json: /matrices/0/rows/1: expected array, got number");
	expect_error(DOC("2", "{\"rows\": {}}"), FAST_EINPUT,
		     "t.json: /matrices/0/rows: expected array, got object");
	expect_error(DOC("2", "{\"label\": \"a\"}"), FAST_EINPUT,
		     "t.json: /matrices/0: needs \"rows\" (dense), \"entries\" (sparse) or "
		     "\"groups\" (tokens)");
	expect_error(DOC("1", "{\"rows\": [[0]], \"entries\": []}"), FAST_EINPUT,
		     "t.json: /matrices/0: has both \"rows\" and \"entries\"");
	expect_error(DOC("1", "{\"rows\": [[0]], \"Label\": \"x\"}"), FAST_EINPUT,
		     "/matrices/0: unknown key \"Label\" (keys are case-sensitive: did you mean \"label\"?)");
	expect_error(DOC("1", "{\"rows\": [[0]], \"label\": \"x\", \"label\": \"y\"}"), FAST_EINPUT,
		     "t.json: /matrices/0: duplicate key \"label\"");
	expect_error(DOC("1", "{\"rows\": [[0]], \"label\": 5}"), FAST_EINPUT,
		     "t.json: /matrices/0/label: expected string, got number");
	expect_error(DOC("4", "{\"entries\": [[0, 1, 5], [2, 3, 1], [0, 1, 5]]}"), FAST_EINPUT,
		     "t.json: /matrices/0/entries/2: duplicate entry for src 0, dst 1");
	expect_error(DOC("4", "{\"entries\": [[0, 4, 5]]}"), FAST_EINPUT,
		     "t.json: /matrices/0/entries/0/1: dst 4 is out of range (gpus = 4, ids 0..3)");
	expect_error(DOC("4", "{\"entries\": [[-1, 2, 5]]}"), FAST_EINPUT,
		     "t.json: /matrices/0/entries/0/0: src must be a GPU id (got -1)");
	expect_error(DOC("4", "{\"entries\": [[0, 2]]}"), FAST_EINPUT,
		     "t.json: /matrices/0/entries/0: an entry is [src, dst, bytes]: expected 3 numbers, got 2");
	expect_error(DOC("4", "{\"entries\": [[0, 2, -3]]}"), FAST_EINPUT,
		     "t.json: /matrices/0/entries/0/2: bytes must be a non-negative integer (got -3)");
	expect_error(DOC("0", "{\"entries\": []}"), FAST_EINPUT, "t.json: /gpus: must be >= 1 (got 0)");
	expect_error(DOC("2.5", "{\"entries\": []}"), FAST_EINPUT, "t.json: /gpus: must be a non-negative integer");
	expect_error(DOC("2", ""), FAST_EINPUT, "t.json: /matrices: needs at least one matrix");
	expect_error("{\"version\": 1, \"gpus\": 2}", FAST_EINPUT,
		     "t.json: /: missing required key \"matrices\"");
	expect_error("{\"gpus\": 2, \"matrices\": []}", FAST_EINPUT,
		     "t.json: /: missing required key \"version\"");
	expect_error("{\"version\": 5, \"gpus\": 2, \"matrices\": []}", FAST_EINPUT,
		     "t.json: /version: unsupported version 5 (this build reads versions 1 to 4)");
	expect_error("{\"version\": 4, \"gpus\": 2, \"matrices\": [{\"compute_pairs\": [1, -1], "
		     "\"rows\": [[0, 1], [1, 0]]}]}",
		     FAST_EINPUT, "t.json: /matrices/0/compute_pairs/1: must be a non-negative integer");
	expect_error("{\"version\": 1, \"gpus\": 2, \"matrices\": [], \"Gpus\": 2}", FAST_EINPUT,
		     "t.json: /: unknown key \"Gpus\"");
	expect_error("{\"version\": 1, \"gpus\": 2, \"gpus\": 3, \"matrices\": []}", FAST_EINPUT,
		     "t.json: /: duplicate key \"gpus\"");
	expect_error("[]", FAST_EINPUT, "t.json: /: expected object, got array");
}

static void test_traffic__absurd_dimensions_refused_before_allocating(void)
{
	struct fast_limits lim;

	/* 10^9 GPUs would be 8 EB per matrix: refused from the header alone */
	expect_error(DOC("1000000000", "{\"entries\": []}"), FAST_ELIMIT,
		     "t.json: /gpus: 1000000000 GPUs is over the limit of 16384 (raise it with --max-gpus)");
	expect_error(DOC("9007199254740992", "{\"entries\": []}"), FAST_ELIMIT, "--max-gpus");
	fast_limits_default(&lim);
	lim.max_gpus = 2;
	expect_error_lim(DOC("3", "{\"entries\": []}"), &lim, FAST_ELIMIT,
			 "/gpus: 3 GPUs is over the limit of 2");
	lim.max_matrices = 2;
	lim.max_gpus = 16;
	expect_error_lim(DOC("1", "{\"entries\": []}, {\"entries\": []}, {\"entries\": []}"), &lim,
			 FAST_ELIMIT, "t.json: /matrices: 3 matrices is over the limit of 2");
	/* twelve empty sparse matrices of 16384 GPUs: 24 GiB dense, refused
	 * from the header alone (the default budget is 4 GiB) */
	expect_error(DOC("16384", "{\"entries\": []}, {\"entries\": []}, {\"entries\": []}, "
			 "{\"entries\": []}, {\"entries\": []}, {\"entries\": []}, "
			 "{\"entries\": []}, {\"entries\": []}, {\"entries\": []}, "
			 "{\"entries\": []}, {\"entries\": []}, {\"entries\": []}"),
		     FAST_ELIMIT,
		     "t.json: 12 matrices of 16384 x 16384 GPUs need 24 GiB in memory (dense, 8 "
		     "bytes per pair), over the limit of 4 GiB (raise it with --max-traffic-bytes)");
	/* the budget counts every matrix: 2 x 16 x 16 x 8 = 4 KiB */
	lim.max_traffic_bytes = 4095;
	expect_error_lim(DOC("16", "{\"entries\": []}, {\"entries\": []}"), &lim, FAST_ELIMIT,
			 "2 matrices of 16 x 16 GPUs need 4 KiB in memory (dense, 8 bytes per pair), "
			 "over the limit of 4095 B");
	lim.max_traffic_bytes = 4096;
	{
		struct fast_traffic t;
		struct fast_err err;
		const char *doc = DOC("16", "{\"entries\": []}, {\"entries\": []}");
		CU_ASSERT_EQUAL(fast_traffic_parse(doc, strlen(doc), "t.json", &lim, &t, &err), 0);
		fast_traffic_free(&t);
	}
	lim.max_traffic_bytes = 64; /* the nccl-tests reader allocates through the same check */
	expect_error_lim("1 2 3\n4 5 6\n7 8 9\n", &lim, FAST_ELIMIT,
			 "1 matrices of 3 x 3 GPUs need 72 B in memory");
	fast_limits_default(&lim);
	lim.max_gpus = 2;
	expect_error_lim("1 2 3\n4 5 6\n7 8 9\n", &lim, FAST_ELIMIT,
			 "t.json:1:1: the first row has 3 entries: 3 GPUs is over the limit of 2 "
			 "(raise it with --max-gpus)");
}

/* Sparse document of ng GPUs whose entries are (src, dst) pairs, each
 * carrying 2^53 bytes. */
static char *big_doc(uint32_t ng, const uint32_t (*pairs)[2], size_t n, int matrices)
{
	struct sbuf s;

	sb_open(&s);
	fprintf(s.f, "{\"version\": 1, \"gpus\": %u, \"matrices\": [", ng);
	for (int m = 0; m < matrices; m++) {
		fprintf(s.f, "%s{\"entries\": [", m ? ", " : "");
		for (size_t i = 0; i < n; i++)
			fprintf(s.f, "%s[%u, %u, 9007199254740992]", i ? ", " : "", pairs[i][0],
				pairs[i][1]);
		fputs("]}", s.f);
	}
	fputs("]}", s.f);
	return sb_close(&s);
}

static void test_traffic__sums_overflowing_64_bits_are_rejected(void)
{
	/* 2048 x 2^53 = 2^64: one entry too many for a row, a column, the
	 * matrix total, or the total over all matrices */
	enum { NG = 2100, K = 2048 };
	uint32_t (*p)[2] = calloc(K, sizeof *p);
	struct fast_traffic t;
	struct fast_err err = { 0 };
	char *doc;

	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	for (uint32_t i = 0; i < K; i++) {
		p[i][0] = 5;
		p[i][1] = i;
	}
	doc = big_doc(NG, (const uint32_t(*)[2])p, K, 1);
	expect_error(doc, FAST_EINPUT, "t.json: /matrices/0: the sum of row 5 overflows 64 bits");
	free(doc);
	doc = big_doc(NG, (const uint32_t(*)[2])p, K - 1, 1);
	CU_ASSERT_EQUAL(parse(doc, &t, &err), 0); /* 2^64 - 2^53 fits */
	fast_traffic_free(&t);
	free(doc);

	for (uint32_t i = 0; i < K; i++) {
		p[i][0] = i;
		p[i][1] = 7;
	}
	doc = big_doc(NG, (const uint32_t(*)[2])p, K, 1);
	expect_error(doc, FAST_EINPUT, "t.json: /matrices/0: the sum of column 7 overflows 64 bits");
	free(doc);

	/* rows and columns each below 2^64, the total above */
	for (uint32_t i = 0; i < K; i++) {
		p[i][0] = i / 2;
		p[i][1] = i;
	}
	doc = big_doc(NG, (const uint32_t(*)[2])p, K, 1);
	expect_error(doc, FAST_EINPUT, "t.json: /matrices/0: the total bytes overflow 64 bits");
	free(doc);

	/* each matrix fits, the file total does not */
	doc = big_doc(NG, (const uint32_t(*)[2])p, K / 2 + 1, 2);
	expect_error(doc, FAST_EINPUT, "t.json: the total bytes over all matrices overflow 64 bits");
	free(doc);
	free(p);
}

static void test_traffic__nccl_matrix_by_content(void)
{
	struct fast_traffic t;
	struct fast_err err = { 0 };

	CU_ASSERT_EQUAL_FATAL(parse("\n  0 16 32\n48\t0 64\r\n\n80 96 0\n\n", &t, &err), 0);
	CU_ASSERT_EQUAL(t.ng, 3);
	CU_ASSERT_EQUAL(t.count, 1);
	CU_ASSERT_EQUAL(t.m[0].bytes[1], 16);
	CU_ASSERT_EQUAL(t.m[0].bytes[5], 64);
	CU_ASSERT_EQUAL(t.m[0].bytes[7], 96);
	CU_ASSERT_STRING_EQUAL(t.m[0].label, "m0");
	fast_traffic_free(&t);

	CU_ASSERT_EQUAL(parse("9007199254740992", &t, &err), 0);
	fast_traffic_free(&t);
	expect_error("1 2\n3 4 5\n", FAST_EINPUT,
		     "t.json:2:5: row 2 has more than 2 entries: the matrix must be square");
	expect_error("1 2 3\n3 4\n5 6 7\n", FAST_EINPUT,
		     "t.json:2:4: row 2 has 2 entries, expected 3");
	expect_error("1 2\n3 x4\n", FAST_EINPUT,
		     "t.json:2:3: expected a non-negative integer byte count, got 'x4'");
	expect_error("1 2\n3 -4\n", FAST_EINPUT,
		     "t.json:2:3: expected a non-negative integer byte count, got '-4'");
	expect_error("1 2.5\n3 4\n", FAST_EINPUT,
		     "t.json:1:3: expected a non-negative integer byte count, got '2.5'");
	expect_error("1 2\n3 4\n5 6\n", FAST_EINPUT, "t.json:3:1: more than 2 rows");
	expect_error("1 2 3\n4 5 6\n", FAST_EINPUT, "t.json: has 2 rows, expected 3");
	expect_error("1 9007199254740993\n3 4\n", FAST_EINPUT,
		     "t.json:1:3: 9007199254740993 bytes are above 2^53");
	expect_error("1 99999999999999999999999\n3 4\n", FAST_EINPUT, "t.json:1:3:");
}

static void test_traffic__writers_round_trip_random_traffic(void)
{
	struct fast_rng r;

	fast_rng_seed(&r, 20260601);
	for (int iter = 0; iter < 30; iter++) {
		uint32_t ng = 1 + (uint32_t)fast_rng_below(&r, 12);
		uint32_t count = 1 + (uint32_t)fast_rng_below(&r, 3);
		struct fast_traffic a, b;
		struct fast_err err = { 0 };

		CU_ASSERT_EQUAL_FATAL(fast_traffic_alloc(&a, ng, count, NULL, &err), 0);
		snprintf(a.source, sizeof a.source, "seed \"%d\"\n", iter);
		snprintf(a.m[0].label, sizeof a.m[0].label, "layer%d/dispatch", iter);
		for (uint32_t k = 0; k < count; k++)
			for (size_t i = 0; i < (size_t)ng * ng; i++) {
				uint64_t x = fast_rng_next(&r);
				/* a mix of zeros, small and 2^53-sized entries */
				a.m[k].bytes[i] = x % 3 == 0 ? 0
						  : x % 3 == 1 ? x % 5000
							       : (x >> 11) % FAST_JSON_MAX_BYTES;
			}
		for (int how = 0; how < 2; how++) {
			char *s = write_str(&a, how, NULL);
			CU_ASSERT_EQUAL_FATAL(parse(s, &b, &err), 0);
			CU_ASSERT_EQUAL(b.ng, ng);
			CU_ASSERT_EQUAL(b.count, count);
			CU_ASSERT_STRING_EQUAL(b.source, a.source);
			for (uint32_t k = 0; k < count; k++) {
				CU_ASSERT_STRING_EQUAL(b.m[k].label, a.m[k].label);
				CU_ASSERT(memcmp(a.m[k].bytes, b.m[k].bytes,
						 (size_t)ng * ng * sizeof(uint64_t)) == 0);
			}
			fast_traffic_free(&b);
			free(s);
		}
		fast_traffic_free(&a);
	}
}

static void test_traffic__nccl_writer_rounds_to_16_bytes(void)
{
	struct fast_traffic a, b;
	struct fast_err err = { 0 };
	uint64_t changed = 99;
	char *s;

	CU_ASSERT_EQUAL_FATAL(parse(DOC("2", "{\"rows\": [[0, 1], [16, 33]]}, "
					     "{\"rows\": [[1, 1], [1, 1]]}"),
				    &a, &err),
			      0);
	s = write_str(&a, 2, &changed);
	CU_ASSERT_STRING_EQUAL(s, "0 16\n16 48\n");
	CU_ASSERT_EQUAL(changed, 2);
	CU_ASSERT_EQUAL_FATAL(parse(s, &b, &err), 0); /* reads back as nccl */
	CU_ASSERT_EQUAL(b.m[0].bytes[3], 48);
	fast_traffic_free(&b);
	free(s);
	{
		struct sbuf sb;
		sb_open(&sb);
		CU_ASSERT_EQUAL(fast_traffic_write_nccl(&a, 2, sb.f, NULL, &err), FAST_EUSAGE);
		free(sb_close(&sb));
	}
	fast_traffic_free(&a);
}

static void test_traffic__write_error_is_eio(void)
{
	struct fast_traffic t;
	struct fast_err err = { 0 };
	FILE *f = fopen("/dev/null", "r");

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT_EQUAL_FATAL(fast_traffic_alloc(&t, 4, 1, NULL, &err), 0);
	t.m[0].bytes[1] = 5;
	CU_ASSERT_EQUAL(fast_traffic_write(&t, false, f, &err), FAST_EIO);
	CU_ASSERT_EQUAL(fast_traffic_write(&t, true, f, &err), FAST_EIO);
	CU_ASSERT_EQUAL(fast_traffic_write_nccl(&t, 0, f, NULL, &err), FAST_EIO);
	fclose(f);
	fast_traffic_free(&t);
}

/* Naive reference Gini: mean absolute difference over all ordered pairs
 * divided by twice the mean. */
static double gini_ref(const uint64_t *x, size_t n)
{
	double sad = 0, sum = 0;
	for (size_t i = 0; i < n; i++) {
		sum += (double)x[i];
		for (size_t j = 0; j < n; j++)
			sad += fabs((double)x[i] - (double)x[j]);
	}
	return sum > 0 ? sad / (2.0 * (double)n * sum) : 0;
}

static void test_traffic__stats_match_naive_reference(void)
{
	struct fast_rng r;

	fast_rng_seed(&r, 5);
	for (int iter = 0; iter < 40; iter++) {
		uint32_t G = 1 + (uint32_t)fast_rng_below(&r, 4);
		uint32_t N = 1 + (uint32_t)fast_rng_below(&r, 4);
		uint32_t ng = N * G;
		uint64_t *b = calloc((size_t)ng * ng, sizeof *b);
		uint64_t *off = calloc((size_t)ng * ng, sizeof *off);
		uint64_t total = 0, local = 0, intra = 0, inter = 0, maxrow = 0, maxcol = 0;
		uint64_t maxeg = 0, maxin = 0;
		size_t noff = 0;
		struct fast_traffic_stats st;

		CU_ASSERT_PTR_NOT_NULL_FATAL(b);
		CU_ASSERT_PTR_NOT_NULL_FATAL(off);
		for (size_t i = 0; i < (size_t)ng * ng; i++)
			b[i] = fast_rng_below(&r, 4) ? fast_rng_below(&r, 1000) : 0;
		for (uint32_t s = 0; s < ng; s++) {
			uint64_t row = 0, col = 0;
			for (uint32_t d = 0; d < ng; d++) {
				total += b[s * ng + d];
				if (s == d)
					local += b[s * ng + d];
				else if (s / G == d / G)
					intra += b[s * ng + d];
				else
					inter += b[s * ng + d];
				if (s != d) {
					row += b[s * ng + d];
					col += b[d * ng + s];
					off[noff++] = b[s * ng + d];
				}
			}
			maxrow = row > maxrow ? row : maxrow;
			maxcol = col > maxcol ? col : maxcol;
		}
		for (uint32_t A = 0; A < N; A++) {
			uint64_t eg = 0, in = 0;
			for (uint32_t s = 0; s < ng; s++)
				for (uint32_t d = 0; d < ng; d++) {
					if (s / G == A && d / G != A)
						eg += b[s * ng + d];
					if (d / G == A && s / G != A)
						in += b[s * ng + d];
				}
			maxeg = eg > maxeg ? eg : maxeg;
			maxin = in > maxin ? in : maxin;
		}
		fast_traffic_stats(b, ng, G, &st);
		CU_ASSERT_EQUAL(st.total, total);
		CU_ASSERT_EQUAL(st.local, local);
		CU_ASSERT_EQUAL(st.intra, intra);
		CU_ASSERT_EQUAL(st.inter, inter);
		CU_ASSERT_EQUAL(st.local + st.intra + st.inter, st.total);
		CU_ASSERT_EQUAL(st.max_row, maxrow);
		CU_ASSERT_EQUAL(st.max_col, maxcol);
		CU_ASSERT_EQUAL(st.max_server_egress, maxeg);
		CU_ASSERT_EQUAL(st.max_server_ingress, maxin);
		CU_ASSERT_DOUBLE_EQUAL(st.mean_row, (double)(total - local) / ng, 1e-9);
		CU_ASSERT_DOUBLE_EQUAL(st.gini, gini_ref(off, noff), 1e-9);
		if (st.mean_row > 0) {
			CU_ASSERT_DOUBLE_EQUAL(st.row_skew, (double)maxrow / st.mean_row, 1e-9);
		}
		CU_ASSERT(st.hot_sender < ng && st.hot_receiver < ng);
		{
			uint64_t hs = 0, hr = 0;
			for (uint32_t d = 0; d < ng; d++) {
				if (d != st.hot_sender)
					hs += b[st.hot_sender * ng + d];
				if (d != st.hot_receiver)
					hr += b[d * ng + st.hot_receiver];
			}
			CU_ASSERT_EQUAL(hs, maxrow);
			CU_ASSERT_EQUAL(hr, maxcol);
		}
		free(b);
		free(off);
	}
}

static void test_traffic__stats_known_cases(void)
{
	struct fast_traffic_stats st;
	/* 4 GPUs: uniform off-diagonal -> Gini 0, skew 1 */
	uint64_t u[16];
	/* one hot pair -> Gini (n-1)/n with n = 12 off-diagonal pairs */
	uint64_t h[16] = { 0 };

	for (int i = 0; i < 16; i++)
		u[i] = i % 5 == 0 ? 99 : 10; /* the diagonal (0, 5, 10, 15) is ignored */
	fast_traffic_stats(u, 4, 2, &st);
	CU_ASSERT_DOUBLE_EQUAL(st.gini, 0, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(st.row_skew, 1, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(st.col_skew, 1, 1e-12);
	CU_ASSERT_EQUAL(st.local, 4 * 99);
	CU_ASSERT_EQUAL(st.intra, 4 * 10);
	CU_ASSERT_EQUAL(st.inter, 8 * 10);
	CU_ASSERT_EQUAL(st.max_server_egress, 40);
	h[1 * 4 + 3] = 1000;
	fast_traffic_stats(h, 4, 2, &st);
	CU_ASSERT_DOUBLE_EQUAL(st.gini, 11.0 / 12.0, 1e-12);
	CU_ASSERT_EQUAL(st.hot_sender, 1);
	CU_ASSERT_EQUAL(st.hot_receiver, 3);
	CU_ASSERT_DOUBLE_EQUAL(st.row_skew, 4, 1e-12);
	CU_ASSERT_EQUAL(st.inter, 1000);
	/* all zero: no division by zero */
	memset(h, 0, sizeof h);
	fast_traffic_stats(h, 4, 2, &st);
	CU_ASSERT_EQUAL(st.gini, 0);
	CU_ASSERT_EQUAL(st.row_skew, 0);
	/* one GPU: no pairs at all */
	fast_traffic_stats(h, 1, 1, &st);
	CU_ASSERT_EQUAL(st.gini, 0);
}

static void test_traffic__transpose_and_topology_check(void)
{
	struct fast_traffic t;
	struct fast_topo topo;
	struct fast_err err = { 0 };
	struct fast_rng r;
	uint64_t b[25], c[25];

	fast_rng_seed(&r, 9);
	for (int i = 0; i < 25; i++)
		b[i] = c[i] = fast_rng_next(&r);
	CU_ASSERT_EQUAL(fast_matrix_transpose(b, 5, &err), 0);
	for (int s = 0; s < 5; s++)
		for (int d = 0; d < 5; d++)
			CU_ASSERT_EQUAL(b[s * 5 + d], c[d * 5 + s]);
	CU_ASSERT_EQUAL(fast_matrix_transpose(b, 5, &err), 0);
	CU_ASSERT(memcmp(b, c, sizeof b) == 0);

	CU_ASSERT_EQUAL_FATAL(fast_topo_preset("h200", 2, 4, NULL, &topo, &err), 0);
	CU_ASSERT_EQUAL_FATAL(fast_traffic_alloc(&t, 8, 1, NULL, &err), 0);
	CU_ASSERT_EQUAL(fast_traffic_check_topo(&t, &topo, "t.json", &err), 0);
	fast_traffic_free(&t);
	CU_ASSERT_EQUAL_FATAL(fast_traffic_alloc(&t, 16, 1, NULL, &err), 0);
	CU_ASSERT_EQUAL(fast_traffic_check_topo(&t, &topo, "t.json", &err), FAST_EINPUT);
	CU_ASSERT_STRING_EQUAL(err.msg, "t.json: traffic has 16 GPUs but the topology has 8 "
					"(2 servers x 4 GPUs)");
	fast_traffic_free(&t);
}

UNIT_MAIN("traffic",
	  UNIT_TEST(test_traffic__alloc_labels_zeroes_and_limits),
	  UNIT_TEST(test_traffic__dense_and_sparse_load_the_same),
	  UNIT_TEST(test_traffic__bad_json_names_file_and_path),
	  UNIT_TEST(test_traffic__absurd_dimensions_refused_before_allocating),
	  UNIT_TEST(test_traffic__sums_overflowing_64_bits_are_rejected),
	  UNIT_TEST(test_traffic__nccl_matrix_by_content),
	  UNIT_TEST(test_traffic__writers_round_trip_random_traffic),
	  UNIT_TEST(test_traffic__nccl_writer_rounds_to_16_bytes),
	  UNIT_TEST(test_traffic__write_error_is_eio),
	  UNIT_TEST(test_traffic__stats_match_naive_reference),
	  UNIT_TEST(test_traffic__stats_known_cases),
	  UNIT_TEST(test_traffic__transpose_and_topology_check))
