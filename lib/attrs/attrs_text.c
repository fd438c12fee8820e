#include "attrs/attrs_text.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compute/compute.h"
#include "core/util.h"

/* Vocabularies up to this size get an exact eigen-decomposition. */
#define EXACT_MAX_DEFAULT 512
/* Randomized range finder: oversampling and power iterations. */
#define OVERSAMPLE 16
#define POWER_ITERS 6

/* LAPACK (Fortran calling convention; the trailing lengths are the hidden
 * character-argument lengths gfortran passes). */
extern void dsyevd_(const char *jobz, const char *uplo, const int *n,
    double *a, const int *lda, double *w, double *work, const int *lwork,
    int *iwork, const int *liwork, int *info, size_t jobz_len,
    size_t uplo_len);

static inline int
is_word_byte(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c >= 0x80;
}

size_t
kg_text_tokenize(const char *doc, size_t len, struct kg_text_scratch *sc,
    void (*fn)(void *arg, const char *tok, size_t len), void *arg)
{
	size_t i = 0, j, k, n = 0;

	while (i < len) {
		while (i < len && !is_word_byte((unsigned char)doc[i]))
			i++;
		j = i;
		while (j < len && is_word_byte((unsigned char)doc[j]))
			j++;
		if (j - i >= 2) {
			if (j - i > sc->tok_cap) {
				sc->tok_cap = 2 * (j - i);
				sc->tok = kg_xrealloc(sc->tok, sc->tok_cap);
			}
			for (k = i; k < j; k++) {
				unsigned char c = (unsigned char)doc[k];

				sc->tok[k - i] = (char)(c >= 'A' && c <= 'Z' ?
				    c + ('a' - 'A') : c);
			}
			fn(arg, sc->tok, j - i);
			n++;
		}
		i = j;
	}
	return n;
}

static void
push_id(struct kg_text_scratch *sc, size_t *n, uint32_t id)
{
	if (*n == sc->cap) {
		sc->cap = sc->cap ? 2 * sc->cap : 256;
		sc->ids = kg_xreallocarray(sc->ids, sc->cap, sizeof(uint32_t));
		sc->w = kg_xreallocarray(sc->w, sc->cap, sizeof(double));
	}
	sc->ids[(*n)++] = id;
}

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* Pass 1 state: intern every token, collect the document's IDs. */
struct intern_ctx {
	struct kg_dict *all;
	struct kg_text_scratch *sc;
	size_t n;
};

static void
intern_tok(void *arg, const char *tok, size_t len)
{
	struct intern_ctx *c = arg;
	int64_t id = kg_dict_intern(c->all, tok, len, NULL);

	if (id >= 0)
		push_id(c->sc, &c->n, (uint32_t)id);
}

/* Lookup state: map tokens to vocabulary columns, dropping the others. */
struct lookup_ctx {
	const struct kg_dict *dict;
	const int32_t *col_of;	/* dict ID -> column, or NULL (identity) */
	struct kg_text_scratch *sc;
	size_t n;
};

static void
lookup_tok(void *arg, const char *tok, size_t len)
{
	struct lookup_ctx *c = arg;
	int64_t id = kg_dict_find(c->dict, tok, len);

	if (id < 0)
		return;
	if (c->col_of != NULL) {
		id = c->col_of[id];
		if (id < 0)
			return;
	}
	push_id(c->sc, &c->n, (uint32_t)id);
}

/* Sort the column IDs of a document and turn them into normalised tf-idf
 * weights: cols[0..k) and w[0..k); returns k. */
static size_t
tfidf(uint32_t *ids, size_t n, const double *idf, int sublinear,
    double *w)
{
	size_t i, k = 0;
	double norm = 0;

	qsort(ids, n, sizeof(uint32_t), cmp_u32);
	for (i = 0; i < n;) {
		size_t j = i;
		double tf;

		while (j < n && ids[j] == ids[i])
			j++;
		tf = (double)(j - i);
		if (sublinear)
			tf = 1.0 + log(tf);
		ids[k] = ids[i];
		w[k] = tf * idf[ids[i]];
		norm += w[k] * w[k];
		k++;
		i = j;
	}
	if (norm > 0) {
		norm = 1.0 / sqrt(norm);
		for (i = 0; i < k; i++)
			w[i] *= norm;
	}
	return k;
}

