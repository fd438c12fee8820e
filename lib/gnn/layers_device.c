/*
 * gnn/layers_device: the R-GCN layer as backend calls (layers_device.h).
 * Each pass mirrors its CPU twin in layers_rgcn.c step by step; the
 * comments name the CPU function a block follows.
 */
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "gnn/layers_device.h"

/* ---- device memory that grows ---- */

int
kg_gnn_dgrow(struct kg_backend *be, void **p, uint64_t *cap, uint64_t need,
    size_t size)
{
	void *q;

	if (need <= *cap && *p != NULL)
		return 0;
	need += need / 4 + 1;
	if ((q = kg_be_alloc(be, need * size)) == NULL)
		return -1;
	kg_be_free(be, *p);
	*p = q;
	*cap = need;
	return 0;
}

static int
fgrow(struct kg_backend *be, float **p, size_t *cap, size_t need)
{
	void *q = *p;
	uint64_t c = *cap;
	int rc = kg_gnn_dgrow(be, &q, &c, need, sizeof(float));

	*p = q;
	*cap = (size_t)c;
	return rc;
}

/* ---- the graph ---- */

/* Grow the n device arrays p[] (8-byte elements) to need together: cap
 * is their common capacity. */
static int
grow_set(struct kg_backend *be, int64_t **p[], size_t n, uint64_t *cap,
    uint64_t need)
{
	uint64_t c = 0;
	size_t i;

	if (need <= *cap)
		return 0;
	for (i = 0; i < n; i++) {
		void *q = *p[i];

		c = 0;
		if (kg_gnn_dgrow(be, &q, &c, need, sizeof(int64_t)) < 0)
			return -1;
		*p[i] = q;
	}
	*cap = c;
	return 0;
}

static int
dgraph_reserve(struct kg_backend *be, struct kg_gnn_dgraph *dg, uint64_t M,
    uint64_t N, uint64_t T)
{
	int64_t **pm[] = { &dg->src, &dg->type, &dg->dst, &dg->by_type,
		&dg->by_src, &dg->poff, &dg->pdst, &dg->dpair, &dg->msg_pair };
	int64_t **pn[] = { &dg->off, &dg->soff, &dg->dpoff };
	int64_t **pt[] = { &dg->toff };
	uint64_t cm = dg->cap_m, st = M > N ? M : N;

	st = (st > T ? st : T) + 2;
	if (grow_set(be, pm, KG_ARRAY_LEN(pm), &dg->cap_m, M + 1) < 0)
		return -1;
	if (dg->cap_m != cm) {
		/* The norms follow the messages. */
		kg_be_free(be, dg->norm);
		if ((dg->norm = kg_be_alloc(be, dg->cap_m * sizeof(float))) ==
		    NULL) {
			dg->cap_m = 0;
			return -1;
		}
	}
	if (grow_set(be, pn, KG_ARRAY_LEN(pn), &dg->cap_n, N + 1) < 0)
		return -1;
	if (T + 1 > dg->cap_t) {
		if (grow_set(be, pt, 1, &dg->cap_t, T + 1) < 0)
			return -1;
		free(dg->tpoff);
		dg->tpoff = kg_xmallocarray(dg->cap_t, sizeof(*dg->tpoff));
	}
	if (dg->all == NULL && (dg->all = kg_be_alloc(be, 4 *
	    sizeof(int64_t))) == NULL)
		return -1;
	if (st > dg->cap_stage) {
		if (dg->stage != NULL)
			kg_be_host_free(be, dg->stage);
		dg->cap_stage = 0;
		if ((dg->stage = kg_be_host_alloc(be, st * sizeof(int64_t))) ==
		    NULL)
			return -1;
		dg->cap_stage = st;
	}
	return 0;
}

/* Upload n int32 values as int64. */
static int
up_i32(struct kg_backend *be, struct kg_gnn_dgraph *dg, int64_t *dev,
    const int32_t *v, uint64_t n)
{
	uint64_t i;

	for (i = 0; i < n; i++)
		dg->stage[i] = v[i];
	return kg_be_upload(be, dev, dg->stage, n * sizeof(int64_t));
}

