"""test_torch.py's ranks: fast.torch.all_to_all_single against
torch.distributed.all_to_all_single on the same inputs (gloo, env://),
then torch_moe_worker.py's dispatch and combine in the same processes.
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
import torch_moe_worker  # noqa: E402  (this file's folder is on the path)


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
    refusals(rank, p, topo)
    # one write(2) of a short line is atomic on a pipe: forked ranks' lines
    # never interleave (print may split a line from its newline)
    os.write(1, b"rank %d a2a ok\n" % rank)
    torch_moe_worker.main(rank, p, topo)
    os.write(1, b"rank %d moe ok\n" % rank)
    devices(rank, p, topo)
    os.write(1, b"rank %d devices ok\n" % rank)
    dist.barrier()
    dist.destroy_process_group()


def refused(rank, what, call, want):
    """call() must raise fast.Error on this rank, its text holding want."""
    try:
        call()
    except fast.Error as e:
        if want not in str(e):
            sys.exit("rank %d, %s: %r lacks %r" % (rank, what, str(e), want))
        return
    sys.exit("rank %d, %s: no error" % (rank, what))


def refusals(rank, p, topo):
    """What one rank gets wrong, every rank raises for, in bounded time
    (none is left waiting: the test's timeout bounds it), and the group
    still works after."""
    inp, out = torch.arange(2 * p, dtype=torch.float32) + rank, torch.empty(2 * p)
    outs = [2] * p
    if rank == 3:
        outs[6] = 3  # rank 6 sends it 2 rows
    refused(rank, "split sizes", lambda: fast.torch.all_to_all_single(
        out, inp, outs, [2] * p, topology=topo),
        "rank 6's input_split_sizes[3] = 2 but rank 3's output_split_sizes[6] = 3")
    refused(rank, "algo", lambda: fast.torch.all_to_all_single(
        out, inp, topology=topo, algo="fanout" if rank == 4 else "fast"), "plans differ")
    refused(rank, "a count", lambda: fast.torch.all_to_all_single(
        out, inp, [2] * p, [2] * (p - (rank == 0)), topology=topo),
        "%d input split sizes for %d ranks" % (p - 1, p) if rank == 0 else "rank 0 refused")
    other = fast.Topology.preset("h200", servers=1, gpus=4)  # 4 GPUs for 8 ranks
    refused(rank, "topology", lambda: fast.torch.all_to_all_single(
        out, inp, topology=other if rank == 7 else topo),
        "the topology has 4" if rank == 7 else "rank 7 failed to build its plan")
    want = torch.empty(2 * p)
    dist.all_to_all_single(want, inp)
    fast.torch.all_to_all_single(out, inp, topology=topo)
    assert torch.equal(want, out), "after the refusals"


def devices(rank, p, topo):
    """The device rules without a GPU: gloo's control words gather on the
    host, NCCL's on the CUDA device (the rule, not the call: no CUDA here),
    and one rank's tensors on two devices ("meta" stands for the other
    device) are refused by every rank, naming the devices."""
    assert fast.torch._control_device(None) == torch.device("cpu")
    for backend, want in (("gloo", "cpu"), ("nccl", "cuda"), ("cuda:nccl", "cuda"),
                          ("cpu:gloo,cuda:nccl", "cpu"), ("mpi", "cpu")):
        got = fast.torch._backend_device(backend)
        assert got == want, "backend %s: control words on %s, not %s" % (backend, got, want)
    inp, out = torch.arange(2 * p, dtype=torch.float32), torch.empty(2 * p)
    refused(rank, "devices", lambda: fast.torch.all_to_all_single(
        torch.empty(2 * p, device="meta") if rank == 5 else out, inp, topology=topo),
        "the tensors are on different devices (input on cpu, output on meta)" if rank == 5
        else "rank 5 refused")
    x, idx, w = torch_moe_worker.inputs(rank, 9, torch.float32)
    refused(rank, "dispatch devices", lambda: fast.torch.dispatch(
        x, idx.to("meta") if rank == 4 else idx, w, num_experts=16, topology=topo),
        "(x on cpu, topk_idx on meta, topk_weights on cpu)" if rank == 4 else "rank 4 refused")
    h = fast.torch.dispatch(x, idx, num_experts=16, topology=topo)[4]
    y = torch.zeros((h.recv_topk_idx.shape[0], h.hidden))
    refused(rank, "combine devices", lambda: fast.torch.combine(
        y.to("meta") if rank == 0 else y, h),
        "(y on meta, dispatched on cpu)" if rank == 0 else "rank 0 refused")


if __name__ == "__main__":
    mp.start_processes(main, nprocs=int(os.environ["WORLD_SIZE"]), start_method="fork")
