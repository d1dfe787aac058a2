#!/usr/bin/env bash
# tests/install/run.sh - fast outside its checkout: `make install` into a
# temporary prefix, then, from another directory and with only the installed
# files: every command block of the README and docs/, compared with what
# they show (tests/install/readme_tour.py), the tour's main commands on the
# installed traces (and a
# trace import that finds the installed data set), `make demo`'s outputs
# equal to the committed results/demo, the man page and bash completion,
# a program built with pkg-config against every installed header and
# libfast.a, an MPI program against libfast_exec; the installed tree moved
# elsewhere still finds its data; `make uninstall` leaves the prefix empty.
#
#   bash tests/install/run.sh [MAKE_VARIABLES...]   (e.g. CC=clang)
#
# Rebuilds the objects that depend on PREFIX (cmd/trace.o: the data
# directory compiled in) and rebuilds them for the default PREFIX after.
# Prints "N passed, N failed"; exit 1 on failure.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
PREFIX=$WORK/prefix
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1
unset FAST_DATA_DIR
pass=0
fail=0

ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; [ -s "$WORK/out" ] && tail -15 "$WORK/out"; }
# check NAME COMMAND...: passes when COMMAND exits 0 (output in $WORK/out)
check() {
	local name=$1
	shift
	if "$@" >"$WORK/out" 2>&1; then ok "$name"; else bad "$name"; fi
}

if ! make -C "$ROOT" -s install PREFIX="$PREFIX" "$@" >"$WORK/out" 2>&1; then
	bad "make install PREFIX=\$tmp"
	echo "install: $pass passed, $fail failed"
	exit 1
fi
ok "make install PREFIX=\$tmp"

F=$PREFIX/bin/fast
T=$PREFIX/share/fast/traces
mkdir -p "$WORK/elsewhere"
cd "$WORK/elsewhere" || exit 2

# --- the tour, from elsewhere, on installed files only ---------------------
# every command block of the README and docs/, compared with what they show
check "the tour of the README and docs/ from the prefix equals them" \
	python3 "$ROOT/tests/install/readme_tour.py" "$PREFIX" "$ROOT"
check "fast topo list" "$F" topo list
check "fast gen" "$F" gen --preset h200 --pattern zipf --skew 0.8 --mean-bytes 256M --seed 1 -o zipf.json
check "fast trace import finds the installed data set" \
	bash -c "'$F' trace import --source olmoe --domain c4 --ep 16 --gpus-per-server 8 -o c4.json &&
		cmp c4.json '$T/olmoe-c4-ep16.json'"
ds=$T/deepseek-v2-lite-intent-ep32.json
check "fast traffic show" "$F" traffic show "$ds" --preset h200 --matrix 8
check "fast plan" "$F" plan --preset h200 --traffic "$ds" --matrix 8 --algo fast -o plan.json
check "fast check" "$F" check --preset h200 --traffic "$ds" --matrix 8 --plan plan.json
check "fast inspect" "$F" inspect --plan plan.json
check "fast bound" "$F" bound --preset h200 --traffic "$ds" --matrix 8
check "fast sim" "$F" sim --preset h200 --traffic "$ds" --matrix 8 --algo fast --svg g.svg
check "fast compare" "$F" compare --preset mi300x-100g --traffic zipf.json
check "fast gate (README example)" "$F" gate --preset h200 --servers 2 \
	--traffic "$T/deepseek-v2-lite-intent-ep16.json" --max-ratio 1.6
check "traces/import.sh remakes an installed trace" \
	bash -c "mkdir -p t && bash '$T/import.sh' '' '' t >/dev/null &&
		cmp t/olmoe-c4-ep8.json '$T/olmoe-c4-ep8.json'"
if python3 -c 'import jsonschema' 2>/dev/null; then
	check "installed schemas validate the outputs" python3 -c "
import json, jsonschema, sys
s = '$PREFIX/share/fast/schemas/'
for schema, doc in (('traffic', 'c4.json'), ('plan', 'plan.json')):
    jsonschema.validate(json.load(open(doc)), json.load(open(s + schema + '.schema.json')))"
