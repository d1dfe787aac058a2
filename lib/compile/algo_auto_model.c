/*
 * algo_auto_model.c - `--algo auto`'s closed forms: per schedule, its
 * predicted simulated time from the features of the matrix
 * (algo_auto_feat.c) and its predicted synthesis time.  Each schedule's
 * row of the algorithm table (algo.c) holds its constants and points its
 * struct fast_algo_model at the functions here; the choice (algo_auto.c)
 * calls them row by row.
 *
 * With a = alpha + per-step overhead of a tier and B its effective rate
 * (bw x efficiency, fast_tier_Bps), per schedule (the simulator's model,
 * include/fast/sim.h):
 *
 *   fanout    lat = max(a_out, a_up)
 *             vol = max(send_x / B_out, recv_x / (B_out f(k_in)), intra / B_up)
 *   nccl      lat = ceil((n-1)/P) a_out; vol as fanout with f(min(P, k_in))
 *   pxn       lat = ceil((n-1)/P) (a_out + a_up); vol with the NIC egress
 *             loads of rail-aligned relaying and the relayed bytes on scale-up
 *   spreadout sum over the n-1 synchronised rounds of
 *             max(a_out + largest cross message / B_out, a_up + largest local / B_up)
 *   hier      lat = a_out + a_up; vol = rail-aligned NIC loads /
 *             (B_out f((N-1) G)) + one chunk's forwarding, or the local
 *             traffic / B_up (on a mesh: per link, and the forwarding
 *             spread over the G - 1 links)
 *   fast      lat = 2 a_up + (N-1) a_out; vol = largest server row or
 *             column / (G B_out) (the Birkhoff stages carry it at line rate)
 *             + the last stage's redistribution; or its packed stages
 *             (packed_predict()) or its rail steps of several permutations
 *             (grouped_predict()) where they predict less, as FAST
 *             compiles them there
 * each as the topology's implementation of the schedule runs it (topo.h,
 * "implementations"; tiers_of()): B_up and B_out at most its caps, a chain
 * of per-step costs (nccl's and pxn's rounds, FAST's stages) paying one
 * link in every in_flight (hier's forwarding step none: it waits on the
 * rail step's chunks), spreadout's rounds by its sync, and T_sim plus its
 * fixed cost per call -- the simulator's model, so that auto's choice
 * follows it;
 * where f(k) is the incast factor of the topology's congestion model
 * (fast_incast_factor, include/fast/topo.h: the simulator's own) and k_in
 * the most cross-server senders of one GPU.  The prediction is
 *     T_sim(a) = k_lat lat + k_vol vol,
 * with the factors of the table (algo.c says how they were fitted).
 *
 * Synthesis-cost model: S(a) = S32 (n / 32)^P seconds, a power law in the
 * GPU count through the medians at 4 x 8 and 16 x 8, times 0.1 + 0.9 x
 * (cross-server messages / n (n - G)) for a baseline, and for FAST where
 * it packs its stages (packed_synth()).
 *
 * Every function here is pure: the same topology, features and options
 * give the same doubles on every rank.
 */
#include <math.h>
#include <string.h>

#include "lib/compile/algo_auto_internal.h"

/* S of model m with ln(n / 32) = log_n32 (computed once per decision) */
static double synth_at(const struct fast_algo_model *m, double n, double G, double log_n32,
		       uint64_t nnz)
{
	double full = n * (n - G), S = m->synth32_s * exp(m->synth_exp * log_n32);

	/* a baseline writes one transfer per message: it scales with the
	 * cross-server messages (the fit was on dense matrices); 0.1 of it is
	 * per-GPU setup.  FAST's cost follows its decomposition, not nnz. */
	if (m->synth_by_msgs && full > 0 && (double)nnz < full)
		S *= 0.1 + 0.9 * (double)nnz / full;
	return S;
}

