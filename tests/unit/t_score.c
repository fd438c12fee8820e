/*
 * score: one forward for training and ranking.  Ranking
 * (kg_model_score_many, kg_model_score) must give what training computes
 * (kg_grad_chunk_forward, kg_grad_pairs_forward) bit for bit, except for
 * the two models whose ranking kernels differ on purpose (lib/kge/score.h:
 * TransR and RotatE); there both must agree with a float64 reference and
 * with each other to float rounding.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "compute/compute.h"
#include "core/util.h"
#include "kge/grad.h"
#include "kge/model.h"
#include "kge/score.h"
#include "kge_ref.h"
#include "test.h"

static const enum kg_model_kind kinds[] = {
	KG_MODEL_TRANSE_L1, KG_MODEL_TRANSE_L2, KG_MODEL_DISTMULT,
	KG_MODEL_COMPLEX, KG_MODEL_ROTATE, KG_MODEL_RESCAL, KG_MODEL_TRANSR
};

static int
ranks_differently(enum kg_model_kind kind)
{
	return kind == KG_MODEL_TRANSR || kind == KG_MODEL_ROTATE;
}

struct batch {
	struct kg_model m;
	size_t nq, nc;
	float *fixed, *rel, *cand, *rank, *train, *work, *gwork;
};

static void
batch_init(struct batch *b, enum kg_model_kind kind, uint32_t dim,
    size_t nq, size_t nc, uint64_t seed)
{
	struct kg_rng rng;
	size_t i;

	if (kg_model_init(&b->m, kind, dim, kind == KG_MODEL_TRANSR ? 13 : 0,
	    6.0f) < 0)
		abort();
	b->nq = nq;
	b->nc = nc;
	b->fixed = kg_xmallocarray(nq * dim, sizeof(float));
	b->rel = kg_xmallocarray(nq * b->m.rel_width, sizeof(float));
	b->cand = kg_xmallocarray((nc > nq ? nc : nq) * dim, sizeof(float));
	b->rank = kg_xmallocarray(nq * nc, sizeof(float));
	b->train = kg_xmallocarray(nq * nc, sizeof(float));
	b->work = kg_xmallocarray(kg_model_score_work_size(&b->m, nq, nc),
	    sizeof(float));
	b->gwork = kg_xmallocarray(kg_grad_work_size(&b->m, nq, nc),
	    sizeof(float));
	kg_rng_seed(&rng, seed, kind);
	for (i = 0; i < nq * dim; i++)
		b->fixed[i] = (float)(0.5 * kg_rng_normal(&rng));
	for (i = 0; i < nq * b->m.rel_width; i++)
		b->rel[i] = (float)(0.5 * kg_rng_normal(&rng));
	for (i = 0; i < (nc > nq ? nc : nq) * dim; i++)
		b->cand[i] = (float)(0.5 * kg_rng_normal(&rng));
}

static void
batch_release(struct batch *b)
{
	free(b->fixed);
	free(b->rel);
	free(b->cand);
	free(b->rank);
	free(b->train);
	free(b->work);
	free(b->gwork);
}

/* The reference score of query i with candidate j, and its scale. */
static double
ref_at(const struct batch *b, enum kg_side side, size_t i, size_t j,
    double *scale)
{
	const float *f = b->fixed + i * b->m.dim;
	const float *r = b->rel + i * b->m.rel_width;
	const float *c = b->cand + j * b->m.dim;

	*scale = kge_ref_scale(&b->m, f, r, c);
	return side == KG_SIDE_TAIL ? kge_ref_score_f(&b->m, f, r, c) :
	    kge_ref_score_f(&b->m, c, r, f);
}

/* Ranking against training on one chunk; returns the mismatches. */
static int
check_chunk(enum kg_model_kind kind, uint32_t dim, size_t nq, size_t nc,
    uint64_t seed)
{
	struct batch b;
	size_t i, j;
	int side, bad = 0;

	batch_init(&b, kind, dim, nq, nc, seed);
	for (side = 0; side < 2; side++) {
		kg_model_score_many(&b.m, (enum kg_side)side, nq, b.fixed,
		    b.rel, b.cand, nc, b.rank, b.work);
		kg_grad_chunk_forward(&b.m, (enum kg_side)side, nq, b.fixed,
		    b.rel, b.cand, nc, b.train, b.gwork);
		for (i = 0; i < nq; i++)
			for (j = 0; j < nc; j++) {
				float r = b.rank[i * nc + j];
				float t = b.train[i * nc + j];
				double scale, want = ref_at(&b, (enum kg_side)side,
				    i, j, &scale);

				if (!ranks_differently(kind)) {
					bad += r != t;
					continue;
				}
				/* TransR's GEMM form errs on squares. */
				if (kind == KG_MODEL_TRANSR)
					bad += !(fabs(pow(6.0 - r, 2) -
					    pow(6.0 - want, 2)) <= 4e-6 * scale);
				else
					bad += !(fabs(r - want) <= 2e-6 * scale);
				bad += !(fabs(t - want) <= 2e-6 * scale);
			}
	}
	if (bad)
		fprintf(stderr, "%s d %u, %zu x %zu: %d mismatches\n",
		    kg_model_name(kind), dim, nq, nc, bad);
	batch_release(&b);
	return bad;
}

