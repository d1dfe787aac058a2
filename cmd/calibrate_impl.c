/*
 * calibrate_impl.c - `fast calibrate`'s fits of how schedules'
 * implementations run (calibrate_impl.h): each term is decided by one
 * measured run, simulated on the topology with candidate values until the
 * simulation takes the measured time (fast_calib_solve: the simulator is
 * the model, so what is fitted reproduces the run by construction, and
 * every other run is a check of the model).
 *
 *   --up-alltoall T   one server's alltoall_perf: the NCCL schedules' (nccl,
 *                     pxn, fanout) scale-up engine from its bandwidth (a
 *                     line through size x (G - 1) / G per GPU against time),
 *                     and their cost per call (call_us) from its small rows;
 *   --out-alltoall T  the cluster's: what their calls cost more when they
 *                     cross servers (call_out_us), from its small rows, or
 *                     without --up-alltoall their call_us (its bandwidth fits
 *                     the scale-out tier, as before: calibrate.c);
 *   --deepep-intranode L, --deepep-internode L  hier's: calibrate_deepep.c.
 * A table's rows are simulated as nccl-tests runs them: NCCL's alltoall
 * posts a rank's n - 1 sends in one group, so nccl's plan with all n - 1
 * peers in flight (`fast sim --algo nccl --peers N-1`).  The call cost of
 * a table is the median, over its rows that take at most twice its
 * fastest row's time (latency-bound), of the measured time less the
 * simulated one without it.
 *
 * Workload: a few tables and logs; each solve is at most ~60 simulations
 * of one collective on the user's cluster (milliseconds at 4 x 8).
 */
#include "calibrate_impl.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fast/algo.h"
#include "fast/sim.h"
#include "lib/base/json.h"

/* The schedules NCCL (RCCL) implements, whose entries alltoall_perf fits. */
static const char *const nccl_scheds[] = { "nccl", "pxn", "fanout", NULL };
#define NCCL_SCHEDS "nccl,pxn,fanout"
/* SMs an NCCL engine gets when its entry has none: NCCL's most channels
 * (MAXCHANNELS), an SM each -- only their product with the rate counts. */
#define NCCL_SMS 32u

struct fast_impl *calib_entry(struct fast_topo *t, const char *sched)
{
	return (struct fast_impl *)fast_topo_impl(t, sched);
}

/* --- simulating a measured run ---------------------------------------------- */


int calib_case_compile(struct sim_case *c, const char *algo, const struct fast_topo *t,
			const struct fast_matrix *m, struct fast_err *err)
{
	struct fast_algo_opts ao;

	fast_algo_opts_default(&ao);
	c->t = t;
	c->m = m;
	if (fast_compile(algo, t, m, &ao, &c->p, err) < 0)
		return FAST_EINPUT;
	c->compiled = true;
	return 0;
}

void calib_case_free(struct sim_case *c)
{
	if (c->compiled)
		fast_plan_free(&c->p);
	c->compiled = false;
}

/* The simulated time in us, or HUGE_VAL when the simulation fails. */
double calib_case_us(const struct sim_case *c)
{
	struct fast_sim_opts so;
	struct fast_plan_view v;
	struct fast_sim_result r;
	struct fast_err err;
	double us;
	int rc;

	fast_sim_opts_default(&so);
	so.traffic = c->m->bytes;
	rc = fast_plan_view_open(&v, &c->p, c->p.kind == FAST_TRAFFIC_BYTES ? NULL : c->m, &err);
	if (rc == 0) {
		rc = fast_sim_run(c->t, &v, &so, &r, &err);
		fast_plan_view_close(&v);
	}
	if (rc < 0)
		return HUGE_VAL;
	us = r.time_s * 1e6;
	fast_sim_result_free(&r);
	return us;
}

/* A term at *slot set to x before each simulation of c. */
struct term_ctx {
	const struct sim_case *c;
	double *slot;
};

static double term_us(void *ctx, double x)
{
	struct term_ctx *k = ctx;

	*k->slot = x;
	return calib_case_us(k->c);
}

/* Solve *slot in [lo, hi] so that c takes target_us; 1 (and a warning
 * naming what) when no value in the range reaches it, 0, or an exit
 * status after printing. */
