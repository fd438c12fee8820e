/*
 * gnntrain/step: one step of GNN training (gnn_train.h) and the workspace it
 * runs in, allocated once; see train_state.h.
 */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "gnntrain/train_state.h"
#include "kge/score.h"
#include "kge/train.h"

/* ---- the workspace ---- */

/* Rows of each level of the graph a step encodes (train_state.h): all
 * levels the whole graph or the sampled graph's bound, except on blocks
 * (layer l's outputs within L - 1 - l hops of the seeds). */
static void
graph_bounds(const struct kg_gnn_tstate *ts, uint64_t *rows,
    uint64_t *max_msgs)
{
	const struct kg_gnn_train_opts *o = ts->o;
	uint64_t hop[KG_GNN_SAMPLE_MAX_HOPS + 1];
	uint32_t l, L = o->enc.n_layers;

	if (o->nfanout == 0) {
		for (l = 0; l <= L; l++)
			rows[l] = ts->full.n_nodes;
		*max_msgs = ts->full.n_msgs;
		return;
	}
	kg_gnn_sample_hop_bounds(ts->w.max_seeds, o->fanout, o->nfanout,
	    &ts->full, hop, max_msgs);
	for (l = 0; l <= L; l++)
		rows[l] = o->blocks ? hop[L - l] : hop[L];
}

static uint32_t
max_fanout(const struct kg_gnn_train_opts *o)
{
	uint32_t k, f = 0;

	for (k = 0; k < o->nfanout; k++)
		if (o->fanout[k] > f)
			f = o->fanout[k];
	return f;
}

/* Positives of this rank's largest step. */
static size_t
max_positives(const struct kg_gnn_tstate *ts)
{
	uint64_t e, S = ts->steps_per_epoch;
	size_t nb;

	if (ts->o->batches_per_epoch == 0) {
		/* Each rank's share of the global batch, at least 1. */
		nb = ts->o->batch_size / (uint32_t)ts->d->size;
		return nb ? nb : 1;
	}
	e = ts->share[ts->d->rank];
	return (size_t)((e + S - 1) / S);
}

void
kg_gnn_work_init(struct kg_gnn_tstate *ts)
{
	const struct kg_gnn_train_opts *o = ts->o;
	struct kg_gnn_work *w = &ts->w;
	size_t nb, nc, d0 = ts->d0, nch = 0;
	uint64_t rows[KG_GNN_MAX_LAYERS + 1], mn, mm;

	nb = max_positives(ts);
	nc = o->neg_candidates > 1 ? (size_t)o->neg * o->neg_candidates :
	    o->neg;
	w->nb = w->nb_max = nb;
	w->nc = nc;
	if (o->neg_chunk > 0) {
		nch = (nb + o->neg_chunk - 1) / o->neg_chunk;
		w->kc = nc;
		w->max_seeds = 2 * (uint64_t)nb + (uint64_t)nch * nc;
		w->cand = kg_xmallocarray(nch * nc + 1, sizeof(*w->cand));
		w->side = kg_xmallocarray(nch + 1, sizeof(*w->side));
	} else {
		w->max_seeds = 2 * (uint64_t)nb * (nc + 1);
		w->cand = kg_xmallocarray(3 * nb * nc, sizeof(*w->cand));
		w->negs = kg_xmallocarray(3 * nb * o->neg, sizeof(*w->negs));
	}
	graph_bounds(ts, rows, &mm);
	mn = rows[0];
	w->max_nodes = mn;
	w->max_msgs = mm;
	w->pos = kg_xmallocarray(3 * nb, sizeof(*w->pos));
	w->seeds = kg_xmallocarray(w->max_seeds + 1, sizeof(*w->seeds));
	w->dist = kg_xmallocarray(nc * (size_t)omp_get_max_threads(),
	    sizeof(*w->dist));
	w->grad = kg_xcalloc(ts->n_all + 1, sizeof(float));
	w->xneg_on = o->neg_exchange && o->neg_chunk > 0 && ts->d->size > 1;
	if (w->xneg_on)
		kg_gnn_xneg_init(&w->xneg, ts->d, nch, w->kc, ts->dl,
		    ts->p->pool != NULL ? ts->p->n_pool : ts->p->n_nodes,
		    rows[o->enc.n_layers]);
	w->gh = kg_xmallocarray((rows[o->enc.n_layers] + (w->xneg_on ?
	    w->xneg.R * w->xneg.B : 0)) * ts->dl + 1, sizeof(float));
	w->mark = kg_xcalloc(ts->n_loc + 1, 1);
	w->ids = kg_xmallocarray(mn + 1, sizeof(*w->ids));
	w->lr = kg_xmallocarray(mn + 1, sizeof(*w->lr));
	w->rows = kg_xmallocarray((mn + 1) * d0, sizeof(*w->rows));
	if (o->nfanout > 0)
		kg_gnn_sampler_init(&w->sb, &ts->full, mn, mm, max_fanout(o));
	if (o->edge_dropout > 0.0)
		kg_gnn_edrop_init(&w->ed, mn, mm, ts->full.n_types);
	kg_gnn_state_reserve_rows(&ts->out->enc, &w->st, rows, mm);
	kg_gnn_state_reserve_attrs(&ts->out->enc, ts->p->feat, mn, &w->st);
	if (o->neg_chunk > 0)
		kg_gnn_decode_chunks_reserve(&w->dwork, &ts->out->dec, nb,
		    o->neg_chunk, w->kc);
	else
		kg_gnn_decode_reserve(&w->dwork, &ts->out->dec, nb, o->neg);
}

