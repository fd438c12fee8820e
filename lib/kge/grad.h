/*
 * grad: training-time scoring and backward passes of the shallow models.
 *
 * The forward passes are lib/kge/score.c's, the same code that ranks
 * (kg_model_score_many): score(fixed, rel, cand) = S(q, cand) with the
 * query q = Q(fixed, rel) and the similarities S tabulated in
 * lib/kge/score.h.  This module keeps what the backward needs and adds it:
 * dL/dq from the kernels of lib/compute/kernels.h (GEMMs for the dot
 * forms and the L2 chunk form, pair by pair for L1 and RotatE), then
 * dL/dfixed and dL/drel through Q, per model.  TransR goes through the
 * projected candidates M c (one GEMM per run of queries with equal
 * relation rows).
 *
 * Two forms:
 *   pairs: n triples (fixed_i, rel_i, cand_i), score_i (positives);
 *   chunk: nq queries x nc shared candidates, out[i * nc + j] (negatives,
 *          1-vs-all).
 * Each has a forward that keeps in "work" what its backward needs, and a
 * backward that, given dL/dscore, ADDS dL/dfixed, dL/drel and dL/dcand to
 * the caller's gradient arrays (nq x dim, nq x rel_width, nc x dim; for
 * pairs n x ...).  The backward must follow its forward with the same
 * arguments and the same work buffer.  All arrays are row-major and
 * contiguous; work must hold kg_grad_work_size(m, nq, nc) floats.  No
 * function allocates or starts threads (keep OpenBLAS at one thread when
 * calling from a parallel region); all are thread-safe with per-thread
 * work buffers.
 */
#ifndef KG_GRAD_H
#define KG_GRAD_H

#include <stddef.h>

#include "kge/model.h"

/* Floats of work needed for a chunk of nq queries and nc candidates (and
 * for pairs with n = nq, nc = 1). */
size_t kg_grad_work_size(const struct kg_model *m, size_t nq, size_t nc);

/* Scores of n triples; the head is fixed for side TAIL, the tail for side
 * HEAD (the score is the same; the side only picks the query form). */
void kg_grad_pairs_forward(const struct kg_model *m, enum kg_side side,
    size_t n, const float *fixed, const float *rel, const float *cand,
    float *score, float *work);
/* Add g_i * d score_i / d(fixed_i, rel_i, cand_i) to gfixed, grel, gcand. */
void kg_grad_pairs_backward(const struct kg_model *m, enum kg_side side,
    size_t n, const float *fixed, const float *rel, const float *cand,
    const float *g, float *gfixed, float *grel, float *gcand, float *work);

/* out[i * nc + j] = score of query i with candidate j, as
 * kg_model_score_many. */
void kg_grad_chunk_forward(const struct kg_model *m, enum kg_side side,
    size_t nq, const float *fixed, const float *rel, const float *cand,
    size_t nc, float *out, float *work);
/* Add sum_ij g[i * nc + j] * d out_ij / d(fixed_i, rel_i, cand_j) to
 * gfixed, grel, gcand.  gcand may be NULL when the candidates are not
 * trained (it is then not computed). */
void kg_grad_chunk_backward(const struct kg_model *m, enum kg_side side,
    size_t nq, const float *fixed, const float *rel, const float *cand,
    size_t nc, const float *g, float *gfixed, float *grel, float *gcand,
    float *work);

/*
 * The same four passes with relation rows given by pointer: rel[i] is
 * query i's relation row and grel[i] where its gradient is added.
 * Several queries may share a row and a gradient row (the gradient rows
 * then get the sum), so callers need not copy wide relation rows per
 * query.
 */
void kg_grad_pairs_forward_rows(const struct kg_model *m, enum kg_side side,
    size_t n, const float *fixed, const float *const *rel,
    const float *cand, float *score, float *work);
void kg_grad_pairs_backward_rows(const struct kg_model *m,
    enum kg_side side, size_t n, const float *fixed,
    const float *const *rel, const float *cand, const float *g,
    float *gfixed, float *const *grel, float *gcand, float *work);
void kg_grad_chunk_forward_rows(const struct kg_model *m, enum kg_side side,
    size_t nq, const float *fixed, const float *const *rel,
    const float *cand, size_t nc, float *out, float *work);
void kg_grad_chunk_backward_rows(const struct kg_model *m,
    enum kg_side side, size_t nq, const float *fixed,
    const float *const *rel, const float *cand, size_t nc, const float *g,
    float *gfixed, float *const *grel, float *gcand, float *work);

/*
 * Relation prediction (lib/kge/score.h's pair form, for the models that
 * have one): out[i * nr + k] = score(h_i, R_k, t_i) for n pairs (h_i,
 * t_i) (rows of dim floats) against the nr relation rows R (nr x
 * rel_width, contiguous).  The backward, given g = dL/dout, ADDS dL/dh,
 * dL/dt and dL/dR to gh, gt (n x dim) and gR (nr x rel_width); it must
 * follow its forward with the same arguments and work, which holds
 * kg_grad_relpred_work_size(m, n, nr) floats.
 */
size_t kg_grad_relpred_work_size(const struct kg_model *m, size_t n,
    size_t nr);
void kg_grad_relpred_forward(const struct kg_model *m, size_t n,
    const float *h, const float *t, const float *R, size_t nr, float *out,
    float *work);
void kg_grad_relpred_backward(const struct kg_model *m, size_t n,
    const float *h, const float *t, const float *R, size_t nr,
    const float *g, float *gh, float *gt, float *gR, float *work);

/*
 * DURA (Zhang et al. 2020), the regulariser of the bilinear models
 * (DistMult, ComplEx, RESCAL) for n positives (fixed_i, rel[i], cand_i)
 * scored on side:
 *   coef * sum_i ||Q(fixed_i, rel_i)||^2 + ||cand_i||^2
 *                + ||Q'(cand_i, rel_i)||^2 + ||fixed_i||^2
 * with Q the query form of side and Q' that of the other side (score.h),
 * so that both directions of a triple are bounded.  Adds scale times its
 * gradient to gfixed, grel[i] and gcand and returns its value (without
 * scale), in double.  work: kg_grad_dura_work_size(m) floats.
 */
size_t kg_grad_dura_work_size(const struct kg_model *m);
double kg_grad_dura(const struct kg_model *m, enum kg_side side, size_t n,
    const float *fixed, const float *const *rel, const float *cand,
    double coef, double scale, float *gfixed, float *const *grel,
    float *gcand, float *work);

#endif
