/*
 * driver: the GNN training driver; see gnn_train.h.  One step is in
 * step.c, the learned table's rows in learned.c, checkpoints in ckpt.c
 * (train_state.h ties them together); the run from directories in
 * lib/app/gnn_run.c.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compute/compute.h"
#include "gnntrain/train_state.h"

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
	if (o->batch_size == 0 || o->neg == 0 || (o->epochs == 0 &&
	    o->init_from == NULL && o->init_entities == NULL)) {
		kg_error("batch size, negatives and epochs must be positive");
		return -1;
	}
	if (o->neg_exchange && o->neg_chunk == 0) {
		kg_error("exchanged negatives (--neg_exchange) need shared "
		    "negatives (--neg_chunk_size)");
		return -1;
	}
	if (o->blocks && o->nfanout == 0) {
		kg_error("blocks need fan-outs (--fanout)");
		return -1;
	}
	if (!(o->lr > 0.0) || o->reg < 0.0) {
		kg_error("learning rate must be positive and regularisation "
		    "non-negative");
		return -1;
	}
	if (!(o->time_budget >= 0.0) || !(o->target_mrr >= 0.0 &&
	    o->target_mrr <= 1.0)) {
		kg_error("the time budget must be non-negative and the target "
		    "MRR in [0, 1]");
		return -1;
	}
	if (o->target_mrr > 0.0 && o->valid_every == 0) {
		kg_error("--target_mrr needs --valid_every");
		return -1;
	}
	return 0;
}

void
kg_gnn_trained_release(struct kg_gnn_trained *t)
{
	kg_gnn_release(&t->enc);
	free(t->rel);
	free(t->log);
	json_decref(t->comm);
	memset(t, 0, sizeof(*t));
	t->best_valid_mrr = -1.0;
}

/* What every rank would fail alike is checked before (checked in
 * kg_gnn_train); then the nodes' global IDs and the models. */
static int
setup_models(struct kg_gnn_tstate *ts)
{
	const struct kg_gnn_train_opts *o = ts->o;
	const struct kg_gnn_problem *p = ts->p;
	struct kg_gnn_trained *out = ts->out;
	uint8_t *none;
	int rc;

	if (p->n_core == 0) {
		kg_error("no training triples");
		return -1;
	}
	if (p->lrow == NULL && p->n_nodes > o->enc.n_learned) {
		kg_error("%" PRIu64 " nodes but %" PRIu64 " entities",
		    p->n_nodes, o->enc.n_learned);
		return -1;
	}
	ts->need = kg_gnn_learned_need(&o->enc, p->feat, p->frow, ts->n_loc);
	/* The encoder's learned block is left undrawn (and untouched until
	 * the end): the rows live in the store of kg_gnn_learned_open. */
	none = kg_xcalloc(ts->n_loc + 1, 1);
	rc = kg_gnn_learned_map(ts) < 0 ||
	    kg_gnn_model_init(&out->enc, &o->enc, p->feat, o->seed, ts->n_loc,
	    p->lrow, none) < 0 ||
	    kg_model_init(&out->dec, o->decoder, o->enc.dims[o->enc.n_layers],
	    0, (float)o->gamma) < 0 || kg_gnn_learned_open(ts) < 0 ? -1 : 0;
	free(none);
	return rc;
}

uint64_t
kg_gnn_epoch_share(const uint64_t *cum, uint32_t R, uint32_t r, uint64_t E)
{
	unsigned __int128 n = cum[R] ? cum[R] : 1;

	return (uint64_t)((unsigned __int128)E * cum[r + 1] / n -
	    (unsigned __int128)E * cum[r] / n);
}

uint64_t
kg_gnn_step_share(uint64_t e, uint64_t S, uint64_t s)
{
	return (uint64_t)((unsigned __int128)e * (s + 1) / S -
	    (unsigned __int128)e * s / S);
}

void
kg_gnn_relations_init(float *rel, size_t n, uint32_t n_relations, size_t dl,
    uint64_t seed)
{
	struct kg_rng rng;
	size_t i;

	kg_rng_stream(&rng, seed, KG_STREAM_GNN_RELATION_INIT, 0, 0, 0, 0);
	for (i = 0; i < n; i++)
		rel[i] = (float)((2.0 * kg_rng_uniform(&rng) - 1.0) *
		    sqrt(6.0 / (double)(n_relations + dl)));
}

