/*
 * TransR on the device seam (backend.h's kg_be_transr and
 * kg_be_transr_backward, devops_transr.h's kg_dev_t_transr*): the query
 * M h + r, M t - r and the candidates' projection M c against the shallow models'
 * own code (lib/kge/score.c's kg_score_query, kernels.h's
 * kg_kern_matvec), a whole pairs pass against grad.c's TransR pairs
 * passes within a relative 1e-5, through the CPU backend and through the
 * thread functions on an emulated grid (256 and 32 threads a block,
 * partial last blocks, guard floats), and the backward against float64
 * finite differences.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compute/backend.h"
#include "compute/devops_score.h"
#include "compute/devops_transr.h"
#include "core/rng.h"
#include "core/util.h"
#include "kge/grad.h"
#include "kge/score.h"
#include "devops_emu.h"
#include "test.h"

static struct kg_backend *cpu;

static int
close_rel(const float *a, const float *b, size_t n, const char *what)
{
	return close_tol(a, b, n, 1e-5f, what);
}

static const int signs[] = { 1, -1, 0 };

/* The forward: y against kg_score_query (signs +-1) and kg_kern_matvec
 * (sign 0), row by row. */
static void
test_transr_forward(void)
{
	static const size_t ns[] = { 1, 7, 37 }, ds[] = { 3, 8, 18 };
	static const size_t ks[] = { 2, 5, 9 };
	struct kg_rng r;
	size_t b, c, e, s, t, i;

	kg_rng_seed(&r, 51, 0);
	for (b = 0; b < KG_ARRAY_LEN(ns); b++)
		for (c = 0; c < KG_ARRAY_LEN(ds); c++)
			for (e = 0; e < KG_ARRAY_LEN(ks); e++)
				for (s = 0; s < KG_ARRAY_LEN(signs); s++) {
	struct kg_model m;
	size_t n = ns[b], d = ds[c], k = ks[e], rw = k + k * d;
	int sign = signs[s];
	float *x, *rel, *ref, *y;

	T_CHECK(kg_model_init(&m, KG_MODEL_TRANSR, (uint32_t)d, (uint32_t)k,
	    6.0f) == 0);
	T_CHECK(m.rel_width == rw);
	x = rnd(&r, n * d, -1, 1);
	rel = rnd(&r, n * rw, -1, 1);
	ref = rnd(&r, n * k, 0, 0);
	for (i = 0; i < n; i++)
		if (sign != 0)
			kg_score_query(&m, sign > 0 ? KG_SIDE_TAIL :
			    KG_SIDE_HEAD, x + i * d, rel + i * rw, ref + i * k);
		else
			kg_kern_matvec(KG_NO_TRANS, k, d, rel + i * rw + k,
			    x + i * d, ref + i * k);
	y = dup(ref, n * k);
	memset(y, 0, n * k * sizeof(*y));
	T_CHECK(kg_be_transr(cpu, sign, n, d, k, x, rel, y) == 0);
	T_CHECKF(close_rel(y, ref, n * k, "transr"), "sign %d n %zu d %zu "
	    "k %zu", sign, n, d, k);
	for (t = 0; t < KG_ARRAY_LEN(bdims); t++) {
		memset(y, 0, n * k * sizeof(*y));
		EMU(bdims[t], n * k, kg_dev_t_transr, sign, n, d, k, x, rel, y);
		T_CHECKF(close_rel(y, ref, n * k, "transr (grid)"), "sign %d "
		    "n %zu d %zu k %zu block %u", sign, n, d, k, bdims[t]);
	}
	free(x);
	free(rel);
	free(ref);
	free(y);
				}
}

/*
 * A whole TransR pairs pass (query, projection, L2_DIFF, backward through
 * all three) against grad.c's kg_grad_pairs_forward and
 * kg_grad_pairs_backward: scores and the gradients of the fixed, relation
 * and candidate rows.
 */
