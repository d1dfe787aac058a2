/*
 * baselines.c - the schedules FAST is compared with (docs/DESIGN.md,
 * "Baselines"), compiled into the same plan IR so that they are checked,
 * simulated, exported and executed by the same code as FAST.
 *
 *  fanout     every GPU sends every message at once over its own NIC (the
 *             paper's RCCL baseline): one `out` step with every cross-server
 *             message and one `up` step with every intra-server message,
 *             concurrent (no dependencies).
 *  nccl       NCCL's grouped send/recv p2p schedule (the scheduler of
 *             ncclGroupEnd for p2p operations): in round i (1..n-1) rank r
 *             sends to (r+i) mod n and receives from (r-i) mod n.  Each
 *             rank has `peers` slots (NCCL's 8 peers in flight); round i
 *             runs on slot i mod peers, and the send of round i starts when
 *             the sender's send and the receiver's receive of round
 *             i-peers are done (see "per-slot progression" below): every
 *             rank progresses through its own peer schedule, with no
 *             barrier across ranks.  One step per message (its tier: up
 *             inside a server, out across), or per server and round above
 *             UNIT_RANKS_MAX ranks.
 *  pxn        nccl's rounds and slots, with NCCL's PXN: a message to a GPU
 *             on another server whose rail differs from the sender's first
 *             hops over scale-up to the sender-server GPU on the destination's
 *             rail (local index of dst), which sends it rail-aligned over its
 *             NIC.  Messages already on the right rail go directly.  A
 *             relayed message is an `up` step (the hop) and an `out` step
 *             with a pipelined dependency on it; the slot waits are on the
 *             first hop, the slot is freed by the last.
 *  spreadout  NG-1 rounds; in round d GPU i sends to GPU (i+d) mod NG; each
 *             round is an `up` and an `out` step, both waiting for all of the
 *             previous round.
 *  hier       DeepEP's normal kernels: GPU A_i sends everything it has for
 *             server B, rail-aligned, to B_i (one `out` step); B_i forwards
 *             over scale-up to the final GPU (an `up` step with a pipelined
 *             dependency on it); intra-server messages go directly over
 *             scale-up in a concurrent `up` step.
 *             On token traffic (fast_sched_hier_tokens) with their
 *             dedup: GPU A_i sends a token needing server B once, to B_i,
 *             which copies it to its destination GPUs on B; in combine the
 *             contributions on B are summed on B_i (gathered, then a
 *             REDUCE) before B_i sends the result back to A_i.  The
 *             streams (tokens_internal.h) go in rounds of `chunk` bytes
 *             (DeepEP's chunked RDMA sends): round r of every stream
 *             crosses in one `out` step, its forwards (gather and reduce
 *             in combine) in `up` steps that wait for that round's out
 *             step (before it in combine), so that round r + 1 crosses
 *             while round r is forwarded.  At most MAX_CHUNKS rounds
 *             (round_bytes): the plan has O(MAX_CHUNKS x streams +
 *             stream entries) pieces before the forwards, whatever the
 *             token counts.
 *
 * Chunks (plan.h): a forwarding hop and the hop that feeds it carry the
 * same chunk count k, and every relayed message is its own transfer in
 * both steps (one piece, the whole message), so chunk c of the forward
 * covers exactly the bytes chunk c of the first hop delivered: the
 * pipelined dependency is exact.  k = ceil(largest relayed message /
 * chunk_bytes), at most MAX_CHUNKS.  Defaults: pxn 128 KiB, NCCL's
 * NCCL_P2P_NET_CHUNKSIZE (the pipelined hop is the network send; NVLink
 * uses 512 KiB chunks, but the network's granularity is what the relay
 * waits for); hier 512 KiB, an approximation of DeepEP's token-chunked
 * RDMA sends (its chunks are token counts, not bytes).
 *
 * A NIC that is down (topo.h: a port at 0 B/s): each plan, once built,
 * goes through fast_relay_plan (relay.h), which sends a cut-off GPU's
 * cross-server bytes through a proxy on its server over scale-up, as
 * NCCL's PXN does (docs/algorithms.md, "A NIC that is down", says what
 * each real library does).  With no NIC down the plan is as built.
 *
 * Every message is sent as one piece (src, dst, 0, D[src][dst]); zero-byte
 * messages are not sent; the diagonal is a local copy and appears in no
 * step (check.h: a GPU holds its own messages from the start).  Steps that
 * would be empty are not created; a later step then depends on the last
 * steps that exist.
 */
