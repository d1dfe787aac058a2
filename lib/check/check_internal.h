/*
 * check_internal.h - what the checker's files share: the state of one
 * proof, the arrival records and final deliveries, what a piece is per
 * kind of plan, and the stages check.c (the walk, stage 2) runs from
 * check_local.c (stage 1) and check_deliver.c (stage 3).  Not part of the
 * library's interface (check.h is).
 */
#ifndef FAST_CHECK_INTERNAL_H
#define FAST_CHECK_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fast/check.h"
#include "lib/base/holds.h"

/* --- arrival records: the holdings store, keyed by (GPU, message) --------- */

/* What the checker knows of an arrival record besides its message range
 * (the store's [lo, hi)), indexed by the record's id. */
struct rec {
	uint64_t pos, len;   /* stream byte of lo in its transfer; the transfer's bytes */
	uint32_t step;
	uint32_t chunks;     /* of its step; 1 when no step depends on it pipelined */
};

/* --- final deliveries ----------------------------------------------------- */

struct final {
	uint64_t msg;  /* src * ng + dst; a combine plan's: the group */
	uint64_t lo, hi;
	uint32_t step, xfer, piece;
	uint32_t tag;  /* combine: index of its mask in checker.vmask */
};

/* --- the checker state ---------------------------------------------------- */

struct checker {
	const struct fast_plan *e; /* explicit form */
	const struct fast_plan *p; /* as given (for lanes and rail steps) */
	const uint64_t *D;         /* byte plans */
	enum fast_traffic_kind kind;
	const struct fast_matrix *m; /* token plans: the groups */
	uint64_t *vmask;           /* combine: masks of values, the plan's then the sums' */
	size_t nvmask, cap_vmask;
	uint32_t ng, G;
	uint32_t *order;  /* a topological order of e's steps (fast_plan_topo_order) */
	bool pipelined; /* any pipelined dep: keep the second bitset */
	size_t words;   /* per bitset */
	uint64_t **any, **full;   /* per step, NULL when not live */
	uint64_t **pool;          /* free bitsets */
	size_t npool;
	uint32_t *refs;           /* dependents not yet processed */
	bool *pipe_in, *pipe_out; /* has a pipelined dep / is one's pipelined dep */
	struct fast_holds arr;    /* arrivals not back at their origin */
	struct rec *recs;         /* per arrival record id */
	size_t cap_recs;
	struct final *finals;
	size_t nfinals, cap_finals;
	const struct fast_topo *topo;
	bool *down;     /* per GPU: its scale-out port is down; NULL when none is */
	struct fast_err *err;
};

/* check.c */
int fast_check_oom(struct checker *c);
uint64_t fast_check_msg_size(const struct checker *c, const struct fast_piece *pc);
int fast_check_dest_pos(const struct fast_matrix *m, uint32_t g, uint32_t d);
bool fast_check_own(const struct checker *c, uint32_t x, const struct fast_piece *pc);
uint64_t fast_check_hold_key(const struct checker *c, uint32_t g, const struct fast_piece *pc);
void fast_check_size_name(char *buf, size_t len, const struct checker *c,
			  const struct fast_piece *pc);
void fast_check_piece_name(char *buf, size_t len, const struct checker *c,
			   const struct fast_piece *pc);
void fast_check_where(char *buf, size_t len, const struct checker *c, uint32_t t, uint32_t j,
		      uint32_t k);

/* 1. local properties (check_local.c) */
/* c->down from c->topo: NULL unless some NIC is down; FAST_ENOMEM. */
int fast_check_down_ports(struct checker *c);
int fast_check_lanes(struct checker *c);
int fast_check_transfers(struct checker *c);
/* FAST plans: tier-out steps that may run concurrently share no sending
 * and no receiving NIC (check_local.c). */
int fast_check_nic_order(struct checker *c);

/* 3. exactly-once delivery (check_deliver.c) */
int fast_check_deliveries(struct checker *c);
int fast_check_dispatch_deliveries(struct checker *c);
int fast_check_combine_deliveries(struct checker *c);

#endif
