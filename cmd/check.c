/*
 * check.c - `fast check` proves each plan of a plan file correct for the
 * traffic matrix it serves (include/fast/check.h): every byte delivered exactly
 * once (token plans: every group's bytes at each destination, every
 * contribution summed once at the source), nothing forwarded before it
 * arrived, FAST scale-out steps one-to-one.  Prints "ok" or the precise reason per plan; exit 0 when all
 * are correct, 1 when one is not, 3 when a plan is malformed or does not
 * fit the topology or traffic.
 */
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "cli.h"
#include "fast/check.h"
#include "lib/base/json.h"

const char cmd_check_usage[] =
	"fast check --plan FILE (--topo FILE | --preset NAME [--servers N] [--gpus G])\n"
	"           [--nics K] [--nic S:K=F ...]\n"
	"           --traffic FILE [--matrix I] [--json]\n"
	"\n"
	"Prove each plan correct for its traffic matrix: every byte of every\n"
	"message reaches its destination exactly once, no GPU sends bytes it does\n"
	"not hold at that point of the plan (it started there, or they arrived in\n"
	"a step this one depends on), FAST scale-out steps are one-to-one, and no\n"
	"scale-out transfer goes through a NIC that is down (--nic S:K=0).\n"
	"On token traffic, a dispatch plan must deliver every byte of every group\n"
	"to each of its destination GPUs (copies may be forwarded again), and a\n"
	"combine plan must bring to each group's source the sum of all its\n"
	"destinations' contributions, each counted exactly once; a byte plan is\n"
	"proved against the traffic's per-GPU byte matrix.\n"
	"Plan i serves matrix i: the plan file holds one plan per matrix of the\n"
	"traffic, or with --matrix I, the plan for matrix I (alone or among all).\n"
	"\n"
	"Exit: 0 all plans correct, 1 a plan is incorrect (the reason names the\n"
	"step, transfer and piece), 3 bad input.\n"
	"\n"
	"Options:\n"
	"  --plan FILE        the plan file\n"
	"  --topo FILE | --preset NAME [--servers N] [--gpus G]   the fabric\n"
	"  --traffic FILE     the traffic the plans serve\n"
	"  --matrix I         check only the plan for matrix I\n"
	"  --json             machine-readable result\n"
	"  --max-gpus N       refuse more than N GPUs in total (default 16384)\n"
	"  --max-traffic-bytes B  refuse traffic whose dense matrices need more (default 4G)\n"
	"  --max-groups N     refuse traffic of more than N token groups (default 16777216)\n";

int cmd_check(int argc, char **argv)
{
	struct cli_inputs in;
	struct fast_topo topo;
	struct fast_traffic t;
	struct fast_planset ps;
	struct fast_plan_view v;
	struct fast_err err;
	uint32_t failed = 0, nmat;
	int rc;

	cli_inputs_init(&in);
	if ((rc = cli_scan_inputs(argc, argv, "check", &in)) >= 0)
		return rc;
	if (!in.plan_path)
		return cli_usage_error("check", "no plan: give --plan FILE");
	if ((rc = cli_load_topo(&in, &topo)) != 0)
		return rc;
	if ((rc = cli_load_traffic(&in, &topo, &t)) != 0)
		return rc;
	if ((rc = cli_load_plans(&in, &ps)) != 0) {
		fast_traffic_free(&t);
		return rc;
	}
	/* every plan is found before any is checked: a mismatch is bad input */
	for (uint32_t m = 0; m < t.count; m++) {
		if (!cli_plan_for(&ps, &in, m, t.count, &err)) {
			fast_planset_free(&ps);
			fast_traffic_free(&t);
			return cli_report(&err);
		}
	}
	if (in.json)
		printf("{\"plans\":[");
	for (uint32_t m = 0; m < t.count; m++) {
		const struct fast_plan *p = cli_plan_for(&ps, &in, m, t.count, &err);
		uint32_t pidx = (uint32_t)(p - ps.plans);
		/* a byte plan against the matrix's bytes (a token matrix's
		 * per-GPU bytes), a token plan against its groups */
		rc = fast_plan_view_open(&v, p, &t.m[m], &err);
		if (rc == 0) {
			rc = fast_plan_check(&v, &topo, &err);
			fast_plan_view_close(&v);
		}
		if (rc < 0 && rc != FAST_ECHECK) {
			fast_err_prefix(&err, "%s: /plans/%u", in.plan_path, pidx);
			fast_planset_free(&ps);
			fast_traffic_free(&t);
			return cli_report(&err);
		}
		if (rc < 0)
			failed++;
		if (in.json) {
			printf("%s{\"plan\":%u,\"matrix\":%u,\"label\":", m ? ",\n" : "\n", pidx, p->matrix);
			fast_json_put_string(stdout, p->label);
			printf(",\"algo\":");
			fast_json_put_string(stdout, p->algo);
			printf(",\"ok\":%s", rc < 0 ? "false" : "true");
			if (rc < 0) {
				printf(",\"error\":");
				fast_json_put_string(stdout, err.msg);
			}
			printf("}");
		} else if (rc < 0) {
			printf("plan %u (%s, matrix %u): FAIL: %s\n", pidx, p->label, p->matrix, err.msg);
		} else {
			printf("plan %u (%s, matrix %u): ok\n", pidx, p->label, p->matrix);
		}
	}
	if (in.json)
		printf("\n],\"ok\":%s}\n", failed ? "false" : "true");
	nmat = t.count;
	fast_planset_free(&ps);
	fast_traffic_free(&t);
	rc = cli_status(failed ? 1 : 0, cli_stdout_finish());
	if (rc == 1)
		fprintf(stderr, "fast: check failed: %u of %u plans incorrect\n", failed, nmat);
	return rc;
}
