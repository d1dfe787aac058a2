/*
 * compare.c - `fast compare`: compile the same traffic with several
 * schedules, simulate each on the same fabric and tabulate simulated
 * time, algbw, ratio to the bound (LP + latency) and FAST's speedup over each, plus
 * FAST's measured synthesis time and its time with synthesis included.
 * Multi-matrix traces give one table per matrix and a totals table.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "cli.h"
#include "fast/eval.h"
#include "lib/base/json.h"
#include "sim_common.h"
#include "fast/sim.h"

const char cmd_compare_usage[] =
	"fast compare (--topo FILE | --preset NAME [--servers N] [--gpus G]) --traffic FILE\n"
	"             [--nics K] [--nic S:K=F ...]\n"
	"             [--algos fast,fanout,nccl,pxn,spreadout,hier] [--matrix I]\n"
	"             [--json | --csv] [--svg FILE.svg] [--no-timing] [compiler and sim options]\n"
	"\n"
	"Compile the traffic with each algorithm, simulate every plan on the fabric\n"
	"and print one table per matrix: simulated time, algbw, time / bound and\n"
	"the speedup of FAST over each algorithm (time of the algorithm / time of\n"
	"FAST).  Every algorithm's synthesis time is measured (the median thread-CPU\n"
	"time of 15 compiles after one warm-up) and reported with its time including\n"
	"it; auto's is its decision's median plus the chosen schedule's synthesis.\n"
	"Several matrices: a totals table (sums); traffic of several kinds (token\n"
	"dispatch and combine) first a totals table per kind.\n"
	"\n"
	"  --algos LIST       comma-separated algorithms (default: all, listed below);\n"
	"                     NAME:OPT=VALUE[:OPT=VALUE] runs NAME with those compiler\n"
	"                     options on top of the command line's, in a row of that\n"
	"                     name (fast,fast:dedup=gpu: FAST with and without dedup)\n"
	"  --matrix I         only matrix I\n"
	"  --csv              one CSV row per (matrix, algorithm); bytes_out is the\n"
	"                     bytes the plan's scale-out steps move\n"
	"  --json             machine-readable output\n"
	"  --svg FILE         Gantt chart of FAST's plan (first matrix)\n"
	"  --no-timing        leave out the measured synthesis times (stable output)\n"
	SIMC_SIM_USAGE
	"\n"
	"Exit: 0 ok, 2 usage, 3 bad input, 4 runtime.\n";

#define MAX_ALGOS 12
#define ROW_NAME_MAX 96

struct cell {
	double time_s, algbw, synth_s;
	uint64_t bytes_out; /* bytes of the plan's tier-out steps (self copies excluded) */
	/* the auto row: its choice, the predictions, the decision's median */
	const char *chosen;
	double pred_sim_s, pred_synth_s, decision_s;
	uint32_t ncand;
	struct fast_case_candidate cand[FAST_CASE_MAX_CANDIDATES];
	char chosen_name[ROW_NAME_MAX]; /* token traffic: "fast:dedup=server" */
	bool tokens;                    /* the matrix is token traffic */
	/* every NIC of the row's simulation (a total row: none), until the
	 * matrix is printed; listed on a fabric whose NICs are not one per GPU
	 * at the nominal rate, the busiest always */
	struct fast_sim_nic *nics;
	uint32_t nnics;
	bool list_nics;
};

/* Candidate c as a row names it: on token traffic with its dedup
 * ("hier:dedup=server"), on byte traffic the algorithm alone. */
static const char *candidate_name(bool tokens, const struct fast_case_candidate *c, char *buf,
				  size_t len)
{
	if (!tokens)
		return c->algo;
	snprintf(buf, len, "%s:dedup=%s", c->algo, c->dedup == FAST_DEDUP_GPU ? "gpu" : "server");
	return buf;
}

