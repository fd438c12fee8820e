/*
 * Optimisers against hand-computed updates, gradient clipping, and the
 * L2/N3 regularisers against central differences.
 */
#include "kge/optim.h"
#include "core/util.h"
#include "test.h"

static void
t_adagrad(void)
{
	float w[2] = { 1.0f, -1.0f }, g[2] = { 0.3f, 0.4f }, st = 0.0f;
	double s;

	kg_adagrad_row(w, &st, g, 2, 0.1f);
	s = (0.09 + 0.16) / 2;
	T_NEAR(st, s, 1e-7);
	T_NEAR(w[0], 1.0 - 0.1 * 0.3 / sqrt(s), 1e-6);
	T_NEAR(w[1], -1.0 - 0.1 * 0.4 / sqrt(s), 1e-6);
	kg_adagrad_row(w, &st, g, 2, 0.1f);
	T_NEAR(st, 2 * s, 1e-7);
	T_NEAR(w[0], 1.0 - 0.1 * 0.3 / sqrt(s) - 0.1 * 0.3 / sqrt(2 * s),
	    1e-6);
}

/* Element-wise Adagrad: one accumulator per element (PyTorch's Adagrad
 * with eps 1e-10, lr decay 0). */
static void
t_adagrad_elem(void)
{
	float w[3] = { 1.0f, -1.0f, 0.5f }, g[3] = { 0.3f, -0.4f, 0.0f };
	float st[3] = { 0 };

	kg_adagrad_elem_row(w, st, g, 3, 0.1f);
	T_NEAR(st[0], 0.09, 1e-7);
	T_NEAR(st[1], 0.16, 1e-7);
	T_CHECK(st[2] == 0.0f && w[2] == 0.5f);
	/* The first step moves every element with a gradient by lr. */
	T_NEAR(w[0], 1.0 - 0.1, 1e-6);
	T_NEAR(w[1], -1.0 + 0.1, 1e-6);
	kg_adagrad_elem_row(w, st, g, 3, 0.1f);
	T_NEAR(st[1], 0.32, 1e-7);
	T_NEAR(w[1], -0.9 + 0.1 * 0.4 / sqrt(0.32), 1e-6);
}

static void
t_adam(void)
{
	struct kg_adam a = KG_ADAM_INIT;
	float w[1] = { 0.5f }, st[3] = { 0 }, g[1] = { 2.0f };
	double m, v;

	a.lr = 0.01f;
	kg_adam_row(w, st, g, 1, &a);
	/* The first bias-corrected step is lr * sign(g). */
	T_NEAR(w[0], 0.5 - 0.01, 1e-6);
	T_CHECK(st[2] == 1.0f);
	g[0] = -1.0f;
	kg_adam_row(w, st, g, 1, &a);
	m = 0.9 * 0.2 + 0.1 * -1.0;
	v = 0.999 * 0.004 + 0.001 * 1.0;
	T_NEAR(st[0], m, 1e-6);
	T_NEAR(st[1], v, 1e-7);
	T_NEAR(w[0], 0.49 - 0.01 * (m / (1 - 0.81)) /
	    (sqrt(v / (1 - 0.999 * 0.999)) + 1e-8), 1e-6);
}

static void
t_clip(void)
{
	float g[2] = { 3.0f, 4.0f }, h[2] = { 0.3f, 0.4f };

	kg_clip_row(g, 2, 1.0f);
	T_NEAR(g[0], 0.6, 1e-6);
	T_NEAR(g[1], 0.8, 1e-6);
	kg_clip_row(h, 2, 1.0f);
	T_CHECK(h[0] == 0.3f && h[1] == 0.4f);
}

/* A row long enough for the lanes and a remainder: the value in the
 * documented order (8 double lanes, the rest in lane 0, lanes in order),
 * bit for bit, and near a long double sum; the gradient element by
 * element. */
