/* The kg-encode-attrs subcommands end to end (declared in attrs.h). */
#include "app/attrs_run.h"
#include "app/attrs_run_impl.h"

#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/progress.h"
#include "io/dataset.h"
#include "io/manifest.h"
#include "io/stage.h"
#include "core/util.h"

#define TOOL "kg-encode-attrs"

/* The dataset's entity names as a dictionary (name -> ID). */
static int
load_entities(const char *dir, struct kg_dataset *ds, struct kg_dict *ents)
{
	char **names = NULL;
	uint64_t n = 0, i;
	int rc;

	rc = kg_dataset_load(ds, dir);
	if (rc < 0)
		return rc;
	if (kg_dataset_names(ds, "entities.tsv", &names, &n) < 0)
		return -1;
	kg_dict_init(ents);
	rc = 0;
	if (n != ds->n_entities) {
		kg_error("%s: entities.tsv has %llu names, the manifest %llu",
		    dir, (unsigned long long)n,
		    (unsigned long long)ds->n_entities);
		rc = -1;
	}
	for (i = 0; rc == 0 && i < n; i++) {
		int added = 0;

		if (kg_dict_intern(ents, names[i], strlen(names[i]), &added) <
		    0 || !added) {
			kg_error("%s/entities.tsv: duplicate entity '%s'", dir,
			    names[i]);
			rc = -1;
		}
	}
	kg_names_free(names, n);
	return rc;
}

/* Where table i of the schema is: absolute paths stay, relative ones are
 * taken from base. */
static char *
table_path(const char *base, const char *path)
{
	if (path[0] == '/' || base == NULL || strcmp(base, ".") == 0)
		return kg_xstrdup(path);
	return kg_path_join(base, path);
}

void
kg_attrs_run_free_paths(char **paths, size_t n)
{
	size_t i;

	for (i = 0; paths != NULL && i < n; i++)
		free(paths[i]);
	free(paths);
}

/*
 * One line per step (lib/core/progress.h's wording): the entities it
 * covered, its time and rate.  Each step is one call, so there is no
 * ETA within it.  *t is the step's start and becomes the next's.
 */
void
kg_attrs_run_progress(const struct kg_attrs_opts *o, const char *what,
    uint64_t n, double *t)
{
	char line[160];
	double now = kg_now();

	if (kg_progress_wanted(o->quiet, o->progress)) {
		kg_progress_format(line, sizeof(line), what, "entities", n, 0,
		    now - *t, 1);
		fprintf(stderr, "%s: %s\n", TOOL, line);
	}
	*t = now;
}

static json_t *
attr_figures(const struct kg_attrs_model *m)
{
	json_t *f = json_object();
	size_t i;

	for (i = 0; i < m->schema.n_attrs; i++) {
		const struct kg_attr_enc *e = &m->enc[i];
		json_t *a = json_object();

		json_object_set_new(a, "slots", json_integer((json_int_t)e->slots));
		json_object_set_new(a, "fit_values",
		    json_integer((json_int_t)e->n_values));
		json_object_set_new(a, "fit_entities",
		    json_integer((json_int_t)e->n_entities));
		if (m->schema.attrs[i].kind == KG_ATTR_TEXT && !e->external &&
		    !m->schema.attrs[i].transformer) {
			json_object_set_new(a, "vocabulary",
			    json_integer(e->text.n_vocab));
			json_object_set_new(a, "energy",
			    json_real(e->text.energy));
		}
		json_object_set_new(f, m->schema.attrs[i].output, a);
	}
	return f;
}

static void
data_figures(struct kg_manifest *man, const struct kg_attrs_data *d)
{
	kg_manifest_set_figure(man, "rows", json_integer((json_int_t)d->n_rows));
	kg_manifest_set_figure(man, "values",
	    json_integer((json_int_t)d->n_values));
	kg_manifest_set_figure(man, "skipped_bad_rows",
	    json_integer((json_int_t)d->n_errors));
	kg_manifest_set_figure(man, "skipped_unknown_entity_rows",
	    json_integer((json_int_t)d->n_skipped_entities));
}

/*
 * The inputs of a stage that reads a dataset (and a model) and tables:
 * the directories are recorded in the manifest, the schema and the tables
 * only checked against the output.  A new array of n_tables + 3.
 */
