#!/usr/bin/env python3
"""Figures from `fast sweep` results CSVs, with gnuplot.

    results_plot.py RESULTS_DIR          the bundled studies (scripts/results.sh)
    results_plot.py CSV... [-o DIR]      any sweep's CSV(s)

Any sweep: the rows of the CSVs (columns: cmd/sweep_case.h; version 5,
version 4 with bound_s the LP and no lp_s/latency_s, version 3 without `time_with_synthesis_s`, version 2 with `ident` or
version 1 without it; times in `_us` or `_s`
columns, GPU counts as gpus_per_server/gpus_total or gpus/ngpus) are
plotted against each parameter that varies among them (topology, servers,
GPUs per server, line rates, traffic pattern and each of its parameters,
size, trace matrix), one series per algorithm (and FAST option set),
averaged over seeds (and over the matrices of generated traffic).  Other
varying parameters split the figures: one figure per (x parameter, value
of the others, metric).  Metrics: simulated time (with the lower bound
when computed: from version 5 the LP plus the latency floor, before it the
LP), algbw, time / bound, the speedup of FAST over each baseline (when FAST and a baseline are there), and synthesis time when nothing was
simulated.  Titles and axis labels name the file, the x parameter and
every fixed parameter.  Figures go to DIR/figures/<name>.png and .svg,
their numbers and gnuplot scripts to DIR/data/ (DIR defaults to
<first CSV without .csv>-plots).

The bundled studies: RESULTS_DIR/{skew,size,scale,scale_full,synth,moe}.csv
tokens.csv (scripts/token_study.sh: figures tokens_<preset>) and
placement.csv (scripts/placement_study.sh, results_plot_placement.py:
figures placement_<preset>) give the figures that docs/ shows (a missing
CSV skips its figures),
in RESULTS_DIR/figures and RESULTS_DIR/data, with the same titles, axes
and styles.

Rows whose status is not ok are ignored (and counted on stderr).  Exit
status: 0; 2 usage; 3 a file that is not a sweep results CSV; 4 gnuplot
missing or failing.
"""
import csv
import math
import os
import re
import shutil
import subprocess
import sys
from collections import defaultdict

from results_plot_common import (BASELINES, ALGOS, PAPER_SYNTH, REQUIRED, TIMES, RENAMED,
    STYLES, EXTRA_STYLES, Fail, load, load_opt, num, mean, fmt, write_dat, is_trace,
    traffic_parts, as_num, params, series_of, PNAMES, pname, size_unit, human_size, describe,
    describe_all, order_all, constant_line_rates, replicates_note, axis_range, yaxis_cmds,
    coinciding, style_of, series_plots, parity_clause, Plotter, by_topo, fixed_params,
    METRICS, time_unit, pslug, slug, xvalue)  # noqa: F401
from results_plot_placement import fig_placement

MAX_SPLIT = 8  # at most this many figures per (x parameter, metric)


def plot_any(p, rows, stem):
    """All figures of one data set; returns their count.  x: each numeric
    parameter that varies (else each categorical one); the other varying
    parameters split the figures, except a trace's matrix, which is
    averaged over like the seeds when it is not the x axis."""
    allp = [params(r) for r in rows]
    vals = defaultdict(set)
    for q in allp:
        for k, v in q.items():
            vals[k].add(v)
    varying = [k for k in order_all(vals) if len(vals[k]) > 1]
    # line rates that follow from the topology are not a parameter of their own
    for k in ("up_GBps", "out_GBps"):
        by = defaultdict(set)
        for q in allp:
            by[q["topo"]].add(q[k])
        if k in varying and all(len(v) == 1 for v in by.values()):
            varying.remove(k)
    fixed = {k: next(iter(v)) for k, v in vals.items() if len(v) == 1}
    constant_line_rates(fixed)
    cats = {k: sorted(vals[k], key=str) for k in varying
            if any(not isinstance(v, float) for v in vals[k])}
    series = [s for s in ALGOS if any(series_of(r) == s for r in rows)]
    series += sorted({series_of(r) for r in rows} - set(series))
    simulated = any(not math.isnan(r["time_s"]) for r in rows)
    count = 0
    xs_list = [k for k in varying if k not in cats] or varying or [None]
    for xk in xs_list:
        others = [k for k in varying if k != xk and k != "matrix"]
        groups = defaultdict(list)
        for r, q in zip(rows, allp):
            groups[tuple(q[k] for k in others)].append((r, q))
        if len(groups) > MAX_SPLIT:
            print("results_plot: no figures vs %s: they would be %d per metric (one per value of %s)"
                  % (pname(xk), len(groups), ", ".join(pname(k) for k in others)), file=sys.stderr)
            continue
        for gkey, grs in sorted(groups.items(), key=lambda kv: str(kv[0])):
            gfix = dict(fixed)
            gfix.update(zip(others, gkey))
            note = replicates_note([r for r, _ in grs],
                                   lambda r, q: (series_of(r), q.get(xk)), grs)
            count += plot_group(p, stem, xk, gfix, others, grs, series, simulated, cats, note)
    return count


