/*
 * sim_json.c - the JSON form of simulation results (`fast sim --json`, and
 * the library API's fast_api_sim_json, include/fast/api.h): one writer, so
 * the command and foreign callers print the same document
 * (schemas/sim.schema.json).
 */
#include <stdio.h>
#include <stdlib.h>

#include "fast/bound.h"
#include "fast/sim.h"
#include "lib/base/json.h"

uint32_t fast_sim_top_resources(const struct fast_sim_result *r, uint32_t *idx, uint32_t k)
{
	uint32_t n = 0;

	if (k == 0)
		return 0;
	for (uint32_t i = 0; i < r->nres; i++) {
		uint32_t j;
		if (r->res[i].bytes == 0)
			continue;
		if (n < k)
			n++;
		else if (!(r->res[i].util > r->res[idx[n - 1]].util))
			continue;
		for (j = n - 1; j > 0 && r->res[i].util > r->res[idx[j - 1]].util; j--)
			idx[j] = idx[j - 1];
		idx[j] = i;
	}
	return n;
}

void fast_sim_json_head(FILE *f, const struct fast_topo *t)
{
	fprintf(f, "{\"topology\": \"%s\", \"servers\": %u, \"gpus_per_server\": %u, "
		"\"gpus_total\": %u, \"plans\": [\n", t->name, t->servers, t->gpus, fast_topo_ngpus(t));
}

void fast_sim_json_tail(FILE *f)
{
	fprintf(f, "\n]}\n");
}

/* "name": v as the shortest exact decimal, after sep */
static void num(FILE *f, const char *sep, const char *name, double v)
{
	fprintf(f, "%s\"%s\": ", sep, name);
	fast_json_put_double(f, v);
}

#define TOP_RES 6

void fast_sim_json_nic(FILE *f, const struct fast_sim_nic *c)
{
	fprintf(f, "{\"server\": %u, \"nic\": %u", c->server, c->nic);
	num(f, ", ", "rate_GBps", c->rate_Bps / 1e9);
	fprintf(f, ", \"out_bytes\": %llu, \"in_bytes\": %llu", (unsigned long long)c->bytes[0],
		(unsigned long long)c->bytes[1]);
	num(f, ", ", "out_util", c->util[0]);
	num(f, ", ", "in_util", c->util[1]);
	fputc('}', f);
}

void fast_sim_json_busiest_nic(FILE *f, const struct fast_sim_nic *c, int dir)
{
	fprintf(f, "\"busiest_nic\": ");
	if (!c) {
		fprintf(f, "null");
		return;
	}
	fprintf(f, "{\"server\": %u, \"nic\": %u, \"direction\": \"%s\", \"bytes\": %llu",
		c->server, c->nic, dir ? "in" : "out", (unsigned long long)c->bytes[dir]);
	num(f, ", ", "util", c->util[dir]);
	fputc('}', f);
}

void fast_sim_json_row_nics(FILE *f, const struct fast_sim_nic *nics, uint32_t n, bool list)
{
	uint32_t i = 0;
	int d = 0;
	bool any = fast_sim_busiest_nic(nics, n, &i, &d); /* sets d: before the call below */

	fprintf(f, ", ");
	fast_sim_json_busiest_nic(f, any ? &nics[i] : NULL, d);
	if (!list)
		return;
	fprintf(f, ", \"nics\": [");
	for (uint32_t k = 0; k < n; k++) {
		fprintf(f, "%s", k ? ", " : "");
		fast_sim_json_nic(f, &nics[k]);
	}
	fprintf(f, "]");
}

/* "nics": every NIC, then "busiest_nic" (a plan object's members) */
static int put_nics(FILE *f, const struct fast_topo *t, const struct fast_sim_result *r,
		    struct fast_err *err)
{
	struct fast_sim_nic *nics;
	uint32_t n, i = 0;
	int rc, d = 0;

	if ((rc = fast_sim_nics(t, r, &nics, &n, err)) < 0)
		return rc;
	fprintf(f, ",\n     \"nics\": [");
	for (uint32_t k = 0; k < n; k++) {
		fprintf(f, "%s", k ? ", " : "");
		fast_sim_json_nic(f, &nics[k]);
	}
	fprintf(f, "],\n     ");
	if (fast_sim_busiest_nic(nics, n, &i, &d))
		fast_sim_json_busiest_nic(f, &nics[i], d);
	else
		fast_sim_json_busiest_nic(f, NULL, 0);
	free(nics);
	return 0;
}

