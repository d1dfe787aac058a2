/*
 * bound_tokens.c - fast_bound_compute on token traffic: a lower bound on the completion time
 * of every plan `fast check` accepts for the groups (traffic.h, plan.h
 * "Token plans"), token plans that relay a group through a third server,
 * replicate it anywhere or reduce partially on the way included, and plans
 * over the per-GPU byte matrix (they are token plans that send one copy
 * per destination GPU).
 *
 * What every such plan must move.  Per group g (src a on server A, b
 * bytes) and per byte of it, with "a value" meaning a piece of g (dispatch)
 * or a piece with some mask (combine):
 *  DISPATCH  leaves A at least once when Dest(g) has a GPU off A (Eg_A);
 *            enters every other server B with a GPU of Dest(g) at least
 *            once (In_B); leaves GPU a at least once unless Dest(g) = {a}
 *            (S_a); arrives at every d in Dest(g), d != a (R_d).
 *  COMBINE   the mirror: a value holding the contributions of server B
 *            (B != A) leaves B at least once (Eg_B); a value holding some
 *            remote contribution enters A at least once (In_A); a value
 *            holding d's contribution leaves d (S_d, d != a); a value
 *            arrives at a unless Dest(g) = {a} (R_a).
 * Different groups and different byte offsets are different bytes; the
 * same group at one offset is counted once however many servers or GPUs
 * need it, so these are the per-server deduplicated volumes.
 *
 * Where the crossing happens.  Dispatch: follow a byte from a to a remote
 * destination; its first tier-out transfer is sent by some GPU k of A.
 * If k != a the byte reached k over scale-up alone: it left a's scale-up
 * egress and entered k's (x_ak, "relayed to NIC k").  Combine mirrored:
 * the value at a that holds a remote contribution entered A last through
 * some NIC k; if k != a it went on to a over scale-up alone (y_ka).  Per
 * server s, with E_k the dispatch bytes of source GPU k that must leave s
 * and I_k the combine bytes for src GPU k that must enter s (the other is
 * 0), and per local GPU the loads ne, ni (NIC egress, ingress), ue, ui
 * (scale-up egress, ingress; on a mesh the sum over the GPU's G-1 links):
 *
 *   ne_k >= E_k - x_k. + x_.k        first exits through NIC k
 *   ni_k >= I_k - y_.k + y_k.        last entries through NIC k
 *   x_k. <= E_k,  y_.k <= I_k
 *   sum_k ne_k >= Eg_s,  sum_k ni_k >= In_s     (the per-server dedup)
 *   ne_k + ue_k >= S_k + x_.k        what leaves GPU k: its own bytes, and
 *                                    other GPUs' bytes sent out by NIC k
 *   ni_k + ui_k >= R_k + y_k.        what arrives at k: what it needs (over
 *                                    its NIC or scale-up: a copy may come
 *                                    over its own NIC), and bytes entering
 *                                    NIC k for other GPUs
 *   ue_k >= x_k. + y_k.,  ui_k >= x_.k + y_.k   relays cross scale-up
 *   sum_k ue_k = sum_k ui_k          a scale-up transfer leaves one GPU
 *                                    and enters another of the server
 *   sum_{k behind p} ne_k <= c_p tau,  the same for ni: scale-out port p
 *   ue_k, ui_k <= rho tau (switch), (G-1) rho tau (mesh)
 *
 * and minimise tau (= T x B_nic).  Ports as in bound.c: ne_k and ni_k are
 * what GPU k sends and receives over scale-out, "NIC k" above is GPU k's
 * port, and a port carries the loads of all its GPUs at c_p nominal NICs
 * (0 when down: its GPUs' bytes then cross over other GPUs' ports).  Each row holds for every accepted plan
 * (the terms added in one row are distinct bytes: other groups, or the
 * same group's bytes counted once); a relay's scale-up bytes are NOT added
 * to a GPU's own deliveries (the byte relayed to NIC k may be one k
 * needs), and replication over scale-up is charged only as what each
 * destination must receive.  Assumed, as in the byte LP: a non-blocking
 * core (an oversubscribed one adds sum_s Eg_s / core capacity), local
 * copies free, no latency or step overheads; REDUCE steps cost no compute
 * and no scale-up bytes here (a plan may send every contribution to src
 * unreduced, so no reduction is one every plan pays).  The bound is the
 * maximum over servers of their LP optimum (T = tau / B_nic); the closed
 * form is max_s max(Eg_s, In_s) / (C_s B_nic) (C_s: server s's NICs, G
 * healthy ones when one per GPU).  On a matrix whose groups all
 * have one destination the LP is a relaxation of the byte LP (bound.c) (its
 * optimum is at most that one's), which test_bound checks.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glpk.h>

#include "lib/bound/bound_internal.h"

struct tok_data {
	uint64_t *E, *I, *S, *R; /* ng each */
	uint64_t *Eg, *In;       /* N each */
};

