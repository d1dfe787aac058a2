/*
 * mock_gpu.c - the device primitives of backend.h (normally backend_gpu.cu)
 * on the CPU, so that the cuda backend's own logic (backend_gpuhost.c and
 * backend_gpuwave.c: the IPC get/acknowledge protocol, host staging, bounce
 * buffers, the allocation registry, the slots of two waves in flight and
 * the copy chain across streams) runs under mpirun without a GPU.
 *
 * "Device memory" is POSIX shared memory: an IPC handle is the name of the
 * shm object, so another process can map it, as CUDA IPC maps a peer's
 * allocation.  By default every rank reports the same device, so the
 * backend sees a shared GPU and keeps NCCL off, exactly as on a one-GPU
 * machine (host-staged scale-out).
 *
 * Streams are queues run as late as CUDA allows: a copy runs only when the
 * host waits for its stream (stream or event synchronize) or for a stream
 * that waits for it (stream_wait_event), so a copy the backend forgot to
 * order -- a peer reading bytes not yet packed, a stream reading what
 * another has not written, a host buffer reused before its upload --
 * delivers wrong bytes, which the runs' checks catch.  A cycle of waits
 * (a device deadlock) aborts.
 *
 * FAST_MOCK_NCCL=1: every rank has a device of its own and NCCL is there:
 * a message is a file in /dev/shm named by communicator, pair and its
 * order on that pair (NCCL matches by order per communicator).  A group's
 * sends run when it is issued, after what their stream holds (a device
 * progresses by itself; the host may block next); its receives wait on
 * their stream like copies and, run, wait for the file.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fast/common.h"

#define FAST_BACKEND_NO_MPI 1
#define FAST_GPU_CUDA 1
#include "exec/backend.h"

struct map {
	char *base;
	size_t size;
	char name[FAST_GPU_IPC_HANDLE_BYTES];
	int owner;
};

static struct map maps[4096];
static int nmaps, counter;

static struct map *find(const void *p)
{
	for (int i = 0; i < nmaps; i++)
		if (maps[i].base == p)
			return &maps[i];
	return NULL;
}

const char *fast_gpu_api_name(void)
{
	return "cuda";
}

int fast_gpu_device_count(int *out, struct fast_err *err)
{
	(void)err;
	*out = 1;
	return 0;
}

int fast_gpu_set_device(int dev, struct fast_err *err)
{
	(void)dev;
	(void)err;
	return 0;
}

int fast_gpu_device_uuid(int dev, unsigned char uuid[FAST_GPU_UUID_BYTES], struct fast_err *err)
{
	int pid = (int)getpid();

	(void)dev;
	(void)err;
	memset(uuid, 0x42, FAST_GPU_UUID_BYTES);
	if (getenv("FAST_MOCK_NCCL")) /* a device per rank */
		memcpy(uuid, &pid, sizeof pid);
	return 0;
}

/* --- streams and events: lazy queues --------------------------------------- */

struct mcomm;

struct mop { /* a copy, a wait for another stream's first `upto` ops, or an
	      * NCCL receive (comm set) */
	void *dst;
	const void *src;
	size_t n;
	struct mstream *on;
	uint64_t upto;
	struct mcomm *comm;
	int peer;
	uint64_t seq;
};

static void ccl_take(const struct mop *op);

struct mstream {
	struct mop *q;
	uint64_t base, n, done; /* ops ever given; q[i - base] is op i */
	size_t cap;
	bool running;
	uint64_t copies; /* ever given (FAST_MOCK_STATS) */
};

struct mevent {
	struct mstream *s;
	uint64_t upto;
};

static int push(struct mstream *s, struct mop op, struct fast_err *err)
{
	if (s->n - s->base == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		struct mop *q = realloc(s->q, cap * sizeof *q);
		if (!q)
			return fast_err_set(err, FAST_ENOMEM, "mock: out of memory");
		s->q = q;
		s->cap = cap;
	}
	s->q[s->n++ - s->base] = op;
	return 0;
}

