/*
 * prog.c - turn a plan's explicit form into one rank's program (see exec.h):
 * waves of copies, sends and receives over the send buffer, the receive
 * buffer and a staging arena.  Pure computation: no MPI, no device.
 *
 * Waves.  A node is (step, chunk).  Its level is one more than the largest
 * level of what it waits for (chunk c of a pipelined dependency, every
 * chunk of a plain one), and never below the level of the chunk before it
 * in the same step (fast_plan_waves, include/fast/plan.h; the simulator's
 * `--sync rank` uses the same cut).  Nodes run in (level, step id, chunk)
 * order; all ranks compute the same order, so both ends of a message
 * agree on its wave and on its position among the messages of the same
 * pair.
 *
 * Holdings.  While walking the waves the builder tracks where every byte
 * this rank holds lives: its own messages in the send buffer, bytes that
 * reached their destination in the receive buffer, bytes in transit in
 * staging blocks.  Within a wave, sends read only what was held when the
 * wave began; receives become holdings when it ends.  A rank asked to send
 * bytes it does not hold is a plan error (FAST_ECHECK).
 *
 * Staging.  A received chunk whose bytes are all final and contiguous goes
 * straight into the receive buffer; otherwise it lands in a staging block
 * (final bytes are then copied out).  A block lives from the wave it is
 * filled in until the end of the last wave that reads it, in dependency
 * (wave) order: a relay may forward the same bytes several times (a spare
 * copy, then the real one; token replication), and bytes it receives but
 * never forwards free their block at the end of the wave they arrive in.
 * Pack blocks (a send gathered from several places) live for their wave.
 * While walking the waves, staging locations name their block (loc.msg)
 * and an offset in it; when the walk is done every block's lifetime is
 * known, blocks are placed first fit with coalescing in the order the walk
 * made them (the frees of a wave before the next wave's blocks), and the
 * locations are rewritten to arena offsets.  The arena is the high-water
 * mark.
 *
 * Token plans (prog.h, fast_prog_build_tokens).  A value is (src, dst):
 * message D[src][dst] of a byte plan, group src of a dispatch plan (dst
 * 0), group src with the contributions of value id dst of a combine plan
 * (the plan's distinct masks, sorted, then the sums no piece names).  What
 * a value is to this rank decides everything else: own() (held from the
 * start in the send buffer) and land() (where arriving bytes go: final
 * into the receive buffer, held there for forwarding when a dispatch
 * destination relays them; summed into the result at a combine src; else
 * staging).  A REDUCE transfer is a new staging block: its first input
 * copied, the others added.
 *
 * Passes.  With passes = k > 1 the plan runs k times, pass j on the slice
 * [floor(j*M/k), floor((j+1)*M/k)) of every message of M bytes, chunks
 * merged (a chunk boundary inside a slice has no meaning), one pass after
 * the other: the staging arena shrinks roughly k-fold.
 *
 * Files.  This file walks the waves, places the staging blocks and holds
 * the entry points; prog_wave.c builds one wave (holdings, values,
 * fragments, sends, receives, sums); prog_internal.h is what they share.
 */
#include <stdlib.h>
#include <string.h>

#include "exec/prog_internal.h"

#define ALIGN 64u

/* --- staging allocator ------------------------------------------------------ */

static int arena_alloc(struct alloc *a, uint64_t n, uint64_t *off)
{
	n = (n + ALIGN - 1) / ALIGN * ALIGN;
	for (size_t i = 0; i < a->nfree; i++) {
		if (a->free[i].len >= n) {
			*off = a->free[i].off;
			a->free[i].off += n;
			a->free[i].len -= n;
			if (a->free[i].len == 0) {
				memmove(&a->free[i], &a->free[i + 1], (a->nfree - i - 1) * sizeof *a->free);
				a->nfree--;
			}
			return 0;
		}
	}
	*off = a->top;
	a->top += n;
	if (a->top > a->high)
		a->high = a->top;
	return 0;
}

