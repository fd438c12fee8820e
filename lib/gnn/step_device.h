/*
 * gnn/step_device: one GNN training batch on a compute backend
 * (gnntrain/step.c's encode_decode and update, without the exchange of
 * negatives between ranks): the R-GCN or RelGNN encoder's forward over
 * the graph or blocks (forward_device.h), the DistMult decoder with
 * per-positive negatives (decode_device.h) and the backward, every dense
 * parameter and activation in device memory.  The host builds the batch,
 * samples the graph, orders its messages and draws the dropout masks,
 * and uploads those per step.
 *
 * Two ways to use it.  kg_gnn_dstep_grad leaves the update to the host:
 * it uploads the learned rows of the graph's nodes and reads back every
 * gradient.  kg_gnn_dstep_train keeps the whole training state on the
 * device after kg_gnn_dstep_push (the learned table, the dense
 * parameters, the relations and their Adam states): the step gathers
 * its input rows there, applies the regulariser and Adam there
 * (backend.h's kg_be_adam for the learned rows, kg_be_adam_flat for the
 * rest, rowops.h's arithmetic) and reads back only the loss; the host
 * reads the state with kg_gnn_dstep_pull when it needs it (validation,
 * checkpoints, the end).
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
	/* kg_gnn_dstep_train's: the Adam states (NULL until the first
	 * push), the step's learned row numbers (device, host staging),
	 * the regulariser's rows and value. */
	float *dst_enc, *dst_rel, *dst_learn;
	int64_t *dlrow, *hlrow;
	uint64_t cap_lrow, cap_hlrow;
	float *dreg_rows;
	uint64_t cap_reg_rows;
	double *dreg;
	/* kg_gnn_dstep_freeze's (borrowed, NULL/0: none): the frozen
	 * learned table rows, dense and relation float ranges; and the
	 * step's rows that train: their positions among the input nodes
	 * then their table rows (host staging, device), their gradients
	 * gathered (device). */
	const uint8_t *fz_rows;
	const size_t *fz_dense, *fz_rel;
	size_t n_fz_dense, n_fz_rel;
	int64_t *hfz, *dfz;
	uint64_t cap_hfz, cap_dfz, n_train;
	float *dgin_t;
	uint64_t cap_gin_t;
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

/*
 * The training state onto the device, replacing the device's: every
 * parameter of enc (its learned rows from kg_gnn_learned_rows, the
 * table at enc->learned == 0), the relations rel, and the Adam states
 * st_enc (2 n + 1 floats for the n encoder floats after the table),
 * st_rel (2 n_rel_f + 1) and st_learn (n_learned rows of 2 d0 + 1).
 * kg_gnn_dstep_pull copies them all back to the same places.
 */
int kg_gnn_dstep_push(struct kg_gnn_dstep *ds, const struct kg_gnn *enc,
    const float *rel, const float *st_enc, const float *st_rel,
    const float *st_learn);
int kg_gnn_dstep_pull(struct kg_gnn_dstep *ds, struct kg_gnn *enc,
    float *rel, float *st_enc, float *st_rel, float *st_learn);

/*
 * One training step on the state kg_gnn_dstep_push put on the device:
 * kg_gnn_dstep_grad's batch and gradients (its arguments), then, as
 * gnntrain/step.c's update on one rank, the L2 regulariser reg (when
 * > 0) on the dense parameters, the relations and the learned rows of
 * g's nodes (lrow: distinct rows, as a sample's), and Adam a on each.
 * *loss the summed loss, the only thing read back.
 */
int kg_gnn_dstep_train(struct kg_gnn_dstep *ds, const struct kg_gnn *enc,
    const struct kg_model *dec, const struct kg_loss *l,
    const struct kg_gnn_graph *g, const uint64_t *n_dst, const int32_t *lrow,
    struct kg_rng *rng, const int32_t *pos, size_t nb, const int32_t *negs,
    size_t neg, float scale, const struct kg_adam *a, double reg,
    double *loss);

/*
 * kg_gnn_dstep_train in two halves: _begin uploads the batch and queues
 * the step's work on the device (on a GPU it returns while the backward
 * pass and the update may still run, so the host can draw the next batch
 * meanwhile); _end waits for it and reads the loss.  Call them in turn.
 */
int kg_gnn_dstep_train_begin(struct kg_gnn_dstep *ds,
    const struct kg_gnn *enc, const struct kg_model *dec,
    const struct kg_loss *l, const struct kg_gnn_graph *g,
    const uint64_t *n_dst, const int32_t *lrow, struct kg_rng *rng,
    const int32_t *pos, size_t nb, const int32_t *negs, size_t neg,
    float scale, const struct kg_adam *a, double reg);
int kg_gnn_dstep_train_end(struct kg_gnn_dstep *ds, double *loss);

/*
 * What kg_gnn_dstep_train steps not (gnntrain/gnn_train.h's struct
 * kg_gnn_frozen; all borrowed until release): rows[i] = 1 where learned
 * table row i is frozen (NULL: none), which takes no Adam step; dense
 * (n_dense (offset, length) pairs of the encoder floats after the
 * table) and rel (n_rel pairs of relation floats), whose gradients are
 * zeroed before their Adam steps.
 */
void kg_gnn_dstep_freeze(struct kg_gnn_dstep *ds, const uint8_t *rows,
    const size_t *dense, size_t n_dense, const size_t *rel, size_t n_rel);

void kg_gnn_dstep_release(struct kg_gnn_dstep *ds);

#endif
