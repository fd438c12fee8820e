/*
 * buckets_sync: what the ranks of the bucket driver exchange between
 * rounds: the partitions each needs next (through the embedding store:
 * take, send, receive, put) and the changes to the replicated relation
 * tables.
 */
#include "dist/buckets_sync.h"

#include <stdlib.h>
#include <string.h>

void
kg_buckets_sync_init(struct kg_buckets_sync *y, struct kg_dist *d,
    const struct kg_dist_train_opts *x, uint32_t P,
    const struct kg_dist_sched *s, struct kg_store *st,
    struct kg_trainer *tr, int32_t *loc, uint8_t *pinned)
{
	memset(y, 0, sizeof(*y));
	y->d = d;
	y->x = x;
	y->P = P;
	y->s = s;
	y->st = st;
	y->tr = tr;
	y->loc = loc;
	y->pinned = pinned;
	y->pool_now = kg_xmallocarray(P, sizeof(*y->pool_now));
	y->pool_next = kg_xmallocarray(P, sizeof(*y->pool_next));
	y->pool_valid = kg_xmallocarray(P, sizeof(*y->pool_valid));
}

void
kg_buckets_sync_release(struct kg_buckets_sync *y)
{
	free(y->rel_base);
	free(y->rel_state_base);
	free(y->rel_delta);
	free(y->pool_now);
	free(y->pool_next);
	free(y->pool_valid);
	memset(y, 0, sizeof(*y));
}

/* need[p]: the rank that holds partition p in round "round", or -1. */
static void
round_needs(const struct kg_buckets_sync *v, uint32_t round, int32_t *need)
{
	uint32_t p, k;

	for (p = 0; p < v->P; p++)
		need[p] = -1;
	if (round >= v->s->nrounds)
		return;
	for (k = 0; k < v->s->nranks; k++) {
		const int32_t *h = kg_dist_sched_hold(v->s, round, k);

		if (h[0] >= 0)
			need[h[0]] = (int32_t)k;
		if (h[1] >= 0)
			need[h[1]] = (int32_t)k;
	}
}

/* Take the partitions that leave this rank (those in memory first,
 * "resident" selects which), each with its send. */
static int
take_outgoing(struct kg_buckets_sync *v, const int32_t *need, int resident,
    float **sbuf, struct kg_dist_xfer *xf, size_t *nx)
{
	int me = v->d->rank;
	uint32_t p;

	for (p = 0; p < v->P; p++) {
		if (v->loc[p] != me || need[p] < 0 || need[p] == me ||
		    sbuf[p] != NULL || kg_store_resident(v->st, p) != resident)
			continue;
		if ((sbuf[p] = kg_store_take(v->st, p)) == NULL)
			return -1;
		xf[(*nx)++] = (struct kg_dist_xfer){ sbuf[p],
		    kg_store_part_floats(v->st, p) * sizeof(float), need[p],
		    (int)p, 1 };
	}
	return 0;
}

/* Pin partition p for the round. */
static int
pin(struct kg_buckets_sync *v, uint32_t p)
{
	if (v->pinned[p])
		return 0;
	if (kg_store_acquire(v->st, p) == NULL)
		return -1;
	v->pinned[p] = 1;
	return 0;
}

/*
 * Move the partitions so that every rank holds what round "round" needs.
 * Every rank runs the same bookkeeping on loc; each acts on its own part.
 * What is in memory is dealt with before anything that makes the store
 * read, so that nothing needed is parked only to be read back: unpin what
 * this rank no longer needs, take what leaves it from memory, pin what it
 * keeps, then take what leaves it from disk and make buffers for what
 * comes in (the store parks idle partitions to make room), exchange, and
 * pin what arrived or was parked here.
 */
