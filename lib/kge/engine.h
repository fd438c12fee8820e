/*
 * engine: where a shallow training step runs, chosen once per run.  An
 * engine is a small table of operations over a trainer (kge/train.h):
 * train an epoch of the whole table or one bucket, the negative pool's
 * load and settle, copy back to the host, free.  Two engines implement
 * it: the host engine (the trainer's OpenMP maths, every feature) and
 * the device engine (the step through the device seam,
 * kge/train_device.h, on the CUDA backend or, with the test seam, the CPU
 * backend), which holds the whole table, the partitions of a device tier
 * (store/dev_tier.h, over the trainer's store) or, under mpirun, one
 * bucket at a time.  A buffer run's driver pins the partitions of each
 * state of its order in the store the engine trains from
 * (kg_engine_tier: the device tier, else the trainer's store), with the
 * same acquire, prefetch and release calls either way.
 *
 * Where a run goes (its place: the engine and how it holds the rows)
 * follows from the run alone (struct kg_engine_run): kg_engine_choose
 * picks it and answers, from one table of (feature, places that run it,
 * reason), whether the run can go there; kg_engine_open opens that
 * engine.  Drivers call only the kg_engine_* functions below after that.
 *
 * Threads: an engine is driven by one thread.  Errors: functions return
 * 0 or -1 after kg_error(); after an error the engine can only be freed.
 */
#ifndef KG_ENGINE_H
#define KG_ENGINE_H

#include <stdint.h>

#include "compute/backend.h"
#include "kge/train.h"
#include "store/dev_tier.h"

/* The places a step runs: the engine and how it holds the entity rows. */
enum kg_engine_place {
	KG_PLACE_HOST,		/* the host engine, any run */
	KG_PLACE_DEVICE,	/* the whole table on the device */
	KG_PLACE_DEVICE_BUFFER,	/* partitions: a buffer on the device */
	KG_PLACE_DEVICE_RANKS,	/* partitions under mpirun: a bucket at a
				 * time on each rank's device */
	KG_NPLACES
};

/* How the run's driver holds the entity rows. */
enum kg_engine_shape {
	KG_SHAPE_TABLE,		/* one partition, an epoch at a time */
	KG_SHAPE_BUCKETS,	/* partition buckets in the schedule's rounds */
	KG_SHAPE_BUFFER		/* partition buckets in the states of an
				 * order (lib/store/order.h) */
};

/* When a row of the supports table can be answered. */
enum kg_engine_ask {
	/* From the options and the device alone, before any work:
	 * kg-train refuses them with exit 2.  PLACE rows are answered
	 * before the device is asked whether it is there. */
	KG_ASK_PLACE = 1,
	KG_ASK_OPTIONS = 2,
	/* From the run as its driver sees it (the ranks): refused on
	 * every rank, exit 1. */
	KG_ASK_RUN = 4,
	KG_ASK_ALL = 7
};

/* What a run asks of the step. */
struct kg_engine_run {
	const struct kg_train_opts *o;
	enum kg_engine_shape shape;
	int ranks;		/* MPI ranks (1: one process) */
	int on_device;		/* a GPU asked for, or the test seam */
	struct kg_device device;	/* the backend to open on a device */
	int check_device;	/* ask the backend whether device is there
				 * (0 where the test seam stands in) */
	int gpu_buffer;		/* --gpu_buffer or --gpu_mem_budget given */
	uint32_t capacity;	/* device buffer: partitions on the device */
	int flags;		/* device buffer: KG_DEV_BUFFER_SYNC */
	int disk_f16;		/* partition files of binary16 rows
				 * (--disk_dtype float16) */
};

#define KG_ENGINE_RUN_INIT { .ranks = 1, .device = KG_DEVICE_INIT }

/* A run's flag: the device buffer's tier uploads what it reads ahead at
 * once and waits (KG_DEV_TIER_SYNC), the reference of the pipeline. */
enum { KG_DEV_BUFFER_SYNC = 1 };