struct opts {
	struct cli_inputs in;
	struct fast_algo_opts ao;
	struct fast_sim_opts so;
	const char *algos[MAX_ALGOS]; /* the rows' names: "fast", "fast:dedup=gpu" */
	const char *base[MAX_ALGOS];  /* each row's algorithm ("fast") */
	struct fast_algo_opts row_ao[MAX_ALGOS]; /* each row's options */
	char names[MAX_ALGOS][ROW_NAME_MAX];
	uint32_t nalgos;
	int name_width; /* of the table's first column */
	int fast_idx; /* the row "fast", else the first row of fast; -1 if none */
	const char *svg;
	bool csv, timing;
};

/* One --algos entry, NAME[:OPT=VALUE...], into row k: its algorithm, its
 * options (the command line's, then the entry's) and its name, NAME and
 * the entry's options in table order as every output spells them. */
static int parse_entry(struct opts *o, uint32_t k, char *tok)
{
	size_t len = strlen(tok);
	char *save = NULL, *name, *kv;
	const struct fast_algo *a;
	unsigned given = 0;
	int rc;

	/* strtok_r would skip what is empty: say so instead */
	if (tok[0] == ':' || (len && tok[len - 1] == ':') || strstr(tok, "::"))
		return cli_usage_error("compare", "--algos: '%.40s': an empty name or option "
						  "(NAME[:OPT=VALUE...])", tok);
	name = strtok_r(tok, ":", &save);
	if (!name)
		return cli_usage_error("compare", "--algos: empty entry");
	if ((rc = cli_algo_known("compare", "--algos", name, NULL, 0)) != 0)
		return rc;
	a = fast_algo_find(name);
	o->base[k] = a->name;
	o->row_ao[k] = o->ao;
	while ((kv = strtok_r(NULL, ":", &save)) != NULL) {
		char *eq = strchr(kv, '=');
		const struct fast_algo_option *opt;
		struct fast_err err;
		if (eq)
			*eq = '\0';
		if (!eq || !(opt = fast_algo_option_find(kv)))
			return cli_usage_error("compare", "--algos: %s: '%.40s' is not OPTION=VALUE of a "
					       "compiler option (--help lists them)", name, kv);
		if (!(a->options & opt->bit))
			return cli_usage_error("compare", "--algos: %s: %s does not apply to %s", name,
					       opt->name, name);
		if (given & opt->bit) /* the last would win, unseen in the row's name */
			return cli_usage_error("compare", "--algos: %s: %s given twice", name,
					       opt->name);
		if (fast_algo_option_parse(opt, eq + 1, &o->row_ao[k], &err) < 0)
			return cli_usage_error("compare", "--algos: %s: %s: %s", name, opt->name, err.msg);
		given |= opt->bit;
	}
	len = (size_t)snprintf(o->names[k], ROW_NAME_MAX, "%s", a->name);
	for (const struct fast_algo_option *opt = fast_algo_options; opt->name; opt++) {
		char v[40];
		if (given & opt->bit && len < ROW_NAME_MAX)
			len += (size_t)snprintf(o->names[k] + len, ROW_NAME_MAX - len, ":%s=%s", opt->name,
						fast_algo_option_print(opt, &o->row_ao[k], v, sizeof v));
	}
	o->algos[k] = o->names[k];
	return 0;
}

/* The rows: every algorithm of the table but auto, or the --algos list.
 * Two rows of one algorithm with the same options are refused. */
