#include "kge/modeldir.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "io/dataset.h"
#include "io/stage.h"
#include "store/store.h"

int
kg_check_finite(const char *what, const float *x, uint64_t rows,
    uint64_t cols)
{
	uint64_t i, n = rows * cols;
	int bad = 0;

	/* A branch-free scan first: NaN and inf are rare, so only look for
	 * the position once the whole array has been found guilty. */
	for (i = 0; i < n; i++)
		bad |= !isfinite(x[i]);
	if (!bad)
		return 0;
	for (i = 0; i < n; i++)
		if (!isfinite(x[i]))
			break;
	kg_error("%s: row %llu, column %llu is %s", what,
	    (unsigned long long)(i / cols), (unsigned long long)(i % cols),
	    isnan(x[i]) ? "nan" : "infinite");
	return -1;
}

/* Map name in dir as float32 [rows, cols] and check every value. */
static int
read_table(const char *dir, const char *name, uint64_t rows, uint64_t cols,
    struct kg_npy *a)
{
	char *path = dir ? kg_path_join(dir, name) : kg_xstrdup(name);
	int rc = -1;

	if (kg_npy_read_expect(path, KG_DT_F4, 2, a) < 0)
		goto out;
	if (a->shape[0] != rows || a->shape[1] != cols) {
		kg_error("%s: shape [%llu, %llu], expected [%llu, %llu]",
		    path, (unsigned long long)a->shape[0],
		    (unsigned long long)a->shape[1],
		    (unsigned long long)rows, (unsigned long long)cols);
		kg_npy_release(a);
		goto out;
	}
	if (kg_check_finite(path, a->data, rows, cols) < 0) {
		kg_npy_release(a);
		goto out;
	}
	rc = 0;
out:
	free(path);
	return rc;
}

static int
config_u64(const struct kg_manifest *man, const char *dir, const char *key,
    int required, uint64_t *out)
{
	char *path = kg_xasprintf("config.%s", key);
	int rc = 0;

	if (kg_manifest_get(man, path) == NULL && !required)
		*out = 0;
	else if (kg_manifest_get_u64(man, path, out) < 0) {
		kg_error("%s/manifest.json: config.%s is missing or not a "
		    "non-negative integer", dir, key);
		rc = -1;
	}
	free(path);
	return rc;
}

static int
model_from_config(struct kg_modeldir *md, const char *dir)
{
	const struct kg_manifest *man = &md->manifest;
	json_t *jm = kg_manifest_get(man, "config.model");
	json_t *jg = kg_manifest_get(man, "config.gamma");
	json_t *jr = kg_manifest_get(man, "config.reciprocal");
	enum kg_model_kind kind;
	uint64_t dim, rel_dim;

	if (!json_is_string(jm)) {
		kg_error("%s/manifest.json: config.model is missing", dir);
		return -1;
	}
	if (kg_model_parse(json_string_value(jm), &kind) < 0)
		return -1;
	if (config_u64(man, dir, "dim", 1, &dim) < 0 ||
	    config_u64(man, dir, "rel_dim", 0, &rel_dim) < 0 ||
	    config_u64(man, dir, "n_entities", 1, &md->n_entities) < 0 ||
	    config_u64(man, dir, "n_relations", 1, &md->n_relations) < 0)
		return -1;
	if (jg != NULL && !json_is_number(jg)) {
		kg_error("%s/manifest.json: config.gamma is not a number", dir);
		return -1;
	}
	if (jr != NULL && !json_is_boolean(jr)) {
		kg_error("%s/manifest.json: config.reciprocal is not a "
		    "boolean", dir);
		return -1;
	}
	if (dim > UINT32_MAX || rel_dim > UINT32_MAX) {
		kg_error("%s/manifest.json: dimension too large", dir);
		return -1;
	}
	md->reciprocal = json_is_true(jr);
	md->n_rel_rows = md->n_relations * (md->reciprocal ? 2 : 1);
	return kg_model_init(&md->model, kind, (uint32_t)dim,
	    (uint32_t)rel_dim, jg ? (float)json_number_value(jg) : 0.0f);
}

