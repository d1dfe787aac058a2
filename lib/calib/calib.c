/*
 * calib.c - measurement parsing, the alpha-beta least-squares fit and the
 * coordinate search over model terms of `fast calibrate` (see calib.h).
 * Inputs are small text files (tens of lines); everything is linear in
 * their size, and the search costs what its cost function does.
 */
#include "lib/calib/calib.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/base/json.h"

/* Bytes a measured size puts on one link of the fitted tier. */
static double link_bytes(enum fast_calib_kind kind, double size, const struct fast_topo *t,
			 uint32_t ranks)
{
	double n = ranks ? ranks : (double)t->servers * t->gpus;

	if (kind == FAST_CALIB_SENDRECV)
		return size;
	/* all-to-all of `size` per rank: the part for other servers leaves
	 * through the rank's own NIC */
	return n > t->gpus ? size * (n - t->gpus) / n : size * (n - 1) / n;
}

static int add_point(struct fast_calib_points *out, double size, double bytes, double time_us,
		     const char *name, size_t line, struct fast_err *err)
{
	if (out->n >= FAST_CALIB_MAX_POINTS)
		return fast_err_set(err, FAST_ELIMIT, "%s:%zu: more than %d measurements", name, line,
				    FAST_CALIB_MAX_POINTS);
	out->size[out->n] = size;
	out->line[out->n] = line;
	out->bytes[out->n] = bytes;
	out->time_us[out->n] = time_us;
	out->n++;
	return 0;
}

/* nccl-tests table rows: size count type redop root time algbw busbw #wrong ... */
static int parse_nccl(const char *text, size_t len, const char *name, enum fast_calib_kind kind,
		      const struct fast_topo *t, uint32_t ranks, struct fast_calib_points *out,
		      struct fast_err *err)
{
	size_t line = 0;
	const char *p = text, *end = text + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		char buf[512], *f[16], *save = NULL;
		int nf = 0;

		line++;
		if (n >= sizeof buf)
			return fast_err_set(err, FAST_EINPUT, "%s:%zu: line too long", name, line);
		memcpy(buf, p, n);
		buf[n] = '\0';
		p = nl ? nl + 1 : end;
		for (char *tok = strtok_r(buf, " \t\r", &save); tok && nf < 16;
		     tok = strtok_r(NULL, " \t\r", &save))
			f[nf++] = tok;
		if (nf == 0 || f[0][0] == '#')
			continue;
		{
			char *e1, *e2;
			double size = strtod(f[0], &e1), time_us = nf > 5 ? strtod(f[5], &e2) : 0;
			if (nf < 9 || *e1 || *e2)
				return fast_err_set(err, FAST_EINPUT,
						    "%s:%zu: not an nccl-tests result row (expected: size count type redop root time algbw busbw #wrong ...)",
						    name, line);
			/* numbers that strtod reads but no measurement has
			 * ("inf", "nan", "-1", "1e400") */
			if (!isfinite(size) || size < 0 || size != floor(size) ||
			    size > (double)FAST_JSON_MAX_BYTES)
				return fast_err_set(err, FAST_EINPUT,
						    "%s:%zu: column 1 (size) is '%.40s', expected a "
						    "whole number of bytes",
						    name, line, f[0]);
			if (!isfinite(time_us) || !(time_us > 0))
				return fast_err_set(err, FAST_EINPUT,
						    "%s:%zu: column 6 (time) is '%.40s', expected a "
						    "finite time in us > 0",
						    name, line, f[5]);
			if (size == 0)
				continue;
			if (add_point(out, size, link_bytes(kind, size, t, ranks), time_us, name, line,
				      err) < 0)
				return FAST_ELIMIT;
		}
	}
	return 0;
}

/* A fast run --json row's median time in microseconds: median_s since the
 * outputs' naming convention, median_us before it (either is read). */
static int run_median_us(struct fast_jctx *c, const struct fast_jv *row, double *out)
{
	const char *k = fast_jv_renamed(c, row, "median_s", "median_us");
	double v = 0;
	int rc;

	if (!k)
		return FAST_EINPUT;
	rc = fast_jv_get_double(c, row, k, true, 0, 1e12, true, &v);
	if (rc == 0)
		*out = strcmp(k, "median_s") == 0 ? v * 1e6 : v;
	return rc;
}

