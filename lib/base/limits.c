/*
 * limits.c - default dimension limits (struct fast_limits, common.h).
 */
#include "fast/common.h"

void fast_limits_default(struct fast_limits *lim)
{
	lim->max_gpus = FAST_DEFAULT_MAX_GPUS;
	lim->max_matrices = FAST_DEFAULT_MAX_MATRICES;
	lim->max_file_bytes = FAST_DEFAULT_MAX_FILE_BYTES;
	lim->max_traffic_bytes = FAST_DEFAULT_MAX_TRAFFIC_BYTES;
	lim->max_groups = FAST_DEFAULT_MAX_GROUPS;
}
