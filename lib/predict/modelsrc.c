#include "predict/modelsrc.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "core/util.h"
#include "io/dict.h"
#include "io/npy.h"
#include "io/tabread.h"
#include "report/label.h"
#include "store/store.h"

/* A mapping file read: names and the array row of each. */
struct rowmap {
	struct kg_dict names;
	uint64_t *row;		/* row[id of name in names] */
	uint64_t n, cap;
};

/* One "row<TAB>name" record of line "line"; 0 or -1. */
static int
map_record(struct rowmap *m, const char *file, uint64_t line,
    const struct kg_field *f, size_t nf, uint64_t rows)
{
	uint64_t row;
	int64_t id;
	int added;

	if (nf != 2) {
		kg_error("%s:%llu: expected 'row<TAB>name', found %zu fields",
		    file, (unsigned long long)line, nf);
		return -1;
	}
	if (kg_field_u64(&f[0], UINT64_MAX, &row) < 0) {
		kg_error("%s:%llu: '%.*s' is not a row number", file,
		    (unsigned long long)line, (int)(f[0].len > 40 ? 40 :
		    f[0].len), f[0].s);
		return -1;
	}
	if (row >= rows) {
		kg_error("%s:%llu: row %llu is past the array's %llu rows",
		    file, (unsigned long long)line, (unsigned long long)row,
		    (unsigned long long)rows);
		return -1;
	}
	id = kg_dict_intern(&m->names, f[1].s, f[1].len, &added);
	if (id < 0)
		return -1;
	if (!added) {
		kg_error("%s:%llu: name '%.*s' was given a row before", file,
		    (unsigned long long)line, (int)(f[1].len > 80 ? 80 :
		    f[1].len), f[1].s);
		return -1;
	}
	if (m->n == m->cap) {
		m->cap = m->cap ? 2 * m->cap : 1024;
		m->row = kg_xreallocarray(m->row, m->cap, sizeof(*m->row));
	}
	m->row[m->n++] = row;
	return 0;
}

/* Read a mapping file against an array of "rows" rows.  0 or -1. */
static int
map_read(struct rowmap *m, const char *path, uint64_t rows)
{
	struct kg_tab_opts to = KG_TAB_OPTS_INIT;
	struct kg_tabread *r;
	struct kg_field f[2];
	uint64_t row;
	size_t nf;
	int rc, first = 1;

	to.comment = '\0';	/* a name may start with '#' */
	if (kg_tabread_open(&r, path, &to) < 0)
		return -1;
	while ((rc = kg_tabread_next(r, f, 2, &nf)) == 1) {
		/* A header ("id<TAB>label") names no row. */
		if (first && nf == 2 &&
		    kg_field_u64(&f[0], UINT64_MAX, &row) < 0) {
			first = 0;
			continue;
		}
		first = 0;
		if (map_record(m, kg_tabread_name(r), kg_tabread_line(r), f,
		    nf, rows) < 0) {
			rc = -1;
			break;
		}
	}
	kg_tabread_close(r);
	return rc < 0 ? -1 : 0;
}

/*
 * The row of the array for each of the n names of the dataset's "file"
 * (entities.tsv or relations.tsv), from mapping "path".  A new array, or
 * NULL after kg_error().
 */
static uint64_t *
rows_by_name(const struct kg_dataset *ds, const char *file, const char *path,
    uint64_t rows, const char *what)
{
	struct rowmap m;
	char **names = NULL;
	uint64_t n = 0, i, *out = NULL;

	memset(&m, 0, sizeof(m));
	kg_dict_init(&m.names);
	if (ds == NULL) {
		kg_error("a mapping file needs the dataset's names");
		goto out;
	}
	if (map_read(&m, path, rows) < 0 ||
	    kg_dataset_names(ds, file, &names, &n) < 0)
		goto out;
	out = kg_xmallocarray(n + 1, sizeof(*out));
	for (i = 0; i < n; i++) {
		int64_t id = kg_dict_find(&m.names, names[i],
		    strlen(names[i]));

		if (id < 0) {
			kg_error("%s: %s '%s' (ID %llu of '%s') has no row",
			    path, what, names[i], (unsigned long long)i,
			    ds->dir);
			free(out);
			out = NULL;
			goto out;
		}
		out[i] = m.row[id];
	}
out:
	kg_names_free(names, n);
	kg_dict_release(&m.names);
	free(m.row);
	return out;
}

