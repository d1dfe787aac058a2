/*
 * bound.h - lower bounds on the completion time of any schedule for a
 * matrix on a topology (`fast bound`).  This module is the only user of
 * GLPK.
 *
 * Closed form: the largest cross-server egress or ingress of any server
 * divided by the server's total effective NIC bandwidth.
 * LP: per server, minimise T such that cross-server bytes leave (and enter)
 * through any NIC of the server, relaying over scale-up costs scale-up
 * capacity, intra-server bytes flow over scale-up (any mesh paths on a
 * mesh), and no port, link or NIC carries more than effective bw x T.  The
 * bound is the maximum over servers (with a non-blocking core the LP
 * separates per server).
 */
#ifndef FAST_BOUND_H
#define FAST_BOUND_H

#include "common.h"
#include "topo.h"

struct fast_bound {
	double closed_s;           /* closed-form bound, seconds */
	uint32_t closed_server;    /* server that attains it */
	int closed_is_ingress;     /* 1 ingress, 0 egress */
	double lp_s;               /* LP bound, seconds (>= closed_s) */
	uint32_t lp_server;        /* server whose LP attains the maximum */
	char binding[96];          /* binding resource, e.g. "server 2 NIC 5 egress" */
	double solve_s;            /* wall time spent in GLPK */
	uint32_t lps_solved;
};

int fast_bound_compute(const struct fast_topo *topo, const uint64_t *D,
		       struct fast_bound *out, struct fast_err *err);
/* Closed form only (no GLPK). */
void fast_bound_closed(const struct fast_topo *topo, const uint64_t *D,
		       struct fast_bound *out);

#endif
