/*
 * test_exec_flight.c - waves in flight (include/fast/prog.h, exec/prog_flight.c,
 * exec/exec.c run_two): every rank's program, built for two waves in
 * flight, run together by an interpreter that does what the engine does
 * -- wave w's receives and FREE ops posted while wave w - 1 runs, its UP
 * ops once w - 1's scale-up messages are done, its ALL ops once all of
 * w - 1 is and its post-copies ran -- with the ranks taking turns in a
 * seeded random order, one phase at a time.  A message is matched in
 * order per ordered pair (as MPI does) and its bytes move when either end
 * first waits for it, read from where the sender's buffer is then and
 * compared with what it held when posted.  Every copy and post is checked
 * against the rank's messages still in flight: writing into or reading
 * from a receive not yet complete, or writing over a send not yet
 * complete, is an error; so is a wrong byte at the end, a deadlock, or
 * staging outside the arena.  No MPI: the exec files are compiled in.
 */
#include <CUnit/Basic.h>

#include "unit.h"
#include <stdlib.h>
#include <string.h>

#include "exec/prog.c"
#include "exec/prog_wave.c"
#include "exec/prog_flight.c"
#include "fast/algo.h"
#include "fast/topo.h"
#include "lib/workload/gen.h"
#include "tests/mpi/mutate.h"
#include "exec_fix.h" /* pattern(), topo(), matrix() */

/* --- the interpreter ----------------------------------------------------- */

enum { WAIT_UP = 1, WAIT_ALL = 2 }; /* exec/backend.h's wave_end: UP or ALL */

struct fmsg {
	uint32_t src, dst, wave_s, wave_r; /* program waves of the two ends */
	bool up, sent, recvd, moved, done_s, done_r;
	uint64_t len;
	struct fast_loc from, to;
	uint8_t *snap; /* the sender's bytes when it posted */
};

struct pair { /* the messages of one ordered pair, in posting order */
	uint32_t *ids;
	size_t nsend, nrecv, cap;
};

struct frank {
	struct rankbuf b;
	uint32_t w, phase; /* next: phase 0..2 of wave w (run_two), w == nwaves: the end */
	bool done;
	uint32_t *mine; size_t nmine, cap_mine; /* message ids it posted either end of */
};

struct world {
	struct frank *r;
	uint32_t ng, gpus;
	struct fmsg *m; size_t nm, cap_m;
	struct pair *pairs; /* [src * ng + dst] */
	int err;           /* first error: -4 region, -5 send changed, -2 length */
	bool one;          /* run one wave at a time (in_flight 1) */
};

/* Do [a, a + n) and [b, b + k) share a byte (in one buffer of the rank)? */
static bool overlap(struct frank *x, const struct fast_loc *a, uint64_t n, const struct fast_loc *b,
		    uint64_t k)
{
	bool oob = false;
	const uint8_t *p = where(&x->b, a, n, &oob), *q = where(&x->b, b, k, &oob);

	if (a->kind != b->kind && !(a->kind != LOC_STAGE && b->kind != LOC_STAGE &&
				    (a->kind == LOC_SEND) == (b->kind == LOC_SEND)))
		return false;
	return n && k && p < q + k && q < p + n;
}

/* Is region (l, n) of rank r clear of its messages in flight: a receive
 * not complete (write or read) or, for a write, a send not complete? */
static bool clear(struct world *W, uint32_t r, const struct fast_loc *l, uint64_t n, bool write)
{
	struct frank *x = &W->r[r];

	for (size_t i = 0; i < x->nmine; i++) {
		const struct fmsg *m = &W->m[x->mine[i]];
		if (m->dst == r && m->recvd && !m->done_r && overlap(x, l, n, &m->to, m->len))
			return false;
		if (write && m->src == r && m->sent && !m->done_s && overlap(x, l, n, &m->from, m->len))
			return false;
	}
	return true;
}

static void fail(struct world *W, int code)
{
	if (W->err == 0)
		W->err = code;
}

