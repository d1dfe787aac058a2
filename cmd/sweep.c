/*
 * sweep.c - `fast sweep`: what-if studies at scale.  A JSON spec
 * (cmd/sweep_spec.h) names the axes; every case of their Cartesian product
 * is planned, bounded and simulated (cmd/sweep_case.h) and becomes one CSV
 * row.
 *
 * Parallelism: under mpirun (OMPI_COMM_WORLD_SIZE, PMI_SIZE or PMIX_RANK
 * in the environment) the groups of cases (those sharing topology, traffic
 * and size: generated and bounded once) are dealt round-robin over the
 * ranks and rank 0 gathers the rows; otherwise over --jobs forked workers
 * (default: the number of online cores).  Rows are sorted by case index at
 * the end, so every column but the measured synthesis_s and
 * time_with_synthesis_s is identical to a serial run.
 *
 * Crash safety: every finished row is appended with one write(2) of the
 * whole line on an O_APPEND descriptor and fdatasync'd, so an interrupted
 * sweep loses nothing it finished.  A rerun skips the cases whose key is
 * already in the file; a torn last line (no newline) is dropped first.
 *
 * One writer per results file: the sweep holds an exclusive flock(2) on
 * the file from before it reads it until after the sorted copy is renamed
 * over it (forked workers share the lock; under MPI rank 0 holds it).  A
 * second sweep into the same file says so and waits, then resumes from
 * what the first wrote, so the rows of both end up in the file once.  The
 * lock is taken on the inode the path names: a lock won on a file that
 * was renamed over meanwhile is let go and taken again on the new one.
 *
 * A results file of a previous version (4: bound_s the LP, no lp_s and
 * latency_s; 3: also no time_with_synthesis_s column; 2: also times in
 * microseconds; 1: also no ident column) is upgraded before any row is
 * appended: its rows are kept, rewritten in this version's columns, rows
 * of the spec's cases get the combined bound from their topology, and
 * version-1 rows get their ident from the spec (the traffic is generated again, nothing is
 * re-planned).
 *
 * Files: this one parses the options and schedules the cases (forked
 * workers, MPI ranks, progress); cmd/sweep_results.c reads and writes the
 * results file (lock, resume, upgrade, sort) and cmd/sweep_run.c makes
 * each case into its row.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <mpi.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "builtin.h"
#include "cli.h"
#include "lib/base/json.h"
#include "sweep_case.h"
#include "sweep_spec.h"
#include "sweep_results.h"
#include "sweep_run.h"

const char cmd_sweep_usage[] =
	"fast sweep --spec SPEC.json -o RESULTS.csv [--jobs K] [--quiet] [--list] [--json]\n"
	"\n"
	"Run a what-if study: every case of the spec's Cartesian product (topologies,\n"
	"traffic, sizes, algorithms and options) is planned, bounded and simulated,\n"
	"one CSV row per case (columns: see cmd/sweep_case.h).\n"
	"\n"
	"  --spec FILE     the study (strict JSON; see results/specs/*.json)\n"
	"  -o FILE         results CSV; rows of an earlier run with the same keys are\n"
	"                  kept and their cases skipped (resume); a second sweep into\n"
	"                  the same file waits for the first (file lock), then\n"
	"                  resumes, so no row of either is lost; a file of the\n"
	"                  previous version is resumed, in this version's columns\n"
	"  --jobs K        local worker processes (default: online cores); under\n"
	"                  mpirun the ranks share the cases instead\n"
	"  --quiet         no progress and no timing on stderr\n"
	"  --list          print the cases (index and key) and exit\n"
	"  --json          summary as JSON on stdout\n"
	"\n"
	"Every axis value must differ from the others of its axis (\"seeds\": [1, 1]\n"
	"is refused, exit 3), and so must the cases' keys.\n"
	"\n"
	"Progress (cases done, rate, ETA) goes to stderr: a bar on a terminal,\n"
	"periodic lines otherwise.  Exit: 0 ok (failed cases are rows with status\n"
	"error:...), 2 usage, 3 bad spec or results file, 4 runtime.\n";

#define TAG_ROW 1
#define TAG_DONE 2
#define LINE_MAX_BYTES 2048

/* --- progress ------------------------------------------------------------- */

struct progress {
	uint64_t total, done, shown;
	double t0, last;
	bool tty, quiet, drawn;
};

