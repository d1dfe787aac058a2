/*
 * moe_layout.c - MoE layouts (moe.h): where experts and tokens live
 * (placements contiguous or round-robin) and the counting of routed tokens
 * into a traffic matrix.  The file parsers are in moe_parse.c, the importer
 * of the data set's models in moe_import.c.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/workload/moe.h"

__extension__ typedef unsigned __int128 u128;

/* --- layout -------------------------------------------------------------- */

int fast_placement_parse(const char *name, enum fast_placement *out, struct fast_err *err)
{
	if (strcmp(name, "contiguous") == 0)
		*out = FAST_PLACE_CONTIGUOUS;
	else if (strcmp(name, "round-robin") == 0)
		*out = FAST_PLACE_ROUND_ROBIN;
	else
		return fast_err_set(err, FAST_EUSAGE,
				    "unknown placement '%.40s' (known: contiguous, round-robin)", name);
	return 0;
}

const char *fast_placement_name(enum fast_placement p)
{
	return p == FAST_PLACE_ROUND_ROBIN ? "round-robin" : "contiguous";
}

int fast_moe_layout_check(const struct fast_moe_layout *l, struct fast_err *err)
{
	if (l->ng == 0 || l->experts == 0)
		return fast_err_set(err, FAST_EINPUT, "an EP group needs at least one GPU and one expert");
	if (l->experts < l->ng && l->ng % l->experts != 0)
		return fast_err_set(err, FAST_EINPUT,
				    "%u experts on %u GPUs: with fewer experts than GPUs the GPU count "
				    "must be a multiple of the experts (each expert replicated)",
				    l->experts, l->ng);
	return 0;
}

/* The replica a token of GPU src uses (the layout's comment in moe.h). */
static uint32_t replica_gpu(const struct fast_moe_layout *l, uint32_t expert, uint32_t src)
{
	const uint32_t *r = l->rep_gpu + l->rep_off[expert];
	uint32_t n = l->rep_off[expert + 1] - l->rep_off[expert], G = l->gpus_per_server, k = 0;

	if (!l->spread) {
		for (uint32_t i = 0; i < n; i++)
			if (r[i] == src)
				return src;
		for (uint32_t i = 0; G && i < n; i++)
			k += r[i] / G == src / G;
		for (uint32_t i = 0, j = 0; k && i < n; i++)
			if (r[i] / G == src / G && j++ == src % k)
				return r[i];
	}
	return r[src % n];
}

uint32_t fast_moe_expert_gpu(const struct fast_moe_layout *l, uint32_t expert, uint32_t src)
{
	uint32_t ng = l->ng, E = l->experts;

	if (l->rep_off)
		return replica_gpu(l, expert, src);
	if (E >= ng) {
		if (l->experts_at == FAST_PLACE_ROUND_ROBIN)
			return expert % ng;
		return (uint32_t)((uint64_t)expert * ng / E);
	} else {
		uint32_t r = ng / E, k = src % r;
		if (l->experts_at == FAST_PLACE_ROUND_ROBIN)
			return expert + k * E;
		return expert * r + k;
	}
}

uint32_t fast_moe_token_src(const struct fast_moe_layout *l, uint64_t token, uint64_t ntokens)
{
	if (l->tokens_at == FAST_PLACE_ROUND_ROBIN)
		return (uint32_t)(token % l->ng);
	return (uint32_t)((u128)token * l->ng / ntokens);
}

void fast_moe_tokens_free(struct fast_moe_tokens *t)
{
	if (!t)
		return;
	free(t->ids);
	free(t->src);
	t->ids = NULL;
	t->src = NULL;
	t->ntokens = 0;
}

void fast_moe_groups_free(struct fast_moe_groups *g)
{
	if (!g)
		return;
	free(g->tokens);
	free(g->counts);
	g->tokens = g->counts = NULL;
	g->ngroups = 0;
}

/* --- counting ----------------------------------------------------------- */

/* The GPU token tok starts on: the file's, else the layout's rule. */
static uint32_t src_of(const struct fast_moe_layout *l, const struct fast_moe_tokens *t,
		       uint64_t tok)
{
	return t->src ? t->src[tok] : fast_moe_token_src(l, tok, t->ntokens);
}

/* Expert ids of t in range (FAST_EINPUT naming the first that is not). */
static int check_ids(const struct fast_moe_layout *l, const struct fast_moe_tokens *t,
		     struct fast_err *err)
{
	uint32_t K = t->topk;

	for (uint64_t i = 0; i < t->ntokens * K; i++)
		if (t->ids[i] >= l->experts)
			return fast_err_set(err, FAST_EINPUT, "token %llu: expert %u out of range (%u experts)",
					    (unsigned long long)(i / K), t->ids[i], l->experts);
	return 0;
}

/* The distinct GPUs of token tok's experts, ascending, into out (room for
 * topk); returns how many. */
