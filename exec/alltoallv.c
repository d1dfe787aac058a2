/*
 * alltoallv.c - the all-to-all(v) API over the executor: gather every
 * rank's send counts into the traffic matrix, check the receive counts
 * against it, prepare (cached) and run the plan.  The real MoE case: the
 * routing decides the counts each iteration, so the plan is compiled on
 * the fly and a repeated matrix costs only a cache lookup.
 */
#include <stdlib.h>
#include <string.h>

#include "exec/internal.h"

int fast_exec_gather_matrix(struct fast_exec *x, const uint64_t *sendcounts,
			    const uint64_t *recvcounts, uint64_t *D, struct fast_err *err)
{
	int n = 0, r = fast_exec_rank(x), bad = -1, worst = -1, mrc;
	MPI_Comm comm = fast_exec_comm(x);
	uint64_t got = 0, want = 0;

	MPI_Comm_size(comm, &n);
	mrc = MPI_Allgather(sendcounts, n, MPI_UINT64_T, D, n, MPI_UINT64_T, comm);
	if (mrc != MPI_SUCCESS)
		return fast_err_set(err, FAST_ERUNTIME, "MPI_Allgather of send counts failed");
	if (recvcounts) {
		for (int s = 0; s < n; s++) {
			if (D[(size_t)s * n + r] != recvcounts[s]) {
				bad = s;
				got = D[(size_t)s * n + r];
				want = recvcounts[s];
				break;
			}
		}
	}
	/* decided together: every rank fails when one does */
	{
		int mine = bad >= 0 ? r : -1;
		if (MPI_Allreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS)
			return fast_err_set(err, FAST_ERUNTIME, "MPI_Allreduce failed");
	}
	if (bad >= 0)
		return fast_err_set(err, FAST_EINPUT,
				    "send/receive counts disagree: rank %d expects %llu bytes from rank %d, which sends %llu",
				    r, (unsigned long long)want, bad, (unsigned long long)got);
	if (worst >= 0)
		return fast_err_set(err, FAST_EINPUT,
				    "send/receive counts disagree (rank %d reports which)", worst);
	return 0;
}

int fast_alltoallv(const void *sendbuf, const uint64_t *sendcounts, const uint64_t *sdispls,
		   void *recvbuf, const uint64_t *recvcounts, const uint64_t *rdispls,
		   struct fast_exec *x, struct fast_err *err)
{
	struct fast_prog *g = NULL;
	uint64_t *D;
	size_t ng;
	int rc, n;

	MPI_Comm_size(fast_exec_comm(x), &n);
	ng = (size_t)n;
	D = fast_calloc(ng * ng, sizeof *D);
	if (!D)
		return fast_err_set(err, FAST_ENOMEM, "fast_alltoallv: out of memory");
	rc = fast_exec_gather_matrix(x, sendcounts, recvcounts, D, err);
	if (rc == 0) {
		if (strcmp(fast_exec_algo(x), "mpi") == 0)
			rc = fast_exec_run_mpi(x, D, sendbuf, sdispls, recvbuf, rdispls, err);
		else if ((rc = fast_exec_prepare(x, NULL, D, &g, err)) == 0)
			rc = fast_exec_run(x, g, sendbuf, sdispls, recvbuf, rdispls, err);
	}
	free(D);
	return rc;
}

/* --- contexts cached on communicators -------------------------------------- */

struct comm_ctx {
	struct fast_exec *x;
	uint64_t key; /* topology and options it was made with */
};

static int ctx_keyval = MPI_KEYVAL_INVALID;

static int delete_ctx(MPI_Comm comm, int key, void *val, void *extra)
{
	struct comm_ctx *c = val;

	(void)comm;
	(void)key;
	(void)extra;
	if (c) {
		fast_exec_destroy(c->x);
		free(c);
	}
	return MPI_SUCCESS;
}

static uint64_t opts_key(const struct fast_topo *t, const struct fast_exec_opts *o)
{
	uint64_t h = FAST_HASH_INIT;

	h = fast_hash_u64(h, fast_topo_hash(t));
	h = fast_hash_bytes(h, o->backend ? o->backend : "host", strlen(o->backend ? o->backend : "host"));
	h = fast_hash_bytes(h, o->algo ? o->algo : "fast", strlen(o->algo ? o->algo : "fast"));
	h = fast_hash_bytes(h, &o->max_staging, sizeof o->max_staging);
	h = fast_hash_bytes(h, &o->algo_opts.peers, sizeof o->algo_opts.peers);
	h = fast_hash_bytes(h, &o->algo_opts.chunk_bytes, sizeof o->algo_opts.chunk_bytes);
	return h;
}

