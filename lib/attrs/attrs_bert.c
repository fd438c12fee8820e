/*
 * attrs_bert: text attributes through a transformer model (declared in
 * attrs_impl.h): the fit records which model, the encoding runs it once
 * per distinct value and averages an entity's values.
 */
#include "attrs/attrs_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attrs/bert.h"
#include "core/util.h"

/* The model's checks against the schema's options. */
static int
check_options(const struct kg_bert *m, const struct kg_attr_spec *sp,
    const char *dir)
{
	if (sp->dim != 0 && sp->dim != m->hidden) {
		kg_error("attribute '%s': dim %u, but the model '%s' gives "
		    "%u values", sp->name, sp->dim, dir, m->hidden);
		return -1;
	}
	if (sp->max_length > m->max_pos) {
		kg_error("attribute '%s': max_length %u exceeds the %u "
		    "positions of the model '%s'", sp->name, sp->max_length,
		    m->max_pos, dir);
		return -1;
	}
	return 0;
}

int
kg_attrs_fit_transformer(struct kg_attr_enc *enc,
    const struct kg_attr_spec *sp)
{
	struct kg_bert m = KG_BERT_INIT;
	char *abs;

	if (kg_bert_load(&m, sp->model_path) < 0)
		return -1;
	if (check_options(&m, sp, sp->model_path) < 0) {
		kg_bert_release(&m);
		return -1;
	}
	abs = realpath(sp->model_path, NULL);
	enc->model_dir = abs != NULL ? abs : kg_xstrdup(sp->model_path);
	memcpy(enc->weights_sha256, m.weights_sha256, 65);
	memcpy(enc->tokenizer_sha256, m.tokenizer_sha256, 65);
	enc->slots = m.hidden;
	enc->text.dim = m.hidden;
	kg_dict_init(&enc->text.vocab);
	kg_bert_release(&m);
	return 0;
}

/* The model of enc, unchanged since fit. */
static int
load_checked(struct kg_bert *m, const struct kg_attr_enc *enc,
    const struct kg_attr_spec *sp)
{
	const char *what = NULL, *had = NULL, *now = NULL;

	if (kg_bert_load(m, enc->model_dir) < 0)
		return -1;
	if (strcmp(m->weights_sha256, enc->weights_sha256) != 0) {
		what = m->weights_path;
		had = enc->weights_sha256;
		now = m->weights_sha256;
	} else if (strcmp(m->tokenizer_sha256, enc->tokenizer_sha256) != 0) {
		what = m->tokenizer_path;
		had = enc->tokenizer_sha256;
		now = m->tokenizer_sha256;
	}
	if (what == NULL && m->hidden != enc->text.dim)
		what = "the model's width";
	if (what != NULL) {
		kg_error("%s: changed since fit (sha256 %s, the encoder model "
		    "has %s)", what, now ? now : "-", had ? had : "-");
		kg_bert_release(m);
		return -1;
	}
	if (check_options(m, sp, enc->model_dir) < 0) {
		kg_bert_release(m);
		return -1;
	}
	return 0;
}

/* The distinct values of c: text ids[j] for value j, texts and lengths
 * from the dictionary.  0, or -1 after kg_error() (a value the dictionary
 * cannot hold). */
static int
distinct_values(const char *name, const struct kg_attrs_col *c,
    struct kg_dict *d,
    uint32_t *ids, const char ***texts, size_t **lens)
{
	size_t cap = 0;
	uint64_t j;

	kg_dict_init(d);
	*texts = NULL;
	*lens = NULL;
	for (j = 0; j < c->n; j++) {
		size_t len;
		const char *s = kg_attrs_col_str(c, j, &len);
		int added = 0;
		int64_t id;

		if (len > KG_DICT_MAX_NAME || memchr(s, '\0', len) != NULL) {
			kg_error("attribute '%s': a text holds a NUL byte or "
			    "is longer than %u bytes", name, KG_DICT_MAX_NAME);
			return -1;
		}
		id = kg_dict_intern(d, s, len, &added);

		if (id < 0)
			return -1;
		ids[j] = (uint32_t)id;
		if (!added)
			continue;
		if ((size_t)id >= cap) {
			cap = 2 * cap + 1024;
			*texts = kg_xreallocarray(*texts, cap, sizeof(char *));
			*lens = kg_xreallocarray(*lens, cap, sizeof(size_t));
		}
		(*lens)[id] = len;
	}
	for (j = 0; j < kg_dict_size(d); j++)
		(*texts)[j] = kg_dict_name(d, (uint32_t)j);
	return 0;
}

