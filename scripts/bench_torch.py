#!/usr/bin/python3
"""scripts/bench_torch.py: the cost of fast.torch.all_to_all_single's Python
path against torch.distributed.all_to_all_single on the same gloo group.
By hand, not in CI (docs/benchmarks.md, "fast.torch overhead").

P ranks (forked, gloo on 127.0.0.1) exchange S bytes each, S/P per peer
(float32, equal splits), for S from 4 KiB to 64 MiB.  For each size, after
one untimed call (fast's plan and program compiled and cached), every
repetition times on every rank, between barriers:

    torch    dist.all_to_all_single
    fast     fast.torch.all_to_all_single, a cache hit
    gather   the ranks' split sizes all_gathered and checked (_matrix)
    lookup   the cache key (the matrix's bytes hashed) and the hit (_program)
    agree    the ranks' plan hashes all_gathered and compared (_agree_plans)
    walk     the program run wave by wave (_run): copies, one
             batch_isend_irecv per wave, waits

and keeps the slowest rank's time.  Printed: the median and the min-max
over the repetitions, in microseconds; the program's waves and messages
(rank 0's); walk per wave.  Repetitions fall with the size (--reps caps
them) so a run stays short on a shared machine.

    /usr/bin/python3 scripts/bench_torch.py [--ranks 8] [--servers 2]
        [--algo fast] [--reps 30] [--max-mib 64]
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

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import fast  # noqa: E402
import fast.torch as ft  # noqa: E402

COLS = ("torch", "fast", "gather", "lookup", "agree", "walk")


def sizes(max_mib):
    s = 4 << 10
    while s <= max_mib << 20:
        yield s
        s *= 4


def reps_for(size, cap):
    return max(3, min(cap, (64 << 20) // size // 8 + 2))


def one(p, rank, size, topo, algo, reps):
    n = size // 4 // p  # float32 elements per peer
    inp = torch.arange(n * p, dtype=torch.float32) + rank
    out_t, out_f = torch.empty(n * p), torch.empty(n * p)
    splits = [n] * p
    dist.all_to_all_single(out_t, inp, splits, splits)
    ft.all_to_all_single(out_f, inp, splits, splits, topology=topo, algo=algo)  # compiles
    assert torch.equal(out_t, out_f)
    rows = []
    for _ in range(reps):
        t = []
        dist.barrier()
        a = time.perf_counter()
        dist.all_to_all_single(out_t, inp, splits, splits)
        t.append(time.perf_counter() - a)
        dist.barrier()
        a = time.perf_counter()
        ft.all_to_all_single(out_f, inp, splits, splits, topology=topo, algo=algo)
        t.append(time.perf_counter() - a)
        dist.barrier()
        a = time.perf_counter()
        D = ft._matrix(out_f, inp, splits, splits, None)
        b = time.perf_counter()
        prog = ft._program(topo, algo, D, rank, {})
        c = time.perf_counter()
        ft._agree_plans([prog["info"]["plan_hash"]], None, None, "bench")
        d = time.perf_counter()
        ft._run(prog, D, out_f, inp, None)
        e = time.perf_counter()
        t += [b - a, c - b, d - c, e - d]
        v = torch.tensor(t, dtype=torch.float64)
        dist.all_reduce(v, op=dist.ReduceOp.MAX)
        rows.append(v.tolist())
    return rows, len(prog["waves"]), len(prog["sends"])


def worker(rank, args, port, q):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=args.ranks)
    topo = fast.Topology.preset("h200", servers=args.servers, gpus=args.ranks // args.servers)
    for size in sizes(args.max_mib):
        rows, waves, sends = one(args.ranks, rank, size, topo, args.algo,
                                 reps_for(size, args.reps))
        if rank == 0:
            q.put((size, rows, waves, sends))
    dist.barrier()
    dist.destroy_process_group()


def human(b):
    return "%d KiB" % (b >> 10) if b < 1 << 20 else "%d MiB" % (b >> 20)


def cell(xs):
    us = sorted(x * 1e6 for x in xs)
    return "%.0f (%.0f-%.0f)" % (statistics.median(us), us[0], us[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ranks", type=int, default=8)
    ap.add_argument("--servers", type=int, default=2)
    ap.add_argument("--algo", default="fast")
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--max-mib", type=int, default=64)
    args = ap.parse_args()
    if args.ranks % args.servers:
        ap.error("--ranks must be a multiple of --servers")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    q = mp.get_context("fork").SimpleQueue()
    mp.start_processes(worker, args=(args, port, q), nprocs=args.ranks, start_method="fork")
    print("%d ranks (gloo, one host), h200 %d x %d, algo %s; us, median (min-max) of the "
          "slowest rank" % (args.ranks, args.servers, args.ranks // args.servers, args.algo))
    print("| bytes/rank | reps | " + " | ".join(COLS) + " | fast/torch | waves | sends | "
          "walk/wave |")
    print("|---" * (len(COLS) + 6) + "|")
    while not q.empty():
        size, rows, waves, sends = q.get()
        med = [statistics.median(r[j] for r in rows) for j in range(len(COLS))]
        print("| %s | %d | %s | %.2f | %d | %d | %.0f |" % (
            human(size), len(rows), " | ".join(cell([r[j] for r in rows])
                                               for j in range(len(COLS))),
            med[1] / med[0], waves, sends, med[5] / waves * 1e6))


if __name__ == "__main__":
    main()
