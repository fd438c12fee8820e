/*
 * plan: what one training chunk touches, decided once on the host for
 * every engine that trains it.  A bucket (or an epoch, the bucket (0, 0)
 * of one partition) is cut into chunks; for each chunk the planner
 * gathers its positives, draws its negatives from the chunk's random
 * stream (inside the corrupted partition, uniform, by degree or of one
 * type, and the negative pool's share, whose draws of rows in the
 * bucket's other partition become that partition's negatives) and lists
 * the distinct entity and relation rows with each occurrence's slot
 * among them.  The CPU chunk step and the device step both read this
 * description, so they train on the same draws: there is one drawing.
 * A plan's buffers are allocated once (one plan per thread) and reused
 * for every chunk; planning a chunk allocates nothing.
 */
#ifndef KG_PLAN_H
#define KG_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "kge/train.h"

/* One chunk of a bucket: positions [start, start + len) of the order. */
struct kg_chunk {
	uint64_t start;
	uint32_t len;
	uint8_t side;		/* the corrupted side */
	int32_t type;		/* corrupted entities' type, or -1 */
	uint32_t whole;		/* positives of the whole chunk (shares) */
};

/*
 * A chunk's plan, and the buffers it lives in.
 *
 * Entity occurrences (occ, global IDs; slot, each one's index into uent)
 * are, in this order: the fixed entity of positive i at i, its
 * corrupted entity at len + i, the negatives in hand at 2 len + j (the
 * n_local drawn in the corrupted partition, then the n_other pool draws
 * that fell in the fixed partition), then the n_batch in-batch
 * negatives (positive i's corrupted entity again).  Slots are numbered
 * by first occurrence in the order fixed 0, corrupted 0, fixed 1, ...,
 * then the negatives in hand, then the in-batch ones (which never open
 * a slot): an engine that walks the occurrences in that order meets
 * slot s first exactly when s distinct rows came before it.  The pool's
 * n_pool negatives are slots of the pool (neg[n_local + n_other + k]),
 * not occurrences: their rows are not in hand.
 *
 * A 1-vs-all chunk (every row of the corrupted partition a candidate)
 * draws nothing; its occurrences are the fixed rows [0, len) when the
 * fixed partition is not the corrupted one, none otherwise.
 */
struct kg_plan {
	/* Capacities (kg_plan_init): positives, drawn negatives. */
	size_t cap_B, cap_N;
	int in_batch, ova;
	/* The bucket (kg_plan_bucket): partitions head, tail. */
	uint32_t part[2];
	uint64_t base[2], rows[2];
	/* The chunk (kg_plan_chunk). */
	int32_t *tri;		/* len positives (h, r, t) */
	size_t len;
	uint8_t side;
	int fcol, ccol;		/* the fixed and corrupted columns of tri */
	uint32_t pc, pf;	/* corrupted and fixed partitions */
	uint64_t pc_base, pf_base;
	uint32_t *neg;		/* local IDs of pc, of pf, then pool slots */
	size_t n_local, n_other, n_pool, n_batch;
	uint64_t *occ;		/* n_occ entity occurrences (global IDs) */
	uint32_t *slot;		/* n_occ: each one's distinct row */
	size_t n_occ;
	uint64_t *uent;		/* n_ent distinct entity rows (global IDs) */
	size_t n_ent;
	uint32_t *rslot;	/* len: positive i's distinct relation row */
	uint32_t *urel;		/* n_rel distinct relation rows */
	size_t n_rel;
	/* Deduplication: stamps keyed by a row's position in the bucket's
	 * partitions (the head's rows first), and by relation row. */
	uint32_t stamp;
	uint64_t n_stamp;
	uint32_t n_rel_rows;
	uint32_t *ent_stamp, *ent_slot, *rel_stamp, *rel_slot;
};

/*
 * Allocate p's buffers for tr's chunks (kg_train_chunk_size positives,
 * neg_sample_size drawn negatives, in-batch ones when set) and the
 * stamps of two partitions (the whole table with one).  Aborts only on
 * allocation failure (kg_xmalloc).  Release with kg_plan_release.
 */
void kg_plan_init(struct kg_plan *p, const struct kg_trainer *tr);
void kg_plan_release(struct kg_plan *p);

/*
 * Plan the chunks of bucket (ph, pt) of tr's store from now on: the
 * partitions negatives are drawn in and the stamps' key space; ova (the
 * epoch's 1-vs-all) draws nothing.  Costs O(1); call it before a
 * bucket's first chunk, or before every chunk.
 */
void kg_plan_bucket(struct kg_plan *p, const struct kg_trainer *tr,
    uint32_t ph, uint32_t pt, int ova);

/*
 * Plan chunk ch (ch->len <= cap_B), chunk number c of its bucket: its
 * positives (positive i is hrt + 3 order[i], or hrt + 3 i when order is
 * NULL), its negatives drawn from the stream (KG_STREAM_CHUNK, epoch,
 * ph, pt, chunk_base + c) of tr's seed (kg_sampler_draw_type for a typed
 * chunk, kg_sampler_draw otherwise, then the pool's share
 * kg_neg_pool_share of an untyped one), the distinct rows and slots.
 * An empty chunk draws nothing.  Never fails, never allocates.
 */
void kg_plan_chunk(struct kg_plan *p, const struct kg_trainer *tr,
    const struct kg_chunk *ch, uint64_t c, const int32_t *hrt,
    const uint64_t *order);

/*
 * A bucket driver's chunks (tr->bucket_chunks) of n positives of bucket
 * number ph * P + pt: ceil(n / chunk size) of even size into c, sides
 * alternating from the parity of the chunk, the bucket, the epoch and
 * the pass (tr->chunk_base's high half); tails only with reciprocal
 * relations.  Returns their count.
 */
size_t kg_plan_even(const struct kg_trainer *tr, uint64_t n, uint32_t bucket,
    struct kg_chunk *c);

/*
 * Cut n positives hrt of bucket number "bucket" (at most max_batches
 * batches of batch_size; 0: no limit) into chunks: batches cut into
 * chunks of kg_train_chunk_size with sides alternating (kg_plan_even with
 * tr->bucket_chunks), or with typed negatives grouped by (side, type of
 * the corrupted entity) so that a chunk's negatives share its type.
 * With shards (tr->shard_size > 1) each chunk is narrowed to this
 * trainer's share, ch->whole keeping the whole chunk's size.  *chunks
 * and *order (positions to triples, for kg_plan_chunk's order + start)
 * are new arrays the caller frees.  Returns the chunk count.
 */
size_t kg_plan_chunks(const struct kg_trainer *tr, const int32_t *hrt,
    uint64_t n, uint64_t max_batches, uint32_t bucket,
    struct kg_chunk **chunks, uint64_t **order);

#endif
