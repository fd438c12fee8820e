#include "predict/export.h"

#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "io/dict.h"
#include "io/stage.h"
#include "predict/outfile.h"
#include "store/store.h"

static const char *const format_names[] = { "tsv", "word2vec", "projector" };

int
kg_export_format_parse(const char *s, enum kg_export_format *out)
{
	size_t i;

	for (i = 0; i < KG_ARRAY_LEN(format_names); i++)
		if (strcmp(s, format_names[i]) == 0) {
			*out = (enum kg_export_format)i;
			return 0;
		}
	kg_error("--format: '%s' is not tsv, word2vec or projector", s);
	return -1;
}

/* The table to export: rows of width floats, with a name each; the
 * entity rows through the model's store, the relation rows in memory. */
struct table {
	struct kg_store *st;	/* entities; NULL: relations in x */
	struct kg_store *own;	/* st, when opened here */
	const float *x;
	float *scratch;		/* a row read from the store */
	uint64_t rows, width;
	char **names;
	uint64_t n_names;
};

/* Row i of the table: in the store or a copy in t->scratch; NULL after
 * kg_error() when it cannot be read. */
static const float *
table_row(const struct table *t, uint64_t i)
{
	if (t->st == NULL)
		return t->x + i * t->width;
	return kg_store_view(t->st, i, 1, t->scratch);
}

/* Names of the table's rows (relations of a reciprocal model get their
 * inverses as "name^-1").  0 or -1. */
static int
table_names(struct table *t, const struct kg_dataset *ds, int relations,
    int reciprocal)
{
	uint64_t n, i;

	if (kg_dataset_names(ds, relations ? "relations.tsv" :
	    "entities.tsv", &t->names, &n) < 0)
		return -1;
	t->n_names = n;
	if (!relations || !reciprocal)
		return 0;
	t->names = kg_xreallocarray(t->names, 2 * n + 1, sizeof(char *));
	for (i = 0; i < n; i++)
		t->names[n + i] = kg_xasprintf("%s^-1", t->names[i]);
	t->n_names = 2 * n;
	return 0;
}

/*
 * word2vec fields are separated by spaces: spaces (and vertical tabs and
 * form feeds, which readers strip) in names become '_', and two names
 * that then agree are an error.  0 or -1.
 */
static int
word2vec_names(struct table *t, const char *what)
{
	struct kg_dict seen = KG_DICT_INIT;
	uint64_t i;
	int rc = 0;
	char *p;

	for (i = 0; i < t->n_names && rc == 0; i++) {
		int added;
		int64_t id;

		for (p = t->names[i]; *p; p++)
			if (*p == ' ' || *p == '\v' || *p == '\f')
				*p = '_';
		id = kg_dict_intern(&seen, t->names[i], strlen(t->names[i]),
		    &added);
		if (id < 0)
			rc = -1;
		else if (!added) {
			kg_error("%s %llu and %lld are both '%s' once spaces "
			    "become '_' (word2vec separates fields by spaces; "
			    "--format tsv keeps names as they are)", what,
			    (unsigned long long)i, (long long)id,
			    t->names[i]);
			rc = -1;
		}
	}
	kg_dict_release(&seen);
	return rc;
}

/* One row: optional name, then the values, sep between fields. */
static void
put_row(FILE *f, const char *name, const float *x, uint64_t n, char sep)
{
	uint64_t j;

	if (name != NULL) {
		fputs(name, f);
		putc(sep, f);
	}
	for (j = 0; j < n; j++) {
		fprintf(f, "%.9g", (double)x[j]);
		putc(j + 1 < n ? sep : '\n', f);
	}
}

/* tsv or word2vec to a file or stdout. */
static int
write_text(const struct kg_export_opts *o, const struct table *t)
{
	const char *inputs[4] = { o->dataset, o->src.modeldir, o->src.entities,
	    o->src.relations };
	struct kg_outfile out;
	char sep = o->format == KG_EXPORT_WORD2VEC ? ' ' : '\t';
	const float *x;
	uint64_t i;

	if (kg_outfile_open(&out, o->output, o->force, inputs, 4) < 0)
		return -1;
	if (o->format == KG_EXPORT_WORD2VEC)
		fprintf(out.f, "%llu %llu\n", (unsigned long long)t->rows,
		    (unsigned long long)t->width);
	for (i = 0; i < t->rows && !ferror(out.f); i++) {
		if ((x = table_row(t, i)) == NULL) {
			kg_outfile_abort(&out);
			return -1;
		}
		put_row(out.f, t->names[i], x, t->width, sep);
	}
	if (ferror(out.f)) {
		kg_error_errno("cannot write '%s'", out.path ? out.path :
		    "stdout");
		kg_outfile_abort(&out);
		return -1;
	}
	return kg_outfile_commit(&out);
}

