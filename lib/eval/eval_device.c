/* Filtered full ranking through the device seam: see eval_device.h. */
#include "eval/eval_device.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "eval/eval_impl.h"
#include "kge/score.h"
#include "kge/train_device.h"
#include "store/store.h"

/* Exclusion offsets uploaded at once: tiles of a group x (block + 1). */
#define GROUP_OFFSETS ((size_t)1 << 22)

/* Device buffers. */
struct dev_bufs {
	float *W, *R;		/* entity and relation tables */
	int64_t *idx;		/* 3 B: fixed rows, relation rows, targets */
	float *fixed, *target;	/* B x d */
	float *rel;		/* B x rw */
	float *q, *qt;		/* B x qd: the queries, the true triples' */
	float *pt;		/* B x qd: TransR's projected true tails */
	float *s, *sdist;	/* B: true scores, their distances */
	float *S;		/* B x KG_EVAL_TILE scores */
	float *P;		/* KG_EVAL_TILE x qd: TransR's projected tile */
	float *work;		/* kg_be_work_size */
	int64_t *off, *excl;	/* exclusion lists of a group of tiles */
	uint64_t *g, *e;	/* B: counts */
};

struct ranker {
	struct kg_backend *be;
	const struct kg_modeldir *md;
	const struct kg_triples *test;
	const struct kg_eval_opts *opts;
	const uint64_t *order;
	enum kg_qform form;
	enum kg_kern_sim sim, rsim;	/* the true score's, the tiles' */
	int transr;
	size_t d, rw, qd, B, T, G;	/* widths; block, tiles, tiles a group */
	size_t n_excl;		/* capacity of excl */
	struct dev_bufs v;
	/* Host side. */
	int64_t *hidx, *hoff, *hexcl;
	const int32_t **known;
	size_t *nknown, *kpos, *kstart;
	int32_t *target;
	uint64_t *g, *e;
	float *s;
	size_t *run;		/* TransR: the end of each query's run */
};

int
kg_eval_device_check(const struct kg_eval_opts *opts)
{
	if (opts->neg_sample > 0) {
		kg_error("sampled ranking (--neg-sample) does not run on a "
		    "device yet (use --device cpu)");
		return -1;
	}
	if (opts->nshards > 1) {
		kg_error("ranking shared by %d MPI ranks does not run on a "
		    "device (run one process)", opts->nshards);
		return -1;
	}
	return 0;
}

/* Allocate n bytes of device memory into *p; 0 or -1. */
static int
dalloc(struct ranker *rk, void *p, size_t n)
{
	void *x = kg_be_alloc(rk->be, n);

	if (x == NULL)
		return -1;
	memcpy(p, &x, sizeof(x));
	return 0;
}

/*
 * The most exclusion entries one group of tiles of one block can need:
 * a true entity and the known positives per query, over the largest
 * block.  0 when there is no test triple.
 */
static size_t
max_exclusions(struct ranker *rk)
{
	const struct kg_filter *f = rk->opts != NULL ? rk->opts->filter : NULL;
	uint64_t n = rk->test != NULL ? rk->test->n : 0, i, first, best = 0;

	for (first = 0; first < n; first += rk->B) {
		uint64_t end = first + rk->B < n ? first + rk->B : n;
		uint64_t c[2] = { 0 };

		for (i = first; i < end; i++) {
			const int32_t *x = rk->test->hrt + 3 * rk->order[i];
			size_t kt = 0, kh = 0;

			if (f != NULL) {
				kg_filter_tails(f, x[0], x[1], &kt);
				kg_filter_heads(f, x[1], x[2], &kh);
			}
			c[0] += 1 + kt;
			c[1] += 1 + kh;
		}
		if (c[0] > best)
			best = c[0];
		if (c[1] > best)
			best = c[1];
	}
	return (size_t)best;
}

