/*
 * test_topo_impl.c - how each schedule's implementation runs (topo.h,
 * lib/model/topo_impl.c): the schedules it names are the compilers',
 * entries merge over the default, a neutral block keeps the identity and
 * the normalised form, the writer round-trips, every member's bad value is
 * refused naming its JSON path, the fields calibrate can fit, the caps,
 * and every preset's implementations are valid.
 */
#define _POSIX_C_SOURCE 200809L
#include <CUnit/Basic.h>

#include "unit.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fast/algo.h"
#include "fast/topo.h"

static int parse(const char *text, struct fast_topo *t, struct fast_err *err)
{
	struct fast_limits lim;
	fast_limits_default(&lim);
	return fast_topo_parse(text, strlen(text), "t.json", &lim, t, err);
}

/* 2 servers x 4 GPUs with an implementation block (or none: ""). */
#define TOPO(impl)                                                                  \
	"{\"version\": 1, \"servers\": 2, \"gpus_per_server\": 4,"                   \
	" \"scale_up\": {\"kind\": \"switch\", \"bw_GBps\": 100},"                   \
	" \"scale_out\": {\"bw_GBps\": 25}" impl "}"

static void expect_error(const char *text, const char *msg)
{
	struct fast_topo t;
	struct fast_err err = { 0 };

	CU_ASSERT_EQUAL(parse(text, &t, &err), FAST_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, msg));
	if (!strstr(err.msg, msg))
		fprintf(stderr, "\n  got:    %s\n  wanted: %s\n", err.msg, msg);
}

