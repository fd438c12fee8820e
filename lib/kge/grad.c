#include "kge/grad.h"

/* Let GCC vectorise the row loops at -O2: see lib/kge/loss.c. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math", "vect-cost-model=dynamic")
#endif

#include <math.h>
#include <stdint.h>
#include <string.h>


#include "compute/compute.h"
#include "core/util.h"

/* How S(q, c) compares a query vector with a candidate row. */
enum s_kind { S_DOT, S_L1, S_L2, S_MOD };

/* Below this distance the gradient of a norm is taken as zero (its
 * subgradient at the kink). */
#define DIST_EPS 1e-12f

static enum s_kind
s_kind_of(const struct kg_model *m)
{
	switch (m->kind) {
	case KG_MODEL_TRANSE_L1:
		return S_L1;
	case KG_MODEL_TRANSE_L2:
	case KG_MODEL_TRANSR:
		return S_L2;
	case KG_MODEL_ROTATE:
		return S_MOD;
	default:
		return S_DOT;
	}
}

/* Floats of a query vector: dim, or rel_dim for TransR. */
static size_t
qdim(const struct kg_model *m)
{
	return m->kind == KG_MODEL_TRANSR ? m->rel_dim : m->dim;
}

size_t
kg_grad_work_size(const struct kg_model *m, size_t nq, size_t nc)
{
	size_t qd = qdim(m), n;

	/* Q, GQ, D (nq x nc), QN (nq), CN (nc); TransR adds P and U. */
	n = 2 * nq * qd + nq * nc + nq + nc;
	if (m->kind == KG_MODEL_TRANSR)
		n += 2 * nc * qd;
	return n;
}

/*
 * The work layout shared by forward and backward.
 */
struct work {
	float *q, *gq, *d, *qn, *cn, *p, *u;
};

static struct work
work_split(const struct kg_model *m, size_t nq, size_t nc, float *w)
{
	struct work x;
	size_t qd = qdim(m);

	x.q = w;
	x.gq = x.q + nq * qd;
	x.d = x.gq + nq * qd;
	x.qn = x.d + nq * nc;
	x.cn = x.qn + nq;
	x.p = x.cn + nc;
	x.u = x.p + nc * qd;
	return x;
}

/*
 * Relation rows, and their gradient rows, either contiguous (row i at
 * base + i * stride) or through one pointer per query, so that the
 * trainer can point at the table and at one gradient row per distinct
 * relation instead of copying wide rows (RESCAL, TransR) per positive.
 */
struct rows {
	const float *base;
	const float *const *ptr;
	size_t stride;
};

struct mrows {
	float *base;
	float *const *ptr;
	size_t stride;
};

static inline const float *
row_at(const struct rows *r, size_t i)
{
	return r->ptr != NULL ? r->ptr[i] : r->base + i * r->stride;
}

static inline float *
mrow_at(const struct mrows *r, size_t i)
{
	return r->ptr != NULL ? r->ptr[i] : r->base + i * r->stride;
}

/* TransR relation row: translation r (k floats) then M (k x d). */
KG_HOT_CLONES
static void
transr_query(const struct kg_model *m, enum kg_side side, const float *f,
    const float *rel, float *q)
{
	size_t k = m->rel_dim, d = m->dim, i, j;
	const float *M = rel + k;
	float sign = side == KG_SIDE_TAIL ? 1.0f : -1.0f;

	for (i = 0; i < k; i++) {
		const float *row = M + i * d;
		float s = 0.0f;

#pragma omp simd reduction(+:s)
		for (j = 0; j < d; j++)
			s += row[j] * f[j];
		q[i] = s + sign * rel[i];
	}
}

