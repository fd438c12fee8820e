/*
 * devops_optim: the optimisers on the device, as rowops.h's row updates:
 * the element steps of Adagrad and Adam the CPU's rowops.c shares, the
 * thread functions of row-wise and element-wise Adagrad, of sparse Adam
 * and of Adam over one flat array (the GNN's dense parameters), and the
 * L2 and N3 regularisers (backend.h's kg_be_adagrad ... kg_be_regularise,
 * kg_be_adam_flat), under devops_base.h's conventions.
 */
#ifndef KG_DEVOPS_OPTIM_H
#define KG_DEVOPS_OPTIM_H

#include "compute/devops_base.h"
#include "compute/devops_types.h"
#include "compute/kinds.h"

/* Element-wise Adagrad: s += g^2; w -= lr g / (sqrt(s) + eps). */
KG_HD void
kg_dev_adagrad_elem(float *w, float *s, float g, float lr)
{
	*s += g * g;
	*w -= lr * g / (sqrtf(*s) + KG_ADAGRAD_EPS);
}

/* Row-wise Adagrad's step size once the state has its new value. */
KG_HD float
kg_dev_adagrad_step(float state, float lr)
{
	return lr / (sqrtf(state) + KG_ADAGRAD_EPS);
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

/*
 * Row-wise Adagrad with a warp a row (for rows of d >= KG_DEV_WARP,
 * where a thread a row reads its row uncoalesced): lane l of row i's
 * warp takes elements l, l + 32, ...  Phases, a warp barrier after
 * each: kg_dev_wa_sq (each lane's sum of squares), the reduction steps
 * kg_dev_wa_step (s = 16, 8, ..., 1: lane l < s adds lane l + s),
 * kg_dev_wa_state (lane 0 adds the mean square to the row's state and
 * keeps the step size), kg_dev_wa_update (every lane steps its
 * elements).  Each lane writes only its own slot and elements, so the
 * phases run over the lanes in any order give the GPU's bits; the sum
 * of squares is per lane then a tree, within rounding of
 * kg_dev_t_adagrad's.
 */
struct kg_dev_wa_smem {
	float r[KG_DEV_WARP];
	float step;
};

KG_HD void
kg_dev_wa_sq(unsigned l, size_t i, size_t n, size_t d, const float *grad,
    struct kg_dev_wa_smem *sm)
{
	const float *g = grad + i * d;
	float s = 0.0f;
	size_t j;

	for (j = l; i < n && j < d; j += KG_DEV_WARP)
		s += g[j] * g[j];
	sm->r[l] = s;
}

KG_HD void
kg_dev_wa_step(unsigned l, unsigned s, struct kg_dev_wa_smem *sm)
{
	if (l < s)
		sm->r[l] += sm->r[l + s];
}

KG_HD void
kg_dev_wa_state(unsigned l, size_t i, size_t n, size_t d, float lr,
    const int64_t *idx, float *state, struct kg_dev_wa_smem *sm)
{
	size_t r;

	if (l != 0 || i >= n)
		return;
	r = (size_t)idx[i];
	state[r] += sm->r[0] / (float)d;
	sm->step = kg_dev_adagrad_step(state[r], lr);
}

KG_HD void
kg_dev_wa_update(unsigned l, size_t i, size_t n, size_t d,
    const int64_t *idx, const float *grad, float *table,
    const struct kg_dev_wa_smem *sm)
{
	const float *g = grad + i * d;
	float *w;
	size_t j;

	if (i >= n)
		return;
	w = table + (size_t)idx[i] * d;
	for (j = l; j < d; j += KG_DEV_WARP)
		w[j] -= sm->step * g[j];
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
 * The regulariser coef * sum |x|^p (p = 2: L2, p = 3: N3) of element e
 * of n floats x: g[e] += scale * its gradient; returns coef |x_e|^p, the
 * value the thread adds to the sum (a kernel sums them per block,
 * devops_base.h's kg_dev_bsum_*), 0 past n.  One thread per element.
 */
KG_HD double
kg_dev_reg_elem(size_t e, const float *x, float *g, double coef,
    unsigned p, double scale)
{
	double a = fabs((double)x[e]);

	if (p == 2) {
		g[e] += (float)(scale * coef * 2.0 * x[e]);
		return coef * a * a;
	}
	g[e] += (float)(scale * coef * 3.0 * a * x[e]);
	return coef * a * a * a;
}

KG_HD double
kg_dev_v_regularise(unsigned b, unsigned t, unsigned bdim, size_t n,
    const float *x, float *g, double coef, unsigned p, double scale)
{
	size_t e = kg_dev_tid(b, t, bdim);

	return e < n ? kg_dev_reg_elem(e, x, g, coef, p, scale) : 0.0;
}

/* The same over the sets of rs (devops_types.h), their elements one
 * after another: one launch for them all. */
KG_HD double
kg_dev_v_regularise_sets(unsigned b, unsigned t, unsigned bdim,
    struct kg_dev_regsets rs, double coef, unsigned p, double scale)
{
	size_t e = kg_dev_tid(b, t, bdim);
	unsigned k;

	for (k = 0; k < rs.nsets; k++) {
		if (e < rs.n[k])
			return kg_dev_reg_elem(e, rs.x[k], rs.g[k], coef, p,
			    scale);
		e -= rs.n[k];
	}
	return 0.0;
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

#endif
