/*
 * check_local.c - stage 1 of the checker (check.c has the whole proof):
 * the local properties of every transfer, each on its own.  Pieces inside
 * their message, transfer bytes = sum of pieces, tier-up transfers inside
 * one server, local copies carrying only the diagonal, no tier-out bytes
 * through a NIC that is down, and for FAST plans every tier-out step
 * one-to-one at NIC level (a rail step of k permutations: each NIC to and
 * from at most k) and no NIC shared by tier-out steps that may run at the
 * same time.
 */
#include "lib/check/check_internal.h"

#include <stdlib.h>
#include <string.h>

/* --- 1. local properties -------------------------------------------------- */

struct cap {
	uint64_t key, bytes;
};

static int cmp_cap(const void *a, const void *b)
{
	const struct cap *x = a, *y = b;
	return x->key < y->key ? -1 : x->key > y->key;
}

/* Lane pieces inside their messages. */
static int lane_pieces(struct checker *c)
{
	const struct fast_plan *p = c->p;

	for (size_t l = 0; l < p->nlanes; l++) {
		const struct fast_lane *ln = &p->lanes[l];
		for (uint32_t k = 0; k < ln->npieces; k++) {
			const struct fast_piece *pc = &p->pieces[ln->piece0 + k];
			char pn[96], sz[96];
			if (pc->off + pc->len > fast_check_msg_size(c, pc)) {
				fast_check_piece_name(pn, sizeof pn, c, pc);
				fast_check_size_name(sz, sizeof sz, c, pc);
				return fast_err_set(c->err, FAST_ECHECK,
						    "lane (server %u -> server %u, rail %u) piece %u "
						    "(%s): outside the message (%s)", ln->src_server,
						    ln->dst_server, ln->rail, k, pn, sz);
			}
		}
	}
	return 0;
}

/* The bytes the rail steps let each server pair carry per rail: into
 * *out (allocated here) one entry per pair, sorted by key, merged
 * (saturating); *n entries. */
static int rail_caps(struct checker *c, struct cap **out, size_t *n)
{
	const struct fast_plan *p = c->p;
	struct cap *caps;
	size_t room = 0, m = 0, w = 0;
	uint32_t k = 1, *to;
	uint64_t *wt;

	for (size_t t = 0; t < p->nsteps; t++)
		if (p->steps[t].kind == FAST_STEP_RAIL) {
			room += (size_t)p->servers * p->steps[t].nperms;
			if (p->steps[t].nperms > k)
				k = p->steps[t].nperms;
		}
	caps = fast_calloc(room ? room : 1, sizeof *caps);
	to = fast_calloc(k, sizeof *to);
	wt = fast_calloc(k, sizeof *wt);
	if (!caps || !to || !wt) {
		free(caps);
		free(to);
		free(wt);
		return fast_check_oom(c);
	}
	for (size_t t = 0; t < p->nsteps; t++) {
		const struct fast_step *s = &p->steps[t];
		if (s->kind != FAST_STEP_RAIL)
			continue;
		for (uint32_t a = 0; a < p->servers; a++) {
			uint32_t nb = fast_plan_rail_row(p, s, a, to, wt);
			for (uint32_t d = 0; d < nb; d++)
				if (wt[d])
					caps[m++] = (struct cap){ (uint64_t)a * p->servers + to[d], wt[d] };
		}
	}
	free(to);
	free(wt);
	if (m > 1)
		qsort(caps, m, sizeof *caps, cmp_cap);
	for (size_t i = 0; i < m; i++) { /* merge equal keys, saturating */
		if (w && caps[w - 1].key == caps[i].key) {
			if (!fast_add_u64(caps[w - 1].bytes, caps[i].bytes, &caps[w - 1].bytes))
				caps[w - 1].bytes = UINT64_MAX;
		} else {
			caps[w++] = caps[i];
		}
	}
	*out = caps;
	*n = w;
	return 0;
}

/* Lane pieces inside their messages, and every lane emptied by the rail
 * stages of its server pair (a leftover is never sent: name the lane). */
int fast_check_lanes(struct checker *c)
{
	const struct fast_plan *p = c->p;
	struct cap *caps = NULL;
	size_t w = 0;
	int rc;

	if (p->nlanes == 0)
		return 0;
	if ((rc = lane_pieces(c)) < 0 || (rc = rail_caps(c, &caps, &w)) < 0)
		return rc;
	for (size_t l = 0; l < p->nlanes && rc == 0; l++) {
		const struct fast_lane *ln = &p->lanes[l];
		struct cap key = { (uint64_t)ln->src_server * p->servers + ln->dst_server, 0 };
		const struct cap *hit = w ? bsearch(&key, caps, w, sizeof *caps, cmp_cap) : NULL;
		uint64_t carried = hit ? hit->bytes : 0;
		if (ln->bytes > carried)
			rc = fast_err_set(c->err, FAST_ECHECK,
					  "lane (server %u -> server %u, rail %u): %llu of its %llu "
					  "bytes are never sent (the rail stages from server %u to "
					  "server %u carry %llu bytes per rail)", ln->src_server,
					  ln->dst_server, ln->rail,
					  (unsigned long long)(ln->bytes - carried),
					  (unsigned long long)ln->bytes, ln->src_server, ln->dst_server,
					  (unsigned long long)carried);
	}
	free(caps);
	return rc;
}

