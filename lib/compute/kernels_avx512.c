/*
 * AVX-512 tiles of the L1 distance and the complex moduli (lanes.h),
 * forward and backward (the backward of CMOD_APPROX, RotatE's training,
 * not of the exact CMOD, which only ranking uses), like
 * a GEMM micro-kernel: a tile of several queries by several candidates per
 * inner loop, so that each loaded vector serves several pairs.  Every
 * pair's arithmetic is that of the AVX2 blocks and of the portable loops,
 * term for term and in the same order, so the results are the same bit
 * for bit; only the order in which pairs are visited changes.  The build
 * targets baseline x86-64, so callers check kg_kern_have_avx512() first.
 *
 * Forward: one zmm register holds two pairs' accumulators of W = 8 lanes
 * (query i against candidates j and j + 1, low and high half), a tile is
 * up to 4 queries x 8 candidates (16 accumulators); the remainder of d
 * goes to lane 0 in order, then lanes_finish8 adds each pair's lanes.
 *
 * Backward: a tile is up to 8 queries x every candidate, 16 floats of d at
 * a time: the 8 query rows' gradient stays in registers while the
 * candidates pass, each candidate's gradient is loaded once per tile.  For
 * every float, gq_i gathers its terms in candidate order and gc_j in query
 * order, as in the pair-by-pair loop; the term sign(q - c) g is formed as
 * g with the sign of q - c flipped in (0 where q - c is 0 or NaN), which
 * is exactly the value the scalar "e > 0 ? g : e < 0 ? -g : 0" gives.
 *
 * The complex moduli go the same way with 4 x 4 forward tiles (eight
 * moduli of each pair per step, the root of sqrt_noerr or vsqrtps) and 4
 * query rows a backward tile (16 moduli a strip, the weight of
 * kernels_grad.c's cmod_weight).  A row with a zero in g goes pair by
 * pair (kernels_grad.c), since those pairs add nothing.
 */
#include "compute/kernels.h"
#include "compute/lanes.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define AVX512 __attribute__((target("avx2,avx512f,avx512dq")))
#define AVX512_INLINE \
	static inline __attribute__((always_inline, \
	    target("avx2,avx512f,avx512dq")))

int
kg_kern_have_avx512(void)
{
	static int cached = -1;

	if (cached < 0) {
		__builtin_cpu_init();
		cached = __builtin_cpu_supports("avx512f") &&
		    __builtin_cpu_supports("avx512dq");
	}
	return cached && kg_kern_isa_allows(2);
}

/*
 * The tile: queries q (NI rows) against candidates c (NJ rows, NJ <= 8),
 * out[i * ldo + j] = gamma - S.  A candidate pair whose second half is
 * missing repeats its first row and drops that result.
 */
