/*
 * sim.c - `fast sim`: simulate a plan (from a file, or compiled on the fly
 * from traffic) on a topology and report completion time, algbw/busbw,
 * the bound (LP + latency) and the ratio, the most utilised resources, optionally the
 * per-step times and a timeline (Chrome trace, SVG).
 */
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "cli.h"
#include "fast/eval.h"
#include "sim_common.h"
#include "fast/sim.h"

const char cmd_sim_usage[] =
	"fast sim (--topo FILE | --preset NAME [--servers N] [--gpus G])\n"
	"         [--nics K] [--nic S:K=F ...]\n"
	"         (--plan FILE [--traffic FILE] | --traffic FILE [--algo A] [compiler options])\n"
	"         [--matrix I] [--no-congestion] [--sync step|rank]\n"
	"         [--in-flight 1|2] [--epsilon E]\n"
	"         [--steps] [--json] [--timeline FILE.json] [--svg FILE.svg] [--timing]\n"
	"         [--no-check]\n"
	"\n"
	"Simulate a plan on a two-tier fabric (flow level, max-min fair sharing,\n"
	"latency and per-step overhead per tier, incast congestion) and report\n"
	"completion time, algbw and busbw (nccl-tests definitions, as fast run:\n"
	"algbw = size / time, size = the largest per-GPU max(sent, received)\n"
	"bytes of the traffic, a GPU's own chunk included; busbw = algbw (n-1)/n;\n"
	"without --traffic, the bytes the plan delivers), the LP lower bound and\n"
	"time/bound (needs the traffic), and the most utilised NICs and scale-up\n"
	"ports.  A --plan given with --traffic is first proved correct for it, as\n"
	"by fast check.\n"
	"\n"
	"  --plan FILE        simulate the plans of a plan file\n"
	"  --traffic FILE     the traffic (compiled with --algo, or the bound of --plan)\n"
	"  --algo A           compile with A (default fast; algorithms and their options below)\n"
	"  --matrix I         only matrix I (and the plan serving it)\n" SIMC_SIM_USAGE
	SIMC_NO_CHECK_USAGE
	"  --steps            list every step's ready/start/end times\n"
	"  --timeline FILE    Chrome trace (open in https://ui.perfetto.dev) of the first plan\n"
	"  --svg FILE         Gantt chart of NIC and scale-up activity of the first plan\n"
	"  --timing           also report the simulator's wall time\n"
	"  --json             machine-readable output\n"
	"\n"
	"Exit: 0 ok, 1 a --plan incorrect for --traffic, 2 usage, 3 bad input,\n"
	"4 runtime.\n";

struct opts {
	struct cli_inputs in;
	struct fast_algo_opts ao;
	struct fast_sim_opts so;
	const char *algo, *timeline, *svg;
	struct cli_progress *pr; /* compiling and simulating, one unit a plan each */
	bool steps, timing, no_check;
};

#define TOP_RES 6


struct tier_util {
	double mean, max;
	uint32_t n;
};

static void tier_util(const struct fast_sim_result *r, bool nic, struct tier_util *u)
{
	double sum = 0;

	memset(u, 0, sizeof *u);
	for (uint32_t i = 0; i < r->nres; i++) {
		enum fast_sim_res_kind k = r->res[i].kind;
		bool is_nic = k == FAST_RES_NIC_EGRESS || k == FAST_RES_NIC_INGRESS;
		if (k == FAST_RES_CORE || k == FAST_RES_GPU_REDUCE || k == FAST_RES_COPY_EGRESS ||
		    k == FAST_RES_COPY_INGRESS || is_nic != nic)
			continue;
		if ((k == FAST_RES_MESH_LINK && r->res[i].gpu == r->res[i].peer) ||
		    r->res[i].cap_Bps <= 0.0) /* a self link; a port whose NICs are down */
			continue;
		sum += r->res[i].util;
		if (r->res[i].util > u->max)
			u->max = r->res[i].util;
		u->n++;
	}
	u->mean = u->n ? sum / u->n : 0;
}

/* On a fabric whose NICs are not one per GPU at the nominal rate, the
 * busiest NIC (the busiest resources name ports, a port may be several
 * NICs): "  busiest NIC  server 1 NIC 3 out 98.7% of 12.38 GB/s (16.00
 * MiB)".  Ideal fabrics keep their text: there a NIC is a port. */
