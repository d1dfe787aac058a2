/*
 * api_internal.h - what the files of libfast.so's facade share (api.c:
 * topology, traffic, compile and plans; api_run.c: check, bound,
 * simulate, per-rank programs): the handles' layout, errors into the
 * caller's struct fast_api_error, JSON strings through open_memstream.
 * Not installed.
 */
#ifndef FAST_API_INTERNAL_H
#define FAST_API_INTERNAL_H

#include <stdarg.h>
#include <stdio.h>

#include "fast/api.h"
#include "fast/plan.h"
#include "fast/prog.h"
#include "fast/sim.h"
#include "fast/topo.h"
#include "fast/traffic.h"

struct fast_api_topo {
	struct fast_topo t;
};
struct fast_api_traffic {
	struct fast_traffic t;
	char name[256]; /* the file, or "traffic": messages name it */
};
struct fast_api_plans {
	struct fast_planset ps;
	char name[256]; /* the file, or "plans": messages name it */
};
struct fast_api_prog {
	struct fast_prog *p;
};

_Static_assert((int)FAST_API_EINPUT == (int)FAST_EINPUT && (int)FAST_API_ECHECK == (int)FAST_ECHECK &&
		       (int)FAST_API_EUSAGE == (int)FAST_EUSAGE && (int)FAST_API_ENOMEM == (int)FAST_ENOMEM &&
		       (int)FAST_API_EIO == (int)FAST_EIO && (int)FAST_API_ELIMIT == (int)FAST_ELIMIT &&
		       (int)FAST_API_ESOLVER == (int)FAST_ESOLVER && (int)FAST_API_ERUNTIME == (int)FAST_ERUNTIME,
	       "api.h's codes are common.h's");
_Static_assert(sizeof ((struct fast_api_error *)0)->msg >= FAST_ERRMSG_MAX, "room for a message");

/* the library's error into the caller's; returns its code */
int api_give(struct fast_api_error *out, const struct fast_err *e);
/* a new error into the caller's; returns code */
int api_fail(struct fast_api_error *out, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* A string written into memory by the CLI's writers: open, write to m->f,
 * close with the writer's result (0 or a code already given to err); on
 * success *json is the caller's (fast_api_string_free). */
struct mem {
	FILE *f;
	char *buf;
	size_t len;
};
int api_mem_open(struct mem *m, struct fast_api_error *err);
int api_mem_close(struct mem *m, int rc, char **json, struct fast_api_error *err);

/* The compile options names[i] = values[i] into o, as the command line's
 * --NAME VALUE (same messages); *given: their FAST_OPT_* bits (api.c). */
struct fast_algo_opts;
int api_compile_options(const char *const *names, const char *const *values, size_t n,
			struct fast_algo_opts *o, unsigned *given, struct fast_api_error *err);
/* FAST_API_EUSAGE unless algo is a known algorithm taking every option of
 * given, in cmd/cli_algo.c's words (api.c). */
int api_algo_applies(const char *algo, unsigned given, struct fast_api_error *err);

/* The simulator options of api.h (api_run.c): defaults, then the n given. */
struct sim_settings {
	struct fast_sim_opts so;
	bool steps, check;
};
int api_sim_options(const char *const *names, const char *const *values, size_t n,
		    struct sim_settings *s, struct fast_api_error *err);

/* The command line's default limits in *l, returned. */
const struct fast_limits *api_limits(struct fast_limits *l);

#endif
