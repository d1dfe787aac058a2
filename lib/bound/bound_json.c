/*
 * bound_json.c - the JSON form of bounds (`fast bound --json`, and the
 * library API's fast_api_bound_json, include/fast/api.h): one writer, so the
 * command and foreign callers print the same document.
 *
 * LP values are written to the nanosecond and the ratio to six decimals:
 * the LP optimum's last bits depend on the simplex path (GLPK version).
 */
#include <math.h>
#include <stdio.h>

#include "fast/bound.h"
#include "lib/base/json.h"

void fast_bound_json_topo(FILE *f, const struct fast_topo *t)
{
	fprintf(f, "{\"name\": ");
	fast_json_put_string(f, t->name);
	fprintf(f, ", \"servers\": %u, \"gpus_per_server\": %u, \"gpus_total\": %u, \"scale_up\": \"%s\"",
		t->servers, t->gpus, fast_topo_ngpus(t), t->up_kind == FAST_UP_MESH ? "mesh" : "switch");
	/* the NICs only where they are not one healthy NIC per GPU, so that
	 * the documents of such fabrics stay as they were */
	if (!fast_topo_nics_ideal(t)) {
		fprintf(f, ", \"nics_per_server\": %u, \"nic_overrides\": [", t->nics);
		for (uint32_t i = 0; i < t->noverrides; i++) {
			fputs(i ? ", " : "", f);
			fast_topo_put_nic_override(f, &t->nic_override[i]);
		}
		fputc(']', f);
	}
	fputc('}', f);
}

void fast_bound_json(FILE *f, const struct fast_bound *b, uint32_t matrix, const char *label,
		     bool closed_only, bool timing)
{
	fprintf(f, "    {\"matrix\": %u, \"label\": ", matrix);
	fast_json_put_string(f, label);
	fprintf(f, ", \"closed_s\": ");
	fast_json_put_double(f, b->closed_s);
	fprintf(f, ", \"closed_server\": %u, \"closed_direction\": \"%s\"", b->closed_server,
		b->closed_is_ingress ? "ingress" : "egress");
	fprintf(f, ", \"latency_s\": ");
	fast_json_put_double(f, round(b->latency_s * 1e12) / 1e12);
	fprintf(f, ", \"bound_s\": ");
	fast_json_put_double(f, round(b->bound_s * 1e12) / 1e12);
	if (closed_only) {
		fprintf(f, "}");
		return;
	}
	fprintf(f, ", \"lp_s\": ");
	fast_json_put_double(f, round(b->lp_s * 1e9) / 1e9);
	fprintf(f, ", \"ratio\": ");
	if (b->closed_s > 0)
		fast_json_put_double(f, round(b->lp_s / b->closed_s * 1e6) / 1e6);
	else
		fprintf(f, "null");
	fprintf(f, ", \"lp_server\": %u, \"binding\": ", b->lp_server);
	fast_json_put_string(f, b->binding);
	fprintf(f, ", \"lps_solved\": %u", b->lps_solved);
	if (timing) {
		fprintf(f, ", \"solve_s\": ");
		fast_json_put_double(f, b->solve_s);
	}
	fprintf(f, "}");
}
