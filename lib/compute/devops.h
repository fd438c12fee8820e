/*
 * devops: the arithmetic of the compute backends as functions of one
 * element, row or thread, written once for the CPU and the GPU.
 *
 * Every function here is KG_HD: __host__ __device__ under nvcc (the CUDA
 * backend, lib/compute/cuda/, launches them over a grid) and static
 * inline C11 under gcc, where the CPU code uses the element functions
 * (the loss terms in rowops.c) and tests/unit/t_devops.c runs the thread
 * functions over an emulated grid.  Nothing here allocates, reports
 * errors or keeps state.
 *
 * Two kinds of function:
 *   element functions (kg_dev_fexp, kg_dev_sim, kg_dev_dsdq, ...): the
 *     maths of one value, the same expressions the CPU kernels evaluate;
 *   thread functions (kg_dev_t_*): the body of one CUDA thread, given
 *     the grid coordinates (block, thread, block size).  Each computes
 *     its own flat index, returns at once when that index is past the
 *     work (the partial last block), and writes only what it owns, or
 *     adds through kg_dev_atomic_add where threads share an output.
 *     The CUDA kernels are one line each: call the thread function with
 *     blockIdx.x, threadIdx.x, blockDim.x.
 *
 * Sums over d run in the CPU kernels' order (lib/compute/lanes.h: eight
 * lanes, then the tail in lane 0, then the lanes in order), so a thread
 * function's result is close to the CPU's, often equal; the tests allow
 * a relative 1e-5.
 *
 * Index arrays are int64_t row numbers; callers guarantee they are in
 * range (the backend checks nothing on the device).
 */
#ifndef KG_DEVOPS_H
#define KG_DEVOPS_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__CUDACC__)
#define KG_HD static inline __host__ __device__
#define KG_RESTRICT __restrict__
#elif defined(__GNUC__)
#define KG_HD static inline __attribute__((always_inline))
#define KG_RESTRICT restrict
#else
#define KG_HD static inline
#define KG_RESTRICT restrict
#endif

/* Must match enum kg_kern_sim (kernels.h), which includes this header. */
#define KG_DEV_DOT 0
#define KG_DEV_L1 1
#define KG_DEV_L2 2
#define KG_DEV_L2_DIFF 3
#define KG_DEV_CMOD 4
#define KG_DEV_CMOD_APPROX 5

/* Must match enum kg_loss_kind (rowops.h). */
#define KG_DEV_LOSS_LOGISTIC 0
#define KG_DEV_LOSS_MARGIN 1
#define KG_DEV_LOSS_SOFTMAX 2
#define KG_DEV_LOSS_BCE 3

#define KG_DEV_DIST_EPS 1e-12f
#define KG_DEV_ADAGRAD_EPS 1e-10f
#define KG_DEV_LANES 8

/* Threads per block of every CUDA launch; the emulated grid uses it too. */
#define KG_DEV_BLOCK 256

/* The flat index of a thread. */
KG_HD size_t
kg_dev_tid(unsigned block, unsigned thread, unsigned bdim)
{
	return (size_t)block * bdim + thread;
}

/* Blocks of bdim threads that cover n items. */
KG_HD size_t
kg_dev_nblocks(size_t n, unsigned bdim)
{
	return (n + bdim - 1) / bdim;
}

/* *p += v, atomically on the device (threads share p), plainly on the
 * host, where the emulated grid runs one thread at a time. */
KG_HD void
kg_dev_atomic_add(float *p, float v)
{
#if defined(__CUDA_ARCH__)
	atomicAdd(p, v);
#else
	*p += v;
#endif
}

KG_HD void
kg_dev_atomic_add_u64(uint64_t *p, uint64_t v)
{
#if defined(__CUDA_ARCH__)
	atomicAdd((unsigned long long *)p, (unsigned long long)v);
#else
	*p += v;
#endif
}

KG_HD void
kg_dev_atomic_add_d(double *p, double v)
{
#if defined(__CUDA_ARCH__)
	atomicAdd(p, v);
#else
	*p += v;
#endif
}

/* ---- Element functions: loss terms (moved from lib/kge/loss.c). ---- */

KG_HD float
kg_dev_as_float(int32_t i)
{
#if defined(__CUDA_ARCH__)
	return __int_as_float(i);
#else
	union {
		float f;
		int32_t i;
	} u;

	u.i = i;
	return u.f;
#endif
}

KG_HD int32_t
kg_dev_as_int(float f)
{
#if defined(__CUDA_ARCH__)
	return __float_as_int(f);
#else
	union {
		float f;
		int32_t i;
	} u;

	u.f = f;
	return u.i;
#endif
}

/*
 * exp and log1p in float, written so that loops over negatives vectorise
 * (glibc's expf/logf are calls, one element at a time).  exp: x = n ln 2
 * + r with |r| <= ln 2 / 2, 2^n built in the exponent bits and e^r from
 * its Taylor polynomial to degree 7 (relative error below 2e-7).
 * log1p(e) for e in [0, 1]: 2 atanh(z) with z = e / (2 + e) <= 1/3, the
 * odd series to z^13 (relative error below 1e-7).
 */
KG_HD float
kg_dev_fexp(float x)
{
	float t, n, r, p;

	/* NaN fails both tests and becomes -87: no undefined conversion
	 * below; callers propagate NaN themselves. */
	x = x > -87.0f ? x : -87.0f;
	x = x < 88.0f ? x : 88.0f;
	t = x * 1.44269504f;
	n = (t + 12582912.0f) - 12582912.0f;	/* round to nearest */
	r = x - n * 0.693145752f - n * 1.42860677e-06f;
	p = 1.0f + r * (1.0f + r * (0.5f + r * (1.0f / 6 + r * (1.0f / 24 +
	    r * (1.0f / 120 + r * (1.0f / 720 + r * (1.0f / 5040)))))));
	return p * kg_dev_as_float((int32_t)((uint32_t)((int32_t)n + 127) <<
	    23));
}

KG_HD float
kg_dev_flog1p01(float e)
{
	float z = e / (2.0f + e), z2 = z * z;

	return 2.0f * z * (1.0f + z2 * (1.0f / 3 + z2 * (1.0f / 5 + z2 *
	    (1.0f / 7 + z2 * (1.0f / 9 + z2 * (1.0f / 11 + z2 * (1.0f /
	    13)))))));
}

/*
 * w softplus(x), setting *g = scale * w * sigmoid(x).  Shares one
 * exponential: with e = exp(-|x|), softplus = max(x, 0) + log1p(e) and
 * sigmoid = 1 / (1 + e) for x >= 0, e / (1 + e) below.
 */
KG_HD float
kg_dev_sp_term(float x, float w, float scale, float *g)
{
	float e = kg_dev_fexp(-fabsf(x)), inv = 1.0f / (1.0f + e);

	*g = scale * w * (x >= 0.0f ? inv : e * inv);
	/* 0 * x keeps a NaN or infinite score visible in the loss. */
	return w * ((x > 0.0f ? x : 0.0f) + kg_dev_flog1p01(e)) + 0.0f * x;
}

/* softplus(x) = log(1 + exp(x)) and sigmoid(x), stable, in double. */
KG_HD double
kg_dev_softplus(double x)
{
	return x > 0.0 ? x + log1p(exp(-x)) : log1p(exp(x));
}

KG_HD double
kg_dev_sigmoid(double x)
{
	double e;

	if (x >= 0.0)
		return 1.0 / (1.0 + exp(-x));
	e = exp(x);
	return e / (1.0 + e);
}

/* ---- Element functions: optimiser steps (as lib/compute/rowops.c). ---- */

/* Element-wise Adagrad: s += g^2; w -= lr g / (sqrt(s) + eps). */
KG_HD void
kg_dev_adagrad_elem(float *w, float *s, float g, float lr)
{
	*s += g * g;
	*w -= lr * g / (sqrtf(*s) + KG_DEV_ADAGRAD_EPS);
}

/* Row-wise Adagrad's step size once the state has its new value. */
KG_HD float
kg_dev_adagrad_step(float state, float lr)
{
	return lr / (sqrtf(state) + KG_DEV_ADAGRAD_EPS);
}

/* Adam on one element, c1 and c2 the bias corrections 1 - beta^t. */
KG_HD void
kg_dev_adam_elem(float *w, float *m, float *v, float g, float lr, float b1,
    float b2, float eps, float c1, float c2)
{
	*m = b1 * *m + (1.0f - b1) * g;
	*v = b2 * *v + (1.0f - b2) * g * g;
	*w -= lr * (*m / c1) / (sqrtf(*v / c2) + eps);
}

/* ---- Element functions: similarities (as lib/compute/lanes.h). ---- */

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
	case KG_DEV_DOT:
		return q[k] * c[k];
	case KG_DEV_L1:
		return fabsf(q[k] - c[k]);
	case KG_DEV_L2:
	case KG_DEV_L2_DIFF:
		e = q[k] - c[k];
		return e * e;
	default:
		dr = q[k] - c[k];
		di = q[h + k] - c[h + k];
		return sim == KG_DEV_CMOD_APPROX ?
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
	size_t n = sim == KG_DEV_CMOD || sim == KG_DEV_CMOD_APPROX ? d / 2 : d;
	size_t h = d / 2, k = 0, l;

	for (; k + KG_DEV_LANES <= n; k += KG_DEV_LANES)
		for (l = 0; l < KG_DEV_LANES; l++)
			L[l] += kg_dev_sim_term(sim, q, c, h, k + l);
	for (; k < n; k++)
		L[0] += kg_dev_sim_term(sim, q, c, h, k);
	for (l = 0; l < KG_DEV_LANES; l++)
		s += L[l];
	switch (sim) {
	case KG_DEV_DOT:
		return s;
	case KG_DEV_L2:
	case KG_DEV_L2_DIFF:
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
		return 1.0f / (mod > KG_DEV_DIST_EPS ? mod : KG_DEV_DIST_EPS);
	}
	c = x > 1e-30f ? x : 1e-30f;
	h = 0.5f * c;
	y = kg_dev_rsqrt_step(h, kg_dev_rsqrt_step(h, kg_dev_rsqrt_bits(c)));
	mod = c * y;
	return mod > KG_DEV_DIST_EPS ? y : 1.0f / KG_DEV_DIST_EPS;
}