/* FAST's synthesis when it packs its stages: the handovers it writes --
 * a tile moves to a share of the rails, so about every cross message is
 * handed over once, a large one split between rails -- grow with the
 * messages, the rest (tiles, steps, per-GPU setup) not: S x (0.65 + 0.5 x
 * cross messages / n (n - G)).  PACKED_S32 and PACKED_P from the FIT (S)
 * runs (algo.c), dense uniform 4K and 64K: 12.0 us at 4 x 8 and 165.5 us
 * at 16 x 8; the share from Zipf 0.8 at 16 x 8 (`fast compare --preset
 * h200 --servers 16 --gpus 8 --algos fast,fanout,auto`, three runs each,
 * load about 1): 4K (6.3% of the messages non-zero) 111-125 us, 16K (25%)
 * 105-163, 64K (49%) 191-206, 256K (68%) 204-251, 1M (82%) 150-260 --
 * skewed traffic splits more messages than uniform. */
#define PACKED_S32 12.0e-6
#define PACKED_P 1.89

static double packed_synth(double n, double G, double log_n32, uint64_t nnz)
{
	double full = n * (n - G), S = PACKED_S32 * exp(PACKED_P * log_n32);

	/* continuous at full, where dense uniform measured 1 / 1.15 of it */
	return full > 0 ? S * (0.65 + 0.5 * (double)nnz / full) : S;
}

double fast_auto_synth_model(const char *algo, uint32_t N, uint32_t G, uint64_t nnz)
{
	const struct fast_algo *a = fast_algo_find(algo);
	double n = (double)N * G;

	return a && a->model.predict ? synth_at(&a->model, n, G, log(n / 32.0), nnz) : 0;
}

static void feat_init(struct fast_auto_feat *x, const struct fast_topo *t, const uint64_t *D)
{
	memset(x, 0, sizeof *x);
	x->t = t;
	x->D = D;
	x->n = (double)t->servers * t->gpus;
	x->ln = log(x->n / 32.0);
	x->N = t->servers, x->G = t->gpus, x->ng = x->N * x->G;
	x->Bu = fast_tier_Bps(&t->up), x->Bo = fast_tier_Bps(&t->out);
	x->au = fast_tier_step_s(&t->up), x->ao = fast_tier_step_s(&t->out);
	x->mesh = t->up_kind == FAST_UP_MESH;
}

int auto_features(struct fast_auto_feat *x, const struct fast_topo *t, const uint64_t *D)
{
	feat_init(x, t, D);
	if (auto_gather(t, D, &x->f) < 0)
		return -1;
	/* the lazy features' floors: the largest server row or column has
	 * N - 1 entries off the diagonal, so pair >= srv / (N - 1) */
	if (!x->f.exact_pair)
		x->f.pair = t->servers > 1 ? x->f.srv / (t->servers - 1) : 0;
	if (!x->f.exact_hier)
		auto_hier_floors(t, &x->f);
	x->spread_s = auto_spread_floor(t, &x->f);
	return 0;
}

int auto_features_all(struct fast_auto_feat *x, const struct fast_topo *t, const uint64_t *D)
{
	feat_init(x, t, D);
	return auto_gather_all(t, D, &x->f);
}

/* --- the closed forms ------------------------------------------------------ */

/* The tiers' numbers every closed form reads, as schedule a's
 * implementation runs them (topo.h, "implementations"): B_up at most its
 * engine's cap (on a mesh, per link at most the cap, and a GPU's sum at
 * the cap), B_out at most its scale-out cap (on the ports' equivalent
 * bytes: the cap against the nominal rate), the local traffic's time (a
 * switch port carries a GPU's sum, a mesh link one message), its chains'
 * links in flight k, and its fixed cost per call (more where the matrix
 * crosses servers). */
struct tiers {
	uint32_t N, G, ng;
	double Bu, Bo, au, ao, up;
	bool mesh;
	uint32_t k;
	double call;
};

