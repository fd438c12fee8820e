/*
 * devops_text: the arithmetic of a BERT encoder's forward pass besides
 * its GEMMs (lib/attrs/bert_forward.c, bert_device.c; backend.h's
 * kg_be_text_*), written once for the host path, the CPU backend and the
 * CUDA backend: LayerNorm of a row (mean and variance in double, the
 * variance biased, as torch's), GELU (erf), the embedding of a token, the
 * bias add, self-attention of one token and head over its text's tokens,
 * and the pooling of a text (dot products as devops_gnn.h's
 * kg_dev_dot8).  A batch packs the tokens of its texts row
 * after row (text b's rows off[b] .. off[b + 1)), so attention needs no
 * padding mask; struct kg_dev_text describes it.  Under devops_base.h's
 * conventions: the row and element functions are the maths, each thread
 * function (kg_dev_t_text_*) computes its index, returns past the work,
 * and calls one of them on what it owns (no atomics), so the CPU backend's
 * loops and the CUDA kernels give the same sums in the same order.
 */
#ifndef KG_DEVOPS_TEXT_H
#define KG_DEVOPS_TEXT_H

#include "compute/devops_base.h"
#include "compute/devops_gnn.h"

/*
 * One batch of packed texts.  tok is device memory of 3 n + nb + 1
 * uint32_t: [0, n) the token IDs, [n, 2n) each token's position in its
 * text, [2n, 3n) the length of the token's text, [3n, 3n + nb + 1) the
 * texts' first rows (off[0] = 0, off[nb] = n).  h is the width, heads
 * divides it.
 */
struct kg_dev_text {
	size_t n, nb, h, heads;
	const uint32_t *tok;
};

/* The pooling of kg_be_text_pool. */
enum kg_dev_text_pool {
	KG_DEV_TEXT_MEAN, KG_DEV_TEXT_CLS, KG_DEV_TEXT_MAX
};

/* y[0..h) = LayerNorm(y) * g + b in place. */
KG_HD void
kg_dev_text_norm(float *KG_RESTRICT y, size_t h, const float *KG_RESTRICT g,
    const float *KG_RESTRICT b, float eps)
{
	double s = 0, ss = 0, mean, r;
	size_t j;

	for (j = 0; j < h; j++)
		s += y[j];
	mean = s / (double)h;
	for (j = 0; j < h; j++) {
		double d = y[j] - mean;

		ss += d * d;
	}
	r = 1.0 / sqrt(ss / (double)h + eps);
	for (j = 0; j < h; j++)
		y[j] = (float)((y[j] - mean) * r) * g[j] + b[j];
}

/*
 * GELU(v) = v / 2 (1 + erf(v / sqrt 2)), erf the rational approximation
 * of Eigen (and TensorFlow) on [-4, 4], outside which it is +-1 in float:
 * within 5e-7 of erf and branch-free, so a loop over it vectorises.
 */
KG_HD float
kg_dev_gelu(float v)
{
	float x = v * 0.70710678118654752f, x2, p, q;

	x = x > 4.0f ? 4.0f : x;
	x = x < -4.0f ? -4.0f : x;
	x2 = x * x;
	p = x2 * -2.72614225801306e-10f + 2.77068142495902e-08f;
	p = p * x2 + -2.10102402082508e-06f;
	p = p * x2 + -5.69250639462346e-05f;
	p = p * x2 + -7.34990630326855e-04f;
	p = p * x2 + -2.95459980854025e-03f;
	p = p * x2 + -1.60960333262415e-02f;
	q = x2 * -1.45660718464996e-05f + -2.13374055278905e-04f;
	q = q * x2 + -1.68282697438203e-03f;
	q = q * x2 + -7.37332916720468e-03f;
	q = q * x2 + -1.42647390514189e-02f;
	return 0.5f * v * (1.0f + x * p / q);
}

/* x[0..h) = LayerNorm(word row id + position row p + type row). */
KG_HD void
kg_dev_text_embed_row(size_t h, uint32_t id, uint32_t p, const float *word,
    const float *pos, const float *type, const float *g, const float *b,
    float eps, float *KG_RESTRICT x)
{
	const float *we = word + (size_t)id * h, *pe = pos + (size_t)p * h;
	size_t j;

	for (j = 0; j < h; j++)
		x[j] = we[j] + pe[j] + type[j];
	kg_dev_text_norm(x, h, g, b, eps);
}

/* x[0..h) = LayerNorm(x + t). */
KG_HD void
kg_dev_text_add_norm_row(size_t h, const float *KG_RESTRICT t,
    const float *g, const float *b, float eps, float *KG_RESTRICT x)
{
	size_t j;

	for (j = 0; j < h; j++)
		x[j] += t[j];
	kg_dev_text_norm(x, h, g, b, eps);
}

/*
 * Self-attention of token r, head hd: with q its query, the keys k_j and
 * values v_j of its text's tokens j (qkv rows of 3h: Q, K, V, head hd at
 * column hd * dh of each) and s_j = scale q.k_j, ctx[0..dh) = sum_j
 * exp(s_j - max s) v_j / sum_j exp(s_j - max s), the sums over j in
 * order.
 */