void
kg_gnn_work_release(struct kg_gnn_work *w)
{
	free(w->pos);
	free(w->cand);
	free(w->side);
	free(w->negs);
	free(w->seeds);
	free(w->dist);
	free(w->grad);
	free(w->gh);
	free(w->mark);
	free(w->ids);
	free(w->lr);
	free(w->rows);
	kg_sparse_rows_release(&w->merged);
	kg_gnn_sampler_release(&w->sb);
	kg_gnn_edrop_release(&w->ed);
	kg_gnn_state_release(&w->st);
	kg_gnn_decode_work_release(&w->dwork);
	kg_gnn_xneg_release(&w->xneg);
	memset(w, 0, sizeof(*w));
}

/* ---- one step ---- */

static int32_t
draw_pool(const struct kg_gnn_problem *p, struct kg_rng *rng)
{
	return p->pool != NULL ? p->pool[kg_rng_below(rng, p->n_pool)] :
	    (int32_t)kg_rng_below(rng, p->n_nodes);
}

/* The batch's w->nb positives, from a fresh permutation per pass over
 * the core triples. */
static void
draw_positives(struct kg_gnn_tstate *ts)
{
	const struct kg_gnn_problem *p = ts->p;
	struct kg_gnn_work *w = &ts->w;
	size_t i, j;

	for (i = 0; i < w->nb; i++) {
		if (ts->cursor == 0)
			for (j = p->n_core; j > 1; j--) {
				uint64_t r = kg_rng_below(&ts->rng, j);
				uint64_t t = ts->order[j - 1];

				ts->order[j - 1] = ts->order[r];
				ts->order[r] = t;
			}
		memcpy(w->pos + 3 * i, p->core_hrt + 3 * ts->order[ts->cursor],
		    3 * sizeof(int32_t));
		ts->cursor = (ts->cursor + 1) % p->n_core;
	}
}

/* Shared negatives: each chunk's side (equal odds) and kc candidates
 * from the pool, chunk i from its own stream (rank, epoch, step, i). */
