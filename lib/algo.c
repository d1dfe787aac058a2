/*
 * algo.c - the table of schedule compilers and their default options:
 * `fast plan --algo NAME` and every other consumer go through
 * fast_compile(), which dispatches by name (FAST in fast.c, the baselines
 * in baselines.c).
 */
#include <string.h>

#include "algo.h"

typedef int (*compile_fn)(const struct fast_topo *, const uint64_t *,
			  const struct fast_algo_opts *, struct fast_plan *, struct fast_err *);

static const struct {
	const char *name;
	compile_fn fn;
} compilers[] = {
	{ "fast", fast_compile_fast },
	{ "fanout", fast_compile_fanout },
	{ "nccl", fast_compile_nccl },
	{ "pxn", fast_compile_pxn },
	{ "spreadout", fast_compile_spreadout },
	{ "hier", fast_compile_hier },
};

#define NCOMPILERS (sizeof compilers / sizeof compilers[0])

static const char *const names[NCOMPILERS + 1] = {
	"fast", "fanout", "nccl", "pxn", "spreadout", "hier", NULL,
};

void fast_algo_opts_default(struct fast_algo_opts *o)
{
	memset(o, 0, sizeof *o);
	o->stages = FAST_STAGES_AUTO; /* alpha-aware; it keeps exact when exact wins */
	o->order = FAST_ORDER_LARGEST_FIRST; /* the last stage, whose redistribution is exposed, smallest */
	o->balance = FAST_BALANCE_JIT; /* balancing overlaps the earlier stages */
	o->peers = 8;       /* NCCL's batch of peers in flight */
	o->chunk_bytes = 0; /* each algorithm's own default */
}

const char *const *fast_algo_names(void)
{
	return names;
}

bool fast_algo_known(const char *name)
{
	for (size_t k = 0; name && k < NCOMPILERS; k++)
		if (strcmp(name, compilers[k].name) == 0)
			return true;
	return false;
}

int fast_compile(const char *algo, const struct fast_topo *topo, const uint64_t *D,
		 const struct fast_algo_opts *opts, struct fast_plan *out,
		 struct fast_err *err)
{
	struct fast_algo_opts defaults;

	if (!opts) {
		fast_algo_opts_default(&defaults);
		opts = &defaults;
	}
	for (size_t k = 0; algo && k < NCOMPILERS; k++)
		if (strcmp(algo, compilers[k].name) == 0)
			return compilers[k].fn(topo, D, opts, out, err);
	return fast_err_set(err, FAST_EUSAGE,
			    "unknown algorithm '%.40s' (known: fast, fanout, nccl, pxn, spreadout, hier)",
			    algo ? algo : "(null)");
}
