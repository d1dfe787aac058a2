#!/usr/bin/env python3
"""Figures from `fast sweep` results CSVs, with gnuplot.

    results_plot.py RESULTS_DIR          the bundled studies (scripts/results.sh)
    results_plot.py CSV... [-o DIR]      any sweep's CSV(s)

Any sweep: the rows of the CSVs (columns: cmd/sweep_case.h; version 4,
version 3 without `time_with_synthesis_s`, version 2 with `ident` or
version 1 without it; times in `_us` or `_s`
columns, GPU counts as gpus_per_server/gpus_total or gpus/ngpus) are
plotted against each parameter that varies among them (topology, servers,
GPUs per server, line rates, traffic pattern and each of its parameters,
size, trace matrix), one series per algorithm (and FAST option set),
averaged over seeds (and over the matrices of generated traffic).  Other
varying parameters split the figures: one figure per (x parameter, value
of the others, metric).  Metrics: simulated time (with the LP bound when
computed), algbw, time / bound, the speedup of FAST over each baseline
(when FAST and a baseline are there), and synthesis time when nothing was
simulated.  Titles and axis labels name the file, the x parameter and
every fixed parameter.  Figures go to DIR/figures/<name>.png and .svg,
their numbers and gnuplot scripts to DIR/data/ (DIR defaults to
<first CSV without .csv>-plots).

The bundled studies: RESULTS_DIR/{skew,size,scale,scale_full,synth,moe}.csv
and tokens.csv (scripts/token_study.sh: figures tokens_<preset>) give the figures that docs/ shows (a missing CSV skips its figures),
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

BASELINES = ["nccl", "pxn", "hier", "spreadout", "fanout"]
ALGOS = ["fast"] + BASELINES
# the FAST paper's synthesis times (us) at 32, 64, 96 and 320 GPUs
PAPER_SYNTH = [(32, 25.0), (64, 221.0), (96, 805.0), (320, 77000.0)]
REQUIRED = ["key", "topo", "servers", "gpus", "ngpus", "up_GBps", "out_GBps", "traffic", "seed",
            "size_bytes", "matrix", "label", "algo", "options", "status", "algbw_GBps", "ratio"]
# columns in seconds; version 1 and 2 files name them in microseconds
TIMES = ["time", "bound", "closed", "synth"]
# version 3's names of the columns this script reads by their version-2 names
RENAMED = {"gpus_per_server": "gpus", "gpus_total": "ngpus", "synthesis_s": "synth_s"}
# one fixed style per series: colour, point type (gnuplot), dash type
STYLES = {
    "fast": ("#9400d3", 7, 1), "nccl": ("#009e73", 6, 2), "pxn": ("#56b4e9", 5, 1),
    "hier": ("#e69f00", 9, 4), "spreadout": ("#c8b400", 13, 5), "fanout": ("#0072b2", 11, 3),
}
EXTRA_STYLES = [("#d55e00", 15, 1), ("#cc79a7", 4, 2), ("#555555", 8, 4), ("#000080", 12, 5)]


class Fail(Exception):
    def __init__(self, code, msg):
        Exception.__init__(self, msg)
        self.code = code


# --- reading ----------------------------------------------------------------

def load(path):
    """Rows (dicts) with status ok of one sweep CSV; times in seconds as
    floats under time_s, bound_s, closed_s, synth_s (NaN when empty)."""
    rows, bad = [], 0
    with open(path, newline="") as f:
        rd = csv.DictReader(f)
        if rd.fieldnames:
            rd.fieldnames = [RENAMED.get(c, c) for c in rd.fieldnames]
        cols = rd.fieldnames or []
        missing = [c for c in REQUIRED if c not in cols]
        for t in TIMES:
            if t + "_s" not in cols and t + "_us" not in cols:
                missing.append(t + "_s")
        if missing:
            raise Fail(3, "%s: not a fast sweep results CSV (no column %s)" % (path, missing[0]))
        for r in rd:
            if r["status"] != "ok":
                bad += 1
                continue
            for t in TIMES:
                r[t + "_s"] = num(r[t + "_s"]) if t + "_s" in r else num(r[t + "_us"]) * 1e-6
            rows.append(r)
    if bad:
        print("results_plot: %s: %d rows with errors ignored" % (path, bad), file=sys.stderr)
    return rows


def load_opt(path):
    return load(path) if os.path.exists(path) else None


def num(v):
    return float(v) if v not in ("", None) else float("nan")


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


# --- parameters -------------------------------------------------------------

def is_trace(r):
    return r["traffic"].startswith("trace:")


def traffic_parts(traffic):
    """'zipf(skew=0.8)' -> ('zipf', {'skew': '0.8'}); 'trace:f.json' -> ('trace f.json', {})."""
    if traffic.startswith("trace:"):
        return "trace " + os.path.basename(traffic[6:]), {}
    m = re.match(r"([^()]*)\((.*)\)$", traffic)
    if not m:
        return traffic, {}
    ps = {}
    for i, kv in enumerate(m.group(2).split("/")):
        k, _, v = kv.partition("=")
        ps[k if v else "arg%d" % i] = v if v else k
    return m.group(1), ps


def as_num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def params(r):
    """The row's parameters (name -> value; numbers as floats) other than
    algorithm and replicate (seed; matrix of generated traffic)."""
    pat, tps = traffic_parts(r["traffic"])
    p = {"topo": r["topo"], "servers": float(r["servers"]), "gpus": float(r["gpus"]),
         "up_GBps": float(r["up_GBps"]), "out_GBps": float(r["out_GBps"]), "pattern": pat}
    for k, v in tps.items():
        p["traffic." + k] = as_num(v) if as_num(v) is not None else v
    if is_trace(r):
        p["matrix"] = float(r["matrix"])
    else:
        p["size"] = float(r["size_bytes"])
    return p


def series_of(r):
    return r["algo"] if r["options"] in ("", "-") else "%s (%s)" % (r["algo"], r["options"])


PNAMES = {"topo": "topology", "servers": "servers", "gpus": "GPUs per server",
          "up_GBps": "scale-up GB/s", "out_GBps": "scale-out GB/s", "pattern": "traffic",
          "size": "mean bytes per GPU", "matrix": "matrix of the trace"}


def pname(k):
    if k.startswith("traffic."):
        return k[8:] if k[8:] != "skew" else "Zipf skew"
    return PNAMES.get(k, k)


def size_unit(vals):
    lo = min(vals) if vals else 1
    for u, d in (("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if lo >= d:
            return u, d
    return "bytes", 1


def human_size(b):
    u, d = size_unit([b])
    return "%g %s" % (b / d, u)


def describe(k, v, fixed):
    """One fixed parameter for a title; fixed: all fixed values (for the shape)."""
    if k == "topo" or k == "pattern":
        return str(v)
    if k == "servers":
        return "%d x %d GPUs" % (v, fixed["gpus"]) if "gpus" in fixed else "%d servers" % v
    if k == "gpus":
        return None if "servers" in fixed else "%d GPUs per server" % v
    if k == "size":
        return "%s per GPU" % human_size(v)
    if k == "matrix":
        return "matrix %d" % v
    if k in ("up_GBps", "out_GBps"):
        return "%s %g" % (pname(k), v)
    return "%s %s" % (pname(k), "%g" % v if isinstance(v, float) else v)


def describe_all(fixed, extra=()):
    """Title line of the fixed parameters; a fixed traffic pattern carries
    its fixed parameters: "zipf (skew 0.8)"."""
    parts = []
    for k in order_all(fixed):
        if k.startswith("traffic.") and "pattern" in fixed:
            continue
        if k == "pattern":
            tps = ["%s %s" % (t[8:], "%g" % fixed[t] if isinstance(fixed[t], float) else fixed[t])
                   for t in order_all(fixed) if t.startswith("traffic.")]
            parts.append("%s%s" % (fixed[k], " (%s)" % ", ".join(tps) if tps else ""))
            continue
        d = describe(k, fixed[k], fixed)
        if d:
            parts.append(d)
    return ", ".join(parts + [e for e in extra if e])


def order_all(keys):
    """Parameter names in title order: topology, shape, traffic, size, rates."""
    first = ["topo", "servers", "gpus", "pattern"]
    tr = sorted(k for k in keys if k.startswith("traffic."))
    rest = ["size", "matrix", "up_GBps", "out_GBps"]
    return [k for k in first + tr + rest if k in keys] + sorted(
        k for k in keys if k not in first + tr + rest)


def constant_line_rates(fixed):
    """Line rates are the preset's unless they vary: leave them out of
    titles when fixed (the topology names them)."""
    for k in ("up_GBps", "out_GBps"):
        fixed.pop(k, None)


def replicates_note(rows, keyf, grs):
    """'mean of K seeds' (or matrices) when points average K > 1 cases;
    keyf(row, params) names the point a row belongs to."""
    n = defaultdict(set)
    for r, q in grs:
        n[keyf(r, q)].add((r["seed"], r["matrix"]))
    k = max((len(v) for v in n.values()), default=1)
    if k <= 1:
        return ""
    seeds = max((len({s for s, _ in v}) for v in n.values()), default=1)
    mats = max((len({m for _, m in v}) for v in n.values()), default=1)
    what = "seeds" if seeds == k else "matrices" if mats == k else "matrices and seeds"
    return "mean of %d %s" % (k, what)


# --- drawing ----------------------------------------------------------------

def axis_range(vals, parity=False, zero=False):
    """(lo, hi, log) for data vals: log when positive and spanning >= 10x;
    a margin on both sides; with parity, 1 lies inside with a margin; with
    zero, the axis is linear from 0 (bandwidths)."""
    vals = [v for v in vals if v is not None and not math.isnan(v)]
    if parity:
        vals = vals + [1.0]
    if not vals:
        return None
    lo, hi = min(vals), max(vals)
    log = lo > 0 and hi / lo >= 10 and not zero
    if log:
        f = (hi / lo) ** 0.06
        return lo / f, hi * f, True
    pad = (hi - lo) * 0.08 if hi > lo else (abs(hi) * 0.05 or 1.0)
    lo2 = 0.0 if zero and lo >= 0 else lo - pad
    if lo >= 0 and lo2 < 0 and not parity:
        lo2 = 0.0
    return lo2, hi + pad, False


def yaxis_cmds(vals, parity=False, zero=False):
    r = axis_range(vals, parity, zero)
    if not r:
        return ""
    lo, hi, log = r
    return ("set logscale y\n" if log else "") + "set yrange [%.6g:%.6g]\n" % (lo, hi)


def coinciding(series):
    """Sets of series indices whose y values agree within 3% at every
    common x (they would hide each other)."""
    n = len(series)
    parent = list(range(n))

    def find(i):
        while parent[i] != i:
            i = parent[i]
        return i
    for i in range(n):
        for j in range(i + 1, n):
            a, b = series[i], series[j]
            xs = [x for x in a if x in b and not math.isnan(a[x]) and not math.isnan(b[x])]
            if xs and all(abs(a[x] - b[x]) <= 0.03 * max(abs(a[x]), abs(b[x]), 1e-300) for x in xs):
                parent[find(j)] = find(i)
    groups = defaultdict(list)
    for i in range(n):
        groups[find(i)].append(i)
    return [g for g in groups.values() if len(g) > 1]


def style_of(name, i):
    """An algorithm's own style; a variant ("fast (stages=exact)") or an
    unknown series takes one of the others, by its position i."""
    return STYLES.get(name, EXTRA_STYLES[i % len(EXTRA_STYLES)])


def series_plots(datfile, names, cols, ys, discrete, how="linespoints"):
    """gnuplot plot clauses, one per series: fixed colour, point type and
    dash per algorithm; a series that coincides with earlier ones is drawn
    thinner, dashed, with open larger points on top of them (and, on a
    discrete x axis, offset by a fraction of a step) so none hides."""
    rank = {}
    for g in coinciding(ys):
        for k, i in enumerate(sorted(g)):
            rank[i] = (k, len(g))
    out = []
    for i, (name, col) in enumerate(zip(names, cols)):
        colour, pt, dt = style_of(name, i)
        k, n = rank.get(i, (0, 1))
        lw = 2 if n == 1 else max(1.2, 4.5 - 1.6 * k)
        ps = 1.2 if n == 1 else 1.2 + 0.5 * k
        if n > 1 and k > 0:
            dt = 2 + k
            pt = pt - 1 if pt % 2 == 1 else pt  # open variant of a filled point
        xexpr = "1" if not discrete or n == 1 else "($1%+.3f)" % (0.16 * (k - (n - 1) / 2))
        if how == "points":
            lw, ps = 2, ps + 0.6
        out.append((k, "'%s' using %s:%d with %s lw %.1f dt %d pt %d ps %.1f lc rgb '%s' title '%s'"
                    % (datfile, xexpr, col, how, lw, dt, pt, ps, colour, name.replace("'", ""))))
    # coinciding series: the thick first ones drawn first, the others over them
    return [c for _, c in sorted(out, key=lambda kc: kc[0])]


def parity_clause(title):
    return "1 with lines dt 2 lw 1.5 lc rgb 'black' title '%s'" % title


class Plotter:
    def __init__(self, out):
        if not shutil.which("gnuplot"):
            raise Fail(4, "gnuplot not found (install it: apt-get install gnuplot-nox)")
        self.data = os.path.join(out, "data")
        self.figs = os.path.join(out, "figures")
        os.makedirs(self.data, exist_ok=True)
        os.makedirs(self.figs, exist_ok=True)
        terms = subprocess.run(["gnuplot", "-e", "set terminal"], capture_output=True,
                               text=True).stderr + ""
        self.png = "pngcairo" if "pngcairo" in terms else "png"
        self.made = []

    def plot(self, name, title, body):
        """title: one or two lines; body: gnuplot commands after terminal,
        output and title (data paths relative to data/)."""
        for ext, term in (("png", "%s size 960,600" % self.png),
                          ("svg", "svg size 960,600 dynamic")):
            out = os.path.join(self.figs, name + "." + ext)
            script = ("set terminal %s\nset output '%s'\nset datafile missing '?'\n"
                      "set termoption noenhanced\nset key outside right top\nset grid\ncd '%s'\n"
                      "set title \"%s\"\n%s\n"
                      % (term, os.path.abspath(out), self.data,
                         title.replace("\\", "").replace('"', "'").replace("\n", "\\n"), body))
            with open(os.path.join(self.data, name + ".gp"), "w") as f:
                f.write(script.replace(os.path.abspath(out), name + "." + ext)
                        .replace("cd '%s'" % self.data, "cd '.'"))
            r = subprocess.run(["gnuplot"], input=script, text=True, capture_output=True)
            if r.returncode != 0:
                raise Fail(4, "gnuplot failed on %s:\n%s" % (name, r.stderr))
        self.made.append(name)


def by_topo(rows):
    d = defaultdict(list)
    for r in rows:
        d[r["topo"]].append(r)
    return d


def fixed_params(rows, drop=()):
    """Parameters with one value over rows (name -> value), less drop."""
    vals = defaultdict(set)
    for r in rows:
        for k, v in params(r).items():
            vals[k].add(v)
    fixed = {k: next(iter(v)) for k, v in vals.items() if len(v) == 1 and k not in drop}
    constant_line_rates(fixed)
    return fixed


# --- any sweep --------------------------------------------------------------

METRICS = [
    # name, title, y label, value of a row (None: not plotted), parity
    ("time", "simulated time", "time", lambda r: r["time_s"], None),
    ("algbw", "algorithm bandwidth", "algbw (GB/s)", lambda r: num(r["algbw_GBps"]), None),
    ("ratio", "time / lower bound", "time / bound (LP when computed)", lambda r: num(r["ratio"]),
     "bound"),
    ("synth", "plan synthesis time", "synthesis time", lambda r: r["synth_s"], None),
]


def time_unit(vals):
    vals = [v for v in vals if not math.isnan(v)]
    med = sorted(vals)[len(vals) // 2] if vals else 1
    for u, d in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if med >= d:
            return u, d
    return "us", 1e-6


def pslug(k):
    """A parameter's name in file names: 'skew' for 'traffic.skew'."""
    return slug(k[8:] if k and k.startswith("traffic.") else (k or "algorithm"))


