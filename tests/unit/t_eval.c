/*
 * eval: the filtering index, full and sampled ranking against brute-force
 * references written as plain loops over kg_model_score in float64,
 * exact ties, metrics and ROC AUC against O(n^2) pair counting.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "eval/eval.h"
#include "kge/model.h"
#include "kge/modeldir.h"
#include "core/util.h"
#include "kge/score.h"
#include "test.h"

/* A small random graph: train, valid and test triples. */
struct graph {
	uint64_t ne, nr;
	struct kg_triples split[3];
	int32_t *buf[3];
};

static void
graph_make(struct graph *g, uint64_t ne, uint64_t nr, const uint64_t n[3],
    uint64_t seed)
{
	struct kg_rng rng;
	int s;
	uint64_t i;

	kg_rng_seed(&rng, seed, 99);
	g->ne = ne;
	g->nr = nr;
	for (s = 0; s < 3; s++) {
		g->buf[s] = kg_xmallocarray(3 * n[s] + 1, sizeof(int32_t));
		for (i = 0; i < n[s]; i++) {
			g->buf[s][3 * i] = (int32_t)kg_rng_below(&rng, ne);
			g->buf[s][3 * i + 1] = (int32_t)kg_rng_below(&rng, nr);
			g->buf[s][3 * i + 2] = (int32_t)kg_rng_below(&rng, ne);
		}
		/* Repeat some (h, r) pairs so filtering has work to do. */
		for (i = 1; i < n[s]; i += 3) {
			g->buf[s][3 * i] = g->buf[s][3 * i - 3];
			g->buf[s][3 * i + 1] = g->buf[s][3 * i - 2];
		}
		g->split[s].n = n[s];
		g->split[s].hrt = g->buf[s];
	}
}

static void
graph_free(struct graph *g)
{
	int s;

	for (s = 0; s < 3; s++)
		free(g->buf[s]);
}

/* A model over in-memory tables (no files). */
static void
md_make(struct kg_modeldir *md, enum kg_model_kind kind, uint32_t dim,
    uint64_t ne, uint64_t nr, int reciprocal, float **ent, float **rel)
{
	*md = (struct kg_modeldir)KG_MODELDIR_INIT;
	if (kg_model_init(&md->model, kind, dim,
	    kind == KG_MODEL_TRANSR ? 3 : 0, 6.0f) < 0)
		abort();
	md->reciprocal = reciprocal;
	md->n_entities = ne;
	md->n_relations = nr;
	md->n_rel_rows = nr * (reciprocal ? 2 : 1);
	*ent = kg_xcalloc(ne * dim, sizeof(float));
	*rel = kg_xcalloc(md->n_rel_rows * md->model.rel_width, sizeof(float));
	md->entities = *ent;
	md->relations = *rel;
}

static void
fill(struct kg_rng *rng, float *x, size_t n, int integers)
{
	size_t i;

	for (i = 0; i < n; i++)
		x[i] = integers ? (float)((int)kg_rng_below(rng, 3) - 1) :
		    (float)(0.5 * kg_rng_normal(rng));
}

static int
known(const struct graph *g, int32_t h, int32_t r, int32_t t)
{
	int s;
	uint64_t i;

	for (s = 0; s < 3; s++)
		for (i = 0; i < g->split[s].n; i++) {
			const int32_t *x = g->split[s].hrt + 3 * i;

			if (x[0] == h && x[1] == r && x[2] == t)
				return 1;
		}
	return 0;
}

static double
score_d(const struct kg_modeldir *md, int32_t h, uint64_t r, int32_t t)
{
	uint32_t d = md->model.dim, w = md->model.rel_width;

	return kg_model_score(&md->model, md->entities + (uint64_t)h * d,
	    md->relations + r * w, md->entities + (uint64_t)t * d);
}

