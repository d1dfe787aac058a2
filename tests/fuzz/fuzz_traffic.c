/*
 * fuzz_traffic.c - libFuzzer target of the traffic reader
 * (fast_traffic_parse): the tool's JSON (dense rows or sparse triples) and
 * the nccl-tests alltoallv matrix text, told apart by content.
 *
 * Any input must give either traffic within the limits or an error with a
 * message.  Traffic that loads goes through the statistics, the transpose
 * (twice: the identity), the JSON writers (dense and sparse: each must read
 * back to the same matrices) and the nccl-tests writer (must read back,
 * rounded up to multiples of 16 bytes).
 */
#define _GNU_SOURCE
#include "fuzz_common.h"

#include "fast/traffic.h"


static void same_matrices(const struct fast_traffic *a, const struct fast_traffic *b,
			  bool labels)
{
	size_t n = (size_t)a->ng * a->ng;

	FUZZ_CHECK(a->ng == b->ng && a->count == b->count);
	for (uint32_t k = 0; k < a->count; k++) {
		FUZZ_CHECK(memcmp(a->m[k].bytes, b->m[k].bytes, n * sizeof *a->m[k].bytes) == 0);
		if (labels)
			FUZZ_CHECK(strcmp(a->m[k].label, b->m[k].label) == 0);
	}
}

static void round_trip(const struct fast_traffic *t, const struct fast_limits *lim, bool sparse)
{
	struct fast_traffic t2;
	struct fast_err err;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int rc;

	FUZZ_CHECK(f != NULL);
	FUZZ_CHECK(fast_traffic_write(t, sparse, f, &err) == 0);
	FUZZ_CHECK(fclose(f) == 0);
	rc = fast_traffic_parse(buf, len, "round-trip.json", lim, &t2, &err);
	if (rc < 0)
		fprintf(stderr, "re-reading the written traffic failed: %s\n", err.msg);
	FUZZ_CHECK(rc == 0);
	same_matrices(t, &t2, true);
	fast_traffic_free(&t2);
	free(buf);
}

static void nccl_round_trip(const struct fast_traffic *t, const struct fast_limits *lim)
{
	struct fast_traffic t2;
	struct fast_err err;
	uint64_t changed = 0;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int rc;

	FUZZ_CHECK(f != NULL);
	FUZZ_CHECK(fast_traffic_write_nccl(t, 0, f, &changed, &err) == 0);
	FUZZ_CHECK(fclose(f) == 0);
	rc = fast_traffic_parse(buf, len, "round-trip.txt", lim, &t2, &err);
	if (rc < 0)
		fprintf(stderr, "re-reading the written nccl matrix failed: %s\n", err.msg);
	FUZZ_CHECK(rc == 0);
	FUZZ_CHECK(t2.ng == t->ng && t2.count == 1);
	for (size_t i = 0; i < (size_t)t->ng * t->ng; i++) {
		uint64_t v = t->m[0].bytes[i], r = t2.m[0].bytes[i];
		FUZZ_CHECK(r >= v && r - v < 16 && r % 16 == 0);
	}
	fast_traffic_free(&t2);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fast_limits lim;
	struct fast_traffic t;
	struct fast_err err;
	char *text = fuzz_text(data, size);
	int rc;

	if (!text)
		return 0;
	fuzz_limits(&lim);
	memset(&err, 0x55, sizeof err);
	rc = fast_traffic_parse(text, size, "traffic.json", &lim, &t, &err);
	free(text);
	if (rc < 0) {
		FUZZ_CHECK_ERR(rc, err);
		return 0;
	}
	FUZZ_CHECK(t.ng >= 1 && t.ng <= lim.max_gpus);
	FUZZ_CHECK(t.count >= 1 && t.count <= lim.max_matrices);
	for (uint32_t k = 0; k < t.count; k++) {
		struct fast_traffic_stats st;
		uint32_t g = t.ng % 8 == 0 ? 8 : 1;
		fast_traffic_stats(t.m[k].bytes, t.ng, g, &st);
		FUZZ_CHECK(st.local + st.intra + st.inter == st.total);
		FUZZ_CHECK(fast_matrix_transpose(t.m[k].bytes, t.ng, &err) == 0);
		FUZZ_CHECK(fast_matrix_transpose(t.m[k].bytes, t.ng, &err) == 0);
	}
	round_trip(&t, &lim, false);
	round_trip(&t, &lim, true);
	nccl_round_trip(&t, &lim);
	fast_traffic_free(&t);
	fast_traffic_free(&t);
	return 0;
}
