#!/usr/bin/env bash
# Run every CUnit suite in DIR; print one line per suite and a total.
set -u
dir=${1:?usage: run_unit.sh build/bin/tests}
pass=0
fail=0
for t in "$dir"/test_*; do
	[ -x "$t" ] || continue
	name=$(basename "$t")
	log=$(mktemp)
	if timeout "${UNIT_TIMEOUT:-300}" "$t" >"$log" 2>&1; then
		n=$(awk '/^ *tests/ {print $3}' "$log")
		echo "ok   $name (${n:-?} tests)"
		pass=$((pass + 1))
	else
		echo "FAIL $name"
		grep -E "FAILED|failed|Assert|error" "$log" | head -30
		tail -8 "$log"
		fail=$((fail + 1))
	fi
	rm -f "$log"
done
echo "unit suites: $pass passed, $fail failed"
[ $fail = 0 ]