static int arena_free(struct alloc *a, uint64_t off, uint64_t n)
{
	size_t i;

	n = (n + ALIGN - 1) / ALIGN * ALIGN;
	for (i = 0; i < a->nfree && a->free[i].off < off; i++)
		;
	if (FAST_GROW(a->free, a->cap_free, a->nfree + 1))
		return FAST_ENOMEM;
	memmove(&a->free[i + 1], &a->free[i], (a->nfree - i) * sizeof *a->free);
	a->free[i] = (struct span){ off, n };
	a->nfree++;
	/* coalesce with the next, then the previous */
	if (i + 1 < a->nfree && a->free[i].off + a->free[i].len == a->free[i + 1].off) {
		a->free[i].len += a->free[i + 1].len;
		memmove(&a->free[i + 1], &a->free[i + 2], (a->nfree - i - 2) * sizeof *a->free);
		a->nfree--;
	}
	if (i > 0 && a->free[i - 1].off + a->free[i - 1].len == a->free[i].off) {
		a->free[i - 1].len += a->free[i].len;
		memmove(&a->free[i], &a->free[i + 1], (a->nfree - i - 1) * sizeof *a->free);
		a->nfree--;
		i--;
	}
	/* give the last span back to the top */
	if (i == a->nfree - 1 && a->free[i].off + a->free[i].len == a->top) {
		a->top = a->free[i].off;
		a->nfree--;
	}
	return 0;
}

/* --- levels ------------------------------------------------------------------ */

/* The nodes in wave order (include/fast/plan.h fast_plan_waves: the level rule of
 * the file comment), by (wave, step id, chunk): wave l is nodes
 * [wave0[l], wave0[l + 1]). */
static int order_nodes(const struct fast_plan *p, uint32_t passes, struct node **out_nodes,
		       size_t *out_n, size_t **out_wave0, uint32_t *out_levels, struct fast_err *err)
{
	struct fast_plan_waves w;
	size_t nnodes, *count = NULL, *wave0 = NULL;
	struct node *nodes = NULL;
	int rc;

	if ((rc = fast_plan_waves(p, passes, &w, err)) < 0)
		return rc;
	nnodes = w.node0[p->nsteps];
	count = fast_calloc((size_t)w.nwaves + 1, sizeof *count);
	wave0 = fast_calloc((size_t)w.nwaves + 1, sizeof *wave0);
	nodes = fast_calloc(nnodes ? nnodes : 1, sizeof *nodes);
	if (!count || !wave0 || !nodes) {
		rc = fast_err_set(err, FAST_ENOMEM, "executor: out of memory ordering the plan");
		goto out;
	}
	for (size_t i = 0; i < nnodes; i++)
		count[w.wave[i]]++;
	for (uint32_t l = 0; l < w.nwaves; l++)
		wave0[l + 1] = wave0[l] + count[l];
	memcpy(count, wave0, ((size_t)w.nwaves + 1) * sizeof *count);
	for (size_t s = 0; s < p->nsteps; s++)
		for (size_t c = 0; c < w.node0[s + 1] - w.node0[s]; c++)
			nodes[count[w.wave[w.node0[s] + c]]++] = (struct node){ (uint32_t)s, (uint32_t)c };
	*out_nodes = nodes;
	*out_n = nnodes;
	*out_wave0 = wave0;
	*out_levels = w.nwaves;
	nodes = NULL;
	wave0 = NULL;
out:
	fast_plan_waves_free(&w);
	free(count);
	free(wave0);
	free(nodes);
	return rc;
}

/* --- placing the staging blocks ------------------------------------------------ */

static void relocate(const struct builder *b, struct fast_loc *l)
{
	if (l->kind == LOC_STAGE) {
		l->off += b->blocks[l->msg].off;
		l->msg = 0;
	}
}

/* Join the copies of a phase that continue each other now that staging
 * locations are arena offsets (while walking, only copies within one block
 * could be seen to continue).  The waves' copy ranges tile prog->copies in
 * order, so the array is compacted in place. */
static void merge_copies(struct fast_prog *g)
{
	size_t k = 0;

	for (size_t w = 0; w < g->nwaves; w++) {
		struct fast_pwave *wv = &g->waves[w];
		/* the pre-copies' three classes (prog.h), then the post-copies:
		 * a copy joins only one of its own range */
		uint32_t from[4] = { wv->pre0, wv->pre0 + wv->pre_at[0], wv->pre0 + wv->pre_at[1],
				     wv->post0 };
		uint32_t to[4] = { from[1], from[2], wv->pre0 + wv->npre, wv->post0 + wv->npost };
		size_t start[4];
		for (int r = 0; r < 4; r++) {
			start[r] = k;
			for (size_t i = from[r]; i < to[r]; i++) {
				if (k > start[r] && fast_prog_continues(&g->copies[k - 1], &g->copies[i]))
					g->copies[k - 1].len += g->copies[i].len;
				else
					g->copies[k++] = g->copies[i];
			}
		}
		wv->pre0 = (uint32_t)start[0];
		wv->pre_at[0] = (uint32_t)(start[1] - start[0]);
		wv->pre_at[1] = (uint32_t)(start[2] - start[0]);
		wv->npre = (uint32_t)(start[3] - start[0]);
		wv->post0 = (uint32_t)start[3];
		wv->npost = (uint32_t)(k - start[3]);
	}
	g->ncopies = k;
}

