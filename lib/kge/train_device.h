/*
 * train_device: the shallow trainer's step written only in calls of the
 * device seam (lib/compute/backend.h), so that one code runs on the CPU
 * backend (tested here) and on the CUDA backend (kg-train --device cuda).
 *
 * It trains a one-partition trainer (kg_trainer_init) in place of
 * kg_trainer_epoch: the entity table, the relation table and both
 * optimisers' states are uploaded once when it opens and stay on the
 * device; per chunk the host plans it with the CPU trainer's planner
 * (lib/kge/plan.h: the positives, the negatives drawn from the chunk's
 * RNG stream, the distinct rows and each row's slot among them) and
 * sends it as one index batch, and the device gathers the rows, builds the queries, scores the
 * positives (pairs) and the shared negatives (chunk), takes the loss
 * (self-adversarial weights included), runs both backwards, sums each
 * distinct row's gradient by scatter-add and updates the rows it touched
 * (entity and relation optimisers).  The loss is summed on the device and
 * read back once an epoch.  Every buffer is allocated when it opens;
 * nothing is allocated inside the step loop.
 *
 * Against kg_trainer_epoch at the same options and seed: the same epoch
 * order (KG_STREAM_SHUFFLE), the same chunks, sides and negatives (one
 * planner, kg_plan_chunks and kg_plan_chunk), the same initial
 * parameters.  What differs: the chunks run one after another on one
 * stream (the CPU trainer runs them on OpenMP threads, Hogwild), the
 * query forms and the loss scaling are lib/compute/devops_*.h's float
 * arithmetic, and sums run in other orders (atomics on a GPU), so
 * results agree within rounding, not bit for bit; MRR after a few epochs
 * within 0.005.
 *
 * TransR compares its query M h + r (M t - r) with the candidates
 * projected by the query's own M: the positives by kg_be_transr, the
 * shared negatives by one strided-batched GEMM per chunk (each query
 * projects all N; the CPU trainer projects them once per run of equal
 * relations, the same scores), and the negatives' gradient back through
 * one GEMM per query.
 *
 * Data-parallel (the trainer's shard_size and merge hook set, as
 * lib/dist/ssgd.c sets them): each chunk is cut into the CPU trainer's
 * shares and this trainer computes its own (the loss a mean over the
 * whole chunk); the distinct rows' summed gradients are downloaded to
 * pinned host buffers, summed over the ranks by merge, uploaded and
 * applied with kg_trainer_apply's rates.  An empty share takes part too.
 *
 * The options it does not support are the device places' gaps in the
 * supports table (kge/engine.h), refused with one line each: 1-vs-all,
 * filtered or typed or in-batch negatives, relation prediction, DURA,
 * subsampling weights, gradient clipping.
 */
#ifndef KG_TRAIN_DEVICE_H
#define KG_TRAIN_DEVICE_H

#include <stdint.h>

#include "compute/backend.h"
#include "kge/engine.h"
#include "kge/train.h"

/* Whether options o can train through the seam: the supports table's
 * options rows for the device (kge/engine.h); 0, or -1 after kg_error()
 * naming the first option it does not support. */
static inline int
kg_train_device_check(const struct kg_train_opts *o)
{
	struct kg_engine_run r = KG_ENGINE_RUN_INIT;

	r.o = o;
	r.on_device = 1;
	return kg_engine_supports(KG_PLACE_DEVICE, &r, KG_ASK_OPTIONS);
}

struct kg_dev_trainer;

/*
 * Open on the one-partition trainer tr (borrowed; its partition 0 stays
 * pinned until kg_dev_trainer_free) and the backend be (borrowed):
 * allocate every device buffer and upload the tables.  NULL after
 * kg_error() (options refused, more than one partition, device memory).
 */
struct kg_dev_trainer *kg_dev_trainer_open(struct kg_trainer *tr,
    struct kg_backend *be);

/*
 * One epoch over the n training triples hrt, as kg_trainer_epoch (the
 * inverses with reciprocal relations, max_step honoured): advances
 * tr->epoch and tr->step and sets tr->last_loss; *trained gets the
 * positives trained.  0, or -1 after kg_error() (a device call failed,
 * or the loss is no longer finite).
 */
int kg_dev_trainer_epoch(struct kg_dev_trainer *dt, const int32_t *hrt,
    uint64_t n, uint64_t *trained);

/* Copy the device's tables and optimiser states back into the trainer
 * (its entity partition and relation arrays).  0, or -1 after kg_error(). */
int kg_dev_trainer_download(struct kg_dev_trainer *dt);

/* Free the device buffers and release the partition (as changed: call
 * kg_dev_trainer_download first to keep the training).  NULL: no-op. */
void kg_dev_trainer_free(struct kg_dev_trainer *dt);

#endif
