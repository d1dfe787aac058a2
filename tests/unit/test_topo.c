/*
 * test_topo.c - lib/topo: presets and their published numbers, the
 * dimension limit, the strict loader (defaults, every kind of bad field with
 * its JSON path), validation, and the normalised writer round trip.
 */
#define _POSIX_C_SOURCE 200809L
#include <CUnit/Basic.h>

#include "unit.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fast/topo.h"

static int parse(const char *text, struct fast_topo *t, struct fast_err *err)
{
	struct fast_limits lim;
	fast_limits_default(&lim);
	return fast_topo_parse(text, strlen(text), "t.json", &lim, t, err);
}

/* A minimal valid topology; %s is spliced into the root object. */
#define MINIMAL(extra_root, up_extra, out_extra)                                    \
	"{\"version\": 1, \"servers\": 2, \"gpus_per_server\": 4" extra_root ","     \
	" \"scale_up\": {\"kind\": \"switch\", \"bw_GBps\": 100" up_extra "},"       \
	" \"scale_out\": {\"bw_GBps\": 25" out_extra "}}"

static void expect_error(const char *text, int code, const char *msg)
{
	struct fast_topo t;
	struct fast_err err = { 0 };

	memset(&t, 0x5a, sizeof t);
	CU_ASSERT_EQUAL(parse(text, &t, &err), code);
	CU_ASSERT_EQUAL(err.code, code);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, msg));
	if (!strstr(err.msg, msg))
		fprintf(stderr, "\n  got:    %s\n  wanted: %s\n", err.msg, msg);
	/* output untouched on failure */
	CU_ASSERT_EQUAL(((unsigned char *)&t)[0], 0x5a);
}

