/*
 * The device trainer (lib/kge/train_device.h) on the CPU backend against
 * the CPU trainer (kg_trainer_epoch, one thread) at the same settings and
 * seed, on the bundled UMLS data: the same epoch order and negatives, so
 * after one epoch the tables agree within rounding, and after a few the
 * filtered test MRR agrees within 0.005 (0.01 for TransE_l1, tol below);
 * the loss decreases; the options
 * the device trainer does not take are refused, one line each.
 */
#include <unistd.h>
#include <zlib.h>

#include "compute/backend.h"
#include "eval/eval.h"
#include "kge/modeldir.h"
#include "kge/train_device.h"
#include "kge/train_impl.h"
#include "core/util.h"
#include "test.h"

#include "umls_fixture.h"

static struct kg_backend *cpu;

/* Train o->epochs epochs on the CPU (dev 0) or through the seam (dev 1);
 * *first gets the first epoch's mean loss. */
static int
train_umls(struct kg_trainer *tr, const struct kg_train_opts *o, int dev,
    double *first)
{
	struct kg_dev_trainer *dt = NULL;
	uint64_t done;
	uint32_t e;
	int rc = 0;

	if (kg_trainer_init(tr, o, umls.ent.n, umls.rel.n, umls.split[0],
	    umls.n[0], umls.split[0], umls.n[0], NULL, 0) < 0)
		return -1;
	if (dev && (dt = kg_dev_trainer_open(tr, cpu)) == NULL)
		return -1;
	for (e = 0; rc == 0 && e < o->epochs; e++) {
		rc = dev ? kg_dev_trainer_epoch(dt, umls.split[0], umls.n[0],
		    &done) : kg_trainer_epoch(tr, umls.split[0], umls.n[0],
		    &done);
		if (e == 0)
			*first = tr->last_loss;
	}
	if (dev) {
		if (rc == 0)
			rc = kg_dev_trainer_download(dt);
		kg_dev_trainer_free(dt);
	}
	return rc;
}

/* The largest |a - b| / max(1, |b|) over the two trainers' entity rows
 * and relation rows. */
static double
table_diff(struct kg_trainer *a, struct kg_trainer *b)
{
	const struct kg_store_part *pa = kg_store_acquire(a->ents, 0);
	const struct kg_store_part *pb = kg_store_acquire(b->ents, 0);
	size_t ne = a->n_entities * a->model.dim, i;
	size_t nr = a->n_rel_rows * a->model.rel_width;
	double worst = 0.0, x;

	for (i = 0; i < ne; i++) {
		x = fabs((double)pa->w[i] - pb->w[i]) / fmax(1.0, fabs(pb->w[i]));
		worst = x > worst || x != x ? x : worst;
	}
	for (i = 0; i < nr; i++) {
		x = fabs((double)a->rel[i] - b->rel[i]) /
		    fmax(1.0, fabs(b->rel[i]));
		worst = x > worst || x != x ? x : worst;
	}
	kg_store_release(a->ents, 0, 0);
	kg_store_release(b->ents, 0, 0);
	return worst;
}

/* UMLS settings of t_train.c: every shallow model. */
static const struct {
	enum kg_model_kind kind;
	uint32_t dim;
	double gamma;
	enum kg_loss_kind loss;
	double adv;
	uint32_t epochs;
} cases[] = {
	{ KG_MODEL_DISTMULT, 64, 0.0, KG_LOSS_LOGISTIC, 0.0, 8 },
	{ KG_MODEL_COMPLEX, 64, 0.0, KG_LOSS_LOGISTIC, 0.0, 8 },
	{ KG_MODEL_TRANSE_L2, 32, 6.0, KG_LOSS_LOGISTIC, 1.0, 8 },
	{ KG_MODEL_TRANSE_L1, 32, 6.0, KG_LOSS_LOGISTIC, 1.0, 6 },
	{ KG_MODEL_ROTATE, 32, 6.0, KG_LOSS_LOGISTIC, 1.0, 6 },
	{ KG_MODEL_RESCAL, 32, 0.0, KG_LOSS_LOGISTIC, 0.0, 6 },
	{ KG_MODEL_TRANSR, 32, 6.0, KG_LOSS_LOGISTIC, 1.0, 6 },
};

/*
 * How far the MRRs may be apart: 0.005, and 0.01 for TransE_l1, whose
 * subgradient (the sign of each difference) flips where rounding moves a
 * difference across 0, so that runs which differ in the last bits part
 * further: the CPU trainer alone moved by 0.0014 between -O2 and the
 * sanitizer build's -O1, and the two trainers were 0.0019 apart at -O2,
 * 0.0073 at -O1 (6 epochs).
 */
static double
tol(enum kg_model_kind k)
{
	return k == KG_MODEL_TRANSE_L1 ? 0.01 : 0.005;
}

