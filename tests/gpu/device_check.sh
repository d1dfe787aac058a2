#!/usr/bin/env bash
# tests/gpu/device_check.sh - a one-shot check of the cuda backend on a
# machine with an NVIDIA GPU (prepared for a single H200, ~5 minutes):
#
#   bash tests/gpu/device_check.sh            (results also under $OUT if set)
#
# 1. builds `make GPU=cuda` (unless $BUILD/bin/fast exists: BUILD=build-cuda);
# 2. runs `fast run --backend $BACKEND -c 1` with 8 ranks sharing the GPU
#    (2 emulated servers x 4): intra-server messages through CUDA IPC,
#    inter-server ones host-staged over MPI (NCCL refuses two ranks on one
#    GPU: the backend sees the shared device and says so), for every
#    algorithm and MPI_Alltoallv, on tests/mpi/data (zero rows/columns, a
#    hot receiver) with one wave in flight and two (--in-flight 1, 2: the
#    slots' state, the copy chain across the slots' streams), and on random
#    traffic swept 1 MiB .. 64 MiB per GPU (the default, two in flight; fast
#    with one too, to compare), printing nccl-tests-style timings;
# 3. one rank alone (1 x 1): NCCL communicators (one per slot) set up on
#    the device;
# 4. fast.torch on CUDA tensors with torch.distributed's NCCL backend, one
#    rank (tests/gpu/torch_nccl_check.py: all_to_all_single, dispatch,
#    combine; the gathers and buffers on the device; one rank's plan has
#    no messages, so not NCCL point-to-point), under $TORCH_PYTHON or the
#    first of python3, /usr/bin/python3 whose torch has CUDA; skipped
#    without one (BACKEND=host: gloo and CPU tensors instead);
# 5. the host backend on the same traffic, for comparison.
# Any wrong byte or failure: exit 1.  Needs mpirun/mpicc (Open MPI), cJSON,
# GLPK, nvcc + NCCL (or a carried $BUILD), nvidia-smi.
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build-cuda}
BACKEND=${BACKEND:-cuda} # BACKEND=host dry-runs this script without a GPU
JOBS=${JOBS:-$(nproc)}
OUTDIR=${OUT:-}
[ -n "$OUTDIR" ] && mkdir -p "$OUTDIR"
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_hwloc_base_binding_policy=none
MPIRUN="timeout 120 mpirun --oversubscribe --mca btl self,vader,tcp"
FAST=$BUILD/bin/fast
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
pass=0 fail=0
log() { echo "$@"; [ -n "$OUTDIR" ] && echo "$@" >>"$OUTDIR/device_check.txt"; }

missing=""
for t in mpirun mpicc nvidia-smi; do command -v $t >/dev/null 2>&1 || missing="$missing $t"; done
[ -x "$FAST" ] || [ -x "$CUDA_HOME/bin/nvcc" ] || command -v nvcc >/dev/null || missing="$missing nvcc"
if [ -n "$missing" ]; then
	log "device check: missing:$missing"
	exit 4
fi
log "# $(date -u +%FT%TZ) $(nvidia-smi -L | head -4 | tr '\n' ' ')"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | sed 's/^/# /'
if [ ! -x "$FAST" ]; then
	start=$(date +%s)
	if ! make -s GPU=cuda BUILD="$BUILD" CUDA_HOME="$CUDA_HOME" -j"$JOBS" all >"$TMP/build.log" 2>&1; then
		tail -30 "$TMP/build.log"
		log "device check: build FAILED"
		exit 4
	fi
	log "# built $FAST in $(($(date +%s) - start)) s"
fi

step() { # NAME CMD...: keeps the table lines
	local name=$1
	shift
	local t0=$(date +%s.%N)
	"$@" >"$TMP/out" 2>&1
	local rc=$? dt
	dt=$(echo "$(date +%s.%N) - $t0" | bc 2>/dev/null || echo "?")
	if [ $rc = 0 ]; then pass=$((pass + 1)); log "ok - $name (${dt} s)"; else fail=$((fail + 1)); log "not ok - $name (exit $rc)"; fi
	grep -v '^--\|^$\|Primary job\|mpirun\|Process name\|Exit code\|non-zero' "$TMP/out" | while IFS= read -r l; do log "    $l"; done
}

