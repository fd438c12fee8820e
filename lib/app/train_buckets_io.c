/*
 * train_buckets_io: the bucket driver's checkpoints (lib/io/ckpt.h) and model
 * dir (lib/kge/modeldir.h), written and read by rank 0 alone: the other
 * ranks send it the partitions they hold or park, and it sends them
 * theirs back on a resume, so the ranks share no filesystem (each may
 * run on a host of its own with its own disk).
 */
#include "app/train_buckets_impl.h"

#include <stdlib.h>
#include <string.h>

#include "kge/modeldir.h"

json_t *
kg_buckets_shape(const struct kg_buckets *v)
{
	json_t *st = kg_trainer_shape(&v->tr);

	json_object_set_new(st, "nparts", json_integer((json_int_t)v->P));
	json_object_set_new(st, "nranks", json_integer((json_int_t)v->d->size));
	return st;
}

/* The checkpoint files of partition p in dir, new strings. */
static void
part_paths(const char *dir, uint32_t p, char **e, char **s)
{
	*e = kg_ckpt_part_path(dir, p, 0);
	*s = kg_ckpt_part_path(dir, p, 1);
}

/* Rank 0's own partitions into dir, those in memory first (so that the
 * store does not park one it is about to write). */
static int
save_own(struct kg_buckets *v, const char *dir)
{
	uint32_t p;
	int pass, rc = 0;

	for (pass = 1; pass >= 0; pass--)
		for (p = 0; p < v->P && rc == 0; p++) {
			char *e, *s;

			if (v->loc[p] != 0 || kg_store_resident(v->st, p) != pass)
				continue;
			part_paths(dir, p, &e, &s);
			rc = kg_store_save_part(v->st, p, e, s);
			free(e);
			free(s);
		}
	return rc;
}

/*
 * Every partition into rank 0's directory dir: rank 0 writes its own and
 * receives the others' from their holders, in partition order.  Rank 0
 * keeps receiving after a failure of its own (ok 0: nothing more is
 * written), so that no sender waits forever; a sender that cannot read
 * its partition ends the job.
 */
static int
save_parts(struct kg_buckets *v, const char *dir)
{
	int me = v->d->rank, rc = me == 0 ? save_own(v, dir) : 0;
	uint32_t p;

	for (p = 0; p < v->P; p++) {
		size_t bytes = kg_store_part_floats(v->st, p) * sizeof(float);
		struct kg_dist_xfer xf;

		if (v->loc[p] <= 0 || (me != 0 && me != v->loc[p]))
			continue;
		if (me != 0) {
			const struct kg_store_part *a =
			    kg_store_acquire(v->st, p);

			if (a == NULL)
				kg_dist_abort(v->d, KG_EXIT_FAIL);
			xf = (struct kg_dist_xfer){ a->w, bytes, 0, (int)p, 1 };
			kg_dist_exchange(v->d, &xf, 1);
			kg_store_release(v->st, p, 0);
		} else {
			float *buf = kg_xmalloc(bytes ? bytes : 1);
			char *e, *s;

			xf = (struct kg_dist_xfer){ buf, bytes, v->loc[p],
			    (int)p, 0 };
			kg_dist_exchange(v->d, &xf, 1);
			part_paths(dir, p, &e, &s);
			if (rc == 0)
				rc = kg_store_buf_save(v->st, p, buf, e, s);
			free(e);
			free(s);
			free(buf);
		}
	}
	return rc;
}

/* The pool negatives' gradients still waiting (one process keeps them
 * over an epoch's end; ranks have applied theirs): neg_pool_ids.npy
 * (int64 [slots]), neg_pool_grad.npy (float32 [slots, dim]) and their
 * squared norms, neg_pool_sq.npy (float32 [slots, 1]). */
