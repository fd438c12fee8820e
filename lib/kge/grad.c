#include "kge/grad.h"

/* Let GCC vectorise the row loops at -O2: see lib/kge/loss.c. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math", "vect-cost-model=dynamic")
#endif

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "compute/compute.h"
#include "compute/kernels.h"
#include "core/util.h"
#include "kge/score.h"

size_t
kg_grad_work_size(const struct kg_model *m, size_t nq, size_t nc)
{
	size_t qd = kg_score_qdim(m), n;

	/* Q, GQ, D (nq x nc), then TransR's U and the forward's work. */
	n = 2 * nq * qd + nq * nc + kg_score_work_size(m, nq, nc);
	if (m->kind == KG_MODEL_TRANSR)
		n += (nc + 1) * qd;
	return n;
}

/*
 * The work layout shared by forward and backward: the query vectors q,
 * their gradients gq, the L2 distances d, TransR's per-query gradient of
 * the projected candidates u, and the forward's own work s.
 */
struct work {
	float *q, *gq, *d, *u, *s;
};

static struct work
work_split(const struct kg_model *m, size_t nq, size_t nc, float *w)
{
	struct work x;
	size_t qd = kg_score_qdim(m);

	x.q = w;
	x.gq = x.q + nq * qd;
	x.d = x.gq + nq * qd;
	x.u = x.d + nq * nc;
	x.s = x.u + (m->kind == KG_MODEL_TRANSR ? (nc + 1) * qd : 0);
	return x;
}

/* Gradient rows of the relations, as struct kg_score_rows. */
struct mrows {
	float *base;
	float *const *ptr;
	size_t stride;
};

static inline float *
mrow_at(const struct mrows *r, size_t i)
{
	return r->ptr != NULL ? r->ptr[i] : r->base + i * r->stride;
}

/*
 * The backward passes of the query forms of lib/kge/score.c: add dL/df and
 * dL/drel given gq = dL/dq.  Inlined into query_backward's x86-64-v3
 * clone, so that they vectorise (and the RESCAL sums reduce) as before.
 */
#if defined(__GNUC__)
#define HOT_INLINE static inline __attribute__((always_inline))
#else
#define HOT_INLINE static inline
#endif

/* ComplEx: q = f * r' with r' = r (tail) or conj(r) (head). */
HOT_INLINE void
complex_query_backward(enum kg_side side, size_t h, const float *f,
    const float *rel, const float *restrict gq, float *restrict gf,
    float *restrict gr)
{
	size_t i;

	if (side == KG_SIDE_TAIL) {
#pragma omp simd
		for (i = 0; i < h; i++) {
			float a = f[i], b = f[h + i], c = rel[i];
			float s = rel[h + i], gre = gq[i], gim = gq[h + i];

			gf[i] += gre * c + gim * s;
			gf[h + i] += -gre * s + gim * c;
			gr[i] += gre * a + gim * b;
			gr[h + i] += -gre * b + gim * a;
		}
	} else {
#pragma omp simd
		for (i = 0; i < h; i++) {
			float a = f[i], b = f[h + i], c = rel[i];
			float s = rel[h + i], gre = gq[i], gim = gq[h + i];

			gf[i] += gre * c - gim * s;
			gf[h + i] += gre * s + gim * c;
			gr[i] += gre * a + gim * b;
			gr[h + i] += gre * b - gim * a;
		}
	}
}

/* RotatE: q = (a + ib)(c + i s') with s' = +-s, c = cos, s = sin theta. */
HOT_INLINE void
rotate_query_backward(enum kg_side side, size_t h, const float *f,
    const float *rel, const float *restrict gq, float *restrict gf,
    float *restrict gr)
{
	size_t i;

	for (i = 0; i < h; i++) {
		float a = f[i], b = f[h + i], c = cosf(rel[i]);
		float s = sinf(rel[i]), gre = gq[i], gim = gq[h + i];
		float gc, gs;

		if (side == KG_SIDE_HEAD)
			s = -s;
		gf[i] += gre * c + gim * s;
		gf[h + i] += -gre * s + gim * c;
		gc = gre * a + gim * b;
		gs = -gre * b + gim * a;
		if (side == KG_SIDE_HEAD) {
			gs = -gs;
			s = -s;
		}
		gr[i] += -gc * s + gs * c;
	}
}

