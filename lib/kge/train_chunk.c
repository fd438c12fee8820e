/*
 * train_chunk: the maths of one chunk (the trainer's hot loop): gather
 * the rows, draw and score the negatives, the loss and its gradient,
 * the sum of each distinct row's gradient, and the row updates.  Rows are
 * reached by raw pointers into the two partitions the bucket pinned.
 */
#include "kge/train_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kge/grad.h"
#include "kge/plan.h"

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

/* The pinned partition (of the bucket's two) holding global ID e. */
static inline const struct kg_store_part *
part_of(const struct kg_trainer *tr, uint64_t e)
{
	const struct kg_store_part *a = tr->cur[0];

	return e - a->base < a->rows ? a : tr->cur[1];
}

/*
 * Add gradient row g of the plan's occurrence k to its distinct row.
 * Occurrences come in the plan's order, so a row is met first when its
 * slot equals the count of rows met so far (*nu): its first gradient row
 * becomes its sum, and later ones are added into it in place (ws->ugp
 * points at it), the same additions in the same order as into a copy,
 * without the copy.
 */
static inline void
add_ent_grad(struct kg_train_ws *ws, size_t k, float *g, size_t d,
    size_t *nu)
{
	uint32_t s = ws->plan->slot[k];
	float *dst;
	size_t i;

	if (s == *nu) {
		ws->ugp[(*nu)++] = g;
		return;
	}
	dst = ws->ugp[s];
#pragma omp simd
	for (i = 0; i < d; i++)
		dst[i] += g[i];
}

/* Copy the chunk's nu summed entity rows (ws->ugp) into dst, one after
 * another. */
static void
pack_ent_grads(const struct kg_train_ws *ws, size_t nu, size_t d, float *dst)
{
	size_t i;

	for (i = 0; i < nu; i++)
		memcpy(dst + i * d, ws->ugp[i], d * sizeof(float));
}

/*
 * Point every positive at the gradient row of its relation: one row of
 * ugr per distinct relation of the chunk (the plan's), zeroed; with
 * relation prediction, its row of rp_grad (all zeroed).  Returns their
 * count.
 */
static size_t
relation_slots(const struct kg_trainer *tr, struct kg_train_ws *ws,
    size_t B)
{
	const struct kg_plan *pl = ws->plan;
	size_t rw = tr->model.rel_width, i;

	if (ws->rp_grad != NULL) {
		/* Relation prediction: every row has a gradient. */
		memset(ws->rp_grad, 0, tr->n_rel_rows * rw * sizeof(float));
		for (i = 0; i < B; i++)
			ws->grel[i] = ws->rp_grad + (size_t)pl->tri[3 * i + 1] *
			    rw;
		return tr->n_rel_rows;
	}
	memset(ws->ugr, 0, pl->n_rel * rw * sizeof(float));
	for (i = 0; i < B; i++)
		ws->grel[i] = ws->ugr + (size_t)pl->rslot[i] * rw;
	return pl->n_rel;
}

/* Update the nu relation rows ids with the gradient rows g, for the
 * batch at position pos of the epoch; a frozen row is left as it is. */