/* out[e] = the mean of entity e's value vectors (normalised if wanted). */
static void
entity_means(const struct kg_attrs_col *c, uint64_t n, const uint32_t *ids,
    const float *vec, uint32_t dim, int normalize, float *out, uint8_t *has)
{
	uint64_t e, j;
	uint32_t k;

	for (e = 0; e < n; e++) {
		float *o = out + e * dim;
		uint64_t cnt = c->start[e + 1] - c->start[e];
		double norm = 0;

		if (cnt == 0)
			continue;
		has[e] = 1;
		for (j = c->start[e]; j < c->start[e + 1]; j++) {
			const float *v = vec + (size_t)ids[c->order[j]] * dim;

			for (k = 0; k < dim; k++)
				o[k] += v[k];
		}
		if (cnt == 1)
			continue;
		for (k = 0; k < dim; k++)
			o[k] /= (float)cnt;
		if (!normalize)
			continue;
		for (k = 0; k < dim; k++)
			norm += (double)o[k] * o[k];
		norm = sqrt(norm);
		norm = norm > 1e-12 ? norm : 1e-12;
		for (k = 0; k < dim; k++)
			o[k] = (float)(o[k] / norm);
	}
}

int
kg_attrs_encode_transformer(const struct kg_attr_enc *enc,
    const struct kg_attr_spec *sp, const struct kg_attrs_place *pl,
    const struct kg_attrs_col *c, uint64_t n, float *out, uint8_t *has,
    json_t *fig)
{
	struct kg_bert m = KG_BERT_INIT;
	struct kg_bert_opts o = { sp->max_length, sp->batch_size,
	    pl->on_device, pl->device };
	struct kg_bert_stats st;
	struct kg_dict d;
	uint32_t *ids = kg_xcalloc(c->n + 1, sizeof(uint32_t));
	const char **texts;
	size_t *lens, nd;
	float *vec = NULL;
	int rc = -1;

	if (load_checked(&m, enc, sp) < 0) {
		free(ids);
		return -1;
	}
	if (distinct_values(sp->name, c, &d, ids, &texts, &lens) < 0)
		goto out;
	nd = kg_dict_size(&d);
	vec = kg_xcalloc(nd * m.hidden + 1, sizeof(float));
	memset(&st, 0, sizeof(st));
	if (nd > 0 && kg_bert_encode(&m, &o, nd, texts, lens, vec, &st) < 0)
		goto out;
	entity_means(c, n, ids, vec, m.hidden, m.normalize, out, has);
	if (fig != NULL) {
		json_object_set_new(fig, "distinct_texts",
		    json_integer((json_int_t)nd));
		json_object_set_new(fig, "tokens",
		    json_integer((json_int_t)st.tokens));
		json_object_set_new(fig, "encode_seconds", json_real(st.seconds));
		json_object_set_new(fig, "gflops", json_real(st.flops / 1e9));
		json_object_set_new(fig, "thread_seconds", json_pack(
		    "{s:f, s:f, s:f}", "gemm", st.gemm_seconds, "attention",
		    st.attention_seconds, "other", st.other_seconds));
		json_object_set_new(fig, "backend", json_string(o.on_device ?
		    st.backend : "host"));
		json_object_set_new(fig, "batches",
		    json_integer((json_int_t)st.batches));
		json_object_set_new(fig, "device_copies",
		    json_integer((json_int_t)st.copies));
	}
	rc = 0;
out:
	free(vec);
	free(texts);
	free(lens);
	free(ids);
	kg_dict_release(&d);
	kg_bert_release(&m);
	return rc;
}
