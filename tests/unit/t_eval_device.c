/*
 * eval_device: filtered ranking through the device seam on the CPU
 * backend gives the CPU evaluator's ranks exactly (kg_eval_rank_device
 * against kg_eval_rank), optimistic and pessimistic, both sides, every
 * model, filtered and raw, reciprocal relations, on UMLS with random
 * tables and on a fixture of 2500 entities (three tiles, the last one
 * partial) whose tables hold only -1, 0 and 1, so that thousands of
 * candidates tie with the truth; the metrics of each tie policy follow.
 * The exactness rests on the seam's query forms and TransR's projections
 * giving lib/kge/score.c's bits on the CPU backend, checked bit for bit.
 * The options it does not take are refused.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compute/backend.h"
#include "core/rng.h"
#include "core/util.h"
#include "eval/eval.h"
#include "eval/eval_device.h"
#include "kge/model.h"
#include "kge/modeldir.h"
#include "kge/score.h"
#include "kge/train_device.h"
#include "store/store.h"
#include "test.h"
#include "umls_fixture.h"

static struct kg_backend *cpu;

static const enum kg_model_kind kinds[] = {
	KG_MODEL_TRANSE_L1, KG_MODEL_TRANSE_L2, KG_MODEL_DISTMULT,
	KG_MODEL_COMPLEX, KG_MODEL_ROTATE, KG_MODEL_RESCAL, KG_MODEL_TRANSR
};

static const enum kg_ties ties[] = {
	KG_TIES_REALISTIC, KG_TIES_OPTIMISTIC, KG_TIES_PESSIMISTIC
};

/* A model over in-memory tables, filled with N(0, 0.5^2) or {-1, 0, 1}. */
static void
md_make(struct kg_modeldir *md, enum kg_model_kind kind, uint32_t dim,
    uint64_t ne, uint64_t nr, int reciprocal, int integers, uint64_t seed,
    float **ent, float **rel)
{
	struct kg_rng rng;
	size_t i, n;

	*md = (struct kg_modeldir)KG_MODELDIR_INIT;
	if (kg_model_init(&md->model, kind, dim,
	    kind == KG_MODEL_TRANSR ? dim / 2 : 0, 6.0f) < 0)
		abort();
	md->reciprocal = reciprocal;
	md->n_entities = ne;
	md->n_relations = nr;
	md->n_rel_rows = nr * (reciprocal ? 2 : 1);
	n = ne * dim + md->n_rel_rows * md->model.rel_width;
	*ent = kg_xmallocarray(ne * dim + 1, sizeof(float));
	*rel = kg_xmallocarray(md->n_rel_rows * md->model.rel_width + 1,
	    sizeof(float));
	kg_rng_seed(&rng, seed, (uint64_t)kind);
	for (i = 0; i < n; i++) {
		float x = integers ? (float)((int)kg_rng_below(&rng, 3) - 1) :
		    (float)(0.5 * kg_rng_normal(&rng));

		if (i < ne * dim)
			(*ent)[i] = x;
		else
			(*rel)[i - ne * dim] = x;
	}
	md->entities = *ent;
	md->relations = *rel;
}

/*
 * Rank test both ways; the number of ranks that differ (printing the
 * first few), or -1 when either failed.  *tied gets the sum of pess -
 * opt of the CPU's ranks.  The metrics of every tie policy must agree
 * when the ranks do.
 */
static long
compare(const struct kg_modeldir *md, const struct kg_triples *test,
    const struct kg_filter *f, size_t batch, uint64_t *tied)
{
	struct kg_eval_opts o = KG_EVAL_OPTS_INIT;
	struct kg_eval_ranks a, b;
	struct kg_metrics ma[3], mb[3];
	uint64_t i;
	size_t t;
	long bad = 0;
	int side;

	o.filter = f;
	o.batch = batch;
	o.threads = 1;
	if (kg_eval_rank(md, test, &o, &a) < 0)
		return -1;
	if (kg_eval_rank_device(cpu, md, test, &o, &b) < 0) {
		kg_eval_ranks_release(&a);
		return -1;
	}
	if (a.n != b.n || a.n_candidates != b.n_candidates)
		bad++;
	for (side = 0; side < 2; side++)
		for (i = 0; i < test->n; i++) {
			if (tied != NULL)
				*tied += a.pess[side][i] - a.opt[side][i];
			if (a.opt[side][i] == b.opt[side][i] &&
			    a.pess[side][i] == b.pess[side][i])
				continue;
			if (bad++ < 5)
				fprintf(stderr, "%s side %d triple %llu: "
				    "%llu/%llu on the device, %llu/%llu on "
				    "the CPU\n", kg_model_name(md->model.kind),
				    side, (unsigned long long)i,
				    (unsigned long long)b.opt[side][i],
				    (unsigned long long)b.pess[side][i],
				    (unsigned long long)a.opt[side][i],
				    (unsigned long long)a.pess[side][i]);
		}
	for (t = 0; bad == 0 && t < KG_ARRAY_LEN(ties); t++) {
		kg_eval_metrics(&a, test, -1, ties[t], ma);
		kg_eval_metrics(&b, test, -1, ties[t], mb);
		for (side = 0; side < 3; side++)
			if (ma[side].sum_rr != mb[side].sum_rr ||
			    ma[side].hits1 != mb[side].hits1 ||
			    ma[side].hits10 != mb[side].hits10)
				bad++;
	}
	kg_eval_ranks_release(&a);
	kg_eval_ranks_release(&b);
	return bad;
}

