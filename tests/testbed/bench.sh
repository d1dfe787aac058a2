#!/usr/bin/env bash
# tests/testbed/bench.sh - measured speedups on the emulated cluster
# (`make bench-testbed`; a benchmark, not a timed test).
#
#   bash tests/testbed/bench.sh build/bin/fast
#   RATES="100mbit 200mbit" SIZES="1M 4M" ITERS=9 bash tests/testbed/bench.sh build/bin/fast
#   BUFFER=64K ...   switch buffer per port (default: scripts/testbed.sh's, 4M)
#   UP="--nic 1:2=0.25" ALGOS="fast fast-unaware fanout hier" OUT=DIR ...
#                    a degraded fabric (tests/testbed/degraded.sh)
#
# For every rate in RATES (default 200mbit): `scripts/testbed.sh up` of 4
# servers x 4 ranks (calibrated: the topology the simulator is given is the
# one `up` fitted); for every mean per-GPU size in SIZES (default 4M) and
# for uniform and Zipf (--skew SKEW, default 1) traffic: FAST, MPI_Alltoallv
# (algo mpi), fanout and the other baselines (nccl, pxn, spreadout, hier),
# ITERS timed iterations each (default 9; ALGOS: a subset, and
# fast-unaware: FAST compiled for `up`'s topo-healthy.json, the fabric
# without its --nic overrides (UP: more `up` options), replayed from a
# plan file; fast-grouped: FAST compiled with --stages grouped, replayed
# the same way: fast run compiles with the defaults), interleaved over ROUNDS mpirun
# jobs (default 3) so that machine-load drift hits every algorithm alike.
# Every iteration is one matrix of a traffic file holding the same matrix
# ITERS / ROUNDS times (-n 1 -w 1 each: every row is one timed iteration
# after a warm-up), -c 1: the bytes are verified.  Beside each measured
# median, IQR and [min..max]: `fast sim --topo OUT/topo.json` (OUT:
# default build/testbed-bench) of the same traffic and its error.  The
# table goes to stdout, one TSV row per cell to OUT/cells.tsv.  uptime
# before and after.
# Kept for refitting (tests/testbed/fidelity.sh): every cell's traffic
# as OUT/cells/RATE-SIZE-TRAFFIC.json (the timed matrix ITERS / ROUNDS
# times; .one.json: once) and every mpirun job's `fast run --json` output
# (naming that file) as OUT/cells/RATE-SIZE-TRAFFIC-ALGO-JOB.json, the
# fabric of each rate as OUT/topo-RATE.json (as `up` calibrated it) and
# OUT/sweeps-RATE.json (fitted on the point-to-point sweeps only).
set -u
FAST=${1:?usage: tests/testbed/bench.sh FAST_BINARY}
FAST=$(cd "$(dirname "$FAST")" && pwd)/$(basename "$FAST")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TB=$ROOT/scripts/testbed.sh
RATES=${RATES:-200mbit}
SIZES=${SIZES:-4M}
SKEW=${SKEW:-1}
BUFFER=${BUFFER:-4M}
ITERS=${ITERS:-9}
ROUNDS=${ROUNDS:-3}
ALGOS=${ALGOS:-"fast mpi fanout nccl pxn spreadout hier"}
OUT=${OUT:-$ROOT/build/testbed-bench}
UP=${UP:-}
export FAST FAST_TESTBED_DIR=$OUT FAST_TESTBED_TIMEOUT=300
[ $((ITERS % ROUNDS)) = 0 ] || { echo "bench: ITERS must be a multiple of ROUNDS" >&2; exit 2; }
per=$((ITERS / ROUNDS))
mkdir -p "$OUT/cells"
WORK=$(mktemp -d)
trap '"$TB" down >/dev/null 2>&1; rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM

echo "# $(uptime)" >"$OUT/load.txt"
echo "# bench-testbed: 4 servers x 4 ranks, switch buffer $BUFFER, rates $RATES, mean sizes $SIZES per GPU, zipf skew $SKEW, $ITERS iterations ($ROUNDS jobs x $per)"
echo "# $(uptime)"
printf 'rate\tsize\ttraffic\talgo\tmedian_ms\tq1_ms\tq3_ms\tmin_ms\tmax_ms\tsim_ms\twrong\n' >"$OUT/cells.tsv"
for rate in $RATES; do
	# shellcheck disable=SC2086
	"$TB" up --servers 4 --gpus 4 --rate "$rate" --buffer "$BUFFER" $UP >"$WORK/up.log" 2>&1 || { cat "$WORK/up.log" >&2; exit 1; }
	echo "# $rate: $(grep -E 'up in|scale-(up|out) ' "$WORK/up.log" | sed 's/^testbed: //' | tr -s ' ' | paste -sd ';' -)"
	TOPO=$OUT/topo.json
	cp "$TOPO" "$OUT/topo-$rate.json"
	cp "$OUT/calib/sweeps.json" "$OUT/sweeps-$rate.json" 2>/dev/null
	for size in $SIZES; do
		for pat in uniform zipf; do
			skew=()
			[ $pat = zipf ] && skew=(--skew "$SKEW")
			"$FAST" gen --topo "$TOPO" --pattern $pat --mean-bytes "$size" "${skew[@]}" --seed 5 \
				-o "$WORK/one.json" >/dev/null || exit 1
			cp "$WORK/one.json" "$OUT/cells/$rate-$size-$pat.one.json"
			python3 - "$WORK/one.json" "$per" >"$WORK/rep.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