/* --- NICs that are down ---------------------------------------------------
 * A GPU's tier-out transfers go through its port (topo.h, "NICs and
 * ports"); a port whose NICs are all at fraction 0 carries nothing, so a
 * plan that sends a byte through it never finishes.  Decided from the
 * fractions alone (not the rates: a hand-built topology may leave the
 * bandwidths 0). */

int fast_check_down_ports(struct checker *c)
{
	const struct fast_topo *t = c->topo;
	bool any = false;

	for (uint32_t i = 0; i < t->noverrides; i++)
		any |= t->nic_override[i].fraction == 0.0;
	if (!any)
		return 0;
	if (!(c->down = fast_calloc(c->ng, sizeof *c->down)))
		return fast_check_oom(c);
	for (uint32_t g = 0; g < c->ng; g++)
		c->down[g] = fast_topo_port_nics_up(t, g / c->G, fast_topo_port_of(t, g % c->G)) <= 0.0;
	return 0;
}

/* "server S NIC K" or "server S NICs K0-K1": the NICs of GPU g's port. */
static void port_name(char *buf, size_t len, const struct checker *c, uint32_t g)
{
	int at = snprintf(buf, len, "server %u ", g / c->G);

	if (at > 0 && (size_t)at < len)
		fast_topo_port_name(c->topo, fast_topo_port_of(c->topo, g % c->G), buf + at,
				    len - (size_t)at);
}

/* Transfer j of tier-out step t (x, bytes > 0, from != to) through a port
 * that is down: FAST_ECHECK naming the step, transfer, piece and NICs. */
static int through_down_port(struct checker *c, uint32_t t, uint32_t j, const struct fast_xfer *x)
{
	char loc[256], a[48] = "", b[48] = "";
	bool da = c->down[x->from], db = c->down[x->to];

	if (!da && !db)
		return 0;
	if (da)
		port_name(a, sizeof a, c, x->from);
	if (db)
		port_name(b, sizeof b, c, x->to);
	fast_check_where(loc, sizeof loc, c, t, j, 0);
	return fast_err_set(c->err, FAST_ECHECK, "%s: crosses %s%s%s, which %s down", loc, a,
			    da && db ? " and " : "", b,
			    (da && db) || strstr(da ? a : b, "NICs") ? "are" : "is");
}

/* What a local copy (from == to) may carry: the diagonal D[x][x] (byte
 * plans), a group of x's own (dispatch); nothing in a combine plan (a sum
 * is a reduce step; a contribution of src(g) is counted there anyway). */
static int local_copy(struct checker *c, const struct fast_xfer *x, const struct fast_piece *pc,
		      uint32_t t, uint32_t j, uint32_t k)
{
	char loc[256];

	if (c->kind == FAST_TRAFFIC_BYTES ? pc->src == x->from && pc->dst == x->from
	    : c->kind == FAST_TRAFFIC_DISPATCH && c->m->groups[pc->src].src == x->from)
		return 0;
	fast_check_where(loc, sizeof loc, c, t, j, k);
	if (c->kind == FAST_TRAFFIC_BYTES)
		return fast_err_set(c->err, FAST_ECHECK,
				    "%s: a local copy (GPU %u -> GPU %u) may carry only the diagonal "
				    "D[%u][%u]", loc, x->from, x->to, x->from, x->from);
	if (c->kind == FAST_TRAFFIC_DISPATCH)
		return fast_err_set(c->err, FAST_ECHECK,
				    "%s: a local copy (GPU %u -> GPU %u) may carry only groups of "
				    "GPU %u", loc, x->from, x->to, x->from);
	return fast_err_set(c->err, FAST_ECHECK,
			    "%s: a combine plan has no local copies (GPU %u -> GPU %u): a sum is "
			    "a reduce step", loc, x->from, x->to);
}

/* Pieces inside messages, byte sums, tiers, local copies, reduces not at
 * a group's source, and for FAST plans one-to-one tier-out steps. */
