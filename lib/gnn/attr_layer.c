/*
 * gnn/attr_layer: the attribute layer (layer 0, gnn.h): each entity's
 * input embedding is the mean of its attribute values' embeddings, or
 * its learned row.
 */
#include <stdlib.h>
#include <string.h>

#include "gnn/kernels.h"
#include "gnn/layers.h"

int
kg_gnn_uses_learned(const struct kg_gnn *m, const struct kg_features *f,
    uint64_t frow)
{
	size_t a;

	for (a = 0; a < m->n_attrs; a++) {
		const struct kg_features_attr *at = &f->attrs[a];

		if (at->has[frow] && (at->text || at->off[frow + 1] >
		    at->off[frow]))
			return 0;
	}
	return 1;
}

/* The values an entity has: one per text attribute, one per slot of an
 * index attribute; its input row is their mean (0: its learned row). */
static size_t
node_count(const struct kg_gnn *m, const struct kg_features *f, uint64_t e)
{
	size_t cnt = 0, a;

	for (a = 0; a < m->n_attrs; a++) {
		const struct kg_features_attr *at = &f->attrs[a];

		if (at->has[e])
			cnt += at->text ? 1 : (size_t)(at->off[e + 1] -
			    at->off[e]);
	}
	return cnt;
}

/*
 * o[c] += sum_j v[j] E[j, c] for c < d, the terms added in order of j,
 * one product and one sum each, as width calls of axpy would.  Chunks
 * of 64 columns are held in eight vectors of eight across the whole sum
 * over j, so that an element is loaded and stored once per chunk instead
 * of once per term (GCC's vector extension: element-wise, the same
 * arithmetic as the scalar loop).
 */
#if defined(__GNUC__)
typedef float v8f __attribute__((vector_size(32)));

#define V8_LOAD(x, p) memcpy(&(x), (p), sizeof(v8f))
#define V8_STORE(p, x) memcpy((p), &(x), sizeof(v8f))
#define TCOLS 64
#else
#define TCOLS 0
#endif

KG_HOT_CLONES
static void
text_row_forward(size_t width, size_t d, const float *restrict v,
    const float *restrict E, float *restrict o)
{
	size_t c0 = 0, j, k;

#if TCOLS > 0
	for (; c0 + TCOLS <= d; c0 += TCOLS) {
		v8f acc[8], t;

#pragma GCC unroll 8
		for (k = 0; k < 8; k++)
			V8_LOAD(acc[k], o + c0 + 8 * k);
		for (j = 0; j < width; j++) {
			const float *er = E + j * d + c0;
			float a = v[j];

#pragma GCC unroll 8
			for (k = 0; k < 8; k++) {
				V8_LOAD(t, er + 8 * k);
				acc[k] += a * t;
			}
		}
#pragma GCC unroll 8
		for (k = 0; k < 8; k++)
			V8_STORE(o + c0 + 8 * k, acc[k]);
	}
#endif
	if (c0 < d)
		for (j = 0; j < width; j++)
			axpy(d - c0, v[j], E + j * d + c0, o + c0);
}

void
kg_gnn_attr_forward(const struct kg_gnn *m, const struct kg_features *f,
    const int32_t *frow, const int32_t *lrow, uint64_t n, float *out)
{
	size_t d0 = m->c.dims[0];
	long ii;

	/* Each row is written by one thread only. */
#pragma omp parallel for schedule(dynamic, 256)
	for (ii = 0; ii < (long)n; ii++) {
		uint64_t i = (uint64_t)ii, e = row_of(frow, i);
		float *o = out + i * d0;
		size_t cnt = 0, a;
		int64_t k;

		memset(o, 0, d0 * sizeof(float));
		for (a = 0; a < m->n_attrs; a++) {
			const struct kg_features_attr *at = &f->attrs[a];
			const float *E = m->w + m->attr_off[a];

			if (!at->has[e])
				continue;
			if (at->text) {
				text_row_forward(at->width, d0, at->vec + e *
				    at->width, E, o);
				cnt++;
				continue;
			}
			for (k = at->off[e]; k < at->off[e + 1]; k++) {
				axpy(d0, 1.0f, E + (size_t)at->idx[k] * d0, o);
				cnt++;
			}
		}
		if (cnt == 0)
			memcpy(o, kg_gnn_learned_rows(m) + row_of(lrow, i) * d0,
			    d0 * sizeof(float));
		else {
			float sc = 1.0f / (float)cnt;
			size_t j;

			for (j = 0; j < d0; j++)
				o[j] *= sc;
		}
	}
}

