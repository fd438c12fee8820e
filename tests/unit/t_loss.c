/*
 * Losses: derivatives against central differences in double, the
 * definitions checked on hand-computed values, skipped negatives and
 * self-adversarial weights.
 */
#include "kge/loss.h"
#include "core/rng.h"
#include "core/util.h"
#include "test.h"

#define N 5

/* The loss at (pos, neg) in double, as lib/kge/loss.h defines it. */
static double
ref_loss(const struct kg_loss *l, double pos, const double *neg, size_t n,
    const uint8_t *skip)
{
	double w[N], sum = 0.0, mx = -INFINITY, L = 0.0;
	size_t j, kept = 0;

	for (j = 0; j < n; j++)
		if (!skip || !skip[j]) {
			kept++;
			if (l->adv_temp * neg[j] > mx)
				mx = l->adv_temp * neg[j];
		}
	for (j = 0; j < n; j++) {
		w[j] = skip && skip[j] ? 0.0 : exp(l->adv_temp * neg[j] - mx);
		sum += w[j];
	}
	for (j = 0; j < n; j++)
		w[j] /= sum;
	switch (l->kind) {
	case KG_LOSS_LOGISTIC:
		L = 0.5 * log1p(exp(-pos));
		for (j = 0; j < n; j++)
			L += 0.5 * w[j] * log1p(exp(neg[j]));
		return L;
	case KG_LOSS_MARGIN:
		for (j = 0; j < n; j++)
			L += (double)kept * w[j] * fmax(0.0, l->margin - pos +
			    neg[j]);
		return L;
	case KG_LOSS_SOFTMAX:
		sum = exp(pos);
		for (j = 0; j < n; j++)
			if (!skip || !skip[j])
				sum += exp(neg[j]);
		return -pos + log(sum);
	case KG_LOSS_BCE:
		L = log1p(exp(-pos));
		for (j = 0; j < n; j++)
			L += (double)kept * w[j] * log1p(exp(neg[j]));
		return L / (double)(1 + kept);
	}
	return NAN;
}

static void
t_fd_every_loss(void)
{
	static const enum kg_loss_kind kinds[] = { KG_LOSS_LOGISTIC,
	    KG_LOSS_MARGIN, KG_LOSS_SOFTMAX, KG_LOSS_BCE };
	static const double temps[] = { 0.0, 0.7 };
	uint8_t skip[N] = { 0, 1, 0, 0, 0 };
	float negf[N], gneg[N], gpos;
	double neg[N], pos, L, eps = 1e-6;
	struct kg_rng rng;
	size_t i, t, j, s;

	kg_rng_seed(&rng, 3, 0);
	for (i = 0; i < KG_ARRAY_LEN(kinds); i++)
		for (t = 0; t < 2; t++)
			for (s = 0; s < 2; s++) {
				struct kg_loss l = { kinds[i], 1.0, temps[t] };
				const uint8_t *sk = s ? skip : NULL;

				if (kinds[i] == KG_LOSS_SOFTMAX && t == 1)
					continue;
				pos = (float)(2 * kg_rng_normal(&rng));
				for (j = 0; j < N; j++)
					negf[j] = (float)(neg[j] =
					    (float)(2 * kg_rng_normal(&rng)));
				L = kg_loss_eval(&l, (float)pos, negf, N, sk,
				    &gpos, gneg);
				T_NEAR(L, ref_loss(&l, pos, neg, N, sk), 1e-5);
				/* Adversarial weights are constants:
				 * differentiate with them frozen, which the
				 * reference does at temperature 0 only, so
				 * check the positive there and everything at
				 * temperature 0. */
				T_NEAR(gpos, (ref_loss(&l, pos + eps, neg, N,
				    sk) - ref_loss(&l, pos - eps, neg, N,
				    sk)) / (2 * eps), 1e-4);
				if (t == 1)
					continue;
				for (j = 0; j < N; j++) {
					double keep = neg[j], fd;

					neg[j] = keep + eps;
					fd = ref_loss(&l, pos, neg, N, sk);
					neg[j] = keep - eps;
					fd -= ref_loss(&l, pos, neg, N, sk);
					neg[j] = keep;
					T_NEAR(gneg[j], fd / (2 * eps), 1e-4);
				}
				if (s)
					T_CHECK(gneg[1] == 0.0f);
			}
}

/*
 * The softmax over more negatives than a block of lanes (lib/compute/
 * rowops.c takes its shift, the largest kept score, in 8 lanes): a
 * skipped score far above the rest (were it the shift, every kept term
 * would underflow) and a kept one 94 above the rest (were it missed, its
 * float exp would overflow), in a block or in the tail.
 */
static void
t_softmax_lanes(void)
{
	enum { M = 21 };
	static const size_t masked[3] = { 3, 19, 12 }, top[3] = { 11, 20, 20 };
	struct kg_loss l = { KG_LOSS_SOFTMAX, 1.0, 0.0 };
	float neg[M], g[M], gp;
	uint8_t skip[M];
	double sum, L;
	size_t c, j;

	for (c = 0; c < 3; c++) {
		for (j = 0; j < M; j++) {
			neg[j] = 0.1f * (float)j - 1.0f;
			skip[j] = 0;
		}
		neg[masked[c]] = 300.0f;
		skip[masked[c]] = 1;
		neg[top[c]] = 95.0f;
		L = kg_loss_eval(&l, 0.5f, neg, M, skip, &gp, g);
		for (sum = exp(0.5), j = 0; j < M; j++)
			if (!skip[j])
				sum += exp((double)neg[j]);
		T_NEAR(L, -0.5 + log(sum), 1e-4);
		T_NEAR(g[top[c]], exp(95.0) / sum, 1e-5);
		T_CHECK(g[masked[c]] == 0.0f);
	}
}

