/*
 * gnn_train: training GNN encoders (gnn.h) with a shallow decoder, as one
 * process or as synchronous data-parallel SGD under MPI (the Ray paper).
 *
 * One step: draw a batch of positive triples, corrupt each into neg
 * negatives (head or tail, with equal odds, replaced by an entity drawn
 * uniformly from the negative pool), encode the nodes (full graph, or the
 * sampled neighbourhood of the batch's nodes), score with the decoder
 * (DistMult, TransE L1/L2 or ComplEx, gnn_decode.h),
 * take the loss (loss.h) averaged over the batch, back-propagate through
 * decoder and encoder, add the L2 regulariser reg * sum w^2 over every
 * parameter, average the gradients over the ranks and take one Adam step.
 * Every rank holds every dense parameter (attribute matrices, layers,
 * decoder relations), averaged with kg_dist_average_f32 and updated by one
 * Adam step, but only the learned-table rows of its own nodes (its
 * expanded part's seeds and halo, in local numbering), with their
 * gradient and Adam state: the table is the one parameter that grows with
 * the graph.  The learned rows a step used (nodes without attribute
 * values) travel as sparse rows (kg_dist_sparse_sum, by global ID) and
 * every rank holding a row takes the same lazy per-row Adam step on it
 * (the L2 term only on those rows), so a replicated (halo) node's row
 * stays identical to its owner's.  Each row starts from (seed, global
 * ID), so it has the same initial value on every rank whatever the local
 * numbering.  At the end rank 0 gathers the whole table from the rows
 * each rank owns.
 *
 * Checkpoints (struct kg_gnn_ckpt): at every epoch end the whole state
 * (parameters, Adam states, step and epoch counters, each rank's RNG,
 * permutation and cursor) goes into a directory, replaced atomically:
 * rank 0 writes the shared (dense) part, state.json and the manifest,
 * every rank its own rows and sampler state (rank-NNN files), so a resumed
 * run is bit-identical to an uninterrupted one.
 *
 * Adaptive negatives (neg_candidates c > 1): draw c * neg corruptions,
 * score them, keep the neg whose scores are closest to the positive's
 * (RelGNN's adaptive self-adversarial selection).
 *
 * Shared negatives (neg_chunk C > 0, kg-train --neg_chunk_size): the
 * batch is cut into chunks of C positives; each chunk replaces the heads
 * or the tails (equal odds) of all its positives by the same c * neg
 * candidates from the pool, scored as one product (gnn_decode.h's
 * kg_gnn_decode_chunks; adaptive selection per positive among them).  A
 * batch of 1024 positives then seeds 2 x 1024 + (1024 / C) c neg nodes,
 * not 1024 (2 + c neg): with C = 128 and 8 negatives 2112 seeds, not
 * 10240 (RelGNN's 4 x 8 candidates: 2304, not 34816), and the sampled
 * neighbourhood shrinks with them.
 *
 * Blocks (blocks, with fan-outs): layer l is computed only for the nodes
 * within L - 1 - l hops of the seeds (gnn.h's kg_gnn_forward_blocks), the
 * seeds' outputs being those of the whole sampled graph.  The last layer
 * then runs over the seeds alone, not over the whole sample.
 *
 * Which step at scale: a step over the whole graph (nfanout = 0, the
 * encoder once per step over every node and message of the rank) grows
 * with the graph, where a sampled step is bounded by the seeds and the
 * fan-outs (gnn/sample.h), whatever the graph's size; so the paper's
 * setting samples, and the whole graph is for small graphs, where its
 * exact gradients are cheap.  README's GNN section has the step times
 * measured for this choice.
 *
 * Mini-batches (nfanout = number of graph layers): the batch's entities
 * are the seeds; for layer L .. 1 every frontier node keeps at most
 * fanout[k] of its incoming messages (drawn without replacement), their
 * sources form the next frontier; the encoder then runs over the union of
 * the reached nodes and the kept messages, with 1 / c_{i,r} counted over
 * the kept messages.  nfanout = 0 runs the whole graph every step.
 * Drawing f of a node's messages costs O(f) whatever its degree, and a
 * step allocates nothing once the first steps are done: the buffers are
 * sized from bounds before the first one (gnn/sample.h,
 * gnntrain/train_state.h).
 *
 * Batch sizes: batch_size is the global number of positives per step;
 * each of P ranks takes batch_size / P (at least 1) of its own core
 * triples, and an epoch is ceil(n_train / batch_size) steps for any P, so
 * 1 and P ranks see the same number of positives per step and per epoch.
 *
 * The paper's epoch (batches_per_epoch N > 0): an epoch is N batches of
 * batch_size positives, N x batch_size = E in all on any number of ranks;
 * on R ranks it is ceil(N / R) steps, each rank taking a whole batch per
 * step (the paper: 256 batches on 1 worker, 128 per worker on 2, 64 on
 * 4).  Rank r's share of E is in proportion to its core triples
 * (kg_gnn_epoch_share), cut evenly over the steps (kg_gnn_step_share),
 * and every rank keeps drawing from its permutation across epochs, so
 * when E equals the core triples one epoch draws each core triple of
 * every rank exactly once, and otherwise every triple is drawn within
 * ceil(n / E) epochs.  A step's gradients are scaled by R / (the step's
 * positives over all ranks), so that their average over the ranks is the
 * mean over every positive of the step.  R ranks thus take 1 / R of the
 * steps of one rank over the same positives; lr_scale multiplies the
 * learning rate by sqrt(R) or R to make up for it (off by default).
 *
 * Validation (valid_every N > 0, one rank on the whole graph): after
 * every N-th epoch and the last, every node is embedded (kg_gnn_embed)
 * and the valid triples ranked against all nodes, filtered, both sides,
 * realistic ties (kg-train's shallow models' valid MRR); the parameters
 * of the best epoch so far are kept aside, and after patience P > 0
 * validations without gain training stops.  The run ends with the best
 * epoch's parameters.  out->log gets a train_log.jsonl line per epoch
 * (epoch, step, loss, seconds, and valid_mrr when validated), with or
 * without validation; checkpoints carry the log and the best state.
 *
 * Time to accuracy (kg-train's --time_budget and --target_mrr, as the
 * shallow models have them): with time_budget S > 0 training stops after
 * the epoch (validated when due) in which the cumulative training time
 * reaches S seconds, the time of the epochs' steps only, validation and
 * checkpoints excluded, counted on from a resumed checkpoint and taken
 * from rank 0 so that every rank stops after the same epoch; with
 * target_mrr M > 0 (which needs valid_every) it stops after the first
 * validation whose MRR reaches M.  stopped_by says which of them (or
 * patience, max_step, the epochs) ended the run.
 *
 * Negatives under kg-expand parts come from every node of the rank's
 * expanded part (its seeds and its halo), or with pool_seeds from the
 * part's seeds only (neg_pool.npy).  Halo nodes far from the seeds are
 * encoded from a cut neighbourhood while training, but the seeds alone
 * make every negative local to the part; on the small enterprise graphs
 * tried here neither choice was clearly better (differences within the
 * seed-to-seed noise), and the whole part is closer to what one rank
 * draws.
 *
 * Exchanged negatives (neg_exchange, with shared negatives): each chunk
 * takes its candidates from the pool of a rank drawn in proportion to
 * the pools' sizes, its own or another's; the other ranks' candidates
 * are encoded by their own ranks, and their encoder outputs and
 * gradients cross between the ranks each step (train_state.h's
 * kg_gnn_xneg), so the negatives of R ranks are uniform over the union
 * of their pools (the whole graph with neg_pool_seeds), as one rank's.
 * A candidate from another rank that is the node a positive of its chunk
 * replaces is left out of that positive's negatives, as one process
 * leaves it out (it reads that node's row on the positive's rank).  On
 * the same global batch R ranks then take the step of one process
 * (tests/tools/gnn_ssgd_check.c).
 */