static void progress_show(struct progress *p, bool final)
{
	double now = fast_now(), el = now - p->t0;
	double rate = el > 0 ? (double)p->done / el : 0;
	double eta = rate > 0 ? (double)(p->total - p->done) / rate : 0;

	if (p->quiet || p->total == 0 || (final && p->shown == p->done && !p->tty))
		return;
	if (p->tty) {
		int width = 30, fill = (int)((double)width * (double)p->done / (double)p->total);
		if (!final && now - p->last < 0.1)
			return;
		fprintf(stderr, "\rsweep: [%.*s%.*s] %llu/%llu cases  %.2f/s  ETA %.0fs   ", fill,
			"##############################", width - fill,
			"..............................", (unsigned long long)p->done,
			(unsigned long long)p->total, rate, eta);
		if (final)
			fputc('\n', stderr);
		p->drawn = true;
	} else {
		if (!final && now - p->last < 10.0)
			return;
		if (final && !p->drawn)
			return;
		fprintf(stderr, "sweep: %llu/%llu cases (%.0f%%), %.2f cases/s, ETA %.0f s\n",
			(unsigned long long)p->done, (unsigned long long)p->total,
			100.0 * (double)p->done / (double)p->total, rate, eta);
		p->drawn = true;
	}
	p->last = now;
	p->shown = p->done;
}

static void progress_add(struct progress *p, uint64_t n)
{
	p->done += n;
	progress_show(p, false);
}

/* --- running cases ------------------------------------------------------- */

struct sink {
	int fd;            /* results file (local, MPI root) */
	int notify;        /* pipe to the parent (forked workers), -1 none */
	bool mpi_send;     /* send rows to rank 0 */
	struct progress *progress; /* in-process progress (serial, MPI root) */
	void (*poll)(struct sink *); /* MPI root: drain incoming rows */
	int failed;        /* an exit status once something went wrong */
	uint64_t errors, run;
	int mpi_pending;   /* MPI root: ranks not done */
};

static void sink_row(struct sink *k, const char *line, size_t len, bool ok)
{
	if (k->failed)
		return;
	if (k->mpi_send) {
		MPI_Send(line, (int)len, MPI_CHAR, 0, TAG_ROW, MPI_COMM_WORLD);
	} else {
		int rc = sweep_append_line(k->fd, line, len);
		if (rc) {
			k->failed = rc;
			return;
		}
		if (k->notify >= 0) {
			ssize_t w;
			do
				w = write(k->notify, ok ? "x" : "e", 1);
			while (w < 0 && errno == EINTR);
		}
		if (k->progress)
			progress_add(k->progress, 1);
	}
}

/* Run the pending cases of group g. */
static void run_group(const struct sweep_spec *s, uint32_t g, const uint8_t *done,
		      struct sink *k)
{
	const struct sweep_group *gr = &s->groups[g];
	struct fast_traffic gen;
	struct fast_err err;
	char line[LINE_MAX_BYTES];
	bool gen_ok;
	uint32_t nmat = gr->ncases / s->nalgos;

	gen_ok = sweep_spec_traffic(s, g, &gen, &err) == 0;
	for (uint32_t m = 0; m < nmat && !k->failed; m++) {
		struct sweep_row bound;
		bool bounded = false;

		for (uint32_t a = 0; a < s->nalgos && !k->failed; a++) {
			uint64_t id = gr->case0 + (uint64_t)m * s->nalgos + a;
			struct sweep_row r;
			size_t len;

			if (done[id])
				continue;
			sweep_run_case(s, g, id, m, a, &gen, gen_ok ? NULL : &err, &bound, &bounded, &r);
			if (strcmp(r.status, "ok") != 0) {
				k->errors++;
				fprintf(stderr, "fast sweep: case %llu (%s): %s\n", (unsigned long long)id,
					r.key, r.status);
			}
			len = sweep_row_format(&r, line, sizeof line);
			if (len == 0) {
				k->failed = cli_fail(FAST_ERUNTIME, "case %llu: row too long", (unsigned long long)id);
				break;
			}
			sink_row(k, line, len, strcmp(r.status, "ok") == 0);
			k->run++;
			if (k->poll)
				k->poll(k);
		}
	}
	fast_traffic_free(&gen);
}

static uint32_t *pending_groups(const struct sweep_spec *s, const uint8_t *done, uint32_t *n,
				uint64_t *ncases)
{
	uint32_t *p = fast_calloc(s->ngroups ? s->ngroups : 1, sizeof *p);

	*n = 0;
	*ncases = 0;
	if (!p)
		return NULL;
	for (uint32_t g = 0; g < s->ngroups; g++) {
		uint64_t todo = 0;
		for (uint32_t k = 0; k < s->groups[g].ncases; k++)
			todo += !done[s->groups[g].case0 + k];
		if (todo) {
			p[(*n)++] = g;
			*ncases += todo;
		}
	}
	return p;
}

