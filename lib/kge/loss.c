#include "kge/loss.h"

/*
 * The loops over negatives below vectorise only when GCC may if-convert
 * float selects (no FP trap semantics; kgpipe never reads FP exception
 * flags) and may add a scalar epilogue (not so at -O2 by default).
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math", "vect-cost-model=dynamic")
#endif


#include <math.h>
#include <string.h>
#include <strings.h>

#include "core/util.h"

static const char *const loss_names[] = {
	[KG_LOSS_LOGISTIC] = "logistic",
	[KG_LOSS_MARGIN] = "margin",
	[KG_LOSS_SOFTMAX] = "softmax",
	[KG_LOSS_BCE] = "bce",
};

int
kg_loss_parse(const char *name, enum kg_loss_kind *kind)
{
	size_t i;

	for (i = 0; i < KG_ARRAY_LEN(loss_names); i++)
		if (strcasecmp(name, loss_names[i]) == 0) {
			*kind = (enum kg_loss_kind)i;
			return 0;
		}
	if (strcasecmp(name, "ranking") == 0) {
		*kind = KG_LOSS_MARGIN;
		return 0;
	}
	kg_error("unknown loss '%s' (expected logistic, margin, softmax or "
	    "bce)", name);
	return -1;
}

const char *
kg_loss_name(enum kg_loss_kind kind)
{
	return (size_t)kind < KG_ARRAY_LEN(loss_names) ? loss_names[kind] :
	    "unknown";
}

double
kg_softplus(double x)
{
	return x > 0.0 ? x + log1p(exp(-x)) : log1p(exp(x));
}

double
kg_sigmoid(double x)
{
	double e;

	if (x >= 0.0)
		return 1.0 / (1.0 + exp(-x));
	e = exp(x);
	return e / (1.0 + e);
}

/*
 * exp and log1p in float, written so that loops over negatives vectorise
 * (glibc's expf/logf are calls, one element at a time).  exp: x = n ln 2
 * + r with |r| <= ln 2 / 2, 2^n built in the exponent bits and e^r from
 * its Taylor polynomial to degree 7 (relative error below 2e-7).
 * log1p(e) for e in [0, 1]: 2 atanh(z) with z = e / (2 + e) <= 1/3, the
 * odd series to z^13 (relative error below 1e-7).
 */
static inline float
fexp(float x)
{
	union {
		float f;
		int32_t i;
	} u;
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
	u.i = (int32_t)((uint32_t)((int32_t)n + 127) << 23);
	return p * u.f;
}

static inline float
flog1p01(float e)
{
	float z = e / (2.0f + e), z2 = z * z;

	return 2.0f * z * (1.0f + z2 * (1.0f / 3 + z2 * (1.0f / 5 + z2 *
	    (1.0f / 7 + z2 * (1.0f / 9 + z2 * (1.0f / 11 + z2 * (1.0f /
	    13)))))));
}

/*
 * For every negative with weight w_j: add w_j softplus(neg_j) to the
 * returned sum and set g_j = scale * w_j * sigmoid(neg_j).  Shares one
 * exponential: with e = exp(-|x|), softplus = max(x, 0) + log1p(e) and
 * sigmoid = 1 / (1 + e) for x >= 0, e / (1 + e) below.  Blocks of LANES
 * with a fixed inner trip count vectorise at -O2.
 */
#define LANES 8

static inline float
sp_term(float x, float w, float scale, float *g)
{
	float e = fexp(-fabsf(x)), inv = 1.0f / (1.0f + e);

	*g = scale * w * (x >= 0.0f ? inv : e * inv);
	/* 0 * x keeps a NaN or infinite score visible in the loss. */
	return w * ((x > 0.0f ? x : 0.0f) + flog1p01(e)) + 0.0f * x;
}

KG_HOT_CLONES
static double
softplus_terms(const float *restrict neg, size_t n, float *restrict g,
    float scale)
{
	float acc[LANES] = { 0 };
	double sum = 0.0;
	size_t j = 0, k;

	for (; j + LANES <= n; j += LANES)
		for (k = 0; k < LANES; k++)
			acc[k] += sp_term(neg[j + k], g[j + k], scale, &g[j + k]);
	for (; j < n; j++)
		acc[0] += sp_term(neg[j], g[j], scale, &g[j]);
	for (k = 0; k < LANES; k++)
		sum += acc[k];
	return sum;
}