/* Place every block in the arena, in the order the walk made them (their
 * fill waves ascend): before a block filled in wave w, every block last
 * read before w is freed -- with two waves in flight, every block last
 * read before the rank's wave before w, which may still be running when
 * w's messages are posted.  That is the first-fit allocator run online
 * with the lifetimes known, so two blocks share bytes only when their
 * lives (so extended) do not overlap.  Then staging locations become
 * arena offsets. */
static int cmp_end(const void *x, const void *y)
{
	const uint64_t *a = x, *b = y;

	return a[0] != b[0] ? (a[0] < b[0] ? -1 : 1) : (a[1] > b[1]) - (a[1] < b[1]);
}

static int place_blocks(struct builder *b)
{
	struct fast_prog *g = b->prog;
	size_t n = b->nblocks, k = 0;
	uint64_t (*ends)[2] = fast_calloc(n ? n : 1, sizeof *ends); /* (last wave, block) */
	int rc = 0;

	if (!ends)
		return FAST_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		ends[i][0] = b->blocks[i].last;
		ends[i][1] = i;
	}
	qsort(ends, n, sizeof *ends, cmp_end);
	for (size_t i = 0; i < n && rc == 0; i++) {
		struct block *blk = &b->blocks[i];
		uint64_t limit = b->in_flight > 1 && blk->prev != NO_WAVE ? blk->prev : blk->born;
		for (; k < n && ends[k][0] < limit && rc == 0; k++)
			rc = arena_free(&b->arena, b->blocks[ends[k][1]].off, b->blocks[ends[k][1]].size);
		if (rc == 0)
			rc = arena_alloc(&b->arena, blk->size, &blk->off);
	}
	for (size_t i = 0; i < g->ncopies; i++) {
		relocate(b, &g->copies[i].dst);
		relocate(b, &g->copies[i].src);
	}
	for (size_t i = 0; i < g->nsends; i++)
		relocate(b, &g->sends[i].at);
	for (size_t i = 0; i < g->nrecvs; i++)
		relocate(b, &g->recvs[i].at);
	merge_copies(g);
	free(ends);
	return rc;
}

/* --- build ---------------------------------------------------------------------- */

void fast_prog_free(struct fast_prog *g)
{
	if (!g)
		return;
	free(g->waves);
	free(g->copies);
	free(g->sends);
	free(g->recvs);
	free(g);
}

static void builder_free(struct builder *b)
{
	free(b->arena.free);
	free(b->blocks);
	fast_holds_free(&b->held);
	free(b->at);
	free(b->pending);
	free(b->final_bytes);
	free(b->final_wave);
	free(b->final_cls);
	free(b->ccls);
	free(b->scls);
	free(b->peer_cls);
	free(b->dest_bit);
	free(b->summed);
	free(b->vid);
	free(b->vals);
	free(b->frags);
	free(b->big);
	free(b->segs);
	free(b->seglen);
	free(b->seg_block);
}

/* Put n copies before everything else the program does (the first wave's
 * pre-copies, a wave made for them when there is none). */
static int prepend_copies(struct fast_prog *g, const struct fast_pcopy *c, size_t n)
{
	if (n == 0)
		return 0;
	if (g->nwaves == 0) {
		struct fast_pwave w = { 0 };
		if (PUSH(g->waves, g->nwaves, g->cap_waves, w))
			return FAST_ENOMEM;
	}
	/* they read the send buffer only: the first class */
	g->waves[0].pre_at[0] += (uint32_t)n;
	g->waves[0].pre_at[1] += (uint32_t)n;
	if (FAST_GROW(g->copies, g->cap_copies, g->ncopies + n))
		return FAST_ENOMEM;
	memmove(g->copies + n, g->copies, g->ncopies * sizeof *g->copies);
	memcpy(g->copies, c, n * sizeof *c);
	g->ncopies += n;
	g->waves[0].npre += (uint32_t)n;
	g->waves[0].post0 += (uint32_t)n;
	for (size_t i = 1; i < g->nwaves; i++) {
		g->waves[i].pre0 += (uint32_t)n;
		g->waves[i].post0 += (uint32_t)n;
	}
	return 0;
}

