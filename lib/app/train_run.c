/*
 * train_run: kg-train's run of a shallow model; see train_run.h.
 */
#include "app/train_run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "app/train_engine.h"
#include "compute/backend.h"
#include "eval/eval.h"
#include "io/dataset.h"
#include "kge/modeldir.h"
#include "kge/train_impl.h"
#include "kge/warmstart.h"

struct job {
	const struct kg_train_opts *o;
	struct kg_train_opts o_run;	/* o as trained (a plateau switch) */
	const struct kg_train_job *j;
	struct kg_dataset ds;
	const struct kg_triples *train;
	struct kg_trainer tr;
	struct kg_filter filter;
	struct kg_epochs ep;	/* the epoch loop: validation, stops, log */
	char *ckpt;
	json_t *config;		/* the settings (opts_json), for checkpoints */
	int show;	/* epoch lines and messages: not quiet, rank 0 */
	int progress;	/* the line inside an epoch: a terminal, --progress */
	int writes;
	struct kg_engine *eng;	/* where the step runs (kge/engine.h) */
};

/* Fail before training, not after it, when the output cannot be made. */
static int
check_parent(const char *path, const char *what)
{
	char *copy = kg_xstrdup(path), *slash = strrchr(copy, '/');
	const char *parent = ".";
	int rc = 0;

	if (slash == copy)
		parent = "/";
	else if (slash != NULL) {
		*slash = '\0';
		parent = copy;
	}
	if (access(parent, W_OK | X_OK) != 0) {
		kg_error_errno("cannot write the %s into '%s'", what, parent);
		rc = -1;
	}
	free(copy);
	return rc;
}

/* The dataset, and what this run needs of it; 0, -1 or KG_ERR_VERSION. */
static int
load_dataset(struct job *b)
{
	const struct kg_train_job *j = b->j;
	int rc = kg_dataset_load(&b->ds, j->dataset);

	if (rc < 0)
		return rc;
	b->train = &b->ds.split[KG_SPLIT_TRAIN];
	if (b->train->n == 0) {
		kg_error("dataset '%s' has no train triples", j->dataset);
		return -1;
	}
	if (j->valid_every > 0 && b->ds.split[KG_SPLIT_VALID].n == 0) {
		kg_error("dataset '%s' has no valid triples for early "
		    "stopping", j->dataset);
		return -1;
	}
	if (b->o->use_types && b->ds.types == NULL) {
		kg_error("--neg_types: dataset '%s' has no entity types",
		    j->dataset);
		return -1;
	}
	return 0;
}

/* The trainer, with the known positives for filtering: the train triples
 * and, with reciprocal relations, their inverses. */
static int
init_trainer(struct job *b)
{
	const struct kg_train_opts *o = b->o;
	const struct kg_triples *train = b->train;
	uint64_t nk = !o->filter_negatives ? 0 : o->reciprocal ?
	    2 * train->n : train->n, i;
	int32_t *known = kg_xmallocarray(3 * nk + 3, sizeof(*known));
	int rc;

	if (nk > 0)
		memcpy(known, train->hrt, 3 * train->n * sizeof(*known));
	for (i = train->n; i < nk; i++) {
		const int32_t *x = train->hrt + 3 * (i - train->n);

		known[3 * i] = x[2];
		known[3 * i + 1] = x[1] + (int32_t)b->ds.n_relations;
		known[3 * i + 2] = x[0];
	}
	rc = kg_trainer_init(&b->tr, o, b->ds.n_entities, b->ds.n_relations,
	    train->hrt, train->n, known, nk, b->ds.types,
	    (uint32_t)b->ds.n_types);
	free(known);
	return rc;
}

/*
 * Before a resume: the checkpoint must come from this dataset (by its
 * dictionaries); settings changed since it was saved are said on stderr
 * and recorded (config.resumed_with_changes, in the checkpoints and the
 * model dir).
 */
