/*
 * gnn_train: the GNN training driver; see gnn_train.h.  One step is in
 * step.c, the learned table's rows in learned.c, checkpoints in ckpt.c
 * (train_state.h ties them together); the run from directories in
 * train_run.c.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gnn/train_state.h"

int
kg_gnn_train_opts_check(const struct kg_gnn_train_opts *o)
{
	uint32_t k;

	if (o->decoder != KG_MODEL_DISTMULT && o->decoder != KG_MODEL_COMPLEX &&
	    o->decoder != KG_MODEL_TRANSE_L1 &&
	    o->decoder != KG_MODEL_TRANSE_L2) {
		kg_error("the GNN decoder must be DistMult, TransE or ComplEx, "
		    "not %s", kg_model_name(o->decoder));
		return -1;
	}
	if (o->enc.n_layers > KG_GNN_MAX_LAYERS) {
		kg_error("at most %d graph layers", KG_GNN_MAX_LAYERS);
		return -1;
	}
	if (o->nfanout != 0 && o->nfanout != o->enc.n_layers) {
		kg_error("--fanout needs one value per graph layer (%u), "
		    "found %u", o->enc.n_layers, o->nfanout);
		return -1;
	}
	for (k = 0; k < o->nfanout; k++)
		if (o->fanout[k] == 0) {
			kg_error("fan-out values must be positive");
			return -1;
		}
	if (!(o->edge_dropout >= 0.0 && o->edge_dropout < 1.0)) {
		kg_error("edge dropout must be in [0, 1)");
		return -1;
	}
	if (o->batch_size == 0 || o->neg == 0 || o->epochs == 0) {
		kg_error("batch size, negatives and epochs must be positive");
		return -1;
	}
	if (!(o->lr > 0.0) || o->reg < 0.0) {
		kg_error("learning rate must be positive and regularisation "
		    "non-negative");
		return -1;
	}
	return 0;
}

void
kg_gnn_trained_release(struct kg_gnn_trained *t)
{
	kg_gnn_release(&t->enc);
	free(t->rel);
	memset(t, 0, sizeof(*t));
}

/* What every rank would fail alike is checked before (checked in
 * kg_gnn_train); then the nodes' global IDs and the models. */
static int
setup_models(struct kg_gnn_tstate *ts)
{
	const struct kg_gnn_train_opts *o = ts->o;
	const struct kg_gnn_problem *p = ts->p;
	struct kg_gnn_trained *out = ts->out;

	if (p->n_core == 0) {
		kg_error("no training triples");
		return -1;
	}
	if (p->lrow == NULL && p->n_nodes > o->enc.n_learned) {
		kg_error("%" PRIu64 " nodes but %" PRIu64 " entities",
		    p->n_nodes, o->enc.n_learned);
		return -1;
	}
	if (kg_gnn_learned_map(ts) < 0 ||
	    kg_gnn_model_init(&out->enc, &o->enc, p->feat, o->seed, ts->n_loc,
	    p->lrow) < 0 ||
	    kg_model_init(&out->dec, o->decoder, o->enc.dims[o->enc.n_layers],
	    0, (float)o->gamma) < 0)
		return -1;
	return 0;
}

/* The decoder's relations, the optimiser states, the permutation, the
 * whole graph and the step workspace. */
static void
setup_state(struct kg_gnn_tstate *ts)
{
	const struct kg_gnn_train_opts *o = ts->o;
	const struct kg_gnn_problem *p = ts->p;
	struct kg_gnn_trained *out = ts->out;
	struct kg_adam adam = KG_ADAM_INIT;
	size_t i;

	ts->dl = o->enc.dims[o->enc.n_layers];
	ts->n_rel_f = (size_t)p->n_relations * out->dec.rel_width;
	out->rel = kg_xmallocarray(ts->n_rel_f + 1, sizeof(float));
	kg_rng_stream(&ts->rng, o->seed, KG_STREAM_GNN_RELATION_INIT, 0, 0, 0, 0);
	for (i = 0; i < ts->n_rel_f; i++)
		out->rel[i] = (float)((2.0 * kg_rng_uniform(&ts->rng) - 1.0) *
		    sqrt(6.0 / (double)(p->n_relations + ts->dl)));
	ts->n_all = out->enc.n_params + ts->n_rel_f;
	/* The learned table (offset 0) is synchronised by rows, the rest
	 * densely; its gradient rows are zeroed as they are consumed. */
	ts->n_lf = ts->n_loc * ts->d0;
	ts->n_dense = out->enc.n_params - ts->n_lf;
	ts->st_enc = kg_xcalloc(2 * ts->n_dense + 1, sizeof(float));
	ts->st_learn = kg_xcalloc(ts->n_loc * (2 * ts->d0 + 1) + 1,
	    sizeof(float));
	ts->st_rel = kg_xcalloc(2 * ts->n_rel_f + 1, sizeof(float));
	ts->adam = adam;
	ts->adam.lr = (float)o->lr;
	ts->order = kg_xmallocarray(p->n_core, sizeof(*ts->order));
	for (i = 0; i < p->n_core; i++)
		ts->order[i] = i;
	kg_gnn_graph_build(&ts->full, p->n_nodes, p->n_relations,
	    p->graph_hrt, p->n_graph);
	kg_gnn_work_init(ts);
	kg_rng_stream(&ts->rng, o->seed, KG_STREAM_GNN_TRAIN,
	    (uint64_t)ts->d->rank, 0, 0, 0);
}

