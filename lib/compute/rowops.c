/*
 * The CPU's per-row arithmetic of training (rowops.h); the per-element
 * expressions are devops_loss.h's and devops_optim.h's, which the CUDA
 * backend shares.
 */
#include "compute/rowops.h"

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

#include "compute/devops_loss.h"
#include "compute/devops_optim.h"
#include "core/util.h"

double
kg_softplus(double x)
{
	return kg_dev_softplus(x);
}

double
kg_sigmoid(double x)
{
	return kg_dev_sigmoid(x);
}

/*
 * For every negative with weight w_j: add w_j softplus(neg_j) to the
 * returned sum and set g_j = scale * w_j * sigmoid(neg_j) (devops_loss.h's
 * kg_dev_sp_term).  Blocks of LANES with a fixed inner trip count
 * vectorise at -O2.
 */
#define LANES 8

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
			acc[k] += kg_dev_sp_term(neg[j + k], g[j + k], scale,
			    &g[j + k]);
	for (; j < n; j++)
		acc[0] += kg_dev_sp_term(neg[j], g[j], scale, &g[j]);
	for (k = 0; k < LANES; k++)
		sum += acc[k];
	return sum;
}

/*
 * softplus_terms with one weight w for every negative and the gradient
 * also times post: g_j = ((scale * w) * sigmoid(neg_j)) * post, each
 * product rounded in that order, so the bits are those of
 * softplus_terms over g_j = w followed by g_j *= post.  Reads nothing
 * from g.
 */
