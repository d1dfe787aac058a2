/*
 * test_sim_nics.c - the simulator on NICs as they are (topo.h "NICs and
 * ports"), against closed forms: a slow NIC runs its flow at its fraction
 * of the rate; GPUs behind one shared NIC split it; a GPU driving two
 * NICs runs at twice the rate; incast counts per shared ingress; the core
 * is every NIC's rate over the oversubscription; a transfer over a down
 * NIC is refused with a message naming step, transfer, GPUs and NIC,
 * without running; the per-NIC report splits a port's bytes by rate and
 * names the busiest NIC; the trace and SVG have a row per port.
 */
#include <CUnit/Basic.h>

#include "unit.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fast/sim.h"
#include "sim_fix.h"

/* topo_small (sim_fix.h) with K NICs a server. */
static struct fast_topo topo_nics(uint32_t N, uint32_t G, uint32_t K)
{
	struct fast_topo t = topo_small(N, G, FAST_UP_SWITCH);

	t.nics = K;
	return t;
}

/* A plan of one scale-out step of the transfers from[i] -> to[i] of
 * bytes[i]. */
static void one_step(struct fast_plan *p, const struct fast_topo *t, uint32_t n,
		     const uint32_t *from, const uint32_t *to, const uint64_t *bytes)
{
	fast_plan_init(p, t->servers, t->gpus, "test");
	CU_ASSERT_FATAL(fast_plan_add_step(p, FAST_STEP_EXPLICIT, FAST_TIER_OUT, NULL) >= 0);
	for (uint32_t i = 0; i < n; i++) {
		CU_ASSERT_FATAL(fast_plan_add_xfer(p, from[i], to[i], NULL) == 0);
		CU_ASSERT_FATAL(fast_plan_add_piece(p, from[i], to[i], 0, bytes[i], NULL) == 0);
	}
}

/* Simulated time of the one-step plan of n transfers on t. */
static double time_of(const struct fast_topo *t, uint32_t n, const uint32_t *from,
		      const uint32_t *to, const uint64_t *bytes)
{
	struct fast_plan p;
	struct fast_sim_result r;
	double s;

	one_step(&p, t, n, from, to, bytes);
	s = sim_time(t, &p, NULL, &r);
	fast_sim_result_free(&r);
	fast_plan_free(&p);
	return s;
}


/* (a) NIC 3 of server 1 at 25%: GPU 7's flow to server 0 runs at a
 * quarter of the rate; the report names that NIC the busiest. */
static void test_sim_nics__slow_nic(void)
{
	struct fast_topo t = topo_nics(2, 4, 4);
	uint32_t from[] = { 7, 0 }, to[] = { 3, 4 }, n, i;
	uint64_t bytes[] = { 10 * MB, 10 * MB };
	struct fast_sim_nic *nics;
	struct fast_plan p;
	struct fast_sim_result r;
	struct fast_err err;
	int d;

	unit_set_nic(&t, 1, 3, 0.25);
	one_step(&p, &t, 2, from, to, bytes);
	NEAR(sim_time(&t, &p, NULL, &r), OUT_O + OUT_A + 10e6 / (0.25 * OUT_BW));
	CU_ASSERT_FATAL(fast_sim_nics(&t, &r, &nics, &n, &err) == 0);
	CU_ASSERT_EQUAL_FATAL(n, 8);
	CU_ASSERT_EQUAL(nics[7].server, 1);
	CU_ASSERT_EQUAL(nics[7].nic, 3);
	NEAR(nics[7].rate_Bps, 0.25 * OUT_BW);
	CU_ASSERT_EQUAL(nics[7].bytes[0], 10 * MB);
	CU_ASSERT_EQUAL(nics[3].bytes[1], 10 * MB); /* server 0 NIC 3 received it */
	NEAR(nics[7].util[0], 10e6 / (0.25 * OUT_BW * r.time_s));
	CU_ASSERT(fast_sim_busiest_nic(nics, n, &i, &d));
	CU_ASSERT_EQUAL(i, 7);
	CU_ASSERT_EQUAL(d, 0);
	/* GPU 0's flow, at full rate, was less busy */
	CU_ASSERT(nics[0].util[0] < 0.3 * nics[7].util[0]);
	free(nics);
	fast_sim_result_free(&r);
	fast_plan_free(&p);
}

