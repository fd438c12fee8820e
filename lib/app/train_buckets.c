/*
 * train_buckets: the PyTorch-BigGraph-style bucket driver of kg-train;
 * see train_buckets.h.  Set-up, the rounds and epochs of the schedule,
 * the log and figures.  Partitions live in a parking store
 * (lib/store/store.h) and move between rounds (dist/buckets_sync.h);
 * checkpoints and the model dir are written in train_buckets_io.c.
 */
#include "app/train_buckets_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kge/epochs.h"
#include "kge/modeldir.h"
#include "kge/warmstart.h"

int
kg_buckets_agree(struct kg_buckets *v, int rc)
{
	uint64_t bad = rc < 0;

	kg_dist_max_u64(v->d, &bad, 1);
	return bad ? -1 : 0;
}

/*
 * Give back the pages of bytes [at, at + n) of a mapped input: reading
 * every triple once to check it, or a bucket to train it, leaves them in
 * the resident set, which at 100M triples is gigabytes of the budget.
 * They are file pages nobody wrote, read again from the file if needed.
 */
static void
drop_pages(const struct kg_npy *a, size_t at, size_t n)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo, hi;

	if (a->map == NULL || n == 0)
		return;
	lo = ((uintptr_t)a->data + at + pg - 1) / pg * pg;
	hi = ((uintptr_t)a->data + at + n) / pg * pg;
	if (hi > lo)
		madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

/* The dataset and the partitions, checked against each other; 0, -1 or
 * KG_ERR_VERSION. */
static int
load_inputs(struct kg_buckets *v)
{
	uint64_t n;
	uint32_t p;
	int rc;

	rc = kg_dataset_load(&v->ds, v->j->dataset);
	if (rc < 0)
		return rc;
	rc = kg_partition_book_load(&v->pb, v->x->partitions);
	if (rc < 0)
		return rc;
	n = v->ds.split[KG_SPLIT_TRAIN].n;
	if (v->pb.n_nodes != v->ds.n_entities || v->pb.n_edges != n) {
		kg_error("partitions '%s' were made for %llu entities and %llu "
		    "train triples, but dataset '%s' has %llu and %llu; re-run "
		    "kg-partition", v->x->partitions,
		    (unsigned long long)v->pb.n_nodes,
		    (unsigned long long)v->pb.n_edges, v->j->dataset,
		    (unsigned long long)v->ds.n_entities,
		    (unsigned long long)n);
		return -1;
	}
	if (kg_job_check_types(&v->job) < 0)
		return -1;
	v->P = v->pb.nparts;
	for (p = 0; p < v->P; p++)
		if (v->pb.offsets[p + 1] <= v->pb.offsets[p]) {
			kg_error("partition %u of '%s' is empty; use fewer "
			    "partitions", p, v->x->partitions);
			return -1;
		}
	if (kg_dist_sched_build(&v->s_base, v->P, (uint32_t)v->d->size) < 0)
		return -1;
	kg_dist_sched_relabel(&v->s, &v->s_base, NULL);
	return 0;
}

/* The parking store and the trainer over it, with the known positives in
 * new IDs (the train triples and, with reciprocal relations, their
 * inverses). */
static int
init_trainer(struct kg_buckets *v)
{
	const struct kg_train_opts *o = v->o;
	struct kg_store_layout l = kg_train_layout(o, v->ds.n_entities, v->P,
	    v->pb.offsets);
	struct kg_store_init in = kg_train_init_rule(o,
	    KG_STREAM_BUCKET_ENTITY_INIT);
	uint64_t n = v->ds.split[KG_SPLIT_TRAIN].n, nk, i;
	size_t k;
	int32_t *known;
	int rc;

	if (v->buffered) {
		if (kg_buckets_buffer_open(v, &l, &in) < 0)
			return -1;
	} else if ((v->st = kg_store_open_park(&l, &in, NULL)) == NULL)
		return -1;
	/* The known positives only for filtering: at 100M triples they
	 * take gigabytes. */
	known = kg_job_known(o, v->pb.bucket_hrt, n, v->ds.n_relations, &nk);
	if (o->use_types) {
		v->types = kg_xmallocarray(v->ds.n_entities, sizeof(*v->types));
		for (i = 0; i < v->ds.n_entities; i++)
			v->types[i] = v->ds.types[v->pb.new2old[i]];
	}
	rc = kg_trainer_init_store(&v->tr, o, v->st, v->ds.n_relations,
	    v->pb.bucket_hrt, n, known, nk, v->types,
	    (uint32_t)v->ds.n_types);
	free(known);
	v->tr.bucket_chunks = 1;
	/* Loading checked every array (the relabelling is a permutation,
	 * every triple in range); training reads the buckets one at a time
	 * and the model's writer new2old once. */
	for (k = 0; k < KG_NSPLITS + 1; k++)
		drop_pages(&v->ds.arr[k], 0, v->ds.arr[k].nbytes);
	for (k = 0; k < KG_ARRAY_LEN(v->pb.arr); k++)
		drop_pages(&v->pb.arr[k], 0, v->pb.arr[k].nbytes);
	return rc;
}

