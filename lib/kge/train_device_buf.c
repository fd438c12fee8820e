/* The device trainer over a partition buffer: see train_device_buf.h. */
#include "kge/train_device_buf.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "kge/train_device_impl.h"

#define NONE UINT32_MAX

struct kg_dev_buffer {
	struct kg_trainer *tr;
	struct kg_backend *be;
	struct kg_store *st;
	struct kg_dev_trainer *dt;
	uint32_t P, C, nslots;
	uint64_t rows;		/* a slot's rows: the largest partition's */
	size_t d, esw;
	int sync;		/* KG_DEV_BUFFER_SYNC */
	int32_t *slot_of;	/* [P] its slot, or -1 */
	int32_t *part_in;	/* [nslots] its partition, or -1 */
	int64_t *row_shift;	/* [P] device row of entity e: e + shift */
	uint32_t *cur;		/* [C] the partitions of the state entered */
	/* Pinned staging, one slot each: rows then state, as a store's
	 * partition buffer. */
	float *stage_in, *stage_out;
	uint32_t evicting;	/* its copy is on the way to stage_out */
	/* Copies queued once the state's first chunk is (run_io). */
	int io_pending;
	uint32_t io_out, io_next, io_hint;
	struct kg_chunk *chunks;
	size_t chunk_cap;
	struct kg_dev_buffer_stats stats;
};

static float *
slot_w(const struct kg_dev_buffer *db, uint32_t k)
{
	return db->dt->dv.W + (size_t)k * db->rows * db->d;
}

static float *
slot_state(const struct kg_dev_buffer *db, uint32_t k)
{
	return db->dt->dv.Ws + (size_t)k * db->rows * db->esw;
}

static void
map(struct kg_dev_buffer *db, uint32_t p, uint32_t k)
{
	db->slot_of[p] = (int32_t)k;
	db->part_in[k] = (int32_t)p;
	db->row_shift[p] = (int64_t)((uint64_t)k * db->rows) -
	    (int64_t)db->st->off[p];
}

static void
unmap(struct kg_dev_buffer *db, uint32_t p)
{
	db->part_in[db->slot_of[p]] = -1;
	db->slot_of[p] = -1;
}

/* A slot holding no partition; -1 after kg_error() if there is none. */
static int
free_slot(struct kg_dev_buffer *db, uint32_t *k)
{
	for (*k = 0; *k < db->nslots; (*k)++)
		if (db->part_in[*k] < 0)
			return 0;
	kg_error("the device's partition buffer has no free slot");
	return -1;
}

/* Bytes of p's rows and of its state. */
static size_t
rows_bytes(const struct kg_dev_buffer *db, uint32_t p)
{
	return kg_store_part_rows(db->st, p) * db->d * sizeof(float);
}

static size_t
state_bytes(const struct kg_dev_buffer *db, uint32_t p)
{
	return kg_store_part_rows(db->st, p) * db->esw * sizeof(float);
}

/* Upload p from the store into slot k and wait; 0 or -1. */
static int
upload_sync(struct kg_dev_buffer *db, uint32_t p, uint32_t k)
{
	const struct kg_store_part *part = kg_store_acquire(db->st, p);
	int rc;

	if (part == NULL)
		return -1;
	rc = kg_be_upload(db->be, slot_w(db, k), part->w, rows_bytes(db, p)) <
	    0 || kg_be_upload(db->be, slot_state(db, k), part->state,
	    state_bytes(db, p)) < 0 ? -1 : 0;
	kg_store_release(db->st, p, 0);
	if (rc == 0)
		map(db, p, k);
	db->stats.bytes_up += rows_bytes(db, p) + state_bytes(db, p);
	return rc;
}

/* Download p's slot into the store and wait; p stays mapped.  0 or -1. */
static int
download_sync(struct kg_dev_buffer *db, uint32_t p)
{
	uint32_t k = (uint32_t)db->slot_of[p];
	const struct kg_store_part *part = kg_store_acquire(db->st, p);
	int rc;

	if (part == NULL)
		return -1;
	rc = kg_be_download(db->be, part->w, slot_w(db, k), rows_bytes(db, p)) <
	    0 || kg_be_download(db->be, part->state, slot_state(db, k),
	    state_bytes(db, p)) < 0 ? -1 : 0;
	kg_store_release(db->st, p, 1);
	db->stats.bytes_down += rows_bytes(db, p) + state_bytes(db, p);
	return rc;
}