static char *written(const struct fast_topo *t)
{
	struct fast_err err = { 0 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT_EQUAL(fast_topo_write(t, f, &err), 0);
	fclose(f);
	return buf;
}

static void test_topo_impl__names_are_the_compilers(void)
{
	const char *const *names = fast_topo_impl_names();
	size_t n = 0, algos = 0;

	for (; names[n]; n++)
		CU_ASSERT_TRUE(fast_algo_known(names[n]));
	CU_ASSERT_EQUAL(n, FAST_IMPL_SCHEDS);
	for (const struct fast_algo *a = fast_algos; a->name; a++) {
		bool listed = false;
		if (!a->model.predict) /* auto chooses among them: it has no implementation */
			continue;
		algos++;
		for (size_t i = 0; i < n; i++)
			listed |= strcmp(names[i], a->name) == 0;
		CU_ASSERT_TRUE(listed);
	}
	CU_ASSERT_EQUAL(algos, n);
}

static void test_topo_impl__entries_merge_over_the_default(void)
{
	struct fast_topo t;
	struct fast_err err = { 0 };
	const struct fast_impl *m;

	CU_ASSERT_EQUAL_FATAL(parse(TOPO(", \"implementation\": {"
					 "\"default\": {\"call_us\": 7, \"in_flight\": 2},"
					 "\"hier\": {\"sync\": \"rank\", \"up_engine\": {\"kind\": \"sm\", \"sms\": 24, \"GBps_per_sm\": 2.5}},"
					 "\"nccl\": {\"call_us\": 0, \"up_engine\": {\"kind\": \"ce\", \"GBps\": 40}, \"out_GBps\": 20, \"reduce_GBps\": 300},"
					 "\"source\": \"by hand\"}"),
				    &t, &err),
			      0);
	m = fast_topo_impl(&t, "hier");
	CU_ASSERT_EQUAL(m->sync, FAST_IMPL_SYNC_RANK);
	CU_ASSERT_EQUAL(m->in_flight, 2);
	CU_ASSERT_EQUAL(m->call_us, 7);
	CU_ASSERT_DOUBLE_EQUAL(fast_impl_up_cap_Bps(m), 60e9, 1);
	CU_ASSERT_DOUBLE_EQUAL(fast_impl_up_Bps(m, &t), 60e9, 1);
	m = fast_topo_impl(&t, "nccl");
	CU_ASSERT_EQUAL(m->sync, FAST_IMPL_SYNC_STEP);
	CU_ASSERT_EQUAL(m->call_us, 0);
	CU_ASSERT_DOUBLE_EQUAL(fast_impl_up_cap_Bps(m), 40e9, 1);
	/* a port of 2 GPUs at 50 GB/s: the cap is 2 x 20 */
	CU_ASSERT_DOUBLE_EQUAL(fast_impl_out_Bps(m, 50e9, 2), 40e9, 1);
	CU_ASSERT_DOUBLE_EQUAL(fast_impl_out_Bps(m, 30e9, 2), 30e9, 1);
	/* every other name, auto and mpi included, is the default */
	CU_ASSERT_PTR_EQUAL(fast_topo_impl(&t, "auto"), &t.impl[0]);
	CU_ASSERT_PTR_EQUAL(fast_topo_impl(&t, "mpi"), &t.impl[0]);
	CU_ASSERT_PTR_EQUAL(fast_topo_impl(&t, NULL), &t.impl[0]);
	m = fast_topo_impl(&t, "fanout");
	CU_ASSERT_EQUAL(m->call_us, 7);
	CU_ASSERT_EQUAL(fast_impl_up_cap_Bps(m), 0);
	/* a cap above the link's rate is no cap */
	CU_ASSERT_DOUBLE_EQUAL(fast_impl_up_Bps(m, &t), 100e9, 1);
	CU_ASSERT_STRING_EQUAL(t.impl_source, "by hand");
	/* in_flight: one in every k pays */
	CU_ASSERT_TRUE(fast_impl_pays(m, 0));
	CU_ASSERT_FALSE(fast_impl_pays(m, 1));
	CU_ASSERT_TRUE(fast_impl_pays(m, 4));
}

static void test_topo_impl__neutral_keeps_the_identity(void)
{
	struct fast_topo a, b, c;
	struct fast_err err = { 0 };
	char *buf;

	CU_ASSERT_EQUAL_FATAL(parse(TOPO(""), &a, &err), 0);
	CU_ASSERT_EQUAL_FATAL(parse(TOPO(", \"implementation\": {\"default\": {\"sync\": \"step\", "
					 "\"in_flight\": 1, \"up_engine\": {\"kind\": \"link\"}, "
					 "\"call_us\": 0}, \"source\": \"nothing\"}"),
				    &b, &err),
			      0);
	CU_ASSERT_FALSE(fast_topo_impl_on(&a));
	CU_ASSERT_FALSE(fast_topo_impl_on(&b));
	CU_ASSERT_EQUAL(fast_topo_hash(&a), fast_topo_hash(&b));
	buf = written(&b);
	CU_ASSERT_PTR_NULL(strstr(buf, "implementation"));
	free(buf);
	/* a topology built in memory (zeroed entries) is neutral too */
	c = unit_topo(2, 4, FAST_UP_SWITCH, a.up, a.out);
	c.congestion = a.congestion;
	CU_ASSERT_FALSE(fast_topo_impl_on(&c));
	CU_ASSERT_EQUAL(fast_topo_validate(&c, NULL, &err), 0);
	/* and anything on changes it */
	c = a;
	c.impl[3].call_us = 1;
	CU_ASSERT_TRUE(fast_topo_impl_on(&c));
	CU_ASSERT_NOT_EQUAL(fast_topo_hash(&c), fast_topo_hash(&a));
}

/* A result's identity follows its own schedule's entry only: hier's
 * engine changing leaves fast's and nccl's as they were; auto (which
 * chooses among them all) and the whole topology's hash move. */
static void test_topo_impl__result_identity_is_per_schedule(void)
{
	struct fast_topo a, b;
	struct fast_err err = { 0 };

	CU_ASSERT_EQUAL_FATAL(fast_topo_preset("h200", 2, 8, NULL, &a, &err), 0);
	b = a;
	b.impl[6].engine_GBps *= 2; /* hier */
	CU_ASSERT_STRING_EQUAL(fast_topo_impl_names()[5], "hier");
	CU_ASSERT_NOT_EQUAL(fast_topo_hash(&a), fast_topo_hash(&b));
	CU_ASSERT_EQUAL(fast_topo_hash_of(&a, "fast"), fast_topo_hash_of(&b, "fast"));
	CU_ASSERT_EQUAL(fast_topo_hash_of(&a, "nccl"), fast_topo_hash_of(&b, "nccl"));
	CU_ASSERT_NOT_EQUAL(fast_topo_hash_of(&a, "hier"), fast_topo_hash_of(&b, "hier"));
	CU_ASSERT_NOT_EQUAL(fast_topo_hash_of(&a, "auto"), fast_topo_hash_of(&b, "auto"));
	CU_ASSERT_EQUAL(fast_topo_hash_of(&a, "auto"), fast_topo_hash(&a));
	/* a neutral entry hashes as the fabric alone; two schedules with equal
	 * non-neutral entries still differ (the name is hashed) */
	b = a;
	fast_impl_neutral(&b.impl[1]); /* fast (the presets': two in flight) */
	fast_impl_neutral(&b.impl[2]); /* fanout */
	CU_ASSERT_EQUAL(fast_topo_hash_of(&b, "fanout"), fast_topo_hash_of(&b, "fast"));
	CU_ASSERT_NOT_EQUAL(fast_topo_hash_of(&a, "fast"), fast_topo_hash_of(&b, "fast"));
	CU_ASSERT_NOT_EQUAL(fast_topo_hash_of(&a, "nccl"), fast_topo_hash_of(&a, "pxn"));
	/* the fabric still counts */
	b = a;
	b.out.latency_us += 1;
	CU_ASSERT_NOT_EQUAL(fast_topo_hash_of(&a, "fast"), fast_topo_hash_of(&b, "fast"));
}

static void test_topo_impl__writer_round_trips(void)
{
	struct fast_topo a, b;
	struct fast_err err = { 0 };
	char *buf;

	CU_ASSERT_EQUAL_FATAL(parse(TOPO(", \"implementation\": {"
					 "\"default\": {\"in_flight\": 4, \"up_engine\": {\"kind\": \"ce\", \"GBps\": 80}},"
					 "\"spreadout\": {\"sync\": \"rank\"},"
					 "\"fast\": {\"up_engine\": {\"kind\": \"link\"}, \"call_us\": 600},"
					 "\"pxn\": {\"in_flight\": 4}}"),
				    &a, &err),
			      0);
	buf = written(&a);
	/* the default whole, each schedule where it differs; pxn is the default */
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\"default\": {\n      \"sync\": \"step\",\n      \"in_flight\": 4,\n"
					   "      \"up_engine\": {\"kind\": \"ce\", \"GBps\": 80},"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\"fast\": {\n      \"up_engine\": {\"kind\": \"link\"},\n      \"call_us\": 600\n    }"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\"spreadout\": {\n      \"sync\": \"rank\"\n    }"));
	CU_ASSERT_PTR_NULL(strstr(buf, "\"pxn\""));
	CU_ASSERT_EQUAL_FATAL(parse(buf, &b, &err), 0);
	CU_ASSERT_EQUAL(fast_topo_hash(&a), fast_topo_hash(&b));
	CU_ASSERT_EQUAL(memcmp(a.impl, b.impl, sizeof a.impl), 0);
	free(buf);
}

