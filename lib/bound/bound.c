/*
 * bound.c - lower bounds on the completion time of any schedule
 * (docs/DESIGN.md, "Lower bounds").  With bound_tokens.c, the only user of
 * GLPK in the project.
 *
 * Ports (topo.h, "NICs and ports"): a server reaches scale-out through P =
 * min(K, G) ports; local GPU i's tier-out transfers go through its port
 * p(i), shared by the GPUs behind it when K < G, striped over several NICs
 * when K > G.  Capacities are counted in nominal NICs (B_nic = scale_out's
 * effective rate): port p carries c_p B_nic per direction, c_p the sum of
 * its NICs' rate fractions (1 per healthy NIC, 0 when its NICs are down);
 * a server carries C_s B_nic, C_s = sum_p c_p.  One NIC per GPU, all
 * healthy: c_p = 1, C_s = G, the numbers this file computed before NICs
 * could differ.
 *
 * Closed form: max over servers of max(cross-server egress, ingress) / (C_s
 * B_nic): scale-up is assumed free, so a server's ports are perfectly
 * balanced (egress and ingress of a port run at the same rate).
 *
 * LP: with a non-blocking core, servers interact only through their ports,
 * so the problem separates into one LP per server.  For server s with local
 * GPUs 0..G-1 let E_i / I_i be GPU i's cross-server egress / ingress bytes
 * and D_ij (i != j) its intra-server bytes.  Variables (bytes, scaled):
 *
 *   x_ik  (i != k)  egress bytes of GPU i whose first tier-out send is
 *                   GPU k's (relayed i -> k over scale-up); E_i - sum_k
 *                   x_ik leave from GPU i itself, so sum_k x_ik <= E_i;
 *   y_kj  (k != j)  ingress bytes for GPU j whose last tier-out arrival is
 *                   at GPU k, forwarded k -> j; sum_k y_kj <= I_j;
 *   tau             the time, in bytes one nominal NIC carries (T * B_nic);
 *
 *   port p egress   sum_{k behind p} (E_k - sum_m x_km + sum_i x_ik) <= c_p tau
 *   port p ingress  sum_{k behind p} (I_k - sum_m y_mk + sum_j y_kj) <= c_p tau
 *
 * One row per port, summing its GPUs' loads (a relay between two GPUs of
 * one port cancels and is left out of the row): GPUs sharing a NIC share
 * its rate however a plan divides it among them, so a row per GPU at a
 * share of the port would not be a bound.  A port that is down (c_p = 0)
 * forces every byte of its GPUs to relay over scale-up (x_k. = E_k, no
 * x_.k).  The relays stay per GPU: they are scale-up traffic.
 *
 * Scale-up, switch: GPU i's port carries x_i., y_i. and D_i. out and x_.i,
 * y_.i and D_.i in; every port direction <= rho * tau (rho = B_up / B_nic).
 * Scale-up, mesh: every ordered pair (s, v) has demand D_sv + x_sv + y_sv
 * (relays to GPU v, forwards from GPU s, intra bytes) routed as a
 * multi-commodity flow aggregated by source, over ANY paths of the mesh
 * (f^s_ab on link a -> b, b != s); every directed link <= rho * tau.
 * O(G^2) variables per server on a switch, O(G^3) on a mesh.
 *
 * Every correct plan is feasible: a byte that crosses servers is sent by a
 * tier-out transfer from some GPU of its source server (the simulator runs
 * it through that GPU's port), which it reached over scale-up if that GPU
 * is not its source, and received by one at some GPU of its destination
 * server; relaying over more than one hop, or a tier-out transfer inside a
 * server, only adds load; a server's ports carry at least its own traffic.
 * Intra-server bytes travel over scale-up (the plan IR's contract); the
 * diagonal is free.  The checker refuses a tier-out transfer at a down
 * port, which the c_p = 0 row assumes.
 *
 * The constraint matrix depends only on G, the ports, the scale-up kind,
 * rho and the servers' port capacities; the data appear in the right-hand
 * sides.  So one GLPK problem is built once and re-solved per server with
 * new row bounds (and, on a server whose port capacities differ from the
 * last one's, new port rows), warm-started with the dual simplex from the
 * previous optimal basis (still dual feasible when only bounds changed).
 * Right-hand sides are divided by the server's largest datum, so they lie
 * in [0, 1]; GLPK's automatic scaling handles the rho column.
 *
 * Only servers that can hold the maximum are solved: each server gets an
 * upper bound from an explicit feasible point (ports balanced to their
 * share of the server's capacity, surpluses relayed proportionally to
 * deficits, see srv_upper), servers are solved in decreasing order of it,
 * and the loop stops when the next upper bound does not exceed the best
 * optimum found.  The result is the same maximum as solving every LP; with
 * scale-up several times faster than a NIC, usually one LP is solved.
 *
 * An oversubscribed core (core_oversub > 1) adds one global constraint to
 * the LP bound: all cross-server bytes / (sum_s C_s * B_nic / oversub),
 * valid whether the simulator models the core as one pool or per-server
 * uplinks.
 *
 * Token traffic (dispatch and combine groups) has its own per-server LP in
 * bound_tokens.c: what every accepted token plan must move once
 * deduplicated per server; fast_bound_compute (there) picks the LP by the
 * matrix's kind.  bound_internal.h is what the files share
 * (bound_shared.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glpk.h>

#include "lib/bound/bound_internal.h"

/* Per-server data, in bytes (uint64 sums: the traffic loader guarantees
 * row, column and total sums fit in 64 bits). */
