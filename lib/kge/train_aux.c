/*
 * train_aux: the trainer's accuracy options: the
 * relation-prediction term, the checks of DURA's and its models, the
 * learning-rate schedule, the element-wise optimisers of entity rows,
 * and their work buffers.  Left at their defaults, they change nothing
 * in training.
 */
#include "kge/train_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kge/grad.h"
#include "kge/plan.h"
#include "kge/score.h"

int
kg_train_aux_check(const struct kg_train_opts *o)
{
	struct kg_model m;
	enum kg_kern_sim sim;

	memset(&m, 0, sizeof(m));
	m.kind = o->model;
	if (!(o->rel_pred >= 0.0) || !isfinite(o->rel_pred) ||
	    !(o->dura >= 0.0) || !isfinite(o->dura)) {
		kg_error("--rel_pred_weight and --dura_coef must be finite and "
		    "not negative");
		return -1;
	}
	if (o->rel_pred > 0.0 && kg_score_pair_sim(&m, &sim) < 0) {
		kg_error("--rel_pred_weight: %s cannot score every relation of "
		    "a pair (TransE, DistMult, ComplEx and RESCAL can)",
		    kg_model_name(o->model));
		return -1;
	}
	if (!isfinite(o->ova_dura)) {
		kg_error("--one_vs_all_dura must be finite and not negative");
		return -1;
	}
	if ((o->dura > 0.0 || o->ova_dura > 0.0) &&
	    o->model != KG_MODEL_DISTMULT && o->model != KG_MODEL_COMPLEX &&
	    o->model != KG_MODEL_RESCAL) {
		kg_error("%s: DURA is for DistMult, ComplEx and RESCAL, "
		    "not %s", o->dura > 0.0 ? "--dura_coef" :
		    "--one_vs_all_dura", kg_model_name(o->model));
		return -1;
	}
	if (!(o->lr_decay > 0.0 && o->lr_decay <= 1.0)) {
		kg_error("--lr_decay must be in (0, 1]");
		return -1;
	}
	return 0;
}

void
kg_train_aux_alloc(struct kg_train_ws *ws, const struct kg_trainer *tr)
{
	const struct kg_model *m = &tr->model;
	size_t B = ws->B, nr = tr->n_rel_rows, i;

	if (tr->o.rel_pred > 0.0) {
		ws->rp_s = kg_xmallocarray(B * nr, sizeof(float));
		ws->rp_g = kg_xmallocarray(B * nr, sizeof(float));
		ws->rp_work = kg_xmallocarray(kg_grad_relpred_work_size(m, B,
		    nr), sizeof(float));
		ws->rp_grad = kg_xmallocarray(nr * m->rel_width,
		    sizeof(float));
		ws->rp_ids = kg_xmallocarray(nr, sizeof(uint32_t));
		for (i = 0; i < nr; i++)
			ws->rp_ids[i] = (uint32_t)i;
	}
	if (tr->o.dura > 0.0 || tr->o.ova_dura > 0.0)
		ws->dura_work = kg_xmallocarray(kg_grad_dura_work_size(m),
		    sizeof(float));
}

void
kg_train_aux_free(struct kg_train_ws *ws)
{
	free(ws->rp_s);
	free(ws->rp_g);
	free(ws->rp_work);
	free(ws->rp_grad);
	free(ws->rp_ids);
	free(ws->dura_work);
}

void
kg_train_optim_row(enum kg_optim_kind kind, float *w, float *state,
    const float *g, size_t n, float lr)
{
	struct kg_adam a = KG_ADAM_INIT;

	if (kind == KG_OPTIM_ADAM) {
		a.lr = lr;
		kg_adam_row(w, state, g, n, &a);
	} else
		kg_adagrad_elem_row(w, state, g, n, lr);
}

float
kg_train_lr(const struct kg_trainer *tr, uint64_t pos, double base)
{
	const struct kg_train_opts *o = &tr->o;
	uint64_t step;
	double f = 1.0;

	if (o->lr_warmup == 0 && o->lr_decay == 1.0)
		return (float)base;
	if (o->lr_decay != 1.0)
		f = pow(o->lr_decay, (double)tr->epoch);
	step = tr->step + pos / o->batch_size;
	if (step < o->lr_warmup)
		f *= (double)(step + 1) / (double)o->lr_warmup;
	return (float)(base * f);
}

double
kg_train_relpred(struct kg_trainer *tr, struct kg_train_ws *ws,
    const struct kg_chunk *ch)
{
	const struct kg_model *m = &tr->model;
	size_t B = ch->len, nr = tr->n_rel_rows, i;
	int tail = ch->side == KG_SIDE_TAIL;
	const float *h = tail ? ws->fixed : ws->posc;
	const float *t = tail ? ws->posc : ws->fixed;
	float *gh = tail ? ws->gfixed : ws->gposc;
	float *gt = tail ? ws->gposc : ws->gfixed;
	float scale = (float)(tr->o.rel_pred / (double)ch->whole);
	double loss = 0.0;

	kg_grad_relpred_forward(m, B, h, t, tr->rel, nr, ws->rp_s,
	    ws->rp_work);
	for (i = 0; i < B; i++)
		loss += kg_loss_softmax_xent(ws->rp_s + i * nr, nr,
		    (size_t)ws->plan->tri[3 * i + 1], scale, ws->rp_g + i * nr);
	kg_grad_relpred_backward(m, B, h, t, tr->rel, nr, ws->rp_g, gh, gt,
	    ws->rp_grad, ws->rp_work);
	return tr->o.rel_pred * loss;
}

double
kg_train_dura(const struct kg_trainer *tr)
{
	return tr->ova && tr->o.ova_dura >= 0.0 ? tr->o.ova_dura : tr->o.dura;
}
