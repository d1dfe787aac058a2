/*
 * test_traffic_tokens.c - token traffic in lib/traffic: groups and their
 * byte view, bad groups by JSON path, the group limit, exact round trips,
 * the group builder's order, dedup volumes against a naive count.
 */
#define _POSIX_C_SOURCE 200809L
#include <CUnit/Basic.h>

#include "unit.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fast/traffic.h"
#include "traffic_fix.h"

/* --- token traffic ------------------------------------------------------- */

static const char tok_file[] =
	"{\"version\": 3, \"gpus_total\": 4, \"matrices\": ["
	"{\"label\": \"d\", \"kind\": \"dispatch\", \"token_bytes\": 10, \"groups\": "
	"[[0, [1, 2], 3], [1, [1], 1], [3, [0, 1, 2, 3], 2], [0, [1, 2], 1]]},"
	"{\"label\": \"c\", \"kind\": \"combine\", \"token_bytes\": 10, \"groups\": "
	"[[0, [1, 2], 3], [1, [1], 1], [3, [0, 1, 2, 3], 2], [0, [1, 2], 1]]},"
	"{\"rows\": [[0, 5, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]}]}";

static void test_traffic__token_groups_load_with_their_byte_view(void)
{
	struct fast_traffic t;
	struct fast_err err = { 0 };
	/* by hand: D[0][1] = D[0][2] = 3*10 + 1*10, D[1][1] = 10, D[3][*] = 20 */
	const uint64_t want[16] = { 0, 40, 40, 0, 0, 10, 0, 0, 0, 0, 0, 0, 20, 20, 20, 20 };

	CU_ASSERT_EQUAL_FATAL(parse(tok_file, &t, &err), 0);
	CU_ASSERT_EQUAL(t.count, 3);
	CU_ASSERT_EQUAL(t.m[0].kind, FAST_TRAFFIC_DISPATCH);
	CU_ASSERT_EQUAL(t.m[1].kind, FAST_TRAFFIC_COMBINE);
	CU_ASSERT_EQUAL(t.m[2].kind, FAST_TRAFFIC_BYTES);
	CU_ASSERT_PTR_NULL(t.m[2].groups);
	CU_ASSERT_EQUAL(t.m[0].token_bytes, 10);
	CU_ASSERT_EQUAL(t.m[0].ngroups, 4); /* equal groups stay distinct */
	CU_ASSERT_EQUAL(t.m[0].ndsts, 9);
	CU_ASSERT_EQUAL(t.m[0].groups[2].src, 3);
	CU_ASSERT_EQUAL(t.m[0].groups[2].dst0, 3);
	CU_ASSERT_EQUAL(t.m[0].groups[2].ndst, 4);
	CU_ASSERT_EQUAL(t.m[0].groups[2].tokens, 2);
	CU_ASSERT_EQUAL(t.m[0].dsts[6], 3);
	CU_ASSERT(memcmp(t.m[0].bytes, want, sizeof want) == 0);
	for (uint32_t s = 0; s < 4; s++)
		for (uint32_t d = 0; d < 4; d++)
			CU_ASSERT_EQUAL(t.m[1].bytes[s * 4 + d], want[d * 4 + s]);
	CU_ASSERT(fast_traffic_has_tokens(&t));
	/* the other phase of the dispatch is the combine of the same groups */
	fast_matrix_other_phase(&t.m[0]);
	CU_ASSERT_EQUAL(t.m[0].kind, FAST_TRAFFIC_COMBINE);
	CU_ASSERT(memcmp(t.m[0].bytes, t.m[1].bytes, sizeof want) == 0);
	fast_matrix_other_phase(&t.m[2]);
	CU_ASSERT_EQUAL(t.m[2].kind, FAST_TRAFFIC_BYTES);
	CU_ASSERT_EQUAL(t.m[2].bytes[4], 5);
	fast_traffic_free(&t);
	fast_traffic_free(&t); /* idempotent */
}