AVX512_INLINE void
l1_tile(const int NI, const int NJ, size_t d, float gamma, const float *q,
    const float *c, float *out, size_t ldo)
{
	enum { NP = 4 };
	const __m512 abs = _mm512_castsi512_ps(_mm512_set1_epi32(0x7fffffff));
	const int np = (NJ + 1) / 2;
	const float *c0[NP], *c1[NP];
	__m512 acc[4][NP];
	size_t k, n8 = d / 8 * 8;
	int i, p;

#pragma GCC unroll 8
	for (p = 0; p < np; p++) {
		c0[p] = c + (size_t)(2 * p) * d;
		c1[p] = 2 * p + 1 < NJ ? c0[p] + d : c0[p];
	}
#pragma GCC unroll 8
	for (i = 0; i < NI; i++)
#pragma GCC unroll 8
		for (p = 0; p < np; p++)
			acc[i][p] = _mm512_setzero_ps();
	for (k = 0; k < n8; k += 8) {
		__m512 qb[4];

#pragma GCC unroll 8
		for (i = 0; i < NI; i++)
			qb[i] = _mm512_broadcast_f32x8(_mm256_loadu_ps(q +
			    (size_t)i * d + k));
#pragma GCC unroll 8
		for (p = 0; p < np; p++) {
			__m512 cp = _mm512_insertf32x8(_mm512_castps256_ps512(
			    _mm256_loadu_ps(c0[p] + k)),
			    _mm256_loadu_ps(c1[p] + k), 1);

#pragma GCC unroll 8
			for (i = 0; i < NI; i++)
				acc[i][p] = _mm512_add_ps(acc[i][p],
				    _mm512_and_ps(abs, _mm512_sub_ps(qb[i],
				    cp)));
		}
	}
#pragma GCC unroll 8
	for (i = 0; i < NI; i++) {
		const float *qi = q + (size_t)i * d;
		float res[8] __attribute__((aligned(32)));
		__m256 a[8];
		int j;

#pragma GCC unroll 8
		for (j = 0; j < 8; j++)
			a[j] = _mm256_setzero_ps();
#pragma GCC unroll 8
		for (p = 0; p < np; p++) {
			a[2 * p] = _mm512_castps512_ps256(acc[i][p]);
			a[2 * p + 1] = _mm512_extractf32x8_ps(acc[i][p], 1);
		}
		if (n8 < d)
#pragma GCC unroll 8
			for (j = 0; j < NJ; j++) {
				float lane[8] __attribute__((aligned(32)));
				const float *cj = c + (size_t)j * d;

				_mm256_store_ps(lane, a[j]);
				for (k = n8; k < d; k++)
					lane[0] += fabsf(qi[k] - cj[k]);
				a[j] = _mm256_load_ps(lane);
			}
		lanes_finish8(a, gamma, res);
#pragma GCC unroll 8
		for (j = 0; j < NJ; j++)
			out[(size_t)i * ldo + j] = res[j];
	}
}

/* Tiles of NI queries over every candidate. */
AVX512_INLINE void
l1_rows(const int NI, size_t nc, size_t d, float gamma, const float *q,
    const float *c, float *out, size_t ldo)
{
	size_t j = 0;

	for (; j + 8 <= nc; j += 8)
		l1_tile(NI, 8, d, gamma, q, c + j * d, out + j, ldo);
	switch (nc - j) {
	case 7: l1_tile(NI, 7, d, gamma, q, c + j * d, out + j, ldo); break;
	case 6: l1_tile(NI, 6, d, gamma, q, c + j * d, out + j, ldo); break;
	case 5: l1_tile(NI, 5, d, gamma, q, c + j * d, out + j, ldo); break;
	case 4: l1_tile(NI, 4, d, gamma, q, c + j * d, out + j, ldo); break;
	case 3: l1_tile(NI, 3, d, gamma, q, c + j * d, out + j, ldo); break;
	case 2: l1_tile(NI, 2, d, gamma, q, c + j * d, out + j, ldo); break;
	case 1: l1_tile(NI, 1, d, gamma, q, c + j * d, out + j, ldo); break;
	default: break;
	}
}

AVX512 void
kg_kern_l1_chunk512(size_t nq, size_t nc, size_t d, float gamma,
    const float *q, const float *c, float *out)
{
	size_t i = 0;

	for (; i + 4 <= nq; i += 4)
		l1_rows(4, nc, d, gamma, q + i * d, c, out + i * nc, nc);
	switch (nq - i) {
	case 3: l1_rows(3, nc, d, gamma, q + i * d, c, out + i * nc, nc); break;
	case 2: l1_rows(2, nc, d, gamma, q + i * d, c, out + i * nc, nc); break;
	case 1: l1_rows(1, nc, d, gamma, q + i * d, c, out + i * nc, nc); break;
	default: break;
	}
}

/*
 * 16 floats (those of mask m) of NI query rows against every candidate:
 * gq's floats are overwritten, gc's gather the candidates' terms unless
 * GC is 0.
 */
