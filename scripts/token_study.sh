#!/usr/bin/env bash
# The token-traffic study (issue 15, point 7): every schedule on the
# DeepSeek-V2-Lite routing as token traffic (`fast trace import --tokens`:
# task intent, 8,222 tokens, top-6 of 64 experts, all 26 layers) at EP16,
# EP32 and EP64 (2, 4, 8 servers x 8 GPUs), dispatch and combine apart, on
# the h200 and mi300x-100g presets, against the token bound (the token LP
# plus the latency floor):
#
#   fanout, nccl, pxn   the per-GPU byte view (a token once per destination GPU)
#   hier                DeepEP's normal kernels with per-server dedup
#   fast:dedup=gpu      FAST on the per-GPU byte view
#   fast                FAST with per-server dedup (the default on tokens)
#
# One `fast compare --csv --no-timing` per (EP, preset) on the trace's 52
# matrices; its rows go to OUTDIR/tokens.csv with the columns
# ep,servers,preset before compare's own (bytes_out: the bytes the plan
# moves across servers): one per matrix, then compare's total rows over
# the dispatch matrices (label dispatch), the combine ones (combine) and
# all (total).  Nothing is summed here.  The figures (OUTDIR/figures/tokens_<preset>.png) come from
# scripts/results_plot.py OUTDIR.
#
#   scripts/token_study.sh [--fast PATH] [OUTDIR]     (default results)
set -eu
cd "$(dirname "$0")/.."
fast=${FAST:-build/bin/fast}
if [ "${1:-}" = --fast ]; then fast=$2; shift 2; fi
case ${1:-} in -h|--help) sed -n '2,21p' "$0"; exit 0 ;; esac
out=${1:-results}
algos=fanout,nccl,pxn,hier,fast:dedup=gpu,fast
[ -x "$fast" ] || { echo "token_study.sh: $fast not found; run make first" >&2; exit 2; }
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "ep,servers,preset,matrix,label,algo,time_s,algbw_GBps,bound_s,ratio,fast_speedup,bytes_out" \
	> "$tmp/tokens.csv"
for ep in 16 32 64; do
	servers=$((ep / 8))
	"$fast" trace import --source deepseek-v2-lite --ep "$ep" --tokens -o "$tmp/ep$ep.json" >/dev/null
	for preset in h200 mi300x-100g; do
		"$fast" compare --preset "$preset" --servers "$servers" --traffic "$tmp/ep$ep.json" \
			--csv --no-timing --algos "$algos" > "$tmp/c.csv"
		tail -n +2 "$tmp/c.csv" | sed "s/^/$ep,$servers,$preset,/" >> "$tmp/tokens.csv"
	done
done
mv "$tmp/tokens.csv" "$out/tokens.csv"
echo "wrote $out/tokens.csv"
