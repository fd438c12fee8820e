#include "kge/optim.h"

/* Let GCC vectorise the row loops at -O2: see lib/kge/loss.c. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math", "vect-cost-model=dynamic")
#endif


#include <math.h>
#include <strings.h>

#include "core/util.h"

int
kg_optim_parse(const char *name, enum kg_optim_kind *kind)
{
	if (strcasecmp(name, "adagrad") == 0)
		*kind = KG_OPTIM_ADAGRAD;
	else if (strcasecmp(name, "adam") == 0)
		*kind = KG_OPTIM_ADAM;
	else if (strcasecmp(name, "adagrad_elem") == 0)
		*kind = KG_OPTIM_ADAGRAD_ELEM;
	else {
		kg_error("unknown optimiser '%s' (expected adagrad, "
		    "adagrad_elem or adam)", name);
		return -1;
	}
	return 0;
}

const char *
kg_optim_name(enum kg_optim_kind kind)
{
	return kind == KG_OPTIM_ADAM ? "adam" : kind ==
	    KG_OPTIM_ADAGRAD_ELEM ? "adagrad_elem" : "adagrad";
}

size_t
kg_optim_state_width(enum kg_optim_kind kind, size_t n)
{
	return kind == KG_OPTIM_ADAM ? 2 * n + 1 : kind ==
	    KG_OPTIM_ADAGRAD_ELEM ? n : 1;
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
	step = lr / (sqrtf(*state) + KG_ADAGRAD_EPS);
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
	for (i = 0; i < n; i++) {
		state[i] += g[i] * g[i];
		w[i] -= lr * g[i] / (sqrtf(state[i]) + KG_ADAGRAD_EPS);
	}
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
	for (i = 0; i < n; i++) {
		m[i] = b1 * m[i] + (1.0f - b1) * g[i];
		v[i] = b2 * v[i] + (1.0f - b2) * g[i] * g[i];
		w[i] -= a->lr * (m[i] / c1) / (sqrtf(v[i] / c2) + a->eps);
	}
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

double
kg_regularise(const float *x, float *g, size_t n, double coef, unsigned p,
    double scale)
{
	double s = 0.0, c2 = scale * coef * 2.0, c3 = scale * coef * 3.0;
	size_t i;

	for (i = 0; i < n; i++) {
		double a = fabs(x[i]);

		if (p == 2) {
			s += a * a;
			g[i] += (float)(c2 * x[i]);
		} else {
			s += a * a * a;
			g[i] += (float)(c3 * a * x[i]);
		}
	}
	return coef * s;
}
