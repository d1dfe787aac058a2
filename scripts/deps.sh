#!/usr/bin/env bash
# Install the Debian packages fast needs to build, test and run its studies,
# through apt-get, when they are missing.  Safe to run again: it installs
# nothing when everything is present.  Needs root (or sudo) only when
# something is missing.
#
#   scripts/deps.sh          build + test + study packages
#   FAST_DEPS_EXTRA="pkg..." more packages (e.g. hipcc for HIP builds)
#   CI=true                  also hipcc, for the GPU compile stage, and
#                            python3-torch, for fast.torch's test (python stage)
set -eu

pkgs=(
	make gcc libc6-dev            # the build
	libcjson-dev                  # JSON I/O (lib/base/json.c)
	libglpk-dev                   # the LP lower bound (lib/bound/bound.c)
	libopenmpi-dev openmpi-bin    # the executor (exec/, fast run, mpirun)
	libcunit1-dev                 # unit tests
	python3 python3-jsonschema    # schema validation of presets and traces
	python3-numpy python3-pytest  # import fast (python/) and its test stage
	valgrind                      # memcheck stage of the test suite
	gnuplot-nox                   # figures in results/
	bc procps                     # test scripts
	openssh-client                # OpenMPI 4 mpirun wants an rsh agent even on one host
	iproute2 util-linux           # testbed stage (scripts/testbed.sh): ip, tc, unshare, flock
	clang-14 libclang-rt-14-dev   # fuzz stage (tests/fuzz): clang, its ASan/UBSan/libFuzzer runtime
	libfuzzer-14-dev              #   (the runtime is libclang-rt-14-dev; clang-14 only recommends it)
)
# shellcheck disable=SC2206
extra=(${FAST_DEPS_EXTRA:-})
pkgs+=("${extra[@]}")

missing=()
for p in "${pkgs[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing+=("$p")
	fi
done
# CI also compiles the HIP backend (tests/gpu/compile_check.sh): Debian's
# hipcc (about 650 MB, with its recommended ROCm pieces) is installed there,
# not on every developer machine.
hip=()
if [ "${CI:-}" = true ] && ! command -v hipcc >/dev/null 2>&1; then
	hip=(hipcc)
fi
# CI also runs fast.torch against torch.distributed (tests/python/test_torch.py,
# skipped elsewhere without it): python3-torch, CPU build, about 1 GB with its
# libraries: for CI's test command, not for the main job (make demo).
if [ "${CI:-}" = true ] && ! dpkg-query -W -f='${Status}' python3-torch 2>/dev/null |
	grep -q "install ok installed"; then
	missing+=(python3-torch)
fi
if [ ${#missing[@]} -eq 0 ] && [ ${#hip[@]} -eq 0 ]; then
	echo "deps: all ${#pkgs[@]} packages present"
	exit 0
fi
echo "deps: installing ${missing[*]} ${hip[*]}"
sudo=()
if [ "$(id -u)" != 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		sudo=(sudo)
	else
		echo "deps: missing packages (${missing[*]}) and not root: install them with apt-get" >&2
		exit 1
	fi
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
if [ ${#missing[@]} -gt 0 ]; then
	"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if [ ${#hip[@]} -gt 0 ]; then
	"${sudo[@]}" apt-get install -y -qq "${hip[@]}" >/dev/null ||
		echo "deps: installing hipcc failed: the gpu stage will say it skipped HIP" >&2
fi
echo "deps: done"
