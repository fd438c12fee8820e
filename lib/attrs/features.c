/*
 * features: the feature-directory reader; see features.h.
 */
#include "attrs/features.h"

#include <dirent.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/util.h"
#include "io/manifest.h"

/* ---- the directory ---- */

static int
has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && strcmp(s + n - k, suffix) == 0;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

uint64_t
kg_features_offset(const struct kg_npy *off, uint64_t i)
{
	return off->dtype == KG_DT_I8 ?
	    (uint64_t)((const int64_t *)off->data)[i] :
	    (uint64_t)((const int32_t *)off->data)[i];
}

void
kg_features_dir_release(struct kg_features_dir *fd)
{
	size_t i;

	for (i = 0; i < fd->n_arrays; i++) {
		free(fd->arr[i].name);
		kg_npy_release(&fd->arr[i].a);
	}
	free(fd->arr);
	memset(fd, 0, sizeof(*fd));
}

const struct kg_features_array *
kg_features_dir_find(const struct kg_features_dir *fd, const char *name)
{
	size_t i;

	for (i = 0; i < fd->n_arrays; i++)
		if (strcmp(fd->arr[i].name, name) == 0)
			return &fd->arr[i];
	return NULL;
}

/* The names of the .npy files of dir, sorted; NULL after kg_error(). */
static char **
list_npy(const char *dir, size_t *n)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **names = NULL;
	size_t cap = 0;

	*n = 0;
	if (d == NULL) {
		kg_error_errno("cannot open feature directory '%s'", dir);
		return NULL;
	}
	while ((de = readdir(d)) != NULL) {
		if (!has_suffix(de->d_name, ".npy") || de->d_name[0] == '.')
			continue;
		if (*n == cap) {
			cap = cap ? 2 * cap : 16;
			names = kg_xreallocarray(names, cap, sizeof(*names));
		}
		names[(*n)++] = kg_xstrdup(de->d_name);
	}
	closedir(d);
	if (names == NULL)
		names = kg_xcalloc(1, sizeof(*names));
	qsort(names, *n, sizeof(*names), cmp_str);
	return names;
}

/* Map every listed file (the names pass to fd). */
static int
map_all(struct kg_features_dir *fd, const char *dir, char **names, size_t n)
{
	size_t i;
	int rc = 0;

	fd->arr = kg_xcalloc(n ? n : 1, sizeof(*fd->arr));
	for (i = 0; i < n; i++) {
		struct kg_features_array *f = &fd->arr[i];
		char *path;

		f->name = names[i];
		fd->n_arrays++;
		if (rc < 0)
			continue;	/* keep taking the names, to free them */
		path = kg_path_join(dir, f->name);
		rc = kg_npy_read(path, &f->a);
		free(path);
		if (rc == 0 && f->a.ndim >= 1 && f->a.shape[0] > 0)
			f->row_bytes = f->a.nbytes / f->a.shape[0];
		else if (rc == 0 && f->a.ndim >= 1)
			f->row_bytes = f->a.nbytes;
	}
	free(names);
	return rc;
}

/* Check a CSR offsets array against its entry count. */
static int
check_offsets(const char *dir, const struct kg_features_array *f,
    uint64_t nnz)
{
	uint64_t i, n = f->a.shape[0];

	for (i = 0; i < n; i++) {
		int64_t v = f->a.dtype == KG_DT_I8 ?
		    ((const int64_t *)f->a.data)[i] :
		    ((const int32_t *)f->a.data)[i];

		if (v < 0 || (i == 0 && v != 0) || (uint64_t)v > nnz ||
		    (i > 0 && (uint64_t)v < kg_features_offset(&f->a, i - 1))) {
			kg_error("%s/%s: offsets not increasing from 0 to %"
			    PRIu64, dir, f->name, nnz);
			return -1;
		}
	}
	if (kg_features_offset(&f->a, n - 1) != nnz) {
		kg_error("%s/%s: last offset is not %" PRIu64, dir, f->name,
		    nnz);
		return -1;
	}
	return 0;
}

/* Members of the group whose offsets are arr[g] (name prefix plen):
 * arrays with one row per entry; the longest group prefix wins. */
static void
claim_members(struct kg_features_dir *fd, size_t g, size_t plen,
    uint64_t nnz)
{
	const struct kg_features_array *f = &fd->arr[g];
	size_t j;

	for (j = 0; j < fd->n_arrays; j++) {
		struct kg_features_array *m = &fd->arr[j];

		if (j == g || strncmp(m->name, f->name, plen) != 0 ||
		    m->a.ndim < 1 || m->a.shape[0] != nnz ||
		    has_suffix(m->name, "_offsets.npy"))
			continue;
		if (m->kind == KG_FEATURES_CSR_MEMBER &&
		    strlen(fd->arr[m->group].name) > strlen(f->name))
			continue;
		m->kind = KG_FEATURES_CSR_MEMBER;
		m->group = g;
	}
}

