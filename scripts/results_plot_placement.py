"""The placement study's figures (scripts/placement_study.sh's
placement.csv): per preset, one panel per (model, EP) with a group of bars
per expert placement, one bar per schedule: the simulated time of dispatch
plus combine summed over the layers, the lower bound (LP + latency floor)
of that placement's traffic as a black dash across the group, and the
worst layer's compute imbalance written above the group. Drawn with
results_plot_common's Plotter, so the numbers and gnuplot scripts land in
data/ beside the other studies'.
"""
import math
import os

from results_plot_common import STYLES, EXTRA_STYLES, write_dat

# bar order, and auto's colour (not one of the algorithms' own)
PLACEMENT_ALGOS = ["fast", "hier", "fanout", "auto"]
AUTO_STYLE = EXTRA_STYLES[2]
BAR_W = 0.2
TRAFFIC = {"tokens": "token traffic, per-server dedup", "bytes": "byte traffic"}


def variant(r):
    """A placement as the figure names it: eplb:R, with the replica rule
    when it is not the default."""
    return r["placement"] + (" spread" if r["replicas"] == "spread" else "")


def panel_rows(rows):
    """(model, ep) -> rows, in the CSV's order of models and EP sizes."""
    out = {}
    for r in rows:
        out.setdefault((r["model"], int(r["ep"])), []).append(r)
    return out


def panel(p, preset, key, rs, with_key):
    """gnuplot commands of one panel; writes its .dat (one line per placement)."""
    model, ep = key
    groups = []
    for r in rs:
        if variant(r) not in groups:
            groups.append(variant(r))
    algos = [a for a in PLACEMENT_ALGOS if any(r["algo"] == a for r in rs)]
    t = {(variant(r), r["algo"]): float(r["total_s"]) * 1e3 for r in rs}
    bound = {variant(r): float(r["bound_s"]) * 1e3 for r in rs}
    imb = {variant(r): float(r["imbalance_max"]) for r in rs}
    # a linear axis from 0: bars on a log axis would start at an arbitrary floor
    top = max([v for v in t.values() if not math.isnan(v)] + list(bound.values())) * 1.12
    lines = []
    for i, g in enumerate(groups):
        ys = [t.get((g, a), float("nan")) for a in algos]
        lab = max(y for y in ys if not math.isnan(y)) + top * 0.035
        lines.append([i + 1] + ys + [bound[g], imb[g], lab, g.replace(" ", "_")])
    name = "placement_%s_%s_ep%d" % (preset, model, ep)
    write_dat(os.path.join(p.data, name + ".dat"),
              ["group"] + algos + ["bound_ms", "imbalance_max", "label_y", "placement"], lines)
    plots = []
    for k, a in enumerate(algos):
        colour = STYLES.get(a, AUTO_STYLE)[0]
        off = (k - (len(algos) - 1) / 2) * BAR_W
        plots.append("'%s.dat' using ($1%+.2f):%d with boxes fs solid 0.75 lc rgb '%s' title '%s'"
                     % (name, off, k + 2, colour, a))
    nb = len(algos)
    plots.append("'%s.dat' using 1:%d:(%.2f) with xerrorbars pt 0 lw 2.5 lc rgb 'black' "
                 "title 'lower bound'" % (name, nb + 2, BAR_W * nb / 2))
    plots.append("'%s.dat' using 1:%d:(sprintf('%%.2f', $%d)) with labels font ',9' notitle"
                 % (name, nb + 4, nb + 3))
    tics = ", ".join('"%s" %d' % (g.replace(" ", "\\n"), i + 1) for i, g in enumerate(groups))
    return ("set title '%s, EP%d (%d x 8 GPUs), %s'\n"
            "set boxwidth %.2f\nset style fill solid 0.75\nset xtics (%s) font ',9'\n"
            "set xrange [0.4:%g]\nset yrange [0:%.6g]\nset ylabel 'time, ms'\n%s"
            "plot %s\n"
            % (model, ep, ep // 8, TRAFFIC.get(rs[0]["traffic"], rs[0]["traffic"]), BAR_W, tics,
               len(groups) + 0.6, top,
               "set key inside top right font ',9'\n" if with_key else "unset key\n",
               ", ".join(plots)))


def fig_placement(p, rows):
    """One figure per preset in placement.csv: figures/placement_<preset>."""
    for preset in sorted({r["preset"] for r in rows}):
        rs = [r for r in rows if r["preset"] == preset]
        panels = panel_rows(rs)
        title = ("Expert placement x schedule on %s: dispatch + combine time summed over the "
                 "layers (bars), lower bound (dash), worst layer's compute imbalance (number)"
                 % preset)
        body = ["unset title", "set multiplot layout %d,2 title \"%s\""
                % ((len(panels) + 1) // 2, title), "set grid ytics", "set bmargin 3.5"]
        for i, (key, prs) in enumerate(panels.items()):
            body.append(panel(p, preset, key, prs, i == 0))
        body.append("unset multiplot")
        p.plot("placement_%s" % preset, title, "\n".join(body), size=(1400, 900))
