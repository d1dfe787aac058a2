/*
 * algo.c - the algorithm table (algo.h): one descriptor per schedule
 * compiler (FAST in compile_fast.c, the baselines in baselines.c) and one per
 * compiler option, with the parsing and printing every consumer shares.
 * `fast plan --algo NAME` and every other consumer go through
 * fast_compile(), which dispatches by name.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fast/algo.h"
#include "lib/compile/algo_auto.h"

/* The auto models' constants (struct fast_algo_model: k_lat, k_vol,
 * synth32_s, synth_exp).
 *
 * FIT (T_sim): `fast compare --preset P --servers 4 --gpus 8 --traffic T
 * --algos fast,fanout,nccl,pxn,spreadout,hier,auto --json` on P in {h200,
 * mi300x-100g}, uniform, Zipf 0.8 and the DeepSeek trace at 4 KiB
 * and 16 KiB (K_LAT = 1 / median of predicted / simulated with K = 1) and
 * 64 MiB..4 GiB per GPU (K_VOL likewise), from the rows of
 * `bash results/auto_study.sh` (4 x 8; its predicted_sim_s column) with
 * every K = 1; results/auto_check.py prints the errors left (docs/algorithms.md).
 * K_LAT was fitted on main's simulator, where every round of a chain paid
 * its per-step costs; where the topology's implementation keeps steps in
 * flight (in_flight > 1: the presets' fanout, nccl, pxn and hier) the
 * chain pays them as the simulator does and K_LAT is not applied
 * (algo_auto_model.c, baseline(): nccl, pxn and hier at 4 KiB predicted
 * at 0.64, 0.75 and 0.78 of their simulated time with it, 0.98-1.02
 * without, h200 and mi300x-100g, 4 x 8).
 *
 * FIT (S): the medians of thread-CPU time over 15 compiles after one
 * warm-up that `fast compare --preset h200 --servers N --gpus 8 --traffic
 * T --algos fast,fanout,nccl,pxn,spreadout,hier --json` reports as
 * synthesis_s, three runs each, on the dense cases T = `fast gen
 * --pattern P --mean-bytes M` with uniform 4K and 64K and Zipf 16M (and
 * Zipf 4G at N = 4) for N = 4 and N = 16: S32 = the median of the 4 x 8
 * samples, P = log4 of the 16 x 8 / 4 x 8 medians' ratio; this machine,
 * 2026-12-01 16:50-17:00 UTC, load 0.7-1.1, in the warm process of
 * cmd/main.c (keep_freed_memory: before it, every plan of a few MB paid
 * its page faults again on each compile, 2-3x these times at 16 x 8).
 * S32 / the 16 x 8 medians: fast (its staged stages: Zipf 16M) 11.0 /
 * 140.6 us; fanout 14.7 / 300 us, nccl 48.9 / 851 us, pxn 67.5 /
 * 1225 us, spreadout 19.4 / 300 us, hier 29.8 / 532 us (pxn measured
 * 105 us at Zipf 4G 4 x 8, its chunks: immaterial against the 80 ms
 * there).  fast's K_LAT refit for its packed stages (which it compiles
 * at these sizes since): 0.955 / 0.962, the median predicted /
 * simulated of the 12 FIT rows at 4 KiB and 16 KiB with K_LAT = 0.955
 * (0.955..1.003; `SIZES="4K 16K" bash results/auto_study.sh
 * build/bin/fast OUT 4`, 2026-12-01).  FAST's packed synthesis has its
 * own constants (lib/compile/algo_auto_model.c, packed_synth).
 *
 * The order is auto's: near-ties go to the first (fast, the default). */
