/*
 * calibrate.c - `fast calibrate`: fit a topology's per-tier latency and
 * efficiency to measurements (nccl-tests sendrecv_perf / alltoall_perf
 * output, `fast run --json` output), then the model terms a sweep cannot
 * show (per-step costs, the core's share, the loss/timeout regime) to
 * timed collectives by simulating them, and write the fitted topology.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "calibrate_impl.h"
#include "cli.h"
#include "fast/algo.h"
#include "lib/calib/calib.h"
#include "lib/base/json.h"
#include "sim_common.h"

const char cmd_calibrate_usage[] =
	"fast calibrate (--topo FILE | --preset NAME [--servers N] [--gpus G])\n"
	"               [--up-sendrecv FILE] [--out-sendrecv FILE]\n"
	"               [--up-alltoall FILE] [--out-alltoall FILE [--ranks N]]\n"
	"               [--deepep-intranode LOG] [--deepep-internode LOG]\n"
	"               [--experts E] [--fast-run FILE]\n"
	"               [[--run-topo FILE] --fit-run FILE]... [--check-run FILE]...\n"
	"               [--fit PATH[=LO:HI]]... [--sync step|rank]\n"
	"               [--json] [-o FITTED.json]\n"
	"\n"
	"Fit each tier's latency (alpha) and efficiency to your own measurements\n"
	"with the simulator's model, time = alpha + bytes / (line rate x\n"
	"efficiency), by least squares, and write the topology with the fitted\n"
	"values (line rates stay as given: throughput alone cannot tell line rate\n"
	"from efficiency).  The fit report (points, alpha, achieved bandwidth,\n"
	"efficiency, R^2, mean and max relative error) goes to stdout.\n"
	"\n"
	"  --up-sendrecv FILE   nccl-tests sendrecv_perf between two GPUs of one\n"
	"                       server: fits the scale-up tier\n"
	"  --out-sendrecv FILE  sendrecv_perf between GPUs of two servers: fits\n"
	"                       the scale-out tier (one NIC per direction)\n"
	"  --out-alltoall FILE  alltoall_perf over the cluster: fits scale-out's\n"
	"                       efficiency, with size x (n - G) / n bytes leaving\n"
	"                       each NIC, and from its small rows what the calls of\n"
	"                       the schedules NCCL implements (nccl, pxn, fanout)\n"
	"                       cost more when they cross servers (implementation\n"
	"                       call_out_us; call_us without --up-alltoall);\n"
	"                       scale-out alpha then comes from --out-sendrecv, or\n"
	"                       stays\n"
	"  --ranks N            ranks of that alltoall_perf run (default: N x G)\n"
	"  --up-alltoall FILE   alltoall_perf on one server: the scale-up engine of\n"
	"                       nccl, pxn and fanout (their SMs' rate, from size x\n"
	"                       (G - 1) / G per GPU), and their cost per call\n"
	"                       (call_us) from its small rows; a table's rows are\n"
	"                       simulated as nccl with all n - 1 peers in flight\n"
	"  --deepep-intranode LOG  DeepEP's tests/test_intranode.py output: hier's\n"
	"                       scale-up engine (the logged SMs, their rate fitted\n"
	"                       to the dispatch)\n"
	"  --deepep-internode LOG  tests/test_internode.py output (a run on the\n"
	"                       topology's servers): hier's scale-out rate\n"
	"                       (out_GBps, fitted to the dispatch) and reduction\n"
	"                       rate (reduce_GBps, to the combine)\n"
	"  --experts E          experts of the DeepEP runs (default 256, the tests');\n"
	"                       each run is regenerated as `fast gen --pattern moe\n"
	"                       --token-groups --seed 1` with the logged tokens,\n"
	"                       hidden and top-k, and simulated as hier; every fit\n"
	"                       solves the simulated time = the logged one, and\n"
	"                       every run is reported with its error\n"
	"  --fast-run FILE      `fast run --json` output of a uniform traffic:\n"
	"                       fits scale-out like alltoall_perf (median times)\n"
	"  --fit-run FILE       `fast run --json` output of a collective (any\n"
	"                       algorithm, its --traffic file still in place):\n"
	"                       after the sweeps' fit, the --fit terms are searched\n"
	"                       (Halton start, then pattern search; at most 400\n"
	"                       simulations of the cells) to minimise the squared\n"
	"                       relative error of the simulated time against\n"
	"                       the median of each cell's rows (a cell: one algorithm\n"
	"                       on one matrix; identical matrices pool their rows;\n"
	"                       algo mpi is simulated as fanout, the plan of Open\n"
	"                       MPI's basic linear alltoallv)\n"
	"  --check-run FILE     the same, reported but not fitted (validation)\n"
	"  --run-topo FILE      the topology the following runs were given: their\n"
	"                       plans are compiled on it, as `fast run` did (FAST's\n"
	"                       stages depend on the per-step cost); default: the\n"
	"                       topology being fitted, before the fit\n"
	"  --fit PATH[=LO:HI]   a term to fit, by its topology JSON path, and its\n"
	"                       search range (default with --fit-run:\n"
	"                       /scale_out/step_overhead_us and\n"
	"                       /scale_out/core_oversubscription); known ranges:\n"
	"                       step_overhead_us and latency_us 0:20000,\n"
	"                       core_oversubscription 1:8, efficiency 0.2:1,\n"
	"                       incast_slope 0:0.25, incast_floor 0.1:1,\n"
	"                       rto_us 0:2000000, rto_senders 0:64, rto_count 1:4\n"
	"  --sync step|rank     how the runs are simulated (fast sim --sync): step,\n"
	"                       the plan format's barrier per step, or rank, each\n"
	"                       GPU running its own waves as fast run does\n"
	"                       (default: as the topology's implementation of each\n"
	"                       schedule says); the fitted topology's source names\n"
	"                       rank\n"
	"  -o FILE              fitted topology (default: not written)\n"
	"  --json               the fit report as JSON\n"
	"\n"
	"Exit: 0 ok, 2 usage, 3 bad input, 4 write failure.\n";

struct source {
	const char *path;
	enum fast_calib_kind kind;
	int tier; /* 0 up, 1 out */
};

