#include "kge/model.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "compute/compute.h"
#include "core/util.h"

#if defined(__SSE2__)
#include <immintrin.h>
#endif

static const struct {
	const char *name;
	enum kg_model_kind kind;
} model_names[] = {
	{ "TransE_l1", KG_MODEL_TRANSE_L1 },
	{ "TransE_l2", KG_MODEL_TRANSE_L2 },
	{ "DistMult", KG_MODEL_DISTMULT },
	{ "ComplEx", KG_MODEL_COMPLEX },
	{ "RotatE", KG_MODEL_ROTATE },
	{ "RESCAL", KG_MODEL_RESCAL },
	{ "TransR", KG_MODEL_TRANSR },
};

int
kg_model_parse(const char *name, enum kg_model_kind *kind)
{
	size_t i;

	if (strcasecmp(name, "transe") == 0) {
		*kind = KG_MODEL_TRANSE_L2;
		return 0;
	}
	for (i = 0; i < KG_ARRAY_LEN(model_names); i++) {
		if (strcasecmp(name, model_names[i].name) == 0) {
			*kind = model_names[i].kind;
			return 0;
		}
	}
	kg_error("unknown model '%s' (expected TransE_l1, TransE_l2, "
	    "DistMult, ComplEx, RotatE, RESCAL or TransR)", name);
	return -1;
}

const char *
kg_model_name(enum kg_model_kind kind)
{
	size_t i;

	for (i = 0; i < KG_ARRAY_LEN(model_names); i++)
		if (model_names[i].kind == kind)
			return model_names[i].name;
	return "unknown";
}

int
kg_model_init(struct kg_model *m, enum kg_model_kind kind, uint32_t dim,
    uint32_t rel_dim, float gamma)
{
	uint64_t width;

	memset(m, 0, sizeof(*m));
	if (dim == 0) {
		kg_error("model dimension must be at least 1");
		return -1;
	}
	if (!isfinite(gamma)) {
		kg_error("gamma must be finite");
		return -1;
	}
	/* rel_dim only means something for TransR; elsewhere it is dim. */
	if (kind != KG_MODEL_TRANSR || rel_dim == 0)
		rel_dim = dim;
	switch (kind) {
	case KG_MODEL_TRANSE_L1:
	case KG_MODEL_TRANSE_L2:
	case KG_MODEL_DISTMULT:
		width = dim;
		break;
	case KG_MODEL_COMPLEX:
	case KG_MODEL_ROTATE:
		if (dim % 2 != 0) {
			kg_error("%s needs an even dimension, got %u",
			    kg_model_name(kind), dim);
			return -1;
		}
		width = kind == KG_MODEL_COMPLEX ? dim : dim / 2;
		break;
	case KG_MODEL_RESCAL:
		width = (uint64_t)dim * dim;
		break;
	case KG_MODEL_TRANSR:
		width = (uint64_t)rel_dim + (uint64_t)rel_dim * dim;
		break;
	default:
		kg_error("unknown model kind %d", (int)kind);
		return -1;
	}
	/* BLAS takes int sizes and leading dimensions. */
	if (width > INT_MAX || dim > INT_MAX / 2) {
		kg_error("%s with dimension %u: relation rows too large",
		    kg_model_name(kind), dim);
		return -1;
	}
	m->kind = kind;
	m->dim = dim;
	m->rel_dim = rel_dim;
	m->rel_width = (uint32_t)width;
	m->gamma = gamma;
	return 0;
}

/* y = M x for a row-major k x d matrix. */
static void
project(const float *restrict mat, const float *restrict x, uint32_t k,
    uint32_t d, float *restrict y)
{
	uint32_t i, j;

	for (i = 0; i < k; i++) {
		const float *row = mat + (size_t)i * d;
		float s = 0.0f;

#pragma omp simd reduction(+:s)
		for (j = 0; j < d; j++)
			s += row[j] * x[j];
		y[i] = s;
	}
}

