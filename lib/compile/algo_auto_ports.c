/*
 * algo_auto_ports.c - `--algo auto`'s features on a fabric whose NICs are
 * not one per GPU at the nominal rate (topo.h, "NICs and ports": K != G,
 * a slow NIC, a NIC that is down).  The closed forms (algo_auto_model.c)
 * divide a GPU's scale-out bytes by the nominal rate B_out; here the
 * scale-out features become *equivalent bytes*, the bytes that at B_out
 * take as long as the real load takes on its port:
 *
 *     eq(port) = (bytes through the port) x B_out / (the port's rate),
 *
 * the largest over the ports, where a port carries the bytes of every GPU
 * behind it and of every cut-off GPU it is the proxy's port of (relay.h,
 * as the baselines' plans send them).  A GPU's NIC time is then its
 * port's bytes over its port's rate, and a server's (FAST's rows and
 * columns) its bytes over the sum of its ports' rates.  The relayed bytes
 * also load scale-up (the hop to and from the proxy).
 *
 * Workload: only where fast_topo_nics_ideal is false (on an ideal fabric
 * auto reads none of this, and its choices and outputs stay as they
 * were): one scalar pass over the n x n matrix after gather's, linear in
 * it, and one more for spreadout's rounds when they decide.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/compile/algo_auto_internal.h"
#include "lib/compile/relay.h"

/* The per-GPU sums of one pass, and the GPUs' proxies. */
#define WORDS 10
struct sums {
	uint64_t *sx, *rx, *si, *ri, *po, *rl, *hi; /* as gather's (algo_auto_feat.c) */
	uint64_t *xs, *xr, *xu; /* the relay's scale-up sends, receives, PXN's load */
	uint32_t *proxy;
	void *buf;
};

static int sums_alloc(struct sums *u, uint32_t ng)
{
	uint64_t *w = calloc((size_t)ng * WORDS, sizeof *w);
	uint32_t *px = malloc((size_t)ng * sizeof *px);

	if (!w || !px) {
		free(w);
		free(px);
		return -1;
	}
	u->buf = w;
	u->sx = w, u->rx = w + ng, u->si = w + 2 * (size_t)ng, u->ri = w + 3 * (size_t)ng;
	u->po = w + 4 * (size_t)ng, u->rl = w + 5 * (size_t)ng, u->hi = w + 6 * (size_t)ng;
	u->xs = w + 7 * (size_t)ng, u->xr = w + 8 * (size_t)ng, u->xu = w + 9 * (size_t)ng;
	u->proxy = px;
	return 0;
}

static void sums_free(struct sums *u)
{
	free(u->buf);
	free(u->proxy);
}

/* One pass over D: per GPU its cross sends and receives (sx, rx), local
 * sends and receives (si, ri), PXN's rail loads (po: what its server sends
 * other servers' GPUs of its local index; rl: its own rail-aligned
 * sends), hier's rail receives (hi). */
static void pass(const struct fast_topo *t, const uint64_t *D, struct sums *u)
{
	uint32_t G = t->gpus, ng = t->servers * G;

	for (uint32_t s = 0; s < ng; s++) {
		const uint64_t *row = D + (size_t)s * ng;
		uint32_t A = s / G, i = s % G;
		for (uint32_t d = 0; d < ng; d++) {
			uint64_t v = row[d];
			uint32_t B = d / G, j = d % G;
			if (d == s || !v)
				continue;
			if (A == B) {
				u->si[s] += v, u->ri[d] += v;
				continue;
			}
			u->sx[s] += v, u->rx[d] += v;
			u->po[A * G + j] += v;
			u->hi[B * G + i] += v;
			if (j == i)
				u->rl[s] += v;
		}
	}
}

/* The port slot (server x ports + port) GPU g's scale-out bytes cross. */
static uint32_t slot_of(const struct fast_topo *t, const uint32_t *proxy, uint32_t g)
{
	uint32_t h = proxy[g];

	return h / t->gpus * fast_topo_ports(t) + fast_topo_port_of(t, h % t->gpus);
}

/* bytes x B_out / rate, as a feature (saturating) */
static uint64_t equiv(double bytes, double Bo, double rate)
{
	double e = rate > 0 ? bytes * Bo / rate : 0;

	return e >= 18446744073709549568.0 ? UINT64_MAX : (uint64_t)e;
}

