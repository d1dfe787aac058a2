/*
 * backend_gpu.cu - device primitives for the cuda and hip backends, one
 * source for both (gpu_port.h): memory, copies on a stream, IPC handles,
 * device identity, and NCCL/RCCL point-to-point.  Everything is exposed as
 * C functions declared in backend.h; the MPI side of the backends lives in
 * backend_gpuhost.c (compiled by mpicc), so this file needs no MPI headers.
 *
 * Built by `make GPU=cuda` (nvcc -DFAST_GPU_CUDA, NCCL unless -DFAST_NO_NCCL)
 * or `make GPU=hip` (hipcc -DFAST_GPU_HIP, RCCL only with -DFAST_WITH_RCCL).
 */
#define FAST_BACKEND_NO_MPI 1

#include <stdio.h>
#include <string.h>

#include "exec/gpu_port.h"
/* include/fast/common.h has no C++ guards: its functions have C linkage */
extern "C" {
#include "fast/common.h"
}
#include "exec/backend.h"

static int gpu_fail(struct fast_err *err, gpuError_t e, const char *what)
{
	return fast_err_set(err, FAST_ERUNTIME, "%s: %s: %s", GPU_API_NAME, what, gpuGetErrorString(e));
}

#define GPU_TRY(call, what)                                \
	do {                                               \
		gpuError_t e_ = (call);                    \
		if (e_ != gpuSuccess)                      \
			return gpu_fail(err, e_, (what));  \
	} while (0)