const struct fast_algo fast_algos[] = {
	{ "fast", fast_sched_fast,
	  FAST_OPT_STAGES | FAST_OPT_ORDER | FAST_OPT_BALANCE | FAST_OPT_DEDUP, 0,
	  "FAST: balance within servers, one rail stage per Birkhoff term",
	  fast_sched_fast_tokens,
	  { 0.993, 1.0, 11.0e-6, 1.84, false, fast_auto_model_fast, fast_auto_refine_pair, 0 } },
	{ "fanout", fast_sched_fanout, 0, 0,
	  "every message at once: one out step, one up step (RCCL)", NULL,
	  { 1.0, 1.0, 14.7e-6, 2.18, true, fast_auto_model_fanout, NULL, 0 } },
	{ "nccl", fast_sched_nccl, FAST_OPT_PEERS, 0,
	  "NCCL's grouped send/recv: n - 1 rounds, peers in flight", NULL,
	  { 0.83, 1.0, 48.9e-6, 2.06, true, fast_auto_model_nccl, NULL, 0 } },
	{ "pxn", fast_sched_pxn, FAST_OPT_PEERS | FAST_OPT_CHUNK, UINT64_C(128) << 10,
	  "nccl with PXN: off-rail messages relayed over scale-up", NULL,
	  { 0.57, 1.0, 67.5e-6, 2.09, true, fast_auto_model_pxn, NULL, 0 } },
	{ "spreadout", fast_sched_spreadout, 0, 0,
	  "n - 1 globally synchronised rounds: GPU i sends to i + d", NULL,
	  { 1.0, 1.0, 19.4e-6, 1.98, true, fast_auto_model_spreadout, fast_auto_refine_rounds, 2 } },
	{ "hier", fast_sched_hier, FAST_OPT_CHUNK | FAST_OPT_DEDUP, UINT64_C(512) << 10,
	  "DeepEP-style: rail-aligned, then forwarded over scale-up", fast_sched_hier_tokens,
	  { 0.785, 1.08, 29.8e-6, 2.08, true, fast_auto_model_hier, fast_auto_refine_hier, 1 } },
	{ "auto", fast_sched_auto,
	  FAST_OPT_STAGES | FAST_OPT_ORDER | FAST_OPT_BALANCE | FAST_OPT_PEERS | FAST_OPT_CHUNK |
		  FAST_OPT_DEDUP, 0,
	  "the schedule above of least predicted time with synthesis (lib/compile/algo_auto.c)",
	  fast_sched_auto_tokens, { 0, 0, 0, 0, false, NULL, NULL, 0 } },
	{ NULL, NULL, 0, 0, NULL, NULL, { 0, 0, 0, 0, false, NULL, NULL, 0 } },
};

static const char *const stages_values[] = { "auto", "exact", "packed", "grouped", NULL };
static const char *const order_values[] = { "decomposition", "largest-first", "smallest-first",
					    NULL };
/* the simulator commands' and sweep specs' spelling before there was one */
static const char *const order_aliases[] = { "largest", "largest-first", "smallest",
					     "smallest-first", NULL };
static const char *const balance_values[] = { "upfront", "jit", NULL };
static const char *const dedup_values[] = { "server", "gpu", NULL };

static uint64_t get_stages(const struct fast_algo_opts *o) { return (uint64_t)o->stages; }
static uint64_t get_order(const struct fast_algo_opts *o) { return (uint64_t)o->order; }
static uint64_t get_balance(const struct fast_algo_opts *o) { return (uint64_t)o->balance; }
static uint64_t get_peers(const struct fast_algo_opts *o) { return o->peers; }
static uint64_t get_chunk(const struct fast_algo_opts *o) { return o->chunk_bytes; }
static uint64_t get_dedup(const struct fast_algo_opts *o) { return (uint64_t)o->dedup; }
static void set_stages(struct fast_algo_opts *o, uint64_t v) { o->stages = (enum fast_stages_mode)v; }
static void set_order(struct fast_algo_opts *o, uint64_t v) { o->order = (enum fast_stage_order)v; }
static void set_balance(struct fast_algo_opts *o, uint64_t v) { o->balance = (enum fast_balance_mode)v; }
static void set_peers(struct fast_algo_opts *o, uint64_t v) { o->peers = (uint32_t)v; }
static void set_chunk(struct fast_algo_opts *o, uint64_t v) { o->chunk_bytes = v; }
static void set_dedup(struct fast_algo_opts *o, uint64_t v) { o->dedup = (enum fast_dedup_mode)v; }

