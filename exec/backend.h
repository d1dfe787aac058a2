/*
 * backend.h - executor backends as tables of function pointers (NCCL's
 * transport style): where buffers live, how a rank copies locally, and how
 * a message travels to a peer on the same server (scale-up) or on another
 * server (scale-out).
 *
 * The engine (exec.c) drives the waves of a program (prog.h):
 *
 *	copy ... (pre-copies: packing, local transfers)
 *	wave_begin(slot)
 *	recv_up / recv_out ...   (posted, not completed)
 *	send_up / send_out ...
 *	wave_end(slot, ALL)      (every message posted in the slot has completed)
 *	copy ... (post-copies: unpacking into the receive buffer)
 *	... next wave ...
 *	sync                     (every copy has completed)
 *
 * A backend with in_flight 2 may have two waves posted, in slots w % 2: the
 * engine begins wave w (its messages go to slot w % 2 from wave_begin on)
 * before it ends wave w - 1, whose scale-up messages it may end first
 * (wave_end(slot, UP): those posted with send_up and recv_up); with
 * in_flight 1 every wave ends before the next begins (slot 0, ALL).  The
 * engine posts the messages of each ordered pair of ranks in the same
 * order on both sides, across waves too, so a backend may match them by
 * order.  wave_end leaves the slot that later posts go to as it was.
 * Buffers given to send/recv stay untouched until their wave_end.
 * Every function returns 0 or a negative FAST_E* code with err filled.
 *
 * Backends: "host" (backend_host.c: CPU memory, MPI point-to-point) and,
 * in GPU builds, "cuda" / "hip" (backend_gpuhost.c and backend_gpuwave.c on
 * top of the device primitives of backend_gpu.cu); all hold two waves.
 */
#ifndef FAST_EXEC_BACKEND_H
#define FAST_EXEC_BACKEND_H

#include "fast/common.h"

/* backend_gpu.cu (nvcc/hipcc) sees only the device primitives at the end. */
#ifndef FAST_BACKEND_NO_MPI
#include <mpi.h>

#include "fast/topo.h"

struct fast_bctx; /* a backend's private state */

/* What a backend learns at init. */
struct fast_bsetup {
	MPI_Comm comm;        /* the executor's private duplicate */
	MPI_Comm host_comm;   /* ranks on this host (MPI_COMM_TYPE_SHARED) */
	const struct fast_topo *topo;
	int rank, size;
	int device;           /* requested device, -1 = auto */
	char *notes;          /* backend writes human notes here (may stay empty) */
	size_t notes_len;
};

enum { FAST_WAVE_UP = 1, FAST_WAVE_ALL = 2 }; /* what wave_end waits for */

struct fast_backend {
	const char *name;
	uint32_t in_flight; /* waves it can have posted at once: 1 or 2 */
	int (*init)(const struct fast_bsetup *s, struct fast_bctx **out, struct fast_err *err);
	void (*fini)(struct fast_bctx *b);
	int (*alloc)(struct fast_bctx *b, uint64_t bytes, void **out, struct fast_err *err);
	void (*free)(struct fast_bctx *b, void *p);
	int (*upload)(struct fast_bctx *b, void *dst, const void *host, uint64_t n,
		      struct fast_err *err);
	int (*download)(struct fast_bctx *b, void *host, const void *src, uint64_t n,
			struct fast_err *err);
	int (*copy)(struct fast_bctx *b, void *dst, const void *src, uint64_t n,
		    struct fast_err *err);
	/* combine sums (prog.h FAST_POP_ADD, FAST_POP_ZERO): dst += src byte-wise
	 * with wrap, dst = 0.  NULL where the backend has no kernel for them:
	 * programs with sums are then refused when prepared. */
	int (*add)(struct fast_bctx *b, void *dst, const void *src, uint64_t n,
		   struct fast_err *err);
	int (*zero)(struct fast_bctx *b, void *dst, uint64_t n, struct fast_err *err);
	int (*wave_begin)(struct fast_bctx *b, uint32_t slot, struct fast_err *err);
	/* scale-up: peer on the same server */
	int (*send_up)(struct fast_bctx *b, int peer, const void *buf, uint64_t n,
		       struct fast_err *err);
	int (*recv_up)(struct fast_bctx *b, int peer, void *buf, uint64_t n,
		       struct fast_err *err);
	/* scale-out: peer on another server */
	int (*send_out)(struct fast_bctx *b, int peer, const void *buf, uint64_t n,
			struct fast_err *err);
	int (*recv_out)(struct fast_bctx *b, int peer, void *buf, uint64_t n,
			struct fast_err *err);
	int (*wave_end)(struct fast_bctx *b, uint32_t slot, int what, struct fast_err *err);
	int (*sync)(struct fast_bctx *b, struct fast_err *err);
	/* GPU backends: order work after a user stream and use a user NCCL
	 * communicator (NULL = the backend's own); NULL for host. */
	int (*set_stream)(struct fast_bctx *b, void *stream, void *nccl_comm,
			  struct fast_err *err);
};

