/*
 * The BERT forward pass and the batched encoder (kg_bert_encode, declared
 * in bert.h).  A batch packs its texts' tokens row after row: the
 * projections are single GEMMs over every token of the batch, attention
 * runs per text and head.  Buffers are sized once per thread for the
 * largest batch.
 */
#include "attrs/bert.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "attrs/bert_impl.h"
#include "compute/backend.h"
#include "compute/devops_text.h"
#include "core/util.h"

/* One thread's buffers. */
struct work {
	struct kg_backend *be;
	size_t cap;		/* tokens */
	float *x, *qkv, *ctx, *tmp, *inter, *scores;
	uint32_t *ids;		/* the batch's tokens, packed */
	uint64_t *off;		/* [batch + 1] */
	float *out;		/* [batch, hidden] */
	double t[3];		/* seconds: GEMMs, attention, the rest */
};

enum { T_GEMM, T_ATTN, T_REST };

/* Add the seconds since *t to w->t[k]; *t = now. */
static void
lap(struct work *w, int k, double *t)
{
	double now = kg_now();

	w->t[k] += now - *t;
	*t = now;
}

static int
work_init(struct work *w, const struct kg_bert *m, size_t cap, size_t batch,
    size_t max_len)
{
	struct kg_device cpu = KG_DEVICE_INIT;
	size_t h = m->hidden;

	memset(w, 0, sizeof(*w));
	w->be = kg_backend_open(&cpu);
	if (w->be == NULL)
		return -1;
	w->cap = cap;
	w->x = kg_xmallocarray(cap * h, sizeof(float));
	w->qkv = kg_xmallocarray(cap * 3 * h, sizeof(float));
	w->ctx = kg_xmallocarray(cap * h, sizeof(float));
	w->tmp = kg_xmallocarray(cap * h, sizeof(float));
	w->inter = kg_xmallocarray(cap * m->inter, sizeof(float));
	w->scores = kg_xmallocarray(max_len * max_len, sizeof(float));
	w->ids = kg_xmallocarray(cap, sizeof(uint32_t));
	w->off = kg_xmallocarray(batch + 1, sizeof(uint64_t));
	w->out = kg_xmallocarray(batch * h, sizeof(float));
	return 0;
}

static void
work_release(struct work *w)
{
	free(w->x);
	free(w->qkv);
	free(w->ctx);
	free(w->tmp);
	free(w->inter);
	free(w->scores);
	free(w->ids);
	free(w->off);
	free(w->out);
	kg_backend_free(w->be);
	memset(w, 0, sizeof(*w));
}

/* out[n, ncol] = in[n, k] W' (W is [ncol, k]) + bias. */
static int
linear(struct kg_backend *be, size_t n, size_t ncol, size_t k,
    const float *in, const float *w, const float *bias, float *out)
{
	size_t i, j;

	if (kg_be_sgemm(be, KG_NO_TRANS, KG_TRANS, n, ncol, k, 1.0f, in, k, w,
	    k, 0.0f, out, ncol) < 0)
		return -1;
	for (i = 0; i < n; i++) {
		float *restrict o = out + i * ncol;

		for (j = 0; j < ncol; j++)
			o[j] += bias[j];
	}
	return 0;
}

/* x = LayerNorm(tmp + bias + x), row by row. */
static void
add_norm(size_t n, size_t h, float *restrict x, const float *restrict tmp,
    const float *restrict g, const float *restrict b, float eps)
{
	size_t i;

	for (i = 0; i < n; i++)
		kg_dev_text_add_norm_row(h, tmp + i * h, g, b, eps, x + i * h);
}

static void
softmax_rows(float *s, size_t n)
{
	size_t i, j;

	for (i = 0; i < n; i++) {
		float *restrict r = s + i * n, mx = r[0], sum = 0;

		for (j = 1; j < n; j++)
			mx = r[j] > mx ? r[j] : mx;
		for (j = 0; j < n; j++) {
			r[j] = expf(r[j] - mx);
			sum += r[j];
		}
		for (j = 0; j < n; j++)
			r[j] /= sum;
	}
}

/* Self-attention of each text of the batch into w->ctx. */
static int
attention(const struct kg_bert *m, struct work *w, size_t nb)
{
	size_t h = m->hidden, dh = h / m->n_heads, h3 = 3 * h, b, hd;
	float scale = 1.0f / sqrtf((float)dh);

	for (b = 0; b < nb; b++) {
		size_t o = w->off[b], len = w->off[b + 1] - o;

		for (hd = 0; hd < m->n_heads; hd++) {
			const float *q = w->qkv + o * h3 + hd * dh;

			if (kg_be_sgemm(w->be, KG_NO_TRANS, KG_TRANS, len, len,
			    dh, scale, q, h3, q + h, h3, 0.0f, w->scores,
			    len) < 0)
				return -1;
			softmax_rows(w->scores, len);
			if (kg_be_sgemm(w->be, KG_NO_TRANS, KG_NO_TRANS, len,
			    dh, len, 1.0f, w->scores, len, q + 2 * h, h3, 0.0f,
			    w->ctx + o * h + hd * dh, h) < 0)
				return -1;
		}
	}
	return 0;
}