static struct kg_stage_input *
stage_inputs(const struct kg_attrs_opts *o, char *const *tables,
    size_t n_tables, size_t *n)
{
	struct kg_stage_input *in = kg_xcalloc(n_tables + 3, sizeof(*in));
	size_t i, k = 0;

	in[k].role = "dataset";
	in[k++].path = o->dataset;
	if (o->model != NULL) {
		in[k].role = "model";
		in[k++].path = o->model;
	}
	if (o->schema != NULL)
		in[k++].path = o->schema;
	for (i = 0; i < n_tables; i++)
		in[k++].path = tables[i];
	*n = k;
	return in;
}

int
kg_attrs_run_begin(struct kg_stage *st, const struct kg_attrs_opts *o,
    char *const *tables, size_t n_tables)
{
	size_t n;
	struct kg_stage_input *in = stage_inputs(o, tables, n_tables, &n);
	int rc = kg_stage_begin(st, o->output, o->force, in, n, o->argc,
	    o->argv);

	free(in);
	return rc;
}

/*
 * A schema attribute that no table names (no wide table has its column,
 * no long table a row of it) would silently become an all-missing
 * feature; it is a mistake in the schema or the tables.
 */
static int
check_attrs_named(const struct kg_attr_schema *s,
    const struct kg_attrs_data *d)
{
	size_t i;

	for (i = 0; i < s->n_attrs; i++)
		if (!d->named[i]) {
			kg_error("%s: attributes.%s: no table has a column "
			    "'%s'", s->path, s->attrs[i].name,
			    s->attrs[i].name);
			return -1;
		}
	return 0;
}

/* The tables of the model, with their paths and checksums. */
static int
record_tables(struct kg_attrs_model *model, char *const *paths, size_t n)
{
	char sum[32];
	size_t i;

	for (i = 0; i < n; i++) {
		json_t *t = json_object();
		char *abs = realpath(paths[i], NULL);

		if (kg_checksum_file(paths[i], sum) < 0) {
			free(abs);
			json_decref(t);
			return -1;
		}
		json_object_set_new(t, "path", json_string(abs ? abs :
		    paths[i]));
		json_object_set_new(t, "checksum", json_string(sum));
		json_array_append_new(model->tables, t);
		free(abs);
	}
	return 0;
}

static void
fit_manifest(struct kg_manifest *man, const struct kg_attrs_opts *o,
    const struct kg_attrs_model *model, const struct kg_attrs_data *data,
    uint64_t n_entities, double t0)
{
	kg_manifest_set_config(man, "schema", json_string(o->schema));
	kg_manifest_set_config(man, "tables", json_incref(model->tables));
	kg_manifest_set_config(man, "max_errors",
	    json_integer((json_int_t)o->max_errors));
	kg_manifest_set_config(man, "text_command", o->text_command ?
	    json_string(o->text_command) : json_null());
	kg_manifest_set_config(man, "attributes", kg_attrs_describe(model));
	kg_manifest_set_figure(man, "entities",
	    json_integer((json_int_t)n_entities));
	data_figures(man, data);
	kg_manifest_set_figure(man, "attributes", attr_figures(model));
	kg_manifest_set_figure(man, "seconds", json_real(kg_now() - t0));
	kg_manifest_set_figure(man, "peak_rss_kib",
	    json_integer((json_int_t)kg_peak_rss_kib()));
}

int
kg_attrs_run_fit(const struct kg_attrs_opts *o)
{
	struct kg_attr_schema schema = KG_ATTR_SCHEMA_INIT;
	struct kg_dataset ds = KG_DATASET_INIT;
	struct kg_dict ents = KG_DICT_INIT;
	struct kg_attrs_data data = KG_ATTRS_DATA_INIT;
	struct kg_attrs_model model = KG_ATTRS_MODEL_INIT;
	struct kg_stage st = KG_STAGE_INIT;
	char **paths = NULL, *sdir = NULL, *base;
	double t0 = kg_now(), t1 = t0;
	size_t i;
	int rc;

	if (kg_attr_schema_load(&schema, o->schema) < 0)
		return -1;
	rc = load_entities(o->dataset, &ds, &ents);
	if (rc < 0)
		goto out;
	sdir = kg_xstrdup(o->schema);
	base = o->tables_dir ? (char *)o->tables_dir : dirname(sdir);
	paths = kg_xcalloc(schema.n_tables, sizeof(char *));
	for (i = 0; i < schema.n_tables; i++)
		paths[i] = table_path(base, schema.tables[i].path);
	rc = kg_attrs_run_begin(&st, o, paths, schema.n_tables);
	if (rc < 0)
		goto out;
	rc = -1;
	if (kg_attrs_collect(&data, &schema, (const char *const *)paths, &ents,
	    0, ds.n_entities, o->max_errors) < 0 ||
	    check_attrs_named(&schema, &data) < 0)
		goto out;
	kg_attrs_run_progress(o, "read the tables of", ds.n_entities, &t1);
	if (kg_attrs_fit(&model, &schema, &data, ds.n_entities,
	    o->text_command) < 0)
		goto out;
	kg_attrs_run_progress(o, "fitted the encoders to", ds.n_entities, &t1);
	if (record_tables(&model, paths, schema.n_tables) < 0 ||
	    kg_attrs_model_write(&model, st.dir) < 0 ||
	    kg_manifest_add_dir(&st.manifest, st.dir) < 0)
		goto out;
	fit_manifest(&st.manifest, o, &model, &data, ds.n_entities, t0);
	rc = kg_stage_commit(&st);
	kg_attrs_run_progress(o, "wrote the model of", ds.n_entities, &t1);
out:
	kg_stage_release(&st);
	kg_attrs_model_release(&model);
	kg_attrs_data_release(&data);
	kg_attrs_run_free_paths(paths, schema.n_tables);
	free(sdir);
	kg_dict_release(&ents);
	kg_dataset_release(&ds);
	kg_attr_schema_release(&schema);
	return rc;
}

