/*
 * kernels: every similarity of lib/compute/kernels.h, chunk and pairs
 * forms, against a float64 reference; the summation order of
 * lib/compute/lanes.h bit for bit against sums written out here (so that
 * the AVX2 blocks, the portable loops and training's results agree); the
 * backward passes against central differences of the reference.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "compute/kernels.h"
#include "core/util.h"
#include "test.h"

static const enum kg_kern_sim sims[] = {
	KG_KERN_DOT, KG_KERN_L1, KG_KERN_L2, KG_KERN_L2_DIFF, KG_KERN_CMOD,
	KG_KERN_CMOD_APPROX
};

static const char *const sim_names[] = {
	"dot", "l1", "l2", "l2_diff", "cmod", "cmod_approx"
};

static int
is_cmod(enum kg_kern_sim sim)
{
	return sim == KG_KERN_CMOD || sim == KG_KERN_CMOD_APPROX;
}

/* S(q, c) in float64 from the definitions of kernels.h. */
static double
ref_s(enum kg_kern_sim sim, const double *q, const double *c, size_t d,
    double gamma)
{
	size_t h = d / 2, k;
	double s = 0.0;

	switch (sim) {
	case KG_KERN_DOT:
		for (k = 0; k < d; k++)
			s += q[k] * c[k];
		return s;
	case KG_KERN_L1:
		for (k = 0; k < d; k++)
			s += fabs(q[k] - c[k]);
		return gamma - s;
	case KG_KERN_L2:
	case KG_KERN_L2_DIFF:
		for (k = 0; k < d; k++)
			s += (q[k] - c[k]) * (q[k] - c[k]);
		return gamma - sqrt(s);
	case KG_KERN_CMOD:
	case KG_KERN_CMOD_APPROX:
		for (k = 0; k < h; k++)
			s += hypot(q[k] - c[k], q[h + k] - c[h + k]);
		return gamma - s;
	}
	return NAN;
}

/* The sum of |terms| of S, the scale its float rounding error follows. */
static double
ref_scale(enum kg_kern_sim sim, const double *q, const double *c, size_t d,
    double gamma)
{
	size_t k;
	double s = fabs(gamma) + 1.0;

	for (k = 0; k < d; k++)
		s += sim == KG_KERN_DOT ? fabs(q[k] * c[k]) :
		    (q[k] * q[k] + c[k] * c[k]);
	return s;
}

static void
fill(struct kg_rng *rng, float *x, double *xd, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		x[i] = (float)kg_rng_normal(rng);
		if (xd != NULL)
			xd[i] = x[i];
	}
}

/*
 * Chunk and pairs forms against ref_s; the distances an L2 kind writes
 * are those of its scores.
 */
static int
check_forward(enum kg_kern_sim sim, size_t nq, size_t nc, size_t d,
    uint64_t seed)
{
	float *q = kg_xmallocarray(nq * d + 1, sizeof(float));
	float *c = kg_xmallocarray(nc * d + 1, sizeof(float));
	double *qd = kg_xmallocarray(nq * d + 1, sizeof(double));
	double *cd = kg_xmallocarray(nc * d + 1, sizeof(double));
	float *out = kg_xmallocarray(nq * nc, sizeof(float));
	float *dist = kg_xmallocarray(nq * nc, sizeof(float));
	float *work = kg_xmallocarray(kg_kern_work_size(sim, nq, nc) + 1,
	    sizeof(float));
	float gamma = 3.0f;
	struct kg_rng rng;
	size_t i, j, n = nq < nc ? nq : nc;
	int bad = 0;

	kg_rng_seed(&rng, seed, (uint64_t)sim);
	fill(&rng, q, qd, nq * d);
	fill(&rng, c, cd, nc * d);
	kg_kern_chunk(sim, nq, nc, d, gamma, q, c, out, dist, work);
	for (i = 0; i < nq; i++)
		for (j = 0; j < nc; j++) {
			const double *qi = qd + i * d, *cj = cd + j * d;
			double want = ref_s(sim, qi, cj, d, gamma);
			double tol = 2e-6 * ref_scale(sim, qi, cj, d, gamma);
			float got = out[i * nc + j];

			/* The GEMM form of L2 errs on the squared distance. */
			if (sim == KG_KERN_L2)
				bad += !(fabs(pow(gamma - got, 2) -
				    pow(gamma - want, 2)) <= tol);
			else
				bad += !(fabs(got - want) <= tol);
			if (sim == KG_KERN_L2 || sim == KG_KERN_L2_DIFF)
				bad += out[i * nc + j] !=
				    gamma - dist[i * nc + j];
		}
	/* Pairs: q_i against c_i. */
	kg_kern_pairs(sim, n, d, gamma, q, c, out, dist);
	for (i = 0; i < n; i++) {
		const double *qi = qd + i * d, *ci = cd + i * d;
		double want = ref_s(sim, qi, ci, d, gamma);

		bad += !(fabs(out[i] - want) <= 2e-6 * ref_scale(sim, qi, ci,
		    d, gamma));
		if (sim == KG_KERN_L2 || sim == KG_KERN_L2_DIFF)
			bad += out[i] != gamma - dist[i];
	}
	if (bad)
		fprintf(stderr, "%s %zu x %zu, d %zu: %d mismatches\n",
		    sim_names[sim], nq, nc, d, bad);
	free(q);
	free(c);
	free(qd);
	free(cd);
	free(out);
	free(dist);
	free(work);
	return bad;
}

