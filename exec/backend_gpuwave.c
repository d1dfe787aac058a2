/*
 * backend_gpuwave.c - the waves of the cuda and hip backends: posting a
 * wave's messages into its slot and ending a slot (IPC descriptors and
 * acknowledgements, host-staged MPI, the slot's NCCL group on its own
 * stream and communicator).  The design, the copy chain included, is in
 * backend_gpuhost.c's opening comment; the shared state in gpuhost.h.
 */
#if defined(FAST_WITH_CUDA) || defined(FAST_WITH_HIP)

#include <string.h>

#include "exec/gpuhost.h"

/* --- posting ------------------------------------------------------------------------ */

/* Wave w begins in slot w % 2, whose wave before (w - 2) has ended: its
 * state is reset; its host bounce is reused once its staged uploads ran. */
int fast_gh_wave_begin(struct fast_bctx *b, uint32_t slot, struct fast_err *err)
{
	struct slot *q = &b->sl[slot & 1];
	int rc;

	if (q->h2d_pending) {
		if ((rc = fast_gpu_event_sync(q->ev_h2d, err)) < 0)
			return rc;
		q->h2d_pending = false;
	}
	q->hbounce.used = q->dbounce.used = 0;
	q->nout_desc = q->nin = q->nssend = q->nsrecv = q->nops = 0;
	q->after_chain = q->up_done = false;
	b->cur = slot & 1;
	return fast_gh_move_chain(b, (int)b->cur, err);
}

static bool ipc_peer(const struct fast_bctx *b, int peer)
{
	return b->host_of[peer] == b->host_of[b->rank];
}

static void *ccl_comm(const struct fast_bctx *b, uint32_t slot)
{
	return slot == 0 && b->user_ccl ? b->user_ccl : b->sl[slot].ccl;
}

static int ccl_post(struct fast_bctx *b, bool send, int peer, const void *buf, uint64_t n,
		    struct fast_err *err)
{
	struct slot *q = &b->sl[b->cur];
	int rc = fast_gh_grow((void **)&q->ops, &q->cap_ops, q->nops + 1, sizeof *q->ops, err);

	if (rc < 0)
		return rc;
	q->ops[q->nops++] = (struct ccl_op){ send, peer, (void *)(uintptr_t)buf, n };
	if (b->chain != (int)b->cur)
		q->after_chain = true;
	return 0;
}

static int staged_send(struct fast_bctx *b, int peer, bool out, const void *buf, uint64_t n,
		       struct fast_err *err)
{
	struct slot *q = &b->sl[b->cur];
	char *h;
	int rc;

	if ((rc = fast_gh_bump_get(b, &q->hbounce, n, &h, err)) < 0 ||
	    (rc = fast_gpu_memcpy_async(h, buf, n, KIND_D2H, fast_gh_chain(b), err)) < 0 ||
	    (rc = fast_gh_grow((void **)&q->ssend, &q->cap_ssend, q->nssend + 1, sizeof *q->ssend, err)) < 0)
		return rc;
	q->ssend[q->nssend++] = (struct staged){ peer, out, (char *)(uintptr_t)buf, h, n };
	return 0;
}

static int staged_recv(struct fast_bctx *b, int peer, bool out, void *buf, uint64_t n,
		       struct fast_err *err)
{
	struct slot *q = &b->sl[b->cur];
	char *h;
	int rc;

	if ((rc = fast_gh_bump_get(b, &q->hbounce, n, &h, err)) < 0 ||
	    (rc = fast_gh_grow((void **)&q->srecv, &q->cap_srecv, q->nsrecv + 1, sizeof *q->srecv, err)) < 0)
		return rc;
	q->srecv[q->nsrecv++] = (struct staged){ peer, out, buf, h, n };
	/* posting now is safe: the host buffer is not read before wave_end; a
	 * pair's staged messages are sent in the order they are received */
	return fast_mpi_irecv(out ? &q->out : &q->up, b->comm, peer, FAST_MPI_TAG_DATA, h, n, err);
}

/* A message without IPC: NCCL or host-staged. */
static int send_far(struct fast_bctx *b, int peer, bool out, const void *buf, uint64_t n,
		    struct fast_err *err)
{
	return b->use_ccl ? ccl_post(b, true, peer, buf, n, err) : staged_send(b, peer, out, buf, n, err);
}

static int recv_far(struct fast_bctx *b, int peer, bool out, void *buf, uint64_t n,
		    struct fast_err *err)
{
	return b->use_ccl ? ccl_post(b, false, peer, buf, n, err) : staged_recv(b, peer, out, buf, n, err);
}

