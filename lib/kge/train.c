#include "kge/train.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <omp.h>

#include "compute/compute.h"
#include "io/dataset.h"
#include "eval/eval.h"
#include "kge/grad.h"
#include "io/manifest.h"
#include "io/modeldir.h"
#include "io/npy.h"
#include "io/outdir.h"
#include "core/util.h"

/* RNG stream numbers: chunks use (epoch << 40 | bucket << 32 | chunk). */
#define STREAM_INIT (1ULL << 62)
#define STREAM_SHUFFLE (1ULL << 61)

struct kg_train_ws {
	size_t B, N;		/* capacities: positives, negatives */
	int32_t *tri;		/* B triples of the chunk */
	float *fixed, *posc, *negc;	/* gathered entity rows */
	const float **rel;	/* B relation rows, in the table */
	float **grel;		/* B gradient rows, in ugr (shared) */
	float *pos, *S, *G, *gpos;
	uint8_t *skip;
	float *gfixed, *gposc, *gneg;
	float *work, *pwork;	/* chunk and pairs passes */
	uint32_t *neg_ids;
	uint32_t stamp;
	uint32_t *ent_stamp, *ent_slot;	/* n_entities */
	uint32_t *rel_stamp, *rel_slot;	/* n_rel_rows */
	uint64_t *uent;
	float *ug;
	uint32_t *urel;
	float *ugr;
};

/* One chunk of a bucket: positions [start, start + len) of the order. */
struct chunk {
	uint64_t start;
	uint32_t len;
	uint8_t side;
	int32_t type;		/* corrupted entities' type, or -1 */
	uint32_t whole;		/* positives of the whole chunk (shares) */
};

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
	if (o->one_vs_all && o->use_types) {
		kg_error("--one_vs_all and --neg_types cannot be combined");
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
	return 0;
}

/* The chunk size actually used. */
static uint32_t
chunk_size(const struct kg_train_opts *o)
{
	uint32_t cs = o->chunk_size ? o->chunk_size : o->neg_sample_size;

	return cs < o->batch_size ? cs : o->batch_size;
}

static void
ws_alloc(struct kg_train_ws *ws, const struct kg_trainer *tr, size_t B,
    size_t N)
{
	size_t d = tr->model.dim, rw = tr->model.rel_width;
	size_t nc = N > 0 ? N : 1;

	memset(ws, 0, sizeof(*ws));
	ws->B = B;
	ws->N = N;
	ws->tri = kg_xmallocarray(3 * B, sizeof(*ws->tri));
	ws->fixed = kg_xmallocarray(B * d, sizeof(float));
	ws->rel = kg_xmallocarray(B, sizeof(*ws->rel));
	ws->grel = kg_xmallocarray(B, sizeof(*ws->grel));
	ws->posc = kg_xmallocarray(B * d, sizeof(float));
	ws->negc = tr->o.one_vs_all ? NULL :
	    kg_xmallocarray(nc * d, sizeof(float));
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
	ws->neg_ids = kg_xmallocarray(nc, sizeof(uint32_t));
	ws->ent_stamp = kg_xcalloc(tr->n_entities, sizeof(uint32_t));
	ws->ent_slot = kg_xmallocarray(tr->n_entities, sizeof(uint32_t));
	ws->rel_stamp = kg_xcalloc(tr->n_rel_rows, sizeof(uint32_t));
	ws->rel_slot = kg_xmallocarray(tr->n_rel_rows, sizeof(uint32_t));
	ws->uent = kg_xmallocarray(2 * B + nc, sizeof(uint64_t));
	ws->ug = kg_xmallocarray((2 * B + nc) * d, sizeof(float));
	ws->urel = kg_xmallocarray(B, sizeof(uint32_t));
	ws->ugr = kg_xmallocarray(B * rw, sizeof(float));
}

static void
ws_free(struct kg_train_ws *ws)
{
	free(ws->tri);
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
	free(ws->neg_ids);
	free(ws->ent_stamp);
	free(ws->ent_slot);
	free(ws->rel_stamp);
	free(ws->rel_slot);
	free(ws->uent);
	free(ws->ug);
	free(ws->urel);
	free(ws->ugr);
}

static void
init_rows(float *w, uint64_t n, enum kg_init_kind kind, double scale,
    struct kg_rng *rng)
{
	uint64_t i;

	for (i = 0; i < n; i++)
		w[i] = (float)(kind == KG_INIT_NORMAL ?
		    scale * kg_rng_normal(rng) :
		    scale * (2.0 * kg_rng_uniform(rng) - 1.0));
}

static void
init_relations(struct kg_trainer *tr, double scale)
{
	const struct kg_model *m = &tr->model;
	size_t rw = m->rel_width, k = m->rel_dim, d = m->dim, i, j;
	struct kg_rng rng;
	uint64_t r;

	kg_rng_seed(&rng, tr->o.seed, STREAM_INIT - 1);
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
			init_rows(row, k, tr->o.init, scale, &rng);
			memset(row + k, 0, k * d * sizeof(float));
			for (i = 0, j = 0; i < k && j < d; i++, j++)
				row[k + i * d + j] = 1.0f;
			break;
		default:
			init_rows(row, rw, tr->o.init, scale, &rng);
			break;
		}
	}
}

int
kg_trainer_init(struct kg_trainer *tr, const struct kg_train_opts *o,
    uint64_t n_entities, uint64_t n_relations, const int32_t *train,
    uint64_t n_train, const int32_t *known, uint64_t nknown,
    const int32_t *types, uint32_t n_types)
{
	return kg_trainer_init_parts(tr, o, n_entities, n_relations, 1, NULL,
	    train, n_train, known, nknown, types, n_types);
}

