/*
 * train_device_pool: the negative pool on the device for a device tier's
 * buckets; see train_device_impl.h (struct dev_pool, kg_dev_pool_*).
 */
#include "kge/train_device_impl.h"

#include <stdlib.h>
#include <string.h>

#include "core/util.h"

int
kg_dev_pool_open(struct kg_dev_trainer *dt)
{
	struct kg_neg_pool *np = &dt->tr->pool;
	struct dev_pool *pl = &dt->pool;
	struct kg_backend *be = dt->be;
	size_t d = dt->d, fs = sizeof(float);
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

void
kg_dev_pool_free(struct kg_dev_trainer *dt)
{
	struct dev_pool *pl = &dt->pool;

	kg_be_free(dt->be, pl->rows);
	kg_be_free(dt->be, pl->grad);
	kg_be_free(dt->be, pl->sq);
	kg_be_free(dt->be, pl->tg);
	kg_be_free(dt->be, pl->tsq);
	kg_be_free(dt->be, pl->idx);
	kg_be_host_free(dt->be, pl->hidx);
	free(pl->bank);
	memset(pl, 0, sizeof(*pl));
	dt->np = NULL;
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
apply_slots(struct kg_dev_trainer *dt, uint32_t q, const uint64_t *gid,
    uint32_t b, uint64_t o, uint64_t n)
{
	struct kg_trainer *tr = dt->tr;
	struct dev_pool *pl = &dt->pool;
	struct kg_backend *be = dt->be;
	size_t d = dt->d, k = pl->k, r, m, i, run;
	uint64_t first = b * pl->slots + o;
	float lr = kg_train_lr(tr, 0, tr->o.lr);
	const float *g, *sq;

	for (r = 0;; r++) {
		for (m = 0, run = 0, i = 0; i < n; i++) {
			run = i > 0 && gid[i] == gid[i - 1] ? run + 1 : 0;
			if (run != r || kg_trainer_frozen(tr->frozen_ent,
			    gid[i]))
				continue;
			pl->hidx[m] = (int64_t)gid[i] + dt->row_shift[q];
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
zero_slots(struct kg_dev_trainer *dt, uint32_t b, uint64_t o, uint64_t n)
{
	struct dev_pool *pl = &dt->pool;
	uint64_t first = b * pl->slots + o;

	return kg_be_zero(dt->be, pl->grad + first * dt->d, n * dt->d *
	    sizeof(float)) < 0 || kg_be_zero(dt->be, pl->sq + first, n *
	    sizeof(float)) < 0 ? -1 : 0;
}

int
kg_dev_pool_apply(struct kg_dev_trainer *dt, uint32_t q)
{
	struct kg_neg_pool *np = dt->np;
	uint8_t b;
	uint64_t o, n;

	if (np == NULL)
		return 0;
	b = dt->pool.bank[q];
	o = np->off[q];
	n = np->off[q + 1] - o;
	if (n > 0 && np->carry_pending[q]) {
		if (apply_slots(dt, q, np->carry_gid + o, b ^ 1u, o, n) < 0 ||
		    zero_slots(dt, b ^ 1u, o, n) < 0)
			return -1;
		np->carry_pending[q] = 0;
	}
	if (n > 0 && np->pending[q]) {
		if (apply_slots(dt, q, np->gid + o, b, o, n) < 0 ||
		    zero_slots(dt, b, o, n) < 0)
			return -1;
		np->pending[q] = 0;
	}
	return 0;
}

int
kg_dev_pool_fill(struct kg_dev_trainer *dt, uint32_t q)
{
	struct kg_neg_pool *np = dt->np;
	struct dev_pool *pl = &dt->pool;
	uint64_t o, n, i;

	if (np == NULL)
		return 0;
	o = np->off[q];
	n = np->off[q + 1] - o;
	for (i = 0; i < n; i++)
		pl->hidx[i] = (int64_t)np->gid[o + i] + dt->row_shift[q];
	if (kg_be_upload(dt->be, pl->idx, pl->hidx, n * sizeof(int64_t)) <
	    0 || kg_be_gather(dt->be, n, dt->d, dt->dv.W, pl->idx,
	    pl->rows + o * dt->d) < 0)
		return -1;
	np->valid[q] = 1;
	return 0;
}

int
kg_dev_pool_download(struct kg_dev_trainer *dt)
{
	struct kg_neg_pool *np = dt->np;
	struct dev_pool *pl = &dt->pool;
	size_t d = dt->d, fs = sizeof(float);
	uint64_t o, n, first;
	uint32_t q;

	for (q = 0; np != NULL && q < np->n_parts; q++) {
		o = np->off[q];
		n = np->off[q + 1] - o;
		first = pl->bank[q] * pl->slots + o;
		if (kg_be_download(dt->be, np->grad + o * d, pl->grad +
		    first * d, n * d * fs) < 0 || kg_be_download(dt->be,
		    np->sq + o, pl->sq + first, n * fs) < 0)
			return -1;
	}
	return 0;
}

int
kg_dev_pool_load(struct kg_dev_trainer *dt)
{
	struct kg_trainer *tr = dt->tr;
	struct kg_neg_pool *np = dt->np;
	struct dev_pool *pl = &dt->pool;
	uint32_t q;

	if (np == NULL)
		return kg_trainer_pool_load(tr, NULL, 0);
	/* kg_neg_pool_choose's carry: the bank of the gradients waiting
	 * becomes the carry, the carry's the new bank, emptied. */
	for (q = 0; q < np->n_parts; q++)
		if (np->pending[q]) {
			pl->bank[q] ^= 1u;
			if (zero_slots(dt, pl->bank[q], np->off[q],
			    np->off[q + 1] - np->off[q]) < 0)
				return -1;
		}
	if (kg_trainer_pool_load(tr, NULL, 0) < 0)
		return -1;
	return tr->epoch == 0 ? 0 : kg_be_upload(dt->be, pl->rows, np->rows,
	    pl->slots * dt->d * sizeof(float));
}
