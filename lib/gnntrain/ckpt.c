/*
 * gnntrain/ckpt: checkpoints of GNN training (gnn_train.h's struct
 * kg_gnn_ckpt): at every epoch end the whole state goes into a directory,
 * replaced atomically through lib/io/ckpt.h, the checkpoint writer and
 * reader of every trainer; rank 0 writes the shared (dense) part, state.json
 * and the manifest, and every rank's own rows and sampler state (rank-NNN
 * files, shipped to rank 0 over MPI: the ranks need share no filesystem),
 * so a resumed run is bit-identical to an uninterrupted one.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "dist/ship.h"
#include "gnntrain/train_state.h"
#include "io/ckpt.h"
#include "io/npy.h"
#include "kge/train.h"

/* The options that fix the shapes of a checkpoint; a resume must match
 * them. */
static json_t *
ckpt_shape(const struct kg_gnn_tstate *ts)
{
	const struct kg_gnn *m = &ts->out->enc;
	const struct kg_gnn_train_opts *o = ts->o;
	json_t *s = json_object(), *dims = json_array();
	uint32_t l;

	for (l = 0; l <= m->c.n_layers; l++)
		json_array_append_new(dims, json_integer(m->c.dims[l]));
	json_object_set_new(s, "encoder",
	    json_string(kg_gnn_encoder_name(m->c.encoder)));
	json_object_set_new(s, "gnn_decomposition", json_string(
	    m->c.decomp == KG_GNN_BASIS ? "basis" : "block"));
	json_object_set_new(s, "gnn_dims", dims);
	json_object_set_new(s, "gnn_num_bases", json_integer(m->c.n_bases));
	json_object_set_new(s, "gnn_learned_only",
	    json_boolean(m->c.learned_only));
	json_object_set_new(s, "gnn_dense_params",
	    json_integer((json_int_t)ts->n_dense));
	json_object_set_new(s, "model", json_string(kg_model_name(o->decoder)));
	json_object_set_new(s, "relations",
	    json_integer((json_int_t)ts->p->n_relations));
	json_object_set_new(s, "entities",
	    json_integer((json_int_t)o->enc.n_learned));
	json_object_set_new(s, "nranks", json_integer(ts->d->size));
	return s;
}

static char *
rank_file(int rank, const char *what)
{
	return kg_xasprintf("rank-%03d-%s.npy", rank, what);
}

/* What each rank writes, in this order (free each name). */
static const char *const rank_what[5] = { "learned", "learned_state",
    "nodes", "order", "sampler" };

static void
rank_files(int rank, char *f[5])
{
	size_t i;

	for (i = 0; i < 5; i++)
		f[i] = rank_file(rank, rank_what[i]);
}

/* Read dir/name into data, requiring dtype dt and shape n x w (w = 0: a
 * vector of n). */
static int
get_arr(const char *dir, const char *name, enum kg_dtype dt, uint64_t n,
    uint64_t w, void *data)
{
	struct kg_npy a = KG_NPY_INIT;
	char *path = kg_path_join(dir, name);
	int rc = kg_npy_read_expect(path, dt, w ? 2 : 1, &a);

	if (rc == 0 && (a.shape[0] != n || (w && a.shape[1] != w))) {
		kg_error("checkpoint file '%s' does not have the shape of "
		    "this run (%" PRIu64 " x %" PRIu64 ")", path, n, w ? w : 1);
		rc = -1;
	}
	if (rc == 0)
		memcpy(data, a.data, a.nbytes);
	kg_npy_release(&a);
	free(path);
	return rc;
}

/*
 * The learned rows a checkpoint holds: every row, or with ts->need only
 * the rows training reads (the others keep their initial values, drawn
 * at the end), so the checkpoint of millions of nodes that read their
 * attributes does not hold gigabytes of zeros.  Packs (pack = 1) the
 * rows and their Adam states into rows/st, or unpacks them back; returns
 * the row count.
 */
