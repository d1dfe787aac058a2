/*
 * bound_shared.c - what the byte LP (bound.c) and the token LP
 * (bound_tokens.c) share: a server's scale-out ports as capacities, the
 * closed-form fold, adding rows and solving with GLPK, and the last checks
 * every LP result goes through (bound_internal.h).
 *
 * Capacities are counted in nominal NICs (the sum of a port's NICs' rate
 * fractions), not in bytes per second: on a fabric of healthy NICs, one
 * per GPU, every port is exactly 1 and a server exactly G, so the closed
 * form, the LP rows and the core constraint are the very numbers they were
 * before NICs could differ (and the outputs byte-identical).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glpk.h>

#include "lib/bound/bound_internal.h"

/* --- ports ---------------------------------------------------------------- */

int fast_bound_ports_init(struct fast_bound_ports *pp, const struct fast_topo *t,
			  struct fast_err *err)
{
	memset(pp, 0, sizeof(*pp));
	pp->P = fast_topo_ports(t);
	pp->of = fast_calloc(t->gpus ? t->gpus : 1, sizeof(*pp->of));
	pp->n = fast_calloc(pp->P ? pp->P : 1, sizeof(*pp->n));
	pp->cap = fast_calloc(pp->P ? pp->P : 1, sizeof(*pp->cap));
	if (!pp->of || !pp->n || !pp->cap) {
		fast_bound_ports_free(pp);
		return fast_err_set(err, FAST_ENOMEM, "bound: out of memory");
	}
	for (uint32_t l = 0; l < t->gpus; l++) {
		pp->of[l] = fast_topo_port_of(t, l);
		pp->n[pp->of[l]]++;
	}
	return 0;
}

void fast_bound_ports_load(struct fast_bound_ports *pp, const struct fast_topo *t, uint32_t s)
{
	pp->total = 0;
	for (uint32_t p = 0; p < pp->P; p++) {
		pp->cap[p] = fast_topo_port_nics_up(t, s, p);
		pp->total += pp->cap[p];
	}
}

void fast_bound_ports_free(struct fast_bound_ports *pp)
{
	free(pp->of);
	free(pp->n);
	free(pp->cap);
	memset(pp, 0, sizeof(*pp));
}

/* --- the closed form -------------------------------------------------------- */

void fast_bound_closed_fold(struct fast_bound *b, uint32_t s, uint64_t eg, uint64_t in,
			    double out_Bps)
{
	/* a server with nothing to move takes no time, even with no NIC up
	 * (one server alone); eg or in > 0 on a server with none is refused
	 * by the topology's validation */
	double te = eg ? (double)eg / out_Bps : 0, ti = in ? (double)in / out_Bps : 0;

	if (te > b->closed_s) {
		b->closed_s = te;
		b->closed_server = s;
		b->closed_is_ingress = 0;
	}
	if (ti > b->closed_s) {
		b->closed_s = ti;
		b->closed_server = s;
		b->closed_is_ingress = 1;
	}
}

/* --- GLPK ----------------------------------------------------------------- */

int fast_bound_add_rows(glp_prob *lp, int n)
{
	return n > 0 ? glp_add_rows(lp, n) : glp_get_num_rows(lp) + 1;
}

/* Solve; returns 0 or FAST_ESOLVER.  Warm-started solves use the dual
 * simplex; on any trouble retry once from the standard basis. */
int fast_bound_lp_solve(glp_prob *lp, bool *warm, uint32_t server, struct fast_err *err)
{
	glp_smcp parm;
	int ret, status;

	glp_init_smcp(&parm);
	parm.msg_lev = GLP_MSG_OFF;
	parm.presolve = GLP_OFF; /* presolve would discard the warm basis */
	if (*warm) {
		parm.meth = GLP_DUALP;
		ret = glp_simplex(lp, &parm);
		if (ret == 0 && glp_get_status(lp) == GLP_OPT)
			return 0;
	}
	glp_std_basis(lp);
	parm.meth = GLP_PRIMAL;
	ret = glp_simplex(lp, &parm);
	status = glp_get_status(lp);
	if (ret != 0 || status != GLP_OPT) {
		*warm = false;
		return fast_err_set(err, FAST_ESOLVER,
				    "bound: GLPK failed on the LP of server %u "
				    "(glp_simplex returned %d, status %d)",
				    server, ret, status);
	}
	*warm = true;
	return 0;
}

/* The last steps of both LP bounds.  The LP contains the closed form's
 * constraints (sum the port rows), so a result below it is a numerical
 * artefact: snap a tiny one, reject a large one.  An oversubscribed core
 * carries every one of total_cross bytes that must cross servers at least
 * once, at every NIC's rate together over the oversubscription (the sum of
 * the fractions first, as the simulator's core: N x G healthy NICs give
 * exactly N x G). */
int fast_bound_finish(struct fast_bound *b, const struct fast_topo *topo, uint64_t total_cross,
		      struct fast_err *err)
{
	double Bn = fast_tier_Bps(&topo->out);

	if (b->lp_s < b->closed_s) {
		if (b->lp_s < b->closed_s * (1 - 1e-6))
			return fast_err_set(err, FAST_ESOLVER,
					    "bound: LP optimum %.9g s below the closed form %.9g s "
					    "(numerical trouble in GLPK)", b->lp_s, b->closed_s);
		b->lp_s = b->closed_s;
	}
	if (topo->core_oversub > 1.0 && total_cross > 0) {
		double nics = 0, core;
		for (uint32_t s = 0; s < topo->servers; s++)
			nics += fast_topo_server_nics_up(topo, s);
		core = (double)total_cross / (nics * Bn / topo->core_oversub);
		if (core > b->lp_s) {
			b->lp_s = core;
			snprintf(b->binding, sizeof(b->binding),
				 "scale-out core (oversubscribed %.3g:1)", topo->core_oversub);
		}
	}
	return 0;
}

/* Every flow of a step on tier t starts at least fast_tier_step_s(t) after
 * time 0 (the simulator launches a step with bytes after its overhead and
 * starts each flow alpha later; by rank a GPU's first flow in a wave waits
 * both), and only scale-out steps use NICs.  So the bytes the closed form
 * counts flow in [step_s(out), T], and those the LP counts in
 * [min step_s, T]: T is at least either shift plus its bandwidth term. */
void fast_bound_latency(struct fast_bound *b, const struct fast_topo *topo)
{
	double out = fast_tier_step_s(&topo->out), up = fast_tier_step_s(&topo->up);
	double lo = up < out ? up : out, bound = 0.0, lat = 0.0;

	if (b->lp_s > 0.0) {
		bound = lo + b->lp_s;
		lat = lo;
	}
	if (b->closed_s > 0.0) {
		if (out + b->closed_s > bound)
			bound = out + b->closed_s;
		lat = out;
	}
	b->latency_s = lat;
	b->bound_s = bound;
}
