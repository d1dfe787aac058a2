#!/bin/bash
# Validate what the tool writes and what the repository ships against the
# JSON schemas: every preset (`fast topo show --preset X`, default and
# scaled), dense and sparse traffic written by `fast traffic convert`,
# every traces/*.json, the plan files `fast plan` writes, the --json output
# of sim, compare, bound, gate, run (under mpirun, when there is one),
# inspect and bench (schemas/<command>.schema.json), and the sweep specs.
# Exit 1 on any failure.
#
#   bash tests/schema/run.sh [path/to/fast]     (default build/bin/fast)
set -u
FAST=${1:-build/bin/fast}
case $FAST in /*) ;; *) FAST=$PWD/$FAST ;; esac
cd "$(dirname "$0")/../.." || exit 2
[ -x "$FAST" ] || FAST=${1:-build/bin/fast} # given relative to the repository root
PY=/usr/bin/python3
V="$PY tests/schema/validate.py"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail=0 n=0

check() { # schema file label
	n=$((n + 1))
	if ! out=$($V "$1" "$2" 2>&1); then
		echo "FAIL $3"
		echo "$out" | sed 's/^/  /'
		fail=$((fail + 1))
	fi
}

[ -x "$FAST" ] || { echo "tests/schema/run.sh: $FAST is not an executable" >&2; exit 2; }
presets=$("$FAST" topo list --json | $PY -c 'import json,sys; print(" ".join(p["name"] for p in json.load(sys.stdin)["presets"]))') ||
	{ echo "FAIL fast topo list --json"; exit 1; }
[ -n "$presets" ] || { echo "FAIL no presets listed"; exit 1; }
for p in $presets; do
	for dims in "" "--servers 2 --gpus 4" "--servers 16 --gpus 8"; do
		# shellcheck disable=SC2086
		if "$FAST" topo show --preset "$p" $dims > "$TMP/topo.json"; then
			check schemas/topology.schema.json "$TMP/topo.json" "preset $p $dims"
		else
			echo "FAIL fast topo show --preset $p $dims"; fail=$((fail + 1))
		fi
	done
done

# the traffic writers, dense and sparse
printf '0 16 32\n48 0 5\n7 8 0\n' > "$TMP/m.txt"
for to in json sparse; do
	if "$FAST" traffic convert "$TMP/m.txt" --to $to -o "$TMP/t-$to.json"; then
		check schemas/traffic.schema.json "$TMP/t-$to.json" "traffic convert --to $to"
	else
		echo "FAIL fast traffic convert --to $to"; fail=$((fail + 1))
	fi
done

# every command's --json on real inputs: a generated traffic and a trace
json() { # schema label command...
	local schema=$1 label=$2
	shift 2
	if "$@" > "$TMP/out.json" 2> "$TMP/err"; then
		check "$schema" "$TMP/out.json" "$label"
	else
		echo "FAIL $label: exit $?"; sed 's/^/  /' "$TMP/err"; fail=$((fail + 1)); n=$((n + 1))
	fi
}
SH="--preset h200 --servers 2 --gpus 4"
"$FAST" gen $SH --pattern zipf --skew 0.8 --mean-bytes 4M --seed 1 --matrices 2 -o "$TMP/z.json" > /dev/null 2>&1 ||
	{ echo "FAIL fast gen"; exit 1; }
check schemas/traffic.schema.json "$TMP/z.json" "fast gen"
TR=traces/olmoe-arxiv-ep16.json
for algo in fast nccl pxn hier spreadout fanout; do
	"$FAST" plan $SH --traffic "$TMP/z.json" --algo $algo -o "$TMP/p-$algo.json" 2> /dev/null &&
		check schemas/plan.schema.json "$TMP/p-$algo.json" "fast plan --algo $algo" ||
		{ echo "FAIL fast plan --algo $algo"; fail=$((fail + 1)); }
done
# a rail step of several permutations (plan version 4)
check schemas/plan.schema.json tests/golden/check_ok_grouped/plan.json "a grouped rail step (version 4)"
json schemas/sim.schema.json "sim --json --steps" "$FAST" sim $SH --traffic "$TMP/z.json" --algo fast --json --steps
json schemas/sim.schema.json "sim --plan --json --timing" "$FAST" sim $SH --plan "$TMP/p-pxn.json" --traffic "$TMP/z.json" --json --timing
json schemas/sim.schema.json "sim trace --json" "$FAST" sim --preset h200 --servers 2 --traffic $TR --algo fast --matrix 0 --json
json schemas/sim.schema.json "sim --json --sync rank" "$FAST" sim $SH --traffic "$TMP/z.json" --algo spreadout --json --sync rank
json schemas/compare.schema.json "compare --json" "$FAST" compare $SH --traffic "$TMP/z.json" --json
# NICs as they are: a slow NIC, GPUs sharing NICs, a GPU driving two (every NIC listed)
json schemas/sim.schema.json "sim --json --nic 1:3=0.25" "$FAST" sim $SH --nic 1:3=0.25 --traffic "$TMP/z.json" --json
json schemas/sim.schema.json "sim --plan --json --nics 8" "$FAST" sim $SH --nics 8 --nic 0:5=0.5 --plan "$TMP/p-fast.json" --json
json schemas/compare.schema.json "compare --json --nics 2" "$FAST" compare $SH --nics 2 --traffic "$TMP/z.json" --algos fast,nccl --json --no-timing
json schemas/compare.schema.json "compare --json --sync rank" "$FAST" compare $SH --traffic "$TMP/z.json" --json --no-timing --sync rank
json schemas/compare.schema.json "compare --json --no-timing" "$FAST" compare $SH --traffic "$TMP/z.json" --json --no-timing
json schemas/compare.schema.json "compare --json with auto" "$FAST" compare $SH --traffic "$TMP/z.json" --algos fast,fanout,auto --json
json schemas/bound.schema.json "bound --json" "$FAST" bound $SH --traffic "$TMP/z.json" --json
json schemas/bound.schema.json "bound --json --closed-only" "$FAST" bound --preset mi300x-100g --servers 2 --traffic $TR --json --closed-only
json schemas/gate.schema.json "gate --json" "$FAST" gate $SH --traffic "$TMP/z.json" --max-ratio 2 --json --write-baseline "$TMP/base.csv"
json schemas/gate.schema.json "gate --json --baseline" "$FAST" gate $SH --traffic "$TMP/z.json" --max-ratio 2 --json --baseline "$TMP/base.csv"
json schemas/traffic-show.schema.json "traffic show --json" "$FAST" traffic show "$TMP/z.json" $SH --json
# token traffic: the file trace import writes, and its summary
if "$FAST" trace import --source deepseek-v2-lite --data tests/data/moe --ep 4 --gpus-per-server 2 --tokens \
	-o "$TMP/tok.json" > /dev/null; then
	check schemas/traffic.schema.json "$TMP/tok.json" "trace import --tokens"
	json schemas/traffic-show.schema.json "traffic show --json (tokens)" "$FAST" traffic show "$TMP/tok.json" --preset h200 --servers 2 --gpus 2 --json
	# one algorithm with two option sets, and the totals per kind
	json schemas/compare.schema.json "compare --json (tokens, per-kind totals)" "$FAST" compare --preset h200 \
		--servers 2 --gpus 2 --traffic "$TMP/tok.json" --algos fast,fast:dedup=gpu,hier --json --no-timing
else
	echo "FAIL fast trace import --tokens"; fail=$((fail + 1))
fi
json schemas/inspect.schema.json "inspect --json" "$FAST" inspect --plan "$TMP/p-fast.json" --json
json schemas/bench.schema.json "bench all --quick --json" "$FAST" bench all --quick --json
if command -v mpirun > /dev/null; then
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
	json schemas/run.schema.json "run --json" timeout 300 mpirun --oversubscribe -np 8 "$FAST" run $SH \
		--traffic "$TMP/z.json" --json -n 2 -w 1
	json schemas/run.schema.json "run --plan --json" timeout 300 mpirun --oversubscribe -np 8 "$FAST" run $SH \
		--plan "$TMP/p-hier.json" --traffic "$TMP/z.json" --json -n 2 -w 1
else
	echo "schema: no mpirun: fast run --json not validated"
fi

shopt -s nullglob
for f in results/specs/*.json tests/golden/*/spec.json tests/sweep/*.json; do
	check schemas/sweep-spec.schema.json "$f" "$f"
done
for f in tests/golden/*/plan*.json; do
	case $f in */plan_bad*) continue ;; esac
	check schemas/plan.schema.json "$f" "$f"
