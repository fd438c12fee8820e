/*
 * epochs: the epoch loop every trainer runs; see epochs.h.
 */
#include "kge/epochs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
kg_epochs_init(struct kg_epochs *e, const struct kg_epochs_opts *o)
{
	memset(e, 0, sizeof(*e));
	e->o = *o;
	e->best = -1.0;
}

void
kg_epochs_release(struct kg_epochs *e)
{
	free(e->log.s);
	e->log.s = NULL;
	e->log.len = e->log.cap = 0;
}

static int
valid_due(const struct kg_epochs *e, uint32_t epoch)
{
	return e->o.valid_every > 0 && (epoch % e->o.valid_every == 0 ||
	    epoch == e->o.epochs);
}

/* Validate when due and track the best epoch; *mrr gets the MRR (NaN when
 * not validated).  A new best reaching the target, or patience running
 * out, sets stopped_by. */
static int
validate(struct kg_epochs *e, const struct kg_epoch_hooks *h, double *mrr)
{
	uint32_t epoch = *h->epoch;

	*mrr = NAN;
	if (!valid_due(e, epoch))
		return 0;
	if (h->valid(h->ctx, mrr) < 0)
		return -1;
	if (*mrr > e->best) {
		e->best = *mrr;
		e->best_epoch = epoch;
		e->bad_rounds = 0;
		if (e->o.target_mrr > 0.0 && *mrr >= e->o.target_mrr)
			e->stopped_by = "target_mrr";
		return h->snapshot(h->ctx, 0);
	}
	++e->bad_rounds;
	if (e->o.plateau > 0 && h->plateau != NULL &&
	    e->bad_rounds >= e->o.plateau) {
		int rc = h->plateau(h->ctx, epoch);

		if (rc != 0)
			return rc < 0 ? -1 : (e->bad_rounds = 0, 0);
	}
	if (e->o.patience > 0 && e->bad_rounds >= e->o.patience)
		e->stopped_by = "early_stopping";
	return 0;
}

/* Seconds left: the epochs left at the mean epoch time of this run, and
 * no more than the time budget leaves. */
static double
eta(const struct kg_epochs *e, uint32_t epoch)
{
	double mean = e->run_seconds / (double)(e->ran ? e->ran : 1);
	double left = e->o.epochs > epoch ? mean * (double)(e->o.epochs -
	    epoch) : 0.0;

	if (e->o.time_budget > 0.0) {
		double budget = e->o.time_budget - e->train_seconds;

		if (budget < 0.0)
			budget = 0.0;
		if (e->o.epochs == 0 || budget < left)
			left = budget;
	}
	return left;
}

/* The epoch's line in the training log, and on stderr when shown, with
 * the trainer's own figures at the end. */
static void
log_epoch(struct kg_epochs *e, const struct kg_epoch_hooks *h,
    const struct kg_epoch_report *r, double mrr)
{
	double tps = r->seconds > 0.0 ? (double)r->trained / r->seconds : 0.0;
	char *json = NULL, *text = NULL;
	char *line = kg_xasprintf("{\"epoch\": %u, \"step\": %llu, "
	    "\"loss\": %.9g, \"seconds\": %.3f, \"triples_per_second\": "
	    "%.1f", *h->epoch, (unsigned long long)*h->step, *h->loss,
	    r->seconds, tps);

	kg_strbuf_add(&e->log, line);
	free(line);
	if (!isnan(mrr)) {
		line = kg_xasprintf(", \"valid_mrr\": %.6f", mrr);
		kg_strbuf_add(&e->log, line);
		free(line);
	}
	if (h->figures != NULL)
		h->figures(h->ctx, r, &json, &text);
	if (json != NULL)
		kg_strbuf_add(&e->log, json);
	kg_strbuf_add(&e->log, "}\n");
	if (e->o.show)
		kg_epochs_print_line(*h->epoch, e->o.epochs, *h->loss, tps,
		    r->seconds, mrr, text, eta(e, *h->epoch));
	free(json);
	free(text);
}