/* (b) K = G/2: GPUs 0 and 1 share NIC 0 of server 0; sending at once
 * they take twice as long as with a NIC each. */
static void test_sim_nics__shared_nic_halves_rate(void)
{
	struct fast_topo ideal = topo_nics(2, 4, 4), half = topo_nics(2, 4, 2);
	uint32_t from[] = { 0, 1 }, to[] = { 4, 6 };
	uint64_t bytes[] = { 10 * MB, 10 * MB };
	double a = time_of(&ideal, 2, from, to, bytes), b = time_of(&half, 2, from, to, bytes);

	NEAR(a, OUT_O + OUT_A + 10e6 / OUT_BW);
	NEAR(b, OUT_O + OUT_A + 2 * 10e6 / OUT_BW);
	NEAR(b - OUT_O - OUT_A, 2 * (a - OUT_O - OUT_A));
	/* GPUs behind different NICs (0 and 2) do not share */
	from[1] = 2;
	NEAR(time_of(&half, 2, from, to, bytes), a);
}

/* (c) K = 2G: a GPU's one flow runs over both its NICs, at twice the
 * rate; with one of them at half rate, at 1.5 times, and the report
 * splits the port's bytes 2:1. */
static void test_sim_nics__two_nics_per_gpu(void)
{
	struct fast_topo t = topo_nics(2, 2, 4);
	uint32_t from[] = { 1 }, to[] = { 2 }, n;
	uint64_t bytes[] = { 30 * MB };
	struct fast_sim_nic *nics;
	struct fast_plan p;
	struct fast_sim_result r;
	struct fast_err err;

	NEAR(time_of(&t, 1, from, to, bytes), OUT_O + OUT_A + 30e6 / (2 * OUT_BW));
	unit_set_nic(&t, 0, 3, 0.5); /* GPU 1 drives NICs 2 and 3 */
	one_step(&p, &t, 1, from, to, bytes);
	NEAR(sim_time(&t, &p, NULL, &r), OUT_O + OUT_A + 30e6 / (1.5 * OUT_BW));
	CU_ASSERT_FATAL(fast_sim_nics(&t, &r, &nics, &n, &err) == 0);
	CU_ASSERT_EQUAL_FATAL(n, 8);
	CU_ASSERT_EQUAL(nics[2].bytes[0], 20 * MB);
	CU_ASSERT_EQUAL(nics[3].bytes[0], 10 * MB);
	NEAR(nics[2].util[0], nics[3].util[0]); /* both as busy as the port */
	CU_ASSERT_EQUAL(nics[4].bytes[1] + nics[5].bytes[1], 30 * MB); /* server 1, GPU 0 */
	CU_ASSERT_EQUAL(nics[4].bytes[1], 15 * MB);
	free(nics);
	fast_sim_result_free(&r);
	fast_plan_free(&p);
}

/* Incast counts per ingress port: with K = G/2 two senders into GPUs 4
 * and 5 (both behind server 1's NIC 0) are two flows on one ingress. */
static void test_sim_nics__incast_per_shared_ingress(void)
{
	struct fast_topo t = topo_nics(3, 4, 2);
	uint32_t from[] = { 0, 8 }, to[] = { 4, 5 };
	uint64_t bytes[] = { 10 * MB, 10 * MB };

	t.congestion = (struct fast_congestion){ 1.0, 0.25, 0.1 }; /* 2 senders: 0.75 */
	NEAR(time_of(&t, 2, from, to, bytes), OUT_O + OUT_A + 2 * 10e6 / (0.75 * OUT_BW));
	t.nics = 4; /* a NIC each: one sender per ingress, no loss */
	NEAR(time_of(&t, 2, from, to, bytes), OUT_O + OUT_A + 10e6 / OUT_BW);
}

