/*
 * api.h - libfast.so, the library for foreign callers (Python's `import
 * fast`, ctypes, any FFI): topologies, traffic, compile, check, bound,
 * simulate, plans as the command line's files, and the per-rank programs
 * `fast run` executes, behind opaque handles.  This header is the whole
 * interface: it includes nothing of the tool's other headers, and the
 * shared library exports only the fast_api_* symbols (soname libfast.so.0;
 * the static libfast.a and the other headers are the C interface).
 *
 * Conventions:
 *  - Every fallible function returns 0 or a negative code (FAST_API_E*,
 *    the same values and exit statuses as the command line: -1 bad input
 *    (exit 3), -2 check failed (1), -3 usage (2), -4 out of memory, -5 i/o,
 *    -8 runtime (4), -6 limit exceeded (3), -7 solver (4)) and takes a
 *    caller-owned struct fast_api_error last (may be NULL), written only
 *    on failure with the message the command line prints after "fast:
 *    CATEGORY: ".  No global state: calls on different handles may run on
 *    different threads at once; a handle is read-only after creation and
 *    may be shared between threads (fast_api_*_free excepted).
 *  - Ownership: a function that returns a handle or a string through an
 *    out-parameter gives it to the caller, who releases it with the
 *    matching fast_api_*_free (strings: fast_api_string_free); every free
 *    accepts NULL.  Arrays passed in are copied; arrays passed out are the
 *    caller's, of the size the function states.  Out-parameters are
 *    written only on success.
 *  - Options are (name, value) strings: compile options as the command
 *    line's (--stages exact is {"stages", "exact"}; the algorithm table
 *    lists them), simulator options "congestion" (on|off), "sync"
 *    (step|rank), "in_flight" (1|2: waves in flight by rank, as
 *    --in-flight), "epsilon" (a number), "steps" (on|off), "check" (on|off:
 *    prove given plans first, as `fast sim --plan --traffic` does).
 */
#ifndef FAST_API_H
#define FAST_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FAST_API_VERSION 1 /* bumped on an incompatible change (with the soname) */

enum {
	FAST_API_EINPUT = -1,
	FAST_API_ECHECK = -2,
	FAST_API_EUSAGE = -3,
	FAST_API_ENOMEM = -4,
	FAST_API_EIO = -5,
	FAST_API_ELIMIT = -6,
	FAST_API_ESOLVER = -7,
	FAST_API_ERUNTIME = -8,
};

struct fast_api_error {
	int code;       /* a FAST_API_E* value */
	char msg[512];  /* NUL-terminated */
};

struct fast_api_topo;    /* a fabric */
struct fast_api_traffic; /* one or more P x P byte matrices (or token traffic) */
struct fast_api_plans;   /* a plan set: one plan per matrix, as a plan file */
struct fast_api_prog;    /* one rank's program of one plan */

/* "0.1.0 (api 1)"; a constant. */
const char *fast_api_version(void);
/* The exit status the command line gives for code (0..4). */
int fast_api_exit_status(int code);
/* The algorithms fast_api_compile takes, comma-separated ("fast, fanout,
 * ..."), into buf of len bytes. */
void fast_api_algo_list(char *buf, size_t len);
/* Release a string this library returned. */
void fast_api_string_free(char *s);

/* --- topology ------------------------------------------------------------ */
/* A preset ("h200", ...); servers/gpus 0 keep the preset's. */
int fast_api_topo_preset(const char *name, uint32_t servers, uint32_t gpus,
			 struct fast_api_topo **out, struct fast_api_error *err);
/* A topology JSON file, or its text (name: used in messages). */
int fast_api_topo_load(const char *path, struct fast_api_topo **out, struct fast_api_error *err);
int fast_api_topo_parse(const char *text, const char *name, struct fast_api_topo **out,
			struct fast_api_error *err);
/* Shape and name (name: into buf of len bytes). */
void fast_api_topo_shape(const struct fast_api_topo *t, uint32_t *servers, uint32_t *gpus);
void fast_api_topo_name(const struct fast_api_topo *t, char *buf, size_t len);
/* The fabric's identity (fast_topo_hash: shape, model numbers, NICs; not
 * the name): equal for topologies that plan and simulate alike. */
