/*
 * engine_impl: an engine's table of operations and its state, shared by
 * engine.c (the chooser and the calls) and the engines, engine_host.c
 * and engine_device.c (lib/kge only).
 */
#ifndef KG_ENGINE_IMPL_H
#define KG_ENGINE_IMPL_H

#include "kge/engine.h"
#include "kge/train_impl.h"

/* An engine's operations; each returns 0 or -1 after kg_error(). */
struct kg_engine_ops {
	const char *name;
	/* Set up e (place, tr, be and run filled in). */
	int (*open)(struct kg_engine *e);
	int (*epoch)(struct kg_engine *e, const int32_t *hrt, uint64_t n,
	    uint64_t *trained);
	int (*bucket)(struct kg_engine *e, uint32_t ph, uint32_t pt,
	    const int32_t *hrt, uint64_t n, uint64_t max_batches,
	    double *loss_sum, uint64_t *done);
	int (*pool_load)(struct kg_engine *e, const int32_t *loc, int rank);
	int (*pool_settle)(struct kg_engine *e, const int32_t *loc, int rank);
	int (*download)(struct kg_engine *e);
	/* The line a driver shows (a new string), or NULL. */
	char *(*says)(const struct kg_engine *e);
	/* Free what open made (not e). */
	void (*close)(struct kg_engine *e);
};

struct kg_dev_trainer;

struct kg_engine {
	const struct kg_engine_ops *ops;
	enum kg_engine_place place;
	struct kg_engine_run run;
	struct kg_trainer *tr;
	struct kg_backend *be;		/* device places: owned */
	/* The device engine: the whole table or, per bucket under mpirun,
	 * two slots of the largest partition, or the tier's slots (dt);
	 * the buffer's tier. */
	struct kg_dev_trainer *dt;
	struct kg_dev_tier *tier;
	uint64_t slot_rows;		/* per bucket, tier: a slot's rows */
	int64_t *shift;			/* [P]: device row = entity + shift */
	struct kg_chunk *chunks;	/* per bucket: the bucket's chunks */
	size_t chunk_cap;
};

/* The engines: the host's; the device's for its three places. */
extern const struct kg_engine_ops kg_engine_host_ops;
extern const struct kg_engine_ops kg_engine_device_ops;
extern const struct kg_engine_ops kg_engine_device_buffer_ops;
extern const struct kg_engine_ops kg_engine_device_ranks_ops;

#endif
