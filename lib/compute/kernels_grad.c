/* The CPU implementation of the backward passes of kernels.h. */
#include "compute/kernels.h"

/* Let GCC vectorise the row loops at -O2: see kernels_cpu.c. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math", "vect-cost-model=dynamic", \
    "no-math-errno")
#endif

#include <string.h>

#include "compute/lanes.h"
#include "core/util.h"

/*
 * g / max(|z|, KG_KERN_DIST_EPS) for the difference z = dr + i di of one
 * complex term.  The approximate kind multiplies g by sqrt_noerr's rsqrt
 * estimate after two Newton steps rather than three (relative error
 * about 5e-6, plenty for a gradient) and has no division, the two costs
 * of this loop.
 */
HOT_INLINE float
cmod_weight(float dr, float di, float g, int approx)
{
	float x = dr * dr + di * di, c, h, y, mod;

	if (!approx) {
		mod = sqrtf(x);
		return g / (mod > KG_KERN_DIST_EPS ? mod : KG_KERN_DIST_EPS);
	}
	c = x > 1e-30f ? x : 1e-30f;
	h = 0.5f * c;
	y = rsqrt_step(h, rsqrt_step(h, rsqrt_bits(c)));
	mod = c * y;
	return mod > KG_KERN_DIST_EPS ? g * y : g * (1.0f / KG_KERN_DIST_EPS);
}

/*
 * The complex moduli: add g * dS/dq to gq and g * dS/dc to gc.  Below
 * KG_KERN_DIST_EPS this is a subgradient of |.| (norm <= 1) rather than 0.
 */
HOT_INLINE void
cmod_backward(const float *restrict q, const float *restrict c, size_t h,
    float g, float *restrict gq, float *restrict gc, int approx)
{
	size_t i;

	if (gc != NULL) {
#pragma omp simd
		for (i = 0; i < h; i++) {
			float dr = q[i] - c[i], di = q[h + i] - c[h + i];
			float w = cmod_weight(dr, di, g, approx);

			gq[i] -= w * dr;
			gq[h + i] -= w * di;
			gc[i] += w * dr;
			gc[h + i] += w * di;
		}
	} else {
#pragma omp simd
		for (i = 0; i < h; i++) {
			float dr = q[i] - c[i], di = q[h + i] - c[h + i];
			float w = cmod_weight(dr, di, g, approx);

			gq[i] -= w * dr;
			gq[h + i] -= w * di;
		}
	}
}

/*
 * Add g * dS/dq to gq and g * dS/dc to gc (gc may be NULL) for one pair
 * (dist: the distance, L2 kinds only).  One loop with and one without gc,
 * so that both vectorise.
 */
HOT_INLINE void
pair_backward(enum kg_kern_sim sim, const float *restrict q,
    const float *restrict c, size_t n, float g, float dist,
    float *restrict gq, float *restrict gc)
{
	size_t i, h = n / 2;

	switch (sim) {
	case KG_KERN_DOT:
#pragma omp simd
		for (i = 0; i < n; i++)
			gq[i] += g * c[i];
		if (gc != NULL) {
#pragma omp simd
			for (i = 0; i < n; i++)
				gc[i] += g * q[i];
		}
		break;
	case KG_KERN_L1:
		if (gc != NULL) {
#pragma omp simd
			for (i = 0; i < n; i++) {
				float e = q[i] - c[i];
				float s = e > 0.0f ? g : e < 0.0f ? -g : 0.0f;

				gq[i] -= s;
				gc[i] += s;
			}
		} else {
#pragma omp simd
			for (i = 0; i < n; i++) {
				float e = q[i] - c[i];

				gq[i] -= e > 0.0f ? g : e < 0.0f ? -g : 0.0f;
			}
		}
		break;
	case KG_KERN_L2:
	case KG_KERN_L2_DIFF:
		if (dist < KG_KERN_DIST_EPS)
			break;
		g /= dist;
#pragma omp simd
		for (i = 0; i < n; i++)
			gq[i] -= g * (q[i] - c[i]);
		if (gc != NULL) {
#pragma omp simd
			for (i = 0; i < n; i++)
				gc[i] += g * (q[i] - c[i]);
		}
		break;
	case KG_KERN_CMOD:
		cmod_backward(q, c, h, g, gq, gc, 0);
		break;
	case KG_KERN_CMOD_APPROX:
		cmod_backward(q, c, h, g, gq, gc, 1);
		break;
	}
}