int fast_check_transfers(struct checker *c)
{
	const struct fast_plan *e = c->e;
	bool fast = strcmp(e->algo, "fast") == 0;
	uint32_t *send_peer = NULL, *recv_peer = NULL, *stamp_s = NULL, *stamp_r = NULL;
	char loc[256];
	int rc = 0;

	if (fast) {
		send_peer = fast_calloc(c->ng, sizeof *send_peer);
		recv_peer = fast_calloc(c->ng, sizeof *recv_peer);
		stamp_s = fast_calloc(c->ng, sizeof *stamp_s);
		stamp_r = fast_calloc(c->ng, sizeof *stamp_r);
		if (!send_peer || !recv_peer || !stamp_s || !stamp_r) {
			rc = fast_check_oom(c);
			goto out;
		}
	}
	for (uint32_t t = 0; t < e->nsteps && rc == 0; t++) {
		const struct fast_step *s = &e->steps[t];
		/* a rail step of k permutations: its expansion sends from each NIC
		 * to at most k NICs and into each from at most k, one per
		 * permutation (plan.h); one permutation is one-to-one, below */
		bool grouped = c->p->steps[t].kind == FAST_STEP_RAIL && c->p->steps[t].nperms > 1;
		for (uint32_t j = 0; j < s->nxfers && rc == 0; j++) {
			const struct fast_xfer *x = &e->xfers[s->xfer0 + j];
			uint64_t sum = 0;
			for (uint32_t k = 0; k < x->npieces; k++) {
				const struct fast_piece *pc = &e->pieces[x->piece0 + k];
				if (pc->off + pc->len > fast_check_msg_size(c, pc)) {
					char sz[96];
					fast_check_where(loc, sizeof loc, c, t, j, k);
					fast_check_size_name(sz, sizeof sz, c, pc);
					rc = fast_err_set(c->err, FAST_ECHECK,
							  "%s: outside the message (%s)", loc, sz);
					break;
				}
				if (s->kind == FAST_STEP_REDUCE && c->m->groups[pc->src].src == x->to) {
					fast_check_where(loc, sizeof loc, c, t, j, k);
					rc = fast_err_set(c->err, FAST_ECHECK,
							  "%s: GPU %u is the source of group %u, where the "
							  "sum is implicit (a reduce there is refused)",
							  loc, x->to, pc->src);
					break;
				}
				if (s->kind != FAST_STEP_REDUCE && x->from == x->to &&
				    (rc = local_copy(c, x, pc, t, j, k)) < 0)
					break;
				if (!fast_add_u64(sum, pc->len, &sum))
					sum = UINT64_MAX; /* cannot equal x->bytes */
			}
			if (rc)
				break;
			if (sum != x->bytes) {
				rc = fast_err_set(c->err, FAST_ECHECK,
						  "step %u transfer %u (GPU %u -> GPU %u): says %llu bytes "
						  "but its pieces add up to %llu", t, j, x->from, x->to,
						  (unsigned long long)x->bytes, (unsigned long long)sum);
				break;
			}
			if (s->tier == FAST_TIER_UP && x->from / c->G != x->to / c->G) {
				rc = fast_err_set(c->err, FAST_ECHECK,
						  "step %u transfer %u (GPU %u -> GPU %u): a tier up "
						  "transfer crosses servers (%u -> %u)", t, j, x->from,
						  x->to, x->from / c->G, x->to / c->G);
				break;
			}
			if (c->down && s->tier == FAST_TIER_OUT && s->kind != FAST_STEP_REDUCE &&
			    x->bytes > 0 && x->from != x->to &&
			    (rc = through_down_port(c, t, j, x)) < 0)
				break;
			if (!fast || s->tier != FAST_TIER_OUT || x->from == x->to || grouped)
				continue;
			/* one NIC per GPU: NIC-level one-to-one is GPU-level */
			if (stamp_s[x->from] == t + 1 && send_peer[x->from] != x->to) {
				rc = fast_err_set(c->err, FAST_ECHECK,
						  "step %u transfer %u (GPU %u -> GPU %u): the NIC of GPU "
						  "%u also sends to GPU %u in this step; a fast tier out "
						  "step must be one-to-one", t, j, x->from, x->to, x->from,
						  send_peer[x->from]);
				break;
			}
			if (stamp_r[x->to] == t + 1 && recv_peer[x->to] != x->from) {
				rc = fast_err_set(c->err, FAST_ECHECK,
						  "step %u transfer %u (GPU %u -> GPU %u): incast: the NIC "
						  "of GPU %u also receives from GPU %u in this step; a fast "
						  "tier out step must be one-to-one", t, j, x->from, x->to,
						  x->to, recv_peer[x->to]);
				break;
			}
			stamp_s[x->from] = stamp_r[x->to] = t + 1;
			send_peer[x->from] = x->to;
			recv_peer[x->to] = x->from;
		}
	}
out:
	free(send_peer);
	free(recv_peer);
	free(stamp_s);
	free(stamp_r);
	return rc;
}


