/*
 * train: the training loop of the shallow models (kg-train's engine).
 *
 * Parameters are kept so that a distributed driver can move them by
 * partition (PyTorch-BigGraph's buckets):
 *   - the entity table is split into partitions, each a contiguous range
 *     of global entity IDs [base, base + rows) with its own rows and its
 *     own row-wise Adagrad state (struct kg_emb_part);
 *   - relation parameters (and their optimiser state) are kept apart, in
 *     one table every bucket uses;
 *   - kg_trainer_bucket() trains on the positives of one (head partition,
 *     tail partition) bucket and touches only those two partitions and the
 *     relation table; negatives for a corrupted head are drawn inside the
 *     head partition, for a corrupted tail inside the tail partition.
 * One process uses one partition and one bucket per epoch.
 *
 * A bucket's positives are cut into batches of batch_size (one "step")
 * and each batch into chunks of chunk_size positives.  A chunk shares one
 * set of neg_sample_size negatives, corrupting heads and tails in turn
 * (only tails with reciprocal relations, whose inverse triples stand for
 * the head side), and is scored with one GEMM (lib/kge/grad.h); with
 * one_vs_all every entity of the partition is a candidate.  The chunk
 * loss is the mean over its positives (lib/kge/loss.h) plus the
 * regulariser coef * sum |x|^p over the positives' head, relation and
 * tail rows, divided by the chunk size.  Gradients of rows that occur
 * more than once in a chunk are summed, then each touched row is clipped
 * (optional) and updated (lib/kge/optim.h).
 *
 * Threads: OpenMP over chunks with Hogwild-style row updates; each chunk
 * seeds its RNG from (seed, epoch, bucket, chunk), so the negatives do
 * not depend on the thread count, and one thread with a fixed seed gives
 * bit-identical results, also across a checkpoint and --resume.
 */
#ifndef KG_TRAIN_H
#define KG_TRAIN_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "kge/loss.h"
#include "kge/model.h"
#include "kge/optim.h"
#include "kge/sampler.h"

enum kg_init_kind { KG_INIT_UNIFORM, KG_INIT_NORMAL };

struct kg_train_opts {
	enum kg_model_kind model;
	uint32_t dim, rel_dim;		/* rel_dim: TransR only, 0 = dim */
	double gamma;
	int reciprocal;			/* add inverse relations */
	struct kg_loss loss;
	uint32_t batch_size;		/* positives per step */
	uint32_t neg_sample_size;	/* negatives shared by a chunk */
	uint32_t chunk_size;		/* positives per chunk; 0 = negs */
	double degree_frac;		/* share of degree-drawn negatives */
	int one_vs_all;			/* every entity is a candidate */
	int filter_negatives;		/* leave known positives out */
	int use_types;			/* negatives of the corrupted type */
	double lr;			/* Adagrad learning rate */
	enum kg_optim_kind rel_optim;	/* relation table optimiser */
	double rel_lr;			/* 0: lr (Adagrad) or 0.001 (Adam) */
	double reg_coef;		/* 0: no regulariser */
	uint32_t reg_norm;		/* 2 (L2) or 3 (N3) */
	enum kg_init_kind init;
	double init_scale;		/* 0: (gamma + 2) / dim, DGL-KE */
	double clip;			/* max row gradient norm; 0: off */
	uint32_t epochs;
	uint64_t max_step;		/* 0: no limit */
	uint64_t seed;
	uint32_t threads;		/* 0: OpenMP's default */
};

#define KG_TRAIN_OPTS_INIT { KG_MODEL_TRANSE_L2, 400, 0, 12.0, 0, \
	KG_LOSS_INIT, 1024, 256, 0, 0.0, 0, 0, 0, 0.1, KG_OPTIM_ADAGRAD, \
	0.0, 0.0, 3, KG_INIT_UNIFORM, 0.0, 0.0, 10, 0, 1, 0 }

/* Check option values and combinations; 0, or -1 after kg_error(). */
int kg_train_opts_check(const struct kg_train_opts *o);

/* One partition of the entity table. */
struct kg_emb_part {
	uint64_t base, rows;	/* global IDs [base, base + rows) */
	float *w;		/* rows x dim */
	float *state;		/* rows (row-wise Adagrad) */
};

struct kg_train_ws;		/* per-thread work buffers (train.c) */
struct kg_trainer;

/*
 * The summed row gradients of one chunk, handed to a trainer's sync hook
 * (synchronous data-parallel training, lib/dist/dist_train.c): n_ent distinct
 * entity rows (global IDs) of dim floats and n_rel distinct relation rows
 * of rel_width floats.
 */
