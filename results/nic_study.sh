#!/usr/bin/env bash
# The degraded-cluster study (issue 25, docs/clusters.md): every schedule
# on clusters whose NICs are not all equal, against the bound (the LP plus
# the latency floor), and FAST compiled for the real topology ("aware")
# against the plan FAST compiled for the healthy one, run unchanged on the
# real one ("healthy plan": what a degradation does to a schedule that
# does not know of it).
#
#   bash results/nic_study.sh [FAST] [OUT.csv]
#
# Defaults: build/bin/fast, results/nics.csv.  Presets h200 and
# mi300x-100g; 4 x 8 at SIZES4 and 16 x 8 at SIZES16 per GPU (env;
# hier's simulation at 16 x 8 and 1 GiB takes about a minute: left out
# by default); traffic uniform, Zipf 0.8 and a bundled trace (the first
# matrix of DeepSeek-V2-Lite EP32 at 4 x 8, of switch-base-128 EP128 at
# 16 x 8, scaled to the size).  Scenarios (server 1 is the degraded one):
#
#   healthy     every NIC at its rate
#   nic50       server 1 NIC 3 at 50%
#   nic25       server 1 NIC 3 at 25%
#   nicdown     server 1 NIC 3 down
#   twodown     server 1 NICs 3 and 5 down
#   nics_half   K = G/2: two GPUs behind each NIC
#   nics_double K = 2G: each GPU drives two NICs
#
# One row per (case, algorithm): time_s, the bound of the real
# topology, ratio = time / bound; algo "fast_healthy_plan" is the healthy
# plan simulated on the real topology, with status "refused" (and no
# time) where it crosses a NIC that is down -- fast check refuses it too.
set -euo pipefail
FAST=${1:-build/bin/fast}
OUT=${2:-results/nics.csv}
SIZES4=${SIZES4:-"16M 64M 256M 1G"}
SIZES16=${SIZES16:-"16M 64M 256M"}
ALGOS=fast,fanout,nccl,pxn,spreadout,hier,auto
[ -x "$FAST" ] || { echo "nic_study.sh: $FAST not found; run make first" >&2; exit 2; }
scenario_flags() {
	case $1 in
	healthy) echo "" ;;
	nic50) echo "--nic 1:3=0.5" ;;
	nic25) echo "--nic 1:3=0.25" ;;
	nicdown) echo "--nic 1:3=0" ;;
	twodown) echo "--nic 1:3=0 --nic 1:5=0" ;;
	nics_half) echo "--nics 4" ;;
	nics_double) echo "--nics 16" ;;
	esac
}
. results/study_lib.sh # trace_of
TMP=$(mktemp -d)
trap 'rm -rf "$TMP" "$OUT.tmp"' EXIT
echo "preset,servers,gpus,traffic,size_bytes,scenario,algo,status,time_s,bound_s,ratio" >"$OUT.tmp"
for preset in h200 mi300x-100g; do
	for N in 4 16; do
		sizes=$SIZES4
		[ "$N" = 16 ] && sizes=$SIZES16
		for traffic in uniform zipf trace; do
			for size in $sizes; do
				t=$TMP/t.json
				if [ "$traffic" = trace ]; then
					python3 results/scale_trace.py "$(trace_of "$N")" "$size" "$t"
				else
					"$FAST" gen --preset "$preset" --servers "$N" --gpus 8 --pattern "$traffic" \
						--mean-bytes "$size" -o "$t" >/dev/null
				fi
				topo="--preset $preset --servers $N --gpus 8"
				# shellcheck disable=SC2086
				"$FAST" plan $topo --traffic "$t" --algo fast -o "$TMP/healthy.json" >/dev/null
				for sc in healthy nic50 nic25 nicdown twodown nics_half nics_double; do
					flags=$(scenario_flags "$sc")
					# shellcheck disable=SC2086
					"$FAST" compare $topo $flags --traffic "$t" --algos "$ALGOS" --csv --no-timing \
						>"$TMP/c.csv"
					# shellcheck disable=SC2086
					if "$FAST" sim $topo $flags --plan "$TMP/healthy.json" --traffic "$t" --json \
						>"$TMP/s.json" 2>"$TMP/s.err"; then
						hs=ok
					elif grep -q "down" "$TMP/s.err"; then
						hs=refused
					else
						cat "$TMP/s.err" >&2
						exit 1
					fi
					python3 - "$preset" "$N" "$traffic" "$size" "$sc" "$hs" "$TMP/c.csv" \
						"$TMP/s.json" >>"$OUT.tmp" <<'PY'
import csv, json, sys
units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
preset, N, traffic, size, sc, hs, cpath, spath = sys.argv[1:9]
nbytes = int(size[:-1]) * units[size[-1]]
head = [preset, N, 8, traffic, nbytes, sc]
bound = None
for r in csv.DictReader(open(cpath)):
    bound = float(r["bound_s"])
    print(",".join(str(x) for x in head + [r["algo"], "ok", r["time_s"], r["bound_s"], r["ratio"]]))
if hs == "ok":
    p = json.load(open(spath))["plans"][0]
    print(",".join(str(x) for x in head + ["fast_healthy_plan", "ok", p["time_s"], bound,
                                            p["time_s"] / bound]))
else:
    print(",".join(str(x) for x in head + ["fast_healthy_plan", "refused", "", bound, ""]))
PY
				done
			done
		done
	done
done
mv "$OUT.tmp" "$OUT"
echo "wrote $OUT" >&2