/* The largest equivalent load over the port slots of load[]. */
static uint64_t max_equiv(const struct fast_topo *t, const double *load)
{
	uint32_t P = fast_topo_ports(t);
	double Bo = fast_tier_Bps(&t->out);
	uint64_t best = 0;

	for (uint32_t x = 0; x < t->servers * P; x++)
		best = max64(best, equiv(load[x], Bo, fast_topo_port_Bps(t, x / P, x % P)));
	return best;
}

/* The port features: the loads of the three routings on the ports. */
static int port_features(const struct fast_topo *t, const struct sums *u, struct feat *f)
{
	uint32_t ng = t->servers * t->gpus, nx = t->servers * fast_topo_ports(t);
	double *l = calloc((size_t)nx * 4, sizeof *l); /* direct out, in, PXN out, hier in */

	if (!l)
		return -1;
	for (uint32_t g = 0; g < ng; g++) {
		uint32_t x = slot_of(t, u->proxy, g);
		l[x] += (double)u->sx[g], l[nx + x] += (double)u->rx[g];
		l[2 * nx + x] += (double)u->po[g], l[3 * nx + x] += (double)u->hi[g];
	}
	f->send_x = max_equiv(t, l);
	f->recv_x = max_equiv(t, l + nx);
	f->pxn_nic = max64(max_equiv(t, l + 2 * (size_t)nx), f->recv_x);
	f->hier_nic = max64(f->send_x, max_equiv(t, l + 3 * (size_t)nx));
	free(l);
	return 0;
}

/* A server's rows and columns at its ports' sum (FAST's), the scale-up
 * loads with the relay's hops (a cut-off GPU's cross bytes to and from its
 * proxy). */
static void server_and_up(const struct fast_topo *t, const struct sums *u, struct feat *f)
{
	uint32_t G = t->gpus;
	double Bo = fast_tier_Bps(&t->out);

	f->srv = f->srv_in = f->intra = f->pxn_up = 0;
	for (uint32_t s = 0; s < t->servers; s++) {
		double row = 0, col = 0, rate = fast_topo_server_out_Bps(t, s);
		for (uint32_t j = 0; j < G; j++)
			row += (double)u->sx[s * G + j], col += (double)u->rx[s * G + j];
		f->srv = max64(f->srv, max64(equiv(row, G * Bo, rate), equiv(col, G * Bo, rate)));
		f->srv_in = max64(f->srv_in, equiv(col, G * Bo, rate));
	}
	for (uint32_t c = 0; c < t->servers * G; c++) {
		uint32_t y = u->proxy[c];
		if (y == c)
			continue;
		/* cut off: c's cross bytes cross scale-up to and from its proxy y */
		u->xs[c] += u->sx[c], u->xr[c] += u->rx[c], u->xu[c] += u->po[c] + u->rx[c];
		u->xs[y] += u->rx[c], u->xr[y] += u->sx[c], u->xu[y] += u->po[c] + u->rx[c];
	}
	for (uint32_t g = 0; g < t->servers * G; g++) {
		uint64_t up = u->si[g] + u->ri[g] + (u->sx[g] - u->rl[g]) + (u->po[g] - u->rl[g]);
		f->intra = max64(f->intra, max64(u->si[g] + u->xs[g], u->ri[g] + u->xr[g]));
		f->pxn_up = max64(f->pxn_up, up + u->xu[g]);
	}
}

int auto_ports_adjust(const struct fast_topo *t, const uint64_t *D, struct feat *f)
{
	struct fast_err err;
	struct sums u;
	int rc;

	if (sums_alloc(&u, t->servers * t->gpus) < 0)
		return -1;
	if (fast_relay_proxies(t, u.proxy, &err) < 0) {
		sums_free(&u);
		return -1;
	}
	pass(t, D, &u);
	rc = port_features(t, &u, f);
	server_and_up(t, &u, f);
	sums_free(&u);
	return rc;
}

double auto_ports_pair_factor(const struct fast_topo *t)
{
	double most = 0, full = t->gpus * fast_tier_Bps(&t->out);

	for (uint32_t s = 0; s < t->servers; s++) {
		double rate = fast_topo_server_out_Bps(t, s);
		if (rate > 0 && full / rate > most)
			most = full / rate;
	}
	return most;
}

