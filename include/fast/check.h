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
 * to at most one NIC and receives from at most one (a rail step of k
 * permutations, plan.h: at most k each, which its expansion guarantees),
 * and tier-out steps
 * that may run at the same time (neither reaches the other through
 * dependencies) share no sending and no receiving NIC (packed stages run
 * several rail steps at once, each on its own rails), and (5) no tier-out
 * transfer with bytes goes through a scale-out port that is down (every
 * NIC of it at fraction 0, topo.h "NICs and ports"): from or to a GPU
 * behind it; a slow NIC is only slow.
 *
 * Contract for compilers (what the checker accepts):
 *  - the diagonal D[g][g] is a local copy.  A plan may leave it implicit
 *    (no piece of D[g][g] anywhere: it is delivered), or deliver it
 *    explicitly, e.g. by a transfer g -> g; then its explicit deliveries
 *    must cover it exactly once like any other message.  A transfer with
 *    from == to may carry only pieces of D[from][from];
 *  - a piece arriving at its orig dst is final (even when it arrived
 *    there from a relay); arriving elsewhere, it is held by that GPU for
 *    the steps that depend on the arrival step;
 *  - tier up transfers stay inside one server; tier out ones may join any
 *    two GPUs (one NIC per GPU: for "fast", GPU-level one-to-one is
 *    NIC-level one-to-one);
 *  - every lane must be emptied by its rail stages (leftover bytes are
 *    reported per lane).
 *
 * Token plans (plan.h, "Token plans"): the same walk over group bytes.
 * Dispatch: held from the start at src(g); sends of held bytes as often as
 * the plan says; correct iff every d in Dest(g) ends holding every byte of
 * g (a byte may arrive twice).  Combine: values (g, range, mask), each
 * d_i holding (g, all, {i}) from the start; a send or a sum's input must
 * be held with exactly its mask; a sum at src(g) and an explicit local
 * copy are refused; correct iff, per byte, the masks src(g) receives plus
 * its own contribution partition Dest(g).  Messages name the group and
 * byte range (and mask) instead of D[src][dst].
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

/*
 * Check the plan of view v (plan.h) against the matrix the view was opened
 * with (v->m, required; a plain byte array: fast_matrix_of): a byte plan
 * against v->m->bytes (for a token matrix, its per-GPU byte matrix), a
 * token plan against v->m's groups.  The plan's N x G must be the
 * topology's and the matrix's.
 *
 * One form, on a view rather than on (plan, matrix): the view has
 * validated and (when compact) expanded the plan once, and checked that it
 * fits the matrix, so a command or executor that also simulates,
 * summarises or runs the plan pays for that once; the matrix travels in
 * the view, as it does for the simulator and the summary.  Checking a bare
 * plan is fast_plan_view_open(&v, p, m, err), fast_plan_check(&v, topo,
 * err), fast_plan_view_close(&v).
 *
 * Returns 0 (correct), FAST_ECHECK (incorrect: the message names the
 * step, transfer and piece, or the lane, or the message and byte range
 * never or twice delivered; a transfer through a NIC that is down names
 * the server and NIC), FAST_EINPUT (malformed plan, its N x G
 * differs from the topology's, or the view has no matrix) or FAST_ENOMEM.
 * Cost: linear in the expanded pieces (hashing) and in the chunk segments
 * of pipelined sends (one arrival record per piece whatever its chunks),
 * plus steps x deps x steps/64 words for the ancestor bitsets, which live
 * only until their last dependent is walked (measured:
 * docs/benchmarks.md, the checker).
 */
int fast_plan_check(const struct fast_plan_view *v, const struct fast_topo *topo,
		    struct fast_err *err);

#endif
