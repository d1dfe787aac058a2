/*
 * cli_load.c - loading a command's inputs (see cli.h): the topology (a file,
 * or a preset whose shape may come from the traffic's GPU count), the
 * traffic checked against it and cut to --matrix, the plan file, and the
 * plan that serves each matrix.  Every loader records its file for the
 * same-file rule (cli_input, cli_files.c) and prints what is wrong itself,
 * with the --servers/--gpus that would fit a preset when the shapes
 * disagree.
 */
#define _GNU_SOURCE
#include "cli.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* The traffic cli_load_topo() read for a preset's shape, kept for the
 * cli_load_traffic() that follows (every command loads the topology
 * first): one read of the file.  Process-wide, like the file records. */
static struct {
	bool have;
	char path[PATH_MAX];
	struct fast_traffic t;
} early;

static void early_drop(void)
{
	if (early.have)
		fast_traffic_free(&early.t);
	early.have = false;
}

/* "give --servers N --gpus G with N x G = ng (e.g. ...)": flags that fit
 * ng GPUs, with as many GPUs per server as divide both ng and g (servers
 * of the preset, partly used), else the most below g that divide ng. */
static void shape_hint(uint32_t ng, uint32_t g, char *buf, size_t len)
{
	uint32_t k = (uint32_t)fast_gcd_u64(ng, g ? g : 1);

	/* g prime to ng (--gpus 5 for 12): the largest divisor of ng below g */
	for (uint32_t d = g < ng ? g : ng; k == 1 && d > 1; d--)
		if (ng % d == 0)
			k = d;

	snprintf(buf, len, "give --servers N --gpus G with N x G = %u (e.g. --servers %u --gpus %u)",
		 ng, ng / k, k);
}

/* The preset's GPUs per server (--gpus, else its own); 0 after printing
 * why the preset does not load. */
static int preset_gpus(const struct cli_inputs *in, uint32_t *gpus)
{
	struct fast_topo t;
	struct fast_err err;

	if (fast_topo_preset(in->preset, 1, in->gpus, NULL, &t, &err) < 0)
		return cli_report(&err);
	*gpus = t.gpus;
	return 0;
}

/* Servers from the traffic's GPU count (no --servers given): 0 and
 * *servers set, or an exit status after printing. */
static int servers_from_traffic(const struct cli_inputs *in, uint32_t *servers)
{
	struct fast_err err;
	uint32_t g = 0;
	int rc;

	if ((rc = preset_gpus(in, &g)) != 0)
		return rc;
	early_drop();
	cli_input(in->traffic_path);
	if (fast_traffic_load(in->traffic_path, &in->lim, &early.t, &err) < 0)
		return cli_report(&err);
	early.have = true;
	snprintf(early.path, sizeof early.path, "%s", in->traffic_path);
	if (early.t.ng % g != 0) {
		char hint[160];
		uint32_t ng = early.t.ng;
		shape_hint(ng, g, hint, sizeof hint);
		early_drop();
		return cli_fail(FAST_EINPUT, "%s: %u GPUs is not a multiple of %u GPUs per server%s: %s",
				in->traffic_path, ng, g, in->gpus ? " (--gpus)" : "", hint);
	}
	*servers = early.t.ng / g;
	return 0;
}

/* --nics and --nic on a loaded topology, validated again. */
static int apply_nics(const struct cli_inputs *in, struct fast_topo *t)
{
	struct fast_err err;

	if (in->nics) {
		t->nics = in->nics;
		for (uint32_t i = 0; i < t->noverrides; i++)
			if (t->nic_override[i].nic >= t->nics)
				return cli_fail(FAST_EUSAGE,
						"--nics %u: the topology overrides NIC %u of server %u",
						in->nics, t->nic_override[i].nic,
						t->nic_override[i].server);
	}
	for (uint32_t i = 0; i < in->nnic; i++) {
		const struct fast_nic_override *o = &in->nic[i];
		if (fast_topo_set_nic(t, o->server, o->nic, o->fraction, &err) < 0) {
			early_drop();
			return cli_fail(err.code == FAST_ELIMIT ? FAST_ELIMIT : FAST_EUSAGE, "--nic: %s",
					err.msg);
		}
	}
	if ((in->nics || in->nnic) && fast_topo_validate(t, &in->lim, &err) < 0) {
		early_drop();
		return cli_fail(FAST_EUSAGE, "--nics/--nic: %s", err.msg);
	}
	return 0;
}

