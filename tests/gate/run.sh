#!/usr/bin/env bash
# The optimality gate on the bundled real MoE traces, as a CI job would run
# it: every matrix of every two-tier trace is planned with FAST, simulated,
# and compared with the lower bound (LP plus latency floor; fail above
# MAX_RATIO), and with the committed results in results/gate/ (fail on a
# regression beyond 2%, and
# --require-baseline: fail a matrix whose ident -- matrix bytes, topology,
# algorithm, options -- has no row there, so a stale baseline cannot pass).
#
#   tests/gate/run.sh build/bin/fast            check
#   tests/gate/run.sh build/bin/fast --write    rewrite the committed baselines
set -u
fast=${1:?usage: tests/gate/run.sh path/to/fast [--write]}
mode=${2:-check}
cd "$(dirname "$0")/../.." || exit 2
# worst FAST time / bound (LP plus latency floor) accepted on these traces
# (small messages: a few MB per GPU, where per-stage latency and overheads
# weigh the most)
declare -A max_ratio=([h200]=2.1 [mi300x-100g]=1.4)
pass=0
fail=0
for preset in h200 mi300x-100g; do
	for trace in traces/deepseek-v2-lite-intent-ep16.json traces/deepseek-v2-lite-intent-ep32.json \
		traces/deepseek-v2-lite-intent-ep64.json traces/olmoe-arxiv-ep16.json \
		traces/olmoe-github-ep16.json traces/switch128-pooled-ep16.json; do
		gpus=$(grep -Eo '"gpus(_total)?": *[0-9]*' "$trace" | head -1 | grep -o '[0-9]*$')
		servers=$((gpus / 8))
		name=$(basename "$trace" .json)-$preset
		base=results/gate/$name.csv
		if [ "$mode" = --write ]; then
			"$fast" gate --preset "$preset" --servers "$servers" --traffic "$trace" \
				--max-ratio 100 --write-baseline "$base" >/dev/null && echo "wrote $base"
			continue
		fi
		if out=$("$fast" gate --preset "$preset" --servers "$servers" --traffic "$trace" \
			--max-ratio "${max_ratio[$preset]}" --baseline "$base" --require-baseline --tolerance 0.02 2>&1); then
			pass=$((pass + 1))
			echo "ok   $name: $(echo "$out" | tail -1)"
		else
			fail=$((fail + 1))
			echo "FAIL $name"
			echo "$out" | tail -15
		fi
	done
done
[ "$mode" = --write ] && exit 0
echo "gate: $pass passed, $fail failed"
[ $fail = 0 ]