def plot_group(p, stem, xk, gfix, others, grs, series, simulated, cats, note):
    """The figures of one x parameter at one value of the others."""
    # x of a row: the parameter's value (a category's index); without one,
    # the algorithm's own position
    xof = ((lambda r, q: xvalue(xk, q[xk], cats)) if xk
           else (lambda r, q: float(series.index(series_of(r)))))
    tag = "-".join(slug(describe(k, gfix[k], gfix) or gfix[k]) for k in others)
    made = 0
    metrics = [m for m in METRICS if (m[0] != "synth") != (not simulated)]
    fast_there = any(r["algo"] == "fast" for r, _ in grs)
    base_there = [b for b in series if b != "fast" and b.split(" ")[0] in BASELINES]
    if simulated and fast_there and base_there:
        metrics.append(("speedup", "FAST speedup over each baseline",
                        "speedup (baseline time / FAST time)", None, "parity"))
    xlabel, xscale, xdiv = x_axis(xk, grs, cats, gfix, series)
    discrete = xk is None or xk in cats or xk == "matrix"
    for mname, mtitle, ylabel, val, parity in metrics:
        if mname == "speedup":
            names, ys = speedup_series(grs, xof, series)
        else:
            names, ys = [], []
            for s in series:
                d = defaultdict(list)
                for r, q in grs:
                    if series_of(r) == s:
                        d[xof(r, q)].append(val(r))
                pts = {x: mean(v) for x, v in d.items()}
                if pts and not all(math.isnan(v) for v in pts.values()):
                    names.append(s)
                    ys.append(pts)
        if not names:
            continue
        extra_bound = None
        div, yl = 1.0, ylabel
        if mname in ("time", "synth"):
            u, div = time_unit([v for y in ys for v in y.values()])
            yl = "%s (%s)" % (ylabel, u)
            if mname == "time":
                b = defaultdict(list)
                for r, q in grs:
                    b[xof(r, q)].append(r["bound_s"])
                bpts = {x: mean(v) for x, v in b.items()}
                if not all(math.isnan(v) for v in bpts.values()):
                    extra_bound = bpts
        xsall = sorted({x for y in ys for x in y})
        cols = list(range(2, 2 + len(names)))
        table = [[x / xdiv] + [y.get(x, float("nan")) / div for y in ys]
                 + ([extra_bound.get(x, float("nan")) / div] if extra_bound else []) for x in xsall]
        name = "%s-%s-vs-%s%s" % (stem, mname, pslug(xk), "-" + tag if tag else "")
        dat = name + ".dat"
        write_dat(os.path.join(p.data, dat), [pslug(xk)] + [slug(n) for n in names]
                  + (["lp_bound"] if extra_bound else []), table)
        plots = series_plots(dat, names, cols, [{x: v / div for x, v in y.items()} for y in ys],
                             discrete, "points" if xk is None or xk in cats else "linespoints")
        if extra_bound:
            plots.append("'%s' using 1:%d with lines dt 2 lw 2 lc rgb 'black' title 'lower bound'"
                         % (dat, len(names) + 2))
        if parity:
            plots.append(parity_clause(parity))
        yvals = [v / div for y in ys for v in y.values()] + (
            [v / div for v in extra_bound.values()] if extra_bound else [])
        title = "%s: %s vs %s\n%s" % (stem, mtitle, pname(xk) if xk else "algorithm",
                                      describe_all(gfix, [note]))
        body = "set xlabel '%s'\nset ylabel '%s'\n%s%s" % (
            xlabel, yl, xscale, yaxis_cmds(yvals, parity is not None, zero=mname == "algbw"))
        body += "plot " + ", ".join(plots)
        p.plot(name, title, body)
        made += 1
    return made


