/*
 * test_relay.c - the baselines around a NIC that is down (lib/compile/relay.c):
 * the proxies (deterministic, spread over ports, a GPU with an up port its
 * own), and every baseline's plans on seeded random fabrics (K = G / 2, G
 * and 2 G NICs a server, slow and failed NICs), byte and token traffic:
 * each passes fast_plan_check (every byte delivered once, nothing sent that
 * is not held), no scale-out transfer starts or ends at a GPU whose port
 * is down, the simulator runs it (it refuses bytes over a down port), and
 * on a fabric with no NIC down the plan is the one compiled for the ideal
 * fabric.
 */
#include <CUnit/Basic.h>

#include "unit.h"
#include <stdlib.h>
#include <string.h>

#include "fast/algo.h"
#include "fast/check.h"
#include "fast/plan.h"
#include "lib/compile/relay.h"
#include "tok.h"

static const char *const baselines[] = { "fanout", "nccl", "pxn", "spreadout", "hier" };
#define NBASE (sizeof baselines / sizeof baselines[0])

static struct fast_topo mk_topo(uint32_t N, uint32_t G)
{
	struct fast_topo t = unit_topo(N, G, FAST_UP_SWITCH, (struct fast_tier){ 450, 1, 1.0, 0 },
				       (struct fast_tier){ 50, 2, 1.0, 0 });

	t.congestion.incast_floor = 1; /* no incast: a topology that validates */
	return t;
}

static bool cut_off(const struct fast_topo *t, uint32_t g)
{
	return fast_topo_port_Bps(t, g / t->gpus, fast_topo_port_of(t, g % t->gpus)) <= 0.0;
}

/* A random fabric of N x G: K = G / 2, G or 2 G NICs a server, each NIC
 * down with chance 1/4 and at half rate with chance 1/4, every server
 * left with one NIC up.  *down: some GPU is cut off. */
static struct fast_topo random_fabric(uint32_t N, uint32_t G, struct fast_rng *rng, bool *down)
{
	struct fast_topo t = mk_topo(N, G);
	struct fast_err err;
	uint32_t pick = (uint32_t)fast_rng_below(rng, 3);

	t.nics = pick == 0 ? (G / 2 ? G / 2 : 1) : pick == 1 ? G : 2 * G;
	*down = false;
	for (uint32_t s = 0; s < N; s++) {
		for (uint32_t k = 0; k < t.nics; k++) {
			uint64_t r = fast_rng_below(rng, 4);
			if (r < 2)
				unit_set_nic(&t, s, k, r == 0 ? 0.0 : 0.5);
		}
		if (fast_topo_server_out_Bps(&t, s) <= 0.0)
			unit_set_nic(&t, s, (uint32_t)fast_rng_below(rng, t.nics), 1.0);
	}
	if (fast_topo_validate(&t, NULL, &err) != 0) {
		fprintf(stderr, "\n%s\n", err.msg);
		CU_FAIL("random_fabric: the topology does not validate");
	}
	for (uint32_t g = 0; g < N * G; g++)
		*down = *down || cut_off(&t, g);
	return t;
}

/* Scale-out transfers with an end at a cut-off GPU (0 for a good plan). */
static unsigned crossings_at_down_ports(const struct fast_plan *p, const struct fast_topo *t)
{
	unsigned bad = 0;

	for (size_t s = 0; s < p->nsteps; s++) {
		const struct fast_step *st = &p->steps[s];
		for (uint32_t i = 0; st->tier == FAST_TIER_OUT && i < st->nxfers; i++) {
			const struct fast_xfer *x = &p->xfers[st->xfer0 + i];
			bad += cut_off(t, x->from) || cut_off(t, x->to);
		}
	}
	return bad;
}

/* The simulator runs the plan (it refuses bytes over a down port, an
 * independent rule of its own) and takes at least the ideal fabric's
 * plan's time where a NIC is slow or down. */