static int
save_pool(struct kg_buckets *v, const char *dir)
{
	struct kg_neg_pool *np = &v->tr.pool;
	uint64_t n = np->k ? np->off[np->n_parts] : 0;

	if (np->k == 0 || v->d->size > 1)
		return 0;
	kg_neg_pool_fold(np, UINT32_MAX);
	if (kg_ckpt_put(dir, "neg_pool_ids.npy", KG_DT_I8, n, 0,
	    np->gid) < 0 || kg_ckpt_put_f32(dir, "neg_pool_grad.npy", n,
	    np->dim, np->grad) < 0)
		return -1;
	return kg_ckpt_put_f32(dir, "neg_pool_sq.npy", n, 1, np->sq);
}

/* Restore what save_pool wrote, when the checkpoint has it. */
static int
load_pool(struct kg_buckets *v, const struct kg_ckpt *c)
{
	struct kg_neg_pool *np = &v->tr.pool;
	struct kg_npy a = KG_NPY_INIT;
	char *path;
	uint64_t n = np->k ? np->off[np->n_parts] : 0, i;
	uint32_t q;
	int rc = -1;

	if (np->k == 0 || v->d->size > 1)
		return 0;
	path = kg_path_join(c->dir, "neg_pool_ids.npy");
	if (!kg_path_exists(path)) {
		free(path);
		return 0;
	}
	if (kg_npy_read_expect(path, KG_DT_I8, 1, &a) < 0)
		goto out;
	if (a.shape[0] != n) {
		kg_error("checkpoint file '%s' does not have %llu rows", path,
		    (unsigned long long)n);
		goto out;
	}
	memcpy(np->gid, a.data, n * sizeof(*np->gid));
	if (kg_ckpt_get_f32(c, "neg_pool_grad.npy", n, np->dim, np->grad) < 0)
		goto out;
	/* Older checkpoints have no squared norms: plain steps then. */
	free(path);
	path = kg_path_join(c->dir, "neg_pool_sq.npy");
	if (kg_path_exists(path) &&
	    kg_ckpt_get_f32(c, "neg_pool_sq.npy", n, 1, np->sq) < 0)
		goto out;
	for (q = 0; q < np->n_parts; q++)
		for (i = np->off[q] * np->dim; i < np->off[q + 1] * np->dim;
		    i++)
			if (np->grad[i] != 0.0f)
				np->pending[q] = 1;
	rc = 0;
out:
	kg_npy_release(&a);
	free(path);
	return rc;
}

/* Rank 0's part: relations, state.json, log and manifest; commit. */
static int
save_shared(struct kg_buckets *v, struct kg_ckpt_writer *w)
{
	const struct kg_trainer *tr = &v->tr;
	json_t *st, *own;
	uint32_t p;
	int rc;

	if (kg_ckpt_put_f32(w->od.tmp, "relations.npy", tr->n_rel_rows,
	    tr->model.rel_width, tr->rel) < 0 ||
	    kg_ckpt_put_f32(w->od.tmp, "relation_state.npy", tr->n_rel_rows,
	    tr->rel_state_width, tr->rel_state) < 0 ||
	    save_pool(v, w->od.tmp) < 0 ||
	    kg_trainer_save_best(tr, w->od.tmp) < 0) {
		kg_ckpt_abort(w);
		return -1;
	}
	st = kg_buckets_shape(v);
	json_object_set_new(st, "epoch", json_integer(tr->epoch));
	json_object_set_new(st, "step", json_integer((json_int_t)v->step));
	json_object_set_new(st, "last_loss", json_real(tr->last_loss));
	json_object_set_new(st, "seed", json_integer((json_int_t)v->o->seed));
	kg_epochs_state_put(&v->ep, st);
	own = json_array();
	for (p = 0; p < v->P; p++)
		json_array_append_new(own, json_integer(v->loc[p]));
	json_object_set_new(st, "partition_rank", own);
	rc = kg_ckpt_commit(w, st, v->ep.log.s ? v->ep.log.s : "", v->j->argc,
	    v->j->argv, v->config);
	json_decref(st);
	return rc;
}

