#!/usr/bin/env bash
# Golden CLI tests: every directory tests/golden/<case>/ and tests/bad/<case>/
# holds `cmd` (a bash snippet run from the repo root with $FAST = the binary,
# $TMP = a fresh temporary directory, $CASE = the case directory) and the
# expected `stdout`, `stderr` and `code`.
#
#   tests/golden/run.sh BIN [case-dir...]     compare
#   UPDATE=1 tests/golden/run.sh BIN case...  rewrite the expected files
#   WRAP=valgrind|none                        run $FAST under valgrind memcheck
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

pass=0
fail=0
failed=()
for c in "${cases[@]}"; do
	c=${c%/}
	tmp="$work/t"
	rm -rf "$tmp"
	mkdir -p "$tmp"
	FAST="$fast" TMP="$tmp" CASE="$c" timeout "${GOLDEN_TIMEOUT:-120}" \
		bash -c "$(cat "$c/cmd")" >"$work/out" 2>"$work/err" </dev/null
	code=$?
	# paths of the temporary directory are not stable: normalise them
	sed -i "s#$tmp#\$TMP#g" "$work/out" "$work/err"
	if [ "${UPDATE:-0}" = 1 ]; then
		cp "$work/out" "$c/stdout"
		cp "$work/err" "$c/stderr"
		echo "$code" > "$c/code"
		echo "updated $c (exit $code)"
		continue
	fi
	ok=1
	want=$(cat "$c/code" 2>/dev/null || echo missing)
	if [ "$code" != "$want" ]; then
		echo "FAIL $c: exit code $code, expected $want"
		ok=0
	fi
	if ! cmp -s "$work/out" "$c/stdout"; then
		echo "FAIL $c: stdout differs"
		diff -u "$c/stdout" "$work/out" | head -20
		ok=0
	fi
	if ! cmp -s "$work/err" "$c/stderr"; then
		echo "FAIL $c: stderr differs"
		diff -u "$c/stderr" "$work/err" | head -20
		ok=0
	fi
	if [ $ok = 1 ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		failed+=("$c")
	fi
done
[ "${UPDATE:-0}" = 1 ] && exit 0
echo "golden: $pass passed, $fail failed"
[ $fail = 0 ]
