#include "kge/score.h"

/* Let GCC vectorise the row loops at -O2: see lib/kge/loss.c. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math", "vect-cost-model=dynamic")
#endif

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"

#if defined(__GNUC__)
#define HOT_INLINE static inline __attribute__((always_inline))
#else
#define HOT_INLINE static inline
#endif

size_t
kg_score_qdim(const struct kg_model *m)
{
	return m->kind == KG_MODEL_TRANSR ? m->rel_dim : m->dim;
}

enum kg_kern_sim
kg_score_sim(const struct kg_model *m)
{
	switch (m->kind) {
	case KG_MODEL_TRANSE_L1:
		return KG_KERN_L1;
	case KG_MODEL_TRANSE_L2:
		return KG_KERN_L2;
	case KG_MODEL_TRANSR:
		return KG_KERN_L2_DIFF;
	case KG_MODEL_ROTATE:
		return KG_KERN_CMOD_APPROX;
	default:
		return KG_KERN_DOT;
	}
}

enum kg_qform
kg_score_qform(const struct kg_model *m)
{
	switch (m->kind) {
	case KG_MODEL_DISTMULT:
		return KG_QFORM_MUL;
	case KG_MODEL_COMPLEX:
		return KG_QFORM_COMPLEX;
	case KG_MODEL_ROTATE:
		return KG_QFORM_ROTATE;
	case KG_MODEL_RESCAL:
		return KG_QFORM_RESCAL;
	default:
		return KG_QFORM_ADD;
	}
}

enum kg_kern_sim
kg_score_rank_sim(const struct kg_model *m)
{
	switch (m->kind) {
	case KG_MODEL_TRANSR:
		return KG_KERN_L2;
	case KG_MODEL_ROTATE:
		return KG_KERN_CMOD;
	default:
		return kg_score_sim(m);
	}
}

size_t
kg_score_work_size(const struct kg_model *m, size_t nq, size_t nc)
{
	size_t a = kg_kern_work_size(kg_score_sim(m), nq, nc);
	size_t b = kg_kern_work_size(kg_score_rank_sim(m), nq, nc);
	size_t n = a > b ? a : b;

	/* TransR: the candidates' projections. */
	if (m->kind == KG_MODEL_TRANSR)
		n += (nq > nc ? nq : nc) * m->rel_dim;
	return n;
}

/* The complex products of ComplEx: q = f * r (tail) or f * conj(r). */
HOT_INLINE void
complex_query(enum kg_side side, size_t h, const float *restrict f,
    const float *restrict rel, float *restrict q)
{
	size_t i;

	if (side == KG_SIDE_TAIL) {
#pragma omp simd
		for (i = 0; i < h; i++) {
			q[i] = f[i] * rel[i] - f[h + i] * rel[h + i];
			q[h + i] = f[i] * rel[h + i] + f[h + i] * rel[i];
		}
	} else {
#pragma omp simd
		for (i = 0; i < h; i++) {
			q[i] = f[i] * rel[i] + f[h + i] * rel[h + i];
			q[h + i] = -f[i] * rel[h + i] + f[h + i] * rel[i];
		}
	}
}

/* RotatE: q = f * e^(+-i theta). */
HOT_INLINE void
rotate_query(enum kg_side side, size_t h, const float *restrict f,
    const float *restrict theta, float *restrict q)
{
	size_t i;

	for (i = 0; i < h; i++) {
		float a = f[i], b = f[h + i], c = cosf(theta[i]);
		float s = sinf(theta[i]);

		if (side == KG_SIDE_HEAD)
			s = -s;
		q[i] = a * c - b * s;
		q[h + i] = a * s + b * c;
	}
}

/* TransR: q = M f + r (tail) or M f - r, relation row [r (k) | M]. */
HOT_INLINE void
transr_query(const struct kg_model *m, enum kg_side side,
    const float *f, const float *rel, float *restrict q)
{
	size_t k = m->rel_dim, i;
	float sign = side == KG_SIDE_TAIL ? 1.0f : -1.0f;

	kg_kern_matvec(KG_NO_TRANS, k, m->dim, rel + k, f, q);
	for (i = 0; i < k; i++)
		q[i] += sign * rel[i];
}

