/*
 * test_exec.c - the executor's program builder (exec/prog.c) and plan cache
 * (exec/cache.c), without MPI: every rank's program is built and all of
 * them are run together by a small interpreter (messages are FIFOs per
 * ordered pair, a rank blocks on a receive until the message is there), on
 * real buffers filled with a byte pattern.  Every byte must land where
 * MPI_Alltoallv would put it, staging must stay inside the arena, and no
 * program may deadlock.  The two exec files are compiled into this test
 * (they need no MPI), the plans come from lib/ (libfast.a).
 */
#include <CUnit/Basic.h>

#include "unit.h"
#include <stdlib.h>
#include <string.h>

#include "exec/prog.c"
#include "exec/prog_wave.c"
#include "exec/prog_flight.c"
#include "exec/cache.c"
#include "fast/algo.h"
#include "fast/topo.h"
#include "tests/mpi/mutate.h"

static uint8_t pattern(uint32_t s, uint32_t d, uint64_t o)
{
	uint64_t x = (o + 1) * UINT64_C(0x9E3779B97F4A7C15) ^ (uint64_t)s * UINT64_C(0xBF58476D1CE4E5B9) ^
		     ((uint64_t)d + 1) * UINT64_C(0x94D049BB133111EB);
	x ^= x >> 29;
	return (uint8_t)(x % 255);
}

struct msg {
	uint8_t *data;
	uint64_t len;
};

struct fifo {
	struct msg *m;
	size_t head, n, cap;
};

struct rankstate {
	struct fast_prog *g;
	uint8_t *send, *recv, *stage;
	uint64_t *sd, *rd;
	size_t wave;
	bool sent; /* this wave's pre-copies and sends are done */
};

static uint8_t *where(struct rankstate *r, const struct fast_loc *l, uint64_t len, bool *oob)
{
	switch (l->kind) {
	case LOC_SEND:
		return r->send + r->sd[l->msg] + l->off;
	case LOC_RECV:
		return r->recv + r->rd[l->msg] + l->off;
	default:
		if (l->off + len > r->g->staging)
			*oob = true;
		return r->stage + l->off;
	}
}

static void do_copy(struct rankstate *x, const struct fast_pcopy *c, bool *oob)
{
	uint8_t *dst = where(x, &c->dst, c->len, oob);

	if (c->op == FAST_POP_ZERO)
		memset(dst, 0, c->len);
	else if (c->op == FAST_POP_ADD)
		fast_prog_add_bytes(dst, where(x, &c->src, c->len, oob), c->len);
	else
		memmove(dst, where(x, &c->src, c->len, oob), c->len);
}

/* Run every rank's program (buffers set up by the caller): 0, or -1 on a
 * deadlock, -2 on a length mismatch, -3 on staging overrun. */
static long walk(struct rankstate *rs, uint32_t ng)
{
	struct fifo *q = calloc((size_t)ng * ng, sizeof *q);
	long wrong = 0;
	bool oob = false, progress = true;
	uint32_t done = 0;

	for (uint32_t r = 0; r < ng; r++)
		rs[r].stage = malloc(rs[r].g->staging + 1);
	while (done < ng && progress) {
		progress = false;
		done = 0;
		for (uint32_t r = 0; r < ng; r++) {
			struct rankstate *x = &rs[r];
			const struct fast_pwave *w;
			bool ready = true;
			if (x->wave >= x->g->nwaves) {
				done++;
				continue;
			}
			w = &x->g->waves[x->wave];
			if (!x->sent) {
				for (uint32_t i = 0; i < w->npre; i++)
					do_copy(x, &x->g->copies[w->pre0 + i], &oob);
				for (uint32_t i = 0; i < w->nsend; i++) {
					const struct fast_pmsg *m = &x->g->sends[w->send0 + i];
					struct fifo *f = &q[(size_t)r * ng + m->peer];
					struct msg mm = { malloc(m->len), m->len };
					memcpy(mm.data, where(x, &m->at, m->len, &oob), m->len);
					if (f->n == f->cap) {
						f->cap = f->cap ? f->cap * 2 : 8;
						f->m = realloc(f->m, f->cap * sizeof *f->m);
					}
					f->m[f->n++] = mm;
				}
				x->sent = true;
				progress = true;
			}
			/* receives: matched in order per peer */
			{
				size_t *need = calloc(ng, sizeof *need);
				for (uint32_t i = 0; i < w->nrecv; i++)
					need[x->g->recvs[w->recv0 + i].peer]++;
				for (uint32_t p = 0; p < ng; p++)
					if (q[(size_t)p * ng + r].n - q[(size_t)p * ng + r].head < need[p])
						ready = false;
				free(need);
			}
			if (!ready)
				continue;
			for (uint32_t i = 0; i < w->nrecv; i++) {
				const struct fast_pmsg *m = &x->g->recvs[w->recv0 + i];
				struct fifo *f = &q[(size_t)m->peer * ng + r];
				struct msg mm = f->m[f->head++];
				if (mm.len != m->len)
					wrong = -2;
				else
					memcpy(where(x, &m->at, m->len, &oob), mm.data, m->len);
				free(mm.data);
			}
			for (uint32_t i = 0; i < w->npost; i++)
				do_copy(x, &x->g->copies[w->post0 + i], &oob);
			x->wave++;
			x->sent = false;
			progress = true;
		}
	}
	if (wrong == 0 && done < ng)
		wrong = -1;
	if (wrong == 0 && oob)
		wrong = -3;
	for (size_t i = 0; i < (size_t)ng * ng; i++) {
		for (size_t k = q[i].head; k < q[i].n; k++)
			free(q[i].m[k].data);
		free(q[i].m);
	}
	free(q);
	return wrong;
}

