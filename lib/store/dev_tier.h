/*
 * dev_tier: a partition buffer on a compute device (lib/compute/backend.h)
 * over a store below it (store.h: the trainer's store in host memory,
 * itself perhaps the buffer over disk: disk -> RAM -> GPU), with the
 * store's residency contract and vocabulary: acquire, release, prefetch,
 * flush.  It is not a struct kg_store: its partitions live in device
 * memory, which only backend calls may touch, while a store's pinned rows
 * are host memory any thread may read (kg_store_view, kg_store_write and
 * the snapshot rely on that).  So it keeps the same operations and rules
 * over device handles (struct kg_dev_part).  It sits in lib/store, above
 * lib/compute, because it is a store tier that needs nothing of the
 * trainer: the device engine (lib/kge/engine_device.c) trains on the
 * partitions it holds.
 *
 * The tier holds at most capacity C partitions pinned, in slots of the
 * largest partition's size (rows, then optimiser state, as a store's
 * partition buffer), plus one slot to read ahead into (none when C is
 * the store's P: every partition fits).  The slots are one device table
 * (kg_dev_tier_table), so that entity e of a resident partition is row
 * e - base + slot * slot_rows of it.
 *
 *   acquire(p)  make p resident and pin it; pins nest.  May block: on an
 *               upload in flight (waiting for the device), or to upload p
 *               now (a "fill", counted as such) into a free slot or one
 *               made free by evicting.  Fails when C other partitions are
 *               pinned.
 *   release(p, dirty)  drop one pin; dirty: the device changed p's rows
 *               or state.  The tier decides when an unpinned partition
 *               leaves the device.
 *   prefetch(p) a hint that p comes next: start an asynchronous upload
 *               of p from the store below into the slot to read ahead
 *               into (a "swap"); a p already resident is kept for it.
 *               The copies wait until kg_dev_tier_kick (the caller has
 *               queued work for them to overlap) or the tier's next call.
 *               With the slot to read ahead into taken, the hint is passed
 *               to the store below (kg_store_prefetch), behind the copies
 *               queued.  With KG_DEV_TIER_SYNC the upload happens at once
 *               and is waited for (the reference the tests hold the
 *               pipeline to).
 *   eviction    when a slot is wanted: the unpinned partition used
 *               longest ago that no prefetch asked for (a prefetched one
 *               only when nothing else is left).  A dirty one is copied
 *               back into the store below (acquire, copy, release dirty
 *               there) on the device's copy stream through a staging
 *               buffer, put into the store at the tier's next wait; a
 *               clean one is dropped.
 *   flush       copy every dirty resident partition back into the store
 *               below and wait; they stay resident, clean.
 *
 * Memory: everything is allocated when the tier opens (the slots, two
 * pinned staging buffers of one slot each); nothing after.
 *
 * Threads: one thread drives a tier; the backend and the store below are
 * borrowed and used by that thread while the tier runs.  Errors:
 * functions return NULL or -1 after kg_error(); a prefetch that fails is
 * reported by the next acquire or flush.  After an error the tier can
 * only be freed (the store below then holds the partitions as last
 * copied back).
 */
#ifndef KG_DEV_TIER_H
#define KG_DEV_TIER_H

#include <stdint.h>

#include "compute/backend.h"
#include "store/store.h"

/* A pinned partition on the device: rows [base, base + rows), dim floats
 * each at w, state_width floats each at state (device memory). */
struct kg_dev_part {
	uint64_t base, rows;
	float *w;
	float *state;
};

/* What a tier moved, since it opened. */
struct kg_dev_tier_stats {
	uint64_t swaps;		/* partitions uploaded by prefetch */
	uint64_t fills;		/* partitions uploaded by acquire */
	uint64_t bytes_up, bytes_down;	/* entity rows and state */
	uint64_t evictions;	/* partitions that left the device */
	double wait_seconds;	/* the host waiting for the device's copies */
};

/* Open flags.  SYNC: prefetch uploads at once and waits; no copy runs
 * behind the caller's work. */
enum { KG_DEV_TIER_SYNC = 1 };

struct kg_dev_tier;

/*
 * Open a tier of capacity C (1 <= C <= the store's P) on the backend be
 * over the store below (both borrowed; they must outlive the tier; the
 * store writable, state_width floats of state a row): allocate the slots
 * and the staging buffers.  No partition is uploaded yet.  NULL after
 * kg_error() (a bad capacity, device memory).
 */
struct kg_dev_tier *kg_dev_tier_open(struct kg_backend *be,
    struct kg_store *below, uint32_t capacity, int flags);

const struct kg_dev_part *kg_dev_tier_acquire(struct kg_dev_tier *t,
    uint32_t p);
void kg_dev_tier_release(struct kg_dev_tier *t, uint32_t p, int dirty);
void kg_dev_tier_prefetch(struct kg_dev_tier *t, uint32_t p);
/* Start the copies prefetch queued (no-op without any); 0 or -1. */
int kg_dev_tier_kick(struct kg_dev_tier *t);
int kg_dev_tier_flush(struct kg_dev_tier *t);
/* 1 if p is on the device (or on its way by prefetch), else 0. */
int kg_dev_tier_resident(const struct kg_dev_tier *t, uint32_t p);

/* The slots as one device table: *w (rows of dim floats), *state (rows
 * of state_width floats), *slot_rows rows a slot, *nslots slots. */
void kg_dev_tier_table(const struct kg_dev_tier *t, float **w, float **state,
    uint64_t *slot_rows, uint32_t *nslots);

const struct kg_dev_tier_stats *kg_dev_tier_stats(const struct kg_dev_tier *t);

/*
 * The capacity C of a device tier for P partitions whose largest has
 * most_rows rows of dim floats and state_width floats of state, from
 * kg-train's settings: gpu_capacity (--gpu_buffer; 0: unset; at most P),
 * or the partitions gpu_mem_budget (--gpu_mem_budget, bytes; 0: unset)
 * holds less one to read ahead into (at least 2; P when all fit, with
 * no slot to read ahead into), the smaller when both are set, into
 * *capacity.  0, or -1 after kg_error() saying which setting cannot
 * work.
 */
int kg_dev_tier_capacity(uint32_t gpu_capacity, uint64_t gpu_mem_budget,
    uint32_t P, uint64_t most_rows, uint32_t dim, uint32_t state_width,
    uint32_t *capacity);

/* Free the device memory and the tier (what was not flushed is lost); no
 * partition may be pinned.  NULL: no-op. */
void kg_dev_tier_free(struct kg_dev_tier *t);

#endif
