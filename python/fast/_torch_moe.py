"""fast.torch.dispatch and fast.torch.combine: the MoE token exchange,
shaped like DeepEP's normal kernels, run as FAST token plans.

Experts are placed contiguously: with E experts on P ranks, expert e lives
on rank e // (E / P) as its local expert e % (E / P).  A token goes to each
rank holding one of its top-k experts (topk_idx, -1: no expert) once, as
one row of that rank's recv_x, whatever the number of its experts there.

The exchange is token traffic (include/fast/traffic.h, docs/tokens.md):
every rank's tokens are grouped by the set of ranks they go to (in order of
first appearance), the groups gathered so that every rank holds the same
list, ordered by source rank, and compiled once for dispatch and once for
combine.  With a token-aware algorithm (fast, hier: their default dedup)
a token crosses to another server once, however many of its ranks are
there, and is copied over scale-up; in combine the expert server sums
its contributions before sending one result back.  The other algorithms
(and dedup="gpu") give byte plans over the per-GPU view, one copy per
destination rank, which this module runs too (buffers per peer then; the
source sums what arrives).

Units: a dispatch row is bytes -- the token's hidden vector, then its k
expert ids (int64), its index at the source (int64) and, when weights are
given, its k weights (float32) -- so the received rows carry their own
routing.  The combine plan is compiled on elements (a token is `hidden`
units, not bytes): a plan may cut a message at any unit, and a sum of
floating-point values is only meaningful on whole elements.  Its plan's
byte counts are therefore the element counts (1/element size of the bytes
that move).

Devices: x, topk_idx and topk_weights share one device (combine's y and
weights that of dispatch's rows), and every buffer and result is made
there; only the routing runs on the host, on a copy of topk_idx, with
numpy (fast.torch's module says which backends take which device).
"""
import numpy as np
import torch
import torch.distributed as dist

import fast
import fast.torch as _ft

_IDX = 8  # bytes of an expert id or a token index on the wire (int64)
_W = 4    # bytes of a weight (float32)


class Handle:
    """What combine needs of a dispatch: the layout of the groups, the
    combine program and the received rows' routing.  Read-only; useful
    fields: recv_src_rank and recv_src_idx (each received row's source
    rank and its index there), dispatch_program and combine_program (the
    programs, as fast.Plan.program gives them; None when nothing moves)."""

    def __init__(self, **kw):
        self.__dict__.update(kw)


# --- routing: this rank's tokens as groups --------------------------------------

