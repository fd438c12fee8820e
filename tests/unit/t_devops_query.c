/*
 * The query forms of the device seam (backend.h's kg_be_query and
 * kg_be_query_backward, devops_query.h's kg_dev_t_query*) against the
 * shallow models' own code (lib/kge/score.c's kg_score_query, grad.c's pairs
 * passes) within a relative 1e-5, through the CPU backend and through
 * the thread functions on an emulated grid (256 and 32 threads a block,
 * partial last blocks, guard floats), and the backward against float64
 * finite differences.  TransR is not a query form of the seam.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compute/backend.h"
#include "compute/devops_query.h"
#include "compute/devops_rows.h"
#include "compute/devops_score.h"
#include "core/rng.h"
#include "core/util.h"
#include "kge/grad.h"
#include "kge/score.h"
#include "devops_emu.h"
#include "test.h"

/* The models with a query form, and theirs. */
static const struct {
	enum kg_model_kind kind;
	enum kg_qform form;
} models[] = {
	{ KG_MODEL_TRANSE_L1, KG_QFORM_ADD },
	{ KG_MODEL_TRANSE_L2, KG_QFORM_ADD },
	{ KG_MODEL_DISTMULT, KG_QFORM_MUL },
	{ KG_MODEL_COMPLEX, KG_QFORM_COMPLEX },
	{ KG_MODEL_ROTATE, KG_QFORM_ROTATE },
	{ KG_MODEL_RESCAL, KG_QFORM_RESCAL },
};

static struct kg_backend *cpu;

static int
close_rel(const float *a, const float *b, size_t n, const char *what)
{
	return close_tol(a, b, n, 1e-5f, what);
}

/* The forward: q against kg_score_query, row by row. */
static void
test_query_forward(void)
{
	static const size_t ns[] = { 1, 7, 37 }, ds[] = { 2, 8, 18 };
	struct kg_rng r;
	size_t a, b, c, k, s, i;

	kg_rng_seed(&r, 31, 0);
	for (a = 0; a < KG_ARRAY_LEN(models); a++)
		for (b = 0; b < KG_ARRAY_LEN(ns); b++)
			for (c = 0; c < KG_ARRAY_LEN(ds); c++)
				for (s = 0; s < 2; s++) {
	struct kg_model m;
	size_t n = ns[b], d = ds[c], rw;
	float *f, *rel, *qref, *q1, *q2;

	T_CHECK(kg_model_init(&m, models[a].kind, (uint32_t)d, 0, 6.0f) == 0);
	rw = m.rel_width;
	T_CHECK(rw == kg_qform_width(models[a].form, d));
	f = rnd(&r, n * d, -1, 1);
	rel = rnd(&r, n * rw, -2, 2);
	qref = rnd(&r, n * d, 0, 0);
	q1 = dup(qref, n * d);
	for (i = 0; i < n; i++)
		kg_score_query(&m, (enum kg_side)s, f + i * d, rel + i * rw,
		    qref + i * d);
	T_CHECK(kg_be_query(cpu, models[a].form, (int)s, n, d, f, rel, q1) ==
	    0);
	T_CHECKF(close_rel(q1, qref, n * d, "query"), "%s side %zu n %zu d %zu",
	    kg_model_name(m.kind), s, n, d);
	for (k = 0; k < KG_ARRAY_LEN(bdims); k++) {
		q2 = dup(qref, n * d);
		memset(q2, 0, n * d * sizeof(*q2));
		EMU(bdims[k], n * d, kg_dev_t_query, (int)models[a].form,
		    (int)s, n, d, f, rel, q2);
		T_CHECKF(close_rel(q2, qref, n * d, "query (grid)"),
		    "%s side %zu n %zu d %zu block %u", kg_model_name(m.kind),
		    s, n, d, bdims[k]);
		free(q2);
	}
	free(f);
	free(rel);
	free(qref);
	free(q1);
				}
}

/*
 * A whole pairs pass (query, similarity, backward through both) against
 * grad.c's kg_grad_pairs_forward and kg_grad_pairs_backward: scores and
 * the gradients of the fixed, relation and candidate rows.
 */
