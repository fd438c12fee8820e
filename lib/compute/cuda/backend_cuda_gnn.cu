/*
 * The CUDA backend's GNN message passing (backend.h's last section):
 * kernels that each call one thread function of devops_gnn.h, launched
 * as the shallow operations are (cuda_impl.h).
 */
#include "compute/cuda/cuda_impl.h"
#include "compute/devops_gnn.h"
#include "compute/devops_optim.h"

namespace {

using namespace kg_cuda;

__global__ void
k_seg_sum(size_t n_seg, size_t d, kg_dev_seg sg, const float *x, int beta,
    float *out, size_t ldo)
{
	kg_dev_t_seg_sum(TID, n_seg, d, sg, x, beta, out, ldo);
}

__global__ void
k_edge_coef(size_t n, size_t nb, const float *norm, const int64_t *type,
    const float *a, float *w)
{
	kg_dev_t_edge_coef(TID, n, nb, norm, type, a, w);
}

__global__ void
k_edge_dot(size_t n, size_t d, const float *a, const int64_t *ia,
    const float *b, const int64_t *ib, float *out)
{
	kg_dev_t_edge_dot(TID, n, d, a, ia, b, ib, out);
}

__global__ void
k_fill_rows(size_t n, size_t d, const float *row, float *out)
{
	kg_dev_t_fill_rows(TID, n, d, row, out);
}

__global__ void
k_mul(size_t n, const float *a, const float *x, float *y)
{
	kg_dev_t_mul(TID, n, a, x, y);
}

__global__ void
k_relu(size_t n, const float *x, float *y)
{
	kg_dev_t_relu(TID, n, x, y);
}

__global__ void
k_relu_bwd(size_t n, const float *pre, float *g)
{
	kg_dev_t_relu_bwd(TID, n, pre, g);
}

__global__ void
k_seg_part(size_t n_seg, size_t d, size_t parts, kg_dev_seg sg,
    const float *x, int beta, const float *out, size_t ldo, float *tmp)
{
	kg_dev_t_seg_part(TID, n_seg, d, parts, sg, x, beta, out, ldo, tmp);
}

__global__ void
k_seg_join(size_t n_seg, size_t d, size_t parts, const float *tmp,
    float *out, size_t ldo)
{
	kg_dev_t_seg_join(TID, n_seg, d, parts, tmp, out, ldo);
}

__global__ void
k_attn_scores(kg_dev_attn A)
{
	kg_dev_t_attn_scores(TID, A);
}

__global__ void
k_attn_msgs(kg_dev_attn A, float *out)
{
	kg_dev_t_attn_msgs(TID, A, out);
}

__global__ void
k_attn_back_scores(kg_dev_attn A, const float *G)
{
	kg_dev_t_attn_back_scores(TID, A, G);
}

__global__ void
k_attn_back_dz(kg_dev_attn A, const float *G, float *dz)
{
	kg_dev_t_attn_back_dz(TID, A, G, dz);
}

__global__ void
k_attn_back_rel(kg_dev_attn A, const float *G, float *grel)
{
	kg_dev_t_attn_back_rel(TID, A, G, grel);
}

__global__ void
k_adam_flat(size_t n, float lr, float b1, float b2, float eps,
    const float *grad, float *w, float *state)
{
	kg_dev_t_adam_flat(TID, n, lr, b1, b2, eps, grad, w, state);
}

__global__ void
k_adam_count(size_t n, float *state)
{
	kg_dev_t_adam_count(TID, n, state);
}

int
cu_seg_sum(struct kg_backend *be, size_t n_seg, size_t d,
    const struct kg_dev_seg *sg, const float *x, int beta, float *out,
    size_t ldo)
{
	return launch(be, "seg_sum", n_seg * d, k_seg_sum, n_seg, d, *sg, x,
	    beta, out, ldo);
}

int
cu_edge_coef(struct kg_backend *be, size_t n, size_t nb, const float *norm,
    const int64_t *type, const float *a, float *w)
{
	return launch(be, "edge_coef", n * nb, k_edge_coef, n, nb, norm, type,
	    a, w);
}

int
cu_edge_dot(struct kg_backend *be, size_t n, size_t d, const float *a,
    const int64_t *ia, const float *b, const int64_t *ib, float *out)
{
	return launch(be, "edge_dot", n, k_edge_dot, n, d, a, ia, b, ib, out);
}

int
cu_fill_rows(struct kg_backend *be, size_t n, size_t d, const float *row,
    float *out)
{
	return launch(be, "fill_rows", n * d, k_fill_rows, n, d, row, out);
}

int
cu_mul(struct kg_backend *be, size_t n, const float *a, const float *x,
    float *y)
{
	return launch(be, "mul", n, k_mul, n, a, x, y);
}

int
cu_relu(struct kg_backend *be, size_t n, const float *x, float *y)
{
	return launch(be, "relu", n, k_relu, n, x, y);
}

int
cu_relu_backward(struct kg_backend *be, size_t n, const float *pre,
    float *g)
{
	return launch(be, "relu_backward", n, k_relu_bwd, n, pre, g);
}

int
cu_seg_sum_split(struct kg_backend *be, size_t n_seg, size_t d,
    size_t parts, const struct kg_dev_seg *sg, const float *x, int beta,
    float *out, size_t ldo, float *tmp)
{
	if (parts <= 1)
		return cu_seg_sum(be, n_seg, d, sg, x, beta, out, ldo);
	if (launch(be, "seg_part", n_seg * parts * d, k_seg_part, n_seg, d,
	    parts, *sg, x, beta, out, ldo, tmp) < 0)
		return -1;
	return launch(be, "seg_join", n_seg * d, k_seg_join, n_seg, d, parts,
	    tmp, out, ldo);
}

int
cu_attn(struct kg_backend *be, enum kg_be_attn_pass pass,
    const struct kg_dev_attn *at, const float *G, float *out)
{
	const kg_dev_attn &A = *at;

	switch (pass) {
	case KG_BE_ATTN_SCORES:
		return launch(be, "attn_scores", A.n_dst, k_attn_scores, A);
	case KG_BE_ATTN_MSGS:
		return launch(be, "attn_msgs", A.n_dst * A.d, k_attn_msgs, A,
		    out);
	case KG_BE_ATTN_BACK_SCORES:
		return launch(be, "attn_back_scores", A.n_dst,
		    k_attn_back_scores, A, G);
	case KG_BE_ATTN_BACK_DZ:
		return launch(be, "attn_back_dz", A.n_src * A.d, k_attn_back_dz,
		    A, G, out);
	case KG_BE_ATTN_BACK_REL:
		return launch(be, "attn_back_rel", A.n_types * A.d,
		    k_attn_back_rel, A, G, out);
	}
	return 0;
}

/* The elements first, then the count they read (same stream). */
int
cu_adam_flat(struct kg_backend *be, size_t n, const struct kg_adam *a,
    const float *grad, float *w, float *state)
{
	if (launch(be, "adam_flat", n, k_adam_flat, n, a->lr, a->beta1,
	    a->beta2, a->eps, grad, w, state) < 0)
		return -1;
	return launch(be, "adam_count", 1, k_adam_count, n, state);
}

} /* namespace */

namespace kg_cuda {

const struct kg_backend_gnn_ops cuda_gnn_ops = {
	cu_seg_sum, cu_edge_coef, cu_edge_dot, cu_fill_rows, cu_mul, cu_relu,
	cu_relu_backward, cu_adam_flat, cu_seg_sum_split, cu_attn,
};

} /* namespace kg_cuda */
