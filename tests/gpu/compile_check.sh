#!/usr/bin/env bash
# tests/gpu/compile_check.sh - build each GPU backend where its compiler is
# installed (no GPU needed): `make GPU=cuda` with nvcc (+ NCCL), `make
# GPU=hip` with hipcc.  Prints "skipped: nvcc not found" / "skipped: hipcc
# not found" otherwise.  Exit 1 when a present toolchain fails to build,
# 77 (skipped) when neither toolchain is present.
#
#   bash tests/gpu/compile_check.sh            (JOBS=2 by default)
#
# Without NCCL (no nccl.h / libnccl next to CUDA) the cuda build is the
# no-NCCL variant: -DFAST_NO_NCCL, inter-server messages host-staged over MPI.
set -u
cd "$(dirname "$0")/../.." || exit 1
JOBS=${JOBS:-2}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
HIP_ARCH=${HIP_ARCH:-gfx90a}
fail=0 built=0
LOGDIR=$(mktemp -d)

check_binary() { # BUILD BACKEND
	local bin=$1/bin/fast
	if [ ! -x "$bin" ]; then
		echo "$2: FAILED: $bin missing"
		return 1
	fi
	# the backend must be compiled in: an unknown one is refused with its list
	if "$bin" run --help >/dev/null && nm "$bin" | grep -q "fast_backend_$2" &&
		[ -f "$1/lib/libfast_exec.so" ] && [ -f "$1/lib/libfast_interpose.so" ] &&
		nm -D "$1/lib/libfast_exec.so" | grep -q "fast_alltoallv_$2"; then
		echo "$2: ok ($bin, $1/lib/libfast_exec.so with fast_alltoallv_$2, libfast_interpose.so)"
		return 0
	fi
	echo "$2: FAILED: backend symbols missing from $bin or $1/lib"
	return 1
}

NVCC=$(command -v nvcc || true)
[ -z "$NVCC" ] && [ -x "$CUDA_HOME/bin/nvcc" ] && NVCC=$CUDA_HOME/bin/nvcc
if [ -n "$NVCC" ]; then
	echo "cuda: $($NVCC --version | tail -2 | head -1)"
	start=$(date +%s)
	extra=()
	if [ -f "$CUDA_HOME/include/nccl.h" ] && ls "$CUDA_HOME"/lib64/libnccl.so* >/dev/null 2>&1; then
		echo "cuda: NCCL $(grep -m1 '#define NCCL_MAJOR' "$CUDA_HOME/include/nccl.h" | awk '{print $3}').$(grep -m1 '#define NCCL_MINOR' "$CUDA_HOME/include/nccl.h" | awk '{print $3}') in $CUDA_HOME"
	else
		echo "cuda: NCCL not found in $CUDA_HOME: building the no-NCCL variant (inter-server host-staged over MPI)"
		extra=(NVCC="$NVCC -DFAST_NO_NCCL" GPU_LIBS="-L$CUDA_HOME/lib64 -Wl,-rpath,$CUDA_HOME/lib64 -lcudart")
	fi
	if make -s GPU=cuda CUDA_HOME="$CUDA_HOME" NVCC="$NVCC" BUILD=build-gpucheck-cuda -j"$JOBS" "${extra[@]}" all \
		>"$LOGDIR/cuda.log" 2>&1 && check_binary build-gpucheck-cuda cuda; then
		built=$((built + 1))
		echo "cuda: built in $(($(date +%s) - start)) s"
	else
		tail -20 "$LOGDIR/cuda.log"
		echo "cuda: FAILED (log: $LOGDIR/cuda.log)"
		fail=1
	fi
else
	echo "skipped: nvcc not found (looked in PATH and $CUDA_HOME/bin)"
fi

# CI checks the HIP backend too: Debian ships hipcc, and scripts/deps.sh
# installs it when CI=true (this script installs nothing).  Elsewhere a
# missing hipcc is a skip, said as such.
if command -v hipcc >/dev/null 2>&1; then
	echo "hip: $(hipcc --version 2>/dev/null | grep -m1 -i 'HIP version' || echo hipcc) for $HIP_ARCH"
	start=$(date +%s)
	if make -s GPU=hip HIP_ARCH="$HIP_ARCH" BUILD=build-gpucheck-hip -j"$JOBS" all \
		>"$LOGDIR/hip.log" 2>&1 && check_binary build-gpucheck-hip hip; then
		built=$((built + 1))
		echo "hip: built in $(($(date +%s) - start)) s"
	else
		tail -20 "$LOGDIR/hip.log"
		echo "hip: FAILED (log: $LOGDIR/hip.log)"
		fail=1
	fi
else
	echo "skipped: hipcc not found (Debian: apt-get install hipcc)"
fi
echo "GPU compile check: $built built, $fail failed"
[ $fail != 0 ] && exit 1
# neither toolchain present: the suite's "skipped" status
[ $built = 0 ] && exit 77
exit 0
