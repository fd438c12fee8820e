/*
 * gnn: the forward and backward passes over all layers (dropout, ReLU);
 * the layers themselves are in attr_layer.c, layers_rgcn.c and
 * layers_attn.c.  See gnn.h.
 */
#include "gnn/layers.h"

void
kg_gnn_forward(const struct kg_gnn *m, const struct kg_gnn_graph *g,
    const struct kg_features *f, const int32_t *frow,
    const int32_t *lrow, struct kg_rng *rng, struct kg_gnn_state *s)
{
	uint32_t l, L = m->c.n_layers;
	uint64_t n = g->n_nodes;
	float p = rng != NULL ? m->c.dropout : 0.0f;
	long k;

	kg_gnn_state_reserve(m, s, n, g->n_msgs);
	if (L > 0)
		kg_gnn_index_build(m, g, s);
	kg_gnn_attr_forward(m, f, frow, lrow, n, s->h[0]);
	for (l = 0; l < L; l++) {
		size_t din = m->c.dims[l], dout = m->c.dims[l + 1];
		long nd = (long)(n * din), no = (long)(n * dout);
		float *x = s->h[l], keep = 1.0f / (1.0f - p);
		float *mask = s->mask[l], *hd = s->hd[l], *pre = s->pre[l];
		float *h = s->h[l + 1];
		int relu = l + 1 < L;

		/* The masks come from one random stream, in order. */
		if (p > 0.0f)
			for (k = 0; k < nd; k++)
				mask[k] = kg_rng_uniform(rng) < p ? 0.0f : keep;
#pragma omp parallel for schedule(static)
		for (k = 0; k < nd; k++) {
			if (p <= 0.0f)
				mask[k] = 1.0f;
			hd[k] = x[k] * mask[k];
		}
		if (m->c.encoder == KG_GNN_RGCN)
			kg_gnn_rgcn_forward(m, l, g, hd, pre, s);
		else
			kg_gnn_attn_forward(m, l, g, hd, pre, s);
#pragma omp parallel for schedule(static)
		for (k = 0; k < no; k++)
			h[k] = (relu && pre[k] < 0.0f) ? 0.0f : pre[k];
	}
}

void
kg_gnn_backward(const struct kg_gnn *m, const struct kg_gnn_graph *g,
    const struct kg_features *f, const int32_t *frow,
    const int32_t *lrow, struct kg_gnn_state *s, float *dout, float *grad)
{
	uint32_t l, L = m->c.n_layers;
	uint64_t n = g->n_nodes;
	float *G = dout;
	long k;

	for (l = L; l-- > 0;) {
		size_t din = m->c.dims[l], dd = m->c.dims[l + 1];
		float *dx = (G == s->dh) ? s->dh2 : s->dh;
		const float *pre = s->pre[l], *mask = s->mask[l];
		long nd = (long)(n * din), no = (long)(n * dd);

		if (l + 1 < L) {
#pragma omp parallel for schedule(static)
			for (k = 0; k < no; k++)
				if (pre[k] < 0.0f)
					G[k] = 0.0f;
		}
		if (m->c.encoder == KG_GNN_RGCN)
			kg_gnn_rgcn_backward(m, l, g, s->hd[l], G, dx, s,
			    grad);
		else
			kg_gnn_attn_backward(m, l, g, s->hd[l], G, dx, s,
			    grad);
#pragma omp parallel for schedule(static)
		for (k = 0; k < nd; k++)
			dx[k] *= mask[k];
		G = dx;
	}
	kg_gnn_attr_backward(m, f, frow, lrow, n, G, grad);
}
