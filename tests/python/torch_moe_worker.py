"""test_torch.py's MoE ranks: fast.torch.dispatch and combine against a
naive reference built from plain all_gathers (gloo, env://), on random
top-k routing with -1 entries, a hot expert, a token with no expert and a
rank with no tokens; float32 and bfloat16, token-aware and byte plans.
Run by torch_worker.py's ranks after their all_to_all_single part (one
fork, one import of torch)."""
import sys

import numpy as np
import torch
import torch.distributed as dist

import fast
import fast.torch

E, K, H = 16, 4, 5  # experts, top-k, hidden


def gather_rows(t, counts):
    """Every rank's rows of t (padded to the largest count), as float64."""
    n = max(counts)
    pad = torch.zeros((n,) + tuple(t.shape[1:]), dtype=torch.float64)
    pad[:t.shape[0]] = t.to(torch.float64)
    out = [torch.empty_like(pad) for _ in counts]
    dist.all_gather(out, pad)
    return [o[:c] for o, c in zip(out, counts)]


def inputs(rank, trial, dtype):
    rng = np.random.default_rng(500 + 31 * trial + rank)
    T = 0 if rank == 5 else int(rng.integers(6, 20))  # rank 5: no tokens
    idx = rng.integers(0, E, size=(T, K))
    idx[rng.random((T, K)) < 0.2] = -1
    idx[rng.random(T) < 0.5, 0] = 3  # a hot expert
    if T:
        idx[T // 2] = -1  # a token with no expert
    # values exact in bfloat16 through every sum below
    x = torch.from_numpy(rng.integers(-4, 5, size=(T, H)).astype(np.float32)).to(dtype)
    w = torch.from_numpy(rng.choice([0.5, 1.0, 2.0], size=(T, K)).astype(np.float32))
    return x, torch.from_numpy(idx), w


def expert(e, v):
    """Expert e's output for rows v (exact in bfloat16 for |v| <= 4)."""
    return v * (e % 3 + 1) + (e % 5)


def check_dispatch(rank, p, x, idx, w, got, what):
    recv_x, ridx, rw, per_expert, h = got
    L = E // p
    counts = [torch.zeros(1, dtype=torch.int64) for _ in range(p)]
    dist.all_gather(counts, torch.tensor([x.shape[0]]))
    counts = [int(c) for c in counts]
    X, I, W = (gather_rows(t, counts) for t in (x, idx, w))
    want = [(s, t) for s in range(p) for t in range(counts[s])
            if any(int(e) >= 0 and int(e) // L == rank for e in I[s][t])]
    src = list(zip(h.recv_src_rank.tolist(), h.recv_src_idx.tolist()))
    assert sorted(src) == want and len(src) == len(want), what + ": received rows"
    assert src == sorted(src, key=lambda st: st[0]), what + ": rows by source rank"
    n_e = [0] * L
    for i, (s, t) in enumerate(src):
        assert torch.equal(recv_x[i].to(torch.float64), X[s][t]), what + ": recv_x"
        loc = [int(e) - rank * L if e >= 0 and int(e) // L == rank else -1 for e in I[s][t]]
        assert ridx[i].tolist() == loc, what + ": recv_topk_idx"
        assert rw[i].tolist() == [float(W[s][t][j]) if loc[j] >= 0 else 0.0 for j in range(K)]
        for e in set(loc) - {-1}:
            n_e[e] += 1
    assert per_expert == n_e, what + ": tokens per expert"
    return src


def cross_server(rank, p, gpus, idx, prog, unit):
    """(units prog's ranks send to other servers, the per-server and the
    per-GPU volume of the routing in those units), summed over the ranks."""
    L = E // p
    dedup = per_gpu = 0
    for row in idx.tolist():
        ranks = {e // L for e in row if e >= 0}
        dedup += len({r // gpus for r in ranks} - {rank // gpus})
        per_gpu += len([r for r in ranks if r // gpus != rank // gpus])
    out = int(prog["sends"][prog["sends"][:, 1] == 1][:, 5].sum())
    v = torch.tensor([out, dedup * unit, per_gpu * unit], dtype=torch.int64)
    dist.all_reduce(v)
    return v.tolist()


def main(rank, p, topo):
    """Rank rank's part (of p, on an h200 topology of 2 servers) in the
    group torch_worker.py set up; sys.exit with a message on a failure."""
    trials = [("fast", torch.float32), ("hier", torch.bfloat16), ("fast", torch.bfloat16),
              ("fanout", torch.float32), ("auto", torch.float32)]
    for trial, (algo, dtype) in enumerate(trials):
        what = "rank %d, %s, %s" % (rank, algo, dtype)
        x, idx, w = inputs(rank, trial, dtype)
        got = fast.torch.dispatch(x, idx, w, num_experts=E, topology=topo, algo=algo)
        src = check_dispatch(rank, p, x, idx, w, got, what)
        h = got[4]
        kinds = (h.dispatch_program["info"]["kind"], h.combine_program["info"]["kind"])
        if algo in ("fast", "hier"):  # token plans: each token crosses to a server once
            assert kinds == ("dispatch", "combine"), what + ": %s" % (kinds,)
            row = H * x.element_size() + 8 * (K + 1) + 4 * K  # combine: in elements
            for prog, unit in ((h.dispatch_program, row), (h.combine_program, H)):
                out, dedup, per_gpu = cross_server(rank, p, p // 2, idx, prog, unit)
                assert out == dedup < per_gpu, what + ": %d out, %d deduplicated, %d per GPU" \
                    % (out, dedup, per_gpu)
        elif algo == "fanout":  # a byte plan over the per-GPU view
            assert kinds == ("bytes", "bytes"), what + ": %s" % (kinds,)
        recv_x, ridx, rw, _, h = got
        # y[i, j]: expert ridx[i, j]'s output; NaN where no local expert (never read)
        y = torch.full((len(src), K, H), float("nan"), dtype=dtype)
        for i in range(len(src)):
            for j in range(K):
                if ridx[i, j] >= 0:
                    y[i, j] = expert(int(ridx[i, j]) + rank * (E // p), recv_x[i])
        out = fast.torch.combine(y, h)
        want = torch.zeros((x.shape[0], H), dtype=dtype)
        for t in range(x.shape[0]):
            for j in range(K):
                if idx[t, j] >= 0:
                    want[t] += w[t, j].to(dtype) * expert(int(idx[t, j]), x[t])
        assert out.dtype == dtype and torch.equal(out, want), what + ": combine"
        if trial == 0:  # y already reduced per row: the same sums
            y2 = torch.stack([sum((rw[i, j] * y[i, j] for j in range(K) if ridx[i, j] >= 0),
                                  torch.zeros(H)) for i in range(len(src))]) \
                if src else torch.zeros((0, H))
            assert torch.equal(fast.torch.combine(y2, h), want), what + ": combine of [R, H]"
    refusals(rank, p, topo)


def refusals(rank, p, topo):
    """One rank's bad argument: every rank raises, none waits."""
    x, idx, w = inputs(rank, 9, torch.float32)
    try:
        fast.torch.dispatch(x, idx, w, num_experts=E if rank != 2 else E + p, topology=topo)
        sys.exit("rank %d: dispatch with rank 2's num_experts did not raise" % rank)
    except fast.InputError as e:
        assert "num_experts" in str(e), str(e)
    try:
        fast.torch.dispatch(x, idx if rank != 6 else idx + 100, num_experts=E, topology=topo)
        sys.exit("rank %d: dispatch with rank 6's bad expert ids did not raise" % rank)
    except fast.InputError as e:
        assert ("rank 6" in str(e)) == (rank != 6), str(e)
    h = fast.torch.dispatch(x, idx, num_experts=E, topology=topo)[4]
    R = h.recv_topk_idx.shape[0]
    try:
        fast.torch.combine(torch.zeros((R, H + (rank == 1))), h)
        sys.exit("rank %d: combine with rank 1's wrong y did not raise" % rank)
    except fast.InputError as e:
        assert ("rank 1" in str(e)) == (rank != 1), str(e)