/* What a rank does before the plan's first wave: the diagonal of a byte
 * plan (a local copy, unless the plan moves it itself); a dispatch
 * group's copy to its own src when that is one of its destinations; a
 * combine result starting as its src's own contribution, or zero. */
static int start_copies(struct builder *b)
{
	struct fast_prog *g = b->prog;
	struct fast_pcopy *c = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;

	if (b->kind == FAST_TRAFFIC_BYTES) {
		uint64_t diag = b->D[(size_t)b->rank * b->ng + b->rank];
		if (diag > 0 && b->final_bytes[b->rank] == 0) {
			struct fast_pcopy d = { { LOC_RECV, b->rank, 0 }, { LOC_SEND, b->rank, 0 }, diag,
						FAST_POP_COPY };
			b->final_bytes[b->rank] = diag;
			return prepend_copies(g, &d, 1);
		}
		return 0;
	}
	for (uint32_t k = 0; k < b->m->ngroups && rc == 0; k++) {
		const struct fast_group *gr = &b->m->groups[k];
		struct fast_loc to = { LOC_RECV, k, 0 };
		struct fast_pcopy d = { to, { LOC_SEND, k, 0 }, fast_group_bytes(b->m, k), FAST_POP_COPY };
		if (gr->src != b->rank || d.len == 0)
			continue;
		if (b->dest_bit[k] < 0) {
			if (b->kind == FAST_TRAFFIC_DISPATCH)
				continue;
			d.op = FAST_POP_ZERO;
			d.src = to;
		}
		rc = PUSH(c, n, cap, d);
	}
	if (rc == 0)
		rc = prepend_copies(g, c, n);
	free(c);
	return rc;
}

/* Does this rank end with exactly what it must receive? */
static int check_received(struct builder *b)
{
	uint32_t r = b->rank;

	if (b->kind == FAST_TRAFFIC_BYTES) {
		for (uint32_t s = 0; s < b->ng; s++) {
			uint64_t want = b->D[(size_t)s * b->ng + r];
			if (b->final_bytes[s] != want)
				return fast_err_set(b->err, FAST_ECHECK,
						    "plan: GPU %u receives %llu bytes of message %u->%u, which has %llu",
						    r, (unsigned long long)b->final_bytes[s], s, r,
						    (unsigned long long)want);
		}
		return 0;
	}
	for (uint32_t k = 0; k < b->m->ngroups; k++) {
		const struct fast_group *gr = &b->m->groups[k];
		uint64_t M = fast_group_bytes(b->m, k), lo = 0, hi = 0;
		int rc;
		if (b->kind == FAST_TRAFFIC_DISPATCH && b->dest_bit[k] >= 0 && gr->src != r && M > 0) {
			rc = fast_holds_cover(&b->held, fast_prog_hkey(b, k, 0), 0, M, NULL, NULL, &lo, &hi);
			if (rc < 0)
				return FAST_ENOMEM;
			if (rc > 0)
				return fast_err_set(b->err, FAST_ECHECK,
						    "plan: GPU %u never receives bytes [%llu, %llu) of group %u (from GPU %u)",
						    r, (unsigned long long)lo, (unsigned long long)hi, k,
						    gr->src);
		}
		if (b->kind == FAST_TRAFFIC_COMBINE && gr->src == r) {
			uint64_t want = M * gr->ndst, got = b->summed[k] + (b->dest_bit[k] >= 0 ? M : 0);
			if (got != want)
				return fast_err_set(b->err, FAST_ECHECK,
						    "plan: GPU %u sums %llu bytes x contributions of group %u, which needs %llu (%u contributions of %llu bytes)",
						    r, (unsigned long long)got, k, (unsigned long long)want,
						    gr->ndst, (unsigned long long)M);
		}
	}
	return 0;
}

