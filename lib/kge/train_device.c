/* The shallow trainer through the device seam: see train_device.h. */
#include "kge/train_device_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "kge/score.h"
#include "kge/train_impl.h"

/* Allocate n bytes of device memory into *p; 0 or -1. */
static int
dalloc(struct kg_dev_trainer *dt, void *p, size_t n)
{
	void *x = kg_be_alloc(dt->be, n);

	if (x == NULL)
		return -1;
	memcpy(p, &x, sizeof(x));
	return 0;
}

static int
alloc_all(struct kg_dev_trainer *dt, uint64_t E)
{
	struct dev_bufs *v = &dt->dv;
	const struct kg_trainer *tr = dt->tr;
	size_t d = dt->d, rw = dt->rw, B = dt->B, N = dt->N, M = dt->M;
	size_t R = tr->n_rel_rows, fs = sizeof(float);
	size_t ws = kg_be_work_size(dt->be, dt->sim, B, N), qd = dt->qd;
	size_t X = dt->transr ? B * N * qd : 1, i;

	if ((E > 0 && (dalloc(dt, &v->W, E * d * fs) < 0 ||
	    dalloc(dt, &v->Ws, E * dt->esw * fs) < 0)) ||
	    dalloc(dt, &v->R, R * rw * fs) < 0 ||
	    dalloc(dt, &v->Rs, R * dt->rsw * fs) < 0 ||
	    dalloc(dt, &v->rows, M * d * fs) < 0 ||
	    dalloc(dt, &v->rel, B * rw * fs) < 0 ||
	    dalloc(dt, &v->q, B * qd * fs) < 0 ||
	    dalloc(dt, &v->gq, B * qd * fs) < 0 ||
	    dalloc(dt, &v->pos, B * fs) < 0 ||
	    dalloc(dt, &v->pdist, B * fs) < 0 ||
	    dalloc(dt, &v->gpos, B * fs) < 0 ||
	    dalloc(dt, &v->S, B * N * fs) < 0 ||
	    dalloc(dt, &v->dist, B * N * fs) < 0 ||
	    dalloc(dt, &v->G, B * N * fs) < 0 ||
	    dalloc(dt, &v->work, (ws > 0 ? ws : 1) * fs) < 0 ||
	    dalloc(dt, &v->gall, 2 * (M * d + B * rw) * fs) < 0 ||
	    dalloc(dt, &v->lrow, B * sizeof(double)) < 0 ||
	    dalloc(dt, &v->lsum, sizeof(double)) < 0 ||
	    dalloc(dt, &v->idx, dt->n_idx * sizeof(int64_t)) < 0 ||
	    dalloc(dt, &v->pp, (dt->transr ? B * qd : 1) * fs) < 0 ||
	    dalloc(dt, &v->gpp, (dt->transr ? B * qd : 1) * fs) < 0 ||
	    dalloc(dt, &v->Pn, X * fs) < 0 ||
	    dalloc(dt, &v->gPn, X * fs) < 0 ||
	    dalloc(dt, &v->qx, X * fs) < 0 ||
	    dalloc(dt, &v->gqx, X * fs) < 0 ||
	    dalloc(dt, &v->rep, (dt->transr ? B * N : 1) *
	    sizeof(int64_t)) < 0 ||
	    dalloc(dt, &v->gPC, (dt->transr ? B * N * d : 1) * fs) < 0 ||
	    dalloc(dt, &v->ones, (dt->transr ? B : 1) * fs) < 0)
		return -1;
	v->grows = v->gall;
	v->grel = v->grows + M * d;
	v->ug = v->grel + B * rw;
	v->ugr = v->ug + M * d;
	/* A batch is uploaded whole, so the slots a chunk leaves unwritten
	 * hold zeros rather than whatever the allocation held. */
	for (i = 0; i < 2; i++) {
		if ((dt->hbuf[i] = kg_be_host_alloc(dt->be, dt->n_idx *
		    sizeof(int64_t))) == NULL)
			return -1;
		memset(dt->hbuf[i], 0, dt->n_idx * sizeof(int64_t));
	}
	dt->hidx = dt->hbuf[0];
	if (tr->frozen_ent != NULL || tr->frozen_rel != NULL) {
		dt->eperm = kg_xmallocarray(M + 1, sizeof(*dt->eperm));
		dt->rperm = kg_xmallocarray(B + 1, sizeof(*dt->rperm));
	}
	if (tr->merge != NULL &&
	    ((dt->x_ent = kg_be_host_alloc(dt->be, M * sizeof(uint64_t))) ==
	    NULL ||
	    (dt->x_ent_g = kg_be_host_alloc(dt->be, M * d * fs)) == NULL ||
	    (dt->x_rel = kg_be_host_alloc(dt->be, B * sizeof(uint32_t))) ==
	    NULL ||
	    (dt->x_rel_g = kg_be_host_alloc(dt->be, B * rw * fs)) == NULL))
		return -1;
	if (!dt->transr)
		return 0;
	/* TransR's ones and repeat index, once: they do not change. */
	for (i = 0; i < B; i += dt->n_idx) {
		size_t n = B - i < dt->n_idx ? B - i : dt->n_idx, j;
		float *one = (float *)dt->hidx;

		for (j = 0; j < n; j++)
			one[j] = 1.0f;
		if (kg_be_upload(dt->be, v->ones + i, one, n * fs) < 0)
			return -1;
	}
	for (i = 0; i < B * N; i += dt->n_idx) {
		size_t n = B * N - i < dt->n_idx ? B * N - i : dt->n_idx, j;

		for (j = 0; j < n; j++)
			dt->hidx[j] = (int64_t)((i + j) / N);
		if (kg_be_upload(dt->be, v->rep + i, dt->hidx,
		    n * sizeof(int64_t)) < 0)
			return -1;
	}
	return 0;
}

