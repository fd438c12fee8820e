/*
 * train_buckets_impl: the bucket driver's functions shared by its files
 * (lib/app only); the run's state is struct kg_buckets
 * (dist/buckets_sync.h).
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

#include "app/train_buckets.h"
#include "app/train_engine.h"
#include "dist/buckets_sync.h"
#include "store/dev_tier.h"

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
