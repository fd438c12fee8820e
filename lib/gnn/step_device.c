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
	ds->dl = enc->c.dims[enc->c.n_layers];
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
	return kg_be_upload(ds->be, ds->dw, enc->w, ds->n_params *
	    sizeof(float)) < 0 || kg_be_upload(ds->be, ds->drel, rel,
	    ds->n_rel_f * sizeof(float)) < 0 ? -1 : 0;
}

int
kg_gnn_dstep_grad(struct kg_gnn_dstep *ds, const struct kg_gnn *enc,
    const struct kg_model *dec, const struct kg_loss *l,
    const struct kg_gnn_graph *g, const uint64_t *n_dst, const int32_t *lrow,
    struct kg_rng *rng, const int32_t *pos, size_t nb, const int32_t *negs,
    size_t neg, float scale, double *loss)
{
	struct kg_backend *be = ds->be;
	uint64_t n;
	void *q;

	if (kg_gnn_dforward(be, enc, ds->dw, g, n_dst, lrow, rng, &ds->st,
	    &ds->pass) < 0)
		return -1;
	n = ds->pass.rows[enc->c.n_layers];
	q = ds->dgh;
	if (kg_gnn_dgrow(be, &q, &ds->cap_gh, n * ds->dl, sizeof(float)) < 0)
		return -1;
	ds->dgh = q;
	if (kg_be_zero(be, ds->dgh, n * ds->dl * sizeof(float)) < 0 ||
	    kg_be_zero(be, ds->dgrad, (ds->n_params + ds->n_rel_f) *
	    sizeof(float)) < 0 ||
	    kg_be_zero(be, ds->dloss, sizeof(double)) < 0 ||
	    kg_gnn_ddecode(be, dec, l, kg_gnn_dpass_output(&ds->pass),
	    ds->drel, pos, nb, negs, neg, scale, ds->dgh,
	    ds->dgrad + ds->n_params, ds->dloss, &ds->dec) < 0 ||
	    kg_gnn_dbackward(be, enc, ds->dw, &ds->pass, ds->dgh,
	    ds->dgrad) < 0)
		return -1;
	return kg_be_download(be, loss, ds->dloss, sizeof(double));
}

int
kg_gnn_dstep_download_grad(struct kg_gnn_dstep *ds, float *grad)
{
	return kg_be_download(ds->be, grad, ds->dgrad, (ds->n_params +
	    ds->n_rel_f) * sizeof(float));
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
	kg_gnn_state_release(&ds->st);
	kg_gnn_dpass_release(be, &ds->pass);
	kg_gnn_ddecode_release(be, &ds->dec);
	memset(ds, 0, sizeof(*ds));
}
