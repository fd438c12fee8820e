/*
 * train: the trainer of the shallow models (kg-train's engine).
 *
 * Parameters are kept so that a distributed driver can move them by
 * partition (PyTorch-BigGraph's buckets):
 *   - entity rows and their row-wise Adagrad state live in an embedding
 *     store (lib/store/store.h), cut into partitions of contiguous global
 *     IDs; the trainer reaches them only by pinning the partitions of a
 *     bucket, and never holds the whole table itself;
 *   - relation parameters (and their optimiser state) are kept apart, in
 *     one table every bucket uses;
 *   - kg_trainer_bucket() trains on the positives of one (head partition,
 *     tail partition) bucket and touches only those two partitions and the
 *     relation table; negatives for a corrupted head are drawn inside the
 *     head partition, for a corrupted tail inside the tail partition,
 *     and, with neg_pool, the share of the table outside that partition
 *     from the negative pool (lib/kge/sampler.h: stale rows of every
 *     partition, chosen per epoch by kg_trainer_pool_load and refreshed
 *     from a bucket's partitions after it trains), so that the
 *     negatives are spread over the whole table as one process draws
 *     them.
 * One process uses one partition and one bucket per epoch.
 *
 * Bucket drivers set bucket_chunks: a bucket's positives are then cut
 * into chunks of even size (not chunk_size and a remainder) and the
 * corrupted side alternates from chunk to chunk starting with the
 * parity of ph * n_parts + pt, so that small buckets do not corrupt
 * tails only.
 *
 * In-batch negatives (neg_in_batch, PyTorch-BigGraph's "batch
 * negatives"): each positive is also scored against the corrupted-side
 * entities of the other positives of its chunk (its own left out, and
 * any equal to its true entity), which then get gradients as negatives.
 *
 * A bucket's positives are cut into batches of batch_size (one "step")
 * and each batch into chunks of kg_train_chunk_size() positives.  A chunk
 * shares one set of neg_sample_size negatives, corrupting heads and tails
 * in turn (only tails with reciprocal relations, whose inverse triples
 * stand for the head side), and is scored with one GEMM (lib/kge/grad.h);
 * with one_vs_all every entity of the partition is a candidate.  The
 * chunk loss is the mean over its positives (lib/kge/loss.h) plus the
 * regulariser coef * sum |x|^p over the positives' head, relation and
 * tail rows, divided by the chunk size.  Gradients of rows that occur
 * more than once in a chunk are summed, then each touched row is clipped
 * (optional) and updated (lib/kge/optim.h).
 *
 * Threads: OpenMP over chunks with Hogwild-style row updates; each chunk
 * seeds its RNG from (seed, epoch, bucket, chunk), so the negatives do
 * not depend on the thread count, and one thread with a fixed seed gives
 * bit-identical results, also across a checkpoint and --resume.  Each
 * thread's work buffers (struct kg_train_ws) are sized by the rows one
 * bucket can touch (two partitions), not by the entity count.
 */
#ifndef KG_TRAIN_H
#define KG_TRAIN_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "io/ckpt.h"
#include "kge/epochs.h"
#include "kge/loss.h"
#include "kge/model.h"
#include "kge/optim.h"
#include "kge/sampler.h"
#include "store/store.h"

/*
 * 1-vs-all with the softmax loss scores query (fixed, rel) against every
 * entity; positives that share the query share the scores.  PLAIN (the
 * default) scores every positive alone, in the epoch's shuffled order.
 * GROUPED orders a 1-vs-all epoch of reciprocal training by query (the
 * queries shuffled, the answers of each together, as LibKGE's KvsAll
 * batches) and scores each query of a chunk once: the loss of answer t
 * is logsumexp(s) - s[t] and the gradient n * softmax(s) - the sum of
 * the answers' indicators, the same objective with as many score rows
 * as distinct queries, fewer than the positives wherever queries have
 * several answers.  The order changes how training proceeds (a model
 * can train worse grouped), so PLAIN is the default; README's "Accuracy
 * against time" has the counts and the accuracies measured.
 * GROUPED_ORDER_ONLY keeps that order and scores positive by positive,
 * for comparisons.  Without the
 * softmax loss, or with neg_filter, positives are scored one by one;
 * without reciprocal relations the order stays shuffled.
 */
