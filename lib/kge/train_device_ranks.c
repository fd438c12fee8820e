/* The device trainer for one rank of a bucket run: see
 * train_device_ranks.h. */
#include "kge/train_device_ranks.h"

#include <math.h>
#include <stdlib.h>

#include "core/util.h"
#include "kge/train_device_impl.h"

struct kg_dev_ranks {
	struct kg_trainer *tr;
	struct kg_backend *be;
	struct kg_dev_trainer *dt;
	uint64_t rows;		/* a slot's rows: the largest partition's */
	int64_t *shift;		/* [P]: device row = entity + shift[p] */
	struct kg_chunk *chunks;
	size_t chunk_cap;
};

struct kg_dev_ranks *
kg_dev_ranks_open(struct kg_trainer *tr, struct kg_backend *be)
{
	struct kg_dev_ranks *dr;

	if (tr->pool.k > 0) {
		kg_error("under mpirun a device trains buckets without the "
		    "negative pool; add --neg_pool 0");
		return NULL;
	}
	dr = kg_xcalloc(1, sizeof(*dr));
	dr->tr = tr;
	dr->be = be;
	dr->rows = tr->max_part_rows;
	dr->shift = kg_xcalloc(tr->n_parts, sizeof(*dr->shift));
	dr->dt = kg_dev_trainer_alloc(tr, be, 2 * dr->rows);
	if (dr->dt == NULL) {
		kg_dev_ranks_free(dr);
		return NULL;
	}
	dr->dt->row_shift = dr->shift;
	return dr;
}

void
kg_dev_ranks_free(struct kg_dev_ranks *dr)
{
	if (dr == NULL)
		return;
	kg_dev_trainer_free(dr->dt);
	free(dr->shift);
	free(dr->chunks);
	free(dr);
}

/* Partition p's rows and state to slot k of the device (up) or back. */
static int
copy_part(struct kg_dev_ranks *dr, const struct kg_store_part *a, uint32_t k,
    int up)
{
	struct kg_dev_trainer *dt = dr->dt;
	float *w = dt->dv.W + (size_t)k * dr->rows * dt->d;
	float *s = dt->dv.Ws + (size_t)k * dr->rows * dt->esw;
	size_t bw = (size_t)a->rows * dt->d * sizeof(float);
	size_t bs = (size_t)a->rows * dt->esw * sizeof(float);

	if (up)
		return kg_be_upload(dr->be, w, a->w, bw) < 0 ||
		    kg_be_upload(dr->be, s, a->state, bs) < 0 ? -1 : 0;
	return kg_be_download(dr->be, a->w, w, bw) < 0 ||
	    kg_be_download(dr->be, a->state, s, bs) < 0 ? -1 : 0;
}

/* The relation table and its state to the device (up) or back. */
static int
copy_rel(struct kg_dev_ranks *dr, int up)
{
	struct kg_trainer *tr = dr->tr;
	struct kg_dev_trainer *dt = dr->dt;
	size_t br = tr->n_rel_rows * dt->rw * sizeof(float);
	size_t bs = tr->n_rel_rows * dt->rsw * sizeof(float);

	if (up)
		return kg_be_upload(dr->be, dt->dv.R, tr->rel, br) < 0 ||
		    kg_be_upload(dr->be, dt->dv.Rs, tr->rel_state, bs) < 0 ?
		    -1 : 0;
	return kg_be_download(dr->be, tr->rel, dt->dv.R, br) < 0 ||
	    kg_be_download(dr->be, tr->rel_state, dt->dv.Rs, bs) < 0 ? -1 : 0;
}

/* The chunks of the bucket through the device step; the loss summed
 * into *loss.  0 or -1. */
static int
train_chunks(struct kg_dev_ranks *dr, uint32_t ph, uint32_t pt,
    const int32_t *hrt, uint64_t n, double *loss)
{
	struct kg_trainer *tr = dr->tr;
	struct kg_dev_trainer *dt = dr->dt;
	uint64_t cs = kg_train_chunk_size(&tr->o), need = (n + cs - 1) / cs;
	size_t nch, c;

	if (need > dr->chunk_cap) {
		dr->chunk_cap = need;
		dr->chunks = kg_xreallocarray(dr->chunks, need,
		    sizeof(*dr->chunks));
	}
	nch = kg_train_plan_even(tr, n, ph * tr->n_parts + pt, dr->chunks);
	dt->ph = ph;
	dt->pt = pt;
	if (kg_be_zero(dr->be, dt->dv.lsum, sizeof(double)) < 0)
		return -1;
	for (c = 0; c < nch; c++) {
		const struct kg_chunk *ch = &dr->chunks[c];

		dt->neg_part = ch->side == KG_SIDE_TAIL ? pt : ph;
		dt->other_part = ch->side == KG_SIDE_TAIL ? ph : pt;
		dt->neg_base = tr->ents->off[dt->neg_part];
		if (kg_dev_step(dt, hrt + 3 * ch->start, ch->len, ch->side, c,
		    ch->start) < 0)
			return -1;
	}
	return kg_be_download(dr->be, loss, dt->dv.lsum, sizeof(*loss));
}

int
kg_dev_ranks_bucket(struct kg_dev_ranks *dr, uint32_t ph, uint32_t pt,
    const int32_t *hrt, uint64_t n, double *loss_sum, uint64_t *done)
{
	struct kg_trainer *tr = dr->tr;
	const struct kg_store_part *a, *b = NULL;
	double loss = 0.0;
	int rc;

	*loss_sum = 0.0;
	*done = 0;
	if ((a = kg_store_acquire(tr->ents, ph)) == NULL)
		return -1;
	if (pt != ph && (b = kg_store_acquire(tr->ents, pt)) == NULL) {
		kg_store_release(tr->ents, ph, 0);
		return -1;
	}
	dr->shift[ph] = -(int64_t)a->base;
	if (b != NULL)
		dr->shift[pt] = (int64_t)dr->rows - (int64_t)b->base;
	rc = copy_part(dr, a, 0, 1) < 0 ||
	    (b != NULL && copy_part(dr, b, 1, 1) < 0) || copy_rel(dr, 1) < 0 ||
	    train_chunks(dr, ph, pt, hrt, n, &loss) < 0 ||
	    copy_part(dr, a, 0, 0) < 0 ||
	    (b != NULL && copy_part(dr, b, 1, 0) < 0) || copy_rel(dr, 0) < 0 ?
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
