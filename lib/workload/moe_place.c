/*
 * moe_place.c - expert placements with replicas (moe_place.h): the
 * placement file (JSON, or .npy by the shared reader of moe_npy.c), EPLB's hierarchical policy in our own words, and the
 * replica tables the layout (moe.h) routes tokens by.  Sizes are small
 * (a few hundred slots per layer): the greedy steps are quadratic.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/base/json.h"
#include "lib/workload/moe_npy.h"
#include "lib/workload/moe_place.h"

void fast_moe_place_free(struct fast_moe_place *p)
{
	if (!p)
		return;
	free(p->phy2log);
	memset(p, 0, sizeof *p);
}

/* Row l of the file at the current path into out (slots ids). */
static int load_row(struct fast_jctx *c, const struct fast_jv *row, uint32_t experts,
		    uint32_t slots, uint32_t *out, unsigned char *seen)
{
	const struct fast_jv *v;
	uint32_t s = 0;
	int rc;

	if ((rc = fast_jv_expect_array(c, row)) < 0)
		return rc;
	if (fast_jv_size(row) != slots)
		return fast_jctx_fail(c, FAST_EINPUT, "%zu slots, but the first layer has %u",
				      fast_jv_size(row), slots);
	memset(seen, 0, experts);
	for (v = fast_jv_first(row); v; v = fast_jv_next(v), s++) {
		size_t old = fast_jctx_push_index(c, s);
		uint64_t e;
		if ((rc = fast_jv_as_u64(c, v, UINT32_MAX, &e)) < 0)
			return rc;
		if (e >= experts)
			return fast_jctx_fail(c, FAST_EINPUT, "expert %llu out of range (%u experts: 0..%u)",
					      (unsigned long long)e, experts, experts - 1);
		out[s] = (uint32_t)e;
		seen[e] = 1;
		fast_jctx_pop(c, old);
	}
	for (uint32_t e = 0; e < experts; e++)
		if (!seen[e])
			return fast_jctx_fail(c, FAST_EINPUT, "expert %u has no slot", e);
	return 0;
}

static int load_json(const char *path, const struct fast_limits *lim, uint32_t ng,
			uint32_t experts, struct fast_moe_place *out, struct fast_err *err)
{
	struct fast_moe_place p = { 0 };
	struct fast_json *doc = NULL;
	const struct fast_jv *root, *row;
	struct fast_jctx c;
	unsigned char *seen = NULL;
	char *text;
	size_t len;
	int rc;

	if ((rc = fast_read_file(path, lim->max_file_bytes, &text, &len, err)) < 0)
		return rc;
	rc = fast_json_parse(text, len, path, &doc, err);
	free(text);
	if (rc < 0)
		return rc;
	fast_jctx_init(&c, path, err);
	root = fast_json_root(doc);
	if ((rc = fast_jv_expect_array(&c, root)) == 0 && fast_jv_size(root) == 0)
		rc = fast_jctx_fail(&c, FAST_EINPUT, "no layers");
	row = rc == 0 ? fast_jv_first(root) : NULL;
	if (rc == 0) {
		size_t old = fast_jctx_push_index(&c, 0);
		if ((rc = fast_jv_expect_array(&c, row)) == 0) {
			size_t n = fast_jv_size(row);
			if (n == 0 || n % ng || n < experts || n > UINT32_MAX)
				rc = fast_jctx_fail(&c, FAST_EINPUT,
						    "%zu slots: must be a multiple of the %u GPUs and "
						    "at least the %u experts",
						    n, ng, experts);
			p.slots = (uint32_t)n;
		}
		fast_jctx_pop(&c, old);
	}
	if (rc == 0) {
		p.nlayers = (uint32_t)fast_jv_size(root);
		p.phy2log = fast_calloc((size_t)p.nlayers * p.slots, sizeof *p.phy2log);
		seen = fast_calloc(experts, 1);
		if (!p.phy2log || !seen)
			rc = fast_err_set(err, FAST_ENOMEM, "out of memory");
	}
	for (uint32_t l = 0; rc == 0 && row; row = fast_jv_next(row), l++) {
		size_t old = fast_jctx_push_index(&c, l);
		rc = load_row(&c, row, experts, p.slots, p.phy2log + (size_t)l * p.slots, seen);
		fast_jctx_pop(&c, old);
	}
	free(seen);
	fast_json_free(doc);
	if (rc < 0) {
		fast_moe_place_free(&p);
		return rc;
	}
	*out = p;
	return 0;
}

/* The shape of a .npy map: [layers, slots], slots a multiple of ng and at
 * least the experts (FAST_EINPUT naming the file). */
