/*
 * dev_tier: a partition buffer on the device over a store; see
 * dev_tier.h.
 *
 * A partition is ABSENT, QUEUED (a prefetch waits for kg_dev_tier_kick),
 * LOADING (its upload is on the copy stream, not yet waited for) or
 * RESIDENT.  At most one partition is QUEUED or LOADING: the slot to
 * read ahead into.  At most one eviction is on its way to the host, in
 * stage_out; the tier's next wait (settle) puts it into the store below.
 * The copy stream runs in order, so an upload into the slot an eviction
 * is leaving follows the eviction's download.
 */
#include "store/dev_tier.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"

#define NONE UINT32_MAX

enum { T_ABSENT, T_QUEUED, T_LOADING, T_RESIDENT };

struct tier_part {
	uint8_t st;		/* T_* */
	uint8_t dirty, wanted;
	uint32_t pins;
	int32_t slot;		/* -1: none */
	uint64_t last_use;
	struct kg_dev_part pub;
};

struct kg_dev_tier {
	struct kg_backend *be;
	struct kg_store *below;
	uint32_t P, C, nslots, npinned;
	uint64_t rows;		/* a slot's rows: the largest partition's */
	size_t d, sw;
	int sync;		/* KG_DEV_TIER_SYNC */
	float *W, *Ws;		/* the slots: nslots x rows rows */
	struct tier_part *parts;	/* [P] */
	int32_t *part_in;	/* [nslots]: its partition, or -1 */
	/* Pinned staging, one slot each: rows, then state. */
	float *stage_in, *stage_out;
	uint32_t evicting;	/* its copy is on the way to stage_out */
	uint32_t loading;	/* its upload is on the copy stream */
	uint32_t queued;	/* prefetched, waiting for kick */
	uint32_t *hints, nhints;	/* [P]: for the store below, after */
	uint64_t clock;
	int failed;
	char err[512];
	struct kg_dev_tier_stats stats;
};

static size_t
rows_bytes(const struct kg_dev_tier *t, uint32_t p)
{
	return t->parts[p].pub.rows * t->d * sizeof(float);
}

static size_t
state_bytes(const struct kg_dev_tier *t, uint32_t p)
{
	return t->parts[p].pub.rows * t->sw * sizeof(float);
}

/* Remember the error kg_error() just recorded; -1. */
static int
fail(struct kg_dev_tier *t)
{
	if (!t->failed)
		snprintf(t->err, sizeof(t->err), "%s", kg_error_last());
	t->failed = 1;
	return -1;
}

static int
check(const struct kg_dev_tier *t)
{
	if (!t->failed)
		return 0;
	kg_error("%s", t->err);
	return -1;
}

static void
map(struct kg_dev_tier *t, uint32_t p, uint32_t k)
{
	struct tier_part *q = &t->parts[p];

	q->slot = (int32_t)k;
	q->pub.w = t->W + (size_t)k * t->rows * t->d;
	q->pub.state = t->Ws + (size_t)k * t->rows * t->sw;
	t->part_in[k] = (int32_t)p;
}

static void
unmap(struct kg_dev_tier *t, uint32_t p)
{
	struct tier_part *q = &t->parts[p];

	t->part_in[q->slot] = -1;
	q->slot = -1;
	q->pub.w = q->pub.state = NULL;
	q->st = T_ABSENT;
	q->dirty = q->wanted = 0;
	t->stats.evictions++;
}

/* Copy p between its slot and the store below, waiting: up, or down
 * (into the store, released there as changed).  0 or -1. */
static int
copy_sync(struct kg_dev_tier *t, uint32_t p, int up)
{
	struct tier_part *q = &t->parts[p];
	const struct kg_store_part *a = kg_store_acquire(t->below, p);
	int rc;

	if (a == NULL)
		return -1;
	if (up)
		rc = kg_be_upload(t->be, q->pub.w, a->w, rows_bytes(t, p)) <
		    0 || kg_be_upload(t->be, q->pub.state, a->state,
		    state_bytes(t, p)) < 0 ? -1 : 0;
	else
		rc = kg_be_download(t->be, a->w, q->pub.w, rows_bytes(t, p)) <
		    0 || kg_be_download(t->be, a->state, q->pub.state,
		    state_bytes(t, p)) < 0 ? -1 : 0;
	kg_store_release(t->below, p, !up);
	if (up)
		t->stats.bytes_up += rows_bytes(t, p) + state_bytes(t, p);
	else
		t->stats.bytes_down += rows_bytes(t, p) + state_bytes(t, p);
	return rc;
}

