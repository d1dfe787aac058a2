#!/usr/bin/env bash
# The `--algo auto` size study (docs/algorithms.md, "Choosing the schedule: --algo
# auto"): per preset, GPU count, traffic and per-GPU size, `fast compare
# --json` of every algorithm and auto; one CSV row per (case, algorithm)
# with T_sim, the measured synthesis S, T = T_sim + S, the bound (the LP
# plus the latency floor: compare --json's bound_s) and,
# for auto, the schedule it chose.  Then results/figures/auto_size_*.svg.
#
#   bash results/auto_study.sh [FAST] [OUT.csv] [SERVERS...]
# Defaults: build/bin/fast, results/auto_study.csv, servers 4.  The real
# trace is the first matrix of DeepSeek-V2-Lite EP32 at 4 x 8 and of
# switch-base-128 EP128 at 16 x 8 (the bundled traces of those sizes),
# scaled to the size; other server counts have no trace case.
set -euo pipefail
FAST=${1:-build/bin/fast}
OUT=${2:-results/auto_study.csv}
shift 2 2>/dev/null || true
SERVERS=${*:-4}
SIZES=${SIZES:-"4K 16K 64K 256K 1M 4M 16M 64M 256M 1G 4G"}
# Synthesis is measured, and a process of this machine runs in one of two
# speeds (a 1.2-1.7x spread between processes on one input, stable within
# one: docs/algorithms.md, "Choosing the schedule"), which decides near-ties where S is
# most of T.  Up to 16 MiB per GPU (where S matters and the simulation is
# quick) each case runs REPEAT times and a row's synthesis is the median
# of its runs' (T_sim and auto's choice are the same in every run).
REPEAT=${REPEAT:-5}
bytes_of() { # 4K, 16M, 1G -> bytes
	local n=${1%?}
	case $1 in
	*K) echo $((n << 10)) ;;
	*M) echo $((n << 20)) ;;
	*G) echo $((n << 30)) ;;
	*) echo "auto_study.sh: size $1: give K, M or G" >&2; exit 2 ;;
	esac
}
. results/study_lib.sh # trace_of
TMP=$(mktemp -d)
trap 'rm -rf "$TMP" "$OUT.runs"' EXIT
rm -f "$OUT.runs"
echo "preset,servers,gpus,traffic,size_bytes,algo,time_s,synthesis_s,time_with_synthesis_s,bound_s,chosen,predicted_sim_s" >"$OUT.tmp"
for preset in h200 mi300x-100g; do
	for N in $SERVERS; do
		for traffic in uniform zipf trace; do
			TRACE=$(trace_of "$N")
			[ "$traffic" = trace ] && [ -z "$TRACE" ] && continue
			for size in $SIZES; do
				t=$TMP/t.json
				if [ "$traffic" = trace ]; then
					python3 results/scale_trace.py "$TRACE" "$size" "$t"
				else
					"$FAST" gen --preset "$preset" --servers "$N" --gpus 8 --pattern "$traffic" \
						--mean-bytes "$size" -o "$t" >/dev/null
				fi
				runs=1
				[ "$(bytes_of "$size")" -le $((16 << 20)) ] && runs=$REPEAT
				for r in $(seq "$runs"); do
				"$FAST" compare --preset "$preset" --servers "$N" --gpus 8 --traffic "$t" \
					--algos fast,fanout,nccl,pxn,spreadout,hier,auto --json |
					python3 -c '
import json, sys
units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
preset, N, traffic, size = sys.argv[1:5]
d = json.load(sys.stdin)
for m in d["matrices"]:
    cand = [a for a in m["algorithms"] if a["algo"] == "auto"][0]["candidates"]
    for a in m["algorithms"]:
        pred = cand[a.get("chosen", a["algo"])]["predicted_sim_s"]
        print(",".join(str(x) for x in [preset, N, 8, traffic, int(size[:-1]) * units[size[-1]], a["algo"],
              a["time_s"], a["synthesis_s"], a["time_with_synthesis_s"], m["bound_s"], a.get("chosen", ""),
              pred]))
' "$preset" "$N" "$traffic" "$size" >>"$OUT.runs"
				done
			done
		done
	done
done
# one row per (case, algorithm): the median synthesis of its runs
python3 - "$OUT.runs" >>"$OUT.tmp" <<'PY'
import statistics, sys
from collections import OrderedDict
rows = OrderedDict()
for line in open(sys.argv[1]):
    f = line.rstrip("\n").split(",")
    rows.setdefault(tuple(f[:6]), []).append(f)
for key, runs in rows.items():
    f = list(runs[0])
    assert all(r[6] == f[6] and r[10] == f[10] for r in runs), key  # T_sim, chosen
    s = statistics.median(float(r[7]) for r in runs)
    f[7], f[8] = repr(s), repr(float(f[6]) + s)
    print(",".join(f))
PY
rm -f "$OUT.runs"
mv "$OUT.tmp" "$OUT"
echo "wrote $OUT" >&2