static float
score_transr(const struct kg_model *m, const float *h, const float *r,
    const float *t)
{
	uint32_t k = m->rel_dim, d = m->dim, i;
	const float *mat = r + k;
	double sum = 0.0;

	for (i = 0; i < k; i++) {
		const float *row = mat + (size_t)i * d;
		float ph = 0.0f, pt = 0.0f, diff;
		uint32_t j;

		for (j = 0; j < d; j++) {
			ph += row[j] * h[j];
			pt += row[j] * t[j];
		}
		diff = ph + r[i] - pt;
		sum += (double)diff * diff;
	}
	return m->gamma - (float)sqrt(sum);
}

float
kg_model_score(const struct kg_model *m, const float *h, const float *r,
    const float *t)
{
	uint32_t d = m->dim, half = d / 2, i, j;
	double s = 0.0;

	switch (m->kind) {
	case KG_MODEL_TRANSE_L1:
		for (i = 0; i < d; i++)
			s += fabsf(h[i] + r[i] - t[i]);
		return m->gamma - (float)s;
	case KG_MODEL_TRANSE_L2:
		for (i = 0; i < d; i++) {
			float x = h[i] + r[i] - t[i];

			s += (double)x * x;
		}
		return m->gamma - (float)sqrt(s);
	case KG_MODEL_DISTMULT:
		for (i = 0; i < d; i++)
			s += (double)h[i] * r[i] * t[i];
		return (float)s;
	case KG_MODEL_COMPLEX:
		/* Re(<h, r, conj(t)>). */
		for (i = 0; i < half; i++) {
			float hr = h[i], hi = h[half + i];
			float rr = r[i], ri = r[half + i];
			float tr = t[i], ti = t[half + i];

			s += (double)(hr * rr - hi * ri) * tr +
			    (double)(hr * ri + hi * rr) * ti;
		}
		return (float)s;
	case KG_MODEL_ROTATE:
		for (i = 0; i < half; i++) {
			float c = cosf(r[i]), sn = sinf(r[i]);
			float xr = h[i] * c - h[half + i] * sn - t[i];
			float xi = h[i] * sn + h[half + i] * c - t[half + i];

			s += sqrt((double)xr * xr + (double)xi * xi);
		}
		return m->gamma - (float)s;
	case KG_MODEL_RESCAL:
		for (i = 0; i < d; i++) {
			const float *row = r + (size_t)i * d;
			float mt = 0.0f;

			for (j = 0; j < d; j++)
				mt += row[j] * t[j];
			s += (double)h[i] * mt;
		}
		return (float)s;
	case KG_MODEL_TRANSR:
		return score_transr(m, h, r, t);
	}
	return 0.0f;
}

size_t
kg_model_score_work_size(const struct kg_model *m, size_t nq, size_t nc)
{
	switch (m->kind) {
	case KG_MODEL_TRANSE_L2:
		return nq * m->dim + nq + nc;
	case KG_MODEL_TRANSR:
		return (nq + nc) * m->rel_dim + nq + nc;
	default:
		return nq * m->dim;
	}
}

/* out (nq x nc, leading dimension ldo) = Q (nq x d) C^T. */
static void
gemm_qct(size_t nq, size_t nc, uint32_t d, const float *q, const float *c,
    float *out, size_t ldo)
{
	kg_sgemm(KG_NO_TRANS, KG_TRANS, nq, nc, d, 1.0f, q, d, c, d, 0.0f, out,
	    ldo);
}

static void
row_sqnorms(size_t n, uint32_t d, const float *restrict x,
    float *restrict out)
{
	size_t i;
	uint32_t j;

	for (i = 0; i < n; i++) {
		const float *row = x + i * d;
		float s = 0.0f;

#pragma omp simd reduction(+:s)
		for (j = 0; j < d; j++)
			s += row[j] * row[j];
		out[i] = s;
	}
}