struct srv_data {
	uint64_t *E, *I;   /* G: cross-server egress / ingress per local GPU */
	uint64_t *U, *V;   /* G: intra-server egress / ingress (no diagonal) */
	uint64_t *Dloc;    /* G x G intra block, diagonal zeroed */
	uint64_t egress, ingress;
};

struct srv_lp {
	glp_prob *lp;
	const struct fast_topo *topo;
	const struct fast_bound_ports *pp; /* the caller's: of, n, and the server's cap */
	uint32_t G;
	bool mesh;
	double rho;
	bool warm;        /* a valid optimal basis from a previous solve */
	double *cap;      /* P: the port capacities the NIC rows hold now */
	/* rows (1-based) */
	int r_nic_out, r_nic_in;   /* scale-out ports: first of P each */
	int r_dir_out, r_dir_in;   /* first of G each */
	int r_up_out, r_up_in;     /* switch: first of G each */
	int *r_link;      /* mesh: [a*G+b], 0 on the diagonal */
	int *r_cons;      /* mesh: [s*G+v], 0 on the diagonal */
	/* columns (1-based) */
	int *c_x, *c_y;   /* [i*G+k], 0 on the diagonal */
	/* scratch for building rows */
	int *ind;
	double *val;
};

void fast_bound_bytes_closed(const struct fast_topo *topo, const uint64_t *D,
			     struct fast_bound *out)
{
	uint32_t N = topo->servers, G = topo->gpus, ng = N * G;
	double Bn = fast_tier_Bps(&topo->out);

	memset(out, 0, sizeof(*out));
	for (uint32_t s = 0; s < N; s++) {
		uint64_t eg = 0, in = 0;
		/* row-major over whole rows (egress) and over the server's G
		 * columns of every row (ingress): no column walks */
		for (uint32_t i = 0; i < ng; i++) {
			const uint64_t *row = D + (size_t)i * ng;
			if (i / G == s) {
				for (uint32_t d = 0; d < ng; d++)
					if (d / G != s)
						eg += row[d];
			} else {
				for (uint32_t j = s * G; j < (s + 1) * G; j++)
					in += row[j];
			}
		}
		fast_bound_closed_fold(out, s, eg, in, fast_topo_server_nics_up(topo, s) * Bn);
	}
}

/* --- building the per-server LP ------------------------------------------ */

static void set_row(struct srv_lp *L, int row, int len)
{
	/* glp_set_mat_row aborts on duplicate column indices: the callers
	 * build each row from disjoint variable families (see the file
	 * comment), so no index repeats. */
	glp_set_mat_row(L->lp, row, len, L->ind, L->val);
}

static void srv_lp_free(struct srv_lp *L)
{
	if (L->lp)
		glp_delete_prob(L->lp);
	free(L->r_link);
	free(L->r_cons);
	free(L->c_x);
	free(L->c_y);
	free(L->ind);
	free(L->val);
	free(L->cap);
	memset(L, 0, sizeof(*L));
}

