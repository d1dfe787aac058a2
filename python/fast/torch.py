"""fast.torch: torch.distributed.all_to_all_single through a FAST plan.

    import fast.torch
    fast.torch.all_to_all_single(output, input, output_split_sizes,
                                 input_split_sizes, group=None)

Same arguments and result as torch.distributed.all_to_all_single (CPU
tensors; the gloo backend, or any backend with point-to-point isend and
irecv).  Every rank gathers the split sizes (one all_gather of P integers),
so all of them hold the same P x P byte matrix; each compiles the same plan
(deterministic) and builds its own program -- the one `fast run` executes
(include/fast/prog.h) -- and runs it wave by wave: the wave's copies before,
its receives and sends posted at once (torch.distributed.irecv / isend) and
waited for, its copies after.  Messages between two ranks are matched by a
per-pair sequence number (the tag), as MPI's ordering matches them in `fast
run`.  Plans and programs are kept per (topology, algorithm, matrix) in a
small cache.

The topology defaults to the "h200" preset with min(8, P) GPUs per server
(P a multiple of it); give topology= for the real fabric.
"""
import collections

import numpy as np
import torch
import torch.distributed as dist

import fast

_CACHE = collections.OrderedDict()
_CACHE_MAX = 16


def _default_topology(p):
    g = min(8, p)
    while p % g:
        g -= 1
    return fast.Topology.preset("h200", servers=p // g, gpus=g)


def _program(topology, algo, D, rank, options):
    key = (topology.name, topology.servers, topology.gpus, algo, tuple(sorted(options.items())),
           D.tobytes(), rank)
    prog = _CACHE.get(key)
    if prog is None:
        traffic = fast.Traffic(D)
        plan = fast.compile(topology, traffic, algo, **options)
        prog = plan.program(traffic, rank)
        _CACHE[key] = prog
        while len(_CACHE) > _CACHE_MAX:
            _CACHE.popitem(last=False)
    else:
        _CACHE.move_to_end(key)
    return prog


def _global(group, r):
    if group is None:
        return r
    return dist.distributed_c10d._get_global_rank(group, r)


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None,
                      group=None, topology=None, algo="fast", **options):
    """torch.distributed.all_to_all_single over a FAST plan (see the module)."""
    D = _matrix(output, input, output_split_sizes, input_split_sizes, group)
    topology = topology or _default_topology(D.shape[0])
    prog = _program(topology, algo, D, dist.get_rank(group), options)
    _walk(prog, D, output, input, group)
    return output


def _matrix(output, input, output_split_sizes, input_split_sizes, group):
    """The P x P byte matrix D[s][d] every rank agrees on: the split sizes
    checked and gathered (one all_gather of P integers).  Raises
    fast.InputError on tensors or split sizes all_to_all_single refuses."""
    p = dist.get_world_size(group)
    rank = dist.get_rank(group)
    if input.device.type != "cpu" or output.device.type != "cpu":
        raise fast.InputError(-3, "fast.torch: CPU tensors only")
    if input.dtype != output.dtype:
        raise fast.InputError(-1, "fast.torch: input is %s, output %s" % (input.dtype,
                                                                         output.dtype))
    esize = _row_bytes(input)
    if input_split_sizes is None or len(input_split_sizes) == 0:
        if input.shape[0] % p:
            raise fast.InputError(-1, "fast.torch: %d rows do not split evenly over %d ranks"
                                  % (input.shape[0], p))
        input_split_sizes = [input.shape[0] // p] * p
    if len(input_split_sizes) != p:
        raise fast.InputError(-1, "fast.torch: %d input split sizes for %d ranks"
                              % (len(input_split_sizes), p))
    mine = torch.tensor([int(s) for s in input_split_sizes], dtype=torch.int64)
    rows = [torch.empty(p, dtype=torch.int64) for _ in range(p)]
    dist.all_gather(rows, mine, group=group)
    D = torch.stack(rows).numpy().astype(np.int64) * esize  # bytes, D[s][d]
    if output_split_sizes is None or len(output_split_sizes) == 0:
        output_split_sizes = list(D[:, rank] // esize)
    if [int(s) * esize for s in output_split_sizes] != list(D[:, rank]):
        raise fast.InputError(-1, "fast.torch: rank %d: output split sizes %s disagree with "
                              "what the ranks send it %s" % (rank, list(output_split_sizes),
                                                             list(D[:, rank] // esize)))
    if sum(input_split_sizes) * esize > input.numel() * input.element_size() or \
            sum(output_split_sizes) * esize > output.numel() * output.element_size():
        raise fast.InputError(-1, "fast.torch: split sizes exceed the tensors")
    if not output.is_contiguous():
        raise fast.InputError(-1, "fast.torch: the output must be contiguous")
    return D


def _row_bytes(t):
    return t.element_size() * (int(np.prod(t.shape[1:])) if t.dim() > 1 else 1)


def _walk(prog, D, output, input, group):
    """Run the rank's program wave by wave: copies, receives and sends
    posted together and waited for, copies."""
    p = D.shape[0]
    rank = dist.get_rank(group)
    send = input.contiguous().reshape(-1).view(torch.uint8)
    recv = output.reshape(-1).view(torch.uint8)
    sd = np.concatenate([[0], np.cumsum(D[rank])])
    rd = np.concatenate([[0], np.cumsum(D[:, rank])])
    arena = torch.empty(int(prog["info"]["staging_bytes"]), dtype=torch.uint8)
    bufs, disp = (send, recv, arena), (sd, rd, None)

    def at(kind, msg, off, n):
        kind, msg, off, n = int(kind), int(msg), int(off), int(n)
        base = 0 if kind == 2 else int(disp[kind][msg])
        return bufs[kind][base + off:base + off + n]

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
        reqs = []
        for m in prog["recvs"][int(w[4]):int(w[4]) + int(w[5])]:
            peer = int(m[0])
            reqs.append(dist.irecv(at(m[2], m[3], m[4], m[5]), src=_global(group, peer),
                                   group=group, tag=got[peer]))
            got[peer] += 1
        for m in prog["sends"][int(w[2]):int(w[2]) + int(w[3])]:
            peer = int(m[0])
            reqs.append(dist.isend(at(m[2], m[3], m[4], m[5]), dst=_global(group, peer),
                                   group=group, tag=sent[peer]))
            sent[peer] += 1
        for r in reqs:
            r.wait()
        copies(int(w[6]), int(w[7]))
    return output
