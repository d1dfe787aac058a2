/*
 * test_exec.c - the executor's program builder (exec/prog.c) and plan cache
 * (exec/cache.c) on byte plans, without MPI: every rank's program is built
 * and all of them are run together by the interpreter of exec_fix.h, on
 * real buffers filled with a byte pattern.  Every byte must land where
 * MPI_Alltoallv would put it, staging must stay inside the arena, and no
 * program may deadlock.  The exec files are compiled into this test (they
 * need no MPI), the plans come from lib/ (libfast.a).  Token plans:
 * test_exec_tokens.c.
 */
#include <CUnit/Basic.h>

#include "unit.h"
#include <stdlib.h>
#include <string.h>

#include "exec/prog.c"
#include "exec/prog_wave.c"
#include "exec/prog_flight.c"
#include "exec/cache.c"
#include "fast/algo.h"
#include "fast/topo.h"
#include "tests/mpi/mutate.h"
#include "exec_fix.h"

static void test_exec__every_algorithm_delivers_every_byte(void)
{
	const char *algos[] = { "fast", "fanout", "nccl", "pxn", "spreadout", "hier" };
	struct fast_topo t;
	uint64_t D[64], stg;
	int code;

	topo(&t, 2, 4);
	for (int kind = 0; kind < 3; kind++) {
		matrix(D, 8, kind, 11 + (uint64_t)kind);
		for (size_t a = 0; a < sizeof algos / sizeof *algos; a++) {
			long w = run_algo(algos[a], &t, D, 1, &stg, &code);
			if (w != 0)
				fprintf(stderr, "\n%s kind %d: %ld (code %d)\n", algos[a], kind, w, code);
			CU_ASSERT_EQUAL(w, 0);
		}
	}
}

static void test_exec__property_random_shapes_and_passes(void)
{
	const char *algos[] = { "fast", "pxn", "hier", "nccl" };
	uint64_t D[16 * 16], stg1, stg4;
	struct fast_rng rng;
	int code;

	fast_rng_seed(&rng, 2024);
	for (int iter = 0; iter < 6; iter++) {
		struct fast_topo t;
		uint32_t n = 2 + (uint32_t)fast_rng_below(&rng, 3), g = 1 + (uint32_t)fast_rng_below(&rng, 4);
		uint32_t ng = n * g;
		topo(&t, n, g);
		matrix(D, ng, (int)fast_rng_below(&rng, 3), fast_rng_next(&rng));
		for (size_t a = 0; a < sizeof algos / sizeof *algos; a++) {
			CU_ASSERT_EQUAL(run_algo(algos[a], &t, D, 1, &stg1, &code), 0);
			CU_ASSERT_EQUAL(run_algo(algos[a], &t, D, 4, &stg4, &code), 0);
			/* slicing every message in 4 passes never needs more staging */
			CU_ASSERT(stg4 <= stg1);
		}
	}
}

static void test_exec__passes_shrink_staging(void)
{
	struct fast_topo t;
	uint64_t D[64], s1, s8;
	int code;

	topo(&t, 2, 4);
	matrix(D, 8, 0, 5);
	CU_ASSERT_EQUAL(run_algo("fast", &t, D, 1, &s1, &code), 0);
	CU_ASSERT_EQUAL(run_algo("fast", &t, D, 8, &s8, &code), 0);
	CU_ASSERT(s1 > 0);
	CU_ASSERT(s8 * 3 < s1);
}

/* A plan whose forwarding hop no longer waits for the hop that brings the
 * bytes: the builder must refuse it (a rank would send what it lacks). */
static void test_exec__refuses_sending_bytes_not_held(void)
{
	struct fast_topo t;
	struct fast_plan p, ex;
	struct fast_prog *g = NULL;
	struct fast_plan_view v;
	struct fast_err err;
	uint64_t D[64];
	bool refused = false;

	topo(&t, 2, 4);
	matrix(D, 8, 0, 9);
	struct fast_matrix mx = fast_matrix_of(D, fast_topo_ngpus(&t));
	CU_ASSERT_FATAL(fast_compile("pxn", &t, &mx, NULL, &p, &err) == 0);
	CU_ASSERT_FATAL(fast_plan_expand(&p, NULL, &ex, &err) == 0);
	for (size_t s = 0; s < ex.nsteps; s++)
		ex.steps[s].ndeps = 0; /* every step in the first wave */
	CU_ASSERT_FATAL(fast_plan_view_open(&v, &ex, NULL, &err) == 0);
	for (uint32_t r = 0; r < 8 && !refused; r++) {
		int rc = fast_prog_build(&v, D, r, 1, 1, &g, &err);
		if (rc == FAST_ECHECK) {
			refused = true;
			CU_ASSERT(strstr(err.msg, "does not hold") != NULL);
		} else {
			fast_prog_free(g);
		}
	}
	CU_ASSERT(refused);
	fast_plan_view_close(&v);
	fast_plan_free(&ex);
	fast_plan_free(&p);
}

