/*
 * moe_import.c - `fast trace import` (moe.h): the table of models in the
 * data set, the walk of a model's folder, and the turning of its layers'
 * counts into a traffic with a description of how it was derived.  The
 * parsers it calls are in moe_parse.c.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/base/json.h"
#include "lib/workload/moe.h"
#include "lib/workload/moe_internal.h"
#include "lib/workload/moe_place.h"
#include "lib/workload/moe_routing.h"

/* --- models -------------------------------------------------------------- */

enum kind { KIND_DEEPSEEK, KIND_COUNTS, KIND_SWITCH, KIND_ROUTING /* a user's file */ };

struct model_def {
	struct fast_moe_model pub; /* first: fast_moe_model_find returns it */
	enum kind kind;
	const char *folder;
	const char *csv_model; /* model column of expert_counts.csv */
};

static const struct model_def models[] = {
	{ { "deepseek-v2-lite", "DeepSeek-V2-Lite",
	    "deepseek-ai/ESFT results/expert_scores, MIT (LICENSE-CODE; model under the "
	    "DeepSeek License)",
	    64, 6, 2048, "intent", "intent, law, summary, translation" },
	  KIND_DEEPSEEK, "esft_deepseek_v2lite", NULL },
	{ { "olmoe", "OLMoE-1B-7B", "allenai/OLMoE scripts/routing_output, Apache-2.0", 64, 8,
	    2048, "arxiv", "arxiv, book, c4, github, wikipedia, tulu" },
	  KIND_COUNTS, "olmoe_allenai", "olmoe" },
	{ { "olmoe-sft", "OLMoE-1B-7B SFT", "allenai/OLMoE scripts/routing_output, Apache-2.0",
	    64, 8, 2048, "tulu", "tulu" },
	  KIND_COUNTS, "olmoe_allenai", "olmoe-sft" },
	{ { "olmoe-dpo", "OLMoE-1B-7B DPO", "allenai/OLMoE scripts/routing_output, Apache-2.0",
	    64, 8, 2048, "tulu", "tulu" },
	  KIND_COUNTS, "olmoe_allenai", "olmoe-dpo" },
	{ { "mixtral", "Mixtral-8x7B", "allenai/OLMoE scripts/routing_output, Apache-2.0", 8, 2,
	    4096, "arxiv", "arxiv, book, c4, github, wikipedia" },
	  KIND_COUNTS, "olmoe_allenai", "mistral" },
	{ { "switch128", "google/switch-base-128", "cyanmishra92/specMoE, MIT", 128, 1, 768,
	    "pooled", "pooled" },
	  KIND_SWITCH, "specmoe_switch128", NULL },
};

#define NMODELS (sizeof models / sizeof models[0])

const struct fast_moe_model *fast_moe_model_find(const char *name)
{
	for (size_t i = 0; i < NMODELS; i++)
		if (strcmp(models[i].pub.name, name) == 0)
			return &models[i].pub;
	return NULL;
}

const char *const *fast_moe_model_names(void)
{
	static const char *const names[] = { "deepseek-v2-lite", "olmoe", "olmoe-sft",
					     "olmoe-dpo", "mixtral", "switch128", NULL };
	return names;
}

/* --- import -------------------------------------------------------------- */

static int path_join(char *buf, size_t size, const char *a, const char *b, const char *c,
		     struct fast_err *err)
{
	int n = snprintf(buf, size, "%s/%s%s%s", a, b, c ? "/" : "", c ? c : "");
	if (n < 0 || (size_t)n >= size)
		return fast_err_set(err, FAST_EUSAGE, "data path too long");
	return 0;
}

/* Layers with a raw_intent/expert_weights_L.txt file, ascending. */
static int raw_layers(const char *dir, uint32_t **out, uint32_t *n, struct fast_err *err)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	uint32_t *v = NULL, nv = 0, cap = 0;
	int rc = 0;

	if (!d)
		return fast_err_set(err, FAST_EINPUT, "%s: %s", dir, strerror(errno));
	while (rc == 0 && (de = readdir(d)) != NULL) {
		unsigned layer;
		char tail[8];
		if (sscanf(de->d_name, "expert_weights_%u.%7s", &layer, tail) == 2 &&
		    strcmp(tail, "txt") == 0)
			rc = fast_moe_add_layer(&v, &nv, &cap, layer, err);
	}
	closedir(d);
	if (rc < 0) {
		free(v);
		return rc;
	}
	if (nv)
		qsort(v, nv, sizeof *v, fast_moe_u32_cmp);
	*out = v;
	*n = nv;
	return 0;
}

