/*
 * gnn/ckpt: checkpoints of GNN training (gnn_train.h's struct
 * kg_gnn_ckpt): at every epoch end the whole state goes into a directory,
 * replaced atomically through lib/io/ckpt.h, the checkpoint writer and
 * reader of every trainer; rank 0 writes the shared (dense) part, state.json
 * and the manifest, every rank its own rows and sampler state (rank-NNN
 * files), so a resumed run is bit-identical to an uninterrupted one.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "gnn/train_state.h"
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

/* Write n x w (w = 0: a vector of n) of dtype dt into dir/name. */
static int
put_arr(const char *dir, const char *name, enum kg_dtype dt, uint64_t n,
    uint64_t w, const void *data)
{
	char *path = kg_path_join(dir, name);
	uint64_t sh[2] = { n, w };
	int rc = kg_npy_write(path, dt, w ? 2 : 1, sh, data);

	free(path);
	return rc;
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
	float *w = ts->out->enc.w + ts->out->enc.learned;
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
	const float *rows = m->w + m->learned, *st = ts->st_learn;
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
	rc = put_arr(dir, f[0], KG_DT_F4, nl, ts->d0, rows) < 0 ||
	    put_arr(dir, f[1], KG_DT_F4, nl, sw, st) < 0 ||
	    put_arr(dir, f[2], KG_DT_I4, ts->n_loc, 0, gid) < 0 ||
	    put_arr(dir, f[3], KG_DT_U8, ts->p->n_core, 0, ts->order) < 0 ||
	    put_arr(dir, f[4], KG_DT_U8, 5, 0, smp) < 0 ? -1 : 0;
	for (i = 0; i < 5; i++)
		free(f[i]);
	free(gid);
	free(prow);
	free(pst);
	return rc;
}

/* When validating, the best epoch's parameters into dir and its figures
 * into st (gnn/valid.c). */
static int
put_valid(const char *dir, const struct kg_gnn_tstate *ts, json_t *st)
{
	const struct kg_gnn_trained *out = ts->out;

	if (ts->best_w == NULL)
		return 0;
	json_object_set_new(st, "best_valid_mrr",
	    json_real(out->best_valid_mrr));
	json_object_set_new(st, "best_epoch", json_integer(out->best_epoch));
	json_object_set_new(st, "bad_rounds", json_integer(ts->bad_rounds));
	return put_arr(dir, "best_params.npy", KG_DT_F4, out->enc.n_params, 0,
	    ts->best_w) < 0 || put_arr(dir, "best_relations.npy", KG_DT_F4,
	    ts->n_rel_f, 0, ts->best_rel) < 0 ? -1 : 0;
}

/* The log and what put_valid wrote, back into ts (a checkpoint without
 * best state: none). */
