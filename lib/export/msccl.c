/*
 * msccl.c - plan -> MSCCL program (msccl.h): thread blocks, and steps with
 * data and ordering dependencies, on the chunks and buffer layout of
 * msccl_chunks.c (the XML writer is msccl_xml.c).
 *
 * Workload: export is for plans that MSCCL can run, i.e. up to a few
 * hundred GPUs and 10^5..10^6 pieces.  Everything is one pass over the
 * expanded plan in topological order, with a small hash table (thread
 * block of (gpu, direction, peer)) and the holdings store (holds.h) of
 * the chunk ranges each GPU holds per message.
 */
#include "lib/export/msccl.h"
#include "lib/export/msccl_internal.h"
#include "lib/base/holds.h"

#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX
#define EXPORT_MAX_GPUS 4096u

void fast_msccl_opts_default(struct fast_msccl_opts *o)
{
	memset(o, 0, sizeof *o);
	o->max_chunks = 1024;
	o->max_cnt = 64;
	snprintf(o->proto, sizeof o->proto, "Simple");
}

void fast_msccl_free(struct fast_msccl *m)
{
	if (!m)
		return;
	free(m->i_chunks);
	free(m->o_chunks);
	free(m->s_chunks);
	free(m->tbs);
	free(m->steps);
	free(m->link_chunks);
	free(m->q);
	memset(m, 0, sizeof *m);
}

/* --- a u64 -> u32 open-addressing map ------------------------------------ */

struct map {
	uint64_t *keys; /* key + 1; 0 = empty */
	uint32_t *vals;
	size_t cap, n;
};

static uint64_t mix(uint64_t x)
{
	x += UINT64_C(0x9e3779b97f4a7c15);
	x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
	return x ^ (x >> 31);
}

static void map_free(struct map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof *m);
}

static uint32_t *map_find(const struct map *m, uint64_t key)
{
	if (!m->cap)
		return NULL;
	for (size_t i = mix(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == 0)
			return NULL;
		if (m->keys[i] == key + 1)
			return &m->vals[i];
	}
}

/* Insert or overwrite; returns false on exhaustion. */
static bool map_put(struct map *m, uint64_t key, uint32_t val)
{
	uint32_t *v = map_find(m, key);
	size_t i;

	if (v) {
		*v = val;
		return true;
	}
	if ((m->n + 1) * 2 > m->cap) {
		struct map g = { 0 };
		g.cap = m->cap ? m->cap * 2 : 64;
		g.keys = fast_calloc(g.cap, sizeof *g.keys);
		g.vals = fast_calloc(g.cap, sizeof *g.vals);
		if (!g.keys || !g.vals) {
			map_free(&g);
			return false;
		}
		for (size_t j = 0; j < m->cap; j++)
			if (m->keys[j])
				map_put(&g, m->keys[j] - 1, m->vals[j]);
		map_free(m);
		*m = g;
	}
	for (i = mix(key) & (m->cap - 1); m->keys[i]; i = (i + 1) & (m->cap - 1))
		;
	m->keys[i] = key + 1;
	m->vals[i] = val;
	m->n++;
	return true;
}

/* --- build state --------------------------------------------------------- */

struct btb {             /* a thread block while building */
	uint32_t gpu, id;
	int32_t send, recv;
	uint32_t nsteps;
	uint32_t plan_step;  /* last plan step emitted here (NONE: none) */
};

struct bstep {
	struct fast_msccl_step st;
	uint32_t tb;         /* global block index */
};

struct rec {             /* where chunks of a message held by a GPU live */
	uint64_t off;        /* chunk offset of the holding's first chunk in buf */
	enum fast_msccl_buf buf;
	uint32_t tb, step;   /* global block index, index in the block */
};