int fast_gh_send_up(struct fast_bctx *b, int peer, const void *buf, uint64_t n,
		       struct fast_err *err)
{
	struct slot *q = &b->sl[b->cur];
	struct region *r;
	struct desc d;
	int rc;

	if (!ipc_peer(b, peer))
		return send_far(b, peer, false, buf, n, err);
	r = fast_gh_region_of(b, buf, n);
	if (!r) {
		char *bounce;
		if ((rc = fast_gh_bump_get(b, &q->dbounce, n, &bounce, err)) < 0 ||
		    (rc = fast_gpu_memcpy_async(bounce, buf, n, KIND_D2D, fast_gh_chain(b), err)) < 0)
			return rc;
		buf = bounce;
		r = fast_gh_region_of(b, buf, n);
	}
	if (!r->have_handle) {
		if ((rc = fast_gpu_ipc_get(r->base, r->handle, err)) < 0)
			return rc;
		r->have_handle = true;
	}
	memcpy(d.handle, r->handle, sizeof d.handle);
	d.off = (uint64_t)((const char *)buf - r->base);
	d.len = n;
	if ((rc = fast_gh_grow((void **)&q->out_desc, &q->cap_out_desc, q->nout_desc + 1, sizeof *q->out_desc,
		       err)) < 0 ||
	    (rc = fast_gh_grow((void **)&q->out_desc_peer, &q->cap_out_desc_peer, q->nout_desc + 1,
		       sizeof *q->out_desc_peer, err)) < 0)
		return rc;
	q->out_desc[q->nout_desc] = d;
	q->out_desc_peer[q->nout_desc++] = peer;
	return 0;
}

int fast_gh_recv_up(struct fast_bctx *b, int peer, void *buf, uint64_t n, struct fast_err *err)
{
	struct slot *q = &b->sl[b->cur];
	int rc;

	if (!ipc_peer(b, peer))
		return recv_far(b, peer, false, buf, n, err);
	if ((rc = fast_gh_grow((void **)&q->in, &q->cap_in, q->nin + 1, sizeof *q->in, err)) < 0)
		return rc;
	q->in[q->nin] = (struct ipc_recv){ .peer = peer, .dst = buf, .len = n };
	q->nin++;
	return 0;
}

int fast_gh_send_out(struct fast_bctx *b, int peer, const void *buf, uint64_t n,
			struct fast_err *err)
{
	return send_far(b, peer, true, buf, n, err);
}

int fast_gh_recv_out(struct fast_bctx *b, int peer, void *buf, uint64_t n, struct fast_err *err)
{
	return recv_far(b, peer, true, buf, n, err);
}

/* --- ending a slot ------------------------------------------------------------------ */

/* The slot's NCCL group, on its stream and communicator: after the chain
 * only if some of its messages were posted while the chain was elsewhere. */
static int ccl_issue(struct fast_bctx *b, uint32_t s, struct fast_err *err)
{
	struct slot *q = &b->sl[s];
	int rc;

	if (!q->nops)
		return 0;
	if (q->after_chain && (rc = fast_gh_fence(b, fast_gh_chain(b), q->stream, err)) < 0)
		return rc;
	if ((rc = fast_gpu_nccl_group_start(err)) < 0)
		return rc;
	for (size_t i = 0; i < q->nops && rc == 0; i++) {
		const struct ccl_op *o = &q->ops[i];
		rc = o->send ? fast_gpu_nccl_send(ccl_comm(b, s), o->peer, o->buf, o->len, q->stream, err)
			     : fast_gpu_nccl_recv(ccl_comm(b, s), o->peer, o->buf, o->len, q->stream, err);
	}
	if (rc < 0) {
		struct fast_err e2;
		fast_gpu_nccl_group_end(&e2);
		return rc;
	}
	return fast_gpu_nccl_group_end(err);
}

/* IPC reads of the slot: copy from the peers' memory, then acknowledge. */
static int ipc_read(struct fast_bctx *b, struct slot *q, struct fast_err *err)
{
	int rc;

	if ((rc = fast_mpi_reqs_wait(&q->desc_reqs, err)) < 0)
		return rc;
	for (size_t i = 0; i < q->nin; i++) {
		char *base;
		if (q->in[i].d.len != q->in[i].len)
			return fast_err_set(err, FAST_ERUNTIME, "IPC: rank %d announced %llu bytes, %llu expected",
					    q->in[i].peer, (unsigned long long)q->in[i].d.len,
					    (unsigned long long)q->in[i].len);
		if ((rc = fast_gh_open_handle(b, q->in[i].d.handle, &base, err)) < 0 ||
		    (rc = fast_gpu_memcpy_async(q->in[i].dst, base + q->in[i].d.off, q->in[i].len, KIND_D2D,
						fast_gh_chain(b), err)) < 0)
			return rc;
	}
	if ((rc = fast_gpu_stream_sync(fast_gh_chain(b), err)) < 0)
		return rc;
	for (size_t i = 0; i < q->nin; i++)
		if ((rc = fast_mpi_isend(&q->up, b->comm, q->in[i].peer, FAST_MPI_TAG_ACK, &b->ack, 1, err)) < 0)
			return rc;
	return 0;
}