static void simulates(const struct fast_plan *p, const struct fast_topo *t, const uint64_t *D,
		      double *time_s)
{
	struct fast_matrix m = fast_matrix_of(D, t->servers * t->gpus);
	struct fast_sim_result r;
	struct fast_sim_opts so;
	struct fast_err err;

	fast_sim_opts_default(&so);
	*time_s = 0;
	if (unit_sim(t, p, &m, &so, &r, &err) != 0) {
		fprintf(stderr, "\n%s: %s\n", p->algo, err.msg);
		CU_FAIL("the simulator refuses a relayed plan");
		return;
	}
	*time_s = r.time_s;
	fast_sim_result_free(&r);
}

/* Bytes sent over scale-up: what the relay adds. */
static uint64_t up_bytes(const struct fast_plan *p)
{
	uint64_t b = 0;

	for (size_t s = 0; s < p->nsteps; s++)
		for (uint32_t i = 0; p->steps[s].tier == FAST_TIER_UP && i < p->steps[s].nxfers; i++)
			b += p->xfers[p->steps[s].xfer0 + i].bytes;
	return b;
}

static uint64_t *random_matrix(uint32_t ng, struct fast_rng *rng)
{
	uint64_t *D = calloc((size_t)ng * ng, sizeof *D);

	CU_ASSERT_PTR_NOT_NULL_FATAL(D);
	for (size_t i = 0; i < (size_t)ng * ng; i++)
		D[i] = fast_rng_below(rng, 4) == 0 ? 0 : 1 + fast_rng_below(rng, UINT64_C(1) << 20);
	return D;
}

static void test_relay__proxies_next_up_gpu_spread_over_ports(void)
{
	struct fast_topo t = mk_topo(2, 4);
	uint32_t px[16];
	struct fast_err err;

	CU_ASSERT_EQUAL(fast_relay_proxies(&t, px, &err), 0); /* ideal: every GPU its own */
	for (uint32_t g = 0; g < 8; g++)
		CU_ASSERT_EQUAL(px[g], g);
	/* one NIC per GPU, NICs 1 and 2 of server 1 down: 5 -> 7 (the next up
	 * GPU), 6 -> 4 (7 is taken once already) */
	unit_set_nic(&t, 1, 1, 0.0);
	unit_set_nic(&t, 1, 2, 0.0);
	unit_set_nic(&t, 0, 3, 0.5); /* slow, not down: its own proxy */
	CU_ASSERT_EQUAL(fast_relay_proxies(&t, px, &err), 2);
	CU_ASSERT_EQUAL(px[5], 7);
	CU_ASSERT_EQUAL(px[6], 4);
	CU_ASSERT_EQUAL(px[3], 3);
	/* 8 GPUs on 4 NICs, NIC 1 down: GPUs 2 and 3 go to the first GPUs
	 * behind NICs 2 and 3 (4 and 6), not both behind one */
	t = mk_topo(1, 8);
	t.nics = 4;
	unit_set_nic(&t, 0, 1, 0.0);
	CU_ASSERT_EQUAL(fast_relay_proxies(&t, px, &err), 2);
	CU_ASSERT_EQUAL(px[2], 4);
	CU_ASSERT_EQUAL(px[3], 6);
	/* two NICs per GPU: one down slows the port, both down cut it off */
	t = mk_topo(1, 4);
	t.nics = 8;
	unit_set_nic(&t, 0, 2, 0.0);
	CU_ASSERT_EQUAL(fast_relay_proxies(&t, px, &err), 0);
	unit_set_nic(&t, 0, 3, 0.0);
	CU_ASSERT_EQUAL(fast_relay_proxies(&t, px, &err), 1);
	CU_ASSERT_EQUAL(px[1], 2);
}

/* fanout on 2 x 2 with GPU 1's NIC down: GPU 1's 1 MiB to GPU 3 hops
 * to GPU 0 over scale-up, then crosses from GPU 0 in a step pipelined on
 * the hop, in 128 KiB chunks; GPU 2's message to GPU 1 lands on GPU 0
 * and hops on to 1. */
