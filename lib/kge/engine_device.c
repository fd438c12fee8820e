/*
 * engine_device: the device engine, the step through the device seam
 * (kge/train_device.h) at its three places; see engine.h.
 *
 * The whole table (KG_PLACE_DEVICE): kg_dev_trainer_*, the table and the
 * relations kept on the device, copied back by kg_engine_download.
 *
 * A buffer (KG_PLACE_DEVICE_BUFFER): the partitions in a device tier
 * (lib/store/dev_tier.h) over the trainer's store, which the driver pins
 * in the states of an order (kg_engine_tier) and each bucket pins again:
 * the bucket trains as the CPU bucket trainer does (kg_trainer_bucket):
 * the same chunks (kg_plan_even) and the same plan of each
 * (kg_plan_chunk): negatives drawn inside the corrupted side's partition
 * and, with the trainer's negative pool, the pool's share from stale
 * copies of rows of every partition, kept on the device beside the
 * slots (train_device_pool.c), a carry over an epoch's end as on the
 * CPU.  The relation table and its state stay on the device.  Results
 * agree with the CPU trainer within rounding (the arithmetic of
 * lib/compute/devops_*.h, sums in other orders).
 *
 * One bucket at a time (KG_PLACE_DEVICE_RANKS, a rank under mpirun):
 * the bucket schedule and everything between buckets stay the driver's
 * (which rank holds which partitions, moves, relation merges,
 * checkpoints), on the host copies, so each bucket uploads its one or
 * two partitions (rows and optimiser state) into two slots of the
 * largest partition's size and the relation table with its state,
 * trains the bucket's chunks (kg_trainer_bucket's chunks, streams and
 * negatives, as the buffer does), and downloads all of it back: per
 * bucket two partitions up and down, as many bytes as the partition
 * moves send in a round.  The negative pool, which the ranks share after
 * every step, is not kept on the devices (the supports table refuses
 * it).  Everything is allocated when it opens; nothing per bucket.
 */
#include "kge/engine_impl.h"

#include <math.h>
#include <stdlib.h>

#include "core/util.h"
#include "kge/plan.h"
#include "kge/train_device_impl.h"

static int
open_backend(struct kg_engine *e)
{
	e->be = kg_backend_open(&e->run.device);
	return e->be == NULL ? -1 : 0;
}

static void
dev_close(struct kg_engine *e)
{
	if (e->dt != NULL)
		kg_dev_pool_free(e->dt);
	kg_dev_trainer_free(e->dt);
	kg_dev_tier_free(e->tier);
	free(e->shift);
	free(e->chunks);
	kg_backend_free(e->be);
}

static char *
dev_says(const struct kg_engine *e)
{
	return kg_xasprintf("training on %s", kg_backend_name(e->be));
}

/* The negative pool where it stays on the host: with the whole table
 * (which has none) and one bucket at a time (refused under mpirun). */
static int
pool_on_host(struct kg_engine *e, const int32_t *loc, int rank)
{
	return kg_trainer_pool_load(e->tr, loc, rank);
}

static int
settle_on_host(struct kg_engine *e, const int32_t *loc, int rank)
{
	return kg_trainer_pool_settle(e->tr, loc, rank);
}

/* The whole table. */

static int
table_open(struct kg_engine *e)
{
	if (open_backend(e) < 0)
		return -1;
	e->dt = kg_dev_trainer_open(e->tr, e->be);
	return e->dt == NULL ? -1 : 0;
}

static int
table_epoch(struct kg_engine *e, const int32_t *hrt, uint64_t n,
    uint64_t *trained)
{
	return kg_dev_trainer_epoch(e->dt, hrt, n, trained);
}

static int
table_download(struct kg_engine *e)
{
	return kg_dev_trainer_download(e->dt);
}

const struct kg_engine_ops kg_engine_device_ops = {
	.name = "device",
	.open = table_open,
	.epoch = table_epoch,
	.pool_load = pool_on_host,
	.pool_settle = settle_on_host,
	.download = table_download,
	.says = dev_says,
	.close = dev_close,
};

/* A device tier of partitions (lib/store/dev_tier.h). */

