#!/usr/bin/env python3
"""Check the --algo auto study (results/auto_study.sh's CSV).

    auto_check.py STUDY.csv

Per case (preset, servers, traffic, size): T(auto) <= 1.02 x min over the
schedules of T(a) + 2 us, with T = time_with_synthesis_s; prints the
failing cases, the worst margin, per algorithm the predictor's error
(predicted_sim_s / time_s: median and range), and FAST's simulated time
over the bound (bound_s: the LP plus the latency floor) at every size, per
preset and traffic, with the largest.  Exit 1 when a case fails.
"""
import csv
import statistics
import sys
from collections import defaultdict

rows = list(csv.DictReader(open(sys.argv[1])))
cases = defaultdict(dict)
for r in rows:
    cases[(r["preset"], r["servers"], r["traffic"], int(r["size_bytes"]))][r["algo"]] = r
fails, worst = 0, 0.0
err = defaultdict(list)
for key, algos in sorted(cases.items()):
    best = min(float(r["time_with_synthesis_s"]) for a, r in algos.items() if a != "auto")
    auto = algos["auto"]
    t = float(auto["time_with_synthesis_s"])
    worst = max(worst, t / best)
    if t > 1.02 * best + 2e-6:
        fails += 1
        opt = min((float(r["time_with_synthesis_s"]), a) for a, r in algos.items() if a != "auto")
        print("FAIL %s %s x 8 %s %d: auto (%s) %.4g s, best %s %.4g s" % (
            key[0], key[1], key[2], key[3], auto["chosen"], t, opt[1], opt[0]))
    for a, r in algos.items():
        if a != "auto" and float(r["time_s"]) > 0:
            err[a].append(float(r["predicted_sim_s"]) / float(r["time_s"]))
print("%d cases, %d fail; worst T(auto) / min T = %.4f" % (len(cases), fails, worst))
for a, e in sorted(err.items()):
    print("predictor %-10s predicted/simulated median %.3f, range %.3f..%.3f" % (
        a, statistics.median(e), min(e), max(e)))
# FAST / bound per (preset, servers, traffic) at every size (T_sim, no synthesis)
worst_fast = max((float(r["fast"]["time_s"]) / float(r["fast"]["bound_s"]), k) for k, r in cases.items())
for key in sorted({k[:3] for k in cases}):
    sizes = sorted(k[3] for k in cases if k[:3] == key)
    print("fast / bound %-11s %2s x 8 %-8s %s" % (key[0], key[1], key[2], " ".join(
        "%.2f" % (float(cases[key + (b,)]["fast"]["time_s"]) / float(cases[key + (b,)]["fast"]["bound_s"]))
        for b in sizes)))
print("fast / bound: largest %.3f (%s %s x 8 %s %d B per GPU)" % ((worst_fast[0],) + worst_fast[1]))
sys.exit(1 if fails else 0)
