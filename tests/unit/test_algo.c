/*
 * test_algo.c - the algorithm table (lib/compile/algo.c): every named value
 * parses back from its printed spelling, aliases read as their value and
 * never print, numbers keep their ranges, option strings name only what
 * differs from the defaults, and every algorithm's row is complete; and
 * every compiler of the table, on byte, dispatch and combine traffic with
 * every option it takes, makes plans whose size is bounded by the
 * traffic's shape whatever its byte and token counts (algo.h's chunk
 * cap).
 */
#include <string.h>

#include "fast/algo.h"
#include "fast/check.h"
#include "tok.h"
#include "unit.h"

static void test_algo__values_round_trip(void)
{
	for (const struct fast_algo_option *opt = fast_algo_options; opt->name; opt++) {
		struct fast_algo_opts o;
		struct fast_err err;
		char buf[32];
		CU_ASSERT_PTR_EQUAL(fast_algo_option_find(opt->name), opt);
		if (!opt->values)
			continue;
		for (size_t k = 0; opt->values[k]; k++) {
			fast_algo_opts_default(&o);
			CU_ASSERT_EQUAL_FATAL(fast_algo_option_parse(opt, opt->values[k], &o, &err), 0);
			CU_ASSERT_EQUAL(opt->get(&o), k);
			CU_ASSERT_STRING_EQUAL(fast_algo_option_print(opt, &o, buf, sizeof buf),
					       opt->values[k]);
		}
	}
	CU_ASSERT_PTR_NULL(fast_algo_option_find("ordre"));
	CU_ASSERT_PTR_NULL(fast_algo_option_find(NULL));
}

static void test_algo__aliases_read_never_print(void)
{
	const struct fast_algo_option *order = fast_algo_option_find("order");
	struct fast_algo_opts o;
	struct fast_err err;
	char buf[32];

	CU_ASSERT_PTR_NOT_NULL_FATAL(order);
	fast_algo_opts_default(&o);
	CU_ASSERT_EQUAL(fast_algo_option_parse(order, "smallest", &o, &err), 0);
	CU_ASSERT_EQUAL(o.order, FAST_ORDER_SMALLEST_FIRST);
	CU_ASSERT_STRING_EQUAL(fast_algo_option_print(order, &o, buf, sizeof buf), "smallest-first");
	CU_ASSERT_EQUAL(fast_algo_option_parse(order, "largest", &o, &err), 0);
	CU_ASSERT_EQUAL(o.order, FAST_ORDER_LARGEST_FIRST);
	/* an unknown value leaves o alone and lists the one spelling */
	CU_ASSERT_EQUAL(fast_algo_option_parse(order, "sideways", &o, &err), FAST_EUSAGE);
	CU_ASSERT_EQUAL(o.order, FAST_ORDER_LARGEST_FIRST);
	CU_ASSERT_STRING_EQUAL(err.msg, "unknown value 'sideways' (known: decomposition, "
					"largest-first, smallest-first)");
}

static void test_algo__numbers_in_range(void)
{
	const struct fast_algo_option *peers = fast_algo_option_find("peers");
	const struct fast_algo_option *chunk = fast_algo_option_find("chunk");
	struct fast_algo_opts o;
	struct fast_err err;
	char buf[32];

	CU_ASSERT_PTR_NOT_NULL_FATAL(peers);
	CU_ASSERT_PTR_NOT_NULL_FATAL(chunk);
	fast_algo_opts_default(&o);
	CU_ASSERT_EQUAL(fast_algo_option_parse(peers, "4", &o, &err), 0);
	CU_ASSERT_EQUAL(o.peers, 4);
	CU_ASSERT_EQUAL(fast_algo_option_parse(peers, "0", &o, &err), FAST_EUSAGE);
	CU_ASSERT_EQUAL(fast_algo_option_parse(peers, "-1", &o, &err), FAST_EUSAGE);
	CU_ASSERT_EQUAL(fast_algo_option_parse(peers, "1048577", &o, &err), FAST_EUSAGE);
	CU_ASSERT_EQUAL(fast_algo_option_parse(peers, "4x", &o, &err), FAST_EUSAGE);
	CU_ASSERT_EQUAL(o.peers, 4);
	CU_ASSERT_EQUAL(fast_algo_option_parse(chunk, "512K", &o, &err), 0);
	CU_ASSERT_EQUAL(o.chunk_bytes, 512u << 10);
	CU_ASSERT_STRING_EQUAL(fast_algo_option_print(chunk, &o, buf, sizeof buf), "524288");
	CU_ASSERT_EQUAL(fast_algo_option_parse(chunk, "12Q", &o, &err), FAST_EUSAGE);
}

