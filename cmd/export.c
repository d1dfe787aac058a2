/*
 * export.c - `fast export`: write a plan in another system's format.
 * Today: MSCCL's XML algorithm format (lib/export/msccl.h), which MSCCL and
 * RCCL's MSCCL path load.  The format moves uniform chunks, so the export
 * quantises and reports on stderr how many bytes the rounding changed.
 */
#include <stdio.h>
#include <string.h>

#include "builtin.h"
#include "cli.h"
#include "lib/export/msccl.h"

const char cmd_export_usage[] =
	"fast export --plan FILE [--format msccl] [--matrix I] [--traffic FILE] [options] [-o OUT.xml]\n"
	"\n"
	"Write one plan of a plan file as an MSCCL algorithm (XML: <algo>, <gpu>,\n"
	"<tb>, <step>), coll=\"alltoall\", out of place.  Each GPU's input buffer\n"
	"holds its messages in destination order, its output buffer what it\n"
	"receives in source order; relays use the scratch buffer.\n"
	"\n"
	"  --plan FILE        the plan file (required)\n"
	"  --format msccl     output format (the only one today)\n"
	"  --matrix I         the plan serving matrix I (needed when the file has several)\n"
	"  --traffic FILE     the traffic: adds the diagonal as local copies and\n"
	"                     checks that the plan's pieces fit the messages\n"
	"  --chunk BYTES      chunk size (64K, 1MiB; 0 = automatic): the gcd of all message\n"
	"                     sizes and piece boundaries, or larger to keep each\n"
	"                     buffer within --max-chunks chunks\n"
	"  --max-chunks N     chunks per buffer for the automatic size (default 1024)\n"
	"  --max-cnt N        chunks per step (default 64; MSCCL needs < 72)\n"
	"  --name NAME        <algo name=...> (default fast-<algo>)\n"
	"  --proto P          Simple (default), LL or LL128\n"
	"  --pad              uniform buffers: every GPU's i_chunks and o_chunks equal\n"
	"                     nchunksperloop, as MSCCL's alltoall (same count on every\n"
	"                     rank) expects; the tails are never touched\n"
	"  -o FILE            output (default: standard output)\n"
	"\n"
	"Stderr reports the chunk size, the bytes changed by rounding and their\n"
	"relative error, and MSCCL runtime limits the program exceeds.\n"
	"Exit: 0 ok, 2 usage, 3 bad input, 4 runtime.\n";

/* Index of the plan to export, or -1 after reporting (*rc = exit status). */
static int pick_plan(const struct fast_planset *ps, int64_t matrix, const char *path, int *rc)
{
	if (matrix < 0) {
		if (ps->count == 1)
			return 0;
		*rc = cli_usage_error("export", "%s holds %u plans: choose one with --matrix", path,
				      ps->count);
		return -1;
	}
	for (uint32_t i = 0; i < ps->count; i++)
		if (ps->plans[i].matrix == (uint64_t)matrix)
			return (int)i;
	*rc = cli_fail(FAST_EUSAGE, "--matrix %lld: %s has no plan for that matrix",
		       (long long)matrix, path);
	return -1;
}

