"""fast.torch.all_to_all_single against torch.distributed.all_to_all_single:
8 gloo processes on this host (tests/python/torch_worker.py forks them), every
algorithm on random, zero-row and hot-receiver splits, float32, bfloat16 and
integer rows, 1-D and 2-D, with empty messages, and the refusals of ranks
that disagree; fast.torch.dispatch and combine against a reference from
all_gathers (tests/python/torch_moe_worker.py); tensors on two devices
refused.  All through the batched point-to-point path (batch_isend_irecv)
on gloo; the CUDA/NCCL path runs in tests/gpu/device_check.sh only.  Without
python3-torch the test skips, except in CI (CI=true), where deps.sh
installs it."""
import os
import socket
import subprocess
import sys

import pytest

from conftest import PYTHONPATH, ROOT, need_torch

need_torch()
N = 8


@pytest.fixture(scope="module")
def ranks_output():
    """Fork 8 gloo ranks of torch_worker.py once (torch's import is most of
    the time): all_to_all_single's part, then torch_moe_worker.py's
    dispatch/combine part, then the device rules; each rank prints "rank N
    a2a ok", "rank N moe ok" and "rank N devices ok" as it passes them.
    The timeout bounds every refusal: a rank left waiting fails the tests
    instead of hanging them."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), WORLD_SIZE=str(N),
               FAST_PYTHONPATH=PYTHONPATH,
               OMP_NUM_THREADS="1")
    return subprocess.run([sys.executable, os.path.join(ROOT, "tests", "python",
                                                        "torch_worker.py")],
                          env=env, capture_output=True, text=True, timeout=120)


def passed(r, part):
    lines = sorted(line for line in r.stdout.splitlines() if line.endswith(" %s ok" % part))
    assert lines == sorted("rank %d %s ok" % (k, part) for k in range(N)), \
        (r.stdout + r.stderr)[-4000:]


def test_all_to_all_single_8_ranks_equals_torch(ranks_output):
    # and the refusals: one rank's wrong output_split_sizes, algo, split
    # count or topology: every rank raises, none hangs
    passed(ranks_output, "a2a")


def test_devices_one_per_call_and_gloo_gathers_on_host(ranks_output):
    # one rank's tensors on two devices (cpu and meta): every rank raises,
    # naming them; gloo's control words on the host, NCCL's on CUDA (the
    # rule only: CUDA is checked by tests/gpu/device_check.sh)
    passed(ranks_output, "devices")


def test_dispatch_combine_8_ranks_equal_reference(ranks_output):
    # dispatch/combine against all_gather references; per-server dedup
    # counted on the programs; one rank's bad argument raises everywhere
    passed(ranks_output, "moe")
    assert ranks_output.returncode == 0, (ranks_output.stdout + ranks_output.stderr)[-4000:]
