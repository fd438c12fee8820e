/* The BERT tokenizer (declared in bert_tok.h). */
#include "attrs/bert_tok.h"

#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include <utf8proc.h>

#include "core/util.h"

/* ---- Reading tokenizer.json. ---- */

static int
json_flag(json_t *obj, const char *key, int def)
{
	json_t *v = json_object_get(obj, key);

	return json_is_boolean(v) ? json_is_true(v) : def;
}

static int
read_normalizer(struct kg_bert_tok *t, const char *path, json_t *n)
{
	const char *type;
	json_t *sa;

	if (n == NULL || json_is_null(n)) {
		t->clean_text = t->chinese = t->strip_accents = 0;
		t->lowercase = 0;
		return 0;
	}
	type = json_string_value(json_object_get(n, "type"));
	if (type == NULL || strcmp(type, "BertNormalizer") != 0) {
		kg_error("%s: unsupported normalizer '%s' (only "
		    "BertNormalizer)", path, type ? type : "?");
		return -1;
	}
	t->clean_text = json_flag(n, "clean_text", 1);
	t->chinese = json_flag(n, "handle_chinese_chars", 1);
	t->lowercase = json_flag(n, "lowercase", 1);
	sa = json_object_get(n, "strip_accents");
	t->strip_accents = json_is_boolean(sa) ? json_is_true(sa) :
	    t->lowercase;
	return 0;
}

/* The model's vocabulary {piece: ID}, its unknown token and prefix. */
static int
read_wordpiece(struct kg_bert_tok *t, const char *path, json_t *m)
{
	const char *type = json_string_value(json_object_get(m, "type"));
	const char *pre, *key;
	json_t *vocab = json_object_get(m, "vocab"), *v, *mc;
	size_t n;

	if (type == NULL || strcmp(type, "WordPiece") != 0) {
		kg_error("%s: unsupported tokenizer model '%s' (only "
		    "WordPiece)", path, type ? type : "?");
		return -1;
	}
	if (!json_is_object(vocab) || json_object_size(vocab) == 0 ||
	    json_object_size(vocab) > (1u << 24)) {
		kg_error("%s: model.vocab: expected an object of pieces", path);
		return -1;
	}
	pre = json_string_value(json_object_get(m, "continuing_subword_prefix"));
	if (pre == NULL)
		pre = "##";
	if (strlen(pre) >= sizeof(t->prefix)) {
		kg_error("%s: continuing_subword_prefix is too long", path);
		return -1;
	}
	memcpy(t->prefix, pre, strlen(pre) + 1);
	t->prefix_len = strlen(pre);
	mc = json_object_get(m, "max_input_chars_per_word");
	t->max_chars = json_is_integer(mc) && json_integer_value(mc) > 0 ?
	    (uint32_t)json_integer_value(mc) : 100;
	n = json_object_size(vocab);
	t->id = kg_xcalloc(n, sizeof(uint32_t));
	t->n_vocab = 0;
	json_object_foreach(vocab, key, v) {
		int added = 0;
		int64_t k = kg_dict_intern(&t->vocab, key, strlen(key), &added);

		if (k < 0 || !added || !json_is_integer(v) ||
		    json_integer_value(v) < 0 ||
		    json_integer_value(v) >= (json_int_t)1 << 24) {
			kg_error("%s: model.vocab: bad entry '%s' (IDs are "
			    "integers in [0, 2^24))", path, key);
			return -1;
		}
		t->id[k] = (uint32_t)json_integer_value(v);
		if (t->id[k] + 1 > t->n_vocab)
			t->n_vocab = t->id[k] + 1;
	}
	return 0;
}

static int
special(struct kg_bert_tok *t, const char *path, const char *what,
    const char *name, uint32_t *id)
{
	int64_t k = name ? kg_dict_find(&t->vocab, name, strlen(name)) : -1;

	if (k < 0) {
		kg_error("%s: the %s token '%s' is not in the vocabulary", path,
		    what, name ? name : "?");
		return -1;
	}
	*id = t->id[k];
	return 0;
}

/* [CLS] and [SEP] from the post-processor (BertProcessing or a template
 * "[CLS] $A [SEP]"), else by those names. */