struct kg_row_grads {
	size_t n_ent, n_rel;
	const uint64_t *ent;
	float *ent_g;
	const uint32_t *rel;
	float *rel_g;
};

struct kg_trainer {
	struct kg_train_opts o;
	struct kg_model model;
	uint64_t n_entities;
	uint64_t n_relations;	/* of the dataset */
	uint64_t n_rel_rows;	/* n_relations, doubled with reciprocal */
	uint32_t n_parts;
	struct kg_emb_part *parts;
	float *rel;		/* n_rel_rows x rel_width */
	float *rel_state;	/* n_rel_rows x rel_state_width */
	size_t rel_state_width;
	struct kg_sampler *samplers;	/* one per partition */
	struct kg_tripleset known;	/* filter_negatives */
	const int32_t *types;		/* use_types: borrowed, n_entities */
	uint32_t nthreads;
	struct kg_train_ws *ws;		/* nthreads */
	int progress;		/* report on stderr during long epochs */
	uint32_t epoch;		/* epochs completed */
	uint64_t step;		/* batches completed */
	double last_loss;	/* mean loss of the last epoch */
	int own_parts;		/* release frees the partitions' rows */
	/*
	 * Synchronous data parallel (set by lib/dist/dist_train.c; 0, 1 and NULL
	 * otherwise).  With shard_size > 1 every chunk is cut into
	 * shard_size contiguous shares and this trainer computes share
	 * shard_rank only, with the loss still the mean over the whole
	 * chunk.  With sync set, a chunk's summed row gradients go to
	 * sync() instead of being applied; sync must apply the sum over
	 * every share (kg_trainer_apply), identically wherever it runs, and
	 * return 0 (or -1 after kg_error()).  Chunks then run one after
	 * another, and every chunk calls sync, an empty share or a
	 * non-finite loss included, so that collectives stay matched.
	 */
	uint32_t shard_rank, shard_size;
	int (*sync)(void *ctx, struct kg_trainer *tr,
	    const struct kg_row_grads *g);
	void *sync_ctx;
};

/*
 * Set up a trainer for n_entities entities in one partition and
 * n_relations relations: initialise the parameters from the seed, build
 * the samplers from the degrees in the n_train triples (train, rows of
 * (h, r, t)), the known-triple set from the nknown triples in known
 * (filter_negatives) and the type lists (use_types: types gives
 * n_entities type IDs, -1 untyped, n_types of them).  0, or -1 after
 * kg_error() with nothing to release.
 */
int kg_trainer_init(struct kg_trainer *tr, const struct kg_train_opts *o,
    uint64_t n_entities, uint64_t n_relations, const int32_t *train,
    uint64_t n_train, const int32_t *known, uint64_t nknown,
    const int32_t *types, uint32_t n_types);
void kg_trainer_release(struct kg_trainer *tr);

/*
 * As kg_trainer_init, with the entity table cut into nparts partitions:
 * partition p holds the global IDs [offsets[p], offsets[p + 1]) and gets
 * its own sampler over its entities (degrees from train, types from
 * types, both indexed by global ID).  With nparts > 1 the rows are not
 * allocated: the caller attaches w and state to a partition before
 * training a bucket that uses it, and owns them (kg_trainer_release
 * leaves them alone); kg_trainer_save, kg_trainer_load,
 * kg_trainer_entities and kg_train_run's validation need every
 * partition attached, so a distributed driver (lib/dist/dist_train.c) keeps
 * its own checkpoints.  nparts = 1 (offsets may then be NULL) is
 * kg_trainer_init.
 */
int kg_trainer_init_parts(struct kg_trainer *tr, const struct kg_train_opts *o,
    uint64_t n_entities, uint64_t n_relations, uint32_t nparts,
    const int64_t *offsets, const int32_t *train, uint64_t n_train,
    const int32_t *known, uint64_t nknown, const int32_t *types,
    uint32_t n_types);

/*
 * Apply summed gradients: clip (if set) and update the n_ent distinct
 * entity rows ent (global IDs, rows of dim floats in ent_g) and the n_rel
 * distinct relation rows rel (rows of rel_width floats in rel_g) with the
 * trainer's optimisers.  The gradients may be changed (clipping).
 */
void kg_trainer_apply(struct kg_trainer *tr, const uint64_t *ent,
    float *ent_g, size_t n_ent, const uint32_t *rel, float *rel_g,
    size_t n_rel);

/*
 * Split the entity table into n_parts partitions of contiguous global IDs:
 * partition p holds [off[p], off[p + 1]) with off[0] = 0 and
 * off[n_parts] = n_entities, each non-empty.  Rows and Adagrad state move
 * with their entity; each partition gets its own negative sampler (by
 * degree within the partition, from the n_train triples; types as
 * given to kg_trainer_init).  Call right after kg_trainer_init.  The
 * whole-run helpers (kg_trainer_epoch, kg_train_run's validation) use
 * one partition; a distributed driver calls kg_trainer_bucket per bucket.
 * 0, or -1 after kg_error().
 */
