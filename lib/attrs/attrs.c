#include "attrs/attrs.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attrs/attrs_bins.h"
#include "attrs/attrs_table.h"
#include "io/npy.h"
#include "core/util.h"

/* ---- collecting ---------------------------------------------------- */

static void
col_reserve(struct kg_attrs_col *c, int numeric)
{
	if (c->n < c->cap)
		return;
	c->cap = c->cap ? 2 * c->cap : 1024;
	c->ent = kg_xreallocarray(c->ent, c->cap, sizeof(uint32_t));
	if (numeric)
		c->num = kg_xreallocarray(c->num, c->cap, sizeof(double));
	else {
		c->off = kg_xreallocarray(c->off, c->cap, sizeof(uint64_t));
		c->len = kg_xreallocarray(c->len, c->cap, sizeof(uint32_t));
	}
}

static void
col_push_str(struct kg_attrs_col *c, uint32_t ent, const char *v, size_t len)
{
	col_reserve(c, 0);
	if (c->arena_len + len + 1 > c->arena_cap) {
		while (c->arena_len + len + 1 > c->arena_cap)
			c->arena_cap = c->arena_cap ? 2 * c->arena_cap : 65536;
		c->arena = kg_xrealloc(c->arena, c->arena_cap);
	}
	memcpy(c->arena + c->arena_len, v, len);
	c->arena[c->arena_len + len] = '\0';
	c->ent[c->n] = ent;
	c->off[c->n] = c->arena_len;
	c->len[c->n] = (uint32_t)len;
	c->arena_len += len + 1;
	c->n++;
}

static const char *
date_format_name(const struct kg_attr_spec *sp)
{
	switch (sp->date_format) {
	case KG_DATE_ISO:
		return "ISO 8601";
	case KG_DATE_DECIMAL_YEAR:
		return "decimal year";
	case KG_DATE_STRPTIME:
		return sp->strptime_format;
	}
	return "?";
}

static int
on_value(void *arg, uint32_t ent, uint32_t attr, const char *v, size_t len,
    char *msg, size_t cap)
{
	struct kg_attrs_data *d = arg;
	const struct kg_attr_spec *sp = &d->schema->attrs[attr];
	struct kg_attrs_col *c = &d->cols[attr];
	int shown = len > 60 ? 60 : (int)len;	/* v is not NUL-terminated */
	double x;

	if (ent < d->lo || ent >= d->hi)
		return 0;
	if (len > UINT32_MAX / 2) {
		snprintf(msg, cap, "value of '%s' too long", sp->name);
		return 1;
	}
	switch (sp->kind) {
	case KG_ATTR_NUMERIC:
		if (kg_parse_number(v, len, &x) < 0) {
			snprintf(msg, cap, "attribute '%s': cannot parse "
			    "'%.*s' as a number", sp->name, shown, v);
			return 1;
		}
		break;
	case KG_ATTR_DATE:
		if (kg_parse_date(v, len, sp->date_format, sp->strptime_format,
		    &x) < 0) {
			snprintf(msg, cap, "attribute '%s': cannot parse "
			    "'%.*s' as a date (%s)", sp->name, shown, v,
			    date_format_name(sp));
			return 1;
		}
		break;
	default:
		col_push_str(c, ent - (uint32_t)d->lo, v, len);
		return 0;
	}
	col_reserve(c, 1);
	c->ent[c->n] = ent - (uint32_t)d->lo;
	c->num[c->n] = x;
	c->n++;
	return 0;
}

/* Counting sort by entity, stable, so values keep their file order. */
static void
col_group(struct kg_attrs_col *c, uint64_t n_local)
{
	uint64_t i, e, *pos;

	c->start = kg_xcalloc(n_local + 1, sizeof(uint64_t));
	c->order = kg_xmallocarray(c->n + 1, sizeof(uint64_t));
	for (i = 0; i < c->n; i++)
		c->start[c->ent[i] + 1]++;
	for (e = 0; e < n_local; e++)
		c->start[e + 1] += c->start[e];
	pos = kg_xmallocarray(n_local + 1, sizeof(uint64_t));
	memcpy(pos, c->start, n_local * sizeof(uint64_t));
	for (i = 0; i < c->n; i++)
		c->order[pos[c->ent[i]]++] = i;
	free(pos);
}

