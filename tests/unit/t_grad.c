/*
 * Gradient checks for every model: the analytic backward passes of
 * lib/kge/grad.c against central finite differences of the float64
 * reference score (kge_ref.h), for single triples (pairs) and for chunked
 * negatives, corrupting heads and tails, at a small dimension and at one
 * that runs the vector loops (8 lanes) and their remainders.
 */
#include "kge/grad.h"
#include "kge/model.h"
#include "kge/score.h"
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


/*
 * Relation prediction: n pairs (h_i, t_i) against NR relation rows.  The
 * forward against the reference score(h_i, R_k, t_i), the backward of
 * sum_ik g_ik score_ik against central differences.
 */
#define NR 5

struct rprob {
	struct kg_model m;
	double h[NQ * D], t[NQ * D], R[NR * D * D], g[NQ * NR];
};

static double
rp_ref_loss(const struct rprob *p)
{
	size_t d = p->m.dim, rw = p->m.rel_width, i, k;
	double L = 0.0;

	for (i = 0; i < NQ; i++)
		for (k = 0; k < NR; k++)
			L += p->g[i * NR + k] * kge_ref_score(&p->m,
			    p->h + i * d, p->R + k * rw, p->t + i * d);
	return L;
}

static int
rp_fd(struct rprob *p, double *x, const float *ga, size_t n, const char *what)
{
	size_t i;
	int bad = 0;

	for (i = 0; i < n; i++) {
		double keep = x[i], lp, lm, fd, eps = 1e-5;

		x[i] = keep + eps;
		lp = rp_ref_loss(p);
		x[i] = keep - eps;
		lm = rp_ref_loss(p);
		x[i] = keep;
		fd = (lp - lm) / (2 * eps);
		if (fabs(fd - ga[i]) > 2e-3 * fmax(1.0, fabs(fd)) &&
		    bad++ < 3)
			fprintf(stderr, "%s relpred %s[%zu]: analytic %.6g, "
			    "finite difference %.6g\n",
			    kg_model_name(p->m.kind), what, i, (double)ga[i],
			    fd);
	}
	return bad;
}

static int
check_relpred(enum kg_model_kind kind, uint32_t dim, uint64_t seed)
{
	static struct rprob p;
	static float h[NQ * D], t[NQ * D], R[NR * D * D], g[NQ * NR];
	static float gh[NQ * D], gt[NQ * D], gR[NR * D * D], out[NQ * NR];
	size_t d, rw, i, k;
	struct kg_rng rng;
	float *work;
	int bad = 0;
	double nz = 0.0;

	memset(&p, 0, sizeof(p));
	if (kg_model_init(&p.m, kind, dim, 0, 3.0f) < 0)
		return 1;
	d = p.m.dim;
	rw = p.m.rel_width;
	kg_rng_seed(&rng, seed, (uint64_t)kind);
	fill(&rng, p.h, NQ * d, 1.0);
	fill(&rng, p.t, NQ * d, 1.0);
	fill(&rng, p.R, NR * rw, 1.0);
	fill(&rng, p.g, NQ * NR, 1.0);
	to_float(p.h, h, NQ * d);
	to_float(p.t, t, NQ * d);
	to_float(p.R, R, NR * rw);
	to_float(p.g, g, NQ * NR);
	memset(gh, 0, sizeof(gh));
	memset(gt, 0, sizeof(gt));
	memset(gR, 0, sizeof(gR));
	work = kg_xcalloc(kg_grad_relpred_work_size(&p.m, NQ, NR),
	    sizeof(float));
	kg_grad_relpred_forward(&p.m, NQ, h, t, R, NR, out, work);
	for (i = 0; i < NQ; i++)
		for (k = 0; k < NR; k++) {
			double s = kge_ref_score(&p.m, p.h + i * d,
			    p.R + k * rw, p.t + i * d);

			if (fabs(out[i * NR + k] - s) > 1e-4 *
			    fmax(1.0, fabs(s))) {
				fprintf(stderr, "%s relpred: score %.6g, "
				    "reference %.6g\n", kg_model_name(kind),
				    (double)out[i * NR + k], s);
				bad++;
			}
		}
	kg_grad_relpred_backward(&p.m, NQ, h, t, R, NR, g, gh, gt, gR, work);
	free(work);
	for (i = 0; i < NQ * d; i++)
		nz += fabs(gh[i]) + fabs(gt[i]);
	if (!(nz > 0.0))	/* all-zero gradients would prove nothing */
		bad++;
	bad += rp_fd(&p, p.h, gh, NQ * d, "h");
	bad += rp_fd(&p, p.t, gt, NQ * d, "t");
	bad += rp_fd(&p, p.R, gR, NR * rw, "R");
	return bad;
}

static void
t_relation_prediction(void)
{
	size_t i;

	for (i = 0; i < KG_ARRAY_LEN(kinds); i++) {
		struct kg_model m;
		enum kg_kern_sim sim;

		T_CHECK(kg_model_init(&m, kinds[i], 6, 4, 1.0f) == 0);
		if (kg_score_pair_sim(&m, &sim) < 0) {
			T_CHECK(kinds[i] == KG_MODEL_ROTATE ||
			    kinds[i] == KG_MODEL_TRANSR);
			continue;
		}
		T_CHECKF(check_relpred(kinds[i], 6, 21) == 0, "%s d 6",
		    kg_model_name(kinds[i]));
		T_CHECKF(check_relpred(kinds[i], D, 23) == 0, "%s d %d",
		    kg_model_name(kinds[i]), D);
	}
}

