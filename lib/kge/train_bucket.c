/*
 * train_bucket: a bucket's chunks (plan.h) trained by OpenMP threads,
 * and the one-partition epoch on top; see train.h.
 */
#include "kge/train_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <omp.h>

#include "kge/plan.h"

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

/* What the threads of one bucket share. */
struct bucket_run {
	const int32_t *hrt;
	const struct kg_chunk *chunks;
	const uint64_t *order;
	size_t nch;
	uint64_t n;		/* positives, for the progress line */
	double t0, last;
	uint64_t seen;
	int bad;
};

/* Train chunk c on this thread; its loss, NaN when not finite. */
static double
run_chunk(struct kg_trainer *tr, struct bucket_run *r, long c)
{
	struct kg_train_ws *ws = &tr->ws[omp_get_thread_num()];
	const struct kg_chunk *ch = &r->chunks[c];
	int tail = ch->side == KG_SIDE_TAIL;

	kg_plan_chunk(ws->plan, tr, ch, (uint64_t)c, r->hrt,
	    r->order + ch->start);
	return kg_train_chunk(tr, ws, ch, tr->cur[tail ? 0 : 1],
	    tr->cur[tail ? 1 : 0]);
}

/*
 * Deterministic rounds: the chunks of a round of KG_DET_ROUND are
 * computed in the threads from the parameters as the round found them,
 * each keeping its gradients (tr->defer[i]); then every thread applies,
 * chunk by chunk in order, the rows whose ID falls in its share, so
 * every row sees its updates in chunk order whatever the thread count.
 * The losses are summed in chunk order too.
 */
static void
run_rounds(struct kg_trainer *tr, struct bucket_run *r, double *loss,
    uint64_t *trained)
{
	double total = 0.0;
	uint64_t done = 0;
	size_t r0, n, i;

	for (r0 = 0; r0 < r->nch && !r->bad; r0 += n) {
		long c;

		n = r->nch - r0 < KG_DET_ROUND ? r->nch - r0 : KG_DET_ROUND;
#pragma omp parallel num_threads(tr->nthreads)
		{
			struct kg_train_ws *ws = &tr->ws[omp_get_thread_num()];
			uint32_t me = (uint32_t)omp_get_thread_num();
			uint32_t nt = (uint32_t)omp_get_num_threads();
			size_t k;

#pragma omp for schedule(dynamic, 1)
			for (c = 0; c < (long)n; c++) {
				ws->defer = &tr->defer[c];
				ws->defer->n_ent = ws->defer->n_rel = 0;
				ws->defer->loss = run_chunk(tr, r, (long)r0 + c);
				ws->defer = NULL;
			}
			for (k = 0; k < n; k++)
				if (isfinite(tr->defer[k].loss))
					kg_train_defer_apply(tr, &tr->defer[k],
					    me, nt);
		}
		for (i = 0; i < n; i++) {
			if (!isfinite(tr->defer[i].loss)) {
				r->bad = 1;
				break;
			}
			total += tr->defer[i].loss;
			done += r->chunks[r0 + i].whole;
			r->seen += r->chunks[r0 + i].len;
		}
		if (tr->progress)
			report(tr, r->seen, r->n, r->t0, &r->last);
	}
	*loss = total;
	*trained = done;
}

/* The OpenMP loop over a bucket's chunks; *loss and *trained get the
 * sums. */
static void
run_chunks(struct kg_trainer *tr, struct bucket_run *r, double *loss,
    uint64_t *trained)
{
	double total = 0.0;
	uint64_t done = 0;
	long c;
	/* A deterministic run keeps rounds where chunks write only their
	 * own buffers; 1-vs-all chunks (which update their candidates as
	 * they go) and the negative pool (summed per thread) run one
	 * chunk after another instead, as one thread does. */
	int serial = tr->sync != NULL || (tr->o.deterministic &&
	    (tr->ova || tr->n_parts > 1));

	if (tr->o.deterministic && !serial) {
		run_rounds(tr, r, loss, trained);
		return;
	}
#pragma omp parallel num_threads(serial ? 1 : tr->nthreads) \
    reduction(+:total, done)
	{
#pragma omp for schedule(dynamic, 1)
		for (c = 0; c < (long)r->nch; c++) {
			double l;
			int stop;

#pragma omp atomic read
			stop = r->bad;
			if (stop && tr->sync == NULL)
				continue;
			l = run_chunk(tr, r, c);
			if (!isfinite(l)) {
#pragma omp atomic write
				r->bad = 1;
				continue;
			}
			total += l;
			done += r->chunks[c].whole;
			if (tr->progress) {
				uint64_t now_seen;

#pragma omp atomic capture
				now_seen = r->seen += r->chunks[c].len;
				if (omp_get_thread_num() == 0)
					report(tr, now_seen, r->n, r->t0,
					    &r->last);
			}
		}
	}
	*loss = total;
	*trained = done;
}