/* Copy the tables one way: to the device (up) or back; the entity
 * table only when the trainer holds the whole of it (part set). */
static int
copy_tables(struct kg_dev_trainer *dt, int up)
{
	const struct kg_trainer *tr = dt->tr;
	struct dev_bufs *v = &dt->dv;
	size_t E = tr->n_entities, R = tr->n_rel_rows, fs = sizeof(float);
	struct {
		void *dev, *host;
		size_t bytes;
	} t[4] = {
		{ v->R, tr->rel, R * dt->rw * fs },
		{ v->Rs, tr->rel_state, R * dt->rsw * fs },
		{ v->W, NULL, E * dt->d * fs },
		{ v->Ws, NULL, E * dt->esw * fs },
	};
	size_t i, n = dt->part != NULL ? 4 : 2;

	if (dt->part != NULL) {
		t[2].host = dt->part->w;
		t[3].host = dt->part->state;
	}
	for (i = 0; i < n; i++)
		if ((up ? kg_be_upload(dt->be, t[i].dev, t[i].host,
		    t[i].bytes) : kg_be_download(dt->be, t[i].host, t[i].dev,
		    t[i].bytes)) < 0)
			return -1;
	return 0;
}

struct kg_dev_trainer *
kg_dev_trainer_alloc(struct kg_trainer *tr, struct kg_backend *be,
    uint64_t table_rows)
{
	struct kg_dev_trainer *dt;

	if (kg_train_device_check(&tr->o) < 0)
		return NULL;
	dt = kg_xcalloc(1, sizeof(*dt));
	dt->tr = tr;
	dt->be = be;
	dt->form = kg_score_qform(&tr->model);
	dt->sim = kg_score_sim(&tr->model);
	dt->d = tr->model.dim;
	dt->rw = tr->model.rel_width;
	dt->transr = tr->model.kind == KG_MODEL_TRANSR;
	dt->qd = kg_score_qdim(&tr->model);
	dt->esw = tr->ents->state_width;
	dt->rsw = tr->rel_state_width;
	dt->B = kg_train_chunk_size(&tr->o);
	dt->N = tr->o.neg_sample_size;
	dt->M = 2 * dt->B + dt->N;
	dt->n_idx = 3 * dt->M + 3 * dt->B + 2 * dt->N;
	dt->own_table = table_rows > 0;
	kg_plan_init(&dt->plan, tr);
	if (alloc_all(dt, table_rows) < 0) {
		kg_dev_trainer_free(dt);
		return NULL;
	}
	return dt;
}

struct kg_dev_trainer *
kg_dev_trainer_open(struct kg_trainer *tr, struct kg_backend *be)
{
	struct kg_dev_trainer *dt;

	if (kg_train_device_check(&tr->o) < 0)
		return NULL;
	if (tr->n_parts != 1) {
		kg_error("a device trains one partition (the table has %u)",
		    tr->n_parts);
		return NULL;
	}
	dt = kg_dev_trainer_alloc(tr, be, tr->n_entities);
	if (dt == NULL)
		return NULL;
	dt->part = kg_store_acquire(tr->ents, 0);
	if (dt->part == NULL || copy_tables(dt, 1) < 0) {
		kg_dev_trainer_free(dt);
		return NULL;
	}
	return dt;
}

