/* gnn/step_device: one batch's gradient on a backend (step_device.h). */
#include <string.h>

#include "gnn/step_device.h"

int
kg_gnn_dstep_open(struct kg_gnn_dstep *ds, struct kg_backend *be,
    const struct kg_gnn *enc, const struct kg_model *dec, const float *rel,
    size_t n_rel_f)
{
	memset(ds, 0, sizeof(*ds));
	ds->be = be;
	if (kg_gnn_device_check(enc) < 0 || kg_gnn_ddecode_check(dec) < 0)
		return -1;
	ds->n_params = enc->n_params;
	ds->n_rel_f = n_rel_f;
	ds->d0 = enc->c.dims[0];
	ds->dl = enc->c.dims[enc->c.n_layers];
	ds->tab_lo = enc->learned;
	ds->tab_hi = enc->learned + enc->c.n_learned * ds->d0;
	if ((ds->dw = kg_be_alloc(be, ds->n_params * sizeof(float))) == NULL ||
	    (ds->drel = kg_be_alloc(be, n_rel_f * sizeof(float))) == NULL ||
	    (ds->dgrad = kg_be_alloc(be, (ds->n_params + n_rel_f) *
	    sizeof(float))) == NULL ||
	    (ds->dloss = kg_be_alloc(be, sizeof(double))) == NULL)
		return -1;
	return kg_gnn_dstep_upload(ds, enc, rel);
}

int
kg_gnn_dstep_upload(struct kg_gnn_dstep *ds, const struct kg_gnn *enc,
    const float *rel)
{
	struct kg_backend *be = ds->be;
	size_t hi = ds->tab_hi;

	return kg_be_upload(be, ds->dw, enc->w, ds->tab_lo * sizeof(float)) <
	    0 || kg_be_upload(be, ds->dw + hi, enc->w + hi, (ds->n_params -
	    hi) * sizeof(float)) < 0 || kg_be_upload(be, ds->drel, rel,
	    ds->n_rel_f * sizeof(float)) < 0 ? -1 : 0;
}

/* The learned rows of the n input nodes into the host staging. */
static int
input_rows(struct kg_gnn_dstep *ds, const struct kg_gnn *enc, uint64_t n,
    const int32_t *lrow)
{
	uint64_t i;

	if (n * ds->d0 + 1 > ds->cap_h0) {
		if (ds->h0 != NULL)
			kg_be_host_free(ds->be, ds->h0);
		ds->cap_h0 = 0;
		if ((ds->h0 = kg_be_host_alloc(ds->be, (n * ds->d0 + 1) *
		    sizeof(float))) == NULL)
			return -1;
		ds->cap_h0 = n * ds->d0 + 1;
	}
	for (i = 0; i < n; i++)
		memcpy(ds->h0 + i * ds->d0, kg_gnn_learned_rows(enc) +
		    (size_t)(lrow != NULL ? (uint64_t)lrow[i] : i) * ds->d0,
		    ds->d0 * sizeof(float));
	return 0;
}

/* The gradients into grad: the dense ones and the relations' copied,
 * the input rows' added to their learned rows. */
static int
fetch_grad(struct kg_gnn_dstep *ds, const struct kg_gnn *enc, uint64_t n,
    const int32_t *lrow, float *grad)
{
	struct kg_backend *be = ds->be;
	size_t hi = ds->tab_hi, d0 = ds->d0, k;
	uint64_t i;

	if (kg_be_download(be, grad, ds->dgrad, ds->tab_lo * sizeof(float)) <
	    0 || kg_be_download(be, grad + hi, ds->dgrad + hi, (ds->n_params +
	    ds->n_rel_f - hi) * sizeof(float)) < 0 ||
	    kg_be_download(be, ds->h0, ds->pass.gin, n * d0 *
	    sizeof(float)) < 0)
		return -1;
	for (i = 0; i < n; i++) {
		float *row = grad + enc->learned + (size_t)(lrow != NULL ?
		    (uint64_t)lrow[i] : i) * d0;

		for (k = 0; k < d0; k++)
			row[k] += ds->h0[i * d0 + k];
	}
	return 0;
}

