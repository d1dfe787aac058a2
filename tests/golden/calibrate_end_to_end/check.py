"""Every run logged in tests/data/calibrate, simulated with `fast sim` on the
topology `fast calibrate` fitted to them: the error of each, and exit 1 when
one is over 5% (the calibration must reproduce what it was given).

  python3 check.py FAST TMP DATA      (TMP holds mine.json, 2 x 8, and
                                       mine1.json, its server 0 alone)
"""
import json
import os
import re
import subprocess
import sys

FAST, TMP, DATA = sys.argv[1:4]
LIMIT = 0.05


def run(*args):
    return subprocess.run([FAST] + [str(a) for a in args], check=True, capture_output=True,
                          text=True).stdout


def sim_times(topo, traffic, *opts):
    doc = json.loads(run("sim", "--topo", topo, "--traffic", traffic, "--json", *opts))
    return [p["time_s"] * 1e6 for p in doc["plans"]]


def table_rows(path):
    for line in open(path):
        f = line.split()
        if f and not line.startswith("#"):
            yield int(f[0]), float(f[5])


def deepep_rows(path):
    for line in open(path):
        m = re.search(r"\[tuning\] Best (dispatch|combine)( \((FP8|BF16)\))?:", line)
        if not m:
            continue
        t = re.search(r" t: ([\d.]+) us", line) or re.search(r"\d+ \+ ([\d.]+) us", line)
        yield m.group(1), m.group(3) == "FP8", float(t.group(1))


rows = []
# alltoall_perf: nccl-tests' alltoall is NCCL's, every peer posted at once
for name, topo, n in (("alltoall_intra_h200.txt", "mine1.json", 8),
                      ("alltoall_2x8_h200.txt", "mine.json", 16)):
    for size, us in table_rows(os.path.join(DATA, name)):
        path = os.path.join(TMP, "a2a.json")
        json.dump({"version": 1, "gpus_total": n,
                   "matrices": [{"label": "a2a", "rows": [[size // n] * n] * n}]}, open(path, "w"))
        got = sim_times(os.path.join(TMP, topo), path, "--algo", "nccl", "--peers", n - 1)[0]
        rows.append(("%s %d B" % (name, size), us, got))
# DeepEP: the run regenerated as calibrate does, simulated as hier
for name, topo in (("deepep_intranode_h200.log", "mine1.json"),
                   ("deepep_internode_h200_2x8.log", "mine.json")):
    times = {}
    for fp8, token_bytes in ((False, 14336), (True, 7392)):
        path = os.path.join(TMP, "moe-%d.json" % token_bytes)
        run("gen", "--topo", os.path.join(TMP, topo), "--pattern", "moe", "--token-groups",
            "--token-bytes", token_bytes, "-o", path)
        times[fp8] = sim_times(os.path.join(TMP, topo), path, "--algo", "hier")
    for kind, fp8, us in deepep_rows(os.path.join(DATA, name)):
        got = times[fp8][0 if kind == "dispatch" else 1]
        rows.append(("%s %s %s" % (name, kind, "FP8" if fp8 else "BF16"), us, got))

worst = 0.0
for what, measured, got in rows:
    err = (got - measured) / measured
    worst = max(worst, abs(err))
    print("%-45s %10.2f %10.2f %+7.2f%%%s" % (what, measured, got, 100 * err,
                                             "  OVER 5%" if abs(err) > LIMIT else ""))
print("%d runs, worst error %.2f%% (limit 5%%)" % (len(rows), 100 * worst))
sys.exit(0 if worst <= LIMIT else 1)
