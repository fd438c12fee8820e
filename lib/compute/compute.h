/*
 * compute: where the dense maths runs (the compute backend).
 *
 * Every matrix product of kgpipe goes through these functions, so that a
 * backend is one file: lib/compute/blas.c implements them with OpenBLAS
 * (CBLAS) on the calling thread; a CUDA backend later implements the same
 * functions in a file of its own, chosen by the Makefile.  No other module
 * includes cblas.h.
 *
 * Single precision, row-major (C order), as every kgpipe array:
 *   kg_sgemm   C[m, n] = alpha * op(A) op(B) + beta * C, op(X) = X or X^T
 *              (ta, tb), with leading dimensions lda, ldb, ldc as CBLAS
 *              counts them for row-major storage;
 *   kg_sgemv   y[m or n] = alpha * op(A) x + beta * y for A of m x n.
 * Double precision, column-major (LAPACK order, the text encoder's SVD):
 *   kg_dsymm_lu  C[m, n] = alpha * A B + beta * C, A symmetric m x m with
 *                its upper triangle stored;
 *   kg_dgemm_cm, kg_dgemv_cm  as kg_sgemm and kg_sgemv, column-major.
 * Sizes are size_t; a size that does not fit the backend's int is a
 * programming error (kgpipe cuts larger products into blocks) and aborts
 * with a message rather than computing on a truncated size.  A product
 * with m or n zero does nothing; with k zero, gemm scales C by beta, as
 * BLAS does.
 *
 * Threads: the calls run on the calling thread only, so that OpenMP
 * threads of the caller may each run their own products; the results of
 * one call do not depend on how many threads the process has.
 * kg_compute_init() must be called once before the first product (it
 * keeps OpenBLAS from starting threads of its own); it is cheap and may
 * be called again.
 */
#ifndef KG_COMPUTE_H
#define KG_COMPUTE_H

#include <stddef.h>

enum kg_trans { KG_NO_TRANS, KG_TRANS };

void kg_compute_init(void);

/* A short name of the backend and the kernels it runs ("openblas:Haswell"),
 * for manifests and benchmarks; a static string. */
const char *kg_compute_name(void);

/*
 * Some virtual machines hide the CPU model, and OpenBLAS then falls back
 * to generic SSE3 kernels ("Prescott") even on AVX2 or AVX-512 hardware,
 * which makes sgemm several times slower.  Returns the OPENBLAS_CORETYPE
 * value that selects fitting kernels ("SkylakeX" or "Haswell"), or NULL
 * when the current kernels are fine or OPENBLAS_CORETYPE is already set.
 * OpenBLAS reads the variable only when it loads, so a tool that wants it
 * sets it and re-executes itself (cmd/cli/tool.h: kg_tool_tune_blas).
 */
const char *kg_compute_better_core(void);

void kg_sgemm(enum kg_trans ta, enum kg_trans tb, size_t m, size_t n,
    size_t k, float alpha, const float *a, size_t lda, const float *b,
    size_t ldb, float beta, float *c, size_t ldc);

void kg_sgemv(enum kg_trans ta, size_t m, size_t n, float alpha,
    const float *a, size_t lda, const float *x, float beta, float *y);

void kg_dsymm_lu(size_t m, size_t n, double alpha, const double *a,
    size_t lda, const double *b, size_t ldb, double beta, double *c,
    size_t ldc);

void kg_dgemm_cm(enum kg_trans ta, enum kg_trans tb, size_t m, size_t n,
    size_t k, double alpha, const double *a, size_t lda, const double *b,
    size_t ldb, double beta, double *c, size_t ldc);

void kg_dgemv_cm(enum kg_trans ta, size_t m, size_t n, double alpha,
    const double *a, size_t lda, const double *x, double beta, double *y);

#endif
