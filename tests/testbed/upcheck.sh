#!/usr/bin/env bash
# tests/testbed/upcheck.sh - does the topology `up` calibrates predict
# FAST's measured median?  A measurement (docs/testbed.md, "Measured on the
# testbed" table), not a timed test.
#
#   bash tests/testbed/upcheck.sh build/bin/fast [ROUNDS]    # as root
#
# ROUNDS times (default 3): a fresh `scripts/testbed.sh up --servers 4
# --gpus 4 --rate 200mbit` (its log kept), then right after it, at the
# same load, FAST on uniform and Zipf (skew 1, seed 23: other matrices
# than the calibration's) traffic of 4 and 16 MiB mean per GPU: one mpirun
# job of `fast run -n 1 -w 0 -c 1` over 8 copies of the matrix (the first
# is the warm-up), the median and IQR of the other 7; beside them `fast
# sim --topo topo.json` (what a user runs) and the same matrix on both
# fits `up` made, calib/coll-step.json simulated --sync step and
# calib/coll-rank.json --sync rank; then `down`.  The 1-minute load average
# before `up` and after the last job.  One TSV row per cell on stdout,
# everything under $UPCHECK_DIR (default build/testbed-upcheck).
set -u
FAST=${1:?usage: tests/testbed/upcheck.sh FAST [ROUNDS]}
rounds=${2:-3}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TB=$ROOT/scripts/testbed.sh
DIR=${FAST_TESTBED_DIR:-$ROOT/build/testbed}
OUT=${UPCHECK_DIR:-$ROOT/build/testbed-upcheck}
mkdir -p "$OUT"
trap '"$TB" down >/dev/null 2>&1' EXIT
trap 'exit 130' INT TERM
sim() { # topo sync traffic: simulated ms
	"$FAST" sim --topo "$1" --sync "$2" --traffic "$3" --algo fast --json |
		python3 -c 'import json, sys; print("%.1f" % (json.load(sys.stdin)["plans"][0]["time_s"] * 1e3))'
}
printf 'round\tload_before\tload_after\tsize\ttraffic\tmedian_ms\tiqr_ms\twrong\tsim_ms\tsim_step_ms\tsim_rank_ms\n'
for ((k = 0; k < rounds; k++)); do
	l1=$(cut -d' ' -f1 /proc/loadavg)
	echo "# round $k: $(date -u +%H:%M:%S) UTC, $(uptime)" >&2
	"$TB" up --servers 4 --gpus 4 --rate 200mbit >"$OUT/up-$k.log" 2>&1 || { cat "$OUT/up-$k.log" >&2; exit 1; }
	cp "$DIR/topo.json" "$OUT/topo-$k.json"
	cp "$DIR/calib/coll-step.json" "$OUT/topo-$k-step.json"
	cp "$DIR/calib/coll-rank.json" "$OUT/topo-$k-rank.json"
	rows=()
	for size in 4M 16M; do
		for pat in uniform zipf; do
			t=$OUT/$size-$pat.json
			skew=()
			[ $pat = zipf ] && skew=(--skew 1)
			"$FAST" gen --topo "$DIR/topo.json" --pattern $pat --mean-bytes $size "${skew[@]}" --seed 23 \
				-o "$OUT/$size-$pat.one.json" >/dev/null || exit 1
			python3 - "$OUT/$size-$pat.one.json" >"$t" <<'EOF' || exit 1
import json, sys
d = json.load(open(sys.argv[1]))
d["matrices"] = [dict(d["matrices"][0], label="it%d" % i) for i in range(8)]
json.dump(d, sys.stdout)
EOF
			"$TB" mpirun -np 16 "$FAST" run --topo "$DIR/topo.json" --traffic "$t" --algo fast \
				-n 1 -w 0 -c 1 --json >"$OUT/run-$k-$size-$pat.json" 2>"$OUT/run.err" ||
				{ echo "upcheck: $size $pat failed: $(tail -3 "$OUT/run.err")" >&2; exit 1; }
			one=$OUT/$size-$pat.one.json
			rows+=("$size $pat $(sim "$DIR/topo.json" step "$one") $(sim "$OUT/topo-$k-step.json" step "$one") $(sim "$OUT/topo-$k-rank.json" rank "$one")")
		done
	done
	l2=$(cut -d' ' -f1 /proc/loadavg)
	for r in "${rows[@]}"; do
		# shellcheck disable=SC2086 # the row: words without blanks
		set -- $r
		python3 - "$OUT/run-$k-$1-$2.json" "$k" "$l1" "$l2" "$@" <<'EOF'
import json, statistics, sys
f, k, l1, l2, size, pat, s, ss, sr = sys.argv[1:]
rows = json.load(open(f))["rows"]
t = sorted(r["median_s"] * 1e3 for r in rows[1:])
q = statistics.quantiles(t, n=4, method="inclusive")
print("\t".join([k, l1, l2, size, pat, "%.1f" % statistics.median(t), "%.1f" % (q[2] - q[0]),
                 str(sum(r["wrong"] for r in rows)), s, ss, sr]))
EOF
	done
	"$TB" down >/dev/null 2>&1
done
