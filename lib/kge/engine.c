/*
 * engine: the supports table, the chooser and the calls through an
 * engine's operations; see engine.h.
 */
#include "kge/engine_impl.h"

#include <stdlib.h>

#include "core/util.h"

#define ON(p) (1u << (p))
#define ON_HOST ON(KG_PLACE_HOST)
#define ON_DEVICES (ON(KG_PLACE_DEVICE) | ON(KG_PLACE_DEVICE_BUFFER) | \
	ON(KG_PLACE_DEVICE_RANKS))
#define ON_ALL (ON_HOST | ON_DEVICES)

static int
ask_ova(const struct kg_engine_run *r)
{
	return r->o->one_vs_all || r->o->one_vs_all_after > 0;
}

static int
ask_filter(const struct kg_engine_run *r)
{
	return r->o->filter_negatives;
}

static int
ask_types(const struct kg_engine_run *r)
{
	return r->o->use_types;
}

static int
ask_in_batch(const struct kg_engine_run *r)
{
	return r->o->neg_in_batch;
}

static int
ask_rel_pred(const struct kg_engine_run *r)
{
	return r->o->rel_pred > 0.0;
}

static int
ask_dura(const struct kg_engine_run *r)
{
	return r->o->dura > 0.0 || r->o->ova_dura > 0.0;
}

static int
ask_subsampling(const struct kg_engine_run *r)
{
	return r->o->subsampling;
}

static int
ask_clip(const struct kg_engine_run *r)
{
	return r->o->clip > 0.0;
}

static int
ask_deterministic(const struct kg_engine_run *r)
{
	return r->o->deterministic;
}

static int
ask_gpu_buffer(const struct kg_engine_run *r)
{
	return r->gpu_buffer;
}

static int
ask_max_step(const struct kg_engine_run *r)
{
	return r->o->max_step > 0 && r->shape != KG_SHAPE_TABLE;
}

static int
ask_pool(const struct kg_engine_run *r)
{
	return r->o->neg_pool > 0;
}

static int
ask_disk_f16(const struct kg_engine_run *r)
{
	return r->disk_f16;
}

#define NOT_ON_DEVICE " is not supported on a device yet (use --device cpu)"

/* The supports table: a run asking for a feature goes only to the
 * places that run it; the first row that refuses gives the reason. */
static const struct kg_engine_feature features[] = {
	{ "a device buffer", ask_gpu_buffer,
	    ON(KG_PLACE_DEVICE_BUFFER) | ON(KG_PLACE_DEVICE_RANKS),
	    KG_ASK_PLACE, "--gpu_buffer and --gpu_mem_budget need "
	    "--partitions and --device cuda" },
	{ "1-vs-all", ask_ova, ON_HOST, KG_ASK_OPTIONS,
	    "1-vs-all (--one_vs_all, --one_vs_all_after)" NOT_ON_DEVICE },
	{ "filtered negatives", ask_filter, ON_HOST, KG_ASK_OPTIONS,
	    "filtered negatives (--neg_filter)" NOT_ON_DEVICE },
	{ "typed negatives", ask_types, ON_HOST, KG_ASK_OPTIONS,
	    "typed negatives" NOT_ON_DEVICE },
	{ "in-batch negatives", ask_in_batch, ON_HOST, KG_ASK_OPTIONS,
	    "in-batch negatives" NOT_ON_DEVICE },
	{ "relation prediction", ask_rel_pred, ON_HOST, KG_ASK_OPTIONS,
	    "relation prediction" NOT_ON_DEVICE },
	{ "DURA", ask_dura, ON_HOST, KG_ASK_OPTIONS, "DURA" NOT_ON_DEVICE },
	{ "subsampling weights", ask_subsampling, ON_HOST, KG_ASK_OPTIONS,
	    "subsampling weights" NOT_ON_DEVICE },
	{ "gradient clipping", ask_clip, ON_HOST, KG_ASK_OPTIONS,
	    "gradient clipping (--max_grad_norm)" NOT_ON_DEVICE },
	{ "a deterministic run", ask_deterministic, ON_HOST, KG_ASK_OPTIONS,
	    "--deterministic repeats a run bit for bit on the CPU only: a "
	    "device sums gradients with atomics (use --device cpu)" },
	{ "a cut epoch of buckets", ask_max_step, ON_HOST, KG_ASK_RUN,
	    "--max_step with partitions trains on the CPU; drop --device" },
	{ "a device buffer under mpirun", ask_gpu_buffer,
	    ON_ALL & ~ON(KG_PLACE_DEVICE_RANKS), KG_ASK_RUN,
	    "--gpu_buffer and --gpu_mem_budget size one process's device "
	    "buffer; under mpirun each rank's device holds the bucket it "
	    "trains" },
	{ "the negative pool of buckets", ask_pool,
	    ON_ALL & ~ON(KG_PLACE_DEVICE_RANKS), KG_ASK_RUN,
	    "under mpirun a device trains buckets without the negative pool; "
	    "add --neg_pool 0" },
	{ "float16 partition files", ask_disk_f16, ON_HOST, KG_ASK_RUN,
	    "--disk_dtype float16 needs --buffer_capacity or --mem_budget, "
	    "on the CPU" },
};