/* The decoder and the backward pass after the forward pass: dgrad and
 * the input rows' gradient (ds->pass.gin) on the device, *dloss the
 * summed loss (not read back). */
static int
grad_pass(struct kg_gnn_dstep *ds, const struct kg_gnn *enc,
    const struct kg_model *dec, const struct kg_loss *l, const int32_t *pos,
    size_t nb, const int32_t *negs, size_t neg, float scale)
{
	struct kg_backend *be = ds->be;
	size_t hi = ds->tab_hi;
	uint64_t n = ds->pass.rows[enc->c.n_layers];
	void *q = ds->dgh;

	if (kg_gnn_dgrow(be, &q, &ds->cap_gh, n * ds->dl, sizeof(float)) < 0)
		return -1;
	ds->dgh = q;
	/* The learned table's part of dgrad is never written. */
	return kg_be_zero(be, ds->dgh, n * ds->dl * sizeof(float)) < 0 ||
	    kg_be_zero(be, ds->dgrad, ds->tab_lo * sizeof(float)) < 0 ||
	    kg_be_zero(be, ds->dgrad + hi, (ds->n_params + ds->n_rel_f - hi) *
	    sizeof(float)) < 0 ||
	    kg_be_zero(be, ds->dloss, sizeof(double)) < 0 ||
	    kg_gnn_ddecode(be, dec, l, kg_gnn_dpass_output(&ds->pass),
	    ds->drel, pos, nb, negs, neg, scale, ds->dgh,
	    ds->dgrad + ds->n_params, ds->dloss, &ds->dec) < 0 ||
	    kg_gnn_dbackward(be, enc, ds->dw, &ds->pass, ds->dgh,
	    ds->dgrad) < 0 ? -1 : 0;
}

int
kg_gnn_dstep_grad(struct kg_gnn_dstep *ds, const struct kg_gnn *enc,
    const struct kg_model *dec, const struct kg_loss *l,
    const struct kg_gnn_graph *g, const uint64_t *n_dst, const int32_t *lrow,
    struct kg_rng *rng, const int32_t *pos, size_t nb, const int32_t *negs,
    size_t neg, float scale, float *grad, double *loss)
{
	struct kg_backend *be = ds->be;

	if (input_rows(ds, enc, g->n_nodes, lrow) < 0 ||
	    kg_gnn_dforward(be, enc, ds->dw, g, n_dst, ds->h0, rng, &ds->st,
	    &ds->pass) < 0 ||
	    grad_pass(ds, enc, dec, l, pos, nb, negs, neg, scale) < 0 ||
	    kg_be_download(be, loss, ds->dloss, sizeof(double)) < 0)
		return -1;
	return fetch_grad(ds, enc, g->n_nodes, lrow, grad);
}

/* ---- the state on the device ---- */

/* The encoder floats after the learned table. */
static size_t
n_dense(const struct kg_gnn_dstep *ds)
{
	return ds->n_params - ds->tab_hi;
}

static size_t
n_table_rows(const struct kg_gnn_dstep *ds)
{
	return (ds->tab_hi - ds->tab_lo) / (ds->d0 ? ds->d0 : 1);
}

