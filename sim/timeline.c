/*
 * timeline.c - render a simulation's activity (struct fast_sim_activity,
 * one record per (resource, step)) as a Chrome trace for Perfetto and as a
 * standalone SVG Gantt chart.
 *
 * Chrome trace: pid = server (the core, when oversubscribed, is pid N),
 * tid = resource within the server, one "X" event per (step, resource)
 * spanning its first flow start to its last flow end, args = bytes.
 * SVG: per server its NIC rows and one scale-up row; a bar per (step, row)
 * spans the step's activity on that row's resources; overlapping bars go
 * to sub-lanes.  The NIC rows are one row for all of a server's NICs
 * ("server 0 NICs 0-7") when no two steps overlap there (FAST's stages),
 * else one row per scale-out port ("server 0 NIC 3": NIC i on rail i with
 * one NIC per GPU, or a NIC GPUs share; "server 0 NICs 6-7": the NICs one
 * GPU drives), so that the concurrent steps of a baseline are drawn on the
 * NIC that carries them rather than on anonymous sub-lanes.  Colours by step kind, alternating
 * shades between consecutive steps so stage boundaries stay visible.
 *
 * Both writers take a FILE the caller owns and return FAST_EIO when the
 * stream reports an error; they never print anywhere else.
 */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint32_t res_server(const struct fast_topo *topo, const struct fast_sim_res *r)
{
	if (r->kind == FAST_RES_CORE)
		return topo->servers;
	return r->gpu / topo->gpus;
}

/* thread id inside the server's process: grouped by kind, then index */
static uint32_t res_tid(const struct fast_topo *topo, const struct fast_sim_res *r)
{
	uint32_t i = r->gpu % topo->gpus, j = r->peer % topo->gpus;

	switch (r->kind) {
	case FAST_RES_NIC_EGRESS:
		return 1 + r->port;
	case FAST_RES_NIC_INGRESS:
		return 10001 + r->port;
	case FAST_RES_UP_EGRESS:
		return 20001 + i;
	case FAST_RES_UP_INGRESS:
		return 30001 + i;
	case FAST_RES_MESH_LINK:
		return 40001 + i * topo->gpus + j;
	case FAST_RES_CORE:
		return 1;
	case FAST_RES_GPU_REDUCE:
		return 50001 + i;
	case FAST_RES_COPY_EGRESS:
		return 60001 + i;
	case FAST_RES_COPY_INGRESS:
		return 70001 + i;
	}
	return 0;
}

static const char *res_label(const struct fast_topo *topo, const struct fast_sim_res *r,
			     char *buf, size_t len)
{
	uint32_t i = r->gpu % topo->gpus, j = r->peer % topo->gpus;
	char nics[32];

	switch (r->kind) {
	case FAST_RES_NIC_EGRESS:
	case FAST_RES_NIC_INGRESS:
		fast_topo_port_name(topo, r->port, nics, sizeof nics);
		snprintf(buf, len, "%s %s", nics, r->kind == FAST_RES_NIC_EGRESS ? "egress" : "ingress");
		break;
	case FAST_RES_UP_EGRESS:
		snprintf(buf, len, "scale-up %u egress", i);
		break;
	case FAST_RES_UP_INGRESS:
		snprintf(buf, len, "scale-up %u ingress", i);
		break;
	case FAST_RES_MESH_LINK:
		snprintf(buf, len, "mesh link %u->%u", i, j);
		break;
	case FAST_RES_CORE:
		snprintf(buf, len, "core");
		break;
	case FAST_RES_GPU_REDUCE:
		snprintf(buf, len, "GPU %u reductions", i);
		break;
	case FAST_RES_COPY_EGRESS:
	case FAST_RES_COPY_INGRESS:
		snprintf(buf, len, "GPU %u copies %s", i,
			 r->kind == FAST_RES_COPY_EGRESS ? "out" : "in");
		break;
	}
	return buf;
}