static int switch_counts(const char *path, const struct fast_limits *lim, uint32_t experts,
			 struct fast_moe_groups *out, struct fast_err *err)
{
	struct fast_json *doc = NULL;
	struct fast_jctx c;
	struct fast_moe_groups g = { 0 };
	const struct fast_jv *dist, *m;
	char *text = NULL;
	size_t len;
	bool *seen = NULL;
	uint64_t sum = 0;
	uint32_t nseen = 0;
	int rc;

	rc = fast_read_file(path, lim->max_file_bytes, &text, &len, err);
	if (rc < 0)
		return rc;
	rc = fast_json_parse(text, len, path, &doc, err);
	free(text);
	if (rc < 0)
		return rc;
	fast_jctx_init(&c, path, err);
	g.experts = experts;
	rc = fast_moe_groups_alloc(&g, 1, experts, err);
	seen = fast_calloc(experts, sizeof *seen);
	if (rc == 0 && !seen)
		rc = fast_err_set(err, FAST_ENOMEM, "out of memory");
	dist = fast_jv_get(fast_json_root(doc), "expert_distribution");
	if (rc == 0 && (!dist || fast_jv_type(dist) != FAST_JOBJECT))
		rc = fast_jctx_fail(&c, FAST_EINPUT, "missing object \"expert_distribution\"");
	if (rc == 0) {
		size_t old = fast_jctx_push_key(&c, "expert_distribution");
		for (m = fast_jv_first(dist); m && rc == 0; m = fast_jv_next(m)) {
			const char *key = fast_jv_key(m);
			char *end;
			unsigned long e;
			uint64_t x;
			size_t o2 = fast_jctx_push_key(&c, key);

			errno = 0;
			e = strtoul(key, &end, 10);
			if (!*key || *end || errno || key[0] == '-' || e >= experts)
				rc = fast_jctx_fail(&c, FAST_EINPUT, "not an expert id (0..%u)",
						    experts - 1);
			else if (seen[e])
				rc = fast_jctx_fail(&c, FAST_EINPUT, "expert listed twice");
			else if ((rc = fast_jv_as_u64(&c, m, FAST_JSON_MAX_BYTES, &x)) == 0) {
				seen[e] = true;
				nseen++;
				g.counts[e] = x;
				sum += x;
			}
			fast_jctx_pop(&c, o2);
		}
		if (rc == 0 && nseen != experts)
			rc = fast_jctx_fail(&c, FAST_EINPUT, "%u of %u experts listed", nseen, experts);
		fast_jctx_pop(&c, old);
	}
	fast_json_free(doc);
	free(seen);
	if (rc < 0) {
		fast_moe_groups_free(&g);
		return rc;
	}
	g.ngroups = 1;
	g.tokens[0] = sum; /* top-1: one selection per token */
	*out = g;
	return 0;
}

/* Import state shared by the per-layer steps. */
struct imp {
	const struct fast_moe_import *opt;
	const struct model_def *md;
	const struct fast_limits *lim;
	struct fast_moe_layout layout;
	const char *domain, *selection;
	char path[4096];
	char *text; /* the CSV, read once */
	size_t len;
	bool per_token; /* DeepSeek raw intent, or a routing file of expert ids */
	struct model_def user; /* KIND_ROUTING: the model as the routing file says it */
	struct fast_moe_place place; /* the maps in use (a file's copied, or EPLB's) */
	uint32_t *rep_off, *rep_gpu;  /* the layout's replica tables of the layer */
};

/* The per-token routing of one layer (raw_intent/expert_weights_L.txt). */
static int layer_tokens(struct imp *im, uint32_t layer, struct fast_moe_tokens *t,
			struct fast_err *err)
{
	const struct model_def *md = im->md;
	char file[64], *text;
	size_t len;
	int rc;

