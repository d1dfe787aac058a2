/*
 * exec.h - the executor's public API: run all-to-all(v) plans over MPI with a
 * host (CPU memory), CUDA or HIP backend (docs/DESIGN.md, "Executor").
 *
 * Model.  One MPI rank per GPU: rank r of the communicator is GPU r of the
 * topology, on server r / G.  A plan (plan.h) is turned, on every rank, into
 * that rank's *program*: the plan's DAG is cut into waves (a (step, chunk)
 * node runs one wave after the last node it waits for), and each wave is a
 * list of local copies, sends and receives.  Every rank walks the same plan
 * in the same order, so the matching send and receive of every message sit
 * in the same wave on both sides and a rank never waits on a wave its peer
 * has not reached: no deadlock, whatever the plan.
 *
 * Buffers.  Message D[s][d] starts at sendbuf + sdispls[d] on rank s and
 * lands at recvbuf + rdispls[s] on rank d (MPI_Alltoallv's layout, in
 * bytes).  Pieces held by a rank that is neither their source nor their
 * destination live in that rank's staging arena; the program places them
 * with a first-fit allocator, each from the wave it arrives in to the last
 * wave that reads it (a piece may be forwarded several times).  The arena's size is the rank's staging bytes.  A cap on it
 * (max_staging) is met by running the plan in several passes, each on a
 * slice of every message (the same routes, 1/k of the bytes each).
 *
 * Programs depend on the plan and matrix only (not on displacements or
 * buffers), so they are cached by matrix hash (cache.c).
 *
 * Ownership: fast_exec_create() returns a context the caller releases with
 * fast_exec_destroy() (NULL-safe) before MPI_Finalize.  Programs are owned
 * by the context's cache unless built with fast_prog_build(), whose result
 * the caller frees with fast_prog_free().
 */
#ifndef FAST_EXEC_EXEC_H
#define FAST_EXEC_EXEC_H

#include <mpi.h>

/* the public headers include each other by name (one folder, include/fast/,
 * in the tree and installed): -I$PREFIX/include is enough */
#include "common.h"
#include "plan.h"
#include "topo.h"
#include "algo.h"
#include "prog.h"

struct fast_backend;

/* What a context is created with. */
struct fast_exec_opts {
	const char *backend;      /* "host" (default), "cuda", "hip" */
	const char *algo;         /* compiler for on-the-fly plans: "fast" (default), ... or "mpi" */
	struct fast_algo_opts algo_opts;
	uint64_t max_staging;     /* cap on staging bytes per rank; 0 = none */
	uint32_t cache_entries;   /* plan cache capacity; 0 = default (16) */
	int device;               /* GPU backends: device ordinal; -1 = local rank mod count */
	uint32_t in_flight;       /* waves a rank keeps posted (prog.h "Waves in flight"):
				   * 1, 2, or 0 = the backend's most (host 2, cuda/hip 1) */
};
void fast_exec_opts_default(struct fast_exec_opts *o);

/* Counters a context keeps (per rank). */
struct fast_exec_stats {
	uint64_t calls;
	uint64_t cache_hits, cache_misses;
	double synth_s;           /* total time compiling plans + building programs */
	double last_synth_s;      /* of the last miss */
	uint64_t staging_bytes;   /* staging arena of the last program run */
	uint32_t passes;          /* slices of the last program run */
	uint32_t in_flight;       /* waves it kept posted (1 or 2) */
	uint64_t plan_hash;       /* of the last plan run */
};

struct fast_exec;

/* Create a context over comm (duplicated inside; collective over comm).
 * comm's size must be N*G of topo.  FAST_EUSAGE for an unknown backend or a
 * backend not compiled in, FAST_EINPUT for a size mismatch, FAST_ERUNTIME
 * for an MPI or device failure. */
int fast_exec_create(MPI_Comm comm, const struct fast_topo *topo,
		     const struct fast_exec_opts *opts, struct fast_exec **out,
		     struct fast_err *err);
void fast_exec_destroy(struct fast_exec *x);