struct build {
	uint32_t ng, max_cnt;
	const uint64_t *L, *q, *in_off, *out_off;
	uint64_t *s_chunks;
	struct btb *tbs; size_t ntbs, cap_tbs;
	struct bstep *steps; size_t nsteps, cap_steps;
	struct fast_holds held; /* chunk ranges per (gpu, message); payload in recs */
	struct rec *recs; size_t cap_recs;
	uint32_t *gpu_ntbs;  /* blocks per GPU so far */
	struct map tbmap;    /* (gpu, dir, peer) -> global block */
	struct map lastmap;  /* (plan step, gpu) -> step packed (tb << 32 | idx) as index into last[] */
	uint64_t *last; size_t nlast, cap_last;
	uint64_t *link;
	struct fast_err *err;
};

static int nomem(struct build *b)
{
	return fast_err_set(b->err, FAST_ENOMEM, "msccl export: out of memory");
}

/* dir: 0 send, 1 recv, 2 local copy */
static int get_tb(struct build *b, uint32_t gpu, int dir, uint32_t peer, uint32_t *out)
{
	uint64_t key = ((uint64_t)gpu * 3 + (uint64_t)dir) * b->ng + (dir == 2 ? 0 : peer);
	uint32_t *v = map_find(&b->tbmap, key);
	struct btb *t;

	if (v) {
		*out = *v;
		return 0;
	}
	if (FAST_GROW(b->tbs, b->cap_tbs, b->ntbs + 1) < 0)
		return nomem(b);
	t = &b->tbs[b->ntbs];
	t->gpu = gpu;
	t->id = b->gpu_ntbs[gpu]++;
	t->send = dir == 0 ? (int32_t)peer : -1;
	t->recv = dir == 1 ? (int32_t)peer : -1;
	t->nsteps = 0;
	t->plan_step = NONE;
	if (!map_put(&b->tbmap, key, (uint32_t)b->ntbs))
		return nomem(b);
	*out = (uint32_t)b->ntbs++;
	return 0;
}

static int push_step(struct build *b, uint32_t tb, const struct fast_msccl_step *st,
		     uint32_t *idx)
{
	if (FAST_GROW(b->steps, b->cap_steps, b->nsteps + 1) < 0)
		return nomem(b);
	b->steps[b->nsteps].st = *st;
	b->steps[b->nsteps].tb = tb;
	b->nsteps++;
	*idx = b->tbs[tb].nsteps++;
	return 0;
}

/* A dependency: global block and index in it, NONE when absent. */
struct dep {
	uint32_t tb, step;
};

/* The global step array position of (tb, idx) is not kept; hasdep marks
 * are applied at the end from the dependency lists, see finish(). */

/* Emit step st into block tb, waiting for deps[0..n) (those in other
 * blocks; duplicates removed): all but the last through nop steps. */
static int emit(struct build *b, uint32_t tb, struct fast_msccl_step st, const struct dep *deps,
		size_t n, uint32_t *idx)
{
	struct dep keep[64];
	size_t k = 0;
	int rc;

	for (size_t i = 0; i < n; i++) {
		bool dup = false;
		if (deps[i].tb == NONE || deps[i].tb == tb)
			continue;
		for (size_t j = 0; j < k; j++)
			if (keep[j].tb == deps[i].tb) {
				/* the later step of one block implies the earlier */
				if (deps[i].step > keep[j].step)
					keep[j].step = deps[i].step;
				dup = true;
			}
		if (!dup && k < sizeof keep / sizeof keep[0])
			keep[k++] = deps[i];
	}
	for (size_t i = 0; i + 1 < k; i++) {
		struct fast_msccl_step nop = { .op = FAST_MSCCL_NOP, .srcbuf = FAST_MSCCL_IN,
					       .dstbuf = FAST_MSCCL_OUT, .srcoff = -1, .dstoff = -1,
					       .cnt = 0 };
		uint32_t dummy;
		nop.depid = (int32_t)keep[i].tb; /* global for now; mapped in finish() */
		nop.deps = (int32_t)keep[i].step;
		if ((rc = push_step(b, tb, &nop, &dummy)) < 0)
			return rc;
	}
	st.depid = k ? (int32_t)keep[k - 1].tb : -1;
	st.deps = k ? (int32_t)keep[k - 1].step : -1;
	st.hasdep = 0;
	return push_step(b, tb, &st, idx);
}