AVX512_INLINE void
l1_back_strip(const int NI, const int GC, __mmask16 m, size_t nc, size_t d,
    const float *q, const float *c, const float *g, float *gq, float *gc)
{
	const __m512i sign = _mm512_set1_epi32((int)0x80000000u);
	const __m512 zero = _mm512_setzero_ps();
	__m512 qv[8], gv[8];
	size_t j;
	int i;

#pragma GCC unroll 8
	for (i = 0; i < NI; i++) {
		qv[i] = _mm512_maskz_loadu_ps(m, q + (size_t)i * d);
		gv[i] = zero;
	}
	for (j = 0; j < nc; j++) {
		__m512 cv = _mm512_maskz_loadu_ps(m, c + j * d), gcv = zero;

		if (GC)
			gcv = _mm512_maskz_loadu_ps(m, gc + j * d);
#pragma GCC unroll 8
		for (i = 0; i < NI; i++) {
			__m512 e = _mm512_sub_ps(qv[i], cv);
			__mmask16 nz = _mm512_cmp_ps_mask(e, zero,
			    _CMP_NEQ_OQ);
			/* (e & sign) ^ g where e != 0, else +0. */
			__m512 s = _mm512_castsi512_ps(
			    _mm512_maskz_ternarylogic_epi32(nz,
			    _mm512_castps_si512(e), sign,
			    _mm512_castps_si512(_mm512_set1_ps(
			    g[(size_t)i * nc + j])), 0x6a));

			gv[i] = _mm512_sub_ps(gv[i], s);
			if (GC)
				gcv = _mm512_add_ps(gcv, s);
		}
		if (GC)
			_mm512_mask_storeu_ps(gc + j * d, m, gcv);
	}
#pragma GCC unroll 8
	for (i = 0; i < NI; i++)
		_mm512_mask_storeu_ps(gq + (size_t)i * d, m, gv[i]);
}

AVX512_INLINE void
l1_back_rows(const int NI, const int GC, size_t nc, size_t d,
    const float *q, const float *c, const float *g, float *gq, float *gc)
{
	size_t k = 0;

	for (; k + 16 <= d; k += 16)
		l1_back_strip(NI, GC, 0xffff, nc, d, q + k, c + k, g, gq + k,
		    GC ? gc + k : NULL);
	if (k < d)
		l1_back_strip(NI, GC, (__mmask16)((1u << (d - k)) - 1u), nc,
		    d, q + k, c + k, g, gq + k, GC ? gc + k : NULL);
}

#define L1_BACK_CASE(n) \
	case n: \
		if (gc != NULL) \
			l1_back_rows(n, 1, nc, d, q, c, g, gq, gc); \
		else \
			l1_back_rows(n, 0, nc, d, q, c, g, gq, NULL); \
		break;

AVX512 void
kg_kern_l1_back_rows512(size_t ni, size_t nc, size_t d, const float *q,
    const float *c, const float *g, float *gq, float *gc)
{
	switch (ni) {
	L1_BACK_CASE(1)
	L1_BACK_CASE(2)
	L1_BACK_CASE(3)
	L1_BACK_CASE(4)
	L1_BACK_CASE(5)
	L1_BACK_CASE(6)
	L1_BACK_CASE(7)
	L1_BACK_CASE(8)
	default:
		break;
	}
}

/* sqrt_noerr on sixteen lanes, operation for operation (lanes.h); the
 * maximum with 1e-30 is "x > 1e-30 ? x : 1e-30", NaN included. */
AVX512_INLINE __m512
sqrt_noerr16(__m512 x)
{
	const __m512 half = _mm512_set1_ps(0.5f), th = _mm512_set1_ps(1.5f);
	__m512 c, h, y;
	int i;

	c = _mm512_max_ps(x, _mm512_set1_ps(1e-30f));
	h = _mm512_mul_ps(half, c);
	y = _mm512_castsi512_ps(_mm512_sub_epi32(_mm512_set1_epi32(0x5f3759df),
	    _mm512_srai_epi32(_mm512_castps_si512(c), 1)));
#pragma GCC unroll 3
	for (i = 0; i < 3; i++)
		y = _mm512_mul_ps(y, _mm512_sub_ps(th,
		    _mm512_mul_ps(_mm512_mul_ps(h, y), y)));
	return _mm512_add_ps(_mm512_mul_ps(c, y),
	    _mm512_mul_ps(_mm512_setzero_ps(), x));
}

/*
 * The complex-modulus tile: NI <= 4 queries x NJ <= 4 candidates, rows
 * [re(h) | im(h)]; as l1_tile, eight moduli of each pair per step.
 */