const struct fast_algo_option fast_algo_options[] = {
	{ "stages", FAST_OPT_STAGES, stages_values, NULL, 0, 0, "auto|exact|packed|grouped",
	  "fast: auto (default: alpha-aware, fewer larger stages\n"
	  "when the topology's per-stage cost makes them pay;\n"
	  "rail steps of several server permutations, balanced or\n"
	  "not, or packed stages, where those model faster),\n"
	  "exact (Birkhoff decomposition, one permutation a rail\n"
	  "step), packed (the N - 1 server shifts at once, each\n"
	  "on its own rails) or grouped (the same as auto)",
	  get_stages, set_stages },
	{ "order", FAST_OPT_ORDER, order_values, order_aliases, 0, 0,
	  "largest-first|smallest-first|decomposition",
	  "fast: the order of the rail stages (default\n"
	  "largest-first; largest and smallest are accepted as\n"
	  "aliases of largest-first and smallest-first)",
	  get_order, set_order },
	{ "balance", FAST_OPT_BALANCE, balance_values, NULL, 0, 0, "jit|upfront",
	  "fast: jit (default: the tiles stage 1 needs are\n"
	  "balanced first, the rest while stage 1 runs) or upfront\n"
	  "(all balancing before stage 1, as the paper)",
	  get_balance, set_balance },
	{ "peers", FAST_OPT_PEERS, NULL, NULL, 1, 1u << 20, "K",
	  "nccl/pxn: peers in flight per round (default 8)", get_peers, set_peers },
	{ "chunk", FAST_OPT_CHUNK, NULL, NULL, 0, 0, "BYTES",
	  "pxn/hier: forwarding chunk (e.g. 512K; default: the\n"
	  "algorithm's own, listed with it above)",
	  get_chunk, set_chunk },
	{ "dedup", FAST_OPT_DEDUP, dedup_values, NULL, 0, 0, "server|gpu",
	  "fast/hier on token traffic: server (default: a token\n"
	  "crosses to a server once, then scale-up copies; combine\n"
	  "reduces before crossing) or gpu (the per-GPU byte matrix);\n"
	  "auto: server weighs both plans of each, gpu byte plans only",
	  get_dedup, set_dedup },
	{ NULL, 0, NULL, NULL, 0, 0, NULL, NULL, NULL, NULL },
};

void fast_algo_opts_default(struct fast_algo_opts *o)
{
	memset(o, 0, sizeof *o);
	o->stages = FAST_STAGES_AUTO; /* alpha-aware; it keeps exact when exact wins */
	o->order = FAST_ORDER_LARGEST_FIRST; /* the last stage, whose redistribution is exposed, smallest */
	o->balance = FAST_BALANCE_JIT; /* balancing overlaps the earlier stages */
	o->peers = 8;       /* NCCL's batch of peers in flight */
	o->chunk_bytes = 0; /* each algorithm's own default */
	o->dedup = FAST_DEDUP_SERVER; /* what production MoE dispatchers do */
}

const struct fast_algo *fast_algo_find(const char *name)
{
	for (const struct fast_algo *a = fast_algos; name && a->name; a++)
		if (strcmp(name, a->name) == 0)
			return a;
	return NULL;
}

const struct fast_algo_option *fast_algo_option_find(const char *name)
{
	for (const struct fast_algo_option *o = fast_algo_options; name && o->name; o++)
		if (strcmp(name, o->name) == 0)
			return o;
	return NULL;
}

bool fast_algo_known(const char *name)
{
	return fast_algo_find(name) != NULL;
}

