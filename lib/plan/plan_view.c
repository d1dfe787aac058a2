/*
 * plan_view.c - the plan view (a plan validated once and expanded only
 * when compact, owning or aliasing its arrays), the plan/topology/traffic
 * size agreement checks, and what is computed over a view: the summary of
 * steps and tiers and the staging peak (plan.h).
 */
#include "fast/plan.h"

#include <stdlib.h>
#include <string.h>

/* --- the view -------------------------------------------------------------- */

bool fast_plan_is_compact(const struct fast_plan *p)
{
	if (p->nlanes > 0)
		return true;
	for (size_t t = 0; t < p->nsteps; t++)
		if (p->steps[t].kind == FAST_STEP_RAIL || p->steps[t].kind == FAST_STEP_REDIST)
			return true;
	return false;
}

int fast_plan_view_open(struct fast_plan_view *v, const struct fast_plan *p,
			const struct fast_matrix *m, struct fast_err *err)
{
	int rc;

	if (!fast_plan_is_compact(p)) {
		if ((rc = fast_plan_validate(p, err)) < 0 ||
		    (m && (rc = fast_plan_fits_matrix(p, m, err)) < 0))
			return rc;
		v->given = v->x = p;
		v->m = m;
		v->owned = false;
		memset(&v->own, 0, sizeof v->own);
		return 0;
	}
	/* expansion validates the compact form first, and yields a valid
	 * explicit plan: nothing is validated twice */
	if ((rc = fast_plan_expand(p, m, &v->own, err)) < 0)
		return rc;
	v->given = p;
	v->x = &v->own;
	v->m = m;
	v->owned = true;
	return 0;
}

void fast_plan_view_close(struct fast_plan_view *v)
{
	if (!v)
		return;
	if (v->owned)
		fast_plan_free(&v->own);
	memset(v, 0, sizeof *v);
}

int fast_plan_fits_topo(const struct fast_plan *p, const struct fast_topo *topo,
			struct fast_err *err)
{
	if (p->servers != topo->servers || p->gpus != topo->gpus)
		return fast_err_set(err, FAST_EINPUT,
				    "the plan is for %u servers x %u GPUs, the topology has %u x %u",
				    p->servers, p->gpus, topo->servers, topo->gpus);
	return 0;
}

int fast_plan_fits_traffic(const struct fast_plan *p, uint32_t traffic_ng, struct fast_err *err)
{
	if ((uint64_t)p->servers * p->gpus != traffic_ng)
		return fast_err_set(err, FAST_EINPUT,
				    "the traffic has %u GPUs, the plan is for %u servers x %u GPUs",
				    traffic_ng, p->servers, p->gpus);
	return 0;
}

/* A token piece of p (src = group, dst = mask index) against m.  The
 * error, when there is one, is the caller's to prefix with where the
 * piece is (formatted only then: this runs for every piece). */
static int fits_piece(const struct fast_plan *p, const struct fast_matrix *m,
		      const struct fast_piece *pc, struct fast_err *err)
{
	const struct fast_group *g;
	uint64_t size;

	if (pc->src >= m->ngroups)
		return fast_err_set(err, FAST_EINPUT, "group %u out of range (the matrix has %u "
				    "groups)", pc->src, m->ngroups);
	g = &m->groups[pc->src];
	size = fast_group_bytes(m, pc->src);
	if (pc->off > size || pc->len > size - pc->off)
		return fast_err_set(err, FAST_EINPUT,
				    "group %u bytes %llu..%llu outside its %llu bytes",
				    pc->src, (unsigned long long)pc->off,
				    (unsigned long long)(pc->off + pc->len), (unsigned long long)size);
	if (p->kind == FAST_TRAFFIC_COMBINE && g->ndst < 64 && (p->masks[pc->dst] >> g->ndst))
		return fast_err_set(err, FAST_EINPUT,
				    "mask 0x%llx names a contribution beyond the %u destinations "
				    "of group %u", (unsigned long long)p->masks[pc->dst],
				    g->ndst, pc->src);
	return 0;
}

int fast_plan_fits_matrix(const struct fast_plan *p, const struct fast_matrix *m,
			  struct fast_err *err)
{
	int rc;

