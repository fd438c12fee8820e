#include "predict/predict.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "compute/compute.h"
#include "core/util.h"
#include "kge/score.h"
#include "store/store.h"

/* Query classes, each scored in blocks of its own. */
enum { CLS_TAIL, CLS_HEAD, CLS_NEAR, CLS_REL, NCLS };

static const char *const sim_names[] = { "cosine", "dot", "l2", "l1",
	"model" };

int
kg_sim_parse(const char *s, enum kg_sim *out)
{
	size_t i;

	for (i = 0; i < KG_ARRAY_LEN(sim_names); i++)
		if (strcmp(s, sim_names[i]) == 0) {
			*out = (enum kg_sim)i;
			return 0;
		}
	kg_error("--sim: unknown similarity '%s' (cosine, dot, l2, l1, "
	    "model)", s);
	return -1;
}

const char *
kg_sim_name(enum kg_sim s)
{
	return sim_names[s];
}

/*
 * The relation row under which score(x, r, y) compares x with y itself
 * (model.h's layouts), into row[rel_width].  0, or -1 when the model has
 * none (TransR with rel_dim != dim).
 */
static int
identity_row(const struct kg_model *m, float *row)
{
	uint32_t d = m->dim, i;

	memset(row, 0, m->rel_width * sizeof(float));
	switch (m->kind) {
	case KG_MODEL_DISTMULT:
		for (i = 0; i < d; i++)
			row[i] = 1.0f;
		return 0;
	case KG_MODEL_COMPLEX:
		for (i = 0; i < d / 2; i++)
			row[i] = 1.0f;	/* real part 1, imaginary 0 */
		return 0;
	case KG_MODEL_RESCAL:
		for (i = 0; i < d; i++)
			row[(size_t)i * d + i] = 1.0f;
		return 0;
	case KG_MODEL_TRANSR:
		if (m->rel_dim != d)
			return -1;
		for (i = 0; i < d; i++)
			row[d + (size_t)i * d + i] = 1.0f;
		return 0;
	default:		/* translations and rotations by 0 */
		return 0;
	}
}

int
kg_predict_check(const struct kg_modeldir *md,
    const struct kg_predict_opts *o)
{
	float *row;
	int rc = 0;

	if (o->sim != KG_SIM_MODEL)
		return 0;
	row = kg_xmallocarray(md->model.rel_width + 1, sizeof(float));
	if (identity_row(&md->model, row) < 0) {
		kg_error("--sim model: TransR with rel_dim %u != dim %u has no "
		    "identity relation; use cosine, dot, l2 or l1",
		    md->model.rel_dim, md->model.dim);
		rc = -1;
	}
	free(row);
	return rc;
}

struct task {
	int cls;
	size_t first, n;	/* into the job's order */
};

struct job {
	const struct kg_modeldir *md;
	const struct kg_predict_opts *o;
	const struct kg_query *q;
	size_t *order;		/* query indices by class, then relation */
	struct task *tasks;
	size_t ntasks;
	uint64_t lo, hi;	/* candidates of this shard */
	float *ident;		/* identity relation row (sim model) */
	struct kg_topk *top;
	struct kg_store *ents;	/* the entity rows (kg_modeldir_ents) */
	int failed;		/* a read from it failed */
};

/* Per thread, allocated once per call. */
struct buf {
	float *fixed, *rel, *out, *work, *qn, *cn;
	float *tile;		/* candidate rows not in memory in one piece */
	float *pair;		/* a relation query's two rows */
	int64_t *fid, *rid;	/* a block's entity and relation rows (dev) */
	const int32_t **known;
	size_t *nknown, *kpos;
};

static int
cls_of(const struct kg_query *q, int reciprocal)
{
	switch (q->kind) {
	case KG_QUERY_TAIL: return CLS_TAIL;
	case KG_QUERY_HEAD: return reciprocal ? CLS_TAIL : CLS_HEAD;
	case KG_QUERY_NEAR: return CLS_NEAR;
	default: return CLS_REL;
	}
}