static int
setup(struct kg_buckets *v)
{
	uint32_t p;
	int rc = load_inputs(v);

	if (rc < 0 || (rc = kg_buckets_valid_setup(v)) < 0)
		return rc;
	v->loc = kg_xmallocarray(v->P, sizeof(*v->loc));
	v->pinned = kg_xcalloc(v->P, sizeof(*v->pinned));
	for (p = 0; p < v->P; p++)
		v->loc[p] = -1;
	rc = init_trainer(v);
	v->tr.ep = &v->ep;
	if (rc == 0)
		kg_buckets_sync_init(&v->sync, v->d, v->x, v->P, &v->s, v->st,
		    &v->tr, v->loc, v->pinned);
	return rc;
}

static void
teardown(struct kg_buckets *v)
{
	uint32_t p;

	/* The engine goes first, then what the store holds pinned. */
	kg_engine_free(v->eng);
	v->eng = NULL;
	for (p = 0; v->pinned != NULL && p < v->P; p++)
		if (v->pinned[p])
			kg_store_release(v->st, p, 0);
	kg_job_release(&v->job);
	free(v->types);
	kg_dist_sched_release(&v->s);
	kg_dist_sched_release(&v->s_base);
	kg_order_release(&v->ord);
	kg_partition_book_release(&v->pb);
	kg_buckets_sync_release(&v->sync);
	free(v->loc);
	free(v->pinned);
	free(v->pos);
	free(v->mine.s);
}

/* Gather the positives of bucket (a, b), shuffled for the epoch. */
static uint64_t
bucket_positives(struct kg_buckets *v, uint32_t a, uint32_t b)
{
	const int64_t *off = v->pb.bucket_off;
	uint32_t P = v->P, bk = a * P + b, inv = b * P + a;
	uint64_t n1 = (uint64_t)(off[bk + 1] - off[bk]), n2 = 0, n, i;
	int32_t nrel = (int32_t)v->ds.n_relations;
	struct kg_rng rng;

	if (v->o->reciprocal)
		n2 = (uint64_t)(off[inv + 1] - off[inv]);
	n = n1 + n2;
	if (3 * n > v->pos_cap) {
		v->pos_cap = 3 * n;
		v->pos = kg_xreallocarray(v->pos, v->pos_cap, sizeof(int32_t));
	}
	memcpy(v->pos, v->pb.bucket_hrt + 3 * off[bk], 3 * n1 *
	    sizeof(int32_t));
	drop_pages(&v->pb.arr[6], 3 * (size_t)off[bk] * sizeof(int32_t),
	    3 * n1 * sizeof(int32_t));
	for (i = 0; i < n2; i++) {
		const int32_t *x = v->pb.bucket_hrt + 3 * (off[inv] + (int64_t)i);
		int32_t *y = v->pos + 3 * (n1 + i);

		y[0] = x[2];
		y[1] = x[1] + nrel;
		y[2] = x[0];
	}
	kg_rng_stream(&rng, v->o->seed, KG_STREAM_BUCKET_SHUFFLE, v->tr.epoch,
	    a, b, 0);
	for (i = n; i > 1; i--) {
		uint64_t k = kg_rng_below(&rng, i);
		int32_t t[3];

		memcpy(t, v->pos + 3 * (i - 1), sizeof(t));
		memcpy(v->pos + 3 * (i - 1), v->pos + 3 * k, sizeof(t));
		memcpy(v->pos + 3 * k, t, sizeof(t));
	}
	return n;
}

