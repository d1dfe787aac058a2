/*
 * fuzz_spec.c - libFuzzer target of the sweep specification reader
 * (sweep_spec_load, cmd/sweep_spec.h) and of its case expansion.
 *
 * sweep_spec_load reads a path, so the input goes into a memory file
 * (memfd) read back through /proc/self/fd/N.  Topology and trace paths
 * named by the spec are opened as given: run this target from the
 * repository root with stdin redirected from /dev/null (a spec naming
 * /dev/stdin must not block).  A spec that loads is walked case by case
 * (sweep_spec_case, sweep_spec_matrix on trace groups), capped at
 * MAX_CASES rows; traffic generation is not part of this target.
 */
#define _GNU_SOURCE
#include "fuzz_common.h"

#include <sys/mman.h>
#include <unistd.h>

#include "cmd/sweep_spec.h"

#define MAX_CASES 4096u

/* The spec reader records every file it names for the CLI's rule that an
 * output is never an input (cmd/cli_files.c).  That list lives for the process,
 * which here is a million specs: the harness takes the records and keeps
 * none (parsing does not depend on them). */
void cli_input(const char *path);
void cli_input(const char *path)
{
	(void)path;
}

static int g_fd = -1;
static char g_path[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sweep_spec s;
	struct fast_err err;
	uint64_t walked = 0;
	int rc;

	if (g_fd < 0) {
		g_fd = memfd_create("spec.json", 0);
		FUZZ_CHECK(g_fd >= 0);
		snprintf(g_path, sizeof g_path, "/proc/self/fd/%d", g_fd);
	}
	FUZZ_CHECK(ftruncate(g_fd, 0) == 0);
	FUZZ_CHECK(pwrite(g_fd, data, size, 0) == (ssize_t)size);

	memset(&err, 0x55, sizeof err);
	rc = sweep_spec_load(g_path, &s, &err);
	if (rc < 0) {
		FUZZ_CHECK_ERR(rc, err);
		return 0;
	}
	FUZZ_CHECK(s.ntopos >= 1 && s.ntraffics >= 1 && s.nalgos >= 1 && s.nsizes >= 1);
	for (uint32_t g = 0; g < s.ngroups && walked < MAX_CASES; g++) {
		const struct sweep_group *gr = &s.groups[g];
		FUZZ_CHECK(gr->topo < s.ntopos && gr->traffic < s.ntraffics);
		FUZZ_CHECK(gr->case0 + gr->ncases <= s.ncases);
		for (uint64_t id = gr->case0; id < gr->case0 + gr->ncases && walked < MAX_CASES;
		     id++, walked++) {
			struct sweep_row r;
			uint32_t mat = 0, algo = 0;
			char line[2048];
			sweep_spec_case(&s, g, id, &r, &mat, &algo);
			FUZZ_CHECK(algo < s.nalgos);
			FUZZ_CHECK(sweep_row_format(&r, line, sizeof line) > 0);
			if (s.traffics[gr->traffic].is_trace) {
				const char *label = NULL;
				FUZZ_CHECK(sweep_spec_matrix(&s, g, NULL, mat, &label) != NULL);
				FUZZ_CHECK(label != NULL);
			}
		}
	}
	sweep_spec_free(&s);
	return 0;
}
