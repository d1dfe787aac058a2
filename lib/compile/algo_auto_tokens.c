/*
 * algo_auto_tokens.c - `--algo auto` on token traffic (kind DISPATCH or
 * COMBINE; algo_auto.h, fast_auto_choose_matrix): the candidates are each
 * schedule's token plan (dedup=server, where its table entry has a token
 * compiler) before its byte plan, chosen by an evaluator where the caller
 * passes one (the simulator's, in every command and the executor), else
 * by the closed forms of algo_auto_model.c on the deduplicated matrix;
 * and the table's compile_tokens of auto, which compiles the choice.
 *
 * Workload: once per token matrix; the token compilers cost 0.3-40 ms
 * anyway, so here compiling and simulating every candidate is affordable
 * where on bytes it is not.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/compile/algo_auto_internal.h"
#include "lib/compile/tokens_internal.h"

/* --- token traffic -----------------------------------------------------
 *
 * A token plan (dedup=server) of fast or hier is, across servers, a byte
 * schedule of the deduplicated streams (tokens_internal.h: the virtual
 * matrix D' of tok_dedup_matrix, a token once per remote server, on the
 * sender's rail), so its T_sim is predicted as that algorithm's on D'
 * (fast staged or grouped: token plans never pack), plus the scale-up work a byte
 * plan of D' lacks: what the GPU that received a stream replicates to the
 * other destinations on its server (dispatch), or gathers from them and
 * sums (combine), rep below: one scale-up step's latency (its bytes
 * hide behind the crossing, token_predict()).
 *
 * On token traffic the choice is by T_sim alone: the token compilers
 * build a piece per group and server, 0.3-40 ms at 2 x 8 and 4 x 8 on the
 * MoE traces (`fast compare`, 2026 measurements in the commit message),
 * against 5-50 us for a byte plan of the same traffic, so T_sim + S would
 * rule out every token plan, the default included, while those plans
 * are what production dispatchers run (DeepEP computes its layout on the
 * GPU).  This closed form is what a caller without an evaluator gets; it
 * errs by 0.6-1.4x on token plans (400 of test_auto's 500 token cases
 * within the tie band of the best, 13 over the default's, with FAST's
 * grouped steps and the presets' implementations): the commands and the
 * executor pass the simulator instead (evaluate_matrix below), whose
 * choice is within the band on all 500. */


/* Per GPU x, the bytes x replicates over scale-up after receiving the
 * streams of its rail (dispatch: to each other destination of a group on
 * x's server; combine: the contributions it gathers): the largest into
 * *rep.  -1 on allocation failure. */
static int token_rep(const struct fast_topo *t, const struct fast_matrix *m, uint64_t *rep)
{
	uint32_t G = t->gpus, ng = t->servers * G;
	uint64_t *r = fast_calloc(ng, sizeof *r), best = 0;

	if (!r)
		return -1;
	for (uint32_t g = 0; g < m->ngroups; g++) {
		const struct fast_group *gr = &m->groups[g];
		uint64_t bytes = fast_group_bytes(m, g);
		uint32_t s = gr->src, a = s / G;
		for (uint32_t i = 0; i < gr->ndst;) {
			uint32_t b = m->dsts[gr->dst0 + i] / G, x = b * G + s % G, k = 0;
			bool x_in = false;
			for (; i < gr->ndst && m->dsts[gr->dst0 + i] / G == b; i++, k++)
				x_in |= m->dsts[gr->dst0 + i] == x;
			if (b != a)
				r[x] += bytes * (k - x_in);
		}
	}
	for (uint32_t x = 0; x < ng; x++)
		best = max64(best, r[x]);
	free(r);
	*rep = best;
	return 0;
}

/* Predicted T_sim of schedule a's token plan on the features x of m's
 * deduplicated matrix D', rep (token_rep) to replicate after crossing. */
static double token_predict(const struct fast_algo *a, const struct fast_auto_feat *x, uint64_t rep,
			    const struct fast_algo_opts *o)
{
	struct fast_algo_opts staged = *o;
	double sim_s, synth_s, g;

	staged.stages = FAST_STAGES_EXACT; /* token plans never pack */
	a->model.predict(a, x, &staged, &sim_s, &synth_s);
	/* the replication's bandwidth term, rep / B_up, made the predictions
	 * worse on the 500 cases of test_auto (fast: median predicted /
	 * simulated 1.10 with it over the last stage, 1.02 without; hier
	 * 0.89 as a rate limit, 1.01 without): it hides behind the crossing.
	 * Its step's latency stays. */
	sim_s += rep ? fast_tier_step_s(&x->t->up) : 0;
	/* FAST's token plans group their rail steps as its byte plans do,
	 * where that models 2% faster (compile_fast.c), the replication
	 * waiting on each pipelined: its latency alone */
	if (strcmp(a->name, "fast") == 0 &&
	    (g = fast_auto_fast_grouped_s(a, x, o) + (rep ? x->t->up.latency_us * 1e-6 : 0)) <
		    sim_s * (1 - 0.02))
		sim_s = g;
	return sim_s;
}