static int print_busiest_nic(const struct fast_topo *t, const struct fast_sim_result *r)
{
	struct fast_sim_nic *nics;
	struct fast_err err;
	char sz[32];
	uint32_t n, i;
	int d;

	if (fast_topo_nics_ideal(t))
		return 0;
	if (fast_sim_nics(t, r, &nics, &n, &err) < 0)
		return cli_report(&err);
	if (fast_sim_busiest_nic(nics, n, &i, &d))
		printf("  busiest NIC  server %u NIC %u %s %.1f%% of %.2f GB/s (%s)\n", nics[i].server,
		       nics[i].nic, d ? "in" : "out", 100 * nics[i].util[d], nics[i].rate_Bps / 1e9,
		       fast_size_format(nics[i].bytes[d], sz, sizeof sz));
	else
		printf("  busiest NIC  none (no bytes crossed the scale-out tier)\n");
	free(nics);
	return 0;
}

static int print_human(const struct opts *o, const struct fast_topo *t, const struct fast_plan *p,
		       const struct fast_sim_result *r, const struct fast_bound *b, bool first)
{
	char a[48], c[48], lp[48], sz[32], name[48];
	uint32_t idx[TOP_RES], n;
	struct tier_util nic, up;
	int rc;

	if (!first)
		putchar('\n');
	printf("plan %u (%s): %s on %s, %u servers x %u GPUs%s%s%s\n", p->matrix, p->label, p->algo,
	       t->name, t->servers, t->gpus, o->so.congestion ? "" : ", no congestion",
	       o->so.sync == FAST_SIM_SYNC_RANK ? ", --sync rank"
	       : fast_sim_sync_of(t, p->algo, o->so.sync) == FAST_SIM_SYNC_RANK
		       ? ", synchronised by rank (its implementation)" : "",
	       o->so.in_flight > 1 ? ", 2 waves in flight" : "");
	printf("  completion   %s\n", simc_time(r->time_s, a, sizeof a));
	printf("  algbw        %.2f GB/s   busbw %.2f GB/s   (%s per GPU)\n", r->algbw_GBps,
	       r->busbw_GBps, fast_size_format(r->gpu_bytes, sz, sizeof sz));
	if (b)
		printf("  bound        %s   time/bound %.3f   LP %s   (binding: %s)\n",
		       simc_time(b->bound_s, c, sizeof c), b->bound_s > 0 ? r->time_s / b->bound_s : 0.0,
		       simc_time(b->lp_s, lp, sizeof lp), b->binding[0] ? b->binding : "-");
	else
		printf("  bound        n/a (give --traffic)\n");
	tier_util(r, true, &nic);
	tier_util(r, false, &up);
	printf("  utilisation  NIC mean %.1f%% max %.1f%%; scale-up mean %.1f%% max %.1f%%\n",
	       100 * nic.mean, 100 * nic.max, 100 * up.mean, 100 * up.max);
	n = fast_sim_top_resources(r, idx, TOP_RES);
	printf("  busiest     ");
	for (uint32_t k = 0; k < n; k++)
		printf(" %s %.1f%%%s", fast_sim_res_name(t, &r->res[idx[k]], name, sizeof name),
		       100 * r->res[idx[k]].util, k + 1 < n ? "," : "");
	printf("\n");
	if ((rc = print_busiest_nic(t, r)) != 0)
		return rc;
	printf("  engine       %u steps, %llu flows, %llu events, %llu allocations (%llu full)%s\n",
	       r->nsteps, (unsigned long long)r->flows, (unsigned long long)r->events,
	       (unsigned long long)r->recomputes, (unsigned long long)r->full_allocs,
	       o->so.epsilon > 0 ? " (scalable)" : " (exact)");
	if (o->timing)
		printf("  sim wall     %s\n", simc_time(r->wall_s, a, sizeof a));
	if (o->steps) {
		printf("  %5s  %-6s  %12s  %12s  %12s  %12s  %9s\n", "step", "kind", "ready us",
		       "start us", "end us", "bytes", "transfers");
		for (uint32_t s = 0; s < r->nsteps; s++) {
			const struct fast_sim_step *st = &r->steps[s];
			printf("  %5u  %-6s  %12.3f  %12.3f  %12.3f  %12llu  %9u\n", s, fast_step_kind_name(st->kind, st->tier),
			       st->ready_s * 1e6, st->start_s * 1e6, st->end_s * 1e6,
			       (unsigned long long)st->bytes, st->transfers);
		}
	}
	return 0;
}

/* The matrix of the traffic a plan serves: with --matrix the traffic holds
 * only that one (index 0). */
static const struct fast_matrix *matrix_for(const struct opts *o, const struct fast_traffic *tr,
					   const struct fast_plan *p)
{
	if (!tr->count)
		return NULL;
	if (o->in.matrix >= 0)
		return &tr->m[0];
	return p->matrix < tr->count ? &tr->m[p->matrix] : NULL;
}

/* One plan simulated and printed (include/fast/eval.h's case of one row):
 * the given plan (with its open view, or NULL) or, given NULL, matrix M
 * compiled with --algo as plan mi; its bound when M is known. */
