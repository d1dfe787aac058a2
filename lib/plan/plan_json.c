/*
 * plan_json.c - the plan file format (schemas/plan.schema.json) and its
 * canonical writer (fast_planset_write).  The strict reader
 * (fast_planset_parse / fast_planset_load) that checks every field against
 * the limits in struct fast_limits and names the JSON path of what is
 * wrong is plan_json_read.c.
 */
#include "fast/plan.h"

#include <stdlib.h>
#include <string.h>

#include "lib/base/json.h"

/*
 * Format (schemas/plan.schema.json): one object per plan, one line per
 * lane, step and transfer, numbers as exact integers.  The writer emits a
 * canonical form, so write -> read -> write is byte-identical:
 *   lanes     [src_server, dst_server, rail, [[src, dst, off, len], ...]]
 *   steps     {"id", "tier", "chunks" (only when > 1), "deps", and exactly
 *             one of "transfers" | "rail" | "redist"}
 *   deps      a step id, or {"step": id, "pipelined": true}
 *   transfers [from, to, [[src, dst, off, len], ...]]
 *   rail      {"perm": [servers entries], "bytes": w}, or with k > 1
 *             permutations (version 4) {"perms": [[servers entries], ...],
 *             "bytes": [w_1, ..., w_k]}
 *   redist    id of the rail step redistributed
 * Token plans (version 3; a set of byte plans is written as version 2,
 * byte for byte as before): "kind" "dispatch" | "combine" after
 * gpus_per_server, "masks" (combine) a list of canonical lower-case hex
 * strings ("0x3f": no leading zeros, non-zero), pieces [g, off, len]
 * (dispatch) or [g, off, len, k] (combine, k indexes masks), and a
 * step kind "reduce": [[gpu, [pieces]], ...], one sum per element.
 * A set is written as version 4 when a plan has a rail step of several
 * permutations, else as version 3 when it has a token plan, else 2.
 */

static void put_pieces(FILE *f, const struct fast_plan *p, uint32_t p0, uint32_t n)
{
	fputc('[', f);
	for (uint32_t k = 0; k < n; k++) {
		const struct fast_piece *pc = &p->pieces[p0 + k];
		const char *sep = k ? "," : "";
		if (p->kind == FAST_TRAFFIC_DISPATCH)
			fprintf(f, "%s[%u,%llu,%llu]", sep, pc->src, (unsigned long long)pc->off,
				(unsigned long long)pc->len);
		else if (p->kind == FAST_TRAFFIC_COMBINE)
			fprintf(f, "%s[%u,%llu,%llu,%u]", sep, pc->src, (unsigned long long)pc->off,
				(unsigned long long)pc->len, pc->dst);
		else
			fprintf(f, "%s[%u,%u,%llu,%llu]", sep, pc->src, pc->dst,
				(unsigned long long)pc->off, (unsigned long long)pc->len);
	}
	fputc(']', f);
}

static void put_perm(FILE *f, const struct fast_plan *p, const uint32_t *perm)
{
	fputc('[', f);
	for (uint32_t a = 0; a < p->servers; a++)
		fprintf(f, "%s%u", a ? "," : "", perm[a]);
	fputc(']', f);
}

/* One permutation as "perm" and a number, several as "perms" and a list. */
static void write_rail(FILE *f, const struct fast_plan *p, const struct fast_step *s)
{
	if (s->nperms == 1) {
		fputs(",\"rail\":{\"perm\":", f);
		put_perm(f, p, p->perm + s->perm0);
		fprintf(f, ",\"bytes\":%llu}}", (unsigned long long)fast_plan_rail_budget(p, s, 0));
		return;
	}
	fputs(",\"rail\":{\"perms\":[", f);
	for (uint32_t j = 0; j < s->nperms; j++) {
		fputs(j ? "," : "", f);
		put_perm(f, p, p->perm + s->perm0 + (size_t)j * p->servers);
	}
	fputs("],\"bytes\":[", f);
	for (uint32_t j = 0; j < s->nperms; j++)
		fprintf(f, "%s%llu", j ? "," : "", (unsigned long long)fast_plan_rail_budget(p, s, j));
	fputs("]}}", f);
}

