/*
 * exec.c - the plan execution engine: a context (communicator, backend,
 * staging arena, plan cache), preparing programs (compiling on the fly,
 * agreeing across ranks, fitting the staging cap) and running them wave by
 * wave through the backend (see exec.h and prog.c).
 *
 * Every decision that changes which collectives run (cache hit or miss,
 * number of passes, failure) is made collectively with MPI_Allreduce, so a
 * failure on one rank becomes a failure on every rank, never a hang.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "exec/internal.h"
#include "fast/check.h"
#include "fast/sim.h"

struct fast_exec {
	MPI_Comm comm, host_comm;
	int rank, size;
	struct fast_topo topo;
	struct fast_exec_opts opts;
	char backend_name[16], algo[32];
	const struct fast_backend *be;
	struct fast_bctx *bctx;
	void *arena;
	uint64_t arena_bytes;
	struct fast_cache cache;
	struct fast_exec_stats stats;
	char notes[1024];
};

void fast_exec_opts_default(struct fast_exec_opts *o)
{
	memset(o, 0, sizeof *o);
	o->backend = "host";
	o->algo = "fast";
	/* --algo auto on token traffic chooses by simulation, as every
	 * command does: every rank the same plan */
	fast_sim_algo_opts_default(&o->algo_opts);
	o->device = -1;
}

const struct fast_backend *fast_backend_find(const char *name)
{
	if (!name || strcmp(name, "host") == 0)
		return &fast_backend_host;
#if defined(FAST_WITH_CUDA)
	if (strcmp(name, "cuda") == 0)
		return &fast_backend_cuda;
#endif
#if defined(FAST_WITH_HIP)
	if (strcmp(name, "hip") == 0)
		return &fast_backend_hip;
#endif
	return NULL;
}

const char *fast_backend_list(void)
{
#if defined(FAST_WITH_CUDA)
	return "host, cuda";
#elif defined(FAST_WITH_HIP)
	return "host, hip";
#else
	return "host";
#endif
}

static int mpi_fail(struct fast_err *err, int mrc, const char *what)
{
	char msg[MPI_MAX_ERROR_STRING];
	int len = 0;

	if (MPI_Error_string(mrc, msg, &len) != MPI_SUCCESS)
		snprintf(msg, sizeof msg, "error %d", mrc);
	return fast_err_set(err, FAST_ERUNTIME, "%s: %s", what, msg);
}

/* Every rank learns whether all succeeded: returns rc unchanged where this
 * rank failed, FAST_ERUNTIME where another did. */
static int agree(struct fast_exec *x, int rc, struct fast_err *err)
{
	int mine = rc < 0 ? rc : 0, worst = 0, who = rc < 0 ? x->rank : INT_MAX, first = 0;

	if (MPI_Allreduce(&mine, &worst, 1, MPI_INT, MPI_MIN, x->comm) != MPI_SUCCESS)
		return fast_err_set(err, FAST_ERUNTIME, "MPI_Allreduce failed");
	if (worst == 0)
		return 0;
	if (MPI_Allreduce(&who, &first, 1, MPI_INT, MPI_MIN, x->comm) != MPI_SUCCESS)
		return fast_err_set(err, FAST_ERUNTIME, "MPI_Allreduce failed");
	if (rc < 0)
		return rc;
	return fast_err_set(err, worst, "rank %d failed (see its message)", first);
}