AVX512_INLINE void
cmod_tile(const int NI, const int NJ, const int APPROX, size_t d,
    float gamma, const float *q, const float *c, float *out, size_t ldo)
{
	enum { NP = 2 };
	const int np = (NJ + 1) / 2;
	const float *c0[NP], *c1[NP];
	__m512 acc[4][NP];
	size_t h = d / 2, k, n8 = h / 8 * 8;
	int i, p;

#pragma GCC unroll 8
	for (p = 0; p < np; p++) {
		c0[p] = c + (size_t)(2 * p) * d;
		c1[p] = 2 * p + 1 < NJ ? c0[p] + d : c0[p];
	}
#pragma GCC unroll 8
	for (i = 0; i < NI; i++)
#pragma GCC unroll 8
		for (p = 0; p < np; p++)
			acc[i][p] = _mm512_setzero_ps();
	for (k = 0; k < n8; k += 8) {
		__m512 qr[4], qi[4];

#pragma GCC unroll 8
		for (i = 0; i < NI; i++) {
			qr[i] = _mm512_broadcast_f32x8(_mm256_loadu_ps(q +
			    (size_t)i * d + k));
			qi[i] = _mm512_broadcast_f32x8(_mm256_loadu_ps(q +
			    (size_t)i * d + h + k));
		}
#pragma GCC unroll 8
		for (p = 0; p < np; p++) {
			__m512 cr = _mm512_insertf32x8(_mm512_castps256_ps512(
			    _mm256_loadu_ps(c0[p] + k)),
			    _mm256_loadu_ps(c1[p] + k), 1);
			__m512 ci = _mm512_insertf32x8(_mm512_castps256_ps512(
			    _mm256_loadu_ps(c0[p] + h + k)),
			    _mm256_loadu_ps(c1[p] + h + k), 1);

#pragma GCC unroll 8
			for (i = 0; i < NI; i++) {
				__m512 dr = _mm512_sub_ps(qr[i], cr);
				__m512 di = _mm512_sub_ps(qi[i], ci);
				__m512 x = _mm512_add_ps(_mm512_mul_ps(dr, dr),
				    _mm512_mul_ps(di, di));

				acc[i][p] = _mm512_add_ps(acc[i][p], APPROX ?
				    sqrt_noerr16(x) : _mm512_sqrt_ps(x));
			}
		}
	}
#pragma GCC unroll 8
	for (i = 0; i < NI; i++) {
		const float *qrow = q + (size_t)i * d;
		float res[8] __attribute__((aligned(32)));
		__m256 a[8];
		int j;

#pragma GCC unroll 8
		for (j = 0; j < 8; j++)
			a[j] = _mm256_setzero_ps();
#pragma GCC unroll 8
		for (p = 0; p < np; p++) {
			a[2 * p] = _mm512_castps512_ps256(acc[i][p]);
			a[2 * p + 1] = _mm512_extractf32x8_ps(acc[i][p], 1);
		}
		if (n8 < h)
			for (j = 0; j < NJ; j++) {
				float lane[8] __attribute__((aligned(32)));

				_mm256_store_ps(lane, a[j]);
				for (k = n8; k < h; k++)
					lane[0] += cmod_term(qrow,
					    c + (size_t)j * d, h, k, APPROX);
				a[j] = _mm256_load_ps(lane);
			}
		lanes_finish8(a, gamma, res);
#pragma GCC unroll 8
		for (j = 0; j < NJ; j++)
			out[(size_t)i * ldo + j] = res[j];
	}
}

#define CMOD_TILE(ni, nj) \
	cmod_tile(ni, nj, APPROX, d, gamma, q, c + j * d, out + j, ldo)

AVX512_INLINE void
cmod_rows(const int NI, const int APPROX, size_t nc, size_t d, float gamma,
    const float *q, const float *c, float *out, size_t ldo)
{
	size_t j = 0;

	for (; j + 4 <= nc; j += 4)
		CMOD_TILE(NI, 4);
	switch (nc - j) {
	case 3: CMOD_TILE(NI, 3); break;
	case 2: CMOD_TILE(NI, 2); break;
	case 1: CMOD_TILE(NI, 1); break;
	default: break;
	}
}

