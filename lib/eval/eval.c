#include "eval/eval.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "eval/eval_impl.h"
#include "kge/score.h"
#include "store/store.h"

/* ---- ranking ---- */

const char *
kg_ties_name(enum kg_ties t)
{
	return t == KG_TIES_OPTIMISTIC ? "optimistic" :
	    t == KG_TIES_PESSIMISTIC ? "pessimistic" : "realistic";
}

/* What one thread needs to score a block. */
struct block_buf {
	float *fixed, *rel, *cand, *out, *work;
	int32_t *target;	/* true entity per query */
	const int32_t **known;	/* known positives per query, or NULL */
	size_t *nknown;
	uint64_t *qindex;	/* triple index per query */
	int32_t *neg;		/* sampled negatives */
	struct keyval *negsorted;	/* (entity, column), by entity */
	float *s;		/* true score per query (full ranking) */
	float *trow;		/* one entity row read from the store */
	float *tile;		/* a tile of candidates, when not in place */
	uint64_t *g, *e;	/* counts per query over the tiles */
	size_t *kpos;		/* next known positive per query */
};

struct rank_job {
	const struct kg_modeldir *md;
	struct kg_store *ents;	/* md's entity rows */
	int failed;		/* a read from the store failed */
	const struct kg_triples *test;
	const struct kg_eval_opts *opts;
	const uint64_t *order;	/* triples sorted by relation */
	const uint64_t *cumdeg;	/* prefix sums of degrees (degree mode) */
	size_t batch;
	uint64_t nblocks;	/* per side */
	size_t nc;		/* candidate columns per block */
	uint64_t lo, hi;	/* full ranking: candidates scored here */
	struct kg_eval_ranks *ranks;
};

/* Copy n entity rows from first into dst; a failure is recorded in the
 * job (and the rows left as they are). */
static void
read_rows(struct rank_job *job, uint64_t first, uint64_t n, float *dst)
{
	if (kg_store_read(job->ents, first, n, dst) < 0) {
#pragma omp atomic write
		job->failed = 1;
	}
}

/*
 * Gather the query rows of one block.  Returns the scoring side (TAIL for
 * head queries of reciprocal models).
 */
static enum kg_side
gather_block(struct rank_job *job, enum kg_side side, uint64_t first,
    size_t nb, struct block_buf *b)
{
	const struct kg_modeldir *md = job->md;
	const struct kg_filter *f = job->opts->filter;
	uint32_t d = md->model.dim, w = md->model.rel_width;
	enum kg_side sside = side;
	size_t i;

	if (side == KG_SIDE_HEAD && md->reciprocal)
		sside = KG_SIDE_TAIL;
	for (i = 0; i < nb; i++) {
		uint64_t q = job->order[first + i];
		const int32_t *x = job->test->hrt + 3 * q;
		int32_t fixed = side == KG_SIDE_TAIL ? x[0] : x[2];
		uint64_t r = (uint64_t)x[1];

		if (side == KG_SIDE_HEAD && md->reciprocal)
			r += md->n_relations;
		read_rows(job, (uint64_t)fixed, 1, b->fixed + i * d);
		memcpy(b->rel + i * w, md->relations + r * w,
		    w * sizeof(float));
		b->qindex[i] = q;
		b->target[i] = side == KG_SIDE_TAIL ? x[2] : x[0];
		b->known[i] = NULL;
		b->nknown[i] = 0;
		if (f != NULL)
			b->known[i] = side == KG_SIDE_TAIL ?
			    kg_filter_tails(f, x[0], x[1], &b->nknown[i]) :
			    kg_filter_heads(f, x[1], x[2], &b->nknown[i]);
	}
	return sside;
}

/* Count the columns scoring above and equal to s; the loop the compiler
 * vectorises and the only one that sees every candidate. */
static void
count_row(const float *restrict row, size_t nc, float s, uint64_t *greater,
    uint64_t *equal)
{
	uint32_t g = 0, e = 0;	/* nc < 2^31: entity IDs are int32 */
	size_t j;

#pragma omp simd reduction(+:g, e)
	for (j = 0; j < nc; j++) {
		g += row[j] > s;
		e += row[j] == s;
	}
	*greater = g;
	*equal = e;
}

/* Take one candidate score v out of the counts. */
static void
uncount(float v, float s, uint64_t *greater, uint64_t *equal)
{
	if (v > s)
		(*greater)--;
	else if (v == s)
		(*equal)--;
}