int
kg_attrs_collect(struct kg_attrs_data *d, const struct kg_attr_schema *s,
    const char *const *paths, const struct kg_dict *entities, uint64_t lo,
    uint64_t hi, uint64_t max_errors)
{
	struct kg_attr_reader r;
	size_t i;

	memset(d, 0, sizeof(*d));
	if (hi > UINT32_MAX || lo > hi) {
		kg_error("entity range [%llu, %llu) not supported",
		    (unsigned long long)lo, (unsigned long long)hi);
		return -1;
	}
	d->schema = s;
	d->lo = lo;
	d->hi = hi;
	d->cols = kg_xcalloc(s->n_attrs, sizeof(*d->cols));
	d->named = kg_xcalloc(s->n_attrs + 1, 1);
	memset(&r, 0, sizeof(r));
	r.named = d->named;
	r.schema = s;
	r.entities = entities;
	r.fn = on_value;
	r.arg = d;
	r.max_errors = max_errors;
	if (lo > 0 || hi < kg_dict_size(entities)) {
		r.lo = lo;
		r.hi = hi;
	}
	for (i = 0; i < s->n_tables; i++)
		if (kg_attr_read_table(&r, &s->tables[i], paths[i]) < 0) {
			kg_attrs_data_release(d);
			return -1;
		}
	for (i = 0; i < s->n_attrs; i++)
		col_group(&d->cols[i], hi - lo);
	d->n_rows = r.n_rows;
	d->n_values = r.n_values;
	d->n_errors = r.n_errors;
	d->n_skipped_entities = r.n_skipped_entities;
	return 0;
}

void
kg_attrs_data_release(struct kg_attrs_data *d)
{
	size_t i;

	if (d == NULL || d->cols == NULL)
		return;
	for (i = 0; i < d->schema->n_attrs; i++) {
		struct kg_attrs_col *c = &d->cols[i];

		free(c->ent);
		free(c->num);
		free(c->off);
		free(c->len);
		free(c->arena);
		free(c->start);
		free(c->order);
	}
	free(d->cols);
	free(d->named);
	memset(d, 0, sizeof(*d));
}

/* ---- helpers shared by fit and encode ------------------------------ */

static inline const char *
col_str(const struct kg_attrs_col *c, uint64_t i, size_t *len)
{
	*len = c->len[i];
	return c->arena + c->off[i];
}

/*
 * Call fn for each label of a categorical (the whole value) or multi-label
 * (separator-split, trimmed, non-empty) value.
 */
static void
for_each_label(const struct kg_attr_spec *sp, const char *v, size_t len,
    void (*fn)(void *arg, const char *s, size_t len), void *arg)
{
	const char *p = v, *end = v + len, *q;
	size_t seplen;

	if (sp->kind != KG_ATTR_MULTILABEL) {
		fn(arg, v, len);
		return;
	}
	seplen = strlen(sp->separator);
	while (p <= end) {
		const char *a, *b;

		q = memmem(p, (size_t)(end - p), sp->separator, seplen);
		if (q == NULL)
			q = end;
		a = p;
		b = q;
		while (a < b && (*a == ' ' || *a == '\t'))
			a++;
		while (b > a && (b[-1] == ' ' || b[-1] == '\t'))
			b--;
		if (b > a)
			fn(arg, a, (size_t)(b - a));
		p = q + seplen;
	}
}

/* A growable list of uint32 indices. */
struct idx_list {
	uint32_t *v;
	size_t n, cap;
};

static void
idx_push(struct idx_list *l, uint32_t x)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 64;
		l->v = kg_xreallocarray(l->v, l->cap, sizeof(uint32_t));
	}
	l->v[l->n++] = x;
}

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* Sort and drop duplicates. */
static void
idx_unique(struct idx_list *l)
{
	size_t i, k = 0;

	if (l->n < 2)
		return;
	qsort(l->v, l->n, sizeof(uint32_t), cmp_u32);
	for (i = 0; i < l->n; i++)
		if (k == 0 || l->v[i] != l->v[k - 1])
			l->v[k++] = l->v[i];
	l->n = k;
}

/* The texts of a column, one document per entity (rows joined by a
 * space): docs[k], lens[k], ent[k] for k < *n_docs. */
struct text_docs {
	char *buf;
	const char **docs;
	size_t *lens;
	uint64_t *ent;
	size_t n;
};

static void
text_docs_build(struct text_docs *t, const struct kg_attrs_col *c,
    uint64_t n_local)
{
	uint64_t e, j, total = 0, pos = 0;
	size_t *offs, k = 0;

	memset(t, 0, sizeof(*t));
	for (e = 0; e < n_local; e++)
		if (c->start[e + 1] > c->start[e])
			t->n++;
	for (j = 0; j < c->n; j++)
		total += c->len[j] + 1;
	t->buf = kg_xmalloc(total + 1);
	t->docs = kg_xcalloc(t->n + 1, sizeof(char *));
	t->lens = kg_xcalloc(t->n + 1, sizeof(size_t));
	t->ent = kg_xcalloc(t->n + 1, sizeof(uint64_t));
	offs = kg_xcalloc(t->n + 1, sizeof(size_t));
	for (e = 0; e < n_local; e++) {
		if (c->start[e + 1] == c->start[e])
			continue;
		offs[k] = pos;
		for (j = c->start[e]; j < c->start[e + 1]; j++) {
			size_t len;
			const char *s = col_str(c, c->order[j], &len);

			if (j > c->start[e])
				t->buf[pos++] = ' ';
			memcpy(t->buf + pos, s, len);
			pos += len;
		}
		t->lens[k] = pos - offs[k];
		t->ent[k] = e;
		k++;
	}
	for (k = 0; k < t->n; k++)
		t->docs[k] = t->buf + offs[k];
	free(offs);
}

