/*
 * alltoallv.c - the all-to-all(v) API over the executor: gather every
 * rank's send counts into the traffic matrix, check the receive counts
 * against it, prepare (cached) and run the plan.  The real MoE case: the
 * routing decides the counts each iteration, so the plan is compiled on
 * the fly and a repeated matrix costs only a cache lookup.
 */
#include <limits.h>
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

/* Allgather of variable counts: every rank's n items of `size` bytes
 * (type t) into all, counts[] and the displacements from them. */
static int gatherv(MPI_Comm comm, const void *mine, int n, MPI_Datatype t, void *all,
		   const int *counts, int size, struct fast_err *err)
{
	int *displs = fast_calloc((size_t)size, sizeof *displs), mrc;

	if (!displs)
		return fast_err_set(err, FAST_ENOMEM, "executor: out of memory");
	for (int i = 1; i < size; i++)
		displs[i] = displs[i - 1] + counts[i - 1];
	mrc = MPI_Allgatherv(mine, n, t, all, counts, displs, t, comm);
	free(displs);
	return mrc == MPI_SUCCESS ? 0 : fast_err_set(err, FAST_ERUNTIME, "MPI_Allgatherv failed");
}

int fast_exec_gather_groups(struct fast_exec *x, const struct fast_matrix *mine,
			    struct fast_matrix *out, struct fast_err *err)
{
	MPI_Comm comm = fast_exec_comm(x);
	int n = 0, r = fast_exec_rank(x), bad = 0, any = 0, *cg = NULL, *cd = NULL, rc = 0;
	uint64_t my[2] = { mine->ngroups, 0 }, *counts = NULL, (*gs)[2] = NULL, (*all)[2] = NULL;
	uint64_t total_g = 0, total_d = 0;
	uint32_t *ds = NULL;
	struct fast_matrix m;

	memset(&m, 0, sizeof m);
	MPI_Comm_size(comm, &n);
	for (uint32_t k = 0; k < mine->ngroups; k++) {
		my[1] += mine->groups[k].ndst;
		bad |= mine->groups[k].src != (uint32_t)r;
	}
	counts = fast_calloc(2 * (size_t)n, sizeof *counts);
	cg = fast_calloc((size_t)n, sizeof *cg);
	cd = fast_calloc((size_t)n, sizeof *cd);
	gs = fast_calloc(mine->ngroups + 1, sizeof *gs);
	ds = fast_calloc(my[1] + 1, sizeof *ds);
	if (!counts || !cg || !cd || !gs || !ds)
		bad = 2;
	if (MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS) {
		rc = fast_err_set(err, FAST_ERUNTIME, "MPI_Allreduce failed");
		goto out;
	}
	if (any) {
		rc = bad == 2 ? fast_err_set(err, FAST_ENOMEM, "executor: out of memory")
		     : bad ? fast_err_set(err, FAST_EINPUT, "rank %d gives groups of another source GPU", r)
			   : fast_err_set(err, FAST_EINPUT, "a rank gave groups it is not the source of");
		goto out;
	}
	for (uint32_t k = 0, d = 0; k < mine->ngroups; k++) {
		const struct fast_group *g = &mine->groups[k];
		gs[k][0] = g->ndst;
		gs[k][1] = g->tokens;
		memcpy(ds + d, mine->dsts + g->dst0, g->ndst * sizeof *ds);
		d += g->ndst;
	}
	if (MPI_Allgather(my, 2, MPI_UINT64_T, counts, 2, MPI_UINT64_T, comm) != MPI_SUCCESS) {
		rc = fast_err_set(err, FAST_ERUNTIME, "MPI_Allgather of group counts failed");
		goto out;
	}
	for (int i = 0; i < n; i++) {
		total_g += counts[2 * i];
		total_d += counts[2 * i + 1];
	}
	/* MPI counts are int; alike on every rank */
	if (total_g * 2 > INT_MAX || total_d > INT_MAX) {
		rc = fast_err_set(err, FAST_ELIMIT, "executor: %llu groups are too many to gather",
				  (unsigned long long)total_g);
		goto out;
	}
	for (int i = 0; i < n; i++) {
		cg[i] = (int)counts[2 * i] * 2;
		cd[i] = (int)counts[2 * i + 1];
	}
	m.kind = mine->kind;
	m.token_bytes = mine->token_bytes;
	memcpy(m.label, mine->label, sizeof m.label);
	m.ngroups = (uint32_t)total_g;
	m.ndsts = (uint32_t)total_d;
	all = fast_calloc(total_g + 1, sizeof *all);
	m.groups = fast_calloc(total_g + 1, sizeof *m.groups);
	m.dsts = fast_calloc(total_d + 1, sizeof *m.dsts);
	m.ng = n;
	m.bytes = fast_calloc((size_t)n * n, sizeof *m.bytes);
	bad = !all || !m.groups || !m.dsts || !m.bytes;
	if (MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS || any) {
		rc = bad ? fast_err_set(err, FAST_ENOMEM, "executor: out of memory for %llu groups",
					(unsigned long long)total_g)
			 : fast_err_set(err, FAST_ENOMEM, "another rank lacks memory for %llu groups",
					(unsigned long long)total_g);
		goto out; /* decided together: no rank waits in the gather */
	}
	if ((rc = gatherv(comm, gs, (int)mine->ngroups * 2, MPI_UINT64_T, all, cg, n, err)) < 0 ||
	    (rc = gatherv(comm, ds, (int)my[1], MPI_UINT32_T, m.dsts, cd, n, err)) < 0)
		goto out;
	for (uint32_t i = 0, k = 0, d = 0; i < (uint32_t)n; i++)
		for (uint64_t j = 0; j < counts[2 * i]; j++, k++) {
			m.groups[k] = (struct fast_group){ i, d, (uint32_t)all[k][0], all[k][1] };
			d += (uint32_t)all[k][0];
		}
	if ((rc = fast_matrix_bytes_from_groups(&m, (uint32_t)n, err)) < 0)
		goto out;
	*out = m;
	memset(&m, 0, sizeof m);
out:
	free(m.groups);
	free(m.dsts);
	free(m.bytes);
	free(counts);
	free(cg);
	free(cd);
	free(gs);
	free(all);
	free(ds);
	return rc;
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
		else {
			struct fast_matrix m = fast_matrix_of(D, (uint32_t)ng);

			if ((rc = fast_exec_prepare(x, NULL, &m, &g, err)) == 0)
				rc = fast_exec_run(x, g, sendbuf, sdispls, recvbuf, rdispls, err);
		}
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