int
kg_buckets_save(struct kg_buckets *v)
{
	struct kg_ckpt_writer w = KG_CKPT_WRITER_INIT;
	int rc = 0;

	const char *in[2] = { v->j->dataset, v->x->partitions };

	if (v->d->rank == 0)
		rc = kg_ckpt_begin(&w, v->ckpt, in, 2);
	if (kg_buckets_agree(v, rc) < 0)
		return -1;
	rc = kg_buckets_agree(v, save_parts(v, v->d->rank == 0 ? w.od.tmp :
	    NULL));
	if (v->d->rank == 0) {
		if (rc < 0)
			kg_ckpt_abort(&w);
		else
			rc = save_shared(v, &w);
	}
	return kg_buckets_agree(v, rc);
}

/* Rank 0: where each partition was, from the checkpoint. */
static int
locate_parts(struct kg_buckets *v, const struct kg_ckpt *c)
{
	json_t *own = json_object_get(c->state, "partition_rank");
	uint32_t p;

	if (!json_is_array(own) || json_array_size(own) != v->P) {
		kg_error("checkpoint '%s': partition_rank is missing", v->ckpt);
		return -1;
	}
	for (p = 0; p < v->P; p++) {
		json_int_t r = json_integer_value(json_array_get(own, p));

		if (r < 0 || r >= v->d->size) {
			kg_error("checkpoint '%s': bad partition_rank", v->ckpt);
			return -1;
		}
		v->loc[p] = (int32_t)r;
	}
	return 0;
}

/* Rank 0: what every rank needs besides the partitions. */
static int
read_shared(struct kg_buckets *v, const struct kg_ckpt *c)
{
	char *t;

	if (locate_parts(v, c) < 0 ||
	    kg_ckpt_get_f32(c, "relations.npy", v->tr.n_rel_rows,
	    v->tr.model.rel_width, v->tr.rel) < 0 ||
	    kg_ckpt_get_f32(c, "relation_state.npy", v->tr.n_rel_rows,
	    v->tr.rel_state_width, v->tr.rel_state) < 0 ||
	    load_pool(v, c) < 0)
		return -1;
	v->tr.epoch = (uint32_t)kg_ckpt_u64(c, "epoch");
	v->step = kg_ckpt_u64(c, "step");
	v->tr.last_loss = kg_ckpt_real(c, "last_loss");
	kg_epochs_state_get(&v->ep, c);
	if ((t = kg_ckpt_log(c)) == NULL)
		return -1;
	kg_strbuf_add(&v->ep.log, t);
	free(t);
	return 0;
}

/* Rank 0's state to every rank (the loop's too, so that every rank
 * stops where rank 0 does). */
static void
share_state(struct kg_buckets *v)
{
	struct kg_trainer *tr = &v->tr;
	struct kg_epochs *e = &v->ep;

	kg_dist_bcast(v->d, v->loc, v->P * sizeof(*v->loc), 0);
	kg_dist_bcast(v->d, tr->rel, tr->n_rel_rows * tr->model.rel_width *
	    sizeof(float), 0);
	kg_dist_bcast(v->d, tr->rel_state, tr->n_rel_rows *
	    tr->rel_state_width * sizeof(float), 0);
	kg_dist_bcast(v->d, &tr->epoch, sizeof(tr->epoch), 0);
	kg_dist_bcast(v->d, &v->step, sizeof(v->step), 0);
	kg_dist_bcast(v->d, &tr->last_loss, sizeof(tr->last_loss), 0);
	kg_dist_bcast(v->d, &e->best, sizeof(e->best), 0);
	kg_dist_bcast(v->d, &e->best_epoch, sizeof(e->best_epoch), 0);
	kg_dist_bcast(v->d, &e->bad_rounds, sizeof(e->bad_rounds), 0);
	kg_dist_bcast(v->d, &e->train_seconds, sizeof(e->train_seconds), 0);
	kg_dist_bcast(v->d, &e->trained, sizeof(e->trained), 0);
}

/*
 * Every partition to its holder: rank 0 makes the checkpoint's files the
 * source of its own, and reads and sends the others.  Rank 0 keeps
 * sending after a failed read (ok 0), so that no receiver waits forever;
 * the ranks then agree on the failure.
 */