struct tok_lp {
	glp_prob *lp;
	const struct fast_topo *topo;
	const struct fast_bound_ports *pp; /* the caller's: of, and a server's cap */
	uint32_t G;
	bool warm;
	double cap_up;   /* scale-up capacity of one GPU direction, in NIC units */
	double *cap;     /* P: the port capacities the rows hold now */
	/* rows, 1-based; the first of G each unless noted */
	int r_nic_out, r_nic_in, r_dir_out, r_dir_in, r_srv; /* r_srv: 2 rows */
	int r_send, r_recv, r_rel_out, r_rel_in, r_cons;     /* r_cons: 1 row */
	int r_cap;       /* 2P + 2G rows: ports' ne, ni, then GPUs' ue, ui */
	/* columns */
	int *c_x, *c_y;  /* [i*G+k], 0 on the diagonal */
	int c_ne, c_ni, c_ue, c_ui; /* first of G each */
	int *ind;
	double *val;
	int len;
};

static void tok_lp_free(struct tok_lp *L)
{
	if (L->lp)
		glp_delete_prob(L->lp);
	free(L->c_x);
	free(L->c_y);
	free(L->ind);
	free(L->val);
	free(L->cap);
	memset(L, 0, sizeof(*L));
}

/* Row under construction: terms are appended, tok_row sets it.  Every row
 * below names each column once (the families are disjoint). */
static void tok_term(struct tok_lp *L, int col, double v)
{
	L->ind[++L->len] = col;
	L->val[L->len] = v;
}

static void tok_row(struct tok_lp *L, int row)
{
	glp_set_mat_row(L->lp, row, L->len, L->ind, L->val);
	L->len = 0;
}

/* The row terms of relay family cols (L->c_x or L->c_y, [i*G+k]) with
 * sign v: out, the G-1 relays away from k (cols[k*G+m]); otherwise those
 * into k (cols[m*G+k]). */
static void tok_relays(struct tok_lp *L, const int *cols, uint32_t k, bool out, double v)
{
	for (uint32_t m = 0; m < L->G; m++)
		if (m != k)
			tok_term(L, cols[out ? k * L->G + m : m * L->G + k], v);
}

/* The capacity row of scale-out port p (ingress: in) at c nominal NICs:
 * its GPUs' loads - c tau <= 0.  With one GPU per port, GPU k's row as it
 * was before ports. */
static void tok_nic_row(struct tok_lp *L, uint32_t p, bool in, double c)
{
	int row = L->r_cap + (in ? (int)L->pp->P : 0) + (int)p;

	for (uint32_t k = 0; k < L->G; k++)
		if (L->pp->of[k] == p)
			tok_term(L, (in ? L->c_ni : L->c_ne) + (int)k, 1.0);
	if (c != 0)
		tok_term(L, 1, -c);
	tok_row(L, row);
	glp_set_row_bnds(L->lp, row, GLP_UP, 0.0, 0.0);
}

/* The capacity rows of GPU k, in the order they always came: its port's
 * (after the port's last GPU, at capacity 1: tok_lp_load sets each
 * server's), then its scale-up egress and ingress. */
static void tok_cap_rows(struct tok_lp *L, uint32_t k)
{
	uint32_t G = L->G, P = L->pp->P, p = L->pp->of[k];
	bool last = k + 1 == G || L->pp->of[k + 1] != p;

	for (int f = 0; f < 4; f++) {
		int row = L->r_cap + 2 * (int)P + (f - 2) * (int)G + (int)k;
		if (f < 2) {
			if (last)
				tok_nic_row(L, p, f == 1, 1.0);
			continue;
		}
		tok_term(L, (f == 2 ? L->c_ue : L->c_ui) + (int)k, 1.0);
		tok_term(L, 1, -L->cap_up);
		tok_row(L, row);
		glp_set_row_bnds(L->lp, row, GLP_UP, 0.0, 0.0);
	}
	if (last)
		L->cap[p] = 1.0;
}

