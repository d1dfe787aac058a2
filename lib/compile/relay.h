/*
 * relay.h - a GPU whose NIC is down reaches the scale-out tier through a
 * peer on its server (lib/compile/relay.c): the baselines' plans on such a
 * fabric, and auto's view of where their bytes cross.  Internal to
 * lib/compile: never installed.
 *
 * Proxies.  A GPU is *cut off* when its port (topo.h, "NICs and ports")
 * runs at 0 B/s.  Its proxy is a GPU of its server whose port is up,
 * chosen the same way on every rank: the candidates are taken port by port
 * cyclically after the GPU's own port, the first GPU behind each up port,
 * then the second, ... (so that the GPUs behind one failed NIC spread over
 * several ports), and each cut-off GPU, in local order, takes the first
 * candidate that the fewest cut-off GPUs have taken so far.  With one NIC
 * per GPU and one NIC down that is the next GPU with an up NIC.  A GPU
 * whose port is up is its own proxy.
 *
 * The relay (docs/algorithms.md, "A NIC that is down"): a scale-out
 * transfer x -> y with x or y cut off becomes
 *     x -> proxy(x)               over scale-up  (when x is cut off)
 *     proxy(x) -> proxy(y)        over scale-out
 *     proxy(y) -> y               over scale-up  (when y is cut off)
 * each hop carrying the same pieces, in steps of their own that are
 * pipelined one on the other, as NCCL's PXN sends through a peer's NIC.
 */
#ifndef FAST_RELAY_H
#define FAST_RELAY_H

#include "fast/plan.h"
#include "fast/topo.h"

/* The relayed hops' chunk where the step they come from sets none:
 * NCCL's NCCL_P2P_NET_CHUNKSIZE, as pxn's default (algo.c). */
#define FAST_RELAY_CHUNK_BYTES (UINT64_C(128) << 10)

/* ceil(largest / chunk) pipelined chunks, at least 1, at most
 * FAST_ALGO_MAX_CHUNKS (algo.h's cap on every compiler's chunks). */
uint32_t fast_relay_chunks_for(uint64_t largest, uint64_t chunk);

/* The proxy of every GPU into proxy[N * G] (global indices; proxy[g] == g
 * unless g is cut off); returns the number of cut-off GPUs (>= 0), or
 * FAST_ENOMEM.  A server whose ports are all down (a validated topology
 * has none unless it has one server) keeps its GPUs as their own
 * proxies. */
int fast_relay_proxies(const struct fast_topo *t, uint32_t *proxy, struct fast_err *err);

/* Rewrite *p, a plan of explicit steps for t (no lanes, RAIL or REDIST
 * steps), so that no scale-out transfer starts or ends at a cut-off GPU,
 * as above.  A step S whose scale-out transfers all have up ends stays as
 * it is; otherwise it becomes, in this order, a scale-up step of the first
 * hops (S's dependencies), S with its other transfers (when it has any),
 * the relayed scale-out step (S's dependencies, pipelined on the first
 * hops) and a scale-up step of the last hops (pipelined on the relayed
 * step); a step that waited for S waits for each of S's parts but the
 * first hops, pipelined where it was.  The relayed hops keep S's chunks
 * where S has more than one or something is pipelined on or by S, and
 * otherwise get ceil(largest relayed transfer / FAST_RELAY_CHUNK_BYTES).
 * Label, options, kind and masks are kept.  Nothing cut off: *p is left
 * as it is.  0, or FAST_EINPUT (a compact plan) / FAST_ENOMEM, with *p
 * unchanged. */
int fast_relay_plan(const struct fast_topo *t, struct fast_plan *p, struct fast_err *err);

#endif