def slug(s):
    return re.sub(r"[^A-Za-z0-9.+-]+", "_", str(s)).strip("_")


def xvalue(k, v, cats):
    return cats[k].index(v) if k in cats else v


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
            plots.append("'%s' using 1:%d with lines dt 2 lw 2 lc rgb 'black' title 'LP bound'"
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
    """Speedup of FAST over each baseline vs skew; FAST/LP vs skew."""
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
        write_dat(os.path.join(p.data, "ratio_skew_%s.dat" % preset), ["skew", "fast_over_lp"], pts)
    names = sorted(ratio_lines)
    plots = series_plots_named(["ratio_skew_%s.dat" % pr for pr in names], names,
                               [dict(ratio_lines[pr]) for pr in names])
    p.plot("ratio_skew", titled("FAST simulated time / LP lower bound vs Zipf skew",
                                [r for r in rows if r["algo"] == "fast"], ("topo", "traffic.skew"),
                                [seeds_note(rows)]),
           "set xlabel 'Zipf skew'\nset ylabel 'time / LP bound'\nset xrange [-0.04:0.94]\n%s"
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
        write_dat(os.path.join(p.data, "ratio_gpus_%s.dat" % g), ["gpus", "fast_over_lp"],
                  sorted(pts[g].items()))
    plots = series_plots_named(["ratio_gpus_%s.dat" % g for g in names],
                               [g.replace("_skew", " Zipf ") for g in names], [pts[g] for g in names])
    fr = [r for r in rows if r["algo"] == "fast"]
    p.plot("ratio_gpus", titled("FAST simulated time / LP lower bound vs cluster size", fr,
                                ("topo", "servers", "traffic.skew"), [seeds_note(fr)]),
           "set xlabel 'GPUs'\nset ylabel 'time / LP bound'\nset logscale x 2\n%s"
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
        plots.append("'moe_%s.dat' using 1:%d with lines dt 2 lw 2 lc rgb 'black' title 'LP bound'"
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
    """scripts/token_study.sh's tokens.csv: per preset, the total time / token
    LP bound of each schedule over the 26 layers of each (EP, phase): the
    per-kind total rows `fast compare` wrote."""
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
               "Token traffic (DeepSeek-V2-Lite, 26 layers): total time / token LP bound\n"
               "%s, 8 GPUs per server; fast, hier: per-server dedup; the others per-GPU bytes"
               % preset,
               "set bmargin 4\nset ylabel 'time / token LP bound'\n"
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
    tokens = os.path.join(out, "tokens.csv")
    if os.path.exists(tokens):
        with open(tokens, newline="") as f:
            fig_tokens(p, list(csv.DictReader(f)))
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
