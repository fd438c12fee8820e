/* The backend seam's GNN message-passing operations (backend.h's last
 * section): dispatch, with empty work returning at once. */
#include "compute/backend_impl.h"

int
kg_be_seg_sum(struct kg_backend *be, size_t n_seg, size_t d,
    const struct kg_dev_seg *sg, const float *x, int beta, float *out,
    size_t ldo)
{
	return n_seg == 0 || d == 0 ? 0 : be->gnn->seg_sum(be, n_seg, d, sg,
	    x, beta, out, ldo);
}

int
kg_be_edge_coef(struct kg_backend *be, size_t n, size_t nb,
    const float *norm, const int64_t *type, const float *a, float *w)
{
	return n == 0 || nb == 0 ? 0 : be->gnn->edge_coef(be, n, nb, norm,
	    type, a, w);
}

int
kg_be_edge_dot(struct kg_backend *be, size_t n, size_t d, const float *a,
    const int64_t *ia, const float *b, const int64_t *ib, float *out)
{
	return n == 0 ? 0 : be->gnn->edge_dot(be, n, d, a, ia, b, ib, out);
}

int
kg_be_fill_rows(struct kg_backend *be, size_t n, size_t d, const float *row,
    float *out)
{
	return n == 0 || d == 0 ? 0 : be->gnn->fill_rows(be, n, d, row, out);
}

int
kg_be_mul(struct kg_backend *be, size_t n, const float *a, const float *x,
    float *y)
{
	return n == 0 ? 0 : be->gnn->mul(be, n, a, x, y);
}

int
kg_be_relu(struct kg_backend *be, size_t n, const float *x, float *y)
{
	return n == 0 ? 0 : be->gnn->relu(be, n, x, y);
}

int
kg_be_relu_backward(struct kg_backend *be, size_t n, const float *pre,
    float *g)
{
	return n == 0 ? 0 : be->gnn->relu_backward(be, n, pre, g);
}

int
kg_be_adam_flat(struct kg_backend *be, size_t n, const struct kg_adam *a,
    const float *grad, float *w, float *state)
{
	return n == 0 ? 0 : be->gnn->adam_flat(be, n, a, grad, w, state);
}

int
kg_be_seg_sum_split(struct kg_backend *be, size_t n_seg, size_t d,
    size_t parts, const struct kg_dev_seg *sg, const float *x, int beta,
    float *out, size_t ldo, float *tmp)
{
	return n_seg == 0 || d == 0 ? 0 : be->gnn->seg_sum_split(be, n_seg, d,
	    parts < 1 ? 1 : parts, sg, x, beta, out, ldo, tmp);
}

int
kg_be_attn(struct kg_backend *be, enum kg_be_attn_pass pass,
    const struct kg_dev_attn *at, const float *G, float *out)
{
	return at->d == 0 ? 0 : be->gnn->attn(be, pass, at, G, out);
}