int
kg_trainer_init_parts(struct kg_trainer *tr, const struct kg_train_opts *o,
    uint64_t n_entities, uint64_t n_relations, uint32_t nparts,
    const int64_t *offsets, const int32_t *train, uint64_t n_train,
    const int32_t *known, uint64_t nknown, const int32_t *types,
    uint32_t n_types)
{
	struct kg_emb_part *p;
	uint64_t *degree, i, N;
	double scale;
	struct kg_rng rng;
	uint32_t t;

	memset(tr, 0, sizeof(*tr));
	if (kg_train_opts_check(o) < 0)
		return -1;
	if (n_entities == 0 || n_entities > INT32_MAX || n_relations == 0 ||
	    n_relations > INT32_MAX / 2) {
		kg_error("cannot train with %llu entities and %llu relations",
		    (unsigned long long)n_entities,
		    (unsigned long long)n_relations);
		return -1;
	}
	if (o->use_types && types == NULL) {
		kg_error("--neg_types needs entity types in the dataset");
		return -1;
	}
	tr->o = *o;
	tr->types = o->use_types ? types : NULL;
	if (kg_model_init(&tr->model, o->model, o->dim, o->rel_dim,
	    (float)o->gamma) < 0)
		return -1;
	tr->n_entities = n_entities;
	tr->n_relations = n_relations;
	tr->n_rel_rows = o->reciprocal ? 2 * n_relations : n_relations;
	if (nparts == 0 || (nparts > 1 && (offsets == NULL ||
	    offsets[0] != 0 || (uint64_t)offsets[nparts] != n_entities))) {
		kg_error("bad partition offsets for %llu entities",
		    (unsigned long long)n_entities);
		return -1;
	}
	tr->n_parts = nparts;
	tr->parts = p = kg_xcalloc(nparts, sizeof(*p));
	for (t = 0; t < nparts; t++) {
		p[t].base = nparts > 1 ? (uint64_t)offsets[t] : 0;
		p[t].rows = nparts > 1 ? (uint64_t)(offsets[t + 1] -
		    offsets[t]) : n_entities;
	}
	scale = o->init_scale > 0.0 ? o->init_scale :
	    (o->gamma + 2.0) / (double)o->dim;
	if (nparts == 1) {
		tr->own_parts = 1;
		p->w = kg_xaligned_alloc(64, n_entities * o->dim *
		    sizeof(float));
		p->state = kg_xcalloc(n_entities, sizeof(float));
		kg_rng_seed(&rng, o->seed, STREAM_INIT);
		init_rows(p->w, n_entities * o->dim, o->init, scale, &rng);
	}
	tr->rel = kg_xmallocarray(tr->n_rel_rows * tr->model.rel_width,
	    sizeof(float));
	tr->rel_state_width = kg_optim_state_width(o->rel_optim,
	    tr->model.rel_width);
	tr->rel_state = kg_xcalloc(tr->n_rel_rows * tr->rel_state_width,
	    sizeof(float));
	init_relations(tr, scale);

	degree = kg_xcalloc(n_entities, sizeof(*degree));
	for (i = 0; i < n_train; i++) {
		degree[train[3 * i]]++;
		degree[train[3 * i + 2]]++;
	}
	tr->samplers = kg_xcalloc(nparts, sizeof(*tr->samplers));
	for (t = 0; t < nparts; t++) {
		if (p[t].rows == 0) {
			kg_error("partition %u has no entities", t);
			free(degree);
			kg_trainer_release(tr);
			return -1;
		}
		if (kg_sampler_init(&tr->samplers[t], p[t].rows,
		    degree + p[t].base, o->degree_frac) < 0 || (o->use_types &&
		    kg_sampler_set_types(&tr->samplers[t], types + p[t].base,
		    n_types) < 0)) {
			free(degree);
			kg_trainer_release(tr);
			return -1;
		}
	}
	free(degree);
	if (o->filter_negatives && kg_tripleset_build(&tr->known, known,
	    nknown, n_entities, tr->n_rel_rows) < 0) {
		kg_trainer_release(tr);
		return -1;
	}
	tr->nthreads = o->threads ? o->threads : (uint32_t)omp_get_max_threads();
	/* OpenBLAS must not start threads of its own inside ours. */
	kg_compute_init();
	N = o->one_vs_all ? n_entities : o->neg_sample_size;
	tr->ws = kg_xcalloc(tr->nthreads, sizeof(*tr->ws));
	for (t = 0; t < tr->nthreads; t++)
		ws_alloc(&tr->ws[t], tr, chunk_size(o), N);
	return 0;
}

static float *
entity_state(const struct kg_trainer *tr, uint64_t e)
{
	uint32_t p;

	for (p = 0; p + 1 < tr->n_parts; p++)
		if (e < tr->parts[p].base + tr->parts[p].rows)
			break;
	return tr->parts[p].state + (e - tr->parts[p].base);
}

int
kg_trainer_partition(struct kg_trainer *tr, uint32_t n_parts,
    const uint64_t *off, const int32_t *train, uint64_t n_train)
{
	struct kg_emb_part *parts;
	struct kg_sampler *samplers;
	uint64_t *degree, i, d = tr->model.dim;
	uint32_t p;

	if (n_parts == 0 || off[0] != 0 || off[n_parts] != tr->n_entities) {
		kg_error("partition offsets do not cover the %llu entities",
		    (unsigned long long)tr->n_entities);
		return -1;
	}
	for (p = 0; p < n_parts; p++)
		if (off[p + 1] <= off[p]) {
			kg_error("partition %u is empty", p);
			return -1;
		}
	degree = kg_xcalloc(tr->n_entities, sizeof(*degree));
	for (i = 0; i < n_train; i++) {
		degree[train[3 * i]]++;
		degree[train[3 * i + 2]]++;
	}
	parts = kg_xcalloc(n_parts, sizeof(*parts));
	samplers = kg_xcalloc(n_parts, sizeof(*samplers));
	for (p = 0; p < n_parts; p++) {
		struct kg_emb_part *q = &parts[p];

		q->base = off[p];
		q->rows = off[p + 1] - off[p];
		q->w = kg_xaligned_alloc(64, q->rows * d * sizeof(float));
		q->state = kg_xmallocarray(q->rows, sizeof(float));
		for (i = 0; i < q->rows; i++) {
			memcpy(q->w + i * d, kg_trainer_entity(tr, q->base + i),
			    d * sizeof(float));
			q->state[i] = *entity_state(tr, q->base + i);
		}
		if (kg_sampler_init(&samplers[p], q->rows, degree + q->base,
		    tr->o.degree_frac) < 0 || (tr->types != NULL &&
		    kg_sampler_set_types(&samplers[p], tr->types + q->base,
		    tr->samplers[0].n_types) < 0)) {
			/* Leave the trainer as it was. */
			for (i = 0; i <= p; i++) {
				free(parts[i].w);
				free(parts[i].state);
				kg_sampler_release(&samplers[i]);
			}
			free(parts);
			free(samplers);
			free(degree);
			return -1;
		}
	}
	free(degree);
	for (p = 0; p < tr->n_parts; p++) {
		free(tr->parts[p].w);
		free(tr->parts[p].state);
		kg_sampler_release(&tr->samplers[p]);
	}
	free(tr->parts);
	free(tr->samplers);
	tr->parts = parts;
	tr->samplers = samplers;
	tr->n_parts = n_parts;
	return 0;
}

void
kg_trainer_release(struct kg_trainer *tr)
{
	uint32_t i;

	if (tr->parts != NULL && tr->own_parts)
		for (i = 0; i < tr->n_parts; i++) {
			free(tr->parts[i].w);
			free(tr->parts[i].state);
		}
	free(tr->parts);
	if (tr->samplers != NULL)
		for (i = 0; i < tr->n_parts; i++)
			kg_sampler_release(&tr->samplers[i]);
	free(tr->samplers);
	free(tr->rel);
	free(tr->rel_state);
	kg_tripleset_release(&tr->known);
	if (tr->ws != NULL)
		for (i = 0; i < tr->nthreads; i++)
			ws_free(&tr->ws[i]);
	free(tr->ws);
	memset(tr, 0, sizeof(*tr));
}

float *
kg_trainer_entity(const struct kg_trainer *tr, uint64_t e)
{
	uint32_t p;

	for (p = 0; p + 1 < tr->n_parts; p++)
		if (e < tr->parts[p].base + tr->parts[p].rows)
			break;
	return tr->parts[p].w + (e - tr->parts[p].base) * tr->model.dim;
}

void
kg_trainer_entities(const struct kg_trainer *tr, float *out)
{
	uint32_t p;

	for (p = 0; p < tr->n_parts; p++)
		memcpy(out + tr->parts[p].base * tr->model.dim, tr->parts[p].w,
		    tr->parts[p].rows * tr->model.dim * sizeof(float));
}

/* Add gradient row g of entity e (global) to the chunk's unique rows. */
static void
add_ent_grad(struct kg_train_ws *ws, uint64_t e, const float *g, size_t d,
    size_t *nu)
{
	float *dst;
	size_t i;

	if (ws->ent_stamp[e] != ws->stamp) {
		ws->ent_stamp[e] = ws->stamp;
		ws->ent_slot[e] = (uint32_t)*nu;
		ws->uent[*nu] = e;
		memcpy(ws->ug + *nu * d, g, d * sizeof(float));
		(*nu)++;
		return;
	}
	dst = ws->ug + (size_t)ws->ent_slot[e] * d;
#pragma omp simd
	for (i = 0; i < d; i++)
		dst[i] += g[i];
}

static void
next_stamp(struct kg_train_ws *ws, const struct kg_trainer *tr)
{
	if (++ws->stamp == 0) {
		memset(ws->ent_stamp, 0, tr->n_entities * sizeof(uint32_t));
		memset(ws->rel_stamp, 0, tr->n_rel_rows * sizeof(uint32_t));
		ws->stamp = 1;
	}
}

