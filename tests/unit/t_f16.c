/*
 * t_f16: the binary16 conversions of core/f16.h.  Every one of the 65536
 * half patterns widens to the value its fields say (a float64 reference)
 * and narrows back to itself, through the F16C path and the scalar one
 * alike, out of place and in place; narrowing rounds to nearest even
 * exactly as a float64 reference over the sorted halves does, on the
 * edge cases (ties, subnormals, the top of the range) and on random
 * values; and a value outside the range stops the narrowing at its
 * index.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/f16.h"
#include "core/rng.h"
#include "core/util.h"
#include "test.h"

#define NPAT 65536u

static uint32_t
bits(float x)
{
	uint32_t u;

	memcpy(&u, &x, sizeof(u));
	return u;
}

/* The value of half pattern h from its fields, in float64 (the
 * magnitude; NaN for a NaN, 65536 standing for the infinity so that
 * rounding can compare with it). */
static double
ref_value(uint16_t h)
{
	unsigned e = (h >> 10) & 0x1f, m = h & 0x3ff;

	if (e == 0x1f)
		return m ? NAN : 65536.0;
	return e == 0 ? ldexp(m, -24) : ldexp(1024 + m, (int)e - 25);
}

/* x rounded to nearest even by a search over the sorted halves. */
static uint16_t
ref_round(float x)
{
	double v = fabs((double)x), a, b;
	uint16_t sign = signbit(x) ? 0x8000 : 0, lo = 0, hi = 0x7c00, mid;

	if (v >= 65536.0)
		return sign | 0x7c00;
	/* The largest pattern whose value is at most v: lo. */
	while (hi - lo > 1) {
		mid = (uint16_t)((lo + hi) / 2);
		if (ref_value(mid) <= v)
			lo = mid;
		else
			hi = mid;
	}
	a = v - ref_value(lo);
	b = ref_value(hi) - v;
	if (a < b || (a == b && !(lo & 1)))
		return sign | lo;
	return sign | hi;
}