/* Upload n uint64 values (all below 2^63) as int64. */
static int
up_u64(struct kg_backend *be, struct kg_gnn_dgraph *dg, int64_t *dev,
    const uint64_t *v, uint64_t n)
{
	uint64_t i;

	for (i = 0; i < n; i++)
		dg->stage[i] = (int64_t)v[i];
	return kg_be_upload(be, dev, dg->stage, n * sizeof(int64_t));
}

int
kg_gnn_dgraph_upload(struct kg_backend *be, struct kg_gnn_dgraph *dg,
    const struct kg_gnn *m, const struct kg_gnn_graph *g, uint64_t n_src,
    const struct kg_gnn_state *s)
{
	uint64_t M = g->n_msgs, T = g->n_types;
	int block = m->c.encoder == KG_GNN_RGCN && m->c.decomp == KG_GNN_BLOCK;

	if (dgraph_reserve(be, dg, M, n_src > g->n_nodes ? n_src : g->n_nodes,
	    T) < 0)
		return -1;
	dg->n_dst = g->n_nodes;
	dg->n_src = n_src;
	dg->n_msgs = M;
	dg->n_types = (uint32_t)T;
	dg->n_pairs = block ? s->n_pairs : 0;
	dg->stage[0] = 0;
	dg->stage[1] = (int64_t)g->n_nodes;
	dg->stage[2] = 0;
	dg->stage[3] = (int64_t)M;
	if (kg_be_upload(be, dg->all, dg->stage, 4 * sizeof(int64_t)) < 0 ||
	    up_u64(be, dg, dg->off, g->off, g->n_nodes + 1) < 0 ||
	    up_i32(be, dg, dg->src, g->src, M) < 0 ||
	    up_i32(be, dg, dg->type, g->type, M) < 0 ||
	    up_i32(be, dg, dg->dst, s->dst, M) < 0 ||
	    kg_be_upload(be, dg->norm, g->norm, M * sizeof(float)) < 0 ||
	    up_u64(be, dg, dg->by_type, s->by_type, M) < 0 ||
	    up_u64(be, dg, dg->toff, s->toff, T + 1) < 0 ||
	    up_u64(be, dg, dg->by_src, s->by_src, M) < 0 ||
	    up_u64(be, dg, dg->soff, s->soff, n_src + 1) < 0)
		return -1;
	if (!block)
		return 0;
	memcpy(dg->tpoff, s->tpoff, (T + 1) * sizeof(*dg->tpoff));
	return up_u64(be, dg, dg->poff, s->poff, s->n_pairs + 1) < 0 ||
	    up_i32(be, dg, dg->pdst, s->pdst, s->n_pairs) < 0 ||
	    up_u64(be, dg, dg->dpair, s->dpair, s->n_pairs) < 0 ||
	    up_u64(be, dg, dg->dpoff, s->dpoff, g->n_nodes + 1) < 0 ||
	    up_u64(be, dg, dg->msg_pair, s->msg_pair, M) < 0 ? -1 : 0;
}

void
kg_gnn_dgraph_release(struct kg_backend *be, struct kg_gnn_dgraph *dg)
{
	int64_t **p[] = { &dg->off, &dg->src, &dg->type, &dg->dst,
		&dg->by_type, &dg->toff, &dg->by_src, &dg->soff, &dg->all,
		&dg->poff, &dg->pdst, &dg->dpair, &dg->dpoff, &dg->msg_pair };
	size_t i;

	for (i = 0; i < KG_ARRAY_LEN(p); i++)
		kg_be_free(be, *p[i]);
	kg_be_free(be, dg->norm);
	if (dg->stage != NULL)
		kg_be_host_free(be, dg->stage);
	free(dg->tpoff);
	memset(dg, 0, sizeof(*dg));
}

/* ---- the scratch ---- */

