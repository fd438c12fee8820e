/*
 * gnn_decode: the shallow decoder and loss of GNN training, over encoder
 * outputs (gnn_train.h), on OpenMP threads.
 *
 * One batch: nb positives pos[i] = (h, r, t) (node IDs into the encoder
 * output h, relation IDs into rel), each with neg negatives negs[i * neg +
 * j] in the same form.  Every triple is scored by the decoder (model.h's
 * layouts, grad.h's pair form), the loss (loss.h) of each positive with
 * its negatives is taken, and scale times dL/dh and dL/drel are ADDED to
 * gh (n_nodes x dim) and grel (n_relations x rel_width).
 *
 * The batch is cut into chunks of a fixed number of positives, scored and
 * differentiated on any thread; the per-triple gradients are then summed
 * into each node's and relation's row by one thread, in triple order
 * (head before tail), and the losses in positive order.  The result is
 * therefore the same bits for any thread count, and equal to a plain
 * serial loop over the triples.  Keep OpenBLAS at one thread.
 */
#ifndef KG_GNN_DECODE_H
#define KG_GNN_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "kge/loss.h"
#include "kge/model.h"

/* Buffers reused across batches (they only grow). */
struct kg_gnn_decode_work {
	size_t cap_pair, cap_nb, cap_thr;
	float *gf, *gr, *gc;		/* per-triple gradients */
	double *loss;			/* per positive */
	float *thr;			/* per-thread scratch */
};

#define KG_GNN_DECODE_WORK_INIT { 0 }

/*
 * Score, loss and gradients of one batch (see above); n_nodes rows of h
 * and gh, n_relations rows of rel and grel; every ID must be in range
 * (the caller's check).  Returns the summed loss (not scaled).
 */
double kg_gnn_decode(const struct kg_model *m, const struct kg_loss *l,
    const float *h, uint64_t n_nodes, const float *rel, uint32_t n_relations,
    const int32_t *pos, size_t nb, const int32_t *negs, size_t neg,
    float scale, float *gh, float *grel, struct kg_gnn_decode_work *w);

void kg_gnn_decode_work_release(struct kg_gnn_decode_work *w);

#endif