/* Self-adversarial: gradient = weight x per-negative term gradient. */
static void
t_adversarial_weights(void)
{
	struct kg_loss l = { KG_LOSS_LOGISTIC, 1.0, 2.0 };
	float neg[2] = { 1.0f, -1.0f }, g[2], gp;
	double w0 = exp(2.0) / (exp(2.0) + exp(-2.0));

	kg_loss_eval(&l, 0.0f, neg, 2, NULL, &gp, g);
	T_NEAR(g[0], 0.5 * w0 * kg_sigmoid(1.0), 1e-6);
	T_NEAR(g[1], 0.5 * (1 - w0) * kg_sigmoid(-1.0), 1e-6);
	T_NEAR(gp, -0.5 * kg_sigmoid(0.0), 1e-7);
}

/* Hand values and stability for huge scores. */
static void
t_values(void)
{
	struct kg_loss l = { KG_LOSS_MARGIN, 1.0, 0.0 };
	float neg[3] = { 0.5f, -3.0f, 2.0f }, g[3], gp;
	double L;

	L = kg_loss_eval(&l, 1.0f, neg, 3, NULL, &gp, g);
	T_NEAR(L, 0.5 + 0.0 + 2.0, 1e-6);
	T_CHECK(gp == -2.0f && g[0] == 1.0f && g[1] == 0.0f && g[2] == 1.0f);
	l.kind = KG_LOSS_SOFTMAX;
	neg[0] = 1000.0f;
	L = kg_loss_eval(&l, -1000.0f, neg, 3, NULL, &gp, g);
	T_CHECK(isfinite(L) && fabs(L - 2000.0) < 1e-3);
	l.kind = KG_LOSS_LOGISTIC;
	L = kg_loss_eval(&l, -1e4f, neg, 3, NULL, &gp, g);
	T_CHECK(isfinite(L) && isfinite(gp));
	T_NEAR(kg_softplus(800.0), 800.0, 1e-9);
	T_NEAR(kg_softplus(-800.0), 0.0, 1e-300);
}

static void
t_parse(void)
{
	enum kg_loss_kind k;

	T_CHECK(kg_loss_parse("Softmax", &k) == 0 && k == KG_LOSS_SOFTMAX);
	T_CHECK(kg_loss_parse("ranking", &k) == 0 && k == KG_LOSS_MARGIN);
	kg_error_mute(1);
	T_CHECK(kg_loss_parse("hinge2", &k) < 0);
	kg_error_mute(0);
	T_CHECK(strstr(kg_error_last(), "unknown loss 'hinge2'") != NULL);
}

/*
 * The softmax cross-entropy over a fixed set: the value against log-sum-exp
 * in double, the gradient against central differences, large scores
 * without overflow, and the gradient summing to zero (softmax minus a
 * one-hot).
 */
static double
ref_xent(const double *s, size_t n, size_t target)
{
	double mx = s[0], sum = 0.0;
	size_t j;

	for (j = 1; j < n; j++)
		mx = s[j] > mx ? s[j] : mx;
	for (j = 0; j < n; j++)
		sum += exp(s[j] - mx);
	return mx + log(sum) - s[target];
}

static void
t_softmax_xent(void)
{
	enum { M = 37 };
	float s[M], g[M];
	double sd[M], L, gsum = 0.0;
	struct kg_rng rng;
	size_t j, target = 11;

	kg_rng_seed(&rng, 9, 0);
	for (j = 0; j < M; j++) {
		s[j] = (float)(3.0 * kg_rng_normal(&rng));
		sd[j] = s[j];
	}
	L = kg_loss_softmax_xent(s, M, target, 0.5f, g);
	T_NEAR(L, ref_xent(sd, M, target), 1e-5);
	for (j = 0; j < M; j++) {
		double keep = sd[j], eps = 1e-5, fd;

		sd[j] = keep + eps;
		fd = ref_xent(sd, M, target);
		sd[j] = keep - eps;
		fd = (fd - ref_xent(sd, M, target)) / (2 * eps);
		sd[j] = keep;
		T_NEAR(g[j], 0.5 * fd, 1e-5);
		gsum += g[j];
	}
	T_CHECK(g[target] < 0.0f);
	T_NEAR(gsum, 0.0, 1e-5);
	for (j = 0; j < M; j++)
		s[j] = 1e4f + (float)j;
	L = kg_loss_softmax_xent(s, M, M - 1, 1.0f, g);
	T_CHECK(isfinite(L) && L > 0.0 && L < 1.0);
	for (j = 0; j < M; j++)
		T_CHECK(isfinite(g[j]));
}

int
main(void)
{
	T_RUN(t_fd_every_loss);
	T_RUN(t_softmax_lanes);
	T_RUN(t_adversarial_weights);
	T_RUN(t_values);
	T_RUN(t_parse);
	T_RUN(t_softmax_xent);
	return T_DONE();
}