/* Run a stream's ops up to op `upto` (exclusive), and what they wait for. */
static void run(struct mstream *s, uint64_t upto)
{
	if (s->done >= upto)
		return;
	if (s->running) {
		fprintf(stderr, "mock: streams wait for each other (a device deadlock)\n");
		abort();
	}
	s->running = true;
	while (s->done < upto) {
		struct mop op = s->q[s->done - s->base];
		if (op.on)
			run(op.on, op.upto);
		else if (op.comm)
			ccl_take(&op);
		else if (op.n && op.dst != op.src)
			memmove(op.dst, op.src, op.n);
		s->done++;
	}
	s->running = false;
	if (s->done == s->n) { /* all run: forget them */
		free(s->q);
		s->q = NULL;
		s->cap = 0;
		s->base = s->n;
	}
}

static struct mstream *streams[64]; /* for free's implicit synchronisation */
static int nstreams;
/* FAST_MOCK_STATS=1: said when the last stream goes (the backend's fini) */
static int used_streams;
static uint64_t waits;

int fast_gpu_stream_create(void **stream, struct fast_err *err)
{
	struct mstream *s;

	if (nstreams == (int)(sizeof streams / sizeof streams[0]))
		return fast_err_set(err, FAST_ENOMEM, "mock: too many streams");
	s = calloc(1, sizeof *s);
	if (!s)
		return fast_err_set(err, FAST_ENOMEM, "mock: out of memory");
	streams[nstreams++] = s;
	*stream = s;
	return 0;
}

/* cudaFree waits for the device: every queued copy runs. */
static void run_all(void)
{
	for (int i = 0; i < nstreams; i++)
		run(streams[i], streams[i]->n);
}

void fast_gpu_stream_destroy(void *stream)
{
	struct mstream *s = stream;

	if (!s)
		return;
	run(s, s->n); /* as CUDA: queued work still completes */
	used_streams += s->copies > 0;
	if (nstreams == 1 && getenv("FAST_MOCK_STATS"))
		fprintf(stderr, "mock: copies on %d streams, %llu cross-stream waits\n", used_streams,
			(unsigned long long)waits);
	for (int i = 0; i < nstreams; i++)
		if (streams[i] == s)
			streams[i] = streams[--nstreams];
	free(s->q);
	free(s);
}

int fast_gpu_stream_sync(void *stream, struct fast_err *err)
{
	struct mstream *s = stream;

	(void)err;
	run(s, s->n);
	return 0;
}

int fast_gpu_event_create(void **event, struct fast_err *err)
{
	struct mevent *e = calloc(1, sizeof *e);

	if (!e)
		return fast_err_set(err, FAST_ENOMEM, "mock: out of memory");
	*event = e;
	return 0;
}

void fast_gpu_event_destroy(void *event)
{
	free(event);
}

int fast_gpu_event_record(void *event, void *stream, struct fast_err *err)
{
	struct mevent *e = event;
	struct mstream *s = stream;

	(void)err;
	e->s = s;
	e->upto = s->n;
	return 0;
}

int fast_gpu_stream_wait_event(void *stream, void *event, struct fast_err *err)
{
	struct mevent *e = event;

	if (!e->s) /* never recorded: CUDA treats it as complete */
		return 0;
	waits++;
	return push(stream, (struct mop){ .on = e->s, .upto = e->upto }, err);
}

int fast_gpu_event_sync(void *event, struct fast_err *err)
{
	struct mevent *e = event;

	(void)err;
	if (e->s)
		run(e->s, e->upto);
	return 0;
}

int fast_gpu_malloc(void **p, uint64_t n, struct fast_err *err)
{
	struct map m = { 0 };
	int fd;

	if (nmaps == (int)(sizeof maps / sizeof maps[0]))
		return fast_err_set(err, FAST_ENOMEM, "mock: too many allocations");
	snprintf(m.name, sizeof m.name, "/fastmock.%d.%d", (int)getpid(), counter++);
	m.size = n ? (size_t)n : 1;
	fd = shm_open(m.name, O_CREAT | O_EXCL | O_RDWR, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)m.size) != 0)
		return fast_err_set(err, FAST_ERUNTIME, "mock: shm_open %s failed", m.name);
	m.base = mmap(NULL, m.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (m.base == MAP_FAILED)
		return fast_err_set(err, FAST_ERUNTIME, "mock: mmap failed");
	m.owner = 1;
	maps[nmaps++] = m;
	*p = m.base;
	return 0;
}