	if (im->opt->routing)
		return fast_moe_routing_tokens(im->opt->routing, layer, im->layout.ng, t, err);
	snprintf(file, sizeof file, "expert_weights_%u.txt", layer);
	rc = path_join(im->path, sizeof im->path, im->opt->data_dir, md->folder, "raw_intent", err);
	if (rc == 0) {
		size_t n = strlen(im->path);
		if (n + 1 + strlen(file) >= sizeof im->path)
			return fast_err_set(err, FAST_EUSAGE, "data path too long");
		snprintf(im->path + n, sizeof im->path - n, "/%s", file);
	}
	if (rc < 0)
		return rc;
	rc = fast_read_file(im->path, im->lim->max_file_bytes, &text, &len, err);
	if (rc < 0)
		return rc;
	rc = fast_moe_parse_deepseek_raw(text, len, im->path, md->pub.experts, md->pub.topk, t, err);
	free(text);
	return rc;
}

/* The per-expert counts of one layer of a bundled counts-only source
 * into *g (the caller frees it, also on failure). */
static int layer_groups_of(struct imp *im, uint32_t layer, struct fast_moe_groups *g,
			   struct fast_err *err)
{
	const struct model_def *md = im->md;

	if (md->kind == KIND_SWITCH)
		return switch_counts(im->path, im->lim, md->pub.experts, g, err);
	if (md->kind == KIND_DEEPSEEK)
		return fast_moe_parse_seq_csv(im->text, im->len, im->path, im->domain, layer,
					      md->pub.experts, md->pub.topk, g, err);
	return fast_moe_parse_counts_csv(im->text, im->len, im->path, md->csv_model, im->selection,
					 im->domain, layer, md->pub.experts, md->pub.topk, g, err);
}

/* Layer `layer`'s token copies into counts (ng x ng) and its (token,
 * expert) pairs per GPU into pairs (ng, zeroed). */
static int layer_counts(struct imp *im, uint32_t layer, uint64_t *counts, uint64_t *pairs,
			struct fast_err *err)
{
	struct fast_moe_groups g = { 0 };
	int rc;

	if (im->per_token) {
		struct fast_moe_tokens t;

		if ((rc = layer_tokens(im, layer, &t, err)) < 0)
			return rc;
		rc = fast_moe_count_tokens(&im->layout, &t, !im->opt->no_dedup, counts, err);
		if (rc == 0)
			rc = fast_moe_tokens_pairs(&im->layout, &t, pairs, err);
		fast_moe_tokens_free(&t);
		return rc;
	}
	if (im->opt->routing)
		rc = fast_moe_routing_count(im->opt->routing, &im->layout, layer, counts, err);
	else
		rc = layer_groups_of(im, layer, &g, err);
	if (rc == 0 && !im->opt->routing)
		rc = fast_moe_count_groups(&im->layout, &g, counts, err);
	fast_moe_groups_free(&g);
	/* counts are one copy per (token, expert): a GPU computes its column */
	for (size_t k = 0; rc == 0 && k < (size_t)im->layout.ng * im->layout.ng; k++)
		pairs[k % im->layout.ng] += counts[k];
	return rc;
}

/* A layer's token copies times the bytes per token must fit 2^53. */
static int check_total(uint32_t layer, uint64_t copies, uint64_t B, struct fast_err *err)
{
	uint64_t tot;

	if (!fast_mul_u64(copies, B, &tot) || tot > FAST_JSON_MAX_BYTES)
		return fast_err_set(err, FAST_ELIMIT,
				    "layer %u: %llu token copies x %llu bytes exceeds 2^53 bytes", layer,
				    (unsigned long long)copies, (unsigned long long)B);
	return 0;
}

/* The token groups of one layer's dispatch into m (bytes per token B),
 * out of *left groups still allowed (decreased); its (token, expert) pairs
 * per GPU into pairs (ng, zeroed). */
static int layer_groups(struct imp *im, uint32_t layer, uint64_t B, uint64_t *left,
			uint64_t *pairs, struct fast_matrix *m, struct fast_err *err)
{
	struct fast_moe_tokens t;
	struct fast_groups b;
	uint64_t copies = 0;
	int rc;

	if ((rc = layer_tokens(im, layer, &t, err)) < 0)
		return rc;
	fast_groups_init(&b, im->layout.ng, *left);
	rc = fast_moe_group_tokens(&im->layout, &t, &b, err);
	if (rc == 0)
		rc = fast_moe_tokens_pairs(&im->layout, &t, pairs, err);
	fast_moe_tokens_free(&t);
	if (rc == FAST_ELIMIT) /* the builder knows only what was left */
		rc = fast_err_set(err, FAST_ELIMIT,
				  "layer %u: more than %llu token groups in all (raise it with "
				  "--max-groups)",
				  layer, (unsigned long long)im->lim->max_groups);
	else if (rc < 0)
		fast_err_prefix(err, "layer %u", layer);
	for (uint32_t g = 0; rc == 0 && g < b.n; g++)
		copies += b.groups[g].tokens * b.groups[g].ndst; /* <= 64 x tokens */
	if (rc == 0)
		rc = check_total(layer, copies, B, err);
	if (rc == 0) {
		*left -= b.n;
		rc = fast_groups_finish(&b, FAST_TRAFFIC_DISPATCH, B, m, err);
	}
	fast_groups_free(&b);
	return rc;
}

