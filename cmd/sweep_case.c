/*
 * sweep_case.c - one what-if case and its CSV row (see sweep_case.h).
 */
#include "sweep_case.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define COLUMNS_V1                                                                           \
	"case,key,topo,servers,gpus,ngpus,up_GBps,out_GBps,traffic,seed,size_bytes,matrix,label," \
	"algo,options,status,time_us,algbw_GBps,busbw_GBps,bound_us,closed_us,ratio,rail_stages," \
	"steps,synth_us"
#define COLUMNS_V3                                                                           \
	"case,key,topo,servers,gpus_per_server,gpus_total,up_GBps,out_GBps,traffic,seed,"      \
	"size_bytes,matrix,label,algo,options,status,time_s,algbw_GBps,busbw_GBps,bound_s,"    \
	"closed_s,ratio,rail_stages,steps,synthesis_s,ident"
#define COLUMNS_V4 COLUMNS_V3 ",time_with_synthesis_s"
#define COLUMNS_V5 COLUMNS_V4 ",lp_s,latency_s"

const char sweep_csv_header[] = COLUMNS_V5 "\n";

/* Does text[0..len) start with the line `cols`?  *body: after its end. */
static bool header_is(const char *text, size_t len, const char *cols, size_t *body)
{
	size_t n = strlen(cols);

	if (len < n + 1 || memcmp(text, cols, n) != 0)
		return false;
	if (text[n] == '\n')
		*body = n + 1;
	else if (text[n] == '\r' && n + 1 < len && text[n + 1] == '\n')
		*body = n + 2;
	else
		return false;
	return true;
}

int sweep_csv_version(const char *text, size_t len, size_t *body)
{
	if (header_is(text, len, COLUMNS_V5, body))
		return 5;
	if (header_is(text, len, COLUMNS_V4, body))
		return 4;
	if (header_is(text, len, COLUMNS_V3, body))
		return 3;
	if (header_is(text, len, COLUMNS_V1 ",ident", body))
		return 2;
	if (header_is(text, len, COLUMNS_V1, body))
		return 1;
	return 0;
}

void sweep_row_init(struct sweep_row *r)
{
	memset(r, 0, sizeof *r);
	r->time_s = r->algbw_GBps = r->busbw_GBps = NAN;
	r->bound_s = r->closed_s = r->ratio = r->synth_s = r->time_with_synth_s = NAN;
	r->lp_s = r->latency_s = NAN;
	snprintf(r->status, sizeof r->status, "ok");
	snprintf(r->options, sizeof r->options, "-");
}

void sweep_sanitize(char *s)
{
	for (; *s; s++)
		if (*s == ',' || *s == '"' || (unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '_';
}

void sweep_eval_default(struct sweep_eval *e)
{
	memset(e, 0, sizeof *e);
	e->simulate = true;
	e->bound = SWEEP_BOUND_LP;
	fast_sim_opts_default(&e->sim);
}

/* --- CSV ------------------------------------------------------------------ */

static size_t put_num(char *buf, size_t len, double v)
{
	if (isnan(v))
		return (size_t)snprintf(buf, len, ",");
	return (size_t)snprintf(buf, len, ",%.9g", v);
}

size_t sweep_row_format(const struct sweep_row *r, char *buf, size_t len)
{
	size_t n;

	n = (size_t)snprintf(buf, len, "%llu,%s,%s,%u,%u,%u,%.9g,%.9g,%s,%llu,%llu,%u,%s,%s,%s,%s",
			     (unsigned long long)r->case_id, r->key, r->topo, r->servers, r->gpus,
			     r->ngpus, r->up_GBps, r->out_GBps, r->traffic,
			     (unsigned long long)r->seed, (unsigned long long)r->size_bytes, r->matrix,
			     r->label, r->algo, r->options, r->status);
	if (n >= len)
		return 0;
	n += put_num(buf + n, len - n, r->time_s);
	if (n >= len)
		return 0;
	n += put_num(buf + n, len - n, r->algbw_GBps);
	if (n >= len)
		return 0;
	n += put_num(buf + n, len - n, r->busbw_GBps);
	if (n >= len)
		return 0;
	n += put_num(buf + n, len - n, r->bound_s);
	if (n >= len)
		return 0;
	n += put_num(buf + n, len - n, r->closed_s);
	if (n >= len)
		return 0;
	n += put_num(buf + n, len - n, r->ratio);
	if (n >= len)
		return 0;
	n += (size_t)snprintf(buf + n, len - n, ",%u,%u", r->rail_stages, r->steps);
	if (n >= len)
		return 0;
	n += put_num(buf + n, len - n, r->synth_s);
	if (n >= len)
		return 0;
	n += (size_t)snprintf(buf + n, len - n, ",%s", r->ident);
	if (n >= len)
		return 0;
	n += put_num(buf + n, len - n, r->time_with_synth_s);
	if (n >= len)
		return 0;
	n += put_num(buf + n, len - n, r->lp_s);
	if (n >= len)
		return 0;
	n += put_num(buf + n, len - n, r->latency_s);
	if (n + 1 >= len)
		return 0;
	buf[n++] = '\n';
	buf[n] = '\0';
	return n;
}

static int get_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!*s || *s == '-')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end || errno)
		return -1;
	*out = v;
	return 0;
}

