/*
 * gate.c - `fast gate`: the optimality gate for CI.  Every matrix of a
 * traffic file is planned (or taken from --plan), simulated and compared
 * with its LP lower bound; the gate fails (exit 1) when a simulated time
 * exceeds max-ratio x bound, or, with --baseline, when it regressed beyond
 * the tolerance against a committed results file.  Baselines are the CSV
 * of `fast sweep` (cmd/sweep_case.h), written by --write-baseline or by a
 * sweep: a row matches only the baseline row with its ident (a hash of the
 * topology's numbers, the matrix bytes, index and label, the algorithm and
 * its options, the simulator options); --require-baseline fails a row that
 * has none.
 * This file parses the options, loads the inputs and prints the verdicts;
 * each matrix is evaluated and compared with its baseline row by
 * cmd/sweep_run.c.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "cli.h"
#include "fast/check.h"
#include "lib/base/json.h"
#include "sim_common.h"
#include "sweep_case.h"
#include "sweep_run.h"
#include "fast/sim.h"

const char cmd_gate_usage[] =
	"fast gate (--topo FILE | --preset NAME [--servers N] [--gpus G]) --traffic FILE\n"
	"          [--matrix I] --max-ratio R [--algo NAME | --plan FILE] [options]\n"
	"\n"
	"Plan every matrix (or take the plans of --plan, which are also checked),\n"
	"simulate it, compute the LP lower bound, and fail when time / bound > R.\n"
	"\n"
	"  --max-ratio R          the largest acceptable time / bound (>= 1)   \n"
	"  --algo NAME            compiler (default fast)\n"
	"  --plan FILE            gate these plans instead (one per matrix)\n"
	"  --baseline FILE.csv    also fail when a time regressed against this results\n"
	"                         file (fast sweep / --write-baseline CSV); rows match\n"
	"                         by ident (topology parameters, matrix bytes, index\n"
	"                         and label, algorithm and options, simulator options)\n"
	"  --require-baseline     fail a matrix that has no baseline row (CI)\n"
	"  --tolerance T          allowed relative regression (default 0.02)\n"
	"  --write-baseline FILE  write this run's rows as a baseline CSV\n"
	"  --bound lp|closed      bound to compare with, plus the latency floor\n"
	"                         (default lp)\n"
	"  --json                 machine-readable verdicts\n"
	SIMC_SIM_USAGE
	"\n"
	"Offenders, and rows without a baseline, are listed on stderr.  A baseline\n"
	"of an older version (no ident column) is refused: rewrite it with\n"
	"--write-baseline; CRLF line ends are fine.  Exit: 0 pass, 1 gate failed,\n"
	"2 usage, 3 bad input, 4 runtime.\n";

/* --- baseline --------------------------------------------------------------- */

struct baseline {
	struct sweep_row *rows;
	size_t n;
};

static int baseline_load(const char *path, struct baseline *b)
{
	char *text = NULL;
	size_t len, body, lineno = 1;
	struct fast_err err;
	int version;

	memset(b, 0, sizeof *b);
	if (fast_read_file(path, UINT64_C(1) << 32, &text, &len, &err) < 0)
		return cli_report(&err);
	version = sweep_csv_version(text, len, &body);
	if (version < 2) {
		free(text);
		if (version == 1)
			return cli_fail(FAST_EINPUT, "%s:1: a baseline of an older version (no ident column, rows matched by label): rewrite it with fast gate --write-baseline", path);
		return cli_fail(FAST_EINPUT, "%s:1: not a results file with the columns of this version (header differs)", path);
	}
	for (char *p = text + body; *p;) {
		char *nl = strchr(p, '\n');
		struct sweep_row *r;
		if (nl)
			*nl = '\0';
		lineno++;
		r = fast_reallocarray(b->rows, b->n + 1, sizeof *b->rows);
		if (!r) {
			free(text);
			return cli_fail(FAST_ENOMEM, "out of memory");
		}
		b->rows = r;
		if (sweep_row_parse_version(p, version, &b->rows[b->n], NULL) < 0) {
			free(text);
			return cli_fail(FAST_EINPUT, "%s:%zu: malformed row", path, lineno);
		}
		b->n++;
		if (!nl)
			break;
		p = nl + 1;
	}
	free(text);
	return 0;
}