/*
 * Apply the summed gradients grad of n pool slots (global rows gid, in
 * hand as tr->cur) whose single gradients had the squared norms over dim
 * summing to sq.  Row-wise Adagrad adds sq to a row's state, as the
 * single steps would have, and takes one step of the sum with the state
 * after them: adding the sum's own square instead (one plain step) grew
 * the state of a row that many chunks pushed the same way up to as many
 * times faster than in memory, and slowed its later steps.  A slot
 * without sq (a checkpoint from before it was kept) takes the plain
 * step; the other optimisers take it always.  Frozen rows keep theirs.
 */
static void
apply_slots(struct kg_trainer *tr, const uint64_t *gid, float *grad,
    const float *sq, uint64_t n)
{
	size_t d = tr->model.dim, j;
	float lr = kg_train_lr(tr, 0, tr->o.lr);
	uint64_t i;

	if (tr->o.ent_optim != KG_OPTIM_ADAGRAD) {
		kg_trainer_apply(tr, gid, grad, n, NULL, NULL, 0);
		return;
	}
	for (i = 0; i < n; i++) {
		const struct kg_store_part *p = gid[i] - tr->cur[0]->base <
		    tr->cur[0]->rows ? tr->cur[0] : tr->cur[1];
		uint64_t row = gid[i] - p->base;
		float *g = grad + i * d, *w = p->w + row * d, step;

		if (kg_trainer_frozen(tr->frozen_ent, gid[i]))
			continue;
		if (sq[i] == 0.0f) {
			kg_trainer_apply(tr, gid + i, g, 1, NULL, NULL, 0);
			continue;
		}
		if (tr->o.clip > 0.0)
			kg_clip_row(g, d, (float)tr->o.clip);
		p->state[row] += sq[i];
		step = lr / (sqrtf(p->state[row]) + KG_ADAGRAD_EPS);
		for (j = 0; j < d; j++)
			w[j] -= step * g[j];
	}
}

/* Apply the pool's waiting gradients of partition q (carried from the
 * epoch before, then this epoch's) to its rows, in hand as tr->cur. */
static void
apply_pool(struct kg_trainer *tr, uint32_t q)
{
	struct kg_neg_pool *np = &tr->pool;
	uint64_t o = np->k ? np->off[q] : 0, n = np->k ? np->off[q + 1] - o :
	    0;
	size_t d = np->dim;

	kg_neg_pool_fold(np, q);
	if (n > 0 && np->carry_pending[q]) {
		apply_slots(tr, np->carry_gid + o, np->carry_grad + o * d,
		    np->carry_sq + o, n);
		memset(np->carry_grad + o * d, 0, n * d * sizeof(float));
		memset(np->carry_sq + o, 0, n * sizeof(float));
		np->carry_pending[q] = 0;
	}
	if (n > 0 && np->pending[q]) {
		apply_slots(tr, np->gid + o, np->grad + o * d, np->sq + o, n);
		memset(np->grad + o * d, 0, n * d * sizeof(float));
		memset(np->sq + o, 0, n * sizeof(float));
		np->pending[q] = 0;
	}
}

int
kg_trainer_pool_settle(struct kg_trainer *tr, const int32_t *owner, int me)
{
	struct kg_neg_pool *np = &tr->pool;
	uint32_t q;

	for (q = 0; q < np->n_parts; q++) {
		if (owner[q] == me) {
			tr->cur[0] = tr->cur[1] = kg_store_acquire(tr->ents,
			    q);
			if (tr->cur[0] == NULL)
				return -1;
			np->pending[q] = 1;
			apply_pool(tr, q);
			kg_store_release(tr->ents, q, 1);
			tr->cur[0] = tr->cur[1] = NULL;
		}
		np->pending[q] = 0;
	}
	if (np->k > 0) {
		memset(np->grad, 0, np->off[np->n_parts] * np->dim *
		    sizeof(float));
		memset(np->sq, 0, np->off[np->n_parts] * sizeof(float));
	}
	return 0;
}

int
kg_trainer_bucket(struct kg_trainer *tr, uint32_t ph, uint32_t pt,
    const int32_t *hrt, uint64_t n, uint64_t max_batches, double *loss_sum,
    uint64_t *done)
{
	struct kg_chunk *chunks;
	uint64_t *order;
	struct bucket_run r;
	uint32_t t;

	*loss_sum = 0.0;
	*done = 0;
	tr->cur[0] = kg_store_acquire(tr->ents, ph);
	if (tr->cur[0] == NULL)
		return -1;
	tr->cur[1] = kg_store_acquire(tr->ents, pt);
	if (tr->cur[1] == NULL) {
		kg_store_release(tr->ents, ph, 0);
		return -1;
	}
	apply_pool(tr, ph);
	apply_pool(tr, pt);
	tr->ova = kg_train_one_vs_all(&tr->o, tr->epoch);
	for (t = 0; t < tr->nthreads; t++)
		kg_plan_bucket(tr->ws[t].plan, tr, ph, pt, tr->ova);
	memset(&r, 0, sizeof(r));
	r.nch = kg_plan_chunks(tr, hrt, n, max_batches, ph * tr->n_parts + pt,
	    &chunks, &order);
	r.hrt = hrt;
	r.chunks = chunks;
	r.order = order;
	r.n = max_batches > 0 && max_batches * tr->o.batch_size < n ?
	    max_batches * tr->o.batch_size : n;
	r.t0 = r.last = kg_now();
	run_chunks(tr, &r, loss_sum, done);
	/* The pool's copies of the two partitions, as they are now. */
	kg_neg_pool_fill(&tr->pool, ph, tr->cur[0]->w);
	kg_neg_pool_fill(&tr->pool, pt, tr->cur[1]->w);
	kg_store_release(tr->ents, ph, 1);
	kg_store_release(tr->ents, pt, 1);
	tr->cur[0] = tr->cur[1] = NULL;
	if (tr->progress && r.last > r.t0 && isatty(2))
		fputc('\n', stderr);
	free(chunks);
	free(order);
	if (r.bad) {
		kg_error("the loss is no longer finite in epoch %u; try a "
		    "smaller --lr, --max_grad_norm or a regulariser",
		    tr->epoch + 1);
		return -1;
	}
	return 0;
}

