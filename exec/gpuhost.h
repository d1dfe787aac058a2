/*
 * gpuhost.h - what the two halves of the cuda/hip backends share (not
 * installed): backend_gpuhost.c (set-up, memory, the copy chain, bounce
 * buffers, IPC handles, the backend table) and backend_gpuwave.c (posting
 * and ending the waves in flight).  The design is in backend_gpuhost.c's
 * opening comment.  Compiled only in GPU builds (FAST_WITH_CUDA/_HIP).
 */
#ifndef FAST_EXEC_GPUHOST_H
#define FAST_EXEC_GPUHOST_H

#include "exec/backend.h"

#define KIND_D2D 0
#define KIND_H2D 1
#define KIND_D2H 2
#define BASE (-1) /* the chain's stream: the base one (else a slot's) */

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
	bool out; /* scale-out (ended with ALL) or scale-up (with UP) */
	char *dev, *host;
	uint64_t len;
};

struct ccl_op { /* an NCCL message, issued with its wave's group */
	bool send;
	int peer;
	void *buf;
	uint64_t len;
};

/* A growable scratch area handed out by bumping, reset every wave of its
 * slot.  When it runs out mid-wave a larger one replaces it; the old one
 * lives until fini (peers may still have it mapped). */
struct bump {
	char *base;
	uint64_t cap, used;
	bool device;
};

/* Everything one wave in flight uses (slot w % 2). */
struct slot {
	void *stream, *ccl;       /* its NCCL stream and communicator */
	void *ev_ready, *ev_h2d;  /* chain before the group; after staged uploads */
	struct fast_mpi_reqs up, out, desc_reqs; /* scale-up (and IPC), scale-out */
	struct desc *out_desc; size_t nout_desc, cap_out_desc;
	int *out_desc_peer; size_t cap_out_desc_peer;
	struct ipc_recv *in; size_t nin, cap_in;
	struct staged *ssend; size_t nssend, cap_ssend;
	struct staged *srecv; size_t nsrecv, cap_srecv;
	struct ccl_op *ops; size_t nops, cap_ops;
	struct bump hbounce, dbounce;
	unsigned char *acks; size_t cap_acks;
	bool after_chain;  /* an NCCL message posted while the chain was elsewhere */
	bool up_done;      /* wave_end(UP) ran: group issued, scale-up complete */
	bool h2d_pending;  /* staged uploads read hbounce: wait before reuse */
};

struct fast_bctx {
	MPI_Comm comm;
	int rank, size, device;
	void *stream, *own_stream; /* base: the caller's (set_stream) or own */
	void *user_ccl;
	void *fence;               /* event moving the chain between streams */
	int chain;                 /* BASE or a slot */
	uint32_t cur;              /* slot that sends and receives go to */
	bool use_ccl;
	struct slot sl[2];
	int *host_of; /* per rank: world rank of its host's first rank */
	struct region *regions; size_t nregions, cap_regions;
	struct opened *opened; size_t nopened, cap_opened;
	char **retired; size_t nretired, cap_retired; /* old bounce buffers */
	bool *retired_dev;
	unsigned char ack;
};

/* backend_gpuhost.c */
int fast_gh_grow(void **arr, size_t *cap, size_t need, size_t size, struct fast_err *err);
void *fast_gh_stream_of(const struct fast_bctx *b, int at); /* BASE or a slot */
void *fast_gh_chain(const struct fast_bctx *b);             /* where copies go now */
/* Make `to` wait for everything issued on `from` so far. */
int fast_gh_fence(struct fast_bctx *b, void *from, void *to, struct fast_err *err);
/* Move the chain to stream `at` (BASE or a slot), fenced after where it was. */
int fast_gh_move_chain(struct fast_bctx *b, int at, struct fast_err *err);
int fast_gh_bump_get(struct fast_bctx *b, struct bump *m, uint64_t n, char **out,
		     struct fast_err *err);
/* The backend allocation holding [p, p + n), or NULL. */
struct region *fast_gh_region_of(struct fast_bctx *b, const void *p, uint64_t n);
/* A peer's allocation mapped (cached until fini). */
int fast_gh_open_handle(struct fast_bctx *b, const unsigned char *h, char **base,
			struct fast_err *err);

/* backend_gpuwave.c: the backend table's wave entries (backend.h) */
int fast_gh_wave_begin(struct fast_bctx *b, uint32_t slot, struct fast_err *err);
int fast_gh_send_up(struct fast_bctx *b, int peer, const void *buf, uint64_t n,
		    struct fast_err *err);
int fast_gh_recv_up(struct fast_bctx *b, int peer, void *buf, uint64_t n, struct fast_err *err);
int fast_gh_send_out(struct fast_bctx *b, int peer, const void *buf, uint64_t n,
		     struct fast_err *err);
int fast_gh_recv_out(struct fast_bctx *b, int peer, void *buf, uint64_t n, struct fast_err *err);
int fast_gh_wave_end(struct fast_bctx *b, uint32_t slot, int what, struct fast_err *err);

#endif
