#!/usr/bin/env bash
# tests/testbed/degraded.sh - clusters as they are (issue 25), on the
# emulated cluster (`make degraded-testbed`; a measurement, not a timed test).
#
#   bash tests/testbed/degraded.sh build/bin/fast
#   SIZES=8M ITERS=15 ROUNDS=5 RATE=200mbit bash tests/testbed/degraded.sh build/bin/fast
#   CASES=slow-nic bash tests/testbed/degraded.sh build/bin/fast      # one fabric
#
# Two fabrics of 4 servers x 4 ranks at RATE (default 200mbit, the testbed
# stage's), measured by tests/testbed/bench.sh (interleaved jobs, bytes
# verified, `fast sim` of every plan on the degraded topology beside the
# measured median) on uniform and Zipf (skew 0.8) traffic of SIZES per GPU
# (default 4M: the bytes, not the per-step costs, set the time):
#   slow-nic  one rail at a quarter of its rate (up --nic 1:2=0.25): FAST
#             compiled for that topology (fast, "aware"), FAST compiled
#             for the healthy one and replayed (fast-unaware), fanout, hier
#   shared    two ranks behind each rail (up --nics 2): fast, fanout
#   nic-down  one rail down (up --nic 1:2=0): FAST compiled for it, and
#             fanout and hier relaying the dead rail's rank through a peer
#             (PXN's way); the plan compiled for the healthy fabric is
#             refused by the checker, so it is not measured
# Each fabric's raw data and table in build/testbed-degraded/CASE/ (cells.tsv,
# cells/, load.txt).  Then the verdicts: FAST-aware's median below
# FAST-unaware's and fanout's, and every simulated time within +-15% of
# the measured median; then every cell simulated again by rank, with one
# and with two waves in flight, as `fast run` ran it (tests/testbed/flight.py).
# Exit 1 on a failed run or wrong bytes, not on a verdict (a measurement
# reports).
set -u
FAST=${1:?usage: tests/testbed/degraded.sh FAST_BINARY}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BASE=${BASE:-$ROOT/build/testbed-degraded}
export RATES=${RATE:-200mbit} SIZES=${SIZES:-4M} SKEW=0.8 ITERS=${ITERS:-9} ROUNDS=${ROUNDS:-3}

CASES=${CASES:-"slow-nic shared nic-down"}
measure() { # CASE UP ALGOS
	case " $CASES " in *" $1 "*) ;; *) return 0 ;; esac
	echo "## $1: up $2; $3"
	OUT=$BASE/$1 UP=$2 ALGOS=$3 bash "$ROOT/tests/testbed/bench.sh" "$FAST" || exit 1
	echo
}
measure slow-nic "--nic 1:2=0.25" "fast fast-unaware fanout hier"
measure shared "--nics 2" "fast fanout"
measure nic-down "--nic 1:2=0" "fast fanout hier"

python3 - "$BASE" $CASES <<'EOF'
import math, sys
for case in sys.argv[2:]:
    rows = [l.rstrip("\n").split("\t") for l in open("%s/%s/cells.tsv" % (sys.argv[1], case))][1:]
    cell = {}
    for r in rows:
        cell.setdefault((r[1], r[2]), {})[r[3]] = r
    for (size, pat), cur in cell.items():
        fm = float(cur["fast"][4])
        for a in ("fast-unaware", "fanout"):
            if a in cur:
                m = float(cur[a][4])
                print("%s %s %s: FAST-aware %.1f ms vs %s %.1f ms: %s (%.2fx)" % (
                    case, size, pat, fm, a, m, "faster" if fm < m else "NOT faster", m / fm))
        for a, r in cur.items():
            med, sim = float(r[4]), float(r[9])
            if not math.isnan(sim):
                err = (sim - med) / med
                print("%s %s %s %s: simulated %.1f ms, measured %.1f ms: %+.0f%% %s" % (
                    case, size, pat, a, sim, med, 100 * err, "within 15%" if abs(err) <= 0.15 else "MISS"))
EOF

# every cell simulated again as fast run ran it: by rank, one and two waves
# in flight (tests/testbed/flight.py; the table above is by step)
echo
dirs=()
for c in $CASES; do dirs+=("$BASE/$c"); done
python3 "$ROOT/tests/testbed/flight.py" "$FAST" "${dirs[@]}"