/* Queue p's slot for stage_out on the copy stream and free the slot
 * (the copy stream runs in order: a later upload into it waits). */
static int
start_evict(struct kg_dev_buffer *db, uint32_t p)
{
	uint32_t k = (uint32_t)db->slot_of[p];

	if (kg_be_download_async(db->be, db->stage_out, slot_w(db, k),
	    rows_bytes(db, p)) < 0 || kg_be_download_async(db->be,
	    db->stage_out + db->rows * db->d, slot_state(db, k),
	    state_bytes(db, p)) < 0)
		return -1;
	unmap(db, p);
	db->evicting = p;
	db->stats.bytes_down += rows_bytes(db, p) + state_bytes(db, p);
	return 0;
}

/* After a sync: the evicted partition from stage_out into the store. */
static int
finish_evict(struct kg_dev_buffer *db)
{
	uint32_t p = db->evicting;
	const struct kg_store_part *part;

	if (p == NONE)
		return 0;
	part = kg_store_acquire(db->st, p);
	if (part == NULL)
		return -1;
	memcpy(part->w, db->stage_out, rows_bytes(db, p));
	memcpy(part->state, db->stage_out + db->rows * db->d,
	    state_bytes(db, p));
	kg_store_release(db->st, p, 1);
	db->evicting = NONE;
	return 0;
}

/* p from the store through stage_in into slot k, queued on the copy
 * stream (stage_in is free: the upload before it ended at a sync). */
static int
start_fetch(struct kg_dev_buffer *db, uint32_t p, uint32_t k)
{
	const struct kg_store_part *part = kg_store_acquire(db->st, p);

	if (part == NULL)
		return -1;
	memcpy(db->stage_in, part->w, rows_bytes(db, p));
	memcpy(db->stage_in + db->rows * db->d, part->state,
	    state_bytes(db, p));
	kg_store_release(db->st, p, 0);
	if (kg_be_upload_async(db->be, slot_w(db, k), db->stage_in,
	    rows_bytes(db, p)) < 0 || kg_be_upload_async(db->be,
	    slot_state(db, k), db->stage_in + db->rows * db->d,
	    state_bytes(db, p)) < 0)
		return -1;
	map(db, p, k);
	db->stats.swaps++;
	db->stats.bytes_up += rows_bytes(db, p) + state_bytes(db, p);
	return 0;
}

/* ---- The negative pool (train_device_impl.h's struct dev_pool). ---- */

/* Allocate the pool's device buffers and take a resumed run's waiting
 * gradients (the host pool's, from its checkpoint) into bank 0; 0 or
 * -1. */
static int
pool_open(struct kg_dev_buffer *db)
{
	struct kg_dev_trainer *dt = db->dt;
	struct kg_neg_pool *np = &db->tr->pool;
	struct dev_pool *pl = &dt->pool;
	struct kg_backend *be = db->be;
	size_t d = db->d, fs = sizeof(float);
	uint32_t q;

	dt->np = np;
	pl->slots = np->off[np->n_parts];
	for (q = 0; q < np->n_parts; q++)
		if (np->off[q + 1] - np->off[q] > pl->k)
			pl->k = np->off[q + 1] - np->off[q];
	pl->bank = kg_xcalloc(np->n_parts, 1);
	pl->rows = kg_be_alloc(be, pl->slots * d * fs);
	pl->grad = kg_be_alloc(be, 2 * pl->slots * d * fs);
	pl->sq = kg_be_alloc(be, 2 * pl->slots * fs);
	pl->tg = kg_be_alloc(be, pl->k * d * fs);
	pl->tsq = kg_be_alloc(be, pl->k * fs);
	pl->idx = kg_be_alloc(be, 2 * pl->k * sizeof(int64_t));
	pl->hidx = kg_be_host_alloc(be, 2 * pl->k * sizeof(int64_t) + 1);
	if (pl->rows == NULL || pl->grad == NULL || pl->sq == NULL ||
	    pl->tg == NULL || pl->tsq == NULL || pl->idx == NULL ||
	    pl->hidx == NULL)
		return -1;
	kg_neg_pool_fold(np, UINT32_MAX);
	return kg_be_zero(be, pl->grad, 2 * pl->slots * d * fs) < 0 ||
	    kg_be_zero(be, pl->sq, 2 * pl->slots * fs) < 0 ||
	    kg_be_upload(be, pl->grad, np->grad, pl->slots * d * fs) < 0 ||
	    kg_be_upload(be, pl->sq, np->sq, pl->slots * fs) < 0 ? -1 : 0;
}

