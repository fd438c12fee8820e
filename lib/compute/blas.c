/* The OpenBLAS backend of compute.h. */
#include "compute/compute.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cblas.h>

/* Every size handed to CBLAS fits its int: larger products are cut into
 * blocks by the callers, so a size past INT_MAX is a bug. */
static int
ci(size_t x)
{
	if (x > (size_t)INT_MAX) {
		fprintf(stderr, "kgpipe: internal error: matrix size %zu "
		    "exceeds the BLAS interface\n", x);
		abort();
	}
	return (int)x;
}

/* A leading dimension of at least 1, which CBLAS requires even when the
 * matrix has no columns. */
static int
ld(size_t x)
{
	return x == 0 ? 1 : ci(x);
}

static enum CBLAS_TRANSPOSE
tr(enum kg_trans t)
{
	return t == KG_TRANS ? CblasTrans : CblasNoTrans;
}

void
kg_compute_init(void)
{
	/* OpenBLAS must not start threads of its own inside ours. */
	openblas_set_num_threads(1);
}

const char *
kg_compute_name(void)
{
	static char name[64];
	const char *core = openblas_get_corename();

	if (name[0] == '\0')
		snprintf(name, sizeof(name), "openblas:%s",
		    core != NULL ? core : "unknown");
	return name;
}

const char *
kg_compute_better_core(void)
{
	const char *core;

	if (getenv("OPENBLAS_CORETYPE") != NULL)
		return NULL;
	core = openblas_get_corename();
	/* Only the generic fallback is second-guessed: a model that OpenBLAS
	 * recognised got the kernels its authors chose for it. */
	if (core == NULL || strcasecmp(core, "prescott") != 0)
		return NULL;
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f") &&
	    __builtin_cpu_supports("avx512bw") &&
	    __builtin_cpu_supports("avx512vl") &&
	    __builtin_cpu_supports("avx512dq"))
		return "SkylakeX";
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
		return "Haswell";
	return NULL;
}

void
kg_sgemm(enum kg_trans ta, enum kg_trans tb, size_t m, size_t n, size_t k,
    float alpha, const float *a, size_t lda, const float *b, size_t ldb,
    float beta, float *c, size_t ldc)
{
	if (m == 0 || n == 0)
		return;
	cblas_sgemm(CblasRowMajor, tr(ta), tr(tb), ci(m), ci(n), ci(k), alpha,
	    a, ld(lda), b, ld(ldb), beta, c, ld(ldc));
}

void
kg_sgemv(enum kg_trans ta, size_t m, size_t n, float alpha, const float *a,
    size_t lda, const float *x, float beta, float *y)
{
	if (m == 0 || n == 0)
		return;
	cblas_sgemv(CblasRowMajor, tr(ta), ci(m), ci(n), alpha, a, ld(lda), x,
	    1, beta, y, 1);
}

void
kg_dsymm_lu(size_t m, size_t n, double alpha, const double *a, size_t lda,
    const double *b, size_t ldb, double beta, double *c, size_t ldc)
{
	if (m == 0 || n == 0)
		return;
	cblas_dsymm(CblasColMajor, CblasLeft, CblasUpper, ci(m), ci(n), alpha,
	    a, ld(lda), b, ld(ldb), beta, c, ld(ldc));
}

void
kg_dgemm_cm(enum kg_trans ta, enum kg_trans tb, size_t m, size_t n,
    size_t k, double alpha, const double *a, size_t lda, const double *b,
    size_t ldb, double beta, double *c, size_t ldc)
{
	if (m == 0 || n == 0)
		return;
	cblas_dgemm(CblasColMajor, tr(ta), tr(tb), ci(m), ci(n), ci(k), alpha,
	    a, ld(lda), b, ld(ldb), beta, c, ld(ldc));
}

void
kg_dgemv_cm(enum kg_trans ta, size_t m, size_t n, double alpha,
    const double *a, size_t lda, const double *x, double beta, double *y)
{
	if (m == 0 || n == 0)
		return;
	cblas_dgemv(CblasColMajor, tr(ta), ci(m), ci(n), alpha, a, ld(lda), x,
	    1, beta, y, 1);
}
