#!/usr/bin/env bash
# tests/gpu/mock_check.sh - run the cuda backend's host-side logic without a
# GPU: exec/ compiled with -DFAST_WITH_CUDA and linked against
# tests/gpu/mock_gpu.c (device memory = POSIX shared memory, IPC handles =
# shm names, streams as lazy queues; NCCL as files with FAST_MOCK_NCCL=1), then `fast run --backend cuda
# -c 1` under mpirun for every algorithm, one wave in flight and two: IPC
# get/acknowledge within a server, host-staged MPI between servers, bounce
# buffers, per-slot state and the copy chain across the slots' streams
# (every byte checked; the mock runs a copy only when something waits for
# it, so a missing order delivers wrong bytes).
#
#   bash tests/gpu/mock_check.sh [BUILD]    (default build/: reuses its cmd/
#                                           objects and libfast.a, builds them
#                                           if missing; output in BUILD/mock/)
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${1:-build}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_hwloc_base_binding_policy=none
MPIRUN="timeout 120 mpirun --oversubscribe --mca btl self,vader,tcp"
CFLAGS="-std=c11 -O2 -g -Wall -Wextra -Wshadow -Wstrict-prototypes -Wformat=2 -Werror -D_POSIX_C_SOURCE=200809L -I. -Iinclude"

if [ ! -f "$B/libfast.a" ] || [ ! -f "$B/cmd/main.o" ]; then
	make -s BUILD="$B" -j2 all >/dev/null || { echo "mock: host build failed"; exit 1; }