static int
settings_changes(struct job *b)
{
	json_t *old = kg_ckpt_config(b->ckpt), *changes;
	char *what = kg_xasprintf("checkpoint '%s'", b->ckpt), *line;
	int rc = kg_dataset_check_dicts(json_object_get(old, "dictionaries"),
	    &b->ds, what);

	free(what);
	if (rc == 0) {
		kg_ckpt_changes(old, b->config, &changes, &line);
		if (line != NULL && !b->j->quiet)
			kg_warn("resuming from '%s' with changed settings: %s",
			    b->ckpt, line);
		if (changes != NULL)
			json_object_set_new(b->config, "resumed_with_changes",
			    changes);
		free(line);
	}
	json_decref(old);
	return rc;
}

/* The checkpoint path, and a resume from it when asked.  A follower gets
 * rank 0's resumed state through after_init. */
static int
resume(struct job *b)
{
	const struct kg_train_job *j = b->j;
	char *old_log = NULL;

	b->ckpt = kg_train_job_ckpt(j);
	if (b->writes && !j->no_checkpoint &&
	    check_parent(b->ckpt, "checkpoint") < 0)
		return -1;
	if (!j->resume || !b->writes)
		return 0;
	if (!kg_path_exists(b->ckpt)) {
		if (!j->quiet)
			kg_warn("no checkpoint '%s' to resume from; starting "
			    "afresh", b->ckpt);
		return 0;
	}
	if (settings_changes(b) < 0 ||
	    kg_trainer_load(&b->tr, b->ckpt, &old_log) < 0)
		return -1;
	kg_strbuf_add(&b->ep.log, old_log);
	free(old_log);
	if (b->show)
		fprintf(stderr, "%s: resuming after epoch %u from '%s'\n",
		    kg_progname(), b->tr.epoch, b->ckpt);
	return 0;
}

/* Filtered validation MRR (both sides, realistic ties) of the trainer's
 * current parameters. */
static int
valid_mrr(struct job *b, double *mrr)
{
	struct kg_trainer *tr = &b->tr;
	struct kg_modeldir md = KG_MODELDIR_INIT;
	struct kg_eval_opts eo = KG_EVAL_OPTS_INIT;
	struct kg_eval_ranks ranks = KG_EVAL_RANKS_INIT;
	const struct kg_triples *valid = &b->ds.split[KG_SPLIT_VALID];
	struct kg_metrics m[3];

	md.model = tr->model;
	md.reciprocal = tr->o.reciprocal;
	md.n_entities = tr->n_entities;
	md.n_relations = tr->n_relations;
	md.n_rel_rows = tr->n_rel_rows;
	md.ents = tr->ents;
	md.relations = tr->rel;
	eo.filter = &b->filter;
	eo.threads = (int)tr->nthreads;
	if (kg_eval_rank(&md, valid, &eo, &ranks) < 0)
		return -1;
	kg_eval_metrics(&ranks, valid, -1, KG_TIES_REALISTIC, m);
	*mrr = kg_metrics_mrr(&m[2]);
	kg_eval_ranks_release(&ranks);
	return 0;
}

/* The hooks of the epoch loop (kge/epochs.h). */
static int
hook_train(void *ctx, struct kg_epoch_report *r)
{
	struct job *b = ctx;
	const struct kg_train_job *j = b->j;
	double t0 = kg_now();
	uint64_t full = b->train->n * (b->o->reciprocal ? 2 : 1);

	if (kg_engine_epoch(b->eng, b->train->hrt, b->train->n,
	    &r->trained) < 0 || kg_engine_download(b->eng) < 0)
		return -1;
	if (j->after_epoch != NULL && j->after_epoch(j->hook_ctx, &b->tr) < 0)
		return -1;
	r->seconds = kg_now() - t0;
	r->whole = r->trained >= full;
	return kg_trainer_check_finite(&b->tr);
}

static int
hook_valid(void *ctx, double *mrr)
{
	return valid_mrr(ctx, mrr);
}

static int
hook_snapshot(void *ctx, int back)
{
	struct job *b = ctx;

	return kg_trainer_snapshot(&b->tr, back);
}

/* The sampled softmax has levelled off: the full one from the next
 * epoch on.  1 when it switched. */
static int
hook_plateau(void *ctx, uint32_t epoch)
{
	struct job *b = ctx;

	if (b->tr.o.one_vs_all_after != KG_ONE_VS_ALL_LATER)
		return 0;
	b->tr.o.one_vs_all_after = epoch;
	if (b->show)
		fprintf(stderr, "%s: valid MRR level for %u validations; every "
		    "entity a candidate from epoch %u\n", kg_progname(),
		    b->j->one_vs_all_plateau, epoch + 1);
	return 1;
}

