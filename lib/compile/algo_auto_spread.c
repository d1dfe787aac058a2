/*
 * algo_auto_spread.c - spreadout's predicted time for `--algo auto`
 * (algo_auto_internal.h): the pass over its n - 1 rounds that makes the
 * prediction exact (auto_spread_pass), and the floor under it from the
 * one pass's features (auto_spread_floor), both as spreadout's
 * implementation runs (topo.h, "implementations": its rates, its per-step
 * costs paid by one round in every in_flight, its sync).
 *
 * Round d (GPU s sends to s + d) is a wave of the plan: every round with a
 * message is one step per tier waiting for the round before.  By step
 * (a barrier per round) the time is the rounds' sum of
 *     max(a_out + largest cross message / B_out, a_up + largest local / B_up);
 * by rank (each GPU walks its own waves: the simulator's --sync rank) a
 * GPU enters round d when its own messages of the rounds before are done,
 * and a message starts when both its GPUs have entered: E[g], the time GPU
 * g finished its rounds so far, advances per round as
 *     end = max(E[s], E[s + d]) + a + bytes / B,  E'[s], E'[s + d] >= end,
 * a paid where its tier's round count (the rounds before with a message of
 * that tier: the step's depth) is a multiple of in_flight, and by rank for
 * a GPU's first message of the tier,
 * exact on one NIC per GPU (a GPU sends and receives one message a round,
 * so no port is shared) without an oversubscribed core.  On a fabric whose
 * NICs are not one per GPU at one rate, the same on the ports
 * (auto_ports_spread: a GPU at its share of its port, a cut-off GPU's
 * messages in three hops through the proxies).
 *
 * Workload: once per matrix when spreadout's floor comes near the best
 * (algo_auto.c, decide()): O(n^2) for the n^2 messages.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/compile/algo_auto_internal.h"

/* m[d] = max(m[d], row[d]) for d in [lo, hi) (m is offset by the caller
 * so that m[d] is round d - src's slot). */
static void rounds(const uint64_t *row, uint32_t lo, uint32_t hi, uint64_t *m)
{
	for (uint32_t d = lo; d < hi; d++)
		m[d] = max64(m[d], row[d]);
}

/* By step, on one NIC per GPU: the rounds' sum.  Returns -1 on
 * allocation failure. */
static int spread_step(const struct fast_topo *t, const uint64_t *D, const struct fast_impl *m,
		       double *spread_s)
{
	uint32_t N = t->servers, G = t->gpus, ng = N * G, wo = 0, wu = 0;
	uint64_t stack[STACK_GPUS * 2];
	uint64_t *mo = (size_t)ng * 2 <= sizeof stack / sizeof stack[0] ? stack : malloc((size_t)ng * 2 * sizeof *mo);
	uint64_t *mu;
	double Bu = fast_impl_up_Bps(m, t), Bo = fast_impl_out_Bps(m, fast_tier_Bps(&t->out), 1);
	double au = fast_tier_step_s(&t->up), ao = fast_tier_step_s(&t->out), sum = 0;

	if (!mo)
		return -1;
	mu = mo + ng;
	memset(mo, 0, (size_t)ng * 2 * sizeof *mo);
	for (uint32_t s = 0; s < ng; s++) {
		const uint64_t *row = D + (size_t)s * ng;
		uint32_t A = s / G;
		/* round d - s: contiguous within each range */
		rounds(row, (A + 1) * G, ng, mo - s);
		rounds(row, 0, A * G, mo + ng - s);
		rounds(row, s + 1, (A + 1) * G, mu - s);
		rounds(row, A * G, s, mu + ng - s);
	}
	for (uint32_t d = 1; d < ng; d++) {
		double o = mo[d] ? (fast_impl_pays(m, wo) ? ao : 0) + (double)mo[d] / Bo : 0;
		double u = mu[d] ? (fast_impl_pays(m, wu) ? au : 0) + (double)mu[d] / Bu : 0;
		sum += o > u ? o : u;
		wo += mo[d] != 0;
		wu += mu[d] != 0;
	}
	if (mo != stack)
		free(mo);
	*spread_s = sum;
	return 0;
}

/* By rank, on one NIC per GPU: the waves of every GPU (above).  Returns
 * -1 on allocation failure. */