static int load_points(const struct source *s, const struct fast_topo *t, uint32_t ranks,
		       struct fast_calib_points *pts, const struct fast_limits *lim)
{
	struct fast_err err;
	struct fast_calib_points one;
	char *text;
	size_t len;

	cli_input(s->path);
	if (fast_read_file(s->path, lim->max_file_bytes, &text, &len, &err) < 0)
		return cli_report(&err);
	if (fast_calib_parse(text, len, s->path, s->kind, t, ranks, &one, &err) < 0) {
		free(text);
		return cli_report(&err);
	}
	free(text);
	for (size_t i = 0; i < one.n && pts->n < FAST_CALIB_MAX_POINTS; i++) {
		pts->size[pts->n] = one.size[i];
		pts->line[pts->n] = one.line[i];
		pts->bytes[pts->n] = one.bytes[i];
		pts->time_us[pts->n] = one.time_us[i];
		pts->n++;
	}
	return 0;
}

/* --- fitting terms on whole collectives ---------------------------------- */

#define MAX_RUNS 512
#define MAX_CELLS 256

/* One cell: an algorithm on one matrix, its measured samples and plan. */
struct cell {
	const char *algo;   /* as measured ("mpi" included) */
	const char *traffic;
	const char *plan_topo; /* the plan was compiled on it (NULL: the base) */
	uint32_t matrix;
	bool check;         /* validation: reported, not fitted */
	uint64_t *D;        /* owned */
	struct fast_plan plan;
	size_t n;
	double us[FAST_CALIB_MAX_ROWS];
	double median_us, q1_us, q3_us, sim_us;
};

struct fitctx {
	struct fast_topo *topo;
	const struct fast_calib_term *terms;
	double *slot[16];
	size_t nterms;
	struct cell *cells;
	size_t ncells;
	const struct fast_limits *lim;
	enum fast_sim_sync sync;
};

/* Inclusive quartile q (0..4) of sorted v (Python's statistics.quantiles
 * method "inclusive", the one tests/testbed/ reports with). */
