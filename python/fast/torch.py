"""fast.torch: torch.distributed collectives through FAST plans.

    import fast.torch
    fast.torch.all_to_all_single(output, input, output_split_sizes,
                                 input_split_sizes, group=None)
    recv_x, recv_topk_idx, recv_topk_weights, per_expert, handle = \\
        fast.torch.dispatch(x, topk_idx, topk_weights, num_experts=E)
    out = fast.torch.combine(y, handle)

all_to_all_single takes the arguments of torch.distributed's and gives its
result.  The tensors may be on any one device the group's backend moves:
CPU tensors with gloo, CUDA tensors with NCCL (and, on ROCm, RCCL, which
torch names nccl and whose device it calls cuda); the staging arena and
every buffer go on that device.  Every rank gathers every rank's split
sizes (one all_gather of 2 P + 2 integers, on the host for gloo, on the
current CUDA device for NCCL), so all of them hold the same P x P byte
matrix and see the same disagreement, if any; each compiles the same plan
(deterministic) and builds its own program -- the one `fast run` executes
(include/fast/prog.h) -- and the ranks agree on the plan's 64-bit hash (a
second all_gather) before any byte moves.  The program runs wave by wave:
the wave's copies before (tensor copies on the device), its receives and
sends as one torch.distributed.batch_isend_irecv, waited for, its copies
after.  Messages between two ranks are matched by a per-pair sequence
number (the tag), as MPI's ordering matches them in `fast run`; NCCL,
which has no tags, matches them in the order posted, the same order.

dispatch and combine are the MoE exchange shaped like DeepEP's normal
kernels, run as token plans (docs/tokens.md): a token goes to each rank
that holds one of its top-k experts once, and crosses to another server
once however many of its experts live there (per-server dedup, then
copies over scale-up); combine sums inside the expert server before
crossing back.  See dispatch().

Refusals are bounded: whatever one rank refuses (its arguments, its split
sizes against another's, a plan that differs or fails to compile), every
rank raises fast.InputError or fast.Error naming the ranks, after the
all_gathers every rank makes -- none is left waiting.  Plans and programs
are kept per (topology, algorithm, options, traffic) in a small cache.

The topology defaults to the "h200" preset with min(8, P) GPUs per server
(P a multiple of it); give topology= for the real fabric.
"""
import collections

import numpy as np
import torch
import torch.distributed as dist

import fast

__all__ = ["all_to_all_single", "dispatch", "combine"]

_CACHE = collections.OrderedDict()
_CACHE_MAX = 16
# dtype codes the ranks compare (a dtype not listed is code len(_DTYPES))
_DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64,
           torch.int32, torch.int16, torch.int8, torch.uint8, torch.bool]