int fast_sim_write_trace(const struct fast_topo *topo, const struct fast_sim_result *r,
			 FILE *f, struct fast_err *err)
{
	char name[64];
	uint8_t *seen = fast_calloc(r->nres ? r->nres : 1, 1);
	bool first = true;

	if (!seen)
		return fast_err_set(err, FAST_ENOMEM, "timeline: out of memory");
	fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n", f);
	for (uint32_t s = 0; s <= topo->servers; s++) {
		bool core = s == topo->servers;
		if (core) {
			bool any = false;
			for (uint32_t ri = 0; ri < r->nres; ri++)
				any |= r->res[ri].kind == FAST_RES_CORE;
			if (!any)
				break;
		}
		fprintf(f, "%s{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%u,\"args\":{\"name\":\"%s%u\"}}",
			first ? "" : ",\n", s, core ? "core " : "server ", s);
		fprintf(f, ",\n{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":%u,\"args\":{\"sort_index\":%u}}", s, s);
		first = false;
	}
	for (size_t k = 0; k < r->nact; k++) {
		const struct fast_sim_activity *a = &r->act[k];
		const struct fast_sim_res *res = &r->res[a->res];
		const struct fast_sim_step *st = &r->steps[a->step];
		uint32_t pid = res_server(topo, res), tid = res_tid(topo, res);

		if (!seen[a->res]) {
			seen[a->res] = 1;
			fprintf(f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%u,\"tid\":%u,\"args\":{\"name\":\"%s\"}}",
				pid, tid, res_label(topo, res, name, sizeof name));
			fprintf(f, ",\n{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":%u,\"tid\":%u,\"args\":{\"sort_index\":%u}}",
				pid, tid, tid);
		}
		fprintf(f, ",\n{\"name\":\"%s %u\",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%u,\"tid\":%u,"
			"\"ts\":%.4f,\"dur\":%.4f,\"args\":{\"step\":%u,\"bytes\":%llu}}",
			fast_step_kind_name(st->kind, st->tier), a->step, fast_step_kind_name(st->kind, st->tier), pid, tid, a->t0 * 1e6,
			(a->t1 - a->t0) * 1e6, a->step, (unsigned long long)a->bytes);
	}
	fputs("\n]}\n", f);
	free(seen);
	if (ferror(f))
		return fast_err_set(err, FAST_EIO, "timeline: write failed");
	return 0;
}

/* --- SVG ------------------------------------------------------------------ */

struct bar {
	uint32_t row, step;
	double t0, t1;
	uint64_t bytes;
	uint32_t lane;
};

static int cmp_bar(const void *a, const void *b)
{
	const struct bar *x = a, *y = b;
	if (x->row != y->row)
		return x->row < y->row ? -1 : 1;
	if (x->t0 != y->t0)
		return x->t0 < y->t0 ? -1 : 1;
	return x->step < y->step ? -1 : x->step > y->step;
}

static int cmp_bar_step(const void *a, const void *b)
{
	const struct bar *x = a, *y = b;
	if (x->row != y->row)
		return x->row < y->row ? -1 : 1;
	return x->step < y->step ? -1 : x->step > y->step;
}

/* fill colours: [class][shade] */
static const char *const colours[4][2] = {
	{ "#4e79a7", "#a0cbe8" }, /* up: explicit scale-up transfers (balancing, intrinsic, relays) */
	{ "#f28e2b", "#ffbe7d" }, /* out: explicit scale-out transfers */
	{ "#e15759", "#ff9d9a" }, /* rail stage */
	{ "#59a14f", "#8cd17d" }, /* redistribution */
};
static const char *const class_names[4] = {
	"scale-up transfers", "scale-out transfers", "rail stage (FAST)", "redistribution (FAST)",
};

static int class_of(const struct fast_sim_step *s)
{
	switch (s->kind) {
	case FAST_STEP_RAIL:
		return 2;
	case FAST_STEP_REDIST:
		return 3;
	default:
		return s->tier == FAST_TIER_OUT ? 1 : 0;
	}
}

static double nice_step(double span, int target)
{
	double raw = span / target, p = pow(10.0, floor(log10(raw))), m = raw / p;
	return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}

#define SVG_MAX_SERVERS 32
#define SVG_MAX_NIC_ROWS 64 /* per-NIC rows: show at most this many */
#define MAX_LANES 4

/* The SVG's rows: per shown server `nic_rows` NIC rows (1, or one per NIC)
 * then its scale-up row. */
struct svg_rows {
	uint32_t shown, nic_rows, per_server, n;
};

static void svg_rows_init(struct svg_rows *L, const struct fast_topo *topo, bool per_nic)
{
	uint32_t P = fast_topo_ports(topo);
	uint32_t cap = per_nic ? SVG_MAX_NIC_ROWS / P : SVG_MAX_SERVERS;

	L->nic_rows = per_nic ? P : 1;
	L->shown = topo->servers < cap ? topo->servers : cap;
	if (L->shown == 0 && topo->servers)
		L->shown = 1;
	L->per_server = L->nic_rows + 1;
	L->n = L->per_server * L->shown;
}

