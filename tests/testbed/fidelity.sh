#!/usr/bin/env bash
# tests/testbed/fidelity.sh - the simulator held against the emulated
# cluster (`make fidelity-testbed`; a measurement, not a timed test).
#
#   bash tests/testbed/fidelity.sh build/bin/fast            # measure, fit, table
#   DATA=build/testbed-bench bash tests/testbed/fidelity.sh build/bin/fast   # refit only
#   DATA=results/testbed/grid OUT=results/testbed bash tests/testbed/fidelity.sh build/bin/fast
#                              # docs/testbed.md's table, from the grid kept in the repository
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
# SYNC (default rank) is how the cells are simulated (`fast calibrate
# --sync`): rank, every GPU walking its own waves, is how `fast run`
# executes a plan, which is what was measured; step is the plan format's
# barrier per step.  When SYNC is rank, the same fit is made with step too
# and the table gives its result beside.
#
# A cell file names its traffic by the path it had when measured; it is
# read from DATA/cells/ when a file of that name is there (bench.sh keeps
# every matrix it ran there), so a grid copied elsewhere
# (results/testbed/grid/) refits the same anywhere.
#
# Output: a markdown table per cell (measured median and IQR of the
# iterations, simulated before and after the fit, error, verdict: within
# +-15%, or within 2 x IQR/median where the testbed's own spread is
# larger), the fitted values, into OUT/fidelity.md (OUT: default DATA);
# OUT/fidelity.json holds the calibrate reports, OUT/fitted-RATE.json the
# topologies fitted with SYNC.
set -u
FAST=${1:?usage: tests/testbed/fidelity.sh FAST_BINARY}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
FIT=${FIT:-"100mbit:1M 200mbit:4M"}
TERMS=${TERMS:-"/scale_out/step_overhead_us /scale_out/core_oversubscription"}
SYNC=${SYNC:-rank}
case $SYNC in step | rank) ;; *) echo "fidelity: SYNC=$SYNC: give step or rank" >&2; exit 2 ;; esac
if [ -z "${DATA:-}" ]; then
	DATA=$ROOT/build/testbed-bench
	RATES="100mbit 200mbit" SIZES="1M 4M" bash "$ROOT/tests/testbed/bench.sh" "$FAST" || exit 1
fi
OUT=${OUT:-$DATA}
mkdir -p "$OUT" || exit 1
TMPD=$(mktemp -d)
trap 'rm -rf "$TMPD"' EXIT
# the cell files, each naming a traffic that exists (see above)
mkdir -p "$TMPD/cells"
python3 - "$DATA/cells" "$TMPD/cells" <<'EOF' || exit 1
import glob, json, os, re, sys
cells, tmp = sys.argv[1:]
for f in sorted(glob.glob(os.path.join(cells, "*.json"))):
    if not re.search(r"-[0-9]\.json$", f):
        continue
    run = json.load(open(f))
    kept = os.path.join(cells, os.path.basename(run["traffic"]))
    if os.path.exists(kept):
        run["traffic"] = kept
    json.dump(run, open(os.path.join(tmp, os.path.basename(f)), "w"))