/* The egress (out) or ingress row of scale-out port p at capacity c
 * (in NICs): for the GPUs k behind p, the relays into k from GPUs behind
 * other ports less those away from k to them, - c tau <= -(the GPUs'
 * cross-server bytes) (bounds set per server).  With one GPU per port it
 * is NIC k's row as it was before ports: the same terms in the same
 * order. */
static void nic_row(struct srv_lp *L, uint32_t p, bool out, double c)
{
	const uint32_t *of = L->pp->of;
	const int *col = out ? L->c_x : L->c_y;
	uint32_t G = L->G;
	int len = 0;

	if (c != 0)
		L->ind[++len] = 1, L->val[len] = -c;
	for (uint32_t k = 0; k < G; k++) {
		if (of[k] != p)
			continue;
		/* egress: x_ik in, x_km away; ingress: y_kj forwarded, y_mk in */
		for (uint32_t i = 0; i < G; i++)
			if (of[i] != p)
				L->ind[++len] = out ? col[i * G + k] : col[k * G + i], L->val[len] = 1.0;
		for (uint32_t m = 0; m < G; m++)
			if (of[m] != p)
				L->ind[++len] = out ? col[k * G + m] : col[m * G + k], L->val[len] = -1.0;
	}
	set_row(L, (out ? L->r_nic_out : L->r_nic_in) + (int)p, len);
}

/* Port rows (at capacity 1: srv_lp_load sets each server's), and what a
 * GPU relays away or takes in within its own egress and ingress.  A
 * port's rows are set after its last GPU's turn, so that with one GPU per
 * port the rows come in the order they always did. */
static void add_nic_rows(struct srv_lp *L)
{
	uint32_t G = L->G, P = L->pp->P;
	const uint32_t *of = L->pp->of;

	L->r_nic_out = fast_bound_add_rows(L->lp, (int)P);
	L->r_nic_in = fast_bound_add_rows(L->lp, (int)P);
	L->r_dir_out = fast_bound_add_rows(L->lp, (int)G);
	L->r_dir_in = fast_bound_add_rows(L->lp, (int)G);
	for (uint32_t k = 0; k < G; k++) {
		int len = 0;
		if (k + 1 == G || of[k + 1] != of[k]) {
			L->cap[of[k]] = 1.0;
			nic_row(L, of[k], true, 1.0);
			nic_row(L, of[k], false, 1.0);
		}
		/* what GPU k relays away cannot exceed its egress */
		for (uint32_t m = 0; m < G; m++)
			if (m != k)
				L->ind[++len] = L->c_x[k * G + m], L->val[len] = 1.0;
		set_row(L, L->r_dir_out + (int)k, len);
		len = 0;
		for (uint32_t m = 0; m < G; m++)
			if (m != k)
				L->ind[++len] = L->c_y[m * G + k], L->val[len] = 1.0;
		set_row(L, L->r_dir_in + (int)k, len);
	}
}

/* Scale-up switch ports (bounds set per server):
 * port egress i: x_i. + y_i. - rho tau <= -U_i
 * port ingress j: x_.j + y_.j - rho tau <= -V_j */
static void add_switch_rows(struct srv_lp *L)
{
	uint32_t G = L->G;
	double rho = L->rho;

	L->r_up_out = fast_bound_add_rows(L->lp, (int)G);
	L->r_up_in = fast_bound_add_rows(L->lp, (int)G);
	for (uint32_t i = 0; i < G; i++) {
		int len = 0;
		L->ind[++len] = 1, L->val[len] = -rho;
		for (uint32_t k = 0; k < G; k++)
			if (k != i) {
				L->ind[++len] = L->c_x[i * G + k], L->val[len] = 1.0;
				L->ind[++len] = L->c_y[i * G + k], L->val[len] = 1.0;
			}
		set_row(L, L->r_up_out + (int)i, len);
		len = 0;
		L->ind[++len] = 1, L->val[len] = -rho;
		for (uint32_t k = 0; k < G; k++)
			if (k != i) {
				L->ind[++len] = L->c_x[k * G + i], L->val[len] = 1.0;
				L->ind[++len] = L->c_y[k * G + i], L->val[len] = 1.0;
			}
		set_row(L, L->r_up_in + (int)i, len);
	}
}

/* Mesh links and the flow conservation of each commodity (c_f: the
 * column of f^s_ab at (s * G + a) * G + b). */
