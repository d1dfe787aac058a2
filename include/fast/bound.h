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
 * Token traffic (traffic.h groups): the same per server, on what every
 * plan must move once deduplicated per server (fast_bound_compute).
 */
#ifndef FAST_BOUND_H
#define FAST_BOUND_H

#include <stdio.h>

#include "common.h"
#include "topo.h"
#include "traffic.h"

struct fast_bound {
	double closed_s;           /* closed-form bound, seconds */
	uint32_t closed_server;    /* server that attains it */
	int closed_is_ingress;     /* 1 ingress, 0 egress */
	double lp_s;               /* LP bound, seconds (>= closed_s) */
	double latency_s;          /* what any plan waits before its bytes flow */
	double bound_s;            /* the combined bound every ratio divides by */
	uint32_t lp_server;        /* server whose LP attains the maximum */
	char binding[96];          /* binding resource, e.g. "server 2 NIC 5 egress" */
	double solve_s;            /* wall time spent in GLPK */
	uint32_t lps_solved;
};

/*
 * The bounds of matrix m (m->ng = topo's N x G GPUs; a plain byte array:
 * fast_matrix_of): closed form and LP (bandwidth only), or with
 * closed_only the closed form alone (no GLPK; the LP fields stay 0), and
 * bound_s, the one every ratio divides by: the bandwidth bounds shifted
 * by the latency a plan pays before its first byte on a tier flows,
 * max(step_s(out) + closed_s, min(step_s(up), step_s(out)) + lp_s), each
 * term only where its bandwidth term is > 0 (docs/DESIGN.md, "The latency
 * floor").  latency_s is the shift of the term with bytes across servers
 * (step_s(out)), else min(...) when any bytes move, else 0.
 * A byte matrix (kind BYTES) gets the byte bound above; token traffic
 * (DISPATCH, COMBINE) the token LP (lib/bound/bound_tokens.c, "token
 * traffic"), valid for every plan `fast check` accepts for its groups --
 * token plans with relays, replication or partial reductions, and plans
 * over its per-GPU byte matrix.  closed_s of token traffic is the largest
 * per-server deduplicated egress or ingress / (G x effective NIC
 * bandwidth).  A group naming a GPU out of range is FAST_EINPUT;
 * FAST_ESOLVER, FAST_ENOMEM (a byte matrix's closed form cannot fail).
 * out is written only on success.
 */
int fast_bound_compute(const struct fast_topo *topo, const struct fast_matrix *m, bool closed_only,
		       struct fast_bound *out, struct fast_err *err);

/* Set b->latency_s and b->bound_s from b->closed_s and b->lp_s on topo
 * (as fast_bound_compute does; for bandwidth bounds computed before). */
void fast_bound_latency(struct fast_bound *b, const struct fast_topo *topo);

/* JSON of `fast bound --json` (lib/bound/bound_json.c): the topology
 * object, and one matrix's bound (indented as a row of "bounds"; closed_only:
 * no LP fields; timing: with "solve_s").  Stream errors are the caller's to
 * check (ferror). */
void fast_bound_json_topo(FILE *f, const struct fast_topo *t);
void fast_bound_json(FILE *f, const struct fast_bound *b, uint32_t matrix, const char *label,
		     bool closed_only, bool timing);

#endif
