/*
 * train_device_buf: the device trainer (train_device.h) when the entity
 * table does not fit the device: a partition buffer on the device, fed
 * from the trainer's store (host memory, itself perhaps a buffer over
 * disk: disk -> RAM -> GPU, Marius's pipeline).
 *
 * The trainer's store holds P partitions (kg-partition's layout).  The
 * device holds C of them in slots of the largest partition's size (rows
 * and optimiser state), plus one slot to read ahead into, and a bucket
 * driver trains the buckets in the order of lib/store/order.h with
 * capacity C: kg_dev_buffer_enter at each state of the order, then
 * kg_dev_buffer_bucket for each of the state's buckets.  The relation
 * table and its state stay on the device; everything is allocated when
 * the buffer opens (the slots, the trainer's work buffers and two pinned
 * staging buffers of one slot each); nothing inside the step loop.
 *
 * The pipeline.  Entering state s (s > 0) waits for the device
 * (kg_be_sync: the last state's buckets, and the copies it queued), puts
 * the partition whose copy back to the host arrived into the store
 * (acquire, copy from staging, release dirty), and maps the partition
 * read ahead (the one state s brings, order.h's in[s]).  Once the
 * state's first chunk is queued on the compute stream, the partition
 * state s dropped is queued for the host on the copy stream (into the
 * staging buffer) and in[s + 1] is copied from the store into the other
 * staging buffer and queued for its slot behind it, so both copies run
 * while the state's buckets train; the store is asked to read in[s + 2]
 * ahead from its disk.  Each such upload is a swap: an epoch makes as
 * many as its order has (kg_order_swaps_formula per pass).  The first
 * state of a run, and of a run resumed, is filled synchronously (a
 * "fill", not a swap); later epochs start from the partitions the last
 * one left on the device (the order starts with them).
 *
 * A bucket (ph, pt) trains as the CPU bucket trainer does
 * (kg_trainer_bucket): the same chunks (kg_plan_even) and the same plan
 * of each (kg_plan_chunk): negatives drawn inside the corrupted side's
 * partition by its sampler and, with the trainer's negative pool
 * (neg_pool > 0), the pool's share of them from stale copies of rows
 * of every partition (struct kg_neg_pool, lib/kge/sampler.h).  The pool lives on the
 * device beside the slots (train_device_impl.h's struct dev_pool): its
 * rows, refreshed from the device after each bucket of their partition;
 * the gradients of its negatives and their squares, summed there and
 * applied to their rows (row-wise Adagrad through kg_be_adagrad_sq) when
 * the partition's next bucket starts, a carry over an epoch's end as on
 * the CPU; the host keeps its IDs and flags and makes its draws.
 * Results agree with the CPU trainer within rounding (the arithmetic of
 * lib/compute/devops_*.h, sums in other orders).
 *
 * Threads: one thread drives a buffer; the backend is borrowed and used
 * by that thread only.  Errors: functions return 0 or -1 after
 * kg_error(); after an error the buffer can only be freed (the store
 * then holds the partitions as last written back).
 */
#ifndef KG_TRAIN_DEVICE_BUF_H
#define KG_TRAIN_DEVICE_BUF_H

#include <stdint.h>

#include "compute/backend.h"
#include "kge/train.h"
#include "store/order.h"

/* What a buffer moved, since it opened. */
struct kg_dev_buffer_stats {
	uint64_t swaps;		/* partitions read ahead into a slot */
	uint64_t fills;		/* partitions uploaded to fill a first state */
	uint64_t bytes_up, bytes_down;	/* entity rows and state */
	double wait_seconds;	/* the host waiting at state changes */
};

/* Open flags.  SYNC swaps synchronously when a state is entered, with no
 * reading ahead: the reference the tests compare the pipeline with. */
enum { KG_DEV_BUFFER_SYNC = 1 };

struct kg_dev_buffer;

/*
 * Open a buffer of capacity C (2 <= C <= P) on the trainer tr (borrowed;
 * its store has P >= 2 partitions, state width 1 or more; set up with
 * bucket_chunks) and the backend be (borrowed): allocate the device
 * slots (min(C + 1, P) of the largest partition) and the work buffers,
 * upload the relation table.  No entity partition is uploaded yet.  NULL
 * after kg_error() (options the device trainer refuses, device memory).
 */
struct kg_dev_buffer *kg_dev_buffer_open(struct kg_trainer *tr,
    struct kg_backend *be, uint32_t capacity, int flags);

/*
 * Enter state s of order o (built for P and this capacity; o must stay
 * valid until the next state is entered): afterwards the partitions of
 * the state are on the device.  0 or -1.
 */
int kg_dev_buffer_enter(struct kg_dev_buffer *db, const struct kg_order *o,
    uint32_t s);

/*
 * Train the n positives hrt (global IDs, heads in partition ph, tails in
 * pt, both on the device) as a bucket: *loss_sum gets the sum of their
 * losses, *done n.  0, or -1 after kg_error() (a device call failed, a
 * partition is not on the device, or the loss is no longer finite).
 */
int kg_dev_buffer_bucket(struct kg_dev_buffer *db, uint32_t ph, uint32_t pt,
    const int32_t *hrt, uint64_t n, double *loss_sum, uint64_t *done);

/*
 * The epoch's negative pool (before its first bucket; no-op without a
 * pool but kg_trainer_pool_load's): the pool's choice of rows
 * (kg_trainer_pool_load, from the store as the last flush left it) on
 * the device, and the gradients still waiting moved to the carry.  0 or
 * -1.
 */
int kg_dev_buffer_pool_load(struct kg_dev_buffer *db);

/*
 * Write everything back to the host: the partitions on the device into
 * the store (they stay on the device too) and the relation table and its
 * state into the trainer, and the pool's waiting gradients into the
 * trainer's pool; for checkpoints and the model at an epoch's end.  0 or
 * -1.
 */
int kg_dev_buffer_flush(struct kg_dev_buffer *db);

/*
 * The capacity C of a device buffer for P partitions whose largest has
 * most_rows rows of dim floats and state_width floats of state, from
 * kg-train's settings: gpu_capacity (--gpu_buffer; 0: unset; at most P),
 * or the partitions gpu_mem_budget (--gpu_mem_budget, bytes; 0: unset)
 * holds less one to read ahead into (at least 2; P when all fit, with
 * no slot to read ahead into), the smaller when both are set, into
 * *capacity.  0, or -1 after kg_error() saying which setting cannot
 * work.
 */
int kg_dev_buffer_capacity(uint32_t gpu_capacity, uint64_t gpu_mem_budget,
    uint32_t P, uint64_t most_rows, uint32_t dim, uint32_t state_width,
    uint32_t *capacity);

const struct kg_dev_buffer_stats *kg_dev_buffer_stats(
    const struct kg_dev_buffer *db);

/* Free the device memory and the buffer (what was not flushed is lost);
 * NULL: no-op. */
void kg_dev_buffer_free(struct kg_dev_buffer *db);

#endif