#include <stdlib.h>
#include <string.h>

#include "fast/algo.h"
#include "lib/compile/relay.h"
#include "lib/compile/tokens_internal.h"

#define DEFAULT_PEERS 8u
#define MAX_CHUNKS FAST_ALGO_MAX_CHUNKS /* algo.h */

/* A step created lazily on its first transfer, so that empty steps never
 * appear; its dependencies follow it right away (plan.h's contiguity). */
struct sbuild {
	struct fast_plan *p;
	enum fast_tier_id tier;
	const uint32_t *deps; /* full dependencies */
	int ndeps;
	int pipe_on;          /* >= 0: a pipelined dependency on this step */
	uint32_t chunks;
	int id;               /* -1 until created */
};

static void sb_init(struct sbuild *b, struct fast_plan *p, enum fast_tier_id tier,
		    const uint32_t *deps, int ndeps, int pipe_on, uint32_t chunks)
{
	b->p = p;
	b->tier = tier;
	b->deps = deps;
	b->ndeps = ndeps;
	b->pipe_on = pipe_on;
	b->chunks = chunks;
	b->id = -1;
}

/* Send message D[src][dst] (len bytes, whole) from GPU `from` to `to`. */
static int sb_move(struct sbuild *b, uint32_t from, uint32_t to, uint32_t src, uint32_t dst,
		   uint64_t len, struct fast_err *err)
{
	int rc;

	if (b->id < 0) {
		int id = fast_plan_add_step(b->p, FAST_STEP_EXPLICIT, b->tier, err);
		if (id < 0)
			return id;
		b->p->steps[id].chunks = b->chunks;
		for (int i = 0; i < b->ndeps; i++)
			if ((rc = fast_plan_add_dep(b->p, (uint32_t)id, b->deps[i], false, err)) < 0)
				return rc;
		if (b->pipe_on >= 0 &&
		    (rc = fast_plan_add_dep(b->p, (uint32_t)id, (uint32_t)b->pipe_on, true, err)) < 0)
			return rc;
		b->id = id;
	}
	if ((rc = fast_plan_add_xfer(b->p, from, to, err)) < 0)
		return rc;
	return fast_plan_add_piece(b->p, src, dst, 0, len, err);
}

/* The previous round's steps: what the next round waits for. */
struct prev {
	uint32_t ids[4];
	int n;
};

/* After a round built with steps sb[0..n): if any exist they become the
 * new previous round. */
static void prev_update(struct prev *pv, const struct sbuild *sb, int n)
{
	int k = 0;
	for (int i = 0; i < n; i++)
		if (sb[i].id >= 0)
			k++;
	if (k == 0)
		return;
	pv->n = 0;
	for (int i = 0; i < n; i++)
		if (sb[i].id >= 0)
			pv->ids[pv->n++] = (uint32_t)sb[i].id;
}

/* The chunk cap (algo.h), for both forms of hier and for pxn.
 * fast_relay_chunks_for (relay.h): the count of a step's pipelined
 * chunks (plan.h: the simulator and the executor split each transfer
 * evenly).  round_bytes:
 * the byte size of token hier's rounds (a round is a step pair, its
 * pieces cut at multiples of it): `chunk`, or the smallest size that
 * keeps the largest stream within MAX_CHUNKS rounds where `chunk` would
 * not. */
static uint64_t round_bytes(uint64_t largest, uint64_t chunk)
{
	uint64_t least = largest / MAX_CHUNKS + (largest % MAX_CHUNKS != 0);
	return chunk > least ? chunk : least;
}

static int begin(const struct fast_topo *topo, const uint64_t *D, const char *algo,
		 struct fast_plan *p, struct fast_err *err)
{
	if (!D || topo->servers == 0 || topo->gpus == 0)
		return fast_err_set(err, FAST_EUSAGE, "%s: empty topology or no matrix", algo);
	fast_plan_init(p, topo->servers, topo->gpus, algo);
	return 0;
}