/*
 * Point every positive at the gradient row of its relation: one row of
 * ugr per distinct relation of the chunk, zeroed.  Returns their count.
 */
static size_t
relation_slots(const struct kg_trainer *tr, struct kg_train_ws *ws,
    size_t B)
{
	size_t rw = tr->model.rel_width, nu = 0, i;

	for (i = 0; i < B; i++) {
		uint32_t r = (uint32_t)ws->tri[3 * i + 1];

		if (ws->rel_stamp[r] != ws->stamp) {
			ws->rel_stamp[r] = ws->stamp;
			ws->rel_slot[r] = (uint32_t)nu;
			ws->urel[nu] = r;
			memset(ws->ugr + nu * rw, 0, rw * sizeof(float));
			nu++;
		}
		ws->grel[i] = ws->ugr + (size_t)ws->rel_slot[r] * rw;
	}
	return nu;
}

/* Update the nu relation rows ids with the gradient rows g. */
static void
apply_relations(struct kg_trainer *tr, const uint32_t *ids, float *g,
    size_t nu)
{
	size_t rw = tr->model.rel_width, sw = tr->rel_state_width, i;
	struct kg_adam adam = KG_ADAM_INIT;
	float lr;

	if (tr->o.rel_optim == KG_OPTIM_ADAM) {
		adam.lr = (float)(tr->o.rel_lr > 0.0 ? tr->o.rel_lr : 0.001);
		for (i = 0; i < nu; i++) {
			if (tr->o.clip > 0.0)
				kg_clip_row(g + i * rw, rw,
				    (float)tr->o.clip);
			kg_adam_row(tr->rel + (size_t)ids[i] * rw,
			    tr->rel_state + (size_t)ids[i] * sw,
			    g + i * rw, rw, &adam);
		}
		return;
	}
	lr = (float)(tr->o.rel_lr > 0.0 ? tr->o.rel_lr : tr->o.lr);
	for (i = 0; i < nu; i++) {
		if (tr->o.clip > 0.0)
			kg_clip_row(g + i * rw, rw, (float)tr->o.clip);
		kg_adagrad_row(tr->rel + (size_t)ids[i] * rw,
		    tr->rel_state + ids[i], g + i * rw, rw, lr);
	}
}

/* Ask for the cache lines of a row that will be used soon: rows are
 * scattered over tables much larger than the caches. */
static inline void
prefetch_row(const float *p, size_t n, int write)
{
#if defined(__GNUC__)
	size_t i;

	for (i = 0; i < n; i += 16) {
		if (write)
			__builtin_prefetch(p + i, 1, 3);
		else
			__builtin_prefetch(p + i, 0, 3);
	}
#else
	(void)p;
	(void)n;
	(void)write;
#endif
}

static void
update_entity(struct kg_trainer *tr, uint64_t e, float *g)
{
	struct kg_emb_part *p = tr->parts;
	size_t d = tr->model.dim;
	uint32_t k;

	for (k = 0; k + 1 < tr->n_parts; k++, p++)
		if (e < p->base + p->rows)
			break;
	if (tr->o.clip > 0.0)
		kg_clip_row(g, d, (float)tr->o.clip);
	kg_adagrad_row(p->w + (e - p->base) * d, p->state + (e - p->base), g,
	    d, (float)tr->o.lr);
}

/* Mark the negatives that are known positives, or the target itself in
 * 1-vs-all; returns 1 when any mask applies. */
static int
mark_skips(const struct kg_trainer *tr, struct kg_train_ws *ws,
    const struct kg_emb_part *pc, const struct chunk *ch, size_t nc)
{
	int filter = tr->o.filter_negatives, ova = tr->o.one_vs_all;
	size_t i, j;

	if (!filter && !ova)
		return 0;
	for (i = 0; i < ch->len; i++) {
		const int32_t *x = ws->tri + 3 * i;
		uint64_t target = (uint64_t)(ch->side == KG_SIDE_TAIL ?
		    x[2] : x[0]);
		uint8_t *sk = ws->skip + i * nc;

		for (j = 0; j < nc; j++) {
			uint64_t c = pc->base + (ova ? j : ws->neg_ids[j]);

			sk[j] = ova && c == target;
			if (filter && !sk[j])
				sk[j] = (uint8_t)(ch->side == KG_SIDE_TAIL ?
				    kg_tripleset_has(&tr->known,
				    (uint64_t)x[0], (uint64_t)x[1], c) :
				    kg_tripleset_has(&tr->known, c,
				    (uint64_t)x[1], (uint64_t)x[2]));
		}
	}
	return 1;
}

void
kg_trainer_apply(struct kg_trainer *tr, const uint64_t *ent, float *ent_g,
    size_t n_ent, const uint32_t *rel, float *rel_g, size_t n_rel)
{
	size_t d = tr->model.dim, i;

	for (i = 0; i < n_ent; i++)
		update_entity(tr, ent[i], ent_g + i * d);
	apply_relations(tr, rel, rel_g, n_rel);
}

/* Hand a chunk's summed gradients (ws's entity and relation rows; none
 * when ws is NULL) to the sync hook; returns loss, or NaN when the hook
 * failed. */
static double
sync_chunk(struct kg_trainer *tr, const uint64_t *ent, size_t n_ent,
    struct kg_train_ws *ws, size_t n_rel, double loss)
{
	struct kg_row_grads g;

	g.n_ent = n_ent;
	g.ent = ent;
	g.ent_g = ws ? ws->ug : NULL;
	g.n_rel = n_rel;
	g.rel = ws ? ws->urel : NULL;
	g.rel_g = ws ? ws->ugr : NULL;
	if (tr->sync(tr->sync_ctx, tr, &g) < 0)
		return NAN;
	return loss;
}

/*
 * Forward, loss, backward and update for one chunk whose triples are in
 * ws->tri.  pf holds the fixed entities, pc the corrupted ones.  Returns
 * the sum of the positives' losses (NaN if it is not finite).
 */
static double
train_chunk(struct kg_trainer *tr, struct kg_train_ws *ws,
    struct kg_rng *rng, const struct chunk *ch, struct kg_emb_part *pf,
    struct kg_emb_part *pc, uint32_t pc_index)
{
	const struct kg_model *m = &tr->model;
	size_t d = m->dim, rw = m->rel_width, B = ch->len, nc, i, j, nu = 0;
	size_t nrel;
	enum kg_side side = (enum kg_side)ch->side;
	int fcol = side == KG_SIDE_TAIL ? 0 : 2, ccol = 2 - fcol, masked;
	const float *cand;
	double loss = 0.0, inv = 1.0 / (double)ch->whole;
	float finv = (float)inv;
	if (B == 0)		/* an empty share still takes part in sync */
		return tr->sync ? sync_chunk(tr, NULL, 0, NULL, 0, 0.0) : 0.0;