/* The oversubscribed core carries every NIC's rate over oversub. */
static void test_sim_nics__core_from_nic_rates(void)
{
	struct fast_topo t = topo_nics(2, 2, 2);
	uint32_t from[] = { 0 }, to[] = { 2 };
	uint64_t bytes[] = { 10 * MB };
	struct fast_plan p;
	struct fast_sim_result r;
	bool seen = false;

	t.core_oversub = 4.0;
	unit_set_nic(&t, 1, 1, 0.5);
	one_step(&p, &t, 1, from, to, bytes);
	sim_time(&t, &p, NULL, &r);
	for (uint32_t i = 0; i < r.nres; i++)
		if (r.res[i].kind == FAST_RES_CORE) {
			NEAR(r.res[i].cap_Bps, 3.5 * OUT_BW / 4.0);
			seen = true;
		}
	CU_ASSERT(seen);
	NEAR(r.time_s, OUT_O + OUT_A + 10e6 / (3.5 * OUT_BW / 4.0));
	fast_sim_result_free(&r);
	fast_plan_free(&p);
}

/* core_sharing demand (topo.h): 2 x 2 GPUs, NIC 1 of server 1 at 25%,
 * GPU 0 -> 2 (healthy NICs, offers 10 GB/s) and GPU 1 -> 3 (into the
 * slow NIC, offers 2.5), 10 MB each, core (1 + 1 + 1 + 0.25) x 10 / 3.25
 * = 10 GB/s.  Max-min: the slow flow is below its fair share (5) and keeps
 * 2.5, so it ends at 10 MB / 2.5 GB/s = 4 ms.  Demand: 12.5 GB/s offered,
 * each flow at 10 / 12.5 = 0.8 of its offer, 8 and 2 GB/s; the healthy one
 * ends at 1.25 ms, the slow one has 10 - 2 x 1.25 = 7.5 MB left, alone
 * at 2.5 GB/s (2.5 < 10: the core no longer binds): 3 ms more, 4.25 ms.
 * Equal offers (both NICs healthy, the same core) share alike: 2 ms each
 * either way; and without oversubscription demand is max-min. */
static void test_sim_nics__core_shared_by_demand(void)
{
	struct fast_topo t = topo_nics(2, 2, 2);
	uint32_t from[] = { 0, 1 }, to[] = { 2, 3 };
	uint64_t bytes[] = { 10 * MB, 10 * MB };

	t.core_oversub = 3.25;
	unit_set_nic(&t, 1, 1, 0.25);
	NEAR(time_of(&t, 2, from, to, bytes), OUT_O + OUT_A + 4e-3);
	t.core_sharing = FAST_CORE_DEMAND;
	NEAR(time_of(&t, 2, from, to, bytes), OUT_O + OUT_A + 1.25e-3 + 3e-3);

	unit_set_nic(&t, 1, 1, 1.0);
	t.core_oversub = 4.0; /* 40 / 4 = 10 GB/s, 5 each */
	NEAR(time_of(&t, 2, from, to, bytes), OUT_O + OUT_A + 2e-3);
	t.core_sharing = FAST_CORE_MAXMIN;
	NEAR(time_of(&t, 2, from, to, bytes), OUT_O + OUT_A + 2e-3);

	t.core_oversub = 1.0;
	unit_set_nic(&t, 1, 1, 0.25);
	t.core_sharing = FAST_CORE_DEMAND;
	NEAR(time_of(&t, 2, from, to, bytes), OUT_O + OUT_A + 4e-3);
}

/* Demand sharing touches only flows through the core: a server-local
 * scale-up flow beside the two above runs at its port's 100 GB/s (10 MB:
 * 0.1 ms after the scale-up tier's 1 us alpha and 3 us overhead) in a step
 * of its own, and the scale-out step ends as without it.  The scalable
 * mode (epsilon > 0) runs a demand-shared core exactly, as sim.h says. */
