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

/* topo_impl.c: /implementation of root into t->impl[] and t->impl_source
 * (every entry neutral when absent), each number checked as read. */
int topo_load_impl(struct fast_jctx *c, const struct fast_jv *root, struct fast_topo *t);
/* The implementation checks of fast_topo_validate, naming the entry. */
int topo_validate_impl(const struct fast_topo *t, struct fast_err *err);
/* The implementations' part of the identity: nothing when all neutral. */
uint64_t topo_hash_impl(const struct fast_topo *t, uint64_t h);
/* Schedule algo's entry only (nothing when neutral); every entry for a
 * name that is not a schedule's. */
uint64_t topo_hash_impl_of(const struct fast_topo *t, const char *algo, uint64_t h);
/* "implementation": {...}, (indented for the root), when any is on. */
void topo_write_impl(const struct fast_topo *t, FILE *f);
/* fast_topo_field for "/implementation/<entry>/<number>" paths. */
double *topo_impl_field(struct fast_topo *t, const char *path, double *min, double *max);

#endif