/*
 * Copy rows of a (float32 or float64) into a new float32 array of n rows:
 * row i from row rows[i] (rows NULL: row i).  NULL after kg_error() for a
 * value float32 cannot hold.
 */
static float *
to_f32(const struct kg_npy *a, const char *path, const uint64_t *rows,
    uint64_t n)
{
	uint64_t c = a->shape[1], i, j;
	float *out = kg_xmallocarray(n * c + 1, sizeof(float));

	for (i = 0; i < n; i++) {
		uint64_t src = rows ? rows[i] : i;

		if (a->dtype == KG_DT_F4) {
			memcpy(out + i * c, (const float *)a->data + src * c,
			    c * sizeof(float));
			continue;
		}
		for (j = 0; j < c; j++) {
			double v = ((const double *)a->data)[src * c + j];

			if (isfinite(v) && fabs(v) > FLT_MAX) {
				kg_error("%s: row %llu, column %llu: %g is "
				    "beyond float32", path, (unsigned long long)
				    src, (unsigned long long)j, v);
				free(out);
				return NULL;
			}
			out[i * c + j] = (float)v;
		}
	}
	return out;
}

/* Map an array made elsewhere: 2-dimensional, float32 or float64. */
static int
open_array(const char *path, struct kg_npy *a)
{
	if (kg_npy_read_expect(path, KG_DT_NONE, 2, a) < 0)
		return -1;
	if (a->dtype != KG_DT_F4 && a->dtype != KG_DT_F8) {
		kg_error("%s: dtype '%s'; expected float32 or float64", path,
		    kg_dtype_descr(a->dtype));
		kg_npy_release(a);
		return -1;
	}
	return 0;
}

/* What one array needs: a copy in a new order or type, or nothing. */
struct conv {
	const char *path;	/* the user's file */
	const char *map;	/* its mapping, or NULL */
	const char *names;	/* "entities.tsv" or "relations.tsv" */
	const char *what;	/* "entity" or "relation" */
	char *copy;		/* the float32 copy written, or NULL */
};

/* Write the float32 version of c->path into dir, if it needs one.  0 or
 * -1. */
static int
convert(struct conv *c, const struct kg_dataset *ds, const char *dir,
    int quiet)
{
	struct kg_npy a = KG_NPY_INIT;
	uint64_t *rows = NULL, shape[2];
	float *x = NULL;
	int rc = -1;

	if (open_array(c->path, &a) < 0)
		return -1;
	if (a.dtype == KG_DT_F4 && c->map == NULL) {
		kg_npy_release(&a);
		return 0;
	}
	if (a.dtype == KG_DT_F8 && !quiet)
		fprintf(stderr, "%s: note: '%s' holds float64; using it as "
		    "float32\n", kg_progname(), c->path);
	shape[0] = a.shape[0];
	shape[1] = a.shape[1];
	if (c->map != NULL) {
		rows = rows_by_name(ds, c->names, c->map, a.shape[0],
		    c->what);
		if (rows == NULL)
			goto out;
		shape[0] = strcmp(c->names, "entities.tsv") == 0 ?
		    ds->n_entities : ds->n_relations;
	}
	x = to_f32(&a, c->path, rows, shape[0]);
	if (x == NULL)
		goto out;
	c->copy = kg_path_join(dir, strcmp(c->what, "entity") == 0 ?
	    "entities.npy" : "relations.npy");
	rc = kg_npy_write(c->copy, KG_DT_F4, 2, shape, x);
	if (rc < 0) {
		free(c->copy);
		c->copy = NULL;
	}
out:
	free(x);
	free(rows);
	kg_npy_release(&a);
	return rc;
}