#ifndef KG_GNN_TRAIN_H
#define KG_GNN_TRAIN_H

#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "compute/backend.h"
#include "dist/dist.h"
#include "gnn/gnn.h"
#include "kge/loss.h"
#include "kge/model.h"
#include "kge/warmstart.h"

struct kg_filter;
struct kg_gnn_warm;

/*
 * Checkpoints of kg_gnn_train.  With resume and an existing dir, training
 * starts from it (it must fit: encoder, decoder, dims, counts, ranks and
 * each rank's nodes; else -1 with a message); with resume and no dir, a
 * warning and a fresh start.  With save, the state is written into dir
 * at every epoch end (replacing it atomically).  argc/argv go to its
 * manifest.  Every rank passes the same values.
 */
struct kg_gnn_ckpt {
	const char *dir;
	int resume;
	int save;
	int argc;
	char **argv;
	const char *const *inputs;	/* the run's inputs, which dir must
					 * not be or hold (n_inputs of them) */
	size_t n_inputs;
	json_t *config;		/* the settings each save records, or NULL */
	json_t *changes;	/* settings a resume changed, or NULL */
};

/* The learning rate on R ranks under the paper's epoch, whose steps
 * take R batches: as given, times sqrt(R), or times R (the linear
 * scaling rule of large-batch SGD). */