static void
draw_chunks(struct kg_gnn_tstate *ts)
{
	const struct kg_gnn_problem *p = ts->p;
	struct kg_gnn_work *w = &ts->w;
	struct kg_rng rng;
	size_t i, j;

	w->nch = (w->nb + ts->o->neg_chunk - 1) / ts->o->neg_chunk;
	for (i = 0; i < w->nch; i++) {
		kg_rng_stream(&rng, ts->o->seed, KG_STREAM_GNN_NEG_CHUNK,
		    (uint64_t)ts->d->rank, ts->epoch, ts->estep, i);
		w->side[i] = (uint8_t)kg_rng_below(&rng, 2);
		for (j = 0; j < w->kc; j++)
			w->cand[i * w->kc + j] = draw_pool(p, &rng);
		if (w->xneg_on)
			kg_gnn_xneg_pick(&w->xneg, i, &rng);
	}
}

/* The batch: its positives, then each corrupted nc times (head or tail,
 * equal odds, from the negative pool), or shared negatives by chunk. */
static void
draw_batch(struct kg_gnn_tstate *ts)
{
	const struct kg_gnn_problem *p = ts->p;
	struct kg_gnn_work *w = &ts->w;
	size_t i, j;

	draw_positives(ts);
	if (ts->o->neg_chunk > 0) {
		draw_chunks(ts);
		return;
	}
	for (i = 0; i < w->nb; i++)
		for (j = 0; j < w->nc; j++) {
			int32_t *c = w->cand + 3 * (i * w->nc + j);

			memcpy(c, w->pos + 3 * i, 3 * sizeof(int32_t));
			c[kg_rng_below(&ts->rng, 2) ? 0 : 2] = draw_pool(p,
			    &ts->rng);
		}
}

/* Sample the neighbourhood of the batch's entities and rewrite the
 * batch in the sample's local IDs. */
static void
sample_batch(struct kg_gnn_tstate *ts)
{
	struct kg_gnn_work *w = &ts->w;
	size_t i, ns = 0, nb = w->nb, nc = w->nc;
	int shared = ts->o->neg_chunk > 0;
	size_t ncand = shared ? w->nch * w->kc : nb * nc;

	for (i = 0; i < nb; i++) {
		w->seeds[ns++] = w->pos[3 * i];
		w->seeds[ns++] = w->pos[3 * i + 2];
	}
	for (i = 0; i < ncand; i++) {
		if (shared) {
			w->seeds[ns++] = w->cand[i];
			continue;
		}
		w->seeds[ns++] = w->cand[3 * i];
		w->seeds[ns++] = w->cand[3 * i + 2];
	}
	kg_gnn_sample(&w->sb, &ts->full, ts->o->fanout, ts->o->nfanout,
	    ts->p->frow, w->seeds, ns, &ts->rng);
	ns = 0;
	for (i = 0; i < nb; i++) {
		w->pos[3 * i] = w->seeds[ns++];
		w->pos[3 * i + 2] = w->seeds[ns++];
	}
	for (i = 0; i < ncand; i++) {
		if (shared) {
			w->cand[i] = w->seeds[ns++];
			continue;
		}
		w->cand[3 * i] = w->seeds[ns++];
		w->cand[3 * i + 2] = w->seeds[ns++];
	}
}

/* Keep, per positive, the neg candidates scored closest to it. */
static void
select_adaptive(const struct kg_model *m, const float *h, const float *rel,
    const int32_t *pos, size_t nb, int32_t *cand, size_t nc,
    size_t neg, int32_t *negs, float *dists)
{
	size_t d = m->dim, rw = m->rel_width;

	/* Positives are independent; dist holds nc floats per thread. */
#pragma omp parallel for schedule(static)
	for (size_t i = 0; i < nb; i++) {
		const int32_t *t = pos + 3 * i;
		float *dist = dists + (size_t)omp_get_thread_num() * nc;
		int32_t *ci = cand + 3 * i * nc;
		size_t j, k;
		float sp = kg_model_score(m, h + (size_t)t[0] * d,
		    rel + (size_t)t[1] * rw, h + (size_t)t[2] * d);

		for (j = 0; j < nc; j++) {
			const int32_t *c = ci + 3 * j;

			dist[j] = fabsf(kg_model_score(m, h + (size_t)c[0] * d,
			    rel + (size_t)c[1] * rw, h + (size_t)c[2] * d) - sp);
		}
		/* Partial selection sort: nc is small (neg x candidates). */
		for (k = 0; k < neg; k++) {
			size_t best = k;

			for (j = k + 1; j < nc; j++)
				if (dist[j] < dist[best])
					best = j;
			if (best != k) {
				float td = dist[k];
				int32_t tc[3];

				dist[k] = dist[best];
				dist[best] = td;
				memcpy(tc, ci + 3 * k, sizeof(tc));
				memcpy(ci + 3 * k, ci + 3 * best, sizeof(tc));
				memcpy(ci + 3 * best, tc, sizeof(tc));
			}
			memcpy(negs + 3 * (i * neg + k), ci + 3 * k,
			    3 * sizeof(int32_t));
		}
	}
}