int
kg_buckets_train(struct kg_buckets *v, uint32_t round, uint32_t bk,
    double stats[2])
{
	uint32_t P = v->P, a = bk / P, c = bk % P, K = v->x->passes;
	uint64_t n, done = 0, lo, hi, max_batches = 0, bs = v->o->batch_size;
	double loss = 0.0, tb = kg_now();
	char *line;

	/* --max_step (one process, on the CPU) cuts the epoch: the buckets
	 * after the cut are not trained. */
	if (v->o->max_step > 0) {
		if (v->step >= v->o->max_step)
			return 0;
		max_batches = v->o->max_step - v->step;
	}
	n = bucket_positives(v, a, c);
	/* Pass k trains the k-th slice of the bucket's shuffle. */
	lo = K > 1 ? n * v->pass / K : 0;
	hi = K > 1 ? n * (v->pass + 1) / K : n;
	v->tr.chunk_base = (uint64_t)v->pass << 32;
	if (kg_engine_bucket(v->eng, a, c, v->pos + 3 * lo, hi - lo,
	    max_batches, &loss, &done) < 0)
		return -1;
	v->step += (done + bs - 1) / bs;
	stats[0] += loss;
	stats[1] += (double)done;
	line = kg_xasprintf("{\"epoch\": %u, \"round\": %u, "
	    "\"rank\": %d, \"bucket\": [%u, %u], "
	    "\"triples\": %llu, \"loss\": %.9g, "
	    "\"seconds\": %.4f}\n", v->tr.epoch + 1, round, v->d->rank,
	    a, c, (unsigned long long)done, done ?
	    loss / (double)done : 0.0, kg_now() - tb);
	kg_strbuf_add(&v->mine, line);
	free(line);
	return 0;
}

/*
 * Train this rank's buckets of one round, logging each; stats[0] and
 * stats[1] get the loss sum and the positives added.  The ranks share
 * the negative pool after every step of the round (the i-th bucket of
 * every rank), not only after the round: the rows of a partition
 * another rank trains were a round old, and the gradients of its pool
 * negatives waited for the round's end, while one process sees the
 * rows as they are and applies the gradients at the partition's next
 * bucket.  FB15k-237 (TransE, 10 epochs), filtered MRR after each round
 * -> after each step: 2 ranks, P=4, seed 1 0.2499 -> 0.2523, seed 2
 * 0.2539 -> 0.2558; 4 ranks, P=8, seed 1 0.2517 -> 0.2523 (one process
 * in memory: 0.2644 and 0.2620).
 *
 * The relations are merged every rel_sync steps (*steps counts them in
 * the epoch), not rounds: between merges each rank's copy drifts
 * towards its own buckets.  FB15k-237 as above, seed 1, after each round
 * -> after each step: 2 ranks 0.2539 -> 0.2556, 4 ranks 0.2521 ->
 * 0.2544.
 */
static int
run_round(struct kg_buckets *v, uint32_t round, double stats[2],
    uint64_t *steps)
{
	size_t nb, n, most = 0, i;
	const uint32_t *b = kg_dist_sched_buckets(&v->s, round,
	    (uint32_t)v->d->rank, &nb);
	uint32_t k;

	for (k = 0; k < v->s.nranks; k++) {
		kg_dist_sched_buckets(&v->s, round, k, &n);
		most = n > most ? n : most;
	}
	for (i = 0; i < most; i++) {
		if (i < nb && kg_buckets_train(v, round, b[i], stats) < 0)
			return -1;
		if (i + 1 < most)
			kg_buckets_sync_pool(&v->sync, round, 1);
		if (v->x->rel_sync > 0 && ++*steps % v->x->rel_sync == 0)
			kg_buckets_sync_relations(&v->sync);
	}
	return 0;
}

/*
 * The schedule of this pass (epoch * passes + pass): the built one with
 * the partitions renamed by a random permutation of the pass, so that
 * the buckets come in another order and meet other neighbours every
 * epoch, as the out-of-core order's do.  FB15k-237 (TransE, 10 epochs,
 * P=4), filtered MRR fixed -> renamed: one rank 0.2525 -> 0.2547, two
 * ranks 0.2482 -> 0.2487 (seed 2: 0.2544 -> 0.2546), two ranks with
 * --bucket_passes 4 0.2571 -> 0.2591.
 */