static void
test_transr_pairs_chain(void)
{
	static const size_t ns[] = { 1, 9, 40 }, ds[] = { 8, 22 };
	struct kg_rng r;
	size_t b, c, s, t;

	kg_rng_seed(&r, 52, 0);
	for (b = 0; b < KG_ARRAY_LEN(ns); b++)
		for (c = 0; c < KG_ARRAY_LEN(ds); c++)
			for (s = 0; s < 2; s++)
				for (t = 0; t < KG_ARRAY_LEN(bdims) + 1; t++) {
	struct kg_model m;
	size_t n = ns[b], d = ds[c], k = d / 2 + 1, rw;
	int sign = s == KG_SIDE_TAIL ? 1 : -1;
	float *f, *rel, *cand, *g, *work, *score, *gf, *gr, *gc;
	float *q, *p, *dist, *sc, *gq, *gp, *gf2, *gr2, *gc2;

	T_CHECK(kg_model_init(&m, KG_MODEL_TRANSR, (uint32_t)d, (uint32_t)k,
	    6.0f) == 0);
	rw = m.rel_width;
	f = rnd(&r, n * d, -1, 1);
	rel = rnd(&r, n * rw, -1, 1);
	cand = rnd(&r, n * d, -1, 1);
	g = rnd(&r, n, -1, 1);
	work = kg_xmallocarray(kg_grad_work_size(&m, n, 1) + 1, sizeof(float));
	score = rnd(&r, n, 0, 0);
	gf = rnd(&r, n * d, 0, 0);
	gr = rnd(&r, n * rw, 0, 0);
	gc = rnd(&r, n * d, 0, 0);
	kg_grad_pairs_forward(&m, (enum kg_side)s, n, f, rel, cand, score,
	    work);
	kg_grad_pairs_backward(&m, (enum kg_side)s, n, f, rel, cand, g, gf, gr,
	    gc, work);
	q = rnd(&r, n * k, 0, 0);
	p = rnd(&r, n * k, 0, 0);
	dist = rnd(&r, n, 0, 0);
	sc = rnd(&r, n, 0, 0);
	gq = rnd(&r, n * k, 0, 0);
	gp = rnd(&r, n * k, 0, 0);
	gf2 = rnd(&r, n * d, 0, 0);
	gr2 = rnd(&r, n * rw, 0, 0);
	gc2 = rnd(&r, n * d, 0, 0);
	if (t == KG_ARRAY_LEN(bdims)) {
		/* Through the CPU backend. */
		T_CHECK(kg_be_transr(cpu, sign, n, d, k, f, rel, q) == 0);
		T_CHECK(kg_be_transr(cpu, 0, n, d, k, cand, rel, p) == 0);
		T_CHECK(kg_be_pairs(cpu, KG_KERN_L2_DIFF, n, k, m.gamma, q, p,
		    sc, dist) == 0);
		T_CHECK(kg_be_pairs_backward(cpu, KG_KERN_L2_DIFF, n, k, q, p,
		    g, dist, gq, gp) == 0);
		T_CHECK(kg_be_transr_backward(cpu, sign, n, d, k, f, rel, gq,
		    gf2, gr2) == 0);
		T_CHECK(kg_be_transr_backward(cpu, 0, n, d, k, cand, rel, gp,
		    gc2, gr2) == 0);
	} else {
		unsigned bd = bdims[t];

		EMU(bd, n * k, kg_dev_t_transr, sign, n, d, k, f, rel, q);
		EMU(bd, n * k, kg_dev_t_transr, 0, n, d, k, cand, rel, p);
		EMU(bd, n, kg_dev_t_pairs, KG_KERN_L2_DIFF, n, k, m.gamma, q, p,
		    sc, dist);
		EMU(bd, n * k, kg_dev_t_pairs_bwd, KG_KERN_L2_DIFF, n, k, q, p,
		    g, dist, gq, gp);
		EMU(bd, n * d, kg_dev_t_transr_bwd_x, n, d, k, rel, gq, gf2);
		EMU(bd, n * rw, kg_dev_t_transr_bwd_r, sign, n, d, k, f, gq,
		    gr2);
		EMU(bd, n * d, kg_dev_t_transr_bwd_x, n, d, k, rel, gp, gc2);
		EMU(bd, n * rw, kg_dev_t_transr_bwd_r, 0, n, d, k, cand, gp,
		    gr2);
	}
	T_CHECKF(close_rel(sc, score, n, "score") &&
	    close_rel(gf2, gf, n * d, "gfixed") &&
	    close_rel(gr2, gr, n * rw, "grel") &&
	    close_rel(gc2, gc, n * d, "gcand"), "side %zu n %zu d %zu way %zu",
	    s, n, d, t);
	free(f);
	free(rel);
	free(cand);
	free(g);
	free(work);
	free(score);
	free(gf);
	free(gr);
	free(gc);
	free(q);
	free(p);
	free(dist);
	free(sc);
	free(gq);
	free(gp);
	free(gf2);
	free(gr2);
	free(gc2);
				}
}