static void copy_op(struct world *W, uint32_t r, const struct fast_pcopy *c, bool *oob)
{
	if (!clear(W, r, &c->dst, c->len, true) ||
	    (c->op != FAST_POP_ZERO && !clear(W, r, &c->src, c->len, false)))
		fail(W, -4);
	do_copy(&W->r[r].b, c, oob);
}

static void copies(struct world *W, uint32_t r, uint32_t from, uint32_t to, bool *oob)
{
	for (uint32_t i = from; i < to; i++)
		copy_op(W, r, &W->r[r].b.g->copies[i], oob);
}

static uint32_t new_msg(struct world *W, uint32_t src, uint32_t dst)
{
	struct pair *p = &W->pairs[(size_t)src * W->ng + dst];
	size_t n = p->nsend > p->nrecv ? p->nsend : p->nrecv;

	if (W->nm == W->cap_m) {
		W->cap_m = W->cap_m ? 2 * W->cap_m : 64;
		W->m = realloc(W->m, W->cap_m * sizeof *W->m);
	}
	memset(&W->m[W->nm], 0, sizeof *W->m);
	W->m[W->nm].src = src;
	W->m[W->nm].dst = dst;
	W->m[W->nm].up = src / W->gpus == dst / W->gpus;
	if (n >= p->cap) {
		p->cap = p->cap ? 2 * p->cap : 8;
		p->ids = realloc(p->ids, p->cap * sizeof *p->ids);
	}
	p->ids[n] = (uint32_t)W->nm;
	return (uint32_t)W->nm++;
}

static void remember(struct frank *x, uint32_t id)
{
	if (x->nmine == x->cap_mine) {
		x->cap_mine = x->cap_mine ? 2 * x->cap_mine : 64;
		x->mine = realloc(x->mine, x->cap_mine * sizeof *x->mine);
	}
	x->mine[x->nmine++] = id;
}

/* The k-th message of pair (src, dst): made by whichever end posts first. */
static uint32_t pair_msg(struct world *W, uint32_t src, uint32_t dst, size_t k)
{
	struct pair *p = &W->pairs[(size_t)src * W->ng + dst];

	if (k < (p->nsend > p->nrecv ? p->nsend : p->nrecv))
		return p->ids[k];
	return new_msg(W, src, dst);
}

static void post_send(struct world *W, uint32_t r, const struct fast_pmsg *pm, uint32_t wave, bool *oob)
{
	struct frank *x = &W->r[r];
	struct pair *p = &W->pairs[(size_t)r * W->ng + pm->peer];
	uint32_t id = pair_msg(W, r, pm->peer, p->nsend);
	struct fmsg *m = &W->m[id];

	p->nsend++;
	if (!clear(W, r, &pm->at, pm->len, false))
		fail(W, -4);
	m->sent = true;
	m->wave_s = wave;
	m->from = pm->at;
	if (m->recvd && m->len != pm->len)
		fail(W, -2);
	m->len = pm->len;
	m->snap = malloc(pm->len + 1);
	memcpy(m->snap, where(&x->b, &pm->at, pm->len, oob), pm->len);
	remember(x, id);
}

static void post_recv(struct world *W, uint32_t r, const struct fast_pmsg *pm, uint32_t wave)
{
	struct frank *x = &W->r[r];
	struct pair *p = &W->pairs[(size_t)pm->peer * W->ng + r];
	uint32_t id = pair_msg(W, pm->peer, r, p->nrecv);
	struct fmsg *m = &W->m[id];

	p->nrecv++;
	if (!clear(W, r, &pm->at, pm->len, true))
		fail(W, -4);
	if (m->sent && m->len != pm->len)
		fail(W, -2);
	m->recvd = true;
	m->wave_r = wave;
	m->to = pm->at;
	m->len = pm->len;
	remember(x, id);
}

/* Wait, on rank r, for its messages of wave v (UP: the scale-up ones):
 * false while one is not matched yet; else each moves (once) and is
 * complete at this end. */