static int
buffer_open(struct kg_engine *e)
{
	struct kg_trainer *tr = e->tr;
	struct kg_dev_trainer *dt;
	uint32_t P = tr->n_parts, nslots;

	if (e->run.capacity < 2 || e->run.capacity > P) {
		kg_error("a device buffer of %u partitions cannot train %u "
		    "(it needs 2 to %u)", e->run.capacity, P, P);
		return -1;
	}
	if (open_backend(e) < 0)
		return -1;
	e->tier = kg_dev_tier_open(e->be, tr->ents, e->run.capacity,
	    (e->run.flags & KG_DEV_BUFFER_SYNC) ? KG_DEV_TIER_SYNC : 0);
	if (e->tier == NULL)
		return -1;
	e->shift = kg_xcalloc(P, sizeof(*e->shift));
	e->dt = dt = kg_dev_trainer_alloc(tr, e->be, 0);
	if (dt == NULL)
		return -1;
	kg_dev_tier_table(e->tier, &dt->dv.W, &dt->dv.Ws, &e->slot_rows,
	    &nslots);
	dt->row_shift = e->shift;
	return kg_be_upload(e->be, dt->dv.R, tr->rel, tr->n_rel_rows * dt->rw *
	    sizeof(float)) < 0 || kg_be_upload(e->be, dt->dv.Rs,
	    tr->rel_state, tr->n_rel_rows * dt->rsw * sizeof(float)) < 0 ||
	    (tr->pool.k > 0 && kg_dev_pool_open(dt) < 0) ? -1 : 0;
}

/* Pin partition p on the device for a bucket and set its row shift. */
static const struct kg_dev_part *
pin(struct kg_engine *e, uint32_t p)
{
	const struct kg_dev_part *a = kg_dev_tier_acquire(e->tier, p);

	if (a != NULL)
		e->shift[p] = (int64_t)((uint64_t)(a->w - e->dt->dv.W) /
		    e->dt->d) - (int64_t)a->base;
	return a;
}

/* Cut bucket (ph, pt)'s n positives into the chunks of the CPU bucket
 * trainer (kg_plan_even, into e->chunks, grown when short: once per
 * larger bucket, never inside the chunk loop) and point the device
 * trainer at the bucket; the number of chunks. */
static size_t
plan_bucket(struct kg_engine *e, uint32_t ph, uint32_t pt, uint64_t n)
{
	struct kg_trainer *tr = e->tr;
	uint64_t cs = kg_train_chunk_size(&tr->o), need = (n + cs - 1) / cs;

	if (need > e->chunk_cap) {
		e->chunk_cap = need;
		e->chunks = kg_xreallocarray(e->chunks, need,
		    sizeof(*e->chunks));
	}
	e->dt->ph = ph;
	e->dt->pt = pt;
	return kg_plan_even(tr, n, ph * tr->n_parts + pt, e->chunks);
}

/*
 * The bucket's chunks through the device step on the partitions the
 * tier holds: the pool's waiting gradients of both partitions first, the
 * tier's read ahead started behind the first chunk, the pool's copies of
 * the two partitions taken after the last.  0 or -1.
 */
static int
tier_chunks(struct kg_engine *e, uint32_t ph, uint32_t pt,
    const int32_t *hrt, uint64_t n, double *loss)
{
	struct kg_dev_trainer *dt = e->dt;
	size_t nch = plan_bucket(e, ph, pt, n), c;

	if (kg_be_zero(e->be, dt->dv.lsum, sizeof(double)) < 0 ||
	    kg_dev_pool_apply(dt, ph) < 0 || kg_dev_pool_apply(dt, pt) < 0)
		return -1;
	for (c = 0; c < nch; c++) {
		const struct kg_chunk *ch = &e->chunks[c];

		if (kg_dev_step(dt, hrt + 3 * ch->start, ch->len, ch->side, c,
		    ch->start) < 0 || kg_dev_tier_kick(e->tier) < 0)
			return -1;
	}
	return kg_dev_pool_fill(dt, ph) < 0 || kg_dev_pool_fill(dt, pt) < 0 ||
	    kg_be_download(e->be, loss, dt->dv.lsum, sizeof(*loss)) < 0 ?
	    -1 : 0;
}