static void
text_docs_release(struct text_docs *t)
{
	free(t->buf);
	free(t->docs);
	free(t->lens);
	free(t->ent);
	memset(t, 0, sizeof(*t));
}

/* ---- fit -------------------------------------------------------------- */

struct label_ctx {
	struct kg_dict *dict;
	struct idx_list *ids;
};

static void
intern_label(void *arg, const char *s, size_t len)
{
	struct label_ctx *c = arg;
	int64_t id = kg_dict_intern(c->dict, s, len, NULL);

	if (id >= 0)
		idx_push(c->ids, (uint32_t)id);
}

struct vocab_entry {
	const char *s;
	uint64_t count;
};

static int
cmp_vocab(const void *a, const void *b)
{
	return strcmp(((const struct vocab_entry *)a)->s,
	    ((const struct vocab_entry *)b)->s);
}

static void
fit_labels(struct kg_attr_enc *enc, const struct kg_attr_spec *sp,
    const struct kg_attrs_col *c, uint64_t n_local)
{
	struct kg_dict all = KG_DICT_INIT;
	struct idx_list ids = { NULL, 0, 0 };
	struct label_ctx lc = { &all, &ids };
	struct vocab_entry *v;
	uint64_t *count = NULL, e, j, cap = 0;
	size_t i, k = 0;

	for (e = 0; e < n_local; e++) {
		ids.n = 0;
		for (j = c->start[e]; j < c->start[e + 1]; j++) {
			size_t len;
			const char *s = col_str(c, c->order[j], &len);

			for_each_label(sp, s, len, intern_label, &lc);
		}
		if (kg_dict_size(&all) > cap) {
			uint64_t old = cap;

			cap = 2 * kg_dict_size(&all) + 64;
			count = kg_xreallocarray(count, cap, sizeof(uint64_t));
			memset(count + old, 0, (cap - old) * sizeof(uint64_t));
		}
		idx_unique(&ids);
		for (i = 0; i < ids.n; i++)
			count[ids.v[i]]++;
	}
	v = kg_xcalloc(kg_dict_size(&all) + 1, sizeof(*v));
	for (i = 0; i < kg_dict_size(&all); i++)
		if (count[i] >= sp->min_count) {
			v[k].s = kg_dict_name(&all, (uint32_t)i);
			v[k].count = count[i];
			k++;
		}
	qsort(v, k, sizeof(*v), cmp_vocab);
	kg_dict_init(&enc->vocab);
	for (i = 0; i < k; i++)
		(void)kg_dict_intern(&enc->vocab, v[i].s, strlen(v[i].s), NULL);
	enc->n_vocab = (uint32_t)k;
	enc->slots = k + 1;
	free(v);
	free(count);
	free(ids.v);
	kg_dict_release(&all);
}

static int
fit_one(struct kg_attr_enc *enc, const struct kg_attr_spec *sp,
    const struct kg_attrs_col *c, uint64_t n_local, int external)
{
	uint64_t e;

	enc->n_values = c->n;
	for (e = 0; e < n_local; e++)
		if (c->start[e + 1] > c->start[e])
			enc->n_entities++;
	switch (sp->kind) {
	case KG_ATTR_NUMERIC:
	case KG_ATTR_DATE: {
		double *x;

		enc->edges = kg_xcalloc(sp->n_bins + 1, sizeof(double));
		if (c->n == 0) {
			kg_warn("attribute '%s' has no value; it gets a "
			    "single bin", sp->name);
			enc->edges[0] = -INFINITY;
			enc->edges[1] = INFINITY;
			enc->n_bins = 1;
		} else {
			x = kg_xmallocarray(c->n, sizeof(double));
			memcpy(x, c->num, c->n * sizeof(double));
			enc->n_bins = kg_bins_fit(x, c->n, sp->n_bins,
			    sp->strategy, enc->edges);
			free(x);
			if (enc->n_bins < sp->n_bins)
				kg_warn("attribute '%s': %u of %u bins (the "
				    "others would be empty)", sp->name,
				    enc->n_bins, sp->n_bins);
		}
		enc->slots = (uint64_t)enc->n_bins + 1;
		return 0;
	}
	case KG_ATTR_CATEGORICAL:
	case KG_ATTR_MULTILABEL:
		fit_labels(enc, sp, c, n_local);
		return 0;
	case KG_ATTR_TEXT: {
		struct kg_text_fit_opts o;
		struct text_docs t;
		int rc;

		enc->slots = sp->dim;
		if (external) {
			enc->external = 1;
			enc->text.dim = sp->dim;
			kg_dict_init(&enc->text.vocab);
			return 0;
		}
		memset(&o, 0, sizeof(o));
		o.dim = sp->dim;
		o.max_features = sp->max_features;
		o.min_df = sp->min_df;
		o.sublinear_tf = sp->sublinear_tf;
		o.normalize = sp->normalize;
		text_docs_build(&t, c, n_local);
		rc = kg_text_fit(&enc->text, &o, t.n, t.docs, t.lens);
		text_docs_release(&t);
		return rc;
	}
	}
	return -1;
}