static void add_mesh_rows(struct srv_lp *L, const int *c_f)
{
	uint32_t G = L->G;
	double rho = L->rho;

	/* link a->b: sum_{s != b} f^s_ab - rho tau <= 0 */
	for (uint32_t a = 0; a < G; a++)
		for (uint32_t b = 0; b < G; b++) {
			int len = 0;
			if (a == b)
				continue;
			L->r_link[a * G + b] = fast_bound_add_rows(L->lp, 1);
			L->ind[++len] = 1, L->val[len] = -rho;
			for (uint32_t s = 0; s < G; s++)
				if (s != b)
					L->ind[++len] = c_f[((size_t)s * G + a) * G + b],
					L->val[len] = 1.0;
			set_row(L, L->r_link[a * G + b], len);
			glp_set_row_bnds(L->lp, L->r_link[a * G + b], GLP_UP, 0.0, 0.0);
		}
	/* conservation of commodity s at v != s:
	 * in - out - x_sv - y_sv = D_sv */
	for (uint32_t s = 0; s < G; s++)
		for (uint32_t v = 0; v < G; v++) {
			int len = 0;
			if (s == v)
				continue;
			L->r_cons[s * G + v] = fast_bound_add_rows(L->lp, 1);
			for (uint32_t a = 0; a < G; a++)
				if (a != v)
					L->ind[++len] = c_f[((size_t)s * G + a) * G + v],
					L->val[len] = 1.0;
			for (uint32_t b = 0; b < G; b++)
				if (b != v && b != s)
					L->ind[++len] = c_f[((size_t)s * G + v) * G + b],
					L->val[len] = -1.0;
			L->ind[++len] = L->c_x[s * G + v], L->val[len] = -1.0;
			L->ind[++len] = L->c_y[s * G + v], L->val[len] = -1.0;
			set_row(L, L->r_cons[s * G + v], len);
		}
}

/* The LP of topo's servers (pp: its ports, the caller's, outliving L). */
static int srv_lp_build(struct srv_lp *L, const struct fast_topo *topo,
			const struct fast_bound_ports *pp, struct fast_err *err)
{
	uint32_t G = topo->gpus;
	size_t GG = (size_t)G * G;
	/* the longest row: a link row has G-1 flows + tau; a conservation
	 * row 2G + 2; a switch port row 2G - 1; the row of a port behind
	 * which n GPUs sit 2n(G - n) + 1 <= G^2 / 2 + 1 */
	size_t row_max = GG / 2 + 4 * (size_t)G + 8;
	bool mesh = topo->up_kind == FAST_UP_MESH;
	int ncols, *c_f = NULL;
	int n;

	memset(L, 0, sizeof(*L));
	L->topo = topo;
	L->pp = pp;
	L->G = G;
	L->mesh = mesh;
	L->rho = fast_tier_Bps(&topo->up) / fast_tier_Bps(&topo->out);
	L->c_x = fast_calloc(GG, sizeof(int));
	L->c_y = fast_calloc(GG, sizeof(int));
	L->r_link = fast_calloc(GG, sizeof(int));
	L->r_cons = fast_calloc(GG, sizeof(int));
	L->ind = fast_calloc(row_max, sizeof(int));
	L->val = fast_calloc(row_max, sizeof(double));
	L->cap = fast_calloc(pp->P ? pp->P : 1, sizeof(double));
	if (mesh)
		c_f = fast_calloc(GG * G, sizeof(int));
	if (!L->c_x || !L->c_y || !L->r_link || !L->r_cons || !L->ind || !L->val || !L->cap ||
	    (mesh && !c_f)) {
		free(c_f);
		srv_lp_free(L);
		return fast_err_set(err, FAST_ENOMEM, "bound: out of memory for a %u-GPU LP", G);
	}

	L->lp = glp_create_prob();
	glp_set_obj_dir(L->lp, GLP_MIN);

	/* columns: tau, x, y, (mesh) f */
	ncols = 1 + 2 * (int)(GG - G) + (mesh ? (int)(G * (GG - G) - G * (G - 1)) : 0);
	glp_add_cols(L->lp, ncols);
	glp_set_col_bnds(L->lp, 1, GLP_LO, 0.0, 0.0);
	glp_set_obj_coef(L->lp, 1, 1.0);
	n = 2;
	for (uint32_t i = 0; i < G; i++)
		for (uint32_t k = 0; k < G; k++)
			if (i != k)
				L->c_x[i * G + k] = n++;
	for (uint32_t k = 0; k < G; k++)
		for (uint32_t j = 0; j < G; j++)
			if (k != j)
				L->c_y[k * G + j] = n++;
	if (mesh)
		for (uint32_t s = 0; s < G; s++)
			for (uint32_t a = 0; a < G; a++)
				for (uint32_t b = 0; b < G; b++)
					if (a != b && b != s)
						c_f[((size_t)s * G + a) * G + b] = n++;
	for (int c = 2; c < n; c++)
		glp_set_col_bnds(L->lp, c, GLP_LO, 0.0, 0.0);

	add_nic_rows(L);
	if (!mesh)
		add_switch_rows(L);
	else
		add_mesh_rows(L, c_f);
	free(c_f);
	glp_scale_prob(L->lp, GLP_SF_AUTO);
	return 0;
}