static int parse_fastrun(const char *text, size_t len, const char *name,
			 const struct fast_topo *t, struct fast_calib_points *out,
			 struct fast_err *err)
{
	struct fast_json *doc;
	struct fast_jctx c;
	const struct fast_jv *rows;
	uint32_t ranks = 0;
	size_t i = 0;
	int rc;

	if ((rc = fast_json_parse(text, len, name, &doc, err)) < 0)
		return rc;
	fast_jctx_init(&c, name, err);
	rows = fast_jv_get(fast_json_root(doc), "rows");
	if (!rows || fast_jv_type(rows) != FAST_JARRAY) {
		fast_json_free(doc);
		return fast_jctx_fail(&c, FAST_EINPUT, "not `fast run --json` output (no \"rows\" array)");
	}
	rc = fast_jv_get_u32(&c, fast_json_root(doc), "ranks", true, 1, UINT32_MAX, &ranks);
	for (const struct fast_jv *r = fast_jv_first(rows); rc == 0 && r; r = fast_jv_next(r), i++) {
		size_t old = fast_jctx_push_key(&c, "rows");
		uint64_t size = 0;
		double time_us = 0;
		/* fast run wrote size and median_us before the outputs' naming
		 * convention (size_bytes, median_s): either is read */
		const char *sk;
		fast_jctx_push_index(&c, i);
		if (!(sk = fast_jv_renamed(&c, r, "size_bytes", "size")))
			rc = FAST_EINPUT;
		if (rc == 0)
			rc = fast_jv_get_u64(&c, r, sk, true, FAST_JSON_MAX_BYTES, &size);
		if (rc == 0)
			rc = run_median_us(&c, r, &time_us);
		fast_jctx_pop(&c, old);
		if (rc == 0 && size > 0)
			rc = add_point(out, (double)size,
				       link_bytes(FAST_CALIB_FASTRUN, (double)size, t, ranks), time_us,
				       name, i, err);
	}
	fast_json_free(doc);
	return rc;
}

int fast_calib_parse(const char *text, size_t len, const char *name, enum fast_calib_kind kind,
		     const struct fast_topo *t, uint32_t ranks, struct fast_calib_points *out,
		     struct fast_err *err)
{
	int rc;

	out->n = 0;
	rc = kind == FAST_CALIB_FASTRUN ? parse_fastrun(text, len, name, t, out, err)
					: parse_nccl(text, len, name, kind, t, ranks, out, err);
	if (rc < 0)
		return rc;
	if (out->n < 2)
		return fast_err_set(err, FAST_EINPUT, "%s: %zu measurements with a non-zero size: at least 2 are needed for a fit",
				    name, out->n);
	return 0;
}

int fast_calib_fit(const struct fast_calib_points *p, double line_rate_GBps,
		   struct fast_calib_fit *out, struct fast_err *err)
{
	/* Weighted least squares with weights 1 / time^2: minimises relative
	 * errors, so the small sizes (which carry alpha) count as much as the
	 * large ones (which carry the bandwidth); sizes span six decades. */
	double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0, n = (double)p->n, slope, icpt, det;
	double ss_tot = 0, ss_res = 0, mean_y, maxe = 0, sume = 0;

	for (size_t i = 0; i < p->n; i++) {
		double w = 1.0 / (p->time_us[i] * p->time_us[i]);
		sw += w;
		sx += w * p->bytes[i];
		sy += w * p->time_us[i];
		sxx += w * p->bytes[i] * p->bytes[i];
		sxy += w * p->bytes[i] * p->time_us[i];
	}
	det = sw * sxx - sx * sx;
	if (n < 2 || !(det > 0))
		return fast_err_set(err, FAST_EINPUT, "measurements need at least 2 distinct sizes");
	slope = (sw * sxy - sx * sy) / det; /* us per byte */
	icpt = (sy - slope * sx) / sw;
	sy = 0;
	for (size_t i = 0; i < p->n; i++)
		sy += p->time_us[i];
	if (!(slope > 0))
		return fast_err_set(err, FAST_EINPUT,
				    "time does not grow with size in these measurements: no bandwidth to fit");
	mean_y = sy / n;
	for (size_t i = 0; i < p->n; i++) {
		double model = (icpt > 0 ? icpt : 0) + slope * p->bytes[i];
		double e = fabs(model - p->time_us[i]) / p->time_us[i];
		ss_tot += (p->time_us[i] - mean_y) * (p->time_us[i] - mean_y);
		ss_res += (p->time_us[i] - model) * (p->time_us[i] - model);
		maxe = e > maxe ? e : maxe;
		sume += e;
	}
	out->latency_us = icpt > 0 ? icpt : 0;
	out->achieved_GBps = 1.0 / slope / 1e3; /* bytes/us -> GB/s */
	out->efficiency = out->achieved_GBps / line_rate_GBps;
	out->r2 = ss_tot > 0 ? 1 - ss_res / ss_tot : 1;
	out->max_rel_err = maxe;
	out->mean_rel_err = sume / n;
	out->points = p->n;
	return 0;
}