/* Validation needs the whole graph on one rank, and valid triples. */
static int
check_valid(const struct kg_gnn_train_opts *o, const struct kg_gnn_problem *p,
    const struct kg_dist *d)
{
	if (o->valid_every == 0)
		return 0;
	if (d->size > 1 || p->lrow != NULL) {
		kg_error("--valid_every: GNN validation runs on one rank over "
		    "the whole graph (not under mpirun or --expanded)");
		return -1;
	}
	if (p->n_valid == 0 || p->filter == NULL) {
		kg_error("--valid_every: no valid triples to validate on");
		return -1;
	}
	return 0;
}

/* Steps per epoch, and with batches_per_epoch every rank's positives
 * per epoch (collective). */
static void
plan_epoch(struct kg_gnn_tstate *ts)
{
	const struct kg_gnn_train_opts *o = ts->o;
	uint32_t R = (uint32_t)ts->d->size, r, N = o->batches_per_epoch;
	uint64_t *cum;

	if (N == 0) {
		ts->steps_per_epoch = (ts->p->n_train_global + o->batch_size -
		    1) / o->batch_size;
		if (ts->steps_per_epoch == 0)
			ts->steps_per_epoch = 1;
		return;
	}
	ts->steps_per_epoch = (N + R - 1) / R;
	cum = kg_xcalloc(R + 1, sizeof(*cum));
	cum[ts->d->rank + 1] = ts->p->n_core;
	kg_dist_sum_u64(ts->d, cum + 1, R);
	for (r = 0; r < R; r++)
		cum[r + 1] += cum[r];
	ts->share = kg_xmallocarray(R, sizeof(*ts->share));
	for (r = 0; r < R; r++)
		ts->share[r] = kg_gnn_epoch_share(cum, R, r,
		    (uint64_t)N * o->batch_size);
	free(cum);
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
	kg_gnn_relations_init(out->rel, ts->n_rel_f, p->n_relations, ts->dl,
	    o->seed);
	ts->n_all = out->enc.n_params + ts->n_rel_f;
	/* The learned table (offset 0) is synchronised by rows, the rest
	 * densely; its gradient rows are zeroed as they are consumed. */
	ts->n_lf = ts->n_loc * ts->d0;
	ts->n_dense = out->enc.n_params - ts->n_lf;
	ts->st_enc = kg_xcalloc(2 * ts->n_dense + 1, sizeof(float));
	ts->st_rel = kg_xcalloc(2 * ts->n_rel_f + 1, sizeof(float));
	ts->adam = adam;
	ts->adam.lr = (float)o->lr;
	if (o->batches_per_epoch > 0 && o->lr_scale == KG_GNN_LR_SCALE_SQRT)
		ts->adam.lr = (float)(o->lr * sqrt((double)ts->d->size));
	else if (o->batches_per_epoch > 0 &&
	    o->lr_scale == KG_GNN_LR_SCALE_LINEAR)
		ts->adam.lr = (float)(o->lr * (double)ts->d->size);
	ts->order = kg_xmallocarray(p->n_core, sizeof(*ts->order));
	for (i = 0; i < p->n_core; i++)
		ts->order[i] = i;
	kg_gnn_graph_build(&ts->full, p->n_nodes, p->n_relations,
	    p->graph_hrt, p->n_graph);
	plan_epoch(ts);
	kg_gnn_work_init(ts);
	kg_rng_stream(&ts->rng, o->seed, KG_STREAM_GNN_TRAIN,
	    (uint64_t)ts->d->rank, 0, 0, 0);
}

/* Seconds as "1h02m", "3m05s" or "42s". */
static void
fmt_secs(char *buf, size_t len, double t)
{
	unsigned long s = t > 0.0 && t < 1e9 ? (unsigned long)(t + 0.5) : 0;

	if (s >= 3600)
		snprintf(buf, len, "%luh%02lum", s / 3600, s / 60 % 60);
	else if (s >= 60)
		snprintf(buf, len, "%lum%02lus", s / 60, s % 60);
	else
		snprintf(buf, len, "%lus", s);
}

/* Rank 0's progress line (o->progress): after the first step, then at
 * most twice a second rewritten in place on a terminal (a full line at
 * most every 10 seconds into a file or a pipe), the step, the rate and
 * the time left for the run (the steps left at the mean rate so far). */