/* The relation row a query is scored with (sorting key of TransR). */
static uint64_t
rel_row(const struct kg_modeldir *md, const struct kg_query *q)
{
	if (q->kind == KG_QUERY_HEAD && md->reciprocal)
		return (uint64_t)q->r + md->n_relations;
	return q->r < 0 ? 0 : (uint64_t)q->r;
}

/* Sorting: class, relation row, input position. */
static int
cmp_order(const void *a, const void *b, void *arg)
{
	const struct job *j = arg;
	const struct kg_query *x = &j->q[*(const size_t *)a];
	const struct kg_query *y = &j->q[*(const size_t *)b];
	int cx = cls_of(x, j->md->reciprocal), cy = cls_of(y,
	    j->md->reciprocal);
	uint64_t rx = rel_row(j->md, x), ry = rel_row(j->md, y);

	if (cx != cy)
		return cx - cy;
	if (rx != ry)
		return rx < ry ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* Order the queries and cut them into blocks of at most batch. */
static void
plan(struct job *j, size_t nq)
{
	size_t i, b = j->o->batch > 0 ? j->o->batch : 1024, start;

	j->order = kg_xmallocarray(nq + 1, sizeof(*j->order));
	for (i = 0; i < nq; i++)
		j->order[i] = i;
	qsort_r(j->order, nq, sizeof(*j->order), cmp_order, j);
	j->tasks = kg_xmallocarray(nq + 1, sizeof(*j->tasks));
	j->ntasks = 0;
	for (start = 0; start < nq;) {
		int c = cls_of(&j->q[j->order[start]], j->md->reciprocal);
		size_t end = start;

		while (end < nq && end - start < b &&
		    cls_of(&j->q[j->order[end]], j->md->reciprocal) == c)
			end++;
		j->tasks[j->ntasks].cls = c;
		j->tasks[j->ntasks].first = start;
		j->tasks[j->ntasks].n = end - start;
		j->ntasks++;
		start = end;
	}
}

static void
buf_init(struct buf *b, const struct job *j)
{
	const struct kg_model *m = &j->md->model;
	size_t B = j->o->batch > 0 ? j->o->batch : 1024;

	b->fixed = kg_xmallocarray(B * m->dim + 1, sizeof(float));
	b->rel = kg_xmallocarray(B * m->rel_width + 1, sizeof(float));
	b->out = kg_xmallocarray(B * KG_EVAL_TILE + 1, sizeof(float));
	b->work = kg_xmallocarray(kg_model_score_work_size(m, B,
	    KG_EVAL_TILE) + 1, sizeof(float));
	b->qn = kg_xmallocarray(B + 1, sizeof(float));
	b->cn = kg_xmallocarray(KG_EVAL_TILE + 1, sizeof(float));
	b->tile = kg_xmallocarray(KG_EVAL_TILE * (size_t)m->dim + 1,
	    sizeof(float));
	b->pair = kg_xmallocarray(2 * (size_t)m->dim + 1, sizeof(float));
	b->known = kg_xcalloc(B + 1, sizeof(*b->known));
	b->nknown = kg_xcalloc(B + 1, sizeof(*b->nknown));
	b->kpos = kg_xcalloc(B + 1, sizeof(*b->kpos));
	b->fid = kg_xcalloc(B + 1, sizeof(*b->fid));
	b->rid = kg_xcalloc(B + 1, sizeof(*b->rid));
}

static void
buf_release(struct buf *b)
{
	free(b->fixed);
	free(b->tile);
	free(b->pair);
	free(b->rel);
	free(b->out);
	free(b->work);
	free(b->qn);
	free(b->cn);
	free(b->known);
	free(b->nknown);
	free(b->kpos);
	free(b->fid);
	free(b->rid);
}

/* Record in the job that a read of entity rows failed (kg_error() has
 * the message). */
static void
fail(const struct job *j)
{
	int *failed = (int *)&j->failed;

#pragma omp atomic write
	*failed = 1;
}

/* Entity rows [first, first + n): a pointer into the store, or a copy in
 * scratch; NULL after a failed read (recorded in the job). */
static const float *
rows_of(const struct job *j, uint64_t first, uint64_t n, float *scratch)
{
	const float *x = kg_store_view(j->ents, first, n, scratch);

	if (x == NULL)
		fail(j);
	return x;
}

/*
 * Gather the rows and known answers of a block of entity queries (or
 * the entity rows of nearest queries).  Returns the side to score.
 */
static enum kg_side
gather(const struct job *j, const struct task *t, struct buf *b)
{
	const struct kg_modeldir *md = j->md;
	const struct kg_filter *f = j->o->filter;
	uint32_t d = md->model.dim, w = md->model.rel_width;
	size_t i;

	for (i = 0; i < t->n; i++) {
		const struct kg_query *q = &j->q[j->order[t->first + i]];
		int32_t fixed = q->kind == KG_QUERY_HEAD ? q->t : q->h;

		if (kg_store_read(j->ents, (uint64_t)fixed, 1, b->fixed +
		    i * d) < 0)
			fail(j);
		b->fid[i] = fixed;
		b->rid[i] = q->kind == KG_QUERY_NEAR ? 0 :
		    (int64_t)rel_row(md, q);
		if (q->kind == KG_QUERY_NEAR)
			memcpy(b->rel + i * w, j->ident, w * sizeof(float));
		else
			memcpy(b->rel + i * w, md->relations +
			    rel_row(md, q) * w, w * sizeof(float));
		b->known[i] = NULL;
		b->nknown[i] = 0;
		b->kpos[i] = 0;
		if (f != NULL && q->kind == KG_QUERY_TAIL)
			b->known[i] = kg_filter_tails(f, q->h, q->r,
			    &b->nknown[i]);
		else if (f != NULL && q->kind == KG_QUERY_HEAD)
			b->known[i] = kg_filter_heads(f, q->r, q->t,
			    &b->nknown[i]);
	}
	return t->cls == CLS_HEAD ? KG_SIDE_HEAD : KG_SIDE_TAIL;
}

/* |row| of n rows of d floats. */
static void
norms(const float *x, size_t n, size_t d, float *out)
{
	size_t i, k;

	for (i = 0; i < n; i++) {
		double s = 0;

		for (k = 0; k < d; k++)
			s += (double)x[i * d + k] * x[i * d + k];
		out[i] = (float)sqrt(s);
	}
}

/* Similarities of nb entity rows with the nc rows of cand into out. */
static void
near_scores(const struct job *j, struct buf *b, size_t nb,
    const float *cand, size_t nc)
{
	const struct kg_model *m = &j->md->model;
	size_t d = m->dim, i, c, k;
	enum kg_sim sim = j->o->sim;

	if (sim == KG_SIM_MODEL) {
		kg_model_score_many(m, KG_SIDE_TAIL, nb, b->fixed, b->rel, cand,
		    nc, b->out, b->work);
		return;
	}
	if (sim == KG_SIM_L1) {
		for (i = 0; i < nb; i++)
			for (c = 0; c < nc; c++) {
				const float *x = b->fixed + i * d;
				const float *y = cand + c * d;
				float s = 0;

				for (k = 0; k < d; k++)
					s += fabsf(x[k] - y[k]);
				b->out[i * nc + c] = -s;
			}
		return;
	}
	kg_sgemm(KG_NO_TRANS, KG_TRANS, nb, nc, d, 1.0f, b->fixed, d, cand, d,
	    0.0f, b->out, nc);
	if (sim == KG_SIM_DOT)
		return;
	norms(b->fixed, nb, d, b->qn);
	norms(cand, nc, d, b->cn);
	for (i = 0; i < nb; i++)
		for (c = 0; c < nc; c++) {
			float *o = &b->out[i * nc + c];

			if (sim == KG_SIM_COSINE)
				*o = b->qn[i] > 0 && b->cn[c] > 0 ?
				    *o / (b->qn[i] * b->cn[c]) : NAN;
			else
				*o = -sqrtf(fmaxf(0.0f, b->qn[i] * b->qn[i] -
				    2.0f * *o + b->cn[c] * b->cn[c]));
		}
}

/* Leave out of row (candidates t0 .. t0 + nc) what query i may not
 * answer: known answers, and for nearest queries the entity itself. */
static void
mask(const struct job *j, struct buf *b, size_t i, const struct kg_query *q,
    float *row, uint64_t t0, size_t nc)
{
	uint64_t t1 = t0 + nc;
	size_t k = b->kpos[i];

	if (q->kind == KG_QUERY_NEAR) {
		if ((uint64_t)q->h >= t0 && (uint64_t)q->h < t1)
			row[q->h - (int64_t)t0] = NAN;
		return;
	}
	if (j->o->typed != NULL) {
		int tail = q->kind == KG_QUERY_TAIL;
		size_t c;

		for (c = 0; c < nc; c++)
			if (!kg_typed_allows(j->o->typed, tail, q->r,
			    (int64_t)(t0 + c)))
				row[c] = NAN;
	}
	while (k < b->nknown[i] && (uint64_t)b->known[i][k] < t0)
		k++;
	for (; k < b->nknown[i] && (uint64_t)b->known[i][k] < t1; k++)
		row[b->known[i][k] - (int64_t)t0] = NAN;
	b->kpos[i] = k;
}

/* A block of entity or nearest queries against this shard's tiles. */
static void
entity_block(const struct job *j, const struct task *t, struct buf *b)
{
	const struct kg_modeldir *md = j->md;
	size_t i;
	enum kg_side sside = gather(j, t, b);
	int dev = j->o->dev != NULL && t->cls != CLS_NEAR;
	uint64_t t0;

	if (dev && kg_dev_scorer_block(j->o->dev, sside, t->n, b->fid,
	    b->rid) < 0) {
		fail(j);
		return;
	}
	for (t0 = j->lo; t0 < j->hi; t0 += KG_EVAL_TILE) {
		size_t nc = j->hi - t0 < KG_EVAL_TILE ? (size_t)(j->hi - t0) :
		    KG_EVAL_TILE;
		/* The device holds its own copy of the table. */
		const float *cand = dev ? NULL : rows_of(j, t0, nc, b->tile);

		if (!dev && cand == NULL)
			return;
		if (t->cls == CLS_NEAR)
			near_scores(j, b, t->n, cand, nc);
		else if (dev) {
			if (kg_dev_scorer_tile(j->o->dev, t0, nc, b->out) < 0) {
				fail(j);
				return;
			}
		} else
			kg_model_score_many(&md->model, sside, t->n, b->fixed,
			    b->rel, cand, nc, b->out, b->work);
		for (i = 0; i < t->n; i++) {
			size_t qi = j->order[t->first + i];
			float *row = b->out + i * nc;

			mask(j, b, i, &j->q[qi], row, t0, nc);
			kg_topk_push_row(j->top, qi, row, nc, (int64_t)t0);
		}
	}
}

/* Relation queries: every forward relation, scored one by one. */
static void
relation_block(const struct job *j, const struct task *t, struct buf *b)
{
	const struct kg_modeldir *md = j->md;
	const struct kg_filter *f = j->o->filter;
	size_t d = md->model.dim, w = md->model.rel_width, i;
	uint64_t r;

	for (i = 0; i < t->n; i++) {
		size_t qi = j->order[t->first + i];
		const struct kg_query *q = &j->q[qi];
		const float *h = rows_of(j, (uint64_t)q->h, 1, b->pair);
		const float *tl = rows_of(j, (uint64_t)q->t, 1, b->pair + d);

		if (h == NULL || tl == NULL)
			return;
		for (r = 0; r < md->n_relations; r++) {
			if (f != NULL && kg_filter_contains(f, q->h,
			    (int32_t)r, q->t))
				continue;
			if (j->o->typed != NULL && (!kg_typed_allows(j->o->typed,
			    0, (int32_t)r, q->h) || !kg_typed_allows(j->o->typed,
			    1, (int32_t)r, q->t)))
				continue;
			kg_topk_push(j->top, qi, kg_model_score(&md->model, h,
			    md->relations + r * w, tl), (int64_t)r);
		}
	}
}

/* This shard's tiles of candidates, as kg-eval splits them. */
static void
shard_range(const struct kg_modeldir *md, const struct kg_predict_opts *o,
    uint64_t *lo, uint64_t *hi)
{
	uint64_t T = (md->n_entities + KG_EVAL_TILE - 1) / KG_EVAL_TILE;
	uint64_t S = o->nshards > 1 ? (uint64_t)o->nshards : 1;
	uint64_t s = o->nshards > 1 ? (uint64_t)o->shard : 0;

	*lo = T * s / S * KG_EVAL_TILE;
	*hi = T * (s + 1) / S * KG_EVAL_TILE;
	if (*hi > md->n_entities)
		*hi = md->n_entities;
	if (*lo > *hi)
		*lo = *hi;
}

static void
run_tasks(const struct job *j)
{
	const struct kg_predict_opts *o = j->o;
	int nthreads = o->dev != NULL ? 1 : o->threads > 0 ? o->threads :
	    omp_get_max_threads();
	uint64_t done = 0;
	size_t t;

#pragma omp parallel num_threads(nthreads)
	{
		struct buf b;

		buf_init(&b, j);
#pragma omp for schedule(dynamic, 1)
		for (t = 0; t < j->ntasks; t++) {
			const struct task *tk = &j->tasks[t];
			uint64_t now;

			if (tk->cls == CLS_REL) {
				if (o->nshards <= 1 || o->shard == 0)
					relation_block(j, tk, &b);
			} else
				entity_block(j, tk, &b);
#pragma omp atomic capture
			now = done += tk->n;
			if (o->progress != NULL && omp_get_thread_num() == 0)
				kg_progress_update(o->progress,
				    o->progress_base + now);
		}
		buf_release(&b);
	}
}

int
kg_predict_answer(const struct kg_modeldir *md,
    const struct kg_predict_opts *o, const struct kg_query *q, size_t nq,
    struct kg_topk *top)
{
	struct kg_store *own;
	struct job j;

	memset(&j, 0, sizeof(j));
	j.md = md;
	j.o = o;
	j.q = q;
	j.top = top;
	if ((j.ents = kg_modeldir_ents(md, &own)) == NULL)
		return -1;
	kg_compute_init();
	shard_range(md, o, &j.lo, &j.hi);
	j.ident = kg_xmallocarray(md->model.rel_width + 1, sizeof(float));
	if (o->sim == KG_SIM_MODEL)
		identity_row(&md->model, j.ident);
	plan(&j, nq);
	run_tasks(&j);
	free(j.order);
	free(j.tasks);
	free(j.ident);
	kg_store_free(own);
	return j.failed ? -1 : 0;
}

int
kg_predict_score(const struct kg_modeldir *md, int threads,
    const struct kg_query *q, size_t nq, float *out)
{
	const struct kg_model *m = &md->model;
	size_t d = m->dim, w = m->rel_width;
	struct kg_store *own, *st = kg_modeldir_ents(md, &own);
	int failed = 0;

	if (st == NULL)
		return -1;
#pragma omp parallel num_threads(threads > 0 ? threads : \
    omp_get_max_threads())
	{
		float *pair = kg_xmallocarray(2 * d, sizeof(float));
		int64_t i;

#pragma omp for schedule(static)
		for (i = 0; i < (int64_t)nq; i++) {
			const float *h = kg_store_view(st, (uint64_t)q[i].h, 1,
			    pair);
			const float *t = kg_store_view(st, (uint64_t)q[i].t, 1,
			    pair + d);

			if (h == NULL || t == NULL) {
#pragma omp atomic write
				failed = 1;
				out[i] = NAN;
				continue;
			}
			out[i] = kg_model_score(m, h, md->relations +
			    (uint64_t)q[i].r * w, t);
		}
		free(pair);
	}
	kg_store_free(own);
	return failed ? -1 : 0;
}
