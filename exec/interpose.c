/*
 * interpose.c - a PMPI interposer that replaces MPI_Alltoallv with the FAST
 * executor, for unmodified MPI programs:
 *
 *	FAST_PRESET=h200 FAST_SERVERS=2 FAST_GPUS=4 \
 *	mpirun -np 8 -x LD_PRELOAD=build/lib/libfast_interpose.so ./app
 *
 * Environment (read here, in exec/, never in lib/):
 *   FAST_TOPO=FILE | FAST_PRESET=NAME [FAST_SERVERS=N] [FAST_GPUS=G]
 *                          the topology; without one every call passes through
 *   FAST_ALGO=NAME         compiler (default fast; fanout, nccl, pxn, spreadout,
 *                          hier; "mpi" = always pass through)
 *   FAST_BACKEND=host      backend (host; cuda/hip in GPU builds, device buffers)
 *   FAST_MAX_STAGING=BYTES staging cap per rank
 *   FAST_INTERPOSE_VERBOSE=1  say on rank 0 what is intercepted and why not
 *   FAST_INTERPOSE_QUIET=1    say nothing, not even why every call passes
 *                          through
 *
 * When the interposer cannot work at all (no topology, or one whose N*G is
 * not the size of MPI_COMM_WORLD: FAST_PRESET without the shape), rank 0
 * of the first such call says why, once, with the variables that would
 * fix it: a preloaded interposer that silently does nothing is a trap.
 *
 * A call goes to PMPI_Alltoallv (the MPI library's own) when:
 *   - no topology is configured, or it cannot be loaded (said once);
 *   - the communicator's size is not the topology's N*G;
 *   - MPI_IN_PLACE is the send buffer;
 *   - a datatype is not contiguous bytes (size != extent, or a lower bound
 *     other than 0: vectors, structs with holes, resized types), or a count
 *     times size overflows;
 *   - FAST_ALGO=mpi, or a call re-enters from inside the executor.
 * The decision is agreed over the communicator (one MPI_Allreduce per call),
 * so every rank takes the same path even when their datatypes differ.
 * Contexts are created per communicator on first use (collective, as the
 * call itself is) and destroyed with it (fast_exec_for_comm: an attribute
 * with a delete callback).
 * Errors inside the executor print "fast interpose: ..." and return
 * MPI_ERR_OTHER on every rank.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/internal.h"

static int reentered;
static int configured = -1; /* -1 unknown, 0 pass through, 1 topology loaded */
static struct fast_topo topo;
static struct fast_exec_opts xopts;
static char algo[32] = "fast", backend[16] = "host";
static int verbose, quiet;
static int told; /* the one "passes through because" line was printed */
static unsigned long n_fast, n_pass;
static uint64_t n_hits, n_lookups;

static void summary(void)
{
	fprintf(stderr, "fast interpose: rank 0: %lu calls through fast (plan cache %llu hits / %llu lookups), %lu passed through\n",
		n_fast, (unsigned long long)n_hits, (unsigned long long)n_lookups, n_pass);
}

static int world_rank(void)
{
	int r = 0;
	PMPI_Comm_rank(MPI_COMM_WORLD, &r);
	return r;
}

static void say(const char *what, const char *arg)
{
	if (verbose && world_rank() == 0)
		fprintf(stderr, "fast interpose: %s%s\n", what, arg);
}

/* The one line saying why calls pass through, on rank 0 of comm, once per
 * process, unless FAST_INTERPOSE_QUIET. */
static void tell_once(MPI_Comm comm, const char *why)
{
	int r = 0;

	if (told || quiet)
		return;
	told = 1;
	PMPI_Comm_rank(comm, &r);
	if (r == 0)
		fprintf(stderr, "fast interpose: MPI_Alltoallv passes through: %s (FAST_INTERPOSE_QUIET=1 silences this)\n", why);
}

/* A shape variable: empty or unset is 0 (the preset's default); anything
 * but a positive integer is refused. */
static int shape_env(const char *name, uint32_t *out, char *why, size_t nwhy)
{
	const char *s = getenv(name);
	char *end;
	unsigned long v;

	*out = 0;
	if (!s || !*s)
		return 0;
	v = strtoul(s, &end, 10);
	if (*end || s[0] == '-' || v == 0 || v > UINT32_MAX) {
		snprintf(why, nwhy, "%s='%.20s' is not a positive integer", name, s);
		return -1;
	}
	*out = (uint32_t)v;
	return 0;
}

static char config_why[256]; /* why configure() passes everything through */

static void configure(void)
{
	const char *path = getenv("FAST_TOPO"), *preset = getenv("FAST_PRESET");
	const char *s;
	struct fast_limits lim;
	struct fast_err err;
	int rc;

	verbose = (s = getenv("FAST_INTERPOSE_VERBOSE")) && *s && strcmp(s, "0") != 0;
	quiet = (s = getenv("FAST_INTERPOSE_QUIET")) && *s && strcmp(s, "0") != 0;
	configured = 0;
	fast_limits_default(&lim);
	if ((s = getenv("FAST_ALGO")) && *s)
		snprintf(algo, sizeof algo, "%s", s);
	if ((s = getenv("FAST_BACKEND")) && *s)
		snprintf(backend, sizeof backend, "%s", s);
	fast_exec_opts_default(&xopts);
	xopts.algo = algo;
	xopts.backend = backend;
	if ((s = getenv("FAST_MAX_STAGING")) && *s &&
	    fast_size_parse(s, &xopts.max_staging, &err) < 0) {
		if (world_rank() == 0)
			fprintf(stderr, "fast interpose: FAST_MAX_STAGING: %s; passing through\n", err.msg);
		return;
	}
	if (strcmp(algo, "mpi") != 0 && !fast_algo_known(algo)) {
		if (world_rank() == 0)
			fprintf(stderr, "fast interpose: FAST_ALGO=%.32s is unknown; passing through\n", algo);
		return;
	}
	if (path && *path) {
		rc = fast_topo_load(path, &lim, &topo, &err);
	} else if (preset && *preset) {
		uint32_t n = 0, g = 0;
		if (shape_env("FAST_SERVERS", &n, config_why, sizeof config_why) < 0 ||
		    shape_env("FAST_GPUS", &g, config_why, sizeof config_why) < 0)
			return;
		rc = fast_topo_preset(preset, n, g, &lim, &topo, &err);
	} else {
		snprintf(config_why, sizeof config_why,
			 "no topology: set FAST_TOPO=FILE or FAST_PRESET=NAME with FAST_SERVERS and FAST_GPUS");
		return;
	}
	if (rc < 0) {
		if (world_rank() == 0)
			fprintf(stderr, "fast interpose: %s; passing through\n", err.msg);
		return;
	}
	configured = 1;
	say("intercepting MPI_Alltoallv with algorithm ", algo);
	if (verbose && world_rank() == 0)
		atexit(summary);
}