AVX512_INLINE void
cmod_chunk(const int APPROX, size_t nq, size_t nc, size_t d, float gamma,
    const float *q, const float *c, float *out)
{
	size_t i = 0;

	for (; i + 4 <= nq; i += 4)
		cmod_rows(4, APPROX, nc, d, gamma, q + i * d, c, out + i * nc,
		    nc);
	switch (nq - i) {
	case 3:
		cmod_rows(3, APPROX, nc, d, gamma, q + i * d, c, out + i * nc,
		    nc);
		break;
	case 2:
		cmod_rows(2, APPROX, nc, d, gamma, q + i * d, c, out + i * nc,
		    nc);
		break;
	case 1:
		cmod_rows(1, APPROX, nc, d, gamma, q + i * d, c, out + i * nc,
		    nc);
		break;
	default:
		break;
	}
}

AVX512 void
kg_kern_cmod_chunk512(int approx, size_t nq, size_t nc, size_t d,
    float gamma, const float *q, const float *c, float *out)
{
	if (approx)
		cmod_chunk(1, nq, nc, d, gamma, q, c, out);
	else
		cmod_chunk(0, nq, nc, d, gamma, q, c, out);
}

/*
 * The CMOD_APPROX backward (kernels_grad.c's cmod_weight and
 * cmod_backward, operation for operation): 16 moduli (those of mask m)
 * of NI query rows against every candidate.
 */
AVX512_INLINE void
cmod_back_strip(const int NI, const int GC, __mmask16 m, size_t nc,
    size_t d, const float *q, const float *c, const float *g, float *gq,
    float *gc)
{
	const __m512 zero = _mm512_setzero_ps(), half = _mm512_set1_ps(0.5f);
	const __m512 th = _mm512_set1_ps(1.5f), tiny = _mm512_set1_ps(1e-30f);
	const __m512 eps = _mm512_set1_ps(KG_KERN_DIST_EPS);
	const __m512 inv = _mm512_set1_ps(1.0f / KG_KERN_DIST_EPS);
	const __m512i magic = _mm512_set1_epi32(0x5f3759df);
	size_t h = d / 2, j;
	__m512 qr[4], qi[4], gr[4], gi[4];
	int i;

#pragma GCC unroll 8
	for (i = 0; i < NI; i++) {
		qr[i] = _mm512_maskz_loadu_ps(m, q + (size_t)i * d);
		qi[i] = _mm512_maskz_loadu_ps(m, q + (size_t)i * d + h);
		gr[i] = zero;
		gi[i] = zero;
	}
	for (j = 0; j < nc; j++) {
		const float *cj = c + j * d;
		__m512 cr = _mm512_maskz_loadu_ps(m, cj);
		__m512 ci = _mm512_maskz_loadu_ps(m, cj + h);
		__m512 gcr = zero, gci = zero;

		if (GC) {
			gcr = _mm512_maskz_loadu_ps(m, gc + j * d);
			gci = _mm512_maskz_loadu_ps(m, gc + j * d + h);
		}
#pragma GCC unroll 8
		for (i = 0; i < NI; i++) {
			__m512 dr = _mm512_sub_ps(qr[i], cr);
			__m512 di = _mm512_sub_ps(qi[i], ci);
			__m512 x = _mm512_add_ps(_mm512_mul_ps(dr, dr),
			    _mm512_mul_ps(di, di));
			__m512 cc = _mm512_max_ps(x, tiny);
			__m512 hh = _mm512_mul_ps(half, cc);
			__m512 gv = _mm512_set1_ps(g[(size_t)i * nc + j]);
			__m512 y, w, ur, ui;
			__mmask16 big;

			y = _mm512_castsi512_ps(_mm512_sub_epi32(magic,
			    _mm512_srai_epi32(_mm512_castps_si512(cc), 1)));
			y = _mm512_mul_ps(y, _mm512_sub_ps(th,
			    _mm512_mul_ps(_mm512_mul_ps(hh, y), y)));
			y = _mm512_mul_ps(y, _mm512_sub_ps(th,
			    _mm512_mul_ps(_mm512_mul_ps(hh, y), y)));
			big = _mm512_cmp_ps_mask(_mm512_mul_ps(cc, y), eps,
			    _CMP_GT_OQ);
			w = _mm512_mask_mul_ps(_mm512_mul_ps(gv, inv), big, gv,
			    y);
			ur = _mm512_mul_ps(w, dr);
			ui = _mm512_mul_ps(w, di);
			gr[i] = _mm512_sub_ps(gr[i], ur);
			gi[i] = _mm512_sub_ps(gi[i], ui);
			if (GC) {
				gcr = _mm512_add_ps(gcr, ur);
				gci = _mm512_add_ps(gci, ui);
			}
		}
		if (GC) {
			_mm512_mask_storeu_ps(gc + j * d, m, gcr);
			_mm512_mask_storeu_ps(gc + j * d + h, m, gci);
		}
	}
#pragma GCC unroll 8
	for (i = 0; i < NI; i++) {
		_mm512_mask_storeu_ps(gq + (size_t)i * d, m, gr[i]);
		_mm512_mask_storeu_ps(gq + (size_t)i * d + h, m, gi[i]);
	}
}

