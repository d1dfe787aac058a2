/*
 * compile_fast_packed.c - FAST's packed stages and the model that chooses
 * them (stages=auto): the per-step costs of the topology, what balancing
 * costs either way, the modelled time of the packed and of the staged
 * schedule, and the packed schedule's steps.  See the comment below for
 * what packing is and what it costs.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/compile/compile_fast_internal.h"

/* --- packed stages ----------------------------------------------------------
 * Where latency dominates, N - 1 chained stages cost N - 1 scale-out steps
 * whatever the size.  One-to-one is per NIC and a server has G of them, so
 * the N - 1 shifts P_d(A) = A + d mod N (each server pair in exactly one)
 * can run at once on disjoint rails: shift d - 1 = s gets the rails
 * i % mod == s % mod, mod = min(N - 1, G), in wave s / mod (one wave when
 * N - 1 <= G).  Where K < G NICs are shared, equally, by G / K GPUs, the
 * unit is the port: rails (i / (G / K)) % mod == s % mod, mod = min(N - 1,
 * K), so that two shifts never share a NIC; unequal shares are not
 * packed (compile_fast_nics.c).  Tile (A, A + d) is balanced onto its shift's rails only;
 * one RAIL step per shift, its budget the largest lane (the lane target,
 * ceil(tile sum / rails): every tile's rails hold its sum, none more than
 * the target, so one holds it), waiting for balancing and, from wave 1
 * on, for the step of the wave before on the same rails, so a NIC serves
 * one step at a time (the checker's rule).  The price: more balancing
 * over scale-up (a tile moves to a share of the rails) and every
 * redistribution exposed at once at the end. */

struct cost fast_packed_cost(const struct fast_topo *topo)
{
	uint32_t G = topo->gpus;
	struct cost c;

	c.a_up = fast_tier_step_s(&topo->up);
	c.l_up = topo->up.latency_us * 1e-6;
	c.a_out = fast_tier_step_s(&topo->out);
	c.Bu = fast_tier_Bps(&topo->up);
	c.Bo = fast_tier_Bps(&topo->out);
	if (!(c.Bu > 0))
		c.Bu = 1; /* validated topologies never get here */
	if (!(c.Bo > 0))
		c.Bo = 1;
	/* in flight: positions mod k (the grouping's work grows with k; past
	 * 64 one rail step in 64 paying is as good as none) */
	c.k = fast_topo_impl(topo, "fast")->in_flight;
	c.k = c.k < 1 ? 1 : c.k > 64 ? 64 : c.k;
	c.rho = G < 2 ? 0 : (topo->up_kind == FAST_UP_MESH ? 1.0 : (double)(G - 1)) / G / c.Bu;
	c.Bb = topo->up_kind == FAST_UP_MESH && G > 1 ? (G - 1) * c.Bu : c.Bu;
	return c;
}

/* What balancing costs either way, from one pass over the tiles: per
 * GPU, the bytes it hands over or receives (at most its deficit) in each
 * balancing step, group 0 -- the tiles of the first term (staged; first =
 * its permutation, NULL when there is none) or of wave 0 (packed), which
 * the first stage (wave) waits for -- and group 1, the others, which the
 * second waits for (all are group 0 when balance=upfront).  bal[packed]
 * [group] is the step's modelled time: a_up plus the busiest GPU's bytes
 * over its rate Bb (struct cost), 0 when nothing moves.  Also the packed
 * budgets: shift s's is the largest lane target of its tiles
 * (bd->budget). */
int fast_packed_balance_costs(struct builder *bd, const struct cost *c, const uint32_t *first,
			      struct balance_cost *out)
{
	uint32_t N = bd->N, G = bd->G, mod = pack_mod(N, bd->P);
	uint64_t most[2][2] = { { 0, 0 }, { 0, 0 } }, *acc, *tts;

