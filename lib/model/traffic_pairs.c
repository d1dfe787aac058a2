/*
 * traffic_pairs.c - the compute side of a MoE layer's traffic: per matrix,
 * the (token, expert) pairs each GPU computes (struct fast_matrix's
 * compute_pairs, traffic file version 4), read, written and summarised as
 * the compute imbalance (max over GPUs / mean), the figure expert-parallel
 * load balancers such as DeepSeek's EPLB minimise.  The bytes say how
 * unevenly GPUs communicate; these say how unevenly they compute.
 */
#include "lib/model/traffic_internal.h"

#include <stdlib.h>

#include "lib/base/json.h"

bool fast_traffic_has_pairs(const struct fast_traffic *t)
{
	for (uint32_t k = 0; k < t->count; k++)
		if (t->m[k].compute_pairs)
			return true;
	return false;
}

double fast_matrix_compute_imbalance(const struct fast_matrix *m, uint64_t *max, double *mean)
{
	uint32_t ng = m->ng;
	uint64_t hi = 0;
	double sum = 0, avg;

	for (uint32_t g = 0; g < ng; g++) {
		sum += (double)m->compute_pairs[g];
		if (m->compute_pairs[g] > hi)
			hi = m->compute_pairs[g];
	}
	avg = ng ? sum / ng : 0;
	if (max)
		*max = hi;
	if (mean)
		*mean = avg;
	return avg > 0 ? (double)hi / avg : 1.0;
}

void fast_traffic_write_pairs(const struct fast_matrix *m, uint32_t ng, FILE *f)
{
	if (!m->compute_pairs)
		return;
	fputs(",\n      \"compute_pairs\": [", f);
	for (uint32_t g = 0; g < ng; g++)
		fprintf(f, g ? ", %llu" : "%llu", (unsigned long long)m->compute_pairs[g]);
	fputc(']', f);
}

int fast_traffic_read_pairs(struct fast_jctx *c, const struct fast_jv *m, uint64_t version,
			    uint32_t ng, struct fast_matrix *out)
{
	const struct fast_jv *a = fast_jv_get(m, "compute_pairs"), *v;
	size_t old;
	uint64_t *p;
	uint32_t g = 0;
	int rc;

	if (!a)
		return 0;
	old = fast_jctx_push_key(c, "compute_pairs");
	if (version < 4)
		return fast_jctx_fail(c, FAST_EINPUT, "needs version 4 (the file says %llu)",
				      (unsigned long long)version);
	if ((rc = fast_jv_expect_array(c, a)) < 0)
		return rc;
	if (fast_jv_size(a) != ng)
		return fast_jctx_fail(c, FAST_EINPUT, "%zu entries, but %u GPUs",
				      fast_jv_size(a), ng);
	if (!(p = fast_calloc(ng, sizeof *p)))
		return fast_jctx_fail(c, FAST_ENOMEM, "out of memory");
	for (v = fast_jv_first(a); v; v = fast_jv_next(v), g++) {
		size_t o2 = fast_jctx_push_index(c, g);
		if ((rc = fast_jv_as_u64(c, v, FAST_JSON_MAX_BYTES, &p[g])) < 0) {
			free(p);
			return rc;
		}
		fast_jctx_pop(c, o2);
	}
	fast_jctx_pop(c, old);
	free(out->compute_pairs);
	out->compute_pairs = p;
	return 0;
}