/* Bytes per element of a datatype we can treat as plain bytes, or 0. */
static uint64_t byte_type(MPI_Datatype t)
{
	int size = 0;
	MPI_Aint lb = 0, extent = 0, tlb = 0, textent = 0;

	if (PMPI_Type_size(t, &size) != MPI_SUCCESS || size <= 0)
		return 0;
	if (PMPI_Type_get_extent(t, &lb, &extent) != MPI_SUCCESS ||
	    PMPI_Type_get_true_extent(t, &tlb, &textent) != MPI_SUCCESS)
		return 0;
	if (lb != 0 || tlb != 0 || extent != size || textent != size)
		return 0;
	return (uint64_t)size;
}

static int convert(int n, const int *counts, const int *displs, uint64_t esize, uint64_t *bc,
		   uint64_t *bd)
{
	for (int i = 0; i < n; i++) {
		if (counts[i] < 0 || displs[i] < 0)
			return -1;
		bc[i] = (uint64_t)counts[i] * esize;
		bd[i] = (uint64_t)displs[i] * esize;
	}
	return 0;
}

int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
		  MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[],
		  MPI_Datatype recvtype, MPI_Comm comm)
{
	int n = 0, ok = 1, all_ok = 0, rc = MPI_SUCCESS;
	uint64_t ss, rs, *buf = NULL;
	struct fast_exec *x = NULL;
	struct fast_err err;

	if (reentered)
		return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
				      rdispls, recvtype, comm);
	if (configured < 0)
		configure();
	if (configured == 0 && config_why[0])
		tell_once(comm, config_why);
	if (configured == 0 || strcmp(algo, "mpi") == 0)
		return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
				      rdispls, recvtype, comm);
	PMPI_Comm_size(comm, &n);
	if ((uint64_t)n != (uint64_t)topo.servers * topo.gpus) {
		/* the same on every rank: no agreement needed.  Said only for a
		 * communicator as large as the world: smaller ones (one
		 * server's ranks) passing through is expected. */
		char why[256];
		int world = 0;

		PMPI_Comm_size(MPI_COMM_WORLD, &world);
		if (n != world)
			;
		else if (n % (int)topo.gpus == 0)
			snprintf(why, sizeof why,
				 "the communicator has %d ranks, the topology %u x %u = %u GPUs (for %d ranks: FAST_SERVERS=%d FAST_GPUS=%u)",
				 n, topo.servers, topo.gpus, topo.servers * topo.gpus, n,
				 n / (int)topo.gpus, topo.gpus);
		else
			snprintf(why, sizeof why,
				 "the communicator has %d ranks, the topology %u x %u = %u GPUs (set FAST_SERVERS and FAST_GPUS so that their product is %d)",
				 n, topo.servers, topo.gpus, topo.servers * topo.gpus, n);
		if (n == world)
			tell_once(comm, why);
		n_pass++;
		return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
				      rdispls, recvtype, comm);
	}
	ss = byte_type(sendtype);
	rs = byte_type(recvtype);
	if (sendbuf == MPI_IN_PLACE || !ss || !rs)
		ok = 0;
	if (ok) {
		buf = calloc((size_t)n * 4, sizeof *buf);
		if (!buf || convert(n, sendcounts, sdispls, ss, buf, buf + n) < 0 ||
		    convert(n, recvcounts, rdispls, rs, buf + 2 * n, buf + 3 * n) < 0)
			ok = 0;
	}
	if (PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS || !all_ok) {
		free(buf);
		n_pass++;
		if (!all_ok)
			say("a call passes through (MPI_IN_PLACE or a non-byte datatype)", "");
		return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
				      rdispls, recvtype, comm);
	}
	reentered = 1;
	if (fast_exec_for_comm(comm, &topo, &xopts, &x, &err) < 0) {
		fprintf(stderr, "fast interpose: %s\n", err.msg);
		rc = MPI_ERR_OTHER;
		goto out;
	}
	if (fast_alltoallv(sendbuf, buf, buf + n, recvbuf, buf + 2 * n, buf + 3 * n, x, &err) < 0) {
		fprintf(stderr, "fast interpose: %s\n", err.msg);
		rc = MPI_ERR_OTHER;
	} else {
		struct fast_exec_stats st;
		fast_exec_get_stats(x, &st);
		n_fast++;
		if (comm == MPI_COMM_WORLD) {
			n_hits = st.cache_hits;
			n_lookups = st.cache_hits + st.cache_misses;
		}
	}
out:
	reentered = 0;
	free(buf);
	return rc;
}