static size_t
learned_rows(struct kg_gnn_tstate *ts, float *rows, float *st, int pack)
{
	float *w = kg_gnn_learned_rows(&ts->out->enc);
	size_t d0 = ts->d0, sw = 2 * d0 + 1, n = 0, i;

	for (i = 0; i < ts->n_loc; i++) {
		if (ts->need != NULL && !ts->need[i])
			continue;
		if (pack && rows != NULL) {
			memcpy(rows + n * d0, w + i * d0, d0 * sizeof(float));
			memcpy(st + n * sw, ts->st_learn + i * sw,
			    sw * sizeof(float));
		} else if (rows != NULL) {
			memcpy(w + i * d0, rows + n * d0, d0 * sizeof(float));
			memcpy(ts->st_learn + i * sw, st + n * sw,
			    sw * sizeof(float));
		}
		n++;
	}
	return n;
}

/* This rank's files: its learned rows and their Adam state, its nodes'
 * global IDs (checked on resume), its permutation and its RNG + cursor. */
static int
ckpt_write_rank(const char *dir, struct kg_gnn_tstate *ts, int rank)
{
	const struct kg_gnn *m = &ts->out->enc;
	uint64_t smp[5];
	int32_t *gid = kg_xmallocarray(ts->n_loc + 1, sizeof(*gid));
	size_t nl = learned_rows(ts, NULL, NULL, 1), sw = 2 * ts->d0 + 1;
	const float *rows = kg_gnn_learned_rows(m), *st = ts->st_learn;
	float *prow = NULL, *pst = NULL;
	char *f[5];
	size_t i;
	int rc;

	for (i = 0; i < ts->n_loc; i++)
		gid[i] = ts->p->lrow ? ts->p->lrow[i] : (int32_t)i;
	if (ts->need != NULL) {
		prow = kg_xmallocarray(nl * ts->d0 + 1, sizeof(float));
		pst = kg_xmallocarray(nl * sw + 1, sizeof(float));
		learned_rows(ts, prow, pst, 1);
		rows = prow;
		st = pst;
	}
	memcpy(smp, ts->rng.s, sizeof(ts->rng.s));
	smp[4] = ts->cursor;
	rank_files(rank, f);
	rc = kg_ckpt_put(dir, f[0], KG_DT_F4, nl, ts->d0, rows) < 0 ||
	    kg_ckpt_put(dir, f[1], KG_DT_F4, nl, sw, st) < 0 ||
	    kg_ckpt_put(dir, f[2], KG_DT_I4, ts->n_loc, 0, gid) < 0 ||
	    kg_ckpt_put(dir, f[3], KG_DT_U8, ts->p->n_core, 0,
	    ts->order) < 0 ||
	    kg_ckpt_put(dir, f[4], KG_DT_U8, 5, 0, smp) < 0 ? -1 : 0;
	for (i = 0; i < 5; i++)
		free(f[i]);
	free(gid);
	free(prow);
	free(pst);
	return rc;
}

/* When validating, the best epoch's parameters into dir and its figures
 * into st (gnntrain/valid.c). */
static int
put_valid(const char *dir, const struct kg_gnn_tstate *ts, json_t *st)
{
	const struct kg_gnn_trained *out = ts->out;
	float *best;
	int rc;

	kg_epochs_state_put(&ts->ep, st);
	if (ts->best_w == NULL || ts->ep.best < 0.0)
		return 0;
	/* The single parameter array again: the learned rows from the
	 * store's snapshot, then the rest. */
	best = kg_xmallocarray(out->enc.n_params + 1, sizeof(float));
	memcpy(best + ts->n_lf, ts->best_w, ts->n_dense * sizeof(float));
	rc = kg_store_snapshot_read(ts->learn, 0, 0, ts->n_loc, best) < 0 ||
	    kg_ckpt_put(dir, "best_params.npy", KG_DT_F4,
	    out->enc.n_params, 0, best) < 0 ||
	    kg_ckpt_put(dir, "best_relations.npy", KG_DT_F4, ts->n_rel_f, 0,
	    ts->best_rel) < 0 ? -1 : 0;
	free(best);
	return rc;
}

/* The log and what put_valid wrote, back into ts (a checkpoint without
 * best state: none). */