done
for f in traces/*.json; do
	check schemas/traffic.schema.json "$f" "$f"
done

# schema and loader agree: inputs the loader accepts in golden tests are
# valid, and bad inputs of a kind a schema can express are invalid
for f in tests/golden/*/topo.json; do
	check schemas/topology.schema.json "$f" "$f"
done
for f in tests/golden/traffic_*/t.json; do
	check schemas/traffic.schema.json "$f" "$f"
done
reject() { # schema file
	n=$((n + 1))
	if $V "$1" "$2" > /dev/null 2>&1; then
		echo "FAIL $2: the loader rejects it but the schema accepts it"
		fail=$((fail + 1))
	fi
}
for c in topo_zero_servers topo_zero_gpus topo_efficiency_out_of_range topo_bandwidth_not_positive \
	topo_wrong_type topo_unknown_kind topo_case_different_key topo_duplicate_key \
	topo_missing_version topo_bad_version topo_json_syntax; do
	reject schemas/topology.schema.json tests/bad/$c/topo.json
done
for c in traffic_json_syntax traffic_wrong_type_rows traffic_wrong_type_gpus traffic_unknown_key \
	traffic_duplicate_key traffic_case_different_key traffic_negative_bytes \
	traffic_fractional_bytes traffic_bytes_over_2p53 traffic_zero_gpus traffic_bad_version \
	traffic_missing_version traffic_rows_and_entries traffic_no_matrices traffic_both_gpus_names \
	traffic_tokens_zero_tokens traffic_tokens_no_dests traffic_tokens_need_version_3 \
	traffic_tokens_unknown_kind traffic_tokens_with_rows traffic_tokens_groups_without_kind \
	traffic_tokens_group_not_a_triple traffic_tokens_missing_token_bytes \
	traffic_tokens_zero_token_bytes; do
	reject schemas/traffic.schema.json tests/bad/$c/t.json
done

for c in plan_bad_version plan_both_gpus_names plan_token_kind_needs_v3 plan_token_mask_leading_zero \
	plan_token_reduce_in_dispatch plan_token_dispatch_piece_arity; do
	reject schemas/plan.schema.json tests/bad/$c/plan.json
done

echo "schema: $((n - fail)) of $n checks passed"
[ "$fail" -eq 0 ]
