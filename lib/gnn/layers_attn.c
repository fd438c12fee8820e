/*
 * gnn/layers_attn: the relation-aware attention layer (gnn.h), forward
 * and backward.
 */
#include <math.h>
#include <string.h>

#include "gnn/kernels.h"
#include "gnn/layers.h"

#define LEAKY_SLOPE 0.2f

/* Destination node dst0 + i of g's i-th list: its messages' scores (u,
 * when not NULL, before the LeakyReLU), their softmax into al (indexed
 * like g's messages) and the weighted sum added to out. */
static void
attn_node(const struct kg_gnn *m, uint32_t l, const struct kg_gnn_graph *g,
    uint64_t i, const float *zi_row, const float *z, float *u, float *al,
    float *oi)
{
	const struct kg_gnn_layer_off *o = &m->lay[l];
	size_t dout = m->c.dims[l + 1];
	const float *as = m->w + o->a_src, *ar = m->w + o->a_rel;
	const float *rel = m->w + o->rel;
	float zi = dot(dout, m->w + o->a_dst, zi_row), mx = -INFINITY;
	uint64_t e;
	double sum = 0.0;

	for (e = g->off[i]; e < g->off[i + 1]; e++) {
		size_t j = (size_t)g->src[e], r = (size_t)g->type[e];
		float v = zi + dot(dout, as, z + j * dout) +
		    dot(dout, ar, rel + r * dout);
		float lv = v > 0.0f ? v : LEAKY_SLOPE * v;

		if (u != NULL)
			u[e] = v;
		al[e] = lv;
		if (lv > mx)
			mx = lv;
	}
	for (e = g->off[i]; e < g->off[i + 1]; e++) {
		al[e] = expf(al[e] - mx);
		sum += al[e];
	}
	for (e = g->off[i]; e < g->off[i + 1]; e++) {
		size_t j = (size_t)g->src[e], r = (size_t)g->type[e];

		al[e] = (float)(al[e] / sum);
		axpy(dout, al[e], z + j * dout, oi);
		axpy(dout, al[e], rel + r * dout, oi);
	}
}

void
kg_gnn_attn_msgs(const struct kg_gnn *m, uint32_t l,
    const struct kg_gnn_graph *g, uint64_t dst0, const float *z, float *u,
    float *al, float *out)
{
	size_t dout = m->c.dims[l + 1];
	long ii;

	/* One thread per destination row (deterministic, see above). */
#pragma omp parallel for schedule(dynamic, 256)
	for (ii = 0; ii < (long)g->n_nodes; ii++) {
		size_t i = (size_t)ii;

		attn_node(m, l, g, i, z + (dst0 + i) * dout, z, u, al,
		    out + i * dout);
	}
}

void
kg_gnn_attn_forward(const struct kg_gnn *m, uint32_t l,
    const struct kg_gnn_graph *g, uint64_t n_src, const float *x, float *out,
    struct kg_gnn_state *s)
{
	kg_gnn_self_forward(m, l, g->n_nodes, x, out);
	kg_gnn_src_products(m, l, n_src, x, s->t1);
	kg_gnn_attn_msgs(m, l, g, 0, s->t1, s->u[l], s->alpha[l], out);
}

/*
 * The backward pass in four passes, each sum owned by one thread and
 * added in CSR order: per destination, dL/du of each message (kept in da)
 * and their sum (nsum); per source, dz; per type, the relation rows; by
 * columns, the attention vectors.
 */

/* Per destination i: da[e] = dL/du_e of its messages, nsum[i] their sum. */
static void
attn_back_scores(const struct kg_gnn *m, uint32_t l,
    const struct kg_gnn_graph *g, const float *G, struct kg_gnn_state *s)
{
	size_t dout = m->c.dims[l + 1];
	const float *rel = m->w + m->lay[l].rel;
	const float *z = s->t1, *u = s->u[l], *al = s->alpha[l];
	float *da = s->da, *nsum = s->nsum;
	long ii;

#pragma omp parallel for schedule(dynamic, 256)
	for (ii = 0; ii < (long)g->n_nodes; ii++) {
		size_t i = (size_t)ii;
		const float *gi = G + i * dout;
		double ssum = 0.0, dusum = 0.0;
		uint64_t e0 = g->off[i], e1 = g->off[i + 1], e;

		/* dL/dalpha_e = g_i . (z_j + e_r) */
		for (e = e0; e < e1; e++) {
			size_t j = (size_t)g->src[e], r = (size_t)g->type[e];

			da[e] = dot(dout, gi, z + j * dout) +
			    dot(dout, gi, rel + r * dout);
			ssum += al[e] * da[e];
		}
		for (e = e0; e < e1; e++) {
			float dl = al[e] * (da[e] - (float)ssum);

			da[e] = dl * (u[e] > 0.0f ? 1.0f : LEAKY_SLOPE);
			dusum += da[e];
		}
		nsum[i] = (float)dusum;
	}
}

/* dz_j: its messages as a source, and its own destination term where
 * node j's turn came in CSR order (after the messages into nodes <= j). */