/*
 * dS(q, c)/dq_l for rows of d floats (dist: the L2 distance, L2 kinds
 * only).  dS/dc_l is c's partner: q_l for DOT, -dS/dq_l for the others.
 * The L2 kinds give 0 below KG_DEV_DIST_EPS, L1 a subgradient of 0 at 0.
 */
KG_HD float
kg_dev_dsdq(int sim, const float *q, const float *c, size_t d, size_t l,
    float dist)
{
	float e, dr, di, w;
	size_t h = d / 2, k;

	switch (sim) {
	case KG_DEV_DOT:
		return c[l];
	case KG_DEV_L1:
		e = q[l] - c[l];
		return e > 0.0f ? -1.0f : e < 0.0f ? 1.0f : 0.0f;
	case KG_DEV_L2:
	case KG_DEV_L2_DIFF:
		if (dist < KG_DEV_DIST_EPS)
			return 0.0f;
		return -(q[l] - c[l]) / dist;
	default:
		if (l >= 2 * h)
			return 0.0f;
		k = l < h ? l : l - h;
		dr = q[k] - c[k];
		di = q[h + k] - c[h + k];
		w = kg_dev_cmod_weight(dr, di, sim == KG_DEV_CMOD_APPROX);
		return -w * (l < h ? dr : di);
	}
}

KG_HD float
kg_dev_dsdc(int sim, const float *q, const float *c, size_t d, size_t l,
    float dist)
{
	return sim == KG_DEV_DOT ? q[l] : -kg_dev_dsdq(sim, q, c, d, l, dist);
}

/*
 * sum_k a[k] b[k] over n floats in the CPU kernels' order (lanes.h's
 * sum_dot: eight lanes, the tail in lane 0, the lanes in order), so a
 * row product here gives the bits kg_kern_matvec's does.
 */
KG_HD float
kg_dev_dot(const float *a, const float *b, size_t n)
{
	float L[KG_DEV_LANES] = { 0 }, s = 0.0f;
	size_t k = 0, l;

	for (; k + KG_DEV_LANES <= n; k += KG_DEV_LANES)
		for (l = 0; l < KG_DEV_LANES; l++)
			L[l] += a[k + l] * b[k + l];
	for (; k < n; k++)
		L[0] += a[k] * b[k];
	for (l = 0; l < KG_DEV_LANES; l++)
		s += L[l];
	return s;
}

/* ---- Element functions: query forms (as lib/kge/score.c, grad.c). ---- */

/* Must match enum kg_qform (backend.h). */
#define KG_DEV_Q_ADD 0		/* TransE: f + r (tail), f - r (head) */
#define KG_DEV_Q_MUL 1		/* DistMult: f o r */
#define KG_DEV_Q_COMPLEX 2	/* ComplEx: f * r, f * conj(r) */
#define KG_DEV_Q_ROTATE 3	/* RotatE: f * e^(+-i theta) */
#define KG_DEV_Q_RESCAL 4	/* RESCAL: M^T f (tail), M f (head) */

/* Side numbers (enum kg_side of lib/kge/model.h). */
#define KG_DEV_TAIL 0
#define KG_DEV_HEAD 1

/* Floats of a relation row of query form "form" for entity rows of d. */
KG_HD size_t
kg_dev_qform_width(int form, size_t d)
{
	return form == KG_DEV_Q_ROTATE ? d / 2 : form == KG_DEV_Q_RESCAL ?
	    d * d : d;
}

/*
 * Element l (< d) of the query q = Q(f, rel) of form "form" on side
 * (score.h's table): f an entity row of d floats, rel a relation row of
 * kg_dev_qform_width(form, d) floats.
 */
KG_HD float
kg_dev_query_elem(int form, int side, size_t d, const float *f,
    const float *rel, size_t l)
{
	size_t h = d / 2, k = l < h ? l : l - h, i;
	float a, b, c, s, acc = 0.0f;

	switch (form) {
	case KG_DEV_Q_ADD:
		return side == KG_DEV_TAIL ? f[l] + rel[l] : f[l] - rel[l];
	case KG_DEV_Q_MUL:
		return f[l] * rel[l];
	case KG_DEV_Q_COMPLEX:
		if (side == KG_DEV_TAIL)
			return l < h ? f[k] * rel[k] - f[h + k] * rel[h + k] :
			    f[k] * rel[h + k] + f[h + k] * rel[k];
		return l < h ? f[k] * rel[k] + f[h + k] * rel[h + k] :
		    -f[k] * rel[h + k] + f[h + k] * rel[k];
	case KG_DEV_Q_ROTATE:
		a = f[k];
		b = f[h + k];
		c = cosf(rel[k]);
		s = sinf(rel[k]);
		if (side == KG_DEV_HEAD)
			s = -s;
		return l < h ? a * c - b * s : a * s + b * c;
	default:	/* RESCAL, M row-major d x d */
		/* Tails: column l of M in row order, as kg_kern_matvec's
		 * transposed loop; heads: row l, as its sum_dot. */
		if (side != KG_DEV_TAIL)
			return kg_dev_dot(rel + l * d, f, d);
		for (i = 0; i < d; i++)
			acc += f[i] * rel[i * d + l];
		return acc;
	}
}

/*
 * dL/df_l (l < d) given gq = dL/dq for q = Q(f, rel): grad.c's
 * query_backward, one element.
 */
KG_HD float
kg_dev_query_df(int form, int side, size_t d, const float *f,
    const float *rel, const float *gq, size_t l)
{
	size_t h = d / 2, k = l < h ? l : l - h, i;
	float c, s, gre, gim, acc = 0.0f;

	(void)f;
	switch (form) {
	case KG_DEV_Q_ADD:
		return gq[l];
	case KG_DEV_Q_MUL:
		return gq[l] * rel[l];
	case KG_DEV_Q_COMPLEX:
	case KG_DEV_Q_ROTATE:
		gre = gq[k];
		gim = gq[h + k];
		if (form == KG_DEV_Q_COMPLEX) {
			c = rel[k];
			s = side == KG_DEV_TAIL ? rel[h + k] : -rel[h + k];
		} else {
			c = cosf(rel[k]);
			s = side == KG_DEV_TAIL ? sinf(rel[k]) : -sinf(rel[k]);
		}
		return l < h ? gre * c + gim * s : -gre * s + gim * c;
	default:	/* RESCAL */
		for (i = 0; i < d; i++)
			acc += side == KG_DEV_TAIL ? rel[l * d + i] * gq[i] :
			    rel[i * d + l] * gq[i];
		return acc;
	}
}

/* dL/drel_l (l < kg_dev_qform_width(form, d)) given gq. */
KG_HD float
kg_dev_query_dr(int form, int side, size_t d, const float *f,
    const float *rel, const float *gq, size_t l)
{
	size_t h = d / 2, k = l < h ? l : l - h;
	float a, b, c, s, gre, gim, gc, gs;

	switch (form) {
	case KG_DEV_Q_ADD:
		return side == KG_DEV_TAIL ? gq[l] : -gq[l];
	case KG_DEV_Q_MUL:
		return gq[l] * f[l];
	case KG_DEV_Q_COMPLEX:
		a = f[k];
		b = f[h + k];
		gre = gq[k];
		gim = gq[h + k];
		if (l < h)
			return gre * a + gim * b;
		return side == KG_DEV_TAIL ? -gre * b + gim * a :
		    gre * b - gim * a;
	case KG_DEV_Q_ROTATE:
		/* l < h: one phase per complex coordinate. */
		a = f[l];
		b = f[h + l];
		c = cosf(rel[l]);
		s = sinf(rel[l]);
		gre = gq[l];
		gim = gq[h + l];
		gc = gre * a + gim * b;
		gs = -gre * b + gim * a;
		if (side == KG_DEV_HEAD)
			gs = -gs;
		return -gc * s + gs * c;
	default:	/* RESCAL: M_ij, l = i d + j */
		return side == KG_DEV_TAIL ? f[l / d] * gq[l % d] :
		    gq[l / d] * f[l % d];
	}
}

/* ---- Thread functions: rows and index arrays. ---- */

/* out[i] = table[idx[i]], rows of d floats; one thread per element. */
KG_HD void
kg_dev_t_gather(unsigned b, unsigned t, unsigned bdim, size_t n, size_t d,
    const float *table, const int64_t *idx, float *out)
{
	size_t e = kg_dev_tid(b, t, bdim), i, l;

	if (e >= n * d)
		return;
	i = e / d;
	l = e % d;
	out[e] = table[(size_t)idx[i] * d + l];
}

/* table[idx[i]] += src[i]; repeated indices add up (atomically on the
 * device, so in no fixed order there). */