static void
pool_free(struct kg_dev_buffer *db)
{
	struct dev_pool *pl = &db->dt->pool;

	kg_be_free(db->be, pl->rows);
	kg_be_free(db->be, pl->grad);
	kg_be_free(db->be, pl->sq);
	kg_be_free(db->be, pl->tg);
	kg_be_free(db->be, pl->tsq);
	kg_be_free(db->be, pl->idx);
	kg_be_host_free(db->be, pl->hidx);
	free(pl->bank);
	memset(pl, 0, sizeof(*pl));
}

/*
 * Apply the summed gradients of partition q's n slots from slot o (IDs
 * gid, sorted) in bank b to their rows, q on the device: lib/kge's
 * apply_slots, row-wise Adagrad through kg_be_adagrad_sq, the other
 * optimisers a plain step of every slot; a frozen row (kge/train.h)
 * takes none.  Equal IDs (a partition larger than the pool draws some
 * twice) step one after another as on the CPU: round r takes the r-th
 * of each, gathered (a round of frozen rows only ends it: the later
 * rounds hold the same IDs).  0 or -1.
 */
static int
pool_apply_slots(struct kg_dev_buffer *db, uint32_t q, const uint64_t *gid,
    uint32_t b, uint64_t o, uint64_t n)
{
	struct kg_trainer *tr = db->tr;
	struct kg_dev_trainer *dt = db->dt;
	struct dev_pool *pl = &dt->pool;
	struct kg_backend *be = db->be;
	size_t d = db->d, k = pl->k, r, m, i, run;
	uint64_t first = b * pl->slots + o;
	float lr = kg_train_lr(tr, 0, tr->o.lr);
	const float *g, *sq;

	for (r = 0;; r++) {
		for (m = 0, run = 0, i = 0; i < n; i++) {
			run = i > 0 && gid[i] == gid[i - 1] ? run + 1 : 0;
			if (run != r || kg_trainer_frozen(tr->frozen_ent,
			    gid[i]))
				continue;
			pl->hidx[m] = (int64_t)gid[i] + db->row_shift[q];
			pl->hidx[k + m] = (int64_t)(first + i);
			m++;
		}
		if (m == 0)
			return 0;
		if (kg_be_upload(be, pl->idx, pl->hidx, 2 * k *
		    sizeof(int64_t)) < 0)
			return -1;
		g = pl->grad + first * d;
		sq = pl->sq + first;
		if (m < n) {
			if (kg_be_gather(be, m, d, pl->grad, pl->idx + k,
			    pl->tg) < 0 || kg_be_gather(be, m, 1, pl->sq,
			    pl->idx + k, pl->tsq) < 0)
				return -1;
			g = pl->tg;
			sq = pl->tsq;
		}
		if ((tr->o.ent_optim == KG_OPTIM_ADAGRAD ?
		    kg_be_adagrad_sq(be, m, d, lr, pl->idx, g, sq,
		    dt->dv.W, dt->dv.Ws) : kg_dev_optim(be, tr->o.ent_optim,
		    m, d, lr, pl->idx, g, dt->dv.W, dt->dv.Ws)) < 0)
			return -1;
	}
}

/* Zero partition q's n slots from o in bank b. */
static int
pool_zero(struct kg_dev_buffer *db, uint32_t b, uint64_t o, uint64_t n)
{
	struct dev_pool *pl = &db->dt->pool;
	uint64_t first = b * pl->slots + o;

	return kg_be_zero(db->be, pl->grad + first * db->d, n * db->d *
	    sizeof(float)) < 0 || kg_be_zero(db->be, pl->sq + first, n *
	    sizeof(float)) < 0 ? -1 : 0;
}

/* The pool's waiting gradients of partition q (on the device): carried
 * from the epoch before, then this epoch's (train_bucket.c's
 * apply_pool).  0 or -1. */