/* Score of the true entity of query i of the block (scoring side
 * sside), computed the same way whichever process asks. */
static float
true_score(struct rank_job *job, enum kg_side sside, size_t i,
    const struct block_buf *b)
{
	const struct kg_modeldir *md = job->md;
	uint32_t d = md->model.dim, w = md->model.rel_width;
	const float *t = kg_store_view(job->ents, (uint64_t)b->target[i], 1,
	    b->trow);

	if (t == NULL) {
#pragma omp atomic write
		job->failed = 1;
		return NAN;
	}
	return sside == KG_SIDE_TAIL ?
	    kg_model_score(&md->model, b->fixed + i * d, b->rel + i * w, t) :
	    kg_model_score(&md->model, t, b->rel + i * w, b->fixed + i * d);
}

/*
 * Full ranking of a block over the candidates [job->lo, job->hi), one
 * tile at a time: count the candidates above and equal to the true score,
 * then take the true entity and the known positives of the tile out.
 */
static void
rank_full_block(struct rank_job *job, enum kg_side side,
    enum kg_side sside, size_t nb, struct block_buf *b)
{
	const struct kg_modeldir *md = job->md;
	size_t i, k;
	uint64_t t0;

	for (i = 0; i < nb; i++) {
		b->s[i] = true_score(job, sside, i, b);
		b->g[i] = b->e[i] = 0;
		for (k = 0; k < b->nknown[i] &&
		    (uint64_t)b->known[i][k] < job->lo; k++)
			;
		b->kpos[i] = k;
	}
	for (t0 = job->lo; t0 < job->hi; t0 += KG_EVAL_TILE) {
		size_t nc = job->hi - t0 < KG_EVAL_TILE ?
		    (size_t)(job->hi - t0) : KG_EVAL_TILE;
		uint64_t t1 = t0 + nc;
		const float *cand = kg_store_view(job->ents, t0, nc, b->tile);

		if (cand == NULL) {
#pragma omp atomic write
			job->failed = 1;
			return;
		}
		kg_model_score_many(&md->model, sside, nb, b->fixed, b->rel,
		    cand, nc, b->out, b->work);
		for (i = 0; i < nb; i++) {
			const float *row = b->out + i * nc;
			uint64_t t = (uint64_t)b->target[i], g, e;
			float s = b->s[i];

			if (isnan(s))
				continue;
			count_row(row, nc, s, &g, &e);
			if (t >= t0 && t < t1)
				uncount(row[t - t0], s, &g, &e);
			for (k = b->kpos[i]; k < b->nknown[i] &&
			    (uint64_t)b->known[i][k] < t1; k++)
				if ((uint64_t)b->known[i][k] != t)
					uncount(row[b->known[i][k] - (int64_t)t0],
					    s, &g, &e);
			b->kpos[i] = k;
			b->g[i] += g;
			b->e[i] += e;
		}
	}
	for (i = 0; i < nb; i++) {
		/* The shard holding entity 0 adds the 1 of the rank and, for
		 * a NaN true score, puts it last. */
		uint64_t q = b->qindex[i], one = job->lo == 0 && job->hi > 0;

		if (isnan(b->s[i])) {
			uint64_t g = one ? md->n_entities - 1 : 0;

			job->ranks->opt[side][q] = one + g;
			job->ranks->pess[side][q] = one + g;
			continue;
		}
		job->ranks->opt[side][q] = one + b->g[i];
		job->ranks->pess[side][q] = one + b->g[i] + b->e[i];
	}
}

static int32_t
draw_negative(const struct rank_job *job, struct kg_rng *rng)
{
	uint64_t ne = job->md->n_entities, x, lo = 0, hi = ne - 1;

	if (job->opts->neg_mode == KG_NEG_UNIFORM)
		return (int32_t)kg_rng_below(rng, ne);
	/* The first entity whose cumulative degree passes x. */
	x = kg_rng_below(rng, job->cumdeg[ne - 1]);
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (job->cumdeg[mid] > x)
			hi = mid;
		else
			lo = mid + 1;
	}
	return (int32_t)lo;
}

/* Subtract every column of out_row holding entity e (negsorted is sorted
 * by entity; columns are offsets into the negative part). */
