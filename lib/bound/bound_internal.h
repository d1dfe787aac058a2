/*
 * bound_internal.h - what bound.c (the closed form and the byte LP) and
 * bound_tokens.c (the token LP) share: the closed-form fold, GLPK row
 * adding and solving, and the checks every LP result goes through.  Not
 * part of the library's interface (bound.h is).
 */
#ifndef FAST_BOUND_INTERNAL_H
#define FAST_BOUND_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include <glpk.h>

#include "fast/bound.h"

/* Fold server s's cross egress and ingress into the closed form *best
 * (ties keep the first server, and egress before ingress). */
void fast_bound_closed_fold(struct fast_bound *b, uint64_t *best, uint32_t s, uint64_t eg,
			    uint64_t in);
/* glp_add_rows that accepts n = 0 (returns the next row's index). */
int fast_bound_add_rows(glp_prob *lp, int n);
/* Solve an LP of server `server`, warm-started when *warm; 0 or FAST_ESOLVER. */
int fast_bound_lp_solve(glp_prob *lp, bool *warm, uint32_t server, struct fast_err *err);
/* The LP result against the closed form, and an oversubscribed core. */
/* A byte matrix D's bound (bound.c): the closed form and the LP, or the
 * closed form alone (no GLPK). */
int fast_bound_bytes(const struct fast_topo *topo, const uint64_t *D, struct fast_bound *out,
		     struct fast_err *err);
void fast_bound_bytes_closed(const struct fast_topo *topo, const uint64_t *D,
			     struct fast_bound *out);
int fast_bound_finish(struct fast_bound *b, const struct fast_topo *topo, uint64_t total_cross,
		      struct fast_err *err);

#endif
