/*
 * backend_gpuhost.c - the cuda and hip backends: buffers in device memory,
 * built on the device primitives of backend_gpu.cu plus MPI (compiled by
 * mpicc only in GPU builds: make GPU=cuda | GPU=hip).
 *
 * Paths, per message:
 *  - scale-up to a peer on the same host: CUDA/HIP IPC, "get" style.  The
 *    sender posts a descriptor (IPC handle of the allocation holding the
 *    bytes, offset, length) over MPI; the receiver opens the handle (cached),
 *    copies device to device into place, and acknowledges, so the sender
 *    keeps the bytes untouched until every reader is done.  Bytes outside a
 *    backend allocation (a user's buffer) are first copied into an exported
 *    bounce buffer.
 *  - scale-out (and scale-up to a peer on another host): NCCL send/recv,
 *    one group per wave, on CUDA builds when every rank has a GPU of its
 *    own.  NCCL refuses two ranks on one GPU: ranks exchange device
 *    identities (PCI bus id + host) at init and, if any two share a device,
 *    or with FAST_GPU_NCCL=0 in the environment, every such message goes
 *    host-staged over MPI instead (copy to pinned host memory, MPI
 *    point-to-point, copy back).  HIP builds stage through the host unless
 *    built with RCCL (-DFAST_WITH_RCCL).  Debian's Open MPI is not
 *    CUDA-aware, hence the staging.
 *
 * Two waves in flight (backend.h): everything a wave's messages use --
 * descriptors and acknowledgements, MPI requests, staged copies, bounce
 * buffers, the NCCL operations -- lives in the wave's slot (w % 2).  A
 * slot's NCCL group is issued once the wave is fully posted (its first
 * wave_end), on the slot's own stream and communicator: two groups on one
 * stream would serialise, and two groups in flight on one communicator may
 * deadlock (NCCL wants one issue order per communicator on every rank).
 *
 * Streams.  Local copies (the engine's copies, packing into bounce
 * buffers, IPC reads, staged uploads) form one chain in issue order: they
 * go on the stream of the slot last begun or ended (`chain`), and moving
 * the chain to another stream makes that stream wait for the one before (an
 * event), so every copy runs after every copy issued before it.  Ending a
 * slot moves the chain onto the slot's stream, after its NCCL group: what
 * the engine issues after wave_end(s, UP) -- the next wave's UP copies,
 * after wave_end(s, ALL) its ALL copies and the post-copies -- runs after
 * the slot's arrivals.  A slot's NCCL group waits for the chain only when
 * the wave posted NCCL messages after the chain left its stream (its UP or
 * ALL sends); a wave of free sends runs beside the wave before.  The chain
 * starts and ends on the base stream: the backend's own, or the caller's
 * (set_stream, the stream-ordered fast_alltoallv_cuda/_hip), so all work
 * of a call is ordered on the caller's stream when it returns.
 */
#if defined(FAST_WITH_CUDA) || defined(FAST_WITH_HIP)

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec/gpuhost.h"

int fast_gh_grow(void **arr, size_t *cap, size_t need, size_t size, struct fast_err *err)
{
	size_t ncap;
	void *p;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 16;
	while (ncap < need)
		ncap *= 2;
	p = fast_reallocarray(*arr, ncap, size);
	if (!p)
		return fast_err_set(err, FAST_ENOMEM, "GPU backend: out of memory");
	*arr = p;
	*cap = ncap;
	return 0;
}

/* --- the copy chain ------------------------------------------------------------ */

void *fast_gh_stream_of(const struct fast_bctx *b, int at)
{
	return at == BASE ? b->stream : b->sl[at].stream;
}

void *fast_gh_chain(const struct fast_bctx *b)
{
	return fast_gh_stream_of(b, b->chain);
}

/* Make stream `to` wait for everything issued on `from` so far. */
int fast_gh_fence(struct fast_bctx *b, void *from, void *to, struct fast_err *err)
{
	int rc;

	if (from == to)
		return 0;
	if ((rc = fast_gpu_event_record(b->fence, from, err)) < 0)
		return rc;
	return fast_gpu_stream_wait_event(to, b->fence, err);
}

int fast_gh_move_chain(struct fast_bctx *b, int to, struct fast_err *err)
{
	int rc;

	if (b->chain == to)
		return 0;
	if ((rc = fast_gh_fence(b, fast_gh_chain(b), fast_gh_stream_of(b, to), err)) < 0)
		return rc;
	b->chain = to;
	return 0;
}

/* --- bounce buffers ------------------------------------------------------------ */

int fast_gh_bump_get(struct fast_bctx *b, struct bump *m, uint64_t n, char **out,
		    struct fast_err *err)
{
	uint64_t need = (n + 255) / 256 * 256;
	int rc;