/* A row of the supports table. */
struct kg_engine_feature {
	const char *name;	/* the feature, for the table's readers */
	int (*asked)(const struct kg_engine_run *r);
	unsigned places;	/* 1 << place for each place that runs it */
	enum kg_engine_ask when;
	const char *reason;	/* the refusal, one line */
};

/* The supports table, in the order it is asked; *n its rows. */
const struct kg_engine_feature *kg_engine_features(size_t *n);

/* The place run r goes to (no check). */
enum kg_engine_place kg_engine_place_of(const struct kg_engine_run *r);

/*
 * Whether the run r can go to place p: the table's rows of the kinds in
 * when (KG_ASK_* bits), in order, and for a device place with
 * check_device and KG_ASK_OPTIONS, whether the device is there
 * (kg_backend_check) after the PLACE rows.  0, or -1 after kg_error()
 * with the first reason.
 */
int kg_engine_supports(enum kg_engine_place p, const struct kg_engine_run *r,
    unsigned when);

/* The chooser: the place of r into *p, and kg_engine_supports(*p, r,
 * when) for it.  0 or -1 after kg_error(). */
int kg_engine_choose(const struct kg_engine_run *r, unsigned when,
    enum kg_engine_place *p);

struct kg_engine;

/*
 * Choose the place of r (every row, as kg_engine_choose) and open its
 * engine on the trainer tr (borrowed; set up, resumed; for the bucket
 * and buffer shapes with bucket_chunks set), its backend opened on a
 * device place.  The device places upload what they keep (the table,
 * the relations); a buffer uploads no partition yet.  NULL after
 * kg_error().
 */
struct kg_engine *kg_engine_open(const struct kg_engine_run *r,
    struct kg_trainer *tr);

/* The place an engine runs, and its backend (NULL on the host). */
enum kg_engine_place kg_engine_place(const struct kg_engine *e);
struct kg_backend *kg_engine_backend(const struct kg_engine *e);

/* The line a driver shows when the engine is not the host's, a new
 * string ("training on cpu:..."), or NULL on the host. */
char *kg_engine_says(const struct kg_engine *e);

/* The device buffer's tier (its partitions on the device, its traffic:
 * kg_dev_tier_stats), owned by the engine; NULL at other places, where a
 * buffer run pins partitions in the trainer's store. */
struct kg_dev_tier *kg_engine_tier(const struct kg_engine *e);

/*
 * One epoch over the n triples hrt of a whole-table run, as
 * kg_trainer_epoch (tr's epoch, step and last_loss advanced); *trained
 * gets the positives trained.  Call kg_engine_download after it before
 * the host reads the tables.
 */
int kg_engine_epoch(struct kg_engine *e, const int32_t *hrt, uint64_t n,
    uint64_t *trained);

/*
 * One bucket: the n positives hrt (global IDs, heads in partition ph,
 * tails in pt), as kg_trainer_bucket (max_batches: 0 or a bound, which
 * only the host honours; a device run refuses max_step); *loss_sum gets
 * their losses' sum, *done the positives trained.  The device buffer
 * pins ph and pt in its tier for the bucket (an error when that pins
 * more partitions than its capacity: the driver pins a state's first).
 */
int kg_engine_bucket(struct kg_engine *e, uint32_t ph, uint32_t pt,
    const int32_t *hrt, uint64_t n, uint64_t max_batches, double *loss_sum,
    uint64_t *done);

/* The negative pool at an epoch's start (kg_trainer_pool_load with loc
 * and rank; on the device buffer, on the device) and, under mpirun, the
 * waiting gradients applied by the ranks holding their partitions
 * (kg_trainer_pool_settle). */
int kg_engine_pool_load(struct kg_engine *e, const int32_t *loc, int rank);
int kg_engine_pool_settle(struct kg_engine *e, const int32_t *loc, int rank);

/* Everything the engine keeps back where the host reads it (the
 * trainer's tables, the store, the pool), at an epoch's end: the device
 * tier flushed into the trainer's store (no partition pinned by the
 * driver any more), its partitions staying on the device. */
int kg_engine_download(struct kg_engine *e);

/* Free the engine and its backend (what was not downloaded is lost);
 * NULL: no-op. */
void kg_engine_free(struct kg_engine *e);

#endif