def _default_topology(p):
    g = min(8, p)
    while p % g:
        g -= 1
    return fast.Topology.preset("h200", servers=p // g, gpus=g)


def _cached(key, make):
    v = _CACHE.get(key)
    if v is None:
        v = make()
        _CACHE[key] = v
        while len(_CACHE) > _CACHE_MAX:
            _CACHE.popitem(last=False)
    else:
        _CACHE.move_to_end(key)
    return v


def _topo_key(topology, algo, options):
    return (topology.identity, algo,
            tuple(sorted((k, str(v)) for k, v in options.items())))


def _program(topology, algo, D, rank, options):
    def make():
        traffic = fast.Traffic(D)
        return fast.compile(topology, traffic, algo, **options).program(traffic, rank)
    return _cached(_topo_key(topology, algo, options) + (D.tobytes(), rank), make)


def _global(group, r):
    if group is None:
        return r
    return dist.distributed_c10d._get_global_rank(group, r)


def _dtype_code(dt):
    return _DTYPES.index(dt) if dt in _DTYPES else len(_DTYPES)


# --- agreement: every rank sees every rank's word, so all raise or none ---------

def _backend_device(backend):
    """The device type of the tensors a backend's all_gather takes for
    host words: "cpu" when it (or one of a list such as
    "cpu:gloo,cuda:nccl") moves host memory, "cuda" for NCCL alone (RCCL,
    on ROCm, is named nccl too)."""
    parts = [b.strip().split(":") for b in str(backend).lower().split(",")]
    if any(len(x) == 2 and x[0] == "cpu" for x in parts):
        return "cpu"
    return "cuda" if any(x[-1] == "nccl" for x in parts) else "cpu"


def _control_device(group):
    """Where _gather's words live: the host, or the current CUDA device
    under NCCL (whose collectives take only tensors of that device)."""
    if _backend_device(dist.get_backend(group)) == "cuda":
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


def _gather(vec, group):
    """Every rank's int64 vector (all of the same length): a (P, n) numpy
    array on the host, gathered on the device the backend needs."""
    mine = torch.tensor([int(v) for v in vec], dtype=torch.int64, device=_control_device(group))
    rows = [torch.empty_like(mine) for _ in range(dist.get_world_size(group))]
    dist.all_gather(rows, mine, group=group)
    return torch.stack(rows).cpu().numpy()


def _device(what, **tensors):
    """The one device of the named tensors (None: not given); raises
    fast.InputError, naming every tensor's device, when they differ or
    when one is not a tensor."""
    devs = []
    for name, t in tensors.items():
        if t is None:
            continue
        if not isinstance(t, torch.Tensor):
            raise fast.InputError(-1, "%s: %s must be a tensor (got %s)"
                                  % (what, name, type(t).__name__))
        devs.append((name, t.device))
    if not devs:
        return None
    if any(d != devs[0][1] for _, d in devs):
        raise fast.InputError(-1, "%s: the tensors are on different devices (%s)"
                              % (what, ", ".join("%s on %s" % nd for nd in devs)))
    return devs[0][1]


def _refused(status, problem, what):
    """Raise on every rank when a rank's status (column 0 of a gather) says it
    refused: its own error there, naming the others elsewhere."""
    bad = [r for r in range(len(status)) if status[r]]
    if problem is not None:
        raise problem
    if bad:
        raise fast.InputError(-1, "fast.torch: %s: rank%s %s refused %s (see %s error)"
                              % (what, "s" if len(bad) > 1 else "",
                                 ", ".join(map(str, bad)),
                                 "their arguments" if len(bad) > 1 else "its arguments",
                                 "their" if len(bad) > 1 else "its"))


def _agree_plans(hashes, problem, group, what):
    """The plans' 64-bit hashes (a list per rank: one per plan it runs),
    or a failure to compile (problem), gathered: every rank raises when a
    rank failed or the hashes differ (different algo, options or topology)."""
    words = [0 if problem is None else 1] + \
        [int(np.array(h, dtype=np.uint64).view(np.int64)) for h in hashes]
    got = _gather(words, group)
    if problem is not None:
        raise problem
    bad = [r for r in range(got.shape[0]) if got[r, 0]]
    if bad:
        raise fast.Error(-8, "fast.torch: %s: rank %s failed to build its plan (see its error)"
                         % (what, ", ".join(map(str, bad))))
    h = got[:, 1:].view(np.uint64)
    differ = [r for r in range(h.shape[0]) if not np.array_equal(h[r], h[0])]
    if differ:
        raise fast.InputError(-1, "fast.torch: %s: the ranks' plans differ (hash of rank 0: %s, "
                              "%s): give every rank the same topology, algo and options"
                              % (what, "/".join("%016x" % v for v in h[0]),
                                 ", ".join("rank %d: %s" % (r, "/".join("%016x" % v for v in h[r]))
                                           for r in differ[:4])))


# --- all_to_all_single --------------------------------------------------------

def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None,
                      group=None, topology=None, algo="fast", **options):
    """torch.distributed.all_to_all_single over a FAST plan (see the module)."""
    D = _matrix(output, input, output_split_sizes, input_split_sizes, group)
    problem, prog = None, None
    try:
        _fits(output, input, D, dist.get_rank(group))
        topology = topology or _default_topology(D.shape[0])
        prog = _program(topology, algo, D, dist.get_rank(group), options)
    except Exception as e:  # any failure: every rank hears of it
        problem = e
    _agree_plans([prog["info"]["plan_hash"]] if prog else [0], problem, group,
                 "all_to_all_single")
    _run(prog, D, output, input, group)
    return output


def _matrix(output, input, output_split_sizes, input_split_sizes, group):
    """The P x P byte matrix D[s][d] every rank agrees on: every rank's
    split sizes gathered (one all_gather of 2 P + 2 integers) and checked
    against each other's.  Raises fast.InputError on every rank when one
    refuses its arguments or two disagree."""
    p = dist.get_world_size(group)
    problem, words = None, None
    try:
        words = _split_words(output, input, output_split_sizes, input_split_sizes, p)
    except Exception as e:  # any failure: every rank hears of it
        problem = e
    got = _gather(words or [1] + [0] * (2 * p + 1), group)
    _refused(got[:, 0], problem, "all_to_all_single")
    return _agreed_matrix(got, p)


def _run(prog, D, output, input, group):
    rank = dist.get_rank(group)
    sd = np.concatenate([[0], np.cumsum(D[rank])])
    rd = np.concatenate([[0], np.cumsum(D[:, rank])])
    send = input.contiguous().reshape(-1).view(torch.uint8)
    _walk(prog, send, output.reshape(-1).view(torch.uint8), sd, rd, group)


