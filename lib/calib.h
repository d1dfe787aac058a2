/*
 * calib.h - fit a topology's per-tier latency and efficiency to a user's
 * own measurements (`fast calibrate`).
 *
 * Model (the simulator's, for one transfer on one tier): time = alpha +
 * bytes / (line rate x efficiency).  A least-squares line through the
 * measured (bytes on the link, time) points gives alpha (intercept) and the
 * achieved bandwidth (1 / slope); efficiency = achieved / line rate.  Line
 * rate stays as the topology says: from throughput alone, line rate and
 * efficiency cannot be told apart.
 *
 * Inputs: nccl-tests output of sendrecv_perf (one peer: every byte crosses
 * one link of the tier) and alltoall_perf (n ranks, G per server: each rank
 * sends size/n to each peer, so size (n - G) / n bytes leave through its NIC,
 * the scale-out tier), and `fast run --json` output of a uniform traffic
 * (treated like alltoall_perf with size = per-GPU bytes).
 */
#ifndef FAST_CALIB_H
#define FAST_CALIB_H

#include "common.h"
#include "topo.h"

enum fast_calib_kind { FAST_CALIB_SENDRECV, FAST_CALIB_ALLTOALL, FAST_CALIB_FASTRUN };

#define FAST_CALIB_MAX_POINTS 4096

struct fast_calib_points {
	size_t n;
	double bytes[FAST_CALIB_MAX_POINTS]; /* bytes crossing the fitted tier per link */
	double time_us[FAST_CALIB_MAX_POINTS];
};

/* Parse a measurement file into points for `tier` of topology t (ranks:
 * the nccl-tests run's rank count for alltoall; 0 = the topology's GPUs).
 * FAST_EINPUT with "file:line: ..." on malformed input or too few points. */
int fast_calib_parse(const char *text, size_t len, const char *name, enum fast_calib_kind kind,
		     const struct fast_topo *t, uint32_t ranks, struct fast_calib_points *out,
		     struct fast_err *err);

struct fast_calib_fit {
	double latency_us;      /* alpha, >= 0 */
	double achieved_GBps;   /* 1 / slope */
	double efficiency;      /* achieved / line rate */
	double r2;              /* coefficient of determination */
	double max_rel_err;     /* max |model - measured| / measured over the points */
	double mean_rel_err;
	size_t points;
};

/* Least-squares fit; FAST_EINPUT when the points do not determine a line
 * (fewer than 2 distinct sizes, or time not increasing with size). */
int fast_calib_fit(const struct fast_calib_points *p, double line_rate_GBps,
		   struct fast_calib_fit *out, struct fast_err *err);

#endif