static void
embed(const struct kg_bert *m, struct work *w, size_t nb)
{
	size_t h = m->hidden, b, p;

	for (b = 0; b < nb; b++)
		for (p = 0; p < w->off[b + 1] - w->off[b]; p++) {
			size_t r = w->off[b] + p;

			kg_dev_text_embed_row(h, w->ids[r], (uint32_t)p,
			    m->word, m->pos, m->type, m->eln_w, m->eln_b,
			    m->eps, w->x + r * h);
		}
}

/* v[i] = GELU(v[i]) for i < n. */
static void
gelu(float *restrict v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		v[i] = kg_dev_gelu(v[i]);
}

static void
pool(const struct kg_bert *m, struct work *w, size_t nb)
{
	size_t h = m->hidden, b, r, j;

	for (b = 0; b < nb; b++) {
		float *restrict o = w->out + b * h;
		size_t lo = w->off[b], hi = w->off[b + 1];

		memcpy(o, w->x + lo * h, h * sizeof(float));
		if (m->pool == KG_BERT_POOL_MEAN) {
			for (r = lo + 1; r < hi; r++)
				for (j = 0; j < h; j++)
					o[j] += w->x[r * h + j];
			for (j = 0; j < h; j++)
				o[j] /= (float)(hi - lo);
		} else if (m->pool == KG_BERT_POOL_MAX)
			for (r = lo + 1; r < hi; r++)
				for (j = 0; j < h; j++)
					o[j] = w->x[r * h + j] > o[j] ?
					    w->x[r * h + j] : o[j];
		if (m->normalize)
			kg_dev_text_l2norm(h, o);
	}
}

/* The forward pass of the nb texts packed in w (ids, off) into w->out. */
static int
forward(const struct kg_bert *m, struct work *w, size_t nb)
{
	size_t n = w->off[nb], h = m->hidden;
	double t = kg_now();
	uint32_t l;

	embed(m, w, nb);
	lap(w, T_REST, &t);
	for (l = 0; l < m->n_layers; l++) {
		const struct kg_bert_layer *L = &m->layer[l];

		if (linear(w->be, n, 3 * h, h, w->x, L->wqkv, L->bqkv,
		    w->qkv) < 0)
			return -1;
		lap(w, T_GEMM, &t);
		if (attention(m, w, nb) < 0)
			return -1;
		lap(w, T_ATTN, &t);
		if (linear(w->be, n, h, h, w->ctx, L->wo, L->bo, w->tmp) < 0)
			return -1;
		lap(w, T_GEMM, &t);
		add_norm(n, h, w->x, w->tmp, L->ln1_w, L->ln1_b, m->eps);
		lap(w, T_REST, &t);
		if (linear(w->be, n, m->inter, h, w->x, L->wi, L->bi,
		    w->inter) < 0)
			return -1;
		lap(w, T_GEMM, &t);
		gelu(w->inter, n * m->inter);
		lap(w, T_REST, &t);
		if (linear(w->be, n, h, m->inter, w->inter, L->wf, L->bf,
		    w->tmp) < 0)
			return -1;
		lap(w, T_GEMM, &t);
		add_norm(n, h, w->x, w->tmp, L->ln2_w, L->ln2_b, m->eps);
		lap(w, T_REST, &t);
	}
	pool(m, w, nb);
	lap(w, T_REST, &t);
	return 0;
}

/* ---- The whole set of texts. ---- */

static int
cmp_len(const void *a, const void *b)
{
	const struct kg_bert_order *x = a, *y = b;

	if (x->len != y->len)
		return x->len < y->len ? 1 : -1;
	return (x->i > y->i) - (x->i < y->i);
}

/* Every text's tokens: off[0..n], ids[off[i]..off[i+1]) (two passes, a
 * count and a fill, on the OpenMP threads). */