int
kg_buckets_transition(struct kg_buckets_sync *v, uint32_t round)
{
	uint32_t P = v->P, p;
	int me = v->d->rank, rc = -1;
	int32_t *need = kg_xmallocarray(P, sizeof(*need));
	float **rbuf = kg_xcalloc(P, sizeof(*rbuf));
	float **sbuf = kg_xcalloc(P, sizeof(*sbuf));
	struct kg_dist_xfer *xf = kg_xcalloc(2 * (size_t)P + 1, sizeof(*xf));
	size_t nx = 0;

	round_needs(v, round, need);
	for (p = 0; p < P; p++)
		if (v->pinned[p] && need[p] != me) {
			kg_store_release(v->st, p, 0);
			v->pinned[p] = 0;
		}
	if (take_outgoing(v, need, 1, sbuf, xf, &nx) < 0)
		goto out;
	for (p = 0; p < P; p++)
		if (need[p] == me && kg_store_resident(v->st, p) &&
		    pin(v, p) < 0)
			goto out;
	if (take_outgoing(v, need, 0, sbuf, xf, &nx) < 0)
		goto out;
	for (p = 0; p < P; p++) {
		if (need[p] != me || v->loc[p] < 0 || v->loc[p] == me)
			continue;
		if ((rbuf[p] = kg_store_buf_alloc(v->st, p)) == NULL)
			goto out;
		xf[nx++] = (struct kg_dist_xfer){ rbuf[p],
		    kg_store_part_floats(v->st, p) * sizeof(float), v->loc[p],
		    (int)p, 0 };
	}
	kg_dist_exchange(v->d, xf, nx);
	for (p = 0; p < P; p++) {
		kg_store_buf_free(v->st, p, sbuf[p]);
		sbuf[p] = NULL;
		if (rbuf[p] != NULL && kg_store_put(v->st, p, rbuf[p]) < 0)
			goto out;
		rbuf[p] = NULL;
		if (need[p] == me && pin(v, p) < 0)
			goto out;
		if (need[p] >= 0)
			v->loc[p] = need[p];
	}
	rc = 0;
out:
	for (p = 0; p < P; p++) {
		kg_store_buf_free(v->st, p, rbuf[p]);
		kg_store_buf_free(v->st, p, sbuf[p]);
	}
	free(need);
	free(rbuf);
	free(sbuf);
	free(xf);
	return rc;
}

/*
 * After a step of round "round" (mid) or after the round: every rank's
 * negative pool gets the rows of the partitions trained in it from the
 * rank that trains them (and those nobody trains from rank 0: every copy
 * is alike), and the gradients waiting for a partition, summed over the
 * ranks, go to the rank that holds it in the rest of the round (mid) or
 * in the next round (rank 0 when nobody does), which applies them when
 * it pins it: before its next bucket of the partition, or, when it has
 * none left, they stay waiting and go on with the round's last sync.
 * Nothing to do with one rank or without a pool.
 */
void
kg_buckets_sync_pool(struct kg_buckets_sync *v, uint32_t round, int mid)
{
	struct kg_neg_pool *np = &v->tr->pool;
	uint32_t P = v->P, q;
	int32_t *now = v->pool_now, *next = v->pool_next;
	uint64_t *valid = v->pool_valid;
	size_t d = np->dim;
	int me = v->d->rank;

	if (v->d->size == 1 || np->k == 0)
		return;
	round_needs(v, round, now);
	round_needs(v, mid ? round : round + 1 < v->s->nrounds ? round + 1 :
	    0, next);
	for (q = 0; q < P; q++) {
		int from = now[q] >= 0 ? now[q] : 0;

		valid[q] = np->valid[q];
		if (from != me)
			memset(np->rows + np->off[q] * d, 0, (np->off[q + 1] -
			    np->off[q]) * d * sizeof(float));
	}
	kg_dist_sum_f32(v->d, np->rows, np->off[P] * d);
	kg_neg_pool_fold(np, UINT32_MAX);
	kg_dist_sum_f32(v->d, np->grad, np->off[P] * d);
	kg_dist_sum_f32(v->d, np->sq, np->off[P]);
	kg_dist_max_u64(v->d, valid, P);
	for (q = 0; q < P; q++) {
		int to = next[q] >= 0 ? next[q] : 0;

		np->valid[q] = (uint8_t)valid[q];
		np->pending[q] = to == me;
		if (to != me) {
			memset(np->grad + np->off[q] * d, 0, (np->off[q + 1] -
			    np->off[q]) * d * sizeof(float));
			memset(np->sq + np->off[q], 0, (np->off[q + 1] -
			    np->off[q]) * sizeof(float));
		}
	}
}