static void test_topo__presets_load_with_published_numbers(void)
{
	const char *const *names = fast_topo_preset_names();
	struct fast_topo t;
	struct fast_err err = { 0 };
	size_t n = 0;

	for (; names[n]; n++) {
		CU_ASSERT_EQUAL(fast_topo_preset(names[n], 0, 0, NULL, &t, &err), 0);
		CU_ASSERT_STRING_EQUAL(t.name, names[n]);
		CU_ASSERT_EQUAL(t.servers, 4);
		CU_ASSERT_EQUAL(t.gpus, 8);
		CU_ASSERT_EQUAL(fast_topo_ngpus(&t), 32);
		CU_ASSERT(strlen(t.source) > 40); /* every preset cites its sources */
		CU_ASSERT_EQUAL(fast_topo_validate(&t, NULL, &err), 0);
		CU_ASSERT_EQUAL(t.core_oversub, 1.0);
	}
	CU_ASSERT_EQUAL(n, 4);

	CU_ASSERT_EQUAL_FATAL(fast_topo_preset("h200", 0, 0, NULL, &t, &err), 0);
	CU_ASSERT_EQUAL(t.up_kind, FAST_UP_SWITCH);
	CU_ASSERT_DOUBLE_EQUAL(t.up.bw_GBps, 450, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(t.up.bw_GBps * t.up.efficiency, 380, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(t.out.bw_GBps, 50, 1e-12); /* 400 Gb/s */
	CU_ASSERT_DOUBLE_EQUAL(t.out.bw_GBps * t.out.efficiency, 48.85, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(t.up.latency_us, 0.1, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(t.out.latency_us, 1.7, 1e-12); /* InfiniBand */
	CU_ASSERT_DOUBLE_EQUAL(fast_tier_Bps(&t.out), 48.85e9, 1e-3);

	CU_ASSERT_EQUAL_FATAL(fast_topo_preset("mi300x", 0, 0, NULL, &t, &err), 0);
	CU_ASSERT_EQUAL(t.up_kind, FAST_UP_MESH);
	CU_ASSERT_DOUBLE_EQUAL(t.up.bw_GBps * 7, 448, 1e-9); /* 7 links per GPU */
	CU_ASSERT_DOUBLE_EQUAL(t.out.bw_GBps, 50, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(t.out.latency_us, 0.7, 1e-12); /* Ethernet */

	CU_ASSERT_EQUAL_FATAL(fast_topo_preset("mi300x-100g", 0, 0, NULL, &t, &err), 0);
	CU_ASSERT_DOUBLE_EQUAL(t.out.bw_GBps, 12.5, 1e-12); /* 100 Gb/s */
	CU_ASSERT_DOUBLE_EQUAL(t.out.bw_GBps * t.out.efficiency, 11, 1e-9);
	{
		/* RoCE/DCQCN loses much more under incast than InfiniBand */
		struct fast_topo ib;
		CU_ASSERT_EQUAL_FATAL(fast_topo_preset("h200", 0, 0, NULL, &ib, &err), 0);
		CU_ASSERT(t.congestion.incast_slope >= 4 * ib.congestion.incast_slope);
		CU_ASSERT(t.congestion.incast_floor < ib.congestion.incast_floor);
	}
}

static void test_topo__preset_scaling_and_limit(void)
{
	struct fast_limits lim;
	struct fast_topo t;
	struct fast_err err = { 0 };

	fast_limits_default(&lim);
	CU_ASSERT_EQUAL(fast_topo_preset("h100", 16, 4, &lim, &t, &err), 0);
	CU_ASSERT_EQUAL(t.servers, 16);
	CU_ASSERT_EQUAL(t.gpus, 4);
	CU_ASSERT_EQUAL(fast_topo_preset("h200", 2048, 8, &lim, &t, &err), 0); /* = limit */

	memset(&t, 0x5a, sizeof t);
	CU_ASSERT_EQUAL(fast_topo_preset("h200", 2049, 8, &lim, &t, &err), FAST_ELIMIT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "16384"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "--max-gpus"));
	CU_ASSERT_EQUAL(((unsigned char *)&t)[0], 0x5a);
	/* the product must not wrap around in 32 bits */
	CU_ASSERT_EQUAL(fast_topo_preset("h200", 1u << 20, 1u << 12, &lim, &t, &err),
			FAST_ELIMIT);
	lim.max_gpus = 8;
	CU_ASSERT_EQUAL(fast_topo_preset("h200", 2, 4, &lim, &t, &err), 0);
	CU_ASSERT_EQUAL(fast_topo_preset("h200", 0, 0, &lim, &t, &err), FAST_ELIMIT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "over the limit of 8"));

	CU_ASSERT_EQUAL(fast_topo_preset("H200", 0, 0, NULL, &t, &err), FAST_EUSAGE);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "unknown preset 'H200'"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "mi300x-100g"));
}

static void test_topo__optional_fields_get_documented_defaults(void)
{
	struct fast_topo t;
	struct fast_err err = { 0 };

	CU_ASSERT_EQUAL_FATAL(parse(MINIMAL("", "", ""), &t, &err), 0);
	CU_ASSERT_STRING_EQUAL(t.name, "custom");
	CU_ASSERT_EQUAL(t.servers, 2);
	CU_ASSERT_EQUAL(t.gpus, 4);
	CU_ASSERT_EQUAL(t.up_kind, FAST_UP_SWITCH);
	CU_ASSERT_EQUAL(t.up.bw_GBps, 100);
	CU_ASSERT_EQUAL(t.up.latency_us, 0);
	CU_ASSERT_EQUAL(t.up.efficiency, 1);
	CU_ASSERT_EQUAL(t.up.step_overhead_us, 0);
	CU_ASSERT_EQUAL(t.out.bw_GBps, 25);
	CU_ASSERT_EQUAL(t.out.efficiency, 1);
	CU_ASSERT_EQUAL(t.core_oversub, 1);
	CU_ASSERT_EQUAL(t.congestion.incast_threshold, 1);
	CU_ASSERT_EQUAL(t.congestion.incast_slope, 0);
	CU_ASSERT_EQUAL(t.congestion.incast_floor, 1);
	CU_ASSERT_STRING_EQUAL(t.source, "");

	CU_ASSERT_EQUAL_FATAL(
		parse(MINIMAL(", \"name\": \"lab\", \"source\": \"me\", \"congestion\": "
			      "{\"incast_slope\": 0.1}",
			      ", \"latency_us\": 0.5, \"efficiency\": 0.5, \"step_overhead_us\": 3",
			      ", \"nics_per_server\": 4, \"core_oversubscription\": 2"),
		      &t, &err),
		0);
	CU_ASSERT_STRING_EQUAL(t.name, "lab");
	CU_ASSERT_STRING_EQUAL(t.source, "me");
	CU_ASSERT_EQUAL(t.up.latency_us, 0.5);
	CU_ASSERT_EQUAL(t.up.efficiency, 0.5);
	CU_ASSERT_EQUAL(t.up.step_overhead_us, 3);
	CU_ASSERT_EQUAL(t.core_oversub, 2);
	CU_ASSERT_EQUAL(t.congestion.incast_slope, 0.1);
	CU_ASSERT_EQUAL(t.congestion.incast_floor, 1);
}

static void test_topo__bad_fields_name_their_path(void)
{
	expect_error("{\"version\": 1,\n \"servers\": 2,,}", FAST_EINPUT, "t.json:2:");
	expect_error("[1, 2]", FAST_EINPUT, "t.json: /: expected object, got array");
	expect_error("{\"servers\": 2}", FAST_EINPUT, "t.json: /: missing required key \"version\"");
	expect_error(MINIMAL(", \"version\": 1", "", ""), FAST_EINPUT, "duplicate key \"version\"");
	expect_error("{\"version\": 2}", FAST_EINPUT,
		     "t.json: /version: unsupported version 2 (this build reads version 1)");
	expect_error("{\"version\": \"1\"}", FAST_EINPUT, "/version: expected a non-negative integer");
	expect_error(MINIMAL(", \"colour\": 1", "", ""), FAST_EINPUT, "unknown key \"colour\"");
	expect_error(MINIMAL(", \"Servers\": 1", "", ""), FAST_EINPUT, "did you mean \"servers\"");
	expect_error(MINIMAL("", ", \"Efficiency\": 0.5", ""), FAST_EINPUT,
		     "t.json: /scale_up: unknown key \"Efficiency\"");
	expect_error(MINIMAL("", ", \"bw_GBps\": 5", ""), FAST_EINPUT,
		     "t.json: /scale_up: duplicate key \"bw_GBps\"");
	expect_error(MINIMAL("", "", ", \"bw_GBps\": 5"), FAST_EINPUT,
		     "t.json: /scale_out: duplicate key \"bw_GBps\"");
	expect_error(MINIMAL("", ", \"efficiency\": 1.5", ""), FAST_EINPUT,
		     "t.json: /scale_up/efficiency: must be in [0.001, 1] (got 1.5)");
	expect_error(MINIMAL("", "", ", \"efficiency\": 0"), FAST_EINPUT,
		     "t.json: /scale_out/efficiency: must be in [0.001, 1] (got 0)");
	expect_error(MINIMAL("", "", ", \"latency_us\": -1"), FAST_EINPUT,
		     "t.json: /scale_out/latency_us: must be in [0, 1e+06] us (got -1)");
	expect_error(MINIMAL("", "", ", \"efficiency\": \"high\""), FAST_EINPUT,
		     "t.json: /scale_out/efficiency: expected a number, got string");
	expect_error(MINIMAL("", "", ", \"nics_per_server\": 0"), FAST_EINPUT,
		     "t.json: /scale_out/nics_per_server: must be in [1, 1024] (got 0)");
	expect_error(MINIMAL("", "", ", \"core_oversubscription\": 0.5"), FAST_EINPUT,
		     "t.json: /scale_out/core_oversubscription: must be in [1, 1000] (got 0.5)");
	expect_error(MINIMAL(", \"congestion\": {\"incast_floor\": 0}", "", ""), FAST_EINPUT,
		     "t.json: /congestion/incast_floor: must be in [0.001, 1] (got 0)");
	/* issue #12: values that are doubles but no fabric; each factor in
	 * range but the product below 1 kB/s; 1.0000001 not shown as "1" */
	expect_error("{\"version\": 1, \"servers\": 2, \"gpus_per_server\": 4,"
		     " \"scale_up\": {\"kind\": \"switch\", \"bw_GBps\": 100},"
		     " \"scale_out\": {\"bw_GBps\": 1e-300, \"efficiency\": 1e-300}}", FAST_EINPUT,
		     "t.json: /scale_out/bw_GBps: must be in [1e-06, 1e+06] GB/s (got 1e-300)");
	expect_error(MINIMAL(", \"congestion\": {\"incast_floor\": 1e-300}", "", ""), FAST_EINPUT,
		     "t.json: /congestion/incast_floor: must be in [0.001, 1] (got 1e-300)");
	expect_error(MINIMAL(", \"congestion\": {\"incast_slope\": 2}", "", ""), FAST_EINPUT,
		     "t.json: /congestion/incast_slope: must be in [0, 1] (got 2)");
	expect_error(MINIMAL("", ", \"efficiency\": 1.0000001", ""), FAST_EINPUT,
		     "t.json: /scale_up/efficiency: must be in [0.001, 1] (got 1.0000001)");
	expect_error(MINIMAL("", ", \"latency_us\": 2e6", ""), FAST_EINPUT,
		     "t.json: /scale_up/latency_us: must be in [0, 1e+06] us (got 2e+06)");
	expect_error(MINIMAL(", \"congestion\": {\"incast_floor\": 0.01}", ", \"step_overhead_us\": 1e300", ""),
		     FAST_EINPUT, "t.json: /scale_up/step_overhead_us: must be in [0, 1e+06] us (got 1e+300)");
	expect_error("{\"version\": 1, \"servers\": 2, \"gpus_per_server\": 4,"
		     " \"scale_up\": {\"kind\": \"switch\", \"bw_GBps\": 100},"
		     " \"scale_out\": {\"bw_GBps\": 1e-3, \"efficiency\": 0.01,"
		     " \"core_oversubscription\": 200}}", FAST_EINPUT,
		     "t.json: /scale_out: its slowest rate bw_GBps x efficiency x incast_floor / "
		     "core_oversubscription = 0.001 x 0.01 x 1 / 200 = 5e-08 GB/s is below 1e-06 GB/s");
	expect_error("{\"version\": 1, \"servers\": 2, \"gpus_per_server\": 4,"
		     " \"scale_up\": {\"kind\": \"mesh\", \"bw_GBps\": 1e-5, \"efficiency\": 0.01},"
		     " \"scale_out\": {\"bw_GBps\": 25}}", FAST_EINPUT,
		     "t.json: /scale_up: its slowest rate bw_GBps x efficiency x incast_floor = "
		     "1e-05 x 0.01 x 1 = 1e-07 GB/s is below 1e-06 GB/s");
	expect_error(MINIMAL(", \"congestion\": {\"floor\": 0.5}", "", ""), FAST_EINPUT,
		     "t.json: /congestion: unknown key \"floor\"");
	expect_error("{\"version\": 1, \"servers\": 0, \"gpus_per_server\": 4}", FAST_EINPUT,
		     "t.json: /servers: must be in [1, 1048576] (got 0)");
	expect_error("{\"version\": 1, \"servers\": 1.5, \"gpus_per_server\": 4}", FAST_EINPUT,
		     "t.json: /servers: must be a non-negative integer (got 1.5)");
	expect_error("{\"version\": 1, \"servers\": 2, \"gpus_per_server\": 0}", FAST_EINPUT,
		     "t.json: /gpus_per_server: must be in [1, 65536] (got 0)");
	expect_error("{\"version\": 1, \"servers\": 4096, \"gpus_per_server\": 8}", FAST_ELIMIT,
		     "4096 servers x 8 GPUs = 32768 GPUs is over the limit of 16384 (raise it "
		     "with --max-gpus)");
	expect_error("{\"version\": 1, \"servers\": 2, \"gpus_per_server\": 4}", FAST_EINPUT,
		     "t.json: /: missing required key \"scale_up\"");
	expect_error("{\"version\": 1, \"servers\": 2, \"gpus_per_server\": 4, "
		     "\"scale_up\": {\"kind\": \"ring\", \"bw_GBps\": 1}}",
		     FAST_EINPUT, "t.json: /scale_up/kind: must be \"switch\" or \"mesh\" (got \"ring\")");
	expect_error("{\"version\": 1, \"servers\": 2, \"gpus_per_server\": 4, "
		     "\"scale_up\": {\"kind\": \"mesh\", \"bw_GBps\": 0}}",
		     FAST_EINPUT, "t.json: /scale_up/bw_GBps: must be in [1e-06, 1e+06] GB/s (got 0)");
	expect_error("{\"version\": 1, \"servers\": 2, \"gpus_per_server\": 4, "
		     "\"scale_up\": {\"bw_GBps\": 1}}",
		     FAST_EINPUT, "t.json: /scale_up: missing required key \"kind\"");
}

static void test_topo__validate_names_the_field(void)
{
	struct fast_topo t;
	struct fast_err err = { 0 };

	CU_ASSERT_EQUAL_FATAL(fast_topo_preset("h200", 0, 0, NULL, &t, &err), 0);
	t.out.bw_GBps = -5;
	CU_ASSERT_EQUAL(fast_topo_validate(&t, NULL, &err), FAST_EINPUT);
	CU_ASSERT_STRING_EQUAL(err.msg, "/scale_out/bw_GBps: must be in [1e-06, 1e+06] GB/s (got -5)");
	t.out.bw_GBps = 50;
	t.up.efficiency = NAN;
	CU_ASSERT_EQUAL(fast_topo_validate(&t, NULL, &err), FAST_EINPUT);
	CU_ASSERT_STRING_EQUAL(err.msg, "/scale_up/efficiency: must be a finite number");
	t.up.efficiency = 1;
	t.gpus = 0;
	CU_ASSERT_EQUAL(fast_topo_validate(&t, NULL, &err), FAST_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "/gpus_per_server"));
	t.gpus = 8;
	t.congestion.incast_floor = 2;
	CU_ASSERT_EQUAL(fast_topo_validate(&t, NULL, &err), FAST_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "/congestion/incast_floor"));
	t.congestion.incast_floor = 1;
	t.up_kind = (enum fast_up_kind)7;
	CU_ASSERT_EQUAL(fast_topo_validate(&t, NULL, &err), FAST_EINPUT);
	t.up_kind = FAST_UP_MESH;
	CU_ASSERT_EQUAL(fast_topo_validate(&t, NULL, &err), 0);
}

