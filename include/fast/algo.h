/*
 * algo.h - schedule compilers: FAST (lib/compile/compile_fast.c) and the baselines
 * (lib/compile/baselines.c), all producing the plan IR of plan.h, and the table
 * that describes them and their options (lib/compile/algo.c).
 *
 * Names: fast_compile compiles by the algorithm's
 * name (the table's dispatch); fast_sched_NAME is the one schedule's own
 * compiler (fast_sched_fast is the FAST schedule's).
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
	FAST_STAGES_PACKED = 2, /* the N - 1 shifts at once on disjoint rails */
	FAST_STAGES_GROUPED = 3, /* the same as auto (its name while rail
				  * steps of several permutations were opt-in);
				  * the plan's options say which was asked */
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

/* What a token-aware schedule (fast, hier) does with token traffic
 * (traffic.h, kind DISPATCH or COMBINE); byte traffic ignores it. */
enum fast_dedup_mode {
	FAST_DEDUP_SERVER = 0, /* a token crosses to a server once (a token plan) */
	FAST_DEDUP_GPU = 1,    /* the per-GPU byte matrix, a copy per GPU (a BYTES plan) */
};

/* The chunk cap: no compiler cuts a message (hier on token traffic: a
 * stream) into more than FAST_ALGO_MAX_CHUNKS chunks (rounds), whatever
 * --chunk asks for, so that a plan's size is a function of the traffic's
 * shape (GPUs, messages, token groups and their destinations), never of
 * its byte or token counts (lib/compile/baselines.c: pxn's and hier's chunks,
 * token hier's rounds). */
#define FAST_ALGO_MAX_CHUNKS UINT64_C(1024)

/* An evaluator of plans: the time plan p (compiled for matrix m on topo)
 * takes, into *time_s; 0, or a negative FAST_E* code with err set.  ctx is
 * the evaluator's own (options, say), read only: a call changes nothing it
 * can see, so that the same inputs give the same time in every process.
 * lib/ defines no evaluator (it runs no simulator): include/fast/sim.h provides the
 * simulator's (fast_sim_evaluator), which the commands and the executor
 * pass to `--algo auto` (lib/compile/algo_auto.h: on token traffic auto chooses by it). */
struct fast_plan_eval {
	const char *name; /* what the times are, in a plan's options ("sim") */
	int (*time)(const struct fast_plan_eval *e, const struct fast_topo *topo,
		    const struct fast_matrix *m, const struct fast_plan *p, double *time_s,
		    struct fast_err *err);
	const void *ctx;
};

struct fast_algo_opts {
	enum fast_stages_mode stages;
	enum fast_stage_order order;
	enum fast_balance_mode balance;
	uint32_t peers;       /* nccl/pxn: peers in flight per round (default 8) */
	uint64_t chunk_bytes; /* pxn/hier: forwarding chunk (0 = algorithm default) */
	enum fast_dedup_mode dedup; /* fast/hier on token traffic */
	/* auto on token traffic: times every candidate's plan (NULL, the
	 * default: the closed-form prediction of lib/compile/algo_auto_model.c).  Not an option
	 * of the table: no spelling, never printed; the caller's, not owned. */
	const struct fast_plan_eval *eval;
};
void fast_algo_opts_default(struct fast_algo_opts *o);

/* --- the algorithm table ----------------------------------------------------
 * One descriptor per compiler and one per option, in the style of
 * nccl-tests' struct testColl: the command line (--algo, --stages, ...),
 * sweep specs, results rows and plan files all take names, values and
 * their spelling from here, so one value has one spelling in every output.
 * Aliases (the order "largest" for "largest-first") are accepted on input
 * and never printed. */

/* The options of struct fast_algo_opts, one bit each. */
enum fast_algo_opt_bit {
	FAST_OPT_STAGES = 1u << 0,
	FAST_OPT_ORDER = 1u << 1,
	FAST_OPT_BALANCE = 1u << 2,
	FAST_OPT_PEERS = 1u << 3,
	FAST_OPT_CHUNK = 1u << 4,
	FAST_OPT_DEDUP = 1u << 5,
};

struct fast_algo_option {
	const char *name;           /* "order": --order, a sweep spec's "order", "order=" in options */
	unsigned bit;               /* FAST_OPT_* */
	const char *const *values;  /* named values in enum order, NULL-terminated; NULL: a number */
	const char *const *aliases; /* pairs (alias, value name), NULL-terminated; may be NULL */
	uint64_t min, max;          /* a number's range; max 0: a size ("512K", "1MiB") */
	const char *metavar;        /* "auto|exact", "K", "BYTES" (help text) */
	const char *help;           /* what it does; lines joined by '\n', none at the end */
	uint64_t (*get)(const struct fast_algo_opts *o);
	void (*set)(struct fast_algo_opts *o, uint64_t v);
};