/* The plan built into p (rc: how that went) into *out, relayed around
 * the NICs that are down (relay.h): every baseline's last step. */
static int finish(const struct fast_topo *topo, struct fast_plan *p, struct fast_plan *out, int rc,
		  struct fast_err *err)
{
	if (rc == 0)
		rc = fast_relay_plan(topo, p, err);
	if (rc < 0) {
		fast_plan_free(p);
		return rc;
	}
	*out = *p;
	return 0;
}

static uint32_t peers_of(const struct fast_algo_opts *o)
{
	return o && o->peers ? o->peers : DEFAULT_PEERS;
}

/* --chunk, or the algorithm's default chunk (algo.c's table) */
static uint64_t chunk_of(const struct fast_algo_opts *o, const char *algo)
{
	return o && o->chunk_bytes ? o->chunk_bytes : fast_algo_find(algo)->default_chunk_bytes;
}

int fast_sched_fanout(const struct fast_topo *topo, const uint64_t *D,
		      const struct fast_algo_opts *opts, struct fast_plan *out,
		      struct fast_err *err)
{
	uint32_t G = topo->gpus, ng = topo->servers * topo->gpus;
	struct fast_plan p;
	struct sbuild sb;
	int rc;

	(void)opts;
	if ((rc = begin(topo, D, "fanout", &p, err)) < 0)
		return rc;
	for (int tier = FAST_TIER_OUT; rc == 0 && tier >= FAST_TIER_UP; tier--) {
		sb_init(&sb, &p, (enum fast_tier_id)tier, NULL, 0, -1, 1);
		for (uint32_t s = 0; rc == 0 && s < ng; s++)
			for (uint32_t d = 0; rc == 0 && d < ng; d++) {
				uint64_t len = D[(size_t)s * ng + d];
				bool cross = s / G != d / G;
				if (s != d && len && cross == (tier == FAST_TIER_OUT))
					rc = sb_move(&sb, s, d, s, d, len, err);
			}
	}
	return finish(topo, &p, out, rc, err);
}

/* One spreadout round i as an up and an out step, both waiting for every
 * step of the previous round. */
static int spreadout_round(struct fast_plan *p, const uint64_t *D, uint32_t ng, uint32_t G,
			   uint32_t i, struct prev *pv, struct fast_err *err)
{
	struct sbuild sb[2];
	int rc = 0;

	sb_init(&sb[0], p, FAST_TIER_UP, pv->ids, pv->n, -1, 1);
	sb_init(&sb[1], p, FAST_TIER_OUT, pv->ids, pv->n, -1, 1);
	for (int t = 0; rc == 0 && t < 2; t++)
		for (uint32_t r = 0; rc == 0 && r < ng; r++) {
			uint32_t d = (r + i) % ng;
			uint64_t len = D[(size_t)r * ng + d];
			if (len && (r / G != d / G) == (t == 1))
				rc = sb_move(&sb[t], r, d, r, d, len, err);
		}
	if (rc == 0)
		prev_update(pv, sb, 2);
	return rc;
}

/* --- nccl and pxn: per-slot progression ------------------------------------
 *
 * Round i (1..n-1): rank r sends to (r+i) mod n and receives from (r-i)
 * mod n.  A rank has P slots (NCCL's 8 peers in flight); round i runs on
 * slot i mod P, so the slot's rounds i, i+P, i+2P, ... run in order.  The
 * send r -> d of round i starts once r's send of round i-P is done (the
 * sender's slot is free) and d's receive of round i-P is done (the
 * receiver's slot is free: d has posted the receive of round i); no other
 * synchronisation, in particular no barrier across ranks.  A zero-byte
 * message occupies no slot (the wait falls through to the slot's last
 * non-empty round).
 *
 * Steps: one per (unit, round, kind), a unit being `unit` consecutive
 * ranks (1: one rank; G: one server, see UNIT_RANKS_MAX), holding the
 * unit's messages of that round of that kind; its dependencies are the
 * union of its messages' slot waits. */

enum { KIND_UP = 0, KIND_OUT = 1, KIND_RELAY = 2, KINDS = 3 };

