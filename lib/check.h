/*
 * check.h - prove a plan correct for a traffic matrix (`fast check`).
 *
 * A plan is correct when, walking its DAG, (1) no GPU sends a byte of a
 * piece it does not hold at that point (it started there: the byte belongs
 * to a message the GPU originally sends, or it arrived in a step this step
 * depends on, transitively; for pipelined dependencies, in a chunk at or
 * before this chunk), (2) pieces are well formed (len > 0, inside their
 * message), and every transfer's bytes equal the sum of its pieces, (3)
 * every byte of every message reaches its destination exactly once and
 * nothing else arrives anywhere as final, and (4) for FAST plans (algo
 * "fast"), each tier-out step is one-to-one at NIC level: every NIC sends
 * to at most one NIC and receives from at most one.
 *
 * Structural defects (cycle, unknown step, GPU out of range) are bad input
 * (FAST_EINPUT); a well-formed plan that violates (1)-(4) fails with
 * FAST_ECHECK and a message naming the step, transfer and piece.
 */
#ifndef FAST_CHECK_H
#define FAST_CHECK_H

#include "common.h"
#include "plan.h"
#include "topo.h"

/* D is the ng x ng matrix the plan serves (ng == topo N*G == plan N*G). */
int fast_plan_check(const struct fast_plan *p, const struct fast_topo *topo,
		    const uint64_t *D, struct fast_err *err);

#endif
