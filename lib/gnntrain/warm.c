/*
 * gnntrain/warm: a GNN run started from a GNN model directory (gnn_train.h,
 * struct kg_gnn_warm): the model's encoder and decoder relations laid out
 * for the run's dataset, entities and relations matched by name through
 * kge/warmstart.h's kg_warmstart_match.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gnn/step_device.h"
#include "gnntrain/train_state.h"
#include "io/npy.h"
#include "kge/modeldir.h"

/* The encoder settings a model directory or a run has, as one phrase. */
static void
describe(char *buf, size_t cap, const char *enc, const char *decomp,
    const uint32_t *dims, uint32_t n_layers, uint32_t bases,
    const char *decoder, int learned_only)
{
	size_t n;
	uint32_t l;

	n = (size_t)snprintf(buf, cap, "%s (%s, %u bases), dims ", enc, decomp,
	    bases);
	for (l = 0; l <= n_layers && n < cap; l++)
		n += (size_t)snprintf(buf + n, cap - n, "%s%u", l ? "," : "",
		    dims[l]);
	if (n < cap)
		snprintf(buf + n, cap - n, ", decoder %s, %s", decoder,
		    learned_only ? "learned rows only" : "features");
}

/* The model's encoder must be the run's: encoder, decomposition, dims,
 * bases, decoder and whether it reads features. */
static int
check_config(const struct kg_modeldir *md, const char *dir,
    const struct kg_gnn_train_opts *o, int learned_only)
{
	const struct kg_manifest *man = &md->manifest;
	json_t *enc = kg_manifest_get(man, "config.encoder");
	json_t *dec = kg_manifest_get(man, "config.gnn_decomposition");
	json_t *dims = kg_manifest_get(man, "config.gnn_dims");
	json_t *nb = kg_manifest_get(man, "config.gnn_num_bases");
	json_t *lo = kg_manifest_get(man, "config.gnn_learned_only");
	const char *want_enc = kg_gnn_encoder_name(o->enc.encoder);
	const char *want_dec = o->enc.decomp == KG_GNN_BASIS ? "basis" :
	    "block";
	uint32_t md_dims[KG_GNN_MAX_LAYERS + 1] = { 0 }, l, L;
	char a[256], b[256];
	int same;

	if (!json_is_string(enc) || !json_is_string(dec) ||
	    !json_is_array(dims) || !json_is_integer(nb) ||
	    !json_is_boolean(lo) || json_array_size(dims) < 1 ||
	    json_array_size(dims) > KG_GNN_MAX_LAYERS + 1) {
		kg_error("model '%s' is no GNN model (its config has no "
		    "encoder, gnn_dims, gnn_num_bases or gnn_learned_only)",
		    dir);
		return -1;
	}
	L = (uint32_t)json_array_size(dims) - 1;
	for (l = 0; l <= L; l++)
		md_dims[l] = (uint32_t)json_integer_value(json_array_get(dims,
		    l));
	same = strcmp(json_string_value(enc), want_enc) == 0 &&
	    strcmp(json_string_value(dec), want_dec) == 0 &&
	    L == o->enc.n_layers && (uint32_t)json_integer_value(nb) ==
	    o->enc.n_bases && md->model.kind == o->decoder &&
	    json_is_true(lo) == (learned_only != 0);
	for (l = 0; same && l <= L; l++)
		same = md_dims[l] == o->enc.dims[l];
	if (same)
		return 0;
	describe(a, sizeof(a), json_string_value(enc), json_string_value(dec),
	    md_dims, L, (uint32_t)json_integer_value(nb),
	    kg_model_name(md->model.kind), json_is_true(lo));
	describe(b, sizeof(b), want_enc, want_dec, o->enc.dims,
	    o->enc.n_layers, o->enc.n_bases, kg_model_name(o->decoder),
	    learned_only);
	kg_error("model '%s' is %s; this run trains %s", dir, a, b);
	return -1;
}

/* n rows of w floats from src to dst through map (dst row i = src row
 * map[i]; map[i] < 0: dst's row stays). */