static int tok_lp_build(struct tok_lp *L, const struct fast_topo *topo,
			const struct fast_bound_ports *pp, double cap_up, struct fast_err *err)
{
	uint32_t G = topo->gpus;
	size_t GG = (size_t)G * G;
	int n = 2, ncols;

	memset(L, 0, sizeof(*L));
	L->topo = topo;
	L->pp = pp;
	L->G = G;
	L->cap_up = cap_up;
	L->c_x = fast_calloc(GG, sizeof(int));
	L->c_y = fast_calloc(GG, sizeof(int));
	/* the longest row: the conservation row, 2G terms; a NIC row 2G - 1 */
	L->ind = fast_calloc(4 * (size_t)G + 8, sizeof(int));
	L->val = fast_calloc(4 * (size_t)G + 8, sizeof(double));
	L->cap = fast_calloc(pp->P ? pp->P : 1, sizeof(double));
	if (!L->c_x || !L->c_y || !L->ind || !L->val || !L->cap) {
		tok_lp_free(L);
		return fast_err_set(err, FAST_ENOMEM, "bound: out of memory for a %u-GPU LP", G);
	}
	L->lp = glp_create_prob();
	glp_set_obj_dir(L->lp, GLP_MIN);
	ncols = 1 + 2 * (int)(GG - G) + 4 * (int)G;
	glp_add_cols(L->lp, ncols);
	glp_set_obj_coef(L->lp, 1, 1.0);
	for (uint32_t i = 0; i < G; i++)
		for (uint32_t k = 0; k < G; k++)
			if (i != k)
				L->c_x[i * G + k] = n++;
	for (uint32_t k = 0; k < G; k++)
		for (uint32_t j = 0; j < G; j++)
			if (k != j)
				L->c_y[k * G + j] = n++;
	L->c_ne = n;
	L->c_ni = n + (int)G;
	L->c_ue = n + 2 * (int)G;
	L->c_ui = n + 3 * (int)G;
	for (int c = 1; c <= ncols; c++)
		glp_set_col_bnds(L->lp, c, GLP_LO, 0.0, 0.0);

	L->r_nic_out = fast_bound_add_rows(L->lp, (int)G);
	L->r_nic_in = fast_bound_add_rows(L->lp, (int)G);
	L->r_dir_out = fast_bound_add_rows(L->lp, (int)G);
	L->r_dir_in = fast_bound_add_rows(L->lp, (int)G);
	L->r_srv = fast_bound_add_rows(L->lp, 2);
	L->r_send = fast_bound_add_rows(L->lp, (int)G);
	L->r_recv = fast_bound_add_rows(L->lp, (int)G);
	L->r_rel_out = fast_bound_add_rows(L->lp, (int)G);
	L->r_rel_in = fast_bound_add_rows(L->lp, (int)G);
	L->r_cons = fast_bound_add_rows(L->lp, 1);
	L->r_cap = fast_bound_add_rows(L->lp, 2 * (int)pp->P + 2 * (int)G);
	for (uint32_t k = 0; k < G; k++) {
		int ik = (int)k;
		/* ne_k + x_k. - x_.k >= E_k */
		tok_term(L, L->c_ne + ik, 1.0);
		tok_relays(L, L->c_x, k, true, 1.0);
		tok_relays(L, L->c_x, k, false, -1.0);
		tok_row(L, L->r_nic_out + ik);
		/* ni_k + y_.k - y_k. >= I_k */
		tok_term(L, L->c_ni + ik, 1.0);
		tok_relays(L, L->c_y, k, false, 1.0);
		tok_relays(L, L->c_y, k, true, -1.0);
		tok_row(L, L->r_nic_in + ik);
		tok_relays(L, L->c_x, k, true, 1.0); /* <= E_k */
		tok_row(L, L->r_dir_out + ik);
		tok_relays(L, L->c_y, k, false, 1.0);  /* <= I_k */
		tok_row(L, L->r_dir_in + ik);
		/* ne_k + ue_k - x_.k >= S_k */
		tok_term(L, L->c_ne + ik, 1.0);
		tok_term(L, L->c_ue + ik, 1.0);
		tok_relays(L, L->c_x, k, false, -1.0);
		tok_row(L, L->r_send + ik);
		/* ni_k + ui_k - y_k. >= R_k */
		tok_term(L, L->c_ni + ik, 1.0);
		tok_term(L, L->c_ui + ik, 1.0);
		tok_relays(L, L->c_y, k, true, -1.0);
		tok_row(L, L->r_recv + ik);
		/* ue_k - x_k. - y_k. >= 0 ; ui_k - x_.k - y_.k >= 0 */
		tok_term(L, L->c_ue + ik, 1.0);
		tok_relays(L, L->c_x, k, true, -1.0);
		tok_relays(L, L->c_y, k, true, -1.0);
		tok_row(L, L->r_rel_out + ik);
		glp_set_row_bnds(L->lp, L->r_rel_out + ik, GLP_LO, 0.0, 0.0);
		tok_term(L, L->c_ui + ik, 1.0);
		tok_relays(L, L->c_x, k, false, -1.0);
		tok_relays(L, L->c_y, k, false, -1.0);
		tok_row(L, L->r_rel_in + ik);
		glp_set_row_bnds(L->lp, L->r_rel_in + ik, GLP_LO, 0.0, 0.0);
		/* capacities: load - c tau <= 0 */
		tok_cap_rows(L, k);
	}
	for (uint32_t k = 0; k < G; k++)
		tok_term(L, L->c_ne + (int)k, 1.0);
	tok_row(L, L->r_srv);
	for (uint32_t k = 0; k < G; k++)
		tok_term(L, L->c_ni + (int)k, 1.0);
	tok_row(L, L->r_srv + 1);
	for (uint32_t k = 0; k < G; k++) {
		tok_term(L, L->c_ue + (int)k, 1.0);
		tok_term(L, L->c_ui + (int)k, -1.0);
	}
	tok_row(L, L->r_cons);
	glp_set_row_bnds(L->lp, L->r_cons, GLP_FX, 0.0, 0.0);
	glp_scale_prob(L->lp, GLP_SF_AUTO);
	return 0;
}