static void test_algo__options_name(void)
{
	struct fast_algo_opts o;
	char buf[96];

	fast_algo_opts_default(&o);
	fast_algo_opts_name(&o, ~0u, "/", buf, sizeof buf);
	CU_ASSERT_STRING_EQUAL(buf, "-");
	o.stages = FAST_STAGES_EXACT;
	o.order = FAST_ORDER_SMALLEST_FIRST;
	o.peers = 2;
	fast_algo_opts_name(&o, ~0u, "/", buf, sizeof buf);
	CU_ASSERT_STRING_EQUAL(buf, "stages=exact/order=smallest-first/peers=2");
	fast_algo_opts_name(&o, FAST_OPT_PEERS, " ", buf, sizeof buf);
	CU_ASSERT_STRING_EQUAL(buf, "peers=2");
	fast_algo_opts_name(&o, FAST_OPT_BALANCE, "/", buf, sizeof buf);
	CU_ASSERT_STRING_EQUAL(buf, "-");
}

static void test_algo__table_rows_complete(void)
{
	char list[128];
	size_t n = 0;

	for (const struct fast_algo *a = fast_algos; a->name; a++, n++) {
		CU_ASSERT_PTR_NOT_NULL(a->compile);
		CU_ASSERT(a->summary && a->summary[0]);
		CU_ASSERT_PTR_EQUAL(fast_algo_find(a->name), a);
		/* a default chunk exactly where --chunk applies */
		/* (auto passes --chunk on to the pxn and hier it may choose) */
		if (strcmp(a->name, "auto") != 0)
			CU_ASSERT_EQUAL(a->default_chunk_bytes != 0, (a->options & FAST_OPT_CHUNK) != 0);
	}
	CU_ASSERT_EQUAL(n, 7);
	CU_ASSERT_STRING_EQUAL(fast_algo_list(list, sizeof list),
			       "fast, fanout, nccl, pxn, spreadout, hier, auto");
	CU_ASSERT_PTR_NULL(fast_algo_find("ring"));
	CU_ASSERT_PTR_NULL(fast_algo_find(NULL));
}

/* --- plan size against the traffic's shape --------------------------------
 * The promise of algo.h's chunk cap: a plan's size is a function of the
 * traffic's shape, never of its byte counts.  With ng GPUs, K =
 * FAST_ALGO_MAX_CHUNKS and W = ng^2 + sum over groups of ndst * dmax (a
 * byte matrix: ng^2 + its messages), a plan and its expansion have at
 * most 4 (ng^2 + K) steps and (K + ng) W steps, transfers, pieces and
 * lanes in all (hier on tokens: at most K rounds of 3 steps, of every
 * stream, each piece forwarded to at most dmax GPUs; fast: N^2 stages of
 * ng lanes).  Measured on these draws: hier reaches 0.71 of the first
 * and 0.5 of the second, the others 0.05 and 0.004. */

/* A random matrix of kind k on ng GPUs (G a server), its sizes spread
 * over 2^0..2^50 bytes (a message, a group) so that one draw needs a few
 * chunks and the next 2^40 of them; *w its shape as above. */
static void shape_matrix(struct fast_traffic *t, enum fast_traffic_kind k, uint32_t ng,
			 uint32_t G, struct fast_rng *rng, uint64_t *w)
{
	struct fast_matrix *m;
	uint32_t dmax = 1;

	*w = (uint64_t)ng * ng;
	if (k == FAST_TRAFFIC_BYTES) {
		tok_init(t, ng, k, 1);
		m = &t->m[0];
		for (size_t x = 0; x < (size_t)ng * ng; x++)
			if (fast_rng_below(rng, 3) != 0) {
				m->bytes[x] = UINT64_C(1) << fast_rng_below(rng, 51);
				m->bytes[x] += fast_rng_below(rng, m->bytes[x]);
				*w += 1;
			}
		return;
	}
	tok_init(t, ng, k, UINT64_C(1) << fast_rng_below(rng, 21));
	tok_random_groups(t, rng, 1 + (uint32_t)fast_rng_below(rng, 12),
			  1 + (uint32_t)fast_rng_below(rng, ng < 8 ? ng : 8), G,
			  UINT64_C(1) << fast_rng_below(rng, 31));
	tok_done(t);
	m = &t->m[0];
	for (uint32_t g = 0; g < m->ngroups; g++)
		dmax = m->groups[g].ndst > dmax ? m->groups[g].ndst : dmax;
	for (uint32_t g = 0; g < m->ngroups; g++)
		*w += (uint64_t)m->groups[g].ndst * dmax;
}

/* The option sets tried: each changes one option the algorithm takes
 * (set 0: the defaults, always). */
