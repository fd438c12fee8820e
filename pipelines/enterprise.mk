# The enterprise pipeline (the Ray paper's shape):
#   generate (or take) the data -> kg-ingest -> kg-encode-attrs fit ->
#   SHARDS parallel transforms (make -j) -> merge -> kg-partition ->
#   kg-expand -> kg-train (under mpirun when RANKS > 1) -> kg-eval
#
#   make -f pipelines/enterprise.mk -j2                 # everything
#   make -f pipelines/enterprise.mk -j2 NODES=100000 SHARDS=4 RANKS=4
#   make -f pipelines/enterprise.mk DATA=/path/to/mine  # your own data: a
#       directory with train.tsv valid.tsv test.tsv types.tsv schema.json
#       (and the attribute tables the schema names)
#   make -f pipelines/enterprise.mk plot                # PNG and SVG plots
#   make -f pipelines/enterprise.mk RANKS=4 HOSTFILE=hosts  # encode and
#       train on the hosts of an Open MPI hostfile, inputs sent to them
#       over MPI
#
# MODEL=RGCN (default) or RelGNN trains a GNN encoder over the attribute
# features: with RANKS > 1 one rank per expanded partition (PARTS defaults
# to RANKS and must equal it), synchronous data-parallel SGD.  A shallow
# MODEL (DistMult, ComplEx, ...) trains without the features, PBG-style
# over the partitions when RANKS > 1 (PARTS defaults to 2 x RANKS and may
# not be fewer); it builds neither features nor expansions, and with
# RANKS=1 no partitions either.  Each rank runs THREADS threads: the cores
# shared out among the ranks unless given.
#
# INIT_FROM=MODEL_DIR (a shallow MODEL, any RANKS) starts training from an
# earlier kg-train model (kg-train --init_from: rows matched by name,
# optimiser state carried), so a nightly job is one make:
#   make -f pipelines/enterprise.mk MODEL=DistMult RANKS=1 \
#       DATA=/data/today OUT=out/today INIT_FROM=out/yesterday/model
# Give each day its own OUT: the names are matched through the dataset the
# earlier model was trained on, which must still be there.
#
# Every variable that changes a result (NODES, SEED, DATA, SHARDS, PARTS,
# PART_METHOD, HOPS, FANOUT, RANKS, MODEL, DIM, EPOCHS, CONFIG,
# TRAIN_FLAGS, INIT_FROM, THREADS, EVAL_FLAGS) is part of a stage's
# command, and each command is kept in $(OUT)/settings/STAGE.cmd
# (common.mk): change one and make reruns that stage and what follows it,
# nothing else.

include $(dir $(lastword $(MAKEFILE_LIST)))common.mk

# SCALE=paper: the Ray paper's workload (bench/paper_scale.sh measures
# it): 2.8 million nodes (NODES), in the large-graph setting below at
# any NODES.  Any variable given on the command line still wins.
ifeq ($(SCALE),paper)
NODES ?= 2800000
else ifneq ($(SCALE),)
$(error SCALE=$(SCALE): the only scale is "paper")
endif

NODES ?= 2000
SEED ?= 1
SHARDS ?= 2
PART_METHOD ?= metis
HOPS ?= 2
RANKS ?= 2
MODEL ?= RGCN
DIM ?= 32
GNN_MODELS := RGCN RelGNN rgcn relgnn
GNN := $(filter $(MODEL),$(GNN_MODELS))

