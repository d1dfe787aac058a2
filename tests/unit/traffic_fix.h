/*
 * traffic_fix.h - what lib/traffic's suites (test_traffic*.c) share: a
 * document parsed from a string as "t.json" (with limits or the
 * defaults), an expected parse failure (code, message, and the output
 * untouched), a growable string over open_memstream and a traffic written
 * to one (JSON dense or sparse, or nccl; caller frees).
 */
#ifndef FAST_TEST_TRAFFIC_FIX_H
#define FAST_TEST_TRAFFIC_FIX_H

#include <stdio.h>
#include <string.h>

#include "fast/traffic.h"
#include "unit.h"

static inline int parse_lim(const char *text, const struct fast_limits *lim, struct fast_traffic *t,
			    struct fast_err *err)
{
	return fast_traffic_parse(text, strlen(text), "t.json", lim, t, err);
}

static inline int parse(const char *text, struct fast_traffic *t, struct fast_err *err)
{
	return parse_lim(text, NULL, t, err);
}

static inline void expect_error_lim(const char *text, const struct fast_limits *lim, int code,
				    const char *msg)
{
	struct fast_traffic t;
	struct fast_err err = { 0 };

	memset(&t, 0x5a, sizeof t);
	CU_ASSERT_EQUAL(parse_lim(text, lim, &t, &err), code);
	CU_ASSERT_EQUAL(err.code, code);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, msg));
	if (!strstr(err.msg, msg))
		fprintf(stderr, "\n  got:    %s\n  wanted: %s\n", err.msg, msg);
	CU_ASSERT_EQUAL(((unsigned char *)&t)[0], 0x5a); /* untouched on failure */
}

static inline void expect_error(const char *text, int code, const char *msg)
{
	expect_error_lim(text, NULL, code, msg);
}

/* A growable string for generated inputs. */
struct sbuf {
	char *p;
	size_t len;
	FILE *f;
};

static inline void sb_open(struct sbuf *s)
{
	s->p = NULL;
	s->len = 0;
	s->f = open_memstream(&s->p, &s->len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s->f);
}

static inline char *sb_close(struct sbuf *s)
{
	fclose(s->f);
	return s->p;
}

/* Write t (JSON or nccl) to a string; caller frees. */
static inline char *write_str(const struct fast_traffic *t, int how, uint64_t *changed)
{
	struct sbuf s;
	struct fast_err err = { 0 };

	sb_open(&s);
	if (how == 2) {
		CU_ASSERT_EQUAL(fast_traffic_write_nccl(t, 0, s.f, changed, &err), 0);
	} else {
		CU_ASSERT_EQUAL(fast_traffic_write(t, how == 1, s.f, &err), 0);
	}
	return sb_close(&s);
}

#endif
