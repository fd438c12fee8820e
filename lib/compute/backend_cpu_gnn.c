/*
 * The CPU backend's GNN message-passing operations (backend.h's last
 * section) on the calling thread.  Each output row is summed as the
 * thread functions of devops_gnn.h sum each element (the items of a segment
 * in order, then the blocks), and as lib/gnn's CPU layers add their
 * messages, so lib/gnn/layers_device.c on this backend follows lib/gnn's
 * arithmetic.
 */
#include "compute/backend_impl.h"

#include <string.h>

#include "compute/devops_gnn.h"

/* row[k] += w x[k] for k < d: one product and one sum an element, as
 * the scalar loop, in vectors (row and x do not overlap). */
static inline void
add_scaled(float *restrict row, const float *restrict x, float w, size_t d)
{
	size_t k;

#pragma omp simd
	for (k = 0; k < d; k++)
		row[k] += w * x[k];
}

static int
cpu_seg_sum(struct kg_backend *be, size_t n_seg, size_t d,
    const struct kg_dev_seg *sg, const float *x, int beta, float *out,
    size_t ldo)
{
	size_t i, c;
	int64_t q;

	(void)be;
	for (i = 0; i < n_seg; i++) {
		float *row = out + i * ldo;

		if (!beta)
			memset(row, 0, d * sizeof(*row));
		for (q = sg->off[i]; q < sg->off[i + 1]; q++) {
			size_t e = sg->perm != NULL ? (size_t)sg->perm[q] :
			    (size_t)q;
			size_t r = sg->idx != NULL ? (size_t)sg->idx[e] : e;

			for (c = 0; c < sg->nb; c++) {
				const float *xr = x + c * sg->xs + r * d;
				float w = sg->w != NULL ? sg->w[c * sg->ws + e] :
				    1.0f;

				add_scaled(row, xr, w, d);
			}
		}
	}
	return 0;
}

static int
cpu_edge_coef(struct kg_backend *be, size_t n, size_t nb, const float *norm,
    const int64_t *type, const float *a, float *w)
{
	size_t c, e;

	(void)be;
	for (c = 0; c < nb; c++)
		for (e = 0; e < n; e++)
			w[c * n + e] = norm[e] * a[(size_t)type[e] * nb + c];
	return 0;
}

static int
cpu_edge_dot(struct kg_backend *be, size_t n, size_t d, const float *a,
    const int64_t *ia, const float *b, const int64_t *ib, float *out)
{
	size_t e;

	(void)be;
	for (e = 0; e < n; e++)
		out[e] = kg_dev_dot8(d, a + (ia != NULL ? (size_t)ia[e] : e) * d,
		    b + (ib != NULL ? (size_t)ib[e] : e) * d);
	return 0;
}

static int
cpu_fill_rows(struct kg_backend *be, size_t n, size_t d, const float *row,
    float *out)
{
	size_t i;

	(void)be;
	for (i = 0; i < n; i++)
		memcpy(out + i * d, row, d * sizeof(*out));
	return 0;
}

static int
cpu_mul(struct kg_backend *be, size_t n, const float *a, const float *x,
    float *y)
{
	size_t i;

	(void)be;
	for (i = 0; i < n; i++)
		y[i] = a[i] * x[i];
	return 0;
}

static int
cpu_relu(struct kg_backend *be, size_t n, const float *x, float *y)
{
	size_t i;

	(void)be;
	for (i = 0; i < n; i++)
		y[i] = x[i] < 0.0f ? 0.0f : x[i];
	return 0;
}

static int
cpu_relu_backward(struct kg_backend *be, size_t n, const float *pre,
    float *g)
{
	size_t i;

	(void)be;
	for (i = 0; i < n; i++)
		if (pre[i] < 0.0f)
			g[i] = 0.0f;
	return 0;
}

static int
cpu_adam_flat(struct kg_backend *be, size_t n, const struct kg_adam *a,
    const float *grad, float *w, float *state)
{
	(void)be;
	kg_adam_row(w, state, grad, n, a);
	return 0;
}

/* lib/gnn's order: one running sum per element. */
static int
cpu_seg_sum_split(struct kg_backend *be, size_t n_seg, size_t d,
    size_t parts, const struct kg_dev_seg *sg, const float *x, int beta,
    float *out, size_t ldo, float *tmp)
{
	(void)parts;
	(void)tmp;
	return cpu_seg_sum(be, n_seg, d, sg, x, beta, out, ldo);
}

/* The attention passes: devops_gnn.h's thread functions, one thread at a
 * time (each writes outputs of its own, so their order does not
 * matter): lib/gnn/layers_attn.c's arithmetic. */
static int
cpu_attn(struct kg_backend *be, enum kg_be_attn_pass pass,
    const struct kg_dev_attn *at, const float *G, float *out)
{
	size_t i;

	(void)be;
	switch (pass) {
	case KG_BE_ATTN_SCORES:
		for (i = 0; i < at->n_dst; i++)
			kg_dev_t_attn_scores((unsigned)i, 0, 1, *at);
		break;
	case KG_BE_ATTN_MSGS:
		for (i = 0; i < at->n_dst * at->d; i++)
			kg_dev_t_attn_msgs((unsigned)i, 0, 1, *at, out);
		break;
	case KG_BE_ATTN_BACK_SCORES:
		for (i = 0; i < at->n_dst; i++)
			kg_dev_t_attn_back_scores((unsigned)i, 0, 1, *at, G);
		break;
	case KG_BE_ATTN_BACK_DZ:
		for (i = 0; i < at->n_src * at->d; i++)
			kg_dev_t_attn_back_dz((unsigned)i, 0, 1, *at, G, out);
		break;
	case KG_BE_ATTN_BACK_REL:
		for (i = 0; i < at->n_types * at->d; i++)
			kg_dev_t_attn_back_rel((unsigned)i, 0, 1, *at, G, out);
		break;
	}
	return 0;
}

const struct kg_backend_gnn_ops kg_backend_cpu_gnn_ops = {
	.seg_sum = cpu_seg_sum,
	.edge_coef = cpu_edge_coef,
	.edge_dot = cpu_edge_dot,
	.fill_rows = cpu_fill_rows,
	.mul = cpu_mul,
	.relu = cpu_relu,
	.relu_backward = cpu_relu_backward,
	.adam_flat = cpu_adam_flat,
	.seg_sum_split = cpu_seg_sum_split,
	.attn = cpu_attn,
};
