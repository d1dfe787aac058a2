/*
 * bound_internal.h - what bound.c (the closed form and the byte LP) and
 * bound_tokens.c (the token LP) share (bound_shared.c): a server's ports
 * as capacities, the closed-form fold, GLPK row adding and solving, and
 * the checks every LP result goes through.  Not part of the library's
 * interface (bound.h is).
 */
#ifndef FAST_BOUND_INTERNAL_H
#define FAST_BOUND_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <glpk.h>

#include "fast/bound.h"

/* A server's scale-out ports as the LPs see them (topo.h, "NICs and
 * ports"): P ports, local GPU l behind port of[l], n[p] GPUs behind port
 * p, and after fast_bound_ports_load one server's capacities: cap[p] in
 * nominal NICs (the sum of port p's NICs' rate fractions: 1 per healthy
 * NIC, 0 when all are down), total their sum.  Freed with
 * fast_bound_ports_free (NULL-safe arrays). */
struct fast_bound_ports {
	uint32_t P;
	uint32_t *of; /* G */
	uint32_t *n;  /* P */
	double *cap;  /* P */
	double total;
};
/* The mapping of t's GPUs onto ports; FAST_ENOMEM. */
int fast_bound_ports_init(struct fast_bound_ports *pp, const struct fast_topo *t,
			  struct fast_err *err);
/* Server s's capacities into pp->cap and pp->total. */
void fast_bound_ports_load(struct fast_bound_ports *pp, const struct fast_topo *t, uint32_t s);
void fast_bound_ports_free(struct fast_bound_ports *pp);
/* Server s's scale-out capacity in nominal NICs: the sum of its NICs'
 * rate fractions (exactly G on a healthy one-NIC-per-GPU fabric). */
double fast_bound_server_nics(const struct fast_topo *t, uint32_t s);
/* Port p as a binding resource names it: "NIC 3", or "NICs 2-3" for a
 * port of several NICs. */
void fast_bound_port_name(const struct fast_topo *t, uint32_t p, char *buf, size_t len);

/* Fold server s's cross egress and ingress, over its scale-out rate
 * out_Bps, into the closed form b->closed_* (ties keep the first server,
 * and egress before ingress; b zeroed before the first server). */
void fast_bound_closed_fold(struct fast_bound *b, uint32_t s, uint64_t eg, uint64_t in,
			    double out_Bps);
/* glp_add_rows that accepts n = 0 (returns the next row's index). */
int fast_bound_add_rows(glp_prob *lp, int n);
/* Solve an LP of server `server`, warm-started when *warm; 0 or FAST_ESOLVER. */
int fast_bound_lp_solve(glp_prob *lp, bool *warm, uint32_t server, struct fast_err *err);
/* A byte matrix D's bound (bound.c): the closed form and the LP, or the
 * closed form alone (no GLPK). */
int fast_bound_bytes(const struct fast_topo *topo, const uint64_t *D, struct fast_bound *out,
		     struct fast_err *err);
void fast_bound_bytes_closed(const struct fast_topo *topo, const uint64_t *D,
			     struct fast_bound *out);
/* The LP result against the closed form, and an oversubscribed core. */
int fast_bound_finish(struct fast_bound *b, const struct fast_topo *topo, uint64_t total_cross,
		      struct fast_err *err);

#endif