/* The decoder over the encoder output h (n rows): per-positive or
 * shared negatives; the gradients land in w->gh and the relations'. */
static double
decode(struct kg_gnn_tstate *ts, const float *h, uint64_t n, float scale)
{
	struct kg_gnn_trained *out = ts->out;
	struct kg_gnn_work *w = &ts->w;
	const struct kg_gnn_train_opts *o = ts->o;
	float *grel = w->grad + out->enc.n_params;

	if (o->neg_chunk > 0)
		return kg_gnn_decode_chunks(&out->dec, &o->loss, h, n, out->rel,
		    ts->p->n_relations, w->pos, w->nb, o->neg_chunk, w->cand,
		    w->side, w->kc, o->neg, scale, w->gh, grel, &w->dwork);
	if (w->nc > o->neg)
		select_adaptive(&out->dec, h, out->rel, w->pos, w->nb, w->cand,
		    w->nc, o->neg, w->negs, w->dist);
	else
		memcpy(w->negs, w->cand, 3 * w->nb * w->nc * sizeof(*w->negs));
	return kg_gnn_decode(&out->dec, &o->loss, h, n, out->rel,
	    ts->p->n_relations, w->pos, w->nb, w->negs, o->neg, scale, w->gh,
	    grel, &w->dwork);
}

/* The global ID of row i of the encoded graph (lrow: its node in the
 * problem, NULL: i). */
static uint64_t
row_gid(const struct kg_gnn_tstate *ts, const int32_t *lrow, int32_t i)
{
	int32_t r = lrow != NULL ? lrow[i] : i;

	return ts->p->lrow != NULL ? (uint64_t)ts->p->lrow[r] : (uint64_t)r;
}

/* Before the exchange: the global IDs of this rank's candidates. */
static void
xneg_ids(struct kg_gnn_tstate *ts, const int32_t *lrow)
{
	struct kg_gnn_work *w = &ts->w;
	size_t i;

	for (i = 0; i < w->nch * w->kc; i++)
		w->xneg.gsend[i] = row_gid(ts, lrow, w->cand[i]);
}

/* After the exchange: a chunk's candidate from another rank that is the
 * node a positive of the chunk replaces reads that node's row here, so
 * that the decoder leaves it out of that positive's negatives (it
 * compares rows), as one process does. */
static void
xneg_own_entities(struct kg_gnn_tstate *ts, const int32_t *lrow)
{
	struct kg_gnn_work *w = &ts->w;
	struct kg_gnn_xneg *x = &w->xneg;
	size_t C = ts->o->neg_chunk, c, j, k;

	for (c = 0; c < w->nch; c++) {
		const uint64_t *g = x->gall + x->src[c] * x->B +
		    (size_t)x->blk[c] * w->kc;
		size_t end = (c + 1) * C < w->nb ? (c + 1) * C : w->nb;
		int at = w->side[c] ? 0 : 2;

		if (x->src[c] == (uint32_t)ts->d->rank)
			continue;
		for (j = 0; j < w->kc; j++)
			for (k = c * C; k < end; k++) {
				int32_t e = w->pos[3 * k + at];

				if (row_gid(ts, lrow, e) == g[j]) {
					w->cand[c * w->kc + j] = e;
					break;
				}
			}
	}
}

