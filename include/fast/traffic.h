/*
 * traffic.h - all-to-all(v) traffic: one or more labelled NG x NG byte
 * matrices.  D[s][d] (bytes[s * ng + d]) is what GPU s sends to GPU d; the
 * diagonal is a local copy that never crosses a link.
 *
 * Files: the tool's JSON (schemas/traffic.schema.json, dense rows, sparse
 * [src, dst, bytes] triples, or token groups [src, [dsts], tokens] of a
 * dispatch or combine, below) or the whitespace N x N matrix of
 * nccl-tests' alltoallv_perf, detected by content.  Byte counts are exact integers up to
 * 2^53 (JSON numbers are doubles); every row, column and total sum is
 * checked for 64-bit overflow.
 *
 * Ownership: a struct fast_traffic owns its matrices; release it with
 * fast_traffic_free() (NULL-safe, idempotent).
 */
#ifndef FAST_TRAFFIC_H
#define FAST_TRAFFIC_H

#include <stdio.h>

#include "common.h"
#include "topo.h"

/* Versions read: 1 to FAST_TRAFFIC_VERSION.  Written: 4 when a matrix
 * carries compute_pairs, 3 when the traffic has a token matrix ("kind",
 * "groups"), which older readers cannot read; 2 otherwise, so that byte
 * traffic stays readable by them.  1 named gpus_total "gpus"; both names
 * are read. */
#define FAST_TRAFFIC_VERSION 4
#define FAST_TRAFFIC_VERSION_TOKENS 3
#define FAST_TRAFFIC_VERSION_BYTES 2

/*
 * Token traffic (MoE dispatch and combine).  A matrix of kind DISPATCH or
 * COMBINE is, exactly, a list of token groups: g = (src, Dest(g), tokens)
 * is `tokens` interchangeable tokens of GPU src whose top-k experts live
 * on the GPUs Dest(g) (ascending, distinct, 1..FAST_GROUP_MAX_DESTS of
 * them; src itself may be one: that copy is local).  Every token is
 * token_bytes bytes.  Group g's message is its tokens * token_bytes bytes.
 *  - DISPATCH: the bytes of g start at src and must reach every d in
 *    Dest(g) (a copy per destination GPU; a copy per server suffices
 *    across scale-out, the rest is replication over scale-up).
 *  - COMBINE: every d in Dest(g) holds a contribution of the same size
 *    (its experts' outputs for those tokens); src must end with their
 *    sum, every contribution counted exactly once (partial sums may be
 *    formed anywhere on the way).
 * `bytes` is always filled: the per-GPU byte matrix of the same traffic
 * (one copy per destination GPU, no dedup), computed from the groups by
 * fast_matrix_bytes_from_groups, the one definition: DISPATCH
 * bytes[src][d] += tokens * token_bytes for d in Dest(g); COMBINE the
 * transpose, bytes[d][src].  In that matrix, message (s, d) is the
 * concatenation, in group order, of the groups with src s and d in Dest(g)
 * (DISPATCH; COMBINE: src d and s in Dest(g)), which is how a plan over
 * the byte matrix is checked against the groups.  Every algorithm can run
 * on it; the token-aware ones (plan.h, FAST_TRAFFIC_DISPATCH plans) use
 * the groups.
 */
enum fast_traffic_kind {
	FAST_TRAFFIC_BYTES = 0,    /* a plain byte matrix */
	FAST_TRAFFIC_DISPATCH = 1,
	FAST_TRAFFIC_COMBINE = 2,
};

/* Most destination GPUs of one group (a combine mask is 64 bits). */
#define FAST_GROUP_MAX_DESTS 64u

struct fast_group {
	uint32_t src;           /* GPU */
	uint32_t dst0, ndst;    /* Dest(g) = matrix->dsts[dst0 .. dst0 + ndst) */
	uint64_t tokens;        /* > 0 */
};

/*
 * One matrix of a traffic, the one type that crosses the API for traffic:
 * it knows its size (ng GPUs), so every operation on it (compile, bound,
 * check, open a plan's view) takes the matrix alone.  Every producer sets
 * ng: fast_traffic_alloc (and so the loaders and generators),
 * fast_groups_finish, fast_matrix_copy_groups, fast_matrix_of.
 */
struct fast_matrix {
	char label[FAST_NAME_MAX]; /* e.g. "layer3/dispatch" or "m0" */
	uint32_t ng;               /* GPUs: bytes is ng x ng */
	uint64_t *bytes;           /* ng * ng, row-major, owned (but see fast_matrix_of) */
	/* token traffic (kind != FAST_TRAFFIC_BYTES); zero / NULL otherwise */
	enum fast_traffic_kind kind;
	uint64_t token_bytes;      /* bytes per token, > 0 */
	struct fast_group *groups; /* ngroups entries, owned */
	uint32_t ngroups;
	uint32_t *dsts;            /* ndsts entries, owned */
	uint32_t ndsts;
	/* NULL, or ng entries, owned: the (token, expert) pairs each GPU
	 * computes in the MoE layer this matrix moves tokens for (trace
	 * import: column sums of the one-copy-per-(token, expert) count
	 * matrix, whatever the dedup of the bytes); file version 4 */
	uint64_t *compute_pairs;
};