/* The candidates of token traffic, predicted (no evaluator). */
static void predict_matrix(const struct fast_topo *topo, const struct fast_matrix *m,
			   const struct fast_algo_opts *opts, struct fast_auto_choice *out)
{
	struct fast_algo_opts def, gpu;
	struct fast_auto_choice b;
	uint32_t ng = topo->servers * topo->gpus;
	uint64_t *Dd, rep = 0;
	struct fast_auto_feat x;
	double T[FAST_AUTO_MAX], best = INFINITY;

	if (!opts) {
		fast_algo_opts_default(&def);
		opts = &def;
	}
	if (opts->dedup == FAST_DEDUP_GPU) {
		fast_auto_choose(topo, m->bytes, opts, out);
		return;
	}
	gpu = *opts;
	gpu.dedup = FAST_DEDUP_GPU;
	fast_auto_predict(topo, m->bytes, &gpu, &b); /* full predictions: no floors */
	memset(out, 0, sizeof *out);
	Dd = fast_calloc((size_t)ng * ng, sizeof *Dd);
	bool have = Dd && token_rep(topo, m, &rep) == 0;
	if (have) {
		tok_dedup_matrix(topo, m, Dd);
		have = auto_features_all(&x, topo, Dd) == 0;
	}
	free(Dd);
	x.D = NULL; /* freed: the closed forms read the features only */
	for (uint32_t k = 0; k < b.n && out->n < FAST_AUTO_MAX; k++) {
		const struct fast_algo *a = fast_algo_find(b.algo[k]);
		if (a->compile_tokens && have) {
			uint32_t j = out->n++;
			out->algo[j] = b.algo[k];
			out->dedup[j] = FAST_DEDUP_SERVER;
			out->sim_s[j] = x.f.total ? token_predict(a, &x, rep, opts) : 0;
			out->synth_s[j] = 0; /* not modelled: see above */
		}
		if (out->n < FAST_AUTO_MAX) {
			uint32_t j = out->n++;
			out->algo[j] = b.algo[k];
			out->dedup[j] = FAST_DEDUP_GPU;
			out->sim_s[j] = b.sim_s[k];
			out->synth_s[j] = b.synth_s[k];
		}
	}
	for (uint32_t k = 0; k < out->n; k++)
		best = dmin(best, T[k] = out->sim_s[k]);
	for (uint32_t k = 0; k < out->n; k++)
		if (T[k] <= best * (1 + TIE_REL) + TIE_ABS_S) {
			out->best = k;
			break;
		}
}

/* --- token traffic, by evaluation ----------------------------------------
 *
 * With an evaluator (opts->eval, the simulator's in every command and the
 * executor) the token-traffic choice is not predicted but measured: every
 * candidate's plan is compiled, exactly as fast_compile compiles it
 * with that candidate's dedup, and timed by the evaluator; the least time
 * wins, near-ties to the first in the candidates' order.  The closed form
 * above errs by 0.6-1.4x on token plans (test_auto's 500 cases), too much
 * to keep the choice within the tie band of the best; the token compilers
 * already cost 0.3-40 ms, and a simulation of a candidate costs about as
 * much as its compile, so measuring costs a small multiple of the default
 * schedule's compile alone.  The plans are kept until the choice is made,
 * so the chosen one is not compiled twice. */

/* The candidates of m in order into out (names, dedups, n): per algorithm
 * of the table its token plan (dedup=server, where it has one and opts
 * allows it) before its byte plan. */
static void token_candidates(const struct fast_algo_opts *opts, struct fast_auto_choice *out)
{
	memset(out, 0, sizeof *out);
	for (const struct fast_algo *a = fast_algos; a->name && out->n < FAST_AUTO_MAX; a++) {
		if (!a->model.predict) /* auto itself */
			continue;
		if (a->compile_tokens && opts->dedup == FAST_DEDUP_SERVER) {
			out->algo[out->n] = a->name;
			out->dedup[out->n++] = FAST_DEDUP_SERVER;
		}
		if (out->n < FAST_AUTO_MAX) {
			out->algo[out->n] = a->name;
			out->dedup[out->n++] = FAST_DEDUP_GPU;
		}
	}
}