/* A plan for another matrix is refused before anything runs. */
static void test_exec__refuses_plan_for_other_matrix(void)
{
	struct fast_topo t;
	struct fast_plan p, ex;
	struct fast_prog *g = NULL;
	struct fast_plan_view v;
	struct fast_err err;
	uint64_t D[64], E[64];

	topo(&t, 2, 4);
	matrix(D, 8, 0, 1);
	memcpy(E, D, sizeof E);
	E[1 * 8 + 6] /= 2; /* message 1->6 shorter than the plan says */
	struct fast_matrix mx = fast_matrix_of(D, fast_topo_ngpus(&t));
	CU_ASSERT_FATAL(fast_compile("fanout", &t, &mx, NULL, &p, &err) == 0);
	CU_ASSERT_FATAL(fast_plan_expand(&p, NULL, &ex, &err) == 0);
	CU_ASSERT_FATAL(fast_plan_view_open(&v, &ex, NULL, &err) == 0);
	CU_ASSERT_EQUAL(fast_prog_build(&v, E, 1, 1, 1, &g, &err), FAST_EINPUT);
	CU_ASSERT(strstr(err.msg, "does not match the traffic") != NULL);
	fast_plan_view_close(&v);
	fast_plan_free(&ex);
	fast_plan_free(&p);
}

/* A relay forwards piece P twice (a spare copy to GPU 3, then to its
 * destination), then relays piece Q: P's block must live through the second
 * forward (freeing it after the first made the builder refuse the plan)
 * and no longer: Q reuses its space, so the relay's arena is one block. */
static void test_exec__staging_lives_until_last_forward(void)
{
	struct fast_topo t;
	struct fast_plan p;
	struct fast_err err;
	struct fast_prog *g = NULL;
	struct fast_plan_view v;
	uint64_t D[16] = { 0 }, stg;
	int code = 0;
	/* from, to, offset of the 1000 bytes of message 0->2 */
	const uint32_t hops[5][3] = { { 0, 1, 0 }, { 1, 3, 0 }, { 1, 2, 0 }, { 0, 1, 1000 }, { 1, 2, 1000 } };

	topo(&t, 1, 4);
	D[0 * 4 + 2] = 2000;
	fast_plan_init(&p, 1, 4, "test");
	for (uint32_t s = 0; s < 5; s++) {
		CU_ASSERT_FATAL(fast_plan_add_step(&p, FAST_STEP_EXPLICIT, FAST_TIER_UP, &err) == (int)s);
		if (s > 0)
			CU_ASSERT_FATAL(fast_plan_add_dep(&p, s, s - 1, false, &err) == 0);
		CU_ASSERT_FATAL(fast_plan_add_xfer(&p, hops[s][0], hops[s][1], &err) == 0);
		CU_ASSERT_FATAL(fast_plan_add_piece(&p, 0, 2, hops[s][2], 1000, &err) == 0);
	}
	CU_ASSERT_FATAL(unit_check(&p, &t, D, &err) == 0);
	CU_ASSERT_EQUAL(run_expanded(&p, D, 1, &stg, &code, &err), 0);
	CU_ASSERT_FATAL(fast_plan_view_open(&v, &p, NULL, &err) == 0);
	CU_ASSERT_FATAL(fast_prog_build(&v, D, 1, 1, 1, &g, &err) == 0);
	fast_plan_view_close(&v);
	CU_ASSERT_EQUAL(g->staging, 1024); /* 1000 bytes, 64-byte aligned: one block */
	fast_prog_free(g);
	fast_plan_free(&p);
}

/* fast check and the executor accept the same plans: checker-accepted
 * mutants (duplicate forwards, spare copies, reordered steps; see
 * tests/mpi/mutate.h) build on every rank and deliver every byte, in one
 * pass and in three. */
