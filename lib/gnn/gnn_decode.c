#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "gnn/gnn_decode.h"
#include "kge/grad.h"
#include "core/util.h"

/* Positives per chunk: fixed, so that no result depends on the threads. */
#define DEC_CHUNK 32

static void *
grow(void *p, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap && p != NULL)
		return p;
	free(p);
	*cap = need;
	return kg_xmallocarray(need + 1, size);
}

/* Per-thread scratch of one chunk of np pairs. */
static size_t
chunk_floats(const struct kg_model *m, size_t np)
{
	return np * (2 * (size_t)m->dim + m->rel_width + 2) +
	    kg_grad_work_size(m, np, 1);
}

static inline void
add_row(float *restrict out, const float *restrict src, size_t n)
{
#pragma omp simd
	for (size_t x = 0; x < n; x++)
		out[x] += src[x];
}

double
kg_gnn_decode(const struct kg_model *m, const struct kg_loss *l,
    const float *h, uint64_t n_nodes, const float *rel, uint32_t n_relations,
    const int32_t *pos, size_t nb, const int32_t *negs, size_t neg,
    float scale, float *gh, float *grel, struct kg_gnn_decode_work *w)
{
	size_t d = m->dim, rw = m->rel_width, np = nb * (1 + neg), i;
	size_t nchunk = (nb + DEC_CHUNK - 1) / DEC_CHUNK;
	size_t per = chunk_floats(m, DEC_CHUNK * (1 + neg));
	int nthr = omp_get_max_threads();
	double loss = 0.0;

	if (np > w->cap_pair) {
		free(w->gf);
		free(w->gc);
		free(w->gr);
		w->cap_pair = np;
		w->gf = kg_xmallocarray(np * d + 1, sizeof(float));
		w->gc = kg_xmallocarray(np * d + 1, sizeof(float));
		w->gr = kg_xmallocarray(np * rw + 1, sizeof(float));
	}
	w->loss = grow(w->loss, &w->cap_nb, nb, sizeof(double));
	w->thr = grow(w->thr, &w->cap_thr, per * (size_t)nthr, sizeof(float));

#pragma omp parallel for schedule(dynamic, 1)
	for (size_t c = 0; c < nchunk; c++) {
		size_t i0 = c * DEC_CHUNK, i1 = i0 + DEC_CHUNK, k0, kn, j, k;
		float *fixed, *r, *cand, *score, *gs, *gw;

		if (i1 > nb)
			i1 = nb;
		k0 = i0 * (1 + neg);
		kn = (i1 - i0) * (1 + neg);
		fixed = w->thr + per * (size_t)omp_get_thread_num();
		r = fixed + kn * d;
		cand = r + kn * rw;
		score = cand + kn * d;
		gs = score + kn;
		gw = gs + kn;
		for (k = 0; k < kn; k++) {
			size_t ii = i0 + k / (1 + neg), jj = k % (1 + neg);
			const int32_t *t = jj == 0 ? pos + 3 * ii :
			    negs + 3 * (ii * neg + jj - 1);

			memcpy(fixed + k * d, h + (size_t)t[0] * d,
			    d * sizeof(float));
			memcpy(r + k * rw, rel + (size_t)t[1] * rw,
			    rw * sizeof(float));
			memcpy(cand + k * d, h + (size_t)t[2] * d,
			    d * sizeof(float));
		}
		kg_grad_pairs_forward(m, KG_SIDE_TAIL, kn, fixed, r, cand,
		    score, gw);
		for (j = 0; j < i1 - i0; j++) {
			float *s = score + j * (1 + neg), *g = gs + j * (1 + neg);

			w->loss[i0 + j] = kg_loss_eval(l, s[0], s + 1, neg,
			    NULL, g, g + 1);
			for (k = 0; k <= neg; k++)
				g[k] *= scale;
		}
		memset(w->gf + k0 * d, 0, kn * d * sizeof(float));
		memset(w->gr + k0 * rw, 0, kn * rw * sizeof(float));
		memset(w->gc + k0 * d, 0, kn * d * sizeof(float));
		kg_grad_pairs_backward(m, KG_SIDE_TAIL, kn, fixed, r, cand, gs,
		    w->gf + k0 * d, w->gr + k0 * rw, w->gc + k0 * d, gw);
	}
	for (i = 0; i < nb; i++)
		loss += w->loss[i];

	/* Each thread owns a range of nodes and of relations and adds the
	 * triples' gradients to its rows in triple order, head before tail:
	 * the serial order, whatever the ranges. */
#pragma omp parallel
	{
		uint64_t t = (uint64_t)omp_get_thread_num();
		uint64_t nt = (uint64_t)omp_get_num_threads();
		uint64_t lo = n_nodes * t / nt, hi = n_nodes * (t + 1) / nt;
		uint64_t rlo = n_relations * t / nt;
		uint64_t rhi = n_relations * (t + 1) / nt;

		for (size_t k = 0; k < np; k++) {
			size_t ii = k / (1 + neg), jj = k % (1 + neg);
			const int32_t *q = jj == 0 ? pos + 3 * ii :
			    negs + 3 * (ii * neg + jj - 1);
			uint64_t a = (uint64_t)q[0], r = (uint64_t)q[1];
			uint64_t c = (uint64_t)q[2];

			if (a >= lo && a < hi)
				add_row(gh + a * d, w->gf + k * d, d);
			if (c >= lo && c < hi)
				add_row(gh + c * d, w->gc + k * d, d);
			if (r >= rlo && r < rhi)
				add_row(grel + r * rw, w->gr + k * rw, rw);
		}
	}
	return loss;
}

void
kg_gnn_decode_work_release(struct kg_gnn_decode_work *w)
{
	free(w->gf);
	free(w->gc);
	free(w->gr);
	free(w->loss);
	free(w->thr);
	memset(w, 0, sizeof(*w));
}