enum kg_ova_mode {
	KG_OVA_PLAIN = 0,
	KG_OVA_GROUPED,
	KG_OVA_GROUPED_ORDER_ONLY
};

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
	uint32_t epochs;		/* 0: no bound (max_step must be set) */
	uint64_t max_step;		/* 0: no limit */
	uint64_t seed;
	uint32_t threads;		/* 0: OpenMP's default */
	uint32_t neg_pool;		/* partitioned: pool rows per partition
					 * (struct kg_neg_pool); 0: negatives
					 * only inside the bucket (PBG) */
	int neg_in_batch;		/* the chunk's other positives too */
	/* Accuracy options (lib/kge/train_aux.c); the defaults leave
	 * training as it was, bit for bit. */
	double rel_pred;		/* relation-prediction weight; 0: off */
	double dura;			/* DURA coefficient; 0: off */
	uint64_t lr_warmup;		/* batches of linear warm-up; 0: off */
	double lr_decay;		/* lr factor per epoch; 1: off */
	enum kg_optim_kind ent_optim;	/* entity optimiser (row-wise
					 * Adagrad) */
	uint32_t one_vs_all_after;	/* drawn negatives for this many
					 * epochs, then every entity a
					 * candidate; 0: off;
					 * KG_ONE_VS_ALL_LATER: when the
					 * caller lowers it (on a plateau) */
	enum kg_ova_mode ova_mode;	/* how 1-vs-all epochs are cut and
					 * scored (below) */
	int subsampling;		/* RotatE's per-triple weights
					 * (struct kg_query_weights) on
					 * the ranking losses */
	double ova_dura;		/* DURA coefficient of 1-vs-all
					 * epochs; < 0: dura */
	int deterministic;		/* the same bits for a seed whatever
					 * the thread count (train_bucket.c):
					 * rounds of KG_DET_ROUND chunks
					 * from the same parameters, their
					 * gradients applied in chunk order */
};

/* Chunks per round of a deterministic run: fixed, so that the result
 * does not depend on the thread count. */
#define KG_DET_ROUND 8

/* one_vs_all_after for a switch not yet decided: the trainer sizes its
 * buffers for both stages and trains with drawn negatives until the
 * caller sets tr->o.one_vs_all_after to an epoch count. */
#define KG_ONE_VS_ALL_LATER UINT32_MAX

#define KG_TRAIN_OPTS_INIT { .model = KG_MODEL_TRANSE_L2, .dim = 400, \
	.gamma = 12.0, .loss = KG_LOSS_INIT, .batch_size = 1024, \
	.neg_sample_size = 256, .lr = 0.1, .rel_optim = KG_OPTIM_ADAGRAD, \
	.reg_norm = 3, .init = KG_INIT_UNIFORM, .epochs = 10, .seed = 1, \
	.neg_pool = 4096, .lr_decay = 1.0, .ent_optim = KG_OPTIM_ADAGRAD, \
	.ova_mode = KG_OVA_PLAIN, .ova_dura = -1.0 }

/* Check option values and combinations; 0, or -1 after kg_error(). */
int kg_train_opts_check(const struct kg_train_opts *o);
/* Whether the epoch after `epochs_done` completed ones scores every
 * entity (one_vs_all, or one_vs_all_after reached): a two-stage
 * schedule, the sampled softmax first, then the full one. */
int kg_train_one_vs_all(const struct kg_train_opts *o, uint32_t epochs_done);
/* The positives per chunk: chunk_size (0: neg_sample_size), at most
 * batch_size.  The one definition; SSGD sizes its buffers by it. */
uint32_t kg_train_chunk_size(const struct kg_train_opts *o);
/* The rule that draws fresh entity rows (init, init_scale or
 * (gamma + 2) / dim, seed) from the RNG stream (purpose, partition), core/rng.h. */
struct kg_store_init kg_train_init_rule(const struct kg_train_opts *o,
    enum kg_stream purpose);
/* The layout of an entity table for these options: rows of dim floats,
 * with the entity optimiser's state (row-wise Adagrad: one float), n_parts
 * partitions at off (NULL for one). */
struct kg_store_layout kg_train_layout(const struct kg_train_opts *o,
    uint64_t n_entities, uint32_t n_parts, const int64_t *off);

struct kg_train_ws;		/* per-thread work buffers (train_impl.h) */
struct kg_defer;		/* a chunk's kept gradients (train_impl.h) */