/* Set the right-hand sides for server data d, divided by scale, and the
 * port rows of the capacities in L->pp (loaded for d's server) where they
 * differ from those the rows hold. */
static void srv_lp_load(struct srv_lp *L, const struct srv_data *d, double scale)
{
	const struct fast_bound_ports *pp = L->pp;
	uint32_t G = L->G;

	for (uint32_t p = 0; p < pp->P; p++) {
		uint64_t e = 0, i = 0;
		if (pp->cap[p] != L->cap[p]) {
			L->cap[p] = pp->cap[p];
			nic_row(L, p, true, L->cap[p]);
			nic_row(L, p, false, L->cap[p]);
		}
		for (uint32_t k = 0; k < G; k++)
			if (pp->of[k] == p) {
				e += d->E[k];
				i += d->I[k];
			}
		glp_set_row_bnds(L->lp, L->r_nic_out + (int)p, GLP_UP, 0.0, -(double)e / scale);
		glp_set_row_bnds(L->lp, L->r_nic_in + (int)p, GLP_UP, 0.0, -(double)i / scale);
	}
	for (uint32_t k = 0; k < G; k++) {
		glp_set_row_bnds(L->lp, L->r_dir_out + (int)k, GLP_UP, 0.0, (double)d->E[k] / scale);
		glp_set_row_bnds(L->lp, L->r_dir_in + (int)k, GLP_UP, 0.0, (double)d->I[k] / scale);
		if (!L->mesh) {
			glp_set_row_bnds(L->lp, L->r_up_out + (int)k, GLP_UP, 0.0,
					 -(double)d->U[k] / scale);
			glp_set_row_bnds(L->lp, L->r_up_in + (int)k, GLP_UP, 0.0,
					 -(double)d->V[k] / scale);
		}
	}
	if (L->mesh)
		for (uint32_t s = 0; s < G; s++)
			for (uint32_t v = 0; v < G; v++)
				if (s != v)
					glp_set_row_bnds(L->lp, L->r_cons[s * G + v], GLP_FX,
							 (double)d->Dloc[s * G + v] / scale, 0.0);
}

static int srv_lp_solve(struct srv_lp *L, uint32_t server, struct fast_err *err)
{
	return fast_bound_lp_solve(L->lp, &L->warm, server, err);
}

/* The binding resource of the last solve: the capacity row whose dual,
 * times its tau coefficient, is largest (the share of T it accounts for);
 * ties go to the first row in the order scale-out port egress, ingress,
 * scale-up ports or links.  A port is named by its NICs ("NIC 3", "NICs
 * 2-3"). */
static void srv_lp_binding(const struct srv_lp *L, uint32_t server, char *buf, size_t len)
{
	uint32_t G = L->G;
	double best = -1.0;
	char kind[48] = "", nic[32];

#define CONSIDER(row, coef, ...)                                               \
	do {                                                                    \
		double w_ = fabs(glp_get_row_dual(L->lp, (row))) * (coef);       \
		if (w_ > best + 1e-9) {                                         \
			best = w_;                                              \
			snprintf(kind, sizeof(kind), __VA_ARGS__);              \
		}                                                               \
	} while (0)

	for (int in = 0; in < 2; in++)
		for (uint32_t p = 0; p < L->pp->P; p++) {
			fast_topo_port_name(L->topo, p, nic, sizeof nic);
			CONSIDER((in ? L->r_nic_in : L->r_nic_out) + (int)p, L->cap[p], "%s %s", nic,
				 in ? "ingress" : "egress");
		}
	if (!L->mesh) {
		for (uint32_t k = 0; k < G; k++)
			CONSIDER(L->r_up_out + (int)k, L->rho, "scale-up port %u egress", k);
		for (uint32_t k = 0; k < G; k++)
			CONSIDER(L->r_up_in + (int)k, L->rho, "scale-up port %u ingress", k);
	} else {
		for (uint32_t a = 0; a < G; a++)
			for (uint32_t b = 0; b < G; b++)
				if (a != b)
					CONSIDER(L->r_link[a * G + b], L->rho, "link %u->%u", a, b);
	}
#undef CONSIDER
	snprintf(buf, len, "server %u %s", server, kind);
}