/* Write name's lines into dir/name; 0 or -1. */
static int
projector_file(const char *dir, const char *name, const struct table *t,
    int vectors)
{
	char *path;
	FILE *f = kg_wfile_open(dir, name, &path);
	const float *x;
	uint64_t i;

	if (f == NULL)
		return -1;
	for (i = 0; i < t->rows; i++) {
		if (!vectors) {
			fprintf(f, "%s\n", t->names[i]);
			continue;
		}
		if ((x = table_row(t, i)) == NULL) {
			/* The stage's temporary directory goes with it. */
			fclose(f);
			free(path);
			return -1;
		}
		put_row(f, NULL, x, t->width, '\t');
	}
	return kg_wfile_close(f, path, 0);
}

static int
write_projector(const struct kg_export_opts *o, const struct table *t)
{
	const struct kg_stage_input in[] = { { "dataset", o->dataset },
	    { o->src.modeldir ? "model" : NULL, o->src.modeldir },
	    { NULL, o->src.entities }, { NULL, o->src.relations } };
	struct kg_stage st = KG_STAGE_INIT;
	int rc;

	if (o->output == NULL || strcmp(o->output, "-") == 0) {
		kg_error("--format projector writes a directory: give -o DIR");
		return -1;
	}
	rc = kg_stage_begin(&st, o->output, o->force, in, KG_ARRAY_LEN(in),
	    o->argc, o->argv);
	if (rc == 0)
		rc = projector_file(st.dir, "vectors.tsv", t, 1);
	if (rc == 0)
		rc = projector_file(st.dir, "metadata.tsv", t, 0);
	if (rc == 0 && (kg_stage_add_file(&st, "vectors.tsv") < 0 ||
	    kg_stage_add_file(&st, "metadata.tsv") < 0))
		rc = -1;
	if (rc == 0) {
		kg_manifest_set_config(&st.manifest, "table", json_string(
		    o->relations ? "relations" : "entities"));
		kg_manifest_set_figure(&st.manifest, "rows",
		    json_integer((json_int_t)t->rows));
		kg_manifest_set_figure(&st.manifest, "dim",
		    json_integer((json_int_t)t->width));
		rc = kg_stage_commit(&st);
	}
	kg_stage_release(&st);
	return rc;
}

/* Pick the table (kg_modelsrc_load checked the model against the
 * dataset). */
static int
pick_table(const struct kg_export_opts *o, const struct kg_dataset *ds,
    const struct kg_modeldir *md, struct table *t)
{
	t->rows = o->relations ? md->n_rel_rows : md->n_entities;
	t->width = o->relations ? md->model.rel_width : md->model.dim;
	if (o->relations)
		t->x = md->relations;
	else if ((t->st = kg_modeldir_ents(md, &t->own)) == NULL)
		return -1;
	t->scratch = kg_xmallocarray(t->width + 1, sizeof(float));
	if (table_names(t, ds, o->relations, md->reciprocal) < 0)
		return -1;
	if (t->n_names != t->rows) {
		kg_error("%llu names for %llu rows", (unsigned long long)
		    t->n_names, (unsigned long long)t->rows);
		return -1;
	}
	return 0;
}

int
kg_export_run(const struct kg_export_opts *o)
{
	struct kg_dataset ds = KG_DATASET_INIT;
	struct kg_modeldir md = KG_MODELDIR_INIT;
	struct table t;
	int rc;

	memset(&t, 0, sizeof(t));
	rc = kg_dataset_load(&ds, o->dataset);
	if (rc == 0)
		rc = kg_modelsrc_load(&md, &o->src, &ds);
	if (rc == 0 && pick_table(o, &ds, &md, &t) < 0)
		rc = -1;
	if (rc == 0 && o->format == KG_EXPORT_WORD2VEC &&
	    word2vec_names(&t, o->relations ? "relations" : "entities") < 0)
		rc = -1;
	if (rc == 0)
		rc = o->format == KG_EXPORT_PROJECTOR ? write_projector(o, &t) :
		    write_text(o, &t);
	kg_names_free(t.names, t.n_names);
	kg_store_free(t.own);
	free(t.scratch);
	kg_modeldir_release(&md);
	kg_dataset_release(&ds);
	return rc;
}