int fast_exec_agree(MPI_Comm comm, const struct fast_agree *f, size_t n, struct fast_err *err)
{
	uint64_t *v = fast_calloc(2 * n + 1, sizeof *v), *all = NULL, *mx = NULL;
	char text[2][FAST_NAME_MAX];
	int rank = 0, size = 0, other = -1, rc = 0;
	size_t k;

	mx = fast_calloc(2 * n + 1, sizeof *mx);
	if (!v || !mx) {
		free(v);
		free(mx);
		return fast_err_set(err, FAST_ENOMEM, "executor: out of memory");
	}
	for (k = 0; k < n; k++) {
		v[2 * k] = f[k].value;
		v[2 * k + 1] = ~f[k].value; /* its maximum is the complement of the minimum */
	}
	if (MPI_Allreduce(v, mx, (int)(2 * n), MPI_UINT64_T, MPI_MAX, comm) != MPI_SUCCESS) {
		rc = fast_err_set(err, FAST_ERUNTIME, "MPI_Allreduce failed");
		goto out;
	}
	for (k = 0; k < n && mx[2 * k] == ~mx[2 * k + 1]; k++)
		;
	if (k == n)
		goto out;
	/* field k differs somewhere: find the first rank that differs from rank 0 */
	MPI_Comm_rank(comm, &rank);
	MPI_Comm_size(comm, &size);
	all = fast_calloc((size_t)size, sizeof *all);
	if (!all) {
		rc = fast_err_set(err, FAST_ENOMEM, "executor: out of memory");
		goto out;
	}
	if (MPI_Allgather(&f[k].value, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, comm) != MPI_SUCCESS) {
		rc = fast_err_set(err, FAST_ERUNTIME, "MPI_Allgather failed");
		goto out;
	}
	for (int r = 1; r < size && other < 0; r++)
		if (all[r] != all[0])
			other = r;
	for (int i = 0; i < 2; i++) {
		int root = i ? other : 0;
		if (f[k].text)
			snprintf(text[i], sizeof text[i], "'%.*s'", FAST_NAME_MAX - 3, f[k].text);
		else
			snprintf(text[i], sizeof text[i], "%llu", (unsigned long long)all[root]);
		if (MPI_Bcast(text[i], (int)sizeof text[i], MPI_CHAR, root, comm) != MPI_SUCCESS) {
			rc = fast_err_set(err, FAST_ERUNTIME, "MPI_Bcast failed");
			goto out;
		}
	}
	if (f[k].contents)
		rc = fast_err_set(err, f[k].code, "ranks disagree on %s: rank %d loaded other contents than rank 0",
				  f[k].name, other);
	else
		rc = fast_err_set(err, f[k].code, "ranks disagree on %s: rank 0 has %s, rank %d has %s",
				  f[k].name, text[0], other, text[1]);
out:
	free(v);
	free(mx);
	free(all);
	return rc;
}

int fast_exec_create(MPI_Comm comm, const struct fast_topo *topo,
		     const struct fast_exec_opts *opts, struct fast_exec **out,
		     struct fast_err *err)
{
	struct fast_exec *x;
	struct fast_exec_opts defaults;
	struct fast_bsetup setup;
	int rc, mrc;

