/*
 * train_buckets_impl: the bucket driver's functions shared by its files
 * (lib/app only), and the run's state, struct kg_buckets: a job
 * (app/job.h) and what the partitioned run adds to it.
 *
 *   train_buckets.c         set-up, the schedule's rounds and epochs,
 *                           figures
 *   train_buckets_io.c      checkpoints and the model dir, written
 *                           collectively
 *   train_buckets_buffer.c  the out-of-core epoch of one process over a
 *                           partition buffer
 *   train_buckets_loop.c    the epoch loop's hooks: validation, the best
 *                           epoch, checkpoints, the epoch line
 *   train_buckets_warm.c    the warm start's rows, on every rank
 */
#ifndef KG_APP_TRAIN_BUCKETS_IMPL_H
#define KG_APP_TRAIN_BUCKETS_IMPL_H

#include "app/job.h"
#include "app/train_buckets.h"
#include "dist/buckets_sync.h"
#include "graph/partition.h"
#include "store/dev_tier.h"
#include "store/order.h"

/* What an out-of-core epoch moved. */
struct kg_buckets_io {
	uint64_t swaps, swaps_bound;
	uint64_t order_swaps;	/* the order's (on a device: swaps is what
				 * it uploaded, fewer when it keeps one) */
	uint64_t bytes_read, bytes_written;
	double wait_seconds;	/* training stood still for the disk */
};

/*
 * The partitioned run: the job's members (o, j, ds, tr, st: this rank's
 * partitions, parked when idle, or the partition buffer; eng, ckpt,
 * config, show, progress, ep, valid and filter in the partitions' new
 * IDs, with --valid_every in one process) and its own.  The epoch loop's
 * log on rank 0 is the whole log, resumed lines first, bucket lines
 * before their epoch's.
 */
struct kg_buckets {
	KG_JOB_EMBED;
	struct kg_dist *d;
	const struct kg_dist_train_opts *x;
	struct kg_partition_book pb;
	struct kg_dist_sched s;	/* this pass's: s_base relabelled */
	struct kg_dist_sched s_base;	/* as kg_dist_sched_build makes it */
	uint32_t P;
	int32_t *loc;		/* [P] rank holding or parking it; -1: none yet */
	uint8_t *pinned;	/* [P] pinned here for the current round */
	struct kg_buckets_sync sync;	/* the exchanges' view of the above */
	int32_t *pos;		/* positives of a bucket */
	size_t pos_cap;
	uint64_t step;		/* batches trained, every rank's */
	uint64_t epoch_bytes;	/* sent in the last epoch, every rank's */
	struct kg_strbuf mine;	/* this rank's lines of the current epoch */
	int32_t *types;		/* entity types in new IDs (--neg_types) */
	uint32_t pass;		/* of the epoch, < x->passes */
	/* Out of core (lib/app/train_buckets_buffer.c). */
	int buffered;
	uint32_t capacity;	/* partitions in memory (on a device: on it) */
	struct kg_order ord;	/* the epoch's order */
	struct kg_buckets_io io, io_total;
	/* Where the steps run (kge/engine.h): what the run asks of them.
	 * On a device (buffered too) the store holds host_capacity
	 * partitions in memory (0: every one). */
	int on_device;
	uint32_t host_capacity;
	struct kg_engine_run run;
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

/* 0 on every rank, or -1 on every rank when any rank passed rc < 0. */
int kg_buckets_agree(struct kg_buckets *v, int rc);
/* The checkpoint's shape keys: the trainer's, nparts and nranks. */
json_t *kg_buckets_shape(const struct kg_buckets *v);
/* The run's settings, a new object: what the checkpoints and the model
 * dir record as config (kg_job_config's, the partitioned run's own and
 * the dataset's dictionaries). */
json_t *kg_buckets_config(const struct kg_buckets *v);
/* Rank 0, resuming: refuse (kg_error) a checkpoint trained with another
 * --disk_dtype (its config's "disk_dtype", float32 when absent), then
 * kg_job_resume_changes.  0 or -1. */
int kg_buckets_check_dtype(struct kg_buckets *v);
/* Collective: save a checkpoint, or restore one (every rank); write the
 * model dir (rank 0, the others sending their partitions).  0 or -1 on
 * every rank. */
int kg_buckets_save(struct kg_buckets *v);
int kg_buckets_load(struct kg_buckets *v);
int kg_buckets_write_model(struct kg_buckets *v, json_t *figures);

/*
 * The warm start (v->j->warm; nothing when it names no source), before
 * the first round, on every rank: rank r writes the rows of the
 * partitions p with p % ranks == r through its store, matched by name in
 * the trainer's IDs (the partition book's new2old), and every rank's
 * v->loc says so (one process: rank 0 holds them all).  The table is
 * one process's, the relations every rank's own copy of the same rows.
 * 0, -1 after kg_error() or KG_ERR_VERSION on this rank (the caller
 * agrees).
 */
int kg_buckets_warm_start(struct kg_buckets *v);
/*
 * Under mpirun, before a resume puts the checkpoint's partitions: drop
 * those kg_buckets_warm_start left on this rank (v->loc back to -1), so
 * that the store can take what the checkpoint sends.  Nothing in one
 * process (the checkpoint's files replace the rows) or without a warm
 * start.  0 or -1 after kg_error().
 */
int kg_buckets_warm_forget(struct kg_buckets *v);

#endif
