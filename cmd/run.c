/*
 * run.c - `fast run`: the MPI executor's benchmark harness (under mpirun,
 * one rank per GPU).  It replays a plan file or compiles plans on the fly
 * from every rank's send counts, times the all-to-all(v) like nccl-tests
 * (-n iterations after -w warm-ups, -c verification, -b/-e/-f sweeps) and
 * prints nccl-tests' columns, aggregated over ranks (the slowest rank's
 * time), plus synthesis time, staging and plan-cache hits.
 *
 * `fast run` is the only subcommand that calls MPI_Init.  Every decision
 * that could split the ranks (bad input on one of them, counts that do not
 * match) is agreed with MPI_Allreduce before any point-to-point traffic, so
 * a failure ends every rank with the same exit status instead of a hang.
 * At start the ranks compare the options that decide which collectives run
 * and a hash of their inputs' contents (fast_exec_agree); a failure is said
 * once, by the lowest rank that has it (run_report_agreed).
 */
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#include "builtin.h"
#include "cli.h"
#include "cli_algo.h"
#include "run.h"

const char cmd_run_usage[] =
	"mpirun -np NG fast run (--topo FILE | --preset NAME [--servers N] [--gpus G])\n"
	"       (--plan FILE | --algo fast|fanout|nccl|pxn|spreadout|hier|auto|mpi)\n"
	"       --traffic FILE [--matrix I] [--backend host|cuda|hip] [-n ITERS] [-w WARMUP]\n"
	"       [-c 0|1] [-b MIN -e MAX -f FACTOR] [--max-staging BYTES] [--in-flight 1|2]\n"
	"       [--json]\n"
	"\n"
	"Run all-to-all(v) traffic over MPI, one rank per GPU: rank r is GPU r of the\n"
	"topology, on server r / G (several emulated servers may share one host).\n"
	"\n"
	"  --plan FILE        replay plans from a file (the plan serving each matrix)\n"
	"  --algo NAME        compile on the fly (default fast): each rank takes its own\n"
	"                     row of the matrix (its send counts), the rows are gathered\n"
	"                     with MPI_Allgather, each rank checks what it will receive\n"
	"                     against its column, and every rank compiles the same plan\n"
	"                     (checked by plan hash); `auto` chooses per matrix from\n"
	"                     the gathered matrix alone, so every rank chooses the same\n"
	"                     schedule (the plan hash names it); `mpi` runs MPI_Alltoallv\n"
	"                     instead\n"
	"  --traffic FILE     traffic (JSON or nccl-tests matrix); every matrix in turn\n"
	"                     unless --matrix I\n"
	"  --backend NAME     host (CPU memory, default), cuda or hip (GPU builds:\n"
	"                     make GPU=cuda|hip)\n"
	"  -n ITERS           timed iterations (default 20)\n"
	"  -w WARMUP          untimed warm-up iterations (default 5)\n"
	"  -c 0|1             verify the received bytes (default 1): every byte carries a\n"
	"                     pattern of (source, destination, offset); #wrong counts bad\n"
	"                     bytes over all ranks and any wrong byte makes the exit status 1\n"
	"  -b MIN -e MAX -f F sweep sizes MIN, MIN*F, ... <= MAX (nccl-tests' series: MAX\n"
	"                     only when it lands on it) by scaling the matrix so that its\n"
	"                     largest per-GPU send or receive total is exactly the size;\n"
	"                     compiled anew at each size, so not with --plan (a plan's\n"
	"                     byte counts are fixed)\n"
	"  --max-staging B    cap staging bytes per rank: the plan then runs in passes,\n"
	"                     each on a slice of every message\n"
	"  --in-flight K      waves a rank keeps posted (default: the backend's most,\n"
	"                     2 on host, cuda and hip): with 2 the next wave's messages\n"
	"                     whose bytes the rank holds go out while a wave runs, and\n"
	"                     those waiting on its scale-up arrivals as soon as they are\n"
	"                     in (exec/README.md, \"Waves in flight\")\n"
	"  --device D         GPU backends: device ordinal (default local rank mod count)\n"
	"  --json             machine-readable results\n"
	"\n"
	"Token traffic (dispatch and combine matrices of token groups) runs as tokens\n"
	"with a token plan (replayed, or compiled on the fly by fast and hier, which\n"
	"deduplicate per server from the groups gathered from every rank's own: a\n"
	"rank knows its tokens' destinations): buffers per group, dispatch rows carry\n"
	"their token's identity (group, token, byte) to every destination GPU, combine\n"
	"contributions of (group, destination, byte) are summed at the source with\n"
	"byte-wise wrapping adds (host backend only), and #wrong counts bad bytes of\n"
	"the rows or sums; size is that of the per-GPU byte matrix.  With a byte plan\n"
	"or another algorithm it runs that byte matrix.  Not with -b/-e/-f.\n"
	"\n"
	"Columns (nccl-tests' definitions): size = largest per-GPU max(send, receive)\n"
	"bytes, a GPU's chunk to itself included (as fast sim counts it), count =\n"
	"elements (bytes), time = mean over iterations of the slowest rank (us),\n"
	"median likewise, algbw = size / time, busbw = algbw * (n-1)/n,\n"
	"#wrong = bad bytes over all ranks, synth = plan compile + program build of the\n"
	"slowest rank (us; 0 when cached), staging = largest staging arena of a rank,\n"
	"cache = plan-cache hits / lookups of rank 0 over the run.  The closing lines\n"
	"are nccl-tests': '# Out of bounds values : N OK|FAILED' and '# Avg bus\n"
	"bandwidth    : B' (the mean busbw of the rows; with NCCL_TESTS_MIN_BW=GBps\n"
	"set, OK or FAILED and exit 1 below 90% of it).\n"
	"Memory: before a row allocates anything, what the ranks of each machine need\n"
	"together (buffers, their host copies, staging arenas) is checked against the\n"
	"machine's MemAvailable (FAST_MEM_AVAILABLE=BYTES overrides it); ranks under\n"
	"one kernel (one boot id) share a machine, whatever host names MPI sees.  A\n"
	"row that does not fit is refused (exit 3) with a --max-staging or a size that\n"
	"fits every machine.\n"
	"Progress (rows done) on stderr of rank 0 when it is a terminal; under mpirun,\n"
	"whose ranks write stderr to a pipe, with FAST_PROGRESS=1 (mpirun -x).\n"
	"Every rank must be given the same options (but --device) and inputs: they\n"
	"are compared at start, and ranks that disagree stop with one message.\n"
	"Exit: 0 ok, 1 wrong bytes or a plan the checker refuses, 2 usage (also\n"
	"options that differ between ranks), 3 bad input (also inputs whose contents\n"
	"differ between ranks, a plan file without a plan for every matrix), 4 MPI\n"
	"or device failure.\n";

