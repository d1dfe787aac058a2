"""test_torch.py's ranks: fast.torch.all_to_all_single against
torch.distributed.all_to_all_single on the same inputs (gloo, env://).
Run once; it forks WORLD_SIZE ranks (torch imported once, not per rank:
on two cores eight imports of torch were most of the test's time)."""
import os
import sys

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

sys.path.insert(0, os.environ["FAST_PYTHONPATH"])
import fast  # noqa: E402
import fast.torch  # noqa: E402


def main(rank):
    os.environ["RANK"] = str(rank)
    dist.init_process_group("gloo", init_method="env://")
    p, rank = dist.get_world_size(), dist.get_rank()
    topo = fast.Topology.preset("h200", servers=2, gpus=p // 2)
    # every algorithm of the table, on random, zero-row (a rank that sends
    # nothing) and hot-receiver (every rank sends most to rank 1) splits,
    # float32, bfloat16 and integer rows of 1-D and 2-D inputs
    algos = ["fast", "fanout", "nccl", "pxn", "spreadout", "hier", "auto"]
    kinds = ["random", "zero-row", "hot-receiver"]
    dtypes = [(torch.float32, 3), (torch.bfloat16, 2), (torch.int64, 1)]
    for trial, (algo, kind) in enumerate((a, k) for a in algos for k in kinds):
        dtype, width = dtypes[trial % len(dtypes)]
        S = np.random.default_rng(100 + trial).integers(0, 6, size=(p, p))
        S[1, 2] = 0  # an empty message
        if kind == "zero-row":
            S[3, :] = 0
        elif kind == "hot-receiver":
            S[:, 1] += 40
        rows = int(S[rank].sum())
        # values exact in every dtype (bfloat16 holds integers to 256)
        inp = (torch.arange(rows * width, dtype=torch.float64) % 251 + rank).to(dtype)
        inp = inp.reshape(rows, width) if width > 1 else inp
        out_shape = (int(S[:, rank].sum()),) + tuple(inp.shape[1:])
        want, got = torch.empty(out_shape, dtype=dtype), torch.full(out_shape, -7).to(dtype)
        # gloo has no bfloat16 all-to-all: the reference moves its bytes (uint8)
        bits = (lambda t: t.view(torch.uint8)) if dtype == torch.bfloat16 else (lambda t: t)
        dist.all_to_all_single(bits(want), bits(inp), list(S[:, rank]), list(S[rank]))
        fast.torch.all_to_all_single(got, inp, list(S[:, rank]), list(S[rank]), topology=topo,
                                     algo=algo)
        if not torch.equal(want, got):
            sys.exit("rank %d, %s, %s splits, %s: output differs from torch.distributed's"
                     % (rank, algo, kind, dtype))
    # equal splits, the default topology
    inp = torch.arange(4 * p, dtype=torch.float32) + 100 * rank
    want, got = torch.empty(4 * p), torch.empty(4 * p)
    dist.all_to_all_single(want, inp)
    fast.torch.all_to_all_single(got, inp)
    assert torch.equal(want, got), "equal splits"
    dist.barrier()
    dist.destroy_process_group()
    # one write(2) of a short line is atomic on a pipe: forked ranks' lines
    # never interleave (print may split a line from its newline)
    os.write(1, b"rank %d ok\n" % rank)


if __name__ == "__main__":
    mp.start_processes(main, nprocs=int(os.environ["WORLD_SIZE"]), start_method="fork")