int
kg_gnn_dstep_push(struct kg_gnn_dstep *ds, const struct kg_gnn *enc,
    const float *rel, const float *st_enc, const float *st_rel,
    const float *st_learn)
{
	struct kg_backend *be = ds->be;
	size_t nd = n_dense(ds), nt = n_table_rows(ds);

	if (ds->tab_lo != 0) {
		kg_error("the device's GNN training state wants the learned "
		    "table first in the parameters, not at float %zu",
		    ds->tab_lo);
		return -1;
	}
	if (ds->dst_enc == NULL && ((ds->dst_enc = kg_be_alloc(be, (2 * nd +
	    1) * sizeof(float))) == NULL || (ds->dst_rel = kg_be_alloc(be,
	    (2 * ds->n_rel_f + 1) * sizeof(float))) == NULL ||
	    (ds->dst_learn = kg_be_alloc(be, nt * (2 * ds->d0 + 1) *
	    sizeof(float) + 1)) == NULL || (ds->dreg = kg_be_alloc(be,
	    sizeof(double))) == NULL))
		return -1;
	return kg_gnn_dstep_upload(ds, enc, rel) < 0 ||
	    kg_be_upload(be, ds->dw, kg_gnn_learned_rows(enc), ds->tab_hi *
	    sizeof(float)) < 0 ||
	    kg_be_upload(be, ds->dst_enc, st_enc, (2 * nd + 1) *
	    sizeof(float)) < 0 ||
	    kg_be_upload(be, ds->dst_rel, st_rel, (2 * ds->n_rel_f + 1) *
	    sizeof(float)) < 0 ||
	    kg_be_upload(be, ds->dst_learn, st_learn, nt * (2 * ds->d0 + 1) *
	    sizeof(float)) < 0 ? -1 : 0;
}

int
kg_gnn_dstep_pull(struct kg_gnn_dstep *ds, struct kg_gnn *enc, float *rel,
    float *st_enc, float *st_rel, float *st_learn)
{
	struct kg_backend *be = ds->be;
	size_t nd = n_dense(ds), nt = n_table_rows(ds), hi = ds->tab_hi;

	return kg_be_download(be, kg_gnn_learned_rows(enc), ds->dw, hi *
	    sizeof(float)) < 0 ||
	    kg_be_download(be, enc->w + hi, ds->dw + hi, nd *
	    sizeof(float)) < 0 ||
	    kg_be_download(be, rel, ds->drel, ds->n_rel_f * sizeof(float)) <
	    0 || kg_be_download(be, st_enc, ds->dst_enc, (2 * nd + 1) *
	    sizeof(float)) < 0 ||
	    kg_be_download(be, st_rel, ds->dst_rel, (2 * ds->n_rel_f + 1) *
	    sizeof(float)) < 0 ||
	    kg_be_download(be, st_learn, ds->dst_learn, nt * (2 * ds->d0 +
	    1) * sizeof(float)) < 0 ? -1 : 0;
}

/* The n input nodes' learned row numbers onto the device. */
static int
row_index(struct kg_gnn_dstep *ds, uint64_t n, const int32_t *lrow)
{
	struct kg_backend *be = ds->be;
	void *q = ds->dlrow;
	uint64_t i;

	if (n + 1 > ds->cap_hlrow) {
		if (ds->hlrow != NULL)
			kg_be_host_free(be, ds->hlrow);
		ds->cap_hlrow = 0;
		if ((ds->hlrow = kg_be_host_alloc(be, (n + 1) *
		    sizeof(int64_t))) == NULL)
			return -1;
		ds->cap_hlrow = n + 1;
	}
	if (kg_gnn_dgrow(be, &q, &ds->cap_lrow, n + 1, sizeof(int64_t)) < 0)
		return -1;
	ds->dlrow = q;
	for (i = 0; i < n; i++)
		ds->hlrow[i] = lrow != NULL ? (int64_t)lrow[i] : (int64_t)i;
	return kg_be_upload(be, ds->dlrow, ds->hlrow, n * sizeof(int64_t));
}

void
kg_gnn_dstep_freeze(struct kg_gnn_dstep *ds, const uint8_t *rows,
    const size_t *dense, size_t n_dense, const size_t *rel, size_t n_rel)
{
	ds->fz_rows = rows;
	ds->fz_dense = dense;
	ds->n_fz_dense = n_dense;
	ds->fz_rel = rel;
	ds->n_fz_rel = n_rel;
}

/* With frozen rows: the positions among the n input nodes (hlrow) of
 * the rows that train, then those rows, onto the device (ds->dfz,
 * ds->n_train of each). */
