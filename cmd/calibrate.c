/*
 * calibrate.c - `fast calibrate`: fit a topology's per-tier latency and
 * efficiency to measurements (nccl-tests sendrecv_perf / alltoall_perf
 * output, `fast run --json` output) and write the fitted topology.
 */
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "cli.h"
#include "lib/calib.h"
#include "lib/json.h"

const char cmd_calibrate_usage[] =
	"fast calibrate (--topo FILE | --preset NAME [--servers N] [--gpus G])\n"
	"               [--up-sendrecv FILE] [--out-sendrecv FILE]\n"
	"               [--out-alltoall FILE [--ranks N]] [--fast-run FILE]\n"
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
	"  --out-alltoall FILE  alltoall_perf over the cluster: fits scale-out, with\n"
	"                       size x (n - G) / n bytes leaving each NIC\n"
	"  --ranks N            ranks of that alltoall_perf run (default: N x G)\n"
	"  --fast-run FILE      `fast run --json` output of a uniform traffic:\n"
	"                       fits scale-out like alltoall_perf (median times)\n"
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
		pts->bytes[pts->n] = one.bytes[i];
		pts->time_us[pts->n] = one.time_us[i];
		pts->n++;
	}
	return 0;
}

int cmd_calibrate(int argc, char **argv)
{
	static struct fast_calib_points pts[2];
	struct cli_inputs in;
	struct cli_scan s;
	struct fast_topo topo;
	struct source src[8];
	struct fast_calib_fit fit[2];
	double line0[2]; /* the line rates before the fit */
	bool have[2] = { false, false }, clamped[2] = { false, false };
	uint32_t ranks = 0;
	int nsrc = 0, rc;
	const char *v;

	cli_inputs_init(&in);
	for (cli_begin(&s, argc, argv, "calibrate"); cli_more(&s);) {
		if (cli_inputs_option(&s, &in) || cli_u32(&s, "--ranks", 2, 1u << 30, &ranks))
			continue;
		if (nsrc < 8 && cli_value(&s, "--up-sendrecv", &v)) {
			src[nsrc++] = (struct source){ v, FAST_CALIB_SENDRECV, 0 };
			continue;
		}
		if (nsrc < 8 && cli_value(&s, "--out-sendrecv", &v)) {
			src[nsrc++] = (struct source){ v, FAST_CALIB_SENDRECV, 1 };
			continue;
		}
		if (nsrc < 8 && cli_value(&s, "--out-alltoall", &v)) {
			src[nsrc++] = (struct source){ v, FAST_CALIB_ALLTOALL, 1 };
			continue;
		}
		if (nsrc < 8 && cli_value(&s, "--fast-run", &v)) {
			src[nsrc++] = (struct source){ v, FAST_CALIB_FASTRUN, 1 };
			continue;
		}
		return cli_unknown(&s);
	}
	if ((rc = cli_end(&s, false)) >= 0)
		return rc;
	if (nsrc == 0)
		return cli_usage_error("calibrate",
				       "no measurements: give --up-sendrecv, --out-sendrecv, --out-alltoall or --fast-run");
	if ((rc = cli_load_topo(&in, &topo)) != 0)
		return rc;
	pts[0].n = pts[1].n = 0;
	for (int i = 0; i < nsrc; i++)
		if ((rc = load_points(&src[i], &topo, ranks, &pts[src[i].tier], &in.lim)) != 0)
			return rc;
	for (int k = 0; k < 2; k++) {
		struct fast_err err;
		struct fast_tier *tier = k ? &topo.out : &topo.up;
		if (pts[k].n == 0)
			continue;
		if (fast_calib_fit(&pts[k], tier->bw_GBps, &fit[k], &err) < 0) {
			fast_err_prefix(&err, "%s tier", k ? "scale-out" : "scale-up");
			return cli_report(&err);
		}
		have[k] = true;
		line0[k] = tier->bw_GBps;
		tier->latency_us = fit[k].latency_us;
		if (fit[k].efficiency > 1) {
			cli_warn("%s: measured %.2f GB/s is above the line rate %.2f GB/s: line rate raised to it, efficiency 1",
				 k ? "scale-out" : "scale-up", fit[k].achieved_GBps, tier->bw_GBps);
			tier->bw_GBps = fit[k].achieved_GBps;
			tier->efficiency = 1;
			clamped[k] = true;
		} else {
			tier->efficiency = fit[k].efficiency;
		}
	}
	{
		/* the fit may leave the physical ranges (an efficiency of 1e-5,
		 * an alpha of an hour): write nothing a later load refuses */
		struct fast_err err;
		if (fast_topo_validate(&topo, &in.lim, &err) < 0) {
			fast_err_prefix(&err, "the fitted topology is out of range");
			return cli_report(&err);
		}
	}
	snprintf(topo.source + strlen(topo.source), sizeof topo.source - strlen(topo.source),
		 "%s", "; latency and efficiency fitted by fast calibrate");
	if (in.json) {
		printf("{\"tiers\": [");
		for (int k = 0, first = 1; k < 2; k++) {
			if (!have[k])
				continue;
			const struct fast_tier *tier = k ? &topo.out : &topo.up;
			/* efficiency and line_GBps: what the topology gets;
			 * fitted_efficiency: achieved / the given line rate */
			printf("%s{\"tier\": \"%s\", \"points\": %zu, \"latency_us\": %.4f, "
			       "\"achieved_GBps\": %.4f, \"line_GBps\": %.4f, \"efficiency\": %.4f, "
			       "\"fitted_efficiency\": %.4f, \"clamped\": %s, \"r2\": %.6f, "
			       "\"mean_rel_err\": %.6f, \"max_rel_err\": %.6f}",
			       first ? "" : ", ", k ? "out" : "up", fit[k].points, fit[k].latency_us,
			       fit[k].achieved_GBps, tier->bw_GBps, tier->efficiency,
			       fit[k].efficiency, clamped[k] ? "true" : "false", fit[k].r2,
			       fit[k].mean_rel_err, fit[k].max_rel_err);
			first = 0;
		}
		printf("]}\n");
	} else {
		printf("tier       points   alpha (us)  achieved GB/s  line GB/s  efficiency      R^2  mean err  max err\n");
		for (int k = 0; k < 2; k++) {
			const struct fast_tier *tier = k ? &topo.out : &topo.up;
			if (!have[k])
				continue;
			/* the columns are what the topology gets; a clamped
			 * fit says what it was clamped from */
			printf("%-9s %7zu %12.3f %14.3f %10.3f %11.4f %8.5f %8.2f%% %7.2f%%",
			       k ? "scale-out" : "scale-up", fit[k].points, fit[k].latency_us,
			       fit[k].achieved_GBps, tier->bw_GBps, tier->efficiency, fit[k].r2,
			       100 * fit[k].mean_rel_err, 100 * fit[k].max_rel_err);
			if (clamped[k])
				printf("  (efficiency clamped from %.4f; line rate raised from %.3f)",
				       fit[k].efficiency, line0[k]);
			putchar('\n');
		}
	}
	if (in.out_path) {
		struct cli_out o;
		struct fast_err err;
		if ((rc = cli_out_open(&o, in.out_path)) != 0)
			return rc;
		if (fast_topo_write(&topo, o.f, &err) < 0)
			return cli_out_fail(&o, &err);
		if ((rc = cli_out_commit(&o)) != 0)
			return rc;
	}
	return 0;
}
