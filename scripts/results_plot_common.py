"""results_plot.py's reading and drawing helpers: loading sweep results
CSVs of every version, naming parameters and values, the gnuplot series,
styles and axes every figure shares.  The figures themselves, and the
command line, are in results_plot.py.
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

    def plot(self, name, title, body, size=(960, 600)):
        """title: one or two lines; body: gnuplot commands after terminal,
        output and title (data paths relative to data/); size in pixels."""
        for ext, term in (("png", "%s size %d,%d" % ((self.png,) + size)),
                          ("svg", "svg size %d,%d dynamic" % size)):
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
    ("ratio", "time / lower bound", "time / bound", lambda r: num(r["ratio"]),
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


