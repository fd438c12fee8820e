/*
 * AVX2 kernels of the L1 and complex-modulus distances (lanes.h): eight
 * candidates against one query at a time, one accumulator of W = 8 lanes
 * per candidate, the remainder added to lane 0, then an 8 x 8 transpose
 * so that the lane totals of the eight candidates are vector sums in the
 * order of lanes.h.  They are the whole cost of ranking with TransE L1 and
 * RotatE; the build targets baseline x86-64, so callers check
 * kg_kern_have_avx2() first.
 */
#include "compute/lanes.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define AVX2 __attribute__((target("avx2")))

static int isa_limit = 2;

void
kg_kern_limit_isa(int level)
{
	isa_limit = level;
}

int
kg_kern_isa_allows(int level)
{
	return level <= isa_limit;
}

int
kg_kern_have_avx2(void)
{
	static int cached = -1;

	if (cached < 0) {
		__builtin_cpu_init();
		cached = __builtin_cpu_supports("avx2") != 0;
	}
	return cached && isa_limit >= 1;
}

AVX2 void
kg_kern_l1_block8(const float *q, const float *c, size_t d, float gamma,
    float *out)
{
	const __m256 abs = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
	__m256 a[8];
	size_t k, n8 = d / 8 * 8;
	int j;

#pragma GCC unroll 8
	for (j = 0; j < 8; j++)
		a[j] = _mm256_setzero_ps();
	for (k = 0; k < n8; k += 8) {
		__m256 qv = _mm256_loadu_ps(q + k);

#pragma GCC unroll 8
		for (j = 0; j < 8; j++)
			a[j] = _mm256_add_ps(a[j], _mm256_and_ps(abs,
			    _mm256_sub_ps(qv, _mm256_loadu_ps(c + j * d + k))));
	}
	if (n8 < d) {
		float lane[8] __attribute__((aligned(32)));

		for (j = 0; j < 8; j++) {
			_mm256_store_ps(lane, a[j]);
			for (k = n8; k < d; k++)
				lane[0] += fabsf(q[k] - c[j * d + k]);
			a[j] = _mm256_load_ps(lane);
		}
	}
	lanes_finish8(a, gamma, out);
}

/* sqrt_noerr on eight lanes, operation for operation. */
AVX2 static inline __m256
sqrt_noerr8(__m256 x)
{
	const __m256 half = _mm256_set1_ps(0.5f), th = _mm256_set1_ps(1.5f);
	const __m256 tiny = _mm256_set1_ps(1e-30f);
	__m256 c, h, y;
	int i;

	c = _mm256_blendv_ps(tiny, x, _mm256_cmp_ps(x, tiny, _CMP_GT_OQ));
	h = _mm256_mul_ps(half, c);
	y = _mm256_castsi256_ps(_mm256_sub_epi32(_mm256_set1_epi32(0x5f3759df),
	    _mm256_srai_epi32(_mm256_castps_si256(c), 1)));
	for (i = 0; i < 3; i++)
		y = _mm256_mul_ps(y, _mm256_sub_ps(th,
		    _mm256_mul_ps(_mm256_mul_ps(h, y), y)));
	return _mm256_add_ps(_mm256_mul_ps(c, y),
	    _mm256_mul_ps(_mm256_setzero_ps(), x));
}

/* One step of eight complex moduli for each of the eight candidates. */
AVX2 static inline void
cmod_step(const float *q, const float *c, size_t d, size_t h, size_t k,
    int approx, __m256 a[8])
{
	__m256 qr = _mm256_loadu_ps(q + k), qi = _mm256_loadu_ps(q + h + k);
	int j;

#pragma GCC unroll 8
	for (j = 0; j < 8; j++) {
		const float *cj = c + j * d;
		__m256 dr = _mm256_sub_ps(qr, _mm256_loadu_ps(cj + k));
		__m256 di = _mm256_sub_ps(qi, _mm256_loadu_ps(cj + h + k));
		__m256 x = _mm256_add_ps(_mm256_mul_ps(dr, dr),
		    _mm256_mul_ps(di, di));

		a[j] = _mm256_add_ps(a[j], approx ? sqrt_noerr8(x) :
		    _mm256_sqrt_ps(x));
	}
}

AVX2 void
kg_kern_cmod_block8(const float *q, const float *c, size_t d, float gamma,
    int approx, float *out)
{
	size_t h = d / 2, k, n8 = h / 8 * 8;
	__m256 a[8];
	int j;

#pragma GCC unroll 8
	for (j = 0; j < 8; j++)
		a[j] = _mm256_setzero_ps();
	/* Two loops, so that the choice of root is not made per step. */
	if (approx)
		for (k = 0; k < n8; k += 8)
			cmod_step(q, c, d, h, k, 1, a);
	else
		for (k = 0; k < n8; k += 8)
			cmod_step(q, c, d, h, k, 0, a);
	if (n8 < h) {
		float lane[8] __attribute__((aligned(32)));

		for (j = 0; j < 8; j++) {
			_mm256_store_ps(lane, a[j]);
			for (k = n8; k < h; k++)
				lane[0] += cmod_term(q, c + j * d, h, k,
				    approx);
			a[j] = _mm256_load_ps(lane);
		}
	}
	lanes_finish8(a, gamma, out);
}