static int
alloc_all(struct ranker *rk)
{
	struct dev_bufs *v = &rk->v;
	const struct kg_modeldir *md = rk->md;
	size_t B = rk->B, d = rk->d, qd = rk->qd, fs = sizeof(float);
	size_t ws = kg_be_work_size(rk->be, rk->rsim, B, KG_EVAL_TILE);

	rk->n_excl = max_exclusions(rk);
	if (dalloc(rk, &v->W, md->n_entities * d * fs) < 0 ||
	    dalloc(rk, &v->R, md->n_rel_rows * rk->rw * fs) < 0 ||
	    dalloc(rk, &v->idx, 3 * B * sizeof(int64_t)) < 0 ||
	    dalloc(rk, &v->fixed, B * d * fs) < 0 ||
	    dalloc(rk, &v->target, B * d * fs) < 0 ||
	    dalloc(rk, &v->rel, B * rk->rw * fs) < 0 ||
	    dalloc(rk, &v->q, B * qd * fs) < 0 ||
	    dalloc(rk, &v->qt, B * qd * fs) < 0 ||
	    dalloc(rk, &v->pt, B * qd * fs) < 0 ||
	    dalloc(rk, &v->s, B * fs) < 0 ||
	    dalloc(rk, &v->sdist, B * fs) < 0 ||
	    dalloc(rk, &v->S, B * KG_EVAL_TILE * fs) < 0 ||
	    dalloc(rk, &v->P, (rk->transr ? KG_EVAL_TILE * qd : 1) * fs) < 0 ||
	    dalloc(rk, &v->work, (ws > 0 ? ws : 1) * fs) < 0 ||
	    dalloc(rk, &v->off, rk->G * (B + 1) * sizeof(int64_t)) < 0 ||
	    dalloc(rk, &v->excl, (rk->n_excl + 1) * sizeof(int64_t)) < 0 ||
	    dalloc(rk, &v->g, B * sizeof(uint64_t)) < 0 ||
	    dalloc(rk, &v->e, B * sizeof(uint64_t)) < 0)
		return -1;
	rk->hidx = kg_be_host_alloc(rk->be, 3 * B * sizeof(int64_t));
	rk->hoff = kg_be_host_alloc(rk->be, rk->G * (B + 1) *
	    sizeof(int64_t));
	rk->hexcl = kg_be_host_alloc(rk->be, (rk->n_excl + 1) *
	    sizeof(int64_t));
	if (rk->hidx == NULL || rk->hoff == NULL || rk->hexcl == NULL)
		return -1;
	rk->known = kg_xmallocarray(B, sizeof(*rk->known));
	rk->nknown = kg_xmallocarray(B, sizeof(*rk->nknown));
	rk->kpos = kg_xmallocarray(B, sizeof(*rk->kpos));
	rk->kstart = kg_xmallocarray(B, sizeof(*rk->kstart));
	rk->target = kg_xmallocarray(B, sizeof(*rk->target));
	rk->g = kg_xmallocarray(B, sizeof(*rk->g));
	rk->e = kg_xmallocarray(B, sizeof(*rk->e));
	rk->s = kg_xmallocarray(B, sizeof(*rk->s));
	rk->run = kg_xmallocarray(B, sizeof(*rk->run));
	return 0;
}

static void
free_all(struct ranker *rk)
{
	struct dev_bufs *v = &rk->v;
	void *dev[] = { v->W, v->R, v->idx, v->fixed, v->target, v->rel, v->q,
	    v->qt, v->pt, v->s, v->sdist, v->S, v->P, v->work, v->off, v->excl,
	    v->g, v->e };
	size_t i;

	kg_be_sync(rk->be);
	for (i = 0; i < KG_ARRAY_LEN(dev); i++)
		kg_be_free(rk->be, dev[i]);
	kg_be_host_free(rk->be, rk->hidx);
	kg_be_host_free(rk->be, rk->hoff);
	kg_be_host_free(rk->be, rk->hexcl);
	free(rk->known);
	free(rk->nknown);
	free(rk->kpos);
	free(rk->kstart);
	free(rk->target);
	free(rk->g);
	free(rk->e);
	free(rk->s);
	free(rk->run);
}

/* Upload the tables: the entity rows a tile at a time when they come from
 * a store, the relation rows at once. */