def x_axis(xk, grs, cats, gfix, series):
    """(label, gnuplot x settings, divisor) for x parameter xk."""
    if xk is None:
        tics = ", ".join("'%s' %d" % (s.replace("'", ""), i) for i, s in enumerate(series))
        return "algorithm", "set xrange [-0.5:%g]\nset xtics (%s)\n" % (len(series) - 0.5, tics), 1.0
    if xk in cats:
        tics = ", ".join("'%s' %d" % (str(v).replace("'", ""), i) for i, v in enumerate(cats[xk]))
        return pname(xk), "set xrange [-0.5:%g]\nset xtics (%s)\n" % (len(cats[xk]) - 0.5, tics), 1.0
    xs = sorted({q[xk] for _, q in grs})
    d = float(size_unit(xs)[1]) if xk == "size" else 1.0
    # the values themselves as tics when there are few
    tics = "set xtics (%s)\n" % ", ".join("%g" % (x / d) for x in xs) if len(xs) <= 12 else ""
    if xk == "size":
        log = xs[0] > 0 and xs[-1] / xs[0] >= 8
        return ("mean bytes per GPU (%s)" % size_unit(xs)[0],
                ("set logscale x 2\n" if log else "") + tics, d)
    label = pname(xk)
    if xk == "servers" and "gpus" in gfix:
        label = "servers (x %d GPUs)" % gfix["gpus"]
    if xk == "matrix":
        label = "matrix index in the trace"
    log = xs[0] > 0 and xs[-1] / xs[0] >= 8 and xk != "matrix"
    if log:
        return label, "set logscale x 2\n" + tics, 1.0
    span = (xs[-1] - xs[0]) or 1.0
    return label, "set xrange [%.6g:%.6g]\n%s" % (xs[0] - 0.04 * span, xs[-1] + 0.04 * span,
                                                  tics if xk != "matrix" else ""), 1.0


def speedup_series(grs, xof, series):
    """Per baseline series: mean over replicates of its time / FAST's."""
    fast = {}
    for r, q in grs:
        if series_of(r) == "fast":
            fast[(r["key"].split(";algo=")[0])] = r["time_s"]
    names, ys = [], []
    for s in series:
        if s == "fast" or s.split(" ")[0] not in BASELINES:
            continue
        d = defaultdict(list)
        for r, q in grs:
            f = fast.get(r["key"].split(";algo=")[0])
            if series_of(r) == s and f and f > 0:
                d[xof(r, q)].append(r["time_s"] / f)
        if d:
            names.append(s)
            ys.append({x: mean(v) for x, v in d.items()})
    return names, ys


# --- the bundled studies ----------------------------------------------------

def skew_of(traffic):
    m = re.search(r"skew=([0-9.eE+-]+)", traffic)
    return float(m.group(1)) if m else 0.0


def titled(head, rows, drop, extra=()):
    return "%s\n%s" % (head, describe_all(fixed_params(rows, drop), extra))


def seeds_note(rows):
    n = len({r["seed"] for r in rows})
    return "mean of %d seeds" % n if n > 1 else ""


