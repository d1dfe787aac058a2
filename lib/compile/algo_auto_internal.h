/*
 * algo_auto_internal.h - what the files of `--algo auto` share
 * (algo_auto.h says what auto is): the features of a matrix that the
 * closed forms read, the passes that gather them (algo_auto_feat.c), the
 * synthesis model and the schedules' closed forms (algo_auto_model.c,
 * hooked into the algorithm table by algo.h's struct fast_algo_model),
 * and the tie band the choices share (algo_auto.c, algo_auto_tokens.c).
 * Internal to lib/compile: never installed.
 */
#ifndef FAST_ALGO_AUTO_INTERNAL_H
#define FAST_ALGO_AUTO_INTERNAL_H

#include "lib/compile/algo_auto.h"

/* What one pass over the matrix gathers. */
struct feat {
	uint64_t send_x, recv_x, intra;    /* per-GPU maxima */
	uint64_t pxn_nic, pxn_up;          /* PXN: NIC egress, scale-up load */
	uint64_t hier_nic, srv;            /* hier NIC ingress; server row/col */
	uint64_t hier_link, intra_msg;     /* mesh: hier's forwarding per link; largest local message */
	uint32_t k_in;                     /* most cross senders of one GPU */
	uint32_t k_in_min;                 /* fewest cross senders of one GPU (spreadout's floor by rank) */
	uint64_t largest, total;       /* most bytes in one cross-server message (hier's piece); 0 for an empty matrix */
	uint64_t pair;                 /* most bytes one server sends one other (packed FAST's tiles): pair_pass(), else a floor */
	uint64_t nnz;                  /* non-zero cross-server messages */
	uint64_t srv_in;               /* the largest server column (a floor under hier's loads) */
	/* which of the lazy features the pass made exact: pair (else a floor,
	 * pair_pass()), hier_nic, hier_link and largest (else floors,
	 * hier_pass()) */
	bool exact_pair, exact_hier;
};

/* The features of one matrix as the closed forms read them: the pass's,
 * the matrix the passes read, and spreadout's rounds. */
struct fast_auto_feat {
	const struct fast_topo *t;
	const uint64_t *D;     /* the n x n matrix the features are of */
	struct feat f;
	double n, ln;          /* GPUs, ln(n / 32) (the synthesis model's) */
	uint32_t N, G, ng;     /* t's shape, and its tiers' numbers: */
	double Bu, Bo;         /* effective rates, bytes/s (fast_tier_Bps) */
	double au, ao;         /* a step's cost before its bytes, s (fast_tier_step_s) */
	bool mesh;             /* scale-up is a mesh of links */
	double spread_s;       /* spreadout's rounds before its factor (auto_spread_pass), else a floor */
	bool exact_spread;     /* spread_s is the pass's, not the floor */
};

static inline uint64_t max64(uint64_t a, uint64_t b) { return a > b ? a : b; }
/* fmax and fmin without their NaN rules (no NaN here): inline compares */
static inline double dmax(double a, double b) { return a > b ? a : b; }
static inline double dmin(double a, double b) { return a < b ? a : b; }

/* Up to this many GPUs the work arrays live on the stack (20 KiB at 256
 * GPUs): the decision at 4 x 8 must cost under a microsecond, and malloc
 * is a good part of that. */
#define STACK_GPUS 256

/* The predictor's error band (results/auto_check.py: most candidates
 * within 3% at the sizes where they compete): a time within it of the
 * least is a near-tie, which goes to the first candidate in the table. */
#define TIE_REL 0.03
#define TIE_ABS_S 0.5e-6

/* FAST's predicted T_sim with rail steps of several permutations
 * (algo_auto_model.c grouped_predict(): balanced or not, whichever is
 * less), INFINITY where it does not group (stages, the fabric, N < 3). */
double fast_auto_fast_grouped_s(const struct fast_algo *a, const struct fast_auto_feat *x,
				 const struct fast_algo_opts *o);

/* --- algo_auto_feat.c: the passes over the matrix --------------------------
 * Each returns -1 when out of memory (nothing else fails). */

/* The one pass: every feature; pair exact where exact_pair, hier's loads
 * and largest where exact_hier (else left for the passes below). */
int auto_gather(const struct fast_topo *t, const uint64_t *D, struct feat *f);
/* The scalar pass for any G: every feature but the pair (exact_hier). */
int auto_gather_all(const struct fast_topo *t, const uint64_t *D, struct feat *f);
/* The largest server pair (FAST's packed tiles); never fails. */
uint64_t auto_pair_pass(const struct fast_topo *t, const uint64_t *D);
/* Hier's NIC loads, per-link forwarding and largest message into f. */
int auto_hier_pass(const struct fast_topo *t, const uint64_t *D, struct feat *f);
/* Floors under hier's features from the others' (exact_hier false). */
void auto_hier_floors(const struct fast_topo *t, struct feat *f);

/* --- algo_auto_spread.c: spreadout's rounds --------------------------------- */

/* Spreadout's time over its n - 1 rounds as its implementation runs them
 * (by step: the rounds' sum; by rank: every GPU's waves); -1 when out of
 * memory. */
int auto_spread_pass(const struct fast_topo *t, const uint64_t *D, double *spread_s);
/* A floor under auto_spread_pass's time from the pass's features. */
double auto_spread_floor(const struct fast_topo *t, const struct feat *f);

/* --- algo_auto_ports.c: the features on a fabric that is not ideal ----------
 * (fast_topo_nics_ideal false: K != G, a slow or failed NIC), where
 * auto_gather, auto_gather_all, auto_pair_pass and auto_spread_pass
 * call them. */

/* After gather_g's pass: the scale-out features as equivalent bytes (the
 * bytes that at the nominal rate take as long as the load on its port,
 * through the proxies of relay.h), FAST's server rows and columns at the
 * server's ports, scale-up with the relay's hops.  -1 when out of memory. */
int auto_ports_adjust(const struct fast_topo *t, const uint64_t *D, struct feat *f);
/* What the largest server pair is scaled by: the largest G B_out / (a
 * server's ports' sum). */
double auto_ports_pair_factor(const struct fast_topo *t);
/* Spreadout's rounds on the ports as its implementation m runs them
 * (auto_spread_pass's sum, each round's scale-out time its most loaded
 * port's, scale-up per GPU with the relay's hops); -1 when out of memory. */
int auto_ports_spread(const struct fast_topo *t, const uint64_t *D, const struct fast_impl *m,
		      double *spread_s);

/* --- algo_auto_model.c ------------------------------------------------------ */

/* x for matrix D on t: the pass, and floors where it left a feature to a
 * pass of its own (the pair, hier's, spreadout's rounds).  0, or -1 when
 * out of memory (x then holds no features). */
int auto_features(struct fast_auto_feat *x, const struct fast_topo *t, const uint64_t *D);
/* x for matrix D on t by the scalar pass (auto_gather_all), no floors:
 * what the token-plan predictions read.  0 or -1 as above. */
int auto_features_all(struct fast_auto_feat *x, const struct fast_topo *t, const uint64_t *D);

/* --- algo_auto.c ------------------------------------------------------------- */

/* p's options become head, then "; " and the options p had (cut to fit):
 * an auto plan's record of its choice before the schedule's own. */
void auto_record(struct fast_plan *p, const char *head);

#endif