static int evaluate_matrix(const struct fast_topo *topo, const struct fast_matrix *m,
			   const struct fast_algo_opts *opts, struct fast_auto_choice *out,
			   struct fast_plan *chosen, struct fast_err *err)
{
	const struct fast_plan_eval *ev = opts->eval;
	struct fast_plan p[FAST_AUTO_MAX];
	struct fast_auto_choice c;
	double best = INFINITY;
	uint32_t made = 0, pick = 0;
	int rc = 0;

	token_candidates(opts, &c);
	c.evaluated = true;
	for (; made < c.n; made++) {
		struct fast_algo_opts o;
		fast_auto_opts_of(&c, made, opts, &o);
		o.eval = NULL; /* no candidate is auto */
		if ((rc = fast_compile(c.algo[made], topo, m, &o, &p[made], err)) < 0)
			break; /* p[made] was not made */
		if ((rc = ev->time(ev, topo, m, &p[made], &c.sim_s[made], err)) < 0) {
			fast_plan_free(&p[made]);
			break;
		}
		c.synth_s[made] = 0; /* not part of this choice (see above) */
		best = dmin(best, c.sim_s[made]);
	}
	if (rc < 0) { /* made: the candidate that failed */
		fast_err_prefix(err, "auto: %s (dedup=%s)", c.algo[made],
				c.dedup[made] == FAST_DEDUP_GPU ? "gpu" : "server");
		while (made > 0)
			fast_plan_free(&p[--made]);
		return rc;
	}
	while (c.sim_s[pick] > best * (1 + TIE_REL) + TIE_ABS_S)
		pick++;
	c.best = pick;
	for (uint32_t k = 0; k < made; k++)
		if (k != pick || !chosen)
			fast_plan_free(&p[k]);
	if (chosen)
		*chosen = p[pick];
	*out = c;
	return 0;
}

int fast_auto_choose_matrix(const struct fast_topo *topo, const struct fast_matrix *m,
			    const struct fast_algo_opts *opts, struct fast_auto_choice *out,
			    struct fast_plan *plan, struct fast_err *err)
{
	struct fast_algo_opts def, o;
	struct fast_auto_choice c;
	int rc;

	if (!opts) {
		fast_algo_opts_default(&def);
		opts = &def;
	}
	if (m->kind != FAST_TRAFFIC_BYTES && opts->eval)
		return evaluate_matrix(topo, m, opts, out, plan, err);
	if (m->kind == FAST_TRAFFIC_BYTES)
		fast_auto_choose(topo, m->bytes, opts, &c);
	else
		predict_matrix(topo, m, opts, &c);
	if (plan) {
		fast_auto_opts_of(&c, c.best, opts, &o);
		if ((rc = fast_compile(c.algo[c.best], topo, m, &o, plan, err)) < 0)
			return rc;
	}
	*out = c;
	return 0;
}

int fast_sched_auto_tokens(const struct fast_topo *topo, const struct fast_matrix *m,
			   const struct fast_algo_opts *opts, struct fast_plan *out,
			   struct fast_err *err)
{
	struct fast_auto_choice c;
	struct fast_plan p;
	char head[sizeof p.options], *end;
	int rc;

	if ((rc = fast_auto_choose_matrix(topo, m, opts, &c, &p, err)) < 0)
		return rc;
	/* fast_compile, which calls this, adds the plan's "dedup=":
	 * the chosen plan's own is dropped here (it ends the options) */
	if ((end = strstr(p.options, "dedup=")) != NULL) {
		while (end > p.options && end[-1] == ' ')
			end--;
		*end = '\0';
	}
	if (c.evaluated)
		snprintf(head, sizeof head, "auto: by %s of %u candidates: %s dedup=%s %s_s=%.4g",
			 opts->eval->name, c.n, c.algo[c.best],
			 c.dedup[c.best] == FAST_DEDUP_GPU ? "gpu" : "server", opts->eval->name,
			 c.sim_s[c.best]);
	else
		snprintf(head, sizeof head, "auto: predicted sim_s=%.4g synthesis_s=%.3g",
			 c.sim_s[c.best], c.synth_s[c.best]);
	auto_record(&p, head);
	*out = p;
	return 0;
}