enum kg_gnn_lr_scale {
	KG_GNN_LR_SCALE_NONE, KG_GNN_LR_SCALE_SQRT, KG_GNN_LR_SCALE_LINEAR
};

struct kg_gnn_train_opts {
	struct kg_gnn_config enc;	/* dims, layers, encoder, dropout */
	enum kg_model_kind decoder;	/* DistMult, TransE_l1/l2, ComplEx */
	double gamma;			/* TransE margin */
	struct kg_loss loss;
	uint32_t batch_size;		/* global positives per step */
	uint32_t neg;			/* negatives per positive */
	uint32_t neg_candidates;	/* adaptive selection; <= 1: off */
	uint32_t nfanout;		/* 0: full graph */
	uint32_t fanout[KG_GNN_MAX_LAYERS];
	double lr;			/* Adam */
	double reg;			/* L2 coefficient */
	uint32_t epochs;
	uint64_t max_step;		/* 0: no limit; else stop after */
	uint64_t seed;
	int pool_seeds;			/* expanded parts: negatives from
					 * neg_pool.npy, not every node */
	int quiet;
	const struct kg_gnn_ckpt *ckpt;	/* NULL: no checkpoints */
	double edge_dropout;		/* share of messages dropped per step */
	uint32_t batches_per_epoch;	/* 0: ceil(n_train / batch_size)
					 * steps of one split batch */
	uint32_t neg_chunk;		/* positives sharing their negatives;
					 * 0: each positive its own */
	int blocks;			/* fan-outs: each layer only where
					 * the next one reads */
	int progress;			/* rank 0: progress and ETA */
	enum kg_gnn_lr_scale lr_scale;	/* paper's epoch: lr x f(ranks) */
	uint32_t valid_every;		/* validate every N epochs; 0: never */
	uint32_t patience;		/* stop after N validations without
					 * gain; 0: never */
	int neg_exchange;		/* shared negatives from every rank's
					 * part (train_state.h, xneg) */
	double time_budget;		/* stop after the epoch that reaches
					 * it (training seconds); 0: off */
	double target_mrr;		/* stop at a valid MRR >= it (needs
					 * valid_every); 0: off */
	struct kg_device device;	/* where each step's encoder and
					 * decoder run (gnn/step_device.h);
					 * the CPU: OpenMP, as always */
	int seam;			/* tests: that device path on the
					 * CPU backend (KG_TRAIN_SEAM=cpu) */
	const char *learned_dir;	/* NULL: the learned rows in a
					 * memory store; else a buffered one
					 * (store.h) with its partition file
					 * in this folder, the best epoch's
					 * rows kept there, not in RAM */
	const char *init_from;		/* a GNN model dir to start from
					 * (struct kg_gnn_warm), or NULL;
					 * epochs may then be 0 */
	const char *init_entities;	/* float32 [rows, d0] .npy: learned
					 * rows to start from, or NULL */
	const char *entity_map;		/* "row<TAB>name" lines for
					 * init_entities; NULL: row = ID */
	int freeze_old;			/* what came from init_from or
					 * init_entities does not train
					 * (struct kg_gnn_frozen) */
	int freeze_relations;		/* with freeze_old and init_from:
					 * the matched decoder relations
					 * neither */
	const struct kg_gnn_warm *warm;	/* the start loaded: kg_gnn_train
					 * starts from it */
};

#define KG_GNN_TRAIN_OPTS_INIT { .enc = { .encoder = KG_GNN_RGCN, \
	.decomp = KG_GNN_BASIS, .n_layers = 2, .dims = { 64, 64, 32, 0 }, \
	.n_bases = 2, .dropout = 0.2f }, .decoder = KG_MODEL_DISTMULT, \
	.gamma = 12.0, .loss = { .kind = KG_LOSS_BCE, .margin = 1.0 }, \
	.batch_size = 1024, .neg = 8, .lr = 0.01, .epochs = 10, \
	.lr_scale = KG_GNN_LR_SCALE_NONE }

