/*
 * score: the forward scoring of the shallow models, written once and
 * shared by ranking (kg_model_score, kg_model_score_many in
 * lib/kge/model.c) and training (lib/kge/grad.c, which adds the backward
 * passes).  Parameter layouts are those of lib/kge/model.h.
 *
 * Every model is score(fixed, rel, cand) = S(q, c) with a query vector
 * q = Q(fixed, rel) and a similarity S of lib/compute/kernels.h:
 *
 *   model        Q, side TAIL (fixed = h)  Q, side HEAD (fixed = t)  S(q, c)
 *   transe_l1    h + r                     t - r                     L1
 *   transe_l2    h + r                     t - r                     L2
 *   distmult     h o r                     t o r                     DOT
 *   complex      h * r                     t * conj(r)               DOT
 *   rotate       h * e^(i theta)           t * e^(-i theta)          CMOD_APPROX
 *   rescal       M^T h                     M t                       DOT
 *   transr       M h + r                   M t - r                   L2_DIFF
 *
 * ("*" is the complex product on [re | im] halves; L1, L2 and CMOD
 * include gamma.)  RotatE's head form uses |h o r - t| = |h - t o conj(r)|
 * for |r| = 1.  TransR compares q (rel_dim floats) with the candidate
 * projected into relation space, M c: the chunk form projects every
 * candidate once per run of consecutive queries with equal relation rows
 * (so callers should order queries by relation), the pairs form each
 * candidate with its own M.
 *
 * Chunk and pairs forms as in kernels.h: a chunk scores nq queries against
 * nc shared candidates (out[i * nc + j]; negatives, 1-vs-all, ranking),
 * pairs score n triples (fixed_i, rel_i, cand_i) (positives).  Both write
 * the query vectors to q (nq x kg_score_qdim floats), which a backward
 * needs, and the L2 distances to dist when it is not NULL (nq x nc, or n).
 * work: kg_score_work_size(m, nq, nc) floats (pairs: nq = n, nc = 1).
 * Relation rows come as a struct kg_score_rows.  Nothing allocates or
 * starts threads; calls are thread-safe with per-thread outputs and work.
 * A pair's score does not depend on n or on the other pairs.
 */
#ifndef KG_SCORE_H
#define KG_SCORE_H

#include <stddef.h>

#include "compute/kernels.h"
#include "kge/model.h"

/*
 * Relation rows of a batch of queries: row i at base + i * stride, or at
 * ptr[i] when ptr is not NULL (several queries may share one row, so that
 * the trainer need not copy wide RESCAL or TransR rows per query).
 */
struct kg_score_rows {
	const float *base;
	const float *const *ptr;
	size_t stride;
};

static inline const float *
kg_score_row(const struct kg_score_rows *r, size_t i)
{
	return r->ptr != NULL ? r->ptr[i] : r->base + i * r->stride;
}

/* Floats of a query vector: dim, or rel_dim for TransR. */
size_t kg_score_qdim(const struct kg_model *m);

/* The similarity S of the model. */
enum kg_kern_sim kg_score_sim(const struct kg_model *m);

/* The query form Q of the model, as the table above gives it (TransE:
 * ADD, DistMult: MUL, ...); TransR, whose query is its projection
 * (backend.h's kg_be_transr) and no query form, gets ADD. */
enum kg_qform kg_score_qform(const struct kg_model *m);

/* q = Q(f, rel) for one query (kg_score_qdim(m) floats). */
void kg_score_query(const struct kg_model *m, enum kg_side side,
    const float *f, const float *rel, float *q);

size_t kg_score_work_size(const struct kg_model *m, size_t nq, size_t nc);

void kg_score_chunk(const struct kg_model *m, enum kg_side side, size_t nq,
    const float *fixed, const struct kg_score_rows *rel, const float *cand,
    size_t nc, float *out, float *q, float *dist, float *work);

