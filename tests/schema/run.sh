#!/bin/bash
# Validate what the tool writes and what the repository ships against the
# JSON schemas: every preset (`fast topo show --preset X`, default and
# scaled), dense and sparse traffic written by `fast traffic convert`, and
# every traces/*.json.  Exit 1 on any failure.
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

shopt -s nullglob
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
	traffic_missing_version traffic_rows_and_entries traffic_no_matrices; do
	reject schemas/traffic.schema.json tests/bad/$c/t.json
done

echo "schema: $((n - fail)) of $n checks passed"
[ "$fail" -eq 0 ]