static void ranks_free(struct rankstate *rs, uint32_t ng)
{
	for (uint32_t r = 0; r < ng; r++) {
		free(rs[r].send);
		free(rs[r].recv);
		free(rs[r].stage);
		free(rs[r].sd);
		free(rs[r].rd);
	}
	free(rs);
}

/* Run every rank's program over D; returns the number of wrong bytes, or
 * a negative code of walk(). */
static long interpret(struct fast_prog **progs, const uint64_t *D, uint32_t ng)
{
	struct rankstate *rs = calloc(ng, sizeof *rs);
	long wrong;

	for (uint32_t r = 0; r < ng; r++) {
		uint64_t st = 0, rt = 0;
		rs[r].g = progs[r];
		rs[r].sd = calloc(ng, sizeof(uint64_t));
		rs[r].rd = calloc(ng, sizeof(uint64_t));
		for (uint32_t k = 0; k < ng; k++) {
			rs[r].sd[k] = st;
			rs[r].rd[k] = rt;
			st += D[(size_t)r * ng + k];
			rt += D[(size_t)k * ng + r];
		}
		rs[r].send = malloc(st + 1);
		rs[r].recv = malloc(rt + 1);
		memset(rs[r].recv, 0xff, rt + 1);
		for (uint32_t d = 0; d < ng; d++)
			for (uint64_t o = 0; o < D[(size_t)r * ng + d]; o++)
				rs[r].send[rs[r].sd[d] + o] = pattern(r, d, o);
	}
	wrong = walk(rs, ng);
	for (uint32_t r = 0; r < ng && wrong >= 0; r++)
		for (uint32_t s = 0; s < ng; s++)
			for (uint64_t o = 0; o < D[(size_t)s * ng + r]; o++)
				wrong += rs[r].recv[rs[r].rd[s] + o] != pattern(s, r, o);
	ranks_free(rs, ng);
	return wrong;
}

/* The same over token matrix m: buffers per group, the patterns of
 * prog.h, every receiving rank's groups compared with what it expects. */
static long interpret_tokens(struct fast_prog **progs, const struct fast_matrix *m, uint32_t ng)
{
	struct rankstate *rs = calloc(ng, sizeof *rs);
	long wrong;

	for (uint32_t r = 0; r < ng; r++) {
		uint64_t st = 0, rt = 0;
		rs[r].g = progs[r];
		rs[r].sd = calloc(m->ngroups + 1, sizeof(uint64_t));
		rs[r].rd = calloc(m->ngroups + 1, sizeof(uint64_t));
		for (uint32_t k = 0; k < m->ngroups; k++) {
			bool snd, rcv;
			fast_token_role(m, k, r, &snd, &rcv);
			rs[r].sd[k] = st;
			rs[r].rd[k] = rt;
			st += snd ? fast_group_bytes(m, k) : 0;
			rt += rcv ? fast_group_bytes(m, k) : 0;
		}
		rs[r].send = malloc(st + 1);
		rs[r].recv = malloc(rt + 1);
		memset(rs[r].recv, 0xff, rt + 1);
		for (uint32_t k = 0; k < m->ngroups; k++) {
			bool snd, rcv;
			int bit = fast_token_role(m, k, r, &snd, &rcv);
			for (uint64_t o = 0; snd && o < fast_group_bytes(m, k); o++)
				rs[r].send[rs[r].sd[k] + o] = fast_token_send_byte(m, k, bit, o);
		}
	}
	wrong = walk(rs, ng);
	for (uint32_t r = 0; r < ng && wrong >= 0; r++)
		for (uint32_t k = 0; k < m->ngroups; k++) {
			bool snd, rcv;
			fast_token_role(m, k, r, &snd, &rcv);
			for (uint64_t o = 0; rcv && o < fast_group_bytes(m, k); o++)
				wrong += rs[r].recv[rs[r].rd[k] + o] != fast_token_expect_byte(m, k, o);
		}
	ranks_free(rs, ng);
	return wrong;
}

/* Build every rank's program of plan p, over byte matrix D or (m not
 * NULL) token matrix m, and interpret.  Returns wrong bytes (< 0: see
 * walk; -10: a build failed with *code, the message in *err); *staging:
 * the largest arena. */
static long run_plan(const struct fast_plan *p, const uint64_t *D, const struct fast_matrix *m,
		     uint32_t passes, uint64_t *staging, int *code, struct fast_err *err)
{
	uint32_t ng = p->servers * p->gpus;
	struct fast_prog **progs = calloc(ng, sizeof *progs);
	struct fast_plan_view v;
	long wrong = -10;

	*staging = 0;
	*code = 0;
	if (fast_plan_view_open(&v, p, m, err) < 0) {
		*code = err->code;
		free(progs);
		return wrong;
	}
	for (uint32_t r = 0; r < ng; r++) {
		if ((m ? fast_prog_build_tokens(&v, m, r, passes, 1, &progs[r], err)
		       : fast_prog_build(&v, D, r, passes, 1, &progs[r], err)) < 0) {
			*code = err->code;
			goto out;
		}
		if (progs[r]->staging > *staging)
			*staging = progs[r]->staging;
	}
	wrong = m ? interpret_tokens(progs, m, ng) : interpret(progs, D, ng);
out:
	for (uint32_t r = 0; r < ng; r++)
		fast_prog_free(progs[r]);
	free(progs);
	fast_plan_view_close(&v);
	return wrong;
}

static long run_expanded(const struct fast_plan *ex, const uint64_t *D, uint32_t passes,
			 uint64_t *max_staging, int *code, struct fast_err *err)
{
	return run_plan(ex, D, NULL, passes, max_staging, code, err);
}