static int
upload_tables(struct ranker *rk)
{
	const struct kg_modeldir *md = rk->md;
	size_t d = rk->d, fs = sizeof(float);
	struct kg_store *st;
	uint64_t first;
	float *buf;
	int rc = 0;

	if (kg_be_upload(rk->be, rk->v.R, md->relations,
	    md->n_rel_rows * rk->rw * fs) < 0)
		return -1;
	if (md->ents == NULL) {
		if (md->entities == NULL) {
			kg_error("the model has no entity rows");
			return -1;
		}
		return kg_be_upload(rk->be, rk->v.W, md->entities,
		    md->n_entities * d * fs);
	}
	st = md->ents;
	buf = kg_xmallocarray((size_t)KG_EVAL_TILE * d, fs);
	for (first = 0; rc == 0 && first < md->n_entities;
	    first += KG_EVAL_TILE) {
		uint64_t n = md->n_entities - first < KG_EVAL_TILE ?
		    md->n_entities - first : KG_EVAL_TILE;

		if (kg_store_read(st, first, n, buf) < 0 ||
		    kg_be_upload(rk->be, rk->v.W + first * d, buf,
		    n * d * fs) < 0)
			rc = -1;
	}
	free(buf);
	return rc;
}

/* TransR: the runs of equal relation rows among the block's nb queries
 * (relation rows at hidx + B), as kg_score_run_end finds them in the CPU
 * evaluator's block: run[start] is the end of the run from start. */
static void
find_runs(struct ranker *rk, size_t nb)
{
	const float *R = rk->md->relations;
	const int64_t *x = rk->hidx + rk->B;
	size_t w = rk->rw, start, end;

	if (!rk->transr)
		return;
	for (start = 0; start < nb; start = end) {
		const float *r = R + x[start] * w;

		for (end = start + 1; end < nb; end++) {
			const float *y = R + x[end] * w;

			if (y != r && memcmp(y, r, w * sizeof(*r)) != 0)
				break;
		}
		rk->run[start] = end;
	}
}

/*
 * The block's indices on the host: fixed rows, relation rows (the
 * inverse's for head queries of reciprocal models), true entities; the
 * known positives; TransR's runs of equal relation rows (as
 * kg_score_run_end finds them in the CPU evaluator's block).  Returns the
 * scoring side.
 */
static enum kg_side
index_block(struct ranker *rk, enum kg_side side, uint64_t first,
    size_t nb)
{
	const struct kg_modeldir *md = rk->md;
	const struct kg_filter *f = rk->opts->filter;
	int recip = side == KG_SIDE_HEAD && md->reciprocal;
	int64_t *x = rk->hidx;
	size_t i, B = rk->B;

	for (i = 0; i < nb; i++) {
		const int32_t *t = rk->test->hrt + 3 * rk->order[first + i];
		uint64_t r = (uint64_t)t[1] + (recip ? md->n_relations : 0);

		x[i] = side == KG_SIDE_TAIL ? t[0] : t[2];
		x[B + i] = (int64_t)r;
		rk->target[i] = side == KG_SIDE_TAIL ? t[2] : t[0];
		x[2 * B + i] = rk->target[i];
		rk->known[i] = NULL;
		rk->nknown[i] = 0;
		if (f != NULL)
			rk->known[i] = side == KG_SIDE_TAIL ?
			    kg_filter_tails(f, t[0], t[1], &rk->nknown[i]) :
			    kg_filter_heads(f, t[1], t[2], &rk->nknown[i]);
		rk->kpos[i] = 0;
	}
	find_runs(rk, nb);
	return recip ? KG_SIDE_TAIL : side;
}

/*
 * The exclusion lists of tiles [j0, j1) for the block, tile-major: tile
 * j's offsets at hoff + (j - j0) (nb + 1), absolute into hexcl.  The true
 * entity once, then the known positives but it, as columns of the tile;
 * each query's cursor into its known positives advances.
 */
static void
exclusions(struct ranker *rk, size_t nb, size_t j0, size_t j1)
{
	int64_t *off = rk->hoff, *ex = rk->hexcl, n = 0;
	size_t i, j, k;

	for (i = 0; i < nb; i++)
		rk->kstart[i] = rk->kpos[i];
	for (j = j0; j < j1; j++) {
		int64_t t0 = (int64_t)j * KG_EVAL_TILE, t1 = t0 + KG_EVAL_TILE;

		for (i = 0; i < nb; i++) {
			int64_t t = rk->target[i];

			off[(j - j0) * (nb + 1) + i] = n;
			if (t >= t0 && t < t1)
				ex[n++] = t - t0;
			for (k = rk->kpos[i]; k < rk->nknown[i] &&
			    rk->known[i][k] < t1; k++)
				if (rk->known[i][k] != t)
					ex[n++] = rk->known[i][k] - t0;
			rk->kpos[i] = k;
		}
		off[(j - j0) * (nb + 1) + nb] = n;
	}
}