/* Look up a compiled-in backend by name; NULL if unknown or not built. */
const struct fast_backend *fast_backend_find(const char *name);
/* "host", plus "cuda"/"hip" when compiled in, comma-separated. */
const char *fast_backend_list(void);

extern const struct fast_backend fast_backend_host;
#if defined(FAST_WITH_CUDA)
extern const struct fast_backend fast_backend_cuda;
#endif
#if defined(FAST_WITH_HIP)
extern const struct fast_backend fast_backend_hip;
#endif

/* Host-side MPI helpers shared by backends: point-to-point of any size
 * (split in blocks of 1 GiB since MPI counts are int), requests collected
 * in a growable list completed by fast_mpi_reqs_wait. */
struct fast_mpi_reqs {
	MPI_Request *r;
	size_t n, cap;
};
int fast_mpi_isend(struct fast_mpi_reqs *q, MPI_Comm comm, int peer, int tag,
		   const void *buf, uint64_t n, struct fast_err *err);
int fast_mpi_irecv(struct fast_mpi_reqs *q, MPI_Comm comm, int peer, int tag, void *buf,
		   uint64_t n, struct fast_err *err);
int fast_mpi_reqs_wait(struct fast_mpi_reqs *q, struct fast_err *err);
void fast_mpi_reqs_free(struct fast_mpi_reqs *q);
#define FAST_MPI_BLOCK (UINT64_C(1) << 30)
#define FAST_MPI_TAG_DATA 7301
#define FAST_MPI_TAG_DESC 7302
#define FAST_MPI_TAG_ACK 7303
#endif /* FAST_BACKEND_NO_MPI */

/* --- device primitives (backend_gpu.cu, GPU builds only) --------------------
 * C-callable wrappers over CUDA / HIP (and NCCL / RCCL when built in).  They
 * return 0 or a negative FAST_E* code with a message in err. */
#if defined(FAST_WITH_CUDA) || defined(FAST_WITH_HIP) || defined(FAST_GPU_CUDA) || \
	defined(FAST_GPU_HIP)
#define FAST_GPU_IPC_HANDLE_BYTES 64
#define FAST_GPU_UUID_BYTES 16
#define FAST_GPU_NCCL_ID_BYTES 128
struct fast_err;
#ifdef __cplusplus
extern "C" {
#endif
const char *fast_gpu_api_name(void); /* "cuda" or "hip" */
int fast_gpu_device_count(int *out, struct fast_err *err);
int fast_gpu_set_device(int dev, struct fast_err *err);
int fast_gpu_device_uuid(int dev, unsigned char uuid[FAST_GPU_UUID_BYTES], struct fast_err *err);
int fast_gpu_stream_create(void **stream, struct fast_err *err);
void fast_gpu_stream_destroy(void *stream);
int fast_gpu_stream_sync(void *stream, struct fast_err *err);
/* Events order streams (no timing): record marks what a stream has been
 * given so far; a stream waiting for it runs its later work after that;
 * event_sync blocks the host until it has run. */
int fast_gpu_event_create(void **event, struct fast_err *err);
void fast_gpu_event_destroy(void *event);
int fast_gpu_event_record(void *event, void *stream, struct fast_err *err);
int fast_gpu_stream_wait_event(void *stream, void *event, struct fast_err *err);
int fast_gpu_event_sync(void *event, struct fast_err *err);
int fast_gpu_malloc(void **p, uint64_t n, struct fast_err *err);
void fast_gpu_free(void *p);
int fast_gpu_host_alloc(void **p, uint64_t n, struct fast_err *err); /* pinned */
void fast_gpu_host_free(void *p);
/* kind: 0 device-to-device, 1 host-to-device, 2 device-to-host */
int fast_gpu_memcpy_async(void *dst, const void *src, uint64_t n, int kind, void *stream,
			  struct fast_err *err);
int fast_gpu_memset(void *p, int byte, uint64_t n, struct fast_err *err);
int fast_gpu_ipc_get(void *base, unsigned char handle[FAST_GPU_IPC_HANDLE_BYTES],
		     struct fast_err *err);
int fast_gpu_ipc_open(const unsigned char handle[FAST_GPU_IPC_HANDLE_BYTES], void **base,
		      struct fast_err *err);
void fast_gpu_ipc_close(void *base);
/* NCCL/RCCL: available() is 0 when the build has none. */
int fast_gpu_nccl_available(void);
int fast_gpu_nccl_get_id(unsigned char id[FAST_GPU_NCCL_ID_BYTES], struct fast_err *err);
int fast_gpu_nccl_init(void **comm, int nranks, const unsigned char id[FAST_GPU_NCCL_ID_BYTES],
		       int rank, struct fast_err *err);
void fast_gpu_nccl_destroy(void *comm);
int fast_gpu_nccl_group_start(struct fast_err *err);
int fast_gpu_nccl_group_end(struct fast_err *err);
int fast_gpu_nccl_send(void *comm, int peer, const void *buf, uint64_t n, void *stream,
		       struct fast_err *err);
int fast_gpu_nccl_recv(void *comm, int peer, void *buf, uint64_t n, void *stream,
		       struct fast_err *err);
#ifdef __cplusplus
}
#endif
#endif

#endif