KG_HOT_CLONES
void
kg_kern_pairs_backward(enum kg_kern_sim sim, size_t n, size_t d,
    const float *q, const float *c, const float *g, const float *dist,
    float *gq, float *gc)
{
	size_t i;

	for (i = 0; i < n; i++) {
		memset(gq + i * d, 0, d * sizeof(*gq));
		if (g[i] == 0.0f)
			continue;
		pair_backward(sim, q + i * d, c + i * d, d, g[i],
		    dist != NULL ? dist[i] : 0.0f, gq + i * d,
		    gc != NULL ? gc + i * d : NULL);
	}
}

/*
 * The L2 chunk backward by GEMMs.  With W_ij = g_ij / dist_ij:
 * dL/dq_i = W C - (sum_j W_ij) q_i and dL/dc_j = W^T Q - (sum_i W_ij) c_j.
 * W overwrites the distances; work holds the row and column sums.
 */
HOT_INLINE void
l2_chunk_backward(size_t nq, size_t nc, size_t d, const float *q,
    const float *c, const float *g, float *w, float *gq, float *gc,
    float *work)
{
	float *rsum = work, *csum = work + nq;
	size_t i, j, l;

	memset(csum, 0, nc * sizeof(*csum));
	for (i = 0; i < nq; i++) {
		float *wi = w + i * nc, rs = 0.0f;
		const float *gi = g + i * nc;

		for (j = 0; j < nc; j++) {
			float x = wi[j] < KG_KERN_DIST_EPS ? 0.0f :
			    gi[j] / wi[j];

			wi[j] = x;
			rs += x;
			csum[j] += x;
		}
		rsum[i] = rs;
	}
	kg_sgemm(KG_NO_TRANS, KG_NO_TRANS, nq, d, nc, 1.0f, w, nc, c, d, 0.0f,
	    gq, d);
	for (i = 0; i < nq; i++) {
		float *gqi = gq + i * d, rs = rsum[i];
		const float *qi = q + i * d;

#pragma omp simd
		for (l = 0; l < d; l++)
			gqi[l] -= rs * qi[l];
	}
	if (gc == NULL)
		return;
	kg_sgemm(KG_TRANS, KG_NO_TRANS, nc, d, nq, 1.0f, w, nc, q, d, 1.0f,
	    gc, d);
	for (j = 0; j < nc; j++) {
		float *gcj = gc + j * d, cs = csum[j];
		const float *cj = c + j * d;

#pragma omp simd
		for (l = 0; l < d; l++)
			gcj[l] -= cs * cj[l];
	}
}

/* The differences form: with u = g_ij / dist_ij (q_i - c_j), gq_i -= u and
 * gc_j += u. */
HOT_INLINE void
l2diff_chunk_backward(size_t nq, size_t nc, size_t d, const float *q,
    const float *c, const float *g, const float *dist, float *gq, float *gc)
{
	size_t i, j, l;

	memset(gq, 0, nq * d * sizeof(*gq));
	for (i = 0; i < nq; i++) {
		const float *qi = q + i * d;
		float *gqi = gq + i * d;

		for (j = 0; j < nc; j++) {
			const float *cj = c + j * d;
			float x = dist[i * nc + j], s;

			s = x < KG_KERN_DIST_EPS ? 0.0f : g[i * nc + j] / x;
			if (gc == NULL) {
				for (l = 0; l < d; l++)
					gqi[l] -= s * (qi[l] - cj[l]);
				continue;
			}
			for (l = 0; l < d; l++) {
				float u = s * (qi[l] - cj[l]);

				gqi[l] -= u;
				gc[j * d + l] += u;
			}
		}
	}
}