/* The reference: every candidate in a plain loop. */
static void
ref_rank(const struct kg_modeldir *md, const struct graph *g,
    const int32_t *x, int side, int filtered, uint64_t *opt, uint64_t *pess)
{
	int32_t c, truth = side == KG_SIDE_TAIL ? x[2] : x[0];
	uint64_t r = (uint64_t)x[1], greater = 0, equal = 0;
	double s;

	if (side == KG_SIDE_HEAD && md->reciprocal)
		s = score_d(md, x[2], r + md->n_relations, x[0]);
	else
		s = score_d(md, x[0], r, x[2]);
	for (c = 0; c < (int32_t)md->n_entities; c++) {
		int32_t h = side == KG_SIDE_TAIL ? x[0] : c;
		int32_t t = side == KG_SIDE_TAIL ? c : x[2];
		double v;

		if (c == truth || (filtered && known(g, h, x[1], t)))
			continue;
		if (side == KG_SIDE_HEAD && md->reciprocal)
			v = score_d(md, t, r + md->n_relations, h);
		else
			v = score_d(md, h, r, t);
		greater += v > s;
		equal += v == s;
	}
	*opt = 1 + greater;
	*pess = 1 + greater + equal;
}

static void
test_filter_index(void)
{
	static const uint64_t n[3] = { 200, 30, 30 };
	struct graph g;
	struct kg_filter f;
	int32_t h, r, t;
	int bad = 0;

	graph_make(&g, 12, 3, n, 5);
	kg_filter_build(&f, g.split, 3);
	for (r = 0; r < 3; r++)
		for (h = 0; h < 12; h++) {
			size_t nt, nh, i = 0;
			const int32_t *tails = kg_filter_tails(&f, h, r, &nt);
			const int32_t *heads = kg_filter_heads(&f, r, h, &nh);
			size_t j = 0;

			for (t = 0; t < 12; t++) {
				int k = known(&g, h, r, t);

				bad += kg_filter_contains(&f, h, r, t) != k;
				if (k)
					bad += i >= nt || tails[i++] != t;
				if (known(&g, t, r, h))
					bad += j >= nh || heads[j++] != t;
			}
			bad += i != nt || j != nh;
		}
	T_CHECKF(bad == 0, "%d mismatches", bad);
	T_CHECK(f.n_triples <= 260 && f.n_triples > 100);
	kg_filter_release(&f);
	T_CHECK(f.tails == NULL);
	graph_free(&g);
}

/* Rank g's test split with md and compare with the reference. */
static int
compare_ranks(const struct kg_modeldir *md, const struct graph *g,
    int filtered, size_t batch, int threads)
{
	struct kg_filter f = KG_FILTER_INIT;
	struct kg_eval_opts o = KG_EVAL_OPTS_INIT;
	struct kg_eval_ranks rk;
	uint64_t i, opt, pess;
	int side, bad = 0;

	if (filtered) {
		kg_filter_build(&f, g->split, 3);
		o.filter = &f;
	}
	o.batch = batch;
	o.threads = threads;
	if (kg_eval_rank(md, &g->split[2], &o, &rk) < 0)
		return -1;
	for (i = 0; i < g->split[2].n; i++)
		for (side = 0; side < 2; side++) {
			ref_rank(md, g, g->split[2].hrt + 3 * i, side, filtered,
			    &opt, &pess);
			if ((opt != rk.opt[side][i] ||
			    pess != rk.pess[side][i]) && bad++ < 5)
				fprintf(stderr, "%s triple %llu side %d: "
				    "%llu/%llu, reference %llu/%llu\n",
				    kg_model_name(md->model.kind),
				    (unsigned long long)i, side,
				    (unsigned long long)rk.opt[side][i],
				    (unsigned long long)rk.pess[side][i],
				    (unsigned long long)opt,
				    (unsigned long long)pess);
		}
	kg_eval_ranks_release(&rk);
	kg_filter_release(&f);
	return bad;
}

