/*
 * trainer: the shallow trainer's options, set-up and tear-down; see
 * train.h.
 */
#include "kge/train_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "compute/compute.h"
#include "kge/modeldir.h"
#include "kge/grad.h"
#include "kge/plan.h"

int
kg_train_opts_check(const struct kg_train_opts *o)
{
	if (o->dim == 0) {
		kg_error("--hidden_dim must be at least 1");
		return -1;
	}
	if ((o->model == KG_MODEL_COMPLEX || o->model == KG_MODEL_ROTATE) &&
	    o->dim % 2 != 0) {
		kg_error("%s needs an even --hidden_dim, not %u",
		    kg_model_name(o->model), o->dim);
		return -1;
	}
	if (o->batch_size == 0 || o->neg_sample_size == 0) {
		kg_error("--batch_size and --neg_sample_size must be at "
		    "least 1");
		return -1;
	}
	if (o->chunk_size > o->batch_size) {
		kg_error("--neg_chunk_size %u exceeds --batch_size %u",
		    o->chunk_size, o->batch_size);
		return -1;
	}
	if (o->reg_norm != 2 && o->reg_norm != 3) {
		kg_error("--regularization_norm must be 2 or 3, not %u",
		    o->reg_norm);
		return -1;
	}
	if (o->loss.kind == KG_LOSS_SOFTMAX && o->loss.adv_temp > 0.0) {
		kg_error("self-adversarial weighting does not apply to the "
		    "softmax loss");
		return -1;
	}
	if (o->one_vs_all && o->one_vs_all_after) {
		kg_error("--one_vs_all scores every entity from the first "
		    "epoch; drop --one_vs_all_after");
		return -1;
	}
	if ((o->one_vs_all || o->one_vs_all_after) && o->use_types) {
		kg_error("%s and --neg_types cannot be combined",
		    o->one_vs_all ? "--one_vs_all" : "--one_vs_all_after");
		return -1;
	}
	if ((o->one_vs_all || o->one_vs_all_after) && o->neg_in_batch) {
		kg_error("%s scores every entity already; drop "
		    "--neg_in_batch",
		    o->one_vs_all ? "--one_vs_all" : "--one_vs_all_after");
		return -1;
	}
	if (!(o->lr > 0.0) || !isfinite(o->lr) || o->rel_lr < 0.0) {
		kg_error("--lr must be positive and finite");
		return -1;
	}
	if (o->epochs == 0 && o->max_step == 0) {
		kg_error("--epochs must be at least 1");
		return -1;
	}
	return kg_train_aux_check(o);
}

int
kg_train_one_vs_all(const struct kg_train_opts *o, uint32_t epochs_done)
{
	return o->one_vs_all || (o->one_vs_all_after > 0 &&
	    epochs_done >= o->one_vs_all_after);
}

uint32_t
kg_train_chunk_size(const struct kg_train_opts *o)
{
	uint32_t cs = o->chunk_size ? o->chunk_size : o->neg_sample_size;

	return cs < o->batch_size ? cs : o->batch_size;
}

struct kg_store_init
kg_train_init_rule(const struct kg_train_opts *o, enum kg_stream purpose)
{
	struct kg_store_init in;

	in.kind = o->init;
	in.scale = o->init_scale > 0.0 ? o->init_scale :
	    (o->gamma + 2.0) / (double)o->dim;
	in.seed = o->seed;
	in.purpose = purpose;
	return in;
}

struct kg_store_layout
kg_train_layout(const struct kg_train_opts *o, uint64_t n_entities,
    uint32_t n_parts, const int64_t *off)
{
	struct kg_store_layout l;

	l.n_rows = n_entities;
	l.dim = o->dim;
	l.state_width = (uint32_t)kg_optim_state_width(o->ent_optim, o->dim);
	l.n_parts = n_parts;
	l.off = off;
	return l;
}

