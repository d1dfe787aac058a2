#!/usr/bin/env python3
"""The first matrix of a bundled trace scaled to a mean per-GPU size:
    python3 results/scale_trace.py TRACE.json SIZE OUT.json   (SIZE: 16M, 1G)
(the studies' "trace" traffic: the diagonal dropped, every entry times
size x GPUs / off-diagonal total, rounded)."""
import json
import sys

units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
src, size, out = sys.argv[1], sys.argv[2], sys.argv[3]
want = int(size[:-1]) * units[size[-1]]
d = json.load(open(src))
m = d["matrices"][0]  # the first layer's dispatch
n = len(m["rows"])
tot = sum(m["rows"][i][j] for i in range(n) for j in range(n) if i != j)
f = want * n / tot
rows = [[0 if i == j else int(round(m["rows"][i][j] * f)) for j in range(n)] for i in range(n)]
json.dump({"version": 1, "gpus": n, "source": d.get("source", "") + " (scaled)",
           "matrices": [{"label": m["label"], "rows": rows}]}, open(out, "w"))