/* RESCAL: q_j = sum_i f_i M_ij (tail) or q_i = sum_j M_ij f_j (head). */
HOT_INLINE void
rescal_query_backward(enum kg_side side, size_t d, const float *f,
    const float *rel, const float *restrict gq, float *restrict gf,
    float *restrict gr)
{
	size_t i, j;

	for (i = 0; i < d; i++) {
		const float *row = rel + i * d;
		float *grow = gr + i * d, fi = f[i], gi = gq[i], s = 0.0f;

		if (side == KG_SIDE_TAIL) {
#pragma omp simd reduction(+:s)
			for (j = 0; j < d; j++) {
				s += row[j] * gq[j];
				grow[j] += fi * gq[j];
			}
			gf[i] += s;
		} else {
			for (j = 0; j < d; j++) {
				gf[j] += row[j] * gi;
				grow[j] += gi * f[j];
			}
		}
	}
}

/* Every model but TransR (transr_query_backward). */
KG_HOT_CLONES
static void
query_backward(const struct kg_model *m, enum kg_side side, const float *f,
    const float *rel, const float *restrict gq, float *restrict gf,
    float *restrict gr)
{
	size_t d = m->dim, i;
	float sign = side == KG_SIDE_TAIL ? 1.0f : -1.0f;

	switch (m->kind) {
	case KG_MODEL_TRANSE_L1:
	case KG_MODEL_TRANSE_L2:
		for (i = 0; i < d; i++) {
			gf[i] += gq[i];
			gr[i] += sign * gq[i];
		}
		break;
	case KG_MODEL_DISTMULT:
		for (i = 0; i < d; i++) {
			gf[i] += gq[i] * rel[i];
			gr[i] += gq[i] * f[i];
		}
		break;
	case KG_MODEL_COMPLEX:
		complex_query_backward(side, d / 2, f, rel, gq, gf, gr);
		break;
	case KG_MODEL_ROTATE:
		rotate_query_backward(side, d / 2, f, rel, gq, gf, gr);
		break;
	case KG_MODEL_RESCAL:
		rescal_query_backward(side, d, f, rel, gq, gf, gr);
		break;
	case KG_MODEL_TRANSR:
		break;
	}
}

/* TransR: add dL/df, dL/drel given gq, for q = M f +- r. */
KG_HOT_CLONES
static void
transr_query_backward(const struct kg_model *m, enum kg_side side,
    const float *f, const float *rel, const float *gq, float *gf, float *gr)
{
	size_t k = m->rel_dim, d = m->dim, i, j;
	const float *M = rel + k;
	float *gM = gr + k, sign = side == KG_SIDE_TAIL ? 1.0f : -1.0f;

	for (i = 0; i < k; i++) {
		const float *row = M + i * d;
		float *grow = gM + i * d, gi = gq[i];

		gr[i] += sign * gi;
		for (j = 0; j < d; j++) {
			gf[j] += row[j] * gi;
			grow[j] += gi * f[j];
		}
	}
}

/* TransR, one query against one candidate: given u = g (q - p) / dist,
 * add the candidate and projection gradients; gq gets -u. */
KG_HOT_CLONES
static void
transr_pair_backward(const struct kg_model *m, const float *rel,
    const float *c, const float *u, float *gq, float *gr, float *gc)
{
	size_t k = m->rel_dim, d = m->dim, i, j;
	const float *M = rel + k;
	float *gM = gr + k;

	for (i = 0; i < k; i++) {
		const float *row = M + i * d;
		float *grow = gM + i * d, ui = u[i];

		gq[i] -= ui;
		for (j = 0; j < d; j++) {
			grow[j] += ui * c[j];
			if (gc != NULL)
				gc[j] += row[j] * ui;
		}
	}
}

/* TransR pairs: the candidate of pair i projected with its own M. */
static void
transr_pairs_backward(const struct kg_model *m, enum kg_side side, size_t n,
    const float *fixed, const struct kg_score_rows *R, const float *cand,
    const float *g, float *gfixed, const struct mrows *GR, float *gcand,
    struct work *w)
{
	size_t d = m->dim, k = m->rel_dim, i, j;
	float *p = w->u, *u = w->u + k;