static bool wait_wave(struct world *W, uint32_t r, uint32_t v, int what, bool *oob)
{
	struct frank *x = &W->r[r];

	for (size_t i = 0; i < x->nmine; i++) {
		struct fmsg *m = &W->m[x->mine[i]];
		bool mine_s = m->src == r && m->sent && m->wave_s == v;
		bool mine_r = m->dst == r && m->recvd && m->wave_r == v;
		if ((mine_s || mine_r) && (what == WAIT_ALL || m->up) && !(m->sent && m->recvd))
			return false;
	}
	for (size_t i = 0; i < x->nmine; i++) {
		struct fmsg *m = &W->m[x->mine[i]];
		bool mine_s = m->src == r && m->sent && m->wave_s == v;
		bool mine_r = m->dst == r && m->recvd && m->wave_r == v;
		if (!(mine_s || mine_r) || !(what == WAIT_ALL || m->up))
			continue;
		if (!m->moved) {
			struct frank *s = &W->r[m->src], *d = &W->r[m->dst];
			const uint8_t *now = where(&s->b, &m->from, m->len, oob);
			if (memcmp(now, m->snap, m->len) != 0)
				fail(W, -5);
			memcpy(where(&d->b, &m->to, m->len, oob), now, m->len);
			m->moved = true;
		}
		if (mine_s)
			m->done_s = true;
		if (mine_r)
			m->done_r = true;
	}
	return true;
}

static void sends(struct world *W, uint32_t r, uint32_t from, uint32_t to, uint32_t w, bool *oob)
{
	for (uint32_t i = from; i < to; i++)
		post_send(W, r, &W->r[r].b.g->sends[i], w, oob);
}

/* One phase of rank r (exec.c run_two, or run_one): false when blocked. */
static bool step(struct world *W, uint32_t r, bool *oob)
{
	struct frank *x = &W->r[r];
	const struct fast_prog *g = x->b.g;
	const struct fast_pwave *wv, *pv;

	if (x->w == g->nwaves) {
		if (g->nwaves && !W->one) {
			pv = &g->waves[g->nwaves - 1];
			if (!wait_wave(W, r, g->nwaves - 1, WAIT_ALL, oob))
				return false;
			copies(W, r, pv->post0, pv->post0 + pv->npost, oob);
		}
		x->done = true;
		return true;
	}
	wv = &g->waves[x->w];
	pv = x->w ? &g->waves[x->w - 1] : NULL;
	if (W->one) { /* run_one: all of a wave, then its end */
		if (x->phase == 0) {
			copies(W, r, wv->pre0, wv->pre0 + wv->npre, oob);
			for (uint32_t i = 0; i < wv->nrecv; i++)
				post_recv(W, r, &g->recvs[wv->recv0 + i], x->w);
			sends(W, r, wv->send0, wv->send0 + wv->nsend, x->w, oob);
			x->phase = 1;
			return true;
		}
		if (!wait_wave(W, r, x->w, WAIT_ALL, oob))
			return false;
		copies(W, r, wv->post0, wv->post0 + wv->npost, oob);
		x->phase = 0;
		x->w++;
		return true;
	}
	if (x->phase > 0 && pv &&
	    !wait_wave(W, r, x->w - 1, x->phase == 1 ? WAIT_UP : WAIT_ALL, oob))
		return false;
	if (x->phase == 2 && pv)
		copies(W, r, pv->post0, pv->post0 + pv->npost, oob);
	{
		uint32_t pre[4] = { wv->pre0, wv->pre0 + wv->pre_at[0], wv->pre0 + wv->pre_at[1],
				    wv->pre0 + wv->npre };
		uint32_t snd[4] = { wv->send0, wv->send0 + wv->send_at[0], wv->send0 + wv->send_at[1],
				    wv->send0 + wv->nsend };
		copies(W, r, pre[x->phase], pre[x->phase + 1], oob);
		if (x->phase == 0)
			for (uint32_t i = 0; i < wv->nrecv; i++)
				post_recv(W, r, &g->recvs[wv->recv0 + i], x->w);
		sends(W, r, snd[x->phase], snd[x->phase + 1], x->w, oob);
	}
	if (++x->phase == 3) {
		x->phase = 0;
		x->w++;
	}
	return true;
}