	if (!opts) {
		fast_exec_opts_default(&defaults);
		opts = &defaults;
	}
	x = calloc(1, sizeof *x);
	if (!x)
		return fast_err_set(err, FAST_ENOMEM, "executor: out of memory");
	x->comm = x->host_comm = MPI_COMM_NULL;
	x->topo = *topo;
	x->opts = *opts;
	snprintf(x->backend_name, sizeof x->backend_name, "%s", opts->backend ? opts->backend : "host");
	snprintf(x->algo, sizeof x->algo, "%s", opts->algo ? opts->algo : "fast");
	x->opts.backend = x->backend_name;
	x->opts.algo = x->algo;
	if ((mrc = MPI_Comm_dup(comm, &x->comm)) != MPI_SUCCESS) {
		free(x);
		return mpi_fail(err, mrc, "MPI_Comm_dup");
	}
	MPI_Comm_rank(x->comm, &x->rank);
	MPI_Comm_size(x->comm, &x->size);
	/* what every rank must have alike, before anything else is collective */
	{
		struct fast_agree f[] = {
			{ "the backend", FAST_EUSAGE, fast_hash_bytes(FAST_HASH_INIT, x->backend_name, strlen(x->backend_name)),
			  x->backend_name, false },
			{ "the algorithm", FAST_EUSAGE, fast_hash_bytes(FAST_HASH_INIT, x->algo, strlen(x->algo)),
			  x->algo, false },
			{ "the staging cap", FAST_EUSAGE, opts->max_staging, NULL, false },
			{ "the waves in flight", FAST_EUSAGE, opts->in_flight, NULL, false },
			{ "the servers", FAST_EINPUT, topo->servers, NULL, false },
			{ "the GPUs per server", FAST_EINPUT, topo->gpus, NULL, false },
			{ "the topology", FAST_EINPUT, fast_topo_hash(topo), NULL, true },
		};
		if ((rc = fast_exec_agree(x->comm, f, sizeof f / sizeof *f, err)) < 0)
			goto fail;
	}
	x->be = fast_backend_find(x->backend_name);
	if (!x->be)
		rc = fast_err_set(err, FAST_EUSAGE,
				  "backend '%.20s' is not available in this build (available: %s; GPU backends need make GPU=cuda|hip)",
				  opts->backend, fast_backend_list());
	else if (opts->in_flight > FAST_IN_FLIGHT_MAX)
		rc = fast_err_set(err, FAST_EUSAGE, "%u waves in flight: give 1 or 2 (0: the backend's most)",
				  opts->in_flight);
	else if (strcmp(x->algo, "mpi") != 0 && !fast_algo_known(x->algo))
		rc = fast_err_set(err, FAST_EUSAGE, "unknown algorithm '%.32s'", opts->algo);
	else if ((uint64_t)x->size != (uint64_t)topo->servers * topo->gpus)
		rc = fast_err_set(err, FAST_EINPUT,
				  "%d MPI ranks for a topology of %u GPUs (%u servers x %u): run one rank per GPU",
				  x->size, topo->servers * topo->gpus, topo->servers, topo->gpus);
	if (rc < 0)
		goto fail; /* alike on every rank: the values agree */
	if ((mrc = MPI_Comm_split_type(x->comm, MPI_COMM_TYPE_SHARED, x->rank, MPI_INFO_NULL,
				       &x->host_comm)) != MPI_SUCCESS) {
		rc = mpi_fail(err, mrc, "MPI_Comm_split_type");
		goto fail;
	}
	if ((rc = fast_cache_init(&x->cache, opts->cache_entries, err)) < 0)
		goto fail;
	memset(&setup, 0, sizeof setup);
	setup.comm = x->comm;
	setup.host_comm = x->host_comm;
	setup.topo = &x->topo;
	setup.rank = x->rank;
	setup.size = x->size;
	setup.device = opts->device;
	setup.notes = x->notes;
	setup.notes_len = sizeof x->notes;
	rc = x->be->init(&setup, &x->bctx, err);
	rc = agree(x, rc, err);
	if (rc < 0)
		goto fail;
	*out = x;
	return 0;
fail:
	if (x->bctx)
		x->be->fini(x->bctx);
	fast_cache_free(&x->cache);
	if (x->host_comm != MPI_COMM_NULL)
		MPI_Comm_free(&x->host_comm);
	MPI_Comm_free(&x->comm);
	free(x);
	return rc;
}

void fast_exec_destroy(struct fast_exec *x)
{
	if (!x)
		return;
	if (x->arena)
		x->be->free(x->bctx, x->arena);
	fast_cache_free(&x->cache);
	if (x->bctx)
		x->be->fini(x->bctx);
	if (x->host_comm != MPI_COMM_NULL)
		MPI_Comm_free(&x->host_comm);
	if (x->comm != MPI_COMM_NULL)
		MPI_Comm_free(&x->comm);
	free(x);
}

int fast_exec_rank(const struct fast_exec *x)
{
	return x->rank;
}

const struct fast_backend *fast_exec_backend(const struct fast_exec *x)
{
	return x->be;
}

MPI_Comm fast_exec_comm(const struct fast_exec *x)
{
	return x->comm;
}

const char *fast_exec_algo(const struct fast_exec *x)
{
	return x->algo;
}

struct fast_bctx *fast_exec_bctx(const struct fast_exec *x)
{
	return x->bctx;
}

uint32_t fast_exec_in_flight(const struct fast_exec *x)
{
	uint32_t k = x->opts.in_flight ? x->opts.in_flight : x->be->in_flight;

	return k < x->be->in_flight ? k : x->be->in_flight;
}

const char *fast_exec_notes(const struct fast_exec *x)
{
	return x->notes;
}

