#!/usr/bin/env bash
# Golden CLI tests: every directory tests/golden/<case>/ and tests/bad/<case>/
# holds `cmd` (a bash snippet run from the repo root with $FAST = the binary,
# $TMP = a fresh temporary directory, $CASE = the case directory) and the
# expected `stdout`, `stderr` and `code`.
#
#   tests/golden/run.sh BIN [case-dir...]     compare
#   UPDATE=1 tests/golden/run.sh BIN case...  rewrite the expected files
#   WRAP=valgrind|none                        run $FAST under valgrind memcheck
#   GOLDEN_JOBS=N                             cases run at once (default 2)
#
# A case with a file `valgrind-skip` (its first line says why) is skipped
# under WRAP=valgrind: heavy cases that repeat code paths other cases cover,
# at memcheck's 20-50x cost; the sanitizer stage still runs them.
set -u
bin=${1:?usage: run.sh path/to/fast [case-dir...]}
shift
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
cd "$root" || exit 2

if [ $# -gt 0 ]; then
	cases=("$@")
else
	cases=()
	for d in tests/golden/*/ tests/bad/*/; do
		[ -f "$d/cmd" ] && cases+=("${d%/}")
	done
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fast="$bin"
if [ "${WRAP:-none}" = valgrind ]; then
	fast="$work/fast-vg"
	cat > "$fast" <<VG
#!/bin/sh
exec valgrind -q --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect \
  --errors-for-leak-kinds=definite,indirect --suppressions=$root/tests/valgrind.supp "$bin" "\$@"
VG
	chmod +x "$fast"
fi

# one case: run it in its own directory $work/<i>, leave the verdict (an
# empty file for a pass, the report for a failure) in $work/<i>/verdict
run_case() {
	local i=$1 c=${2%/} dir="$work/$1" tmp code want ok=1
	tmp="$dir/t"
	mkdir -p "$tmp"
	if [ "${WRAP:-none}" = valgrind ] && [ -f "$c/valgrind-skip" ]; then
		echo "skip $c under valgrind: $(head -1 "$c/valgrind-skip")" >"$dir/skipped"
		: >"$dir/verdict"
		return
	fi
	FAST="$fast" TMP="$tmp" CASE="$c" timeout "${GOLDEN_TIMEOUT:-120}" \
		bash -c "$(cat "$c/cmd")" >"$dir/out" 2>"$dir/err" </dev/null
	code=$?
	# paths of the temporary directory are not stable: normalise them
	sed -i "s#$tmp#\$TMP#g" "$dir/out" "$dir/err"
	if [ "${UPDATE:-0}" = 1 ]; then
		cp "$dir/out" "$c/stdout"
		cp "$dir/err" "$c/stderr"
		echo "$code" > "$c/code"
		echo "updated $c (exit $code)" >"$dir/verdict"
		return
	fi
	want=$(cat "$c/code" 2>/dev/null || echo missing)
	{
		if [ "$code" != "$want" ]; then
			echo "FAIL $c: exit code $code, expected $want"
		fi
		if ! cmp -s "$dir/out" "$c/stdout"; then
			echo "FAIL $c: stdout differs"
			diff -u "$c/stdout" "$dir/out" | head -20
		fi
		if ! cmp -s "$dir/err" "$c/stderr"; then
			echo "FAIL $c: stderr differs"
			diff -u "$c/stderr" "$dir/err" | head -20
		fi
	} >"$dir/verdict"
	rm -rf "$tmp"
}

# GOLDEN_JOBS cases at a time (default 2: CI's cores); reports in case order
jobs=${GOLDEN_JOBS:-2}
running=0
for i in "${!cases[@]}"; do
	if [ "$running" -ge "$jobs" ]; then
		wait -n
		running=$((running - 1))
	fi
	run_case "$i" "${cases[$i]}" &
	running=$((running + 1))
done
wait

pass=0
fail=0
skipped=0
for i in "${!cases[@]}"; do
	v="$work/$i/verdict"
	if [ "${UPDATE:-0}" = 1 ]; then
		cat "$v"
	elif [ -f "$work/$i/skipped" ]; then
		skipped=$((skipped + 1))
		cat "$work/$i/skipped"
	elif [ -f "$v" ] && [ ! -s "$v" ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		cat "$v" 2>/dev/null || echo "FAIL ${cases[$i]}: no verdict"
	fi
done
[ "${UPDATE:-0}" = 1 ] && exit 0
echo "golden: $pass passed, $fail failed${skipped:+, $skipped skipped}"
[ $fail = 0 ]
