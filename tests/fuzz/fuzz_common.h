/*
 * fuzz_common.h - shared helpers of the libFuzzer targets in tests/fuzz/:
 * small dimension limits (so that the fuzzer explores parsing logic rather
 * than the allocator), a NUL-terminated copy of the input (the file loaders
 * hand the parsers NUL-terminated buffers) and a check that aborts, so that
 * a broken invariant shows up as a crash with a stack trace.
 */
#ifndef FAST_FUZZ_COMMON_H
#define FAST_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fast/topo.h"

/* Limits of every target: 256 GPUs, 16 matrices, 1 MiB of file. */
static inline void fuzz_limits(struct fast_limits *lim)
{
	lim->max_gpus = 256;
	lim->max_matrices = 16;
	lim->max_file_bytes = UINT64_C(1) << 20;
}

/* A malloc'ed copy of data[0..size) with a NUL after it (NULL: no memory,
 * which the caller treats as "nothing to do"). */
static inline char *fuzz_text(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (!s)
		return NULL;
	if (size)
		memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

#define FUZZ_CHECK(cond)                                                        \
	do {                                                                    \
		if (!(cond)) {                                                  \
			fprintf(stderr, "%s:%d: fuzz invariant failed: %s\n",   \
				__FILE__, __LINE__, #cond);                     \
			abort();                                                \
		}                                                               \
	} while (0)

/* An error message must be a non-empty, NUL-terminated string. */
#define FUZZ_CHECK_ERR(rc, e)                                                   \
	do {                                                                    \
		FUZZ_CHECK((rc) < 0);                                           \
		FUZZ_CHECK((e).code == (rc));                                   \
		FUZZ_CHECK(memchr((e).msg, '\0', sizeof (e).msg) != NULL);      \
		FUZZ_CHECK((e).msg[0] != '\0');                                 \
	} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
