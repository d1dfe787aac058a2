/*
 * prog.h - one rank's program (prog.c builds it from a plan's view,
 * exec.c runs it) and the plan cache that keeps programs (cache.c).  Pure
 * data and computation: no MPI, no device, so the unit tests build it with
 * the plain compiler.
 */
#ifndef FAST_EXEC_PROG_H
#define FAST_EXEC_PROG_H

#include "../lib/common.h"
#include "../lib/plan.h"

struct fast_prog;

/* --- programs ------------------------------------------------------------- */

/* Build the program of a plan for one rank (pure: no MPI) from its open
 * view (plan.h: validated, explicit form v->x).  passes >= 1 slices every
 * message.  FAST_ECHECK when the plan makes a rank send bytes it does not
 * hold. */
int fast_prog_build(const struct fast_plan_view *v, const uint64_t *D, uint32_t rank,
		    uint32_t passes, struct fast_prog **out, struct fast_err *err);
void fast_prog_free(struct fast_prog *p);

struct fast_prog_info {
	uint32_t waves, passes;
	uint64_t staging_bytes;   /* arena size */
	uint64_t sends, recvs, copies;
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

struct fast_pcopy {
	struct fast_loc dst, src;
	uint64_t len;
};

struct fast_pmsg {
	uint32_t peer;
	uint32_t out; /* 1: peer on another server */
	struct fast_loc at;
	uint64_t len;
};

struct fast_pwave {
	uint32_t pre0, npre;   /* in prog->copies */
	uint32_t send0, nsend; /* in prog->sends */
	uint32_t recv0, nrecv; /* in prog->recvs */
	uint32_t post0, npost; /* in prog->copies */
};

struct fast_prog {
	uint32_t rank, ng, passes;
	uint64_t staging;      /* arena bytes */
	uint64_t plan_hash;
	uint32_t plan_waves;   /* waves of the plan (per pass), before dropping empty ones */
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

#endif