static bool has_layer(const uint32_t *v, uint32_t n, uint32_t x)
{
	for (uint32_t i = 0; i < n; i++)
		if (v[i] == x)
			return true;
	return false;
}

/* A routing file as a model: its experts and top-k, no hidden size (the
 * caller gives --token-bytes), layers as the file numbers them. */
static const struct model_def *routing_model(struct imp *im, const struct fast_moe_routing *r)
{
	im->user.pub = (struct fast_moe_model){ "routing", r->path, "a routing file", r->experts,
						r->topk, 0, "-", "-" };
	im->user.kind = KIND_ROUTING;
	return &im->user;
}

/* The experts' placement as the provenance text says it. */
static const char *experts_text(const struct fast_moe_import *o, uint32_t E, char *buf,
				size_t size)
{
	const char *c = o->replica_local ? "local" : "spread";

	if (o->eplb)
		snprintf(buf, size, "eplb:%u (%s policy, replica choice %s)", o->eplb_redundant,
			 fast_moe_place_eplb_hierarchical(E, o->ng, o->gpus_per_server)
				 ? "hierarchical"
				 : "global",
			 c);
	else if (o->place_path)
		snprintf(buf, size, "from %.120s (replica choice %s)", o->place_path, c);
	else
		snprintf(buf, size, "%s", fast_placement_name(o->experts_at));
	return buf;
}

static void routing_describe(const struct imp *im, uint64_t B, struct fast_traffic *t)
{
	const struct fast_moe_import *o = im->opt;
	const struct fast_moe_routing *r = o->routing;
	const char *what, *method;
	bool src = r->kind == FAST_ROUTING_SRC_COUNTS || (r->nlayers && r->tok && r->tok[0].src);
	char k[24] = "", ex[160];

	if (r->kind == FAST_ROUTING_IDS)
		snprintf(k, sizeof k, ", top-%u", r->topk);
	what = r->kind == FAST_ROUTING_IDS	? "expert ids per token"
	       : r->kind == FAST_ROUTING_COUNTS ? "per-expert counts (split evenly over sources)"
						 : "per-source expert counts";
	if (o->tokens)
		method = "token groups (source GPU, destination GPUs, tokens)";
	else if (r->kind == FAST_ROUTING_IDS && !o->no_dedup)
		method = "exact dispatch (a token sent once per GPU)";
	else
		method = "one copy per (token, expert)";
	snprintf(t->source, sizeof t->source,
		 "routing %s (%s, %u experts%s): %s; %s; EP%u, experts %s, tokens %s, %llu B/token "
		 "(fast trace import --routing)",
		 r->path, r->format, r->experts, k, what, method, o->ng,
		 experts_text(o, im->layout.experts, ex, sizeof ex),
		 src ? "as the file says" : fast_placement_name(o->tokens_at), (unsigned long long)B);
}

