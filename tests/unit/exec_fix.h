/*
 * exec_fix.h - the interpreter the executor's suites (test_exec*.c) run
 * programs with, without MPI: every rank's program (exec/prog.c) is built
 * and all of them are run together (messages are FIFOs per ordered pair,
 * a rank blocks on a receive until the message is there), on real buffers
 * filled with a byte pattern; what comes back is the count of bytes that
 * did not land where MPI_Alltoallv would put them (negative: a deadlock,
 * staging outside the arena, a failed build).  Also the preset topology
 * and the kinds of matrices the suites run on.
 *
 * A suite includes exec/prog.c, exec/prog_wave.c and exec/prog_flight.c before this header:
 * the programs are built by the sources themselves, not libfast.a.
 */
#ifndef FAST_TEST_EXEC_FIX_H
#define FAST_TEST_EXEC_FIX_H

#include <stdlib.h>
#include <string.h>

#include "fast/algo.h"
#include "fast/prog.h"
#include "fast/topo.h"
#include "unit.h"

static inline uint8_t pattern(uint32_t s, uint32_t d, uint64_t o)
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

/* A rank's program and buffers: the send and receive buffers with each
 * message's offset in them (sd, rd) and its staging area. */
struct rankbuf {
	struct fast_prog *g;
	uint8_t *send, *recv, *stage;
	uint64_t *sd, *rd;
};

struct rankstate {
	struct rankbuf b;
	size_t wave;
	bool sent; /* this wave's pre-copies and sends are done */
};

static inline uint8_t *where(struct rankbuf *b, const struct fast_loc *l, uint64_t len, bool *oob)
{
	switch (l->kind) {
	case LOC_SEND:
		return b->send + b->sd[l->msg] + l->off;
	case LOC_RECV:
		return b->recv + b->rd[l->msg] + l->off;
	default:
		if (l->off + len > b->g->staging)
			*oob = true;
		return b->stage + l->off;
	}
}

static inline void do_copy(struct rankbuf *b, const struct fast_pcopy *c, bool *oob)
{
	uint8_t *dst = where(b, &c->dst, c->len, oob);

	if (c->op == FAST_POP_ZERO)
		memset(dst, 0, c->len);
	else if (c->op == FAST_POP_ADD)
		fast_prog_add_bytes(dst, where(b, &c->src, c->len, oob), c->len);
	else
		memmove(dst, where(b, &c->src, c->len, oob), c->len);
}

static inline void rankbuf_free(struct rankbuf *b)
{
	free(b->send);
	free(b->recv);
	free(b->stage);
	free(b->sd);
	free(b->rd);
}

/* Run every rank's program (buffers set up by the caller): 0, or -1 on a
 * deadlock, -2 on a length mismatch, -3 on staging overrun. */