/* The queries of the block (nb gathered), and unless only_q the true
 * triples' scores. */
static int
queries(struct ranker *rk, enum kg_side sside, size_t nb, int only_q)
{
	struct kg_backend *be = rk->be;
	struct dev_bufs *v = &rk->v;
	const struct kg_model *m = &rk->md->model;
	const float *head = sside == KG_SIDE_TAIL ? v->fixed : v->target;
	const float *tail = sside == KG_SIDE_TAIL ? v->target : v->fixed;
	size_t d = rk->d, k = rk->qd;

	if (only_q)
		return rk->transr ? kg_be_transr(be, sside == KG_SIDE_TAIL ? 1 :
		    -1, nb, d, k, v->fixed, v->rel, v->q) : kg_be_query(be,
		    rk->form, sside, nb, d, v->fixed, v->rel, v->q);
	if (rk->transr)
		return kg_be_transr(be, sside == KG_SIDE_TAIL ? 1 : -1, nb, d,
		    k, v->fixed, v->rel, v->q) < 0 ||
		    kg_be_transr(be, 1, nb, d, k, head, v->rel, v->qt) < 0 ||
		    kg_be_transr(be, 0, nb, d, k, tail, v->rel, v->pt) < 0 ||
		    kg_be_pairs(be, rk->sim, nb, k, m->gamma, v->qt, v->pt,
		    v->s, v->sdist) < 0 ? -1 : 0;
	return kg_be_query(be, rk->form, sside, nb, d, v->fixed, v->rel,
	    v->q) < 0 ||
	    kg_be_query(be, rk->form, KG_SIDE_TAIL, nb, d, head, v->rel,
	    v->qt) < 0 ||
	    kg_be_pairs(be, rk->sim, nb, d, m->gamma, v->qt, tail, v->s,
	    v->sdist) < 0 ? -1 : 0;
}

/* Scores of the block's nb queries against entities [t0, t0 + nc) into
 * S (nb x nc). */
static int
score_tile(struct ranker *rk, size_t nb, uint64_t t0, size_t nc)
{
	struct kg_backend *be = rk->be;
	struct dev_bufs *v = &rk->v;
	const float *cand = v->W + t0 * rk->d;
	float gamma = rk->md->model.gamma;
	size_t d = rk->d, k = rk->qd, start, end;

	if (!rk->transr)
		return kg_be_chunk(be, rk->rsim, nb, nc, d, gamma, v->q, cand,
		    v->S, NULL, v->work);
	for (start = 0; start < nb; start = end) {
		end = rk->run[start];
		if (kg_be_sgemm(be, KG_NO_TRANS, KG_TRANS, nc, k, d, 1.0f, cand,
		    d, v->rel + start * rk->rw + k, d, 0.0f, v->P, k) < 0 ||
		    kg_be_chunk(be, rk->rsim, end - start, nc, k, gamma,
		    v->q + start * k, v->P, v->S + start * nc, NULL,
		    v->work) < 0)
			return -1;
	}
	return 0;
}

/* Rank one block of nb queries from position first of the order. */
static int
rank_block(struct ranker *rk, enum kg_side side, uint64_t first, size_t nb,
    struct kg_eval_ranks *ranks)
{
	struct kg_backend *be = rk->be;
	struct dev_bufs *v = &rk->v;
	uint64_t ne = rk->md->n_entities;
	size_t B = rk->B, j0, j, i;
	enum kg_side sside = index_block(rk, side, first, nb);
	const int64_t *ix = v->idx;

