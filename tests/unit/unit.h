/*
 * unit.h - the one main() every CUnit suite shares.
 *
 *   UNIT_MAIN("plan", UNIT_TEST(test_plan__builder), UNIT_TEST(...))
 *
 * registers the tests under their function names (test_<module>__<what>),
 * runs them verbosely and exits non-zero when any assertion failed (CUnit's
 * run call itself returns success even then) or the registry could not be
 * set up (exit 2).
 *
 * unit_topo(N, G, kind, up, out) is the test topology the suites build by
 * hand: N servers x G GPUs named "test", the two tiers as given, one NIC
 * per GPU at the nominal rate, no core oversubscription and the congestion
 * model left zero.
 */
#ifndef FAST_TEST_UNIT_H
#define FAST_TEST_UNIT_H

#include <CUnit/Basic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fast/bound.h"
#include "fast/check.h"
#include "fast/sim.h"
#include "fast/topo.h"
#include "fast/traffic.h"

static inline struct fast_topo unit_topo(uint32_t N, uint32_t G, enum fast_up_kind kind,
					 struct fast_tier up, struct fast_tier out)
{
	struct fast_topo t;

	memset(&t, 0, sizeof t);
	snprintf(t.name, sizeof t.name, "test");
	t.servers = N;
	t.gpus = G;
	t.nics = G; /* one NIC per GPU, as every preset */
	t.up_kind = kind;
	t.up = up;
	t.out = out;
	t.core_oversub = 1.0;
	t.nics = G; /* one healthy NIC per GPU */
	return t;
}

/* NIC k of server s of t at fraction f of its rate (fast_topo_set_nic;
 * asserted to succeed: the suites set valid overrides). */
static inline void unit_set_nic(struct fast_topo *t, uint32_t s, uint32_t k, double f)
{
	struct fast_err err;

	CU_ASSERT_EQUAL_FATAL(fast_topo_set_nic(t, s, k, f, &err), 0);
}

/* How many of a property test's n random cases to run: all of them, or a
 * quarter (at least one) with FAST_UNIT_QUICK=1 in the environment, as the
 * sanitizer stage runs the suites (tests/run_all.sh): the same generator
 * and code paths at a quarter of ASan's cost, while the plain unit stage
 * runs the counts the tests promise. */
static inline int unit_cases(int n)
{
	const char *q = getenv("FAST_UNIT_QUICK");

	return q && strcmp(q, "1") == 0 ? (n + 3) / 4 : n;
}

struct unit_test {
	const char *name;
	void (*fn)(void);
};

/* fast_plan_check of a bare plan p against matrix m: open its view, check,
 * close. */
static inline int unit_check_matrix(const struct fast_plan *p, const struct fast_topo *t,
				    const struct fast_matrix *m, struct fast_err *err)
{
	struct fast_plan_view v;
	int rc = fast_plan_view_open(&v, p, m, err);

	if (rc == 0) {
		rc = fast_plan_check(&v, t, err);
		fast_plan_view_close(&v);
	}
	return rc;
}

/* The same against a plain byte matrix D of the plan's size. */
static inline int unit_check(const struct fast_plan *p, const struct fast_topo *t,
			     const uint64_t *D, struct fast_err *err)
{
	struct fast_matrix m = fast_matrix_of(D, p->servers * p->gpus);

	return unit_check_matrix(p, t, &m, err);
}

/* fast_bound_compute of a plain byte matrix D on topology t's GPUs. */
static inline int unit_bound(const struct fast_topo *t, const uint64_t *D, bool closed_only,
			     struct fast_bound *out, struct fast_err *err)
{
	struct fast_matrix m = fast_matrix_of(D, t->servers * t->gpus);

	return fast_bound_compute(t, &m, closed_only, out, err);
}

/* fast_sim_run of a bare plan p serving m (NULL: none): open its view,
 * simulate, close. */
static inline int unit_sim(const struct fast_topo *t, const struct fast_plan *p,
			   const struct fast_matrix *m, const struct fast_sim_opts *o,
			   struct fast_sim_result *r, struct fast_err *err)
{
	struct fast_plan_view v;
	int rc = fast_plan_view_open(&v, p, m, err);

	if (rc == 0) {
		rc = fast_sim_run(t, &v, o, r, err);
		fast_plan_view_close(&v);
	}
	return rc;
}

/* fast_plan_summarize of a bare byte plan p (peak may be NULL). */
static inline int unit_summarize(const struct fast_plan *p, struct fast_plan_summary *out,
				 uint64_t *peak, struct fast_err *err)
{
	struct fast_plan_view v;
	int rc = fast_plan_view_open(&v, p, NULL, err);

	if (rc == 0) {
		rc = fast_plan_summarize(&v, out, peak, err);
		fast_plan_view_close(&v);
	}
	return rc;
}

#define UNIT_TEST(f) { #f, f }

static inline int unit_run(const char *suite, const struct unit_test *tests, size_t n)
{
	CU_pSuite s;
	unsigned fails;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 2;
	s = CU_add_suite(suite, NULL, NULL);
	for (size_t i = 0; s && i < n; i++)
		if (!CU_add_test(s, tests[i].name, tests[i].fn))
			s = NULL;
	if (!s) {
		CU_cleanup_registry();
		return 2;
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	fails = CU_get_number_of_failures();
	CU_cleanup_registry();
	return fails != 0;
}

/* A call that returns a negative error code on failure must succeed
 * (fatal: what follows depends on it). */
#define OK(x)                                                \
	do {                                                 \
		int ok_ = (x);                               \
		CU_ASSERT_EQUAL_FATAL(ok_ < 0 ? ok_ : 0, 0); \
	} while (0)

#define UNIT_MAIN(suite, ...)                                                        \
	int main(void)                                                               \
	{                                                                            \
		static const struct unit_test tests[] = { __VA_ARGS__ };             \
		return unit_run(suite, tests, sizeof tests / sizeof tests[0]);       \
	}

#endif