static int
pool_apply(struct kg_dev_buffer *db, uint32_t q)
{
	struct kg_neg_pool *np = db->dt->np;
	uint8_t b;
	uint64_t o, n;

	if (np == NULL)
		return 0;
	b = db->dt->pool.bank[q];
	o = np->off[q];
	n = np->off[q + 1] - o;
	if (n > 0 && np->carry_pending[q]) {
		if (pool_apply_slots(db, q, np->carry_gid + o, b ^ 1u, o, n) <
		    0 || pool_zero(db, b ^ 1u, o, n) < 0)
			return -1;
		np->carry_pending[q] = 0;
	}
	if (n > 0 && np->pending[q]) {
		if (pool_apply_slots(db, q, np->gid + o, b, o, n) < 0 ||
		    pool_zero(db, b, o, n) < 0)
			return -1;
		np->pending[q] = 0;
	}
	return 0;
}

/* The pool's copies of partition q's chosen rows, as they are now on
 * the device (kg_neg_pool_fill).  0 or -1. */
static int
pool_fill(struct kg_dev_buffer *db, uint32_t q)
{
	struct kg_neg_pool *np = db->dt->np;
	struct dev_pool *pl = &db->dt->pool;
	uint64_t o, n, i;

	if (np == NULL)
		return 0;
	o = np->off[q];
	n = np->off[q + 1] - o;
	for (i = 0; i < n; i++)
		pl->hidx[i] = (int64_t)np->gid[o + i] + db->row_shift[q];
	if (kg_be_upload(db->be, pl->idx, pl->hidx, n * sizeof(int64_t)) <
	    0 || kg_be_gather(db->be, n, db->d, db->dt->dv.W, pl->idx,
	    pl->rows + o * db->d) < 0)
		return -1;
	np->valid[q] = 1;
	return 0;
}

/* This epoch's gradients of every partition into the host pool's first
 * copy (for a checkpoint, which the bucket driver saves).  0 or -1. */
static int
pool_download(struct kg_dev_buffer *db)
{
	struct kg_neg_pool *np = db->dt->np;
	struct dev_pool *pl = &db->dt->pool;
	size_t d = db->d, fs = sizeof(float);
	uint64_t o, n, first;
	uint32_t q;

	for (q = 0; np != NULL && q < np->n_parts; q++) {
		o = np->off[q];
		n = np->off[q + 1] - o;
		first = pl->bank[q] * pl->slots + o;
		if (kg_be_download(db->be, np->grad + o * d, pl->grad +
		    first * d, n * d * fs) < 0 || kg_be_download(db->be,
		    np->sq + o, pl->sq + first, n * fs) < 0)
			return -1;
	}
	return 0;
}

int
kg_dev_buffer_pool_load(struct kg_dev_buffer *db)
{
	struct kg_trainer *tr = db->tr;
	struct kg_neg_pool *np = db->dt->np;
	struct dev_pool *pl = &db->dt->pool;
	uint32_t q;

	if (np == NULL)
		return kg_trainer_pool_load(tr, NULL, 0);
	/* kg_neg_pool_choose's carry: the bank of the gradients waiting
	 * becomes the carry, the carry's the new bank, emptied. */
	for (q = 0; q < np->n_parts; q++)
		if (np->pending[q]) {
			pl->bank[q] ^= 1u;
			if (pool_zero(db, pl->bank[q], np->off[q],
			    np->off[q + 1] - np->off[q]) < 0)
				return -1;
		}
	if (kg_trainer_pool_load(tr, NULL, 0) < 0)
		return -1;
	return tr->epoch == 0 ? 0 : kg_be_upload(db->be, pl->rows, np->rows,
	    pl->slots * db->d * sizeof(float));
}

/* The copies of a state change, queued behind its first chunk. */
static int
run_io(struct kg_dev_buffer *db)
{
	uint32_t k;

	db->io_pending = 0;
	if (db->io_out != NONE && start_evict(db, db->io_out) < 0)
		return -1;
	db->io_out = NONE;
	if (db->io_next != NONE && (free_slot(db, &k) < 0 ||
	    start_fetch(db, db->io_next, k) < 0))
		return -1;
	db->io_next = NONE;
	if (db->io_hint != NONE)
		kg_store_prefetch(db->st, db->io_hint);
	db->io_hint = NONE;
	return 0;
}

