/*
 * dist_train: the options of kg-train's distributed runs (partition
 * buckets, whose driver is lib/app/train_buckets.h, and synchronous
 * data-parallel SGD, here), the arithmetic of the bucket runs' relation
 * merges, and the data-parallel hooks of kg_train_run.
 */
#ifndef KG_DIST_TRAIN_H
#define KG_DIST_TRAIN_H

#include <stdint.h>

#include "dist/dist.h"
#include "kge/train.h"
#include "kge/train_job.h"

enum kg_dist_mode { KG_DIST_NONE, KG_DIST_BUCKETS, KG_DIST_SSGD };

struct kg_dist_train_opts {
	enum kg_dist_mode mode;
	const char *partitions;	/* kg-partition dir (buckets) */
	uint32_t rel_sync;	/* steps between relation averages; 0: epoch
				 * ends only */
	uint32_t buffer_capacity;	/* out of core: partitions in memory */
	uint64_t mem_budget;	/* out of core: bytes of partition buffers */
	const char *swap_dir;	/* out of core: partition files; NULL: the
				 * checkpoint's parent directory */
	int disk_f16;		/* out of core: the partition files' rows
				 * as binary16 (--disk_dtype float16) */
	uint32_t passes;	/* passes over the buckets per epoch, each
				 * with a 1/passes slice of every bucket */
	int rel_merge;		/* KG_REL_MERGE_*: how relation merges
				 * combine the ranks' changes
				 * (buckets_sync.c) */
	uint32_t gpu_capacity;	/* on a device: partitions it holds */
	uint64_t gpu_mem_budget;	/* on a device: bytes of partitions */
};

/* Relation merges: each row's change is the mean over the ranks that
 * changed it (default), the mean over all ranks, or the sum. */
enum { KG_REL_MERGE_ROWS, KG_REL_MERGE_MEAN, KG_REL_MERGE_SUM };

#define KG_DIST_TRAIN_OPTS_INIT { .mode = KG_DIST_NONE, .passes = 1 }

/*
 * The arithmetic of a relation merge (tested without MPI): changed[i] =
 * 1 if row i of x (rows x w) differs from base, else 0; then, with sum
 * the ranks' changes summed and changed summed over the ranks, base =
 * x = base + sum / divisor per row (how: KG_REL_MERGE_*).
 */
void kg_rel_rows_changed(const float *x, const float *base, size_t rows,
    size_t w, double *changed);
void kg_rel_merge_apply(float *x, float *base, const double *sum,
    const double *changed, size_t rows, size_t w, int how, int nranks);

/* "buckets" or "ssgd"; 0 or -1 (no message). */
int kg_dist_mode_parse(const char *s, enum kg_dist_mode *m);

/*
 * Synchronous data-parallel SGD (the Ray paper's scheme) through
 * kg_train_run's hooks: every rank holds every parameter and loads the
 * whole dataset; kg_trainer_epoch() shuffles identically everywhere and
 * every chunk of a batch is cut into one contiguous share per rank
 * (struct kg_trainer's shard_rank, shard_size).  Each rank computes the
 * gradients of its share (the loss still averaged over the whole chunk,
 * the chunk's negatives drawn from the same random stream everywhere);
 * the relation gradients, the dense parameters here, are summed with one
 * MPI_Allreduce per chunk and the touched entity rows are gathered from
 * every rank and summed in rank order (kg_dist_sparse_sum); then every
 * rank applies the same update.  The result equals one process training
 * the same global batch, up to the order of float additions (bit for bit
 * with one rank).  after_init also broadcasts rank 0's parameters, so a
 * run resumed from rank 0's checkpoint continues everywhere.
 * --one_vs_all is not supported.  On devices the device trainer takes the
 * same shares and hands its sums to the trainer's merge hook (the same
 * exchange, applied on the device; kge/train.h).
 */
struct kg_dist_ssgd;

struct kg_dist_ssgd *kg_dist_ssgd_new(struct kg_dist *d);
void kg_dist_ssgd_free(struct kg_dist_ssgd *s);
/* The hooks of struct kg_train_job (ctx: a struct kg_dist_ssgd). */
int kg_dist_ssgd_after_init(void *ctx, struct kg_trainer *tr);
int kg_dist_ssgd_after_epoch(void *ctx, struct kg_trainer *tr);

#endif