/* Compute imbalance of m: the largest of m->compute_pairs over their mean
 * (1 when all are 0); *max and *mean (either may be NULL) receive the two.
 * m->compute_pairs must not be NULL. */
double fast_matrix_compute_imbalance(const struct fast_matrix *m, uint64_t *max, double *mean);

/* A caller's plain byte array as a matrix: kind BYTES, ng GPUs, label
 * empty, no groups.  `bytes` (ng * ng, row-major) is borrowed, not copied:
 * it must outlive the matrix, and the library never frees it (never pass
 * such a matrix to anything that frees, e.g. inside a fast_traffic given
 * to fast_traffic_free).  The operations only read it. */
struct fast_matrix fast_matrix_of(const uint64_t *bytes, uint32_t ng);

/* "bytes", "dispatch", "combine". */
const char *fast_traffic_kind_name(enum fast_traffic_kind k);

/* Bytes of group g's message: tokens * token_bytes (checked for overflow
 * by the loader and by fast_matrix_bytes_from_groups). */
static inline uint64_t fast_group_bytes(const struct fast_matrix *m, uint32_t g)
{
	return m->groups[g].tokens * m->token_bytes;
}

/* Fill m->bytes (ng x ng, already allocated) from m's groups, as above,
 * and set m->ng = ng (how a matrix built from groups learns its size).
 * FAST_EINPUT naming the group on a GPU out of range, a destination list
 * not ascending and distinct, or a sum over 64 bits. */
int fast_matrix_bytes_from_groups(struct fast_matrix *m, uint32_t ng, struct fast_err *err);

/*
 * Bytes of matrix m (m->ng GPUs) that cross servers (GPU x is on server
 * x / G, G = gpus_per_server >= 1; a last partial server is allowed):
 *   *per_gpu     one copy per destination GPU (the byte matrix: what a
 *                dispatcher that deduplicates per GPU sends), sum over
 *                groups of tokens * token_bytes * |{d in Dest(g) : server(d)
 *                != server(src)}|;
 *   *per_server  one copy per destination server (each token crosses to a
 *                server once, then is copied over scale-up; combine: summed
 *                on the expert server first), sum over groups of tokens *
 *                token_bytes * |servers(Dest(g)) \ {server(src)}|.
 * The same for DISPATCH and COMBINE (combine crosses the other way).  A
 * BYTES matrix has no token identity: both are its off-server bytes.
 * Either pointer may be NULL.  FAST_EINPUT if a sum exceeds 64 bits (never
 * on a loaded traffic, whose byte matrix sums are checked).
 */
int fast_matrix_dedup_bytes(const struct fast_matrix *m, uint32_t gpus_per_server,
			    uint64_t *per_gpu, uint64_t *per_server, struct fast_err *err);

/*
 * Building token groups from tokens one at a time (trace import, the MoE
 * generator): tokens with the same source and destination set join one
 * group.  Group order, the one every producer of token traffic uses:
 * ascending source GPU, and within a source the order in which each
 * destination set first appeared.  Destinations are stored per group in
 * group order.  Refuses (FAST_ELIMIT) more than max_groups groups before
 * growing past them.  Ownership: the builder owns its arrays until
 * fast_groups_finish moves them into a matrix; fast_groups_free releases
 * what is left (NULL-safe, idempotent).
 */
struct fast_groups {
	uint32_t ng;
	uint64_t max_groups;
	struct fast_group *groups; /* n of cap, in order of first appearance */
	uint32_t n, cap;
	uint32_t *dsts;            /* nd of dcap */
	uint64_t nd, dcap;
	uint32_t *slot;            /* open-addressing table of group index + 1 */
	uint32_t nslot;            /* a power of two, > 2 n */
};
void fast_groups_init(struct fast_groups *b, uint32_t ng, uint64_t max_groups);
/* Add `tokens` tokens of GPU src going to dsts[0 .. ndst) (ascending and
 * distinct, 1..FAST_GROUP_MAX_DESTS, each < ng: FAST_EINPUT otherwise). */
int fast_groups_add(struct fast_groups *b, uint32_t src, const uint32_t *dsts, uint32_t ndst,
		    uint64_t tokens, struct fast_err *err);
/* Move the groups into m (kind, token_bytes set; m->bytes, ng x ng
 * allocated, filled by fast_matrix_bytes_from_groups) in the order above;
 * the builder is left empty.  FAST_ENOMEM, or bytes_from_groups' errors. */
