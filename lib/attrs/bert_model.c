/* Loading a BERT model directory (kg_bert_load, declared in bert.h). */
#include "attrs/bert.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>

#include "attrs/sha256.h"
#include "core/util.h"

static json_t *
load_json(const char *path)
{
	json_error_t jerr;
	json_t *j;

	if (access(path, F_OK) != 0) {
		kg_error_errno("cannot open '%s'", path);
		return NULL;
	}
	j = json_load_file(path, 0, &jerr);
	if (j == NULL)
		kg_error("%s:%d: %s", path, jerr.line, jerr.text);
	else if (!json_is_object(j) && !json_is_array(j)) {
		kg_error("%s: expected a JSON object", path);
		json_decref(j);
		j = NULL;
	}
	return j;
}

/* A positive integer of the config. */
static int
config_u32(const char *path, json_t *c, const char *key, uint32_t max,
    uint32_t *out)
{
	json_t *v = json_object_get(c, key);

	if (!json_is_integer(v) || json_integer_value(v) < 1 ||
	    json_integer_value(v) > (json_int_t)max) {
		kg_error("%s: \"%s\" must be an integer in [1, %u]", path, key,
		    max);
		return -1;
	}
	*out = (uint32_t)json_integer_value(v);
	return 0;
}

/* A string key of the config that must be absent or one value. */
static int
config_is(const char *path, json_t *c, const char *key, const char *want,
    int required)
{
	const char *s = json_string_value(json_object_get(c, key));

	if (s == NULL && !required)
		return 0;
	if (s == NULL || strcmp(s, want) != 0) {
		kg_error("%s: unsupported %s '%s' (only '%s')", path, key,
		    s ? s : "(none)", want);
		return -1;
	}
	return 0;
}

static int
read_config(struct kg_bert *m, const char *path)
{
	json_t *c = load_json(path), *eps;
	int rc = -1;

	if (c == NULL)
		return -1;
	if (config_is(path, c, "model_type", "bert", 1) < 0 ||
	    config_is(path, c, "hidden_act", "gelu", 0) < 0 ||
	    config_is(path, c, "position_embedding_type", "absolute", 0) < 0 ||
	    config_u32(path, c, "hidden_size", 1u << 14, &m->hidden) < 0 ||
	    config_u32(path, c, "num_hidden_layers", 256, &m->n_layers) < 0 ||
	    config_u32(path, c, "num_attention_heads", 256, &m->n_heads) < 0 ||
	    config_u32(path, c, "intermediate_size", 1u << 16, &m->inter) < 0 ||
	    config_u32(path, c, "max_position_embeddings", 1u << 16,
	    &m->max_pos) < 0 ||
	    config_u32(path, c, "type_vocab_size", 1u << 10, &m->n_types) < 0 ||
	    config_u32(path, c, "vocab_size", 1u << 24, &m->n_vocab) < 0)
		goto out;
	if (m->hidden % m->n_heads != 0) {
		kg_error("%s: hidden_size %u is not a multiple of "
		    "num_attention_heads %u", path, m->hidden, m->n_heads);
		goto out;
	}
	eps = json_object_get(c, "layer_norm_eps");
	m->eps = json_is_number(eps) ? (float)json_number_value(eps) : 1e-12f;
	rc = 0;
out:
	json_decref(c);
	return rc;
}