	if (m->used + need > m->cap) {
		/* replace: keep the old one alive (in flight, maybe mapped) */
		uint64_t cap = m->cap * 2 > m->used + need ? m->cap * 2 : (m->used + need) * 2;
		char *p = NULL;
		if (m->base) {
			if ((rc = fast_gh_grow((void **)&b->retired, &b->cap_retired, b->nretired + 1,
				       sizeof *b->retired, err)) < 0)
				return rc;
			b->retired_dev = realloc(b->retired_dev, b->cap_retired * sizeof *b->retired_dev);
			if (!b->retired_dev)
				return fast_err_set(err, FAST_ENOMEM, "GPU backend: out of memory");
			b->retired[b->nretired] = m->base;
			b->retired_dev[b->nretired++] = m->device;
		}
		if (m->device) {
			if ((rc = fast_gpu_malloc((void **)&p, cap, err)) < 0)
				return rc;
			if ((rc = fast_gh_grow((void **)&b->regions, &b->cap_regions, b->nregions + 1,
				       sizeof *b->regions, err)) < 0)
				return rc;
			b->regions[b->nregions++] = (struct region){ p, cap, { 0 }, false };
		} else if ((rc = fast_gpu_host_alloc((void **)&p, cap, err)) < 0) {
			return rc;
		}
		m->base = p;
		m->cap = cap;
		m->used = 0;
	}
	*out = m->base + m->used;
	m->used += need;
	return 0;
}

/* --- regions and IPC ------------------------------------------------------------ */

struct region *fast_gh_region_of(struct fast_bctx *b, const void *p, uint64_t n)
{
	const char *c = p;
	for (size_t i = 0; i < b->nregions; i++)
		if (c >= b->regions[i].base && c + n <= b->regions[i].base + b->regions[i].size)
			return &b->regions[i];
	return NULL;
}

int fast_gh_open_handle(struct fast_bctx *b, const unsigned char *h, char **base, struct fast_err *err)
{
	int rc;
	void *p = NULL;

	for (size_t i = 0; i < b->nopened; i++)
		if (memcmp(b->opened[i].handle, h, FAST_GPU_IPC_HANDLE_BYTES) == 0) {
			*base = b->opened[i].base;
			return 0;
		}
	if ((rc = fast_gpu_ipc_open(h, &p, err)) < 0)
		return rc;
	if ((rc = fast_gh_grow((void **)&b->opened, &b->cap_opened, b->nopened + 1, sizeof *b->opened, err)) < 0)
		return rc;
	memcpy(b->opened[b->nopened].handle, h, FAST_GPU_IPC_HANDLE_BYTES);
	b->opened[b->nopened++].base = p;
	*base = p;
	return 0;
}

/* --- init / fini -------------------------------------------------------------------- */

/* Which ranks share a device (NCCL refuses them): the first pair, or -1. */
static int shared_device(const struct fast_bsetup *s, struct fast_bctx *b, int *pa, int *pb,
			 struct fast_err *err)
{
	unsigned char *ids, mine[FAST_GPU_UUID_BYTES + sizeof(int)];
	int leader = s->rank, rc;

	*pa = *pb = -1;
	b->host_of = calloc((size_t)s->size, sizeof *b->host_of);
	ids = calloc((size_t)s->size, sizeof mine);
	if (!b->host_of || !ids) {
		free(ids);
		return fast_err_set(err, FAST_ENOMEM, "GPU backend: out of memory");
	}
	MPI_Bcast(&leader, 1, MPI_INT, 0, s->host_comm);
	MPI_Allgather(&leader, 1, MPI_INT, b->host_of, 1, MPI_INT, s->comm);
	if ((rc = fast_gpu_device_uuid(b->device, mine, err)) < 0) {
		free(ids);
		return rc;
	}
	memcpy(mine + FAST_GPU_UUID_BYTES, &leader, sizeof leader);
	MPI_Allgather(mine, (int)sizeof mine, MPI_BYTE, ids, (int)sizeof mine, MPI_BYTE, s->comm);
	for (int i = 0; i < s->size && *pa < 0; i++)
		for (int j = i + 1; j < s->size; j++)
			if (memcmp(ids + (size_t)i * sizeof mine, ids + (size_t)j * sizeof mine, sizeof mine) == 0) {
				*pa = i;
				*pb = j;
				break;
			}
	free(ids);
	return 0;
}