/* Compile, expand, build every rank's program, interpret (run_expanded). */
static long run_algo(const char *algo, const struct fast_topo *t, const uint64_t *D,
		     uint32_t passes, uint64_t *max_staging, int *code)
{
	struct fast_plan p, ex;
	struct fast_err err;
	long wrong = -10;

	*code = 0;
	struct fast_matrix mx = fast_matrix_of(D, fast_topo_ngpus(t));
	if (fast_compile(algo, t, &mx, NULL, &p, &err) < 0) {
		*code = err.code;
		return -10;
	}
	if (fast_plan_expand(&p, NULL, &ex, &err) < 0) {
		*code = err.code;
		fast_plan_free(&p);
		return -10;
	}
	wrong = run_expanded(&ex, D, passes, max_staging, code, &err);
	fast_plan_free(&ex);
	fast_plan_free(&p);
	return wrong;
}

static void topo(struct fast_topo *t, uint32_t n, uint32_t g)
{
	struct fast_err err;
	struct fast_limits lim;

	fast_limits_default(&lim);
	CU_ASSERT_FATAL(fast_topo_preset("h200", n, g, &lim, t, &err) == 0);
}

/* Kinds of matrices: random (some big pairs, so large fragments travel on
 * their own), zero rows and columns, a single hot receiver. */
static void matrix(uint64_t *D, uint32_t ng, int kind, uint64_t seed)
{
	struct fast_rng rng;

	fast_rng_seed(&rng, seed);
	for (uint32_t s = 0; s < ng; s++)
		for (uint32_t d = 0; d < ng; d++) {
			uint64_t v = fast_rng_below(&rng, 3000);
			if (kind == 0 && fast_rng_below(&rng, 4) == 0)
				v += 40000;
			if (kind == 1 && (s == 1 || d == 2 || d == ng - 1))
				v = 0;
			if (kind == 2)
				v = d == 3 ? 50000 + v : v % 200;
			D[(size_t)s * ng + d] = v;
		}
}

static void test_exec__every_algorithm_delivers_every_byte(void)
{
	const char *algos[] = { "fast", "fanout", "nccl", "pxn", "spreadout", "hier" };
	struct fast_topo t;
	uint64_t D[64], stg;
	int code;

	topo(&t, 2, 4);
	for (int kind = 0; kind < 3; kind++) {
		matrix(D, 8, kind, 11 + (uint64_t)kind);
		for (size_t a = 0; a < sizeof algos / sizeof *algos; a++) {
			long w = run_algo(algos[a], &t, D, 1, &stg, &code);
			if (w != 0)
				fprintf(stderr, "\n%s kind %d: %ld (code %d)\n", algos[a], kind, w, code);
			CU_ASSERT_EQUAL(w, 0);
		}
	}
}

static void test_exec__property_random_shapes_and_passes(void)
{
	const char *algos[] = { "fast", "pxn", "hier", "nccl" };
	uint64_t D[16 * 16], stg1, stg4;
	struct fast_rng rng;
	int code;

	fast_rng_seed(&rng, 2024);
	for (int iter = 0; iter < 6; iter++) {
		struct fast_topo t;
		uint32_t n = 2 + (uint32_t)fast_rng_below(&rng, 3), g = 1 + (uint32_t)fast_rng_below(&rng, 4);
		uint32_t ng = n * g;
		topo(&t, n, g);
		matrix(D, ng, (int)fast_rng_below(&rng, 3), fast_rng_next(&rng));
		for (size_t a = 0; a < sizeof algos / sizeof *algos; a++) {
			CU_ASSERT_EQUAL(run_algo(algos[a], &t, D, 1, &stg1, &code), 0);
			CU_ASSERT_EQUAL(run_algo(algos[a], &t, D, 4, &stg4, &code), 0);
			/* slicing every message in 4 passes never needs more staging */
			CU_ASSERT(stg4 <= stg1);
		}
	}
}

static void test_exec__passes_shrink_staging(void)
{
	struct fast_topo t;
	uint64_t D[64], s1, s8;
	int code;

	topo(&t, 2, 4);
	matrix(D, 8, 0, 5);
	CU_ASSERT_EQUAL(run_algo("fast", &t, D, 1, &s1, &code), 0);
	CU_ASSERT_EQUAL(run_algo("fast", &t, D, 8, &s8, &code), 0);
	CU_ASSERT(s1 > 0);
	CU_ASSERT(s8 * 3 < s1);
}

/* A plan whose forwarding hop no longer waits for the hop that brings the
 * bytes: the builder must refuse it (a rank would send what it lacks). */
static void test_exec__refuses_sending_bytes_not_held(void)
{
	struct fast_topo t;
	struct fast_plan p, ex;
	struct fast_prog *g = NULL;
	struct fast_plan_view v;
	struct fast_err err;
	uint64_t D[64];
	bool refused = false;

	topo(&t, 2, 4);
	matrix(D, 8, 0, 9);
	struct fast_matrix mx = fast_matrix_of(D, fast_topo_ngpus(&t));
	CU_ASSERT_FATAL(fast_compile("pxn", &t, &mx, NULL, &p, &err) == 0);
	CU_ASSERT_FATAL(fast_plan_expand(&p, NULL, &ex, &err) == 0);
	for (size_t s = 0; s < ex.nsteps; s++)
		ex.steps[s].ndeps = 0; /* every step in the first wave */
	CU_ASSERT_FATAL(fast_plan_view_open(&v, &ex, NULL, &err) == 0);
	for (uint32_t r = 0; r < 8 && !refused; r++) {
		int rc = fast_prog_build(&v, D, r, 1, 1, &g, &err);
		if (rc == FAST_ECHECK) {
			refused = true;
			CU_ASSERT(strstr(err.msg, "does not hold") != NULL);
		} else {
			fast_prog_free(g);
		}
	}
	CU_ASSERT(refused);
	fast_plan_view_close(&v);
	fast_plan_free(&ex);
	fast_plan_free(&p);
}