static int
hook_save(void *ctx, int whole)
{
	struct job *b = ctx;

	(void)whole;
	if (!b->writes || b->j->no_checkpoint)
		return 0;
	return kg_trainer_save(&b->tr, b->ckpt, b->ep.log.s, b->config,
	    &b->j->dataset, 1);
}

static int
run_epochs(struct job *b)
{
	struct kg_epoch_hooks h = {
		.ctx = b, .train = hook_train, .valid = hook_valid,
		.snapshot = hook_snapshot, .plateau = hook_plateau,
		.save = hook_save, .epoch = &b->tr.epoch, .step = &b->tr.step,
		.loss = &b->tr.last_loss
	};

	return kg_epochs_run(&b->ep, &h);
}

static json_t *
opts_json(const struct kg_train_opts *o, const struct kg_train_job *j)
{
	json_t *c = json_object();

	json_object_set_new(c, "loss", json_string(kg_loss_name(o->loss.kind)));
	json_object_set_new(c, "margin", json_real(o->loss.margin));
	json_object_set_new(c, "adversarial_temperature",
	    json_real(o->loss.adv_temp));
	json_object_set_new(c, "batch_size", json_integer(o->batch_size));
	json_object_set_new(c, "neg_sample_size",
	    json_integer(o->neg_sample_size));
	json_object_set_new(c, "neg_chunk_size", json_integer(o->chunk_size ?
	    o->chunk_size : o->neg_sample_size));
	json_object_set_new(c, "neg_degree_fraction",
	    json_real(o->degree_frac));
	json_object_set_new(c, "one_vs_all", json_boolean(o->one_vs_all));
	json_object_set_new(c, "one_vs_all_after",
	    json_integer(o->one_vs_all_after == KG_ONE_VS_ALL_LATER ? 0 :
	    o->one_vs_all_after));
	json_object_set_new(c, "one_vs_all_plateau",
	    json_integer(j->one_vs_all_plateau));
	json_object_set_new(c, "one_vs_all_grouped",
	    json_boolean(o->ova_mode == KG_OVA_GROUPED));
	json_object_set_new(c, "subsampling_weight",
	    json_boolean(o->subsampling));
	json_object_set_new(c, "deterministic", json_boolean(o->deterministic));
	json_object_set_new(c, "neg_filter",
	    json_boolean(o->filter_negatives));
	json_object_set_new(c, "neg_types", json_boolean(o->use_types));
	json_object_set_new(c, "neg_in_batch", json_boolean(o->neg_in_batch));
	json_object_set_new(c, "lr", json_real(o->lr));
	json_object_set_new(c, "ent_optimizer",
	    json_string(kg_optim_name(o->ent_optim)));
	json_object_set_new(c, "rel_optimizer",
	    json_string(kg_optim_name(o->rel_optim)));
	json_object_set_new(c, "rel_lr", json_real(o->rel_lr));
	json_object_set_new(c, "regularization_coef", json_real(o->reg_coef));
	json_object_set_new(c, "regularization_norm",
	    json_integer(o->reg_norm));
	json_object_set_new(c, "init", json_string(o->init == KG_INIT_NORMAL ?
	    "normal" : "uniform"));
	json_object_set_new(c, "init_scale", json_real(o->init_scale));
	json_object_set_new(c, "max_grad_norm", json_real(o->clip));
	json_object_set_new(c, "epochs", json_integer(o->epochs));
	json_object_set_new(c, "max_step", json_integer((json_int_t)
	    o->max_step));
	json_object_set_new(c, "seed", json_integer((json_int_t)o->seed));
	json_object_set_new(c, "num_thread", json_integer(o->threads));
	json_object_set_new(c, "valid_every", json_integer(j->valid_every));
	json_object_set_new(c, "patience", json_integer(j->patience));
	json_object_set_new(c, "rel_pred_weight", json_real(o->rel_pred));
	json_object_set_new(c, "dura_coef", json_real(o->dura));
	json_object_set_new(c, "one_vs_all_dura", o->ova_dura >= 0.0 ?
	    json_real(o->ova_dura) : json_null());
	json_object_set_new(c, "lr_warmup", json_integer((json_int_t)
	    o->lr_warmup));
	json_object_set_new(c, "lr_decay", json_real(o->lr_decay));
	json_object_set_new(c, "time_budget", json_real(j->time_budget));
	json_object_set_new(c, "target_mrr", json_real(j->target_mrr));
	return c;
}