/* Local: serial, or forked workers dealt groups round-robin. */
static int run_local(const struct sweep_spec *s, const uint8_t *done, int fd, uint32_t jobs,
		     struct progress *prog, uint64_t *run, uint64_t *errors)
{
	uint32_t npend;
	uint64_t todo;
	uint32_t *pend = pending_groups(s, done, &npend, &todo);
	int pfd[2], rc = 0;
	pid_t *pids, parent;

	if (!pend)
		return cli_fail(FAST_ENOMEM, "out of memory");
	prog->total = todo;
	if (jobs > npend)
		jobs = npend;
	if (jobs <= 1) {
		struct sink k = { .fd = fd, .notify = -1, .progress = prog };
		for (uint32_t i = 0; i < npend && !k.failed; i++)
			run_group(s, pend[i], done, &k);
		*run = k.run;
		*errors = k.errors;
		free(pend);
		return k.failed;
	}
	*errors = 0;
	pids = fast_calloc(jobs, sizeof *pids);
	if (!pids || pipe(pfd) != 0) {
		free(pend);
		free(pids);
		return cli_fail(FAST_ERUNTIME, "cannot start workers: %s", strerror(errno));
	}
	fflush(stdout);
	fflush(stderr);
	parent = getpid();
	for (uint32_t w = 0; w < jobs; w++) {
		pid_t pid = fork();
		if (pid < 0) {
			rc = cli_fail(FAST_ERUNTIME, "fork failed: %s", strerror(errno));
			jobs = w;
			break;
		}
		if (pid == 0) {
			struct sink k = { .fd = fd, .notify = pfd[1] };
			/* a killed sweep must not leave workers appending behind a
			 * rerun's back */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() != parent)
				_exit(4);
			close(pfd[0]);
			for (uint32_t i = w; i < npend && !k.failed; i += jobs)
				run_group(s, pend[i], done, &k);
			fflush(stderr);
			/* after fork these buffers are this worker's own copies:
			 * released, so that memcheck sees a clean exit whatever
			 * registers the compiler kept the caller's pointers in */
			free(pend);
			free(pids);
			free((void *)done); /* const to run_local, not to this copy */
			_exit(k.failed);
		}
		pids[w] = pid;
	}
	close(pfd[1]);
	for (;;) {
		char buf[256];
		struct pollfd pf = { .fd = pfd[0], .events = POLLIN };
		ssize_t n;
		int pr = poll(&pf, 1, 1000);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr == 0) {
			progress_add(prog, 0);
			continue;
		}
		n = read(pfd[0], buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		for (ssize_t i = 0; i < n; i++)
			*errors += buf[i] == 'e';
		progress_add(prog, (uint64_t)n);
	}
	close(pfd[0]);
	*run = prog->done;
	for (uint32_t w = 0; w < jobs; w++) {
		int st;
		while (waitpid(pids[w], &st, 0) < 0 && errno == EINTR)
			;
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			if (!rc)
				rc = cli_fail(FAST_ERUNTIME, "worker %u failed (%s %d); rerun to resume", w,
					      WIFEXITED(st) ? "exit" : "signal",
					      WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
		}
	}
	free(pids);
	free(pend);
	return rc;
}

/* --- MPI ---------------------------------------------------------------------- */

static bool under_mpirun(void)
{
	const char *v = getenv("OMPI_COMM_WORLD_SIZE");
	if (!v)
		v = getenv("PMI_SIZE");
	if (v)
		return atoi(v) > 1;
	return getenv("PMIX_RANK") != NULL;
}

static struct {
	int fd;
	struct progress *prog;
	uint64_t received;
	int status;
} root;

