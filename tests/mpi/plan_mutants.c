/*
 * plan_mutants.c - write checker-accepted mutated plans (tests/mpi/mutate.h)
 * as one multi-matrix plan file and the matching traffic, for the MPI
 * stage's property test: `fast run --plan PLANS --traffic TRAFFIC -c 1`
 * must replay every one with zero wrong bytes and no refusal.
 *
 *   plan_mutants SERVERS GPUS COUNT SEED PLANS.json TRAFFIC.json
 *
 * Plans come in turn from fast, pxn, hier, nccl, fanout and spreadout on
 * random matrices (small messages, a quarter of the pairs above 32 KiB so
 * that large fragments travel on their own); a mutant the checker refuses
 * is dropped and another drawn.  Prints "COUNT mutants (TRIED tried, DUPS
 * with duplicate forwards)"; exit 1 when COUNT could not be reached.
 */
#include <stdio.h>
#include <stdlib.h>

#include "fast/topo.h"
#include "fast/traffic.h"
#include "tests/mpi/mutate.h"

static int write_file(const char *path, const struct fast_planset *ps, const struct fast_traffic *t)
{
	FILE *f = fopen(path, "w");
	struct fast_err err;
	int rc;

	if (!f) {
		perror(path);
		return -1;
	}
	rc = ps ? fast_planset_write(ps, f, &err) : fast_traffic_write(t, false, f, &err);
	if (fclose(f) != 0 || rc < 0) {
		fprintf(stderr, "plan_mutants: %s: %s\n", path, rc < 0 ? err.msg : "write failed");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *algos[] = { "fast", "pxn", "hier", "nccl", "fanout", "spreadout" };
	struct fast_topo topo;
	struct fast_limits lim;
	struct fast_err err;
	struct fast_traffic t;
	struct fast_planset ps = { 0, NULL };
	struct fast_rng rng;
	uint32_t n, g, ng, count, got = 0, tried = 0, dups_total = 0;
	int st = 1;

	if (argc != 7) {
		fprintf(stderr, "usage: plan_mutants SERVERS GPUS COUNT SEED PLANS.json TRAFFIC.json\n");
		return 2;
	}
	n = (uint32_t)atoi(argv[1]);
	g = (uint32_t)atoi(argv[2]);
	count = (uint32_t)atoi(argv[3]);
	ng = n * g;
	fast_rng_seed(&rng, strtoull(argv[4], NULL, 10));
	fast_limits_default(&lim);
	if (fast_topo_preset("h200", n, g, &lim, &topo, &err) < 0 ||
	    fast_traffic_alloc(&t, ng, count, &lim, &err) < 0) {
		fprintf(stderr, "plan_mutants: %s\n", err.msg);
		return 2;
	}
	ps.plans = calloc(count ? count : 1, sizeof *ps.plans);
	if (!ps.plans)
		goto out;
	while (got < count && tried < 20 * count) {
		uint64_t *D = t.m[got].bytes;
		uint32_t dups = 0;
		int rc;
		for (size_t i = 0; i < (size_t)ng * ng; i++)
			D[i] = fast_rng_below(&rng, 2000) + (fast_rng_below(&rng, 4) == 0 ? 33000 : 0);
		rc = mut_one(algos[tried % 6], &topo, D, &rng, &ps.plans[got], &dups, &err);
		tried++;
		if (rc < 0) {
			fprintf(stderr, "plan_mutants: %s\n", err.msg);
			goto out;
		}
		if (rc == 0)
			continue;
		ps.plans[got].matrix = got;
		snprintf(ps.plans[got].label, sizeof ps.plans[got].label, "mutant%u-%s", got,
			 ps.plans[got].algo);
		snprintf(t.m[got].label, sizeof t.m[got].label, "%s", ps.plans[got].label);
		dups_total += dups > 0;
		got++;
		ps.count = got;
	}
	if (got < count) {
		fprintf(stderr, "plan_mutants: only %u of %u mutants in %u tries\n", got, count, tried);
		goto out;
	}
	if (write_file(argv[5], &ps, NULL) < 0 || write_file(argv[6], NULL, &t) < 0)
		goto out;
	printf("%u mutants (%u tried, %u with duplicate forwards)\n", got, tried, dups_total);
	st = 0;
out:
	fast_planset_free(&ps);
	fast_traffic_free(&t);
	return st;
}