# A large graph: more training triples than the paper's epoch of 256
# batches of 1024 (262,144; about 42,000 generated nodes at 6.25 training
# edges a node, or counted in DATA's train.tsv).  Training a GNN over the
# whole graph costs an epoch that grows with the graph (the 300,000-node
# pipeline on 2 ranks did not finish in 15 minutes), so a large graph takes
# the paper's setting, whose epoch costs the same at every size: the paper
# configs (fan-outs 25,10 on blocks, an epoch of 256 batches shared out
# among the ranks, negatives from the part exchanged between the ranks)
# and their 3 epochs, expansions capped at 5,2 new nodes per hop, training
# with progress and a checkpoint that a rerun of make resumes after a
# kill, and MRR against 1000 sampled candidates per side (ranking every
# entity for every test triple grows with the square of the graph).
ifdef DATA
TRAIN_TRIPLES := $(firstword $(shell wc -l <$(DATA)/train.tsv 2>/dev/null) 0)
else
TRAIN_TRIPLES := $(shell echo $$(($(NODES) * 25 / 4)))
endif
LARGE := $(if $(SCALE),yes,$(shell [ $(TRAIN_TRIPLES) -gt 262144 ] && echo yes))
ifeq ($(LARGE),yes)
EVAL_FLAGS ?= --auc --neg-sample 1000
TRAIN_RUN ?= --progress --resume
ifneq ($(GNN),)
CONFIG ?= $(or $(GNN_CONFIG),$(KGPIPE)/examples/configs/$(if $(filter RelGNN relgnn,$(MODEL)),relgnn,rgcn)_ray_paper.json)
EPOCHS ?= 3
endif
endif
# How kg-train runs: quiet, no checkpoint (a large graph: progress, resume).
TRAIN_RUN ?= -q --no_checkpoint
# Expansion caps: 2 hops take the paper's 5,2 new nodes per hop at every
# size.  Uncapped, 2 hops of the 2,000-node demo graph bring every node
# into each part (replication 2.0 on 2 parts, 4.0 on 4: each rank holds
# the whole graph); capped, each of 2 parts holds about 1,340 of them
# (1.34, as at 2.8 million nodes).  Other hop counts: no caps.
PAPER_CAPS := 5,2
FANOUT ?= $(if $(filter 2,$(HOPS)),$(PAPER_CAPS))
EPOCHS ?= 30
EVAL_FLAGS ?= --auc --per-relation

# Partitions: a GNN on RANKS > 1 trains one expanded partition a rank; a
# shallow model on RANKS > 1 needs two partitions a rank (PBG's buckets
# keep every rank busy only then).  Anything else is refused here, before
# any stage runs, with the variable to change.
ifneq ($(RANKS),1)
PARTS ?= $(if $(GNN),$(RANKS),$(shell echo $$((2 * $(RANKS)))))
else
PARTS ?= 2
endif
ifeq ($(filter clean,$(MAKECMDGOALS)),)
ifneq ($(RANKS),1)
ifneq ($(GNN),)
ifneq ($(PARTS),$(RANKS))
$(error MODEL=$(MODEL) trains one partition a rank: set PARTS=$(RANKS) (or RANKS=$(PARTS)))
endif
else ifeq ($(shell [ $(PARTS) -lt $$((2 * $(RANKS))) ] && echo few),few)
$(error MODEL=$(MODEL) on $(RANKS) ranks needs at least $(shell echo $$((2 * $(RANKS)))) partitions (2 a rank): set PARTS=$(shell echo $$((2 * $(RANKS)))) or RANKS=$(shell echo $$(($(PARTS) / 2 > 1 ? $(PARTS) / 2 : 1))))
endif
endif
endif

ifneq ($(GNN),)
# GNN_CONFIG is the older name of CONFIG.
CONFIG ?= $(or $(GNN_CONFIG),$(KGPIPE)/examples/configs/$(if $(filter RelGNN relgnn,$(MODEL)),relgnn,rgcn)_ray.json)
TRAIN_FLAGS ?=
# A GNN reads the attribute features unless it learns its inputs.
USE_FEAT := $(if $(filter --learned_only --learned-only,$(TRAIN_FLAGS)),,yes)
else
CONFIG ?=
TRAIN_FLAGS ?= --lr 0.1 --batch_size 512 --neg_sample_size 128 \
	--regularization_coef 1e-6
USE_FEAT :=
endif
OUT ?= $(CURDIR)/kgpipe-out/enterprise

# A warm start: a shallow model (one process or RANKS over the
# partitions), never into itself.
INIT_FROM ?=
INIT := $(if $(INIT_FROM),$(abspath $(INIT_FROM)))
ifneq ($(INIT),)
ifeq ($(filter clean,$(MAKECMDGOALS)),)
ifneq ($(GNN),)
$(error INIT_FROM: MODEL=$(MODEL) has no warm start (kg-train --init_from is for the shallow models); drop INIT_FROM)
endif
ifeq ($(INIT),$(abspath $(OUT)/model))
$(error INIT_FROM=$(INIT_FROM) is the model this run writes: give this run another OUT)
endif
endif
endif

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
# kg-eval's table, kept so that "demo" can print it once.
TABLE := $(OUT)/metrics.txt

# What training reads besides the dataset: only what the model uses.
ifneq ($(GNN),)
TRAIN_INPUTS := $(if $(USE_FEAT),$(FEAT)) $(if $(filter-out 1,$(RANKS)),$(EXP))
else
TRAIN_INPUTS := $(if $(filter-out 1,$(RANKS)),$(PARTDIR))
endif

.PHONY: all demo plot clean
all: $(METRICS)