/* Wait for the copies in flight: the upload becomes resident, the
 * eviction goes from stage_out into the store below.  0 or -1. */
static int
settle(struct kg_dev_tier *t)
{
	const struct kg_store_part *a;
	uint32_t p = t->evicting;
	double t0;

	if (t->evicting == NONE && t->loading == NONE)
		return 0;
	t0 = kg_now();
	if (kg_be_sync(t->be) < 0)
		return -1;
	t->stats.wait_seconds += kg_now() - t0;
	if (t->loading != NONE)
		t->parts[t->loading].st = T_RESIDENT;
	t->loading = NONE;
	if (p == NONE)
		return 0;
	a = kg_store_acquire(t->below, p);
	if (a == NULL)
		return -1;
	memcpy(a->w, t->stage_out, rows_bytes(t, p));
	memcpy(a->state, t->stage_out + t->rows * t->d, state_bytes(t, p));
	kg_store_release(t->below, p, 1);
	t->evicting = NONE;
	return 0;
}

/* The partition to evict: resident, unpinned, used longest ago, one no
 * prefetch asked for first (only those when not any). */
static uint32_t
victim(const struct kg_dev_tier *t, int any)
{
	uint32_t k, best = NONE;

	for (k = 0; k < t->nslots; k++) {
		const struct tier_part *q, *b;

		if (t->part_in[k] < 0)
			continue;
		q = &t->parts[t->part_in[k]];
		if (q->st != T_RESIDENT || q->pins > 0 || (!any && q->wanted))
			continue;
		b = best == NONE ? NULL : &t->parts[best];
		if (b == NULL || (b->wanted && !q->wanted) ||
		    (b->wanted == q->wanted && q->last_use < b->last_use))
			best = (uint32_t)t->part_in[k];
	}
	return best;
}

static int
free_slot(const struct kg_dev_tier *t, uint32_t *k)
{
	for (*k = 0; *k < t->nslots; (*k)++)
		if (t->part_in[*k] < 0)
			return 1;
	return 0;
}

/* Start p's eviction on the copy stream (dirty) or drop it; 0 or -1. */
static int
evict_async(struct kg_dev_tier *t, uint32_t p)
{
	struct tier_part *q = &t->parts[p];

	if (q->dirty) {
		if (t->evicting != NONE && settle(t) < 0)
			return -1;
		if (kg_be_download_async(t->be, t->stage_out, q->pub.w,
		    rows_bytes(t, p)) < 0 || kg_be_download_async(t->be,
		    t->stage_out + t->rows * t->d, q->pub.state,
		    state_bytes(t, p)) < 0)
			return -1;
		t->evicting = p;
		t->stats.bytes_down += rows_bytes(t, p) + state_bytes(t, p);
	}
	unmap(t, p);
	return 0;
}

/* A slot for a new partition into *k, evicting if need be (async: on the
 * copy stream, else waiting), a prefetched partition only when any.  1,
 * 0 when there is none, -1 after kg_error(). */
static int
take_slot(struct kg_dev_tier *t, int async, int any, uint32_t *k)
{
	uint32_t v;

	if (free_slot(t, k))
		return 1;
	v = victim(t, any);
	if (v == NONE && any && t->loading != NONE) {
		/* The upload in flight is the one left to evict. */
		if (settle(t) < 0)
			return -1;
		v = victim(t, any);
	}
	if (v == NONE)
		return 0;
	*k = (uint32_t)t->parts[v].slot;
	if (async)
		return evict_async(t, v) < 0 ? -1 : 1;
	if (t->parts[v].dirty && copy_sync(t, v, 0) < 0)
		return -1;
	unmap(t, v);
	return 1;
}

/* p from the store below through stage_in into slot k on the copy
 * stream.  0 or -1. */
static int
fetch_async(struct kg_dev_tier *t, uint32_t p, uint32_t k)
{
	const struct kg_store_part *a;

	/* stage_in is free once the last upload was waited for, and the
	 * store is current once p's eviction reached it. */
	if ((t->loading != NONE || t->evicting == p) && settle(t) < 0)
		return -1;
	a = kg_store_acquire(t->below, p);
	if (a == NULL)
		return -1;
	memcpy(t->stage_in, a->w, rows_bytes(t, p));
	memcpy(t->stage_in + t->rows * t->d, a->state, state_bytes(t, p));
	kg_store_release(t->below, p, 0);
	map(t, p, k);
	if (kg_be_upload_async(t->be, t->parts[p].pub.w, t->stage_in,
	    rows_bytes(t, p)) < 0 || kg_be_upload_async(t->be,
	    t->parts[p].pub.state, t->stage_in + t->rows * t->d,
	    state_bytes(t, p)) < 0)
		return -1;
	t->parts[p].st = T_LOADING;
	t->loading = p;
	t->stats.swaps++;
	t->stats.bytes_up += rows_bytes(t, p) + state_bytes(t, p);
	return 0;
}

