/*
 * bound.c - lower bounds on the completion time of any schedule
 * (docs/DESIGN.md, "Lower bounds").  With bound_tokens.c, the only user of
 * GLPK in the project.
 *
 * Closed form: max over servers of max(cross-server egress, ingress) divided
 * by G x effective NIC bandwidth: scale-up is assumed free, so a server's
 * NICs are perfectly balanced.
 *
 * LP: with a non-blocking core, servers interact only through their NICs,
 * so the problem separates into one LP per server.  For server s with local
 * GPUs 0..G-1 let E_i / I_i be GPU i's cross-server egress / ingress bytes
 * and D_ij (i != j) its intra-server bytes.  Variables (bytes, scaled):
 *
 *   x_ik  (i != k)  egress bytes of GPU i that leave through NIC k
 *                   (relayed i -> k over scale-up); E_i - sum_k x_ik leave
 *                   through NIC i directly, so sum_k x_ik <= E_i;
 *   y_kj  (k != j)  ingress bytes for GPU j that enter through NIC k and are
 *                   forwarded k -> j; sum_k y_kj <= I_j;
 *   tau             the time, in bytes one NIC carries (T * B_nic);
 *
 *   NIC k egress    E_k - sum_m x_km + sum_i x_ik <= tau
 *   NIC k ingress   I_k - sum_m y_mk + sum_j y_kj <= tau
 *
 * Scale-up, switch: GPU i's port carries x_i., y_i. and D_i. out and x_.i,
 * y_.i and D_.i in; every port direction <= rho * tau (rho = B_up / B_nic).
 * Scale-up, mesh: every ordered pair (s, v) has demand D_sv + x_sv + y_sv
 * (relays into NIC v, forwards out of NIC s, intra bytes) routed as a
 * multi-commodity flow aggregated by source, over ANY paths of the mesh
 * (f^s_ab on link a -> b, b != s); every directed link <= rho * tau.
 * O(G^2) variables per server on a switch, O(G^3) on a mesh.
 *
 * Every correct plan is feasible: a byte that crosses servers leaves
 * through some NIC of its source server and enters through some NIC of its
 * destination server; relaying over more than one hop only adds load; a
 * server's NICs carry at least its own traffic.  Intra-server bytes travel
 * over scale-up (the plan IR's contract); the diagonal is free.
 *
 * The constraint matrix depends only on G, the scale-up kind and rho; the
 * data appear only in the right-hand sides.  So one GLPK problem is built
 * once and re-solved per server with new row bounds, warm-started with the
 * dual simplex from the previous optimal basis (still dual feasible, since
 * costs and matrix are unchanged).  Right-hand sides are divided by the
 * server's largest datum, so they lie in [0, 1]; GLPK's automatic scaling
 * handles the rho column.
 *
 * Only servers that can hold the maximum are solved: each server gets an
 * upper bound from an explicit feasible point (NICs balanced to the mean,
 * surpluses relayed proportionally to deficits, see srv_upper), servers
 * are solved in decreasing order of it, and the loop stops when the next
 * upper bound does not exceed the best optimum found.  The result is the
 * same maximum as solving every LP; with scale-up several times faster
 * than a NIC, usually one LP is solved.
 *
 * An oversubscribed core (core_oversub > 1) adds one global constraint to
 * the LP bound: all cross-server bytes / (N * G * B_nic / oversub), valid
 * whether the simulator models the core as one pool or per-server uplinks.
 *
 * Token traffic (dispatch and combine groups) has its own per-server LP in
 * bound_tokens.c: what every accepted token plan must move once
 * deduplicated per server; fast_bound_compute (there) picks the LP by the
 * matrix's kind.  bound_internal.h is what the two files share.
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
	uint32_t G;
	bool mesh;
	double rho;
	bool warm;        /* a valid optimal basis from a previous solve */
	/* rows (1-based) */
	int r_nic_out, r_nic_in, r_dir_out, r_dir_in; /* first of G each */
	int r_port_out, r_port_in;                     /* switch: first of G each */
	int *r_link;      /* mesh: [a*G+b], 0 on the diagonal */
	int *r_cons;      /* mesh: [s*G+v], 0 on the diagonal */
	/* columns (1-based) */
	int *c_x, *c_y;   /* [i*G+k], 0 on the diagonal */
	/* scratch for building rows */
	int *ind;
	double *val;
};

