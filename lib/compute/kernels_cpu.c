/*
 * The CPU implementation of kernels.h, forward passes and the small
 * products; the backward passes are in kernels_grad.c, the summation
 * order in lanes.h.
 */
#include "compute/kernels.h"

/*
 * Let GCC vectorise the row loops at -O2 (see lib/kge/loss.c); without
 * errno, sqrtf is one instruction (kgpipe never reads errno after it).
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math", "vect-cost-model=dynamic", \
    "no-math-errno")
#endif

#include <string.h>

#include "compute/lanes.h"
#include "core/util.h"

#if defined(__SSE2__)
#include <immintrin.h>
#endif

/*
 * The chunk loops over candidates go tile by tile, so that a tile stays in
 * cache while every query passes over it.
 */
#define CAND_TILE 64

size_t
kg_kern_work_size(enum kg_kern_sim sim, size_t nq, size_t nc)
{
	return sim == KG_KERN_L2 ? nq + nc : 0;
}

KG_HOT_CLONES
void
kg_kern_sqnorms(size_t n, size_t d, const float *restrict x,
    float *restrict out)
{
	size_t i;

	for (i = 0; i < n; i++)
		out[i] = sum_dot(x + i * d, x + i * d, d);
}

/*
 * S(q_i, c_j) for L1 and the CMOD kinds (approx: CMOD_APPROX), candidates
 * [j0, j1): blocks of eight where the CPU has AVX2, then one by one.
 */
HOT_INLINE void
tile_forward(enum kg_kern_sim sim, int approx, size_t nq, size_t nc,
    size_t d, float gamma, const float *q, const float *c, size_t j0,
    size_t j1, float *out)
{
	int block8 = kg_kern_have_avx2();
	size_t i, j;

	for (i = 0; i < nq; i++) {
		const float *qi = q + i * d;
		float *o = out + i * nc;

		j = j0;
		for (; block8 && j + 8 <= j1; j += 8) {
			if (sim == KG_KERN_L1)
				kg_kern_l1_block8(qi, c + j * d, d, gamma,
				    o + j);
			else
				kg_kern_cmod_block8(qi, c + j * d, d, gamma,
				    approx, o + j);
		}
		if (sim == KG_KERN_L1)
			for (; j < j1; j++)
				o[j] = gamma - sum_l1(qi, c + j * d, d);
		else
			for (; j < j1; j++)
				o[j] = gamma - sum_cmod(qi, c + j * d, d,
				    approx);
	}
}

/* The L2_DIFF chunk form, in 4 lanes (lanes.h). */
HOT_INLINE void
l2diff_chunk(size_t nq, size_t nc, size_t d, float gamma, const float *q,
    const float *c, float *out, float *dist)
{
	size_t i, j, j0, j1;

	for (j0 = 0; j0 < nc; j0 = j1) {
		j1 = j0 + CAND_TILE < nc ? j0 + CAND_TILE : nc;
		for (i = 0; i < nq; i++) {
			const float *qi = q + i * d;

			for (j = j0; j < j1; j++) {
				float x = sqrtf(sum_sqdiff(qi, c + j * d, d,
				    4));

				if (dist != NULL)
					dist[i * nc + j] = x;
				out[i * nc + j] = gamma - x;
			}
		}
	}
}

/*
 * out = gamma - sqrt(max(0, qn_i + D_ij + cn_j)) with D = -2 Q C^T already
 * in out; the distances go to dist too unless it is NULL.  SSE's square
 * root is correctly rounded, as sqrtf is, so both paths give the same
 * values.
 */
HOT_INLINE void
dots_to_l2(size_t nq, size_t nc, float gamma, const float *restrict qn,
    const float *restrict cn, float *restrict out, float *restrict dist)
{
	size_t i, j;

	for (i = 0; i < nq; i++) {
		float *o = out + i * nc, *dd = dist ? dist + i * nc : NULL;
		float a = qn[i];

		j = 0;
#if defined(__SSE2__)
		{
			__m128 vg = _mm_set1_ps(gamma), va = _mm_set1_ps(a);
			__m128 zero = _mm_setzero_ps();

			for (; j + 4 <= nc; j += 4) {
				__m128 s = _mm_add_ps(_mm_add_ps(
				    _mm_loadu_ps(o + j), va),
				    _mm_loadu_ps(cn + j));
				__m128 x = _mm_sqrt_ps(_mm_max_ps(s, zero));

				if (dd != NULL)
					_mm_storeu_ps(dd + j, x);
				_mm_storeu_ps(o + j, _mm_sub_ps(vg, x));
			}
		}
#endif
		for (; j < nc; j++) {
			float s = o[j] + a + cn[j];
			float x = s > 0.0f ? sqrtf(s) : 0.0f;

			if (dd != NULL)
				dd[j] = x;
			o[j] = gamma - x;
		}
	}
}

