#!/usr/bin/env bash
# tests/testbed/ctlband.sh - what the control band (scripts/testbed.sh,
# ctl_band) changes: transfers through one rail in both directions at once,
# measured with the band off and on (a measurement, not a timed test; root).
#
#   bash tests/testbed/ctlband.sh build/bin/fast
#   RATE=200mbit ITERS=9 OUT=build/testbed-ctlband bash tests/testbed/ctlband.sh build/bin/fast
#
# A 4 x 4 fabric at RATE (default 200mbit) with rail 2 of server 1 at a
# quarter (--nic 1:2=0.25), not calibrated (the rates are what is measured).
# Rank 6 is behind that rail, rank 7 behind a healthy one of the same
# server; each case is one matrix run by fanout (every message at once),
# ITERS timed iterations (default 9) after 2 warm-ups, bytes verified:
#   out-3    rank r sends B to each of its rail's three peers
#   in-3     the three peers send B each to rank r
#   both-1   r and one peer send 3B to each other (one flow each way)
#   both-3   out-3 and in-3 at once (three flows each way)
# B = 1 MiB on the slow rail (rank 6), 4 MiB on the healthy one (rank 7):
# 3B at the rail's rate is 503 ms on both.  The table: the line-rate time,
# and the median with the band off and on.  Without a band, a rank's
# outgoing bulk holds its peers' TCP acknowledgements and MPI handshakes in
# the rail's deep queue, and both-3 takes about a third longer than out-3.
set -u
FAST=${1:?usage: tests/testbed/ctlband.sh FAST_BINARY}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$ROOT/build/testbed-ctlband}
RATE=${RATE:-200mbit} ITERS=${ITERS:-9}
export FAST_TESTBED_DIR=$OUT/tb
TB=$ROOT/scripts/testbed.sh
mkdir -p "$OUT"
trap 'bash "$TB" down >/dev/null 2>&1' EXIT

# the matrices: OUT/RANK-CASE.json
python3 - "$OUT" <<'EOF' || exit 1
import json, sys
M = 1 << 20
for r, b in ((6, M), (7, 4 * M)):
    peers = [p for p in (r % 4, r % 4 + 8, r % 4 + 12)]
    cases = {
        "out-3": [(r, p, b) for p in peers],
        "in-3": [(p, r, b) for p in peers],
        "both-1": [(r, peers[0], 3 * b), (peers[0], r, 3 * b)],
        "both-3": [(r, p, b) for p in peers] + [(p, r, b) for p in peers],
    }
    for name, pairs in cases.items():
        rows = [[0] * 16 for _ in range(16)]
        for a, d, v in pairs:
            rows[a][d] = v
        json.dump({"version": 2, "gpus_total": 16, "source": "tests/testbed/ctlband.sh: rank %d %s" % (r, name),
                   "matrices": [{"label": name, "rows": rows}]}, open("%s/%d-%s.json" % (sys.argv[1], r, name), "w"))
EOF

: >"$OUT/medians.tsv"
for band in off on; do
	FAST_TESTBED_CTL_BAND=$band bash "$TB" up --servers 4 --gpus 4 --rate "$RATE" --nic 1:2=0.25 --no-calibrate \
		>"$OUT/up-$band.log" 2>&1 || { cat "$OUT/up-$band.log" >&2; exit 1; }
	for r in 6 7; do
		for c in out-3 in-3 both-1 both-3; do
			bash "$TB" mpirun -np 16 "$FAST" run --topo "$FAST_TESTBED_DIR/topo.json" --traffic "$OUT/$r-$c.json" \
				--algo fanout -n "$ITERS" -w 2 --json >"$OUT/$band-$r-$c.json" 2>"$OUT/$band-$r-$c.err" ||
				{ cat "$OUT/$band-$r-$c.err" >&2; exit 1; }
			python3 -c 'import json, sys
row = json.load(open(sys.argv[1]))["rows"][0]
if row["wrong"]:
    sys.exit("wrong bytes in " + sys.argv[1])
print("%s\t%s\t%s\t%.1f" % (sys.argv[2], sys.argv[3], sys.argv[4], row["median_s"] * 1e3))' \
				"$OUT/$band-$r-$c.json" "$band" "$r" "$c" >>"$OUT/medians.tsv" || exit 1
		done
	done
	bash "$TB" down >/dev/null 2>&1
done
echo "# $(uptime)"
python3 - "$OUT/medians.tsv" "$RATE" <<'EOF'
import re, sys
num, unit = re.fullmatch(r"([0-9.]+)([kmg]?)bit", sys.argv[2]).groups()
bps = float(num) * {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}[unit]
line_ms = 3 * (1 << 20) * 8 * 4 / bps * 1e3 # 3B over the rail: the same on both
med = {}
for line in open(sys.argv[1]):
    band, r, c, ms = line.split("\t")
    med[(band, r, c)] = float(ms)
print("| rail | case | line rate ms | band off: median ms | band on: median ms |")
print("|---|---|---:|---:|---:|")
for r, what in (("6", "slow (1/4)"), ("7", "healthy")):
    for c in ("out-3", "in-3", "both-1", "both-3"):
        print("| %s | %s | %.0f | %.1f | %.1f |" % (what, c, line_ms, med[("off", r, c)], med[("on", r, c)]))
EOF
