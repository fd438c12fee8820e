/*
 * train_buckets_loop: the bucket driver's side of the epoch loop (kge/epochs.h):
 * its epoch, validation through the store (one process), the best
 * epoch's snapshot, checkpoints and the epoch line's figures.
 */
#include "app/train_buckets_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Triples of the dataset in the partitions' new IDs, a new array. */
static int32_t *
relabel(const struct kg_buckets *v, const struct kg_triples *t)
{
	int32_t *y = kg_xmallocarray(3 * t->n + 3, sizeof(*y));
	uint64_t i;

	for (i = 0; i < t->n; i++) {
		y[3 * i] = v->pb.old2new[t->hrt[3 * i]];
		y[3 * i + 1] = t->hrt[3 * i + 1];
		y[3 * i + 2] = v->pb.old2new[t->hrt[3 * i + 2]];
	}
	return y;
}

int
kg_buckets_valid_setup(struct kg_buckets *v)
{
	struct kg_triples sets[KG_NSPLITS];
	size_t k;

	if (v->j->valid_every == 0)
		return 0;
	if (v->ds.split[KG_SPLIT_VALID].n == 0) {
		kg_error("dataset '%s' has no valid triples for early "
		    "stopping", v->j->dataset);
		return -1;
	}
	for (k = 0; k < KG_NSPLITS; k++) {
		sets[k].n = v->ds.split[k].n;
		sets[k].hrt = k == KG_SPLIT_TRAIN ? v->pb.bucket_hrt :
		    relabel(v, &v->ds.split[k]);
	}
	kg_filter_build(&v->filter, sets, KG_NSPLITS);
	for (k = 0; k < KG_NSPLITS; k++)
		if (k != KG_SPLIT_TRAIN && k != KG_SPLIT_VALID)
			free((void *)sets[k].hrt);
	v->valid = sets[KG_SPLIT_VALID];
	return 0;
}

/* Every rank's bucket lines of the epoch into rank 0's log (collective). */
static void
log_buckets(struct kg_buckets *v)
{
	char *gathered;

	kg_dist_gather_text(v->d, v->mine.s ? v->mine.s : "", 0, &gathered);
	if (v->d->rank == 0)
		kg_strbuf_add(&v->ep.log, gathered);
	free(gathered);
}

/* The hooks of the epoch loop (kge/epochs.h).  Every rank runs the loop;
 * what decides a stop (loss, positives, seconds, steps) is the same on
 * every rank, so all stop together. */
static int
hook_train(void *ctx, struct kg_epoch_report *r)
{
	struct kg_buckets *v = ctx;
	struct kg_dist *d = v->d;
	double st[2], secs = 0.0;
	uint64_t sums[2], bytes0 = d->bytes_sent, step0 = v->step;
	uint64_t full = v->ds.split[KG_SPLIT_TRAIN].n * (v->o->reciprocal ?
	    2 : 1);
	int rc;

	v->mine.len = 0;
	if (v->mine.s != NULL)
		v->mine.s[0] = '\0';
	kg_dist_note_epoch(d, v->tr.epoch + 1, v->j->no_checkpoint ||
	    v->tr.epoch == 0 ? NULL : v->ckpt, v->tr.epoch);
	rc = kg_buckets_epoch(v, st, &secs);
	/* Peers may be waiting for our partitions: stop them. */
	if (rc < 0)
		kg_dist_abort(d, KG_EXIT_FAIL);
	if (kg_buckets_agree(v, rc) < 0)
		return -1;
	v->tr.epoch++;
	v->tr.last_loss = st[1] > 0 ? st[0] / st[1] : 0.0;
	if (!isfinite(v->tr.last_loss)) {
		if (d->rank == 0)
			kg_error("training diverged in epoch %u; try a "
			    "smaller --lr, --max_grad_norm or a "
			    "regulariser", v->tr.epoch);
		return -1;
	}
	sums[0] = d->bytes_sent - bytes0;
	sums[1] = v->step - step0;
	kg_dist_sum_u64(d, sums, 2);
	v->epoch_bytes = sums[0];
	v->step = step0 + sums[1];
	/* Rank 0's seconds, so that a time budget stops every rank alike. */
	kg_dist_bcast(d, &secs, sizeof(secs), 0);
	log_buckets(v);
	r->trained = (uint64_t)st[1];
	r->seconds = secs;
	r->whole = r->trained >= full;
	return 0;
}

/* Nothing pinned, for the store's snapshot and a validation that reads
 * every partition; the next round pins again what it needs. */
static void
unpin_all(struct kg_buckets *v)
{
	uint32_t p;

	for (p = 0; p < v->P; p++)
		if (v->pinned[p]) {
			kg_store_release(v->st, p, 0);
			v->pinned[p] = 0;
		}
}

/* Filtered valid MRR (both sides, realistic ties) of the parameters as
 * they are, read through the store (one process). */
static int
hook_valid(void *ctx, double *mrr)
{
	struct kg_buckets *v = ctx;
	struct kg_trainer *tr = &v->tr;
	struct kg_modeldir md = KG_MODELDIR_INIT;
	struct kg_eval_opts eo = KG_EVAL_OPTS_INIT;
	struct kg_eval_ranks ranks = KG_EVAL_RANKS_INIT;
	struct kg_metrics m[3];

	unpin_all(v);
	md.model = tr->model;
	md.reciprocal = v->o->reciprocal;
	md.n_entities = tr->n_entities;
	md.n_relations = tr->n_relations;
	md.n_rel_rows = tr->n_rel_rows;
	md.ents = v->st;
	md.relations = tr->rel;
	eo.filter = &v->filter;
	eo.threads = (int)tr->nthreads;
	if (kg_eval_rank(&md, &v->valid, &eo, &ranks) < 0)
		return -1;
	kg_eval_metrics(&ranks, &v->valid, -1, KG_TIES_REALISTIC, m);
	*mrr = kg_metrics_mrr(&m[2]);
	kg_eval_ranks_release(&ranks);
	return 0;
}

static int
hook_snapshot(void *ctx, int back)
{
	struct kg_buckets *v = ctx;

	unpin_all(v);
	return kg_trainer_snapshot(&v->tr, back);
}

static int
hook_save(void *ctx, int whole)
{
	struct kg_buckets *v = ctx;

	(void)whole;
	return v->j->no_checkpoint ? 0 : kg_buckets_save(v);
}

/* The epoch line's own figures: traffic, or an out-of-core run's I/O. */
static void
hook_figures(void *ctx, const struct kg_epoch_report *r, char **json,
    char **text)
{
	struct kg_buckets *v = ctx;

	(void)r;
	if (v->buffered) {
		kg_buckets_buffer_line(v, json, text);
		return;
	}
	*json = kg_xasprintf(", \"ranks\": %d, \"bytes_sent\": %llu",
	    v->d->size, (unsigned long long)v->epoch_bytes);
	*text = kg_xasprintf("%llu bytes sent",
	    (unsigned long long)v->epoch_bytes);
}

int
kg_buckets_epochs(struct kg_buckets *v)
{
	struct kg_epoch_hooks h = {
		.ctx = v, .train = hook_train, .valid = hook_valid,
		.snapshot = hook_snapshot, .save = hook_save,
		.figures = hook_figures, .epoch = &v->tr.epoch,
		.step = &v->step, .loss = &v->tr.last_loss
	};
	int rc;

	kg_buckets_sync_base(v);
	rc = kg_epochs_run(&v->ep, &h);
	kg_dist_note_epoch(v->d, 0, NULL, 0);
	return kg_buckets_agree(v, rc);
}