/* Forward, negatives, decoder and backward over g (on blocks when n_dst
 * is not NULL); the gradients land in w->grad (the learned rows' and the
 * dense ones'). */
static double
encode_decode(struct kg_gnn_tstate *ts, const struct kg_gnn_graph *g,
    const uint64_t *n_dst, const int32_t *frow, const int32_t *lrow,
    float scale)
{
	struct kg_gnn_trained *out = ts->out;
	struct kg_gnn_work *w = &ts->w;
	uint32_t L = out->enc.c.n_layers;
	uint64_t n, nx;
	const float *h;
	double loss, t0 = kg_now(), t1, t2;

	/* Several ranks on devices: the host averages and updates. */
	if (ts->dev != NULL)
		return kg_gnn_device_encode_decode(ts, g, n_dst, lrow, scale);
	kg_gnn_forward_blocks(&out->enc, g, n_dst, ts->p->feat, frow, lrow,
	    &ts->rng, &w->st);
	t1 = kg_now();
	n = nx = w->st.rows[L];
	h = w->st.h[L];
	if (w->xneg_on) {
		xneg_ids(ts, lrow);
		nx = kg_gnn_xneg_gather(&w->xneg, ts->d, h, n, w->cand, w->nch,
		    ts->d->rank);
		xneg_own_entities(ts, lrow);
		h = w->xneg.hx;
	}
	memset(w->gh, 0, nx * ts->dl * sizeof(float));
	memset(w->grad + ts->n_lf, 0, (ts->n_all - ts->n_lf) * sizeof(float));
	loss = decode(ts, h, nx, scale);
	if (w->xneg_on)
		kg_gnn_xneg_scatter(&w->xneg, ts->d, w->gh, n, w->nch);
	t2 = kg_now();
	kg_gnn_backward(&out->enc, g, ts->p->feat, frow, lrow, &w->st, w->gh,
	    w->grad);
	out->phase_seconds[KG_GNN_PHASE_FORWARD] += t1 - t0;
	out->phase_seconds[KG_GNN_PHASE_DECODE] += t2 - t1;
	out->phase_seconds[KG_GNN_PHASE_BACKWARD] += kg_now() - t2;
	return loss;
}

void
kg_gnn_frozen_mask(const struct kg_gnn_tstate *ts, float *grad)
{
	const struct kg_gnn_frozen *fz = ts->frozen;
	float *gd = grad + ts->n_lf, *grel = grad + ts->out->enc.n_params;
	size_t k;

	if (fz == NULL)
		return;
	for (k = 0; k < fz->n_dense; k++)
		memset(gd + fz->dense[2 * k], 0, fz->dense[2 * k + 1] *
		    sizeof(float));
	for (k = 0; k < fz->n_rel; k++)
		memset(grel + fz->rel[2 * k], 0, fz->rel[2 * k + 1] *
		    sizeof(float));
}

/* The regulariser, the learned rows' sync and the dense parameters'
 * averaged Adam step (frozen floats masked). */
static void
update(struct kg_gnn_tstate *ts, const struct kg_gnn_graph *g,
    const int32_t *frow, const int32_t *lrow)
{
	struct kg_gnn_trained *out = ts->out;
	float *grad = ts->w.grad, *grel = grad + out->enc.n_params;

	if (ts->o->reg > 0.0) {
		kg_regularise(out->enc.w + ts->n_lf, grad + ts->n_lf,
		    ts->n_dense, ts->o->reg, 2, 1.0);
		kg_regularise(out->rel, grel, ts->n_rel_f, ts->o->reg, 2, 1.0);
	}
	kg_gnn_learned_sync(ts, g, frow, lrow, grad);
	kg_dist_average_f32(ts->d, grad + ts->n_lf, ts->n_all - ts->n_lf);
	kg_gnn_frozen_mask(ts, grad);
	kg_adam_row(out->enc.w + ts->n_lf, ts->st_enc, grad + ts->n_lf,
	    ts->n_dense, &ts->adam);
	kg_adam_row(out->rel, ts->st_rel, grel, ts->n_rel_f, &ts->adam);
}