def _split_words(output, input, output_split_sizes, input_split_sizes, p):
    """[0, row bytes, input splits (P), output splits (P, -1: not given)]:
    this rank's word in the split-size gather.  Raises fast.InputError on
    what the rank refuses alone (tensors, counts)."""
    _device("fast.torch", input=input, output=output)
    if input.dtype != output.dtype:
        raise fast.InputError(-1, "fast.torch: input is %s, output %s" % (input.dtype,
                                                                         output.dtype))
    if not output.is_contiguous():
        raise fast.InputError(-1, "fast.torch: the output must be contiguous")
    if input_split_sizes is None or len(input_split_sizes) == 0:
        if input.shape[0] % p:
            raise fast.InputError(-1, "fast.torch: %d rows do not split evenly over %d ranks"
                                  % (input.shape[0], p))
        input_split_sizes = [input.shape[0] // p] * p
    if output_split_sizes is None or len(output_split_sizes) == 0:
        output_split_sizes = [-1] * p
    elif any(int(s) < 0 for s in output_split_sizes):
        raise fast.InputError(-1, "fast.torch: negative output split size")
    for name, s in (("input", input_split_sizes), ("output", output_split_sizes)):
        if len(s) != p:
            raise fast.InputError(-1, "fast.torch: %d %s split sizes for %d ranks"
                                  % (len(s), name, p))
    if any(int(s) < 0 for s in input_split_sizes):
        raise fast.InputError(-1, "fast.torch: negative input split size")
    return [0, _row_bytes(input)] + [int(s) for s in input_split_sizes] + \
        [int(s) for s in output_split_sizes]


def _agreed_matrix(got, p):
    """The P x P byte matrix D[s][d] of the gathered words, after every
    rank's check of every pair: rank a's input_split_sizes[b] must equal
    rank b's output_split_sizes[a], and the rows be of one size."""
    esize = got[:, 1]
    if np.any(esize != esize[0]):
        raise fast.InputError(-1, "fast.torch: the ranks' rows differ in bytes (%s)"
                              % ", ".join("rank %d: %d" % (r, esize[r]) for r in range(p)))
    S, O = got[:, 2:2 + p], got[:, 2 + p:]
    wrong = [(a, b) for b in range(p) if O[b, 0] >= 0 for a in range(p) if O[b, a] != S[a, b]]
    if wrong:
        raise fast.InputError(-1, "fast.torch: split sizes disagree: %s%s" % (
            "; ".join("rank %d's input_split_sizes[%d] = %d but rank %d's "
                      "output_split_sizes[%d] = %d" % (a, b, S[a, b], b, a, O[b, a])
                      for a, b in wrong[:4]),
            " (and %d more)" % (len(wrong) - 4) if len(wrong) > 4 else ""))
    return S.astype(np.int64) * int(esize[0])


def _fits(output, input, D, rank):
    if D[rank].sum() > input.numel() * input.element_size() or \
            D[:, rank].sum() > output.numel() * output.element_size():
        raise fast.InputError(-1, "fast.torch: rank %d: split sizes exceed the tensors" % rank)


def _row_bytes(t):
    return t.element_size() * (int(np.prod(t.shape[1:])) if t.dim() > 1 else 1)


# --- running a program --------------------------------------------------------

def _walk(prog, send, recv, sdisp, rdisp, group):
    """Run the rank's program wave by wave: copies, the wave's receives and
    sends as one batch_isend_irecv (a group of point-to-point calls under
    NCCL, so two ranks that both send first do not wait on each other)
    and waited for, copies.  send and recv are flat tensors on one device
    (the staging arena goes there too) in the plan's units (bytes, or
    elements of one dtype: a sum then adds elements); sdisp / rdisp (host
    arrays) the start of each message (peer, or group of a token plan) in
    them.  The tags are per-pair sequence numbers; NCCL ignores tags and
    matches a pair's messages in the order posted, which is the same one."""
    p = int(prog["info"]["ng"])
    arena = torch.empty(int(prog["info"]["staging_bytes"]), dtype=send.dtype, device=send.device)
    bufs, disp = (send, recv, arena), (sdisp, rdisp, None)

    def at(kind, msg, off, n):
        kind, msg, off, n = int(kind), int(msg), int(off), int(n)
        base = 0 if kind == 2 else int(disp[kind][msg])
        return bufs[kind][base + off:base + off + n]

    def wire(t):
        return t if t.dtype == torch.uint8 else t.view(torch.uint8)

    sent, got = [0] * p, [0] * p  # per-peer sequence numbers: the tags

    def copies(first, count):
        for c in prog["copies"][first:first + count]:
            dst = at(c[0], c[1], c[2], c[6])
            op = int(c[7])
            if op == 2:
                dst.zero_()
            elif op == 1:
                dst.add_(at(c[3], c[4], c[5], c[6]))  # uint8: wraps, as FAST_POP_ADD
            else:
                dst.copy_(at(c[3], c[4], c[5], c[6]))

    for w in prog["waves"]:
        copies(int(w[0]), int(w[1]))
        ops = []  # the wave's messages, one batch: receives, then sends
        for m in prog["recvs"][int(w[4]):int(w[4]) + int(w[5])]:
            peer = int(m[0])
            ops.append(dist.P2POp(dist.irecv, wire(at(m[2], m[3], m[4], m[5])),
                                  _global(group, peer), group, got[peer]))
            got[peer] += 1
        for m in prog["sends"][int(w[2]):int(w[2]) + int(w[3])]:
            peer = int(m[0])
            ops.append(dist.P2POp(dist.isend, wire(at(m[2], m[3], m[4], m[5])),
                                  _global(group, peer), group, sent[peer]))
            sent[peer] += 1
        if ops:  # batch_isend_irecv refuses an empty list
            for r in dist.batch_isend_irecv(ops):
                r.wait()
        copies(int(w[6]), int(w[7]))

from fast._torch_moe import combine, dispatch  # noqa: E402,F401  (uses the helpers above)