static void
copy_rows(float *dst, const float *src, const int64_t *map, uint64_t n,
    size_t w)
{
	uint64_t i;

	for (i = 0; i < n; i++)
		if (map[i] >= 0)
			memcpy(dst + i * w, src + (size_t)map[i] * w,
			    w * sizeof(float));
}

/* The message-type map: type t of the run (relation t mod nd, inverse
 * when t >= nd) from the model's type of the same relation and side. */
static int64_t *
type_map(const int64_t *rmap, uint64_t nd, uint64_t ns)
{
	int64_t *tm = kg_xmallocarray(2 * nd + 1, sizeof(*tm));
	uint64_t r;

	for (r = 0; r < nd; r++) {
		tm[r] = rmap[r];
		tm[nd + r] = rmap[r] < 0 ? -1 : rmap[r] + (int64_t)ns;
	}
	return tm;
}

/* The model's encoder src into the run's dst, both laid out for the same
 * features and dims: the learned rows through emap, the attribute
 * matrices and the relation-free weights as they are, the per-type blocks
 * through rmap. */
static void
copy_encoder(struct kg_gnn *dst, const struct kg_gnn *src,
    const int64_t *emap, const int64_t *rmap)
{
	const struct kg_gnn_config *c = &dst->c;
	size_t d0 = c->dims[0], B = c->n_bases, i;
	uint64_t T = 2 * (uint64_t)c->n_relations;
	int64_t *tm = type_map(rmap, c->n_relations, src->c.n_relations);
	uint32_t l;

	copy_rows(dst->w + dst->learned, src->w + src->learned, emap,
	    c->n_learned, d0);
	for (i = 0; i < dst->n_attrs; i++)
		memcpy(dst->w + dst->attr_off[i], src->w + src->attr_off[i],
		    dst->attr_width[i] * d0 * sizeof(float));
	for (l = 0; l < c->n_layers; l++) {
		const struct kg_gnn_layer_off *so = &src->lay[l];
		const struct kg_gnn_layer_off *o = &dst->lay[l];
		size_t din = c->dims[l], dout = c->dims[l + 1];

		memcpy(dst->w + o->w0, src->w + so->w0,
		    (din * dout + dout) * sizeof(float));
		if (c->encoder == KG_GNN_RGCN && c->decomp == KG_GNN_BASIS) {
			memcpy(dst->w + o->v, src->w + so->v,
			    B * din * dout * sizeof(float));
			copy_rows(dst->w + o->a, src->w + so->a, tm, T, B);
		} else if (c->encoder == KG_GNN_RGCN)
			copy_rows(dst->w + o->q, src->w + so->q, tm, T,
			    din * dout / B);
		else {
			memcpy(dst->w + o->w, src->w + so->w,
			    (din * dout + 3 * dout) * sizeof(float));
			copy_rows(dst->w + o->rel, src->w + so->rel, tm, T,
			    dout);
		}
	}
	free(tm);
}

/* The model's gnn_weights.npy into an encoder laid out for the model's
 * dataset (c with its counts) over features f. */
static int
read_encoder(struct kg_gnn *src, const char *dir,
    const struct kg_gnn_config *c, const struct kg_features *f,
    uint64_t seed)
{
	struct kg_npy a = KG_NPY_INIT;
	char *path = kg_path_join(dir, "gnn_weights.npy");
	int rc = -1;

	if (kg_gnn_init(src, c, f, seed) < 0 ||
	    kg_npy_read_expect(path, KG_DT_F4, 1, &a) < 0)
		goto out;
	if (a.shape[0] != src->n_params) {
		kg_error("'%s' holds %" PRIu64 " floats; this run's encoder "
		    "over the model's %" PRIu64 " entities and %u relations "
		    "has %zu (features of another width?)", path, a.shape[0],
		    c->n_learned, c->n_relations, src->n_params);
		goto out;
	}
	memcpy(src->w, a.data, src->n_params * sizeof(float));
	rc = 0;
out:
	kg_npy_release(&a);
	free(path);
	return rc;
}

