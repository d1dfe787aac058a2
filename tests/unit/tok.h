/*
 * tok.h - hand-made token traffic for the unit suites: one matrix of token
 * groups (include/fast/traffic.h) built group by group in C, its per-GPU byte
 * matrix filled by the library's one definition
 * (fast_matrix_bytes_from_groups).
 *
 *   struct fast_traffic t;
 *   tok_init(&t, 4, FAST_TRAFFIC_DISPATCH, 8);      4 GPUs, 8 bytes a token
 *   tok_group(&t, 0, 3, 2, (uint32_t[]){ 2, 3 });   GPU 0, 3 tokens -> {2, 3}
 *   tok_done(&t);                                   fills t.m[0].bytes
 *   ...
 *   fast_traffic_free(&t);                          groups and dsts too
 *
 * Failures (no memory, a malformed group) end the test run: a suite
 * cannot go on with half a matrix.
 */
#ifndef FAST_TEST_TOK_H
#define FAST_TEST_TOK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fast/plan.h"
#include "fast/traffic.h"

static inline void tok_die(const char *what)
{
	fprintf(stderr, "tok.h: %s\n", what);
	exit(2);
}

static inline void tok_init(struct fast_traffic *t, uint32_t ng, enum fast_traffic_kind kind,
			    uint64_t token_bytes)
{
	struct fast_limits lim;
	struct fast_err err;

	fast_limits_default(&lim);
	memset(t, 0, sizeof *t);
	if (fast_traffic_alloc(t, ng, 1, &lim, &err) < 0)
		tok_die(err.msg);
	t->m[0].kind = kind;
	t->m[0].token_bytes = token_bytes;
}

/* Append group (src, Dest = dsts[0..ndst), tokens); dsts ascending. */
static inline uint32_t tok_group(struct fast_traffic *t, uint32_t src, uint64_t tokens,
				 uint32_t ndst, const uint32_t *dsts)
{
	struct fast_matrix *m = &t->m[0];
	struct fast_group *g = realloc(m->groups, (m->ngroups + 1) * sizeof *g);
	uint32_t *d = realloc(m->dsts, (m->ndsts + ndst + 1) * sizeof *d);

	if (!g || !d)
		tok_die("out of memory");
	m->groups = g;
	m->dsts = d;
	g[m->ngroups] = (struct fast_group){ src, m->ndsts, ndst, tokens };
	memcpy(d + m->ndsts, dsts, ndst * sizeof *d);
	m->ndsts += ndst;
	return m->ngroups++;
}

static inline void tok_done(struct fast_traffic *t)
{
	struct fast_err err;

	memset(t->m[0].bytes, 0, (size_t)t->ng * t->ng * sizeof *t->m[0].bytes);
	if (fast_matrix_bytes_from_groups(&t->m[0], t->ng, &err) < 0)
		tok_die(err.msg);
}

/*
 * Append n random groups on t's ng GPUs: a source anywhere, each GPU a
 * destination with chance 1/3 up to maxdst of them (none drawn: the GPU G
 * further on), 1..maxtok tokens.  G is the GPUs per server.
 */
static inline void tok_random_groups(struct fast_traffic *t, struct fast_rng *rng, uint32_t n,
				     uint32_t maxdst, uint32_t G, uint64_t maxtok)
{
	uint32_t ng = t->ng, dst[FAST_GROUP_MAX_DESTS];

	if (maxdst > FAST_GROUP_MAX_DESTS)
		tok_die("tok_random_groups: maxdst over FAST_GROUP_MAX_DESTS");
	for (uint32_t k = 0; k < n; k++) {
		uint32_t src = (uint32_t)fast_rng_below(rng, ng), nd = 0;
		for (uint32_t x = 0; x < ng && nd < maxdst; x++)
			if (fast_rng_below(rng, 3) == 0)
				dst[nd++] = x;
		if (!nd)
			dst[nd++] = (src + G) % ng;
		tok_group(t, src, 1 + fast_rng_below(rng, maxtok), nd, dst);
	}
}

