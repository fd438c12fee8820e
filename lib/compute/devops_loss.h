/*
 * devops_loss: the losses of a positive against its negatives on the
 * device (rowops.h's kg_loss_eval, the same arithmetic): the float
 * exponential and log1p that vectorise, the softplus and sigmoid terms
 * the CPU's rowops.c shares, and the thread functions of one row
 * (backend.h's kg_be_loss and kg_be_loss_sum), under devops_base.h's
 * conventions.
 */
#ifndef KG_DEVOPS_LOSS_H
#define KG_DEVOPS_LOSS_H

#include "compute/devops_base.h"
#include "compute/kinds.h"

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
	if (kind == KG_LOSS_SOFTMAX) {
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
	case KG_LOSS_LOGISTIC:
	case KG_LOSS_BCE:
		scale = kind == KG_LOSS_LOGISTIC ? 0.5f :
		    (float)kept / (float)(1 + kept);
		for (j = 0; j < n; j++)
			acc[j < n - n % KG_DEV_LANES ? j % KG_DEV_LANES : 0] +=
			    kg_dev_sp_term(x[j], w[j], scale, &w[j]);
		for (k = 0; k < KG_DEV_LANES; k++)
			sum += acc[k];
		if (kind == KG_LOSS_LOGISTIC) {
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

/*
 * kg_dev_t_loss of row i, then its gradients gpos[i] and gneg[i * n ..]
 * multiplied by scale (float products, as kg_be_scale's), returning
 * loss[i], the value the thread adds to the sum (a kernel sums them per
 * block, devops_base.h's kg_dev_bsum_*); 0 past rows.  backend.h's
 * kg_be_loss_sum: one launch for the loss, its sum and the scaling.
 */
KG_HD double
kg_dev_v_loss_sum(unsigned b, unsigned t, unsigned bdim, int kind,
    double margin, float adv, size_t rows, size_t n, const float *pos,
    const float *neg, const uint8_t *skip, float scale, float *gpos,
    float *gneg, double *loss)
{
	size_t i = kg_dev_tid(b, t, bdim), j;
	float *w;

	if (i >= rows)
		return 0.0;
	kg_dev_t_loss(b, t, bdim, kind, margin, adv, rows, n, pos, neg, skip,
	    gpos, gneg, loss);
	w = gneg + i * n;
	gpos[i] *= scale;
	for (j = 0; j < n; j++)
		w[j] *= scale;
	return loss[i];
}

/*
 * A warp per row: the loss of kg_dev_t_loss with row i's n negatives
 * split over the KG_DEV_WARP lanes of one warp (lane l takes j = l, l +
 * 32, ...), for rows few and long, where a thread a row would leave the
 * GPU idle and read its rows uncoalesced.  The warp runs
 * KG_DEV_WL_PHASES phases; after phase k its lanes' partials r[0..1][l]
 * are reduced over the lanes (kg_dev_wl_step: a sum, or a maximum where
 * kg_dev_wl_max says) and lane 0 keeps the result in v[k]
 * (kg_dev_wl_keep), with a warp barrier after each phase, step and keep;
 * then kg_dev_wl_out writes gpos[i] and loss[i] and scales the row's
 * gradients.  Every lane writes only its own elements and its own
 * partial slots, so the phases run over a warp's lanes in any order give
 * the GPU's bits (tests/unit/t_devops_sum.c).  The maxima and counts are
 * exact, the sums per lane then over the lanes: within rounding of the
 * CPU's kg_loss_eval.
 */
#define KG_DEV_WL_PHASES 4

/* What a warp-per-row loss launch computes (kg_be_loss_sum's
 * arguments). */
struct kg_dev_wloss {
	int kind;
	double margin;
	float adv;
	size_t rows, n;
	const float *pos, *neg;
	const uint8_t *skip;
	float *gpos, *gneg;
	double *loss;
};

/* A warp's shared memory: the lanes' partials and the kept results. */
struct kg_dev_wl_smem {
	double r[2][KG_DEV_WARP];
	double v[KG_DEV_WL_PHASES][2];
};

/* Whether phase ph's partials reduce by maximum (else by sum). */
KG_HD int
kg_dev_wl_max(int kind, unsigned ph)
{
	return (ph == 0 && kind == KG_LOSS_SOFTMAX) ||
	    (ph == 1 && kind != KG_LOSS_SOFTMAX);
}

/* Whether a non-softmax row takes self-adversarial weights. */
KG_HD int
kg_dev_wl_adv(const struct kg_dev_wloss *a, double kept)
{
	return kept > 0.0 && a->adv > 0.0f;
}

/* Phase ph of lane l of row i's warp (i past the rows: partials of 0). */
KG_HD void
kg_dev_wl_phase(unsigned ph, unsigned l, size_t i, struct kg_dev_wloss a,
    struct kg_dev_wl_smem *sm)
{
	const float *x = a.neg + i * a.n;
	const uint8_t *sk = a.skip != NULL ? a.skip + i * a.n : NULL;
	float *w = a.gneg + i * a.n, f = 0.0f, inv, mx, sc;
	double r0 = 0.0, r1 = 0.0, wj, d, p;
	size_t j;

	sm->r[0][l] = sm->r[1][l] = 0.0;
	if (i >= a.rows)
		return;
	p = a.pos[i];
	if (a.kind == KG_LOSS_SOFTMAX) {
		if (ph == 0) {
			r0 = p;
			for (j = l; j < a.n; j += KG_DEV_WARP) {
				w[j] = sk != NULL && sk[j] ? 0.0f : 1.0f;
				if ((sk == NULL || !sk[j]) && x[j] > r0)
					r0 = x[j];
			}
		} else if (ph == 1) {
			for (j = l; j < a.n; j += KG_DEV_WARP) {
				w[j] *= kg_dev_fexp(1.0f * x[j] -
				    (float)sm->v[0][0]);
				f += w[j];
			}
			r0 = f;
		} else if (ph == 2) {
			inv = (float)(1.0 / (exp(p - sm->v[0][0]) +
			    sm->v[1][0]));
			for (j = l; j < a.n; j += KG_DEV_WARP)
				w[j] *= inv;
		}
		sm->r[0][l] = r0;
		return;
	}
	d = ph > 0 ? sm->v[0][0] : 0.0;	/* kept */
	if (ph == 0) {
		for (j = l; j < a.n; j += KG_DEV_WARP) {
			w[j] = sk != NULL && sk[j] ? 0.0f : 1.0f;
			r0 += w[j] != 0.0f;
		}
	} else if (ph == 1 && d > 0.0 && !kg_dev_wl_adv(&a, d)) {
		inv = 1.0f / (float)d;
		for (j = l; j < a.n; j += KG_DEV_WARP)
			w[j] *= inv;
	} else if (ph == 1 && kg_dev_wl_adv(&a, d)) {
		mx = -INFINITY;
		for (j = l; j < a.n; j += KG_DEV_WARP)
			mx = w[j] != 0.0f && a.adv * x[j] > mx ? a.adv * x[j] :
			    mx;
		r0 = mx;
	} else if (ph == 2 && kg_dev_wl_adv(&a, d)) {
		mx = (float)sm->v[1][0];
		for (j = l; j < a.n; j += KG_DEV_WARP) {
			w[j] *= kg_dev_fexp(a.adv * x[j] - mx);
			f += w[j];
		}
		r0 = f;
	} else if (ph == 3) {
		if (kg_dev_wl_adv(&a, d)) {
			inv = (float)(1.0 / sm->v[2][0]);
			for (j = l; j < a.n; j += KG_DEV_WARP)
				w[j] *= inv;
		}
		if (a.kind == KG_LOSS_LOGISTIC || a.kind == KG_LOSS_BCE) {
			sc = a.kind == KG_LOSS_LOGISTIC ? 0.5f :
			    (float)d / (float)(1.0 + d);
			for (j = l; j < a.n; j += KG_DEV_WARP)
				f += kg_dev_sp_term(x[j], w[j], sc, &w[j]);
			r0 = f;
		} else {
			for (j = l; j < a.n; j += KG_DEV_WARP) {
				wj = w[j] * d;
				w[j] = 0.0f;
				if (wj == 0.0 || !(a.margin - p + x[j] > 0.0))
					continue;
				r0 += wj * (a.margin - p + x[j]);
				r1 -= wj;
				w[j] = (float)wj;
			}
		}
	}
	sm->r[0][l] = r0;
	sm->r[1][l] = r1;
}

/* A reduction step over the lanes: lane l < s folds in lane l + s. */
KG_HD void
kg_dev_wl_step(int kind, unsigned ph, unsigned l, unsigned s,
    struct kg_dev_wl_smem *sm)
{
	unsigned k;

	if (l >= s)
		return;
	for (k = 0; k < 2; k++) {
		double a = sm->r[k][l], b = sm->r[k][l + s];

		sm->r[k][l] = kg_dev_wl_max(kind, ph) ? (b > a ? b : a) : a + b;
	}
}

/* Lane 0 keeps phase ph's results. */
KG_HD void
kg_dev_wl_keep(unsigned ph, unsigned l, struct kg_dev_wl_smem *sm)
{
	if (l == 0) {
		sm->v[ph][0] = sm->r[0][0];
		sm->v[ph][1] = sm->r[1][0];
	}
}

/*
 * After the phases: lane 0 writes gpos[i] and loss[i]; every lane
 * multiplies its gradients by scale (1: none).  Returns what the thread
 * adds to the block's sum of the losses: loss[i] from lane 0, else 0.
 */
KG_HD double
kg_dev_wl_out(unsigned l, size_t i, struct kg_dev_wloss a, float scale,
    const struct kg_dev_wl_smem *sm)
{
	double p, kept = sm->v[0][0], out, gp, sum;
	float *w = a.gneg + i * a.n;
	size_t j;

	if (i >= a.rows)
		return 0.0;
	for (j = l; scale != 1.0f && j < a.n; j += KG_DEV_WARP)
		w[j] *= scale;
	if (l != 0)
		return 0.0;
	p = a.pos[i];
	if (a.kind == KG_LOSS_SOFTMAX) {
		sum = exp(p - sm->v[0][0]) + sm->v[1][0];
		out = -p + sm->v[0][0] + log(sum);
		gp = exp(p - sm->v[0][0]) / sum - 1.0;
	} else if (a.kind == KG_LOSS_LOGISTIC) {
		out = 0.5 * kg_dev_softplus(-p) + 0.5 * sm->v[3][0];
		gp = -0.5 * kg_dev_sigmoid(-p);
	} else if (a.kind == KG_LOSS_BCE) {
		out = (kg_dev_softplus(-p) + kept * sm->v[3][0]) / (1.0 + kept);
		gp = -kg_dev_sigmoid(-p) / (1.0 + kept);
	} else {
		out = sm->v[3][0];
		gp = sm->v[3][1];
	}
	a.gpos[i] = (float)gp * scale;
	a.loss[i] = out;
	return out;
}

#endif