static void
uncount_entity(const struct keyval *negsorted, size_t nneg, int32_t e,
    const float *negrow, float s, uint64_t *g, uint64_t *eq)
{
	size_t lo = 0, hi = nneg;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if ((int64_t)negsorted[mid].key < e)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < nneg && (int64_t)negsorted[lo].key == e; lo++)
		uncount(negrow[negsorted[lo].val], s, g, eq);
}

static int
cmp_key_only(const void *a, const void *b)
{
	const struct keyval *x = a, *y = b;

	return (x->key > y->key) - (x->key < y->key);
}

/*
 * Sampled block: the candidates are the block's true entities (columns
 * 0..nb-1, so each true score comes out of the same GEMM as its
 * negatives) followed by N shared negatives.
 */
static void
rank_sampled_block(struct rank_job *job, enum kg_side side,
    enum kg_side sside, uint64_t task, size_t nb, struct block_buf *b)
{
	const struct kg_modeldir *md = job->md;
	uint32_t d = md->model.dim;
	size_t nneg = job->opts->neg_sample, nc = nb + nneg, i, j, k;
	struct kg_rng rng;

	kg_rng_stream(&rng, job->opts->seed, KG_STREAM_EVAL_NEG, task, 0, 0, 0);
	for (j = 0; j < nneg; j++) {
		b->neg[j] = draw_negative(job, &rng);
		b->negsorted[j].key = (uint64_t)b->neg[j];
		b->negsorted[j].val = (int32_t)j;
	}
	qsort(b->negsorted, nneg, sizeof(*b->negsorted), cmp_key_only);
	for (i = 0; i < nb; i++)
		read_rows(job, (uint64_t)b->target[i], 1, b->cand + i * d);
	for (j = 0; j < nneg; j++)
		read_rows(job, (uint64_t)b->neg[j], 1, b->cand + (nb + j) * d);
	kg_model_score_many(&md->model, sside, nb, b->fixed, b->rel, b->cand,
	    nc, b->out, b->work);
	for (i = 0; i < nb; i++) {
		const float *negrow = b->out + i * nc + nb;
		int32_t t = b->target[i];
		float s = b->out[i * nc + i];
		uint64_t g, e, q = b->qindex[i];

		if (isnan(s)) {
			job->ranks->opt[side][q] = nneg + 1;
			job->ranks->pess[side][q] = nneg + 1;
			continue;
		}
		count_row(negrow, nneg, s, &g, &e);
		uncount_entity(b->negsorted, nneg, t, negrow, s, &g, &e);
		for (k = 0; k < b->nknown[i]; k++)
			if (b->known[i][k] != t)
				uncount_entity(b->negsorted, nneg,
				    b->known[i][k], negrow, s, &g, &e);
		job->ranks->opt[side][q] = 1 + g;
		job->ranks->pess[side][q] = 1 + g + e;
	}
}

static void
block_buf_init(struct block_buf *b, const struct rank_job *job)
{
	const struct kg_model *m = &job->md->model;
	size_t B = job->batch, nc = job->nc, nneg = job->opts->neg_sample;

	memset(b, 0, sizeof(*b));
	b->fixed = kg_xmallocarray(B * m->dim, sizeof(float));
	b->rel = kg_xmallocarray(B * m->rel_width, sizeof(float));
	b->out = kg_xmallocarray(B * nc, sizeof(float));
	b->work = kg_xmallocarray(kg_model_score_work_size(m, B, nc) + 1,
	    sizeof(float));
	b->target = kg_xmallocarray(B, sizeof(*b->target));
	b->known = kg_xmallocarray(B, sizeof(*b->known));
	b->nknown = kg_xmallocarray(B, sizeof(*b->nknown));
	b->qindex = kg_xmallocarray(B, sizeof(*b->qindex));
	b->s = kg_xmallocarray(B, sizeof(*b->s));
	b->g = kg_xmallocarray(B, sizeof(*b->g));
	b->e = kg_xmallocarray(B, sizeof(*b->e));
	b->kpos = kg_xmallocarray(B, sizeof(*b->kpos));
	b->trow = kg_xmallocarray(m->dim, sizeof(float));
	if (nneg == 0)
		b->tile = kg_xmallocarray((size_t)KG_EVAL_TILE * m->dim,
		    sizeof(float));
	if (nneg > 0) {
		b->cand = kg_xmallocarray(nc * m->dim, sizeof(float));
		b->neg = kg_xmallocarray(nneg, sizeof(*b->neg));
		b->negsorted = kg_xmallocarray(nneg, sizeof(*b->negsorted));
	}
}