int fast_exec_rank(const struct fast_exec *x);
const struct fast_backend *fast_exec_backend(const struct fast_exec *x);
void fast_exec_get_stats(const struct fast_exec *x, struct fast_exec_stats *out);
/* Notes the backend chose at creation ("NCCL disabled: ranks 0 and 1 share
 * GPU ..."); empty string when none. */
const char *fast_exec_notes(const struct fast_exec *x);
/* The waves its programs keep posted: opts->in_flight (0: the backend's
 * most), never more than the backend can (host, cuda and hip: 2). */
uint32_t fast_exec_in_flight(const struct fast_exec *x);

/* Memory through the backend (device memory on GPU backends).  Buffers
 * given to fast_exec_run may also be any memory the backend can address. */
int fast_exec_alloc(struct fast_exec *x, uint64_t bytes, void **out, struct fast_err *err);
void fast_exec_free(struct fast_exec *x, void *p);
/* Copy between host memory and backend memory (plain memcpy on host). */
int fast_exec_upload(struct fast_exec *x, void *dst, const void *host, uint64_t bytes,
		     struct fast_err *err);
int fast_exec_download(struct fast_exec *x, void *host, const void *src, uint64_t bytes,
		       struct fast_err *err);

/* Prepare the program of (plan, m) for this rank, through the cache (m
 * the same on every rank; a gathered byte array: fast_matrix_of).  plan
 * may be NULL: then m is compiled on the fly with opts->algo (the same
 * plan on every rank; collective: ranks agree on the plan hash and on the
 * number of passes).  With a plan, it is expanded and checked against m
 * and against the rank's holdings as the program is built (FAST_ECHECK
 * when a rank would send bytes it does not hold).  A byte matrix (kind
 * BYTES) gets a byte program.  Token traffic (DISPATCH or COMBINE): plan
 * is a token plan of m's kind (checked against m's groups), or NULL to
 * compile one; the program's buffers are per group (prog.h,
 * fast_prog_build_tokens), and one that sums (combine) needs a backend
 * with add and zero (the host backend): FAST_EUSAGE elsewhere.  *prog is
 * owned by the cache and valid until the next prepare call. */
int fast_exec_prepare(struct fast_exec *x, const struct fast_plan *plan,
		      const struct fast_matrix *m, struct fast_prog **prog, struct fast_err *err);

/* Run a prepared program (collective).  sdispls[d] / rdispls[s] are byte
 * offsets into sendbuf / recvbuf (ng entries each; a token program's
 * sdispls[g] / rdispls[g] are per group, prog->nmsgs entries, read only
 * for the groups the rank sends / receives).  FAST_ERUNTIME on an MPI or
 * device failure. */
int fast_exec_run(struct fast_exec *x, const struct fast_prog *prog,
		  const void *sendbuf, const uint64_t *sdispls,
		  void *recvbuf, const uint64_t *rdispls, struct fast_err *err);

/* MPI_Alltoallv of bytes on the backend's memory (host-staged on GPU
 * backends): the `mpi` baseline.  MPI counts are int: a count or
 * displacement of 2 GiB or more is refused (FAST_EUSAGE). */
int fast_exec_run_mpi(struct fast_exec *x, const uint64_t *D,
		      const void *sendbuf, const uint64_t *sdispls,
		      void *recvbuf, const uint64_t *rdispls, struct fast_err *err);

/* --- the alltoallv API ------------------------------------------------------
 * fast_alltoallv: bytes, like MPI_Alltoallv with MPI_BYTE and 64-bit counts
 * and displacements.  Collective over the context's communicator.  Every
 * rank's send counts are gathered (MPI_Allgather), each rank checks its
 * receive counts against what the others send (a mismatch fails on every
 * rank with FAST_EINPUT, decided collectively), the plan is compiled with
 * the context's algorithm (cached by matrix) and run. */
int fast_alltoallv(const void *sendbuf, const uint64_t *sendcounts, const uint64_t *sdispls,
		   void *recvbuf, const uint64_t *recvcounts, const uint64_t *rdispls,
		   struct fast_exec *x, struct fast_err *err);

