/*
 * gnn: the forward and backward passes over all layers (dropout, ReLU);
 * the layers themselves are in attr_layer.c, layers_rgcn.c and
 * layers_attn.c.  See gnn.h.
 */
#include "gnn/layers.h"

/* Graph layer l's view of g: its destinations are the first s->rows[l +
 * 1] nodes, whose messages are a prefix of g's (CSR by destination). */
static struct kg_gnn_graph
layer_view(const struct kg_gnn_graph *g, const struct kg_gnn_state *s,
    uint32_t l)
{
	struct kg_gnn_graph v = *g;

	v.n_nodes = s->rows[l + 1];
	v.n_msgs = g->off[v.n_nodes];
	return v;
}

static void
layer_forward(const struct kg_gnn *m, uint32_t l, const struct kg_gnn_graph *g,
    struct kg_gnn_state *s, struct kg_rng *rng)
{
	size_t din = m->c.dims[l], dout = m->c.dims[l + 1];
	long nd = (long)(s->rows[l] * din), no = (long)(s->rows[l + 1] * dout);
	float p = rng != NULL ? m->c.dropout : 0.0f;
	float *x = s->h[l], keep = 1.0f / (1.0f - p);
	float *mask = s->mask[l], *hd = s->hd[l], *pre = s->pre[l];
	float *h = s->h[l + 1];
	int relu = l + 1 < m->c.n_layers;
	struct kg_gnn_graph v = layer_view(g, s, l);
	long k;

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
	if (s->blocks && m->c.encoder == KG_GNN_RGCN &&
	    m->c.decomp == KG_GNN_BLOCK)
		kg_gnn_index_build(m, &v, s->rows[l], s);
	if (m->c.encoder == KG_GNN_RGCN)
		kg_gnn_rgcn_forward(m, l, &v, s->rows[l], hd, pre, s);
	else
		kg_gnn_attn_forward(m, l, &v, s->rows[l], hd, pre, s);
#pragma omp parallel for schedule(static)
	for (k = 0; k < no; k++)
		h[k] = (relu && pre[k] < 0.0f) ? 0.0f : pre[k];
}

void
kg_gnn_forward_blocks(const struct kg_gnn *m, const struct kg_gnn_graph *g,
    const uint64_t *n_dst, const struct kg_features *f, const int32_t *frow,
    const int32_t *lrow, struct kg_rng *rng, struct kg_gnn_state *s)
{
	uint64_t rows[KG_GNN_MAX_LAYERS + 1];
	uint32_t l, L = m->c.n_layers;

	rows[0] = g->n_nodes;
	for (l = 0; l < L; l++)
		rows[l + 1] = n_dst != NULL ? n_dst[l] : g->n_nodes;
	kg_gnn_state_reserve_rows(m, s, rows, g->n_msgs);
	/* Whole layers share one index; blocks build each layer's. */
	s->blocks = n_dst != NULL;
	if (L > 0 && !s->blocks)
		kg_gnn_index_build(m, g, g->n_nodes, s);
	kg_gnn_attr_forward(m, f, frow, lrow, rows[0], s->h[0]);
	for (l = 0; l < L; l++)
		layer_forward(m, l, g, s, rng);
}

void
kg_gnn_forward(const struct kg_gnn *m, const struct kg_gnn_graph *g,
    const struct kg_features *f, const int32_t *frow,
    const int32_t *lrow, struct kg_rng *rng, struct kg_gnn_state *s)
{
	kg_gnn_forward_blocks(m, g, NULL, f, frow, lrow, rng, s);
}

void
kg_gnn_backward(const struct kg_gnn *m, const struct kg_gnn_graph *g,
    const struct kg_features *f, const int32_t *frow,
    const int32_t *lrow, struct kg_gnn_state *s, float *dout, float *grad)
{
	uint32_t l, L = m->c.n_layers;
	float *G = dout;
	long k;

	for (l = L; l-- > 0;) {
		size_t din = m->c.dims[l], dd = m->c.dims[l + 1];
		float *dx = (G == s->dh) ? s->dh2 : s->dh;
		const float *pre = s->pre[l], *mask = s->mask[l];
		long nd = (long)(s->rows[l] * din);
		long no = (long)(s->rows[l + 1] * dd);
		struct kg_gnn_graph v = layer_view(g, s, l);

		if (l + 1 < L) {
#pragma omp parallel for schedule(static)
			for (k = 0; k < no; k++)
				if (pre[k] < 0.0f)
					G[k] = 0.0f;
		}
		if (s->blocks)
			kg_gnn_index_build(m, &v, s->rows[l], s);
		if (m->c.encoder == KG_GNN_RGCN)
			kg_gnn_rgcn_backward(m, l, &v, s->rows[l], s->hd[l], G,
			    dx, s, grad);
		else
			kg_gnn_attn_backward(m, l, &v, s->rows[l], s->hd[l], G,
			    dx, s, grad);
#pragma omp parallel for schedule(static)
		for (k = 0; k < nd; k++)
			dx[k] *= mask[k];
		G = dx;
	}
	kg_gnn_attr_backward(m, f, frow, lrow, s->rows[0], G, grad, s);
}
