/*
 * test_topo_nics.c - the NICs of a server (topo.h, lib/model/topo_nics.c):
 * how local GPUs map onto ports when K < G and K > G, port and GPU rates
 * with overrides, the loader's checks (range, duplicates, a server with no
 * way out), the identity of an ideal fabric, and the writer round trip.
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

/* 2 servers x 4 GPUs; %s is spliced into scale_out. */
#define TOPO(out_extra)                                                             \
	"{\"version\": 1, \"servers\": 2, \"gpus_per_server\": 4,"                   \
	" \"scale_up\": {\"kind\": \"switch\", \"bw_GBps\": 100},"                   \
	" \"scale_out\": {\"bw_GBps\": 25" out_extra "}}"

static void expect_error(const char *text, const char *msg)
{
	struct fast_topo t;
	struct fast_err err = { 0 };

	CU_ASSERT_EQUAL(parse(text, &t, &err), FAST_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, msg));
	if (!strstr(err.msg, msg))
		fprintf(stderr, "\n  got:    %s\n  wanted: %s\n", err.msg, msg);
}

static void test_topo_nics__ports_when_gpus_share_a_nic(void)
{
	struct fast_topo t;
	struct fast_err err = { 0 };

	CU_ASSERT_EQUAL_FATAL(parse(TOPO(", \"nics_per_server\": 2"), &t, &err), 0);
	CU_ASSERT_EQUAL(fast_topo_ports(&t), 2);
	/* GPU l uses NIC floor(l K / G): 0, 0, 1, 1 */
	CU_ASSERT_EQUAL(fast_topo_port_of(&t, 0), 0);
	CU_ASSERT_EQUAL(fast_topo_port_of(&t, 1), 0);
	CU_ASSERT_EQUAL(fast_topo_port_of(&t, 2), 1);
	CU_ASSERT_EQUAL(fast_topo_port_of(&t, 3), 1);
	CU_ASSERT_EQUAL(fast_topo_port_gpus(&t, 0), 2);
	CU_ASSERT_EQUAL(fast_topo_port_gpus(&t, 1), 2);
	CU_ASSERT_DOUBLE_EQUAL(fast_topo_port_Bps(&t, 1, 1), 25e9, 1);
	CU_ASSERT_DOUBLE_EQUAL(fast_topo_gpu_out_Bps(&t, 5), 12.5e9, 1);
	CU_ASSERT_DOUBLE_EQUAL(fast_topo_server_out_Bps(&t, 0), 50e9, 1);
	CU_ASSERT_FALSE(fast_topo_nics_ideal(&t));
	/* 3 NICs for 4 GPUs: GPUs 0, 1 | 2 | 3 */
	t.nics = 3;
	CU_ASSERT_EQUAL(fast_topo_port_of(&t, 1), 0);
	CU_ASSERT_EQUAL(fast_topo_port_of(&t, 2), 1);
	CU_ASSERT_EQUAL(fast_topo_port_of(&t, 3), 2);
	CU_ASSERT_EQUAL(fast_topo_port_gpus(&t, 0), 2);
	CU_ASSERT_EQUAL(fast_topo_port_gpus(&t, 1), 1);
	CU_ASSERT_EQUAL(fast_topo_port_gpus(&t, 2), 1);
}