/* 1 when c needs a float32 copy in dataset order (a mapping or float64
 * values), 0 if not, -1 after kg_error() for an unreadable header (the
 * message kg_modeldir_from_arrays would give first). */
static int
needs_copy(const struct conv *c)
{
	uint64_t shape[KG_NPY_MAXDIM];
	enum kg_dtype dt;
	size_t off;
	int nd;

	if (kg_npy_read_header(c->path, &dt, &nd, shape, &off) < 0)
		return -1;
	return c->map != NULL || dt == KG_DT_F8;
}

/* A private temporary directory for the copies; NULL after kg_error(). */
static char *
make_tmpdir(void)
{
	const char *base = getenv("TMPDIR");
	char *t;

	if (base == NULL || *base == '\0')
		base = "/tmp";
	t = kg_xasprintf("%s/kgpipe-arrays.XXXXXX", base);
	if (mkdtemp(t) == NULL) {
		kg_error_errno("cannot create a directory in '%s'", base);
		free(t);
		return NULL;
	}
	return t;
}

static int
load_foreign(struct kg_modeldir *md, const struct kg_modelsrc *s,
    const struct kg_dataset *ds)
{
	struct conv c[2] = {
		{ s->entities, s->entity_map, "entities.tsv", "entity", NULL },
		{ s->relations, s->relation_map, "relations.tsv", "relation",
		    NULL } };
	enum kg_model_kind kind;
	char *dir;
	int k, n0, n1, rc = -1;

	if (s->relation_map != NULL && s->reciprocal) {
		kg_error("a relation mapping cannot be combined with "
		    "reciprocal relations");
		return -1;
	}
	/* Checked in the order kg_modeldir_from_arrays checks, so that a
	 * plain call gives its messages unchanged. */
	if (kg_model_parse(s->model, &kind) < 0 ||
	    (n0 = needs_copy(&c[0])) < 0 || (n1 = needs_copy(&c[1])) < 0)
		return -1;
	/* Plain float32 arrays in dataset order are used as they are. */
	if (!n0 && !n1)
		return kg_modeldir_from_arrays(md, s->entities, s->relations,
		    s->model, (float)s->gamma, s->reciprocal);
	dir = make_tmpdir();
	if (dir == NULL)
		return -1;
	if (convert(&c[0], ds, dir, s->quiet) == 0 &&
	    convert(&c[1], ds, dir, s->quiet) == 0)
		rc = kg_modeldir_from_arrays(md, c[0].copy ? c[0].copy :
		    s->entities, c[1].copy ? c[1].copy : s->relations,
		    s->model, (float)s->gamma, s->reciprocal);
	/* The arrays stay mapped after their names are gone. */
	for (k = 0; k < 2; k++) {
		if (c[k].copy != NULL)
			unlink(c[k].copy);
		free(c[k].copy);
	}
	rmdir(dir);
	free(dir);
	return rc;
}

/*
 * perm[i]: the ID in dataset dir "from" of name i of ds's "file"
 * (entities.tsv or relations.tsv).  A new array, or NULL after kg_error()
 * when a name of ds is not in from.
 */