static void
t_forward_vs_reference(void)
{
	static const size_t dims[] = { 1, 2, 7, 8, 16, 22, 37, 64 };
	static const size_t ncs[] = { 1, 5, 8, 19, 70 };
	size_t s, a, b;

	for (s = 0; s < KG_ARRAY_LEN(sims); s++)
		for (a = 0; a < KG_ARRAY_LEN(dims); a++) {
			if (is_cmod(sims[s]) && dims[a] % 2 != 0)
				continue;
			for (b = 0; b < KG_ARRAY_LEN(ncs); b++)
				T_CHECK(check_forward(sims[s], 3, ncs[b],
				    dims[a], a * 10 + b) == 0);
		}
}

/* The documented order (lanes.h), written out independently. */
static float
ordered_sum(const float *term, size_t n, size_t w)
{
	float L[8] = { 0 }, s = 0.0f;
	size_t k, l, m = n / w * w;

	for (k = 0; k < m; k++)
		L[k % w] += term[k];
	for (; k < n; k++)
		L[0] += term[k];
	for (l = 0; l < w; l++)
		s += L[l];
	return s;
}

/* The float terms of S(q, c) (n of them: d, or d / 2 moduli). */
static size_t
terms_of(enum kg_kern_sim sim, const float *q, const float *c, size_t d,
    float *t)
{
	size_t h = d / 2, k;

	for (k = 0; k < d; k++) {
		float e = q[k] - c[k];

		switch (sim) {
		case KG_KERN_DOT:
			t[k] = q[k] * c[k];
			break;
		case KG_KERN_L1:
			t[k] = fabsf(e);
			break;
		default:
			t[k] = e * e;
			break;
		}
	}
	if (sim != KG_KERN_CMOD)
		return d;
	for (k = 0; k < h; k++) {
		float dr = q[k] - c[k], di = q[h + k] - c[h + k];

		t[k] = sqrtf(dr * dr + di * di);
	}
	return h;
}

/*
 * Bit for bit: the chunk forms (AVX2 blocks of eight candidates where the
 * CPU has it, then one by one) and the pairs forms sum in the order of
 * lanes.h, 8 lanes, 4 for the L2_DIFF chunk; CMOD_APPROX (whose root the
 * test does not restate) equals between chunk and pairs.
 */