static void test_relay__hops_pipelined_in_chunks(void)
{
	struct fast_topo t = mk_topo(2, 2);
	uint64_t D[16] = { 0 };
	struct fast_matrix m = fast_matrix_of(D, 4);
	struct fast_plan p;
	struct fast_err err;
	int first = -1, cross = -1, last = -1;

	D[1 * 4 + 3] = UINT64_C(1) << 20;
	D[2 * 4 + 1] = 1000;
	unit_set_nic(&t, 0, 1, 0.0);
	CU_ASSERT_EQUAL_FATAL(fast_compile("fanout", &t, &m, NULL, &p, &err), 0);
	for (size_t s = 0; s < p.nsteps; s++)
		for (uint32_t i = 0; i < p.steps[s].nxfers; i++) {
			const struct fast_xfer *x = &p.xfers[p.steps[s].xfer0 + i];
			if (x->from == 1 && x->to == 0)
				first = (int)s;
			if (x->from == 0 && x->to == 3)
				cross = (int)s;
			if (x->from == 0 && x->to == 1)
				last = (int)s;
		}
	CU_ASSERT_FATAL(first >= 0 && cross >= 0 && last >= 0);
	CU_ASSERT_EQUAL(p.steps[first].tier, FAST_TIER_UP);
	CU_ASSERT_EQUAL(p.steps[cross].tier, FAST_TIER_OUT);
	CU_ASSERT_EQUAL(p.steps[last].tier, FAST_TIER_UP);
	CU_ASSERT_EQUAL(p.steps[cross].chunks, 8);
	CU_ASSERT_EQUAL(p.steps[first].chunks, 8);
	CU_ASSERT_EQUAL(p.steps[cross].ndeps, 1);
	CU_ASSERT_EQUAL(p.deps[p.steps[cross].dep0].step, (uint32_t)first);
	CU_ASSERT_EQUAL(p.deps[p.steps[cross].dep0].pipelined, 1);
	CU_ASSERT_EQUAL(crossings_at_down_ports(&p, &t), 0);
	CU_ASSERT_EQUAL(unit_check(&p, &t, D, &err), 0);
	fast_plan_free(&p);
}

/* Every baseline on random fabrics and matrices: checked, no scale-out
 * at a cut-off GPU, simulated (hardly ever faster than on the ideal
 * fabric), relayed bytes over scale-up where a GPU is cut off, and the
 * ideal fabric's very plan where none is. */
static void test_relay__baselines_on_random_fabrics(void)
{
	static const uint32_t shapes[][2] = { { 2, 2 }, { 2, 4 }, { 3, 4 }, { 4, 2 }, { 2, 8 }, { 3, 3 } };
	struct fast_rng rng;
	unsigned relayed = 0, more_up = 0, same = 0, slower = 0;

	fast_rng_seed(&rng, 25);
	for (size_t z = 0; z < sizeof shapes / sizeof shapes[0]; z++)
		for (int rep = 0; rep < 4; rep++) {
			uint32_t N = shapes[z][0], G = shapes[z][1];
			bool down;
			struct fast_topo t = random_fabric(N, G, &rng, &down), ideal = mk_topo(N, G);
			uint64_t *D = random_matrix(N * G, &rng);
			struct fast_matrix m = fast_matrix_of(D, N * G);
			for (size_t a = 0; a < NBASE; a++) {
				struct fast_plan p, q;
				struct fast_err err;
				double tp, tq;
				CU_ASSERT_EQUAL_FATAL(fast_compile(baselines[a], &t, &m, NULL, &p, &err), 0);
				CU_ASSERT_EQUAL_FATAL(fast_compile(baselines[a], &ideal, &m, NULL, &q, &err), 0);
				if (unit_check(&p, &t, D, &err) != 0) {
					fprintf(stderr, "\n%s on %u x %u: %s\n", baselines[a], N, G, err.msg);
					CU_FAIL("a relayed plan fails the check");
				}
				CU_ASSERT_EQUAL(crossings_at_down_ports(&p, &t), 0);
				simulates(&p, &t, D, &tp);
				simulates(&q, &ideal, D, &tq);
				CU_ASSERT(tp > 0 && tq > 0);
				slower += tp >= tq * (1 - 1e-9);
				if (down) {
					CU_ASSERT(up_bytes(&p) >= up_bytes(&q));
					more_up += up_bytes(&p) > up_bytes(&q);
					relayed++;
				} else {
					CU_ASSERT_EQUAL(fast_plan_hash(&p), fast_plan_hash(&q));
					same++;
				}
				fast_plan_free(&p);
				fast_plan_free(&q);
			}
			free(D);
		}
	CU_ASSERT(relayed >= 10 * NBASE);
	CU_ASSERT(more_up * 10 >= relayed * 9);
	CU_ASSERT(same > 0);
	CU_ASSERT(slower * 10 >= (relayed + same) * 9); /* incast can make a slow NIC help */
}

