# fast - build, test, bench, demo.
#
#   make            build bin/fast (and the executor libraries)
#   make test       build, run every test stage (bash scripts/deps.sh first)
#   make demo       build, run the main study (bash scripts/deps.sh first)
#   make bench      synthesis / bound / simulator benchmarks
#   make bench-testbed  measured speedups on an emulated 4 x 4 cluster (root:
#                   network namespaces, scripts/testbed.sh) against fast sim
#   make fidelity-testbed  the simulator against that cluster: the declared
#                   grid measured, model terms fitted on its fitting cells,
#                   every cell's error (tests/testbed/fidelity.sh; root)
#   make degraded-testbed  a slow NIC and shared NICs on that cluster: FAST
#                   aware and unaware of them, fanout, hier (tests/testbed/degraded.sh)
#   make deps       install the Debian packages the project needs (apt-get)
#   make install    PREFIX=/usr/local DESTDIR=   (make uninstall: the same files)
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
CFLAGS_ALL := -std=c11 -ffp-contract=off $(OPT) $(WARN) -MMD -MP -D_POSIX_C_SOURCE=200809L -I. -Iinclude $(CFLAGS)
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

LIB_SRC  := $(sort $(wildcard lib/*/*.c))
SIM_SRC  := $(sort $(wildcard sim/*.c))
EVAL_SRC := $(sort $(wildcard eval/*.c))
EXEC_SRC := $(sort $(filter-out exec/interpose.c,$(wildcard exec/*.c)))
CMD_SRC  := $(sort $(wildcard cmd/*.c))
# the subcommands are the rows of cmd/main.c's table (fast_commands)

LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
SIM_OBJ  := $(SIM_SRC:%.c=$(BUILD)/%.o)
EVAL_OBJ := $(EVAL_SRC:%.c=$(BUILD)/%.o)
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
        bench bench-vs bench-testbed fidelity-testbed degraded-testbed demo deps install uninstall man clean results print-pysite

all: $(FAST_BIN) $(LIBFAST)

# archives are written afresh: `ar r` into an old one would keep the
# members of sources since removed or renamed
$(LIBFAST): $(LIB_OBJ) $(SIM_OBJ) $(EVAL_OBJ)
	@mkdir -p $(@D)
	@rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/lib/%.o: lib/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -c $< -o $@

$(BUILD)/sim/%.o: sim/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -c $< -o $@

$(BUILD)/eval/%.o: eval/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -c $< -o $@

# exec/ and cmd/ see MPI headers: compiled through mpicc.
$(BUILD)/exec/%.o: exec/%.c
	@mkdir -p $(@D)
	OMPI_CC=$(CC) $(MPICC) $(CFLAGS_ALL) -c $< -o $@

$(BUILD)/cmd/%.o: cmd/%.c
	@mkdir -p $(@D)
	OMPI_CC=$(CC) $(MPICC) $(CFLAGS_ALL) -c $< -o $@

# where `make install` puts the shared files (schemas, traces, the MoE data
# set), compiled into `fast trace import`; regenerated when PREFIX changes
DATADIR := $(PREFIX)/share/fast
$(BUILD)/gen/config.h: FORCE
	@mkdir -p $(@D)
	@printf '#define FAST_DATADIR "%s"\n' '$(DATADIR)' > $@.tmp
	@cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@

$(BUILD)/cmd/trace.o: $(BUILD)/gen/config.h
$(BUILD)/cmd/trace.o: CFLAGS_ALL += -I$(BUILD)/gen

.PHONY: FORCE
FORCE:

$(BUILD)/exec/backend_cuda.o: exec/backend_gpu.cu exec/gpu_port.h
	@mkdir -p $(@D)
	@command -v $(NVCC) >/dev/null 2>&1 || { echo "GPU=cuda: nvcc not found (looked for $(NVCC)); install the CUDA toolkit or set CUDA_HOME" >&2; exit 1; }
	$(NVCC) -O2 -arch=$(CUDA_ARCH) -DFAST_GPU_CUDA -I. -Iinclude -c $< -o $@

$(BUILD)/exec/backend_hip.o: exec/backend_gpu.cu exec/gpu_port.h
	@mkdir -p $(@D)
	@command -v $(HIPCC) >/dev/null 2>&1 || { echo "GPU=hip: hipcc not found; apt-get install hipcc (Debian) or use ROCm's" >&2; exit 1; }
	$(HIPCC) -O2 -x hip --offload-arch=$(HIP_ARCH) -DFAST_GPU_HIP -I. -Iinclude -c $< -o $@

# --- executor libraries (exec/) ------------------------------------------
# libfast_exec.a / .so: the fast_alltoallv API (exec/ + sim/ + lib/: --algo
# auto on token traffic chooses by simulation, include/fast/sim.h's evaluator, as the
# commands do); the .so and the PMPI interposer (LD_PRELOAD) are built from
# -fPIC objects in pic/.
EXEC_PIC_OBJ := $(EXEC_SRC:%.c=$(BUILD)/pic/%.o) $(SIM_SRC:%.c=$(BUILD)/pic/%.o) \
                $(LIB_SRC:%.c=$(BUILD)/pic/%.o)
GPU_PIC_OBJ  := $(GPU_OBJ:$(BUILD)/exec/%.o=$(BUILD)/pic/exec/%.o)
LIBFAST_EXEC_A    := $(BUILD)/lib/libfast_exec.a
LIBFAST_EXEC_SO   := $(BUILD)/lib/libfast_exec.so
LIBFAST_INTERPOSE := $(BUILD)/lib/libfast_interpose.so
EXEC_LIBS := $(LIBFAST_EXEC_A) $(LIBFAST_EXEC_SO) $(LIBFAST_INTERPOSE)

all: $(EXEC_LIBS)

$(BUILD)/pic/lib/%.o: lib/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -fPIC -c $< -o $@

$(BUILD)/pic/sim/%.o: sim/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -fPIC -c $< -o $@

$(BUILD)/pic/exec/%.o: exec/%.c
	@mkdir -p $(@D)
	OMPI_CC=$(CC) $(MPICC) $(CFLAGS_ALL) -fPIC -c $< -o $@

$(BUILD)/pic/exec/backend_cuda.o: exec/backend_gpu.cu exec/gpu_port.h exec/backend.h
	@mkdir -p $(@D)
	$(NVCC) -O2 -arch=$(CUDA_ARCH) -Xcompiler -fPIC -DFAST_GPU_CUDA -I. -Iinclude -c $< -o $@

$(BUILD)/pic/exec/backend_hip.o: exec/backend_gpu.cu exec/gpu_port.h exec/backend.h
	@mkdir -p $(@D)
	$(HIPCC) -O2 -fPIC -x hip --offload-arch=$(HIP_ARCH) -DFAST_GPU_HIP -I. -Iinclude -c $< -o $@

$(LIBFAST_EXEC_A): $(EXEC_OBJ) $(GPU_OBJ) $(SIM_OBJ) $(LIB_OBJ)
	@mkdir -p $(@D)
	@rm -f $@
	$(AR) rcs $@ $^

$(LIBFAST_EXEC_SO): $(EXEC_PIC_OBJ) $(GPU_PIC_OBJ)
	@mkdir -p $(@D)
	OMPI_CC=$(CC) $(MPICC) -shared $(LDFLAGS) -o $@ $^ $(LDLIBS_ALL) $(GPU_LIBS)

$(LIBFAST_INTERPOSE): $(BUILD)/pic/exec/interpose.o $(EXEC_PIC_OBJ) $(GPU_PIC_OBJ)
	@mkdir -p $(@D)
	OMPI_CC=$(CC) $(MPICC) -shared $(LDFLAGS) -o $@ $^ $(LDLIBS_ALL) $(GPU_LIBS)

# --- libfast.so: the library for foreign callers --------------------------
# include/fast/api.h over lib/ + sim/ + the executor's program builder
# (exec/prog*.c: pure, no MPI); exports fast_api_* alone (dist/libfast.map).
# Built as $(BUILD)/lib/libfast.so.0 (the soname) with libfast.so beside it;
# installed as libfast.so.$(VERSION) with both links.  python/fast loads it.
VERSION    := $(shell sed -n 's/^\#define FAST_VERSION "\(.*\)"/\1/p' include/fast/common.h)
API_SRC    := $(sort $(wildcard api/*.c))
API_PIC_OBJ := $(API_SRC:%.c=$(BUILD)/pic/%.o) $(BUILD)/pic/exec/prog.o $(BUILD)/pic/exec/prog_wave.o \
               $(BUILD)/pic/exec/prog_flight.o \
               $(SIM_SRC:%.c=$(BUILD)/pic/%.o) $(LIB_SRC:%.c=$(BUILD)/pic/%.o) \
               $(EVAL_SRC:%.c=$(BUILD)/pic/%.o)
LIBFAST_SO := $(BUILD)/lib/libfast.so.0

all: $(LIBFAST_SO)

$(BUILD)/pic/eval/%.o: eval/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -fPIC -c $< -o $@

$(BUILD)/pic/api/%.o: api/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -fPIC -c $< -o $@

$(LIBFAST_SO): $(API_PIC_OBJ) dist/libfast.map
	@mkdir -p $(@D)
	$(CC) -shared $(LDFLAGS) -Wl,-soname,libfast.so.0 -Wl,--version-script=dist/libfast.map \
		-o $@ $(API_PIC_OBJ) $(LDLIBS_ALL)
	ln -sf libfast.so.0 $(BUILD)/lib/libfast.so

$(FAST_BIN): $(CMD_OBJ) $(EXEC_OBJ) $(GPU_OBJ) $(LIBFAST)
	@mkdir -p $(@D)
	OMPI_CC=$(CC) $(MPICC) $(LDFLAGS) -o $@ $(CMD_OBJ) $(EXEC_OBJ) $(GPU_OBJ) $(LIBFAST) $(LDLIBS_ALL) $(GPU_LIBS)

$(BIN)/tests/%: tests/unit/%.c $(LIBFAST)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) $(LDFLAGS) -o $@ $< $(LIBFAST) -lcunit $(LDLIBS_ALL)

# the option scanner lives in cmd/ (it prints usage errors): its suite links it
CLI_OBJ := $(BUILD)/cmd/cli.o $(BUILD)/cmd/cli_algo.o
$(BIN)/tests/test_cli: tests/unit/test_cli.c $(CLI_OBJ) $(LIBFAST)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) $(LDFLAGS) -o $@ $< $(CLI_OBJ) $(LIBFAST) -lcunit $(LDLIBS_ALL)

# --- tests --------------------------------------------------------------
# make test installs nothing: the README's command runs scripts/deps.sh first.
test:
	$(MAKE) -j2 all tests-build
	bash tests/run_all.sh

tests-build: $(TEST_BIN) $(BIN)/tests/plan_mutants

# the MPI stage's generator of checker-accepted mutated plans
$(BIN)/tests/plan_mutants: tests/mpi/plan_mutants.c tests/mpi/mutate.h $(LIBFAST)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) $(LDFLAGS) -o $@ $< $(LIBFAST) $(LDLIBS_ALL)

test-unit: all tests-build
	bash tests/run_unit.sh $(BIN)/tests

test-golden: all
	bash tests/golden/run.sh $(FAST_BIN)

test-mpi: all
	bash tests/mpi/run.sh $(FAST_BIN)

# single stages of tests/run_all.sh, with its budgets and skip rules
test-san: all tests-build
	bash tests/run_all.sh sanitizer

test-valgrind: all
	bash tests/run_all.sh valgrind

test-gpu:
	bash tests/run_all.sh gpu

# --- other targets --------------------------------------------------------
results: all
	$(MAKE) -C results FAST=$(abspath $(FAST_BIN))

bench: all
	$(FAST_BIN) bench all

# the expansion-heavy commands side by side with revision REV (scripts/bench_vs.sh)
bench-vs: all
	@test -n "$(REV)" || { echo "make bench-vs: give REV=<git revision>" >&2; exit 2; }
	bash scripts/bench_vs.sh -n $(or $(REPS),7) --servers $(or $(SERVERS),40) $(REV) $(FAST_BIN)

bench-testbed: all
	bash tests/testbed/bench.sh $(FAST_BIN)

fidelity-testbed: all
	bash tests/testbed/fidelity.sh $(FAST_BIN)

degraded-testbed: all
	bash tests/testbed/degraded.sh $(FAST_BIN)

demo:
	$(MAKE) -j2 all
	bash scripts/demo.sh $(FAST_BIN)

deps:
	@bash scripts/deps.sh

# --- install ----------------------------------------------------------------
# $(PREFIX)/bin/fast; lib/: libfast.a (lib/ + sim/ + eval/), libfast_exec.{a,so},
# libfast_interpose.so, libfast.so.VERSION with its links libfast.so.0 and
# libfast.so (include/fast/api.h), pkgconfig/fast.pc, fast-exec.pc and
# fast-api.pc; $(PYSITE)/fast: the Python package (below); include/fast/:
# the public headers (#include <fast/plan.h>, compiled with
# -I$(PREFIX)/include alone); share/fast/: schemas/, traces/ (and their
# README), data/moe/ (the MoE data set, licences included; where an
# installed `fast trace import` looks); share/man/man1/fast.1 and bash
# completion, both generated from the binary's --help text (dist/);
# share/doc/fast/: README.md and docs/*.md (under docs/, so the README's
# links hold).  `make uninstall` removes
# exactly these files, then the directories they leave empty.
# `make man` builds the page and the completion alone, in $(BUILD)/share/;
# they are not part of `all` because they run the binary, which a GPU build
# may not be able to start on the machine that compiles it.
MAN_PAGE   := $(BUILD)/share/fast.1
COMPLETION := $(BUILD)/share/fast.bash
man: $(MAN_PAGE) $(COMPLETION)

$(MAN_PAGE): $(FAST_BIN) dist/man.sh $(BUILD)/gen/config.h
	@mkdir -p $(@D)
	bash dist/man.sh $(FAST_BIN) $(PREFIX) > $@.tmp && mv $@.tmp $@

$(COMPLETION): $(FAST_BIN) dist/completion.sh
	@mkdir -p $(@D)
	bash dist/completion.sh $(FAST_BIN) > $@.tmp && mv $@.tmp $@

# the shared files, as paths relative to the repository and to $(DATADIR)
DATA_FILES := $(sort $(wildcard schemas/*.json) $(wildcard traces/*.json) traces/README.md \
	traces/import.sh $(shell find data/moe -type f 2>/dev/null))
DATA_DIRS  := $(sort $(patsubst %/,%,$(dir $(DATA_FILES))))
# the public headers: include/fast/ (the internal ones, lib/*/*.h, are not installed)
HEADERS    := $(sort $(wildcard include/fast/*.h))
DOC_FILES  := README.md $(sort $(wildcard docs/*.md))
PC_FILES   := fast.pc fast-exec.pc fast-api.pc
D := $(DESTDIR)$(PREFIX)
# `import fast` (python/fast, pure Python over lib/libfast.so.0, which it
# finds three directories up): where Debian's /usr/bin/python3 looks for
# this prefix -- /usr: lib/python3/dist-packages; /usr/local:
# lib/python3.X/dist-packages; any other prefix: lib/python3/dist-packages,
# with PYTHONPATH=$(PREFIX)/lib/python3/dist-packages set by the user (or
# give PYSITE, relative to the prefix).
PYSITE ?= $(if $(filter /usr/local,$(PREFIX)),lib/$(shell /usr/bin/python3 -c \
	'import sys; print("python%d.%d" % sys.version_info[:2])' 2>/dev/null || echo python3)/dist-packages,lib/python3/dist-packages)
PY_FILES := $(sort $(wildcard python/fast/*.py))

install: all man
	install -d $(D)/bin $(D)/lib/pkgconfig $(D)/share/man/man1 \
		$(D)/share/bash-completion/completions $(D)/share/doc/fast/docs \
		$(D)/include/fast $(addprefix $(D)/share/fast/,$(DATA_DIRS))
	install -m 0755 $(FAST_BIN) $(D)/bin/fast
	install -m 0644 $(LIBFAST) $(LIBFAST_EXEC_A) $(D)/lib/
	install -m 0755 $(LIBFAST_EXEC_SO) $(LIBFAST_INTERPOSE) $(D)/lib/
	install -m 0755 $(LIBFAST_SO) $(D)/lib/libfast.so.$(VERSION)
	ln -sf libfast.so.$(VERSION) $(D)/lib/libfast.so.0
	ln -sf libfast.so.0 $(D)/lib/libfast.so
	install -m 0644 $(HEADERS) $(D)/include/fast/
	for f in $(DATA_FILES); do install -m 0644 $$f $(D)/share/fast/$$f || exit; done
	chmod 0755 $(D)/share/fast/traces/import.sh
	for p in $(PC_FILES); do \
		sed 's|@PREFIX@|$(PREFIX)|; s|@VERSION@|$(shell sed -n 's/^#define FAST_VERSION "\(.*\)"/\1/p' include/fast/common.h)|' \
			dist/$$p.in > $(D)/lib/pkgconfig/$$p || exit; done
	install -m 0644 $(MAN_PAGE) $(D)/share/man/man1/fast.1
	install -m 0644 $(COMPLETION) $(D)/share/bash-completion/completions/fast
	for f in $(DOC_FILES); do install -m 0644 $$f $(D)/share/doc/fast/$$f || exit; done
	install -d $(D)/$(PYSITE)/fast
	install -m 0644 $(PY_FILES) $(D)/$(PYSITE)/fast/

# Only what install wrote, then the directories left empty inside the prefix
# (never one that still holds other files, never the prefix itself).
uninstall:
	rm -f $(D)/bin/fast $(addprefix $(D)/lib/,$(notdir $(LIBFAST) $(EXEC_LIBS))) \
		$(addprefix $(D)/lib/,libfast.so libfast.so.0 libfast.so.$(VERSION)) \
		$(addprefix $(D)/lib/pkgconfig/,$(PC_FILES)) $(addprefix $(D)/include/fast/,$(notdir $(HEADERS))) \
		$(addprefix $(D)/share/fast/,$(DATA_FILES)) $(D)/share/man/man1/fast.1 \
		$(D)/share/bash-completion/completions/fast $(addprefix $(D)/share/doc/fast/,$(DOC_FILES)) \
		$(addprefix $(D)/$(PYSITE)/fast/,$(notdir $(PY_FILES)))
	rm -rf $(D)/$(PYSITE)/fast/__pycache__
	for d in $(addprefix share/fast/,$(DATA_DIRS)) include/fast \
		share/doc/fast/docs share/man/man1 share/bash-completion/completions bin lib/pkgconfig \
		$(PYSITE)/fast; do \
		while [ "$$d" != . ] && rmdir $(D)/$$d 2>/dev/null; do d=$$(dirname $$d); done; done

# the Python package's directory under the prefix (tests/install/run.sh)
print-pysite:
	@echo $(PYSITE)

clean:
	rm -rf build build-san build-cuda build-hip build-san-cuda build-san-hip build-fuzz build-gpucheck-cuda build-gpucheck-hip

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