	for (i = 0; i < n; i++) {
		const float *q = w->q + i * k, *r = kg_score_row(R, i);
		const float *c = cand + i * d;
		float *gq = w->gq + i * k;

		memset(gq, 0, k * sizeof(*gq));
		if (g[i] == 0.0f || w->d[i] < KG_KERN_DIST_EPS)
			continue;
		kg_kern_matvec(KG_NO_TRANS, k, d, r + k, c, p);
		for (j = 0; j < k; j++)
			u[j] = g[i] * (q[j] - p[j]) / w->d[i];
		transr_pair_backward(m, r, c, u, gq, mrow_at(GR, i),
		    gcand + i * d);
		transr_query_backward(m, side, fixed + i * d, r, gq,
		    gfixed + i * d, mrow_at(GR, i));
	}
}

static void
pairs_backward(const struct kg_model *m, enum kg_side side, size_t n,
    const float *fixed, const struct kg_score_rows *R, const float *cand,
    const float *g, float *gfixed, const struct mrows *GR, float *gcand,
    float *work)
{
	struct work w = work_split(m, n, 1, work);
	size_t d = m->dim, i;

	if (m->kind == KG_MODEL_TRANSR) {
		transr_pairs_backward(m, side, n, fixed, R, cand, g, gfixed,
		    GR, gcand, &w);
		return;
	}
	kg_kern_pairs_backward(kg_score_sim(m), n, d, w.q, cand, g, w.d, w.gq,
	    gcand);
	for (i = 0; i < n; i++)
		if (g[i] != 0.0f)
			query_backward(m, side, fixed + i * d,
			    kg_score_row(R, i), w.gq + i * d, gfixed + i * d,
			    mrow_at(GR, i));
}

/*
 * TransR chunk: per run of queries with equal relation rows the projected
 * candidates P = C M^T again (as the forward made them); per query the
 * gradient U of its scores with respect to P, then dL/dM += U^T C and
 * dL/dC += U M.
 */
static void
transr_chunk_backward(const struct kg_model *m, enum kg_side side,
    size_t nq, const float *fixed, const struct kg_score_rows *R,
    const float *cand, size_t nc, const float *g, float *gfixed,
    const struct mrows *GR, float *gcand, struct work *w)
{
	size_t d = m->dim, k = m->rel_dim, start, end, i;

	for (start = 0; start < nq; start = end) {
		const float *r = kg_score_row(R, start);

		end = kg_score_run_end(m, R, start, nq);
		kg_kern_project(nc, k, d, r + k, cand, w->s);
		for (i = start; i < end; i++) {
			float *gq = w->gq + i * k, *gr = mrow_at(GR, i);

			memset(w->u, 0, nc * k * sizeof(*w->u));
			kg_kern_chunk_backward(KG_KERN_L2_DIFF, 1, nc, k,
			    w->q + i * k, w->s, g + i * nc, w->d + i * nc, gq,
			    w->u, NULL);
			kg_sgemm(KG_TRANS, KG_NO_TRANS, k, d, nc, 1.0f, w->u, k,
			    cand, d, 1.0f, gr + k, d);
			if (gcand != NULL)
				kg_sgemm(KG_NO_TRANS, KG_NO_TRANS, nc, d, k,
				    1.0f, w->u, k, r + k, d, 1.0f, gcand, d);
			transr_query_backward(m, side, fixed + i * d, r, gq,
			    gfixed + i * d, gr);
		}
	}
}

static void
chunk_backward(const struct kg_model *m, enum kg_side side, size_t nq,
    const float *fixed, const struct kg_score_rows *R, const float *cand,
    size_t nc, const float *g, float *gfixed, const struct mrows *GR,
    float *gcand, float *work)
{
	struct work w = work_split(m, nq, nc, work);
	size_t d = m->dim, i;

	if (m->kind == KG_MODEL_TRANSR) {
		transr_chunk_backward(m, side, nq, fixed, R, cand, nc, g,
		    gfixed, GR, gcand, &w);
		return;
	}
	kg_kern_chunk_backward(kg_score_sim(m), nq, nc, d, w.q, cand, g, w.d,
	    w.gq, gcand, w.s);
	for (i = 0; i < nq; i++)
		query_backward(m, side, fixed + i * d, kg_score_row(R, i),
		    w.gq + i * d, gfixed + i * d, mrow_at(GR, i));
}

static void
pairs_forward(const struct kg_model *m, enum kg_side side, size_t n,
    const float *fixed, const struct kg_score_rows *R, const float *cand,
    float *score, float *work)
{
	struct work w = work_split(m, n, 1, work);

	kg_score_pairs(m, side, n, fixed, R, cand, score, w.q, w.d, w.s);
}