static void test_traffic__token_bad_inputs_name_their_path(void)
{
#define TOK(m) "{\"version\": 3, \"gpus_total\": 4, \"matrices\": [" m "]}"
#define D(g) "{\"kind\": \"dispatch\", \"token_bytes\": 8, \"groups\": [" g "]}"
	expect_error(TOK(D("[0, [1], 1], [0, [1, 2, 2], 1]")), FAST_EINPUT,
		     "t.json: /matrices/0/groups/1/1/2: destination 2 after 2: destinations must "
		     "be ascending and distinct");
	expect_error(TOK(D("[0, [2, 1], 1]")), FAST_EINPUT,
		     "/matrices/0/groups/0/1/1: destination 1 after 2");
	expect_error(TOK(D("[0, [1, 4], 1]")), FAST_EINPUT,
		     "/matrices/0/groups/0/1/1: destination 4 is out of range (gpus = 4, ids 0..3)");
	expect_error(TOK(D("[4, [1], 1]")), FAST_EINPUT,
		     "/matrices/0/groups/0/0: src 4 is out of range");
	expect_error(TOK(D("[0, [], 1]")), FAST_EINPUT,
		     "/matrices/0/groups/0/1: needs 1 to 64 destination GPUs (got 0)");
	expect_error(TOK(D("[0, [1], 0]")), FAST_EINPUT,
		     "/matrices/0/groups/0/2: tokens must be >= 1 (got 0)");
	expect_error(TOK(D("[0, [1], 1.5]")), FAST_EINPUT,
		     "/matrices/0/groups/0/2: must be a non-negative integer (got 1.5)");
	expect_error(TOK(D("[0, [1]]")), FAST_EINPUT,
		     "/matrices/0/groups/0: a group is [src, [destination GPUs], tokens]: expected 3 "
		     "members, got 2");
	expect_error(TOK(D("[0, 1, 1]")), FAST_EINPUT, "/matrices/0/groups/0/1: expected array, got number");
	expect_error(TOK("{\"kind\": \"dispatch\", \"token_bytes\": 1099511627776, \"groups\": "
			 "[[0, [1], 8193]]}"),
		     FAST_EINPUT,
		     "/matrices/0/groups/0/2: 8193 tokens of 1099511627776 bytes are above 2^53 bytes");
	/* groups fine one by one, their sum in one byte-matrix entry is not */
	expect_error(TOK("{\"kind\": \"dispatch\", \"token_bytes\": 1099511627776, \"groups\": "
			 "[[0, [1], 8191], [0, [1], 2]]}"),
		     FAST_EINPUT,
		     "/matrices/0/groups: GPU 0 sends GPU 1 9008298766368768 bytes in all, above 2^53");
	expect_error(TOK("{\"kind\": \"tokens\", \"token_bytes\": 8, \"groups\": []}"), FAST_EINPUT,
		     "/matrices/0/kind: must be \"dispatch\" or \"combine\" (got \"tokens\"");
	expect_error(TOK("{\"kind\": 1, \"token_bytes\": 8, \"groups\": []}"), FAST_EINPUT,
		     "/matrices/0/kind: must be \"dispatch\" or \"combine\" (got number)");
	expect_error(TOK("{\"kind\": \"combine\", \"groups\": []}"), FAST_EINPUT,
		     "/matrices/0: missing required key \"token_bytes\"");
	expect_error(TOK("{\"kind\": \"combine\", \"token_bytes\": 0, \"groups\": []}"), FAST_EINPUT,
		     "/matrices/0/token_bytes: must be >= 1 (got 0)");
	expect_error(TOK("{\"kind\": \"combine\", \"token_bytes\": 2}"), FAST_EINPUT,
		     "/matrices/0: missing required key \"groups\"");
	expect_error(TOK("{\"kind\": \"combine\", \"token_bytes\": 2, \"groups\": [], \"rows\": []}"),
		     FAST_EINPUT, "/matrices/0: a token matrix has \"groups\", not \"rows\"");
	expect_error(TOK("{\"token_bytes\": 2, \"groups\": []}"), FAST_EINPUT,
		     "/matrices/0: \"groups\" needs \"kind\": \"dispatch\" or \"combine\"");
	expect_error(TOK("{\"rows\": [[0,0,0,0],[0,0,0,0],[0,0,0,0],[0,0,0,0]], \"token_bytes\": 2}"),
		     FAST_EINPUT, "/matrices/0: \"token_bytes\" needs \"kind\"");
	expect_error("{\"version\": 2, \"gpus_total\": 4, \"matrices\": [" D("[0, [1], 1]") "]}",
		     FAST_EINPUT, "/matrices/0/kind: token matrices need version 3 (the file says 2)");
	{
		/* 65 destinations: one over a combine mask */
		char buf[1024];
		int n = snprintf(buf, sizeof buf,
				 "{\"version\": 3, \"gpus_total\": 80, \"matrices\": [{\"kind\": "
				 "\"dispatch\", \"token_bytes\": 1, \"groups\": [[0, [");
		for (int d = 0; d < 65; d++)
			n += snprintf(buf + n, sizeof buf - (size_t)n, d ? ",%d" : "%d", d);
		snprintf(buf + n, sizeof buf - (size_t)n, "], 1]]}]}");
		expect_error(buf, FAST_EINPUT,
			     "/matrices/0/groups/0/1: needs 1 to 64 destination GPUs (got 65)");
	}
#undef D
#undef TOK
}

