/*
 * gnn/kernels: the small dense kernels the GNN layers share (internal to
 * lib/gnn).  Every sum is taken in an order fixed by its arguments, so
 * the results are the same bits on any thread count: axpy and axpy2 work
 * element by element, dot keeps eight partial sums in a fixed order, and
 * sum_rows gives each column chunk to one thread that adds the rows in
 * order.  The products go through compute/compute.h.
 */
#ifndef KG_GNN_KERNELS_H
#define KG_GNN_KERNELS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "compute/compute.h"

/* C[m, n] (+)= A[m, k] B[k, n] */
static inline void
mm(size_t m, size_t n, size_t k, const float *a, const float *b, float beta,
    float *c)
{
	if (m == 0 || n == 0)
		return;
	kg_sgemm(KG_NO_TRANS, KG_NO_TRANS, m, n, k, 1.0f, a, k, b, n, beta, c,
	    n);
}

/* C[k, n] += A[m, k]^T B[m, n] */
static inline void
mm_tn(size_t m, size_t n, size_t k, const float *a, const float *b, float *c)
{
	if (m == 0 || n == 0 || k == 0)
		return;
	kg_sgemm(KG_TRANS, KG_NO_TRANS, k, n, m, 1.0f, a, k, b, n, 1.0f, c, n);
}

/* C[m, k] (+)= A[m, n] B[k, n]^T */
static inline void
mm_nt(size_t m, size_t n, size_t k, const float *a, const float *b,
    float beta, float *c)
{
	if (m == 0 || k == 0)
		return;
	kg_sgemm(KG_NO_TRANS, KG_TRANS, m, k, n, 1.0f, a, n, b, n, beta, c, k);
}

/* -O2 leaves these loops scalar; each element is computed alone, so
 * vectorising them (omp simd) changes no result. */
static inline void
axpy(size_t n, float a, const float *restrict x, float *restrict y)
{
	size_t k;

#pragma omp simd
	for (k = 0; k < n; k++)
		y[k] += a * x[k];
}

/* Eight partial sums, so the compiler can vectorise without reordering
 * float additions on its own (the order stays fixed: deterministic). */
static inline float
dot(size_t n, const float *restrict x, const float *restrict y)
{
	float acc[8] = { 0 }, s;
	size_t k = 0, j;

	for (; k + 8 <= n; k += 8)
		for (j = 0; j < 8; j++)
			acc[j] += x[k + j] * y[k + j];
	s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) +
	    ((acc[4] + acc[5]) + (acc[6] + acc[7]));
	for (; k < n; k++)
		s += x[k] * y[k];
	return s;
}

/* y += a x + b z */
static inline void
axpy2(size_t n, float a, const float *restrict x, float b,
    const float *restrict z, float *restrict y)
{
	size_t k;

#pragma omp simd
	for (k = 0; k < n; k++)
		y[k] += a * x[k] + b * z[k];
}

/* Gathers by message hop through arrays far larger than the caches, one
 * row per message: ask for the row a few messages ahead. */
#define AHEAD 4

static inline void
prefetch_row(const float *p, size_t d)
{
	size_t k;

	for (k = 0; k < d; k += 16)
		__builtin_prefetch(p + k);
}

/*
 * Sums into a global vector (biases, attention vectors) go by columns:
 * each thread owns chunks of COLS columns, copies them to a local array
 * (no false sharing), adds every row in order and stores them back, so
 * each element sees the additions of a single-threaded loop in the same
 * order.
 */
#define COLS 16

static inline long
col_chunks(size_t d)
{
	return (long)((d + COLS - 1) / COLS);
}

/* gb[d] += sum_i G[i] (rows in order) */
static inline void
sum_rows(size_t n, size_t d, const float *G, float *gb)
{
	long c;

#pragma omp parallel for schedule(static, 1)
	for (c = 0; c < col_chunks(d); c++) {
		size_t c0 = (size_t)c * COLS, w = d - c0 < COLS ? d - c0 : COLS;
		size_t i, k;
		float acc[COLS];

		memcpy(acc, gb + c0, w * sizeof(float));
		for (i = 0; i < n; i++)
			for (k = 0; k < w; k++)
				acc[k] += G[i * d + c0 + k];
		memcpy(gb + c0, acc, w * sizeof(float));
	}
}

/* out[i] = bias for every row i */
static inline void
fill_bias(size_t n, size_t d, const float *bias, float *out)
{
	long i;

#pragma omp parallel for schedule(static, 1024)
	for (i = 0; i < (long)n; i++)
		memcpy(out + (size_t)i * d, bias, d * sizeof(float));
}

/* Row i of a map (NULL: the identity). */
static inline uint64_t
row_of(const int32_t *map, uint64_t i)
{
	return map != NULL ? (uint64_t)map[i] : i;
}

#endif