struct df_entry {
	uint32_t id;
	uint64_t df;
	const char *tok;
};

static int
cmp_df(const void *a, const void *b)
{
	const struct df_entry *x = a, *y = b;

	if (x->df != y->df)
		return x->df > y->df ? -1 : 1;
	return strcmp(x->tok, y->tok);
}

static int
cmp_tok(const void *a, const void *b)
{
	const struct df_entry *x = a, *y = b;

	return strcmp(x->tok, y->tok);
}

/* All eigenpairs of the symmetric n x n column-major matrix a: on return
 * a holds the eigenvectors (columns) and w the ascending eigenvalues. */
static int
eig_sym(double *a, int n, double *w)
{
	int lwork = -1, liwork = -1, info = 0, iw;
	double *work, wq;
	int *iwork;

	dsyevd_("V", "U", &n, a, &n, w, &wq, &lwork, &iw, &liwork, &info,
	    1, 1);
	if (info != 0) {
		kg_error("text encoder: dsyevd workspace query failed (info "
		    "%d)", info);
		return -1;
	}
	lwork = (int)wq + 1;
	liwork = iw;
	work = kg_xmallocarray((size_t)lwork, sizeof(double));
	iwork = kg_xmallocarray((size_t)liwork, sizeof(int));
	dsyevd_("V", "U", &n, a, &n, w, work, &lwork, iwork, &liwork, &info,
	    1, 1);
	free(work);
	free(iwork);
	if (info != 0) {
		kg_error("text encoder: dsyevd failed (info %d)", info);
		return -1;
	}
	return 0;
}

/* Store component c (vec[0..v)) with its sign fixed. */
static void
set_component(struct kg_text_model *m, uint32_t c, const double *vec,
    uint32_t v)
{
	double big = 0, sign = 1;
	uint32_t j;

	for (j = 0; j < v; j++)
		if (fabs(vec[j]) > big) {
			big = fabs(vec[j]);
			sign = vec[j] < 0 ? -1 : 1;
		}
	for (j = 0; j < v; j++)
		m->proj[(size_t)j * m->dim + c] = (float)(sign * vec[j]);
}

static double
gram_trace(const double *g, uint32_t v)
{
	double t = 0;
	uint32_t j;

	for (j = 0; j < v; j++)
		t += g[(size_t)j * v + j];
	return t;
}

/* The top components from the full eigen-decomposition of g. */
static int
project_exact(struct kg_text_model *m, double *g, uint32_t v)
{
	double *w = kg_xmallocarray(v, sizeof(double)), trace, kept = 0;
	uint32_t c, k = v < m->dim ? v : m->dim;

	trace = gram_trace(g, v);
	if (eig_sym(g, (int)v, w) < 0) {
		free(w);
		return -1;
	}
	/* Eigenvalues ascend; eigenvector i is column i. */
	for (c = 0; c < k; c++) {
		kept += w[v - 1 - c] > 0 ? w[v - 1 - c] : 0;
		set_component(m, c, g + (size_t)(v - 1 - c) * v, v);
	}
	m->energy = trace > 0 ? kept / trace : 0;
	free(w);
	return 0;
}

/* Orthonormalise the l columns of the v x l column-major y (modified
 * Gram-Schmidt, twice for stability); dependent columns become zero. */