static void test_traffic__group_limit_refused_before_allocating(void)
{
	struct fast_limits lim;
	struct fast_traffic t;
	struct fast_err err = { 0 };

	fast_limits_default(&lim);
	CU_ASSERT_EQUAL(lim.max_groups, FAST_DEFAULT_MAX_GROUPS);
	lim.max_groups = 7; /* the file has 4 + 4 */
	expect_error_lim(tok_file, &lim, FAST_ELIMIT,
			 "t.json: /matrices/1/groups: 4 groups make 8 in the file, over the limit "
			 "of 7 (raise it with --max-groups)");
	lim.max_groups = 8;
	CU_ASSERT_EQUAL(parse_lim(tok_file, &lim, &t, &err), 0);
	fast_traffic_free(&t);
}

/* Random token traffic built by fast_groups: ntok tokens on ng GPUs with
 * up to k destinations each. */
static void random_tokens(struct fast_rng *r, uint32_t ng, uint32_t count, uint32_t ntok,
			  uint32_t k, struct fast_traffic *t)
{
	struct fast_err err = { 0 };

	CU_ASSERT_EQUAL_FATAL(fast_traffic_alloc(t, ng, count, NULL, &err), 0);
	for (uint32_t m = 0; m < count; m++) {
		struct fast_groups b;
		fast_groups_init(&b, ng, 1000000);
		for (uint32_t i = 0; i < ntok; i++) {
			uint32_t d[FAST_GROUP_MAX_DESTS], nd = 0;
			uint32_t want = 1 + (uint32_t)fast_rng_below(r, k < ng ? k : ng);
			for (uint32_t g = 0; g < ng && nd < want; g++)
				if (fast_rng_below(r, ng - g) < want - nd)
					d[nd++] = g; /* a uniform subset, ascending */
			CU_ASSERT_EQUAL_FATAL(fast_groups_add(&b, (uint32_t)fast_rng_below(r, ng), d,
							      nd, 1 + fast_rng_below(r, 3), &err),
					      0);
		}
		CU_ASSERT_EQUAL_FATAL(fast_groups_finish(&b, m % 2 ? FAST_TRAFFIC_COMBINE
								   : FAST_TRAFFIC_DISPATCH,
							 1 + fast_rng_below(r, 5000), &t->m[m], &err),
				      0);
		fast_groups_free(&b);
	}
}

