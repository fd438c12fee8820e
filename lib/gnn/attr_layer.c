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
			memcpy(o, m->w + m->learned + row_of(lrow, i) * d0,
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
 * element must add its nodes' terms in node order (then index order
 * within a node), as a serial loop over the nodes would, whatever the
 * threads: so every row is given to one thread.  The nodes' scales come
 * first (one pass over the nodes); each index attribute's entries are
 * then grouped by slot with a stable counting sort, and the rows (slots
 * of index attributes; the column chunks of text attributes, whose every
 * row each node reads) are summed in parallel, each over its own entries
 * in node order.  A node's learned row is its own: those go by node.
 */

/* sc[i]: 1 / (node i's attribute values), 0 for a node on its learned
 * row. */
static void
attr_scales(const struct kg_gnn *m, const struct kg_features *f,
    const int32_t *frow, uint64_t n, float *sc)
{
	long ii;

#pragma omp parallel for schedule(static, 1024)
	for (ii = 0; ii < (long)n; ii++) {
		uint64_t e = row_of(frow, (uint64_t)ii);
		size_t cnt = 0, a;

		for (a = 0; a < m->n_attrs; a++) {
			const struct kg_features_attr *at = &f->attrs[a];

			if (at->has[e])
				cnt += at->text ? 1 :
				    (size_t)(at->off[e + 1] - at->off[e]);
		}
		sc[ii] = cnt ? 1.0f / (float)cnt : 0.0f;
	}
}

/* Index attribute a's entries of the n nodes grouped by slot: the nodes
 * of slot k are anode[a][aoff[a][k] .. aoff[a][k + 1]), in node order.
 * The buffer was sized from a bound (attr_reserve); a count past it grows
 * it rather than overrun (a safety net no step reaches). */
static void
attr_group(const struct kg_features_attr *at, const int32_t *frow,
    uint64_t n, const float *sc, struct kg_gnn_state *s, size_t a)
{
	uint64_t i, k, w = at->width, *eoff = s->aoff[a];
	uint32_t *node;
	int64_t q;

	memset(eoff, 0, (w + 2) * sizeof(*eoff));
	for (i = 0; i < n; i++) {
		uint64_t e = row_of(frow, i);

		if (sc[i] != 0.0f && at->has[e])
			for (q = at->off[e]; q < at->off[e + 1]; q++)
				eoff[at->idx[q] + 2]++;
	}
	for (k = 0; k < w; k++)
		eoff[k + 2] += eoff[k + 1];
	if (eoff[w + 1] + 1 > s->acap[a]) {
		free(s->anode[a]);
		s->acap[a] = eoff[w + 1] + 1;
		s->anode[a] = kg_xmallocarray(s->acap[a], sizeof(*node));
	}
	node = s->anode[a];
	for (i = 0; i < n; i++) {
		uint64_t e = row_of(frow, i);

		if (sc[i] != 0.0f && at->has[e])
			for (q = at->off[e]; q < at->off[e + 1]; q++)
				node[eoff[at->idx[q] + 1]++] = (uint32_t)i;
	}
}

/* Columns [c0, c0 + COLS) of a text attribute's table G [width, d0]:
 * every node's terms, in node order (the whole table is read by every
 * node that has the attribute, so it goes by columns, each read of a
 * node's gradient being one cache line). */
static void
text_chunk(const struct kg_features_attr *at, const int32_t *frow,
    uint64_t n, const float *sc, const float *dout, size_t d0, size_t c0,
    float *G)
{
	size_t w = d0 - c0 < COLS ? d0 - c0 : COLS;
	uint64_t i, j;

	for (i = 0; i < n; i++) {
		uint64_t e = row_of(frow, i);
		const float *v = at->vec + e * at->width;

		if (sc[i] == 0.0f || !at->has[e])
			continue;
		for (j = 0; j < at->width; j++)
			axpy(w, sc[i] * v[j], dout + i * d0 + c0,
			    G + j * d0 + c0);
	}
}

/* Rows of the attribute tables: rows[k] is (attribute, row) for the
 * parallel loop below (for a text attribute, a chunk of columns). */
struct attr_row {
	uint32_t a;
	uint32_t r;
};

/*
 * Buffers of kg_gnn_attr_backward for n nodes of f, sized from bounds so
 * that they never grow between steps of one size: entries of index
 * attribute a at most min(its entries in f, n x the most any entity has),
 * the latter found once per feature set.
 */
static void
attr_reserve(const struct kg_gnn *m, const struct kg_features *f, uint64_t n,
    struct kg_gnn_state *s)
{
	size_t a, nrows = 0;
	uint64_t e;