/* The parts kg_be_seg_sum_split sums n_seg segments of items items in
 * all in: about KG_GNN_SPLIT_ITEMS items a thread, at most
 * KG_GNN_SPLIT_MAX parts (one: kg_be_seg_sum's order). */
#define KG_GNN_SPLIT_ITEMS 64
#define KG_GNN_SPLIT_MAX 256

size_t
kg_gnn_split_parts(uint64_t items, uint64_t n_seg)
{
	uint64_t p = items / (n_seg ? n_seg : 1) / KG_GNN_SPLIT_ITEMS;

	return p < 1 ? 1 : p > KG_GNN_SPLIT_MAX ? KG_GNN_SPLIT_MAX : (size_t)p;
}

int
kg_gnn_dwork_reserve(struct kg_backend *be, struct kg_gnn_dwork *wk,
    const struct kg_gnn *m, uint32_t l, const struct kg_gnn_dgraph *dg)
{
	size_t din = m->c.dims[l], dout = m->c.dims[l + 1], B = m->c.n_bases;
	size_t na, nb, nc = 0, nd = 0, M = dg->n_msgs, np;

	if (m->c.encoder == KG_GNN_RELGNN) {
		/* z and dz; nsum; da; the vectors' parts over the messages. */
		na = nb = dg->n_src * dout;
		np = kg_gnn_split_parts(dg->n_dst, 1) * dout;
		if (kg_gnn_split_parts(M, 1) * dout > np)
			np = kg_gnn_split_parts(M, 1) * dout;
		return fgrow(be, &wk->part, &wk->cap_part, np) < 0 ||
		    fgrow(be, &wk->a, &wk->cap_a, na) < 0 ||
		    fgrow(be, &wk->b, &wk->cap_b, nb) < 0 ||
		    fgrow(be, &wk->coef, &wk->cap_coef, dg->n_dst + 1) < 0 ||
		    fgrow(be, &wk->dots, &wk->cap_dots, M + 1) < 0 ? -1 : 0;
	}
	if (m->c.decomp == KG_GNN_BLOCK) {
		na = dg->n_pairs * din;
		nb = dg->n_pairs * dout;
		nc = dg->n_pairs * dout;
		nd = dg->n_pairs * din;
	} else if (dg->n_src > dg->n_dst) {
		na = nb = B * dg->n_dst * din;
	} else {
		na = nb = B * dg->n_src * dout;
	}
	/* The two long reductions' parts: the bias's, dA's by type. */
	np = kg_gnn_split_parts(dg->n_dst, 1) * dout;
	if (m->c.decomp == KG_GNN_BASIS && kg_gnn_split_parts(M, dg->n_types) *
	    dg->n_types > np)
		np = kg_gnn_split_parts(M, dg->n_types) * dg->n_types;
	return fgrow(be, &wk->part, &wk->cap_part, np) < 0 ||
	    fgrow(be, &wk->a, &wk->cap_a, na) < 0 ||
	    fgrow(be, &wk->b, &wk->cap_b, nb) < 0 ||
	    fgrow(be, &wk->c, &wk->cap_c, nc) < 0 ||
	    fgrow(be, &wk->d, &wk->cap_d, nd) < 0 ||
	    fgrow(be, &wk->coef, &wk->cap_coef, B * M) < 0 ||
	    fgrow(be, &wk->dots, &wk->cap_dots, M) < 0 ? -1 : 0;
}

void
kg_gnn_dwork_release(struct kg_backend *be, struct kg_gnn_dwork *wk)
{
	kg_be_free(be, wk->a);
	kg_be_free(be, wk->b);
	kg_be_free(be, wk->c);
	kg_be_free(be, wk->d);
	kg_be_free(be, wk->coef);
	kg_be_free(be, wk->dots);
	kg_be_free(be, wk->part);
	memset(wk, 0, sizeof(*wk));
}

/* ---- the passes ---- */

/* The segments of every message into its destination, by CSR order;
 * nb blocks of weights w (stride ws) and of x (stride xs). */