struct slots {
	uint32_t ng, G, P, unit;
	bool pxn;          /* off-rail cross messages go through KIND_RELAY */
	int *send, *recv;  /* [ng * P]: step that completed the rank's last send
			    * (receive) on the slot; -1 none */
	uint32_t *deps[KINDS];
	int ndeps[KINDS];  /* each at most 2 * unit */
	int own[KINDS];
};

static int slots_init(struct slots *sl, uint32_t ng, uint32_t G, uint32_t P, uint32_t unit,
		      bool pxn, struct fast_err *err)
{
	bool ok;

	memset(sl, 0, sizeof *sl);
	sl->ng = ng;
	sl->G = G;
	sl->P = P;
	sl->unit = unit;
	sl->pxn = pxn;
	sl->send = fast_calloc((size_t)ng * P, sizeof *sl->send);
	sl->recv = fast_calloc((size_t)ng * P, sizeof *sl->recv);
	ok = sl->send && sl->recv;
	for (int k = 0; k < KINDS; k++)
		ok = (sl->deps[k] = fast_calloc(2 * (size_t)unit, sizeof *sl->deps[k])) && ok;
	if (!ok) {
		free(sl->send);
		free(sl->recv);
		for (int k = 0; k < KINDS; k++)
			free(sl->deps[k]);
		return fast_err_set(err, FAST_ENOMEM, "%s: out of memory for %u ranks",
				    pxn ? "pxn" : "nccl", ng);
	}
	for (size_t x = 0; x < (size_t)ng * P; x++)
		sl->send[x] = sl->recv[x] = -1;
	return 0;
}

static void slots_free(struct slots *sl)
{
	free(sl->send);
	free(sl->recv);
	for (int k = 0; k < KINDS; k++)
		free(sl->deps[k]);
}

/* The kind of step that delivers message s -> d (s != d). */
static int deliver_kind(const struct slots *sl, uint32_t s, uint32_t d)
{
	if (s / sl->G == d / sl->G)
		return KIND_UP;
	return sl->pxn && s % sl->G != d % sl->G ? KIND_RELAY : KIND_OUT;
}

static void deps_add(struct slots *sl, int k, int id)
{
	if (id < 0)
		return;
	for (int j = 0; j < sl->ndeps[k]; j++)
		if (sl->deps[k][j] == (uint32_t)id)
			return;
	sl->deps[k][sl->ndeps[k]++] = (uint32_t)id;
}

/* The steps of unit u in round i: the slot waits of its messages, then an
 * up step (pxn: relay hops first, then intra-server messages), an out step
 * (nccl: every cross message; pxn: the rail-aligned ones) and, for pxn, an
 * out step of the relayed messages pipelined on the up step; then the
 * slots record the steps that complete each message. */