/* sum_a w_a y_a in double, y = M x + sign r from the element function. */
static double
objective(int sign, size_t d, size_t k, const float *x, const float *rel,
    const float *w)
{
	double s = 0.0;
	size_t a;

	for (a = 0; a < k; a++)
		s += (double)w[a] * (double)kg_dev_transr_elem(sign, d, k, x,
		    rel, a);
	return s;
}

/* The backward against central differences of sum_a w_a y_a, every sign;
 * a check where every gradient is zero would prove nothing. */
static void
test_transr_fd(void)
{
	static const size_t ds[] = { 3, 10 }, ks[] = { 2, 4 };
	const float h = 1e-2f;
	struct kg_rng r;
	size_t c, e, s, l, v;

	kg_rng_seed(&r, 53, 0);
	for (c = 0; c < KG_ARRAY_LEN(ds); c++)
		for (e = 0; e < KG_ARRAY_LEN(ks); e++)
			for (s = 0; s < KG_ARRAY_LEN(signs); s++) {
	size_t d = ds[c], k = ks[e], rw = k + k * d;
	int sign = signs[s], ok = 1;
	float *x = rnd(&r, d, -1, 1), *rel = rnd(&r, rw, -1, 1);
	float *w = rnd(&r, k, -1, 1), *gx = rnd(&r, d, 0, 0);
	float *gr = rnd(&r, rw, 0, 0);
	double big = 0.0;

	T_CHECK(kg_be_transr_backward(cpu, sign, 1, d, k, x, rel, w, gx,
	    gr) == 0);
	for (v = 0; v < 2; v++)
		for (l = 0; l < (v == 0 ? d : rw); l++) {
			float *p = v == 0 ? x + l : rel + l, keep = *p;
			double up, down, fd, an;

			*p = keep + h;
			up = objective(sign, d, k, x, rel, w);
			*p = keep - h;
			down = objective(sign, d, k, x, rel, w);
			*p = keep;
			fd = (up - down) / (2.0 * (double)h);
			an = v == 0 ? gx[l] : gr[l];
			big = fmax(big, fabs(an));
			if (!(fabs(an - fd) <= 1e-3 * fmax(1.0, fabs(fd)))) {
				fprintf(stderr, "sign %d d %zu k %zu %s[%zu]: "
				    "%.7g, differences %.7g\n", sign, d, k,
				    v == 0 ? "gx" : "grel", l, an, fd);
				ok = 0;
			}
		}
	T_CHECK(ok);
	T_CHECKF(big > 0.1, "largest gradient %g", big);
	free(x);
	free(rel);
	free(w);
	free(gx);
	free(gr);
			}
}

/* NULL gradients are not computed, and an empty call touches nothing. */
static void
test_transr_nulls(void)
{
	float x[4] = { 1, 2, 3, 4 }, rel[2 + 2 * 4] = { 1, 1, 1, 0, 0, 0, 0,
	    1, 0, 0 }, gy[2] = { 1, -1 }, gx[4] = { 0 }, y[2] = { 7, 7 };

	T_CHECK(kg_be_transr_backward(cpu, 1, 1, 4, 2, x, rel, gy, gx,
	    NULL) == 0);
	T_CHECK(gx[0] == 1.0f && gx[1] == -1.0f && gx[2] == 0.0f &&
	    gx[3] == 0.0f);
	T_CHECK(kg_be_transr(cpu, 1, 0, 4, 2, x, rel, y) == 0);
	T_CHECK(y[0] == 7.0f && y[1] == 7.0f);
	T_CHECK(kg_be_transr(cpu, -1, 1, 4, 2, x, rel, y) == 0);
	T_CHECK(y[0] == 0.0f && y[1] == 1.0f);
}

int
main(void)
{
	struct kg_device d = KG_DEVICE_INIT;

	cpu = kg_backend_open(&d);
	if (cpu == NULL)
		return 1;
	T_RUN(test_transr_forward);
	T_RUN(test_transr_pairs_chain);
	T_RUN(test_transr_fd);
	T_RUN(test_transr_nulls);
	kg_backend_free(cpu);
	return T_DONE();
}