static void test_traffic__token_writer_round_trips_exactly(void)
{
	struct fast_rng r;

	fast_rng_seed(&r, 15);
	for (int iter = 0; iter < 20; iter++) {
		uint32_t ng = 1 + (uint32_t)fast_rng_below(&r, 24), count = 1 + iter % 3;
		struct fast_traffic a, b;
		struct fast_err err = { 0 };
		char *s1, *s2;

		random_tokens(&r, ng, count, (uint32_t)fast_rng_below(&r, 200), 8, &a);
		if (iter % 4 == 3) { /* a byte matrix among token ones */
			a.m[0].kind = FAST_TRAFFIC_BYTES;
			free(a.m[0].groups);
			free(a.m[0].dsts);
			a.m[0].groups = NULL;
			a.m[0].dsts = NULL;
			a.m[0].ngroups = a.m[0].ndsts = 0;
			a.m[0].token_bytes = 0;
		}
		s1 = write_str(&a, iter % 2, NULL);
		CU_ASSERT_PTR_NOT_NULL(strstr(s1, fast_traffic_has_tokens(&a) ? "\"version\": 3"
									   : "\"version\": 2"));
		CU_ASSERT_EQUAL_FATAL(parse(s1, &b, &err), 0);
		for (uint32_t k = 0; k < count; k++) {
			const struct fast_matrix *x = &a.m[k], *y = &b.m[k];
			CU_ASSERT_EQUAL(x->kind, y->kind);
			CU_ASSERT_EQUAL(x->token_bytes, y->token_bytes);
			CU_ASSERT_EQUAL_FATAL(x->ngroups, y->ngroups);
			CU_ASSERT_EQUAL_FATAL(x->ndsts, y->ndsts);
			for (uint32_t g = 0; g < x->ngroups; g++) {
				CU_ASSERT_EQUAL(x->groups[g].src, y->groups[g].src);
				CU_ASSERT_EQUAL(x->groups[g].dst0, y->groups[g].dst0);
				CU_ASSERT_EQUAL(x->groups[g].ndst, y->groups[g].ndst);
				CU_ASSERT_EQUAL(x->groups[g].tokens, y->groups[g].tokens);
			}
			CU_ASSERT(x->ndsts == 0 ||
				  memcmp(x->dsts, y->dsts, x->ndsts * sizeof *x->dsts) == 0);
			CU_ASSERT(memcmp(x->bytes, y->bytes, (size_t)ng * ng * sizeof *x->bytes) == 0);
		}
		s2 = write_str(&b, iter % 2, NULL);
		CU_ASSERT_STRING_EQUAL(s1, s2);
		free(s1);
		free(s2);
		fast_traffic_free(&a);
		fast_traffic_free(&b);
	}
}

static void test_traffic__group_builder_merges_and_orders(void)
{
	struct fast_groups b;
	struct fast_matrix m = { 0 };
	struct fast_err err = { 0 };
	uint64_t bytes[9];
	const uint32_t d01[] = { 0, 1 }, d2[] = { 2 }, d12[] = { 1, 2 }, bad[] = { 2, 1 };

	m.bytes = bytes;
	fast_groups_init(&b, 3, 3);
	CU_ASSERT_EQUAL(fast_groups_add(&b, 2, d01, 2, 1, &err), 0);
	CU_ASSERT_EQUAL(fast_groups_add(&b, 0, d2, 1, 1, &err), 0);
	CU_ASSERT_EQUAL(fast_groups_add(&b, 2, d2, 1, 5, &err), 0);
	CU_ASSERT_EQUAL(fast_groups_add(&b, 2, d01, 2, 2, &err), 0); /* joins group 0 */
	CU_ASSERT_EQUAL(b.n, 3);
	CU_ASSERT_EQUAL(fast_groups_add(&b, 1, d12, 2, 1, &err), FAST_ELIMIT); /* a 4th */
	CU_ASSERT_EQUAL(fast_groups_add(&b, 1, bad, 2, 1, &err), FAST_EINPUT);
	CU_ASSERT_EQUAL(fast_groups_add(&b, 3, d2, 1, 1, &err), FAST_EINPUT);
	CU_ASSERT_EQUAL(fast_groups_finish(&b, FAST_TRAFFIC_DISPATCH, 4, &m, &err), 0);
	/* by source, then first appearance: [0,[2],1] [2,[0,1],3] [2,[2],5] */
	CU_ASSERT_EQUAL_FATAL(m.ngroups, 3);
	CU_ASSERT_EQUAL(m.groups[0].src, 0);
	CU_ASSERT_EQUAL(m.groups[0].tokens, 1);
	CU_ASSERT_EQUAL(m.groups[1].src, 2);
	CU_ASSERT_EQUAL(m.groups[1].ndst, 2);
	CU_ASSERT_EQUAL(m.groups[1].tokens, 3);
	CU_ASSERT_EQUAL(m.groups[2].tokens, 5);
	CU_ASSERT_EQUAL(m.ndsts, 4);
	CU_ASSERT_EQUAL(m.dsts[0], 2);
	CU_ASSERT_EQUAL(m.dsts[1], 0);
	CU_ASSERT_EQUAL(m.dsts[2], 1);
	CU_ASSERT_EQUAL(m.dsts[3], 2);
	CU_ASSERT_EQUAL(bytes[0 * 3 + 2], 4);
	CU_ASSERT_EQUAL(bytes[2 * 3 + 0], 12);
	CU_ASSERT_EQUAL(bytes[2 * 3 + 2], 20);
	fast_groups_free(&b);
	free(m.groups);
	free(m.dsts);
}