/* --- per-server data ------------------------------------------------------ */

static void srv_data_fill(struct srv_data *d, const uint64_t *D, const uint64_t *rowsum,
			  const uint64_t *colsum, uint32_t ng, uint32_t G, uint32_t s)
{
	uint32_t base = s * G;

	d->egress = d->ingress = 0;
	memset(d->U, 0, G * sizeof(uint64_t));
	memset(d->V, 0, G * sizeof(uint64_t));
	for (uint32_t i = 0; i < G; i++) {
		uint64_t out_local = 0, in_local = 0;
		for (uint32_t j = 0; j < G; j++) {
			uint64_t b = i == j ? 0 : D[(size_t)(base + i) * ng + base + j];
			d->Dloc[i * G + j] = b;
			d->U[i] += b;
			d->V[j] += b;
		}
		for (uint32_t j = 0; j < G; j++) {
			out_local += D[(size_t)(base + i) * ng + base + j];
			in_local += D[(size_t)(base + j) * ng + base + i];
		}
		d->E[i] = rowsum[base + i] - out_local;
		d->I[i] = colsum[base + i] - in_local;
		d->egress += d->E[i];
		d->ingress += d->I[i];
	}
}

static double srv_data_scale(const struct srv_data *d, uint32_t G)
{
	uint64_t m = 0;
	for (uint32_t i = 0; i < G; i++) {
		if (d->E[i] > m) m = d->E[i];
		if (d->I[i] > m) m = d->I[i];
		if (d->U[i] > m) m = d->U[i];
		if (d->V[i] > m) m = d->V[i];
	}
	return (double)m;
}

/* Shares of a feasible point (srv_upper) of server d with port
 * capacities pp: with te = egress / C_s, port p's egress surplus is
 * (E_p - te c_p)+ and its deficit (te c_p - E_p)+ (E_p: its GPUs' egress);
 * a port's surplus is relayed away by its GPUs in proportion to their
 * egress (sh->se), a deficit filled evenly over its GPUs (sh->de); the
 * ingress side mirrored (si, di).  ze and zi: the total surpluses.  One
 * GPU per port: its own surplus and deficit, in the arithmetic this file
 * always used (so the order of the LPs, and lps_solved, stay as they
 * were). */
struct srv_shares {
	double *se, *de, *si, *di; /* G each */
	double te, ti, ze, zi;
};

static void srv_shares(struct srv_shares *sh, const struct srv_data *d,
		       const struct fast_bound_ports *pp, uint32_t G)
{
	/* (a lone server may have every NIC down, and then nothing to send) */
	sh->te = d->egress ? (double)d->egress / pp->total : 0;
	sh->ti = d->ingress ? (double)d->ingress / pp->total : 0;
	sh->ze = sh->zi = 0;
	for (uint32_t p = 0; p < pp->P; p++) {
		uint64_t e = 0, i = 0;
		double sE, dE, sI, dI;
		for (uint32_t k = 0; k < G; k++)
			if (pp->of[k] == p) {
				e += d->E[k];
				i += d->I[k];
			}
		sE = fmax((double)e - sh->te * pp->cap[p], 0);
		dE = fmax(sh->te * pp->cap[p] - (double)e, 0);
		sI = fmax((double)i - sh->ti * pp->cap[p], 0);
		dI = fmax(sh->ti * pp->cap[p] - (double)i, 0);
		sh->ze += sE;
		sh->zi += sI;
		for (uint32_t k = 0; k < G; k++) {
			if (pp->of[k] != p)
				continue;
			sh->se[k] = pp->n[p] == 1 || sE == 0 ? sE : sE * ((double)d->E[k] / (double)e);
			sh->si[k] = pp->n[p] == 1 || sI == 0 ? sI : sI * ((double)d->I[k] / (double)i);
			sh->de[k] = dE / pp->n[p];
			sh->di[k] = dI / pp->n[p];
		}
	}
}