/*
 * The L1 chunk backward of NI <= 4 query rows, 8 floats (those of mask m,
 * all ones but in d's last strip) at a time over every candidate, as the
 * AVX-512 tile of kernels_avx512.c: the term is g with the sign of
 * q - c flipped in, 0 where q - c is 0 or NaN.
 */
static inline __attribute__((always_inline, target("avx2"))) void
l1_back_strip8(const int NI, const int GC, const int PART, __m256i m,
    size_t nc, size_t d, const float *q, const float *c, const float *g,
    float *gq, float *gc)
{
	const __m256 sign = _mm256_castsi256_ps(_mm256_set1_epi32(
	    (int)0x80000000u));
	const __m256 zero = _mm256_setzero_ps();
	__m256 qv[4], gv[4];
	size_t j;
	int i;

#pragma GCC unroll 4
	for (i = 0; i < NI; i++) {
		qv[i] = PART ? _mm256_maskload_ps(q + (size_t)i * d, m) :
		    _mm256_loadu_ps(q + (size_t)i * d);
		gv[i] = zero;
	}
	for (j = 0; j < nc; j++) {
		__m256 cv = PART ? _mm256_maskload_ps(c + j * d, m) :
		    _mm256_loadu_ps(c + j * d);
		__m256 gcv = zero;

		if (GC)
			gcv = PART ? _mm256_maskload_ps(gc + j * d, m) :
			    _mm256_loadu_ps(gc + j * d);
#pragma GCC unroll 4
		for (i = 0; i < NI; i++) {
			__m256 e = _mm256_sub_ps(qv[i], cv);
			__m256 nz = _mm256_cmp_ps(e, zero, _CMP_NEQ_OQ);
			__m256 s = _mm256_and_ps(nz, _mm256_xor_ps(
			    _mm256_and_ps(e, sign),
			    _mm256_set1_ps(g[(size_t)i * nc + j])));

			gv[i] = _mm256_sub_ps(gv[i], s);
			if (GC)
				gcv = _mm256_add_ps(gcv, s);
		}
		if (GC) {
			if (PART)
				_mm256_maskstore_ps(gc + j * d, m, gcv);
			else
				_mm256_storeu_ps(gc + j * d, gcv);
		}
	}
#pragma GCC unroll 4
	for (i = 0; i < NI; i++) {
		if (PART)
			_mm256_maskstore_ps(gq + (size_t)i * d, m, gv[i]);
		else
			_mm256_storeu_ps(gq + (size_t)i * d, gv[i]);
	}
}

static inline __attribute__((always_inline, target("avx2"))) void
l1_back_rows8(const int NI, const int GC, size_t nc, size_t d,
    const float *q, const float *c, const float *g, float *gq, float *gc)
{
	const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
	size_t k = 0;

	for (; k + 8 <= d; k += 8)
		l1_back_strip8(NI, GC, 0, lanes, nc, d, q + k, c + k, g,
		    gq + k, GC ? gc + k : NULL);
	if (k < d)
		l1_back_strip8(NI, GC, 1, _mm256_cmpgt_epi32(
		    _mm256_set1_epi32((int)(d - k)), lanes), nc, d, q + k,
		    c + k, g, gq + k, GC ? gc + k : NULL);
}

#define L1_BACK8_CASE(n) \
	case n: \
		if (gc != NULL) \
			l1_back_rows8(n, 1, nc, d, q, c, g, gq, gc); \
		else \
			l1_back_rows8(n, 0, nc, d, q, c, g, gq, NULL); \
		break;

AVX2 void
kg_kern_l1_back_rows_avx2(size_t ni, size_t nc, size_t d, const float *q,
    const float *c, const float *g, float *gq, float *gc)
{
	switch (ni) {
	L1_BACK8_CASE(1)
	L1_BACK8_CASE(2)
	L1_BACK8_CASE(3)
	L1_BACK8_CASE(4)
	default:
		break;
	}
}

#else

/* Other CPUs: the portable sums of lanes.h (not called while
 * kg_kern_have_avx2() says 0, but correct). */
void
kg_kern_limit_isa(int level)
{
	(void)level;
}

int
kg_kern_isa_allows(int level)
{
	return level == 0;
}

int
kg_kern_have_avx2(void)
{
	return 0;
}

void
kg_kern_l1_block8(const float *q, const float *c, size_t d, float gamma,
    float *out)
{
	int j;

	for (j = 0; j < 8; j++)
		out[j] = gamma - sum_l1(q, c + j * d, d);
}

void
kg_kern_cmod_block8(const float *q, const float *c, size_t d, float gamma,
    int approx, float *out)
{
	int j;

	for (j = 0; j < 8; j++)
		out[j] = gamma - sum_cmod(q, c + j * d, d, approx);
}

/* Never called while kg_kern_have_avx2() says 0. */
void
kg_kern_l1_back_rows_avx2(size_t ni, size_t nc, size_t d, const float *q,
    const float *c, const float *g, float *gq, float *gc)
{
	(void)ni;
	(void)nc;
	(void)d;
	(void)q;
	(void)c;
	(void)g;
	(void)gq;
	(void)gc;
}

#endif