extern "C" {

const char *fast_gpu_api_name(void)
{
	return GPU_API_NAME;
}

int fast_gpu_device_count(int *out, struct fast_err *err)
{
	int n = 0;
	GPU_TRY(gpuGetDeviceCount(&n), "device count");
	*out = n;
	return 0;
}

int fast_gpu_set_device(int dev, struct fast_err *err)
{
	GPU_TRY(gpuSetDevice(dev), "set device");
	return 0;
}

/* Identity of a device: its PCI bus id (domain:bus:device.function), which
 * the CUDA and HIP runtimes both give; two ranks on one host with the same
 * id share a GPU. */
int fast_gpu_device_uuid(int dev, unsigned char uuid[FAST_GPU_UUID_BYTES], struct fast_err *err)
{
	char bus[64] = { 0 };
	uint64_t h1, h2;

	GPU_TRY(gpuDeviceGetPCIBusId(bus, (int)sizeof bus, dev), "PCI bus id");
	h1 = fast_hash_bytes(FAST_HASH_INIT, bus, strlen(bus));
	h2 = fast_hash_bytes(h1 ^ UINT64_C(0x9E3779B97F4A7C15), bus, strlen(bus));
	memcpy(uuid, &h1, 8);
	memcpy(uuid + 8, &h2, 8);
	return 0;
}

int fast_gpu_stream_create(void **stream, struct fast_err *err)
{
	gpuStream_t s;
	GPU_TRY(gpuStreamCreateWithFlags(&s, gpuStreamNonBlocking), "stream create");
	*stream = (void *)s;
	return 0;
}

void fast_gpu_stream_destroy(void *stream)
{
	if (stream)
		gpuStreamDestroy((gpuStream_t)stream);
}

int fast_gpu_stream_sync(void *stream, struct fast_err *err)
{
	GPU_TRY(gpuStreamSynchronize((gpuStream_t)stream), "stream synchronize");
	return 0;
}

int fast_gpu_event_create(void **event, struct fast_err *err)
{
	gpuEvent_t e;
	GPU_TRY(gpuEventCreateWithFlags(&e, gpuEventDisableTiming), "event create");
	*event = (void *)e;
	return 0;
}

void fast_gpu_event_destroy(void *event)
{
	if (event)
		gpuEventDestroy((gpuEvent_t)event);
}

int fast_gpu_event_record(void *event, void *stream, struct fast_err *err)
{
	GPU_TRY(gpuEventRecord((gpuEvent_t)event, (gpuStream_t)stream), "event record");
	return 0;
}

int fast_gpu_stream_wait_event(void *stream, void *event, struct fast_err *err)
{
	GPU_TRY(gpuStreamWaitEvent((gpuStream_t)stream, (gpuEvent_t)event, 0), "stream wait event");
	return 0;
}

int fast_gpu_event_sync(void *event, struct fast_err *err)
{
	GPU_TRY(gpuEventSynchronize((gpuEvent_t)event), "event synchronize");
	return 0;
}

int fast_gpu_malloc(void **p, uint64_t n, struct fast_err *err)
{
	void *q = NULL;
	GPU_TRY(gpuMalloc(&q, (size_t)(n ? n : 1)), "device malloc");
	*p = q;
	return 0;
}

void fast_gpu_free(void *p)
{
	if (p)
		gpuFree(p);
}

int fast_gpu_host_alloc(void **p, uint64_t n, struct fast_err *err)
{
	void *q = NULL;
	GPU_TRY(gpuHostMalloc(&q, (size_t)(n ? n : 1)), "pinned host malloc");
	*p = q;
	return 0;
}

void fast_gpu_host_free(void *p)
{
	if (p)
		gpuHostFree(p);
}

int fast_gpu_memcpy_async(void *dst, const void *src, uint64_t n, int kind, void *stream,
			  struct fast_err *err)
{
	if (n == 0 || dst == src)
		return 0;
	GPU_TRY(gpuMemcpyAsync(dst, src, (size_t)n,
			       kind == 1 ? gpuMemcpyHostToDevice :
			       kind == 2 ? gpuMemcpyDeviceToHost : gpuMemcpyDeviceToDevice,
			       (gpuStream_t)stream),
		"memcpy");
	return 0;
}

int fast_gpu_memset(void *p, int byte, uint64_t n, struct fast_err *err)
{
	GPU_TRY(gpuMemset(p, byte, (size_t)n), "memset");
	return 0;
}

int fast_gpu_ipc_get(void *base, unsigned char handle[FAST_GPU_IPC_HANDLE_BYTES],
		     struct fast_err *err)
{
	gpuIpcMemHandle_t h;
	static_assert(sizeof h <= FAST_GPU_IPC_HANDLE_BYTES, "IPC handle larger than expected");
	memset(handle, 0, FAST_GPU_IPC_HANDLE_BYTES);
	GPU_TRY(gpuIpcGetMemHandle(&h, base), "IPC get handle");
	memcpy(handle, &h, sizeof h);
	return 0;
}

int fast_gpu_ipc_open(const unsigned char handle[FAST_GPU_IPC_HANDLE_BYTES], void **base,
		      struct fast_err *err)
{
	gpuIpcMemHandle_t h;
	void *p = NULL;
	memcpy(&h, handle, sizeof h);
	GPU_TRY(gpuIpcOpenMemHandle(&p, h, gpuIpcMemLazyEnablePeerAccess), "IPC open handle");
	*base = p;
	return 0;
}

void fast_gpu_ipc_close(void *base)
{
	if (base)
		gpuIpcCloseMemHandle(base);
}

/* --- NCCL / RCCL ------------------------------------------------------------- */

#if defined(FAST_HAVE_CCL)
static int ccl_fail(struct fast_err *err, ncclResult_t r, const char *what)
{
	return fast_err_set(err, FAST_ERUNTIME, "nccl: %s: %s", what, ncclGetErrorString(r));
}
#define CCL_TRY(call, what)                                \
	do {                                               \
		ncclResult_t r_ = (call);                  \
		if (r_ != ncclSuccess)                     \
			return ccl_fail(err, r_, (what));  \
	} while (0)

int fast_gpu_nccl_available(void)
{
	return 1;
}

int fast_gpu_nccl_get_id(unsigned char id[FAST_GPU_NCCL_ID_BYTES], struct fast_err *err)
{
	ncclUniqueId u;
	static_assert(sizeof u == FAST_GPU_NCCL_ID_BYTES, "ncclUniqueId size");
	CCL_TRY(ncclGetUniqueId(&u), "get unique id");
	memcpy(id, &u, sizeof u);
	return 0;
}

int fast_gpu_nccl_init(void **comm, int nranks, const unsigned char id[FAST_GPU_NCCL_ID_BYTES],
		       int rank, struct fast_err *err)
{
	ncclUniqueId u;
	ncclComm_t c;
	memcpy(&u, id, sizeof u);
	CCL_TRY(ncclCommInitRank(&c, nranks, u, rank), "communicator init");
	*comm = (void *)c;
	return 0;
}

void fast_gpu_nccl_destroy(void *comm)
{
	if (comm)
		ncclCommDestroy((ncclComm_t)comm);
}

int fast_gpu_nccl_group_start(struct fast_err *err)
{
	CCL_TRY(ncclGroupStart(), "group start");
	return 0;
}

int fast_gpu_nccl_group_end(struct fast_err *err)
{
	CCL_TRY(ncclGroupEnd(), "group end");
	return 0;
}

int fast_gpu_nccl_send(void *comm, int peer, const void *buf, uint64_t n, void *stream,
		       struct fast_err *err)
{
	CCL_TRY(ncclSend(buf, (size_t)n, ncclUint8, peer, (ncclComm_t)comm, (gpuStream_t)stream), "send");
	return 0;
}

int fast_gpu_nccl_recv(void *comm, int peer, void *buf, uint64_t n, void *stream,
		       struct fast_err *err)
{
	CCL_TRY(ncclRecv(buf, (size_t)n, ncclUint8, peer, (ncclComm_t)comm, (gpuStream_t)stream), "recv");
	return 0;
}
#else
static int no_ccl(struct fast_err *err)
{
	return fast_err_set(err, FAST_EUSAGE, "%s build without NCCL/RCCL", GPU_API_NAME);
}

int fast_gpu_nccl_available(void)
{
	return 0;
}

int fast_gpu_nccl_get_id(unsigned char id[FAST_GPU_NCCL_ID_BYTES], struct fast_err *err)
{
	(void)id;
	return no_ccl(err);
}

int fast_gpu_nccl_init(void **comm, int nranks, const unsigned char id[FAST_GPU_NCCL_ID_BYTES],
		       int rank, struct fast_err *err)
{
	(void)comm, (void)nranks, (void)id, (void)rank;
	return no_ccl(err);
}

void fast_gpu_nccl_destroy(void *comm)
{
	(void)comm;
}

int fast_gpu_nccl_group_start(struct fast_err *err)
{
	return no_ccl(err);
}

int fast_gpu_nccl_group_end(struct fast_err *err)
{
	return no_ccl(err);
}

int fast_gpu_nccl_send(void *comm, int peer, const void *buf, uint64_t n, void *stream,
		       struct fast_err *err)
{
	(void)comm, (void)peer, (void)buf, (void)n, (void)stream;
	return no_ccl(err);
}

int fast_gpu_nccl_recv(void *comm, int peer, void *buf, uint64_t n, void *stream,
		       struct fast_err *err)
{
	(void)comm, (void)peer, (void)buf, (void)n, (void)stream;
	return no_ccl(err);
}
#endif

} /* extern "C" */