/* A plan for another matrix is refused before anything runs. */
static void test_exec__refuses_plan_for_other_matrix(void)
{
	struct fast_topo t;
	struct fast_plan p, ex;
	struct fast_prog *g = NULL;
	struct fast_plan_view v;
	struct fast_err err;
	uint64_t D[64], E[64];

	topo(&t, 2, 4);
	matrix(D, 8, 0, 1);
	memcpy(E, D, sizeof E);
	E[1 * 8 + 6] /= 2; /* message 1->6 shorter than the plan says */
	struct fast_matrix mx = fast_matrix_of(D, fast_topo_ngpus(&t));
	CU_ASSERT_FATAL(fast_compile("fanout", &t, &mx, NULL, &p, &err) == 0);
	CU_ASSERT_FATAL(fast_plan_expand(&p, NULL, &ex, &err) == 0);
	CU_ASSERT_FATAL(fast_plan_view_open(&v, &ex, NULL, &err) == 0);
	CU_ASSERT_EQUAL(fast_prog_build(&v, E, 1, 1, 1, &g, &err), FAST_EINPUT);
	CU_ASSERT(strstr(err.msg, "does not match the traffic") != NULL);
	fast_plan_view_close(&v);
	fast_plan_free(&ex);
	fast_plan_free(&p);
}

/* A relay forwards piece P twice (a spare copy to GPU 3, then to its
 * destination), then relays piece Q: P's block must live through the second
 * forward (freeing it after the first made the builder refuse the plan)
 * and no longer: Q reuses its space, so the relay's arena is one block. */
static void test_exec__staging_lives_until_last_forward(void)
{
	struct fast_topo t;
	struct fast_plan p;
	struct fast_err err;
	struct fast_prog *g = NULL;
	struct fast_plan_view v;
	uint64_t D[16] = { 0 }, stg;
	int code = 0;
	/* from, to, offset of the 1000 bytes of message 0->2 */
	const uint32_t hops[5][3] = { { 0, 1, 0 }, { 1, 3, 0 }, { 1, 2, 0 }, { 0, 1, 1000 }, { 1, 2, 1000 } };

	topo(&t, 1, 4);
	D[0 * 4 + 2] = 2000;
	fast_plan_init(&p, 1, 4, "test");
	for (uint32_t s = 0; s < 5; s++) {
		CU_ASSERT_FATAL(fast_plan_add_step(&p, FAST_STEP_EXPLICIT, FAST_TIER_UP, &err) == (int)s);
		if (s > 0)
			CU_ASSERT_FATAL(fast_plan_add_dep(&p, s, s - 1, false, &err) == 0);
		CU_ASSERT_FATAL(fast_plan_add_xfer(&p, hops[s][0], hops[s][1], &err) == 0);
		CU_ASSERT_FATAL(fast_plan_add_piece(&p, 0, 2, hops[s][2], 1000, &err) == 0);
	}
	CU_ASSERT_FATAL(unit_check(&p, &t, D, &err) == 0);
	CU_ASSERT_EQUAL(run_expanded(&p, D, 1, &stg, &code, &err), 0);
	CU_ASSERT_FATAL(fast_plan_view_open(&v, &p, NULL, &err) == 0);
	CU_ASSERT_FATAL(fast_prog_build(&v, D, 1, 1, 1, &g, &err) == 0);
	fast_plan_view_close(&v);
	CU_ASSERT_EQUAL(g->staging, 1024); /* 1000 bytes, 64-byte aligned: one block */
	fast_prog_free(g);
	fast_plan_free(&p);
}

/* fast check and the executor accept the same plans: checker-accepted
 * mutants (duplicate forwards, spare copies, reordered steps; see
 * tests/mpi/mutate.h) build on every rank and deliver every byte, in one
 * pass and in three. */
static void test_exec__replays_checker_accepted_mutants(void)
{
	const char *algos[] = { "fast", "pxn", "hier", "nccl", "fanout", "spreadout" };
	const uint32_t shapes[][2] = { { 2, 2 }, { 2, 3 }, { 3, 2 }, { 2, 4 } };
	uint64_t D[64], stg;
	uint32_t accepted = 0, with_dups = 0, tried = 0;
	struct fast_rng rng;

	fast_rng_seed(&rng, 4242);
	for (uint32_t i = 0; i < 240; i++) {
		struct fast_topo t;
		struct fast_plan mp;
		struct fast_err err;
		uint32_t n = shapes[i % 4][0], g = shapes[i % 4][1], dups = 0;
		int code = 0, rc;
		topo(&t, n, g);
		matrix(D, n * g, (int)fast_rng_below(&rng, 3), fast_rng_next(&rng));
		rc = mut_one(algos[(i / 4) % 6], &t, D, &rng, &mp, &dups, &err);
		CU_ASSERT(rc >= 0);
		tried++;
		if (rc != 1)
			continue;
		accepted++;
		with_dups += dups > 0;
		for (uint32_t passes = 1; passes <= 3; passes += 2) {
			struct fast_plan ex;
			long w;
			CU_ASSERT_FATAL(fast_plan_expand(&mp, NULL, &ex, &err) == 0);
			w = run_expanded(&ex, D, passes, &stg, &code, &err);
			if (w != 0)
				fprintf(stderr, "\nmutant %u (%s, %ux%u, %u passes): %ld: %s\n", i, mp.algo, n, g,
					passes, w, w == -10 ? err.msg : "");
			CU_ASSERT_EQUAL(w, 0);
			fast_plan_free(&ex);
		}
		fast_plan_free(&mp);
	}
	/* the mutations are not vacuous: most survive the checker, many of
	 * them forward bytes twice */
	CU_ASSERT(accepted * 2 >= tried);
	CU_ASSERT(with_dups * 5 >= accepted);
}

