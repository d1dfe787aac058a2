#!/usr/bin/env python3
"""Figures of the degraded-cluster study (results/nic_study.sh's CSV), with gnuplot.

    nic_plot.py NICS.csv OUTDIR [SIZE_BYTES]

Per (preset, servers): one figure, a panel per traffic, of time / bound
(the LP plus the latency floor) per scenario (healthy, one NIC at 50% and
25%, one and two NICs down, K = G/2, K = 2G) for FAST compiled for the
real topology, the FAST plan compiled for the healthy one run unchanged
(missing where a NIC it uses is down: refused), and every baseline, at one
per-GPU size (default the largest of the case).
OUTDIR/figures/nics_<preset>_<N>x8.svg and .png; the plotted numbers and
gnuplot scripts in OUTDIR/data/.
"""
import csv
import os
import subprocess
import sys
from collections import defaultdict

SCENARIOS = ["healthy", "nic50", "nic25", "nicdown", "twodown", "nics_half", "nics_double"]
ALGOS = ["fast", "fast_healthy_plan", "fanout", "nccl", "pxn", "spreadout", "hier"]
rows = list(csv.DictReader(open(sys.argv[1])))
out = sys.argv[2]
want = int(sys.argv[3]) if len(sys.argv) > 3 else None
os.makedirs(os.path.join(out, "data"), exist_ok=True)
os.makedirs(os.path.join(out, "figures"), exist_ok=True)
cases = defaultdict(lambda: defaultdict(lambda: defaultdict(dict)))
for r in rows:
    cases[(r["preset"], r["servers"])][r["traffic"]][int(r["size_bytes"])][(r["scenario"], r["algo"])] = r
for (preset, n), traffics in sorted(cases.items()):
    name = "nics_%s_%sx8" % (preset, n)
    panels = []
    for traffic in ["uniform", "zipf", "trace"]:
        if traffic not in traffics:
            continue
        size = want if want in traffics[traffic] else max(traffics[traffic])
        cell = traffics[traffic][size]
        dat = os.path.join(out, "data", "%s_%s.dat" % (name, traffic))
        with open(dat, "w") as f:
            f.write("# index scenario " + " ".join(ALGOS) + "   (time / bound; NaN: refused)\n")
            for i, sc in enumerate(SCENARIOS):
                vals = []
                for a in ALGOS:
                    r = cell.get((sc, a))
                    vals.append(r["ratio"] if r and r["status"] == "ok" and r["ratio"] else "NaN")
                f.write("%d %s %s\n" % (i, sc, " ".join(vals)))
        panels.append((traffic, size, dat))
    gp = os.path.join(out, "data", name + ".gp")
    with open(gp, "w") as f:
        for term, ext in [("svg size 1300,440 dynamic", "svg"), ("pngcairo size 1300,440", "png")]:
            f.write('set terminal %s\nset output "%s"\n' % (term, os.path.join(out, "figures", name + "." + ext)))
            f.write('set multiplot layout 1,%d title "%s %s x 8: time / lower bound per NIC scenario"\n'
                    % (len(panels), preset, n))
            f.write("set termoption noenhanced\nset logscale y\nset yrange [0.9:12]\n"
                    "set ytics (\"1\" 1, \"1.25\" 1.25, \"1.5\" 1.5, \"2\" 2, \"3\" 3, \"4\" 4, \"6\" 6, \"8\" 8, \"12\" 12)\n"
                    "set xtics rotate by -40 font \",8\"\nset ylabel \"time / bound\"\n"
                    "set key top right font \",8\"\nset grid\n")
            for traffic, size, dat in panels:
                f.write('set title "%s, %d MiB per GPU"\n' % (traffic, size >> 20))
                parts = ['"%s" using 1:%d:xtic(2) with linespoints title "%s"' % (dat, i + 3, a)
                         for i, a in enumerate(ALGOS)]
                f.write("plot " + ", \\\n     ".join(parts) + "\n")
            f.write("unset multiplot\n")
    subprocess.run(["gnuplot", gp], check=True)
    print("wrote", os.path.join(out, "figures", name + ".svg"))
