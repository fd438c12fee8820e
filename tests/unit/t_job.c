/*
 * Unit tests for lib/app/job: the known positives with and without their
 * inverses, a driver's embedded job read through both names, the
 * checkpoint path, the shared config keys, and the epoch loop's dispatch
 * to a driver's ops (train, save, figures; none with --no_checkpoint).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/job.h"
#include "core/util.h"
#include "test.h"

static void
t_known(void)
{
	static const int32_t hrt[] = { 0, 0, 1, 2, 1, 3 };
	struct kg_train_opts o = KG_TRAIN_OPTS_INIT;
	uint64_t nk = 99;
	int32_t *k;

	o.filter_negatives = 0;
	k = kg_job_known(&o, hrt, 2, 5, &nk);
	T_CHECK(k != NULL && nk == 0);
	free(k);
	o.filter_negatives = 1;
	o.reciprocal = 0;
	k = kg_job_known(&o, hrt, 2, 5, &nk);
	T_CHECK(nk == 2 && memcmp(k, hrt, sizeof(hrt)) == 0);
	free(k);
	o.reciprocal = 1;
	k = kg_job_known(&o, hrt, 2, 5, &nk);
	T_CHECK(nk == 4 && memcmp(k, hrt, sizeof(hrt)) == 0);
	/* (t, r + n_relations, h) for each. */
	T_CHECK(k[6] == 1 && k[7] == 5 && k[8] == 0);
	T_CHECK(k[9] == 3 && k[10] == 6 && k[11] == 2);
	free(k);
}

struct driver {
	KG_JOB_EMBED;
	int own;
	int trained, saved, figured;
};

static void
t_embed(void)
{
	struct driver v;

	memset(&v, 0, sizeof(v));
	T_CHECK(offsetof(struct driver, job) == 0);
	T_CHECK((void *)&v.tr == (void *)&v.job.tr);
	T_CHECK((void *)&v.ctx == (void *)&v.job.ctx);
	T_CHECK((void *)&v.filter == (void *)&v.job.filter);
	v.tr.epoch = 7;
	v.job.ckpt = (char *)"x";
	T_CHECK(v.job.tr.epoch == 7 && v.ckpt == v.job.ckpt);
	T_CHECK((void *)&v.own > (void *)&v.job.ctx);
}

static void
t_ckpt_path(void)
{
	struct kg_train_job j = KG_TRAIN_JOB_INIT;
	char *p;

	j.output = "dir/model";
	p = kg_train_job_ckpt(&j);
	T_CHECK(strcmp(p, "dir/model.ckpt") == 0);
	free(p);
	j.checkpoint_dir = "elsewhere";
	p = kg_train_job_ckpt(&j);
	T_CHECK(strcmp(p, "elsewhere") == 0);
	free(p);
}

static void
t_config(void)
{
	static const char *keys[] = { "loss", "margin",
	    "adversarial_temperature", "batch_size", "neg_sample_size",
	    "neg_degree_fraction", "neg_in_batch", "lr", "rel_optimizer",
	    "regularization_coef", "regularization_norm", "epochs", "seed",
	    "num_thread" };
	struct kg_train_opts o = KG_TRAIN_OPTS_INIT;
	json_t *c;
	size_t i;

	o.batch_size = 77;
	o.seed = 5;
	c = kg_job_config(&o);
	T_CHECK(json_object_size(c) == KG_ARRAY_LEN(keys));
	for (i = 0; i < KG_ARRAY_LEN(keys); i++)
		T_CHECKF(json_object_get(c, keys[i]) != NULL, "%s", keys[i]);
	T_CHECK(json_integer_value(json_object_get(c, "batch_size")) == 77);
	T_CHECK(json_integer_value(json_object_get(c, "seed")) == 5);
	json_decref(c);
}

static int
fake_train(void *ctx, struct kg_epoch_report *r)
{
	struct driver *v = ctx;

	v->trained++;
	v->tr.epoch++;
	v->tr.step += 3;
	v->tr.last_loss = 1.0 / v->tr.epoch;
	r->trained = 10;
	r->whole = 1;
	r->seconds = 0.0;
	return 0;
}

static int
fake_save(void *ctx)
{
	struct driver *v = ctx;

	v->saved++;
	return 0;
}

static void
fake_figures(void *ctx, const struct kg_epoch_report *r, char **json,
    char **text)
{
	struct driver *v = ctx;

	(void)r;
	v->figured++;
	*json = NULL;
	*text = NULL;
}

static void
t_epochs_dispatch(void)
{
	static const struct kg_job_ops ops = {
		.train = fake_train, .save = fake_save,
		.figures = fake_figures
	};
	struct kg_train_opts o = KG_TRAIN_OPTS_INIT;
	struct kg_train_job j = KG_TRAIN_JOB_INIT;
	struct driver v;
	int nockpt;

	o.epochs = 4;
	for (nockpt = 0; nockpt <= 1; nockpt++) {
		memset(&v, 0, sizeof(v));
		j.no_checkpoint = nockpt;
		kg_job_init(&v.job, &o, &j, 0, &ops, &v);
		T_CHECK(kg_job_epochs(&v.job) == 0);
		T_CHECK(v.trained == 4 && v.tr.epoch == 4);
		T_CHECK(v.saved == (nockpt ? 0 : 4));
		T_CHECK(v.figured == 4);
		T_CHECK(v.ep.stopped_by != NULL &&
		    strcmp(v.ep.stopped_by, "epochs") == 0);
		kg_job_release(&v.job);
	}
}

int
main(void)
{
	kg_setprogname("t_job");
	T_RUN(t_known);
	T_RUN(t_embed);
	T_RUN(t_ckpt_path);
	T_RUN(t_config);
	T_RUN(t_epochs_dispatch);
	return T_DONE();
}
