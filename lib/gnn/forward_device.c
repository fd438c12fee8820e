/*
 * gnn/forward_device: the encoder's passes over all layers as backend
 * calls (forward_device.h), step by step as forward.c's.
 */
#include <string.h>

#include "gnn/forward_device.h"
#include "gnn/layers.h"

int
kg_gnn_device_check(const struct kg_gnn *m)
{
	if (m->n_attrs > 0) {
		kg_error("the device reads learned embeddings only, not node "
		    "attributes (%zu attribute%s)", m->n_attrs,
		    m->n_attrs == 1 ? "" : "s");
		return -1;
	}
	return 0;
}

static int
grow_f(struct kg_backend *be, float **p, uint64_t *cap, uint64_t need)
{
	void *q = *p;
	int rc = kg_gnn_dgrow(be, &q, cap, need, sizeof(float));

	*p = q;
	return rc;
}

/* Host staging (pinned for CUDA): replaced when too small. */
static int
grow_host(struct kg_backend *be, void **p, uint64_t *cap, uint64_t need,
    size_t size)
{
	if (need <= *cap && *p != NULL)
		return 0;
	if (*p != NULL)
		kg_be_host_free(be, *p);
	*cap = 0;
	if ((*p = kg_be_host_alloc(be, (need + 1) * size)) == NULL)
		return -1;
	*cap = need + 1;
	return 0;
}

/* Every buffer of a pass with these rows. */
static int
reserve(struct kg_backend *be, const struct kg_gnn *m,
    struct kg_gnn_dpass *p)
{
	uint64_t md = kg_gnn_max_dim(m), c;
	uint32_t l, L = p->L;
	void *q;

	for (l = 0; l <= L; l++) {
		uint64_t need = p->rows[l] * md;

		if (need <= p->cap[l] && p->h[l] != NULL)
			continue;
		c = 0;
		if (grow_f(be, &p->h[l], &c, need) < 0)
			return -1;
		if (l < L && ((c = 0, grow_f(be, &p->hdrop[l], &c, need)) < 0 ||
		    (c = 0, grow_f(be, &p->mask[l], &c, need)) < 0))
			return -1;
		if (l > 0 && (c = 0, grow_f(be, &p->pre[l - 1], &c, need)) < 0)
			return -1;
		p->cap[l] = c;
	}
	if (p->rows[0] * md > p->cap_dh) {
		c = 0;
		if (grow_f(be, &p->dh, &c, p->rows[0] * md) < 0 ||
		    (c = 0, grow_f(be, &p->dh2, &c, p->rows[0] * md)) < 0)
			return -1;
		p->cap_dh = c;
	}
	q = p->hmask;
	if (grow_host(be, &q, &p->cap_hmask, p->rows[0] * md, sizeof(float)) <
	    0)
		return -1;
	p->hmask = q;
	return 0;
}

/* Layer l's view of g, as forward.c's layer_view. */
static struct kg_gnn_graph
layer_view(const struct kg_gnn_graph *g, const struct kg_gnn_dpass *p,
    uint32_t l)
{
	struct kg_gnn_graph v = *g;

	v.n_nodes = p->rows[l + 1];
	v.n_msgs = g->off[v.n_nodes];
	return v;
}

/* forward.c's layer_forward: the masks from one stream, in order. */
static int
layer_forward(struct kg_backend *be, const struct kg_gnn *m, uint32_t l,
    const float *dw, const struct kg_gnn_graph *g, struct kg_rng *rng,
    struct kg_gnn_state *s, struct kg_gnn_dpass *p)
{
	size_t din = m->c.dims[l], dout = m->c.dims[l + 1];
	uint64_t nd = p->rows[l] * din, no = p->rows[l + 1] * dout, k;
	float pr = rng != NULL ? m->c.dropout : 0.0f;
	float keep = 1.0f / (1.0f - pr);
	struct kg_gnn_graph v = layer_view(g, p, l);
	struct kg_gnn_dgraph *dg = &p->dg[p->blocks ? l : 0];

	p->dropped[l] = pr > 0.0f;
	p->in[l] = p->h[l];
	if (p->dropped[l]) {
		for (k = 0; k < nd; k++)
			p->hmask[k] = kg_rng_uniform(rng) < pr ? 0.0f : keep;
		if (kg_be_upload(be, p->mask[l], p->hmask, nd *
		    sizeof(float)) < 0 ||
		    kg_be_mul(be, nd, p->h[l], p->mask[l], p->hdrop[l]) < 0)
			return -1;
		p->in[l] = p->hdrop[l];
	}
	if (p->blocks || l == 0) {
		kg_gnn_index_build(m, &v, p->rows[l], s);
		if (kg_gnn_dgraph_upload(be, dg, m, &v, p->rows[l], s) < 0)
			return -1;
	}
	if (m->c.encoder == KG_GNN_RELGNN) {
		if (grow_f(be, &p->u[l], &p->cap_u[l], dg->n_msgs + 1) < 0 ||
		    grow_f(be, &p->al[l], &p->cap_al[l], dg->n_msgs + 1) < 0 ||
		    kg_gnn_dattn_forward(be, m, l, dw, dg, p->in[l], p->pre[l],
		    &p->wk, p->u[l], p->al[l]) < 0)
			return -1;
	} else if (kg_gnn_drgcn_forward(be, m, l, dw, dg, p->in[l], p->pre[l],
	    &p->wk) < 0)
		return -1;
	return l + 1 < m->c.n_layers ? kg_be_relu(be, no, p->pre[l],
	    p->h[l + 1]) : 0;
}

