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
	/* kg_gnn_decode_chunks: per positive and per candidate */
	size_t cap_pos, cap_cand, cap_cthr;
	float *gh_, *gr_, *gt_;		/* each positive's head, relation,
					 * tail gradient */
	float *gcand;			/* each chunk's candidates' */
	float *cthr;			/* per-thread scratch */
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

/*
 * Shared negatives (kge/train.h's chunks): positives [c chunk, (c + 1)
 * chunk) form chunk c (the last may be shorter) and share its kc
 * candidates cand[c kc ..] (node IDs); side[c] = 1 replaces their heads,
 * 0 their tails.  Every positive is scored against every candidate of its
 * chunk in one product (kge/grad.h's chunk form), a positive's own
 * replaced entity left out; with keep < kc only the keep candidates whose
 * scores are closest to the positive's count (adaptive negatives, as
 * kg_gnn_decode's caller selects them), the others left out too
 * (kg_loss_eval's skip).  So a batch of nb positives reads 2 nb + (nb /
 * chunk) kc node rows instead of nb (2 + neg).  Loss, scale and threads
 * as kg_gnn_decode: each chunk's gradients are computed on any thread,
 * then added to the rows by one thread per row range in a fixed order
 * (chunk by chunk: each positive's head, tail and relation, then the
 * candidates), so any thread count gives the same bits.  Returns the
 * summed loss.
 */
double kg_gnn_decode_chunks(const struct kg_model *m, const struct kg_loss *l,
    const float *h, uint64_t n_nodes, const float *rel, uint32_t n_relations,
    const int32_t *pos, size_t nb, size_t chunk, const int32_t *cand,
    const uint8_t *side, size_t kc, size_t keep, float scale, float *gh,
    float *grel, struct kg_gnn_decode_work *w);

/* Size w for batches of up to nb positives: kg_gnn_decode with neg
 * negatives each, or kg_gnn_decode_chunks with chunks of chunk
 * positives sharing kc candidates; such calls then allocate nothing. */
void kg_gnn_decode_reserve(struct kg_gnn_decode_work *w,
    const struct kg_model *m, size_t nb, size_t neg);
void kg_gnn_decode_chunks_reserve(struct kg_gnn_decode_work *w,
    const struct kg_model *m, size_t nb, size_t chunk, size_t kc);

void kg_gnn_decode_work_release(struct kg_gnn_decode_work *w);

#endif