int
kg_attrs_run_load_model(const char *dir, struct kg_attrs_model *m,
    char sum[32])
{
	struct kg_manifest man = KG_MANIFEST_INIT;
	char *path;
	int rc;

	rc = kg_manifest_load(&man, dir, TOOL);
	if (rc == 0 && kg_manifest_get(&man, "config.schema") == NULL) {
		kg_error("%s: not a kg-encode-attrs model (no schema)", dir);
		rc = -1;
	}
	if (rc == 0)
		rc = kg_manifest_verify(&man, dir, 0);
	kg_manifest_release(&man);
	if (rc < 0)
		return rc;
	path = kg_path_join(dir, "manifest.json");
	rc = kg_checksum_file(path, sum);
	free(path);
	if (rc < 0)
		return -1;
	return kg_attrs_model_read(m, dir);
}

char **
kg_attrs_run_tables(const struct kg_attrs_model *model,
    const struct kg_attrs_opts *o)
{
	const char *tables_dir = o->tables_dir;
	size_t n = model->schema.n_tables, i;
	char **paths = kg_xcalloc(n, sizeof(char *)), sum[32];

	for (i = 0; i < n; i++) {
		json_t *t = json_array_get(model->tables, i);
		const char *rec = json_string_value(json_object_get(t, "path"));
		const char *want = json_string_value(json_object_get(t,
		    "checksum"));

		if (o->table_paths != NULL)
			paths[i] = kg_xstrdup(o->table_paths[i]);
		else if (tables_dir != NULL)
			paths[i] = table_path(tables_dir,
			    model->schema.tables[i].path);
		else
			paths[i] = kg_xstrdup(rec ? rec : "");
		if (kg_checksum_file(paths[i], sum) < 0)
			goto fail;
		if (want == NULL || strcmp(want, sum) != 0) {
			kg_error("%s: table changed since fit (checksum %s, "
			    "model has %s)", paths[i], sum,
			    want ? want : "none");
			goto fail;
		}
	}
	return paths;
fail:
	kg_attrs_run_free_paths(paths, n);
	return NULL;
}

static json_t *
pair(uint64_t a, uint64_t b)
{
	json_t *p = json_array();

	json_array_append_new(p, json_integer((json_int_t)a));
	json_array_append_new(p, json_integer((json_int_t)b));
	return p;
}

static void
transform_manifest(struct kg_manifest *man, const struct kg_attrs_opts *o,
    const struct kg_attrs_model *model, const struct kg_attrs_data *data,
    uint64_t n_entities, const char *msum, double t0)
{
	uint64_t n = data->hi - data->lo;

	kg_manifest_set_config(man, "range", pair(data->lo, data->hi));
	kg_manifest_set_config(man, "dataset_entities",
	    json_integer((json_int_t)n_entities));
	kg_manifest_set_config(man, "shard", pair(o->shard, o->n_shards));
	kg_manifest_set_config(man, "model_checksum", json_string(msum));
	kg_manifest_set_config(man, "attributes", kg_attrs_describe(model));
	kg_manifest_set_figure(man, "entities", json_integer((json_int_t)n));
	data_figures(man, data);
	kg_manifest_set_figure(man, "seconds", json_real(kg_now() - t0));
	kg_manifest_set_figure(man, "entities_per_second",
	    json_real((double)n / (kg_now() - t0 + 1e-9)));
	kg_manifest_set_figure(man, "peak_rss_kib",
	    json_integer((json_int_t)kg_peak_rss_kib()));
}