/*
 * The gradients scatter to table rows shared by many nodes.  Each table
 * element must add its nodes' terms in node order (and within a node in
 * value order), as the serial loop over the nodes would, whatever the
 * threads.  A text attribute's table row j gets one term from every node
 * with the attribute, sc v[j] times its gradient row: the table rows go
 * in blocks to the threads (text_rows_backward), each block's rows
 * staying in cache while the nodes pass in order.  An index attribute's
 * rows are hit irregularly: each node's index terms (the table row and
 * its coefficient) are listed once beforehand, in parallel over the
 * nodes, and the columns are split (see sum_rows), every thread walking
 * that list in order instead of looking up every node's attributes
 * again (random reads into tables of millions of entities).
 */

/* Index-attribute terms of node i (feature row e) into off/coef; returns
 * their count.  With off NULL, only counts. */
static size_t
node_terms(const struct kg_gnn *m, const struct kg_features *f, uint64_t e,
    uint64_t *off, float *coef)
{
	size_t cnt = node_count(m, f, e), nt = 0, a, d0 = m->c.dims[0];
	float sc;
	int64_t k;

	for (a = 0; a < m->n_attrs; a++) {
		const struct kg_features_attr *at = &f->attrs[a];

		if (at->has[e] && !at->text)
			nt += (size_t)(at->off[e + 1] - at->off[e]);
	}
	if (nt == 0 || off == NULL)
		return nt;
	sc = 1.0f / (float)cnt;
	nt = 0;
	for (a = 0; a < m->n_attrs; a++) {
		const struct kg_features_attr *at = &f->attrs[a];

		if (!at->has[e] || at->text)
			continue;
		for (k = at->off[e]; k < at->off[e + 1]; k++, nt++) {
			off[nt] = m->attr_off[a] + (size_t)at->idx[k] * d0;
			coef[nt] = sc;
		}
	}
	return nt;
}

/* The most terms any entity of f has (once per feature set), and the
 * buffers for n nodes: the terms never outgrow them. */
static void
terms_reserve(const struct kg_gnn *m, const struct kg_features *f,
    uint64_t n, struct kg_gnn_state *s)
{
	uint64_t e, need;

	if (s->afeat != f) {
		s->afeat = f;
		s->amax = 0;
		for (e = 0; e < f->n; e++) {
			size_t t = node_terms(m, f, e, NULL, NULL);

			if (t > s->amax)
				s->amax = t;
		}
	}
	if (n + 1 > s->cap_ato) {
		free(s->ato);
		s->cap_ato = n + 1;
		s->ato = kg_xmallocarray(s->cap_ato, sizeof(*s->ato));
	}
	need = n * s->amax + 1;
	if (need > s->cap_aterm) {
		free(s->aoff);
		free(s->acoef);
		s->cap_aterm = need;
		s->aoff = kg_xmallocarray(need, sizeof(*s->aoff));
		s->acoef = kg_xmallocarray(need, sizeof(*s->acoef));
	}
}

void
kg_gnn_state_reserve_attrs(const struct kg_gnn *m,
    const struct kg_features *f, uint64_t n, struct kg_gnn_state *s)
{
	if (m->n_attrs > 0 && f != NULL)
		terms_reserve(m, f, n, s);
}

void
kg_gnn_attr_release(struct kg_gnn_state *s)
{
	free(s->ato);
	free(s->aoff);
	free(s->acoef);
}

/* Table rows of a text attribute per block: one cache line of a node's
 * feature vector. */
#define TROWS 16

/* Nodes whose terms one pass adds to a table row before storing it. */
#define TNODES 4

/*
 * gE[j] += (sc_i v_i[j]) dout_i for the rows j of [j0, j1) of text
 * attribute a's table gradient gE, over the nl nodes of list (in order,
 * each with the attribute): one product and one sum a term, as one axpy
 * per node and row would, but TNODES nodes' terms added to an element
 * before it is stored again.
 */