static int npy_shape(const char *path, const struct fast_npy *a, uint32_t ng, uint32_t experts,
		     struct fast_err *err)
{
	if (a->ndim != 2)
		return fast_err_set(err, FAST_EINPUT,
				    "%s: shape: %u-D; a placement is [layers, slots] (EPLB's phy2log)",
				    path, a->ndim);
	if (a->shape[0] == 0)
		return fast_err_set(err, FAST_EINPUT, "%s: shape: no layers", path);
	if (a->shape[1] == 0 || a->shape[1] % ng || a->shape[1] < experts ||
	    a->shape[1] > UINT32_MAX || a->shape[0] > UINT32_MAX)
		return fast_err_set(err, FAST_EINPUT,
				    "%s: shape: %llu slots: must be a multiple of the %u GPUs and at "
				    "least the %u experts",
				    path, (unsigned long long)a->shape[1], ng, experts);
	return 0;
}

/* A .npy map [layers, slots] of integers (any width): the JSON file's
 * checks, positions as numpy's indices "[l, s]" (a missing expert: "[l]"). */
static int load_npy(const char *path, const struct fast_limits *lim, uint32_t ng,
		    uint32_t experts, struct fast_moe_place *out, struct fast_err *err)
{
	struct fast_moe_place p = { 0 };
	struct fast_npy a;
	unsigned char *seen = NULL;
	char *text, pos[64];
	size_t len;
	int rc;

	if ((rc = fast_read_file(path, lim->max_file_bytes, &text, &len, err)) < 0)
		return rc;
	if ((rc = fast_npy_parse(text, len, path, &a, err)) == 0)
		rc = npy_shape(path, &a, ng, experts, err);
	if (rc == 0) {
		p.nlayers = (uint32_t)a.shape[0];
		p.slots = (uint32_t)a.shape[1];
		p.phy2log = fast_calloc(a.count, sizeof *p.phy2log);
		seen = fast_calloc(experts, 1);
		if (!p.phy2log || !seen)
			rc = fast_err_set(err, FAST_ENOMEM, "out of memory");
	}
	for (uint64_t i = 0; rc == 0 && i < a.count; i++) {
		int64_t e = fast_npy_at(&a, i);
		if (i % p.slots == 0)
			memset(seen, 0, experts);
		if (e < 0 || e >= (int64_t)experts) {
			fast_npy_pos(&a, i, pos, sizeof pos);
			rc = fast_err_set(err, FAST_EINPUT,
					  "%s: %s: expert %lld out of range (%u experts: 0..%u)", path,
					  pos, (long long)e, experts, experts - 1);
			break;
		}
		p.phy2log[i] = (uint32_t)e;
		seen[e] = 1;
		for (uint32_t x = 0; (i + 1) % p.slots == 0 && x < experts && rc == 0; x++)
			if (!seen[x])
				rc = fast_err_set(err, FAST_EINPUT, "%s: [%llu]: expert %u has no slot",
						  path, (unsigned long long)(i / p.slots), x);
	}
	free(seen);
	free(text);
	if (rc < 0) {
		fast_moe_place_free(&p);
		return rc;
	}
	*out = p;
	return 0;
}

static bool is_npy(const char *path)
{
	size_t n = strlen(path);

	return n >= 4 && strcmp(path + n - 4, ".npy") == 0;
}

int fast_moe_place_load(const char *path, const struct fast_limits *lim, uint32_t ng,
			uint32_t experts, struct fast_moe_place *out, struct fast_err *err)
{
	if (is_npy(path))
		return load_npy(path, lim, ng, experts, out, err);
	return load_json(path, lim, ng, experts, out, err);
}

/* p as .npy [layers, slots] of int64 (as EPLB's phy2log tensor saves). */
static void write_npy(const struct fast_moe_place *p, FILE *f)
{
	uint64_t shape[2] = { p->nlayers, p->slots };

	fast_npy_write_header(f, "<i8", 2, shape);
	for (size_t i = 0; i < (size_t)p->nlayers * p->slots; i++) {
		unsigned char b[8] = { 0 };
		for (int k = 0; k < 4; k++) /* ids are < 2^32: the high bytes stay 0 */
			b[k] = (unsigned char)(p->phy2log[i] >> (8 * k));
		fwrite(b, 1, sizeof b, f);
	}
}

int fast_moe_place_write(const struct fast_moe_place *p, bool npy, FILE *f, struct fast_err *err)
{
	if (npy) {
		write_npy(p, f);
	} else {
		fputc('[', f);
		for (uint32_t l = 0; l < p->nlayers; l++) {
			fputs(l ? ",\n [" : "\n [", f);
			for (uint32_t s = 0; s < p->slots; s++)
				fprintf(f, s ? ", %u" : "%u", p->phy2log[(size_t)l * p->slots + s]);
			fputc(']', f);
		}
		fputs("\n]\n", f);
	}
	if (ferror(f))
		return fast_err_set(err, FAST_EIO, "writing the placement failed");
	return 0;
}

/* Balanced packing: n items of weight w (doubles) into nb bins of n / nb
 * items each, heaviest first (ties: lower index) to the lightest bin with
 * room (ties: lower bin).  bin[i] receives item i's bin. */