/* A builder call that must succeed. */
#define TOK_OK(x)                    \
	do {                         \
		if ((x) < 0)         \
			tok_die(#x); \
	} while (0)

/*
 * The two example plans on 2 servers x 2 GPUs (GPUs 0, 1 | 2, 3), 4 bytes
 * a token, both correct:
 *
 * dispatch: g0 = (GPU 0, {1, 2, 3}, 3 tokens), g1 = (GPU 2, {0, 1}, 2).
 *   step 0 rail perm [1, 0], 100 bytes: lanes GPU 0 -> 2 (g0 0..12) and
 *          GPU 2 -> 0 (g1 0..8), each crossing once per server;
 *   step 1 redist of 0: GPU 2 copies g0 to 3, GPU 0 copies g1 to 1;
 *   step 2 up: GPU 0 -> 1 g0 0..12 (its own bytes: replication).
 * combine: g0 = (GPU 0, {1, 2, 3}, 3), g1 = (GPU 2, {0, 2}, 2); masks
 *   [0x2, 0x4, 0x6, 0x1].
 *   step 0 up: GPU 3 -> 2 g0 {3} (mask 1: 0x4);
 *   step 1 reduce at GPU 2: g0 {2} + {3} = 0x6 (dep 0);
 *   step 2 rail perm [1, 0], 100 bytes (dep 1): lanes GPU 2 -> 0 (g0,
 *          0x6) and GPU 0 -> 2 (g1, 0x1: GPU 0's contribution);
 *   step 3 up: GPU 1 -> 0 g0 0x1 (GPU 1's contribution).
 *   GPU 0 ends with 0x6 + 0x1 for g0, GPU 2 with 0x1 + its own for g1.
 */
static inline void tok_dispatch_example(struct fast_traffic *t, struct fast_plan *p)
{
	uint32_t perm[2] = { 1, 0 };
	struct fast_err err;

	tok_init(t, 4, FAST_TRAFFIC_DISPATCH, 4);
	tok_group(t, 0, 3, 3, (const uint32_t[]){ 1, 2, 3 });
	tok_group(t, 2, 2, 2, (const uint32_t[]){ 0, 1 });
	tok_done(t);
	fast_plan_init(p, 2, 2, "test");
	p->kind = FAST_TRAFFIC_DISPATCH;
	snprintf(p->label, sizeof p->label, "m0");
	TOK_OK(fast_plan_add_lane(p, 0, 1, 0, &err));
	TOK_OK(fast_plan_add_lane_piece(p, 0, 0, 0, 12, &err));
	TOK_OK(fast_plan_add_lane(p, 1, 0, 0, &err));
	TOK_OK(fast_plan_add_lane_piece(p, 1, 0, 0, 8, &err));
	TOK_OK(fast_plan_add_step(p, FAST_STEP_RAIL, FAST_TIER_OUT, &err));
	TOK_OK(fast_plan_set_perm(p, perm, 100, &err));
	TOK_OK(fast_plan_add_step(p, FAST_STEP_REDIST, FAST_TIER_UP, &err));
	TOK_OK(fast_plan_add_dep(p, 1, 0, false, &err));
	TOK_OK(fast_plan_set_redist(p, 0, &err));
	TOK_OK(fast_plan_add_step(p, FAST_STEP_EXPLICIT, FAST_TIER_UP, &err));
	TOK_OK(fast_plan_add_xfer(p, 0, 1, &err));
	TOK_OK(fast_plan_add_piece(p, 0, 0, 0, 12, &err));
}

static inline void tok_combine_example(struct fast_traffic *t, struct fast_plan *p)
{
	uint32_t perm[2] = { 1, 0 };
	struct fast_err err;

	tok_init(t, 4, FAST_TRAFFIC_COMBINE, 4);
	tok_group(t, 0, 3, 3, (const uint32_t[]){ 1, 2, 3 });
	tok_group(t, 2, 2, 2, (const uint32_t[]){ 0, 2 });
	tok_done(t);
	fast_plan_init(p, 2, 2, "test");
	p->kind = FAST_TRAFFIC_COMBINE;
	snprintf(p->label, sizeof p->label, "m0");
	TOK_OK(fast_plan_add_mask(p, 0x2, &err));
	TOK_OK(fast_plan_add_mask(p, 0x4, &err));
	TOK_OK(fast_plan_add_mask(p, 0x6, &err));
	TOK_OK(fast_plan_add_mask(p, 0x1, &err));
	TOK_OK(fast_plan_add_lane(p, 1, 0, 0, &err));
	TOK_OK(fast_plan_add_lane_piece(p, 0, 2, 0, 12, &err));
	TOK_OK(fast_plan_add_lane(p, 0, 1, 0, &err));
	TOK_OK(fast_plan_add_lane_piece(p, 1, 3, 0, 8, &err));
	TOK_OK(fast_plan_add_step(p, FAST_STEP_EXPLICIT, FAST_TIER_UP, &err));
	TOK_OK(fast_plan_add_xfer(p, 3, 2, &err));
	TOK_OK(fast_plan_add_piece(p, 0, 1, 0, 12, &err));
	TOK_OK(fast_plan_add_step(p, FAST_STEP_REDUCE, FAST_TIER_UP, &err));
	TOK_OK(fast_plan_add_dep(p, 1, 0, false, &err));
	TOK_OK(fast_plan_add_xfer(p, 2, 2, &err));
	TOK_OK(fast_plan_add_piece(p, 0, 0, 0, 12, &err));
	TOK_OK(fast_plan_add_piece(p, 0, 1, 0, 12, &err));
	TOK_OK(fast_plan_add_step(p, FAST_STEP_RAIL, FAST_TIER_OUT, &err));
	TOK_OK(fast_plan_add_dep(p, 2, 1, false, &err));
	TOK_OK(fast_plan_set_perm(p, perm, 100, &err));
	TOK_OK(fast_plan_add_step(p, FAST_STEP_EXPLICIT, FAST_TIER_UP, &err));
	TOK_OK(fast_plan_add_xfer(p, 1, 0, &err));
	TOK_OK(fast_plan_add_piece(p, 0, 3, 0, 12, &err));
}

#endif
