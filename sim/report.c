/*
 * report.c - what the simulator reports beyond step times: resource names,
 * the bytes per GPU behind the algbw figure, the optional per-resource
 * timeline of activity, and freeing a result.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *fast_sim_res_name(const struct fast_topo *topo, const struct fast_sim_res *r,
			      char *buf, size_t len)
{
	uint32_t G = topo->gpus ? topo->gpus : 1;
	uint32_t s = r->gpu / G, i = r->gpu % G;
	bool nic = r->kind == FAST_RES_NIC_EGRESS || r->kind == FAST_RES_NIC_INGRESS;

	if (nic && !fast_topo_nics_ideal(topo)) {
		char nics[32];
		fast_topo_port_name(topo, r->port, nics, sizeof nics);
		snprintf(buf, len, "server %u %s %s", s, nics,
			 r->kind == FAST_RES_NIC_EGRESS ? "out" : "in");
		return buf;
	}
	switch (r->kind) {
	case FAST_RES_UP_EGRESS:
		snprintf(buf, len, "s%u up%u out", s, i);
		break;
	case FAST_RES_UP_INGRESS:
		snprintf(buf, len, "s%u up%u in", s, i);
		break;
	case FAST_RES_MESH_LINK:
		snprintf(buf, len, "s%u link %u->%u", s, i, r->peer % G);
		break;
	case FAST_RES_NIC_EGRESS:
		snprintf(buf, len, "s%u NIC%u out", s, i);
		break;
	case FAST_RES_NIC_INGRESS:
		snprintf(buf, len, "s%u NIC%u in", s, i);
		break;
	case FAST_RES_CORE:
		snprintf(buf, len, "core");
		break;
	case FAST_RES_GPU_REDUCE:
		snprintf(buf, len, "s%u gpu%u reduce", s, i);
		break;
	case FAST_RES_COPY_EGRESS:
		snprintf(buf, len, "s%u copy%u out", s, i);
		break;
	case FAST_RES_COPY_INGRESS:
		snprintf(buf, len, "s%u copy%u in", s, i);
		break;
	}
	return buf;
}

void fast_sim_result_free(struct fast_sim_result *r)
{
	if (!r)
		return;
	free(r->steps);
	free(r->res);
	free(r->act);
	r->steps = NULL;
	r->res = NULL;
	r->act = NULL;
	r->nsteps = r->nres = 0;
	r->nact = 0;
}

/* S of the algbw definition (sim.h) without the traffic: per-GPU bytes
 * delivered (a piece counts where it reaches its orig dst; explicit local
 * copies included).  A token plan's pieces name groups, not GPUs: there S
 * is the most bytes a GPU sends or receives in transfers between two GPUs
 * (sums excluded). */
uint64_t sim_gpu_bytes(const struct fast_plan *x, uint32_t ng)
{
	uint64_t *snd = fast_calloc(2 * (size_t)ng, sizeof *snd), best = 0;

	if (!snd)
		return 0;
	for (size_t i = 0; i < x->nxfers; i++) {
		const struct fast_xfer *t = &x->xfers[i];
		if (x->kind != FAST_TRAFFIC_BYTES) {
			if (t->from != t->to && t->from < ng && t->to < ng) {
				snd[t->from] += t->bytes;
				snd[ng + t->to] += t->bytes;
			}
			continue;
		}
		for (uint32_t k = 0; k < t->npieces; k++) {
			const struct fast_piece *p = &x->pieces[t->piece0 + k];
			if (p->dst != t->to || p->src >= ng || p->dst >= ng)
				continue;
			snd[p->src] += p->len;
			snd[ng + p->dst] += p->len;
		}
	}
	for (uint32_t g = 0; g < 2 * ng; g++)
		if (snd[g] > best)
			best = snd[g];
	free(snd);
	return best;
}

static int cmp_act(const void *a, const void *b)
{
	const struct fast_sim_activity *x = a, *y = b;
	if (x->res != y->res)
		return x->res < y->res ? -1 : 1;
	if (x->t0 != y->t0)
		return x->t0 < y->t0 ? -1 : 1;
	return x->step < y->step ? -1 : x->step > y->step;
}

/* Aggregate the transfers' activity per (resource, step). */
int sim_build_timeline(struct sim_engine *e, struct fast_sim_result *out, struct fast_err *err)
{
	struct fast_sim_activity *act = NULL, *scratch;
	uint32_t *touched;
	size_t n = 0, cap = 0;

	scratch = fast_calloc(e->nr, sizeof *scratch);
	touched = fast_calloc(e->nr, sizeof *touched);
	if (!scratch || !touched)
		goto oom;
	for (uint32_t ri = 0; ri < e->nr; ri++)
		scratch[ri].step = UINT32_MAX;
	for (uint32_t si = 0; si < e->nsteps; si++) {
		const struct sim_step_state *s = &e->st[si];
		uint32_t nt = 0;
		for (uint32_t j = 0; j < s->nx; j++) {
			uint32_t xi = s->x0 + j;
			const struct sim_path *f = &e->fl[xi];
			const struct sim_transfer *x = &e->xs[xi];
			for (uint32_t k = 0; k < f->nres; k++) {
				struct fast_sim_activity *a = &scratch[f->res[k]];
				if (a->step != si) {
					*a = (struct fast_sim_activity){ f->res[k], si, x->t_first, x->t_last, 0 };
					touched[nt++] = f->res[k];
				}
				if (x->t_first < a->t0)
					a->t0 = x->t_first;
				if (x->t_last > a->t1)
					a->t1 = x->t_last;
				a->bytes += x->bytes;
			}
		}
		if (fast_grow((void **)&act, &cap, n + nt, sizeof *act, 1024) < 0)
			goto oom;
		for (uint32_t k = 0; k < nt; k++)
			act[n++] = scratch[touched[k]];
	}
	if (n)
		qsort(act, n, sizeof *act, cmp_act);
	free(scratch);
	free(touched);
	out->act = act;
	out->nact = n;
	return 0;
oom:
	free(act);
	free(scratch);
	free(touched);
	return fast_err_set(err, FAST_ENOMEM, "simulator: out of memory for the timeline");
}