/*
 * The summed row gradients of one chunk, handed to a trainer's sync hook
 * (synchronous data-parallel training, lib/dist/ssgd.c): n_ent distinct
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
	uint32_t n_parts;	/* of the store */
	struct kg_store *ents;	/* entity rows and Adagrad state */
	int own_store;		/* kg_trainer_init made it */
	/* The head and tail partitions pinned by the bucket in progress. */
	const struct kg_store_part *cur[2];
	float *rel;		/* n_rel_rows x rel_width */
	float *rel_state;	/* n_rel_rows x rel_state_width */
	size_t rel_state_width;
	struct kg_sampler *samplers;	/* one per partition */
	struct kg_neg_pool pool;	/* neg_pool: the other partitions */
	struct kg_query_weights qw;	/* subsampling */
	int bucket_chunks;		/* set by bucket drivers (above) */
	uint64_t chunk_base;		/* added to chunk numbers in the RNG
					 * streams (pass k of a bucket: k << 32) */
	struct kg_tripleset known;	/* filter_negatives */
	const int32_t *types;		/* use_types: borrowed, n_entities */
	uint32_t nthreads;
	struct kg_train_ws *ws;		/* nthreads */
	struct kg_defer *defer;		/* deterministic: KG_DET_ROUND */
	uint64_t max_part_rows;	/* the largest partition's rows */
	int progress;		/* report on stderr during long epochs */
	int ova;		/* the bucket in progress scores every entity
				 * (kg_train_one_vs_all at its epoch) */
	uint32_t epoch;		/* epochs completed */
	uint64_t step;		/* batches completed */
	double last_loss;	/* mean loss of the last epoch */
	/*
	 * The epoch loop (kge/epochs.h; NULL outside one, as in unit
	 * tests): its state is saved with checkpoints, and so are the best
	 * epoch's parameters (kg_trainer_snapshot): the entities' in the
	 * store's snapshot (store.h), the relation table's in best_rel.
	 */
	struct kg_epochs *ep;
	float *best_rel;
	/*
	 * Synchronous data parallel (set by lib/dist/ssgd.c; 0, 1 and NULL
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
	/*
	 * The same exchange for a trainer that applies the sums itself (the
	 * device trainer, kge/train_device.h): merge (with sync_ctx) puts
	 * in *out the sum over every share of the chunk's row gradients in
	 * g, exactly what sync would apply (IDs ascending; the arrays its
	 * own, valid until the next call), and applies nothing.  0, or -1
	 * after kg_error().  NULL: no exchange.
	 */
	int (*merge)(void *ctx, struct kg_trainer *tr,
	    const struct kg_row_grads *g, struct kg_row_grads *out);
	/*
	 * Rows that take part in scoring but are never updated (a warm
	 * start's --freeze_old, kge/warmstart.h): bit e of frozen_ent marks
	 * entity ID e (the trainer's IDs), bit r of frozen_rel relation row
	 * r (inverses included).  A frozen row keeps its parameters and its
	 * optimiser state.  NULL: none; owned, freed by kg_trainer_release.
	 * Only the host engine honours them (kge/engine.h refuses a device).
	 */
	uint64_t *frozen_ent, *frozen_rel;
};

/* Whether bit id of the frozen bitmap b (NULL: none frozen) is set. */
static inline int
kg_trainer_frozen(const uint64_t *b, uint64_t id)
{
	return b != NULL && (b[id >> 6] >> (id & 63)) & 1u;
}

/*
 * Set up a trainer over the entity store "ents" (borrowed; state width 1,
 * rows of o->dim) and n_relations relations: draw the relation parameters
 * from the seed, build one negative sampler per partition of the store
 * from the degrees in the n_train triples (train, rows of (h, r, t) in
 * the store's IDs), the known-triple set from the nknown triples in known
 * (filter_negatives) and the type lists (use_types: types gives a type ID
 * per entity, -1 untyped, n_types of them).  Entity rows are drawn by the
 * store when first used.  0, or -1 after kg_error() with nothing to
 * release.
 */
int kg_trainer_init_store(struct kg_trainer *tr, const struct kg_train_opts *o,
    struct kg_store *ents, uint64_t n_relations, const int32_t *train,
    uint64_t n_train, const int32_t *known, uint64_t nknown,
    const int32_t *types, uint32_t n_types);
/* As kg_trainer_init_store over a new in-memory store of n_entities rows
 * in one partition (owned by the trainer), the single-process case. */
int kg_trainer_init(struct kg_trainer *tr, const struct kg_train_opts *o,
    uint64_t n_entities, uint64_t n_relations, const int32_t *train,
    uint64_t n_train, const int32_t *known, uint64_t nknown,
    const int32_t *types, uint32_t n_types);
void kg_trainer_release(struct kg_trainer *tr);

/*
 * Train on the n positives hrt (global IDs; heads in partition ph, tails
 * in pt), at most max_batches batches (0: all), with both partitions
 * pinned in the store.  Chunk c of epoch e draws its negatives from the
 * stream (KG_STREAM_CHUNK, e, ph, pt, chunk_base + c).
 * *loss_sum gets the sum of the positives' losses, *done the number of
 * positives trained.  Returns 0, or -1 after kg_error() when a partition
 * cannot be had or the loss stopped being finite (parameters may then
 * hold NaN).
 */
int kg_trainer_bucket(struct kg_trainer *tr, uint32_t ph, uint32_t pt,
    const int32_t *hrt, uint64_t n, uint64_t max_batches, double *loss_sum,
    uint64_t *done);