void fast_exec_get_stats(const struct fast_exec *x, struct fast_exec_stats *out)
{
	*out = x->stats;
	out->cache_hits = x->cache.hits;
	out->cache_misses = x->cache.misses;
}

int fast_exec_alloc(struct fast_exec *x, uint64_t bytes, void **out, struct fast_err *err)
{
	return x->be->alloc(x->bctx, bytes ? bytes : 1, out, err);
}

void fast_exec_free(struct fast_exec *x, void *p)
{
	if (p)
		x->be->free(x->bctx, p);
}

int fast_exec_upload(struct fast_exec *x, void *dst, const void *host, uint64_t bytes,
		     struct fast_err *err)
{
	return bytes ? x->be->upload(x->bctx, dst, host, bytes, err) : 0;
}

int fast_exec_download(struct fast_exec *x, void *host, const void *src, uint64_t bytes,
		       struct fast_err *err)
{
	return bytes ? x->be->download(x->bctx, host, src, bytes, err) : 0;
}

/* --- prepare ------------------------------------------------------------------ */

/* What a prepared program serves: a byte matrix, or a token matrix's
 * groups (m, kind DISPATCH or COMBINE). */
struct serves {
	const uint64_t *D;
	const struct fast_matrix *m;
};

static uint64_t key_of(const struct fast_exec *x, const struct fast_plan *plan,
		       const struct serves *sv)
{
	uint32_t ng = x->topo.servers * x->topo.gpus;
	uint64_t h = FAST_HASH_INIT;

	h = fast_hash_bytes(h, &x->opts.max_staging, sizeof x->opts.max_staging);
	h = fast_hash_bytes(h, &x->opts.in_flight, sizeof x->opts.in_flight);
	if (plan) {
		uint64_t ph = fast_plan_hash(plan);
		h = fast_hash_bytes(h, "plan", 4);
		h = fast_hash_bytes(h, &ph, sizeof ph);
	} else {
		const struct fast_algo_opts *o = &x->opts.algo_opts;
		uint32_t fields[4] = { (uint32_t)o->stages, (uint32_t)o->order, (uint32_t)o->balance,
				       (uint32_t)o->dedup };
		h = fast_hash_bytes(h, x->algo, strlen(x->algo));
		h = fast_hash_bytes(h, fields, sizeof fields);
		h = fast_hash_bytes(h, &o->peers, sizeof o->peers);
		uint64_t th = fast_topo_hash(&x->topo);
		h = fast_hash_bytes(h, &o->chunk_bytes, sizeof o->chunk_bytes);
		h = fast_hash_bytes(h, &th, sizeof th);
	}
	return sv->m ? fast_groups_hash(h, sv->m) : fast_matrix_hash(h, sv->D, ng);
}

/* The plan one prepare runs: compiled here (when none is given) or given,
 * and its one view (validated once, expanded once when compact). */
struct prepared {
	struct fast_plan compiled;
	bool have_compiled, open;
	struct fast_matrix bytes; /* a byte matrix's (sv->D, borrowed) */
	struct fast_plan_view v;  /* of the plan, with sv->m or &bytes */
};

static void prepared_close(struct prepared *pp)
{
	if (pp->open)
		fast_plan_view_close(&pp->v);
	if (pp->have_compiled)
		fast_plan_free(&pp->compiled);
	pp->open = pp->have_compiled = false;
}

/* Compile (when plan is NULL) or take plan, open its view, and prove a
 * given plan correct for what it serves (check.h): a wrong plan fails
 * here, on every rank, with the checker's message. */