/* The positives of this step: this rank's, and the scale of their
 * gradients (1 / positives over all ranks, times the ranks, since the
 * gradients are averaged over them).  0 on every rank: skip the step. */
static float
step_size(struct kg_gnn_tstate *ts)
{
	uint64_t S = ts->steps_per_epoch, s = ts->estep, sum = 0;
	uint64_t C = ts->o->neg_chunk;
	int r, R = ts->d->size;

	if (ts->o->batches_per_epoch == 0) {
		/* Every rank takes the same share of the global batch. */
		for (r = 0; ts->w.xneg_on && r < R; r++)
			ts->w.xneg.nch[r] = (ts->w.nb + C - 1) / C;
		return 1.0f / (float)ts->w.nb;
	}
	for (r = 0; r < R; r++) {
		uint64_t e = kg_gnn_step_share(ts->share[r], S, s);

		sum += e;
		if (ts->w.xneg_on)
			ts->w.xneg.nch[r] = (e + C - 1) / C;
	}
	ts->w.nb = (size_t)kg_gnn_step_share(ts->share[ts->d->rank], S, s);
	ts->step_pos = sum;
	return sum ? (float)R / (float)sum : 0.0f;
}

/* ---- one step on the device ---- */

/*
 * kg_gnn_step's host half for step ts->estep into *nx: its positives
 * over the ranks (step_size), the batch drawn, its neighbourhood sampled
 * and its edges dropped, from ts->rng in kg_gnn_step's order.  The graph
 * it names lives in ts->w until the next call.
 */
static void
device_prepare(struct kg_gnn_tstate *ts, struct kg_gnn_next *nx)
{
	const struct kg_gnn_train_opts *o = ts->o;
	uint32_t l, L = o->enc.n_layers;
	double *ph = ts->out->phase_seconds, t0 = kg_now(), t1;

	nx->scale = step_size(ts);
	nx->step_pos = ts->step_pos;
	/* One rank (the device's): no positives, no step. */
	nx->empty = nx->scale == 0.0f || ts->w.nb == 0;
	nx->ready = 1;
	if (nx->empty)
		return;
	draw_batch(ts);
	t1 = kg_now();
	ph[KG_GNN_PHASE_DRAW] += t1 - t0;
	nx->g = &ts->full;
	nx->lrow = NULL;
	nx->blocks = 0;
	if (o->nfanout > 0) {
		sample_batch(ts);
		nx->g = &ts->w.sb.g;
		nx->lrow = ts->w.sb.lrow;
		if (o->blocks) {
			for (l = 0; l < L; l++)
				nx->n_dst[l] = ts->w.sb.hop_end[L - 1 - l];
			nx->blocks = 1;
		}
	}
	if (o->edge_dropout > 0.0)
		nx->g = kg_gnn_edge_drop(&ts->w.ed, nx->g, o->edge_dropout,
		    &ts->rng);
	ph[KG_GNN_PHASE_SAMPLE] += kg_now() - t1;
}

/*
 * kg_gnn_step on the device, pipelined: the step's work is queued, then,
 * unless the epoch (or --max_step) ends with this step, the next batch is
 * drawn and sampled on the host while the device runs, then this step's
 * loss is read.  Every draw from ts->rng comes in kg_gnn_step's order
 * (this step's dropout masks are drawn while its work is queued), so the
 * results are the same bits as one step after the other; checkpoints and
 * validation, between epochs, never see a drawn-ahead batch.
 */