static void write_step(FILE *f, const struct fast_plan *p, size_t t)
{
	const struct fast_step *s = &p->steps[t];

	fprintf(f, "{\"id\":%zu,\"tier\":\"%s\"", t, s->tier == FAST_TIER_OUT ? "out" : "up");
	if (s->chunks > 1)
		fprintf(f, ",\"chunks\":%u", s->chunks);
	fputs(",\"deps\":[", f);
	for (uint32_t j = 0; j < s->ndeps; j++) {
		const struct fast_dep *d = &p->deps[s->dep0 + j];
		if (d->pipelined)
			fprintf(f, "%s{\"step\":%u,\"pipelined\":true}", j ? "," : "", d->step);
		else
			fprintf(f, "%s%u", j ? "," : "", d->step);
	}
	fputc(']', f);
	switch (s->kind) {
	case FAST_STEP_EXPLICIT:
		fputs(",\"transfers\":[", f);
		for (uint32_t j = 0; j < s->nxfers; j++) {
			const struct fast_xfer *x = &p->xfers[s->xfer0 + j];
			fprintf(f, "%s\n[%u,%u,", j ? "," : "", x->from, x->to);
			put_pieces(f, p, x->piece0, x->npieces);
			fputc(']', f);
		}
		fputs("]}", f);
		break;
	case FAST_STEP_REDUCE: /* one sum per transfer, from == to */
		fputs(",\"reduce\":[", f);
		for (uint32_t j = 0; j < s->nxfers; j++) {
			const struct fast_xfer *x = &p->xfers[s->xfer0 + j];
			fprintf(f, "%s\n[%u,", j ? "," : "", x->to);
			put_pieces(f, p, x->piece0, x->npieces);
			fputc(']', f);
		}
		fputs("]}", f);
		break;
	case FAST_STEP_RAIL:
		write_rail(f, p, s);
		break;
	case FAST_STEP_REDIST:
		fprintf(f, ",\"redist\":%u}", s->stage);
		break;
	}
}

static void write_plan(FILE *f, const struct fast_plan *p)
{
	fputs("{\"label\":", f);
	fast_json_put_string(f, p->label);
	fprintf(f, ",\"matrix\":%u,\"algo\":", p->matrix);
	fast_json_put_string(f, p->algo);
	fputs(",\"options\":", f);
	fast_json_put_string(f, p->options);
	fprintf(f, ",\"servers\":%u,\"gpus_per_server\":%u,", p->servers, p->gpus);
	if (p->kind != FAST_TRAFFIC_BYTES)
		fprintf(f, "\"kind\":\"%s\",", fast_traffic_kind_name(p->kind));
	if (p->kind == FAST_TRAFFIC_COMBINE) {
		fputs("\"masks\":[", f);
		for (size_t k = 0; k < p->nmasks; k++)
			fprintf(f, "%s\"0x%llx\"", k ? "," : "", (unsigned long long)p->masks[k]);
		fputs("],", f);
	}
	if (p->nlanes) {
		fputs("\"lanes\":[", f);
		for (size_t l = 0; l < p->nlanes; l++) {
			const struct fast_lane *ln = &p->lanes[l];
			fprintf(f, "%s\n[%u,%u,%u,", l ? "," : "", ln->src_server, ln->dst_server,
				ln->rail);
			put_pieces(f, p, ln->piece0, ln->npieces);
			fputc(']', f);
		}
		fputs("],", f);
	}
	fputs("\"steps\":[", f);
	for (size_t t = 0; t < p->nsteps; t++) {
		fputs(t ? ",\n" : "\n", f);
		write_step(f, p, t);
	}
	fputs("]}", f);
}

int fast_planset_write(const struct fast_planset *ps, FILE *f, struct fast_err *err)
{
	int version = FAST_PLAN_VERSION_BYTES;

	for (uint32_t i = 0; i < ps->count; i++) {
		const struct fast_plan *p = &ps->plans[i];
		if (p->kind != FAST_TRAFFIC_BYTES && version < FAST_PLAN_VERSION_TOKENS)
			version = FAST_PLAN_VERSION_TOKENS;
		for (size_t t = 0; t < p->nsteps; t++)
			if (p->steps[t].kind == FAST_STEP_RAIL && p->steps[t].nperms > 1)
				version = FAST_PLAN_VERSION_GROUPED;
	}
	fprintf(f, "{\"version\":%d,\"kind\":\"fast-plan\",\"plans\":[", version);
	for (uint32_t i = 0; i < ps->count; i++) {
		fputs(i ? ",\n" : "\n", f);
		write_plan(f, &ps->plans[i]);
	}
	fputs("\n]}\n", f);
	if (ferror(f))
		return fast_err_set(err, FAST_EIO, "plan: write error");
	return 0;
}
