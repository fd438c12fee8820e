/*
 * attrs_encode: the features of a range of entities, computed from a
 * fitted model and handed to the feature-array writer of
 * attrs_featwrite.c (kg_attrs_encode, declared in attrs.h).
 */
#include "attrs/attrs_impl.h"

#include <stdlib.h>
#include <string.h>

#include "attrs/attrs_bins.h"
#include "core/util.h"

struct slot_ctx {
	const struct kg_attr_enc *enc;
	struct kg_attrs_idx *out;
};

static void
label_slot(void *arg, const char *s, size_t len)
{
	struct slot_ctx *c = arg;
	int64_t id = kg_dict_find(&c->enc->vocab, s, len);

	kg_attrs_idx_push(c->out, id >= 0 ? (uint32_t)id : c->enc->n_vocab);
}

/*
 * The slots of the n entities of an index kind: offsets[0..n] into *all,
 * each row sorted and distinct, and has[e] = 1 for entities with a value;
 * returns how many have one.
 */
static uint64_t
index_rows(const struct kg_attr_enc *enc, const struct kg_attr_spec *sp,
    const struct kg_attrs_col *c, uint64_t n, int64_t *offsets,
    uint8_t *has, struct kg_attrs_idx *all)
{
	int bins = sp->kind == KG_ATTR_NUMERIC || sp->kind == KG_ATTR_DATE;
	struct kg_attrs_idx row = { NULL, 0, 0 };
	struct slot_ctx sc = { enc, &row };
	uint64_t e, j, with = 0;
	size_t i;

	offsets[0] = 0;
	for (e = 0; e < n; e++) {
		row.n = 0;
		for (j = c->start[e]; j < c->start[e + 1]; j++) {
			uint64_t k = c->order[j];
			size_t len;
			const char *s;

			if (bins) {
				kg_attrs_idx_push(&row, kg_bins_find(
				    enc->edges, enc->n_bins, c->num[k]));
				continue;
			}
			s = kg_attrs_col_str(c, k, &len);
			kg_attrs_for_each_label(sp, s, len, label_slot, &sc);
		}
		has[e] = c->start[e + 1] > c->start[e];
		with += has[e];
		if (row.n == 0 && bins)
			kg_attrs_idx_push(&row, enc->n_bins);
		kg_attrs_idx_unique(&row);
		for (i = 0; i < row.n; i++)
			kg_attrs_idx_push(all, row.v[i]);
		offsets[e + 1] = (int64_t)all->n;
	}
	free(row.v);
	return with;
}

static int
encode_index(const struct kg_attr_enc *enc, const struct kg_attr_spec *sp,
    const struct kg_attrs_col *c, uint64_t n, const char *dir,
    char *const names[3], json_t *fig)
{
	struct kg_attrs_idx all = { NULL, 0, 0 };
	int64_t *offsets = kg_xmallocarray(n + 1, sizeof(int64_t));
	uint8_t *has = kg_xcalloc(n + 1, 1);
	uint64_t shape[1], with;
	int rc;

	with = index_rows(enc, sp, c, n, offsets, has, &all);
	shape[0] = n;
	rc = kg_attrs_write_array(dir, names[0], KG_DT_U1, 1, shape, has);
	shape[0] = n + 1;
	if (rc == 0)
		rc = kg_attrs_write_array(dir, names[1], KG_DT_I8, 1, shape,
		    offsets);
	shape[0] = all.n;
	if (rc == 0)
		rc = kg_attrs_write_array(dir, names[2], KG_DT_I4, 1, shape,
		    all.v != NULL ? (void *)all.v : (void *)has);
	if (fig != NULL) {
		json_object_set_new(fig, "entities_with_value",
		    json_integer((json_int_t)with));
		json_object_set_new(fig, "nnz",
		    json_integer((json_int_t)all.n));
	}
	free(all.v);
	free(offsets);
	free(has);
	return rc;
}

/* The vectors of the documents t into out (row t->ent[k] for text k),
 * through the external command cmd or the built-in encoder.  0 or -1. */
static int
text_vectors(const struct kg_attr_enc *enc, const struct kg_attrs_docs *t,
    const char *cmd, float *out)
{
	uint32_t dim = enc->text.dim;
	float *ext;
	size_t k;
	int rc = 0;

	if (enc->external) {
		ext = kg_xcalloc(t->n * dim + 1, sizeof(float));
		if (t->n > 0)
			rc = kg_text_command(cmd, dim, t->n, t->docs, t->lens,
			    ext);
		for (k = 0; rc == 0 && k < t->n; k++)
			memcpy(out + t->ent[k] * dim, ext + k * dim,
			    dim * sizeof(float));
		free(ext);
		return rc;
	}
#pragma omp parallel
	{
		struct kg_text_scratch sc = KG_TEXT_SCRATCH_INIT;
		long long kk;

#pragma omp for schedule(dynamic, 256)
		for (kk = 0; kk < (long long)t->n; kk++)
			kg_text_encode(&enc->text, t->docs[kk], t->lens[kk],
			    &sc, out + t->ent[kk] * dim);
		kg_text_scratch_release(&sc);
	}
	return 0;
}

static int
encode_text(const struct kg_attrs_model *m, size_t i,
    const struct kg_attrs_col *c, uint64_t n, const char *cmd,
    const char *dir, char *const names[3], json_t *fig)
{
	const struct kg_attr_enc *enc = &m->enc[i];
	const struct kg_attr_spec *sp = &m->schema.attrs[i];
	struct kg_attrs_docs t;
	float *out = kg_xcalloc(n * enc->text.dim + 1, sizeof(float));
	uint8_t *has = kg_xcalloc(n + 1, 1);
	uint64_t shape[2], with = 0;
	size_t k;
	int rc;

	memset(&t, 0, sizeof(t));
	if (sp->transformer)
		rc = kg_attrs_encode_transformer(enc, sp, &m->place, c, n,
		    out, has, fig);
	else {
		kg_attrs_docs_build(&t, c, n);
		for (k = 0; k < t.n; k++)
			has[t.ent[k]] = 1;
		rc = text_vectors(enc, &t, cmd, out);
	}
	shape[0] = n;
	shape[1] = enc->text.dim;
	if (rc == 0)
		rc = kg_attrs_write_array(dir, names[0], KG_DT_U1, 1, shape,
		    has);
	if (rc == 0)
		rc = kg_attrs_write_array(dir, names[1], KG_DT_F4, 2, shape,
		    out);
	for (k = 0; k < n; k++)
		with += has[k];
	if (fig != NULL)
		json_object_set_new(fig, "entities_with_value",
		    json_integer((json_int_t)with));
	kg_attrs_docs_release(&t);
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
			if (m->enc[i].external && !sp->transformer &&
			    text_command == NULL) {
				kg_error("attribute '%s' needs a text "
				    "command (--text-command)", sp->name);
				rc = -1;
			} else
				rc = encode_text(m, i, &d->cols[i], n,
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
