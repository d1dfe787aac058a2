/*
 * moe_place.h - explicit expert placements with replicas: a physical-to-
 * logical map per layer as DeepSeek's EPLB returns it (phy2log[layer]
 * [slot], the slots laid over the EP group's GPUs in order, slots / ng
 * per GPU), read from a file, computed by our reading of EPLB's
 * hierarchical policy, and written.  Internal to lib/workload (included by
 * root path); moe.h's importer takes it.  Ownership: struct fast_moe_place
 * owns phy2log; release with fast_moe_place_free (NULL-safe, idempotent).
 */
#ifndef FAST_MOE_PLACE_H
#define FAST_MOE_PLACE_H

#include <stdio.h>

#include "fast/common.h"

struct fast_moe_place {
	uint32_t nlayers, slots;  /* slots: a multiple of the EP size */
	uint32_t *phy2log;        /* nlayers * slots logical expert ids, owned */
};
void fast_moe_place_free(struct fast_moe_place *p);

/* Read a placement file: JSON nested arrays [layers][slots] of logical
 * expert ids (one row per imported layer, in ascending layer order), or,
 * when the name ends in .npy, the same as a 2-D integer array (int8..
 * int64, uint8..uint64, little-endian, C order, NPY 1.0-3.0: np.save of
 * EPLB's phy2log).  Checks: the same slot count in every row, a multiple
 * of ng and at least the experts; ids in [0, experts); every expert placed
 * at least once per row.  FAST_EINPUT "file: /l/s: what is wrong" (JSON;
 * "file:line:col" for syntax), "file: [l, s]: ..." (.npy).  *out is
 * written only on success. */
int fast_moe_place_load(const char *path, const struct fast_limits *lim, uint32_t ng,
			uint32_t experts, struct fast_moe_place *out, struct fast_err *err);
/* Write p in the file format above: JSON (one layer per line), or with
 * npy a .npy [layers, slots] of int64; FAST_EIO when f reports an error
 * (the caller's temporary file is then removed). */
int fast_moe_place_write(const struct fast_moe_place *p, bool npy, FILE *f, struct fast_err *err);

/* One layer's map by our reading of EPLB's rebalance_experts (deepseek-
 * ai/EPLB, eplb.py): load[e] per logical expert; ng GPUs in servers of G;
 * E + R physical slots.  Each logical expert is its own group (the
 * models imported have no expert groups), so EPLB's test "groups divisible
 * by nodes" is E divisible by the N = ng / G servers:
 *   hierarchical policy (N divides E): (1) experts to servers, E / N
 *   each, heaviest first to the lightest server with room; (2) on each
 *   server, its R / N extra replicas one at a time to the expert of the
 *   largest load per replica; (3) a server's replicas (each load / its
 *   count) onto its G GPUs, (E + R) / ng each, heaviest first to the
 *   lightest GPU with room;
 *   global policy (otherwise, e.g. 64 experts on 3 servers): the same
 *   with one server of all ng GPUs: R replicas over all experts, packed
 *   onto all GPUs, servers ignored.
 * Ties go to the lowest index.  out: E + R slots.  FAST_EUSAGE when G
 * does not divide ng or ng does not divide E + R. */
int fast_moe_place_eplb(const uint64_t *load, uint32_t E, uint32_t R, uint32_t ng, uint32_t G,
			uint32_t *out, struct fast_err *err);
/* Whether fast_moe_place_eplb uses the hierarchical policy (else global). */
bool fast_moe_place_eplb_hierarchical(uint32_t E, uint32_t ng, uint32_t G);

/* Replica tables of one layer's map row (slots entries): rep_off[E + 1],
 * rep_gpu[slots] (expert e's replicas on GPUs rep_gpu[rep_off[e] ..
 * rep_off[e + 1]), ascending); both caller-allocated. */
void fast_moe_place_replicas(const uint32_t *row, uint32_t slots, uint32_t E, uint32_t ng,
			     uint32_t *rep_off, uint32_t *rep_gpu);

#endif
