/*
 * bert: a BERT sentence encoder read from a sentence-transformers model
 * directory, run in batches: on the OpenMP threads (the host path), or on
 * one compute backend with the weights and activations resident there
 * (the device path, bert_device.c: --device cuda).
 *
 * The directory: modules.json lists a Transformer (its folder holds
 * config.json, model.safetensors, tokenizer.json (or, without it,
 * BertTokenizer's vocab.txt and optionally tokenizer_config.json) and
 * optionally sentence_bert_config.json with max_seq_length), a Pooling (its
 * config.json picks exactly one of pooling_mode_mean_tokens, _cls_token
 * and _max_tokens) and optionally a Normalize module; any other module,
 * a config whose model_type is not "bert", hidden_act not "gelu" or
 * position_embedding_type not "absolute", and weights other than F32 are
 * refused with one message naming what is unsupported.
 *
 * The forward pass (Hugging Face's BertModel in inference): embeddings
 * word + position + token type 0, LayerNorm; per layer the fused Q, K, V
 * projection, per head softmax(Q K' / sqrt(d_head)) V over the text's own
 * tokens (the tokens of a batch are packed one text after another, so the
 * padding mask of a padded batch is not needed), the output projection
 * plus residual and LayerNorm, then GELU (erf) feed-forward plus residual
 * and LayerNorm; then the pooling over the text's tokens ([CLS] and [SEP]
 * included, as sentence-transformers pools) and, with Normalize, division
 * by max(|v|, 1e-12).  Products go through the compute backend's GEMM
 * (lib/compute/backend.h); the host path runs the rest with
 * lib/compute/devops_text.h's row functions, the device path through the
 * backend's kg_be_text_* operations, which run the same ones, so the two
 * differ only in attention's sums (host: GEMMs; device: a dot product a
 * key), within rounding.
 */
#ifndef KG_BERT_H
#define KG_BERT_H

#include <stddef.h>
#include <stdint.h>

#include "attrs/bert_tok.h"
#include "attrs/safetensors.h"
#include "compute/backend.h"

enum kg_bert_pool { KG_BERT_POOL_MEAN, KG_BERT_POOL_CLS, KG_BERT_POOL_MAX };

struct kg_bert_layer {
	float *wqkv, *bqkv;	/* owned: [3H, H] and [3H], Q K V stacked */
	const float *wo, *bo, *ln1_w, *ln1_b;
	const float *wi, *bi, *wf, *bf, *ln2_w, *ln2_b;
};

struct kg_bert {
	struct kg_bert_tok tok;
	struct kg_safetensors st;
	uint32_t hidden, n_layers, n_heads, inter, max_pos, n_types, n_vocab;
	float eps;
	uint32_t max_len;	/* sentence_bert_config's, else max_pos */
	enum kg_bert_pool pool;
	int normalize;
	const float *word, *pos, *type, *eln_w, *eln_b;
	struct kg_bert_layer *layer;
	char weights_sha256[65], tokenizer_sha256[65];
	char *weights_path, *tokenizer_path;
};

#define KG_BERT_INIT { .tok = KG_BERT_TOK_INIT }

/*
 * Load the model directory dir (weights mapped, checked against the
 * config; the SHA-256 of model.safetensors and of tokenizer.json, or of
 * vocab.txt's bytes followed by tokenizer_config.json's, computed;
 * tokenizer_path names tokenizer.json or vocab.txt).
 * 0, or -1 after kg_error() with nothing to release.
 */
int kg_bert_load(struct kg_bert *m, const char *dir);
void kg_bert_release(struct kg_bert *m);

/* Floating-point operations of the forward pass over a text of n tokens
 * (multiply-adds counted as two). */
double kg_bert_flops(const struct kg_bert *m, size_t n);

/* Options of kg_bert_encode. */
struct kg_bert_opts {
	uint32_t max_len;	/* tokens a text keeps; 0: the model's */
	uint32_t batch;		/* texts a forward pass; 0: 32 */
	/* 0: the host path; 1: the device path on a backend opened on
	 * device (on the CPU backend for KG_DEVICE_CPU) */
	int on_device;
	struct kg_device device;
};

/* What kg_bert_encode did. */
struct kg_bert_stats {
	uint64_t tokens;	/* [CLS] and [SEP] included */
	double flops;
	double seconds;
	/* the device path: its forward passes, its host-device copies
	 * after the weights' upload (one up and one down a batch), and
	 * kg_backend_name of its backend; 0 and "" on the host path */
	uint64_t batches, copies;
	char backend[160];
	/* the host path: the threads' seconds in the forward passes'
	 * projection and FFN GEMMs (bias adds included), in attention
	 * (Q K', softmax, S V) and in the rest (embeddings, LayerNorm,
	 * GELU, pooling), summed over threads; 0 on the device path */
	double gemm_seconds, attention_seconds, other_seconds;
};

/*
 * Encode texts[i][0..lens[i]) for i < n into out[i * hidden ..) in
 * batches of texts of similar length (longest first): on the host path a
 * batch a thread at a time on the OpenMP threads, on the device path one
 * batch after another on the backend (the token IDs up and the pooled
 * vectors down, each one copy a batch); results do not depend on the
 * thread count.  stats may be NULL.  0, or -1 after kg_error() (on the
 * device path also when the device cannot be opened or lacks memory).
 */
int kg_bert_encode(const struct kg_bert *m, const struct kg_bert_opts *o,
    size_t n, const char *const *texts, const size_t *lens, float *out,
    struct kg_bert_stats *stats);

#endif
