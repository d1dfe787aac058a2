/*
 * calib_deepep.c - DeepEP's test logs for `fast calibrate` (calib.h): the
 * output of deepseek-ai/DeepEP's tests/test_intranode.py and
 * tests/test_internode.py (tests/legacy/ in later versions), of which
 * calibration reads the run's settings and its tuned results:
 *
 *   [config] num_tokens=4096, hidden=7168, num_topk=8
 *   [config] num_tokens=4096, hidden=7168, num_topk_groups=4, num_topk=8
 *   [tuning] Best dispatch (BF16): SMs 24, NVL chunk 20, 153.06 GB/s (NVL), t: 701.30 us
 *   [tuning] Best combine: SMs 24, NVL chunk 7: 148.22 GB/s (NVL), t: 724.15 us
 *   [tuning] Best dispatch (FP8): SMs 24, NVL chunk 8, RDMA chunk 16: 25 + 1034 us,
 *            45.12 GB/s (RDMA), 150.11 GB/s (NVL)
 *
 * The test's versions print the kernel's time as "t: X us", "t=Xms",
 * "time: X" (seconds), "avg_t: X us", "transmit: X us" or "N + X us" (the
 * notify kernel's time, then the kernel's), or not at all (then only the
 * bandwidths); mpirun may put "[1,0]<stdout>:" before a line.  Every
 * other line (the per-setting [tuning] lines, the correctness tests) is
 * skipped.  Lines are short and the logs a few hundred of them: one pass.
 */
#include "lib/calib/calib.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The number after `key` in line (strtod), or NAN when key is absent or
 * no number follows it. */
static double after(const char *line, const char *key)
{
	const char *p = strstr(line, key);
	char *end;
	double v;

	if (!p)
		return NAN;
	v = strtod(p + strlen(key), &end);
	return end == p + strlen(key) ? NAN : v;
}

/* The number just before `unit` in line (the last number ending there),
 * or NAN. */
static double before(const char *line, const char *unit)
{
	const char *u = strstr(line, unit), *p;

	if (!u)
		return NAN;
	p = u;
	while (p > line && p[-1] == ' ')
		p--;
	while (p > line && (strchr("0123456789.eE+-", p[-1]) != NULL))
		p--;
	if (p == u)
		return NAN;
	return strtod(p, NULL);
}

/* The kernel's time in us of a Best line, or 0 when it prints none. */
static double kernel_us(const char *line)
{
	double v;
	const char *plus;

	if (!isnan(v = after(line, "transmit: ")) || !isnan(v = after(line, "avg_t: ")) ||
	    !isnan(v = after(line, " t: ")))
		return v;
	if (!isnan(v = after(line, " t=")))
		return v * 1e3; /* ms */
	if (!isnan(v = after(line, "time: ")))
		return v * 1e6; /* s */
	/* "notify + kernel us" */
	if ((plus = strstr(line, " + ")) && strstr(plus, " us"))
		return strtod(plus + 3, NULL);
	return 0;
}

static int parse_config(const char *line, const char *name, size_t ln,
			struct fast_calib_ep_log *out, struct fast_err *err)
{
	double t = after(line, "num_tokens="), h = after(line, "hidden="), k = after(line, "num_topk=");
	double g = after(line, "num_topk_groups=");

	if (!(t >= 1 && t <= 1e9) || !(h >= 1 && h <= 1e7) || !(k >= 1 && k <= 1024))
		return fast_err_set(err, FAST_EINPUT,
				    "%s:%zu: a [config] line without num_tokens, hidden and num_topk "
				    "in range",
				    name, ln);
	out->tokens = (uint32_t)t;
	out->hidden = (uint32_t)h;
	out->topk = (uint32_t)k;
	out->topk_groups = g >= 1 && g <= 1024 ? (uint32_t)g : 0;
	return 0;
}

static int parse_best(const char *line, const char *name, size_t ln, struct fast_calib_ep_log *out,
		      struct fast_err *err)
{
	struct fast_calib_ep_row r;
	double sms = after(line, "SMs "), nvl = before(line, "GB/s (NVL)");

	memset(&r, 0, sizeof r);
	r.kind = strstr(line, "Best dispatch") ? FAST_CALIB_EP_DISPATCH : FAST_CALIB_EP_COMBINE;
	r.fp8 = strstr(line, "(FP8)") != NULL;
	r.line = ln;
	if (!(sms >= 1 && sms <= 100000))
		return fast_err_set(err, FAST_EINPUT, "%s:%zu: a [tuning] Best line without \"SMs N\"",
				    name, ln);
	if (!(nvl > 0) || !isfinite(nvl))
		return fast_err_set(err, FAST_EINPUT,
				    "%s:%zu: a [tuning] Best line without \"X GB/s (NVL)\" (X > 0)", name,
				    ln);
	r.sms = (uint32_t)sms;
	r.nvl_GBps = nvl;
	r.rdma_GBps = before(line, "GB/s (RDMA)");
	if (!(r.rdma_GBps > 0) || !isfinite(r.rdma_GBps))
		r.rdma_GBps = 0;
	r.time_us = kernel_us(line);
	if (!isfinite(r.time_us) || r.time_us < 0 || r.time_us > 1e12)
		return fast_err_set(err, FAST_EINPUT, "%s:%zu: the kernel's time is not a time in us",
				    name, ln);
	if (out->n >= FAST_CALIB_EP_MAX_ROWS)
		return fast_err_set(err, FAST_ELIMIT, "%s:%zu: more than %d Best lines", name, ln,
				    FAST_CALIB_EP_MAX_ROWS);
	out->rows[out->n++] = r;
	return 0;
}

int fast_calib_parse_deepep(const char *text, size_t len, const char *name,
			    struct fast_calib_ep_log *out, struct fast_err *err)
{
	const char *p = text, *end = text + len;
	size_t ln = 0;
	int rc;

	memset(out, 0, sizeof *out);
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		char buf[1024];

		ln++;
		if (n >= sizeof buf)
			return fast_err_set(err, FAST_EINPUT, "%s:%zu: line too long", name, ln);
		memcpy(buf, p, n);
		buf[n] = '\0';
		p = nl ? nl + 1 : end;
		if (strstr(buf, "[config]") && (rc = parse_config(buf, name, ln, out, err)) < 0)
			return rc;
		if ((strstr(buf, "[tuning] Best dispatch") || strstr(buf, "[tuning] Best combine")) &&
		    (rc = parse_best(buf, name, ln, out, err)) < 0)
			return rc;
	}
	if (!out->tokens)
		return fast_err_set(err, FAST_EINPUT,
				    "%s: no \"[config] num_tokens=..., hidden=..., num_topk=...\" line: "
				    "not the output of DeepEP's test_intranode.py or test_internode.py",
				    name);
	if (!out->n)
		return fast_err_set(err, FAST_EINPUT,
				    "%s: no \"[tuning] Best dispatch\" or \"Best combine\" line (a run "
				    "with its benchmarks skipped?)",
				    name);
	return 0;
}

uint64_t fast_calib_ep_token_bytes(const struct fast_calib_ep_log *log, bool fp8)
{
	/* BF16: 2 bytes an element; FP8: 1, and a 4-byte scale per 128 */
	return fp8 ? (uint64_t)log->hidden + (uint64_t)log->hidden / 32 : 2 * (uint64_t)log->hidden;
}
