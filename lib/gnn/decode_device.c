/* gnn/decode_device: the per-positive decoder as backend calls
 * (decode_device.h). */
#include <string.h>

#include "gnn/decode_device.h"
#include "gnn/layers_device.h"
#include "core/util.h"

int
kg_gnn_ddecode_check(const struct kg_model *m)
{
	if (m->kind != KG_MODEL_DISTMULT) {
		kg_error("the device decodes GNN outputs with DistMult only, "
		    "not %s", kg_model_name(m->kind));
		return -1;
	}
	return 0;
}

static int
grow_f(struct kg_backend *be, float **p, uint64_t need)
{
	void *q = *p;
	uint64_t c = 0;
	int rc = kg_gnn_dgrow(be, &q, &c, need, sizeof(float));

	*p = q;
	return rc;
}

/* Buffers for nt triples of nb positives. */
static int
reserve(struct kg_backend *be, const struct kg_model *m, uint64_t nt,
    uint64_t nb, struct kg_gnn_ddecode *dd)
{
	size_t d = m->dim, rw = m->rel_width;
	void *q;

	if (nt > dd->cap_t || dd->idx == NULL) {
		uint64_t c = 0;

		q = dd->idx;
		if (kg_gnn_dgrow(be, &q, &c, 3 * nt, sizeof(int64_t)) < 0)
			return -1;
		dd->idx = q;
		if (grow_f(be, &dd->fixed, nt * d) < 0 ||
		    grow_f(be, &dd->cand, nt * d) < 0 ||
		    grow_f(be, &dd->q, nt * d) < 0 ||
		    grow_f(be, &dd->gq, nt * d) < 0 ||
		    grow_f(be, &dd->gfixed, nt * d) < 0 ||
		    grow_f(be, &dd->gcand, nt * d) < 0 ||
		    grow_f(be, &dd->rel, nt * rw) < 0 ||
		    grow_f(be, &dd->grel, nt * rw) < 0 ||
		    grow_f(be, &dd->score, nt) < 0 ||
		    grow_f(be, &dd->gscore, nt) < 0)
			return -1;
		if (dd->hidx != NULL)
			kg_be_host_free(be, dd->hidx);
		dd->cap_hidx = 0;
		if ((dd->hidx = kg_be_host_alloc(be, c * sizeof(int64_t))) ==
		    NULL)
			return -1;
		dd->cap_hidx = c;
		dd->cap_t = nt;
	}
	if (nb > dd->cap_nb || dd->loss == NULL) {
		q = dd->loss;
		if (kg_gnn_dgrow(be, &q, &dd->cap_nb, nb, sizeof(double)) < 0)
			return -1;
		dd->loss = q;
	}
	return 0;
}

int
kg_gnn_ddecode(struct kg_backend *be, const struct kg_model *m,
    const struct kg_loss *l, const float *h, const float *rel,
    const int32_t *pos, size_t nb, const int32_t *negs, size_t neg,
    float scale, float *gh, float *grel, double *lsum,
    struct kg_gnn_ddecode *dd)
{
	size_t d = m->dim, rw = m->rel_width, nt = nb * (1 + neg), k;
	const int64_t *hd, *rl, *tl;

	if (kg_gnn_ddecode_check(m) < 0 || reserve(be, m, nt, nb, dd) < 0)
		return -1;
	/* The positives first, then every negative: the scores line up as
	 * kg_be_loss reads them. */
	for (k = 0; k < nt; k++) {
		const int32_t *t = k < nb ? pos + 3 * k : negs + 3 * (k - nb);

		dd->hidx[k] = t[0];
		dd->hidx[nt + k] = t[1];
		dd->hidx[2 * nt + k] = t[2];
	}
	hd = dd->idx;
	rl = dd->idx + nt;
	tl = dd->idx + 2 * nt;
	if (kg_be_upload(be, dd->idx, dd->hidx, 3 * nt * sizeof(int64_t)) < 0 ||
	    kg_be_gather(be, nt, d, h, hd, dd->fixed) < 0 ||
	    kg_be_gather(be, nt, rw, rel, rl, dd->rel) < 0 ||
	    kg_be_gather(be, nt, d, h, tl, dd->cand) < 0 ||
	    kg_be_query(be, KG_QFORM_MUL, 0, nt, d, dd->fixed, dd->rel,
	    dd->q) < 0 ||
	    kg_be_pairs(be, KG_KERN_DOT, nt, d, 0.0f, dd->q, dd->cand,
	    dd->score, NULL) < 0 ||
	    kg_be_loss(be, l, nb, neg, dd->score, dd->score + nb, NULL,
	    dd->gscore, dd->gscore + nb, dd->loss) < 0 ||
	    kg_be_dsum(be, nb, dd->loss, lsum) < 0 ||
	    kg_be_scale(be, nt, scale, dd->gscore) < 0 ||
	    kg_be_zero(be, dd->gfixed, nt * d * sizeof(float)) < 0 ||
	    kg_be_zero(be, dd->gcand, nt * d * sizeof(float)) < 0 ||
	    kg_be_zero(be, dd->grel, nt * rw * sizeof(float)) < 0 ||
	    kg_be_pairs_backward(be, KG_KERN_DOT, nt, d, dd->q, dd->cand,
	    dd->gscore, NULL, dd->gq, dd->gcand) < 0 ||
	    kg_be_query_backward(be, KG_QFORM_MUL, 0, nt, d, dd->fixed,
	    dd->rel, dd->gq, dd->gfixed, dd->grel) < 0 ||
	    kg_be_scatter_add(be, nt, d, dd->gfixed, hd, gh) < 0 ||
	    kg_be_scatter_add(be, nt, d, dd->gcand, tl, gh) < 0 ||
	    kg_be_scatter_add(be, nt, rw, dd->grel, rl, grel) < 0)
		return -1;
	return 0;
}

void
kg_gnn_ddecode_release(struct kg_backend *be, struct kg_gnn_ddecode *dd)
{
	float **f[] = { &dd->fixed, &dd->rel, &dd->cand, &dd->q, &dd->score,
		&dd->gscore, &dd->gq, &dd->gfixed, &dd->grel, &dd->gcand };
	size_t i;

	for (i = 0; i < KG_ARRAY_LEN(f); i++)
		kg_be_free(be, *f[i]);
	kg_be_free(be, dd->idx);
	kg_be_free(be, dd->loss);
	if (dd->hidx != NULL)
		kg_be_host_free(be, dd->hidx);
	memset(dd, 0, sizeof(*dd));
}
