/*
 * gnn/layers_rgcn: the R-GCN layer (gnn.h), basis or block-diagonal
 * weights, forward and backward, over the destinations of a graph whose
 * message sources may reach past them (layers.h).
 */
#include <omp.h>
#include <string.h>

#include "gnn/kernels.h"
#include "gnn/layers.h"

void
kg_gnn_self_forward(const struct kg_gnn *m, uint32_t l, uint64_t n,
    const float *xs, float *out)
{
	const struct kg_gnn_layer_off *o = &m->lay[l];
	size_t din = m->c.dims[l], dout = m->c.dims[l + 1];

	fill_bias(n, dout, m->w + o->bias, out);
	mm(n, dout, din, xs, m->w + o->w0, 1.0f, out);
}

void
kg_gnn_src_products(const struct kg_gnn *m, uint32_t l, uint64_t n_src,
    const float *x, float *t1)
{
	const struct kg_gnn_layer_off *o = &m->lay[l];
	size_t din = m->c.dims[l], dout = m->c.dims[l + 1], b;

	if (m->c.encoder == KG_GNN_RELGNN) {
		mm(n_src, dout, din, x, m->w + o->w, 0.0f, t1);
		return;
	}
	if (m->c.decomp == KG_GNN_BASIS)
		for (b = 0; b < m->c.n_bases; b++)
			mm(n_src, dout, din, x, m->w + o->v + b * din * dout,
			    0.0f, t1 + b * n_src * dout);
}

/* Row of pair p: the sum over its messages of norm * x[src]. */
static void
pair_input(const struct kg_gnn_graph *g, const struct kg_gnn_state *s,
    uint64_t p, const float *x, size_t din, float *row)
{
	uint64_t q = s->poff[p], e = s->by_type[q];
	const float *xs = x + (size_t)g->src[e] * din;
	float nm = g->norm[e];
	size_t k;

#pragma omp simd
	for (k = 0; k < din; k++)
		row[k] = nm * xs[k];
	for (q++; q < s->poff[p + 1]; q++) {
		if (q + AHEAD < g->n_msgs)
			prefetch_row(x + (size_t)g->src[s->by_type[q + AHEAD]] *
			    din, din);
		e = s->by_type[q];
		axpy(din, g->norm[e], x + (size_t)g->src[e] * din, row);
	}
}

/*
 * Block-diagonal R-GCN by type: the inputs of the pairs of one type are
 * summed into a matrix (one thread per type) and multiplied block by
 * block with one sgemm each: small blocks (5 x 5 in the R-GCN paper)
 * make per-message loops slow, per-type GEMMs are not.  The products
 * land in py, and each destination adds its pairs' rows, by type.
 */
void
kg_gnn_block_msgs(const struct kg_gnn *m, uint32_t l,
    const struct kg_gnn_graph *g, const float *x, float *out,
    struct kg_gnn_state *s)
{
	const struct kg_gnn_layer_off *o = &m->lay[l];
	size_t din = m->c.dims[l], dout = m->c.dims[l + 1], B = m->c.n_bases;
	size_t bi = din / B, bo = dout / B, stride = s->max_tpairs * din;
	long r, i;

	kg_gnn_tscr_reserve(s, stride);
#pragma omp parallel for schedule(dynamic, 1)
	for (r = 0; r < (long)g->n_types; r++) {
		const float *Q = m->w + o->q + (size_t)r * din * dout / B;
		uint64_t p0 = s->tpoff[r], np = s->tpoff[r + 1] - p0, p;
		float *gx = s->tscr + (size_t)omp_get_thread_num() * stride;
		size_t c;

		if (np == 0)
			continue;
		for (p = 0; p < np; p++)
			pair_input(g, s, p0 + p, x, din, gx + p * din);
		for (c = 0; c < B; c++)
			kg_sgemm(KG_NO_TRANS, KG_NO_TRANS, np, bo, bi, 1.0f,
			    gx + c * bi, din, Q + c * bi * bo, bo, 0.0f,
			    s->py + p0 * dout + c * bo, dout);
	}
#pragma omp parallel for schedule(dynamic, 256)
	for (i = 0; i < (long)g->n_nodes; i++) {
		uint64_t q;

		for (q = s->dpoff[i]; q < s->dpoff[i + 1]; q++)
			axpy(dout, 1.0f, s->py + s->dpair[q] * dout,
			    out + (size_t)i * dout);
	}
}

