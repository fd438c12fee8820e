/*
 * kernels: the batched scoring kernels of the shallow models, the second
 * half of the compute backend (compute.h holds the GEMMs).
 *
 * A kernel compares query rows q (n x d floats, row-major) with candidate
 * rows c by one similarity S and knows nothing of models: which S a model
 * uses, its query form, gamma and row layouts live in lib/kge/score.c.
 * lib/compute/kernels_cpu.c and kernels_grad.c implement them on the
 * calling thread (loops the compiler vectorises, with an x86-64-v3 clone,
 * AVX2 blocks in kernels_avx2.c, AVX-512 tiles of the L1 and CMOD chunk
 * forms in kernels_avx512.c, and kg_sgemm), summing in the order that
 * lib/compute/lanes.h defines; a CUDA backend later implements this
 * header in a file of its own.
 *
 *   KG_KERN_DOT      S = q . c
 *   KG_KERN_L1       S = gamma - ||q - c||_1
 *   KG_KERN_L2       S = gamma - ||q - c||_2; the chunk form goes through
 *                    one GEMM, ||q||^2 - 2 q.c + ||c||^2 clamped at 0
 *                    (fast, but loses the relative accuracy of distances
 *                    much smaller than the norms)
 *   KG_KERN_L2_DIFF  as KG_KERN_L2, from the differences (q - c) in both
 *                    forms
 *   KG_KERN_CMOD     S = gamma - sum_k |q_k - c_k|, the complex moduli of
 *                    rows stored as [re(d/2) | im(d/2)] (d even)
 *   KG_KERN_CMOD_APPROX  as KG_KERN_CMOD, the moduli by an approximate
 *                    square root (relative error about 1e-7), the one
 *                    RotatE's training has always used, so that its
 *                    results stay the same; CMOD is faster where the CPU
 *                    has a vector square root (AVX2: vsqrtps against a
 *                    Newton iteration); its backward weighs each term by
 *                    the same estimate's 1/|.| after two Newton steps
 *                    (about 5e-6), multiplying rather than dividing
 *
 * Two shapes:
 *   chunk: nq queries x nc shared candidates, out[i * nc + j];
 *   pairs: n queries and n candidates, out[i] = S(q_i, c_i); the L2 kinds
 *          always go by differences here.
 * The forward writes the distances ||q - c|| to dist (same shape as out)
 * when dist is not NULL and S is an L2 kind; the L2 backward needs them.
 * The backward, given g = dL/dout, OVERWRITES gq (dL/dq) and ADDS dL/dc to
 * gc unless gc is NULL.  An L2 backward uses dist as scratch and leaves
 * it undefined.  Below a distance of KG_KERN_DIST_EPS the gradient of the
 * L2 norm is taken as 0; the complex modulus divides by at least it.
 * The pairs forms and the L1 and CMOD chunk forms skip entries with
 * g == 0, so these add nothing (not even a -0).
 *
 * work: kg_kern_work_size(sim, nq, nc) floats (0 means none is needed,
 * NULL may then be passed); nothing in it is kept between calls.  No
 * kernel allocates or starts threads; every kernel is thread-safe with
 * per-thread outputs and work.  Results are the same, bit for bit, for
 * any nq and nc and any thread count: every S(q_i, c_j) is one reduction
 * over d in a fixed order (GEMMs excepted: see compute.h).
 */
#ifndef KG_KERNELS_H
#define KG_KERNELS_H

#include <stddef.h>

#include "compute/compute.h"
#include "compute/kinds.h"

size_t kg_kern_work_size(enum kg_kern_sim sim, size_t nq, size_t nc);

void kg_kern_chunk(enum kg_kern_sim sim, size_t nq, size_t nc, size_t d,
    float gamma, const float *q, const float *c, float *out, float *dist,
    float *work);
void kg_kern_chunk_backward(enum kg_kern_sim sim, size_t nq, size_t nc,
    size_t d, const float *q, const float *c, const float *g, float *dist,
    float *gq, float *gc, float *work);

void kg_kern_pairs(enum kg_kern_sim sim, size_t n, size_t d, float gamma,
    const float *q, const float *c, float *out, float *dist);
void kg_kern_pairs_backward(enum kg_kern_sim sim, size_t n, size_t d,
    const float *q, const float *c, const float *g, const float *dist,
    float *gq, float *gc);

/* out[i] = ||x_i||^2 for n rows of d floats. */
void kg_kern_sqnorms(size_t n, size_t d, const float *x, float *out);

/*
 * y = A x (KG_NO_TRANS, y of m floats: one dot product per row of A, in a
 * fixed order) or y = A^T x (KG_TRANS, y of n floats) for A of m x n,
 * row-major; y is overwritten.  The per-query products of RESCAL and
 * TransR, deterministic unlike a BLAS gemv.
 */
void kg_kern_matvec(enum kg_trans t, size_t m, size_t n, const float *a,
    const float *x, float *y);

/* P = C M^T: nc rows of d floats projected by M (k x d) into nc rows of
 * k floats (TransR's candidates in relation space), one GEMM. */
void kg_kern_project(size_t nc, size_t k, size_t d, const float *m,
    const float *c, float *p);

#endif
