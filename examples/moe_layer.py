#!/usr/bin/python3
"""A small mixture-of-experts layer over P CPU processes (gloo), its token
exchange done three ways: with torch.distributed.all_to_all_single, with
fast.torch.all_to_all_single (a FAST plan, run wave by wave), and with
fast.torch.dispatch and combine (token plans: a token crosses to a server
once, and combine sums on the expert server before crossing back).

Each rank holds T tokens of width H and E experts (a two-layer MLP each);
the layer is the usual five steps:

    router    logits = x @ W_r, top-k experts per token, softmax gates
    dispatch  tokens sorted by expert, sent to the expert's rank (all-to-all)
    experts   each expert's MLP over the tokens it received
    combine   results sent back to the tokens' ranks (all-to-all)
    output    y = x + sum over the token's k experts of gate * expert(x)

L such layers are stacked.  Both runs do the same arithmetic in the same
order -- only the all-to-all differs, and it moves bytes -- so the outputs
must be bit-identical; the example checks it on every rank and prints one
checksum per run.  dispatch/combine sends a token to a rank once (not once
per expert) and sums in another order, so its output is only close to the
others (within 1e-5, checked too).  The time per layer is the median over the repetitions
of the slowest rank's time (wall clock, this host's CPUs shared by all P
processes: a functional example, not a benchmark).

    PYTHONPATH=python /usr/bin/python3 examples/moe_layer.py
    /usr/bin/python3 examples/moe_layer.py --ranks 8 --tokens 64 --hidden 32 --reps 1

Options: --ranks P (8), --tokens T per rank (256), --hidden H (128),
--experts E per rank (2), --topk k (2), --layers L (2), --reps N (3),
--algo A (fast; any fast.algorithms() but auto).  Exit 0 when the outputs
are identical (and dispatch/combine's close), 1 when they are not.
"""
import argparse
import os
import socket
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

try:
    import fast
except ImportError:  # a checkout: the package is python/fast
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
    import fast
import fast.torch  # noqa: E402


def torch_a2a(out, inp, out_splits, in_splits):
    dist.all_to_all_single(out, inp, out_splits, in_splits)


def make_fast_a2a(algo):
    def a2a(out, inp, out_splits, in_splits):
        fast.torch.all_to_all_single(out, inp, out_splits, in_splits, algo=algo)
    return a2a


class Layer:
    """One MoE layer's weights, the same on every rank (seeded by layer)."""

    def __init__(self, idx, p, args):
        g = torch.Generator().manual_seed(1000 + idx)
        h, f, ne = args.hidden, 2 * args.hidden, p * args.experts
        self.router = torch.randn(h, ne, generator=g) / h ** 0.5
        self.w1 = torch.randn(ne, h, f, generator=g) / h ** 0.5
        self.w2 = torch.randn(ne, f, h, generator=g) / f ** 0.5
        self.e, self.k = args.experts, args.topk


def moe_forward(x, layer, p, rank, a2a):
    """One layer's forward: (output, seconds in the all-to-alls)."""
    # router: top-k experts per token and their gates
    probs = torch.softmax(x @ layer.router, dim=-1)
    gates, experts = probs.topk(layer.k, dim=-1)                 # (T, k)
    gates = gates / gates.sum(dim=-1, keepdim=True)
    flat = experts.reshape(-1)                                   # (T*k,) global expert ids
    order = torch.argsort(flat, stable=True)                     # by expert, hence by rank
    src_tok = order // layer.k                                   # the token behind each slot
    per_expert = torch.bincount(flat, minlength=p * layer.e)     # (P*E,) slots per expert
    t1 = time.perf_counter()

    # dispatch: the per-expert counts (E per rank), then the tokens
    got_counts = torch.empty_like(per_expert)
    a2a(got_counts, per_expert, None, None)
    got_counts = got_counts.reshape(p, layer.e)                  # [source rank][local expert]
    send_splits = per_expert.reshape(p, layer.e).sum(dim=1).tolist()
    recv_splits = got_counts.sum(dim=1).tolist()
    recv = torch.empty(sum(recv_splits), x.shape[1])
    a2a(recv, x[src_tok].contiguous(), recv_splits, send_splits)
    t2 = time.perf_counter()

    # experts: from each source rank, its slots come in local expert order
    out = torch.empty_like(recv)
    base = 0
    for s in range(p):
        for e in range(layer.e):
            n = int(got_counts[s, e])
            if n:
                g = rank * layer.e + e
                h = torch.nn.functional.gelu(recv[base:base + n] @ layer.w1[g])
                out[base:base + n] = h @ layer.w2[g]
            base += n
    t3 = time.perf_counter()

    # combine: results back in the dispatch's order, then weighted per token
    back = torch.empty(flat.numel(), x.shape[1])
    a2a(back, out, send_splits, recv_splits)
    t4 = time.perf_counter()
    y = torch.zeros_like(x)
    y.index_add_(0, src_tok, back * gates.reshape(-1)[order].unsqueeze(1))
    y = x + y
    return y, (t2 - t1) + (t4 - t3)