static const enum kg_model_kind kinds[] = {
	KG_MODEL_TRANSE_L1, KG_MODEL_TRANSE_L2, KG_MODEL_DISTMULT,
	KG_MODEL_COMPLEX, KG_MODEL_ROTATE, KG_MODEL_RESCAL, KG_MODEL_TRANSR
};

/* Random Gaussian embeddings: no ties, ranks must match exactly. */
static void
test_full_ranking_random(void)
{
	static const uint64_t n[3] = { 150, 20, 40 };
	struct graph g;
	size_t k;
	int recip;

	graph_make(&g, 40, 4, n, 11);
	for (k = 0; k < KG_ARRAY_LEN(kinds); k++)
		for (recip = 0; recip < 2; recip++) {
			struct kg_modeldir md;
			struct kg_rng rng;
			float *ent, *rel;

			md_make(&md, kinds[k], 8, g.ne, g.nr, recip, &ent, &rel);
			kg_rng_seed(&rng, 3, k);
			fill(&rng, ent, g.ne * 8, 0);
			fill(&rng, rel, md.n_rel_rows * md.model.rel_width, 0);
			T_CHECKF(compare_ranks(&md, &g, 1, 7, 1) == 0,
			    "%s filtered recip %d", kg_model_name(kinds[k]),
			    recip);
			T_CHECKF(compare_ranks(&md, &g, 0, 64, 2) == 0,
			    "%s raw recip %d", kg_model_name(kinds[k]), recip);
			free(ent);
			free(rel);
		}
	graph_free(&g);
}

/*
 * Embeddings in {-1, 0, 1}: every score is computed exactly whatever the
 * summation order, so there are many exact ties and optimistic and
 * pessimistic ranks must match the reference to the unit.
 */
static void
test_full_ranking_ties(void)
{
	static const uint64_t n[3] = { 150, 20, 40 };
	static const enum kg_model_kind exact[] = {
		KG_MODEL_TRANSE_L1, KG_MODEL_TRANSE_L2, KG_MODEL_DISTMULT,
		KG_MODEL_COMPLEX, KG_MODEL_RESCAL, KG_MODEL_TRANSR
	};
	struct graph g;
	size_t k;
	uint64_t ties = 0;

	graph_make(&g, 40, 4, n, 12);
	for (k = 0; k < KG_ARRAY_LEN(exact); k++) {
		struct kg_modeldir md;
		struct kg_rng rng;
		float *ent, *rel;
		uint64_t i, o, p;

		md_make(&md, exact[k], 4, g.ne, g.nr, 0, &ent, &rel);
		kg_rng_seed(&rng, 4, k);
		fill(&rng, ent, g.ne * 4, 1);
		fill(&rng, rel, md.n_rel_rows * md.model.rel_width, 1);
		for (i = 0; i < g.split[2].n; i++) {
			ref_rank(&md, &g, g.split[2].hrt + 3 * i, 0, 1, &o, &p);
			ties += p - o;
		}
		T_CHECKF(compare_ranks(&md, &g, 1, 5, 2) == 0, "%s filtered",
		    kg_model_name(exact[k]));
		T_CHECKF(compare_ranks(&md, &g, 0, 1000, 1) == 0, "%s raw",
		    kg_model_name(exact[k]));
		free(ent);
		free(rel);
	}
	/* The case must really exercise ties. */
	T_CHECKF(ties > 100, "only %llu tied candidates",
	    (unsigned long long)ties);
	graph_free(&g);
}