static void test_exec__replays_checker_accepted_mutants(void)
{
	const char *algos[] = { "fast", "pxn", "hier", "nccl", "fanout", "spreadout" };
	const uint32_t shapes[][2] = { { 2, 2 }, { 2, 3 }, { 3, 2 }, { 2, 4 } };
	uint64_t D[64], stg;
	uint32_t accepted = 0, with_dups = 0, tried = 0;
	struct fast_rng rng;

	fast_rng_seed(&rng, 4242);
	for (uint32_t i = 0; i < 240; i++) {
		struct fast_topo t;
		struct fast_plan mp;
		struct fast_err err;
		uint32_t n = shapes[i % 4][0], g = shapes[i % 4][1], dups = 0;
		int code = 0, rc;
		topo(&t, n, g);
		matrix(D, n * g, (int)fast_rng_below(&rng, 3), fast_rng_next(&rng));
		rc = mut_one(algos[(i / 4) % 6], &t, D, &rng, &mp, &dups, &err);
		CU_ASSERT(rc >= 0);
		tried++;
		if (rc != 1)
			continue;
		accepted++;
		with_dups += dups > 0;
		for (uint32_t passes = 1; passes <= 3; passes += 2) {
			struct fast_plan ex;
			long w;
			CU_ASSERT_FATAL(fast_plan_expand(&mp, NULL, &ex, &err) == 0);
			w = run_expanded(&ex, D, passes, &stg, &code, &err);
			if (w != 0)
				fprintf(stderr, "\nmutant %u (%s, %ux%u, %u passes): %ld: %s\n", i, mp.algo, n, g,
					passes, w, w == -10 ? err.msg : "");
			CU_ASSERT_EQUAL(w, 0);
			fast_plan_free(&ex);
		}
		fast_plan_free(&mp);
	}
	/* the mutations are not vacuous: most survive the checker, many of
	 * them forward bytes twice */
	CU_ASSERT(accepted * 2 >= tried);
	CU_ASSERT(with_dups * 5 >= accepted);
}

/* The byte-wise sum wraps each byte on its own, eight at a time or one. */
static void test_exec__add_bytes_wraps_per_byte(void)
{
	uint8_t a[19], b[19], want[19];

	for (int i = 0; i < 19; i++) {
		a[i] = (uint8_t)(200 + i * 7);
		b[i] = (uint8_t)(100 + i * 13);
		want[i] = (uint8_t)(a[i] + b[i]);
	}
	fast_prog_add_bytes(a, b, 19);
	CU_ASSERT(memcmp(a, want, 19) == 0);
}

static void test_exec__cache_counts_and_evicts_lru(void)
{
	struct fast_cache c;
	struct fast_err err;

	CU_ASSERT_FATAL(fast_cache_init(&c, 2, &err) == 0);
	CU_ASSERT_PTR_NULL(fast_cache_get(&c, 1));
	fast_cache_put(&c, 1, calloc(1, sizeof(struct fast_prog)));
	fast_cache_put(&c, 2, calloc(1, sizeof(struct fast_prog)));
	CU_ASSERT_PTR_NOT_NULL(fast_cache_get(&c, 1)); /* 2 is now the oldest */
	fast_cache_put(&c, 3, calloc(1, sizeof(struct fast_prog)));
	CU_ASSERT_PTR_NULL(fast_cache_get(&c, 2));
	CU_ASSERT_PTR_NOT_NULL(fast_cache_get(&c, 1));
	CU_ASSERT_PTR_NOT_NULL(fast_cache_get(&c, 3));
	CU_ASSERT_EQUAL(c.hits, 3);
	CU_ASSERT_EQUAL(c.misses, 2);
	fast_cache_free(&c);
}

UNIT_MAIN("exec",
	  UNIT_TEST(test_exec__every_algorithm_delivers_every_byte),
	  UNIT_TEST(test_exec__property_random_shapes_and_passes),
	  UNIT_TEST(test_exec__passes_shrink_staging),
	  UNIT_TEST(test_exec__refuses_sending_bytes_not_held),
	  UNIT_TEST(test_exec__refuses_plan_for_other_matrix),
	  UNIT_TEST(test_exec__staging_lives_until_last_forward),
	  UNIT_TEST(test_exec__replays_checker_accepted_mutants),
	  UNIT_TEST(test_exec__add_bytes_wraps_per_byte),
	  UNIT_TEST(test_exec__cache_counts_and_evicts_lru))
