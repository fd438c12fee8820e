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

int
kg_gnn_dstep_grad(struct kg_gnn_dstep *ds, const struct kg_gnn *enc,
    const struct kg_model *dec, const struct kg_loss *l,
    const struct kg_gnn_graph *g, const uint64_t *n_dst, const int32_t *lrow,
    struct kg_rng *rng, const int32_t *pos, size_t nb, const int32_t *negs,
    size_t neg, float scale, float *grad, double *loss)
{
	struct kg_backend *be = ds->be;
	size_t hi = ds->tab_hi;
	uint64_t n;
	void *q;

	if (input_rows(ds, enc, g->n_nodes, lrow) < 0 ||
	    kg_gnn_dforward(be, enc, ds->dw, g, n_dst, ds->h0, rng, &ds->st,
	    &ds->pass) < 0)
		return -1;
	n = ds->pass.rows[enc->c.n_layers];
	q = ds->dgh;
	if (kg_gnn_dgrow(be, &q, &ds->cap_gh, n * ds->dl, sizeof(float)) < 0)
		return -1;
	ds->dgh = q;
	/* The learned table's part of dgrad is never written. */
	if (kg_be_zero(be, ds->dgh, n * ds->dl * sizeof(float)) < 0 ||
	    kg_be_zero(be, ds->dgrad, ds->tab_lo * sizeof(float)) < 0 ||
	    kg_be_zero(be, ds->dgrad + hi, (ds->n_params + ds->n_rel_f - hi) *
	    sizeof(float)) < 0 ||
	    kg_be_zero(be, ds->dloss, sizeof(double)) < 0 ||
	    kg_gnn_ddecode(be, dec, l, kg_gnn_dpass_output(&ds->pass),
	    ds->drel, pos, nb, negs, neg, scale, ds->dgh,
	    ds->dgrad + ds->n_params, ds->dloss, &ds->dec) < 0 ||
	    kg_gnn_dbackward(be, enc, ds->dw, &ds->pass, ds->dgh,
	    ds->dgrad) < 0 ||
	    kg_be_download(be, loss, ds->dloss, sizeof(double)) < 0)
		return -1;
	return fetch_grad(ds, enc, g->n_nodes, lrow, grad);
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
	kg_be_host_free(be, ds->h0);
	kg_gnn_state_release(&ds->st);
	kg_gnn_dpass_release(be, &ds->pass);
	kg_gnn_ddecode_release(be, &ds->dec);
	memset(ds, 0, sizeof(*ds));
}
