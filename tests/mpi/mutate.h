/*
 * mutate.h - plans that the checker accepts but no compiler writes: an
 * expanded plan with a few changes that keep it correct, for the property
 * test that `fast check` and `fast run` accept the same plans.  Shared by
 * tests/unit/test_exec.c (every rank's program run by an interpreter, no
 * MPI) and tests/mpi/plan_mutants.c (plan files for `fast run` under
 * mpirun).  Header-only, static functions; needs lib/ (libfast.a).
 *
 * Mutations of an expanded plan (all steps EXPLICIT):
 *  - a duplicate forward: a relay sends bytes it holds once more, to a GPU
 *    that is not their destination, in a new step that waits for what the
 *    real forward waits for, and (half the time) that the real forward
 *    waits for: the spare copy goes first, then the real one;
 *  - a spare copy: a source sends a range of its message to a third GPU;
 *  - a spare to the relay: the source sends a relay a copy of bytes that
 *    the relay also receives (and forwards) the normal way;
 *  - each spare may travel one hop further (a relay of spare bytes);
 *  - reordered steps: step ids permuted (the executor orders the nodes of
 *    a wave by step id), the transfers of one step reversed.
 * New steps carry one transfer each, so a FAST plan's tier-out steps stay
 * one-to-one.  The checker decides: callers keep only what it accepts.
 */
#ifndef FAST_TESTS_MUTATE_H
#define FAST_TESTS_MUTATE_H

#include <stdlib.h>
#include <string.h>

#include "fast/algo.h"
#include "fast/check.h"
#include "fast/plan.h"

#define MUT_NONE UINT32_MAX
#define MUT_MAX_EXTRA 8

struct mut_extra {
	uint32_t from, to;
	struct fast_piece pc;
	uint32_t deps_of; /* wait (whole steps) for what this original step waits for */
	uint32_t after;   /* also wait for this earlier extra */
	uint32_t before;  /* the original step that waits for this one */
};

struct mutation {
	uint32_t *perm;   /* new id of original step s (NULL: unchanged) */
	uint32_t reversed; /* original step whose transfers are reversed, or MUT_NONE */
	struct mut_extra ex[MUT_MAX_EXTRA];
	uint32_t nex;
	uint32_t dup_forwards; /* how many extras are duplicate forwards */
};

static enum fast_tier_id mut_tier(const struct fast_plan *p, uint32_t a, uint32_t b)
{
	return a / p->gpus == b / p->gpus ? FAST_TIER_UP : FAST_TIER_OUT;
}

static uint32_t mut_new_id(const struct fast_plan *p, const struct mutation *m, uint32_t s)
{
	(void)p;
	return m->perm ? m->perm[s] : s;
}

/* The mutated plan (out is initialised here; the caller frees it). */
static int mut_build(const struct fast_plan *p, const struct mutation *m, struct fast_plan *out,
		     struct fast_err *err)
{
	uint32_t ns = (uint32_t)p->nsteps, *inv = calloc(ns ? ns : 1, sizeof *inv);
	int rc = 0;