static void
show_progress(struct kg_gnn_tstate *ts, uint32_t epoch, uint64_t done,
    uint64_t steps_run, double t0, double *last)
{
	const struct kg_gnn_train_opts *o = ts->o;
	uint64_t S = ts->steps_per_epoch;
	uint64_t left = (o->epochs - epoch - 1) * S + (S - done);
	double now = kg_now(), rate;
	char eta[32];

	int tty = isatty(STDERR_FILENO);

	if (!o->progress || ts->d->rank != 0 || now - *last < (tty ? 0.5 :
	    10.0))
		return;
	*last = now;
	rate = steps_run / (now - t0);
	if (o->max_step > 0 && o->max_step - ts->out->steps < left)
		left = o->max_step - ts->out->steps;
	fmt_secs(eta, sizeof(eta), rate > 0.0 ? (double)left / rate : 0.0);
	fprintf(stderr, "%s%s: epoch %u/%u step %" PRIu64 "/%" PRIu64
	    " %.2f s/step ETA %s%s", tty ? "\r" : "", kg_progname(), epoch + 1,
	    o->epochs, done, S, rate > 0.0 ? 1.0 / rate : 0.0, eta,
	    tty ? "   " : "\n");
}

/* The epoch loop's train hook: the next epoch's steps, with rank 0's
 * progress line.  Rank 0's time counts for every rank: the ranks' clocks
 * differ, and the time budget must stop all of them after the same
 * epoch. */
static int
hook_train(void *ctx, struct kg_epoch_report *r)
{
	struct kg_gnn_tstate *ts = ctx;
	const struct kg_gnn_train_opts *o = ts->o;
	struct kg_gnn_trained *out = ts->out;
	struct kg_dist *d = ts->d;
	uint64_t steps = ts->steps_per_epoch, step, done = 0, npos = 0;
	double loss = 0.0, te = kg_now(), secs;
	int saved = o->ckpt != NULL && o->ckpt->save && o->ckpt->dir != NULL &&
	    ts->epoch > 0;

	kg_dist_note_epoch(d, ts->epoch + 1, saved ? o->ckpt->dir : NULL,
	    ts->epoch);
	for (step = 0; step < steps; step++) {
		ts->estep = step;
		loss += kg_gnn_step(ts);
		if (ts->dev_err)
			return -1;
		npos += ts->step_pos;
		out->steps++;
		done++;
		ts->steps_run++;
		show_progress(ts, ts->epoch, done, ts->steps_run, ts->t_run,
		    &ts->t_shown);
		if (o->max_step > 0 && out->steps >= o->max_step)
			break;
	}
	secs = kg_now() - te;
	kg_dist_bcast(d, &secs, sizeof(secs), 0);
	kg_dist_sum_f64(d, &loss, 1);
	r->trained = o->batches_per_epoch ? npos : done * ts->w.nb *
	    (size_t)d->size;
	out->last_loss = loss / (double)(r->trained ? r->trained : 1);
	r->seconds = secs;
	r->whole = done == steps;
	if (o->progress && d->rank == 0 && isatty(STDERR_FILENO))
		fputs("\r\033[K", stderr);
	/* A checkpoint holds whole epochs only. */
	ts->epoch++;
	return 0;
}

static int
hook_valid(void *ctx, double *mrr)
{
	return kg_gnn_device_sync_host(ctx) < 0 ? -1 : kg_gnn_valid_mrr(ctx,
	    mrr);
}

static int
hook_snapshot(void *ctx, int back)
{
	if (kg_gnn_device_sync_host(ctx) < 0 || kg_gnn_snapshot(ctx, back) < 0)
		return -1;
	if (back)
		kg_gnn_device_host_changed(ctx);
	return 0;
}

static int
hook_save(void *ctx, int whole)
{
	struct kg_gnn_tstate *ts = ctx;
	const struct kg_gnn_train_opts *o = ts->o;

	if (!whole || o->ckpt == NULL || !o->ckpt->save || o->ckpt->dir == NULL)
		return 0;
	return kg_gnn_device_sync_host(ts) < 0 ? -1 : kg_gnn_ckpt_save(ts);
}

/* The epochs (from a resumed one on) through the shared loop; then the
 * figures of struct kg_gnn_trained.  0, or -1 when a checkpoint could not
 * be saved. */
static int
run_epochs(struct kg_gnn_tstate *ts)
{
	struct kg_gnn_trained *out = ts->out;
	struct kg_epoch_hooks h = {
		.ctx = ts, .train = hook_train, .valid = hook_valid,
		.snapshot = hook_snapshot, .save = hook_save,
		.epoch = &ts->epoch, .step = &out->steps,
		.loss = &out->last_loss
	};

	ts->t_run = kg_now();
	if (kg_epochs_run(&ts->ep, &h) < 0)
		return -1;
	kg_dist_note_epoch(ts->d, 0, NULL, 0);
	out->seconds_per_epoch = (kg_now() - ts->t_run) / (ts->ep.ran ?
	    ts->ep.ran : 1);
	out->epochs_run = ts->epoch;
	out->stopped_by = ts->ep.stopped_by;
	out->train_seconds = ts->ep.train_seconds;
	out->best_valid_mrr = ts->ep.best;
	out->best_epoch = ts->ep.best_epoch;
	return 0;
}

