/*
 * devops_score: the similarities S(q, c) of kernels.h (enum kg_kern_sim)
 * on the device: their terms, S over a pair of rows with its derivatives
 * dS/dq and dS/dc as lanes.h and kernels_grad.c compute them, and the
 * thread functions of the chunk and pairs forms, forward and backward
 * (backend.h's kg_be_chunk ... kg_be_pairs_backward).  The CUDA backend
 * runs the chunk forms as the tiles of devops_tile.h; the thread forms
 * here are the tests' reference for those.  Under devops_base.h's
 * conventions.
 */
#ifndef KG_DEVOPS_SCORE_H
#define KG_DEVOPS_SCORE_H

#include "compute/devops_base.h"
#include "compute/kinds.h"

KG_HD float
kg_dev_rsqrt_bits(float c)
{
	return kg_dev_as_float(0x5f3759df - (kg_dev_as_int(c) >> 1));
}

KG_HD float
kg_dev_rsqrt_step(float h, float y)
{
	return y * (1.5f - h * y * y);
}

/* CMOD_APPROX's square root: lanes.h's sqrt_noerr. */
KG_HD float
kg_dev_sqrt_approx(float x)
{
	float c = x > 1e-30f ? x : 1e-30f, h = 0.5f * c;
	float y = kg_dev_rsqrt_bits(c);

	y = kg_dev_rsqrt_step(h, y);
	y = kg_dev_rsqrt_step(h, y);
	y = kg_dev_rsqrt_step(h, y);
	return c * y + 0.0f * x;
}

/* One term of the sum S reduces over (k < d, or k < d/2 for CMOD). */
KG_HD float
kg_dev_sim_term(int sim, const float *q, const float *c, size_t h,
    size_t k)
{
	float e, dr, di;

	switch (sim) {
	case KG_KERN_DOT:
		return q[k] * c[k];
	case KG_KERN_L1:
		return fabsf(q[k] - c[k]);
	case KG_KERN_L2:
	case KG_KERN_L2_DIFF:
		e = q[k] - c[k];
		return e * e;
	default:
		dr = q[k] - c[k];
		di = q[h + k] - c[h + k];
		return sim == KG_KERN_CMOD_APPROX ?
		    kg_dev_sqrt_approx(dr * dr + di * di) :
		    sqrtf(dr * dr + di * di);
	}
}

/*
 * S(q, c) over rows of d floats, gamma the margin of the distance kinds;
 * *dist gets the L2 distance (L2 kinds) when dist is not NULL.
 */
KG_HD float
kg_dev_sim(int sim, const float *q, const float *c, size_t d, float gamma,
    float *dist)
{
	float L[KG_DEV_LANES] = { 0 }, s = 0.0f;
	size_t n = sim == KG_KERN_CMOD || sim == KG_KERN_CMOD_APPROX ? d / 2 :
	    d;
	size_t h = d / 2, k = 0, l;

	for (; k + KG_DEV_LANES <= n; k += KG_DEV_LANES)
		for (l = 0; l < KG_DEV_LANES; l++)
			L[l] += kg_dev_sim_term(sim, q, c, h, k + l);
	for (; k < n; k++)
		L[0] += kg_dev_sim_term(sim, q, c, h, k);
	for (l = 0; l < KG_DEV_LANES; l++)
		s += L[l];
	switch (sim) {
	case KG_KERN_DOT:
		return s;
	case KG_KERN_L2:
	case KG_KERN_L2_DIFF:
		s = sqrtf(s);
		if (dist != NULL)
			*dist = s;
		return gamma - s;
	default:
		return gamma - s;
	}
}

/* CMOD's 1 / max(|z|, eps) for z = dr + i di (kernels_grad.c's
 * cmod_weight with g = 1). */
KG_HD float
kg_dev_cmod_weight(float dr, float di, int approx)
{
	float x = dr * dr + di * di, c, h, y, mod;

	if (!approx) {
		mod = sqrtf(x);
		return 1.0f / (mod > KG_KERN_DIST_EPS ? mod : KG_KERN_DIST_EPS);
	}
	c = x > 1e-30f ? x : 1e-30f;
	h = 0.5f * c;
	y = kg_dev_rsqrt_step(h, kg_dev_rsqrt_step(h, kg_dev_rsqrt_bits(c)));
	mod = c * y;
	return mod > KG_KERN_DIST_EPS ? y : 1.0f / KG_KERN_DIST_EPS;
}

/*
 * dS(q, c)/dq_l for rows of d floats (dist: the L2 distance, L2 kinds
 * only).  dS/dc_l is c's partner: q_l for DOT, -dS/dq_l for the others.
 * The L2 kinds give 0 below KG_KERN_DIST_EPS, L1 a subgradient of 0 at 0.
 */
