# The RDF pipeline: one dump in, the enterprise pipeline's shape after it:
#   kg-ingest (N-Triples, N-Quads or Turtle, split at random; literals to
#   the literal table and its proposed schema) -> kg-encode-attrs fit
#   with that schema -> SHARDS parallel transforms (make -j) -> merge ->
#   kg-partition -> kg-expand -> kg-train: an R-GCN over the literal
#   features (one expanded partition a rank under mpirun when RANKS > 1)
#   and a shallow model without them -> kg-eval of both.
#
#   make -f pipelines/rdf.mk -j2                  # the bundled LitWD1K dump
#   make -f pipelines/rdf.mk -j2 RDF=dump.nt.gz   # yours: .nt, .nq, .ttl,
#       each also .gz (FORMAT=ntriples|nquads|turtle for other names)
#   make -f pipelines/rdf.mk SCHEMA=mine.json     # your attribute schema
#       instead of the proposed $(OUT)/dataset/literals.schema.json
#
# RDF_LANG=en keeps the literals tagged en (and untagged ones); empty
# keeps all.  RDF_TYPES=attribute (default) makes rdf:type a multi_label
# attribute, edge a relation, types the node types.  INGEST_FLAGS adds
# kg-ingest options (--base, --graph, --predicates, ...).  MODEL is the
# GNN (RGCN, RelGNN), SHALLOW the shallow model (DistMult, ComplEx, ...).
#
# Every variable that changes a result is part of a stage's command, kept
# in $(OUT)/settings/STAGE.cmd (common.mk): change one and make reruns
# that stage and what follows it, nothing else.

include $(dir $(lastword $(MAKEFILE_LIST)))common.mk

RDF ?= $(KGPIPE)/examples/data/litwd1k-rdf/litwd1k.nt.gz
FORMAT ?=
SPLIT ?= 0.9,0.05,0.05
SEED ?= 1
RDF_LANG ?= en
RDF_TYPES ?= attribute
INGEST_FLAGS ?=
SHARDS ?= 2
RANKS ?= 2
PARTS ?= $(RANKS)
PART_METHOD ?= metis
HOPS ?= 2
# Expansion caps: the Ray paper's 5,2 new nodes per hop for 2 hops.
PAPER_CAPS := 5,2
FANOUT ?= $(if $(filter 2,$(HOPS)),$(PAPER_CAPS))
MODEL ?= RGCN
SHALLOW ?= DistMult
DIM ?= 32
EPOCHS ?= 20
SHALLOW_EPOCHS ?= $(EPOCHS)
CONFIG ?= $(KGPIPE)/examples/configs/$(if $(filter RelGNN relgnn,$(MODEL)),relgnn,rgcn)_ray.json
TRAIN_FLAGS ?=
SHALLOW_FLAGS ?= --lr 0.1 --batch_size 512 --neg_sample_size 128 \
	--regularization_coef 1e-6
EVAL_FLAGS ?= --auc --per-relation
OUT ?= $(CURDIR)/kgpipe-out/rdf

ifeq ($(filter clean,$(MAKECMDGOALS)),)
ifneq ($(RANKS),1)
ifneq ($(PARTS),$(RANKS))
$(error MODEL=$(MODEL) trains one partition a rank: set PARTS=$(RANKS) (or RANKS=$(PARTS)))
endif
endif
endif

DS := $(OUT)/dataset
SCHEMA ?= $(DS)/literals.schema.json
ENC := $(OUT)/attr-model
SHARD_IDS := $(shell seq 0 $$(($(SHARDS) - 1)))
SHARD_DIRS := $(foreach i,$(SHARD_IDS),$(OUT)/attr-shard-$(i))
FEAT := $(OUT)/features
PARTDIR := $(OUT)/partitions
EXP := $(OUT)/expanded
MDL := $(OUT)/model
SMDL := $(OUT)/model-$(SHALLOW)
METRICS := $(OUT)/metrics.json
SMETRICS := $(OUT)/metrics-$(SHALLOW).json

.PHONY: all clean
all: $(METRICS) $(SMETRICS)

INGEST_CMD = $(BIN)/kg-ingest -q -f -o $(DS) $(if $(FORMAT),--format \
	$(FORMAT)) --split $(SPLIT) --seed $(SEED) $(if $(RDF_LANG),--lang \
	$(RDF_LANG)) --rdf-types $(RDF_TYPES) $(INGEST_FLAGS) $(abspath $(RDF))
FIT_CMD = $(BIN)/kg-encode-attrs fit -q -f -d $(DS) -s $(SCHEMA) -o $(ENC)
# $(call TRANSFORM_CMD,i): shard i; the stamp holds the shape, "i" literal.
TRANSFORM_CMD = $(BIN)/kg-encode-attrs transform -q -f -j 1 -d $(DS) \
	-m $(ENC) -o $(OUT)/attr-shard-$(1) --shard $(1)/$(SHARDS)