static int prepared_open(struct fast_exec *x, const struct fast_plan *plan,
			 const struct serves *sv, struct prepared *pp, struct fast_err *err)
{
	const struct fast_matrix *m = sv->m ? sv->m : &pp->bytes;
	int rc;

	memset(pp, 0, sizeof *pp);
	if (!sv->m)
		pp->bytes = fast_matrix_of(sv->D, fast_topo_ngpus(&x->topo));
	if (!plan) {
		const struct fast_algo *a = fast_algo_find(x->algo);
		if (sv->m && (!a || !a->compile_tokens || x->opts.algo_opts.dedup != FAST_DEDUP_SERVER))
			rc = fast_err_set(err, FAST_EUSAGE,
					  "algorithm '%s' compiles no token plans (with this dedup): run the token traffic's byte matrix",
					  x->algo);
		else
			rc = fast_compile(x->algo, &x->topo, m, &x->opts.algo_opts, &pp->compiled,
					  err);
		if (rc < 0)
			return rc;
		pp->have_compiled = true;
		plan = &pp->compiled;
	} else if ((rc = fast_plan_fits_topo(plan, &x->topo, err)) < 0) {
		return rc;
	}
	/* token plans: their REDIST steps expand over the groups */
	rc = fast_plan_view_open(&pp->v, plan, m, err);
	if (rc < 0) {
		prepared_close(pp);
		return rc;
	}
	pp->open = true;
	if (!pp->have_compiled &&
	    (rc = fast_plan_check(&pp->v, &x->topo, err)) < 0) {
		prepared_close(pp);
		return rc;
	}
	return 0;
}


static int prepare(struct fast_exec *x, const struct fast_plan *plan, const struct serves *sv,
		   struct fast_prog **prog, struct fast_err *err)
{
	uint64_t key = key_of(x, plan, sv);
	struct fast_prog *g = fast_cache_get(&x->cache, key);
	struct prepared pp;
	int hit = g != NULL, all_hit = 0, rc = 0;
	uint32_t passes = 1;
	double t0;

	x->stats.calls++;
	if (MPI_Allreduce(&hit, &all_hit, 1, MPI_INT, MPI_MIN, x->comm) != MPI_SUCCESS)
		return fast_err_set(err, FAST_ERUNTIME, "MPI_Allreduce failed");
	if (all_hit) {
		*prog = g;
		return 0;
	}
	if (hit) {
		/* another rank missed: rebuild everywhere, count it as a miss */
		x->cache.hits--;
		x->cache.misses++;
	}
	t0 = fast_now();
	rc = prepared_open(x, plan, sv, &pp, err);
	rc = agree(x, rc, err);
	if (rc < 0) {
		prepared_close(&pp);
		return rc;
	}
	/* every rank must run the same plan */
	{
		uint64_t h = fast_plan_hash(pp.v.x), lo = 0, hi = 0;
		if (MPI_Allreduce(&h, &lo, 1, MPI_UINT64_T, MPI_MIN, x->comm) != MPI_SUCCESS ||
		    MPI_Allreduce(&h, &hi, 1, MPI_UINT64_T, MPI_MAX, x->comm) != MPI_SUCCESS) {
			prepared_close(&pp);
			return fast_err_set(err, FAST_ERUNTIME, "MPI_Allreduce failed");
		}
		if (lo != hi) {
			prepared_close(&pp);
			return fast_err_set(err, FAST_ERUNTIME,
					    "ranks built different plans (hash %016llx here, range %016llx..%016llx): inputs differ between ranks",
					    (unsigned long long)h, (unsigned long long)lo,
					    (unsigned long long)hi);
		}
	}
	for (;;) {
		uint64_t staging = 0, worst = 0;
		uint32_t k = fast_exec_in_flight(x);
		g = NULL;
		rc = sv->m ? fast_prog_build_tokens(&pp.v, sv->m, (uint32_t)x->rank, passes, k, &g, err)
			   : fast_prog_build(&pp.v, sv->D, (uint32_t)x->rank, passes, k, &g, err);
		if (rc == 0 && g->sums && (!x->be->add || !x->be->zero))
			rc = fast_err_set(err, FAST_EUSAGE,
					  "the %s backend cannot sum combine contributions: run combine plans on the host backend",
					  x->be->name);
		rc = agree(x, rc, err);
		if (rc < 0)
			break;
		staging = g->staging;
		if (MPI_Allreduce(&staging, &worst, 1, MPI_UINT64_T, MPI_MAX, x->comm) != MPI_SUCCESS) {
			rc = fast_err_set(err, FAST_ERUNTIME, "MPI_Allreduce failed");
			break;
		}
		if (!x->opts.max_staging || worst <= x->opts.max_staging)
			break;
		fast_prog_free(g);
		g = NULL;
		if (passes >= 1u << 16) {
			rc = fast_err_set(err, FAST_EUSAGE,
					  "--max-staging %llu: cannot be met (still %llu bytes with %u passes)",
					  (unsigned long long)x->opts.max_staging,
					  (unsigned long long)worst, passes);
			break;
		}
		/* staging shrinks about linearly with passes */
		{
			uint64_t want = (worst + x->opts.max_staging - 1) / x->opts.max_staging;
			uint64_t next = (uint64_t)passes * want;
			passes = next > (uint64_t)passes * 2 ? (uint32_t)(next < (1u << 16) ? next : (1u << 16))
							      : passes * 2;
		}
	}
	prepared_close(&pp);
	if (rc < 0) {
		fast_prog_free(g);
		return rc;
	}
	x->stats.last_synth_s = fast_now() - t0;
	x->stats.synth_s += x->stats.last_synth_s;
	fast_cache_put(&x->cache, key, g);
	*prog = g;
	return 0;
}

