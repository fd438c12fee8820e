/*
 * Gradient checks for every model: the analytic backward passes of
 * lib/kge/grad.c against central finite differences of the float64
 * reference score (kge_ref.h), for single triples (pairs) and for chunked
 * negatives, corrupting heads and tails, at a small dimension and at one
 * that runs the vector loops (8 lanes) and their remainders.
 */
#include "kge/grad.h"
#include "kge/model.h"
#include "core/util.h"
#include "kge_ref.h"
#include "test.h"

#define D 22		/* the largest dimension tested */
#define NQ 3
#define NC 4

static const enum kg_model_kind kinds[] = {
	KG_MODEL_TRANSE_L1, KG_MODEL_TRANSE_L2, KG_MODEL_DISTMULT,
	KG_MODEL_COMPLEX, KG_MODEL_ROTATE, KG_MODEL_RESCAL, KG_MODEL_TRANSR
};

struct prob {
	struct kg_model m;
	enum kg_side side;
	size_t nq, nc;		/* pairs: nc = 0 */
	double fixed[NQ * D], rel[NQ * D * D], cand[NC * D];
	double g[NQ * NC];
};

/* sum_ij g_ij score_ij in double for the current parameters. */
static double
ref_loss(const struct prob *p)
{
	size_t d = p->m.dim, rw = p->m.rel_width, i, j;
	double L = 0.0;

	for (i = 0; i < p->nq; i++) {
		const double *f = p->fixed + i * d, *r = p->rel + i * rw;

		if (p->nc == 0) {
			const double *c = p->cand + i * d;

			L += p->g[i] * (p->side == KG_SIDE_TAIL ?
			    kge_ref_score(&p->m, f, r, c) :
			    kge_ref_score(&p->m, c, r, f));
			continue;
		}
		for (j = 0; j < p->nc; j++) {
			const double *c = p->cand + j * d;

			L += p->g[i * p->nc + j] * (p->side == KG_SIDE_TAIL ?
			    kge_ref_score(&p->m, f, r, c) :
			    kge_ref_score(&p->m, c, r, f));
		}
	}
	return L;
}

static void
fill(struct kg_rng *rng, double *x, size_t n, double scale)
{
	size_t i;

	for (i = 0; i < n; i++)
		x[i] = (float)(scale * (2.0 * kg_rng_uniform(rng) - 1.0));
}

static void
to_float(const double *x, float *y, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		y[i] = (float)x[i];
}

/* Compare an analytic gradient with central differences of ref_loss. */
static int
fd_compare(struct prob *p, double *x, const float *ga, size_t n,
    const char *what)
{
	size_t i;
	int bad = 0;

	for (i = 0; i < n; i++) {
		double keep = x[i], lp, lm, fd, eps = 1e-5;

		x[i] = keep + eps;
		lp = ref_loss(p);
		x[i] = keep - eps;
		lm = ref_loss(p);
		x[i] = keep;
		fd = (lp - lm) / (2 * eps);
		if (fabs(fd - ga[i]) > 2e-3 * fmax(1.0, fabs(fd))) {
			if (bad++ < 3)
				fprintf(stderr, "%s side %d %s %s[%zu]: "
				    "analytic %.6g, finite difference %.6g\n",
				    kg_model_name(p->m.kind), p->side,
				    p->nc ? "chunk" : "pairs", what, i,
				    (double)ga[i], fd);
		}
	}
	return bad;
}

/* One model, one side, pairs (chunk = 0) or chunk, dimension dim (TransR:
 * relation space k): forward against the reference, backward against
 * differences. */