HOT_INLINE void
query(const struct kg_model *m, enum kg_side side, const float *restrict f,
    const float *restrict rel, float *restrict q)
{
	size_t d = m->dim, i;

	switch (m->kind) {
	case KG_MODEL_TRANSE_L1:
	case KG_MODEL_TRANSE_L2:
		if (side == KG_SIDE_TAIL) {
#pragma omp simd
			for (i = 0; i < d; i++)
				q[i] = f[i] + rel[i];
		} else {
#pragma omp simd
			for (i = 0; i < d; i++)
				q[i] = f[i] - rel[i];
		}
		break;
	case KG_MODEL_DISTMULT:
#pragma omp simd
		for (i = 0; i < d; i++)
			q[i] = f[i] * rel[i];
		break;
	case KG_MODEL_COMPLEX:
		complex_query(side, d / 2, f, rel, q);
		break;
	case KG_MODEL_ROTATE:
		rotate_query(side, d / 2, f, rel, q);
		break;
	case KG_MODEL_RESCAL:
		/* Tails: q = h^T M = M^T h.  Heads: q = M t. */
		kg_kern_matvec(side == KG_SIDE_TAIL ? KG_TRANS : KG_NO_TRANS,
		    d, d, rel, f, q);
		break;
	case KG_MODEL_TRANSR:
		transr_query(m, side, f, rel, q);
		break;
	}
}

void
kg_score_query(const struct kg_model *m, enum kg_side side, const float *f,
    const float *rel, float *q)
{
	query(m, side, f, rel, q);
}

KG_HOT_CLONES
static void
queries(const struct kg_model *m, enum kg_side side, size_t nq,
    const float *fixed, const struct kg_score_rows *R, float *q)
{
	size_t d = m->dim, qd = kg_score_qdim(m), i;

	for (i = 0; i < nq; i++)
		query(m, side, fixed + i * d, kg_score_row(R, i), q + i * qd);
}

size_t
kg_score_run_end(const struct kg_model *m, const struct kg_score_rows *R,
    size_t start, size_t nq)
{
	const float *r = kg_score_row(R, start);
	size_t end = start + 1;

	while (end < nq) {
		const float *x = kg_score_row(R, end);

		if (x != r && memcmp(x, r, m->rel_width * sizeof(*r)) != 0)
			break;
		end++;
	}
	return end;
}

/* The chunk form with similarity sim. */
static void
chunk(const struct kg_model *m, enum kg_side side, size_t nq,
    const float *fixed, const struct kg_score_rows *R, const float *cand,
    size_t nc, float *out, float *q, float *dist, float *work,
    enum kg_kern_sim sim)
{
	size_t qd = kg_score_qdim(m), start, end;
	float *p = work + kg_kern_work_size(sim, nq, nc);

	if (nq == 0 || nc == 0)
		return;
	queries(m, side, nq, fixed, R, q);
	if (m->kind != KG_MODEL_TRANSR) {
		kg_kern_chunk(sim, nq, nc, m->dim, m->gamma, q, cand, out,
		    dist, work);
		return;
	}
	/* The projection of every candidate costs nc * k * d: a run of
	 * queries with equal relation rows shares one. */
	for (start = 0; start < nq; start = end) {
		const float *r = kg_score_row(R, start);

		end = kg_score_run_end(m, R, start, nq);
		kg_kern_project(nc, qd, m->dim, r + qd, cand, p);
		kg_kern_chunk(sim, end - start, nc, qd, m->gamma,
		    q + start * qd, p, out + start * nc,
		    dist != NULL ? dist + start * nc : NULL, work);
	}
}

void
kg_score_chunk(const struct kg_model *m, enum kg_side side, size_t nq,
    const float *fixed, const struct kg_score_rows *R, const float *cand,
    size_t nc, float *out, float *q, float *dist, float *work)
{
	chunk(m, side, nq, fixed, R, cand, nc, out, q, dist, work,
	    kg_score_sim(m));
}