static void
apply_relations(struct kg_trainer *tr, const uint32_t *ids, float *g,
    size_t nu, uint64_t pos)
{
	size_t rw = tr->model.rel_width, sw = tr->rel_state_width, i;
	struct kg_adam adam = KG_ADAM_INIT;
	float lr;

	if (tr->o.rel_optim == KG_OPTIM_ADAM) {
		adam.lr = kg_train_lr(tr, pos, tr->o.rel_lr > 0.0 ?
		    tr->o.rel_lr : 0.001);
		for (i = 0; i < nu; i++) {
			if (kg_trainer_frozen(tr->frozen_rel, ids[i]))
				continue;
			if (tr->o.clip > 0.0)
				kg_clip_row(g + i * rw, rw,
				    (float)tr->o.clip);
			kg_adam_row(tr->rel + (size_t)ids[i] * rw,
			    tr->rel_state + (size_t)ids[i] * sw,
			    g + i * rw, rw, &adam);
		}
		return;
	}
	lr = kg_train_lr(tr, pos, tr->o.rel_lr > 0.0 ? tr->o.rel_lr :
	    tr->o.lr);
	for (i = 0; i < nu; i++) {
		if (kg_trainer_frozen(tr->frozen_rel, ids[i]))
			continue;
		if (tr->o.clip > 0.0)
			kg_clip_row(g + i * rw, rw, (float)tr->o.clip);
		if (tr->o.rel_optim == KG_OPTIM_ADAGRAD)
			kg_adagrad_row(tr->rel + (size_t)ids[i] * rw,
			    tr->rel_state + ids[i], g + i * rw, rw, lr);
		else
			kg_train_optim_row(tr->o.rel_optim, tr->rel +
			    (size_t)ids[i] * rw, tr->rel_state +
			    (size_t)ids[i] * sw, g + i * rw, rw, lr);
	}
}

/* Clip (if set) and apply gradient g with learning rate lr to the row at
 * local index i of the pinned partition p, unless the row is frozen. */
static inline void
update_row(const struct kg_trainer *tr, const struct kg_store_part *p,
    uint64_t i, float *g, float lr)
{
	size_t d = tr->model.dim;

	if (kg_trainer_frozen(tr->frozen_ent, p->base + i))
		return;
	if (tr->o.clip > 0.0)
		kg_clip_row(g, d, (float)tr->o.clip);
	if (tr->o.ent_optim == KG_OPTIM_ADAGRAD)
		kg_adagrad_row(p->w + i * d, p->state + i, g, d, lr);
	else
		kg_train_optim_row(tr->o.ent_optim, p->w + i * d, p->state +
		    i * tr->ents->state_width, g, d, lr);
}

void
kg_trainer_apply(struct kg_trainer *tr, const uint64_t *ent, float *ent_g,
    size_t n_ent, const uint32_t *rel, float *rel_g, size_t n_rel)
{
	size_t d = tr->model.dim, i;
	float lr = kg_train_lr(tr, 0, tr->o.lr);

	for (i = 0; i < n_ent; i++) {
		const struct kg_store_part *p = part_of(tr, ent[i]);

		update_row(tr, p, ent[i] - p->base, ent_g + i * d, lr);
	}
	apply_relations(tr, rel, rel_g, n_rel, 0);
}

/* The global ID of candidate column j: a negative in hand (drawn in pc,
 * or a pool draw that fell in the other pinned partition), from the
 * pool, or (past the drawn ones) the corrupted entity of positive
 * j - drawn; with 1-vs-all, row j of pc. */
static inline uint64_t
cand_id(const struct kg_trainer *tr, const struct kg_plan *pl,
    const struct kg_store_part *pc, size_t j)
{
	size_t hand = pl->n_local + pl->n_other, drawn = hand + pl->n_pool;

	if (tr->ova)
		return pc->base + j;
	if (j < hand)
		return pl->occ[2 * pl->len + j];
	if (j < drawn)
		return tr->pool.gid[pl->neg[j]];
	return pl->occ[pl->len + (j - drawn)];
}

/* Mark the negatives that are known positives, or the target itself in
 * 1-vs-all and among in-batch negatives; returns 1 when any mask
 * applies. */