static inline struct tiers tiers_of(const struct fast_auto_feat *x, const struct fast_algo *a)
{
	const struct fast_impl *m = fast_topo_impl(x->t, a->name);
	double cap = fast_impl_up_cap_Bps(m), Bu = cap > 0 && cap < x->Bu ? cap : x->Bu;
	double up = x->mesh ? dmax((double)x->f.intra_msg / Bu, cap > 0 ? (double)x->f.intra / cap : 0)
			    : (double)x->f.intra / Bu;

	bool cross = x->f.send_x || x->f.recv_x;

	return (struct tiers){ x->N, x->G, x->ng, Bu, fast_impl_out_Bps(m, x->Bo, 1), x->au, x->ao,
			       up, x->mesh, m->in_flight > 1 ? m->in_flight : 1,
			       (m->call_us + (cross ? m->call_out_us : 0)) * 1e-6 };
}

/* Is a GPU cut off (its port down)?  Its messages then relay through a
 * proxy (relay.h): a scale-up hop, a step of its own, before the crossing,
 * whose per-step costs the crossing cannot hide. */
static bool relays(const struct fast_topo *t)
{
	if (fast_topo_nics_ideal(t))
		return false;
	for (uint32_t s = 0; s < t->servers; s++)
		for (uint32_t p = 0; p < fast_topo_ports(t); p++)
			if (fast_topo_port_Bps(t, s, p) <= 0)
				return true;
	return false;
}

/* The per-step costs of a chain of n links (rounds, stages) a each, one
 * in every k paying them: ceil(n / k) a. */
static double chain(double n, uint32_t k, double a)
{
	return ceil(n / k) * a;
}

static double incast(const struct fast_auto_feat *x, double k)
{
	return fast_incast_factor(&x->t->congestion, k);
}

/* nccl's and pxn's peers in flight and rounds */
static double peers(const struct fast_algo_opts *o) { return o->peers ? o->peers : 8; }
static double rounds_of(const struct tiers *r, double P)
{
	return ceil((double)(r->ng > 1 ? r->ng - 1 : 1) / P);
}

/* A baseline's outputs: T_sim = call + k_lat lat + k_vol vol (the call
 * alone for an empty matrix), S by the table's model; returns lazy for a
 * non-empty matrix. */
static bool baseline(const struct fast_algo *a, const struct fast_auto_feat *x,
		     const struct tiers *r, double lat, double vol, bool lazy, double *sim_s,
		     double *synth_s)
{
	/* k_lat was fitted on chains whose every link pays (in_flight 1); in
	 * flight, the chain pays its links' costs as the simulator does */
	double kl = r->k > 1 ? 1.0 : a->model.k_lat;

	*synth_s = synth_at(&a->model, x->n, x->t->gpus, x->ln, x->f.nnz);
	*sim_s = r->call + (x->f.total ? kl * lat + a->model.k_vol * vol : 0);
	return x->f.total && lazy;
}

bool fast_auto_model_fanout(const struct fast_algo *a, const struct fast_auto_feat *x,
			    const struct fast_algo_opts *o, double *sim_s, double *synth_s)
{
	struct tiers r = tiers_of(x, a);
	const struct feat *f = &x->f;
	double lat = r.ao > r.au ? r.ao : r.au;
	double vol = dmax(dmax((double)f->send_x / r.Bo,
			       (double)f->recv_x / (r.Bo * incast(x, f->k_in))), r.up);

	(void)o;
	return baseline(a, x, &r, lat, vol, false, sim_s, synth_s);
}

bool fast_auto_model_nccl(const struct fast_algo *a, const struct fast_auto_feat *x,
			  const struct fast_algo_opts *o, double *sim_s, double *synth_s)
{
	struct tiers r = tiers_of(x, a);
	const struct feat *f = &x->f;
	/* in flight, a peer slot that starts in the server pays its scale-up
	 * step before its first crossing */
	double P = peers(o), lat = chain(rounds_of(&r, P), r.k, r.ao) + (r.k > 1 ? r.au : 0) +
				   (relays(x->t) ? r.au : 0);
	double vol = dmax(dmax((double)f->send_x / r.Bo,
			       (double)f->recv_x / (r.Bo * incast(x, dmin(P, f->k_in)))), r.up);

	return baseline(a, x, &r, lat, vol, false, sim_s, synth_s);
}

