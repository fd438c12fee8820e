/*
 * buckets_sync: what the ranks of a bucket run exchange between its
 * steps and rounds (partitions through the store, the negative pool's
 * rows and gradients, relation changes), and the state of the run they
 * read and write (struct kg_buckets_sync), which the bucket driver
 * (lib/app/train_buckets.h) sets up and trains.  Every function is
 * collective: all ranks call it at the same point; with one rank they
 * exchange nothing.
 */
#ifndef KG_DIST_BUCKETS_SYNC_H
#define KG_DIST_BUCKETS_SYNC_H

#include "dist/dist_train.h"
#include "kge/train.h"

/*
 * The exchanges' view of a bucket run: the ranks, the options, the
 * partition count, the schedule of the current pass (the driver's,
 * relabelled in place), the store that holds this rank's partitions
 * (parking the idle ones), the trainer over it (its relations and
 * negative pool) and the driver's [P] arrays of where each partition is
 * (loc: the rank that holds or parks it, -1: none yet) and which this
 * rank pins; set once (kg_buckets_sync_init), and the scratch of the
 * merges and pool syncs, which it owns.
 */
struct kg_buckets_sync {
	struct kg_dist *d;
	const struct kg_dist_train_opts *x;
	uint32_t P;
	const struct kg_dist_sched *s;
	struct kg_store *st;
	struct kg_trainer *tr;
	int32_t *loc;
	uint8_t *pinned;
	float *rel_base, *rel_state_base;	/* relations at the last merge */
	double *rel_delta;	/* merge scratch: a table's changes, then
				 * (rows) the ranks that changed each row */
	int32_t *pool_now, *pool_next;	/* [P] pool sync scratch: the
					 * ranks that train each partition */
	uint64_t *pool_valid;	/* [P] pool sync scratch */
};

/* Point y at the run's parts as above and allocate its [P] scratch
 * (the merge's comes with the first merge); the pointers must stay valid
 * until kg_buckets_sync_release, which frees what y owns. */
void kg_buckets_sync_init(struct kg_buckets_sync *y, struct kg_dist *d,
    const struct kg_dist_train_opts *x, uint32_t P,
    const struct kg_dist_sched *s, struct kg_store *st,
    struct kg_trainer *tr, int32_t *loc, uint8_t *pinned);
void kg_buckets_sync_release(struct kg_buckets_sync *y);

/*
 * Move the partitions so that every rank holds (pins) the two that round
 * "round" of the schedule gives it; 0, or -1 after kg_error() on this
 * rank (peers may be waiting: the caller aborts).
 */
int kg_buckets_transition(struct kg_buckets_sync *v, uint32_t round);
/* Share the negative pool's rows and waiting gradients after a step of
 * a round (mid) or after the round (collective; see buckets_sync.c). */
void kg_buckets_sync_pool(struct kg_buckets_sync *v, uint32_t round,
    int mid);
/* Merge the ranks' relation tables (parameters and optimiser state):
 * each rank's change since the last merge is summed onto the base. */
void kg_buckets_sync_relations(struct kg_buckets_sync *v);
/* Take the tables as they are now as the merge base. */
void kg_buckets_sync_base(struct kg_buckets_sync *v);

#endif