static int
read_specials(struct kg_bert_tok *t, const char *path, json_t *root)
{
	json_t *pp = json_object_get(root, "post_processor");
	const char *type = json_string_value(json_object_get(pp, "type"));
	const char *cls = "[CLS]", *sep = "[SEP]";
	json_t *single;

	if (type != NULL && strcmp(type, "BertProcessing") == 0) {
		cls = json_string_value(json_array_get(json_object_get(pp,
		    "cls"), 0));
		sep = json_string_value(json_array_get(json_object_get(pp,
		    "sep"), 0));
	} else if (type != NULL && strcmp(type, "TemplateProcessing") == 0) {
		single = json_object_get(pp, "single");
		cls = json_string_value(json_object_get(json_object_get(
		    json_array_get(single, 0), "SpecialToken"), "id"));
		sep = json_string_value(json_object_get(json_object_get(
		    json_array_get(single, json_array_size(single) - 1),
		    "SpecialToken"), "id"));
		if (json_array_size(single) != 3) {
			kg_error("%s: post_processor.single: expected "
			    "[CLS] $A [SEP]", path);
			return -1;
		}
	}
	if (special(t, path, "classifier", cls, &t->cls) < 0 ||
	    special(t, path, "separator", sep, &t->sep) < 0 ||
	    special(t, path, "unknown", json_string_value(json_object_get(
	    json_object_get(root, "model"), "unk_token")), &t->unk) < 0)
		return -1;
	return 0;
}

int
kg_bert_tok_load(struct kg_bert_tok *t, const char *path)
{
	json_error_t jerr;
	json_t *root, *pre;
	const char *type;
	int rc = -1;

	memset(t, 0, sizeof(*t));
	kg_dict_init(&t->vocab);
	root = json_load_file(path, 0, &jerr);
	if (root == NULL) {
		kg_error("%s:%d: %s", path, jerr.line, jerr.text);
		goto out;
	}
	pre = json_object_get(root, "pre_tokenizer");
	type = json_string_value(json_object_get(pre, "type"));
	if (type == NULL || strcmp(type, "BertPreTokenizer") != 0) {
		kg_error("%s: unsupported pre_tokenizer '%s' (only "
		    "BertPreTokenizer)", path, type ? type : "?");
		goto out;
	}
	if (read_normalizer(t, path, json_object_get(root, "normalizer")) < 0 ||
	    read_wordpiece(t, path, json_object_get(root, "model")) < 0 ||
	    read_specials(t, path, root) < 0)
		goto out;
	rc = 0;
out:
	if (root != NULL)
		json_decref(root);
	if (rc < 0)
		kg_bert_tok_release(t);
	return rc;
}

/* ---- Reading vocab.txt and tokenizer_config.json. ---- */

/* A special token's name from tokenizer_config.json: a string, or an
 * AddedToken object's "content"; def when absent. */
static const char *
config_token(json_t *c, const char *key, const char *def)
{
	json_t *v = json_object_get(c, key);

	if (json_is_object(v))
		v = json_object_get(v, "content");
	return json_is_string(v) ? json_string_value(v) : def;
}

/* The options of tokenizer_config.json (c, may be NULL) as Hugging
 * Face's BertTokenizer reads them. */
static int
read_tok_config(struct kg_bert_tok *t, const char *path, json_t *c)
{
	const char *cls = config_token(c, "tokenizer_class", NULL);
	json_t *sa = json_object_get(c, "strip_accents");
	json_t *ns = json_object_get(c, "never_split");

	if (cls != NULL && strcmp(cls, "BertTokenizer") != 0 &&
	    strcmp(cls, "BertTokenizerFast") != 0) {
		kg_error("%s: unsupported tokenizer_class '%s' (only "
		    "BertTokenizer)", path, cls);
		return -1;
	}
	if (!json_flag(c, "do_basic_tokenize", 1) ||
	    (ns != NULL && !json_is_null(ns) && !(json_is_array(ns) &&
	    json_array_size(ns) == 0))) {
		kg_error("%s: do_basic_tokenize false and never_split are not "
		    "supported", path);
		return -1;
	}
	t->clean_text = 1;
	t->chinese = json_flag(c, "tokenize_chinese_chars", 1);
	t->lowercase = json_flag(c, "do_lower_case", 1);
	t->strip_accents = json_is_boolean(sa) ? json_is_true(sa) :
	    t->lowercase;
	memcpy(t->prefix, "##", 3);
	t->prefix_len = 2;
	t->max_chars = 100;
	return 0;
}