bool fast_auto_model_pxn(const struct fast_algo *a, const struct fast_auto_feat *x,
			 const struct fast_algo_opts *o, double *sim_s, double *synth_s)
{
	struct tiers r = tiers_of(x, a);
	const struct feat *f = &x->f;
	/* in flight, the relay's scale-up hop overlaps the crossings' costs */
	double P = peers(o), lat = chain(rounds_of(&r, P), r.k, r.k > 1 ? r.ao : r.ao + r.au) +
				   (relays(x->t) ? r.au : 0);
	double vol = dmax((double)f->pxn_nic / (r.Bo * incast(x, dmin(P, f->k_in))),
			  (double)f->pxn_up / r.Bu);

	return baseline(a, x, &r, lat, vol, false, sim_s, synth_s);
}

/* spreadout: its rounds (auto_spread_pass, by its implementation's sync)
 * are the time: lat 0 */
bool fast_auto_model_spreadout(const struct fast_algo *a, const struct fast_auto_feat *x,
			       const struct fast_algo_opts *o, double *sim_s, double *synth_s)
{
	struct tiers r = tiers_of(x, a);

	(void)o;
	return baseline(a, x, &r, 0, x->spread_s, !x->exact_spread, sim_s, synth_s);
}

/* hier, with the largest cross message as its piece where that is less
 * than a chunk (a floor under either gives a floor under the prediction:
 * it grows with both) */
bool fast_auto_model_hier(const struct fast_algo *a, const struct fast_auto_feat *x,
			  const struct fast_algo_opts *o, double *sim_s, double *synth_s)
{
	struct tiers r = tiers_of(x, a);
	const struct feat *f = &x->f;
	uint64_t chunk = o->chunk_bytes ? o->chunk_bytes : a->default_chunk_bytes;
	double piece = (double)(chunk < f->largest ? chunk : f->largest);
	/* the forwarding step waits on the rail step's chunks: in flight, it
	 * pays no per-step cost of its own */
	double fwd = piece * (r.mesh ? 1 : r.G) / r.Bu, vol;
	double lat = r.ao + (r.k > 1 ? 0 : r.au) + (relays(x->t) ? r.au : 0);

	/* one transfer per message: (N - 1) G flows into a NIC */
	vol = dmax((double)f->hier_nic / (r.Bo * incast(x, (r.N > 1 ? r.N - 1 : 1) * r.G)) + fwd,
		   r.up);
	if (r.mesh) /* forwarding B_i -> B_j on one link each */
		vol = dmax(vol, (double)f->hier_link / r.Bu);
	return baseline(a, x, &r, lat, vol, !f->exact_hier, sim_s, synth_s);
}

/* FAST's packed stages (compile_fast.c): the N - 1 shifts on
 * mod = min(N - 1, G) rail classes of at least G / mod rails, in
 * ceil((N - 1) / mod) waves; a stage's budget the largest server pair
 * over its rails.  lat = 2 a_up + waves a_out (balancing, the waves, the
 * redistribution); vol = the waves' budgets / B_out, the first
 * balancing step (what a GPU's cross sends to wave 0's servers leave its
 * rail: a share 1 - rails / G), the time the second (the other waves')
 * is not hidden behind wave 0, and the last redistribution, as
 * split_tail's rho. */
static double packed_predict(const struct fast_algo *a, const struct fast_auto_feat *x,
			     const struct tiers *r)
{
	const struct feat *f = &x->f;
	uint32_t N = r->N, G = r->G, M = N > 1 ? N - 1 : 1, mod = M < G ? M : G;
	double Bu = r->Bu, Bo = r->Bo, au = r->au, ao = r->ao;
	double rails = (double)(G / mod), waves = (double)((M + mod - 1) / mod);
	double budget = (double)f->pair / rails, off = 1 - rails / G, w0 = (double)mod / M;
	double bal0 = (double)f->send_x * w0 * off / Bu, bal1 = (double)f->send_x * (1 - w0) * off / Bu;
	double rho = (r->mesh ? 1.0 : (double)(G - 1)) / G / Bu;
	double stage = budget / Bo, lat = 2 * au + chain(waves, r->k, ao);
	double vol = waves * stage + bal0 + dmax(0, bal1 - (ao + stage)) + budget * rho;

	return r->call + a->model.k_lat * lat + a->model.k_vol * dmax(vol, r->up);
}

