/*
 * attrs_model: the model directory of kg-encode-attrs fit, written and
 * read back (declared in attrs.h).
 */
#include "attrs/attrs.h"

#include <stdlib.h>
#include <string.h>

#include "io/npy.h"
#include "core/util.h"

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

/* The model.json entry of one attribute. */
static json_t *
attr_json(const struct kg_attr_spec *sp, const struct kg_attr_enc *enc)
{
	json_t *a = json_object();

	json_object_set_new(a, "name", json_string(sp->name));
	json_object_set_new(a, "output", json_string(sp->output));
	json_object_set_new(a, "kind",
	    json_string(kg_attr_kind_name(sp->kind)));
	json_object_set_new(a, "slots", json_integer((json_int_t)enc->slots));
	json_object_set_new(a, "fit_values",
	    json_integer((json_int_t)enc->n_values));
	json_object_set_new(a, "fit_entities",
	    json_integer((json_int_t)enc->n_entities));
	switch (sp->kind) {
	case KG_ATTR_NUMERIC:
	case KG_ATTR_DATE:
		json_object_set_new(a, "n_bins", json_integer(enc->n_bins));
		break;
	case KG_ATTR_CATEGORICAL:
	case KG_ATTR_MULTILABEL:
		json_object_set_new(a, "vocabulary",
		    vocab_json(&enc->vocab, enc->n_vocab));
		break;
	case KG_ATTR_TEXT:
		json_object_set_new(a, "external",
		    json_boolean(enc->external));
		if (sp->transformer) {
			json_object_set_new(a, "model_dir",
			    json_string(enc->model_dir));
			json_object_set_new(a, "weights_sha256",
			    json_string(enc->weights_sha256));
			json_object_set_new(a, "tokenizer_sha256",
			    json_string(enc->tokenizer_sha256));
			break;
		}
		if (enc->external)
			break;
		json_object_set_new(a, "vocabulary",
		    vocab_json(&enc->text.vocab, enc->text.n_vocab));
		json_object_set_new(a, "energy", json_real(enc->text.energy));
		break;
	}
	return a;
}

static int
write_model_array(const char *dir, const char *output, const char *suffix,
    enum kg_dtype dt, int ndim, const uint64_t *shape, const void *data)
{
	char *path = model_file(dir, output, suffix);
	int rc = kg_npy_write(path, dt, ndim, shape, data);

	free(path);
	return rc;
}

/* The arrays of one attribute: bin edges, or a built-in text encoder's
 * idf and projection.  0 or -1. */
static int
write_enc_arrays(const char *dir, const struct kg_attr_spec *sp,
    const struct kg_attr_enc *enc)
{
	uint64_t shape[2];

	switch (sp->kind) {
	case KG_ATTR_NUMERIC:
	case KG_ATTR_DATE:
		shape[0] = (uint64_t)enc->n_bins + 1;
		return write_model_array(dir, sp->output, ".edges.npy",
		    KG_DT_F8, 1, shape, enc->edges);
	case KG_ATTR_CATEGORICAL:
	case KG_ATTR_MULTILABEL:
		return 0;
	case KG_ATTR_TEXT:
		if (enc->external || sp->transformer)
			return 0;
		shape[0] = enc->text.n_vocab;
		shape[1] = enc->text.dim;
		if (write_model_array(dir, sp->output, ".idf.npy", KG_DT_F8, 1,
		    shape, enc->text.idf) < 0)
			return -1;
		return write_model_array(dir, sp->output, ".proj.npy",
		    KG_DT_F4, 2, shape, enc->text.proj);
	}
	return 0;
}

