# A public link-prediction benchmark from raw splits to test metrics:
#   kg-ingest -> kg-train (CONFIG) -> kg-eval (filtered, all entities)
# Included by fb15k237.mk and wn18rr.mk, which set NAME, DATA and CONFIG.
# DATA is a directory with train.txt.gz, valid.txt.gz and test.txt.gz (or
# .txt / .tsv files: set EXT); CONFIG a kg-train JSON config.  Options on
# the command line override the config: TRAIN_FLAGS="--epochs 5".

include $(dir $(lastword $(MAKEFILE_LIST)))common.mk

EXT ?= txt.gz
OUT ?= $(CURDIR)/kgpipe-out/$(NAME)
TRAIN_FLAGS ?=
DS := $(OUT)/dataset
MDL := $(OUT)/model-$(basename $(notdir $(CONFIG)))
METRICS := $(MDL).metrics.json
SPLITS := $(DATA)/train.$(EXT) $(DATA)/valid.$(EXT) $(DATA)/test.$(EXT)

.PHONY: all clean
all: $(METRICS)

$(SPLITS):
	@echo "$(NAME): no data in '$(DATA)'; set DATA=dir with" \
	    "train.$(EXT) valid.$(EXT) test.$(EXT)" >&2; exit 1

$(DS)/manifest.json: $(SPLITS) | $(BIN)/kg-ingest
	@mkdir -p $(OUT)
	$(BIN)/kg-ingest -f -o $(DS) --train $(DATA)/train.$(EXT) \
	    --valid $(DATA)/valid.$(EXT) --test $(DATA)/test.$(EXT)

$(MDL)/manifest.json: $(DS)/manifest.json $(CONFIG) | $(BIN)/kg-train
	$(BIN)/kg-train --force --progress --config $(CONFIG) \
	    --num_thread $(THREADS) $(TRAIN_FLAGS) $(DS) $(MDL)

$(METRICS): $(MDL)/manifest.json | $(BIN)/kg-eval
	$(BIN)/kg-eval --force --threads $(THREADS) -o $@ $(DS) $(MDL)

clean:
	rm -rf $(OUT)