/* Write t to a string (caller frees). */
static char *write_str(const struct fast_topo *t)
{
	char *buf = NULL;
	size_t len = 0;
	struct fast_err err = { 0 };
	FILE *f = open_memstream(&buf, &len);

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT_EQUAL(fast_topo_write(t, f, &err), 0);
	fclose(f);
	return buf;
}

static void test_topo__writer_round_trips_every_field(void)
{
	const char *const *names = fast_topo_preset_names();
	struct fast_err err = { 0 };

	for (size_t i = 0; names[i]; i++) {
		struct fast_topo a, b;
		char *s1, *s2;

		CU_ASSERT_EQUAL_FATAL(fast_topo_preset(names[i], 3, 5, NULL, &a, &err), 0);
		a.core_oversub = 1.5; /* a non-default value survives too */
		s1 = write_str(&a);
		CU_ASSERT_EQUAL_FATAL(parse(s1, &b, &err), 0);
		CU_ASSERT_STRING_EQUAL(a.name, b.name);
		CU_ASSERT_STRING_EQUAL(a.source, b.source);
		CU_ASSERT_EQUAL(a.servers, b.servers);
		CU_ASSERT_EQUAL(a.gpus, b.gpus);
		CU_ASSERT_EQUAL(a.up_kind, b.up_kind);
		/* exact: the writer prints doubles that read back identically */
		CU_ASSERT(memcmp(&a.up, &b.up, sizeof a.up) == 0);
		CU_ASSERT(memcmp(&a.out, &b.out, sizeof a.out) == 0);
		CU_ASSERT(memcmp(&a.congestion, &b.congestion, sizeof a.congestion) == 0);
		CU_ASSERT_EQUAL(a.core_oversub, b.core_oversub);
		s2 = write_str(&b);
		CU_ASSERT_STRING_EQUAL(s1, s2);
		/* every field is explicit */
		CU_ASSERT_PTR_NOT_NULL(strstr(s1, "\"nics_per_server\": 5"));
		CU_ASSERT_PTR_NOT_NULL(strstr(s1, "\"incast_floor\""));
		CU_ASSERT_PTR_NOT_NULL(strstr(s1, "\"step_overhead_us\""));
		free(s1);
		free(s2);
	}
}