/* Closed form from per-server cross egress/ingress, folded one server at
 * a time: ties keep the first server, and egress before ingress. */
void fast_bound_closed_fold(struct fast_bound *b, uint64_t *best, uint32_t s, uint64_t eg,
			    uint64_t in)
{
	if (eg > *best) {
		*best = eg;
		b->closed_server = s;
		b->closed_is_ingress = 0;
	}
	if (in > *best) {
		*best = in;
		b->closed_server = s;
		b->closed_is_ingress = 1;
	}
}

void fast_bound_bytes_closed(const struct fast_topo *topo, const uint64_t *D,
			     struct fast_bound *out)
{
	uint32_t N = topo->servers, G = topo->gpus, ng = N * G;
	uint64_t best = 0;

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
		fast_bound_closed_fold(out, &best, s, eg, in);
	}
	out->closed_s = (double)best / ((double)G * fast_tier_Bps(&topo->out));
}

/* --- building the per-server LP ------------------------------------------ */

static void set_row(struct srv_lp *L, int row, int len)
{
	/* glp_set_mat_row aborts on duplicate column indices: the callers
	 * build each row from disjoint variable families (see the file
	 * comment), so no index repeats. */
	glp_set_mat_row(L->lp, row, len, L->ind, L->val);
}

int fast_bound_add_rows(glp_prob *lp, int n)
{
	return n > 0 ? glp_add_rows(lp, n) : glp_get_num_rows(lp) + 1;
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
	memset(L, 0, sizeof(*L));
}

/* NIC rows: load - tau <= -E_k (bounds set per server), and what a GPU
 * relays away or takes in within its own egress and ingress. */