	for (i = 0; i < B; i++) {
		const int32_t *x = ws->tri + 3 * i;

		if (i + 2 < B) {
			prefetch_row(pf->w + ((uint64_t)x[6 + fcol] - pf->base) *
			    d, d, 0);
			prefetch_row(pc->w + ((uint64_t)x[6 + ccol] - pc->base) *
			    d, d, 0);
		}
		memcpy(ws->fixed + i * d, pf->w + ((uint64_t)x[fcol] -
		    pf->base) * d, d * sizeof(float));
		ws->rel[i] = tr->rel + (size_t)x[1] * rw;
		memcpy(ws->posc + i * d, pc->w + ((uint64_t)x[ccol] -
		    pc->base) * d, d * sizeof(float));
	}
	if (tr->o.one_vs_all) {
		cand = pc->w;
		nc = pc->rows;
	} else {
		nc = tr->o.neg_sample_size;
		if (ch->type < 0 || kg_sampler_draw_type(&tr->samplers[pc_index],
		    rng, ch->type, nc, ws->neg_ids) < 0)
			kg_sampler_draw(&tr->samplers[pc_index], rng, nc,
			    ws->neg_ids);
		for (j = 0; j < nc; j++) {
			if (j + 2 < nc)
				prefetch_row(pc->w + (size_t)ws->neg_ids[j + 2] *
				    d, d, 0);
			memcpy(ws->negc + j * d, pc->w + (size_t)ws->neg_ids[j] *
			    d, d * sizeof(float));
		}
		cand = ws->negc;
	}
	kg_grad_pairs_forward_rows(m, side, B, ws->fixed, ws->rel, ws->posc,
	    ws->pos, ws->pwork);
	kg_grad_chunk_forward_rows(m, side, B, ws->fixed, ws->rel, cand, nc,
	    ws->S, ws->work);
	masked = mark_skips(tr, ws, pc, ch, nc);
	for (i = 0; i < B; i++) {
		float *G = ws->G + i * nc;

		loss += kg_loss_eval(&tr->o.loss, ws->pos[i], ws->S + i * nc, nc,
		    masked ? ws->skip + i * nc : NULL, &ws->gpos[i], G);
		ws->gpos[i] = (float)(ws->gpos[i] * inv);
#pragma omp simd
		for (j = 0; j < nc; j++)
			G[j] *= finv;
	}
	memset(ws->gfixed, 0, B * d * sizeof(float));
	memset(ws->gposc, 0, B * d * sizeof(float));
	memset(ws->gneg, 0, nc * d * sizeof(float));
	next_stamp(ws, tr);
	nrel = relation_slots(tr, ws, B);
	if (tr->o.reg_coef > 0.0) {
		uint32_t p = tr->o.reg_norm;
		double c = tr->o.reg_coef;

		loss += kg_regularise(ws->fixed, ws->gfixed, B * d, c, p, inv);
		for (i = 0; i < B; i++)
			loss += kg_regularise(ws->rel[i], ws->grel[i], rw, c, p,
			    inv);
		loss += kg_regularise(ws->posc, ws->gposc, B * d, c, p, inv);
	}
	if (!isfinite(loss))
		return tr->sync ? sync_chunk(tr, NULL, 0, NULL, 0, NAN) : NAN;
	kg_grad_chunk_backward_rows(m, side, B, ws->fixed, ws->rel, cand, nc,
	    ws->G, ws->gfixed, ws->grel, ws->gneg, ws->work);
	kg_grad_pairs_backward_rows(m, side, B, ws->fixed, ws->rel, ws->posc,
	    ws->gpos, ws->gfixed, ws->grel, ws->gposc, ws->pwork);

	if (tr->o.one_vs_all) {
		/* Every row of pc has a gradient: fold the positives' rows
		 * of pc into it and update all of them. */
		for (i = 0; i < B; i++) {
			const int32_t *x = ws->tri + 3 * i;
			uint64_t f = (uint64_t)x[fcol], c = (uint64_t)x[ccol];
			float *gc = ws->gneg + (c - pc->base) * d;

			for (j = 0; j < d; j++)
				gc[j] += ws->gposc[i * d + j];
			if (pf == pc) {
				gc = ws->gneg + (f - pc->base) * d;
				for (j = 0; j < d; j++)
					gc[j] += ws->gfixed[i * d + j];
			} else
				add_ent_grad(ws, f, ws->gfixed + i * d, d,
				    &nu);
		}
		for (j = 0; j < nc; j++)
			update_entity(tr, pc->base + j, ws->gneg + j * d);
	} else {
		for (i = 0; i < B; i++) {
			const int32_t *x = ws->tri + 3 * i;

			add_ent_grad(ws, (uint64_t)x[fcol], ws->gfixed + i * d,
			    d, &nu);
			add_ent_grad(ws, (uint64_t)x[ccol], ws->gposc + i * d,
			    d, &nu);
		}
		for (j = 0; j < nc; j++)
			add_ent_grad(ws, pc->base + ws->neg_ids[j],
			    ws->gneg + j * d, d, &nu);
	}
	if (tr->sync)
		return sync_chunk(tr, ws->uent, nu, ws, nrel, loss);
	for (i = 0; i < nu; i++) {
		if (i + 2 < nu)
			prefetch_row(kg_trainer_entity(tr, ws->uent[i + 2]), d, 1);
		update_entity(tr, ws->uent[i], ws->ug + i * d);
	}
	apply_relations(tr, ws->urel, ws->ugr, nrel);
	return loss;
}

/*
 * Cut n positives into chunks: batches of batch_size, chunks of
 * chunk_size inside, sides alternating (tails only with reciprocal
 * relations).  With types, positions are first grouped by (side, type of
 * the corrupted entity) so that a chunk's negatives share the type;
 * order then maps positions to triples.  Returns the chunk count.
 */
static size_t
plan_chunks(const struct kg_trainer *tr, const int32_t *hrt, uint64_t n,
    uint64_t max_batches, struct chunk **chunks, uint64_t **order,
    const int32_t *types)
{
	uint64_t bs = tr->o.batch_size, cs = chunk_size(&tr->o), nb, b, k;
	size_t nch = 0, cap;
	struct chunk *c;
	uint64_t *ord = kg_xmallocarray(n ? n : 1, sizeof(*ord));

	nb = (n + bs - 1) / bs;
	if (max_batches > 0 && nb > max_batches)
		nb = max_batches;
	if (nb * bs < n)
		n = nb * bs;
	cap = (size_t)(nb * ((bs + cs - 1) / cs) + 4 * (uint64_t)
	    (types ? tr->samplers[0].n_types + 1 : 1));
	c = kg_xmallocarray(cap, sizeof(*c));
	if (types == NULL) {
		for (k = 0; k < n; k++)
			ord[k] = k;
		for (b = 0; b < nb; b++) {
			uint64_t end = (b + 1) * bs < n ? (b + 1) * bs : n;

			for (k = b * bs; k < end; k += cs) {
				c[nch].start = k;
				c[nch].len = (uint32_t)(end - k < cs ? end - k :
				    cs);
				c[nch].side = tr->o.reciprocal ? KG_SIDE_TAIL :
				    (uint8_t)(nch % 2);
				c[nch].type = -1;
				c[nch].whole = c[nch].len;
				nch++;
			}
		}
	} else {
		/* Counting sort by key = side * (T + 1) + type + 1. */
		uint64_t T = tr->samplers[0].n_types, nkeys = 2 * (T + 1);
		uint64_t *cnt = kg_xcalloc(nkeys + 1, sizeof(*cnt)), key;

		for (k = 0; k < n; k++) {
			int side = tr->o.reciprocal ? 0 : (int)((k / cs) % 2);
			int32_t e = hrt[3 * k + (side == KG_SIDE_TAIL ? 2 : 0)];

			key = (uint64_t)side * (T + 1) + (uint64_t)(types[e] + 1);
			cnt[key + 1]++;
		}
		for (key = 0; key < nkeys; key++)
			cnt[key + 1] += cnt[key];
		for (key = 0; key < nkeys; key++) {
			uint64_t lo = cnt[key], hi = cnt[key + 1];

			for (k = lo; k < hi; k += cs) {
				c[nch].start = k;
				c[nch].len = (uint32_t)(hi - k < cs ? hi - k : cs);
				c[nch].side = (uint8_t)(key / (T + 1));
				c[nch].type = (int32_t)(key % (T + 1)) - 1;
				c[nch].whole = c[nch].len;
				nch++;
			}
		}
		for (k = 0; k < n; k++) {
			int side = tr->o.reciprocal ? 0 : (int)((k / cs) % 2);
			int32_t e = hrt[3 * k + (side == KG_SIDE_TAIL ? 2 : 0)];

			key = (uint64_t)side * (T + 1) + (uint64_t)(types[e] + 1);
			ord[cnt[key]++] = k;
		}
		free(cnt);
	}
	*chunks = c;
	*order = ord;
	return nch;
}

