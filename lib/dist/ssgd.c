/*
 * ssgd: synchronous data-parallel SGD through kg_train_run's hooks, and
 * the names of the distributed modes; see dist_train.h.
 */
#include "dist/dist_train.h"

#include <stdlib.h>
#include <string.h>

struct kg_dist_ssgd {
	struct kg_dist *d;
	size_t max_ent;		/* bound on a share's distinct entity rows */
	struct kg_sparse_rows ent;	/* merged entity rows of a chunk */
	float *rel;		/* n_rel_rows x (rel_width + 1): sum, touched */
	uint32_t *rel_ids;
	float *rel_g;
};

int
kg_dist_mode_parse(const char *s, enum kg_dist_mode *m)
{
	if (strcmp(s, "buckets") == 0)
		*m = KG_DIST_BUCKETS;
	else if (strcmp(s, "ssgd") == 0)
		*m = KG_DIST_SSGD;
	else
		return -1;
	return 0;
}

/* The trainer's merge hook: the chunk's row gradients summed over the
 * ranks, identically on every rank, into out (s's arrays). */
static int
ssgd_merge(void *ctx, struct kg_trainer *tr, const struct kg_row_grads *g,
    struct kg_row_grads *out)
{
	struct kg_dist_ssgd *s = ctx;
	size_t rw = tr->model.rel_width, n = tr->n_rel_rows, i, nr = 0;

	kg_dist_sparse_sum(s->d, g->ent, g->ent_g, g->n_ent, tr->model.dim,
	    s->max_ent, &s->ent);
	/* Relations are the dense parameters: one all-reduce of the whole
	 * table, with a last column counting the ranks that touched the
	 * row, so that only touched rows are updated (as one process
	 * does; Adam would move untouched rows). */
	memset(s->rel, 0, n * (rw + 1) * sizeof(float));
	for (i = 0; i < g->n_rel; i++) {
		float *row = s->rel + (size_t)g->rel[i] * (rw + 1);

		memcpy(row, g->rel_g + i * rw, rw * sizeof(float));
		row[rw] = 1.0f;
	}
	kg_dist_sum_f32(s->d, s->rel, n * (rw + 1));
	for (i = 0; i < n; i++) {
		const float *row = s->rel + i * (rw + 1);

		if (row[rw] == 0.0f)
			continue;
		s->rel_ids[nr] = (uint32_t)i;
		memcpy(s->rel_g + nr * rw, row, rw * sizeof(float));
		nr++;
	}
	out->n_ent = s->ent.n;
	out->ent = s->ent.ids;
	out->ent_g = s->ent.g;
	out->n_rel = nr;
	out->rel = s->rel_ids;
	out->rel_g = s->rel_g;
	return 0;
}

/* The trainer's sync hook: the merged sums applied on the host. */
static int
ssgd_sync(void *ctx, struct kg_trainer *tr, const struct kg_row_grads *g)
{
	struct kg_row_grads m;

	if (ssgd_merge(ctx, tr, g, &m) < 0)
		return -1;
	kg_trainer_apply(tr, m.ent, m.ent_g, m.n_ent, m.rel, m.rel_g,
	    m.n_rel);
	return 0;
}

struct kg_dist_ssgd *
kg_dist_ssgd_new(struct kg_dist *d)
{
	struct kg_dist_ssgd *s = kg_xcalloc(1, sizeof(*s));

	s->d = d;
	return s;
}

void
kg_dist_ssgd_free(struct kg_dist_ssgd *s)
{
	if (s == NULL)
		return;
	kg_sparse_rows_release(&s->ent);
	free(s->rel);
	free(s->rel_ids);
	free(s->rel_g);
	free(s);
}

/* Rank 0's entity rows and state (a resumed checkpoint included) on
 * every rank: each partition of the store in turn. */
static int
bcast_params(struct kg_dist *d, struct kg_trainer *tr)
{
	uint32_t p;

	for (p = 0; p < tr->n_parts; p++) {
		const struct kg_store_part *a = kg_store_acquire(tr->ents, p);

		if (a == NULL)
			return -1;
		kg_dist_bcast(d, a->w, kg_store_part_floats(tr->ents, p) *
		    sizeof(float), 0);
		kg_store_release(tr->ents, p, 1);
	}
	return 0;
}

int
kg_dist_ssgd_after_init(void *ctx, struct kg_trainer *tr)
{
	struct kg_dist_ssgd *s = ctx;
	struct kg_dist *d = s->d;
	size_t rw = tr->model.rel_width;
	uint64_t st[2] = { tr->epoch, tr->step };

	if (tr->o.one_vs_all || tr->o.one_vs_all_after) {
		kg_error("--dist ssgd does not support --one_vs_all%s",
		    tr->o.one_vs_all ? "" : "_after");
		return -1;
	}
	if (bcast_params(d, tr) < 0)
		return -1;
	kg_dist_bcast(d, tr->rel, tr->n_rel_rows * rw * sizeof(float), 0);
	kg_dist_bcast(d, tr->rel_state, tr->n_rel_rows * tr->rel_state_width *
	    sizeof(float), 0);
	kg_dist_bcast(d, st, sizeof(st), 0);
	kg_dist_bcast(d, &tr->last_loss, sizeof(tr->last_loss), 0);
	tr->epoch = (uint32_t)st[0];
	tr->step = st[1];
	s->rel = kg_xmallocarray(tr->n_rel_rows * (rw + 1), sizeof(float));
	s->rel_ids = kg_xmallocarray(tr->n_rel_rows, sizeof(uint32_t));
	s->rel_g = kg_xmallocarray(tr->n_rel_rows * rw, sizeof(float));
	/* A share of a chunk touches at most two rows per positive and the
	 * chunk's negatives. */
	s->max_ent = 2 * ((kg_train_chunk_size(&tr->o) + (size_t)d->size - 1) /
	    (size_t)d->size) + tr->o.neg_sample_size;
	tr->shard_rank = (uint32_t)d->rank;
	tr->shard_size = (uint32_t)d->size;
	tr->sync = ssgd_sync;
	tr->merge = ssgd_merge;
	tr->sync_ctx = s;
	return 0;
}

int
kg_dist_ssgd_after_epoch(void *ctx, struct kg_trainer *tr)
{
	struct kg_dist_ssgd *s = ctx;

	/* Each rank's mean is its share of the loss over the global count. */
	kg_dist_sum_f64(s->d, &tr->last_loss, 1);
	return 0;
}