/* Run every rank's program: 0, or -1 deadlock, -2 length, -3 staging
 * overrun, -4 a buffer in flight touched, -5 a send changed in flight. */
static long walk_two(struct world *W, uint64_t seed)
{
	struct fast_rng rng;
	uint32_t *order = malloc(W->ng * sizeof *order), done = 0;
	bool oob = false, progress = true;

	fast_rng_seed(&rng, seed);
	for (uint32_t r = 0; r < W->ng; r++)
		W->r[r].b.stage = malloc(W->r[r].b.g->staging + 1);
	while (done < W->ng && progress && W->err == 0) {
		progress = false;
		done = 0;
		for (uint32_t r = 0; r < W->ng; r++)
			order[r] = r;
		for (uint32_t r = W->ng; r > 1; r--) { /* a random turn order */
			uint32_t k = (uint32_t)fast_rng_below(&rng, r), t = order[r - 1];
			order[r - 1] = order[k];
			order[k] = t;
		}
		for (uint32_t i = 0; i < W->ng; i++) {
			struct frank *x = &W->r[order[i]];
			if (x->done) {
				done++;
				continue;
			}
			if (step(W, order[i], &oob))
				progress = true;
		}
	}
	free(order);
	if (W->err)
		return W->err;
	if (done < W->ng)
		return -1;
	return oob ? -3 : 0;
}

static void world_free(struct world *W)
{
	for (uint32_t r = 0; r < W->ng; r++) {
		rankbuf_free(&W->r[r].b);
		free(W->r[r].mine);
	}
	for (size_t i = 0; i < W->nm; i++)
		free(W->m[i].snap);
	for (size_t i = 0; i < (size_t)W->ng * W->ng; i++)
		free(W->pairs[i].ids);
	free(W->pairs);
	free(W->m);
	free(W->r);
}

/* Buffers of every rank for byte matrix D or token matrix m (test_exec.c's
 * layout), filled with the patterns. */
static void world_init(struct world *W, struct fast_prog **progs, uint32_t ng, uint32_t gpus,
		       const uint64_t *D, const struct fast_matrix *m, bool one)
{
	uint32_t nmsg = m ? m->ngroups : ng;

	memset(W, 0, sizeof *W);
	W->ng = ng;
	W->gpus = gpus;
	W->one = one;
	W->r = calloc(ng, sizeof *W->r);
	W->pairs = calloc((size_t)ng * ng, sizeof *W->pairs);
	for (uint32_t r = 0; r < ng; r++) {
		struct frank *x = &W->r[r];
		uint64_t st = 0, rt = 0;
		x->b.g = progs[r];
		x->b.sd = calloc(nmsg + 1, sizeof *x->b.sd);
		x->b.rd = calloc(nmsg + 1, sizeof *x->b.rd);
		for (uint32_t k = 0; k < nmsg; k++) {
			bool snd = true, rcv = true;
			x->b.sd[k] = st;
			x->b.rd[k] = rt;
			if (m) {
				fast_token_role(m, k, r, &snd, &rcv);
				st += snd ? fast_group_bytes(m, k) : 0;
				rt += rcv ? fast_group_bytes(m, k) : 0;
			} else {
				st += D[(size_t)r * ng + k];
				rt += D[(size_t)k * ng + r];
			}
		}
		x->b.send = malloc(st + 1);
		x->b.recv = malloc(rt + 1);
		memset(x->b.recv, 0xff, rt + 1);
		for (uint32_t k = 0; k < nmsg; k++) {
			if (m) {
				bool snd, rcv;
				int bit = fast_token_role(m, k, r, &snd, &rcv);
				for (uint64_t o = 0; snd && o < fast_group_bytes(m, k); o++)
					x->b.send[x->b.sd[k] + o] = fast_token_send_byte(m, k, bit, o);
			} else {
				for (uint64_t o = 0; o < D[(size_t)r * ng + k]; o++)
					x->b.send[x->b.sd[k] + o] = pattern(r, k, o);
			}
		}
	}
}