static double quartile(const double *v, size_t n, int q)
{
	double pos = (double)(n - 1) * q / 4.0;
	size_t i = (size_t)pos;
	double f = pos - (double)i;

	return i + 1 < n ? v[i] + f * (v[i + 1] - v[i]) : v[n - 1];
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Simulate every cell at the topology's current values; the cost is the
 * sum of squared relative errors over the fitting cells. */
static double fit_cost(void *vctx, const double *x)
{
	struct fitctx *c = vctx;
	struct fast_err err;
	double sum = 0;

	for (size_t i = 0; i < c->nterms; i++)
		*c->slot[i] = x[i];
	if (fast_topo_validate(c->topo, c->lim, &err) < 0)
		return HUGE_VAL;
	for (size_t k = 0; k < c->ncells; k++) {
		struct cell *e = &c->cells[k];
		struct fast_sim_opts so;
		struct fast_sim_result r;
		struct fast_plan_view v;
		double rel;
		int rc;
		fast_sim_opts_default(&so);
		so.traffic = e->D;
		so.sync = c->sync;
		if ((rc = fast_plan_view_open(&v, &e->plan, NULL, &err)) == 0) {
			rc = fast_sim_run(c->topo, &v, &so, &r, &err);
			fast_plan_view_close(&v);
		}
		if (rc < 0)
			return HUGE_VAL;
		e->sim_us = r.time_s * 1e6;
		fast_sim_result_free(&r);
		rel = (e->sim_us - e->median_us) / e->median_us;
		if (!e->check)
			sum += rel * rel;
	}
	return sum;
}

static const struct fast_calib_term known_terms[] = {
	{ "/scale_up/step_overhead_us", 0, 20000, false },
	{ "/scale_out/step_overhead_us", 0, 20000, false },
	{ "/scale_up/latency_us", 0, 20000, false },
	{ "/scale_out/latency_us", 0, 20000, false },
	{ "/scale_out/core_oversubscription", 1, 8, true },
	{ "/scale_up/efficiency", 0.2, 1, false },
	{ "/scale_out/efficiency", 0.2, 1, false },
	{ "/congestion/incast_slope", 0, 0.25, false },
	{ "/congestion/incast_floor", 0.1, 1, false },
	{ "/congestion/incast_threshold", 0, 32, false },
	{ "/congestion/rto_us", 0, 2000000, false },
	{ "/congestion/rto_senders", 0, 64, false },
	{ "/congestion/rto_count", 1, 4, false },
};

/* --fit PATH[=LO:HI] into *t (path points into arg). 0, or an exit status. */
static int parse_term(char *arg, struct fast_calib_term *t)
{
	char *eq = strchr(arg, '=');
	char *end;

	if (eq)
		*eq = '\0';
	t->path = arg;
	t->log = false;
	t->lo = t->hi = NAN;
	for (size_t i = 0; i < sizeof known_terms / sizeof known_terms[0]; i++)
		if (strcmp(known_terms[i].path, arg) == 0)
			*t = known_terms[i];
	if (eq) {
		t->lo = strtod(eq + 1, &end);
		if (*end != ':' || end == eq + 1)
			return cli_usage_error("calibrate", "--fit %s=%s: the range is LO:HI", arg, eq + 1);
		t->hi = strtod(end + 1, &end);
		if (*end || !(t->hi > t->lo))
			return cli_usage_error("calibrate", "--fit %s: the range needs LO < HI", arg);
		t->log = false;
	}
	if (isnan(t->lo))
		return cli_usage_error("calibrate", "--fit %s: no default search range for this term: give %s=LO:HI",
				       arg, arg);
	return 0;
}

/* Load the runs into cells (plans compiled on topo as it is now). */
static int load_cells(const char *const *paths, const bool *check, const char *const *ptopo,
		      int nruns, const struct fast_topo *topo, const struct cli_inputs *in,
		      struct cell *cells, size_t *ncells)
{
	static struct fast_calib_run run;
	struct fast_algo_opts ao;
	struct fast_err err;
	uint32_t ng = fast_topo_ngpus(topo);
	int rc = 0;

	*ncells = 0;
	for (int f = 0; f < nruns; f++) {
		struct fast_traffic tr;
		struct fast_topo pt = *topo;
		char *text;
		size_t len;

		if (ptopo[f]) {
			cli_input(ptopo[f]);
			if (fast_topo_load(ptopo[f], &in->lim, &pt, &err) < 0)
				return cli_report(&err);
			if (pt.servers != topo->servers || pt.gpus != topo->gpus) {
				fast_err_set(&err, FAST_EINPUT, "%s: %u x %u GPUs, the fitted topology %u x %u",
					     ptopo[f], pt.servers, pt.gpus, topo->servers, topo->gpus);
				return cli_report(&err);
			}
		}
		cli_input(paths[f]);
		if (fast_read_file(paths[f], in->lim.max_file_bytes, &text, &len, &err) < 0)
			return cli_report(&err);
		rc = fast_calib_parse_run(text, len, paths[f], &run, &err);
		free(text);
		if (rc < 0)
			return cli_report(&err);
		cli_input(run.traffic);
		if (fast_traffic_load(run.traffic, &in->lim, &tr, &err) < 0) {
			fast_err_prefix(&err, "%s: its traffic", paths[f]);
			return cli_report(&err);
		}
		if (tr.ng != ng) {
			fast_traffic_free(&tr);
			fast_err_set(&err, FAST_EINPUT, "%s: its traffic %s has %u GPUs, the topology %u",
				     paths[f], run.traffic, tr.ng, ng);
			return cli_report(&err);
		}
		for (size_t i = 0; i < run.n && rc == 0; i++) {
			const uint64_t *D;
			struct cell *e = NULL;
			if (run.matrix[i] >= tr.count) {
				fast_err_set(&err, FAST_EINPUT, "%s: /rows/%zu: matrix %u, but %s has %u",
					     paths[f], i, run.matrix[i], run.traffic, tr.count);
				rc = cli_report(&err);
				break;
			}
			D = tr.m[run.matrix[i]].bytes;
			for (size_t k = 0; k < *ncells && !e; k++)
				if (cells[k].check == check[f] && strcmp(cells[k].algo, run.algo) == 0 &&
				    (cells[k].plan_topo == ptopo[f] ||
				     (cells[k].plan_topo && ptopo[f] && strcmp(cells[k].plan_topo, ptopo[f]) == 0)) &&
				    memcmp(cells[k].D, D, (size_t)ng * ng * sizeof *D) == 0)
					e = &cells[k];
			if (!e) {
				const char *algo = strcmp(run.algo, "mpi") == 0 ? "fanout" : run.algo;
				if (*ncells >= MAX_CELLS) {
					fast_err_set(&err, FAST_ELIMIT, "more than %d cells", MAX_CELLS);
					rc = cli_report(&err);
					break;
				}
				e = &cells[(*ncells)++];
				memset(e, 0, sizeof *e);
				e->algo = strdup(run.algo);
				e->traffic = strdup(run.traffic);
				e->matrix = run.matrix[i];
				e->check = check[f];
				e->plan_topo = ptopo[f];
				e->D = malloc((size_t)ng * ng * sizeof *D);
				if (!e->algo || !e->traffic || !e->D) {
					fast_err_set(&err, FAST_ENOMEM, "out of memory");
					rc = cli_report(&err);
					break;
				}
				memcpy(e->D, D, (size_t)ng * ng * sizeof *D);
				fast_algo_opts_default(&ao);
				struct fast_matrix mx = fast_matrix_of(e->D, fast_topo_ngpus(&pt));
				if (fast_compile(algo, &pt, &mx, &ao, &e->plan, &err) < 0) {
					fast_err_prefix(&err, "%s: %s", paths[f], run.algo);
					rc = cli_report(&err);
					break;
				}
			}
			if (e->n < FAST_CALIB_MAX_ROWS)
				e->us[e->n++] = run.median_us[i];
		}
		fast_traffic_free(&tr);
		if (rc)
			return rc;
	}
	for (size_t k = 0; k < *ncells; k++) {
		struct cell *e = &cells[k];
		qsort(e->us, e->n, sizeof *e->us, cmp_double);
		e->median_us = quartile(e->us, e->n, 2);
		e->q1_us = quartile(e->us, e->n, 1);
		e->q3_us = quartile(e->us, e->n, 3);
	}
	return 0;
}

static void free_cells(struct cell *cells, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		free((char *)cells[k].algo);
		free((char *)cells[k].traffic);
		free(cells[k].D);
		fast_plan_free(&cells[k].plan);
	}
}