static void test_sim_nics__demand_leaves_other_flows(void)
{
	struct fast_topo t = topo_nics(2, 2, 2);
	struct fast_plan p;
	struct fast_sim_result r;
	struct fast_sim_opts o;
	uint32_t from[] = { 0, 1 }, to[] = { 2, 3 };
	uint64_t bytes[] = { 10 * MB, 10 * MB };

	t.core_oversub = 3.25;
	unit_set_nic(&t, 1, 1, 0.25);
	t.core_sharing = FAST_CORE_DEMAND;
	one_step(&p, &t, 2, from, to, bytes);
	CU_ASSERT_FATAL(fast_plan_add_step(&p, FAST_STEP_EXPLICIT, FAST_TIER_UP, NULL) >= 0);
	CU_ASSERT_FATAL(fast_plan_add_xfer(&p, 2, 3, NULL) == 0);
	CU_ASSERT_FATAL(fast_plan_add_piece(&p, 2, 3, 0, 10 * MB, NULL) == 0);
	sim_time(&t, &p, NULL, &r);
	NEAR(r.steps[0].end_s, OUT_O + OUT_A + 1.25e-3 + 3e-3);
	NEAR(r.steps[1].end_s, 3e-6 + 1e-6 + 10e6 / 100e9);
	fast_sim_result_free(&r);
	fast_sim_opts_default(&o);
	o.epsilon = 0.05;
	sim_time(&t, &p, &o, &r);
	NEAR(r.steps[0].end_s, OUT_O + OUT_A + 1.25e-3 + 3e-3);
	fast_sim_result_free(&r);
	fast_plan_free(&p);
}

/* sim_run's message for a plan over down NICs, or "" when it runs. */
static const char *down_msg(const struct fast_topo *t, uint32_t n, const uint32_t *from,
			    const uint32_t *to, const uint64_t *bytes, struct fast_err *err)
{
	struct fast_plan p;
	struct fast_sim_result r;
	int rc;

	one_step(&p, t, n, from, to, bytes);
	memset(err, 0, sizeof *err);
	rc = unit_sim(t, &p, NULL, NULL, &r, err);
	fast_plan_free(&p);
	if (rc == 0) {
		fast_sim_result_free(&r);
		return "";
	}
	CU_ASSERT_EQUAL(rc, FAST_EINPUT);
	return err->msg;
}

/* (d) A transfer with bytes over a down NIC is bad input naming the step,
 * the transfer, its GPUs and the NICs (found before anything runs: no
 * hang); the plan without it runs. */
static void test_sim_nics__down_nic_refused(void)
{
	struct fast_topo t = topo_nics(2, 4, 4);
	uint32_t from[] = { 0, 7 }, to[] = { 4, 3 };
	uint64_t bytes[] = { MB, MB };
	struct fast_err err;

	unit_set_nic(&t, 1, 3, 0.0);
	CU_ASSERT_STRING_EQUAL(down_msg(&t, 2, from, to, bytes, &err),
			       "plan: step 0 transfer 1: GPU 7 -> GPU 3 crosses server 1 NIC 3, "
			       "which is down");
	from[1] = 6; /* GPUs 6 and 2: NIC 2 of each server */
	to[1] = 2;
	CU_ASSERT_STRING_EQUAL(down_msg(&t, 2, from, to, bytes, &err), "");
	/* both ends down */
	unit_set_nic(&t, 0, 1, 0.0);
	from[1] = 1;
	to[1] = 7;
	CU_ASSERT_STRING_EQUAL(down_msg(&t, 2, from, to, bytes, &err),
			       "plan: step 0 transfer 1: GPU 1 -> GPU 7 crosses server 0 NIC 1 and "
			       "server 1 NIC 3, which are down");
	/* a GPU's two NICs (K = 2G) down together; one of them alone only slows it */
	t = topo_nics(2, 2, 4);
	unit_set_nic(&t, 1, 2, 0.0);
	from[0] = 0;
	to[0] = 3;
	CU_ASSERT_STRING_EQUAL(down_msg(&t, 1, from, to, bytes, &err), "");
	unit_set_nic(&t, 1, 3, 0.0);
	CU_ASSERT_STRING_EQUAL(down_msg(&t, 1, from, to, bytes, &err),
			       "plan: step 0 transfer 0: GPU 0 -> GPU 3 crosses server 1 NICs 2-3, "
			       "which are down");
}