int
kg_attrs_fit(struct kg_attrs_model *m, const struct kg_attr_schema *s,
    const struct kg_attrs_data *d, uint64_t n_entities,
    const char *text_command)
{
	size_t i;

	memset(m, 0, sizeof(*m));
	if (d->lo != 0 || d->hi != n_entities) {
		kg_error("fit needs the values of every entity");
		return -1;
	}
	if (kg_attr_schema_from_json(&m->schema, s->json, s->path) < 0)
		return -1;
	m->n_entities = n_entities;
	m->text_command = text_command ? kg_xstrdup(text_command) : NULL;
	m->tables = json_array();
	m->enc = kg_xcalloc(s->n_attrs, sizeof(*m->enc));
	for (i = 0; i < s->n_attrs; i++)
		if (fit_one(&m->enc[i], &m->schema.attrs[i], &d->cols[i],
		    n_entities, text_command != NULL) < 0) {
			kg_attrs_model_release(m);
			return -1;
		}
	return 0;
}

void
kg_attrs_model_release(struct kg_attrs_model *m)
{
	size_t i;

	if (m == NULL)
		return;
	for (i = 0; m->enc != NULL && i < m->schema.n_attrs; i++) {
		free(m->enc[i].edges);
		kg_dict_release(&m->enc[i].vocab);
		kg_text_model_release(&m->enc[i].text);
	}
	free(m->enc);
	free(m->text_command);
	if (m->tables != NULL)
		json_decref(m->tables);
	kg_attr_schema_release(&m->schema);
	memset(m, 0, sizeof(*m));
}

/* ---- model files ---------------------------------------------------- */

static char *
model_file(const char *dir, const char *output, const char *suffix)
{
	char *name = kg_xasprintf("%s%s", output, suffix);
	char *path = kg_path_join(dir, name);

	free(name);
	return path;
}

static json_t *
vocab_json(const struct kg_dict *d, uint32_t n)
{
	json_t *a = json_array();
	uint32_t i;

	for (i = 0; i < n; i++)
		json_array_append_new(a, json_string(kg_dict_name(d, i)));
	return a;
}

int
kg_attrs_model_write(const struct kg_attrs_model *m, const char *dir)
{
	json_t *root = json_object(), *attrs = json_array();
	char *path;
	size_t i;
	int rc = -1;

	json_object_set(root, "schema", m->schema.json);
	json_object_set_new(root, "n_entities",
	    json_integer((json_int_t)m->n_entities));
	json_object_set_new(root, "text_command", m->text_command ?
	    json_string(m->text_command) : json_null());
	json_object_set(root, "tables", m->tables);
	for (i = 0; i < m->schema.n_attrs; i++) {
		const struct kg_attr_spec *sp = &m->schema.attrs[i];
		const struct kg_attr_enc *enc = &m->enc[i];
		json_t *a = json_object();
		uint64_t shape[2];

		json_object_set_new(a, "name", json_string(sp->name));
		json_object_set_new(a, "output", json_string(sp->output));
		json_object_set_new(a, "kind",
		    json_string(kg_attr_kind_name(sp->kind)));
		json_object_set_new(a, "slots",
		    json_integer((json_int_t)enc->slots));
		json_object_set_new(a, "fit_values",
		    json_integer((json_int_t)enc->n_values));
		json_object_set_new(a, "fit_entities",
		    json_integer((json_int_t)enc->n_entities));
		json_array_append_new(attrs, a);
		switch (sp->kind) {
		case KG_ATTR_NUMERIC:
		case KG_ATTR_DATE:
			json_object_set_new(a, "n_bins",
			    json_integer(enc->n_bins));
			shape[0] = (uint64_t)enc->n_bins + 1;
			path = model_file(dir, sp->output, ".edges.npy");
			rc = kg_npy_write(path, KG_DT_F8, 1, shape,
			    enc->edges);
			free(path);
			if (rc < 0)
				goto out;
			break;
		case KG_ATTR_CATEGORICAL:
		case KG_ATTR_MULTILABEL:
			json_object_set_new(a, "vocabulary",
			    vocab_json(&enc->vocab, enc->n_vocab));
			break;
		case KG_ATTR_TEXT:
			json_object_set_new(a, "external",
			    json_boolean(enc->external));
			if (enc->external)
				break;
			json_object_set_new(a, "vocabulary",
			    vocab_json(&enc->text.vocab, enc->text.n_vocab));
			json_object_set_new(a, "energy",
			    json_real(enc->text.energy));
			shape[0] = enc->text.n_vocab;
			shape[1] = enc->text.dim;
			path = model_file(dir, sp->output, ".idf.npy");
			rc = kg_npy_write(path, KG_DT_F8, 1, shape,
			    enc->text.idf);
			free(path);
			if (rc < 0)
				goto out;
			path = model_file(dir, sp->output, ".proj.npy");
			rc = kg_npy_write(path, KG_DT_F4, 2, shape,
			    enc->text.proj);
			free(path);
			if (rc < 0)
				goto out;
			break;
		}
	}
	json_object_set_new(root, "attributes", attrs);
	attrs = NULL;
	path = kg_path_join(dir, "model.json");
	rc = json_dump_file(root, path, JSON_INDENT(1));
	if (rc != 0)
		kg_error_errno("cannot write '%s'", path);
	free(path);
	rc = rc != 0 ? -1 : 0;
out:
	if (attrs != NULL)
		json_decref(attrs);
	json_decref(root);
	return rc;
}