int
kg_attrs_run_transform(const struct kg_attrs_opts *o)
{
	struct kg_dataset ds = KG_DATASET_INIT;
	struct kg_dict ents = KG_DICT_INIT;
	struct kg_attrs_data data = KG_ATTRS_DATA_INIT;
	struct kg_attrs_model model = KG_ATTRS_MODEL_INIT;
	struct kg_stage st = KG_STAGE_INIT;
	char **paths = NULL, msum[32];
	json_t *figs = NULL;
	double t0 = kg_now(), t1 = t0;
	uint64_t lo, hi;
	int rc;

	rc = kg_attrs_run_load_model(o->model, &model, msum);
	if (rc < 0)
		return rc;
	rc = load_entities(o->dataset, &ds, &ents);
	if (rc < 0)
		goto out;
	rc = -1;
	paths = kg_attrs_run_tables(&model, o);
	if (paths == NULL)
		goto out;
	lo = ds.n_entities * o->shard / o->n_shards;
	hi = ds.n_entities * (o->shard + 1) / o->n_shards;
	rc = kg_attrs_run_begin(&st, o, paths, model.schema.n_tables);
	if (rc < 0)
		goto out;
	rc = -1;
	if (kg_attrs_collect(&data, &model.schema, (const char *const *)paths,
	    &ents, lo, hi, o->max_errors) < 0)
		goto out;
	kg_attrs_run_progress(o, "read the tables of", hi - lo, &t1);
	figs = json_object();
	model.place = o->place;
	if (kg_attrs_encode(&model, &data, o->text_command, st.dir, figs) < 0)
		goto out;
	kg_attrs_run_progress(o, "encoded", hi - lo, &t1);
	if (kg_manifest_add_dir(&st.manifest, st.dir) < 0)
		goto out;
	transform_manifest(&st.manifest, o, &model, &data, ds.n_entities, msum,
	    t0);
	kg_manifest_set_figure(&st.manifest, "attributes", figs);
	figs = NULL;
	rc = kg_stage_commit(&st);
out:
	if (figs != NULL)
		json_decref(figs);
	kg_stage_release(&st);
	kg_attrs_data_release(&data);
	kg_attrs_run_free_paths(paths, model.schema.n_tables);
	kg_attrs_model_release(&model);
	kg_dict_release(&ents);
	kg_dataset_release(&ds);
	return rc;
}

struct shard_info {
	const char *dir;
	uint64_t index, count, lo, hi, n;	/* n: its dataset's entities */
};

static int
cmp_shard(const void *a, const void *b)
{
	const struct shard_info *x = a, *y = b;

	return (x->index > y->index) - (x->index < y->index);
}

/* Read a shard's manifest: which shard, which range, which model. */
static int
read_shard(const char *dir, const char *msum, struct shard_info *s)
{
	struct kg_manifest man = KG_MANIFEST_INIT;
	json_t *sh, *rg, *ms, *ne;
	int rc;

	rc = kg_manifest_load(&man, dir, TOOL);
	if (rc < 0)
		return rc;
	sh = kg_manifest_get(&man, "config.shard");
	rg = kg_manifest_get(&man, "config.range");
	ms = kg_manifest_get(&man, "config.model_checksum");
	ne = kg_manifest_get(&man, "config.dataset_entities");
	rc = -1;
	if (!json_is_array(sh) || json_array_size(sh) != 2 ||
	    !json_is_array(rg) || json_array_size(rg) != 2 ||
	    !json_is_string(ms))
		kg_error("%s: not a kg-encode-attrs shard", dir);
	else if (strcmp(json_string_value(ms), msum) != 0)
		kg_error("%s: made with another model than the one given",
		    dir);
	else if (kg_manifest_verify(&man, dir, 1) == 0) {
		s->dir = dir;
		s->index = (uint64_t)json_integer_value(json_array_get(sh, 0));
		s->count = (uint64_t)json_integer_value(json_array_get(sh, 1));
		s->lo = (uint64_t)json_integer_value(json_array_get(rg, 0));
		s->hi = (uint64_t)json_integer_value(json_array_get(rg, 1));
		s->n = json_is_integer(ne) ? (uint64_t)json_integer_value(ne) :
		    UINT64_MAX;
		rc = 0;
	}
	kg_manifest_release(&man);
	return rc;
}

