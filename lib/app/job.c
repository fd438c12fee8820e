/*
 * job: the set-up steps, epoch hooks and figures of kg-train's shallow
 * drivers; see job.h.
 */
#include "app/job.h"

#include <sys/stat.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compute/backend.h"
#include "core/util.h"
#include "kge/warmstart.h"

void
kg_job_init(struct kg_job *b, const struct kg_train_opts *o,
    const struct kg_train_job *j, int show, const struct kg_job_ops *ops,
    void *ctx)
{
	struct kg_epochs_opts eo = {
		.epochs = o->epochs, .max_step = o->max_step,
		.valid_every = j->valid_every, .patience = j->patience,
		.plateau = j->one_vs_all_plateau, .target_mrr = j->target_mrr,
		.time_budget = j->time_budget, .show = show
	};

	memset(b, 0, sizeof(*b));
	b->o = o;
	b->j = j;
	b->ds = (struct kg_dataset)KG_DATASET_INIT;
	b->filter = (struct kg_filter)KG_FILTER_INIT;
	b->show = show;
	b->progress = show && (j->progress || isatty(2));
	b->steps = &b->tr.step;
	b->ops = ops;
	b->ctx = ctx;
	kg_epochs_init(&b->ep, &eo);
}

void
kg_job_release(struct kg_job *b)
{
	int own = b->st != NULL && !b->tr.own_store;

	kg_engine_free(b->eng);
	b->eng = NULL;
	kg_trainer_release(&b->tr);
	if (own)
		kg_store_free(b->st);
	b->st = NULL;
	kg_dataset_release(&b->ds);
	kg_epochs_release(&b->ep);
	kg_filter_release(&b->filter);
	free(b->valid_own);
	b->valid_own = NULL;
	free(b->ckpt);
	b->ckpt = NULL;
	json_decref(b->config);
	b->config = NULL;
}

char *
kg_train_job_ckpt(const struct kg_train_job *j)
{
	return j->checkpoint_dir ? kg_xstrdup(j->checkpoint_dir) :
	    kg_xasprintf("%s.ckpt", j->output);
}

/* The directory that will hold path is one this process can add an
 * entry to; 0, or -1 after kg_error() naming it. */
static int
check_parent(const char *path, const char *what)
{
	char *dir = kg_path_parent(path);
	struct stat st;
	int rc = -1;

	if (stat(dir, &st) != 0)
		;
	else if (!S_ISDIR(st.st_mode))
		errno = ENOTDIR;
	else if (access(dir, W_OK | X_OK) == 0)
		rc = 0;
	if (rc < 0)
		kg_error_errno("cannot write the %s into '%s'", what, dir);
	free(dir);
	return rc;
}

int
kg_job_check_parents(const char *output, const char *ckpt)
{
	if (check_parent(output, "output") < 0 ||
	    (ckpt != NULL && check_parent(ckpt, "checkpoint") < 0))
		return -1;
	return 0;
}

int
kg_job_check_output(const struct kg_train_job *j, const char *swap_dir,
    const char *const *inputs, size_t n)
{
	char *ckpt = j->no_checkpoint ? NULL : kg_train_job_ckpt(j);
	int rc = kg_modeldir_check_paths(j->output, ckpt, swap_dir, inputs, n);

	if (rc == 0 && !j->force && kg_path_exists(j->output)) {
		kg_error("output '%s' exists; use --force to replace it",
		    j->output);
		rc = -1;
	}
	if (rc == 0)
		rc = kg_job_check_parents(j->output, ckpt);
	free(ckpt);
	return rc;
}

int
kg_job_check_valid(const struct kg_job *b)
{
	if (b->j->valid_every > 0 && b->ds.split[KG_SPLIT_VALID].n == 0) {
		kg_error("dataset '%s' has no valid triples for early "
		    "stopping", b->j->dataset);
		return -1;
	}
	return 0;
}

int
kg_job_check_types(const struct kg_job *b)
{
	if (b->o->use_types && b->ds.types == NULL) {
		kg_error("--neg_types: dataset '%s' has no entity types",
		    b->j->dataset);
		return -1;
	}
	return 0;
}

json_t *
kg_job_config(const struct kg_train_opts *o)
{
	json_t *c = json_object();

	json_object_set_new(c, "loss", json_string(kg_loss_name(o->loss.kind)));
	json_object_set_new(c, "margin", json_real(o->loss.margin));
	json_object_set_new(c, "adversarial_temperature",
	    json_real(o->loss.adv_temp));
	json_object_set_new(c, "batch_size", json_integer(o->batch_size));
	json_object_set_new(c, "neg_sample_size",
	    json_integer(o->neg_sample_size));
	json_object_set_new(c, "neg_degree_fraction",
	    json_real(o->degree_frac));
	json_object_set_new(c, "neg_in_batch", json_boolean(o->neg_in_batch));
	json_object_set_new(c, "lr", json_real(o->lr));
	json_object_set_new(c, "rel_optimizer",
	    json_string(kg_optim_name(o->rel_optim)));
	json_object_set_new(c, "regularization_coef", json_real(o->reg_coef));
	json_object_set_new(c, "regularization_norm",
	    json_integer(o->reg_norm));
	json_object_set_new(c, "epochs", json_integer(o->epochs));
	json_object_set_new(c, "seed", json_integer((json_int_t)o->seed));
	json_object_set_new(c, "num_thread", json_integer(o->threads));
	return c;
}

