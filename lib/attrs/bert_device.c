/*
 * The device path of the BERT encoder (kg_bert_run_device, bert_impl.h):
 * the weights copied to the backend's memory once, then every batch's
 * forward pass as backend operations over activations that stay there
 * (kg_be_sgemm for the products, backend.h's kg_be_text_* for the rest).
 */
#include "attrs/bert_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compute/devops_text.h"
#include "core/util.h"

/* A layer's weights in device memory. */
struct dlayer {
	float *wqkv, *bqkv, *wo, *bo, *ln1_w, *ln1_b;
	float *wi, *bi, *wf, *bf, *ln2_w, *ln2_b;
};

/* The backend, the weights and the buffers of one encoding. */
struct dev {
	struct kg_backend *be;
	float *weights;		/* device: every tensor below, packed */
	float *word, *pos, *type, *eln_w, *eln_b;
	struct dlayer *layer;	/* host array of n_layers */
	float *x, *qkv, *ctx, *tmp, *inter, *out;	/* device */
	uint32_t *tok;		/* device: struct kg_dev_text's tok */
	uint32_t *htok;		/* host: the same, filled a batch */
	float *hout;		/* host: [batch, hidden] */
};

/* Place the next n floats of the packed weights at *dst and upload src
 * there; *at advances.  0 or -1. */
static int
put(struct dev *d, size_t *at, float **dst, const float *src, size_t n)
{
	*dst = d->weights + *at;
	*at += n;
	return kg_be_upload(d->be, *dst, src, n * sizeof(float));
}

/* The floats of every weight tensor. */
static size_t
weight_floats(const struct kg_bert *m)
{
	size_t h = m->hidden, f = m->inter;

	return (size_t)(m->n_vocab + m->max_pos + 1 + 2) * h +
	    (size_t)m->n_layers * (4 * h * h + 2 * h * f + 9 * h + f);
}

static int
upload_weights(struct dev *d, const struct kg_bert *m)
{
	size_t h = m->hidden, f = m->inter, at = 0, total = weight_floats(m);
	uint32_t l;

	d->weights = kg_be_alloc(d->be, total * sizeof(float));
	if (d->weights == NULL)
		return -1;
	if (put(d, &at, &d->word, m->word, (size_t)m->n_vocab * h) < 0 ||
	    put(d, &at, &d->pos, m->pos, (size_t)m->max_pos * h) < 0 ||
	    put(d, &at, &d->type, m->type, h) < 0 ||
	    put(d, &at, &d->eln_w, m->eln_w, h) < 0 ||
	    put(d, &at, &d->eln_b, m->eln_b, h) < 0)
		return -1;
	for (l = 0; l < m->n_layers; l++) {
		const struct kg_bert_layer *L = &m->layer[l];
		struct dlayer *D = &d->layer[l];

		if (put(d, &at, &D->wqkv, L->wqkv, 3 * h * h) < 0 ||
		    put(d, &at, &D->bqkv, L->bqkv, 3 * h) < 0 ||
		    put(d, &at, &D->wo, L->wo, h * h) < 0 ||
		    put(d, &at, &D->bo, L->bo, h) < 0 ||
		    put(d, &at, &D->ln1_w, L->ln1_w, h) < 0 ||
		    put(d, &at, &D->ln1_b, L->ln1_b, h) < 0 ||
		    put(d, &at, &D->wi, L->wi, f * h) < 0 ||
		    put(d, &at, &D->bi, L->bi, f) < 0 ||
		    put(d, &at, &D->wf, L->wf, h * f) < 0 ||
		    put(d, &at, &D->bf, L->bf, h) < 0 ||
		    put(d, &at, &D->ln2_w, L->ln2_w, h) < 0 ||
		    put(d, &at, &D->ln2_b, L->ln2_b, h) < 0)
			return -1;
	}
	return 0;
}

static void
dev_release(struct dev *d)
{
	if (d->be == NULL)
		return;
	kg_be_free(d->be, d->weights);
	kg_be_free(d->be, d->x);
	kg_be_free(d->be, d->qkv);
	kg_be_free(d->be, d->ctx);
	kg_be_free(d->be, d->tmp);
	kg_be_free(d->be, d->inter);
	kg_be_free(d->be, d->out);
	kg_be_free(d->be, d->tok);
	kg_be_host_free(d->be, d->htok);
	kg_be_host_free(d->be, d->hout);
	kg_backend_free(d->be);
	free(d->layer);
	memset(d, 0, sizeof(*d));
}

/* Open the backend and allocate for batches of batch texts, cap tokens. */
static int
dev_init(struct dev *d, const struct kg_bert *m, const struct kg_device *dv,
    size_t batch, size_t cap)
{
	size_t h = m->hidden;

	memset(d, 0, sizeof(*d));
	d->be = kg_backend_open(dv);
	if (d->be == NULL)
		return -1;
	d->layer = kg_xcalloc(m->n_layers, sizeof(*d->layer));
	if (upload_weights(d, m) < 0)
		return -1;
	d->x = kg_be_alloc(d->be, cap * h * sizeof(float));
	d->qkv = kg_be_alloc(d->be, cap * 3 * h * sizeof(float));
	d->ctx = kg_be_alloc(d->be, cap * h * sizeof(float));
	d->tmp = kg_be_alloc(d->be, cap * h * sizeof(float));
	d->inter = kg_be_alloc(d->be, cap * m->inter * sizeof(float));
	d->out = kg_be_alloc(d->be, batch * h * sizeof(float));
	d->tok = kg_be_alloc(d->be, (3 * cap + batch + 1) * sizeof(uint32_t));
	d->htok = kg_be_host_alloc(d->be, (3 * cap + batch + 1) *
	    sizeof(uint32_t));
	d->hout = kg_be_host_alloc(d->be, batch * h * sizeof(float));
	if (d->x == NULL || d->qkv == NULL || d->ctx == NULL ||
	    d->tmp == NULL || d->inter == NULL || d->out == NULL ||
	    d->tok == NULL || d->htok == NULL || d->hout == NULL)
		return -1;
	kg_backend_counts_reset(d->be);
	return 0;
}