KG_HD void
kg_dev_text_attn_one(const struct kg_dev_text *T, size_t r, size_t hd,
    float scale, const float *qkv, float *KG_RESTRICT ctx)
{
	size_t h = T->h, dh = h / T->heads, h3 = 3 * h, j, k;
	size_t lo = r - T->tok[T->n + r], hi = lo + T->tok[2 * T->n + r];
	const float *q = qkv + r * h3 + hd * dh;
	float mx = -INFINITY, sum = 0;

	for (j = lo; j < hi; j++) {
		float s = scale * kg_dev_dot8(dh, q, qkv + j * h3 + h + hd * dh);

		mx = s > mx ? s : mx;
	}
	for (k = 0; k < dh; k++)
		ctx[k] = 0;
	for (j = lo; j < hi; j++) {
		const float *v = qkv + j * h3 + 2 * h + hd * dh;
		float e = expf(scale * kg_dev_dot8(dh, q, qkv + j * h3 + h +
		    hd * dh) - mx);

		sum += e;
		for (k = 0; k < dh; k++)
			ctx[k] += e * v[k];
	}
	for (k = 0; k < dh; k++)
		ctx[k] /= sum;
}

/* Column c of text b's pooled row: the mean, [CLS]'s value or the max of
 * x's rows off[b] .. off[b + 1) in column c. */
KG_HD float
kg_dev_text_pool_one(const struct kg_dev_text *T, int mode, size_t b,
    size_t c, const float *x)
{
	const uint32_t *off = T->tok + 3 * T->n;
	size_t lo = off[b], hi = off[b + 1], r;
	float o = x[lo * T->h + c];

	if (mode == KG_DEV_TEXT_MEAN) {
		for (r = lo + 1; r < hi; r++)
			o += x[r * T->h + c];
		o /= (float)(hi - lo);
	} else if (mode == KG_DEV_TEXT_MAX)
		for (r = lo + 1; r < hi; r++)
			o = x[r * T->h + c] > o ? x[r * T->h + c] : o;
	return o;
}

/* o[0..h) /= max(|o|, 1e-12), the norm in double. */
KG_HD void
kg_dev_text_l2norm(size_t h, float *o)
{
	double norm = 0;
	size_t j;

	for (j = 0; j < h; j++)
		norm += (double)o[j] * o[j];
	norm = sqrt(norm);
	norm = norm > 1e-12 ? norm : 1e-12;
	for (j = 0; j < h; j++)
		o[j] = (float)(o[j] / norm);
}

/* ---- Thread functions. ---- */

/* One thread a token r < n: x row r = its embedding. */
KG_HD void
kg_dev_t_text_embed(unsigned b, unsigned t, unsigned bdim,
    struct kg_dev_text T, const float *word, const float *pos,
    const float *type, const float *g, const float *bb, float eps,
    float *x)
{
	size_t r = kg_dev_tid(b, t, bdim);

	if (r >= T.n)
		return;
	kg_dev_text_embed_row(T.h, T.tok[r], T.tok[T.n + r], word, pos, type,
	    g, bb, eps, x + r * T.h);
}

/* One thread an element of n x ncol: y += bias (gelu: y = GELU(y +
 * bias)). */
KG_HD void
kg_dev_t_text_bias(unsigned b, unsigned t, unsigned bdim, size_t n,
    size_t ncol, const float *bias, int gelu, float *y)
{
	size_t el = kg_dev_tid(b, t, bdim);
	float v;

	if (el >= n * ncol)
		return;
	v = y[el] + bias[el % ncol];
	y[el] = gelu ? kg_dev_gelu(v) : v;
}

/* One thread a row i < n: x row i = LayerNorm(x row i + t row i). */
KG_HD void
kg_dev_t_text_add_norm(unsigned b, unsigned t, unsigned bdim, size_t n,
    size_t h, const float *tt, const float *g, const float *bb, float eps,
    float *x)
{
	size_t i = kg_dev_tid(b, t, bdim);

	if (i >= n)
		return;
	kg_dev_text_add_norm_row(h, tt + i * h, g, bb, eps, x + i * h);
}

/* One thread a (token, head) of n x heads: its context slice of ctx
 * (rows of h). */
KG_HD void
kg_dev_t_text_attn(unsigned b, unsigned t, unsigned bdim,
    struct kg_dev_text T, float scale, const float *qkv, float *ctx)
{
	size_t el = kg_dev_tid(b, t, bdim), r, hd;

	if (el >= T.n * T.heads)
		return;
	r = el / T.heads;
	hd = el % T.heads;
	kg_dev_text_attn_one(&T, r, hd, scale, qkv,
	    ctx + r * T.h + hd * (T.h / T.heads));
}

/* One thread an element of nb x h: out[b][c] = the pooling of column c
 * of text b. */
KG_HD void
kg_dev_t_text_pool(unsigned b, unsigned t, unsigned bdim,
    struct kg_dev_text T, int mode, const float *x, float *out)
{
	size_t el = kg_dev_tid(b, t, bdim);

	if (el >= T.nb * T.h)
		return;
	out[el] = kg_dev_text_pool_one(&T, mode, el / T.h, el % T.h, x);
}

/* One thread a row i < nb of out (rows of h): Normalize. */
KG_HD void
kg_dev_t_text_l2norm(unsigned b, unsigned t, unsigned bdim, size_t nb,
    size_t h, float *out)
{
	size_t i = kg_dev_tid(b, t, bdim);

	if (i >= nb)
		return;
	kg_dev_text_l2norm(h, out + i * h);
}

#endif