/* All-zero embeddings: every candidate ties with the truth. */
static void
test_all_ties_metrics(void)
{
	static const uint64_t n[3] = { 60, 10, 25 };
	struct graph g;
	struct kg_modeldir md;
	struct kg_filter f;
	struct kg_eval_opts o = KG_EVAL_OPTS_INIT;
	struct kg_eval_ranks rk;
	struct kg_metrics m[3], mo[3], mp[3];
	float *ent, *rel;
	uint64_t i, ne = 30;
	double want_mrr = 0, want_mr = 0, want_h10 = 0;
	int side;

	graph_make(&g, ne, 3, n, 13);
	md_make(&md, KG_MODEL_DISTMULT, 6, g.ne, g.nr, 0, &ent, &rel);
	T_CHECK(kg_eval_rank(&md, &g.split[2], &o, &rk) == 0);
	for (side = 0; side < 2; side++)
		for (i = 0; i < rk.n; i++) {
			T_CHECK(rk.opt[side][i] == 1);
			T_CHECK(rk.pess[side][i] == ne);
		}
	kg_eval_metrics(&rk, &g.split[2], -1, KG_TIES_REALISTIC, m);
	T_CHECK(m[2].n == 2 * n[2] && m[0].n == n[2]);
	T_NEAR(kg_metrics_mr(&m[2]), (1.0 + ne) / 2, 1e-12);
	T_NEAR(kg_metrics_mrr(&m[2]), 2.0 / (1.0 + ne), 1e-12);
	T_NEAR(kg_metrics_hits(&m[2], 10), 0.0, 0);
	kg_eval_metrics(&rk, &g.split[2], -1, KG_TIES_OPTIMISTIC, mo);
	kg_eval_metrics(&rk, &g.split[2], -1, KG_TIES_PESSIMISTIC, mp);
	T_NEAR(kg_metrics_mrr(&mo[2]), 1.0, 1e-12);
	T_NEAR(kg_metrics_hits(&mo[2], 1), 1.0, 0);
	T_NEAR(kg_metrics_mr(&mp[2]), (double)ne, 1e-12);
	kg_eval_ranks_release(&rk);

	/* Filtered: the known positives leave the tie; realistic rank is
	 * the mean of the other two, triple by triple. */
	kg_filter_build(&f, g.split, 3);
	o.filter = &f;
	T_CHECK(kg_eval_rank(&md, &g.split[2], &o, &rk) == 0);
	for (i = 0; i < rk.n; i++) {
		const int32_t *x = g.split[2].hrt + 3 * i;
		size_t nt;

		kg_filter_tails(&f, x[0], x[1], &nt);
		T_CHECK(rk.opt[0][i] == 1 && rk.pess[0][i] == ne - (nt - 1));
		for (side = 0; side < 2; side++) {
			double rr = 0.5 * (double)(rk.opt[side][i] +
			    rk.pess[side][i]);

			T_NEAR(kg_rank_of(KG_TIES_REALISTIC, rk.opt[side][i],
			    rk.pess[side][i]), rr, 0);
			want_mrr += 1.0 / rr;
			want_mr += rr;
			want_h10 += rr <= 10.0;
		}
	}
	kg_eval_metrics(&rk, &g.split[2], -1, KG_TIES_REALISTIC, m);
	T_NEAR(kg_metrics_mrr(&m[2]), want_mrr / (2.0 * rk.n), 1e-12);
	T_NEAR(kg_metrics_mr(&m[2]), want_mr / (2.0 * rk.n), 1e-12);
	T_NEAR(kg_metrics_hits(&m[2], 10), want_h10 / (2.0 * rk.n), 1e-12);
	kg_eval_ranks_release(&rk);
	kg_filter_release(&f);
	free(ent);
	free(rel);
	graph_free(&g);
}