static struct kg_dev_seg
seg(const int64_t *off, const int64_t *perm, const int64_t *idx,
    const float *w, size_t nb, size_t ws, size_t xs)
{
	struct kg_dev_seg s;

	s.off = off;
	s.perm = perm;
	s.idx = idx;
	s.w = w;
	s.nb = nb;
	s.ws = ws;
	s.xs = xs;
	return s;
}

/* kg_gnn_self_forward: out = bias + x W0 over the destinations. */
int
kg_gnn_dself_forward(struct kg_backend *be, const struct kg_gnn *m, uint32_t l,
    const float *dw, uint64_t n, const float *x, float *out)
{
	const struct kg_gnn_layer_off *o = &m->lay[l];
	size_t din = m->c.dims[l], dout = m->c.dims[l + 1];

	if (kg_be_fill_rows(be, n, dout, dw + o->bias, out) < 0)
		return -1;
	return kg_be_sgemm(be, KG_NO_TRANS, KG_NO_TRANS, n, dout, din, 1.0f, x,
	    din, dw + o->w0, dout, 1.0f, out, dout);
}

/* kg_gnn_self_backward: dW0 += x^T G, dbias += the rows of G (in
 * parts: one segment of every row), dx = G W0^T (zero past the
 * destinations). */
int
kg_gnn_dself_backward(struct kg_backend *be, const struct kg_gnn *m, uint32_t l,
    const float *dw, const struct kg_gnn_dgraph *dg, const float *x,
    const float *G, float *dx, struct kg_gnn_dwork *wk, float *dgrad)
{
	const struct kg_gnn_layer_off *o = &m->lay[l];
	size_t din = m->c.dims[l], dout = m->c.dims[l + 1], n = dg->n_dst;
	struct kg_dev_seg rows = seg(dg->all, NULL, NULL, NULL, 1, 0, 0);

	if (kg_be_sgemm(be, KG_TRANS, KG_NO_TRANS, din, dout, n, 1.0f, x, din,
	    G, dout, 1.0f, dgrad + o->w0, dout) < 0 ||
	    kg_be_seg_sum_split(be, 1, dout, kg_gnn_split_parts(n, 1), &rows,
	    G, 1, dgrad + o->bias, dout, wk->part) < 0 ||
	    kg_be_sgemm(be, KG_NO_TRANS, KG_TRANS, n, din, dout, 1.0f, G, dout,
	    dw + o->w0, dout, 0.0f, dx, din) < 0)
		return -1;
	return dg->n_src > n ? kg_be_zero(be, dx + n * din, (dg->n_src - n) *
	    din * sizeof(float)) : 0;
}

/* The products x V_b of every source (kg_gnn_src_products), B blocks of
 * n_src x dout in wk->a. */
static int
src_products(struct kg_backend *be, const struct kg_gnn *m, uint32_t l,
    const float *dw, uint64_t n_src, const float *x, float *t1)
{
	size_t din = m->c.dims[l], dout = m->c.dims[l + 1];

	return kg_be_sgemm_batched(be, KG_NO_TRANS, KG_NO_TRANS, n_src, dout,
	    din, 1.0f, x, din, 0, dw + m->lay[l].v, dout, din * dout, 0.0f, t1,
	    dout, n_src * dout, m->c.n_bases);
}

/* basis_aggregate: agg_b[i] = sum of i's messages' norm A[r, b] x[src],
 * B blocks of n_dst x din in agg; wk->coef holds the coefficients. */
static int
basis_aggregate(struct kg_backend *be, const struct kg_gnn *m, uint32_t l,
    const struct kg_gnn_dgraph *dg, const float *x, float *agg,
    const float *coef)
{
	size_t din = m->c.dims[l], B = m->c.n_bases, b;

	for (b = 0; b < B; b++) {
		struct kg_dev_seg sg = seg(dg->off, NULL, dg->src,
		    coef + b * dg->n_msgs, 1, 0, 0);

		if (kg_be_seg_sum(be, dg->n_dst, din, &sg, x, 0,
		    agg + b * dg->n_dst * din, din) < 0)
			return -1;
	}
	return 0;
}

