/*
 * calibrate_deepep.c - `fast calibrate --deepep-intranode/--deepep-internode`
 * (calibrate_impl.h): hier's implementation fitted to DeepEP's test logs,
 * each run regenerated as `fast gen --pattern moe --token-groups --seed 1`
 * (the logged tokens, hidden and top-k, --experts) and simulated as hier:
 *   intranode  its scale-up engine: the logged SMs, their rate from the
 *              dispatch (its combine checks: on one server hier's combine
 *              sums at the token's source, which a plan leaves implicit);
 *   internode  its scale-out rate from the dispatch, its reduction rate
 *              from the combine (which sums each server's contributions
 *              before they cross; kept where the run is faster than free
 *              sums give).
 * The regenerated routing is the test's without its grouping: the same
 * where a token may reach every server (test_internode.py's
 * num_topk_groups = min(servers, 4): up to 4 servers).
 */
#include "calibrate_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fast/sim.h"
#include "lib/base/json.h"
#include "lib/workload/gen.h"

/* One log: its runs regenerated ([fp8]: dispatch matrix 0, combine 1) and
 * their plans ([fp8][kind]) on the log's topology (intranode: server 0). */
struct ep_log {
	const char *path;
	bool inter;
	struct fast_calib_ep_log log;
	struct fast_topo t;
	struct fast_traffic tr[2];
	bool have[2];
	struct sim_case cs[2][2];
	int fitted[2];     /* the row each kind's term was fitted to (-1: none) */
};

static void ep_free(struct ep_log *e)
{
	for (int f = 0; f < 2; f++) {
		for (int k = 0; k < 2; k++)
			calib_case_free(&e->cs[f][k]);
		if (e->have[f])
			fast_traffic_free(&e->tr[f]);
		e->have[f] = false;
	}
}

static int ep_load(struct ep_log *e, const char *path, bool inter, const struct fast_topo *topo,
		   const struct fast_limits *lim)
{
	struct fast_err err;
	char *text;
	size_t len;
	int rc;

	memset(e, 0, sizeof *e);
	e->path = path;
	e->inter = inter;
	e->fitted[0] = e->fitted[1] = -1;
	cli_input(path);
	if (fast_read_file(path, lim->max_file_bytes, &text, &len, &err) < 0)
		return cli_report(&err);
	rc = fast_calib_parse_deepep(text, len, path, &e->log, &err);
	free(text);
	if (rc < 0)
		return cli_report(&err);
	if (!inter)
		return calib_one_server(topo, &e->t, lim);
	if (topo->servers < 2)
		return cli_fail(FAST_EINPUT,
				"%s: an internode run needs a topology of 2 servers or more (give the "
				"run's --servers)",
				path);
	if (e->log.topk_groups && e->log.topk_groups < topo->servers)
		cli_warn("%s: its tokens reach at most %u of %u servers; the regenerated run lets "
			 "them reach any",
			 path, e->log.topk_groups, topo->servers);
	e->t = *topo;
	return 0;
}

/* The plan of run (fp8, kind), compiled on first use; NULL after
 * printing the error (*rc its exit status). */
static const struct sim_case *ep_case(struct ep_log *e, bool fp8, int kind, uint32_t experts,
				      const struct fast_limits *lim, int *rc)
{
	struct sim_case *c = &e->cs[fp8][kind];
	struct fast_err err;

	if (!e->have[fp8]) {
		struct fast_gen_opts g;
		fast_gen_defaults(&g);
		g.pattern = FAST_GEN_MOE;
		g.ng = fast_topo_ngpus(&e->t);
		g.seed = 1;
		g.moe.tokens = e->log.tokens;
		g.moe.topk = e->log.topk;
		g.moe.experts = experts;
		g.moe.token_bytes = fast_calib_ep_token_bytes(&e->log, fp8);
		g.moe.groups = true;
		if (fast_gen_traffic(&g, lim, &e->tr[fp8], &err) < 0) {
			fast_err_prefix(&err, "%s: regenerating its run", e->path);
			*rc = cli_report(&err);
			return NULL;
		}
		e->have[fp8] = true;
	}
	if (!c->compiled && calib_case_compile(c, "hier", &e->t, &e->tr[fp8].m[kind], &err) < 0) {
		fast_err_prefix(&err, "%s: hier", e->path);
		*rc = cli_report(&err);
		return NULL;
	}
	return c;
}