static int parse(int argc, char **argv, struct run_opts *o, bool *help)
{
	struct cli_scan s;
	int end;
	uint32_t dev = UINT32_MAX;
	bool have_b = false, have_e = false, have_f = false;

	memset(o, 0, sizeof *o);
	cli_inputs_init(&o->in);
	o->iters = 20;
	o->warmup = 5;
	o->check = 1;
	o->factor = 2;
	o->device = -1;
	for (cli_begin(&s, argc, argv, "run"); cli_more(&s);) {
		if (cli_inputs_option(&s, &o->in) || cli_value(&s, "--algo", &o->algo) ||
		    cli_value(&s, "--backend", &o->backend) ||
		    cli_u32(&s, "-n", 1, 1000000, &o->iters) ||
		    cli_u32(&s, "-w", 0, 1000000, &o->warmup) || cli_u32(&s, "-c", 0, 1, &o->check) ||
		    cli_size(&s, "--max-staging", &o->max_staging) ||
		    cli_u32(&s, "--in-flight", 1, FAST_IN_FLIGHT_MAX, &o->in_flight) ||
		    cli_u32(&s, "--device", 0, 1 << 16, &dev))
			continue;
		if (cli_size(&s, "-b", &o->minb)) {
			have_b = true;
			continue;
		}
		if (cli_size(&s, "-e", &o->maxb)) {
			have_e = true;
			continue;
		}
		if (cli_double(&s, "-f", 1.0000001, 1e6, &o->factor)) {
			have_f = true;
			continue;
		}
		return cli_unknown(&s);
	}
	*help = s.help;
	if ((end = cli_end(&s, false)) >= 0)
		return end;
	if (dev != UINT32_MAX)
		o->device = (int)dev;
	if (!o->backend)
		o->backend = "host";
	if (o->in.plan_path && o->algo)
		return cli_usage_error("run", "give either --plan or --algo, not both");
	if (!o->in.plan_path && !o->algo)
		o->algo = "fast";
	static const char *const mpi[] = { "mpi" }; /* MPI_Alltoallv itself */

	if (o->algo && (end = cli_algo_known("run", NULL, o->algo, mpi, 1)) != 0)
		return end;
	if (!o->in.traffic_path)
		return cli_usage_error("run", "no traffic: give --traffic FILE");
	if (have_b || have_e || have_f) {
		if (!have_b || !have_e)
			return cli_usage_error("run", "a sweep needs both -b MIN and -e MAX");
		if (o->minb == 0 || o->maxb < o->minb)
			return cli_usage_error("run", "-b/-e: need 0 < MIN <= MAX");
		/* a plan's steps carry byte counts for its own matrix: scaling
		 * them would slice every chunk anew, which is compiling, not
		 * replaying */
		if (o->in.plan_path)
			return cli_usage_error("run", "-b/-e/-f recompile the scaled matrix at every size, and a --plan holds fixed byte counts: sweep with --algo NAME, or replay the plan without -b/-e/-f");
		o->sweep = true;
	}
	return 0;
}
/* --- topology vs hosts ------------------------------------------------------------------ */

