#!/usr/bin/env bash
# FAST with dedup against hier with dedup on DeepSeek-V2-Lite token
# traffic, h200, EP32 (4 x 8) and EP64 (8 x 8), every layer's dispatch
# and combine (docs/algorithms.md, "FAST at small sizes"): `fast compare
# --no-timing` of FAST built before (BEFORE) and after (AFTER), and of
# hier (AFTER's binary).  One CSV row per (ep, matrix, algo); FAST's rows
# are `fast_before` and `fast`.
#
#   bash results/grouped_tokens.sh BEFORE AFTER [OUT.csv]
# Default OUT: results/grouped_tokens.csv.
set -euo pipefail
BEFORE=${1:?usage: results/grouped_tokens.sh BEFORE_FAST AFTER_FAST [OUT.csv]}
AFTER=${2:?usage: results/grouped_tokens.sh BEFORE_FAST AFTER_FAST [OUT.csv]}
OUT=${3:-results/grouped_tokens.csv}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
rows() { # EP NAME: compare's CSV rows of single matrices as "ep,label,algo,time_s"
	awk -F, -v ep="$1" -v name="$2" 'NR > 1 && $1 ~ /^[0-9]+$/ {
		print ep "," $2 "," ($3 == "fast" && name != "" ? name : $3) "," $4 }'
}
echo "ep,label,algo,time_s" >"$OUT.tmp"
for ep in 32 64; do
	t=$TMP/ds$ep.json
	"$AFTER" trace import --source deepseek-v2-lite --ep "$ep" --tokens -o "$t" >/dev/null
	"$AFTER" compare --preset h200 --servers $((ep / 8)) --traffic "$t" --algos fast,hier \
		--no-timing --csv | rows "$ep" "" >>"$OUT.tmp"
	"$BEFORE" compare --preset h200 --servers $((ep / 8)) --traffic "$t" --algos fast \
		--no-timing --csv | rows "$ep" fast_before >>"$OUT.tmp"
done
mv "$OUT.tmp" "$OUT"
echo "wrote $OUT" >&2
