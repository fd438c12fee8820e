/*
 * gnn/layers_rgcn: the R-GCN layer (gnn.h), basis or block-diagonal
 * weights, forward and backward.
 */
#include <omp.h>
#include <string.h>

#include "gnn/kernels.h"
#include "gnn/layers.h"

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
static void
block_forward(const struct kg_gnn *m, uint32_t l, const struct kg_gnn_graph *g,
    const float *x, float *out, struct kg_gnn_state *s)
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
    const struct kg_gnn_graph *g, const float *x, const float *G, float *dx,
    struct kg_gnn_state *s, float *grad)
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
	for (j = 0; j < (long)g->n_nodes; j++) {
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

/* Basis R-GCN: the products x V_b for every basis into t1, then each
 * destination adds its messages' A[r, b]-weighted rows.  Each destination
 * row is written by one thread only, and in a fixed order, so the result
 * does not depend on the thread count. */
static void
basis_forward(const struct kg_gnn *m, uint32_t l,
    const struct kg_gnn_graph *g, const float *x, float *out,
    struct kg_gnn_state *s)
{
	const struct kg_gnn_layer_off *o = &m->lay[l];
	size_t din = m->c.dims[l], dout = m->c.dims[l + 1], B = m->c.n_bases;
	const float *A = m->w + o->a;
	uint64_t n = g->n_nodes;
	size_t b;
	long i;

	for (b = 0; b < B; b++)
		mm(n, dout, din, x, m->w + o->v + b * din * dout, 0.0f,
		    s->t1 + b * n * dout);
#pragma omp parallel for schedule(dynamic, 256)
	for (i = 0; i < (long)n; i++)
		for (uint64_t q = g->off[i]; q < g->off[i + 1]; q++) {
			size_t r = (size_t)g->type[q], j = (size_t)g->src[q];

			for (size_t c = 0; c < B; c++)
				axpy(dout, g->norm[q] * A[r * B + c],
				    s->t1 + (c * n + j) * dout,
				    out + (size_t)i * dout);
		}
}

void
kg_gnn_rgcn_forward(const struct kg_gnn *m, uint32_t l,
    const struct kg_gnn_graph *g, const float *x, float *out,
    struct kg_gnn_state *s)
{
	const struct kg_gnn_layer_off *o = &m->lay[l];
	size_t din = m->c.dims[l], dout = m->c.dims[l + 1];
	uint64_t n = g->n_nodes;

	fill_bias(n, dout, m->w + o->bias, out);
	mm(n, dout, din, x, m->w + o->w0, 1.0f, out);
	if (m->c.decomp == KG_GNN_BASIS)
		basis_forward(m, l, g, x, out, s);
	else
		block_forward(m, l, g, x, out, s);
}

/* Basis R-GCN backward: dA[r] by type, dt (the gradient of x V_b) by
 * source, then dV_b and dx through the products. */
static void
basis_backward(const struct kg_gnn *m, uint32_t l,
    const struct kg_gnn_graph *g, const float *x, const float *G, float *dx,
    struct kg_gnn_state *s, float *grad)
{
	const struct kg_gnn_layer_off *o = &m->lay[l];
	size_t din = m->c.dims[l], dout = m->c.dims[l + 1], B = m->c.n_bases;
	const float *A = m->w + o->a;
	float *gA = grad + o->a;
	uint64_t n = g->n_nodes;
	size_t b;
	long r, j;

	/* Later layers reused t1: recompute this layer's x V_b. */
	for (b = 0; b < B; b++)
		mm(n, dout, din, x, m->w + o->v + b * din * dout, 0.0f,
		    s->t1 + b * n * dout);
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

/* G: dL/d(out) [n, dout]; dx (n x din) is overwritten. */
void
kg_gnn_rgcn_backward(const struct kg_gnn *m, uint32_t l,
    const struct kg_gnn_graph *g, const float *x, const float *G, float *dx,
    struct kg_gnn_state *s, float *grad)
{
	const struct kg_gnn_layer_off *o = &m->lay[l];
	size_t din = m->c.dims[l], dout = m->c.dims[l + 1];
	uint64_t n = g->n_nodes;

	mm_tn(n, dout, din, x, G, grad + o->w0);
	sum_rows(n, dout, G, grad + o->bias);
	mm_nt(n, dout, din, G, m->w + o->w0, 0.0f, dx);
	if (m->c.decomp == KG_GNN_BASIS)
		basis_backward(m, l, g, x, G, dx, s, grad);
	else
		block_backward(m, l, g, x, G, dx, s, grad);
}