void
kg_dev_trainer_free(struct kg_dev_trainer *dt)
{
	struct dev_bufs *v;

	if (dt == NULL)
		return;
	v = &dt->dv;
	kg_be_sync(dt->be);
	if (dt->own_table) {
		kg_be_free(dt->be, v->W);
		kg_be_free(dt->be, v->Ws);
	}
	kg_be_free(dt->be, v->R);
	kg_be_free(dt->be, v->Rs);
	kg_be_free(dt->be, v->rows);
	kg_be_free(dt->be, v->rel);
	kg_be_free(dt->be, v->q);
	kg_be_free(dt->be, v->gq);
	kg_be_free(dt->be, v->pos);
	kg_be_free(dt->be, v->pdist);
	kg_be_free(dt->be, v->gpos);
	kg_be_free(dt->be, v->S);
	kg_be_free(dt->be, v->dist);
	kg_be_free(dt->be, v->G);
	kg_be_free(dt->be, v->work);
	kg_be_free(dt->be, v->gall);
	kg_be_free(dt->be, v->lrow);
	kg_be_free(dt->be, v->lsum);
	kg_be_free(dt->be, v->idx);
	kg_be_free(dt->be, v->pp);
	kg_be_free(dt->be, v->gpp);
	kg_be_free(dt->be, v->Pn);
	kg_be_free(dt->be, v->gPn);
	kg_be_free(dt->be, v->qx);
	kg_be_free(dt->be, v->gqx);
	kg_be_free(dt->be, v->rep);
	kg_be_free(dt->be, v->gPC);
	kg_be_free(dt->be, v->ones);
	kg_be_host_free(dt->be, dt->hbuf[0]);
	kg_be_host_free(dt->be, dt->hbuf[1]);
	kg_be_host_free(dt->be, dt->x_ent);
	kg_be_host_free(dt->be, dt->x_ent_g);
	kg_be_host_free(dt->be, dt->x_rel);
	kg_be_host_free(dt->be, dt->x_rel_g);
	free(dt->eperm);
	free(dt->rperm);
	if (dt->part != NULL)
		kg_store_release(dt->tr->ents, 0, 1);
	kg_plan_release(&dt->plan);
	free(dt);
}

int
kg_dev_trainer_download(struct kg_dev_trainer *dt)
{
	return copy_tables(dt, 0);
}

/* The device row of entity e (train_device_impl.h). */
static int64_t
dev_row(const struct kg_dev_trainer *dt, uint64_t e)
{
	if (dt->row_shift == NULL)
		return (int64_t)e;
	return (int64_t)e + dt->row_shift[kg_store_part_of(dt->tr->ents, e)];
}

/*
 * perm[s] for the n distinct rows ids (slot s: row ids[s]): the rows the
 * frozen bitmap b leaves training first, in their order, then the frozen
 * ones; returns how many train.
 */
static size_t
train_first(const uint64_t *b, size_t n, const uint64_t *ids64,
    const uint32_t *ids32, uint32_t *perm)
{
	size_t s, k = 0, f;

	for (s = 0; s < n; s++)
		if (!kg_trainer_frozen(b, ids64 ? ids64[s] : ids32[s]))
			perm[s] = (uint32_t)k++;
	f = k;
	for (s = 0; s < n; s++)
		if (kg_trainer_frozen(b, ids64 ? ids64[s] : ids32[s]))
			perm[s] = (uint32_t)f++;
	return k;
}

/*
 * The chunk's index batch from its plan: occurrence k (positive i's
 * fixed row at i, its true candidate at len + i, the negatives in hand
 * at 2 len + j) and its slot among the distinct rows, the distinct rows,
 * the relation row of each positive, its slot and the distinct relation
 * rows, then the pool negatives' slots (I_PSLOT) and their rows in the
 * banks (I_PBANK).
 */
static void
index_batch(struct kg_dev_trainer *dt)
{
	const struct kg_plan *pl = &dt->plan;
	const struct kg_trainer *tr = dt->tr;
	size_t hand = pl->n_local + pl->n_other, i, k;
	const uint32_t *ep = dt->eperm, *rp = dt->rperm;
	int64_t *x = dt->hidx;

	dt->nu_train = pl->n_ent;
	dt->nr_train = pl->n_rel;
	if (ep != NULL) {
		dt->nu_train = train_first(tr->frozen_ent, pl->n_ent, pl->uent,
		    NULL, dt->eperm);
		dt->nr_train = train_first(tr->frozen_rel, pl->n_rel, NULL,
		    pl->urel, dt->rperm);
	}
	for (k = 0; k < pl->n_occ; k++) {
		x[I_ENT(dt) + k] = dev_row(dt, pl->occ[k]);
		x[I_ESLOT(dt) + k] = ep ? ep[pl->slot[k]] : pl->slot[k];
	}
	for (k = 0; k < pl->n_ent; k++)
		x[I_UENT(dt) + (ep ? ep[k] : k)] = dev_row(dt, pl->uent[k]);
	for (i = 0; i < pl->len; i++) {
		x[I_REL(dt) + i] = pl->tri[3 * i + 1];
		x[I_RSLOT(dt) + i] = rp ? rp[pl->rslot[i]] : pl->rslot[i];
	}
	for (k = 0; k < pl->n_rel; k++)
		x[I_UREL(dt) + (rp ? rp[k] : k)] = pl->urel[k];
	for (k = 0; k < pl->n_pool; k++) {
		uint32_t s = pl->neg[hand + k];

		x[I_PSLOT(dt) + k] = s;
		x[I_PBANK(dt) + k] = (int64_t)(dt->pool.bank[
		    kg_neg_pool_part_of(dt->np, s)] * dt->pool.slots + s);
	}
}

