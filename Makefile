# fast - build, test, bench, demo.
#
#   make            build bin/fast (and the executor libraries)
#   make test       install missing Debian packages, build, run every test stage
#   make demo       install missing Debian packages, build, run the main study
#   make bench      synthesis / bound / simulator benchmarks
#   make bench-testbed  measured speedups on an emulated 4 x 4 cluster (root:
#                   network namespaces, scripts/testbed.sh) against fast sim
#   make deps       install the Debian packages the project needs (apt-get)
#   make install    PREFIX=/usr/local DESTDIR=
#   make SANITIZE=address,undefined   sanitizer build (separate build dir)
#   make GPU=cuda | GPU=hip [HIP_ARCH=gfx942] [CUDA_ARCH=sm_90]

CC      ?= gcc
MPICC   ?= mpicc
PREFIX  ?= /usr/local
DESTDIR ?=
GPU     ?=
SANITIZE ?=
CUDA_HOME ?= $(firstword $(wildcard /usr/local/cuda) /usr/local/cuda)
CUDA_ARCH ?= sm_90
HIP_ARCH  ?= gfx90a

WARN    := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wformat=2 -Werror
OPT     ?= -O2 -g
CFLAGS_ALL := -std=c11 -ffp-contract=off $(OPT) $(WARN) -MMD -MP -D_POSIX_C_SOURCE=200809L -I. $(CFLAGS)
LDLIBS_ALL := -lcjson -lglpk -lm $(LDLIBS)

BUILD := build
ifneq ($(SANITIZE),)
BUILD := build-san
CFLAGS_ALL += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS += -fsanitize=$(SANITIZE)
endif
ifneq ($(GPU),)
BUILD := $(BUILD)-$(GPU)
endif
BIN := $(BUILD)/bin