int
kg_attrs_model_write(const struct kg_attrs_model *m, const char *dir)
{
	json_t *root = json_object(), *attrs = json_array();
	char *path;
	size_t i;
	int rc;

	json_object_set(root, "schema", m->schema.json);
	json_object_set_new(root, "n_entities",
	    json_integer((json_int_t)m->n_entities));
	json_object_set_new(root, "text_command", m->text_command ?
	    json_string(m->text_command) : json_null());
	json_object_set(root, "tables", m->tables);
	json_object_set_new(root, "attributes", attrs);
	for (i = 0; i < m->schema.n_attrs; i++) {
		json_array_append_new(attrs, attr_json(&m->schema.attrs[i],
		    &m->enc[i]));
		if (write_enc_arrays(dir, &m->schema.attrs[i],
		    &m->enc[i]) < 0) {
			json_decref(root);
			return -1;
		}
	}
	path = kg_path_join(dir, "model.json");
	rc = json_dump_file(root, path, JSON_INDENT(1));
	if (rc != 0)
		kg_error_errno("cannot write '%s'", path);
	free(path);
	json_decref(root);
	return rc != 0 ? -1 : 0;
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

/* Numbers and dates: n_bins and the bin edges. */
static int
read_enc_bins(const char *dir, const char *file, json_t *a,
    const struct kg_attr_spec *sp, struct kg_attr_enc *enc)
{
	struct kg_npy arr = KG_NPY_INIT;
	json_t *v = json_object_get(a, "n_bins");
	uint64_t shape[1];

	if (!json_is_integer(v) || json_integer_value(v) < 1 ||
	    json_integer_value(v) > KG_ATTR_MAX_BINS) {
		kg_error("%s: attribute '%s': bad n_bins", file, sp->name);
		return -1;
	}
	enc->n_bins = (uint32_t)json_integer_value(v);
	shape[0] = (uint64_t)enc->n_bins + 1;
	if (read_array(dir, sp->output, ".edges.npy", KG_DT_F8, 1, shape,
	    &arr) < 0)
		return -1;
	enc->edges = kg_xmallocarray(shape[0], sizeof(double));
	memcpy(enc->edges, arr.data, shape[0] * sizeof(double));
	kg_npy_release(&arr);
	enc->slots = (uint64_t)enc->n_bins + 1;
	return 0;
}

/* A transformer: its directory, SHA-256 sums and width. */
static int
read_enc_transformer(const char *file, json_t *a,
    const struct kg_attr_spec *sp, struct kg_attr_enc *enc)
{
	const char *dir = json_string_value(json_object_get(a, "model_dir"));
	const char *ws = json_string_value(json_object_get(a,
	    "weights_sha256"));
	const char *ts = json_string_value(json_object_get(a,
	    "tokenizer_sha256"));
	json_t *slots = json_object_get(a, "slots");

	if (dir == NULL || ws == NULL || ts == NULL || strlen(ws) != 64 ||
	    strlen(ts) != 64 || !json_is_integer(slots) ||
	    json_integer_value(slots) < 1 ||
	    json_integer_value(slots) > KG_ATTR_MAX_DIM ||
	    (sp->dim != 0 && json_integer_value(slots) != sp->dim)) {
		kg_error("%s: attribute '%s': malformed transformer entry",
		    file, sp->name);
		return -1;
	}
	enc->model_dir = kg_xstrdup(dir);
	memcpy(enc->weights_sha256, ws, 65);
	memcpy(enc->tokenizer_sha256, ts, 65);
	enc->slots = (uint64_t)json_integer_value(slots);
	enc->text.dim = (uint32_t)enc->slots;
	kg_dict_init(&enc->text.vocab);
	return 0;
}

/* Text: a transformer's model, nothing more for the external command,
 * else the vocabulary, idf and projection of the built-in encoder. */
static int
read_enc_text(const char *dir, const char *file, json_t *a,
    const struct kg_attr_spec *sp, struct kg_attr_enc *enc)
{
	struct kg_npy arr = KG_NPY_INIT, arr2 = KG_NPY_INIT;
	struct kg_dict d;
	const char **words;
	uint64_t shape[2];
	uint32_t n, i;
	int rc;

	if (sp->transformer)
		return read_enc_transformer(file, a, sp, enc);
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
	    &arr) < 0 || read_array(dir, sp->output, ".proj.npy", KG_DT_F4, 2,
	    shape, &arr2) < 0) {
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

static int
read_enc(const char *dir, const char *file, json_t *a,
    const struct kg_attr_spec *sp, struct kg_attr_enc *enc)
{
	json_t *v = json_object_get(a, "slots");

	enc->slots = json_is_integer(v) ? (uint64_t)json_integer_value(v) : 0;
	switch (sp->kind) {
	case KG_ATTR_NUMERIC:
	case KG_ATTR_DATE:
		return read_enc_bins(dir, file, a, sp, enc);
	case KG_ATTR_CATEGORICAL:
	case KG_ATTR_MULTILABEL:
		if (read_vocab(file, sp->name, a, &enc->vocab,
		    &enc->n_vocab) < 0)
			return -1;
		enc->slots = (uint64_t)enc->n_vocab + 1;
		return 0;
	case KG_ATTR_TEXT:
		return read_enc_text(dir, file, a, sp, enc);
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