static json_t *
figures(const struct job *b)
{
	const struct kg_trainer *tr = &b->tr;
	json_t *fig = json_object();

	json_object_set_new(fig, "epochs", json_integer(tr->epoch));
	json_object_set_new(fig, "steps", json_integer((json_int_t)tr->step));
	json_object_set_new(fig, "stopped_by", json_string(b->ep.stopped_by));
	json_object_set_new(fig, "final_loss", json_real(tr->last_loss));
	json_object_set_new(fig, "train_seconds",
	    json_real(b->ep.train_seconds));
	json_object_set_new(fig, "triples_per_second", json_real(
	    b->ep.train_seconds > 0.0 ? (double)b->ep.trained /
	    b->ep.train_seconds : 0.0));
	json_object_set_new(fig, "threads", json_integer(tr->nthreads));
	/* The host engine runs on the CPU backend (lib/compute/backend.h);
	 * the device engine on its backend. */
	kg_train_engine_figures(fig, b->eng, b->j, 1);
	json_object_set_new(fig, "train_triples",
	    json_integer((json_int_t)b->train->n));
	if (b->j->one_vs_all_plateau > 0)
		json_object_set_new(fig, "one_vs_all_after",
		    tr->o.one_vs_all_after == KG_ONE_VS_ALL_LATER ? json_null() :
		    json_integer(tr->o.one_vs_all_after));
	if (b->ep.best >= 0.0) {
		json_object_set_new(fig, "best_valid_mrr", json_real(b->ep.best));
		json_object_set_new(fig, "best_epoch",
		    json_integer(b->ep.best_epoch));
	}
	return fig;
}

/* The model dir (lib/kge/modeldir.h), entity rows streamed from the
 * store. */
static int
write_model(struct job *b)
{
	struct kg_trainer *tr = &b->tr;
	struct kg_modeldir_spec s;
	struct kg_modeldir_writer w;
	int rc;

	memset(&s, 0, sizeof(s));
	s.dir = b->j->output;
	s.force = b->j->force;
	s.argc = b->j->argc;
	s.argv = b->j->argv;
	s.model = &tr->model;
	s.reciprocal = b->o->reciprocal;
	s.n_entities = tr->n_entities;
	s.n_relations = tr->n_relations;
	s.state_width = tr->ents->state_width;
	s.rel = tr->rel;
	s.rel_state = tr->rel_state;
	s.rel_state_width = tr->rel_state_width;
	s.log = b->ep.log.s ? b->ep.log.s : "";
	s.dataset = b->j->dataset;
	s.config = b->config;
	s.figures = figures(b);
	rc = kg_modeldir_begin(&w, &s);
	if (rc == 0 && kg_store_write(tr->ents, &w.table) < 0) {
		kg_modeldir_abort(&w);
		rc = -1;
	}
	if (rc == 0)
		rc = kg_modeldir_commit(&w);
	json_decref(s.figures);
	return rc;
}

/* The checkpoint dir of job j (NULL: none is written), a new string. */
static char *
ckpt_path(const struct kg_train_job *j)
{
	if (j->no_checkpoint)
		return NULL;
	return kg_train_job_ckpt(j);
}

/* Nothing this run writes may be or hold the dataset. */
static int
check_paths(const struct kg_train_job *j)
{
	char *ckpt = ckpt_path(j);
	int rc = kg_modeldir_check_paths(j->output, ckpt, NULL, &j->dataset,
	    1);

	free(ckpt);
	return rc;
}