static int unit_round(struct fast_plan *p, const uint64_t *D, struct slots *sl, uint32_t u,
		      uint32_t i, uint64_t chunk, struct fast_err *err)
{
	uint32_t ng = sl->ng, G = sl->G, slot = i % sl->P;
	uint32_t r0 = u * sl->unit, r1 = r0 + sl->unit;
	struct sbuild sb[KINDS];
	uint64_t largest = 0;
	uint32_t k;
	int rc = 0;

	for (int t = 0; t < KINDS; t++)
		sl->ndeps[t] = 0;
	for (uint32_t r = r0; r < r1; r++) {
		uint32_t d = (r + i) % ng;
		uint64_t len = D[(size_t)r * ng + d];
		int kind = deliver_kind(sl, r, d), on = kind == KIND_RELAY ? KIND_UP : kind;
		if (!len)
			continue;
		deps_add(sl, on, sl->send[(size_t)r * sl->P + slot]);
		deps_add(sl, on, sl->recv[(size_t)d * sl->P + slot]);
		if (kind == KIND_RELAY && len > largest)
			largest = len;
	}
	k = fast_relay_chunks_for(largest, chunk);

	sb_init(&sb[KIND_UP], p, FAST_TIER_UP, sl->deps[KIND_UP], sl->ndeps[KIND_UP], -1, k);
	for (int pass = 0; rc == 0 && pass < 2; pass++)
		for (uint32_t r = r0; rc == 0 && r < r1; r++) {
			uint32_t d = (r + i) % ng;
			uint64_t len = D[(size_t)r * ng + d];
			int kind = deliver_kind(sl, r, d);
			if (len && pass == 0 && kind == KIND_RELAY)
				rc = sb_move(&sb[KIND_UP], r, (r / G) * G + d % G, r, d, len, err);
			else if (len && pass == 1 && kind == KIND_UP)
				rc = sb_move(&sb[KIND_UP], r, d, r, d, len, err);
		}
	sb_init(&sb[KIND_OUT], p, FAST_TIER_OUT, sl->deps[KIND_OUT], sl->ndeps[KIND_OUT], -1, 1);
	for (uint32_t r = r0; rc == 0 && r < r1; r++) {
		uint32_t d = (r + i) % ng;
		uint64_t len = D[(size_t)r * ng + d];
		if (len && deliver_kind(sl, r, d) == KIND_OUT)
			rc = sb_move(&sb[KIND_OUT], r, d, r, d, len, err);
	}
	/* the relayed messages, in the up step's order: transfer t here
	 * forwards exactly transfer t of the up step */
	sb_init(&sb[KIND_RELAY], p, FAST_TIER_OUT, NULL, 0, sb[KIND_UP].id, k);
	for (uint32_t r = r0; rc == 0 && r < r1; r++) {
		uint32_t d = (r + i) % ng;
		uint64_t len = D[(size_t)r * ng + d];
		if (len && deliver_kind(sl, r, d) == KIND_RELAY)
			rc = sb_move(&sb[KIND_RELAY], (r / G) * G + d % G, d, r, d, len, err);
	}
	for (uint32_t r = r0; rc == 0 && r < r1; r++) {
		uint32_t d = (r + i) % ng;
		int id;
		if (!D[(size_t)r * ng + d])
			continue;
		id = sb[deliver_kind(sl, r, d)].id;
		sl->send[(size_t)r * sl->P + slot] = id;
		sl->recv[(size_t)d * sl->P + slot] = id;
	}
	return rc;
}

/* Ranks per step: one rank up to UNIT_RANKS_MAX ranks in all, one server
 * above (a plan of one step per message would be n(n-1) steps). */
#define UNIT_RANKS_MAX 256u

static int compile_slots(const struct fast_topo *topo, const uint64_t *D, uint32_t P,
			 uint64_t chunk, bool pxn, struct fast_plan *p, struct fast_err *err)
{
	uint32_t G = topo->gpus, ng = topo->servers * topo->gpus;
	uint32_t unit = ng <= UNIT_RANKS_MAX ? 1 : G;
	struct slots sl;
	int rc;

	if (P > ng) /* rounds are 1..ng-1: more slots than that stay unused */
		P = ng;
	if ((rc = slots_init(&sl, ng, G, P, unit, pxn, err)) < 0)
		return rc;
	for (uint32_t i = 1; rc == 0 && i < ng; i++)
		for (uint32_t u = 0; rc == 0 && u < ng / unit; u++)
			rc = unit_round(p, D, &sl, u, i, chunk, err);
	slots_free(&sl);
	return rc;
}

int fast_sched_nccl(const struct fast_topo *topo, const uint64_t *D,
		    const struct fast_algo_opts *opts, struct fast_plan *out,
		    struct fast_err *err)
{
	uint32_t P = peers_of(opts);
	struct fast_plan p;
	int rc;

	if ((rc = begin(topo, D, "nccl", &p, err)) < 0)
		return rc;
	snprintf(p.options, sizeof(p.options), "peers=%u", P);
	rc = compile_slots(topo, D, P, UINT64_MAX, false, &p, err);
	return finish(topo, &p, out, rc, err);
}

int fast_sched_pxn(const struct fast_topo *topo, const uint64_t *D,
		   const struct fast_algo_opts *opts, struct fast_plan *out,
		   struct fast_err *err)
{
	uint32_t P = peers_of(opts);
	uint64_t chunk = chunk_of(opts, "pxn");
	struct fast_plan p;
	int rc;

	if ((rc = begin(topo, D, "pxn", &p, err)) < 0)
		return rc;
	snprintf(p.options, sizeof(p.options), "peers=%u chunk=%llu", P, (unsigned long long)chunk);
	rc = compile_slots(topo, D, P, chunk, true, &p, err);
	return finish(topo, &p, out, rc, err);
}