/* The Pooling module's config: exactly one of mean, CLS, max. */
static int
read_pooling(struct kg_bert *m, const char *path)
{
	static const char *const ignored[] = { "pooling_mode_mean_sqrt_len_tokens",
		"pooling_mode_weightedmean_tokens", "pooling_mode_lasttoken",
		NULL };
	json_t *c = load_json(path), *v;
	int n = 0, i, rc = -1;

	if (c == NULL)
		return -1;
	v = json_object_get(c, "word_embedding_dimension");
	if (json_is_integer(v) && json_integer_value(v) != m->hidden) {
		kg_error("%s: word_embedding_dimension %lld is not the "
		    "model's hidden_size %u", path,
		    (long long)json_integer_value(v), m->hidden);
		goto out;
	}
	for (i = 0; ignored[i] != NULL; i++)
		if (json_is_true(json_object_get(c, ignored[i]))) {
			kg_error("%s: unsupported pooling '%s'", path,
			    ignored[i]);
			goto out;
		}
	if (json_is_true(json_object_get(c, "pooling_mode_mean_tokens"))) {
		m->pool = KG_BERT_POOL_MEAN;
		n++;
	}
	if (json_is_true(json_object_get(c, "pooling_mode_cls_token"))) {
		m->pool = KG_BERT_POOL_CLS;
		n++;
	}
	if (json_is_true(json_object_get(c, "pooling_mode_max_tokens"))) {
		m->pool = KG_BERT_POOL_MAX;
		n++;
	}
	if (n != 1) {
		kg_error("%s: expected exactly one pooling mode (mean, cls or "
		    "max), found %d", path, n);
		goto out;
	}
	rc = 0;
out:
	json_decref(c);
	return rc;
}

/* modules.json: the Transformer's folder into *tr, the pooling read,
 * Normalize noted. */
static int
read_modules(struct kg_bert *m, const char *dir, char **tr, char **pool)
{
	char *path = kg_path_join(dir, "modules.json");
	json_t *mods = load_json(path), *v;
	size_t i;
	int rc = -1;

	if (mods == NULL)
		goto out;
	if (!json_is_array(mods)) {
		kg_error("%s: expected an array of modules", path);
		goto out;
	}
	json_array_foreach(mods, i, v) {
		const char *type = json_string_value(json_object_get(v,
		    "type"));
		const char *p = json_string_value(json_object_get(v, "path"));
		const char *s = type ? strrchr(type, '.') : NULL;

		s = s ? s + 1 : type ? type : "?";
		if (strcmp(s, "Transformer") == 0 && *tr == NULL && i == 0)
			*tr = kg_path_join(dir, p ? p : "");
		else if (strcmp(s, "Pooling") == 0 && *pool == NULL &&
		    *tr != NULL)
			*pool = kg_path_join(dir, p ? p : "");
		else if (strcmp(s, "Normalize") == 0 && *pool != NULL &&
		    !m->normalize)
			m->normalize = 1;
		else {
			kg_error("%s: unsupported module %zu '%s' (Transformer, "
			    "Pooling, then Normalize)", path, i,
			    type ? type : "?");
			goto out;
		}
	}
	if (*pool == NULL) {
		kg_error("%s: no Transformer and Pooling modules", path);
		goto out;
	}
	rc = 0;
out:
	if (mods != NULL)
		json_decref(mods);
	free(path);
	return rc;
}

/* The tensor prefix + name with ndim dimensions (rows, cols). */
static const float *
tensor(const struct kg_bert *m, const char *prefix, const char *name,
    uint64_t rows, uint64_t cols)
{
	uint64_t shape[2] = { rows, cols };
	char *full = kg_xasprintf("%s%s", prefix, name);
	const float *p = kg_st_f32(&m->st, full, cols ? 2 : 1, shape);

	free(full);
	return p;
}