static void
attn_back_dz(const struct kg_gnn *m, uint32_t l,
    const struct kg_gnn_graph *g, uint64_t n_src, const float *G,
    struct kg_gnn_state *s)
{
	size_t dout = m->c.dims[l + 1];
	const float *ad = m->w + m->lay[l].a_dst, *as = m->w + m->lay[l].a_src;
	const float *al = s->alpha[l], *da = s->da, *nsum = s->nsum;
	float *dz = s->dt;
	long ii;

#pragma omp parallel for schedule(dynamic, 256)
	for (ii = 0; ii < (long)n_src; ii++) {
		size_t j = (size_t)ii;
		float *dzj = dz + j * dout;
		uint64_t q;
		/* Sources past the destinations have no destination term. */
		int self = j >= g->n_nodes;

		memset(dzj, 0, dout * sizeof(float));
		for (q = s->soff[j]; q < s->soff[j + 1]; q++) {
			uint64_t e = s->by_src[q];
			size_t i = (size_t)s->dst[e];

			if (!self && i > j) {
				axpy(dout, nsum[j], ad, dzj);
				self = 1;
			}
			axpy2(dout, al[e], G + i * dout, da[e], as, dzj);
		}
		if (!self)
			axpy(dout, nsum[j], ad, dzj);
	}
}

/* The relation rows, by type. */
static void
attn_back_rel(const struct kg_gnn *m, uint32_t l,
    const struct kg_gnn_graph *g, const float *G,
    const struct kg_gnn_state *s, float *grad)
{
	size_t dout = m->c.dims[l + 1];
	const float *ar = m->w + m->lay[l].a_rel;
	const float *al = s->alpha[l], *da = s->da;
	float *grel = grad + m->lay[l].rel;
	long ii;

#pragma omp parallel for schedule(dynamic, 1)
	for (ii = 0; ii < (long)g->n_types; ii++) {
		float *gr = grel + (size_t)ii * dout;
		uint64_t q;

		for (q = s->toff[ii]; q < s->toff[ii + 1]; q++) {
			uint64_t e = s->by_type[q];

			axpy2(dout, al[e], G + (size_t)s->dst[e] * dout, da[e],
			    ar, gr);
		}
	}
}

/* The attention vectors a_src, a_rel and a_dst, by columns. */
static void
attn_back_vectors(const struct kg_gnn *m, uint32_t l,
    const struct kg_gnn_graph *g, const struct kg_gnn_state *s, float *grad)
{
	const struct kg_gnn_layer_off *o = &m->lay[l];
	size_t dout = m->c.dims[l + 1];
	const float *rel = m->w + o->rel, *z = s->t1;
	const float *da = s->da, *nsum = s->nsum;
	float *gad = grad + o->a_dst, *gas = grad + o->a_src;
	float *gar = grad + o->a_rel;
	long c;

#pragma omp parallel for schedule(static, 1)
	for (c = 0; c < col_chunks(dout); c++) {
		size_t c0 = (size_t)c * COLS;
		size_t w = dout - c0 < COLS ? dout - c0 : COLS, i;
		float s_as[COLS], s_ar[COLS], s_ad[COLS];
		uint64_t e;

		memcpy(s_as, gas + c0, w * sizeof(float));
		memcpy(s_ar, gar + c0, w * sizeof(float));
		memcpy(s_ad, gad + c0, w * sizeof(float));
		for (i = 0; i < g->n_nodes; i++) {
			for (e = g->off[i]; e < g->off[i + 1]; e++) {
				size_t j = (size_t)g->src[e];
				size_t r = (size_t)g->type[e];

				axpy(w, da[e], z + j * dout + c0, s_as);
				axpy(w, da[e], rel + r * dout + c0, s_ar);
			}
			axpy(w, nsum[i], z + i * dout + c0, s_ad);
		}
		memcpy(gas + c0, s_as, w * sizeof(float));
		memcpy(gar + c0, s_ar, w * sizeof(float));
		memcpy(gad + c0, s_ad, w * sizeof(float));
	}
}

void
kg_gnn_attn_backward(const struct kg_gnn *m, uint32_t l,
    const struct kg_gnn_graph *g, uint64_t n_src, const float *x,
    const float *G, float *dx, struct kg_gnn_state *s, float *grad)
{
	const struct kg_gnn_layer_off *o = &m->lay[l];
	size_t din = m->c.dims[l], dout = m->c.dims[l + 1];

	/* z was overwritten by later layers' forward: recompute it. */
	kg_gnn_src_products(m, l, n_src, x, s->t1);
	kg_gnn_self_backward(m, l, g->n_nodes, n_src, x, G, dx, grad);
	attn_back_scores(m, l, g, G, s);
	attn_back_dz(m, l, g, n_src, G, s);
	attn_back_rel(m, l, g, G, s, grad);
	attn_back_vectors(m, l, g, s, grad);
	mm_tn(n_src, dout, din, x, s->dt, grad + o->w);
	mm_nt(n_src, dout, din, s->dt, m->w + o->w, 1.0f, dx);
}