/* The loss/timeout term is default-off: off, it is neither written nor
 * hashed (a topology without it keeps its identity, so plan caches and
 * result idents of every existing topology stay); on, it round-trips and
 * changes the hash; its numbers are range-checked by path. */
static void test_topo__rto_term_off_by_default(void)
{
	struct fast_topo a, b;
	struct fast_err err = { 0 };
	double lo, hi, *v;
	char *s1;

	CU_ASSERT_EQUAL_FATAL(parse(MINIMAL("", "", ""), &a, &err), 0);
	CU_ASSERT_EQUAL(a.rto.us, 0);
	CU_ASSERT_EQUAL(a.rto.senders, 1);
	CU_ASSERT_EQUAL(a.rto.count, 1);
	CU_ASSERT(!fast_topo_rto_on(&a));
	b = a;
	b.rto.senders = 7; /* off: the other two do not matter */
	CU_ASSERT_EQUAL(fast_topo_hash(&a), fast_topo_hash(&b));
	s1 = write_str(&b);
	CU_ASSERT_PTR_NULL(strstr(s1, "rto_"));
	free(s1);
	CU_ASSERT_EQUAL_FATAL(parse(MINIMAL(", \"congestion\": {\"rto_us\": 200000, \"rto_senders\": 6, "
					    "\"rto_count\": 2}", "", ""), &b, &err), 0);
	CU_ASSERT(fast_topo_rto_on(&b));
	CU_ASSERT_NOT_EQUAL(fast_topo_hash(&a), fast_topo_hash(&b));
	s1 = write_str(&b);
	CU_ASSERT_PTR_NOT_NULL(strstr(s1, "\"rto_us\": 200000"));
	CU_ASSERT_EQUAL_FATAL(parse(s1, &a, &err), 0);
	CU_ASSERT(memcmp(&a.rto, &b.rto, sizeof a.rto) == 0);
	free(s1);
	expect_error(MINIMAL(", \"congestion\": {\"rto_us\": -1}", "", ""), FAST_EINPUT,
		     "t.json: /congestion/rto_us: must be in [0, 1e+07] us (got -1)");
	v = fast_topo_field(&b, "/congestion/rto_senders", &lo, &hi);
	CU_ASSERT_PTR_EQUAL(v, &b.rto.senders);
	CU_ASSERT_EQUAL(lo, 0);
	CU_ASSERT_PTR_EQUAL(fast_topo_field(&b, "/scale_out/step_overhead_us", NULL, NULL),
			    &b.out.step_overhead_us);
	CU_ASSERT_PTR_NULL(fast_topo_field(&b, "/scale_out/nope", NULL, NULL));
}

