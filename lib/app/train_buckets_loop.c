/*
 * train_buckets_loop: the bucket driver's side of the epoch loop
 * (app/job.h's kg_job_epochs): its epoch, the partitions let go before
 * validation and the best epoch's snapshot read every row through the
 * store (one process), its checkpoints and the epoch line's figures.
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
	if (kg_job_check_valid(&v->job) < 0)
		return -1;
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
	v->valid_own = (int32_t *)v->valid.hrt;
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

/* The driver's side of the epoch loop (app/job.h).  Every rank runs the
 * loop; what decides a stop (loss, positives, seconds, steps) is the same
 * on every rank, so all stop together. */
static int
train_epoch(void *ctx, struct kg_epoch_report *r)
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
unpin_all(void *ctx)
{
	struct kg_buckets *v = ctx;
	uint32_t p;

	for (p = 0; p < v->P; p++)
		if (v->pinned[p]) {
			kg_store_release(v->st, p, 0);
			v->pinned[p] = 0;
		}
}

static int
save_ckpt(void *ctx)
{
	return kg_buckets_save(ctx);
}

/* The epoch line's own figures: traffic, or an out-of-core run's I/O. */
static void
epoch_figures(void *ctx, const struct kg_epoch_report *r, char **json,
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
	static const struct kg_job_ops ops = {
		.train = train_epoch, .save = save_ckpt, .unpin = unpin_all,
		.figures = epoch_figures
	};
	int rc;

	v->ops = &ops;
	v->ctx = v;
	kg_buckets_sync_base(&v->sync);
	rc = kg_job_epochs(&v->job);
	kg_dist_note_epoch(v->d, 0, NULL, 0);
	return kg_buckets_agree(v, rc);
}