/* Read a model array, checking dtype and shape. */
static int
read_array(const char *dir, const char *output, const char *suffix,
    enum kg_dtype dt, int ndim, const uint64_t *shape, struct kg_npy *a)
{
	char *path = model_file(dir, output, suffix);
	int i, rc = kg_npy_read_expect(path, dt, ndim, a);

	for (i = 0; rc == 0 && i < ndim; i++)
		if (a->shape[i] != shape[i]) {
			kg_error("%s: dimension %d is %llu, expected %llu",
			    path, i, (unsigned long long)a->shape[i],
			    (unsigned long long)shape[i]);
			kg_npy_release(a);
			rc = -1;
		}
	free(path);
	return rc;
}

static int
read_vocab(const char *file, const char *name, json_t *a, struct kg_dict *d,
    uint32_t *n)
{
	json_t *v = json_object_get(a, "vocabulary"), *s;
	size_t i;

	kg_dict_init(d);
	if (!json_is_array(v)) {
		kg_error("%s: attribute '%s': no vocabulary", file, name);
		return -1;
	}
	json_array_foreach(v, i, s) {
		int added = 0;

		if (!json_is_string(s) || kg_dict_intern(d,
		    json_string_value(s), json_string_length(s), &added) < 0 ||
		    !added) {
			kg_error("%s: attribute '%s': bad vocabulary entry %zu",
			    file, name, i);
			return -1;
		}
	}
	*n = (uint32_t)json_array_size(v);
	return 0;
}

static int
read_enc(const char *dir, const char *file, json_t *a,
    const struct kg_attr_spec *sp, struct kg_attr_enc *enc)
{
	json_t *v;
	uint64_t shape[2];
	struct kg_npy arr = KG_NPY_INIT, arr2 = KG_NPY_INIT;

	v = json_object_get(a, "slots");
	enc->slots = json_is_integer(v) ? (uint64_t)json_integer_value(v) : 0;
	switch (sp->kind) {
	case KG_ATTR_NUMERIC:
	case KG_ATTR_DATE:
		v = json_object_get(a, "n_bins");
		if (!json_is_integer(v) || json_integer_value(v) < 1 ||
		    json_integer_value(v) > KG_ATTR_MAX_BINS) {
			kg_error("%s: attribute '%s': bad n_bins", file,
			    sp->name);
			return -1;
		}
		enc->n_bins = (uint32_t)json_integer_value(v);
		shape[0] = (uint64_t)enc->n_bins + 1;
		if (read_array(dir, sp->output, ".edges.npy", KG_DT_F8, 1,
		    shape, &arr) < 0)
			return -1;
		enc->edges = kg_xmallocarray(shape[0], sizeof(double));
		memcpy(enc->edges, arr.data, shape[0] * sizeof(double));
		kg_npy_release(&arr);
		enc->slots = (uint64_t)enc->n_bins + 1;
		return 0;
	case KG_ATTR_CATEGORICAL:
	case KG_ATTR_MULTILABEL:
		if (read_vocab(file, sp->name, a, &enc->vocab,
		    &enc->n_vocab) < 0)
			return -1;
		enc->slots = (uint64_t)enc->n_vocab + 1;
		return 0;
	case KG_ATTR_TEXT: {
		struct kg_dict d;
		const char **words;
		uint32_t n, i;
		int rc;

		enc->slots = sp->dim;
		enc->external = json_is_true(json_object_get(a, "external"));
		if (enc->external) {
			enc->text.dim = sp->dim;
			kg_dict_init(&enc->text.vocab);
			return 0;
		}
		if (read_vocab(file, sp->name, a, &d, &n) < 0) {
			kg_dict_release(&d);
			return -1;
		}
		shape[0] = n;
		shape[1] = sp->dim;
		if (read_array(dir, sp->output, ".idf.npy", KG_DT_F8, 1, shape,
		    &arr) < 0 || read_array(dir, sp->output, ".proj.npy",
		    KG_DT_F4, 2, shape, &arr2) < 0) {
			kg_npy_release(&arr);
			kg_dict_release(&d);
			return -1;
		}
		words = kg_xcalloc(n + 1, sizeof(char *));
		for (i = 0; i < n; i++)
			words[i] = kg_dict_name(&d, i);
		rc = kg_text_model_set(&enc->text, sp->dim, n, words, arr.data,
		    arr2.data, sp->sublinear_tf, sp->normalize);
		free(words);
		kg_dict_release(&d);
		kg_npy_release(&arr);
		kg_npy_release(&arr2);
		return rc;
	}
	}
	return -1;
}