	/* acc[(packed * 2 + group) * 2 + recv][i]: the server's GPU i; then
	 * (NICs of unequal shares) the staged lane targets of a tile */
	acc = fast_scratch_room(bd->sc, SC_TMP, (size_t)9 * G, sizeof *acc);
	if (!acc)
		return oom(bd, "stage model");
	tts = bd->nx ? acc + (size_t)8 * G : NULL;
	out->packable = true;
	memset(bd->budget, 0, (size_t)N * sizeof *bd->budget);
	if (bd->budget_time)
		memset(bd->budget_time, 0, (size_t)N * sizeof *bd->budget_time);
	for (uint32_t a = 0; a < N; a++) {
		memset(acc, 0, (size_t)8 * G * sizeof *acc);
		for (uint32_t b = 0; b < N; b++) {
			const uint64_t *r = &bd->load[((size_t)a * N + b) * G];
			uint64_t ts = bd->S[(size_t)a * N + b];
			struct rails rs;
			uint32_t s, gp, gs;
			if (b == a || ts == 0)
				continue;
			s = shift_of(N, a, b);
			if (tts) { /* compile_fast_nics.c's targets, either way */
				uint64_t T, most_t = fast_nics_packed_targets(bd, a, b, bd->tt, &T);
				out->packable = out->packable && T != UINT64_MAX;
				if (most_t > bd->budget[s])
					bd->budget[s] = most_t;
				if (T != UINT64_MAX && T > bd->budget_time[s])
					bd->budget_time[s] = T;
				fast_nics_targets(bd, a, b, tts);
			} else {
				/* the packed lane targets, as fast_balance_tile() */
				rs = fast_balance_rails(bd, true, a, b);
				fast_balance_targets(&rs, G, bd->tt);
				if (rs.t > bd->budget[s])
					bd->budget[s] = rs.t;
			}
			gp = bd->jit && s >= mod;
			gs = bd->jit && first && first[a] != b;
			for (uint32_t i = 0; i < G; i++) {
				uint64_t t = bd->tt[i];
				if (tts)
					ts = tts[i];
				uint64_t *ap = acc + (size_t)(4 + gp * 2) * G, *as = acc + (size_t)gs * 2 * G;
				if (r[i] > t)
					ap[i] += r[i] - t;
				else
					ap[G + i] += t - r[i];
				if (r[i] > ts)
					as[i] += r[i] - ts;
				else
					as[G + i] += ts - r[i];
			}
		}
		for (uint32_t q = 0; q < 8; q++)
			for (uint32_t i = 0; i < G; i++)
				if (acc[(size_t)q * G + i] > most[q / 4][q / 2 % 2])
					most[q / 4][q / 2 % 2] = acc[(size_t)q * G + i];
	}
	for (int p = 0; p < 2; p++)
		for (int g = 0; g < 2; g++)
			out->bal[p][g] = most[p][g] ? c->a_up + (double)most[p][g] / c->Bb : 0;
	return 0;
}

/* Modelled time of the packed schedule: wave 0 starts after its
 * balancing, a later wave after the one before on its rails and the
 * second balancing step; then the last wave's redistribution. */
double fast_packed_s(const struct builder *bd, const struct cost *c, const struct balance_cost *bc)
{
	uint32_t M = bd->N - 1, mod = pack_mod(bd->N, bd->P);
	double bal0 = bc->bal[1][0], bal1 = bal0 + bc->bal[1][1];
	double end = 0;

	for (uint32_t res = 0; res < mod; res++) {
		double t = bal0;
		uint64_t last = 0, d = 0;
		for (uint32_t s = res; s < M; s += mod)
			if (bd->budget[s]) {
				/* a wave's time: its largest lane, or where NICs differ
				 * its slowest tile (every lane of a tile ends together) */
				uint64_t w = bd->budget_time ? bd->budget_time[s] : bd->budget[s];
				if (s >= mod && t < bal1)
					t = bal1;
				t += (cost_pays(c, d++) ? c->a_out : 0) + (double)w / c->Bo;
				last = bd->budget[s];
			}
		if (last)
			t += c->a_up + (double)last * c->rho;
		if (t > end)
			end = t;
	}
	return end;
}