static int
basis_forward(struct kg_backend *be, const struct kg_gnn *m, uint32_t l,
    const float *dw, const struct kg_gnn_dgraph *dg, const float *x,
    float *out, struct kg_gnn_dwork *wk)
{
	const struct kg_gnn_layer_off *o = &m->lay[l];
	size_t din = m->c.dims[l], dout = m->c.dims[l + 1], B = m->c.n_bases;
	size_t n = dg->n_dst, M = dg->n_msgs, b;
	struct kg_dev_seg sg;

	if (kg_be_edge_coef(be, M, B, dg->norm, dg->type, dw + o->a,
	    wk->coef) < 0)
		return -1;
	if (dg->n_src > n) {
		/* basis_forward_agg */
		if (basis_aggregate(be, m, l, dg, x, wk->a, wk->coef) < 0)
			return -1;
		for (b = 0; b < B; b++)
			if (kg_be_sgemm(be, KG_NO_TRANS, KG_NO_TRANS, n, dout,
			    din, 1.0f, wk->a + b * n * din, din, dw + o->v + b *
			    din * dout, dout, 1.0f, out, dout) < 0)
				return -1;
		return 0;
	}
	/* kg_gnn_basis_msgs over the products */
	if (src_products(be, m, l, dw, dg->n_src, x, wk->a) < 0)
		return -1;
	sg = seg(dg->off, NULL, dg->src, wk->coef, B, M, dg->n_src * dout);
	return kg_be_seg_sum(be, n, dout, &sg, wk->a, 1, out, dout);
}

/* dA[r, b] += sum over the messages of type r, in order (in parts: few
 * types, many messages), of norm dots_b (per message). */
static int
basis_grad_a(struct kg_backend *be, const struct kg_gnn *m, uint32_t l,
    const struct kg_gnn_dgraph *dg, const float *dots, size_t b,
    struct kg_gnn_dwork *wk, float *dgrad)
{
	struct kg_dev_seg sg = seg(dg->toff, dg->by_type, NULL, dg->norm, 1, 0,
	    0);

	return kg_be_seg_sum_split(be, dg->n_types, 1,
	    kg_gnn_split_parts(dg->n_msgs, dg->n_types), &sg, dots, 1,
	    dgrad + m->lay[l].a + b, m->c.n_bases, wk->part);
}

/* basis_backward_agg: dV_b += agg_b^T G, da_b = G V_b^T, dA by type and
 * dx by source through the messages. */
static int
basis_backward_agg(struct kg_backend *be, const struct kg_gnn *m, uint32_t l,
    const float *dw, const struct kg_gnn_dgraph *dg, const float *x,
    const float *G, float *dx, struct kg_gnn_dwork *wk, float *dgrad)
{
	const struct kg_gnn_layer_off *o = &m->lay[l];
	size_t din = m->c.dims[l], dout = m->c.dims[l + 1], B = m->c.n_bases;
	size_t n = dg->n_dst, M = dg->n_msgs, b;
	struct kg_dev_seg sg;

	if (basis_aggregate(be, m, l, dg, x, wk->a, wk->coef) < 0 ||
	    kg_be_sgemm_batched(be, KG_TRANS, KG_NO_TRANS, din, dout, n, 1.0f,
	    wk->a, din, n * din, G, dout, 0, 1.0f, dgrad + o->v, dout,
	    din * dout, B) < 0 ||
	    kg_be_sgemm_batched(be, KG_NO_TRANS, KG_TRANS, n, din, dout, 1.0f,
	    G, dout, 0, dw + o->v, dout, din * dout, 0.0f, wk->b, din, n * din,
	    B) < 0)
		return -1;
	for (b = 0; b < B; b++)
		if (kg_be_edge_dot(be, M, din, wk->b + b * n * din, dg->dst, x,
		    dg->src, wk->dots) < 0 ||
		    basis_grad_a(be, m, l, dg, wk->dots, b, wk, dgrad) < 0)
			return -1;
	sg = seg(dg->soff, dg->by_src, dg->dst, wk->coef, B, M, n * din);
	return kg_be_seg_sum(be, dg->n_src, din, &sg, wk->b, 1, dx, din);
}

