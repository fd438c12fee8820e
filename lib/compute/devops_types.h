/*
 * devops_types: the descriptors that backend.h's GNN operations take and
 * the device functions of devops_gnn.h read: a segmented sum of rows
 * (struct kg_dev_seg) and one graph's relation-aware attention (struct
 * kg_dev_attn); and the sets one launch covers: of a regulariser
 * (struct kg_dev_regsets, backend.h's kg_be_regularise_sets) and of rows
 * moved by index (struct kg_dev_rowsets, kg_be_gather_sets and
 * kg_be_scatter_add_sets).  Plain C structs of device pointers and
 * sizes, passed by value to the CUDA kernels; nothing here runs.
 */
#ifndef KG_DEVOPS_TYPES_H
#define KG_DEVOPS_TYPES_H

#include <stddef.h>
#include <stdint.h>

/*
 * A segmented weighted sum of rows (backend.h's kg_be_seg_sum): segment
 * i is the items q in off[i] .. off[i + 1); item q names e = perm[q]
 * (perm NULL: q), which reads row idx[e] (idx NULL: e) of each of nb
 * blocks of x, block c at x + c * xs floats, rows of d floats, with the
 * weight w[c * ws + e] (w NULL: 1).
 */
struct kg_dev_seg {
	const int64_t *off, *perm, *idx;
	const float *w;
	size_t nb, ws, xs;
};

/*
 * The relation-aware attention layer (lib/gnn/layers_attn.c) over one
 * graph: destination i's messages e in off[i] .. off[i + 1) come from
 * source src[e] with relation type[e]; dst[e] is e's destination; the
 * messages by source (soff, by_src, n_src + 1 offsets) and by type (toff,
 * by_type).  z = x W [n_src, d], rel [n_types, d], the attention vectors
 * as, ad, ar [d]; u and al per message: the score before the LeakyReLU
 * and the softmax weight; da per message and nsum per destination: the
 * backward's dL/du and their sums.  Every pointer is device memory.
 */
struct kg_dev_attn {
	const int64_t *off, *src, *type, *dst, *soff, *by_src, *toff, *by_type;
	size_t n_dst, n_src, n_types, d;
	const float *z, *rel, *as, *ad, *ar;
	float *u, *al, *da, *nsum;
};

/* The most row sets one kg_be_regularise_sets call takes. */
#define KG_DEV_REGSETS 4

/*
 * Sets k < nsets of n[k] floats x[k] with gradients g[k] (device
 * memory), regularised as one array: element e of the whole is element
 * e - (n[0] + ... + n[k - 1]) of the set k it falls in.
 */
struct kg_dev_regsets {
	const float *x[KG_DEV_REGSETS];
	float *g[KG_DEV_REGSETS];
	size_t n[KG_DEV_REGSETS];
	unsigned nsets;
};

/* The most row sets one kg_be_gather_sets or kg_be_scatter_add_sets call
 * takes. */
#define KG_DEV_ROWSETS 3

/*
 * Sets k < nsets of n[k] rows of d[k] floats moved by index (device
 * memory): gather, dst[k][i] = src[k][idx[k][i]]; scatter-add,
 * dst[k][idx[k][i]] += src[k][i].  Element e of the whole is element
 * e - (n[0] d[0] + ... + n[k - 1] d[k - 1]) of the set k it falls in.
 */
struct kg_dev_rowsets {
	const float *src[KG_DEV_ROWSETS];
	const int64_t *idx[KG_DEV_ROWSETS];
	float *dst[KG_DEV_ROWSETS];
	size_t n[KG_DEV_ROWSETS], d[KG_DEV_ROWSETS];
	unsigned nsets;
};

#endif
