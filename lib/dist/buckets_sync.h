/*
 * buckets_sync: what the ranks of a bucket run exchange between its
 * steps and rounds (partitions through the store, the negative pool's
 * rows and gradients, relation changes), and the state of the run they
 * read and write, which the bucket driver (lib/app/train_buckets.h)
 * sets up and trains.  Every function is collective: all ranks call it
 * at the same point; with one rank they exchange nothing.
 */
#ifndef KG_DIST_BUCKETS_SYNC_H
#define KG_DIST_BUCKETS_SYNC_H

#include "dist/dist_train.h"
#include "eval/eval.h"
#include "graph/partition.h"
#include "io/dataset.h"
#include "kge/engine.h"
#include "kge/epochs.h"
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
	/* Out of core (lib/app/train_buckets_buffer.c). */
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

#endif