/* basis_backward: dA by type, dt (the gradient of x V_b) by source,
 * then dV_b and dx through the products. */
static int
basis_backward(struct kg_backend *be, const struct kg_gnn *m, uint32_t l,
    const float *dw, const struct kg_gnn_dgraph *dg, const float *x,
    const float *G, float *dx, struct kg_gnn_dwork *wk, float *dgrad)
{
	const struct kg_gnn_layer_off *o = &m->lay[l];
	size_t din = m->c.dims[l], dout = m->c.dims[l + 1], B = m->c.n_bases;
	size_t n = dg->n_src, M = dg->n_msgs, b;

	if (kg_be_edge_coef(be, M, B, dg->norm, dg->type, dw + o->a,
	    wk->coef) < 0)
		return -1;
	if (dg->n_src > dg->n_dst)
		return basis_backward_agg(be, m, l, dw, dg, x, G, dx, wk, dgrad);
	if (src_products(be, m, l, dw, n, x, wk->a) < 0)
		return -1;
	for (b = 0; b < B; b++) {
		struct kg_dev_seg sg = seg(dg->soff, dg->by_src, dg->dst,
		    wk->coef + b * M, 1, 0, 0);

		if (kg_be_edge_dot(be, M, dout, G, dg->dst, wk->a + b * n *
		    dout, dg->src, wk->dots) < 0 ||
		    basis_grad_a(be, m, l, dg, wk->dots, b, wk, dgrad) < 0 ||
		    kg_be_seg_sum(be, n, dout, &sg, G, 0, wk->b + b * n * dout,
		    dout) < 0)
			return -1;
	}
	if (kg_be_sgemm_batched(be, KG_TRANS, KG_NO_TRANS, din, dout, n, 1.0f,
	    x, din, 0, wk->b, dout, n * dout, 1.0f, dgrad + o->v, dout,
	    din * dout, B) < 0)
		return -1;
	/* One product per basis: all of them add to dx. */
	for (b = 0; b < B; b++)
		if (kg_be_sgemm(be, KG_NO_TRANS, KG_TRANS, n, din, dout, 1.0f,
		    wk->b + b * n * dout, dout, dw + o->v + b * din * dout, dout,
		    1.0f, dx, din) < 0)
			return -1;
	return 0;
}

/* pair_input for every pair: wk->a [n_pairs, din]. */
static int
pair_inputs(struct kg_backend *be, const struct kg_gnn *m, uint32_t l,
    const struct kg_gnn_dgraph *dg, const float *x, float *pin)
{
	struct kg_dev_seg sg = seg(dg->poff, dg->by_type, dg->src, dg->norm, 1,
	    0, 0);

	return kg_be_seg_sum(be, dg->n_pairs, m->c.dims[l], &sg, x, 0, pin,
	    m->c.dims[l]);
}

/* kg_gnn_block_msgs: per type, the pairs' inputs times each block of
 * Q_r in one strided-batched GEMM; each destination adds its pairs. */
static int
block_forward(struct kg_backend *be, const struct kg_gnn *m, uint32_t l,
    const float *dw, const struct kg_gnn_dgraph *dg, const float *x,
    float *out, struct kg_gnn_dwork *wk)
{
	size_t din = m->c.dims[l], dout = m->c.dims[l + 1], B = m->c.n_bases;
	size_t bi = din / B, bo = dout / B, r;
	struct kg_dev_seg sg = seg(dg->dpoff, NULL, dg->dpair, NULL, 1, 0, 0);

	if (pair_inputs(be, m, l, dg, x, wk->a) < 0)
		return -1;
	for (r = 0; r < dg->n_types; r++) {
		uint64_t p0 = dg->tpoff[r], np = dg->tpoff[r + 1] - p0;
		const float *Q = dw + m->lay[l].q + r * din * dout / B;

		if (np > 0 && kg_be_sgemm_batched(be, KG_NO_TRANS, KG_NO_TRANS,
		    np, bo, bi, 1.0f, wk->a + p0 * din, din, bi, Q, bo,
		    bi * bo, 0.0f, wk->b + p0 * dout, dout, bo, B) < 0)
			return -1;
	}
	return kg_be_seg_sum(be, dg->n_dst, dout, &sg, wk->b, 1, out, dout);
}