KG_HD float
kg_dev_dsdq(int sim, const float *q, const float *c, size_t d, size_t l,
    float dist)
{
	float e, dr, di, w;
	size_t h = d / 2, k;

	switch (sim) {
	case KG_KERN_DOT:
		return c[l];
	case KG_KERN_L1:
		e = q[l] - c[l];
		return e > 0.0f ? -1.0f : e < 0.0f ? 1.0f : 0.0f;
	case KG_KERN_L2:
	case KG_KERN_L2_DIFF:
		if (dist < KG_KERN_DIST_EPS)
			return 0.0f;
		return -(q[l] - c[l]) / dist;
	default:
		if (l >= 2 * h)
			return 0.0f;
		k = l < h ? l : l - h;
		dr = q[k] - c[k];
		di = q[h + k] - c[h + k];
		w = kg_dev_cmod_weight(dr, di, sim == KG_KERN_CMOD_APPROX);
		return -w * (l < h ? dr : di);
	}
}

KG_HD float
kg_dev_dsdc(int sim, const float *q, const float *c, size_t d, size_t l,
    float dist)
{
	return sim == KG_KERN_DOT ? q[l] : -kg_dev_dsdq(sim, q, c, d, l, dist);
}

/* The chunk forward: one thread per (i, j) of nq x nc.  The CUDA backend
 * runs the tiles below (kg_dev_tile_fwd_*); this form, and the two
 * backward ones after it, stay as the tests' reference. */
KG_HD void
kg_dev_t_chunk(unsigned b, unsigned t, unsigned bdim, int sim, size_t nq,
    size_t nc, size_t d, float gamma, const float *q, const float *c,
    float *out, float *dist)
{
	size_t e = kg_dev_tid(b, t, bdim), i, j;

	if (e >= nq * nc)
		return;
	i = e / nc;
	j = e % nc;
	out[e] = kg_dev_sim(sim, q + i * d, c + j * d, d, gamma,
	    dist != NULL ? dist + e : NULL);
}

/* The pairs forward: one thread per pair. */
KG_HD void
kg_dev_t_pairs(unsigned b, unsigned t, unsigned bdim, int sim, size_t n,
    size_t d, float gamma, const float *q, const float *c, float *out,
    float *dist)
{
	size_t i = kg_dev_tid(b, t, bdim);

	if (i >= n)
		return;
	out[i] = kg_dev_sim(sim, q + i * d, c + i * d, d, gamma,
	    dist != NULL ? dist + i : NULL);
}

/*
 * The chunk backward, query side: gq[i][l] = sum_j g_ij dS(q_i, c_j)/dq_l
 * (overwritten), entries with g_ij == 0 skipped; one thread per (i, l).
 * dist: the forward's distances (L2 kinds), read only.
 */
KG_HD void
kg_dev_t_chunk_bwd_q(unsigned b, unsigned t, unsigned bdim, int sim,
    size_t nq, size_t nc, size_t d, const float *q, const float *c,
    const float *g, const float *dist, float *gq)
{
	size_t e = kg_dev_tid(b, t, bdim), i, j, l;
	float s = 0.0f;

	if (e >= nq * d)
		return;
	i = e / d;
	l = e % d;
	for (j = 0; j < nc; j++) {
		float gij = g[i * nc + j];

		if (gij != 0.0f)
			s += gij * kg_dev_dsdq(sim, q + i * d, c + j * d, d, l,
			    dist != NULL ? dist[i * nc + j] : 0.0f);
	}
	gq[e] = s;
}

/* The candidate side: gc[j][l] += sum_i g_ij dS/dc_l; one thread per
 * (j, l). */
KG_HD void
kg_dev_t_chunk_bwd_c(unsigned b, unsigned t, unsigned bdim, int sim,
    size_t nq, size_t nc, size_t d, const float *q, const float *c,
    const float *g, const float *dist, float *gc)
{
	size_t e = kg_dev_tid(b, t, bdim), i, j, l;
	float s = 0.0f;

	if (e >= nc * d)
		return;
	j = e / d;
	l = e % d;
	for (i = 0; i < nq; i++) {
		float gij = g[i * nc + j];

		if (gij != 0.0f)
			s += gij * kg_dev_dsdc(sim, q + i * d, c + j * d, d, l,
			    dist != NULL ? dist[i * nc + j] : 0.0f);
	}
	gc[e] += s;
}

/* The pairs backward: gq[i][l] = g_i dS/dq_l (overwritten, 0 where g_i
 * is 0), gc[i][l] += g_i dS/dc_l unless gc is NULL; one thread per
 * element. */
KG_HD void
kg_dev_t_pairs_bwd(unsigned b, unsigned t, unsigned bdim, int sim, size_t n,
    size_t d, const float *q, const float *c, const float *g,
    const float *dist, float *gq, float *gc)
{
	size_t e = kg_dev_tid(b, t, bdim), i, l;
	float gi, dv;

	if (e >= n * d)
		return;
	i = e / d;
	l = e % d;
	gi = g[i];
	if (gi == 0.0f) {
		gq[e] = 0.0f;
		return;
	}
	dv = dist != NULL ? dist[i] : 0.0f;
	gq[e] = gi * kg_dev_dsdq(sim, q + i * d, c + i * d, d, l, dv);
	if (gc != NULL)
		gc[e] += gi * kg_dev_dsdc(sim, q + i * d, c + i * d, d, l, dv);
}

#endif