/* Ordering dependencies of plan step `t` on GPU g when block tb starts it:
 * the last step of each plan step t depends on, on the same GPU. */
static size_t plan_deps(struct build *b, const struct fast_plan *x, uint32_t t, uint32_t g,
			uint32_t tb, struct dep *out, size_t max)
{
	const struct fast_step *s = &x->steps[t];
	size_t n = 0;

	if (b->tbs[tb].plan_step == t)
		return 0;
	for (uint32_t k = 0; k < s->ndeps && n < max; k++) {
		uint32_t on = x->deps[s->dep0 + k].step;
		uint32_t *v = map_find(&b->lastmap, (uint64_t)on * b->ng + g);
		if (v) {
			uint64_t packed = b->last[*v];
			out[n].tb = (uint32_t)(packed >> 32);
			out[n].step = (uint32_t)packed;
			n++;
		}
	}
	return n;
}

static int note_last(struct build *b, uint32_t t, uint32_t g, uint32_t tb, uint32_t idx)
{
	uint64_t key = (uint64_t)t * b->ng + g;
	uint32_t *v = map_find(&b->lastmap, key);
	uint64_t packed = (uint64_t)tb << 32 | idx;

	b->tbs[tb].plan_step = t;
	if (v) {
		b->last[*v] = packed;
		return 0;
	}
	if (FAST_GROW(b->last, b->cap_last, b->nlast + 1) < 0)
		return nomem(b);
	b->last[b->nlast] = packed;
	if (!map_put(&b->lastmap, key, (uint32_t)b->nlast))
		return nomem(b);
	b->nlast++;
	return 0;
}

static int add_rec(struct build *b, uint32_t gpu, uint64_t msg, uint64_t c0, uint64_t c1,
		   enum fast_msccl_buf buf, uint64_t off, uint32_t tb, uint32_t step)
{
	uint32_t id;

	if (fast_holds_add(&b->held, (uint64_t)gpu * b->ng * b->ng + msg, c0, c1, &id) < 0 ||
	    FAST_GROW(b->recs, b->cap_recs, (size_t)id + 1) < 0)
		return nomem(b);
	b->recs[id] = (struct rec){ off, buf, tb, step };
	return 0;
}

/* The newest holding of chunk c of message msg on gpu: its record id, or
 * FAST_HOLDS_END. */
static uint32_t find_rec(const struct build *b, uint32_t gpu, uint64_t msg, uint64_t c)
{
	return fast_holds_find(&b->held, (uint64_t)gpu * b->ng * b->ng + msg, c);
}

/* Move chunks [c0, c1) of message (s, d) from GPU a to GPU z in plan step
 * t: walk the source locations, cut at max_cnt, emit the matching send and
 * receive (or one local copy when a == z), and record the arrival. */