static void
test_pairs_chain(void)
{
	static const size_t ns[] = { 1, 9, 40 }, ds[] = { 8, 22 };
	struct kg_rng r;
	size_t a, b, c, s, k;

	kg_rng_seed(&r, 32, 0);
	for (a = 0; a < KG_ARRAY_LEN(models); a++)
		for (b = 0; b < KG_ARRAY_LEN(ns); b++)
			for (c = 0; c < KG_ARRAY_LEN(ds); c++)
				for (s = 0; s < 2; s++)
					for (k = 0; k < KG_ARRAY_LEN(bdims) + 1;
					    k++) {
	struct kg_model m;
	enum kg_kern_sim sim;
	size_t n = ns[b], d = ds[c], rw;
	float *f, *rel, *cand, *g, *work, *score, *gf, *gr, *gc;
	float *q, *dist, *sc, *gq, *gf2, *gr2, *gc2;
	enum kg_qform form = models[a].form;

	T_CHECK(kg_model_init(&m, models[a].kind, (uint32_t)d, 0, 6.0f) == 0);
	rw = m.rel_width;
	sim = kg_score_sim(&m);
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
	q = rnd(&r, n * d, 0, 0);
	dist = rnd(&r, n, 0, 0);
	sc = rnd(&r, n, 0, 0);
	gq = rnd(&r, n * d, 0, 0);
	gf2 = rnd(&r, n * d, 0, 0);
	gr2 = rnd(&r, n * rw, 0, 0);
	gc2 = rnd(&r, n * d, 0, 0);
	if (k == KG_ARRAY_LEN(bdims)) {
		/* Through the CPU backend. */
		T_CHECK(kg_be_query(cpu, form, (int)s, n, d, f, rel, q) == 0);
		T_CHECK(kg_be_pairs(cpu, sim, n, d, m.gamma, q, cand, sc,
		    dist) == 0);
		T_CHECK(kg_be_pairs_backward(cpu, sim, n, d, q, cand, g, dist,
		    gq, gc2) == 0);
		T_CHECK(kg_be_query_backward(cpu, form, (int)s, n, d, f, rel, gq,
		    gf2, gr2) == 0);
	} else {
		unsigned bd = bdims[k];

		EMU(bd, n * d, kg_dev_t_query, (int)form, (int)s, n, d, f, rel,
		    q);
		EMU(bd, n, kg_dev_t_pairs, (int)sim, n, d, m.gamma, q, cand, sc,
		    dist);
		EMU(bd, n * d, kg_dev_t_pairs_bwd, (int)sim, n, d, q, cand, g,
		    dist, gq, gc2);
		if (k == 0)	/* one launch for both */
			EMU(bd, n * (d + rw), kg_dev_t_query_bwd, (int)form,
			    (int)s, n, d, f, rel, gq, gf2, gr2);
		else {
			EMU(bd, n * d, kg_dev_t_query_bwd_f, (int)form, (int)s,
			    n, d, f, rel, gq, gf2);
			EMU(bd, n * rw, kg_dev_t_query_bwd_r, (int)form, (int)s,
			    n, d, f, rel, gq, gr2);
		}
	}
	T_CHECKF(close_rel(sc, score, n, "score") &&
	    close_rel(gf2, gf, n * d, "gfixed") &&
	    close_rel(gr2, gr, n * rw, "grel") &&
	    close_rel(gc2, gc, n * d, "gcand"), "%s side %zu n %zu d %zu way %zu",
	    kg_model_name(m.kind), s, n, d, k);
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
	free(dist);
	free(sc);
	free(gq);
	free(gf2);
	free(gr2);
	free(gc2);
					}
}

/* sum_l w_l Q(f, rel)_l in double, from the element function. */
static double
objective(int form, int side, size_t d, const float *f, const float *rel,
    const float *w)
{
	double s = 0.0;
	size_t l;

	for (l = 0; l < d; l++)
		s += (double)w[l] * (double)kg_dev_query_elem(form, side, d, f,
		    rel, l);
	return s;
}