/* The fit's part of --json: terms, costs and cells, then a comma. */
static void print_fit_json(const struct fast_calib_term *terms, size_t nterms, struct fast_topo *topo,
			   const struct cell *cells, size_t ncells, double cost0, double cost)
{
	printf("\"terms\": [");
	for (size_t i = 0; i < nterms; i++) {
		printf("%s{\"path\": ", i ? ", " : "");
		fast_json_put_string(stdout, terms[i].path);
		printf(", \"value\": ");
		fast_json_put_double(stdout, *fast_topo_field(topo, terms[i].path, NULL, NULL));
		printf(", \"lo\": %g, \"hi\": %g}", terms[i].lo, terms[i].hi);
	}
	printf("], \"cost_before\": %.6g, \"cost\": %.6g, \"cells\": [", cost0, cost);
	for (size_t k = 0; k < ncells; k++) {
		const struct cell *e = &cells[k];
		printf("%s{\"role\": \"%s\", \"algo\": ", k ? ", " : "", e->check ? "check" : "fit");
		fast_json_put_string(stdout, e->algo);
		printf(", \"traffic\": ");
		fast_json_put_string(stdout, e->traffic);
		printf(", \"matrix\": %u, \"samples\": %zu, \"median_us\": %.1f, \"q1_us\": %.1f, "
		       "\"q3_us\": %.1f, \"sim_us\": %.1f, \"rel_err\": %.4f}",
		       e->matrix, e->n, e->median_us, e->q1_us, e->q3_us, e->sim_us,
		       (e->sim_us - e->median_us) / e->median_us);
	}
	printf("], ");
}

