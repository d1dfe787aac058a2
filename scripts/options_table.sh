#!/usr/bin/env bash
# The compiler-option study behind FAST's defaults (docs/algorithms.md, "Compiler
# options"): FAST time / bound (the LP plus the latency floor) in the
# simulator for every combination of --stages, --balance and --order, on
# h200 and mi300x-100g, 4 and 16 servers x 8 GPUs, uniform random and Zipf
# 0.8 traffic at 256 MiB per GPU (seed 1).
#
#   scripts/options_table.sh [build/bin/fast]
set -eu
F=${1:-build/bin/fast}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%-22s' ""
for st in auto exact; do for bal in upfront jit; do printf '| %-22s' "$st, $bal"; done; done
printf '\n%-22s' "preset N traffic"
for i in 1 2 3 4; do printf '| %-6s %-6s %-8s' dec large small; done
echo
for preset in h200 mi300x-100g; do for s in 4 16; do for pat in random zipf; do
	t=$tmp/${preset}_${s}_${pat}.json
	skew=()
	[ $pat = zipf ] && skew=(--skew 0.8)
	"$F" gen --preset $preset --servers $s --pattern $pat "${skew[@]}" --mean-bytes 256M --seed 1 -o "$t" >/dev/null 2>&1
	printf '%-22s' "$preset $s $pat"
	for st in auto exact; do for bal in upfront jit; do
		for ord in decomposition largest-first smallest-first; do
			r=$("$F" sim --preset $preset --servers $s --traffic "$t" --algo fast --stages $st \
				--balance $bal --order $ord |
				awk '{ for (i = 1; i < NF; i++) if ($i == "time/bound") print $(i + 1) }')
			printf '| %-6s ' "$r"
		done
		printf ' '
	done; done
	echo
done; done; done