/* Progress inside an epoch, at most every two seconds. */
static void
report(const struct kg_trainer *tr, uint64_t done, uint64_t n, double t0,
    double *last)
{
	double now = kg_now(), rate;
	int tty = isatty(2);

	/* A terminal gets one line rewritten; a log a line every 30 s. */
	if (now - *last < (tty ? 2.0 : 30.0))
		return;
	*last = now;
	rate = (double)done / (now - t0);
	fprintf(stderr, "%s%s: epoch %u: %3.0f%%, %.0f triples/s, eta %.0f s%s",
	    tty ? "\r" : "", kg_progname(), tr->epoch + 1,
	    100.0 * (double)done / (double)n, rate, (double)(n - done) / rate,
	    tty ? " " : "\n");
	fflush(stderr);
}

int
kg_trainer_bucket(struct kg_trainer *tr, uint32_t ph, uint32_t pt,
    const int32_t *hrt, uint64_t n, uint32_t bucket, uint64_t max_batches,
    double *loss_sum, uint64_t *done)
{
	struct chunk *chunks;
	uint64_t *order, trained = 0, seen = 0;
	size_t nch;
	double total = 0.0, t0 = kg_now(), last = t0;
	int bad = 0;
	long c;

	nch = plan_chunks(tr, hrt, n, max_batches, &chunks, &order,
	    tr->o.use_types ? tr->types : NULL);
	if (tr->shard_size > 1) {
		size_t k;

		/* This trainer's share of every chunk. */
		for (k = 0; k < nch; k++) {
			uint64_t lo = (uint64_t)chunks[k].whole *
			    tr->shard_rank / tr->shard_size;
			uint64_t hi = (uint64_t)chunks[k].whole *
			    (tr->shard_rank + 1) / tr->shard_size;

			chunks[k].start += lo;
			chunks[k].len = (uint32_t)(hi - lo);
		}
	}
	if (max_batches > 0 && max_batches * tr->o.batch_size < n)
		n = max_batches * tr->o.batch_size;
#pragma omp parallel num_threads(tr->sync ? 1 : tr->nthreads) \
    reduction(+:total, trained)
	{
		struct kg_train_ws *ws = &tr->ws[omp_get_thread_num()];
		struct kg_rng rng;

#pragma omp for schedule(dynamic, 1)
		for (c = 0; c < (long)nch; c++) {
			const struct chunk *ch = &chunks[c];
			uint32_t i, pf, pc;
			double l;
			int stop;

#pragma omp atomic read
			stop = bad;
			if (stop && tr->sync == NULL)
				continue;
			for (i = 0; i < ch->len; i++)
				memcpy(ws->tri + 3 * i,
				    hrt + 3 * order[ch->start + i],
				    3 * sizeof(int32_t));
			kg_rng_seed(&rng, tr->o.seed, (uint64_t)tr->epoch << 40 |
			    (uint64_t)bucket << 32 | (uint64_t)c);
			pf = ch->side == KG_SIDE_TAIL ? ph : pt;
			pc = ch->side == KG_SIDE_TAIL ? pt : ph;
			l = train_chunk(tr, ws, &rng, ch, &tr->parts[pf],
			    &tr->parts[pc], pc);
			if (!isfinite(l)) {
#pragma omp atomic write
				bad = 1;
				continue;
			}
			total += l;
			trained += ch->whole;
			if (tr->progress) {
				uint64_t now_seen;

#pragma omp atomic capture
				now_seen = seen += ch->len;
				if (omp_get_thread_num() == 0)
					report(tr, now_seen, n, t0, &last);
			}
		}
	}
	if (tr->progress && last > t0 && isatty(2))
		fputc('\n', stderr);
	free(chunks);
	free(order);
	*loss_sum = total;
	*done = trained;
	if (bad) {
		kg_error("the loss is no longer finite in epoch %u; try a "
		    "smaller --lr, --max_grad_norm or a regulariser",
		    tr->epoch + 1);
		return -1;
	}
	return 0;
}

int
kg_trainer_epoch(struct kg_trainer *tr, const int32_t *hrt, uint64_t n,
    uint64_t *trained)
{
	uint64_t np = tr->o.reciprocal ? 2 * n : n, *perm, i, done = 0,
	    max_batches = 0, bs = tr->o.batch_size;
	int32_t *buf;
	struct kg_rng rng;
	double loss = 0.0;
	int rc;

	if (tr->o.max_step > 0) {
		if (tr->step >= tr->o.max_step) {
			*trained = 0;
			return 0;
		}
		max_batches = tr->o.max_step - tr->step;
	}
	perm = kg_xmallocarray(np, sizeof(*perm));
	for (i = 0; i < np; i++)
		perm[i] = i;
	kg_rng_seed(&rng, tr->o.seed, STREAM_SHUFFLE + tr->epoch);
	for (i = np; i > 1; i--) {
		uint64_t j = kg_rng_below(&rng, i), t = perm[i - 1];

		perm[i - 1] = perm[j];
		perm[j] = t;
	}
	buf = kg_xmallocarray(3 * np, sizeof(*buf));
	for (i = 0; i < np; i++) {
		const int32_t *x = hrt + 3 * (perm[i] % n);
		int32_t *y = buf + 3 * i;

		if (perm[i] < n) {
			y[0] = x[0];
			y[1] = x[1];
			y[2] = x[2];
		} else {
			y[0] = x[2];
			y[1] = x[1] + (int32_t)tr->n_relations;
			y[2] = x[0];
		}
	}
	free(perm);
	rc = kg_trainer_bucket(tr, 0, 0, buf, np, 0, max_batches, &loss,
	    &done);
	free(buf);
	*trained = done;
	if (rc < 0)
		return -1;
	tr->step += (done + bs - 1) / bs;
	tr->epoch++;
	tr->last_loss = done ? loss / (double)done : 0.0;
	return 0;
}

/* The entity table (or its Adagrad state) as one array; owned copy only
 * with several partitions. */
static const float *
whole_table(const struct kg_trainer *tr, int state, float **owned)
{
	uint32_t p;
	size_t w = state ? 1 : tr->model.dim;
	float *out;

	*owned = NULL;
	if (tr->n_parts == 1)
		return state ? tr->parts[0].state : tr->parts[0].w;
	out = kg_xmallocarray(tr->n_entities * w, sizeof(float));
	for (p = 0; p < tr->n_parts; p++)
		memcpy(out + tr->parts[p].base * w, state ? tr->parts[p].state :
		    tr->parts[p].w, tr->parts[p].rows * w * sizeof(float));
	*owned = out;
	return out;
}

int
kg_checkpoint_shape_check(const char *dir, json_t *want, json_t *have)
{
	const char *key;
	json_t *val;

	json_object_foreach(want, key, val) {
		json_t *h = json_object_get(have, key);
		char *a, *b;

		if (h != NULL && json_equal(h, val))
			continue;
		a = h ? json_dumps(h, JSON_ENCODE_ANY) : kg_xstrdup("nothing");
		b = json_dumps(val, JSON_ENCODE_ANY);
		kg_error("checkpoint '%s' has %s %s, but this run has %s%s",
		    dir, key, a, b, strcmp(key, "nranks") == 0 ?
		    ": resume with the same number of ranks" : "");
		free(a);
		free(b);
		return -1;
	}
	return 0;
}

json_t *
kg_trainer_shape(const struct kg_trainer *tr)
{
	return json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:b, s:s}",
	    "model", kg_model_name(tr->model.kind),
	    "dim", (json_int_t)tr->model.dim,
	    "rel_dim", (json_int_t)tr->model.rel_dim,
	    "rel_width", (json_int_t)tr->model.rel_width,
	    "n_entities", (json_int_t)tr->n_entities,
	    "n_relations", (json_int_t)tr->n_relations,
	    "reciprocal", tr->o.reciprocal,
	    "rel_optimizer", kg_optim_name(tr->o.rel_optim));
}