uint64_t fast_api_topo_hash(const struct fast_api_topo *t);
/* NICs as they are (`--nics K`, `--nic S:K=F`): nics K per server (0
 * keeps the topology's), then n overrides, server[i]'s NIC nic[i] at
 * fraction[i] of its rate (0 = down; one replaces an earlier one of the
 * same NIC).  All or nothing: on any error (a server or NIC out of range,
 * a fraction outside [0, 1], a server with every NIC down) t is unchanged. */
int fast_api_topo_set_nics(struct fast_api_topo *t, uint32_t nics, const uint32_t *server,
			   const uint32_t *nic, const double *fraction, size_t n,
			   struct fast_api_error *err);
/* The normalised JSON (what `fast topo show --json` prints) into *json. */
int fast_api_topo_json(const struct fast_api_topo *t, char **json, struct fast_api_error *err);
void fast_api_topo_free(struct fast_api_topo *t);

/* --- traffic ------------------------------------------------------------- */
/* count matrices of p x p bytes, row-major, one after the other
 * (bytes[k * p * p + s * p + d]: GPU s sends to GPU d in matrix k), copied;
 * labels "m0", "m1", ...  The u64 form; the i64 form refuses negative
 * entries.  Both refuse entries above 2^53 (what a JSON file carries
 * exactly) and sums over 64 bits, as the loaders do. */
int fast_api_traffic_new_u64(uint32_t p, uint32_t count, const uint64_t *bytes,
			     struct fast_api_traffic **out, struct fast_api_error *err);
int fast_api_traffic_new_i64(uint32_t p, uint32_t count, const int64_t *bytes,
			     struct fast_api_traffic **out, struct fast_api_error *err);
/* A traffic file (JSON or nccl-tests matrix), or its text. */
int fast_api_traffic_load(const char *path, struct fast_api_traffic **out,
			  struct fast_api_error *err);
int fast_api_traffic_parse(const char *text, const char *name, struct fast_api_traffic **out,
			   struct fast_api_error *err);
void fast_api_traffic_shape(const struct fast_api_traffic *t, uint32_t *p, uint32_t *count);
/* Matrix k's byte matrix (token traffic: its per-GPU bytes) into
 * bytes[p * p], its label into label[len], its kind (0 bytes, 1 token
 * dispatch, 2 token combine) into *kind; any may be NULL.
 * FAST_API_EUSAGE for k out of range. */
int fast_api_traffic_matrix(const struct fast_api_traffic *t, uint32_t k, uint64_t *bytes,
			    char *label, size_t len, uint32_t *kind, struct fast_api_error *err);
/* The traffic JSON file's text (dense rows). */
int fast_api_traffic_json(const struct fast_api_traffic *t, char **json,
			  struct fast_api_error *err);
void fast_api_traffic_free(struct fast_api_traffic *t);

/* --- compile, plans ------------------------------------------------------ */
/* One plan per matrix of tr with algorithm algo ("fast", "auto", ...) and
 * the n options (names[i], values[i]): byte-identical to `fast plan
 * --algo ALGO --OPT VALUE` on the same inputs.  `auto` chooses by the
 * simulator, as the commands do. */
int fast_api_compile(const struct fast_api_topo *topo, const struct fast_api_traffic *tr,
		     const char *algo, const char *const *names, const char *const *values,
		     size_t n, struct fast_api_plans **out, struct fast_api_error *err);
/* A plan file, or its text; and the text of the file `fast plan -o`
 * writes for ps. */
int fast_api_plans_load(const char *path, struct fast_api_plans **out, struct fast_api_error *err);
int fast_api_plans_parse(const char *text, const char *name, struct fast_api_plans **out,
			 struct fast_api_error *err);
int fast_api_plans_json(const struct fast_api_plans *ps, char **json, struct fast_api_error *err);
uint32_t fast_api_plans_count(const struct fast_api_plans *ps);
/* Plan i's algorithm, label (into buffers of len bytes) and the matrix it
 * serves.  FAST_API_EUSAGE for i out of range. */
int fast_api_plan_info(const struct fast_api_plans *ps, uint32_t i, char *algo, char *label,
		       size_t len, uint32_t *matrix, struct fast_api_error *err);
