/*
 * bound.c - `fast bound`: lower bounds on the completion time of any
 * schedule for each traffic matrix on a topology (include/fast/bound.h): the closed
 * form (scale-up free) and the per-server GLPK LP (scale-up relaying
 * costs), with the resource that binds the LP.
 *
 * Output stays byte-identical for the same inputs: the GLPK solve time is a
 * measurement, so it goes to stderr in the human form and into "solve_s"
 * in --json; --no-timing leaves it out of both (golden tests use it).
 * LP values are printed to the nanosecond (and the ratio to 6 decimals)
 * in both forms, since their last bits may vary with the simplex path.
 */
#include <stdio.h>
#include <string.h>

#include "builtin.h"
#include "cli.h"
#include "fast/bound.h"

const char cmd_bound_usage[] =
	"fast bound (--topo FILE | --preset NAME [--servers N] [--gpus G]) --traffic FILE\n"
	"           [--nics K] [--nic S:K=F ...]\n"
	"           [--matrix I] [--closed-only] [--no-timing] [--json] [-o FILE]\n"
	"\n"
	"Lower bounds on the completion time of any schedule, per traffic matrix:\n"
	"  closed   largest cross-server egress or ingress of a server / the server's\n"
	"           effective NIC bandwidth (every NIC's rate): scale-up assumed free\n"
	"  LP       GLPK, one LP per server: cross-server bytes leave and enter through\n"
	"           any NIC of their server (GPUs sharing a NIC share its rate; a NIC\n"
	"           that is down carries nothing), relaying over scale-up costs port (switch)\n"
	"           or link (mesh, any paths) capacity, intra-server bytes use scale-up,\n"
	"           local copies are free; an oversubscribed core adds its capacity\n"
	"  binding  the resource with the largest share of the LP's dual\n"
	"Token traffic (dispatch, combine): the same on what every plan must move,\n"
	"deduplicated per server: a token leaves its server once, enters each\n"
	"destination server once, reaches each destination GPU over its NIC or\n"
	"scale-up (combine: the mirror; reductions cost no bandwidth here).\n"
	"Times in microseconds.\n"
	"\n"
	"  --closed-only   skip the LP (no GLPK)\n"
	"  --no-timing     do not report the GLPK solve time (reproducible output)\n"
	"  --json          machine-readable result\n"
	"  -o FILE         write the result to FILE (default: standard output)\n"
	"\n"
	"The solve time goes to stderr (human form) or \"solve_s\" (--json).\n"
	"Exit: 0 ok, 2 usage, 3 bad input, 4 solver failure.\n";

/* The NICs of a fabric that is not one healthy NIC per GPU: ", 4 NICs
 * per server", "; server 1 NIC 3 at 0.25 of the nominal rate, server 0
 * NIC 2 down" (at most 8 overrides named). */
static void print_nics(FILE *f, const struct fast_topo *t)
{
	uint32_t shown = 0;

	if (t->nics != t->gpus)
		fprintf(f, ", %u NICs per server", t->nics);
	for (uint32_t i = 0; i < t->noverrides; i++) {
		const struct fast_nic_override *o = &t->nic_override[i];
		if (o->fraction == 1.0)
			continue;
		if (shown == 8) {
			fprintf(f, ", ...");
			break;
		}
		fprintf(f, "%s server %u NIC %u ", shown++ ? "," : ";", o->server, o->nic);
		if (o->fraction > 0)
			fprintf(f, "at %g of the nominal rate", o->fraction);
		else
			fprintf(f, "down");
	}
}

static void print_topo_line(FILE *f, const struct fast_topo *t)
{
	fprintf(f, "topology: %s, %u servers x %u GPUs, %s scale-up %.2f GB/s effective%s, "
	       "NIC %.2f GB/s effective",
	       t->name, t->servers, t->gpus, t->up_kind == FAST_UP_MESH ? "mesh" : "switch",
	       fast_tier_Bps(&t->up) / 1e9, t->up_kind == FAST_UP_MESH ? " per link" : " per port",
	       fast_tier_Bps(&t->out) / 1e9);
	if (t->core_oversub > 1)
		fprintf(f, ", core %.3g:1", t->core_oversub);
	if (!fast_topo_nics_ideal(t))
		print_nics(f, t);
	fprintf(f, "\n");
}

