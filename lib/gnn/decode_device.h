/*
 * gnn/decode_device: gnn_decode.h's kg_gnn_decode (per-positive
 * negatives) as backend calls, for the DistMult decoder: the batch's
 * triples are uploaded as index arrays, their rows gathered from the
 * encoder output, scored (query form, then pair scores), the loss and
 * its gradients taken per positive (backend.h's kg_be_loss) and the
 * rows' gradients added back by index.  Against the CPU decoder: the
 * same scores and per-triple gradients within rounding, summed into the
 * rows in another order (heads, then tails, then relations).
 *
 * A struct kg_gnn_ddecode owns device and pinned host memory of the
 * backend it was used with, grown when a batch needs more.  Functions
 * return 0, or -1 after kg_error().
 */
#ifndef KG_GNN_DECODE_DEVICE_H
#define KG_GNN_DECODE_DEVICE_H

#include "compute/backend.h"
#include "kge/loss.h"
#include "kge/model.h"

struct kg_gnn_ddecode {
	uint64_t cap_t, cap_nb, cap_hidx;
	int64_t *idx;			/* heads, relations, tails [3 nt] */
	int64_t *hidx;			/* host staging */
	float *fixed, *rel, *cand, *q, *score, *gscore;
	float *gq, *gfixed, *grel, *gcand;
	double *loss;			/* per positive */
};

#define KG_GNN_DDECODE_INIT { 0 }

/* Whether model m can decode on the device: 0, or -1 after kg_error(). */
int kg_gnn_ddecode_check(const struct kg_model *m);

/*
 * Queue the decoder over h (device, rows of m->dim) and rel (device,
 * rows of m->rel_width): the nb positives pos (host, [nb, 3]) each with
 * neg negatives negs (host, [nb neg, 3]); scale times the gradients are
 * ADDED to gh and grel (device, the shapes of h and rel), the summed
 * loss (not scaled) to *lsum (one device double).
 */
int kg_gnn_ddecode(struct kg_backend *be, const struct kg_model *m,
    const struct kg_loss *l, const float *h, const float *rel,
    const int32_t *pos, size_t nb, const int32_t *negs, size_t neg,
    float scale, float *gh, float *grel, double *lsum,
    struct kg_gnn_ddecode *dd);

void kg_gnn_ddecode_release(struct kg_backend *be,
    struct kg_gnn_ddecode *dd);

#endif