int
kg_dev_optim(struct kg_backend *be, enum kg_optim_kind kind, size_t n,
    size_t d, float lr, const int64_t *idx, const float *g, float *w,
    float *state)
{
	struct kg_adam a = KG_ADAM_INIT;

	switch (kind) {
	case KG_OPTIM_ADAGRAD:
		return kg_be_adagrad(be, n, d, lr, idx, g, w, state);
	case KG_OPTIM_ADAGRAD_ELEM:
		return kg_be_adagrad_elem(be, n, d, lr, idx, g, w, state);
	case KG_OPTIM_ADAM:
		a.lr = lr;
		return kg_be_adam(be, n, d, &a, idx, g, w, state);
	}
	return -1;
}

/* The scores of every model but TransR (the rows and relation rows of
 * the chunk gathered): the queries, the positives by pairs, the shared
 * negatives by chunk.  0 or -1. */
static int
query_forward(struct kg_dev_trainer *dt, size_t len, int side)
{
	struct kg_backend *be = dt->be;
	struct dev_bufs *v = &dt->dv;
	size_t d = dt->d, N = dt->N;
	const float *fixed = v->rows, *posc = v->rows + len * d;
	const float *negc = v->rows + 2 * len * d;
	float gamma = dt->tr->model.gamma;

	return kg_be_query(be, dt->form, side, len, d, fixed, v->rel,
	    v->q) < 0 ||
	    kg_be_pairs(be, dt->sim, len, d, gamma, v->q, posc, v->pos,
	    v->pdist) < 0 ||
	    kg_be_chunk(be, dt->sim, len, N, d, gamma, v->q, negc, v->S,
	    v->dist, v->work) < 0 ? -1 : 0;
}

/*
 * TransR's scores (the rows and relation rows of the chunk gathered): the
 * queries q = M h + r (M t - r), the positives' projections M c, and per
 * query the shared negatives projected by its own M (one strided-batched
 * GEMM) and compared with its query repeated, all as L2_DIFF pairs:
 * score[i][j] = gamma - |q_i - M_i c_j|.  0 or -1.
 */
static int
transr_forward(struct kg_dev_trainer *dt, size_t len, int side)
{
	struct kg_backend *be = dt->be;
	struct dev_bufs *v = &dt->dv;
	size_t d = dt->d, k = dt->qd, rw = dt->rw, N = dt->N;
	const float *fixed = v->rows, *posc = v->rows + len * d;
	const float *negc = v->rows + 2 * len * d;
	float gamma = dt->tr->model.gamma;

	return kg_be_transr(be, side == KG_SIDE_TAIL ? 1 : -1, len, d, k,
	    fixed, v->rel, v->q) < 0 ||
	    kg_be_transr(be, 0, len, d, k, posc, v->rel, v->pp) < 0 ||
	    kg_be_pairs(be, KG_KERN_L2_DIFF, len, k, gamma, v->q, v->pp,
	    v->pos, v->pdist) < 0 ||
	    kg_be_sgemm_batched(be, KG_NO_TRANS, KG_TRANS, N, k, d, 1.0f, negc,
	    d, 0, v->rel + k, d, rw, 0.0f, v->Pn, k, N * k, len) < 0 ||
	    kg_be_gather(be, len * N, k, v->q, v->rep, v->qx) < 0 ||
	    kg_be_pairs(be, KG_KERN_L2_DIFF, len * N, k, gamma, v->qx, v->Pn,
	    v->S, v->dist) < 0 ? -1 : 0;
}

/*
 * TransR's backward from G (dL/dscore of the negatives) and gpos: into
 * the rows' gradients grows (fixed | positives | negatives) and grel.
 * 0 or -1.
 */