static int
get_valid(const struct kg_ckpt *c, struct kg_gnn_tstate *ts)
{
	struct kg_gnn_trained *out = ts->out;
	char *log = kg_ckpt_log(c);
	float *best;
	int rc;

	if (log == NULL)
		return -1;
	kg_strbuf_add(&ts->ep.log, log);
	free(log);
	if (kg_epochs_state_get(&ts->ep, c) == 0)
		return 0;
	best = kg_xmallocarray(out->enc.n_params + 1, sizeof(float));
	ts->best_w = kg_xmallocarray(ts->n_dense + 1, sizeof(float));
	ts->best_rel = kg_xmallocarray(ts->n_rel_f + 1, sizeof(float));
	rc = kg_ckpt_get_f32(c, "best_params.npy", out->enc.n_params, 0,
	    best) < 0 || kg_ckpt_get_f32(c, "best_relations.npy",
	    ts->n_rel_f, 0, ts->best_rel) < 0 ||
	    kg_store_snapshot_set(ts->learn, 0, best) < 0 ? -1 : 0;
	memcpy(ts->best_w, best + ts->n_lf, ts->n_dense * sizeof(float));
	free(best);
	return rc;
}

/* Rank 0's files: the dense parameters and their Adam states, the best
 * epoch's when validating; then state.json, the log and the manifest of
 * every rank's files, and the rename (kg_ckpt_commit). */
static int
ckpt_write_shared(struct kg_ckpt_writer *w, const struct kg_gnn_tstate *ts)
{
	const char *dir = w->od.tmp;
	const struct kg_gnn_trained *out = ts->out;
	const struct kg_gnn_ckpt *ck = ts->o->ckpt;
	json_t *st = ckpt_shape(ts);
	int rc = -1;

	json_object_set_new(st, "epoch", json_integer(ts->epoch));
	json_object_set_new(st, "steps", json_integer((json_int_t)out->steps));
	json_object_set_new(st, "last_loss", json_real(out->last_loss));
	json_object_set_new(st, "seed",
	    json_integer((json_int_t)ts->o->seed));
	if (put_valid(dir, ts, st) < 0 ||
	    kg_ckpt_put(dir, "dense.npy", KG_DT_F4, ts->n_dense, 0,
	    out->enc.w + ts->n_lf) < 0 ||
	    kg_ckpt_put(dir, "dense_state.npy", KG_DT_F4,
	    2 * ts->n_dense + 1, 0, ts->st_enc) < 0 ||
	    kg_ckpt_put(dir, "relations.npy", KG_DT_F4, ts->n_rel_f, 0,
	    out->rel) < 0 ||
	    kg_ckpt_put(dir, "relation_state.npy", KG_DT_F4,
	    2 * ts->n_rel_f + 1, 0, ts->st_rel) < 0)
		kg_ckpt_abort(w);
	else
		rc = kg_ckpt_commit(w, st, ts->ep.log.s ? ts->ep.log.s : "",
		    ck->argc, ck->argv, ck->config);
	json_decref(st);
	return rc;
}

int
kg_gnn_any_rank(struct kg_dist *d, int bad)
{
	uint64_t b = bad != 0;

	kg_dist_max_u64(d, &b, 1);
	return b != 0;
}

/*
 * Save the state into ck->dir (collective): rank 0 begins the checkpoint
 * (lib/io/ckpt.h) and writes its files into the temporary; every other
 * rank writes its files on its own disk and ships them to rank 0
 * (dist/ship.h), so the ranks need share no filesystem; then rank 0 adds
 * the shared files and commits.
 */