/* --- token plans ------------------------------------------------------------ */

/* A token matrix of kind k from groups {src, ndst, dsts[4], tokens},
 * given in ascending src (so that their indices are the order given). */
struct tgroup {
	uint32_t src, ndst, dsts[4];
	uint64_t tokens;
};
static void tok_matrix(struct fast_matrix *m, enum fast_traffic_kind k, uint32_t ng,
		       uint64_t token_bytes, const struct tgroup *gs, size_t n)
{
	struct fast_groups b;
	struct fast_err err;

	memset(m, 0, sizeof *m);
	m->bytes = calloc((size_t)ng * ng, sizeof *m->bytes);
	fast_groups_init(&b, ng, 1000);
	for (size_t i = 0; i < n; i++)
		CU_ASSERT_FATAL(fast_groups_add(&b, gs[i].src, gs[i].dsts, gs[i].ndst, gs[i].tokens, &err) == 0);
	CU_ASSERT_FATAL(fast_groups_finish(&b, k, token_bytes, m, &err) == 0);
	fast_groups_free(&b);
	CU_ASSERT_FATAL(m->ngroups == n);
}

static void tok_matrix_free(struct fast_matrix *m)
{
	free(m->bytes);
	free(m->groups);
	free(m->dsts);
}

static long run_tokens(const struct fast_plan *p, const struct fast_matrix *m, uint32_t passes,
		       uint64_t *staging, int *code, struct fast_err *err)
{
	return run_plan(p, NULL, m, passes, staging, code, err);
}

/* A step of a hand-made token plan: kind, tier, deps (-1 ends), chunks,
 * pipelined deps, transfers {from, to, group, mask (combine), off, len},
 * consecutive rows with the same from/to and xfer 0 in one transfer. */
struct tpiece {
	uint32_t from, to, g;
	uint64_t mask, off, len;
	int join; /* 1: another piece of the transfer before it */
};
static void tok_step(struct fast_plan *p, enum fast_step_kind kind, enum fast_tier_id tier,
		     const int *deps, uint32_t chunks, bool pipelined, const struct tpiece *pc, size_t n)
{
	struct fast_err err;
	int id = fast_plan_add_step(p, FAST_STEP_EXPLICIT, tier, &err);

	CU_ASSERT_FATAL(id >= 0);
	for (; *deps >= 0; deps++)
		CU_ASSERT_FATAL(fast_plan_add_dep(p, (uint32_t)id, (uint32_t)*deps, pipelined, &err) == 0);
	CU_ASSERT_FATAL(fast_plan_set_chunks(p, chunks, &err) == 0);
	for (size_t i = 0; i < n; i++) {
		int k = p->kind == FAST_TRAFFIC_COMBINE ? fast_plan_add_mask(p, pc[i].mask, &err) : 0;
		CU_ASSERT_FATAL(k >= 0);
		if (!pc[i].join)
			CU_ASSERT_FATAL(fast_plan_add_xfer(p, pc[i].from, pc[i].to, &err) == 0);
		CU_ASSERT_FATAL(fast_plan_add_piece(p, pc[i].g, (uint32_t)k, pc[i].off, pc[i].len, &err) == 0);
	}
	p->steps[id].kind = kind; /* a REDUCE step's transfers are built as EXPLICIT ones */
}

/* 3 servers x 2 GPUs; dispatch groups g0 = GPU 0 -> {2, 3, 5} (3 tokens),
 * g1 = 1 -> {0, 1, 4} (its src a destination), g2 = 3 -> {1}; 40-byte
 * tokens.  g0 crosses once to server 1 (GPU 2), is replicated there from
 * GPU 2's receive buffer to 3, relayed through GPU 4 (no destination of
 * g0) to 5 in pipelined chunks, and sent again by the relay (its staging
 * block lives until that last read) and by GPU 3 across; g1 replicated by
 * its src.  `drop` leaves out the relay's hops: GPU 5 gets only GPU 3's 40 bytes of g0. */
static void dispatch_case(struct fast_plan *p, struct fast_matrix *m, bool drop)
{
	const struct tgroup gs[] = { { 0, 3, { 2, 3, 5 }, 3 }, { 1, 3, { 0, 1, 4 }, 2 }, { 3, 1, { 1 }, 1 } };
	const int none[] = { -1 }, d0[] = { 0, -1 }, d1[] = { 1, -1 }, d2[] = { 2, -1 }, d3[] = { 3, -1 };
	const struct tpiece s0[] = { { 0, 2, 0, 0, 0, 120, 0 }, { 1, 4, 1, 0, 0, 80, 0 }, { 3, 1, 2, 0, 0, 40, 0 } };
	const struct tpiece s1[] = { { 2, 3, 0, 0, 0, 120, 0 }, { 1, 0, 1, 0, 0, 80, 0 } };
	const struct tpiece s2[] = { { 2, 4, 0, 0, 0, 120, 0 } };
	const struct tpiece s3[] = { { 4, 5, 0, 0, 0, 120, 0 } };
	const struct tpiece s4[] = { { 4, 5, 0, 0, 60, 60, 0 } };
	const struct tpiece s5[] = { { 3, 5, 0, 0, 0, 40, 0 } };

	tok_matrix(m, FAST_TRAFFIC_DISPATCH, 6, 40, gs, 3);
	fast_plan_init(p, 3, 2, "test");
	p->kind = FAST_TRAFFIC_DISPATCH;
	tok_step(p, FAST_STEP_EXPLICIT, FAST_TIER_OUT, none, 1, false, s0, 3);
	tok_step(p, FAST_STEP_EXPLICIT, FAST_TIER_UP, d0, 1, false, s1, 2);
	tok_step(p, FAST_STEP_EXPLICIT, FAST_TIER_OUT, d0, 2, false, s2, 1);
	if (!drop) {
		tok_step(p, FAST_STEP_EXPLICIT, FAST_TIER_UP, d2, 2, true, s3, 1);
		tok_step(p, FAST_STEP_EXPLICIT, FAST_TIER_UP, d3, 1, false, s4, 1);
	}
	tok_step(p, FAST_STEP_EXPLICIT, FAST_TIER_OUT, d1, 1, false, s5, 1);
}

