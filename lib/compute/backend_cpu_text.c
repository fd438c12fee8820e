/*
 * The CPU backend's text-encoder operations (backend.h's kg_be_text_*)
 * on the calling thread: loops over devops_text.h's row and element
 * functions in the order of its thread functions, so that this backend
 * computes each value as a CUDA thread does, and counts the launches the
 * CUDA backend makes.
 */
#include "compute/backend_impl.h"

#include "compute/devops_text.h"

static int
cpu_embed(struct kg_backend *be, const struct kg_dev_text *t,
    const float *word, const float *pos, const float *type, const float *g,
    const float *b, float eps, float *x)
{
	size_t r;

	for (r = 0; r < t->n; r++)
		kg_dev_text_embed_row(t->h, t->tok[r], t->tok[t->n + r], word,
		    pos, type, g, b, eps, x + r * t->h);
	be->counts.launches++;
	return 0;
}

static int
cpu_bias(struct kg_backend *be, size_t n, size_t ncol, const float *bias,
    int gelu, float *y)
{
	size_t i, j;

	for (i = 0; i < n; i++) {
		float *restrict o = y + i * ncol;

		if (gelu)
			for (j = 0; j < ncol; j++)
				o[j] = kg_dev_gelu(o[j] + bias[j]);
		else
			for (j = 0; j < ncol; j++)
				o[j] += bias[j];
	}
	be->counts.launches++;
	return 0;
}

static int
cpu_add_norm(struct kg_backend *be, size_t n, size_t h, const float *t,
    const float *g, const float *b, float eps, float *x)
{
	size_t i;

	for (i = 0; i < n; i++)
		kg_dev_text_add_norm_row(h, t + i * h, g, b, eps, x + i * h);
	be->counts.launches++;
	return 0;
}

static int
cpu_attn(struct kg_backend *be, const struct kg_dev_text *t, float scale,
    const float *qkv, float *ctx)
{
	size_t r, hd, dh = t->h / t->heads;

	for (r = 0; r < t->n; r++)
		for (hd = 0; hd < t->heads; hd++)
			kg_dev_text_attn_one(t, r, hd, scale, qkv,
			    ctx + r * t->h + hd * dh);
	be->counts.launches++;
	return 0;
}

static int
cpu_pool(struct kg_backend *be, const struct kg_dev_text *t, int mode,
    int normalize, const float *x, float *out)
{
	size_t b, c;

	for (b = 0; b < t->nb; b++)
		for (c = 0; c < t->h; c++)
			out[b * t->h + c] = kg_dev_text_pool_one(t, mode, b, c,
			    x);
	be->counts.launches++;
	if (!normalize)
		return 0;
	for (b = 0; b < t->nb; b++)
		kg_dev_text_l2norm(t->h, out + b * t->h);
	be->counts.launches++;
	return 0;
}

const struct kg_backend_text_ops kg_backend_cpu_text_ops = {
	.embed = cpu_embed,
	.bias = cpu_bias,
	.add_norm = cpu_add_norm,
	.attn = cpu_attn,
	.pool = cpu_pool,
};
