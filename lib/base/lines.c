/*
 * lines.c - a text cut into lines (lines.h).
 */
#include "lib/base/lines.h"

#include <string.h>

struct fast_lines fast_lines_of(const char *text, size_t len)
{
	struct fast_lines it = { text, text + len, 0 };

	if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
		it.p += 3;
	return it;
}

bool fast_lines_next(struct fast_lines *it, const char **s, size_t *n)
{
	const char *nl;

	if (it->p >= it->end)
		return false;
	nl = memchr(it->p, '\n', (size_t)(it->end - it->p));
	*s = it->p;
	*n = (size_t)((nl ? nl : it->end) - it->p);
	it->p = nl ? nl + 1 : it->end;
	while (*n && (*s)[*n - 1] == '\r')
		(*n)--;
	it->no++;
	return true;
}