/* Row of an activity's resource, or UINT32_MAX when it is not drawn. */
static uint32_t svg_row_of(const struct svg_rows *L, const struct fast_topo *topo,
			   const struct fast_sim_res *res)
{
	uint32_t s = res_server(topo, res);
	bool nic = res->kind == FAST_RES_NIC_EGRESS || res->kind == FAST_RES_NIC_INGRESS;

	if (res->kind == FAST_RES_CORE || s >= L->shown)
		return UINT32_MAX;
	if (!nic)
		return s * L->per_server + L->nic_rows;
	return s * L->per_server + (L->nic_rows > 1 ? res->port : 0);
}

static bool svg_row_is_up(const struct svg_rows *L, uint32_t row)
{
	return row % L->per_server == L->nic_rows;
}

static void svg_row_label(const struct svg_rows *L, const struct fast_topo *topo, uint32_t row,
			  char *buf, size_t len)
{
	uint32_t s = row / L->per_server, k = row % L->per_server;
	char nics[32];

	if (k == L->nic_rows)
		snprintf(buf, len, "server %u scale-up", s);
	else if (L->nic_rows > 1) { /* a row per port: its NIC, or its GPU's NICs */
		fast_topo_port_name(topo, k, nics, sizeof nics);
		snprintf(buf, len, "server %u %s", s, nics);
	} else if (topo->nics == 1)
		snprintf(buf, len, "server %u NIC 0", s);
	else
		snprintf(buf, len, "server %u NICs 0-%u", s, topo->nics - 1);
}

/* One bar per (row, step) spanning the step's activity on the row's
 * resources, sorted by row then start; returns the count.  Bytes are
 * counted once per transfer: on the egress side (or the mesh link). */
static size_t svg_bars(const struct svg_rows *L, const struct fast_topo *topo,
		       const struct fast_sim_result *r, struct bar *bars)
{
	size_t nb = 0, m = 0;

	for (size_t k = 0; k < r->nact; k++) {
		const struct fast_sim_activity *a = &r->act[k];
		const struct fast_sim_res *res = &r->res[a->res];
		uint32_t row = svg_row_of(L, topo, res);
		if (row == UINT32_MAX)
			continue;
		/* a mesh flow's copy resources carry the link's bytes again */
		bool counted = res->kind != FAST_RES_NIC_INGRESS && res->kind != FAST_RES_UP_INGRESS &&
			       res->kind != FAST_RES_COPY_EGRESS && res->kind != FAST_RES_COPY_INGRESS;
		bars[nb++] = (struct bar){ row, a->step, a->t0, a->t1, counted ? a->bytes : 0, 0 };
	}
	if (!nb)
		return 0;
	qsort(bars, nb, sizeof *bars, cmp_bar_step);
	for (size_t k = 0; k < nb; k++) {
		struct bar *p = m ? &bars[m - 1] : NULL;
		if (p && p->row == bars[k].row && p->step == bars[k].step) {
			if (bars[k].t0 < p->t0)
				p->t0 = bars[k].t0;
			if (bars[k].t1 > p->t1)
				p->t1 = bars[k].t1;
			p->bytes += bars[k].bytes;
		} else {
			bars[m++] = bars[k];
		}
	}
	qsort(bars, m, sizeof *bars, cmp_bar);
	return m;
}

/* Greedy sub-lanes per row (bars sorted by row, then start): lanes[row]
 * receives the lanes the row needs (at most MAX_LANES; the last lane takes
 * whatever does not fit). */
static void svg_lanes(struct bar *bars, size_t nb, uint32_t *lanes, uint32_t nrows)
{
	double ends[MAX_LANES];
	uint32_t row = UINT32_MAX;

	memset(lanes, 0, nrows * sizeof *lanes);
	for (size_t k = 0; k < nb; k++) {
		uint32_t l;
		if (bars[k].row != row) {
			row = bars[k].row;
			for (l = 0; l < MAX_LANES; l++)
				ends[l] = -1.0;
		}
		for (l = 0; l < MAX_LANES - 1; l++)
			if (ends[l] <= bars[k].t0 + 1e-12)
				break;
		bars[k].lane = l;
		if (bars[k].t1 > ends[l])
			ends[l] = bars[k].t1;
		if (l + 1 > lanes[row])
			lanes[row] = l + 1;
	}
}