static inline long walk(struct rankstate *rs, uint32_t ng)
{
	struct fifo *q = calloc((size_t)ng * ng, sizeof *q);
	long wrong = 0;
	bool oob = false, progress = true;
	uint32_t done = 0;

	for (uint32_t r = 0; r < ng; r++)
		rs[r].b.stage = malloc(rs[r].b.g->staging + 1);
	while (done < ng && progress) {
		progress = false;
		done = 0;
		for (uint32_t r = 0; r < ng; r++) {
			struct rankstate *x = &rs[r];
			const struct fast_pwave *w;
			bool ready = true;
			if (x->wave >= x->b.g->nwaves) {
				done++;
				continue;
			}
			w = &x->b.g->waves[x->wave];
			if (!x->sent) {
				for (uint32_t i = 0; i < w->npre; i++)
					do_copy(&x->b, &x->b.g->copies[w->pre0 + i], &oob);
				for (uint32_t i = 0; i < w->nsend; i++) {
					const struct fast_pmsg *m = &x->b.g->sends[w->send0 + i];
					struct fifo *f = &q[(size_t)r * ng + m->peer];
					struct msg mm = { malloc(m->len), m->len };
					memcpy(mm.data, where(&x->b, &m->at, m->len, &oob), m->len);
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
					need[x->b.g->recvs[w->recv0 + i].peer]++;
				for (uint32_t p = 0; p < ng; p++)
					if (q[(size_t)p * ng + r].n - q[(size_t)p * ng + r].head < need[p])
						ready = false;
				free(need);
			}
			if (!ready)
				continue;
			for (uint32_t i = 0; i < w->nrecv; i++) {
				const struct fast_pmsg *m = &x->b.g->recvs[w->recv0 + i];
				struct fifo *f = &q[(size_t)m->peer * ng + r];
				struct msg mm = f->m[f->head++];
				if (mm.len != m->len)
					wrong = -2;
				else
					memcpy(where(&x->b, &m->at, m->len, &oob), mm.data, m->len);
				free(mm.data);
			}
			for (uint32_t i = 0; i < w->npost; i++)
				do_copy(&x->b, &x->b.g->copies[w->post0 + i], &oob);
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

static inline void ranks_free(struct rankstate *rs, uint32_t ng)
{
	for (uint32_t r = 0; r < ng; r++) {
		rankbuf_free(&rs[r].b);
	}
	free(rs);
}

/* Run every rank's program over D; returns the number of wrong bytes, or
 * a negative code of walk(). */
static inline long interpret(struct fast_prog **progs, const uint64_t *D, uint32_t ng)
{
	struct rankstate *rs = calloc(ng, sizeof *rs);
	long wrong;

	for (uint32_t r = 0; r < ng; r++) {
		uint64_t st = 0, rt = 0;
		rs[r].b.g = progs[r];
		rs[r].b.sd = calloc(ng, sizeof(uint64_t));
		rs[r].b.rd = calloc(ng, sizeof(uint64_t));
		for (uint32_t k = 0; k < ng; k++) {
			rs[r].b.sd[k] = st;
			rs[r].b.rd[k] = rt;
			st += D[(size_t)r * ng + k];
			rt += D[(size_t)k * ng + r];
		}
		rs[r].b.send = malloc(st + 1);
		rs[r].b.recv = malloc(rt + 1);
		memset(rs[r].b.recv, 0xff, rt + 1);
		for (uint32_t d = 0; d < ng; d++)
			for (uint64_t o = 0; o < D[(size_t)r * ng + d]; o++)
				rs[r].b.send[rs[r].b.sd[d] + o] = pattern(r, d, o);
	}
	wrong = walk(rs, ng);
	for (uint32_t r = 0; r < ng && wrong >= 0; r++)
		for (uint32_t s = 0; s < ng; s++)
			for (uint64_t o = 0; o < D[(size_t)s * ng + r]; o++)
				wrong += rs[r].b.recv[rs[r].b.rd[s] + o] != pattern(s, r, o);
	ranks_free(rs, ng);
	return wrong;
}

/* The same over token matrix m: buffers per group, the patterns of
 * prog.h, every receiving rank's groups compared with what it expects. */
static inline long interpret_tokens(struct fast_prog **progs, const struct fast_matrix *m,
				    uint32_t ng)
{
	struct rankstate *rs = calloc(ng, sizeof *rs);
	long wrong;

	for (uint32_t r = 0; r < ng; r++) {
		uint64_t st = 0, rt = 0;
		rs[r].b.g = progs[r];
		rs[r].b.sd = calloc(m->ngroups + 1, sizeof(uint64_t));
		rs[r].b.rd = calloc(m->ngroups + 1, sizeof(uint64_t));
		for (uint32_t k = 0; k < m->ngroups; k++) {
			bool snd, rcv;
			fast_token_role(m, k, r, &snd, &rcv);
			rs[r].b.sd[k] = st;
			rs[r].b.rd[k] = rt;
			st += snd ? fast_group_bytes(m, k) : 0;
			rt += rcv ? fast_group_bytes(m, k) : 0;
		}
		rs[r].b.send = malloc(st + 1);
		rs[r].b.recv = malloc(rt + 1);
		memset(rs[r].b.recv, 0xff, rt + 1);
		for (uint32_t k = 0; k < m->ngroups; k++) {
			bool snd, rcv;
			int bit = fast_token_role(m, k, r, &snd, &rcv);
			for (uint64_t o = 0; snd && o < fast_group_bytes(m, k); o++)
				rs[r].b.send[rs[r].b.sd[k] + o] = fast_token_send_byte(m, k, bit, o);
		}
	}
	wrong = walk(rs, ng);
	for (uint32_t r = 0; r < ng && wrong >= 0; r++)
		for (uint32_t k = 0; k < m->ngroups; k++) {
			bool snd, rcv;
			fast_token_role(m, k, r, &snd, &rcv);
			for (uint64_t o = 0; rcv && o < fast_group_bytes(m, k); o++)
				wrong += rs[r].b.recv[rs[r].b.rd[k] + o] != fast_token_expect_byte(m, k, o);
		}
	ranks_free(rs, ng);
	return wrong;
}

/* Build every rank's program of plan p, over byte matrix D or (m not
 * NULL) token matrix m, and interpret.  Returns wrong bytes (< 0: see
 * walk; -10: a build failed with *code, the message in *err); *staging:
 * the largest arena. */
static inline long run_plan(const struct fast_plan *p, const uint64_t *D,
			    const struct fast_matrix *m, uint32_t passes, uint64_t *staging,
			    int *code, struct fast_err *err)
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

static inline long run_expanded(const struct fast_plan *ex, const uint64_t *D, uint32_t passes,
				uint64_t *max_staging, int *code, struct fast_err *err)
{
	return run_plan(ex, D, NULL, passes, max_staging, code, err);
}

/* Compile, expand, build every rank's program, interpret (run_expanded). */
static inline long run_algo(const char *algo, const struct fast_topo *t, const uint64_t *D,
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

static inline void topo(struct fast_topo *t, uint32_t n, uint32_t g)
{
	struct fast_err err;
	struct fast_limits lim;

	fast_limits_default(&lim);
	CU_ASSERT_FATAL(fast_topo_preset("h200", n, g, &lim, t, &err) == 0);
}

/* Kinds of matrices: random (some big pairs, so large fragments travel on
 * their own), zero rows and columns, a single hot receiver; 3: uniform
 * (4096 bytes every pair, nothing to balance). */
static inline void matrix(uint64_t *D, uint32_t ng, int kind, uint64_t seed)
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
			if (kind == 3)
				v = 4096;
			D[(size_t)s * ng + d] = v;
		}
}

#endif