int calib_solve(const struct sim_case *c, double *slot, double lo, double hi, double target_us,
		 const char *what)
{
	struct term_ctx k = { c, slot };
	struct fast_err err;
	double x;
	int rc = fast_calib_solve(term_us, &k, target_us, lo, hi, &x, &err);

	if (rc < 0) {
		fast_err_prefix(&err, "%s", what);
		return cli_report(&err);
	}
	*slot = x;
	if (rc == 1)
		cli_warn("%s: the measured %.2f us is %s than the model gives with any value in [%g, %g]",
			 what, target_us, x == hi ? "faster" : "slower", lo, hi);
	return rc == 1 ? -2 : 0; /* -2: at a bound */
}

void calib_add_run(struct calib_impl_out *out, const char *src, size_t line, const char *what,
		    uint32_t sms, double measured, double sim, bool fit)
{
	struct calib_run *r;

	if (out->nruns >= CALIB_RUNS_MAX)
		return;
	r = &out->runs[out->nruns++];
	r->src = src;
	r->line = line;
	snprintf(r->what, sizeof r->what, "%s", what);
	r->sms = sms;
	r->measured_us = measured;
	r->sim_us = sim;
	r->fit = fit;
}

void calib_add_term(struct calib_impl_out *out, const char *scheds, const char *term,
		     const char *from, const char *fmt, ...)
{
	struct calib_term *t;
	va_list ap;

	if (out->nterms >= sizeof out->terms / sizeof out->terms[0])
		return;
	t = &out->terms[out->nterms++];
	snprintf(t->scheds, sizeof t->scheds, "%s", scheds);
	snprintf(t->term, sizeof t->term, "%s", term);
	snprintf(t->from, sizeof t->from, "%s", from);
	va_start(ap, fmt);
	vsnprintf(t->value, sizeof t->value, fmt, ap);
	va_end(ap);
}

/* t with only server 0: the topology of a run on one server.  0 or an exit
 * status. */
int calib_one_server(const struct fast_topo *t, struct fast_topo *t1, const struct fast_limits *lim)
{
	struct fast_err err;
	uint32_t k = 0;

	*t1 = *t;
	t1->servers = 1;
	for (uint32_t i = 0; i < t->noverrides; i++)
		if (t->nic_override[i].server == 0)
			t1->nic_override[k++] = t->nic_override[i];
	t1->noverrides = k;
	if (fast_topo_validate(t1, lim, &err) < 0) {
		fast_err_prefix(&err, "the topology's server 0 alone");
		return cli_report(&err);
	}
	return 0;
}

bool calib_impl_wanted(const struct calib_impl_in *in)
{
	return in->up_alltoall || in->out_alltoall || in->ep_intra || in->ep_inter;
}

/* --- alltoall_perf tables -------------------------------------------------- */

/* A table's rows as points of a run of `ranks` ranks on t (0: all of t's);
 * 0 or an exit status. */
static int a2a_load(const char *path, const struct fast_topo *t, uint32_t ranks,
		    struct fast_calib_points *pts, const struct fast_limits *lim)
{
	struct fast_err err;
	char *text;
	size_t len;
	int rc;

	cli_input(path);
	if (fast_read_file(path, lim->max_file_bytes, &text, &len, &err) < 0)
		return cli_report(&err);
	rc = fast_calib_parse(text, len, path, FAST_CALIB_ALLTOALL, t, ranks, pts, &err);
	free(text);
	return rc < 0 ? cli_report(&err) : 0;
}

/* The NCCL schedules' scale-up engine from one server's table: the rate a
 * line through (size x (G - 1) / G per GPU, time) gives, as an SM engine
 * (the entry's SMs, or NCCL_SMS), or the link where it reaches the link's
 * rate. */
static int a2a_engine(const struct calib_impl_in *in, struct fast_topo *topo,
		      struct calib_impl_out *out)
{
	static struct fast_calib_points pts;
	struct fast_topo t1;
	struct fast_calib_fit fit;
	struct fast_err err;
	double link = fast_tier_Bps(&topo->up) / 1e9, cap;
	char from[96];
	uint32_t sms = NCCL_SMS;
	int rc;