/* Spreadout's round d on the ports as its implementation m runs it (its
 * rates; a tier's per-step costs where its rounds so far, wave[tier],
 * pay them): its time into the sum *s (the scratch: eo, ei per port slot,
 * us, ur per GPU, zeroed). */
static void spread_round(const struct fast_topo *t, const uint64_t *D, const uint32_t *proxy,
			 const struct fast_impl *m, uint32_t d, uint32_t *wave, double *w, double *s)
{
	uint32_t ng = t->servers * t->gpus, nx = t->servers * fast_topo_ports(t), P = nx / t->servers;
	double *eo = w, *ei = w + nx, *us = w + 2 * (size_t)nx, *ur = us + ng;
	double Bu = fast_impl_up_Bps(m, t), o = 0, up = 0;
	bool cross = false, local = false;

	memset(w, 0, (2 * (size_t)nx + 2 * (size_t)ng) * sizeof *w);
	for (uint32_t a = 0; a < ng; a++) {
		uint32_t b = (a + d) % ng;
		double v = (double)D[(size_t)a * ng + b];
		if (v == 0)
			continue;
		if (a / t->gpus == b / t->gpus) {
			us[a] += v, ur[b] += v, local = true;
			continue;
		}
		eo[slot_of(t, proxy, a)] += v, ei[slot_of(t, proxy, b)] += v, cross = true;
		if (proxy[a] != a)
			us[a] += v, ur[proxy[a]] += v, local = true;
		if (proxy[b] != b)
			us[proxy[b]] += v, ur[b] += v, local = true;
	}
	for (uint32_t x = 0; cross && x < nx; x++) {
		double rate = fast_impl_out_Bps(m, fast_topo_port_Bps(t, x / P, x % P),
						fast_topo_port_gpus(t, x % P));
		if (rate > 0)
			o = dmax(o, dmax(eo[x], ei[x]) / rate);
	}
	for (uint32_t g = 0; local && g < ng; g++)
		up = dmax(up, dmax(us[g], ur[g]) / Bu);
	*s += dmax(cross ? (fast_impl_pays(m, wave[1]) ? fast_tier_step_s(&t->out) : 0) + o : 0,
		   local ? (fast_impl_pays(m, wave[0]) ? fast_tier_step_s(&t->up) : 0) + up : 0);
	wave[0] += local;
	wave[1] += cross;
}

/* The scale-out rate of a hop through port slot x carrying n crossings
 * at once: the port's rate over them, at most m's cap. */
static double share_Bps(const struct fast_topo *t, const struct fast_impl *m, double n, uint32_t x)
{
	uint32_t P = fast_topo_ports(t);
	double r = fast_topo_port_Bps(t, x / P, x % P) / (n > 0 ? n : 1);

	return m->out_GBps > 0 && m->out_GBps * 1e9 < r ? m->out_GBps * 1e9 : r;
}

/* Hop `level` (0, 1, 2: to the proxy, across, from the proxy) of a
 * message a -> b: its GPUs into *x, *y and whether it crosses, or false
 * when the message has no such hop (a GPU not cut off sends from itself
 * and receives at itself). */
static bool hop_of(const struct fast_topo *t, const uint32_t *proxy, uint32_t a, uint32_t b,
		   int level, uint32_t *x, uint32_t *y, bool *cross)
{
	uint32_t pa = proxy[a], pb = proxy[b];

	*cross = false;
	if (a / t->gpus == b / t->gpus) { /* local: one hop */
		*x = a, *y = b;
		return level == 0;
	}
	if (level == 0 && pa != a) {
		*x = a, *y = pa;
		return true;
	}
	if (level == 2) {
		*x = pb, *y = b;
		return pb != b;
	}
	*x = pa, *y = pb, *cross = true; /* level 0, or 1 after a hop to the proxy */
	return level == 0 || pa != a;
}

/* By rank on the ports (algo_auto_spread.c's recurrence): a message of a
 * GPU cut off goes in up to three hops, to its proxy over scale-up,
 * across, on over scale-up, in successive waves (by rank a relay's
 * pipelined hops fall there); a hop starts when the one before it is done
 * and both its GPUs have finished their flows of the waves before, and a
 * crossing runs at the slower of its ports' rates shared by the crossings
 * of its wave; its tier's costs paid as spreadout's rounds by rank are
 * (algo_auto_spread.c).  Scratch: E, nx, prev (ng each), eo, ei (a port
 * slot each), seen (ng bytes). */