/* Upload p into a free or freed slot and wait; 0 or -1. */
static int
fill_sync(struct kg_dev_tier *t, uint32_t p, int any)
{
	uint32_t k;
	int rc = take_slot(t, 0, any, &k);

	if (rc <= 0) {
		if (rc == 0)
			kg_error("partition %u: no slot of the device tier is "
			    "free", p);
		return -1;
	}
	if (t->evicting == p && settle(t) < 0)
		return -1;
	map(t, p, k);
	if (copy_sync(t, p, 1) < 0)
		return -1;
	t->parts[p].st = T_RESIDENT;
	return 0;
}

int
kg_dev_tier_kick(struct kg_dev_tier *t)
{
	uint32_t p = t->queued, k, i;
	int rc;

	if (check(t) < 0)
		return -1;
	if (p != NONE) {
		t->queued = NONE;
		t->parts[p].st = T_ABSENT;
		rc = take_slot(t, 1, 0, &k);
		if (rc < 0 || (rc > 0 && fetch_async(t, p, k) < 0))
			return fail(t);
		if (rc > 0)
			t->parts[p].wanted = 1;
	}
	for (i = 0; i < t->nhints; i++)
		kg_store_prefetch(t->below, t->hints[i]);
	t->nhints = 0;
	return 0;
}

void
kg_dev_tier_prefetch(struct kg_dev_tier *t, uint32_t p)
{
	struct tier_part *q;
	uint32_t k;

	if (p >= t->P || t->failed)
		return;
	q = &t->parts[p];
	if (t->queued != NONE || t->loading != NONE || (q->st == T_ABSENT &&
	    !free_slot(t, &k) && victim(t, 0) == NONE)) {
		/* The slot to read ahead into is taken: the store below
		 * reads ahead instead, once the queued copies started. */
		if (t->queued != NONE && t->nhints < t->P)
			t->hints[t->nhints++] = p;
		else if (t->queued == NONE)
			kg_store_prefetch(t->below, p);
		return;
	}
	if (q->st != T_ABSENT) {
		q->wanted = q->pins == 0;
		return;
	}
	if (!t->sync) {
		q->st = T_QUEUED;
		t->queued = p;
		return;
	}
	if (fill_sync(t, p, 0) < 0) {
		fail(t);
		return;
	}
	q->wanted = 1;
	t->stats.swaps++;
}

const struct kg_dev_part *
kg_dev_tier_acquire(struct kg_dev_tier *t, uint32_t p)
{
	struct tier_part *q;

	if (p >= t->P) {
		kg_error("partition %u of a device tier of %u", p, t->P);
		return NULL;
	}
	q = &t->parts[p];
	if (kg_dev_tier_kick(t) < 0)
		return NULL;
	if (q->pins == 0 && t->npinned >= t->C) {
		kg_error("partition %u: all %u partitions of the device tier "
		    "are pinned", p, t->C);
		return NULL;
	}
	if ((q->st == T_LOADING || t->evicting == p) && settle(t) < 0) {
		fail(t);
		return NULL;
	}
	if (q->st == T_ABSENT) {
		if (fill_sync(t, p, 1) < 0) {
			fail(t);
			return NULL;
		}
		t->stats.fills++;
	}
	if (q->pins++ == 0)
		t->npinned++;
	q->wanted = 0;
	q->last_use = ++t->clock;
	return &q->pub;
}

void
kg_dev_tier_release(struct kg_dev_tier *t, uint32_t p, int dirty)
{
	struct tier_part *q;

	if (p >= t->P || t->parts[p].pins == 0)
		return;
	q = &t->parts[p];
	if (--q->pins == 0)
		t->npinned--;
	if (dirty)
		q->dirty = 1;
	q->last_use = ++t->clock;
}

int
kg_dev_tier_flush(struct kg_dev_tier *t)
{
	uint32_t k, p;

	if (kg_dev_tier_kick(t) < 0)
		return -1;
	if (settle(t) < 0)
		return fail(t);
	for (k = 0; k < t->nslots; k++) {
		if (t->part_in[k] < 0)
			continue;
		p = (uint32_t)t->part_in[k];
		if (t->parts[p].dirty) {
			if (copy_sync(t, p, 0) < 0)
				return fail(t);
			t->parts[p].dirty = 0;
		}
	}
	return 0;
}

