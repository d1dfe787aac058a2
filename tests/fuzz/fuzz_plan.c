/*
 * fuzz_plan.c - libFuzzer target of the plan reader (fast_planset_parse)
 * and of the routines every consumer runs on a loaded plan.
 *
 * Any input must give either a plan set or an error with a message.  For
 * each plan that loads: fast_plan_validate must accept it (the reader
 * validated it), fast_plan_expand, fast_plan_topo_order, fast_plan_summarize
 * (with the staging peaks) must not crash, the expansion must validate and
 * hash like itself, the plan set must survive a write/parse round trip with
 * the same hashes, and fast_plan_check must run (against the messages the
 * plan's own pieces imply, on a preset topology of the plan's shape) when
 * the expansion is small.  A token plan is expanded, checked and
 * summarised against the token groups its own pieces imply.
 */
#define _GNU_SOURCE
#include "fuzz_common.h"

#include "fast/check.h"
#include "fast/plan.h"

/* Work caps: the checker only runs on small expansions. */
#define CHECK_MAX_PIECES 20000u
#define CHECK_MAX_CHUNKS 64u

static void check_against_own_messages(const struct fast_plan *p, const struct fast_plan *x,
				       const struct fast_limits *lim)
{
	uint32_t ng = p->servers * p->gpus;
	struct fast_topo topo;
	struct fast_matrix m;
	struct fast_plan_view v;
	struct fast_err err;
	uint64_t *D;
	int rc;

	if (x->npieces > CHECK_MAX_PIECES)
		return;
	for (size_t s = 0; s < x->nsteps; s++)
		if (x->steps[s].chunks > CHECK_MAX_CHUNKS)
			return;
	if (fast_topo_preset("h200", p->servers, p->gpus, lim, &topo, &err) < 0)
		return;
	D = calloc((size_t)ng * ng, sizeof *D);
	FUZZ_CHECK(D != NULL);
	for (size_t i = 0; i < x->npieces; i++) {
		const struct fast_piece *q = &x->pieces[i];
		uint64_t end;
		if (q->src >= ng || q->dst >= ng || !fast_add_u64(q->off, q->len, &end) ||
		    end > FAST_JSON_MAX_BYTES)
			continue;
		if (end > D[(size_t)q->src * ng + q->dst])
			D[(size_t)q->src * ng + q->dst] = end;
	}
	memset(&err, 0x55, sizeof err);
	m = fast_matrix_of(D, ng);
	if ((rc = fast_plan_view_open(&v, p, &m, &err)) == 0) {
		rc = fast_plan_check(&v, &topo, &err);
		fast_plan_view_close(&v);
	}
	if (rc < 0)
		FUZZ_CHECK_ERR(rc, err);
	free(D);
}

/* A token plan against the smallest matrix of its kind its pieces fit:
 * group g of GPU g % ng, Dest(g) the first GPUs (as many as its masks
 * name, at least min(ng, 4)), one byte a token, as many tokens as its
 * pieces reach.  Expansion, the checker and the summary must run. */
static void check_token_plan(const struct fast_plan *p, const struct fast_limits *lim)
{
	uint32_t ng = p->servers * p->gpus, ngroups = 0;
	struct fast_traffic t;
	struct fast_topo topo;
	struct fast_plan_view v;
	struct fast_plan_summary sum;
	struct fast_err err;
	int rc;

	if (p->npieces > CHECK_MAX_PIECES)
		return;
	for (size_t i = 0; i < p->npieces; i++)
		if (p->pieces[i].src >= ngroups)
			ngroups = p->pieces[i].src + 1;
	if (ngroups > 4096 || fast_topo_preset("h200", p->servers, p->gpus, lim, &topo, &err) < 0 ||
	    fast_traffic_alloc(&t, ng, 1, lim, &err) < 0)
		return;
	t.m[0].kind = p->kind;
	t.m[0].token_bytes = 1;
	t.m[0].ngroups = ngroups;
	t.m[0].groups = calloc(ngroups ? ngroups : 1, sizeof *t.m[0].groups);
	t.m[0].dsts = calloc((size_t)(ngroups ? ngroups : 1) * 64, sizeof *t.m[0].dsts);
	FUZZ_CHECK(t.m[0].groups && t.m[0].dsts);
	for (uint32_t g = 0; g < ngroups; g++)
		t.m[0].groups[g] = (struct fast_group){ g % ng, g * 64, ng < 4 ? ng : 4, 1 };
	for (size_t i = 0; i < p->npieces; i++) {
		const struct fast_piece *q = &p->pieces[i];
		struct fast_group *gr = &t.m[0].groups[q->src];
		uint64_t end;
		if (fast_add_u64(q->off, q->len, &end) && end > gr->tokens)
			gr->tokens = end;
		if (p->kind == FAST_TRAFFIC_COMBINE && q->dst < p->nmasks) {
			uint32_t bits = 64 - (uint32_t)__builtin_clzll(p->masks[q->dst] | 1);
			if (bits > gr->ndst)
				gr->ndst = bits;
		}
	}
	for (uint32_t g = 0; g < ngroups; g++) {
		struct fast_group *gr = &t.m[0].groups[g];
		if (gr->ndst > ng)
			gr->ndst = ng; /* a mask beyond: bad input, reported */
		for (uint32_t i = 0; i < gr->ndst; i++)
			t.m[0].dsts[gr->dst0 + i] = i;
	}
	t.m[0].ndsts = ngroups * 64;
	if (fast_matrix_bytes_from_groups(&t.m[0], ng, &err) == 0) {
		memset(&err, 0x55, sizeof err);
		rc = fast_plan_view_open(&v, p, &t.m[0], &err);
		if (rc < 0) {
			FUZZ_CHECK_ERR(rc, err);
		} else {
			FUZZ_CHECK(v.x->nlanes == 0 && v.x->nsteps == p->nsteps);
			memset(&err, 0x55, sizeof err);
			rc = fast_plan_summarize(&v, &sum, NULL, &err);
			if (rc < 0)
				FUZZ_CHECK_ERR(rc, err);
			if (v.x->npieces <= CHECK_MAX_PIECES) {
				memset(&err, 0x55, sizeof err);
				rc = fast_plan_check(&v, &topo, &err);
				if (rc < 0)
					FUZZ_CHECK_ERR(rc, err);
			}
			fast_plan_view_close(&v);
		}
	}
	fast_traffic_free(&t);
}

