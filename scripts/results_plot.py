#!/usr/bin/env python3
"""Figures for the what-if studies (scripts/results.sh).

    results_plot.py RESULTS_DIR

Reads the sweep CSVs in RESULTS_DIR (columns: cmd/sweep_case.h), writes the
plotted numbers to RESULTS_DIR/data/*.dat and the figures to
RESULTS_DIR/figures/<name>.png (pngcairo when gnuplot has it, else png) and
<name>.svg.  A CSV that is missing skips its figures.  Rows whose status is
not ok are ignored (and counted on stderr).
"""
import csv
import math
import os
import re
import subprocess
import sys
from collections import defaultdict

BASELINES = ["nccl", "pxn", "hier", "spreadout", "fanout"]
ALGOS = ["fast"] + BASELINES
# the FAST paper's synthesis times (us) at 32, 64, 96 and 320 GPUs
PAPER_SYNTH = [(32, 25.0), (64, 221.0), (96, 805.0), (320, 77000.0)]


def load(path):
    if not os.path.exists(path):
        return None
    rows, bad = [], 0
    with open(path) as f:
        for r in csv.DictReader(f):
            if r["status"] != "ok":
                bad += 1
                continue
            rows.append(r)
    if bad:
        print("results_plot: %s: %d rows with errors ignored" % (path, bad), file=sys.stderr)
    return rows


def num(v):
    return float(v) if v not in ("", None) else float("nan")


def skew_of(traffic):
    m = re.search(r"skew=([0-9.eE+-]+)", traffic)
    return float(m.group(1)) if m else 0.0


def mean(xs):
    xs = [x for x in xs if not math.isnan(x)]
    return sum(xs) / len(xs) if xs else float("nan")


def fmt(v):
    return "?" if v is None or (isinstance(v, float) and math.isnan(v)) else "%.9g" % v


def write_dat(path, header, rows):
    with open(path, "w") as f:
        f.write("# " + " ".join(header) + "\n")
        for r in rows:
            f.write(" ".join(fmt(v) if not isinstance(v, str) else v for v in r) + "\n")


class Plotter:
    def __init__(self, out):
        self.data = os.path.join(out, "data")
        self.figs = os.path.join(out, "figures")
        os.makedirs(self.data, exist_ok=True)
        os.makedirs(self.figs, exist_ok=True)
        terms = subprocess.run(["gnuplot", "-e", "set terminal"], capture_output=True,
                               text=True).stderr + ""
        self.png = "pngcairo" if "pngcairo" in terms else "png"
        self.made = []

    def plot(self, name, body):
        """body: gnuplot commands after terminal/output (data paths relative to data/)."""
        for ext, term in (("png", "%s size 960,600" % self.png),
                          ("svg", "svg size 960,600 dynamic")):
            out = os.path.join(self.figs, name + "." + ext)
            script = ("set terminal %s\nset output '%s'\nset datafile missing '?'\n"
                      "set termoption noenhanced\nset key outside right top\nset grid\ncd '%s'\n%s\n"
                      % (term, os.path.abspath(out), self.data, body))
            with open(os.path.join(self.data, name + ".gp"), "w") as f:
                f.write(script.replace(os.path.abspath(out), name + "." + ext))
            r = subprocess.run(["gnuplot"], input=script, text=True, capture_output=True)
            if r.returncode != 0:
                print("results_plot: gnuplot failed on %s:\n%s" % (name, r.stderr), file=sys.stderr)
                sys.exit(1)
        self.made.append(name)


def by_preset(rows):
    d = defaultdict(list)
    for r in rows:
        d[r["topo"]].append(r)
    return d


def fig_skew(p, rows):
    """Speedup of FAST over each baseline vs skew; FAST/LP vs skew."""
    ratio_lines = {}
    for preset, rs in sorted(by_preset(rows).items()):
        t = defaultdict(dict)  # (skew, seed) -> algo -> time
        for r in rs:
            t[(skew_of(r["traffic"]), r["seed"])][r["algo"]] = num(r["time_us"])
        lp = defaultdict(list)
        for r in rs:
            if r["algo"] == "fast":
                lp[skew_of(r["traffic"])].append(num(r["ratio"]))
        skews = sorted({k[0] for k in t})
        out = []
        for s in skews:
            line = [s]
            for b in BASELINES:
                line.append(mean([v[b] / v["fast"] for (sk, _), v in t.items()
                                  if sk == s and b in v and "fast" in v and v["fast"] > 0]))
            out.append(line)
        write_dat(os.path.join(p.data, "speedup_skew_%s.dat" % preset), ["skew"] + BASELINES, out)
        ratio_lines[preset] = [(s, mean(lp[s])) for s in skews]
        plots = ", ".join("'speedup_skew_%s.dat' using 1:%d with linespoints lw 2 title '%s'"
                          % (preset, i + 2, b) for i, b in enumerate(BASELINES))
        p.plot("speedup_skew_%s" % preset,
               "set title 'FAST speedup over each baseline vs skew (%s, 4x8, 128 MiB per GPU)'\n"
               "set xlabel 'Zipf skew of pair sizes (0 = uniform random)'\n"
               "set ylabel 'speedup (baseline time / FAST time)'\nset logscale y 2\n"
               "plot %s, 1 with lines dt 2 lc rgb 'black' title 'parity'" % (preset, plots))
    for preset, pts in ratio_lines.items():
        write_dat(os.path.join(p.data, "ratio_skew_%s.dat" % preset), ["skew", "fast_over_lp"], pts)
    plots = ", ".join("'ratio_skew_%s.dat' using 1:2 with linespoints lw 2 title '%s'" % (pr, pr)
                      for pr in sorted(ratio_lines))
    p.plot("ratio_skew", "set title 'FAST simulated time / LP lower bound vs skew (4x8, 128 MiB per GPU)'\n"
           "set xlabel 'Zipf skew'\nset ylabel 'time / LP bound'\nset yrange [0.95:*]\n"
           "plot %s, 1 with lines dt 2 lc rgb 'black' title 'bound'" % plots)


