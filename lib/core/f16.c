/*
 * f16: binary16 conversions; see f16.h.
 *
 * The scalar code works on the bit patterns (no floating-point
 * arithmetic, so no dependence on the rounding mode or on flush-to-zero
 * settings); the F16C code converts 8 values at a time with VCVTPS2PH
 * (rounding to nearest even, whatever MXCSR says) and VCVTPH2PS, and
 * leaves the tail to the scalar code.  Loads and stores go through
 * memcpy or unaligned intrinsics, which may alias anything, so the
 * in-place widening of kg_f16_decode is safe from the compiler too.
 */
#include "core/f16.h"

#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define KG_F16_X86 1
#endif

/* Bits of KG_F16_MAX as a float32. */
#define F32_HALF_MAX 0x477fe000u

static uint32_t
bits_of(float x)
{
	uint32_t u;

	memcpy(&u, &x, sizeof(u));
	return u;
}

static float
float_of(uint32_t u)
{
	float x;

	memcpy(&x, &u, sizeof(x));
	return x;
}

uint16_t
kg_f16_from_float(float x)
{
	uint32_t u = bits_of(x), sign = (u >> 16) & 0x8000u, m, rem, half;
	uint32_t h, e, s;

	u &= 0x7fffffffu;
	if (u >= 0x7f800000u)		/* infinity or NaN (made quiet) */
		return (uint16_t)(sign | 0x7c00u | (u > 0x7f800000u ?
		    0x200u | ((u >> 13) & 0x3ffu) : 0));
	if (u >= 0x477ff000u)		/* 65520 and up round to infinity */
		return (uint16_t)(sign | 0x7c00u);
	if (u >= 0x38800000u) {		/* a normal half: 2^-14 and up */
		h = ((u >> 23) - 112) << 10 | ((u >> 13) & 0x3ffu);
		rem = u & 0x1fffu;
		/* A carry out of the mantissa bumps the exponent, as it
		 * should. */
		if (rem > 0x1000u || (rem == 0x1000u && (h & 1)))
			h++;
		return (uint16_t)(sign | h);
	}
	if (u < 0x33000000u)		/* at most 2^-25: zero (a tie too) */
		return (uint16_t)sign;
	/* A subnormal half: the value in units of 2^-24 is
	 * m * 2^(e - 126), m with its implicit bit. */
	e = u >> 23;
	m = (u & 0x7fffffu) | 0x800000u;
	s = 126 - e;
	h = m >> s;
	rem = m & ((1u << s) - 1);
	half = 1u << (s - 1);
	if (rem > half || (rem == half && (h & 1)))
		h++;
	return (uint16_t)(sign | h);
}

float
kg_f16_to_float(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu;
	uint32_t m = h & 0x3ffu;

	if (e == 0x1f)			/* infinity, or a NaN made quiet */
		return float_of(sign | 0x7f800000u | (m ? 0x400000u : 0) |
		    m << 13);
	if (e != 0)
		return float_of(sign | (e + 112) << 23 | m << 13);
	if (m == 0)
		return float_of(sign);
	/* A subnormal: normalise the mantissa. */
	e = 113;
	while (!(m & 0x400u)) {
		m <<= 1;
		e--;
	}
	return float_of(sign | e << 23 | (m & 0x3ffu) << 13);
}

int
kg_f16_exact(float x)
{
	return bits_of(kg_f16_to_float(kg_f16_from_float(x))) == bits_of(x) &&
	    x == x;
}

size_t
kg_f16_encode_scalar(uint16_t *dst, const float *src, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		float x;
		uint16_t h;

		memcpy(&x, (const char *)src + i * sizeof(float), sizeof(x));
		if ((bits_of(x) & 0x7fffffffu) > F32_HALF_MAX)
			return i;
		h = kg_f16_from_float(x);
		memcpy((char *)dst + i * sizeof(h), &h, sizeof(h));
	}
	return n;
}

void
kg_f16_decode_scalar(float *dst, const uint16_t *src, size_t n)
{
	size_t i;

	/* Forward: with src the upper half of dst, element i's store
	 * reaches no half not yet loaded. */
	for (i = 0; i < n; i++) {
		uint16_t h;
		float x;

		memcpy(&h, (const char *)src + i * sizeof(h), sizeof(h));
		x = kg_f16_to_float(h);
		memcpy((char *)dst + i * sizeof(x), &x, sizeof(x));
	}
}

#ifdef KG_F16_X86
__attribute__((target("avx,f16c"))) static size_t
encode_f16c(uint16_t *dst, const float *src, size_t n)
{
	const __m256 absmask = _mm256_castsi256_ps(_mm256_set1_epi32(
	    0x7fffffff));
	const __m256 max = _mm256_set1_ps(KG_F16_MAX);
	size_t i;

	for (i = 0; i + 8 <= n; i += 8) {
		__m256 x = _mm256_loadu_ps(src + i);
		/* Not (|x| <= max): out of range, or a NaN (unordered). */
		__m256 bad = _mm256_cmp_ps(_mm256_and_ps(x, absmask), max,
		    _CMP_NLE_UQ);

		if (_mm256_movemask_ps(bad) != 0)
			return i + kg_f16_encode_scalar(dst + i, src + i, 8);
		_mm_storeu_si128((__m128i *)(void *)(dst + i),
		    _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT |
		    _MM_FROUND_NO_EXC));
	}
	return i + kg_f16_encode_scalar(dst + i, src + i, n - i);
}

__attribute__((target("avx,f16c"))) static void
decode_f16c(float *dst, const uint16_t *src, size_t n)
{
	size_t i;

	/* Each block of 8 is loaded whole before it is stored, so the
	 * in-place case (src the upper half of dst) holds as in the scalar
	 * loop. */
	for (i = 0; i + 8 <= n; i += 8) {
		__m128i h = _mm_loadu_si128((const __m128i *)(const void *)
		    (src + i));

		_mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
	}
	kg_f16_decode_scalar(dst + i, src + i, n - i);
}
#endif

int
kg_f16_have_f16c(void)
{
#ifdef KG_F16_X86
	/* libgcc's CPU model, read from memory: cheap enough to ask at
	 * every call. */
	return __builtin_cpu_supports("avx") && __builtin_cpu_supports("f16c");
#else
	return 0;
#endif
}

size_t
kg_f16_encode(uint16_t *dst, const float *src, size_t n)
{
#ifdef KG_F16_X86
	if (kg_f16_have_f16c())
		return encode_f16c(dst, src, n);
#endif
	return kg_f16_encode_scalar(dst, src, n);
}

void
kg_f16_decode(float *dst, const uint16_t *src, size_t n)
{
#ifdef KG_F16_X86
	if (kg_f16_have_f16c()) {
		decode_f16c(dst, src, n);
		return;
	}
#endif
	kg_f16_decode_scalar(dst, src, n);
}