/*
 * An upper bound on the server's LP optimum, in seconds, from an explicit
 * feasible point: every port carries exactly its share of the server's
 * cross-server bytes (te c_p: the closed form), GPU i relays x_ik = se_i
 * de_k / ze to GPU k (srv_shares: surpluses to deficits, which are never
 * behind one port), the ingress side mirrored; on a mesh every demand
 * takes the direct link.  The optimum lies between the server's closed
 * form and this value, so a server whose upper bound does not exceed the
 * best optimum found so far cannot change the maximum and needs no LP.
 */
static double srv_upper(const struct srv_data *d, const struct srv_shares *sh, uint32_t G,
			bool mesh, double Bn, double Bu)
{
	double up = 0;

	if (!mesh) {
		for (uint32_t k = 0; k < G; k++) {
			/* port out: relays sent + forwards sent + intra sent */
			double out = sh->se[k] + sh->di[k] + (double)d->U[k];
			double in = sh->de[k] + sh->si[k] + (double)d->V[k];
			up = fmax(up, fmax(out, in));
		}
	} else {
		for (uint32_t a = 0; a < G; a++)
			for (uint32_t v = 0; v < G; v++) {
				double load;
				if (a == v)
					continue;
				load = (double)d->Dloc[a * G + v];
				if (sh->ze > 0)
					load += sh->se[a] * sh->de[v] / sh->ze;
				if (sh->zi > 0)
					load += sh->di[a] * sh->si[v] / sh->zi;
				up = fmax(up, load);
			}
	}
	return fmax(fmax(sh->te, sh->ti) / Bn, up / Bu);
}

struct srv_key {
	double upper; /* seconds */
	uint32_t server;
};

/* Descending upper bound, then ascending server: a total, deterministic
 * order. */
static int cmp_key(const void *a, const void *b)
{
	const struct srv_key *x = a, *y = b;
	if (x->upper != y->upper)
		return x->upper > y->upper ? -1 : 1;
	return x->server < y->server ? -1 : x->server > y->server;
}

/* What fast_bound_bytes works with: the matrix's line sums, one server's
 * data and feasible point, the ports, and the servers in the order their
 * LPs are solved. */
struct bytes_ctx {
	const struct fast_topo *topo;
	const uint64_t *D;
	uint64_t *rowsum, *colsum, *buf;
	double *w;
	struct srv_data d;
	struct srv_shares sh;
	struct fast_bound_ports pp;
	struct srv_key *keys;
};

static void bytes_ctx_free(struct bytes_ctx *c)
{
	free(c->rowsum);
	free(c->colsum);
	free(c->buf);
	free(c->w);
	free(c->keys);
	fast_bound_ports_free(&c->pp);
}

static int bytes_ctx_init(struct bytes_ctx *c, const struct fast_topo *topo, const uint64_t *D,
			  struct fast_err *err)
{
	uint32_t N = topo->servers, G = topo->gpus, ng = N * G;

	memset(c, 0, sizeof(*c));
	c->topo = topo;
	c->D = D;
	if (fast_bound_ports_init(&c->pp, topo, err) < 0)
		return FAST_ENOMEM;
	c->rowsum = fast_calloc(ng, sizeof(uint64_t));
	c->colsum = fast_calloc(ng, sizeof(uint64_t));
	c->buf = fast_calloc(4 * (size_t)G + (size_t)G * G, sizeof(uint64_t));
	c->w = fast_calloc(4 * (size_t)G, sizeof(double));
	c->keys = fast_calloc(N, sizeof(*c->keys));
	if (!c->rowsum || !c->colsum || !c->buf || !c->w || !c->keys) {
		bytes_ctx_free(c);
		return fast_err_set(err, FAST_ENOMEM, "bound: out of memory");
	}
	fast_line_sums(D, ng, c->rowsum, c->colsum);
	c->d.E = c->buf;
	c->d.I = c->buf + G;
	c->d.U = c->buf + 2 * G;
	c->d.V = c->buf + 3 * G;
	c->d.Dloc = c->buf + 4 * G;
	c->sh.se = c->w;
	c->sh.de = c->w + G;
	c->sh.si = c->w + 2 * G;
	c->sh.di = c->w + 3 * G;
	return 0;
}