TOPO="--preset h200 --servers 2 --gpus 4"
"$FAST" gen $TOPO --pattern random --mean-bytes 64M -o "$TMP/random.json" >/dev/null
for k in 1 2; do
	for algo in fast fanout nccl pxn spreadout hier mpi; do
		step "$BACKEND, 8 ranks on one GPU (IPC + host-staged), --in-flight $k: $algo on tests/mpi/data/mix8.json" \
			$MPIRUN -np 8 "$FAST" run $TOPO --backend $BACKEND --traffic tests/mpi/data/mix8.json --algo $algo --in-flight $k -n 3 -w 1 -c 1
	done
done
for algo in fast nccl pxn hier mpi; do
	step "$BACKEND, 8 ranks: $algo, random traffic 1M..64M per GPU" \
		$MPIRUN -np 8 "$FAST" run $TOPO --backend $BACKEND --traffic "$TMP/random.json" --algo $algo -b 1M -e 64M -f 4 -n 5 -w 2 -c 1
done
step "$BACKEND, 8 ranks: fast, random traffic 1M..64M per GPU, --in-flight 1 (against the default 2 above)" \
	$MPIRUN -np 8 "$FAST" run $TOPO --backend $BACKEND --traffic "$TMP/random.json" --algo fast --in-flight 1 -b 1M -e 64M -f 4 -n 5 -w 2 -c 1
"$FAST" plan $TOPO --traffic tests/mpi/data/mix8.json --algo fast -o "$TMP/plan.json" >/dev/null &&
	step "$BACKEND, 8 ranks: replay of a fast plan file" \
		$MPIRUN -np 8 "$FAST" run $TOPO --backend $BACKEND --traffic tests/mpi/data/mix8.json --plan "$TMP/plan.json" -n 3 -w 1 -c 1
step "$BACKEND, 8 ranks: fast with --max-staging 256K (passes)" \
	$MPIRUN -np 8 "$FAST" run $TOPO --backend $BACKEND --traffic "$TMP/random.json" --algo fast -b 4M -e 4M --max-staging 256K -n 3 -w 1 -c 1
"$FAST" gen --preset h200 --servers 1 --gpus 1 --pattern random --mean-bytes 1M -o "$TMP/one.json" >/dev/null 2>&1
step "$BACKEND, 1 rank: NCCL communicator on the device" \
	$MPIRUN -np 1 "$FAST" run --preset h200 --servers 1 --gpus 1 --backend $BACKEND --traffic "$TMP/one.json" -n 2 -w 1 -c 1
# fast.torch: CUDA tensors over NCCL (BACKEND=host: CPU tensors over gloo)
tdev=cuda tbackend=NCCL needs="a torch with CUDA and NCCL"
probe='import numpy, torch, torch.distributed as d
assert torch.cuda.is_available() and d.is_nccl_available()'
[ "$BACKEND" = host ] && tdev=cpu tbackend=gloo needs=torch probe='import numpy, torch'
tpy=""
for py in ${TORCH_PYTHON:-python3 /usr/bin/python3}; do
	"$py" -c "$probe" >/dev/null 2>&1 && { tpy=$py; break; }
done
if [ -z "$tpy" ]; then
	log "ok - fast.torch on $tdev tensors, 1 rank # SKIP no python with $needs"
else
	lib=$BUILD/lib/libfast.so.0
	[ -f "$lib" ] || make -s GPU=cuda BUILD="$BUILD" CUDA_HOME="$CUDA_HOME" "$lib" >"$TMP/lib.log" 2>&1
	step "fast.torch on $tdev tensors ($tbackend), 1 rank: all_to_all_single, dispatch, combine" \
		env FAST_LIBRARY="$lib" FAST_CHECK_DEVICE=$tdev timeout 300 "$tpy" tests/gpu/torch_nccl_check.py
fi
for algo in fast mpi; do
	step "host backend for comparison: $algo, random traffic 1M..64M per GPU" \
		$MPIRUN -np 8 "$FAST" run $TOPO --backend host --traffic "$TMP/random.json" --algo $algo -b 1M -e 64M -f 4 -n 5 -w 2 -c 1
done
log "$pass passed, $fail failed"
[ "$fail" = 0 ]