/* The title (escaped) and the line under it. */
static void svg_head(FILE *f, const struct fast_topo *topo, const char *title,
		     const struct svg_rows *L, bool per_nic, double span, const char *uname,
		     double width, double height, double left)
{
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
		"viewBox=\"0 0 %.0f %.0f\" font-family=\"Helvetica, Arial, sans-serif\" font-size=\"12\">\n",
		width, height, width, height);
	fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
	fprintf(f, "<text x=\"%.0f\" y=\"22\" font-size=\"15\" font-weight=\"bold\">", left);
	if (title) {
		for (const char *c = title; *c; c++) {
			if (*c == '<')
				fputs("&lt;", f);
			else if (*c == '&')
				fputs("&amp;", f);
			else if (*c == '>')
				fputs("&gt;", f);
			else
				fputc(*c, f);
		}
	} else {
		fputs("simulated timeline", f);
	}
	fprintf(f, "</text>\n<text x=\"%.0f\" y=\"40\" fill=\"#555\">completion %.2f %s, %u servers x %u GPUs",
		left, span, uname, topo->servers, topo->gpus);
	if (L->shown < topo->servers)
		fprintf(f, " (first %u servers shown)", L->shown);
	if (per_nic && topo->nics == topo->gpus)
		fputs("; a row per NIC (NIC i: GPU i's NIC, on rail i)", f);
	else if (per_nic && topo->nics < topo->gpus)
		fputs("; a row per NIC (each shared by the GPUs behind it)", f);
	else if (per_nic)
		fputs("; a row per GPU's group of NICs (striped)", f);
	fputs("</text>\n", f);
}

/* The time grid and axis over [0, span] (in uname), from top to bottom. */
static void svg_axis(FILE *f, double span, const char *uname, double left, double plot_w,
		     double top, double bottom)
{
	double step = nice_step(span, 10);

	for (double v = 0; v <= span * 1.0001; v += step) {
		double x = left + plot_w * v / span;
		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n",
			x, top - 4, x, bottom);
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g</text>\n", x,
			bottom + 16, v);
	}
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">time (%s)</text>\n",
		left + plot_w / 2, bottom + 34, uname);
}

/* The legend of the classes used, at height ly. */
static void svg_legend(FILE *f, const bool used[4], double left, double ly)
{
	double x = left;

	for (int c = 0; c < 4; c++) {
		if (!used[c])
			continue;
		fprintf(f, "<rect x=\"%.0f\" y=\"%.0f\" width=\"14\" height=\"12\" fill=\"%s\"/>"
			"<rect x=\"%.0f\" y=\"%.0f\" width=\"14\" height=\"12\" fill=\"%s\"/>\n",
			x, ly, colours[c][0], x + 14, ly, colours[c][1]);
		fprintf(f, "<text x=\"%.0f\" y=\"%.0f\">%s</text>\n", x + 34, ly + 10, class_names[c]);
		x += 48 + 7.0 * (double)strlen(class_names[c]);
	}
	fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" fill=\"#555\">(dark/light alternate between consecutive steps of a kind; "
		"hover a bar for step, time and bytes)</text>\n", left, ly + 28);
}

