/*
 * f16: IEEE 754 binary16 ("half", float16) to and from float32, for
 * tables kept on disk at half the bytes (the buffer store's partition
 * files).  Narrowing rounds to nearest, ties to even; widening is exact.
 * Each array function picks, once, the F16C instructions when the CPU
 * has them (x86-64 with AVX and F16C) and a portable scalar loop
 * otherwise; both give the same bits for every input (tests/unit/t_f16.c
 * checks all 65536 half patterns and the rounding edge cases).  A NaN
 * keeps its sign and the top 10 bits of its payload and comes out quiet,
 * as F16C gives it.
 *
 * Range: binary16 holds finite values up to 65504.  kg_f16_encode
 * refuses, rather than rounds to infinity, any value whose magnitude
 * exceeds 65504 (and a NaN or an infinity), so a table never turns into
 * infinities silently; values below 2^-24 become zeros (or subnormals).
 * Thread-safe; no allocation.
 */
#ifndef KG_F16_H
#define KG_F16_H

#include <stddef.h>
#include <stdint.h>

/* Largest finite binary16 value. */
#define KG_F16_MAX 65504.0f

/* One value: x rounded to nearest even (|x| >= 65520 gives an infinity,
 * a NaN a quiet NaN), and h widened (exact). */
uint16_t kg_f16_from_float(float x);
float kg_f16_to_float(uint16_t h);

/*
 * Narrow src[0..n) into dst[0..n).  Returns n when every value is in
 * range (|x| <= 65504), else the index of the first one that is not (a
 * NaN or infinity too); dst[0..returned) are then written, the rest
 * unspecified.  src and dst must not overlap.
 */
size_t kg_f16_encode(uint16_t *dst, const float *src, size_t n);
/*
 * Widen src[0..n) into dst[0..n).  src and dst must not overlap, with
 * one exception that lets a caller read halves into the second half of
 * a float buffer and widen them in place: src may be exactly the upper
 * half of dst's bytes ((char *)src == (char *)dst + 2 * n).
 */
void kg_f16_decode(float *dst, const uint16_t *src, size_t n);

/* The same two with the scalar loop forced (for tests), and whether the
 * dispatched ones use F16C on this CPU (1) or the scalar loop (0). */
size_t kg_f16_encode_scalar(uint16_t *dst, const float *src, size_t n);
void kg_f16_decode_scalar(float *dst, const uint16_t *src, size_t n);
int kg_f16_have_f16c(void);

/* Whether x is exactly a binary16 value (widening its narrowing gives
 * x back; a NaN is not). */
int kg_f16_exact(float x);

#endif
