#!/usr/bin/env bash
# FAST's rail steps of several permutations against the baselines
# (docs/algorithms.md, "FAST at small sizes"): per preset (h200,
# mi300x-100g), 4 x 8 and 16 x 8, uniform and Zipf 0.8 traffic and per-GPU
# size, `fast compare --no-timing` (simulated time, no synthesis) of FAST
# by default (--stages auto: grouped rail steps where they model faster,
# two waves in flight as the presets' implementation says), FAST with one
# permutation a rail step (--stages exact) and every baseline.  One CSV
# row per case and algorithm; FAST's rows are `fast` and `fast_exact`.
# results/grouped_study_before.csv is the run of the binary before
# grouping was the default (its `fast` the default then, `fast_grouped`
# --stages grouped opt-in); results/grouped_table.py reads both.
#
#   bash results/grouped_study.sh [FAST] [OUT.csv]
# Default FAST: build/bin/fast; OUT: results/grouped_study.csv.  SIZES
# overrides the sizes.
set -euo pipefail
FAST=${1:-build/bin/fast}
OUT=${2:-results/grouped_study.csv}
SIZES=${SIZES:-"256K 1M 4M 16M 64M"}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
rows() { # PREFIX: compare's CSV rows as "preset,servers,pattern,size,algo,time_s"
	awk -F, -v pre="$1" 'NR > 1 && $1 == 0 {
		print pre "," ($3 == "fast:stages=exact" ? "fast_exact" : $3) "," $4 }'
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
				"$FAST" gen --preset "$preset" --servers "$n" --gpus 8 --pattern "$pattern" \
					$skew --mean-bytes "$size" -o "$t" >/dev/null
				"$FAST" compare --preset "$preset" --servers "$n" --gpus 8 --traffic "$t" \
					--algos fast,fast:stages=exact,fanout,nccl,pxn,spreadout,hier \
					--no-timing --csv | rows "$preset,$n,$pattern,$size" >>"$OUT.tmp"
			done
		done
	done
done
mv "$OUT.tmp" "$OUT"
echo "wrote $OUT" >&2
