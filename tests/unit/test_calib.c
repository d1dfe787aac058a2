/*
 * test_calib.c - the alpha-beta fit of `fast calibrate`: exact recovery on
 * noise-free measurements, link-byte accounting per input kind, errors.
 */
#include <CUnit/Basic.h>

#include "unit.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lib/calib.h"

static struct fast_topo h200(void)
{
	struct fast_topo t;
	struct fast_limits lim;
	struct fast_err err;
	fast_limits_default(&lim);
	fast_topo_preset("h200", 4, 8, &lim, &t, &err);
	return t;
}

/* nccl-tests style rows for time = alpha + size / bw */
static size_t rows(char *buf, size_t cap, double alpha_us, double gbps)
{
	size_t n = (size_t)snprintf(buf, cap, "#       size         count      type   redop    root     time   algbw   busbw #wrong\n");
	for (double size = 1024; size <= (double)(1u << 30); size *= 4)
		n += (size_t)snprintf(buf + n, cap - n, "%12.0f %12.0f float sum -1 %.6f 0 0 0\n", size,
				      size / 4, alpha_us + size / (gbps * 1e3));
	return n;
}

static void test_calib__recovers_alpha_and_bandwidth(void)
{
	static char buf[8192];
	static struct fast_calib_points p;
	struct fast_calib_fit f;
	struct fast_err err;
	struct fast_topo t = h200();
	size_t n = rows(buf, sizeof buf, 12.5, 40.0);

	CU_ASSERT_EQUAL_FATAL(fast_calib_parse(buf, n, "x.txt", FAST_CALIB_SENDRECV, &t, 0, &p, &err), 0);
	CU_ASSERT_EQUAL(p.n, 11);
	CU_ASSERT_EQUAL_FATAL(fast_calib_fit(&p, 50.0, &f, &err), 0);
	CU_ASSERT_DOUBLE_EQUAL(f.latency_us, 12.5, 1e-3);
	CU_ASSERT_DOUBLE_EQUAL(f.achieved_GBps, 40.0, 1e-3);
	CU_ASSERT_DOUBLE_EQUAL(f.efficiency, 0.8, 1e-5);
	CU_ASSERT(f.max_rel_err < 1e-6);
	CU_ASSERT(f.r2 > 0.999999);
}

static void test_calib__alltoall_counts_bytes_leaving_the_server(void)
{
	static char buf[8192];
	static struct fast_calib_points p;
	struct fast_err err;
	struct fast_topo t = h200(); /* 32 ranks, 8 per server: 24/32 of size leaves */
	size_t n = rows(buf, sizeof buf, 10, 40.0);

	CU_ASSERT_EQUAL_FATAL(fast_calib_parse(buf, n, "a.txt", FAST_CALIB_ALLTOALL, &t, 0, &p, &err), 0);
	CU_ASSERT_DOUBLE_EQUAL(p.bytes[0], 1024.0 * 24 / 32, 1e-9);
	CU_ASSERT_EQUAL_FATAL(fast_calib_parse(buf, n, "a.txt", FAST_CALIB_ALLTOALL, &t, 16, &p, &err), 0);
	CU_ASSERT_DOUBLE_EQUAL(p.bytes[0], 1024.0 * 8 / 16, 1e-9);
}

static void test_calib__errors_name_file_and_line(void)
{
	static struct fast_calib_points p;
	struct fast_calib_fit f;
	struct fast_err err;
	struct fast_topo t = h200();
	const char *bad = "# header\n1024 256 float sum -1 oops 0 0 0\n";
	const char *one = "1024 256 float sum -1 5.0 0 0 0\n";
	const char *flat = "1024 256 float sum -1 5.0 0 0 0\n4096 1024 float sum -1 4.0 0 0 0\n";

	CU_ASSERT_EQUAL(fast_calib_parse(bad, strlen(bad), "m.txt", FAST_CALIB_SENDRECV, &t, 0, &p, &err),
			FAST_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "m.txt:2:"));
	CU_ASSERT_EQUAL(fast_calib_parse(one, strlen(one), "m.txt", FAST_CALIB_SENDRECV, &t, 0, &p, &err),
			FAST_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "at least 2"));
	CU_ASSERT_EQUAL_FATAL(fast_calib_parse(flat, strlen(flat), "m.txt", FAST_CALIB_SENDRECV, &t, 0, &p, &err), 0);
	CU_ASSERT_EQUAL(fast_calib_fit(&p, 50, &f, &err), FAST_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "does not grow"));
}

static void test_calib__fast_run_json(void)
{
	static struct fast_calib_points p;
	struct fast_err err;
	struct fast_topo t = h200();
	const char *js = "{\"ranks\": 32, \"rows\": [{\"size\": 1000, \"median_us\": 20.0},"
			 " {\"size\": 4000, \"median_us\": 30.0}]}";

	CU_ASSERT_EQUAL_FATAL(fast_calib_parse(js, strlen(js), "r.json", FAST_CALIB_FASTRUN, &t, 0, &p, &err), 0);
	CU_ASSERT_EQUAL(p.n, 2);
	CU_ASSERT_DOUBLE_EQUAL(p.bytes[1], 3000.0, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(p.time_us[1], 30.0, 1e-12);
	CU_ASSERT_EQUAL(fast_calib_parse("{}", 2, "r.json", FAST_CALIB_FASTRUN, &t, 0, &p, &err), FAST_EINPUT);

	/* today's names (size_bytes, median_s in seconds) give the same points */
	const char *now = "{\"ranks\": 32, \"rows\": [{\"size_bytes\": 1000, \"median_s\": 20e-6},"
			  " {\"size_bytes\": 4000, \"median_s\": 30e-6}]}";
	CU_ASSERT_EQUAL_FATAL(fast_calib_parse(now, strlen(now), "r.json", FAST_CALIB_FASTRUN, &t, 0, &p, &err), 0);
	CU_ASSERT_EQUAL(p.n, 2);
	CU_ASSERT_DOUBLE_EQUAL(p.bytes[1], 3000.0, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(p.time_us[1], 30.0, 1e-9);
}

UNIT_MAIN("calib",
	  UNIT_TEST(test_calib__recovers_alpha_and_bandwidth),
	  UNIT_TEST(test_calib__alltoall_counts_bytes_leaving_the_server),
	  UNIT_TEST(test_calib__errors_name_file_and_line),
	  UNIT_TEST(test_calib__fast_run_json))