# Prints the test metrics once: the table kg-eval wrote when it ran (the
# JSON report is $(METRICS)).  While building for demo, the metrics rule
# keeps the table to itself.
demo: KG_TABLE_LATER := yes
demo: $(METRICS)
	@echo "enterprise demo: $(NODES) nodes, $(SHARDS) encoder shards," \
	    "$(PARTS) partitions, $(RANKS) rank(s), $(MODEL) d=$(DIM)"
	@cat $(TABLE)
	@echo "full report: $(METRICS)"

# The commands of the stages, one variable each: the recipe runs it and
# its settings stamp records it.
GEN_CMD = $(AUX)/kg_gen_enterprise -f -o $(SRC) -n $(NODES) -s $(SEED)
INGEST_CMD = $(BIN)/kg-ingest -q -f -o $(DS) --types $(SRC)/types.tsv \
	--train $(SRC)/train.tsv --valid $(SRC)/valid.tsv --test $(SRC)/test.tsv
FIT_CMD = $(BIN)/kg-encode-attrs fit -q -f -d $(DS) -s $(SRC)/schema.json \
	-o $(ENC)
# $(call TRANSFORM_CMD,i): shard i; the stamp holds the shape, "i" literal.
TRANSFORM_CMD = $(BIN)/kg-encode-attrs transform -q -f -j 1 -d $(DS) \
	-m $(ENC) -o $(OUT)/attr-shard-$(1) --shard $(1)/$(SHARDS)
TRANSFORM_ANY = $(call TRANSFORM_CMD,i)
MERGE_CMD = $(BIN)/kg-encode-attrs merge -q -f -m $(ENC) -o $(FEAT) \
	$(SHARD_DIRS)
# HOSTFILE=hosts: the SHARDS transforms and the merge are one job of RANKS
# ranks on the hostfile's hosts (transform --merge --ship-inputs: rank 0
# sends the inputs, gathers the shards and writes the features here).
ifdef HOSTFILE
FEAT_CMD = $(MPIRUN) $(MPI_HOSTS) -np $(RANKS) $(BIN)/kg-encode-attrs \
	transform --merge --ship-inputs -q -f -j 1 --shards $(SHARDS) \
	-d $(DS) -m $(ENC) -o $(FEAT)
FEAT_DEPS = $(ENC)/manifest.json
else
FEAT_CMD = $(MERGE_CMD)
FEAT_DEPS = $(SHARD_DIRS:%=%/manifest.json)
endif
PART_CMD = $(BIN)/kg-partition -f -p $(PARTS) -m $(PART_METHOD) \
	-s $(SEED) -o $(PARTDIR) $(DS)
EXPAND_CMD = $(BIN)/kg-expand -f -k $(HOPS) $(if $(FANOUT),-c $(FANOUT)) \
	-s $(SEED) $(if $(USE_FEAT),-F $(FEAT)) -p $(PARTDIR) -o $(EXP) $(DS)
# HOSTFILE=hosts: the ranks on the hosts of an Open MPI hostfile (this
# host first: rank 0 writes the features and the model here).  Only this
# host needs the pipeline's directories: kg-encode-attrs --ship-inputs
# and kg-train --ship_inputs send each rank what it reads over MPI;
# fit, kg-partition, kg-expand and kg-eval run here.
MPI_HOSTS = $(if $(HOSTFILE),--hostfile $(HOSTFILE))
SHIP = $(if $(HOSTFILE),--ship_inputs)
ifeq ($(RANKS),1)
TRAIN_LAUNCH = $(BIN)/kg-train
else ifneq ($(GNN),)
TRAIN_LAUNCH = $(MPIRUN) $(MPI_HOSTS) -np $(RANKS) $(BIN)/kg-train $(SHIP) \
	--expanded $(EXP)
else
TRAIN_LAUNCH = $(MPIRUN) $(MPI_HOSTS) -np $(RANKS) $(BIN)/kg-train $(SHIP) \
	--partitions $(PARTDIR)
endif
# The command line wins over the config (kg-train applies --config first).
TRAIN_CMD = $(TRAIN_LAUNCH) $(TRAIN_RUN) --force \
	$(if $(CONFIG),--config $(CONFIG)) --model_name $(MODEL) \
	--hidden_dim $(DIM) --epochs $(EPOCHS) --seed $(SEED) \
	--num_thread $(THREADS) $(if $(USE_FEAT),--features $(FEAT)) \
	$(if $(INIT),--init_from $(INIT)) $(TRAIN_FLAGS) $(DS) $(MDL)
EVAL_CMD = $(BIN)/kg-eval --force $(EVAL_FLAGS) -o $(METRICS) $(DS) $(MDL)

SRC_TRIPLES := $(SRC)/train.tsv $(SRC)/valid.tsv $(SRC)/test.tsv $(SRC)/types.tsv