	if ((rc = fast_plan_fits_traffic(p, m->ng, err)) < 0)
		return rc;
	if (p->kind == FAST_TRAFFIC_BYTES)
		return 0; /* served through the per-GPU byte matrix */
	if (m->kind != p->kind)
		return fast_err_set(err, FAST_EINPUT, "a %s plan cannot serve a %s matrix",
				    fast_traffic_kind_name(p->kind), fast_traffic_kind_name(m->kind));
	for (size_t t = 0; t < p->nsteps; t++) {
		const struct fast_step *s = &p->steps[t];
		for (uint32_t j = 0; j < s->nxfers; j++) {
			const struct fast_xfer *x = &p->xfers[s->xfer0 + j];
			for (uint32_t k = 0; k < x->npieces; k++) {
				if ((rc = fits_piece(p, m, &p->pieces[x->piece0 + k], err)) < 0) {
					fast_err_prefix(err, "step %zu transfer %u piece %u", t, j, k);
					return rc;
				}
			}
		}
	}
	for (size_t l = 0; l < p->nlanes; l++) {
		const struct fast_lane *ln = &p->lanes[l];
		for (uint32_t k = 0; k < ln->npieces; k++) {
			if ((rc = fits_piece(p, m, &p->pieces[ln->piece0 + k], err)) < 0) {
				fast_err_prefix(err, "lane (server %u -> server %u, rail %u) piece %u",
						ln->src_server, ln->dst_server, ln->rail, k);
				return rc;
			}
		}
	}
	return 0;
}


/* --- summaries ------------------------------------------------------------ */

/* Is GPU x the origin of the piece's bytes (they start there: a byte
 * plan's src, a dispatch group's src, a combine GPU's own contribution
 * alone) or their final place (a byte plan's dst, Dest(g) in dispatch,
 * src(g) in combine)?  m: the groups of a token plan. */
static bool is_origin(const struct fast_plan *e, const struct fast_matrix *m, uint32_t x,
		      const struct fast_piece *pc)
{
	const struct fast_group *g;

	if (e->kind == FAST_TRAFFIC_BYTES)
		return pc->src == x;
	g = &m->groups[pc->src];
	if (e->kind == FAST_TRAFFIC_DISPATCH)
		return g->src == x;
	for (uint32_t i = 0; i < g->ndst; i++)
		if (m->dsts[g->dst0 + i] == x)
			return e->masks[pc->dst] == UINT64_C(1) << i;
	return false;
}

static bool is_final(const struct fast_plan *e, const struct fast_matrix *m, uint32_t x,
		     const struct fast_piece *pc)
{
	const struct fast_group *g;

	if (e->kind == FAST_TRAFFIC_BYTES)
		return pc->dst == x;
	g = &m->groups[pc->src];
	if (e->kind == FAST_TRAFFIC_COMBINE)
		return g->src == x;
	for (uint32_t i = 0; i < g->ndst; i++)
		if (m->dsts[g->dst0 + i] == x)
			return true;
	return false;
}

/* Staging on an explicit, valid plan (see plan.h for the definition). */
static int staging(const struct fast_plan *e, const struct fast_matrix *m, uint64_t *peak,
		   struct fast_err *err)
{
	uint32_t ng = e->servers * e->gpus;
	uint64_t *held = fast_calloc(ng, sizeof *held);
	uint32_t *order = fast_calloc(e->nsteps ? e->nsteps : 1, sizeof *order);
	int rc = 0;

