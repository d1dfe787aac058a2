/*
 * traffic_internal.h - what traffic.c (the model, writers, statistics)
 * and traffic_read.c (the readers) share.  Not part of the library's
 * interface (traffic.h is).
 */
#ifndef FAST_TRAFFIC_INTERNAL_H
#define FAST_TRAFFIC_INTERNAL_H

#include "fast/traffic.h"

struct fast_jctx;
struct fast_jv;

/* lim, or the defaults written into *tmp when lim is NULL. */
const struct fast_limits *fast_traffic_limits(const struct fast_limits *lim,
					       struct fast_limits *tmp);

/* traffic_pairs.c: m's ",\n \"compute_pairs\": [...]" when it has them
 * (nothing otherwise; stream errors are the caller's to check). */
void fast_traffic_write_pairs(const struct fast_matrix *m, uint32_t ng, FILE *f);
/* Matrix object m's optional "compute_pairs" (ng integers <= 2^53, file
 * version >= 4) into out->compute_pairs; absent: 0, nothing set.
 * FAST_EINPUT naming the path, FAST_ENOMEM. */
int fast_traffic_read_pairs(struct fast_jctx *c, const struct fast_jv *m, uint64_t version,
			    uint32_t ng, struct fast_matrix *out);

#endif