ifndef DATA
# The generator writes every file of $(SRC) at once.
$(SRC)/train.tsv: $(SETTINGS)/data.cmd | $(AUX)/kg_gen_enterprise
	@mkdir -p $(OUT)
	$(GEN_CMD)
$(SRC)/valid.tsv $(SRC)/test.tsv $(SRC)/types.tsv $(SRC)/schema.json: | $(SRC)/train.tsv
$(eval $(call kg_settings_rule,data,GEN_CMD))
endif

$(DS)/manifest.json: $(SRC_TRIPLES) $(SETTINGS)/dataset.cmd | $(BIN)/kg-ingest
	$(INGEST_CMD)

$(ENC)/manifest.json: $(DS)/manifest.json $(SRC)/schema.json \
    $(SETTINGS)/attr-model.cmd | $(BIN)/kg-encode-attrs
	$(FIT_CMD)

# One transform per shard; independent, so make -j runs them in parallel.
$(OUT)/attr-shard-%/manifest.json: $(ENC)/manifest.json \
    $(SETTINGS)/attr-shard.cmd | $(BIN)/kg-encode-attrs
	$(call TRANSFORM_CMD,$*)

$(FEAT)/manifest.json: $(FEAT_DEPS) $(SETTINGS)/features.cmd \
    | $(BIN)/kg-encode-attrs
	$(FEAT_CMD)

$(PARTDIR)/manifest.json: $(DS)/manifest.json $(SETTINGS)/partitions.cmd \
    | $(BIN)/kg-partition
	$(PART_CMD)

$(EXP)/manifest.json: $(PARTDIR)/manifest.json \
    $(if $(USE_FEAT),$(FEAT)/manifest.json) $(SETTINGS)/expanded.cmd \
    | $(BIN)/kg-expand
	$(EXPAND_CMD)

$(MDL)/manifest.json: $(DS)/manifest.json $(TRAIN_INPUTS:%=%/manifest.json) \
    $(CONFIG) $(if $(INIT),$(INIT)/manifest.json) $(SETTINGS)/model.cmd \
    | $(BIN)/kg-train
	$(TRAIN_CMD)

# kg-eval's table goes to $(TABLE) and, unless demo prints it later, to
# stderr; on failure its messages go to stderr.
$(METRICS): $(MDL)/manifest.json $(SETTINGS)/metrics.cmd | $(BIN)/kg-eval
	$(EVAL_CMD) 2>$(TABLE).tmp || { cat $(TABLE).tmp >&2; \
	    rm -f $(TABLE).tmp; exit 1; }
	@mv -f $(TABLE).tmp $(TABLE)
	@$(if $(KG_TABLE_LATER),:,cat $(TABLE) >&2)

$(eval $(call kg_settings_rule,dataset,INGEST_CMD))
$(eval $(call kg_settings_rule,attr-model,FIT_CMD))
$(eval $(call kg_settings_rule,attr-shard,TRANSFORM_ANY))
$(eval $(call kg_settings_rule,features,FEAT_CMD))
$(eval $(call kg_settings_rule,partitions,PART_CMD))
$(eval $(call kg_settings_rule,expanded,EXPAND_CMD))
$(eval $(call kg_settings_rule,model,TRAIN_CMD))
$(eval $(call kg_settings_rule,metrics,EVAL_CMD))

# Plots: training curves (loss, validation MRR) of the model's log and the
# per-relation metrics, as $(OUT)/training.png|svg and metrics.png|svg.
# Every trainer writes the log; a model directory without one (made by
# an older kgpipe) gets no curves, with a note.
METRIC_PLOTS := $(PLOT_FORMATS:%=$(OUT)/metrics.%)
TRAIN_PLOTS := $(PLOT_FORMATS:%=$(OUT)/training.%)
plot: $(METRIC_PLOTS) $(TRAIN_PLOTS)

$(METRIC_PLOTS): $(OUT)/metrics.%: $(METRICS) | $(BIN)/kg-plot
	$(BIN)/kg-plot -q -f -o $@ $(METRICS)

$(TRAIN_PLOTS): $(OUT)/training.%: $(MDL)/manifest.json | $(BIN)/kg-plot
	@if [ -f $(MDL)/train_log.jsonl ]; then \
	    echo "$(BIN)/kg-plot -q -f -o $@ $(MDL)"; \
	    $(BIN)/kg-plot -q -f -o $@ $(MDL); \
	else \
	    echo "$(MDL): no train_log.jsonl, no training curves" >&2; \
	fi

clean:
	rm -rf $(OUT)