/* block_backward: per type dQ_r += pin^T gy and dpin = gy Q_r^T, where
 * gy is each pair's destination's G; dx by source through the pairs. */
static int
block_backward(struct kg_backend *be, const struct kg_gnn *m, uint32_t l,
    const float *dw, const struct kg_gnn_dgraph *dg, const float *x,
    const float *G, float *dx, struct kg_gnn_dwork *wk, float *dgrad)
{
	size_t din = m->c.dims[l], dout = m->c.dims[l + 1], B = m->c.n_bases;
	size_t bi = din / B, bo = dout / B, r;
	struct kg_dev_seg sg = seg(dg->soff, dg->by_src, dg->msg_pair, dg->norm,
	    1, 0, 0);

	if (pair_inputs(be, m, l, dg, x, wk->a) < 0 ||
	    kg_be_gather(be, dg->n_pairs, dout, G, dg->pdst, wk->c) < 0)
		return -1;
	for (r = 0; r < dg->n_types; r++) {
		uint64_t p0 = dg->tpoff[r], np = dg->tpoff[r + 1] - p0;
		size_t qo = m->lay[l].q + r * din * dout / B;

		if (np == 0)
			continue;
		if (kg_be_sgemm_batched(be, KG_TRANS, KG_NO_TRANS, bi, bo, np,
		    1.0f, wk->a + p0 * din, din, bi, wk->c + p0 * dout, dout, bo,
		    1.0f, dgrad + qo, bo, bi * bo, B) < 0 ||
		    kg_be_sgemm_batched(be, KG_NO_TRANS, KG_TRANS, np, bi, bo,
		    1.0f, wk->c + p0 * dout, dout, bo, dw + qo, bo, bi * bo,
		    0.0f, wk->d + p0 * din, din, bi, B) < 0)
			return -1;
	}
	return kg_be_seg_sum(be, dg->n_src, din, &sg, wk->d, 1, dx, din);
}

int
kg_gnn_drgcn_forward(struct kg_backend *be, const struct kg_gnn *m,
    uint32_t l, const float *dw, const struct kg_gnn_dgraph *dg,
    const float *x, float *out, struct kg_gnn_dwork *wk)
{
	if (kg_gnn_dwork_reserve(be, wk, m, l, dg) < 0 ||
	    kg_gnn_dself_forward(be, m, l, dw, dg->n_dst, x, out) < 0)
		return -1;
	if (m->c.decomp == KG_GNN_BASIS)
		return basis_forward(be, m, l, dw, dg, x, out, wk);
	return block_forward(be, m, l, dw, dg, x, out, wk);
}

int
kg_gnn_drgcn_backward(struct kg_backend *be, const struct kg_gnn *m,
    uint32_t l, const float *dw, const struct kg_gnn_dgraph *dg,
    const float *x, const float *G, float *dx, struct kg_gnn_dwork *wk,
    float *dgrad)
{
	if (kg_gnn_dwork_reserve(be, wk, m, l, dg) < 0 ||
	    kg_gnn_dself_backward(be, m, l, dw, dg, x, G, dx, wk, dgrad) < 0)
		return -1;
	if (m->c.decomp == KG_GNN_BASIS)
		return basis_backward(be, m, l, dw, dg, x, G, dx, wk, dgrad);
	return block_backward(be, m, l, dw, dg, x, G, dx, wk, dgrad);
}