/*
 * DURA against a float64 reference: for the bilinear models score(h, r,
 * t) = Q(h, r) . t = Q'(t, r) . h, so ||Q(h, r)||^2 is the sum over unit
 * vectors e_j of score(h, r, e_j)^2, and ||Q'(t, r)||^2 of
 * score(e_j, r, t)^2.
 */
struct dprob {
	struct kg_model m;
	enum kg_side side;
	double f[NQ * D], r[NQ * D * D], c[NQ * D];
};

static double
sq_query(const struct kg_model *m, const double *x, const double *r,
    int x_is_head)
{
	static double e[D];
	size_t d = m->dim, j;
	double s = 0.0, v;

	for (j = 0; j < d; j++) {
		memset(e, 0, sizeof(e));
		e[j] = 1.0;
		v = x_is_head ? kge_ref_score(m, x, r, e) :
		    kge_ref_score(m, e, r, x);
		s += v * v;
	}
	return s;
}

static double
dura_ref(const struct dprob *p)
{
	size_t d = p->m.dim, rw = p->m.rel_width, i, j;
	int tail = p->side == KG_SIDE_TAIL;
	double s = 0.0;

	for (i = 0; i < NQ; i++) {
		const double *f = p->f + i * d, *c = p->c + i * d;
		const double *r = p->r + i * rw;

		s += sq_query(&p->m, f, r, tail) + sq_query(&p->m, c, r, !tail);
		for (j = 0; j < d; j++)
			s += f[j] * f[j] + c[j] * c[j];
	}
	return 0.7 * s;
}

static int
dura_fd(struct dprob *p, double *x, const float *ga, size_t n,
    const char *what)
{
	size_t i;
	int bad = 0;

	for (i = 0; i < n; i++) {
		double keep = x[i], lp, lm, fd, eps = 1e-5;

		x[i] = keep + eps;
		lp = dura_ref(p);
		x[i] = keep - eps;
		lm = dura_ref(p);
		x[i] = keep;
		fd = (lp - lm) / (2 * eps) * 0.5;	/* scale 0.5 */
		if (fabs(fd - ga[i]) > 2e-3 * fmax(1.0, fabs(fd)) &&
		    bad++ < 3)
			fprintf(stderr, "%s side %d DURA %s[%zu]: analytic "
			    "%.6g, finite difference %.6g\n",
			    kg_model_name(p->m.kind), p->side, what, i,
			    (double)ga[i], fd);
	}
	return bad;
}

static int
check_dura(enum kg_model_kind kind, enum kg_side side, uint32_t dim)
{
	static struct dprob p;
	static float f[NQ * D], r[NQ * D * D], c[NQ * D];
	static float gf[NQ * D], gr[NQ * D * D], gc[NQ * D];
	const float *rp[NQ];
	float *gp[NQ], *work;
	struct kg_rng rng;
	size_t d, rw, i;
	double v;
	int bad = 0;

	memset(&p, 0, sizeof(p));
	if (kg_model_init(&p.m, kind, dim, 0, 0.0f) < 0)
		return 1;
	p.side = side;
	d = p.m.dim;
	rw = p.m.rel_width;
	kg_rng_seed(&rng, 31, (uint64_t)kind * 2 + (uint64_t)side);
	fill(&rng, p.f, NQ * d, 1.0);
	fill(&rng, p.r, NQ * rw, 1.0);
	fill(&rng, p.c, NQ * d, 1.0);
	to_float(p.f, f, NQ * d);
	to_float(p.r, r, NQ * rw);
	to_float(p.c, c, NQ * d);
	memset(gf, 0, sizeof(gf));
	memset(gr, 0, sizeof(gr));
	memset(gc, 0, sizeof(gc));
	for (i = 0; i < NQ; i++) {
		rp[i] = r + i * rw;
		gp[i] = gr + i * rw;
	}
	work = kg_xcalloc(kg_grad_dura_work_size(&p.m), sizeof(float));
	v = kg_grad_dura(&p.m, side, NQ, f, rp, c, 0.7, 0.5, gf, gp, gc, work);
	free(work);
	if (fabs(v - dura_ref(&p)) > 1e-4 * fmax(1.0, fabs(v))) {
		fprintf(stderr, "%s side %d DURA %.8g, reference %.8g\n",
		    kg_model_name(kind), side, v, dura_ref(&p));
		bad++;
	}
	bad += dura_fd(&p, p.f, gf, NQ * d, "fixed");
	bad += dura_fd(&p, p.r, gr, NQ * rw, "rel");
	bad += dura_fd(&p, p.c, gc, NQ * d, "cand");
	return bad;
}

static void
t_dura(void)
{
	static const enum kg_model_kind bil[] = { KG_MODEL_DISTMULT,
	    KG_MODEL_COMPLEX, KG_MODEL_RESCAL };
	size_t i;

	for (i = 0; i < KG_ARRAY_LEN(bil); i++) {
		T_CHECK(check_dura(bil[i], KG_SIDE_TAIL, 6) == 0);
		T_CHECK(check_dura(bil[i], KG_SIDE_HEAD, 6) == 0);
		T_CHECK(check_dura(bil[i], KG_SIDE_TAIL, D) == 0);
		T_CHECK(check_dura(bil[i], KG_SIDE_HEAD, D) == 0);
	}
}

int
main(void)
{
	T_RUN(t_pairs_all_models);
	T_RUN(t_chunk_all_models);
	T_RUN(t_chunk_no_cand_grad);
	T_RUN(t_shared_relation_rows);
	T_RUN(t_relation_prediction);
	T_RUN(t_dura);
	return T_DONE();
}