static void test_topo_impl__bad_members_named_by_path(void)
{
	expect_error(TOPO(", \"implementation\": {\"ncl\": {}}"), "/implementation");
	expect_error(TOPO(", \"implementation\": {\"default\": {\"syncs\": \"rank\"}}"),
		     "/implementation/default");
	expect_error(TOPO(", \"implementation\": {\"hier\": {\"sync\": \"wave\"}}"),
		     "/implementation/hier/sync: must be \"step\" or \"rank\" (got \"wave\")");
	expect_error(TOPO(", \"implementation\": {\"hier\": {\"sync\": 1}}"),
		     "/implementation/hier/sync: expected string");
	expect_error(TOPO(", \"implementation\": {\"nccl\": {\"in_flight\": 0}}"),
		     "/implementation/nccl/in_flight");
	expect_error(TOPO(", \"implementation\": {\"nccl\": {\"in_flight\": 2.5}}"),
		     "/implementation/nccl/in_flight");
	expect_error(TOPO(", \"implementation\": {\"fast\": {\"call_us\": -1}}"),
		     "/implementation/fast/call_us: must be in [0, 1e+07] us (got -1)");
	expect_error(TOPO(", \"implementation\": {\"fast\": {\"call_out_us\": 2e7}}"),
		     "/implementation/fast/call_out_us: must be in [0, 1e+07] us (got 2e+07)");
	expect_error(TOPO(", \"implementation\": {\"fast\": {\"out_GBps\": 1e-9}}"),
		     "/implementation/fast/out_GBps: must be 0 (no cap) or in [1e-06, 1e+06] GB/s (got 1e-09)");
	expect_error(TOPO(", \"implementation\": {\"fast\": {\"reduce_GBps\": 2e6}}"),
		     "/implementation/fast/reduce_GBps: must be 0 (no cap) or in [1e-06, 1e+06] GB/s");
	expect_error(TOPO(", \"implementation\": {\"hier\": {\"up_engine\": \"sm\"}}"),
		     "/implementation/hier/up_engine: expected object, got string");
	expect_error(TOPO(", \"implementation\": {\"hier\": {\"up_engine\": {\"sms\": 24}}}"),
		     "/implementation/hier/up_engine: missing required key \"kind\"");
	expect_error(TOPO(", \"implementation\": {\"hier\": {\"up_engine\": {\"kind\": \"dma\"}}}"),
		     "/implementation/hier/up_engine/kind: must be \"link\", \"sm\" or \"ce\" (got \"dma\")");
	expect_error(TOPO(", \"implementation\": {\"hier\": {\"up_engine\": {\"kind\": \"sm\", \"sms\": 24}}}"),
		     "/implementation/hier/up_engine: missing required key \"GBps_per_sm\"");
	expect_error(TOPO(", \"implementation\": {\"hier\": {\"up_engine\": {\"kind\": \"sm\", \"sms\": 0, \"GBps_per_sm\": 1}}}"),
		     "/implementation/hier/up_engine/sms");
	expect_error(TOPO(", \"implementation\": {\"hier\": {\"up_engine\": {\"kind\": \"sm\", \"sms\": 8, \"GBps_per_sm\": 0}}}"),
		     "/implementation/hier/up_engine/GBps_per_sm: must be in [1e-06, 1e+06] GB/s (got 0)");
	expect_error(TOPO(", \"implementation\": {\"hier\": {\"up_engine\": {\"kind\": \"ce\", \"sms\": 8, \"GBps\": 1}}}"),
		     "/implementation/hier/up_engine");
	expect_error(TOPO(", \"implementation\": {\"hier\": {\"up_engine\": {\"kind\": \"link\", \"GBps\": 1}}}"),
		     "/implementation/hier/up_engine");
	expect_error(TOPO(", \"implementation\": {\"hier\": {\"up_engine\": {\"kind\": \"ce\", \"GBps\": -3}}}"),
		     "/implementation/hier/up_engine/GBps: must be in [1e-06, 1e+06] GB/s (got -3)");
	expect_error(TOPO(", \"implementation\": {\"source\": 5}"), "/implementation/source");
	expect_error(TOPO(", \"implementation\": []"), "/implementation");
}