int fast_exec_prepare(struct fast_exec *x, const struct fast_plan *plan,
		      const struct fast_matrix *m, struct fast_prog **prog, struct fast_err *err)
{
	struct serves sv = { NULL, NULL };

	if (m->kind == FAST_TRAFFIC_BYTES)
		sv.D = m->bytes;
	else
		sv.m = m;
	return prepare(x, plan, &sv, prog, err);
}

/* --- run ------------------------------------------------------------------------ */

static inline void *where(struct fast_exec *x, const struct fast_loc *l, const void *sendbuf,
			  const uint64_t *sd, void *recvbuf, const uint64_t *rd)
{
	switch (l->kind) {
	case LOC_SEND:
		return (char *)(uintptr_t)sendbuf + sd[l->msg] + l->off;
	case LOC_RECV:
		return (char *)recvbuf + rd[l->msg] + l->off;
	default:
		return (char *)x->arena + l->off;
	}
}

static int run_copy(struct fast_exec *x, const struct fast_pcopy *c, const void *sendbuf,
		    const uint64_t *sd, void *recvbuf, const uint64_t *rd, struct fast_err *err)
{
	void *dst = where(x, &c->dst, sendbuf, sd, recvbuf, rd);
	const void *src = where(x, &c->src, sendbuf, sd, recvbuf, rd);

	switch (c->op) {
	case FAST_POP_ADD:
		return x->be->add(x->bctx, dst, src, c->len, err);
	case FAST_POP_ZERO:
		return x->be->zero(x->bctx, dst, c->len, err);
	default:
		return x->be->copy(x->bctx, dst, src, c->len, err);
	}
}

/* Where a run of a program is (fast_exec_run). */
struct run {
	struct fast_exec *x;
	const struct fast_prog *g;
	const void *sendbuf;
	const uint64_t *sd, *rd;
	void *recvbuf;
	struct fast_err *err;
};

static int copies(const struct run *r, uint32_t from, uint32_t to)
{
	int rc = 0;

	for (uint32_t i = from; i < to && rc == 0; i++)
		rc = run_copy(r->x, &r->g->copies[i], r->sendbuf, r->sd, r->recvbuf, r->rd, r->err);
	return rc;
}

static int recvs(const struct run *r, const struct fast_pwave *wv)
{
	const struct fast_backend *be = r->x->be;
	int rc = 0;

	for (uint32_t i = 0; i < wv->nrecv && rc == 0; i++) {
		const struct fast_pmsg *m = &r->g->recvs[wv->recv0 + i];
		void *p = where(r->x, &m->at, r->sendbuf, r->sd, r->recvbuf, r->rd);
		rc = m->out ? be->recv_out(r->x->bctx, (int)m->peer, p, m->len, r->err)
			    : be->recv_up(r->x->bctx, (int)m->peer, p, m->len, r->err);
	}
	return rc;
}

