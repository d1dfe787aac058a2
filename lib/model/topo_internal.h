/*
 * topo_internal.h - what topo.c and topo_nics.c (the NICs of a server and
 * their rate overrides) share.
 */
#ifndef FAST_TOPO_INTERNAL_H
#define FAST_TOPO_INTERNAL_H

#include <stdio.h>

#include "fast/topo.h"
#include "lib/base/json.h"

/* scale_out.nics_per_server and scale_out.nic_overrides of the object o
 * (c at /scale_out); t->gpus is set. */
int topo_load_nics(struct fast_jctx *c, const struct fast_jv *o, struct fast_topo *t);
/* The NIC checks of fast_topo_validate: K in range, every override in
 * range, sorted and unique, no server with every NIC down, no NIC whose
 * rate is below FAST_TOPO_MIN_GBPS without being down. */
int topo_validate_nics(const struct fast_topo *t, struct fast_err *err);
/* The NICs' part of the identity: nothing on an ideal fabric. */
uint64_t topo_hash_nics(const struct fast_topo *t, uint64_t h);
/* "nic_overrides": [...] (indented for scale_out), when there are any. */
void topo_write_nics(const struct fast_topo *t, FILE *f);

#endif
