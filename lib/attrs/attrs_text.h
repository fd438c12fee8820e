/*
 * attrs_text: the text encoder of kg-encode-attrs, and the pipe to an
 * external one.
 *
 * Built-in encoder (latent semantic analysis, no downloads):
 *   tokens  maximal runs of ASCII letters and digits (lowercased) and bytes
 *           >= 0x80 (UTF-8 kept as is), at least 2 bytes long;
 *   vocab   tokens in at least min_df documents; the max_features most
 *           frequent (by document frequency, ties by token), in byte order;
 *   tf-idf  raw counts (or 1 + ln count with sublinear_tf) times
 *           idf = ln((1 + n_docs) / (1 + df)) + 1 (scikit-learn's smooth
 *           idf), each document L2-normalised;
 *   project the top-dim right singular vectors of the n_docs x V tf-idf
 *           matrix X, from the eigenvectors of the V x V Gram matrix X'X
 *           (accumulated in double): all of them with LAPACK dsyevd_ for
 *           V <= exact_max (default 512), else a randomized range finder
 *           (fixed seed, 16 extra columns, 6 power iterations with
 *           cblas_dsymm) and dsyevd_ of the small projected matrix.  A
 *           document's
 *           vector is x P (as scikit-learn's TruncatedSVD.transform),
 *           L2-normalised when "normalize" is set.  Each component's sign
 *           is fixed so that its largest-magnitude entry is positive.
 *           When V < dim the remaining components are zero.
 *
 * External encoder (attrs_textcmd.c): the texts, one per line (line ends
 * and NULs inside a text become spaces), go to "sh -c CMD" on its standard
 * input; its standard output must be exactly n * dim little-endian float32
 * values.
 */
#ifndef KG_ATTRS_TEXT_H
#define KG_ATTRS_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "io/dict.h"

struct kg_text_model {
	uint32_t dim;		/* output dimension */
	uint32_t n_vocab;
	struct kg_dict vocab;	/* token -> column, IDs in byte order */
	double *idf;		/* [n_vocab] */
	float *proj;		/* [n_vocab, dim], row-major */
	int sublinear_tf;
	int normalize;
	double energy;		/* fit only: share of the Gram trace kept */
};

#define KG_TEXT_MODEL_INIT { .vocab = KG_DICT_INIT }

/* Options of the fit (from the schema). */
struct kg_text_fit_opts {
	uint32_t dim, max_features, min_df;
	int sublinear_tf, normalize;
	uint32_t exact_max;	/* larger vocabularies: randomized; 0: 512 */
};

/*
 * Fit on n documents docs[i][0..lens[i]).  Returns 0, or -1 after
 * kg_error() (LAPACK failure) with nothing to release.  A corpus without
 * a single token gives an empty vocabulary (every vector zero).
 */
int kg_text_fit(struct kg_text_model *m, const struct kg_text_fit_opts *o,
    size_t n, const char *const *docs, const size_t *lens);

/*
 * Rebuild a model from its parts (as stored by kg-encode-attrs fit):
 * vocab[0..n_vocab) in byte order, idf and proj are copied.  0 or -1.
 */
int kg_text_model_set(struct kg_text_model *m, uint32_t dim, uint32_t n_vocab,
    const char *const *vocab, const double *idf, const float *proj,
    int sublinear_tf, int normalize);

void kg_text_model_release(struct kg_text_model *m);

/* Scratch space for kg_text_encode, one per thread. */
struct kg_text_scratch {
	uint32_t *ids;
	size_t cap;
	char *tok;
	size_t tok_cap;
	double *w;	/* tf-idf weights, cap entries */
	double *y;	/* the output in double, dim entries */
	size_t y_cap;
};

#define KG_TEXT_SCRATCH_INIT { 0 }

void kg_text_scratch_release(struct kg_text_scratch *sc);

/* Encode one text into out[0..dim). */
void kg_text_encode(const struct kg_text_model *m, const char *doc, size_t len,
    struct kg_text_scratch *sc, float *out);

/*
 * Run the external encoder on n texts; out gets n * dim floats.  The
 * command runs as "sh -c cmd" in a process group of its own that is
 * stopped (SIGTERM, then SIGKILL after about two seconds) when the tool
 * gets a fatal signal (lib/io/fatal.h) or the command writes more than
 * expected.  0, or -1 after kg_error() (exit status, short or long
 * output, non-finite value).
 */
int kg_text_command(const char *cmd, uint32_t dim, size_t n,
    const char *const *docs, const size_t *lens, float *out);

/*
 * Call fn(arg, token, len) for each token of doc; used by the encoder and
 * exposed for tests.  Returns the number of tokens.
 */
size_t kg_text_tokenize(const char *doc, size_t len, struct kg_text_scratch *sc,
    void (*fn)(void *arg, const char *tok, size_t len), void *arg);

#endif