def fig_skew(p, rows):
    """Speedup of FAST over each baseline vs skew; FAST / bound vs skew."""
    ratio_lines = {}
    for preset, rs in sorted(by_topo(rows).items()):
        t = defaultdict(dict)  # (skew, seed) -> algo -> time
        for r in rs:
            t[(skew_of(r["traffic"]), r["seed"])][r["algo"]] = r["time_s"]
        lp = defaultdict(list)
        for r in rs:
            if r["algo"] == "fast":
                lp[skew_of(r["traffic"])].append(num(r["ratio"]))
        skews = sorted({k[0] for k in t})
        ys = []
        for b in BASELINES:
            ys.append({s: mean([v[b] / v["fast"] for (sk, _), v in t.items()
                                if sk == s and b in v and "fast" in v and v["fast"] > 0])
                       for s in skews})
        write_dat(os.path.join(p.data, "speedup_skew_%s.dat" % preset), ["skew"] + BASELINES,
                  [[s] + [y[s] for y in ys] for s in skews])
        ratio_lines[preset] = [(s, mean(lp[s])) for s in skews]
        plots = series_plots("speedup_skew_%s.dat" % preset, BASELINES,
                             range(2, 2 + len(BASELINES)), ys, False)
        p.plot("speedup_skew_%s" % preset,
               titled("FAST speedup over each baseline vs Zipf skew", rs, ("traffic.skew",),
                      [seeds_note(rs)]),
               "set xlabel 'Zipf skew of pair sizes (0 = uniform random)'\n"
               "set ylabel 'speedup (baseline time / FAST time)'\nset xrange [-0.04:0.94]\n%s"
               "plot %s, %s" % (yaxis_cmds([v for y in ys for v in y.values()], True),
                                ", ".join(plots), parity_clause("parity")))
    for preset, pts in ratio_lines.items():
        write_dat(os.path.join(p.data, "ratio_skew_%s.dat" % preset), ["skew", "fast_over_bound"], pts)
    names = sorted(ratio_lines)
    plots = series_plots_named(["ratio_skew_%s.dat" % pr for pr in names], names,
                               [dict(ratio_lines[pr]) for pr in names])
    p.plot("ratio_skew", titled("FAST simulated time / lower bound vs Zipf skew",
                                [r for r in rows if r["algo"] == "fast"], ("topo", "traffic.skew"),
                                [seeds_note(rows)]),
           "set xlabel 'Zipf skew'\nset ylabel 'time / bound (LP + latency floor)'\nset xrange [-0.04:0.94]\n%s"
           "plot %s, %s" % (yaxis_cmds([v for pr in names for _, v in ratio_lines[pr]], True),
                            ", ".join(plots), parity_clause("bound")))


def series_plots_named(dats, names, ys):
    """Series from one .dat each (column 2), styled like series_plots."""
    out = []
    for i, (dat, name) in enumerate(zip(dats, names)):
        c = series_plots(dat, [name], [2], [ys[i]], False)[0]
        colour = EXTRA_STYLES[i % len(EXTRA_STYLES)][0] if name not in STYLES else None
        if colour:
            c = re.sub(r"lc rgb '[^']*'", "lc rgb '%s'" % colour, c)
            c = re.sub(r" pt \d+", " pt %d" % (5 + 2 * i), c)
        out.append(c)
    return out


def fig_size(p, rows):
    for preset, rs in sorted(by_topo(rows).items()):
        v = defaultdict(dict)
        for r in rs:
            v[int(r["size_bytes"])][r["algo"]] = num(r["algbw_GBps"])
        algos = [a for a in ALGOS if any(a in x for x in v.values())]
        ys = [{s / 2 ** 20: v[s].get(a, float("nan")) for s in v} for a in algos]
        out = [[s / 2 ** 20] + [v[s].get(a, float("nan")) for a in algos] for s in sorted(v)]
        write_dat(os.path.join(p.data, "algbw_size_%s.dat" % preset), ["MiB"] + algos, out)
        plots = series_plots("algbw_size_%s.dat" % preset, algos, range(2, 2 + len(algos)), ys, False)
        p.plot("algbw_size_%s" % preset,
               titled("Algorithm bandwidth vs per-GPU size", rs, ("size",), [seeds_note(rs)]),
               "set xlabel 'mean bytes per GPU (MiB)'\nset ylabel 'algbw (GB/s)'\n"
               "set logscale x 2\n%splot %s" % (yaxis_cmds([x for y in ys for x in y.values()], zero=True),
                                                ", ".join(plots)))