/* The shape plus the progress a single-process checkpoint records. */
static json_t *
shape_state(const struct kg_trainer *tr)
{
	json_t *st = kg_trainer_shape(tr);

	json_object_set_new(st, "epoch", json_integer((json_int_t)tr->epoch));
	json_object_set_new(st, "step", json_integer((json_int_t)tr->step));
	return st;
}

int
kg_trainer_save(const struct kg_trainer *tr, const char *dir,
    const char *log)
{
	struct kg_outdir od = KG_OUTDIR_INIT;
	uint64_t es[2] = { tr->n_entities, tr->model.dim };
	uint64_t ss[1] = { tr->n_entities };
	uint64_t rs[2] = { tr->n_rel_rows, tr->model.rel_width };
	uint64_t rss[2] = { tr->n_rel_rows, tr->rel_state_width };
	float *own_w, *own_s;
	const float *w, *s;
	char *p1, *p2, *p3, *p4, *js;
	json_t *st;
	int rc;

	if (kg_outdir_begin(&od, dir, 1) < 0)
		return -1;
	w = whole_table(tr, 0, &own_w);
	s = whole_table(tr, 1, &own_s);
	p1 = kg_outdir_file(&od, "entities.npy");
	p2 = kg_outdir_file(&od, "entity_state.npy");
	p3 = kg_outdir_file(&od, "relations.npy");
	p4 = kg_outdir_file(&od, "relation_state.npy");
	st = shape_state(tr);
	json_object_set_new(st, "last_loss", json_real(tr->last_loss));
	json_object_set_new(st, "seed", json_integer((json_int_t)tr->o.seed));
	js = json_dumps(st, JSON_INDENT(2) | JSON_SORT_KEYS);
	json_decref(st);
	rc = kg_npy_write(p1, KG_DT_F4, 2, es, w) < 0 ||
	    kg_npy_write(p2, KG_DT_F4, 1, ss, s) < 0 ||
	    kg_npy_write(p3, KG_DT_F4, 2, rs, tr->rel) < 0 ||
	    kg_npy_write(p4, KG_DT_F4, 2, rss, tr->rel_state) < 0 ||
	    kg_write_text(od.tmp, "state.json", js) < 0 ||
	    kg_write_text(od.tmp, "train_log.jsonl", log ? log : "") < 0 ? -1 : 0;
	free(own_w);
	free(own_s);
	free(p1);
	free(p2);
	free(p3);
	free(p4);
	free(js);
	if (rc < 0) {
		kg_outdir_abort(&od);
		return -1;
	}
	return kg_outdir_commit(&od);
}

/* Read dir/name into dst, which must have the given shape. */
static int
load_array(const char *dir, const char *name, int ndim, uint64_t r,
    uint64_t c, float *dst)
{
	struct kg_npy a = KG_NPY_INIT;
	char *path = kg_path_join(dir, name);
	int rc = -1;

	if (kg_npy_read_expect(path, KG_DT_F4, ndim, &a) < 0)
		goto out;
	if (a.shape[0] != r || (ndim == 2 && a.shape[1] != c)) {
		kg_error("checkpoint '%s' has shape %llu x %llu, expected "
		    "%llu x %llu", path, (unsigned long long)a.shape[0],
		    (unsigned long long)(ndim == 2 ? a.shape[1] : 1),
		    (unsigned long long)r, (unsigned long long)c);
		goto out;
	}
	memcpy(dst, a.data, a.nbytes);
	rc = 0;
out:
	kg_npy_release(&a);
	free(path);
	return rc;
}

int
kg_trainer_load(struct kg_trainer *tr, const char *dir, char **log)
{
	static const char *const keys[] = { "model", "dim", "rel_dim",
	    "rel_width", "n_entities", "n_relations", "reciprocal",
	    "rel_optimizer" };
	static const char *const opt[] = { "--model_name", "--hidden_dim",
	    "--rel_dim", "--rel_dim", "the dataset's entity count",
	    "the dataset's relation count", "--reciprocal",
	    "--rel_optimizer" };
	json_t *want = shape_state(tr), *have;
	json_error_t jerr;
	char *path = kg_path_join(dir, "state.json"), *a, *b;
	float *ent;
	size_t i, len;
	uint32_t p;
	int rc = -1;

	*log = NULL;
	have = json_load_file(path, 0, &jerr);
	if (have == NULL) {
		kg_error("cannot read checkpoint '%s': %s", path, jerr.text);
		goto out;
	}
	for (i = 0; i < KG_ARRAY_LEN(keys); i++) {
		json_t *x = json_object_get(have, keys[i]);

		if (x != NULL && json_equal(x, json_object_get(want, keys[i])))
			continue;
		a = x ? json_dumps(x, JSON_ENCODE_ANY) : kg_xstrdup("nothing");
		b = json_dumps(json_object_get(want, keys[i]),
		    JSON_ENCODE_ANY);
		kg_error("checkpoint '%s' has %s %s, but %s gives %s", dir,
		    keys[i], a, opt[i], b);
		free(a);
		free(b);
		goto out;
	}
	ent = kg_xmallocarray(tr->n_entities * tr->model.dim, sizeof(float));
	if (load_array(dir, "entities.npy", 2, tr->n_entities, tr->model.dim,
	    ent) < 0) {
		free(ent);
		goto out;
	}
	for (p = 0; p < tr->n_parts; p++)
		memcpy(tr->parts[p].w, ent + tr->parts[p].base * tr->model.dim,
		    tr->parts[p].rows * tr->model.dim * sizeof(float));
	if (load_array(dir, "entity_state.npy", 1, tr->n_entities, 1,
	    ent) < 0) {
		free(ent);
		goto out;
	}
	for (p = 0; p < tr->n_parts; p++)
		memcpy(tr->parts[p].state, ent + tr->parts[p].base,
		    tr->parts[p].rows * sizeof(float));
	free(ent);
	if (load_array(dir, "relations.npy", 2, tr->n_rel_rows,
	    tr->model.rel_width, tr->rel) < 0 ||
	    load_array(dir, "relation_state.npy", 2, tr->n_rel_rows,
	    tr->rel_state_width, tr->rel_state) < 0)
		goto out;
	tr->epoch = (uint32_t)json_integer_value(json_object_get(have,
	    "epoch"));
	tr->step = (uint64_t)json_integer_value(json_object_get(have, "step"));
	tr->last_loss = json_number_value(json_object_get(have, "last_loss"));
	free(path);
	path = kg_path_join(dir, "train_log.jsonl");
	*log = kg_path_exists(path) ? kg_read_file(path, &len) :
	    kg_xstrdup("");
	if (*log == NULL)
		goto out;
	rc = 0;
out:
	json_decref(want);
	json_decref(have);
	free(path);
	return rc;
}

/* A growing text buffer for the JSON-lines log. */
/* Filtered validation MRR (both sides, realistic ties) of the trainer's
 * current parameters. */
static int
valid_mrr(const struct kg_trainer *tr, const struct kg_triples *valid,
    const struct kg_filter *filter, double *mrr)
{
	struct kg_modeldir md = KG_MODELDIR_INIT;
	struct kg_eval_opts eo = KG_EVAL_OPTS_INIT;
	struct kg_eval_ranks ranks = KG_EVAL_RANKS_INIT;
	struct kg_metrics m[3];

	md.model = tr->model;
	md.reciprocal = tr->o.reciprocal;
	md.n_entities = tr->n_entities;
	md.n_relations = tr->n_relations;
	md.n_rel_rows = tr->n_rel_rows;
	md.entities = tr->parts[0].w;
	md.relations = tr->rel;
	eo.filter = filter;
	eo.threads = (int)tr->nthreads;
	if (kg_eval_rank(&md, valid, &eo, &ranks) < 0)
		return -1;
	kg_eval_metrics(&ranks, valid, -1, KG_TIES_REALISTIC, m);
	*mrr = kg_metrics_mrr(&m[2]);
	kg_eval_ranks_release(&ranks);
	return 0;
}