static int sends(const struct run *r, uint32_t from, uint32_t to)
{
	const struct fast_backend *be = r->x->be;
	int rc = 0;

	for (uint32_t i = from; i < to && rc == 0; i++) {
		const struct fast_pmsg *m = &r->g->sends[i];
		const void *p = where(r->x, &m->at, r->sendbuf, r->sd, r->recvbuf, r->rd);
		rc = m->out ? be->send_out(r->x->bctx, (int)m->peer, p, m->len, r->err)
			    : be->send_up(r->x->bctx, (int)m->peer, p, m->len, r->err);
	}
	return rc;
}

/* Has the wave messages (so a slot of the backend)? */
static bool messages(const struct fast_pwave *wv)
{
	return wv->nsend || wv->nrecv;
}

/* One wave at a time: its copies, messages, end, post-copies. */
static int run_one(const struct run *r, const struct fast_pwave *wv)
{
	const struct fast_backend *be = r->x->be;
	int rc = copies(r, wv->pre0, wv->pre0 + wv->npre);

	if (rc == 0 && messages(wv)) {
		rc = be->wave_begin(r->x->bctx, 0, r->err);
		if (rc == 0)
			rc = recvs(r, wv);
		if (rc == 0)
			rc = sends(r, wv->send0, wv->send0 + wv->nsend);
		if (rc == 0)
			rc = be->wave_end(r->x->bctx, 0, FAST_WAVE_ALL, r->err);
	}
	return rc ? rc : copies(r, wv->post0, wv->post0 + wv->npost);
}

/* Two waves in flight (prog.h): wave w's receives and its FREE ops go out
 * while wave w - 1 runs; then, as w - 1's scale-up messages and then all
 * of it complete, w's UP and ALL ops (after w - 1's post-copies). */
static int run_two(const struct run *r, const struct fast_pwave *wv, const struct fast_pwave *prev,
		   uint32_t slot)
{
	const struct fast_backend *be = r->x->be;
	struct fast_bctx *b = r->x->bctx;
	uint32_t pre[4] = { wv->pre0, wv->pre0 + wv->pre_at[0], wv->pre0 + wv->pre_at[1],
			    wv->pre0 + wv->npre };
	uint32_t snd[4] = { wv->send0, wv->send0 + wv->send_at[0], wv->send0 + wv->send_at[1],
			    wv->send0 + wv->nsend };
	int rc = 0;

	for (int c = 0; c <= FAST_FLIGHT_ALL && rc == 0; c++) {
		if (c > 0 && prev) { /* what class c waits for of the wave before */
			rc = messages(prev) ? be->wave_end(b, slot ^ 1,
							   c == FAST_FLIGHT_UP ? FAST_WAVE_UP : FAST_WAVE_ALL,
							   r->err)
					    : 0;
			if (rc == 0 && c == FAST_FLIGHT_ALL)
				rc = copies(r, prev->post0, prev->post0 + prev->npost);
		}
		if (rc == 0)
			rc = copies(r, pre[c], pre[c + 1]);
		if (rc == 0 && c == 0 && messages(wv)) {
			rc = be->wave_begin(b, slot, r->err);
			if (rc == 0)
				rc = recvs(r, wv);
		}
		/* (ending the wave before leaves the slot posts go to as it was) */
		if (rc == 0 && messages(wv))
			rc = sends(r, snd[c], snd[c + 1]);
	}
	return rc;
}