static void describe(const struct imp *im, uint64_t B, struct fast_traffic *t)
{
	const struct fast_moe_import *o = im->opt;
	const struct model_def *md = im->md;
	char ep[48], ex[160];
	const char *method;

	if (o->routing) {
		routing_describe(im, B, t);
		return;
	}
	if (o->gpus_per_server && o->ng % o->gpus_per_server == 0)
		snprintf(ep, sizeof ep, "EP%u (%ux%u)", o->ng, o->ng / o->gpus_per_server,
			 o->gpus_per_server);
	else
		snprintf(ep, sizeof ep, "EP%u", o->ng);
	if (o->tokens)
		method = "per-token routing, token groups (source GPU, destination GPUs, tokens; "
			 "in the byte view a token is sent once per GPU)";
	else if (im->per_token)
		method = o->no_dedup ? "per-token routing, one copy per (token, expert)"
				     : "per-token routing, exact dispatch (a token sent once per GPU)";
	else if (md->kind == KIND_DEEPSEEK)
		method = "per-sequence expert counts split over sources by token share, one copy "
			 "per (token, expert)";
	else
		method = "per-expert counts split over sources by token share, one copy per "
			 "(token, expert)";
	snprintf(t->source, sizeof t->source,
		 "%s %s %s%s%s: %s; %s; %s, experts %s, tokens %s, %llu B/token (hidden %u bf16: "
		 "%s) (fast trace import)",
		 md->pub.name, md->kind == KIND_DEEPSEEK ? "task" : "domain", im->domain,
		 md->kind == KIND_COUNTS ? " selection " : "",
		 md->kind == KIND_COUNTS ? im->selection : "", md->pub.origin, method, ep,
		 experts_text(o, im->layout.experts, ex, sizeof ex), fast_placement_name(o->tokens_at),
		 (unsigned long long)B, md->pub.hidden,
		 B == 2ull * md->pub.hidden ? "default" : "overridden");
}

/* The source (im->md), its layout, domain and selection, and the options
 * that apply to it, checked (FAST_EUSAGE, FAST_ELIMIT). */
static int check_options(struct imp *im, struct fast_err *err)
{
	const struct fast_moe_import *opt = im->opt;
	const struct fast_limits *lim = im->lim;
	int rc;

	im->md = opt->routing ? routing_model(im, opt->routing)
			      : (const struct model_def *)fast_moe_model_find(opt->source ? opt->source : "");
	if (!im->md)
		return fast_err_set(err, FAST_EUSAGE,
				    "unknown source '%.40s' (known: deepseek-v2-lite, olmoe, olmoe-sft, "
				    "olmoe-dpo, mixtral, switch128)",
				    opt->source ? opt->source : "");
	im->layout.ng = opt->ng;
	im->layout.experts = im->md->pub.experts;
	im->layout.experts_at = opt->experts_at;
	im->layout.tokens_at = opt->tokens_at;
	rc = fast_moe_layout_check(&im->layout, err);
	if (rc < 0) {
		fast_err_prefix(err, "%s", im->md->pub.name);
		if (err)
			err->code = FAST_EUSAGE;
		return FAST_EUSAGE;
	}
	if (opt->ng > lim->max_gpus)
		return fast_err_set(err, FAST_ELIMIT, "EP%u exceeds the limit of %u GPUs", opt->ng,
				    lim->max_gpus);
	if (opt->routing && !opt->token_bytes)
		return fast_err_set(err, FAST_EUSAGE,
				    "--token-bytes B is needed with --routing (the bytes of one token: "
				    "hidden size x bytes per element)");
	im->domain = opt->domain ? opt->domain : im->md->pub.default_domain;
	im->selection = opt->selection ? opt->selection : "topk";
	if (im->md->kind != KIND_COUNTS && opt->selection && strcmp(opt->selection, "topk") != 0)
		return fast_err_set(err, FAST_EUSAGE, "%s: --selection applies to OLMoE and Mixtral only",
				    im->md->pub.name);
	if (im->md->kind == KIND_COUNTS && strcmp(im->selection, "topk") != 0 &&
	    strcmp(im->selection, "top1") != 0)
		return fast_err_set(err, FAST_EUSAGE, "unknown selection '%.40s' (known: topk, top1)",
				    im->selection);
	if (im->md->kind == KIND_SWITCH && strcmp(im->domain, "pooled") != 0)
		return fast_err_set(err, FAST_EUSAGE, "switch128 has no domains (its counts are pooled)");
	im->per_token = (im->md->kind == KIND_DEEPSEEK && strcmp(im->domain, "intent") == 0) ||
			(opt->routing && opt->routing->kind == FAST_ROUTING_IDS);
	if (opt->routing && opt->tokens && !im->per_token)
		return fast_err_set(err, FAST_EUSAGE,
				    "%s: --tokens needs expert ids per token, and this file has only "
				    "expert counts",
				    opt->routing->path);
	if (opt->tokens && !im->per_token)
		return fast_err_set(err, FAST_EUSAGE,
				    "%s %s %s: --tokens needs per-token routing, and this data has "
				    "only %s expert counts (which experts each token chose "
				    "together is unknown, so tokens cannot be grouped by their "
				    "destination GPUs); only deepseek-v2-lite --domain intent has it",
				    im->md->pub.name, im->md->kind == KIND_DEEPSEEK ? "task" : "domain",
				    im->domain,
				    im->md->kind == KIND_DEEPSEEK  ? "per-sequence"
				    : im->md->kind == KIND_SWITCH ? "pooled"
								 : "per-layer");
	if (opt->tokens && opt->no_dedup)
		return fast_err_set(err, FAST_EUSAGE,
				    "--no-dedup does not apply to --tokens: a token group names each "
				    "destination GPU once, and its byte view is the deduplicated "
				    "dispatch");
	return 0;
}

