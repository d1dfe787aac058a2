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
 *    one group per wave (ncclGroupStart/End), on CUDA builds when every
 *    rank has a GPU of its own.  NCCL refuses two ranks on one GPU: ranks
 *    exchange device identities (PCI bus id + host) at init and, if any two
 *    share a device, or with FAST_GPU_NCCL=0 in the environment, every such
 *    message goes host-staged over MPI instead (copy to pinned host memory,
 *    MPI point-to-point, copy back).  HIP builds stage through the host
 *    unless built with RCCL (-DFAST_WITH_RCCL).  Debian's Open MPI is not
 *    CUDA-aware, hence the staging.
 *
 * All device work goes on one stream: the backend's own, or the caller's
 * (set_stream, the stream-ordered fast_alltoallv_cuda/_hip).
 */
#if defined(FAST_WITH_CUDA) || defined(FAST_WITH_HIP)

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec/backend.h"

#define KIND_D2D 0
#define KIND_H2D 1
#define KIND_D2H 2

struct region { /* a device allocation peers may read through IPC */
	char *base;
	uint64_t size;
	unsigned char handle[FAST_GPU_IPC_HANDLE_BYTES];
	bool have_handle;
};

struct opened {
	unsigned char handle[FAST_GPU_IPC_HANDLE_BYTES];
	char *base;
};

struct desc {
	unsigned char handle[FAST_GPU_IPC_HANDLE_BYTES];
	uint64_t off, len;
};

struct ipc_recv {
	int peer;
	char *dst;
	uint64_t len;
	struct desc d;
};

struct staged { /* host-staged message */
	int peer;
	char *dev, *host;
	uint64_t len;
};

/* A growable scratch area handed out by bumping, reset every wave.  When it
 * runs out mid-wave a larger one replaces it from the next wave on; the old
 * one lives until fini (peers may still have it mapped). */
struct bump {
	char *base;
	uint64_t cap, used, want;
	bool device;
};

struct fast_bctx {
	MPI_Comm comm;
	int rank, size, device;
	void *stream, *own_stream;
	void *ccl, *user_ccl;
	bool use_ccl, ccl_group_open;
	int *host_of; /* per rank: world rank of its host's first rank */
	struct region *regions; size_t nregions, cap_regions;
	struct opened *opened; size_t nopened, cap_opened;
	struct fast_mpi_reqs reqs, desc_reqs;
	struct desc *out_desc; size_t nout_desc, cap_out_desc;
	int *out_desc_peer; size_t cap_out_desc_peer;
	struct ipc_recv *in; size_t nin, cap_in;
	struct staged *ssend; size_t nssend, cap_ssend;
	struct staged *srecv; size_t nsrecv, cap_srecv;
	struct bump hbounce, dbounce;
	char **retired; size_t nretired, cap_retired; /* old bounce buffers: (ptr) */
	bool *retired_dev;
	unsigned char ack;
	unsigned char *acks; size_t cap_acks;
};

static int grow(void **arr, size_t *cap, size_t need, size_t size, struct fast_err *err)
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

/* --- bounce buffers ------------------------------------------------------------ */

static int bump_get(struct fast_bctx *b, struct bump *m, uint64_t n, char **out,
		    struct fast_err *err)
{
	uint64_t need = (n + 255) / 256 * 256;
	int rc;