static int sim_one(const struct opts *o, const struct fast_topo *t, const struct fast_plan *given,
		   const struct fast_plan_view *view, const struct fast_matrix *M, uint32_t mi,
		   bool first)
{
	struct fast_case_algo a = { .algo = given ? NULL : o->algo, .opts = o->ao, .plan = given,
				    .view = view, .timeline = first && (o->timeline || o->svg) };
	struct fast_case cs;
	struct fast_case_result cr;
	struct fast_case_row *w;
	struct fast_plan *own;
	struct fast_err err;
	int rc = 0;

	fast_case_init(&cs, t, M);
	cs.algos = &a;
	cs.nalgos = 1;
	cs.sim = o->so;
	cs.bound = M ? FAST_CASE_BOUND_LP : FAST_CASE_BOUND_NONE; /* token traffic: the token bound */
	if (fast_case_eval(&cs, &cr, &err) < 0) {
		w = cr.rows;
		if (cr.bound_rc == 0 && w && w->stage && strcmp(w->stage, "sim") == 0) {
			if (o->in.plan_path)
				fast_err_prefix(&err, "%s: plan %u (%s)", o->in.plan_path, w->plan->matrix,
						w->plan->label);
			else
				fast_err_prefix(&err, "plan %u (%s)", mi, M->label);
		}
		fast_case_result_free(&cr);
		return cli_report(&err);
	}
	w = &cr.rows[0];
	if (!given) { /* the compiled plan's number and label are the traffic's */
		own = &w->own;
		own->matrix = mi;
		snprintf(own->label, sizeof own->label, "%s", M->label);
	}
	if (o->in.json) {
		if (fast_sim_json_plan(stdout, t, w->plan, &w->sim, cr.bounded ? &cr.bound : NULL,
				       &o->so, o->steps, o->timing, first, &err) < 0) {
			fast_case_result_free(&cr);
			return cli_report(&err);
		}
	} else if ((rc = print_human(o, t, w->plan, &w->sim, cr.bounded ? &cr.bound : NULL,
				     first)) != 0) {
		fast_case_result_free(&cr);
		return rc;
	}
	if (first && o->timeline)
		rc = simc_write_trace(o->timeline, t, &w->sim);
	if (rc == 0 && first && o->svg) {
		char title[320];
		snprintf(title, sizeof title, "%s on %s (%u x %u), matrix %u (%s)", w->plan->algo,
			 t->name, t->servers, t->gpus, w->plan->matrix, w->plan->label);
		rc = simc_write_svg(o->svg, t, &w->sim, title);
	}
	fast_case_result_free(&cr);
	return rc;
}

static void print_head(const struct opts *o, const struct fast_topo *t)
{
	if (o->in.json)
		fast_sim_json_head(stdout, t);
}

/* Simulate and print every plan of ps (proved already when checked); plan
 * kept_i (UINT32_MAX: none) through its open view kept, the one its proof
 * opened. */
static int simulate_each(const struct opts *o, const struct fast_topo *t, struct fast_planset *ps,
			 const struct fast_traffic *tr, const struct fast_plan_view *kept,
			 uint32_t kept_i)
{
	bool first = true;
	int rc = 0;

	print_head(o, t);
	for (uint32_t i = 0; i < ps->count; i++) {
		const struct fast_plan *p = &ps->plans[i];

		if (o->in.matrix >= 0 && p->matrix != (uint64_t)o->in.matrix)
			continue;
		if ((rc = sim_one(o, t, p, i == kept_i ? kept : NULL, matrix_for(o, tr, p), p->matrix,
				  first)) != 0)
			return rc;
		cli_progress_step(o->pr, i + 1);
		cli_progress_clear(o->pr);
		if (!first && (o->timeline || o->svg) && i == 1)
			cli_warn("--timeline/--svg show the first plan only (choose one with --matrix)");
		first = false;
	}
	if (first)
		return cli_fail(FAST_EUSAGE, "--matrix %lld: no plan serves that matrix",
				(long long)o->in.matrix);
	if (o->in.json)
		fast_sim_json_tail(stdout);
	return 0;
}

/* Compile every matrix with --algo, simulate and print it (two units of
 * progress a matrix: the compile, the simulation). */
static int compile_each(const struct opts *o, const struct fast_topo *t, const struct fast_traffic *tr)
{
	int rc;

	print_head(o, t);
	for (uint32_t i = 0; i < tr->count; i++) {
		cli_progress_step(o->pr, 2 * (uint64_t)i + 1);
		if ((rc = sim_one(o, t, NULL, NULL, &tr->m[i],
				  o->in.matrix >= 0 ? (uint32_t)o->in.matrix : i, i == 0)) != 0)
			return rc;
		cli_progress_step(o->pr, 2 * (uint64_t)i + 2);
		cli_progress_clear(o->pr);
		if (i == 1 && (o->timeline || o->svg))
			cli_warn("--timeline/--svg show the first plan only (choose one with --matrix)");
	}
	if (o->in.json)
		fast_sim_json_tail(stdout);
	return 0;
}