static void
t_ranking_is_training(void)
{
	size_t i;

	for (i = 0; i < KG_ARRAY_LEN(kinds); i++) {
		T_CHECK(check_chunk(kinds[i], 6, 3, 5, 1) == 0);
		T_CHECK(check_chunk(kinds[i], 22, 4, 19, 2) == 0);
		T_CHECK(check_chunk(kinds[i], 64, 9, 70, 3) == 0);
	}
}

/*
 * kg_model_score is the pairs form of training, side TAIL, bit for bit;
 * head scores of the pairs form agree to rounding.
 */
static void
t_single_is_training_pairs(void)
{
	size_t i, k;

	for (i = 0; i < KG_ARRAY_LEN(kinds); i++) {
		struct batch b;
		int bad = 0;

		batch_init(&b, kinds[i], 22, 7, 7, 5);
		kg_grad_pairs_forward(&b.m, KG_SIDE_TAIL, 7, b.fixed, b.rel,
		    b.cand, b.train, b.gwork);
		kg_grad_pairs_forward(&b.m, KG_SIDE_HEAD, 7, b.cand, b.rel,
		    b.fixed, b.rank, b.gwork);
		for (k = 0; k < 7; k++) {
			const float *f = b.fixed + k * 22, *c = b.cand + k * 22;
			const float *r = b.rel + k * b.m.rel_width;
			float s = kg_model_score(&b.m, f, r, c);
			double scale = kge_ref_scale(&b.m, f, r, c);

			bad += s != b.train[k];
			bad += !(fabs(b.rank[k] - s) <= 2e-6 * scale);
			bad += !(fabs(s - kge_ref_score_f(&b.m, f, r, c)) <=
			    2e-6 * scale);
		}
		T_CHECKF(bad == 0, "%s: %d mismatches",
		    kg_model_name(kinds[i]), bad);
		batch_release(&b);
	}
}

/*
 * TransR shares the projection of the candidates across a run of queries
 * with equal relation rows: sharing it must not change a score, whether
 * the rows are one pointer or equal copies.
 */
static void
t_transr_runs(void)
{
	struct batch b;
	float one[70], tone[70];
	const float *rp[6];
	size_t i, j, rw;
	int rank;

	batch_init(&b, KG_MODEL_TRANSR, 16, 6, 70, 7);
	rw = b.m.rel_width;
	/* Rows A A B A A A, the As as copies. */
	for (i = 1; i < 6; i++)
		if (i != 2)
			memcpy(b.rel + i * rw, b.rel, rw * sizeof(float));
	for (i = 0; i < 6; i++)
		rp[i] = i == 2 ? b.rel + 2 * rw : b.rel;
	kg_model_score_many(&b.m, KG_SIDE_TAIL, 6, b.fixed, b.rel, b.cand, 70,
	    b.rank, b.work);
	kg_grad_chunk_forward_rows(&b.m, KG_SIDE_TAIL, 6, b.fixed, rp, b.cand,
	    70, b.train, b.gwork);
	for (i = 0; i < 6; i++) {
		kg_model_score_many(&b.m, KG_SIDE_TAIL, 1, b.fixed + i * 16,
		    b.rel + i * rw, b.cand, 70, one, b.work);
		kg_grad_chunk_forward(&b.m, KG_SIDE_TAIL, 1, b.fixed + i * 16,
		    b.rel + i * rw, b.cand, 70, tone, b.gwork);
		for (j = 0; j < 70; j++) {
			T_CHECK(tone[j] == b.train[i * 70 + j]);
			/* Ranking's GEMM may round with the shape. */
			T_NEAR(one[j], b.rank[i * 70 + j], 1e-4);
		}
	}
	for (rank = 0; rank < 2; rank++)
		T_CHECK(kg_score_run_end(&b.m, &(struct kg_score_rows){ rank ?
		    NULL : b.rel, rank ? rp : NULL, rw }, 0, 6) == 2);
	batch_release(&b);
}

int
main(void)
{
	kg_compute_init();
	T_RUN(t_ranking_is_training);
	T_RUN(t_single_is_training_pairs);
	T_RUN(t_transr_runs);
	return T_DONE();
}
