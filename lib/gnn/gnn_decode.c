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

/* One batch's view, shared by the passes below. */
struct batch {
	const struct kg_model *m;
	const struct kg_loss *l;
	const float *h, *rel;
	const int32_t *pos, *negs;
	size_t nb, neg;
	float scale;
};

/* Triple k of the batch: positive k / (1 + neg) or one of its
 * negatives. */
static inline const int32_t *
triple(const struct batch *b, size_t k)
{
	size_t ii = k / (1 + b->neg), jj = k % (1 + b->neg);

	return jj == 0 ? b->pos + 3 * ii : b->negs + 3 * (ii * b->neg + jj - 1);
}

static void
work_reserve(struct kg_gnn_decode_work *w, const struct kg_model *m,
    size_t np, size_t nb, size_t per)
{
	if (np > w->cap_pair) {
		free(w->gf);
		free(w->gc);
		free(w->gr);
		w->cap_pair = np;
		w->gf = kg_xmallocarray(np * m->dim + 1, sizeof(float));
		w->gc = kg_xmallocarray(np * m->dim + 1, sizeof(float));
		w->gr = kg_xmallocarray(np * m->rel_width + 1, sizeof(float));
	}
	w->loss = grow(w->loss, &w->cap_nb, nb, sizeof(double));
	w->thr = grow(w->thr, &w->cap_thr, per * (size_t)omp_get_max_threads(),
	    sizeof(float));
}

/* Positives [i0, i1) with their negatives: scores, losses into w->loss,
 * per-triple gradients into w->gf, w->gr, w->gc; scratch thr. */
static void
score_chunk(const struct batch *b, size_t i0, size_t i1, float *thr,
    struct kg_gnn_decode_work *w)
{
	size_t d = b->m->dim, rw = b->m->rel_width, neg = b->neg, j, k;
	size_t k0 = i0 * (1 + neg), kn = (i1 - i0) * (1 + neg);
	float *fixed = thr, *r = fixed + kn * d, *cand = r + kn * rw;
	float *score = cand + kn * d, *gs = score + kn, *gw = gs + kn;

	for (k = 0; k < kn; k++) {
		const int32_t *t = triple(b, k0 + k);

		memcpy(fixed + k * d, b->h + (size_t)t[0] * d,
		    d * sizeof(float));
		memcpy(r + k * rw, b->rel + (size_t)t[1] * rw,
		    rw * sizeof(float));
		memcpy(cand + k * d, b->h + (size_t)t[2] * d,
		    d * sizeof(float));
	}
	kg_grad_pairs_forward(b->m, KG_SIDE_TAIL, kn, fixed, r, cand, score,
	    gw);
	for (j = 0; j < i1 - i0; j++) {
		float *s = score + j * (1 + neg), *g = gs + j * (1 + neg);

		w->loss[i0 + j] = kg_loss_eval(b->l, s[0], s + 1, neg, NULL, g,
		    g + 1);
		for (k = 0; k <= neg; k++)
			g[k] *= b->scale;
	}
	memset(w->gf + k0 * d, 0, kn * d * sizeof(float));
	memset(w->gr + k0 * rw, 0, kn * rw * sizeof(float));
	memset(w->gc + k0 * d, 0, kn * d * sizeof(float));
	kg_grad_pairs_backward(b->m, KG_SIDE_TAIL, kn, fixed, r, cand, gs,
	    w->gf + k0 * d, w->gr + k0 * rw, w->gc + k0 * d, gw);
}

/* Each thread owns a range of nodes and of relations and adds the
 * triples' gradients to its rows in triple order, head before tail: the
 * serial order, whatever the ranges. */
static void
scatter(const struct batch *b, uint64_t n_nodes, uint32_t n_relations,
    const struct kg_gnn_decode_work *w, float *gh, float *grel)
{
	size_t d = b->m->dim, rw = b->m->rel_width, np = b->nb * (1 + b->neg);

#pragma omp parallel
	{
		uint64_t t = (uint64_t)omp_get_thread_num();
		uint64_t nt = (uint64_t)omp_get_num_threads();
		uint64_t lo = n_nodes * t / nt, hi = n_nodes * (t + 1) / nt;
		uint64_t rlo = n_relations * t / nt;
		uint64_t rhi = n_relations * (t + 1) / nt;

		for (size_t k = 0; k < np; k++) {
			const int32_t *q = triple(b, k);
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
}

double
kg_gnn_decode(const struct kg_model *m, const struct kg_loss *l,
    const float *h, uint64_t n_nodes, const float *rel, uint32_t n_relations,
    const int32_t *pos, size_t nb, const int32_t *negs, size_t neg,
    float scale, float *gh, float *grel, struct kg_gnn_decode_work *w)
{
	struct batch b = { m, l, h, rel, pos, negs, nb, neg, scale };
	size_t nchunk = (nb + DEC_CHUNK - 1) / DEC_CHUNK, i;
	size_t per = chunk_floats(m, DEC_CHUNK * (1 + neg));
	double loss = 0.0;

	work_reserve(w, m, nb * (1 + neg), nb, per);
#pragma omp parallel for schedule(dynamic, 1)
	for (size_t c = 0; c < nchunk; c++) {
		size_t i0 = c * DEC_CHUNK, i1 = i0 + DEC_CHUNK;

		score_chunk(&b, i0, i1 > nb ? nb : i1,
		    w->thr + per * (size_t)omp_get_thread_num(), w);
	}
	for (i = 0; i < nb; i++)
		loss += w->loss[i];
	scatter(&b, n_nodes, n_relations, w, gh, grel);
	return loss;
}

void
kg_gnn_decode_reserve(struct kg_gnn_decode_work *w, const struct kg_model *m,
    size_t nb, size_t neg)
{
	work_reserve(w, m, nb * (1 + neg), nb, chunk_floats(m, DEC_CHUNK *
	    (1 + neg)));
}

void
kg_gnn_decode_work_release(struct kg_gnn_decode_work *w)
{
	free(w->gf);
	free(w->gc);
	free(w->gr);
	free(w->loss);
	free(w->thr);
	free(w->gh_);
	free(w->gr_);
	free(w->gt_);
	free(w->gcand);
	free(w->cthr);
	memset(w, 0, sizeof(*w));
}