static int
train_rows(struct kg_gnn_dstep *ds, uint64_t n)
{
	struct kg_backend *be = ds->be;
	void *q = ds->dfz;
	uint64_t i, k = 0;

	if (2 * n + 1 > ds->cap_hfz) {
		if (ds->hfz != NULL)
			kg_be_host_free(be, ds->hfz);
		ds->cap_hfz = 0;
		if ((ds->hfz = kg_be_host_alloc(be, (2 * n + 1) *
		    sizeof(int64_t))) == NULL)
			return -1;
		ds->cap_hfz = 2 * n + 1;
	}
	if (kg_gnn_dgrow(be, &q, &ds->cap_dfz, 2 * n + 1,
	    sizeof(int64_t)) < 0)
		return -1;
	ds->dfz = q;
	for (i = 0; i < n; i++)
		if (!ds->fz_rows[ds->hlrow[i]])
			ds->hfz[k++] = (int64_t)i;
	for (i = 0; i < k; i++)
		ds->hfz[k + i] = ds->hlrow[ds->hfz[i]];
	ds->n_train = k;
	return kg_be_upload(be, ds->dfz, ds->hfz, 2 * k * sizeof(int64_t));
}

/* Zero the gradients of the n frozen ranges r (pairs of floats) of g. */
static int
zero_ranges(struct kg_backend *be, float *g, const size_t *r, size_t n)
{
	size_t k;

	for (k = 0; k < n; k++)
		if (kg_be_zero(be, g + r[2 * k], r[2 * k + 1] *
		    sizeof(float)) < 0)
			return -1;
	return 0;
}

/* The n learned rows' Adam step, but for the frozen ones (gathered
 * first: the rows that train and their gradients). */
static int
learned_adam(struct kg_gnn_dstep *ds, uint64_t n, const struct kg_adam *a,
    const float *gin)
{
	struct kg_backend *be = ds->be;
	void *q = ds->dgin_t;
	size_t d0 = ds->d0;

	if (ds->fz_rows == NULL)
		return kg_be_adam(be, n, d0, a, ds->dlrow, gin, ds->dw,
		    ds->dst_learn);
	if (train_rows(ds, n) < 0 || kg_gnn_dgrow(be, &q, &ds->cap_gin_t,
	    n * d0 + 1, sizeof(float)) < 0)
		return -1;
	ds->dgin_t = q;
	if (ds->n_train == 0)
		return 0;
	return kg_be_gather(be, ds->n_train, d0, gin, ds->dfz, ds->dgin_t) <
	    0 || kg_be_adam(be, ds->n_train, d0, a, ds->dfz + ds->n_train,
	    ds->dgin_t, ds->dw, ds->dst_learn) < 0 ? -1 : 0;
}

/* step.c's update on one rank: the regulariser's gradients, then Adam on
 * the dense parameters, the relations and the n learned rows, frozen
 * parameters masked (kg_gnn_dstep_freeze). */
static int
update(struct kg_gnn_dstep *ds, uint64_t n, const struct kg_adam *a,
    double reg)
{
	struct kg_backend *be = ds->be;
	size_t hi = ds->tab_hi, nd = n_dense(ds), d0 = ds->d0;
	float *grel = ds->dgrad + ds->n_params, *gin = ds->pass.gin;

	if (reg > 0.0) {
		void *q = ds->dreg_rows;

		if (kg_gnn_dgrow(be, &q, &ds->cap_reg_rows, n * d0 + 1,
		    sizeof(float)) < 0)
			return -1;
		ds->dreg_rows = q;
		if (kg_be_regularise(be, nd, ds->dw + hi, ds->dgrad + hi, reg,
		    2, 1.0, ds->dreg) < 0 ||
		    kg_be_regularise(be, ds->n_rel_f, ds->drel, grel, reg, 2,
		    1.0, ds->dreg) < 0 ||
		    kg_be_gather(be, n, d0, ds->dw, ds->dlrow,
		    ds->dreg_rows) < 0 ||
		    kg_be_regularise(be, n * d0, ds->dreg_rows, gin, reg, 2, 1.0,
		    ds->dreg) < 0)
			return -1;
	}
	return zero_ranges(be, ds->dgrad + hi, ds->fz_dense,
	    ds->n_fz_dense) < 0 ||
	    zero_ranges(be, grel, ds->fz_rel, ds->n_fz_rel) < 0 ||
	    kg_be_adam_flat(be, nd, a, ds->dgrad + hi, ds->dw + hi,
	    ds->dst_enc) < 0 ||
	    kg_be_adam_flat(be, ds->n_rel_f, a, grel, ds->drel,
	    ds->dst_rel) < 0 || learned_adam(ds, n, a, gin) < 0 ? -1 : 0;
}