AVX512_INLINE void
cmod_back_rows(const int NI, const int GC, size_t nc, size_t d,
    const float *q, const float *c, const float *g, float *gq, float *gc)
{
	size_t h = d / 2, k = 0;

	for (; k + 16 <= h; k += 16)
		cmod_back_strip(NI, GC, 0xffff, nc, d, q + k, c + k, g, gq + k,
		    GC ? gc + k : NULL);
	if (k < h)
		cmod_back_strip(NI, GC, (__mmask16)((1u << (h - k)) - 1u), nc,
		    d, q + k, c + k, g, gq + k, GC ? gc + k : NULL);
}

#define CMOD_BACK_CASE(n) \
	case n: \
		if (gc != NULL) \
			cmod_back_rows(n, 1, nc, d, q, c, g, gq, gc); \
		else \
			cmod_back_rows(n, 0, nc, d, q, c, g, gq, NULL); \
		break;

AVX512 void
kg_kern_cmod_back_rows512(size_t ni, size_t nc, size_t d, const float *q,
    const float *c, const float *g, float *gq, float *gc)
{
	switch (ni) {
	CMOD_BACK_CASE(1)
	CMOD_BACK_CASE(2)
	CMOD_BACK_CASE(3)
	CMOD_BACK_CASE(4)
	default:
		return;
	}
	/* An odd d's last float has no complex partner and no gradient:
	 * written 0, as the pair-by-pair backward leaves it. */
	if (d & 1)
		for (size_t i = 0; i < ni; i++)
			gq[i * d + d - 1] = 0.0f;
}

#else

/* Other CPUs: never called while kg_kern_have_avx512() says 0. */
int
kg_kern_have_avx512(void)
{
	return 0;
}

void
kg_kern_l1_chunk512(size_t nq, size_t nc, size_t d, float gamma,
    const float *q, const float *c, float *out)
{
	size_t i, j;

	for (i = 0; i < nq; i++)
		for (j = 0; j < nc; j++)
			out[i * nc + j] = gamma - sum_l1(q + i * d, c + j * d,
			    d);
}

void
kg_kern_l1_back_rows512(size_t ni, size_t nc, size_t d, const float *q,
    const float *c, const float *g, float *gq, float *gc)
{
	size_t i, j, k;

	for (i = 0; i < ni; i++)
		for (k = 0; k < d; k++)
			gq[i * d + k] = 0.0f;
	for (i = 0; i < ni; i++)
		for (j = 0; j < nc; j++) {
			float gij = g[i * nc + j];

			if (gij == 0.0f)
				continue;
			for (k = 0; k < d; k++) {
				float e = q[i * d + k] - c[j * d + k];
				float s = e > 0.0f ? gij : e < 0.0f ? -gij :
				    0.0f;

				gq[i * d + k] -= s;
				if (gc != NULL)
					gc[j * d + k] += s;
			}
		}
}

void
kg_kern_cmod_chunk512(int approx, size_t nq, size_t nc, size_t d,
    float gamma, const float *q, const float *c, float *out)
{
	size_t i, j;

	for (i = 0; i < nq; i++)
		for (j = 0; j < nc; j++)
			out[i * nc + j] = gamma - sum_cmod(q + i * d, c + j * d,
			    d, approx);
}

/* Never called while kg_kern_have_avx512() says 0. */
void
kg_kern_cmod_back_rows512(size_t ni, size_t nc, size_t d, const float *q,
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