static int
get_valid(const struct kg_ckpt *c, struct kg_gnn_tstate *ts)
{
	struct kg_gnn_trained *out = ts->out;
	char *log = kg_ckpt_log(c);

	if (log == NULL)
		return -1;
	kg_strbuf_add(&ts->log, log);
	free(log);
	if (json_object_get(c->state, "best_epoch") == NULL)
		return 0;
	out->best_valid_mrr = kg_ckpt_real(c, "best_valid_mrr");
	out->best_epoch = (uint32_t)kg_ckpt_u64(c, "best_epoch");
	ts->bad_rounds = (uint32_t)kg_ckpt_u64(c, "bad_rounds");
	ts->best_w = kg_xmallocarray(out->enc.n_params + 1, sizeof(float));
	ts->best_rel = kg_xmallocarray(ts->n_rel_f + 1, sizeof(float));
	return kg_ckpt_get_f32(c, "best_params.npy", out->enc.n_params, 0,
	    ts->best_w) < 0 || kg_ckpt_get_f32(c, "best_relations.npy",
	    ts->n_rel_f, 0, ts->best_rel) < 0 ? -1 : 0;
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
	json_object_set_new(st, "train_seconds",
	    json_real(out->train_seconds));
	json_object_set_new(st, "seed",
	    json_integer((json_int_t)ts->o->seed));
	if (put_valid(dir, ts, st) < 0 ||
	    put_arr(dir, "dense.npy", KG_DT_F4, ts->n_dense, 0,
	    out->enc.w + ts->n_lf) < 0 ||
	    put_arr(dir, "dense_state.npy", KG_DT_F4, 2 * ts->n_dense + 1, 0,
	    ts->st_enc) < 0 ||
	    put_arr(dir, "relations.npy", KG_DT_F4, ts->n_rel_f, 0,
	    out->rel) < 0 ||
	    put_arr(dir, "relation_state.npy", KG_DT_F4, 2 * ts->n_rel_f + 1,
	    0, ts->st_rel) < 0)
		kg_ckpt_abort(w);
	else
		rc = kg_ckpt_commit(w, st, ts->log.s ? ts->log.s : "",
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

/* Save the state into ck->dir (collective): rank 0 begins the
 * checkpoint (lib/io/ckpt.h), every rank writes its files into the
 * temporary, rank 0 adds the shared ones and commits. */
int
kg_gnn_ckpt_save(struct kg_gnn_tstate *ts)
{
	const struct kg_gnn_ckpt *ck = ts->o->ckpt;
	struct kg_dist *d = ts->d;
	struct kg_ckpt_writer w = KG_CKPT_WRITER_INIT;
	uint64_t len = 0;
	char *tmp;
	int bad;

	if (d->rank == 0 && kg_ckpt_begin(&w, ck->dir, ck->inputs,
	    ck->n_inputs) == 0)
		len = strlen(w.od.tmp) + 1;
	kg_dist_bcast(d, &len, sizeof(len), 0);
	if (len == 0)
		return -1;
	tmp = d->rank == 0 ? kg_xstrdup(w.od.tmp) : kg_xmalloc(len);
	kg_dist_bcast(d, tmp, len, 0);
	bad = kg_gnn_any_rank(d, ckpt_write_rank(tmp, ts, d->rank) < 0);
	if (d->rank == 0) {
		if (bad)
			kg_ckpt_abort(&w);
		else if (ckpt_write_shared(&w, ts) < 0)
			bad = 1;
	}
	free(tmp);
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
	float *rows = enc->w + enc->learned, *st = ts->st_learn;
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

/* Restore the state from ck->dir after checking that it fits this run;
 * 0, or -1 after kg_error() on this rank. */
static int
ckpt_load_rank(struct kg_gnn_tstate *ts)
{
	struct kg_ckpt c = KG_CKPT_INIT;
	struct kg_gnn_trained *out = ts->out;
	json_t *want = ckpt_shape(ts);
	int rc = -1;

	/* state.json fits this run; every file the ranks wrote is complete
	 * and of its recorded shape. */
	if (kg_ckpt_open(&c, ts->o->ckpt->dir, want, NULL) < 0) {
		json_decref(want);
		return -1;
	}
	if (ckpt_read_rank(c.dir, ts, ts->d->rank) < 0 ||
	    kg_ckpt_get_f32(&c, "dense.npy", ts->n_dense, 0,
	    out->enc.w + ts->n_lf) < 0 ||
	    kg_ckpt_get_f32(&c, "dense_state.npy", 2 * ts->n_dense + 1, 0,
	    ts->st_enc) < 0 ||
	    kg_ckpt_get_f32(&c, "relations.npy", ts->n_rel_f, 0,
	    out->rel) < 0 ||
	    kg_ckpt_get_f32(&c, "relation_state.npy", 2 * ts->n_rel_f + 1, 0,
	    ts->st_rel) < 0)
		goto out;
	ts->epoch = (uint32_t)kg_ckpt_u64(&c, "epoch");
	out->steps = kg_ckpt_u64(&c, "steps");
	out->last_loss = kg_ckpt_real(&c, "last_loss");
	/* The time budget counts the checkpoint's epochs too (0 from a
	 * checkpoint written before it was kept). */
	out->train_seconds = kg_ckpt_real(&c, "train_seconds");
	rc = get_valid(&c, ts);
out:
	kg_ckpt_close(&c);
	json_decref(want);
	return rc;
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
	if (kg_gnn_any_rank(d, ckpt_load_rank(ts) < 0))
		return -1;
	if (!o->quiet && d->rank == 0)
		fprintf(stderr, "%s: resuming after epoch %u from '%s'\n",
		    kg_progname(), ts->epoch, ck->dir);
	return 0;
}