static int move(struct build *b, const struct fast_plan *x, uint32_t t, uint32_t a, uint32_t z,
		uint32_t s, uint32_t d, uint64_t c0, uint64_t c1)
{
	uint64_t msg = (uint64_t)s * b->ng + d;
	uint64_t cur = c0;
	int rc;

	while (cur < c1) {
		enum fast_msccl_buf sbuf, dbuf;
		uint64_t soff, doff, end;
		struct dep data = { NONE, NONE };
		struct dep deps[33];
		size_t nd = 0;
		uint32_t tbs, tbr, is, ir;
		struct fast_msccl_step st = { 0 };

		if (a == s) {
			sbuf = FAST_MSCCL_IN;
			soff = b->in_off[msg] + cur;
			end = c1;
		} else {
			uint32_t id = find_rec(b, a, msg, cur);
			const struct fast_hold *h;
			const struct rec *r;
			if (id == FAST_HOLDS_END)
				return fast_err_set(b->err, FAST_EINPUT,
						    "msccl export: step %u: GPU %u sends chunk %llu of message %u->%u that it does not hold",
						    t, a, (unsigned long long)cur, s, d);
			h = &b->held.recs[id];
			r = &b->recs[id];
			sbuf = r->buf;
			soff = r->off + (cur - h->lo);
			end = h->hi < c1 ? h->hi : c1;
			data.tb = r->tb;
			data.step = r->step;
		}
		if (end - cur > b->max_cnt)
			end = cur + b->max_cnt;
		if (z == d) {
			dbuf = FAST_MSCCL_OUT;
			doff = b->out_off[msg] + cur;
		} else {
			dbuf = FAST_MSCCL_SCRATCH;
			doff = b->s_chunks[z];
			b->s_chunks[z] += end - cur;
		}
		st.srcbuf = sbuf;
		st.srcoff = (int64_t)soff;
		st.dstbuf = dbuf;
		st.dstoff = (int64_t)doff;
		st.cnt = (uint32_t)(end - cur);
		if (a == z) {
			if ((rc = get_tb(b, a, 2, 0, &tbs)) < 0)
				return rc;
			nd = plan_deps(b, x, t, a, tbs, deps, 32);
			deps[nd++] = data;
			st.op = FAST_MSCCL_COPY;
			if ((rc = emit(b, tbs, st, deps, nd, &is)) < 0 ||
			    (rc = note_last(b, t, a, tbs, is)) < 0)
				return rc;
			tbr = tbs;
			ir = is;
		} else {
			if ((rc = get_tb(b, a, 0, z, &tbs)) < 0 || (rc = get_tb(b, z, 1, a, &tbr)) < 0)
				return rc;
			nd = plan_deps(b, x, t, a, tbs, deps, 32);
			deps[nd++] = data;
			st.op = FAST_MSCCL_SEND;
			if ((rc = emit(b, tbs, st, deps, nd, &is)) < 0 ||
			    (rc = note_last(b, t, a, tbs, is)) < 0)
				return rc;
			nd = plan_deps(b, x, t, z, tbr, deps, 32);
			st.op = FAST_MSCCL_RECV;
			if ((rc = emit(b, tbr, st, deps, nd, &ir)) < 0 ||
			    (rc = note_last(b, t, z, tbr, ir)) < 0)
				return rc;
			b->link[(uint64_t)a * b->ng + z] += st.cnt;
		}
		if ((rc = add_rec(b, z, msg, cur, end, dbuf, doff, tbr, ir)) < 0)
			return rc;
		cur = end;
	}
	return 0;
}