static void unmap(void *p, bool owner)
{
	struct map *m = find(p);

	if (!m || m->owner != owner)
		return;
	munmap(m->base, m->size);
	if (owner)
		shm_unlink(m->name);
	*m = maps[--nmaps];
}

void fast_gpu_free(void *p)
{
	run_all();
	unmap(p, true);
}

int fast_gpu_host_alloc(void **p, uint64_t n, struct fast_err *err)
{
	*p = malloc(n ? (size_t)n : 1);
	return *p ? 0 : fast_err_set(err, FAST_ENOMEM, "mock: out of memory");
}

void fast_gpu_host_free(void *p)
{
	run_all();
	free(p);
}

int fast_gpu_memcpy_async(void *dst, const void *src, uint64_t n, int kind, void *stream,
			  struct fast_err *err)
{
	(void)kind;
	((struct mstream *)stream)->copies++;
	return push(stream, (struct mop){ .dst = dst, .src = src, .n = (size_t)n }, err);
}

int fast_gpu_memset(void *p, int byte, uint64_t n, struct fast_err *err)
{
	(void)err;
	memset(p, byte, (size_t)n);
	return 0;
}

int fast_gpu_ipc_get(void *base, unsigned char handle[FAST_GPU_IPC_HANDLE_BYTES],
		     struct fast_err *err)
{
	struct map *m = find(base);

	if (!m || !m->owner)
		return fast_err_set(err, FAST_ERUNTIME, "mock: IPC handle of a pointer that is not an allocation base");
	memcpy(handle, m->name, FAST_GPU_IPC_HANDLE_BYTES);
	return 0;
}

int fast_gpu_ipc_open(const unsigned char handle[FAST_GPU_IPC_HANDLE_BYTES], void **base,
		      struct fast_err *err)
{
	struct map m = { 0 };
	struct stat st;
	int fd;