int fast_exec_for_comm(MPI_Comm comm, const struct fast_topo *topo,
		       const struct fast_exec_opts *opts, struct fast_exec **out,
		       struct fast_err *err)
{
	struct fast_exec_opts defaults;
	struct comm_ctx *c = NULL;
	uint64_t key;
	int found = 0, rc;

	if (!opts) {
		fast_exec_opts_default(&defaults);
		opts = &defaults;
	}
	key = opts_key(topo, opts);
	if (ctx_keyval == MPI_KEYVAL_INVALID &&
	    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_ctx, &ctx_keyval, NULL) != MPI_SUCCESS)
		return fast_err_set(err, FAST_ERUNTIME, "MPI_Comm_create_keyval failed");
	MPI_Comm_get_attr(comm, ctx_keyval, &c, &found);
	if (found && c && c->key == key) {
		*out = c->x;
		return 0;
	}
	if (found)
		MPI_Comm_delete_attr(comm, ctx_keyval); /* other topology or options */
	c = calloc(1, sizeof *c);
	if (!c)
		return fast_err_set(err, FAST_ENOMEM, "fast_alltoallv: out of memory");
	if ((rc = fast_exec_create(comm, topo, opts, &c->x, err)) < 0) {
		free(c);
		return rc;
	}
	c->key = key;
	MPI_Comm_set_attr(comm, ctx_keyval, c);
	*out = c->x;
	return 0;
}

int fast_alltoallv_comm(const void *sendbuf, const uint64_t *sendcounts, const uint64_t *sdispls,
			void *recvbuf, const uint64_t *recvcounts, const uint64_t *rdispls,
			MPI_Comm comm, const struct fast_topo *topo,
			const struct fast_exec_opts *opts, struct fast_err *err)
{
	struct fast_exec *x;
	int rc = fast_exec_for_comm(comm, topo, opts, &x, err);

	if (rc < 0)
		return rc;
	return fast_alltoallv(sendbuf, sendcounts, sdispls, recvbuf, recvcounts, rdispls, x, err);
}

#if defined(FAST_WITH_CUDA) || defined(FAST_WITH_HIP)
static int device_alltoallv(const void *sendbuf, const uint64_t *sendcounts,
			    const uint64_t *sdispls, void *recvbuf, const uint64_t *recvcounts,
			    const uint64_t *rdispls, void *stream, void *nccl_comm,
			    struct fast_exec *x, struct fast_err *err)
{
	const struct fast_backend *be = fast_exec_backend(x);
	struct fast_bctx *b = fast_exec_bctx(x);
	int rc;

	if (!be->set_stream)
		return fast_err_set(err, FAST_EUSAGE,
				    "fast_alltoallv_%s: the context's backend is '%s', not a GPU backend",
				    fast_gpu_api_name(), be->name);
	if ((rc = be->set_stream(b, stream, nccl_comm, err)) < 0)
		return rc;
	rc = fast_alltoallv(sendbuf, sendcounts, sdispls, recvbuf, recvcounts, rdispls, x, err);
	{
		struct fast_err e2;
		be->set_stream(b, NULL, NULL, &e2);
	}
	return rc;
}
#endif

#if defined(FAST_WITH_CUDA)
int fast_alltoallv_cuda(const void *sendbuf, const uint64_t *sendcounts, const uint64_t *sdispls,
			void *recvbuf, const uint64_t *recvcounts, const uint64_t *rdispls,
			void *stream, void *nccl_comm, struct fast_exec *x, struct fast_err *err)
{
	return device_alltoallv(sendbuf, sendcounts, sdispls, recvbuf, recvcounts, rdispls, stream,
				nccl_comm, x, err);
}
#endif

#if defined(FAST_WITH_HIP)
int fast_alltoallv_hip(const void *sendbuf, const uint64_t *sendcounts, const uint64_t *sdispls,
		       void *recvbuf, const uint64_t *recvcounts, const uint64_t *rdispls,
		       void *stream, struct fast_exec *x, struct fast_err *err)
{
	return device_alltoallv(sendbuf, sendcounts, sdispls, recvbuf, recvcounts, rdispls, stream,
				NULL, x, err);
}
#endif