/* The ranges of the n flags of mask that are set, as (offset, length)
 * pairs into *r (caller frees), their count into *nr and their floats
 * into *floats. */
static void
ranges(const uint8_t *mask, size_t n, size_t **r, size_t *nr,
    uint64_t *floats)
{
	size_t i = 0, k = 0, j;

	*r = kg_xmallocarray(2 * (n / 2 + 1), sizeof(**r));
	*floats = 0;
	while (i < n) {
		if (!mask[i]) {
			i++;
			continue;
		}
		for (j = i; j < n && mask[j]; j++)
			;
		(*r)[2 * k] = i;
		(*r)[2 * k + 1] = j - i;
		*floats += j - i;
		k++;
		i = j;
	}
	*nr = k;
}

/* Clear the mask of the w floats of row t of a per-type block at off
 * (dense coordinates: off minus the learned table's floats). */
static void
clear_row(uint8_t *mask, size_t off, uint64_t t, size_t w)
{
	memset(mask + off + t * w, 0, w);
}

/*
 * freeze_old from init_from (struct kg_gnn_frozen): the matched
 * entities' learned rows, the dense encoder floats but the per-type
 * blocks of added relations (rmap[r] < 0: types r and nd + r), and with
 * freeze_relations the matched relations' decoder rows of rw floats.
 */
static void
freeze_model(struct kg_gnn_frozen *fz, const struct kg_gnn *enc,
    const int64_t *emap, const int64_t *rmap, size_t rw, int relations)
{
	const struct kg_gnn_config *c = &enc->c;
	size_t lo = enc->learned + c->n_learned * c->dims[0];
	size_t nd = enc->n_params - lo, B = c->n_bases;
	uint64_t nr = c->n_relations, r, i, t;
	uint8_t *mask = kg_xmallocarray(nd + nr * rw + 1, 1);
	uint32_t l;
	int side;

	fz->ent = kg_xcalloc(c->n_learned + 1, 1);
	for (i = 0; i < c->n_learned; i++)
		if (emap[i] >= 0) {
			fz->ent[i] = 1;
			fz->n_ent++;
		}
	memset(mask, 1, nd);
	for (r = 0; r < nr; r++) {
		if (rmap[r] >= 0)
			continue;
		for (side = 0; side < 2; side++) {
			t = r + (side ? nr : 0);
			for (l = 0; l < c->n_layers; l++) {
				const struct kg_gnn_layer_off *o = &enc->lay[l];
				size_t din = c->dims[l], dout = c->dims[l + 1];

				if (c->encoder == KG_GNN_RGCN &&
				    c->decomp == KG_GNN_BASIS)
					clear_row(mask, o->a - lo, t, B);
				else if (c->encoder == KG_GNN_RGCN)
					clear_row(mask, o->q - lo, t,
					    din * dout / B);
				else
					clear_row(mask, o->rel - lo, t, dout);
			}
		}
	}
	ranges(mask, nd, &fz->dense, &fz->n_dense, &fz->dense_floats);
	memset(mask, 0, nr * rw);
	for (r = 0; relations && r < nr; r++)
		if (rmap[r] >= 0) {
			memset(mask + r * rw, 1, rw);
			fz->rel_rows++;
		}
	ranges(mask, nr * rw, &fz->rel, &fz->n_rel, &fz->rel_floats);
	free(mask);
}

/* The counts of one table from its map. */
static void
count_rows(struct kg_warmstart_rows *r, uint64_t n_new, uint64_t n_old)
{
	r->added = n_new - r->matched;
	r->dropped = n_old - r->matched;
}

