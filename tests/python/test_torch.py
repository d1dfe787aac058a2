"""fast.torch.all_to_all_single against torch.distributed.all_to_all_single:
8 gloo processes on this host (tests/python/torch_worker.py forks them), every
algorithm on random, zero-row and hot-receiver splits, float32, bfloat16 and
integer rows, 1-D and 2-D, with empty messages.  Without
python3-torch the test skips, except in CI (CI=true), where deps.sh
installs it."""
import os
import socket
import subprocess
import sys


from conftest import PYTHONPATH, ROOT, need_torch

need_torch()


def test_all_to_all_single_8_ranks_equals_torch():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    n = 8
    env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), WORLD_SIZE=str(n),
               FAST_PYTHONPATH=PYTHONPATH,
               OMP_NUM_THREADS="1")
    r = subprocess.run([sys.executable, os.path.join(ROOT, "tests", "python", "torch_worker.py")],
                       env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
    assert sorted(r.stdout.splitlines()) == sorted("rank %d ok" % k for k in range(n)), r.stdout