def fig_scale(p, rows):
    groups = defaultdict(lambda: defaultdict(list))
    for r in rows:
        if r["algo"] != "fast":
            continue
        groups["%s_skew%g" % (r["topo"], skew_of(r["traffic"]))][int(r["ngpus"])].append(num(r["ratio"]))
    names = sorted(groups)
    pts = {g: {n: mean(v) for n, v in sorted(groups[g].items())} for g in names}
    for g in names:
        write_dat(os.path.join(p.data, "ratio_gpus_%s.dat" % g), ["gpus", "fast_over_bound"],
                  sorted(pts[g].items()))
    plots = series_plots_named(["ratio_gpus_%s.dat" % g for g in names],
                               [g.replace("_skew", " Zipf ") for g in names], [pts[g] for g in names])
    fr = [r for r in rows if r["algo"] == "fast"]
    p.plot("ratio_gpus", titled("FAST simulated time / lower bound vs cluster size", fr,
                                ("topo", "servers", "traffic.skew"), [seeds_note(fr)]),
           "set xlabel 'GPUs'\nset ylabel 'time / bound (LP + latency floor)'\nset logscale x 2\n%s"
           "plot %s, %s" % (yaxis_cmds([v for g in names for v in pts[g].values()], True),
                            ", ".join(plots), parity_clause("bound")))


def fig_synth(p, rows):
    v = defaultdict(list)
    for r in rows:
        v[int(r["ngpus"])].append(r["synth_s"] * 1e6)
    write_dat(os.path.join(p.data, "synth_gpus.dat"), ["gpus", "mean_us", "min_us", "max_us"],
              [(n, mean(x), min(x), max(x)) for n, x in sorted(v.items())])
    write_dat(os.path.join(p.data, "synth_paper.dat"), ["gpus", "us"], PAPER_SYNTH)
    p.plot("synth_gpus", titled("FAST synthesis time vs GPUs", rows, ("servers",),
                                ["%d seeds" % len({r["seed"] for r in rows})]),
           "set key inside left top\nset xlabel 'GPUs'\nset ylabel 'synthesis time (us)'\nset logscale xy\n"
           "set xrange [%g:%g]\n"
           "plot 'synth_gpus.dat' using 1:2:3:4 with yerrorlines lw 2 pt 7 lc rgb '#9400d3' "
           "title 'this implementation (mean, min..max)', "
           "'synth_paper.dat' using 1:2 with points pt 5 ps 1.6 lc rgb '#e69f00' "
           "title 'FAST paper (25 us at 32 .. 77 ms at 320 GPUs)'" % (min(v) / 1.3, max(v) * 1.3))


def fig_moe(p, rows):
    for preset, rs in sorted(by_topo(rows).items()):
        v = defaultdict(dict)
        bound = {}
        for r in rs:
            m = re.match(r"layer(\d+)", r["label"])
            layer = int(m.group(1)) if m else int(r["matrix"])
            v[layer][r["algo"]] = r["time_s"] * 1e6
            bound[layer] = r["bound_s"] * 1e6
        algos = [a for a in ALGOS if any(a in x for x in v.values())]
        ys = [{l: v[l].get(a, float("nan")) for l in v} for a in algos]
        out = [[l] + [v[l].get(a, float("nan")) for a in algos] + [bound[l]] for l in sorted(v)]
        write_dat(os.path.join(p.data, "moe_%s.dat" % preset), ["layer"] + algos + ["lp_bound"], out)
        plots = series_plots("moe_%s.dat" % preset, algos, range(2, 2 + len(algos)), ys, True)
        plots.append("'moe_%s.dat' using 1:%d with lines dt 2 lw 2 lc rgb 'black' title 'lower bound'"
                     % (preset, len(algos) + 2))
        kinds = sorted({r["label"].split("/")[-1] for r in rs})
        layers = sorted(v)
        p.plot("moe_%s" % preset,
               titled("Time per MoE layer (%s matrices, layers %d-%d)" % ("/".join(kinds), layers[0],
                                                                          layers[-1]),
                      rs, ("matrix",)),
               "set xlabel 'MoE layer'\nset ylabel 'time (us)'\nset xrange [%g:%g]\n%splot %s"
               % (layers[0] - 0.7, layers[-1] + 0.7,
                  yaxis_cmds([x for y in ys for x in y.values()] + list(bound.values())),
                  ", ".join(plots)))


TOKEN_ALGOS = ["fanout", "nccl", "pxn", "hier", "fast:dedup=gpu", "fast"]