/* The same on a communicator, with the context kept on it (an MPI
 * attribute: created on the first call, collective like the call itself,
 * destroyed when comm is freed, remade when topo or opts change).  opts may
 * be NULL (host backend, algorithm fast). */
int fast_alltoallv_comm(const void *sendbuf, const uint64_t *sendcounts, const uint64_t *sdispls,
			void *recvbuf, const uint64_t *recvcounts, const uint64_t *rdispls,
			MPI_Comm comm, const struct fast_topo *topo,
			const struct fast_exec_opts *opts, struct fast_err *err);
/* The context fast_alltoallv_comm keeps on comm (made if needed). */
int fast_exec_for_comm(MPI_Comm comm, const struct fast_topo *topo,
		       const struct fast_exec_opts *opts, struct fast_exec **out,
		       struct fast_err *err);

/* --- agreement across ranks ------------------------------------------------
 * What every rank must have alike (options, the contents of inputs) is
 * compared at start with one MPI_Allreduce (the maximum of each value and
 * of its complement), so a mismatch becomes a clear error on every rank
 * instead of a hang in mismatched collectives. */
struct fast_agree {
	const char *name;  /* as the user knows it: "-n", "--backend", "--traffic" */
	int code;          /* error code when ranks differ: FAST_EUSAGE, FAST_EINPUT */
	uint64_t value;    /* the value, or a hash of what it stands for */
	const char *text;  /* shown for the value ("fast"), NULL: the value in decimal */
	bool contents;     /* a hash of contents: no value is shown */
};
/* Collective over comm.  0 when every rank has the same n values; else the
 * code of the first field that differs, on every rank, with the same
 * message everywhere: "ranks disagree on -n: rank 0 has 2, rank 2 has 5"
 * (or "... rank 2 loaded other contents than rank 0").  FAST_ERUNTIME when
 * MPI fails. */
int fast_exec_agree(MPI_Comm comm, const struct fast_agree *f, size_t n, struct fast_err *err);

/* Gather the traffic matrix from every rank's send counts (ng*ng, caller
 * allocated) and check recvcounts (may be NULL: no check) collectively. */
int fast_exec_gather_matrix(struct fast_exec *x, const uint64_t *sendcounts,
			    const uint64_t *recvcounts, uint64_t *D, struct fast_err *err);

/* Token traffic from every rank's own routing (the real MoE case: a rank
 * knows its tokens' experts, that is the groups whose src it is): mine
 * holds this rank's groups (src == its rank, dst0 indexing mine->dsts;
 * kind and token_bytes alike on every rank), *out receives every rank's,
 * in rank order and each rank's in its own order (ascending src: the
 * group order of traffic.h), with its per-GPU byte matrix.  Collective;
 * FAST_EINPUT on every rank when one gives a group of another src.  *out
 * is written only on success; the caller frees its bytes, groups and
 * dsts. */
int fast_exec_gather_groups(struct fast_exec *x, const struct fast_matrix *mine,
			    struct fast_matrix *out, struct fast_err *err);

#if defined(FAST_WITH_CUDA)
/* Stream-ordered device versions (GPU builds only).  Buffers are device
 * memory.  stream is a cudaStream_t / hipStream_t (NULL = default stream):
 * the call waits for work queued on it before starting and leaves no work
 * pending when it returns.  nccl_comm (CUDA builds with NCCL) is an
 * ncclComm_t over the same ranks to use instead of the context's own, or
 * NULL. */
int fast_alltoallv_cuda(const void *sendbuf, const uint64_t *sendcounts, const uint64_t *sdispls,
			void *recvbuf, const uint64_t *recvcounts, const uint64_t *rdispls,
			void *stream, void *nccl_comm, struct fast_exec *x, struct fast_err *err);
#endif
#if defined(FAST_WITH_HIP)
/* The same on HIP (no RCCL communicator argument). */
int fast_alltoallv_hip(const void *sendbuf, const uint64_t *sendcounts, const uint64_t *sdispls,
		       void *recvbuf, const uint64_t *recvcounts, const uint64_t *rdispls,
		       void *stream, struct fast_exec *x, struct fast_err *err);
#endif

#endif