const struct kg_engine_feature *
kg_engine_features(size_t *n)
{
	*n = KG_ARRAY_LEN(features);
	return features;
}

enum kg_engine_place
kg_engine_place_of(const struct kg_engine_run *r)
{
	if (!r->on_device)
		return KG_PLACE_HOST;
	if (r->shape == KG_SHAPE_TABLE)
		return KG_PLACE_DEVICE;
	return r->ranks > 1 ? KG_PLACE_DEVICE_RANKS : KG_PLACE_DEVICE_BUFFER;
}

/* The rows of kind when that refuse r at place p; 0 or -1. */
static int
refuse_rows(enum kg_engine_place p, const struct kg_engine_run *r,
    unsigned when)
{
	size_t i;

	for (i = 0; i < KG_ARRAY_LEN(features); i++) {
		const struct kg_engine_feature *f = &features[i];

		if ((f->when & when) && !(f->places & ON(p)) && f->asked(r)) {
			kg_error("%s", f->reason);
			return -1;
		}
	}
	return 0;
}

int
kg_engine_supports(enum kg_engine_place p, const struct kg_engine_run *r,
    unsigned when)
{
	if (refuse_rows(p, r, when & KG_ASK_PLACE) < 0)
		return -1;
	if ((when & KG_ASK_OPTIONS) && p != KG_PLACE_HOST && r->check_device &&
	    kg_backend_check(&r->device) < 0)
		return -1;
	return refuse_rows(p, r, when & ~(unsigned)KG_ASK_PLACE);
}

int
kg_engine_choose(const struct kg_engine_run *r, unsigned when,
    enum kg_engine_place *p)
{
	*p = kg_engine_place_of(r);
	return kg_engine_supports(*p, r, when);
}

/* The engine of each place. */
static const struct kg_engine_ops *const engines[KG_NPLACES] = {
	[KG_PLACE_HOST] = &kg_engine_host_ops,
	[KG_PLACE_DEVICE] = &kg_engine_device_ops,
	[KG_PLACE_DEVICE_BUFFER] = &kg_engine_device_buffer_ops,
	[KG_PLACE_DEVICE_RANKS] = &kg_engine_device_ranks_ops,
};

struct kg_engine *
kg_engine_open(const struct kg_engine_run *r, struct kg_trainer *tr)
{
	struct kg_engine_run q = *r;
	enum kg_engine_place p;
	struct kg_engine *e;

	/* Opening the device asks whether it is there. */
	q.check_device = 0;
	if (kg_engine_choose(&q, KG_ASK_ALL, &p) < 0)
		return NULL;
	e = kg_xcalloc(1, sizeof(*e));
	e->ops = engines[p];
	e->place = p;
	e->run = *r;
	e->tr = tr;
	if (e->ops->open(e) < 0) {
		kg_engine_free(e);
		return NULL;
	}
	return e;
}

enum kg_engine_place
kg_engine_place(const struct kg_engine *e)
{
	return e->place;
}

struct kg_backend *
kg_engine_backend(const struct kg_engine *e)
{
	return e->be;
}

char *
kg_engine_says(const struct kg_engine *e)
{
	return e->ops->says != NULL ? e->ops->says(e) : NULL;
}

struct kg_dev_tier *
kg_engine_tier(const struct kg_engine *e)
{
	return e->tier;
}
/* A call the engine has no operation for: a driver's mistake. */
static int
no_op(const struct kg_engine *e, const char *what)
{
	kg_error("the %s engine does not %s", e->ops->name, what);
	return -1;
}

int
kg_engine_epoch(struct kg_engine *e, const int32_t *hrt, uint64_t n,
    uint64_t *trained)
{
	if (e->ops->epoch == NULL)
		return no_op(e, "train a whole table");
	return e->ops->epoch(e, hrt, n, trained);
}

int
kg_engine_bucket(struct kg_engine *e, uint32_t ph, uint32_t pt,
    const int32_t *hrt, uint64_t n, uint64_t max_batches, double *loss_sum,
    uint64_t *done)
{
	if (e->ops->bucket == NULL)
		return no_op(e, "train buckets");
	return e->ops->bucket(e, ph, pt, hrt, n, max_batches, loss_sum, done);
}

int
kg_engine_pool_load(struct kg_engine *e, const int32_t *loc, int rank)
{
	return e->ops->pool_load(e, loc, rank);
}

int
kg_engine_pool_settle(struct kg_engine *e, const int32_t *loc, int rank)
{
	return e->ops->pool_settle(e, loc, rank);
}

int
kg_engine_download(struct kg_engine *e)
{
	return e->ops->download(e);
}

void
kg_engine_free(struct kg_engine *e)
{
	if (e == NULL)
		return;
	e->ops->close(e);
	free(e);
}