/* The token-plan state: this rank's place in every group, the values. */
static int tokens_init(struct builder *b)
{
	const struct fast_matrix *m = b->m;

	b->dest_bit = fast_calloc(m->ngroups ? m->ngroups : 1, sizeof *b->dest_bit);
	b->summed = fast_calloc(m->ngroups ? m->ngroups : 1, sizeof *b->summed);
	if (!b->dest_bit || !b->summed)
		return FAST_ENOMEM;
	for (uint32_t k = 0; k < m->ngroups; k++) {
		const struct fast_group *gr = &m->groups[k];
		b->dest_bit[k] = -1;
		if (gr->src >= b->ng || gr->ndst > FAST_GROUP_MAX_DESTS ||
		    (uint64_t)gr->dst0 + gr->ndst > m->ndsts)
			return fast_err_set(b->err, FAST_EINPUT, "traffic: group %u out of range", k);
		for (uint32_t i = 0; i < gr->ndst; i++)
			if (m->dsts[gr->dst0 + i] == b->rank)
				b->dest_bit[k] = (int32_t)i;
	}
	return b->kind == FAST_TRAFFIC_COMBINE ? fast_prog_values_init(b) : 0;
}

static int build(const struct fast_plan_view *v, const uint64_t *D, const struct fast_matrix *m,
		 uint32_t rank, uint32_t passes, uint32_t in_flight, struct fast_prog **out,
		 struct fast_err *err)
{
	const struct fast_plan *p = v->x;
	struct builder b;
	struct node *nodes = NULL;
	size_t nnodes = 0, *wave0 = NULL;
	uint32_t levels = 0;
	struct fast_prog *g;
	int rc;

	if (!p->gpus || !p->servers)
		return fast_err_set(err, FAST_EINPUT, "plan: no GPUs");
	if (rank >= p->servers * p->gpus)
		return fast_err_set(err, FAST_EINPUT, "executor: rank %u outside the plan's %u GPUs",
				    rank, p->servers * p->gpus);
	if (passes == 0)
		passes = 1;
	if (in_flight == 0)
		in_flight = 1;
	if (in_flight > FAST_IN_FLIGHT_MAX)
		return fast_err_set(err, FAST_EUSAGE, "executor: %u waves in flight (at most %u)",
				    in_flight, FAST_IN_FLIGHT_MAX);
	memset(&b, 0, sizeof b);
	if (err)
		err->msg[0] = '\0';
	b.p = p;
	b.D = D;
	b.m = m;
	b.kind = m ? m->kind : FAST_TRAFFIC_BYTES;
	b.rank = rank;
	b.ng = p->servers * p->gpus;
	b.gpus = p->gpus;
	b.err = err;
	b.in_flight = in_flight;
	b.prev_wave = NO_WAVE;
	g = calloc(1, sizeof *g);
	b.final_bytes = fast_calloc(b.ng, sizeof *b.final_bytes);
	b.final_wave = fast_calloc(b.ng, sizeof *b.final_wave);
	b.final_cls = fast_calloc(b.ng, sizeof *b.final_cls);
	b.peer_cls = fast_calloc(b.ng, sizeof *b.peer_cls);
	if (b.final_wave)
		for (uint32_t k = 0; k < b.ng; k++)
			b.final_wave[k] = NO_WAVE;
	if (!g || !b.final_bytes || !b.final_wave || !b.final_cls || !b.peer_cls) {
		free(g);
		builder_free(&b);
		return fast_err_set(err, FAST_ENOMEM, "executor: out of memory");
	}
	g->rank = rank;
	g->ng = b.ng;
	g->passes = passes;
	g->in_flight = in_flight;
	g->plan_hash = fast_plan_hash(p);
	g->kind = b.kind;
	g->nmsgs = m ? m->ngroups : b.ng;
	b.prog = g;
	if (m && (rc = tokens_init(&b)) < 0)
		goto fail;
	if ((rc = order_nodes(p, passes, &nodes, &nnodes, &wave0, &levels, err)) < 0)
		goto fail;
	g->plan_waves = levels;
	for (uint32_t j = 0; j < passes; j++) {
		for (uint32_t l = 0; l < levels; l++) {
			b.wave = (uint64_t)j * levels + l;
			rc = fast_prog_run_wave(&b, nodes + wave0[l], wave0[l + 1] - wave0[l], passes, j);
			if (rc < 0)
				goto fail;
		}
	}
	if (place_blocks(&b) < 0 || start_copies(&b) < 0)
		goto nomem;
	if ((rc = check_received(&b)) < 0)
		goto fail;
	for (size_t i = 0; i < g->ncopies; i++)
		g->sums += g->copies[i].op != FAST_POP_COPY;
	g->staging = b.arena.high;
	free(nodes);
	free(wave0);
	builder_free(&b);
	*out = g;
	return 0;
nomem:
	rc = fast_err_set(err, FAST_ENOMEM, "executor: out of memory building the program");
fail:
	if (rc == FAST_ENOMEM && err && !err->msg[0])
		fast_err_set(err, FAST_ENOMEM, "executor: out of memory building the program");
	free(nodes);
	free(wave0);
	builder_free(&b);
	fast_prog_free(g);
	return rc;
}