static int
check_order(enum kg_kern_sim sim, size_t d, uint64_t seed)
{
	enum { NQ = 2, NC = 21 };
	float q[NQ * 70], c[NC * 70], out[NQ * NC], pout[NC], t[70];
	float pq[NC * 70], dist[NQ * NC], gamma = 2.5f;
	struct kg_rng rng;
	size_t i, j, n;
	int bad = 0;

	kg_rng_seed(&rng, seed, (uint64_t)sim);
	fill(&rng, q, NULL, NQ * d);
	fill(&rng, c, NULL, NC * d);
	/* Magnitudes over several decades, so that the order shows. */
	for (j = 0; j < NC * d; j++)
		c[j] *= (float)pow(10.0, (double)(j % 7) - 3.0);
	kg_kern_chunk(sim, NQ, NC, d, gamma, q, c, out, dist, NULL);
	for (i = 0; i < NQ; i++) {
		for (j = 0; j < NC; j++)
			memcpy(pq + j * d, q + i * d, d * sizeof(float));
		kg_kern_pairs(sim, NC, d, gamma, pq, c, pout, NULL);
		for (j = 0; j < NC; j++) {
			float want, got = out[i * NC + j];

			if (sim == KG_KERN_CMOD_APPROX) {
				bad += got != pout[j];
				continue;
			}
			n = terms_of(sim, q + i * d, c + j * d, d, t);
			if (sim == KG_KERN_L2_DIFF) {
				/* The chunk form in 4 lanes, pairs in 8. */
				want = gamma - sqrtf(ordered_sum(t, n, 4));
				bad += pout[j] != gamma -
				    sqrtf(ordered_sum(t, n, 8));
			} else {
				want = gamma - ordered_sum(t, n, 8);
				bad += pout[j] != want;
			}
			bad += got != want;
		}
	}
	if (bad)
		fprintf(stderr, "%s d %zu: %d sums out of order\n",
		    sim_names[sim], d, bad);
	return bad;
}

static void
t_summation_order(void)
{
	static const size_t dims[] = { 2, 6, 8, 16, 22, 40, 70 };
	static const enum kg_kern_sim osims[] = {
		KG_KERN_L1, KG_KERN_L2_DIFF, KG_KERN_CMOD, KG_KERN_CMOD_APPROX
	};
	float x[3 * 70], t[70], norms[3], y[3], pq[70], dots[3];
	struct kg_rng rng;
	size_t a, s, i, k;

	for (s = 0; s < KG_ARRAY_LEN(osims); s++)
		for (a = 0; a < KG_ARRAY_LEN(dims); a++)
			T_CHECK(check_order(osims[s], dims[a], a) == 0);
	/* Dot products: pairs, squared norms and matvec rows. */
	kg_rng_seed(&rng, 9, 9);
	for (a = 0; a < KG_ARRAY_LEN(dims); a++) {
		size_t d = dims[a];

		fill(&rng, x, NULL, 3 * d);
		fill(&rng, pq, NULL, d);
		kg_kern_sqnorms(3, d, x, norms);
		kg_kern_matvec(KG_NO_TRANS, 3, d, x, pq, y);
		for (i = 0; i < 3; i++) {
			kg_kern_pairs(KG_KERN_DOT, 1, d, 0.0f, pq, x + i * d,
			    &dots[i], NULL);
			terms_of(KG_KERN_DOT, x + i * d, x + i * d, d, t);
			T_CHECK(norms[i] == ordered_sum(t, d, 8));
			terms_of(KG_KERN_DOT, x + i * d, pq, d, t);
			T_CHECK(y[i] == ordered_sum(t, d, 8));
			for (k = 0; k < d; k++)
				t[k] = pq[k] * x[i * d + k];
			T_CHECK(dots[i] == ordered_sum(t, d, 8));
		}
	}
}

/* sum_ij g_ij S(q_i, c_j) in float64 (pairs: j = i). */
static double
ref_loss(enum kg_kern_sim sim, size_t nq, size_t nc, size_t d, int pairs,
    const double *q, const double *c, const double *g)
{
	size_t i, j;
	double L = 0.0;

	for (i = 0; i < nq; i++) {
		if (pairs) {
			L += g[i] * ref_s(sim, q + i * d, c + i * d, d, 3.0);
			continue;
		}
		for (j = 0; j < nc; j++)
			L += g[i * nc + j] * ref_s(sim, q + i * d, c + j * d,
			    d, 3.0);
	}
	return L;
}