/* Right-hand sides of server s, divided by scale, and the port rows of
 * the capacities in L->pp (loaded for s) where they differ from the
 * rows'. */
static void tok_lp_load(struct tok_lp *L, const struct tok_data *d, uint32_t s, double scale)
{
	uint32_t G = L->G;

	for (uint32_t p = 0; p < L->pp->P; p++)
		if (L->pp->cap[p] != L->cap[p]) {
			L->cap[p] = L->pp->cap[p];
			tok_nic_row(L, p, false, L->cap[p]);
			tok_nic_row(L, p, true, L->cap[p]);
		}
	for (uint32_t k = 0; k < G; k++) {
		size_t g = (size_t)s * G + k;
		int ik = (int)k;
		glp_set_row_bnds(L->lp, L->r_nic_out + ik, GLP_LO, (double)d->E[g] / scale, 0.0);
		glp_set_row_bnds(L->lp, L->r_nic_in + ik, GLP_LO, (double)d->I[g] / scale, 0.0);
		glp_set_row_bnds(L->lp, L->r_dir_out + ik, GLP_UP, 0.0, (double)d->E[g] / scale);
		glp_set_row_bnds(L->lp, L->r_dir_in + ik, GLP_UP, 0.0, (double)d->I[g] / scale);
		glp_set_row_bnds(L->lp, L->r_send + ik, GLP_LO, (double)d->S[g] / scale, 0.0);
		glp_set_row_bnds(L->lp, L->r_recv + ik, GLP_LO, (double)d->R[g] / scale, 0.0);
	}
	glp_set_row_bnds(L->lp, L->r_srv, GLP_LO, (double)d->Eg[s] / scale, 0.0);
	glp_set_row_bnds(L->lp, L->r_srv + 1, GLP_LO, (double)d->In[s] / scale, 0.0);
}

/* The capacity row with the largest dual x tau coefficient (ties: the
 * first, in the order NIC egress, NIC ingress, scale-up egress, ingress). */