static void host_layout_notes(const struct run_ctx *c)
{
	MPI_Comm host;
	int host_rank = 0, leader = c->rank;
	int *leaders = calloc((size_t)c->size, sizeof *leaders);
	uint32_t G = c->topo.gpus, N = c->topo.servers;

	if (!leaders)
		return;
	MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL, &host);
	MPI_Comm_rank(host, &host_rank);
	MPI_Bcast(&leader, 1, MPI_INT, 0, host); /* host id: world rank of its first rank */
	MPI_Allgather(&leader, 1, MPI_INT, leaders, 1, MPI_INT, MPI_COMM_WORLD);
	MPI_Comm_free(&host);
	if (c->rank == 0) {
		uint32_t split = 0, hosts = 0, shared = 0;
		for (int i = 0; i < c->size; i++)
			hosts += leaders[i] == i;
		for (uint32_t s = 0; s < N; s++)
			for (uint32_t g = 1; g < G; g++)
				if (leaders[s * G + g] != leaders[s * G]) {
					split++;
					break;
				}
		for (uint32_t s = 1; s < N; s++)
			for (uint32_t t = 0; t < s; t++)
				if (leaders[s * G] == leaders[t * G]) {
					shared++;
					break;
				}
		if (split)
			cli_warn("the MPI shared-memory split disagrees with the topology: %u of %u servers span several hosts (their scale-up traffic crosses the host network)",
				 split, N);
		if (shared)
			fprintf(stderr, "fast run: note: %u servers emulated on %u host%s (normal for tests: scale-up and scale-out share the host)\n",
				N, hosts, hosts == 1 ? "" : "s");
	}
	free(leaders);
}
/* --- machines: the ranks that share one memory ------------------------------------------ */

/* The key of this process's machine: the kernel's boot id.  It is a
 * random 128-bit UUID drawn at each boot, so no two machines (nor two
 * boots of one) share it, and every process under that kernel reads the
 * same, whatever network, UTS or container namespace it runs in: exactly
 * the processes that share the machine's memory.  MPI's host, the
 * hostname and /etc/machine-id would each split one machine again (the
 * testbed's servers are namespaces of one machine, each with its own
 * hostname; containers on one machine have their own hostnames and
 * machine-ids), and cloned images share a machine-id; a virtual machine,
 * whose memory is its own, has a kernel and so a boot id of its own.  So
 * nothing is mixed in.  Without the file (not Linux): "host NAME". */
static void machine_key(char *key, size_t n, const char *host)
{
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
	char id[64] = "";

	if (f) {
		if (!fgets(id, sizeof id, f))
			id[0] = '\0';
		fclose(f);
		id[strcspn(id, "\n")] = '\0';
	}
	if (id[0])
		snprintf(key, n, "boot %s", id);
	else
		snprintf(key, n, "host %s", host);
}

/* Group the ranks by machine (machine_key) and read what memory each has
 * available: fills c->machine, c->mem_avail, c->mem_need (scratch),
 * c->mem_from, c->host and c->machine_hosts.  Collective; 0, or
 * FAST_ENOMEM on every rank (the arrays then freed by the caller's
 * run_ctx cleanup, as always). */
