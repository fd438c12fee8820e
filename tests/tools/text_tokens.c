/*
 * text_tokens: what the transformer text attributes of a schema give the
 * encoder, counted without encoding, for bench/text_scale.sh.
 *   text_tokens DATASET SCHEMA.json N_SHARDS
 * reads the schema's tables for every entity of the dataset (relative
 * table paths next to the schema, as kg-encode-attrs fit reads them) and,
 * for each attribute with "encoder": "transformer", tokenizes each of its
 * distinct values once with the model's tokenizer (lib/attrs/bert_tok.h,
 * cut at the attribute's max_length or the model's).  Prints one JSON
 * object on stdout:
 *   "attributes": per attribute its name, values (rows), distinct_texts,
 *       tokens (of the distinct texts, [CLS] and [SEP] included), flops
 *       (bert.h's kg_bert_flops summed over them), gemm_flops (the
 *       projections' and FFN's share), max_len, the model's hidden,
 *       inter and n_layers;
 *   "total": values, distinct_texts, tokens, flops, gemm_flops over the
 *       attributes (each attribute's values are distinct apart);
 *   "shards": for shard i of N_SHARDS (entities [n*i/N, n*(i+1)/N), as
 *       transform --shard i/N), texts, distinct_texts, tokens, flops and
 *       gemm_flops of the values its entities hold, distinct within the
 *       shard, as the sharded transform encodes them.
 * Exit 0, 1 on bad input (the library's message on stderr), 2 on bad
 * usage.
 */
#include <jansson.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attrs/attrs.h"
#include "attrs/bert.h"
#include "core/util.h"
#include "io/dataset.h"

/* Counts of a set of texts. */
struct count {
	uint64_t texts, distinct, tokens;
	double flops, gemm_flops;
};

static void
count_add(struct count *c, uint64_t tokens, double flops, double gemm)
{
	c->distinct++;
	c->tokens += tokens;
	c->flops += flops;
	c->gemm_flops += gemm;
}

static json_t *
count_json(const struct count *c)
{
	return json_pack("{s:I, s:I, s:I, s:f, s:f}", "texts",
	    (json_int_t)c->texts, "distinct_texts", (json_int_t)c->distinct,
	    "tokens", (json_int_t)c->tokens, "flops", c->flops, "gemm_flops",
	    c->gemm_flops);
}

/* The dataset's entity dictionary, in ID order.  0 or -1. */
static int
load_entities(const char *dir, struct kg_dataset *ds, struct kg_dict *ents)
{
	char **names = NULL;
	uint64_t n = 0, i;
	int rc = 0;

	if (kg_dataset_load(ds, dir) < 0 ||
	    kg_dataset_names(ds, "entities.tsv", &names, &n) < 0)
		return -1;
	kg_dict_init(ents);
	for (i = 0; rc == 0 && i < n; i++) {
		int added = 0;

		if (kg_dict_intern(ents, names[i], strlen(names[i]), &added) <
		    0 || !added)
			rc = -1;
	}
	kg_names_free(names, n);
	if (rc == 0 && n != ds->n_entities)
		rc = -1;
	if (rc < 0)
		fprintf(stderr, "text_tokens: %s: bad entities.tsv\n", dir);
	return rc;
}

/*
 * Count attribute column c (entities [0, n)) into *all and shards[0..ns):
 * each distinct value tokenized once; a shard counts a value once per
 * entity range, walking the entities in order.  0 or -1 (a value
 * kg-encode-attrs refuses).
 */
static int
count_column(const struct kg_attr_spec *sp, const struct kg_bert *m,
    const struct kg_attrs_col *c, uint64_t n, uint32_t ns,
    struct count *all, struct count *shards)
{
	struct kg_bert_tok_scratch sc = KG_BERT_TOK_SCRATCH_INIT;
	size_t max_len = sp->max_length ? sp->max_length : m->max_len;
	uint32_t *ids = kg_xmallocarray(max_len, sizeof(uint32_t));
	uint32_t *ntok = NULL, *seen = NULL;
	double h = m->hidden, per_tok = 2.0 * m->n_layers * (4 * h * h +
	    2 * h * m->inter);
	struct kg_dict d = KG_DICT_INIT;
	size_t cap = 0;
	uint64_t e, j;
	uint32_t s;
	int rc = -1;

	kg_dict_init(&d);
	for (s = 0; s < ns; s++)
	for (e = n * s / ns; e < n * (s + 1) / ns; e++) {
		for (j = c->start[e]; j < c->start[e + 1]; j++) {
			uint64_t v = c->order[j];
			const char *t = c->arena + c->off[v];
			size_t len = c->len[v];
			int added = 0;
			int64_t id;

			if (len > KG_DICT_MAX_NAME ||
			    memchr(t, '\0', len) != NULL) {
				fprintf(stderr, "text_tokens: attribute '%s': "
				    "a text holds a NUL byte or is too long\n",
				    sp->name);
				goto out;
			}
			id = kg_dict_intern(&d, t, len, &added);
			if (id < 0)
				goto out;
			if ((size_t)id >= cap) {
				size_t old = cap;

				cap = 2 * cap + 4096;
				ntok = kg_xreallocarray(ntok, cap,
				    sizeof(uint32_t));
				seen = kg_xreallocarray(seen, cap,
				    sizeof(uint32_t));
				memset(seen + old, 0, (cap - old) *
				    sizeof(uint32_t));
			}
			if (added) {
				ntok[id] = (uint32_t)kg_bert_tok_encode(&m->tok,
				    t, len, &sc, ids, max_len);
				count_add(all, ntok[id], kg_bert_flops(m,
				    ntok[id]), per_tok * ntok[id]);
			}
			all->texts++;
			shards[s].texts++;
			if (seen[id] != s + 1) {
				seen[id] = s + 1;
				count_add(&shards[s], ntok[id], kg_bert_flops(m,
				    ntok[id]), per_tok * ntok[id]);
			}
		}
	}
	rc = 0;
out:
	kg_dict_release(&d);
	kg_bert_tok_scratch_release(&sc);
	free(ids);
	free(ntok);
	free(seen);
	return rc;
}

