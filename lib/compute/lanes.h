/*
 * lanes: the summation order of the CPU kernels (kernels_cpu.c,
 * kernels_grad.c, kernels_avx2.c, kernels_avx512.c); internal to
 * lib/compute.
 *
 * Every sum over d runs in one fixed order, "w lanes": lane l adds the
 * terms k = w m + l of the first w floor(n / w) terms, lane 0 then the
 * remaining terms in order, and s = (((0 + L_0) + L_1) + ...) + L_(w-1).
 * w is W = 8, and 4 for the L2_DIFF chunk form (TransR's training).  This
 * is the order in which GCC lowers an "omp simd" reduction of w lanes,
 * which kgpipe trained with before these kernels were written out;
 * written down, it keeps training results from depending on the
 * compiler's choices.  The fixed inner trip counts let GCC vectorise the
 * lanes (in the callers' x86-64-v3 clones, KG_HOT_CLONES); the AVX2 block
 * kernels compute eight candidates at a time in the same order, the
 * AVX-512 tiles two pairs' eight lanes to a register.
 */
#ifndef KG_LANES_H
#define KG_LANES_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#define W 8

#if defined(__GNUC__)
#define HOT_INLINE static inline __attribute__((always_inline))
#else
#define HOT_INLINE static inline
#endif

/* The classic bit-level estimate of 1 / sqrt(c), c > 0 (3.4% off at worst). */
HOT_INLINE float
rsqrt_bits(float c)
{
	union {
		float f;
		int32_t i;
	} u;

	u.f = c;
	u.i = 0x5f3759df - (u.i >> 1);
	return u.f;
}

/* One Newton step for 1 / sqrt(c), h = c / 2. */
HOT_INLINE float
rsqrt_step(float h, float y)
{
	return y * (1.5f - h * y * y);
}

/*
 * The square root training has always used for the complex moduli of
 * KG_KERN_CMOD_APPROX: x * rsqrt(x), rsqrt from the classic bit-level
 * estimate and three Newton steps (relative error about 1e-7; it was
 * written so that GCC would vectorise it, which sqrtf with errno
 * prevents).  Arguments below 1e-30 count as 1e-30; a NaN or infinite
 * argument still gives NaN.
 */
HOT_INLINE float
sqrt_noerr(float x)
{
	float c = x > 1e-30f ? x : 1e-30f, h = 0.5f * c, y = rsqrt_bits(c);

	y = rsqrt_step(h, y);
	y = rsqrt_step(h, y);
	y = rsqrt_step(h, y);
	return c * y + 0.0f * x;
}

HOT_INLINE float
lanes_total(const float *L, size_t w)
{
	float s = 0.0f;
	size_t l;

	for (l = 0; l < w; l++)
		s += L[l];
	return s;
}

HOT_INLINE float
sum_dot(const float *restrict q, const float *restrict c, size_t n)
{
	float L[W] = { 0 };
	size_t k = 0, l;

	for (; k + W <= n; k += W)
		for (l = 0; l < W; l++)
			L[l] += q[k + l] * c[k + l];
	for (; k < n; k++)
		L[0] += q[k] * c[k];
	return lanes_total(L, W);
}

HOT_INLINE float
sum_l1(const float *restrict q, const float *restrict c, size_t n)
{
	float L[W] = { 0 };
	size_t k = 0, l;

	for (; k + W <= n; k += W)
		for (l = 0; l < W; l++)
			L[l] += fabsf(q[k + l] - c[k + l]);
	for (; k < n; k++)
		L[0] += fabsf(q[k] - c[k]);
	return lanes_total(L, W);
}

/* sum (q_k - c_k)^2 in w = 8 or 4 lanes. */
HOT_INLINE float
sum_sqdiff(const float *restrict q, const float *restrict c, size_t n,
    size_t w)
{
	float L[W] = { 0 };
	size_t k = 0, l;

	for (; k + w <= n; k += w)
		for (l = 0; l < w; l++)
			L[l] += (q[k + l] - c[k + l]) * (q[k + l] - c[k + l]);
	for (; k < n; k++)
		L[0] += (q[k] - c[k]) * (q[k] - c[k]);
	return lanes_total(L, w);
}

/* |q_k - c_k| for rows stored as [re(h) | im(h)]; approx: sqrt_noerr. */
HOT_INLINE float
cmod_term(const float *restrict q, const float *restrict c, size_t h,
    size_t k, int approx)
{
	float dr = q[k] - c[k], di = q[h + k] - c[h + k];
	float x = dr * dr + di * di;

	return approx ? sqrt_noerr(x) : sqrtf(x);
}

/* sum over k < n / 2 of |q_k - c_k|. */
HOT_INLINE float
sum_cmod(const float *restrict q, const float *restrict c, size_t n,
    int approx)
{
	float L[W] = { 0 };
	size_t h = n / 2, k = 0, l;

	for (; k + W <= h; k += W)
		for (l = 0; l < W; l++)
			L[l] += cmod_term(q, c, h, k + l, approx);
	for (; k < h; k++)
		L[0] += cmod_term(q, c, h, k, approx);
	return lanes_total(L, W);
}