static void test_topo_nics__ports_when_a_gpu_drives_several(void)
{
	struct fast_topo t;
	struct fast_err err = { 0 };
	uint32_t k0, k1;

	CU_ASSERT_EQUAL_FATAL(parse(TOPO(", \"nics_per_server\": 8, \"nic_overrides\": "
					 "[{\"server\": 1, \"nic\": 3, \"fraction\": 0}]"),
				    &t, &err), 0);
	CU_ASSERT_EQUAL(fast_topo_ports(&t), 4);
	fast_topo_port_nics(&t, 1, &k0, &k1);
	CU_ASSERT_EQUAL(k0, 2);
	CU_ASSERT_EQUAL(k1, 4);
	CU_ASSERT_EQUAL(fast_topo_port_gpus(&t, 1), 1);
	CU_ASSERT_DOUBLE_EQUAL(fast_topo_port_Bps(&t, 0, 1), 50e9, 1);
	CU_ASSERT_DOUBLE_EQUAL(fast_topo_port_Bps(&t, 1, 1), 25e9, 1); /* one of two down */
	CU_ASSERT_DOUBLE_EQUAL(fast_topo_gpu_out_Bps(&t, 5), 25e9, 1);
	CU_ASSERT_DOUBLE_EQUAL(fast_topo_server_out_Bps(&t, 1), 175e9, 1);
	/* 6 NICs for 4 GPUs: 2 | 1 | 2 | 1 (NIC k is GPU floor(k G / K)'s) */
	t.nics = 6;
	t.noverrides = 0;
	fast_topo_port_nics(&t, 0, &k0, &k1);
	CU_ASSERT(k0 == 0 && k1 == 2);
	fast_topo_port_nics(&t, 1, &k0, &k1);
	CU_ASSERT(k0 == 2 && k1 == 3);
	fast_topo_port_nics(&t, 3, &k0, &k1);
	CU_ASSERT(k0 == 5 && k1 == 6);
}

static void test_topo_nics__overrides_checked_by_field(void)
{
	expect_error(TOPO(", \"nic_overrides\": [{\"server\": 2, \"nic\": 0, \"fraction\": 0.5}]"),
		     "t.json: /scale_out/nic_overrides/0/server: ");
	expect_error(TOPO(", \"nic_overrides\": [{\"server\": 0, \"nic\": 4, \"fraction\": 0.5}]"),
		     "t.json: /scale_out/nic_overrides/0/nic: ");
	expect_error(TOPO(", \"nic_overrides\": [{\"server\": 0, \"nic\": 1, \"fraction\": 1.5}]"),
		     "t.json: /scale_out/nic_overrides/0/fraction: ");
	expect_error(TOPO(", \"nic_overrides\": [{\"server\": 0, \"nic\": 1, \"fraction\": -0.1}]"),
		     "t.json: /scale_out/nic_overrides/0/fraction: ");
	expect_error(TOPO(", \"nic_overrides\": [{\"server\": 0, \"nic\": 1, \"fraction\": 0.5},"
			  " {\"server\": 0, \"nic\": 1, \"fraction\": 0}]"),
		     "t.json: /scale_out/nic_overrides/1: a second override of server 0 NIC 1");
	expect_error(TOPO(", \"nic_overrides\": [{\"server\": 0, \"nic\": 1}]"),
		     "/scale_out/nic_overrides/0: missing required key \"fraction\"");
	expect_error(TOPO(", \"nic_overrides\": {}"), "/scale_out/nic_overrides: expected array");
	expect_error(TOPO(", \"nics_per_server\": 2, \"nic_overrides\": ["
			  "{\"server\": 1, \"nic\": 0, \"fraction\": 0},"
			  " {\"server\": 1, \"nic\": 1, \"fraction\": 0}]"),
		     "t.json: /scale_out/nic_overrides: every NIC of server 1 is down");
	expect_error(TOPO(", \"nic_overrides\": [{\"server\": 0, \"nic\": 1, \"fraction\": 1e-9}]"),
		     "/scale_out/nic_overrides/0: server 0 NIC 1 at 1e-09 of the nominal rate runs below");
}

