/*
 * algo_auto.c - `--algo auto` (algo_auto.h) on byte traffic: the choice
 * among the schedules of the algorithm table, and the table's `auto`
 * entry, which compiles the choice.
 *
 * The choice iterates the table: every entry with a model (struct
 * fast_algo_model, algo.h) is a candidate, predicted by its own closed
 * form (algo_auto_model.c) from the features of one pass over the matrix
 * (algo_auto_feat.c), T = T_sim + S.  A closed form that reads a feature
 * the pass left to one of its own returns a floor; that pass (the
 * entry's refine) is made only when the floor comes near the best
 * (decide()).  Near-ties (TIE_REL, TIE_ABS_S) go to the first candidate
 * in the table, fast.  Token traffic: algo_auto_tokens.c.
 *
 * Workload: once per matrix on every rank of `fast run --algo auto`; it
 * must cost far less than it saves (about a microsecond at 4 x 8:
 * algo_auto_feat.c has the measurements).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lib/compile/algo_auto_internal.h"

/* fast_auto_choose (every = false) and fast_auto_predict (every = true).
 * First every candidate from the pass's features, with floors where the
 * pass left a feature to one of its own (the entry's refine: spreadout's
 * rounds, always; FAST's largest server pair where it may pack its
 * stages; hier's loads and largest message, likewise).  A refine is made
 * when the floor (less a rounding margin) comes within the tie band of
 * the best exact prediction -- else that candidate can be neither chosen
 * nor the best, and the choice is the full prediction's -- cheapest
 * (refine_rank) first, each exact prediction lowering the best that the
 * next floor must come near.  The floors matter at 16 x 8 and up, where
 * a pass costs about a microsecond (docs/algorithms.md, "Choosing the
 * schedule").  FAST's grouped prediction takes hier's loads as the pass
 * left them (floors on the AVX-512 pass): its choice is the full
 * prediction's on test_auto_feat's 3186 decisions; fast_auto_predict
 * makes them exact first. */
static void decide(const struct fast_topo *topo, const uint64_t *D, const struct fast_algo_opts *opts,
		   bool every, struct fast_auto_choice *out)
{
	const struct fast_algo *cand[FAST_AUTO_MAX];
	struct fast_algo_opts def;
	struct fast_auto_feat x;
	bool have, lazy[FAST_AUTO_MAX];
	double best = INFINITY, T[FAST_AUTO_MAX];
	unsigned ranks = 0;

	if (!opts) {
		fast_algo_opts_default(&def);
		opts = &def;
	}
	memset(out, 0, sizeof *out);
	have = auto_features(&x, topo, D) == 0;
	/* every prediction exact: FAST's grouped one reads hier's loads
	 * without a refine of its own (algo_auto_model.c) */
	if (have && every)
		have = auto_hier_pass(topo, D, &x.f) == 0;
	for (const struct fast_algo *a = fast_algos; a->name && out->n < FAST_AUTO_MAX; a++) {
		uint32_t k = out->n;
		if (!a->model.predict) /* auto itself */
			continue;
		cand[k] = a;
		out->algo[k] = a->name;
		out->dedup[k] = FAST_DEDUP_GPU; /* the byte matrix */
		out->n++;
		lazy[k] = false;
		T[k] = 0;
		if (!have) /* out of memory: FAST, the default, predicted 0 so that it is chosen */
			continue;
		lazy[k] = a->model.predict(a, &x, opts, &out->sim_s[k], &out->synth_s[k]) &&
			  a->model.refine;
		T[k] = out->sim_s[k] + out->synth_s[k];
		if (!lazy[k])
			best = dmin(best, T[k]);
		else if (a->model.refine_rank >= ranks)
			ranks = a->model.refine_rank + 1;
	}
	/* the floors, cheapest pass first (at 16 x 8: FAST's pair 1.1 us,
	 * hier's about as much, spreadout's rounds more) */
	for (unsigned r = 0; r < ranks; r++)
		for (uint32_t k = 0; k < out->n; k++) {
			const struct fast_algo *a = cand[k];
			if (!lazy[k] || a->model.refine_rank != r ||
			    !(every || T[k] * (1 - 1e-9) <= best * (1 + TIE_REL) + TIE_ABS_S))
				continue;
			if (a->model.refine(&x) < 0)
				continue; /* out of memory: the floor stays */
			a->model.predict(a, &x, opts, &out->sim_s[k], &out->synth_s[k]);
			T[k] = out->sim_s[k] + out->synth_s[k];
			lazy[k] = false;
			best = dmin(best, T[k]);
		}
	for (uint32_t k = 0; k < out->n; k++)
		best = dmin(best, T[k]);
	/* near a tie the predictor's error decides, not the schedules: take the
	 * first in the table (fast, the default, first) of those within
	 * TIE_REL + TIE_ABS_S of the least prediction */
	for (uint32_t k = 0; k < out->n; k++)
		if (T[k] <= best * (1 + TIE_REL) + TIE_ABS_S) {
			out->best = k;
			break;
		}
}

void fast_auto_choose(const struct fast_topo *topo, const uint64_t *D,
		      const struct fast_algo_opts *opts, struct fast_auto_choice *out)
{
	decide(topo, D, opts, false, out);
}

void fast_auto_predict(const struct fast_topo *topo, const uint64_t *D,
		       const struct fast_algo_opts *opts, struct fast_auto_choice *out)
{
	decide(topo, D, opts, true, out);
}

void fast_auto_opts_of(const struct fast_auto_choice *c, uint32_t k, const struct fast_algo_opts *o,
		       struct fast_algo_opts *out)
{
	if (o)
		*out = *o;
	else
		fast_algo_opts_default(out);
	out->dedup = c->dedup[k];
}

void auto_record(struct fast_plan *p, const char *head)
{
	char inner[sizeof p->options];
	int n;

	memcpy(inner, p->options, sizeof inner);
	n = snprintf(p->options, sizeof p->options, "%s", head);
	if (inner[0] && n > 0 && (size_t)n + 2 < sizeof p->options)
		snprintf(p->options + n, sizeof p->options - (size_t)n, "; %.*s",
			 (int)(sizeof p->options - (size_t)n - 3), inner);
}

int fast_sched_auto(const struct fast_topo *topo, const uint64_t *D,
		    const struct fast_algo_opts *opts, struct fast_plan *out,
		    struct fast_err *err)
{
	struct fast_auto_choice c;
	const struct fast_algo *a;
	struct fast_plan p;
	char head[sizeof p.options];
	int rc;

	fast_auto_choose(topo, D, opts, &c);
	a = fast_algo_find(c.algo[c.best]);
	if ((rc = a->compile(topo, D, opts, &p, err)) < 0)
		return rc;
	/* the plan's algo stays the schedule's own name; the options record
	 * the choice (deterministic predictions, never a measured time) */
	snprintf(head, sizeof head, "auto: predicted sim_s=%.4g synthesis_s=%.3g", c.sim_s[c.best],
		 c.synth_s[c.best]);
	auto_record(&p, head);
	*out = p;
	return 0;
}