int fast_sim_json_plan(FILE *f, const struct fast_topo *t, const struct fast_plan *p,
		       const struct fast_sim_result *r, const struct fast_bound *b,
		       const struct fast_sim_opts *so, bool steps, bool timing, bool first,
		       struct fast_err *err)
{
	char name[48];
	uint32_t idx[TOP_RES], n = fast_sim_top_resources(r, idx, TOP_RES);
	int rc;

	fprintf(f, "%s    {\"matrix\": %u, \"label\": ", first ? "" : ",\n", p->matrix);
	fast_json_put_string(f, p->label);
	fprintf(f, ", \"algo\": ");
	fast_json_put_string(f, p->algo);
	num(f, ", ", "time_s", r->time_s);
	num(f, ", ", "algbw_GBps", r->algbw_GBps);
	num(f, ", ", "busbw_GBps", r->busbw_GBps);
	fprintf(f, ", \"gpu_bytes\": %llu,\n", (unsigned long long)r->gpu_bytes);
	if (b) {
		num(f, "     ", "bound_s", b->bound_s);
		num(f, ", ", "lp_s", b->lp_s);
		num(f, ", ", "latency_s", b->latency_s);
		num(f, ", ", "closed_bound_s", b->closed_s);
		num(f, ", ", "ratio", b->bound_s > 0 ? r->time_s / b->bound_s : 0.0);
		fprintf(f, ", \"binding\": ");
		fast_json_put_string(f, b->binding);
		fprintf(f, ",\n");
	} else {
		fprintf(f, "     \"bound_s\": null, \"ratio\": null,\n");
	}
	fprintf(f, "     \"flows\": %llu, \"events\": %llu, \"allocations\": %llu, \"congestion\": %s",
		(unsigned long long)r->flows, (unsigned long long)r->events,
		(unsigned long long)r->recomputes, so->congestion ? "true" : "false");
	num(f, ", ", "epsilon", so->epsilon);
	if (fast_sim_sync_of(t, p->algo, so->sync) == FAST_SIM_SYNC_RANK)
		fprintf(f, ", \"sync\": \"rank\"");
	if (so->in_flight > 1)
		fprintf(f, ", \"in_flight\": %u", so->in_flight);
	fprintf(f, ",\n");
	if (timing) {
		num(f, "     ", "sim_wall_s", r->wall_s);
		fprintf(f, ",\n");
	}
	fprintf(f, "     \"busiest\": [");
	for (uint32_t k = 0; k < n; k++) {
		fprintf(f, "%s{\"resource\": \"%s\"", k ? ", " : "",
			fast_sim_res_name(t, &r->res[idx[k]], name, sizeof name));
		num(f, ", ", "util", r->res[idx[k]].util);
		fprintf(f, "}");
	}
	fprintf(f, "],\n     \"resources\": [");
	n = 0;
	for (uint32_t i = 0; i < r->nres; i++) {
		if (r->res[i].kind == FAST_RES_MESH_LINK && r->res[i].gpu == r->res[i].peer)
			continue;
		fprintf(f, "%s{\"resource\": \"%s\", \"bytes\": %llu", n++ ? ", " : "",
			fast_sim_res_name(t, &r->res[i], name, sizeof name),
			(unsigned long long)r->res[i].bytes);
		num(f, ", ", "util", r->res[i].util);
		fprintf(f, "}");
	}
	fprintf(f, "]");
	if ((rc = put_nics(f, t, r, err)) < 0)
		return rc;
	if (steps) {
		fprintf(f, ",\n     \"steps\": [");
		for (uint32_t s = 0; s < r->nsteps; s++) {
			const struct fast_sim_step *st = &r->steps[s];
			fprintf(f, "%s\n       {\"id\": %u, \"kind\": \"%s\"", s ? "," : "", s,
				fast_step_kind_name(st->kind, st->tier));
			num(f, ", ", "ready_s", st->ready_s);
			num(f, ", ", "start_s", st->start_s);
			num(f, ", ", "end_s", st->end_s);
			fprintf(f, ", \"bytes\": %llu, \"transfers\": %u}", (unsigned long long)st->bytes,
				st->transfers);
		}
		fprintf(f, "]");
	}
	fprintf(f, "}");
	return 0;
}