/* Naive reference: per token group, mark the servers it needs. */
static void naive_dedup(const struct fast_matrix *m, uint32_t G, uint64_t *pg, uint64_t *ps)
{
	*pg = *ps = 0;
	for (uint32_t g = 0; g < m->ngroups; g++) {
		bool need[64] = { false };
		const struct fast_group *gr = &m->groups[g];
		for (uint32_t i = 0; i < gr->ndst; i++) {
			uint32_t d = m->dsts[gr->dst0 + i];
			if (d / G != gr->src / G) {
				*pg += gr->tokens * m->token_bytes;
				need[d / G] = true;
			}
		}
		for (int sv = 0; sv < 64; sv++)
			*ps += need[sv] ? gr->tokens * m->token_bytes : 0;
	}
}

static void test_traffic__dedup_bytes_match_naive_reference(void)
{
	struct fast_rng r;
	struct fast_err err = { 0 };

	fast_rng_seed(&r, 1515);
	for (int iter = 0; iter < 40; iter++) {
		uint32_t ng = 1 + (uint32_t)fast_rng_below(&r, 40);
		uint32_t G = 1 + (uint32_t)fast_rng_below(&r, ng < 9 ? ng : 9);
		struct fast_traffic t;

		random_tokens(&r, ng, 2, 300, 9, &t);
		for (uint32_t k = 0; k < 2; k++) {
			struct fast_traffic_stats st;
			uint64_t pg = 1, ps = 1, npg, nps;
			CU_ASSERT_EQUAL(fast_matrix_dedup_bytes(&t.m[k], G, &pg, &ps, &err), 0);
			naive_dedup(&t.m[k], G, &npg, &nps);
			CU_ASSERT_EQUAL(pg, npg);
			CU_ASSERT_EQUAL(ps, nps);
			CU_ASSERT(ps <= pg);
			/* per-GPU dedup is the byte view's cross-server bytes */
			fast_traffic_stats(t.m[k].bytes, ng, G, &st);
			CU_ASSERT_EQUAL(pg, st.inter);
			/* a byte matrix has no tokens to deduplicate */
			t.m[k].kind = FAST_TRAFFIC_BYTES;
			CU_ASSERT_EQUAL(fast_matrix_dedup_bytes(&t.m[k], G, &pg, &ps, &err), 0);
			CU_ASSERT_EQUAL(pg, st.inter);
			CU_ASSERT_EQUAL(ps, st.inter);
		}
		fast_traffic_free(&t);
	}
	{
		/* by hand: G = 2; [0,[1,2,3],1] x 10 B: per GPU 20, per server 10 */
		struct fast_traffic t;
		CU_ASSERT_EQUAL_FATAL(parse("{\"version\": 3, \"gpus_total\": 4, \"matrices\": "
					    "[{\"kind\": \"combine\", \"token_bytes\": 10, \"groups\": "
					    "[[0, [1, 2, 3], 1], [3, [0, 2], 2]]}]}",
					    &t, &err),
				      0);
		uint64_t pg, ps;
		CU_ASSERT_EQUAL(fast_matrix_dedup_bytes(&t.m[0], 2, &pg, &ps, &err), 0);
		CU_ASSERT_EQUAL(pg, 20 + 20);
		CU_ASSERT_EQUAL(ps, 10 + 20);
		fast_traffic_free(&t);
	}
}

UNIT_MAIN("traffic_tokens",
	  UNIT_TEST(test_traffic__token_groups_load_with_their_byte_view),
	  UNIT_TEST(test_traffic__token_bad_inputs_name_their_path),
	  UNIT_TEST(test_traffic__group_limit_refused_before_allocating),
	  UNIT_TEST(test_traffic__token_writer_round_trips_exactly),
	  UNIT_TEST(test_traffic__group_builder_merges_and_orders),
	  UNIT_TEST(test_traffic__dedup_bytes_match_naive_reference))
