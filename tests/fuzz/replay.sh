#!/usr/bin/env bash
# tests/fuzz/replay.sh - the "fuzz" stage of tests/run_all.sh.
#
# Builds the libFuzzer targets (tests/fuzz/Makefile: clang, ASan, UBSan),
# replays every input of tests/fuzz/corpus/<target>/ and
# tests/fuzz/regress/<target>/ through its target, then fuzzes each target
# for FUZZ_SECONDS (default 30) starting from the corpus (a scratch copy:
# the repository's corpus is never modified).  Prints, per target, the files
# replayed, the seconds fuzzed and libFuzzer's final cov/ft.  Exits non-zero
# on any crash (sanitizer report, failed invariant, timeout over 10 s,
# memory over 2 GB) or a build failure; an input that crashes while fuzzing
# is kept under $FUZZ_BUILD/fuzz/artifacts/<target>/ for the record (add it
# to tests/fuzz/regress/<target>/ once fixed).
#
# Installs nothing: without clang or its libFuzzer runtime it says
# "skipped: ..." and exits 77, the suite's "skipped" status (scripts/deps.sh
# installs them).
#
#   bash tests/fuzz/replay.sh
#   FUZZ_SECONDS=0 bash tests/fuzz/replay.sh      replay only
#   FUZZ_TARGETS="plan topo" FUZZ_JOBS=1 FUZZ_SEED=7 bash tests/fuzz/replay.sh
#
# Environment: FUZZ_SECONDS (per target, default 30), FUZZ_JOBS (targets
# fuzzed at once, default 2: CI has 2 cores), FUZZ_TARGETS (default: every
# tests/fuzz/fuzz_*.c), FUZZ_SEED (libFuzzer -seed, default random),
# FUZZ_BUILD (build directory, default build-fuzz), FUZZ_CC (clang).
set -u
cd "$(dirname "$0")/../.." || exit 2

FUZZ_SECONDS=${FUZZ_SECONDS:-30}
FUZZ_JOBS=${FUZZ_JOBS:-2}
FUZZ_BUILD=${FUZZ_BUILD:-build-fuzz}
FUZZ_SEED=${FUZZ_SEED:-0}
if [ -z "${FUZZ_TARGETS:-}" ]; then
	FUZZ_TARGETS=$(ls tests/fuzz/fuzz_*.c | sed 's|.*/fuzz_||; s|\.c$||' | tr '\n' ' ')
fi
case $FUZZ_SECONDS in '' | *[!0-9]*) echo "fuzz: FUZZ_SECONDS must be a whole number" >&2; exit 2 ;; esac
case $FUZZ_JOBS in '' | 0 | *[!0-9]*) echo "fuzz: FUZZ_JOBS must be >= 1" >&2; exit 2 ;; esac

# --- toolchain -------------------------------------------------------------
cc=${FUZZ_CC:-}
if [ -z "$cc" ]; then
	for c in clang-14 clang; do
		if command -v "$c" >/dev/null 2>&1; then
			cc=$c
			break
		fi
	done
fi
if [ -z "$cc" ] || ! command -v "$cc" >/dev/null 2>&1; then
	echo "skipped: clang not found${cc:+ ($cc)} (scripts/deps.sh installs clang-14)"
	exit 77
fi
scratch=$(mktemp -d "${TMPDIR:-/tmp}/fast-fuzz.XXXXXX") || exit 2
trap 'rm -rf "$scratch"' EXIT
printf '#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n' \
	>"$scratch/probe.c"
if ! "$cc" -fsanitize=fuzzer,address,undefined "$scratch/probe.c" -o "$scratch/probe" \
	>"$scratch/probe.log" 2>&1; then
	echo "skipped: $cc cannot link -fsanitize=fuzzer,address,undefined" \
		"(libFuzzer/sanitizer runtime missing: apt-get install libclang-rt-14-dev):"
	sed 's/^/  /' "$scratch/probe.log" | tail -3
	exit 77
fi

# --- build -------------------------------------------------------------------
t0=$(date +%s)
if ! make -s -f tests/fuzz/Makefile BUILD="$FUZZ_BUILD" FUZZ_CC="$cc" -j2 >"$scratch/build.log" 2>&1; then
	echo "fuzz: building the targets failed:"
	tail -30 "$scratch/build.log"
	exit 1
fi
echo "fuzz: built the targets with $cc in $(($(date +%s) - t0))s"