static int
read_layer(struct kg_bert *m, const char *pre, uint32_t l)
{
	struct kg_bert_layer *L = &m->layer[l];
	uint64_t h = m->hidden, in = m->inter;
	const float *w[3], *b[3];
	char *p = kg_xasprintf("%sencoder.layer.%u.", pre, l);
	static const char *const qkv[3] = { "query", "key", "value" };
	char name[64];
	int i, rc = -1;

	for (i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "attention.self.%s.weight",
		    qkv[i]);
		w[i] = tensor(m, p, name, h, h);
		snprintf(name, sizeof(name), "attention.self.%s.bias", qkv[i]);
		b[i] = w[i] ? tensor(m, p, name, h, 0) : NULL;
		if (b[i] == NULL)
			goto out;
	}
	L->wqkv = kg_xmallocarray(3 * h * h, sizeof(float));
	L->bqkv = kg_xmallocarray(3 * h, sizeof(float));
	for (i = 0; i < 3; i++) {
		memcpy(L->wqkv + (size_t)i * h * h, w[i], h * h * sizeof(float));
		memcpy(L->bqkv + (size_t)i * h, b[i], h * sizeof(float));
	}
	if ((L->wo = tensor(m, p, "attention.output.dense.weight", h, h)) &&
	    (L->bo = tensor(m, p, "attention.output.dense.bias", h, 0)) &&
	    (L->ln1_w = tensor(m, p, "attention.output.LayerNorm.weight", h,
	    0)) &&
	    (L->ln1_b = tensor(m, p, "attention.output.LayerNorm.bias", h,
	    0)) &&
	    (L->wi = tensor(m, p, "intermediate.dense.weight", in, h)) &&
	    (L->bi = tensor(m, p, "intermediate.dense.bias", in, 0)) &&
	    (L->wf = tensor(m, p, "output.dense.weight", h, in)) &&
	    (L->bf = tensor(m, p, "output.dense.bias", h, 0)) &&
	    (L->ln2_w = tensor(m, p, "output.LayerNorm.weight", h, 0)) &&
	    (L->ln2_b = tensor(m, p, "output.LayerNorm.bias", h, 0)))
		rc = 0;
out:
	free(p);
	return rc;
}

/* Every weight the forward pass reads, shapes checked against the config
 * (names as BertModel saves them, or under "bert." as its heads do). */
static int
read_weights(struct kg_bert *m)
{
	const char *pre = kg_st_find(&m->st, "embeddings.word_embeddings.weight")
	    || !kg_st_find(&m->st, "bert.embeddings.word_embeddings.weight") ?
	    "" : "bert.";
	uint64_t h = m->hidden;
	uint32_t l;

	if (m->tok.n_vocab > m->n_vocab) {
		kg_error("%s: the tokenizer has token IDs up to %u, the model "
		    "%u embeddings", m->tokenizer_path, m->tok.n_vocab - 1,
		    m->n_vocab);
		return -1;
	}
	if (!(m->word = tensor(m, pre, "embeddings.word_embeddings.weight",
	    m->n_vocab, h)) ||
	    !(m->pos = tensor(m, pre, "embeddings.position_embeddings.weight",
	    m->max_pos, h)) ||
	    !(m->type = tensor(m, pre,
	    "embeddings.token_type_embeddings.weight", m->n_types, h)) ||
	    !(m->eln_w = tensor(m, pre, "embeddings.LayerNorm.weight", h, 0)) ||
	    !(m->eln_b = tensor(m, pre, "embeddings.LayerNorm.bias", h, 0)))
		return -1;
	m->layer = kg_xcalloc(m->n_layers, sizeof(*m->layer));
	for (l = 0; l < m->n_layers; l++)
		if (read_layer(m, pre, l) < 0)
			return -1;
	return 0;
}

/* max_seq_length of sentence_bert_config.json, if there is one. */
static int
read_st_config(struct kg_bert *m, const char *tr)
{
	char *path = kg_path_join(tr, "sentence_bert_config.json");
	json_t *c, *v;
	int rc = 0;

	m->max_len = m->max_pos;
	if (access(path, F_OK) == 0) {
		c = load_json(path);
		if (c == NULL)
			rc = -1;
		else {
			v = json_object_get(c, "max_seq_length");
			if (json_is_integer(v) && json_integer_value(v) >= 2 &&
			    json_integer_value(v) <= m->max_pos)
				m->max_len = (uint32_t)json_integer_value(v);
			else if (v != NULL) {
				kg_error("%s: max_seq_length must be in [2, "
				    "%u]", path, m->max_pos);
				rc = -1;
			}
			json_decref(c);
		}
	}
	free(path);
	return rc;
}

/* The SHA-256 of vocab.txt's bytes followed by those of config (NULL:
 * none) into hex; 0 or -1. */