/*
 * Turn the dot products in out (nq x nc, leading dimension ldo) into
 * gamma - ||q_i - c_j||_2 through ||q||^2 - 2 q.c + ||c||^2.  Rounding can
 * make the sum slightly negative for (nearly) equal vectors; clamp at 0.
 * GCC keeps sqrtf scalar while errno semantics are on, so the x86 path
 * uses SSE (correctly rounded, the same values as the scalar tail).
 */
static void
dots_to_l2(float gamma, size_t nq, size_t nc, const float *restrict qn,
    const float *restrict cn, float *restrict out, size_t ldo)
{
	size_t i, j;

	for (i = 0; i < nq; i++) {
		float *row = out + i * ldo;
		float a = qn[i];

		j = 0;
#if defined(__SSE2__)
		{
			__m128 vg = _mm_set1_ps(gamma), va = _mm_set1_ps(a);
			__m128 two = _mm_set1_ps(2.0f), zero = _mm_setzero_ps();

			for (; j + 4 <= nc; j += 4) {
				__m128 d = _mm_add_ps(_mm_sub_ps(va,
				    _mm_mul_ps(two, _mm_loadu_ps(row + j))),
				    _mm_loadu_ps(cn + j));

				_mm_storeu_ps(row + j, _mm_sub_ps(vg,
				    _mm_sqrt_ps(_mm_max_ps(d, zero))));
			}
		}
#endif
		for (; j < nc; j++) {
			float d2 = a - 2.0f * row[j] + cn[j];

			row[j] = gamma - sqrtf(d2 > 0.0f ? d2 : 0.0f);
		}
	}
}

/* TransE query rows: h + r for tails, t - r for heads. */
static void
transe_queries(enum kg_side side, size_t nq, uint32_t d,
    const float *restrict fixed, const float *restrict rel,
    float *restrict q)
{
	size_t n = nq * d, i;

	if (side == KG_SIDE_TAIL)
		for (i = 0; i < n; i++)
			q[i] = fixed[i] + rel[i];
	else
		for (i = 0; i < n; i++)
			q[i] = fixed[i] - rel[i];
}

/*
 * The distance loops of TransE L1 and RotatE go over the candidates in
 * tiles small enough to stay in cache while every query of the block
 * passes over them.
 */
#define CAND_TILE 64

/* sum |a - b| over d floats. */
static float
l1_dist(const float *restrict a, const float *restrict b, uint32_t d)
{
	uint32_t k = 0;
	float s = 0.0f;

#if defined(__SSE2__)
	{
		const __m128 abs = _mm_castsi128_ps(_mm_set1_epi32(0x7fffffff));
		__m128 acc0 = _mm_setzero_ps(), acc1 = _mm_setzero_ps();
		float lane[4];

		for (; k + 8 <= d; k += 8) {
			acc0 = _mm_add_ps(acc0, _mm_and_ps(abs, _mm_sub_ps(
			    _mm_loadu_ps(a + k), _mm_loadu_ps(b + k))));
			acc1 = _mm_add_ps(acc1, _mm_and_ps(abs, _mm_sub_ps(
			    _mm_loadu_ps(a + k + 4), _mm_loadu_ps(b + k + 4))));
		}
		_mm_storeu_ps(lane, _mm_add_ps(acc0, acc1));
		s = (lane[0] + lane[1]) + (lane[2] + lane[3]);
	}
#endif
	for (; k < d; k++)
		s += fabsf(a[k] - b[k]);
	return s;
}

/* sum over k of |(ar, ai)_k - (br, bi)_k| for complex vectors stored as
 * [re(half) | im(half)]. */