	if (topo->up_kind == FAST_UP_MESH && topo->gpus > 1)
		link *= topo->gpus - 1; /* a GPU's links together */
	if ((rc = calib_one_server(topo, &t1, in->lim)) != 0 ||
	    (rc = a2a_load(in->up_alltoall, &t1, 0, &pts, in->lim)) != 0)
		return rc;
	if (fast_calib_fit(&pts, t1.up.bw_GBps, &fit, &err) < 0) {
		fast_err_prefix(&err, "%s", in->up_alltoall);
		return cli_report(&err);
	}
	cap = fit.achieved_GBps;
	snprintf(from, sizeof from, "%s: %zu rows, R^2 %.5f", in->up_alltoall, fit.points, fit.r2);
	for (size_t i = 0; nccl_scheds[i]; i++) {
		struct fast_impl *m = calib_entry(topo, nccl_scheds[i]);
		if (m->engine == FAST_ENGINE_SM)
			sms = m->sms;
	}
	for (size_t i = 0; nccl_scheds[i]; i++) {
		struct fast_impl *m = calib_entry(topo, nccl_scheds[i]);
		m->engine = cap >= link ? FAST_ENGINE_LINK : FAST_ENGINE_SM;
		m->sms = cap >= link ? 0 : sms;
		m->engine_GBps = cap >= link ? 0 : cap / sms;
	}
	if (cap >= link)
		calib_add_term(out, NCCL_SCHEDS, "up_engine", from, "link (%.2f >= %.2f GB/s)", cap, link);
	else
		calib_add_term(out, NCCL_SCHEDS, "up_engine", from, "sm %u x %.4g GB/s", sms, cap / sms);
	return 0;
}

/* n x n uniform alltoall of `size` bytes a rank (size / n to each peer,
 * the own chunk on the diagonal), into D. */
