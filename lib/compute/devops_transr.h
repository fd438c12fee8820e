/*
 * devops_transr: TransR's projection y = M x (+- r) on the device.  Its
 * relation row is [r (k floats) | M (k x d, row-major)], k + k d floats
 * (lib/kge/model.h); one function serves its query and its candidates:
 * y = M x + sign r, sign +1 (the tail query M h + r), -1 (the head query
 * M t - r) or 0 (a candidate's projection M c, r unused).  Element a
 * (< k) of y is the row product in kg_kern_matvec's order, then r added
 * as lib/kge/score.c adds it, so the CPU backend, which calls these
 * element functions, gives score.c's bits.  Thread functions for
 * backend.h's kg_be_transr and kg_be_transr_backward; under
 * devops_base.h's conventions.
 */
#ifndef KG_DEVOPS_TRANSR_H
#define KG_DEVOPS_TRANSR_H

#include "compute/devops_base.h"

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

#endif
