/*
 * algo.h - schedule compilers: FAST (lib/fast.c) and the baselines
 * (lib/baselines.c), all producing the plan IR of plan.h.
 *
 * Every compiler is deterministic: the same topology, matrix and options
 * give a byte-identical plan on every machine.  A compiler writes *out only
 * on success; the caller frees it with fast_plan_free().
 */
#ifndef FAST_ALGO_H
#define FAST_ALGO_H

#include "common.h"
#include "plan.h"
#include "topo.h"

enum fast_stages_mode {
	FAST_STAGES_AUTO = 0,  /* alpha-aware: fewer, larger stages */
	FAST_STAGES_EXACT = 1, /* exact Birkhoff decomposition */
};

enum fast_stage_order {
	FAST_ORDER_DECOMPOSITION = 0, /* the order the decomposition found them */
	FAST_ORDER_LARGEST_FIRST = 1,
	FAST_ORDER_SMALLEST_FIRST = 2,
};

enum fast_balance_mode {
	FAST_BALANCE_UPFRONT = 0, /* all balancing before stage 1 (the paper) */
	FAST_BALANCE_JIT = 1,     /* each lane balanced just before its first stage */
};

struct fast_algo_opts {
	enum fast_stages_mode stages;
	enum fast_stage_order order;
	enum fast_balance_mode balance;
	uint32_t peers;       /* nccl/pxn: peers in flight per round (default 8) */
	uint64_t chunk_bytes; /* pxn/hier: forwarding chunk (0 = algorithm default) */
};
void fast_algo_opts_default(struct fast_algo_opts *o);

/* Names accepted by fast_compile: "fast", "fanout", "nccl", "pxn",
 * "spreadout", "hier".  NULL-terminated. */
const char *const *fast_algo_names(void);
bool fast_algo_known(const char *name);

/* Compile a plan for matrix D (ng x ng, ng = N * G of topo) with algorithm
 * `algo`.  FAST_EUSAGE for an unknown algorithm, FAST_ENOMEM on exhaustion. */
int fast_compile(const char *algo, const struct fast_topo *topo, const uint64_t *D,
		 const struct fast_algo_opts *opts, struct fast_plan *out,
		 struct fast_err *err);

/* FAST itself (lib/fast.c). */
int fast_compile_fast(const struct fast_topo *topo, const uint64_t *D,
		      const struct fast_algo_opts *opts, struct fast_plan *out,
		      struct fast_err *err);

/* Baselines (lib/baselines.c). */
int fast_compile_fanout(const struct fast_topo *topo, const uint64_t *D,
			const struct fast_algo_opts *opts, struct fast_plan *out,
			struct fast_err *err);
int fast_compile_nccl(const struct fast_topo *topo, const uint64_t *D,
		      const struct fast_algo_opts *opts, struct fast_plan *out,
		      struct fast_err *err);
int fast_compile_pxn(const struct fast_topo *topo, const uint64_t *D,
		     const struct fast_algo_opts *opts, struct fast_plan *out,
		     struct fast_err *err);
int fast_compile_spreadout(const struct fast_topo *topo, const uint64_t *D,
			   const struct fast_algo_opts *opts, struct fast_plan *out,
			   struct fast_err *err);
int fast_compile_hier(const struct fast_topo *topo, const uint64_t *D,
		      const struct fast_algo_opts *opts, struct fast_plan *out,
		      struct fast_err *err);

#endif
