/*
 * Unit tests of lib/predict/topk (against a full sort), of shard merging,
 * of the answers' JSON escaping, of lib/core/progress's lines, and of
 * answers read through the model's entity store.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/progress.h"
#include "core/util.h"
#include "io/npy.h"
#include "predict/answers.h"
#include "predict/predict.h"
#include "predict/topk.h"
#include "store/store.h"
#include "test.h"

struct pair {
	float s;
	int64_t id;
};

/* Best first: higher score, then lower id. */
static int
cmp_pair(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;

	if (x->s != y->s)
		return x->s > y->s ? -1 : 1;
	return (x->id > y->id) - (x->id < y->id);
}

/* n scores with many ties and some NaN. */
static void
fill(float *x, size_t n, struct kg_rng *rng)
{
	size_t i;

	for (i = 0; i < n; i++) {
		uint64_t u = kg_rng_below(rng, 40);

		x[i] = u == 0 ? NAN : (float)(u % 13) - 6.0f;
	}
}

/* The k best of x[0..n) by a full sort (NaN left out); returns count. */
static size_t
reference(const float *x, size_t n, size_t k, struct pair *out)
{
	size_t i, m = 0;

	for (i = 0; i < n; i++)
		if (!isnan(x[i])) {
			out[m].s = x[i];
			out[m++].id = (int64_t)i;
		}
	qsort(out, m, sizeof(*out), cmp_pair);
	return m < k ? m : k;
}

static void
t_topk_sort(void)
{
	enum { N = 700, Q = 6 };
	static const size_t ks[] = { 1, 3, 10, 1000 };
	struct pair ref[N];
	struct kg_topk t;
	struct kg_rng rng;
	float x[N];
	size_t ki, q, i, m;

	kg_rng_seed(&rng, 5, 0);
	for (ki = 0; ki < KG_ARRAY_LEN(ks); ki++) {
		kg_topk_init(&t, Q, ks[ki]);
		for (q = 0; q < Q; q++) {
			fill(x, N, &rng);
			/* Offered in two rows and one by one, out of order. */
			kg_topk_push_row(&t, q, x + 300, N - 300, 300);
			for (i = 300; i-- > 0;)
				kg_topk_push(&t, q, x[i], (int64_t)i);
			kg_topk_sort(&t);
			m = reference(x, N, ks[ki], ref);
			T_CHECK(t.n[q] == m);
			for (i = 0; i < m && i < t.n[q]; i++) {
				T_CHECK(t.score[q * t.k + i] == ref[i].s);
				T_CHECK(t.id[q * t.k + i] == ref[i].id);
			}
		}
		kg_topk_release(&t);
	}
}

/* Shards' lists pushed into one give what one process finds. */
static void
t_topk_merge(void)
{
	enum { N = 3000, K = 25 };
	struct kg_topk whole, part[3], merged;
	struct kg_rng rng;
	float x[N];
	size_t p, j;

	kg_rng_seed(&rng, 9, 1);
	fill(x, N, &rng);
	kg_topk_init(&whole, 1, K);
	kg_topk_init(&merged, 1, K);
	kg_topk_push_row(&whole, 0, x, N, 0);
	for (p = 0; p < 3; p++) {
		size_t lo = N * p / 3, hi = N * (p + 1) / 3;

		kg_topk_init(&part[p], 1, K);
		kg_topk_push_row(&part[p], 0, x + lo, hi - lo, (int64_t)lo);
	}
	for (p = 3; p-- > 0;)
		for (j = 0; j < part[p].n[0]; j++)
			kg_topk_push(&merged, 0, part[p].score[j],
			    part[p].id[j]);
	kg_topk_sort(&whole);
	kg_topk_sort(&merged);
	T_CHECK(whole.n[0] == K && merged.n[0] == K);
	T_CHECK(memcmp(whole.id, merged.id, K * sizeof(int64_t)) == 0);
	T_CHECK(memcmp(whole.score, merged.score, K * sizeof(float)) == 0);
	for (p = 0; p < 3; p++)
		kg_topk_release(&part[p]);
	kg_topk_release(&whole);
	kg_topk_release(&merged);
}

static void
t_json_string(void)
{
	char buf[64];
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	T_CHECK(f != NULL);
	if (f == NULL)
		return;
	kg_json_string(f, "a\"b\\c\x01" "d\xc3\xa9");
	fclose(f);
	T_CHECK(strcmp(buf, "\"a\\\"b\\\\c\\u0001d\xc3\xa9\"") == 0);
}

static void
t_progress_format(void)
{
	char b[128];

	kg_progress_format(b, sizeof(b), "ranking", "queries", 12000, 26400,
	    4.0, 0);
	T_CHECKF(strcmp(b, "ranking 12000/26400 queries, 3.0k queries/s, "
	    "eta 5 s") == 0, "%s", b);
	kg_progress_format(b, sizeof(b), "reading", "lines", 5000000, 0, 2.0,
	    0);
	T_CHECKF(strcmp(b, "reading 5000000 lines, 2.5M lines/s") == 0, "%s",
	    b);
	kg_progress_format(b, sizeof(b), "expanding", "parts", 1, 40, 10.0, 0);
	T_CHECKF(strcmp(b, "expanding 1/40 parts, 0.1 parts/s, eta 6m30s") ==
	    0, "%s", b);
	kg_progress_format(b, sizeof(b), "ranking", "queries", 26400, 26400,
	    7.8, 1);
	T_CHECKF(strcmp(b, "ranking 26400/26400 queries in 7.8 s, "
	    "3.4k queries/s") == 0, "%s", b);
	kg_progress_format(b, sizeof(b), "x", "y", 7, 0, 0.0, 1);
	T_CHECKF(strcmp(b, "x 7 y in 0.0 s, 0.0 y/s") == 0, "%s", b);
}