void
kg_train_ws_alloc(struct kg_train_ws *ws, const struct kg_trainer *tr,
    size_t B, size_t N)
{
	size_t d = tr->model.dim, rw = tr->model.rel_width;
	size_t nc = N > 0 ? N : 1, nd;

	memset(ws, 0, sizeof(*ws));
	ws->B = B;
	ws->N = N;
	ws->plan = kg_xmalloc(sizeof(*ws->plan));
	kg_plan_init(ws->plan, tr);
	ws->fixed = kg_xmallocarray(B * d, sizeof(float));
	ws->rel = kg_xmallocarray(B, sizeof(*ws->rel));
	ws->grel = kg_xmallocarray(B, sizeof(*ws->grel));
	ws->posc = kg_xmallocarray(B * d, sizeof(float));
	/* Drawn candidates are copied (a whole partition is read in
	 * place): at most neg_sample_size and the in-batch ones. */
	nd = tr->o.neg_sample_size + (tr->o.neg_in_batch ? B : 0);
	ws->negc = tr->o.one_vs_all ? NULL :
	    kg_xmallocarray((nd < nc ? nd : nc) * d, sizeof(float));
	ws->pos = kg_xmallocarray(B, sizeof(float));
	ws->gpos = kg_xmallocarray(B, sizeof(float));
	ws->S = kg_xmallocarray(B * nc, sizeof(float));
	ws->G = kg_xmallocarray(B * nc, sizeof(float));
	ws->skip = kg_xmallocarray(B * nc, 1);
	ws->gfixed = kg_xmallocarray(B * d, sizeof(float));
	ws->gposc = kg_xmallocarray(B * d, sizeof(float));
	ws->gneg = kg_xmallocarray(nc * d, sizeof(float));
	ws->work = kg_xmallocarray(kg_grad_work_size(&tr->model, B, nc),
	    sizeof(float));
	ws->pwork = kg_xmallocarray(kg_grad_work_size(&tr->model, B, 1),
	    sizeof(float));
	ws->ugp = kg_xmallocarray(2 * B + nc, sizeof(*ws->ugp));
	ws->ug = kg_xmallocarray((2 * B + nc) * d, sizeof(float));
	ws->ugr = kg_xmallocarray(B * rw, sizeof(float));
	kg_train_aux_alloc(ws, tr);
	if (tr->o.one_vs_all || tr->o.one_vs_all_after) {
		ws->qfixed = kg_xmallocarray(B * d, sizeof(float));
		ws->qgfixed = kg_xmallocarray(B * d, sizeof(float));
		ws->qrel = kg_xmallocarray(B, sizeof(*ws->qrel));
		ws->qgrel = kg_xmallocarray(B, sizeof(*ws->qgrel));
		ws->qfirst = kg_xmallocarray(B + 1, sizeof(*ws->qfirst));
	}
}

void
kg_train_ws_free(struct kg_train_ws *ws)
{
	if (ws->plan != NULL)
		kg_plan_release(ws->plan);
	free(ws->plan);
	free(ws->fixed);
	free((void *)ws->rel);
	free(ws->posc);
	free(ws->negc);
	free(ws->pos);
	free(ws->gpos);
	free(ws->S);
	free(ws->G);
	free(ws->skip);
	free(ws->gfixed);
	free(ws->grel);
	free(ws->gposc);
	free(ws->gneg);
	free(ws->work);
	free(ws->pwork);
	free(ws->ugp);
	free(ws->ug);
	free(ws->ugr);
	free(ws->qfixed);
	free(ws->qgfixed);
	free((void *)ws->qrel);
	free(ws->qgrel);
	free(ws->qfirst);
	kg_train_aux_free(ws);
}

static void
init_relations(struct kg_trainer *tr)
{
	const struct kg_model *m = &tr->model;
	size_t rw = m->rel_width, k = m->rel_dim, d = m->dim, i, j;
	struct kg_store_init in = kg_train_init_rule(&tr->o, KG_STREAM_ENTITY_INIT);
	struct kg_rng rng;
	uint64_t r;

	kg_rng_stream(&rng, tr->o.seed, KG_STREAM_RELATION_INIT, 0, 0, 0, 0);
	for (r = 0; r < tr->n_rel_rows; r++) {
		float *row = tr->rel + r * rw;

		switch (m->kind) {
		case KG_MODEL_ROTATE:
			/* Phases spread over the whole circle. */
			for (i = 0; i < rw; i++)
				row[i] = (float)(M_PI *
				    (2.0 * kg_rng_uniform(&rng) - 1.0));
			break;
		case KG_MODEL_TRANSR:
			/* Translation as the entities, projection = I. */
			kg_init_fill(in.kind, in.scale, &rng, row, k);
			memset(row + k, 0, k * d * sizeof(float));
			for (i = 0, j = 0; i < k && j < d; i++, j++)
				row[k + i * d + j] = 1.0f;
			break;
		default:
			kg_init_fill(in.kind, in.scale, &rng, row, rw);
			break;
		}
	}
}

