#!/usr/bin/env bash
# FAST with dedup against hier with dedup on DeepSeek-V2-Lite token
# traffic, h200, EP32 (4 x 8) and EP64 (8 x 8), every layer's dispatch
# and combine (docs/algorithms.md, "FAST at small sizes"): `fast compare
# --no-timing` of FAST by default (grouped rail steps where they model
# faster, two waves in flight) and hier.  One CSV row per (ep, matrix,
# algo).  results/grouped_tokens_before.csv is the run of the binary
# before grouping was the default (`fast` and `fast_grouped`, opt-in).
#
#   bash results/grouped_tokens.sh [FAST] [OUT.csv]
# Default FAST: build/bin/fast; OUT: results/grouped_tokens.csv.
set -euo pipefail
FAST=${1:-build/bin/fast}
OUT=${2:-results/grouped_tokens.csv}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
rows() { # EP: compare's CSV rows of single matrices as "ep,label,algo,time_s"
	awk -F, -v ep="$1" 'NR > 1 && $1 ~ /^[0-9]+$/ {
		print ep "," $2 "," $3 "," $4 }'
}
echo "ep,label,algo,time_s" >"$OUT.tmp"
for ep in 32 64; do
	t=$TMP/ds$ep.json
	"$FAST" trace import --source deepseek-v2-lite --ep "$ep" --tokens -o "$t" >/dev/null
	"$FAST" compare --preset h200 --servers $((ep / 8)) --traffic "$t" \
		--algos fast,hier --no-timing --csv | rows "$ep" >>"$OUT.tmp"
done
mv "$OUT.tmp" "$OUT"
echo "wrote $OUT" >&2