	if (!inv)
		return fast_err_set(err, FAST_ENOMEM, "mutate: out of memory");
	fast_plan_init(out, p->servers, p->gpus, p->algo);
	memcpy(out->label, p->label, sizeof out->label);
	memcpy(out->options, p->options, sizeof out->options);
	out->matrix = p->matrix;
	for (uint32_t s = 0; s < ns; s++)
		inv[mut_new_id(p, m, s)] = s;
	for (uint32_t i = 0; i < ns && rc >= 0; i++) {
		const struct fast_step *st = &p->steps[inv[i]];
		if ((rc = fast_plan_add_step(out, FAST_STEP_EXPLICIT, st->tier, err)) < 0)
			break;
		for (uint32_t d = 0; d < st->ndeps && rc >= 0; d++) {
			const struct fast_dep *dp = &p->deps[st->dep0 + d];
			rc = fast_plan_add_dep(out, i, mut_new_id(p, m, dp->step), dp->pipelined, err);
		}
		for (uint32_t e = 0; e < m->nex && rc >= 0; e++)
			if (m->ex[e].before == inv[i])
				rc = fast_plan_add_dep(out, i, ns + e, false, err);
		if (rc >= 0 && st->chunks > 1)
			rc = fast_plan_set_chunks(out, st->chunks, err);
		for (uint32_t t = 0; t < st->nxfers && rc >= 0; t++) {
			uint32_t k = inv[i] == m->reversed ? st->nxfers - 1 - t : t;
			const struct fast_xfer *x = &p->xfers[st->xfer0 + k];
			rc = fast_plan_add_xfer(out, x->from, x->to, err);
			for (uint32_t q = 0; q < x->npieces && rc >= 0; q++) {
				const struct fast_piece *pc = &p->pieces[x->piece0 + q];
				rc = fast_plan_add_piece(out, pc->src, pc->dst, pc->off, pc->len, err);
			}
		}
	}
	for (uint32_t e = 0; e < m->nex && rc >= 0; e++) {
		const struct mut_extra *x = &m->ex[e];
		uint32_t id = ns + e;
		if ((rc = fast_plan_add_step(out, FAST_STEP_EXPLICIT, mut_tier(p, x->from, x->to), err)) < 0)
			break;
		if (x->deps_of != MUT_NONE) {
			const struct fast_step *st = &p->steps[x->deps_of];
			for (uint32_t d = 0; d < st->ndeps && rc >= 0; d++)
				rc = fast_plan_add_dep(out, id, mut_new_id(p, m, p->deps[st->dep0 + d].step),
						       false, err);
		}
		if (rc >= 0 && x->after != MUT_NONE)
			rc = fast_plan_add_dep(out, id, ns + x->after, false, err);
		if (rc >= 0)
			rc = fast_plan_add_xfer(out, x->from, x->to, err);
		if (rc >= 0)
			rc = fast_plan_add_piece(out, x->pc.src, x->pc.dst, x->pc.off, x->pc.len, err);
	}
	free(inv);
	if (rc < 0)
		fast_plan_free(out);
	return rc < 0 ? rc : 0;
}

/* A GPU other than a and b (ng >= 3). */
static uint32_t mut_third(struct fast_rng *rng, uint32_t ng, uint32_t a, uint32_t b)
{
	uint32_t t;

	do
		t = (uint32_t)fast_rng_below(rng, ng);
	while (t == a || t == b);
	return t;
}

/* A random sub-range of piece pc. */
static struct fast_piece mut_subrange(struct fast_rng *rng, const struct fast_piece *pc)
{
	struct fast_piece f = *pc;
	uint64_t a = fast_rng_below(rng, pc->len), b = fast_rng_below(rng, pc->len);

	if (fast_rng_below(rng, 2) == 0) /* half the time the whole piece */
		return f;
	if (a > b) {
		uint64_t t = a;
		a = b;
		b = t;
	}
	f.off = pc->off + a;
	f.len = b - a + 1;
	return f;
}

/* Add extra x, and half the time one more hop of its bytes. */
static void mut_push(struct mutation *m, struct fast_rng *rng, uint32_t ng, struct mut_extra x)
{
	if (m->nex >= MUT_MAX_EXTRA)
		return;
	m->ex[m->nex++] = x;
	if (m->nex < MUT_MAX_EXTRA && fast_rng_below(rng, 2) == 0) {
		struct mut_extra hop = { x.to, mut_third(rng, ng, x.to, x.pc.dst), x.pc, MUT_NONE,
					 m->nex - 1, MUT_NONE };
		m->ex[m->nex++] = hop;
	}
}

/* A random (step, transfer, piece) where the sender relays the piece;
 * false when the plan has none. */
static bool mut_relayed(const struct fast_plan *p, struct fast_rng *rng, uint32_t *step,
			const struct fast_xfer **xfer, const struct fast_piece **piece)
{
	for (int tries = 0; tries < 200; tries++) {
		uint32_t s = (uint32_t)fast_rng_below(rng, p->nsteps);
		const struct fast_step *st = &p->steps[s];
		const struct fast_xfer *x;
		const struct fast_piece *pc;
		if (!st->nxfers)
			continue;
		x = &p->xfers[st->xfer0 + fast_rng_below(rng, st->nxfers)];
		if (!x->npieces || x->from == x->to)
			continue;
		pc = &p->pieces[x->piece0 + fast_rng_below(rng, x->npieces)];
		if (pc->src != x->from && pc->dst != x->from) {
			*step = s;
			*xfer = x;
			*piece = pc;
			return true;
		}
	}
	return false;
}

/* Draw 1..3 mutations of expanded plan p (for matrix D); m->perm is
 * allocated here (free it with mut_free). */