static double spread_rank_ports(const struct fast_topo *t, const uint64_t *D, const uint32_t *proxy,
				const struct fast_impl *m, double *E, double *nx, double *prev,
				double *eo, double *ei, uint8_t *seen)
{
	uint32_t G = t->gpus, ng = t->servers * G, w[2] = { 0, 0 }, nslots = t->servers * fast_topo_ports(t);
	double Bu = fast_impl_up_Bps(m, t), end = 0;

	memset(E, 0, (size_t)ng * sizeof *E);
	memset(seen, 0, ng);
	for (uint32_t d = 1; d < ng; d++) {
		memset(prev, 0, (size_t)ng * sizeof *prev);
		for (int level = 0; level < 3; level++) {
			bool here[2] = { false, false }, cross;
			uint32_t x, y;
			memset(eo, 0, (size_t)nslots * sizeof *eo);
			memset(ei, 0, (size_t)nslots * sizeof *ei);
			for (uint32_t a = 0; a < ng; a++)
				if (D[(size_t)a * ng + (a + d) % ng] &&
				    hop_of(t, proxy, a, (a + d) % ng, level, &x, &y, &cross) && cross)
					eo[slot_of(t, proxy, x)] += 1, ei[slot_of(t, proxy, y)] += 1;
			memcpy(nx, E, (size_t)ng * sizeof *E);
			for (uint32_t a = 0; a < ng; a++) {
				uint32_t b = (a + d) % ng;
				double v = (double)D[(size_t)a * ng + b], e, cost;
				bool pays;
				if (v == 0 || !hop_of(t, proxy, a, b, level, &x, &y, &cross))
					continue;
				here[cross] = true;
				pays = fast_impl_pays(m, w[cross]) ||
				       (m->in_flight > 1 && (!(seen[x] >> cross & 1) || !(seen[y] >> cross & 1)));
				cost = pays ? fast_tier_step_s(cross ? &t->out : &t->up) : 0;
				cost += cross ? v / dmin(share_Bps(t, m, eo[slot_of(t, proxy, x)],
								 slot_of(t, proxy, x)),
						       share_Bps(t, m, ei[slot_of(t, proxy, y)],
								 slot_of(t, proxy, y)))
					      : v / Bu;
				e = dmax(prev[a], dmax(E[x], E[y])) + cost;
				prev[a] = e;
				nx[x] = dmax(nx[x], e);
				nx[y] = dmax(nx[y], e);
				end = dmax(end, e);
			}
			for (uint32_t a = 0; a < ng; a++) /* this wave's flows have started */
				if (D[(size_t)a * ng + (a + d) % ng] &&
				    hop_of(t, proxy, a, (a + d) % ng, level, &x, &y, &cross)) {
					seen[x] |= (uint8_t)(1u << cross);
					seen[y] |= (uint8_t)(1u << cross);
				}
			memcpy(E, nx, (size_t)ng * sizeof *E);
			w[0] += here[0];
			w[1] += here[1];
		}
	}
	return end;
}

int auto_ports_spread(const struct fast_topo *t, const uint64_t *D, const struct fast_impl *m,
		      double *spread_s)
{
	uint32_t ng = t->servers * t->gpus, nx = t->servers * fast_topo_ports(t), wave[2] = { 0, 0 };
	double *w = malloc((2 * (size_t)nx + 3 * (size_t)ng) * sizeof *w), sum = 0;
	uint32_t *proxy = malloc((size_t)ng * sizeof *proxy);
	uint8_t *seen = malloc(ng ? ng : 1);
	struct fast_err err;

	if (!w || !proxy || !seen || fast_relay_proxies(t, proxy, &err) < 0) {
		free(w);
		free(proxy);
		free(seen);
		return -1;
	}
	if (m->sync == FAST_IMPL_SYNC_RANK) /* w holds 3 ng + 2 nx doubles */
		sum = spread_rank_ports(t, D, proxy, m, w, w + ng, w + 2 * (size_t)ng,
					w + 3 * (size_t)ng, w + 3 * (size_t)ng + nx, seen);
	for (uint32_t d = 1; d < ng && m->sync != FAST_IMPL_SYNC_RANK; d++)
		spread_round(t, D, proxy, m, d, wave, w, &sum);
	free(w);
	free(proxy);
	free(seen);
	*spread_s = sum;
	return 0;
}