	if (m->used + need > m->cap) {
		/* replace: keep the old one alive (in-flight this wave, maybe mapped) */
		uint64_t cap = m->cap * 2 > m->used + need ? m->cap * 2 : (m->used + need) * 2;
		char *p = NULL;
		if (m->base) {
			if ((rc = grow((void **)&b->retired, &b->cap_retired, b->nretired + 1,
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
			if ((rc = grow((void **)&b->regions, &b->cap_regions, b->nregions + 1,
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

static struct region *region_of(struct fast_bctx *b, const void *p, uint64_t n)
{
	const char *c = p;
	for (size_t i = 0; i < b->nregions; i++)
		if (c >= b->regions[i].base && c + n <= b->regions[i].base + b->regions[i].size)
			return &b->regions[i];
	return NULL;
}

static int open_handle(struct fast_bctx *b, const unsigned char *h, char **base, struct fast_err *err)
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
	if ((rc = grow((void **)&b->opened, &b->cap_opened, b->nopened + 1, sizeof *b->opened, err)) < 0)
		return rc;
	memcpy(b->opened[b->nopened].handle, h, FAST_GPU_IPC_HANDLE_BYTES);
	b->opened[b->nopened++].base = p;
	*base = p;
	return 0;
}

/* --- init / fini -------------------------------------------------------------------- */

static int gpu_init(const struct fast_bsetup *s, struct fast_bctx **out, struct fast_err *err)
{
	struct fast_bctx *b = calloc(1, sizeof *b);
	unsigned char *ids = NULL, mine[FAST_GPU_UUID_BYTES + sizeof(int)];
	int count = 0, local = 0, leader, rc, shared_a = -1, shared_b = -1;
	const char *env = getenv("FAST_GPU_NCCL");

	if (!b)
		return fast_err_set(err, FAST_ENOMEM, "GPU backend: out of memory");
	b->comm = s->comm;
	b->rank = s->rank;
	b->size = s->size;
	b->dbounce.device = true;
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
	    (rc = fast_gpu_stream_create(&b->own_stream, err)) < 0)
		return rc;
	b->stream = b->own_stream;
	/* hosts and devices of every rank */
	b->host_of = calloc((size_t)s->size, sizeof *b->host_of);
	ids = calloc((size_t)s->size, sizeof mine);
	if (!b->host_of || !ids) {
		free(ids);
		return fast_err_set(err, FAST_ENOMEM, "GPU backend: out of memory");
	}
	leader = s->rank;
	MPI_Bcast(&leader, 1, MPI_INT, 0, s->host_comm);
	MPI_Allgather(&leader, 1, MPI_INT, b->host_of, 1, MPI_INT, s->comm);
	if ((rc = fast_gpu_device_uuid(b->device, mine, err)) < 0) {
		free(ids);
		return rc;
	}
	memcpy(mine + FAST_GPU_UUID_BYTES, &leader, sizeof leader);
	MPI_Allgather(mine, (int)sizeof mine, MPI_BYTE, ids, (int)sizeof mine, MPI_BYTE, s->comm);
	for (int i = 0; i < s->size && shared_a < 0; i++)
		for (int j = i + 1; j < s->size; j++)
			if (memcmp(ids + (size_t)i * sizeof mine, ids + (size_t)j * sizeof mine, sizeof mine) == 0) {
				shared_a = i;
				shared_b = j;
				break;
			}
	free(ids);
	b->use_ccl = fast_gpu_nccl_available() && shared_a < 0 && !(env && strcmp(env, "0") == 0);
	if (b->use_ccl) {
		unsigned char id[FAST_GPU_NCCL_ID_BYTES] = { 0 };
		int ok = 1, all = 0;
		if (s->rank == 0 && fast_gpu_nccl_get_id(id, err) < 0)
			ok = 0;
		MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, s->comm);
		if (!all)
			return s->rank == 0 ? FAST_ERUNTIME
					    : fast_err_set(err, FAST_ERUNTIME, "nccl: rank 0 failed to get an id");
		MPI_Bcast(id, FAST_GPU_NCCL_ID_BYTES, MPI_BYTE, 0, s->comm);
		if ((rc = fast_gpu_nccl_init(&b->ccl, s->size, id, s->rank, err)) < 0)
			return rc;
	}
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
				 "%s backend: NCCL for inter-server messages, IPC for intra-server ones",
				 fast_gpu_api_name());
	}
	return 0;
}

static void gpu_fini(struct fast_bctx *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->nopened; i++)
		fast_gpu_ipc_close(b->opened[i].base);
	if (b->ccl)
		fast_gpu_nccl_destroy(b->ccl);
	for (size_t i = 0; i < b->nretired; i++) {
		if (b->retired_dev[i])
			fast_gpu_free(b->retired[i]);
		else
			fast_gpu_host_free(b->retired[i]);
	}
	fast_gpu_free(b->dbounce.base);
	fast_gpu_host_free(b->hbounce.base);
	fast_gpu_stream_destroy(b->own_stream);
	fast_mpi_reqs_free(&b->reqs);
	fast_mpi_reqs_free(&b->desc_reqs);
	free(b->regions);
	free(b->opened);
	free(b->out_desc);
	free(b->out_desc_peer);
	free(b->in);
	free(b->ssend);
	free(b->srecv);
	free(b->retired);
	free(b->retired_dev);
	free(b->acks);
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
	if ((rc = grow((void **)&b->regions, &b->cap_regions, b->nregions + 1, sizeof *b->regions,
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

static int gpu_upload(struct fast_bctx *b, void *dst, const void *host, uint64_t n,
		      struct fast_err *err)
{
	int rc = fast_gpu_memcpy_async(dst, host, n, KIND_H2D, b->stream, err);
	return rc < 0 ? rc : fast_gpu_stream_sync(b->stream, err);
}

static int gpu_download(struct fast_bctx *b, void *host, const void *src, uint64_t n,
			struct fast_err *err)
{
	int rc = fast_gpu_memcpy_async(host, src, n, KIND_D2H, b->stream, err);
	return rc < 0 ? rc : fast_gpu_stream_sync(b->stream, err);
}

static int gpu_copy(struct fast_bctx *b, void *dst, const void *src, uint64_t n,
		    struct fast_err *err)
{
	return fast_gpu_memcpy_async(dst, src, n, KIND_D2D, b->stream, err);
}

/* --- waves -------------------------------------------------------------------------- */

/* One wave at a time (in_flight 1): slot is always 0, what always ALL. */
static int gpu_wave_begin(struct fast_bctx *b, uint32_t slot, struct fast_err *err)
{
	(void)slot;
	b->hbounce.used = 0;
	b->dbounce.used = 0;
	b->nout_desc = b->nin = b->nssend = b->nsrecv = 0;
	b->ccl_group_open = false;
	(void)err;
	return 0;
}

static bool ipc_peer(const struct fast_bctx *b, int peer)
{
	return b->host_of[peer] == b->host_of[b->rank];
}

static int ccl_open(struct fast_bctx *b, struct fast_err *err)
{
	int rc;

	if (b->ccl_group_open)
		return 0;
	if ((rc = fast_gpu_nccl_group_start(err)) < 0)
		return rc;
	b->ccl_group_open = true;
	return 0;
}

static void *ccl_comm(const struct fast_bctx *b)
{
	return b->user_ccl ? b->user_ccl : b->ccl;
}

static int staged_send(struct fast_bctx *b, int peer, const void *buf, uint64_t n,
		       struct fast_err *err)
{
	char *h;
	int rc;

	if ((rc = bump_get(b, &b->hbounce, n, &h, err)) < 0 ||
	    (rc = fast_gpu_memcpy_async(h, buf, n, KIND_D2H, b->stream, err)) < 0 ||
	    (rc = grow((void **)&b->ssend, &b->cap_ssend, b->nssend + 1, sizeof *b->ssend, err)) < 0)
		return rc;
	b->ssend[b->nssend++] = (struct staged){ peer, (char *)(uintptr_t)buf, h, n };
	return 0;
}

static int staged_recv(struct fast_bctx *b, int peer, void *buf, uint64_t n, struct fast_err *err)
{
	char *h;
	int rc;

	if ((rc = bump_get(b, &b->hbounce, n, &h, err)) < 0 ||
	    (rc = grow((void **)&b->srecv, &b->cap_srecv, b->nsrecv + 1, sizeof *b->srecv, err)) < 0)
		return rc;
	b->srecv[b->nsrecv++] = (struct staged){ peer, buf, h, n };
	/* posting now is safe: the host buffer is not read until wave_end */
	return fast_mpi_irecv(&b->reqs, b->comm, peer, FAST_MPI_TAG_DATA, h, n, err);
}

static int gpu_send_up(struct fast_bctx *b, int peer, const void *buf, uint64_t n,
		       struct fast_err *err)
{
	struct region *r;
	struct desc d;
	int rc;

	if (!ipc_peer(b, peer))
		return b->use_ccl ? (ccl_open(b, err) < 0 ? FAST_ERUNTIME
				     : fast_gpu_nccl_send(ccl_comm(b), peer, buf, n, b->stream, err))
				  : staged_send(b, peer, buf, n, err);
	r = region_of(b, buf, n);
	if (!r) {
		char *bounce;
		if ((rc = bump_get(b, &b->dbounce, n, &bounce, err)) < 0 ||
		    (rc = fast_gpu_memcpy_async(bounce, buf, n, KIND_D2D, b->stream, err)) < 0)
			return rc;
		buf = bounce;
		r = region_of(b, buf, n);
	}
	if (!r->have_handle) {
		if ((rc = fast_gpu_ipc_get(r->base, r->handle, err)) < 0)
			return rc;
		r->have_handle = true;
	}
	memcpy(d.handle, r->handle, sizeof d.handle);
	d.off = (uint64_t)((const char *)buf - r->base);
	d.len = n;
	if ((rc = grow((void **)&b->out_desc, &b->cap_out_desc, b->nout_desc + 1, sizeof *b->out_desc,
		       err)) < 0 ||
	    (rc = grow((void **)&b->out_desc_peer, &b->cap_out_desc_peer, b->nout_desc + 1,
		       sizeof *b->out_desc_peer, err)) < 0)
		return rc;
	b->out_desc[b->nout_desc] = d;
	b->out_desc_peer[b->nout_desc++] = peer;
	return 0;
}

static int gpu_recv_up(struct fast_bctx *b, int peer, void *buf, uint64_t n, struct fast_err *err)
{
	int rc;

	if (!ipc_peer(b, peer))
		return b->use_ccl ? (ccl_open(b, err) < 0 ? FAST_ERUNTIME
				     : fast_gpu_nccl_recv(ccl_comm(b), peer, buf, n, b->stream, err))
				  : staged_recv(b, peer, buf, n, err);
	if ((rc = grow((void **)&b->in, &b->cap_in, b->nin + 1, sizeof *b->in, err)) < 0)
		return rc;
	b->in[b->nin].peer = peer;
	b->in[b->nin].dst = buf;
	b->in[b->nin].len = n;
	b->nin++;
	return 0;
}

static int gpu_send_out(struct fast_bctx *b, int peer, const void *buf, uint64_t n,
			struct fast_err *err)
{
	int rc;

	if (!b->use_ccl)
		return staged_send(b, peer, buf, n, err);
	if ((rc = ccl_open(b, err)) < 0)
		return rc;
	return fast_gpu_nccl_send(ccl_comm(b), peer, buf, n, b->stream, err);
}

static int gpu_recv_out(struct fast_bctx *b, int peer, void *buf, uint64_t n, struct fast_err *err)
{
	int rc;

	if (!b->use_ccl)
		return staged_recv(b, peer, buf, n, err);
	if ((rc = ccl_open(b, err)) < 0)
		return rc;
	return fast_gpu_nccl_recv(ccl_comm(b), peer, buf, n, b->stream, err);
}

static int gpu_wave_end(struct fast_bctx *b, uint32_t slot, int what, struct fast_err *err)
{
	int rc;

	(void)slot;
	(void)what;
	/* 1. NCCL work of the wave is queued on the stream */
	if (b->ccl_group_open) {
		b->ccl_group_open = false;
		if ((rc = fast_gpu_nccl_group_end(err)) < 0)
			return rc;
	}
	/* 2. descriptors in: posted before anything waits */
	if (b->nin) {
		for (size_t i = 0; i < b->nin; i++)
			if ((rc = fast_mpi_irecv(&b->desc_reqs, b->comm, b->in[i].peer, FAST_MPI_TAG_DESC,
						 &b->in[i].d, sizeof b->in[i].d, err)) < 0)
				return rc;
	}
	/* 3. packed bytes, D2H copies and (with NCCL) the wave's transfers done */
	if ((rc = fast_gpu_stream_sync(b->stream, err)) < 0)
		return rc;
	/* 4. what others may now read or receive */
	for (size_t i = 0; i < b->nssend; i++)
		if ((rc = fast_mpi_isend(&b->reqs, b->comm, b->ssend[i].peer, FAST_MPI_TAG_DATA,
					 b->ssend[i].host, b->ssend[i].len, err)) < 0)
			return rc;
	if (b->nout_desc) {
		if ((rc = grow((void **)&b->acks, &b->cap_acks, b->nout_desc, 1, err)) < 0)
			return rc;
		for (size_t i = 0; i < b->nout_desc; i++) {
			if ((rc = fast_mpi_isend(&b->reqs, b->comm, b->out_desc_peer[i], FAST_MPI_TAG_DESC,
						 &b->out_desc[i], sizeof b->out_desc[i], err)) < 0 ||
			    (rc = fast_mpi_irecv(&b->reqs, b->comm, b->out_desc_peer[i], FAST_MPI_TAG_ACK,
						 &b->acks[i], 1, err)) < 0)
				return rc;
		}
	}
	/* 5. IPC reads: copy from the peers' memory, then acknowledge */
	if (b->nin) {
		if ((rc = fast_mpi_reqs_wait(&b->desc_reqs, err)) < 0)
			return rc;
		for (size_t i = 0; i < b->nin; i++) {
			char *base;
			if (b->in[i].d.len != b->in[i].len)
				return fast_err_set(err, FAST_ERUNTIME,
						    "IPC: rank %d announced %llu bytes, %llu expected",
						    b->in[i].peer, (unsigned long long)b->in[i].d.len,
						    (unsigned long long)b->in[i].len);
			if ((rc = open_handle(b, b->in[i].d.handle, &base, err)) < 0 ||
			    (rc = fast_gpu_memcpy_async(b->in[i].dst, base + b->in[i].d.off, b->in[i].len,
							KIND_D2D, b->stream, err)) < 0)
				return rc;
		}
		if ((rc = fast_gpu_stream_sync(b->stream, err)) < 0)
			return rc;
		for (size_t i = 0; i < b->nin; i++)
			if ((rc = fast_mpi_isend(&b->reqs, b->comm, b->in[i].peer, FAST_MPI_TAG_ACK, &b->ack,
						 1, err)) < 0)
				return rc;
	}
	/* 6. everything of the wave completes; staged bytes go up to the device */
	if ((rc = fast_mpi_reqs_wait(&b->reqs, err)) < 0)
		return rc;
	for (size_t i = 0; i < b->nsrecv; i++)
		if ((rc = fast_gpu_memcpy_async(b->srecv[i].dev, b->srecv[i].host, b->srecv[i].len,
						KIND_H2D, b->stream, err)) < 0)
			return rc;
	/* the host bounce is reused from the next wave on */
	return b->nsrecv ? fast_gpu_stream_sync(b->stream, err) : 0;
}

static int gpu_sync(struct fast_bctx *b, struct fast_err *err)
{
	return fast_gpu_stream_sync(b->stream, err);
}

static int gpu_set_stream(struct fast_bctx *b, void *stream, void *ccl, struct fast_err *err)
{
	b->stream = stream ? stream : b->own_stream;
	if (ccl && !b->use_ccl)
		return fast_err_set(err, FAST_EUSAGE,
				    "an NCCL communicator was given, but NCCL is off in this context (shared GPUs, FAST_GPU_NCCL=0 or no NCCL)");
	b->user_ccl = ccl;
	return 0;
}

#define GPU_BACKEND(sym, nm)                 \
	const struct fast_backend sym = {    \
		.name = nm,                  \
		.in_flight = 1,              \
		.init = gpu_init,            \
		.fini = gpu_fini,            \
		.alloc = gpu_alloc,          \
		.free = gpu_free,            \
		.upload = gpu_upload,        \
		.download = gpu_download,    \
		.copy = gpu_copy,            \
		.wave_begin = gpu_wave_begin, \
		.send_up = gpu_send_up,      \
		.recv_up = gpu_recv_up,      \
		.send_out = gpu_send_out,    \
		.recv_out = gpu_recv_out,    \
		.wave_end = gpu_wave_end,    \
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