static int parse_algos(struct opts *o, const char *list)
{
	static char buf[256];
	char *save = NULL, *tok;
	int rc;

	o->nalgos = 0;
	if (!list) {
		for (const struct fast_algo *a = fast_algos; a->name && o->nalgos < MAX_ALGOS; a++)
			if (strcmp(a->name, "auto") != 0) { /* auto is asked for */
				o->base[o->nalgos] = o->algos[o->nalgos] = a->name;
				o->row_ao[o->nalgos++] = o->ao;
			}
		return 0;
	}
	if (strlen(list) >= sizeof buf)
		return cli_usage_error("compare", "--algos: list too long");
	strcpy(buf, list);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint32_t k = o->nalgos;
		char mine[160];
		if (k == MAX_ALGOS)
			return cli_usage_error("compare", "--algos: at most %d algorithms", MAX_ALGOS);
		if ((rc = parse_entry(o, k, tok)) != 0)
			return rc;
		fast_algo_opts_name(&o->row_ao[k], fast_algo_find(o->base[k])->options, "/", mine,
				    sizeof mine);
		for (uint32_t i = 0; i < k; i++) {
			char theirs[160];
			if (strcmp(o->base[i], o->base[k]) != 0)
				continue;
			fast_algo_opts_name(&o->row_ao[i], fast_algo_find(o->base[i])->options, "/",
					    theirs, sizeof theirs);
			if (strcmp(mine, theirs) != 0)
				continue;
			if (strcmp(o->algos[i], o->algos[k]) == 0)
				return cli_usage_error("compare", "--algos: '%.40s' given twice", o->algos[k]);
			return cli_usage_error("compare", "--algos: '%.40s' is the same schedule as '%.40s'",
					       o->algos[k], o->algos[i]);
		}
		o->nalgos++;
	}
	if (o->nalgos == 0)
		return cli_usage_error("compare", "--algos: empty list");
	return 0;
}

static const char *human_time(double s, char *buf, size_t len)
{
	return simc_time(s, buf, len);
}

static void print_table(const struct opts *o, const char *title, const struct cell *c,
			double bound_s, bool have_bound)
{
	char a[32], b[32];
	const struct cell *f = o->fast_idx >= 0 ? &c[o->fast_idx] : NULL;

	printf("%s\n", title);
	printf("  %-*s %14s %12s %10s %13s", o->name_width, "algorithm", "time", "algbw GB/s", "/ bound",
	       f ? "FAST speedup" : "");
	if (o->timing)
		printf(" %12s %14s", "synthesis", "with synthesis");
	printf("\n");
	for (uint32_t k = 0; k < o->nalgos; k++) {
		char ratio[16] = "-", sp[16] = "", bw[16] = "-";
		if (c[k].algbw > 0) /* totals have none */
			snprintf(bw, sizeof bw, "%.2f", c[k].algbw);
		if (have_bound && bound_s > 0)
			snprintf(ratio, sizeof ratio, "%.3f", c[k].time_s / bound_s);
		if (f && f->time_s > 0)
			snprintf(sp, sizeof sp, "%.2fx", c[k].time_s / f->time_s);
		printf("  %-*s %14s %12s %10s %13s", o->name_width, o->algos[k],
		       human_time(c[k].time_s, a, sizeof a), bw, ratio, sp);
		if (o->timing)
			printf(" %12s %14s", human_time(c[k].synth_s, a, sizeof a),
			       human_time(c[k].time_s + c[k].synth_s, b, sizeof b));
		if (c[k].chosen)
			printf("  (%s)", c[k].chosen);
		printf("\n");
	}
	if (have_bound)
		printf("  %-*s %14s\n", o->name_width, "bound", human_time(bound_s, a, sizeof a));
}

/* The NICs of row w into c (to print with the matrix; freed then).  0,
 * or FAST_ENOMEM in err. */
static int fill_nics(const struct fast_topo *t, const struct fast_case_row *w, struct cell *c,
		     struct fast_err *err)
{
	c->list_nics = !fast_topo_nics_ideal(t);
	return fast_sim_nics(t, &w->sim, &c->nics, &c->nnics, err);
}