fi

# make demo's outputs, made by the installed fast from a copy: the committed
# results/demo as they are (so make demo leaves git status clean)
mkdir -p demo && ln -s "$T" demo/traces
check "demo outputs equal the committed results/demo" \
	bash -c "cd demo && bash '$ROOT/scripts/demo.sh' '$F' >/dev/null &&
		diff -r -x tokens-ep32.json results/demo '$ROOT/results/demo'"

# --- man page, completion ---------------------------------------------------
man1=$PREFIX/share/man/man1/fast.1
check "man page renders every command's help" bash -c "
	page=\$(MANWIDTH=200 man -l '$man1' 2>&1) || exit 1
	for c in \$('$F' --help | sed -n '/^Commands:/,/^\$/s/^  \\([a-z]*\\) .*/\\1/p'); do
		first=\$('$F' help \$c | head -1)
		printf '%s\n' \"\$page\" | grep -qF -- \"\$first\" || { echo \"no \$c: \$first\"; exit 1; }
	done
	printf '%s\n' \"\$page\" | grep -q FAST_DATA_DIR"
if command -v groff >/dev/null; then
	check "man page: no groff warnings" bash -c "[ -z \"\$(groff -man -Tutf8 -ww -z '$man1' 2>&1)\" ]"
fi
check "bash completion: commands, options, presets" bash -c "
	source '$PREFIX/share/bash-completion/completions/fast'
	COMP_WORDS=(fast tr); COMP_CWORD=1; _fast; [ \"\${COMPREPLY[*]}\" = 'trace traffic' ] || exit 1
	COMP_WORDS=(fast trace --da); COMP_CWORD=2; _fast; [ \"\${COMPREPLY[*]}\" = --data ] || exit 1
	COMP_WORDS=(fast trace im); COMP_CWORD=2; _fast; [ \"\${COMPREPLY[*]}\" = import ] || exit 1
	COMP_WORDS=(fast sim --preset mi300x-); COMP_CWORD=3; _fast; [ \"\${COMPREPLY[*]}\" = mi300x-100g ]"

# --- headers, pkg-config, libraries -----------------------------------------
export PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig
{
	for h in $(cd "$PREFIX/include" && find fast -name '*.h' ! -name exec.h | sort); do
		echo "#include <$h>"
	done
	cat "$ROOT/tests/install/prog.c"
} >prog.c
check "every lib/ and sim/ header, libfast.a via pkg-config fast" bash -c "
	cc -std=c11 -Wall -Wextra -Werror \$(pkg-config --cflags fast) prog.c -o prog \
		\$(pkg-config --libs fast) && ./prog"
# the README's C example, as a reader would copy it
awk '/^```c$/ { on = 1; next } on && /^```$/ { exit } on' "$ROOT/README.md" >readme_prog.c
check "the README's C example builds with pkg-config fast and runs" bash -c "
	[ -s readme_prog.c ] && cc -std=c11 -Wall -Wextra -Werror \$(pkg-config --cflags fast) readme_prog.c \
		-o readme_prog \$(pkg-config --libs fast) && ./readme_prog | grep -q '^FAST .* us, bound .* us (LP .* us)$'"
{
	for h in $(cd "$PREFIX/include" && find fast -name '*.h' | sort); do echo "#include <$h>"; done
	cat "$ROOT/tests/install/prog_exec.c"
} >prog_exec.c
check "every header, libfast_exec via pkg-config fast-exec, under mpirun" bash -c "
	mpicc -std=c11 -Wall -Wextra -Werror \$(pkg-config --cflags fast-exec) prog_exec.c -o prog_exec \
		\$(pkg-config --libs fast-exec) && mpirun --oversubscribe -np 4 ./prog_exec"

# --- libfast.so and import fast ------------------------------------------------
check "libfast.so: soname links, only fast_api_* exported" bash -c "
	[ \"\$(readlink '$PREFIX/lib/libfast.so')\" = libfast.so.0 ] &&
	[ -f \"\$(readlink -f '$PREFIX/lib/libfast.so.0')\" ] &&
	objdump -p '$PREFIX/lib/libfast.so.0' | grep -q 'SONAME *libfast.so.0\$' &&
	[ -z \"\$(nm -D --defined-only '$PREFIX/lib/libfast.so' | awk '{print \$3}' | grep -v '^fast_api_')\" ]"
check "a C program against api.h alone via pkg-config fast-api" bash -c "
	cc -std=c11 -Wall -Wextra -Werror \$(pkg-config --cflags fast-api) '$ROOT/tests/install/prog_api.c' \
		-o prog_api \$(pkg-config --libs fast-api) -Wl,-rpath,'$PREFIX/lib' && ./prog_api"
PYSITE=$(make -s -C "$ROOT" --no-print-directory print-pysite PREFIX="$PREFIX")
if /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
	check "import fast from outside the checkout (PYTHONPATH=PREFIX/$PYSITE)" \
		env PYTHONPATH="$PREFIX/$PYSITE" /usr/bin/python3 -c "
import fast, os, subprocess, json
assert fast.__file__.startswith('$PREFIX/'), fast.__file__
t = fast.Topology.preset('h200', 2)
tr = fast.Traffic.load('$T/deepseek-v2-lite-intent-ep16.json')
cli = subprocess.run(['$F', 'sim', '--preset', 'h200', '--servers', '2', '--traffic',
                      '$T/deepseek-v2-lite-intent-ep16.json', '--matrix', '0', '--json'],
                     capture_output=True, text=True, check=True)
want = json.loads(cli.stdout)['plans'][0]
got = fast.sim(t, tr)['plans'][0]
assert got['time_s'] == want['time_s'] and got['bound_s'] == want['bound_s'], (got, want)"
	awk '/^```python$/ { on = 1; next } on && /^```$/ { exit } on' "$ROOT/README.md" >readme.py
	check "the README's Python example runs against the prefix" bash -c "
		[ -s readme.py ] && cd '$T/..' && PYTHONPATH='$PREFIX/$PYSITE' /usr/bin/python3 '$WORK/elsewhere/readme.py'"
else
	echo "skip import fast (no numpy for /usr/bin/python3: bash scripts/deps.sh)"
fi

# --- the installed tree moved: data found beside the executable --------------
mv "$PREFIX" "$WORK/moved"
check "moved install finds its data (BIN/../share/fast/data/moe)" \
	bash -c "'$WORK/moved/bin/fast' trace import --source mixtral --domain c4 --ep 8 -o m.json &&
		cmp m.json '$WORK/moved/share/fast/traces/mixtral-c4-ep8.json'"
mv "$WORK/moved" "$PREFIX"
mkdir -p "$WORK/lone/bin" && cp "$F" "$WORK/lone/bin/fast"

# --- uninstall ---------------------------------------------------------------
check "make uninstall PREFIX=\$tmp" make -C "$ROOT" -s uninstall PREFIX="$PREFIX" "$@"
check "nothing left in the prefix" bash -c "[ -d '$PREFIX' ] && [ -z \"\$(find '$PREFIX' -mindepth 1)\" ] || { find '$PREFIX' | head; exit 1; }"
"$WORK/lone/bin/fast" trace import --source olmoe >"$WORK/out" 2>&1
rc=$?
if [ $rc = 3 ] && grep -q "no MoE data set found (looked in $PREFIX/share/fast/data/moe" "$WORK/out"; then
	ok "a lone binary with no data set: exit 3, says where it looked"
else
	bad "a lone binary with no data set (exit $rc)"
fi

# back to the default PREFIX for the build tree (cmd/trace.o, the man page)
make -C "$ROOT" -s all "$@" >/dev/null 2>&1 || bad "rebuild for the default PREFIX"
echo "install: $pass passed, $fail failed"
[ $fail = 0 ]
