#!/usr/bin/env bash
# tests/testbed/rateseries.sh - one rail at full, half and a quarter of its
# rate, and how the simulator's core shares (scale_out.core_sharing):
# maxmin (a switch) against demand (a processor serving packets in their
# order of arrival).  A measurement, not a timed test; root.
#
#   bash tests/testbed/rateseries.sh build/bin/fast
#   TOPO=results/testbed/degraded/band-slow-nic/topo-healthy.json FRACTIONS="1 0.5 0.25" \
#     ALGOS="fast-unaware fast fanout" OUT=build/testbed-rateseries bash tests/testbed/rateseries.sh build/bin/fast
#
# TOPO is a fitted healthy 4 x 4 topology (default: the one `make
# degraded-testbed` last fitted, build/testbed-degraded/slow-nic/
# topo-healthy.json); the fabric is brought up at RATE (default 200mbit)
# without calibration, once per fraction F of rail 2 of server 1 (up --nic
# 1:2=F).  On it, uniform traffic of SIZE (default 4M) per GPU (seed 5, as
# bench.sh) as ITERS copies (default 9), each run once after a warm-up in
# one job (bench.sh's way), bytes verified, of: fast-unaware (FAST compiled
# for TOPO, the healthy fabric), fast (compiled for TOPO with the rail at
# F) and fanout.  Beside each median, `fast sim` of the same plan on TOPO
# with the rail at F, its core shared max-min and by demand (TOPO's other
# numbers as fitted).  Output: OUT/series.tsv, the plans, topologies and
# `fast run --json` files in OUT/, and the table on stdout.
set -u
FAST=${1:?usage: tests/testbed/rateseries.sh FAST_BINARY}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$ROOT/build/testbed-rateseries}
TOPO=${TOPO:-$ROOT/build/testbed-degraded/slow-nic/topo-healthy.json}
RATE=${RATE:-200mbit} SIZE=${SIZE:-4M} ITERS=${ITERS:-9}
FRACTIONS=${FRACTIONS:-"1 0.5 0.25"} ALGOS=${ALGOS:-"fast-unaware fast fanout"}
export FAST_TESTBED_DIR=$OUT/tb
TB=$ROOT/scripts/testbed.sh
[ -f "$TOPO" ] || { echo "rateseries: no topology $TOPO (run make degraded-testbed, or give TOPO=)" >&2; exit 2; }
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd) && export FAST_TESTBED_DIR=$OUT/tb # absolute: the launchers name it
trap 'bash "$TB" down >/dev/null 2>&1' EXIT

# TOPO with rail 2 of server 1 at fraction $2, its core shared by $3
# (keep: as TOPO says)
topo_at() { # out fraction sharing
	python3 - "$TOPO" "$2" "$3" >"$1" <<'EOF'
import json, sys
t = json.load(open(sys.argv[1]))
f = float(sys.argv[2])
t["scale_out"]["nic_overrides"] = [] if f == 1 else [{"server": 1, "nic": 2, "fraction": f}]
if sys.argv[3] != "keep":
    t["scale_out"]["core_sharing"] = sys.argv[3]
json.dump(t, sys.stdout, indent=2)
EOF
}

cp "$TOPO" "$OUT/topo-healthy.json"
"$FAST" gen --topo "$TOPO" --pattern uniform --mean-bytes "$SIZE" --seed 5 -o "$OUT/T.json" >/dev/null || exit 1
python3 - "$OUT/T.json" "$ITERS" >"$OUT/rep.json" <<'EOF' || exit 1
import json, sys
d = json.load(open(sys.argv[1]))
d["matrices"] = [{"label": "it%d" % i, "rows": d["matrices"][0]["rows"]} for i in range(int(sys.argv[2]))]
json.dump(d, sys.stdout)
EOF
for f in T rep; do
	"$FAST" plan --topo "$TOPO" --traffic "$OUT/$f.json" --algo fast -o "$OUT/unaware-$f.json" >/dev/null || exit 1
done
printf 'fraction\talgo\tmedian_ms\tq1_ms\tq3_ms\tsim_maxmin_ms\tsim_demand_ms\n' >"$OUT/series.tsv"
echo "# $(uptime)"
for f in $FRACTIONS; do
	nic=()
	[ "$f" != 1 ] && nic=(--nic "1:2=$f")
	bash "$TB" up --servers 4 --gpus 4 --rate "$RATE" "${nic[@]}" --no-calibrate >"$OUT/up-$f.log" 2>&1 ||
		{ cat "$OUT/up-$f.log" >&2; exit 1; }
	for s in keep maxmin demand; do topo_at "$OUT/topo-$f-$s.json" "$f" $s; done
	for algo in $ALGOS; do
		# the plan run (compiled by the ranks on TOPO at F, or the healthy
		# one) and, compiled the same way, the one simulated both ways
		how=(--algo "$algo")
		[ "$algo" = fast-unaware ] && how=(--plan "$OUT/unaware-rep.json")
		plan=$OUT/unaware-T.json
		if [ "$algo" != fast-unaware ]; then
			plan=$OUT/plan-$f-$algo.json
			"$FAST" plan --topo "$OUT/topo-$f-keep.json" --traffic "$OUT/T.json" --algo "$algo" -o "$plan" >/dev/null || exit 1
		fi
		bash "$TB" mpirun -np 16 "$FAST" run --topo "$OUT/topo-$f-keep.json" --traffic "$OUT/rep.json" "${how[@]}" \
			-n 1 -w 1 -c 1 --json >"$OUT/run-$f-$algo.json" 2>"$OUT/run-$f-$algo.err" ||
			{ tail -5 "$OUT/run-$f-$algo.err" >&2; exit 1; }
		sims=()
		for s in maxmin demand; do
			sims+=("$("$FAST" sim --topo "$OUT/topo-$f-$s.json" --traffic "$OUT/T.json" --plan "$plan" --json |
				python3 -c 'import json,sys; print(json.load(sys.stdin)["plans"][0]["time_s"] * 1e3)')") || exit 1
		done
		python3 - "$OUT/run-$f-$algo.json" "$f" "$algo" "${sims[@]}" >>"$OUT/series.tsv" <<'EOF' || exit 1
import json, statistics, sys
rows = json.load(open(sys.argv[1]))["rows"]
if any(r["wrong"] for r in rows):
    sys.exit("wrong bytes in " + sys.argv[1])
t = sorted(r["time_s"] * 1e3 for r in rows)
q = statistics.quantiles(t, n=4) if len(t) > 1 else [t[0]] * 3
print("%s\t%s\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f" % (sys.argv[2], sys.argv[3], statistics.median(t), q[0], q[2],
                                               float(sys.argv[4]), float(sys.argv[5])))
EOF
	done
	bash "$TB" down >/dev/null 2>&1
done
echo "# $(uptime)"
python3 - "$OUT/series.tsv" <<'EOF'
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])][1:]
print("| rail 2 of server 1 | algo | measured median ms | IQR ms | sim maxmin ms | error | sim demand ms | error |")
print("|---|---|---:|---:|---:|---:|---:|---:|")
for f, a, med, q1, q3, mm, dm in rows:
    med, mm, dm = float(med), float(mm), float(dm)
    print("| %s | %s | %.1f | %.1f | %.1f | %+.0f%% | %.1f | %+.0f%% |" % (
        f, a, med, float(q3) - float(q1), mm, 100 * (mm - med) / med, dm, 100 * (dm - med) / med))
EOF
