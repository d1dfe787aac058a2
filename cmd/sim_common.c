/*
 * sim_common.c - helpers shared by the simulator commands (see
 * sim_common.h).
 */
#include "sim_common.h"

#include "fast/check.h"

#include <string.h>

static const char *const sync_names[] = { [FAST_SIM_SYNC_STEP] = "step", [FAST_SIM_SYNC_RANK] = "rank" };

const char *simc_sync_name(enum fast_sim_sync m)
{
	return (size_t)m < sizeof sync_names / sizeof sync_names[0] ? sync_names[m] : "?";
}

bool simc_sync_option(struct cli_scan *s, enum fast_sim_sync *out)
{
	const char *v;

	if (!cli_value(s, "--sync", &v))
		return false;
	if (s->failed)
		return true;
	for (size_t i = 0; i < sizeof sync_names / sizeof sync_names[0]; i++) {
		if (strcmp(v, sync_names[i]) == 0) {
			*out = (enum fast_sim_sync)i;
			return true;
		}
	}
	cli_usage_error(s->cmd ? s->cmd->name : "fast", "--sync: '%.40s' is not step or rank", v);
	s->failed = true;
	return true;
}

bool simc_sim_option(struct cli_scan *s, struct fast_sim_opts *o)
{
	if (cli_flag(s, "--no-congestion")) {
		o->congestion = false;
		return true;
	}
	return simc_sync_option(s, &o->sync) || cli_double(s, "--epsilon", 0.0, 0.5, &o->epsilon) ||
	       cli_u32(s, "--in-flight", 1, FAST_IN_FLIGHT_MAX, &o->in_flight);
}

const char *simc_time(double s, char *buf, size_t len)
{
	if (s >= 1.0)
		snprintf(buf, len, "%.4f s", s);
	else if (s >= 1e-3)
		snprintf(buf, len, "%.4f ms", s * 1e3);
	else
		snprintf(buf, len, "%.3f us", s * 1e6);
	return buf;
}

int simc_check_plan(const char *plan_path, uint32_t i, const struct fast_plan *p,
		    const struct fast_topo *t, const struct fast_matrix *M,
		    struct fast_plan_view *keep)
{
	struct fast_plan_view own, *v = keep ? keep : &own;
	struct fast_err err;
	/* fast_plan_check() on a view of p with M, kept when asked: a token
	 * plan against the groups (its REDIST steps need them), a byte plan
	 * against the (per-GPU) bytes */
	int rc = fast_plan_view_open(v, p, M, &err);

	if (rc == 0) {
		rc = fast_plan_check(v, t, &err);
		if (rc < 0 || !keep)
			fast_plan_view_close(v);
	}

	if (rc == FAST_ECHECK) {
		fast_err_prefix(&err, "%s: plan %u (%s, matrix %u) is incorrect for the traffic",
				plan_path, i, p->label, p->matrix);
		cli_report(&err);
		fprintf(stderr, "fast: give --no-check to simulate it anyway\n");
		return 1;
	}
	if (rc < 0) {
		fast_err_prefix(&err, "%s: /plans/%u", plan_path, i);
		return cli_report(&err);
	}
	return 0;
}

static int write_with(const char *path, int (*fn)(FILE *f, const void *ctx, struct fast_err *err), const void *ctx)
{
	struct cli_out o;
	struct fast_err err;
	int rc;

	if ((rc = cli_out_open(&o, path)) != 0)
		return rc;
	if (fn(o.f, ctx, &err) < 0)
		return cli_out_fail(&o, &err);
	return cli_out_commit(&o);
}

struct tl_ctx {
	const struct fast_topo *t;
	const struct fast_sim_result *r;
	const char *title;
};

static int do_trace(FILE *f, const void *ctx, struct fast_err *err)
{
	const struct tl_ctx *c = ctx;
	return fast_sim_write_trace(c->t, c->r, f, err);
}

static int do_svg(FILE *f, const void *ctx, struct fast_err *err)
{
	const struct tl_ctx *c = ctx;
	return fast_sim_write_svg(c->t, c->r, c->title, f, err);
}

int simc_write_trace(const char *path, const struct fast_topo *t,
		     const struct fast_sim_result *r)
{
	struct tl_ctx c = { t, r, NULL };
	return write_with(path, do_trace, &c);
}

int simc_write_svg(const char *path, const struct fast_topo *t,
		   const struct fast_sim_result *r, const char *title)
{
	struct tl_ctx c = { t, r, title };
	return write_with(path, do_svg, &c);
}
