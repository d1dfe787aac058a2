/*
 * setup.c - the simulator's engine set up from a topology and an expanded
 * plan: the resources (uplinks, mesh links, NICs, core) with their
 * effective capacities, each transfer's path over them, and the steps with
 * their chunking and dependency counts.
 */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Resource numbering: the scale-up tier first (each server's G x G mesh
 * links, or every GPU's uplink egress, then every ingress), from
 * nic_base() the NIC egresses then ingresses, then the core when it is
 * oversubscribed, last, only in a plan with REDUCE steps, one reduction
 * resource per GPU (mem_base()). */
static uint32_t res_up_egress(uint32_t g) { return g; }
static uint32_t res_up_ingress(const struct sim_engine *e, uint32_t g) { return e->ng + g; }
static uint32_t res_mesh(const struct sim_engine *e, uint32_t from, uint32_t to)
{
	uint32_t s = from / e->G;
	return s * e->G * e->G + (from % e->G) * e->G + (to % e->G);
}
static uint32_t nic_base(const struct sim_engine *e)
{
	return e->topo->up_kind == FAST_UP_MESH ? e->N * e->G * e->G : 2 * e->ng;
}

static bool has_reduce(const struct fast_plan *x)
{
	for (size_t si = 0; si < x->nsteps; si++)
		if (x->steps[si].kind == FAST_STEP_REDUCE)
			return true;
	return false;
}

static uint32_t mem_base(const struct sim_engine *e)
{
	bool core = e->topo->core_oversub > 1.0 && e->topo->servers > 1;
	return nic_base(e) + 2 * e->ng + (core ? 1 : 0);
}

/* A GPU's reduction rate (sim.h): its scale-up bandwidth, the port on a
 * switch, its G - 1 links together on a mesh. */
static double reduce_Bps(const struct fast_topo *t)
{
	uint32_t links = t->up_kind == FAST_UP_MESH && t->gpus > 1 ? t->gpus - 1 : 1;
	return (double)links * fast_tier_Bps(&t->up);
}

int sim_build_resources(struct sim_engine *e, struct fast_err *err)
{
	const struct fast_topo *t = e->topo;
	uint32_t nb = nic_base(e), mb = mem_base(e);

	e->nr = mb + (has_reduce(e->x) ? e->ng : 0);
	e->rs = fast_calloc(e->nr, sizeof *e->rs);
	e->rinfo = fast_calloc(e->nr, sizeof *e->rinfo);
	if (!e->rs || !e->rinfo)
		return fast_err_set(err, FAST_ENOMEM, "simulator: out of memory for %u resources", e->nr);
	for (uint32_t ri = 0; ri < e->nr; ri++) {
		struct fast_sim_res *ri_ = &e->rinfo[ri];
		struct sim_resource *r = &e->rs[ri];
		if (ri < nb) {
			if (t->up_kind == FAST_UP_MESH) {
				uint32_t s = ri / (e->G * e->G), i = (ri / e->G) % e->G, j = ri % e->G;
				ri_->kind = FAST_RES_MESH_LINK;
				ri_->gpu = s * e->G + i;
				ri_->peer = s * e->G + j;
			} else {
				ri_->kind = ri < e->ng ? FAST_RES_UP_EGRESS : FAST_RES_UP_INGRESS;
				ri_->gpu = ri_->peer = ri % e->ng;
			}
			r->base = fast_tier_Bps(&t->up);
		} else if (ri < nb + 2 * e->ng) {
			uint32_t k = ri - nb;
			ri_->kind = k < e->ng ? FAST_RES_NIC_EGRESS : FAST_RES_NIC_INGRESS;
			ri_->gpu = ri_->peer = k % e->ng;
			r->base = fast_tier_Bps(&t->out);
			r->ingress_nic = k >= e->ng;
		} else if (ri < mb) {
			ri_->kind = FAST_RES_CORE;
			r->base = (double)e->ng * fast_tier_Bps(&t->out) / t->core_oversub;
		} else {
			ri_->kind = FAST_RES_GPU_REDUCE;
			ri_->gpu = ri_->peer = ri - mb;
			r->base = reduce_Bps(t);
		}
		ri_->cap_Bps = r->base;
		r->cap = r->base;
	}
	return 0;
}

int sim_build_transfers(struct sim_engine *e, struct fast_err *err)
{
	const struct fast_plan *x = e->x;
	uint32_t nb = nic_base(e);
	bool core = e->topo->core_oversub > 1.0 && e->N > 1;
	uint32_t *cnt;
	uint64_t total = 0;

	if (x->nxfers > UINT32_MAX - 1)
		return fast_err_set(err, FAST_ELIMIT, "simulator: too many transfers (%zu)", x->nxfers);
	e->nx = (uint32_t)x->nxfers;
	e->xs = fast_calloc(e->nx ? e->nx : 1, sizeof *e->xs);
	e->fl = fast_calloc(e->nx ? e->nx : 1, sizeof *e->fl);
	e->hot = fast_calloc(e->nx ? e->nx : 1, sizeof *e->hot);
	e->nrate = fast_calloc(e->nx ? e->nx : 1, sizeof *e->nrate);
	e->cflows = fast_calloc(e->nx ? e->nx : 1, sizeof *e->cflows);
	e->cres = fast_calloc(e->nr ? e->nr : 1, sizeof *e->cres);
	e->dirty = fast_calloc(e->nr ? e->nr : 1, sizeof *e->dirty);
	e->slist = fast_calloc(e->nx ? 3 * (size_t)e->nx : 1, sizeof *e->slist);
	e->due = fast_calloc(e->nx ? e->nx : 1, sizeof *e->due);
	e->hpos = fast_calloc(e->nx ? e->nx : 1, sizeof *e->hpos);
	cnt = fast_calloc(e->nr + 1, sizeof *cnt);
	if (!e->xs || !e->fl || !e->hot || !e->nrate || !e->cflows || !e->cres || !e->dirty || !e->slist || !e->due || !e->hpos || !cnt) {
		free(cnt);
		return fast_err_set(err, FAST_ENOMEM, "simulator: out of memory for %u transfers", e->nx);
	}
	memset(e->hpos, 0xff, (size_t)(e->nx ? e->nx : 1) * sizeof *e->hpos); /* NO_SLOT */
	for (uint32_t si = 0; si < e->nsteps; si++) {
		const struct fast_step *s = &x->steps[si];
		for (uint32_t j = 0; j < s->nxfers; j++) {
			uint32_t xi = s->xfer0 + j;
			const struct fast_xfer *t = &x->xfers[xi];
			struct sim_path *f = &e->fl[xi];

			e->xs[xi].step = si;
			e->xs[xi].bytes = t->bytes;
			if (t->from >= e->ng || t->to >= e->ng) {
				free(cnt);
				return fast_err_set(err, FAST_EINPUT,
						    "plan: step %u transfer %u: GPU out of range (%u -> %u, %u GPUs)",
						    si, j, t->from, t->to, e->ng);
			}
			if (s->kind == FAST_STEP_REDUCE && t->bytes > 0) {
				/* n inputs of len bytes read, one sum of len written */
				uint64_t len = x->pieces[t->piece0].len;
				if (!fast_add_u64(t->bytes, len, &e->xs[xi].bytes)) {
					free(cnt);
					return fast_err_set(err, FAST_ELIMIT,
							    "plan: step %u sum %u: bytes exceed 64 bits",
							    si, j);
				}
				f->res[f->nres++] = mem_base(e) + t->from;
			} else if (t->from == t->to || t->bytes == 0) {
				continue;
			} else if (s->tier == FAST_TIER_UP) {
				if (t->from / e->G != t->to / e->G) {
					free(cnt);
					return fast_err_set(err, FAST_EINPUT,
							    "plan: step %u transfer %u: scale-up transfer between servers (GPU %u -> %u)",
							    si, j, t->from, t->to);
				}
				if (e->topo->up_kind == FAST_UP_MESH) {
					f->res[f->nres++] = res_mesh(e, t->from, t->to);
				} else {
					f->res[f->nres++] = res_up_egress(t->from);
					f->res[f->nres++] = res_up_ingress(e, t->to);
				}
			} else {
				f->res[f->nres++] = nb + t->from;
				f->res[f->nres++] = nb + e->ng + t->to;
				if (core && t->from / e->G != t->to / e->G)
					f->res[f->nres++] = nb + 2 * e->ng;
			}
			for (uint32_t k = 0; k < f->nres; k++)
				cnt[f->res[k]]++;
			e->st[si].bytes += e->xs[xi].bytes;
			total += f->nres;
		}
	}
	e->lists = fast_calloc(total ? total : 1, sizeof *e->lists);
	e->popseq = fast_calloc(e->nr ? e->nr : 1, sizeof *e->popseq);
	e->lv = fast_calloc(e->nr ? e->nr : 1, sizeof *e->lv);
	if (!e->lists || !e->popseq || !e->lv) {
		free(cnt);
		return fast_err_set(err, FAST_ENOMEM, "simulator: out of memory");
	}
	{
		uint32_t off = 0;
		for (uint32_t ri = 0; ri < e->nr; ri++) {
			e->rs[ri].l0 = off;
			off += cnt[ri];
		}
	}
	free(cnt);
	return 0;
}

int sim_build_steps(struct sim_engine *e, struct fast_err *err)
{
	const struct fast_plan *x = e->x;
	uint64_t nch = 0;
	uint32_t *nr;

	e->nsteps = (uint32_t)x->nsteps;
	e->st = fast_calloc(e->nsteps ? e->nsteps : 1, sizeof *e->st);
	e->rdeps = fast_calloc(x->ndeps ? x->ndeps : 1, sizeof *e->rdeps);
	nr = fast_calloc(e->nsteps + 1, sizeof *nr);
	if (!e->st || !e->rdeps || !nr) {
		free(nr);
		return fast_err_set(err, FAST_ENOMEM, "simulator: out of memory for %u steps", e->nsteps);
	}
	for (uint32_t si = 0; si < e->nsteps; si++) {
		const struct fast_step *s = &x->steps[si];
		struct sim_step_state *t = &e->st[si];
		t->x0 = s->xfer0;
		t->nx = s->nxfers;
		t->chunks = s->chunks ? s->chunks : 1;
		t->c0 = (uint32_t)nch;
		nch += t->chunks;
		t->alpha = e->alpha[s->tier == FAST_TIER_OUT];
		t->overhead = e->overhead[s->tier == FAST_TIER_OUT];
		for (uint32_t k = 0; k < s->ndeps; k++) {
			const struct fast_dep *d = &x->deps[s->dep0 + k];
			if (d->step >= e->nsteps)
				return free(nr), fast_err_set(err, FAST_EINPUT,
							      "plan: step %u: dependency on unknown step %u", si, d->step);
			nr[d->step]++;
		}
	}
	if (nch > UINT32_MAX / 2)
		return free(nr), fast_err_set(err, FAST_ELIMIT, "simulator: too many chunks");
	e->pipe_left = fast_calloc(nch ? nch : 1, sizeof *e->pipe_left);
	e->chunk_left = fast_calloc(nch ? nch : 1, sizeof *e->chunk_left);
	if (!e->pipe_left || !e->chunk_left)
		return free(nr), fast_err_set(err, FAST_ENOMEM, "simulator: out of memory");
	{
		uint32_t off = 0;
		for (uint32_t si = 0; si < e->nsteps; si++) {
			e->st[si].rdep0 = off;
			off += nr[si];
			nr[si] = 0;
		}
	}
	for (uint32_t si = 0; si < e->nsteps; si++) {
		const struct fast_step *s = &x->steps[si];
		struct sim_step_state *t = &e->st[si];
		for (uint32_t c = 0; c < t->chunks; c++)
			e->chunk_left[t->c0 + c] = t->nx;
		for (uint32_t k = 0; k < s->ndeps; k++) {
			const struct fast_dep *d = &x->deps[s->dep0 + k];
			struct sim_step_state *on = &e->st[d->step];
			bool pipe = d->pipelined && on->chunks == t->chunks;
			e->rdeps[on->rdep0 + nr[d->step]++] = (struct sim_dep){ si, pipe };
			if (pipe) {
				for (uint32_t c = 0; c < t->chunks; c++)
					e->pipe_left[t->c0 + c]++;
			} else {
				t->full_left++;
			}
		}
	}
	for (uint32_t si = 0; si < e->nsteps; si++)
		e->st[si].nrdep = nr[si];
	free(nr);
	return 0;
}