int
kg_gnn_dstep_train_begin(struct kg_gnn_dstep *ds, const struct kg_gnn *enc,
    const struct kg_model *dec, const struct kg_loss *l,
    const struct kg_gnn_graph *g, const uint64_t *n_dst, const int32_t *lrow,
    struct kg_rng *rng, const int32_t *pos, size_t nb, const int32_t *negs,
    size_t neg, float scale, const struct kg_adam *a, double reg)
{
	if (ds->dst_enc == NULL) {
		kg_error("the GNN device step trains after its state was "
		    "pushed to the device only");
		return -1;
	}
	return row_index(ds, g->n_nodes, lrow) < 0 ||
	    kg_gnn_dforward_rows(ds->be, enc, ds->dw, g, n_dst, ds->dw,
	    ds->dlrow, rng, &ds->st, &ds->pass) < 0 ||
	    grad_pass(ds, enc, dec, l, pos, nb, negs, neg, scale) < 0 ||
	    update(ds, g->n_nodes, a, reg) < 0 ? -1 : 0;
}

int
kg_gnn_dstep_train_end(struct kg_gnn_dstep *ds, double *loss)
{
	return kg_be_download(ds->be, loss, ds->dloss, sizeof(double));
}

int
kg_gnn_dstep_train(struct kg_gnn_dstep *ds, const struct kg_gnn *enc,
    const struct kg_model *dec, const struct kg_loss *l,
    const struct kg_gnn_graph *g, const uint64_t *n_dst, const int32_t *lrow,
    struct kg_rng *rng, const int32_t *pos, size_t nb, const int32_t *negs,
    size_t neg, float scale, const struct kg_adam *a, double reg,
    double *loss)
{
	return kg_gnn_dstep_train_begin(ds, enc, dec, l, g, n_dst, lrow, rng,
	    pos, nb, negs, neg, scale, a, reg) < 0 ? -1 :
	    kg_gnn_dstep_train_end(ds, loss);
}

void
kg_gnn_dstep_release(struct kg_gnn_dstep *ds)
{
	struct kg_backend *be = ds->be;

	if (be == NULL)
		return;
	kg_be_free(be, ds->dw);
	kg_be_free(be, ds->drel);
	kg_be_free(be, ds->dgrad);
	kg_be_free(be, ds->dgh);
	kg_be_free(be, ds->dloss);
	kg_be_free(be, ds->dst_enc);
	kg_be_free(be, ds->dst_rel);
	kg_be_free(be, ds->dst_learn);
	kg_be_free(be, ds->dlrow);
	kg_be_free(be, ds->dreg_rows);
	kg_be_free(be, ds->dreg);
	kg_be_free(be, ds->dfz);
	kg_be_free(be, ds->dgin_t);
	kg_be_host_free(be, ds->hfz);
	kg_be_host_free(be, ds->hlrow);
	kg_be_host_free(be, ds->h0);
	kg_gnn_state_release(&ds->st);
	kg_gnn_dpass_release(be, &ds->pass);
	kg_gnn_ddecode_release(be, &ds->dec);
	memset(ds, 0, sizeof(*ds));
}
