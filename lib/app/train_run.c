/*
 * train_run: kg-train's run of a shallow model over the whole table; see
 * train_run.h.  What it shares with the partitioned run is app/job.h's.
 */
#include "app/train_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "app/job.h"
#include "kge/modeldir.h"
#include "kge/train_impl.h"
#include "kge/warmstart.h"

/* The in-memory run: a job, the options as trained (the plateau switch
 * sets one_vs_all_after later) and whether this process writes (not a
 * follower of lib/dist/ssgd.c). */
struct table_run {
	struct kg_job job;
	struct kg_train_opts o_run;
	int writes;
};

/* The dataset, and what this run needs of it; 0, -1 or KG_ERR_VERSION. */
static int
load_dataset(struct kg_job *b)
{
	int rc = kg_dataset_load(&b->ds, b->j->dataset);

	if (rc < 0)
		return rc;
	if (b->ds.split[KG_SPLIT_TRAIN].n == 0) {
		kg_error("dataset '%s' has no train triples", b->j->dataset);
		return -1;
	}
	if (kg_job_check_valid(b) < 0 || kg_job_check_types(b) < 0)
		return -1;
	b->valid = b->ds.split[KG_SPLIT_VALID];
	kg_job_config_dicts(b->config, &b->ds);
	return 0;
}

/* The trainer, with the known positives for filtering: the train triples
 * and, with reciprocal relations, their inverses. */
static int
init_trainer(struct kg_job *b)
{
	const struct kg_train_opts *o = b->o;
	const struct kg_triples *train = &b->ds.split[KG_SPLIT_TRAIN];
	uint64_t nk;
	int32_t *known = kg_job_known(o, train->hrt, train->n,
	    b->ds.n_relations, &nk);
	int rc;

	rc = kg_trainer_init(&b->tr, o, b->ds.n_entities, b->ds.n_relations,
	    train->hrt, train->n, known, nk, b->ds.types,
	    (uint32_t)b->ds.n_types);
	free(known);
	b->st = b->tr.ents;
	b->tr.ep = &b->ep;
	return rc;
}

/* The checkpoint path, and a resume from it when asked.  A follower gets
 * rank 0's resumed state through after_init. */
static int
resume(struct table_run *t)
{
	struct kg_job *b = &t->job;
	const struct kg_train_job *j = b->j;
	char *old_log = NULL;

	b->ckpt = kg_train_job_ckpt(j);
	if (!j->resume || !t->writes)
		return 0;
	if (!kg_path_exists(b->ckpt)) {
		kg_job_say_no_ckpt(b);
		return 0;
	}
	if (kg_job_resume_changes(b) < 0 ||
	    kg_trainer_load(&b->tr, b->ckpt, &old_log) < 0)
		return -1;
	kg_strbuf_add(&b->ep.log, old_log);
	free(old_log);
	kg_job_say_resumed(b);
	return 0;
}

/* The driver's side of the epoch loop (app/job.h). */
static int
train_epoch(void *ctx, struct kg_epoch_report *r)
{
	struct table_run *t = ctx;
	struct kg_job *b = &t->job;
	const struct kg_train_job *j = b->j;
	const struct kg_triples *train = &b->ds.split[KG_SPLIT_TRAIN];
	double t0 = kg_now();
	uint64_t full = train->n * (b->o->reciprocal ? 2 : 1);

	if (kg_engine_epoch(b->eng, train->hrt, train->n, &r->trained) < 0 ||
	    kg_engine_download(b->eng) < 0)
		return -1;
	if (j->after_epoch != NULL && j->after_epoch(j->hook_ctx, &b->tr) < 0)
		return -1;
	r->seconds = kg_now() - t0;
	r->whole = r->trained >= full;
	return kg_trainer_check_finite(&b->tr);
}

static int
save_ckpt(void *ctx)
{
	struct table_run *t = ctx;
	struct kg_job *b = &t->job;

	if (!t->writes)
		return 0;
	return kg_trainer_save(&b->tr, b->ckpt, b->ep.log.s, b->config,
	    &b->j->dataset, 1);
}

static const struct kg_job_ops table_ops = {
	.train = train_epoch, .save = save_ckpt
};

/* The settings the checkpoints and the model dir record: kg_job_config's
 * and this run's own. */