/* The first baseline row that measured what r measures, or NULL. */
static const struct sweep_row *baseline_find(const struct baseline *b, const struct sweep_row *r)
{
	for (size_t i = 0; i < b->n; i++)
		if (b->rows[i].ident[0] && strcmp(b->rows[i].ident, r->ident) == 0)
			return &b->rows[i];
	return NULL;
}

/* --- the command -------------------------------------------------------------- */

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* Does v fail the gate? */
static bool offends(const struct gate_verdict *v, bool require_base)
{
	return v->failed || v->incorrect || v->over_ratio || v->regressed ||
	       (v->no_base && require_base);
}

static void print_table(const struct gate_verdict *v, uint32_t n, bool base, bool require_base)
{
	char a[32], b[32], c[32];

	printf("%-6s %-20s %-10s %14s %14s %8s", "matrix", "label", "algo", "time", "bound", "ratio");
	if (base)
		printf(" %14s %8s", "baseline", "change");
	printf("  verdict\n");
	for (uint32_t i = 0; i < n; i++) {
		const struct sweep_row *r = &v[i].row;
		printf("%-6u %-20.20s %-10.10s %14s %14s %8.4f", r->matrix, r->label, r->algo,
		       isnan(r->time_s) ? "-" : simc_time(r->time_s, a, sizeof a),
		       isnan(r->bound_s) ? (isnan(r->closed_s) ? "-" : simc_time(r->closed_s, b, sizeof b))
					 : simc_time(r->bound_s, b, sizeof b),
		       r->ratio);
		if (base) {
			if (isnan(v[i].base_s))
				printf(" %14s %8s", "-", "-");
			else {
				double ch = 100.0 * (r->time_s / v[i].base_s - 1.0);
				if (fabs(ch) < 0.005)
					ch = 0.0; /* the CSV's %.9g round trip, not a change */
				printf(" %14s %+7.2f%%", simc_time(v[i].base_s, c, sizeof c), ch);
			}
		}
		printf("  %s\n", v[i].failed ? "ERROR" : v[i].incorrect ? "INCORRECT" :
			       offends(&v[i], require_base) ? "FAIL" : "ok");
	}
}

static void print_json(const struct gate_verdict *v, uint32_t n, double max_ratio, double tol,
		       bool pass, bool require_base)
{
	printf("{\"pass\":%s,\"max_ratio\":", pass ? "true" : "false");
	fast_json_put_double(stdout, max_ratio);
	printf(",\"tolerance\":");
	fast_json_put_double(stdout, tol);
	printf(",\"matrices\":[");
	for (uint32_t i = 0; i < n; i++) {
		const struct sweep_row *r = &v[i].row;
		printf("%s{\"matrix\":%u,\"label\":", i ? "," : "", r->matrix);
		fast_json_put_string(stdout, r->label);
		printf(",\"algo\":");
		fast_json_put_string(stdout, r->algo);
		printf(",\"ident\":");
		fast_json_put_string(stdout, r->ident);
		printf(",\"time_s\":");
		if (isnan(r->time_s))
			printf("null");
		else
			fast_json_put_double(stdout, r->time_s);
		printf(",\"bound_s\":");
		if (isnan(r->bound_s))
			printf("null");
		else
			fast_json_put_double(stdout, r->bound_s);
		printf(",\"ratio\":");
		if (isnan(r->ratio))
			printf("null");
		else
			fast_json_put_double(stdout, r->ratio);
		printf(",\"baseline_s\":");
		if (isnan(v[i].base_s))
			printf("null");
		else
			fast_json_put_double(stdout, v[i].base_s);
		printf(",\"verdict\":\"%s\",\"reason\":",
		       v[i].failed ? "error" : v[i].incorrect ? "incorrect" :
		       offends(&v[i], require_base) ? "fail" : "ok");
		fast_json_put_string(stdout, v[i].why);
		printf("}");
	}
	printf("]}\n");
}