static int
load_parts(struct kg_buckets *v)
{
	int me = v->d->rank, rc = 0;
	uint32_t p;

	for (p = 0; p < v->P; p++) {
		size_t bytes = kg_store_part_floats(v->st, p) * sizeof(float);
		struct kg_dist_xfer xf;
		char *e, *s;
		float *buf;

		if (me != 0 && v->loc[p] != me)
			continue;
		if (me == 0 && v->loc[p] == 0) {
			part_paths(v->ckpt, p, &e, &s);
			if (rc == 0)
				rc = kg_store_set_source(v->st, p, e, s);
		} else if (me == 0) {
			buf = kg_xcalloc(bytes ? bytes : 1, 1);
			part_paths(v->ckpt, p, &e, &s);
			if (rc == 0)
				rc = kg_store_buf_load(v->st, p, buf, e, s);
			xf = (struct kg_dist_xfer){ buf, bytes, v->loc[p],
			    (int)p, 1 };
			kg_dist_exchange(v->d, &xf, 1);
			free(buf);
		} else {
			buf = kg_store_buf_alloc(v->st, p);
			if (buf == NULL)
				kg_dist_abort(v->d, KG_EXIT_FAIL);
			xf = (struct kg_dist_xfer){ buf, bytes, 0, (int)p, 0 };
			kg_dist_exchange(v->d, &xf, 1);
			if (rc == 0)
				rc = kg_store_put(v->st, p, buf);
			continue;
		}
		free(e);
		free(s);
	}
	return rc;
}

int
kg_buckets_load(struct kg_buckets *v)
{
	struct kg_ckpt c = KG_CKPT_INIT;
	json_t *want;
	int rc = 0, opened = 0;

	if (v->d->rank == 0) {
		want = kg_buckets_shape(v);
		rc = kg_ckpt_open(&c, v->ckpt, want, kg_trainer_shape_hints);
		json_decref(want);
		opened = rc == 0;
		if (rc == 0)
			rc = read_shared(v, &c);
	}
	if (kg_buckets_agree(v, rc) == 0) {
		share_state(v);
		rc = kg_buckets_agree(v, load_parts(v));
		/* The kept parameters once the store holds every partition
		 * (one process: early stopping needs one). */
		if (rc == 0 && v->d->rank == 0)
			rc = kg_trainer_load_best(&v->tr, &c);
		rc = kg_buckets_agree(v, rc);
	} else
		rc = -1;
	if (opened)
		kg_ckpt_close(&c);
	return rc;
}

json_t *
kg_buckets_config(const struct kg_buckets *v)
{
	const struct kg_dist_train_opts *x = v->x;
	json_t *c = kg_job_config(v->o);

	json_object_update_new(c, json_pack("{s:s, s:s, s:I, s:I, s:I, s:s, "
	    "s:I, s:I}",
	    "dist", "buckets",
	    "partitions", x->partitions,
	    "nparts", (json_int_t)v->P,
	    "ranks", (json_int_t)v->d->size,
	    "rel_sync", (json_int_t)x->rel_sync,
	    "rel_merge", x->rel_merge == KG_REL_MERGE_SUM ? "sum" :
	    x->rel_merge == KG_REL_MERGE_MEAN ? "mean" : "rows",
	    "bucket_passes", (json_int_t)x->passes,
	    "neg_pool", (json_int_t)v->o->neg_pool));
	if (x->disk_f16)
		json_object_set_new(c, "disk_dtype", json_string("float16"));
	kg_job_config_dicts(c, &v->ds);
	return c;
}

int
kg_buckets_check_dtype(struct kg_buckets *v)
{
	json_t *old = kg_ckpt_config(v->ckpt);
	const char *was = json_string_value(json_object_get(old,
	    "disk_dtype"));
	const char *now = v->x->disk_f16 ? "float16" : "float32";
	int rc = 0;

	if (was == NULL)
		was = "float32";
	if (strcmp(was, now) != 0) {
		kg_error("checkpoint '%s' was trained with --disk_dtype %s; "
		    "resume it with the same (not %s) or start over with "
		    "--force", v->ckpt, was, now);
		rc = -1;
	}
	json_decref(old);
	return rc < 0 ? -1 : kg_job_resume_changes(&v->job);
}