static json_t *
opts_json(const struct kg_train_opts *o, const struct kg_train_job *j)
{
	json_t *c = json_object();

	json_object_set_new(c, "loss", json_string(kg_loss_name(o->loss.kind)));
	json_object_set_new(c, "margin", json_real(o->loss.margin));
	json_object_set_new(c, "adversarial_temperature",
	    json_real(o->loss.adv_temp));
	json_object_set_new(c, "batch_size", json_integer(o->batch_size));
	json_object_set_new(c, "neg_sample_size",
	    json_integer(o->neg_sample_size));
	json_object_set_new(c, "neg_chunk_size", json_integer(o->chunk_size ?
	    o->chunk_size : o->neg_sample_size));
	json_object_set_new(c, "neg_degree_fraction",
	    json_real(o->degree_frac));
	json_object_set_new(c, "one_vs_all", json_boolean(o->one_vs_all));
	json_object_set_new(c, "neg_filter",
	    json_boolean(o->filter_negatives));
	json_object_set_new(c, "neg_types", json_boolean(o->use_types));
	json_object_set_new(c, "lr", json_real(o->lr));
	json_object_set_new(c, "rel_optimizer",
	    json_string(kg_optim_name(o->rel_optim)));
	json_object_set_new(c, "rel_lr", json_real(o->rel_lr));
	json_object_set_new(c, "regularization_coef", json_real(o->reg_coef));
	json_object_set_new(c, "regularization_norm",
	    json_integer(o->reg_norm));
	json_object_set_new(c, "init", json_string(o->init == KG_INIT_NORMAL ?
	    "normal" : "uniform"));
	json_object_set_new(c, "init_scale", json_real(o->init_scale));
	json_object_set_new(c, "max_grad_norm", json_real(o->clip));
	json_object_set_new(c, "epochs", json_integer(o->epochs));
	json_object_set_new(c, "max_step", json_integer((json_int_t)
	    o->max_step));
	json_object_set_new(c, "seed", json_integer((json_int_t)o->seed));
	json_object_set_new(c, "num_thread", json_integer(o->threads));
	json_object_set_new(c, "valid_every", json_integer(j->valid_every));
	json_object_set_new(c, "patience", json_integer(j->patience));
	return c;
}

/* Write the model dir: arrays through lib/io/modeldir.h, optimiser state,
 * log and manifest; atomically. */
static int
write_model(const struct kg_trainer *tr, const struct kg_train_opts *o,
    const struct kg_train_job *j, const struct kg_strbuf *log, json_t *figures)
{
	struct kg_outdir od = KG_OUTDIR_INIT;
	struct kg_manifest man = KG_MANIFEST_INIT;
	uint64_t ss[1] = { tr->n_entities };
	uint64_t rss[2] = { tr->n_rel_rows, tr->rel_state_width };
	float *own_w, *own_s;
	const float *w, *s;
	char *p1 = NULL, *p2 = NULL;
	const char *key;
	json_t *cfg, *v;
	int rc = -1;

	if (kg_outdir_begin(&od, j->output, j->force) < 0)
		return -1;
	kg_manifest_init(&man, j->argc, j->argv);
	w = whole_table(tr, 0, &own_w);
	s = whole_table(tr, 1, &own_s);
	if (kg_manifest_add_input(&man, "dataset", j->dataset) < 0 ||
	    kg_modeldir_write(od.tmp, &tr->model, o->reciprocal,
	    tr->n_entities, tr->n_relations, w, tr->rel, j->dataset,
	    &man) < 0)
		goto out;
	p1 = kg_outdir_file(&od, "entity_state.npy");
	p2 = kg_outdir_file(&od, "relation_state.npy");
	if (kg_npy_write(p1, KG_DT_F4, 1, ss, s) < 0 ||
	    kg_npy_write(p2, KG_DT_F4, 2, rss, tr->rel_state) < 0 ||
	    kg_write_text(od.tmp, "train_log.jsonl", log->s ? log->s : "") < 0 ||
	    kg_manifest_add_file(&man, od.tmp, "entity_state.npy") < 0 ||
	    kg_manifest_add_file(&man, od.tmp, "relation_state.npy") < 0 ||
	    kg_manifest_add_file(&man, od.tmp, "train_log.jsonl") < 0)
		goto out;
	cfg = opts_json(o, j);
	json_object_foreach(cfg, key, v)
		kg_manifest_set_config(&man, key, json_incref(v));
	json_decref(cfg);
	json_object_foreach(figures, key, v)
		kg_manifest_set_figure(&man, key, json_incref(v));
	if (kg_manifest_write(&man, od.tmp) < 0)
		goto out;
	rc = kg_outdir_commit(&od);
out:
	if (rc < 0)
		kg_outdir_abort(&od);
	kg_manifest_release(&man);
	free(own_w);
	free(own_s);
	free(p1);
	free(p2);
	return rc;
}

/* Snapshot (or restore, when back) of the parameters for early stopping. */
static void
snapshot(struct kg_trainer *tr, float **ent, float **rel, int back)
{
	size_t ne = tr->n_entities * tr->model.dim;
	size_t nr = tr->n_rel_rows * tr->model.rel_width;

	if (back) {
		memcpy(tr->parts[0].w, *ent, ne * sizeof(float));
		memcpy(tr->rel, *rel, nr * sizeof(float));
		return;
	}
	if (*ent == NULL) {
		*ent = kg_xmallocarray(ne, sizeof(float));
		*rel = kg_xmallocarray(nr, sizeof(float));
	}
	memcpy(*ent, tr->parts[0].w, ne * sizeof(float));
	memcpy(*rel, tr->rel, nr * sizeof(float));
}

static int
check_finite_params(const struct kg_trainer *tr)
{
	if (kg_check_finite("entity embeddings", tr->parts[0].w,
	    tr->n_entities, tr->model.dim) < 0 ||
	    kg_check_finite("relation parameters", tr->rel, tr->n_rel_rows,
	    tr->model.rel_width) < 0) {
		kg_error("training diverged in epoch %u; try a smaller --lr, "
		    "--max_grad_norm or a regulariser", tr->epoch);
		return -1;
	}
	return 0;
}

/* Fail before training, not after it, when the output cannot be made. */
static int
check_parent(const char *path, const char *what)
{
	char *copy = kg_xstrdup(path), *slash = strrchr(copy, '/');
	const char *parent = ".";
	int rc = 0;

	if (slash == copy)
		parent = "/";
	else if (slash != NULL) {
		*slash = '\0';
		parent = copy;
	}
	if (access(parent, W_OK | X_OK) != 0) {
		kg_error_errno("cannot write the %s into '%s'", what, parent);
		rc = -1;
	}
	free(copy);
	return rc;
}