/* What the command line asks for. */
struct calib_args {
	struct cli_inputs in;
	struct source src[8];
	int nsrc, nruns;
	const char *runs[MAX_RUNS];
	bool check[MAX_RUNS];
	const char *ptopo[MAX_RUNS];
	struct fast_calib_term terms[16];
	char term_text[16][128];
	size_t nterms;
	uint32_t ranks;
	enum fast_sim_sync sync;
	struct calib_impl_in impl; /* the implementations' measurements */
};

/* What the fits found: per tier (0 scale-up, 1 scale-out) the line fit,
 * and the collective fit's cells and costs. */
struct calib_result {
	struct fast_calib_fit fit[2];
	double line0[2]; /* the line rates before the fit */
	bool have[2], clamped[2];
	struct cell cells[MAX_CELLS];
	size_t ncells;
	double cost0, cost;
	struct calib_impl_out impl;
};

/* One --fit-run or --check-run file (after --run-topo, if any). */
static int add_run(struct calib_args *a, const char *path, bool chk, const char *run_topo)
{
	if (a->nruns >= MAX_RUNS)
		return cli_usage_error("calibrate", "more than %d --fit-run/--check-run files", MAX_RUNS);
	a->check[a->nruns] = chk;
	a->ptopo[a->nruns] = run_topo;
	a->runs[a->nruns++] = path;
	return -1;
}

/* One --fit term. */
static int add_term(struct calib_args *a, const char *v)
{
	int rc;

	if (a->nterms >= 16)
		return cli_usage_error("calibrate", "at most 16 --fit terms");
	if (strlen(v) >= sizeof a->term_text[0])
		return cli_usage_error("calibrate", "--fit %.40s...: too long", v);
	/* the term keeps pointing into its text: no allocation */
	snprintf(a->term_text[a->nterms], sizeof a->term_text[0], "%s", v);
	if ((rc = parse_term(a->term_text[a->nterms], &a->terms[a->nterms])) != 0)
		return rc;
	a->nterms++;
	return -1;
}