static void
orthonormalise(double *y, uint32_t v, uint32_t l)
{
	uint32_t a, b, pass;
	size_t j;

	for (pass = 0; pass < 2; pass++)
		for (a = 0; a < l; a++) {
			double *ya = y + (size_t)a * v, norm = 0;

			for (b = 0; b < a; b++) {
				const double *yb = y + (size_t)b * v;
				double dot = 0;

				for (j = 0; j < v; j++)
					dot += ya[j] * yb[j];
				for (j = 0; j < v; j++)
					ya[j] -= dot * yb[j];
			}
			for (j = 0; j < v; j++)
				norm += ya[j] * ya[j];
			norm = sqrt(norm);
			for (j = 0; j < v; j++)
				ya[j] = norm > 1e-12 ? ya[j] / norm : 0;
		}
}

/*
 * The top components by a randomized range finder (Halko, Martinsson and
 * Tropp): Y = orth(G^q G Omega) with a fixed-seed Gaussian Omega, then the
 * small eigenproblem of Y' G Y.  Cost O(v^2 l) instead of O(v^3).
 */
static int
project_randomized(struct kg_text_model *m, const double *g, uint32_t v)
{
	uint32_t k = v < m->dim ? v : m->dim, l = k + OVERSAMPLE, c, it;
	double *y, *z, *b, *w, *vec, trace = gram_trace(g, v), kept = 0;
	struct kg_rng rng;
	size_t i;

	if (l > v)
		l = v;
	y = kg_xmallocarray((size_t)v * l, sizeof(double));
	z = kg_xmallocarray((size_t)v * l, sizeof(double));
	b = kg_xmallocarray((size_t)l * l, sizeof(double));
	w = kg_xmallocarray(l, sizeof(double));
	vec = kg_xmallocarray(v, sizeof(double));
	kg_rng_stream(&rng, 0x7e47, KG_STREAM_TEXT_SVD, 0, 0, 0, 0);
	for (i = 0; i < (size_t)v * l; i++)
		z[i] = kg_rng_normal(&rng);
	kg_dsymm_lu(v, l, 1.0, g, v, z, v, 0.0, y, v);
	orthonormalise(y, v, l);
	for (it = 0; it < POWER_ITERS; it++) {
		kg_dsymm_lu(v, l, 1.0, g, v, y, v, 0.0, z, v);
		memcpy(y, z, (size_t)v * l * sizeof(double));
		orthonormalise(y, v, l);
	}
	/* B = Y' G Y */
	kg_dsymm_lu(v, l, 1.0, g, v, y, v, 0.0, z, v);
	kg_dgemm_cm(KG_TRANS, KG_NO_TRANS, l, l, v, 1.0, y, v, z, v, 0.0, b, l);
	if (eig_sym(b, (int)l, w) < 0)
		goto fail;
	for (c = 0; c < k; c++) {
		/* vec = Y u, u the eigenvector of the c-th largest value */
		kg_dgemv_cm(KG_NO_TRANS, v, l, 1.0, y, v,
		    b + (size_t)(l - 1 - c) * l, 0.0, vec);
		kept += w[l - 1 - c] > 0 ? w[l - 1 - c] : 0;
		set_component(m, c, vec, v);
	}
	m->energy = trace > 0 ? kept / trace : 0;
	free(y);
	free(z);
	free(b);
	free(w);
	free(vec);
	return 0;
fail:
	free(y);
	free(z);
	free(b);
	free(w);
	free(vec);
	return -1;
}

/* Pass 1: intern every token of the corpus into "all" and count the
 * documents holding each; returns df[kg_dict_size(all)] (NULL when there
 * is no token). */
static uint64_t *
count_df(struct kg_dict *all, struct kg_text_scratch *sc, size_t n,
    const char *const *docs, const size_t *lens)
{
	struct intern_ctx ic;
	uint64_t *df = NULL;
	size_t df_cap = 0, i, j;

	ic.all = all;
	ic.sc = sc;
	for (i = 0; i < n; i++) {
		ic.n = 0;
		kg_text_tokenize(docs[i], lens[i], sc, intern_tok, &ic);
		if (kg_dict_size(all) > df_cap) {
			size_t old = df_cap;

			df_cap = 2 * kg_dict_size(all) + 1024;
			df = kg_xreallocarray(df, df_cap, sizeof(uint64_t));
			memset(df + old, 0, (df_cap - old) * sizeof(uint64_t));
		}
		qsort(sc->ids, ic.n, sizeof(uint32_t), cmp_u32);
		for (j = 0; j < ic.n; j++)
			if (j == 0 || sc->ids[j] != sc->ids[j - 1])
				df[sc->ids[j]]++;
	}
	return df;
}