typedef int (*fast_sched_fn)(const struct fast_topo *topo, const uint64_t *D,
			     const struct fast_algo_opts *opts, struct fast_plan *out,
			     struct fast_err *err);
/* A token-aware compiler: a plan of m's kind over m's groups (plan.h,
 * "Token plans"); m->kind is DISPATCH or COMBINE. */
typedef int (*fast_sched_tokens_fn)(const struct fast_topo *topo, const struct fast_matrix *m,
				    const struct fast_algo_opts *opts, struct fast_plan *out,
				    struct fast_err *err);

/* `--algo auto`'s model of a schedule (lib/compile/algo_auto.h), beside the
 * schedule in its descriptor: auto predicts T = T_sim + S per candidate,
 *     T_sim = k_lat lat + k_vol vol
 * in closed form (lat, vol: predict's, from features of a pass over the
 * matrix; the factors fitted against `fast sim`) and
 *     S = synth32_s (n / 32)^synth_exp
 * for n GPUs (fitted on compiles), times 0.1 + 0.9 x the share of the
 * n (n - G) cross-server messages present where synth_by_msgs.  The
 * features are auto's own (struct fast_auto_feat, opaque here:
 * lib/compile/algo_auto_internal.h), so the hooks are lib/compile's
 * (lib/compile/algo_auto_model.c).  An entry without predict (auto itself)
 * is no candidate. */
struct fast_algo;
struct fast_auto_feat;
struct fast_algo_model {
	double k_lat, k_vol;
	double synth32_s, synth_exp;
	bool synth_by_msgs;
	/* T_sim and S of schedule a on features x with options o into *sim_s
	 * and *synth_s; true when T_sim is only a floor (a feature it reads
	 * is one until refine), false when exact.  Pure: every rank agrees. */
	bool (*predict)(const struct fast_algo *a, const struct fast_auto_feat *x,
			const struct fast_algo_opts *o, double *sim_s, double *synth_s);
	/* The pass over the matrix that makes predict exact (NULL: it always
	 * is); 0, or -1 when out of memory (the floor stays).  Auto runs
	 * them cheapest first: refine_rank 0 first. */
	int (*refine)(struct fast_auto_feat *x);
	unsigned refine_rank;
};

/* Everything about one schedule: one row of fast_algos[] (adding a
 * schedule is adding a row). */
struct fast_algo {
	const char *name;             /* --algo NAME, the plan's "algo" */
	fast_sched_fn compile;
	unsigned options;             /* FAST_OPT_* that apply to it */
	uint64_t default_chunk_bytes; /* forwarding chunk without --chunk (0: none) */
	const char *summary;          /* one line */
	fast_sched_tokens_fn compile_tokens; /* NULL: token traffic runs on its bytes */
	struct fast_algo_model model; /* what auto predicts for it */
};

/* The tables, terminated by an entry whose name is NULL. */
extern const struct fast_algo fast_algos[];
extern const struct fast_algo_option fast_algo_options[];

/* The entry named name, or NULL (also for NULL). */
const struct fast_algo *fast_algo_find(const char *name);
const struct fast_algo_option *fast_algo_option_find(const char *name);

/* A name fast_compile accepts (an entry of fast_algos). */
bool fast_algo_known(const char *name);
/* The algorithm of the table, or of the n_extra names in extra a caller
 * also knows, closest to name (fast_suggest), or NULL. */
const char *fast_algo_suggest(const char *name, const char *const *extra, size_t n_extra);
/* "fast, fanout, nccl, pxn, spreadout, hier" into buf (cut to fit). */
const char *fast_algo_list(char *buf, size_t len);

/* Set option opt of o from text (a value name, an alias or a number in
 * range).  0, or FAST_EUSAGE with the reason in err ("unknown value 'x'
 * (known: auto, exact)"); o is changed only on success. */
int fast_algo_option_parse(const struct fast_algo_option *opt, const char *text,
			   struct fast_algo_opts *o, struct fast_err *err);
/* o's value of opt, spelled as every output spells it, into buf. */
const char *fast_algo_option_print(const struct fast_algo_option *opt,
				   const struct fast_algo_opts *o, char *buf, size_t len);
/* "-" when o is the default for every option in mask, else the differing
 * ones as "name=value" joined by sep ("stages=exact/order=smallest-first"). */
void fast_algo_opts_name(const struct fast_algo_opts *o, unsigned mask, const char *sep,
			 char *buf, size_t len);