/* The weight gradient of a type is summed by the thread of that type;
 * the input gradients of the pairs go through py to the message
 * sources, each source summing its messages in CSR order. */
static void
block_backward(const struct kg_gnn *m, uint32_t l,
    const struct kg_gnn_graph *g, uint64_t n_src, const float *x,
    const float *G, float *dx, struct kg_gnn_state *s, float *grad)
{
	const struct kg_gnn_layer_off *o = &m->lay[l];
	size_t din = m->c.dims[l], dout = m->c.dims[l + 1], B = m->c.n_bases;
	size_t bi = din / B, bo = dout / B;
	size_t stride = s->max_tpairs * (din + dout);
	long r, j;

	kg_gnn_tscr_reserve(s, stride);
#pragma omp parallel for schedule(dynamic, 1)
	for (r = 0; r < (long)g->n_types; r++) {
		size_t qo = (size_t)r * din * dout / B, c;
		const float *Q = m->w + o->q + qo;
		float *gQ = grad + o->q + qo;
		uint64_t p0 = s->tpoff[r], np = s->tpoff[r + 1] - p0, p;
		float *gx = s->tscr + (size_t)omp_get_thread_num() * stride;
		float *gy = gx + s->max_tpairs * din;

		if (np == 0)
			continue;
		for (p = 0; p < np; p++) {
			pair_input(g, s, p0 + p, x, din, gx + p * din);
			memcpy(gy + p * dout, G + (size_t)s->pdst[p0 + p] * dout,
			    dout * sizeof(float));
		}
		for (c = 0; c < B; c++)
			kg_sgemm(KG_TRANS, KG_NO_TRANS, bi, bo, np, 1.0f,
			    gx + c * bi, din, gy + c * bo, dout, 1.0f,
			    gQ + c * bi * bo, bo);
		for (c = 0; c < B; c++)
			kg_sgemm(KG_NO_TRANS, KG_TRANS, np, bi, bo, 1.0f,
			    gy + c * bo, dout, Q + c * bi * bo, bo, 0.0f,
			    s->py + p0 * din + c * bi, din);
	}
#pragma omp parallel for schedule(dynamic, 256)
	for (j = 0; j < (long)n_src; j++) {
		uint64_t q;

		for (q = s->soff[j]; q < s->soff[j + 1]; q++) {
			uint64_t e = s->by_src[q];

			if (q + AHEAD < g->n_msgs)
				prefetch_row(s->py + s->msg_pair[s->by_src[
				    q + AHEAD]] * din, din);
			axpy(din, g->norm[e], s->py + s->msg_pair[e] * din,
			    dx + (size_t)j * din);
		}
	}
}

/* Basis R-GCN: each destination adds its messages' A[r, b]-weighted rows
 * of the products t1 = x V_b (n_src rows per basis).  Each destination
 * row is written by one thread only, and in a fixed order, so the result
 * does not depend on the thread count. */
void
kg_gnn_basis_msgs(const struct kg_gnn *m, uint32_t l,
    const struct kg_gnn_graph *g, uint64_t n_src, const float *t1,
    float *out)
{
	size_t dout = m->c.dims[l + 1], B = m->c.n_bases;
	const float *A = m->w + m->lay[l].a;
	long i;

#pragma omp parallel for schedule(dynamic, 256)
	for (i = 0; i < (long)g->n_nodes; i++)
		for (uint64_t q = g->off[i]; q < g->off[i + 1]; q++) {
			size_t r = (size_t)g->type[q], j = (size_t)g->src[q];

			/* The rows are random reads into B n_src rows. */
			if (q + AHEAD < g->off[i + 1])
				for (size_t c = 0; c < B; c++)
					prefetch_row(t1 + (c * n_src + (size_t)
					    g->src[q + AHEAD]) * dout, dout);
			for (size_t c = 0; c < B; c++)
				axpy(dout, g->norm[q] * A[r * B + c],
				    t1 + (c * n_src + j) * dout,
				    out + (size_t)i * dout);
		}
}

/*
 * Basis R-GCN on blocks, aggregating first: when the sources outnumber
 * the destinations (a sampled block: 10 times at the first layer of
 * fan-outs 25 and 10), agg_b[i] = sum over i's messages of norm A[r, b]
 * x[src] (B rows of din per destination) and then out += agg_b V_b costs
 * GEMMs over the destinations, where x V_b over every source would cost
 * them over the sources.  Each agg row is summed by one thread in CSR
 * order.  agg goes to t1 (B blocks of n_dst rows).
 */