/*
 * The vocabulary: tokens in at least min_df of the n documents, the
 * max_features most frequent, in byte order.  Fills m's vocabulary and
 * idf and allocates its projection; returns the column of each token of
 * "all" (-1 when left out).
 */
static int32_t *
choose_vocab(struct kg_text_model *m, const struct kg_text_fit_opts *o,
    const struct kg_dict *all, const uint64_t *df, size_t n)
{
	struct df_entry *cand;
	size_t i, nc = 0;
	int32_t *col_of;
	uint32_t v;

	cand = kg_xmallocarray(kg_dict_size(all) + 1, sizeof(*cand));
	for (i = 0; i < kg_dict_size(all); i++)
		if (df[i] >= o->min_df) {
			cand[nc].id = (uint32_t)i;
			cand[nc].df = df[i];
			cand[nc].tok = kg_dict_name(all, (uint32_t)i);
			nc++;
		}
	qsort(cand, nc, sizeof(*cand), cmp_df);
	if (nc > o->max_features)
		nc = o->max_features;
	qsort(cand, nc, sizeof(*cand), cmp_tok);
	v = (uint32_t)nc;
	m->n_vocab = v;
	col_of = kg_xmallocarray(kg_dict_size(all) + 1, sizeof(int32_t));
	for (i = 0; i < kg_dict_size(all); i++)
		col_of[i] = -1;
	m->idf = kg_xcalloc(v + 1, sizeof(double));
	m->proj = kg_xcalloc((size_t)v * m->dim + 1, sizeof(float));
	for (i = 0; i < nc; i++) {
		col_of[cand[i].id] = (int32_t)i;
		(void)kg_dict_intern(&m->vocab, cand[i].tok,
		    strlen(cand[i].tok), NULL);
		m->idf[i] = log((1.0 + (double)n) / (1.0 + (double)cand[i].df))
		    + 1.0;
	}
	free(cand);
	return col_of;
}

/* Pass 2: the Gram matrix X'X of the normalised tf-idf rows, upper
 * triangle in column-major order (g[b * v + a], a <= b). */
static double *
gram_matrix(const struct kg_text_model *m, const struct kg_dict *all,
    const int32_t *col_of, struct kg_text_scratch *sc, size_t n,
    const char *const *docs, const size_t *lens)
{
	uint32_t v = m->n_vocab;
	double *g = kg_xcalloc((size_t)v * v + 1, sizeof(double)), *w;
	struct lookup_ctx lc;
	size_t i, j, a, k;

	lc.dict = all;
	lc.col_of = col_of;
	lc.sc = sc;
	for (i = 0; i < n && v > 0; i++) {
		lc.n = 0;
		kg_text_tokenize(docs[i], lens[i], sc, lookup_tok, &lc);
		k = tfidf(sc->ids, lc.n, m->idf, m->sublinear_tf, sc->w);
		w = sc->w;
		for (a = 0; a < k; a++) {
			double wa = w[a];

			for (j = a; j < k; j++)
				g[(size_t)sc->ids[j] * v + sc->ids[a]] +=
				    wa * w[j];
		}
	}
	return g;
}