/* (e) NICs at the nominal rate, one per GPU, overridden to 1 or not: the
 * same times and resources as the default topology. */
static void test_sim_nics__ideal_unchanged(void)
{
	struct fast_topo a = topo_nics(2, 4, 4), b = topo_nics(2, 4, 4);
	uint32_t from[] = { 0, 1, 5, 2 }, to[] = { 4, 4, 2, 7 };
	uint64_t bytes[] = { 3 * MB, 5 * MB, 7 * MB, 1 };

	unit_set_nic(&b, 1, 0, 1.0);
	CU_ASSERT(fast_topo_nics_ideal(&b));
	CU_ASSERT_EQUAL(time_of(&a, 4, from, to, bytes), time_of(&b, 4, from, to, bytes));
}

/* Resource names, the trace and the SVG with K != G: a row and a thread
 * per port, named by its NICs. */
static void test_sim_nics__timeline_rows_per_port(void)
{
	static const struct {
		uint32_t K;
		const char *row, *thread;
	} cases[] = {
		{ 2, ">server 1 NIC 1<", "\"NIC 1 egress\"" },
		{ 8, ">server 1 NICs 6-7<", "\"NICs 6-7 ingress\"" },
	};

	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		struct fast_topo t = topo_nics(2, 4, cases[c].K);
		uint32_t from[] = { 0, 7, 3 }, to[] = { 7, 0, 4 };
		uint64_t bytes[] = { MB, MB, MB };
		struct fast_sim_opts o;
		struct fast_sim_result r;
		struct fast_plan p;
		char *buf = NULL, name[48];
		size_t len = 0;
		FILE *f;

		fast_plan_init(&p, 2, 4, "test");
		for (uint32_t i = 0; i < 3; i++) { /* three independent steps: they overlap */
			CU_ASSERT_FATAL(fast_plan_add_step(&p, FAST_STEP_EXPLICIT, FAST_TIER_OUT, NULL) >= 0);
			CU_ASSERT_FATAL(fast_plan_add_xfer(&p, from[i], to[i], NULL) == 0);
			CU_ASSERT_FATAL(fast_plan_add_piece(&p, from[i], to[i], 0, bytes[i], NULL) == 0);
		}
		fast_sim_opts_default(&o);
		o.timeline = true;
		sim_time(&t, &p, &o, &r);
		f = open_memstream(&buf, &len);
		CU_ASSERT_FATAL(f != NULL);
		CU_ASSERT(fast_sim_write_svg(&t, &r, "t", f, NULL) == 0);
		CU_ASSERT(fast_sim_write_trace(&t, &r, f, NULL) == 0);
		fclose(f);
		CU_ASSERT(strstr(buf, cases[c].row) != NULL);
		CU_ASSERT(strstr(buf, cases[c].thread) != NULL);
		free(buf);
		for (uint32_t i = 0; i < r.nres; i++)
			if (r.res[i].kind == FAST_RES_NIC_EGRESS && r.res[i].gpu == 4)
				CU_ASSERT_STRING_EQUAL(fast_sim_res_name(&t, &r.res[i], name, sizeof name),
						       cases[c].K == 2 ? "server 1 NIC 0 out"
								       : "server 1 NICs 0-1 out");
		fast_sim_result_free(&r);
		fast_plan_free(&p);
	}
}

UNIT_MAIN("sim_nics",
	  UNIT_TEST(test_sim_nics__slow_nic),
	  UNIT_TEST(test_sim_nics__shared_nic_halves_rate),
	  UNIT_TEST(test_sim_nics__two_nics_per_gpu),
	  UNIT_TEST(test_sim_nics__incast_per_shared_ingress),
	  UNIT_TEST(test_sim_nics__core_from_nic_rates),
	  UNIT_TEST(test_sim_nics__core_shared_by_demand),
	  UNIT_TEST(test_sim_nics__demand_leaves_other_flows),
	  UNIT_TEST(test_sim_nics__down_nic_refused),
	  UNIT_TEST(test_sim_nics__ideal_unchanged),
	  UNIT_TEST(test_sim_nics__timeline_rows_per_port))
