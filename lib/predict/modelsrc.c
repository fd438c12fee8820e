#include "predict/modelsrc.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/util.h"
#include "io/dict.h"
#include "io/npy.h"
#include "io/tabread.h"
#include "report/label.h"

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

	to.comments = 0;	/* a name may start with '#' */
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

int
kg_modelsrc_load(struct kg_modeldir *md, const struct kg_modelsrc *src,
    const struct kg_dataset *ds)
{
	if (src->modeldir != NULL)
		return kg_modeldir_load(md, src->modeldir);
	return load_foreign(md, src, ds);
}

const char *
kg_modelsrc_title(const struct kg_modeldir *md, char *buf, size_t cap)
{
	json_t *e = md->manifest.root != NULL ?
	    kg_manifest_get(&md->manifest, "config.encoder") : NULL;

	return kg_label_model(json_is_string(e) ? json_string_value(e) : NULL,
	    kg_model_name(md->model.kind), buf, cap);
}