/* One negative sampler per partition of the store, by degree within it
 * (from the n_train triples) and by type. */
static int
init_samplers(struct kg_trainer *tr, const int32_t *train, uint64_t n_train,
    const int32_t *types, uint32_t n_types)
{
	struct kg_store *st = tr->ents;
	uint64_t *degree = NULL, i;
	uint32_t p;
	int rc = 0;

	/* Degrees only for degree-drawn negatives: 8 bytes an entity. */
	if (tr->o.degree_frac > 0.0) {
		degree = kg_xcalloc(tr->n_entities, sizeof(*degree));
		for (i = 0; i < n_train; i++) {
			degree[train[3 * i]]++;
			degree[train[3 * i + 2]]++;
		}
	}
	tr->samplers = kg_xcalloc(tr->n_parts, sizeof(*tr->samplers));
	for (p = 0; p < tr->n_parts && rc == 0; p++) {
		uint64_t base = st->off[p], rows = kg_store_part_rows(st, p);

		if (rows > tr->max_part_rows)
			tr->max_part_rows = rows;
		if (kg_sampler_init(&tr->samplers[p], rows, degree ? degree +
		    base : NULL, tr->o.degree_frac) < 0 || (tr->o.use_types &&
		    kg_sampler_set_types(&tr->samplers[p], types + base,
		    n_types) < 0))
			rc = -1;
	}
	free(degree);
	return rc;
}

/* The options and counts; 0 or -1. */
static int
check_setup(const struct kg_train_opts *o, const struct kg_store *ents,
    uint64_t n_relations, const int32_t *types)
{
	if (kg_train_opts_check(o) < 0)
		return -1;
	if (ents->n_rows == 0 || ents->n_rows > INT32_MAX ||
	    n_relations == 0 || n_relations > INT32_MAX / 2) {
		kg_error("cannot train with %llu entities and %llu relations",
		    (unsigned long long)ents->n_rows,
		    (unsigned long long)n_relations);
		return -1;
	}
	if (ents->dim != o->dim || ents->state_width !=
	    kg_optim_state_width(o->ent_optim, o->dim)) {
		kg_error("the entity store has rows of %u (+%u), not %u (+%zu)",
		    ents->dim, ents->state_width, o->dim,
		    kg_optim_state_width(o->ent_optim, o->dim));
		return -1;
	}
	if (o->use_types && types == NULL) {
		kg_error("--neg_types needs entity types in the dataset");
		return -1;
	}
	return 0;
}

int
kg_trainer_init_store(struct kg_trainer *tr, const struct kg_train_opts *o,
    struct kg_store *ents, uint64_t n_relations, const int32_t *train,
    uint64_t n_train, const int32_t *known, uint64_t nknown,
    const int32_t *types, uint32_t n_types)
{
	uint64_t nc;
	uint32_t t;

	memset(tr, 0, sizeof(*tr));
	if (check_setup(o, ents, n_relations, types) < 0)
		return -1;
	tr->o = *o;
	tr->types = o->use_types ? types : NULL;
	if (kg_model_init(&tr->model, o->model, o->dim, o->rel_dim,
	    (float)o->gamma) < 0)
		return -1;
	tr->ents = ents;
	tr->n_entities = ents->n_rows;
	tr->n_parts = ents->n_parts;
	tr->n_relations = n_relations;
	tr->n_rel_rows = o->reciprocal ? 2 * n_relations : n_relations;
	tr->rel = kg_xmallocarray(tr->n_rel_rows * tr->model.rel_width,
	    sizeof(float));
	tr->rel_state_width = kg_optim_state_width(o->rel_optim,
	    tr->model.rel_width);
	tr->rel_state = kg_xcalloc(tr->n_rel_rows * tr->rel_state_width,
	    sizeof(float));
	init_relations(tr);
	if (init_samplers(tr, train, n_train, types, n_types) < 0 ||
	    (o->filter_negatives && kg_tripleset_build(&tr->known, known,
	    nknown, tr->n_entities, tr->n_rel_rows) < 0) ||
	    (o->subsampling && kg_query_weights_build(&tr->qw, train, n_train,
	    tr->n_entities, n_relations) < 0)) {
		kg_trainer_release(tr);
		return -1;
	}
	tr->nthreads = o->threads ? o->threads : (uint32_t)omp_get_max_threads();
	kg_neg_pool_init(&tr->pool, tr->n_parts, ents->off, tr->n_parts > 1 ?
	    o->neg_pool : 0, o->dim, tr->nthreads);
	/* OpenBLAS must not start threads of its own inside ours. */
	kg_compute_init();
	tr->ws = kg_xcalloc(tr->nthreads, sizeof(*tr->ws));
	if (o->deterministic)
		tr->defer = kg_xcalloc(KG_DET_ROUND, sizeof(*tr->defer));
	/* Candidates per chunk: the drawn (and in-batch) negatives, a
	 * whole partition with 1-vs-all; a two-stage schedule has both. */
	nc = o->one_vs_all ? 0 : o->neg_sample_size +
	    (o->neg_in_batch ? kg_train_chunk_size(o) : 0);
	if ((o->one_vs_all || o->one_vs_all_after) && tr->max_part_rows > nc)
		nc = tr->max_part_rows;
	for (t = 0; t < tr->nthreads; t++)
		kg_train_ws_alloc(&tr->ws[t], tr, kg_train_chunk_size(o), nc);
	return 0;
}