/* q = Q(f, rel) for every model but TransR. */
KG_HOT_CLONES
static void
query_forward(const struct kg_model *m, enum kg_side side, const float *f,
    const float *rel, float *restrict q)
{
	size_t d = m->dim, h = d / 2, i, j;

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
		break;
	case KG_MODEL_ROTATE:
		for (i = 0; i < h; i++) {
			float a = f[i], b = f[h + i], c = cosf(rel[i]);
			float s = sinf(rel[i]);

			if (side == KG_SIDE_HEAD)
				s = -s;
			q[i] = a * c - b * s;
			q[h + i] = a * s + b * c;
		}
		break;
	case KG_MODEL_RESCAL:
		if (side == KG_SIDE_TAIL) {
			memset(q, 0, d * sizeof(*q));
			for (i = 0; i < d; i++) {
				const float *row = rel + i * d;
				float fi = f[i];

#pragma omp simd
				for (j = 0; j < d; j++)
					q[j] += fi * row[j];
			}
		} else {
			for (i = 0; i < d; i++) {
				const float *row = rel + i * d;
				float s = 0.0f;

#pragma omp simd reduction(+:s)
				for (j = 0; j < d; j++)
					s += row[j] * f[j];
				q[i] = s;
			}
		}
		break;
	case KG_MODEL_TRANSR:
		transr_query(m, side, f, rel, q);
		break;
	}
}