/* w_j *= exp(a * x_j - mx) for every j; returns the sum of the new w. */
KG_HOT_CLONES
static double
exp_weights(const float *restrict x, size_t n, float a, float mx,
    float *restrict w)
{
	float acc[LANES] = { 0 };
	double sum = 0.0;
	size_t j = 0, k;

	for (; j + LANES <= n; j += LANES)
		for (k = 0; k < LANES; k++) {
			w[j + k] *= fexp(a * x[j + k] - mx);
			acc[k] += w[j + k];
		}
	for (; j < n; j++) {
		w[j] *= fexp(a * x[j] - mx);
		acc[0] += w[j];
	}
	for (k = 0; k < LANES; k++)
		sum += acc[k];
	return sum;
}

/*
 * Negative weights summing to 1 over the kept negatives: uniform, or the
 * softmax of alpha * neg.  Written into w (the caller's gradient array,
 * overwritten later); returns the number of kept negatives.
 */
KG_HOT_CLONES
static size_t
neg_weights(const struct kg_loss *l, const float *neg, size_t n,
    const uint8_t *skip, float *w)
{
	float a = (float)l->adv_temp, mx = -INFINITY, inv;
	size_t j, kept = 0;

	for (j = 0; j < n; j++)
		w[j] = skip != NULL && skip[j] ? 0.0f : 1.0f;
#pragma omp simd reduction(+:kept)
	for (j = 0; j < n; j++)
		kept += w[j] != 0.0f;
	if (kept == 0)
		return 0;
	if (a <= 0.0f) {
		inv = 1.0f / (float)kept;
#pragma omp simd
		for (j = 0; j < n; j++)
			w[j] *= inv;
		return kept;
	}
#pragma omp simd reduction(max:mx)
	for (j = 0; j < n; j++)
		mx = w[j] != 0.0f && a * neg[j] > mx ? a * neg[j] : mx;
	inv = (float)(1.0 / exp_weights(neg, n, a, mx, w));
#pragma omp simd
	for (j = 0; j < n; j++)
		w[j] *= inv;
	return kept;
}

double
kg_loss_eval(const struct kg_loss *l, float pos, const float *neg, size_t n,
    const uint8_t *skip, float *gpos, float *gneg)
{
	double loss = 0.0, gp = 0.0, mx, sum;
	float finv;
	size_t j, kept;

	if (l->kind == KG_LOSS_SOFTMAX) {
		mx = pos;
		for (j = 0; j < n; j++)
			if ((skip == NULL || !skip[j]) && neg[j] > mx)
				mx = neg[j];
		for (j = 0; j < n; j++)
			gneg[j] = skip != NULL && skip[j] ? 0.0f : 1.0f;
		sum = exp(pos - mx) + exp_weights(neg, n, 1.0f, (float)mx, gneg);
		loss = -pos + mx + log(sum);
		*gpos = (float)(exp(pos - mx) / sum - 1.0);
		finv = (float)(1.0 / sum);
#pragma omp simd
		for (j = 0; j < n; j++)
			gneg[j] *= finv;
		return loss;
	}
	kept = neg_weights(l, neg, n, skip, gneg);
	switch (l->kind) {
	case KG_LOSS_LOGISTIC:
		loss = 0.5 * kg_softplus(-pos);
		gp = -0.5 * kg_sigmoid(-pos);
		loss += 0.5 * softplus_terms(neg, n, gneg, 0.5f);
		break;
	case KG_LOSS_MARGIN:
		for (j = 0; j < n; j++) {
			double w = gneg[j] * (double)kept, x;

			gneg[j] = 0.0f;
			if (w == 0.0)
				continue;
			x = l->margin - pos + neg[j];
			if (x > 0.0) {
				loss += w * x;
				gp -= w;
				gneg[j] = (float)w;
			}
		}
		break;
	case KG_LOSS_BCE:
		/* Weights n w_j: 1 each when uniform. */
		loss = kg_softplus(-pos) + (double)kept * softplus_terms(neg, n,
		    gneg, (float)kept / (float)(1 + kept));
		loss /= (double)(1 + kept);
		gp = -kg_sigmoid(-pos) / (double)(1 + kept);
		break;
	case KG_LOSS_SOFTMAX:
		break;
	}
	*gpos = (float)gp;
	return loss;
}

double
kg_loss_softmax_xent(const float *s, size_t n, size_t target, float scale,
    float *g)
{
	float mx = s[target], f;
	double sum;
	size_t j;

	for (j = 0; j < n; j++) {
		mx = s[j] > mx ? s[j] : mx;
		g[j] = 1.0f;
	}
	sum = exp_weights(s, n, 1.0f, mx, g);
	f = (float)(scale / sum);
#pragma omp simd
	for (j = 0; j < n; j++)
		g[j] *= f;
	g[target] -= scale;
	return (double)mx + log(sum) - (double)s[target];
}