static int
check_one(enum kg_model_kind kind, enum kg_side side, int chunk,
    uint32_t dim, uint32_t k, uint64_t seed)
{
	static struct prob p;
	static float ff[NQ * D], fr[NQ * D * D], fc[NC * D];
	static float gf[NQ * D], gr[NQ * D * D], gc[NC * D];
	static float out[NQ * NC], gg[NQ * NC];
	float *work;
	struct kg_rng rng;
	size_t d, rw, nf, nr, ncand, nout, i, j;
	int bad = 0;

	memset(&p, 0, sizeof(p));
	if (kg_model_init(&p.m, kind, dim, k, 3.0f) < 0)
		return 1;
	kg_rng_seed(&rng, seed, (uint64_t)kind * 4 + (uint64_t)side * 2 +
	    (uint64_t)chunk);
	d = p.m.dim;
	rw = p.m.rel_width;
	p.side = side;
	p.nq = NQ;
	p.nc = chunk ? NC : 0;
	nf = NQ * d;
	nr = NQ * rw;
	ncand = (chunk ? NC : NQ) * d;
	nout = chunk ? NQ * NC : NQ;
	fill(&rng, p.fixed, nf, 1.0);
	fill(&rng, p.rel, nr, kind == KG_MODEL_ROTATE ? 3.1 : 1.0);
	fill(&rng, p.cand, ncand, 1.0);
	fill(&rng, p.g, nout, 1.0);
	to_float(p.fixed, ff, nf);
	to_float(p.rel, fr, nr);
	to_float(p.cand, fc, ncand);
	to_float(p.g, gg, nout);
	memset(gf, 0, sizeof(gf));
	memset(gr, 0, sizeof(gr));
	memset(gc, 0, sizeof(gc));
	work = kg_xcalloc(kg_grad_work_size(&p.m, NQ, chunk ? NC : 1),
	    sizeof(float));
	if (chunk)
		kg_grad_chunk_forward(&p.m, side, NQ, ff, fr, fc, NC, out,
		    work);
	else
		kg_grad_pairs_forward(&p.m, side, NQ, ff, fr, fc, out, work);
	for (i = 0; i < NQ; i++)
		for (j = 0; j < (chunk ? NC : 1); j++) {
			const double *f = p.fixed + i * d, *r = p.rel + i * rw;
			const double *c = p.cand + (chunk ? j : i) * d;
			double s = side == KG_SIDE_TAIL ?
			    kge_ref_score(&p.m, f, r, c) :
			    kge_ref_score(&p.m, c, r, f);
			float o = out[chunk ? i * NC + j : i];

			if (fabs(o - s) > 1e-4 * fmax(1.0, fabs(s))) {
				fprintf(stderr, "%s side %d: score %.6g, "
				    "reference %.6g\n", kg_model_name(kind),
				    side, (double)o, s);
				bad++;
			}
		}
	if (chunk)
		kg_grad_chunk_backward(&p.m, side, NQ, ff, fr, fc, NC, gg, gf,
		    gr, gc, work);
	else
		kg_grad_pairs_backward(&p.m, side, NQ, ff, fr, fc, gg, gf, gr,
		    gc, work);
	free(work);
	bad += fd_compare(&p, p.fixed, gf, nf, "fixed");
	bad += fd_compare(&p, p.rel, gr, nr, "rel");
	bad += fd_compare(&p, p.cand, gc, ncand, "cand");
	return bad;
}

/* Every model, both sides, pairs or chunk, at dimension 6 (TransR: k 4)
 * and 22 (k 13). */
static void
check_all(int chunk)
{
	size_t i;

	for (i = 0; i < KG_ARRAY_LEN(kinds); i++) {
		const char *name = kg_model_name(kinds[i]);

		T_CHECKF(check_one(kinds[i], KG_SIDE_TAIL, chunk, 6, 4,
		    11 + chunk) == 0, "%s d 6", name);
		T_CHECKF(check_one(kinds[i], KG_SIDE_HEAD, chunk, 6, 4,
		    13 + chunk) == 0, "%s d 6", name);
		T_CHECKF(check_one(kinds[i], KG_SIDE_TAIL, chunk, D, 13,
		    15 + chunk) == 0, "%s d %d", name, D);
		T_CHECKF(check_one(kinds[i], KG_SIDE_HEAD, chunk, D, 13,
		    17 + chunk) == 0, "%s d %d", name, D);
	}
}

static void
t_pairs_all_models(void)
{
	check_all(0);
}

static void
t_chunk_all_models(void)
{
	check_all(1);
}

/* Chunk backward without candidate gradients gives the same query side. */
static void
t_chunk_no_cand_grad(void)
{
	struct kg_model m;
	float f[NQ * D], r[NQ * D], c[NC * D], g[NQ * NC], out[NQ * NC];
	float gf1[NQ * D] = { 0 }, gr1[NQ * D] = { 0 }, gc[NC * D] = { 0 };
	float gf2[NQ * D] = { 0 }, gr2[NQ * D] = { 0 }, *work;
	struct kg_rng rng;
	size_t i;

	T_CHECK(kg_model_init(&m, KG_MODEL_COMPLEX, D, 0, 0.0f) == 0);
	kg_rng_seed(&rng, 5, 0);
	for (i = 0; i < NQ * D; i++) {
		f[i] = (float)kg_rng_normal(&rng);
		r[i] = (float)kg_rng_normal(&rng);
	}
	for (i = 0; i < NC * D; i++)
		c[i] = (float)kg_rng_normal(&rng);
	for (i = 0; i < NQ * NC; i++)
		g[i] = (float)kg_rng_normal(&rng);
	work = kg_xcalloc(kg_grad_work_size(&m, NQ, NC), sizeof(float));
	kg_grad_chunk_forward(&m, KG_SIDE_TAIL, NQ, f, r, c, NC, out, work);
	kg_grad_chunk_backward(&m, KG_SIDE_TAIL, NQ, f, r, c, NC, g, gf1, gr1,
	    gc, work);
	kg_grad_chunk_forward(&m, KG_SIDE_TAIL, NQ, f, r, c, NC, out, work);
	kg_grad_chunk_backward(&m, KG_SIDE_TAIL, NQ, f, r, c, NC, g, gf2, gr2,
	    NULL, work);
	for (i = 0; i < NQ * D; i++) {
		T_CHECK(gf1[i] == gf2[i]);
		T_CHECK(gr1[i] == gr2[i]);
	}
	free(work);
}