static uint64_t *
perm_by_name(const char *model, const char *from,
    const struct kg_dataset *ds, const char *file, const char *what)
{
	struct kg_dataset old = KG_DATASET_INIT;
	struct kg_dict ids;
	char **a = NULL, **b = NULL;
	uint64_t na = 0, nb = 0, i, *perm = NULL;
	int added;

	kg_dict_init(&ids);
	old.dir = (char *)from;
	if (kg_dataset_names(&old, file, &a, &na) < 0 ||
	    kg_dataset_names(ds, file, &b, &nb) < 0)
		goto out;
	/* Interned in ID order, so that a name's dict ID is its old ID. */
	for (i = 0; i < na; i++)
		if (kg_dict_intern(&ids, a[i], strlen(a[i]), &added) < 0)
			goto out;
	perm = kg_xmallocarray(nb + 1, sizeof(*perm));
	for (i = 0; i < nb; i++) {
		int64_t id = na == nb ? kg_dict_find(&ids, b[i],
		    strlen(b[i])) : -1;

		if (id < 0 || (uint64_t)id >= na) {
			kg_error("model '%s' was trained on dataset '%s', whose "
			    "%s names differ from those of '%s' ('%s' is not "
			    "among them); use the model with the dataset it "
			    "was trained on", model, from, what, ds->dir, b[i]);
			free(perm);
			perm = NULL;
			goto out;
		}
		perm[i] = (uint64_t)id;
	}
out:
	kg_names_free(a, na);
	kg_names_free(b, nb);
	kg_dict_release(&ids);
	return perm;
}

/* Put the rows of *a in the order rows[0..n) (row i = old row rows[i]):
 * a float32 copy written to dir and mapped in place of *a. */
static int
reorder(struct kg_npy *a, const char *dir, const char *name,
    const uint64_t *rows, uint64_t n)
{
	struct kg_npy b = KG_NPY_INIT;
	char *path = kg_path_join(dir, name);
	uint64_t shape[2] = { n, a->shape[1] };
	float *x = to_f32(a, path, rows, n);
	int rc = -1;

	if (x != NULL && kg_npy_write(path, KG_DT_F4, 2, shape, x) == 0 &&
	    kg_npy_read_expect(path, KG_DT_F4, 2, &b) == 0) {
		kg_npy_release(a);
		*a = b;
		rc = 0;
	}
	/* The array stays mapped after its name is gone. */
	unlink(path);
	free(path);
	free(x);
	return rc;
}

/* The model's rows put in ds's ID order: perm[k] for entities (k 0) and
 * relations (k 1), NULL where the order is already ds's. */
static int
remap(struct kg_modeldir *md, uint64_t *const perm[2])
{
	uint64_t nr = md->n_relations, *rows = NULL, i;
	char *dir = make_tmpdir();
	int rc = -1;

	if (dir == NULL)
		return -1;
	if (perm[0] != NULL && reorder(&md->ent, dir, "entities.npy",
	    perm[0], md->n_entities) < 0)
		goto out;
	if (perm[1] != NULL) {
		/* Reciprocal tables: row r + nr is the inverse of row r. */
		rows = kg_xmallocarray(md->n_rel_rows + 1, sizeof(*rows));
		for (i = 0; i < md->n_rel_rows; i++)
			rows[i] = i < nr ? perm[1][i] : perm[1][i - nr] + nr;
		if (reorder(&md->rel, dir, "relations.npy", rows,
		    md->n_rel_rows) < 0)
			goto out;
	}
	md->entities = md->ent.data;
	md->relations = md->rel.data;
	md->reordered = 1;
	rc = 0;
out:
	free(rows);
	rmdir(dir);
	free(dir);
	return rc;
}

/*
 * The one check of a model against the dataset it is used with: the
 * counts, then the dictionaries recorded at training (modeldir.h's
 * config.dictionaries) against ds's.  Same names in another order: the
 * rows are mapped by name, through the training dataset's files, with a
 * note; other names, or a training dataset no longer there to map by:
 * refused.  Models without dictionaries (foreign arrays, older model
 * dirs) are checked by their counts only.
 */