/* One NCCL communicator per slot, from two unique ids of rank 0. */
static int ccl_init(const struct fast_bsetup *s, struct fast_bctx *b, struct fast_err *err)
{
	unsigned char id[2][FAST_GPU_NCCL_ID_BYTES] = { { 0 } };
	int ok = 1, all = 0, rc;

	if (s->rank == 0 && (fast_gpu_nccl_get_id(id[0], err) < 0 || fast_gpu_nccl_get_id(id[1], err) < 0))
		ok = 0;
	MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, s->comm);
	if (!all)
		return s->rank == 0 ? FAST_ERUNTIME
				    : fast_err_set(err, FAST_ERUNTIME, "nccl: rank 0 failed to get an id");
	MPI_Bcast(id, (int)sizeof id, MPI_BYTE, 0, s->comm);
	for (int k = 0; k < 2; k++)
		if ((rc = fast_gpu_nccl_init(&b->sl[k].ccl, s->size, id[k], s->rank, err)) < 0)
			return rc;
	return 0;
}

static int gpu_init(const struct fast_bsetup *s, struct fast_bctx **out, struct fast_err *err)
{
	struct fast_bctx *b = calloc(1, sizeof *b);
	int count = 0, local = 0, rc, shared_a, shared_b;
	const char *env = getenv("FAST_GPU_NCCL");

	if (!b)
		return fast_err_set(err, FAST_ENOMEM, "GPU backend: out of memory");
	b->comm = s->comm;
	b->rank = s->rank;
	b->size = s->size;
	b->chain = BASE;
	*out = b; /* fini cleans up whatever init reached */
	if ((rc = fast_gpu_device_count(&count, err)) < 0)
		return rc;
	if (count <= 0)
		return fast_err_set(err, FAST_ERUNTIME, "%s: no GPU visible to rank %d", fast_gpu_api_name(),
				    s->rank);
	MPI_Comm_rank(s->host_comm, &local);
	b->device = s->device >= 0 ? s->device : local % count;
	if (b->device >= count)
		return fast_err_set(err, FAST_EUSAGE, "--device %d: rank %d sees %d GPUs", b->device,
				    s->rank, count);
	if ((rc = fast_gpu_set_device(b->device, err)) < 0 ||
	    (rc = fast_gpu_stream_create(&b->own_stream, err)) < 0 ||
	    (rc = fast_gpu_event_create(&b->fence, err)) < 0)
		return rc;
	b->stream = b->own_stream;
	for (int k = 0; k < 2; k++) {
		b->sl[k].dbounce.device = true;
		if ((rc = fast_gpu_stream_create(&b->sl[k].stream, err)) < 0 ||
		    (rc = fast_gpu_event_create(&b->sl[k].ev_ready, err)) < 0 ||
		    (rc = fast_gpu_event_create(&b->sl[k].ev_h2d, err)) < 0)
			return rc;
	}
	if ((rc = shared_device(s, b, &shared_a, &shared_b, err)) < 0)
		return rc;
	b->use_ccl = fast_gpu_nccl_available() && shared_a < 0 && !(env && strcmp(env, "0") == 0);
	if (b->use_ccl && (rc = ccl_init(s, b, err)) < 0)
		return rc;
	if (s->notes && s->notes_len) {
		if (shared_a >= 0)
			snprintf(s->notes, s->notes_len,
				 "%s backend: ranks %d and %d share a GPU, so NCCL is off (it refuses that): inter-server messages go host-staged over MPI; intra-server ones use IPC",
				 fast_gpu_api_name(), shared_a, shared_b);
		else if (!b->use_ccl)
			snprintf(s->notes, s->notes_len,
				 "%s backend: %s: inter-server messages go host-staged over MPI; intra-server ones use IPC",
				 fast_gpu_api_name(),
				 fast_gpu_nccl_available() ? "FAST_GPU_NCCL=0" : "built without NCCL/RCCL");
		else
			snprintf(s->notes, s->notes_len,
				 "%s backend: NCCL for inter-server messages (a communicator and a stream per wave in flight), IPC for intra-server ones",
				 fast_gpu_api_name());
	}
	return 0;
}

static void slot_free(struct slot *q)
{
	if (q->ccl)
		fast_gpu_nccl_destroy(q->ccl);
	fast_gpu_free(q->dbounce.base);
	fast_gpu_host_free(q->hbounce.base);
	fast_gpu_event_destroy(q->ev_ready);
	fast_gpu_event_destroy(q->ev_h2d);
	fast_gpu_stream_destroy(q->stream);
	fast_mpi_reqs_free(&q->up);
	fast_mpi_reqs_free(&q->out);
	fast_mpi_reqs_free(&q->desc_reqs);
	free(q->out_desc);
	free(q->out_desc_peer);
	free(q->in);
	free(q->ssend);
	free(q->srecv);
	free(q->ops);
	free(q->acks);
}