# libFuzzer options shared by replay and fuzzing: a run over 10 s or 2 GB
# is a crash
opts=(-timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
fail=0

inputs() { # the corpus and regression files of target $1
	find "tests/fuzz/corpus/$1" "tests/fuzz/regress/$1" -type f 2>/dev/null | LC_ALL=C sort
}

# --- replay: every corpus and regression file, once ------------------------------
declare -A replayed replay_ok
for t in $FUZZ_TARGETS; do
	bin=$FUZZ_BUILD/fuzz/fuzz_$t
	mapfile -t files < <(inputs "$t")
	replayed[$t]=${#files[@]}
	replay_ok[$t]=0
	if [ ${#files[@]} -eq 0 ]; then
		echo "FAIL  $t: no corpus under tests/fuzz/corpus/$t"
		fail=1
		continue
	fi
	# the spec target opens the paths a spec names, relative to the root
	if ! "$bin" "${opts[@]}" "${files[@]}" </dev/null >"$scratch/replay-$t.log" 2>&1; then
		echo "FAIL  $t: replaying ${#files[@]} files crashed:"
		grep -E "Running:|ERROR|SUMMARY|invariant|runtime error" "$scratch/replay-$t.log" | tail -20
		fail=1
	else
		replay_ok[$t]=1
	fi
done

# --- fuzz: FUZZ_SECONDS per target, FUZZ_JOBS targets at a time -------------------
fuzz_one() {
	local t=$1 dir=$scratch/corpus-$t art=$FUZZ_BUILD/fuzz/artifacts/$t seed=() dict=()
	mkdir -p "$dir" "$art"
	# from the corpus only: the regress inputs were replayed above, and some
	# are slow on purpose (the limits they hit take a few hundred ms)
	find "tests/fuzz/corpus/$t" -type f -exec cp {} "$dir/" \; 2>/dev/null
	[ "$FUZZ_SEED" != 0 ] && seed=(-seed="$FUZZ_SEED")
	[ -s "tests/fuzz/$t.dict" ] && dict=(-dict="tests/fuzz/$t.dict")
	local t0=$SECONDS
	"$FUZZ_BUILD/fuzz/fuzz_$t" "${opts[@]}" "${seed[@]}" -max_len=65536 \
		-max_total_time="$FUZZ_SECONDS" -print_final_stats=1 \
		"${dict[@]}" -artifact_prefix="$art/" "$dir" \
		</dev/null >"$scratch/fuzz-$t.log" 2>&1
	echo $? >"$scratch/fuzz-$t.rc"
	echo $((SECONDS - t0)) >"$scratch/fuzz-$t.secs"
}

if [ "$FUZZ_SECONDS" -gt 0 ]; then
	running=0
	for t in $FUZZ_TARGETS; do
		[ -x "$FUZZ_BUILD/fuzz/fuzz_$t" ] || continue
		if [ $running -ge "$FUZZ_JOBS" ]; then
			wait -n
			running=$((running - 1))
		fi
		fuzz_one "$t" &
		running=$((running + 1))
	done
	wait
fi

# --- report ----------------------------------------------------------------------
for t in $FUZZ_TARGETS; do
	log=$scratch/fuzz-$t.log
	cov="-" ft="-" secs=0 runs="-" status=ok
	[ "${replay_ok[$t]:-0}" = 1 ] || status=FAIL
	if [ -f "$log" ]; then
		secs=$(cat "$scratch/fuzz-$t.secs" 2>/dev/null || echo "?")
		last=$(grep -E '^#[0-9]+.*cov: [0-9]+ ft: [0-9]+' "$log" | tail -1)
		cov=$(echo "$last" | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
		ft=$(echo "$last" | sed -n 's/.*ft: \([0-9]*\).*/\1/p')
		runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
		if [ "$(cat "$scratch/fuzz-$t.rc" 2>/dev/null)" != 0 ]; then
			status=FAIL
			fail=1
		fi
	fi
	printf '%-4s  %-8s replayed %4s files, fuzzed %3ss (%s runs), cov %s ft %s\n' \
		"$status" "$t" "${replayed[$t]:-0}" "$secs" "${runs:--}" "${cov:--}" "${ft:--}"
	if [ $status = FAIL ] && [ -f "$log" ]; then
		{ grep -E "ERROR|SUMMARY|invariant|runtime error|Test unit written|Seed:" "$log" ||
			tail -5 "$log"; } | tail -20 | sed 's/^/      /'
	fi
done
if [ $fail != 0 ]; then
	echo "fuzz: FAILED (crashing inputs: $FUZZ_BUILD/fuzz/artifacts/; reproduce with" \
		"$FUZZ_BUILD/fuzz/fuzz_<target> FILE)"
	exit 1
fi
echo "fuzz: ok"
