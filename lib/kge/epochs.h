/*
 * epochs: the epoch loop every trainer runs, the shallow one
 * (lib/app/train_run.c) and the GNN's (lib/gnntrain/driver.c) alike.
 *
 * The loop owns what happens between epochs: validation when due (every
 * valid_every epochs and after the last one), the best epoch so far and
 * its parameters (through the trainer's snapshot hook), patience, the
 * target MRR, the time budget, max_step, the training log (one JSON line
 * per epoch), the line on stderr, checkpoints of that state (through the
 * save hook; kg_epochs_state_put and _get read and write the state's keys)
 * and, at the end, the best epoch's parameters put back.  The trainer
 * supplies the epoch itself and the parameters through hooks.
 *
 * Training stops at the first of: epochs completed (when epochs > 0),
 * max_step steps (when max_step > 0), patience validations in a row
 * without a new best, a validation reaching target_mrr, or the training
 * seconds (the epochs' own time, validation excluded, counted on from a
 * resumed checkpoint) reaching time_budget; stopped_by names it
 * ("epochs", "max_step", "early_stopping", "target_mrr",
 * "time_budget").  With plateau > 0, plateau validations in a row without
 * a new best call the plateau hook once (the shallow trainer then starts
 * 1-vs-all) and patience counts afresh.
 *
 * A resumed run continues the best epoch, its parameters (the trainer's
 * checkpoint holds them) and the patience count where the checkpoint left
 * them, so it ends where an uninterrupted run ends.
 */
#ifndef KG_EPOCHS_H
#define KG_EPOCHS_H

#include <stdint.h>

#include <jansson.h>

#include "core/util.h"
#include "io/ckpt.h"

struct kg_epochs_opts {
	uint32_t epochs;	/* last epoch; 0: no limit */
	uint64_t max_step;	/* 0: no limit */
	uint32_t valid_every;	/* 0: no validation */
	uint32_t patience;	/* 0: no early stopping */
	uint32_t plateau;	/* 0: no plateau hook */
	double target_mrr;	/* 0: none */
	double time_budget;	/* seconds; 0: none */
	int show;		/* a line per epoch and the summary on stderr */
};

/*
 * What a shown run prints on stderr (the caller decides whether to show:
 * every run but a quiet one, on rank 0 only, terminal or not; the
 * progress line inside an epoch is the trainer's, on a terminal or with
 * --progress):
 *
 *   kg-train: epoch 3/10: loss 0.41234, 52341 triples/s, 1.2 s, valid MRR 0.3012, eta 8 s
 *   kg-train: stopped by early_stopping after epoch 12, step 2400
 *   kg-train: keeping the parameters of epoch 9 (valid MRR 0.3120)
 *
 * one line an epoch ("/10" without an epoch limit left out, the MRR when
 * validated), then always the line naming the stop (stopped_by, as the
 * manifest records it) and, when anything was validated, the epoch whose
 * parameters the model keeps, the last one included.  The ETA is the
 * epochs left at this run's mean epoch time, never more than the time
 * budget leaves.
 */

#define KG_EPOCHS_OPTS_INIT { .epochs = 0 }

/* What hooks.train says of the epoch it ran. */
struct kg_epoch_report {
	uint64_t trained;	/* positives */
	int whole;		/* it ran to its end (max_step did not cut it) */
	double seconds;		/* its training time, the same on every rank */
};

/*
 * The trainer's side.  Every hook returns 0, or -1 after kg_error().
 *   train     run the next epoch: advance *epoch and *step, set *loss
 *   valid     the filtered valid MRR of the current parameters
 *   snapshot  keep the current parameters as the best (back 0), or put
 *             the kept ones back (back 1)
 *   plateau   (may be NULL) the plateau described above, after epoch
 *   save      (may be NULL) a checkpoint after the epoch, holding the
 *             loop's state (kg_epochs_state_put) and the kept parameters;
 *             whole: the epoch ran to its end
 *   figures   (may be NULL) the trainer's own figures of the epoch just
 *             run: *json gets ", \"key\": value" pairs that end its log
 *             line, *text what its stderr line shows before the ETA
 *             (new strings, or NULL for none; the bucket driver's
 *             traffic and swaps)
 * epoch, step and loss point at the trainer's counters, which the loop
 * reads after each epoch.
 */
struct kg_epoch_hooks {
	void *ctx;
	int (*train)(void *ctx, struct kg_epoch_report *r);
	int (*valid)(void *ctx, double *mrr);
	int (*snapshot)(void *ctx, int back);
	int (*plateau)(void *ctx, uint32_t epoch);
	int (*save)(void *ctx, int whole);
	void (*figures)(void *ctx, const struct kg_epoch_report *r,
	    char **json, char **text);
	const uint32_t *epoch;
	const uint64_t *step;
	const double *loss;
};

struct kg_epochs {
	struct kg_epochs_opts o;
	/* State kept in checkpoints. */
	double best;		/* best valid MRR; < 0: none yet */
	uint32_t best_epoch;	/* whose parameters the snapshot holds */
	uint32_t bad_rounds;	/* validations since the best (or plateau) */
	double train_seconds;	/* all epochs, resumed ones included */
	uint64_t trained;	/* positives, all epochs */
	/* This run. */
	const char *stopped_by;	/* static string, NULL while running */
	uint32_t ran;		/* epochs run in this process */
	double run_seconds;	/* their training time */
	struct kg_strbuf log;	/* train_log.jsonl, resumed lines first */
};

void kg_epochs_init(struct kg_epochs *e, const struct kg_epochs_opts *o);

/* The epoch line above on stderr: epochs 0 for no limit, mrr NaN when
 * not validated, extra (may be NULL) a trainer's own figures before the
 * ETA (seconds). */
void kg_epochs_print_line(uint32_t epoch, uint32_t epochs, double loss,
    double tps, double seconds, double mrr, const char *extra, double eta);
void kg_epochs_release(struct kg_epochs *e);

/*
 * Run epochs until a stop above; then, when a snapshot is kept and it is
 * not the last epoch's, put it back.  0, or -1 when a hook failed.
 */
int kg_epochs_run(struct kg_epochs *e, const struct kg_epoch_hooks *h);

/* Add the state's keys (best_valid_mrr, best_epoch, bad_rounds,
 * train_seconds, trained) to a checkpoint's state object. */
void kg_epochs_state_put(const struct kg_epochs *e, json_t *state);

/* Read them back from a checkpoint (absent keys, as in older
 * checkpoints: no best, patience from zero); returns 1 when the
 * checkpoint holds a best epoch, whose parameters the trainer then reads
 * too, else 0. */
int kg_epochs_state_get(struct kg_epochs *e, const struct kg_ckpt *c);

#endif