	if (s->afeat != f || s->an_attrs != m->n_attrs) {
		for (a = 0; a < s->an_attrs; a++) {
			free(s->aoff[a]);
			free(s->anode[a]);
		}
		free(s->aoff);
		free(s->anode);
		free(s->amax);
		free(s->acap);
		s->an_attrs = m->n_attrs;
		s->afeat = f;
		s->aoff = kg_xcalloc(m->n_attrs + 1, sizeof(*s->aoff));
		s->anode = kg_xcalloc(m->n_attrs + 1, sizeof(*s->anode));
		s->amax = kg_xcalloc(m->n_attrs + 1, sizeof(*s->amax));
		s->acap = kg_xcalloc(m->n_attrs + 1, sizeof(*s->acap));
		for (a = 0; a < m->n_attrs; a++) {
			const struct kg_features_attr *at = &f->attrs[a];

			s->aoff[a] = kg_xcalloc(at->width + 2,
			    sizeof(*s->aoff[a]));
			if (at->text)
				continue;
			for (e = 0; e < f->n; e++)
				if ((uint64_t)(at->off[e + 1] - at->off[e]) >
				    s->amax[a])
					s->amax[a] = (uint64_t)(at->off[e + 1] -
					    at->off[e]);
		}
	}
	for (a = 0; a < m->n_attrs; a++) {
		const struct kg_features_attr *at = &f->attrs[a];
		uint64_t need = n * s->amax[a];

		nrows += at->text ? (size_t)col_chunks(m->c.dims[0]) :
		    at->width;
		if (at->text)
			continue;
		if (need > (uint64_t)at->off[f->n])
			need = (uint64_t)at->off[f->n];
		if (need + 1 > s->acap[a]) {
			free(s->anode[a]);
			s->acap[a] = need + 1;
			s->anode[a] = kg_xmallocarray(s->acap[a],
			    sizeof(*s->anode[a]));
		}
	}
	if (n + 1 > s->cap_asc) {
		free(s->asc);
		s->cap_asc = n + 1;
		s->asc = kg_xmallocarray(s->cap_asc, sizeof(*s->asc));
	}
	if (nrows + 1 > s->cap_arows) {
		free(s->arows);
		s->cap_arows = nrows + 1;
		s->arows = kg_xmallocarray(s->cap_arows,
		    sizeof(struct attr_row));
	}
}

void
kg_gnn_attr_release(struct kg_gnn_state *s)
{
	size_t a;

	for (a = 0; a < s->an_attrs; a++) {
		free(s->aoff[a]);
		free(s->anode[a]);
	}
	free(s->aoff);
	free(s->anode);
	free(s->amax);
	free(s->acap);
	free(s->asc);
	free(s->arows);
}

void
kg_gnn_attr_backward(const struct kg_gnn *m, const struct kg_features *f,
    const int32_t *frow, const int32_t *lrow, uint64_t n, const float *dout,
    float *grad, struct kg_gnn_state *s)
{
	size_t d0 = m->c.dims[0], a, nrows = 0;
	struct attr_row *rows;
	float *sc;
	long ii, k;

	if (m->n_attrs == 0) {
		/* Learned only: every node on its own row. */
#pragma omp parallel for schedule(static, 1024)
		for (ii = 0; ii < (long)n; ii++)
			axpy(d0, 1.0f, dout + (size_t)ii * d0, grad +
			    m->learned + row_of(lrow, (uint64_t)ii) * d0);
		return;
	}
	attr_reserve(m, f, n, s);
	sc = s->asc;
	rows = (struct attr_row *)s->arows;
	attr_scales(m, f, frow, n, sc);
	/* Learned rows: one per node. */
#pragma omp parallel for schedule(static, 1024)
	for (ii = 0; ii < (long)n; ii++)
		if (sc[ii] == 0.0f)
			axpy(d0, 1.0f, dout + (size_t)ii * d0, grad + m->learned +
			    row_of(lrow, (uint64_t)ii) * d0);
	for (a = 0; a < m->n_attrs; a++) {
		const struct kg_features_attr *at = &f->attrs[a];
		uint32_t r, nr = at->text ? (uint32_t)col_chunks(d0) :
		    (uint32_t)at->width;

		if (!at->text)
			attr_group(at, frow, n, sc, s, a);
		for (r = 0; r < nr; r++)
			rows[nrows++] = (struct attr_row){ (uint32_t)a, r };
	}
#pragma omp parallel for schedule(dynamic, 1)
	for (k = 0; k < (long)nrows; k++) {
		const struct kg_features_attr *at = &f->attrs[rows[k].a];
		size_t r = rows[k].r;
		float *G = grad + m->attr_off[rows[k].a];
		uint64_t q, i;

		if (at->text) {
			text_chunk(at, frow, n, sc, dout, d0, r * COLS, G);
			continue;
		}
		G += r * d0;
		for (q = s->aoff[rows[k].a][r]; q < s->aoff[rows[k].a][r + 1];
		    q++) {
			i = s->anode[rows[k].a][q];
			axpy(d0, sc[i], dout + i * d0, G);
		}
	}
}