/* The epochs (from a resumed one on), a checkpoint after each whole
 * one.  0, or -1 when a checkpoint could not be saved. */
static int
run_epochs(struct kg_gnn_tstate *ts)
{
	const struct kg_gnn_train_opts *o = ts->o;
	struct kg_gnn_trained *out = ts->out;
	struct kg_dist *d = ts->d;
	uint64_t steps, step, done;
	uint32_t epoch, ran = 0;
	double t0 = kg_now();

	steps = (ts->p->n_train_global + o->batch_size - 1) / o->batch_size;
	if (steps == 0)
		steps = 1;
	for (epoch = ts->epoch; epoch < o->epochs && !(o->max_step > 0 &&
	    out->steps >= o->max_step); epoch++) {
		double loss = 0.0, te = kg_now();

		for (step = 0, done = 0; step < steps; step++) {
			loss += kg_gnn_step(ts);
			out->steps++;
			done++;
			if (o->max_step > 0 && out->steps >= o->max_step)
				break;
		}
		kg_dist_sum_f64(d, &loss, 1);
		out->last_loss = loss / (double)(done * ts->w.nb *
		    (size_t)d->size);
		ran++;
		if (!o->quiet && d->rank == 0)
			fprintf(stderr, "%s: epoch %u loss %.6f (%.2f s)\n",
			    kg_progname(), epoch + 1, out->last_loss,
			    kg_now() - te);
		/* A checkpoint holds whole epochs only. */
		ts->epoch = epoch + 1;
		if (done == steps && o->ckpt != NULL && o->ckpt->save &&
		    o->ckpt->dir != NULL && kg_gnn_ckpt_save(ts) < 0)
			return -1;
	}
	out->seconds_per_epoch = (kg_now() - t0) / (ran ? ran : 1);
	return 0;
}

/* What the training buffers hold (not the trained parameters). */
static void
tstate_release(struct kg_gnn_tstate *ts)
{
	kg_gnn_work_release(&ts->w);
	kg_gnn_graph_release(&ts->full);
	free(ts->st_enc);
	free(ts->st_learn);
	free(ts->st_rel);
	free(ts->map);
	free(ts->order);
	ts->st_enc = ts->st_learn = ts->st_rel = NULL;
	ts->map = NULL;
	ts->order = NULL;
}

int
kg_gnn_train(struct kg_gnn_trained *out, const struct kg_gnn_train_opts *o,
    const struct kg_gnn_problem *p, struct kg_dist *d)
{
	struct kg_dist solo = KG_DIST_INIT;
	struct kg_gnn_tstate ts;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	memset(&ts, 0, sizeof(ts));
	ts.out = out;
	ts.p = p;
	ts.o = o;
	ts.d = d != NULL ? d : &solo;
	ts.n_loc = p->n_nodes;
	ts.d0 = o->enc.dims[0];
	/* Check what every rank would fail alike before the first
	 * collective, and agree on the rest. */
	if (kg_gnn_train_opts_check(o) < 0)
		return -1;
	if (kg_gnn_any_rank(ts.d, setup_models(&ts) < 0))
		goto out;
	setup_state(&ts);
	if (kg_gnn_ckpt_resume(&ts) < 0 || run_epochs(&ts) < 0)
		goto out;
	/* Rank 0's whole table should not meet the training buffers. */
	kg_gnn_work_release(&ts.w);
	kg_gnn_graph_release(&ts.full);
	free(ts.st_learn);
	free(ts.st_enc);
	ts.st_learn = ts.st_enc = NULL;
	if (kg_gnn_any_rank(ts.d, kg_gnn_learned_gather(&ts) < 0))
		goto out;
	rc = 0;
out:
	tstate_release(&ts);
	if (rc < 0)
		kg_gnn_trained_release(out);
	return rc;
}

float *
kg_gnn_embed(const struct kg_gnn *m, const struct kg_features *f,
    uint64_t n_nodes, const int32_t *hrt, uint64_t n)
{
	struct kg_gnn_graph g = KG_GNN_GRAPH_INIT;
	struct kg_gnn_state st = KG_GNN_STATE_INIT;
	size_t dl = m->c.dims[m->c.n_layers];
	float *out = kg_xmallocarray(n_nodes * dl + 1, sizeof(float));

	kg_gnn_graph_build(&g, n_nodes, m->c.n_relations, hrt, n);
	kg_gnn_forward(m, &g, f, NULL, NULL, NULL, &st);
	memcpy(out, st.h[m->c.n_layers], n_nodes * dl * sizeof(float));
	kg_gnn_state_release(&st);
	kg_gnn_graph_release(&g);
	return out;
}
