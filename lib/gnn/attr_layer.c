/*
 * gnn/attr_layer: the attribute layer (layer 0, gnn.h): each entity's
 * input embedding is the mean of its attribute values' embeddings, or
 * its learned row.
 */
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
 * The gradients scatter to table rows shared by many nodes: split by
 * columns (see sum_rows), every thread walking all the nodes in order.
 */
void
kg_gnn_attr_backward(const struct kg_gnn *m, const struct kg_features *f,
    const int32_t *frow, const int32_t *lrow, uint64_t n, const float *dout,
    float *grad)
{
	size_t d0 = m->c.dims[0];
	long c;

#pragma omp parallel for schedule(static, 1)
	for (c = 0; c < col_chunks(d0); c++) {
		size_t c0 = (size_t)c * COLS;
		size_t w = d0 - c0 < COLS ? d0 - c0 : COLS, a;
		uint64_t i;
		int64_t k;

		for (i = 0; i < n; i++) {
			const float *g = dout + i * d0 + c0;
			uint64_t e = row_of(frow, i);
			size_t cnt = 0;
			float sc;

			for (a = 0; a < m->n_attrs; a++) {
				const struct kg_features_attr *at = &f->attrs[a];

				if (at->has[e])
					cnt += at->text ? 1 :
					    (size_t)(at->off[e + 1] - at->off[e]);
			}
			if (cnt == 0) {
				axpy(w, 1.0f, g, grad + m->learned +
				    row_of(lrow, i) * d0 + c0);
				continue;
			}
			sc = 1.0f / (float)cnt;
			for (a = 0; a < m->n_attrs; a++) {
				const struct kg_features_attr *at = &f->attrs[a];
				float *G = grad + m->attr_off[a] + c0;

				if (!at->has[e])
					continue;
				if (at->text) {
					const float *v = at->vec + e * at->width;
					uint64_t j;

					for (j = 0; j < at->width; j++)
						axpy(w, sc * v[j], g,
						    G + j * d0);
					continue;
				}
				for (k = at->off[e]; k < at->off[e + 1]; k++)
					axpy(w, sc, g,
					    G + (size_t)at->idx[k] * d0);
			}
		}
	}
}