static int
transr_backward(struct kg_dev_trainer *dt, size_t len, int side)
{
	struct kg_backend *be = dt->be;
	struct dev_bufs *v = &dt->dv;
	size_t d = dt->d, k = dt->qd, rw = dt->rw, N = dt->N;
	const float *fixed = v->rows, *posc = v->rows + len * d;
	const float *negc = v->rows + 2 * len * d;
	float *gfixed = v->grows, *gposc = v->grows + len * d;
	float *gneg = v->grows + 2 * len * d;
	int sign = side == KG_SIDE_TAIL ? 1 : -1;

	/* The negatives: dL/dq by pairs, summed per query; dL/dM_i =
	 * gP_i^T C (batched); dL/dC = sum_i gP_i M_i: each query's share
	 * (batched), then their sum into the shared rows (ones^T times the
	 * shares): a fixed number of launches, not one GEMM a query. */
	if (kg_be_zero(be, v->gPn, len * N * k * sizeof(float)) < 0 ||
	    kg_be_zero(be, v->gq, len * k * sizeof(float)) < 0 ||
	    kg_be_pairs_backward(be, KG_KERN_L2_DIFF, len * N, k, v->qx, v->Pn,
	    v->G, v->dist, v->gqx, v->gPn) < 0 ||
	    kg_be_scatter_add(be, len * N, k, v->gqx, v->rep, v->gq) < 0 ||
	    kg_be_sgemm_batched(be, KG_TRANS, KG_NO_TRANS, k, d, N, 1.0f,
	    v->gPn, k, N * k, negc, d, 0, 1.0f, v->grel + k, d, rw, len) < 0)
		return -1;
	if (kg_be_sgemm_batched(be, KG_NO_TRANS, KG_NO_TRANS, N, d, k, 1.0f,
	    v->gPn, k, N * k, v->rel + k, d, rw, 0.0f, v->gPC, d, N * d,
	    len) < 0 ||
	    kg_be_sgemm(be, KG_NO_TRANS, KG_NO_TRANS, 1, N * d, len, 1.0f,
	    v->ones, len, v->gPC, N * d, 1.0f, gneg, N * d) < 0)
		return -1;
	if (kg_be_transr_backward(be, sign, len, d, k, fixed, v->rel, v->gq,
	    gfixed, v->grel) < 0)
		return -1;
	/* The positives: through q and through their own projections. */
	return kg_be_zero(be, v->gpp, len * k * sizeof(float)) < 0 ||
	    kg_be_pairs_backward(be, KG_KERN_L2_DIFF, len, k, v->q, v->pp,
	    v->gpos, v->pdist, v->gq, v->gpp) < 0 ||
	    kg_be_transr_backward(be, 0, len, d, k, posc, v->rel, v->gpp,
	    gposc, v->grel) < 0 ||
	    kg_be_transr_backward(be, sign, len, d, k, fixed, v->rel, v->gq,
	    gfixed, v->grel) < 0 ? -1 : 0;
}

/* The n_pool gradients past row me of grows into the pool's banks,
 * their partitions marked pending (kg_neg_pool_add_grad).  0 or -1. */
static int
pool_grads(struct kg_dev_trainer *dt, size_t me)
{
	struct dev_bufs *v = &dt->dv;
	const int64_t *ix = v->idx + I_PBANK(dt);
	const struct kg_plan *pl = &dt->plan;
	size_t j;

	for (j = dt->N - pl->n_pool; j < dt->N; j++)
		dt->np->pending[kg_neg_pool_part_of(dt->np, pl->neg[j])] = 1;
	return kg_be_scatter_add(dt->be, pl->n_pool, dt->d, v->grows + me *
	    dt->d, ix, dt->pool.grad) < 0 ||
	    kg_be_scatter_sqnorm(dt->be, pl->n_pool, dt->d, v->grows + me *
	    dt->d, ix, dt->pool.sq) < 0 ? -1 : 0;
}

/* The relation optimiser's base rate: --rel_lr, else Adam's default or
 * --lr. */
static double
rel_lr(const struct kg_train_opts *o)
{
	return o->rel_lr > 0.0 ? o->rel_lr : o->rel_optim == KG_OPTIM_ADAM ?
	    0.001 : o->lr;
}

/*
 * The merged sums m without the frozen rows (the whole table on the
 * device: a row is its entity ID), the rest moved into the host buffers
 * x_ent ... x_rel_g, which the exchange no longer needs.
 */