/* The data file, and the layers it has (*present, *npresent: the
 * caller's to free, also on failure). */
static int open_data(struct imp *im, uint32_t **present, uint32_t *npresent, struct fast_err *err)
{
	const struct fast_moe_import *opt = im->opt;
	const struct fast_limits *lim = im->lim;
	int rc;

	if (opt->routing) {
		*npresent = opt->routing->nlayers;
		*present = fast_calloc(*npresent ? *npresent : 1, sizeof **present);
		if (!*present)
			rc = fast_err_set(err, FAST_ENOMEM, "out of memory");
		else {
			memcpy(*present, opt->routing->layers, *npresent * sizeof **present);
			rc = 0;
		}
	} else if (im->per_token) {
		rc = path_join(im->path, sizeof im->path, opt->data_dir, im->md->folder, "raw_intent",
			       err);
		if (rc == 0)
			rc = raw_layers(im->path, present, npresent, err);
	} else if (im->md->kind == KIND_SWITCH) {
		rc = path_join(im->path, sizeof im->path, opt->data_dir, im->md->folder,
			       "maximum_real_traces.json", err);
		if (rc == 0 && opt->nlayers)
			rc = fast_err_set(err, FAST_EUSAGE,
					  "switch128 has one pooled layer: give no --layers");
		if (rc == 0) {
			*present = fast_calloc(1, sizeof **present);
			*npresent = 1;
			if (!*present)
				rc = fast_err_set(err, FAST_ENOMEM, "out of memory");
		}
	} else {
		bool seq = im->md->kind == KIND_DEEPSEEK;
		rc = path_join(im->path, sizeof im->path, opt->data_dir, im->md->folder,
			       seq ? "per_sequence_expert_counts.csv" : "expert_counts.csv", err);
		if (rc == 0)
			rc = fast_read_file(im->path, lim->max_file_bytes, &im->text, &im->len, err);
		if (rc == 0)
			rc = fast_moe_csv_layers(im->text, im->len, im->path, seq, im->md->csv_model,
						 im->selection, im->domain, present, npresent, err);
	}
	return rc;
}

/* Per-expert loads of one layer ((token, expert) selections, EPLB's
 * weight) into load (E, zeroed): per-token data, a routing file's counts,
 * or a bundled source's counts summed over its groups. */
static int layer_loads(struct imp *im, uint32_t layer, uint64_t *load, struct fast_err *err)
{
	const struct fast_moe_routing *r = im->opt->routing;
	uint32_t E = im->layout.experts;
	int rc, i;

	if (im->per_token) {
		struct fast_moe_tokens t;
		if ((rc = layer_tokens(im, layer, &t, err)) < 0)
			return rc;
		for (uint64_t k = 0; k < t.ntokens * t.topk; k++)
			if (t.ids[k] < E)
				load[t.ids[k]]++;
		fast_moe_tokens_free(&t);
		return 0;
	}
	if (!r) {
		struct fast_moe_groups g = { 0 };
		rc = layer_groups_of(im, layer, &g, err);
		for (uint64_t k = 0; rc == 0 && k < (uint64_t)g.ngroups * g.experts; k++)
			load[k % g.experts] += g.counts[k];
		fast_moe_groups_free(&g);
		return rc;
	}
	if ((i = fast_moe_routing_find(r, layer)) < 0)
		return fast_err_set(err, FAST_EINPUT, "%s: no layer %u", r->path, layer);
	for (uint32_t s = 0; s < (r->kind == FAST_ROUTING_SRC_COUNTS ? r->ngpus : 1); s++)
		for (uint32_t e = 0; e < E; e++)
			load[e] += r->counts[((size_t)i * (r->kind == FAST_ROUTING_SRC_COUNTS ? r->ngpus : 1) + s) * E + e];
	return 0;
}