/* The pieces of vocab.txt text[0..len), one a line, ID = line number
 * (a repeated piece keeps its last line, as load_vocab does). */
static int
read_vocab_lines(struct kg_bert_tok *t, const char *path, const char *text,
    size_t len)
{
	size_t n = 0, cap = 1024, i = 0;

	t->id = kg_xmallocarray(cap, sizeof(uint32_t));
	while (i < len) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t e = nl != NULL ? (size_t)(nl - text) : len, end = e;
		int added = 0;
		int64_t k;

		if (n >= (1u << 24)) {
			kg_error("%s: more than 2^24 pieces", path);
			return -1;
		}
		if (nl != NULL && end > i && text[end - 1] == '\r')
			end--;
		k = kg_dict_intern(&t->vocab, text + i, end - i, &added);
		if (k < 0)
			return -1;
		if ((size_t)k >= cap) {
			cap *= 2;
			t->id = kg_xreallocarray(t->id, cap, sizeof(uint32_t));
		}
		t->id[k] = (uint32_t)n++;
		i = e + 1;
	}
	t->n_vocab = (uint32_t)n;
	if (n == 0) {
		kg_error("%s: no pieces", path);
		return -1;
	}
	return 0;
}

int
kg_bert_tok_load_vocab(struct kg_bert_tok *t, const char *vocab,
    const char *config)
{
	json_error_t jerr;
	json_t *c = NULL;
	char *text = NULL;
	size_t len;
	int rc = -1;

	memset(t, 0, sizeof(*t));
	kg_dict_init(&t->vocab);
	if (config != NULL) {
		c = json_load_file(config, 0, &jerr);
		if (c == NULL) {
			kg_error("%s:%d: %s", config, jerr.line, jerr.text);
			goto out;
		}
	}
	if (read_tok_config(t, config != NULL ? config : vocab, c) < 0)
		goto out;
	text = kg_read_file(vocab, &len);
	if (text == NULL || read_vocab_lines(t, vocab, text, len) < 0 ||
	    special(t, vocab, "classifier", config_token(c, "cls_token",
	    "[CLS]"), &t->cls) < 0 ||
	    special(t, vocab, "separator", config_token(c, "sep_token",
	    "[SEP]"), &t->sep) < 0 ||
	    special(t, vocab, "unknown", config_token(c, "unk_token",
	    "[UNK]"), &t->unk) < 0)
		goto out;
	rc = 0;
out:
	free(text);
	if (c != NULL)
		json_decref(c);
	if (rc < 0)
		kg_bert_tok_release(t);
	return rc;
}

void
kg_bert_tok_release(struct kg_bert_tok *t)
{
	if (t == NULL)
		return;
	kg_dict_release(&t->vocab);
	free(t->id);
	memset(t, 0, sizeof(*t));
}

void
kg_bert_tok_scratch_release(struct kg_bert_tok_scratch *sc)
{
	free(sc->cp);
	free(sc->key);
	free(sc->at);
	memset(sc, 0, sizeof(*sc));
}

/* ---- Character classes (as the tokenizers library defines them). ---- */

/* Rust's char::is_whitespace: Unicode's White_Space property. */
static int
is_space(uint32_t c)
{
	return (c >= 0x9 && c <= 0xd) || c == 0x20 || c == 0x85 ||
	    c == 0xa0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200a) ||
	    c == 0x2028 || c == 0x2029 || c == 0x202f || c == 0x205f ||
	    c == 0x3000;
}

static int
is_other(uint32_t c)
{
	if (c == '\t' || c == '\n' || c == '\r')
		return 0;
	switch (utf8proc_category((utf8proc_int32_t)c)) {
	case UTF8PROC_CATEGORY_CN:
	case UTF8PROC_CATEGORY_CC:
	case UTF8PROC_CATEGORY_CF:
	case UTF8PROC_CATEGORY_CS:
	case UTF8PROC_CATEGORY_CO:
		return 1;
	default:
		return 0;
	}
}

static int
is_cjk(uint32_t c)
{
	return (c >= 0x4e00 && c <= 0x9fff) || (c >= 0x3400 && c <= 0x4dbf) ||
	    (c >= 0x20000 && c <= 0x2a6df) || (c >= 0x2a700 && c <= 0x2b73f) ||
	    (c >= 0x2b740 && c <= 0x2b81f) || (c >= 0x2b920 && c <= 0x2ceaf) ||
	    (c >= 0xf900 && c <= 0xfaff) || (c >= 0x2f800 && c <= 0x2fa1f);
}