/*
 * The query forms (kg_be_query, TransR's kg_be_transr) and TransR's
 * candidate projection on the CPU backend: the bits of score.c's
 * kg_score_query and of kernels.h's kg_kern_matvec, every model, both
 * sides, widths with and without a tail past the eight lanes.
 */
static void
test_query_bits(void)
{
	static const uint32_t ds[] = { 8, 18, 40 };
	struct kg_rng rng;
	size_t k, c, i;
	int side;

	kg_rng_seed(&rng, 17, 0);
	for (k = 0; k < KG_ARRAY_LEN(kinds); k++)
		for (c = 0; c < KG_ARRAY_LEN(ds); c++)
			for (side = 0; side < 2; side++) {
	enum { N = 5 };
	struct kg_model m;
	uint32_t d = ds[c];
	size_t qd, rw;
	float *f, *rel, *q, *ref;

	T_CHECK(kg_model_init(&m, kinds[k], d, kinds[k] == KG_MODEL_TRANSR ?
	    d / 2 + 1 : 0, 6.0f) == 0);
	qd = kg_score_qdim(&m);
	rw = m.rel_width;
	f = kg_xmallocarray(N * d, sizeof(float));
	rel = kg_xmallocarray(N * rw, sizeof(float));
	q = kg_xmallocarray(N * d, sizeof(float));
	ref = kg_xmallocarray(N * d, sizeof(float));
	for (i = 0; i < N * d; i++)
		f[i] = (float)kg_rng_normal(&rng);
	for (i = 0; i < N * rw; i++)
		rel[i] = (float)kg_rng_normal(&rng);
	for (i = 0; i < N; i++)
		kg_score_query(&m, (enum kg_side)side, f + i * d, rel + i * rw,
		    ref + i * qd);
	if (kinds[k] == KG_MODEL_TRANSR)
		T_CHECK(kg_be_transr(cpu, side == KG_SIDE_TAIL ? 1 : -1, N, d,
		    qd, f, rel, q) == 0);
	else
		T_CHECK(kg_be_query(cpu, kg_score_qform(&m), side,
		    N, d, f, rel, q) == 0);
	T_CHECKF(memcmp(q, ref, N * qd * sizeof(float)) == 0,
	    "%s d %u side %d: the query's bits differ",
	    kg_model_name(kinds[k]), d, side);
	if (kinds[k] == KG_MODEL_TRANSR) {
		T_CHECK(kg_be_transr(cpu, 0, N, d, qd, f, rel, q) == 0);
		for (i = 0; i < N; i++)
			kg_kern_matvec(KG_NO_TRANS, qd, d, rel + i * rw + qd,
			    f + i * d, ref + i * qd);
		T_CHECKF(memcmp(q, ref, N * qd * sizeof(float)) == 0,
		    "TransR d %u: the projection's bits differ", d);
	}
	free(f);
	free(rel);
	free(q);
	free(ref);
			}
}

/* UMLS (135 entities, 46 relations, 661 test triples), random tables. */
static void
test_umls_every_model(void)
{
	struct kg_triples sets[3];
	struct kg_filter f = KG_FILTER_INIT;
	size_t k;
	int s, recip;

	if (load_umls() < 0)
		T_SKIP("examples/data/umls is missing");
	for (s = 0; s < 3; s++) {
		sets[s].n = umls.n[s];
		sets[s].hrt = umls.split[s];
	}
	kg_filter_build(&f, sets, 3);
	for (k = 0; k < KG_ARRAY_LEN(kinds); k++)
		for (recip = 0; recip < 2; recip++) {
			struct kg_modeldir md;
			float *ent, *rel;

			md_make(&md, kinds[k], 16, umls.ent.n, umls.rel.n, recip,
			    0, 7, &ent, &rel);
			T_CHECKF(compare(&md, &sets[2], &f, 100, NULL) == 0,
			    "%s filtered, reciprocal %d",
			    kg_model_name(kinds[k]), recip);
			T_CHECKF(compare(&md, &sets[2], NULL, 1024, NULL) == 0,
			    "%s raw, reciprocal %d", kg_model_name(kinds[k]),
			    recip);
			free(ent);
			free(rel);
		}
	kg_filter_release(&f);
}