/* The explicit placement of the i-th imported layer into the layout's
 * replica tables: the file's row i, or EPLB's map of the layer's loads
 * (kept in im->place). */
static int layer_place(struct imp *im, uint32_t layer, uint32_t i, struct fast_err *err)
{
	const struct fast_moe_import *o = im->opt;
	uint32_t E = im->layout.experts, *row = im->place.phy2log + (size_t)i * im->place.slots;
	uint64_t *load;
	int rc = 0;

	if (o->eplb) {
		if (!(load = fast_calloc(E, sizeof *load)))
			return fast_err_set(err, FAST_ENOMEM, "out of memory");
		rc = layer_loads(im, layer, load, err);
		if (rc == 0)
			rc = fast_moe_place_eplb(load, E, o->eplb_redundant, o->ng, o->gpus_per_server,
						 row, err);
		free(load);
	}
	if (rc == 0) {
		fast_moe_place_replicas(row, im->place.slots, E, o->ng, im->rep_off, im->rep_gpu);
		im->layout.rep_off = im->rep_off;
		im->layout.rep_gpu = im->rep_gpu;
	}
	return rc;
}

/* The maps of nl layers: room for EPLB's, or the file's (nl rows). */
static int place_alloc(struct imp *im, uint32_t nl, struct fast_err *err)
{
	const struct fast_moe_import *o = im->opt;
	uint32_t E = im->layout.experts;
	int rc;

	if (!o->gpus_per_server || o->ng % o->gpus_per_server)
		return fast_err_set(err, FAST_EUSAGE, "--placement: needs --gpus-per-server dividing --ep");
	if (o->eplb) {
		im->place.nlayers = nl;
		im->place.slots = E + o->eplb_redundant;
		im->place.phy2log = fast_calloc((size_t)nl * im->place.slots, sizeof *im->place.phy2log);
		if (!im->place.phy2log)
			return fast_err_set(err, FAST_ENOMEM, "out of memory");
	} else {
		if ((rc = fast_moe_place_load(o->place_path, im->lim, o->ng, E, &im->place, err)) < 0)
			return rc;
		if (im->place.nlayers != nl)
			return fast_err_set(err, FAST_EINPUT, "%s: %u layers, but the import has %u",
					    o->place_path, im->place.nlayers, nl);
	}
	im->rep_off = fast_calloc(E + 1, sizeof *im->rep_off);
	im->rep_gpu = fast_calloc(im->place.slots, sizeof *im->rep_gpu);
	if (!im->rep_off || !im->rep_gpu)
		return fast_err_set(err, FAST_ENOMEM, "out of memory");
	im->layout.gpus_per_server = o->gpus_per_server;
	im->layout.spread = !o->replica_local;
	return 0;
}

/* Layer `layer` into matrix i * per of t (and its combine at i * per + 1
 * when per is 2): token groups, or counts times B bytes per token. */
static int import_layer(struct imp *im, uint32_t layer, uint32_t i, uint32_t per, uint64_t B,
			uint64_t *groups_left, struct fast_traffic *t, struct fast_err *err)
{
	const struct fast_moe_import *opt = im->opt;
	uint64_t *m = t->m[i * per].bytes, sum = 0;
	uint64_t *pairs = fast_calloc(opt->ng, sizeof *pairs);
	size_t nn = (size_t)opt->ng * opt->ng;
	int rc;

	if (!pairs)
		return fast_err_set(err, FAST_ENOMEM, "out of memory");
	t->m[i * per].compute_pairs = pairs; /* freed with t */
	if (opt->tokens) {
		rc = layer_groups(im, layer, B, groups_left, pairs, &t->m[i * per], err);
	} else {
		rc = layer_counts(im, layer, m, pairs, err);
		for (size_t k = 0; rc == 0 && k < nn; k++)
			sum += m[k];
		if (rc == 0)
			rc = check_total(layer, sum, B, err);
		for (size_t k = 0; rc == 0 && k < nn; k++)
			m[k] *= B;
	}
	if (rc == 0) {
		char prefix[32];
		if (im->md->kind == KIND_SWITCH)
			snprintf(prefix, sizeof prefix, "pooled");
		else
			snprintf(prefix, sizeof prefix, "layer%u", layer);
		snprintf(t->m[i * per].label, sizeof t->m[0].label, "%s/dispatch", prefix);
		if (per == 2 && !(t->m[i * per + 1].compute_pairs = fast_calloc(opt->ng, sizeof *pairs)))
			return fast_err_set(err, FAST_ENOMEM, "out of memory");
		if (per == 2) /* the combine's experts are the dispatch's */
			memcpy(t->m[i * per + 1].compute_pairs, pairs, opt->ng * sizeof *pairs);
		if (per == 2 && opt->tokens) {
			rc = fast_matrix_copy_groups(&t->m[i * per + 1], &t->m[i * per],
						     FAST_TRAFFIC_COMBINE, err);
			snprintf(t->m[i * per + 1].label, sizeof t->m[0].label, "%s/combine",
				 prefix);
		} else if (per == 2) {
			memcpy(t->m[i * per + 1].bytes, m, nn * sizeof *m);
			rc = fast_matrix_transpose(t->m[i * per + 1].bytes, opt->ng, err);
			snprintf(t->m[i * per + 1].label, sizeof t->m[0].label, "%s/combine",
				 prefix);
		}
	}
	return rc;
}