int
kg_gnn_ckpt_save(struct kg_gnn_tstate *ts)
{
	const struct kg_gnn_ckpt *ck = ts->o->ckpt;
	struct kg_dist *d = ts->d;
	struct kg_ckpt_writer w = KG_CKPT_WRITER_INIT;
	char *local = NULL, *f[5];
	int bad = 0, r, i;

	if (d->rank == 0)
		bad = kg_ckpt_begin(&w, ck->dir, ck->inputs, ck->n_inputs) < 0;
	if (kg_gnn_any_rank(d, bad))
		return -1;
	if (d->rank == 0)
		bad = ckpt_write_rank(w.od.tmp, ts, 0) < 0;
	else
		bad = (local = kg_dist_local_tmpdir()) == NULL ||
		    ckpt_write_rank(local, ts, d->rank) < 0;
	if (!kg_gnn_any_rank(d, bad))
		for (r = 1; r < d->size; r++) {
			rank_files(r, f);
			if (kg_dist_ship_files(d, r, 0, local, w.od.tmp,
			    (const char *const *)f, 5, 0) < 0)
				bad = 1;
			for (i = 0; i < 5; i++)
				free(f[i]);
		}
	else
		bad = 1;
	if (local != NULL) {
		kg_rmtree(local);
		free(local);
	}
	bad = kg_gnn_any_rank(d, bad);
	if (d->rank == 0) {
		if (bad)
			kg_ckpt_abort(&w);
		else if (ckpt_write_shared(&w, ts) < 0)
			bad = 1;
	}
	return kg_gnn_any_rank(d, bad) ? -1 : 0;
}

/* This rank's files in dir: its nodes (checked against this run's),
 * learned rows and their Adam state, permutation, RNG and cursor. */
static int
ckpt_read_rank(const char *dir, struct kg_gnn_tstate *ts, int rank)
{
	struct kg_gnn *enc = &ts->out->enc;
	uint64_t smp[5], i, nc = ts->p->n_core;
	int32_t *gid = kg_xmallocarray(ts->n_loc + 1, sizeof(*gid));
	size_t nl = learned_rows(ts, NULL, NULL, 0), sw = 2 * ts->d0 + 1;
	float *rows = kg_gnn_learned_rows(enc), *st = ts->st_learn;
	float *prow = NULL, *pst = NULL;
	char *f[5];
	int rc = -1;

	if (ts->need != NULL) {
		rows = prow = kg_xmallocarray(nl * ts->d0 + 1, sizeof(float));
		st = pst = kg_xmallocarray(nl * sw + 1, sizeof(float));
	}

	rank_files(rank, f);
	if (get_arr(dir, f[2], KG_DT_I4, ts->n_loc, 0, gid) < 0)
		goto out;
	for (i = 0; i < ts->n_loc; i++)
		if (gid[i] != (ts->p->lrow ? ts->p->lrow[i] : (int32_t)i)) {
			kg_error("checkpoint '%s' holds other nodes for rank %d "
			    "(another expansion or dataset?)", dir, rank);
			goto out;
		}
	if (get_arr(dir, f[0], KG_DT_F4, nl, ts->d0, rows) < 0 ||
	    get_arr(dir, f[1], KG_DT_F4, nl, sw, st) < 0 ||
	    get_arr(dir, f[3], KG_DT_U8, nc, 0, ts->order) < 0 ||
	    get_arr(dir, f[4], KG_DT_U8, 5, 0, smp) < 0)
		goto out;
	for (i = 0; i < nc; i++)
		if (ts->order[i] >= nc)
			break;
	if (i < nc || smp[4] >= nc) {
		kg_error("checkpoint '%s': rank %d's permutation is out of "
		    "range", dir, rank);
		goto out;
	}
	if (ts->need != NULL)
		learned_rows(ts, prow, pst, 0);
	memcpy(ts->rng.s, smp, sizeof(ts->rng.s));
	ts->cursor = smp[4];
	rc = 0;
out:
	for (i = 0; i < 5; i++)
		free(f[i]);
	free(gid);
	free(prow);
	free(pst);
	return rc;
}

/* The files every rank reads besides its own (the best ones only when
 * validating). */
static const char *const shared_files[] = { "state.json",
    "train_log.jsonl", "dense.npy", "dense_state.npy", "relations.npy",
    "relation_state.npy", "best_params.npy", "best_relations.npy" };