int fast_sched_spreadout(const struct fast_topo *topo, const uint64_t *D,
			 const struct fast_algo_opts *opts, struct fast_plan *out,
			 struct fast_err *err)
{
	uint32_t G = topo->gpus, ng = topo->servers * topo->gpus;
	struct prev pv = { { 0 }, 0 };
	struct fast_plan p;
	int rc;

	(void)opts;
	if ((rc = begin(topo, D, "spreadout", &p, err)) < 0)
		return rc;
	for (uint32_t d = 1; rc == 0 && d < ng; d++)
		rc = spreadout_round(&p, D, ng, G, d, &pv, err);
	return finish(topo, &p, out, rc, err);
}

int fast_sched_hier(const struct fast_topo *topo, const uint64_t *D,
		    const struct fast_algo_opts *opts, struct fast_plan *out,
		    struct fast_err *err)
{
	uint32_t G = topo->gpus, ng = topo->servers * topo->gpus;
	uint64_t chunk = chunk_of(opts, "hier"), largest = 0;
	struct sbuild sb[3];
	struct fast_plan p;
	uint32_t k;
	int rc;

	if ((rc = begin(topo, D, "hier", &p, err)) < 0)
		return rc;
	snprintf(p.options, sizeof(p.options), "chunk=%llu", (unsigned long long)chunk);
	for (uint32_t s = 0; s < ng; s++)
		for (uint32_t d = 0; d < ng; d++)
			if (s / G != d / G && s % G != d % G && D[(size_t)s * ng + d] > largest)
				largest = D[(size_t)s * ng + d];
	k = fast_relay_chunks_for(largest, chunk);

	/* rail-aligned scale-out: A_i -> B_i, one transfer per message; the
	 * messages to forward first, in the forwarding step's order */
	sb_init(&sb[0], &p, FAST_TIER_OUT, NULL, 0, -1, k);
	for (int pass = 0; rc == 0 && pass < 2; pass++)
		for (uint32_t s = 0; rc == 0 && s < ng; s++)
			for (uint32_t d = 0; rc == 0 && d < ng; d++) {
				uint64_t len = D[(size_t)s * ng + d];
				if (len && s / G != d / G && (s % G == d % G) == (pass == 1))
					rc = sb_move(&sb[0], s, (d / G) * G + s % G, s, d, len, err);
			}
	/* forwarding B_i -> B_j, pipelined on the rail step: transfer t
	 * forwards exactly transfer t of the rail step */
	sb_init(&sb[1], &p, FAST_TIER_UP, NULL, 0, sb[0].id, k);
	for (uint32_t s = 0; rc == 0 && s < ng; s++)
		for (uint32_t d = 0; rc == 0 && d < ng; d++) {
			uint64_t len = D[(size_t)s * ng + d];
			if (len && s / G != d / G && s % G != d % G)
				rc = sb_move(&sb[1], (d / G) * G + s % G, d, s, d, len, err);
		}
	/* intra-server traffic directly, concurrently */
	sb_init(&sb[2], &p, FAST_TIER_UP, NULL, 0, -1, 1);
	for (uint32_t s = 0; rc == 0 && s < ng; s++)
		for (uint32_t d = 0; rc == 0 && d < ng; d++) {
			uint64_t len = D[(size_t)s * ng + d];
			if (len && s != d && s / G == d / G)
				rc = sb_move(&sb[2], s, d, s, d, len, err);
		}
	return finish(topo, &p, out, rc, err);
}

/* The items of round r of hier on token traffic: stream bytes
 * [r * chunk, (r + 1) * chunk) of every stream (s, B), from s to B_i. */
static int hier_round(const struct tok_streams *ts, uint64_t r, uint64_t chunk,
		      struct tok_build *tb, bool *any)
{
	uint32_t G = ts->G, N = ts->N;
	int rc = 0;

	tb->nitems = 0;
	*any = false;
	for (uint32_t s = 0; s < ts->ng && rc == 0; s++)
		for (uint32_t b = 0; b < N && rc == 0; b++) {
			uint32_t c = tok_out_col(ts, s, b);
			uint64_t len = ts->D[(size_t)s * ts->ng + c], off = r * chunk;
			if (b == s / G || off >= len)
				continue;
			*any = true;
			rc = tok_streams_cut(ts, s, c, off, len - off < chunk ? len - off : chunk, c, tb);
		}
	return rc;
}

