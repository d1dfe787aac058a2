/*
 * test_calib.c - the alpha-beta fit of `fast calibrate`: exact recovery on
 * noise-free measurements, link-byte accounting per input kind, errors;
 * the coordinate search over model terms recovering known parameters of a
 * synthetic model, and the `fast run --json` reader it is fed from;
 * DeepEP's test logs in every version's format, and the solve of one term
 * against a measured time.
 */
#include <CUnit/Basic.h>

#include "unit.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lib/calib/calib.h"

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

/* A synthetic collective model with known terms: cell i takes
 * base_i x oversub + steps_i x step_us (the shape the core's share and the
 * per-step cost give a simulated time), plus a timeout term: cells whose
 * senders exceed rto_senders pay rto_us (piecewise, as the simulator's). */
struct synth {
	size_t n;
	double base[8], steps[8], senders[8], meas[8];
	unsigned evals;
};

static double synth_time(const struct synth *s, size_t i, const double *x)
{
	double t = s->base[i] * x[0] + s->steps[i] * x[1];
	if (s->senders[i] >= x[3])
		t += x[2];
	return t;
}

static double synth_cost(void *ctx, const double *x)
{
	struct synth *s = ctx;
	double sum = 0;
	s->evals++;
	for (size_t i = 0; i < s->n; i++) {
		double e = (synth_time(s, i, x) - s->meas[i]) / s->meas[i];
		sum += e * e;
	}
	return sum;
}

static void test_calib__search_recovers_known_terms(void)
{
	static const double truth[4] = { 1.7, 300.0, 200000.0, 6.0 };
	struct synth s = { .n = 8 };
	struct fast_calib_term terms[4] = {
		{ "/scale_out/core_oversubscription", 1, 8, true },
		{ "/scale_out/step_overhead_us", 0, 2000, false },
		{ "/congestion/rto_us", 0, 1000000, false },
		{ "/congestion/rto_senders", 0, 16, false },
	};
	double x[4] = { 1, 0, 0, 16 }, best = -1;
	struct fast_err err;

	for (size_t i = 0; i < s.n; i++) {
		s.base[i] = 1e5 * (double)(1 + i % 3);
		s.steps[i] = (double)(10 * (1 + 7 * (i % 2) + i));
		s.senders[i] = (double)(1 + 2 * i); /* 1, 3, ..., 15: the step at 6 shows */
		s.meas[i] = synth_time(&s, i, truth);
	}
	CU_ASSERT_EQUAL_FATAL(fast_calib_minimize(terms, 4, synth_cost, &s, 2000, x, &best, &err), 0);
	CU_ASSERT(best < 1e-6);
	CU_ASSERT_DOUBLE_EQUAL(x[0], truth[0], 0.01 * truth[0]);
	CU_ASSERT_DOUBLE_EQUAL(x[1], truth[1], 0.01 * truth[1]);
	CU_ASSERT_DOUBLE_EQUAL(x[2], truth[2], 0.01 * truth[2]);
	CU_ASSERT(x[3] > 5 && x[3] <= 7); /* any threshold between the cells */
	CU_ASSERT(s.evals <= 2000);
	/* the start is clamped into the box */
	x[0] = 100;
	CU_ASSERT_EQUAL(fast_calib_minimize(terms, 1, synth_cost, &s, 1, x, &best, &err), 0);
	CU_ASSERT(x[0] <= 8);
}

static double infeasible(void *ctx, const double *x)
{
	(void)ctx;
	(void)x;
	return HUGE_VAL;
}

static void test_calib__search_infeasible(void)
{
	struct fast_calib_term t = { "/scale_out/step_overhead_us", 0, 1, false };
	double x = 0, best;
	struct fast_err err;
	CU_ASSERT_EQUAL(fast_calib_minimize(&t, 1, infeasible, NULL, 2, &x, &best, &err), FAST_EINPUT);
}