LIB_SRC  := $(sort $(wildcard lib/*.c))
SIM_SRC  := $(sort $(wildcard sim/*.c))
EXEC_SRC := $(sort $(filter-out exec/interpose.c,$(wildcard exec/*.c)))
CMD_SRC  := $(sort $(wildcard cmd/*.c))
# subcommands: every cmd/<name>.c except main.c, cli.c and helper files
# whose names contain an underscore (cmd/bench_plan.c, cmd/sim_report.c)
CMD_NAMES := $(foreach n,$(filter-out main cli,$(basename $(notdir $(CMD_SRC)))),$(if $(findstring _,$(n)),,$(n)))

LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
SIM_OBJ  := $(SIM_SRC:%.c=$(BUILD)/%.o)
EXEC_OBJ := $(EXEC_SRC:%.c=$(BUILD)/%.o)
CMD_OBJ  := $(CMD_SRC:%.c=$(BUILD)/%.o)

# GPU backends are opt-in; the default build needs no GPU toolchain.
GPU_OBJ :=
GPU_LIBS :=
ifeq ($(GPU),cuda)
NVCC ?= $(CUDA_HOME)/bin/nvcc
GPU_OBJ := $(BUILD)/exec/backend_cuda.o
CFLAGS_ALL += -DFAST_WITH_CUDA -I$(CUDA_HOME)/include
GPU_LIBS := -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcudart -lnccl
endif
ifeq ($(GPU),hip)
HIPCC ?= hipcc
GPU_OBJ := $(BUILD)/exec/backend_hip.o
CFLAGS_ALL += -DFAST_WITH_HIP
GPU_LIBS := -lamdhip64
endif

FAST_BIN := $(BIN)/fast
LIBFAST  := $(BUILD)/libfast.a

TEST_SRC := $(sort $(wildcard tests/unit/test_*.c))
TEST_BIN := $(TEST_SRC:tests/unit/%.c=$(BIN)/tests/%)

.PHONY: all test test-unit test-golden test-mpi test-san test-valgrind test-gpu \
        bench bench-testbed demo deps install clean results

all: $(FAST_BIN) $(LIBFAST)

$(LIBFAST): $(LIB_OBJ) $(SIM_OBJ)
	@mkdir -p $(@D)
	$(AR) rcs $@ $^

$(BUILD)/lib/%.o: lib/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -c $< -o $@

$(BUILD)/sim/%.o: sim/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -c $< -o $@

# exec/ and cmd/ see MPI headers: compiled through mpicc.
$(BUILD)/exec/%.o: exec/%.c
	@mkdir -p $(@D)
	OMPI_CC=$(CC) $(MPICC) $(CFLAGS_ALL) -c $< -o $@

$(BUILD)/cmd/%.o: cmd/%.c
	@mkdir -p $(@D)
	OMPI_CC=$(CC) $(MPICC) $(CFLAGS_ALL) -c $< -o $@

# the dispatch table, regenerated when the set of subcommands changes
$(BUILD)/gen/cmd_table.h: FORCE
	@mkdir -p $(@D)
	@printf '%s\n' $(foreach n,$(CMD_NAMES),'X($(n))') > $@.tmp
	@cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@

$(BUILD)/cmd/main.o: $(BUILD)/gen/cmd_table.h
$(BUILD)/cmd/main.o: CFLAGS_ALL += -I$(BUILD)/gen

.PHONY: FORCE
FORCE:

$(BUILD)/exec/backend_cuda.o: exec/backend_gpu.cu exec/gpu_port.h
	@mkdir -p $(@D)
	@command -v $(NVCC) >/dev/null 2>&1 || { echo "GPU=cuda: nvcc not found (looked for $(NVCC)); install the CUDA toolkit or set CUDA_HOME" >&2; exit 1; }
	$(NVCC) -O2 -arch=$(CUDA_ARCH) -DFAST_GPU_CUDA -I. -c $< -o $@

$(BUILD)/exec/backend_hip.o: exec/backend_gpu.cu exec/gpu_port.h
	@mkdir -p $(@D)
	@command -v $(HIPCC) >/dev/null 2>&1 || { echo "GPU=hip: hipcc not found; apt-get install hipcc (Debian) or use ROCm's" >&2; exit 1; }
	$(HIPCC) -O2 -x hip --offload-arch=$(HIP_ARCH) -DFAST_GPU_HIP -I. -c $< -o $@

# --- executor libraries (exec/) ------------------------------------------
# libfast_exec.a / .so: the fast_alltoallv API (exec/ + lib/); the .so and
# the PMPI interposer (LD_PRELOAD) are built from -fPIC objects in pic/.
EXEC_PIC_OBJ := $(EXEC_SRC:%.c=$(BUILD)/pic/%.o) $(LIB_SRC:%.c=$(BUILD)/pic/%.o)
GPU_PIC_OBJ  := $(GPU_OBJ:$(BUILD)/exec/%.o=$(BUILD)/pic/exec/%.o)
LIBFAST_EXEC_A    := $(BUILD)/lib/libfast_exec.a
LIBFAST_EXEC_SO   := $(BUILD)/lib/libfast_exec.so
LIBFAST_INTERPOSE := $(BUILD)/lib/libfast_interpose.so
EXEC_LIBS := $(LIBFAST_EXEC_A) $(LIBFAST_EXEC_SO) $(LIBFAST_INTERPOSE)

all: $(EXEC_LIBS)

$(BUILD)/pic/lib/%.o: lib/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -fPIC -c $< -o $@

$(BUILD)/pic/exec/%.o: exec/%.c
	@mkdir -p $(@D)
	OMPI_CC=$(CC) $(MPICC) $(CFLAGS_ALL) -fPIC -c $< -o $@

$(BUILD)/pic/exec/backend_cuda.o: exec/backend_gpu.cu exec/gpu_port.h exec/backend.h
	@mkdir -p $(@D)
	$(NVCC) -O2 -arch=$(CUDA_ARCH) -Xcompiler -fPIC -DFAST_GPU_CUDA -I. -c $< -o $@

$(BUILD)/pic/exec/backend_hip.o: exec/backend_gpu.cu exec/gpu_port.h exec/backend.h
	@mkdir -p $(@D)
	$(HIPCC) -O2 -fPIC -x hip --offload-arch=$(HIP_ARCH) -DFAST_GPU_HIP -I. -c $< -o $@

$(LIBFAST_EXEC_A): $(EXEC_OBJ) $(GPU_OBJ) $(LIB_OBJ)
	@mkdir -p $(@D)
	$(AR) rcs $@ $^

$(LIBFAST_EXEC_SO): $(EXEC_PIC_OBJ) $(GPU_PIC_OBJ)
	@mkdir -p $(@D)
	OMPI_CC=$(CC) $(MPICC) -shared $(LDFLAGS) -o $@ $^ $(LDLIBS_ALL) $(GPU_LIBS)

$(LIBFAST_INTERPOSE): $(BUILD)/pic/exec/interpose.o $(EXEC_PIC_OBJ) $(GPU_PIC_OBJ)
	@mkdir -p $(@D)
	OMPI_CC=$(CC) $(MPICC) -shared $(LDFLAGS) -o $@ $^ $(LDLIBS_ALL) $(GPU_LIBS)

$(FAST_BIN): $(CMD_OBJ) $(EXEC_OBJ) $(GPU_OBJ) $(LIBFAST)
	@mkdir -p $(@D)
	OMPI_CC=$(CC) $(MPICC) $(LDFLAGS) -o $@ $(CMD_OBJ) $(EXEC_OBJ) $(GPU_OBJ) $(LIBFAST) $(LDLIBS_ALL) $(GPU_LIBS)

$(BIN)/tests/%: tests/unit/%.c $(LIBFAST)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) $(LDFLAGS) -o $@ $< $(LIBFAST) -lcunit $(LDLIBS_ALL)

# --- tests --------------------------------------------------------------
test: deps
	$(MAKE) -j2 all tests-build
	bash tests/run_all.sh

tests-build: $(TEST_BIN)

test-unit: all tests-build
	bash tests/run_unit.sh $(BIN)/tests

test-golden: all
	bash tests/golden/run.sh $(FAST_BIN)

test-mpi: all
	bash tests/mpi/run.sh $(FAST_BIN)

# --- other targets --------------------------------------------------------
results: all
	$(MAKE) -C results FAST=$(abspath $(FAST_BIN))

bench: all
	$(FAST_BIN) bench all

bench-testbed: all
	bash tests/testbed/bench.sh $(FAST_BIN)

demo: deps
	$(MAKE) -j2 all
	bash scripts/demo.sh $(FAST_BIN)

deps:
	@bash scripts/deps.sh

# Headers keep the tree's layout under include/fast (exec/fast.h includes
# "lib/plan.h"): compile against them with -I$(PREFIX)/include/fast.
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib \
		$(DESTDIR)$(PREFIX)/include/fast/lib $(DESTDIR)$(PREFIX)/include/fast/exec
	install -m 0755 $(FAST_BIN) $(DESTDIR)$(PREFIX)/bin/fast
	install -m 0644 $(LIBFAST) $(LIBFAST_EXEC_A) $(DESTDIR)$(PREFIX)/lib/
	install -m 0755 $(LIBFAST_EXEC_SO) $(LIBFAST_INTERPOSE) $(DESTDIR)$(PREFIX)/lib/
	install -m 0644 lib/*.h $(DESTDIR)$(PREFIX)/include/fast/lib/
	install -m 0644 exec/fast.h exec/prog.h $(DESTDIR)$(PREFIX)/include/fast/exec/

clean:
	rm -rf build build-san build-cuda build-hip build-san-cuda build-san-hip build-fuzz build-gpucheck-cuda build-gpucheck-hip

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