KG_HOT_CLONES
void
kg_kern_chunk(enum kg_kern_sim sim, size_t nq, size_t nc, size_t d,
    float gamma, const float *q, const float *c, float *out, float *dist,
    float *work)
{
	size_t j0, j1;

	if (nq == 0 || nc == 0)
		return;
	switch (sim) {
	case KG_KERN_DOT:
		kg_sgemm(KG_NO_TRANS, KG_TRANS, nq, nc, d, 1.0f, q, d, c, d,
		    0.0f, out, nc);
		break;
	case KG_KERN_L2:
		kg_kern_sqnorms(nq, d, q, work);
		kg_kern_sqnorms(nc, d, c, work + nq);
		kg_sgemm(KG_NO_TRANS, KG_TRANS, nq, nc, d, -2.0f, q, d, c, d,
		    0.0f, out, nc);
		dots_to_l2(nq, nc, gamma, work, work + nq, out, dist);
		break;
	case KG_KERN_L2_DIFF:
		l2diff_chunk(nq, nc, d, gamma, q, c, out, dist);
		break;
	case KG_KERN_L1:
		if (kg_kern_have_avx512()) {
			kg_kern_l1_chunk512(nq, nc, d, gamma, q, c, out);
			break;
		}
		/* fall through */
	case KG_KERN_CMOD:
	case KG_KERN_CMOD_APPROX:
		if (sim != KG_KERN_L1 && kg_kern_have_avx512()) {
			kg_kern_cmod_chunk512(sim == KG_KERN_CMOD_APPROX, nq,
			    nc, d, gamma, q, c, out);
			break;
		}
		for (j0 = 0; j0 < nc; j0 = j1) {
			j1 = j0 + CAND_TILE < nc ? j0 + CAND_TILE : nc;
			if (sim == KG_KERN_CMOD_APPROX)
				tile_forward(sim, 1, nq, nc, d, gamma, q, c,
				    j0, j1, out);
			else
				tile_forward(sim, 0, nq, nc, d, gamma, q, c,
				    j0, j1, out);
		}
		break;
	}
}

KG_HOT_CLONES
void
kg_kern_pairs(enum kg_kern_sim sim, size_t n, size_t d, float gamma,
    const float *q, const float *c, float *out, float *dist)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const float *qi = q + i * d, *ci = c + i * d;

		switch (sim) {
		case KG_KERN_DOT:
			out[i] = sum_dot(qi, ci, d);
			break;
		case KG_KERN_L1:
			out[i] = gamma - sum_l1(qi, ci, d);
			break;
		case KG_KERN_CMOD:
			out[i] = gamma - sum_cmod(qi, ci, d, 0);
			break;
		case KG_KERN_CMOD_APPROX:
			out[i] = gamma - sum_cmod(qi, ci, d, 1);
			break;
		case KG_KERN_L2:
		case KG_KERN_L2_DIFF: {
			float x = sqrtf(sum_sqdiff(qi, ci, d, W));

			if (dist != NULL)
				dist[i] = x;
			out[i] = gamma - x;
			break;
		}
		}
	}
}

KG_HOT_CLONES
void
kg_kern_matvec(enum kg_trans t, size_t m, size_t n, const float *a,
    const float *restrict x, float *restrict y)
{
	size_t i, j;

	if (t == KG_NO_TRANS) {
		for (i = 0; i < m; i++)
			y[i] = sum_dot(a + i * n, x, n);
		return;
	}
	memset(y, 0, n * sizeof(*y));
	for (i = 0; i < m; i++) {
		const float *row = a + i * n;
		float xi = x[i];

#pragma omp simd
		for (j = 0; j < n; j++)
			y[j] += xi * row[j];
	}
}

void
kg_kern_project(size_t nc, size_t k, size_t d, const float *m,
    const float *c, float *p)
{
	kg_sgemm(KG_NO_TRANS, KG_TRANS, nc, k, d, 1.0f, c, d, m, d, 0.0f, p,
	    k);
}
