/*
 * setup.c - the simulator's engine set up from a topology and an expanded
 * plan: the resources (uplinks, mesh links, NICs, core) with their
 * effective capacities, each transfer's path over them, the steps with
 * their chunking and dependency counts (with --sync rank every GPU's waves:
 * rank.c).
 */
#include "internal.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Resource numbering: the scale-up tier first (each server's G x G mesh
 * links, or every GPU's uplink egress, then every ingress), from
 * nic_base() the scale-out port egresses (server by server, P =
 * fast_topo_ports() each) then ingresses, then the core when it is
 * oversubscribed, last, only in a plan with REDUCE steps, one reduction
 * resource per GPU (mem_base()).  With one NIC per GPU (P = G) port g of
 * the numbering is GPU g's NIC, as it was before ports. */
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

/* Scale-out ports of the whole fabric: N x P. */
static uint32_t nports(const struct sim_engine *e)
{
	return e->N * fast_topo_ports(e->topo);
}

/* The egress (or ingress) port resource of GPU g. */
static uint32_t res_port(const struct sim_engine *e, uint32_t g, bool ingress)
{
	uint32_t P = fast_topo_ports(e->topo);
	uint32_t q = (g / e->G) * P + fast_topo_port_of(e->topo, g % e->G);
	return nic_base(e) + (ingress ? nports(e) : 0) + q;
}

/* The first local GPU behind port p (GPU l is behind floor(l K / G)). */
static uint32_t port_first_gpu(const struct fast_topo *t, uint32_t p)
{
	if (t->nics >= t->gpus)
		return p;
	return (uint32_t)(((uint64_t)p * t->gpus + t->nics - 1) / t->nics);
}

/* The core's capacity: every NIC's rate together over the oversubscription
 * (the sum of the NICs' fractions first, so that N x G NICs at the nominal
 * rate give exactly N x G x B / oversub, as before NICs could differ). */
static double core_Bps(const struct fast_topo *t)
{
	double f = 0;

	for (uint32_t s = 0; s < t->servers; s++)
		f += fast_topo_server_nics_up(t, s);
	return f * fast_tier_Bps(&t->out) / t->core_oversub;
}

static bool has_reduce(const struct fast_plan *x)
{
	for (size_t si = 0; si < x->nsteps; si++)
		if (x->steps[si].kind == FAST_STEP_REDUCE)
			return true;
	return false;
}

/* After the core: with copy resources, every GPU's copy egress, then
 * every GPU's copy ingress. */
static uint32_t copy_base(const struct sim_engine *e)
{
	bool core = e->topo->core_oversub > 1.0 && e->topo->servers > 1;
	return nic_base(e) + 2 * nports(e) + (core ? 1 : 0);
}

static uint32_t mem_base(const struct sim_engine *e)
{
	return copy_base(e) + (e->copy_res ? 2 * e->ng : 0);
}

/* A GPU's reduction rate (sim.h): its implementation's, else its scale-up
 * bandwidth, the port on a switch, its G - 1 links together on a mesh. */
static double reduce_Bps(const struct sim_engine *e)
{
	const struct fast_topo *t = e->topo;
	uint32_t links = t->up_kind == FAST_UP_MESH && t->gpus > 1 ? t->gpus - 1 : 1;

	if (e->im->reduce_GBps > 0)
		return e->im->reduce_GBps * 1e9;
	return (double)links * fast_tier_Bps(&t->up);
}

/* A mesh needs copy resources where the engine's cap is below a GPU's
 * links together (on a switch the port's capacity takes the cap). */
static bool needs_copy_res(const struct sim_engine *e)
{
	const struct fast_topo *t = e->topo;
	double cap = fast_impl_up_cap_Bps(e->im);

	return t->up_kind == FAST_UP_MESH && t->gpus > 1 && cap > 0 &&
	       cap < (double)(t->gpus - 1) * fast_tier_Bps(&t->up);
}

int sim_build_resources(struct sim_engine *e, struct fast_err *err)
{
	const struct fast_topo *t = e->topo;
	uint32_t nb = nic_base(e), cb, mb;

	e->copy_res = needs_copy_res(e);
	cb = copy_base(e);
	mb = mem_base(e);
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
			r->base = t->up_kind == FAST_UP_MESH ? fast_tier_Bps(&t->up)
							     : fast_impl_up_Bps(e->im, t);
		} else if (ri < nb + 2 * nports(e)) {
			uint32_t k = ri - nb, q = k % nports(e), P = fast_topo_ports(t);
			ri_->kind = k < nports(e) ? FAST_RES_NIC_EGRESS : FAST_RES_NIC_INGRESS;
			ri_->port = q % P;
			ri_->gpu = ri_->peer = (q / P) * e->G + port_first_gpu(t, q % P);
			r->base = fast_impl_out_Bps(e->im, fast_topo_port_Bps(t, q / P, q % P),
						    fast_topo_port_gpus(t, q % P));
			r->ingress_nic = k >= nports(e);
		} else if (ri < cb) {
			ri_->kind = FAST_RES_CORE;
			r->base = core_Bps(t);
			e->demand = t->core_sharing == FAST_CORE_DEMAND;
			e->core_res = ri;
		} else if (ri < mb) {
			ri_->kind = ri - cb < e->ng ? FAST_RES_COPY_EGRESS : FAST_RES_COPY_INGRESS;
			ri_->gpu = ri_->peer = (ri - cb) % e->ng;
			r->base = fast_impl_up_cap_Bps(e->im);
		} else {
			ri_->kind = FAST_RES_GPU_REDUCE;
			ri_->gpu = ri_->peer = ri - mb;
			r->base = reduce_Bps(e);
		}
		ri_->cap_Bps = r->base;
		r->cap = r->base;
	}
	return 0;
}