static uint32_t *
tokenize_all(const struct kg_bert *m, size_t max_len, size_t n,
    const char *const *texts, const size_t *lens, uint64_t *off)
{
	uint32_t *ids = NULL;
	size_t i;

	off[0] = 0;
#pragma omp parallel
	{
		struct kg_bert_tok_scratch sc = KG_BERT_TOK_SCRATCH_INIT;
		uint32_t *buf = kg_xmallocarray(max_len, sizeof(uint32_t));
		long long k;

#pragma omp for schedule(dynamic, 512)
		for (k = 0; k < (long long)n; k++)
			off[k + 1] = kg_bert_tok_encode(&m->tok, texts[k],
			    lens[k], &sc, buf, max_len);
#pragma omp single
		{
			for (i = 0; i < n; i++)
				off[i + 1] += off[i];
			ids = kg_xmallocarray(off[n] + 1, sizeof(uint32_t));
		}
#pragma omp for schedule(dynamic, 512)
		for (k = 0; k < (long long)n; k++)
			(void)kg_bert_tok_encode(&m->tok, texts[k], lens[k],
			    &sc, ids + off[k], max_len);
		free(buf);
		kg_bert_tok_scratch_release(&sc);
	}
	return ids;
}

/* Run the batches of texts order[0..n) (longest first) on this thread's
 * share; returns 0 or -1. */
static int
run_batches(const struct kg_bert *m, size_t batch, size_t max_len, size_t cap,
    size_t n, const struct kg_bert_order *order, const uint32_t *ids,
    const uint64_t *off, float *out, double phase[3])
{
	size_t nbat = (n + batch - 1) / batch;
	int rc = 0;

#pragma omp parallel
	{
		struct work w;
		long long bi;
		int ok = work_init(&w, m, cap, batch, max_len) == 0;

		if (!ok) {
#pragma omp atomic write
			rc = -1;
		}
#pragma omp for schedule(dynamic, 1)
		for (bi = 0; bi < (long long)nbat; bi++) {
			size_t lo = (size_t)bi * batch, nb = n - lo < batch ?
			    n - lo : batch, k;

			if (!ok)
				continue;
			w.off[0] = 0;
			for (k = 0; k < nb; k++) {
				size_t t = order[lo + k].i;

				w.off[k + 1] = w.off[k] + order[lo + k].len;
				memcpy(w.ids + w.off[k], ids + off[t],
				    order[lo + k].len * sizeof(uint32_t));
			}
			if (forward(m, &w, nb) < 0) {
				ok = 0;
#pragma omp atomic write
				rc = -1;
				continue;
			}
			for (k = 0; k < nb; k++)
				memcpy(out + order[lo + k].i * m->hidden,
				    w.out + k * m->hidden,
				    m->hidden * sizeof(float));
		}
		if (w.be != NULL) {
#pragma omp critical
			{
				phase[0] += w.t[T_GEMM];
				phase[1] += w.t[T_ATTN];
				phase[2] += w.t[T_REST];
			}
			work_release(&w);
		}
	}
	return rc;
}

int
kg_bert_encode(const struct kg_bert *m, const struct kg_bert_opts *o,
    size_t n, const char *const *texts, const size_t *lens, float *out,
    struct kg_bert_stats *stats)
{
	size_t max_len = o->max_len ? o->max_len : m->max_len;
	size_t batch = o->batch ? o->batch : 32, i, cap = 1, sum = 0;
	uint64_t *off = kg_xmallocarray(n + 1, sizeof(uint64_t));
	struct kg_bert_order *order = kg_xcalloc(n + 1, sizeof(*order));
	double t0 = kg_now(), flops = 0, phase[3] = { 0, 0, 0 };
	uint32_t *ids;
	int rc;

	if (max_len < 2 || max_len > m->max_pos) {
		kg_error("max_length %zu is outside [2, %u] (the model's "
		    "position embeddings)", max_len, m->max_pos);
		free(off);
		free(order);
		return -1;
	}
	ids = tokenize_all(m, max_len, n, texts, lens, off);
	for (i = 0; i < n; i++) {
		order[i].len = off[i + 1] - off[i];
		order[i].i = i;
		flops += kg_bert_flops(m, order[i].len);
	}
	qsort(order, n, sizeof(*order), cmp_len);
	/* The longest batch: the first, as the texts are longest first. */
	for (i = 0; i < n && i < batch; i++)
		sum += order[i].len;
	cap = sum > cap ? sum : cap;
	if (stats != NULL)
		memset(stats, 0, sizeof(*stats));
	rc = o->on_device ? kg_bert_run_device(m, &o->device, batch, cap, n,
	    order, ids, off, out, stats) : run_batches(m, batch, max_len, cap,
	    n, order, ids, off, out, phase);
	if (stats != NULL) {
		stats->tokens = off[n];
		stats->flops = flops;
		stats->seconds = kg_now() - t0;
		stats->gemm_seconds = phase[0];
		stats->attention_seconds = phase[1];
		stats->other_seconds = phase[2];
	}
	free(ids);
	free(off);
	free(order);
	return rc;
}