/* Row k of the case's result into c[k]. */
static void fill_cell(const struct opts *o, const struct fast_matrix *mx,
		      const struct fast_case_row *w, struct cell *c)
{
	c->time_s = w->sim.time_s;
	c->algbw = w->sim.algbw_GBps;
	c->bytes_out = w->bytes_out;
	if (o->timing) {
		c->synth_s = w->synth_s;
		c->decision_s = w->is_auto ? w->decision_s : 0;
	}
	if (!w->is_auto)
		return;
	c->tokens = mx->kind != FAST_TRAFFIC_BYTES;
	c->ncand = w->ncand;
	memcpy(c->cand, w->cand, sizeof c->cand);
	c->chosen = candidate_name(c->tokens, &w->cand[w->chosen], c->chosen_name,
				   sizeof c->chosen_name);
	c->pred_sim_s = w->cand[w->chosen].sim_s;
	c->pred_synth_s = w->cand[w->chosen].synth_s;
}

/* One matrix: its bound and every row (include/fast/eval.h); *done counts
 * the units of work for the progress line (nalgos + 1 a matrix). */
static int compare_one(const struct opts *o, const struct fast_topo *t,
		       const struct fast_matrix *mx, struct cell *c, struct fast_bound *bound,
		       const struct fast_matrix *svg_of,
		       struct cli_progress *pr, uint64_t *done)
{
	struct fast_case_algo a[MAX_ALGOS];
	struct fast_case cs;
	struct fast_case_result r;
	struct fast_err err;
	int rc;

	fast_case_init(&cs, t, mx);
	cs.sim = o->so;
	cs.synthesis = o->timing;
	cs.algos = a;
	cs.nalgos = o->nalgos;
	for (uint32_t k = 0; k < o->nalgos; k++)
		a[k] = (struct fast_case_algo){ .algo = o->base[k], .opts = o->row_ao[k],
						.timeline = svg_of && (int)k == o->fast_idx };
	cli_progress_step(pr, *done + 1); /* the bound, the first unit */
	if (fast_case_eval(&cs, &r, &err) < 0) {
		for (uint32_t k = 0; r.bound_rc == 0 && k < r.nrows; k++)
			if (r.rows[k].stage && strcmp(r.rows[k].stage, "sim") == 0)
				fast_err_prefix(&err, "%s", o->algos[k]);
		fast_case_result_free(&r);
		return cli_report(&err);
	}
	*bound = r.bound;
	for (uint32_t k = 0; k < o->nalgos; k++) {
		fill_cell(o, mx, &r.rows[k], &c[k]);
		if ((rc = fill_nics(t, &r.rows[k], &c[k], &err)) < 0) {
			fast_case_result_free(&r);
			return cli_report(&err);
		}
	}
	*done += o->nalgos + 1;
	cli_progress_step(pr, *done);
	rc = 0;
	if (svg_of) {
		char title[200];
		snprintf(title, sizeof title, "fast on %s (%u x %u), matrix %lld (%s)", t->name, t->servers,
			 t->gpus, (long long)(o->in.matrix >= 0 ? o->in.matrix : 0), svg_of->label);
		rc = simc_write_svg(o->svg, t, &r.rows[o->fast_idx].sim, title);
	}
	fast_case_result_free(&r);
	return rc;
}

/* matrix < 0: a total row, label "total" or the kind it sums */
static void print_csv_rows(const struct opts *o, int64_t matrix, const char *label,
			   const struct cell *c, double bound_s)
{
	const struct cell *f = o->fast_idx >= 0 ? &c[o->fast_idx] : NULL;

	for (uint32_t k = 0; k < o->nalgos; k++) {
		if (matrix >= 0)
			printf("%lld,%s,", (long long)matrix, label);
		else
			printf("total,%s,", label);
		printf("%s,%.9g,%.6g,%.9g,%.6g,", o->algos[k], c[k].time_s, c[k].algbw, bound_s,
		       bound_s > 0 ? c[k].time_s / bound_s : 0.0);
		if (f && f->time_s > 0)
			printf("%.6g", c[k].time_s / f->time_s);
		printf(",%llu", (unsigned long long)c[k].bytes_out);
		if (o->timing)
			printf(",%.6g,%.9g", c[k].synth_s, c[k].time_s + c[k].synth_s);
		printf("\n");
	}
}