int
kg_modeldir_load(struct kg_modeldir *md, const char *dir)
{
	int rc;

	*md = (struct kg_modeldir)KG_MODELDIR_INIT;
	rc = kg_manifest_load(&md->manifest, dir, "kg-train");
	if (rc < 0)
		return rc;
	if (kg_manifest_verify(&md->manifest, dir, 0) < 0 ||
	    model_from_config(md, dir) < 0 ||
	    read_table(dir, "entities.npy", md->n_entities, md->model.dim,
	    &md->ent) < 0 ||
	    read_table(dir, "relations.npy", md->n_rel_rows,
	    md->model.rel_width, &md->rel) < 0) {
		kg_modeldir_release(md);
		return -1;
	}
	md->entities = md->ent.data;
	md->relations = md->rel.data;
	return 0;
}

/* The dimension a relation row of "width" floats implies, or 0. */
static uint32_t
rel_dim_of(enum kg_model_kind kind, uint32_t dim, uint64_t width)
{
	if (kind != KG_MODEL_TRANSR)
		return dim;
	if (width % ((uint64_t)dim + 1) != 0 || width == 0)
		return 0;
	return (uint32_t)(width / ((uint64_t)dim + 1));
}

int
kg_modeldir_from_arrays(struct kg_modeldir *md, const char *ent_path,
    const char *rel_path, const char *model_name, float gamma,
    int reciprocal)
{
	enum kg_model_kind kind;
	enum kg_dtype dt;
	uint64_t eshape[KG_NPY_MAXDIM], rshape[KG_NPY_MAXDIM];
	size_t off;
	int endim, rndim;
	uint32_t rel_dim;

	*md = (struct kg_modeldir)KG_MODELDIR_INIT;
	if (kg_model_parse(model_name, &kind) < 0)
		return -1;
	if (kg_npy_read_header(ent_path, &dt, &endim, eshape, &off) < 0 ||
	    kg_npy_read_header(rel_path, &dt, &rndim, rshape, &off) < 0)
		return -1;
	if (endim != 2 || rndim != 2) {
		kg_error("%s: expected a 2-dimensional array",
		    endim != 2 ? ent_path : rel_path);
		return -1;
	}
	if (eshape[1] == 0 || eshape[1] > UINT32_MAX) {
		kg_error("%s: bad embedding dimension %llu", ent_path,
		    (unsigned long long)eshape[1]);
		return -1;
	}
	rel_dim = rel_dim_of(kind, (uint32_t)eshape[1], rshape[1]);
	if (rel_dim == 0) {
		kg_error("%s: width %llu does not fit TransR with entity "
		    "dimension %llu (expected k * (dim + 1))", rel_path,
		    (unsigned long long)rshape[1],
		    (unsigned long long)eshape[1]);
		return -1;
	}
	if (kg_model_init(&md->model, kind, (uint32_t)eshape[1], rel_dim,
	    gamma) < 0)
		return -1;
	if (rshape[1] != md->model.rel_width) {
		kg_error("%s: relation rows have %llu values, %s with "
		    "dimension %u needs %u", rel_path,
		    (unsigned long long)rshape[1], kg_model_name(kind),
		    md->model.dim, md->model.rel_width);
		return -1;
	}
	if (reciprocal && rshape[0] % 2 != 0) {
		kg_error("%s: %llu relation rows; reciprocal relations need "
		    "an even count", rel_path, (unsigned long long)rshape[0]);
		return -1;
	}
	md->reciprocal = reciprocal;
	md->n_entities = eshape[0];
	md->n_rel_rows = rshape[0];
	md->n_relations = reciprocal ? rshape[0] / 2 : rshape[0];
	if (read_table(NULL, ent_path, md->n_entities, md->model.dim,
	    &md->ent) < 0 ||
	    read_table(NULL, rel_path, md->n_rel_rows, md->model.rel_width,
	    &md->rel) < 0) {
		kg_modeldir_release(md);
		return -1;
	}
	md->entities = md->ent.data;
	md->relations = md->rel.data;
	return 0;
}

void
kg_modeldir_release(struct kg_modeldir *md)
{
	kg_npy_release(&md->ent);
	kg_npy_release(&md->rel);
	kg_manifest_release(&md->manifest);
	*md = (struct kg_modeldir)KG_MODELDIR_INIT;
}

