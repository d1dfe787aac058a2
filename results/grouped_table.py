#!/usr/bin/env python3
"""The tables of docs/algorithms.md, "FAST at small sizes: rail steps of
several permutations": per case of results/grouped_study.sh's CSV, FAST's
simulated time by default (stages=auto) and with --stages grouped, the best
baseline and FAST / best; with --tokens, per EP and phase of
results/grouped_tokens.sh's CSV, FAST's and hier's totals and the layers
where FAST is slower than hier.

    python3 results/grouped_table.py [results/grouped_study.csv]
    python3 results/grouped_table.py --tokens [results/grouped_tokens.csv]
"""
import collections
import csv
import sys

BASELINES = ("fanout", "nccl", "pxn", "spreadout", "hier")


def main(path):
    cases = collections.OrderedDict()
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            key = (r["preset"], r["servers"], r["pattern"], r["size"])
            cases.setdefault(key, {})[r["algo"]] = float(r["time_s"]) * 1e6
    print("| preset, N × 8, traffic | per GPU | FAST default (µs) | FAST grouped (µs) "
          "| best baseline (µs) | FAST / best, default | grouped |")
    print("|---|---|---|---|---|---|---|")
    worst = 0.0
    for (preset, n, pattern, size), t in cases.items():
        best = min(BASELINES, key=lambda a: t[a])
        before, after = t["fast"] / t[best], t["fast_grouped"] / t[best]
        worst = max(worst, after)
        print(f"| {preset} {n} {pattern} | {size} | {t['fast']:.1f} | {t['fast_grouped']:.1f} "
              f"| {best} {t[best]:.1f} | {before:.3f} | {after:.3f} |")
    print(f"\nworst FAST grouped / best: {worst:.3f}")


def tokens(path):
    t = collections.defaultdict(dict)
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            t[(r["ep"], r["label"])][r["algo"]] = float(r["time_s"]) * 1e6
    print("| EP (servers) | phase | FAST default (µs) | FAST grouped (µs) | hier (µs) "
          "| layers FAST > hier, default → grouped | FAST grouped / hier per layer |")
    print("|---|---|---|---|---|---|---|")
    for ep in sorted({k[0] for k in t}, key=int):
        for phase in ("dispatch", "combine"):
            ks = [k for k in t if k[0] == ep and k[1].endswith("/" + phase)]
            tot = {a: sum(t[k][a] for k in ks) for a in ("fast", "fast_grouped", "hier")}
            lose0 = sum(t[k]["fast"] > t[k]["hier"] for k in ks)
            lose1 = sum(t[k]["fast_grouped"] > t[k]["hier"] for k in ks)
            r = [t[k]["fast_grouped"] / t[k]["hier"] for k in ks]
            print(f"| EP{ep} ({int(ep) // 8}) | {phase} | {tot['fast']:.1f} "
                  f"| {tot['fast_grouped']:.1f} | {tot['hier']:.1f} | {lose0} → {lose1} of {len(ks)} "
                  f"| {min(r):.3f}–{max(r):.3f} |")


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["--tokens"]:
        tokens(args[1] if len(args) > 1 else "results/grouped_tokens.csv")
    else:
        main(args[0] if args else "results/grouped_study.csv")