m = d["matrices"][0]
d["matrices"] = [{"label": "it%d" % i, "rows": m["rows"]} for i in range(int(sys.argv[2]))]
json.dump(d, sys.stdout)
EOF
			cp "$WORK/rep.json" "$OUT/cells/$rate-$size-$pat.json"
			# fast-unaware: the plans for the healthy fabric, of the timed
			# file (run) and of its matrix once (simulated)
			for f in rep one; do
				"$FAST" plan --topo "$OUT/topo-healthy.json" --traffic "$WORK/$f.json" --algo fast \
					-o "$WORK/unaware-$f.json" >/dev/null || exit 1
				case " $ALGOS " in *" fast-grouped "*)
					"$FAST" plan --topo "$TOPO" --traffic "$WORK/$f.json" --algo fast --stages grouped \
						-o "$WORK/grouped-$f.json" >/dev/null || exit 1 ;;
				esac
			done
			: >"$WORK/samples"
			for ((r = 0; r < ROUNDS; r++)); do
				echo "$rate $size $pat job $r: $(uptime)" >>"$OUT/load.txt"
				for algo in $ALGOS; do
					how=(--algo "$algo")
					[ "$algo" = fast-unaware ] && how=(--plan "$WORK/unaware-rep.json")
					[ "$algo" = fast-grouped ] && how=(--plan "$WORK/grouped-rep.json")
					"$TB" mpirun -np 16 "$FAST" run --topo "$TOPO" --traffic "$OUT/cells/$rate-$size-$pat.json" "${how[@]}" \
						-n 1 -w 1 -c 1 --json >"$WORK/run.json" 2>"$WORK/run.err" ||
						{ echo "bench: $rate $size $pat $algo failed: $(tail -3 "$WORK/run.err")" >&2; exit 1; }
					cp "$WORK/run.json" "$OUT/cells/$rate-$size-$pat-$algo-$r.json"
					python3 - "$WORK/run.json" "$algo" >>"$WORK/samples" <<'EOF'
import json, sys
for r in json.load(open(sys.argv[1]))["rows"]:
    print(sys.argv[2], "%.3f" % (r["median_s"] * 1e6), r["wrong"])
EOF
				done
			done
			for algo in $ALGOS; do
				sim="" how=(--algo "$algo")
				[ "$algo" = fast-unaware ] && how=(--plan "$WORK/unaware-one.json")
				[ "$algo" = fast-grouped ] && how=(--plan "$WORK/grouped-one.json")
				[ $algo != mpi ] && sim=$("$FAST" sim --topo "$TOPO" --traffic "$WORK/one.json" "${how[@]}" --json |
					python3 -c 'import json,sys; print(json.load(sys.stdin)["plans"][0]["time_s"] * 1e3)')
				python3 - "$WORK/samples" "$algo" "$rate" "$size" "$pat" "${sim:-nan}" >>"$OUT/cells.tsv" <<'EOF'
import statistics, sys
path, algo, rate, size, pat, sim = sys.argv[1:]
t = sorted(float(l.split()[1]) / 1e3 for l in open(path) if l.split()[0] == algo)
w = sum(int(l.split()[2]) for l in open(path) if l.split()[0] == algo)
q = statistics.quantiles(t, n=4, method="inclusive")
print("\t".join([rate, size, pat, algo] + ["%.2f" % x for x in (statistics.median(t), q[0], q[2], t[0], t[-1])] + [sim if sim == "nan" else "%.2f" % float(sim), str(w)]))
EOF
			done
		done
	done
	"$TB" down >/dev/null 2>&1
done
echo "# $(uptime)"
python3 - "$OUT/cells.tsv" $ALGOS <<'EOF'
import math, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])][1:]
algos = sys.argv[2:]
others = [a for a in algos if a != "fast"]
cell = {}
for r in rows:
    cell.setdefault(tuple(r[:3]), {})[r[3]] = r
print()
print("| rate | size | traffic | algo | measured median ms | IQR ms | [min..max] ms | sim ms | sim err | FAST speedup measured | sim |")
print("|---|---|---|---|---:|---:|---|---:|---:|---:|---:|")
for key, cur in cell.items():
    f = cur["fast"]
    fm, fs = float(f[4]), float(f[9])
    for a in algos:
        r = cur[a]
        med, sim = float(r[4]), float(r[9])
        err = "" if math.isnan(sim) else "%+.0f%%" % (100 * (sim - med) / med)
        sp = "" if a == "fast" else "%.2fx" % (med / fm)
        ssp = "" if a == "fast" or math.isnan(sim) else "%.2fx" % (sim / fs)
        print("| %s | %s | %s | %s | %.1f | %.1f | [%.1f..%.1f] | %s | %s | %s | %s |" % (
            key[0], key[1], key[2], a, med, float(r[6]) - float(r[5]), float(r[7]), float(r[8]),
            "-" if math.isnan(sim) else "%.1f" % sim, err, sp, ssp))
print()
# FAST against each other algorithm: measured speedup, then simulated
print("| rate | size | traffic | " + " | ".join("FAST vs %s (sim)" % a for a in others) + " |")
print("|---|---|---|" + "---:|" * len(others))
for key, cur in cell.items():
    fm, fs = float(cur["fast"][4]), float(cur["fast"][9])
    sp = []
    for a in others:
        m, s = float(cur[a][4]) / fm, float(cur[a][9]) / fs
        sp.append("%.2fx" % m + ("" if math.isnan(s) else " (%.2fx)" % s))
    print("| %s | %s | %s | %s |" % (key + (" | ".join(sp),)))
bad = sum(int(r[10]) for r in rows)
print()
print("wrong bytes over all runs: %d" % bad)
sys.exit(1 if bad else 0)
EOF