/*
 * What one rank trains on, in its own (local) node numbering: the message
 * graph's triples, the core triples it draws positives from, the
 * negative pool, and for each local node its feature row, its global
 * entity ID (distinct, below o->enc.n_learned) and the rank that owns it
 * (the one whose row rank 0 takes at the end; every rank may own some).
 * Arrays are borrowed.
 */
struct kg_gnn_problem {
	uint64_t n_nodes;
	uint32_t n_relations;
	const int32_t *graph_hrt;	/* message-passing triples, local */
	uint64_t n_graph;
	const int32_t *core_hrt;	/* training positives, local */
	uint64_t n_core;
	uint64_t n_train_global;	/* summed over ranks (epoch length) */
	const int32_t *pool;		/* local IDs; NULL: all nodes */
	uint64_t n_pool;
	const int32_t *frow;		/* NULL: identity */
	const int32_t *lrow;		/* global IDs; NULL: identity */
	const int32_t *owner;		/* NULL: this rank owns every node */
	const struct kg_features *feat;	/* may be NULL */
	/* Validation (valid_every > 0): triples ranked against every node
	 * (p the whole graph: one rank, no parts), filtered by filter. */
	const int32_t *valid_hrt;
	uint64_t n_valid;
	const struct kg_filter *filter;
};

enum { KG_GNN_PHASE_DRAW, KG_GNN_PHASE_SAMPLE, KG_GNN_PHASE_FORWARD,
	KG_GNN_PHASE_DECODE, KG_GNN_PHASE_BACKWARD, KG_GNN_PHASE_UPDATE,
	KG_GNN_PHASES };

/* The trained parameters: encoder and decoder relation table. */
struct kg_gnn_trained {
	json_t *comm;		/* kg_dist_comm_json of the run (owned) */
	struct kg_gnn enc;
	struct kg_model dec;
	float *rel;		/* n_relations x dec.rel_width */
	double last_loss;	/* mean loss of the last epoch */
	double seconds_per_epoch;
	uint64_t steps;
	/* Rank 0's encoded graphs, summed over its steps: the nodes of each
	 * level (gnn.h's rows: the input, then each layer's output) and the
	 * messages. */
	double sum_rows[KG_GNN_MAX_LAYERS + 1], sum_msgs;
	/* Rank 0's seconds in each phase of its steps, summed: drawing the
	 * batch, sampling, the forward pass, the decoder (with the
	 * exchange of negatives), the backward pass, the update (the
	 * regulariser, the learned rows' and dense gradients' sync, Adam). */
	double phase_seconds[KG_GNN_PHASES];
	char *log;		/* train_log.jsonl: a line per epoch */
	double best_valid_mrr;	/* < 0: not validated */
	uint32_t best_epoch;	/* whose parameters these are */
	const char *stopped_by;	/* "epochs", "max_step",
				 * "early_stopping", "time_budget" or
				 * "target_mrr" */
	double train_seconds;	/* the epochs' steps, validation excluded,
				 * resumed ones included (rank 0's) */
	uint32_t epochs_run;	/* epochs trained, resumed ones included */
	/* Steps on a device (o->device CUDA, or o->seam): its name and
	 * backend's (backend.h), for the manifest; "" on the CPU path. */
	char device[32], backend[160];
};

#define KG_GNN_TRAINED_INIT { .enc = KG_GNN_INIT, .best_valid_mrr = -1.0 }

/* Check option values (epochs may be 0 with init_from only); 0 or -1
 * after kg_error(). */
int kg_gnn_train_opts_check(const struct kg_gnn_train_opts *o);

/*
 * Whether the options can train on a device (o->device CUDA, or o->seam):
 * 0, or -1 after kg_error() naming the first thing the device step
 * (gnn/step_device.h) does not run: a decoder other than DistMult,
 * shared or adaptive negatives.  Attribute features and several ranks
 * are refused when the run starts (kg_gnn_train).  The device takes each
 * step's encoder (R-GCN or RelGNN), decoder, gradients, regulariser and
 * Adam steps, and keeps the parameters and their states between steps;
 * the host samples (the next batch while the device runs this one) and
 * reads the state back for validation, checkpoints and the end
 * (gnntrain/device.c).
 */