/*
 * The L1 and CMOD chunk backward pair by pair for queries [i0, i1): gq's
 * rows zeroed, then every pair with g != 0 in query-major order, so that
 * gq_i gathers its terms in candidate order and gc_j in query order.
 */
HOT_INLINE void
pairs_rows_backward(enum kg_kern_sim sim, size_t i0, size_t i1, size_t nc,
    size_t d, const float *q, const float *c, const float *g, float *gq,
    float *gc)
{
	size_t i, j;

	memset(gq + i0 * d, 0, (i1 - i0) * d * sizeof(*gq));
	for (i = i0; i < i1; i++)
		for (j = 0; j < nc; j++) {
			float gij = g[i * nc + j];

			if (gij == 0.0f)
				continue;
			pair_backward(sim, q + i * d, c + j * d, d, gij, 0.0f,
			    gq + i * d, gc != NULL ? gc + j * d : NULL);
		}
}

/* Whether any of g[0..n) is zero (the AVX-512 tile skips no pair). */
HOT_INLINE int
has_zero(const float *g, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (g[i] == 0.0f)
			return 1;
	return 0;
}

KG_HOT_CLONES
void
kg_kern_chunk_backward(enum kg_kern_sim sim, size_t nq, size_t nc,
    size_t d, const float *q, const float *c, const float *g, float *dist,
    float *gq, float *gc, float *work)
{
	size_t i0, i1, rows;
	int tiles;

	switch (sim) {
	case KG_KERN_DOT:
		/* dL/dQ = G C; dL/dC += G^T Q. */
		kg_sgemm(KG_NO_TRANS, KG_NO_TRANS, nq, d, nc, 1.0f, g, nc, c,
		    d, 0.0f, gq, d);
		if (gc != NULL)
			kg_sgemm(KG_TRANS, KG_NO_TRANS, nc, d, nq, 1.0f, g, nc,
			    q, d, 1.0f, gc, d);
		break;
	case KG_KERN_L2:
		l2_chunk_backward(nq, nc, d, q, c, g, dist, gq, gc, work);
		break;
	case KG_KERN_L2_DIFF:
		l2diff_chunk_backward(nq, nc, d, q, c, g, dist, gq, gc);
		break;
	case KG_KERN_L1:
	case KG_KERN_CMOD:
	case KG_KERN_CMOD_APPROX:
		/* 2: AVX-512 tiles, 1: AVX2 (L1 only), 0: pair by pair. */
		tiles = sim == KG_KERN_CMOD ? 0 : kg_kern_have_avx512() ? 2 :
		    sim == KG_KERN_L1 && kg_kern_have_avx2() ? 1 : 0;
		rows = sim == KG_KERN_L1 && tiles == 2 ? 8 : 4;
		for (i0 = 0; i0 < nq; i0 = i1) {
			i1 = i0 + rows < nq ? i0 + rows : nq;
			if (tiles == 0 ||
			    has_zero(g + i0 * nc, (i1 - i0) * nc))
				pairs_rows_backward(sim, i0, i1, nc, d, q, c, g,
				    gq, gc);
			else if (tiles == 1)
				kg_kern_l1_back_rows_avx2(i1 - i0, nc, d,
				    q + i0 * d, c, g + i0 * nc, gq + i0 * d,
				    gc);
			else if (sim == KG_KERN_L1)
				kg_kern_l1_back_rows512(i1 - i0, nc, d,
				    q + i0 * d, c, g + i0 * nc, gq + i0 * d,
				    gc);
			else
				kg_kern_cmod_back_rows512(i1 - i0, nc, d,
				    q + i0 * d, c, g + i0 * nc, gq + i0 * d,
				    gc);
		}
		break;
	}
}