static void
basis_aggregate(const struct kg_gnn *m, uint32_t l,
    const struct kg_gnn_graph *g, const float *x, float *agg)
{
	size_t din = m->c.dims[l], B = m->c.n_bases, n = g->n_nodes;
	const float *A = m->w + m->lay[l].a;
	long i;

#pragma omp parallel for schedule(dynamic, 256)
	for (i = 0; i < (long)n; i++) {
		size_t c;

		for (c = 0; c < B; c++)
			memset(agg + (c * n + (size_t)i) * din, 0,
			    din * sizeof(float));
		for (uint64_t q = g->off[i]; q < g->off[i + 1]; q++) {
			const float *xj = x + (size_t)g->src[q] * din;
			size_t r = (size_t)g->type[q];

			if (q + AHEAD < g->off[i + 1])
				prefetch_row(x + (size_t)g->src[q + AHEAD] *
				    din, din);
			for (c = 0; c < B; c++)
				axpy(din, g->norm[q] * A[r * B + c], xj,
				    agg + (c * n + (size_t)i) * din);
		}
	}
}

static void
basis_forward_agg(const struct kg_gnn *m, uint32_t l,
    const struct kg_gnn_graph *g, const float *x, float *out,
    struct kg_gnn_state *s)
{
	size_t din = m->c.dims[l], dout = m->c.dims[l + 1], B = m->c.n_bases;
	size_t n = g->n_nodes, b;

	basis_aggregate(m, l, g, x, s->t1);
	for (b = 0; b < B; b++)
		mm(n, dout, din, s->t1 + b * n * din,
		    m->w + m->lay[l].v + b * din * dout, 1.0f, out);
}

/* Its backward: dV_b = agg_b^T G, dagg_b = G V_b^T (in dt), then dA by
 * type and dx by source through the messages. */
static void
basis_backward_agg(const struct kg_gnn *m, uint32_t l,
    const struct kg_gnn_graph *g, uint64_t n_src, const float *x,
    const float *G, float *dx, struct kg_gnn_state *s, float *grad)
{
	const struct kg_gnn_layer_off *o = &m->lay[l];
	size_t din = m->c.dims[l], dout = m->c.dims[l + 1], B = m->c.n_bases;
	size_t n = g->n_nodes, b;
	const float *A = m->w + o->a, *da = s->dt;
	float *gA = grad + o->a;
	long r, j;

	/* Later layers reused t1: aggregate again. */
	basis_aggregate(m, l, g, x, s->t1);
	for (b = 0; b < B; b++) {
		mm_tn(n, dout, din, s->t1 + b * n * din, G,
		    grad + o->v + b * din * dout);
		mm_nt(n, dout, din, G, m->w + o->v + b * din * dout, 0.0f,
		    s->dt + b * n * din);
	}
#pragma omp parallel for schedule(dynamic, 1)
	for (r = 0; r < (long)g->n_types; r++) {
		uint64_t q;

		for (q = s->toff[r]; q < s->toff[r + 1]; q++) {
			uint64_t e = s->by_type[q];
			size_t i = (size_t)s->dst[e], c;
			const float *xj = x + (size_t)g->src[e] * din;

			for (c = 0; c < B; c++)
				gA[(size_t)r * B + c] += g->norm[e] *
				    dot(din, da + (c * n + i) * din, xj);
		}
	}
#pragma omp parallel for schedule(dynamic, 256)
	for (j = 0; j < (long)n_src; j++) {
		float *row = dx + (size_t)j * din;
		uint64_t q;

		for (q = s->soff[j]; q < s->soff[j + 1]; q++) {
			uint64_t e = s->by_src[q];
			size_t i = (size_t)s->dst[e], c;
			size_t rr = (size_t)g->type[e];

			for (c = 0; c < B; c++)
				axpy(din, g->norm[e] * A[rr * B + c],
				    da + (c * n + i) * din, row);
		}
	}
}

