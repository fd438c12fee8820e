# A public link-prediction benchmark from raw splits to test metrics:
#   kg-ingest -> kg-train (CONFIG) -> kg-eval (filtered, all entities)
# Included by fb15k237.mk and wn18rr.mk, which set NAME, DATA and CONFIG.
# DATA is a directory with train.txt.gz, valid.txt.gz and test.txt.gz (or
# .txt / .tsv files: set EXT); CONFIG a kg-train JSON config.  Options on
# the command line override the config: EPOCHS=5 (--epochs), or any
# kg-train option in TRAIN_FLAGS="--lr 0.05 --valid_every 5".
# "make ... plot" draws the training curves and the per-relation metrics
# next to the metrics (MODEL.training.png|svg, MODEL.metrics.png|svg).
#
# INIT_FROM=MODEL_DIR starts training from an earlier kg-train model
# (kg-train --init_from: rows matched by name, optimiser state carried),
# so that tomorrow's model is one make from today's:
#   make -f pipelines/fb15k237.mk DATA=/data/today OUT=out/today \
#       INIT_FROM=out/yesterday/model-complex_n3_fb15k237
# Give each day its own OUT: the names are matched through the dataset
# the earlier model was trained on, which must still be there.  A model
# changed in INIT_FROM (its manifest) retrains too.
#
# Every variable that changes a result (DATA, EXT, CONFIG and its
# contents, EPOCHS, TRAIN_FLAGS, INIT_FROM, THREADS, EVAL_FLAGS) is part
# of a stage's command, kept in $(OUT)/settings/ (common.mk): change one
# and make reruns that stage and what follows it, nothing else.

include $(dir $(lastword $(MAKEFILE_LIST)))common.mk

EXT ?= txt.gz
OUT ?= $(CURDIR)/kgpipe-out/$(NAME)
EPOCHS ?=
TRAIN_FLAGS ?=
INIT_FROM ?=
EVAL_FLAGS ?= --per-relation
DS := $(OUT)/dataset
MODEL_NAME := model-$(basename $(notdir $(CONFIG)))
MDL := $(OUT)/$(MODEL_NAME)
METRICS := $(MDL).metrics.json
SPLITS := $(DATA)/train.$(EXT) $(DATA)/valid.$(EXT) $(DATA)/test.$(EXT)
INIT := $(if $(INIT_FROM),$(abspath $(INIT_FROM)))
ifneq ($(INIT),)
ifeq ($(INIT),$(abspath $(MDL)))
$(error INIT_FROM=$(INIT_FROM) is the model this run writes: give this run another OUT)
endif
endif

.PHONY: all plot clean
all: $(METRICS)

$(SPLITS):
	@echo "$(NAME): no data in '$(DATA)'; set DATA=dir with" \
	    "train.$(EXT) valid.$(EXT) test.$(EXT)" >&2; exit 1

INGEST_CMD = $(BIN)/kg-ingest -f -o $(DS) --train $(DATA)/train.$(EXT) \
	--valid $(DATA)/valid.$(EXT) --test $(DATA)/test.$(EXT)
TRAIN_CMD = $(BIN)/kg-train --force --progress --config $(CONFIG) \
	$(if $(EPOCHS),--epochs $(EPOCHS)) --num_thread $(THREADS) \
	$(if $(INIT),--init_from $(INIT)) $(TRAIN_FLAGS) $(DS) $(MDL)
EVAL_CMD = $(BIN)/kg-eval --force --threads $(THREADS) $(EVAL_FLAGS) \
	-o $(METRICS) $(DS) $(MDL)

$(DS)/manifest.json: $(SPLITS) $(SETTINGS)/dataset.cmd | $(BIN)/kg-ingest
	$(INGEST_CMD)

# The stamps are named after the model, so that models of several
# configs keep their own settings side by side.
$(MDL)/manifest.json: $(DS)/manifest.json $(CONFIG) \
    $(if $(INIT),$(INIT)/manifest.json) $(SETTINGS)/$(MODEL_NAME).cmd \
    | $(BIN)/kg-train
	$(TRAIN_CMD)

$(METRICS): $(MDL)/manifest.json $(SETTINGS)/$(MODEL_NAME).metrics.cmd \
    | $(BIN)/kg-eval
	$(EVAL_CMD)

$(eval $(call kg_settings_rule,dataset,INGEST_CMD))
$(eval $(call kg_settings_rule,$(MODEL_NAME),TRAIN_CMD))
$(eval $(call kg_settings_rule,$(MODEL_NAME).metrics,EVAL_CMD))

METRIC_PLOTS := $(PLOT_FORMATS:%=$(MDL).metrics.%)
TRAIN_PLOTS := $(PLOT_FORMATS:%=$(MDL).training.%)
plot: $(METRIC_PLOTS) $(TRAIN_PLOTS)

$(METRIC_PLOTS): $(MDL).metrics.%: $(METRICS) | $(BIN)/kg-plot
	$(BIN)/kg-plot -q -f -o $@ $(METRICS)

$(TRAIN_PLOTS): $(MDL).training.%: $(MDL)/manifest.json | $(BIN)/kg-plot
	$(BIN)/kg-plot -q -f -o $@ $(MDL)

clean:
	rm -rf $(OUT)