static void
test_metrics_known(void)
{
	static const uint64_t opt[2][4] = { { 1, 2, 5, 11 }, { 1, 3, 3, 20 } };
	static const uint64_t pess[2][4] = { { 1, 4, 5, 11 }, { 2, 3, 9, 20 } };
	static const int32_t hrt[12] = { 0, 0, 1, 0, 1, 1, 0, 0, 2, 0, 1, 3 };
	struct kg_triples test = { 4, hrt };
	struct kg_eval_ranks rk = KG_EVAL_RANKS_INIT;
	struct kg_metrics m[3], per[6];
	/* realistic tail ranks 1, 3, 5, 11; head 1.5, 3, 6, 20 */
	double tail_mrr = (1 + 1 / 3.0 + 1 / 5.0 + 1 / 11.0) / 4;
	double head_mrr = (1 / 1.5 + 1 / 3.0 + 1 / 6.0 + 1 / 20.0) / 4;

	rk.n = 4;
	rk.opt[0] = (uint64_t *)opt[0];
	rk.opt[1] = (uint64_t *)opt[1];
	rk.pess[0] = (uint64_t *)pess[0];
	rk.pess[1] = (uint64_t *)pess[1];
	kg_eval_metrics(&rk, &test, -1, KG_TIES_REALISTIC, m);
	T_NEAR(kg_metrics_mrr(&m[0]), tail_mrr, 1e-12);
	T_NEAR(kg_metrics_mrr(&m[1]), head_mrr, 1e-12);
	T_NEAR(kg_metrics_mrr(&m[2]), (tail_mrr + head_mrr) / 2, 1e-12);
	T_NEAR(kg_metrics_mr(&m[0]), 5, 1e-12);
	T_NEAR(kg_metrics_mr(&m[1]), 30.5 / 4, 1e-12);
	T_NEAR(kg_metrics_hits(&m[0], 1), 0.25, 0);
	T_NEAR(kg_metrics_hits(&m[1], 1), 0, 0);
	T_NEAR(kg_metrics_hits(&m[2], 3), 4 / 8.0, 0);
	T_NEAR(kg_metrics_hits(&m[2], 10), 6 / 8.0, 0);
	/* Relation 1: triples 1 and 3. */
	kg_eval_metrics_per_relation(&rk, &test, 2, KG_TIES_REALISTIC, per);
	T_CHECK(per[0].n == 2 && per[3].n == 2 && per[5].n == 4);
	T_NEAR(kg_metrics_mr(&per[3]), 7, 1e-12);
	T_NEAR(kg_metrics_mrr(&per[4]), (1 / 3.0 + 1 / 20.0) / 2, 1e-12);
	kg_eval_metrics(&rk, &test, 1, KG_TIES_PESSIMISTIC, m);
	T_NEAR(kg_metrics_mr(&m[2]), (4 + 11 + 3 + 20) / 4.0, 1e-12);
	m[0] = (struct kg_metrics)KG_METRICS_INIT;
	T_CHECK(isnan(kg_metrics_mrr(&m[0])) && isnan(kg_metrics_mr(&m[0])));
}

/* Threads and shards change nothing. */
static void
test_rank_deterministic(void)
{
	static const uint64_t n[3] = { 100, 10, 50 };
	struct graph g;
	struct kg_modeldir md;
	struct kg_rng rng;
	struct kg_eval_opts o = KG_EVAL_OPTS_INIT;
	struct kg_eval_ranks a, b;
	float *ent, *rel;
	int s;

	graph_make(&g, 50, 5, n, 21);
	md_make(&md, KG_MODEL_COMPLEX, 8, g.ne, g.nr, 0, &ent, &rel);
	kg_rng_seed(&rng, 5, 0);
	fill(&rng, ent, g.ne * 8, 0);
	fill(&rng, rel, g.nr * 8, 0);
	o.neg_sample = 20;
	o.batch = 16;
	o.threads = 1;
	T_CHECK(kg_eval_rank(&md, &g.split[2], &o, &a) == 0);
	o.threads = 2;
	T_CHECK(kg_eval_rank(&md, &g.split[2], &o, &b) == 0);
	for (s = 0; s < 2; s++)
		T_CHECK(memcmp(a.opt[s], b.opt[s], 50 * 8) == 0 &&
		    memcmp(a.pess[s], b.pess[s], 50 * 8) == 0);
	T_CHECK(a.n_candidates == 21);
	kg_eval_ranks_release(&b);
	/* Three shards summed give the unsharded ranks; each shard alone
	 * leaves the others' ranks 0. */
	{
		uint64_t sum[2][2][50] = { { { 0 } } };
		int sh, bad = 0, zeros = 0;
		uint64_t i;

		o.nshards = 3;
		for (sh = 0; sh < 3; sh++) {
			o.shard = sh;
			T_CHECK(kg_eval_rank(&md, &g.split[2], &o, &b) == 0);
			for (s = 0; s < 2; s++)
				for (i = 0; i < 50; i++) {
					sum[s][0][i] += b.opt[s][i];
					sum[s][1][i] += b.pess[s][i];
					zeros += b.opt[s][i] == 0;
				}
			kg_eval_ranks_release(&b);
		}
		for (s = 0; s < 2; s++)
			for (i = 0; i < 50; i++)
				bad += sum[s][0][i] != a.opt[s][i] ||
				    sum[s][1][i] != a.pess[s][i];
		T_CHECKF(bad == 0, "%d sharded ranks differ", bad);
		/* Each triple is ranked by exactly one shard per side. */
		T_CHECK(zeros == 2 * 2 * 50);
		o.shard = 3;
		kg_error_mute(1);
		T_CHECK(kg_eval_rank(&md, &g.split[2], &o, &b) == -1);
		kg_error_mute(0);
	}
	kg_eval_ranks_release(&a);
	free(ent);
	free(rel);
	graph_free(&g);
}

