"""tests/gpu/torch_nccl_check.py - fast.torch on CUDA tensors with the NCCL
backend: one rank on the current GPU (NCCL refuses two ranks on one GPU),
run by tests/gpu/device_check.sh when a task has a GPU:

    FAST_LIBRARY=build-cuda/lib/libfast.so.0 python3 tests/gpu/torch_nccl_check.py
    FAST_CHECK_DEVICE=cpu ... (the same checks on gloo and CPU tensors: a dry run)

all_to_all_single (float32 1-D, bfloat16 and int64 rows) against
torch.distributed.all_to_all_single on the same group, then dispatch and
combine against the same sums done locally (a doubling "expert", weights
of 0.5: exact in float32); every result must be on the input's device.
One rank's plan has no messages (its one message is a local copy), so this
checks the control gathers on the device, the staging arena, the copies
and dispatch/combine's tensors on the device, not NCCL point-to-point
between ranks (batch_isend_irecv), which needs two GPUs.  Exit 0: all
equal; 1: a difference (printed); 77: torch without CUDA or NCCL.
"""
import os
import socket
import sys

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import fast.torch  # noqa: E402

BAD = []


def check(ok, what):
    print("%s %s" % ("ok  " if ok else "FAIL", what))
    if not ok:
        BAD.append(what)


def a2a(dev):
    for dtype, shape in ((torch.float32, (1000,)), (torch.bfloat16, (333, 7)),
                         (torch.int64, (64, 3))):
        n = 1
        for s in shape:
            n *= s
        inp = (torch.arange(n, dtype=torch.float64) % 251).to(dtype).reshape(shape).to(dev)
        want, got = torch.empty_like(inp), torch.full_like(inp, -7)
        # the reference moves bytes: gloo has no bfloat16 all-to-all
        dist.all_to_all_single(want.view(torch.uint8), inp.view(torch.uint8))
        fast.torch.all_to_all_single(got, inp)
        check(got.device == dev and torch.equal(want, got),
              "all_to_all_single %s %s on %s" % (dtype, list(shape), got.device))


def moe(dev):
    T, H, E, K = 64, 16, 8, 2
    g = torch.Generator().manual_seed(7)
    x = torch.randint(-4, 5, (T, H), generator=g).to(torch.float32).to(dev)
    idx = torch.randint(0, E, (T, K), generator=g)
    idx[::5, 1], idx[3] = -1, -1  # some -1 entries, a token with no expert
    idx, w = idx.to(dev), torch.full((T, K), 0.5, device=dev)
    recv_x, ridx, rw, per_expert, h = fast.torch.dispatch(x, idx, w, num_experts=E)
    src = h.recv_src_idx
    check(all(t.device == dev for t in (recv_x, ridx, rw, src, h.recv_src_rank)),
          "dispatch's tensors on %s" % dev)
    has = torch.nonzero((idx >= 0).any(dim=1)).reshape(-1)
    check(torch.equal(src.sort().values, has) and torch.equal(recv_x, x[src]),
          "dispatch: every token with an expert once, its row intact")
    check(per_expert == [int((idx == e).any(dim=1).sum()) for e in range(E)],
          "dispatch: tokens per expert %s" % per_expert)
    out = fast.torch.combine(recv_x.unsqueeze(1).expand(-1, K, -1) * 2, h)
    want = ((idx >= 0).to(torch.float32) * w).sum(dim=1, keepdim=True) * 2 * x
    check(out.device == dev and torch.equal(out, want), "combine: the weighted sums")


def main():
    cpu = os.environ.get("FAST_CHECK_DEVICE") == "cpu"
    if not cpu and not (torch.cuda.is_available() and dist.is_nccl_available()):
        print("skipped: torch %s has no CUDA or no NCCL" % torch.__version__)
        return 77
    if not cpu:
        torch.cuda.set_device(0)  # NCCL's p2p hangs without a current device
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    dist.init_process_group("gloo" if cpu else "nccl", rank=0, world_size=1,
                            init_method="tcp://127.0.0.1:%d" % port)
    dev = torch.device("cpu") if cpu else torch.device("cuda", torch.cuda.current_device())
    check(fast.torch._control_device(None) == dev,
          "%s gathers control words on %s" % (dist.get_backend(), dev))
    a2a(dev)
    moe(dev)
    dist.destroy_process_group()
    print("%d failed" % len(BAD))
    return 1 if BAD else 0


if __name__ == "__main__":
    sys.exit(main())