	if (kg_be_upload(be, v->idx, rk->hidx, 3 * B * sizeof(int64_t)) < 0 ||
	    kg_be_gather(be, nb, rk->d, v->W, ix, v->fixed) < 0 ||
	    kg_be_gather(be, nb, rk->rw, v->R, ix + B, v->rel) < 0 ||
	    kg_be_gather(be, nb, rk->d, v->W, ix + 2 * B, v->target) < 0 ||
	    queries(rk, sside, nb, 0) < 0 ||
	    kg_be_zero(be, v->g, nb * sizeof(uint64_t)) < 0 ||
	    kg_be_zero(be, v->e, nb * sizeof(uint64_t)) < 0)
		return -1;
	for (j0 = 0; j0 < rk->T; j0 += rk->G) {
		size_t j1 = j0 + rk->G < rk->T ? j0 + rk->G : rk->T;

		exclusions(rk, nb, j0, j1);
		if (kg_be_upload(be, v->off, rk->hoff, (j1 - j0) * (nb + 1) *
		    sizeof(int64_t)) < 0 ||
		    kg_be_upload(be, v->excl, rk->hexcl,
		    (size_t)rk->hoff[(j1 - j0) * (nb + 1) - 1] *
		    sizeof(int64_t)) < 0)
			return -1;
		for (j = j0; j < j1; j++) {
			uint64_t t0 = (uint64_t)j * KG_EVAL_TILE;
			size_t nc = ne - t0 < KG_EVAL_TILE ? (size_t)(ne - t0) :
			    KG_EVAL_TILE;

			if (score_tile(rk, nb, t0, nc) < 0 ||
			    kg_be_rank_counts(be, nb, nc, v->S, v->s,
			    v->off + (j - j0) * (nb + 1), v->excl, v->g,
			    v->e) < 0)
				return -1;
		}
	}
	if (kg_be_download(be, rk->g, v->g, nb * sizeof(uint64_t)) < 0 ||
	    kg_be_download(be, rk->e, v->e, nb * sizeof(uint64_t)) < 0 ||
	    kg_be_download(be, rk->s, v->s, nb * sizeof(float)) < 0)
		return -1;
	for (i = 0; i < nb; i++) {
		uint64_t q = rk->order[first + i];

		/* A NaN true score ranks last, as eval.c has it. */
		ranks->opt[side][q] = isnan(rk->s[i]) ? ne : 1 + rk->g[i];
		ranks->pess[side][q] = isnan(rk->s[i]) ? ne :
		    1 + rk->g[i] + rk->e[i];
	}
	return 0;
}

static int
run_blocks(struct ranker *rk, struct kg_eval_ranks *ranks)
{
	const struct kg_eval_opts *o = rk->opts;
	uint64_t n = rk->test->n, first, done = 0, total = 2 * n;
	double start = kg_now();
	int side;

	for (side = 0; side < 2; side++)
		for (first = 0; first < n; first += rk->B) {
			size_t nb = n - first < rk->B ? (size_t)(n - first) :
			    rk->B;

			if (rank_block(rk, (enum kg_side)side, first, nb,
			    ranks) < 0)
				return -1;
			done += nb;
			if (o->progress != NULL)
				o->progress(done, total, kg_now() - start,
				    o->progress_arg);
		}
	if (o->progress != NULL && n == 0)
		o->progress(total, total, kg_now() - start, o->progress_arg);
	return 0;
}

/* The widths, kernels and block sizes of md's ranking in blocks of at
 * most batch queries. */
static void
ranker_init(struct ranker *rk, struct kg_backend *be,
    const struct kg_modeldir *md, size_t batch)
{
	const struct kg_model *m = &md->model;

	memset(rk, 0, sizeof(*rk));
	rk->be = be;
	rk->md = md;
	rk->transr = m->kind == KG_MODEL_TRANSR;
	rk->form = kg_score_qform(m);
	rk->sim = kg_score_sim(m);
	rk->rsim = kg_score_rank_sim(m);
	rk->d = m->dim;
	rk->rw = m->rel_width;
	rk->qd = kg_score_qdim(m);
	rk->B = batch < KG_EVAL_BLOCK_FLOATS / KG_EVAL_TILE ? batch :
	    KG_EVAL_BLOCK_FLOATS / KG_EVAL_TILE;
	if (rk->B == 0)
		rk->B = 1;
	rk->T = (md->n_entities + KG_EVAL_TILE - 1) / KG_EVAL_TILE;
	rk->G = GROUP_OFFSETS / (rk->B + 1);
	if (rk->G < 1)
		rk->G = 1;
	if (rk->G > rk->T)
		rk->G = rk->T;
}

