#!/usr/bin/env bash
# The whole test suite, stage by stage, each with a time budget (seconds).
# CI (2 cores, 90 min hard limit) must finish in under 25 minutes in all,
# and the budgets add up to at most that (checked at the end of a full run).
#
#   stage        budget  what
#   unit             45  CUnit suites (build/bin/tests/test_*)
#   golden           75  CLI golden tests and the bad-input table
#   schema           40  presets, traces, plans, specs, every --json vs the schemas
#   mpi             150  fast run under mpirun (host backend), interposer
#   testbed         165  fast run over an emulated 4 x 4 cluster (network
#                        namespaces, TCP rails; scripts/testbed.sh): every
#                        algorithm, 0 wrong bytes, a killed rank, teardown
#                        (skipped where namespaces are not; FAST_TESTBED=require
#                        fails instead); hard limit: timeout 300
#   sweep            20  a killed sweep resumes without loss or duplicates;
#                        mpirun -np 4 gives the serial rows
#   gate             20  fast gate on the bundled real traces: FAST / bound
#                        under a limit, no regression against results/gate/
#   install          90  make install into a temporary prefix, the tour from
#                        elsewhere, pkg-config builds, make uninstall
#   sanitizer       190  ASan+UBSan build: unit suites and golden tests
#   python           40  import fast (python/fast over libfast.so) against the
#                        CLI under /usr/bin/python3 (tests/python/run.sh), and
#                        fast.torch against torch.distributed, 8 gloo ranks
#                        (where python3-torch is: CI installs it)
#   valgrind        380  golden tests under valgrind memcheck
#   fuzz            150  fuzz corpus replay and 30 s of fuzzing per target
#                        (where clang is: CI installs it)
#   gpu             120  CUDA/HIP backends compile and link (where compilers exist)
#
# A stage over budget is reported; the run fails only on test failures or
# when the whole run passes 25 minutes.  A stage whose script exits 77 (the
# automake convention) skipped: it is counted as skipped, not passed, with
# the reason it printed ("skipped: ..."); a stage that passed but skipped a
# part (one of two GPU toolchains) lists that part in the summary.
#
#   bash tests/run_all.sh              every stage
#   bash tests/run_all.sh STAGE...     only these (make test-san = sanitizer)
set -u
cd "$(dirname "$0")/.." || exit 2
only=" $* "
BUILD=${BUILD:-build}
BIN=$BUILD/bin
total_start=$(date +%s)
pass=0
fail=0
skip=0
budget_sum=0
summary=()
stagelog=$(mktemp)
trap 'rm -f "$stagelog"' EXIT

stage() {
	local name=$1 budget=$2
	shift 2
	local t0 t1 rc
	budget_sum=$((budget_sum + budget))
	[ "$only" = "  " ] || [[ $only == *" $name "* ]] || return 0
	echo
	echo "=== stage $name (budget ${budget}s)"
	t0=$(date +%s)
	"$@" 2>&1 | tee "$stagelog"
	rc=${PIPESTATUS[0]}
	t1=$(date +%s)
	local took=$((t1 - t0)) note="" why
	[ $took -gt "$budget" ] && note=" OVER BUDGET"
	why=$(grep -m3 '^skipped: ' "$stagelog" | sed 's/^skipped: //' | paste -sd ';' -)
	if [ $rc = 77 ]; then
		skip=$((skip + 1))
		summary+=("skip  $name ${took}s/${budget}s$note: ${why:-no reason given}")
	elif [ $rc = 0 ]; then
		pass=$((pass + 1))
		summary+=("ok    $name ${took}s/${budget}s$note${why:+ (skipped: $why)}")
	else
		fail=$((fail + 1))
		summary+=("FAIL  $name ${took}s/${budget}s$note")
	fi
}

san_stage() {
	make -s -j2 SANITIZE=address,undefined all tests-build >/dev/null || return 1
	# a quarter of the property tests' random cases (unit.h, unit_cases):
	# the plain unit stage runs them all
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 FAST_UNIT_QUICK=1 \
		bash tests/run_unit.sh build-san/bin/tests || return 1
	ASAN_OPTIONS=detect_leaks=1 bash tests/golden/run.sh build-san/bin/fast
}

valgrind_stage() {
	WRAP=valgrind GOLDEN_TIMEOUT=300 bash tests/golden/run.sh "$BIN/fast"
}

optional() {
	# run a stage script if it exists; a missing one is a skip, said as such
	if [ -f "$1" ]; then
		bash "$@"
	else
		echo "skipped: $1 not present"
		return 77
	fi
}

stage unit 45 bash tests/run_unit.sh "$BIN/tests"
stage golden 75 bash tests/golden/run.sh "$BIN/fast"
stage schema 40 optional tests/schema/run.sh "$BIN/fast"
stage mpi 150 optional tests/mpi/run.sh "$BIN/fast"
stage testbed 165 timeout -k 10 300 bash tests/testbed/run.sh "$BIN/fast"
stage sweep 20 bash tests/sweep/resume.sh "$BIN/fast"
stage gate 20 bash tests/gate/run.sh "$BIN/fast"
stage install 90 bash tests/install/run.sh
stage sanitizer 190 san_stage
stage python 40 bash tests/python/run.sh "$BIN/fast"
stage valgrind 380 valgrind_stage
stage fuzz 150 optional tests/fuzz/replay.sh
stage gpu 120 optional tests/gpu/compile_check.sh

total=$(( $(date +%s) - total_start ))
echo
echo "=== summary (${total}s in all, budget 1500s)"
printf '%s\n' "${summary[@]}"
[ $total -gt 1500 ] && { echo "FAIL: the suite took ${total}s, over its 25-minute budget"; fail=$((fail + 1)); }
[ $budget_sum -gt 1500 ] && { echo "FAIL: the stage budgets add up to ${budget_sum}s, over the suite's 1500s"; fail=$((fail + 1)); }
echo "$pass passed, $fail failed, $skip skipped"
[ $fail = 0 ]
