/*
 * train_device_ranks: the device trainer (train_device.h) for one rank of
 * a distributed bucket run (lib/dist/dist_train.h, several ranks under
 * mpirun, each on its own GPU).
 *
 * The bucket schedule and everything between buckets stay the CPU
 * driver's: which rank holds which partitions, the partitions moved
 * between ranks, the relation merges every rel_sync steps, checkpoints.
 * Those work on the host copies (the rank's store and the trainer's
 * relation table), so the device is brought in for one bucket at a time:
 * kg_dev_ranks_bucket uploads the bucket's one or two partitions (rows
 * and optimiser state) into two slots of the largest partition's size
 * and the relation table with its state, trains the bucket's chunks
 * through the device step (the chunks, streams and negatives of
 * kg_trainer_bucket, as kg_dev_buffer_bucket does), and downloads all of
 * it back.  Per bucket that is two partitions up and down, as many bytes
 * as the partition moves between ranks send in the round.
 *
 * The negative pool (neg_pool), which the CPU ranks share after every
 * step, is not kept on the devices: kg_dev_ranks_open refuses a trainer
 * with one.  Everything is allocated when it opens; nothing per bucket.
 */
#ifndef KG_TRAIN_DEVICE_RANKS_H
#define KG_TRAIN_DEVICE_RANKS_H

#include <stdint.h>

#include "compute/backend.h"
#include "kge/train.h"

struct kg_dev_ranks;

/*
 * Open on the bucket trainer tr (borrowed; bucket_chunks set, its store
 * of P partitions holding those this rank pins) and the backend be
 * (borrowed).  NULL after kg_error() (options the device trainer
 * refuses, a negative pool, device memory).
 */
struct kg_dev_ranks *kg_dev_ranks_open(struct kg_trainer *tr,
    struct kg_backend *be);

/*
 * Train the n positives hrt (global IDs, heads in partition ph, tails in
 * pt; both partitions in the store) as kg_trainer_bucket does on the CPU:
 * *loss_sum gets the sum of their losses, *done n; the store's two
 * partitions and the trainer's relation table and state are updated.
 * 0, or -1 after kg_error() (a partition cannot be had, a device call
 * failed, or the loss is no longer finite).
 */
int kg_dev_ranks_bucket(struct kg_dev_ranks *dr, uint32_t ph, uint32_t pt,
    const int32_t *hrt, uint64_t n, double *loss_sum, uint64_t *done);

/* Free the device memory; NULL: no-op. */
void kg_dev_ranks_free(struct kg_dev_ranks *dr);

#endif