/*
 * The AVX2 block kernels (kernels_avx2.c): out[j] = gamma - S(q, c_j) for
 * the eight candidate rows c_0..c_7 at c, c + d, ..., in the order above.
 * Call them only when kg_kern_have_avx2() says the CPU can.
 */
int kg_kern_have_avx2(void);
void kg_kern_l1_block8(const float *q, const float *c, size_t d,
    float gamma, float *out);
void kg_kern_cmod_block8(const float *q, const float *c, size_t d,
    float gamma, int approx, float *out);
/* The L1 chunk backward of ni <= 4 query rows whose g has no zero, as
 * kg_kern_l1_back_rows512 below, 8 floats at a time. */
void kg_kern_l1_back_rows_avx2(size_t ni, size_t nc, size_t d,
    const float *q, const float *c, const float *g, float *gq, float *gc);

/*
 * For tests: kg_kern_limit_isa(0) makes the kernels take the portable
 * loops, 1 the AVX2 blocks at most, 2 (the default) the AVX-512 tiles
 * where the CPU has them; not thread-safe.  kg_kern_isa_allows(level)
 * says whether that level is allowed now.
 */
void kg_kern_limit_isa(int level);
int kg_kern_isa_allows(int level);

/*
 * The AVX-512 tiles (kernels_avx512.c), callable only when
 * kg_kern_have_avx512() says so: the L1 chunk forward, out[i * nc + j] =
 * gamma - S(q_i, c_j), and the L1 chunk backward of ni <= 8 query rows
 * (gq overwritten, gc added to unless NULL) for rows whose g has no zero.
 */
int kg_kern_have_avx512(void);
void kg_kern_l1_chunk512(size_t nq, size_t nc, size_t d, float gamma,
    const float *q, const float *c, float *out);
void kg_kern_l1_back_rows512(size_t ni, size_t nc, size_t d,
    const float *q, const float *c, const float *g, float *gq, float *gc);
/* The same for the complex moduli (approx: CMOD_APPROX); the backward
 * for CMOD_APPROX only, ni <= 4 rows. */
void kg_kern_cmod_chunk512(int approx, size_t nq, size_t nc, size_t d,
    float gamma, const float *q, const float *c, float *out);
void kg_kern_cmod_back_rows512(size_t ni, size_t nc, size_t d,
    const float *q, const float *c, const float *g, float *gq, float *gc);

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define LANES_AVX2 static inline __attribute__((always_inline, \
	target("avx2")))

/*
 * out[j] = gamma - (((0 + a_j0) + a_j1) + ...) + a_j7 for j < 8: an 8 x 8
 * transpose puts lane l of the eight accumulators into one vector, so
 * that the lane totals are vector sums.  Written out, so that GCC keeps
 * everything in registers.
 */
LANES_AVX2 void
lanes_finish8(const __m256 a[8], float gamma, float *out)
{
	__m256 t0, t1, t2, t3, t4, t5, t6, t7, u0, u1, u2, u3, u4, u5, u6, u7;
	__m256 s = _mm256_setzero_ps();

	t0 = _mm256_unpacklo_ps(a[0], a[1]);
	t1 = _mm256_unpackhi_ps(a[0], a[1]);
	t2 = _mm256_unpacklo_ps(a[2], a[3]);
	t3 = _mm256_unpackhi_ps(a[2], a[3]);
	t4 = _mm256_unpacklo_ps(a[4], a[5]);
	t5 = _mm256_unpackhi_ps(a[4], a[5]);
	t6 = _mm256_unpacklo_ps(a[6], a[7]);
	t7 = _mm256_unpackhi_ps(a[6], a[7]);
	u0 = _mm256_shuffle_ps(t0, t2, 0x44);
	u1 = _mm256_shuffle_ps(t0, t2, 0xee);
	u2 = _mm256_shuffle_ps(t1, t3, 0x44);
	u3 = _mm256_shuffle_ps(t1, t3, 0xee);
	u4 = _mm256_shuffle_ps(t4, t6, 0x44);
	u5 = _mm256_shuffle_ps(t4, t6, 0xee);
	u6 = _mm256_shuffle_ps(t5, t7, 0x44);
	u7 = _mm256_shuffle_ps(t5, t7, 0xee);
	/* Lane l of every accumulator, l = 0..7, in order. */
	s = _mm256_add_ps(s, _mm256_permute2f128_ps(u0, u4, 0x20));
	s = _mm256_add_ps(s, _mm256_permute2f128_ps(u1, u5, 0x20));
	s = _mm256_add_ps(s, _mm256_permute2f128_ps(u2, u6, 0x20));
	s = _mm256_add_ps(s, _mm256_permute2f128_ps(u3, u7, 0x20));
	s = _mm256_add_ps(s, _mm256_permute2f128_ps(u0, u4, 0x31));
	s = _mm256_add_ps(s, _mm256_permute2f128_ps(u1, u5, 0x31));
	s = _mm256_add_ps(s, _mm256_permute2f128_ps(u2, u6, 0x31));
	s = _mm256_add_ps(s, _mm256_permute2f128_ps(u3, u7, 0x31));
	_mm256_storeu_ps(out, _mm256_sub_ps(_mm256_set1_ps(gamma), s));
}

#endif

#endif
