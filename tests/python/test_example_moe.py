"""examples/moe_layer.py runs: 8 gloo processes, a small size, one layer;
the outputs through torch.distributed.all_to_all_single and through
fast.torch.all_to_all_single are identical, those through fast.torch.dispatch
and combine within 1e-5 (the example exits 1 otherwise), and it prints the
checksums and a time per layer.  A skip
without python3-torch, except in CI (as test_torch.py)."""
import os
import re
import subprocess
import sys


from conftest import PYTHONPATH, ROOT, need_torch

need_torch()


def test_moe_layer_example_outputs_match():
    env = dict(os.environ, OMP_NUM_THREADS="1",
               PYTHONPATH=PYTHONPATH)
    r = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "moe_layer.py"),
                        "--ranks", "8", "--tokens", "32", "--hidden", "16", "--layers", "1",
                        "--reps", "1"], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr[-2000:]
    sums = re.findall(r"^output checksum  (torch|fast ) (\S+)$", r.stdout, re.M)
    assert [k for k, _ in sums] == ["torch", "fast "], r.stdout
    assert sums[0][1] == sums[1][1], r.stdout
    assert "outputs identical on all 8 ranks: yes" in r.stdout
    assert "dispatch/combine within 1e-5 on all 8 ranks: yes" in r.stdout
    assert re.search(r"^    0" + r" +[0-9.]+" * 6 + "$", r.stdout, re.M), r.stdout