/* CSR groups first (an X_offsets.npy with its X_indices.npy), then the
 * arrays of n rows. */
static int
classify(struct kg_features_dir *fd, const char *dir)
{
	uint64_t n = fd->n;
	size_t i;

	for (i = 0; i < fd->n_arrays; i++) {
		struct kg_features_array *f = &fd->arr[i];
		const struct kg_features_array *idx;
		size_t plen;
		char *iname;

		if (!has_suffix(f->name, "_offsets.npy"))
			continue;
		plen = strlen(f->name) - strlen("offsets.npy");
		iname = kg_xasprintf("%.*sindices.npy", (int)plen, f->name);
		idx = kg_features_dir_find(fd, iname);
		free(iname);
		if (idx == NULL)
			continue;
		if ((f->a.dtype != KG_DT_I4 && f->a.dtype != KG_DT_I8) ||
		    f->a.ndim != 1 || f->a.shape[0] != n + 1 ||
		    idx->a.ndim < 1) {
			kg_error("%s/%s: expected int32 or int64 offsets of "
			    "shape [%" PRIu64 "]", dir, f->name, n + 1);
			return -1;
		}
		if (check_offsets(dir, f, idx->a.shape[0]) < 0)
			return -1;
		f->kind = KG_FEATURES_CSR_OFFSETS;
		claim_members(fd, i, plen, idx->a.shape[0]);
	}
	for (i = 0; i < fd->n_arrays; i++) {
		struct kg_features_array *f = &fd->arr[i];

		if (f->kind == KG_FEATURES_OTHER && f->a.ndim >= 1 &&
		    f->a.shape[0] == n)
			f->kind = KG_FEATURES_ROWS;
	}
	return 0;
}

int
kg_features_dir_open(struct kg_features_dir *fd, const char *dir,
    uint64_t n)
{
	char **names;
	size_t count;

	memset(fd, 0, sizeof(*fd));
	fd->n = n;
	names = list_npy(dir, &count);
	if (names == NULL)
		return -1;
	if (map_all(fd, dir, names, count) < 0 || classify(fd, dir) < 0) {
		kg_features_dir_release(fd);
		return -1;
	}
	return 0;
}

/* ---- the attributes ---- */

void
kg_features_release(struct kg_features *f)
{
	size_t i;

	for (i = 0; f->attrs != NULL && i < f->n_attrs; i++) {
		free(f->attrs[i].name);
		free(f->attrs[i].off_own);
	}
	free(f->attrs);
	kg_features_dir_release(&f->dir);
	memset(f, 0, sizeof(*f));
}

/*
 * The array dir/name, of dtype dt, ndim dimensions, n rows and (ndim 2)
 * cols columns; NULL after kg_error().
 */
static const struct kg_npy *
bind(const struct kg_features *f, const char *dir, const char *name,
    enum kg_dtype dt, int ndim, uint64_t rows, uint64_t cols)
{
	const struct kg_features_array *a = kg_features_dir_find(&f->dir,
	    name);

	if (a == NULL) {
		kg_error("'%s/%s': no such array", dir, name);
		return NULL;
	}
	if (a->a.dtype != dt || a->a.ndim != ndim || a->a.shape[0] != rows ||
	    (ndim == 2 && a->a.shape[1] != cols)) {
		if (ndim == 2)
			kg_error("'%s/%s': expected %s [%" PRIu64 ", %" PRIu64
			    "], found another dtype or shape", dir, name,
			    kg_dtype_descr(dt), rows, cols);
		else
			kg_error("'%s/%s': expected %s [%" PRIu64 "], found "
			    "another dtype or shape", dir, name,
			    kg_dtype_descr(dt), rows);
		return NULL;
	}
	return &a->a;
}

static int
bind_text(struct kg_features *f, struct kg_features_attr *at,
    const char *dir, const char *out)
{
	char *name = kg_xasprintf("%s.npy", out);
	const struct kg_npy *v = bind(f, dir, name, KG_DT_F4, 2, f->n,
	    at->width);
	uint64_t i;

	free(name);
	if (v == NULL)
		return -1;
	at->vec = v->data;
	for (i = 0; i < f->n * at->width; i++)
		if (!isfinite(at->vec[i])) {
			kg_error("'%s/%s.npy': row %" PRIu64 " is not finite",
			    dir, out, i / at->width);
			return -1;
		}
	return 0;
}

