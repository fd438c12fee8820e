# The enterprise pipeline (the Ray paper's shape):
#   generate (or take) the data -> kg-ingest -> kg-encode-attrs fit ->
#   SHARDS parallel transforms (make -j) -> merge -> kg-partition ->
#   kg-expand -> kg-train (under mpirun when RANKS > 1) -> kg-eval
#
#   make -f pipelines/enterprise.mk -j2                 # everything
#   make -f pipelines/enterprise.mk -j2 NODES=100000 SHARDS=4 PARTS=4
#   make -f pipelines/enterprise.mk DATA=/path/to/mine  # your own data: a
#       directory with train.tsv valid.tsv test.tsv types.tsv schema.json
#       (and the attribute tables the schema names)
#
# MODEL=RGCN (default) or RelGNN trains a GNN encoder over the attribute
# features: with RANKS > 1 one rank per expanded partition (PARTS must then
# equal RANKS), synchronous data-parallel SGD.  A shallow MODEL (DistMult,
# ComplEx, ...) trains without the features, PBG-style over the partitions
# when RANKS > 1 (PARTS at least 2 x RANKS).

include $(dir $(lastword $(MAKEFILE_LIST)))common.mk

NODES ?= 2000
SEED ?= 1
SHARDS ?= 2
PARTS ?= 2
PART_METHOD ?= metis
HOPS ?= 2
FANOUT ?=
RANKS ?= 2
MODEL ?= RGCN
DIM ?= 32
EPOCHS ?= 30
GNN_MODELS := RGCN RelGNN rgcn relgnn
ifneq ($(filter $(MODEL),$(GNN_MODELS)),)
GNN_CONFIG ?= $(KGPIPE)/examples/configs/$(if $(filter RelGNN relgnn,$(MODEL)),relgnn,rgcn)_ray.json
TRAIN_FLAGS ?= --config $(GNN_CONFIG) --features $(FEAT)
else
TRAIN_FLAGS ?= --lr 0.1 --batch_size 512 --neg_sample_size 128 \
	--regularization_coef 1e-6
endif
OUT ?= $(CURDIR)/kgpipe-out/enterprise

ifdef DATA
SRC := $(abspath $(DATA))
else
SRC := $(OUT)/data
endif
DS := $(OUT)/dataset
ENC := $(OUT)/attr-model
SHARD_IDS := $(shell seq 0 $$(($(SHARDS) - 1)))
SHARD_DIRS := $(foreach i,$(SHARD_IDS),$(OUT)/attr-shard-$(i))
FEAT := $(OUT)/features
PARTDIR := $(OUT)/partitions
EXP := $(OUT)/expanded
MDL := $(OUT)/model
METRICS := $(OUT)/metrics.json

.PHONY: all demo clean
all: $(METRICS)

# Prints the test metrics (the table kg-eval writes on stderr; the JSON
# report is $(METRICS)).
demo: $(METRICS)
	@echo "enterprise demo: $(NODES) nodes, $(SHARDS) encoder shards," \
	    "$(PARTS) partitions, $(RANKS) rank(s), $(MODEL) d=$(DIM)"
	@$(BIN)/kg-eval --auc $(DS) $(MDL) >/dev/null
	@echo "full report: $(METRICS)"

SRC_TRIPLES := $(SRC)/train.tsv $(SRC)/valid.tsv $(SRC)/test.tsv $(SRC)/types.tsv

ifndef DATA
# The generator writes every file of $(SRC) at once.
$(SRC)/train.tsv: | $(AUX)/kg_gen_enterprise
	@mkdir -p $(OUT)
	$(AUX)/kg_gen_enterprise -f -o $(SRC) -n $(NODES) -s $(SEED)
$(SRC)/valid.tsv $(SRC)/test.tsv $(SRC)/types.tsv $(SRC)/schema.json: | $(SRC)/train.tsv
endif

$(DS)/manifest.json: $(SRC_TRIPLES) | $(BIN)/kg-ingest
	$(BIN)/kg-ingest -q -f -o $(DS) --types $(SRC)/types.tsv \
	    --train $(SRC)/train.tsv --valid $(SRC)/valid.tsv --test $(SRC)/test.tsv

$(ENC)/manifest.json: $(DS)/manifest.json $(SRC)/schema.json | $(BIN)/kg-encode-attrs
	$(BIN)/kg-encode-attrs fit -q -f -d $(DS) -s $(SRC)/schema.json -o $(ENC)

# One transform per shard; independent, so make -j runs them in parallel.
$(OUT)/attr-shard-%/manifest.json: $(ENC)/manifest.json | $(BIN)/kg-encode-attrs
	$(BIN)/kg-encode-attrs transform -q -f -j 1 -d $(DS) -m $(ENC) \
	    -o $(OUT)/attr-shard-$* --shard $*/$(SHARDS)

$(FEAT)/manifest.json: $(SHARD_DIRS:%=%/manifest.json)
	$(BIN)/kg-encode-attrs merge -q -f -m $(ENC) -o $(FEAT) $(SHARD_DIRS)

$(PARTDIR)/manifest.json: $(DS)/manifest.json | $(BIN)/kg-partition
	$(BIN)/kg-partition -f -p $(PARTS) -m $(PART_METHOD) -s $(SEED) \
	    -o $(PARTDIR) $(DS)

$(EXP)/manifest.json: $(PARTDIR)/manifest.json $(FEAT)/manifest.json | $(BIN)/kg-expand
	$(BIN)/kg-expand -f -k $(HOPS) $(if $(FANOUT),-c $(FANOUT)) -s $(SEED) \
	    -F $(FEAT) -p $(PARTDIR) -o $(EXP) $(DS)

ifeq ($(RANKS),1)
TRAIN_CMD := $(BIN)/kg-train
else ifneq ($(filter $(MODEL),$(GNN_MODELS)),)
TRAIN_CMD := $(MPIRUN) -np $(RANKS) $(BIN)/kg-train --expanded $(EXP)
else
TRAIN_CMD := $(MPIRUN) -np $(RANKS) $(BIN)/kg-train --partitions $(PARTDIR)
endif

$(MDL)/manifest.json: $(DS)/manifest.json $(EXP)/manifest.json $(FEAT)/manifest.json | $(BIN)/kg-train
	$(TRAIN_CMD) -q --force --no_checkpoint --model_name $(MODEL) \
	    --hidden_dim $(DIM) --epochs $(EPOCHS) --seed $(SEED) \
	    --num_thread $(THREADS) $(TRAIN_FLAGS) $(DS) $(MDL)

$(METRICS): $(MDL)/manifest.json | $(BIN)/kg-eval
	$(BIN)/kg-eval --force --auc -o $@ $(DS) $(MDL)

clean:
	rm -rf $(OUT)