static void test_exec__token_dispatch_relay_and_replication(void)
{
	struct fast_topo t;
	struct fast_plan p;
	struct fast_matrix m;
	struct fast_err err;
	uint64_t stg;
	int code;

	topo(&t, 3, 2);
	dispatch_case(&p, &m, false);
	/* the plan the executor runs is one the checker proves */
	CU_ASSERT_EQUAL(unit_check_matrix(&p, &t, &m, &err), 0);
	for (uint32_t passes = 1; passes <= 3; passes++) {
		long w = run_tokens(&p, &m, passes, &stg, &code, &err);
		if (w != 0)
			fprintf(stderr, "\ndispatch, %u passes: %ld: %s\n", passes, w, w == -10 ? err.msg : "");
		CU_ASSERT_EQUAL(w, 0);
		CU_ASSERT(stg > 0); /* the relay stages g0 */
	}
	fast_plan_free(&p);
	tok_matrix_free(&m);
	/* without the relay's hops GPU 5 lacks g0: refused before anything runs */
	dispatch_case(&p, &m, true);
	CU_ASSERT_EQUAL(unit_check_matrix(&p, &t, &m, &err), FAST_ECHECK);
	CU_ASSERT_EQUAL(run_tokens(&p, &m, 1, &stg, &code, &err), -10);
	CU_ASSERT_EQUAL(code, FAST_ECHECK);
	CU_ASSERT(strstr(err.msg, "GPU 5 never receives bytes [40, 120) of group 0") != NULL);
	fast_plan_free(&p);
	tok_matrix_free(&m);
}

/* 2 servers x 2 GPUs; combine groups g0 = GPU 0 <- {1, 2, 3} (2 tokens of
 * 24 bytes), g1 = 3 <- {0, 1, 3} (its src contributes).  GPU 2 reduces
 * its and GPU 3's contributions to g0 over the first half only (a partial
 * reduce) and sends the sum across; the second halves cross
 * unsummed; GPU 0 reduces its and GPU 1's contributions to g1 and sends
 * the sum to g1's src in two ranges.  `twice`: GPU 1 sends its
 * contribution to g0 a second time, which the sum must not count. */
static void combine_case(struct fast_plan *p, struct fast_matrix *m, bool twice)
{
	const struct tgroup gs[] = { { 0, 3, { 1, 2, 3 }, 2 }, { 3, 3, { 0, 1, 3 }, 1 } };
	const int none[] = { -1 }, d0[] = { 0, -1 }, d1[] = { 1, -1 };
	const struct tpiece s0[] = { { 3, 2, 0, 4, 0, 24, 0 }, { 1, 0, 1, 2, 0, 24, 0 } };
	const struct tpiece s1[] = { { 2, 2, 0, 2, 0, 24, 0 }, { 2, 2, 0, 4, 0, 24, 1 },
				     { 0, 0, 1, 1, 0, 24, 0 }, { 0, 0, 1, 2, 0, 24, 1 } };
	const struct tpiece s2[] = { { 2, 0, 0, 6, 0, 24, 0 }, { 2, 0, 0, 2, 24, 24, 0 },
				     { 3, 0, 0, 4, 24, 24, 0 }, { 0, 3, 1, 3, 0, 12, 0 },
				     { 0, 3, 1, 3, 12, 12, 0 } };
	const struct tpiece s3[] = { { 1, 0, 0, 1, 0, 48, 0 } };

	tok_matrix(m, FAST_TRAFFIC_COMBINE, 4, 24, gs, 2);
	fast_plan_init(p, 2, 2, "test");
	p->kind = FAST_TRAFFIC_COMBINE;
	tok_step(p, FAST_STEP_EXPLICIT, FAST_TIER_UP, none, 1, false, s0, 2);
	tok_step(p, FAST_STEP_REDUCE, FAST_TIER_UP, d0, 1, false, s1, 4);
	tok_step(p, FAST_STEP_EXPLICIT, FAST_TIER_OUT, d1, 1, false, s2, 5);
	tok_step(p, FAST_STEP_EXPLICIT, FAST_TIER_UP, none, 1, false, s3, 1);
	if (twice)
		tok_step(p, FAST_STEP_EXPLICIT, FAST_TIER_UP, none, 1, false, s3, 1);
}