/* The offsets as int64: the mapping itself, or a widened copy. */
static void
take_offsets(struct kg_features_attr *at, const struct kg_npy *o,
    uint64_t n)
{
	uint64_t i;

	if (o->dtype == KG_DT_I8) {
		at->off = o->data;
		return;
	}
	at->off_own = kg_xmallocarray(n + 1, sizeof(*at->off_own));
	for (i = 0; i <= n; i++)
		at->off_own[i] = ((const int32_t *)o->data)[i];
	at->off = at->off_own;
}

static int
bind_index(struct kg_features *f, struct kg_features_attr *at,
    const char *dir, const char *out)
{
	char *oname = kg_xasprintf("%s_offsets.npy", out);
	char *iname = kg_xasprintf("%s_indices.npy", out);
	const struct kg_features_array *o = kg_features_dir_find(&f->dir,
	    oname);
	const struct kg_npy *ix = NULL;
	uint64_t nnz = 0;
	int rc = -1;

	if (o == NULL || o->kind != KG_FEATURES_CSR_OFFSETS)
		kg_error("'%s': %s and %s do not form a CSR group", dir, oname,
		    iname);
	else {
		nnz = kg_features_offset(&o->a, f->n);
		ix = bind(f, dir, iname, KG_DT_I4, 1, nnz, 0);
	}
	if (ix != NULL) {
		uint64_t i;

		take_offsets(at, &o->a, f->n);
		at->idx = ix->data;
		for (i = 0; i < nnz; i++)
			if (at->idx[i] < 0 || (uint64_t)at->idx[i] >= at->width)
				break;
		if (i < nnz)
			kg_error("'%s/%s': entry %" PRIu64 " (%d) is not below "
			    "the %" PRIu64 " slots", dir, iname, i, at->idx[i],
			    at->width);
		else
			rc = 0;
	}
	free(oname);
	free(iname);
	return rc;
}

/* Bind attribute "spec" of config.attributes. */
static int
bind_attr(struct kg_features *f, struct kg_features_attr *at,
    const char *dir, json_t *spec)
{
	const char *out = json_string_value(json_object_get(spec, "output"));
	const char *kind = json_string_value(json_object_get(spec, "kind"));
	const char *nm = json_string_value(json_object_get(spec, "name"));
	const struct kg_npy *has;
	json_t *w;
	char *name;

	if (out == NULL || kind == NULL) {
		kg_error("'%s': config.attributes entry lacks output or kind",
		    dir);
		return -1;
	}
	at->name = kg_xstrdup(nm != NULL ? nm : out);
	at->text = strcmp(kind, "text") == 0;
	w = json_object_get(spec, at->text ? "dim" : "slots");
	if (!json_is_integer(w) || json_integer_value(w) <= 0) {
		kg_error("'%s': attribute '%s' lacks %s", dir, at->name,
		    at->text ? "dim" : "slots");
		return -1;
	}
	at->width = (uint64_t)json_integer_value(w);
	name = kg_xasprintf("has_%s.npy", out);
	has = bind(f, dir, name, KG_DT_U1, 1, f->n, 0);
	free(name);
	if (has == NULL)
		return -1;
	at->has = has->data;
	return at->text ? bind_text(f, at, dir, out) :
	    bind_index(f, at, dir, out);
}

int
kg_features_load(struct kg_features *f, const char *dir,
    const char *manifest_dir, uint64_t n)
{
	struct kg_manifest man = KG_MANIFEST_INIT;
	const char *mdir = manifest_dir != NULL ? manifest_dir : dir;
	json_t *list;
	size_t i;
	int rc;

	memset(f, 0, sizeof(*f));
	rc = kg_manifest_load(&man, mdir, NULL);
	if (rc < 0)
		return rc;
	list = kg_manifest_get(&man, "config.attributes");
	rc = -1;
	if (!json_is_array(list))
		kg_error("'%s': manifest has no config.attributes list", mdir);
	/* The directory's own manifest lists its files: their sizes, dtypes
	 * and shapes must be what it says (a part's rows are not). */
	else if (manifest_dir == NULL && kg_manifest_verify(&man, dir, 0) < 0)
		;
	else if (kg_features_dir_open(&f->dir, dir, n) == 0) {
		f->n = n;
		f->n_attrs = json_array_size(list);
		f->attrs = kg_xcalloc(f->n_attrs ? f->n_attrs : 1,
		    sizeof(*f->attrs));
		for (i = 0; i < f->n_attrs; i++)
			if (bind_attr(f, &f->attrs[i], dir,
			    json_array_get(list, i)) < 0)
				break;
		rc = i == f->n_attrs ? 0 : -1;
	}
	kg_manifest_release(&man);
	if (rc < 0)
		kg_features_release(f);
	return rc;
}