/* , "name": value -- the shortest exact decimal */
static void put_field(const char *name, double v)
{
	printf(", \"%s\": ", name);
	fast_json_put_double(stdout, v);
}

static void print_json_block(const struct opts *o, int64_t matrix, const char *label,
			     const struct cell *c, const struct fast_bound *b, double bound_s, bool first)
{
	const struct cell *f = o->fast_idx >= 0 ? &c[o->fast_idx] : NULL;

	printf("%s  {", first ? "" : ",\n");
	if (matrix >= 0)
		printf("\"matrix\": %lld, \"label\": \"%s\", ", (long long)matrix, label);
	else if (strcmp(label, "total") != 0)
		printf("\"matrix\": \"total\", \"kind\": \"%s\", ", label);
	else
		printf("\"matrix\": \"total\", ");
	printf("\"bound_s\": ");
	fast_json_put_double(stdout, bound_s);
	if (b) {
		printf(", \"lp_s\": ");
		fast_json_put_double(stdout, b->lp_s);
		printf(", \"latency_s\": ");
		fast_json_put_double(stdout, b->latency_s);
		printf(", \"binding\": \"%s\"", b->binding);
	}
	printf(", \"algorithms\": [");
	for (uint32_t k = 0; k < o->nalgos; k++) {
		printf("%s\n    {\"algo\": \"%s\"", k ? "," : "", o->algos[k]);
		put_field("time_s", c[k].time_s);
		put_field("algbw_GBps", c[k].algbw);
		put_field("ratio", bound_s > 0 ? c[k].time_s / bound_s : 0.0);
		if (f && f->time_s > 0)
			put_field("fast_speedup", c[k].time_s / f->time_s);
		printf(", \"bytes_out\": %llu", (unsigned long long)c[k].bytes_out);
		if (o->timing) {
			put_field("synthesis_s", c[k].synth_s);
			put_field("time_with_synthesis_s", c[k].time_s + c[k].synth_s);
		}
		if (c[k].chosen) {
			printf(", \"chosen\": \"%s\"", c[k].chosen);
			put_field("predicted_sim_s", c[k].pred_sim_s);
			put_field("predicted_synthesis_s", c[k].pred_synth_s);
		}
		if (c[k].chosen && o->timing)
			put_field("decision_s", c[k].decision_s);
		if (c[k].chosen && matrix >= 0) {
			printf(", \"candidates\": {");
			for (uint32_t j = 0; j < c[k].ncand; j++) {
				char name[ROW_NAME_MAX];
				/* evaluated (token traffic): the simulated times */
				printf("%s\"%s\": {\"predicted_sim_s\": ", j ? ", " : "",
				       candidate_name(c[k].tokens, &c[k].cand[j], name, sizeof name));
				fast_json_put_double(stdout, c[k].cand[j].sim_s);
				printf(", \"predicted_synthesis_s\": ");
				fast_json_put_double(stdout, c[k].cand[j].synth_s);
				printf("}");
			}
			printf("}");
		}
		if (matrix >= 0)
			fast_sim_json_row_nics(stdout, c[k].nics, c[k].nnics, c[k].list_nics);
		printf("}");
	}
	printf("]}");
}

/* The sums over the matrices, all of them and per matrix kind (enum
 * fast_traffic_kind). */
struct totals {
	struct cell all[MAX_ALGOS], kind[3][MAX_ALGOS];
	double bound, kind_bound[3];
	uint32_t kind_count[3], nkinds;
};

static void totals_add(struct totals *tt, const struct opts *o, const struct fast_matrix *m,
		       const struct cell *c, double bound_s)
{
	tt->bound += bound_s;
	tt->kind_bound[m->kind] += bound_s;
	tt->nkinds += tt->kind_count[m->kind]++ == 0;
	for (uint32_t k = 0; k < o->nalgos; k++) {
		struct cell *kt = &tt->kind[m->kind][k];
		tt->all[k].time_s += c[k].time_s;
		tt->all[k].synth_s += c[k].synth_s;
		tt->all[k].bytes_out += c[k].bytes_out;
		kt->time_s += c[k].time_s;
		kt->synth_s += c[k].synth_s;
		kt->bytes_out += c[k].bytes_out;
	}
}