/*
 * The chunk form as ranking runs it, without distances: kg_score_chunk
 * for every model but two, where ranking and training use different
 * kernels for speed, and their results agree to float rounding
 * (tests/unit/t_score.c):
 *   TransR compares q with the projected candidates through one GEMM
 *     (KG_KERN_L2), where training goes by differences (L2_DIFF): its
 *     gradient divides by distances, which the GEMM form gets wrong when
 *     they are small against the norms.
 *   RotatE takes the moduli with the correctly rounded square root
 *     (KG_KERN_CMOD), training with its approximate one (CMOD_APPROX),
 *     which keeps its results as they were.
 * Ranking needs no gradient, so it takes the faster kernel of the two
 * (README, "Measured choices", has kg-eval's CPU times with training's).
 */
void kg_score_rank(const struct kg_model *m, enum kg_side side, size_t nq,
    const float *fixed, const struct kg_score_rows *rel, const float *cand,
    size_t nc, float *out, float *q, float *work);

/* The similarity kg_score_rank uses: kg_score_sim's but for the two
 * models above (TransR: L2, RotatE: CMOD). */
enum kg_kern_sim kg_score_rank_sim(const struct kg_model *m);

void kg_score_pairs(const struct kg_model *m, enum kg_side side, size_t n,
    const float *fixed, const struct kg_score_rows *rel, const float *cand,
    float *out, float *q, float *dist, float *work);

/*
 * Relation prediction (Chen et al. 2021) scores one (h, ?, t) against every
 * relation row: score(h, r, t) = S'(p, r) with a pair vector p = P(h, t)
 * of rel_width floats and a similarity S' of kernels.h:
 *
 *   model        P(h, t)                              S'(p, r)
 *   transe_l1    t - h                                L1 (gamma - ||p - r||_1)
 *   transe_l2    t - h                                L2
 *   distmult     h o t                                DOT
 *   complex      [re | im] of conj(h) * t, that is    DOT
 *                [h_re t_re + h_im t_im | h_re t_im - h_im t_re]
 *   rescal       h t^T, row-major (p[a d + b] = h_a t_b)  DOT
 *
 * RotatE and TransR are not linear in, or distances to, their relation
 * rows and have no pair form.  kg_score_pair_sim returns 0 and sets *sim
 * for the models that have one, -1 for the others.
 */
int kg_score_pair_sim(const struct kg_model *m, enum kg_kern_sim *sim);
/* p = P(h, t), rel_width floats. */
void kg_score_pair_vector(const struct kg_model *m, const float *h,
    const float *t, float *p);

/*
 * TransR's runs: the end of the run of consecutive queries from start on
 * whose relation rows are equal (the same pointer or the same floats).
 */
size_t kg_score_run_end(const struct kg_model *m,
    const struct kg_score_rows *rel, size_t start, size_t nq);

/*
 * Ranking.  Both functions below are this file's forward passes, the
 * code training runs (lib/kge/grad.c): kg_model_score is the pairs form
 * training scores its positives with, kg_model_score_many the chunk form
 * of its negatives, bit for bit.  Neither starts threads; callers in
 * parallel regions keep OpenBLAS at one thread.
 */

/* Score one triple from its rows.  Thread-safe; allocates only when a
 * query vector passes 2048 floats. */
float kg_model_score(const struct kg_model *m, const float *h,
    const float *r, const float *t);

/*
 * Score nq queries against nc candidates.  For side TAIL, query i is
 * (fixed_i, rel_i, ?) and out[i * nc + j] = score(fixed_i, rel_i, cand_j);
 * for side HEAD, out[i * nc + j] = score(cand_j, rel_i, fixed_i).
 * fixed: nq entity rows; rel: nq relation rows; cand: nc entity rows, all
 * contiguous.  The bilinear models and TransE L2 go through one GEMM
 * (TransE L2 by ||q||^2 - 2 q.c + ||c||^2), TransE L1 and RotatE through
 * the tiled distance kernels of lib/compute/kernels.h.  TransR projects
 * the candidates once per run of consecutive queries with identical
 * relation rows, so callers should order queries by relation.  work must
 * hold kg_model_score_work_size(m, nq, nc) floats.
 */
size_t kg_model_score_work_size(const struct kg_model *m, size_t nq,
    size_t nc);
void kg_model_score_many(const struct kg_model *m, enum kg_side side,
    size_t nq, const float *fixed, const float *rel, const float *cand,
    size_t nc, float *out, float *work);

#endif