static long wrong_bytes(struct world *W, const uint64_t *D, const struct fast_matrix *m)
{
	long wrong = 0;

	for (uint32_t r = 0; r < W->ng; r++) {
		struct frank *x = &W->r[r];
		if (m) {
			for (uint32_t k = 0; k < m->ngroups; k++) {
				bool snd, rcv;
				fast_token_role(m, k, r, &snd, &rcv);
				for (uint64_t o = 0; rcv && o < fast_group_bytes(m, k); o++)
					wrong += x->b.recv[x->b.rd[k] + o] != fast_token_expect_byte(m, k, o);
			}
		} else {
			for (uint32_t s = 0; s < W->ng; s++)
				for (uint64_t o = 0; o < D[(size_t)s * W->ng + r]; o++)
					wrong += x->b.recv[x->b.rd[s] + o] != pattern(s, r, o);
		}
	}
	return wrong;
}

/* Build every rank's program of plan p (built for `built` waves in flight)
 * and run them `run` at a time (1 or 2).  Returns wrong bytes or a code of
 * walk_two(), -10 when a build failed; *staging the largest arena, *free_later
 * (may be NULL) the FREE sends of waves after a rank's first. */
static long run_two_plan(const struct fast_plan *p, const uint64_t *D, const struct fast_matrix *m,
		     uint32_t passes, uint32_t built, uint32_t run, uint64_t seed, uint64_t *staging,
		     uint64_t *free_later)
{
	uint32_t ng = p->servers * p->gpus;
	struct fast_prog **progs = calloc(ng, sizeof *progs);
	struct fast_plan_view v;
	struct fast_err err;
	struct world W;
	long wrong = -10;

	*staging = 0;
	if (free_later)
		*free_later = 0;
	if (fast_plan_view_open(&v, p, m, &err) < 0) {
		free(progs);
		return wrong;
	}
	for (uint32_t r = 0; r < ng; r++) {
		if ((m ? fast_prog_build_tokens(&v, m, r, passes, built, &progs[r], &err)
		       : fast_prog_build(&v, D, r, passes, built, &progs[r], &err)) < 0) {
			fprintf(stderr, "\nbuild: %s\n", err.msg);
			goto out;
		}
		if (progs[r]->staging > *staging)
			*staging = progs[r]->staging;
		for (size_t w = 1; free_later && w < progs[r]->nwaves; w++)
			*free_later += progs[r]->waves[w].send_at[0];
	}
	world_init(&W, progs, ng, p->gpus, D, m, run == 1);
	wrong = walk_two(&W, seed);
	if (wrong == 0)
		wrong = wrong_bytes(&W, D, m);
	world_free(&W);
out:
	for (uint32_t r = 0; r < ng; r++)
		fast_prog_free(progs[r]);
	free(progs);
	fast_plan_view_close(&v);
	return wrong;
}

/* --- cases -------------------------------------------------------------- */

static int compile(const char *algo, const char *stages, const struct fast_topo *t,
		   const struct fast_matrix *m, struct fast_plan *ex)
{
	struct fast_algo_opts o;
	struct fast_plan p;
	struct fast_err err;
	int rc;

	fast_algo_opts_default(&o);
	if (stages)
		o.stages = strcmp(stages, "exact") == 0    ? FAST_STAGES_EXACT
			   : strcmp(stages, "packed") == 0 ? FAST_STAGES_PACKED
							   : FAST_STAGES_AUTO;
	if ((rc = fast_compile(algo, t, m, &o, &p, &err)) < 0)
		return rc;
	rc = fast_plan_expand(&p, m->kind == FAST_TRAFFIC_BYTES ? NULL : m, ex, &err);
	fast_plan_free(&p);
	return rc;
}

struct algo_case {
	const char *algo, *stages;
};
static const struct algo_case algos[] = {
	{ "fast", NULL }, { "fast", "exact" }, { "fast", "packed" }, { "fanout", NULL },
	{ "nccl", NULL }, { "pxn", NULL },      { "spreadout", NULL }, { "hier", NULL },
};