static int
fd_compare(enum kg_kern_sim sim, size_t nq, size_t nc, size_t d,
    int pairs, double *q, double *c, const double *g, double *x,
    const float *ga, size_t n, const char *what)
{
	size_t i;
	int bad = 0;

	for (i = 0; i < n; i++) {
		double keep = x[i], lp, lm, fd, eps = 1e-6;

		x[i] = keep + eps;
		lp = ref_loss(sim, nq, nc, d, pairs, q, c, g);
		x[i] = keep - eps;
		lm = ref_loss(sim, nq, nc, d, pairs, q, c, g);
		x[i] = keep;
		fd = (lp - lm) / (2 * eps);
		if (fabs(fd - ga[i]) > 1e-3 * fmax(1.0, fabs(fd)) &&
		    bad++ < 3)
			fprintf(stderr, "%s %s %s[%zu]: analytic %.6g, finite "
			    "difference %.6g\n", sim_names[sim],
			    pairs ? "pairs" : "chunk", what, i, (double)ga[i],
			    fd);
	}
	return bad;
}

/*
 * Backward against central differences: gq is overwritten (it starts as
 * garbage), the candidates' gradient is added to what gc holds, and a
 * zero in g adds nothing.
 */
static int
check_backward(enum kg_kern_sim sim, int pairs, size_t d, uint64_t seed)
{
	enum { NQ = 3, NC = 11, DMAX = 22 };
	float q[NQ * DMAX], c[NC * DMAX], g[NQ * NC], out[NQ * NC];
	float dist[NQ * NC], gq[NQ * DMAX], gc[NC * DMAX], work[NQ + NC];
	float dgc[NC * DMAX] = { 0 };
	double qd[NQ * DMAX], cd[NC * DMAX], gd[NQ * NC];
	size_t nc = pairs ? NQ : NC, ng = pairs ? NQ : NQ * NC, i;
	struct kg_rng rng;
	int bad = 0;

	kg_rng_seed(&rng, seed, (uint64_t)sim * 2 + (uint64_t)pairs);
	fill(&rng, q, qd, NQ * d);
	fill(&rng, c, cd, nc * d);
	fill(&rng, g, gd, ng);
	g[1] = 0.0f;
	gd[1] = 0.0;
	for (i = 0; i < NQ * d; i++)
		gq[i] = 1e6f;
	for (i = 0; i < nc * d; i++)
		gc[i] = (float)i;
	if (pairs) {
		kg_kern_pairs(sim, NQ, d, 3.0f, q, c, out, dist);
		kg_kern_pairs_backward(sim, NQ, d, q, c, g, dist, gq, gc);
	} else {
		kg_kern_chunk(sim, NQ, nc, d, 3.0f, q, c, out, dist, work);
		kg_kern_chunk_backward(sim, NQ, nc, d, q, c, g, dist, gq, gc,
		    work);
	}
	for (i = 0; i < nc * d; i++)
		dgc[i] = gc[i] - (float)i;
	bad += fd_compare(sim, NQ, nc, d, pairs, qd, cd, gd, qd, gq, NQ * d,
	    "q");
	bad += fd_compare(sim, NQ, nc, d, pairs, qd, cd, gd, cd, dgc, nc * d,
	    "c");
	/* Pairs: query 1 has g = 0, so its gradient is exactly zero. */
	if (pairs)
		for (i = 0; i < d; i++)
			bad += gq[d + i] != 0.0f;
	return bad;
}

static void
t_backward_finite_differences(void)
{
	static const size_t dims[] = { 6, 22 };
	size_t s, a;

	for (s = 0; s < KG_ARRAY_LEN(sims); s++)
		for (a = 0; a < KG_ARRAY_LEN(dims); a++) {
			T_CHECKF(check_backward(sims[s], 0, dims[a], 3) == 0,
			    "%s chunk d %zu", sim_names[s], dims[a]);
			T_CHECKF(check_backward(sims[s], 1, dims[a], 4) == 0,
			    "%s pairs d %zu", sim_names[s], dims[a]);
		}
}

/*
 * CMOD_APPROX's backward weighs each term by a two-step rsqrt estimate:
 * within 1e-5 of the exact CMOD backward relative to the sum of |g| each
 * gradient entry gathers (every term's weight |dr| / |z| is at most 1).
 * One Newton step fewer (about 2e-3) fails this.
 */
