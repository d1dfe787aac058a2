#!/usr/bin/env bash
# tests/testbed/fidelity.sh - the simulator held against the emulated
# cluster (`make fidelity-testbed`; a measurement, not a timed test).
#
#   bash tests/testbed/fidelity.sh build/bin/fast            # measure, fit, table
#   DATA=build/testbed-bench bash tests/testbed/fidelity.sh build/bin/fast   # refit only
#
# The grid, declared before measuring: every algorithm (fast, fanout, nccl,
# pxn, spreadout, hier) and MPI_Alltoallv (mpi; simulated as fanout, the
# plan of Open MPI's basic linear alltoallv, which its tuned component
# picks for 4-63 ranks) x 2 rail rates (100, 200 Mbit/s) x uniform and Zipf
# (skew 1) traffic x 2 mean sizes per GPU (1, 4 MiB), 4 servers x 4 ranks,
# 9 timed iterations per cell (tests/testbed/bench.sh: three interleaved
# mpirun jobs of 3).  Per rate, the cells of one size FIT the terms (100
# Mbit/s: 1 MiB; 200 Mbit/s: 4 MiB, FIT below) and the cells of the other
# VALIDATE them, so both directions of size extrapolation are tested.
# Terms fitted (`fast calibrate --fit-run`, on the rate's topology as the
# point-to-point sweeps of `scripts/testbed.sh up` fitted it): TERMS below.
#
# FIT entries are RATE:SIZE or RATE:SIZE-TRAFFIC (the cells whose file
# names start so fit, the rest of the rate validate); TERMS may carry
# ranges (PATH=LO:HI), as `fast calibrate --fit` takes them.
#
# Output: a markdown table per cell (measured median and IQR of the
# iterations, simulated before and after the fit, error, verdict: within
# +-15%, or within 2 x IQR/median where the testbed's own spread is
# larger), the fitted values, and DATA/fidelity.md with the same.
set -u
FAST=${1:?usage: tests/testbed/fidelity.sh FAST_BINARY}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
FIT=${FIT:-"100mbit:1M 200mbit:4M"}
TERMS=${TERMS:-"/scale_out/step_overhead_us /scale_out/core_oversubscription"}
if [ -z "${DATA:-}" ]; then
	DATA=$ROOT/build/testbed-bench
	RATES="100mbit 200mbit" SIZES="1M 4M" bash "$ROOT/tests/testbed/bench.sh" "$FAST" || exit 1
fi
terms=()
for t in $TERMS; do terms+=(--fit "$t"); done
out=$DATA/fidelity.json
: >"$out"
for fs in $FIT; do
	rate=${fs%%:*} size=${fs#*:}
	base=$DATA/sweeps-$rate.json
	[ -f "$base" ] || base=$DATA/topo-$rate.json
	fit=() chk=() all=()
	for f in "$DATA"/cells/"$rate"-*-*-*-[0-9].json; do
		# the plans are compiled on the topology the runs had: the rate's
		# (topo-RATE-SIZE.json where a size was measured on another `up`)
		sz=$(basename "$f" | cut -d- -f2)
		rt=$DATA/topo-$rate-$sz.json
		[ -f "$rt" ] || rt=$DATA/topo-$rate.json
		case $(basename "$f") in
		"$rate-$size-"*) fit+=(--run-topo "$rt" --fit-run "$f") ;; # SIZE or SIZE-TRAFFIC
		*) chk+=(--run-topo "$rt" --check-run "$f") ;;
		esac
		all+=(--run-topo "$rt" --check-run "$f")
	done
	# before: the sweeps' topology as it is (nothing fitted, every cell checked)
	before=$("$FAST" calibrate --topo "$base" "${all[@]}" --json 2>&1) ||
		{ echo "fidelity: $before" >&2; exit 1; }
	after=$("$FAST" calibrate --topo "$base" "${fit[@]}" "${chk[@]}" "${terms[@]}" --json -o "$DATA/fitted-$rate.json" 2>&1) ||
		{ echo "fidelity: $after" >&2; exit 1; }
	printf '%s\t%s\t%s\t%s\n' "$rate" "$size" "$before" "$after" >>"$out"
done
python3 - "$out" "$DATA" <<'EOF' | tee "$DATA/fidelity.md"
import json, os, sys
lines = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
print("| rate | size | traffic | algo | role | measured median ms | IQR ms | sim before ms | sim ms | error | 2 x IQR/median | verdict |")
print("|---|---|---|---|---|---:|---:|---:|---:|---:|---:|---|")
summary = []
for rate, fsize, before, after in lines:
    b = {(c["algo"], c["traffic"]): c for c in json.loads(before)["cells"]}
    a = json.loads(after)
    cells = sorted(a["cells"], key=lambda c: (c["role"] != "fit", os.path.basename(c["traffic"]), c["algo"]))
    for c in cells:
        name = os.path.basename(c["traffic"]).replace(".one.json", "").replace(".json", "").split("-")
        med, iqr = c["median_us"] / 1e3, (c["q3_us"] - c["q1_us"]) / 1e3
        err = abs(c["rel_err"])
        spread = 2 * iqr / med
        ok15, oks = err <= 0.15, err <= spread
        verdict = "within 15%" if ok15 else ("within 2 x IQR/median" if oks else "MISS")
        if c["role"] == "fit":
            verdict = "(fit) " + verdict
        else:
            summary.append((rate, ok15, oks))
        print("| %s | %s | %s | %s | %s | %.1f | %.1f | %.1f | %.1f | %+.0f%% | %.0f%% | %s |" % (
            rate, name[1], name[2], c["algo"], "fit" if c["role"] == "fit" else "validate", med, iqr,
            b[(c["algo"], c["traffic"])]["sim_us"] / 1e3, c["sim_us"] / 1e3, 100 * c["rel_err"],
            100 * spread, verdict))
    print()
    print("%s fitted (on %s cells): %s; sum of squared relative errors %.3f -> %.3f" % (
        rate, fsize, ", ".join("%s = %.4g" % (t["path"], t["value"]) for t in a["terms"]),
        a["cost_before"], a["cost"]))
    print()
n = len(summary)
print("validation cells: %d; within +-15%%: %d; within +-15%% or 2 x IQR/median: %d" % (
    n, sum(s[1] for s in summary), sum(s[1] or s[2] for s in summary)))
EOF