/* Every schedule's plan, built for two waves in flight, runs two at a
 * time (and one at a time) in any turn order and delivers every byte, in
 * one pass and in three; its staging is at least that of one wave at a
 * time. */
static void test_exec_flight__every_schedule_two_in_flight(void)
{
	const uint32_t shapes[][2] = { { 2, 4 }, { 3, 2 }, { 4, 2 }, { 3, 3 } };
	uint64_t D[16 * 16];

	for (size_t s = 0; s < 4; s++)
		for (int kind = 0; kind < 4; kind++) {
			struct fast_topo t;
			uint32_t n = shapes[s][0], g = shapes[s][1];
			topo(&t, n, g);
			matrix(D, n * g, kind, 100 + s * 4 + (uint64_t)kind);
			struct fast_matrix mx = fast_matrix_of(D, n * g);
			for (size_t a = 0; a < sizeof algos / sizeof *algos; a++) {
				struct fast_plan ex;
				uint64_t s1, s2;
				if (algos[a].stages && strcmp(algos[a].stages, "packed") == 0 && n < 3)
					continue;
				CU_ASSERT_FATAL(compile(algos[a].algo, algos[a].stages, &t, &mx, &ex) == 0);
				for (uint32_t passes = 1; passes <= 3; passes += 2) {
					long w2 = run_two_plan(&ex, D, NULL, passes, 2, 2, 7 * s + (uint64_t)kind, &s2, NULL);
					long w1 = run_two_plan(&ex, D, NULL, passes, 2, 1, 1, &s2, NULL);
					long w0 = run_two_plan(&ex, D, NULL, passes, 1, 1, 1, &s1, NULL);
					if (w2 || w1 || w0)
						fprintf(stderr, "\n%s %s %ux%u kind %d passes %u: %ld %ld %ld\n",
							algos[a].algo, algos[a].stages ? algos[a].stages : "", n, g,
							kind, passes, w2, w1, w0);
					CU_ASSERT_EQUAL(w2, 0);
					CU_ASSERT_EQUAL(w1, 0);
					CU_ASSERT_EQUAL(w0, 0);
					CU_ASSERT(s2 >= s1);
				}
				fast_plan_free(&ex);
			}
		}
}

/* The interpreter's checks bite: programs built for one wave at a time
 * reuse a staging block in the wave after its last reader, which two in
 * flight must not; run two at a time, some of them touch a block still in
 * flight.  And the window does something: FAST's staged plan on uniform
 * traffic posts rail steps early (FREE sends after a rank's first wave). */
static void test_exec_flight__checks_bite_and_window_posts_early(void)
{
	uint64_t D[16 * 16], stg, early = 0;
	uint32_t caught = 0, tried = 0;

	for (int kind = 0; kind < 3; kind++) {
		struct fast_topo t;
		topo(&t, 4, 2);
		matrix(D, 8, kind, 300 + (uint64_t)kind);
		struct fast_matrix mx = fast_matrix_of(D, 8);
		for (size_t a = 0; a < sizeof algos / sizeof *algos; a++) {
			struct fast_plan ex;
			CU_ASSERT_FATAL(compile(algos[a].algo, algos[a].stages, &t, &mx, &ex) == 0);
			for (uint64_t seed = 0; seed < 4; seed++) {
				long w = run_two_plan(&ex, D, NULL, 1, 1, 2, seed, &stg, NULL);
				tried++;
				caught += w == -4 || w == -5 || w > 0;
			}
			fast_plan_free(&ex);
		}
	}
	CU_ASSERT(caught > 0);
	CU_ASSERT(caught < tried);
	{
		struct fast_topo t;
		struct fast_plan ex;
		topo(&t, 4, 2);
		matrix(D, 8, 3, 1);
		struct fast_matrix mx = fast_matrix_of(D, 8);
		CU_ASSERT_FATAL(compile("fast", "exact", &t, &mx, &ex) == 0);
		CU_ASSERT_EQUAL(run_two_plan(&ex, D, NULL, 1, 2, 2, 5, &stg, &early), 0);
		CU_ASSERT(early > 0);
		fast_plan_free(&ex);
	}
}