EOF
terms=()
for t in $TERMS; do terms+=(--fit "$t"); done
out=$OUT/fidelity.json
: >"$out"
modes=$SYNC
[ "$SYNC" = step ] || modes="$SYNC step"
for sync in $modes; do
	for fs in $FIT; do
		rate=${fs%%:*} size=${fs#*:}
		base=$DATA/sweeps-$rate.json
		[ -f "$base" ] || base=$DATA/topo-$rate.json
		fit=() chk=() all=()
		for f in "$TMPD"/cells/"$rate"-*-*-*-[0-9].json; do
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
		fitted=$OUT/fitted-$rate.json
		[ "$sync" = "$SYNC" ] || fitted=$TMPD/fitted-$rate-$sync.json
		# before: the sweeps' topology as it is (nothing fitted, every cell checked)
		before=$("$FAST" calibrate --topo "$base" "${all[@]}" --sync "$sync" --json 2>&1) ||
			{ echo "fidelity: $before" >&2; exit 1; }
		after=$("$FAST" calibrate --topo "$base" "${fit[@]}" "${chk[@]}" "${terms[@]}" --sync "$sync" \
			--json -o "$fitted" 2>&1) || { echo "fidelity: $after" >&2; exit 1; }
		printf '%s\t%s\t%s\t%s\t%s\n' "$sync" "$rate" "$size" "$before" "$after" >>"$out"
	done
done
python3 - "$out" "$SYNC" <<'EOF' | tee "$OUT/fidelity.md"
import json, os, sys
lines = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
main = sys.argv[2]
modes = [main] + (["step"] if main != "step" else [])


def verdict(c):
    med, iqr = c["median_us"], c["q3_us"] - c["q1_us"]
    err = abs(c["rel_err"])
    ok15, oks = err <= 0.15, err <= 2 * iqr / med
    v = "within 15%" if ok15 else ("within 2 x IQR/median" if oks else "MISS")
    return ("(fit) " + v if c["role"] == "fit" else v), ok15, oks


runs = {(s, rate): (fsize, json.loads(b), json.loads(a)) for s, rate, fsize, b, a in lines}
rates = [rate for s, rate, *_ in lines if s == main]
side = len(modes) > 1
print("Simulated with `--sync %s`%s." % (main, "; the last three columns: the same fit with `--sync step`" if side else ""))
print()
print("| rate | size | traffic | algo | role | measured median ms | IQR ms | sim before ms | sim ms | error | 2 x IQR/median | verdict |"
      + (" step: sim ms | step: error | step: verdict |" if side else ""))
print("|---|---|---|---|---|---:|---:|---:|---:|---:|---:|---|" + ("---:|---:|---|" if side else ""))
summary = {s: [] for s in modes}
for rate in rates:
    _, before, after = runs[(main, rate)]
    b = {(c["algo"], c["traffic"]): c for c in before["cells"]}
    st = {(c["algo"], c["traffic"]): c for c in runs[("step", rate)][2]["cells"]} if side else {}
    cells = sorted(after["cells"], key=lambda c: (c["role"] != "fit", os.path.basename(c["traffic"]), c["algo"]))
    for c in cells:
        name = os.path.basename(c["traffic"]).replace(".one.json", "").replace(".json", "").split("-")
        med, iqr = c["median_us"] / 1e3, (c["q3_us"] - c["q1_us"]) / 1e3
        v, ok15, oks = verdict(c)
        row = "| %s | %s | %s | %s | %s | %.1f | %.1f | %.1f | %.1f | %+.0f%% | %.0f%% | %s |" % (
            rate, name[1], name[2], c["algo"], "fit" if c["role"] == "fit" else "validate", med, iqr,
            b[(c["algo"], c["traffic"])]["sim_us"] / 1e3, c["sim_us"] / 1e3, 100 * c["rel_err"],
            200 * iqr / med, v)
        if c["role"] != "fit":
            summary[main].append((ok15, oks))
        if side:
            s = st[(c["algo"], c["traffic"])]
            sv, s15, ss = verdict(s)
            row += " %.1f | %+.0f%% | %s |" % (s["sim_us"] / 1e3, 100 * s["rel_err"], sv)
            if s["role"] != "fit":
                summary["step"].append((s15, ss))
        print(row)
print()
for rate in rates:
    for s in modes:
        fsize, _, a = runs[(s, rate)]
        print("%s fitted (on %s cells, --sync %s): %s; sum of squared relative errors %.3f -> %.3f" % (
            rate, fsize, s, ", ".join("%s = %.4g" % (t["path"], t["value"]) for t in a["terms"]),
            a["cost_before"], a["cost"]))
        print()
for s in modes:
    v = summary[s]
    print("--sync %s: validation cells: %d; within +-15%%: %d; within +-15%% or 2 x IQR/median: %d" % (
        s, len(v), sum(x[0] for x in v), sum(x[0] or x[1] for x in v)))
    print()
EOF