/*
 * The _rows variants: queries 0 and 2 share relation row A (and its
 * gradient row); the result must equal the contiguous passes with the
 * two gradient rows summed.
 */
static int
check_rows(enum kg_model_kind kind, enum kg_side side)
{
	static float f[NQ * D], rel[NQ * D * D], c[NC * D], g[NQ * NC];
	static float gf1[NQ * D], gr1[NQ * D * D], gc1[NC * D], out1[NQ * NC];
	static float gf2[NQ * D], gr2[2 * D * D], gc2[NC * D], out2[NQ * NC];
	struct kg_model m;
	struct kg_rng rng;
	const float *rp[NQ];
	float *gp[NQ], *work;
	size_t rw, i, pass;
	int bad = 0;

	if (kg_model_init(&m, kind, D, 13, 2.0f) < 0)
		return 1;
	rw = m.rel_width;
	kg_rng_seed(&rng, 77, (uint64_t)kind * 2 + (uint64_t)side);
	for (i = 0; i < NQ * D; i++)
		f[i] = (float)kg_rng_normal(&rng);
	for (i = 0; i < 2 * rw; i++)
		rel[i] = (float)kg_rng_normal(&rng);
	memcpy(rel + 2 * rw, rel, rw * sizeof(float));	/* row 2 = row 0 */
	for (i = 0; i < NC * D; i++)
		c[i] = (float)kg_rng_normal(&rng);
	for (i = 0; i < NQ * NC; i++)
		g[i] = (float)kg_rng_normal(&rng);
	rp[0] = rp[2] = rel;
	rp[1] = rel + rw;
	gp[0] = gp[2] = gr2;
	gp[1] = gr2 + rw;
	work = kg_xcalloc(kg_grad_work_size(&m, NQ, NC), sizeof(float));
	for (pass = 0; pass < 2; pass++) {
		size_t nc = pass ? NC : 1, nf = NQ * D, ncand = pass ? NC * D :
		    NQ * D;

		memset(gf1, 0, sizeof(gf1));
		memset(gr1, 0, sizeof(gr1));
		memset(gc1, 0, sizeof(gc1));
		memset(gf2, 0, sizeof(gf2));
		memset(gr2, 0, sizeof(gr2));
		memset(gc2, 0, sizeof(gc2));
		if (pass) {
			kg_grad_chunk_forward(&m, side, NQ, f, rel, c, nc,
			    out1, work);
			kg_grad_chunk_backward(&m, side, NQ, f, rel, c, nc, g,
			    gf1, gr1, gc1, work);
			kg_grad_chunk_forward_rows(&m, side, NQ, f, rp, c, nc,
			    out2, work);
			kg_grad_chunk_backward_rows(&m, side, NQ, f, rp, c, nc,
			    g, gf2, gp, gc2, work);
		} else {
			kg_grad_pairs_forward(&m, side, NQ, f, rel, c, out1,
			    work);
			kg_grad_pairs_backward(&m, side, NQ, f, rel, c, g, gf1,
			    gr1, gc1, work);
			kg_grad_pairs_forward_rows(&m, side, NQ, f, rp, c, out2,
			    work);
			kg_grad_pairs_backward_rows(&m, side, NQ, f, rp, c, g,
			    gf2, gp, gc2, work);
		}
		for (i = 0; i < NQ * nc; i++)
			bad += out1[i] != out2[i];
		for (i = 0; i < nf; i++)
			bad += fabsf(gf1[i] - gf2[i]) > 1e-5f;
		for (i = 0; i < ncand; i++)
			bad += fabsf(gc1[i] - gc2[i]) > 1e-5f;
		for (i = 0; i < rw; i++) {
			bad += fabsf(gr1[i] + gr1[2 * rw + i] - gr2[i]) >
			    1e-4f * fmaxf(1.0f, fabsf(gr2[i]));
			bad += fabsf(gr1[rw + i] - gr2[rw + i]) > 1e-5f;
		}
	}
	free(work);
	if (bad)
		fprintf(stderr, "%s side %d: %d mismatches\n",
		    kg_model_name(kind), side, bad);
	return bad;
}

static void
t_shared_relation_rows(void)
{
	size_t i;

	for (i = 0; i < KG_ARRAY_LEN(kinds); i++) {
		T_CHECK(check_rows(kinds[i], KG_SIDE_TAIL) == 0);
		T_CHECK(check_rows(kinds[i], KG_SIDE_HEAD) == 0);
	}
}


int
main(void)
{
	T_RUN(t_pairs_all_models);
	T_RUN(t_chunk_all_models);
	T_RUN(t_chunk_no_cand_grad);
	T_RUN(t_shared_relation_rows);
	return T_DONE();
}