static void round_trip(const struct fast_planset *ps, const struct fast_limits *lim)
{
	struct fast_planset ps2;
	struct fast_err err;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int rc;

	FUZZ_CHECK(f != NULL);
	FUZZ_CHECK(fast_planset_write(ps, f, &err) == 0);
	FUZZ_CHECK(fclose(f) == 0);
	rc = fast_planset_parse(buf, len, "round-trip.json", lim, &ps2, &err);
	if (rc < 0)
		fprintf(stderr, "re-reading the written plan failed: %s\n", err.msg);
	FUZZ_CHECK(rc == 0);
	FUZZ_CHECK(ps2.count == ps->count);
	for (uint32_t i = 0; i < ps->count; i++)
		FUZZ_CHECK(fast_plan_hash(&ps->plans[i]) == fast_plan_hash(&ps2.plans[i]));
	fast_planset_free(&ps2);
	free(buf);
}

static void one_plan(const struct fast_plan *p, const struct fast_limits *lim)
{
	struct fast_plan x;
	struct fast_plan_summary sum;
	struct fast_err err;
	struct fast_plan_view v;
	uint32_t ng = p->servers * p->gpus;
	uint32_t *order;
	uint64_t *peak;
	int rc;

	FUZZ_CHECK(ng >= 1 && ng <= lim->max_gpus);
	rc = fast_plan_validate(p, &err);
	if (rc < 0)
		fprintf(stderr, "a loaded plan does not validate: %s\n", err.msg);
	FUZZ_CHECK(rc == 0);
	(void)fast_plan_hash(p);

	order = calloc(p->nsteps ? p->nsteps : 1, sizeof *order);
	FUZZ_CHECK(order != NULL);
	FUZZ_CHECK(fast_plan_topo_order(p, order, &err) == 0);
	free(order);

	memset(&err, 0x55, sizeof err);
	rc = fast_plan_expand(p, NULL, &x, &err);
	if (rc < 0) {
		FUZZ_CHECK_ERR(rc, err);
	} else {
		FUZZ_CHECK(x.nsteps == p->nsteps && x.nlanes == 0);
		rc = fast_plan_validate(&x, &err);
		if (rc < 0)
			fprintf(stderr, "an expanded plan does not validate: %s\n", err.msg);
		FUZZ_CHECK(rc == 0);
		FUZZ_CHECK(fast_plan_hash(&x) == fast_plan_hash(&x));
		check_against_own_messages(p, &x, lim);
		fast_plan_free(&x);
	}

	peak = calloc(ng, sizeof *peak);
	FUZZ_CHECK(peak != NULL);
	memset(&err, 0x55, sizeof err);
	if ((rc = fast_plan_view_open(&v, p, NULL, &err)) == 0) {
		rc = fast_plan_summarize(&v, &sum, peak, &err);
		fast_plan_view_close(&v);
	}
	if (rc < 0)
		FUZZ_CHECK_ERR(rc, err);
	else
		FUZZ_CHECK(sum.steps_up + sum.steps_out == p->nsteps);
	free(peak);
	if (p->kind != FAST_TRAFFIC_BYTES)
		check_token_plan(p, lim);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fast_limits lim;
	struct fast_planset ps;
	struct fast_err err;
	char *text = fuzz_text(data, size);
	int rc;

	if (!text)
		return 0;
	fuzz_limits(&lim);
	memset(&err, 0x55, sizeof err);
	rc = fast_planset_parse(text, size, "plan.json", &lim, &ps, &err);
	free(text);
	if (rc < 0) {
		FUZZ_CHECK_ERR(rc, err);
		return 0;
	}
	FUZZ_CHECK(ps.count >= 1 && ps.count <= lim.max_matrices);
	for (uint32_t i = 0; i < ps.count; i++)
		one_plan(&ps.plans[i], &lim);
	round_trip(&ps, &lim);
	fast_planset_free(&ps);
	return 0;
}
