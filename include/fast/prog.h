/*
 * prog.h - one rank's program (prog.c builds it from a plan's view,
 * exec.c runs it) and the plan cache that keeps programs (cache.c).  Pure
 * data and computation: no MPI, no device, so the unit tests build it with
 * the plain compiler.
 */
#ifndef FAST_EXEC_PROG_H
#define FAST_EXEC_PROG_H

#include "common.h"
#include "plan.h"

struct fast_prog;

/* --- programs ------------------------------------------------------------- */

/* Build the program of a plan for one rank (pure: no MPI) from its open
 * view (plan.h: validated, explicit form v->x).  passes >= 1 slices every
 * message.  in_flight is how many of its waves the program may have
 * posted at once (FAST_IN_FLIGHT_MAX at most; 0 reads as 1): with 2, a
 * staging block is reused only once the wave after its last reader has
 * begun, so that the next wave's messages may be posted while a wave runs
 * ("Waves in flight" below).  FAST_ECHECK when the plan makes a rank send
 * bytes it does not hold, or leaves it without exactly its column of D. */
int fast_prog_build(const struct fast_plan_view *v, const uint64_t *D, uint32_t rank,
		    uint32_t passes, uint32_t in_flight, struct fast_prog **out,
		    struct fast_err *err);
/*
 * The same for a token plan (plan kind DISPATCH or COMBINE, the kind of m,
 * whose groups its pieces index).  Buffers are per group (a location's msg
 * is a group g, the displacements given to fast_exec_run have m->ngroups
 * entries, each group's message is fast_group_bytes(m, g) bytes):
 *  - DISPATCH: the send buffer holds the rows of every group whose src is
 *    the rank; the receive buffer a copy of them for every group with the
 *    rank in Dest(g) (src included: copied locally).
 *  - COMBINE: the send buffer holds the rank's contribution to every group
 *    with the rank in Dest(g); the receive buffer, for every group whose
 *    src is the rank, the sum of all of Dest(g)'s contributions.
 * Sums are byte-wise wrapping adds (FAST_POP_ADD): a plan cuts a value at
 * any byte offset (chunks, rail budgets, passes), and only a byte-wise sum
 * of byte ranges is the range of the sum whatever the cuts.  A REDUCE
 * transfer sums its inputs' common range (clipped to the pass; a REDUCE
 * step has one chunk, validation says so).  Besides the FAST_ECHECK of
 * fast_prog_build: a dispatch destination that does not end with all of
 * its groups, a combine src whose arriving contributions do not add up to
 * each contribution once (bytes x contributions; the checker proves the
 * partition), a plan of another kind than m (FAST_EINPUT).
 */
int fast_prog_build_tokens(const struct fast_plan_view *v, const struct fast_matrix *m,
			   uint32_t rank, uint32_t passes, uint32_t in_flight,
			   struct fast_prog **out, struct fast_err *err);
void fast_prog_free(struct fast_prog *p);

struct fast_prog_info {
	uint32_t waves, passes, in_flight;
	uint64_t staging_bytes;   /* arena size */
	uint64_t sends, recvs, copies;
	uint64_t sums;            /* ADD and ZERO copies among them */
	uint64_t bytes_sent, bytes_recv;
	uint64_t plan_hash;
};
void fast_prog_info(const struct fast_prog *p, struct fast_prog_info *out);

/* Where bytes are on a rank: the send buffer (message to `msg`), the
 * receive buffer (message from `msg`) or the staging arena. */
enum { LOC_SEND = 0, LOC_RECV = 1, LOC_STAGE = 2 };
struct fast_loc {
	uint32_t kind, msg;
	uint64_t off;
};

/* What a copy does: dst = src, dst += src byte-wise with wrap (combine
 * sums), dst = 0 (src unused, equal to dst). */
enum { FAST_POP_COPY = 0, FAST_POP_ADD = 1, FAST_POP_ZERO = 2 };
struct fast_pcopy {
	struct fast_loc dst, src;
	uint64_t len;
	uint32_t op; /* FAST_POP_* */
};

/* Verification patterns of token traffic (fast run, tests/unit/test_exec_tokens.c).
 * A dispatch row carries its token's identity: byte k of token t of group
 * g is a function of (g, t, k), never 0xff (what a receive buffer is
 * filled with before a check).  Byte o of contribution i (the i-th GPU of
 * Dest(g)) of a combine group is a function of (g, i, o) in 1..255, never
 * 0, so that a contribution missing from the sum, or counted twice,
 * changes it; the expected result is the byte-wise wrapping sum over i. */
static inline uint64_t fast_token_mix(uint64_t x)
{
	x ^= x >> 31;
	x *= UINT64_C(0xBF58476D1CE4E5B9);
	x ^= x >> 29;
	x *= UINT64_C(0x94D049BB133111EB);
	return x ^ (x >> 32);
}
static inline uint8_t fast_token_row_byte(uint32_t g, uint64_t token, uint64_t k)
{
	return (uint8_t)(fast_token_mix(((uint64_t)g << 40) ^ (token * UINT64_C(0x9E3779B97F4A7C15)) ^
					(k + 1)) % 255);
}
static inline uint8_t fast_token_contrib_byte(uint32_t g, uint32_t i, uint64_t o)
{
	return (uint8_t)(1 + fast_token_mix(((uint64_t)g << 40) ^ ((uint64_t)(i + 1) << 32) ^
					    (o * UINT64_C(0x9E3779B97F4A7C15))) % 255);
}

