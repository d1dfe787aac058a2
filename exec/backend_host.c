/*
 * backend_host.c - the host backend: buffers in CPU memory, every message
 * an MPI point-to-point message (scale-up and scale-out alike: Open MPI's
 * shared-memory transport carries the intra-host ones), completed per wave
 * with MPI_Waitall.  Two waves may be posted at once (backend.h): their
 * requests are kept per slot and per tier, so that the engine can end a
 * wave's scale-up messages before its scale-out ones.  It runs anywhere
 * and is what the tests use.
 *
 * Also the MPI helpers every backend shares: messages of any size, split in
 * blocks of 1 GiB because MPI counts are int.  Both ends split a message of
 * n bytes the same way, so blocks match by order.
 */
#include <stdlib.h>
#include <string.h>

#include "exec/backend.h"
#include "fast/prog.h"

static int reserve(struct fast_mpi_reqs *q, size_t more, struct fast_err *err)
{
	if (q->n + more > q->cap) {
		size_t cap = q->cap ? q->cap * 2 : 64;
		MPI_Request *r;
		while (cap < q->n + more)
			cap *= 2;
		r = fast_reallocarray(q->r, cap, sizeof *r);
		if (!r)
			return fast_err_set(err, FAST_ENOMEM, "MPI requests: out of memory");
		q->r = r;
		q->cap = cap;
	}
	return 0;
}

int fast_mpi_isend(struct fast_mpi_reqs *q, MPI_Comm comm, int peer, int tag, const void *buf,
		   uint64_t n, struct fast_err *err)
{
	const char *p = buf;
	size_t blocks = n ? (size_t)((n + FAST_MPI_BLOCK - 1) / FAST_MPI_BLOCK) : 1;

	if (reserve(q, blocks, err) < 0)
		return FAST_ENOMEM;
	do {
		int len = (int)(n < FAST_MPI_BLOCK ? n : FAST_MPI_BLOCK);
		if (MPI_Isend(p, len, MPI_BYTE, peer, tag, comm, &q->r[q->n]) != MPI_SUCCESS)
			return fast_err_set(err, FAST_ERUNTIME, "MPI_Isend of %d bytes to rank %d failed",
					    len, peer);
		q->n++;
		p += len;
		n -= (uint64_t)len;
	} while (n > 0);
	return 0;
}

int fast_mpi_irecv(struct fast_mpi_reqs *q, MPI_Comm comm, int peer, int tag, void *buf,
		   uint64_t n, struct fast_err *err)
{
	char *p = buf;
	size_t blocks = n ? (size_t)((n + FAST_MPI_BLOCK - 1) / FAST_MPI_BLOCK) : 1;

	if (reserve(q, blocks, err) < 0)
		return FAST_ENOMEM;
	do {
		int len = (int)(n < FAST_MPI_BLOCK ? n : FAST_MPI_BLOCK);
		if (MPI_Irecv(p, len, MPI_BYTE, peer, tag, comm, &q->r[q->n]) != MPI_SUCCESS)
			return fast_err_set(err, FAST_ERUNTIME,
					    "MPI_Irecv of %d bytes from rank %d failed", len, peer);
		q->n++;
		p += len;
		n -= (uint64_t)len;
	} while (n > 0);
	return 0;
}

int fast_mpi_reqs_wait(struct fast_mpi_reqs *q, struct fast_err *err)
{
	int mrc = MPI_SUCCESS;

	if (q->n > 0)
		mrc = MPI_Waitall((int)q->n, q->r, MPI_STATUSES_IGNORE);
	q->n = 0;
	if (mrc != MPI_SUCCESS)
		return fast_err_set(err, FAST_ERUNTIME, "MPI_Waitall failed (error %d)", mrc);
	return 0;
}

void fast_mpi_reqs_free(struct fast_mpi_reqs *q)
{
	free(q->r);
	q->r = NULL;
	q->n = q->cap = 0;
}

/* --- the host backend ------------------------------------------------------- */

struct fast_bctx {
	MPI_Comm comm;
	uint32_t slot;                  /* where sends and receives go (wave_begin) */
	struct fast_mpi_reqs reqs[2][2]; /* [slot][0: scale-up, 1: scale-out] */
};