static int
mark_skips(const struct kg_trainer *tr, struct kg_train_ws *ws,
    const struct kg_store_part *pc, const struct kg_chunk *ch, size_t nc)
{
	const struct kg_plan *pl = ws->plan;
	int filter = tr->o.filter_negatives, ova = tr->ova;
	int ccol = pl->ccol;
	size_t i, j, self = ova ? 0 : pl->n_local + pl->n_other + pl->n_pool;

	if (!filter && !ova && !tr->o.neg_in_batch)
		return 0;
	for (i = 0; i < ch->len; i++) {
		const int32_t *x = pl->tri + 3 * i;
		uint64_t target = (uint64_t)(ch->side == KG_SIDE_TAIL ?
		    x[2] : x[0]);
		uint8_t *sk = ws->skip + i * nc;

		if (!filter && !ova) {
			/* Only in-batch candidates can be the target. */
			memset(sk, 0, self);
			for (j = self; j < nc; j++)
				sk[j] = (uint64_t)pl->tri[3 * (j - self) +
				    ccol] == target;
			continue;
		}
		for (j = 0; j < nc; j++) {
			uint64_t c = cand_id(tr, pl, pc, j);

			sk[j] = (ova || j >= self) && c == target;
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

/* Hand a chunk's summed gradients (ws's entity and relation rows; none
 * when ws is NULL) to the sync hook; returns loss, or NaN when the hook
 * failed. */
static double
sync_chunk(struct kg_trainer *tr, const uint64_t *ent, size_t n_ent,
    struct kg_train_ws *ws, size_t n_rel, double loss)
{
	struct kg_row_grads g;

	if (ws != NULL)
		pack_ent_grads(ws, n_ent, tr->model.dim, ws->ug);
	g.n_ent = n_ent;
	g.ent = ent;
	g.ent_g = ws ? ws->ug : NULL;
	g.n_rel = n_rel;
	g.rel = ws ? (ws->rp_ids ? ws->rp_ids : ws->plan->urel) :
	    NULL;
	g.rel_g = ws ? (ws->rp_grad ? ws->rp_grad : ws->ugr) : NULL;
	if (tr->sync(tr->sync_ctx, tr, &g) < 0)
		return NAN;
	return loss;
}

/* Copy the chunk's fixed and positive corrupted rows and point at its
 * relation rows. */
static void
gather_positives(const struct kg_trainer *tr, struct kg_train_ws *ws,
    size_t B, int fcol, const struct kg_store_part *pf,
    const struct kg_store_part *pc)
{
	size_t d = tr->model.dim, rw = tr->model.rel_width, i;
	int ccol = 2 - fcol;

	for (i = 0; i < B; i++) {
		const int32_t *x = ws->plan->tri + 3 * i;

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
}

/* The chunk's candidate rows: every row of pc (one_vs_all), or the
 * plan's negatives (those in pf from pf itself, the pool's from its
 * copies, then the in-batch ones) copied into ws->negc.  *nc gets their
 * count. */
static const float *
candidates(const struct kg_trainer *tr, struct kg_train_ws *ws,
    const struct kg_chunk *ch, const struct kg_store_part *pf,
    const struct kg_store_part *pc, size_t *nc)
{
	const struct kg_plan *pl = ws->plan;
	const uint32_t *neg = pl->neg;
	size_t d = tr->model.dim, j, n;

	if (tr->ova) {
		*nc = pc->rows;
		return pc->w;
	}
	n = pl->n_local + pl->n_other + pl->n_pool;
	for (j = 0; j < pl->n_local; j++) {
		if (j + 2 < pl->n_local)
			prefetch_row(pc->w + (size_t)neg[j + 2] * d, d, 0);
		memcpy(ws->negc + j * d, pc->w + (size_t)neg[j] * d,
		    d * sizeof(float));
	}
	for (; j < pl->n_local + pl->n_other; j++)
		memcpy(ws->negc + j * d, pf->w + (size_t)neg[j] * d,
		    d * sizeof(float));
	for (; j < n; j++)
		memcpy(ws->negc + j * d, tr->pool.rows + (size_t)neg[j] * d,
		    d * sizeof(float));
	/* In-batch: the chunk's own corrupted-side rows, gathered already. */
	if (pl->n_batch > 0) {
		memcpy(ws->negc + n * d, ws->posc, ch->len * d * sizeof(float));
		n += ch->len;
	}
	*nc = n;
	return ws->negc;
}

/* The weight of the chunk's positive i: RotatE's subsampling weight, or
 * exactly 1. */
static inline double
pos_weight(const struct kg_trainer *tr, const struct kg_train_ws *ws,
    size_t i)
{
	return tr->o.subsampling ? kg_query_weight(&tr->qw, ws->plan->tri +
	    3 * i) : 1.0;
}

/* Whether a chunk scores each distinct query once (grouped 1-vs-all,
 * lib/kge/train.h). */
static int
grouped(const struct kg_trainer *tr)
{
	return tr->ova && tr->o.ova_mode == KG_OVA_GROUPED &&
	    tr->o.loss.kind == KG_LOSS_SOFTMAX && !tr->o.filter_negatives;
}

/* The chunk's distinct queries: runs of positives with equal fixed
 * entity and relation (an epoch ordered by query keeps them together).
 * Fills ws->qfixed, qrel and qfirst; returns their count. */
static size_t
group_queries(const struct kg_trainer *tr, struct kg_train_ws *ws,
    const struct kg_chunk *ch)
{
	size_t d = tr->model.dim, B = ch->len, i, nq = 0;
	int fcol = ch->side == KG_SIDE_TAIL ? 0 : 2;

	for (i = 0; i < B; i++) {
		const int32_t *x = ws->plan->tri + 3 * i, *y = x - 3;

		if (i > 0 && x[fcol] == y[fcol] && x[1] == y[1])
			continue;
		memcpy(ws->qfixed + nq * d, ws->fixed + i * d,
		    d * sizeof(float));
		ws->qrel[nq] = ws->rel[i];
		ws->qfirst[nq++] = (uint32_t)i;
	}
	ws->qfirst[nq] = (uint32_t)B;
	return nq;
}

/*
 * The grouped 1-vs-all loss over the chunk's nq query rows of ws->S
 * (every entity of pc a candidate): each positive (query q, answer t,
 * weight w: 1, or its subsampling weight) adds w (logsumexp(S_q) -
 * S_q[t]), and G_q gets inv * (W_q softmax(S_q) - the weighted
 * indicators of q's answers), W_q the sum of their weights: the
 * gradient that scoring each positive alone (its own score against
 * every other entity) gives, summed over q's positives.  The positives'
 * own score gradients are 0.
 */
static double
grouped_loss(const struct kg_trainer *tr, struct kg_train_ws *ws,
    const struct kg_chunk *ch, const struct kg_store_part *pc, size_t nq,
    size_t nc, double inv)
{
	int ccol = ch->side == KG_SIDE_TAIL ? 2 : 0;
	double loss = 0.0, lse, w, wsum;
	size_t q, i, t;

	for (q = 0; q < nq; q++) {
		const float *s = ws->S + q * nc;
		float *g = ws->G + q * nc;
		uint32_t lo = ws->qfirst[q], hi = ws->qfirst[q + 1];
		float scale;

		/* Without weights: exactly hi - lo. */
		for (wsum = 0.0, i = lo; i < hi; i++)
			wsum += pos_weight(tr, ws, i);
		scale = (float)(wsum * inv);
		t = (size_t)((uint64_t)ws->plan->tri[3 * lo + ccol] -
		    pc->base);
		lse = kg_loss_softmax_xent(s, nc, t, scale, g) + (double)s[t];
		g[t] += scale;
		for (i = lo; i < hi; i++) {
			w = pos_weight(tr, ws, i);
			t = (size_t)((uint64_t)ws->plan->tri[3 * i + ccol] -
			    pc->base);
			loss += w * (lse - (double)s[t]);
			g[t] -= (float)(w * inv);
			ws->gpos[i] = 0.0f;
		}
	}
	return loss;
}

/* Scores, the loss and its gradient with respect to the scores (scaled
 * by 1 / whole), the chunk's relation gradient rows (*nrel of them), the
 * regularisers and the relation-prediction term (whose gradients are
 * added here); returns the loss sum. */
static double
score_and_loss(struct kg_trainer *tr, struct kg_train_ws *ws,
    const struct kg_chunk *ch, const struct kg_store_part *pc,
    const float *cand, size_t nc, size_t *nrel)
{
	const struct kg_model *m = &tr->model;
	size_t d = m->dim, rw = m->rel_width, B = ch->len, i;
	enum kg_side side = (enum kg_side)ch->side;
	double loss = 0.0, inv = 1.0 / (double)ch->whole;
	float finv = (float)inv;
	int masked;

	ws->n_q = 0;
	if (grouped(tr)) {
		ws->n_q = group_queries(tr, ws, ch);
		kg_grad_chunk_forward_rows(m, side, ws->n_q, ws->qfixed,
		    ws->qrel, cand, nc, ws->S, ws->work);
		loss = grouped_loss(tr, ws, ch, pc, ws->n_q, nc, inv);
	} else {
		kg_grad_pairs_forward_rows(m, side, B, ws->fixed, ws->rel,
		    ws->posc, ws->pos, ws->pwork);
		kg_grad_chunk_forward_rows(m, side, B, ws->fixed, ws->rel,
		    cand, nc, ws->S, ws->work);
		masked = mark_skips(tr, ws, pc, ch, nc);
		for (i = 0; i < B; i++) {
			double w = pos_weight(tr, ws, i);

			/* Without weights w = 1: the products are exact. */
			loss += w * kg_loss_eval_scaled(&tr->o.loss, ws->pos[i],
			    ws->S + i * nc, nc, masked ? ws->skip + i * nc :
			    NULL, finv * (float)w, &ws->gpos[i], ws->G + i * nc);
			ws->gpos[i] = (float)(ws->gpos[i] * inv * w);
		}
	}
	memset(ws->gfixed, 0, B * d * sizeof(float));
	memset(ws->gposc, 0, B * d * sizeof(float));
	memset(ws->gneg, 0, nc * d * sizeof(float));
	*nrel = relation_slots(tr, ws, B);
	if (tr->o.reg_coef > 0.0) {
		uint32_t p = tr->o.reg_norm;
		double c = tr->o.reg_coef;

		loss += kg_regularise(ws->fixed, ws->gfixed, B * d, c, p, inv);
		for (i = 0; i < B; i++)
			loss += kg_regularise(ws->rel[i], ws->grel[i], rw, c, p,
			    inv);
		loss += kg_regularise(ws->posc, ws->gposc, B * d, c, p, inv);
	}
	if (kg_train_dura(tr) > 0.0)
		loss += kg_grad_dura(m, side, B, ws->fixed, ws->rel, ws->posc,
		    kg_train_dura(tr), inv, ws->gfixed, ws->grel, ws->gposc,
		    ws->dura_work);
	if (tr->o.rel_pred > 0.0)
		loss += kg_train_relpred(tr, ws, ch);
	return loss;
}

/*
 * Sum the chunk's entity gradients per distinct row (the plan's uent;
 * ws->ugp: in place, in the first of its gradient rows), walking the
 * occurrences in the plan's order; the pool negatives' gradients wait in
 * the pool.  With one_vs_all, the rows of pc (every one has a gradient)
 * are updated here instead, with learning rate lr.
 */
static void
collect_entity_grads(struct kg_trainer *tr, struct kg_train_ws *ws,
    const struct kg_chunk *ch, const struct kg_store_part *pf,
    const struct kg_store_part *pc, size_t nc, float lr)
{
	const struct kg_plan *pl = ws->plan;
	size_t d = tr->model.dim, B = ch->len, i, j, k, nu = 0;
	size_t hand = pl->n_local + pl->n_other, drawn = hand + pl->n_pool;

	if (!tr->ova) {
		for (i = 0; i < B; i++) {
			add_ent_grad(ws, i, ws->gfixed + i * d, d, &nu);
			add_ent_grad(ws, B + i, ws->gposc + i * d, d, &nu);
		}
		for (j = 0; j < hand; j++)
			add_ent_grad(ws, 2 * B + j, ws->gneg + j * d, d, &nu);
		/* Pool rows are not in hand: their gradients wait. */
		for (; j < drawn; j++)
			kg_neg_pool_add_grad(&tr->pool, (uint32_t)(ws -
			    tr->ws), pl->neg[j], ws->gneg + j * d);
		for (k = 2 * B + hand; j < nc; j++, k++)
			add_ent_grad(ws, k, ws->gneg + j * d, d, &nu);
		return;
	}
	/* Fold the positives' rows of pc into the candidates' gradients. */
	for (i = 0; i < B; i++) {
		const int32_t *x = pl->tri + 3 * i;
		uint64_t f = (uint64_t)x[pl->fcol], c = (uint64_t)x[pl->ccol];
		float *gc = ws->gneg + (c - pc->base) * d;

		for (j = 0; j < d; j++)
			gc[j] += ws->gposc[i * d + j];
		if (pf == pc) {
			gc = ws->gneg + (f - pc->base) * d;
			for (j = 0; j < d; j++)
				gc[j] += ws->gfixed[i * d + j];
		} else
			add_ent_grad(ws, i, ws->gfixed + i * d, d, &nu);
	}
	for (j = 0; j < nc; j++)
		update_row(tr, pc, j, ws->gneg + j * d, lr);
}

/* The grouped chunk's backward: through the nq query rows, each query's
 * fixed-row gradient then added to its first positive's. */
static void
grouped_backward(const struct kg_trainer *tr, struct kg_train_ws *ws,
    enum kg_side side, const float *cand, size_t nc)
{
	size_t d = tr->model.dim, q, j;

	memset(ws->qgfixed, 0, ws->n_q * d * sizeof(float));
	for (q = 0; q < ws->n_q; q++)
		ws->qgrel[q] = ws->grel[ws->qfirst[q]];
	kg_grad_chunk_backward_rows(&tr->model, side, ws->n_q, ws->qfixed,
	    ws->qrel, cand, nc, ws->G, ws->qgfixed, ws->qgrel, ws->gneg,
	    ws->work);
	for (q = 0; q < ws->n_q; q++) {
		float *dst = ws->gfixed + (size_t)ws->qfirst[q] * d;
		const float *src = ws->qgfixed + q * d;

#pragma omp simd
		for (j = 0; j < d; j++)
			dst[j] += src[j];
	}
}

/* Keep the chunk's nu entity and nrel relation gradient rows in
 * ws->defer instead of applying them. */
static void
defer_chunk(struct kg_train_ws *ws, size_t d, size_t rw, size_t nu,
    size_t nrel, uint64_t pos)
{
	struct kg_defer *df = ws->defer;
	const uint32_t *rid = ws->rp_grad != NULL ? ws->rp_ids :
	    ws->plan->urel;
	const float *rg = ws->rp_grad != NULL ? ws->rp_grad : ws->ugr;

	if (nu > df->cap_ent) {
		df->cap_ent = nu;
		df->ent = kg_xreallocarray(df->ent, nu, sizeof(*df->ent));
		df->ent_g = kg_xreallocarray(df->ent_g, nu * d, sizeof(float));
	}
	if (nrel > df->cap_rel) {
		df->cap_rel = nrel;
		df->rel = kg_xreallocarray(df->rel, nrel, sizeof(*df->rel));
		df->rel_g = kg_xreallocarray(df->rel_g, nrel * rw,
		    sizeof(float));
	}
	memcpy(df->ent, ws->plan->uent, nu * sizeof(*df->ent));
	pack_ent_grads(ws, nu, d, df->ent_g);
	memcpy(df->rel, rid, nrel * sizeof(*df->rel));
	memcpy(df->rel_g, rg, nrel * rw * sizeof(float));
	df->n_ent = nu;
	df->n_rel = nrel;
	df->pos = pos;
}

void
kg_train_defer_apply(struct kg_trainer *tr, struct kg_defer *df,
    uint32_t share, uint32_t nshare)
{
	size_t d = tr->model.dim, rw = tr->model.rel_width, i;
	float lr = kg_train_lr(tr, df->pos, tr->o.lr);

	for (i = 0; i < df->n_ent; i++) {
		const struct kg_store_part *p;

		if (df->ent[i] % nshare != share)
			continue;
		p = part_of(tr, df->ent[i]);
		update_row(tr, p, df->ent[i] - p->base, df->ent_g + i * d, lr);
	}
	/* Relation rows one at a time, in the order the chunk had them. */
	for (i = 0; i < df->n_rel; i++)
		if (df->rel[i] % nshare == share)
			apply_relations(tr, df->rel + i, df->rel_g + i * rw, 1,
			    df->pos);
}

void
kg_defer_release(struct kg_defer *df)
{
	free(df->ent);
	free(df->ent_g);
	free(df->rel);
	free(df->rel_g);
	memset(df, 0, sizeof(*df));
}

double
kg_train_chunk(struct kg_trainer *tr, struct kg_train_ws *ws,
    const struct kg_chunk *ch, const struct kg_store_part *pf,
    const struct kg_store_part *pc)
{
	const struct kg_model *m = &tr->model;
	const uint64_t *uent = ws->plan->uent;
	size_t d = m->dim, B = ch->len, nu = ws->plan->n_ent, nc, i, nrel;
	enum kg_side side = (enum kg_side)ch->side;
	const float *cand;
	double loss;
	float lr = kg_train_lr(tr, ch->start, tr->o.lr);

	if (B == 0)		/* an empty share still takes part in sync */
		return tr->sync ? sync_chunk(tr, NULL, 0, NULL, 0, 0.0) : 0.0;
	gather_positives(tr, ws, B, side == KG_SIDE_TAIL ? 0 : 2, pf, pc);
	cand = candidates(tr, ws, ch, pf, pc, &nc);
	loss = score_and_loss(tr, ws, ch, pc, cand, nc, &nrel);
	if (!isfinite(loss))
		return tr->sync ? sync_chunk(tr, NULL, 0, NULL, 0, NAN) : NAN;
	if (ws->n_q > 0)
		grouped_backward(tr, ws, side, cand, nc);
	else {
		kg_grad_chunk_backward_rows(m, side, B, ws->fixed, ws->rel,
		    cand, nc, ws->G, ws->gfixed, ws->grel, ws->gneg,
		    ws->work);
		kg_grad_pairs_backward_rows(m, side, B, ws->fixed, ws->rel,
		    ws->posc, ws->gpos, ws->gfixed, ws->grel, ws->gposc,
		    ws->pwork);
	}
	collect_entity_grads(tr, ws, ch, pf, pc, nc, lr);
	if (tr->sync)
		return sync_chunk(tr, uent, nu, ws, nrel, loss);
	if (ws->defer != NULL) {
		defer_chunk(ws, d, tr->model.rel_width, nu, nrel, ch->start);
		return loss;
	}
	for (i = 0; i < nu; i++) {
		const struct kg_store_part *p;

		if (i + 2 < nu) {
			p = part_of(tr, uent[i + 2]);
			prefetch_row(p->w + (uent[i + 2] - p->base) * d, d, 1);
		}
		p = part_of(tr, uent[i]);
		update_row(tr, p, uent[i] - p->base, ws->ugp[i], lr);
	}
	if (ws->rp_grad != NULL)
		apply_relations(tr, ws->rp_ids, ws->rp_grad, nrel, ch->start);
	else
		apply_relations(tr, ws->plan->urel, ws->ugr, nrel, ch->start);
	return loss;
}