/* Modelled time of the staged schedule bv (ordered, trimmed, split):
 * the first stage after its balancing, the second after the other
 * balancing step too, the rest (fast_bvn_time), the last stage's
 * redistribution. */
double fast_staged_s(const struct cost *c, const struct fast_bvn *bv,
		     const struct balance_cost *bc)
{
	struct fast_bvn_model m = { c->a_out, c->Bo };
	double t;

	if (bv->nterms == 0)
		return 0;
	/* of the chain of K stages, one in every k pays a_out (in flight) */
	t = bc->bal[0][0] + fast_bvn_time(bv, &m) -
	    (double)(bv->nterms - (bv->nterms + c->k - 1) / c->k) * c->a_out;
	if (bv->nterms > 1) { /* stage 2 waits for the second balancing step */
		double first = c->a_out + (double)bv->weight[0] / c->Bo;
		double wait = bc->bal[0][1] - first;
		if (wait > 0)
			t += wait;
	}
	return t + c->a_up + (double)bv->weight[bv->nterms - 1] * c->rho;
}

/* The packed steps: balancing (with jit, wave 0's tiles first, the rest
 * while wave 0 runs), the intrinsic step, per shift a RAIL step and its
 * REDIST. */
int fast_packed_steps(struct builder *bd)
{
	uint32_t N = bd->N, M = N - 1, mod = pack_mod(N, bd->P);
	uint32_t *perm;
	int *last, bal0 = -1, bal1 = -1, rc = 0;
	size_t at = 0;

	perm = fast_calloc(N, sizeof *perm);
	last = fast_calloc(mod, sizeof *last);
	if (!perm || !last) {
		rc = oom(bd, "stages");
		goto out;
	}
	for (uint32_t k = 0; k < mod; k++)
		last[k] = -1;
	if (bd->nmoves && bd->moves[0].group == 0 && (bal0 = fast_steps_balance(bd, &at, -1)) < 0) {
		rc = bal0;
		goto out;
	}
	if ((rc = fast_steps_intrinsic(bd, bal0)) < 0)
		goto out;
	for (uint32_t s = 0; s < M; s++) {
		int rail, deps[2];
		if (s == mod && at < bd->nmoves && (bal1 = fast_steps_balance(bd, &at, bal0)) < 0) {
			rc = bal1;
			goto out;
		}
		if (!bd->budget[s])
			continue;
		for (uint32_t a = 0; a < N; a++)
			perm[a] = (a + s + 1) % N;
		if ((rail = fast_plan_add_step(bd->p, FAST_STEP_RAIL, FAST_TIER_OUT, bd->err)) < 0) {
			rc = rail;
			goto out;
		}
		/* the balancing of its tiles, the step before on its rails */
		deps[0] = s < mod ? bal0 : bal1 >= 0 ? bal1 : bal0;
		deps[1] = last[s % mod];
		if (deps[0] >= 0 && deps[0] == deps[1])
			deps[1] = -1;
		for (int k = 0; k < 2 && rc >= 0; k++)
			if (deps[k] >= 0)
				rc = fast_plan_add_dep(bd->p, (uint32_t)rail, (uint32_t)deps[k], false, bd->err);
		if (rc < 0 || (rc = fast_plan_set_perm(bd->p, perm, bd->budget[s], bd->err)) < 0 ||
		    (rc = fast_plan_add_step(bd->p, FAST_STEP_REDIST, FAST_TIER_UP, bd->err)) < 0)
			goto out;
		if ((rc = fast_plan_add_dep(bd->p, (uint32_t)rc, (uint32_t)rail, false, bd->err)) < 0 ||
		    (rc = fast_plan_set_redist(bd->p, (uint32_t)rail, bd->err)) < 0)
			goto out;
		last[s % mod] = rail;
		rc = 0;
	}
out:
	free(perm);
	free(last);
	return rc;
}