void
kg_job_config_dicts(json_t *c, const struct kg_dataset *ds)
{
	json_t *dicts = kg_dataset_dicts(&ds->manifest);

	if (dicts != NULL)
		json_object_set_new(c, "dictionaries", dicts);
}

int
kg_job_resume_changes(struct kg_job *b)
{
	json_t *old = kg_ckpt_config(b->ckpt), *changes;
	char *what = kg_xasprintf("checkpoint '%s'", b->ckpt), *line;
	int rc = kg_dataset_check_dicts(json_object_get(old, "dictionaries"),
	    &b->ds, what);

	free(what);
	if (rc == 0) {
		kg_ckpt_carry_start(old, b->config);
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

void
kg_job_say_resumed(const struct kg_job *b)
{
	if (b->show)
		fprintf(stderr, "%s: resuming after epoch %u from '%s'\n",
		    kg_progname(), b->tr.epoch, b->ckpt);
}

void
kg_job_say_no_ckpt(const struct kg_job *b)
{
	if (!b->j->quiet)
		kg_warn("no checkpoint '%s' to resume from; starting afresh",
		    b->ckpt);
}

int
kg_job_warm_start(struct kg_job *b, const int32_t *new2old)
{
	return kg_warmstart_run(&b->tr, &b->ds, new2old, b->j->warm, b->config,
	    b->show);
}

int32_t *
kg_job_known(const struct kg_train_opts *o, const int32_t *hrt, uint64_t n,
    uint64_t n_relations, uint64_t *nk)
{
	uint64_t k = !o->filter_negatives ? 0 : o->reciprocal ? 2 * n : n, i;
	int32_t *known = kg_xmallocarray(3 * k + 3, sizeof(*known));

	if (k > 0)
		memcpy(known, hrt, 3 * n * sizeof(*known));
	for (i = n; i < k; i++) {
		const int32_t *x = hrt + 3 * (i - n);

		known[3 * i] = x[2];
		known[3 * i + 1] = x[1] + (int32_t)n_relations;
		known[3 * i + 2] = x[0];
	}
	*nk = k;
	return known;
}

int
kg_job_open_engine(struct kg_job *b, const struct kg_engine_run *r)
{
	char *line;

	b->eng = kg_engine_open(r, &b->tr);
	if (b->eng == NULL)
		return -1;
	line = kg_engine_says(b->eng);
	if (b->show && line != NULL)
		fprintf(stderr, "%s: %s\n", kg_progname(), line);
	free(line);
	return 0;
}

int
kg_job_valid_mrr(struct kg_job *b, double *mrr)
{
	struct kg_trainer *tr = &b->tr;
	struct kg_modeldir md = KG_MODELDIR_INIT;
	struct kg_eval_opts eo = KG_EVAL_OPTS_INIT;
	struct kg_eval_ranks ranks = KG_EVAL_RANKS_INIT;
	struct kg_metrics m[3];

	md.model = tr->model;
	md.reciprocal = b->o->reciprocal;
	md.n_entities = tr->n_entities;
	md.n_relations = tr->n_relations;
	md.n_rel_rows = tr->n_rel_rows;
	md.ents = b->st;
	md.relations = tr->rel;
	eo.filter = &b->filter;
	eo.threads = (int)tr->nthreads;
	if (kg_eval_rank(&md, &b->valid, &eo, &ranks) < 0)
		return -1;
	kg_eval_metrics(&ranks, &b->valid, -1, KG_TIES_REALISTIC, m);
	*mrr = kg_metrics_mrr(&m[2]);
	kg_eval_ranks_release(&ranks);
	return 0;
}

/* The hooks of the epoch loop (kge/epochs.h); ctx is the job. */
static int
hook_train(void *ctx, struct kg_epoch_report *r)
{
	struct kg_job *b = ctx;

	return b->ops->train(b->ctx, r);
}

static int
hook_valid(void *ctx, double *mrr)
{
	struct kg_job *b = ctx;

	if (b->ops->unpin != NULL)
		b->ops->unpin(b->ctx);
	return kg_job_valid_mrr(b, mrr);
}

static int
hook_snapshot(void *ctx, int back)
{
	struct kg_job *b = ctx;

	if (b->ops->unpin != NULL)
		b->ops->unpin(b->ctx);
	return kg_trainer_snapshot(&b->tr, back);
}

/* The sampled softmax has levelled off: the full one from the next
 * epoch on.  1 when it switched. */
static int
hook_plateau(void *ctx, uint32_t epoch)
{
	struct kg_job *b = ctx;

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
	struct kg_job *b = ctx;

	(void)whole;
	return b->j->no_checkpoint ? 0 : b->ops->save(b->ctx);
}

static void
hook_figures(void *ctx, const struct kg_epoch_report *r, char **json,
    char **text)
{
	struct kg_job *b = ctx;

	b->ops->figures(b->ctx, r, json, text);
}

int
kg_job_epochs(struct kg_job *b)
{
	struct kg_epoch_hooks h = {
		.ctx = b, .train = hook_train, .valid = hook_valid,
		.snapshot = hook_snapshot, .plateau = hook_plateau,
		.save = hook_save,
		.figures = b->ops->figures != NULL ? hook_figures : NULL,
		.epoch = &b->tr.epoch, .step = b->steps,
		.loss = &b->tr.last_loss
	};

	return kg_epochs_run(&b->ep, &h);
}

/* Where the steps of engine e ran, into fig (see kg_job_figures). */
static void
engine_figures(json_t *fig, const struct kg_engine *e,
    const struct kg_train_job *j, int host)
{
	struct kg_backend *be = e != NULL ? kg_engine_backend(e) : NULL;
	char dev[32];
	int i;

	if (be != NULL) {
		struct kg_device d = kg_backend_device(be);

		json_object_set_new(fig, "device", json_string(
		    kg_device_format(&d, dev, sizeof(dev))));
		json_object_set_new(fig, "backend",
		    json_string(kg_backend_name(be)));
		json_object_set_new(fig, "trainer", json_string("device"));
	} else if (host) {
		json_object_set_new(fig, "device", json_string("cpu"));
		json_object_set_new(fig, "backend",
		    json_string(kg_backend_cpu_name()));
	}
	if (j->n_gpus > 0) {
		json_t *a = json_array();

		for (i = 0; i < j->n_gpus; i++) {
			snprintf(dev, sizeof(dev), "cuda:%d", j->gpus[i]);
			json_array_append_new(a, json_string(dev));
		}
		json_object_set_new(fig, "devices", a);
		if (j->gpus_emulated)
			json_object_set_new(fig, "devices_emulated",
			    json_true());
	}
}

json_t *
kg_job_figures(const struct kg_job *b, int host)
{
	const struct kg_epochs *ep = &b->ep;
	json_t *fig = json_object();

	json_object_set_new(fig, "epochs", json_integer(b->tr.epoch));
	json_object_set_new(fig, "steps", json_integer((json_int_t)*b->steps));
	json_object_set_new(fig, "stopped_by", json_string(ep->stopped_by));
	json_object_set_new(fig, "final_loss", json_real(b->tr.last_loss));
	json_object_set_new(fig, "train_seconds", json_real(ep->train_seconds));
	json_object_set_new(fig, "train_triples", json_integer((json_int_t)
	    b->ds.split[KG_SPLIT_TRAIN].n));
	json_object_set_new(fig, "triples_per_second", json_real(
	    ep->train_seconds > 0.0 ? (double)ep->trained /
	    ep->train_seconds : 0.0));
	json_object_set_new(fig, "threads", json_integer(b->tr.nthreads));
	if (ep->best >= 0.0) {
		json_object_set_new(fig, "best_valid_mrr", json_real(ep->best));
		json_object_set_new(fig, "best_epoch",
		    json_integer(ep->best_epoch));
	}
	engine_figures(fig, b->eng, b->j, host);
	return fig;
}

void
kg_job_model_spec(const struct kg_job *b, struct kg_modeldir_spec *s,
    json_t *figures)
{
	memset(s, 0, sizeof(*s));
	s->dir = b->j->output;
	s->force = b->j->force;
	s->argc = b->j->argc;
	s->argv = b->j->argv;
	s->model = &b->tr.model;
	s->reciprocal = b->o->reciprocal;
	s->n_entities = b->tr.n_entities;
	s->n_relations = b->tr.n_relations;
	s->rel = b->tr.rel;
	s->log = b->ep.log.s ? b->ep.log.s : "";
	s->dataset = b->j->dataset;
	s->config = b->config;
	s->figures = figures;
}

void
kg_job_drop_ckpt(const struct kg_job *b)
{
	const struct kg_train_job *j = b->j;

	if (!j->no_checkpoint && !j->keep_checkpoint &&
	    j->checkpoint_dir == NULL && b->ckpt != NULL &&
	    kg_path_exists(b->ckpt))
		kg_rmtree(b->ckpt);
}