int
kg_eval_rank_device(struct kg_backend *be, const struct kg_modeldir *md,
    const struct kg_triples *test, const struct kg_eval_opts *opts,
    struct kg_eval_ranks *ranks)
{
	struct ranker rk;
	int s, rc;

	*ranks = (struct kg_eval_ranks)KG_EVAL_RANKS_INIT;
	if (kg_eval_device_check(opts) < 0 ||
	    kg_eval_rank_check(md, test, opts) < 0)
		return -1;
	ranker_init(&rk, be, md, opts->batch);
	rk.test = test;
	rk.opts = opts;
	rk.order = kg_eval_order_by_relation(test, md->n_relations);
	ranks->n = test->n;
	ranks->n_candidates = md->n_entities;
	for (s = 0; s < 2; s++) {
		ranks->opt[s] = kg_xcalloc(test->n + 1, sizeof(uint64_t));
		ranks->pess[s] = kg_xcalloc(test->n + 1, sizeof(uint64_t));
	}
	rc = alloc_all(&rk) < 0 || upload_tables(&rk) < 0 ||
	    run_blocks(&rk, ranks) < 0 ? -1 : 0;
	free_all(&rk);
	free((void *)rk.order);
	if (rc < 0)
		kg_eval_ranks_release(ranks);
	return rc;
}

/* ---- Scoring for kg-predict. ---- */

struct kg_dev_scorer {
	struct ranker rk;
	size_t nb;		/* queries of the current block */
};

struct kg_dev_scorer *
kg_dev_scorer_open(struct kg_backend *be, const struct kg_modeldir *md,
    size_t batch)
{
	struct kg_dev_scorer *sc = kg_xcalloc(1, sizeof(*sc));

	ranker_init(&sc->rk, be, md, batch);
	if (alloc_all(&sc->rk) < 0 || upload_tables(&sc->rk) < 0) {
		kg_dev_scorer_free(sc);
		return NULL;
	}
	return sc;
}

size_t
kg_dev_scorer_batch(const struct kg_dev_scorer *sc)
{
	return sc->rk.B;
}

int
kg_dev_scorer_block(struct kg_dev_scorer *sc, enum kg_side sside, size_t nb,
    const int64_t *fixed, const int64_t *rel)
{
	struct ranker *rk = &sc->rk;
	struct dev_bufs *v = &rk->v;
	size_t B = rk->B;

	if (nb > B) {
		kg_error("a block of %zu queries is over the scorer's %zu", nb,
		    B);
		return -1;
	}
	sc->nb = nb;
	memcpy(rk->hidx, fixed, nb * sizeof(*fixed));
	memcpy(rk->hidx + B, rel, nb * sizeof(*rel));
	find_runs(rk, nb);
	if (kg_be_upload(rk->be, v->idx, rk->hidx, 2 * B * sizeof(int64_t)) <
	    0 || kg_be_gather(rk->be, nb, rk->d, v->W, v->idx, v->fixed) < 0 ||
	    kg_be_gather(rk->be, nb, rk->rw, v->R, v->idx + B, v->rel) < 0)
		return -1;
	return queries(rk, sside, nb, 1);
}

int
kg_dev_scorer_tile(struct kg_dev_scorer *sc, uint64_t t0, size_t nc,
    float *out)
{
	struct ranker *rk = &sc->rk;

	if (nc > KG_EVAL_TILE || t0 + nc > rk->md->n_entities) {
		kg_error("entities %llu to %llu are not a tile of the model",
		    (unsigned long long)t0, (unsigned long long)(t0 + nc));
		return -1;
	}
	if (sc->nb == 0 || nc == 0)
		return 0;
	if (score_tile(rk, sc->nb, t0, nc) < 0)
		return -1;
	return kg_be_download(rk->be, out, rk->v.S, sc->nb * nc *
	    sizeof(float));
}

void
kg_dev_scorer_free(struct kg_dev_scorer *sc)
{
	if (sc == NULL)
		return;
	free_all(&sc->rk);
	free(sc);
}
