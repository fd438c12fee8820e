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

void
kg_gnn_warm_release(struct kg_gnn_warm *w)
{
	kg_gnn_release(&w->enc);
	free(w->rel);
	w->rel = NULL;
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
	return j;
}

char *
kg_gnn_warm_format(const struct kg_gnn_warm *w, int trained, char *buf,
    size_t cap)
{
	snprintf(buf, cap, "warm start from '%s': entities %" PRIu64
	    " matched, %" PRIu64 " added (encoded from their %s and edges), %"
	    PRIu64 " dropped; relations %" PRIu64 " matched, %" PRIu64
	    " added (random), %" PRIu64 " dropped; %s", w->dir,
	    w->st.ent.matched, w->st.ent.added, w->enc.c.learned_only ?
	    "fresh learned rows" : "attributes", w->st.ent.dropped,
	    w->st.rel.matched, w->st.rel.added, w->st.rel.dropped, trained ?
	    "Adam moments start at zero (a GNN model directory keeps none)" :
	    "not trained (--epochs 0)");
	return buf;
}
