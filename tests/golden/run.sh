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
#
# A failed command prints no partial result: every case of tests/bad that
# is one `$FAST CMD ...` line failing with 2, 3 or 4, without --json (or
# --csv, its alternative), of a command whose --help offers --json, is run
# a second time as `<case>+json`, with --json added: the same exit status
# and stderr, and nothing on stdout (JSON is printed as it goes, so a
# failure after the first element would leave half a document).  These
# variants are left out under WRAP=valgrind (they repeat their case's code
# paths).
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

# the --json variant of a bad-input case, when it has one (see above):
# its command line on stdout
declare -A takes_json
json_variant() {
	local c=$1 line sub
	[ "$(cat "$c/code" 2>/dev/null)" -ge 2 ] 2>/dev/null || return 1
	line=$(grep -v '^[[:space:]]*\(#\|$\)' "$c/cmd")
	[ "$(printf '%s\n' "$line" | wc -l)" = 1 ] && [[ $line == '$FAST '* ]] || return 1
	[[ $line == *--json* || $line == *--csv* || $line == *[\|\>\<\;\&\`]* ]] && return 1
	read -r _ sub _ <<<"$line"
	if [ -z "${takes_json[$sub]+set}" ]; then
		takes_json[$sub]=0
		"$bin" help "$sub" 2>/dev/null | grep -q -- '--json' && takes_json[$sub]=1
	fi
	[ "${takes_json[$sub]}" = 1 ] && printf '%s --json\n' "$line"
}
if [ "${WRAP:-none}" != valgrind ] && [ "${UPDATE:-0}" != 1 ]; then
	for c in "${cases[@]}"; do
		[[ $c == tests/bad/* ]] && json_variant "$c" >/dev/null && cases+=("$c+json")
	done
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fast="$bin"
if [ "${WRAP:-none}" = valgrind ]; then
	fast="$work/fast-vg"
	cat > "$fast" <<VG
#!/bin/sh
exec valgrind -q --read-inline-info=no --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect \
  --errors-for-leak-kinds=definite,indirect --suppressions=$root/tests/valgrind.supp "$bin" "\$@"
VG
	chmod +x "$fast"
fi

# one case: run it in its own directory $work/<i>, leave the verdict (an
# empty file for a pass, the report for a failure) in $work/<i>/verdict
run_case() {
	local i=$1 c=${2%/} dir="$work/$1" tmp code want ok=1 script want_out
	tmp="$dir/t"
	mkdir -p "$tmp"
	if [[ $c == *+json ]]; then
		c=${c%+json}
		if [ "${UPDATE:-0}" = 1 ]; then
			echo "not updated: $2 (a variant; its expected files are $c's)" >"$dir/verdict"
			return
		fi
		script=$(json_variant "$c") || script='echo "not a case with a --json variant" >&2; exit 99'
		want_out=/dev/null
	else
		script=$(cat "$c/cmd")
		want_out=$c/stdout
	fi
	if [ "${WRAP:-none}" = valgrind ] && [ -f "$c/valgrind-skip" ]; then
		echo "skip $c under valgrind: $(head -1 "$c/valgrind-skip")" >"$dir/skipped"
		: >"$dir/verdict"
		return
	fi
	FAST="$fast" TMP="$tmp" CASE="$c" timeout "${GOLDEN_TIMEOUT:-120}" \
		bash -c "$script" >"$dir/out" 2>"$dir/err" </dev/null
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
			echo "FAIL $2: exit code $code, expected $want"
		fi
		if ! cmp -s "$dir/out" "$want_out"; then
			echo "FAIL $2: stdout differs"
			diff -u "$want_out" "$dir/out" | head -20
		fi
		if ! cmp -s "$dir/err" "$c/stderr"; then
			echo "FAIL $2: stderr differs"
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