/* What others may now read or receive: staged bytes, IPC descriptors. */
static int offer(struct fast_bctx *b, struct slot *q, struct fast_err *err)
{
	int rc;

	if (!q->nssend && !q->nout_desc)
		return 0;
	if ((rc = fast_gpu_event_sync(q->ev_ready, err)) < 0)
		return rc;
	for (size_t i = 0; i < q->nssend; i++)
		if ((rc = fast_mpi_isend(q->ssend[i].out ? &q->out : &q->up, b->comm, q->ssend[i].peer,
					 FAST_MPI_TAG_DATA, q->ssend[i].host, q->ssend[i].len, err)) < 0)
			return rc;
	if ((rc = fast_gh_grow((void **)&q->acks, &q->cap_acks, q->nout_desc, 1, err)) < 0)
		return rc;
	for (size_t i = 0; i < q->nout_desc; i++)
		if ((rc = fast_mpi_isend(&q->up, b->comm, q->out_desc_peer[i], FAST_MPI_TAG_DESC,
					 &q->out_desc[i], sizeof q->out_desc[i], err)) < 0 ||
		    (rc = fast_mpi_irecv(&q->up, b->comm, q->out_desc_peer[i], FAST_MPI_TAG_ACK, &q->acks[i],
					 1, err)) < 0)
			return rc;
	return 0;
}

/* Staged messages of one tier have arrived in host memory: upload them on
 * the chain; the host bounce waits for the uploads before its reuse. */
static int upload_staged(struct fast_bctx *b, struct slot *q, bool out, struct fast_err *err)
{
	bool any = false;
	int rc;

	for (size_t i = 0; i < q->nsrecv; i++) {
		if (q->srecv[i].out != out)
			continue;
		if ((rc = fast_gpu_memcpy_async(q->srecv[i].dev, q->srecv[i].host, q->srecv[i].len, KIND_H2D,
						fast_gh_chain(b), err)) < 0)
			return rc;
		any = true;
	}
	if (!any)
		return 0;
	q->h2d_pending = true;
	return fast_gpu_event_record(q->ev_h2d, fast_gh_chain(b), err);
}

/* The slot's scale-up messages complete (its first wave_end: the wave is
 * fully posted).  Every rank issues the group before it blocks, so no
 * rank waits on a group a peer has not issued. */
static int end_up(struct fast_bctx *b, uint32_t s, struct fast_err *err)
{
	struct slot *q = &b->sl[s];
	int rc;

	/* what the staged sends and IPC descriptors read is on the chain now */
	if ((rc = fast_gpu_event_record(q->ev_ready, fast_gh_chain(b), err)) < 0 ||
	    (rc = ccl_issue(b, s, err)) < 0 || (rc = fast_gh_move_chain(b, (int)s, err)) < 0)
		return rc;
	for (size_t i = 0; i < q->nin; i++) /* descriptors in: posted before anything waits */
		if ((rc = fast_mpi_irecv(&q->desc_reqs, b->comm, q->in[i].peer, FAST_MPI_TAG_DESC, &q->in[i].d,
					 sizeof q->in[i].d, err)) < 0)
			return rc;
	if ((rc = offer(b, q, err)) < 0 || (q->nin && (rc = ipc_read(b, q, err)) < 0) ||
	    (rc = fast_mpi_reqs_wait(&q->up, err)) < 0 || (rc = upload_staged(b, q, false, err)) < 0)
		return rc;
	q->up_done = true;
	return 0;
}

int fast_gh_wave_end(struct fast_bctx *b, uint32_t slot, int what, struct fast_err *err)
{
	struct slot *q = &b->sl[slot & 1];
	int rc;

	if (!q->up_done && (rc = end_up(b, slot & 1, err)) < 0)
		return rc;
	if (what != FAST_WAVE_ALL)
		return 0;
	if ((rc = fast_mpi_reqs_wait(&q->out, err)) < 0)
		return rc;
	return upload_staged(b, q, true, err);
}

#else
/* Host-only build (ISO C wants a declaration in every translation unit). */
typedef int fast_backend_gpuwave_unused;
#endif