void fast_api_plans_free(struct fast_api_plans *ps);

/* --- check, bound, simulate ---------------------------------------------- */
/* Prove every plan correct for the matrix it serves, as `fast check`:
 * 0, FAST_API_ECHECK (the first incorrect plan, "plan I (LABEL, matrix
 * M): ..."), FAST_API_EINPUT (a plan that does not fit, malformed). */
int fast_api_check(const struct fast_api_topo *topo, const struct fast_api_traffic *tr,
		   const struct fast_api_plans *ps, struct fast_api_error *err);
/* `fast bound --json` ([--closed-only], --no-timing unless timing) into
 * *json. */
int fast_api_bound_json(const struct fast_api_topo *topo, const struct fast_api_traffic *tr,
			int closed_only, int timing, char **json, struct fast_api_error *err);
/* `fast sim --json` of ps (tr may be NULL: no bound, sizes from the
 * plans) with the n simulator options (above) into *json. */
int fast_api_sim_json(const struct fast_api_topo *topo, const struct fast_api_traffic *tr,
		      const struct fast_api_plans *ps, const char *const *names,
		      const char *const *values, size_t n, char **json, struct fast_api_error *err);
/* auto's row of `fast compare --json --no-timing` per matrix of tr, with
 * the n compile options (as fast_api_compile's) and the sim_n simulator
 * options (congestion, sync, epsilon; as fast_api_sim_json's): a JSON
 * array with, per matrix, {"matrix", "bound_s", "binding", "time_s",
 * "algbw_GBps", "bytes_out", "chosen", "predicted_sim_s",
 * "predicted_synthesis_s", "candidates"} (the row's fields; the bound the
 * LP's) into *json.  The case evaluator's (include/fast/eval.h) as the
 * command's: one decision and the chosen plan's simulation per matrix. */
int fast_api_auto_json(const struct fast_api_topo *topo, const struct fast_api_traffic *tr,
		       const char *const *names, const char *const *values, size_t n,
		       const char *const *sim_names, const char *const *sim_values, size_t sim_n,
		       char **json, struct fast_api_error *err);

/* --- per-rank programs (include/fast/prog.h, what `fast run` executes) ---- */
/* Rank rank's program of plan i of ps over the matrix it serves in tr,
 * with passes >= 1 slices per message. */
int fast_api_prog_build(const struct fast_api_traffic *tr, const struct fast_api_plans *ps,
			uint32_t i, uint32_t rank, uint32_t passes, struct fast_api_prog **out,
			struct fast_api_error *err);
struct fast_api_prog_info {
	uint32_t rank, ng, passes, nwaves;
	uint32_t kind;  /* 0 bytes (buffers per peer), 1 dispatch, 2 combine (per group) */
	uint32_t nmsgs; /* displacements: ng, or groups */
	uint64_t staging_bytes, nsends, nrecvs, ncopies, plan_hash;
};
void fast_api_prog_info(const struct fast_api_prog *p, struct fast_api_prog_info *out);
/* The arrays, into caller arrays of the sizes given (rows of uint64):
 * waves[nwaves * 8]: pre0, npre, send0, nsend, recv0, nrecv, post0, npost
 *   (ranges into copies, sends, recvs; a wave's pre-copies, then its sends
 *   and receives at once, then its post-copies);
 * sends[nsends * 6], recvs[nrecvs * 6]: peer, out (1: another server),
 *   loc kind (0 send buffer, 1 receive buffer, 2 staging), loc msg, loc
 *   offset, bytes;
 * copies[ncopies * 8]: dst kind, dst msg, dst offset, src kind, src msg,
 *   src offset, bytes, op (0 copy, 1 byte-wise add, 2 zero).
 * A location (kind, msg, offset) is byte offset within the message to
 * (send buffer) or from (receive buffer) peer or group msg, or within the
 * staging arena. */
void fast_api_prog_arrays(const struct fast_api_prog *p, uint64_t *waves, uint64_t *sends,
			  uint64_t *recvs, uint64_t *copies);
void fast_api_prog_free(struct fast_api_prog *p);

#ifdef __cplusplus
}
#endif

#endif