KG_HOT_CLONES
static double
softplus_terms_uniform(const float *restrict neg, size_t n, float w,
    float scale, float post, float *restrict g)
{
	float acc[LANES] = { 0 }, t;
	double sum = 0.0;
	size_t j = 0, k;

	for (; j + LANES <= n; j += LANES)
		for (k = 0; k < LANES; k++) {
			acc[k] += kg_dev_sp_term(neg[j + k], w, scale, &t);
			g[j + k] = t * post;
		}
	for (; j < n; j++) {
		acc[0] += kg_dev_sp_term(neg[j], w, scale, &t);
		g[j] = t * post;
	}
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
			w[j + k] *= kg_dev_fexp(a * x[j + k] - mx);
			acc[k] += w[j + k];
		}
	for (; j < n; j++) {
		w[j] *= kg_dev_fexp(a * x[j] - mx);
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

/*
 * The softmax's shift: the largest of pos and the kept negatives (those
 * with no skip mark), NaN ones passed over (a NaN pos is returned as it
 * is), and w_j = 1 for a kept negative, 0 for a skipped one.  The maximum
 * runs in LANES independent lanes, so it vectorises: the value is the
 * one a single running maximum finds (only the sign of a zero maximum
 * could differ, which no use of it sees).
 */
KG_HOT_CLONES
static float
softmax_shift(float pos, const float *restrict neg, size_t n,
    const uint8_t *restrict skip, float *restrict w)
{
	float acc[LANES], mx;
	size_t j = 0, k;

	for (k = 0; k < LANES; k++)
		acc[k] = pos;
	if (skip == NULL) {
		for (; j + LANES <= n; j += LANES)
			for (k = 0; k < LANES; k++) {
				acc[k] = neg[j + k] > acc[k] ? neg[j + k] :
				    acc[k];
				w[j + k] = 1.0f;
			}
		for (; j < n; j++) {
			acc[0] = neg[j] > acc[0] ? neg[j] : acc[0];
			w[j] = 1.0f;
		}
	} else {
#pragma omp simd
		for (j = 0; j < n; j++)
			w[j] = skip[j] == 0 ? 1.0f : 0.0f;
		/* A skipped one counts as -inf, never above acc. */
		for (j = 0; j + LANES <= n; j += LANES)
			for (k = 0; k < LANES; k++) {
				float v = w[j + k] != 0.0f ? neg[j + k] :
				    -INFINITY;

				acc[k] = v > acc[k] ? v : acc[k];
			}
		for (; j < n; j++) {
			float v = w[j] != 0.0f ? neg[j] : -INFINITY;

			acc[0] = v > acc[0] ? v : acc[0];
		}
	}
	mx = acc[0];
	for (k = 1; k < LANES; k++)
		mx = acc[k] > mx ? acc[k] : mx;
	return mx;
}

/* gneg[0..n) *= post, unless post is 1 (which would change no bit). */
static void
post_scale(float *gneg, size_t n, float post)
{
	size_t j;

	if (post == 1.0f)
		return;
#pragma omp simd
	for (j = 0; j < n; j++)
		gneg[j] *= post;
}

/* The logistic and BCE losses with uniform weights over n > 0 negatives,
 * none skipped: neg_weights' w_j = 1 / n without the array. */
static double
loss_uniform(const struct kg_loss *l, float pos, const float *neg, size_t n,
    float post, float *gpos, float *gneg)
{
	float w = 1.0f / (float)n;
	double loss;

	if (l->kind == KG_LOSS_LOGISTIC) {
		loss = 0.5 * kg_softplus(-pos);
		*gpos = (float)(-0.5 * kg_sigmoid(-pos));
		return loss + 0.5 * softplus_terms_uniform(neg, n, w, 0.5f,
		    post, gneg);
	}
	loss = kg_softplus(-pos) + (double)n * softplus_terms_uniform(neg, n,
	    w, (float)n / (float)(1 + n), post, gneg);
	*gpos = (float)(-kg_sigmoid(-pos) / (double)(1 + n));
	return loss / (double)(1 + n);
}

double
kg_loss_eval_scaled(const struct kg_loss *l, float pos, const float *neg,
    size_t n, const uint8_t *skip, float post, float *gpos, float *gneg)
{
	double loss = 0.0, gp = 0.0, mx, sum;
	float finv;
	size_t j, kept;

	if ((l->kind == KG_LOSS_LOGISTIC || l->kind == KG_LOSS_BCE) &&
	    skip == NULL && l->adv_temp <= 0.0 && n > 0)
		return loss_uniform(l, pos, neg, n, post, gpos, gneg);
	if (l->kind == KG_LOSS_SOFTMAX) {
		mx = softmax_shift(pos, neg, n, skip, gneg);
		sum = exp(pos - mx) + exp_weights(neg, n, 1.0f, (float)mx, gneg);
		loss = -pos + mx + log(sum);
		*gpos = (float)(exp(pos - mx) / sum - 1.0);
		finv = (float)(1.0 / sum);
#pragma omp simd
		for (j = 0; j < n; j++)
			gneg[j] *= finv;
		post_scale(gneg, n, post);
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
	post_scale(gneg, n, post);
	*gpos = (float)gp;
	return loss;
}

double
kg_loss_eval(const struct kg_loss *l, float pos, const float *neg, size_t n,
    const uint8_t *skip, float *gpos, float *gneg)
{
	return kg_loss_eval_scaled(l, pos, neg, n, skip, 1.0f, gpos, gneg);
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

KG_HOT_CLONES
void
kg_adagrad_row(float *restrict w, float *restrict state,
    const float *restrict g, size_t n, float lr)
{
	float ss = 0.0f, step;
	size_t i;

#pragma omp simd reduction(+:ss)
	for (i = 0; i < n; i++)
		ss += g[i] * g[i];
	*state += ss / (float)n;
	step = kg_dev_adagrad_step(*state, lr);
#pragma omp simd
	for (i = 0; i < n; i++)
		w[i] -= step * g[i];
}

KG_HOT_CLONES
void
kg_adagrad_elem_row(float *restrict w, float *restrict state,
    const float *restrict g, size_t n, float lr)
{
	size_t i;

#pragma omp simd
	for (i = 0; i < n; i++)
		kg_dev_adagrad_elem(&w[i], &state[i], g[i], lr);
}

void
kg_adam_row(float *restrict w, float *restrict state,
    const float *restrict g, size_t n, const struct kg_adam *a)
{
	float *m = state, *v = state + n, *t = state + 2 * n;
	float b1 = a->beta1, b2 = a->beta2, c1, c2;
	size_t i;

	*t += 1.0f;
	c1 = 1.0f - powf(b1, *t);
	c2 = 1.0f - powf(b2, *t);
	for (i = 0; i < n; i++)
		kg_dev_adam_elem(&w[i], &m[i], &v[i], g[i], a->lr, b1, b2,
		    a->eps, c1, c2);
}

void
kg_clip_row(float *g, size_t n, float max_norm)
{
	float ss = 0.0f, s;
	size_t i;

	for (i = 0; i < n; i++)
		ss += g[i] * g[i];
	if (ss <= max_norm * max_norm)
		return;
	s = max_norm / sqrtf(ss);
	for (i = 0; i < n; i++)
		g[i] *= s;
}

/*
 * The value sums in REG_LANES double lanes: lane l adds the terms
 * i = REG_LANES m + l of the first REG_LANES floor(n / REG_LANES), lane 0
 * then the rest in order, and the lanes are added in order.  One running
 * sum was a chain of dependent adds, 15% of a step at DGL-KE's TransE
 * setting (bench/results/roofline.json); the fixed lanes vectorise (two
 * AVX2 registers in the x86-64-v3 clone; an x86-64-v4 clone came out the
 * same, GCC's tuning keeping to 256 bits) and give the same bits on every
 * CPU.
 * The gradient is the same expression per element as before.
 */
#define REG_LANES 8

KG_HOT_CLONES
double
kg_regularise(const float *restrict x, float *restrict g, size_t n,
    double coef, unsigned p, double scale)
{
	double L[REG_LANES] = { 0 }, s = 0.0, c2 = scale * coef * 2.0,
	    c3 = scale * coef * 3.0;
	size_t i = 0, l;

	if (p == 2) {
		for (; i + REG_LANES <= n; i += REG_LANES)
			for (l = 0; l < REG_LANES; l++) {
				double v = x[i + l];

				L[l] += v * v;
				g[i + l] += (float)(c2 * v);
			}
		for (; i < n; i++) {
			double v = x[i];

			L[0] += v * v;
			g[i] += (float)(c2 * v);
		}
	} else {
		for (; i + REG_LANES <= n; i += REG_LANES)
			for (l = 0; l < REG_LANES; l++) {
				double v = x[i + l], a = fabs(v);

				L[l] += a * a * a;
				g[i + l] += (float)(c3 * a * v);
			}
		for (; i < n; i++) {
			double v = x[i], a = fabs(v);

			L[0] += a * a * a;
			g[i] += (float)(c3 * a * v);
		}
	}
	for (l = 0; l < REG_LANES; l++)
		s += L[l];
	return coef * s;
}