static void test_calib__parse_run(void)
{
	static struct fast_calib_run run;
	struct fast_err err;
	const char *js = "{\"ranks\": 16, \"algo\": \"fanout\", \"traffic\": \"t.json\", \"rows\": ["
			 "{\"matrix\": 0, \"median_us\": 100.5}, {\"matrix\": 2, \"median_us\": 90}]}";
	const char *none = "{\"algo\": \"fast\", \"traffic\": \"\", \"rows\": []}";
	const char *bad = "{\"algo\": \"fast\", \"traffic\": \"t\", \"rows\": [{\"matrix\": 0}]}";

	CU_ASSERT_EQUAL_FATAL(fast_calib_parse_run(js, strlen(js), "r.json", &run, &err), 0);
	CU_ASSERT_STRING_EQUAL(run.algo, "fanout");
	CU_ASSERT_STRING_EQUAL(run.traffic, "t.json");
	CU_ASSERT_EQUAL(run.n, 2);
	CU_ASSERT_EQUAL(run.matrix[1], 2);
	CU_ASSERT_DOUBLE_EQUAL(run.median_us[0], 100.5, 1e-12);
	{
		/* what fast run --json writes now: median_s, in seconds */
		const char *now = "{\"ranks\": 16, \"algo\": \"fast\", \"traffic\": \"t.json\", \"rows\": ["
				  "{\"matrix\": 0, \"median_s\": 0.0001005}]}";
		CU_ASSERT_EQUAL_FATAL(fast_calib_parse_run(now, strlen(now), "r.json", &run, &err), 0);
		CU_ASSERT_DOUBLE_EQUAL(run.median_us[0], 100.5, 1e-9);
	}
	CU_ASSERT_EQUAL(fast_calib_parse_run(none, strlen(none), "r.json", &run, &err), FAST_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no traffic file"));
	CU_ASSERT_EQUAL(fast_calib_parse_run(bad, strlen(bad), "r.json", &run, &err), FAST_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "/rows/0"));
}

/* One Best line of each version of DeepEP's tests (their print statements'
 * formats, 2025-02 to 2026-04), the kernel's time from each. */