/* A row's time: the logged one, or rank 0's NVLink bytes of the
 * regenerated run (every token it receives, its own included, as the test
 * counts them) over the logged bandwidth. */
static double ep_target_us(struct ep_log *e, const struct fast_calib_ep_row *r)
{
	const struct fast_matrix *m = &e->tr[r->fp8].m[0];
	double bytes = 0;

	if (r->time_us > 0)
		return r->time_us;
	for (uint32_t s = 0; s < m->ng; s++)
		bytes += (double)m->bytes[(size_t)s * m->ng];
	return bytes / (r->nvl_GBps * 1e3);
}

/* The row a term is fitted to: the first BF16 dispatch (else FP8) or the
 * first combine; -1 when there is none. */
static int ep_pick(const struct fast_calib_ep_log *l, int kind)
{
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < l->n; i++)
			if ((int)l->rows[i].kind == kind && (pass || !l->rows[i].fp8))
				return (int)i;
	return -1;
}

static const char *ep_what(const struct fast_calib_ep_row *r, char *buf, size_t len)
{
	snprintf(buf, len, "%s %s", r->kind == FAST_CALIB_EP_DISPATCH ? "dispatch" : "combine",
		 r->fp8 ? "FP8" : "BF16");
	return buf;
}

/* Fit term *slot of hier (in e's topology) to row i, in [lo, hi]; copy
 * hier's entry to topo.  0, -2 (at a bound, warned) or an exit status. */
static int ep_term(struct ep_log *e, int i, double *slot, double lo, double hi,
		   const struct calib_impl_in *in, struct fast_topo *topo, const char *name)
{
	const struct fast_calib_ep_row *r = &e->log.rows[i];
	const struct sim_case *c;
	char what[160], w[24];
	int rc = 0;

	if (!(c = ep_case(e, r->fp8, (int)r->kind, in->experts, in->lim, &rc)))
		return rc;
	snprintf(what, sizeof what, "%s:%zu (%s): hier's %s", e->path, r->line,
		 ep_what(r, w, sizeof w), name);
	rc = calib_solve(c, slot, lo, hi, ep_target_us(e, r), what);
	*calib_entry(topo, "hier") = *calib_entry(&e->t, "hier");
	return rc;
}

/* Intranode: hier's engine (the row's SMs, their rate) from the dispatch.
 * (Its combine only checks: on one server hier's combine plan sums at the
 * token's source, which a plan leaves implicit, so nothing in it costs the
 * reduction.) */
static int ep_fit_intra(struct ep_log *e, const struct calib_impl_in *in, struct fast_topo *topo,
			struct calib_impl_out *out)
{
	struct fast_impl *m = calib_entry(&e->t, "hier");
	int d = ep_pick(&e->log, FAST_CALIB_EP_DISPATCH);
	char from[96];
	int rc;

	if (d < 0)
		return 0;
	m->engine = FAST_ENGINE_SM;
	m->sms = e->log.rows[d].sms;
	rc = ep_term(e, d, &m->engine_GBps, 1e-3, 1e4, in, topo, "GBps_per_sm");
	if (rc > 0)
		return rc;
	snprintf(from, sizeof from, "%s:%zu", e->path, e->log.rows[d].line);
	calib_add_term(out, "hier", "up_engine", from, "sm %u x %.4g GB/s", m->sms, m->engine_GBps);
	e->fitted[0] = d;
	return 0;
}

/* Internode: hier's scale-out rate from the dispatch (none where the run
 * is faster than any cap gives: the NICs bind), then its reduction rate
 * from the combine (which sums each server's contributions before they
 * cross). */