/* The epoch loop's options from the training options. */
static void
epochs_init(struct kg_gnn_tstate *ts)
{
	const struct kg_gnn_train_opts *o = ts->o;
	struct kg_epochs_opts eo = {
		.epochs = o->epochs, .max_step = o->max_step,
		.valid_every = o->valid_every, .patience = o->patience,
		.target_mrr = o->target_mrr, .time_budget = o->time_budget,
		.show = !o->quiet && ts->d->rank == 0
	};

	kg_epochs_init(&ts->ep, &eo);
}

void
kg_gnn_tstate_release(struct kg_gnn_tstate *ts)
{
	kg_gnn_device_close(ts);
	kg_gnn_work_release(&ts->w);
	kg_gnn_graph_release(&ts->full);
	free(ts->st_enc);
	free(ts->st_rel);
	kg_gnn_learned_unpin(ts, 0);
	kg_store_free(ts->learn);
	ts->learn = NULL;
	free(ts->map);
	free(ts->order);
	free(ts->share);
	free(ts->need);
	free(ts->frozen_learn);
	ts->frozen_learn = NULL;
	ts->frozen = NULL;
	kg_epochs_release(&ts->ep);
	kg_gnn_valid_release(ts);
	ts->need = NULL;
	ts->st_enc = ts->st_learn = ts->st_rel = NULL;
	ts->map = NULL;
	ts->order = NULL;
	ts->share = NULL;
}

int
kg_gnn_tstate_init(struct kg_gnn_tstate *ts, struct kg_gnn_trained *out,
    const struct kg_gnn_train_opts *o, const struct kg_gnn_problem *p,
    struct kg_dist *d)
{
	memset(out, 0, sizeof(*out));
	out->best_valid_mrr = -1.0;
	memset(ts, 0, sizeof(*ts));
	/* OpenBLAS threads of their own would fight the OpenMP threads
	 * (gnn.h, Threads): half the speed of a sampled step at 200k nodes
	 * on 2 cores. */
	kg_compute_init();
	ts->out = out;
	ts->p = p;
	ts->o = o;
	ts->d = d;
	ts->n_loc = p->n_nodes;
	ts->d0 = o->enc.dims[0];
	/* Check what every rank would fail alike before the first
	 * collective, and agree on the rest. */
	if (kg_gnn_train_opts_check(o) < 0 || check_valid(o, p, d) < 0)
		return -1;
	if (kg_gnn_any_rank(d, setup_models(ts) < 0))
		return -1;
	setup_state(ts);
	epochs_init(ts);
	return kg_gnn_any_rank(d, kg_gnn_device_open(ts) < 0) ? -1 : 0;
}

int
kg_gnn_train(struct kg_gnn_trained *out, const struct kg_gnn_train_opts *o,
    const struct kg_gnn_problem *p, struct kg_dist *d)
{
	struct kg_dist solo = KG_DIST_INIT;
	struct kg_gnn_tstate ts;
	int rc = -1;

	if (o->epochs == 0) {
		kg_error("kg_gnn_train: no epochs to train");
		return -1;
	}
	if (kg_gnn_tstate_init(&ts, out, o, p, d != NULL ? d : &solo) < 0)
		goto out;
	if (o->warm != NULL)
		kg_gnn_warm_apply(o->warm, &ts);
	if (kg_gnn_ckpt_resume(&ts) < 0)
		goto out;
	/* A resumed state reaches the device before the first step: the
	 * device step was opened stale (kg_gnn_device_open). */
	if (run_epochs(&ts) < 0 || kg_gnn_device_sync_host(&ts) < 0)
		goto out;
	out->comm = kg_dist_comm_json(ts.d);
	/* Rank 0's whole table should not meet the training buffers. */
	kg_gnn_work_release(&ts.w);
	kg_gnn_graph_release(&ts.full);
	free(ts.st_enc);
	ts.st_enc = NULL;
	kg_gnn_learned_fill(&ts);
	if (kg_gnn_any_rank(ts.d, kg_gnn_learned_gather(&ts) < 0))
		goto out;
	out->log = ts.ep.log.s != NULL ? ts.ep.log.s : kg_xstrdup("");
	ts.ep.log.s = NULL;
	rc = 0;
out:
	kg_gnn_tstate_release(&ts);
	if (rc < 0)
		kg_gnn_trained_release(out);
	return rc;
}
