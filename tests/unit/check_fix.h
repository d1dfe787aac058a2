/*
 * check_fix.h - the 2 servers x 2 GPUs fixture of the plan checker's
 * suites (test_check*.c): NG GPUs and a bare topology of that shape (no
 * rates: the checker reads only the dimensions).
 */
#ifndef FAST_TEST_CHECK_FIX_H
#define FAST_TEST_CHECK_FIX_H

#include <string.h>

#include "fast/topo.h"

#define NG 4 /* 2 servers x 2 GPUs */

static inline struct fast_topo topo2x2(void)
{
	struct fast_topo t;
	memset(&t, 0, sizeof t);
	t.servers = 2;
	t.gpus = 2;
	return t;
}

#endif
