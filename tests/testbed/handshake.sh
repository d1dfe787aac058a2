#!/usr/bin/env bash
# tests/testbed/handshake.sh - a rank's go-ahead for its peer's message
# queued behind the bulk it sends that peer: both directions of an
# exchange over one slow rail, with MPI's rendezvous handshake (Open MPI's
# 64 KiB eager limit) and without (scripts/testbed.sh's default, messages
# up to FAST_TESTBED_EAGER bytes sent eagerly).  A measurement, not a timed
# test; root.
#
#   bash tests/testbed/handshake.sh build/bin/fast
#   RATE=200mbit FRACTION=0.25 BYTES=1118208 ITERS=9 OUT=build/testbed-handshake \
#     bash tests/testbed/handshake.sh build/bin/fast
#
# A 4 x 4 fabric at RATE (default 200mbit), rail 2 of server 1 at FRACTION
# (default 0.25), not calibrated (the rates are what is measured), brought
# up twice: FAST_TESTBED_EAGER=0, then the default.  Rank 6 is behind the
# slow rail; its rail's peers are ranks 2, 10, 14.  Each case is one
# matrix of BYTES per flow (default 1118208, what a rail carries in a stage
# of FAST's plan for the healthy fabric at 4 MiB per GPU, uniform), ITERS
# timed iterations (default 9) after 2 warm-ups, bytes verified:
#   one-way   rank 6 sends to rank 14                      (fanout)
#   exchange  ranks 6 and 14 send to each other            (fanout)
#   stage     every rank r sends to r + 4: rank 6 sends to 10 and
#             receives from 2, two peers                    (fanout)
#   pairs     every rank r sends to r + 8: a pairwise stage (fanout)
#   chain     every rank r sends to r + 4, r + 8, r + 12: three rail
#             stages one after the other                    (spreadout)
# Beside each median: the slow rail's line time (its bytes one way at
# FRACTION x RATE; for chain, three stages).  Output: OUT/cases.tsv and
# the table on stdout.
set -u
FAST=${1:?usage: tests/testbed/handshake.sh FAST_BINARY}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$ROOT/build/testbed-handshake}
RATE=${RATE:-200mbit} FRACTION=${FRACTION:-0.25} BYTES=${BYTES:-1118208} ITERS=${ITERS:-9}
TB=$ROOT/scripts/testbed.sh
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
export FAST_TESTBED_DIR=$OUT/tb # absolute: the launchers name it
trap 'bash "$TB" down >/dev/null 2>&1' EXIT

python3 - "$OUT" "$BYTES" <<'PY' || exit 1
import json, sys
out, b = sys.argv[1], int(sys.argv[2])
shift = lambda k: [(r, (r + k) % 16) for r in range(16)]
cases = {"one-way": [(6, 14)], "exchange": [(6, 14), (14, 6)], "stage": shift(4),
         "pairs": shift(8), "chain": shift(4) + shift(8) + shift(12)}
for name, pairs in cases.items():
    rows = [[0] * 16 for _ in range(16)]
    for a, d in pairs:
        rows[a][d] = b
    json.dump({"version": 2, "gpus_total": 16, "source": "tests/testbed/handshake.sh: " + name,
               "matrices": [{"label": name, "rows": rows}]}, open("%s/%s.json" % (out, name), "w"))
PY
line_ms=$(python3 -c 'import sys, re
r, f, b = sys.argv[1].lower(), float(sys.argv[2]), int(sys.argv[3])
m = re.fullmatch(r"([0-9.]+)([kmg]?)bit", r) or sys.exit("RATE: expected e.g. 200mbit")
bps = float(m.group(1)) * {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}[m.group(2)] * f
print("%.1f" % (b * 8 / bps * 1e3))' "$RATE" "$FRACTION" "$BYTES") || exit 1

printf 'eager\tcase\tmedian_ms\tline_ms\n' >"$OUT/cases.tsv"
for eager in 0 default; do
	if [ $eager = 0 ]; then export FAST_TESTBED_EAGER=0; else unset FAST_TESTBED_EAGER; fi
	bash "$TB" up --servers 4 --gpus 4 --rate "$RATE" --nic "1:2=$FRACTION" --no-calibrate >"$OUT/up-$eager.log" 2>&1 ||
		{ cat "$OUT/up-$eager.log" >&2; exit 1; }
	echo "# eager $eager: $(uptime)"
	for c in one-way exchange stage pairs chain; do
		algo=fanout line=$line_ms
		[ $c = chain ] && algo=spreadout line=$(python3 -c "print('%.1f' % (3 * $line_ms))")
		bash "$TB" mpirun -np 16 "$FAST" run --topo "$OUT/tb/topo.json" --traffic "$OUT/$c.json" --algo $algo \
			-n "$ITERS" -w 2 -c 1 --json >"$OUT/run-$eager-$c.json" 2>"$OUT/run-$eager-$c.err" ||
			{ tail -5 "$OUT/run-$eager-$c.err" >&2; exit 1; }
		python3 - "$OUT/run-$eager-$c.json" "$eager" "$c" "$line" >>"$OUT/cases.tsv" <<'PY' || exit 1
import json, sys
row = json.load(open(sys.argv[1]))["rows"][0]
if row["wrong"]:
    sys.exit("wrong bytes in " + sys.argv[1])
print("%s\t%s\t%.1f\t%s" % (sys.argv[2], sys.argv[3], row["median_s"] * 1e3, sys.argv[4]))
PY
	done
	bash "$TB" down >/dev/null 2>&1
done
unset FAST_TESTBED_EAGER
echo "# $(uptime)"
python3 - "$OUT/cases.tsv" <<'PY'
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])][1:]
med = {(e, c): m for e, c, m, _ in rows}
print("| case | slow rail's line time ms | handshake (eager 0) ms | eager (default) ms |")
print("|---|---:|---:|---:|")
for e, c, m, line in rows:
    if e == "0":
        print("| %s | %s | %s | %s |" % (c, line, m, med.get(("default", c), "-")))
PY