static float
complex_dist(const float *restrict a, const float *restrict b, uint32_t half)
{
	const float *restrict ai = a + half, *restrict bi = b + half;
	uint32_t k = 0;
	float s = 0.0f;

#if defined(__SSE2__)
	{
		__m128 acc = _mm_setzero_ps();
		float lane[4];

		for (; k + 4 <= half; k += 4) {
			__m128 xr = _mm_sub_ps(_mm_loadu_ps(a + k),
			    _mm_loadu_ps(b + k));
			__m128 xi = _mm_sub_ps(_mm_loadu_ps(ai + k),
			    _mm_loadu_ps(bi + k));

			acc = _mm_add_ps(acc, _mm_sqrt_ps(_mm_add_ps(
			    _mm_mul_ps(xr, xr), _mm_mul_ps(xi, xi))));
		}
		_mm_storeu_ps(lane, acc);
		s = (lane[0] + lane[1]) + (lane[2] + lane[3]);
	}
#endif
	for (; k < half; k++) {
		float xr = a[k] - b[k], xi = ai[k] - bi[k];

		s += sqrtf(xr * xr + xi * xi);
	}
	return s;
}

#if defined(__x86_64__) && defined(__GNUC__)
/*
 * AVX2 versions of the two distances, chosen at run time: the build
 * targets baseline x86-64 (SSE2), and these loops are the whole cost of
 * ranking with TransE L1 and RotatE.
 */
__attribute__((target("avx2")))
static float
hsum256(__m256 v)
{
	float lane[8];

	_mm256_storeu_ps(lane, v);
	return ((lane[0] + lane[1]) + (lane[2] + lane[3])) +
	    ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}

__attribute__((target("avx2")))
static float
l1_dist_avx2(const float *restrict a, const float *restrict b, uint32_t d)
{
	const __m256 abs = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
	__m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
	uint32_t k = 0;
	float s;

	for (; k + 16 <= d; k += 16) {
		acc0 = _mm256_add_ps(acc0, _mm256_and_ps(abs, _mm256_sub_ps(
		    _mm256_loadu_ps(a + k), _mm256_loadu_ps(b + k))));
		acc1 = _mm256_add_ps(acc1, _mm256_and_ps(abs, _mm256_sub_ps(
		    _mm256_loadu_ps(a + k + 8), _mm256_loadu_ps(b + k + 8))));
	}
	s = hsum256(_mm256_add_ps(acc0, acc1));
	for (; k < d; k++)
		s += fabsf(a[k] - b[k]);
	return s;
}

__attribute__((target("avx2")))
static float
complex_dist_avx2(const float *restrict a, const float *restrict b,
    uint32_t half)
{
	const float *restrict ai = a + half, *restrict bi = b + half;
	__m256 acc = _mm256_setzero_ps();
	uint32_t k = 0;
	float s;

	for (; k + 8 <= half; k += 8) {
		__m256 xr = _mm256_sub_ps(_mm256_loadu_ps(a + k),
		    _mm256_loadu_ps(b + k));
		__m256 xi = _mm256_sub_ps(_mm256_loadu_ps(ai + k),
		    _mm256_loadu_ps(bi + k));

		acc = _mm256_add_ps(acc, _mm256_sqrt_ps(_mm256_add_ps(
		    _mm256_mul_ps(xr, xr), _mm256_mul_ps(xi, xi))));
	}
	s = hsum256(acc);
	for (; k < half; k++) {
		float xr = a[k] - b[k], xi = ai[k] - bi[k];

		s += sqrtf(xr * xr + xi * xi);
	}
	return s;
}

static int
have_avx2(void)
{
	static int cached = -1;

	if (cached < 0) {
		__builtin_cpu_init();
		cached = __builtin_cpu_supports("avx2") != 0;
	}
	return cached;
}
#endif