int fast_exec_run(struct fast_exec *x, const struct fast_prog *g, const void *sendbuf,
		  const uint64_t *sd, void *recvbuf, const uint64_t *rd, struct fast_err *err)
{
	const struct fast_backend *be = x->be;
	struct fast_bctx *b = x->bctx;
	struct run r = { x, g, sendbuf, sd, rd, recvbuf, err };
	bool two = g->in_flight > 1 && be->in_flight > 1;
	int rc = 0;

	if (g->staging > x->arena_bytes) {
		void *p = NULL;
		if (x->arena)
			be->free(b, x->arena);
		x->arena = NULL;
		x->arena_bytes = 0;
		if ((rc = be->alloc(b, g->staging, &p, err)) < 0)
			return rc;
		x->arena = p;
		x->arena_bytes = g->staging;
	}
	x->stats.staging_bytes = g->staging;
	x->stats.passes = g->passes;
	x->stats.in_flight = two ? 2 : 1;
	x->stats.plan_hash = g->plan_hash;
	for (size_t w = 0; w < g->nwaves && rc == 0; w++)
		rc = two ? run_two(&r, &g->waves[w], w ? &g->waves[w - 1] : NULL, (uint32_t)(w & 1))
			 : run_one(&r, &g->waves[w]);
	if (rc == 0 && two && g->nwaves) { /* the last wave */
		const struct fast_pwave *last = &g->waves[g->nwaves - 1];
		if (messages(last))
			rc = be->wave_end(b, (uint32_t)((g->nwaves - 1) & 1), FAST_WAVE_ALL, err);
		if (rc == 0)
			rc = copies(&r, last->post0, last->post0 + last->npost);
	}
	if (rc == 0)
		rc = be->sync(b, err);
	return rc;
}

int fast_exec_run_mpi(struct fast_exec *x, const uint64_t *D, const void *sendbuf,
		      const uint64_t *sd, void *recvbuf, const uint64_t *rd, struct fast_err *err)
{
	int n = x->size, r = x->rank, rc = 0, mrc;
	int *sc = calloc((size_t)n, sizeof *sc), *sdi = calloc((size_t)n, sizeof *sdi);
	int *rc_ = calloc((size_t)n, sizeof *rc_), *rdi = calloc((size_t)n, sizeof *rdi);
	uint64_t send_extent = 0, recv_extent = 0;
	void *hs = NULL, *hr = NULL;
	bool staged = strcmp(x->be->name, "host") != 0;

	if (!sc || !sdi || !rc_ || !rdi) {
		rc = fast_err_set(err, FAST_ENOMEM, "mpi baseline: out of memory");
		goto out;
	}
	for (int i = 0; i < n; i++) {
		uint64_t s = D[(size_t)r * n + i], v = D[(size_t)i * n + r];
		if (s > INT_MAX || v > INT_MAX || sd[i] > INT_MAX || rd[i] > INT_MAX) {
			rc = fast_err_set(err, FAST_EUSAGE,
					  "mpi baseline: MPI_Alltoallv counts and displacements are int: %s exceeds 2 GiB - 1",
					  s > INT_MAX || v > INT_MAX ? "a message" : "a displacement");
			break;
		}
		sc[i] = (int)s;
		sdi[i] = (int)sd[i];
		rc_[i] = (int)v;
		rdi[i] = (int)rd[i];
		if (sd[i] + s > send_extent)
			send_extent = sd[i] + s;
		if (rd[i] + v > recv_extent)
			recv_extent = rd[i] + v;
	}
	rc = agree(x, rc, err);
	if (rc < 0)
		goto out;
	if (staged) {
		/* GPU backends: Debian's Open MPI is not CUDA-aware; stage through host */
		hs = malloc(send_extent ? send_extent : 1);
		hr = malloc(recv_extent ? recv_extent : 1);
		if (!hs || !hr) {
			rc = fast_err_set(err, FAST_ENOMEM, "mpi baseline: out of memory");
			goto out;
		}
		/* the receive buffer too: bytes no message covers stay as they were */
		if ((rc = fast_exec_download(x, hs, sendbuf, send_extent, err)) < 0 ||
		    (rc = fast_exec_download(x, hr, recvbuf, recv_extent, err)) < 0)
			goto out;
	}
	mrc = MPI_Alltoallv(staged ? hs : sendbuf, sc, sdi, MPI_BYTE, staged ? hr : recvbuf, rc_, rdi,
			    MPI_BYTE, x->comm);
	if (mrc != MPI_SUCCESS) {
		rc = mpi_fail(err, mrc, "MPI_Alltoallv");
		goto out;
	}
	if (staged)
		rc = fast_exec_upload(x, recvbuf, hr, recv_extent, err);
out:
	free(sc);
	free(sdi);
	free(rc_);
	free(rdi);
	free(hs);
	free(hr);
	return rc;
}
