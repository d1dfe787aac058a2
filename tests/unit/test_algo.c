/*
 * test_algo.c - the algorithm table (lib/compile/algo.c): every named value
 * parses back from its printed spelling, aliases read as their value and
 * never print, numbers keep their ranges, option strings name only what
 * differs from the defaults, and every algorithm's row is complete.
 */
#include <string.h>

#include "fast/algo.h"
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

UNIT_MAIN("algo", UNIT_TEST(test_algo__values_round_trip),
	  UNIT_TEST(test_algo__aliases_read_never_print), UNIT_TEST(test_algo__numbers_in_range),
	  UNIT_TEST(test_algo__options_name), UNIT_TEST(test_algo__table_rows_complete))