int
kg_attrs_run_order_shards(const struct kg_attrs_model *model,
    const char *msum, const char *const *inputs, size_t n, const char **dirs,
    uint64_t *n_entities)
{
	struct shard_info *sh = kg_xcalloc(n, sizeof(*sh));
	size_t i;
	int rc = 0;

	for (i = 0; rc == 0 && i < n; i++)
		rc = read_shard(inputs[i], msum, &sh[i]);
	if (rc < 0)
		goto out;
	rc = -1;
	qsort(sh, n, sizeof(*sh), cmp_shard);
	for (i = 0; i < n; i++)
		if (sh[i].n == UINT64_MAX)
			sh[i].n = model->n_entities;
	for (i = 0; i < n; i++) {
		if (sh[i].n != sh[0].n) {
			kg_error("%s encodes a dataset of %llu entities, %s one "
			    "of %llu", sh[i].dir, (unsigned long long)sh[i].n,
			    sh[0].dir, (unsigned long long)sh[0].n);
			goto out;
		}
		if (sh[i].count != n || sh[i].index != i) {
			kg_error("%s is shard %llu/%llu; merge needs shards "
			    "0/%zu to %zu/%zu, each once", sh[i].dir,
			    (unsigned long long)sh[i].index,
			    (unsigned long long)sh[i].count, n, n - 1, n);
			goto out;
		}
		if (sh[i].lo != (i == 0 ? 0 : sh[i - 1].hi) || (i + 1 == n &&
		    sh[i].hi != sh[i].n)) {
			kg_error("%s: entity range [%llu, %llu) does not "
			    "continue the previous shard", sh[i].dir,
			    (unsigned long long)sh[i].lo,
			    (unsigned long long)sh[i].hi);
			goto out;
		}
		dirs[i] = sh[i].dir;
	}
	*n_entities = n > 0 ? sh[0].n : model->n_entities;
	rc = 0;
out:
	free(sh);
	return rc;
}

int
kg_attrs_run_merge_into(struct kg_stage *st,
    const struct kg_attrs_model *model, const char *msum,
    const char *const *dirs, size_t n, uint64_t n_entities, double t0)
{
	if (kg_attrs_merge_arrays(model, dirs, n, st->dir) < 0 ||
	    kg_manifest_add_dir(&st->manifest, st->dir) < 0)
		return -1;
	kg_manifest_set_config(&st->manifest, "shards",
	    json_integer((json_int_t)n));
	kg_manifest_set_config(&st->manifest, "model_checksum",
	    json_string(msum));
	kg_manifest_set_config(&st->manifest, "attributes",
	    kg_attrs_describe(model));
	kg_manifest_set_figure(&st->manifest, "entities",
	    json_integer((json_int_t)n_entities));
	kg_manifest_set_figure(&st->manifest, "seconds",
	    json_real(kg_now() - t0));
	return 0;
}

int
kg_attrs_run_merge(const struct kg_attrs_opts *o)
{
	struct kg_attrs_model model = KG_ATTRS_MODEL_INIT;
	struct kg_stage st = KG_STAGE_INIT;
	struct kg_stage_input *in = NULL;
	const char **dirs;
	char msum[32];
	double t0 = kg_now();
	uint64_t ne = 0;
	size_t i;
	int rc;

	rc = kg_attrs_run_load_model(o->model, &model, msum);
	if (rc < 0)
		return rc;
	dirs = kg_xcalloc(o->n_inputs, sizeof(char *));
	rc = kg_attrs_run_order_shards(&model, msum, o->inputs, o->n_inputs,
	    dirs, &ne);
	if (rc < 0)
		goto out;
	in = kg_xcalloc(o->n_inputs + 1, sizeof(*in));
	in[0].role = "model";
	in[0].path = o->model;
	for (i = 0; i < o->n_inputs; i++) {
		in[i + 1].role = "shard";
		in[i + 1].path = dirs[i];
	}
	rc = kg_stage_begin(&st, o->output, o->force, in, o->n_inputs + 1,
	    o->argc, o->argv);
	if (rc < 0)
		goto out;
	rc = -1;
	if (kg_attrs_run_merge_into(&st, &model, msum, dirs, o->n_inputs, ne,
	    t0) == 0)
		rc = kg_stage_commit(&st);
out:
	kg_stage_release(&st);
	free(in);
	free(dirs);
	kg_attrs_model_release(&model);
	return rc;
}