/* Every plan given with its traffic is proved before anything prints; the
 * first one proved keeps its view for its simulation, so a plan file of
 * one plan is validated and expanded once (the others are opened again
 * when simulated: views of every plan at once would hold every expansion). */
static int simulate_all(const struct opts *o, const struct fast_topo *t, struct fast_planset *ps,
			const struct fast_traffic *tr)
{
	struct fast_plan_view kept;
	uint32_t kept_i = UINT32_MAX;
	int rc = 0;

	for (uint32_t i = 0; o->in.plan_path && !o->no_check && i < ps->count; i++) {
		const struct fast_plan *p = &ps->plans[i];
		const struct fast_matrix *M;
		bool keep = kept_i == UINT32_MAX;
		if (o->in.matrix >= 0 && p->matrix != (uint64_t)o->in.matrix)
			continue;
		M = matrix_for(o, tr, p);
		if (!M)
			continue;
		if ((rc = simc_check_plan(o->in.plan_path, i, p, t, M, keep ? &kept : NULL)) != 0)
			break;
		if (keep)
			kept_i = i;
	}
	if (rc == 0)
		rc = simulate_each(o, t, ps, tr, kept_i == UINT32_MAX ? NULL : &kept, kept_i);
	if (kept_i != UINT32_MAX)
		fast_plan_view_close(&kept);
	return rc;
}

int cmd_sim(int argc, char **argv)
{
	struct cli_scan s;
	struct opts o;
	struct fast_topo t;
	struct fast_traffic tr = { 0 };
	struct fast_planset ps = { 0 };
	unsigned given = 0;
	struct cli_progress pr;
	int rc;

	memset(&o, 0, sizeof o);
	o.pr = &pr;
	cli_inputs_init(&o.in);
	fast_sim_algo_opts_default(&o.ao);
	fast_sim_opts_default(&o.so);
	for (cli_begin(&s, argc, argv, "sim"); cli_more(&s);) {
		if (cli_inputs_option(&s, &o.in) || cli_algo_option(&s, &o.ao, &given) ||
		    simc_sim_option(&s, &o.so) || cli_value(&s, "--algo", &o.algo) ||
		    cli_value(&s, "--timeline", &o.timeline) || cli_value(&s, "--svg", &o.svg))
			continue;
		if (cli_flag(&s, "--steps")) {
			o.steps = true;
			continue;
		}
		if (cli_flag(&s, "--timing")) {
			o.timing = true;
			continue;
		}
		if (cli_flag(&s, "--no-check")) {
			o.no_check = true;
			continue;
		}
		return cli_unknown(&s);
	}
	if ((rc = cli_end(&s, false)) >= 0)
		return rc;
	if (o.algo && !o.in.traffic_path)
		return cli_usage_error("sim", "--algo needs --traffic FILE");
	if (!o.in.plan_path && !o.in.traffic_path)
		return cli_usage_error("sim", "give --plan FILE, or --traffic FILE [--algo A]");
	if (!o.in.plan_path && !o.algo)
		o.algo = "fast"; /* as plan, run and gate */
	if (o.in.plan_path && o.algo)
		return cli_usage_error("sim", "--algo compiles the traffic; it does not apply to --plan");
	if (o.in.plan_path && given)
		return cli_usage_error("sim", "compiler options do not apply to --plan");
	if (o.algo && ((rc = cli_algo_known("sim", "--algo", o.algo, NULL, 0)) != 0 ||
		       (rc = cli_algo_applies("sim", &o.algo, 1, given)) != 0))
		return rc;
	if (o.no_check && !(o.in.plan_path && o.in.traffic_path))
		return cli_usage_error("sim", "--no-check skips proving --plan for --traffic: give both");
	if ((rc = cli_load_topo(&o.in, &t)) != 0)
		return rc;
	if (o.in.traffic_path && (rc = cli_load_traffic(&o.in, &t, &tr)) != 0)
		return rc;
	if (o.in.plan_path) {
		rc = cli_load_plans(&o.in, &ps);
		cli_progress_begin(&pr, "sim", ps.count);
	} else {
		cli_progress_begin(&pr, "sim", 2 * (uint64_t)tr.count);
	}
	if (rc == 0) {
		const char *outs[] = { o.timeline, o.svg };
		rc = cli_outs_check(outs, 2);
	}
	if (rc == 0)
		rc = o.in.plan_path ? simulate_all(&o, &t, &ps, &tr) : compile_each(&o, &t, &tr);
	cli_progress_end(&pr);
	fast_planset_free(&ps);
	fast_traffic_free(&tr);
	return rc;
}