/* The answers of q[0..nq) (k each) and the scores of the triples (a
 * relation query's with relation 0). */
static int
answers(const struct kg_modeldir *md, const struct kg_query *q, size_t nq,
    struct kg_topk *top, float *score)
{
	struct kg_predict_opts o = KG_PREDICT_OPTS_INIT;
	struct kg_query qs[16];
	size_t i;

	o.batch = 3;
	o.threads = 2;
	kg_topk_reset(top, nq);
	if (kg_predict_answer(md, &o, q, nq, top) < 0)
		return -1;
	kg_topk_sort(top);
	for (i = 0; i < nq && i < 16; i++) {
		qs[i] = q[i];
		if (qs[i].r < 0)
			qs[i].r = 0;
	}
	return kg_predict_score(md, 2, qs, i, score);
}

/*
 * kg-predict reads entity rows through the store a model lends (here a
 * table read from its file a piece at a time, over 1024-row tiles, while
 * md->entities holds other rows): tail, head, relation and nearest
 * answers and triple scores equal those of a model holding the file's
 * rows in memory.  A read that fails (the file cut short) is an error.
 */
static void
t_answers_through_store(void)
{
	enum { NE = 2500, NR = 7, D = 8, NQ = 8, K = 5 };
	struct kg_modeldir a = KG_MODELDIR_INIT, b = KG_MODELDIR_INIT;
	char *path = kg_path_join(t_tmpdir(), "ents.npy");
	float *ents = kg_xmallocarray(NE * D, sizeof(float));
	float *other = kg_xmallocarray(NE * D, sizeof(float));
	float *rel = kg_xmallocarray(NR * D, sizeof(float));
	float sa[NQ], sb[NQ];
	uint64_t shape[2] = { NE, D };
	struct kg_query q[NQ];
	struct kg_topk ta, tb;
	struct kg_store *st;
	struct kg_rng rng;
	size_t i;

	kg_rng_seed(&rng, 11, 0);
	for (i = 0; i < NE * D; i++) {
		ents[i] = (float)kg_rng_normal(&rng);
		other[i] = (float)kg_rng_normal(&rng);
	}
	for (i = 0; i < NR * D; i++)
		rel[i] = (float)kg_rng_normal(&rng);
	T_CHECK(kg_npy_write(path, KG_DT_F4, 2, shape, ents) == 0);
	st = kg_store_open_npy_stream(path);
	T_CHECK(st != NULL);
	if (st == NULL)
		return;
	T_CHECK(kg_model_init(&a.model, KG_MODEL_DISTMULT, D, 0, 12.0f) ==
	    0);
	a.n_entities = NE;
	a.n_relations = a.n_rel_rows = NR;
	a.relations = rel;
	b = a;
	a.entities = ents;
	b.entities = other;
	b.ents = st;
	for (i = 0; i < NQ; i++) {
		q[i].kind = (int32_t)(i % 4);
		q[i].h = (int32_t)((i * 977) % NE);
		q[i].r = q[i].kind == KG_QUERY_REL ? -1 : (int32_t)(i % NR);
		q[i].t = (int32_t)((i * 1511 + 3) % NE);
		q[i].line = i + 1;
	}
	kg_topk_init(&ta, NQ, K);
	kg_topk_init(&tb, NQ, K);
	T_CHECK(answers(&a, q, NQ, &ta, sa) == 0);
	T_CHECK(answers(&b, q, NQ, &tb, sb) == 0);
	for (i = 0; i < NQ; i++)
		T_CHECKF(ta.n[i] == K && tb.n[i] == K && memcmp(ta.id + i * K,
		    tb.id + i * K, K * sizeof(*ta.id)) == 0 &&
		    memcmp(ta.score + i * K, tb.score + i * K, K *
		    sizeof(float)) == 0, "query %zu", i);
	for (i = 0; i < NQ; i++)
		T_CHECKF(!isnan(sa[i]) && memcmp(&sa[i], &sb[i],
		    sizeof(float)) == 0, "score %zu", i);
	T_CHECK(truncate(path, 4096) == 0);
	kg_error_mute(1);
	T_CHECK(answers(&b, q, NQ, &tb, sb) < 0 && strstr(kg_error_last(),
	    "cannot read") != NULL);
	kg_error_mute(0);
	kg_topk_release(&ta);
	kg_topk_release(&tb);
	kg_store_free(st);
	free(ents);
	free(other);
	free(rel);
	free(path);
}

int
main(void)
{
	T_RUN(t_topk_sort);
	T_RUN(t_topk_merge);
	T_RUN(t_json_string);
	T_RUN(t_progress_format);
	T_RUN(t_answers_through_store);
	return T_DONE();
}