static void
block_buf_release(struct block_buf *b)
{
	free(b->fixed);
	free(b->rel);
	free(b->cand);
	free(b->out);
	free(b->work);
	free(b->target);
	free(b->known);
	free(b->nknown);
	free(b->qindex);
	free(b->neg);
	free(b->negsorted);
	free(b->s);
	free(b->g);
	free(b->e);
	free(b->kpos);
	free(b->trow);
	free(b->tile);
}

static void
run_blocks(struct rank_job *job)
{
	const struct kg_eval_opts *o = job->opts;
	uint64_t ntasks = 2 * job->nblocks, total = 2 * job->test->n;
	uint64_t done = 0;
	double start = kg_now(), last = start;
	int nthreads = o->threads > 0 ? o->threads : omp_get_max_threads();

#pragma omp parallel num_threads(nthreads)
	{
		struct block_buf b;
		uint64_t task;

		block_buf_init(&b, job);
#pragma omp for schedule(dynamic, 1)
		for (task = 0; task < ntasks; task++) {
			enum kg_side side = task < job->nblocks ?
			    KG_SIDE_TAIL : KG_SIDE_HEAD;
			uint64_t first = (task % job->nblocks) * job->batch;
			size_t nb = job->test->n - first < job->batch ?
			    (size_t)(job->test->n - first) : job->batch;
			enum kg_side sside;

			/* Sampled: a shard ranks every nshards-th block.
			 * Full: every block, against the shard's tiles. */
			if (o->neg_sample > 0 && o->nshards > 1 &&
			    task % (uint64_t)o->nshards != (uint64_t)o->shard)
				continue;
			sside = gather_block(job, side, first, nb, &b);
			if (o->neg_sample > 0) {
				rank_sampled_block(job, side, sside, task, nb,
				    &b);
			} else
				rank_full_block(job, side, sside, nb, &b);
			if (o->progress) {
#pragma omp atomic
				done += nb;
				if (omp_get_thread_num() == 0 &&
				    kg_now() - last >= 1.0) {
					uint64_t seen;

#pragma omp atomic read
					seen = done;
					last = kg_now();
					o->progress(seen, total, last - start,
					    o->progress_arg);
				}
			}
		}
		block_buf_release(&b);
	}
	if (o->progress)
		o->progress(total, total, kg_now() - start, o->progress_arg);
}

uint64_t *
kg_eval_order_by_relation(const struct kg_triples *test,
    uint64_t n_relations)
{
	uint64_t *count = kg_xcalloc(n_relations + 1, sizeof(*count));
	uint64_t *order = kg_xmallocarray(test->n + 1, sizeof(*order));
	uint64_t i, r;

	for (i = 0; i < test->n; i++)
		count[test->hrt[3 * i + 1] + 1]++;
	for (r = 0; r < n_relations; r++)
		count[r + 1] += count[r];
	for (i = 0; i < test->n; i++)
		order[count[test->hrt[3 * i + 1]]++] = i;
	free(count);
	return order;
}

static int
check_ids(const struct kg_modeldir *md, const struct kg_triples *test)
{
	uint64_t i;

	for (i = 0; i < test->n; i++) {
		const int32_t *x = test->hrt + 3 * i;

		if (x[0] < 0 || (uint64_t)x[0] >= md->n_entities ||
		    x[2] < 0 || (uint64_t)x[2] >= md->n_entities ||
		    x[1] < 0 || (uint64_t)x[1] >= md->n_relations) {
			kg_error("triple %llu (%d, %d, %d) is outside the "
			    "model (%llu entities, %llu relations)",
			    (unsigned long long)i, x[0], x[1], x[2],
			    (unsigned long long)md->n_entities,
			    (unsigned long long)md->n_relations);
			return -1;
		}
	}
	return 0;
}

void
kg_eval_ranks_release(struct kg_eval_ranks *ranks)
{
	int s;

	for (s = 0; s < 2; s++) {
		free(ranks->opt[s]);
		free(ranks->pess[s]);
	}
	*ranks = (struct kg_eval_ranks)KG_EVAL_RANKS_INIT;
}