static uint32_t token_gpus(const struct fast_moe_layout *l, const struct fast_moe_tokens *t,
			   uint64_t tok, uint32_t src, uint32_t *out)
{
	uint32_t n = 0;

	for (uint32_t j = 0; j < t->topk; j++) {
		uint32_t d = fast_moe_expert_gpu(l, t->ids[tok * t->topk + j], src), i = n;
		while (i > 0 && out[i - 1] > d)
			i--;
		if (i > 0 && out[i - 1] == d)
			continue;
		memmove(out + i + 1, out + i, (n - i) * sizeof *out);
		out[i] = d;
		n++;
	}
	return n;
}

int fast_moe_count_tokens(const struct fast_moe_layout *l, const struct fast_moe_tokens *t,
			  bool dedup, uint64_t *counts, struct fast_err *err)
{
	uint32_t ng = l->ng, K = t->topk, *d;
	int rc = check_ids(l, t, err);

	if (rc < 0)
		return rc;
	if (!(d = fast_calloc(K ? K : 1, sizeof *d)))
		return fast_err_set(err, FAST_ENOMEM, "out of memory");
	for (uint64_t tok = 0; tok < t->ntokens; tok++) {
		uint32_t s = src_of(l, t, tok);
		if (dedup) {
			uint32_t n = token_gpus(l, t, tok, s, d);
			for (uint32_t i = 0; i < n; i++)
				counts[(size_t)s * ng + d[i]]++;
			continue;
		}
		for (uint32_t j = 0; j < K; j++)
			counts[(size_t)s * ng + fast_moe_expert_gpu(l, t->ids[tok * K + j], s)]++;
	}
	free(d);
	return 0;
}

int fast_moe_tokens_pairs(const struct fast_moe_layout *l, const struct fast_moe_tokens *t,
			  uint64_t *pairs, struct fast_err *err)
{
	uint32_t K = t->topk;
	int rc = check_ids(l, t, err);

	for (uint64_t tok = 0; rc == 0 && tok < t->ntokens; tok++) {
		uint32_t s = src_of(l, t, tok);
		for (uint32_t j = 0; j < K; j++)
			pairs[fast_moe_expert_gpu(l, t->ids[tok * K + j], s)]++;
	}
	return rc;
}

int fast_moe_group_tokens(const struct fast_moe_layout *l, const struct fast_moe_tokens *t,
			  struct fast_groups *b, struct fast_err *err)
{
	uint32_t *d;
	int rc = check_ids(l, t, err);

	if (rc < 0)
		return rc;
	if (!(d = fast_calloc(t->topk ? t->topk : 1, sizeof *d)))
		return fast_err_set(err, FAST_ENOMEM, "out of memory");
	for (uint64_t tok = 0; tok < t->ntokens && rc == 0; tok++) {
		uint32_t s = src_of(l, t, tok);
		uint32_t n = token_gpus(l, t, tok, s, d);
		if (n > FAST_GROUP_MAX_DESTS)
			rc = fast_err_set(err, FAST_EINPUT,
					  "token %llu: its experts are on %u GPUs, over the %u of a "
					  "token group",
					  (unsigned long long)tok, n, FAST_GROUP_MAX_DESTS);
		else
			rc = fast_groups_add(b, s, d, n, 1, err);
	}
	free(d);
	return rc;
}

int fast_moe_count_groups(const struct fast_moe_layout *l, const struct fast_moe_groups *g,
			  uint64_t *counts, struct fast_err *err)
{
	uint32_t ng = l->ng, E = g->experts;
	uint64_t T = 0, start = 0, *nsrc, *share;
	int rc = 0;

	if (E > l->experts)
		return fast_err_set(err, FAST_EINPUT, "%u experts in the data, %u in the layout", E,
				    l->experts);
	for (uint32_t i = 0; i < g->ngroups; i++)
		T += g->tokens[i];
	nsrc = fast_calloc(ng, sizeof *nsrc);
	share = fast_calloc(ng, sizeof *share);
	if (!nsrc || !share) {
		free(nsrc);
		free(share);
		return fast_err_set(err, FAST_ENOMEM, "out of memory");
	}
	for (uint32_t i = 0; i < g->ngroups && rc == 0; i++) {
		const uint64_t *c = g->counts + (size_t)i * E;

		memset(nsrc, 0, ng * sizeof *nsrc);
		for (uint64_t tok = start; tok < start + g->tokens[i]; tok++)
			nsrc[fast_moe_token_src(l, tok, T)]++;
		start += g->tokens[i];
		for (uint32_t e = 0; e < E && rc == 0; e++) {
			if (c[e] == 0)
				continue;
			if (g->tokens[i] == 0) {
				rc = fast_err_set(err, FAST_EINPUT,
						  "group %u: %llu selections of expert %u but no tokens", i,
						  (unsigned long long)c[e], e);
				break;
			}
			rc = fast_apportion(c[e], nsrc, ng, e, share, err);
			for (uint32_t s = 0; s < ng && rc == 0; s++)
				if (share[s])
					counts[(size_t)s * ng + fast_moe_expert_gpu(l, e, s)] += share[s];
		}
	}
	free(nsrc);
	free(share);
	return rc;
}