void
kg_score_rank(const struct kg_model *m, enum kg_side side, size_t nq,
    const float *fixed, const struct kg_score_rows *R, const float *cand,
    size_t nc, float *out, float *q, float *work)
{
	chunk(m, side, nq, fixed, R, cand, nc, out, q, NULL, work,
	    kg_score_rank_sim(m));
}

void
kg_score_pairs(const struct kg_model *m, enum kg_side side, size_t n,
    const float *fixed, const struct kg_score_rows *R, const float *cand,
    float *out, float *q, float *dist, float *work)
{
	size_t d = m->dim, qd = kg_score_qdim(m), i;

	if (n == 0)
		return;
	queries(m, side, n, fixed, R, q);
	if (m->kind != KG_MODEL_TRANSR) {
		kg_kern_pairs(kg_score_sim(m), n, d, m->gamma, q, cand, out,
		    dist);
		return;
	}
	for (i = 0; i < n; i++)
		kg_kern_matvec(KG_NO_TRANS, qd, d, kg_score_row(R, i) + qd,
		    cand + i * d, work + i * qd);
	kg_kern_pairs(KG_KERN_L2_DIFF, n, qd, m->gamma, q, work, out, dist);
}

int
kg_score_pair_sim(const struct kg_model *m, enum kg_kern_sim *sim)
{
	switch (m->kind) {
	case KG_MODEL_TRANSE_L1:
	case KG_MODEL_TRANSE_L2:
	case KG_MODEL_DISTMULT:
	case KG_MODEL_COMPLEX:
	case KG_MODEL_RESCAL:
		*sim = kg_score_sim(m);
		return 0;
	default:
		return -1;
	}
}

void
kg_score_pair_vector(const struct kg_model *m, const float *h,
    const float *t, float *p)
{
	size_t d = m->dim, k = d / 2, i, j;

	switch (m->kind) {
	case KG_MODEL_TRANSE_L1:
	case KG_MODEL_TRANSE_L2:
		for (i = 0; i < d; i++)
			p[i] = t[i] - h[i];
		break;
	case KG_MODEL_DISTMULT:
		for (i = 0; i < d; i++)
			p[i] = h[i] * t[i];
		break;
	case KG_MODEL_COMPLEX:
		for (i = 0; i < k; i++) {
			p[i] = h[i] * t[i] + h[k + i] * t[k + i];
			p[k + i] = h[i] * t[k + i] - h[k + i] * t[i];
		}
		break;
	case KG_MODEL_RESCAL:
		for (i = 0; i < d; i++)
			for (j = 0; j < d; j++)
				p[i * d + j] = h[i] * t[j];
		break;
	default:
		break;
	}
}

/* Floats of kg_model_score's stack buffer; larger models allocate. */
#define SCORE_STACK 2048

float
kg_model_score(const struct kg_model *m, const float *h, const float *r,
    const float *t)
{
	struct kg_score_rows R = { r, NULL, 0 };
	size_t qd = kg_score_qdim(m);
	size_t need = qd + 1 + kg_score_work_size(m, 1, 1);
	float buf[SCORE_STACK], *q = buf, s;

	if (need > SCORE_STACK)
		q = kg_xmallocarray(need, sizeof(float));
	kg_score_pairs(m, KG_SIDE_TAIL, 1, h, &R, t, &s, q, q + qd,
	    q + qd + 1);
	if (q != buf)
		free(q);
	return s;
}

size_t
kg_model_score_work_size(const struct kg_model *m, size_t nq, size_t nc)
{
	return nq * kg_score_qdim(m) + kg_score_work_size(m, nq, nc);
}

void
kg_model_score_many(const struct kg_model *m, enum kg_side side, size_t nq,
    const float *fixed, const float *rel, const float *cand, size_t nc,
    float *out, float *work)
{
	struct kg_score_rows R = { rel, NULL, m->rel_width };

	kg_score_rank(m, side, nq, fixed, &R, cand, nc, out, work,
	    work + nq * kg_score_qdim(m));
}
