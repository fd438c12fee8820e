/*
 * buckets_impl: the state of the bucket driver (lib/dist only).
 *
 *   buckets.c       set-up, the schedule's rounds and epochs, figures
 *   buckets_sync.c what ranks exchange between rounds: partitions
 *                  (through the store) and relation changes
 *   buckets_io.c    checkpoints and the model dir, written collectively
 *   buckets_buffer.c  the out-of-core epoch of one process over a
 *                  partition buffer
 *   buckets_loop.c the epoch loop's hooks: validation, the best epoch,
 *                  checkpoints, the epoch line
 */
#ifndef KG_BUCKETS_IMPL_H
#define KG_BUCKETS_IMPL_H

#include "dist/dist_train.h"
#include "eval/eval.h"
#include "graph/partition.h"
#include "io/dataset.h"
#include "kge/engine.h"
#include "kge/epochs.h"
#include "kge/train_device_buf.h"
#include "store/order.h"

/* What an out-of-core epoch moved. */
struct kg_buckets_io {
	uint64_t swaps, swaps_bound;
	uint64_t order_swaps;	/* the order's (on a device: swaps is what
				 * it uploaded, fewer when it keeps one) */
	uint64_t bytes_read, bytes_written;
	double wait_seconds;	/* training stood still for the disk */
};

struct kg_buckets {
	struct kg_dist *d;
	const struct kg_train_opts *o;
	const struct kg_train_job *j;
	const struct kg_dist_train_opts *x;
	struct kg_dataset ds;
	struct kg_partition_book pb;
	struct kg_store *st;	/* this rank's partitions, parked when idle */
	struct kg_trainer tr;
	struct kg_dist_sched s;	/* this pass's: s_base relabelled */
	struct kg_dist_sched s_base;	/* as kg_dist_sched_build makes it */
	uint32_t P;
	int32_t *loc;		/* [P] rank holding or parking it; -1: none yet */
	uint8_t *pinned;	/* [P] pinned here for the current round */
	char *ckpt;
	json_t *config;		/* the run's settings (kg_buckets_config),
				 * recorded by checkpoints and the model */
	int show;		/* rank 0, not quiet: epoch lines, messages */
	int progress;		/* shown, on a terminal or --progress: the
				 * line inside an epoch */
	int32_t *pos;		/* positives of a bucket */
	size_t pos_cap;
	/* The epoch loop (kge/epochs.h): validation, stops, the log (rank
	 * 0's is the whole log, resumed lines first, bucket lines before
	 * their epoch's) and the state checkpoints keep. */
	struct kg_epochs ep;
	uint64_t step;		/* batches trained, every rank's */
	uint64_t epoch_bytes;	/* sent in the last epoch, every rank's */
	/* With --valid_every (one process): the valid triples and the
	 * filter over every split, in the partitions' new IDs. */
	struct kg_triples valid;
	struct kg_filter filter;
	struct kg_strbuf mine;	/* this rank's lines of the current epoch */
	float *rel_base, *rel_state_base;	/* relations at the last merge */
	double *rel_delta;	/* merge scratch: a table's changes, then
				 * (rows) the ranks that changed each row */
	int32_t *pool_now, *pool_next;	/* [P] pool sync scratch: the
					 * ranks that train each partition */
	uint64_t *pool_valid;	/* [P] pool sync scratch */
	int32_t *types;		/* entity types in new IDs (--neg_types) */
	uint32_t pass;		/* of the epoch, < x->passes */
	/* Out of core (buckets_buffer.c). */
	int buffered;
	uint32_t capacity;	/* partitions in memory (on a device: on it) */
	struct kg_order ord;	/* the epoch's order */
	struct kg_buckets_io io, io_total;
	/* Where the steps run (kge/engine.h): what the run asks of them,
	 * and the engine chosen for it.  On a device (buffered too) the
	 * store holds host_capacity partitions in memory (0: every one). */
	int on_device;
	uint32_t host_capacity;
	struct kg_engine_run run;
	struct kg_engine *eng;
};

/* One epoch; stats gets { loss sum, positives } over all ranks, *secs
 * its seconds.  0, or -1 after kg_error() on this rank. */
int kg_buckets_epoch(struct kg_buckets *v, double stats[2], double *secs);
/* With --valid_every: the valid triples and the filter over every split
 * (the train split as the buckets hold it), in new IDs.  0 or -1. */
int kg_buckets_valid_setup(struct kg_buckets *v);
/* Every epoch through the epoch loop (v->ep), with its log, validation
 * and checkpoints; 0 or -1 on every rank. */
int kg_buckets_epochs(struct kg_buckets *v);

/* Train bucket bk (a * P + b) of round "round", logging it; stats[0]
 * and stats[1] get its loss sum and positives added.  0 or -1. */
int kg_buckets_train(struct kg_buckets *v, uint32_t round, uint32_t bk,
    double stats[2]);

/* Out of core: open the buffer store for the trainer (C from the
 * options), and run one epoch over it.  0 or -1 after kg_error(). */
int kg_buckets_buffer_open(struct kg_buckets *v,
    const struct kg_store_layout *l, const struct kg_store_init *in);
int kg_buckets_buffer_epoch(struct kg_buckets *v, double stats[2]);
/* The figures of an out-of-core run, added to fig; those of its last
 * epoch for the epoch loop's line (the figures hook of kge/epochs.h:
 * *json for the log, *text for stderr, new strings). */
void kg_buckets_buffer_figures(const struct kg_buckets *v, json_t *fig);
void kg_buckets_buffer_line(const struct kg_buckets *v, char **json,
    char **text);

/*
 * Move the partitions so that every rank holds (pins) the two that round
 * "round" of the schedule gives it; 0, or -1 after kg_error() on this
 * rank (peers may be waiting: the caller aborts).
 */
int kg_buckets_transition(struct kg_buckets *v, uint32_t round);
/* Share the negative pool's rows and waiting gradients after a step of
 * a round (mid) or after the round (collective; see buckets_sync.c). */
void kg_buckets_sync_pool(struct kg_buckets *v, uint32_t round, int mid);
/* Merge the ranks' relation tables (parameters and optimiser state):
 * each rank's change since the last merge is summed onto the base. */
void kg_buckets_sync_relations(struct kg_buckets *v);
/* Take the tables as they are now as the merge base. */
void kg_buckets_sync_base(struct kg_buckets *v);

/* 0 on every rank, or -1 on every rank when any rank passed rc < 0. */
int kg_buckets_agree(struct kg_buckets *v, int rc);
/* The checkpoint's shape keys: the trainer's, nparts and nranks. */
json_t *kg_buckets_shape(const struct kg_buckets *v);
/* The run's settings, a new object: what the checkpoints and the model
 * dir record as config (the dataset's dictionaries included). */
json_t *kg_buckets_config(const struct kg_buckets *v);
/* Rank 0, before a resume from v->ckpt: the checkpoint must come from
 * this dataset (by its dictionaries); settings changed since it was
 * saved are said on stderr (unless quiet) and recorded in v->config
 * (resumed_with_changes, as the single process does).  0, or -1 after
 * kg_error(). */
int kg_buckets_resume_changes(struct kg_buckets *v);
/* Collective: save a checkpoint, or restore one (every rank); write the
 * model dir (rank 0, the others sending their partitions).  0 or -1 on
 * every rank. */
int kg_buckets_save(struct kg_buckets *v);
int kg_buckets_load(struct kg_buckets *v);
int kg_buckets_write_model(struct kg_buckets *v, json_t *figures);

#endif