	memcpy(m.name, handle, sizeof m.name);
	m.name[sizeof m.name - 1] = '\0';
	fd = shm_open(m.name, O_RDWR, 0600);
	if (fd < 0 || fstat(fd, &st) != 0)
		return fast_err_set(err, FAST_ERUNTIME, "mock: cannot open IPC handle %s", m.name);
	m.size = (size_t)st.st_size;
	m.base = mmap(NULL, m.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (m.base == MAP_FAILED || nmaps == (int)(sizeof maps / sizeof maps[0]))
		return fast_err_set(err, FAST_ERUNTIME, "mock: cannot map IPC handle");
	maps[nmaps++] = m;
	*base = m.base;
	return 0;
}

void fast_gpu_ipc_close(void *base)
{
	unmap(base, false);
}

/* --- NCCL: messages as files ------------------------------------------------- */

struct mcomm {
	char id[40];
	int rank, n;
	uint64_t *sent, *taken; /* per peer: messages so far */
};

struct ccl_pending {
	bool send;
	struct mcomm *comm;
	int peer;
	void *buf;
	uint64_t n;
	struct mstream *stream;
};

static struct ccl_pending pending[4096];
static int npending, group_depth;

static void ccl_path(char *path, size_t len, const struct mcomm *c, int from, int to, uint64_t seq)
{
	snprintf(path, len, "/dev/shm/fastmockccl.%s.%d.%d.%llu", c->id, from, to,
		 (unsigned long long)seq);
}

static void die(const char *what, const char *path)
{
	fprintf(stderr, "mock nccl: %s %s\n", what, path);
	abort();
}

static void ccl_give(struct ccl_pending *p)
{
	char path[160], tmp[170];
	FILE *f;

	run(p->stream, p->stream->n); /* the bytes as the stream has them */
	ccl_path(path, sizeof path, p->comm, p->comm->rank, p->peer, p->comm->sent[p->peer]++);
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	f = fopen(tmp, "wb");
	if (!f || fwrite(p->buf, 1, (size_t)p->n, f) != (size_t)p->n || fclose(f) != 0 ||
	    rename(tmp, path) != 0)
		die("cannot write", tmp);
}

static void ccl_take(const struct mop *op)
{
	char path[160];
	FILE *f = NULL;

	ccl_path(path, sizeof path, op->comm, op->peer, op->comm->rank, op->seq);
	for (int t = 0; t < 120000 && !(f = fopen(path, "rb")); t++)
		usleep(500);
	if (!f)
		die("no message after 60 s (a device deadlock):", path);
	if (fread(op->dst, 1, op->n, f) != op->n || fgetc(f) != EOF)
		die("message of another length:", path);
	fclose(f);
	unlink(path);
}

int fast_gpu_nccl_available(void)
{
	return getenv("FAST_MOCK_NCCL") != NULL;
}

int fast_gpu_nccl_get_id(unsigned char id[FAST_GPU_NCCL_ID_BYTES], struct fast_err *err)
{
	static int made;

	(void)err;
	memset(id, 0, FAST_GPU_NCCL_ID_BYTES);
	snprintf((char *)id, 40, "%d-%d", (int)getpid(), made++);
	return 0;
}

int fast_gpu_nccl_init(void **comm, int nranks, const unsigned char id[FAST_GPU_NCCL_ID_BYTES],
		       int rank, struct fast_err *err)
{
	struct mcomm *c = calloc(1, sizeof *c);

	if (!c || !(c->sent = calloc((size_t)nranks, sizeof *c->sent)) ||
	    !(c->taken = calloc((size_t)nranks, sizeof *c->taken))) {
		if (c)
			free(c->sent);
		free(c);
		return fast_err_set(err, FAST_ENOMEM, "mock: out of memory");
	}
	memcpy(c->id, id, sizeof c->id - 1);
	c->rank = rank;
	c->n = nranks;
	*comm = c;
	return 0;
}

void fast_gpu_nccl_destroy(void *comm)
{
	struct mcomm *c = comm;

	if (!c)
		return;
	free(c->sent);
	free(c->taken);
	free(c);
}

int fast_gpu_nccl_group_start(struct fast_err *err)
{
	(void)err;
	group_depth++;
	return 0;
}

/* Issue the group: sends at once, receives on their streams. */
int fast_gpu_nccl_group_end(struct fast_err *err)
{
	int rc = 0;

	if (group_depth == 0)
		return fast_err_set(err, FAST_EUSAGE, "mock nccl: group end without start");
	if (--group_depth)
		return 0;
	for (int i = 0; i < npending; i++)
		if (pending[i].send)
			ccl_give(&pending[i]);
	for (int i = 0; i < npending && rc == 0; i++) {
		struct ccl_pending *p = &pending[i];
		if (!p->send)
			rc = push(p->stream, (struct mop){ .dst = p->buf, .n = (size_t)p->n, .comm = p->comm,
							    .peer = p->peer, .seq = p->comm->taken[p->peer]++ },
				  err);
	}
	npending = 0;
	return rc;
}

static int ccl_post(bool send, void *comm, int peer, const void *buf, uint64_t n, void *stream,
		    struct fast_err *err)
{
	struct mcomm *c = comm;
	int rc;

	if (peer < 0 || peer >= c->n)
		return fast_err_set(err, FAST_EUSAGE, "mock nccl: peer %d of %d ranks", peer, c->n);
	if (npending == (int)(sizeof pending / sizeof pending[0]))
		return fast_err_set(err, FAST_ENOMEM, "mock nccl: too many messages in a group");
	pending[npending++] = (struct ccl_pending){ send, c, peer, (void *)(uintptr_t)buf, n, stream };
	if (group_depth) /* else a group of one */
		return 0;
	group_depth = 1;
	rc = fast_gpu_nccl_group_end(err);
	return rc;
}

int fast_gpu_nccl_send(void *comm, int peer, const void *buf, uint64_t n, void *stream,
		       struct fast_err *err)
{
	return ccl_post(true, comm, peer, buf, n, stream, err);
}

int fast_gpu_nccl_recv(void *comm, int peer, void *buf, uint64_t n, void *stream,
		       struct fast_err *err)
{
	return ccl_post(false, comm, peer, buf, n, stream, err);
}