/* The options into a: -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, struct calib_args *a)
{
	static const struct {
		const char *opt;
		enum fast_calib_kind kind;
		int tier;
	} sources[] = {
		{ "--up-sendrecv", FAST_CALIB_SENDRECV, 0 },
		{ "--out-sendrecv", FAST_CALIB_SENDRECV, 1 },
		{ "--out-alltoall", FAST_CALIB_ALLTOALL, 1 },
		{ "--fast-run", FAST_CALIB_FASTRUN, 1 },
	};
	const char *run_topo = NULL, *v;
	struct cli_scan s;
	int rc;

	cli_inputs_init(&a->in);
	a->nsrc = a->nruns = 0;
	a->nterms = 0;
	a->ranks = 0;
	a->sync = FAST_SIM_SYNC_IMPL;
	memset(&a->impl, 0, sizeof a->impl);
	a->impl.experts = 256;
	for (cli_begin(&s, argc, argv, "calibrate"); cli_more(&s);) {
		bool took = false;
		if (cli_inputs_option(&s, &a->in) || cli_u32(&s, "--ranks", 2, 1u << 30, &a->ranks) ||
		    simc_sync_option(&s, &a->sync) ||
		    cli_u32(&s, "--experts", 1, 1u << 20, &a->impl.experts) ||
		    cli_value(&s, "--up-alltoall", &a->impl.up_alltoall) ||
		    cli_value(&s, "--deepep-intranode", &a->impl.ep_intra) ||
		    cli_value(&s, "--deepep-internode", &a->impl.ep_inter))
			continue;
		for (size_t i = 0; i < sizeof sources / sizeof *sources && !took; i++)
			if (a->nsrc < 8 && cli_value(&s, sources[i].opt, &v)) {
				a->src[a->nsrc++] = (struct source){ v, sources[i].kind, sources[i].tier };
				took = true;
			}
		if (took)
			continue;
		rc = -1;
		if (cli_value(&s, "--fit-run", &v))
			rc = add_run(a, v, false, run_topo);
		else if (cli_value(&s, "--check-run", &v))
			rc = add_run(a, v, true, run_topo);
		else if (cli_value(&s, "--run-topo", &v))
			run_topo = v;
		else if (cli_value(&s, "--fit", &v))
			rc = add_term(a, v);
		else
			return cli_unknown(&s);
		if (rc >= 0)
			return rc;
	}
	if ((rc = cli_end(&s, false)) >= 0)
		return rc;
	for (int i = 0; i < a->nsrc; i++)
		if (a->src[i].kind == FAST_CALIB_ALLTOALL)
			a->impl.out_alltoall = a->src[i].path;
	a->impl.ranks = a->ranks;
	a->impl.lim = &a->in.lim;
	if (a->nsrc == 0 && a->nruns == 0 && !calib_impl_wanted(&a->impl))
		return cli_usage_error("calibrate",
				       "no measurements: give --up-sendrecv, --out-sendrecv, --up-alltoall, "
				       "--out-alltoall, --deepep-intranode, --deepep-internode, --fast-run "
				       "or --fit-run");
	if (a->nterms && a->nruns == 0)
		return cli_usage_error("calibrate", "--fit needs --fit-run measurements");
	if (a->nruns && a->nterms == 0) {
		a->terms[a->nterms++] = known_terms[1];
		a->terms[a->nterms++] = known_terms[4];
	}
	return -1;
}

/* The per-tier line fits of the sweeps into topo's latency and
 * efficiency (a fit above the line rate raises it); 0 or the exit status. */
/* A tier's latency where its points include an alltoall: the intercept of
 * an alltoall is mostly its call's fixed cost (calibrate_impl.c fits it),
 * not one message's latency, so alpha comes from the tier's other points
 * (a sendrecv sweep, fast run rows) when there are two or more, else it
 * stays as the topology has it. */
static double tier_alpha(const struct fast_calib_points *p2p, double line_rate, double alpha,
			 double fitted, bool a2a)
{
	struct fast_calib_fit f;
	struct fast_err err;

	if (!a2a)
		return fitted;
	return p2p->n >= 2 && fast_calib_fit(p2p, line_rate, &f, &err) == 0 ? f.latency_us : alpha;
}

static int fit_tiers(const struct calib_args *a, struct fast_topo *topo, struct calib_result *r)
{
	static struct fast_calib_points pts[2], p2p[2];
	bool a2a[2] = { false, false };
	int rc;

	pts[0].n = pts[1].n = p2p[0].n = p2p[1].n = 0;
	for (int i = 0; i < a->nsrc; i++) {
		int k = a->src[i].tier;
		if ((rc = load_points(&a->src[i], topo, a->ranks, &pts[k], &a->in.lim)) != 0)
			return rc;
		if (a->src[i].kind == FAST_CALIB_ALLTOALL)
			a2a[k] = true;
		else if ((rc = load_points(&a->src[i], topo, a->ranks, &p2p[k], &a->in.lim)) != 0)
			return rc;
	}
	for (int k = 0; k < 2; k++) {
		struct fast_err err;
		struct fast_tier *tier = k ? &topo->out : &topo->up;
		struct fast_calib_fit *fit = &r->fit[k];
		if (pts[k].n == 0)
			continue;
		if (fast_calib_fit(&pts[k], tier->bw_GBps, fit, &err) < 0) {
			fast_err_prefix(&err, "%s tier", k ? "scale-out" : "scale-up");
			return cli_report(&err);
		}
		r->have[k] = true;
		r->line0[k] = tier->bw_GBps;
		tier->latency_us = fit->latency_us = tier_alpha(&p2p[k], tier->bw_GBps, tier->latency_us,
								fit->latency_us, a2a[k]);
		if (fit->efficiency > 1) {
			cli_warn("%s: measured %.2f GB/s is above the line rate %.2f GB/s: line rate raised to it, efficiency 1",
				 k ? "scale-out" : "scale-up", fit->achieved_GBps, tier->bw_GBps);
			tier->bw_GBps = fit->achieved_GBps;
			tier->efficiency = 1;
			r->clamped[k] = true;
		} else {
			tier->efficiency = fit->efficiency;
		}
	}
	return 0;
}