/* FAST's rail steps of several permutations (compile_fast_group.c,
 * compile_fast_direct.c; one NIC per GPU at one rate), every term in one
 * rail step at the incast of N - 1 senders a NIC, its redistribution
 * waiting on it pipelined (the scale-up latency, then its bytes).
 * Balanced: the busiest GPU's handover (its cross sends over the lane
 * share srv / G) in a balancing step first, a NIC's share srv / G, the
 * redistribution a share's (G - 1) / G (a mesh link: 1 / G) of it.
 * Unbalanced ("direct"): hier's rail-aligned NIC loads, then their
 * forwarding (a switch port: (G - 1) / G of a NIC's bytes; a mesh link:
 * hier_link), as the pass left them (exact, or floors: fast_auto_model_fast).  In flight (k > 1) a second rail step, which pays nothing,
 * takes part of the terms and the last redistribution about halves. */
static double grouped_predict(const struct fast_auto_feat *x, const struct tiers *r)
{
	const struct feat *f = &x->f;
	uint32_t G = r->G;
	double lu = x->t->up.latency_us * 1e-6, tail = r->k > 1 ? 0.5 : 1.0;
	double fin = incast(x, r->N - 1), share = (double)f->srv / G;
	double excess = dmax(0, (double)f->send_x - share);
	double Bb = r->mesh ? (G - 1) * r->Bu : r->Bu;
	double rho = (r->mesh ? 1.0 : (double)(G - 1)) / G / r->Bu;
	double bal = (excess > 0 ? r->au + excess / Bb : 0) + r->ao + share / (r->Bo * fin) + lu +
		     tail * share * rho;
	double fwd = r->mesh ? (double)f->hier_link / r->Bu : (double)f->hier_nic * (G - 1) / G / r->Bu;
	double direct = r->ao + (double)f->hier_nic / (r->Bo * fin) + lu + tail * fwd;

	return r->call + dmax(dmin(bal, direct), r->up);
}

/* Does FAST consider grouping here (compile_fast.c choose_shape)? */
static bool groups(const struct fast_auto_feat *x, const struct fast_algo_opts *o)
{
	return (o->stages == FAST_STAGES_AUTO || o->stages == FAST_STAGES_GROUPED) &&
	       x->t->servers > 2 && fast_topo_nics_ideal(x->t);
}

double fast_auto_fast_grouped_s(const struct fast_algo *a, const struct fast_auto_feat *x,
				 const struct fast_algo_opts *o)
{
	struct tiers r = tiers_of(x, a);

	return groups(x, o) && x->f.total ? grouped_predict(x, &r) : INFINITY;
}

/* FAST's T_sim, staged, packed or grouped as it compiles them (*packs:
 * packed, whose synthesis differs) */
static double fast_sim(const struct fast_algo *a, const struct fast_auto_feat *x,
		       const struct fast_algo_opts *o, bool *packs)
{
	struct tiers r = tiers_of(x, a);
	const struct fast_algo_model *m = &a->model;
	uint32_t N = r.N, G = r.G;
	double rail, lat, vol, packed, best;

	*packs = false;
	if (!x->f.total)
		return r.call;
	rail = (double)x->f.srv / ((double)G * r.Bo);
	lat = 2 * r.au + chain(N > 1 ? N - 1 : 1, r.k, r.ao);
	vol = dmax(rail + rail / (N > 1 ? N - 1 : 1) * r.Bo / r.Bu, r.up);
	best = r.call + m->k_lat * lat + m->k_vol * vol;
	/* FAST compiles the packed stages where they model faster
	 * (compile_fast.c): the least of the two, as it chooses */
	packed = packed_predict(a, x, &r);
	if (o->stages == FAST_STAGES_PACKED ||
	    ((o->stages == FAST_STAGES_AUTO || o->stages == FAST_STAGES_GROUPED) && N > 2 &&
	     packed < best)) {
		*packs = true;
		best = packed;
	}
	/* and grouped rail steps where they model GROUP_GAIN (2%) faster */
	if (groups(x, o) && o->stages != FAST_STAGES_PACKED) {
		double g = grouped_predict(x, &r);
		if (g < best * (1 - 0.02)) {
			*packs = false;
			best = g;
		}
	}
	return best;
}