	if (!held || !order) {
		rc = fast_err_set(err, FAST_ENOMEM, "plan: out of memory (staging)");
		goto out;
	}
	memset(peak, 0, ng * sizeof *peak);
	rc = fast_plan_topo_order(e, order, err);
	if (rc < 0)
		goto out;
	for (size_t i = 0; i < e->nsteps; i++) {
		const struct fast_step *s = &e->steps[order[i]];
		if (s->kind == FAST_STEP_REDUCE) {
			/* a sum at x replaces the inputs x held for others by one
			 * value it holds for others */
			for (uint32_t j = 0; j < s->nxfers; j++) {
				const struct fast_xfer *x = &e->xfers[s->xfer0 + j];
				uint64_t len = e->pieces[x->piece0].len;
				for (uint32_t k = 0; k < x->npieces; k++)
					if (!is_origin(e, m, x->to, &e->pieces[x->piece0 + k]))
						held[x->to] -= len < held[x->to] ? len : held[x->to];
				held[x->to] += len;
				if (held[x->to] > peak[x->to])
					peak[x->to] = held[x->to];
			}
			continue;
		}
		for (uint32_t j = 0; j < s->nxfers; j++) {
			const struct fast_xfer *x = &e->xfers[s->xfer0 + j];
			for (uint32_t k = 0; k < x->npieces; k++) {
				const struct fast_piece *pc = &e->pieces[x->piece0 + k];
				if (x->to != x->from && !is_origin(e, m, x->to, pc) &&
				    !is_final(e, m, x->to, pc))
					held[x->to] += pc->len;
			}
			if (held[x->to] > peak[x->to])
				peak[x->to] = held[x->to];
		}
		for (uint32_t j = 0; j < s->nxfers; j++) {
			const struct fast_xfer *x = &e->xfers[s->xfer0 + j];
			if (x->from == x->to)
				continue;
			for (uint32_t k = 0; k < x->npieces; k++) {
				const struct fast_piece *pc = &e->pieces[x->piece0 + k];
				if (!is_origin(e, m, x->from, pc) && !is_final(e, m, x->from, pc))
					held[x->from] -= pc->len < held[x->from] ? pc->len
										 : held[x->from];
			}
		}
	}
out:
	free(held);
	free(order);
	return rc;
}

int fast_plan_summarize(const struct fast_plan_view *v, struct fast_plan_summary *out,
			uint64_t *peak, struct fast_err *err)
{
	const struct fast_plan *p = v->given, *e = v->x;
	struct fast_plan_summary sm;
	uint64_t *own = NULL;
	int rc;

	if (e->kind != FAST_TRAFFIC_BYTES && !v->m)
		return fast_err_set(err, FAST_EINPUT, "the summary of a %s plan needs the traffic it "
				    "serves (its groups)", fast_traffic_kind_name(e->kind));
	memset(&sm, 0, sizeof sm);
	for (size_t t = 0; t < p->nsteps; t++) {
		const struct fast_step *s = &p->steps[t];
		if (s->tier == FAST_TIER_UP)
			sm.steps_up++;
		else
			sm.steps_out++;
		if (s->kind == FAST_STEP_RAIL)
			sm.rail_stages++;
	}
	for (size_t t = 0; t < e->nsteps; t++) {
		const struct fast_step *s = &e->steps[t];
		uint64_t step_bytes = 0;
		for (uint32_t j = 0; j < s->nxfers; j++) {
			const struct fast_xfer *x = &e->xfers[s->xfer0 + j];
			sm.transfers++;
			sm.pieces += x->npieces;
			if (x->from == x->to)
				continue; /* a local copy moves nothing over a link */
			step_bytes += x->bytes;
			for (uint32_t k = 0; k < x->npieces; k++)
				if (!is_origin(e, v->m, x->from, &e->pieces[x->piece0 + k]))
					sm.bytes_relayed += e->pieces[x->piece0 + k].len;
		}
		if (s->tier == FAST_TIER_UP)
			sm.bytes_up += step_bytes;
		else
			sm.bytes_out += step_bytes;
		if (step_bytes > sm.largest_step_bytes) {
			sm.largest_step_bytes = step_bytes;
			sm.largest_step = (uint32_t)t;
		}
	}
	if (!peak) {
		peak = own = fast_calloc((size_t)e->servers * e->gpus, sizeof *peak);
		if (!peak)
			return fast_err_set(err, FAST_ENOMEM, "plan: out of memory (summary)");
	}
	rc = staging(e, v->m, peak, err);
	if (rc == 0) {
		for (uint32_t g = 0; g < e->servers * e->gpus; g++)
			if (peak[g] > sm.peak_staging) {
				sm.peak_staging = peak[g];
				sm.peak_staging_gpu = g;
			}
		*out = sm;
	}
	free(own);
	return rc;
}