int
kg_gnn_warm_load(struct kg_gnn_warm *w, const char *dir,
    const struct kg_gnn_train_opts *o, const struct kg_features *f,
    const struct kg_dataset *ds)
{
	struct kg_modeldir md = KG_MODELDIR_INIT;
	struct kg_gnn src = KG_GNN_INIT;
	struct kg_gnn_config sc = o->enc, dc = o->enc;
	int64_t *emap = kg_xmallocarray(ds->n_entities + 1, sizeof(*emap));
	int64_t *rmap = kg_xmallocarray(ds->n_relations + 1, sizeof(*rmap));
	int learned_only = f == NULL || o->enc.learned_only || f->n_attrs == 0;
	size_t dl = o->enc.dims[o->enc.n_layers], rw;
	int rc;

	memset(w, 0, sizeof(*w));
	w->dir = dir;
	rc = kg_modeldir_load(&md, dir);
	if (rc != 0)
		goto out;
	rc = -1;
	if (check_config(&md, dir, o, learned_only) < 0 ||
	    kg_warmstart_match(&md, dir, ds, emap, rmap, &w->st) < 0)
		goto out;
	if (md.n_rel_rows != md.n_relations || md.n_relations > INT32_MAX / 2) {
		kg_error("model '%s' has %" PRIu64 " relation rows for %" PRIu64
		    " relations", dir, md.n_rel_rows, md.n_relations);
		goto out;
	}
	sc.n_relations = (uint32_t)md.n_relations;
	sc.n_learned = md.n_entities;
	dc.n_relations = (uint32_t)ds->n_relations;
	dc.n_learned = ds->n_entities;
	if (read_encoder(&src, dir, &sc, f, o->seed) < 0 ||
	    kg_gnn_init(&w->enc, &dc, f, o->seed) < 0)
		goto out;
	copy_encoder(&w->enc, &src, emap, rmap);
	rw = md.model.rel_width;
	w->n_rel_f = (size_t)ds->n_relations * rw;
	w->rel = kg_xmallocarray(w->n_rel_f + 1, sizeof(float));
	kg_gnn_relations_init(w->rel, w->n_rel_f, dc.n_relations, dl,
	    o->seed);
	copy_rows(w->rel, md.relations, rmap, ds->n_relations, rw);
	count_rows(&w->st.ent, ds->n_entities, md.n_entities);
	count_rows(&w->st.rel, ds->n_relations, md.n_relations);
	if (o->freeze_old)
		freeze_model(&w->frozen, &w->enc, emap, rmap, rw,
		    o->freeze_relations);
	rc = 0;
out:
	if (rc != 0)
		kg_gnn_warm_release(w);
	kg_gnn_release(&src);
	kg_modeldir_release(&md);
	free(emap);
	free(rmap);
	return rc;
}

int
kg_gnn_warm_given(struct kg_gnn_warm *w, const struct kg_gnn_train_opts *o,
    const struct kg_features *f, const struct kg_dataset *ds)
{
	struct kg_npy a = KG_NPY_INIT;
	struct kg_model dec;
	struct kg_gnn_config dc = o->enc;
	int64_t *emap = kg_xmallocarray(ds->n_entities + 1, sizeof(*emap));
	size_t d0 = o->enc.dims[0], dl = o->enc.dims[o->enc.n_layers];
	uint64_t i;
	float *rows;
	int rc = -1;

	memset(w, 0, sizeof(*w));
	w->dir = o->init_entities;
	w->given = 1;
	for (i = 0; i < ds->n_entities; i++)
		emap[i] = -1;
	if (kg_warmstart_read_entities(o->init_entities, o->entity_map, ds,
	    (uint32_t)d0, &a, emap, &w->st.ent.matched) < 0)
		goto out;
	if (w->st.ent.matched == 0) {
		kg_error("%s: names no entity of '%s'", o->entity_map,
		    ds->dir);
		goto out;
	}
	dc.n_relations = (uint32_t)ds->n_relations;
	dc.n_learned = ds->n_entities;
	if (kg_gnn_init(&w->enc, &dc, f, o->seed) < 0)
		goto out;
	rows = w->enc.w + w->enc.learned;
	copy_rows(rows, a.data, emap, ds->n_entities, d0);
	if (kg_model_init(&dec, o->decoder, (uint32_t)dl, 0,
	    (float)o->gamma) < 0)
		goto out;
	w->n_rel_f = (size_t)ds->n_relations * dec.rel_width;
	w->rel = kg_xmallocarray(w->n_rel_f + 1, sizeof(float));
	kg_gnn_relations_init(w->rel, w->n_rel_f, dc.n_relations, dl,
	    o->seed);
	w->st.ent.added = ds->n_entities - w->st.ent.matched;
	w->st.ent.dropped = a.shape[0] - w->st.ent.matched;
	w->st.rel.added = ds->n_relations;
	if (o->freeze_old) {
		w->frozen.ent = kg_xcalloc(ds->n_entities + 1, 1);
		for (i = 0; i < ds->n_entities; i++)
			if (emap[i] >= 0) {
				w->frozen.ent[i] = 1;
				w->frozen.n_ent++;
			}
	}
	rc = 0;
out:
	if (rc != 0)
		kg_gnn_warm_release(w);
	kg_npy_release(&a);
	free(emap);
	return rc;
}