KG_HOT_CLONES
static void
text_rows_backward(const struct kg_gnn *m, const struct kg_features *f,
    size_t a, const int32_t *frow, const uint64_t *list, uint64_t nl,
    const float *dout, size_t j0, size_t j1, float *restrict gE)
{
	const struct kg_features_attr *at = &f->attrs[a];
	size_t d = m->c.dims[0], j, k, t;
	uint64_t q;

	for (q = 0; q < nl; q += TNODES) {
		size_t nt = nl - q < TNODES ? (size_t)(nl - q) : TNODES;
		const float *v[TNODES], *g[TNODES];
		float sc[TNODES];

		/* Each block reads one line of every node's vector: ask
		 * for the next nodes' now. */
		for (t = 0; t < TNODES && q + TNODES + t < nl; t++)
			__builtin_prefetch(at->vec + row_of(frow,
			    list[q + TNODES + t]) * at->width + j0);
		for (t = 0; t < nt; t++) {
			uint64_t e = row_of(frow, list[q + t]);

			v[t] = at->vec + e * at->width;
			g[t] = dout + list[q + t] * d;
			sc[t] = 1.0f / (float)node_count(m, f, e);
		}
		for (j = j0; j < j1; j++) {
			float *restrict r = gE + j * d;

			if (nt == TNODES) {
				const float *restrict g0 = g[0], *restrict g1 =
				    g[1], *restrict g2 = g[2], *restrict g3 = g[3];
				float c0 = sc[0] * v[0][j], c1 = sc[1] * v[1][j];
				float c2 = sc[2] * v[2][j], c3 = sc[3] * v[3][j];

#pragma omp simd
				for (k = 0; k < d; k++)
					r[k] = (((r[k] + c0 * g0[k]) + c1 * g1[k]) +
					    c2 * g2[k]) + c3 * g3[k];
				continue;
			}
			for (t = 0; t < nt; t++) {
				const float *restrict gt = g[t];
				float c = sc[t] * v[t][j];

#pragma omp simd
				for (k = 0; k < d; k++)
					r[k] += c * gt[k];
			}
		}
	}
}

/* The gradient of the index attributes' tables: the terms listed, then
 * added by column chunks. */
static void
index_backward(const struct kg_gnn *m, const struct kg_features *f,
    const int32_t *frow, uint64_t n, const float *dout, float *grad,
    struct kg_gnn_state *s)
{
	size_t d0 = m->c.dims[0];
	uint64_t i, *to;
	long ii, c;

	terms_reserve(m, f, n, s);
	to = s->ato;
#pragma omp parallel for schedule(static, 1024)
	for (ii = 0; ii < (long)n; ii++)
		to[ii + 1] = node_terms(m, f, row_of(frow, (uint64_t)ii), NULL,
		    NULL);
	to[0] = 0;
	for (i = 0; i < n; i++)
		to[i + 1] += to[i];
	if (to[n] == 0)
		return;
	/* A safety net for a feature set other than the one the bound was
	 * taken from: grow rather than overrun. */
	if (to[n] + 1 > s->cap_aterm) {
		free(s->aoff);
		free(s->acoef);
		s->cap_aterm = to[n] + 1;
		s->aoff = kg_xmallocarray(s->cap_aterm, sizeof(*s->aoff));
		s->acoef = kg_xmallocarray(s->cap_aterm, sizeof(*s->acoef));
	}
#pragma omp parallel for schedule(static, 1024)
	for (ii = 0; ii < (long)n; ii++)
		node_terms(m, f, row_of(frow, (uint64_t)ii), s->aoff + to[ii],
		    s->acoef + to[ii]);
#pragma omp parallel for schedule(static, 1)
	for (c = 0; c < col_chunks(d0); c++) {
		size_t c0 = (size_t)c * COLS;
		size_t w = d0 - c0 < COLS ? d0 - c0 : COLS;
		uint64_t q;

		for (i = 0; i < n; i++)
			for (q = s->ato[i]; q < s->ato[i + 1]; q++)
				axpy(w, s->acoef[q], dout + i * d0 + c0,
				    grad + s->aoff[q] + c0);
	}
}

void
kg_gnn_attr_backward(const struct kg_gnn *m, const struct kg_features *f,
    const int32_t *frow, const int32_t *lrow, uint64_t n, const float *dout,
    float *grad, struct kg_gnn_state *s)
{
	size_t d0 = m->c.dims[0], a;
	long ii, b;

	/* Learned rows: each node its own. */
#pragma omp parallel for schedule(static, 1024)
	for (ii = 0; ii < (long)n; ii++)
		if (m->n_attrs == 0 || node_count(m, f, row_of(frow,
		    (uint64_t)ii)) == 0)
			axpy(d0, 1.0f, dout + (size_t)ii * d0, grad + m->learned +
			    row_of(lrow, (uint64_t)ii) * d0);
	if (m->n_attrs == 0)
		return;
	index_backward(m, f, frow, n, dout, grad, s);
	for (a = 0; a < m->n_attrs; a++) {
		const struct kg_features_attr *at = &f->attrs[a];
		uint64_t i, nl = 0, *list = s->ato;

		if (!at->text)
			continue;
		/* ato (n + 1 slots) is free once the index terms are in. */
		for (i = 0; i < n; i++)
			if (at->has[row_of(frow, i)])
				list[nl++] = i;
#pragma omp parallel for schedule(dynamic, 1)
		for (b = 0; b < (long)((at->width + TROWS - 1) / TROWS); b++) {
			size_t j0 = (size_t)b * TROWS;

			text_rows_backward(m, f, a, frow, list, nl, dout, j0,
			    j0 + TROWS < at->width ? j0 + TROWS : at->width,
			    grad + m->attr_off[a]);
		}
	}
}
