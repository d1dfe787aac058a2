#!/usr/bin/env bash
# FAST's rail steps of several permutations against the baselines
# (docs/algorithms.md, "FAST at small sizes"): per preset (h200,
# mi300x-100g), 4 x 8 and 16 x 8, uniform and Zipf 0.8 traffic and per-GPU
# size, `fast compare --no-timing` (simulated time, no synthesis) of FAST
# built before (BEFORE) and after (AFTER) and of every baseline (AFTER's
# binary: the baselines' plans are the same in both).  One CSV row per
# case and algorithm; FAST's rows are `fast_before` and `fast`.
#
#   bash results/grouped_study.sh BEFORE AFTER [OUT.csv]
# Default OUT: results/grouped_study.csv.  SIZES overrides the sizes.
set -euo pipefail
BEFORE=${1:?usage: results/grouped_study.sh BEFORE_FAST AFTER_FAST [OUT.csv]}
AFTER=${2:?usage: results/grouped_study.sh BEFORE_FAST AFTER_FAST [OUT.csv]}
OUT=${3:-results/grouped_study.csv}
SIZES=${SIZES:-"256K 1M 4M 16M 64M"}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
rows() { # NAME CSV-on-stdin: "preset,servers,pattern,size,algo,time_s" rows
	awk -F, -v pre="$1" 'NR > 1 && $1 == 0 { print pre "," ($3 == "fast" && name != "" ? name : $3) "," $4 }' name="$2"
}
echo "preset,servers,pattern,size,algo,time_s" >"$OUT.tmp"
for preset in h200 mi300x-100g; do
	for n in 4 16; do
		for pattern in uniform zipf; do
			for size in $SIZES; do
				t=$TMP/t.json
				skew=""
				[ "$pattern" = zipf ] && skew="--skew 0.8"
				# shellcheck disable=SC2086
				"$AFTER" gen --preset "$preset" --servers "$n" --gpus 8 --pattern "$pattern" \
					$skew --mean-bytes "$size" -o "$t" >/dev/null
				"$AFTER" compare --preset "$preset" --servers "$n" --gpus 8 --traffic "$t" \
					--algos fast,fanout,nccl,pxn,spreadout,hier --no-timing --csv |
					rows "$preset,$n,$pattern,$size" "" >>"$OUT.tmp"
				"$BEFORE" compare --preset "$preset" --servers "$n" --gpus 8 --traffic "$t" \
					--algos fast --no-timing --csv |
					rows "$preset,$n,$pattern,$size" fast_before >>"$OUT.tmp"
			done
		done
	done
done
mv "$OUT.tmp" "$OUT"
echo "wrote $OUT" >&2