/*
 * Degree sampling with one entity of non-zero degree: every negative is
 * that entity, so the sampled rank is known exactly.
 */
static void
test_sampled_degree_exact(void)
{
	static const uint64_t n[3] = { 100, 10, 50 };
	struct graph g;
	struct kg_modeldir md;
	struct kg_rng rng;
	struct kg_filter f;
	struct kg_eval_opts o = KG_EVAL_OPTS_INIT;
	struct kg_eval_ranks rk;
	uint64_t *deg, i, N = 13;
	float *ent, *rel;
	int32_t star = 7;
	int side, filtered, bad = 0;

	graph_make(&g, 20, 3, n, 31);
	md_make(&md, KG_MODEL_TRANSE_L2, 4, g.ne, g.nr, 0, &ent, &rel);
	kg_rng_seed(&rng, 6, 0);
	fill(&rng, ent, g.ne * 4, 1);
	fill(&rng, rel, g.nr * 4, 1);
	deg = kg_xcalloc(g.ne, sizeof(*deg));
	deg[star] = 5;
	kg_filter_build(&f, g.split, 3);
	o.neg_sample = N;
	o.neg_mode = KG_NEG_DEGREE;
	o.degree = deg;
	o.batch = 8;
	for (filtered = 0; filtered < 2; filtered++) {
		o.filter = filtered ? &f : NULL;
		T_CHECK(kg_eval_rank(&md, &g.split[2], &o, &rk) == 0);
		for (i = 0; i < rk.n; i++)
			for (side = 0; side < 2; side++) {
				const int32_t *x = g.split[2].hrt + 3 * i;
				int32_t truth = side ? x[0] : x[2];
				double s = score_d(&md, x[0], x[1], x[2]);
				double v = side ? score_d(&md, star, x[1], x[2]) :
				    score_d(&md, x[0], x[1], star);
				int out = truth == star || (filtered &&
				    (side ? known(&g, star, x[1], x[2]) :
				    known(&g, x[0], x[1], star)));
				uint64_t wo = 1 + (!out && v > s ? N : 0);
				uint64_t wp = wo + (!out && v == s ? N : 0);

				bad += rk.opt[side][i] != wo ||
				    rk.pess[side][i] != wp;
			}
		kg_eval_ranks_release(&rk);
	}
	T_CHECKF(bad == 0, "%d mismatches", bad);
	kg_filter_release(&f);
	free(deg);
	free(ent);
	free(rel);
	graph_free(&g);
}

/*
 * Uniform sampling: with many negatives the sampled pessimistic rank,
 * scaled by the entity count, estimates the raw full pessimistic rank.
 */