/* Checker-accepted mutants (tests/mpi/mutate.h: duplicate forwards, spare
 * copies, reordered steps) run two waves in flight. */
static void test_exec_flight__mutants_two_in_flight(void)
{
	const char *names[] = { "fast", "pxn", "hier", "nccl", "fanout", "spreadout" };
	const uint32_t shapes[][2] = { { 2, 2 }, { 2, 3 }, { 3, 2 }, { 2, 4 } };
	uint64_t D[64], stg;
	uint32_t accepted = 0;
	struct fast_rng rng;

	fast_rng_seed(&rng, 777);
	for (uint32_t i = 0; i < 120; i++) {
		struct fast_topo t;
		struct fast_plan mp, ex;
		struct fast_err err;
		uint32_t n = shapes[i % 4][0], g = shapes[i % 4][1], dups = 0;
		int rc;
		topo(&t, n, g);
		matrix(D, n * g, (int)fast_rng_below(&rng, 3), fast_rng_next(&rng));
		rc = mut_one(names[(i / 4) % 6], &t, D, &rng, &mp, &dups, &err);
		CU_ASSERT(rc >= 0);
		if (rc != 1)
			continue;
		accepted++;
		CU_ASSERT_FATAL(fast_plan_expand(&mp, NULL, &ex, &err) == 0);
		for (uint32_t passes = 1; passes <= 3; passes += 2) {
			long w = run_two_plan(&ex, D, NULL, passes, 2, 2, i, &stg, NULL);
			if (w != 0)
				fprintf(stderr, "\nmutant %u (%s, %ux%u, %u passes): %ld\n", i, mp.algo, n, g,
					passes, w);
			CU_ASSERT_EQUAL(w, 0);
		}
		fast_plan_free(&ex);
		fast_plan_free(&mp);
	}
	CU_ASSERT(accepted > 30);
}

/* Token plans (dispatch and combine of a generated MoE step, FAST and
 * hier with per-server dedup) run two waves in flight. */
static void test_exec_flight__tokens_two_in_flight(void)
{
	const char *names[] = { "fast", "hier" };
	struct fast_gen_opts o;
	struct fast_limits lim;
	struct fast_traffic tr;
	struct fast_topo t;
	struct fast_err err;
	uint64_t stg;

	topo(&t, 3, 2);
	fast_limits_default(&lim);
	fast_gen_defaults(&o);
	o.pattern = FAST_GEN_MOE;
	o.ng = 6;
	o.moe.tokens = 24;
	o.moe.experts = 12;
	o.moe.topk = 3;
	o.moe.token_bytes = 96;
	o.moe.steps = 1;
	o.moe.groups = true;
	o.seed = 9;
	CU_ASSERT_FATAL(fast_gen_traffic(&o, &lim, &tr, &err) == 0);
	for (uint32_t k = 0; k < tr.count; k++)
		for (size_t a = 0; a < 2; a++) {
			struct fast_plan ex;
			long w;
			CU_ASSERT_FATAL(compile(names[a], NULL, &t, &tr.m[k], &ex) == 0);
			w = run_two_plan(&ex, NULL, &tr.m[k], 1, 2, 2, k * 2 + a, &stg, NULL);
			if (w != 0)
				fprintf(stderr, "\n%s %s: %ld\n", names[a], fast_traffic_kind_name(tr.m[k].kind), w);
			CU_ASSERT_EQUAL(w, 0);
			fast_plan_free(&ex);
		}
	fast_traffic_free(&tr);
}

UNIT_MAIN("exec_flight", UNIT_TEST(test_exec_flight__every_schedule_two_in_flight),
	  UNIT_TEST(test_exec_flight__checks_bite_and_window_posts_early),
	  UNIT_TEST(test_exec_flight__mutants_two_in_flight),
	  UNIT_TEST(test_exec_flight__tokens_two_in_flight))