def moe_forward_tokens(x, layer, p, rank, algo):
    """The same layer through fast.torch.dispatch and combine: (output,
    seconds in the two exchanges)."""
    probs = torch.softmax(x @ layer.router, dim=-1)
    gates, experts = probs.topk(layer.k, dim=-1)
    gates = gates / gates.sum(dim=-1, keepdim=True)
    t1 = time.perf_counter()
    recv, local, w, _, handle = fast.torch.dispatch(x, experts, gates, num_experts=p * layer.e,
                                                    algo=algo)
    t2 = time.perf_counter()
    out = torch.zeros(recv.shape[0], layer.k, x.shape[1])  # [row, slot]: its expert's output
    for e in range(layer.e):
        rows, slots = (local == e).nonzero(as_tuple=True)
        if len(rows):
            g = rank * layer.e + e
            out[rows, slots] = torch.nn.functional.gelu(recv[rows] @ layer.w1[g]) @ layer.w2[g]
    t3 = time.perf_counter()
    y = fast.torch.combine(out, handle)  # weighted by the gates dispatch carried
    t4 = time.perf_counter()
    return x + y, (t2 - t1) + (t4 - t3)


def run(x0, layers, forward, reps):
    """(output, per layer: the medians of the slowest rank's seconds for the
    layer and for its all-to-alls)"""
    times = [[] for _ in layers]
    for _ in range(reps + 1):  # the first pass warms caches (fast's plans), untimed
        x = x0
        for i, layer in enumerate(layers):
            dist.barrier()
            t = time.perf_counter()
            x, comm = forward(x, layer)
            dt = torch.tensor([time.perf_counter() - t, comm], dtype=torch.float64)
            dist.all_reduce(dt, op=dist.ReduceOp.MAX)
            times[i].append(dt.tolist())
    return x, [[statistics.median(r[j] for r in t[1:]) for j in (0, 1)] for t in times]


def worker(rank, p, port, args, q):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=p)
    layers = [Layer(i, p, args) for i in range(args.layers)]
    x0 = torch.randn(args.tokens, args.hidden, generator=torch.Generator().manual_seed(rank))
    fast_a2a = make_fast_a2a(args.algo)
    y_torch, t_torch = run(x0, layers, lambda x, l: moe_forward(x, l, p, rank, torch_a2a),
                           args.reps)
    y_fast, t_fast = run(x0, layers, lambda x, l: moe_forward(x, l, p, rank, fast_a2a),
                         args.reps)
    y_tok, t_tok = run(x0, layers, lambda x, l: moe_forward_tokens(x, l, p, rank, args.algo),
                       args.reps)
    same = torch.tensor([int(torch.equal(y_torch, y_fast)),
                         int(torch.allclose(y_tok, y_torch, rtol=1e-5, atol=1e-5))])
    dist.all_reduce(same, op=dist.ReduceOp.MIN)
    sums = torch.tensor([float(y.double().sum()) for y in (y_torch, y_fast, y_tok)],
                        dtype=torch.float64)
    dist.all_reduce(sums)
    if rank == 0:
        q.put((same.tolist(), sums.tolist(), t_torch, t_fast, t_tok))
    dist.barrier()
    dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ranks", type=int, default=8)
    ap.add_argument("--tokens", type=int, default=256)
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--experts", type=int, default=2)
    ap.add_argument("--topk", type=int, default=2)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--algo", default="fast")
    args = ap.parse_args()
    if args.ranks < 1 or not 1 <= args.topk <= args.ranks * args.experts or args.reps < 1:
        ap.error("need ranks >= 1, 1 <= topk <= ranks * experts, reps >= 1")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ctx = mp.get_context("fork")  # the children share the parent's imports: a quicker start
    q = ctx.SimpleQueue()
    mp.start_processes(worker, args=(args.ranks, port, args, q), nprocs=args.ranks,
                       start_method="fork")
    (same, close), (sum_torch, sum_fast, sum_tok), t_torch, t_fast, t_tok = q.get()
    print("moe: %d ranks (gloo), %d tokens x %d per rank, %d experts per rank, top-%d, "
          "%d layers, fast algo %s" % (args.ranks, args.tokens, args.hidden, args.experts,
                                       args.topk, args.layers, args.algo))
    print("output checksum  torch %.17g" % sum_torch)
    print("output checksum  fast  %.17g" % sum_fast)
    print("output checksum  dispatch/combine %.17g" % sum_tok)
    print("outputs identical on all %d ranks: %s" % (args.ranks, "yes" if same else "NO"))
    print("dispatch/combine within 1e-5 on all %d ranks: %s" % (args.ranks,
                                                             "yes" if close else "NO"))
    print("per layer, ms (median of %d; the slowest rank; a2a: dispatch + combine)" % args.reps)
    print("layer  torch  torch a2a   fast  fast a2a  tokens  tokens a2a")
    for i, (a, b, c) in enumerate(zip(t_torch, t_fast, t_tok)):
        print("%5d %6.1f %10.1f %6.1f %9.1f %7.1f %11.1f" % (
            i, a[0] * 1e3, a[1] * 1e3, b[0] * 1e3, b[1] * 1e3, c[0] * 1e3, c[1] * 1e3))
    return 0 if same and close else 1


if __name__ == "__main__":
    sys.exit(main())