int
kg_text_fit(struct kg_text_model *m, const struct kg_text_fit_opts *o,
    size_t n, const char *const *docs, const size_t *lens)
{
	struct kg_text_scratch sc = KG_TEXT_SCRATCH_INIT;
	struct kg_dict all = KG_DICT_INIT;
	uint64_t *df;
	int32_t *col_of;
	double *g;
	uint32_t v;
	int rc;

	memset(m, 0, sizeof(*m));
	kg_dict_init(&m->vocab);
	m->dim = o->dim;
	m->sublinear_tf = o->sublinear_tf;
	m->normalize = o->normalize;
	df = count_df(&all, &sc, n, docs, lens);
	col_of = choose_vocab(m, o, &all, df, n);
	free(df);
	g = gram_matrix(m, &all, col_of, &sc, n, docs, lens);
	free(col_of);
	kg_dict_release(&all);
	kg_text_scratch_release(&sc);
	v = m->n_vocab;
	if (v == 0)
		rc = 0;
	else if (v <= (o->exact_max ? o->exact_max : EXACT_MAX_DEFAULT))
		rc = project_exact(m, g, v);
	else
		rc = project_randomized(m, g, v);
	free(g);
	if (rc < 0)
		kg_text_model_release(m);
	return rc;
}

int
kg_text_model_set(struct kg_text_model *m, uint32_t dim, uint32_t n_vocab,
    const char *const *vocab, const double *idf, const float *proj,
    int sublinear_tf, int normalize)
{
	uint32_t i;

	memset(m, 0, sizeof(*m));
	kg_dict_init(&m->vocab);
	m->dim = dim;
	m->n_vocab = n_vocab;
	m->sublinear_tf = sublinear_tf;
	m->normalize = normalize;
	for (i = 0; i < n_vocab; i++) {
		int added = 0;

		if (kg_dict_intern(&m->vocab, vocab[i], strlen(vocab[i]),
		    &added) < 0 || !added) {
			kg_error("text vocabulary: duplicate token '%s'",
			    vocab[i]);
			kg_text_model_release(m);
			return -1;
		}
	}
	m->idf = kg_xmallocarray((size_t)n_vocab + 1, sizeof(double));
	m->proj = kg_xmallocarray((size_t)n_vocab * dim + 1, sizeof(float));
	if (n_vocab > 0) {
		memcpy(m->idf, idf, (size_t)n_vocab * sizeof(double));
		memcpy(m->proj, proj, (size_t)n_vocab * dim * sizeof(float));
	}
	return 0;
}

void
kg_text_model_release(struct kg_text_model *m)
{
	if (m == NULL)
		return;
	kg_dict_release(&m->vocab);
	free(m->idf);
	free(m->proj);
	memset(m, 0, sizeof(*m));
}

void
kg_text_scratch_release(struct kg_text_scratch *sc)
{
	free(sc->ids);
	free(sc->tok);
	free(sc->w);
	free(sc->y);
	memset(sc, 0, sizeof(*sc));
}

void
kg_text_encode(const struct kg_text_model *m, const char *doc, size_t len,
    struct kg_text_scratch *sc, float *out)
{
	struct lookup_ctx lc;
	double *y, norm = 0;
	size_t i, k;
	uint32_t c, dim = m->dim;

	lc.dict = &m->vocab;
	lc.col_of = NULL;
	lc.sc = sc;
	lc.n = 0;
	if (sc->y_cap < dim) {
		sc->y_cap = dim;
		sc->y = kg_xreallocarray(sc->y, dim, sizeof(double));
	}
	y = sc->y;
	memset(y, 0, dim * sizeof(double));
	if (m->n_vocab > 0)
		kg_text_tokenize(doc, len, sc, lookup_tok, &lc);
	k = lc.n > 0 ? tfidf(sc->ids, lc.n, m->idf, m->sublinear_tf, sc->w) : 0;
	for (i = 0; i < k; i++) {
		const float *row = m->proj + (size_t)sc->ids[i] * dim;
		double wi = sc->w[i];

		for (c = 0; c < dim; c++)
			y[c] += wi * row[c];
	}
	if (m->normalize) {
		for (c = 0; c < dim; c++)
			norm += y[c] * y[c];
		norm = norm > 0 ? 1.0 / sqrt(norm) : 0;
	} else
		norm = 1;
	for (c = 0; c < dim; c++)
		out[c] = (float)(y[c] * norm);
}
