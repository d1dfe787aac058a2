#!/usr/bin/env bash
# Crash safety and determinism of `fast sweep`:
#  1. a serial run is the reference;
#  2. a run with 2 workers is killed midway (timeout -s KILL), a torn line
#     is appended as a crash mid-write would leave it, and the sweep is
#     rerun: it resumes (skips what was finished), leaves no duplicate key
#     and ends with the same rows as the serial run;
#  3. mpirun -np 4 gives the same rows as the serial run (when mpirun exists).
# Rows are compared on every column but synthesis_s (measured), ident included.
#
#   tests/sweep/resume.sh path/to/fast
set -u
fast=${1:?usage: resume.sh path/to/fast}
cd "$(dirname "$0")/../.." || exit 2
spec=tests/sweep/resume_spec.json
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
strip() { cut -d, -f1-24,26 "$1"; }
rows() { echo $(( $(wc -l < "$1") - 1 )); }

t0=$(date +%s.%N)
"$fast" sweep --spec $spec -o "$work/serial.csv" --jobs 1 --quiet >/dev/null || { echo "FAIL: serial run"; exit 1; }
t1=$(date +%s.%N)
total=$(rows "$work/serial.csv")
kill_after=$(python3 -c "print('%.2f' % max(0.3, ($t1 - $t0) / 3))")
echo "serial: $total rows in $(python3 -c "print('%.1f' % ($t1 - $t0))") s; killing a 2-worker run after ${kill_after} s"

timeout -s KILL "$kill_after" "$fast" sweep --spec $spec -o "$work/resumed.csv" --jobs 2 --quiet >/dev/null 2>&1
rc=$?
sleep 0.2
before=$(rows "$work/resumed.csv")
echo "killed run: exit $rc, $before rows finished"
if [ "$rc" != 137 ] || [ "$before" -le 0 ] || [ "$before" -ge "$total" ]; then
	echo "FAIL: the run was not interrupted midway (exit $rc, $before of $total rows)"
	fail=1
fi
# a torn last line, as a crash in the middle of a write would leave it
printf '17,topo=h200;N=4;G=8;up=450' >> "$work/resumed.csv"
out=$("$fast" sweep --spec $spec -o "$work/resumed.csv" --jobs 2 --quiet 2>"$work/err")
echo "rerun: $out"
grep -q "dropping a torn last line" "$work/err" || { echo "FAIL: the torn line was not reported"; cat "$work/err"; fail=1; }
echo "$out" | grep -q "$((total - before)) run, $before resumed" || { echo "FAIL: expected $((total - before)) run, $before resumed"; fail=1; }
dups=$(cut -d, -f2 "$work/resumed.csv" | sort | uniq -d | wc -l)
[ "$dups" = 0 ] || { echo "FAIL: $dups duplicate keys after resume"; fail=1; }
if diff <(strip "$work/serial.csv") <(strip "$work/resumed.csv") >/dev/null; then
	echo "ok: resumed rows equal the serial run's ($total rows, no duplicates)"
else
	echo "FAIL: resumed rows differ from the serial run"
	diff <(strip "$work/serial.csv") <(strip "$work/resumed.csv") | head -10
	fail=1
fi

if command -v mpirun >/dev/null 2>&1; then
	mpirun -np 4 --oversubscribe --allow-run-as-root "$fast" sweep --spec $spec \
		-o "$work/mpi.csv" --quiet >/dev/null 2>"$work/mpierr" || { echo "FAIL: mpirun sweep"; cat "$work/mpierr"; fail=1; }
	if diff <(strip "$work/serial.csv") <(strip "$work/mpi.csv") >/dev/null; then
		echo "ok: mpirun -np 4 rows equal the serial run's"
	else
		echo "FAIL: mpirun -np 4 rows differ from the serial run"
		fail=1
	fi
else
	echo "skipped: mpirun not found"
fi
[ $fail = 0 ] && echo "resume: ok" || echo "resume: FAILED"
exit $fail
