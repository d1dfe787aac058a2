#!/usr/bin/env python3
"""Figures of the --algo auto study (results/auto_study.sh's CSV), with gnuplot.

    auto_plot.py STUDY.csv OUTDIR

Per (preset, servers): one figure, a panel per traffic, of T = T_sim + S
(time with synthesis) against the per-GPU size for every schedule, auto
(points) and the lower bound (the LP plus the latency floor), each divided
by the least T of the schedules at that size, so the lower envelope is the
line at 1 and auto must lie on it (within the 1.02 x + 2 us slack).
OUTDIR/figures/auto_size_<preset>_<N>x8.svg and .png; the plotted numbers
and gnuplot scripts in OUTDIR/data/.
"""
import csv
import os
import subprocess
import sys
from collections import defaultdict

ALGOS = ["fast", "fanout", "nccl", "pxn", "spreadout", "hier"]
rows = list(csv.DictReader(open(sys.argv[1])))
out = sys.argv[2]
os.makedirs(os.path.join(out, "data"), exist_ok=True)
os.makedirs(os.path.join(out, "figures"), exist_ok=True)
cases = defaultdict(lambda: defaultdict(dict))
for r in rows:
    cases[(r["preset"], r["servers"])][r["traffic"]].setdefault(int(r["size_bytes"]), {})[r["algo"]] = r
for (preset, n), traffics in sorted(cases.items()):
    name = "auto_size_%s_%sx8" % (preset, n)
    panels = []
    for traffic in ["uniform", "zipf", "trace"]:
        if traffic not in traffics:
            continue
        dat = os.path.join(out, "data", "%s_%s.dat" % (name, traffic))
        with open(dat, "w") as f:
            f.write("# size_bytes " + " ".join(ALGOS) + " auto bound   (T / min over schedules of T)\n")
            for size, algos in sorted(traffics[traffic].items()):
                best = min(float(algos[a]["time_with_synthesis_s"]) for a in ALGOS)
                vals = [float(algos[a]["time_with_synthesis_s"]) / best for a in ALGOS + ["auto"]]
                vals.append(float(algos["fast"]["bound_s"]) / best)
                f.write("%d %s\n" % (size, " ".join("%.6g" % v for v in vals)))
        panels.append((traffic, dat))
    gp = os.path.join(out, "data", name + ".gp")
    with open(gp, "w") as f:
        for term, ext in [("svg size 1200,420 dynamic", "svg"), ("pngcairo size 1200,420", "png")]:
            f.write('set terminal %s\nset output "%s"\n' % (term, os.path.join(out, "figures", name + "." + ext)))
            f.write("set multiplot layout 1,%d title \"%s %s x 8: time with synthesis / least over schedules (auto: points)\"\n"
                    % (len(panels), preset, n))
            f.write("set logscale x 2\nset logscale y\nset xlabel \"per-GPU bytes\"\nset format x \"2^{%L}\"\nset yrange [0.01:30]\n"
                    "set key top left font \",8\"\nset grid\n")
            for traffic, dat in panels:
                f.write('set title "%s"\n' % traffic)
                parts = ['"%s" using 1:%d with lines title "%s"' % (dat, i + 2, a) for i, a in enumerate(ALGOS)]
                parts.append('"%s" using 1:%d with points pt 7 ps 0.8 lc rgb "black" title "auto"' % (dat, len(ALGOS) + 2))
                parts.append('"%s" using 1:%d with lines dt 2 lc rgb "gray" title "lower bound"' % (dat, len(ALGOS) + 3))
                f.write("plot " + ", \\\n     ".join(parts) + "\n")
            f.write("unset multiplot\n")
    subprocess.run(["gnuplot", gp], check=True)
    print("wrote", os.path.join(out, "figures", name + ".svg"))
