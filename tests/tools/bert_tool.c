/*
 * bert_tool: the BERT encoder of lib/attrs/bert.h on a list of texts, for
 * the tests.
 *   bert_tool tokens MODEL_DIR TEXTS.json [MAX_LEN]
 *       one line per text: its token IDs, separated by spaces;
 *   bert_tool encode MODEL_DIR TEXTS.json [MAX_LEN [BATCH]]
 *       one line per text: its vector (%.9g, separated by spaces), then
 *       on stderr "tokens T flops F seconds S", then "gemm G attention A
 *       other O" (thread-seconds of each part, bert.h's kg_bert_stats);
 *   bert_tool encode-dev MODEL_DIR TEXTS.json [MAX_LEN [BATCH]]
 *       the same through the device path on the CPU backend, and on
 *       stderr also "batches B copies C".
 * TEXTS.json is a JSON array of strings.  Exit 0, 1 on a model or input
 * error (the library's message on stderr), 2 on bad usage.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attrs/bert.h"
#include "compute/compute.h"
#include "core/util.h"

static int
read_texts(const char *path, json_t **root, const char ***texts,
    size_t **lens, size_t *n)
{
	json_error_t jerr;
	size_t i;

	*root = json_load_file(path, JSON_ALLOW_NUL, &jerr);
	if (*root == NULL || !json_is_array(*root)) {
		fprintf(stderr, "bert_tool: %s: expected a JSON array of "
		    "strings\n", path);
		return -1;
	}
	*n = json_array_size(*root);
	*texts = kg_xcalloc(*n + 1, sizeof(char *));
	*lens = kg_xcalloc(*n + 1, sizeof(size_t));
	for (i = 0; i < *n; i++) {
		json_t *s = json_array_get(*root, i);

		if (!json_is_string(s)) {
			fprintf(stderr, "bert_tool: %s[%zu]: not a string\n",
			    path, i);
			return -1;
		}
		(*texts)[i] = json_string_value(s);
		(*lens)[i] = json_string_length(s);
	}
	return 0;
}

static void
tokens(const struct kg_bert *m, size_t max_len, const char **texts,
    const size_t *lens, size_t n)
{
	struct kg_bert_tok_scratch sc = KG_BERT_TOK_SCRATCH_INIT;
	uint32_t *ids = kg_xmallocarray(max_len, sizeof(uint32_t));
	size_t i, k, c;

	for (i = 0; i < n; i++) {
		c = kg_bert_tok_encode(&m->tok, texts[i], lens[i], &sc, ids,
		    max_len);
		for (k = 0; k < c; k++)
			printf("%s%u", k ? " " : "", ids[k]);
		printf("\n");
	}
	free(ids);
	kg_bert_tok_scratch_release(&sc);
}

int
main(int argc, char *argv[])
{
	struct kg_bert m = KG_BERT_INIT;
	struct kg_bert_opts o = { 0, 0, 0, KG_DEVICE_INIT };
	struct kg_bert_stats st;
	const char **texts = NULL;
	size_t *lens = NULL, n = 0, i, j;
	json_t *root = NULL;
	float *out;
	int rc = 1, enc;

	kg_setprogname(argv[0]);
	kg_compute_init();
	if (argc < 4 || argc > 6 || (strcmp(argv[1], "tokens") != 0 &&
	    strcmp(argv[1], "encode") != 0 &&
	    strcmp(argv[1], "encode-dev") != 0)) {
		fprintf(stderr, "usage: bert_tool tokens|encode|encode-dev "
		    "MODEL_DIR TEXTS.json [MAX_LEN [BATCH]]\n");
		return 2;
	}
	enc = strcmp(argv[1], "tokens") != 0;
	o.on_device = strcmp(argv[1], "encode-dev") == 0;
	if ((argc > 4 && kg_parse_u32("MAX_LEN", argv[4], 2, 1u << 16,
	    &o.max_len) < 0) || (argc > 5 && kg_parse_u32("BATCH", argv[5], 1,
	    1u << 16, &o.batch) < 0))
		return 2;
	if (read_texts(argv[3], &root, &texts, &lens, &n) < 0 ||
	    kg_bert_load(&m, argv[2]) < 0)
		goto out;
	if (!enc) {
		tokens(&m, o.max_len ? o.max_len : m.max_len, texts, lens, n);
		rc = 0;
		goto out;
	}
	out = kg_xcalloc(n * m.hidden + 1, sizeof(float));
	if (kg_bert_encode(&m, &o, n, texts, lens, out, &st) == 0) {
		for (i = 0; i < n; i++)
			for (j = 0; j < m.hidden; j++)
				printf("%.9g%c", out[i * m.hidden + j],
				    j + 1 < m.hidden ? ' ' : '\n');
		fprintf(stderr, "tokens %llu flops %.6g seconds %.6g\n",
		    (unsigned long long)st.tokens, st.flops, st.seconds);
		fprintf(stderr, "gemm %.6g attention %.6g other %.6g\n",
		    st.gemm_seconds, st.attention_seconds, st.other_seconds);
		if (o.on_device)
			fprintf(stderr, "batches %llu copies %llu\n",
			    (unsigned long long)st.batches,
			    (unsigned long long)st.copies);
		rc = 0;
	}
	free(out);
out:
	kg_bert_release(&m);
	free(texts);
	free(lens);
	if (root != NULL)
		json_decref(root);
	return rc;
}