static int cmp_tb(const void *pa, const void *pb)
{
	const struct btb *a = *(const struct btb *const *)pa, *b = *(const struct btb *const *)pb;
	if (a->gpu != b->gpu)
		return a->gpu < b->gpu ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

/* Pair (a -> z) channel with n channels. */
static int32_t pair_chan(uint32_t a, uint32_t z, uint32_t ng, uint32_t n)
{
	return (int32_t)((((uint64_t)z + ng - a) % ng - 1) % n);
}

static int32_t tb_chan(const struct btb *t, uint32_t ng, uint32_t n)
{
	if (t->send >= 0)
		return pair_chan(t->gpu, (uint32_t)t->send, ng, n);
	if (t->recv >= 0)
		return pair_chan((uint32_t)t->recv, t->gpu, ng, n);
	return 0;
}

/* Assemble the output: blocks sorted by (gpu, id), their steps contiguous,
 * dependencies mapped to per-GPU block ids, hasdep marks, channels. */
static int finish(struct build *b, struct fast_msccl *m)
{
	struct btb **order = fast_calloc(b->ntbs ? b->ntbs : 1, sizeof *order);
	uint32_t *pos = fast_calloc(b->ntbs ? b->ntbs : 1, sizeof *pos); /* global -> sorted */
	uint32_t *fill = fast_calloc(b->ntbs ? b->ntbs : 1, sizeof *fill);
	uint32_t *cnt = NULL;
	uint32_t nch = 1;
	int rc = 0;

	m->tbs = fast_calloc(b->ntbs ? b->ntbs : 1, sizeof *m->tbs);
	m->steps = fast_calloc(b->nsteps ? b->nsteps : 1, sizeof *m->steps);
	cnt = fast_calloc((size_t)b->ng * FAST_MSCCL_MAX_CHANNELS, sizeof *cnt);
	if (!order || !pos || !fill || !m->tbs || !m->steps || !cnt) {
		rc = nomem(b);
		goto out;
	}
	for (size_t i = 0; i < b->ntbs; i++)
		order[i] = &b->tbs[i];
	qsort(order, b->ntbs, sizeof *order, cmp_tb);
	{
		uint32_t step0 = 0;
		for (size_t i = 0; i < b->ntbs; i++) {
			struct btb *t = order[i];
			uint32_t gi = (uint32_t)(t - b->tbs);
			pos[gi] = (uint32_t)i;
			m->tbs[i].gpu = t->gpu;
			m->tbs[i].id = t->id;
			m->tbs[i].send = t->send;
			m->tbs[i].recv = t->recv;
			m->tbs[i].step0 = step0;
			m->tbs[i].nsteps = t->nsteps;
			step0 += t->nsteps;
			if (t->nsteps > m->max_tb_steps)
				m->max_tb_steps = t->nsteps;
		}
	}
	for (size_t i = 0; i < b->nsteps; i++) {
		uint32_t si = pos[b->steps[i].tb];
		m->steps[m->tbs[si].step0 + fill[si]++] = b->steps[i].st;
	}
	for (size_t i = 0; i < b->nsteps; i++) {
		struct fast_msccl_step *st = &m->steps[i];
		if (st->depid >= 0) {
			uint32_t si = pos[st->depid];
			m->steps[m->tbs[si].step0 + (uint32_t)st->deps].hasdep = 1;
			st->depid = (int32_t)m->tbs[si].id;
		}
	}
	/* fewest channels that keep every (gpu, channel) within the limit */
	for (nch = 1; nch <= FAST_MSCCL_MAX_CHANNELS; nch++) {
		uint32_t worst = 0;
		memset(cnt, 0, (size_t)b->ng * FAST_MSCCL_MAX_CHANNELS * sizeof *cnt);
		for (size_t i = 0; i < b->ntbs; i++) {
			uint32_t c = (uint32_t)tb_chan(&b->tbs[i], b->ng, nch);
			uint32_t *k = &cnt[(size_t)b->tbs[i].gpu * FAST_MSCCL_MAX_CHANNELS + c];
			if (++*k > worst)
				worst = *k;
		}
		m->max_tbs_per_channel = worst;
		if (worst <= FAST_MSCCL_MAX_TB_PER_CHANNEL)
			break;
	}
	if (nch > FAST_MSCCL_MAX_CHANNELS)
		nch = FAST_MSCCL_MAX_CHANNELS;
	else
		m->max_tbs_per_channel = 0;
	m->nchannels = nch;
	for (size_t i = 0; i < b->ntbs; i++)
		m->tbs[i].chan = tb_chan(order[i], b->ng, nch);
	m->ntbs = (uint32_t)b->ntbs;
	m->nsteps = b->nsteps;
	if (m->max_tb_steps <= FAST_MSCCL_MAX_STEPS)
		m->max_tb_steps = 0;
out:
	free(order);
	free(pos);
	free(fill);
	free(cnt);
	return rc;
}

static int build_plan(struct build *b, const struct fast_plan *x, const uint64_t *L,
		      const uint64_t *q, uint32_t *order)
{
	uint32_t ng = b->ng;
	int rc;

	/* the diagonal: local copies first, they depend on nothing */
	for (uint32_t s = 0; s < ng; s++) {
		uint64_t msg = (uint64_t)s * ng + s;
		if (q[msg] == 0)
			continue;
		for (uint64_t c = 0; c < q[msg];) {
			uint64_t n = q[msg] - c < b->max_cnt ? q[msg] - c : b->max_cnt;
			struct fast_msccl_step st = { .op = FAST_MSCCL_COPY, .srcbuf = FAST_MSCCL_IN,
						      .dstbuf = FAST_MSCCL_OUT };
			uint32_t tb, idx;
			st.srcoff = (int64_t)(b->in_off[msg] + c);
			st.dstoff = (int64_t)(b->out_off[msg] + c);
			st.cnt = (uint32_t)n;
			if ((rc = get_tb(b, s, 2, 0, &tb)) < 0 || (rc = emit(b, tb, st, NULL, 0, &idx)) < 0)
				return rc;
			c += n;
		}
	}
	for (size_t oi = 0; oi < x->nsteps; oi++) {
		uint32_t t = order[oi];
		const struct fast_step *s = &x->steps[t];
		for (uint32_t k = 0; k < s->nxfers; k++) {
			const struct fast_xfer *xf = &x->xfers[s->xfer0 + k];
			for (uint32_t j = 0; j < xf->npieces; j++) {
				const struct fast_piece *pc = &x->pieces[xf->piece0 + j];
				uint64_t msg = (uint64_t)pc->src * ng + pc->dst;
				uint64_t c0 = fast_msccl_boundary(pc->off, L[msg], q[msg]);
				uint64_t c1 = fast_msccl_boundary(pc->off + pc->len, L[msg], q[msg]);
				if (c0 >= c1)
					continue;
				if ((rc = move(b, x, t, xf->from, xf->to, pc->src, pc->dst, c0, c1)) < 0)
					return rc;
			}
		}
	}
	return 0;
}

/* The refusals that need neither a valid plan nor its expansion. */
static int export_args_ok(const struct fast_plan *p, const struct fast_msccl_opts *o,
			  struct fast_err *err)
{
	uint32_t ng = p->servers * p->gpus;

	if (ng == 0 || ng > EXPORT_MAX_GPUS)
		return fast_err_set(err, FAST_ELIMIT,
				    "msccl export: %u GPUs is outside what MSCCL programs support (1..%u)",
				    ng, EXPORT_MAX_GPUS);
	if (o->max_cnt == 0 || o->max_chunks == 0)
		return fast_err_set(err, FAST_EUSAGE, "msccl export: max_cnt and max_chunks must be > 0");
	if (p->kind != FAST_TRAFFIC_BYTES)
		return fast_err_set(err, FAST_EINPUT,
				    "msccl export: a %s plan moves token groups, which an MSCCL "
				    "program has no notion of (export a byte plan of the same "
				    "traffic)", fast_traffic_kind_name(p->kind));
	return 0;
}

int fast_msccl_build_view(const struct fast_plan_view *pv, const uint64_t *D,
			  const struct fast_msccl_opts *o, struct fast_msccl *out,
			  struct fast_err *err)
{
	const struct fast_plan *p = pv->given, *x = pv->x;
	struct fast_msccl m;
	struct build b;
	uint32_t ng = p->servers * p->gpus;
	uint64_t *L = NULL, *in_off = NULL, *out_off = NULL;
	uint32_t *order = NULL;
	uint64_t C, nn;
	int rc;

	if ((rc = export_args_ok(p, o, err)) < 0)
		return rc;
	memset(&m, 0, sizeof m);
	memset(&b, 0, sizeof b);
	nn = (uint64_t)ng * ng;
	L = fast_calloc(nn, sizeof *L);
	in_off = fast_calloc(nn, sizeof *in_off);
	out_off = fast_calloc(nn, sizeof *out_off);
	order = fast_calloc(x->nsteps ? x->nsteps : 1, sizeof *order);
	m.q = fast_calloc(nn, sizeof *m.q);
	m.link_chunks = fast_calloc(nn, sizeof *m.link_chunks);
	m.i_chunks = fast_calloc(ng, sizeof *m.i_chunks);
	m.o_chunks = fast_calloc(ng, sizeof *m.o_chunks);
	m.s_chunks = fast_calloc(ng, sizeof *m.s_chunks);
	b.gpu_ntbs = fast_calloc(ng, sizeof *b.gpu_ntbs);
	if (!L || !in_off || !out_off || !order || !m.q || !m.link_chunks || !m.i_chunks ||
	    !m.o_chunks || !m.s_chunks || !b.gpu_ntbs) {
		rc = fast_err_set(err, FAST_ENOMEM, "msccl export: out of memory");
		goto fail;
	}
	if ((rc = fast_msccl_message_sizes(x, D, ng, L, err)) < 0 ||
	    (rc = fast_plan_topo_order(x, order, err)) < 0)
		goto fail;

	C = o->chunk_bytes ? o->chunk_bytes : fast_msccl_auto_chunk(x, L, ng, o->max_chunks);
	if ((rc = fast_msccl_quantise(x, L, ng, C, &m, err)) < 0 ||
	    (rc = fast_msccl_layout(ng, C, &m, in_off, out_off, err)) < 0)
		goto fail;
	b.ng = ng;
	b.max_cnt = o->max_cnt;
	b.L = L;
	b.q = m.q;
	b.in_off = in_off;
	b.out_off = out_off;
	b.s_chunks = m.s_chunks;
	b.link = m.link_chunks;
	b.err = err;
	if ((rc = build_plan(&b, x, L, m.q, order)) < 0 || (rc = finish(&b, &m)) < 0)
		goto fail;
	for (uint32_t g = 0; g < ng; g++) {
		uint64_t mx = m.i_chunks[g] > m.o_chunks[g] ? m.i_chunks[g] : m.o_chunks[g];
		if (mx > INT32_MAX || m.s_chunks[g] > INT32_MAX) {
			rc = fast_err_set(err, FAST_ELIMIT,
					  "msccl export: GPU %u needs %llu chunks, beyond MSCCL's int attributes; give a larger chunk size",
					  g, (unsigned long long)(mx > m.s_chunks[g] ? mx : m.s_chunks[g]));
			goto fail;
		}
		if (mx > m.nchunksperloop)
			m.nchunksperloop = (uint32_t)mx;
	}
	if (m.nchunksperloop == 0)
		m.nchunksperloop = 1;
	if (o->pad)
		for (uint32_t g = 0; g < ng; g++)
			m.i_chunks[g] = m.o_chunks[g] = m.nchunksperloop;
	m.ngpus = ng;
	if (o->name[0])
		snprintf(m.name, sizeof m.name, "%s", o->name);
	else
		snprintf(m.name, sizeof m.name, "fast-%s", p->algo[0] ? p->algo : "plan");
	snprintf(m.proto, sizeof m.proto, "%s", o->proto[0] ? o->proto : "Simple");
	rc = 0;
	*out = m;
	memset(&m, 0, sizeof m);
fail:
	fast_msccl_free(&m);
	free(L);
	free(in_off);
	free(out_off);
	free(order);
	free(b.gpu_ntbs);
	free(b.tbs);
	free(b.steps);
	free(b.recs);
	free(b.last);
	map_free(&b.tbmap);
	fast_holds_free(&b.held);
	map_free(&b.lastmap);
	return rc;
}

int fast_msccl_build(const struct fast_plan *p, const uint64_t *D,
		     const struct fast_msccl_opts *o, struct fast_msccl *out,
		     struct fast_err *err)
{
	struct fast_plan_view v;
	int rc;

	/* the cheap refusals before the plan is validated and expanded */
	if ((rc = export_args_ok(p, o, err)) < 0)
		return rc;
	if ((rc = fast_plan_view_open(&v, p, NULL, err)) < 0)
		return rc;
	rc = fast_msccl_build_view(&v, D, o, out, err);
	fast_plan_view_close(&v);
	return rc;
}