static void test_topo__write_error_is_eio(void)
{
	struct fast_topo t;
	struct fast_err err = { 0 };
	FILE *f = fopen("/dev/null", "r"); /* writes to a read-only stream fail */

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT_EQUAL_FATAL(fast_topo_preset("h200", 0, 0, NULL, &t, &err), 0);
	CU_ASSERT_EQUAL(fast_topo_write(&t, f, &err), FAST_EIO);
	CU_ASSERT_EQUAL(err.code, FAST_EIO);
	fclose(f);
}

static void test_topo__load_reads_files(void)
{
	struct fast_topo t;
	struct fast_err err = { 0 };
	char path[] = "/tmp/test_topo_XXXXXX";
	int fd = mkstemp(path);
	FILE *f;

	CU_ASSERT_FATAL(fd >= 0);
	f = fdopen(fd, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs(MINIMAL("", "", ", \"efficiency\": 2"), f);
	fclose(f);
	CU_ASSERT_EQUAL(fast_topo_load(path, NULL, &t, &err), FAST_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, path));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "/scale_out/efficiency: must be in [0.001, 1] (got 2)"));
	f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs(MINIMAL("", "", ""), f);
	fclose(f);
	CU_ASSERT_EQUAL(fast_topo_load(path, NULL, &t, &err), 0);
	CU_ASSERT_EQUAL(t.gpus, 4);
	remove(path);
	CU_ASSERT_EQUAL(fast_topo_load(path, NULL, &t, &err), FAST_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "cannot open"));
}