static int ep_fit_inter(struct ep_log *e, const struct calib_impl_in *in, struct fast_topo *topo,
			struct calib_impl_out *out)
{
	struct fast_impl *m = calib_entry(&e->t, "hier");
	int d = ep_pick(&e->log, FAST_CALIB_EP_DISPATCH), c = ep_pick(&e->log, FAST_CALIB_EP_COMBINE);
	double nic = fast_tier_Bps(&e->t.out) / 1e9;
	char from[96];
	int rc;

	*m = *calib_entry(topo, "hier"); /* the intranode fit's */
	if (d >= 0) {
		rc = ep_term(e, d, &m->out_GBps, 1e-3, nic, in, topo, "out_GBps");
		if (rc > 0)
			return rc;
		if (m->out_GBps >= nic) { /* no cap: the NIC */
			m->out_GBps = 0;
			*calib_entry(topo, "hier") = *m;
		}
		snprintf(from, sizeof from, "%s:%zu", e->path, e->log.rows[d].line);
		if (m->out_GBps > 0)
			calib_add_term(out, "hier", "out_GBps", from, "%.4g", m->out_GBps);
		else
			calib_add_term(out, "hier", "out_GBps", from, "0 (the NIC: %.2f GB/s)", nic);
		e->fitted[0] = d;
	}
	if (c >= 0) {
		double was = m->reduce_GBps;
		rc = ep_term(e, c, &m->reduce_GBps, 1, 1e6, in, topo, "reduce_GBps");
		if (rc > 0)
			return rc;
		snprintf(from, sizeof from, "%s:%zu", e->path, e->log.rows[c].line);
		if (rc == -2 && m->reduce_GBps >= 1e6) { /* faster than with free sums: kept */
			m->reduce_GBps = was;
			*calib_entry(topo, "hier") = *m;
			calib_add_term(out, "hier", "reduce_GBps", from, "%.4g (kept)", was);
		} else {
			calib_add_term(out, "hier", "reduce_GBps", from, "%.4g", m->reduce_GBps);
			e->fitted[1] = c;
		}
	}
	return 0;
}

/* Every row of e simulated with topo's hier as fitted. */
static int ep_report(struct ep_log *e, const struct calib_impl_in *in, const struct fast_topo *topo,
		     struct calib_impl_out *out)
{
	int rc = 0;

	*calib_entry(&e->t, "hier") = *fast_topo_impl(topo, "hier");
	for (size_t i = 0; i < e->log.n; i++) {
		const struct fast_calib_ep_row *r = &e->log.rows[i];
		const struct sim_case *c = ep_case(e, r->fp8, (int)r->kind, in->experts, in->lim, &rc);
		char w[24];
		bool fitted = (int)i == e->fitted[0] || (int)i == e->fitted[1];
		if (!c)
			return rc;
		calib_add_run(out, e->path, r->line, ep_what(r, w, sizeof w), r->sms, ep_target_us(e, r),
			calib_case_us(c), fitted);
	}
	return 0;
}

int calib_deepep_fit(const struct calib_impl_in *in, struct fast_topo *topo,
		     struct calib_impl_out *out)
{
	static struct ep_log logs[2];
	const char *paths[2] = { in->ep_intra, in->ep_inter };
	int rc = 0;

	for (int k = 0; k < 2 && rc == 0; k++)
		if (paths[k] && (rc = ep_load(&logs[k], paths[k], k == 1, topo, in->lim)) == 0)
			rc = k ? ep_fit_inter(&logs[k], in, topo, out)
			       : ep_fit_intra(&logs[k], in, topo, out);
	if (rc == -2)
		rc = 0;
	for (int k = 0; k < 2 && rc == 0; k++)
		if (paths[k])
			rc = ep_report(&logs[k], in, topo, out);
	for (int k = 0; k < 2; k++)
		if (paths[k])
			ep_free(&logs[k]);
	if (rc == 0 && (in->ep_intra || in->ep_inter)) {
		size_t l = strlen(topo->impl_source);
		snprintf(topo->impl_source + l, sizeof topo->impl_source - l,
			 "%shier fitted by fast calibrate to DeepEP's test logs", l ? "; " : "");
	}
	return rc;
}