int
kg_gnn_warm_trains(const struct kg_gnn_warm *w,
    const struct kg_gnn_train_opts *o, const struct kg_gnn_problem *p,
    struct kg_dist *d)
{
	const struct kg_gnn_frozen *fz = &w->frozen;
	size_t lo = w->enc.learned + w->enc.c.n_learned * w->enc.c.dims[0];
	uint64_t i, rows = 0;
	uint8_t *need;

	if (!o->freeze_old)
		return 1;
	need = kg_gnn_learned_need(&o->enc, p->feat, p->frow, p->n_nodes);
	for (i = 0; i < p->n_nodes; i++)
		rows += (need == NULL || need[i]) && (fz->ent == NULL ||
		    !fz->ent[p->lrow != NULL ? (uint64_t)p->lrow[i] : i]);
	free(need);
	kg_dist_sum_u64(d, &rows, 1);
	if (rows > 0 || fz->dense_floats < w->enc.n_params - lo ||
	    fz->rel_floats < w->n_rel_f)
		return 1;
	kg_error("--freeze_old: every parameter of '%s' is frozen (the "
	    "learned rows training reads, the encoder weights%s): nothing "
	    "would train", w->dir, o->freeze_relations ? " and the relations" :
	    "");
	return 0;
}

void
kg_gnn_warm_release(struct kg_gnn_warm *w)
{
	kg_gnn_release(&w->enc);
	free(w->rel);
	w->rel = NULL;
	free(w->frozen.ent);
	free(w->frozen.dense);
	free(w->frozen.rel);
	memset(&w->frozen, 0, sizeof(w->frozen));
}

void
kg_gnn_warm_apply(const struct kg_gnn_warm *w, struct kg_gnn_tstate *ts)
{
	struct kg_gnn *enc = &ts->out->enc;
	const float *src = w->enc.w + w->enc.learned;
	float *rows = kg_gnn_learned_rows(enc);
	size_t d0 = ts->d0, i;

	memcpy(enc->w + ts->n_lf, w->enc.w + w->enc.c.n_learned * d0,
	    ts->n_dense * sizeof(float));
	for (i = 0; i < ts->n_loc; i++) {
		size_t g = ts->p->lrow ? (size_t)ts->p->lrow[i] : i;

		if (ts->need == NULL || ts->need[i])
			memcpy(rows + i * d0, src + g * d0, d0 * sizeof(float));
	}
	memcpy(ts->out->rel, w->rel, ts->n_rel_f * sizeof(float));
	if (w->frozen.ent != NULL || w->frozen.n_dense > 0 ||
	    w->frozen.n_rel > 0)
		ts->frozen = &w->frozen;
	if (w->frozen.ent != NULL) {
		ts->frozen_learn = kg_xcalloc(ts->n_loc + 1, 1);
		for (i = 0; i < ts->n_loc; i++)
			ts->frozen_learn[i] = w->frozen.ent[ts->p->lrow ?
			    (size_t)ts->p->lrow[i] : i];
	}
	if (ts->dev != NULL && ts->frozen != NULL)
		kg_gnn_dstep_freeze(ts->dev, ts->frozen_learn,
		    w->frozen.dense, w->frozen.n_dense, w->frozen.rel,
		    w->frozen.n_rel);
	kg_gnn_device_host_changed(ts);
}

