/*
 * gnn/layers_attn_device: the relation-aware attention layer as backend
 * calls (layers_device.h), pass for pass as layers_attn.c.
 */
#include "gnn/layers_device.h"

/* The layer's graph and parameters as the attention passes read them. */
static struct kg_dev_attn
attn_view(const struct kg_gnn *m, uint32_t l, const float *dw,
    const struct kg_gnn_dgraph *dg, const float *z, float *u, float *al,
    const struct kg_gnn_dwork *wk)
{
	const struct kg_gnn_layer_off *o = &m->lay[l];
	struct kg_dev_attn A;

	A.off = dg->off;
	A.src = dg->src;
	A.type = dg->type;
	A.dst = dg->dst;
	A.soff = dg->soff;
	A.by_src = dg->by_src;
	A.toff = dg->toff;
	A.by_type = dg->by_type;
	A.n_dst = dg->n_dst;
	A.n_src = dg->n_src;
	A.n_types = dg->n_types;
	A.d = m->c.dims[l + 1];
	A.z = z;
	A.rel = dw + o->rel;
	A.as = dw + o->a_src;
	A.ad = dw + o->a_dst;
	A.ar = dw + o->a_rel;
	A.u = u;
	A.al = al;
	A.da = wk->dots;
	A.nsum = wk->coef;
	return A;
}

/* z = x W for the n_src sources (kg_gnn_src_products) into wk->a. */
static int
products(struct kg_backend *be, const struct kg_gnn *m, uint32_t l,
    const float *dw, const struct kg_gnn_dgraph *dg, const float *x,
    float *z)
{
	size_t din = m->c.dims[l], dout = m->c.dims[l + 1];

	return kg_be_sgemm(be, KG_NO_TRANS, KG_NO_TRANS, dg->n_src, dout, din,
	    1.0f, x, din, dw + m->lay[l].w, dout, 0.0f, z, dout);
}

int
kg_gnn_dattn_forward(struct kg_backend *be, const struct kg_gnn *m,
    uint32_t l, const float *dw, const struct kg_gnn_dgraph *dg,
    const float *x, float *out, struct kg_gnn_dwork *wk, float *u, float *al)
{
	struct kg_dev_attn A;

	if (kg_gnn_dwork_reserve(be, wk, m, l, dg) < 0 ||
	    kg_gnn_dself_forward(be, m, l, dw, dg->n_dst, x, out) < 0 ||
	    products(be, m, l, dw, dg, x, wk->a) < 0)
		return -1;
	A = attn_view(m, l, dw, dg, wk->a, u, al, wk);
	return kg_be_attn(be, KG_BE_ATTN_SCORES, &A, NULL, NULL) < 0 ||
	    kg_be_attn(be, KG_BE_ATTN_MSGS, &A, NULL, out) < 0 ? -1 : 0;
}

/* The attention vectors' gradients (attn_back_vectors): a_src's and
 * a_rel's over every message in order, a_dst's over the destinations. */
static int
back_vectors(struct kg_backend *be, const struct kg_gnn *m, uint32_t l,
    const float *dw, const struct kg_gnn_dgraph *dg, const float *z,
    struct kg_gnn_dwork *wk, float *dgrad)
{
	const struct kg_gnn_layer_off *o = &m->lay[l];
	size_t d = m->c.dims[l + 1];
	size_t pm = kg_gnn_split_parts(dg->n_msgs, 1);
	size_t pn = kg_gnn_split_parts(dg->n_dst, 1);
	struct kg_dev_seg s_as = { dg->all + 2, NULL, dg->src, wk->dots, 1,
		0, 0 };
	struct kg_dev_seg s_ar = { dg->all + 2, NULL, dg->type, wk->dots, 1,
		0, 0 };
	struct kg_dev_seg s_ad = { dg->all, NULL, NULL, wk->coef, 1, 0, 0 };

	return kg_be_seg_sum_split(be, 1, d, pm, &s_as, z, 1, dgrad + o->a_src,
	    d, wk->part) < 0 ||
	    kg_be_seg_sum_split(be, 1, d, pm, &s_ar, dw + o->rel, 1,
	    dgrad + o->a_rel, d, wk->part) < 0 ||
	    kg_be_seg_sum_split(be, 1, d, pn, &s_ad, z, 1, dgrad + o->a_dst, d,
	    wk->part) < 0 ? -1 : 0;
}

int
kg_gnn_dattn_backward(struct kg_backend *be, const struct kg_gnn *m,
    uint32_t l, const float *dw, const struct kg_gnn_dgraph *dg,
    const float *x, const float *G, float *dx, struct kg_gnn_dwork *wk,
    float *u, float *al, float *dgrad)
{
	const struct kg_gnn_layer_off *o = &m->lay[l];
	size_t din = m->c.dims[l], dout = m->c.dims[l + 1];
	struct kg_dev_attn A;

	/* z as the forward had it (the CPU recomputes it too). */
	if (kg_gnn_dwork_reserve(be, wk, m, l, dg) < 0 ||
	    products(be, m, l, dw, dg, x, wk->a) < 0 ||
	    kg_gnn_dself_backward(be, m, l, dw, dg, x, G, dx, wk, dgrad) < 0)
		return -1;
	A = attn_view(m, l, dw, dg, wk->a, u, al, wk);
	return kg_be_attn(be, KG_BE_ATTN_BACK_SCORES, &A, G, NULL) < 0 ||
	    kg_be_attn(be, KG_BE_ATTN_BACK_DZ, &A, G, wk->b) < 0 ||
	    kg_be_attn(be, KG_BE_ATTN_BACK_REL, &A, G, dgrad + o->rel) < 0 ||
	    back_vectors(be, m, l, dw, dg, wk->a, wk, dgrad) < 0 ||
	    kg_be_sgemm(be, KG_TRANS, KG_NO_TRANS, din, dout, dg->n_src, 1.0f,
	    x, din, wk->b, dout, 1.0f, dgrad + o->w, dout) < 0 ||
	    kg_be_sgemm(be, KG_NO_TRANS, KG_TRANS, dg->n_src, din, dout, 1.0f,
	    wk->b, dout, dw + o->w, dout, 1.0f, dx, din) < 0 ? -1 : 0;
}