int
kg_eval_rank_check(const struct kg_modeldir *md, const struct kg_triples *test,
    const struct kg_eval_opts *opts)
{
	if (md->n_entities == 0 || md->n_entities > INT32_MAX) {
		kg_error("cannot rank against %llu entities",
		    (unsigned long long)md->n_entities);
		return -1;
	}
	if (opts->batch == 0) {
		kg_error("batch size must be at least 1");
		return -1;
	}
	if (opts->nshards > 1 &&
	    (opts->shard < 0 || opts->shard >= opts->nshards)) {
		kg_error("shard %d of %d does not exist", opts->shard,
		    opts->nshards);
		return -1;
	}
	if (opts->neg_sample > 0 && opts->neg_mode == KG_NEG_DEGREE &&
	    opts->degree == NULL) {
		kg_error("degree sampling needs entity degrees");
		return -1;
	}
	return check_ids(md, test);
}

/* The cumulative degrees degree sampling draws from (NULL when it does
 * not); *bad set after kg_error() when no entity has a degree. */
static uint64_t *
rank_cumdeg(const struct kg_modeldir *md, const struct kg_eval_opts *opts,
    int *bad)
{
	uint64_t *cumdeg, i;

	*bad = 0;
	if (opts->neg_sample == 0 || opts->neg_mode != KG_NEG_DEGREE)
		return NULL;
	cumdeg = kg_xmallocarray(md->n_entities, sizeof(*cumdeg));
	for (i = 0; i < md->n_entities; i++)
		cumdeg[i] = opts->degree[i] + (i ? cumdeg[i - 1] : 0);
	if (cumdeg[md->n_entities - 1] == 0) {
		kg_error("degree sampling: no entity has a degree");
		free(cumdeg);
		*bad = 1;
		return NULL;
	}
	return cumdeg;
}

/* The candidates of job: this shard's tiles of every entity, or the
 * batch's own plus the sampled ones. */
static void
rank_candidates(struct rank_job *job, const struct kg_modeldir *md,
    const struct kg_eval_opts *opts, struct kg_eval_ranks *ranks)
{
	if (opts->neg_sample == 0) {
		uint64_t tiles = (md->n_entities + KG_EVAL_TILE - 1) /
		    KG_EVAL_TILE, ns = opts->nshards > 1 ?
		    (uint64_t)opts->nshards : 1, sh = ns > 1 ?
		    (uint64_t)opts->shard : 0;

		/* The out buffer holds one tile per query.  Blocks do not
		 * depend on the shard, so neither do the GEMMs. */
		job->nc = KG_EVAL_TILE;
		if (job->batch > KG_EVAL_BLOCK_FLOATS / KG_EVAL_TILE)
			job->batch = KG_EVAL_BLOCK_FLOATS / KG_EVAL_TILE;
		job->lo = tiles * sh / ns * KG_EVAL_TILE;
		job->hi = tiles * (sh + 1) / ns * KG_EVAL_TILE;
		if (job->lo > md->n_entities)
			job->lo = md->n_entities;
		if (job->hi > md->n_entities)
			job->hi = md->n_entities;
		ranks->n_candidates = md->n_entities;
	} else {
		job->nc = job->batch + opts->neg_sample;
		ranks->n_candidates = opts->neg_sample + 1;
	}
}

int
kg_eval_rank(const struct kg_modeldir *md, const struct kg_triples *test,
    const struct kg_eval_opts *opts, struct kg_eval_ranks *ranks)
{
	struct rank_job job;
	struct kg_store *own;
	uint64_t *cumdeg;
	int s, bad;

	*ranks = (struct kg_eval_ranks)KG_EVAL_RANKS_INIT;
	if (kg_eval_rank_check(md, test, opts) < 0)
		return -1;
	cumdeg = rank_cumdeg(md, opts, &bad);
	if (bad)
		return -1;
	memset(&job, 0, sizeof(job));
	job.md = md;
	if ((job.ents = kg_modeldir_ents(md, &own)) == NULL) {
		free(cumdeg);
		return -1;
	}
	job.test = test;
	job.opts = opts;
	job.cumdeg = cumdeg;
	job.ranks = ranks;
	job.batch = opts->batch;
	rank_candidates(&job, md, opts, ranks);
	ranks->n = test->n;
	for (s = 0; s < 2; s++) {
		ranks->opt[s] = kg_xcalloc(test->n + 1, sizeof(uint64_t));
		ranks->pess[s] = kg_xcalloc(test->n + 1, sizeof(uint64_t));
	}
	if (test->n > 0) {
		job.order = kg_eval_order_by_relation(test, md->n_relations);
		job.nblocks = (test->n + job.batch - 1) / job.batch;
		run_blocks(&job);
		free((void *)job.order);
	}
	free(cumdeg);
	kg_store_free(own);
	if (job.failed) {
		kg_eval_ranks_release(ranks);
		return -1;
	}
	return 0;
}