def fig_tokens(p, rows):
    """scripts/token_study.sh's tokens.csv: per preset, the total time /
    lower bound (token LP + latency floor) of each schedule over the 26
    layers of each (EP, phase): the per-kind total rows `fast compare`
    wrote."""
    for preset in sorted({r["preset"] for r in rows}):
        tot = {(int(r["ep"]), r["label"], r["algo"]): float(r["ratio"]) for r in rows
               if r["preset"] == preset and r["matrix"] == "total" and r["label"] != "total"}
        cells = sorted({(ep, ph) for ep, ph, _ in tot}, key=lambda c: (c[0], c[1] != "dispatch"))
        algos = [a for a in TOKEN_ALGOS if any(k[2] == a for k in tot)]
        ys = [{i + 1: tot.get(c + (a,), float("nan")) for i, c in enumerate(cells)} for a in algos]
        write_dat(os.path.join(p.data, "tokens_%s.dat" % preset), ["cell"] + algos + ["name"],
                  [[i + 1] + [y[i + 1] for y in ys] + ["EP%d_%s" % c] for i, c in enumerate(cells)])
        # the algorithms' own styles; fast:dedup=gpu takes an extra one
        plots = series_plots("tokens_%s.dat" % preset, algos, range(2, 2 + len(algos)), ys, True,
                             "points")
        tics = ", ".join('"EP%d\\n%s" %d' % (c[0], c[1], i + 1) for i, c in enumerate(cells))
        p.plot("tokens_%s" % preset,
               "Token traffic (DeepSeek-V2-Lite, 26 layers): total time / token lower bound\n"
               "%s, 8 GPUs per server; fast, hier: per-server dedup; the others per-GPU bytes"
               % preset,
               "set bmargin 4\nset ylabel 'time / bound (token LP + latency floor)'\n"
               "set xtics (%s)\nset xrange [0.5:%g]\n%splot %s, %s"
               % (tics, len(cells) + 0.5, yaxis_cmds([v for y in ys for v in y.values()], True),
                  ", ".join(plots), parity_clause("bound")))


def bundled(out):
    p = Plotter(out)
    csvs = {n: load_opt(os.path.join(out, n + ".csv"))
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
    for name, fig in (("tokens", fig_tokens), ("placement", fig_placement)):
        path = os.path.join(out, name + ".csv")
        if os.path.exists(path):
            with open(path, newline="") as f:
                fig(p, list(csv.DictReader(f)))
    return p


def any_sweep(paths, out):
    rows, seen = [], set()
    for path in paths:
        for r in load(path):
            if r["key"] not in seen:
                seen.add(r["key"])
                rows.append(r)
    if not rows:
        raise Fail(3, "%s: no row with status ok" % paths[0])
    stem = "+".join(os.path.splitext(os.path.basename(x))[0] for x in paths)
    p = Plotter(out or os.path.splitext(paths[0])[0] + "-plots")
    plot_any(p, rows, slug(stem))
    return p


USAGE = "usage: results_plot.py RESULTS_DIR | results_plot.py CSV... [-o DIR]"


def main(argv):
    args, out = [], None
    i = 1
    while i < len(argv):
        a = argv[i]
        if a in ("-h", "--help"):
            print(__doc__.strip())
            return 0
        if a == "-o":
            if i + 1 >= len(argv):
                print("results_plot: -o needs a directory\n" + USAGE, file=sys.stderr)
                return 2
            out = argv[i + 1]
            i += 2
            continue
        if a.startswith("-"):
            print("results_plot: unknown option %s\n%s" % (a, USAGE), file=sys.stderr)
            return 2
        args.append(a)
        i += 1
    if not args:
        args = ["results"]
    try:
        if len(args) == 1 and os.path.isdir(args[0]) and out is None:
            p = bundled(args[0])
        else:
            for a in args:
                if not os.path.isfile(a):
                    print("results_plot: %s: no such CSV file\n%s" % (a, USAGE), file=sys.stderr)
                    return 2
            p = any_sweep(args, out)
    except Fail as e:
        print("results_plot: %s" % e, file=sys.stderr)
        return e.code
    except OSError as e:
        print("results_plot: %s" % e, file=sys.stderr)
        return 4
    print("figures: %s (png via %s, svg) in %s" % (" ".join(p.made) or "none", p.png, p.figs))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
