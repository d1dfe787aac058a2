#!/usr/bin/env bash
# tests/testbed/probe.sh - one targeted measurement on a running emulated
# cluster (a measurement, not a timed test): what docs/testbed.md's fidelity
# section quotes for the misses of the grid and the per-step cost.
#
#   scripts/testbed.sh up --servers 4 --gpus 4 --rate 200mbit
#   bash tests/testbed/probe.sh build/bin/fast LABEL "ALGOS" "SIZES" "PATTERNS" [ITERS]
#   scripts/testbed.sh down
#
# For every mean per-GPU size in SIZES (fast gen --mean-bytes), every
# pattern in PATTERNS (uniform, zipf with --skew 1, or a traffic file's
# path) and every algorithm in ALGOS: one mpirun job of `fast run -n ITERS
# -w 2 -c 1` (default ITERS 7) on the testbed's topology
# ($PROBE_TOPO, default $FAST_TESTBED_DIR/topo.json, FAST_TESTBED_DIR
# default build/testbed), and beside its
# median the `fast sim` time of the same traffic on the same topology and
# the plan's number of steps.  Load: the 1-minute load average before and
# after the job, and rq = the mean of /proc/stat's procs_running sampled
# every 50 ms during it (the testbed's own ranks included).  MCA="--mca K V
# ..." is passed to mpirun (protocol experiments).  One TSV row per job on
# stdout: label size pattern algo median_ms mean_ms wrong sim_ms steps
# load_before load_after rq.  The traffic files are generated once per
# (ranks, size, pattern) in $PROBE_DIR (default build/testbed-probe).
set -u
FAST=${1:?usage: tests/testbed/probe.sh FAST LABEL ALGOS SIZES PATTERNS [ITERS]}
label=${2:?label} algos=${3:?algos} sizes=${4:?sizes} pats=${5:?patterns} iters=${6:-7}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TB=$ROOT/scripts/testbed.sh
DIR=${FAST_TESTBED_DIR:-$ROOT/build/testbed}
OUT=${PROBE_DIR:-$ROOT/build/testbed-probe}
TOPO=${PROBE_TOPO:-$DIR/topo.json}
mkdir -p "$OUT"
read -r servers gpus _ <"$DIR/config" || { echo "probe: no testbed up in $DIR" >&2; exit 1; }
np=$((servers * gpus))
sampler=""
trap '[ -n "$sampler" ] && kill "$sampler" 2>/dev/null' EXIT
for size in $sizes; do
	for pat in $pats; do
		if [ -f "$pat" ]; then
			t=$pat
		else
			t=$OUT/$np-$size-$pat.json
			skew=()
			[ "$pat" = zipf ] && skew=(--skew 1)
			[ -f "$t" ] || "$FAST" gen --topo "$TOPO" --pattern "$pat" --mean-bytes "$size" "${skew[@]}" \
				--seed 5 -o "$t" >/dev/null || exit 1
		fi
		for a in $algos; do
			l1=$(cut -d' ' -f1 /proc/loadavg)
			(while :; do awk '/procs_running/ { print $2 }' /proc/stat; sleep 0.05; done) >"$OUT/rq" &
			sampler=$!
			# shellcheck disable=SC2086
			"$TB" mpirun ${MCA:-} -np $np "$FAST" run --topo "$TOPO" --traffic "$t" --algo "$a" \
				-n "$iters" -w 2 -c 1 --json >"$OUT/run.json" 2>"$OUT/run.err" ||
				{ echo "probe: $a on $t failed: $(tail -3 "$OUT/run.err")" >&2; exit 1; }
			l2=$(cut -d' ' -f1 /proc/loadavg)
			kill "$sampler"
			wait "$sampler" 2>/dev/null
			sampler=""
			rq=$(awk '{ s += $1; n++ } END { printf "%.1f", s / n }' "$OUT/rq")
			sim=nan
			[ "$a" != mpi ] && sim=$("$FAST" sim --topo "$TOPO" --traffic "$t" --algo "$a" --json |
				python3 -c 'import json, sys; print("%.2f" % (json.load(sys.stdin)["plans"][0]["time_s"] * 1e3))')
			steps=-
			[ "$a" != mpi ] && "$FAST" plan --topo "$TOPO" --traffic "$t" --algo "$a" -o "$OUT/plan.json" >/dev/null &&
				steps=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["plans"][0]["steps"]))' "$OUT/plan.json")
			python3 - "$OUT/run.json" "$label" "$size" "$(basename "$pat" .json)" "$a" "$sim" "$steps" "$l1" "$l2" "$rq" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))["rows"][0]
print("\t".join(sys.argv[2:6] + ["%.2f" % (r["median_s"] * 1e3), "%.2f" % (r["time_s"] * 1e3), str(r["wrong"])] + sys.argv[6:]))
EOF
		done
	done
done