/* The state of checkpoint c restored into this rank's trainer. */
static int
ckpt_read(const struct kg_ckpt *c, struct kg_gnn_tstate *ts)
{
	struct kg_gnn_trained *out = ts->out;

	if (ckpt_read_rank(c->dir, ts, ts->d->rank) < 0 ||
	    kg_ckpt_get_f32(c, "dense.npy", ts->n_dense, 0,
	    out->enc.w + ts->n_lf) < 0 ||
	    kg_ckpt_get_f32(c, "dense_state.npy", 2 * ts->n_dense + 1, 0,
	    ts->st_enc) < 0 ||
	    kg_ckpt_get_f32(c, "relations.npy", ts->n_rel_f, 0,
	    out->rel) < 0 ||
	    kg_ckpt_get_f32(c, "relation_state.npy", 2 * ts->n_rel_f + 1, 0,
	    ts->st_rel) < 0)
		return -1;
	ts->epoch = (uint32_t)kg_ckpt_u64(c, "epoch");
	out->steps = kg_ckpt_u64(c, "steps");
	out->last_loss = kg_ckpt_real(c, "last_loss");
	/* The time budget counts the checkpoint's epochs too (0 from a
	 * checkpoint written before it was kept): kg_epochs_state_get. */
	return get_valid(c, ts);
}

/*
 * Restore the state from ck->dir (collective): rank 0 opens it, checking
 * that it fits this run and that every file is complete and of its
 * recorded shape, and ships each other rank the shared files and that
 * rank's own to a directory on its own disk, which that rank reads.
 * 0 or -1 on every rank.
 */
static int
ckpt_load(struct kg_gnn_tstate *ts)
{
	struct kg_ckpt c = KG_CKPT_INIT;
	struct kg_dist *d = ts->d;
	size_t ns = sizeof(shared_files) / sizeof(shared_files[0]);
	char *local = NULL, *f[5];
	int bad = 0, r, i;

	if (d->rank == 0) {
		json_t *want = ckpt_shape(ts);

		bad = kg_ckpt_open(&c, ts->o->ckpt->dir, want, NULL) < 0;
		json_decref(want);
	} else
		bad = (local = kg_dist_local_tmpdir()) == NULL;
	if (!kg_gnn_any_rank(d, bad))
		for (r = 1; r < d->size; r++) {
			rank_files(r, f);
			if (kg_dist_ship_files(d, 0, r, c.dir, local,
			    shared_files, ns, 1) < 0 ||
			    kg_dist_ship_files(d, 0, r, c.dir, local,
			    (const char *const *)f, 5, 0) < 0)
				bad = 1;
			for (i = 0; i < 5; i++)
				free(f[i]);
		}
	else
		bad = 1;
	if (!kg_gnn_any_rank(d, bad))
		bad = (d->rank != 0 && kg_ckpt_adopt(&c, local) < 0) ||
		    ckpt_read(&c, ts) < 0;
	else
		bad = 1;
	kg_ckpt_close(&c);
	if (local != NULL) {
		kg_rmtree(local);
		free(local);
	}
	return kg_gnn_any_rank(d, bad) ? -1 : 0;
}

/* Resume when asked (collective); 0 or -1 on every rank. */
int
kg_gnn_ckpt_resume(struct kg_gnn_tstate *ts)
{
	const struct kg_gnn_ckpt *ck = ts->o->ckpt;
	const struct kg_gnn_train_opts *o = ts->o;
	struct kg_dist *d = ts->d;
	uint64_t exists = 0;

	if (ck == NULL || !ck->resume || ck->dir == NULL)
		return 0;
	if (d->rank == 0)
		exists = (uint64_t)kg_path_exists(ck->dir);
	kg_dist_bcast(d, &exists, sizeof(exists), 0);
	if (!exists) {
		if (!o->quiet && d->rank == 0)
			kg_warn("no checkpoint '%s' to resume from; starting "
			    "afresh", ck->dir);
		return 0;
	}
	if (ckpt_load(ts) < 0)
		return -1;
	if (!o->quiet && d->rank == 0)
		fprintf(stderr, "%s: resuming after epoch %u from '%s'\n",
		    kg_progname(), ts->epoch, ck->dir);
	return 0;
}
