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
				const float *v = at->vec + e * at->width;
				uint64_t j;

				for (j = 0; j < at->width; j++)
					axpy(d0, v[j], E + j * d0, o);
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
 * attribute, then value order), as the serial loop over the nodes would,
 * whatever the threads: so the columns are split (see sum_rows), every
 * thread walking all the nodes in order.  Each node's terms (the table
 * row and the coefficient of every value) are listed once beforehand, in
 * parallel over the nodes, so that the column passes read that list in
 * order instead of looking up every node's attributes again (random
 * reads into tables of millions of entities).
 */

/* Terms of node i (feature row e) into off/coef; returns their count,
 * 0 for a node on its learned row.  With off NULL, only counts. */
static size_t
node_terms(const struct kg_gnn *m, const struct kg_features *f, uint64_t e,
    uint64_t *off, float *coef)
{
	size_t cnt = 0, nt = 0, a, d0 = m->c.dims[0];
	float sc;
	int64_t k;
	uint64_t j;

	for (a = 0; a < m->n_attrs; a++) {
		const struct kg_features_attr *at = &f->attrs[a];

		if (!at->has[e])
			continue;
		cnt += at->text ? 1 : (size_t)(at->off[e + 1] - at->off[e]);
		nt += at->text ? at->width : (size_t)(at->off[e + 1] -
		    at->off[e]);
	}
	if (cnt == 0 || off == NULL)
		return cnt ? nt : 0;
	sc = 1.0f / (float)cnt;
	nt = 0;
	for (a = 0; a < m->n_attrs; a++) {
		const struct kg_features_attr *at = &f->attrs[a];

		if (!at->has[e])
			continue;
		if (at->text) {
			const float *v = at->vec + e * at->width;

			for (j = 0; j < at->width; j++, nt++) {
				off[nt] = m->attr_off[a] + j * d0;
				coef[nt] = sc * v[j];
			}
			continue;
		}
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

void
kg_gnn_attr_backward(const struct kg_gnn *m, const struct kg_features *f,
    const int32_t *frow, const int32_t *lrow, uint64_t n, const float *dout,
    float *grad, struct kg_gnn_state *s)
{
	size_t d0 = m->c.dims[0];
	uint64_t i, *to;
	long ii, c;

	if (m->n_attrs > 0) {
		terms_reserve(m, f, n, s);
		to = s->ato;
#pragma omp parallel for schedule(static, 1024)
		for (ii = 0; ii < (long)n; ii++)
			to[ii + 1] = node_terms(m, f, row_of(frow,
			    (uint64_t)ii), NULL, NULL);
		to[0] = 0;
		for (i = 0; i < n; i++)
			to[i + 1] += to[i];
		/* A safety net for a feature set other than the one the
		 * bound was taken from: grow rather than overrun. */
		if (to[n] + 1 > s->cap_aterm) {
			free(s->aoff);
			free(s->acoef);
			s->cap_aterm = to[n] + 1;
			s->aoff = kg_xmallocarray(s->cap_aterm,
			    sizeof(*s->aoff));
			s->acoef = kg_xmallocarray(s->cap_aterm,
			    sizeof(*s->acoef));
		}
#pragma omp parallel for schedule(static, 1024)
		for (ii = 0; ii < (long)n; ii++)
			node_terms(m, f, row_of(frow, (uint64_t)ii), s->aoff +
			    to[ii], s->acoef + to[ii]);
	}
	/* Learned rows: each node its own. */
#pragma omp parallel for schedule(static, 1024)
	for (ii = 0; ii < (long)n; ii++)
		if (m->n_attrs == 0 || s->ato[ii + 1] == s->ato[ii])
			axpy(d0, 1.0f, dout + (size_t)ii * d0, grad + m->learned +
			    row_of(lrow, (uint64_t)ii) * d0);
	if (m->n_attrs == 0)
		return;
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