static int mut_random(const struct fast_plan *p, const uint64_t *D, struct fast_rng *rng,
		      struct mutation *m)
{
	uint32_t ng = p->servers * p->gpus, ns = (uint32_t)p->nsteps;
	uint32_t ops = 1 + (uint32_t)fast_rng_below(rng, 3);

	memset(m, 0, sizeof *m);
	m->reversed = MUT_NONE;
	if (ng < 3 || ns == 0)
		return 0;
	for (uint32_t k = 0; k < ops; k++) {
		uint32_t s;
		const struct fast_xfer *x;
		const struct fast_piece *pc;
		switch (fast_rng_below(rng, 4)) {
		case 0: /* duplicate forward */
			if (mut_relayed(p, rng, &s, &x, &pc)) {
				struct fast_piece f = mut_subrange(rng, pc);
				struct mut_extra e = { x->from, mut_third(rng, ng, x->from, pc->dst), f, s,
						       MUT_NONE, fast_rng_below(rng, 2) ? s : MUT_NONE };
				mut_push(m, rng, ng, e);
				m->dup_forwards++;
			}
			break;
		case 1: { /* spare copy from the source */
			uint32_t a = (uint32_t)fast_rng_below(rng, ng), b = (uint32_t)fast_rng_below(rng, ng);
			uint64_t len = D[(size_t)a * ng + b];
			if (a != b && len > 0) {
				struct fast_piece whole = { a, b, 0, len };
				struct mut_extra e = { a, mut_third(rng, ng, a, b), mut_subrange(rng, &whole),
						       MUT_NONE, MUT_NONE, MUT_NONE };
				mut_push(m, rng, ng, e);
			}
			break;
		}
		case 2: /* a spare to a relay of the same bytes */
			if (mut_relayed(p, rng, &s, &x, &pc)) {
				struct mut_extra e = { pc->src, x->from, mut_subrange(rng, pc), MUT_NONE,
						       MUT_NONE, fast_rng_below(rng, 2) ? s : MUT_NONE };
				mut_push(m, rng, ng, e);
			}
			break;
		default: /* reorder */
			if (!m->perm) {
				m->perm = malloc((size_t)ns * sizeof *m->perm);
				if (!m->perm)
					return FAST_ENOMEM;
				for (uint32_t i = 0; i < ns; i++)
					m->perm[i] = i;
				for (uint32_t i = ns - 1; i > 0; i--) {
					uint32_t j = (uint32_t)fast_rng_below(rng, i + 1), t = m->perm[i];
					m->perm[i] = m->perm[j];
					m->perm[j] = t;
				}
			}
			m->reversed = (uint32_t)fast_rng_below(rng, ns);
			break;
		}
	}
	return 0;
}

static void mut_free(struct mutation *m)
{
	free(m->perm);
	m->perm = NULL;
}

/* One checker-accepted mutant of the algo plan for D (expanded), in *out:
 * 1 accepted, 0 rejected by the checker (or nothing to mutate), < 0 an
 * error (compiling).  *dups: duplicate forwards in it. */
static int mut_one(const char *algo, const struct fast_topo *t, const uint64_t *D,
		   struct fast_rng *rng, struct fast_plan *out, uint32_t *dups, struct fast_err *err)
{
	struct fast_matrix mx = fast_matrix_of(D, fast_topo_ngpus(t));
	struct fast_plan p, ex;
	struct fast_plan_view v;
	struct mutation m;
	int rc;

	if ((rc = fast_compile(algo, t, &mx, NULL, &p, err)) < 0)
		return rc;
	rc = fast_plan_expand(&p, NULL, &ex, err);
	fast_plan_free(&p);
	if (rc < 0)
		return rc;
	if ((rc = mut_random(&ex, D, rng, &m)) < 0 || (rc = mut_build(&ex, &m, out, err)) < 0) {
		mut_free(&m);
		fast_plan_free(&ex);
		return rc;
	}
	*dups = m.dup_forwards;
	if (m.nex == 0 && !m.perm) { /* nothing changed */
		fast_plan_free(out);
		fast_plan_free(&ex);
		return 0;
	}
	mut_free(&m);
	fast_plan_free(&ex);
	/* a mutant the checker refuses is no mutant to run */
	if ((rc = fast_plan_view_open(&v, out, &mx, err)) == 0) {
		rc = fast_plan_check(&v, t, err);
		fast_plan_view_close(&v);
	}
	if (rc < 0) {
		fast_plan_free(out);
		return 0;
	}
	return 1;
}

#endif