static int write_baseline(const char *path, const struct gate_verdict *v, uint32_t n)
{
	struct cli_out out;
	char line[2048];
	int rc;

	if ((rc = cli_out_open(&out, path)) != 0)
		return rc;
	fputs(sweep_csv_header, out.f);
	for (uint32_t i = 0; i < n; i++) {
		size_t len = sweep_row_format(&v[i].row, line, sizeof line);
		if (len)
			fwrite(line, 1, len, out.f);
	}
	return cli_out_commit(&out);
}

/* The plan of --plan for matrix mi (row i of the traffic), fitted to the
 * topology and opened as its one view *gv: 0, or the exit status. */
static int open_given(const struct cli_inputs *in, const struct fast_planset *ps,
		      const struct fast_topo *topo, const struct fast_traffic *tr, uint32_t i,
		      uint32_t mi, const struct fast_plan **given, struct fast_plan_view *gv)
{
	struct fast_err err;

	*given = NULL;
	for (uint32_t k = 0; k < ps->count && !*given; k++)
		if (ps->plans[k].matrix == mi)
			*given = &ps->plans[k];
	if (!*given && in->matrix < 0 && i < ps->count && ps->count == tr->count)
		*given = &ps->plans[i];
	if (!*given)
		return cli_fail(FAST_EINPUT, "%s: no plan for matrix %u of %s", in->plan_path, mi,
				in->traffic_path);
	if (fast_plan_fits_topo(*given, topo, &err) < 0 ||
	    fast_plan_view_open(gv, *given, &tr->m[i], &err) < 0) {
		fast_err_prefix(&err, "%s: plan for matrix %u", in->plan_path, mi);
		return cli_report(&err);
	}
	return 0;
}

/* Row x against its baseline row in base (NULL: none given), and what
 * stderr says of it: a missing baseline (counted in *nnobase), an
 * offending row (counted in *noff). */
static void judge(struct gate_verdict *x, uint32_t mi, const struct baseline *base,
		  const char *base_path, double tol, bool require_base, struct cli_progress *pr,
		  uint32_t *nnobase, uint32_t *noff)
{
	const struct sweep_row *r = &x->row;

	if (base && !x->failed) {
		const struct sweep_row *b = baseline_find(base, r);
		gate_case_compare(x, b, tol, require_base);
		if (x->no_base) {
			(*nnobase)++;
			if (!require_base) {
				cli_progress_clear(pr);
				fprintf(stderr, "fast gate: no baseline for row matrix %u (%s, %s, %s): ident %s %s %s\n",
					mi, r->label, r->algo, r->options, r->ident,
					b ? "has no time in" : "not in", base_path);
			}
		}
	}
	if (offends(x, require_base)) {
		(*noff)++;
		cli_progress_clear(pr);
		fprintf(stderr, "fast gate: %s matrix %u (%s, %s): %s\n",
			x->failed ? "ERROR" : x->incorrect ? "INCORRECT" : "FAIL", mi, r->label, r->algo,
			x->why);
	}
}