static void tok_lp_binding(const struct tok_lp *L, bool mesh, uint32_t server, char *buf,
			   size_t len)
{
	static const char *const dir[4] = { "egress", "ingress", "egress", "ingress" };
	uint32_t P = L->pp->P, n[4] = { P, P, L->G, L->G };
	double best = -1.0;
	int bf = 0, row = L->r_cap;
	uint32_t bk = 0;
	char what[48];

	for (int f = 0; f < 4; f++)
		for (uint32_t k = 0; k < n[f]; k++, row++) {
			double w = fabs(glp_get_row_dual(L->lp, row)) * (f < 2 ? L->cap[k] : L->cap_up);
			if (w > best + 1e-9) {
				best = w;
				bf = f;
				bk = k;
			}
		}
	if (bf < 2)
		fast_topo_port_name(L->topo, bk, what, sizeof what);
	else
		snprintf(what, sizeof what, "%s %u", mesh ? "scale-up links of GPU" : "scale-up port",
			 bk);
	snprintf(buf, len, "server %u %s %s", server, what, dir[bf]);
}

/* Fill d from m's groups (see the comment above for what each counts). */
static int tok_data_fill(struct tok_data *d, const struct fast_matrix *m, uint32_t N, uint32_t G,
			 struct fast_err *err)
{
	uint32_t ng = N * G;
	bool combine = m->kind == FAST_TRAFFIC_COMBINE;
	/* dispatch: the source side leaves, destinations enter; combine
	 * the other way round */
	uint64_t *src_server = combine ? d->In : d->Eg, *dst_server = combine ? d->Eg : d->In;
	uint64_t *src_cross = combine ? d->I : d->E;
	uint64_t *src_any = combine ? d->R : d->S, *dst_any = combine ? d->S : d->R;

	for (uint32_t gi = 0; gi < m->ngroups; gi++) {
		const struct fast_group *g = &m->groups[gi];
		uint64_t b = fast_group_bytes(m, gi);
		uint32_t A, last = UINT32_MAX;
		bool remote = false, other = false;

		if (g->src >= ng || g->dst0 > m->ndsts || g->ndst > m->ndsts - g->dst0)
			return fast_err_set(err, FAST_EINPUT,
					    "bound: group %u: GPUs or destinations out of range", gi);
		A = g->src / G;
		for (uint32_t i = 0; i < g->ndst; i++) {
			uint32_t dgpu = m->dsts[g->dst0 + i], B;
			if (dgpu >= ng)
				return fast_err_set(err, FAST_EINPUT,
						    "bound: group %u: destination GPU %u is not below %u",
						    gi, dgpu, ng);
			B = dgpu / G;
			if (dgpu != g->src) {
				other = true;
				dst_any[dgpu] += b;
			}
			/* destinations ascend, so a server's GPUs are adjacent */
			if (B != A && B != last)
				dst_server[B] += b;
			if (B != A)
				remote = true;
			last = B;
		}
		if (remote) {
			src_cross[g->src] += b;
			src_server[A] += b;
		}
		if (other)
			src_any[g->src] += b;
	}
	return 0;
}

/* Allocate d (one block, freed with free(d->E)) and fill it from m. */
static int tok_data_new(struct tok_data *d, const struct fast_matrix *m, uint32_t N, uint32_t G,
			struct fast_err *err)
{
	size_t ng = (size_t)N * G;
	uint64_t *buf = fast_calloc(4 * ng + 2 * (size_t)N, sizeof(uint64_t));
	int rc;

	if (!buf)
		return fast_err_set(err, FAST_ENOMEM, "bound: out of memory");
	d->E = buf;
	d->I = buf + ng;
	d->S = buf + 2 * ng;
	d->R = buf + 3 * ng;
	d->Eg = buf + 4 * ng;
	d->In = d->Eg + N;
	if ((rc = tok_data_fill(d, m, N, G, err)) < 0)
		free(buf);
	return rc;
}

/* The closed form of token traffic into b (closed_* fields). */
static void tok_closed(struct fast_bound *b, const struct tok_data *d, const struct fast_topo *topo)
{
	double Bn = fast_tier_Bps(&topo->out);

	for (uint32_t s = 0; s < topo->servers; s++)
		fast_bound_closed_fold(b, s, d->Eg[s], d->In[s], fast_topo_server_nics_up(topo, s) * Bn);
}