struct kg_dev_buffer *
kg_dev_buffer_open(struct kg_trainer *tr, struct kg_backend *be,
    uint32_t capacity, int flags)
{
	struct kg_dev_buffer *db;
	struct dev_bufs *v;
	uint32_t P = tr->n_parts, p;
	size_t stage;

	if (capacity < 2 || capacity > P) {
		kg_error("a device buffer of %u partitions cannot train %u "
		    "(it needs 2 to %u)", capacity, P, P);
		return NULL;
	}
	db = kg_xcalloc(1, sizeof(*db));
	db->tr = tr;
	db->be = be;
	db->st = tr->ents;
	db->P = P;
	db->C = capacity;
	db->nslots = capacity < P ? capacity + 1 : P;
	db->rows = tr->max_part_rows;
	db->d = tr->model.dim;
	db->esw = tr->ents->state_width;
	db->sync = (flags & KG_DEV_BUFFER_SYNC) != 0;
	db->evicting = db->io_out = db->io_next = db->io_hint = NONE;
	db->slot_of = kg_xmallocarray(P, sizeof(*db->slot_of));
	db->part_in = kg_xmallocarray(db->nslots, sizeof(*db->part_in));
	db->row_shift = kg_xcalloc(P, sizeof(*db->row_shift));
	db->cur = kg_xcalloc(capacity, sizeof(*db->cur));
	for (p = 0; p < P; p++)
		db->slot_of[p] = -1;
	for (p = 0; p < db->nslots; p++)
		db->part_in[p] = -1;
	db->dt = kg_dev_trainer_alloc(tr, be, db->nslots * db->rows);
	if (db->dt == NULL) {
		kg_dev_buffer_free(db);
		return NULL;
	}
	db->dt->row_shift = db->row_shift;
	v = &db->dt->dv;
	stage = db->rows * (db->d + db->esw) * sizeof(float);
	db->stage_in = kg_be_host_alloc(be, stage);
	db->stage_out = kg_be_host_alloc(be, stage);
	if (db->stage_in == NULL || db->stage_out == NULL ||
	    kg_be_upload(be, v->R, tr->rel, tr->n_rel_rows * db->dt->rw *
	    sizeof(float)) < 0 || kg_be_upload(be, v->Rs, tr->rel_state,
	    tr->n_rel_rows * db->dt->rsw * sizeof(float)) < 0 ||
	    (tr->pool.k > 0 && pool_open(db) < 0)) {
		kg_dev_buffer_free(db);
		return NULL;
	}
	return db;
}

void
kg_dev_buffer_free(struct kg_dev_buffer *db)
{
	if (db == NULL)
		return;
	if (db->dt != NULL)
		pool_free(db);
	kg_dev_trainer_free(db->dt);
	kg_be_host_free(db->be, db->stage_in);
	kg_be_host_free(db->be, db->stage_out);
	free(db->slot_of);
	free(db->part_in);
	free(db->row_shift);
	free(db->cur);
	free(db->chunks);
	free(db);
}

static int
in_state(const struct kg_dev_buffer *db, uint32_t p)
{
	uint32_t i;

	for (i = 0; i < db->C; i++)
		if (db->cur[i] == p)
			return 1;
	return 0;
}

/* Make the device hold exactly the state's partitions, waiting for each
 * copy (a first state, or every state with KG_DEV_BUFFER_SYNC). */
static int
settle(struct kg_dev_buffer *db, int first)
{
	uint32_t i, k;
	int32_t p;

	for (k = 0; k < db->nslots; k++) {
		p = db->part_in[k];
		if (p >= 0 && !in_state(db, (uint32_t)p)) {
			if (download_sync(db, (uint32_t)p) < 0)
				return -1;
			unmap(db, (uint32_t)p);
		}
	}
	for (i = 0; i < db->C; i++) {
		if (db->slot_of[db->cur[i]] >= 0)
			continue;
		if (free_slot(db, &k) < 0 || upload_sync(db, db->cur[i], k) < 0)
			return -1;
		if (first)
			db->stats.fills++;
		else
			db->stats.swaps++;
	}
	return 0;
}