int kg_gnn_train_device_check(const struct kg_gnn_train_opts *o);

/*
 * Train on p (one rank's share; d may be NULL for a plain process).
 * o->enc.n_learned is the number of global entities.  A rank trains a
 * learned table of p->n_nodes rows (local node i: row i); on return rank
 * 0's out->enc holds the whole table (n_learned rows by global ID: each
 * row from the rank owning it, the initial value for an entity no rank
 * holds), every other rank's out->enc its local table.  With o->warm the
 * parameters start from it (kg_gnn_warm_apply: after the setup, before a
 * resume, which replaces them), the Adam states at zero.  o->epochs must
 * be positive here.  Collective: every rank returns 0 or every rank -1,
 * after kg_error() on the one(s) that failed (out is then released).
 */
int kg_gnn_train(struct kg_gnn_trained *out, const struct kg_gnn_train_opts *o,
    const struct kg_gnn_problem *p, struct kg_dist *d);
void kg_gnn_trained_release(struct kg_gnn_trained *t);

/*
 * What a warm start keeps as it was (o->freeze_old), by global IDs, so
 * every rank masks alike: the learned rows of the entities in ent, the
 * dense encoder floats (those after the learned table, in kg_gnn.w's
 * order from the table's end) in the ranges dense, the decoder relation
 * floats in the ranges rel.  A range is a pair (offset, length) of
 * floats, in increasing order.  Training computes every gradient as
 * usual and steps no frozen parameter: a frozen learned row takes no
 * Adam step, and a frozen dense or relation float has its gradient
 * zeroed before the block's Adam step, its moments zero at the start
 * (a GNN warm start starts every moment at zero) and so for good, which
 * leaves it bit for bit.
 */
struct kg_gnn_frozen {
	uint8_t *ent;			/* [n_learned] 1: frozen; NULL: none */
	uint64_t n_ent;			/* entities frozen */
	size_t *dense, n_dense;		/* n_dense ranges (2 n_dense sizes) */
	size_t *rel, n_rel;
	uint64_t dense_floats, rel_floats;	/* floats the ranges hold */
	uint64_t rel_rows;		/* decoder relations frozen */
};

/*
 * Warm start (o->init_from, or o->init_entities): the encoder and decoder
 * relations of a GNN model directory laid out for the run's dataset ds
 * and features f, or a fresh start whose learned rows come from given
 * embeddings.  The model must have the run's encoder, decomposition,
 * bases, dims, decoder and features (or learned rows only); entities and
 * relations are matched by name (kge/warmstart.h's kg_warmstart_match).
 * enc is the run's encoder over ds's entities and relations: the model's
 * learned row for each matched entity, a fresh one
 * (kg_gnn_learned_row_init, as training draws it) for each added one;
 * the model's attribute matrices and layer weights, and per message type
 * of a matched relation its blocks (basis coefficients, block-diagonal
 * matrices, attention relation embeddings); an added relation's blocks
 * and decoder row as a fresh run draws them.  A GNN model directory
 * keeps no Adam moments: training from it starts them at zero.
 *
 * Given embeddings (init_entities F, float32 [rows, d0], rows by
 * entity_map or row = entity ID; kge/warmstart.h's
 * kg_warmstart_read_entities): the learned row of each entity F names is
 * F's row, every other parameter a fresh run's.  An entity that reads
 * its attribute values, not its learned row, takes F's row all the same
 * (it is written to gnn_weights.npy) but nothing reads it.
 *
 * freeze_old (frozen): with init_from, everything that came from the
 * model: the matched entities' learned rows, the dense encoder weights
 * (attribute matrices, self weights, biases, bases, attention vectors:
 * shared by old and new nodes) with the per-type blocks of matched
 * relations, and with freeze_relations the matched relations' decoder
 * rows.  What trains: the learned rows of added entities, the per-type
 * blocks and decoder rows of added relations, the matched relations'
 * decoder rows unless freeze_relations.  With init_entities the rows F
 * names are frozen, the rest trains.
 */
