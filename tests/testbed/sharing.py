#!/usr/bin/env python3
"""tests/testbed/sharing.py - the degraded fabrics' cells simulated with the
core shared max-min and by demand (scale_out.core_sharing), each fitted the
way `scripts/testbed.sh up` fits (no root, no testbed: from kept data).

    python3 tests/testbed/sharing.py build/bin/fast results/testbed/degraded/demand/slow-nic ...

Each DIR is one fabric as tests/testbed/degraded.sh leaves it (cells.tsv,
cells/, topo.json, topo-healthy.json, and calib/ with sweeps.json and the
collectives up measured, coll-fast.run.json and coll-fanout.run.json).
For each sharing: calib/sweeps.json with that sharing is fitted by `fast
calibrate --fit-run` on the two collectives (--sync step: the terms
/scale_out/step_overhead_us and /scale_out/core_oversubscription, as up
fits them), the fitted numbers replace topo.json's and topo-healthy.json's
(the --nic overrides stay), and every cell's plan is simulated on it: FAST,
fanout and hier compiled for the degraded topology, fast-unaware compiled
for the healthy one, each on the cell's .one.json matrix.  Prints per
fabric the fit and a table of every cell (measured median, simulated time
and error each way) and the cells within +-15% each way.
"""
import json
import os
import subprocess
import sys
import tempfile


def run(args):
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


def fit(fast, d, sharing, tmp):
    t = json.load(open(os.path.join(d, "calib", "sweeps.json")))
    t["scale_out"]["core_sharing"] = sharing
    sweeps = os.path.join(tmp, "sweeps-%s.json" % sharing)
    json.dump(t, open(sweeps, "w"))
    out = os.path.join(tmp, "fit-%s.json" % sharing)
    runs = []
    for algo in ("fast", "fanout"):
        # the run names the traffic where up wrote it: the kept copy instead
        r = json.load(open(os.path.join(d, "calib", "coll-%s.run.json" % algo)))
        r["traffic"] = os.path.abspath(os.path.join(d, "calib", "coll.traffic.json"))
        runs += ["--fit-run", os.path.join(tmp, "coll-%s.run.json" % algo)]
        json.dump(r, open(runs[-1], "w"))
    report = run([fast, "calibrate", "--topo", sweeps, "--sync", "step", "-o", out] + runs)
    so = json.load(open(out))["scale_out"]
    terms = {k: so[k] for k in ("step_overhead_us", "core_oversubscription")}
    sse = [l for l in report.splitlines() if l.startswith("sum of squared")]
    return terms, sse[0] if sse else ""


def refitted(d, name, sharing, terms, tmp):
    t = json.load(open(os.path.join(d, name)))
    t["scale_out"].update(terms)
    t["scale_out"]["core_sharing"] = sharing
    path = os.path.join(tmp, "%s-%s" % (sharing, name))
    json.dump(t, open(path, "w"))
    return path


def simulate(fast, d, row, topo, healthy, tmp):
    rate, size, pat, algo = row[:4]
    one = os.path.join(d, "cells", "%s-%s-%s.one.json" % (rate, size, pat))
    how = ["--algo", algo]
    if algo == "fast-unaware":
        plan = os.path.join(tmp, "unaware.json")
        run([fast, "plan", "--topo", healthy, "--traffic", one, "--algo", "fast", "-o", plan])
        how = ["--plan", plan]
    out = run([fast, "sim", "--topo", topo, "--traffic", one, "--json"] + how)
    return json.loads(out)["plans"][0]["time_s"] * 1e3


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: tests/testbed/sharing.py FAST_BINARY DIR...")
    fast, dirs = sys.argv[1], sys.argv[2:]
    within = {"maxmin": 0, "demand": 0}
    cells = 0
    with tempfile.TemporaryDirectory() as tmp:
        for d in dirs:
            rows = [l.rstrip("\n").split("\t") for l in open(os.path.join(d, "cells.tsv"))][1:]
            sims = {}
            print("## %s" % d)
            for sharing in ("maxmin", "demand"):
                terms, sse = fit(fast, d, sharing, tmp)
                print("%s: step_overhead_us %.0f, core_oversubscription %.3f; %s" % (
                    sharing, terms["step_overhead_us"], terms["core_oversubscription"], sse))
                topo = refitted(d, "topo.json", sharing, terms, tmp)
                healthy = refitted(d, "topo-healthy.json", sharing, terms, tmp)
                sims[sharing] = [simulate(fast, d, r, topo, healthy, tmp) for r in rows]
            print()
            print("| traffic | algo | measured median ms | maxmin ms | error | demand ms | error |")
            print("|---|---|---:|---:|---:|---:|---:|")
            for i, r in enumerate(rows):
                med = float(r[4])
                errs = {s: (sims[s][i] - med) / med for s in sims}
                for s in sims:
                    within[s] += abs(errs[s]) <= 0.15
                cells += 1
                print("| %s | %s | %.1f | %.1f | %+.0f%% | %.1f | %+.0f%% |" % (
                    r[2], r[3], med, sims["maxmin"][i], 100 * errs["maxmin"], sims["demand"][i],
                    100 * errs["demand"]))
            print()
    print("within +-15%%: maxmin %d of %d cells, demand %d of %d" % (
        within["maxmin"], cells, within["demand"], cells))


if __name__ == "__main__":
    main()