fi
mkdir -p "$B/mock"
for f in exec/*.c; do
	[ "$f" = exec/interpose.c ] && continue
	OMPI_CC=${CC:-cc} mpicc $CFLAGS -DFAST_WITH_CUDA -c "$f" -o "$B/mock/$(basename "$f" .c).o" || exit 1
done
${CC:-cc} $CFLAGS -c tests/gpu/mock_gpu.c -o "$B/mock/mock_gpu.o" || exit 1
# the objects of today's cmd/*.c only: a build directory may still hold
# the object of a source since removed
cmd_objs=()
for f in cmd/*.c; do cmd_objs+=("$B/cmd/$(basename "$f" .c).o"); done
mpicc -o "$B/mock/fast" "${cmd_objs[@]}" "$B"/mock/*.o "$B/libfast.a" -lcjson -lglpk -lm -lrt || exit 1

pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok - $1"; }
notok() { fail=$((fail + 1)); echo "not ok - $1"; tail -15 "$B/mock/out" | sed 's/^/    /'; }
# verdict NAME STATUS: ok or not ok by the status of the checks just run
verdict() { if [ "$2" = 0 ]; then ok "$1"; else notok "$1"; fi; }
# mock_run NP ARGS...: `fast run --backend cuda -c 1` on NP ranks of the
# h200 preset, its output in $B/mock/out
mock_run() {
	local np=$1
	shift
	$MPIRUN -np "$np" "$B/mock/fast" run --preset h200 --backend cuda -c 1 "$@" >"$B/mock/out" 2>&1
}
bytes_ok() { grep -q "Out of bounds values : 0 OK" "$B/mock/out"; }
for cfg in "8 2 4 tests/mpi/data/mix8.json" "16 4 4 tests/mpi/data/mix16.json"; do
	set -- $cfg
	for k in 1 2; do
		for algo in fast fanout nccl pxn spreadout hier mpi; do
			name="mock cuda, np $1, --in-flight $k: $algo"
			mock_run "$1" --servers "$2" --gpus "$3" --traffic "$4" --algo $algo \
				--in-flight $k -n 2 -w 1 && bytes_ok &&
				grep -q "check 1, $k waves\? in flight" "$B/mock/out"
			verdict "$name" $?
		done
	done
done
# two waves overlapping: FAST on uniform traffic posts its rail steps while
# the wave before runs (tests/unit/test_exec_flight.c); the default on cuda
# is two in flight; copies ride the base stream and both slots' streams
"$B/mock/fast" gen --preset h200 --servers 2 --gpus 4 --pattern uniform --mean-bytes 1M -o "$B/mock/u8.json" >/dev/null
for k in 1 2; do
	want=$((k + 1))
	name="mock cuda, np 8: fast on uniform traffic, --in-flight $k, copies on $want streams"
	flag="--in-flight $k"
	[ $k = 2 ] && flag="" name="$name (the default)"
	# shellcheck disable=SC2086 # $flag is empty or two words
	FAST_MOCK_STATS=1 mock_run 8 --servers 2 --gpus 4 --traffic "$B/mock/u8.json" --algo fast \
		$flag -n 3 -w 1 --json && grep -q "\"in_flight\": $k" "$B/mock/out" &&
		! grep -q '"wrong": [1-9]' "$B/mock/out" && grep -q '"wrong": 0' "$B/mock/out" &&
		[ "$(grep -c "mock: copies on $want streams" "$B/mock/out")" = 8 ]
	verdict "$name" $?
done
# NCCL on the mock (FAST_MOCK_NCCL=1: a device per rank, messages as files
# matched by order per communicator): scale-out through each slot's group,
# on its stream and communicator, with one wave in flight and two
for cfg in "8 2 4 tests/mpi/data/mix8.json fast hier nccl pxn" "16 4 4 tests/mpi/data/mix16.json fast hier" \
	"8 2 4 $B/mock/u8.json fast"; do
	set -- $cfg
	np=$1 servers=$2 gpus=$3 traffic=$4
	shift 4
	for k in 1 2; do
		for algo in "$@"; do
			name="mock cuda + mock NCCL, np $np, --in-flight $k: $algo on $(basename "$traffic")"
			FAST_MOCK_NCCL=1 mock_run "$np" --servers "$servers" --gpus "$gpus" --traffic "$traffic" \
				--algo $algo --in-flight $k -n 2 -w 1 && bytes_ok &&
				grep -q "NCCL for inter-server messages" "$B/mock/out"
			verdict "$name" $?
		done
	done
done
# large fragments (their own messages) and a staging cap
"$B/mock/fast" gen --preset h200 --servers 2 --gpus 4 --pattern random --mean-bytes 4M -o "$B/mock/r8.json" >/dev/null
mock_run 8 --servers 2 --gpus 4 --traffic "$B/mock/r8.json" --algo fast --max-staging 512K -n 2 -w 1 &&
	bytes_ok
verdict "mock cuda, np 8: 4 MiB per GPU, staging capped" $?
# token traffic: a dispatch token program (replication from device
# buffers, relays) runs on the cuda backend; a combine one needs sums the
# GPU backends lack: refused on every rank (exit 2), said once
"$B/mock/fast" gen --preset h200 --servers 2 --gpus 4 --pattern moe --token-groups --tokens 48 \
	--token-bytes 192 -o "$B/mock/t8.json" >/dev/null
for algo in fast hier; do
	mock_run 8 --servers 2 --gpus 4 --traffic "$B/mock/t8.json" --matrix 0 --algo $algo -n 2 -w 1 --json &&
		grep -q '"wrong": 0, .*"moves": "dispatch"' "$B/mock/out"
	verdict "mock cuda, np 8: token dispatch, $algo" $?
done
mock_run 8 --servers 2 --gpus 4 --traffic "$B/mock/t8.json" --matrix 1 --algo fast -n 1 -w 0
got=$?
[ "$got" = 2 ] && [ "$(grep -c 'the cuda backend cannot sum combine contributions' "$B/mock/out")" = 1 ]
verdict "mock cuda, np 8: token combine refused (exit $got, expected 2, said once)" $?
ls /dev/shm/fastmock.* /dev/shm/fastmockccl.* >/dev/null 2>&1 && echo "note: shared-memory objects left in /dev/shm"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