static void
t_cmod_approx_backward(void)
{
	enum { NQ = 5, NC = 13, D = 70 };
	float q[NQ * D], c[NC * D], g[NQ * NC];
	float gq[2][NQ * D], gc[2][NC * D] = { { 0 } };
	double rsum[NQ] = { 0 }, csum[NC] = { 0 }, worst = 0.0;
	struct kg_rng rng;
	size_t i, j, k, v;

	kg_rng_seed(&rng, 11, 0);
	fill(&rng, q, NULL, NQ * D);
	fill(&rng, c, NULL, NC * D);
	fill(&rng, g, NULL, NQ * NC);
	for (v = 0; v < 2; v++)
		kg_kern_chunk_backward(v ? KG_KERN_CMOD_APPROX : KG_KERN_CMOD,
		    NQ, NC, D, q, c, g, NULL, gq[v], gc[v], NULL);
	for (i = 0; i < NQ; i++)
		for (j = 0; j < NC; j++) {
			rsum[i] += fabs(g[i * NC + j]);
			csum[j] += fabs(g[i * NC + j]);
		}
	for (i = 0; i < NQ * D; i++)
		worst = fmax(worst, fabs(gq[1][i] - gq[0][i]) / rsum[i / D]);
	for (k = 0; k < NC * D; k++)
		worst = fmax(worst, fabs(gc[1][k] - gc[0][k]) / csum[k / D]);
	T_CHECKF(worst < 1e-5, "worst relative difference %g", worst);
	T_CHECK(worst > 0.0);
}

/* A query equal to its candidate: gamma, a zero L2 gradient, no NaN. */
static void
t_zero_distance(void)
{
	float q[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, out[1], dist[1], g = 1.0f;
	float gq[8], gc[8] = { 0 }, work[2];
	size_t s, k;

	for (s = 0; s < KG_ARRAY_LEN(sims); s++) {
		enum kg_kern_sim sim = sims[s];

		if (sim == KG_KERN_DOT)
			continue;
		kg_kern_pairs(sim, 1, 8, 4.0f, q, q, out, dist);
		T_CHECK(out[0] == 4.0f);
		kg_kern_chunk(sim, 1, 1, 8, 4.0f, q, q, out, dist, work);
		T_CHECKF(fabsf(out[0] - 4.0f) <= (sim == KG_KERN_L2 ? 1e-2f :
		    0.0f), "%s: %g", sim_names[s], (double)out[0]);
		kg_kern_chunk_backward(sim, 1, 1, 8, q, q, &g, dist, gq, gc,
		    work);
		for (k = 0; k < 8; k++)
			T_CHECK(isfinite(gq[k]) && isfinite(gc[k]));
	}
}

static void
t_matvec_and_project(void)
{
	enum { M = 5, N = 13, NC = 9 };
	float a[M * N], x[N], xm[M], y[N], p[NC * M], c[NC * N];
	struct kg_rng rng;
	size_t i, j;

	kg_rng_seed(&rng, 4, 4);
	fill(&rng, a, NULL, M * N);
	fill(&rng, x, NULL, N);
	fill(&rng, xm, NULL, M);
	fill(&rng, c, NULL, NC * N);
	kg_kern_matvec(KG_NO_TRANS, M, N, a, x, y);
	for (i = 0; i < M; i++) {
		double s = 0.0;

		for (j = 0; j < N; j++)
			s += (double)a[i * N + j] * x[j];
		T_NEAR(y[i], s, 1e-5);
	}
	kg_kern_matvec(KG_TRANS, M, N, a, xm, y);
	for (j = 0; j < N; j++) {
		double s = 0.0;

		for (i = 0; i < M; i++)
			s += (double)a[i * N + j] * xm[i];
		T_NEAR(y[j], s, 1e-5);
	}
	kg_kern_project(NC, M, N, a, c, p);
	for (i = 0; i < NC; i++) {
		kg_kern_matvec(KG_NO_TRANS, M, N, a, c + i * N, y);
		for (j = 0; j < M; j++)
			T_NEAR(p[i * M + j], y[j], 1e-5);
	}
}

int
main(void)
{
	kg_compute_init();
	T_RUN(t_forward_vs_reference);
	T_RUN(t_summation_order);
	T_RUN(t_backward_finite_differences);
	T_RUN(t_cmod_approx_backward);
	T_RUN(t_zero_distance);
	T_RUN(t_matvec_and_project);
	return T_DONE();
}