static void
set_case(struct kg_train_opts *o, size_t i)
{
	o->model = cases[i].kind;
	o->dim = cases[i].dim;
	o->gamma = cases[i].gamma;
	o->lr = 0.1;
	o->loss.kind = cases[i].loss;
	o->loss.adv_temp = cases[i].adv;
	o->batch_size = 256;
	o->neg_sample_size = 32;
	o->epochs = cases[i].epochs;
	o->threads = 1;
	/* TransR's relation space narrower than the entities'. */
	if (o->model == KG_MODEL_TRANSR)
		o->rel_dim = 16;
}

/* One epoch: the tables of both trainers agree within rounding. */
static void
t_one_epoch_tables(void)
{
	size_t i;

	if (load_umls() < 0)
		T_SKIP("examples/data/umls not readable");
	for (i = 0; i < KG_ARRAY_LEN(cases); i++) {
		struct kg_train_opts o = KG_TRAIN_OPTS_INIT;
		struct kg_trainer a, b;
		double la, lb, diff;

		set_case(&o, i);
		o.epochs = 1;
		T_CHECK(train_umls(&a, &o, 0, &la) == 0);
		T_CHECK(train_umls(&b, &o, 1, &lb) == 0);
		diff = table_diff(&b, &a);
		fprintf(stderr, "%s: one epoch, loss %.6f (cpu %.6f), tables "
		    "within %.2g\n", kg_model_name(o.model), lb, la, diff);
		T_CHECKF(diff <= 1e-4, "%s: tables %.3g apart",
		    kg_model_name(o.model), diff);
		T_CHECKF(fabs(la - lb) <= 1e-4 * fabs(la), "%s: loss %.7g "
		    "against %.7g", kg_model_name(o.model), lb, la);
		T_CHECK(a.step == b.step && a.epoch == b.epoch);
		kg_trainer_release(&a);
		kg_trainer_release(&b);
	}
}

/* A few epochs: filtered test MRR within 0.005 of the CPU trainer's, and
 * the loss decreasing. */
static void
t_umls_mrr(void)
{
	size_t i;

	if (load_umls() < 0)
		T_SKIP("examples/data/umls not readable");
	for (i = 0; i < KG_ARRAY_LEN(cases); i++) {
		struct kg_train_opts o = KG_TRAIN_OPTS_INIT;
		struct kg_trainer a, b;
		double la, lb, ma, mb;

		set_case(&o, i);
		T_CHECK(train_umls(&a, &o, 0, &la) == 0);
		T_CHECK(train_umls(&b, &o, 1, &lb) == 0);
		ma = test_mrr(&a);
		mb = test_mrr(&b);
		fprintf(stderr, "%s: %u epochs, MRR %.4f (cpu %.4f), loss "
		    "%.4f -> %.4f (cpu %.4f -> %.4f)\n", kg_model_name(o.model),
		    o.epochs, mb, ma, lb, b.last_loss, la, a.last_loss);
		T_CHECKF(fabs(ma - mb) <= tol(o.model), "%s: MRR %.4f against "
		    "%.4f", kg_model_name(o.model), mb, ma);
		T_CHECKF(b.last_loss < 0.9 * lb, "%s: loss %.4f -> %.4f",
		    kg_model_name(o.model), lb, b.last_loss);
		kg_trainer_release(&a);
		kg_trainer_release(&b);
	}
}

/* Options the device trainer does not take: one line each, and nothing
 * opened. */
static void
t_refusals(void)
{
	static const char *const says[] = {
		"1-vs-all (--one_vs_all, --one_vs_all_after) is not",
		"filtered negatives (--neg_filter) is not",
		"in-batch negatives is not",
		"relation prediction is not",
		"DURA is not",
		"subsampling weights is not",
		"gradient clipping (--max_grad_norm) is not",
	};
	size_t i;

	kg_error_mute(1);
	for (i = 0; i < KG_ARRAY_LEN(says); i++) {
		struct kg_train_opts o = KG_TRAIN_OPTS_INIT;

		o.model = KG_MODEL_DISTMULT;
		switch (i) {
		case 0: o.one_vs_all = 1; break;
		case 1: o.filter_negatives = 1; break;
		case 2: o.neg_in_batch = 1; break;
		case 3: o.rel_pred = 0.1; break;
		case 4: o.dura = 0.1; break;
		case 5: o.subsampling = 1; break;
		default: o.clip = 1.0; break;
		}
		T_CHECK(kg_train_device_check(&o) < 0);
		T_CHECKF(strstr(kg_error_last(), says[i]) != NULL, "%s",
		    kg_error_last());
	}
	{
		struct kg_train_opts o = KG_TRAIN_OPTS_INIT;

		T_CHECK(kg_train_device_check(&o) == 0);
	}
	kg_error_mute(0);
}

int
main(void)
{
	struct kg_device d = KG_DEVICE_INIT;

	cpu = kg_backend_open(&d);
	if (cpu == NULL)
		return 1;
	T_RUN(t_one_epoch_tables);
	T_RUN(t_umls_mrr);
	T_RUN(t_refusals);
	kg_backend_free(cpu);
	return T_DONE();
}
