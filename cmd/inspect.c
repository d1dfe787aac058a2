/*
 * inspect.c - `fast inspect` summarises every plan of a plan file: steps
 * per tier, rail stages, bytes per tier, bytes relayed, the largest step,
 * transfers and pieces after expansion, and the peak staging bytes per GPU
 * (what an executor must buffer for others; definition in include/fast/plan.h).
 * Thin: fast_planset_load(), one plan view and fast_plan_summarize()
 * per plan, then a table or JSON.
 */
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "cli.h"
#include "lib/base/json.h"

const char cmd_inspect_usage[] =
	"fast inspect --plan FILE [--traffic FILE] [--matrix I] [--json]\n"
	"\n"
	"Summarise each plan of a plan file: steps per tier, rail stages, bytes per\n"
	"tier, bytes relayed (sent by a GPU that is not their source), the largest\n"
	"step, transfers and pieces after expanding lanes and rail stages, and the\n"
	"peak staging bytes per GPU (bytes held for others; see include/fast/plan.h).\n"
	"\n"
	"Options:\n"
	"  --plan FILE        the plan file\n"
	"  --traffic FILE     the traffic the plans serve: needed by token plans\n"
	"                     (dispatch, combine), whose pieces name its groups\n"
	"  --matrix I         only the plan that serves matrix I\n"
	"  --json             machine-readable output (with per-GPU staging)\n"
	"  --max-gpus N       refuse plans of more than N GPUs (default 16384)\n";

static const char *human(uint64_t bytes, char *buf, size_t len)
{
	char h[32];
	if (bytes < 1024)
		snprintf(buf, len, "%llu B", (unsigned long long)bytes);
	else
		snprintf(buf, len, "%llu B (%s)", (unsigned long long)bytes,
			 fast_size_format(bytes, h, sizeof h));
	return buf;
}

static void print_table(uint32_t idx, const struct fast_plan *p, const struct fast_plan_summary *sm,
			uint64_t hash)
{
	char b[64];

	printf("plan %u: %s (matrix %u), algo %s, %u servers x %u GPUs%s%s\n", idx, p->label,
	       p->matrix, p->algo, p->servers, p->gpus, p->options[0] ? ", options: " : "",
	       p->options);
	printf("  steps          %u (%u up, %u out), %u rail stages\n", sm->steps_up + sm->steps_out,
	       sm->steps_up, sm->steps_out, sm->rail_stages);
	printf("  transfers      %llu\n", (unsigned long long)sm->transfers);
	printf("  pieces         %llu\n", (unsigned long long)sm->pieces);
	printf("  bytes up       %s\n", human(sm->bytes_up, b, sizeof b));
	printf("  bytes out      %s\n", human(sm->bytes_out, b, sizeof b));
	printf("  bytes relayed  %s\n", human(sm->bytes_relayed, b, sizeof b));
	printf("  largest step   %u: %s\n", sm->largest_step, human(sm->largest_step_bytes, b, sizeof b));
	printf("  peak staging   %s on GPU %u\n", human(sm->peak_staging, b, sizeof b),
	       sm->peak_staging_gpu);
	printf("  hash           %016llx\n", (unsigned long long)hash);
}

static void print_json(uint32_t idx, const struct fast_plan *p, const struct fast_plan_summary *sm,
		       uint64_t hash, const uint64_t *peak)
{
	printf("%s{\"plan\":%u,\"label\":", idx ? ",\n" : "\n", idx);
	fast_json_put_string(stdout, p->label);
	printf(",\"matrix\":%u,\"algo\":", p->matrix);
	fast_json_put_string(stdout, p->algo);
	printf(",\"options\":");
	fast_json_put_string(stdout, p->options);
	printf(",\"servers\":%u,\"gpus_per_server\":%u,\"gpus_total\":%llu,\"hash\":\"%016llx\",",
	       p->servers, p->gpus, (unsigned long long)p->servers * p->gpus, (unsigned long long)hash);
	printf("\"steps_up\":%u,\"steps_out\":%u,\"rail_stages\":%u,\"transfers\":%llu,"
	       "\"pieces\":%llu,\"bytes_up\":%llu,\"bytes_out\":%llu,\"bytes_relayed\":%llu,"
	       "\"largest_step\":%u,\"largest_step_bytes\":%llu,\"peak_staging_bytes\":%llu,"
	       "\"peak_staging_gpu\":%u,\"staging_bytes_per_gpu\":[",
	       sm->steps_up, sm->steps_out, sm->rail_stages, (unsigned long long)sm->transfers,
	       (unsigned long long)sm->pieces, (unsigned long long)sm->bytes_up,
	       (unsigned long long)sm->bytes_out, (unsigned long long)sm->bytes_relayed,
	       sm->largest_step, (unsigned long long)sm->largest_step_bytes,
	       (unsigned long long)sm->peak_staging, sm->peak_staging_gpu);
	for (uint32_t g = 0; g < p->servers * p->gpus; g++)
		printf("%s%llu", g ? "," : "", (unsigned long long)peak[g]);
	printf("]}");
}

