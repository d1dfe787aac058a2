/*
 * nics.c - the simulation seen NIC by NIC.  The engine's scale-out
 * resources are ports (setup.c, topo.h "NICs and ports"): with K <= G NICs
 * a server a port is one NIC; with K > G a port is a GPU's group of NICs,
 * striped, so its bytes split over them in proportion to their rates and
 * each NIC of the group is as busy as the port.  This file turns the
 * per-port figures of a result into per-NIC ones, names ports by their
 * NICs, and picks the busiest NIC.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>

/* The bytes b of port p of server s shared over its NICs by rate: NIC k
 * gets round(b x (rates of NICs before and with k) / port rate) less what
 * the NICs before it got, so the shares add up to b exactly.  A port that
 * is down carried nothing (the engine refuses bytes over it). */
static void split_port(const struct fast_topo *t, uint32_t s, uint32_t p, int dir, uint64_t b,
		       struct fast_sim_nic *nics)
{
	uint32_t k0, k1;
	double total = 0, cum = 0;
	uint64_t given = 0;

	fast_topo_port_nics(t, p, &k0, &k1);
	total = fast_topo_port_nics_up(t, s, p);
	for (uint32_t k = k0; k < k1; k++) {
		uint64_t upto;
		cum += fast_topo_nic_fraction(t, s, k);
		if (k + 1 == k1 || total <= 0.0)
			upto = k + 1 == k1 ? b : 0;
		else
			upto = (uint64_t)((double)b * (cum / total) + 0.5);
		if (upto > b)
			upto = b;
		if (upto < given)
			upto = given;
		nics[(size_t)s * t->nics + k].bytes[dir] = upto - given;
		given = upto;
	}
}

int fast_sim_nics(const struct fast_topo *t, const struct fast_sim_result *r,
		  struct fast_sim_nic **out, uint32_t *n, struct fast_err *err)
{
	uint32_t count = t->servers * t->nics;
	struct fast_sim_nic *nics;

	if (r->ngpus != fast_topo_ngpus(t))
		return fast_err_set(err, FAST_EINPUT,
				    "simulator: the result has %u GPUs, the topology %u", r->ngpus,
				    fast_topo_ngpus(t));
	nics = fast_calloc(count ? count : 1, sizeof *nics);
	if (!nics)
		return fast_err_set(err, FAST_ENOMEM, "simulator: out of memory for %u NICs", count);
	for (uint32_t s = 0; s < t->servers; s++)
		for (uint32_t k = 0; k < t->nics; k++) {
			struct fast_sim_nic *c = &nics[(size_t)s * t->nics + k];
			c->server = s;
			c->nic = k;
			c->rate_Bps = fast_topo_nic_fraction(t, s, k) * fast_tier_Bps(&t->out);
		}
	for (uint32_t i = 0; i < r->nres; i++) {
		const struct fast_sim_res *x = &r->res[i];
		if (x->kind != FAST_RES_NIC_EGRESS && x->kind != FAST_RES_NIC_INGRESS)
			continue;
		split_port(t, x->gpu / t->gpus, x->port, x->kind == FAST_RES_NIC_INGRESS, x->bytes,
			   nics);
	}
	for (uint32_t i = 0; i < count; i++)
		for (int d = 0; d < 2; d++)
			nics[i].util[d] = nics[i].rate_Bps > 0 && r->time_s > 0
						  ? (double)nics[i].bytes[d] / (nics[i].rate_Bps * r->time_s)
						  : 0.0;
	*out = nics;
	*n = count;
	return 0;
}

bool fast_sim_busiest_nic(const struct fast_sim_nic *nics, uint32_t n, uint32_t *i, int *dir)
{
	bool found = false;

	for (uint32_t k = 0; k < n; k++)
		for (int d = 0; d < 2; d++) {
			if (nics[k].bytes[d] == 0)
				continue;
			if (found && !(nics[k].util[d] > nics[*i].util[*dir]))
				continue;
			*i = k;
			*dir = d;
			found = true;
		}
	return found;
}
