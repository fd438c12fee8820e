/*
 * engine_host: the host engine, the trainer's own OpenMP maths
 * (kg_trainer_epoch, kg_trainer_bucket) over the rows where the store
 * keeps them; see engine.h.
 */
#include "kge/engine_impl.h"

#include <stdlib.h>

#include "core/util.h"

static int
host_open(struct kg_engine *e)
{
	if (e->run.shape == KG_SHAPE_BUFFER)
		e->pinned = kg_xcalloc(e->tr->n_parts, sizeof(*e->pinned));
	return 0;
}

static int
host_epoch(struct kg_engine *e, const int32_t *hrt, uint64_t n,
    uint64_t *trained)
{
	return kg_trainer_epoch(e->tr, hrt, n, trained);
}

static int
host_bucket(struct kg_engine *e, uint32_t ph, uint32_t pt, const int32_t *hrt,
    uint64_t n, uint64_t max_batches, double *loss_sum, uint64_t *done)
{
	return kg_trainer_bucket(e->tr, ph, pt, hrt, n, max_batches, loss_sum,
	    done);
}

/* Unpin what the buffer pinned; they stay in memory, for the next
 * epoch's start. */
static void
unpin(struct kg_engine *e)
{
	uint32_t p;

	for (p = 0; e->pinned != NULL && p < e->tr->n_parts; p++)
		if (e->pinned[p]) {
			kg_store_release(e->tr->ents, p, 0);
			e->pinned[p] = 0;
		}
}

/* Pin the partitions of state s and unpin those it left; the next
 * state's partition is read while this one trains. */
static int
host_enter(struct kg_engine *e, const struct kg_order *o, uint32_t s)
{
	struct kg_store *st = e->tr->ents;
	const uint32_t *in = kg_order_state(o, s);
	uint32_t p, k;

	if (e->pinned == NULL) {
		kg_error("the host engine was not opened for a buffer");
		return -1;
	}
	for (p = 0; p < e->tr->n_parts; p++) {
		int keep = 0;

		for (k = 0; k < o->width; k++)
			keep |= in[k] == p;
		if (e->pinned[p] && !keep) {
			kg_store_release(st, p, 0);
			e->pinned[p] = 0;
		}
	}
	for (k = 0; k < o->width; k++) {
		p = in[k];
		if (e->pinned[p])
			continue;
		if (kg_store_acquire(st, p) == NULL)
			return -1;
		e->pinned[p] = 1;
	}
	if (s + 1 < o->nstates)
		kg_store_prefetch(st, o->in[s + 1]);
	return 0;
}

static int
host_pool_load(struct kg_engine *e, const int32_t *loc, int rank)
{
	return kg_trainer_pool_load(e->tr, loc, rank);
}

static int
host_pool_settle(struct kg_engine *e, const int32_t *loc, int rank)
{
	return kg_trainer_pool_settle(e->tr, loc, rank);
}

static int
host_download(struct kg_engine *e)
{
	unpin(e);
	return 0;
}

static void
host_close(struct kg_engine *e)
{
	unpin(e);
	free(e->pinned);
}

const struct kg_engine_ops kg_engine_host_ops = {
	.name = "host",
	.open = host_open,
	.epoch = host_epoch,
	.bucket = host_bucket,
	.enter = host_enter,
	.pool_load = host_pool_load,
	.pool_settle = host_pool_settle,
	.download = host_download,
	.close = host_close,
};