static int spread_rank(const struct fast_topo *t, const uint64_t *D, const struct fast_impl *m,
		       double *spread_s)
{
	uint32_t G = t->gpus, ng = t->servers * G, w[2] = { 0, 0 };
	double stack[STACK_GPUS * 2];
	uint8_t seen_stack[STACK_GPUS];
	double *E = (size_t)ng * 2 <= sizeof stack / sizeof stack[0] ? stack : malloc((size_t)ng * 2 * sizeof *E);
	uint8_t *seen = ng <= STACK_GPUS ? seen_stack : malloc(ng);
	double B[2] = { fast_impl_up_Bps(m, t), fast_impl_out_Bps(m, fast_tier_Bps(&t->out), 1) };
	double a[2] = { fast_tier_step_s(&t->up), fast_tier_step_s(&t->out) }, end = 0, *nx;
	int rc = 0;

	if (!E || !seen) {
		rc = -1;
		goto done;
	}
	nx = E + ng;
	memset(E, 0, (size_t)ng * sizeof *E);
	memset(seen, 0, ng); /* bit k: the GPU has a flow of tier k (its first pays) */
	for (uint32_t d = 1; d < ng; d++) {
		bool any[2] = { false, false };
		memcpy(nx, E, (size_t)ng * sizeof *E);
		for (uint32_t s = 0; s < ng; s++) {
			uint32_t r = (s + d) % ng;
			double v = (double)D[(size_t)s * ng + r], e;
			int k = s / G != r / G; /* the tier: 1 across */
			bool fresh = m->in_flight > 1 && (!(seen[s] >> k & 1) || !(seen[r] >> k & 1));
			if (v == 0)
				continue;
			any[k] = true;
			e = dmax(E[s], E[r]) + (fast_impl_pays(m, w[k]) || fresh ? a[k] : 0) + v / B[k];
			nx[s] = dmax(nx[s], e);
			nx[r] = dmax(nx[r], e);
			end = dmax(end, e);
		}
		for (uint32_t s = 0; s < ng; s++) /* the round's flows have started */
			if (D[(size_t)s * ng + (s + d) % ng]) {
				uint8_t bit = (uint8_t)(1u << (s / G != (s + d) % ng / G));
				seen[s] |= bit;
				seen[(s + d) % ng] |= bit;
			}
		memcpy(E, nx, (size_t)ng * sizeof *E);
		w[0] += any[0];
		w[1] += any[1];
	}
	*spread_s = end;
done:
	if (E != stack)
		free(E);
	if (seen != seen_stack)
		free(seen);
	return rc;
}

int auto_spread_pass(const struct fast_topo *t, const uint64_t *D, double *spread_s)
{
	const struct fast_impl *m = fast_topo_impl(t, "spreadout");

	if (!fast_topo_nics_ideal(t))
		return auto_ports_spread(t, D, m, spread_s);
	return m->sync == FAST_IMPL_SYNC_RANK ? spread_rank(t, D, m, spread_s)
					      : spread_step(t, D, m, spread_s);
}

/* A floor under auto_spread_pass()'s spread_s from gather's features
 * alone.  By step: the rounds that carry cross traffic number at least
 * k_in (a GPU's senders sit in distinct rounds), each paying a_out where
 * every round pays, and their largest messages add up to at least any
 * GPU's cross sends or receives; the local ones likewise.  By rank: a
 * GPU's own rounds follow one another, so its messages' times add up, and
 * the one with k_in senders pays a_out k_in times where every round pays,
 * and the one that receives recv_x has at least k_in_min senders, each
 * message paying a_out before its bytes. */
double auto_spread_floor(const struct fast_topo *t, const struct feat *f)
{
	const struct fast_impl *m = fast_topo_impl(t, "spreadout");
	double Bo = fast_impl_out_Bps(m, fast_tier_Bps(&t->out), 1), Bu = fast_impl_up_Bps(m, t);
	double ao = m->in_flight > 1 ? 0 : fast_tier_step_s(&t->out), a = (double)f->k_in * ao;
	double x = (double)(f->send_x > f->recv_x ? f->send_x : f->recv_x) / Bo;
	double o = m->sync == FAST_IMPL_SYNC_RANK
			   ? dmax(dmax(a, x), (double)f->k_in_min * ao + (double)f->recv_x / Bo)
			   : a + x;

	return dmax(o, (double)f->intra / Bu);
}