/* The matrix plan i serves in t (t holds only matrix --matrix, at 0, when
 * that is given): NULL with the message when t has no such matrix. */
static const struct fast_matrix *traffic_matrix(const struct cli_inputs *in,
						const struct fast_traffic *t,
						const struct fast_plan *p, uint32_t i,
						struct fast_err *err)
{
	uint32_t k = in->matrix >= 0 ? 0 : p->matrix;

	if (k >= t->count) {
		fast_err_set(err, FAST_EINPUT, "%s: /plans/%u/matrix: plan %u serves matrix %u, "
			     "and %s has %u matrices", in->plan_path, i, i, p->matrix,
			     in->traffic_path, t->count);
		return NULL;
	}
	return &t->m[k];
}

int cmd_inspect(int argc, char **argv)
{
	struct cli_inputs in;
	struct fast_planset ps;
	struct fast_traffic t = { 0 };
	struct fast_err err;
	uint32_t shown = 0;
	int rc;

	cli_inputs_init(&in);
	if ((rc = cli_scan_inputs(argc, argv, "inspect", &in)) >= 0)
		return rc;
	if (in.traffic_path && (rc = cli_load_traffic(&in, NULL, &t)) != 0)
		return rc;
	if ((rc = cli_load_plans(&in, &ps)) != 0) {
		fast_traffic_free(&t);
		return rc;
	}
	if (in.json)
		printf("{\"plans\":[");
	for (uint32_t i = 0; i < ps.count; i++) {
		const struct fast_plan *p = &ps.plans[i];
		struct fast_plan_summary sm;
		struct fast_plan_view v;
		const struct fast_matrix *m = NULL;
		uint64_t *peak;
		if (in.matrix >= 0 && p->matrix != (uint64_t)in.matrix)
			continue;
		if (!t.count && p->kind != FAST_TRAFFIC_BYTES) {
			const char *kind = fast_traffic_kind_name(p->kind); /* (a literal) */
			fast_planset_free(&ps);
			return cli_fail(FAST_EINPUT, "%s: /plans/%u: a %s plan names the groups of its "
					"traffic: give --traffic FILE", in.plan_path, i, kind);
		}
		/* with --matrix the traffic holds only that matrix, at 0 */
		if (t.count && (m = traffic_matrix(&in, &t, p, i, &err)) == NULL) {
			fast_planset_free(&ps);
			fast_traffic_free(&t);
			return cli_report(&err);
		}
		peak = fast_calloc((size_t)p->servers * p->gpus, sizeof *peak);
		if (!peak) {
			fast_planset_free(&ps);
			fast_traffic_free(&t);
			return cli_fail(FAST_ENOMEM, "inspect: out of memory");
		}
		if ((rc = fast_plan_view_open(&v, p, m, &err)) == 0) {
			rc = fast_plan_summarize(&v, &sm, peak, &err);
			fast_plan_view_close(&v);
		}
		if (rc < 0) {
			fast_err_prefix(&err, "%s: /plans/%u", in.plan_path, i);
			free(peak);
			fast_planset_free(&ps);
			fast_traffic_free(&t);
			return cli_report(&err);
		}
		if (in.json)
			print_json(shown, p, &sm, fast_plan_hash(p), peak);
		else
			print_table(i, p, &sm, fast_plan_hash(p));
		free(peak);
		shown++;
	}
	fast_planset_free(&ps);
	fast_traffic_free(&t);
	if (in.matrix >= 0 && shown == 0)
		return cli_fail(FAST_EINPUT, "%s: no plan serves matrix %lld", in.plan_path,
				(long long)in.matrix);
	if (in.json)
		printf("\n]}\n");
	return cli_stdout_finish();
}