/* Add dL/df and dL/drel given gq = dL/dq (every model but TransR). */
KG_HOT_CLONES
static void
query_backward(const struct kg_model *m, enum kg_side side, const float *f,
    const float *rel, const float *restrict gq, float *restrict gf,
    float *restrict gr)
{
	size_t d = m->dim, h = d / 2, i, j;

	switch (m->kind) {
	case KG_MODEL_TRANSE_L1:
	case KG_MODEL_TRANSE_L2:
		if (side == KG_SIDE_TAIL)
			for (i = 0; i < d; i++) {
				gf[i] += gq[i];
				gr[i] += gq[i];
			}
		else
			for (i = 0; i < d; i++) {
				gf[i] += gq[i];
				gr[i] -= gq[i];
			}
		break;
	case KG_MODEL_DISTMULT:
		for (i = 0; i < d; i++) {
			gf[i] += gq[i] * rel[i];
			gr[i] += gq[i] * f[i];
		}
		break;
	case KG_MODEL_COMPLEX:
		/* q = f * r' with r' = r (tail) or conj(r) (head). */
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
		break;
	case KG_MODEL_ROTATE:
		for (i = 0; i < h; i++) {
			float a = f[i], b = f[h + i], c = cosf(rel[i]);
			float s = sinf(rel[i]), gre = gq[i], gim = gq[h + i];
			float gc, gs;

			/* q = (a + ib)(c + i s') with s' = +-s. */
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
			/* c = cos theta, s = sin theta. */
			gr[i] += -gc * s + gs * c;
		}
		break;
	case KG_MODEL_RESCAL:
		if (side == KG_SIDE_TAIL) {
			/* q_j = sum_i f_i M_ij */
			for (i = 0; i < d; i++) {
				const float *row = rel + i * d;
				float *grow = gr + i * d, fi = f[i], s = 0.0f;

#pragma omp simd reduction(+:s)
				for (j = 0; j < d; j++) {
					s += row[j] * gq[j];
					grow[j] += fi * gq[j];
				}
				gf[i] += s;
			}
		} else {
			/* q_i = sum_j M_ij f_j */
			for (i = 0; i < d; i++) {
				const float *row = rel + i * d;
				float *grow = gr + i * d, gi = gq[i];

				for (j = 0; j < d; j++) {
					gf[j] += row[j] * gi;
					grow[j] += gi * f[j];
				}
			}
		}
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

/*
 * sqrt without errno (glibc's sqrtf may set it, so GCC will not vectorise
 * it at -O2): x * rsqrt(x), rsqrt from the classic bit-level estimate and
 * three Newton steps (relative error about 1e-7).  Arguments below 1e-30
 * count as 1e-30; a NaN or infinite argument still gives NaN.
 */
static inline float
sqrt_noerr(float x)
{
	union {
		float f;
		int32_t i;
	} u;
	float c = x > 1e-30f ? x : 1e-30f, h = 0.5f * c, y;

	u.f = c;
	u.i = 0x5f3759df - (u.i >> 1);
	y = u.f;
	y = y * (1.5f - h * y * y);
	y = y * (1.5f - h * y * y);
	y = y * (1.5f - h * y * y);
	return c * y + 0.0f * x;
}

/* S(q, c) for one pair; gamma included. */
KG_HOT_CLONES
static float
s_pair(const struct kg_model *m, enum s_kind sk, const float *q,
    const float *c, size_t n)
{
	size_t i, h = n / 2;
	float s = 0.0f;

	switch (sk) {
	case S_DOT:
#pragma omp simd reduction(+:s)
		for (i = 0; i < n; i++)
			s += q[i] * c[i];
		return s;
	case S_L1:
#pragma omp simd reduction(+:s)
		for (i = 0; i < n; i++)
			s += fabsf(q[i] - c[i]);
		return m->gamma - s;
	case S_L2:
#pragma omp simd reduction(+:s)
		for (i = 0; i < n; i++)
			s += (q[i] - c[i]) * (q[i] - c[i]);
		return m->gamma - sqrtf(s);
	case S_MOD:
#pragma omp simd reduction(+:s)
		for (i = 0; i < h; i++) {
			float dr = q[i] - c[i], di = q[h + i] - c[h + i];

			s += sqrt_noerr(dr * dr + di * di);
		}
		return m->gamma - s;
	}
	return 0.0f;
}

/*
 * Add g * dS/dq to gq and g * dS/dc to gc (gc may be NULL) for one pair;
 * dist is the distance for S_L2.
 */
KG_HOT_CLONES
static void
s_pair_backward(enum s_kind sk, const float *restrict q,
    const float *restrict c, size_t n, float g, float dist,
    float *restrict gq, float *restrict gc)
{
	size_t i, h = n / 2;

	switch (sk) {
	case S_DOT:
#pragma omp simd
		for (i = 0; i < n; i++)
			gq[i] += g * c[i];
		if (gc != NULL) {
#pragma omp simd
			for (i = 0; i < n; i++)
				gc[i] += g * q[i];
		}
		break;
	case S_L1:
		/* One loop with and one without gc, so that both vectorise. */
		if (gc != NULL) {
#pragma omp simd
			for (i = 0; i < n; i++) {
				float e = q[i] - c[i];
				float s = e > 0.0f ? g : e < 0.0f ? -g : 0.0f;

				gq[i] -= s;
				gc[i] += s;
			}
		} else {
#pragma omp simd
			for (i = 0; i < n; i++) {
				float e = q[i] - c[i];

				gq[i] -= e > 0.0f ? g : e < 0.0f ? -g : 0.0f;
			}
		}
		break;
	case S_L2:
		if (dist < DIST_EPS)
			break;
		g /= dist;
#pragma omp simd
		for (i = 0; i < n; i++)
			gq[i] -= g * (q[i] - c[i]);
		if (gc != NULL) {
#pragma omp simd
			for (i = 0; i < n; i++)
				gc[i] += g * (q[i] - c[i]);
		}
		break;
	case S_MOD:
		if (gc != NULL) {
#pragma omp simd
			for (i = 0; i < h; i++) {
				float dr = q[i] - c[i], di = q[h + i] - c[h + i];
				/* Below DIST_EPS this is a subgradient of |.|
				 * (norm <= 1) rather than 0. */
				float mod = sqrt_noerr(dr * dr + di * di);
				float w = g / (mod > DIST_EPS ? mod : DIST_EPS);

				gq[i] -= w * dr;
				gq[h + i] -= w * di;
				gc[i] += w * dr;
				gc[h + i] += w * di;
			}
		} else {
#pragma omp simd
			for (i = 0; i < h; i++) {
				float dr = q[i] - c[i], di = q[h + i] - c[h + i];
				/* Below DIST_EPS this is a subgradient of |.|
				 * (norm <= 1) rather than 0. */
				float mod = sqrt_noerr(dr * dr + di * di);
				float w = g / (mod > DIST_EPS ? mod : DIST_EPS);

				gq[i] -= w * dr;
				gq[h + i] -= w * di;
			}
		}
		break;
	}
}

/* TransR: project c with M (k x d) into p. */
KG_HOT_CLONES
static void
transr_project(const struct kg_model *m, const float *rel, const float *c,
    float *p)
{
	size_t k = m->rel_dim, d = m->dim, i, j;
	const float *M = rel + k;

	for (i = 0; i < k; i++) {
		float s = 0.0f;

#pragma omp simd reduction(+:s)
		for (j = 0; j < d; j++)
			s += M[i * d + j] * c[j];
		p[i] = s;
	}
}

KG_HOT_CLONES
static void
pairs_forward(const struct kg_model *m, enum kg_side side, size_t n,
    const float *fixed, const struct rows *R, const float *cand, float *score,
    float *work)
{
	struct work w = work_split(m, n, 1, work);
	size_t d = m->dim, qd = qdim(m), i, j;
	enum s_kind sk = s_kind_of(m);

	for (i = 0; i < n; i++) {
		float *q = w.q + i * qd;

		query_forward(m, side, fixed + i * d, row_at(R, i), q);
		if (m->kind == KG_MODEL_TRANSR) {
			float s = 0.0f;

			transr_project(m, row_at(R, i), cand + i * d, w.p);
#pragma omp simd reduction(+:s)
			for (j = 0; j < qd; j++)
				s += (q[j] - w.p[j]) * (q[j] - w.p[j]);
			w.d[i] = sqrtf(s);
			score[i] = m->gamma - w.d[i];
		} else if (sk == S_L2) {
			const float *c = cand + i * d;
			float s = 0.0f;

#pragma omp simd reduction(+:s)
			for (j = 0; j < d; j++)
				s += (q[j] - c[j]) * (q[j] - c[j]);
			w.d[i] = sqrtf(s);
			score[i] = m->gamma - w.d[i];
		} else {
			score[i] = s_pair(m, sk, q, cand + i * d, d);
		}
	}
}

/* TransR, one query against one candidate: given u = g (q - p) / dist,
 * add the candidate and projection gradients and return nothing; gq gets
 * -u.  Shared by pairs and chunk backward. */
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

KG_HOT_CLONES
static void
pairs_backward(const struct kg_model *m, enum kg_side side, size_t n,
    const float *fixed, const struct rows *R, const float *cand,
    const float *g, float *gfixed, const struct mrows *GR, float *gcand,
    float *work)
{
	struct work w = work_split(m, n, 1, work);
	size_t d = m->dim, qd = qdim(m), i, j;
	enum s_kind sk = s_kind_of(m);

	for (i = 0; i < n; i++) {
		const float *q = w.q + i * qd, *r = row_at(R, i);
		const float *c = cand + i * d, *f = fixed + i * d;
		float *gq = w.gq + i * qd;

		memset(gq, 0, qd * sizeof(*gq));
		if (g[i] == 0.0f)
			continue;
		if (m->kind == KG_MODEL_TRANSR) {
			if (w.d[i] < DIST_EPS)
				continue;
			transr_project(m, r, c, w.p);
			for (j = 0; j < qd; j++)
				w.u[j] = g[i] * (q[j] - w.p[j]) / w.d[i];
			transr_pair_backward(m, r, c, w.u, gq, mrow_at(GR, i),
			    gcand + i * d);
			transr_query_backward(m, side, f, r, gq,
			    gfixed + i * d, mrow_at(GR, i));
		} else {
			s_pair_backward(sk, q, c, d, g[i], w.d[i], gq,
			    gcand + i * d);
			query_backward(m, side, f, r, gq, gfixed + i * d,
			    mrow_at(GR, i));
		}
	}
}

static void
transr_chunk_forward(const struct kg_model *m, enum kg_side side, size_t nq,
    const float *fixed, const struct rows *R, const float *cand, size_t nc,
    float *out, struct work *w)
{
	size_t d = m->dim, k = m->rel_dim, i, j, l;

	for (i = 0; i < nq; i++) {
		const float *r = row_at(R, i);
		float *q = w->q + i * k;

		transr_query(m, side, fixed + i * d, r, q);
		/* P = C M^T: every candidate projected into relation space. */
		kg_sgemm(KG_NO_TRANS, KG_TRANS, nc, k, d, 1.0f, cand, d, r + k,
		    d, 0.0f, w->p, k);
		for (j = 0; j < nc; j++) {
			const float *p = w->p + j * k;
			float s = 0.0f;

#pragma omp simd reduction(+:s)
			for (l = 0; l < k; l++)
				s += (q[l] - p[l]) * (q[l] - p[l]);
			w->d[i * nc + j] = sqrtf(s);
			out[i * nc + j] = m->gamma - w->d[i * nc + j];
		}
	}
}

static void
transr_chunk_backward(const struct kg_model *m, enum kg_side side,
    size_t nq, const float *fixed, const struct rows *R, const float *cand,
    size_t nc, const float *g, float *gfixed, const struct mrows *GR,
    float *gcand, struct work *w)
{
	size_t d = m->dim, k = m->rel_dim, i, j, l;

	for (i = 0; i < nq; i++) {
		const float *r = row_at(R, i), *q = w->q + i * k;
		float *gq = w->gq + i * k, *gr = mrow_at(GR, i);

		memset(gq, 0, k * sizeof(*gq));
		kg_sgemm(KG_NO_TRANS, KG_TRANS, nc, k, d, 1.0f, cand, d, r + k,
		    d, 0.0f, w->p, k);
		for (j = 0; j < nc; j++) {
			float dist = w->d[i * nc + j], s;
			const float *p = w->p + j * k;
			float *u = w->u + j * k;

			s = dist < DIST_EPS ? 0.0f : g[i * nc + j] / dist;
			for (l = 0; l < k; l++) {
				u[l] = s * (q[l] - p[l]);
				gq[l] -= u[l];
			}
		}
		/* dL/dM += U^T C; dL/dC += U M. */
		kg_sgemm(KG_TRANS, KG_NO_TRANS, k, d, nc, 1.0f, w->u, k, cand,
		    d, 1.0f, gr + k, d);
		if (gcand != NULL)
			kg_sgemm(KG_NO_TRANS, KG_NO_TRANS, nc, d, k, 1.0f, w->u,
			    k, r + k, d, 1.0f, gcand, d);
		transr_query_backward(m, side, fixed + i * d, r, gq,
		    gfixed + i * d, gr);
	}
}

KG_HOT_CLONES
static void
chunk_forward(const struct kg_model *m, enum kg_side side, size_t nq,
    const float *fixed, const struct rows *R, const float *cand, size_t nc,
    float *out, float *work)
{
	struct work w = work_split(m, nq, nc, work);
	size_t d = m->dim, i, j, l;
	enum s_kind sk = s_kind_of(m);

	if (m->kind == KG_MODEL_TRANSR) {
		transr_chunk_forward(m, side, nq, fixed, R, cand, nc, out,
		    &w);
		return;
	}
	for (i = 0; i < nq; i++)
		query_forward(m, side, fixed + i * d, row_at(R, i),
		    w.q + i * d);
	switch (sk) {
	case S_DOT:
		kg_sgemm(KG_NO_TRANS, KG_TRANS, nq, nc, d, 1.0f, w.q, d, cand,
		    d, 0.0f, out, nc);
		break;
	case S_L2:
		for (i = 0; i < nq; i++) {
			const float *q = w.q + i * d;
			float s = 0.0f;

#pragma omp simd reduction(+:s)
			for (l = 0; l < d; l++)
				s += q[l] * q[l];
			w.qn[i] = s;
		}
		for (j = 0; j < nc; j++) {
			const float *c = cand + j * d;
			float s = 0.0f;

#pragma omp simd reduction(+:s)
			for (l = 0; l < d; l++)
				s += c[l] * c[l];
			w.cn[j] = s;
		}
		kg_sgemm(KG_NO_TRANS, KG_TRANS, nq, nc, d, -2.0f, w.q, d, cand,
		    d, 0.0f, out, nc);
		for (i = 0; i < nq; i++) {
			float *o = out + i * nc, *dd = w.d + i * nc, qn = w.qn[i];

			for (j = 0; j < nc; j++) {
				float s = o[j] + qn + w.cn[j];

				dd[j] = s > 0.0f ? sqrtf(s) : 0.0f;
				o[j] = m->gamma - dd[j];
			}
		}
		break;
	case S_L1:
	case S_MOD:
		for (i = 0; i < nq; i++)
			for (j = 0; j < nc; j++)
				out[i * nc + j] = s_pair(m, sk, w.q + i * d,
				    cand + j * d, d);
		break;
	}
}

KG_HOT_CLONES
static void
chunk_backward(const struct kg_model *m, enum kg_side side, size_t nq,
    const float *fixed, const struct rows *R, const float *cand, size_t nc,
    const float *g, float *gfixed, const struct mrows *GR, float *gcand,
    float *work)
{
	struct work w = work_split(m, nq, nc, work);
	size_t d = m->dim, i, j, l;
	enum s_kind sk = s_kind_of(m);

	if (m->kind == KG_MODEL_TRANSR) {
		transr_chunk_backward(m, side, nq, fixed, R, cand, nc, g,
		    gfixed, GR, gcand, &w);
		return;
	}
	switch (sk) {
	case S_DOT:
		/* dL/dQ = G C; dL/dC += G^T Q. */
		kg_sgemm(KG_NO_TRANS, KG_NO_TRANS, nq, d, nc, 1.0f, g, nc, cand,
		    d, 0.0f, w.gq, d);
		if (gcand != NULL)
			kg_sgemm(KG_TRANS, KG_NO_TRANS, nc, d, nq, 1.0f, g, nc,
			    w.q, d, 1.0f, gcand, d);
		break;
	case S_L2:
		/*
		 * With W_ij = g_ij / dist_ij: dL/dq_i = W C - (sum_j W_ij) q_i
		 * and dL/dc_j = W^T Q - (sum_i W_ij) c_j.  W overwrites the
		 * distances.
		 */
		memset(w.cn, 0, nc * sizeof(*w.cn));
		for (i = 0; i < nq; i++) {
			float *dd = w.d + i * nc, rs = 0.0f;
			const float *gi = g + i * nc;

			for (j = 0; j < nc; j++) {
				float x = dd[j] < DIST_EPS ? 0.0f : gi[j] / dd[j];

				dd[j] = x;
				rs += x;
				w.cn[j] += x;
			}
			w.qn[i] = rs;
		}
		kg_sgemm(KG_NO_TRANS, KG_NO_TRANS, nq, d, nc, 1.0f, w.d, nc,
		    cand, d, 0.0f, w.gq, d);
		for (i = 0; i < nq; i++) {
			float *gq = w.gq + i * d, rs = w.qn[i];
			const float *q = w.q + i * d;

#pragma omp simd
			for (l = 0; l < d; l++)
				gq[l] -= rs * q[l];
		}
		if (gcand != NULL) {
			kg_sgemm(KG_TRANS, KG_NO_TRANS, nc, d, nq, 1.0f, w.d,
			    nc, w.q, d, 1.0f, gcand, d);
			for (j = 0; j < nc; j++) {
				float *gc = gcand + j * d, cs = w.cn[j];
				const float *c = cand + j * d;

#pragma omp simd
				for (l = 0; l < d; l++)
					gc[l] -= cs * c[l];
			}
		}
		break;
	case S_L1:
	case S_MOD:
		memset(w.gq, 0, nq * d * sizeof(*w.gq));
		for (i = 0; i < nq; i++)
			for (j = 0; j < nc; j++) {
				float gij = g[i * nc + j];

				if (gij == 0.0f)
					continue;
				s_pair_backward(sk, w.q + i * d, cand + j * d,
				    d, gij, 0.0f, w.gq + i * d,
				    gcand != NULL ? gcand + j * d : NULL);
			}
		break;
	}
	for (i = 0; i < nq; i++)
		query_backward(m, side, fixed + i * d, row_at(R, i),
		    w.gq + i * d, gfixed + i * d, mrow_at(GR, i));
}

void
kg_grad_pairs_forward(const struct kg_model *m, enum kg_side side, size_t n,
    const float *fixed, const float *rel, const float *cand, float *score,
    float *work)
{
	struct rows R = { rel, NULL, m->rel_width };

	pairs_forward(m, side, n, fixed, &R, cand, score, work);
}

void
kg_grad_pairs_backward(const struct kg_model *m, enum kg_side side, size_t n,
    const float *fixed, const float *rel, const float *cand, const float *g,
    float *gfixed, float *grel, float *gcand, float *work)
{
	struct rows R = { rel, NULL, m->rel_width };
	struct mrows GR = { grel, NULL, m->rel_width };

	pairs_backward(m, side, n, fixed, &R, cand, g, gfixed, &GR, gcand,
	    work);
}

void
kg_grad_chunk_forward(const struct kg_model *m, enum kg_side side,
    size_t nq, const float *fixed, const float *rel, const float *cand,
    size_t nc, float *out, float *work)
{
	struct rows R = { rel, NULL, m->rel_width };

	chunk_forward(m, side, nq, fixed, &R, cand, nc, out, work);
}

void
kg_grad_chunk_backward(const struct kg_model *m, enum kg_side side,
    size_t nq, const float *fixed, const float *rel, const float *cand,
    size_t nc, const float *g, float *gfixed, float *grel, float *gcand,
    float *work)
{
	struct rows R = { rel, NULL, m->rel_width };
	struct mrows GR = { grel, NULL, m->rel_width };

	chunk_backward(m, side, nq, fixed, &R, cand, nc, g, gfixed, &GR,
	    gcand, work);
}

void
kg_grad_pairs_forward_rows(const struct kg_model *m, enum kg_side side,
    size_t n, const float *fixed, const float *const *rel,
    const float *cand, float *score, float *work)
{
	struct rows R = { NULL, rel, 0 };

	pairs_forward(m, side, n, fixed, &R, cand, score, work);
}

void
kg_grad_pairs_backward_rows(const struct kg_model *m, enum kg_side side,
    size_t n, const float *fixed, const float *const *rel,
    const float *cand, const float *g, float *gfixed, float *const *grel,
    float *gcand, float *work)
{
	struct rows R = { NULL, rel, 0 };
	struct mrows GR = { NULL, grel, 0 };

	pairs_backward(m, side, n, fixed, &R, cand, g, gfixed, &GR, gcand,
	    work);
}

void
kg_grad_chunk_forward_rows(const struct kg_model *m, enum kg_side side,
    size_t nq, const float *fixed, const float *const *rel,
    const float *cand, size_t nc, float *out, float *work)
{
	struct rows R = { NULL, rel, 0 };

	chunk_forward(m, side, nq, fixed, &R, cand, nc, out, work);
}

void
kg_grad_chunk_backward_rows(const struct kg_model *m, enum kg_side side,
    size_t nq, const float *fixed, const float *const *rel,
    const float *cand, size_t nc, const float *g, float *gfixed,
    float *const *grel, float *gcand, float *work)
{
	struct rows R = { NULL, rel, 0 };
	struct mrows GR = { NULL, grel, 0 };

	chunk_backward(m, side, nq, fixed, &R, cand, nc, g, gfixed, &GR,
	    gcand, work);
}