/* FAST's prediction and synthesis (packed or staged, as it compiles
 * them) into sim_s, synth_s; returns their sum. */
static double fast_T(const struct fast_algo *a, const struct fast_auto_feat *x,
		     const struct fast_algo_opts *o, double *sim_s, double *synth_s)
{
	bool packs;

	*sim_s = fast_sim(a, x, o, &packs);
	/* FAST compiles packed stages or staged ones: that one's synthesis */
	*synth_s = packs ? packed_synth(x->n, x->t->gpus, x->ln, x->f.nnz)
			 : synth_at(&a->model, x->n, x->t->gpus, x->ln, x->f.nnz);
	return *sim_s + *synth_s;
}

/* A floor under fast_T() while the pair is only a floor (packed_predict()
 * grows with it): the least of the staged T, the packed T at that pair
 * and the grouped T, each with its own synthesis, whichever FAST then
 * compiles. */
static void fast_T_floor(const struct fast_algo *a, const struct fast_auto_feat *x,
			 const struct fast_algo_opts *o, double *sim_s, double *synth_s)
{
	struct fast_algo_opts staged = *o, packed = *o;
	double s0, y0, s1, y1, T0, T1;

	staged.stages = FAST_STAGES_EXACT; /* the staged prediction of either mode */
	packed.stages = FAST_STAGES_PACKED;
	T1 = fast_T(a, x, &packed, &s1, &y1);
	if (o->stages == FAST_STAGES_PACKED) {
		*sim_s = s1, *synth_s = y1;
		return;
	}
	T0 = fast_T(a, x, &staged, &s0, &y0);
	if (T1 < T0)
		T0 = T1, s0 = s1, y0 = y1;
	if (groups(x, o)) {
		struct tiers r = tiers_of(x, a);
		double g = grouped_predict(x, &r), y = synth_at(&a->model, x->n, x->t->gpus, x->ln,
								  x->f.nnz);
		if (g + y < T0)
			T0 = g + y, s0 = g, y0 = y;
	}
	*sim_s = s0, *synth_s = y0;
}

/* FAST: lazy while the largest server pair is a floor and FAST may pack
 * (its grouped prediction takes hier's loads as the pass left them:
 * exact, or floors on the AVX-512 pass, which make it a little low where
 * unbalanced steps would be chosen; a pass of their own would cost the
 * decision 1.6 us at 16 x 8 every time FAST is near the best) */
bool fast_auto_model_fast(const struct fast_algo *a, const struct fast_auto_feat *x,
			  const struct fast_algo_opts *o, double *sim_s, double *synth_s)
{
	bool lazy = x->f.total && !x->f.exact_pair && x->t->servers > 2 &&
		    o->stages != FAST_STAGES_EXACT;

	if (lazy)
		fast_T_floor(a, x, o, sim_s, synth_s);
	else
		fast_T(a, x, o, sim_s, synth_s);
	return lazy;
}

/* --- the refine hooks: a lazy feature made exact --------------------------- */

int fast_auto_refine_pair(struct fast_auto_feat *x)
{
	x->f.pair = auto_pair_pass(x->t, x->D);
	x->f.exact_pair = true;
	return 0;
}

int fast_auto_refine_hier(struct fast_auto_feat *x)
{
	return auto_hier_pass(x->t, x->D, &x->f);
}

int fast_auto_refine_rounds(struct fast_auto_feat *x)
{
	double s;

	if (auto_spread_pass(x->t, x->D, &s) < 0)
		return -1;
	x->spread_s = s;
	x->exact_spread = true;
	return 0;
}