/* scale_out.core_sharing: "maxmin" by default, neither written nor hashed
 * then (every existing topology keeps its bytes and identity); "demand"
 * round-trips, is written and changes the hash; anything else is bad
 * input naming the path. */
static void test_topo__core_sharing_default_maxmin(void)
{
	struct fast_topo a, b;
	struct fast_err err = { 0 };
	char *s1, *s2;

	CU_ASSERT_EQUAL_FATAL(parse(MINIMAL("", "", ", \"core_oversubscription\": 2"), &a, &err), 0);
	CU_ASSERT_EQUAL(a.core_sharing, FAST_CORE_MAXMIN);
	CU_ASSERT_EQUAL_FATAL(parse(MINIMAL("", "", ", \"core_oversubscription\": 2,"
					     " \"core_sharing\": \"maxmin\""), &b, &err), 0);
	CU_ASSERT_EQUAL(fast_topo_hash(&a), fast_topo_hash(&b));
	s1 = write_str(&a);
	CU_ASSERT_PTR_NULL(strstr(s1, "core_sharing"));
	free(s1);

	CU_ASSERT_EQUAL_FATAL(parse(MINIMAL("", "", ", \"core_oversubscription\": 2,"
					     " \"core_sharing\": \"demand\""), &b, &err), 0);
	CU_ASSERT_EQUAL(b.core_sharing, FAST_CORE_DEMAND);
	CU_ASSERT_NOT_EQUAL(fast_topo_hash(&a), fast_topo_hash(&b));
	s1 = write_str(&b);
	CU_ASSERT_PTR_NOT_NULL(strstr(s1, "\"core_oversubscription\": 2,\n    \"core_sharing\": \"demand\"\n  }"));
	CU_ASSERT_EQUAL_FATAL(parse(s1, &a, &err), 0);
	CU_ASSERT_EQUAL(a.core_sharing, FAST_CORE_DEMAND);
	s2 = write_str(&a);
	CU_ASSERT_STRING_EQUAL(s1, s2);
	free(s1);
	free(s2);

	expect_error(MINIMAL("", "", ", \"core_sharing\": \"fair\""), FAST_EINPUT,
		     "t.json: /scale_out/core_sharing: must be \"maxmin\" or \"demand\" (got \"fair\")");
	expect_error(MINIMAL("", "", ", \"core_sharing\": 1"), FAST_EINPUT,
		     "t.json: /scale_out/core_sharing: expected string, got number");
}

UNIT_MAIN("topo",
	  UNIT_TEST(test_topo__presets_load_with_published_numbers),
	  UNIT_TEST(test_topo__preset_scaling_and_limit),
	  UNIT_TEST(test_topo__optional_fields_get_documented_defaults),
	  UNIT_TEST(test_topo__bad_fields_name_their_path),
	  UNIT_TEST(test_topo__validate_names_the_field),
	  UNIT_TEST(test_topo__writer_round_trips_every_field),
	  UNIT_TEST(test_topo__rto_term_off_by_default),
	  UNIT_TEST(test_topo__core_sharing_default_maxmin),
	  UNIT_TEST(test_topo__write_error_is_eio),
	  UNIT_TEST(test_topo__load_reads_files))