/*
 * Choose the negative pool's rows for the epoch tr->epoch and read them
 * from the store, for the partitions q with owner[q] == me (owner NULL:
 * every partition); the others' rows are zeroed and marked valid, for an
 * MPI driver to sum the ranks' pools (each row then comes from one
 * rank).  At the start of an epoch, so that a resumed run draws what an
 * uninterrupted one does.  0, or -1 after kg_error().
 */
int kg_trainer_pool_load(struct kg_trainer *tr, const int32_t *owner,
    int me);
/*
 * Apply the pool's waiting gradients (pool negatives' gradients are
 * summed per slot while their rows are elsewhere, and applied when a
 * bucket next pins the partition) to the partitions q with owner[q] ==
 * me, acquiring each, and drop every other partition's: for an MPI
 * driver at the end of an epoch, once the ranks' gradients are summed.
 * 0, or -1 after kg_error().
 */
int kg_trainer_pool_settle(struct kg_trainer *tr, const int32_t *owner,
    int me);

/*
 * Apply summed gradients during a bucket (from the sync hook): clip (if
 * set) and update the n_ent distinct entity rows ent (global IDs in the
 * bucket's partitions, rows of dim floats in ent_g) and the n_rel
 * distinct relation rows rel (rows of rel_width floats in rel_g) with the
 * trainer's optimisers.  The gradients may be changed (clipping).
 */
void kg_trainer_apply(struct kg_trainer *tr, const uint64_t *ent,
    float *ent_g, size_t n_ent, const uint32_t *rel, float *rel_g,
    size_t n_rel);

/*
 * One epoch over the n training triples of a one-partition trainer
 * (shuffled from the seed and the epoch number; with reciprocal
 * relations each triple also gives its inverse), honouring max_step.
 * Advances tr->epoch and tr->step and sets tr->last_loss.  *trained gets
 * the positives trained.  0, or -1 after kg_error().
 */
int kg_trainer_epoch(struct kg_trainer *tr, const int32_t *hrt, uint64_t n,
    uint64_t *trained);

/*
 * Check that every entity row and relation parameter is finite, naming
 * the first that is not and the epoch ("training diverged").  0 or -1.
 */
int kg_trainer_check_finite(struct kg_trainer *tr);

/*
 * The options that fix the parameter shapes (model, dims, counts,
 * reciprocal, relation optimiser) as a new JSON object; checkpoints record
 * it and a resume must match it.  kg_trainer_shape_hints names the
 * option behind each key, for kg_ckpt_open's messages.
 */
json_t *kg_trainer_shape(const struct kg_trainer *tr);
extern const char *const kg_trainer_shape_hints[][2];

/*
 * Checkpoints (lib/io/ckpt.h): every partition of the store, the
 * relation table and its optimiser state, state.json (the shape, epoch,
 * step, last loss, seed) and the "log" text.  Saving replaces "dir"
 * atomically.  Loading checks that the checkpoint fits the trainer and
 * restores parameters, optimiser state, epoch and step (entity rows
 * through kg_store_set_source); *log gets the log text (malloc'ed, may be
 * empty).  Saving records config (the run's settings, borrowed, may be
 * NULL) in the checkpoint's manifest, and refuses a dir that is, lies
 * inside or holds one of inputs[0..n_inputs) (kg_ckpt_begin).
 * 0, or -1 after kg_error().  The MPI bucket driver writes the
 * same layout collectively.
 */
int kg_trainer_save(struct kg_trainer *tr, const char *dir, const char *log,
    json_t *config, const char *const *inputs, size_t n_inputs);
int kg_trainer_load(struct kg_trainer *tr, const char *dir, char **log);

/*
 * Keep the current parameters as the best epoch's (back 0), or put the
 * kept ones back (back 1): the entity rows through the store's snapshot
 * (kg_store_snapshot, kg_store_restore: a partition buffer keeps its
 * files, not a copy in memory) and the relation table.  With tr->ep
 * set, checkpoints hold the kept parameters (best_part-NNN.npy,
 * best_relations.npy) and the loop's state, and kg_trainer_load restores
 * both.  0, or -1 after kg_error().
 */
int kg_trainer_snapshot(struct kg_trainer *tr, int back);

/*
 * The part of a checkpoint that kg_trainer_save and _load write and read
 * for the epoch loop, for a driver that writes its own checkpoints (the
 * bucket driver): save_best writes the kept parameters into dir when
 * tr->ep holds a best epoch (nothing otherwise); load_best reads the
 * loop's state from c into tr->ep and, when c holds a best epoch, the
 * kept parameters.  Every partition of tr's store must be here.  0, or
 * -1 after kg_error().
 */
int kg_trainer_save_best(const struct kg_trainer *tr, const char *dir);
int kg_trainer_load_best(struct kg_trainer *tr, const struct kg_ckpt *c);

#endif