TRANSFORM_ANY = $(call TRANSFORM_CMD,i)
MERGE_CMD = $(BIN)/kg-encode-attrs merge -q -f -m $(ENC) -o $(FEAT) \
	$(SHARD_DIRS)
PART_CMD = $(BIN)/kg-partition -q -f -p $(PARTS) -m $(PART_METHOD) \
	-s $(SEED) -o $(PARTDIR) $(DS)
EXPAND_CMD = $(BIN)/kg-expand -q -f -k $(HOPS) $(if $(FANOUT),-c $(FANOUT)) \
	-s $(SEED) -F $(FEAT) -p $(PARTDIR) -o $(EXP) $(DS)
ifeq ($(RANKS),1)
TRAIN_LAUNCH = $(BIN)/kg-train
else
TRAIN_LAUNCH = $(MPIRUN) -np $(RANKS) $(BIN)/kg-train --expanded $(EXP)
endif
TRAIN_CMD = $(TRAIN_LAUNCH) -q --no_checkpoint --force --config $(CONFIG) \
	--model_name $(MODEL) --hidden_dim $(DIM) --epochs $(EPOCHS) \
	--seed $(SEED) --num_thread $(THREADS) --features $(FEAT) \
	$(TRAIN_FLAGS) $(DS) $(MDL)
SHALLOW_CMD = $(BIN)/kg-train -q --no_checkpoint --force --model_name \
	$(SHALLOW) --hidden_dim $(DIM) --epochs $(SHALLOW_EPOCHS) --seed \
	$(SEED) --num_thread $(THREADS) $(SHALLOW_FLAGS) $(DS) $(SMDL)
EVAL_CMD = $(BIN)/kg-eval -q --force $(EVAL_FLAGS) -o $(METRICS) $(DS) $(MDL)
SEVAL_CMD = $(BIN)/kg-eval -q --force $(EVAL_FLAGS) -o $(SMETRICS) $(DS) \
	$(SMDL)

$(DS)/manifest.json: $(RDF) $(SETTINGS)/dataset.cmd | $(BIN)/kg-ingest
	@mkdir -p $(OUT)
	$(INGEST_CMD)

# The proposed schema is written with the dataset.
$(DS)/literals.schema.json: | $(DS)/manifest.json

$(ENC)/manifest.json: $(DS)/manifest.json $(SCHEMA) \
    $(SETTINGS)/attr-model.cmd | $(BIN)/kg-encode-attrs
	$(FIT_CMD)

# One transform per shard; independent, so make -j runs them in parallel.
$(OUT)/attr-shard-%/manifest.json: $(ENC)/manifest.json \
    $(SETTINGS)/attr-shard.cmd | $(BIN)/kg-encode-attrs
	$(call TRANSFORM_CMD,$*)

$(FEAT)/manifest.json: $(SHARD_DIRS:%=%/manifest.json) \
    $(SETTINGS)/features.cmd | $(BIN)/kg-encode-attrs
	$(MERGE_CMD)

$(PARTDIR)/manifest.json: $(DS)/manifest.json $(SETTINGS)/partitions.cmd \
    | $(BIN)/kg-partition
	$(PART_CMD)

$(EXP)/manifest.json: $(PARTDIR)/manifest.json $(FEAT)/manifest.json \
    $(SETTINGS)/expanded.cmd | $(BIN)/kg-expand
	$(EXPAND_CMD)

$(MDL)/manifest.json: $(DS)/manifest.json $(FEAT)/manifest.json \
    $(if $(filter-out 1,$(RANKS)),$(EXP)/manifest.json) $(CONFIG) \
    $(SETTINGS)/model.cmd | $(BIN)/kg-train
	$(TRAIN_CMD)

$(SMDL)/manifest.json: $(DS)/manifest.json $(SETTINGS)/model-shallow.cmd \
    | $(BIN)/kg-train
	$(SHALLOW_CMD)

$(METRICS): $(MDL)/manifest.json $(SETTINGS)/metrics.cmd | $(BIN)/kg-eval
	$(EVAL_CMD)

$(SMETRICS): $(SMDL)/manifest.json $(SETTINGS)/metrics-shallow.cmd \
    | $(BIN)/kg-eval
	$(SEVAL_CMD)

$(eval $(call kg_settings_rule,dataset,INGEST_CMD))
$(eval $(call kg_settings_rule,attr-model,FIT_CMD))
$(eval $(call kg_settings_rule,attr-shard,TRANSFORM_ANY))
$(eval $(call kg_settings_rule,features,MERGE_CMD))
$(eval $(call kg_settings_rule,partitions,PART_CMD))
$(eval $(call kg_settings_rule,expanded,EXPAND_CMD))
$(eval $(call kg_settings_rule,model,TRAIN_CMD))
$(eval $(call kg_settings_rule,model-shallow,SHALLOW_CMD))
$(eval $(call kg_settings_rule,metrics,EVAL_CMD))
$(eval $(call kg_settings_rule,metrics-shallow,SEVAL_CMD))

clean:
	rm -rf $(OUT)