void
kg_epochs_print_line(uint32_t epoch, uint32_t epochs, double loss,
    double tps, double seconds, double mrr, const char *extra, double eta)
{
	char total[16] = "";

	if (epochs > 0)
		snprintf(total, sizeof(total), "/%u", epochs);
	fprintf(stderr, "%s: epoch %u%s: loss %.5f, %.0f triples/s, %.1f s",
	    kg_progname(), epoch, total, loss, tps, seconds);
	if (!isnan(mrr))
		fprintf(stderr, ", valid MRR %.4f", mrr);
	if (extra != NULL)
		fprintf(stderr, ", %s", extra);
	fprintf(stderr, ", eta %.0f s\n", eta);
}

static int
more(const struct kg_epochs *e, const struct kg_epoch_hooks *h)
{
	return e->stopped_by == NULL && (e->o.epochs == 0 ||
	    *h->epoch < e->o.epochs) && (e->o.max_step == 0 ||
	    *h->step < e->o.max_step);
}

/* One epoch with its validation, stops, log line and checkpoint. */
static int
run_epoch(struct kg_epochs *e, const struct kg_epoch_hooks *h)
{
	struct kg_epoch_report r = { 0, 1, 0.0 };
	double mrr;

	if (h->train(h->ctx, &r) < 0)
		return -1;
	e->ran++;
	e->run_seconds += r.seconds;
	e->train_seconds += r.seconds;
	e->trained += r.trained;
	if (validate(e, h, &mrr) < 0)
		return -1;
	if (e->stopped_by == NULL && e->o.time_budget > 0.0 &&
	    e->train_seconds >= e->o.time_budget)
		e->stopped_by = "time_budget";
	if (e->stopped_by == NULL && e->o.max_step > 0 &&
	    *h->step >= e->o.max_step && (!r.whole || e->o.epochs == 0 ||
	    *h->epoch < e->o.epochs))
		e->stopped_by = "max_step";
	log_epoch(e, h, &r, mrr);
	return h->save != NULL ? h->save(h->ctx, r.whole) : 0;
}

int
kg_epochs_run(struct kg_epochs *e, const struct kg_epoch_hooks *h)
{
	while (more(e, h))
		if (run_epoch(e, h) < 0)
			return -1;
	if (e->stopped_by == NULL)
		e->stopped_by = e->o.max_step > 0 && *h->step >= e->o.max_step &&
		    (e->o.epochs == 0 || *h->epoch < e->o.epochs) ?
		    "max_step" : "epochs";
	if (e->o.show)
		fprintf(stderr, "%s: stopped by %s after epoch %u, step %llu\n",
		    kg_progname(), e->stopped_by, *h->epoch,
		    (unsigned long long)*h->step);
	if (e->best >= 0.0 && e->best_epoch != *h->epoch &&
	    h->snapshot(h->ctx, 1) < 0)
		return -1;
	if (e->best >= 0.0 && e->o.show)
		fprintf(stderr, "%s: keeping the parameters of epoch %u (valid "
		    "MRR %.4f)\n", kg_progname(), e->best_epoch, e->best);
	return 0;
}

void
kg_epochs_state_put(const struct kg_epochs *e, json_t *state)
{
	json_object_set_new(state, "train_seconds",
	    json_real(e->train_seconds));
	json_object_set_new(state, "trained", json_integer((json_int_t)
	    e->trained));
	json_object_set_new(state, "bad_rounds", json_integer(e->bad_rounds));
	if (e->best < 0.0)
		return;
	json_object_set_new(state, "best_valid_mrr", json_real(e->best));
	json_object_set_new(state, "best_epoch", json_integer(e->best_epoch));
}

int
kg_epochs_state_get(struct kg_epochs *e, const struct kg_ckpt *c)
{
	e->train_seconds = kg_ckpt_real(c, "train_seconds");
	e->trained = kg_ckpt_u64(c, "trained");
	e->bad_rounds = (uint32_t)kg_ckpt_u64(c, "bad_rounds");
	if (json_object_get(c->state, "best_epoch") == NULL) {
		e->best = -1.0;
		return 0;
	}
	e->best = kg_ckpt_real(c, "best_valid_mrr");
	e->best_epoch = (uint32_t)kg_ckpt_u64(c, "best_epoch");
	return 1;
}