/* "server S NIC K" or "server S NICs K0-K1" for the NICs of port res;
 * returns how many NICs that names. */
static uint32_t port_nics_name(const struct sim_engine *e, uint32_t res, char *buf, size_t len)
{
	const struct fast_sim_res *r = &e->rinfo[res];
	int at = snprintf(buf, len, "server %u ", r->gpu / e->G);

	return fast_topo_port_name(e->topo, r->port, buf + at, len - (size_t)at);
}

/* A scale-out transfer of transfer j of step si (path f, bytes > 0) over a
 * port that is down (every NIC of it at fraction 0) can never finish:
 * FAST_EINPUT naming the step, the transfer, its GPUs and the NICs. */
static int port_down(const struct sim_engine *e, uint32_t si, uint32_t j,
		     const struct fast_xfer *t, const struct sim_path *f, struct fast_err *err)
{
	char a[64] = "", b[64] = "";
	bool da = e->rs[f->res[0]].base <= 0.0, db = e->rs[f->res[1]].base <= 0.0;
	uint32_t n = 0;

	if (!da && !db)
		return 0;
	if (da)
		n += port_nics_name(e, f->res[0], a, sizeof a);
	if (db)
		n += port_nics_name(e, f->res[1], b, sizeof b);
	return fast_err_set(err, FAST_EINPUT,
			    "plan: step %u transfer %u: GPU %u -> GPU %u crosses %s%s%s, which %s down",
			    si, j, t->from, t->to, a, da && db ? " and " : "", b,
			    n > 1 ? "are" : "is");
}

int sim_build_transfers(struct sim_engine *e, struct fast_err *err)
{
	const struct fast_plan *x = e->x;
	uint32_t nb = nic_base(e);
	bool core = e->topo->core_oversub > 1.0 && e->N > 1;
	uint32_t *cnt;
	uint64_t total = 0;
	int rc;

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
					if (e->copy_res) {
						f->res[f->nres++] = copy_base(e) + t->from;
						f->res[f->nres++] = copy_base(e) + e->ng + t->to;
					}
				} else {
					f->res[f->nres++] = res_up_egress(t->from);
					f->res[f->nres++] = res_up_ingress(e, t->to);
				}
			} else {
				f->res[f->nres++] = res_port(e, t->from, false);
				f->res[f->nres++] = res_port(e, t->to, true);
				if (core && t->from / e->G != t->to / e->G)
					f->res[f->nres++] = nb + 2 * nports(e);
				if ((rc = port_down(e, si, j, t, f, err)) < 0) {
					free(cnt);
					return rc;
				}
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

/* Every step's depth (sim.h, "Implementation"): the most steps of its own
 * tier on a chain of dependencies, pipelined or not, before it, in a
 * topological order (a cycle is left for the run to report: its steps
 * keep depth 0).  Counting its own tier only, a step that pays no cost has
 * a step of its tier before it that did, or that has one: no flow of a
 * tier starts before the tier's alpha + overhead (the latency floor of
 * the bound, docs/DESIGN.md, stays one). */
static int step_depths(struct sim_engine *e, struct fast_err *err)
{
	const struct fast_plan *x = e->x;
	uint32_t *order = fast_calloc(e->nsteps ? e->nsteps : 1, sizeof *order);
	uint32_t *dt = fast_calloc(2 * (size_t)(e->nsteps ? e->nsteps : 1), sizeof *dt);
	struct fast_err quiet;
	int rc;

	if (!order || !dt) {
		free(order);
		free(dt);
		return fast_err_set(err, FAST_ENOMEM, "simulator: out of memory for %u steps", e->nsteps);
	}
	if ((rc = fast_plan_topo_order(x, order, &quiet)) < 0) {
		free(order);
		free(dt);
		return rc == FAST_ENOMEM ? fast_err_set(err, rc, "simulator: out of memory") : 0;
	}
	/* dt[2 s + t]: tier-t steps on the longest such chain before step s */
	for (uint32_t i = 0; i < e->nsteps; i++) {
		const struct fast_step *s = &x->steps[order[i]];
		uint32_t *d = &dt[2 * (size_t)order[i]];
		for (uint32_t k = 0; k < s->ndeps; k++) {
			uint32_t on = x->deps[s->dep0 + k].step;
			for (int t = 0; t < 2; t++) {
				uint32_t v = dt[2 * (size_t)on + t] + (x->steps[on].tier == (enum fast_tier_id)t);
				d[t] = v > d[t] ? v : d[t];
			}
		}
		e->st[order[i]].depth = d[s->tier == FAST_TIER_OUT];
	}
	free(order);
	free(dt);
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
			if (!e->by_rank) /* by rank, the waves hold the dependencies */
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
		for (uint32_t k = 0; k < s->ndeps && !e->by_rank; k++) {
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
	return e->im->in_flight > 1 ? step_depths(e, err) : 0;
}