static int
fit_dataset(struct kg_modeldir *md, const struct kg_modelsrc *src,
    const struct kg_dataset *ds)
{
	static const char *const files[2] = { "entities.tsv",
	    "relations.tsv" };
	static const char *const what[2] = { "entity", "relation" };
	struct kg_manifest old = KG_MANIFEST_INIT;
	const char *model = src->modeldir, *from;
	json_t *rec, *from_dicts = NULL;
	uint64_t *perm[2] = { NULL, NULL };
	int k, same[2], rc = -1;

	if (md->n_entities != ds->n_entities ||
	    md->n_relations != ds->n_relations) {
		kg_error("model has %llu entities and %llu relations, dataset "
		    "'%s' has %llu and %llu", (unsigned long long)
		    md->n_entities, (unsigned long long)md->n_relations,
		    ds->dir, (unsigned long long)ds->n_entities,
		    (unsigned long long)ds->n_relations);
		return -1;
	}
	rec = md->manifest.root != NULL ?
	    kg_manifest_get(&md->manifest, "config.dictionaries") : NULL;
	for (k = 0; k < 2; k++)
		same[k] = kg_dataset_dict_same(rec, ds, files[k]);
	if (same[0] != 0 && same[1] != 0)
		return 0;
	from = json_string_value(kg_manifest_get(&md->manifest,
	    "config.dataset"));
	if (from != NULL && kg_path_exists(from) &&
	    kg_manifest_load(&old, from, "kg-ingest") == 0)
		from_dicts = kg_dataset_dicts(&old);
	kg_manifest_release(&old);
	if (from == NULL || from_dicts == NULL ||
	    !json_equal(from_dicts, rec)) {
		kg_error("model '%s' was trained on dataset '%s', whose %s IDs "
		    "differ from those of '%s', and that dataset is not there "
		    "(or has changed) to map them by name; use the model with "
		    "the dataset it was trained on", model, from ? from : "?",
		    what[same[0] == 0 ? 0 : 1], ds->dir);
		goto out;
	}
	for (k = 0; k < 2; k++)
		if (same[k] == 0 && (perm[k] = perm_by_name(model, from, ds,
		    files[k], what[k])) == NULL)
			goto out;
	if (remap(md, perm) < 0)
		goto out;
	if (!src->quiet)
		fprintf(stderr, "%s: note: model '%s' was trained on dataset "
		    "'%s', which numbers the same names in another order; "
		    "its rows are mapped to '%s' by name\n", kg_progname(),
		    model, from, ds->dir);
	rc = 0;
out:
	json_decref(from_dicts);
	free(perm[0]);
	free(perm[1]);
	return rc;
}

int
kg_modelsrc_load(struct kg_modeldir *md, const struct kg_modelsrc *src,
    const struct kg_dataset *ds)
{
	int rc = src->modeldir != NULL ? kg_modeldir_load(md, src->modeldir) :
	    load_foreign(md, src, ds);

	if (rc < 0 || ds == NULL)
		return rc;
	if (fit_dataset(md, src, ds) < 0) {
		kg_modeldir_release(md);
		return -1;
	}
	return 0;
}

const char *
kg_modelsrc_title(const struct kg_modeldir *md, char *buf, size_t cap)
{
	json_t *e = md->manifest.root != NULL ?
	    kg_manifest_get(&md->manifest, "config.encoder") : NULL;

	return kg_label_model(json_is_string(e) ? json_string_value(e) : NULL,
	    kg_model_name(md->model.kind), buf, cap);
}

int
kg_modelsrc_stream(struct kg_modeldir *md, const struct kg_modelsrc *src,
    struct kg_store **own)
{
	char *path;

	*own = NULL;
	/* The file's rows are the model's only in the dataset's order. */
	if (src->modeldir == NULL && src->entity_map != NULL) {
		kg_error("--stream reads '%s' in its own row order; it cannot "
		    "be combined with --entity-map", src->entities);
		return -1;
	}
	if (md->reordered) {
		kg_error("--stream reads '%s' in its own row order, that of "
		    "another dataset; use the dataset it was trained on, or "
		    "leave --stream out", src->modeldir);
		return -1;
	}
	path = src->modeldir ? kg_path_join(src->modeldir, "entities.npy") :
	    kg_xstrdup(src->entities);
	*own = kg_store_open_npy_stream(path);
	free(path);
	if (*own == NULL)
		return -1;
	md->ents = *own;
	if (md->ent.map != NULL)
		madvise(md->ent.map, md->ent.maplen, MADV_DONTNEED);
	return 0;
}