const char *fast_algo_list(char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (const struct fast_algo *a = fast_algos; a->name && n < len; a++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", a == fast_algos ? "" : ", ", a->name);
	return buf;
}

const char *fast_algo_suggest(const char *name, const char *const *extra, size_t n_extra)
{
	const char *cand[16];
	size_t n = 0;

	for (const struct fast_algo *a = fast_algos; a->name && n < 16; a++)
		cand[n++] = a->name;
	for (size_t i = 0; i < n_extra && n < 16; i++)
		cand[n++] = extra[i];
	return fast_suggest(name, cand, n);
}

/* names[] joined by ", " into buf. */
static const char *join(const char *const *names, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (size_t k = 0; names[k] && n < len; k++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", k ? ", " : "", names[k]);
	return buf;
}

int fast_algo_option_parse(const struct fast_algo_option *opt, const char *text,
			   struct fast_algo_opts *o, struct fast_err *err)
{
	char known[160];
	uint64_t v;

	if (opt->values) {
		for (size_t k = 0; opt->aliases && opt->aliases[k]; k += 2)
			if (strcmp(text, opt->aliases[k]) == 0)
				text = opt->aliases[k + 1];
		for (size_t k = 0; opt->values[k]; k++)
			if (strcmp(text, opt->values[k]) == 0) {
				opt->set(o, k);
				return 0;
			}
		return fast_err_set(err, FAST_EUSAGE, "unknown value '%.40s' (known: %s)", text,
				    join(opt->values, known, sizeof known));
	}
	if (opt->max == 0) {
		if (fast_size_parse(text, &v, err) < 0)
			return err->code; /* FAST_EUSAGE */
	} else {
		char *end;
		unsigned long long x;
		errno = 0;
		x = strtoull(text, &end, 10);
		if (!*text || *end || errno || text[0] == '-')
			return fast_err_set(err, FAST_EUSAGE, "'%.40s' is not a non-negative integer",
					    text);
		if (x < opt->min || x > opt->max)
			return fast_err_set(err, FAST_EUSAGE, "%llu is out of range [%llu, %llu]", x,
					    (unsigned long long)opt->min,
					    (unsigned long long)opt->max);
		v = x;
	}
	opt->set(o, v);
	return 0;
}

const char *fast_algo_option_print(const struct fast_algo_option *opt,
				   const struct fast_algo_opts *o, char *buf, size_t len)
{
	uint64_t v = opt->get(o);

	if (opt->values) {
		size_t n = 0;
		while (opt->values[n])
			n++;
		snprintf(buf, len, "%s", v < n ? opt->values[v] : "?");
	} else {
		snprintf(buf, len, "%llu", (unsigned long long)v);
	}
	return buf;
}

void fast_algo_opts_name(const struct fast_algo_opts *o, unsigned mask, const char *sep,
			 char *buf, size_t len)
{
	struct fast_algo_opts def;
	size_t n = 0;
	char v[32];

	fast_algo_opts_default(&def);
	buf[0] = '\0';
	for (const struct fast_algo_option *opt = fast_algo_options; opt->name && n < len; opt++)
		if ((opt->bit & mask) && opt->get(o) != opt->get(&def))
			n += (size_t)snprintf(buf + n, len - n, "%s%s=%s", n ? sep : "", opt->name,
					      fast_algo_option_print(opt, o, v, sizeof v));
	if (!buf[0])
		snprintf(buf, len, "-");
}

/* The byte matrix D's plan by algorithm `algo`. */
static int compile_bytes(const char *algo, const struct fast_topo *topo, const uint64_t *D,
			 const struct fast_algo_opts *opts, struct fast_plan *out,
			 struct fast_err *err)
{
	const struct fast_algo *a = fast_algo_find(algo);
	struct fast_algo_opts defaults;
	char known[96];

	if (!opts) {
		fast_algo_opts_default(&defaults);
		opts = &defaults;
	}
	if (a)
		return a->compile(topo, D, opts, out, err);
	return fast_err_set(err, FAST_EUSAGE, "unknown algorithm '%.40s' (known: %s)",
			    algo ? algo : "(null)", fast_algo_list(known, sizeof known));
}

int fast_compile(const char *algo, const struct fast_topo *topo, const struct fast_matrix *m,
		 const struct fast_algo_opts *opts, struct fast_plan *out, struct fast_err *err)
{
	const struct fast_algo *a = fast_algo_find(algo);
	struct fast_algo_opts defaults;
	bool tokens = m->kind != FAST_TRAFFIC_BYTES;
	struct fast_plan p;
	size_t len;
	int rc;

	if (!opts) {
		fast_algo_opts_default(&defaults);
		opts = &defaults;
	}
	/* auto weighs byte plans on token traffic with either dedup */
	if (tokens && a && a->compile_tokens &&
	    (opts->dedup == FAST_DEDUP_SERVER || a->compile == fast_sched_auto))
		rc = a->compile_tokens(topo, m, opts, &p, err);
	else
		rc = compile_bytes(algo, topo, m->bytes, opts, &p, err);
	if (rc < 0)
		return rc;
	/* the plan's record of the traffic it serves */
	len = strlen(p.options);
	if (tokens && len < sizeof p.options)
		snprintf(p.options + len, sizeof p.options - len, "%sdedup=%s", len ? " " : "",
			 p.kind == FAST_TRAFFIC_BYTES ? "gpu" : "server");
	*out = p;
	return 0;
}
