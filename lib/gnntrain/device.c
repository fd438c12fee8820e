/*
 * gnntrain/device: GNN training steps on a compute backend (gnn_train.h's
 * kg_gnn_train_device_check; train_state.h).  The training state (the
 * learned table, the dense parameters, the relations and every Adam
 * state) moves onto the device before the first step and stays there:
 * a step uploads its batch, graph and masks, runs the encoder, the
 * decoder, the backward pass and the update there (gnn/step_device.h's
 * kg_gnn_dstep_train, step.c's arithmetic) and reads back the loss.
 * Validation, snapshots, checkpoints and the model dir read the host's
 * copy, which kg_gnn_device_sync_host refreshes first.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gnn/step_device.h"
#include "gnntrain/train_state.h"

int
kg_gnn_train_device_check(const struct kg_gnn_train_opts *o)
{
	if (o->decoder != KG_MODEL_DISTMULT) {
		kg_error("GNN training on a device decodes with DistMult only, "
		    "not %s", kg_model_name(o->decoder));
		return -1;
	}
	if (o->neg_chunk > 0) {
		kg_error("shared negatives (--neg_chunk_size) are not "
		    "supported by GNN training on a device yet");
		return -1;
	}
	if (o->neg_candidates > 1) {
		kg_error("adaptive negatives (--neg_candidates) are not "
		    "supported by GNN training on a device yet");
		return -1;
	}
	return 0;
}

int
kg_gnn_device_open(struct kg_gnn_tstate *ts)
{
	const struct kg_gnn_train_opts *o = ts->o;
	struct kg_device dev;

	if (o->device.kind == KG_DEVICE_CPU && !o->seam)
		return 0;
	if (kg_gnn_train_device_check(o) < 0)
		return -1;
	/* Several ranks: a GPU each (device_dist.c). */
	if (kg_gnn_device_of_rank(ts, &dev) < 0)
		return -1;
	if (ts->out->enc.n_attrs > 0) {
		kg_error("GNN training on a device reads learned embeddings "
		    "only: leave out --features or add --learned_only");
		return -1;
	}
	if ((ts->be = kg_backend_open(&dev)) == NULL)
		return -1;
	kg_device_format(&dev, ts->out->device, sizeof(ts->out->device));
	snprintf(ts->out->backend, sizeof(ts->out->backend), "%s",
	    kg_backend_name(ts->be));
	ts->dev = kg_xcalloc(1, sizeof(*ts->dev));
	ts->dev_stale = 1;
	return kg_gnn_dstep_open(ts->dev, ts->be, &ts->out->enc,
	    &ts->out->dec, ts->out->rel, ts->n_rel_f);
}

void
kg_gnn_device_close(struct kg_gnn_tstate *ts)
{
	if (ts->dev != NULL)
		kg_gnn_dstep_release(ts->dev);
	free(ts->dev);
	kg_backend_free(ts->be);
	ts->dev = NULL;
	ts->be = NULL;
}

int
kg_gnn_device_sync_host(struct kg_gnn_tstate *ts)
{
	struct kg_gnn_trained *out = ts->out;

	if (ts->dev == NULL || !ts->dev_ahead)
		return 0;
	if (kg_gnn_dstep_pull(ts->dev, &out->enc, out->rel, ts->st_enc,
	    ts->st_rel, ts->st_learn) < 0)
		return -1;
	ts->dev_ahead = 0;
	return 0;
}

void
kg_gnn_device_host_changed(struct kg_gnn_tstate *ts)
{
	if (ts->dev != NULL)
		ts->dev_stale = 1;
}

/* Several ranks: the gradients come back for the host's average and
 * update (step.c), the learned rows of the step uploaded from the host. */
double
kg_gnn_device_encode_decode(struct kg_gnn_tstate *ts,
    const struct kg_gnn_graph *g, const uint64_t *n_dst, const int32_t *lrow,
    float scale)
{
	struct kg_gnn_trained *out = ts->out;
	struct kg_gnn_work *w = &ts->w;
	const struct kg_gnn_train_opts *o = ts->o;
	uint32_t l, L = out->enc.c.n_layers;
	double loss = 0.0, t0 = kg_now();

	/* As step.c's decode() without adaptive selection. */
	memcpy(w->negs, w->cand, 3 * w->nb * w->nc * sizeof(*w->negs));
	if (kg_gnn_dstep_upload(ts->dev, &out->enc, out->rel) < 0 ||
	    kg_gnn_dstep_grad(ts->dev, &out->enc, &out->dec, &o->loss, g,
	    n_dst, lrow, &ts->rng, w->pos, w->nb, w->negs, o->neg, scale,
	    w->grad, &loss) < 0) {
		ts->dev_err = 1;
		return 0.0;
	}
	for (l = 0; l <= L; l++)
		w->st.rows[l] = ts->dev->pass.rows[l];
	/* One phase: the device's work is not timed apart. */
	out->phase_seconds[KG_GNN_PHASE_FORWARD] += kg_now() - t0;
	return loss;
}

int
kg_gnn_device_step_begin(struct kg_gnn_tstate *ts,
    const struct kg_gnn_graph *g, const uint64_t *n_dst, const int32_t *lrow,
    float scale)
{
	struct kg_gnn_trained *out = ts->out;
	struct kg_gnn_work *w = &ts->w;
	const struct kg_gnn_train_opts *o = ts->o;
	uint32_t l, L = out->enc.c.n_layers;

	ts->t_dev = kg_now();
	if (ts->dev_stale) {
		if (kg_gnn_dstep_push(ts->dev, &out->enc, out->rel, ts->st_enc,
		    ts->st_rel, ts->st_learn) < 0)
			goto fail;
		ts->dev_stale = 0;
	}
	/* As step.c's decode() without adaptive selection. */
	memcpy(w->negs, w->cand, 3 * w->nb * w->nc * sizeof(*w->negs));
	ts->dev_ahead = 1;
	if (kg_gnn_dstep_train_begin(ts->dev, &out->enc, &out->dec, &o->loss,
	    g, n_dst, lrow, &ts->rng, w->pos, w->nb, w->negs, o->neg, scale,
	    &ts->adam, o->reg) < 0)
		goto fail;
	for (l = 0; l <= L; l++)
		w->st.rows[l] = ts->dev->pass.rows[l];
	return 0;
fail:
	ts->dev_err = 1;
	return -1;
}

double
kg_gnn_device_step_end(struct kg_gnn_tstate *ts)
{
	double loss = 0.0;

	if (kg_gnn_dstep_train_end(ts->dev, &loss) < 0) {
		ts->dev_err = 1;
		return 0.0;
	}
	/* One phase: the device's work is not timed apart (the next
	 * batch's draw, between the halves, counts in its own phases). */
	ts->out->phase_seconds[KG_GNN_PHASE_FORWARD] += kg_now() - ts->t_dev;
	return loss;
}