int
kg_attrs_model_read(struct kg_attrs_model *m, const char *dir)
{
	json_error_t jerr;
	json_t *root, *attrs, *v;
	char *file = kg_path_join(dir, "model.json");
	size_t i;

	memset(m, 0, sizeof(*m));
	root = json_load_file(file, 0, &jerr);
	if (root == NULL) {
		kg_error("%s:%d: %s", file, jerr.line, jerr.text);
		free(file);
		return -1;
	}
	if (kg_attr_schema_from_json(&m->schema, json_object_get(root,
	    "schema"), file) < 0)
		goto fail;
	v = json_object_get(root, "n_entities");
	attrs = json_object_get(root, "attributes");
	m->tables = json_incref(json_object_get(root, "tables"));
	if (!json_is_integer(v) || !json_is_array(attrs) ||
	    json_array_size(attrs) != m->schema.n_attrs ||
	    !json_is_array(m->tables) ||
	    json_array_size(m->tables) != m->schema.n_tables) {
		kg_error("%s: malformed model", file);
		goto fail;
	}
	m->n_entities = (uint64_t)json_integer_value(v);
	v = json_object_get(root, "text_command");
	if (json_is_string(v))
		m->text_command = kg_xstrdup(json_string_value(v));
	m->enc = kg_xcalloc(m->schema.n_attrs, sizeof(*m->enc));
	for (i = 0; i < m->schema.n_attrs; i++) {
		json_t *a = json_array_get(attrs, i);
		const char *name = json_string_value(json_object_get(a,
		    "name"));

		if (name == NULL || strcmp(name, m->schema.attrs[i].name) != 0) {
			kg_error("%s: attribute %zu does not match the schema",
			    file, i);
			goto fail;
		}
		if (read_enc(dir, file, a, &m->schema.attrs[i],
		    &m->enc[i]) < 0)
			goto fail;
	}
	json_decref(root);
	free(file);
	return 0;
fail:
	json_decref(root);
	free(file);
	kg_attrs_model_release(m);
	return -1;
}

/* ---- encode ------------------------------------------------------------ */

size_t
kg_attrs_files(const struct kg_attrs_model *m, size_t i, char *names[3])
{
	const struct kg_attr_spec *sp = &m->schema.attrs[i];

	names[0] = kg_xasprintf("has_%s.npy", sp->output);
	if (sp->kind == KG_ATTR_TEXT) {
		names[1] = kg_xasprintf("%s.npy", sp->output);
		return 2;
	}
	names[1] = kg_xasprintf("%s_offsets.npy", sp->output);
	names[2] = kg_xasprintf("%s_indices.npy", sp->output);
	return 3;
}

json_t *
kg_attrs_describe(const struct kg_attrs_model *m)
{
	json_t *list = json_array();
	size_t i;

	for (i = 0; i < m->schema.n_attrs; i++) {
		const struct kg_attr_spec *sp = &m->schema.attrs[i];
		json_t *a = json_object();

		json_object_set_new(a, "name", json_string(sp->name));
		json_object_set_new(a, "output", json_string(sp->output));
		json_object_set_new(a, "kind",
		    json_string(kg_attr_kind_name(sp->kind)));
		json_object_set_new(a, sp->kind == KG_ATTR_TEXT ? "dim" :
		    "slots", json_integer((json_int_t)m->enc[i].slots));
		json_array_append_new(list, a);
	}
	return list;
}

struct slot_ctx {
	const struct kg_attr_enc *enc;
	struct idx_list *out;
};