/* hier's token plans (dispatch and combine, a token crossing to a server
 * once) and fanout's byte plans of token traffic on random fabrics:
 * checked against the groups, no scale-out at a cut-off GPU. */
static void test_relay__token_plans_on_random_fabrics(void)
{
	static const enum fast_traffic_kind kinds[] = { FAST_TRAFFIC_DISPATCH, FAST_TRAFFIC_COMBINE };
	static const char *const algos[] = { "hier", "fanout" };
	struct fast_rng rng;
	unsigned relayed = 0;

	fast_rng_seed(&rng, 370);
	for (int rep = 0; rep < 12; rep++)
		for (int k = 0; k < 2; k++) {
			uint32_t N = 2 + rep % 2, G = 2 + 2 * (rep % 3 != 0);
			bool down;
			struct fast_topo t = random_fabric(N, G, &rng, &down);
			struct fast_traffic tr;
			tok_init(&tr, N * G, kinds[k], 64);
			tok_random_groups(&tr, &rng, 6 * N * G, 4, G, 300);
			tok_done(&tr);
			for (size_t a = 0; a < 2; a++) {
				struct fast_plan p;
				struct fast_err err;
				CU_ASSERT_EQUAL_FATAL(fast_compile(algos[a], &t, &tr.m[0], NULL, &p, &err), 0);
				if (unit_check_matrix(&p, &t, &tr.m[0], &err) != 0) {
					fprintf(stderr, "\n%s on %u x %u: %s\n", algos[a], N, G, err.msg);
					CU_FAIL("a relayed token plan fails the check");
				}
				CU_ASSERT_EQUAL(crossings_at_down_ports(&p, &t), 0);
				relayed += down;
				fast_plan_free(&p);
			}
			fast_traffic_free(&tr);
		}
	CU_ASSERT(relayed >= 12);
}

/* A compact plan (FAST's rail stages) is not the relay's to rewrite. */
static void test_relay__compact_plan_refused(void)
{
	struct fast_topo t = mk_topo(2, 2);
	uint64_t D[16];
	struct fast_matrix m;
	struct fast_plan p;
	struct fast_err err;

	for (int i = 0; i < 16; i++)
		D[i] = i % 5 ? 1000 : 0;
	m = fast_matrix_of(D, 4);
	CU_ASSERT_EQUAL_FATAL(fast_compile("fast", &t, &m, NULL, &p, &err), 0);
	unit_set_nic(&t, 0, 1, 0.0);
	CU_ASSERT(fast_plan_is_compact(&p));
	CU_ASSERT_EQUAL(fast_relay_plan(&t, &p, &err), FAST_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "compact"));
	fast_plan_free(&p);
}

UNIT_MAIN("relay",
	  UNIT_TEST(test_relay__proxies_next_up_gpu_spread_over_ports),
	  UNIT_TEST(test_relay__hops_pipelined_in_chunks),
	  UNIT_TEST(test_relay__baselines_on_random_fabrics),
	  UNIT_TEST(test_relay__token_plans_on_random_fabrics),
	  UNIT_TEST(test_relay__compact_plan_refused))
