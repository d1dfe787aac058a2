/*
 * lines.h - a text cut into lines, for the readers of line formats (the
 * MoE data set's CSVs, routing CSVs and JSON lines): "\n" or "\r\n" ends,
 * a UTF-8 byte-order mark skipped (spreadsheet exports start with one),
 * each line counted for messages.  The text is borrowed, never copied.
 */
#ifndef FAST_LINES_H
#define FAST_LINES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fast_lines {
	const char *p, *end;
	uint32_t no; /* the line last returned, from 1 */
};

/* The lines of text[0..len). */
struct fast_lines fast_lines_of(const char *text, size_t len);

/* The next line into *s, *n, without its "\n" and any carriage returns
 * before it (CRLF files, and CRCRLF ones converted twice); false at the
 * end. */
bool fast_lines_next(struct fast_lines *it, const char **s, size_t *n);

#endif