static void test_exec__token_combine_partial_reduce(void)
{
	struct fast_topo t;
	struct fast_plan p;
	struct fast_matrix m;
	struct fast_err err;
	struct fast_plan_view v;
	struct fast_prog *g = NULL;
	uint64_t stg;
	int code;

	topo(&t, 2, 2);
	combine_case(&p, &m, false);
	CU_ASSERT_EQUAL(unit_check_matrix(&p, &t, &m, &err), 0);
	for (uint32_t passes = 1; passes <= 3; passes++) {
		long w = run_tokens(&p, &m, passes, &stg, &code, &err);
		if (w != 0)
			fprintf(stderr, "\ncombine, %u passes: %ld: %s\n", passes, w, w == -10 ? err.msg : "");
		CU_ASSERT_EQUAL(w, 0);
	}
	/* GPU 2 sums (copy then add into a block), GPU 0 starts g0's result at
	 * zero and adds what arrives */
	CU_ASSERT_FATAL(fast_plan_view_open(&v, &p, &m, &err) == 0);
	CU_ASSERT_FATAL(fast_prog_build_tokens(&v, &m, 2, 1, 1, &g, &err) == 0);
	CU_ASSERT(g->sums > 0);
	fast_prog_free(g);
	CU_ASSERT_FATAL(fast_prog_build_tokens(&v, &m, 0, 1, 1, &g, &err) == 0);
	CU_ASSERT(g->sums > 0 && g->copies[0].op == FAST_POP_ZERO);
	fast_prog_free(g);
	fast_plan_view_close(&v);
	fast_plan_free(&p);
	tok_matrix_free(&m);
	/* a contribution counted twice is refused */
	combine_case(&p, &m, true);
	CU_ASSERT_EQUAL(unit_check_matrix(&p, &t, &m, &err), FAST_ECHECK);
	CU_ASSERT_EQUAL(run_tokens(&p, &m, 1, &stg, &code, &err), -10);
	CU_ASSERT_EQUAL(code, FAST_ECHECK);
	CU_ASSERT(strstr(err.msg, "GPU 0 sums 192 bytes x contributions of group 0, which needs 144") != NULL);
	fast_plan_free(&p);
	tok_matrix_free(&m);
}

/* Random token traffic on ng GPUs: each GPU a few groups of 1..5 tokens
 * to 1..6 distinct GPUs (itself allowed), token_bytes odd-sized so that
 * plans cut values inside words. */
static void random_tokens(struct fast_matrix *m, enum fast_traffic_kind k, uint32_t ng,
			  struct fast_rng *rng)
{
	struct fast_groups b;
	struct fast_err err;

	memset(m, 0, sizeof *m);
	m->bytes = calloc((size_t)ng * ng, sizeof *m->bytes);
	fast_groups_init(&b, ng, 1u << 20);
	for (uint32_t src = 0; src < ng; src++) {
		uint32_t n = 1 + (uint32_t)fast_rng_below(rng, 4);
		for (uint32_t i = 0; i < n; i++) {
			uint32_t d[64], nd = 0, want = 1 + (uint32_t)fast_rng_below(rng, ng < 6 ? ng : 6);
			uint64_t set = 0;
			while ((uint32_t)__builtin_popcountll(set) < want)
				set |= UINT64_C(1) << fast_rng_below(rng, ng);
			for (uint32_t g = 0; g < ng; g++)
				if (set >> g & 1)
					d[nd++] = g;
			CU_ASSERT_FATAL(fast_groups_add(&b, src, d, nd, 1 + fast_rng_below(rng, 5), &err) == 0);
		}
	}
	CU_ASSERT_FATAL(fast_groups_finish(&b, k, 1 + 2 * fast_rng_below(rng, 150), m, &err) == 0);
	fast_groups_free(&b);
}

/* The executor runs the token plans the schedules compile (fast, hier
 * with per-server dedup; hier also with small pipelined chunks), which
 * the checker proves, for dispatch and combine on random token traffic:
 * every destination gets its rows, every src the exact sum, in one pass
 * and in three. */
static void test_exec__token_schedules_property(void)
{
	const uint32_t shapes[][2] = { { 2, 2 }, { 2, 4 }, { 3, 2 }, { 4, 2 } };
	struct fast_rng rng;
	uint32_t runs = 0;

	fast_rng_seed(&rng, 1515);
	for (uint32_t i = 0; i < 16; i++) {
		uint32_t n = shapes[i % 4][0], g = shapes[i % 4][1], ng = n * g;
		enum fast_traffic_kind k = i % 2 ? FAST_TRAFFIC_COMBINE : FAST_TRAFFIC_DISPATCH;
		struct fast_topo t;
		struct fast_matrix m;

		topo(&t, n, g);
		random_tokens(&m, k, ng, &rng);
		for (int a = 0; a < 3; a++) {
			struct fast_algo_opts o;
			struct fast_plan p;
			struct fast_err err;
			fast_algo_opts_default(&o);
			if (a == 2)
				o.chunk_bytes = 64;
			CU_ASSERT_FATAL(fast_compile(a ? "hier" : "fast", &t, &m, &o, &p, &err) == 0);
			CU_ASSERT_EQUAL(p.kind, k);
			CU_ASSERT_EQUAL(unit_check_matrix(&p, &t, &m, &err), 0);
			for (uint32_t passes = 1; passes <= 3; passes += 2) {
				uint64_t stg;
				int code;
				long w = run_tokens(&p, &m, passes, &stg, &code, &err);
				if (w != 0)
					fprintf(stderr, "\n%s %s %ux%u, %u passes: %ld: %s\n", p.algo,
						fast_traffic_kind_name(k), n, g, passes, w, w == -10 ? err.msg : "");
				CU_ASSERT_EQUAL(w, 0);
				runs += w == 0;
			}
			fast_plan_free(&p);
		}
		tok_matrix_free(&m);
	}
	CU_ASSERT_EQUAL(runs, 16 * 3 * 2);
}

/* Token mutants: a compiled plan's explicit form plus a step that sends
 * one of its transfers again (depending on the original step, so the
 * sender still holds what it sent: a repeated forward, a spare copy,
 * replication to a GPU that has it already).  Every mutant the checker
 * accepts must run with 0 wrong bytes; the ones it refuses (a combine
 * contribution sent twice to its src) must not run either. */