static void
label_slot(void *arg, const char *s, size_t len)
{
	struct slot_ctx *c = arg;
	int64_t id = kg_dict_find(&c->enc->vocab, s, len);

	idx_push(c->out, id >= 0 ? (uint32_t)id : c->enc->n_vocab);
}

/* Feature arrays are written through the streaming writer, as merge
 * writes them, so that one shard and a merge of several give the same
 * bytes. */
static int
write_file(const char *dir, const char *name, enum kg_dtype dt, int ndim,
    const uint64_t *shape, const void *data)
{
	struct kg_npy_writer w;
	char *path = kg_path_join(dir, name);
	int rc = kg_npy_writer_open(&w, path, dt, ndim, shape + 1);

	free(path);
	if (rc < 0)
		return -1;
	if (shape[0] > 0 && kg_npy_writer_append(&w, data, shape[0]) < 0) {
		kg_npy_writer_abort(&w);
		return -1;
	}
	return kg_npy_writer_close(&w);
}

static int
encode_index(const struct kg_attr_enc *enc, const struct kg_attr_spec *sp,
    const struct kg_attrs_col *c, uint64_t n, const char *dir,
    char *const names[3], json_t *fig)
{
	struct idx_list row = { NULL, 0, 0 }, all = { NULL, 0, 0 };
	struct slot_ctx sc = { enc, &row };
	int64_t *offsets = kg_xmallocarray(n + 1, sizeof(int64_t));
	uint8_t *has = kg_xcalloc(n + 1, 1);
	uint64_t e, j, shape[1], with = 0;
	size_t i;
	int rc;

	offsets[0] = 0;
	for (e = 0; e < n; e++) {
		row.n = 0;
		for (j = c->start[e]; j < c->start[e + 1]; j++) {
			uint64_t k = c->order[j];

			if (sp->kind == KG_ATTR_NUMERIC ||
			    sp->kind == KG_ATTR_DATE)
				idx_push(&row, kg_bins_find(enc->edges,
				    enc->n_bins, c->num[k]));
			else {
				size_t len;
				const char *s = col_str(c, k, &len);

				for_each_label(sp, s, len, label_slot, &sc);
			}
		}
		has[e] = c->start[e + 1] > c->start[e];
		with += has[e];
		if (row.n == 0 && (sp->kind == KG_ATTR_NUMERIC ||
		    sp->kind == KG_ATTR_DATE))
			idx_push(&row, enc->n_bins);
		idx_unique(&row);
		for (i = 0; i < row.n; i++)
			idx_push(&all, row.v[i]);
		offsets[e + 1] = (int64_t)all.n;
	}
	shape[0] = n;
	rc = write_file(dir, names[0], KG_DT_U1, 1, shape, has);
	shape[0] = n + 1;
	if (rc == 0)
		rc = write_file(dir, names[1], KG_DT_I8, 1, shape, offsets);
	shape[0] = all.n;
	if (rc == 0)
		rc = write_file(dir, names[2], KG_DT_I4, 1, shape,
		    all.v != NULL ? (void *)all.v : (void *)has);
	if (fig != NULL) {
		json_object_set_new(fig, "entities_with_value",
		    json_integer((json_int_t)with));
		json_object_set_new(fig, "nnz", json_integer((json_int_t)all.n));
	}
	free(row.v);
	free(all.v);
	free(offsets);
	free(has);
	return rc;
}

static int
encode_text(const struct kg_attr_enc *enc, const struct kg_attrs_col *c,
    uint64_t n, const char *cmd, const char *dir, char *const names[3],
    json_t *fig)
{
	struct text_docs t;
	float *out = kg_xcalloc(n * enc->text.dim + 1, sizeof(float));
	float *ext = NULL;
	uint8_t *has = kg_xcalloc(n + 1, 1);
	uint64_t shape[2];
	uint32_t dim = enc->text.dim;
	size_t k;
	int rc = 0;

	text_docs_build(&t, c, n);
	for (k = 0; k < t.n; k++)
		has[t.ent[k]] = 1;
	if (enc->external) {
		ext = kg_xcalloc(t.n * dim + 1, sizeof(float));
		if (t.n > 0)
			rc = kg_text_command(cmd, dim, t.n, t.docs, t.lens,
			    ext);
		for (k = 0; rc == 0 && k < t.n; k++)
			memcpy(out + t.ent[k] * dim, ext + k * dim,
			    dim * sizeof(float));
		free(ext);
	} else {
#pragma omp parallel
		{
			struct kg_text_scratch sc = KG_TEXT_SCRATCH_INIT;
			long long kk;

#pragma omp for schedule(dynamic, 256)
			for (kk = 0; kk < (long long)t.n; kk++)
				kg_text_encode(&enc->text, t.docs[kk],
				    t.lens[kk], &sc, out + t.ent[kk] * dim);
			kg_text_scratch_release(&sc);
		}
	}
	shape[0] = n;
	shape[1] = dim;
	if (rc == 0)
		rc = write_file(dir, names[0], KG_DT_U1, 1, shape, has);
	if (rc == 0)
		rc = write_file(dir, names[1], KG_DT_F4, 2, shape, out);
	if (fig != NULL)
		json_object_set_new(fig, "entities_with_value",
		    json_integer((json_int_t)t.n));
	text_docs_release(&t);
	free(out);
	free(has);
	return rc;
}