int
kg_dev_tier_resident(const struct kg_dev_tier *t, uint32_t p)
{
	return p < t->P && t->parts[p].st != T_ABSENT;
}

void
kg_dev_tier_table(const struct kg_dev_tier *t, float **w, float **state,
    uint64_t *slot_rows, uint32_t *nslots)
{
	*w = t->W;
	*state = t->Ws;
	*slot_rows = t->rows;
	*nslots = t->nslots;
}

const struct kg_dev_tier_stats *
kg_dev_tier_stats(const struct kg_dev_tier *t)
{
	return &t->stats;
}

struct kg_dev_tier *
kg_dev_tier_open(struct kg_backend *be, struct kg_store *below,
    uint32_t capacity, int flags)
{
	struct kg_dev_tier *t;
	uint32_t P = below->n_parts, p;
	size_t stage;

	if (capacity < 1 || capacity > P) {
		kg_error("a device tier of %u partitions over a store of %u",
		    capacity, P);
		return NULL;
	}
	t = kg_xcalloc(1, sizeof(*t));
	t->be = be;
	t->below = below;
	t->P = P;
	t->C = capacity;
	t->nslots = capacity < P ? capacity + 1 : P;
	t->d = below->dim;
	t->sw = below->state_width;
	t->sync = (flags & KG_DEV_TIER_SYNC) != 0;
	t->evicting = t->loading = t->queued = NONE;
	t->parts = kg_xcalloc(P, sizeof(*t->parts));
	t->part_in = kg_xmallocarray(t->nslots, sizeof(*t->part_in));
	t->hints = kg_xcalloc(P, sizeof(*t->hints));
	for (p = 0; p < P; p++) {
		struct tier_part *q = &t->parts[p];

		q->slot = -1;
		q->pub.base = below->off[p];
		q->pub.rows = below->off[p + 1] - below->off[p];
		if (q->pub.rows > t->rows)
			t->rows = q->pub.rows;
	}
	for (p = 0; p < t->nslots; p++)
		t->part_in[p] = -1;
	stage = t->rows * (t->d + t->sw) * sizeof(float);
	t->W = kg_be_alloc(be, t->nslots * t->rows * t->d * sizeof(float));
	t->Ws = kg_be_alloc(be, t->nslots * t->rows * (t->sw ? t->sw : 1) *
	    sizeof(float));
	t->stage_in = kg_be_host_alloc(be, stage);
	t->stage_out = kg_be_host_alloc(be, stage);
	if (t->W == NULL || t->Ws == NULL || t->stage_in == NULL ||
	    t->stage_out == NULL) {
		kg_dev_tier_free(t);
		return NULL;
	}
	return t;
}

void
kg_dev_tier_free(struct kg_dev_tier *t)
{
	if (t == NULL)
		return;
	kg_be_sync(t->be);
	kg_be_free(t->be, t->W);
	kg_be_free(t->be, t->Ws);
	kg_be_host_free(t->be, t->stage_in);
	kg_be_host_free(t->be, t->stage_out);
	free(t->parts);
	free(t->part_in);
	free(t->hints);
	free(t);
}

int
kg_dev_tier_capacity(uint32_t gpu_capacity, uint64_t gpu_mem_budget,
    uint32_t P, uint64_t most_rows, uint32_t dim, uint32_t state_width,
    uint32_t *capacity)
{
	uint64_t bytes = most_rows * ((uint64_t)dim + state_width) *
	    sizeof(float), fit;

	if (gpu_capacity == 0 && gpu_mem_budget == 0) {
		kg_error("--partitions on a device needs --gpu_buffer or "
		    "--gpu_mem_budget");
		return -1;
	}
	if (gpu_capacity > P) {
		kg_error("--gpu_buffer %u is more than the %u partitions",
		    gpu_capacity, P);
		return -1;
	}
	*capacity = gpu_capacity > 0 ? gpu_capacity : P;
	if (gpu_mem_budget == 0)
		return 0;
	/* The whole table needs no slot to read ahead into. */
	fit = gpu_mem_budget / bytes;
	if (fit >= P)
		return 0;
	if (fit < 3) {
		kg_error("--gpu_mem_budget %llu holds %llu partitions of %llu "
		    "bytes; the device needs 3 (2 to train, 1 to read ahead): "
		    "use more partitions or a larger budget",
		    (unsigned long long)gpu_mem_budget,
		    (unsigned long long)fit, (unsigned long long)bytes);
		return -1;
	}
	if (fit - 1 < *capacity)
		*capacity = (uint32_t)(fit - 1);
	return 0;
}
