/*
 * The float64 reference score of the shallow models for the unit tests
 * (t_model, t_grad, t_score), written straight from the formulas of
 * lib/kge/model.h and sharing no code with lib/.  The test of known values
 * in t_model guards against a misreading shared by both.
 */
#ifndef KG_KGE_REF_H
#define KG_KGE_REF_H

#include <math.h>
#include <stddef.h>

#include "kge/model.h"

static inline double
kge_ref_score(const struct kg_model *m, const double *h, const double *r,
    const double *t)
{
	size_t d = m->dim, k = m->rel_dim, hd = d / 2, i, j;
	double s = 0.0, x, y;

	switch (m->kind) {
	case KG_MODEL_TRANSE_L1:
		for (i = 0; i < d; i++)
			s += fabs(h[i] + r[i] - t[i]);
		return m->gamma - s;
	case KG_MODEL_TRANSE_L2:
		for (i = 0; i < d; i++)
			s += (h[i] + r[i] - t[i]) * (h[i] + r[i] - t[i]);
		return m->gamma - sqrt(s);
	case KG_MODEL_DISTMULT:
		for (i = 0; i < d; i++)
			s += h[i] * r[i] * t[i];
		return s;
	case KG_MODEL_COMPLEX:
		/* Re(h r conj(t)) */
		for (i = 0; i < hd; i++) {
			x = h[i] * r[i] - h[hd + i] * r[hd + i];
			y = h[i] * r[hd + i] + h[hd + i] * r[i];
			s += x * t[i] + y * t[hd + i];
		}
		return s;
	case KG_MODEL_ROTATE:
		for (i = 0; i < hd; i++) {
			x = h[i] * cos(r[i]) - h[hd + i] * sin(r[i]) - t[i];
			y = h[i] * sin(r[i]) + h[hd + i] * cos(r[i]) - t[hd + i];
			s += sqrt(x * x + y * y);
		}
		return m->gamma - s;
	case KG_MODEL_RESCAL:
		for (i = 0; i < d; i++)
			for (j = 0; j < d; j++)
				s += h[i] * r[i * d + j] * t[j];
		return s;
	case KG_MODEL_TRANSR:
		for (i = 0; i < k; i++) {
			x = r[i];
			for (j = 0; j < d; j++)
				x += r[k + i * d + j] * (h[j] - t[j]);
			s += x * x;
		}
		return m->gamma - sqrt(s);
	}
	return NAN;
}

/* The same for float rows (d and rel_width floats at most 4096). */
static inline double
kge_ref_score_f(const struct kg_model *m, const float *h, const float *r,
    const float *t)
{
	static double hd[4096], rd[4096 * 4], td[4096];
	size_t i;

	for (i = 0; i < m->dim; i++) {
		hd[i] = h[i];
		td[i] = t[i];
	}
	for (i = 0; i < m->rel_width; i++)
		rd[i] = r[i];
	return kge_ref_score(m, hd, rd, td);
}

/* The float rounding scale of a score: the sum of the magnitudes of its
 * terms (rows of norm n give about n^2 for the products and distances). */
static inline double
kge_ref_scale(const struct kg_model *m, const float *h, const float *r,
    const float *t)
{
	double s = 1.0 + fabs(m->gamma);
	size_t i;

	for (i = 0; i < m->dim; i++)
		s += h[i] * h[i] + t[i] * t[i];
	for (i = 0; i < m->rel_width; i++)
		s += r[i] * r[i];
	return s;
}

#endif