/* Rank r's part in group g of token matrix m, as fast_prog_build_tokens
 * lays out its buffers: *sends / *recvs whether its send / receive buffer
 * has a slot for g (fast_group_bytes(m, g) bytes).  Returns r's index in
 * Dest(g), -1 when it is none of them. */
int fast_token_role(const struct fast_matrix *m, uint32_t g, uint32_t r, bool *sends,
		    bool *recvs);
/* Byte o of what the rank with index i in Dest(g) (dispatch: src; i
 * ignored) puts in its send buffer for group g, and what every receiving
 * rank must find at byte o of g's slot after the collective. */
uint8_t fast_token_send_byte(const struct fast_matrix *m, uint32_t g, int i, uint64_t o);
uint8_t fast_token_expect_byte(const struct fast_matrix *m, uint32_t g, uint64_t o);

/* FAST_POP_ADD on host memory: dst[i] += src[i] for n bytes, each byte
 * wrapping on its own (no carry between bytes); dst == src doubles. */
void fast_prog_add_bytes(void *dst, const void *src, uint64_t n);

struct fast_pmsg {
	uint32_t peer;
	uint32_t out; /* 1: peer on another server */
	struct fast_loc at;
	uint64_t len;
};

/*
 * Waves in flight.  A wave's pre-copies and sends are ordered by what they
 * read of the rank's previous wave (the wave before it in prog->waves):
 * FAST_FLIGHT_FREE (plan.h) nothing (they may run while it is in flight), _UP its
 * scale-up arrivals (they wait for those), _ALL the rest of its arrivals
 * and its post-copies (they wait for all of it).  pre_at[c] and send_at[c]
 * are where the ops of class c + 1 start, counted from pre0 and send0:
 * class 0 is [0, at[0]), class 1 [at[0], at[1]), class 2 [at[1], n).  The
 * sends to one peer keep the plan's order (a send's class is at least
 * that of the sends to the same peer before it), so both ends see every
 * pair's messages in one order however a wave's classes are posted.
 * Receives need nothing of the wave before: a program built for in_flight
 * 2 never places a block where one of the previous wave still lives.
 */

struct fast_pwave {
	uint32_t pre0, npre;   /* in prog->copies */
	uint32_t send0, nsend; /* in prog->sends */
	uint32_t recv0, nrecv; /* in prog->recvs */
	uint32_t post0, npost; /* in prog->copies */
	uint32_t pre_at[2], send_at[2]; /* class boundaries (above) */
};

struct fast_prog {
	uint32_t rank, ng, passes;
	uint32_t in_flight;    /* waves it may keep posted (1 or 2; fast_prog_build) */
	uint64_t staging;      /* arena bytes */
	uint64_t plan_hash;
	uint32_t plan_waves;   /* waves of the plan (per pass), before dropping empty ones */
	enum fast_traffic_kind kind; /* BYTES: buffers per peer; else per group */
	uint32_t nmsgs;        /* displacements fast_exec_run reads: ng or groups */
	uint64_t sums;         /* ADD and ZERO copies (a backend must support them) */
	struct fast_pwave *waves; size_t nwaves, cap_waves;
	struct fast_pcopy *copies; size_t ncopies, cap_copies;
	struct fast_pmsg *sends; size_t nsends, cap_sends;
	struct fast_pmsg *recvs; size_t nrecvs, cap_recvs;
};

/* --- plan cache ------------------------------------------------------------
 * A small LRU map from a 64-bit key (hash of what the program depends on) to
 * a program it owns.  Not thread-safe. */
struct fast_cache_entry {
	uint64_t key;
	uint64_t used; /* LRU clock */
	struct fast_prog *prog;
};
struct fast_cache {
	struct fast_cache_entry *e;
	uint32_t n, cap;
	uint64_t clock, hits, misses;
};
int fast_cache_init(struct fast_cache *c, uint32_t cap, struct fast_err *err);
/* The program under key, or NULL (counts a hit or a miss). */
struct fast_prog *fast_cache_get(struct fast_cache *c, uint64_t key);
/* Insert prog (ownership passes to the cache, also on failure); evicts the
 * least recently used entry when full. */
void fast_cache_put(struct fast_cache *c, uint64_t key, struct fast_prog *prog);
void fast_cache_free(struct fast_cache *c);

/* Matrix identity for cache keys: hash of ng and the ng*ng entries. */
uint64_t fast_matrix_hash(uint64_t h, const uint64_t *D, uint32_t ng);
/* Token matrix identity: kind, token bytes and every group (src, Dest,
 * tokens). */
uint64_t fast_groups_hash(uint64_t h, const struct fast_matrix *m);

#endif