int
kg_trainer_pool_load(struct kg_trainer *tr, const int32_t *owner, int me)
{
	struct kg_neg_pool *np = &tr->pool;
	uint32_t q;
	uint64_t i;

	for (q = 0; q < np->n_parts; q++) {
		kg_neg_pool_choose(np, q, tr->o.seed, tr->epoch);
		/* Before the first epoch no row has been trained yet. */
		if (tr->epoch == 0)
			continue;
		for (i = np->off[q]; i < np->off[q + 1]; i++) {
			float *dst = np->rows + i * np->dim;

			if (owner != NULL && owner[q] != me)
				memset(dst, 0, np->dim * sizeof(float));
			else if (kg_store_read(tr->ents, np->gid[i], 1, dst) < 0)
				return -1;
		}
		np->valid[q] = 1;
	}
	return 0;
}

/* A position of the epoch and its sort key. */
struct keyed {
	uint64_t key, pos;
};

static int
cmp_keyed(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/*
 * Reorder the m shuffled positives buf (all scored on the tail side) by
 * query (head, relation): the queries in the order of their first
 * positive, each with its positives together in shuffled order, so that
 * a grouped 1-vs-all chunk scores each query once (train.h).
 */
static void
order_by_query(const struct kg_trainer *tr, int32_t *buf, uint64_t m)
{
	struct keyed *k = kg_xmallocarray(m, sizeof(*k));
	int32_t *out = kg_xmallocarray(3 * m, sizeof(*out));
	uint64_t i, j;

	for (i = 0; i < m; i++) {
		k[i].key = (uint64_t)buf[3 * i] * tr->n_rel_rows +
		    (uint64_t)buf[3 * i + 1];
		k[i].pos = i;
	}
	qsort(k, m, sizeof(*k), cmp_keyed);
	/* Key each run of one query by its first position. */
	for (i = 0; i < m; i = j) {
		uint64_t key = k[i].key, first = k[i].pos;

		for (j = i; j < m && k[j].key == key; j++)
			k[j].key = first;
	}
	qsort(k, m, sizeof(*k), cmp_keyed);
	for (i = 0; i < m; i++)
		memcpy(out + 3 * i, buf + 3 * k[i].pos, 3 * sizeof(*out));
	memcpy(buf, out, 3 * m * sizeof(*out));
	free(out);
	free(k);
}

int32_t *
kg_train_epoch_positives(const struct kg_trainer *tr, const int32_t *hrt, uint64_t n,
    uint64_t *np)
{
	uint64_t m = tr->o.reciprocal ? 2 * n : n, *perm, i;
	int32_t *buf;
	struct kg_rng rng;

	perm = kg_xmallocarray(m ? m : 1, sizeof(*perm));
	for (i = 0; i < m; i++)
		perm[i] = i;
	kg_rng_stream(&rng, tr->o.seed, KG_STREAM_SHUFFLE, tr->epoch, 0, 0, 0);
	for (i = m; i > 1; i--) {
		uint64_t j = kg_rng_below(&rng, i), t = perm[i - 1];

		perm[i - 1] = perm[j];
		perm[j] = t;
	}
	buf = kg_xmallocarray(3 * (m ? m : 1), sizeof(*buf));
	for (i = 0; i < m; i++) {
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
	if (tr->o.reciprocal && tr->o.ova_mode != KG_OVA_PLAIN &&
	    kg_train_one_vs_all(&tr->o, tr->epoch))
		order_by_query(tr, buf, m);
	*np = m;
	return buf;
}

int
kg_trainer_epoch(struct kg_trainer *tr, const int32_t *hrt, uint64_t n,
    uint64_t *trained)
{
	uint64_t np, done = 0, max_batches = 0, bs = tr->o.batch_size;
	int32_t *buf;
	double loss = 0.0;
	int rc;

	*trained = 0;
	if (tr->o.max_step > 0) {
		if (tr->step >= tr->o.max_step)
			return 0;
		max_batches = tr->o.max_step - tr->step;
	}
	buf = kg_train_epoch_positives(tr, hrt, n, &np);
	rc = kg_trainer_bucket(tr, 0, 0, buf, np, max_batches, &loss,
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
