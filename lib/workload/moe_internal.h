/*
 * moe_internal.h - helpers shared by moe_parse.c and moe_import.c, not part
 * of the library's interface (moe.h is).
 */
#ifndef FAST_MOE_INTERNAL_H
#define FAST_MOE_INTERNAL_H

#include <stdint.h>

#include "lib/workload/moe.h"

/* Room for n groups of `experts` counts in g (tokens and counts resized);
 * 0 or FAST_ENOMEM. */
int fast_moe_groups_alloc(struct fast_moe_groups *g, uint32_t n, uint32_t experts,
			  struct fast_err *err);

/* Append layer to the set (*v, *n, *cap) unless it is there; 0 or FAST_ENOMEM. */
int fast_moe_add_layer(uint32_t **v, uint32_t *n, uint32_t *cap, uint32_t layer,
		       struct fast_err *err);

/* qsort comparator of uint32_t. */
int fast_moe_u32_cmp(const void *a, const void *b);

#endif
