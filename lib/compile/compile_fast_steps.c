/*
 * compile_fast_steps.c - the step graph of FAST's staged schedule: the
 * balancing steps, one transfer per (from, to) pair of sorted handovers;
 * the intrinsic step, tiles (A, A) over scale-up; and per stage a RAIL
 * step with its permutation and budget and the REDIST step implied by
 * it, chained as the pipeline (step 8) of compile_fast.c says; a rail
 * step carries one term, or the terms of its group (compile_fast_group.c).
 * Transfers and pieces are written in place and committed in batches,
 * into a graph reserved once.
 */
#include "lib/compile/compile_fast_internal.h"

/* One balancing step of the moves [*at, end of stage), returning its id. */
int fast_steps_balance(struct builder *bd, size_t *at, int prev)
{
	uint32_t G = bd->G, group = bd->moves[*at].group;
	int id = fast_plan_add_step(bd->p, FAST_STEP_EXPLICIT, FAST_TIER_UP, bd->err), rc;

	if (id < 0)
		return id;
	if (prev >= 0 && (rc = fast_plan_add_dep(bd->p, (uint32_t)id, (uint32_t)prev, false,
						 bd->err)) < 0)
		return rc;
	while (*at < bd->nmoves && bd->moves[*at].group == group) {
		/* one transfer per (from, to) pair: moves are sorted by key */
		uint32_t key = bd->moves[*at].key, from = key / G, to = key / (G * G) * G + key % G;
		size_t n = 0, end = *at;
		struct fast_piece *pc;
		struct fast_xfer *x;
		uint64_t bytes = 0;
		while (end < bd->nmoves && bd->moves[end].group == group && bd->moves[end].key == key)
			end++;
		/* copies of the lane pieces handed over, read after the space
		 * is made (it may move the array) */
		if ((rc = fast_plan_xfer_space(bd->p, 1, end - *at, &x, &pc, bd->err)) < 0)
			return rc;
		for (; *at < end; (*at)++) {
			pc[n] = bd->p->pieces[bd->moves[*at].piece];
			bytes += pc[n++].len; /* part of a row sum of D: no overflow */
		}
		*x = (struct fast_xfer){ from, to, 0, (uint32_t)n, bytes };
		if ((rc = fast_plan_commit_xfers(bd->p, 1, bd->err)) < 0)
			return rc;
	}
	return id;
}

/* Intrinsic traffic: tiles (A, A) over scale-up, one transfer per pair. */
int fast_steps_intrinsic(struct builder *bd, int after)
{
	uint32_t N = bd->N, G = bd->G;
	bool any = false;
	int id = -1, rc;

	for (uint32_t a = 0; a < N && !any; a++)
		for (uint32_t i = 0; i < G && !any; i++)
			for (uint32_t j = 0; j < G && !any; j++)
				any = i != j && msg(bd, a, i, a, j);
	if (!any)
		return 0;
	id = fast_plan_add_step(bd->p, FAST_STEP_EXPLICIT, FAST_TIER_UP, bd->err);
	if (id < 0)
		return id;
	if (after >= 0 && (rc = fast_plan_add_dep(bd->p, (uint32_t)id, (uint32_t)after, false,
						  bd->err)) < 0)
		return rc;
	/* one transfer of one piece per pair, written in place and committed
	 * once per server */
	for (uint32_t a = 0; a < N; a++) {
		struct fast_xfer *x;
		struct fast_piece *pc;
		size_t k = 0;
		if ((rc = fast_plan_xfer_space(bd->p, (size_t)G * G, (size_t)G * G, &x, &pc,
					       bd->err)) < 0)
			return rc;
		for (uint32_t i = 0; i < G; i++)
			for (uint32_t j = 0; j < G; j++) {
				uint64_t len = msg(bd, a, i, a, j);
				if (i == j || !len)
					continue;
				x[k] = (struct fast_xfer){ a * G + i, a * G + j, 0, 1, len };
				pc[k++] = (struct fast_piece){ a * G + i, a * G + j, 0, len };
			}
		if ((rc = fast_plan_commit_xfers(bd->p, k, bd->err)) < 0)
			return rc;
	}
	return 0;
}

int fast_steps_staged(struct builder *bd, const struct fast_bvn *bv)
{
	size_t at = 0;
	uint32_t nrail = bd->nrail ? bd->nrail : bv->nterms, N = bd->N;
	int prev_bal = -1, prev_rail = -1, rc;
	bool intrinsic_done = false;

	if (bd->nmoves && !bd->jit) {
		prev_bal = fast_steps_balance(bd, &at, -1);
		if (prev_bal < 0)
			return prev_bal;
	}
	for (uint32_t k = 0; k < nrail; k++) {
		/* rail step k: the terms k0 .. k1 - 1 */
		uint32_t k0 = bd->nrail ? bd->gstart[k] : k, k1 = bd->nrail ? bd->gstart[k + 1] : k + 1;
		int bal = -1, rail;
		if (bd->jit && at < bd->nmoves &&
		    bd->moves[at].group == group_index(k, bd->fine_groups) &&
		    group_start(k, bd->fine_groups) == k) {
			bal = fast_steps_balance(bd, &at, prev_bal);
			if (bal < 0)
				return bal;
			prev_bal = bal;
		}
		if (!intrinsic_done) {
			if ((rc = fast_steps_intrinsic(bd, prev_bal)) < 0)
				return rc;
			intrinsic_done = true;
		}
		if (fast_nics_explicit(bd)) { /* compile_fast_nics.c; never grouped */
			int deps[2] = { prev_rail, bal >= 0 ? bal : k == 0 ? prev_bal : -1 };
			if ((prev_rail = fast_nics_stage(bd, bv, k, deps, 2)) < 0)
				return prev_rail;
			continue;
		}
		rail = fast_plan_add_step(bd->p, FAST_STEP_RAIL, FAST_TIER_OUT, bd->err);
		if (rail < 0)
			return rail;
		if (prev_rail >= 0 &&
		    (rc = fast_plan_add_dep(bd->p, (uint32_t)rail, (uint32_t)prev_rail, false, bd->err)) < 0)
			return rc;
		if (bal >= 0 || (k == 0 && prev_bal >= 0)) {
			rc = fast_plan_add_dep(bd->p, (uint32_t)rail,
					       (uint32_t)(bal >= 0 ? bal : prev_bal), false, bd->err);
			if (rc < 0)
				return rc;
		}
		rc = fast_plan_set_perms(bd->p, k1 - k0, bv->perm + (size_t)k0 * N, bv->weight + k0,
					 bd->err);
		if (rc < 0)
			return rc;
		rc = fast_plan_add_step(bd->p, FAST_STEP_REDIST, FAST_TIER_UP, bd->err);
		if (rc < 0)
			return rc;
		/* grouped and direct rail steps: the redistribution waits on
		 * its rail step pipelined, launched with it (its step overhead
		 * hidden behind the rail step), as hier's forwarding; staged
		 * plans keep the whole-step wait they were built with */
		if ((rc = fast_plan_add_dep(bd->p, (uint32_t)rc, (uint32_t)rail, bd->nrail > 0,
					    bd->err)) < 0 ||
		    (rc = fast_plan_set_redist(bd->p, (uint32_t)rail, bd->err)) < 0)
			return rc;
		prev_rail = rail;
	}
	if (!intrinsic_done && (rc = fast_steps_intrinsic(bd, prev_bal)) < 0)
		return rc;
	return 0;
}