static void root_take(struct sink *k, const MPI_Status *st)
{
	char line[LINE_MAX_BYTES + 1];
	int n = 0;

	MPI_Get_count(st, MPI_CHAR, &n);
	if (st->MPI_TAG == TAG_DONE) {
		int status = 0;
		MPI_Recv(&status, 1, MPI_INT, st->MPI_SOURCE, TAG_DONE, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		if (status && !root.status)
			root.status = status;
		k->mpi_pending--;
		return;
	}
	if (n < 0 || n > LINE_MAX_BYTES)
		n = LINE_MAX_BYTES;
	MPI_Recv(line, n, MPI_CHAR, st->MPI_SOURCE, TAG_ROW, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	if (!k->failed) {
		int rc = sweep_append_line(root.fd, line, (size_t)n);
		if (rc)
			k->failed = rc;
	}
	root.received++;
	progress_add(root.prog, 1);
}

static void root_poll(struct sink *k)
{
	for (;;) {
		int flag = 0;
		MPI_Status st;
		MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
		if (!flag)
			return;
		root_take(k, &st);
	}
}

/* --- the command ------------------------------------------------------------------ */

static int summary(const struct sweep_spec *s, const char *spec, const char *out, bool json,
		   uint64_t run, uint64_t resumed, uint64_t errors)
{
	if (json) {
		fputs("{\"spec\":", stdout);
		fast_json_put_string(stdout, spec);
		printf(",\"name\":");
		fast_json_put_string(stdout, s->name);
		printf(",\"cases\":%llu,\"run\":%llu,\"resumed\":%llu,\"errors\":%llu,\"skipped\":%llu,\"output\":",
		       (unsigned long long)s->ncases, (unsigned long long)run,
		       (unsigned long long)resumed, (unsigned long long)errors,
		       (unsigned long long)s->skipped);
		fast_json_put_string(stdout, out);
		fputs("}\n", stdout);
	} else {
		printf("sweep %s: %llu cases: %llu run, %llu resumed, %llu failed; rows in %s\n",
		       s->name[0] ? s->name : spec, (unsigned long long)s->ncases,
		       (unsigned long long)run, (unsigned long long)resumed,
		       (unsigned long long)errors, out);
	}
	return 0;
}

/* --list: every case's id and key. */
static void list_cases(const struct sweep_spec *s)
{
	for (uint32_t g = 0; g < s->ngroups; g++)
		for (uint32_t k = 0; k < s->groups[g].ncases; k++) {
			struct sweep_row r;
			sweep_spec_case(s, g, s->groups[g].case0 + k, &r, NULL, NULL);
			printf("%llu %s\n", (unsigned long long)r.case_id, r.key);
		}
}

/* Under mpirun, once rank 0 has opened the results: done[] broadcast, the
 * pending groups dealt round-robin over the ranks, rank 0 writing every
 * row; *nrun and *errors are the totals (rank 0's). */
static int run_mpi(const struct sweep_spec *s, uint8_t *done, int fd, int rank, int size,
		   struct progress *prog, uint64_t *nrun, uint64_t *errors)
{
	uint32_t npend;
	uint64_t todo, e, tot = 0;
	uint32_t *pend;
	struct sink k = { .fd = fd, .notify = -1 };
	int rc = 0;

	for (uint64_t off = 0; off < s->ncases; off += 1u << 30) {
		uint64_t n = s->ncases - off < (1u << 30) ? s->ncases - off : (1u << 30);
		MPI_Bcast(done + off, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD);
	}
	pend = pending_groups(s, done, &npend, &todo);
	if (!pend) {
		rc = cli_fail(FAST_ENOMEM, "out of memory");
		MPI_Abort(MPI_COMM_WORLD, 4);
	}
	if (rank == 0) {
		prog->total = todo;
		root.fd = fd;
		root.prog = prog;
		k.progress = prog;
		k.poll = root_poll;
		k.mpi_pending = size - 1;
	} else {
		k.mpi_send = true;
	}
	for (uint32_t i = (uint32_t)rank; i < npend && !k.failed; i += (uint32_t)size)
		run_group(s, pend[i], done, &k);
	if (rank == 0) {
		while (k.mpi_pending > 0) {
			MPI_Status st2;
			MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st2);
			root_take(&k, &st2);
		}
		rc = k.failed ? k.failed : root.status;
		*nrun = k.run + root.received;
	} else {
		int status = k.failed;
		MPI_Send(&status, 1, MPI_INT, 0, TAG_DONE, MPI_COMM_WORLD);
	}
	e = k.errors;
	MPI_Reduce(&e, &tot, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
	*errors = tot;
	free(pend);
	return rc;
}

int cmd_sweep(int argc, char **argv)
{
	struct cli_scan sc;
	const char *spec_path = NULL, *out_path = NULL;
	uint32_t jobs = 0;
	bool quiet = false, list = false, json = false, mpi = false;
	struct sweep_spec s;
	struct fast_err err;
	struct sweep_keymap km = { 0 };
	struct progress prog = { 0 };
	uint8_t *done = NULL;
	uint64_t resumed = 0, nrun = 0, errors = 0;
	int rank = 0, size = 1, fd = -1, rc = 0, version = SWEEP_CSV_VERSION;

	for (cli_begin(&sc, argc, argv, "sweep"); cli_more(&sc);) {
		if (cli_value(&sc, "--spec", &spec_path) || cli_value(&sc, "-o", &out_path) ||
		    cli_value(&sc, "--output", &out_path) ||
		    cli_u32(&sc, "--jobs", 1, 4096, &jobs))
			continue;
		if (cli_flag(&sc, "--quiet")) {
			quiet = true;
			continue;
		}
		if (cli_flag(&sc, "--list")) {
			list = true;
			continue;
		}
		if (cli_flag(&sc, "--json")) {
			json = true;
			continue;
		}
		return cli_unknown(&sc);
	}
	if (sc.failed)
		return 2;
	if (sc.help)
		return 0;
	if (sc.npos)
		return cli_usage_error("sweep", "unexpected argument '%.60s'", sc.pos[0]);
	if (!spec_path)
		return cli_usage_error("sweep", "--spec FILE is required");
	if (!out_path && !list)
		return cli_usage_error("sweep", "-o RESULTS.csv is required");
	if (out_path && (strcmp(out_path, "-") == 0))
		return cli_usage_error("sweep", "-o: the results must go to a file (resumable), not stdout");

	if (!list && under_mpirun()) {
		if (MPI_Init(NULL, NULL) != MPI_SUCCESS)
			return cli_fail(FAST_ERUNTIME, "MPI_Init failed");
		MPI_Comm_rank(MPI_COMM_WORLD, &rank);
		MPI_Comm_size(MPI_COMM_WORLD, &size);
		mpi = true;
	}
	if (sweep_spec_load(spec_path, &s, &err) < 0) {
		rc = rank == 0 ? cli_report(&err) : fast_err_exit_status(err.code);
		if (mpi)
			MPI_Finalize();
		return rc;
	}
	if (sweep_keymap_build(&s, spec_path, &km, &err) < 0) {
		rc = rank == 0 ? cli_report(&err) : fast_err_exit_status(err.code);
		goto out;
	}
	if (list) {
		list_cases(&s);
		goto out;
	}
	if (rank == 0 && s.skipped)
		cli_warn("skipped %llu topology x trace combinations whose GPU counts differ",
			 (unsigned long long)s.skipped);
	done = fast_calloc(s.ncases ? s.ncases : 1, 1);
	if (!done) {
		rc = cli_fail(FAST_ENOMEM, "out of memory");
		goto out;
	}
	if (rank == 0 && (rc = cli_out_check(out_path)) == 0)
		rc = sweep_results_open(out_path, &km, s.ncases, done, &resumed, &version, &fd);
	if (rank == 0 && rc == 0 && version < SWEEP_CSV_VERSION &&
	    (rc = sweep_results_upgrade(out_path, fd, &s, &km, version)) == 0)
		version = SWEEP_CSV_VERSION;
	prog.t0 = prog.last = fast_now();
	prog.tty = isatty(2);
	prog.quiet = quiet;
	if (mpi) {
		int st = rc;
		MPI_Bcast(&st, 1, MPI_INT, 0, MPI_COMM_WORLD);
		if (st) {
			rc = st;
			goto out;
		}
		rc = run_mpi(&s, done, fd, rank, size, &prog, &nrun, &errors);
	} else if (rc == 0) {
		if (jobs == 0) {
			long n = sysconf(_SC_NPROCESSORS_ONLN);
			jobs = n > 0 ? (uint32_t)n : 1;
		}
		rc = run_local(&s, done, fd, jobs, &prog, &nrun, &errors);
	}
	if (rank == 0 && fd >= 0) {
		progress_show(&prog, true);
		/* sorted and renamed into place before the lock goes with fd */
		if (rc == 0)
			rc = sweep_results_sort(out_path, &s, &km, version);
		close(fd);
		fd = -1;
		if (rc == 0)
			summary(&s, spec_path, out_path, json, nrun, resumed, errors);
	}
out:
	if (fd >= 0)
		close(fd);
	sweep_keymap_free(&km, s.ncases);
	free(done);
	sweep_spec_free(&s);
	if (mpi)
		MPI_Finalize();
	return rank == 0 ? rc : 0;
}