/* The backward against central differences of sum_l w_l q_l. */
static void
test_query_fd(void)
{
	static const size_t ds[] = { 4, 10 };
	const float h = 1e-2f;
	struct kg_rng r;
	size_t a, c, s, l, x;

	kg_rng_seed(&r, 33, 0);
	for (a = 0; a < KG_ARRAY_LEN(models); a++)
		for (c = 0; c < KG_ARRAY_LEN(ds); c++)
			for (s = 0; s < 2; s++) {
	int form = (int)models[a].form;
	size_t d = ds[c], rw = kg_dev_qform_width(form, d);
	float *f = rnd(&r, d, -1, 1), *rel = rnd(&r, rw, -1, 1);
	float *w = rnd(&r, d, -1, 1), *gf = rnd(&r, d, 0, 0);
	float *gr = rnd(&r, rw, 0, 0);
	int ok = 1;

	T_CHECK(kg_be_query_backward(cpu, models[a].form, (int)s, 1, d, f,
	    rel, w, gf, gr) == 0);
	for (x = 0; x < 2; x++)
		for (l = 0; l < (x == 0 ? d : rw); l++) {
			float *p = x == 0 ? f + l : rel + l, keep = *p;
			double up, down, fd, an;

			*p = keep + h;
			up = objective(form, (int)s, d, f, rel, w);
			*p = keep - h;
			down = objective(form, (int)s, d, f, rel, w);
			*p = keep;
			fd = (up - down) / (2.0 * (double)h);
			an = x == 0 ? gf[l] : gr[l];
			if (!(fabs(an - fd) <= 1e-3 * fmax(1.0, fabs(fd)))) {
				fprintf(stderr, "%s side %zu d %zu %s[%zu]: "
				    "%.7g, differences %.7g\n",
				    kg_model_name(models[a].kind), s, d,
				    x == 0 ? "gfixed" : "grel", l, an, fd);
				ok = 0;
			}
		}
	T_CHECK(ok);
	free(f);
	free(rel);
	free(w);
	free(gf);
	free(gr);
			}
}

/* The two small operations a step needs besides: scale and dsum. */
static void
test_scale_dsum(void)
{
	static const size_t ns[] = { 1, 255, 257, 600 };
	struct kg_rng r;
	size_t a, k, i;

	kg_rng_seed(&r, 34, 0);
	for (a = 0; a < KG_ARRAY_LEN(ns); a++)
		for (k = 0; k < KG_ARRAY_LEN(bdims); k++) {
			size_t n = ns[a];
			float *x = rnd(&r, n, -3, 3), *y = dup(x, n);
			float *z = dup(x, n);
			double *v = kg_xmallocarray(n, sizeof(*v));
			double acc1 = 0.5, acc2 = 0.5, ref = 0.5;

			for (i = 0; i < n; i++) {
				v[i] = (double)x[i] / 7.0;
				ref += v[i];
			}
			T_CHECK(kg_be_scale(cpu, n, 0.25f, y) == 0);
			EMU(bdims[k], n, kg_dev_t_scale, n, 0.25f, z);
			for (i = 0; i < n; i++)
				x[i] *= 0.25f;
			T_CHECK(close_tol(y, x, n, 0.0f, "scale"));
			T_CHECK(close_tol(z, x, n, 0.0f, "scale (grid)"));
			T_CHECK(kg_be_dsum(cpu, n, v, &acc1) == 0);
			EMU_SUM(bdims[k], (int)a & 1, 0, n, &acc2,
			    kg_dev_v_dsum, n, v);
			T_NEAR(acc1, ref, 1e-12);
			T_NEAR(acc2, ref, 1e-12);
			free(x);
			free(y);
			free(z);
			free(v);
		}
}

int
main(void)
{
	struct kg_device d = KG_DEVICE_INIT;

	cpu = kg_backend_open(&d);
	if (cpu == NULL)
		return 1;
	T_RUN(test_query_forward);
	T_RUN(test_pairs_chain);
	T_RUN(test_query_fd);
	T_RUN(test_scale_dsum);
	kg_backend_free(cpu);
	return T_DONE();
}