static int machines(struct run_ctx *c, struct fast_err *err)
{
	struct rec {
		char key[96], host[64];
		uint64_t avail;
	} me, *all;
	int bad, any = 0;

	memset(&me, 0, sizeof me);
	if (gethostname(me.host, sizeof me.host - 1) != 0 || !me.host[0])
		snprintf(me.host, sizeof me.host, "?");
	machine_key(me.key, sizeof me.key, me.host);
	me.avail = run_host_mem_available(&c->mem_from);
	memcpy(c->host, me.host, sizeof c->host);
	all = calloc((size_t)c->size, sizeof *all);
	c->machine = calloc((size_t)c->size, sizeof *c->machine);
	c->mem_avail = calloc((size_t)c->size, sizeof *c->mem_avail);
	c->mem_need = calloc((size_t)c->size * 2, sizeof *c->mem_need);
	bad = !all || !c->machine || !c->mem_avail || !c->mem_need;
	MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	if (any) {
		free(all);
		return fast_err_set(err, FAST_ENOMEM, "run: out of memory");
	}
	MPI_Allgather(&me, (int)sizeof me, MPI_BYTE, all, (int)sizeof me, MPI_BYTE, MPI_COMM_WORLD);
	/* quadratic, once: 10^6 short compares at 1024 ranks */
	for (int i = 0; i < c->size; i++) {
		c->machine[i] = i;
		for (int j = 0; j < i; j++)
			if (strcmp(all[i].key, all[j].key) == 0) {
				c->machine[i] = c->machine[j];
				break;
			}
		c->mem_avail[i] = all[i].avail;
	}
	c->machine_hosts = 0;
	for (int i = 0; i < c->size; i++) {
		bool first = c->machine[i] == c->machine[c->rank];
		for (int j = 0; j < i && first; j++)
			first = !(c->machine[j] == c->machine[i] && strcmp(all[i].host, all[j].host) == 0);
		c->machine_hosts += first;
	}
	free(all);
	return 0;
}

/* --- start: inputs and agreement ------------------------------------------------------ */

/* This process's rank as the MPI launcher gave it (before MPI_Init), or -1
 * when it was not started by one: then usage errors end it without MPI. */
static int launcher_rank(void)
{
	const char *names[] = { "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK" };

	for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
		const char *v = getenv(names[i]);
		if (v && *v)
			return atoi(v);
	}
	return -1;
}

/* stdout and stderr to /dev/null while ranks other than 0 read the command
 * line and the inputs: an error all ranks hit alike is printed once. */
struct muted {
	int fd[2];
};
static void mute(struct muted *m, bool on)
{
	int null = on ? open("/dev/null", O_WRONLY) : -1;

	m->fd[0] = m->fd[1] = -1;
	if (null < 0)
		return;
	fflush(stdout);
	for (int i = 0; i < 2; i++) {
		m->fd[i] = dup(i + 1);
		if (m->fd[i] >= 0)
			dup2(null, i + 1);
	}
	close(null);
}
static void unmute(struct muted *m)
{
	fflush(stdout);
	for (int i = 0; i < 2; i++)
		if (m->fd[i] >= 0) {
			dup2(m->fd[i], i + 1);
			close(m->fd[i]);
			m->fd[i] = -1;
		}
}

struct inputs {
	struct run_opts o;
	bool help, have_ps;
	struct fast_topo topo;
	struct fast_traffic t;
	struct fast_planset ps;
};

static void inputs_free(struct inputs *in)
{
	fast_traffic_free(&in->t);
	if (in->have_ps)
		fast_planset_free(&in->ps);
	in->have_ps = false;
}

/* Parse and load (printing what is wrong): an exit status. */
static int inputs_read(int argc, char **argv, struct inputs *in)
{
	int st;

	memset(in, 0, sizeof *in);
	st = parse(argc, argv, &in->o, &in->help);
	if (st || in->help)
		return st;
	if ((st = cli_load_topo(&in->o.in, &in->topo)) == 0 &&
	    (st = cli_load_traffic(&in->o.in, &in->topo, &in->t)) == 0 && in->o.in.plan_path) {
		st = cli_load_plans(&in->o.in, &in->ps);
		in->have_ps = st == 0;
	}
	return st;
}

/* Every rank read its inputs: agree on the worst status (and on --help);
 * the lowest rank that failed says why, once.  Returns the exit status,
 * or -1 to go on. */