/* out[i][j] = gamma - dist(q_i, c_j), candidates tile by tile. */
static void
distance_block(const struct kg_model *m, size_t nq, const float *q,
    const float *cand, size_t nc, float *out)
{
	uint32_t d = m->dim;
	size_t i, j, j0, j1;
	float (*l1)(const float *, const float *, uint32_t) = l1_dist;
	float (*cx)(const float *, const float *, uint32_t) = complex_dist;

#if defined(__x86_64__) && defined(__GNUC__)
	if (have_avx2()) {
		l1 = l1_dist_avx2;
		cx = complex_dist_avx2;
	}
#endif
	for (j0 = 0; j0 < nc; j0 = j1) {
		j1 = j0 + CAND_TILE < nc ? j0 + CAND_TILE : nc;
		for (i = 0; i < nq; i++) {
			const float *qi = q + i * d;
			float *row = out + i * nc;

			if (m->kind == KG_MODEL_ROTATE)
				for (j = j0; j < j1; j++)
					row[j] = m->gamma - cx(qi,
					    cand + j * d, d / 2);
			else
				for (j = j0; j < j1; j++)
					row[j] = m->gamma - l1(qi,
					    cand + j * d, d);
		}
	}
}

static void
score_l1(const struct kg_model *m, enum kg_side side, size_t nq,
    const float *fixed, const float *rel, const float *cand, size_t nc,
    float *out, float *q)
{
	transe_queries(side, nq, m->dim, fixed, rel, q);
	distance_block(m, nq, q, cand, nc, out);
}

static void
score_l2(const struct kg_model *m, enum kg_side side, size_t nq,
    const float *fixed, const float *rel, const float *cand, size_t nc,
    float *out, float *work)
{
	uint32_t d = m->dim;
	float *q = work, *qn = q + nq * d, *cn = qn + nq;

	transe_queries(side, nq, d, fixed, rel, q);
	row_sqnorms(nq, d, q, qn);
	row_sqnorms(nc, d, cand, cn);
	gemm_qct(nq, nc, d, q, cand, out, nc);
	dots_to_l2(m->gamma, nq, nc, qn, cn, out, nc);
}

static void
score_distmult(const struct kg_model *m, size_t nq, const float *fixed,
    const float *rel, const float *cand, size_t nc, float *out,
    float *restrict q)
{
	size_t n = nq * m->dim, i;

	/* h o r . t is symmetric in h and t: one query form for both sides. */
	for (i = 0; i < n; i++)
		q[i] = fixed[i] * rel[i];
	gemm_qct(nq, nc, m->dim, q, cand, out, nc);
}

static void
score_complex(const struct kg_model *m, enum kg_side side, size_t nq,
    const float *fixed, const float *rel, const float *cand, size_t nc,
    float *out, float *q)
{
	uint32_t d = m->dim, half = d / 2, k;
	size_t i;

	for (i = 0; i < nq; i++) {
		const float *restrict f = fixed + i * d;
		const float *restrict r = rel + i * d;
		float *restrict qi = q + i * d;

		if (side == KG_SIDE_TAIL) {
			/* score = Re(h r) . t_re + Im(h r) . t_im */
			for (k = 0; k < half; k++) {
				qi[k] = f[k] * r[k] - f[half + k] * r[half + k];
				qi[half + k] = f[k] * r[half + k] +
				    f[half + k] * r[k];
			}
		} else {
			/* score = h_re . Re(r conj(t)) - h_im . Im(r conj(t)) */
			for (k = 0; k < half; k++) {
				qi[k] = r[k] * f[k] + r[half + k] * f[half + k];
				qi[half + k] = r[k] * f[half + k] -
				    r[half + k] * f[k];
			}
		}
	}
	gemm_qct(nq, nc, d, q, cand, out, nc);
}

static void
score_rotate(const struct kg_model *m, enum kg_side side, size_t nq,
    const float *fixed, const float *rel, const float *cand, size_t nc,
    float *out, float *q)
{
	uint32_t d = m->dim, half = d / 2, k;
	size_t i;

	/*
	 * Tails: q = h o r.  Heads: |h o r - t| = |h - t o conj(r)| because
	 * |r| = 1, so q = t o conj(r) and both sides are distances to q.
	 */
	for (i = 0; i < nq; i++) {
		const float *restrict f = fixed + i * d;
		const float *restrict r = rel + i * half;
		float *restrict qi = q + i * d;
		float sgn = side == KG_SIDE_TAIL ? 1.0f : -1.0f;

		for (k = 0; k < half; k++) {
			float c = cosf(r[k]), s = sgn * sinf(r[k]);

			qi[k] = f[k] * c - f[half + k] * s;
			qi[half + k] = f[k] * s + f[half + k] * c;
		}
	}
	distance_block(m, nq, q, cand, nc, out);
}