int
kg_train_run(const struct kg_train_opts *o, const struct kg_train_job *j)
{
	struct kg_dataset ds = KG_DATASET_INIT;
	struct kg_trainer tr;
	struct kg_filter filter = KG_FILTER_INIT;
	struct kg_strbuf log = { NULL, 0, 0 };
	const struct kg_triples *train;
	char *ckpt = NULL, *line, *old_log = NULL;
	float *best_ent = NULL, *best_rel = NULL;
	double best = -1.0, secs_total = 0.0, mrr = NAN;
	uint64_t total_trained = 0;
	uint32_t bad_rounds = 0, best_epoch = 0;
	int rc, show = !j->quiet && !j->follower && (j->progress || isatty(2)),
	    stopped = 0, writes = !j->follower;
	json_t *fig;

	memset(&tr, 0, sizeof(tr));
	if (kg_train_opts_check(o) < 0)
		return -1;
	if (writes && !j->force && kg_path_exists(j->output)) {
		kg_error("output '%s' exists; use --force to replace it",
		    j->output);
		return -1;
	}
	if (writes && check_parent(j->output, "output") < 0)
		return -1;
	rc = kg_dataset_load(&ds, j->dataset);
	if (rc < 0)
		return rc;
	rc = -1;
	train = &ds.split[KG_SPLIT_TRAIN];
	if (train->n == 0) {
		kg_error("dataset '%s' has no train triples", j->dataset);
		goto out;
	}
	if (j->valid_every > 0 && ds.split[KG_SPLIT_VALID].n == 0) {
		kg_error("dataset '%s' has no valid triples for early "
		    "stopping", j->dataset);
		goto out;
	}
	if (o->use_types && ds.types == NULL) {
		kg_error("--neg_types: dataset '%s' has no entity types",
		    j->dataset);
		goto out;
	}
	{
		/* Known positives: the train triples and, with reciprocal
		 * relations, their inverses. */
		uint64_t nk = !o->filter_negatives ? 0 : o->reciprocal ?
		    2 * train->n : train->n, i;
		int32_t *known = kg_xmallocarray(3 * nk + 3, sizeof(*known));

		if (nk > 0)
			memcpy(known, train->hrt, 3 * train->n * sizeof(*known));
		for (i = train->n; i < nk; i++) {
			const int32_t *x = train->hrt + 3 * (i - train->n);

			known[3 * i] = x[2];
			known[3 * i + 1] = x[1] + (int32_t)ds.n_relations;
			known[3 * i + 2] = x[0];
		}
		rc = kg_trainer_init(&tr, o, ds.n_entities, ds.n_relations,
		    train->hrt, train->n, known, nk, ds.types,
		    (uint32_t)ds.n_types);
		free(known);
		if (rc < 0)
			goto out;
		rc = -1;
	}
	ckpt = j->checkpoint_dir ? kg_xstrdup(j->checkpoint_dir) :
	    kg_xasprintf("%s.ckpt", j->output);
	if (writes && !j->no_checkpoint && check_parent(ckpt, "checkpoint") < 0)
		goto out;
	/* A follower gets rank 0's resumed state through after_init. */
	if (j->resume && writes) {
		if (kg_path_exists(ckpt)) {
			if (kg_trainer_load(&tr, ckpt, &old_log) < 0)
				goto out;
			kg_strbuf_add(&log, old_log);
			if (show)
				fprintf(stderr, "%s: resuming after epoch %u "
				    "from '%s'\n", kg_progname(), tr.epoch,
				    ckpt);
		} else if (!j->quiet)
			kg_warn("no checkpoint '%s' to resume from; starting "
			    "afresh", ckpt);
	}
	if (j->after_init != NULL && j->after_init(j->hook_ctx, &tr) < 0)
		goto out;
	tr.progress = show;
	if (j->valid_every > 0)
		kg_filter_build(&filter, ds.split, KG_NSPLITS);
	while (tr.epoch < o->epochs && (o->max_step == 0 ||
	    tr.step < o->max_step) && !stopped) {
		double t0 = kg_now(), secs, tps;
		uint64_t done;

		if (kg_trainer_epoch(&tr, train->hrt, train->n, &done) < 0)
			goto out;
		if (j->after_epoch != NULL && j->after_epoch(j->hook_ctx,
		    &tr) < 0)
			goto out;
		secs = kg_now() - t0;
		secs_total += secs;
		total_trained += done;
		tps = secs > 0.0 ? (double)done / secs : 0.0;
		if (check_finite_params(&tr) < 0)
			goto out;
		mrr = NAN;
		if (j->valid_every > 0 && (tr.epoch % j->valid_every == 0 ||
		    tr.epoch == o->epochs)) {
			if (valid_mrr(&tr, &ds.split[KG_SPLIT_VALID], &filter,
			    &mrr) < 0)
				goto out;
			if (mrr > best) {
				best = mrr;
				best_epoch = tr.epoch;
				bad_rounds = 0;
				snapshot(&tr, &best_ent, &best_rel, 0);
			} else if (++bad_rounds >= j->patience &&
			    j->patience > 0)
				stopped = 1;
		}
		if (isnan(mrr))
			line = kg_xasprintf("{\"epoch\": %u, \"step\": %llu, "
			    "\"loss\": %.9g, \"seconds\": %.3f, "
			    "\"triples_per_second\": %.1f}\n", tr.epoch,
			    (unsigned long long)tr.step, tr.last_loss, secs,
			    tps);
		else
			line = kg_xasprintf("{\"epoch\": %u, \"step\": %llu, "
			    "\"loss\": %.9g, \"seconds\": %.3f, "
			    "\"triples_per_second\": %.1f, "
			    "\"valid_mrr\": %.6f}\n", tr.epoch,
			    (unsigned long long)tr.step, tr.last_loss, secs,
			    tps, mrr);
		kg_strbuf_add(&log, line);
		free(line);
		if (show) {
			double per = secs_total / (double)(tr.epoch ? tr.epoch :
			    1);
			uint32_t left = o->epochs - tr.epoch;
			uint64_t spe = (train->n * (o->reciprocal ? 2 : 1) +
			    o->batch_size - 1) / o->batch_size;

			if (o->max_step > 0 && (o->max_step - tr.step + spe - 1) /
			    spe < left)
				left = (uint32_t)((o->max_step - tr.step + spe -
				    1) / spe);

			fprintf(stderr, "%s: epoch %u/%u: loss %.5f, %.0f "
			    "triples/s, %.1f s", kg_progname(), tr.epoch,
			    o->epochs, tr.last_loss, tps, secs);
			if (!isnan(mrr))
				fprintf(stderr, ", valid MRR %.4f", mrr);
			fprintf(stderr, ", eta %.0f s\n", per * (double)left);
		}
		if (writes && !j->no_checkpoint && kg_trainer_save(&tr, ckpt,
		    log.s) < 0)
			goto out;
	}
	if (best_ent != NULL && best_epoch != tr.epoch) {
		snapshot(&tr, &best_ent, &best_rel, 1);
		if (show)
			fprintf(stderr, "%s: keeping the parameters of epoch "
			    "%u (valid MRR %.4f)\n", kg_progname(), best_epoch,
			    best);
	}
	fig = json_object();
	json_object_set_new(fig, "epochs", json_integer(tr.epoch));
	json_object_set_new(fig, "steps", json_integer((json_int_t)tr.step));
	json_object_set_new(fig, "final_loss", json_real(tr.last_loss));
	json_object_set_new(fig, "train_seconds", json_real(secs_total));
	json_object_set_new(fig, "triples_per_second", json_real(secs_total >
	    0.0 ? (double)total_trained / secs_total : 0.0));
	json_object_set_new(fig, "threads", json_integer(tr.nthreads));
	json_object_set_new(fig, "train_triples",
	    json_integer((json_int_t)train->n));
	if (best >= 0.0) {
		json_object_set_new(fig, "best_valid_mrr", json_real(best));
		json_object_set_new(fig, "best_epoch", json_integer(best_epoch));
	}
	rc = writes ? write_model(&tr, o, j, &log, fig) : 0;
	json_decref(fig);
	if (rc == 0 && writes && !j->no_checkpoint && !j->keep_checkpoint &&
	    j->checkpoint_dir == NULL && kg_path_exists(ckpt))
		kg_rmtree(ckpt);
out:
	free(best_ent);
	free(best_rel);
	free(old_log);
	free(log.s);
	free(ckpt);
	kg_filter_release(&filter);
	kg_trainer_release(&tr);
	kg_dataset_release(&ds);
	return rc;
}