int fast_calib_parse_run(const char *text, size_t len, const char *name,
			 struct fast_calib_run *out, struct fast_err *err)
{
	struct fast_json *doc;
	struct fast_jctx c;
	const struct fast_jv *root, *rows;
	size_t i = 0;
	int rc;

	if ((rc = fast_json_parse(text, len, name, &doc, err)) < 0)
		return rc;
	fast_jctx_init(&c, name, err);
	root = fast_json_root(doc);
	rows = fast_jv_get(root, "rows");
	out->n = 0;
	if (!rows || fast_jv_type(rows) != FAST_JARRAY) {
		fast_json_free(doc);
		return fast_jctx_fail(&c, FAST_EINPUT, "not `fast run --json` output (no \"rows\" array)");
	}
	rc = fast_jv_get_string(&c, root, "algo", true, out->algo, sizeof out->algo);
	if (rc == 0)
		rc = fast_jv_get_string(&c, root, "traffic", true, out->traffic, sizeof out->traffic);
	if (rc == 0 && out->traffic[0] == '\0') {
		fast_jctx_push_key(&c, "traffic");
		rc = fast_jctx_fail(&c, FAST_EINPUT, "names no traffic file: a run without --traffic cannot be simulated");
	}
	for (const struct fast_jv *r = fast_jv_first(rows); rc == 0 && r; r = fast_jv_next(r), i++) {
		size_t old = fast_jctx_push_key(&c, "rows");
		fast_jctx_push_index(&c, i);
		if (out->n >= FAST_CALIB_MAX_ROWS)
			rc = fast_jctx_fail(&c, FAST_ELIMIT, "more than %d rows", FAST_CALIB_MAX_ROWS);
		if (rc == 0)
			rc = fast_jv_get_u32(&c, r, "matrix", true, 0, UINT32_MAX, &out->matrix[out->n]);
		if (rc == 0)
			rc = run_median_us(&c, r, &out->median_us[out->n]);
		fast_jctx_pop(&c, old);
		if (rc == 0)
			out->n++;
	}
	fast_json_free(doc);
	if (rc == 0 && out->n == 0)
		rc = fast_err_set(err, FAST_EINPUT, "%s: no rows", name);
	return rc;
}

/* Element k of the Halton sequence of base b, in [0, 1). */
static double halton(unsigned k, unsigned b)
{
	double f = 1, r = 0;

	for (; k; k /= b) {
		f /= b;
		r += f * (k % b);
	}
	return r;
}

/* Term i of point u (in search space: log for log terms) back to a value. */
static double from_space(const struct fast_calib_term *t, double u)
{
	return t->log && t->lo > 0 ? exp(u) : u;
}

static double to_space(const struct fast_calib_term *t, double v)
{
	return t->log && t->lo > 0 ? log(v) : v;
}