int cmd_bound(int argc, char **argv)
{
	struct cli_scan s;
	struct cli_inputs in;
	struct fast_topo topo;
	struct fast_traffic tr = { 0 };
	bool closed_only = false, no_timing = false;
	double solve_total = 0;
	struct cli_out out;
	bool opened = false;
	FILE *f = stdout;
	uint64_t lps = 0;
	struct cli_progress pr = { 0 };
	int rc;

	cli_inputs_init(&in);
	for (cli_begin(&s, argc, argv, "bound"); cli_more(&s);) {
		if (cli_inputs_option(&s, &in))
			continue;
		if (cli_flag(&s, "--closed-only")) {
			closed_only = true;
			continue;
		}
		if (cli_flag(&s, "--no-timing")) {
			no_timing = true;
			continue;
		}
		return cli_unknown(&s);
	}
	if ((rc = cli_end(&s, false)) >= 0)
		return rc;
	if (!in.traffic_path)
		return cli_usage_error("bound", "--traffic FILE is required");
	if ((rc = cli_load_topo(&in, &topo)) != 0)
		return rc;
	if ((rc = cli_load_traffic(&in, &topo, &tr)) != 0)
		return rc;
	if ((rc = cli_out_open(&out, in.out_path)) != 0)
		goto done;
	f = out.f;
	opened = true;

	if (in.json) {
		fprintf(f, "{\n  \"topology\": ");
		fast_bound_json_topo(f, &topo);
		fprintf(f, ",\n  \"bounds\": [\n");
	} else {
		print_topo_line(f, &topo);
		if (closed_only)
			fprintf(f, "%6s  %-20s %14s\n", "matrix", "label", "closed_us");
		else
			fprintf(f, "%6s  %-20s %14s %14s %9s  %s\n", "matrix", "label", "closed_us",
			       "lp_us", "lp/closed", "binding");
	}
	cli_progress_begin(&pr, "bound", tr.count);
	for (uint32_t i = 0; i < tr.count; i++) {
		uint32_t index = in.matrix >= 0 ? (uint32_t)in.matrix : i;
		struct fast_bound b;
		struct fast_err err;

		if (fast_bound_compute(&topo, &tr.m[i], closed_only, &b, &err) < 0) {
			fast_err_prefix(&err, "matrix %u (%s)", index, tr.m[i].label);
			rc = cli_report(&err);
			goto done;
		}
		cli_progress_step(&pr, i + 1);
		if (out.is_stdout)
			cli_progress_clear(&pr);
		solve_total += b.solve_s;
		lps += b.lps_solved;
		if (in.json) {
			fast_bound_json(f, &b, index, tr.m[i].label, closed_only, !no_timing);
			fprintf(f, "%s\n", i + 1 < tr.count ? "," : "");
		} else if (closed_only) {
			fprintf(f, "%6u  %-20s %14.3f\n", index, tr.m[i].label, b.closed_s * 1e6);
		} else {
			char ratio[32];
			if (b.closed_s > 0)
				snprintf(ratio, sizeof ratio, "%.4f", b.lp_s / b.closed_s);
			else
				snprintf(ratio, sizeof ratio, "-");
			fprintf(f, "%6u  %-20s %14.3f %14.3f %9s  %s\n", index, tr.m[i].label,
			       b.closed_s * 1e6, b.lp_s * 1e6, ratio, b.binding);
		}
	}
	cli_progress_end(&pr);
	if (in.json)
		fprintf(f, "  ]\n}\n");
	else if (!closed_only && !no_timing)
		fprintf(stderr, "fast bound: GLPK solved %llu LPs for %u matrices in %.3f ms\n",
			(unsigned long long)lps, tr.count, solve_total * 1e3);
	rc = cli_out_commit(&out);
	opened = false;
done:
	cli_progress_end(&pr);
	if (opened)
		cli_out_abort(&out);
	fast_traffic_free(&tr);
	return rc;
}
