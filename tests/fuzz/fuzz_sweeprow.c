/*
 * fuzz_sweeprow.c - libFuzzer target of the sweep results reader
 * (sweep_row_parse, cmd/sweep_case.h): `fast sweep` resumes from the rows
 * of an earlier results CSV, so each line of that file is untrusted input.
 *
 * The input is split into lines like the resume reader does; a row that
 * parses must format (sweep_row_format) into the usual 2 KiB buffer and
 * parse back with the same identity columns.  Lines go through the reader
 * of previous-version files (sweep_row_parse_v1: versions 1 to 3) and this
 * version's reader (sweep_row_parse); no line is a row of both (their
 * column counts differ), and a row of either formats as this version's.
 */
#include "fuzz_common.h"

#include "cmd/sweep_case.h"

static void one_line(const char *line)
{
	struct sweep_row r, r2;
	char buf[2048];
	size_t n;
	bool had_ident;

	bool old = sweep_row_parse_v1(line, &r, &had_ident) == 0;
	bool cur = sweep_row_parse(line, &r2) == 0;

	FUZZ_CHECK(!(old && cur));
	if (!old && !cur)
		return;
	if (cur)
		r = r2;
	FUZZ_CHECK(r.key[0] != '\0');
	n = sweep_row_format(&r, buf, sizeof buf);
	FUZZ_CHECK(n > 0 && n < sizeof buf && buf[n - 1] == '\n');
	FUZZ_CHECK(sweep_row_parse(buf, &r2) == 0);
	FUZZ_CHECK(r2.case_id == r.case_id && strcmp(r2.key, r.key) == 0);
	FUZZ_CHECK(strcmp(r2.ident, r.ident) == 0);
	FUZZ_CHECK(strcmp(r2.status, r.status) == 0 && r2.matrix == r.matrix);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	char *p, *nl;

	if (!text)
		return 0;
	for (p = text; p < text + size; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(text + size - p));
		if (!nl)
			nl = text + size;
		*nl = '\0';
		one_line(p);
	}
	free(text);
	return 0;
}