static void pack(const double *w, uint32_t n, uint32_t nb, uint32_t *bin, double *load,
		 uint32_t *cnt, uint32_t *order)
{
	uint32_t cap = n / nb;

	for (uint32_t i = 0; i < n; i++)
		order[i] = i;
	for (uint32_t i = 1; i < n; i++) /* insertion sort: stable, descending */
		for (uint32_t j = i; j > 0 && w[order[j]] > w[order[j - 1]]; j--) {
			uint32_t t = order[j];
			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	for (uint32_t b = 0; b < nb; b++)
		load[b] = 0, cnt[b] = 0;
	for (uint32_t k = 0; k < n; k++) {
		uint32_t best = nb;
		for (uint32_t b = 0; b < nb; b++)
			if (cnt[b] < cap && (best == nb || load[b] < load[best]))
				best = b;
		bin[order[k]] = best;
		load[best] += w[order[k]];
		cnt[best]++;
	}
}

bool fast_moe_place_eplb_hierarchical(uint32_t E, uint32_t ng, uint32_t G)
{
	/* EPLB's test (groups % nodes), with each expert its own group */
	return G && ng % G == 0 && E % (ng / G) == 0;
}

int fast_moe_place_eplb(const uint64_t *load, uint32_t E, uint32_t R, uint32_t ng, uint32_t G,
			uint32_t *out, struct fast_err *err)
{
	uint32_t N, P = E + R, per_node, lper_node, *node, *cnt, *order, *bin, *nrep;
	uint32_t *phys, *fill;
	double *w, *bl, *pw;
	int rc = 0;

	if (G == 0 || ng % G)
		return fast_err_set(err, FAST_EUSAGE, "eplb: %u GPUs are not servers of %u", ng, G);
	if (P % ng)
		return fast_err_set(err, FAST_EUSAGE,
				    "eplb:%u: %u + %u slots do not divide over %u GPUs (the next R that "
				    "does: %u)",
				    R, E, R, ng, R + (ng - P % ng));
	if (!fast_moe_place_eplb_hierarchical(E, ng, G))
		G = ng; /* the global policy: one server of every GPU */
	N = ng / G;
	per_node = P / N;
	lper_node = E / N;
	node = fast_calloc(E, sizeof *node);
	nrep = fast_calloc(E, sizeof *nrep);
	cnt = fast_calloc(P, sizeof *cnt);
	order = fast_calloc(P, sizeof *order);
	bin = fast_calloc(P, sizeof *bin);
	phys = fast_calloc(P, sizeof *phys);
	fill = fast_calloc(ng, sizeof *fill);
	w = fast_calloc(P, sizeof *w);
	bl = fast_calloc(P, sizeof *bl);
	pw = fast_calloc(P, sizeof *pw);
	if (!node || !nrep || !cnt || !order || !bin || !phys || !fill || !w || !bl || !pw) {
		rc = fast_err_set(err, FAST_ENOMEM, "out of memory");
		goto out;
	}
	/* (1) experts to servers */
	for (uint32_t e = 0; e < E; e++)
		w[e] = (double)load[e];
	pack(w, E, N, node, bl, cnt, order);
	for (uint32_t n = 0; n < N; n++) {
		uint32_t np = 0, *lg = order; /* the server's experts, ascending */
		for (uint32_t e = 0; e < E; e++)
			if (node[e] == n)
				lg[np++] = e, nrep[e] = 1;
		/* (2) extra replicas to the largest load per replica */
		for (uint32_t k = lper_node; k < per_node; k++) {
			uint32_t best = lg[0];
			for (uint32_t i = 1; i < np; i++)
				if ((double)load[lg[i]] / nrep[lg[i]] > (double)load[best] / nrep[best])
					best = lg[i];
			nrep[best]++;
		}
		/* (3) the server's replicas onto its GPUs */
		np = 0;
		for (uint32_t e = 0; e < E; e++)
			for (uint32_t r = 0; node[e] == n && r < nrep[e]; r++) {
				phys[np] = e;
				pw[np++] = (double)load[e] / nrep[e];
			}
		pack(pw, np, G, bin, bl, cnt, order);
		for (uint32_t i = 0; i < np; i++) {
			uint32_t g = n * G + bin[i];
			out[(size_t)g * (P / ng) + fill[g]++] = phys[i];
		}
	}
out:
	free(node), free(nrep), free(cnt), free(order), free(bin), free(phys), free(fill);
	free(w), free(bl), free(pw);
	return rc;
}

void fast_moe_place_replicas(const uint32_t *row, uint32_t slots, uint32_t E, uint32_t ng,
			     uint32_t *rep_off, uint32_t *rep_gpu)
{
	uint32_t per = slots / ng;

	memset(rep_off, 0, (E + 1) * sizeof *rep_off);
	for (uint32_t s = 0; s < slots; s++)
		rep_off[row[s] + 1]++;
	for (uint32_t e = 0; e < E; e++)
		rep_off[e + 1] += rep_off[e];
	for (uint32_t s = 0; s < slots; s++) /* slots ascending: GPUs ascending */
		rep_gpu[rep_off[row[s]]++] = s / per;
	for (uint32_t e = E; e > 0; e--) /* back to the starts */
		rep_off[e] = rep_off[e - 1];
	rep_off[0] = 0;
}
