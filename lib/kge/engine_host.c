/*
 * engine_host: the host engine, the trainer's own OpenMP maths
 * (kg_trainer_epoch, kg_trainer_bucket) over the rows where the store
 * keeps them; see engine.h.
 */
#include "kge/engine_impl.h"

static int
host_open(struct kg_engine *e)
{
	(void)e;
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

/* The rows are where the host reads them already. */
static int
host_download(struct kg_engine *e)
{
	(void)e;
	return 0;
}

static void
host_close(struct kg_engine *e)
{
	(void)e;
}

const struct kg_engine_ops kg_engine_host_ops = {
	.name = "host",
	.open = host_open,
	.epoch = host_epoch,
	.bucket = host_bucket,
	.pool_load = host_pool_load,
	.pool_settle = host_pool_settle,
	.download = host_download,
	.close = host_close,
};