static void
chunk_forward(const struct kg_model *m, enum kg_side side, size_t nq,
    const float *fixed, const struct kg_score_rows *R, const float *cand,
    size_t nc, float *out, float *work)
{
	struct work w = work_split(m, nq, nc, work);

	kg_score_chunk(m, side, nq, fixed, R, cand, nc, out, w.q, w.d, w.s);
}

void
kg_grad_pairs_forward(const struct kg_model *m, enum kg_side side, size_t n,
    const float *fixed, const float *rel, const float *cand, float *score,
    float *work)
{
	struct kg_score_rows R = { rel, NULL, m->rel_width };

	pairs_forward(m, side, n, fixed, &R, cand, score, work);
}

void
kg_grad_pairs_backward(const struct kg_model *m, enum kg_side side, size_t n,
    const float *fixed, const float *rel, const float *cand, const float *g,
    float *gfixed, float *grel, float *gcand, float *work)
{
	struct kg_score_rows R = { rel, NULL, m->rel_width };
	struct mrows GR = { grel, NULL, m->rel_width };

	pairs_backward(m, side, n, fixed, &R, cand, g, gfixed, &GR, gcand,
	    work);
}

void
kg_grad_chunk_forward(const struct kg_model *m, enum kg_side side,
    size_t nq, const float *fixed, const float *rel, const float *cand,
    size_t nc, float *out, float *work)
{
	struct kg_score_rows R = { rel, NULL, m->rel_width };

	chunk_forward(m, side, nq, fixed, &R, cand, nc, out, work);
}

void
kg_grad_chunk_backward(const struct kg_model *m, enum kg_side side,
    size_t nq, const float *fixed, const float *rel, const float *cand,
    size_t nc, const float *g, float *gfixed, float *grel, float *gcand,
    float *work)
{
	struct kg_score_rows R = { rel, NULL, m->rel_width };
	struct mrows GR = { grel, NULL, m->rel_width };

	chunk_backward(m, side, nq, fixed, &R, cand, nc, g, gfixed, &GR,
	    gcand, work);
}

void
kg_grad_pairs_forward_rows(const struct kg_model *m, enum kg_side side,
    size_t n, const float *fixed, const float *const *rel,
    const float *cand, float *score, float *work)
{
	struct kg_score_rows R = { NULL, rel, 0 };

	pairs_forward(m, side, n, fixed, &R, cand, score, work);
}

void
kg_grad_pairs_backward_rows(const struct kg_model *m, enum kg_side side,
    size_t n, const float *fixed, const float *const *rel,
    const float *cand, const float *g, float *gfixed, float *const *grel,
    float *gcand, float *work)
{
	struct kg_score_rows R = { NULL, rel, 0 };
	struct mrows GR = { NULL, grel, 0 };

	pairs_backward(m, side, n, fixed, &R, cand, g, gfixed, &GR, gcand,
	    work);
}

void
kg_grad_chunk_forward_rows(const struct kg_model *m, enum kg_side side,
    size_t nq, const float *fixed, const float *const *rel,
    const float *cand, size_t nc, float *out, float *work)
{
	struct kg_score_rows R = { NULL, rel, 0 };

	chunk_forward(m, side, nq, fixed, &R, cand, nc, out, work);
}

void
kg_grad_chunk_backward_rows(const struct kg_model *m, enum kg_side side,
    size_t nq, const float *fixed, const float *const *rel,
    const float *cand, size_t nc, const float *g, float *gfixed,
    float *const *grel, float *gcand, float *work)
{
	struct kg_score_rows R = { NULL, rel, 0 };
	struct mrows GR = { NULL, grel, 0 };

	chunk_backward(m, side, nq, fixed, &R, cand, nc, g, gfixed, &GR,
	    gcand, work);
}

size_t
kg_grad_relpred_work_size(const struct kg_model *m, size_t n, size_t nr)
{
	enum kg_kern_sim sim = KG_KERN_DOT;

	(void)kg_score_pair_sim(m, &sim);
	/* P, GP, the distances, then the kernel's work. */
	return 2 * n * m->rel_width + n * nr + kg_kern_work_size(sim, n, nr);
}

