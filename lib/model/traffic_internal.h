/*
 * traffic_internal.h - what traffic.c (the model, writers, statistics)
 * and traffic_read.c (the readers) share.  Not part of the library's
 * interface (traffic.h is).
 */
#ifndef FAST_TRAFFIC_INTERNAL_H
#define FAST_TRAFFIC_INTERNAL_H

#include "fast/traffic.h"

/* lim, or the defaults written into *tmp when lim is NULL. */
const struct fast_limits *fast_traffic_limits(const struct fast_limits *lim,
					       struct fast_limits *tmp);

#endif