/* The --fit terms searched on the timed collectives' cells, the best
 * point left in topo and the cells' sim_us; 0 or the exit status (the
 * cells loaded are in r either way). */
static int fit_runs(struct calib_args *a, struct fast_topo *topo, struct calib_result *r)
{
	struct fast_err err;
	struct fitctx fc;
	double x[16];
	bool any_fit = false;
	int rc;

	if ((rc = load_cells(a->runs, a->check, a->ptopo, a->nruns, topo, &a->in, r->cells,
			     &r->ncells)) != 0)
		return rc;
	for (size_t k = 0; k < r->ncells; k++)
		any_fit |= !r->cells[k].check;
	fc = (struct fitctx){ topo, a->terms, { 0 }, a->nterms, r->cells, r->ncells, &a->in.lim, a->sync };
	for (size_t i = 0; i < a->nterms; i++) {
		fc.slot[i] = fast_topo_field(topo, a->terms[i].path, NULL, NULL);
		x[i] = *fc.slot[i];
	}
	r->cost0 = fit_cost(&fc, x);
	if (any_fit && fast_calib_minimize(a->terms, a->nterms, fit_cost, &fc, 400, x, &r->cost,
					   &err) < 0)
		return cli_report(&err);
	r->cost = fit_cost(&fc, x); /* leaves the best point in topo and sim_us */
	return 0;
}

/* The topology's source says what was fitted. */
static void note_source(const struct calib_args *a, struct fast_topo *topo)
{
	if (a->nsrc)
		snprintf(topo->source + strlen(topo->source), sizeof topo->source - strlen(topo->source),
			 "%s", "; latency and efficiency fitted by fast calibrate");
	for (size_t i = 0; i < a->nterms && a->nruns; i++) {
		size_t l = strlen(topo->source);
		snprintf(topo->source + l, sizeof topo->source - l, "%s%s", i ? ", " :
			 a->sync == FAST_SIM_SYNC_RANK ? "; fitted on collectives (--sync rank): " :
							 "; fitted on collectives: ",
			 a->terms[i].path);
	}
}

static void print_json(const struct calib_args *a, struct fast_topo *topo,
		       const struct calib_result *r)
{
	printf("{");
	if (a->nruns && a->sync != FAST_SIM_SYNC_IMPL)
		printf("\"sync\": \"%s\", ", simc_sync_name(a->sync));
	if (a->nruns)
		print_fit_json(a->terms, a->nterms, topo, r->cells, r->ncells, r->cost0, r->cost);
	if (calib_impl_wanted(&a->impl))
		calib_impl_print(&r->impl, true);
	printf("\"tiers\": [");
	for (int k = 0, first = 1; k < 2; k++) {
		const struct fast_calib_fit *fit = &r->fit[k];
		if (!r->have[k])
			continue;
		const struct fast_tier *tier = k ? &topo->out : &topo->up;
		/* efficiency and line_GBps: what the topology gets;
		 * fitted_efficiency: achieved / the given line rate */
		printf("%s{\"tier\": \"%s\", \"points\": %zu, \"latency_us\": %.4f, "
		       "\"achieved_GBps\": %.4f, \"line_GBps\": %.4f, \"efficiency\": %.4f, "
		       "\"fitted_efficiency\": %.4f, \"clamped\": %s, \"r2\": %.6f, "
		       "\"mean_rel_err\": %.6f, \"max_rel_err\": %.6f}",
		       first ? "" : ", ", k ? "out" : "up", fit->points, fit->latency_us,
		       fit->achieved_GBps, tier->bw_GBps, tier->efficiency,
		       fit->efficiency, r->clamped[k] ? "true" : "false", fit->r2,
		       fit->mean_rel_err, fit->max_rel_err);
		first = 0;
	}
	printf("]}\n");
}