/* --- FAST: no NIC shared by concurrent tier-out steps ---------------------
 * Tier-out steps that may run at the same time (neither reaches the other
 * through dependencies) must not share a sending NIC nor a receiving NIC:
 * packed stages run several rail steps at once, each on its own rails, and
 * this keeps a wrong packing from hiding incast.  Cheap: per GPU, the out
 * steps sending from (receiving at) it in the checker's topological order
 * (c->order, the walk's too); each consecutive pair must be ordered, the later reaching
 * the earlier (then all pairs are, by transitivity).  A direct dependency
 * settles the usual case; else a backward search over dependencies that
 * skips the steps placed before the target, each proof remembered. */

struct nic_order {
	const struct fast_plan *e;
	uint32_t *pos;    /* a step's place in the order */
	uint32_t *proven; /* proven[u] == t + 1: t reaches u */
	uint32_t *stamp, *stack;
	uint32_t query;
};

/* Whether step t waits for step u (transitively); u is placed before t. */
static bool reaches(struct nic_order *no, uint32_t t, uint32_t u)
{
	const struct fast_plan *e = no->e;
	const struct fast_step *s = &e->steps[t];
	size_t top = 0;

	if (no->proven[u] == t + 1)
		return true;
	for (uint32_t j = 0; j < s->ndeps; j++)
		if (e->deps[s->dep0 + j].step == u)
			goto yes;
	no->query++;
	no->stack[top++] = t;
	no->stamp[t] = no->query;
	while (top) {
		const struct fast_step *v = &e->steps[no->stack[--top]];
		for (uint32_t j = 0; j < v->ndeps; j++) {
			uint32_t w = e->deps[v->dep0 + j].step;
			if (w == u)
				goto yes;
			if (no->stamp[w] == no->query || no->pos[w] < no->pos[u])
				continue; /* seen, or placed before u: cannot reach it */
			no->stamp[w] = no->query;
			no->stack[top++] = w;
		}
	}
	return false;
yes:
	no->proven[u] = t + 1;
	return true;
}

int fast_check_nic_order(struct checker *c)
{
	const struct fast_plan *e = c->e;
	size_t n = e->nsteps;
	const uint32_t *order = c->order;
	uint32_t *last[2] = { NULL, NULL };
	struct nic_order no = { e, NULL, NULL, NULL, NULL, 0 };
	int rc = 0;

	if (strcmp(e->algo, "fast") != 0 || n < 2)
		return 0;
	no.pos = fast_calloc(n, sizeof *no.pos);
	no.proven = fast_calloc(n, sizeof *no.proven);
	no.stamp = fast_calloc(n, sizeof *no.stamp);
	no.stack = fast_calloc(n, sizeof *no.stack);
	last[0] = fast_calloc(c->ng, sizeof *last[0]); /* last sending step + 1 */
	last[1] = fast_calloc(c->ng, sizeof *last[1]); /* last receiving step + 1 */
	if (!no.pos || !no.proven || !no.stamp || !no.stack || !last[0] || !last[1]) {
		rc = fast_check_oom(c);
		goto out;
	}
	for (size_t k = 0; k < n; k++)
		no.pos[order[k]] = (uint32_t)k;
	for (size_t k = 0; k < n && rc == 0; k++) {
		uint32_t t = order[k];
		const struct fast_step *s = &e->steps[t];
		if (s->tier != FAST_TIER_OUT)
			continue;
		for (uint32_t j = 0; j < s->nxfers && rc == 0; j++) {
			const struct fast_xfer *x = &e->xfers[s->xfer0 + j];
			uint32_t gpu[2] = { x->from, x->to };
			if (x->from == x->to)
				continue;
			for (int d = 0; d < 2 && rc == 0; d++) {
				uint32_t prev = last[d][gpu[d]];
				if (prev && prev - 1 != t && !reaches(&no, t, prev - 1))
					rc = fast_err_set(c->err, FAST_ECHECK,
							  "steps %u and %u (tier out) may run at the same "
							  "time, neither waiting for the other, and both %s "
							  "the NIC of GPU %u%s; a fast plan's out steps "
							  "sharing a NIC must be ordered", prev - 1, t,
							  d ? "receive at" : "send from", gpu[d],
							  d ? " (incast)" : "");
				last[d][gpu[d]] = t + 1;
			}
		}
	}
out:
	free(no.pos);
	free(no.proven);
	free(no.stamp);
	free(no.stack);
	free(last[0]);
	free(last[1]);
	return rc;
}