static int inputs_agree(int argc, char **argv, struct inputs *in, int st, int rank)
{
	int mine[2] = { st, in->help }, all[2] = { 0, 0 }, who = st ? rank : INT_MAX, first = 0;

	MPI_Allreduce(mine, all, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	if (!all[0])
		return all[1] ? 0 : -1;
	MPI_Allreduce(&who, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	if (rank == first && first != 0) {
		/* it read them muted: read them again, aloud */
		struct inputs again;
		inputs_read(argc, argv, &again);
		inputs_free(&again);
	}
	return all[0];
}

static uint64_t hash_str(uint64_t h, const char *s)
{
	return fast_hash_bytes(h, s, strlen(s) + 1);
}

/* Each matrix's label, byte view and, for token matrices, kind and groups:
 * two token files of one byte view but other groups must disagree too. */
static uint64_t traffic_hash(const struct fast_traffic *t)
{
	uint64_t h = fast_hash_bytes(FAST_HASH_INIT, &t->count, sizeof t->count);

	for (uint32_t m = 0; m < t->count; m++) {
		h = fast_matrix_hash(hash_str(h, t->m[m].label), t->m[m].bytes, t->ng);
		h = fast_groups_hash(h, &t->m[m]);
	}
	return h;
}

static uint64_t plans_hash(const struct inputs *in)
{
	uint64_t h = FAST_HASH_INIT;

	if (!in->have_ps)
		return 0;
	h = fast_hash_bytes(h, &in->ps.count, sizeof in->ps.count);
	for (uint32_t i = 0; i < in->ps.count; i++) {
		uint64_t ph = fast_plan_hash(&in->ps.plans[i]);
		h = fast_hash_bytes(hash_str(h, in->ps.plans[i].label), &ph, sizeof ph);
	}
	return h;
}

/* What every rank must have alike: the options that decide which
 * collectives run (iterations, sizes, passes, algorithm, backend) and the
 * contents of the inputs. */
static int options_agree(const struct inputs *in, struct fast_err *err)
{
	const struct run_opts *o = &in->o;
	char factor[32];
	uint64_t fbits;
	const char *algo = o->algo ? o->algo : "none (--plan)";
	struct fast_agree f[] = {
		{ "-n", FAST_EUSAGE, o->iters, NULL, false },
		{ "-w", FAST_EUSAGE, o->warmup, NULL, false },
		{ "-c", FAST_EUSAGE, o->check, NULL, false },
		{ "-b", FAST_EUSAGE, o->sweep ? o->minb : 0, NULL, false },
		{ "-e", FAST_EUSAGE, o->sweep ? o->maxb : 0, NULL, false },
		{ "-f", FAST_EUSAGE, 0, factor, false },
		{ "--max-staging", FAST_EUSAGE, o->max_staging, NULL, false },
		{ "--in-flight", FAST_EUSAGE, o->in_flight, NULL, false },
		{ "--matrix", FAST_EUSAGE, (uint64_t)(o->in.matrix + 1), NULL, false },
		{ "--algo", FAST_EUSAGE, hash_str(FAST_HASH_INIT, algo), algo, false },
		{ "--backend", FAST_EUSAGE, hash_str(FAST_HASH_INIT, o->backend), o->backend, false },
		{ "--servers", FAST_EINPUT, in->topo.servers, NULL, false },
		{ "--gpus", FAST_EINPUT, in->topo.gpus, NULL, false },
		{ "the topology", FAST_EINPUT, fast_topo_hash(&in->topo), NULL, true },
		{ "--traffic", FAST_EINPUT, traffic_hash(&in->t), NULL, true },
		{ "--plan", FAST_EINPUT, plans_hash(in), NULL, true },
	};

	memcpy(&fbits, &o->factor, sizeof fbits);
	f[5].value = o->sweep ? fbits : 0;
	snprintf(factor, sizeof factor, "%g", o->sweep ? o->factor : 0.0);
	return fast_exec_agree(MPI_COMM_WORLD, f, sizeof f / sizeof *f, err);
}

int cmd_run(int argc, char **argv)
{
	struct inputs in;
	struct run_ctx c;
	struct fast_exec_opts eo;
	struct fast_err err;
	struct muted mu;
	int st, inited = 0, lrank = launcher_rank();

	mute(&mu, lrank > 0);
	st = inputs_read(argc, argv, &in);
	unmute(&mu);
	if (lrank < 0 && (st == 2 || in.help)) {
		/* not under a launcher: a usage error or --help needs no MPI */
		inputs_free(&in);
		return st;
	}
	memset(&c, 0, sizeof c);
	c.o = &in.o;
	c.mpi = in.o.algo && strcmp(in.o.algo, "mpi") == 0;
	MPI_Initialized(&inited);
	if (!inited && MPI_Init(&argc, &argv) != MPI_SUCCESS) {
		inputs_free(&in);
		return cli_fail(FAST_ERUNTIME, "MPI_Init failed");
	}
	MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
	MPI_Comm_size(MPI_COMM_WORLD, &c.size);

	/* inputs: every rank read them; a failure anywhere stops everyone,
	 * before any other collective */
	if ((st = inputs_agree(argc, argv, &in, st, c.rank)) >= 0)
		goto out;
	if ((st = options_agree(&in, &err)) < 0) {
		st = run_report_agreed(&c, fast_err_exit_status(st), &err);
		goto out;
	}
	c.topo = in.topo;
	if ((uint64_t)c.size != (uint64_t)c.topo.servers * c.topo.gpus) {
		if (c.rank == 0)
			cli_fail(FAST_EINPUT,
				 "%d MPI ranks for a topology of %u GPUs (%u servers x %u): run mpirun -np %u",
				 c.size, c.topo.servers * c.topo.gpus, c.topo.servers, c.topo.gpus,
				 c.topo.servers * c.topo.gpus);
		st = 3;
		goto out;
	}
	/* a plan for every matrix, of the topology and of its kind (a token
	 * plan serves a matrix of its kind, a byte plan any), found before
	 * anything runs */
	for (uint32_t m = 0; in.have_ps && m < in.t.count; m++) {
		const struct fast_plan *p = cli_plan_for(&in.ps, &in.o.in, m, in.t.count, &err);
		if (p && (fast_plan_fits_topo(p, &c.topo, &err) < 0 ||
			  fast_plan_fits_matrix(p, &in.t.m[m], &err) < 0)) {
			fast_err_prefix(&err, "%s: /plans/%u", in.o.in.plan_path, (uint32_t)(p - in.ps.plans));
			p = NULL;
		}
		if (!p) {
			st = run_report_agreed(&c, 3, &err);
			goto out;
		}
	}
	/* token traffic run as tokens has a size of its own: its groups */
	for (uint32_t m = 0; in.o.sweep && m < in.t.count; m++) {
		const struct fast_plan *p = in.have_ps ? cli_plan_for(&in.ps, &in.o.in, m, in.t.count, NULL) : NULL;
		if (run_as_tokens(&c, &in.t.m[m], p)) {
			if (c.rank == 0)
				cli_usage_error("run", "-b/-e/-f scale byte matrices, and matrix %u ('%s') runs as token groups: run it without -b/-e/-f",
						m, in.t.m[m].label);
			st = 2;
			goto out;
		}
	}
	host_layout_notes(&c);
	/* which ranks share a machine's memory (memory_agree, run_measure.c) */
	if (machines(&c, &err) < 0) {
		st = run_report_agreed(&c, fast_err_exit_status(err.code), &err);
		goto out;
	}
	fast_exec_opts_default(&eo);
	eo.backend = in.o.backend;
	eo.algo = in.o.algo ? in.o.algo : "fast";
	eo.max_staging = in.o.max_staging;
	eo.in_flight = in.o.in_flight;
	eo.device = in.o.device;
	if (fast_exec_create(MPI_COMM_WORLD, &c.topo, &eo, &c.x, &err) < 0) {
		st = run_report_agreed(&c, fast_err_exit_status(err.code), &err);
		goto out;
	}
	if (c.rank == 0 && fast_exec_notes(c.x)[0])
		fprintf(stderr, "fast run: note: %s\n", fast_exec_notes(c.x));
	{
		/* Fault injection for the test suite: FAST_TEST_KILL_RANK=r makes
		 * rank r die abruptly before the first iteration, so that tests can
		 * prove a dead rank ends the job (Open MPI aborts it, naming the
		 * rank) instead of leaving the others waiting forever. */
		const char *kill_rank = getenv("FAST_TEST_KILL_RANK");
		if (kill_rank && *kill_rank && atoi(kill_rank) == c.rank) {
			fprintf(stderr, "fast run: rank %d: FAST_TEST_KILL_RANK: dying now\n", c.rank);
			fflush(stderr);
			abort();
		}
	}
	st = run_rows(&c, &in.t, in.have_ps ? &in.ps : NULL);
	if (st == 0 && c.rank == 0)
		st = cli_stdout_finish();
out:
	fast_exec_destroy(c.x);
	free(c.machine);
	free(c.mem_avail);
	free(c.mem_need);
	inputs_free(&in);
	fflush(stdout);
	MPI_Finalize();
	return st;
}