int fast_sim_write_svg(const struct fast_topo *topo, const struct fast_sim_result *r,
		       const char *title, FILE *f, struct fast_err *err)
{
	struct svg_rows L;
	struct bar *bars = NULL;
	size_t nb = 0;
	uint32_t *lanes = NULL;
	double *rowy = NULL, *laneh = NULL;
	double T = r->time_s > 0 ? r->time_s : 1e-6;
	double unit = T < 2e-3 ? 1e6 : 1e3;
	const char *uname = T < 2e-3 ? "\xc2\xb5s" : "ms";
	/* a per-NIC row is nic_h high whatever its lanes (they split it) */
	const double left = 130, right = 30, width = 1200, top = 56, lane_h = 11, nic_h = 14;
	double plot_w = width - left - right, y, height;
	bool used[4] = { false, false, false, false }, per_nic = false;
	uint8_t *shade = NULL;

	/* merged NIC rows first; one row per NIC when steps overlap there */
	svg_rows_init(&L, topo, false);
	bars = fast_calloc(r->nact ? r->nact : 1, sizeof *bars);
	lanes = fast_calloc(L.n ? L.n : 1, sizeof *lanes);
	if (!bars || !lanes)
		goto oom;
	nb = svg_bars(&L, topo, r, bars);
	svg_lanes(bars, nb, lanes, L.n);
	for (uint32_t row = 0; row < L.n && fast_topo_ports(topo) > 1; row++)
		per_nic |= !svg_row_is_up(&L, row) && lanes[row] > 1;
	if (per_nic) {
		free(lanes);
		svg_rows_init(&L, topo, true);
		lanes = fast_calloc(L.n ? L.n : 1, sizeof *lanes);
		if (!lanes)
			goto oom;
		nb = svg_bars(&L, topo, r, bars);
		svg_lanes(bars, nb, lanes, L.n);
	}
	rowy = fast_calloc(L.n + 1, sizeof *rowy);
	laneh = fast_calloc(L.n ? L.n : 1, sizeof *laneh);
	if (!rowy || !laneh)
		goto oom;
	y = top;
	for (uint32_t row = 0; row < L.n; row++) {
		uint32_t l = lanes[row] ? lanes[row] : 1;
		bool up = svg_row_is_up(&L, row);
		double h = per_nic && !up ? nic_h : l * lane_h;
		laneh[row] = h / l;
		rowy[row] = y;
		y += h + (per_nic && !up ? 2 : 6) + (up ? 8 : 0);
	}
	rowy[L.n] = y;
	for (size_t k = 0; k < nb; k++)
		used[class_of(&r->steps[bars[k].step])] = true;
	/* shade: alternate between consecutive steps of the same class */
	shade = fast_calloc(r->nsteps ? r->nsteps : 1, 1);
	if (!shade)
		goto oom;
	{
		uint32_t ord[4] = { 0, 0, 0, 0 };
		for (uint32_t st = 0; st < r->nsteps; st++)
			shade[st] = (uint8_t)(ord[class_of(&r->steps[st])]++ % 2);
	}
	height = y + 100;

	svg_head(f, topo, title, &L, per_nic, T * unit, uname, width, height, left);
	svg_axis(f, T * unit, uname, left, plot_w, top, rowy[L.n]);
	for (uint32_t row = 0; row < L.n; row++) {
		bool up = svg_row_is_up(&L, row);
		double h = rowy[row + 1] - rowy[row] - (per_nic && !up ? 2 : 6) - (up ? 8 : 0);
		char label[64];
		svg_row_label(&L, topo, row, label, sizeof label);
		fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>\n",
			left, rowy[row], plot_w, h, (row / L.per_server) % 2 ? "#f7f7f7" : "#efefef");
		fprintf(f, "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\"%s>%s</text>\n", left - 8,
			rowy[row] + h / 2 + (per_nic && !up ? 3.5 : 4), per_nic && !up ? " font-size=\"10\"" : "",
			label);
	}
	for (size_t k = 0; k < nb; k++) {
		const struct bar *b = &bars[k];
		const struct fast_sim_step *st = &r->steps[b->step];
		double x0 = left + plot_w * b->t0 / T, x1 = left + plot_w * b->t1 / T;
		double w = x1 - x0 < 0.5 ? 0.5 : x1 - x0, lh = laneh[b->row];
		char sz[32];
		fprintf(f, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"%s\" stroke=\"white\" stroke-width=\"0.3\">"
			"<title>step %u (%s): %.2f-%.2f %s, %s</title></rect>\n",
			x0, rowy[b->row] + b->lane * lh, w, lh - (lh > 4 ? 1 : 0.3),
			colours[class_of(st)][shade[b->step]], b->step, fast_step_kind_name(st->kind, st->tier), b->t0 * unit,
			b->t1 * unit, uname, fast_size_format(b->bytes, sz, sizeof sz));
	}
	svg_legend(f, used, left, rowy[L.n] + 52);
	fputs("</svg>\n", f);
	free(shade);
	free(bars);
	free(lanes);
	free(rowy);
	free(laneh);
	if (ferror(f))
		return fast_err_set(err, FAST_EIO, "svg: write failed");
	return 0;
oom:
	free(shade);
	free(bars);
	free(lanes);
	free(rowy);
	free(laneh);
	return fast_err_set(err, FAST_ENOMEM, "svg: out of memory");
}