/* Compile a plan for matrix m (m->ng = N * G of topo; a plain byte array:
 * fast_matrix_of) with algorithm `algo` (opts NULL: defaults).  Byte traffic, and
 * token traffic for an algorithm without a token compiler or with
 * dedup=gpu: compile m->bytes (the per-GPU byte matrix: one copy per
 * destination GPU), a plan of kind BYTES whose options end in
 * "dedup=gpu" when m is token traffic, so that the plan says which
 * traffic it serves.  Token traffic with dedup=server and an algorithm
 * that has one: its token compiler, a plan of m's kind whose options end
 * in "dedup=server".  Label and matrix index are the caller's to set.
 * FAST_EUSAGE for an unknown algorithm, FAST_ENOMEM on exhaustion. */
int fast_compile(const char *algo, const struct fast_topo *topo, const struct fast_matrix *m,
		 const struct fast_algo_opts *opts, struct fast_plan *out, struct fast_err *err);

/* FAST itself (lib/compile/compile_fast.c).  On a fabric whose GPUs do not
 * all have the same share of a NIC (a slow or failed NIC: topo.h, "NICs
 * and ports") it balances by NIC rate and its stages are explicit steps
 * (lib/compile/compile_fast_nics.c); FAST_EINPUT where no pair of live NICs
 * joins two servers (possible only when K < G does not divide G). */
int fast_sched_fast(const struct fast_topo *topo, const uint64_t *D,
		    const struct fast_algo_opts *opts, struct fast_plan *out,
		    struct fast_err *err);

/* FAST into *plan, reusing the arrays *plan holds (a plan an earlier call
 * built, or zeroed memory), with the builder's arrays in *scratch (the
 * caller's, kept between calls; NULL: fresh ones, freed before return):
 * repeated compiles then allocate and fault in no new memory (at 1024 GPUs
 * the faults were about 40% of a compile's CPU time; fast_sched_fast
 * gives each plan fresh arrays, trimmed).  On success *plan is the plan;
 * on failure it is empty but keeps its arrays.  Either way the caller
 * frees it with fast_plan_free, and scratch with fast_scratch_free.  One
 * plan and one scratch per thread.  Errors as fast_sched_fast. */
int fast_sched_fast_into(const struct fast_topo *topo, const uint64_t *D,
			 const struct fast_algo_opts *opts, struct fast_plan *plan,
			 struct fast_scratch *scratch, struct fast_err *err);

/* FAST without packed stages (stages=packed compiles as auto, auto never
 * packs), as the token compiler builds on it (compile_tokens.c says why;
 * it takes the stages without their redistribution where NICs differ).
 * Errors as fast_sched_fast. */
int fast_sched_fast_staged(const struct fast_topo *topo, const uint64_t *D,
			   const struct fast_algo_opts *opts, struct fast_plan *out,
			   struct fast_err *err);

/* FAST on token traffic (lib/compile/compile_tokens.c): per-server dedup, FAST's
 * balancing and stages on the deduplicated server traffic, replication
 * (dispatch) or reduction before crossing (combine) over scale-up. */
int fast_sched_fast_tokens(const struct fast_topo *topo, const struct fast_matrix *m,
			   const struct fast_algo_opts *opts, struct fast_plan *out,
			   struct fast_err *err);

/* Baselines (lib/compile/baselines.c). */
int fast_sched_fanout(const struct fast_topo *topo, const uint64_t *D,
		      const struct fast_algo_opts *opts, struct fast_plan *out,
		      struct fast_err *err);
int fast_sched_nccl(const struct fast_topo *topo, const uint64_t *D,
		    const struct fast_algo_opts *opts, struct fast_plan *out,
		    struct fast_err *err);
int fast_sched_pxn(const struct fast_topo *topo, const uint64_t *D,
		   const struct fast_algo_opts *opts, struct fast_plan *out,
		   struct fast_err *err);
int fast_sched_spreadout(const struct fast_topo *topo, const uint64_t *D,
			 const struct fast_algo_opts *opts, struct fast_plan *out,
			 struct fast_err *err);
int fast_sched_hier(const struct fast_topo *topo, const uint64_t *D,
		    const struct fast_algo_opts *opts, struct fast_plan *out,
		    struct fast_err *err);
/* hier on token traffic: DeepEP's normal kernels with their dedup (a token
 * crosses rail-aligned once per server, then NVLink copies; combine
 * reduces inside the expert server before crossing). */
int fast_sched_hier_tokens(const struct fast_topo *topo, const struct fast_matrix *m,
			   const struct fast_algo_opts *opts, struct fast_plan *out,
			   struct fast_err *err);

#endif