static void
test_sampled_uniform_estimate(void)
{
	static const uint64_t n[3] = { 100, 10, 60 };
	struct graph g;
	struct kg_modeldir md;
	struct kg_rng rng;
	struct kg_eval_opts o = KG_EVAL_OPTS_INIT;
	struct kg_eval_ranks full, samp;
	float *ent, *rel;
	double a = 0, b = 0;
	uint64_t i, N = 20000;

	graph_make(&g, 25, 3, n, 41);
	md_make(&md, KG_MODEL_DISTMULT, 8, g.ne, g.nr, 0, &ent, &rel);
	kg_rng_seed(&rng, 8, 0);
	fill(&rng, ent, g.ne * 8, 0);
	fill(&rng, rel, g.nr * 8, 0);
	T_CHECK(kg_eval_rank(&md, &g.split[2], &o, &full) == 0);
	o.neg_sample = N;
	T_CHECK(kg_eval_rank(&md, &g.split[2], &o, &samp) == 0);
	for (i = 0; i < full.n; i++) {
		/* Full counts 24 other entities; N draws hit each of the 25
		 * entities N / 25 times, the truth's own draws excluded. */
		a += (double)(full.pess[0][i] - 1) / 24.0;
		b += (double)(samp.pess[0][i] - 1) / (N * 24.0 / 25.0);
		T_CHECK(samp.opt[0][i] <= N + 1);
	}
	T_NEAR(a / full.n, b / full.n, 0.02);
	kg_eval_ranks_release(&full);
	kg_eval_ranks_release(&samp);
	free(ent);
	free(rel);
	graph_free(&g);
}

static double
ref_auc(const float *pos, size_t np, const float *neg, size_t nn)
{
	double sum = 0;
	size_t i, j;

	for (i = 0; i < np; i++)
		for (j = 0; j < nn; j++)
			sum += pos[i] > neg[j] ? 1.0 :
			    pos[i] == neg[j] ? 0.5 : 0.0;
	return sum / ((double)np * nn);
}

static void
test_auc_pairs(void)
{
	struct kg_rng rng;
	float pos[97], neg[213];
	size_t i;
	int trial;

	kg_rng_seed(&rng, 9, 0);
	for (trial = 0; trial < 20; trial++) {
		/* Few distinct values: plenty of ties within and across. */
		int spread = 1 + trial;

		for (i = 0; i < KG_ARRAY_LEN(pos); i++)
			pos[i] = (float)kg_rng_below(&rng, spread) + 0.5f;
		for (i = 0; i < KG_ARRAY_LEN(neg); i++)
			neg[i] = (float)kg_rng_below(&rng, spread);
		for (i = 0; i < KG_ARRAY_LEN(neg); i += 5)
			neg[i] += 0.5f;
		T_NEAR(kg_auc(pos, KG_ARRAY_LEN(pos), neg, KG_ARRAY_LEN(neg)),
		    ref_auc(pos, KG_ARRAY_LEN(pos), neg, KG_ARRAY_LEN(neg)),
		    1e-12);
	}
	T_CHECK(isnan(kg_auc(pos, 1, neg, 0)));
	pos[0] = 1;
	neg[0] = 0;
	T_NEAR(kg_auc(pos, 1, neg, 1), 1.0, 0);
	T_NEAR(kg_auc(neg, 1, pos, 1), 0.0, 0);
	T_NEAR(kg_auc(pos, 1, pos, 1), 0.5, 0);
}

/*
 * A chain i -> i + 1 that TransE fits exactly: a positive scores gamma,
 * any other triple less, so filtered negatives give AUC 1; without the
 * filter, some negatives are the positive itself and the AUC drops.
 */