/* The total rows: per kind where the traffic has several, then over all
 * matrices where it has several.  algbw over a whole trace is not
 * defined: the cells' 0. */
static void print_totals(const struct opts *o, const struct totals *tt, uint32_t count)
{
	for (uint32_t kind = 0; tt->nkinds > 1 && kind < 3; kind++) {
		const char *name = fast_traffic_kind_name((enum fast_traffic_kind)kind);
		if (!tt->kind_count[kind])
			continue;
		if (o->csv) {
			print_csv_rows(o, -1, name, tt->kind[kind], tt->kind_bound[kind]);
		} else if (o->in.json) {
			print_json_block(o, -1, name, tt->kind[kind], NULL, tt->kind_bound[kind], false);
		} else {
			char title[128];
			snprintf(title, sizeof title, "\ntotal over the %s matrices (%u; sum of times; algbw "
				 "not applicable)", name, tt->kind_count[kind]);
			print_table(o, title, tt->kind[kind], tt->kind_bound[kind], true);
		}
	}
	if (count > 1) {
		if (o->csv)
			print_csv_rows(o, -1, "total", tt->all, tt->bound);
		else if (o->in.json)
			print_json_block(o, -1, "total", tt->all, NULL, tt->bound, false);
		else
			print_table(o, "\ntotal over all matrices (sum of times; algbw not applicable)",
				    tt->all, tt->bound, true);
	}
}

/* The options into *o: -1 to go on, or the command's exit status (0 after
 * --help, 2 for a usage error), as cli_end. */
static int parse_options(int argc, char **argv, struct opts *o)
{
	struct cli_scan s;
	const char *algos = NULL; /* every algorithm of the table */
	unsigned given = 0;
	int rc;

	for (cli_begin(&s, argc, argv, "compare"); cli_more(&s);) {
		if (cli_inputs_option(&s, &o->in) || cli_algo_option(&s, &o->ao, &given) ||
		    simc_sim_option(&s, &o->so) || cli_value(&s, "--algos", &algos) ||
		    cli_value(&s, "--svg", &o->svg))
			continue;
		if (cli_flag(&s, "--csv")) {
			o->csv = true;
			continue;
		}
		if (cli_flag(&s, "--no-timing")) {
			o->timing = false;
			continue;
		}
		return cli_unknown(&s);
	}
	if ((rc = cli_end(&s, false)) >= 0)
		return rc;
	if (o->csv && o->in.json)
		return cli_usage_error("compare", "give --json or --csv, not both");
	if (!o->in.traffic_path)
		return cli_usage_error("compare", "--traffic FILE is required");
	if ((rc = parse_algos(o, algos)) != 0 ||
	    (rc = cli_algo_applies("compare", o->base, o->nalgos, given)) != 0)
		return rc;
	o->fast_idx = -1;
	o->name_width = 10;
	for (uint32_t k = 0; k < o->nalgos; k++) {
		if (strcmp(o->base[k], "fast") == 0 &&
		    (o->fast_idx < 0 || strcmp(o->algos[k], "fast") == 0))
			o->fast_idx = (int)k;
		if ((int)strlen(o->algos[k]) > o->name_width)
			o->name_width = (int)strlen(o->algos[k]);
	}
	if (o->svg && o->fast_idx < 0)
		return cli_usage_error("compare", "--svg draws FAST's plan: include fast in --algos");
	return -1;
}

