/*
 * train_impl: what the trainer's files share (lib/kge only): the
 * per-thread work buffers and the chunk step, which trains a chunk that
 * the planner (plan.h) has planned.
 *
 *   trainer.c      options, set-up and tear-down
 *   train_chunk.c  the maths of one chunk: gather, score, loss, gradient,
 *                  row updates (the hot loop)
 *   train_aux.c    the accuracy options of a chunk: relation prediction,
 *                  DURA, the learning-rate schedule
 *   train_bucket.c the OpenMP loop over a bucket's chunks, epochs
 *   train_ckpt.c   checkpoints
 */
#ifndef KG_TRAIN_IMPL_H
#define KG_TRAIN_IMPL_H

#include "kge/train.h"

struct kg_chunk;
struct kg_plan;

/*
 * One thread's buffers, allocated once, and its chunk plan (the
 * positives, negatives, distinct rows and slots of the chunk it trains).
 */
struct kg_train_ws {
	size_t B, N;		/* capacities: positives, candidates */
	struct kg_plan *plan;
	float *fixed, *posc, *negc;	/* gathered entity rows */
	const float **rel;	/* B relation rows, in the table */
	float **grel;		/* B gradient rows, in ugr (shared) */
	float *pos, *S, *G, *gpos;
	uint8_t *skip;
	float *gfixed, *gposc, *gneg;
	float *work, *pwork;	/* chunk and pairs passes */
	float **ugp;		/* each distinct entity row's summed gradient
				 * row: the first of its rows in gfixed,
				 * gposc or gneg */
	float *ug;		/* the sums packed, for the sync hook */
	float *ugr;		/* the distinct relation rows' sums */
	/* Relation prediction (train_aux.c; NULL when off): the chunk's
	 * scores and their gradient (B x n_rel_rows), the pass's work, the
	 * gradient of every relation row and their IDs 0..n_rel_rows-1. */
	float *rp_s, *rp_g, *rp_work, *rp_grad;
	uint32_t *rp_ids;
	float *dura_work;	/* DURA's (NULL when off) */
	/* Grouped 1-vs-all (NULL when 1-vs-all cannot happen): the chunk's
	 * distinct queries, their fixed rows, relation rows and gradient
	 * rows, and the first positive of each (n_q + 1 entries). */
	float *qfixed, *qgfixed;
	const float **qrel;
	float **qgrel;
	uint32_t *qfirst;
	size_t n_q;		/* the chunk's queries; 0: not grouped */
	/* Deterministic rounds: where the chunk's gradients go instead of
	 * the tables (NULL: applied at once). */
	struct kg_defer *defer;
};

/*
 * A chunk's summed row gradients kept for later (deterministic rounds):
 * n_ent entity rows (global IDs) and n_rel relation rows, the position
 * of the chunk for the learning rate, and its loss.  Grown as needed and
 * reused.
 */
struct kg_defer {
	size_t n_ent, cap_ent, n_rel, cap_rel;
	uint64_t *ent;
	float *ent_g;
	uint32_t *rel;
	float *rel_g;
	uint64_t pos;
	double loss;
};

/*
 * Apply a deferred chunk's gradients to the rows of this thread's share
 * (entity and relation rows with ID % nshare == share), as
 * kg_train_chunk would have applied them all.
 */
void kg_train_defer_apply(struct kg_trainer *tr, struct kg_defer *d,
    uint32_t share, uint32_t nshare);
void kg_defer_release(struct kg_defer *d);

void kg_train_ws_alloc(struct kg_train_ws *ws, const struct kg_trainer *tr,
    size_t B, size_t N);
void kg_train_ws_free(struct kg_train_ws *ws);
/* The buffers of the accuracy options (part of kg_train_ws_alloc and
 * kg_train_ws_free). */
void kg_train_aux_alloc(struct kg_train_ws *ws, const struct kg_trainer *tr);
void kg_train_aux_free(struct kg_train_ws *ws);

/* Check the accuracy options against the model; 0 or -1 after
 * kg_error() (part of kg_train_opts_check). */
int kg_train_aux_check(const struct kg_train_opts *o);

/*
 * The learning rate "base" (the entity or relation one) for the batch at
 * position pos of the epoch in progress: base * lr_decay^epoch, times
 * (step + 1) / lr_warmup during the first lr_warmup batches.  Exactly
 * (float)base without a schedule.
 */
float kg_train_lr(const struct kg_trainer *tr, uint64_t pos, double base);

/* The DURA coefficient of the epoch in progress: ova_dura in 1-vs-all
 * epochs when it is set, dura otherwise. */
double kg_train_dura(const struct kg_trainer *tr);

/* One step of row w (n floats) with state row "state" by the element-wise
 * optimisers (adagrad_elem, adam) at learning rate lr. */
void kg_train_optim_row(enum kg_optim_kind kind, float *w, float *state,
    const float *g, size_t n, float lr);

/*
 * The relation-prediction term of a chunk (rel_pred > 0): every positive
 * (h, r, t) also scores (h, ?, t) against every relation row, with the
 * cross-entropy of the softmax weighted by rel_pred / ch->whole.  Adds
 * the entity gradients to ws->gfixed and ws->gposc and the relation ones
 * to ws->rp_grad (which the caller zeroed); returns the weighted loss sum.
 */
double kg_train_relpred(struct kg_trainer *tr, struct kg_train_ws *ws,
    const struct kg_chunk *ch);

/*
 * Forward, loss, backward and update for chunk ch as ws->plan has
 * planned it (kg_plan_chunk).  pf holds the fixed entities, pc the
 * corrupted ones.  Returns the sum of the positives' losses (NaN if it is
 * not finite or the sync hook failed).
 */
double kg_train_chunk(struct kg_trainer *tr, struct kg_train_ws *ws,
    const struct kg_chunk *ch, const struct kg_store_part *pf,
    const struct kg_store_part *pc);

/* The epoch's positives: the n triples and, with reciprocal relations,
 * their inverses, shuffled from the seed and the epoch, and in a grouped
 * 1-vs-all epoch ordered by query; *np gets their count (train_bucket.c;
 * the device trainer's epoch takes them too).  The caller frees them. */
int32_t *kg_train_epoch_positives(const struct kg_trainer *tr,
    const int32_t *hrt, uint64_t n, uint64_t *np);

#endif