static void test_topo_impl__validate_names_the_entry(void)
{
	struct fast_topo t;
	struct fast_err err = { 0 };

	CU_ASSERT_EQUAL_FATAL(parse(TOPO(""), &t, &err), 0);
	t.impl[6].engine = FAST_ENGINE_SM;
	t.impl[6].sms = 0;
	CU_ASSERT_EQUAL(fast_topo_validate(&t, NULL, &err), FAST_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "/implementation/hier/up_engine/sms"));
	t.impl[6].sms = 4;
	t.impl[6].engine_GBps = NAN;
	CU_ASSERT_EQUAL(fast_topo_validate(&t, NULL, &err), FAST_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "/implementation/hier/up_engine/GBps_per_sm"));
	t.impl[6].engine_GBps = 2;
	t.impl[0].call_us = INFINITY;
	CU_ASSERT_EQUAL(fast_topo_validate(&t, NULL, &err), FAST_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "/implementation/default/call_us: must be a finite number"));
	t.impl[0].call_us = 0;
	t.impl[2].sync = (enum fast_impl_sync)7;
	CU_ASSERT_EQUAL(fast_topo_validate(&t, NULL, &err), FAST_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "/implementation/fanout/sync"));
	t.impl[2].sync = FAST_IMPL_SYNC_STEP;
	CU_ASSERT_EQUAL(fast_topo_validate(&t, NULL, &err), 0);
}