static void test_calib__deepep_every_format(void)
{
	static const struct {
		const char *line;
		int kind;
		bool fp8;
		double us, nvl, rdma;
	} cases[] = {
		{ "[tuning] Best dispatch (BF16): SMs 24, NVL chunk 16, 165.00 GB/s (NVL), t: 1897.83 us",
		  FAST_CALIB_EP_DISPATCH, false, 1897.83, 165.0, 0 },
		{ "[tuning] Best combine: SMs 24, NVL chunk 6: 170.00 GB/s (NVL), t: 1842.01 us",
		  FAST_CALIB_EP_COMBINE, false, 1842.01, 170.0, 0 },
		{ "[tuning] Best dispatch (FP8): SMs 24, NVL chunk 8, 153.06 GB/s (NVL) t=0.7013ms",
		  FAST_CALIB_EP_DISPATCH, true, 701.3, 153.06, 0 },
		{ "[tuning] Best combine (BF16): SMs 24, NVL chunk 4: 150.0 GB/s (NVL), time: 0.002",
		  FAST_CALIB_EP_COMBINE, false, 2000, 150.0, 0 },
		{ "[tuning] Best dispatch (FP8): SMs 24, NVL chunk 20, RDMA chunk 32: 4.47 GB/s (RDMA), 9.00 GB/s (NVL)",
		  FAST_CALIB_EP_DISPATCH, true, 0, 9.0, 4.47 },
		{ "[tuning] Best dispatch (BF16): SMs 24, NVL chunk 24, RDMA chunk 16: 41 + 2709 us, 43.19 GB/s (RDMA), 141.95 GB/s (NVL)",
		  FAST_CALIB_EP_DISPATCH, false, 2709, 141.95, 43.19 },
		{ "[tuning] Best combine: SMs 24, NVL chunk 2, RDMA chunk 20, 40.50 + 2721.17 us, 43.00 GB/s (RDMA), 141.31 GB/s (NVL)",
		  FAST_CALIB_EP_COMBINE, false, 2721.17, 141.31, 43.0 },
		{ "[1,0]<stdout>:[tuning] Best dispatch (BF16): SMs 24, NVL chunk 40, RDMA chunk 4, transmit: 6881.00 us, notify: 160.81 us, BW: 30.80 GB/s (RDMA), 61.85 GB/s (NVL)",
		  FAST_CALIB_EP_DISPATCH, false, 6881, 61.85, 30.8 },
	};
	static struct fast_calib_ep_log log;
	struct fast_err err = { 0 };
	char text[512];

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const struct fast_calib_ep_row *r = &log.rows[0];
		int n = snprintf(text, sizeof text,
				 "[config] num_tokens=4096, hidden=7168, num_topk_groups=2, num_topk=8\n"
				 "[tuning] SMs 24, NVL chunk 4: 150.70 GB/s (NVL), 1071.44 us\n%s\n",
				 cases[i].line);
		CU_ASSERT_EQUAL_FATAL(fast_calib_parse_deepep(text, (size_t)n, "l.log", &log, &err), 0);
		CU_ASSERT_EQUAL(log.n, 1);
		CU_ASSERT_EQUAL(log.tokens, 4096);
		CU_ASSERT_EQUAL(log.hidden, 7168);
		CU_ASSERT_EQUAL(log.topk, 8);
		CU_ASSERT_EQUAL(log.topk_groups, 2);
		CU_ASSERT_EQUAL((int)r->kind, cases[i].kind);
		CU_ASSERT_EQUAL(r->fp8, cases[i].fp8);
		CU_ASSERT_EQUAL(r->sms, 24);
		CU_ASSERT_EQUAL(r->line, 3);
		CU_ASSERT_DOUBLE_EQUAL(r->time_us, cases[i].us, 1e-6);
		CU_ASSERT_DOUBLE_EQUAL(r->nvl_GBps, cases[i].nvl, 1e-9);
		CU_ASSERT_DOUBLE_EQUAL(r->rdma_GBps, cases[i].rdma, 1e-9);
	}
	/* BF16: 2 bytes an element; FP8: 1 and a 4-byte scale per 128 */
	CU_ASSERT_EQUAL(fast_calib_ep_token_bytes(&log, false), 14336);
	CU_ASSERT_EQUAL(fast_calib_ep_token_bytes(&log, true), 7392);
}

/* time(x) = 100 + 1000 / x us: the x of a target, and the two ends. */
static double falling(void *ctx, double x)
{
	(void)ctx;
	return 100 + 1000 / x;
}

static void test_calib__solve_one_term(void)
{
	struct fast_err err = { 0 };
	double x;

	CU_ASSERT_EQUAL(fast_calib_solve(falling, NULL, 300, 0.01, 1e4, &x, &err), 0);
	CU_ASSERT_DOUBLE_EQUAL(x, 5, 5e-8);
	/* faster than any x gives: the upper end */
	CU_ASSERT_EQUAL(fast_calib_solve(falling, NULL, 99, 0.01, 1e4, &x, &err), 1);
	CU_ASSERT_EQUAL(x, 1e4);
	/* slower than any: the lower end */
	CU_ASSERT_EQUAL(fast_calib_solve(falling, NULL, 1e9, 0.01, 1e4, &x, &err), 1);
	CU_ASSERT_EQUAL(x, 0.01);
}

UNIT_MAIN("calib",
	  UNIT_TEST(test_calib__recovers_alpha_and_bandwidth),
	  UNIT_TEST(test_calib__alltoall_counts_bytes_leaving_the_server),
	  UNIT_TEST(test_calib__errors_name_file_and_line),
	  UNIT_TEST(test_calib__fast_run_json),
	  UNIT_TEST(test_calib__search_recovers_known_terms),
	  UNIT_TEST(test_calib__search_infeasible),
	  UNIT_TEST(test_calib__parse_run),
	  UNIT_TEST(test_calib__deepep_every_format),
	  UNIT_TEST(test_calib__solve_one_term))