static void uniform(uint64_t *D, uint32_t n, double size)
{
	uint64_t each = (uint64_t)(size / n);

	for (size_t i = 0; i < (size_t)n * n; i++)
		D[i] = each;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The run of a table's ranks on topo: the cluster's (--out-alltoall:
 * --ranks, or N x G) or one server's.  0, or an exit status; *skip when
 * the ranks do not fill whole servers (the table is then not simulated,
 * with a warning). */
static int a2a_run_topo(const struct calib_impl_in *in, bool cluster, const struct fast_topo *topo,
			struct fast_topo *tr, uint32_t *n, bool *skip)
{
	struct fast_err err;
	uint32_t k = 0;

	*skip = false;
	if (!cluster) {
		*n = topo->gpus;
		return calib_one_server(topo, tr, in->lim);
	}
	*n = in->ranks ? in->ranks : fast_topo_ngpus(topo);
	if (*n % topo->gpus) {
		cli_warn("%s: %u ranks do not fill servers of %u GPUs: its runs are not simulated",
			 in->out_alltoall, *n, topo->gpus);
		*skip = true;
		return 0;
	}
	*tr = *topo;
	tr->servers = *n / topo->gpus;
	for (uint32_t i = 0; i < topo->noverrides; i++)
		if (topo->nic_override[i].server < tr->servers)
			tr->nic_override[k++] = topo->nic_override[i];
	tr->noverrides = k;
	if (fast_topo_validate(tr, in->lim, &err) < 0) {
		fast_err_prefix(&err, "%s: the topology of its %u ranks", in->out_alltoall, *n);
		return cli_report(&err);
	}
	return 0;
}

/* One table's runs: its rows on the topology of its ranks, each simulated
 * as nccl-tests runs them -- NCCL's alltoall, every rank's n - 1 sends
 * posted in one group, so nccl's plan with all n - 1 peers in flight -- on
 * the table's topology as it is now, into sim[] (us). */
struct a2a_table {
	const char *path;
	struct fast_calib_points pts;
	struct fast_topo t;
	uint32_t n;
	double sim[FAST_CALIB_MAX_POINTS];
};

static int a2a_simulate(struct a2a_table *tb)
{
	uint64_t *D = calloc((size_t)tb->n * tb->n, sizeof *D);
	struct fast_algo_opts ao;
	int rc = 0;

	if (!D)
		return cli_fail(FAST_ENOMEM, "out of memory");
	fast_algo_opts_default(&ao);
	ao.peers = tb->n > 1 ? tb->n - 1 : 1;
	for (size_t i = 0; i < tb->pts.n && rc == 0; i++) {
		struct sim_case c = { 0 };
		struct fast_matrix m = fast_matrix_of(D, tb->n);
		struct fast_err err;
		uniform(D, tb->n, tb->pts.size[i]);
		c.t = &tb->t;
		c.m = &m;
		if (fast_compile("nccl", &tb->t, &m, &ao, &c.p, &err) < 0) {
			rc = cli_report(&err);
			break;
		}
		c.compiled = true;
		tb->sim[i] = calib_case_us(&c);
		calib_case_free(&c);
		if (tb->sim[i] == HUGE_VAL)
			rc = cli_fail(FAST_EINPUT, "%s:%zu: the simulation of the row failed", tb->path,
				      tb->pts.line[i]);
	}
	free(D);
	return rc;
}

/* Table `cluster` (--out-alltoall) or one server's (--up-alltoall) loaded
 * into tb on topo as it is now; 0, an exit status, or -1 when skipped. */
static int a2a_table_load(const struct calib_impl_in *in, bool cluster, const struct fast_topo *topo,
			  struct a2a_table *tb)
{
	bool skip;
	int rc;

	tb->path = cluster ? in->out_alltoall : in->up_alltoall;
	if ((rc = a2a_run_topo(in, cluster, topo, &tb->t, &tb->n, &skip)) != 0)
		return rc;
	if (skip)
		return -1;
	return a2a_load(tb->path, &tb->t, tb->n, &tb->pts, in->lim);
}

/* The fastest row of tb; a row within twice its time is latency-bound. */
static double a2a_fastest(const struct a2a_table *tb)
{
	double fastest = HUGE_VAL;

	for (size_t i = 0; i < tb->pts.n; i++)
		fastest = tb->pts.time_us[i] < fastest ? tb->pts.time_us[i] : fastest;
	return fastest;
}

/* The median of measured - simulated over a table's latency-bound rows,
 * simulated without the NCCL schedules' cost per call (*n: those rows).
 * 0, an exit status, or -1 when the table is skipped. */
static int a2a_residual(const struct calib_impl_in *in, bool cluster, const struct fast_topo *topo,
			double *res_us, size_t *n)
{
	static struct a2a_table tb;
	static double res[FAST_CALIB_MAX_POINTS];
	double fastest;
	int rc;

	if ((rc = a2a_table_load(in, cluster, topo, &tb)) != 0)
		return rc;
	for (size_t i = 0; nccl_scheds[i]; i++)
		calib_entry(&tb.t, nccl_scheds[i])->call_us = calib_entry(&tb.t, nccl_scheds[i])->call_out_us = 0;
	if ((rc = a2a_simulate(&tb)) != 0)
		return rc;
	fastest = a2a_fastest(&tb);
	*n = 0;
	for (size_t i = 0; i < tb.pts.n; i++)
		if (tb.pts.time_us[i] <= 2 * fastest)
			res[(*n)++] = tb.pts.time_us[i] - tb.sim[i];
	qsort(res, *n, sizeof *res, cmp_double);
	*res_us = *n % 2 ? res[*n / 2] : 0.5 * (res[*n / 2 - 1] + res[*n / 2]);
	return 0;
}

/* The NCCL schedules' cost per call: from one server's table call_us,
 * and from the cluster's what its calls cost more (call_out_us); from the
 * cluster's alone, call_us. */
static int a2a_call(const struct calib_impl_in *in, struct fast_topo *topo,
		    struct calib_impl_out *out)
{
	double in_us = 0, out_us = 0, call, more = 0;
	size_t n_in = 0, n_out = 0;
	char from[96];
	int rc;

	if (in->up_alltoall && (rc = a2a_residual(in, false, topo, &in_us, &n_in)) > 0)
		return rc;
	if (in->out_alltoall && (rc = a2a_residual(in, true, topo, &out_us, &n_out)) > 0)
		return rc;
	if (!n_in && !n_out)
		return 0;
	call = n_in ? in_us : out_us;
	if (n_in && n_out)
		more = out_us - in_us;
	call = call > 0 ? call : 0;
	more = more > 0 ? more : 0;
	for (size_t i = 0; nccl_scheds[i]; i++) {
		calib_entry(topo, nccl_scheds[i])->call_us = call;
		if (n_out)
			calib_entry(topo, nccl_scheds[i])->call_out_us = more;
	}
	snprintf(from, sizeof from, "%s: median of %zu small rows",
		 n_in ? in->up_alltoall : in->out_alltoall, n_in ? n_in : n_out);
	calib_add_term(out, NCCL_SCHEDS, "call_us", from, "%.2f", call);
	if (n_in && n_out) {
		snprintf(from, sizeof from, "%s: median of %zu small rows, less call_us",
			 in->out_alltoall, n_out);
		calib_add_term(out, NCCL_SCHEDS, "call_out_us", from, "%.2f", more);
	}
	return 0;
}

/* Every row of the tables given, simulated on the fitted topology: the
 * call cost's rows are "fit", the others checks. */
static int a2a_report(const struct calib_impl_in *in, const struct fast_topo *topo,
		      struct calib_impl_out *out)
{
	static struct a2a_table tb;
	int rc;

	for (int cluster = 0; cluster < 2; cluster++) {
		double fastest;
		if (!(cluster ? in->out_alltoall : in->up_alltoall))
			continue;
		if ((rc = a2a_table_load(in, cluster, topo, &tb)) != 0) {
			if (rc < 0)
				continue;
			return rc;
		}
		if ((rc = a2a_simulate(&tb)) != 0)
			return rc;
		fastest = a2a_fastest(&tb);
		for (size_t i = 0; i < tb.pts.n; i++) {
			char what[48];
			snprintf(what, sizeof what, "alltoall %ux %.0f B", tb.n, tb.pts.size[i]);
			calib_add_run(out, tb.path, tb.pts.line[i], what, 0, tb.pts.time_us[i], tb.sim[i],
				tb.pts.time_us[i] <= 2 * fastest);
		}
	}
	return 0;
}

int calib_impl_fit(const struct calib_impl_in *in, struct fast_topo *topo,
		   struct calib_impl_out *out)
{
	int rc;

	memset(out, 0, sizeof *out);
	if (in->up_alltoall && (rc = a2a_engine(in, topo, out)) != 0)
		return rc;
	if ((in->up_alltoall || in->out_alltoall) &&
	    ((rc = a2a_call(in, topo, out)) != 0 || (rc = a2a_report(in, topo, out)) != 0))
		return rc;
	if (in->up_alltoall || in->out_alltoall) {
		size_t l = strlen(topo->impl_source);
		snprintf(topo->impl_source + l, sizeof topo->impl_source - l,
			 "%s" NCCL_SCHEDS " fitted by fast calibrate to alltoall_perf", l ? "; " : "");
	}
	if ((in->ep_intra || in->ep_inter) && (rc = calib_deepep_fit(in, topo, out)) != 0)
		return rc;
	return 0;
}

void calib_impl_print(const struct calib_impl_out *out, bool json)
{
	if (json) {
		printf("\"implementation\": [");
		for (size_t i = 0; i < out->nterms; i++) {
			const struct calib_term *t = &out->terms[i];
			printf("%s{\"schedules\": \"%s\", \"term\": \"%s\", \"value\": ", i ? ", " : "",
			       t->scheds, t->term);
			fast_json_put_string(stdout, t->value);
			printf(", \"from\": ");
			fast_json_put_string(stdout, t->from);
			putchar('}');
		}
		printf("], \"runs\": [");
		for (size_t i = 0; i < out->nruns; i++) {
			const struct calib_run *r = &out->runs[i];
			printf("%s{\"file\": ", i ? ", " : "");
			fast_json_put_string(stdout, r->src);
			printf(", \"line\": %zu, \"run\": ", r->line);
			fast_json_put_string(stdout, r->what);
			printf(", \"sms\": %u, \"measured_us\": %.2f, \"sim_us\": %.2f, \"rel_err\": %.4f, "
			       "\"role\": \"%s\"}",
			       r->sms, r->measured_us, r->sim_us,
			       (r->sim_us - r->measured_us) / r->measured_us, r->fit ? "fit" : "check");
		}
		printf("], ");
		return;
	}
	printf("schedules         term                   value                  from\n");
	for (size_t i = 0; i < out->nterms; i++) {
		const struct calib_term *t = &out->terms[i];
		printf("%-17s %-22s %-22s %s\n", t->scheds, t->term, t->value, t->from);
	}
	printf("role   run                     SMs  measured (us)     sim (us)    error  from\n");
	for (size_t i = 0; i < out->nruns; i++) {
		const struct calib_run *r = &out->runs[i];
		char sms[16] = "-";
		if (r->sms)
			snprintf(sms, sizeof sms, "%u", r->sms);
		printf("%-6s %-22s %4s %14.2f %12.2f %+7.2f%%  %s:%zu\n", r->fit ? "fit" : "check",
		       r->what, sms, r->measured_us, r->sim_us,
		       100 * (r->sim_us - r->measured_us) / r->measured_us, r->src, r->line);
	}
}
