/*
 * The CUDA backend's text-encoder operations (backend.h's kg_be_text_*):
 * kernels that each call one thread function of devops_text.h, launched
 * as the other operations are (cuda_impl.h).
 */
#include "compute/cuda/cuda_impl.h"
#include "compute/devops_text.h"

namespace {

using namespace kg_cuda;

__global__ void
k_text_embed(kg_dev_text T, const float *word, const float *pos,
    const float *type, const float *g, const float *b, float eps, float *x)
{
	kg_dev_t_text_embed(TID, T, word, pos, type, g, b, eps, x);
}

__global__ void
k_text_bias(size_t n, size_t ncol, const float *bias, int gelu, float *y)
{
	kg_dev_t_text_bias(TID, n, ncol, bias, gelu, y);
}

__global__ void
k_text_add_norm(size_t n, size_t h, const float *t, const float *g,
    const float *b, float eps, float *x)
{
	kg_dev_t_text_add_norm(TID, n, h, t, g, b, eps, x);
}

__global__ void
k_text_attn(kg_dev_text T, float scale, const float *qkv, float *ctx)
{
	kg_dev_t_text_attn(TID, T, scale, qkv, ctx);
}

__global__ void
k_text_pool(kg_dev_text T, int mode, const float *x, float *out)
{
	kg_dev_t_text_pool(TID, T, mode, x, out);
}

__global__ void
k_text_l2norm(size_t nb, size_t h, float *out)
{
	kg_dev_t_text_l2norm(TID, nb, h, out);
}

int
cu_text_embed(struct kg_backend *be, const struct kg_dev_text *t,
    const float *word, const float *pos, const float *type, const float *g,
    const float *b, float eps, float *x)
{
	return launch(be, "text_embed", t->n, k_text_embed, *t, word, pos,
	    type, g, b, eps, x);
}

int
cu_text_bias(struct kg_backend *be, size_t n, size_t ncol, const float *bias,
    int gelu, float *y)
{
	return launch(be, "text_bias", n * ncol, k_text_bias, n, ncol, bias,
	    gelu, y);
}

int
cu_text_add_norm(struct kg_backend *be, size_t n, size_t h, const float *t,
    const float *g, const float *b, float eps, float *x)
{
	return launch(be, "text_add_norm", n, k_text_add_norm, n, h, t, g, b,
	    eps, x);
}

int
cu_text_attn(struct kg_backend *be, const struct kg_dev_text *t,
    float scale, const float *qkv, float *ctx)
{
	return launch(be, "text_attn", t->n * t->heads, k_text_attn, *t,
	    scale, qkv, ctx);
}

int
cu_text_pool(struct kg_backend *be, const struct kg_dev_text *t, int mode,
    int normalize, const float *x, float *out)
{
	if (launch(be, "text_pool", t->nb * t->h, k_text_pool, *t, mode, x,
	    out) < 0)
		return -1;
	return normalize ? launch(be, "text_l2norm", t->nb, k_text_l2norm,
	    t->nb, t->h, out) : 0;
}

} /* namespace */

const struct kg_backend_text_ops kg_backend_cuda_text_ops = {
	cu_text_embed, cu_text_bias, cu_text_add_norm, cu_text_attn,
	cu_text_pool,
};
