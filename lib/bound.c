/*
 * bound.c - lower bounds on the completion time of any schedule
 * (docs/DESIGN.md, "Lower bounds").  The only user of GLPK in the project.
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
 * Token traffic (dispatch and combine groups) has its own per-server LP at
 * the end of this file ("token traffic"): what every accepted token plan
 * must move once deduplicated per server; fast_bound_matrix picks the LP
 * by the matrix's kind.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glpk.h>

#include "bound.h"

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
static void closed_fold(struct fast_bound *b, uint64_t *best, uint32_t s, uint64_t eg,
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

void fast_bound_closed(const struct fast_topo *topo, const uint64_t *D,
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
		closed_fold(out, &best, s, eg, in);
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

static int add_rows(glp_prob *lp, int n)
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

	/* NIC rows: load - tau <= -E_k (bounds set per server) */
	L->r_nic_out = add_rows(L->lp, (int)G);
	L->r_nic_in = add_rows(L->lp, (int)G);
	L->r_dir_out = add_rows(L->lp, (int)G);
	L->r_dir_in = add_rows(L->lp, (int)G);
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

	if (!mesh) {
		/* port egress i: x_i. + y_i. - rho tau <= -U_i
		 * port ingress j: x_.j + y_.j - rho tau <= -V_j */
		L->r_port_out = add_rows(L->lp, (int)G);
		L->r_port_in = add_rows(L->lp, (int)G);
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
	} else {
		/* link a->b: sum_{s != b} f^s_ab - rho tau <= 0 */
		for (uint32_t a = 0; a < G; a++)
			for (uint32_t b = 0; b < G; b++) {
				int len = 0;
				if (a == b)
					continue;
				L->r_link[a * G + b] = add_rows(L->lp, 1);
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
				L->r_cons[s * G + v] = add_rows(L->lp, 1);
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
static int lp_solve(glp_prob *lp, bool *warm, uint32_t server, struct fast_err *err)
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
	return lp_solve(L->lp, &L->warm, server, err);
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
static int bound_finish(struct fast_bound *b, const struct fast_topo *topo, uint64_t total_cross,
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

int fast_bound_compute(const struct fast_topo *topo, const uint64_t *D,
		       struct fast_bound *out, struct fast_err *err)
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
	for (uint32_t i = 0; i < ng; i++) {
		const uint64_t *row = D + (size_t)i * ng;
		uint64_t r = 0;
		for (uint32_t j = 0; j < ng; j++) {
			r += row[j];
			colsum[j] += row[j];
		}
		rowsum[i] = r;
	}
	d.E = buf;
	d.I = buf + G;
	d.U = buf + 2 * G;
	d.V = buf + 3 * G;
	d.Dloc = buf + 4 * G;

	/* pass 1: closed form and an upper bound per server */
	for (uint32_t s = 0; s < N; s++) {
		srv_data_fill(&d, D, rowsum, colsum, ng, G, s);
		closed_fold(&b, &best, s, d.egress, d.ingress);
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

	if ((rc = bound_finish(&b, topo, total_cross, err)) < 0)
		return rc;
	*out = b;
	return 0;
}

/* --- token traffic (DISPATCH / COMBINE matrices) -------------------------- */

/*
 * fast_bound_matrix on token traffic: a lower bound on the completion time
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
 *   ne_k, ni_k <= tau;  ue_k, ui_k <= rho tau (switch), (G-1) rho tau (mesh)
 *
 * and minimise tau (= T x B_nic).  Each row holds for every accepted plan
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
 * form is max_s max(Eg_s, In_s) / (G B_nic).  On a matrix whose groups all
 * have one destination the LP is a relaxation of the byte LP above (its
 * optimum is at most that one's), which test_bound checks.
 */

struct tok_data {
	uint64_t *E, *I, *S, *R; /* ng each */
	uint64_t *Eg, *In;       /* N each */
};

struct tok_lp {
	glp_prob *lp;
	uint32_t G;
	bool warm;
	double cap_up;   /* scale-up capacity of one GPU direction, in NIC units */
	/* rows, 1-based; the first of G each unless noted */
	int r_nic_out, r_nic_in, r_dir_out, r_dir_in, r_srv; /* r_srv: 2 rows */
	int r_send, r_recv, r_rel_out, r_rel_in, r_cons;     /* r_cons: 1 row */
	int r_cap;       /* 4G rows: ne, ni, ue, ui */
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

/* x_k. (k relays away) and x_.k (relayed into k), with sign v; the same
 * for y. */
static void tok_x_out(struct tok_lp *L, uint32_t k, double v)
{
	for (uint32_t m = 0; m < L->G; m++)
		if (m != k)
			tok_term(L, L->c_x[k * L->G + m], v);
}
static void tok_x_in(struct tok_lp *L, uint32_t k, double v)
{
	for (uint32_t i = 0; i < L->G; i++)
		if (i != k)
			tok_term(L, L->c_x[i * L->G + k], v);
}
static void tok_y_out(struct tok_lp *L, uint32_t k, double v)
{
	for (uint32_t j = 0; j < L->G; j++)
		if (j != k)
			tok_term(L, L->c_y[k * L->G + j], v);
}
static void tok_y_in(struct tok_lp *L, uint32_t k, double v)
{
	for (uint32_t m = 0; m < L->G; m++)
		if (m != k)
			tok_term(L, L->c_y[m * L->G + k], v);
}

static int tok_lp_build(struct tok_lp *L, uint32_t G, double cap_up, struct fast_err *err)
{
	size_t GG = (size_t)G * G;
	int n = 2, ncols;

	memset(L, 0, sizeof(*L));
	L->G = G;
	L->cap_up = cap_up;
	L->c_x = fast_calloc(GG, sizeof(int));
	L->c_y = fast_calloc(GG, sizeof(int));
	/* the longest row: the conservation row, 2G terms; a NIC row 2G - 1 */
	L->ind = fast_calloc(4 * (size_t)G + 8, sizeof(int));
	L->val = fast_calloc(4 * (size_t)G + 8, sizeof(double));
	if (!L->c_x || !L->c_y || !L->ind || !L->val) {
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

	L->r_nic_out = add_rows(L->lp, (int)G);
	L->r_nic_in = add_rows(L->lp, (int)G);
	L->r_dir_out = add_rows(L->lp, (int)G);
	L->r_dir_in = add_rows(L->lp, (int)G);
	L->r_srv = add_rows(L->lp, 2);
	L->r_send = add_rows(L->lp, (int)G);
	L->r_recv = add_rows(L->lp, (int)G);
	L->r_rel_out = add_rows(L->lp, (int)G);
	L->r_rel_in = add_rows(L->lp, (int)G);
	L->r_cons = add_rows(L->lp, 1);
	L->r_cap = add_rows(L->lp, 4 * (int)G);
	for (uint32_t k = 0; k < G; k++) {
		int ik = (int)k;
		/* ne_k + x_k. - x_.k >= E_k */
		tok_term(L, L->c_ne + ik, 1.0);
		tok_x_out(L, k, 1.0);
		tok_x_in(L, k, -1.0);
		tok_row(L, L->r_nic_out + ik);
		/* ni_k + y_.k - y_k. >= I_k */
		tok_term(L, L->c_ni + ik, 1.0);
		tok_y_in(L, k, 1.0);
		tok_y_out(L, k, -1.0);
		tok_row(L, L->r_nic_in + ik);
		tok_x_out(L, k, 1.0); /* <= E_k */
		tok_row(L, L->r_dir_out + ik);
		tok_y_in(L, k, 1.0);  /* <= I_k */
		tok_row(L, L->r_dir_in + ik);
		/* ne_k + ue_k - x_.k >= S_k */
		tok_term(L, L->c_ne + ik, 1.0);
		tok_term(L, L->c_ue + ik, 1.0);
		tok_x_in(L, k, -1.0);
		tok_row(L, L->r_send + ik);
		/* ni_k + ui_k - y_k. >= R_k */
		tok_term(L, L->c_ni + ik, 1.0);
		tok_term(L, L->c_ui + ik, 1.0);
		tok_y_out(L, k, -1.0);
		tok_row(L, L->r_recv + ik);
		/* ue_k - x_k. - y_k. >= 0 ; ui_k - x_.k - y_.k >= 0 */
		tok_term(L, L->c_ue + ik, 1.0);
		tok_x_out(L, k, -1.0);
		tok_y_out(L, k, -1.0);
		tok_row(L, L->r_rel_out + ik);
		glp_set_row_bnds(L->lp, L->r_rel_out + ik, GLP_LO, 0.0, 0.0);
		tok_term(L, L->c_ui + ik, 1.0);
		tok_x_in(L, k, -1.0);
		tok_y_in(L, k, -1.0);
		tok_row(L, L->r_rel_in + ik);
		glp_set_row_bnds(L->lp, L->r_rel_in + ik, GLP_LO, 0.0, 0.0);
		/* capacities: load - c tau <= 0 */
		for (int f = 0; f < 4; f++) {
			int col = (f == 0 ? L->c_ne : f == 1 ? L->c_ni : f == 2 ? L->c_ue : L->c_ui) + ik;
			tok_term(L, col, 1.0);
			tok_term(L, 1, f < 2 ? -1.0 : -cap_up);
			tok_row(L, L->r_cap + f * (int)G + ik);
			glp_set_row_bnds(L->lp, L->r_cap + f * (int)G + ik, GLP_UP, 0.0, 0.0);
		}
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

/* Right-hand sides of server s, divided by scale. */
static void tok_lp_load(struct tok_lp *L, const struct tok_data *d, uint32_t s, double scale)
{
	uint32_t G = L->G;
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
	/* what each family of capacity rows is, "<name> <GPU>" */
	static const char *const what[2][4] = {
		{ "NIC", "NIC", "scale-up port", "scale-up port" },
		{ "NIC", "NIC", "scale-up links of GPU", "scale-up links of GPU" },
	};
	static const char *const dir[4] = { "egress", "ingress", "egress", "ingress" };
	double best = -1.0;
	int bf = 0;
	uint32_t bk = 0;

	for (int f = 0; f < 4; f++)
		for (uint32_t k = 0; k < L->G; k++) {
			double w = fabs(glp_get_row_dual(L->lp, L->r_cap + f * (int)L->G + (int)k)) *
				   (f < 2 ? 1.0 : L->cap_up);
			if (w > best + 1e-9) {
				best = w;
				bf = f;
				bk = k;
			}
		}
	snprintf(buf, len, "server %u %s %u %s", server, what[mesh][bf], bk, dir[bf]);
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
	uint64_t best = 0;
	for (uint32_t s = 0; s < topo->servers; s++)
		closed_fold(b, &best, s, d->Eg[s], d->In[s]);
	b->closed_s = (double)best / ((double)topo->gpus * fast_tier_Bps(&topo->out));
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
	if ((rc = tok_data_new(&d, m, N, G, err)) < 0)
		return rc;
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
		if (!L.lp && (rc = tok_lp_build(&L, G, (mesh ? (double)(G - 1) : 1.0) * Bu / Bn,
						err)) < 0)
			break;
		tok_lp_load(&L, &d, s, (double)mx);
		if ((rc = lp_solve(L.lp, &L.warm, s, err)) < 0)
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
	b.solve_s = fast_now() - t0;
	free(d.E);
	if (rc < 0)
		return rc;
	if ((rc = bound_finish(&b, topo, total_cross, err)) < 0)
		return rc;
	*out = b;
	return 0;
}

int fast_bound_matrix(const struct fast_topo *topo, const struct fast_matrix *m,
		      struct fast_bound *out, struct fast_err *err)
{
	if (m->kind == FAST_TRAFFIC_BYTES)
		return fast_bound_compute(topo, m->bytes, out, err);
	return bound_tokens(topo, m, out, err);
}

int fast_bound_matrix_closed(const struct fast_topo *topo, const struct fast_matrix *m,
			     struct fast_bound *out, struct fast_err *err)
{
	struct tok_data d;
	int rc;

	if (m->kind == FAST_TRAFFIC_BYTES) {
		fast_bound_closed(topo, m->bytes, out);
		return 0;
	}
	if ((rc = tok_data_new(&d, m, topo->servers, topo->gpus, err)) < 0)
		return rc;
	memset(out, 0, sizeof(*out));
	tok_closed(out, &d, topo);
	free(d.E);
	return 0;
}
