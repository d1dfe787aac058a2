#!/usr/bin/env bash
# Regenerate the converted real MoE traces of this folder from the data set
# in data/moe (see traces/README.md for what each file is).
#
#   bash traces/import.sh [FAST_BINARY] [DATA_DIR] [OUT_DIR]
#
# Defaults, from wherever it is run: the checkout's build/bin/fast (or, for
# the copy `make install` puts in PREFIX/share/fast/traces, PREFIX/bin/fast),
# and data/moe and traces/ beside this script.
# tests/golden/trace_committed_reproduce checks the files match.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
fast=$root/build/bin/fast
[ -x "$fast" ] || fast=$root/../../bin/fast
fast=${1:-$fast}
data=${2:-$root/data/moe}
out=${3:-$root/traces}

imp() { # name, then trace import options
	local name=$1
	shift
	"$fast" trace import --data "$data" "$@" -o "$out/$name.json" >/dev/null
	echo "$out/$name.json"
}

# DeepSeek-V2-Lite, intent task: true per-token top-6 routing (exact dispatch)
imp deepseek-v2-lite-intent-ep16 --source deepseek-v2-lite --ep 16 --gpus-per-server 8
imp deepseek-v2-lite-intent-ep32 --source deepseek-v2-lite --ep 32 --gpus-per-server 8
imp deepseek-v2-lite-intent-ep64 --source deepseek-v2-lite --ep 64 --gpus-per-server 8 \
	--layers 1,6,11,16,21,26
# OLMoE-1B-7B: per-expert counts per domain (proportional method)
for d in arxiv book c4 github wikipedia tulu; do
	imp olmoe-$d-ep8 --source olmoe --domain $d --ep 8 --gpus-per-server 8
	imp olmoe-$d-ep16 --source olmoe --domain $d --ep 16 --gpus-per-server 8
done
# Mixtral-8x7B: 8 experts, one per GPU at EP8
for d in arxiv book c4 github wikipedia; do
	imp mixtral-$d-ep8 --source mixtral --domain $d --ep 8 --gpus-per-server 8
done
# switch-base-128, pooled over layers (weakest source: small, self-collected)
imp switch128-pooled-ep16 --source switch128 --ep 16 --gpus-per-server 8
# one expert per GPU: the only bundled routing data that fills 16 x 8 GPUs
imp switch128-pooled-ep128 --source switch128 --ep 128 --gpus-per-server 8