static void
pass_schedule(struct kg_buckets *v)
{
	uint32_t *perm = kg_xmallocarray(v->P, sizeof(*perm)), i;
	struct kg_rng rng;

	for (i = 0; i < v->P; i++)
		perm[i] = i;
	kg_rng_stream(&rng, v->o->seed, KG_STREAM_BUCKET_SCHEDULE,
	    (uint64_t)v->tr.epoch * v->x->passes + v->pass, 0, 0, 0);
	for (i = v->P; i > 1; i--) {
		uint32_t j = (uint32_t)kg_rng_below(&rng, i), t = perm[i - 1];

		perm[i - 1] = perm[j];
		perm[j] = t;
	}
	kg_dist_sched_relabel(&v->s, &v->s_base, perm);
	free(perm);
}

/* The negative pool of the epoch: every rank reads the partitions it
 * holds or parks, and the ranks' pools are summed.  0 or -1 on every
 * rank. */
static int
load_pool(struct kg_buckets *v)
{
	struct kg_neg_pool *np = &v->tr.pool;
	int rc = kg_engine_pool_load(v->eng, v->buffered ? NULL : v->loc,
	    v->d->rank);

	if (v->d->size == 1 || np->k == 0 || v->tr.epoch == 0)
		return rc;
	if (kg_buckets_agree(v, rc) < 0)
		return -1;
	kg_dist_sum_f32(v->d, np->rows, np->off[np->n_parts] * np->dim);
	return 0;
}

/* Ranks: the pool negatives' gradients that wait for partitions held
 * elsewhere, summed and applied by the holders.  (One process keeps
 * them until the partition is next pinned, over the epoch's end: its
 * checkpoint saves them.)  0 or -1 on every rank. */
static int
settle_pool(struct kg_buckets *v)
{
	struct kg_neg_pool *np = &v->tr.pool;

	if (v->d->size == 1 || np->k == 0)
		return 0;
	kg_neg_pool_fold(np, UINT32_MAX);
	kg_dist_sum_f32(v->d, np->grad, np->off[np->n_parts] * np->dim);
	kg_dist_sum_f32(v->d, np->sq, np->off[np->n_parts]);
	return kg_buckets_agree(v, kg_engine_pool_settle(v->eng, v->loc,
	    v->d->rank));
}

int
kg_buckets_epoch(struct kg_buckets *v, double stats[2], double *secs)
{
	uint32_t round;
	uint64_t steps = 0;
	double t0 = kg_now();

	stats[0] = stats[1] = 0.0;
	if (load_pool(v) < 0)
		return -1;
	if (v->buffered) {
		if (kg_buckets_buffer_epoch(v, stats) < 0)
			return -1;
		*secs = kg_now() - t0;
		return settle_pool(v);
	}
	for (v->pass = 0; v->pass < v->x->passes; v->pass++)
	for (round = 0; round < v->s.nrounds; round++) {
		if (round == 0)
			pass_schedule(v);
		if (kg_buckets_transition(&v->sync, round) < 0 ||
		    run_round(v, round, stats, &steps) < 0)
			return -1;
		kg_dist_test_hook(v->d, (uint64_t)v->tr.epoch *
		    v->s.nrounds + round + 1);
		kg_buckets_sync_pool(&v->sync, round, 0);
	}
	/* Without a change since a merge this one changes nothing. */
	kg_buckets_sync_relations(&v->sync);
	kg_dist_sum_f64(v->d, stats, 2);
	if (settle_pool(v) < 0)
		return -1;
	*secs = kg_now() - t0;
	return 0;
}

/* The run's figures: traffic, and each rank's memory against the whole
 * table (what one process holds). */