static int get_u32(const char *s, uint32_t *out)
{
	uint64_t v;
	if (get_u64(s, &v) < 0 || v > UINT32_MAX)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

static int get_num(const char *s, double scale, double *out)
{
	char *end;
	double v;

	if (!*s) {
		*out = NAN;
		return 0;
	}
	errno = 0;
	v = strtod(s, &end);
	if (*end || errno)
		return -1;
	*out = v * scale;
	return 0;
}

static int get_str(const char *s, char *out, size_t len)
{
	if (strlen(s) >= len)
		return -1;
	memcpy(out, s, strlen(s) + 1);
	return 0;
}

/* An ident is empty or SWEEP_IDENT_LEN lower-case hex digits. */
static int get_ident(const char *s, char *out)
{
	size_t n = strlen(s);

	if (n != 0 && n != SWEEP_IDENT_LEN)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return -1;
	memcpy(out, s, n + 1);
	return 0;
}

/* Rows written before options had one spelling ("order=smallest") get
 * the one spelling of include/fast/algo.h's table in their options column and the
 * key that ends in it, so a resumed sweep finds them under the keys it
 * makes now.  Options the table does not read are left as they are. */
static void respell_options(struct sweep_row *r)
{
	struct fast_algo_opts o;
	char buf[sizeof r->options], name[sizeof r->options], *part, *save = NULL;
	size_t kl = strlen(r->key), ol = strlen(r->options);

	if (strcmp(r->options, "-") == 0)
		return;
	fast_algo_opts_default(&o);
	memcpy(buf, r->options, ol + 1);
	for (part = strtok_r(buf, "/", &save); part; part = strtok_r(NULL, "/", &save)) {
		char *eq = strchr(part, '=');
		const struct fast_algo_option *opt;
		struct fast_err err;
		if (!eq)
			return;
		*eq = '\0';
		if (!(opt = fast_algo_option_find(part)) ||
		    fast_algo_option_parse(opt, eq + 1, &o, &err) < 0)
			return;
	}
	fast_algo_opts_name(&o, ~0u, "/", name, sizeof name);
	if (strcmp(name, r->options) == 0)
		return;
	if (kl >= ol + 6 && strncmp(r->key + kl - ol - 6, ";opts=", 6) == 0 &&
	    strcmp(r->key + kl - ol, r->options) == 0 && kl - ol + strlen(name) < sizeof r->key)
		snprintf(r->key + kl - ol, sizeof r->key - (kl - ol), "%s", name);
	snprintf(r->options, sizeof r->options, "%s", name);
}

/* Columns of a row of each version: 1 without ident, 2 and 3 with it, 4
 * also with time_with_synthesis_s, 5 with lp_s and latency_s. */
#define NCOLS_V1 (SWEEP_NCOLS - 4)
#define NCOLS_V3 (SWEEP_NCOLS - 3)
#define NCOLS_V4 (SWEEP_NCOLS - 2)

/* Parse a line of min_cols..max_cols columns whose times are in units of
 * `second` seconds (1e-6: versions 1 and 2 wrote microseconds).  A row
 * without time_with_synthesis_s (versions 1 to 3) gets time_s +
 * synthesis_s, what the column is. */
static int parse_cols(const char *line, uint32_t min_cols, uint32_t max_cols, double second,
		      struct sweep_row *r, bool *had_ident)
{
	char buf[2048];
	char *f[SWEEP_NCOLS + 1];
	size_t n = strlen(line), k = 0;
	char *p;

	if (n && line[n - 1] == '\n')
		n--;
	if (n && line[n - 1] == '\r')
		n--;
	if (n >= sizeof buf)
		return -1;
	memcpy(buf, line, n);
	buf[n] = '\0';
	f[k++] = buf;
	for (p = buf; *p; p++)
		if (*p == ',') {
			*p = '\0';
			if (k == max_cols)
				return -1;
			f[k++] = p + 1;
		}
	if (k < min_cols || k > max_cols)
		return -1;
	sweep_row_init(r);
	if (k > NCOLS_V1 && get_ident(f[NCOLS_V1], r->ident) < 0)
		return -1;
	if (had_ident)
		*had_ident = k > NCOLS_V1;
	if (get_u64(f[0], &r->case_id) || get_str(f[1], r->key, sizeof r->key) ||
	    get_str(f[2], r->topo, sizeof r->topo) || get_u32(f[3], &r->servers) ||
	    get_u32(f[4], &r->gpus) || get_u32(f[5], &r->ngpus) || get_num(f[6], 1, &r->up_GBps) ||
	    get_num(f[7], 1, &r->out_GBps) || get_str(f[8], r->traffic, sizeof r->traffic) ||
	    get_u64(f[9], &r->seed) || get_u64(f[10], &r->size_bytes) || get_u32(f[11], &r->matrix) ||
	    get_str(f[12], r->label, sizeof r->label) || get_str(f[13], r->algo, sizeof r->algo) ||
	    get_str(f[14], r->options, sizeof r->options) ||
	    get_str(f[15], r->status, sizeof r->status) || get_num(f[16], second, &r->time_s) ||
	    get_num(f[17], 1, &r->algbw_GBps) || get_num(f[18], 1, &r->busbw_GBps) ||
	    get_num(f[19], second, &r->bound_s) || get_num(f[20], second, &r->closed_s) ||
	    get_num(f[21], 1, &r->ratio) || get_u32(f[22], &r->rail_stages) ||
	    get_u32(f[23], &r->steps) || get_num(f[24], second, &r->synth_s))
		return -1;
	if (k < NCOLS_V4)
		r->time_with_synth_s = r->time_s + r->synth_s; /* NaN when either is */
	else if (get_num(f[NCOLS_V4 - 1], 1, &r->time_with_synth_s) < 0)
		return -1;
	if (k < SWEEP_NCOLS)
		r->lp_s = r->bound_s; /* bound_s was the LP: latency_s stays absent */
	else if (get_num(f[NCOLS_V4], 1, &r->lp_s) < 0 || get_num(f[NCOLS_V4 + 1], 1, &r->latency_s) < 0)
		return -1;
	if (!r->key[0])
		return -1;
	respell_options(r);
	return 0;
}

int sweep_row_parse(const char *line, struct sweep_row *r)
{
	return parse_cols(line, SWEEP_NCOLS, SWEEP_NCOLS, 1, r, NULL);
}

int sweep_row_parse_v1(const char *line, struct sweep_row *r, bool *had_ident)
{
	return parse_cols(line, NCOLS_V1, NCOLS_V3, 1e-6, r, had_ident);
}

int sweep_row_parse_version(const char *line, int version, struct sweep_row *r, bool *had_ident)
{
	if (version == 1)
		return sweep_row_parse_v1(line, r, had_ident);
	if (had_ident)
		*had_ident = true;
	if (version == 5)
		return sweep_row_parse(line, r);
	if (version == 4)
		return parse_cols(line, NCOLS_V4, NCOLS_V4, 1, r, NULL);
	return parse_cols(line, NCOLS_V3, NCOLS_V3, version == 2 ? 1e-6 : 1, r, NULL);
}

/* --- identity ---------------------------------------------------------------- */

void sweep_row_ident(struct sweep_row *r, const struct fast_topo *t, const struct fast_matrix *M,
		     const struct fast_algo_opts *ao, const struct sweep_eval *e)
{
	uint64_t ng = fast_topo_ngpus(t), h = FAST_HASH_INIT;
	const uint64_t *D = M->bytes;

	h = fast_hash_str(h, "fast results ident 2");
	h = fast_hash_u64(h, fast_topo_hash_of(t, r->algo));
	for (uint64_t i = 0; i < ng * ng; i++)
		h = fast_hash_u64(h, D[i]);
	h = fast_hash_u64(h, r->matrix);
	h = fast_hash_str(h, r->label);
	h = fast_hash_str(h, r->algo);
	if (ao) {
		h = fast_hash_u64(h, (uint64_t)ao->stages);
		h = fast_hash_u64(h, (uint64_t)ao->order);
		h = fast_hash_u64(h, (uint64_t)ao->balance);
		h = fast_hash_u64(h, ao->peers);
		h = fast_hash_u64(h, ao->chunk_bytes);
	} else {
		h = fast_hash_str(h, "a given plan");
	}
	h = fast_hash_u64(h, e->sim.congestion);
	h = fast_hash_double(h, e->sim.epsilon);
	if (M->kind != FAST_TRAFFIC_BYTES) {
		/* token traffic: the groups behind the bytes, and whether the
		 * schedule dedups (byte rows hash as they always did) */
		h = fast_hash_u64(h, (uint64_t)M->kind);
		h = fast_hash_u64(h, M->token_bytes);
		for (uint32_t g = 0; g < M->ngroups; g++) {
			h = fast_hash_u64(h, M->groups[g].src);
			h = fast_hash_u64(h, M->groups[g].ndst);
			h = fast_hash_u64(h, M->groups[g].tokens);
			for (uint32_t i = 0; i < M->groups[g].ndst; i++)
				h = fast_hash_u64(h, M->dsts[M->groups[g].dst0 + i]);
		}
		h = fast_hash_u64(h, ao ? (uint64_t)ao->dedup : UINT64_MAX);
	}
	if (e->sim.sync != FAST_SIM_SYNC_IMPL) /* the idents of the default stay */
		h = fast_hash_u64(h, (uint64_t)e->sim.sync);
	if (e->sim.in_flight > 1) /* as must one wave in flight's (0 or 1) */
		h = fast_hash_u64(h, 0x100u + e->sim.in_flight);
	snprintf(r->ident, sizeof r->ident, "%016llx", (unsigned long long)h);
}

/* --- evaluation ------------------------------------------------------------ */

static void set_error(struct sweep_row *r, const char *what, const struct fast_err *err)
{
	/* a long message is cut: the full one went to stderr */
	snprintf(r->status, sizeof r->status, "error:%.20s: %.120s", what, err->msg);
	sweep_sanitize(r->status);
}

/* r's measured fields from row w of case result cr. */
static void fill_row(const struct fast_case_row *w, struct sweep_row *r)
{
	const struct fast_plan *p = w->plan;

	if (w->stage)
		set_error(r, w->stage, &w->err);
	if (p) {
		r->steps = (uint32_t)p->nsteps;
		r->rail_stages = 0;
		for (size_t i = 0; i < p->nsteps; i++)
			if (p->steps[i].kind == FAST_STEP_RAIL)
				r->rail_stages++;
	}
	if (!isnan(w->synth_s))
		r->synth_s = w->synth_s;
	if (!w->evaluated || !w->simulated)
		return;
	r->time_s = w->sim.time_s;
	r->algbw_GBps = w->sim.algbw_GBps;
	r->busbw_GBps = w->sim.busbw_GBps;
	r->time_with_synth_s = r->time_s + r->synth_s; /* NaN for a given plan */
	if (!isnan(r->bound_s) && r->bound_s > 0)
		r->ratio = r->time_s / r->bound_s;
	else if (!isnan(r->closed_s) && r->closed_s > 0)
		r->ratio = r->time_s / r->closed_s;
}

int sweep_case_eval(const struct fast_topo *t, const struct fast_matrix *M,
		    const struct sweep_case_plan *cp, const struct sweep_eval *e,
		    struct sweep_row *shared, bool *bounded, struct sweep_row *r)
{
	struct fast_case c;
	struct fast_case_algo a = { .algo = cp->given ? NULL : cp->algo, .plan = cp->given,
				    .view = cp->view };
	struct fast_case_result cr;
	struct fast_err err;
	int rc;

	fast_case_init(&c, t, M);
	c.algos = &a;
	c.nalgos = 1;
	c.bound = *bounded ? FAST_CASE_BOUND_NONE : (enum fast_case_bound)e->bound;
	c.simulate = e->simulate;
	c.sim = e->sim;
	c.synthesis = !cp->given; /* a given plan has no synthesis */
	if (cp->opts)
		a.opts = *cp->opts;
	rc = fast_case_eval(&c, &cr, &err);
	if (!cr.rows) {
		set_error(r, "plan", &err);
		return rc;
	}
	if (!*bounded && e->bound != SWEEP_BOUND_NONE) {
		sweep_row_init(shared);
		if (cr.bound_rc < 0) {
			set_error(shared, "bound", &cr.bound_err);
		} else {
			/* with "closed" bound_s is the closed form plus the
			 * latency floor (bound.h); the LP was not solved */
			shared->bound_s = cr.bound.bound_s;
			shared->latency_s = cr.bound.latency_s;
			if (e->bound != SWEEP_BOUND_CLOSED)
				shared->lp_s = cr.bound.lp_s;
			shared->closed_s = cr.bound.closed_s;
		}
	}
	*bounded = true;
	if (e->bound != SWEEP_BOUND_NONE) {
		r->bound_s = shared->bound_s;
		r->lp_s = shared->lp_s;
		r->latency_s = shared->latency_s;
		r->closed_s = shared->closed_s;
	}
	fill_row(&cr.rows[0], r);
	if (e->bound != SWEEP_BOUND_NONE && strcmp(shared->status, "ok") != 0)
		snprintf(r->status, sizeof r->status, "%s", shared->status); /* the bound's first */
	fast_case_result_free(&cr);
	return rc;
}