int cmd_gate(int argc, char **argv)
{
	struct cli_scan s;
	struct cli_inputs in;
	struct fast_algo_opts ao;
	struct sweep_eval ev;
	struct fast_topo topo;
	struct fast_traffic tr = { 0 };
	struct fast_planset ps = { 0 };
	struct baseline base = { 0 };
	struct gate_verdict *v = NULL;
	struct cli_progress pr = { 0 };
	const char *algo = "fast", *base_path = NULL, *write_path = NULL, *bound = NULL;
	double max_ratio = 0, tol = 0.02;
	char options[64];
	unsigned opts_given = 0;
	uint32_t noff = 0, nnobase = 0;
	bool pass = true, require_base = false;
	int rc;

	cli_inputs_init(&in);
	fast_sim_algo_opts_default(&ao);
	sweep_eval_default(&ev);
	for (cli_begin(&s, argc, argv, "gate"); cli_more(&s);) {
		if (cli_inputs_option(&s, &in) || cli_algo_option(&s, &ao, &opts_given) ||
		    simc_sim_option(&s, &ev.sim) || cli_value(&s, "--algo", &algo) ||
		    cli_double(&s, "--max-ratio", 1.0, 1e9, &max_ratio) ||
		    cli_value(&s, "--baseline", &base_path) ||
		    cli_double(&s, "--tolerance", 0.0, 100.0, &tol) ||
		    cli_value(&s, "--write-baseline", &write_path) || cli_value(&s, "--bound", &bound))
			continue;
		if (cli_flag(&s, "--require-baseline")) {
			require_base = true;
			continue;
		}
		return cli_unknown(&s);
	}
	if ((rc = cli_end(&s, false)) >= 0)
		return rc;
	if (max_ratio == 0)
		return cli_usage_error("gate", "--max-ratio R is required");
	if (!in.traffic_path)
		return cli_usage_error("gate", "--traffic FILE is required");
	if (require_base && !base_path)
		return cli_usage_error("gate", "--require-baseline needs --baseline FILE.csv");
	if (in.plan_path && opts_given)
		return cli_usage_error("gate", "compiler options do not apply to --plan");
	if ((rc = cli_algo_known("gate", "--algo", algo, NULL, 0)) != 0 ||
	    (rc = cli_algo_applies("gate", &algo, 1, opts_given)) != 0)
		return rc;
	if (bound) {
		if (strcmp(bound, "lp") == 0)
			ev.bound = SWEEP_BOUND_LP;
		else if (strcmp(bound, "closed") == 0)
			ev.bound = SWEEP_BOUND_CLOSED;
		else
			return cli_usage_error("gate", "--bound: '%.20s' is not lp or closed", bound);
	}
	if ((rc = cli_load_topo(&in, &topo)) != 0)
		return rc;
	if ((rc = cli_load_traffic(&in, &topo, &tr)) != 0)
		return rc;
	if (in.plan_path && (rc = cli_load_plans(&in, &ps)) != 0)
		goto out;
	cli_input(base_path);
	if (base_path && (rc = baseline_load(base_path, &base)) != 0)
		goto out;
	v = fast_calloc(tr.count ? tr.count : 1, sizeof *v);
	if (!v) {
		rc = cli_fail(FAST_ENOMEM, "out of memory");
		goto out;
	}
	fast_algo_opts_name(&ao, ~0u, "/", options, sizeof options);
	cli_progress_begin(&pr, "gate", tr.count);
	for (uint32_t i = 0; i < tr.count; i++, cli_progress_step(&pr, i)) {
		uint32_t mi = in.matrix >= 0 ? (uint32_t)in.matrix : i;
		const struct fast_plan *given = NULL;
		struct fast_plan_view gv; /* given's one view: checked, then simulated */
		struct gate_verdict *x = &v[i];

		if (in.plan_path && (rc = open_given(&in, &ps, &topo, &tr, i, mi, &given, &gv)) != 0)
			goto out;
		gate_case_eval(&topo, in.preset ? in.preset : base_name(in.topo_path), in.traffic_path,
			       mi, &tr.m[i], algo, &ao, options, given, &gv, &ev, max_ratio, x);
		judge(x, mi, base_path ? &base : NULL, base_path, tol, require_base, &pr, &nnobase,
		      &noff);
		pass = pass && !offends(x, require_base);
	}
	cli_progress_end(&pr);
	if (in.json)
		print_json(v, tr.count, max_ratio, tol, pass, require_base);
	else {
		print_table(v, tr.count, base_path != NULL, require_base);
		printf("gate: %u matrices, limit time/bound <= %.4g%s: %s (%u offending", tr.count,
		       max_ratio, base_path ? " and no regression over the baseline" : "",
		       pass ? "PASS" : "FAIL", noff);
		if (nnobase)
			printf("; %u without a baseline%s", nnobase, require_base ? "" : ", not compared");
		printf(")\n");
	}
	rc = 0;
	for (uint32_t i = 0; i < tr.count; i++)
		if (v[i].failed)
			rc = 4;
	if (!rc && !pass)
		rc = 1;
	if (write_path)
		rc = cli_status(rc, write_baseline(write_path, v, tr.count));
out:
	cli_progress_end(&pr);
	free(v);
	free(base.rows);
	fast_planset_free(&ps);
	fast_traffic_free(&tr);
	return rc;
}