static void
drop_frozen(struct kg_dev_trainer *dt, struct kg_row_grads *m)
{
	const struct kg_trainer *tr = dt->tr;
	size_t d = dt->d, rw = dt->rw, i, k;

	for (i = k = 0; i < m->n_ent; i++) {
		if (kg_trainer_frozen(tr->frozen_ent, m->ent[i]))
			continue;
		dt->x_ent[k] = m->ent[i];
		memmove(dt->x_ent_g + k * d, m->ent_g + i * d, d * sizeof(float));
		k++;
	}
	m->n_ent = k;
	m->ent = dt->x_ent;
	m->ent_g = dt->x_ent_g;
	for (i = k = 0; i < m->n_rel; i++) {
		if (kg_trainer_frozen(tr->frozen_rel, m->rel[i]))
			continue;
		dt->x_rel[k] = m->rel[i];
		memmove(dt->x_rel_g + k * rw, m->rel_g + i * rw,
		    rw * sizeof(float));
		k++;
	}
	m->n_rel = k;
	m->rel = dt->x_rel;
	m->rel_g = dt->x_rel_g;
}

/*
 * Data-parallel: the chunk's nu distinct entity rows and nr relation rows
 * (their sums in dv.ug and dv.ugr, their IDs in the host's index batch)
 * downloaded, summed over every share by the trainer's merge hook (MPI on
 * the host: kg_dist_sparse_sum and the relation all-reduce of
 * lib/dist/ssgd.c), uploaded back over them and applied, with the
 * learning rates the CPU's kg_trainer_apply takes.  0 or -1.
 */
static int
exchange(struct kg_dev_trainer *dt, size_t nu, size_t nr)
{
	struct kg_trainer *tr = dt->tr;
	struct kg_backend *be = dt->be;
	struct dev_bufs *v = &dt->dv;
	const struct kg_train_opts *o = &tr->o;
	size_t d = dt->d, rw = dt->rw, fs = sizeof(float), i;
	int64_t *ue = dt->hidx + I_UENT(dt), *ur = dt->hidx + I_UREL(dt);
	struct kg_row_grads g, m;

	if ((nu > 0 && kg_be_download(be, dt->x_ent_g, v->ug, nu * d * fs) <
	    0) || (nr > 0 && kg_be_download(be, dt->x_rel_g, v->ugr,
	    nr * rw * fs) < 0))
		return -1;
	for (i = 0; i < nu; i++)
		dt->x_ent[i] = (uint64_t)ue[i];
	for (i = 0; i < nr; i++)
		dt->x_rel[i] = (uint32_t)ur[i];
	g.n_ent = nu;
	g.ent = dt->x_ent;
	g.ent_g = dt->x_ent_g;
	g.n_rel = nr;
	g.rel = dt->x_rel;
	g.rel_g = dt->x_rel_g;
	if (tr->merge(tr->sync_ctx, tr, &g, &m) < 0)
		return -1;
	if (m.n_ent > dt->M || m.n_rel > dt->B) {
		kg_error("a chunk's merged gradients have %zu entity and %zu "
		    "relation rows, more than the device holds (%zu, %zu)",
		    m.n_ent, m.n_rel, dt->M, dt->B);
		return -1;
	}
	if (dt->eperm != NULL)
		drop_frozen(dt, &m);
	for (i = 0; i < m.n_ent; i++)
		ue[i] = (int64_t)m.ent[i];
	for (i = 0; i < m.n_rel; i++)
		ur[i] = (int64_t)m.rel[i];
	return (m.n_ent > 0 && (kg_be_upload(be, v->idx + I_UENT(dt), ue,
	    m.n_ent * sizeof(int64_t)) < 0 ||
	    kg_be_upload(be, v->ug, m.ent_g, m.n_ent * d * fs) < 0 ||
	    kg_dev_optim(be, o->ent_optim, m.n_ent, d, kg_train_lr(tr, 0,
	    o->lr), v->idx + I_UENT(dt), v->ug, v->W, v->Ws) < 0)) ||
	    (m.n_rel > 0 && (kg_be_upload(be, v->idx + I_UREL(dt), ur,
	    m.n_rel * sizeof(int64_t)) < 0 ||
	    kg_be_upload(be, v->ugr, m.rel_g, m.n_rel * rw * fs) < 0 ||
	    kg_dev_optim(be, o->rel_optim, m.n_rel, rw, kg_train_lr(tr, 0,
	    rel_lr(o)), v->idx + I_UREL(dt), v->ugr, v->R, v->Rs) < 0)) ?
	    -1 : 0;
}

/*
 * Plan chunk ch (number c of its bucket, positives tri) into the next of
 * the two host index batches, once the device has copied what that one
 * held two chunks ago, and queue its copy on the compute stream: the
 * host does not wait for the chunks before it.  0 or -1.
 */