static void gpu_fini(struct fast_bctx *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->nopened; i++)
		fast_gpu_ipc_close(b->opened[i].base);
	for (int k = 0; k < 2; k++)
		slot_free(&b->sl[k]);
	for (size_t i = 0; i < b->nretired; i++) {
		if (b->retired_dev[i])
			fast_gpu_free(b->retired[i]);
		else
			fast_gpu_host_free(b->retired[i]);
	}
	fast_gpu_event_destroy(b->fence);
	fast_gpu_stream_destroy(b->own_stream);
	free(b->regions);
	free(b->opened);
	free(b->retired);
	free(b->retired_dev);
	free(b->host_of);
	free(b);
}

/* --- memory ------------------------------------------------------------------------- */

static int gpu_alloc(struct fast_bctx *b, uint64_t n, void **out, struct fast_err *err)
{
	void *p = NULL;
	int rc;

	if ((rc = fast_gpu_malloc(&p, n, err)) < 0)
		return rc;
	if ((rc = fast_gh_grow((void **)&b->regions, &b->cap_regions, b->nregions + 1, sizeof *b->regions,
		       err)) < 0) {
		fast_gpu_free(p);
		return rc;
	}
	b->regions[b->nregions++] = (struct region){ p, n, { 0 }, false };
	*out = p;
	return 0;
}

static void gpu_free(struct fast_bctx *b, void *p)
{
	for (size_t i = 0; i < b->nregions; i++)
		if (b->regions[i].base == p) {
			b->regions[i] = b->regions[--b->nregions];
			break;
		}
	fast_gpu_free(p);
}

/* Host transfers run on the base stream, after the chain, and complete. */
static int host_transfer(struct fast_bctx *b, void *dst, const void *src, uint64_t n, int kind,
			 struct fast_err *err)
{
	int rc = fast_gh_move_chain(b, BASE, err);

	if (rc == 0)
		rc = fast_gpu_memcpy_async(dst, src, n, kind, b->stream, err);
	return rc < 0 ? rc : fast_gpu_stream_sync(b->stream, err);
}

static int gpu_upload(struct fast_bctx *b, void *dst, const void *host, uint64_t n,
		      struct fast_err *err)
{
	return host_transfer(b, dst, host, n, KIND_H2D, err);
}

static int gpu_download(struct fast_bctx *b, void *host, const void *src, uint64_t n,
			struct fast_err *err)
{
	return host_transfer(b, host, src, n, KIND_D2H, err);
}

static int gpu_copy(struct fast_bctx *b, void *dst, const void *src, uint64_t n,
		    struct fast_err *err)
{
	return fast_gpu_memcpy_async(dst, src, n, KIND_D2D, fast_gh_chain(b), err);
}

/* Every copy has completed; the chain is back on the base stream. */
static int gpu_sync(struct fast_bctx *b, struct fast_err *err)
{
	int rc = fast_gh_move_chain(b, BASE, err);

	return rc < 0 ? rc : fast_gpu_stream_sync(b->stream, err);
}

static int gpu_set_stream(struct fast_bctx *b, void *stream, void *ccl, struct fast_err *err)
{
	void *to = stream ? stream : b->own_stream;
	int rc = fast_gh_move_chain(b, BASE, err);

	if (rc == 0) /* what ran on the old base stays before what comes */
		rc = fast_gh_fence(b, b->stream, to, err);
	if (rc < 0)
		return rc;
	b->stream = to;
	if (ccl && !b->use_ccl)
		return fast_err_set(err, FAST_EUSAGE,
				    "an NCCL communicator was given, but NCCL is off in this context (shared GPUs, FAST_GPU_NCCL=0 or no NCCL)");
	b->user_ccl = ccl;
	return 0;
}

#define GPU_BACKEND(sym, nm)                 \
	const struct fast_backend sym = {    \
		.name = nm,                  \
		.in_flight = 2,              \
		.init = gpu_init,            \
		.fini = gpu_fini,            \
		.alloc = gpu_alloc,          \
		.free = gpu_free,            \
		.upload = gpu_upload,        \
		.download = gpu_download,    \
		.copy = gpu_copy,            \
		.wave_begin = fast_gh_wave_begin, \
		.send_up = fast_gh_send_up,      \
		.recv_up = fast_gh_recv_up,      \
		.send_out = fast_gh_send_out,    \
		.recv_out = fast_gh_recv_out,    \
		.wave_end = fast_gh_wave_end,    \
		.sync = gpu_sync,            \
		.set_stream = gpu_set_stream, \
	}

#if defined(FAST_WITH_CUDA)
GPU_BACKEND(fast_backend_cuda, "cuda");
#endif
#if defined(FAST_WITH_HIP)
GPU_BACKEND(fast_backend_hip, "hip");
#endif

#else
/* Host-only build: the GPU backends are not compiled (ISO C wants a
 * declaration in every translation unit). */
typedef int fast_backend_gpuhost_unused;
#endif