struct kg_gnn_warm {
	const char *dir;		/* borrowed: init_from or
					 * init_entities */
	int given;			/* the start is init_entities */
	struct kg_gnn enc;
	float *rel;			/* n_relations x rel_width */
	size_t n_rel_f;
	struct kg_warmstart_stats st;	/* entity and relation counts */
	struct kg_gnn_frozen frozen;	/* empty without freeze_old */
};

/* Load dir for a run of o over ds with features f (NULL: none).  0, -1
 * after kg_error() (one line: another encoder, dims, decoder, feature
 * width, or names that cannot be matched; w released), or KG_ERR_VERSION
 * for a model dir of an unknown format version. */
int kg_gnn_warm_load(struct kg_gnn_warm *w, const char *dir,
    const struct kg_gnn_train_opts *o, const struct kg_features *f,
    const struct kg_dataset *ds);
/* o->init_entities for a run of o over ds with features f (NULL: none):
 * a fresh start with the learned rows it names (struct kg_gnn_warm).
 * 0, or -1 after kg_error() (the array's dtype, shape or width, its
 * map's lines, a map naming no entity of ds; w released). */
int kg_gnn_warm_given(struct kg_gnn_warm *w,
    const struct kg_gnn_train_opts *o, const struct kg_features *f,
    const struct kg_dataset *ds);
/* Whether a run of o from w over p (every rank's part: collective
 * under d, the same answer on every rank) trains anything: 1 without
 * o->freeze_old; else whether some learned row that training reads (a
 * node without attribute values, or any with learned rows only) is not
 * frozen, or some dense or relation float.  1, or 0 after kg_error()
 * ("--freeze_old: every parameter ... is frozen"). */
int kg_gnn_warm_trains(const struct kg_gnn_warm *w,
    const struct kg_gnn_train_opts *o, const struct kg_gnn_problem *p,
    struct kg_dist *d);
void kg_gnn_warm_release(struct kg_gnn_warm *w);
/* --epochs 0: w's encoder and relations moved into t, with o's decoder,
 * as a run that trained nothing (kg_gnn_model_write then encodes every
 * node).  0 or -1 after kg_error(). */
int kg_gnn_warm_take(struct kg_gnn_warm *w, struct kg_gnn_trained *t,
    const struct kg_gnn_train_opts *o);
/* config.init_from of the model dir (trained: whether the run trained,
 * its Adam moments then reset), and the same as one line for stderr
 * into buf[cap] (returns buf). */
json_t *kg_gnn_warm_json(const struct kg_gnn_warm *w, int trained);
char *kg_gnn_warm_format(const struct kg_gnn_warm *w, int trained,
    char *buf, size_t cap);

/* The decoder's relation table of a fresh run: n floats, Glorot-uniform
 * over n_relations and dl from seed. */
void kg_gnn_relations_init(float *rel, size_t n, uint32_t n_relations,
    size_t dl, uint64_t seed);

/*
 * The whole run from directories: the dataset, optional features
 * (kg-encode-attrs output) and optional kg-expand output (one part per
 * rank, part-NNN for rank NNN: core triples, halo, negative pool, owners,
 * sliced features), with checkpoints as kg-train's shallow models have
 * them (checkpoint_dir, default OUTPUT.ckpt, written at every epoch end
 * unless no_checkpoint and removed after success unless keep_checkpoint
 * or named; resume), then the model directory "output" written by rank 0:
 * entities.npy = kg_gnn_embed over the whole training graph,
 * relations.npy = the decoder's table, config model = the decoder (so
 * kg-eval ranks it as a shallow model), plus gnn_weights.npy (the flat
 * encoder parameters) and config keys encoder, gnn_* describing the
 * layout.  argc/argv go to the manifest.  With o->init_from or
 * o->init_entities (one process or every rank of expanded parts: each
 * loads the whole start and takes its nodes' rows) the run starts from
 * it (struct kg_gnn_warm, its counts on stderr from rank 0 unless quiet,
 * and config.init_from or config.init_entities in the manifest); with
 * o->epochs 0 it trains nothing and writes the loaded model, every node
 * encoded over this dataset.
 * 0, -1 or KG_ERR_VERSION after kg_error().
 */
struct kg_gnn_run {
	const char *dataset, *features, *expanded, *output;
	int force;
	const char *checkpoint_dir;	/* NULL: OUTPUT.ckpt */
	int resume;
	int no_checkpoint;
	int keep_checkpoint;		/* keep OUTPUT.ckpt after success */
	int argc;
	char **argv;
};

#endif