int
kg_trainer_init(struct kg_trainer *tr, const struct kg_train_opts *o,
    uint64_t n_entities, uint64_t n_relations, const int32_t *train,
    uint64_t n_train, const int32_t *known, uint64_t nknown,
    const int32_t *types, uint32_t n_types)
{
	struct kg_store_layout l = kg_train_layout(o, n_entities, 1, NULL);
	struct kg_store_init in = kg_train_init_rule(o, KG_STREAM_ENTITY_INIT);
	struct kg_store *st;

	memset(tr, 0, sizeof(*tr));
	if (kg_train_opts_check(o) < 0)
		return -1;
	st = kg_store_open_mem(&l, &in);
	if (st == NULL)
		return -1;
	if (kg_trainer_init_store(tr, o, st, n_relations, train, n_train,
	    known, nknown, types, n_types) < 0) {
		kg_store_free(st);
		return -1;
	}
	tr->own_store = 1;
	return 0;
}

void
kg_trainer_release(struct kg_trainer *tr)
{
	uint32_t i;

	if (tr->samplers != NULL)
		for (i = 0; i < tr->n_parts; i++)
			kg_sampler_release(&tr->samplers[i]);
	free(tr->samplers);
	kg_neg_pool_release(&tr->pool);
	free(tr->rel);
	free(tr->rel_state);
	kg_tripleset_release(&tr->known);
	kg_query_weights_release(&tr->qw);
	if (tr->ws != NULL)
		for (i = 0; i < tr->nthreads; i++)
			kg_train_ws_free(&tr->ws[i]);
	free(tr->ws);
	if (tr->defer != NULL)
		for (i = 0; i < KG_DET_ROUND; i++)
			kg_defer_release(&tr->defer[i]);
	free(tr->defer);
	tr->defer = NULL;
	free(tr->best_rel);
	free(tr->frozen_ent);
	free(tr->frozen_rel);
	if (tr->own_store)
		kg_store_free(tr->ents);
	memset(tr, 0, sizeof(*tr));
}

int
kg_trainer_check_finite(struct kg_trainer *tr)
{
	uint32_t p;
	int rc = 0;

	for (p = 0; p < tr->n_parts && rc == 0; p++) {
		const struct kg_store_part *a = kg_store_acquire(tr->ents, p);

		if (a == NULL)
			return -1;
		rc = kg_check_finite("entity embeddings", a->w, a->rows,
		    tr->model.dim);
		kg_store_release(tr->ents, p, 0);
	}
	if (rc < 0 || kg_check_finite("relation parameters", tr->rel,
	    tr->n_rel_rows, tr->model.rel_width) < 0) {
		kg_error("training diverged in epoch %u; try a smaller --lr, "
		    "--max_grad_norm or a regulariser", tr->epoch);
		return -1;
	}
	return 0;
}
