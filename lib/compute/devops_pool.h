/*
 * devops_pool: the negative pool of the partition buffer on the device
 * (lib/kge/train_device_pool.c, as lib/kge/sampler.c's kg_neg_pool): the
 * squared norms a pool slot gains from its gradients, and the row-wise
 * Adagrad step that takes them in place of the mean square of the summed
 * gradient (backend.h's kg_be_scatter_sqnorm and kg_be_adagrad_sq), under
 * devops_base.h's conventions.
 */
#ifndef KG_DEVOPS_POOL_H
#define KG_DEVOPS_POOL_H

#include "compute/devops_base.h"
#include "compute/devops_optim.h"

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