struct kg_store *
kg_modeldir_ents(const struct kg_modeldir *md, struct kg_store **own)
{
	*own = NULL;
	if (md->ents != NULL)
		return md->ents;
	if (md->entities == NULL) {
		kg_error("the model has no entity rows");
		return NULL;
	}
	*own = kg_store_open_rows(md->entities, md->n_entities, md->model.dim);
	return *own;
}

/* The config keys every model dir has (see modeldir.h). */
static void
set_model_config(struct kg_manifest *man, const struct kg_model *m,
    int reciprocal, uint64_t n_entities, uint64_t n_relations,
    const char *dataset)
{
	kg_manifest_set_config(man, "model",
	    json_string(kg_model_name(m->kind)));
	kg_manifest_set_config(man, "dim", json_integer(m->dim));
	kg_manifest_set_config(man, "rel_dim", json_integer(m->rel_dim));
	kg_manifest_set_config(man, "gamma", json_real(m->gamma));
	kg_manifest_set_config(man, "reciprocal", json_boolean(reciprocal));
	kg_manifest_set_config(man, "n_entities",
	    json_integer((json_int_t)n_entities));
	kg_manifest_set_config(man, "n_relations",
	    json_integer((json_int_t)n_relations));
	if (dataset != NULL)
		kg_manifest_set_config(man, "dataset", json_string(dataset));
}

int
kg_modeldir_write(const char *dir, const struct kg_model *m,
    int reciprocal, uint64_t n_entities, uint64_t n_relations,
    const float *ent, const float *rel, const char *dataset,
    struct kg_manifest *man)
{
	uint64_t es[2] = { n_entities, m->dim };
	uint64_t rs[2] = { n_relations * (reciprocal ? 2 : 1), m->rel_width };

	if (kg_manifest_put_npy(man, dir, "entities.npy", KG_DT_F4, 2, es,
	    ent) < 0 || kg_manifest_put_npy(man, dir, "relations.npy",
	    KG_DT_F4, 2, rs, rel) < 0)
		return -1;
	set_model_config(man, m, reciprocal, n_entities, n_relations, dataset);
	return 0;
}

int
kg_modeldir_check_paths(const char *output, const char *ckpt,
    const char *swap, const char *const *inputs, size_t n)
{
	if (kg_stage_check_path("output", output, inputs, n, 0) < 0 ||
	    (ckpt != NULL && kg_stage_check_path("checkpoint", ckpt, inputs,
	    n, 0) < 0) ||
	    (swap != NULL && kg_stage_check_path("swap dir", swap, inputs, n,
	    1) < 0))
		return -1;
	return 0;
}

int
kg_modeldir_begin(struct kg_modeldir_writer *w,
    const struct kg_modeldir_spec *spec)
{
	const char **in;
	char *ep, *sp = NULL;
	size_t n = 0, i;
	int rc;

	*w = (struct kg_modeldir_writer)KG_MODELDIR_WRITER_INIT;
	w->spec = spec;
	/* Here, not only in the drivers, so that no trainer can replace
	 * what it read. */
	for (i = 0; spec->inputs != NULL && spec->inputs[i][0] != NULL; i++)
		;
	in = kg_xcalloc(i + 1, sizeof(*in));
	if (spec->dataset != NULL)
		in[n++] = spec->dataset;
	for (i = 0; spec->inputs != NULL && spec->inputs[i][0] != NULL; i++)
		in[n++] = spec->inputs[i][1];
	rc = kg_stage_check_path("output", spec->dir, in, n, 0);
	free(in);
	if (rc < 0 || kg_outdir_begin(&w->od, spec->dir, spec->force) < 0)
		return -1;
	ep = kg_outdir_file(&w->od, "entities.npy");
	if (spec->state_width > 0)
		sp = kg_outdir_file(&w->od, "entity_state.npy");
	rc = kg_table_writer_open(&w->table, ep, sp, spec->n_entities,
	    spec->model->dim, spec->state_width, spec->order);
	free(ep);
	free(sp);
	if (rc < 0)
		kg_outdir_abort(&w->od);
	return rc;
}

