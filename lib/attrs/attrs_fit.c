/*
 * attrs_fit: fitting the encoder of every attribute (kg_attrs_fit,
 * declared in attrs.h).
 */
#include "attrs/attrs_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attrs/attrs_bins.h"
#include "core/util.h"

struct label_ctx {
	struct kg_dict *dict;
	struct kg_attrs_idx *ids;
};

static void
intern_label(void *arg, const char *s, size_t len)
{
	struct label_ctx *c = arg;
	int64_t id = kg_dict_intern(c->dict, s, len, NULL);

	if (id >= 0)
		kg_attrs_idx_push(c->ids, (uint32_t)id);
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
	struct kg_attrs_idx ids = { NULL, 0, 0 };
	struct label_ctx lc = { &all, &ids };
	struct vocab_entry *v;
	uint64_t *count = NULL, e, j, cap = 0;
	size_t i, k = 0;

	for (e = 0; e < n_local; e++) {
		ids.n = 0;
		for (j = c->start[e]; j < c->start[e + 1]; j++) {
			size_t len;
			const char *s = kg_attrs_col_str(c, c->order[j], &len);

			kg_attrs_for_each_label(sp, s, len, intern_label, &lc);
		}
		if (kg_dict_size(&all) > cap) {
			uint64_t old = cap;

			cap = 2 * kg_dict_size(&all) + 64;
			count = kg_xreallocarray(count, cap, sizeof(uint64_t));
			memset(count + old, 0, (cap - old) * sizeof(uint64_t));
		}
		kg_attrs_idx_unique(&ids);
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

/* Numbers and dates: the bin edges of the values (one bin when there is
 * none). */
static void
fit_bins(struct kg_attr_enc *enc, const struct kg_attr_spec *sp,
    const struct kg_attrs_col *c)
{
	double *x;

	enc->edges = kg_xcalloc(sp->n_bins + 1, sizeof(double));
	if (c->n == 0) {
		kg_warn("attribute '%s' has no value; it gets a single bin",
		    sp->name);
		enc->edges[0] = -INFINITY;
		enc->edges[1] = INFINITY;
		enc->n_bins = 1;
	} else {
		x = kg_xmallocarray(c->n, sizeof(double));
		memcpy(x, c->num, c->n * sizeof(double));
		enc->n_bins = kg_bins_fit(x, c->n, sp->n_bins, sp->strategy,
		    enc->edges);
		free(x);
		if (enc->n_bins < sp->n_bins)
			kg_warn("attribute '%s': %u of %u bins (the others "
			    "would be empty)", sp->name, enc->n_bins,
			    sp->n_bins);
	}
	enc->slots = (uint64_t)enc->n_bins + 1;
}

/* Text: the transformer model checked and recorded, the built-in
 * encoder fitted on one document per entity, or nothing to fit for the
 * external command.  0 or -1. */
static int
fit_text(struct kg_attr_enc *enc, const struct kg_attr_spec *sp,
    const struct kg_attrs_col *c, uint64_t n_local, int external)
{
	struct kg_text_fit_opts o;
	struct kg_attrs_docs t;
	int rc;

	if (sp->transformer)
		return kg_attrs_fit_transformer(enc, sp);
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
	kg_attrs_docs_build(&t, c, n_local);
	rc = kg_text_fit(&enc->text, &o, t.n, t.docs, t.lens);
	kg_attrs_docs_release(&t);
	return rc;
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
	case KG_ATTR_DATE:
		fit_bins(enc, sp, c);
		return 0;
	case KG_ATTR_CATEGORICAL:
	case KG_ATTR_MULTILABEL:
		fit_labels(enc, sp, c, n_local);
		return 0;
	case KG_ATTR_TEXT:
		return fit_text(enc, sp, c, n_local, external);
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
		free(m->enc[i].model_dir);
	}
	free(m->enc);
	free(m->text_command);
	if (m->tables != NULL)
		json_decref(m->tables);
	kg_attr_schema_release(&m->schema);
	memset(m, 0, sizeof(*m));
}