static json_t *
opts_json(const struct kg_train_opts *o, const struct kg_train_job *j)
{
	json_t *c = kg_job_config(o);

	json_object_set_new(c, "neg_chunk_size", json_integer(o->chunk_size ?
	    o->chunk_size : o->neg_sample_size));
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
	json_object_set_new(c, "ent_optimizer",
	    json_string(kg_optim_name(o->ent_optim)));
	json_object_set_new(c, "rel_lr", json_real(o->rel_lr));
	json_object_set_new(c, "init", json_string(o->init == KG_INIT_NORMAL ?
	    "normal" : "uniform"));
	json_object_set_new(c, "init_scale", json_real(o->init_scale));
	json_object_set_new(c, "max_grad_norm", json_real(o->clip));
	json_object_set_new(c, "max_step", json_integer((json_int_t)
	    o->max_step));
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

/* The model dir (lib/kge/modeldir.h), entity rows streamed from the
 * store. */
static int
write_model(struct kg_job *b)
{
	struct kg_trainer *tr = &b->tr;
	struct kg_modeldir_spec s;
	struct kg_modeldir_writer w;
	json_t *fig = kg_job_figures(b, 1);
	int rc;

	if (b->j->one_vs_all_plateau > 0)
		json_object_set_new(fig, "one_vs_all_after",
		    tr->o.one_vs_all_after == KG_ONE_VS_ALL_LATER ?
		    json_null() : json_integer(tr->o.one_vs_all_after));
	kg_job_model_spec(b, &s, fig);
	s.state_width = tr->ents->state_width;
	s.rel_state = tr->rel_state;
	s.rel_state_width = tr->rel_state_width;
	rc = kg_modeldir_begin(&w, &s);
	if (rc == 0 && kg_store_write(tr->ents, &w.table) < 0) {
		kg_modeldir_abort(&w);
		rc = -1;
	}
	if (rc == 0)
		rc = kg_modeldir_commit(&w);
	json_decref(fig);
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
	return kg_job_check_output(j, NULL, &j->dataset, 1);
}

/* The engine of the run (kge/engine.h), once the trainer holds its
 * start; 0 or -1. */
static int
open_engine(struct kg_job *b)
{
	const struct kg_train_job *j = b->j;
	struct kg_engine_run r = KG_ENGINE_RUN_INIT;

	r.o = &b->tr.o;
	r.shape = KG_SHAPE_TABLE;
	r.on_device = j->device.kind != KG_DEVICE_CPU || j->seam;
	r.device = j->device;
	return kg_job_open_engine(b, &r);
}

/* Set up, resume, open the engine, train and write; 0 or -1. */
static int
run(struct table_run *t)
{
	struct kg_job *b = &t->job;
	const struct kg_train_job *j = b->j;
	int rc = load_dataset(b);

	if (rc < 0)
		return rc;
	if (init_trainer(b) < 0 || kg_job_warm_start(b, NULL) < 0 ||
	    resume(t) < 0 || (j->after_init != NULL &&
	    j->after_init(j->hook_ctx, &b->tr) < 0) || open_engine(b) < 0)
		return -1;
	b->tr.progress = b->progress;
	if (j->valid_every > 0)
		kg_filter_build(&b->filter, b->ds.split, KG_NSPLITS);
	if ((kg_warmstart_trains(j->warm) && kg_job_epochs(b) < 0) ||
	    (t->writes && write_model(b) < 0))
		return -1;
	if (t->writes)
		kg_job_drop_ckpt(b);
	return 0;
}

int
kg_train_run(const struct kg_train_opts *o, const struct kg_train_job *j)
{
	struct table_run t;
	int rc;

	if (check_job(o, j) < 0)
		return -1;
	memset(&t, 0, sizeof(t));
	t.o_run = *o;
	if (j->one_vs_all_plateau > 0)
		t.o_run.one_vs_all_after = KG_ONE_VS_ALL_LATER;
	t.writes = !j->follower;
	kg_job_init(&t.job, &t.o_run, j, !j->quiet && !j->follower,
	    &table_ops, &t);
	t.job.config = opts_json(&t.o_run, j);
	rc = run(&t);
	kg_job_release(&t.job);
	return rc;
}