static void
t_regulariser_lanes(void)
{
	enum { N = 403 };
	float x[N], g[N], g0[N];
	double L[8], s, c = 0.7, scale = 0.25;
	long double ref;
	unsigned p;
	size_t i, l;
	int same;

	for (i = 0; i < N; i++) {
		/* Lane 1 of the blocks large, the rest small: a term
		 * summed in the wrong lane shows in the bits. */
		x[i] = (float)(((double)((i * 7919) % 1000) / 250.0 - 2.0) *
		    (i % 8 == 1 && i < N / 8 * 8 ? 1e3 : 0.37));
		g0[i] = (float)((double)((i * 104729) % 100) / 100.0);
	}
	for (p = 2; p <= 3; p++) {
		memcpy(g, g0, sizeof(g));
		memset(L, 0, sizeof(L));
		ref = 0.0L;
		for (i = 0; i < N; i++) {
			double a = fabs((double)x[i]);
			double t = p == 2 ? a * a : a * a * a;

			L[i < N / 8 * 8 ? i % 8 : 0] += t;
			ref += (long double)t;
		}
		for (s = 0.0, l = 0; l < 8; l++)
			s += L[l];
		T_CHECK(kg_regularise(x, g, N, c, p, scale) == c * s);
		T_NEAR((double)(c * ref), c * s, 1e-12 * (double)(c * ref));
		for (same = 1, i = 0; i < N; i++) {
			double v = x[i], a = fabs(v);
			float want = g0[i] + (float)(p == 2 ? scale * c * 2.0 *
			    v : scale * c * 3.0 * a * v);

			same &= g[i] == want;
		}
		T_CHECK(same);
	}
	/* The remainder goes to lane 0: 2^53 + 1 + 1 + 1 rounds to 2^53
	 * one term at a time, where 2^53 + (1 + 1 + 1) would not. */
	memset(x, 0, 19 * sizeof(float));
	x[0] = x[8] = 67108864.0f;	/* 2^26 */
	x[16] = x[17] = x[18] = 1.0f;
	T_CHECK(kg_regularise(x, g, 19, 1.0, 2, 1.0) == 9007199254740992.0);
}

static void
t_regulariser_fd(void)
{
	float x[4] = { 0.5f, -1.25f, 2.0f, -0.1f }, g[4];
	double xd[4], eps = 1e-6;
	unsigned p;
	size_t i, j;

	for (p = 2; p <= 3; p++) {
		memset(g, 0, sizeof(g));
		T_NEAR(kg_regularise(x, g, 4, 0.3, p, 0.5), 0.3 * (pow(0.5, p) +
		    pow(1.25, p) + pow(2.0, p) + pow(0.1, p)), 1e-6);
		for (i = 0; i < 4; i++) {
			double lp = 0, lm = 0;

			for (j = 0; j < 4; j++)
				xd[j] = x[j];
			for (j = 0; j < 4; j++) {
				double a = xd[j] + (j == i ? eps : 0.0);
				double b = xd[j] - (j == i ? eps : 0.0);

				lp += 0.3 * pow(fabs(a), p);
				lm += 0.3 * pow(fabs(b), p);
			}
			T_NEAR(g[i], 0.5 * (lp - lm) / (2 * eps), 1e-4);
		}
	}
}

static void
t_parse(void)
{
	enum kg_optim_kind k;

	T_CHECK(kg_optim_parse("Adam", &k) == 0 && k == KG_OPTIM_ADAM);
	T_CHECK(kg_optim_state_width(KG_OPTIM_ADAM, 8) == 17);
	T_CHECK(kg_optim_state_width(KG_OPTIM_ADAGRAD, 8) == 1);
	T_CHECK(kg_optim_parse("adagrad_elem", &k) == 0 &&
	    k == KG_OPTIM_ADAGRAD_ELEM);
	T_CHECK(kg_optim_state_width(KG_OPTIM_ADAGRAD_ELEM, 8) == 8);
	T_CHECK(strcmp(kg_optim_name(KG_OPTIM_ADAGRAD_ELEM),
	    "adagrad_elem") == 0);
	kg_error_mute(1);
	T_CHECK(kg_optim_parse("sgd", &k) < 0);
	kg_error_mute(0);
}

int
main(void)
{
	T_RUN(t_adagrad);
	T_RUN(t_adagrad_elem);
	T_RUN(t_adam);
	T_RUN(t_clip);
	T_RUN(t_regulariser_fd);
	T_RUN(t_regulariser_lanes);
	T_RUN(t_parse);
	return T_DONE();
}
