/*
 * fuzz_plan.c - libFuzzer target of the plan reader (fast_planset_parse)
 * and of the routines every consumer runs on a loaded plan.
 *
 * Any input must give either a plan set or an error with a message.  For
 * each plan that loads: fast_plan_validate must accept it (the reader
 * validated it), fast_plan_expand, fast_plan_topo_order, fast_plan_summarize
 * and fast_plan_staging must not crash, the expansion must validate and
 * hash like itself, the plan set must survive a write/parse round trip with
 * the same hashes, and fast_plan_check must run (against the messages the
 * plan's own pieces imply, on a preset topology of the plan's shape) when
 * the expansion is small.
 */
#define _GNU_SOURCE
#include "fuzz_common.h"

#include "lib/check.h"
#include "lib/plan.h"

/* Work caps: the checker only runs on small expansions. */
#define CHECK_MAX_PIECES 20000u
#define CHECK_MAX_CHUNKS 64u

static void check_against_own_messages(const struct fast_plan *p, const struct fast_plan *x,
				       const struct fast_limits *lim)
{
	uint32_t ng = p->servers * p->gpus;
	struct fast_topo topo;
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
	rc = fast_plan_check(p, &topo, D, &err);
	if (rc < 0)
		FUZZ_CHECK_ERR(rc, err);
	free(D);
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
	rc = fast_plan_expand(p, &x, &err);
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

	memset(&err, 0x55, sizeof err);
	rc = fast_plan_summarize(p, &sum, &err);
	if (rc < 0)
		FUZZ_CHECK_ERR(rc, err);
	else
		FUZZ_CHECK(sum.steps_up + sum.steps_out == p->nsteps);

	peak = calloc(ng, sizeof *peak);
	FUZZ_CHECK(peak != NULL);
	memset(&err, 0x55, sizeof err);
	rc = fast_plan_staging(p, peak, &err);
	if (rc < 0)
		FUZZ_CHECK_ERR(rc, err);
	free(peak);
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