static void add_nic_rows(struct srv_lp *L)
{
	uint32_t G = L->G;

	L->r_nic_out = fast_bound_add_rows(L->lp, (int)G);
	L->r_nic_in = fast_bound_add_rows(L->lp, (int)G);
	L->r_dir_out = fast_bound_add_rows(L->lp, (int)G);
	L->r_dir_in = fast_bound_add_rows(L->lp, (int)G);
	for (uint32_t k = 0; k < G; k++) {
		int len = 0;
		L->ind[++len] = 1, L->val[len] = -1.0;
		for (uint32_t i = 0; i < G; i++)
			if (i != k)
				L->ind[++len] = L->c_x[i * G + k], L->val[len] = 1.0;
		for (uint32_t m = 0; m < G; m++)
			if (m != k)
				L->ind[++len] = L->c_x[k * G + m], L->val[len] = -1.0;
		set_row(L, L->r_nic_out + (int)k, len);

		len = 0;
		L->ind[++len] = 1, L->val[len] = -1.0;
		for (uint32_t j = 0; j < G; j++)
			if (j != k)
				L->ind[++len] = L->c_y[k * G + j], L->val[len] = 1.0;
		for (uint32_t m = 0; m < G; m++)
			if (m != k)
				L->ind[++len] = L->c_y[m * G + k], L->val[len] = -1.0;
		set_row(L, L->r_nic_in + (int)k, len);

		/* what GPU k relays away cannot exceed its egress */
		len = 0;
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

/* Switch ports (bounds set per server):
 * port egress i: x_i. + y_i. - rho tau <= -U_i
 * port ingress j: x_.j + y_.j - rho tau <= -V_j */
static void add_port_rows(struct srv_lp *L)
{
	uint32_t G = L->G;
	double rho = L->rho;

	L->r_port_out = fast_bound_add_rows(L->lp, (int)G);
	L->r_port_in = fast_bound_add_rows(L->lp, (int)G);
	for (uint32_t i = 0; i < G; i++) {
		int len = 0;
		L->ind[++len] = 1, L->val[len] = -rho;
		for (uint32_t k = 0; k < G; k++)
			if (k != i) {
				L->ind[++len] = L->c_x[i * G + k], L->val[len] = 1.0;
				L->ind[++len] = L->c_y[i * G + k], L->val[len] = 1.0;
			}
		set_row(L, L->r_port_out + (int)i, len);
		len = 0;
		L->ind[++len] = 1, L->val[len] = -rho;
		for (uint32_t k = 0; k < G; k++)
			if (k != i) {
				L->ind[++len] = L->c_x[k * G + i], L->val[len] = 1.0;
				L->ind[++len] = L->c_y[k * G + i], L->val[len] = 1.0;
			}
		set_row(L, L->r_port_in + (int)i, len);
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

static int srv_lp_build(struct srv_lp *L, uint32_t G, bool mesh, double rho,
			struct fast_err *err)
{
	size_t GG = (size_t)G * G;
	int ncols, *c_f = NULL;
	int n;

	memset(L, 0, sizeof(*L));
	L->G = G;
	L->mesh = mesh;
	L->rho = rho;
	L->c_x = fast_calloc(GG, sizeof(int));
	L->c_y = fast_calloc(GG, sizeof(int));
	L->r_link = fast_calloc(GG, sizeof(int));
	L->r_cons = fast_calloc(GG, sizeof(int));
	/* the longest row: a link row has G-1 flows + tau; a conservation
	 * row 2G + 2; a NIC row 2G - 1; a port row 2G - 1 */
	L->ind = fast_calloc(4 * (size_t)G + 8, sizeof(int));
	L->val = fast_calloc(4 * (size_t)G + 8, sizeof(double));
	if (mesh)
		c_f = fast_calloc(GG * G, sizeof(int));
	if (!L->c_x || !L->c_y || !L->r_link || !L->r_cons || !L->ind || !L->val ||
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
		add_port_rows(L);
	else
		add_mesh_rows(L, c_f);
	free(c_f);
	glp_scale_prob(L->lp, GLP_SF_AUTO);
	return 0;
}

/* Set the right-hand sides for server data d, divided by scale. */
static void srv_lp_load(struct srv_lp *L, const struct srv_data *d, double scale)
{
	uint32_t G = L->G;
	for (uint32_t k = 0; k < G; k++) {
		glp_set_row_bnds(L->lp, L->r_nic_out + (int)k, GLP_UP, 0.0, -(double)d->E[k] / scale);
		glp_set_row_bnds(L->lp, L->r_nic_in + (int)k, GLP_UP, 0.0, -(double)d->I[k] / scale);
		glp_set_row_bnds(L->lp, L->r_dir_out + (int)k, GLP_UP, 0.0, (double)d->E[k] / scale);
		glp_set_row_bnds(L->lp, L->r_dir_in + (int)k, GLP_UP, 0.0, (double)d->I[k] / scale);
		if (!L->mesh) {
			glp_set_row_bnds(L->lp, L->r_port_out + (int)k, GLP_UP, 0.0,
					 -(double)d->U[k] / scale);
			glp_set_row_bnds(L->lp, L->r_port_in + (int)k, GLP_UP, 0.0,
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

/* Solve; returns 0 or FAST_ESOLVER.  Warm-started solves use the dual
 * simplex; on any trouble retry once from the standard basis. */
int fast_bound_lp_solve(glp_prob *lp, bool *warm, uint32_t server, struct fast_err *err)
{
	glp_smcp parm;
	int ret, status;

	glp_init_smcp(&parm);
	parm.msg_lev = GLP_MSG_OFF;
	parm.presolve = GLP_OFF; /* presolve would discard the warm basis */
	if (*warm) {
		parm.meth = GLP_DUALP;
		ret = glp_simplex(lp, &parm);
		if (ret == 0 && glp_get_status(lp) == GLP_OPT)
			return 0;
	}
	glp_std_basis(lp);
	parm.meth = GLP_PRIMAL;
	ret = glp_simplex(lp, &parm);
	status = glp_get_status(lp);
	if (ret != 0 || status != GLP_OPT) {
		*warm = false;
		return fast_err_set(err, FAST_ESOLVER,
				    "bound: GLPK failed on the LP of server %u "
				    "(glp_simplex returned %d, status %d)",
				    server, ret, status);
	}
	*warm = true;
	return 0;
}

static int srv_lp_solve(struct srv_lp *L, uint32_t server, struct fast_err *err)
{
	return fast_bound_lp_solve(L->lp, &L->warm, server, err);
}

/* The binding resource of the last solve: the capacity row whose dual,
 * times its tau coefficient, is largest (the share of T it accounts for);
 * ties go to the first row in the order NIC egress, NIC ingress, ports or
 * links. */
static void srv_lp_binding(const struct srv_lp *L, uint32_t server, char *buf, size_t len)
{
	uint32_t G = L->G;
	double best = -1.0;
	char kind[48] = "";

#define CONSIDER(row, coef, ...)                                               \
	do {                                                                    \
		double w_ = fabs(glp_get_row_dual(L->lp, (row))) * (coef);       \
		if (w_ > best + 1e-9) {                                         \
			best = w_;                                              \
			snprintf(kind, sizeof(kind), __VA_ARGS__);              \
		}                                                               \
	} while (0)

	for (uint32_t k = 0; k < G; k++)
		CONSIDER(L->r_nic_out + (int)k, 1.0, "NIC %u egress", k);
	for (uint32_t k = 0; k < G; k++)
		CONSIDER(L->r_nic_in + (int)k, 1.0, "NIC %u ingress", k);
	if (!L->mesh) {
		for (uint32_t k = 0; k < G; k++)
			CONSIDER(L->r_port_out + (int)k, L->rho, "scale-up port %u egress", k);
		for (uint32_t k = 0; k < G; k++)
			CONSIDER(L->r_port_in + (int)k, L->rho, "scale-up port %u ingress", k);
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

/*
 * An upper bound on the server's LP optimum, in seconds, from an explicit
 * feasible point: every NIC carries exactly the mean (the closed form),
 * GPU i with egress surplus S_i = (E_i - mean)+ relays x_ik = S_i R_k / Z
 * to NIC k with deficit R_k = (mean - E_k)+ (Z = sum of surpluses), the
 * ingress side mirrored; on a mesh every demand takes the direct link.
 * The optimum lies between the server's closed form and this value, so a
 * server whose upper bound does not exceed the best optimum found so far
 * cannot change the maximum and needs no LP.
 */
static double srv_upper(const struct srv_data *d, uint32_t G, bool mesh, double Bn, double Bu)
{
	double te = (double)d->egress / G, ti = (double)d->ingress / G;
	double ze = 0, zi = 0, up = 0;

	for (uint32_t k = 0; k < G; k++) {
		ze += fmax((double)d->E[k] - te, 0);
		zi += fmax((double)d->I[k] - ti, 0);
	}
#define SURE(k) fmax((double)d->E[k] - te, 0)  /* egress surplus of GPU k */
#define DEFE(k) fmax(te - (double)d->E[k], 0)  /* egress deficit of NIC k */
#define SURI(k) fmax((double)d->I[k] - ti, 0)
#define DEFI(k) fmax(ti - (double)d->I[k], 0)
	if (!mesh) {
		for (uint32_t k = 0; k < G; k++) {
			/* port out: relays sent + forwards sent + intra sent */
			double out = SURE(k) + DEFI(k) + (double)d->U[k];
			double in = DEFE(k) + SURI(k) + (double)d->V[k];
			up = fmax(up, fmax(out, in));
		}
	} else {
		for (uint32_t a = 0; a < G; a++)
			for (uint32_t v = 0; v < G; v++) {
				double load;
				if (a == v)
					continue;
				load = (double)d->Dloc[a * G + v];
				if (ze > 0)
					load += SURE(a) * DEFE(v) / ze;
				if (zi > 0)
					load += DEFI(a) * SURI(v) / zi;
				up = fmax(up, load);
			}
	}
#undef SURE
#undef DEFE
#undef SURI
#undef DEFI
	return fmax(fmax(te, ti) / Bn, up / Bu);
}

/* The last steps of both LP bounds.  The LP contains the closed form's
 * constraints (sum the NIC rows), so a result below it is a numerical
 * artefact: snap a tiny one, reject a large one.  An oversubscribed core
 * carries every one of total_cross bytes that must cross servers at least
 * once. */
int fast_bound_finish(struct fast_bound *b, const struct fast_topo *topo, uint64_t total_cross,
		      struct fast_err *err)
{
	double Bn = fast_tier_Bps(&topo->out);

	if (b->lp_s < b->closed_s) {
		if (b->lp_s < b->closed_s * (1 - 1e-6))
			return fast_err_set(err, FAST_ESOLVER,
					    "bound: LP optimum %.9g s below the closed form %.9g s "
					    "(numerical trouble in GLPK)", b->lp_s, b->closed_s);
		b->lp_s = b->closed_s;
	}
	if (topo->core_oversub > 1.0 && total_cross > 0) {
		double core = (double)total_cross /
			      ((double)fast_topo_ngpus(topo) * Bn / topo->core_oversub);
		if (core > b->lp_s) {
			b->lp_s = core;
			snprintf(b->binding, sizeof(b->binding),
				 "scale-out core (oversubscribed %.3g:1)", topo->core_oversub);
		}
	}
	return 0;
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

int fast_bound_bytes(const struct fast_topo *topo, const uint64_t *D, struct fast_bound *out,
		     struct fast_err *err)
{
	uint32_t N = topo->servers, G = topo->gpus, ng = N * G;
	double Bn = fast_tier_Bps(&topo->out), Bu = fast_tier_Bps(&topo->up);
	struct fast_bound b;
	struct srv_lp L;
	struct srv_data d;
	struct srv_key *keys;
	uint64_t *rowsum, *colsum, *buf, total_cross = 0, best = 0;
	double t0;
	int rc = 0;

	if (!(Bn > 0) || !(Bu > 0))
		return fast_err_set(err, FAST_EINPUT, "bound: bandwidths must be > 0");
	memset(&b, 0, sizeof(b));
	memset(&L, 0, sizeof(L));
	snprintf(b.binding, sizeof(b.binding), "none (no traffic over links)");

	rowsum = fast_calloc(ng, sizeof(uint64_t));
	colsum = fast_calloc(ng, sizeof(uint64_t));
	buf = fast_calloc(4 * (size_t)G + (size_t)G * G, sizeof(uint64_t));
	keys = fast_calloc(N, sizeof(*keys));
	if (!rowsum || !colsum || !buf || !keys) {
		free(rowsum);
		free(colsum);
		free(buf);
		free(keys);
		return fast_err_set(err, FAST_ENOMEM, "bound: out of memory");
	}
	fast_line_sums(D, ng, rowsum, colsum);
	d.E = buf;
	d.I = buf + G;
	d.U = buf + 2 * G;
	d.V = buf + 3 * G;
	d.Dloc = buf + 4 * G;

	/* pass 1: closed form and an upper bound per server */
	for (uint32_t s = 0; s < N; s++) {
		srv_data_fill(&d, D, rowsum, colsum, ng, G, s);
		fast_bound_closed_fold(&b, &best, s, d.egress, d.ingress);
		total_cross += d.egress;
		keys[s].server = s;
		keys[s].upper = srv_data_scale(&d, G) == 0
				? 0.0 : srv_upper(&d, G, topo->up_kind == FAST_UP_MESH, Bn, Bu);
	}
	qsort(keys, N, sizeof(*keys), cmp_key);

	/* pass 2: LPs in decreasing order of the upper bound, until no
	 * remaining server can beat the best optimum */
	t0 = fast_now();
	glp_term_out(GLP_OFF);
	if (N > 0 && keys[0].upper > 0)
		rc = srv_lp_build(&L, G, topo->up_kind == FAST_UP_MESH, Bu / Bn, err);
	for (uint32_t k = 0; rc == 0 && k < N; k++) {
		uint32_t s = keys[k].server;
		double scale, t;
		if (keys[k].upper == 0 || keys[k].upper <= b.lp_s)
			break; /* nothing crosses a link here, or it cannot win */
		srv_data_fill(&d, D, rowsum, colsum, ng, G, s);
		scale = srv_data_scale(&d, G);
		srv_lp_load(&L, &d, scale);
		rc = srv_lp_solve(&L, s, err);
		if (rc)
			break;
		b.lps_solved++;
		t = glp_get_obj_val(L.lp) * scale / Bn;
		/* a server must beat the best by more than rounding noise, so
		 * that ties go to the first server solved on every GLPK
		 * version */
		if (t > b.lp_s * (1 + 1e-9)) {
			b.lp_s = t;
			b.lp_server = s;
			srv_lp_binding(&L, s, b.binding, sizeof(b.binding));
		}
	}
	if (L.lp)
		srv_lp_free(&L);
	b.solve_s = fast_now() - t0;
	b.closed_s = (double)best / ((double)G * Bn);
	free(rowsum);
	free(colsum);
	free(buf);
	free(keys);
	if (rc)
		return rc;

	if ((rc = fast_bound_finish(&b, topo, total_cross, err)) < 0)
		return rc;
	*out = b;
	return 0;
}