void
kg_grad_relpred_forward(const struct kg_model *m, size_t n, const float *h,
    const float *t, const float *R, size_t nr, float *out, float *work)
{
	size_t d = m->dim, rw = m->rel_width, i;
	float *P = work, *D = work + 2 * n * rw;
	enum kg_kern_sim sim = KG_KERN_DOT;

	(void)kg_score_pair_sim(m, &sim);
	for (i = 0; i < n; i++)
		kg_score_pair_vector(m, h + i * d, t + i * d, P + i * rw);
	kg_kern_chunk(sim, n, nr, rw, m->gamma, P, R, out, D, D + n * nr);
}

/* Add dL/dh, dL/dt of one pair given gp = dL/dp, p = P(h, t). */
static void
pair_vector_backward(const struct kg_model *m, const float *h,
    const float *t, const float *gp, float *gh, float *gt)
{
	size_t d = m->dim, k = d / 2, i, j;

	switch (m->kind) {
	case KG_MODEL_TRANSE_L1:
	case KG_MODEL_TRANSE_L2:
		for (i = 0; i < d; i++) {
			gh[i] -= gp[i];
			gt[i] += gp[i];
		}
		break;
	case KG_MODEL_DISTMULT:
		for (i = 0; i < d; i++) {
			gh[i] += gp[i] * t[i];
			gt[i] += gp[i] * h[i];
		}
		break;
	case KG_MODEL_COMPLEX:
		for (i = 0; i < k; i++) {
			float a = h[i], b = h[k + i], c = t[i], s = t[k + i];
			float gre = gp[i], gim = gp[k + i];

			gh[i] += gre * c + gim * s;
			gh[k + i] += gre * s - gim * c;
			gt[i] += gre * a - gim * b;
			gt[k + i] += gre * b + gim * a;
		}
		break;
	case KG_MODEL_RESCAL:
		for (i = 0; i < d; i++) {
			const float *row = gp + i * d;
			float s = 0.0f;

			for (j = 0; j < d; j++) {
				s += row[j] * t[j];
				gt[j] += row[j] * h[i];
			}
			gh[i] += s;
		}
		break;
	default:
		break;
	}
}

void
kg_grad_relpred_backward(const struct kg_model *m, size_t n, const float *h,
    const float *t, const float *R, size_t nr, const float *g, float *gh,
    float *gt, float *gR, float *work)
{
	size_t d = m->dim, rw = m->rel_width, i;
	float *P = work, *GP = work + n * rw, *D = work + 2 * n * rw;
	enum kg_kern_sim sim = KG_KERN_DOT;

	(void)kg_score_pair_sim(m, &sim);
	kg_kern_chunk_backward(sim, n, nr, rw, P, R, g, D, GP, gR, D + n * nr);
	for (i = 0; i < n; i++)
		pair_vector_backward(m, h + i * d, t + i * d, GP + i * rw,
		    gh + i * d, gt + i * d);
}

size_t
kg_grad_dura_work_size(const struct kg_model *m)
{
	return 2 * (size_t)kg_score_qdim(m);
}

/* ||x||^2 of n floats in double; adds c * 2x to g. */
static double
sq_term(const float *x, size_t n, float c, float *g)
{
	double s = 0.0;
	size_t i;

	for (i = 0; i < n; i++) {
		s += (double)x[i] * x[i];
		g[i] += c * 2.0f * x[i];
	}
	return s;
}

double
kg_grad_dura(const struct kg_model *m, enum kg_side side, size_t n,
    const float *fixed, const float *const *rel, const float *cand,
    double coef, double scale, float *gfixed, float *const *grel,
    float *gcand, float *work)
{
	size_t d = m->dim, i, j;
	enum kg_side other = side == KG_SIDE_TAIL ? KG_SIDE_HEAD : KG_SIDE_TAIL;
	float c = (float)(coef * scale), *q = work, *gq = work + d;
	double s = 0.0;

	for (i = 0; i < n; i++) {
		const float *f = fixed + i * d, *x = cand + i * d;

		kg_score_query(m, side, f, rel[i], q);
		for (j = 0; j < d; j++)
			gq[j] = 0.0f;
		s += sq_term(q, d, c, gq);
		query_backward(m, side, f, rel[i], gq, gfixed + i * d, grel[i]);
		kg_score_query(m, other, x, rel[i], q);
		for (j = 0; j < d; j++)
			gq[j] = 0.0f;
		s += sq_term(q, d, c, gq);
		query_backward(m, other, x, rel[i], gq, gcand + i * d, grel[i]);
		s += sq_term(f, d, c, gfixed + i * d);
		s += sq_term(x, d, c, gcand + i * d);
	}
	return coef * s;
}