def fig_size(p, rows):
    for preset, rs in sorted(by_preset(rows).items()):
        v = defaultdict(dict)
        for r in rs:
            v[int(r["size_bytes"])][r["algo"]] = num(r["algbw_GBps"])
        algos = [a for a in ALGOS if any(a in x for x in v.values())]
        out = [[s / 2 ** 20] + [v[s].get(a, float("nan")) for a in algos] for s in sorted(v)]
        write_dat(os.path.join(p.data, "algbw_size_%s.dat" % preset), ["MiB"] + algos, out)
        plots = ", ".join("'algbw_size_%s.dat' using 1:%d with linespoints lw 2 title '%s'"
                          % (preset, i + 2, a) for i, a in enumerate(algos))
        p.plot("algbw_size_%s" % preset,
               "set title 'Algorithm bandwidth vs per-GPU size (%s, 4x8, Zipf 0.8)'\n"
               "set xlabel 'mean bytes per GPU (MiB)'\nset ylabel 'algbw (GB/s)'\n"
               "set logscale x 2\nplot %s" % (preset, plots))


def fig_scale(p, rows):
    groups = defaultdict(lambda: defaultdict(list))
    for r in rows:
        if r["algo"] != "fast":
            continue
        groups["%s_skew%g" % (r["topo"], skew_of(r["traffic"]))][int(r["ngpus"])].append(num(r["ratio"]))
    names = sorted(groups)
    for g in names:
        write_dat(os.path.join(p.data, "ratio_gpus_%s.dat" % g), ["gpus", "fast_over_lp"],
                  [(n, mean(v)) for n, v in sorted(groups[g].items())])
    plots = ", ".join("'ratio_gpus_%s.dat' using 1:2 with linespoints lw 2 title '%s'"
                      % (g, g.replace("_skew", " Zipf ")) for g in names)
    p.plot("ratio_gpus", "set title 'FAST simulated time / LP lower bound vs cluster size (64 MiB per GPU)'\n"
           "set xlabel 'GPUs'\nset ylabel 'time / LP bound'\nset logscale x 2\nset yrange [0.95:*]\n"
           "plot %s, 1 with lines dt 2 lc rgb 'black' title 'bound'" % plots)


def fig_synth(p, rows):
    v = defaultdict(list)
    for r in rows:
        v[int(r["ngpus"])].append(num(r["synth_us"]))
    write_dat(os.path.join(p.data, "synth_gpus.dat"), ["gpus", "mean_us", "min_us", "max_us"],
              [(n, mean(x), min(x), max(x)) for n, x in sorted(v.items())])
    write_dat(os.path.join(p.data, "synth_paper.dat"), ["gpus", "us"], PAPER_SYNTH)
    p.plot("synth_gpus", "set title 'FAST synthesis time vs GPUs (Zipf 0.8, 8 GPUs per server)'\n"
           "set key inside left top\nset xlabel 'GPUs'\nset ylabel 'synthesis time (us)'\nset logscale xy\n"
           "plot 'synth_gpus.dat' using 1:2:3:4 with yerrorlines lw 2 title 'this implementation (mean, min..max)', "
           "'synth_paper.dat' using 1:2 with points pt 7 ps 1.6 title 'FAST paper (25 us at 32 .. 77 ms at 320 GPUs)'")


def fig_moe(p, rows):
    for preset, rs in sorted(by_preset(rows).items()):
        v = defaultdict(dict)
        bound = {}
        for r in rs:
            m = re.match(r"layer(\d+)", r["label"])
            layer = int(m.group(1)) if m else int(r["matrix"])
            v[layer][r["algo"]] = num(r["time_us"]) / 1e3
            bound[layer] = num(r["bound_us"]) / 1e3
        algos = [a for a in ALGOS if any(a in x for x in v.values())]
        out = [[l] + [v[l].get(a, float("nan")) for a in algos] + [bound[l]] for l in sorted(v)]
        write_dat(os.path.join(p.data, "moe_%s.dat" % preset), ["layer"] + algos + ["lp_bound"], out)
        plots = ", ".join("'moe_%s.dat' using 1:%d with linespoints lw 2 title '%s'"
                          % (preset, i + 2, a) for i, a in enumerate(algos))
        plots += ", 'moe_%s.dat' using 1:%d with lines dt 2 lw 2 lc rgb 'black' title 'LP bound'" % (
            preset, len(algos) + 2)
        p.plot("moe_%s" % preset,
               "set title 'DeepSeek-V2-Lite dispatch per layer (EP32 on %s 4x8)'\n"
               "set xlabel 'MoE layer'\nset ylabel 'time (ms)'\nset logscale y\nplot %s" % (preset, plots))


def main(argv):
    out = argv[1] if len(argv) > 1 else "results"
    p = Plotter(out)
    csvs = {n: load(os.path.join(out, n + ".csv"))
            for n in ("skew", "size", "scale", "scale_full", "synth", "moe")}
    if csvs["skew"]:
        fig_skew(p, csvs["skew"])
    if csvs["size"]:
        fig_size(p, csvs["size"])
    scale = (csvs["scale"] or []) + (csvs["scale_full"] or [])
    if scale:
        fig_scale(p, scale)
    if csvs["synth"]:
        fig_synth(p, csvs["synth"])
    if csvs["moe"]:
        fig_moe(p, csvs["moe"])
    print("figures: %s (png via %s, svg) in %s" % (" ".join(p.made) or "none", p.png, p.figs))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