static int
upload_batch(struct kg_dev_trainer *dt, const struct kg_chunk *ch,
    uint64_t c, const int32_t *tri)
{
	struct kg_backend *be = dt->be;

	dt->cur ^= 1;
	if (kg_be_event_wait(be, dt->cur) < 0)
		return -1;
	dt->hidx = dt->hbuf[dt->cur];
	kg_plan_bucket(&dt->plan, dt->tr, dt->ph, dt->pt, 0);
	kg_plan_chunk(&dt->plan, dt->tr, ch, c, tri, NULL);
	index_batch(dt);
	return kg_be_upload_ordered(be, dt->dv.idx, dt->hidx, dt->n_idx *
	    sizeof(int64_t)) < 0 || kg_be_event_record(be, dt->cur) < 0 ?
	    -1 : 0;
}

/* The chunk's rows, one launch: me entity rows from the table, the
 * pool's rows after them, the len relation rows. */
static int
gather_rows(struct kg_dev_trainer *dt, size_t len, size_t me)
{
	struct dev_bufs *v = &dt->dv;
	const int64_t *ix = v->idx;
	size_t d = dt->d;
	struct kg_dev_rowsets rs = {
		{ v->W, dt->pool.rows, v->R },
		{ ix + I_ENT(dt), ix + I_PSLOT(dt), ix + I_REL(dt) },
		{ v->rows, v->rows + me * d, v->rel },
		{ me, dt->plan.n_pool, len }, { d, d, dt->rw }, 3
	};

	return kg_be_gather_sets(dt->be, &rs);
}

/* Each distinct row's summed gradient, one launch: the me entity rows'
 * into ug, the len relation rows' into ugr. */
static int
sum_rows(struct kg_dev_trainer *dt, size_t len, size_t me)
{
	struct dev_bufs *v = &dt->dv;
	const int64_t *ix = v->idx;
	struct kg_dev_rowsets rs = {
		{ v->grows, v->grel, NULL },
		{ ix + I_ESLOT(dt), ix + I_RSLOT(dt), NULL },
		{ v->ug, v->ugr, NULL }, { me, len, 0 }, { dt->d, dt->rw, 0 },
		2
	};

	return kg_be_scatter_add_sets(dt->be, &rs);
}

/* The regulariser of the chunk's fixed rows, relation rows and true
 * candidates (in that order, into the loss sum), in one launch. */
static int
regularise(struct kg_dev_trainer *dt, size_t len, float inv)
{
	const struct kg_train_opts *o = &dt->tr->o;
	struct dev_bufs *v = &dt->dv;
	size_t d = dt->d;
	struct kg_dev_regsets rs = {
		{ v->rows, v->rel, v->rows + len * d },
		{ v->grows, v->grel, v->grows + len * d },
		{ len * d, len * dt->rw, len * d }, 3
	};

	return kg_be_regularise_sets(dt->be, &rs, o->reg_coef, o->reg_norm,
	    inv, v->lsum);
}

static int dev_step(struct kg_dev_trainer *dt, const int32_t *tri,
    size_t len, size_t whole, int side, uint64_t c, uint64_t start);

/* One chunk (train_device_impl.h): everything after the index upload
 * runs on the device. */
int
kg_dev_step(struct kg_dev_trainer *dt, const int32_t *tri, size_t len,
    int side, uint64_t c, uint64_t start)
{
	return dev_step(dt, tri, len, len, side, c, start);
}

/*
 * kg_dev_step on a share of len positives of a chunk of whole (the loss
 * and its gradients are means over whole); with the trainer's merge hook
 * the summed gradients go through exchange() before they are applied,
 * and an empty share (len 0) takes part in the exchange all the same.
 */
