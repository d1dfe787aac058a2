#!/usr/bin/env python3
"""The tables of docs/algorithms.md, "FAST at small sizes: rail steps of
several permutations": per case of results/grouped_study.sh's CSV, FAST's
simulated time before grouping was the default (results/grouped_study_before.csv:
its default, and --stages grouped as it was then, opt-in), FAST now, the
best baseline and FAST / best; with --tokens, per EP and phase of
results/grouped_tokens.sh's CSV and its _before file, FAST's and hier's
totals and the layers where FAST is slower than hier.

    python3 results/grouped_table.py [results/grouped_study.csv [BEFORE.csv]]
    python3 results/grouped_table.py --tokens [results/grouped_tokens.csv [BEFORE.csv]]
"""
import collections
import csv
import sys

BASELINES = ("fanout", "nccl", "pxn", "spreadout", "hier")


def read(path, keys):
    t = collections.OrderedDict()
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            t.setdefault(tuple(r[k] for k in keys), {})[r["algo"]] = float(r["time_s"]) * 1e6
    return t


def main(path, before_path):
    keys = ("preset", "servers", "pattern", "size")
    now, before = read(path, keys), read(before_path, keys)
    print("| preset, N × 8, traffic | per GPU | FAST before: default, grouped (µs) | FAST (µs) "
          "| best baseline (µs) | FAST / best before: default, grouped | now |")
    print("|---|---|---|---|---|---|---|")
    worst, within = 0.0, 0
    for key, t in now.items():
        b = before[key]
        best = min(BASELINES, key=lambda a: t[a])
        ratio = t["fast"] / t[best]
        worst = max(worst, ratio)
        within += ratio <= 1.05
        print(f"| {key[0]} {key[1]} {key[2]} | {key[3]} | {b['fast']:.1f}, {b['fast_grouped']:.1f} "
              f"| {t['fast']:.1f} | {best} {t[best]:.1f} | {b['fast'] / t[best]:.3f}, "
              f"{b['fast_grouped'] / t[best]:.3f} | {ratio:.3f} |")
    print(f"\nFAST within 1.05 x the best baseline in {within} of {len(now)} cases; "
          f"worst FAST / best: {worst:.3f}")


def tokens(path, before_path):
    keys = ("ep", "label")
    now, before = read(path, keys), read(before_path, keys)
    print("| EP (servers) | phase | FAST before: default, grouped (µs) | FAST (µs) | hier (µs) "
          "| layers FAST > hier, before (default) → now | FAST / hier per layer |")
    print("|---|---|---|---|---|---|---|")
    for ep in sorted({k[0] for k in now}, key=int):
        for phase in ("dispatch", "combine"):
            ks = [k for k in now if k[0] == ep and k[1].endswith("/" + phase)]
            tot = {a: sum(now[k][a] for k in ks) for a in ("fast", "hier")}
            tb = {a: sum(before[k][a] for k in ks) for a in ("fast", "fast_grouped")}
            lose0 = sum(before[k]["fast"] > before[k]["hier"] for k in ks)
            lose1 = sum(now[k]["fast"] > now[k]["hier"] for k in ks)
            r = [now[k]["fast"] / now[k]["hier"] for k in ks]
            print(f"| EP{ep} ({int(ep) // 8}) | {phase} | {tb['fast']:.1f}, {tb['fast_grouped']:.1f} "
                  f"| {tot['fast']:.1f} | {tot['hier']:.1f} | {lose0} → {lose1} of {len(ks)} "
                  f"| {min(r):.3f}–{max(r):.3f} |")


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["--tokens"]:
        p = args[1] if len(args) > 1 else "results/grouped_tokens.csv"
        tokens(p, args[2] if len(args) > 2 else p.replace(".csv", "_before.csv"))
    else:
        p = args[0] if args else "results/grouped_study.csv"
        main(p, args[1] if len(args) > 1 else p.replace(".csv", "_before.csv"))