/*
 * Merge the ranks' relation tables: the change of each row since the last
 * merge, summed over the ranks, is divided by the number of ranks that
 * changed the row (KG_REL_MERGE_ROWS), by the rank count (MEAN) or by
 * nothing (SUM), and added to the merged value, for the parameters and,
 * row by row alike, for their optimiser state.
 *
 * The sum is what one shared table updated by every rank would hold, but
 * R ranks that start a step from the same relations and each take their
 * own Adagrad steps then move the relations R times as far as one process
 * does: on FB15k-237 (TransE, 2 ranks, 4 partitions, 10 epochs) the sum
 * reached MRR 0.243 and the mean 0.258 against 0.262 for one process.
 * The mean over all ranks shrinks by R the change of a relation that only
 * one rank's bucket holds, which a step of small buckets does for most of
 * FB15k-237's 237 relations; the mean over the ranks that changed the row
 * does not.  FB15k-237 as above, mean -> rows: 4 ranks, P=8, seeds 1-3
 * 0.2544 -> 0.2577, 0.2549 -> 0.2585, 0.2546 -> 0.2578 (one process
 * 0.2644, 0.2620, 0.2668); 2 ranks, P=4, seeds 1-2 0.2556 -> 0.2561,
 * 0.2585 -> 0.2588; UMLS (ComplEx, 2 and 4 ranks) unchanged within its
 * seeds' spread.  Nothing to do with one rank.
 */
void
kg_rel_rows_changed(const float *x, const float *base, size_t rows,
    size_t w, double *changed)
{
	size_t i, j;

	for (i = 0; i < rows; i++) {
		changed[i] = 0.0;
		for (j = 0; j < w && changed[i] == 0.0; j++)
			if (x[i * w + j] != base[i * w + j])
				changed[i] = 1.0;
	}
}

void
kg_rel_merge_apply(float *x, float *base, const double *sum,
    const double *changed, size_t rows, size_t w, int how, int nranks)
{
	size_t i, j;

	for (i = 0; i < rows; i++) {
		double by = how == KG_REL_MERGE_SUM ? 1.0 :
		    how == KG_REL_MERGE_MEAN ? (double)nranks :
		    changed[i] > 1.0 ? changed[i] : 1.0;

		for (j = 0; j < w; j++) {
			size_t k = i * w + j;

			base[k] = x[k] = (float)((double)base[k] + sum[k] / by);
		}
	}
}

/* One table: the ranks' changes summed, then applied. */
static void
merge_table(struct kg_buckets_sync *v, float *x, float *base, size_t rows,
    size_t w)
{
	double *delta = v->rel_delta + rows;
	size_t i;

	for (i = 0; i < rows * w; i++)
		delta[i] = (double)x[i] - (double)base[i];
	kg_dist_sum_f64(v->d, delta, rows * w);
	kg_rel_merge_apply(x, base, delta, v->rel_delta, rows, w,
	    v->x->rel_merge, v->d->size);
}

void
kg_buckets_sync_relations(struct kg_buckets_sync *v)
{
	size_t rows = v->tr->n_rel_rows, wp = v->tr->model.rel_width;
	size_t ws = v->tr->rel_state_width;

	if (v->d->size == 1)
		return;
	/* [rows]: the ranks that changed each row; then a table's changes. */
	if (v->rel_delta == NULL)
		v->rel_delta = kg_xmallocarray(rows * ((wp > ws ? wp : ws) + 1),
		    sizeof(*v->rel_delta));
	/* Only the rows merge reads the counts. */
	if (v->x->rel_merge == KG_REL_MERGE_ROWS) {
		kg_rel_rows_changed(v->tr->rel, v->rel_base, rows, wp,
		    v->rel_delta);
		kg_dist_sum_f64(v->d, v->rel_delta, rows);
	}
	merge_table(v, v->tr->rel, v->rel_base, rows, wp);
	if (ws > 0)
		merge_table(v, v->tr->rel_state, v->rel_state_base, rows, ws);
}

/* The merge base: the tables as every rank has them now. */
void
kg_buckets_sync_base(struct kg_buckets_sync *v)
{
	size_t nr = v->tr->n_rel_rows * v->tr->model.rel_width;
	size_t ns = v->tr->n_rel_rows * v->tr->rel_state_width;

	if (v->rel_base == NULL) {
		v->rel_base = kg_xmallocarray(nr, sizeof(float));
		v->rel_state_base = kg_xmallocarray(ns, sizeof(float));
	}
	memcpy(v->rel_base, v->tr->rel, nr * sizeof(float));
	memcpy(v->rel_state_base, v->tr->rel_state, ns * sizeof(float));
}
