# Shared settings of the kgpipe pipelines; included by the other .mk files.
# Works from any directory: tools are found relative to this file, and
# outputs go under OUT (default: ./kgpipe-out/NAME in the directory make
# runs in).  Every stage's output is a directory whose manifest.json is
# the make target, so make reruns only what changed.  Needs GNU make 4.2
# or later (the $(file) function).

KGPIPE := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))..)
BIN ?= $(KGPIPE)/bin
AUX ?= $(KGPIPE)/build/aux
# Threads of each training or evaluation process: the cores shared out
# among the RANKS processes (a pipeline without RANKS runs one), at least
# one each, as bench/paper_scale.sh does; two threads a rank on two cores
# made a step of the paper's R-GCN 1.6 s against 1.06 s with one.
NCPU := $(shell nproc 2>/dev/null || echo 1)
THREADS ?= $(shell n=$$(($(NCPU) / $(or $(RANKS),1))); echo $$((n > 0 ? n : 1)))
# Open MPI refuses root unless told; --oversubscribe lets a small machine
# run more ranks than cores.  Override MPIRUN for a cluster (hostfile...).
MPIRUN ?= mpirun --oversubscribe $(if $(filter 0,$(shell id -u)),--allow-run-as-root)

.DEFAULT_GOAL := all
.DELETE_ON_ERROR:
.SUFFIXES:

# The tools themselves: build them if they are missing or stale.
TOOLS := $(BIN)/kg-ingest $(BIN)/kg-encode-attrs $(BIN)/kg-partition \
	$(BIN)/kg-expand $(BIN)/kg-train $(BIN)/kg-eval $(BIN)/kg-plot
$(TOOLS) $(AUX)/kg_gen_enterprise: tools-built

.PHONY: tools-built
tools-built:
	@$(MAKE) --no-print-directory -C $(KGPIPE) tools

# Settings stamps.  make compares times, not values, so a stage whose
# command changes (another MODEL, EPOCHS, PARTS, a flag) would keep its old
# output.  Each stage's exact command line is therefore kept in
# $(SETTINGS)/NAME.cmd, which the stage lists as a prerequisite.  The
# stamp is rewritten only when the command differs from what it holds, so
# its time moves only on a change: a changed variable reruns that stage
# and what depends on it, and a second make with the same variables does
# nothing.  The comparison is done while make reads the file, so make -q
# and make -n see it too.
#
#   $(eval $(call kg_settings_rule,NAME,VAR))
# declares the rule of $(SETTINGS)/NAME.cmd for the command held in the
# variable VAR (defined before the call).  The tools themselves are not
# part of the stamp: rebuilding bin/ does not rerun the pipeline.  Both
# sides of the comparison are stripped: GNU make 4.3's $(file <) was seen
# to keep a stamp's final newline.
SETTINGS = $(OUT)/settings
kg_same = $(and $(findstring x$(1)x,x$(2)x),$(findstring x$(2)x,x$(1)x))
kg_sq = '$(subst ','\'',$(1))'
define kg_settings_rule
$$(SETTINGS)/$(1).cmd: $$(if $$(call kg_same,$$(strip $$($(2))),$$(strip $$(file <$$(SETTINGS)/$(1).cmd))),,kg-settings-changed)
	@mkdir -p $$(@D) && printf '%s\n' $$(call kg_sq,$$(strip $$($(2)))) \
	    >$$@.tmp && mv -f $$@.tmp $$@
endef
.PHONY: kg-settings-changed
kg-settings-changed:

# Plots (kg-plot): PNG and SVG of the training curves and of the
# per-relation metrics, written next to the metrics by "make plot".
PLOT_FORMATS ?= png svg