def _route(x, topk_idx, topk_weights, num_experts, p):
    """This rank's groups: (dests (n, k) padded with p, counts (n,), tokens
    in group order).  Raises fast.InputError on arguments the rank refuses."""
    _ft._device("fast.torch.dispatch", x=x, topk_idx=topk_idx, topk_weights=topk_weights)
    for name, t in (("x", x), ("topk_idx", topk_idx), ("topk_weights", topk_weights)):
        if t is not None and t.dim() != 2:
            raise fast.InputError(-1, "fast.torch.dispatch: %s must be a 2-D tensor" % name)
    T, k = topk_idx.shape
    if x.shape[0] != T or topk_idx.dtype.is_floating_point or topk_idx.dtype == torch.bool:
        raise fast.InputError(-1, "fast.torch.dispatch: topk_idx must be integer [%d, k] "
                              "(got %s %s)" % (x.shape[0], topk_idx.dtype, list(topk_idx.shape)))
    if topk_weights is not None and tuple(topk_weights.shape) != (T, k):
        raise fast.InputError(-1, "fast.torch.dispatch: topk_weights is %s, topk_idx %s"
                              % (list(topk_weights.shape), list(topk_idx.shape)))
    if num_experts <= 0 or num_experts % p:
        raise fast.InputError(-1, "fast.torch.dispatch: %d experts do not spread evenly over "
                              "%d ranks" % (num_experts, p))
    idx = topk_idx.cpu().numpy().astype(np.int64)  # routing runs on the host
    if idx.size and (idx.min() < -1 or idx.max() >= num_experts):
        raise fast.InputError(-1, "fast.torch.dispatch: expert ids must be in -1..%d (got %d..%d)"
                              % (num_experts - 1, idx.min(), idx.max()))
    r = np.where(idx >= 0, idx // (num_experts // p), p)  # p: no rank
    r.sort(axis=1)
    tail = r[:, 1:]
    tail[tail == r[:, :-1]] = p  # a rank once per token
    r.sort(axis=1)
    has = np.nonzero(r[:, 0] < p)[0] if k else np.zeros(0, np.int64)
    if not len(has):
        return np.zeros((0, k), np.int64), np.zeros(0, np.int64), has
    uniq, first, inv = np.unique(r[has], axis=0, return_index=True, return_inverse=True)
    order = np.argsort(first)
    gid = np.empty_like(order)
    gid[order] = np.arange(len(order))
    gid = gid[inv.reshape(-1)]
    return uniq[order], np.bincount(gid, minlength=len(order)), has[np.argsort(gid, kind="stable")]


def _all_groups(mine, head, group, p):
    """Every rank's groups, gathered: (src, count, dests) arrays of the
    global list, ordered by source rank, then as each rank listed them."""
    n, k = int(head[:, 1].max()), int(head[0, 4])
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((0, k), np.int64)
    dests, counts, _ = mine
    table = np.full((n, 1 + k), -1, np.int64)
    table[:len(counts), 0] = counts
    table[:len(counts), 1:] = np.where(dests < p, dests, -1)
    got = _ft._gather(table.reshape(-1), group).reshape(p, n, 1 + k)
    src = np.concatenate([np.full(int(head[s, 1]), s) for s in range(p)])
    rows = np.concatenate([got[s, :int(head[s, 1])] for s in range(p)])
    return src.astype(np.int64), rows[:, 0], rows[:, 1:]


class _Layout:
    """Where each group's rows are on this rank.  Token programs index
    groups: tok_send[g] / tok_recv[g] is the first row of g in the send
    rows (groups with src = rank, in order) or the received rows (groups
    with rank in Dest(g), in order).  Byte programs index peers: the send
    buffer holds, per destination d, the rows of every group of the rank
    going to d (peer_rows: their positions in the send rows); the received
    rows come per source in group order, so peer_recv[s] is where source
    s's begin."""

    def __init__(self, src, cnt, dst, rank, p):
        mine = src == rank
        into = np.any(dst == rank, axis=1)
        self.send_g, self.recv_g = np.nonzero(mine)[0], np.nonzero(into)[0]
        self.tok_send = np.zeros(len(src) + 1, np.int64)
        self.tok_recv = np.zeros(len(src) + 1, np.int64)
        self.tok_send[self.send_g] = np.cumsum(cnt[self.send_g]) - cnt[self.send_g]
        self.tok_recv[self.recv_g] = np.cumsum(cnt[self.recv_g]) - cnt[self.recv_g]
        self.nsend, self.nrecv = int(cnt[mine].sum()), int(cnt[into].sum())
        pos = [], []
        for d in range(p):
            for g in self.send_g:
                if np.any(dst[g] == d):
                    pos[0].append(np.arange(cnt[g]) + self.tok_send[g])
            pos[1].append(sum(len(a) for a in pos[0]))
        self.peer_rows = np.concatenate(pos[0]) if pos[0] else np.zeros(0, np.int64)
        self.peer_send = np.array([0] + pos[1][:-1], np.int64)
        per_src = np.bincount(src[into], weights=cnt[into], minlength=p).astype(np.int64)
        self.peer_recv = np.cumsum(per_src) - per_src

    def disps(self, prog, unit, dispatch):
        """(send, recv) displacements, in units, for prog's messages."""
        if prog["info"]["kind"] == "bytes":
            s, r = self.peer_send, self.peer_recv
            return (s * unit, r * unit) if dispatch else (r * unit, s * unit)
        s, r = self.tok_send, self.tok_recv
        return (s * unit, r * unit) if dispatch else (r * unit, s * unit)


def _programs(topology, algo, options, src, cnt, dst, row_bytes, hidden, rank):
    """(dispatch program, combine program) of the groups, cached."""
    def make():
        groups = [(int(s), sorted(int(d) for d in ds if d >= 0), int(c))
                  for s, c, ds in zip(src, cnt, dst)]
        out = []
        for kind, tb in (("dispatch", row_bytes), ("combine", hidden)):
            tr = fast.Traffic.tokens(topology.gpus_total, groups, tb, kind)
            out.append(fast.compile(topology, tr, algo, **options).program(tr, rank))
        return tuple(out)
    key = _ft._topo_key(topology, algo, options) + (
        "tokens", src.tobytes(), cnt.tobytes(), dst.tobytes(), row_bytes, hidden, rank)
    return _ft._cached(key, make)


# --- dispatch ---------------------------------------------------------------------

def dispatch(x, topk_idx, topk_weights=None, *, num_experts, group=None, topology=None,
             algo="fast", **options):
    """Send every token of x [T, H] to the ranks of its top-k experts
    (topk_idx [T, k], -1: none; expert e on rank e // (num_experts / P)),
    once per rank and, with fast or hier, once per server across
    scale-out.  Returns (recv_x [R, H], recv_topk_idx [R, k] int64: the
    local expert ids of each row's experts on this rank, -1 elsewhere,
    recv_topk_weights [R, k] float32 (0 where not local) or None without
    topk_weights, num_recv_tokens_per_expert: a list of the rows each
    local expert receives, handle for combine).  Rows arrive by source
    rank, then group (tokens with the same ranks), then token order;
    handle.recv_src_rank / recv_src_idx say where each came from.  Every
    rank calls it (a rank with no tokens passes [0, H] and [0, k])."""
    p, rank = dist.get_world_size(group), dist.get_rank(group)
    problem, mine = None, None
    try:
        mine = _route(x, topk_idx, topk_weights, int(num_experts), p)
        head = [0, len(mine[1]), x.shape[0], x.shape[1], topk_idx.shape[1],
                _ft._dtype_code(x.dtype), x.element_size(), topk_weights is not None,
                int(num_experts)]
    except Exception as e:  # any failure: every rank hears of it
        problem, head = e, [1] + [0] * 8
    got = _ft._gather(head, group)
    _ft._refused(got[:, 0], problem, "dispatch")
    for col, what in ((3, "hidden sizes"), (4, "top-k"), (5, "dtypes"),
                      (7, "topk_weights (given or not)"), (8, "num_experts")):
        if np.any(got[:, col] != got[0, col]):
            raise fast.InputError(-1, "fast.torch.dispatch: the ranks' %s differ (%s)" % (
                what, ", ".join("rank %d: %d" % (r, got[r, col]) for r in range(p))))
    src, cnt, dst = _all_groups(mine, got, group, p)
    hidden, k, L = x.shape[1], topk_idx.shape[1], int(num_experts) // p
    row_bytes = hidden * x.element_size() + _IDX * (k + 1) + (_W * k if topk_weights is not None
                                                              else 0)
    lay = _Layout(src, cnt, dst, rank, p)
    progs = (None, None)
    if len(src):
        try:
            progs = _programs(topology or _ft._default_topology(p), algo, options, src, cnt, dst,
                              row_bytes, hidden, rank)
        except Exception as e:  # any failure: every rank hears of it
            problem = e
        _ft._agree_plans([pr["info"]["plan_hash"] for pr in progs if pr] or [0, 0], problem,
                         group, "dispatch")
    dev = x.device
    recv = torch.empty((lay.nrecv, row_bytes), dtype=torch.uint8, device=dev)
    if progs[0] is not None:
        payload = _pack(x, topk_idx, topk_weights, mine[2])
        send = payload[torch.from_numpy(lay.peer_rows).to(dev)] \
            if progs[0]["info"]["kind"] == "bytes" else payload
        sd, rd = lay.disps(progs[0], row_bytes, True)
        _ft._walk(progs[0], send.reshape(-1), recv.reshape(-1), sd, rd, group)
    return _unpack(recv, x.dtype, hidden, k, L, rank, topk_weights is not None, src, cnt, lay,
                   progs, group, x.shape[0], mine[2])


def _pack(x, topk_idx, topk_weights, order):
    """The send rows, bytes: the tokens of order (group order), each its
    hidden vector, k expert ids, index, and k weights if given."""
    o, n, k = torch.from_numpy(order).to(x.device), len(order), topk_idx.shape[1]

    def raw(t, width):  # rows of t as bytes
        return t.contiguous().reshape(-1).view(torch.uint8).reshape(n, width)
    parts = [raw(x[o], x.shape[1] * x.element_size()), raw(topk_idx[o].to(torch.int64), _IDX * k),
             raw(o.to(torch.int64), _IDX)]
    if topk_weights is not None:
        parts.append(raw(topk_weights[o].to(torch.float32), _W * k))
    return torch.cat(parts, dim=1)


def _unpack(recv, dtype, hidden, k, L, rank, weighted, src, cnt, lay, progs, group, T, order):
    hb = hidden * torch.empty(0, dtype=dtype).element_size()
    n = recv.shape[0]
    recv_x = recv[:, :hb].contiguous().view(dtype).reshape(n, hidden)
    idx = recv[:, hb:hb + _IDX * k].contiguous().view(torch.int64).reshape(n, k)
    local = (idx >= 0) & (idx // L == rank)
    recv_idx = torch.where(local, idx - rank * L, torch.full_like(idx, -1))
    recv_w = None
    if weighted:
        w = recv[:, hb + _IDX * (k + 1):].contiguous().view(torch.float32).reshape(n, k)
        recv_w = torch.where(local, w, torch.zeros_like(w))
    hit = torch.zeros((n, L + 1), dtype=torch.uint8, device=recv.device)
    hit.scatter_(1, recv_idx + 1, 1)  # column 0: an expert elsewhere (-1)
    per_expert = hit[:, 1:].sum(dim=0).tolist()  # one read from the device
    handle = Handle(group=group, layout=lay, hidden=hidden, k=k, num_tokens=T,
                    send_order=order, recv_topk_idx=recv_idx, recv_topk_weights=recv_w,
                    recv_src_rank=torch.from_numpy(np.repeat(src[lay.recv_g], cnt[lay.recv_g]))
                    .to(recv.device),
                    recv_src_idx=recv[:, hb + _IDX * k:hb + _IDX * (k + 1)].contiguous()
                    .view(torch.int64).reshape(n),
                    dispatch_program=progs[0], combine_program=progs[1])
    return recv_x, recv_idx, recv_w, per_expert, handle


# --- combine ----------------------------------------------------------------------

def combine(y, handle, topk_weights=None):
    """Each source token's sum of what its ranks computed for it: y is
    either [R, H] (row i: this rank's output for received row i, its
    local experts already weighted and summed, as DeepEP's combine takes
    it) or [R, k, H] (y[i, j]: the output of local expert
    recv_topk_idx[i, j] for row i; entries where that is -1 are never
    read), which is reduced here to sum_j w[i, j] * y[i, j] with w =
    topk_weights ([R, k]) or else dispatch's recv_topk_weights, or 1.
    Returns [T, H] in y's dtype, on its device, in the source's token
    order (0 for a token with no expert).  Sums are in y's dtype, in the plan's order."""
    h = handle
    p = dist.get_world_size(h.group)
    problem, z = None, None
    try:
        z = _reduce(y, h, topk_weights)
    except Exception as e:  # any failure: every rank hears of it
        problem = e
    got = _ft._gather([0 if z is not None else 1, _ft._dtype_code(y.dtype)], h.group)
    _ft._refused(got[:, 0], problem, "combine")
    if np.any(got[:, 1] != got[0, 1]):
        raise fast.InputError(-1, "fast.torch.combine: the ranks' dtypes of y differ (codes %s)"
                              % ", ".join("rank %d: %d" % (r, got[r, 1]) for r in range(p)))
    lay, prog, H = h.layout, h.combine_program, h.hidden
    dev = y.device
    res = torch.zeros((lay.nsend, H), dtype=y.dtype, device=dev)
    if prog is not None:
        sd, rd = lay.disps(prog, H, False)
        if prog["info"]["kind"] == "bytes":
            part = torch.zeros((len(lay.peer_rows), H), dtype=y.dtype, device=dev)
            _ft._walk(prog, z.reshape(-1), part.reshape(-1), sd, rd, h.group)
            res.index_add_(0, torch.from_numpy(lay.peer_rows).to(dev), part)
        else:
            _ft._walk(prog, z.reshape(-1), res.reshape(-1), sd, rd, h.group)
    out = torch.zeros((h.num_tokens, H), dtype=y.dtype, device=dev)
    out[torch.from_numpy(h.send_order).to(dev)] = res
    return out


def _reduce(y, h, topk_weights):
    """[R, H]: this rank's contribution per received row."""
    R = h.recv_topk_idx.shape[0]
    # dispatch's rows (its recv_topk_idx) fix the device
    _ft._device("fast.torch.combine", y=y, topk_weights=topk_weights,
                dispatched=h.recv_topk_idx)
    if y.dim() == 2 and tuple(y.shape) == (R, h.hidden):
        if topk_weights is not None:
            raise fast.InputError(-1, "fast.torch.combine: a [R, H] y is already weighted; "
                                  "give y as [R, k, H] to weight it here")
        return y.contiguous()
    if y.dim() != 3 or tuple(y.shape) != (R, h.k, h.hidden):
        raise fast.InputError(-1, "fast.torch.combine: y is %s; give [%d, %d] or [%d, %d, %d]"
                              % (list(y.shape), R, h.hidden, R, h.k, h.hidden))
    w = topk_weights if topk_weights is not None else h.recv_topk_weights
    if w is not None and tuple(w.shape) != (R, h.k):
        raise fast.InputError(-1, "fast.torch.combine: topk_weights is %s, not [%d, %d]"
                              % (list(w.shape), R, h.k))
    z = torch.zeros((R, h.hidden), dtype=y.dtype, device=y.device)
    for j in range(h.k):
        m = h.recv_topk_idx[:, j] >= 0
        term = y[m, j]
        z[m] += term if w is None else w[m, j].to(y.dtype).unsqueeze(1) * term
    return z