/*
 * 2500 entities in {-1, 0, 1}^4 (81 distinct rows), 6 relations: three
 * tiles of candidates, blocks of 64 queries, many known positives per
 * query and thousands of exact ties with the truth.  The entity rows come
 * from a store for one model, as kg-eval --stream gives them.
 */
static void
test_many_ties(void)
{
	enum { NE = 2500, NR = 6, NTRAIN = 6000, NTEST = 300 };
	static const uint64_t n[3] = { NTRAIN, 0, NTEST };
	struct kg_triples sets[3];
	struct kg_filter f = KG_FILTER_INIT;
	int32_t *buf[3];
	struct kg_rng rng;
	uint64_t tied = 0, i;
	size_t k;
	int s;

	kg_rng_seed(&rng, 5, 0);
	for (s = 0; s < 3; s++) {
		buf[s] = kg_xmallocarray(3 * n[s] + 1, sizeof(int32_t));
		for (i = 0; i < n[s]; i++) {
			buf[s][3 * i] = (int32_t)kg_rng_below(&rng, 40);
			buf[s][3 * i + 1] = (int32_t)kg_rng_below(&rng, NR);
			buf[s][3 * i + 2] = (int32_t)kg_rng_below(&rng, NE);
		}
		sets[s].n = n[s];
		sets[s].hrt = buf[s];
	}
	kg_filter_build(&f, sets, 3);
	for (k = 0; k < KG_ARRAY_LEN(kinds); k++) {
		struct kg_modeldir md;
		struct kg_store *st = NULL;
		float *ent, *rel;

		md_make(&md, kinds[k], 4, NE, NR, k == 2, 1, 9, &ent, &rel);
		if (kinds[k] == KG_MODEL_DISTMULT) {
			st = kg_store_open_rows(ent, NE, 4);
			md.ents = st;
		}
		T_CHECKF(compare(&md, &sets[2], &f, 64, &tied) == 0,
		    "%s filtered", kg_model_name(kinds[k]));
		T_CHECKF(compare(&md, &sets[2], NULL, 5000, &tied) == 0,
		    "%s raw", kg_model_name(kinds[k]));
		kg_store_free(st);
		free(ent);
		free(rel);
	}
	/* The case must really exercise ties. */
	T_CHECKF(tied > 100000, "only %llu tied candidates",
	    (unsigned long long)tied);
	kg_filter_release(&f);
	for (s = 0; s < 3; s++)
		free(buf[s]);
}

/* A NaN true score ranks last on both. */
static void
test_nan_truth(void)
{
	static int32_t hrt[] = { 0, 0, 1, 2, 0, 3 };
	struct kg_triples test = { 2, hrt };
	struct kg_modeldir md;
	float *ent, *rel;

	md_make(&md, KG_MODEL_DISTMULT, 4, 1500, 1, 0, 0, 3, &ent, &rel);
	ent[1 * 4 + 2] = NAN;
	T_CHECK(compare(&md, &test, NULL, 16, NULL) == 0);
	free(ent);
	free(rel);
}

static void
test_refusals(void)
{
	static int32_t hrt[] = { 0, 0, 1 };
	struct kg_triples test = { 1, hrt };
	struct kg_eval_opts o = KG_EVAL_OPTS_INIT;
	struct kg_eval_ranks rk;
	struct kg_modeldir md;
	float *ent, *rel;

	md_make(&md, KG_MODEL_DISTMULT, 4, 3, 1, 0, 0, 3, &ent, &rel);
	o.neg_sample = 10;
	T_CHECK(kg_eval_rank_device(cpu, &md, &test, &o, &rk) < 0);
	T_CHECK(strstr(kg_error_last(), "sampled ranking") != NULL);
	T_CHECK(rk.opt[0] == NULL);
	o.neg_sample = 0;
	o.nshards = 2;
	T_CHECK(kg_eval_device_check(&o) < 0);
	T_CHECK(strstr(kg_error_last(), "shared by 2 MPI ranks") != NULL);
	o.nshards = 0;
	hrt[2] = 3;
	T_CHECK(kg_eval_rank_device(cpu, &md, &test, &o, &rk) < 0);
	T_CHECK(strstr(kg_error_last(), "outside the model") != NULL);
	free(ent);
	free(rel);
}

int
main(void)
{
	struct kg_device d = KG_DEVICE_INIT;

	cpu = kg_backend_open(&d);
	if (cpu == NULL)
		return 1;
	T_RUN(test_query_bits);
	T_RUN(test_umls_every_model);
	T_RUN(test_many_ties);
	T_RUN(test_nan_truth);
	T_RUN(test_refusals);
	kg_backend_free(cpu);
	return T_DONE();
}