int
kg_gnn_warm_take(struct kg_gnn_warm *w, struct kg_gnn_trained *t,
    const struct kg_gnn_train_opts *o)
{
	memset(t, 0, sizeof(*t));
	t->best_valid_mrr = -1.0;
	if (kg_model_init(&t->dec, o->decoder, o->enc.dims[o->enc.n_layers],
	    0, (float)o->gamma) < 0)
		return -1;
	t->enc = w->enc;
	memset(&w->enc, 0, sizeof(w->enc));
	t->rel = w->rel;
	w->rel = NULL;
	t->log = kg_xstrdup("");
	t->stopped_by = "epochs";
	return 0;
}

json_t *
kg_gnn_warm_json(const struct kg_gnn_warm *w, int trained)
{
	json_t *j = json_object();
	const struct kg_warmstart_rows *r[2] = { &w->st.ent, &w->st.rel };
	static const char *const name[2] = { "entities", "relations" };
	const struct kg_gnn_frozen *fz = &w->frozen;
	int k;

	json_object_set_new(j, "path", json_string(w->dir));
	for (k = 0; k < 2; k++) {
		json_t *c = json_object();

		json_object_set_new(c, "matched",
		    json_integer((json_int_t)r[k]->matched));
		json_object_set_new(c, "added",
		    json_integer((json_int_t)r[k]->added));
		json_object_set_new(c, "dropped",
		    json_integer((json_int_t)r[k]->dropped));
		json_object_set_new(j, name[k], c);
	}
	json_object_set_new(j, "optimizer_state", json_string(trained ?
	    "reset" : "none"));
	json_object_set_new(j, "frozen", json_pack("{s:I,s:I,s:I}",
	    "entities", (json_int_t)fz->n_ent, "encoder_floats",
	    (json_int_t)fz->dense_floats, "relations",
	    (json_int_t)fz->rel_rows));
	return j;
}

char *
kg_gnn_warm_format(const struct kg_gnn_warm *w, int trained, char *buf,
    size_t cap)
{
	const struct kg_gnn_frozen *fz = &w->frozen;
	size_t n;

	if (w->given)
		snprintf(buf, cap, "warm start from '%s': entities %" PRIu64
		    " given, %" PRIu64 " not (fresh learned rows), %" PRIu64
		    " rows dropped; %s", w->dir, w->st.ent.matched,
		    w->st.ent.added, w->st.ent.dropped, trained ?
		    "the encoder and relations start fresh" :
		    "not trained (--epochs 0)");
	else
		snprintf(buf, cap, "warm start from '%s': entities %" PRIu64
		    " matched, %" PRIu64 " added (encoded from their %s and "
		    "edges), %" PRIu64 " dropped; relations %" PRIu64
		    " matched, %" PRIu64 " added (random), %" PRIu64
		    " dropped; %s", w->dir, w->st.ent.matched,
		    w->st.ent.added, w->enc.c.learned_only ?
		    "fresh learned rows" : "attributes", w->st.ent.dropped,
		    w->st.rel.matched, w->st.rel.added, w->st.rel.dropped,
		    trained ? "Adam moments start at zero (a GNN model "
		    "directory keeps none)" : "not trained (--epochs 0)");
	n = strlen(buf);
	if (trained && (fz->ent != NULL || fz->n_dense > 0) && n < cap)
		snprintf(buf + n, cap - n, "; frozen: %" PRIu64 " entities' "
		    "learned rows, %" PRIu64 " encoder floats, %" PRIu64
		    " relations", fz->n_ent, fz->dense_floats, fz->rel_rows);
	return buf;
}