static double
device_step(struct kg_gnn_tstate *ts)
{
	const struct kg_gnn_train_opts *o = ts->o;
	struct kg_gnn_next cur;
	uint32_t l, L = o->enc.n_layers;
	int more;

	if (!ts->next.ready)
		device_prepare(ts, &ts->next);
	cur = ts->next;
	ts->next.ready = 0;
	ts->step_pos = cur.step_pos;
	if (cur.empty)
		return 0.0;
	if (kg_gnn_device_step_begin(ts, cur.g, cur.blocks ? cur.n_dst : NULL,
	    cur.lrow, cur.scale) < 0)
		return 0.0;
	for (l = 0; l <= L; l++)
		ts->out->sum_rows[l] += (double)ts->w.st.rows[l];
	ts->out->sum_msgs += (double)cur.g->n_msgs;
	more = ts->estep + 1 < ts->steps_per_epoch && !(o->max_step > 0 &&
	    ts->out->steps + 1 >= o->max_step);
	if (more) {
		ts->estep++;
		device_prepare(ts, &ts->next);
		ts->estep--;
		ts->step_pos = cur.step_pos;
	}
	return kg_gnn_device_step_end(ts);
}

/* One step on the CPU. */
static double
host_step(struct kg_gnn_tstate *ts)
{
	const struct kg_gnn_train_opts *o = ts->o;
	const struct kg_gnn_graph *g = &ts->full;
	const int32_t *frow = ts->p->frow, *lrow = NULL;
	struct kg_gnn_graph none = KG_GNN_GRAPH_INIT;
	uint64_t n_dst[KG_GNN_MAX_LAYERS], *blocks = NULL;
	float scale = step_size(ts);
	double loss = 0.0;
	uint32_t l, L = o->enc.n_layers;
	double *ph = ts->out->phase_seconds, t0 = kg_now(), t1;

	if (scale == 0.0f)
		return 0.0;
	if (ts->draw != NULL)
		ts->draw(ts, ts->draw_ctx);
	else
		draw_batch(ts);
	t1 = kg_now();
	ph[KG_GNN_PHASE_DRAW] += t1 - t0;
	if (ts->w.nb == 0) {
		/* Other ranks have positives: take part with no gradient. */
		memset(ts->w.grad + ts->n_lf, 0, (ts->n_all - ts->n_lf) *
		    sizeof(float));
		if (ts->w.xneg_on) {
			/* ... and in the exchange, with no candidates. */
			struct kg_gnn_xneg *x = &ts->w.xneg;

			kg_gnn_xneg_gather(x, ts->d, NULL, 0, NULL, 0,
			    ts->d->rank);
			memset(ts->w.gh, 0, x->R * x->B * ts->dl *
			    sizeof(float));
			kg_gnn_xneg_scatter(x, ts->d, ts->w.gh, 0, 0);
		}
		update(ts, &none, NULL, NULL);
		return 0.0;
	}
	if (o->nfanout > 0) {
		sample_batch(ts);
		g = &ts->w.sb.g;
		frow = ts->w.sb.frow;
		lrow = ts->w.sb.lrow;
		if (o->blocks) {
			for (l = 0; l < L; l++)
				n_dst[l] = ts->w.sb.hop_end[L - 1 - l];
			blocks = n_dst;
		}
	}
	if (o->edge_dropout > 0.0)
		g = kg_gnn_edge_drop(&ts->w.ed, g, o->edge_dropout, &ts->rng);
	ph[KG_GNN_PHASE_SAMPLE] += kg_now() - t1;
	loss = encode_decode(ts, g, blocks, frow, lrow, scale);
	for (l = 0; l <= L; l++)
		ts->out->sum_rows[l] += (double)ts->w.st.rows[l];
	ts->out->sum_msgs += (double)g->n_msgs;
	t1 = kg_now();
	update(ts, g, frow, lrow);
	ph[KG_GNN_PHASE_UPDATE] += kg_now() - t1;
	return loss;
}

double
kg_gnn_step(struct kg_gnn_tstate *ts)
{
	/* One process: the whole step on the device; several ranks: the
	 * device's gradients averaged and applied on the host, as the CPU
	 * ranks do (encode_decode). */
	return ts->dev != NULL && ts->d->size == 1 ? device_step(ts) :
	    host_step(ts);
}