/* The pass's rows and buffers for g (n_dst as kg_gnn_dforward's). */
static int
begin(struct kg_backend *be, const struct kg_gnn *m,
    const struct kg_gnn_graph *g, const uint64_t *n_dst,
    struct kg_gnn_dpass *p)
{
	uint32_t l, L = m->c.n_layers;

	if (kg_gnn_device_check(m) < 0)
		return -1;
	p->L = L;
	p->rows[0] = g->n_nodes;
	for (l = 0; l < L; l++)
		p->rows[l + 1] = n_dst != NULL ? n_dst[l] : g->n_nodes;
	p->blocks = n_dst != NULL;
	return reserve(be, m, p);
}

static int
layers_forward(struct kg_backend *be, const struct kg_gnn *m,
    const float *dw, const struct kg_gnn_graph *g, struct kg_rng *rng,
    struct kg_gnn_state *s, struct kg_gnn_dpass *p)
{
	uint32_t l;

	for (l = 0; l < p->L; l++)
		if (layer_forward(be, m, l, dw, g, rng, s, p) < 0)
			return -1;
	return 0;
}

int
kg_gnn_dforward(struct kg_backend *be, const struct kg_gnn *m,
    const float *dw, const struct kg_gnn_graph *g, const uint64_t *n_dst,
    const float *h0, struct kg_rng *rng, struct kg_gnn_state *s,
    struct kg_gnn_dpass *p)
{
	/* The attribute layer of a learned-only encoder: its rows. */
	if (begin(be, m, g, n_dst, p) < 0 || kg_be_upload(be, p->h[0], h0,
	    g->n_nodes * m->c.dims[0] * sizeof(float)) < 0)
		return -1;
	return layers_forward(be, m, dw, g, rng, s, p);
}

int
kg_gnn_dforward_rows(struct kg_backend *be, const struct kg_gnn *m,
    const float *dw, const struct kg_gnn_graph *g, const uint64_t *n_dst,
    const float *dtab, const int64_t *didx, struct kg_rng *rng,
    struct kg_gnn_state *s, struct kg_gnn_dpass *p)
{
	if (begin(be, m, g, n_dst, p) < 0 || kg_be_gather(be, g->n_nodes,
	    m->c.dims[0], dtab, didx, p->h[0]) < 0)
		return -1;
	return layers_forward(be, m, dw, g, rng, s, p);
}

float *
kg_gnn_dpass_output(const struct kg_gnn_dpass *p)
{
	return p->L == 0 ? p->h[0] : p->pre[p->L - 1];
}

/* kg_gnn_backward: ReLU's and dropout's gradients around each layer's;
 * the learned rows' are the host's. */
int
kg_gnn_dbackward(struct kg_backend *be, const struct kg_gnn *m,
    const float *dw, struct kg_gnn_dpass *p, float *dout, float *dgrad)
{
	uint32_t l, L = p->L;
	float *G = dout;

	for (l = L; l-- > 0;) {
		size_t din = m->c.dims[l], dd = m->c.dims[l + 1];
		float *dx = G == p->dh ? p->dh2 : p->dh;
		struct kg_gnn_dgraph *dg = &p->dg[p->blocks ? l : 0];

		if (l + 1 < L && kg_be_relu_backward(be, p->rows[l + 1] * dd,
		    p->pre[l], G) < 0)
			return -1;
		if (m->c.encoder == KG_GNN_RELGNN ? kg_gnn_dattn_backward(be, m,
		    l, dw, dg, p->in[l], G, dx, &p->wk, p->u[l], p->al[l],
		    dgrad) < 0 : kg_gnn_drgcn_backward(be, m, l, dw, dg,
		    p->in[l], G, dx, &p->wk, dgrad) < 0)
			return -1;
		if (p->dropped[l] && kg_be_mul(be, p->rows[l] * din, p->mask[l],
		    dx, dx) < 0)
			return -1;
		G = dx;
	}
	p->gin = G;
	return 0;
}

void
kg_gnn_dpass_release(struct kg_backend *be, struct kg_gnn_dpass *p)
{
	uint32_t l;

	for (l = 0; l <= KG_GNN_MAX_LAYERS; l++)
		kg_be_free(be, p->h[l]);
	for (l = 0; l < KG_GNN_MAX_LAYERS; l++) {
		kg_be_free(be, p->hdrop[l]);
		kg_be_free(be, p->mask[l]);
		kg_be_free(be, p->pre[l]);
		kg_be_free(be, p->u[l]);
		kg_be_free(be, p->al[l]);
		kg_gnn_dgraph_release(be, &p->dg[l]);
	}
	kg_be_free(be, p->dh);
	kg_be_free(be, p->dh2);
	kg_gnn_dwork_release(be, &p->wk);
	kg_be_host_free(be, p->hmask);
	memset(p, 0, sizeof(*p));
}