int
kg_attrs_encode(const struct kg_attrs_model *m, const struct kg_attrs_data *d,
    const char *text_command, const char *dir, json_t *figures)
{
	uint64_t n = d->hi - d->lo;
	size_t i, k, nf;
	int rc = 0;

	if (text_command == NULL)
		text_command = m->text_command;
	for (i = 0; rc == 0 && i < m->schema.n_attrs; i++) {
		const struct kg_attr_spec *sp = &m->schema.attrs[i];
		json_t *fig = figures != NULL ? json_object() : NULL;
		char *names[3];

		nf = kg_attrs_files(m, i, names);
		if (sp->kind == KG_ATTR_TEXT) {
			if (m->enc[i].external && text_command == NULL) {
				kg_error("attribute '%s' needs a text "
				    "command (--text-command)", sp->name);
				rc = -1;
			} else
				rc = encode_text(&m->enc[i], &d->cols[i], n,
				    text_command, dir, names, fig);
		} else
			rc = encode_index(&m->enc[i], sp, &d->cols[i], n, dir,
			    names, fig);
		for (k = 0; k < nf; k++)
			free(names[k]);
		if (fig != NULL)
			json_object_set_new(figures, sp->output, fig);
	}
	return rc;
}

/* ---- merge ------------------------------------------------------------ */

/* Append the data of shards[s]/name (checked dtype and row shape) to w;
 * offsets are shifted by *base and the first entry dropped after the
 * first shard. */
static int
merge_file(const char *const *shards, size_t n, const char *name,
    enum kg_dtype dt, int ndim, const uint64_t *row_shape, int offsets,
    const char *dir)
{
	struct kg_npy_writer w;
	char *out = kg_path_join(dir, name);
	int64_t base = 0;
	size_t s;
	int rc;

	rc = kg_npy_writer_open(&w, out, dt, ndim, row_shape);
	free(out);
	if (rc < 0)
		return -1;
	for (s = 0; s < n; s++) {
		struct kg_npy a = KG_NPY_INIT;
		char *path = kg_path_join(shards[s], name);
		uint64_t i, rows;

		rc = kg_npy_read_expect(path, dt, ndim, &a);
		if (rc == 0 && ndim == 2 && a.shape[1] != row_shape[0]) {
			kg_error("%s: %llu columns, expected %llu", path,
			    (unsigned long long)a.shape[1],
			    (unsigned long long)row_shape[0]);
			rc = -1;
		}
		free(path);
		if (rc < 0) {
			kg_npy_writer_abort(&w);
			return -1;
		}
		rows = a.shape[0];
		if (offsets) {
			const int64_t *o = a.data;
			int64_t buf[4096];
			uint64_t start = s == 0 ? 0 : 1, m;

			for (i = start; rc == 0 && i < rows; i += m) {
				uint64_t j;

				m = rows - i < 4096 ? rows - i : 4096;
				for (j = 0; j < m; j++)
					buf[j] = o[i + j] + base;
				rc = kg_npy_writer_append(&w, buf, m);
			}
			if (rows > 0)
				base += o[rows - 1];
		} else if (rows > 0)
			rc = kg_npy_writer_append(&w, a.data, rows);
		kg_npy_release(&a);
		if (rc < 0) {
			kg_npy_writer_abort(&w);
			return -1;
		}
	}
	return kg_npy_writer_close(&w);
}

int
kg_attrs_merge_arrays(const struct kg_attrs_model *m,
    const char *const *shards, size_t n, const char *dir)
{
	size_t i, k, nf;
	int rc = 0;

	for (i = 0; rc == 0 && i < m->schema.n_attrs; i++) {
		char *names[3];
		uint64_t row[1] = { m->enc[i].slots };

		nf = kg_attrs_files(m, i, names);
		rc = merge_file(shards, n, names[0], KG_DT_U1, 1, row, 0, dir);
		if (rc == 0 && nf == 2)
			rc = merge_file(shards, n, names[1], KG_DT_F4, 2, row,
			    0, dir);
		else if (rc == 0) {
			rc = merge_file(shards, n, names[1], KG_DT_I8, 1, row,
			    1, dir);
			if (rc == 0)
				rc = merge_file(shards, n, names[2], KG_DT_I4,
				    1, row, 0, dir);
		}
		for (k = 0; k < nf; k++)
			free(names[k]);
	}
	return rc;
}
