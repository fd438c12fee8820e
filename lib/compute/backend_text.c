/*
 * The backend seam's text-encoder operations (backend.h's kg_be_text_*):
 * through the backend's text table, with empty work returning at once.
 */
#include "compute/backend_impl.h"

#include "compute/devops_text.h"

int
kg_be_text_embed(struct kg_backend *be, const struct kg_dev_text *t,
    const float *word, const float *pos, const float *type, const float *g,
    const float *b, float eps, float *x)
{
	return t->n == 0 || t->h == 0 ? 0 : be->text->embed(be, t, word,
	    pos, type, g, b, eps, x);
}

int
kg_be_text_bias(struct kg_backend *be, size_t n, size_t ncol,
    const float *bias, int gelu, float *y)
{
	return n == 0 || ncol == 0 ? 0 : be->text->bias(be, n, ncol, bias,
	    gelu, y);
}

int
kg_be_text_add_norm(struct kg_backend *be, size_t n, size_t h,
    const float *t, const float *g, const float *b, float eps, float *x)
{
	return n == 0 || h == 0 ? 0 : be->text->add_norm(be, n, h, t, g, b,
	    eps, x);
}

int
kg_be_text_attn(struct kg_backend *be, const struct kg_dev_text *t,
    float scale, const float *qkv, float *ctx)
{
	return t->n == 0 || t->h == 0 ? 0 : be->text->attn(be, t, scale,
	    qkv, ctx);
}

int
kg_be_text_pool(struct kg_backend *be, const struct kg_dev_text *t,
    int mode, int normalize, const float *x, float *out)
{
	return t->nb == 0 || t->h == 0 ? 0 : be->text->pool(be, t, mode,
	    normalize, x, out);
}