/* The schema's table paths, relative ones next to the schema. */
static char **
table_paths(const struct kg_attr_schema *s, const char *schema_path)
{
	char *copy = kg_xstrdup(schema_path), **paths;
	const char *base = dirname(copy);
	size_t i;

	paths = kg_xcalloc(s->n_tables + 1, sizeof(char *));
	for (i = 0; i < s->n_tables; i++)
		paths[i] = s->tables[i].path[0] == '/' ? kg_xstrdup(
		    s->tables[i].path) : kg_path_join(base, s->tables[i].path);
	free(copy);
	return paths;
}

static int
run(const char *dsdir, const char *schema_path, uint32_t ns)
{
	struct kg_attr_schema s = KG_ATTR_SCHEMA_INIT;
	struct kg_dataset ds = KG_DATASET_INIT;
	struct kg_dict ents = KG_DICT_INIT;
	struct kg_attrs_data data = KG_ATTRS_DATA_INIT;
	struct count total = { 0 }, *shards = NULL;
	json_t *attrs = json_array(), *sh = json_array(), *root;
	char **paths = NULL;
	size_t i;
	int rc = -1;

	if (kg_attr_schema_load(&s, schema_path) < 0 ||
	    load_entities(dsdir, &ds, &ents) < 0)
		goto out;
	paths = table_paths(&s, schema_path);
	if (kg_attrs_collect(&data, &s, (const char *const *)paths, &ents, 0,
	    ds.n_entities, 0) < 0)
		goto out;
	shards = kg_xcalloc(ns, sizeof(*shards));
	for (i = 0; i < s.n_attrs; i++) {
		const struct kg_attr_spec *sp = &s.attrs[i];
		struct kg_bert m = KG_BERT_INIT;
		struct count a = { 0 };
		json_t *o;

		if (sp->kind != KG_ATTR_TEXT || !sp->transformer)
			continue;
		if (kg_bert_load(&m, sp->model_path) < 0)
			goto out;
		if (count_column(sp, &m, &data.cols[i], ds.n_entities, ns, &a,
		    shards) < 0) {
			kg_bert_release(&m);
			goto out;
		}
		o = count_json(&a);
		json_object_set_new(o, "name", json_string(sp->name));
		json_object_set_new(o, "max_len", json_integer(
		    sp->max_length ? sp->max_length : m.max_len));
		json_object_set_new(o, "hidden", json_integer(m.hidden));
		json_object_set_new(o, "inter", json_integer(m.inter));
		json_object_set_new(o, "n_layers", json_integer(m.n_layers));
		json_array_append_new(attrs, o);
		total.texts += a.texts;
		total.distinct += a.distinct;
		total.tokens += a.tokens;
		total.flops += a.flops;
		total.gemm_flops += a.gemm_flops;
		kg_bert_release(&m);
	}
	for (i = 0; i < ns; i++) {
		json_t *o = count_json(&shards[i]);

		json_object_set_new(o, "shard", json_integer((json_int_t)i));
		json_object_set_new(o, "range", json_pack("[I, I]",
		    (json_int_t)(ds.n_entities * i / ns),
		    (json_int_t)(ds.n_entities * (i + 1) / ns)));
		json_array_append_new(sh, o);
	}
	root = json_pack("{s:I, s:o, s:o, s:o}", "entities",
	    (json_int_t)ds.n_entities, "attributes", attrs, "total",
	    count_json(&total), "shards", sh);
	attrs = sh = NULL;
	rc = json_dumpf(root, stdout, JSON_INDENT(1)) < 0 ? -1 : 0;
	putchar('\n');
	json_decref(root);
out:
	if (attrs != NULL)
		json_decref(attrs);
	if (sh != NULL)
		json_decref(sh);
	free(shards);
	for (i = 0; paths != NULL && i < s.n_tables; i++)
		free(paths[i]);
	free(paths);
	kg_attrs_data_release(&data);
	kg_dict_release(&ents);
	kg_dataset_release(&ds);
	kg_attr_schema_release(&s);
	return rc;
}

int
main(int argc, char *argv[])
{
	uint32_t ns;

	kg_setprogname(argv[0]);
	if (argc != 4 || kg_parse_u32("N_SHARDS", argv[3], 1, 1u << 20,
	    &ns) < 0) {
		fprintf(stderr, "usage: text_tokens DATASET SCHEMA.json "
		    "N_SHARDS\n");
		return 2;
	}
	if (run(argv[1], argv[2], ns) < 0)
		return 1;
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "text_tokens: write error on stdout\n");
		return 1;
	}
	return 0;
}
