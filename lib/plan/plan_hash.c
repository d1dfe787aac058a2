/*
 * plan_hash.c - a plan's identity (fast_plan_hash, plan.h), which the
 * executor's ranks compare to agree on a plan.
 */
#include "fast/plan.h"

#include <string.h>

/* Values are hashed as little-endian 64-bit words through a small buffer,
 * so the identity is the same on every machine and independent of how the
 * arrays are laid out (ranges are followed, not copied). */
struct hasher {
	uint64_t h;
	size_t n;
	unsigned char buf[4096];
};

static void hput(struct hasher *hs, uint64_t v)
{
	if (hs->n + 8 > sizeof hs->buf) {
		hs->h = fast_hash_bytes(hs->h, hs->buf, hs->n);
		hs->n = 0;
	}
	for (int i = 0; i < 8; i++)
		hs->buf[hs->n++] = (unsigned char)(v >> (8 * i));
}

static void hput_pieces(struct hasher *hs, const struct fast_plan *p, uint32_t p0, uint32_t n)
{
	hput(hs, n);
	for (uint32_t k = 0; k < n; k++) {
		const struct fast_piece *pc = &p->pieces[p0 + k];
		hput(hs, pc->src);
		hput(hs, pc->dst);
		hput(hs, pc->off);
		hput(hs, pc->len);
	}
}

uint64_t fast_plan_hash(const struct fast_plan *p)
{
	struct hasher hs;
	size_t alen = strnlen(p->algo, sizeof p->algo);

	hs.h = FAST_HASH_INIT;
	hs.n = 0;
	hput(&hs, 1); /* the hash's own version: a file format version (FAST_PLAN_VERSION) does not change a plan's identity */
	hput(&hs, p->matrix);
	hput(&hs, alen);
	for (size_t i = 0; i < alen; i++)
		hput(&hs, (unsigned char)p->algo[i]);
	hput(&hs, p->servers);
	hput(&hs, p->gpus);
	if (p->kind != FAST_TRAFFIC_BYTES) { /* byte plans hash as they always did */
		hput(&hs, (uint64_t)p->kind);
		hput(&hs, p->nmasks);
		for (size_t k = 0; k < p->nmasks; k++)
			hput(&hs, p->masks[k]);
	}
	hput(&hs, p->nlanes);
	for (size_t l = 0; l < p->nlanes; l++) {
		const struct fast_lane *ln = &p->lanes[l];
		hput(&hs, ln->src_server);
		hput(&hs, ln->dst_server);
		hput(&hs, ln->rail);
		hput_pieces(&hs, p, ln->piece0, ln->npieces);
	}
	hput(&hs, p->nsteps);
	for (size_t t = 0; t < p->nsteps; t++) {
		const struct fast_step *s = &p->steps[t];
		hput(&hs, (uint64_t)s->kind);
		hput(&hs, (uint64_t)s->tier);
		hput(&hs, s->chunks);
		hput(&hs, s->ndeps);
		for (uint32_t j = 0; j < s->ndeps; j++) {
			hput(&hs, p->deps[s->dep0 + j].step);
			hput(&hs, p->deps[s->dep0 + j].pipelined);
		}
		switch (s->kind) {
		case FAST_STEP_EXPLICIT:
		case FAST_STEP_REDUCE:
			hput(&hs, s->nxfers);
			for (uint32_t j = 0; j < s->nxfers; j++) {
				const struct fast_xfer *x = &p->xfers[s->xfer0 + j];
				hput(&hs, x->from);
				hput(&hs, x->to);
				hput_pieces(&hs, p, x->piece0, x->npieces);
			}
			break;
		case FAST_STEP_RAIL:
			/* one permutation hashes as it did before steps had several */
			for (uint32_t j = 0; j < s->nperms; j++) {
				for (uint32_t a = 0; a < p->servers; a++)
					hput(&hs, p->perm[s->perm0 + (size_t)j * p->servers + a]);
				hput(&hs, fast_plan_rail_budget(p, s, j));
			}
			if (s->nperms > 1)
				hput(&hs, s->nperms);
			break;
		case FAST_STEP_REDIST:
			hput(&hs, s->stage);
			break;
		}
	}
	return fast_hash_bytes(hs.h, hs.buf, hs.n);
}