int
kg_dev_buffer_enter(struct kg_dev_buffer *db, const struct kg_order *o,
    uint32_t s)
{
	uint32_t i, k;
	double t0;

	if (o->nparts != db->P || o->width != db->C || s >= o->nstates) {
		kg_error("state %u of an order of %u partitions, buffer %u, "
		    "does not fit a device buffer of %u in %u", s, o->nparts,
		    o->width, db->C, db->P);
		return -1;
	}
	if (db->io_pending && run_io(db) < 0)
		return -1;
	t0 = kg_now();
	if (kg_be_sync(db->be) < 0)
		return -1;
	db->stats.wait_seconds += kg_now() - t0;
	if (finish_evict(db) < 0)
		return -1;
	memcpy(db->cur, kg_order_state(o, s), db->C * sizeof(*db->cur));
	if (s == 0 || db->sync) {
		if (settle(db, s == 0) < 0)
			return -1;
	} else {
		/* The device holds the last state and in[s], read ahead. */
		if (db->slot_of[o->in[s]] < 0) {
			kg_error("partition %u was not read ahead", o->in[s]);
			return -1;
		}
		for (k = 0; k < db->nslots; k++)
			if (db->part_in[k] >= 0 &&
			    !in_state(db, (uint32_t)db->part_in[k]))
				db->io_out = (uint32_t)db->part_in[k];
		db->io_pending = db->io_out != NONE;
	}
	if (s + 1 < o->nstates) {
		if (db->sync)
			kg_store_prefetch(db->st, o->in[s + 1]);
		else if (o->in[s + 1] == db->io_out)
			/* It comes back next: it stays in the slot to read
			 * ahead into, and nothing moves. */
			db->io_out = NONE;
		else {
			db->io_next = o->in[s + 1];
			db->io_hint = s + 2 < o->nstates ? o->in[s + 2] : NONE;
			db->io_pending = 1;
		}
	}
	for (i = 0; i < db->C; i++)
		if (db->slot_of[db->cur[i]] < 0) {
			kg_error("partition %u is not on the device",
			    db->cur[i]);
			return -1;
		}
	return 0;
}

int
kg_dev_buffer_bucket(struct kg_dev_buffer *db, uint32_t ph, uint32_t pt,
    const int32_t *hrt, uint64_t n, double *loss_sum, uint64_t *done)
{
	struct kg_trainer *tr = db->tr;
	struct kg_dev_trainer *dt = db->dt;
	uint64_t cs = kg_train_chunk_size(&tr->o), need = (n + cs - 1) / cs;
	double loss = 0.0;
	size_t nch, c;

	*loss_sum = 0.0;
	*done = 0;
	if (ph >= db->P || pt >= db->P || !in_state(db, ph) ||
	    !in_state(db, pt)) {
		kg_error("bucket (%u, %u) is not in the device's buffer state",
		    ph, pt);
		return -1;
	}
	if (need > db->chunk_cap) {
		db->chunk_cap = need;
		db->chunks = kg_xreallocarray(db->chunks, need,
		    sizeof(*db->chunks));
	}
	nch = kg_plan_even(tr, n, ph * db->P + pt, db->chunks);
	dt->ph = ph;
	dt->pt = pt;
	if (kg_be_zero(db->be, dt->dv.lsum, sizeof(double)) < 0 ||
	    pool_apply(db, ph) < 0 || pool_apply(db, pt) < 0)
		return -1;
	for (c = 0; c < nch; c++) {
		const struct kg_chunk *ch = &db->chunks[c];

		if (kg_dev_step(dt, hrt + 3 * ch->start, ch->len, ch->side, c,
		    ch->start) < 0)
			return -1;
		/* The state change's copies overlap this chunk on. */
		if (db->io_pending && run_io(db) < 0)
			return -1;
	}
	/* The pool's copies of the two partitions, as they are now. */
	if (pool_fill(db, ph) < 0 || pool_fill(db, pt) < 0 ||
	    kg_be_download(db->be, &loss, dt->dv.lsum, sizeof(loss)) < 0)
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

int
kg_dev_buffer_flush(struct kg_dev_buffer *db)
{
	struct kg_trainer *tr = db->tr;
	struct dev_bufs *v = &db->dt->dv;
	uint32_t k;

	if (db->io_pending && run_io(db) < 0)
		return -1;
	if (kg_be_sync(db->be) < 0 || finish_evict(db) < 0)
		return -1;
	for (k = 0; k < db->nslots; k++)
		if (db->part_in[k] >= 0 &&
		    download_sync(db, (uint32_t)db->part_in[k]) < 0)
			return -1;
	if (kg_be_download(db->be, tr->rel, v->R, tr->n_rel_rows *
	    db->dt->rw * sizeof(float)) < 0 || kg_be_download(db->be,
	    tr->rel_state, v->Rs, tr->n_rel_rows * db->dt->rsw *
	    sizeof(float)) < 0)
		return -1;
	return pool_download(db);
}

int
kg_dev_buffer_capacity(uint32_t gpu_capacity, uint64_t gpu_mem_budget,
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

const struct kg_dev_buffer_stats *
kg_dev_buffer_stats(const struct kg_dev_buffer *db)
{
	return &db->stats;
}
