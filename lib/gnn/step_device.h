/*
 * gnn/step_device: the gradient of one GNN training batch on a compute
 * backend (gnntrain/step.c's encode_decode, without the exchange of
 * negatives between ranks): the R-GCN encoder's forward over the graph
 * or blocks (forward_device.h), the DistMult decoder with per-positive
 * negatives (decode_device.h) and the backward, every dense parameter
 * and activation in device memory.  The host builds the batch, samples
 * the graph, orders its messages and draws the dropout masks; it uploads
 * those per step with the learned rows of the graph's nodes (the learned
 * table stays on the host: the transfers of a step grow with its graph,
 * not with the table), and reads back the loss and the gradients.
 *
 * Against the CPU (kg_gnn_forward_blocks, kg_gnn_decode and
 * kg_gnn_backward on the same batch, masks and parameters): the loss
 * and every gradient within a relative 1e-5 (tests/unit/t_devops_gnn.c).
 *
 * A struct kg_gnn_dstep borrows its backend and owns device memory of
 * it; release it after kg_gnn_dstep_open whatever it returned.  Functions
 * return 0, or -1 after kg_error().
 */
#ifndef KG_GNN_STEP_DEVICE_H
#define KG_GNN_STEP_DEVICE_H

#include "gnn/decode_device.h"
#include "gnn/forward_device.h"

struct kg_gnn_dstep {
	struct kg_backend *be;
	size_t n_params, n_rel_f, dl, d0;
	size_t tab_lo, tab_hi;	/* the learned table in the flat array */
	float *dw, *drel;	/* the encoder's and the relations' (dw's
				 * table part unused) */
	float *dgrad;		/* [n_params + n_rel_f] their gradients */
	float *dgh;		/* dL/d(encoder output) */
	uint64_t cap_gh;
	float *h0;		/* host: the input rows of a step */
	uint64_t cap_h0;
	double *dloss;
	struct kg_gnn_state st;	/* host: message orders */
	struct kg_gnn_dpass pass;
	struct kg_gnn_ddecode dec;
};

#define KG_GNN_DSTEP_INIT { 0 }

/*
 * Check that enc and dec run on the device (kg_gnn_device_check,
 * kg_gnn_ddecode_check), allocate the parameters and gradients on be
 * and upload enc's parameters and the n_rel_f relation floats rel.
 */
int kg_gnn_dstep_open(struct kg_gnn_dstep *ds, struct kg_backend *be,
    const struct kg_gnn *enc, const struct kg_model *dec, const float *rel,
    size_t n_rel_f);

/* Upload the parameters again (after the host changed them), but the
 * learned table. */
int kg_gnn_dstep_upload(struct kg_gnn_dstep *ds, const struct kg_gnn *enc,
    const float *rel);

/*
 * One batch over g (blocks n_dst, learned rows lrow of enc->w, dropout
 * from rng when not NULL, as kg_gnn_forward_blocks): nb positives pos
 * with neg negatives each, negs, node IDs in rows of the encoder's
 * output (as kg_gnn_decode's); scale multiplies the gradients.  grad
 * (host, n_params + n_rel_f floats: the encoder's, then the relations')
 * gets every gradient but the learned table's, replaced, and the input
 * rows' gradients ADDED to their learned rows (zero them first); *loss
 * the summed loss.  Waits for the device.
 */
int kg_gnn_dstep_grad(struct kg_gnn_dstep *ds, const struct kg_gnn *enc,
    const struct kg_model *dec, const struct kg_loss *l,
    const struct kg_gnn_graph *g, const uint64_t *n_dst, const int32_t *lrow,
    struct kg_rng *rng, const int32_t *pos, size_t nb, const int32_t *negs,
    size_t neg, float scale, float *grad, double *loss);

void kg_gnn_dstep_release(struct kg_gnn_dstep *ds);

#endif