static int
vocab_sha256(const char *vocab, const char *config, char hex[65])
{
	char *a, *b = NULL, *all;
	size_t na, nb = 0;

	a = kg_read_file(vocab, &na);
	if (a == NULL || (config != NULL &&
	    (b = kg_read_file(config, &nb)) == NULL)) {
		free(a);
		return -1;
	}
	all = kg_xmalloc(na + nb + 1);
	memcpy(all, a, na);
	if (nb > 0)
		memcpy(all + na, b, nb);
	kg_sha256_hex(all, na + nb, hex);
	free(all);
	free(a);
	free(b);
	return 0;
}

/* The tokenizer of the Transformer folder tr: its tokenizer.json, else
 * its vocab.txt with tokenizer_config.json (if there is one). */
static int
read_tokenizer(struct kg_bert *m, const char *tr)
{
	char *cfg;
	int rc;

	m->tokenizer_path = kg_path_join(tr, "tokenizer.json");
	if (access(m->tokenizer_path, F_OK) == 0)
		return kg_bert_tok_load(&m->tok, m->tokenizer_path) < 0 ||
		    kg_sha256_file(m->tokenizer_path, m->tokenizer_sha256) < 0 ?
		    -1 : 0;
	cfg = m->tokenizer_path;
	m->tokenizer_path = kg_path_join(tr, "vocab.txt");
	if (access(m->tokenizer_path, F_OK) != 0) {
		kg_error("%s: no such file, nor a vocab.txt beside it", cfg);
		free(cfg);
		return -1;
	}
	free(cfg);
	cfg = kg_path_join(tr, "tokenizer_config.json");
	if (access(cfg, F_OK) != 0) {
		free(cfg);
		cfg = NULL;
	}
	rc = kg_bert_tok_load_vocab(&m->tok, m->tokenizer_path, cfg) < 0 ||
	    vocab_sha256(m->tokenizer_path, cfg, m->tokenizer_sha256) < 0 ?
	    -1 : 0;
	free(cfg);
	return rc;
}

int
kg_bert_load(struct kg_bert *m, const char *dir)
{
	char *tr = NULL, *pool = NULL, *path = NULL;
	int rc = -1;

	memset(m, 0, sizeof(*m));
	if (read_modules(m, dir, &tr, &pool) < 0)
		goto out;
	path = kg_path_join(tr, "config.json");
	if (read_config(m, path) < 0 || read_st_config(m, tr) < 0)
		goto out;
	free(path);
	path = kg_path_join(pool, "config.json");
	if (read_pooling(m, path) < 0)
		goto out;
	m->weights_path = kg_path_join(tr, "model.safetensors");
	if (read_tokenizer(m, tr) < 0 || kg_st_open(&m->st, m->weights_path) < 0 ||
	    read_weights(m) < 0)
		goto out;
	kg_sha256_hex(m->st.map, m->st.size, m->weights_sha256);
	rc = 0;
out:
	free(tr);
	free(pool);
	free(path);
	if (rc < 0)
		kg_bert_release(m);
	return rc;
}

void
kg_bert_release(struct kg_bert *m)
{
	uint32_t l;

	if (m == NULL)
		return;
	for (l = 0; m->layer != NULL && l < m->n_layers; l++) {
		free(m->layer[l].wqkv);
		free(m->layer[l].bqkv);
	}
	free(m->layer);
	kg_bert_tok_release(&m->tok);
	kg_st_close(&m->st);
	free(m->weights_path);
	free(m->tokenizer_path);
	memset(m, 0, sizeof(*m));
}

double
kg_bert_flops(const struct kg_bert *m, size_t n)
{
	double h = m->hidden, t = (double)n;

	/* QKV 3h^2, output h^2, FFN 2 h inter per token; Q K' and S V
	 * 2 n h per token; two flops a multiply-add. */
	return m->n_layers * (2.0 * t * (4.0 * h * h + 2.0 * h * m->inter) +
	    4.0 * t * t * h);
}