int kg_trainer_partition(struct kg_trainer *tr, uint32_t n_parts,
    const uint64_t *off, const int32_t *train, uint64_t n_train);

/*
 * Train on the n positives hrt (global IDs; heads in partition ph, tails
 * in pt), at most max_batches batches (0: all).  bucket distinguishes
 * buckets in the RNG streams.  *loss_sum gets the sum of the positives'
 * losses, *done the number of positives trained.  Returns 0, or -1 after
 * kg_error() when the loss stopped being finite (parameters may then hold
 * NaN).
 */
int kg_trainer_bucket(struct kg_trainer *tr, uint32_t ph, uint32_t pt,
    const int32_t *hrt, uint64_t n, uint32_t bucket, uint64_t max_batches,
    double *loss_sum, uint64_t *done);

/*
 * One epoch over the n training triples (shuffled from the seed and the
 * epoch number; with reciprocal relations each triple also gives its
 * inverse), honouring max_step.  Advances tr->epoch and tr->step and sets
 * tr->last_loss.  *trained gets the positives trained.  0, or -1 after
 * kg_error() (loss not finite).
 */
int kg_trainer_epoch(struct kg_trainer *tr, const int32_t *hrt, uint64_t n,
    uint64_t *trained);

/* The entity row of global ID e. */
float *kg_trainer_entity(const struct kg_trainer *tr, uint64_t e);
/*
 * The options that fix the parameter shapes (model, dims, counts,
 * reciprocal, relation optimiser) as a new JSON object; checkpoints record
 * it and a resume must match it.
 */
json_t *kg_trainer_shape(const struct kg_trainer *tr);
/*
 * Check that a checkpoint in dir recorded ("have") every key of this
 * run's shape ("want") with the same value.  0, or -1 after kg_error()
 * naming the first key that differs (for "nranks": resume with the same
 * number of ranks).
 */
int kg_checkpoint_shape_check(const char *dir, json_t *want, json_t *have);

/* Copy the whole entity table (n_entities x dim) into out. */
void kg_trainer_entities(const struct kg_trainer *tr, float *out);

/*
 * Checkpoints: a directory holding entities.npy, relations.npy,
 * entity_state.npy, relation_state.npy, state.json (epoch, step, the
 * options that fix the shapes) and train_log.jsonl (the "log" text).
 * Saving replaces "dir" atomically (lib/io/outdir.h).  Loading checks that
 * the checkpoint fits the trainer (model, dims, counts, reciprocal,
 * optimiser) and restores parameters, optimiser state, epoch and step;
 * *log gets the log text (malloc'ed, may be empty).  0, or -1 after
 * kg_error().
 */
int kg_trainer_save(const struct kg_trainer *tr, const char *dir,
    const char *log);
int kg_trainer_load(struct kg_trainer *tr, const char *dir, char **log);

/*
 * What kg-train does: load the dataset dir, train (resuming from the
 * checkpoint when asked), checkpoint at every epoch end, optionally stop
 * early on validation MRR, and write the model dir atomically.
 */
struct kg_train_job {
	const char *dataset;
	const char *output;
	const char *checkpoint_dir;	/* NULL: OUTPUT.ckpt */
	int force;
	int resume;
	int no_checkpoint;
	int keep_checkpoint;		/* keep it after success */
	int quiet, progress;
	uint32_t valid_every;		/* epochs between validations; 0 off */
	uint32_t patience;		/* validations without improvement */
	int argc;
	char *const *argv;
	/*
	 * Distributed runs (lib/dist/dist_train.c): after_init is called once the
	 * trainer is set up (and resumed), after_epoch after every epoch
	 * (before the log line); both return 0, or -1 after kg_error().  A
	 * follower (an MPI rank other than 0) writes no checkpoint and no
	 * model dir and prints nothing.
	 */
	int (*after_init)(void *ctx, struct kg_trainer *tr);
	int (*after_epoch)(void *ctx, struct kg_trainer *tr);
	void *hook_ctx;
	int follower;
};

#define KG_TRAIN_JOB_INIT { NULL, NULL, NULL, 0, 0, 0, 0, 0, 0, 0, 0, \
	0, NULL, NULL, NULL, \
	NULL, 0 }

/* 0, -1 after kg_error(), or KG_ERR_VERSION (exit 3). */
int kg_train_run(const struct kg_train_opts *o, const struct kg_train_job *j);

#endif