/* out[n, ncol] = in[n, k] W' + bias (W is [ncol, k]); gelu: GELU of
 * that. */
static int
linear(struct kg_backend *be, size_t n, size_t ncol, size_t k,
    const float *in, const float *w, const float *bias, int gelu, float *out)
{
	if (kg_be_sgemm(be, KG_NO_TRANS, KG_TRANS, n, ncol, k, 1.0f, in, k, w,
	    k, 0.0f, out, ncol) < 0)
		return -1;
	return kg_be_text_bias(be, n, ncol, bias, gelu, out);
}

static int
pool_mode(enum kg_bert_pool p)
{
	switch (p) {
	case KG_BERT_POOL_CLS:
		return KG_DEV_TEXT_CLS;
	case KG_BERT_POOL_MAX:
		return KG_DEV_TEXT_MAX;
	case KG_BERT_POOL_MEAN:
		break;
	}
	return KG_DEV_TEXT_MEAN;
}

/* The forward pass of the batch T describes (its tokens uploaded) into
 * d->out. */
static int
forward(const struct kg_bert *m, struct dev *d, const struct kg_dev_text *T)
{
	size_t n = T->n, h = m->hidden, f = m->inter;
	float scale = 1.0f / sqrtf((float)(h / m->n_heads));
	struct kg_backend *be = d->be;
	uint32_t l;

	if (kg_be_text_embed(be, T, d->word, d->pos, d->type, d->eln_w,
	    d->eln_b, m->eps, d->x) < 0)
		return -1;
	for (l = 0; l < m->n_layers; l++) {
		const struct dlayer *L = &d->layer[l];

		if (linear(be, n, 3 * h, h, d->x, L->wqkv, L->bqkv, 0,
		    d->qkv) < 0 ||
		    kg_be_text_attn(be, T, scale, d->qkv, d->ctx) < 0 ||
		    linear(be, n, h, h, d->ctx, L->wo, L->bo, 0, d->tmp) < 0 ||
		    kg_be_text_add_norm(be, n, h, d->tmp, L->ln1_w, L->ln1_b,
		    m->eps, d->x) < 0 ||
		    linear(be, n, f, h, d->x, L->wi, L->bi, 1, d->inter) < 0 ||
		    linear(be, n, h, f, d->inter, L->wf, L->bf, 0, d->tmp) < 0 ||
		    kg_be_text_add_norm(be, n, h, d->tmp, L->ln2_w, L->ln2_b,
		    m->eps, d->x) < 0)
			return -1;
	}
	return kg_be_text_pool(be, T, pool_mode(m->pool), m->normalize, d->x,
	    d->out);
}

/* Texts order[0..nb) into d->htok (struct kg_dev_text's layout); the
 * batch's token count. */
static size_t
pack(struct dev *d, size_t nb, const struct kg_bert_order *order,
    const uint32_t *ids, const uint64_t *off)
{
	size_t n = 0, k, p;
	uint32_t *h = d->htok, *pos, *len, *start;

	for (k = 0; k < nb; k++)
		n += order[k].len;
	pos = h + n;
	len = h + 2 * n;
	start = h + 3 * n;
	start[0] = 0;
	for (k = 0; k < nb; k++) {
		size_t t = order[k].i, c = order[k].len, at = start[k];

		memcpy(h + at, ids + off[t], c * sizeof(uint32_t));
		for (p = 0; p < c; p++) {
			pos[at + p] = (uint32_t)p;
			len[at + p] = (uint32_t)c;
		}
		start[k + 1] = (uint32_t)(at + c);
	}
	return n;
}

int
kg_bert_run_device(const struct kg_bert *m, const struct kg_device *dv,
    size_t batch, size_t cap, size_t n, const struct kg_bert_order *order,
    const uint32_t *ids, const uint64_t *off, float *out,
    struct kg_bert_stats *stats)
{
	struct dev d;
	size_t lo, k, h = m->hidden;
	uint64_t nbat = 0;
	int rc = -1;

	if (dev_init(&d, m, dv, batch, cap) < 0)
		goto out;
	for (lo = 0; lo < n; lo += batch) {
		size_t nb = n - lo < batch ? n - lo : batch;
		struct kg_dev_text T = { 0, nb, h, m->n_heads, d.tok };

		T.n = pack(&d, nb, order + lo, ids, off);
		if (kg_be_upload(d.be, d.tok, d.htok, (3 * T.n + nb + 1) *
		    sizeof(uint32_t)) < 0 || forward(m, &d, &T) < 0 ||
		    kg_be_download(d.be, d.hout, d.out, nb * h *
		    sizeof(float)) < 0)
			goto out;
		for (k = 0; k < nb; k++)
			memcpy(out + order[lo + k].i * h, d.hout + k * h,
			    h * sizeof(float));
		nbat++;
	}
	if (stats != NULL) {
		stats->batches = nbat;
		stats->copies = kg_backend_counts(d.be).copies;
		snprintf(stats->backend, sizeof(stats->backend), "%s",
		    kg_backend_name(d.be));
	}
	rc = 0;
out:
	dev_release(&d);
	return rc;
}