/* ---- triple classification ---- */

struct labelled {
	float score;
	int positive;
};

/* Ascending by score; NaN first, so it counts as the least plausible. */
static int
cmp_labelled(const void *a, const void *b)
{
	float x = ((const struct labelled *)a)->score;
	float y = ((const struct labelled *)b)->score;

	if (isnan(x) || isnan(y))
		return isnan(y) - isnan(x);
	return (x > y) - (x < y);
}

double
kg_auc(const float *pos, size_t np, const float *neg, size_t nn)
{
	struct labelled *all;
	size_t n = np + nn, i, j;
	double sum = 0.0, neg_below = 0.0;

	if (np == 0 || nn == 0)
		return NAN;
	all = kg_xmallocarray(n, sizeof(*all));
	for (i = 0; i < np; i++)
		all[i] = (struct labelled){ pos[i], 1 };
	for (i = 0; i < nn; i++)
		all[np + i] = (struct labelled){ neg[i], 0 };
	qsort(all, n, sizeof(*all), cmp_labelled);
	for (i = 0; i < n; i = j) {
		double gp = 0, gn = 0;

		for (j = i; j < n && cmp_labelled(&all[i], &all[j]) == 0; j++) {
			if (all[j].positive)
				gp++;
			else
				gn++;
		}
		sum += gp * neg_below + 0.5 * gp * gn;
		neg_below += gn;
	}
	free(all);
	return sum / ((double)np * (double)nn);
}

/* The score of (h, r, t) with rows read from the store (rows: scratch
 * for two entity rows); a failed read sets *failed. */
static float
score_triple(const struct kg_modeldir *md, struct kg_store *st, int32_t h,
    const float *r, int32_t t, float *rows, int *failed)
{
	uint32_t d = md->model.dim;
	const float *x = kg_store_view(st, (uint64_t)h, 1, rows);
	const float *y = kg_store_view(st, (uint64_t)t, 1, rows + d);

	if (x == NULL || y == NULL) {
		*failed = 1;
		return NAN;
	}
	return kg_model_score(&md->model, x, r, y);
}

int
kg_eval_auc(const struct kg_modeldir *md, const struct kg_triples *test,
    const struct kg_filter *filter, uint64_t k, uint64_t seed, double *auc)
{
	const struct kg_model *m = &md->model;
	uint32_t w = m->rel_width;
	uint64_t i, j, ne = md->n_entities;
	struct kg_store *own, *st;
	float *pos, *neg, *rows;
	struct kg_rng rng;
	int failed = 0;

	if (check_ids(md, test) < 0)
		return -1;
	if (test->n == 0 || k == 0) {
		kg_error("triple classification needs test triples and "
		    "negatives");
		return -1;
	}
	if ((st = kg_modeldir_ents(md, &own)) == NULL)
		return -1;
	pos = kg_xmallocarray(test->n, sizeof(float));
	neg = kg_xmallocarray(test->n, k * sizeof(float));
	rows = kg_xmallocarray(2 * (size_t)m->dim, sizeof(float));
	kg_rng_stream(&rng, seed, KG_STREAM_EVAL_AUC, 0, 0, 0, 0);
	for (i = 0; i < test->n; i++) {
		const int32_t *x = test->hrt + 3 * i;
		const float *r = md->relations + (uint64_t)x[1] * w;

		pos[i] = score_triple(md, st, x[0], r, x[2], rows, &failed);
		for (j = 0; j < k; j++) {
			int head = (int)kg_rng_below(&rng, 2);
			int32_t h = x[0], t = x[2];
			int tries;

			for (tries = 0; tries < 100; tries++) {
				int32_t e = (int32_t)kg_rng_below(&rng, ne);

				h = head ? e : x[0];
				t = head ? x[2] : e;
				if (filter == NULL ||
				    !kg_filter_contains(filter, h, x[1], t))
					break;
			}
			neg[i * k + j] = score_triple(md, st, h, r, t, rows,
			    &failed);
		}
	}
	*auc = kg_auc(pos, test->n, neg, test->n * k);
	free(pos);
	free(neg);
	free(rows);
	kg_store_free(own);
	return failed ? -1 : 0;
}
