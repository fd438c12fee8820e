# Shared settings of the kgpipe pipelines; included by the other .mk files.
# Works from any directory: tools are found relative to this file, and
# outputs go under OUT (default: ./kgpipe-out/NAME in the directory make
# runs in).  Every stage's output is a directory whose manifest.json is
# the make target, so make reruns only what changed.

KGPIPE := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))..)
BIN ?= $(KGPIPE)/bin
AUX ?= $(KGPIPE)/build/aux
THREADS ?= 2
# Open MPI refuses root unless told; --oversubscribe lets a small machine
# run more ranks than cores.  Override MPIRUN for a cluster (hostfile...).
MPIRUN ?= mpirun --oversubscribe $(if $(filter 0,$(shell id -u)),--allow-run-as-root)

.DEFAULT_GOAL := all
.DELETE_ON_ERROR:
.SUFFIXES:

# The tools themselves: build them if they are missing or stale.
TOOLS := $(BIN)/kg-ingest $(BIN)/kg-encode-attrs $(BIN)/kg-partition \
	$(BIN)/kg-expand $(BIN)/kg-train $(BIN)/kg-eval
$(TOOLS) $(AUX)/kg_gen_enterprise: tools-built

.PHONY: tools-built
tools-built:
	@$(MAKE) --no-print-directory -C $(KGPIPE) tools