static int
is_nan_pattern(uint32_t h)
{
	return (h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0;
}

/* Every pattern widens to its value, both paths give the same bits, out
 * of place and in place, and every non-NaN pattern narrows back. */
static void
t_all_patterns_round_trip(void)
{
	uint16_t *h = kg_xmallocarray(NPAT, sizeof(*h)), *back;
	float *v = kg_xmallocarray(NPAT, sizeof(*v));
	float *s = kg_xmallocarray(NPAT, sizeof(*s));
	float *in = kg_xmallocarray(NPAT, sizeof(*in));
	uint32_t i, bad = 0, badrt = 0, badplace = 0;
	size_t nfin = 0;
	float *fin = kg_xmallocarray(NPAT, sizeof(*fin));
	uint16_t *finh = kg_xmallocarray(NPAT, sizeof(*finh));

	back = kg_xmallocarray(NPAT, sizeof(*back));
	for (i = 0; i < NPAT; i++)
		h[i] = (uint16_t)i;
	kg_f16_decode(v, h, NPAT);
	kg_f16_decode_scalar(s, h, NPAT);
	for (i = 0; i < NPAT; i++) {
		double want = ref_value((uint16_t)i);
		double got = fabs((double)v[i]);

		if (bits(v[i]) != bits(s[i]) ||
		    bits(v[i]) != bits(kg_f16_to_float((uint16_t)i)))
			bad++;
		if (is_nan_pattern(i)) {
			if (!isnan(v[i]) || (bits(v[i]) >> 31) != (i >> 15))
				bad++;
			continue;
		}
		if ((want == 65536.0 ? !isinf(v[i]) : got != want) ||
		    (signbit(v[i]) != 0) != ((i >> 15) != 0))
			bad++;
		if (kg_f16_from_float(v[i]) != i)
			badrt++;
		if (!isinf(v[i])) {
			fin[nfin] = v[i];
			finh[nfin++] = (uint16_t)i;
		}
	}
	T_CHECKF(bad == 0, "%u patterns widen wrong", bad);
	T_CHECKF(badrt == 0, "%u patterns do not narrow back", badrt);
	/* The finite ones through both array paths. */
	T_CHECK(nfin == NPAT - 2 * 1024);
	T_CHECK(kg_f16_encode(back, fin, nfin) == nfin);
	T_CHECK(memcmp(back, finh, nfin * sizeof(*back)) == 0);
	memset(back, 0, NPAT * sizeof(*back));
	T_CHECK(kg_f16_encode_scalar(back, fin, nfin) == nfin);
	T_CHECK(memcmp(back, finh, nfin * sizeof(*back)) == 0);
	/* In place: the halves in the upper half of the float buffer, for
	 * lengths that leave every tail length of the 8-wide blocks. */
	for (i = 0; i < 2; i++) {
		uint32_t n, k;

		for (n = NPAT - 17; n <= NPAT; n++) {
			memcpy((char *)in + 2 * (size_t)n, h + (NPAT - n),
			    2 * (size_t)n);
			if (i == 0)
				kg_f16_decode(in, (const uint16_t *)(void *)
				    ((char *)in + 2 * (size_t)n), n);
			else
				kg_f16_decode_scalar(in, (const uint16_t *)
				    (void *)((char *)in + 2 * (size_t)n), n);
			for (k = 0; k < n; k++)
				badplace += bits(in[k]) != bits(v[NPAT - n + k]);
		}
	}
	T_CHECKF(badplace == 0, "%u values differ widened in place",
	    badplace);
	free(h);
	free(v);
	free(s);
	free(in);
	free(fin);
	free(finh);
	free(back);
}

static float
from_bits(uint32_t u)
{
	float x;

	memcpy(&x, &u, sizeof(x));
	return x;
}

/* Narrowing on the edge cases, each against the reference and, through
 * both array paths, the same. */
static void
t_round_edges(void)
{
	const float c[] = {
		0.0f, -0.0f, 1.0f, -1.0f, KG_F16_MAX, -KG_F16_MAX,
		65503.0f, 65472.0f, 65488.0f, 65487.0f,
		/* ties between neighbours, odd below (up) and even below
		 * (down) */
		1.0f + 0x1p-11f, 1.0f + 3 * 0x1p-11f, 2048.0f + 1.0f,
		2048.0f + 3.0f, -(1.0f + 0x1p-11f),
		/* just off a tie */
		nextafterf(1.0f + 0x1p-11f, 2.0f),
		nextafterf(1.0f + 0x1p-11f, 0.0f),
		/* subnormals and the smallest normal */
		0x1p-24f, 0x1p-25f, nextafterf(0x1p-25f, 1.0f), 3 * 0x1p-25f,
		5 * 0x1p-25f, 0x1p-26f, 0x1p-14f, nextafterf(0x1p-14f, 0.0f),
		1023.5f * 0x1p-24f, 1022.5f * 0x1p-24f, 1e-30f, -1e-30f,
		0x1p-149f, 1.5f * 0x1p-24f, 0.1f, -0.3333333f, 3.14159265f,
	};
	const float over[] = { nextafterf(65520.0f, 0.0f), 65519.0f,
	    65505.0f, 65520.0f, -65520.0f, 65536.0f, 1e10f, -65519.0f };
	size_t n = sizeof(c) / sizeof(c[0]), i;
	uint16_t a[sizeof(c) / sizeof(c[0])], b[sizeof(c) / sizeof(c[0])];

	T_CHECK(kg_f16_encode(a, c, n) == n);
	T_CHECK(kg_f16_encode_scalar(b, c, n) == n);
	for (i = 0; i < n; i++) {
		uint16_t want = ref_round(c[i]);

		T_CHECKF(a[i] == want && b[i] == want && kg_f16_from_float(
		    c[i]) == want, "%a: %04x %04x, reference %04x", (double)c[i],
		    a[i], b[i], want);
	}
	/* Above the range (refused by the array functions): one value
	 * rounds to the top half or to infinity as the reference says. */
	for (i = 0; i < sizeof(over) / sizeof(over[0]); i++)
		T_CHECKF(kg_f16_from_float(over[i]) == ref_round(over[i]),
		    "%a: %04x, reference %04x", (double)over[i],
		    kg_f16_from_float(over[i]), ref_round(over[i]));
	/* Spot values that the reference could share a mistake with. */
	T_CHECK(kg_f16_from_float(1.0f + 0x1p-11f) == 0x3c00);
	T_CHECK(kg_f16_from_float(1.0f + 3 * 0x1p-11f) == 0x3c02);
	T_CHECK(kg_f16_from_float(0x1p-25f) == 0x0000);
	T_CHECK(kg_f16_from_float(3 * 0x1p-25f) == 0x0002);
	T_CHECK(kg_f16_from_float(1023.5f * 0x1p-24f) == 0x0400);
	T_CHECK(kg_f16_from_float(nextafterf(65520.0f, 0.0f)) == 0x7bff);
	T_CHECK(kg_f16_from_float(65520.0f) == 0x7c00);
	T_CHECK(kg_f16_from_float(-1e30f) == 0xfc00);
	T_CHECK(kg_f16_exact(0.5f) && !kg_f16_exact(0.1f) &&
	    !kg_f16_exact(NAN));
}

/* Random values of every exponent in range: paths and reference agree. */
static void
t_round_random(void)
{
	enum { N = 200003 };
	float *x = kg_xmallocarray(N, sizeof(*x));
	uint16_t *a = kg_xmallocarray(N, sizeof(*a));
	uint16_t *b = kg_xmallocarray(N, sizeof(*b));
	struct kg_rng rng;
	size_t i, bad = 0;

	kg_rng_seed(&rng, 16, 0);
	for (i = 0; i < N; i++) {
		/* Exponents 2^-30 .. 2^15, any mantissa and sign. */
		uint32_t e = 97 + (uint32_t)kg_rng_below(&rng, 46);
		uint32_t u = (uint32_t)kg_rng_next(&rng);

		x[i] = from_bits((u & 0x807fffffu) | e << 23);
		if (fabsf(x[i]) > KG_F16_MAX)
			x[i] = KG_F16_MAX;
	}
	T_CHECK(kg_f16_encode(a, x, N) == N);
	T_CHECK(kg_f16_encode_scalar(b, x, N) == N);
	for (i = 0; i < N; i++)
		bad += a[i] != b[i] || a[i] != ref_round(x[i]);
	T_CHECKF(bad == 0, "%zu of %d values round wrong", bad, (int)N);
	free(x);
	free(a);
	free(b);
}

/* A value outside the range stops narrowing at its index, on both paths,
 * at every position of a block of 8 and in the tail. */
static void
t_refuse_out_of_range(void)
{
	const float badv[] = { nextafterf(KG_F16_MAX, 1e9f), -65520.0f,
	    1e9f, INFINITY, -INFINITY, NAN };
	float x[21];
	uint16_t h[21];
	size_t k, j, i, wrong = 0;

	for (j = 0; j < sizeof(badv) / sizeof(badv[0]); j++)
		for (k = 0; k < 21; k++) {
			for (i = 0; i < 21; i++)
				x[i] = (float)i - 10.0f;
			x[k] = badv[j];
			wrong += kg_f16_encode(h, x, 21) != k;
			wrong += kg_f16_encode_scalar(h, x, 21) != k;
		}
	T_CHECKF(wrong == 0, "%zu refusals at the wrong index", wrong);
	x[0] = KG_F16_MAX;
	x[1] = -KG_F16_MAX;
	T_CHECK(kg_f16_encode(h, x, 2) == 2 && h[0] == 0x7bff &&
	    h[1] == 0xfbff);
}

/* The vector path is what ran (else the comparisons above compared the
 * scalar loop with itself). */
static void
t_f16c_used(void)
{
	if (!kg_f16_have_f16c())
		T_SKIP("no F16C on this CPU: only the scalar path ran");
	T_CHECK(kg_f16_have_f16c() == 1);
}

int
main(void)
{
	T_RUN(t_all_patterns_round_trip);
	T_RUN(t_round_edges);
	T_RUN(t_round_random);
	T_RUN(t_refuse_out_of_range);
	T_RUN(t_f16c_used);
	return T_DONE();
}