static void
score_rescal(const struct kg_model *m, enum kg_side side, size_t nq,
    const float *fixed, const float *rel, const float *cand, size_t nc,
    float *out, float *q)
{
	int d = (int)m->dim;
	size_t i;

	/* Tails: q = h^T M = M^T h.  Heads: q = M t. */
	for (i = 0; i < nq; i++)
		kg_sgemv(side == KG_SIDE_TAIL ? KG_TRANS : KG_NO_TRANS, d, d,
		    1.0f, rel + i * m->rel_width, d, fixed + i * (size_t)d,
		    0.0f, q + i * (size_t)d);
	gemm_qct(nq, nc, m->dim, q, cand, out, nc);
}

/*
 * TransR: gamma - ||M c - q|| with q = M h + r (tails) or M t - r
 * (heads).  The projection of every candidate costs nc * k * d, so a run
 * of consecutive queries with identical relation rows shares one.
 */
static void
score_transr_many(const struct kg_model *m, enum kg_side side, size_t nq,
    const float *fixed, const float *rel, const float *cand, size_t nc,
    float *out, float *work)
{
	uint32_t k = m->rel_dim, d = m->dim, w = m->rel_width;
	float *q = work, *qn = q + nq * k, *p = qn + nq, *pn = p + nc * k;
	size_t start, end, i;
	uint32_t j;

	for (start = 0; start < nq; start = end) {
		const float *r = rel + start * w;

		end = start + 1;
		while (end < nq && memcmp(rel + end * w, r,
		    (size_t)w * sizeof(float)) == 0)
			end++;
		/* P = C M^T (nc x k). */
		kg_sgemm(KG_NO_TRANS, KG_TRANS, nc, k, d, 1.0f, cand, d, r + k,
		    d, 0.0f, p, k);
		row_sqnorms(nc, k, p, pn);
		for (i = start; i < end; i++) {
			float *qi = q + (i - start) * k;

			project(r + k, fixed + i * d, k, d, qi);
			for (j = 0; j < k; j++)
				qi[j] += side == KG_SIDE_TAIL ? r[j] : -r[j];
		}
		row_sqnorms(end - start, k, q, qn);
		gemm_qct(end - start, nc, k, q, p, out + start * nc, nc);
		dots_to_l2(m->gamma, end - start, nc, qn, pn,
		    out + start * nc, nc);
	}
}

void
kg_model_score_many(const struct kg_model *m, enum kg_side side, size_t nq,
    const float *fixed, const float *rel, const float *cand, size_t nc,
    float *out, float *work)
{
	if (nq == 0 || nc == 0)
		return;
	switch (m->kind) {
	case KG_MODEL_TRANSE_L1:
		score_l1(m, side, nq, fixed, rel, cand, nc, out, work);
		break;
	case KG_MODEL_TRANSE_L2:
		score_l2(m, side, nq, fixed, rel, cand, nc, out, work);
		break;
	case KG_MODEL_DISTMULT:
		score_distmult(m, nq, fixed, rel, cand, nc, out, work);
		break;
	case KG_MODEL_COMPLEX:
		score_complex(m, side, nq, fixed, rel, cand, nc, out, work);
		break;
	case KG_MODEL_ROTATE:
		score_rotate(m, side, nq, fixed, rel, cand, nc, out, work);
		break;
	case KG_MODEL_RESCAL:
		score_rescal(m, side, nq, fixed, rel, cand, nc, out, work);
		break;
	case KG_MODEL_TRANSR:
		score_transr_many(m, side, nq, fixed, rel, cand, nc, out,
		    work);
		break;
	}
}