/* The longest stream (s, B), B != server(s): what sets hier's rounds. */
static uint64_t largest_stream(const struct tok_streams *ts)
{
	uint64_t big = 0;

	for (uint32_t s = 0; s < ts->ng; s++)
		for (uint32_t b = 0; b < ts->N; b++) {
			uint64_t len = ts->D[(size_t)s * ts->ng + tok_out_col(ts, s, b)];
			if (b != s / ts->G && len > big)
				big = len;
		}
	return big;
}

int fast_sched_hier_tokens(const struct fast_topo *topo, const struct fast_matrix *m,
			   const struct fast_algo_opts *opts, struct fast_plan *out,
			   struct fast_err *err)
{
	uint64_t chunk = chunk_of(opts, "hier");
	bool combine = m->kind == FAST_TRAFFIC_COMBINE, any = true;
	int local, prev_out = -1, prev_up = -1, rc;
	struct tok_streams ts;
	struct tok_build tb;
	struct fast_plan p;

	if ((rc = begin(topo, m->bytes, "hier", &p, err)) < 0)
		return rc;
	if ((rc = tok_streams_build(&ts, topo, m, err)) < 0) {
		fast_plan_free(&p);
		return rc;
	}
	if (chunk == 0)
		chunk = 1;
	p.kind = m->kind;
	/* options name the chunk asked for, as byte hier's do; the rounds
	 * use the capped one */
	snprintf(p.options, sizeof(p.options), "chunk=%llu", (unsigned long long)chunk);
	chunk = round_bytes(largest_stream(&ts), chunk);
	tok_build_init(&tb, &p, m, topo->servers, topo->gpus, err);
	rc = tok_local_step(&tb, -1, &local);
	for (uint64_t r = 0; rc == 0 && any; r++) {
		int gid, rid, oid, fid, deps[3];
		if ((rc = hier_round(&ts, r, chunk, &tb, &any)) < 0 || !any)
			break;
		if (combine && (rc = tok_gather_reduce(&tb, prev_up, &gid, &rid)) < 0)
			break;
		for (size_t t = 0; t < tb.nitems && rc == 0; t++) {
			const struct tok_item *it = &tb.items[t];
			int k = 0;
			if (combine &&
			    (k = tok_mask(&tb, tok_server_mask(m, it->g, it->to / topo->gpus,
							       topo->gpus))) < 0)
				rc = k;
			else
				rc = combine ? tok_push(&tb, it->to, it->from, 0, it->g, (uint32_t)k,
							it->off, it->len)
					     : tok_push(&tb, it->from, it->to, 0, it->g, 0, it->off,
							it->len);
		}
		deps[0] = prev_out;
		deps[1] = combine ? gid : -1;
		deps[2] = combine ? rid : -1;
		if (rc < 0 ||
		    (rc = tok_emit(&tb, FAST_STEP_EXPLICIT, FAST_TIER_OUT, deps, 3, &oid)) < 0)
			break;
		prev_out = oid;
		if (combine) {
			prev_up = gid >= 0 ? gid : prev_up;
			continue;
		}
		/* dispatch: B_i copies the round to the other destinations on B */
		for (size_t t = 0; t < tb.nitems && rc == 0; t++) {
			const struct tok_item *it = &tb.items[t];
			const struct fast_group *gr = &m->groups[it->g];
			for (uint32_t i = 0; i < gr->ndst && rc == 0; i++) {
				uint32_t d = m->dsts[gr->dst0 + i];
				if (d / topo->gpus == it->to / topo->gpus && d != it->to)
					rc = tok_push(&tb, it->to, d, 0, it->g, 0, it->off, it->len);
			}
		}
		deps[0] = oid;
		deps[1] = prev_up;
		if (rc < 0 || (rc = tok_emit(&tb, FAST_STEP_EXPLICIT, FAST_TIER_UP, deps, 2, &fid)) < 0)
			break;
		prev_up = fid >= 0 ? fid : prev_up;
	}
	tok_build_free(&tb);
	tok_streams_free(&ts);
	return finish(topo, &p, out, rc, err);
}