static int host_init(const struct fast_bsetup *s, struct fast_bctx **out, struct fast_err *err)
{
	struct fast_bctx *b = calloc(1, sizeof *b);

	if (!b)
		return fast_err_set(err, FAST_ENOMEM, "host backend: out of memory");
	b->comm = s->comm;
	*out = b;
	return 0;
}

static void host_fini(struct fast_bctx *b)
{
	if (!b)
		return;
	for (int s = 0; s < 2; s++)
		for (int t = 0; t < 2; t++)
			fast_mpi_reqs_free(&b->reqs[s][t]);
	free(b);
}

static int host_alloc(struct fast_bctx *b, uint64_t n, void **out, struct fast_err *err)
{
	void *p = NULL;

	(void)b;
	if (n > SIZE_MAX || posix_memalign(&p, 64, (size_t)n) != 0)
		return fast_err_set(err, FAST_ENOMEM, "host backend: cannot allocate %llu bytes",
				    (unsigned long long)n);
	*out = p;
	return 0;
}

static void host_free(struct fast_bctx *b, void *p)
{
	(void)b;
	free(p);
}

static int host_copy(struct fast_bctx *b, void *dst, const void *src, uint64_t n,
		     struct fast_err *err)
{
	(void)b;
	(void)err;
	if (dst != src)
		memmove(dst, src, (size_t)n);
	return 0;
}

static int host_add(struct fast_bctx *b, void *dst, const void *src, uint64_t n,
		    struct fast_err *err)
{
	(void)b;
	(void)err;
	fast_prog_add_bytes(dst, src, n);
	return 0;
}

static int host_zero(struct fast_bctx *b, void *dst, uint64_t n, struct fast_err *err)
{
	(void)b;
	(void)err;
	memset(dst, 0, (size_t)n);
	return 0;
}

static int host_nop(struct fast_bctx *b, struct fast_err *err)
{
	(void)b;
	(void)err;
	return 0;
}

static int host_wave_begin(struct fast_bctx *b, uint32_t slot, struct fast_err *err)
{
	(void)err;
	b->slot = slot & 1;
	return 0;
}

static int host_send_up(struct fast_bctx *b, int peer, const void *buf, uint64_t n,
			struct fast_err *err)
{
	return fast_mpi_isend(&b->reqs[b->slot][0], b->comm, peer, FAST_MPI_TAG_DATA, buf, n, err);
}

static int host_recv_up(struct fast_bctx *b, int peer, void *buf, uint64_t n,
			struct fast_err *err)
{
	return fast_mpi_irecv(&b->reqs[b->slot][0], b->comm, peer, FAST_MPI_TAG_DATA, buf, n, err);
}

static int host_send_out(struct fast_bctx *b, int peer, const void *buf, uint64_t n,
			 struct fast_err *err)
{
	return fast_mpi_isend(&b->reqs[b->slot][1], b->comm, peer, FAST_MPI_TAG_DATA, buf, n, err);
}

static int host_recv_out(struct fast_bctx *b, int peer, void *buf, uint64_t n,
			 struct fast_err *err)
{
	return fast_mpi_irecv(&b->reqs[b->slot][1], b->comm, peer, FAST_MPI_TAG_DATA, buf, n, err);
}

static int host_wave_end(struct fast_bctx *b, uint32_t slot, int what, struct fast_err *err)
{
	int rc = fast_mpi_reqs_wait(&b->reqs[slot & 1][0], err);

	if (rc == 0 && what == FAST_WAVE_ALL)
		rc = fast_mpi_reqs_wait(&b->reqs[slot & 1][1], err);
	return rc;
}

const struct fast_backend fast_backend_host = {
	.name = "host",
	.in_flight = 2,
	.init = host_init,
	.fini = host_fini,
	.alloc = host_alloc,
	.free = host_free,
	.upload = host_copy,
	.download = host_copy,
	.copy = host_copy,
	.add = host_add,
	.zero = host_zero,
	.wave_begin = host_wave_begin,
	.send_up = host_send_up,
	.recv_up = host_recv_up,
	.send_out = host_send_out,
	.recv_out = host_recv_out,
	.wave_end = host_wave_end,
	.sync = host_nop,
	.set_stream = NULL,
};