static json_t *
figures(struct kg_buckets *v)
{
	struct kg_dist *d = v->d;
	uint64_t *rss = kg_xcalloc(2 * (size_t)d->size, sizeof(*rss));
	uint64_t bytes[2] = { d->bytes_sent, d->bytes_received };
	json_t *fig = kg_job_figures(&v->job, 0), *a, *b;
	int i;

	rss[d->rank] = kg_peak_rss_kib();
	rss[d->size + d->rank] = v->st->stats.bytes_held_max;
	kg_dist_sum_u64(d, rss, 2 * (size_t)d->size);
	kg_dist_sum_u64(d, bytes, 2);
	a = json_array();
	b = json_array();
	for (i = 0; i < d->size; i++) {
		json_array_append_new(a, json_integer((json_int_t)rss[i]));
		json_array_append_new(b, json_integer((json_int_t)
		    rss[d->size + i]));
	}
	/* The kept parameters' copy in memory (none out of core: the store
	 * keeps their partition files). */
	if (v->ep.best >= 0.0)
		json_object_set_new(fig, "snapshot_bytes_in_memory",
		    json_integer((json_int_t)v->st->stats.bytes_snapshot));
	json_object_set_new(fig, "ranks", json_integer(d->size));
	json_object_set_new(fig, "nparts", json_integer(v->P));
	json_object_set_new(fig, "rounds_per_epoch",
	    json_integer(v->s.nrounds));
	json_object_set_new(fig, "bytes_sent", json_integer((json_int_t)
	    bytes[0]));
	json_object_set_new(fig, "peak_rss_kib_per_rank", a);
	json_object_set_new(fig, "partition_bytes_held_max_per_rank", b);
	json_object_set_new(fig, "entity_table_bytes", json_integer(
	    (json_int_t)(v->tr.n_entities * (v->tr.model.dim + 1) *
	    sizeof(float))));
	if (v->buffered)
		kg_buckets_buffer_figures(v, fig);
	json_object_update_new(fig, kg_dist_comm_json(d));
	free(rss);
	return fig;
}

/* Options this driver cannot honour, and an output in the way: 0 or -1,
 * with rank 0's message, on this rank alone. */
static int
check_local(struct kg_buckets *v)
{
	const char *in[2] = { v->j->dataset, v->x->partitions };
	enum kg_engine_place place;
	int rc = 0;

	if (kg_train_opts_check(v->o) < 0 || kg_train_job_check(v->o, v->j) < 0)
		return -1;
	if (v->j->one_vs_all_plateau > 0) {
		if (v->d->rank == 0)
			kg_error("--one_vs_all_plateau is not supported with "
			    "partitions");
		return -1;
	}
	/* Validation ranks against every partition, and a cut epoch
	 * counts every rank's batches: one process holds them all.  Under
	 * mpirun a rank holds two. */
	if ((v->o->max_step > 0 || v->j->valid_every > 0) && v->d->size > 1) {
		if (v->d->rank == 0)
			kg_error("%s with partitions trains in one process; "
			    "under mpirun each rank holds only some partitions",
			    v->j->valid_every > 0 ? "--valid_every" :
			    "--max_step");
		return -1;
	}
	/* Where the steps can run, said by rank 0 (kge/engine.h). */
	kg_error_hold(v->d->rank != 0);
	rc = kg_engine_choose(&v->run, KG_ASK_RUN, &place);
	kg_error_hold(0);
	if (rc < 0)
		return -1;
	/* On a device the engine's table (kge/engine.c) refuses it. */
	if (v->x->disk_f16 && v->x->buffer_capacity == 0 &&
	    v->x->mem_budget == 0) {
		if (v->d->rank == 0)
			kg_error("--disk_dtype float16 needs --buffer_capacity "
			    "or --mem_budget, on the CPU");
		return -1;
	}
	if (v->buffered && v->d->size > 1) {
		if (v->d->rank == 0)
			kg_error("--buffer_capacity and --mem_budget train out "
			    "of core in one process; under mpirun each rank "
			    "holds two partitions");
		return -1;
	}
	/* Nothing this run writes (model dir, checkpoint, swap dir) may be
	 * or hold the dataset or the partitions. */
	if (v->d->rank == 0 && kg_job_check_output(v->j, v->x->swap_dir, in,
	    2) < 0)
		rc = -1;
	return rc;
}

/* check_local, agreed: no rank leaves (and aborts the job) before rank 0
 * has said why. */
static int
check_run(struct kg_buckets *v)
{
	return kg_buckets_agree(v, check_local(v));
}

