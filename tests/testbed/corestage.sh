#!/usr/bin/env bash
# tests/testbed/corestage.sh - one rail stage with a slow rail, taken
# apart: does the slow rail lose its rate while the other rails saturate
# the testbed's core?  A measurement, not a timed test; root.
#
#   bash tests/testbed/corestage.sh build/bin/fast
#   TOPO=build/testbed-degraded/slow-nic/topo-healthy.json FRACTION=0.25 BYTES=1118208 \
#     ITERS=9 OUT=build/testbed-corestage bash tests/testbed/corestage.sh build/bin/fast
#
# A 4 x 4 fabric at RATE (default 200mbit), rail 2 of server 1 at
# FRACTION (default 0.25), not calibrated.  Rank 6 is behind that rail.
# Every case is one matrix of BYTES per flow (default 1118208, what each
# rail carries in a stage of FAST's plan for the healthy fabric at 4 MiB
# per GPU, uniform), run by fanout (every message at once: one stage),
# ITERS timed iterations (default 9) after 2 warm-ups, bytes verified:
#   slow-out     rank 6 sends to rank 2 (its rail, server 0)
#   slow-both    rank 6 sends to rank 2 and receives from rank 10
#   stage        every rank r sends to rank (r + 4) mod 16: a FAST rail
#                stage (server shift 1), every rail out and in once
#   stage-fast   the same without rank 6's two flows (the healthy rails)
# Beside each median: `fast sim` of the same plan on TOPO with the rail at
# FRACTION (default: the fabric degraded.sh last fitted), its core shared
# max-min and by demand.  Output: OUT/cases.tsv and the table on stdout.
set -u
FAST=${1:?usage: tests/testbed/corestage.sh FAST_BINARY}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$ROOT/build/testbed-corestage}
TOPO=${TOPO:-$ROOT/build/testbed-degraded/slow-nic/topo-healthy.json}
RATE=${RATE:-200mbit} FRACTION=${FRACTION:-0.25} BYTES=${BYTES:-1118208} ITERS=${ITERS:-9}
export FAST_TESTBED_DIR=$OUT/tb
TB=$ROOT/scripts/testbed.sh
[ -f "$TOPO" ] || { echo "corestage: no topology $TOPO (run make degraded-testbed, or give TOPO=)" >&2; exit 2; }
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd) && export FAST_TESTBED_DIR=$OUT/tb # absolute: the launchers name it
trap 'bash "$TB" down >/dev/null 2>&1' EXIT

python3 - "$OUT" "$BYTES" "$TOPO" "$FRACTION" <<'EOF' || exit 1
import json, sys
out, b, topo, f = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4])
stage = [(r, (r + 4) % 16) for r in range(16)]
cases = {
    "slow-out": [(6, 2)],
    "slow-both": [(6, 2), (10, 6)],
    "stage": stage,
    "stage-fast": [(a, d) for a, d in stage if 6 not in (a, d)],
}
for name, pairs in cases.items():
    rows = [[0] * 16 for _ in range(16)]
    for a, d in pairs:
        rows[a][d] = b
    json.dump({"version": 2, "gpus_total": 16, "source": "tests/testbed/corestage.sh: " + name,
               "matrices": [{"label": name, "rows": rows}]}, open("%s/%s.json" % (out, name), "w"))
for s in ("maxmin", "demand"):
    t = json.load(open(topo))
    t["scale_out"]["nic_overrides"] = [] if f == 1 else [{"server": 1, "nic": 2, "fraction": f}]
    t["scale_out"]["core_sharing"] = s
    json.dump(t, open("%s/topo-%s.json" % (out, s), "w"), indent=2)
EOF

nic=()
[ "$FRACTION" != 1 ] && nic=(--nic "1:2=$FRACTION")
bash "$TB" up --servers 4 --gpus 4 --rate "$RATE" "${nic[@]}" --no-calibrate >"$OUT/up.log" 2>&1 ||
	{ cat "$OUT/up.log" >&2; exit 1; }
echo "# $(uptime)"
printf 'case\tmedian_ms\tq1_ms\tq3_ms\tsim_maxmin_ms\tsim_demand_ms\n' >"$OUT/cases.tsv"
for c in slow-out slow-both stage stage-fast; do
	bash "$TB" mpirun -np 16 "$FAST" run --topo "$OUT/topo-maxmin.json" --traffic "$OUT/$c.json" --algo fanout \
		-n "$ITERS" -w 2 -c 1 --json >"$OUT/run-$c.json" 2>"$OUT/run-$c.err" || { tail -5 "$OUT/run-$c.err" >&2; exit 1; }
	sims=()
	for s in maxmin demand; do
		sims+=("$("$FAST" sim --topo "$OUT/topo-$s.json" --traffic "$OUT/$c.json" --algo fanout --json |
			python3 -c 'import json,sys; print(json.load(sys.stdin)["plans"][0]["time_s"] * 1e3)')")
	done
	python3 - "$OUT/run-$c.json" "$c" "${sims[@]}" >>"$OUT/cases.tsv" <<'EOF' || exit 1
import json, sys
row = json.load(open(sys.argv[1]))["rows"][0]
if row["wrong"]:
    sys.exit("wrong bytes in " + sys.argv[1])
print("%s\t%.1f\t\t\t%.1f\t%.1f" % (sys.argv[2], row["median_s"] * 1e3, float(sys.argv[3]), float(sys.argv[4])))
EOF
done
echo "# $(uptime)"
python3 - "$OUT/cases.tsv" <<'EOF'
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])][1:]
print("| case | measured median ms | sim maxmin ms | sim demand ms |")
print("|---|---:|---:|---:|")
for c, med, _, _, mm, dm in rows:
    print("| %s | %s | %s | %s |" % (c, med, mm, dm))
EOF