int fast_moe_import(const struct fast_moe_import *opt, const struct fast_limits *lim,
		    struct fast_traffic *out, struct fast_err *err)
{
	struct imp im = { 0 };
	struct fast_traffic t = { 0 };
	struct fast_limits dl;
	uint32_t *present = NULL, npresent = 0, nl, per;
	const uint32_t *layers;
	uint64_t B, groups_left;
	int rc;

	if (!lim) {
		fast_limits_default(&dl);
		lim = &dl;
	}
	im.opt = opt;
	im.lim = lim;
	if ((rc = check_options(&im, err)) < 0)
		return rc;
	B = opt->token_bytes ? opt->token_bytes : 2ull * im.md->pub.hidden;
	groups_left = lim->max_groups;

	rc = open_data(&im, &present, &npresent, err);
	if (rc == 0 && npresent == 0)
		rc = fast_err_set(err, FAST_EUSAGE, "%s: no data for %s '%.40s' (known: %s)",
				  im.md->pub.name, im.md->kind == KIND_DEEPSEEK ? "task" : "domain",
				  im.domain, im.md->pub.domains);
	layers = opt->nlayers ? opt->layers : present;
	nl = opt->nlayers ? opt->nlayers : npresent;
	for (uint32_t i = 0; rc == 0 && i < nl; i++) {
		if (!has_layer(present, npresent, layers[i]))
			rc = fast_err_set(err, FAST_EUSAGE, "%s %s: no layer %u (layers %u..%u)",
					  im.md->pub.name, im.domain, layers[i], present[0],
					  present[npresent - 1]);
		for (uint32_t j = 0; rc == 0 && j < i; j++)
			if (layers[j] == layers[i])
				rc = fast_err_set(err, FAST_EUSAGE, "layer %u given twice", layers[i]);
	}
	per = opt->no_combine ? 1 : 2;
	if (rc == 0 && (uint64_t)nl * per > lim->max_matrices)
		rc = fast_err_set(err, FAST_ELIMIT, "%u matrices exceed the limit of %u", nl * per,
				  lim->max_matrices);
	if (rc == 0)
		rc = fast_traffic_alloc(&t, opt->ng, nl * per, lim, err);
	if (rc == 0 && (opt->eplb || opt->place_path))
		rc = place_alloc(&im, nl, err);
	for (uint32_t i = 0; rc == 0 && i < nl; i++) {
		if (im.place.phy2log)
			rc = layer_place(&im, layers[i], i, err);
		if (rc == 0)
			rc = import_layer(&im, layers[i], i, per, B, &groups_left, &t, err);
		if (rc == 0 && opt->progress)
			opt->progress(opt->progress_arg, i + 1, nl);
	}
	free(present);
	free(im.text);
	free(im.rep_off);
	free(im.rep_gpu);
	if (rc == 0 && opt->place_out)
		*opt->place_out = im.place;
	else
		fast_moe_place_free(&im.place);
	if (rc < 0) {
		fast_traffic_free(&t);
		return rc;
	}
	describe(&im, B, &t);
	*out = t;
	return 0;
}