/* Options, output and the place for the checkpoint, before any work. */
static int
check_job(const struct kg_train_opts *o, const struct kg_train_job *j)
{
	if (kg_train_opts_check(o) < 0 || kg_train_job_check(o, j) < 0)
		return -1;
	if (j->one_vs_all_plateau > 0 && (o->use_types || o->neg_in_batch)) {
		kg_error("--one_vs_all_plateau and %s cannot be combined",
		    o->use_types ? "--neg_types" : "--neg_in_batch");
		return -1;
	}
	if (j->follower)
		return 0;
	if (check_paths(j) < 0)
		return -1;
	if (!j->force && kg_path_exists(j->output)) {
		kg_error("output '%s' exists; use --force to replace it",
		    j->output);
		return -1;
	}
	return check_parent(j->output, "output");
}

/* The loop's options from the job's; the trainer saves its state. */
static void
epochs_init(struct job *b)
{
	const struct kg_train_job *j = b->j;
	struct kg_epochs_opts eo = {
		.epochs = b->o->epochs, .max_step = b->o->max_step,
		.valid_every = j->valid_every, .patience = j->patience,
		.plateau = j->one_vs_all_plateau, .target_mrr = j->target_mrr,
		.time_budget = j->time_budget, .show = b->show
	};

	kg_epochs_init(&b->ep, &eo);
}

/* The engine of the run (kge/engine.h), once the trainer holds its
 * start; 0 or -1. */
static int
open_engine(struct job *b)
{
	const struct kg_train_job *j = b->j;
	struct kg_engine_run r = KG_ENGINE_RUN_INIT;

	r.o = &b->tr.o;
	r.shape = KG_SHAPE_TABLE;
	r.on_device = j->device.kind != KG_DEVICE_CPU || j->seam;
	r.device = j->device;
	r.frozen = b->tr.frozen_ent != NULL || b->tr.frozen_rel != NULL;
	b->eng = kg_train_engine_open(&r, &b->tr, b->show);
	return b->eng == NULL ? -1 : 0;
}

static void
job_release(struct job *b)
{
	kg_engine_free(b->eng);
	kg_epochs_release(&b->ep);
	free(b->ckpt);
	json_decref(b->config);
	kg_filter_release(&b->filter);
	kg_trainer_release(&b->tr);
	kg_dataset_release(&b->ds);
}

int
kg_train_run(const struct kg_train_opts *o, const struct kg_train_job *j)
{
	struct job b;
	json_t *dicts;
	int rc;

	memset(&b, 0, sizeof(b));
	if (check_job(o, j) < 0)
		return -1;
	b.o_run = *o;
	if (j->one_vs_all_plateau > 0)
		b.o_run.one_vs_all_after = KG_ONE_VS_ALL_LATER;
	b.o = &b.o_run;
	b.j = j;
	b.ds = (struct kg_dataset)KG_DATASET_INIT;
	b.filter = (struct kg_filter)KG_FILTER_INIT;
	b.writes = !j->follower;
	b.show = !j->quiet && !j->follower;
	b.progress = b.show && (j->progress || isatty(2));
	epochs_init(&b);
	b.config = opts_json(b.o, j);
	rc = load_dataset(&b);
	if (rc == 0 && (dicts = kg_dataset_dicts(&b.ds.manifest)) != NULL)
		json_object_set_new(b.config, "dictionaries", dicts);
	if (rc == 0)
		rc = init_trainer(&b) < 0 || kg_warmstart_run(&b.tr, &b.ds,
		    NULL, j->warm, b.config, b.show) < 0 || (b.tr.ep = &b.ep,
		    resume(&b) < 0) ||
		    (j->after_init != NULL && j->after_init(j->hook_ctx,
		    &b.tr) < 0) || open_engine(&b) < 0 ? -1 : 0;
	if (rc == 0) {
		b.tr.progress = b.progress;
		if (j->valid_every > 0)
			kg_filter_build(&b.filter, b.ds.split, KG_NSPLITS);
		rc = (kg_warmstart_trains(j->warm) && run_epochs(&b) < 0) ||
		    (b.writes && write_model(&b) < 0) ? -1 : 0;
	}
	if (rc == 0 && b.writes && !j->no_checkpoint && !j->keep_checkpoint &&
	    j->checkpoint_dir == NULL && kg_path_exists(b.ckpt))
		kg_rmtree(b.ckpt);
	job_release(&b);
	return rc;
}