static int
dev_step(struct kg_dev_trainer *dt, const int32_t *tri, size_t len,
    size_t whole, int side, uint64_t c, uint64_t start)
{
	struct kg_trainer *tr = dt->tr;
	struct kg_backend *be = dt->be;
	struct dev_bufs *v = &dt->dv;
	const struct kg_train_opts *o = &tr->o;
	size_t d = dt->d, rw = dt->rw, N = dt->N, m = 2 * len + N, nu, nr, me;
	const int64_t *ix = v->idx;
	float *fixed = v->rows, *posc = v->rows + len * d;
	float *negc = v->rows + 2 * len * d, *gfixed = v->grows;
	float *gposc = v->grows + len * d, *gneg = v->grows + 2 * len * d;
	float inv = (float)(1.0 / (double)whole);
	float lr = kg_train_lr(tr, start, o->lr), rlr;
	struct kg_chunk ch;

	rlr = kg_train_lr(tr, start, rel_lr(o));
	if (len == 0)		/* an empty share still takes part */
		return tr->merge != NULL ? exchange(dt, 0, 0) : 0;
	ch.start = start;
	ch.len = (uint32_t)len;
	ch.side = (uint8_t)side;
	ch.type = -1;
	ch.whole = (uint32_t)whole;
	if (upload_batch(dt, &ch, c, tri) < 0)
		return -1;
	nu = dt->plan.n_ent;
	nr = dt->plan.n_rel;
	/* Forward: rows (the pool's last), queries, scores, the loss (its
	 * sum and the 1 / whole of the mean in the same launch). */
	me = m - dt->plan.n_pool;
	if (gather_rows(dt, len, me) < 0 ||
	    (dt->transr ? transr_forward(dt, len, side) :
	    query_forward(dt, len, side)) < 0 ||
	    kg_be_loss_sum(be, &o->loss, len, N, v->pos, v->S, NULL, inv,
	    v->gpos, v->G, v->lrow, v->lsum) < 0 ||
	    kg_be_zero(be, v->gall, (size_t)(v->ugr + nr * rw - v->gall) *
	    sizeof(float)) < 0)
		return -1;
	if (o->reg_coef > 0.0 && regularise(dt, len, inv) < 0)
		return -1;
	/* Backward: the negatives, then the positives, each through Q. */
	if (dt->transr) {
		if (transr_backward(dt, len, side) < 0)
			return -1;
	} else if (kg_be_chunk_backward(be, dt->sim, len, N, d, v->q, negc,
	    v->G, v->dist, v->gq, gneg, v->work) < 0 ||
	    kg_be_query_backward(be, dt->form, side, len, d, fixed, v->rel,
	    v->gq, gfixed, v->grel) < 0 ||
	    kg_be_pairs_backward(be, dt->sim, len, d, v->q, posc, v->gpos,
	    v->pdist, v->gq, gposc) < 0 ||
	    kg_be_query_backward(be, dt->form, side, len, d, fixed, v->rel,
	    v->gq, gfixed, v->grel) < 0)
		return -1;
	/* The pool negatives' gradients and squares wait in their bank;
	 * each distinct row's sum, then one optimiser step per row. */
	if (dt->plan.n_pool > 0 && pool_grads(dt, me) < 0)
		return -1;
	if (sum_rows(dt, len, me) < 0)
		return -1;
	if (tr->merge != NULL)
		return exchange(dt, nu, nr);
	return (dt->nu_train > 0 && kg_dev_optim(be, o->ent_optim,
	    dt->nu_train, d, lr, ix + I_UENT(dt), v->ug, v->W, v->Ws) < 0) ||
	    (dt->nr_train > 0 && kg_dev_optim(be, o->rel_optim, dt->nr_train,
	    rw, rlr, ix + I_UREL(dt), v->ugr, v->R, v->Rs) < 0) ? -1 : 0;
}

int
kg_dev_trainer_epoch(struct kg_dev_trainer *dt, const int32_t *hrt,
    uint64_t n, uint64_t *trained)
{
	struct kg_trainer *tr = dt->tr;
	uint64_t bs = tr->o.batch_size, np, done = 0, max_batches = 0;
	struct kg_chunk *chunks;
	uint64_t *order;
	double loss = 0.0;
	int32_t *buf;
	size_t nch, c;
	int rc = 0;

	*trained = 0;
	if (tr->o.max_step > 0) {
		if (tr->step >= tr->o.max_step)
			return 0;
		max_batches = tr->o.max_step - tr->step;
	}
	buf = kg_train_epoch_positives(tr, hrt, n, &np);
	nch = kg_plan_chunks(tr, buf, np, max_batches, 0, &chunks, &order);
	if (kg_be_zero(dt->be, dt->dv.lsum, sizeof(double)) < 0)
		rc = -1;
	/* The plain chunks keep the epoch's order: a chunk's positives
	 * (this rank's share of them) lie at buf + 3 start. */
	for (c = 0; rc == 0 && c < nch; c++) {
		const struct kg_chunk *ch = &chunks[c];

		rc = dev_step(dt, buf + 3 * ch->start, ch->len, ch->whole,
		    ch->side, c, ch->start);
		done += ch->whole;
	}
	free(chunks);
	free(order);
	free(buf);
	if (rc == 0 && kg_be_download(dt->be, &loss, dt->dv.lsum,
	    sizeof(loss)) < 0)
		rc = -1;
	if (rc < 0)
		return -1;
	if (!isfinite(loss)) {
		kg_error("the loss is no longer finite in epoch %u; try a "
		    "smaller --lr or a regulariser", tr->epoch + 1);
		return -1;
	}
	*trained = done;
	tr->step += (done + bs - 1) / bs;
	tr->epoch++;
	tr->last_loss = done ? loss / (double)done : 0.0;
	return 0;
}