static int
buffer_bucket(struct kg_engine *e, uint32_t ph, uint32_t pt,
    const int32_t *hrt, uint64_t n, uint64_t max_batches, double *loss_sum,
    uint64_t *done)
{
	double loss = 0.0;
	int rc;

	(void)max_batches;
	*loss_sum = 0.0;
	*done = 0;
	if (ph >= e->tr->n_parts || pt >= e->tr->n_parts) {
		kg_error("bucket (%u, %u) of %u partitions", ph, pt,
		    e->tr->n_parts);
		return -1;
	}
	if (pin(e, ph) == NULL)
		return -1;
	if (pin(e, pt) == NULL) {
		kg_dev_tier_release(e->tier, ph, 0);
		return -1;
	}
	rc = tier_chunks(e, ph, pt, hrt, n, &loss);
	kg_dev_tier_release(e->tier, ph, 1);
	kg_dev_tier_release(e->tier, pt, 1);
	if (rc < 0)
		return -1;
	if (!isfinite(loss)) {
		kg_error("the loss is no longer finite in epoch %u; try a "
		    "smaller --lr or a regulariser", e->tr->epoch + 1);
		return -1;
	}
	*loss_sum = loss;
	*done = n;
	return 0;
}

static int
buffer_pool_load(struct kg_engine *e, const int32_t *loc, int rank)
{
	(void)loc;
	(void)rank;
	return kg_dev_pool_load(e->dt);
}

/* The tier's partitions into the store (they stay on the device), the
 * relations into the trainer, the pool's gradients into its pool. */
static int
buffer_download(struct kg_engine *e)
{
	struct kg_trainer *tr = e->tr;
	struct kg_dev_trainer *dt = e->dt;

	if (kg_dev_tier_flush(e->tier) < 0 || kg_be_download(e->be, tr->rel,
	    dt->dv.R, tr->n_rel_rows * dt->rw * sizeof(float)) < 0 ||
	    kg_be_download(e->be, tr->rel_state, dt->dv.Rs, tr->n_rel_rows *
	    dt->rsw * sizeof(float)) < 0)
		return -1;
	return kg_dev_pool_download(dt);
}

static char *
buffer_says(const struct kg_engine *e)
{
	return kg_xasprintf("training on %s, %u of %u partitions on the "
	    "device", kg_backend_name(e->be), e->run.capacity,
	    e->tr->n_parts);
}

const struct kg_engine_ops kg_engine_device_buffer_ops = {
	.name = "device buffer",
	.open = buffer_open,
	.bucket = buffer_bucket,
	.pool_load = buffer_pool_load,
	.pool_settle = settle_on_host,
	.download = buffer_download,
	.says = buffer_says,
	.close = dev_close,
};

/* One bucket at a time (a rank under mpirun). */

static int
ranks_open(struct kg_engine *e)
{
	struct kg_trainer *tr = e->tr;

	if (open_backend(e) < 0)
		return -1;
	e->slot_rows = tr->max_part_rows;
	e->shift = kg_xcalloc(tr->n_parts, sizeof(*e->shift));
	e->dt = kg_dev_trainer_alloc(tr, e->be, 2 * e->slot_rows);
	if (e->dt == NULL)
		return -1;
	e->dt->row_shift = e->shift;
	return 0;
}

/* Partition a's rows and state to slot k of the device (up) or back. */
static int
copy_part(struct kg_engine *e, const struct kg_store_part *a, uint32_t k,
    int up)
{
	struct kg_dev_trainer *dt = e->dt;
	float *w = dt->dv.W + (size_t)k * e->slot_rows * dt->d;
	float *s = dt->dv.Ws + (size_t)k * e->slot_rows * dt->esw;
	size_t bw = (size_t)a->rows * dt->d * sizeof(float);
	size_t bs = (size_t)a->rows * dt->esw * sizeof(float);

	if (up)
		return kg_be_upload(e->be, w, a->w, bw) < 0 ||
		    kg_be_upload(e->be, s, a->state, bs) < 0 ? -1 : 0;
	return kg_be_download(e->be, a->w, w, bw) < 0 ||
	    kg_be_download(e->be, a->state, s, bs) < 0 ? -1 : 0;
}

