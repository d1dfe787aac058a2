#!/usr/bin/env bash
# The main job: a what-if study on bundled real MoE traffic.
#
# DeepSeek-V2-Lite routing (the ESFT "intent" task, 26 MoE layers, exact
# per-token routing) at expert parallelism 32 on 4 servers x 8 GPUs, on the
# paper's two fabrics: H200 + 400 Gb/s InfiniBand, and MI300X + 100 Gb/s RoCE.
# For one layer it compiles a FAST plan, proves it correct, summarises it and
# bounds it; then it compares every schedule against the GLPK lower bound on
# all 52 matrices (dispatch + combine of 26 layers) and draws FAST's Gantt
# chart.  Then the same routing as token traffic (`fast trace import
# --tokens`: a token crosses to a server once, the combine sums before
# crossing back): every schedule on dispatch and on combine of every
# layer, FAST and hier with per-server dedup, FAST without it
# (fast:dedup=gpu) and the others on the per-GPU bytes, against the token
# bound (token LP plus latency floor), with the bytes each moves across
# servers.  Outputs land in results/demo/ (or the directory given second).
#
#   scripts/demo.sh [path/to/fast [OUTDIR [TRACE [LAYERS]]]]
#
# TRACE (default the DeepSeek-V2-Lite EP32 trace) must be for 32 GPUs and
# hold a matrix 8; LAYERS (default all) are the layers of the token
# import; the tests run the demo on a shorter trace and fewer layers.
#
# The totals printed at the end are the `total` rows `fast compare --csv`
# wrote (time, time / bound, FAST speedup, bytes out), only converted to
# us and GiB and sorted: nothing is summed here
# (tests/golden/demo_totals_from_csv checks the printed totals against the
# CSVs).
set -eu
fast=${1:-build/bin/fast}
out=${2:-results/demo}
trace=${3:-traces/deepseek-v2-lite-intent-ep32.json}
layers=${4:-all}
token_algos=fanout,nccl,pxn,hier,fast:dedup=gpu,fast
mkdir -p "$out"

if [ -t 1 ]; then
	say() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }
else
	say() { printf '\n$ %s\n' "$*"; }
fi
run() { say "$*"; "$@"; }

run "$fast" traffic show "$trace" --preset h200 --matrix 8
run "$fast" plan --preset h200 --traffic "$trace" --matrix 8 --algo fast -o "$out/layer5-dispatch.plan.json"
run "$fast" check --preset h200 --traffic "$trace" --matrix 8 --plan "$out/layer5-dispatch.plan.json"
run "$fast" inspect --plan "$out/layer5-dispatch.plan.json"
run "$fast" bound --preset h200 --traffic "$trace" --matrix 8
run "$fast" sim --preset h200 --traffic "$trace" --matrix 8 --algo fast \
	--svg "$out/layer5-dispatch-h200.svg" --timeline "$out/layer5-dispatch-h200.trace.json"
for preset in h200 mi300x-100g; do
	say "$fast compare --preset $preset --traffic $trace --csv --no-timing > $out/compare-$preset.csv"
	"$fast" compare --preset "$preset" --traffic "$trace" --csv --no-timing > "$out/compare-$preset.csv"
	run "$fast" compare --preset "$preset" --traffic "$trace" --matrix 8 --svg "$out/layer5-dispatch-$preset-fast.svg"
done
say "totals over all matrices (the total rows of the CSVs)"
for preset in h200 mi300x-100g; do
	echo "$preset:"
	awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		$col["matrix"] == "total" {
			printf "  %-10s %12.1f us  %.3f x bound  FAST speedup %.2fx\n", $col["algo"],
			       $col["time_s"] * 1e6, $col["ratio"], $col["fast_speedup"] }' \
		"$out/compare-$preset.csv" | sort -k2 -n
done

tokens=$out/tokens-ep32.json
run "$fast" trace import --source deepseek-v2-lite --ep 32 --layers "$layers" --tokens -o "$tokens"
say "$fast traffic show $tokens --preset h200 --matrix 0 | sed -n '/^  tokens/,/^  cross-server/p'"
"$fast" traffic show "$tokens" --preset h200 --matrix 0 | sed -n '/^  tokens/,/^  cross-server/p'
for preset in h200 mi300x-100g; do
	say "$fast compare --preset $preset --traffic $tokens --algos $token_algos --csv --no-timing > $out/tokens-$preset.csv"
	"$fast" compare --preset "$preset" --traffic "$tokens" --algos "$token_algos" --csv --no-timing \
		> "$out/tokens-$preset.csv"
done
say "token traffic: totals over the layers, dispatch and combine apart (the total rows of the CSVs)"
for preset in h200 mi300x-100g; do
	for phase in dispatch combine; do
		echo "$preset $phase:"
		awk -F, -v phase="$phase" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
			$col["matrix"] == "total" && $col["label"] == phase {
				printf "  %-15s %10.1f us  %.3f x bound  FAST speedup %.2fx  %6.2f GiB across servers\n",
				       $col["algo"], $col["time_s"] * 1e6, $col["ratio"], $col["fast_speedup"],
				       $col["bytes_out"] / 1073741824 }' \
			"$out/tokens-$preset.csv" | sort -k2 -n
	done
done
echo
echo "wrote $out/ (plans, CSVs, SVG Gantt charts, a Perfetto trace, the token traffic)"