/* The largest datum of server s (0: nothing moves there). */
static uint64_t tok_scale(const struct tok_data *d, uint32_t s, uint32_t G)
{
	uint64_t mx = d->Eg[s] > d->In[s] ? d->Eg[s] : d->In[s];
	for (size_t g = (size_t)s * G; g < (size_t)(s + 1) * G; g++) {
		uint64_t v[4] = { d->E[g], d->I[g], d->S[g], d->R[g] };
		for (int j = 0; j < 4; j++)
			if (v[j] > mx)
				mx = v[j];
	}
	return mx;
}

static int bound_tokens(const struct fast_topo *topo, const struct fast_matrix *m,
			struct fast_bound *out, struct fast_err *err)
{
	uint32_t N = topo->servers, G = topo->gpus;
	bool mesh = topo->up_kind == FAST_UP_MESH;
	double Bn = fast_tier_Bps(&topo->out), Bu = fast_tier_Bps(&topo->up);
	struct fast_bound b;
	struct fast_bound_ports pp;
	struct tok_data d;
	struct tok_lp L;
	uint64_t total_cross = 0;
	double t0;
	int rc;

	if (!(Bn > 0) || !(Bu > 0))
		return fast_err_set(err, FAST_EINPUT, "bound: bandwidths must be > 0");
	memset(&b, 0, sizeof(b));
	memset(&L, 0, sizeof(L));
	snprintf(b.binding, sizeof(b.binding), "none (no traffic over links)");
	if ((rc = fast_bound_ports_init(&pp, topo, err)) < 0)
		return rc;
	if ((rc = tok_data_new(&d, m, N, G, err)) < 0) {
		fast_bound_ports_free(&pp);
		return rc;
	}
	tok_closed(&b, &d, topo);
	for (uint32_t s = 0; s < N; s++)
		total_cross += d.Eg[s];

	/* every server with data: they are small LPs (G^2 columns), solved
	 * warm one after the other */
	t0 = fast_now();
	glp_term_out(GLP_OFF);
	for (uint32_t s = 0; rc == 0 && s < N; s++) {
		uint64_t mx = tok_scale(&d, s, G);
		double t;
		if (mx == 0)
			continue;
		if (!L.lp && (rc = tok_lp_build(&L, topo, &pp,
						(mesh ? (double)(G - 1) : 1.0) * Bu / Bn, err)) < 0)
			break;
		fast_bound_ports_load(&pp, topo, s);
		tok_lp_load(&L, &d, s, (double)mx);
		if ((rc = fast_bound_lp_solve(L.lp, &L.warm, s, err)) < 0)
			break;
		b.lps_solved++;
		t = glp_get_obj_val(L.lp) * (double)mx / Bn;
		/* ties go to the first server, whatever the rounding */
		if (t > b.lp_s * (1 + 1e-9)) {
			b.lp_s = t;
			b.lp_server = s;
			tok_lp_binding(&L, mesh, s, b.binding, sizeof(b.binding));
		}
	}
	tok_lp_free(&L);
	fast_bound_ports_free(&pp);
	b.solve_s = fast_now() - t0;
	free(d.E);
	if (rc < 0)
		return rc;
	if ((rc = fast_bound_finish(&b, topo, total_cross, err)) < 0)
		return rc;
	*out = b;
	return 0;
}

static int bound_any(const struct fast_topo *topo, const struct fast_matrix *m, bool closed_only,
		     struct fast_bound *out, struct fast_err *err)
{
	struct tok_data d;
	int rc;

	if (m->kind == FAST_TRAFFIC_BYTES && closed_only) {
		fast_bound_bytes_closed(topo, m->bytes, out);
		return 0;
	}
	if (m->kind == FAST_TRAFFIC_BYTES)
		return fast_bound_bytes(topo, m->bytes, out, err);
	if (!closed_only)
		return bound_tokens(topo, m, out, err);
	if ((rc = tok_data_new(&d, m, topo->servers, topo->gpus, err)) < 0)
		return rc;
	memset(out, 0, sizeof(*out));
	tok_closed(out, &d, topo);
	free(d.E);
	return 0;
}

int fast_bound_compute(const struct fast_topo *topo, const struct fast_matrix *m, bool closed_only,
		       struct fast_bound *out, struct fast_err *err)
{
	struct fast_bound b;
	int rc;

	if ((rc = bound_any(topo, m, closed_only, &b, err)) < 0)
		return rc;
	fast_bound_latency(&b, topo);
	*out = b;
	return 0;
}