static void print_head(const struct opts *o, const struct fast_topo *t)
{
	if (o->csv) {
		printf("matrix,label,algo,time_s,algbw_GBps,bound_s,ratio,fast_speedup,bytes_out%s\n",
		       o->timing ? ",synthesis_s,time_with_synthesis_s" : "");
	} else if (o->in.json) {
		printf("{\"topology\": \"%s\", \"servers\": %u, \"gpus_per_server\": %u, \"gpus_total\": %u, "
		       "\"congestion\": %s, %s", t->name, t->servers, t->gpus,
		       fast_topo_ngpus(t), o->so.congestion ? "true" : "false",
		       o->so.sync == FAST_SIM_SYNC_RANK ? "\"sync\": \"rank\", " : "");
		if (o->so.in_flight > 1)
			printf("\"in_flight\": %u, ", o->so.in_flight);
		printf("\"matrices\": [\n");
	}
}

static void print_matrix(const struct opts *o, const struct fast_topo *t, const struct fast_matrix *m,
			 uint32_t i, int64_t mi, const struct cell *c, const struct fast_bound *b)
{
	if (o->csv) {
		print_csv_rows(o, mi, m->label, c, b->bound_s);
	} else if (o->in.json) {
		print_json_block(o, mi, m->label, c, b, b->bound_s, i == 0);
	} else {
		char title[256];
		snprintf(title, sizeof title, "%smatrix %lld (%s) on %s, %u servers x %u GPUs%s%s",
			 i ? "\n" : "", (long long)mi, m->label, t->name, t->servers, t->gpus,
			 o->so.congestion ? "" : ", no congestion",
			 o->so.sync == FAST_SIM_SYNC_RANK
				 ? (o->so.in_flight > 1 ? ", --sync rank, 2 waves in flight" : ", --sync rank")
				 : "");
		print_table(o, title, c, b->bound_s, true);
	}
}

static void free_nics(struct cell *c, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		free(c[k].nics);
		c[k].nics = NULL;
	}
}

int cmd_compare(int argc, char **argv)
{
	struct opts o;
	struct fast_topo t;
	struct fast_traffic tr = { 0 };
	struct cell *cells = NULL;
	struct totals *tt = NULL;
	struct cli_progress pr;
	uint64_t done = 0;
	int rc;

	memset(&o, 0, sizeof o);
	o.timing = true;
	cli_progress_begin(&pr, "compare", 0);
	cli_inputs_init(&o.in);
	fast_sim_algo_opts_default(&o.ao);
	fast_sim_opts_default(&o.so);
	if ((rc = parse_options(argc, argv, &o)) >= 0)
		return rc;
	if ((rc = cli_load_topo(&o.in, &t)) != 0)
		return rc;
	if ((rc = cli_load_traffic(&o.in, &t, &tr)) != 0)
		return rc;
	cells = fast_calloc((size_t)tr.count * o.nalgos, sizeof *cells);
	tt = fast_calloc(1, sizeof *tt);
	if (!cells || !tt) {
		free(cells);
		free(tt);
		fast_traffic_free(&tr);
		return cli_fail(FAST_ENOMEM, "out of memory");
	}
	print_head(&o, &t);
	cli_progress_begin(&pr, "compare", (uint64_t)tr.count * (o.nalgos + 1));
	for (uint32_t m = 0; m < tr.count; m++) {
		struct cell *c = &cells[(size_t)m * o.nalgos];
		struct fast_bound b;
		int64_t mi = o.in.matrix >= 0 ? o.in.matrix : (int64_t)m;

		rc = compare_one(&o, &t, &tr.m[m], c, &b, o.svg && m == 0 ? &tr.m[0] : NULL, &pr,
				 &done);
		cli_progress_clear(&pr);
		if (rc != 0)
			goto out;
		totals_add(tt, &o, &tr.m[m], c, b.bound_s);
		print_matrix(&o, &t, &tr.m[m], m, mi, c, &b);
		free_nics(c, o.nalgos);
	}
	print_totals(&o, tt, tr.count);
	if (o.in.json)
		printf("\n]}\n");
	rc = 0;
out:
	cli_progress_end(&pr);
	if (cells)
		free_nics(cells, (size_t)tr.count * o.nalgos);
	free(cells);
	free(tt);
	fast_traffic_free(&tr);
	return rc;
}
