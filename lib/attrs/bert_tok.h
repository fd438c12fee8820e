/*
 * bert_tok: the tokenizer of a BERT model, read from the "tokenizer.json"
 * of Hugging Face's tokenizers library (or from BertTokenizer's vocab.txt
 * and tokenizer_config.json), as that library runs it:
 *
 *   BertNormalizer  clean_text drops NUL, U+FFFD and the characters of
 *                   Unicode's "other" categories (Cc, Cf, Cs, Co, Cn) but
 *                   tab and line ends, and turns white space into ' ';
 *                   handle_chinese_chars puts spaces around each CJK
 *                   ideograph; strip_accents (default: as lowercase)
 *                   decomposes to NFD and drops nonspacing marks (Mn);
 *                   lowercase maps each character to its lower case
 *                   (utf8proc's simple mapping, and U+0130 to "i" U+0307
 *                   as Unicode's full mapping does);
 *   BertPreTokenizer words are the runs between white space, and each
 *                   punctuation character (ASCII punctuation or Unicode
 *                   category P*) is a word of its own;
 *   WordPiece       greedy longest match from the start of the word, the
 *                   pieces after the first looked up with the
 *                   continuing-subword prefix ("##"); a word longer than
 *                   max_input_chars_per_word characters, or one that
 *                   cannot be covered, is the unknown token;
 *   post-processing [CLS] pieces [SEP], the pieces cut so that the whole
 *                   is at most max_len tokens.
 * Bytes that are not UTF-8 count as U+FFFD.  Special tokens written in the
 * text ("[SEP]") are ordinary text here.  Unicode data: utf8proc.
 */
#ifndef KG_BERT_TOK_H
#define KG_BERT_TOK_H

#include <stddef.h>
#include <stdint.h>

#include "io/dict.h"

struct kg_bert_tok {
	struct kg_dict vocab;	/* piece -> dictionary index */
	uint32_t *id;		/* dictionary index -> token ID */
	uint32_t n_vocab;	/* token IDs are < n_vocab */
	int clean_text, chinese, strip_accents, lowercase;
	uint32_t cls, sep, unk, pad;
	uint32_t max_chars;	/* max_input_chars_per_word */
	char prefix[16];	/* continuing_subword_prefix */
	size_t prefix_len;
};

#define KG_BERT_TOK_INIT { .vocab = KG_DICT_INIT }

/*
 * Read path (a tokenizer.json).  Anything but a BertNormalizer (or none),
 * a BertPreTokenizer and a WordPiece model, or a vocabulary without the
 * [CLS], [SEP] or unknown token, is refused.  0, or -1 after kg_error()
 * naming the file, with nothing to release.
 */
int kg_bert_tok_load(struct kg_bert_tok *t, const char *path);

/*
 * The same tokenizer from the files of Hugging Face's BertTokenizer: a
 * vocab.txt (one piece a line, its ID the line number) and, when config
 * is not NULL, a tokenizer_config.json: do_lower_case (default true),
 * strip_accents (default: as do_lower_case), tokenize_chinese_chars
 * (default true) and the cls_token, sep_token and unk_token names
 * (default [CLS], [SEP], [UNK]); text always cleaned, "##" the
 * continuing prefix, 100 the longest word.  A tokenizer_class other than
 * BertTokenizer(Fast), do_basic_tokenize false or a never_split list is
 * refused.  0, or -1 after kg_error() naming the file, with nothing to
 * release.
 */
int kg_bert_tok_load_vocab(struct kg_bert_tok *t, const char *vocab,
    const char *config);
void kg_bert_tok_release(struct kg_bert_tok *t);

/* Per-thread buffers, grown to the longest text seen. */
struct kg_bert_tok_scratch {
	uint32_t *cp;		/* normalised code points */
	size_t cp_cap;
	char *key;		/* UTF-8 of a candidate piece */
	size_t key_cap;
	size_t *at;		/* byte offset of each character of a word */
	size_t at_cap;
};

#define KG_BERT_TOK_SCRATCH_INIT { 0 }

void kg_bert_tok_scratch_release(struct kg_bert_tok_scratch *sc);

/*
 * The token IDs of text[0..len) into ids[0..max_len) ([CLS] first, [SEP]
 * last); max_len >= 2.  Returns how many.
 */
size_t kg_bert_tok_encode(const struct kg_bert_tok *t, const char *text,
    size_t len, struct kg_bert_tok_scratch *sc, uint32_t *ids,
    size_t max_len);

#endif