int cli_load_topo(const struct cli_inputs *in, struct fast_topo *out)
{
	struct fast_err err;
	int rc;

	if (in->topo_path && in->preset)
		return cli_usage_error("topo", "give either --topo or --preset, not both");
	if (in->topo_path) {
		if (in->servers || in->gpus)
			return cli_usage_error("topo", "--servers/--gpus scale a --preset, not a --topo file");
		cli_input(in->topo_path);
		rc = fast_topo_load(in->topo_path, &in->lim, out, &err);
	} else if (in->preset) {
		uint32_t servers = in->servers;
		if (!servers && in->traffic_path && (rc = servers_from_traffic(in, &servers)) != 0)
			return rc;
		rc = fast_topo_preset(in->preset, servers, in->gpus, &in->lim, out, &err);
	} else {
		return cli_fail(FAST_EUSAGE, "no topology: give --topo FILE or --preset NAME");
	}
	if (rc < 0) {
		early_drop();
		return cli_report(&err);
	}
	return apply_nics(in, out);
}

int cli_load_traffic(const struct cli_inputs *in, const struct fast_topo *topo,
		     struct fast_traffic *out)
{
	struct fast_err err;
	struct fast_traffic t;

	if (!in->traffic_path)
		return cli_fail(FAST_EUSAGE, "no traffic: give --traffic FILE");
	cli_input(in->traffic_path);
	if (early.have && strcmp(early.path, in->traffic_path) == 0) {
		t = early.t;
		early.have = false;
	} else if (fast_traffic_load(in->traffic_path, &in->lim, &t, &err) < 0) {
		return cli_report(&err);
	}
	if (topo && fast_traffic_check_topo(&t, topo, in->traffic_path, &err) < 0) {
		if (in->preset) {
			char hint[160];
			shape_hint(t.ng, topo->gpus, hint, sizeof hint);
			if (!in->gpus && t.ng % topo->gpus == 0)
				snprintf(hint, sizeof hint, "give --servers %u (or leave it out)",
					 t.ng / topo->gpus);
			else if (!in->gpus && t.ng % topo->servers == 0)
				snprintf(hint, sizeof hint, "give --servers %u --gpus %u", topo->servers,
					 t.ng / topo->servers);
			snprintf(err.msg + strlen(err.msg), sizeof err.msg - strlen(err.msg), ": %s",
				 hint);
		}
		fast_traffic_free(&t);
		return cli_report(&err);
	}
	if (in->matrix >= 0) {
		if ((uint64_t)in->matrix >= t.count) {
			uint32_t count = t.count;
			fast_traffic_free(&t);
			return cli_fail(FAST_EUSAGE, "--matrix %lld: %s has %u matrices (0..%u)",
					(long long)in->matrix, in->traffic_path, count,
					count ? count - 1 : 0);
		}
		/* keep only the chosen matrix, moved to index 0 */
		uint32_t k = (uint32_t)in->matrix;
		for (uint32_t i = 0; i < t.count; i++)
			if (i != k) {
				free(t.m[i].bytes);
				free(t.m[i].groups);
				free(t.m[i].dsts);
				free(t.m[i].compute_pairs);
			}
		if (k != 0)
			t.m[0] = t.m[k];
		t.count = 1;
	}
	*out = t;
	return 0;
}

int cli_load_plans(const struct cli_inputs *in, struct fast_planset *out)
{
	struct fast_err err;

	if (!in->plan_path)
		return cli_fail(FAST_EUSAGE, "no plan: give --plan FILE");
	cli_input(in->plan_path);
	if (fast_planset_load(in->plan_path, &in->lim, out, &err) < 0)
		return cli_report(&err);
	return 0;
}

/* The plan serving matrix m (index m of the traffic when all are loaded,
 * or the chosen one): NULL with a message when there is none. */
const struct fast_plan *cli_plan_for(const struct fast_planset *ps, const struct cli_inputs *in,
				     uint32_t m, uint32_t nmat, struct fast_err *err)
{
	if (in->matrix >= 0) {
		uint32_t want = (uint32_t)in->matrix;
		if (ps->count == 1 && ps->plans[0].matrix == want)
			return &ps->plans[0];
		for (uint32_t i = 0; i < ps->count; i++)
			if (ps->plans[i].matrix == want)
				return &ps->plans[i];
		fast_err_set(err, FAST_EINPUT, "%s: no plan serves matrix %u", in->plan_path, want);
		return NULL;
	}
	if (ps->count != nmat) {
		fast_err_set(err, FAST_EINPUT,
			     "%s holds %u plans but %s has %u matrices (use --matrix I for one)",
			     in->plan_path, ps->count, in->traffic_path, nmat);
		return NULL;
	}
	if (ps->plans[m].matrix != m) {
		fast_err_set(err, FAST_EINPUT, "%s: /plans/%u/matrix: plan %u serves matrix %u, not %u",
			     in->plan_path, m, m, ps->plans[m].matrix, m);
		return NULL;
	}
	return &ps->plans[m];
}