/*
 * Partition p into rank 0's table writer: written there when rank 0 has
 * it, else sent by its holder.  Rank 0 keeps receiving after a failure
 * of its own (ok 0: nothing is written), so no sender waits forever; a
 * sender that cannot send ends the job (the caller aborts).
 */
static int
move_part(struct kg_buckets *v, uint32_t p, struct kg_table_writer *tw,
    int ok)
{
	int me = v->d->rank, s = v->loc[p];
	uint64_t rows = kg_store_part_rows(v->st, p);
	size_t bytes = kg_store_part_floats(v->st, p) * sizeof(float);
	const struct kg_store_part *a;
	struct kg_dist_xfer xf;
	float *buf;
	int rc, own = 0;

	if (s == me && me == 0)
		return ok ? kg_store_write_part(v->st, p, tw) : -1;
	if (s == me) {
		if ((a = kg_store_acquire(v->st, p)) == NULL)
			return -1;
		xf = (struct kg_dist_xfer){ a->w, bytes, 0, (int)p, 1 };
		kg_dist_exchange(v->d, &xf, 1);
		kg_store_release(v->st, p, 0);
		return 0;
	}
	if (me != 0)
		return 0;
	buf = kg_store_buf_alloc(v->st, p);
	if (buf == NULL) {
		/* Receive anyway, so that the sender is not left waiting. */
		buf = kg_xmalloc(bytes ? bytes : 1);
		ok = 0;
		own = 1;
	}
	xf = (struct kg_dist_xfer){ buf, bytes, s, (int)p, 0 };
	kg_dist_exchange(v->d, &xf, 1);
	rc = ok ? kg_table_writer_put(tw, v->st->off[p], rows, buf, buf +
	    rows * v->st->dim) : -1;
	if (own)
		free(buf);
	else
		kg_store_buf_free(v->st, p, buf);
	return rc;
}

int
kg_buckets_write_model(struct kg_buckets *v, json_t *figures)
{
	const char *in[2][2] = { { "partitions", v->x->partitions },
	    { NULL, NULL } };
	struct kg_modeldir_spec s;
	struct kg_modeldir_writer w = KG_MODELDIR_WRITER_INIT;
	uint32_t p;
	int rc = 0;

	memset(&s, 0, sizeof(s));
	s.dir = v->j->output;
	s.force = v->j->force;
	s.argc = v->j->argc;
	s.argv = v->j->argv;
	s.model = &v->tr.model;
	s.reciprocal = v->o->reciprocal;
	s.n_entities = v->tr.n_entities;
	s.n_relations = v->tr.n_relations;
	s.order = v->pb.new2old;
	s.state_width = 1;
	s.rel = v->tr.rel;
	s.log = v->ep.log.s ? v->ep.log.s : "";
	s.dataset = v->j->dataset;
	s.inputs = (const char *const (*)[2])in;
	s.config = v->config;
	s.figures = figures;
	if (v->d->rank == 0)
		rc = kg_modeldir_begin(&w, &s);
	if (kg_buckets_agree(v, rc) < 0)
		return -1;
	if (v->buffered) {
		if (rc == 0 && kg_store_write(v->st, &w.table) < 0)
			rc = -1;
	} else for (p = 0; p < v->P; p++)
		if (move_part(v, p, &w.table, rc == 0) < 0) {
			if (v->d->rank != 0)
				kg_dist_abort(v->d, KG_EXIT_FAIL);
			rc = -1;
		}
	if (v->d->rank == 0) {
		if (rc < 0)
			kg_modeldir_abort(&w);
		else
			rc = kg_modeldir_commit(&w);
	}
	return kg_buckets_agree(v, rc);
}