int fast_calib_minimize(const struct fast_calib_term *terms, size_t n, fast_calib_cost_fn cost,
			void *ctx, unsigned max_evals, double *x, double *best, struct fast_err *err)
{
	static const unsigned primes[16] = { 2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53 };
	double lo[16], hi[16], u[16], prev[16], y[16] = { 0 }, step[16], cur;
	unsigned evals = 0;

	if (n > 16)
		return fast_err_set(err, FAST_ELIMIT, "at most 16 terms can be fitted at once (got %zu)", n);
	for (size_t i = 0; i < n; i++) {
		lo[i] = to_space(&terms[i], terms[i].lo);
		hi[i] = to_space(&terms[i], terms[i].hi);
		if (x[i] < terms[i].lo)
			x[i] = terms[i].lo;
		if (x[i] > terms[i].hi)
			x[i] = terms[i].hi;
		u[i] = to_space(&terms[i], x[i]);
		step[i] = (hi[i] - lo[i]) / 4;
	}
#define EVAL(v, out)                                                            \
	do {                                                                    \
		for (size_t j_ = 0; j_ < n; j_++)                               \
			y[j_] = from_space(&terms[j_], (v)[j_]);                \
		(out) = cost(ctx, y);                                           \
		evals++;                                                        \
	} while (0)
	EVAL(u, cur);
	/* a space-filling start (Halton points over the box): a term can be
	 * flat where another is off (a timeout no cell reaches), which
	 * stalls a search along one axis at a time */
	for (unsigned k = 1; k <= 16 * n && evals < max_evals; k++) {
		double v[16], c;
		for (size_t i = 0; i < n; i++)
			v[i] = lo[i] + halton(k, primes[i]) * (hi[i] - lo[i]);
		EVAL(v, c);
		if (c < cur) {
			cur = c;
			memcpy(u, v, n * sizeof *u);
		}
	}
	/* Hooke-Jeeves pattern search: exploratory moves of +-step along each
	 * term (a success doubles that term's step, a failure halves it),
	 * then a pattern move along the last successful sweep's direction,
	 * which follows a valley where terms are coupled */
	memcpy(prev, u, n * sizeof *u);
	while (evals < max_evals) {
		bool moved = false, tiny = true;
		for (size_t i = 0; i < n && evals < max_evals; i++) {
			bool ok = false;
			for (int d = 1; d >= -1 && !ok && evals < max_evals; d -= 2) {
				double v[16], c;
				memcpy(v, u, n * sizeof *u);
				v[i] += d * step[i];
				v[i] = v[i] < lo[i] ? lo[i] : v[i] > hi[i] ? hi[i] : v[i];
				if (v[i] == u[i])
					continue;
				EVAL(v, c);
				if (c < cur) {
					cur = c;
					u[i] = v[i];
					ok = moved = true;
				}
			}
			step[i] = ok ? fmin(2 * step[i], hi[i] - lo[i]) : step[i] / 2;
			if (step[i] > 1e-6 * (hi[i] - lo[i]))
				tiny = false;
		}
		if (moved && evals < max_evals) {
			double v[16], c;
			for (size_t i = 0; i < n; i++) {
				v[i] = 2 * u[i] - prev[i];
				v[i] = v[i] < lo[i] ? lo[i] : v[i] > hi[i] ? hi[i] : v[i];
			}
			memcpy(prev, u, n * sizeof *u);
			EVAL(v, c);
			if (c < cur) {
				cur = c;
				memcpy(u, v, n * sizeof *u);
			}
		}
		if (tiny)
			break;
	}
#undef EVAL
	if (!(cur < HUGE_VAL))
		return fast_err_set(err, FAST_EINPUT, "no value tried in the search ranges gave a feasible model");
	for (size_t i = 0; i < n; i++)
		x[i] = from_space(&terms[i], u[i]);
	*best = cur;
	return 0;
}

int fast_calib_solve(fast_calib_time_fn time, void *ctx, double target, double lo, double hi,
		     double *x, struct fast_err *err)
{
	double a = log(lo), b = log(hi), ta = time(ctx, lo), tb = time(ctx, hi);

	if (ta == HUGE_VAL || tb == HUGE_VAL)
		return fast_err_set(err, FAST_EINPUT, "the simulation of the measured run failed");
	if (tb > target) {
		*x = hi;
		return 1;
	}
	if (ta < target) {
		*x = lo;
		return 1;
	}
	for (int i = 0; i < 200 && b - a > 1e-9; i++) {
		double m = 0.5 * (a + b), tm = time(ctx, exp(m));
		if (tm == HUGE_VAL)
			return fast_err_set(err, FAST_EINPUT, "the simulation of the measured run failed");
		if (tm > target)
			a = m;
		else
			b = m;
	}
	*x = exp(0.5 * (a + b));
	return 0;
}