/* The relation table and its state to the device (up) or back. */
static int
copy_rel(struct kg_engine *e, int up)
{
	struct kg_trainer *tr = e->tr;
	struct kg_dev_trainer *dt = e->dt;
	size_t br = tr->n_rel_rows * dt->rw * sizeof(float);
	size_t bs = tr->n_rel_rows * dt->rsw * sizeof(float);

	if (up)
		return kg_be_upload(e->be, dt->dv.R, tr->rel, br) < 0 ||
		    kg_be_upload(e->be, dt->dv.Rs, tr->rel_state, bs) < 0 ?
		    -1 : 0;
	return kg_be_download(e->be, tr->rel, dt->dv.R, br) < 0 ||
	    kg_be_download(e->be, tr->rel_state, dt->dv.Rs, bs) < 0 ? -1 : 0;
}

/* The chunks of the bucket through the device step; the loss summed
 * into *loss.  0 or -1. */
static int
train_chunks(struct kg_engine *e, uint32_t ph, uint32_t pt,
    const int32_t *hrt, uint64_t n, double *loss)
{
	struct kg_dev_trainer *dt = e->dt;
	size_t nch = plan_bucket(e, ph, pt, n), c;

	if (kg_be_zero(e->be, dt->dv.lsum, sizeof(double)) < 0)
		return -1;
	for (c = 0; c < nch; c++) {
		const struct kg_chunk *ch = &e->chunks[c];

		if (kg_dev_step(dt, hrt + 3 * ch->start, ch->len, ch->side, c,
		    ch->start) < 0)
			return -1;
	}
	return kg_be_download(e->be, loss, dt->dv.lsum, sizeof(*loss));
}

static int
ranks_bucket(struct kg_engine *e, uint32_t ph, uint32_t pt,
    const int32_t *hrt, uint64_t n, uint64_t max_batches, double *loss_sum,
    uint64_t *done)
{
	struct kg_trainer *tr = e->tr;
	const struct kg_store_part *a, *b = NULL;
	double loss = 0.0;
	int rc;

	(void)max_batches;
	*loss_sum = 0.0;
	*done = 0;
	if ((a = kg_store_acquire(tr->ents, ph)) == NULL)
		return -1;
	if (pt != ph && (b = kg_store_acquire(tr->ents, pt)) == NULL) {
		kg_store_release(tr->ents, ph, 0);
		return -1;
	}
	e->shift[ph] = -(int64_t)a->base;
	if (b != NULL)
		e->shift[pt] = (int64_t)e->slot_rows - (int64_t)b->base;
	rc = copy_part(e, a, 0, 1) < 0 ||
	    (b != NULL && copy_part(e, b, 1, 1) < 0) || copy_rel(e, 1) < 0 ||
	    train_chunks(e, ph, pt, hrt, n, &loss) < 0 ||
	    copy_part(e, a, 0, 0) < 0 ||
	    (b != NULL && copy_part(e, b, 1, 0) < 0) || copy_rel(e, 0) < 0 ?
	    -1 : 0;
	kg_store_release(tr->ents, ph, 1);
	if (b != NULL)
		kg_store_release(tr->ents, pt, 1);
	if (rc < 0)
		return -1;
	if (!isfinite(loss)) {
		kg_error("the loss is no longer finite in epoch %u; try a "
		    "smaller --lr or a regulariser", tr->epoch + 1);
		return -1;
	}
	*loss_sum = loss;
	*done = n;
	return 0;
}

/* Every bucket came back to the host when it ended. */
static int
ranks_download(struct kg_engine *e)
{
	(void)e;
	return 0;
}

static char *
ranks_says(const struct kg_engine *e)
{
	return kg_xasprintf("training on %s, each rank a bucket at a time on "
	    "its device", kg_backend_name(e->be));
}

const struct kg_engine_ops kg_engine_device_ranks_ops = {
	.name = "device",
	.open = ranks_open,
	.bucket = ranks_bucket,
	.pool_load = pool_on_host,
	.pool_settle = settle_on_host,
	.download = ranks_download,
	.says = ranks_says,
	.close = dev_close,
};