int fast_prog_build(const struct fast_plan_view *v, const uint64_t *D, uint32_t rank,
		    uint32_t passes, uint32_t in_flight, struct fast_prog **out,
		    struct fast_err *err)
{
	if (v->x->kind != FAST_TRAFFIC_BYTES)
		return fast_err_set(err, FAST_EINPUT,
				    "plan: a %s plan needs the token groups it serves, not a byte matrix",
				    fast_traffic_kind_name(v->x->kind));
	return build(v, D, NULL, rank, passes, in_flight, out, err);
}

int fast_prog_build_tokens(const struct fast_plan_view *v, const struct fast_matrix *m,
			   uint32_t rank, uint32_t passes, uint32_t in_flight,
			   struct fast_prog **out, struct fast_err *err)
{
	if (m->kind == FAST_TRAFFIC_BYTES || v->x->kind != m->kind)
		return fast_err_set(err, FAST_EINPUT, "plan: a %s plan for %s traffic",
				    fast_traffic_kind_name(v->x->kind), fast_traffic_kind_name(m->kind));
	return build(v, NULL, m, rank, passes, in_flight, out, err);
}

int fast_token_role(const struct fast_matrix *m, uint32_t g, uint32_t r, bool *sends,
		    bool *recvs)
{
	const struct fast_group *gr = &m->groups[g];
	int bit = -1;

	for (uint32_t i = 0; i < gr->ndst; i++)
		if (m->dsts[gr->dst0 + i] == r)
			bit = (int)i;
	*sends = m->kind == FAST_TRAFFIC_DISPATCH ? gr->src == r : bit >= 0;
	*recvs = m->kind == FAST_TRAFFIC_DISPATCH ? bit >= 0 : gr->src == r;
	return bit;
}

uint8_t fast_token_send_byte(const struct fast_matrix *m, uint32_t g, int i, uint64_t o)
{
	if (m->kind == FAST_TRAFFIC_DISPATCH)
		return fast_token_row_byte(g, o / m->token_bytes, o % m->token_bytes);
	return fast_token_contrib_byte(g, (uint32_t)i, o);
}

uint8_t fast_token_expect_byte(const struct fast_matrix *m, uint32_t g, uint64_t o)
{
	uint8_t sum = 0;

	if (m->kind == FAST_TRAFFIC_DISPATCH)
		return fast_token_row_byte(g, o / m->token_bytes, o % m->token_bytes);
	for (uint32_t i = 0; i < m->groups[g].ndst; i++)
		sum = (uint8_t)(sum + fast_token_contrib_byte(g, i, o));
	return sum;
}

void fast_prog_add_bytes(void *dst, const void *src, uint64_t n)
{
	const uint64_t hi = UINT64_C(0x8080808080808080);
	unsigned char *d = dst;
	const unsigned char *s = src;
	uint64_t i = 0;

	/* eight bytes at a time: the low seven bits of each byte add without
	 * reaching the next byte, the top bit is their carry xor both tops */
	for (; i + 8 <= n; i += 8) {
		uint64_t a, b, r;
		memcpy(&a, d + i, 8);
		memcpy(&b, s + i, 8);
		r = ((a & ~hi) + (b & ~hi)) ^ ((a ^ b) & hi);
		memcpy(d + i, &r, 8);
	}
	for (; i < n; i++)
		d[i] = (unsigned char)(d[i] + s[i]);
}

void fast_prog_info(const struct fast_prog *g, struct fast_prog_info *o)
{
	memset(o, 0, sizeof *o);
	o->waves = (uint32_t)g->nwaves;
	o->passes = g->passes;
	o->in_flight = g->in_flight;
	o->staging_bytes = g->staging;
	o->sends = g->nsends;
	o->recvs = g->nrecvs;
	o->copies = g->ncopies;
	o->sums = g->sums;
	o->plan_hash = g->plan_hash;
	for (size_t i = 0; i < g->nsends; i++)
		o->bytes_sent += g->sends[i].len;
	for (size_t i = 0; i < g->nrecvs; i++)
		o->bytes_recv += g->recvs[i].len;
}