/* The warm start, then resume when asked; 0 or -1 on every rank. */
static int
start(struct kg_buckets *v)
{
	int rc = 0;

	v->ckpt = kg_train_job_ckpt(v->j);
	v->config = kg_buckets_config(v);
	if (kg_buckets_agree(v, kg_buckets_warm_start(v)) < 0)
		return -1;
	if (v->j->resume) {
		/* Rank 0's disk holds the checkpoint; the others' need not. */
		uint64_t found = v->d->rank == 0 && kg_path_exists(v->ckpt);

		kg_dist_bcast(v->d, &found, sizeof(found), 0);
		if (found) {
			rc = kg_buckets_agree(v, v->d->rank == 0 ?
			    kg_buckets_check_dtype(v) : 0);
			if (rc == 0)
				rc = kg_buckets_agree(v,
				    kg_buckets_warm_forget(v));
			if (rc == 0)
				rc = kg_buckets_load(v);
			if (rc == 0)
				kg_job_say_resumed(&v->job);
		} else if (v->d->rank == 0)
			kg_job_say_no_ckpt(&v->job);
	}
	return kg_buckets_agree(v, rc);
}

/* The engine (kge/engine.h), once the trainer holds its start (a
 * resumed one too).  KG_TEST_GPU_SYNC_SWAPS, a test hook, swaps a device
 * buffer synchronously (the reference of the pipeline). */
static int
open_engine(struct kg_buckets *v)
{
	v->run.capacity = v->capacity;
	if (getenv("KG_TEST_GPU_SYNC_SWAPS") != NULL)
		v->run.flags |= KG_DEV_BUFFER_SYNC;
	return kg_job_open_engine(&v->job, &v->run);
}

/* The model dir, and the checkpoint gone after success. */
static int
finish(struct kg_buckets *v)
{
	json_t *fig;
	int rc;

	if (kg_buckets_agree(v, kg_check_finite("relation parameters",
	    v->tr.rel, v->tr.n_rel_rows, v->tr.model.rel_width)) < 0)
		return -1;
	fig = figures(v);
	rc = kg_buckets_write_model(v, fig);
	json_decref(fig);
	if (rc == 0 && v->d->rank == 0)
		kg_job_drop_ckpt(&v->job);
	return rc;
}

int
kg_train_buckets_run(struct kg_dist *d, const struct kg_train_opts *o,
    const struct kg_train_job *j, const struct kg_dist_train_opts *x)
{
	struct kg_buckets v;
	int rc;

	memset(&v, 0, sizeof(v));
	/* The loop's ops come with kg_buckets_epochs. */
	kg_job_init(&v.job, o, j, d->rank == 0 && !j->quiet, NULL, &v);
	v.steps = &v.step;
	v.d = d;
	v.x = x;
	v.on_device = j->device.kind != KG_DEVICE_CPU || j->seam;
	/* A device in one process trains through its partition buffer;
	 * under mpirun each rank's device trains a bucket at a time. */
	v.buffered = x->buffer_capacity > 0 || x->mem_budget > 0 ||
	    (v.on_device && d->size == 1);
	v.run = (struct kg_engine_run)KG_ENGINE_RUN_INIT;
	v.run.o = o;
	v.run.shape = v.buffered ? KG_SHAPE_BUFFER : KG_SHAPE_BUCKETS;
	v.run.ranks = d->size;
	v.run.on_device = v.on_device;
	v.run.device = j->device;
	v.run.gpu_buffer = x->gpu_capacity > 0 || x->gpu_mem_budget > 0;
	v.run.disk_f16 = x->disk_f16;
	if (check_run(&v) < 0) {
		kg_job_release(&v.job);
		return -1;
	}
	rc = setup(&v);
	if (kg_buckets_agree(&v, rc) < 0)
		rc = rc == KG_ERR_VERSION ? KG_ERR_VERSION : -1;
	else
		rc = start(&v) < 0 || open_engine(&v) < 0 ||
		    (kg_warmstart_trains(j->warm) && kg_buckets_epochs(&v) < 0)
		    || finish(&v) < 0 ? -1 : 0;
	teardown(&v);
	/* Nobody may abort a peer that is still cleaning up. */
	kg_dist_barrier(d);
	return rc;
}