int fast_groups_finish(struct fast_groups *b, enum fast_traffic_kind kind, uint64_t token_bytes,
		       struct fast_matrix *m, struct fast_err *err);
void fast_groups_free(struct fast_groups *b);
/* Copy src's groups and destinations into dst (which has none), with kind
 * `kind`, and fill dst->bytes from them.  FAST_ENOMEM. */
int fast_matrix_copy_groups(struct fast_matrix *dst, const struct fast_matrix *src,
			    enum fast_traffic_kind kind, struct fast_err *err);

struct fast_traffic {
	uint32_t ng;               /* GPUs */
	uint32_t count;            /* matrices */
	struct fast_matrix *m;     /* count entries, owned */
	char source[FAST_SOURCE_MAX]; /* provenance ("generated: zipf s=0.8 seed=1") */
};

/* Does any matrix of t carry token groups (kind != BYTES)? */
bool fast_traffic_has_tokens(const struct fast_traffic *t);
/* Does any matrix of t carry compute_pairs? */
bool fast_traffic_has_pairs(const struct fast_traffic *t);

/* Allocate count zeroed ng x ng matrices (kind BYTES, no groups) labelled "m0", "m1", ...  Refuses
 * (FAST_ELIMIT) dimensions beyond lim before allocating: more than
 * lim->max_gpus GPUs, lim->max_matrices matrices, or count * ng^2 * 8
 * bytes over lim->max_traffic_bytes (matrices are held dense, so a small
 * sparse file can name gigabytes). */
int fast_traffic_alloc(struct fast_traffic *t, uint32_t ng, uint32_t count,
		       const struct fast_limits *lim, struct fast_err *err);
void fast_traffic_free(struct fast_traffic *t); /* also groups and dsts */

/* Load a traffic file (JSON or nccl-tests matrix, by content).  Errors are
 * FAST_EINPUT ("file: /matrices/0/rows/3/2: bytes must be a non-negative
 * integer (got -1)", or "file:line:col: ..." for syntax) or FAST_ELIMIT. */
int fast_traffic_load(const char *path, const struct fast_limits *lim,
		      struct fast_traffic *out, struct fast_err *err);
int fast_traffic_parse(const char *text, size_t len, const char *name,
		       const struct fast_limits *lim, struct fast_traffic *out,
		       struct fast_err *err);
/* The loaders' sum check for traffic built in memory (the library API's
 * arrays): every row, column and matrix total, and the total over all
 * matrices, fits 64 bits.  FAST_EINPUT "name: /matrices/K: the sum of row
 * R overflows 64 bits", FAST_ENOMEM. */
int fast_traffic_check_sums(const struct fast_traffic *t, const char *name, struct fast_err *err);
/* Check the traffic fits a topology: ng == N * G (FAST_EINPUT otherwise,
 * naming both sizes). */
int fast_traffic_check_topo(const struct fast_traffic *t, const struct fast_topo *topo,
			    const char *name, struct fast_err *err);

/* Write JSON.  sparse: emit [src, dst, bytes] triples of non-zero entries
 * instead of dense rows.  FAST_EIO on a stream error. */
int fast_traffic_write(const struct fast_traffic *t, bool sparse, FILE *f,
		       struct fast_err *err);
/* Write matrix `index` in nccl-tests' alltoallv matrix format, rounding each
 * entry to a multiple of 16 bytes; *changed (may be NULL) receives how many
 * entries the rounding changed. */
int fast_traffic_write_nccl(const struct fast_traffic *t, uint32_t index, FILE *f,
			    uint64_t *changed, struct fast_err *err);

/* Summary statistics of one matrix on a topology of G GPUs per server. */
struct fast_traffic_stats {
	uint64_t total, local, intra, inter; /* diagonal, same server, other server */
	uint64_t max_row, max_col;
	double mean_row, mean_col;
	double row_skew, col_skew;   /* max / mean */
	double gini;                 /* of off-diagonal pair sizes */
	uint32_t hot_sender, hot_receiver;
	uint64_t max_server_egress, max_server_ingress; /* cross-server */
};
void fast_traffic_stats(const uint64_t *bytes, uint32_t ng, uint32_t gpus_per_server,
			struct fast_traffic_stats *out);

/* Replace matrix bytes by its transpose (MoE combine = dispatch^T). */
int fast_matrix_transpose(uint64_t *bytes, uint32_t ng, struct fast_err *err);
/* The other phase of m: its byte matrix transposed and, for token traffic,
 * DISPATCH and COMBINE swapped (the same groups), so that the byte matrix
 * stays the one of the groups.  Cannot fail. */
void fast_matrix_other_phase(struct fast_matrix *m);

#endif