static void
test_auc_perfect_model(void)
{
	enum { NE = 4 };
	int32_t hrt[3 * (NE - 1)];
	struct kg_triples test = { NE - 1, hrt };
	struct kg_modeldir md;
	struct kg_filter f;
	float *ent, *rel;
	double auc;
	int i;

	for (i = 0; i + 1 < NE; i++) {
		hrt[3 * i] = i;
		hrt[3 * i + 1] = 0;
		hrt[3 * i + 2] = i + 1;
	}
	md_make(&md, KG_MODEL_TRANSE_L2, 2, NE, 1, 0, &ent, &rel);
	for (i = 0; i < NE; i++)
		ent[2 * i] = (float)i;
	rel[0] = 1;
	kg_filter_build(&f, &test, 1);
	T_CHECK(kg_eval_auc(&md, &test, &f, 5, 1, &auc) == 0);
	T_NEAR(auc, 1.0, 0);
	T_CHECK(kg_eval_auc(&md, &test, NULL, 5, 1, &auc) == 0);
	T_CHECKF(auc < 1.0 && auc > 0.5, "raw auc %g", auc);
	kg_filter_release(&f);
	free(ent);
	free(rel);
}

static void
test_bad_input(void)
{
	static const int32_t bad_hrt[6] = { 0, 0, 1, 0, 5, 1 };
	struct kg_triples bad = { 2, bad_hrt };
	struct kg_modeldir md;
	struct kg_eval_opts o = KG_EVAL_OPTS_INIT;
	struct kg_eval_ranks rk;
	float *ent, *rel;
	double auc;

	md_make(&md, KG_MODEL_DISTMULT, 2, 4, 2, 0, &ent, &rel);
	kg_error_mute(1);
	T_CHECK(kg_eval_rank(&md, &bad, &o, &rk) == -1);
	T_CHECK(strstr(kg_error_last(), "outside the model") != NULL);
	T_CHECK(rk.opt[0] == NULL);
	T_CHECK(kg_eval_auc(&md, &bad, NULL, 1, 1, &auc) == -1);
	o.batch = 0;
	bad.n = 1;
	T_CHECK(kg_eval_rank(&md, &bad, &o, &rk) == -1);
	o.batch = 4;
	o.neg_sample = 3;
	o.neg_mode = KG_NEG_DEGREE;
	T_CHECK(kg_eval_rank(&md, &bad, &o, &rk) == -1);
	kg_error_mute(0);
	free(ent);
	free(rel);
}

static void
test_write_report(void)
{
	json_t *rep = json_pack("{s:f, s:s}", "mrr", 0.25, "protocol", "full");
	char *path = kg_path_join(t_tmpdir(), "report.json");
	json_t *back;
	json_error_t jerr;

	T_CHECK(kg_eval_write_report(rep, path, 0) == 0);
	back = json_load_file(path, 0, &jerr);
	T_CHECK(back != NULL && json_equal(back, rep));
	json_decref(back);
	kg_error_mute(1);
	T_CHECK(kg_eval_write_report(rep, path, 0) == -1);
	T_CHECK(strstr(kg_error_last(), "use --force") != NULL);
	kg_error_mute(0);
	json_object_set_new(rep, "mrr", json_real(0.5));
	T_CHECK(kg_eval_write_report(rep, path, 1) == 0);
	back = json_load_file(path, 0, &jerr);
	T_CHECK(back != NULL &&
	    json_real_value(json_object_get(back, "mrr")) == 0.5);
	json_decref(back);
	kg_error_mute(1);
	T_CHECK(kg_eval_write_report(rep, "/nonexistent/dir/r.json", 1) == -1);
	kg_error_mute(0);
	json_decref(rep);
	free(path);
}

int
main(void)
{
	T_RUN(test_filter_index);
	T_RUN(test_full_ranking_random);
	T_RUN(test_full_ranking_ties);
	T_RUN(test_all_ties_metrics);
	T_RUN(test_metrics_known);
	T_RUN(test_rank_deterministic);
	T_RUN(test_sampled_degree_exact);
	T_RUN(test_sampled_uniform_estimate);
	T_RUN(test_auc_pairs);
	T_RUN(test_auc_perfect_model);
	T_RUN(test_bad_input);
	T_RUN(test_write_report);
	return T_DONE();
}