static bool shape_opts(int set, const struct fast_algo *a, struct fast_rng *rng,
		       struct fast_algo_opts *o)
{
	static const unsigned bit[] = { 0, FAST_OPT_CHUNK, FAST_OPT_CHUNK, FAST_OPT_DEDUP,
					FAST_OPT_STAGES, FAST_OPT_STAGES, FAST_OPT_PEERS };

	fast_algo_opts_default(o);
	if (set > 0 && !(a->options & bit[set]))
		return false;
	if (set == 1)
		o->chunk_bytes = 1;
	if (set == 2)
		o->chunk_bytes = 1 + fast_rng_below(rng, UINT64_C(1) << 20);
	if (set == 3)
		o->dedup = FAST_DEDUP_GPU;
	if (set == 4) {
		o->stages = FAST_STAGES_EXACT;
		o->balance = FAST_BALANCE_UPFRONT;
		o->order = FAST_ORDER_SMALLEST_FIRST;
	}
	if (set == 5)
		o->stages = FAST_STAGES_PACKED;
	if (set == 6)
		o->peers = 1;
	return true;
}

static uint64_t plan_size(const struct fast_plan *p)
{
	return p->nsteps + p->nxfers + p->npieces + p->nlanes;
}

static void test_algo__plan_size_bounded_by_shape(void)
{
	static const uint32_t sizes[][2] = { { 1, 4 }, { 2, 2 }, { 2, 4 }, { 3, 2 }, { 4, 4 }, { 8, 2 }, { 2, 8 } };
	const uint64_t K = FAST_ALGO_MAX_CHUNKS;
	struct fast_rng rng;
	unsigned over = 0, refused = 0, plans = 0;


	fast_rng_seed(&rng, 23);
	for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++)
		for (int rep = 0; rep < 3; rep++)
			for (int k = FAST_TRAFFIC_BYTES; k <= FAST_TRAFFIC_COMBINE; k++) {
				struct fast_topo topo = unit_topo(sizes[z][0], sizes[z][1], FAST_UP_SWITCH,
					(struct fast_tier){ 450, 1, 1.0, 0 }, (struct fast_tier){ 50, 3, 1.0, 0 });
				uint32_t ng = topo.servers * topo.gpus;
				struct fast_traffic t;
				uint64_t w;
				shape_matrix(&t, (enum fast_traffic_kind)k, ng, topo.gpus, &rng, &w);
				for (const struct fast_algo *a = fast_algos; a->name; a++)
					for (int set = 0; set < 7; set++) {
						struct fast_algo_opts o;
						struct fast_plan p, x;
						struct fast_err err;
						bool ok;
						int rc;
						if (!shape_opts(set, a, &rng, &o))
							continue;
						rc = fast_compile(a->name, &topo, &t.m[0], &o, &p, &err);
						if (rc < 0) { /* only fast's packed stages on tokens, up front */
							CU_ASSERT(rc == FAST_EUSAGE && set == 5 &&
								  k != FAST_TRAFFIC_BYTES);
							refused++;
							continue;
						}
						plans++;
						rc = fast_plan_expand(&p, &t.m[0], &x, &err);
						CU_ASSERT_EQUAL(rc, 0);
						if (rc < 0) {
							fast_plan_free(&p);
							continue;
						}
						ok = p.nsteps <= 4 * ((uint64_t)ng * ng + K) &&
						     plan_size(&p) <= (K + ng) * w &&
						     plan_size(&x) <= (K + ng) * w;
						if (!ok && over++ < 8)
							printf("\n  %s set %d on %u x %u (%s, shape %llu): %zu steps, "
							       "size %llu, expanded %llu", a->name, set, topo.servers,
							       topo.gpus, fast_traffic_kind_name(t.m[0].kind),
							       (unsigned long long)w, p.nsteps,
							       (unsigned long long)plan_size(&p),
							       (unsigned long long)plan_size(&x));
						CU_ASSERT(ok);
						/* the capped rounds still deliver every byte */
						CU_ASSERT_EQUAL(unit_check_matrix(&p, &topo, &t.m[0], &err), 0);
						fast_plan_free(&x);
						fast_plan_free(&p);
					}
				fast_traffic_free(&t);
			}
	printf("(%u plans, %u refused) ", plans, refused);
	CU_ASSERT(plans > 400);
}

UNIT_MAIN("algo", UNIT_TEST(test_algo__values_round_trip),
	  UNIT_TEST(test_algo__aliases_read_never_print), UNIT_TEST(test_algo__numbers_in_range),
	  UNIT_TEST(test_algo__options_name), UNIT_TEST(test_algo__table_rows_complete),
	  UNIT_TEST(test_algo__plan_size_bounded_by_shape))
