#!/usr/bin/env bash
# Long local fuzzing of one target (tests/fuzz/fuzz_<target>.c) and upkeep
# of its corpus.  CI only replays the corpus and fuzzes briefly
# (tests/fuzz/replay.sh); this script is for the longer runs that grow it.
#
#   scripts/fuzz.sh run TARGET [SECONDS]   fuzz (default 300 s, one process)
#                                          in $BUILD/fuzz/work/TARGET, seeded
#                                          from the corpus and regress inputs
#   scripts/fuzz.sh merge TARGET           minimise corpus + work dir into
#                                          tests/fuzz/corpus/TARGET (-merge=1)
#   scripts/fuzz.sh cov TARGET             line coverage of the corpus
#                                          (llvm-cov report, lib/ and cmd/)
#
# Crashing inputs land in $BUILD/fuzz/artifacts/TARGET/.  Environment:
# BUILD (default build-fuzz), FUZZ_CC (default clang-14 or clang).
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build-fuzz}
cmd=${1:-}
t=${2:-}
if [ -z "$cmd" ] || [ -z "$t" ] || [ ! -f "tests/fuzz/fuzz_$t.c" ]; then
	sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'
	exit 2
fi
opts=(-timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048 -max_len=65536)
corpus=tests/fuzz/corpus/$t
regress=tests/fuzz/regress/$t
work=$BUILD/fuzz/work/$t
bin=$BUILD/fuzz/fuzz_$t
mkdir -p "$corpus" "$work" "$BUILD/fuzz/artifacts/$t"

case $cmd in
run)
	make -s -f tests/fuzz/Makefile BUILD="$BUILD" -j2
	secs=${3:-300}
	dirs=("$work" "$corpus")
	[ -d "$regress" ] && dirs+=("$regress")
	# the spec target opens the paths a spec names: run from the root,
	# stdin from /dev/null
	"$bin" "${opts[@]}" -max_total_time="$secs" -print_final_stats=1 \
		-dict="tests/fuzz/$t.dict" -artifact_prefix="$BUILD/fuzz/artifacts/$t/" \
		"${dirs[@]}" </dev/null
	;;
merge)
	make -s -f tests/fuzz/Makefile BUILD="$BUILD" -j2
	new=$(mktemp -d)
	trap 'rm -rf "$new"' EXIT
	"$bin" "${opts[@]}" -merge=1 "$new" "$corpus" "$work" </dev/null
	# content-named files (libFuzzer's sha1 names), the old set replaced
	rm -f "$corpus"/*
	cp "$new"/* "$corpus"/
	echo "corpus $corpus: $(ls "$corpus" | wc -l) files, $(du -sk "$corpus" | cut -f1) KiB"
	;;
cov)
	cc=${FUZZ_CC:-$(command -v clang-14 || command -v clang)}
	ver=$("$cc" --version | sed -n 's/.*clang version \([0-9]*\).*/\1/p')
	profdata=$(command -v "llvm-profdata-$ver" || command -v llvm-profdata)
	llvmcov=$(command -v "llvm-cov-$ver" || command -v llvm-cov)
	out=$BUILD/fuzz/cov
	mkdir -p "$out"
	srcs=(lib/*/*.c sim/*.c eval/*.c cmd/sweep_spec.c cmd/sweep_spec_axes.c cmd/sweep_case.c)
	"$cc" -std=c11 -O1 -g -D_POSIX_C_SOURCE=200809L -I. -Iinclude -fsanitize=fuzzer \
		-fprofile-instr-generate -fcoverage-mapping -w \
		-o "$out/fuzz_$t" "tests/fuzz/fuzz_$t.c" "${srcs[@]}" -lcjson -lglpk -lm
	files=()
	while IFS= read -r f; do files+=("$f"); done < <(find "$corpus" "$regress" -type f 2>/dev/null)
	LLVM_PROFILE_FILE="$out/$t.profraw" "$out/fuzz_$t" -timeout=10 "${files[@]}" \
		</dev/null >/dev/null 2>&1
	"$profdata" merge -sparse "$out/$t.profraw" -o "$out/$t.profdata"
	"$llvmcov" report "$out/fuzz_$t" -instr-profile="$out/$t.profdata" \
		-ignore-filename-regex='tests/fuzz/' "${srcs[@]}"
	;;
*)
	echo "scripts/fuzz.sh: unknown command '$cmd' (run, merge, cov)" >&2
	exit 2
	;;
esac