static void test_topo_nics__set_nic_names_what_is_wrong(void)
{
	struct fast_topo t;
	struct fast_err err = { 0 };

	CU_ASSERT_EQUAL_FATAL(fast_topo_preset("h200", 2, 8, NULL, &t, &err), 0);
	CU_ASSERT_EQUAL(fast_topo_set_nic(&t, 2, 0, 0.5, &err), FAST_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "server 2 is out of range (2 servers)"));
	CU_ASSERT_EQUAL(fast_topo_set_nic(&t, 0, 8, 0.5, &err), FAST_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "NIC 8 is out of range (8 NICs per server)"));
	CU_ASSERT_EQUAL(fast_topo_set_nic(&t, 0, 1, 2, &err), FAST_EINPUT);
	CU_ASSERT_EQUAL(fast_topo_set_nic(&t, 0, 1, NAN, &err), FAST_EINPUT);
	/* the last one given wins; kept sorted */
	CU_ASSERT_EQUAL(fast_topo_set_nic(&t, 1, 3, 0.5, &err), 0);
	CU_ASSERT_EQUAL(fast_topo_set_nic(&t, 0, 2, 0.25, &err), 0);
	CU_ASSERT_EQUAL(fast_topo_set_nic(&t, 1, 3, 0, &err), 0);
	CU_ASSERT_EQUAL(t.noverrides, 2);
	CU_ASSERT_EQUAL(t.nic_override[0].server, 0);
	CU_ASSERT_EQUAL(fast_topo_nic_fraction(&t, 1, 3), 0.0);
	CU_ASSERT_EQUAL(fast_topo_nic_fraction(&t, 0, 2), 0.25);
	CU_ASSERT_EQUAL(fast_topo_nic_fraction(&t, 0, 3), 1.0);
	CU_ASSERT_DOUBLE_EQUAL(fast_topo_gpu_out_Bps(&t, 11), 0.0, 1e-9);
	CU_ASSERT_EQUAL(fast_topo_validate(&t, NULL, &err), 0);
}

/* An ideal fabric keeps the identity (hash) and the text it had before NICs
 * could differ; K and every override enter both, in a canonical order. */
static void test_topo_nics__identity_and_round_trip(void)
{
	struct fast_topo a, b, c;
	struct fast_err err = { 0 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	uint64_t h0;

	CU_ASSERT_EQUAL_FATAL(fast_topo_preset("mi300x", 2, 4, NULL, &a, &err), 0);
	CU_ASSERT_TRUE(fast_topo_nics_ideal(&a));
	h0 = fast_topo_hash(&a);
	b = a;
	b.nics = 2;
	CU_ASSERT_NOT_EQUAL(fast_topo_hash(&b), h0);
	CU_ASSERT_EQUAL(fast_topo_set_nic(&b, 1, 1, 0.5, &err), 0);
	CU_ASSERT_EQUAL(fast_topo_set_nic(&b, 0, 0, 0, &err), 0);
	c = a;
	c.nics = 2;
	CU_ASSERT_EQUAL(fast_topo_set_nic(&c, 0, 0, 0, &err), 0);
	CU_ASSERT_EQUAL(fast_topo_set_nic(&c, 1, 1, 0.5, &err), 0);
	CU_ASSERT_EQUAL(fast_topo_hash(&b), fast_topo_hash(&c));
	f = open_memstream(&buf, &len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT_EQUAL(fast_topo_write(&b, f, &err), 0);
	fclose(f);
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\"nics_per_server\": 2"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "{\"server\": 0, \"nic\": 0, \"fraction\": 0}"));
	CU_ASSERT_EQUAL_FATAL(parse(buf, &c, &err), 0);
	CU_ASSERT_EQUAL(fast_topo_hash(&c), fast_topo_hash(&b));
	CU_ASSERT_EQUAL(c.noverrides, 2);
	free(buf);
	/* the ideal one writes no override list */
	buf = NULL;
	f = open_memstream(&buf, &len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT_EQUAL(fast_topo_write(&a, f, &err), 0);
	fclose(f);
	CU_ASSERT_PTR_NULL(strstr(buf, "nic_overrides"));
	free(buf);
}

UNIT_MAIN("topo_nics",
	  UNIT_TEST(test_topo_nics__ports_when_gpus_share_a_nic),
	  UNIT_TEST(test_topo_nics__ports_when_a_gpu_drives_several),
	  UNIT_TEST(test_topo_nics__overrides_checked_by_field),
	  UNIT_TEST(test_topo_nics__set_nic_names_what_is_wrong),
	  UNIT_TEST(test_topo_nics__identity_and_round_trip))