static int
is_punct(uint32_t c)
{
	if (c < 0x80)
		return (c >= 33 && c <= 47) || (c >= 58 && c <= 64) ||
		    (c >= 91 && c <= 96) || (c >= 123 && c <= 126);
	switch (utf8proc_category((utf8proc_int32_t)c)) {
	case UTF8PROC_CATEGORY_PC:
	case UTF8PROC_CATEGORY_PD:
	case UTF8PROC_CATEGORY_PS:
	case UTF8PROC_CATEGORY_PE:
	case UTF8PROC_CATEGORY_PI:
	case UTF8PROC_CATEGORY_PF:
	case UTF8PROC_CATEGORY_PO:
		return 1;
	default:
		return 0;
	}
}

/* ---- Normalisation. ---- */

static void
grow(void **p, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return;
	*cap = need + need / 2 + 64;
	*p = kg_xreallocarray(*p, *cap, size);
}

/* NFD's canonical order: a stable sort of each run of combining marks by
 * combining class (utf8proc's own loop). */
static void
canonical_order(uint32_t *s, size_t n)
{
	size_t i = 0;

	while (i + 1 < n) {
		int a = utf8proc_get_property((utf8proc_int32_t)s[i])->
		    combining_class;
		int b = utf8proc_get_property((utf8proc_int32_t)s[i + 1])->
		    combining_class;

		if (a > b && b > 0) {
			uint32_t x = s[i];

			s[i] = s[i + 1];
			s[i + 1] = x;
			if (i > 0) {
				i--;
				continue;
			}
		}
		i++;
	}
}

/* One character of the cleaned text into sc->cp[*n...], decomposed and
 * without its nonspacing marks when accents are stripped. */
static void
push_char(const struct kg_bert_tok *t, struct kg_bert_tok_scratch *sc,
    size_t *n, uint32_t c)
{
	utf8proc_int32_t d[32];
	utf8proc_ssize_t k = 1, i;
	int last = 0;

	d[0] = (utf8proc_int32_t)c;
	if (t->strip_accents && c >= 0x80) {
		k = utf8proc_decompose_char((utf8proc_int32_t)c, d, 32,
		    UTF8PROC_DECOMPOSE, &last);
		if (k < 1 || k > 32) {
			d[0] = (utf8proc_int32_t)c;
			k = 1;
		}
	}
	for (i = 0; i < k; i++)
		sc->cp[(*n)++] = (uint32_t)d[i];
}

/* Strip the nonspacing marks of the decomposed cp[0..n) and lowercase;
 * returns the new length. */
static size_t
finish(const struct kg_bert_tok *t, struct kg_bert_tok_scratch *sc, size_t n)
{
	size_t i, k = 0, extra = 0, total;

	if (t->strip_accents) {
		canonical_order(sc->cp, n);
		for (i = 0; i < n; i++)
			if (sc->cp[i] < 0x80 || utf8proc_category(
			    (utf8proc_int32_t)sc->cp[i]) !=
			    UTF8PROC_CATEGORY_MN)
				sc->cp[k++] = sc->cp[i];
		n = k;
	}
	if (!t->lowercase)
		return n;
	for (i = 0; i < n; i++)
		extra += sc->cp[i] == 0x130;
	total = n + extra;
	grow((void **)&sc->cp, &sc->cp_cap, total + 1, sizeof(uint32_t));
	for (i = n; i-- > 0;) {
		uint32_t c = sc->cp[i];

		if (c == 0x130) {
			sc->cp[i + extra] = 0x307;
			sc->cp[i + extra - 1] = 'i';
			extra--;
			continue;
		}
		sc->cp[i + extra] = c < 0x80 ? (c >= 'A' && c <= 'Z' ?
		    c + 32 : c) : (uint32_t)utf8proc_tolower(
		    (utf8proc_int32_t)c);
	}
	return total;
}

/* text[0..len) cleaned, CJK spaced, decomposed, stripped and lowercased
 * into sc->cp; returns the number of code points. */