KG_HD void
kg_dev_t_scatter_add(unsigned b, unsigned t, unsigned bdim, size_t n,
    size_t d, const float *src, const int64_t *idx, float *table)
{
	size_t e = kg_dev_tid(b, t, bdim), i, l;

	if (e >= n * d)
		return;
	i = e / d;
	l = e % d;
	kg_dev_atomic_add(&table[(size_t)idx[i] * d + l], src[e]);
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

/* ---- Block functions: the tiled chunk scores (issue 31, GPU hot spots).
 *
 * The chunk forward and backward of the similarities cuBLAS cannot do
 * (L1, L2, L2_DIFF, CMOD, CMOD_APPROX; DOT works too, for the tests) as
 * GEMM-shaped tiles.  A block of KG_DEV_TILE_THREADS threads owns a
 * KG_DEV_TILE x KG_DEV_TILE tile of outputs; thread t, (ty, tx) = (t /
 * KG_DEV_TDIM, t % KG_DEV_TDIM), owns the KG_DEV_TSUB x KG_DEV_TSUB
 * outputs at rows ty + KG_DEV_TDIM r and columns tx + KG_DEV_TDIM s of
 * the tile (strided, so that neighbouring threads read neighbouring
 * shared floats and write neighbouring outputs), in registers.  The
 * dimension summed over runs in slabs of KG_DEV_SLAB, staged in shared
 * memory (struct kg_dev_tile_smem), so that a block reads each input
 * element it needs from global memory once.  A block runs in phases:
 *
 *	init                                    (registers only)
 *	for each slab s: load; barrier; accumulate; barrier
 *	store
 *
 * load reads global memory and writes shared memory, each slot from one
 * thread; accumulate reads shared memory and writes the thread's own
 * registers; store writes each output element from one thread (no
 * atomics).  So running each phase over the block's threads one at a
 * time, in any order, gives the GPU's result: tests/unit/t_devops_tile.c
 * does so (devops_tile_emu.h), with the threads in both orders.
 *
 * The order of the sums.  Forward: a pair's sum over k < n (n = d, or
 * d / 2 complex coordinates for CMOD) runs k = 0, 1, ..., n - 1 into one
 * float, not in the CPU's eight lanes: within a relative 1e-5 of the CPU
 * backend, not its bits.  Backward: an element's sum over the other side
 * runs j (or i) = 0, 1, ... into one float, skipping g == 0; for DOT, L1
 * and the CMOD kinds with kg_dev_t_chunk_bwd_q's (_c's) arithmetic, the
 * same bits as those thread functions on the host; for the L2 kinds
 * with the weight w = g / dist formed once a pair as the CPU kernel forms
 * it, then acc -= w (q - c) (gq) or += w (q - c) (gc), within 1e-5.  On a GPU both orders are fixed too, so
 * a run gives the same bits every time (nvcc may fuse a multiply and an
 * add, as it may in every kernel here).
 */

#define KG_DEV_TILE 64		/* outputs a block owns, each way */
#define KG_DEV_TSUB 4		/* outputs a thread owns, each way */
#define KG_DEV_TDIM (KG_DEV_TILE / KG_DEV_TSUB)
#define KG_DEV_TILE_THREADS (KG_DEV_TDIM * KG_DEV_TDIM)
#define KG_DEV_SLAB 16		/* the summed dimension's slab */
#define KG_DEV_TSTRIDE (KG_DEV_TILE + 1)	/* a padded shared row */

/* Which output the backward makes. */
#define KG_DEV_TILE_GQ 0	/* gq[i][l] = sum_j g_ij dS/dq_l */
#define KG_DEV_TILE_GC 1	/* gc[j][l] += sum_i g_ij dS/dc_l */

/*
 * A block's shared memory (16,640 bytes).  Forward: a[p] the queries'
 * slab, b[p] the candidates', p = 0 the real parts (every row element
 * for the non-CMOD kinds), 1 the imaginary parts, [k][row] so that the
 * threads' reads of one k are consecutive.  Backward: a[p] the other
 * side's rows [row][column], b[0] its g_ij (L2 kinds: g_ij / dist_ij)
 * [other row][own row], b[1] unused.
 */
struct kg_dev_tile_smem {
	float a[2][KG_DEV_SLAB][KG_DEV_TSTRIDE];
	float b[2][KG_DEV_SLAB][KG_DEV_TSTRIDE];
};

/* What a tiled launch computes: the arguments of kg_be_chunk (forward:
 * out the scores, dist the L2 distances written, may be NULL) or of one
 * side of kg_be_chunk_backward (side KG_DEV_TILE_GQ or _GC, out gq or
 * gc, dist the distances read, may be NULL). */
struct kg_dev_tile {
	int sim, side;
	size_t nq, nc, d;
	float gamma;
	const float *q, *c, *g;
	float *dist, *out;
};

KG_HD int
kg_dev_is_cmod(int sim)
{
	return sim == KG_DEV_CMOD || sim == KG_DEV_CMOD_APPROX;
}

/* The length of a forward sum: d, or d / 2 complex coordinates. */
KG_HD size_t
kg_dev_tile_n(int sim, size_t d)
{
	return kg_dev_is_cmod(sim) ? d / 2 : d;
}

/* The forward grid: x over query tiles, y over candidate tiles; the
 * slabs a block runs. */
KG_HD size_t
kg_dev_tile_fwd_gx(struct kg_dev_tile a)
{
	return kg_dev_nblocks(a.nq, KG_DEV_TILE);
}

KG_HD size_t
kg_dev_tile_fwd_gy(struct kg_dev_tile a)
{
	return kg_dev_nblocks(a.nc, KG_DEV_TILE);
}

KG_HD size_t
kg_dev_tile_fwd_slabs(struct kg_dev_tile a)
{
	return kg_dev_nblocks(kg_dev_tile_n(a.sim, a.d), KG_DEV_SLAB);
}

/* One forward term, as kg_dev_sim_term (re, im: a complex coordinate's
 * parts; im unused but for CMOD). */
KG_HD float
kg_dev_tile_term(int sim, float qre, float qim, float cre, float cim)
{
	float e, di;

	switch (sim) {
	case KG_DEV_DOT:
		return qre * cre;
	case KG_DEV_L1:
		return fabsf(qre - cre);
	case KG_DEV_L2:
	case KG_DEV_L2_DIFF:
		e = qre - cre;
		return e * e;
	default:
		e = qre - cre;
		di = qim - cim;
		return sim == KG_DEV_CMOD_APPROX ?
		    kg_dev_sqrt_approx(e * e + di * di) : sqrtf(e * e + di * di);
	}
}

/* Forward phase 1: thread t of block (bx, by) stages its share of slab
 * s of the queries and candidates (zeros past the rows and past n). */
KG_HD void
kg_dev_tile_fwd_load(unsigned bx, unsigned by, unsigned t,
    struct kg_dev_tile a, size_t s, struct kg_dev_tile_smem *sm)
{
	size_t n = kg_dev_tile_n(a.sim, a.d), h = a.d / 2;
	size_t i0 = (size_t)bx * KG_DEV_TILE, j0 = (size_t)by * KG_DEV_TILE;
	size_t k0 = s * KG_DEV_SLAB, np = kg_dev_is_cmod(a.sim) ? 2 : 1;
	size_t p, e, r, kk;

	for (p = 0; p < np; p++)
		for (e = t; e < KG_DEV_SLAB * KG_DEV_TILE;
		    e += KG_DEV_TILE_THREADS) {
			r = e / KG_DEV_SLAB;
			kk = e % KG_DEV_SLAB;
			sm->a[p][kk][r] = i0 + r < a.nq && k0 + kk < n ?
			    a.q[(i0 + r) * a.d + p * h + k0 + kk] : 0.0f;
			sm->b[p][kk][r] = j0 + r < a.nc && k0 + kk < n ?
			    a.c[(j0 + r) * a.d + p * h + k0 + kk] : 0.0f;
		}
}

/* Forward phase 2 for one similarity (inlined with sim a constant):
 * acc[r * TSUB + c] += the terms k0 .. k0 + kn of the thread's pairs. */
KG_HD void
kg_dev_tile_fwd_sum(int sim, unsigned t, size_t kn,
    const struct kg_dev_tile_smem *sm, float *acc)
{
	unsigned ty = t / KG_DEV_TDIM, tx = t % KG_DEV_TDIM, r, c;
	float qre[KG_DEV_TSUB], qim[KG_DEV_TSUB], cre[KG_DEV_TSUB];
	float cim[KG_DEV_TSUB];
	int cmod = kg_dev_is_cmod(sim);
	size_t kk;

	for (kk = 0; kk < kn; kk++) {
		for (r = 0; r < KG_DEV_TSUB; r++) {
			qre[r] = sm->a[0][kk][ty + KG_DEV_TDIM * r];
			qim[r] = cmod ? sm->a[1][kk][ty + KG_DEV_TDIM * r] : 0.0f;
			cre[r] = sm->b[0][kk][tx + KG_DEV_TDIM * r];
			cim[r] = cmod ? sm->b[1][kk][tx + KG_DEV_TDIM * r] : 0.0f;
		}
		for (r = 0; r < KG_DEV_TSUB; r++)
			for (c = 0; c < KG_DEV_TSUB; c++)
				acc[r * KG_DEV_TSUB + c] += kg_dev_tile_term(sim,
				    qre[r], qim[r], cre[c], cim[c]);
	}
}

/* Forward phase 2: thread t adds slab s's terms to its acc (TSUB^2
 * floats, zeroed before the first slab). */
KG_HD void
kg_dev_tile_fwd_acc(unsigned t, struct kg_dev_tile a, size_t s,
    const struct kg_dev_tile_smem *sm, float *acc)
{
	size_t n = kg_dev_tile_n(a.sim, a.d), k0 = s * KG_DEV_SLAB;
	size_t kn = n - k0 < KG_DEV_SLAB ? n - k0 : KG_DEV_SLAB;

	switch (a.sim) {
	case KG_DEV_DOT:
		kg_dev_tile_fwd_sum(KG_DEV_DOT, t, kn, sm, acc);
		break;
	case KG_DEV_L1:
		kg_dev_tile_fwd_sum(KG_DEV_L1, t, kn, sm, acc);
		break;
	case KG_DEV_L2:
	case KG_DEV_L2_DIFF:
		kg_dev_tile_fwd_sum(KG_DEV_L2, t, kn, sm, acc);
		break;
	case KG_DEV_CMOD:
		kg_dev_tile_fwd_sum(KG_DEV_CMOD, t, kn, sm, acc);
		break;
	default:
		kg_dev_tile_fwd_sum(KG_DEV_CMOD_APPROX, t, kn, sm, acc);
		break;
	}
}

/* Forward phase 3: thread t of block (bx, by) writes its pairs' scores
 * (and distances, L2 kinds) as kg_dev_sim finishes them. */
KG_HD void
kg_dev_tile_fwd_store(unsigned bx, unsigned by, unsigned t,
    struct kg_dev_tile a, const float *acc)
{
	unsigned ty = t / KG_DEV_TDIM, tx = t % KG_DEV_TDIM, r, c;
	size_t i, j, e;
	float s;

	for (r = 0; r < KG_DEV_TSUB; r++)
		for (c = 0; c < KG_DEV_TSUB; c++) {
			i = (size_t)bx * KG_DEV_TILE + ty + KG_DEV_TDIM * r;
			j = (size_t)by * KG_DEV_TILE + tx + KG_DEV_TDIM * c;
			if (i >= a.nq || j >= a.nc)
				continue;
			e = i * a.nc + j;
			s = acc[r * KG_DEV_TSUB + c];
			switch (a.sim) {
			case KG_DEV_DOT:
				a.out[e] = s;
				break;
			case KG_DEV_L2:
			case KG_DEV_L2_DIFF:
				s = sqrtf(s);
				if (a.dist != NULL)
					a.dist[e] = s;
				a.out[e] = a.gamma - s;
				break;
			default:
				a.out[e] = a.gamma - s;
				break;
			}
		}
}

/* The backward's own rows (gq: the queries, gc: the candidates) and the
 * other side's; its columns: d, or for CMOD the d / 2 complex
 * coordinates and, when d is odd, one more for the last element (whose
 * gradient is 0). */
KG_HD size_t
kg_dev_tile_bwd_rows(struct kg_dev_tile a)
{
	return a.side == KG_DEV_TILE_GQ ? a.nq : a.nc;
}

KG_HD size_t
kg_dev_tile_bwd_other(struct kg_dev_tile a)
{
	return a.side == KG_DEV_TILE_GQ ? a.nc : a.nq;
}

KG_HD size_t
kg_dev_tile_bwd_cols(struct kg_dev_tile a)
{
	return kg_dev_is_cmod(a.sim) ? a.d / 2 + a.d % 2 : a.d;
}

/* The backward grid: x over own-row tiles, y over column tiles; the
 * slabs of other rows a block runs. */
KG_HD size_t
kg_dev_tile_bwd_gx(struct kg_dev_tile a)
{
	return kg_dev_nblocks(kg_dev_tile_bwd_rows(a), KG_DEV_TILE);
}

KG_HD size_t
kg_dev_tile_bwd_gy(struct kg_dev_tile a)
{
	return kg_dev_nblocks(kg_dev_tile_bwd_cols(a), KG_DEV_TILE);
}

KG_HD size_t
kg_dev_tile_bwd_slabs(struct kg_dev_tile a)
{
	return kg_dev_nblocks(kg_dev_tile_bwd_other(a), KG_DEV_SLAB);
}

/*
 * Both sides of the backward in one grid: gq's blocks at z = 0, gc's at
 * z = 1 (gc NULL: z = 0 only), x over the larger side's row tiles.  The
 * launch's x extent, and for block (bx, by, bz) its side in *a (out gc
 * at z = 1) and whether it has work (0: it leaves before any barrier).
 */
KG_HD size_t
kg_dev_tile_bwd_gx2(struct kg_dev_tile a, const float *gc)
{
	size_t gq = kg_dev_tile_bwd_gx(a);

	a.side = KG_DEV_TILE_GC;
	return gc != NULL && kg_dev_tile_bwd_gx(a) > gq ?
	    kg_dev_tile_bwd_gx(a) : gq;
}

KG_HD int
kg_dev_tile_bwd_block(struct kg_dev_tile *a, unsigned bx, unsigned by,
    unsigned bz, float *gc)
{
	if (bz == 1) {
		a->side = KG_DEV_TILE_GC;
		a->out = gc;
	}
	return bx < kg_dev_tile_bwd_gx(*a) && by < kg_dev_tile_bwd_gy(*a);
}

/*
 * Backward phase 0: thread t of block (bx, by) loads its own elements
 * into own (2 TSUB^2 floats: the values, then for CMOD the imaginary
 * parts; zeros past the rows and columns) and zeroes acc (as many).
 */
KG_HD void
kg_dev_tile_bwd_init(unsigned bx, unsigned by, unsigned t,
    struct kg_dev_tile a, float *own, float *acc)
{
	unsigned ty = t / KG_DEV_TDIM, tx = t % KG_DEV_TDIM, r, c;
	const float *x = a.side == KG_DEV_TILE_GQ ? a.q : a.c;
	size_t rows = kg_dev_tile_bwd_rows(a), h = a.d / 2, row, col, o;
	size_t real = kg_dev_is_cmod(a.sim) ? h : a.d;
	int ok;

	for (r = 0; r < KG_DEV_TSUB; r++)
		for (c = 0; c < KG_DEV_TSUB; c++) {
			row = (size_t)bx * KG_DEV_TILE + ty + KG_DEV_TDIM * r;
			col = (size_t)by * KG_DEV_TILE + tx + KG_DEV_TDIM * c;
			o = r * KG_DEV_TSUB + c;
			ok = row < rows && col < real;
			own[o] = ok ? x[row * a.d + col] : 0.0f;
			own[KG_DEV_TSUB * KG_DEV_TSUB + o] = ok &&
			    kg_dev_is_cmod(a.sim) ? x[row * a.d + h + col] :
			    0.0f;
			acc[o] = 0.0f;
			acc[KG_DEV_TSUB * KG_DEV_TSUB + o] = 0.0f;
		}
}

/* Backward phase 1: thread t stages its share of slab s: the other
 * side's rows j0 .. j0 + SLAB over the block's columns, and the g_ij of
 * those rows against the block's own rows (L2 kinds: g_ij / dist_ij;
 * zeros past the ends).  Global reads run along rows of g either way. */
KG_HD void
kg_dev_tile_bwd_load(unsigned bx, unsigned by, unsigned t,
    struct kg_dev_tile a, size_t s, struct kg_dev_tile_smem *sm)
{
	const float *x = a.side == KG_DEV_TILE_GQ ? a.c : a.q;
	size_t rows = kg_dev_tile_bwd_rows(a), other = kg_dev_tile_bwd_other(a);
	size_t h = a.d / 2, real = kg_dev_is_cmod(a.sim) ? h : a.d;
	size_t np = kg_dev_is_cmod(a.sim) ? 2 : 1, r0 = (size_t)bx * KG_DEV_TILE;
	size_t c0 = (size_t)by * KG_DEV_TILE, j0 = s * KG_DEV_SLAB;
	size_t p, e, jj, r, gi;
	int ok, l2 = a.sim == KG_DEV_L2 || a.sim == KG_DEV_L2_DIFF;
	float gv, dv;

	for (p = 0; p < np; p++)
		for (e = t; e < KG_DEV_SLAB * KG_DEV_TILE;
		    e += KG_DEV_TILE_THREADS) {
			jj = e / KG_DEV_TILE;
			r = e % KG_DEV_TILE;
			sm->a[p][jj][r] = j0 + jj < other && c0 + r < real ?
			    x[(j0 + jj) * a.d + p * h + c0 + r] : 0.0f;
		}
	for (e = t; e < KG_DEV_SLAB * KG_DEV_TILE; e += KG_DEV_TILE_THREADS) {
		if (a.side == KG_DEV_TILE_GQ) {
			r = e / KG_DEV_SLAB;
			jj = e % KG_DEV_SLAB;
		} else {
			jj = e / KG_DEV_TILE;
			r = e % KG_DEV_TILE;
		}
		ok = r0 + r < rows && j0 + jj < other;
		gi = a.side == KG_DEV_TILE_GQ ? (r0 + r) * a.nc + j0 + jj :
		    (j0 + jj) * a.nc + r0 + r;
		gv = ok ? a.g[gi] : 0.0f;
		/* The L2 kinds' weight g / dist, once a pair (as the CPU
		 * kernel forms it), not once an element; no distances, no
		 * gradient (kg_dev_dsdq's dist of 0). */
		if (l2) {
			dv = ok && a.dist != NULL ? a.dist[gi] : 0.0f;
			gv = dv < KG_DEV_DIST_EPS ? 0.0f : gv / dv;
		}
		sm->b[0][jj][r] = gv;
	}
}

/* dS(q, c)/dq of one element (DOT, L1), kg_dev_dsdq's arithmetic. */
KG_HD float
kg_dev_tile_dq(int sim, float q, float c)
{
	float e;

	if (sim == KG_DEV_DOT)
		return c;
	e = q - c;
	return e > 0.0f ? -1.0f : e < 0.0f ? 1.0f : 0.0f;
}

/* Backward phase 2 for one similarity (inlined with sim a constant):
 * acc += g_ij times the own side's derivative, over the kn rows of the
 * staged slab in order, g_ij == 0 skipped. */
KG_HD void
kg_dev_tile_bwd_sum(int sim, int side, unsigned t, size_t kn,
    const struct kg_dev_tile_smem *sm, const float *own, float *acc)
{
	unsigned ty = t / KG_DEV_TDIM, tx = t % KG_DEV_TDIM, r, c, o;
	const unsigned im = KG_DEV_TSUB * KG_DEV_TSUB;
	float gv, xre, xim, dr, di, w, v;
	size_t jj;

	for (jj = 0; jj < kn; jj++)
		for (r = 0; r < KG_DEV_TSUB; r++) {
			gv = sm->b[0][jj][ty + KG_DEV_TDIM * r];
			if (gv == 0.0f)
				continue;
			for (c = 0; c < KG_DEV_TSUB; c++) {
				o = r * KG_DEV_TSUB + c;
				xre = sm->a[0][jj][tx + KG_DEV_TDIM * c];
				if (sim == KG_DEV_L2) {
					/* gv: the weight g / dist. */
					if (side == KG_DEV_TILE_GQ)
						acc[o] -= gv * (own[o] - xre);
					else
						acc[o] += gv * (xre - own[o]);
					continue;
				}
				if (!kg_dev_is_cmod(sim)) {
					/* dS/dc = -dS/dq, but q for DOT. */
					v = side == KG_DEV_TILE_GQ ?
					    kg_dev_tile_dq(sim, own[o], xre) :
					    sim == KG_DEV_DOT ? xre :
					    -kg_dev_tile_dq(sim, xre, own[o]);
					acc[o] += gv * v;
					continue;
				}
				xim = sm->a[1][jj][tx + KG_DEV_TDIM * c];
				dr = side == KG_DEV_TILE_GQ ? own[o] - xre :
				    xre - own[o];
				di = side == KG_DEV_TILE_GQ ? own[im + o] - xim :
				    xim - own[im + o];
				w = kg_dev_cmod_weight(dr, di,
				    sim == KG_DEV_CMOD_APPROX);
				if (side == KG_DEV_TILE_GQ) {
					acc[o] += gv * (-w * dr);
					acc[im + o] += gv * (-w * di);
				} else {
					acc[o] += gv * -(-w * dr);
					acc[im + o] += gv * -(-w * di);
				}
			}
		}
}

/* Backward phase 2: thread t adds slab s's terms to its acc. */
KG_HD void
kg_dev_tile_bwd_acc(unsigned t, struct kg_dev_tile a, size_t s,
    const struct kg_dev_tile_smem *sm, const float *own, float *acc)
{
	size_t other = kg_dev_tile_bwd_other(a), j0 = s * KG_DEV_SLAB;
	size_t kn = other - j0 < KG_DEV_SLAB ? other - j0 : KG_DEV_SLAB;
	int q = a.side == KG_DEV_TILE_GQ;

	switch (a.sim) {
	case KG_DEV_DOT:
		kg_dev_tile_bwd_sum(KG_DEV_DOT, q ? KG_DEV_TILE_GQ :
		    KG_DEV_TILE_GC, t, kn, sm, own, acc);
		break;
	case KG_DEV_L1:
		kg_dev_tile_bwd_sum(KG_DEV_L1, q ? KG_DEV_TILE_GQ :
		    KG_DEV_TILE_GC, t, kn, sm, own, acc);
		break;
	case KG_DEV_L2:
	case KG_DEV_L2_DIFF:
		kg_dev_tile_bwd_sum(KG_DEV_L2, q ? KG_DEV_TILE_GQ :
		    KG_DEV_TILE_GC, t, kn, sm, own, acc);
		break;
	case KG_DEV_CMOD:
		kg_dev_tile_bwd_sum(KG_DEV_CMOD, q ? KG_DEV_TILE_GQ :
		    KG_DEV_TILE_GC, t, kn, sm, own, acc);
		break;
	default:
		kg_dev_tile_bwd_sum(KG_DEV_CMOD_APPROX, q ? KG_DEV_TILE_GQ :
		    KG_DEV_TILE_GC, t, kn, sm, own, acc);
		break;
	}
}

/* Backward phase 3: thread t writes its elements: gq overwritten, gc
 * added to (CMOD: both parts of a coordinate, and 0 for the odd last
 * element). */
KG_HD void
kg_dev_tile_bwd_store(unsigned bx, unsigned by, unsigned t,
    struct kg_dev_tile a, const float *acc)
{
	unsigned ty = t / KG_DEV_TDIM, tx = t % KG_DEV_TDIM, r, c, o;
	const unsigned im = KG_DEV_TSUB * KG_DEV_TSUB;
	size_t rows = kg_dev_tile_bwd_rows(a), cols = kg_dev_tile_bwd_cols(a);
	size_t h = a.d / 2, row, col, l[2];
	float v[2];
	int n, k, add = a.side == KG_DEV_TILE_GC;

	for (r = 0; r < KG_DEV_TSUB; r++)
		for (c = 0; c < KG_DEV_TSUB; c++) {
			row = (size_t)bx * KG_DEV_TILE + ty + KG_DEV_TDIM * r;
			col = (size_t)by * KG_DEV_TILE + tx + KG_DEV_TDIM * c;
			if (row >= rows || col >= cols)
				continue;
			o = r * KG_DEV_TSUB + c;
			n = 1;
			l[0] = col;
			v[0] = acc[o];
			if (kg_dev_is_cmod(a.sim) && col < h) {
				n = 2;
				l[1] = h + col;
				v[1] = acc[im + o];
			} else if (kg_dev_is_cmod(a.sim)) {
				l[0] = 2 * h;
				v[0] = 0.0f;
			}
			for (k = 0; k < n; k++) {
				if (add)
					a.out[row * a.d + l[k]] += v[k];
				else
					a.out[row * a.d + l[k]] = v[k];
			}
		}
}

/* ---- Thread functions: query forms. ---- */

/*
 * q[i] = Q(fixed[i], rel[i]) for n queries (rows of d and of rw =
 * kg_dev_qform_width(form, d) floats): one thread per element of q.
 */
KG_HD void
kg_dev_t_query(unsigned b, unsigned t, unsigned bdim, int form, int side,
    size_t n, size_t d, const float *fixed, const float *rel, float *q)
{
	size_t e = kg_dev_tid(b, t, bdim), rw = kg_dev_qform_width(form, d);
	size_t i, l;

	if (e >= n * d)
		return;
	i = e / d;
	l = e % d;
	q[e] = kg_dev_query_elem(form, side, d, fixed + i * d, rel + i * rw, l);
}

/* gfixed[i] += dL/dfixed_i given gq (n x d): one thread per element. */
KG_HD void
kg_dev_t_query_bwd_f(unsigned b, unsigned t, unsigned bdim, int form,
    int side, size_t n, size_t d, const float *fixed, const float *rel,
    const float *gq, float *gfixed)
{
	size_t e = kg_dev_tid(b, t, bdim), rw = kg_dev_qform_width(form, d);
	size_t i, l;

	if (e >= n * d)
		return;
	i = e / d;
	l = e % d;
	gfixed[e] += kg_dev_query_df(form, side, d, fixed + i * d,
	    rel + i * rw, gq + i * d, l);
}

/* grel[i] += dL/drel_i given gq (grel n x rw): one thread per element. */
KG_HD void
kg_dev_t_query_bwd_r(unsigned b, unsigned t, unsigned bdim, int form,
    int side, size_t n, size_t d, const float *fixed, const float *rel,
    const float *gq, float *grel)
{
	size_t e = kg_dev_tid(b, t, bdim), rw = kg_dev_qform_width(form, d);
	size_t i, l;

	if (e >= n * rw)
		return;
	i = e / rw;
	l = e % rw;
	grel[e] += kg_dev_query_dr(form, side, d, fixed + i * d, rel + i * rw,
	    gq + i * d, l);
}

/* x[e] *= alpha for n floats: one thread per element. */
KG_HD void
kg_dev_t_scale(unsigned b, unsigned t, unsigned bdim, size_t n, float alpha,
    float *x)
{
	size_t e = kg_dev_tid(b, t, bdim);

	if (e < n)
		x[e] *= alpha;
}

/* *acc += x[e] for n doubles: one thread per element (atomically on the
 * device, so in no fixed order there). */
KG_HD void
kg_dev_t_dsum(unsigned b, unsigned t, unsigned bdim, size_t n,
    const double *x, double *acc)
{
	size_t e = kg_dev_tid(b, t, bdim);

	if (e < n)
		kg_dev_atomic_add_d(acc, x[e]);
}

/* ---- Thread functions: losses. ---- */

/*
 * The loss of row i (rowops.h's kg_loss_eval, same arithmetic, one
 * thread per row): pos[i] against neg[i * n .. i * n + n), skip (NULL, or
 * n bytes per row); writes gpos[i], gneg[i * n ..] and loss[i].
 * adv: the self-adversarial temperature (0 = uniform weights).
 */
KG_HD void
kg_dev_t_loss(unsigned b, unsigned t, unsigned bdim, int kind,
    double margin, float adv, size_t rows, size_t n, const float *pos,
    const float *neg, const uint8_t *skip, float *gpos, float *gneg,
    double *loss)
{
	size_t i = kg_dev_tid(b, t, bdim), j, k;
	const float *x;
	const uint8_t *sk;
	float *w, mx = -INFINITY, inv, acc[KG_DEV_LANES] = { 0 }, scale, p;
	double sum = 0.0, out = 0.0, gp = 0.0, dmx;
	size_t kept = 0;

	if (i >= rows)
		return;
	x = neg + i * n;
	w = gneg + i * n;
	sk = skip != NULL ? skip + i * n : NULL;
	p = pos[i];
	if (kind == KG_DEV_LOSS_SOFTMAX) {
		dmx = p;
		for (j = 0; j < n; j++)
			if ((sk == NULL || !sk[j]) && x[j] > dmx)
				dmx = x[j];
		for (j = 0; j < n; j++)
			w[j] = sk != NULL && sk[j] ? 0.0f : 1.0f;
		for (j = 0; j < n; j++) {
			w[j] *= kg_dev_fexp(1.0f * x[j] - (float)dmx);
			acc[j < n - n % KG_DEV_LANES ? j % KG_DEV_LANES : 0] +=
			    w[j];
		}
		for (k = 0; k < KG_DEV_LANES; k++)
			out += acc[k];
		sum = exp(p - dmx) + out;
		loss[i] = -p + dmx + log(sum);
		gpos[i] = (float)(exp(p - dmx) / sum - 1.0);
		inv = (float)(1.0 / sum);
		for (j = 0; j < n; j++)
			w[j] *= inv;
		return;
	}
	/* The weights: uniform over the kept negatives or their softmax. */
	for (j = 0; j < n; j++) {
		w[j] = sk != NULL && sk[j] ? 0.0f : 1.0f;
		kept += w[j] != 0.0f;
	}
	if (kept > 0 && adv <= 0.0f) {
		inv = 1.0f / (float)kept;
		for (j = 0; j < n; j++)
			w[j] *= inv;
	} else if (kept > 0) {
		for (j = 0; j < n; j++)
			mx = w[j] != 0.0f && adv * x[j] > mx ? adv * x[j] : mx;
		for (j = 0; j < n; j++) {
			w[j] *= kg_dev_fexp(adv * x[j] - mx);
			acc[j < n - n % KG_DEV_LANES ? j % KG_DEV_LANES : 0] +=
			    w[j];
		}
		for (k = 0; k < KG_DEV_LANES; k++) {
			sum += acc[k];
			acc[k] = 0.0f;
		}
		inv = (float)(1.0 / sum);
		for (j = 0; j < n; j++)
			w[j] *= inv;
		sum = 0.0;
	}
	switch (kind) {
	case KG_DEV_LOSS_LOGISTIC:
	case KG_DEV_LOSS_BCE:
		scale = kind == KG_DEV_LOSS_LOGISTIC ? 0.5f :
		    (float)kept / (float)(1 + kept);
		for (j = 0; j < n; j++)
			acc[j < n - n % KG_DEV_LANES ? j % KG_DEV_LANES : 0] +=
			    kg_dev_sp_term(x[j], w[j], scale, &w[j]);
		for (k = 0; k < KG_DEV_LANES; k++)
			sum += acc[k];
		if (kind == KG_DEV_LOSS_LOGISTIC) {
			out = 0.5 * kg_dev_softplus(-p) + 0.5 * sum;
			gp = -0.5 * kg_dev_sigmoid(-p);
		} else {
			out = (kg_dev_softplus(-p) + (double)kept * sum) /
			    (double)(1 + kept);
			gp = -kg_dev_sigmoid(-p) / (double)(1 + kept);
		}
		break;
	default:	/* margin */
		for (j = 0; j < n; j++) {
			double wj = w[j] * (double)kept, v;

			w[j] = 0.0f;
			if (wj == 0.0)
				continue;
			v = margin - p + x[j];
			if (v > 0.0) {
				out += wj * v;
				gp -= wj;
				w[j] = (float)wj;
			}
		}
		break;
	}
	gpos[i] = (float)gp;
	loss[i] = out;
}

/* ---- Thread functions: optimiser rows. ---- */

/*
 * Row-wise Adagrad of rows idx[0..n) of table (width d) with gradients
 * grad (n x d) and state (one float per table row): one thread per row.
 * Indices must be distinct within one call.
 */
KG_HD void
kg_dev_t_adagrad(unsigned b, unsigned t, unsigned bdim, size_t n, size_t d,
    float lr, const int64_t *idx, const float *grad, float *table,
    float *state)
{
	size_t i = kg_dev_tid(b, t, bdim), l, r;
	const float *g;
	float *w, ss = 0.0f, step;

	if (i >= n)
		return;
	r = (size_t)idx[i];
	g = grad + i * d;
	w = table + r * d;
	for (l = 0; l < d; l++)
		ss += g[l] * g[l];
	state[r] += ss / (float)d;
	step = kg_dev_adagrad_step(state[r], lr);
	for (l = 0; l < d; l++)
		w[l] -= step * g[l];
}

/* Element-wise Adagrad (state d floats per table row): one thread per
 * element. */
KG_HD void
kg_dev_t_adagrad_elem(unsigned b, unsigned t, unsigned bdim, size_t n,
    size_t d, float lr, const int64_t *idx, const float *grad,
    float *table, float *state)
{
	size_t e = kg_dev_tid(b, t, bdim), i, l, r;

	if (e >= n * d)
		return;
	i = e / d;
	l = e % d;
	r = (size_t)idx[i] * d + l;
	kg_dev_adagrad_elem(&table[r], &state[r], grad[e], lr);
}

/*
 * Adam (state 2d + 1 floats per table row: m, v, step count): one thread
 * per row, which advances the row's step count first.
 */
KG_HD void
kg_dev_t_adam(unsigned b, unsigned t, unsigned bdim, size_t n, size_t d,
    float lr, float b1, float b2, float eps, const int64_t *idx,
    const float *grad, float *table, float *state)
{
	size_t i = kg_dev_tid(b, t, bdim), l, r;
	float *st, *w, c1, c2;

	if (i >= n)
		return;
	r = (size_t)idx[i];
	st = state + r * (2 * d + 1);
	w = table + r * d;
	st[2 * d] += 1.0f;
	c1 = 1.0f - powf(b1, st[2 * d]);
	c2 = 1.0f - powf(b2, st[2 * d]);
	for (l = 0; l < d; l++)
		kg_dev_adam_elem(&w[l], &st[l], &st[d + l], grad[i * d + l], lr,
		    b1, b2, eps, c1, c2);
}

/*
 * The regulariser coef * sum |x|^p (p = 2: L2, p = 3: N3) over n floats:
 * g += scale * its gradient, and coef * |x_e|^p added to *value; one
 * thread per element.
 */
KG_HD void
kg_dev_t_regularise(unsigned b, unsigned t, unsigned bdim, size_t n,
    const float *x, float *g, double coef, unsigned p, double scale,
    double *value)
{
	size_t e = kg_dev_tid(b, t, bdim);
	double a;

	if (e >= n)
		return;
	a = fabs((double)x[e]);
	if (p == 2) {
		g[e] += (float)(scale * coef * 2.0 * x[e]);
		kg_dev_atomic_add_d(value, coef * a * a);
	} else {
		g[e] += (float)(scale * coef * 3.0 * a * x[e]);
		kg_dev_atomic_add_d(value, coef * a * a * a);
	}
}

/* ---- TransR: the projection y = M x (+- r) (issue 31, item 3). ---- */

/*
 * TransR's relation row is [r (k floats) | M (k x d, row-major)], k + k d
 * floats (lib/kge/model.h).  One function serves its query and its
 * candidates: y = M x + sign r, sign +1 (the tail query M h + r), -1
 * (the head query M t - r) or 0 (a candidate's projection M c, r unused).
 * Element a (< k) of y: the row product in kg_kern_matvec's order, then
 * r added as score.c's transr_query adds it, so the CPU backend gives
 * score.c's bits.
 */
KG_HD float
kg_dev_transr_elem(int sign, size_t d, size_t k, const float *x,
    const float *rel, size_t a)
{
	float y = kg_dev_dot(rel + k + a * d, x, d);

	return sign > 0 ? y + rel[a] : sign < 0 ? y - rel[a] : y;
}

/* dL/dx_b (b < d) given gy = dL/dy (k floats): (M^T gy)_b. */
KG_HD float
kg_dev_transr_dx(size_t d, size_t k, const float *rel, const float *gy,
    size_t b)
{
	float acc = 0.0f;
	size_t a;

	for (a = 0; a < k; a++)
		acc += rel[k + a * d + b] * gy[a];
	return acc;
}

/* dL/drel_l (l < k + k d) given gy: sign gy_l on r, gy_a x_b on M_ab. */
KG_HD float
kg_dev_transr_drel(int sign, size_t d, size_t k, const float *x,
    const float *gy, size_t l)
{
	if (l < k)
		return sign > 0 ? gy[l] : sign < 0 ? -gy[l] : 0.0f;
	l -= k;
	return gy[l / d] * x[l % d];
}

/* y[i] = M_i x[i] + sign r_i for n rows (x n x d, rel n x (k + k d),
 * y n x k): one thread per element of y. */
KG_HD void
kg_dev_t_transr(unsigned b, unsigned t, unsigned bdim, int sign, size_t n,
    size_t d, size_t k, const float *x, const float *rel, float *y)
{
	size_t e = kg_dev_tid(b, t, bdim), i;

	if (e >= n * k)
		return;
	i = e / k;
	y[e] = kg_dev_transr_elem(sign, d, k, x + i * d, rel + i * (k + k * d),
	    e % k);
}

/* gx[i] += M_i^T gy[i] (gx n x d): one thread per element. */
KG_HD void
kg_dev_t_transr_bwd_x(unsigned b, unsigned t, unsigned bdim, size_t n,
    size_t d, size_t k, const float *rel, const float *gy, float *gx)
{
	size_t e = kg_dev_tid(b, t, bdim), i;

	if (e >= n * d)
		return;
	i = e / d;
	gx[e] += kg_dev_transr_dx(d, k, rel + i * (k + k * d), gy + i * k,
	    e % d);
}

/* grel[i] += dL/drel_i (grel n x (k + k d)): one thread per element. */
KG_HD void
kg_dev_t_transr_bwd_r(unsigned b, unsigned t, unsigned bdim, int sign,
    size_t n, size_t d, size_t k, const float *x, const float *gy,
    float *grel)
{
	size_t e = kg_dev_tid(b, t, bdim), rw = k + k * d, i;

	if (e >= n * rw)
		return;
	i = e / rw;
	grel[e] += kg_dev_transr_drel(sign, d, k, x + i * d, gy + i * k,
	    e % rw);
}

/* ---- Thread functions: ranking. ---- */

/* Threads a row of the rank counts: one warp, lane l the columns j = l,
 * l + 32, ..., so that a warp's reads of a row are consecutive. */
#define KG_DEV_RANK_LANES 32

/*
 * Filtered rank counts over a tile of scores (nq x nc): greater[i] and
 * equal[i] gain the columns j of row i with scores[i][j] > s[i] and
 * == s[i], columns excl[excl_off[i] .. excl_off[i + 1]) left out (the
 * true entity and known positives in the tile, each listed once; excl_off
 * NULL: none).  A NaN s[i] counts nothing.  KG_DEV_RANK_LANES threads a
 * row, thread (i, l) the columns j with j % KG_DEV_RANK_LANES == l (and
 * those of the excluded), its counts added atomically (integers: the
 * same totals in any order).
 */
KG_HD void
kg_dev_t_rank_counts(unsigned b, unsigned t, unsigned bdim, size_t nq,
    size_t nc, const float *scores, const float *s, const int64_t *excl_off,
    const int64_t *excl, uint64_t *greater, uint64_t *equal)
{
	size_t e = kg_dev_tid(b, t, bdim), i, lane, j;
	uint64_t gt = 0, eq = 0;
	const float *row;
	float si;
	int64_t k;

	if (e >= nq * KG_DEV_RANK_LANES)
		return;
	i = e / KG_DEV_RANK_LANES;
	lane = e % KG_DEV_RANK_LANES;
	row = scores + i * nc;
	si = s[i];
	if (si != si)
		return;
	for (j = lane; j < nc; j += KG_DEV_RANK_LANES) {
		gt += row[j] > si;
		eq += row[j] == si;
	}
	if (excl_off != NULL)
		for (k = excl_off[i]; k < excl_off[i + 1]; k++) {
			j = (size_t)excl[k];
			if (j % KG_DEV_RANK_LANES != lane)
				continue;
			gt -= row[j] > si;
			eq -= row[j] == si;
		}
	if (gt != 0)
		kg_dev_atomic_add_u64(&greater[i], gt);
	if (eq != 0)
		kg_dev_atomic_add_u64(&equal[i], eq);
}

/* ---- Thread functions: GNN message passing (lib/gnn/layers_device.h). ---- */

/*
 * A segmented weighted sum of rows (backend.h's kg_be_seg_sum): segment
 * i is the items q in off[i] .. off[i + 1); item q names e = perm[q]
 * (perm NULL: q), which reads row idx[e] (idx NULL: e) of each of nb
 * blocks of x, block c at x + c * xs floats, rows of d floats, with the
 * weight w[c * ws + e] (w NULL: 1).
 */
struct kg_dev_seg {
	const int64_t *off, *perm, *idx;
	const float *w;
	size_t nb, ws, xs;
};

/*
 * out[i * ldo + k] = (beta ? out[i * ldo + k] : 0) + sum over the items
 * q of segment i, in order, and for each over the blocks c, in order, of
 * w_c(e) x_c[idx(e)][k]: one thread per (i, k) of n_seg x d, so each
 * output element is summed by one thread in a fixed order (no atomics).
 */
KG_HD void
kg_dev_t_seg_sum(unsigned b, unsigned t, unsigned bdim, size_t n_seg,
    size_t d, struct kg_dev_seg sg, const float *x, int beta, float *out,
    size_t ldo)
{
	size_t el = kg_dev_tid(b, t, bdim), i, k, c;
	int64_t q;
	float acc;

	if (el >= n_seg * d)
		return;
	i = el / d;
	k = el % d;
	acc = beta ? out[i * ldo + k] : 0.0f;
	for (q = sg.off[i]; q < sg.off[i + 1]; q++) {
		size_t e = sg.perm != NULL ? (size_t)sg.perm[q] : (size_t)q;
		size_t r = sg.idx != NULL ? (size_t)sg.idx[e] : e;

		for (c = 0; c < sg.nb; c++)
			acc += (sg.w != NULL ? sg.w[c * sg.ws + e] : 1.0f) *
			    x[c * sg.xs + r * d + k];
	}
	out[i * ldo + k] = acc;
}

/*
 * kg_dev_t_seg_sum in two passes, for few long segments (one bias's rows,
 * each relation type's messages), where one thread per output element
 * would add a whole segment alone.  Pass one: one thread per (i, p, k)
 * of n_seg x parts x d sums the items off[i] + p, off[i] + p + parts, ...
 * of segment i in order (part 0 starting from out's element when beta,
 * the others from 0) into tmp[(i * parts + p) * d + k].  Pass two
 * (kg_dev_t_seg_join): one thread per (i, k) adds the parts in order
 * into out.  With parts = 1 this is kg_dev_t_seg_sum's order, so its
 * bits; otherwise a fixed order of its own, the same on every run.
 */
KG_HD void
kg_dev_t_seg_part(unsigned b, unsigned t, unsigned bdim, size_t n_seg,
    size_t d, size_t parts, struct kg_dev_seg sg, const float *x, int beta,
    const float *out, size_t ldo, float *tmp)
{
	size_t el = kg_dev_tid(b, t, bdim), i, p, k, c;
	int64_t q;
	float acc;

	if (el >= n_seg * parts * d)
		return;
	i = el / (parts * d);
	p = el / d % parts;
	k = el % d;
	acc = beta && p == 0 ? out[i * ldo + k] : 0.0f;
	for (q = sg.off[i] + (int64_t)p; q < sg.off[i + 1];
	    q += (int64_t)parts) {
		size_t e = sg.perm != NULL ? (size_t)sg.perm[q] : (size_t)q;
		size_t r = sg.idx != NULL ? (size_t)sg.idx[e] : e;

		for (c = 0; c < sg.nb; c++)
			acc += (sg.w != NULL ? sg.w[c * sg.ws + e] : 1.0f) *
			    x[c * sg.xs + r * d + k];
	}
	tmp[el] = acc;
}

KG_HD void
kg_dev_t_seg_join(unsigned b, unsigned t, unsigned bdim, size_t n_seg,
    size_t d, size_t parts, const float *tmp, float *out, size_t ldo)
{
	size_t el = kg_dev_tid(b, t, bdim), i, k, p;
	float acc;

	if (el >= n_seg * d)
		return;
	i = el / d;
	k = el % d;
	acc = tmp[i * parts * d + k];
	for (p = 1; p < parts; p++)
		acc += tmp[(i * parts + p) * d + k];
	out[i * ldo + k] = acc;
}

/* w[c * n + e] = norm[e] a[type[e] nb + c] for e < n, c < nb (R-GCN's
 * basis coefficient of message e, its normaliser folded in): one thread
 * per (c, e). */
KG_HD void
kg_dev_t_edge_coef(unsigned b, unsigned t, unsigned bdim, size_t n,
    size_t nb, const float *norm, const int64_t *type, const float *a,
    float *w)
{
	size_t el = kg_dev_tid(b, t, bdim), c, e;

	if (el >= n * nb)
		return;
	c = el / n;
	e = el % n;
	w[el] = norm[e] * a[(size_t)type[e] * nb + c];
}

/* The dot product of lib/gnn/kernels.h: eight partial sums, combined in
 * pairs, then the tail. */
KG_HD float
kg_dev_dot8(size_t n, const float *x, const float *y)
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

/* out[e] = a[ia[e]] . b[ib[e]] over rows of d floats (ia, ib NULL: e):
 * one thread per item. */
KG_HD void
kg_dev_t_edge_dot(unsigned b, unsigned t, unsigned bdim, size_t n, size_t d,
    const float *a, const int64_t *ia, const float *bb, const int64_t *ib,
    float *out)
{
	size_t e = kg_dev_tid(b, t, bdim), ra, rb;

	if (e >= n)
		return;
	ra = ia != NULL ? (size_t)ia[e] : e;
	rb = ib != NULL ? (size_t)ib[e] : e;
	out[e] = kg_dev_dot8(d, a + ra * d, bb + rb * d);
}

/* out[i] = row for n rows of d floats: one thread per element. */
KG_HD void
kg_dev_t_fill_rows(unsigned b, unsigned t, unsigned bdim, size_t n, size_t d,
    const float *row, float *out)
{
	size_t e = kg_dev_tid(b, t, bdim);

	if (e < n * d)
		out[e] = row[e % d];
}

/* y[e] = a[e] x[e] for n floats (y may be a or x). */
KG_HD void
kg_dev_t_mul(unsigned b, unsigned t, unsigned bdim, size_t n, const float *a,
    const float *x, float *y)
{
	size_t e = kg_dev_tid(b, t, bdim);

	if (e < n)
		y[e] = a[e] * x[e];
}

/* ReLU as lib/gnn's layers take it: y = x < 0 ? 0 : x (a NaN passes). */
KG_HD void
kg_dev_t_relu(unsigned b, unsigned t, unsigned bdim, size_t n, const float *x,
    float *y)
{
	size_t e = kg_dev_tid(b, t, bdim);

	if (e < n)
		y[e] = x[e] < 0.0f ? 0.0f : x[e];
}

/* Its backward: g[e] = 0 where pre[e] < 0. */
KG_HD void
kg_dev_t_relu_bwd(unsigned b, unsigned t, unsigned bdim, size_t n,
    const float *pre, float *g)
{
	size_t e = kg_dev_tid(b, t, bdim);

	if (e < n && pre[e] < 0.0f)
		g[e] = 0.0f;
}

/*
 * The relation-aware attention layer (lib/gnn/layers_attn.c) over one
 * graph: destination i's messages e in off[i] .. off[i + 1) come from
 * source src[e] with relation type[e]; dst[e] is e's destination; the
 * messages by source (soff, by_src, n_src + 1 offsets) and by type (toff,
 * by_type).  z = x W [n_src, d], rel [n_types, d], the attention vectors
 * as, ad, ar [d]; u and al per message: the score before the LeakyReLU
 * and the softmax weight; da per message and nsum per destination: the
 * backward's dL/du and their sums.  Every pointer is device memory.
 */
struct kg_dev_attn {
	const int64_t *off, *src, *type, *dst, *soff, *by_src, *toff, *by_type;
	size_t n_dst, n_src, n_types, d;
	const float *z, *rel, *as, *ad, *ar;
	float *u, *al, *da, *nsum;
};

#define KG_DEV_LEAKY_SLOPE 0.2f

/* Destination i's scores u, LeakyReLU, and softmax al (the largest
 * subtracted, the sum in double), as attn_node: one thread per
 * destination, its messages in order. */
KG_HD void
kg_dev_t_attn_scores(unsigned b, unsigned t, unsigned bdim,
    struct kg_dev_attn A)
{
	size_t i = kg_dev_tid(b, t, bdim), d = A.d;
	int64_t e;
	float zi, mx = -INFINITY;
	double sum = 0.0;

	if (i >= A.n_dst)
		return;
	zi = kg_dev_dot8(d, A.ad, A.z + i * d);
	for (e = A.off[i]; e < A.off[i + 1]; e++) {
		size_t j = (size_t)A.src[e], r = (size_t)A.type[e];
		float v = zi + kg_dev_dot8(d, A.as, A.z + j * d) +
		    kg_dev_dot8(d, A.ar, A.rel + r * d);
		float lv = v > 0.0f ? v : KG_DEV_LEAKY_SLOPE * v;

		A.u[e] = v;
		A.al[e] = lv;
		if (lv > mx)
			mx = lv;
	}
	for (e = A.off[i]; e < A.off[i + 1]; e++) {
		A.al[e] = expf(A.al[e] - mx);
		sum += A.al[e];
	}
	for (e = A.off[i]; e < A.off[i + 1]; e++)
		A.al[e] = (float)(A.al[e] / sum);
}

/* out[i][k] += al[e] z[src[e]][k], then al[e] rel[type[e]][k], for each
 * of i's messages in order: one thread per (i, k). */
KG_HD void
kg_dev_t_attn_msgs(unsigned b, unsigned t, unsigned bdim,
    struct kg_dev_attn A, float *out)
{
	size_t el = kg_dev_tid(b, t, bdim), d = A.d, i, k;
	int64_t e;
	float acc;

	if (el >= A.n_dst * d)
		return;
	i = el / d;
	k = el % d;
	acc = out[el];
	for (e = A.off[i]; e < A.off[i + 1]; e++) {
		acc += A.al[e] * A.z[(size_t)A.src[e] * d + k];
		acc += A.al[e] * A.rel[(size_t)A.type[e] * d + k];
	}
	out[el] = acc;
}

/* The backward's scores (attn_back_scores): da[e] = dL/du_e of i's
 * messages from G = dL/dout, nsum[i] their sum (both sums in double): one
 * thread per destination. */
KG_HD void
kg_dev_t_attn_back_scores(unsigned b, unsigned t, unsigned bdim,
    struct kg_dev_attn A, const float *G)
{
	size_t i = kg_dev_tid(b, t, bdim), d = A.d;
	const float *gi;
	double ssum = 0.0, dusum = 0.0;
	int64_t e;

	if (i >= A.n_dst)
		return;
	gi = G + i * d;
	for (e = A.off[i]; e < A.off[i + 1]; e++) {
		A.da[e] = kg_dev_dot8(d, gi, A.z + (size_t)A.src[e] * d) +
		    kg_dev_dot8(d, gi, A.rel + (size_t)A.type[e] * d);
		ssum += A.al[e] * A.da[e];
	}
	for (e = A.off[i]; e < A.off[i + 1]; e++) {
		float dl = A.al[e] * (A.da[e] - (float)ssum);

		A.da[e] = dl * (A.u[e] > 0.0f ? 1.0f : KG_DEV_LEAKY_SLOPE);
		dusum += A.da[e];
	}
	A.nsum[i] = (float)dusum;
}

/* dz[j][k] (overwritten): source j's messages in by_src order, al[e]
 * G[dst[e]][k] + da[e] as[k] each, and its own destination term nsum[j]
 * ad[k] where its turn comes (before the first message into a node past
 * j; none for j >= n_dst), as attn_back_dz: one thread per (j, k). */
KG_HD void
kg_dev_t_attn_back_dz(unsigned b, unsigned t, unsigned bdim,
    struct kg_dev_attn A, const float *G, float *dz)
{
	size_t el = kg_dev_tid(b, t, bdim), d = A.d, j, k;
	int64_t q;
	float acc = 0.0f;
	int self;

	if (el >= A.n_src * d)
		return;
	j = el / d;
	k = el % d;
	self = j >= A.n_dst;
	for (q = A.soff[j]; q < A.soff[j + 1]; q++) {
		size_t e = (size_t)A.by_src[q], i = (size_t)A.dst[e];

		if (!self && i > j) {
			acc += A.nsum[j] * A.ad[k];
			self = 1;
		}
		acc += A.al[e] * G[i * d + k] + A.da[e] * A.as[k];
	}
	if (!self)
		acc += A.nsum[j] * A.ad[k];
	dz[el] = acc;
}

/* grel[r][k] += al[e] G[dst[e]][k] + da[e] ar[k] over type r's messages
 * in by_type order (attn_back_rel): one thread per (r, k). */
KG_HD void
kg_dev_t_attn_back_rel(unsigned b, unsigned t, unsigned bdim,
    struct kg_dev_attn A, const float *G, float *grel)
{
	size_t el = kg_dev_tid(b, t, bdim), d = A.d, r, k;
	int64_t q;
	float acc;

	if (el >= A.n_types * d)
		return;
	r = el / d;
	k = el % d;
	acc = grel[el];
	for (q = A.toff[r]; q < A.toff[r + 1]; q++) {
		size_t e = (size_t)A.by_type[q];

		acc += A.al[e] * G[(size_t)A.dst[e] * d + k] +
		    A.da[e] * A.ar[k];
	}
	grel[el] = acc;
}

/*
 * Adam over one flat array of n floats that share one step count (the
 * dense parameters of GNN training, as rowops.h's kg_adam_row on one row
 * of n): state holds m[n], v[n], then the count.  One thread per
 * element, each taking the bias corrections of the count this step
 * reaches (the stored count + 1) and kg_dev_adam_elem's arithmetic;
 * kg_dev_t_adam_count advances the count afterwards, in a launch of its
 * own, so no thread reads it while another writes it.
 */
KG_HD void
kg_dev_t_adam_flat(unsigned b, unsigned t, unsigned bdim, size_t n,
    float lr, float b1, float b2, float eps, const float *grad, float *w,
    float *state)
{
	size_t e = kg_dev_tid(b, t, bdim);
	float s, c1, c2;

	if (e >= n)
		return;
	s = state[2 * n] + 1.0f;
	c1 = 1.0f - powf(b1, s);
	c2 = 1.0f - powf(b2, s);
	kg_dev_adam_elem(&w[e], &state[e], &state[n + e], grad[e], lr, b1, b2,
	    eps, c1, c2);
}

/* The step count of kg_dev_t_adam_flat's state: + 1 (thread 0 only). */
KG_HD void
kg_dev_t_adam_count(unsigned b, unsigned t, unsigned bdim, size_t n,
    float *state)
{
	if (kg_dev_tid(b, t, bdim) == 0)
		state[2 * n] += 1.0f;
}

/* ---- Thread functions: the partition buffer's negative pool
 * (lib/kge/train_device_buf.c, as lib/kge/sampler.c's kg_neg_pool). ---- */

/* out[idx[i]] += (the sum of src[i]'s squares) / d, for n rows of d
 * floats: what a pool slot's sq gains from one gradient
 * (kg_neg_pool_add_grad).  One thread per row; repeated indices add up
 * (atomically on the device). */
KG_HD void
kg_dev_t_scatter_sqnorm(unsigned b, unsigned t, unsigned bdim, size_t n,
    size_t d, const float *src, const int64_t *idx, float *out)
{
	size_t i = kg_dev_tid(b, t, bdim), l;
	const float *g;
	float ss = 0.0f;

	if (i >= n)
		return;
	g = src + i * d;
	for (l = 0; l < d; l++)
		ss += g[l] * g[l];
	kg_dev_atomic_add(&out[(size_t)idx[i]], ss / (float)d);
}

/*
 * Row-wise Adagrad of rows idx[0..n) whose state gains sq[i] instead of
 * the mean square of grad[i]: one step of a pool slot's summed gradient
 * with the state its single gradients would have given (lib/kge's
 * apply_slots); sq[i] 0 takes the plain step (kg_dev_t_adagrad).  One
 * thread per row; indices distinct within one call.
 */
KG_HD void
kg_dev_t_adagrad_sq(unsigned b, unsigned t, unsigned bdim, size_t n,
    size_t d, float lr, const int64_t *idx, const float *grad,
    const float *sq, float *table, float *state)
{
	size_t i = kg_dev_tid(b, t, bdim), l, r;
	const float *g;
	float *w, ss = 0.0f, step;

	if (i >= n)
		return;
	r = (size_t)idx[i];
	g = grad + i * d;
	w = table + r * d;
	if (sq[i] == 0.0f) {
		for (l = 0; l < d; l++)
			ss += g[l] * g[l];
		state[r] += ss / (float)d;
	} else
		state[r] += sq[i];
	step = kg_dev_adagrad_step(state[r], lr);
	for (l = 0; l < d; l++)
		w[l] -= step * g[l];
}

#endif