static void test_exec__token_mutants_checker_accepted(void)
{
	struct fast_rng rng;
	uint32_t accepted = 0, refused = 0;

	fast_rng_seed(&rng, 2727);
	for (uint32_t i = 0; i < 40; i++) {
		uint32_t n = 2 + i % 2, g = 2, ng = n * g;
		enum fast_traffic_kind k = i % 4 < 2 ? FAST_TRAFFIC_DISPATCH : FAST_TRAFFIC_COMBINE;
		struct fast_topo t;
		struct fast_matrix m;
		struct fast_plan p, ex;
		struct fast_err err;
		const struct fast_xfer *x = NULL;
		uint32_t step = 0, tries = 0;
		long w;
		int code, id;

		topo(&t, n, g);
		random_tokens(&m, k, ng, &rng);
		CU_ASSERT_FATAL(fast_compile(i % 2 ? "hier" : "fast", &t, &m, NULL, &p, &err) == 0);
		CU_ASSERT_FATAL(fast_plan_expand(&p, &m, &ex, &err) == 0);
		while (!x && tries++ < 100) {
			const struct fast_step *st = &ex.steps[fast_rng_below(&rng, ex.nsteps)];
			if (st->kind == FAST_STEP_EXPLICIT && st->nxfers) {
				x = &ex.xfers[st->xfer0 + fast_rng_below(&rng, st->nxfers)];
				step = (uint32_t)(st - ex.steps);
				if (x->from == x->to)
					x = NULL;
			}
		}
		if (x) {
			struct fast_xfer dup = *x;
			id = fast_plan_add_step(&ex, FAST_STEP_EXPLICIT, ex.steps[step].tier, &err);
			CU_ASSERT_FATAL(id >= 0);
			CU_ASSERT_FATAL(fast_plan_add_dep(&ex, (uint32_t)id, step, false, &err) == 0);
			CU_ASSERT_FATAL(fast_plan_add_xfer(&ex, dup.from, dup.to, &err) == 0);
			for (uint32_t j = 0; j < dup.npieces; j++) {
				struct fast_piece pc = ex.pieces[dup.piece0 + j];
				CU_ASSERT_FATAL(fast_plan_add_piece(&ex, pc.src, pc.dst, pc.off, pc.len, &err) == 0);
			}
			if (unit_check_matrix(&ex, &t, &m, &err) == 0) {
				uint64_t stg;
				accepted++;
				for (uint32_t passes = 1; passes <= 2; passes++) {
					w = run_tokens(&ex, &m, passes, &stg, &code, &err);
					if (w != 0)
						fprintf(stderr, "\nmutant %u (%s %s): %ld: %s\n", i, p.algo,
							fast_traffic_kind_name(k), w, w == -10 ? err.msg : "");
					CU_ASSERT_EQUAL(w, 0);
				}
			} else {
				uint64_t stg;
				refused++;
				CU_ASSERT_EQUAL(run_tokens(&ex, &m, 1, &stg, &code, &err), -10);
			}
		}
		fast_plan_free(&ex);
		fast_plan_free(&p);
		tok_matrix_free(&m);
	}
	/* not vacuous: about half are accepted (22 of 40 with this seed), the
	 * others mostly combine contributions sent to their src twice */
	CU_ASSERT(accepted >= 15);
	CU_ASSERT(refused >= 1);
}

/* The byte-wise sum wraps each byte on its own, eight at a time or one. */
static void test_exec__add_bytes_wraps_per_byte(void)
{
	uint8_t a[19], b[19], want[19];

	for (int i = 0; i < 19; i++) {
		a[i] = (uint8_t)(200 + i * 7);
		b[i] = (uint8_t)(100 + i * 13);
		want[i] = (uint8_t)(a[i] + b[i]);
	}
	fast_prog_add_bytes(a, b, 19);
	CU_ASSERT(memcmp(a, want, 19) == 0);
}

static void test_exec__cache_counts_and_evicts_lru(void)
{
	struct fast_cache c;
	struct fast_err err;

	CU_ASSERT_FATAL(fast_cache_init(&c, 2, &err) == 0);
	CU_ASSERT_PTR_NULL(fast_cache_get(&c, 1));
	fast_cache_put(&c, 1, calloc(1, sizeof(struct fast_prog)));
	fast_cache_put(&c, 2, calloc(1, sizeof(struct fast_prog)));
	CU_ASSERT_PTR_NOT_NULL(fast_cache_get(&c, 1)); /* 2 is now the oldest */
	fast_cache_put(&c, 3, calloc(1, sizeof(struct fast_prog)));
	CU_ASSERT_PTR_NULL(fast_cache_get(&c, 2));
	CU_ASSERT_PTR_NOT_NULL(fast_cache_get(&c, 1));
	CU_ASSERT_PTR_NOT_NULL(fast_cache_get(&c, 3));
	CU_ASSERT_EQUAL(c.hits, 3);
	CU_ASSERT_EQUAL(c.misses, 2);
	fast_cache_free(&c);
}

UNIT_MAIN("exec",
	  UNIT_TEST(test_exec__every_algorithm_delivers_every_byte),
	  UNIT_TEST(test_exec__property_random_shapes_and_passes),
	  UNIT_TEST(test_exec__passes_shrink_staging),
	  UNIT_TEST(test_exec__refuses_sending_bytes_not_held),
	  UNIT_TEST(test_exec__refuses_plan_for_other_matrix),
	  UNIT_TEST(test_exec__staging_lives_until_last_forward),
	  UNIT_TEST(test_exec__replays_checker_accepted_mutants),
	  UNIT_TEST(test_exec__token_dispatch_relay_and_replication),
	  UNIT_TEST(test_exec__token_combine_partial_reduce),
	  UNIT_TEST(test_exec__token_schedules_property),
	  UNIT_TEST(test_exec__token_mutants_checker_accepted),
	  UNIT_TEST(test_exec__add_bytes_wraps_per_byte),
	  UNIT_TEST(test_exec__cache_counts_and_evicts_lru))
