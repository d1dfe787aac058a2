/*
 * sweep_spec.c - parse and expand a sweep specification (sweep_spec.h).
 *
 * The spec's JSON turned into the Cartesian product of cases.  In file
 * order: one parser per part of the spec (topologies, traffic entries,
 * algorithms and their option axes, evaluation), the expansion into
 * groups and case indices, and the three lookups of that expansion (a
 * case's row, a group's traffic, a matrix).  The axis readers the parsers
 * share (a scalar or an array of distinct values, with the JSON path in
 * every error) and the bounded growing arrays are sweep_spec_axes.c.
 */
#include "sweep_spec.h"
#include "sweep_spec_internal.h"
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli_algo.h"
#include "fast/algo.h"
#include "lib/base/json.h"
#include "fast/sim.h"

#define NOSIZE UINT32_MAX

void sweep_spec_free(struct sweep_spec *s)
{
	if (!s)
		return;
	for (uint32_t i = 0; i < s->ntraffics; i++)
		free(s->traffics[i].mats);
	for (uint32_t i = 0; i < s->ntraces; i++)
		fast_traffic_free(&s->traces[i]);
	free(s->topos);
	free(s->traffics);
	free(s->sizes);
	free(s->algos);
	free(s->traces);
	free(s->trace_paths);
	free(s->groups);
	memset(s, 0, sizeof *s);
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* --- topologies ------------------------------------------------------------- */

static int add_topo(struct sweep_spec *s, const struct fast_topo *t, const char *name,
		    const double *up, const double *out, struct fast_err *err)
{
	struct sweep_topo *v;
	int rc;

	if ((rc = sweep_spec_push((void **)&s->topos, &s->ntopos, sizeof *s->topos, err)) < 0)
		return rc;
	v = &s->topos[s->ntopos - 1];
	v->topo = *t;
	if (up)
		v->topo.up.bw_GBps = *up;
	if (out)
		v->topo.out.bw_GBps = *out;
	if ((rc = fast_topo_validate(&v->topo, &s->lim, err)) < 0) {
		fast_err_prefix(err, "sweep: topology %s", name);
		return rc;
	}
	snprintf(v->name, sizeof v->name, "%s", name);
	sweep_sanitize(v->name);
	snprintf(v->key, sizeof v->key, "topo=%s;N=%u;G=%u;up=%.9g;out=%.9g", v->name,
		 v->topo.servers, v->topo.gpus, v->topo.up.bw_GBps, v->topo.out.bw_GBps);
	return 0;
}

static int parse_topos(struct fast_jctx *c, const struct fast_jv *root, struct sweep_spec *s)
{
	const char *presets[MAX_AXIS], *files[MAX_AXIS];
	uint64_t servers[MAX_AXIS], gpus[MAX_AXIS];
	double ups[MAX_AXIS], outs[MAX_AXIS];
	uint32_t np, nf, ns, ng, nu, no;
	/* "gpus" is the name before gpus_per_server; either is read */
	const char *gk = fast_jv_renamed(c, root, "gpus_per_server", "gpus");
	int rc;

	if (!gk)
		return FAST_EINPUT;
	if ((rc = sweep_axis_strings(c, root, "presets", presets, &np)) < 0 ||
	    (rc = sweep_axis_strings(c, root, "topos", files, &nf)) < 0 ||
	    (rc = sweep_axis_u64(c, root, "servers", 1, 1u << 20, servers, &ns)) < 0 ||
	    (rc = sweep_axis_u64(c, root, gk, 1, 1u << 16, gpus, &ng)) < 0 ||
	    (rc = sweep_axis_doubles(c, root, "scale_up_bw_GBps", 0, 1e9, true, ups, &nu)) < 0 ||
	    (rc = sweep_axis_doubles(c, root, "scale_out_bw_GBps", 0, 1e9, true, outs, &no)) < 0)
		return rc;
	if (np + nf == 0)
		return fast_jctx_fail(c, FAST_EINPUT, "give \"presets\" or \"topos\"");
	if ((ns || ng) && np == 0) {
		size_t old = fast_jctx_push_key(c, ns ? "servers" : gk);
		rc = fast_jctx_fail(c, FAST_EINPUT, "scales presets: give \"presets\"");
		fast_jctx_pop(c, old);
		return rc;
	}
	for (uint32_t i = 0; i < np; i++)
		for (uint32_t a = 0; a < (ns ? ns : 1); a++)
			for (uint32_t b = 0; b < (ng ? ng : 1); b++) {
				struct fast_topo t;
				if ((uint64_t)(ns ? servers[a] : 4) * (ng ? gpus[b] : 8) > s->lim.max_gpus)
					return fast_err_set(c->err, FAST_ELIMIT,
							    "%s: /servers: %llu x %llu GPUs is over the limit of %u (set \"max_gpus\")",
							    c->file, (unsigned long long)(ns ? servers[a] : 4),
							    (unsigned long long)(ng ? gpus[b] : 8), s->lim.max_gpus);
				rc = fast_topo_preset(presets[i], ns ? (uint32_t)servers[a] : 0,
						      ng ? (uint32_t)gpus[b] : 0, &s->lim, &t, c->err);
				if (rc < 0) {
					if (fast_jv_type(fast_jv_get(root, "presets")) == FAST_JARRAY)
						fast_err_prefix(c->err, "%s: /presets/%u", c->file, i);
					else
						fast_err_prefix(c->err, "%s: /presets", c->file);
					if (rc == FAST_EUSAGE)
						rc = c->err->code = FAST_EINPUT;
					return rc;
				}
				for (uint32_t u = 0; u < (nu ? nu : 1); u++)
					for (uint32_t o = 0; o < (no ? no : 1); o++)
						if ((rc = add_topo(s, &t, presets[i], nu ? &ups[u] : NULL,
								   no ? &outs[o] : NULL, c->err)) < 0)
							return rc;
			}
	for (uint32_t i = 0; i < nf; i++) {
		struct fast_topo t;
		cli_input(files[i]);
		if ((rc = fast_topo_load(files[i], &s->lim, &t, c->err)) < 0)
			return rc;
		for (uint32_t u = 0; u < (nu ? nu : 1); u++)
			for (uint32_t o = 0; o < (no ? no : 1); o++)
				if ((rc = add_topo(s, &t, base_name(files[i]), nu ? &ups[u] : NULL,
						   no ? &outs[o] : NULL, c->err)) < 0)
					return rc;
	}
	return 0;
}

/* --- traffic ------------------------------------------------------------------ */

static int add_gen(struct sweep_spec *s, const struct fast_gen_opts *g, uint32_t nmat,
		   const char *desc, struct fast_err *err)
{
	struct sweep_traffic *v;
	int rc;

	if ((rc = sweep_spec_push((void **)&s->traffics, &s->ntraffics, sizeof *s->traffics, err)) < 0)
		return rc;
	v = &s->traffics[s->ntraffics - 1];
	v->gen = *g;
	v->nmat = nmat;
	snprintf(v->desc, sizeof v->desc, "%s", desc);
	sweep_sanitize(v->desc);
	for (char *p = v->desc; *p; p++)
		if (*p == ';')
			*p = '/';
	return 0;
}

static int reject(struct fast_jctx *c, const struct fast_jv *e, const char *key, const char *why)
{
	size_t old;
	int rc;

	if (!fast_jv_get(e, key))
		return 0;
	old = fast_jctx_push_key(c, key);
	rc = fast_jctx_fail(c, FAST_EINPUT, "%s", why);
	fast_jctx_pop(c, old);
	return rc;
}

/* key, when present, must be a single value (not an array). */
static int single(struct fast_jctx *c, const struct fast_jv *e, const char *key)
{
	if (fast_jv_type(fast_jv_get(e, key)) != FAST_JARRAY)
		return 0;
	return reject(c, e, key, "takes one value, not an array");
}

static int parse_trace(struct fast_jctx *c, const struct fast_jv *e, struct sweep_spec *s)
{
	static const char *const allowed[] = { "trace", "matrices", NULL };
	char path[256];
	uint64_t mats[MAX_AXIS];
	uint32_t nm, k;
	struct sweep_traffic *v;
	struct fast_traffic *t;
	int rc;

	if ((rc = fast_jv_expect_object(c, e, allowed)) < 0 ||
	    (rc = fast_jv_get_string(c, e, "trace", true, path, sizeof path)) < 0)
		return rc;
	/* the same file twice is loaded once */
	for (k = 0; k < s->ntraces && strcmp(s->trace_paths[k], path) != 0; k++)
		;
	if (k == s->ntraces) {
		struct fast_traffic tr;
		uint32_t n = s->ntraces;
		cli_input(path);
		if ((rc = fast_traffic_load(path, &s->lim, &tr, c->err)) < 0)
			return rc;
		if ((rc = sweep_spec_push((void **)&s->traces, &n, sizeof *s->traces, c->err)) < 0 ||
		    (rc = sweep_spec_push((void **)&s->trace_paths, &s->ntraces, sizeof *s->trace_paths, c->err)) < 0) {
			fast_traffic_free(&tr);
			return rc;
		}
		s->traces[k] = tr;
		snprintf(s->trace_paths[k], sizeof s->trace_paths[k], "%s", path);
	}
	t = &s->traces[k];
	if ((rc = sweep_axis_u64(c, e, "matrices", 0, UINT32_MAX, mats, &nm)) < 0)
		return rc;
	for (uint32_t i = 0; i < nm; i++)
		if (mats[i] >= t->count) {
			size_t old = sweep_axis_path(c, e, "matrices", i);
			rc = fast_jctx_fail(c, FAST_EINPUT, "%s has %u matrices (0..%u)", path, t->count,
					    t->count - 1);
			fast_jctx_pop(c, old);
			return rc;
		}
	if ((rc = sweep_spec_push((void **)&s->traffics, &s->ntraffics, sizeof *s->traffics, c->err)) < 0)
		return rc;
	v = &s->traffics[s->ntraffics - 1];
	v->is_trace = true;
	v->trace = k;
	v->nmat = nm ? nm : t->count;
	v->mats = fast_calloc(v->nmat, sizeof *v->mats);
	if (!v->mats)
		return fast_err_set(c->err, FAST_ENOMEM, "sweep spec: out of memory");
	for (uint32_t i = 0; i < v->nmat; i++)
		v->mats[i] = nm ? (uint32_t)mats[i] : i;
	snprintf(v->desc, sizeof v->desc, "trace:%.150s", path);
	sweep_sanitize(v->desc);
	for (char *p = v->desc; *p; p++)
		if (*p == ';')
			*p = '/';
	return 0;
}

static int parse_gen(struct fast_jctx *c, const struct fast_jv *e, struct sweep_spec *s)
{
	static const char *const allowed[] = { "pattern", "seeds", "matrices", "skew", "hot",
					       "fraction", "tokens", "topk", "experts", "alpha",
					       "placement", "token_bytes", "steps", "drift", NULL };
	static const char *const patterns[] = { "uniform", "random", "zipf", "hotspot", "moe", NULL };
	static const char *const places[] = { "contiguous", "round-robin", NULL };
	struct fast_gen_opts g;
	uint64_t seeds[MAX_AXIS], hots[MAX_AXIS];
	double skews[MAX_AXIS], fracs[MAX_AXIS], alphas[MAX_AXIS];
	uint32_t nseeds, nskew, nhot, nfrac, nalpha, n;
	int pat, place;
	int rc;
	char desc[160];

	fast_gen_defaults(&g);
	if ((rc = fast_jv_expect_object(c, e, allowed)) < 0 || (rc = single(c, e, "pattern")) < 0 ||
	    (rc = single(c, e, "placement")) < 0 ||
	    (rc = sweep_axis_enum(c, e, "pattern", patterns, &pat, &n)) < 0)
		return rc;
	if (n == 0)
		return fast_jctx_fail(c, FAST_EINPUT, "give \"pattern\" or \"trace\"");
	g.pattern = (enum fast_gen_pattern)pat;
	if ((rc = sweep_axis_u64(c, e, "seeds", 0, UINT64_MAX, seeds, &nseeds)) < 0 ||
	    (rc = sweep_axis_doubles(c, e, "skew", 0, 100, false, skews, &nskew)) < 0 ||
	    (rc = sweep_axis_u64(c, e, "hot", 1, UINT32_MAX, hots, &nhot)) < 0 ||
	    (rc = sweep_axis_doubles(c, e, "fraction", 0, 1, false, fracs, &nfrac)) < 0 ||
	    (rc = sweep_axis_doubles(c, e, "alpha", 0, 100, false, alphas, &nalpha)) < 0 ||
	    (rc = fast_jv_get_u32(c, e, "matrices", false, 1, 1u << 16, &g.matrices)) < 0)
		return rc;
	if (g.pattern != FAST_GEN_ZIPF && (rc = reject(c, e, "skew", "only for pattern zipf")) < 0)
		return rc;
	if (g.pattern != FAST_GEN_HOTSPOT &&
	    ((rc = reject(c, e, "hot", "only for pattern hotspot")) < 0 ||
	     (rc = reject(c, e, "fraction", "only for pattern hotspot")) < 0))
		return rc;
	if (g.pattern != FAST_GEN_MOE) {
		static const char *const moe_keys[] = { "tokens", "topk", "experts", "alpha",
							"placement", "token_bytes", "steps", "drift", NULL };
		for (int i = 0; moe_keys[i]; i++)
			if ((rc = reject(c, e, moe_keys[i], "only for pattern moe")) < 0)
				return rc;
	} else {
		uint32_t np;
		if ((rc = reject(c, e, "matrices", "pattern moe makes 2 matrices per step: use \"steps\"")) < 0 ||
		    (rc = fast_jv_get_u32(c, e, "tokens", false, 1, UINT32_MAX, &g.moe.tokens)) < 0 ||
		    (rc = fast_jv_get_u32(c, e, "topk", false, 1, 1u << 16, &g.moe.topk)) < 0 ||
		    (rc = fast_jv_get_u32(c, e, "experts", false, 1, 1u << 24, &g.moe.experts)) < 0 ||
		    (rc = fast_jv_get_u64(c, e, "token_bytes", false, FAST_JSON_MAX_BYTES, &g.moe.token_bytes)) < 0 ||
		    (rc = fast_jv_get_u32(c, e, "steps", false, 1, 1u << 16, &g.moe.steps)) < 0 ||
		    (rc = fast_jv_get_double(c, e, "drift", false, 0, 1, false, &g.moe.drift)) < 0 ||
		    (rc = sweep_axis_enum(c, e, "placement", places, &place, &np)) < 0)
			return rc;
		if (np)
			g.moe.placement = (enum fast_placement)place;
	}
	for (uint32_t a = 0; a < (nskew ? nskew : 1); a++)
		for (uint32_t h = 0; h < (nhot ? nhot : 1); h++)
			for (uint32_t f = 0; f < (nfrac ? nfrac : 1); f++)
				for (uint32_t al = 0; al < (nalpha ? nalpha : 1); al++)
					for (uint32_t k = 0; k < (nseeds ? nseeds : 1); k++) {
						struct fast_gen_opts v = g;
						uint32_t nmat = g.pattern == FAST_GEN_MOE ? 2 * g.moe.steps : g.matrices;
						if (nskew)
							v.skew = skews[a];
						if (nhot)
							v.hot = (uint32_t)hots[h];
						if (nfrac)
							v.fraction = fracs[f];
						if (nalpha)
							v.moe.alpha = alphas[al];
						if (nseeds)
							v.seed = seeds[k];
						switch (v.pattern) {
						case FAST_GEN_ZIPF:
							snprintf(desc, sizeof desc, "zipf(skew=%.9g)", v.skew);
							break;
						case FAST_GEN_HOTSPOT:
							snprintf(desc, sizeof desc, "hotspot(hot=%u/fraction=%.9g)", v.hot, v.fraction);
							break;
						case FAST_GEN_MOE:
							snprintf(desc, sizeof desc,
								 "moe(experts=%u/topk=%u/tokens=%u/alpha=%.9g/steps=%u/drift=%.9g/%s/token_bytes=%llu)",
								 v.moe.experts, v.moe.topk, v.moe.tokens, v.moe.alpha,
								 v.moe.steps, v.moe.drift, fast_placement_name(v.moe.placement),
								 (unsigned long long)v.moe.token_bytes);
							break;
						default:
							snprintf(desc, sizeof desc, "%s", fast_gen_pattern_name(v.pattern));
						}
						if ((rc = add_gen(s, &v, nmat, desc, c->err)) < 0)
							return rc;
					}
	return 0;
}

static int parse_traffic(struct fast_jctx *c, const struct fast_jv *root, struct sweep_spec *s)
{
	const struct fast_jv *tr = fast_jv_get(root, "traffic");
	size_t old, i = 0;
	int rc = 0;

	if (!tr)
		return fast_jctx_fail(c, FAST_EINPUT, "missing required key \"traffic\"");
	old = fast_jctx_push_key(c, "traffic");
	if ((rc = fast_jv_expect_array(c, tr)) < 0)
		return rc;
	if (fast_jv_size(tr) == 0)
		return fast_jctx_fail(c, FAST_EINPUT, "must not be empty");
	for (const struct fast_jv *e = fast_jv_first(tr); e && rc == 0; e = fast_jv_next(e), i++) {
		size_t o2 = fast_jctx_push_index(c, i);
		if (fast_jv_type(e) == FAST_JOBJECT && fast_jv_get(e, "trace"))
			rc = parse_trace(c, e, s);
		else
			rc = parse_gen(c, e, s);
		fast_jctx_pop(c, o2);
	}
	fast_jctx_pop(c, old);
	return rc;
}

/* --- algorithms ---------------------------------------------------------------- */

/* The axes of the table's named compiler options ("stages", "order",
 * "balance"; include/fast/algo.h), each value parsed by the table, aliases
 * included: two spellings of one value are a duplicate. */
#define MAX_OPT_VALUES 4
#define MAX_OPT_AXES 8

struct opt_axis {
	const struct fast_algo_option *opt;
	uint64_t v[MAX_OPT_VALUES];
	uint32_t n;
};

static int parse_opt_axis(struct fast_jctx *c, const struct fast_jv *root, struct opt_axis *ax)
{
	const struct fast_jv *jv[MAX_OPT_VALUES];
	const char *names[MAX_OPT_VALUES];
	const char *key = ax->opt->name;
	int rc;

	/* at most MAX_OPT_VALUES values, then each a string */
	if ((rc = sweep_axis_values(c, root, key, jv, MAX_OPT_VALUES, &ax->n)) < 0 ||
	    (rc = sweep_axis_strings(c, root, key, names, &ax->n)) < 0)
		return rc;
	for (uint32_t i = 0; i < ax->n; i++) {
		struct fast_algo_opts o;
		struct fast_err e2;
		fast_algo_opts_default(&o);
		if (fast_algo_option_parse(ax->opt, names[i], &o, &e2) < 0) {
			size_t old = sweep_axis_path(c, root, key, i);
			rc = fast_jctx_fail(c, FAST_EINPUT, "%s", e2.msg);
			fast_jctx_pop(c, old);
			return rc;
		}
		ax->v[i] = ax->opt->get(&o);
		for (uint32_t j = 0; j < i; j++)
			if (ax->v[j] == ax->v[i]) {
				char shown[96];
				snprintf(shown, sizeof shown, "'%.30s' (the same %s as '%.30s')", names[i],
					 key, names[j]);
				return sweep_axis_dup(c, root, key, i, shown);
			}
	}
	return 0;
}

static int parse_algos(struct fast_jctx *c, const struct fast_jv *root, struct sweep_spec *s)
{
	const char *algos[MAX_AXIS];
	struct opt_axis ax[MAX_OPT_AXES];
	uint32_t na, nax = 0;
	int rc;

	if (!fast_jv_get(root, "algos"))
		return fast_jctx_fail(c, FAST_EINPUT, "missing required key \"algos\"");
	if ((rc = sweep_axis_strings(c, root, "algos", algos, &na)) < 0)
		return rc;
	for (const struct fast_algo_option *opt = fast_algo_options; opt->name; opt++)
		if (opt->values && nax < MAX_OPT_AXES) {
			ax[nax].opt = opt;
			if ((rc = parse_opt_axis(c, root, &ax[nax++])) < 0)
				return rc;
		}
	for (uint32_t i = 0; i < na; i++) {
		const struct fast_algo *al = fast_algo_find(algos[i]);
		uint32_t variants = 1, radix[MAX_OPT_AXES];
		if (!al) {
			const char *near = fast_algo_suggest(algos[i], NULL, 0);
			size_t old = sweep_axis_path(c, root, "algos", i);
			if (near)
				rc = fast_jctx_fail(c, FAST_EINPUT, "unknown algorithm '%.40s'; did you mean '%s'?",
						    algos[i], near);
			else
				rc = fast_jctx_fail(c, FAST_EINPUT, "unknown algorithm '%.40s'", algos[i]);
			fast_jctx_pop(c, old);
			return rc;
		}
		/* an axis is crossed for the algorithms its option applies to:
		 * the first axis outermost, the last innermost */
		for (uint32_t k = 0; k < nax; k++) {
			radix[k] = (al->options & ax[k].opt->bit) && ax[k].n ? ax[k].n : 1;
			variants *= radix[k];
		}
		for (uint32_t x = 0; x < variants; x++) {
			struct sweep_algo *v;
			uint32_t rest = x;
			if ((rc = sweep_spec_push((void **)&s->algos, &s->nalgos, sizeof *s->algos, c->err)) < 0)
				return rc;
			v = &s->algos[s->nalgos - 1];
			snprintf(v->algo, sizeof v->algo, "%s", al->name);
			fast_sim_algo_opts_default(&v->opts);
			for (uint32_t k = nax; k-- > 0;) {
				if ((al->options & ax[k].opt->bit) && ax[k].n)
					ax[k].opt->set(&v->opts, ax[k].v[rest % radix[k]]);
				rest /= radix[k];
			}
			fast_algo_opts_name(&v->opts, ~0u, "/", v->options, sizeof v->options);
		}
	}
	return 0;
}

/* --- the whole spec ---------------------------------------------------------------- */

static int parse_eval(struct fast_jctx *c, const struct fast_jv *root, struct sweep_spec *s)
{
	static const char *const bounds[] = { "lp", "closed", "none", NULL };
	int b;
	uint32_t n;
	int rc;

	sweep_eval_default(&s->eval);
	if ((rc = fast_jv_get_bool(c, root, "simulate", false, &s->eval.simulate)) < 0 ||
	    (rc = fast_jv_get_bool(c, root, "congestion", false, &s->eval.sim.congestion)) < 0 ||
	    (rc = fast_jv_get_double(c, root, "epsilon", false, 0, 0.5, false, &s->eval.sim.epsilon)) < 0 ||
	    (rc = single(c, root, "bound")) < 0 || (rc = sweep_axis_enum(c, root, "bound", bounds, &b, &n)) < 0)
		return rc;
	if (n)
		s->eval.bound = (enum sweep_bound_mode)b;
	return 0;
}

static int expand(struct sweep_spec *s, struct fast_err *err)
{
	uint64_t next = 0;
	int rc;

	for (uint32_t t = 0; t < s->ntopos; t++)
		for (uint32_t f = 0; f < s->ntraffics; f++) {
			const struct sweep_traffic *tr = &s->traffics[f];
			uint32_t nsz = tr->is_trace ? 1 : s->nsizes;
			if (tr->is_trace && s->traces[tr->trace].ng != fast_topo_ngpus(&s->topos[t].topo)) {
				s->skipped++;
				continue;
			}
			for (uint32_t z = 0; z < nsz; z++) {
				struct sweep_group *g;
				if ((rc = sweep_spec_push((void **)&s->groups, &s->ngroups, sizeof *s->groups, err)) < 0)
					return rc;
				g = &s->groups[s->ngroups - 1];
				g->topo = t;
				g->traffic = f;
				g->size = tr->is_trace ? NOSIZE : z;
				g->case0 = next;
				/* matrices x algorithm variants: refuse what 32 bits
				 * cannot count rather than run the wrong cases */
				if ((uint64_t)tr->nmat * s->nalgos > UINT32_MAX / 2)
					return fast_err_set(err, FAST_ELIMIT,
							    "sweep spec: %u matrices x %u algorithm variants in one case group is too many",
							    tr->nmat, s->nalgos);
				g->ncases = tr->nmat * s->nalgos;
				next += g->ncases;
			}
		}
	s->ncases = next;
	return 0;
}

int sweep_spec_load(const char *path, struct sweep_spec *out, struct fast_err *err)
{
	static const char *const allowed[] = { "name", "presets", "topos", "servers",
					       "gpus_per_server", "gpus", "scale_up_bw_GBps",
					       "scale_out_bw_GBps", "traffic", "sizes", "algos",
					       "stages", "order", "balance",
					       "simulate", "congestion", "epsilon", "bound",
					       "max_gpus", NULL };
	struct sweep_spec s;
	struct fast_json *doc = NULL;
	const struct fast_jv *root;
	struct fast_jctx c;
	char *text = NULL;
	size_t len;
	uint32_t n;
	int rc;

	memset(&s, 0, sizeof s);
	fast_limits_default(&s.lim);
	cli_input(path);
	if ((rc = fast_read_file(path, UINT64_C(16) << 20, &text, &len, err)) < 0)
		return rc;
	if ((rc = fast_json_parse(text, len, path, &doc, err)) < 0)
		goto out;
	root = fast_json_root(doc);
	fast_jctx_init(&c, path, err);
	if ((rc = fast_jv_expect_object(&c, root, allowed)) < 0 ||
	    (rc = fast_jv_get_string(&c, root, "name", false, s.name, sizeof s.name)) < 0 ||
	    (rc = fast_jv_get_u32(&c, root, "max_gpus", false, 1, 1u << 30, &s.lim.max_gpus)) < 0 ||
	    (rc = parse_eval(&c, root, &s)) < 0 || (rc = parse_topos(&c, root, &s)) < 0 ||
	    (rc = parse_traffic(&c, root, &s)) < 0 || (rc = parse_algos(&c, root, &s)) < 0)
		goto out;
	{
		uint64_t sizes[MAX_AXIS];
		if ((rc = sweep_axis_sizes(&c, root, "sizes", sizes, &n)) < 0)
			goto out;
		if (n == 0) {
			sizes[0] = UINT64_C(64) << 20;
			n = 1;
		}
		s.sizes = fast_calloc(n, sizeof *s.sizes);
		if (!s.sizes) {
			rc = fast_err_set(err, FAST_ENOMEM, "sweep spec: out of memory");
			goto out;
		}
		memcpy(s.sizes, sizes, n * sizeof *sizes);
		s.nsizes = n;
	}
	if ((rc = expand(&s, err)) < 0)
		goto out;
	*out = s;
	memset(&s, 0, sizeof s);
out:
	sweep_spec_free(&s);
	fast_json_free(doc);
	free(text);
	return rc;
}

/* --- cases ---------------------------------------------------------------------------- */

void sweep_spec_case(const struct sweep_spec *s, uint32_t gi, uint64_t id, struct sweep_row *r,
		     uint32_t *mat, uint32_t *algo)
{
	const struct sweep_group *g = &s->groups[gi];
	const struct sweep_topo *t = &s->topos[g->topo];
	const struct sweep_traffic *tr = &s->traffics[g->traffic];
	uint32_t k = (uint32_t)(id - g->case0);
	uint32_t m = k / s->nalgos, a = k % s->nalgos;
	const struct sweep_algo *al = &s->algos[a];
	uint32_t ng = fast_topo_ngpus(&t->topo);

	sweep_row_init(r);
	r->case_id = id;
	snprintf(r->topo, sizeof r->topo, "%s", t->name);
	r->servers = t->topo.servers;
	r->gpus = t->topo.gpus;
	r->ngpus = ng;
	r->up_GBps = t->topo.up.bw_GBps;
	r->out_GBps = t->topo.out.bw_GBps;
	snprintf(r->traffic, sizeof r->traffic, "%s", tr->desc);
	snprintf(r->algo, sizeof r->algo, "%s", al->algo);
	snprintf(r->options, sizeof r->options, "%s", al->options);
	if (tr->is_trace) {
		const struct fast_traffic *T = &s->traces[tr->trace];
		const struct fast_matrix *M = &T->m[tr->mats[m]];
		uint64_t total = 0;
		for (uint64_t i = 0; i < (uint64_t)ng * ng; i++)
			total += M->bytes[i];
		r->matrix = tr->mats[m];
		r->seed = 0;
		r->size_bytes = ng ? total / ng : 0;
		snprintf(r->label, sizeof r->label, "%s", M->label);
	} else {
		r->matrix = m;
		r->seed = tr->gen.seed;
		r->size_bytes = s->sizes[g->size];
		snprintf(r->label, sizeof r->label, "m%u", m);
	}
	sweep_sanitize(r->label);
	snprintf(r->key, sizeof r->key, "%s;traffic=%s;seed=%llu;size=%llu;m=%u;algo=%s;opts=%s",
		 t->key, tr->desc, (unsigned long long)r->seed,
		 (unsigned long long)(tr->is_trace ? 0 : r->size_bytes), r->matrix, al->algo,
		 al->options);
	sweep_sanitize(r->key);
	if (mat)
		*mat = m;
	if (algo)
		*algo = a;
}

int sweep_spec_traffic(const struct sweep_spec *s, uint32_t gi, struct fast_traffic *out,
		       struct fast_err *err)
{
	const struct sweep_group *g = &s->groups[gi];
	const struct sweep_traffic *tr = &s->traffics[g->traffic];
	struct fast_gen_opts o;

	memset(out, 0, sizeof *out);
	if (tr->is_trace)
		return 0;
	o = tr->gen;
	o.ng = fast_topo_ngpus(&s->topos[g->topo].topo);
	o.mean_bytes = s->sizes[g->size];
	return fast_gen_traffic(&o, &s->lim, out, err);
}

const struct fast_matrix *sweep_spec_matrix(const struct sweep_spec *s, uint32_t gi,
					    const struct fast_traffic *gen, uint32_t mat,
					    const char **label)
{
	const struct sweep_group *g = &s->groups[gi];
	const struct sweep_traffic *tr = &s->traffics[g->traffic];
	const struct fast_matrix *M;

	if (tr->is_trace)
		M = &s->traces[tr->trace].m[tr->mats[mat]];
	else if (mat < gen->count)
		M = &gen->m[mat];
	else
		return NULL;
	if (label)
		*label = M->label;
	return M;
}