static void test_topo_impl__fields_calibrate_can_fit(void)
{
	struct fast_topo t;
	struct fast_err err = { 0 };
	double lo, hi, *v;

	CU_ASSERT_EQUAL_FATAL(parse(TOPO(", \"implementation\": {\"hier\": {\"up_engine\": "
					 "{\"kind\": \"sm\", \"sms\": 24, \"GBps_per_sm\": 7}}}"),
				    &t, &err),
			      0);
	v = fast_topo_field(&t, "/implementation/hier/up_engine/GBps_per_sm", &lo, &hi);
	CU_ASSERT_PTR_EQUAL(v, &t.impl[6].engine_GBps);
	CU_ASSERT_EQUAL(lo, FAST_TOPO_MIN_GBPS);
	v = fast_topo_field(&t, "/implementation/default/call_us", &lo, &hi);
	CU_ASSERT_PTR_EQUAL(v, &t.impl[0].call_us);
	CU_ASSERT_EQUAL(hi, 1e7);
	CU_ASSERT_PTR_EQUAL(fast_topo_field(&t, "/implementation/nccl/out_GBps", NULL, NULL),
			    &t.impl[3].out_GBps);
	CU_ASSERT_PTR_EQUAL(fast_topo_field(&t, "/implementation/fanout/call_out_us", NULL, NULL),
			    &t.impl[2].call_out_us);
	/* an engine's rate only where the entry has that engine */
	CU_ASSERT_PTR_NULL(fast_topo_field(&t, "/implementation/nccl/up_engine/GBps_per_sm", NULL, NULL));
	CU_ASSERT_PTR_NULL(fast_topo_field(&t, "/implementation/hier/up_engine/GBps", NULL, NULL));
	CU_ASSERT_PTR_NULL(fast_topo_field(&t, "/implementation/nccl", NULL, NULL));
	CU_ASSERT_PTR_NULL(fast_topo_field(&t, "/implementation/ncl/call_us", NULL, NULL));
	CU_ASSERT_PTR_NULL(fast_topo_field(&t, "/implementation/nccl/sync", NULL, NULL));
}

static void test_topo_impl__presets_are_valid(void)
{
	const char *const *p = fast_topo_preset_names();

	for (; *p; p++) {
		struct fast_topo t, u;
		struct fast_err err = { 0 };
		char *buf;
		CU_ASSERT_EQUAL_FATAL(fast_topo_preset(*p, 0, 0, NULL, &t, &err), 0);
		CU_ASSERT_EQUAL(fast_topo_validate(&t, NULL, &err), 0);
		buf = written(&t);
		CU_ASSERT_EQUAL_FATAL(parse(buf, &u, &err), 0);
		CU_ASSERT_EQUAL(fast_topo_hash(&t), fast_topo_hash(&u));
		CU_ASSERT_EQUAL(memcmp(t.impl, u.impl, sizeof t.impl), 0);
		free(buf);
	}
}

UNIT_MAIN("topo_impl",
	  UNIT_TEST(test_topo_impl__names_are_the_compilers),
	  UNIT_TEST(test_topo_impl__entries_merge_over_the_default),
	  UNIT_TEST(test_topo_impl__neutral_keeps_the_identity),
	  UNIT_TEST(test_topo_impl__result_identity_is_per_schedule),
	  UNIT_TEST(test_topo_impl__writer_round_trips),
	  UNIT_TEST(test_topo_impl__bad_members_named_by_path),
	  UNIT_TEST(test_topo_impl__validate_names_the_entry),
	  UNIT_TEST(test_topo_impl__fields_calibrate_can_fit),
	  UNIT_TEST(test_topo_impl__presets_are_valid))