/* The collective fit as a table: the terms, the cost, the cells. */
static void print_runs_table(const struct calib_args *a, struct fast_topo *topo,
			     const struct calib_result *r)
{
	printf("term                                    value     search range\n");
	for (size_t i = 0; i < a->nterms; i++)
		printf("%-34s %12.6g     [%g, %g]%s\n", a->terms[i].path,
		       *fast_topo_field(topo, a->terms[i].path, NULL, NULL), a->terms[i].lo,
		       a->terms[i].hi, a->terms[i].log ? " log" : "");
	printf("sum of squared relative errors over the fitting cells: %.4g (%.4g before)%s\n", r->cost,
	       r->cost0, a->sync == FAST_SIM_SYNC_RANK ? ", simulated with --sync rank" : "");
	printf("role   algo       samples  median (us)      IQR (us)     sim (us)    error  traffic\n");
	for (size_t k = 0; k < r->ncells; k++) {
		const struct cell *e = &r->cells[k];
		printf("%-6s %-10s %7zu %12.1f %13.1f %12.1f %+7.1f%%  %s matrix %u\n",
		       e->check ? "check" : "fit", e->algo, e->n, e->median_us, e->q3_us - e->q1_us,
		       e->sim_us, 100 * (e->sim_us - e->median_us) / e->median_us, e->traffic,
		       e->matrix);
	}
}

/* The tier fits as a table. */
static void print_tiers_table(const struct calib_args *a, const struct fast_topo *topo,
			      const struct calib_result *r)
{
	if (a->nsrc)
		printf("tier       points   alpha (us)  achieved GB/s  line GB/s  efficiency      R^2  mean err  max err\n");
	for (int k = 0; k < 2; k++) {
		const struct fast_tier *tier = k ? &topo->out : &topo->up;
		const struct fast_calib_fit *fit = &r->fit[k];
		if (!r->have[k])
			continue;
		/* the columns are what the topology gets; a clamped
		 * fit says what it was clamped from */
		printf("%-9s %7zu %12.3f %14.3f %10.3f %11.4f %8.5f %8.2f%% %7.2f%%",
		       k ? "scale-out" : "scale-up", fit->points, fit->latency_us,
		       fit->achieved_GBps, tier->bw_GBps, tier->efficiency, fit->r2,
		       100 * fit->mean_rel_err, 100 * fit->max_rel_err);
		if (r->clamped[k])
			printf("  (efficiency clamped from %.4f; line rate raised from %.3f)",
			       fit->efficiency, r->line0[k]);
		putchar('\n');
	}
}

static int write_topo(const char *path, const struct fast_topo *topo)
{
	struct cli_out o;
	struct fast_err err;
	int rc;

	if ((rc = cli_out_open(&o, path)) != 0)
		return rc;
	if (fast_topo_write(topo, o.f, &err) < 0)
		return cli_out_fail(&o, &err);
	return cli_out_commit(&o);
}

/* Fit, then refuse a fitted topology out of range, report, write. */
static int calibrate(struct calib_args *a, struct fast_topo *topo, struct calib_result *r)
{
	struct fast_err err;
	int rc;

	for (size_t i = 0; i < a->nterms; i++)
		if (!fast_topo_field(topo, a->terms[i].path, NULL, NULL))
			return cli_usage_error("calibrate", "--fit %s: no such topology number",
					       a->terms[i].path);
	if ((rc = fit_tiers(a, topo, r)) != 0 ||
	    (calib_impl_wanted(&a->impl) && (rc = calib_impl_fit(&a->impl, topo, &r->impl)) != 0) ||
	    (a->nruns && (rc = fit_runs(a, topo, r)) != 0))
		return rc;
	/* the fit may leave the physical ranges (an efficiency of 1e-5, an
	 * alpha of an hour): write nothing a later load refuses */
	if (fast_topo_validate(topo, &a->in.lim, &err) < 0) {
		fast_err_prefix(&err, "the fitted topology is out of range");
		return cli_report(&err);
	}
	note_source(a, topo);
	if (a->in.json) {
		print_json(a, topo, r);
	} else {
		if (a->nruns)
			print_runs_table(a, topo, r);
		print_tiers_table(a, topo, r);
		if (calib_impl_wanted(&a->impl))
			calib_impl_print(&r->impl, false);
	}
	return a->in.out_path ? write_topo(a->in.out_path, topo) : 0;
}

int cmd_calibrate(int argc, char **argv)
{
	static struct calib_args a;
	static struct calib_result r;
	struct fast_topo topo;
	int rc;

	if ((rc = parse_args(argc, argv, &a)) >= 0)
		return rc;
	if ((rc = cli_load_topo(&a.in, &topo)) != 0)
		return rc;
	rc = calibrate(&a, &topo, &r);
	free_cells(r.cells, r.ncells);
	return rc;
}