void
kg_gnn_rgcn_forward(const struct kg_gnn *m, uint32_t l,
    const struct kg_gnn_graph *g, uint64_t n_src, const float *x, float *out,
    struct kg_gnn_state *s)
{
	kg_gnn_self_forward(m, l, g->n_nodes, x, out);
	if (m->c.decomp == KG_GNN_BASIS && n_src > g->n_nodes)
		basis_forward_agg(m, l, g, x, out, s);
	else if (m->c.decomp == KG_GNN_BASIS) {
		kg_gnn_src_products(m, l, n_src, x, s->t1);
		kg_gnn_basis_msgs(m, l, g, n_src, s->t1, out);
	} else
		kg_gnn_block_msgs(m, l, g, x, out, s);
}

/* Basis R-GCN backward: dA[r] by type, dt (the gradient of x V_b) by
 * source, then dV_b and dx through the products. */
static void
basis_backward(const struct kg_gnn *m, uint32_t l,
    const struct kg_gnn_graph *g, uint64_t n, const float *x, const float *G,
    float *dx, struct kg_gnn_state *s, float *grad)
{
	const struct kg_gnn_layer_off *o = &m->lay[l];
	size_t din = m->c.dims[l], dout = m->c.dims[l + 1], B = m->c.n_bases;
	const float *A = m->w + o->a;
	float *gA = grad + o->a;
	size_t b;
	long r, j;

	/* Later layers reused t1: recompute this layer's x V_b. */
	kg_gnn_src_products(m, l, n, x, s->t1);
#pragma omp parallel for schedule(dynamic, 1)
	for (r = 0; r < (long)g->n_types; r++) {
		uint64_t q;

		for (q = s->toff[r]; q < s->toff[r + 1]; q++) {
			uint64_t e = s->by_type[q];
			size_t i = (size_t)s->dst[e];
			size_t jj = (size_t)g->src[e], c;

			for (c = 0; c < B; c++)
				gA[(size_t)r * B + c] += g->norm[e] *
				    dot(dout, G + i * dout,
				    s->t1 + (c * n + jj) * dout);
		}
	}
#pragma omp parallel for schedule(dynamic, 256)
	for (j = 0; j < (long)n; j++) {
		size_t c;

		for (c = 0; c < B; c++) {
			float *row = s->dt + (c * n + (size_t)j) * dout;
			uint64_t q;

			memset(row, 0, dout * sizeof(float));
			for (q = s->soff[j]; q < s->soff[j + 1]; q++) {
				uint64_t e = s->by_src[q];
				size_t i = (size_t)s->dst[e];
				size_t rr = (size_t)g->type[e];

				axpy(dout, g->norm[e] * A[rr * B + c],
				    G + i * dout, row);
			}
		}
	}
	for (b = 0; b < B; b++) {
		mm_tn(n, dout, din, x, s->dt + b * n * dout,
		    grad + o->v + b * din * dout);
		mm_nt(n, dout, din, s->dt + b * n * dout,
		    m->w + o->v + b * din * dout, 1.0f, dx);
	}
}

void
kg_gnn_self_backward(const struct kg_gnn *m, uint32_t l, uint64_t n_dst,
    uint64_t n_src, const float *x, const float *G, float *dx, float *grad)
{
	const struct kg_gnn_layer_off *o = &m->lay[l];
	size_t din = m->c.dims[l], dout = m->c.dims[l + 1];

	mm_tn(n_dst, dout, din, x, G, grad + o->w0);
	sum_rows(n_dst, dout, G, grad + o->bias);
	mm_nt(n_dst, dout, din, G, m->w + o->w0, 0.0f, dx);
	/* Sources past the destinations have no self term. */
	if (n_src > n_dst)
		memset(dx + n_dst * din, 0, (n_src - n_dst) * din *
		    sizeof(float));
}

void
kg_gnn_rgcn_backward(const struct kg_gnn *m, uint32_t l,
    const struct kg_gnn_graph *g, uint64_t n_src, const float *x,
    const float *G, float *dx, struct kg_gnn_state *s, float *grad)
{
	kg_gnn_self_backward(m, l, g->n_nodes, n_src, x, G, dx, grad);
	if (m->c.decomp == KG_GNN_BASIS && n_src > g->n_nodes)
		basis_backward_agg(m, l, g, n_src, x, G, dx, s, grad);
	else if (m->c.decomp == KG_GNN_BASIS)
		basis_backward(m, l, g, n_src, x, G, dx, s, grad);
	else
		block_backward(m, l, g, n_src, x, G, dx, s, grad);
}