/* Server s's data into c->d and its port capacities into c->pp. */
static void bytes_ctx_server(struct bytes_ctx *c, uint32_t s)
{
	uint32_t G = c->topo->gpus;

	srv_data_fill(&c->d, c->D, c->rowsum, c->colsum, c->topo->servers * G, G, s);
	fast_bound_ports_load(&c->pp, c->topo, s);
}

/* Pass 2: the LPs in decreasing order of the upper bound, until no
 * remaining server can beat the best optimum; into b's LP fields. */
static int bytes_lps(struct bytes_ctx *c, struct fast_bound *b, struct fast_err *err)
{
	const struct fast_topo *topo = c->topo;
	uint32_t N = topo->servers, G = topo->gpus;
	double Bn = fast_tier_Bps(&topo->out);
	struct srv_lp L;
	int rc = 0;

	memset(&L, 0, sizeof(L));
	glp_term_out(GLP_OFF);
	if (N > 0 && c->keys[0].upper > 0)
		rc = srv_lp_build(&L, topo, &c->pp, err);
	for (uint32_t k = 0; rc == 0 && k < N; k++) {
		uint32_t s = c->keys[k].server;
		double scale, t;
		if (c->keys[k].upper == 0 || c->keys[k].upper <= b->lp_s)
			break; /* nothing crosses a link here, or it cannot win */
		bytes_ctx_server(c, s);
		scale = srv_data_scale(&c->d, G);
		srv_lp_load(&L, &c->d, scale);
		rc = srv_lp_solve(&L, s, err);
		if (rc)
			break;
		b->lps_solved++;
		t = glp_get_obj_val(L.lp) * scale / Bn;
		/* a server must beat the best by more than rounding noise, so
		 * that ties go to the first server solved on every GLPK
		 * version */
		if (t > b->lp_s * (1 + 1e-9)) {
			b->lp_s = t;
			b->lp_server = s;
			srv_lp_binding(&L, s, b->binding, sizeof(b->binding));
		}
	}
	if (L.lp)
		srv_lp_free(&L);
	return rc;
}

int fast_bound_bytes(const struct fast_topo *topo, const uint64_t *D, struct fast_bound *out,
		     struct fast_err *err)
{
	uint32_t N = topo->servers, G = topo->gpus;
	double Bn = fast_tier_Bps(&topo->out), Bu = fast_tier_Bps(&topo->up);
	bool mesh = topo->up_kind == FAST_UP_MESH;
	struct fast_bound b;
	struct bytes_ctx c;
	uint64_t total_cross = 0;
	double t0;
	int rc;

	if (!(Bn > 0) || !(Bu > 0))
		return fast_err_set(err, FAST_EINPUT, "bound: bandwidths must be > 0");
	if ((rc = bytes_ctx_init(&c, topo, D, err)) < 0)
		return rc;
	memset(&b, 0, sizeof(b));
	snprintf(b.binding, sizeof(b.binding), "none (no traffic over links)");

	/* pass 1: closed form and an upper bound per server */
	for (uint32_t s = 0; s < N; s++) {
		bytes_ctx_server(&c, s);
		fast_bound_closed_fold(&b, s, c.d.egress, c.d.ingress,
				       fast_topo_server_nics_up(topo, s) * Bn);
		total_cross += c.d.egress;
		c.keys[s].server = s;
		c.keys[s].upper = 0.0;
		if (srv_data_scale(&c.d, G) != 0) {
			srv_shares(&c.sh, &c.d, &c.pp, G);
			c.keys[s].upper = srv_upper(&c.d, &c.sh, G, mesh, Bn, Bu);
		}
	}
	qsort(c.keys, N, sizeof(*c.keys), cmp_key);

	t0 = fast_now();
	rc = bytes_lps(&c, &b, err);
	b.solve_s = fast_now() - t0;
	bytes_ctx_free(&c);
	if (rc)
		return rc;
	if ((rc = fast_bound_finish(&b, topo, total_cross, err)) < 0)
		return rc;
	*out = b;
	return 0;
}
