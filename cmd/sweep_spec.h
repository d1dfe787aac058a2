/*
 * sweep_spec.h - the what-if study specification of `fast sweep` (strict
 * JSON; unknown keys are rejected with their JSON path) and its expansion
 * into a deterministic Cartesian product of cases.
 *
 *   {
 *     "name": "skew",                              optional label
 *     "presets": ["h200", "mi300x-100g"],          and/or
 *     "topos": ["fabric.json"],                    topology files
 *     "servers": [4, 8], "gpus_per_server": [8],   preset dimensions (default: preset's;
 *                                                  "gpus", the old name, is read too)
 *     "scale_up_bw_GBps": [450], "scale_out_bw_GBps": [50, 100],  overrides
 *     "traffic": [
 *       {"pattern": "zipf", "skew": [0, 0.45, 0.9], "seeds": [1, 2]},
 *       {"pattern": "uniform"}, {"pattern": "random", "matrices": 2},
 *       {"pattern": "hotspot", "hot": [1, 4], "fraction": 0.5},
 *       {"pattern": "moe", "experts": 64, "topk": 6, "alpha": [0, 1.2],
 *        "tokens": 4096, "steps": 1, "drift": 0, "placement": "contiguous",
 *        "token_bytes": 4096},
 *       {"trace": "traces/moe.json", "matrices": [0, 1]}   (default: all)
 *     ],
 *     "sizes": ["1MiB", "64MiB"],                  mean per-GPU send (generated
 *                                                  traffic; default 64MiB)
 *     "algos": ["fast", "nccl", "spreadout"],
 *     "stages": ["auto", "exact"], "order": ["decomposition"],
 *     "balance": ["upfront", "jit"],               compiler options with names for
 *                                                  values (lib/compile/algo.c's table; order:
 *                                                  largest-first, smallest-first,
 *                                                  decomposition, aliases largest,
 *                                                  smallest), crossed for the
 *                                                  algorithms they apply to (fast)
 *     "simulate": true, "congestion": true, "epsilon": 0,
 *     "bound": "lp" | "closed" | "none",
 *     "max_gpus": 16384
 *   }
 *
 * Every axis value may be a scalar or an array.  Paths are relative to the
 * working directory.  Order of the product (outermost first): topology
 * (presets, then files; servers, gpus, scale-up, scale-out), traffic entry
 * (its parameter combinations, seeds), size, matrix, algorithm (options).
 * A group is everything that shares topology, traffic and size: it is
 * generated and bounded once.  A trace whose GPU count differs from a
 * topology's is skipped for that topology (counted in `skipped`).
 *
 * Ownership: struct sweep_spec owns its arrays and loaded traces;
 * sweep_spec_free() releases them (NULL-safe).
 */
#ifndef FAST_CMD_SWEEP_SPEC_H
#define FAST_CMD_SWEEP_SPEC_H

#include "sweep_case.h"
#include "lib/workload/gen.h"

struct sweep_topo {
	struct fast_topo topo;
	char name[FAST_NAME_MAX]; /* preset or file name */
	char key[200];
};

struct sweep_traffic {
	bool is_trace;
	struct fast_gen_opts gen;  /* pattern, parameters, seed (mean set per size) */
	uint32_t trace;            /* index in spec->traces */
	uint32_t nmat;             /* matrices per group */
	uint32_t *mats;            /* trace: selected matrix indices (owned) */
	char desc[160];            /* "zipf(skew=0.9)", "trace:file.json" */
};

struct sweep_algo {
	char algo[32];
	struct fast_algo_opts opts;
	char options[64];
};

struct sweep_group {
	uint32_t topo, traffic, size; /* size: index in sizes, or UINT32_MAX */
	uint64_t case0;               /* first case index */
	uint32_t ncases;              /* nmat * nalgos */
};

struct sweep_spec {
	char name[64];
	struct fast_limits lim;
	struct sweep_eval eval;
	struct sweep_topo *topos; uint32_t ntopos;
	struct sweep_traffic *traffics; uint32_t ntraffics;
	uint64_t *sizes; uint32_t nsizes;
	struct sweep_algo *algos; uint32_t nalgos;
	struct fast_traffic *traces; uint32_t ntraces;
	char (*trace_paths)[256];
	struct sweep_group *groups; uint32_t ngroups;
	uint64_t ncases;
	uint64_t skipped;             /* topology x trace combinations dropped */
};

/* Load and expand a spec file.  Errors: FAST_EINPUT/FAST_ELIMIT with
 * "spec.json: /traffic/2/skew: ..." (or the trace/topology file's own
 * message), FAST_ENOMEM.  out is written only on success. */
int sweep_spec_load(const char *path, struct sweep_spec *out, struct fast_err *err);
void sweep_spec_free(struct sweep_spec *s);

/* The row of case `id` of group g with its identity columns filled (key,
 * topology, traffic, matrix index, algorithm); measured fields absent.
 * *mat receives the matrix index within the group's traffic and *algo the
 * algorithm variant. */
void sweep_spec_case(const struct sweep_spec *s, uint32_t g, uint64_t id, struct sweep_row *r,
		     uint32_t *mat, uint32_t *algo);

/* Generate the traffic of group g (for a trace group *out is left empty:
 * its matrices live in the spec).  FAST_* on failure; the caller frees
 * out with fast_traffic_free(). */
int sweep_spec_traffic(const struct sweep_spec *s, uint32_t g, struct fast_traffic *out,
		       struct fast_err *err);
/* Matrix `mat` of group g (gen: what sweep_spec_traffic made) and its
 * label; NULL when gen has no such matrix. */
const struct fast_matrix *sweep_spec_matrix(const struct sweep_spec *s, uint32_t g,
					    const struct fast_traffic *gen, uint32_t mat,
					    const char **label);

#endif