int cmd_export(int argc, char **argv)
{
	struct cli_scan s;
	struct cli_inputs in;
	struct fast_msccl_opts mo;
	struct fast_planset ps = { 0 };
	struct fast_traffic tr = { 0 };
	struct fast_msccl m = { 0 };
	struct fast_err err;
	struct cli_out out;
	const char *format = "msccl", *name = NULL, *proto = NULL;
	const uint64_t *D = NULL;
	int rc, k;

	cli_inputs_init(&in);
	fast_msccl_opts_default(&mo);
	for (cli_begin(&s, argc, argv, "export"); cli_more(&s);) {
		if (cli_inputs_option(&s, &in) || cli_value(&s, "--format", &format) ||
		    cli_size(&s, "--chunk", &mo.chunk_bytes) ||
		    cli_u32(&s, "--max-chunks", 1, 1u << 30, &mo.max_chunks) ||
		    cli_u32(&s, "--max-cnt", 1, 71, &mo.max_cnt) || cli_value(&s, "--name", &name) ||
		    cli_value(&s, "--proto", &proto))
			continue;
		if (cli_flag(&s, "--pad")) {
			mo.pad = true;
			continue;
		}
		return cli_unknown(&s);
	}
	if ((rc = cli_end(&s, false)) >= 0)
		return rc;
	if (strcmp(format, "msccl") != 0)
		return cli_usage_error("export", "--format: unknown format '%.40s' (known: msccl)", format);
	if (!in.plan_path)
		return cli_usage_error("export", "--plan FILE is required");
	if (name)
		snprintf(mo.name, sizeof mo.name, "%s", name);
	if (proto) {
		if (strcmp(proto, "Simple") && strcmp(proto, "LL") && strcmp(proto, "LL128"))
			return cli_usage_error("export", "--proto: '%.20s' is not Simple, LL or LL128", proto);
		snprintf(mo.proto, sizeof mo.proto, "%s", proto);
	}
	if ((rc = cli_load_plans(&in, &ps)) != 0)
		return rc;
	k = pick_plan(&ps, in.matrix, in.plan_path, &rc);
	if (k < 0)
		goto done;
	if (in.traffic_path) {
		const struct fast_plan *p = &ps.plans[k];
		if ((rc = cli_load_traffic(&in, NULL, &tr)) != 0)
			goto done;
		if (fast_plan_fits_traffic(p, tr.ng, &err) < 0) {
			fast_err_prefix(&err, "%s", in.traffic_path);
			rc = cli_report(&err);
			goto done;
		}
		if (in.matrix >= 0) {
			D = tr.m[0].bytes;
		} else if (p->matrix < tr.count) {
			D = tr.m[p->matrix].bytes;
		} else {
			rc = cli_fail(FAST_EINPUT, "%s has no matrix %u (the plan's)", in.traffic_path,
				      p->matrix);
			goto done;
		}
	}
	if (fast_msccl_build(&ps.plans[k], D, &mo, &m, &err) < 0) {
		if (err.code == FAST_EINPUT)
			fast_err_prefix(&err, "%s", in.plan_path);
		rc = cli_report(&err);
		goto done;
	}
	{
		char cb[32];
		if ((rc = cli_out_open(&out, in.out_path)) != 0)
			goto done;
		if (fast_msccl_write(&m, out.f, &err) < 0) {
			rc = cli_out_fail(&out, &err);
			goto done;
		}
		if ((rc = cli_out_commit(&out)) != 0)
			goto done;
		fprintf(stderr,
			"fast export: msccl: %u GPUs, %u channels, %u thread blocks, %zu steps, chunk %s (%llu B)\n",
			m.ngpus, m.nchannels, m.ntbs, m.nsteps, fast_size_format(m.chunk_bytes, cb, sizeof cb),
			(unsigned long long)m.chunk_bytes);
		fprintf(stderr,
			"fast export: rounding changed %llu of %llu bytes (relative error %.3e); %llu piece boundaries moved, %llu pieces dropped\n",
			(unsigned long long)m.rounded_bytes, (unsigned long long)m.total_bytes,
			m.total_bytes ? (double)m.rounded_bytes / (double)m.total_bytes : 0.0,
			(unsigned long long)m.boundary_moves, (unsigned long long)m.dropped_pieces);
		if (m.max_tb_steps)
			cli_warn("a thread block has %u steps, over MSCCL's %u: the runtime will refuse this program (use --chunk to make chunks larger)",
				 m.max_tb_steps, FAST_MSCCL_MAX_STEPS);
		if (m.max_tbs_per_channel)
			cli_warn("a channel holds %u thread blocks of one GPU, over MSCCL's %u",
				 m.max_tbs_per_channel, FAST_MSCCL_MAX_TB_PER_CHANNEL);
	}
	rc = 0;
done:
	fast_msccl_free(&m);
	fast_traffic_free(&tr);
	fast_planset_free(&ps);
	return rc;
}