void
kg_modeldir_abort(struct kg_modeldir_writer *w)
{
	kg_table_writer_abort(&w->table);
	kg_outdir_abort(&w->od);
}

/* Write float32 [rows, cols] (cols 0: [rows]) as name into the temporary
 * and record it. */
static int
put_array(struct kg_modeldir_writer *w, struct kg_manifest *man,
    const char *name, uint64_t rows, uint64_t cols, const float *x)
{
	uint64_t sh[2] = { rows, cols };

	return kg_manifest_put_npy(man, w->od.tmp, name, KG_DT_F4,
	    cols ? 2 : 1, sh, x);
}

/* Every file but the entity table, into the temporary and man. */
static int
write_rest(struct kg_modeldir_writer *w, struct kg_manifest *man)
{
	const struct kg_modeldir_spec *s = w->spec;
	uint64_t nr = s->n_relations * (s->reciprocal ? 2 : 1);
	size_t i;

	if (kg_manifest_add_file(man, w->od.tmp, "entities.npy") < 0 ||
	    (s->state_width > 0 && kg_manifest_add_file(man, w->od.tmp,
	    "entity_state.npy") < 0) ||
	    put_array(w, man, "relations.npy", nr, s->model->rel_width,
	    s->rel) < 0 ||
	    (s->rel_state != NULL && put_array(w, man, "relation_state.npy",
	    nr, s->rel_state_width, s->rel_state) < 0))
		return -1;
	for (i = 0; i < s->n_extra; i++)
		if (put_array(w, man, s->extra[i].name, s->extra[i].n, 0,
		    s->extra[i].x) < 0)
			return -1;
	if (s->log != NULL && (kg_write_text(w->od.tmp, "train_log.jsonl",
	    s->log) < 0 || kg_manifest_add_file(man, w->od.tmp,
	    "train_log.jsonl") < 0))
		return -1;
	return 0;
}

/* The dataset's dictionaries (config.dictionaries), by which readers
 * tell whether another dataset numbers the same names alike. */
static int
record_dicts(struct kg_manifest *man, const char *dataset)
{
	struct kg_manifest ds = KG_MANIFEST_INIT;
	json_t *d;

	if (kg_manifest_load(&ds, dataset, NULL) < 0)
		return -1;
	d = kg_dataset_dicts(&ds);
	if (d != NULL)
		kg_manifest_set_config(man, "dictionaries", d);
	kg_manifest_release(&ds);
	return 0;
}

/* The inputs, config and figures of the manifest. */
static int
describe(const struct kg_modeldir_spec *s, struct kg_manifest *man)
{
	const char *key;
	json_t *v;
	size_t i;

	if (s->dataset != NULL && kg_manifest_add_input(man, "dataset",
	    s->dataset) < 0)
		return -1;
	for (i = 0; s->inputs != NULL && s->inputs[i][0] != NULL; i++)
		if (kg_manifest_add_input(man, s->inputs[i][0],
		    s->inputs[i][1]) < 0)
			return -1;
	set_model_config(man, s->model, s->reciprocal, s->n_entities,
	    s->n_relations, s->dataset);
	if (s->dataset != NULL && record_dicts(man, s->dataset) < 0)
		return -1;
	if (s->config != NULL)
		json_object_foreach(s->config, key, v)
			kg_manifest_set_config(man, key, json_incref(v));
	if (s->figures != NULL)
		json_object_foreach(s->figures, key, v)
			kg_manifest_set_figure(man, key, json_incref(v));
	return 0;
}

int
kg_modeldir_commit(struct kg_modeldir_writer *w)
{
	const struct kg_modeldir_spec *s = w->spec;
	struct kg_manifest man = KG_MANIFEST_INIT;
	int rc = -1;

	kg_manifest_init(&man, s->argc, s->argv);
	if (kg_table_writer_close(&w->table) < 0 || describe(s, &man) < 0 ||
	    write_rest(w, &man) < 0 || kg_manifest_write(&man, w->od.tmp) < 0)
		goto out;
	rc = kg_outdir_commit(&w->od);
out:
	if (rc < 0)
		kg_modeldir_abort(w);
	kg_manifest_release(&man);
	return rc;
}