static size_t
normalize(const struct kg_bert_tok *t, const char *text, size_t len,
    struct kg_bert_tok_scratch *sc)
{
	const utf8proc_uint8_t *p = (const utf8proc_uint8_t *)text;
	size_t n = 0, i = 0;

	grow((void **)&sc->cp, &sc->cp_cap, 2 * len + 40, sizeof(uint32_t));
	while (i < len) {
		utf8proc_int32_t c;
		utf8proc_ssize_t k = utf8proc_iterate(p + i,
		    (utf8proc_ssize_t)(len - i), &c);
		uint32_t u;

		/* Room for a decomposition (32 at most) and two spaces. */
		grow((void **)&sc->cp, &sc->cp_cap, n + 40, sizeof(uint32_t));

		if (k < 1) {
			c = 0xfffd;
			k = 1;
		}
		i += (size_t)k;
		u = (uint32_t)c;
		if (t->clean_text) {
			if (u == 0 || u == 0xfffd || is_other(u))
				continue;
			if (is_space(u))
				u = ' ';
		}
		if (t->chinese && is_cjk(u)) {
			sc->cp[n++] = ' ';
			push_char(t, sc, &n, u);
			sc->cp[n++] = ' ';
		} else
			push_char(t, sc, &n, u);
	}
	return finish(t, sc, n);
}

/* ---- WordPiece. ---- */

/* The ID of the piece key[0..len), or -1. */
static int64_t
lookup(const struct kg_bert_tok *t, const char *key, size_t len)
{
	int64_t k = kg_dict_find(&t->vocab, key, len);

	return k < 0 ? -1 : (int64_t)t->id[k];
}

/*
 * The pieces of the word w[0..n) appended to ids[*k..cap) (*k < cap on
 * entry); pieces past cap are dropped, as truncation drops them.
 */
static void
wordpiece(const struct kg_bert_tok *t, struct kg_bert_tok_scratch *sc,
    const uint32_t *w, size_t n, uint32_t *ids, size_t *k, size_t cap)
{
	size_t i, bytes = 0, start = 0, k0 = *k, half;
	char *u, *cand;

	if (n > t->max_chars) {
		ids[(*k)++] = t->unk;
		return;
	}
	half = t->prefix_len + 4 * n + 1;
	grow((void **)&sc->at, &sc->at_cap, n + 1, sizeof(size_t));
	grow((void **)&sc->key, &sc->key_cap, 2 * half, 1);
	/* The word's UTF-8 in u, a candidate piece (prefixed) in cand. */
	u = sc->key;
	cand = sc->key + half;
	for (i = 0; i < n; i++) {
		sc->at[i] = bytes;
		bytes += (size_t)utf8proc_encode_char((utf8proc_int32_t)w[i],
		    (utf8proc_uint8_t *)u + bytes);
	}
	sc->at[n] = bytes;
	memcpy(cand, t->prefix, t->prefix_len);
	while (start < n) {
		size_t end = n;
		int64_t id = -1;

		for (; end > start; end--) {
			size_t pl = sc->at[end] - sc->at[start];

			if (start == 0)
				id = lookup(t, u, pl);
			else {
				memcpy(cand + t->prefix_len, u + sc->at[start],
				    pl);
				id = lookup(t, cand, t->prefix_len + pl);
			}
			if (id >= 0)
				break;
		}
		if (id < 0) {
			*k = k0;
			ids[(*k)++] = t->unk;
			return;
		}
		if (*k < cap)
			ids[(*k)++] = (uint32_t)id;
		start = end;
	}
}

size_t
kg_bert_tok_encode(const struct kg_bert_tok *t, const char *text, size_t len,
    struct kg_bert_tok_scratch *sc, uint32_t *ids, size_t max_len)
{
	size_t n = normalize(t, text, len, sc), i = 0, k = 0, cap = max_len - 1;

	ids[k++] = t->cls;
	while (i < n && k < cap) {
		size_t j;

		if (is_space(sc->cp[i])) {
			i++;
			continue;
		}
		if (is_punct(sc->cp[i])) {
			wordpiece(t, sc, sc->cp + i, 1, ids, &k, cap);
			i++;
			continue;
		}
		for (j = i; j < n && !is_space(sc->cp[j]) &&
		    !is_punct(sc->cp[j]); j++)
			;
		wordpiece(t, sc, sc->cp + i, j - i, ids, &k, cap);
		i = j;
	}
	ids[k++] = t->sep;
	return k;
}
