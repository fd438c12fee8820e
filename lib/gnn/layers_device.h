/*
 * gnn/layers_device: the R-GCN layer of gnn.h (basis or block-diagonal
 * weights, forward and backward) as compute-backend calls
 * (compute/backend.h), so that it runs on a GPU; on the "cpu" backend it
 * follows lib/gnn/layers_rgcn.c's arithmetic (the same products, the
 * messages summed in the same orders).
 *
 * The graph of a layer (a whole graph, or a block: the destinations are
 * the first n_dst of n_src >= n_dst source rows, as layers.h) is built
 * and indexed on the host (gnn/graph.h, kg_gnn_index_build) and uploaded
 * as a struct kg_gnn_dgraph: its messages and the orders by type, by
 * source and, for block-diagonal weights, by (destination, type) pair,
 * all as int64_t arrays on the device.  The parameters are gnn.h's flat
 * array, uploaded whole (dw), and the gradients go to a device array of
 * the same layout (dgrad).
 *
 * Memory.  The structs below own device memory of the backend they were
 * used with; they grow when a graph needs more (kg_be_alloc), so a caller
 * that reserves for its largest graph first allocates nothing per step.
 * Release them with the same backend.  Every function returns 0, or -1
 * after kg_error() (a failed allocation or device call).
 */
#ifndef KG_GNN_LAYERS_DEVICE_H
#define KG_GNN_LAYERS_DEVICE_H

#include "compute/backend.h"
#include "gnn/gnn.h"

/* Make *p (device memory of be, or NULL) hold need elements of size
 * bytes: unless *cap >= need already, a new allocation with a quarter
 * of headroom replaces it (contents lost) and *cap gets its size. */
int kg_gnn_dgrow(struct kg_backend *be, void **p, uint64_t *cap,
    uint64_t need, size_t size);

struct kg_gnn_dgraph {
	uint64_t n_dst, n_src, n_msgs, n_pairs;
	uint32_t n_types;
	/* Device arrays. */
	int64_t *off;			/* [n_dst + 1] CSR by destination */
	int64_t *src, *type, *dst;	/* [n_msgs] */
	float *norm;			/* [n_msgs] */
	int64_t *by_type, *toff;	/* messages by type, [n_types + 1] */
	int64_t *by_src, *soff;		/* messages by source, [n_src + 1] */
	int64_t *all;			/* { 0, n_dst, 0, n_msgs }: one
					 * segment of every destination,
					 * at all + 2 of every message */
	/* Block-diagonal: pairs by type (poff into by_type), each pair's
	 * destination, each destination's pairs, each message's pair. */
	int64_t *poff, *pdst, *dpair, *dpoff, *msg_pair;
	/* Host: each type's first pair (block-diagonal), staging. */
	uint64_t *tpoff;
	int64_t *stage;
	uint64_t cap_m, cap_n, cap_t, cap_stage;
};

#define KG_GNN_DGRAPH_INIT { 0 }

/*
 * Upload layer graph g (g->n_nodes destinations, messages from n_src
 * rows) with the orders s holds for it (kg_gnn_index_build(m, g, n_src,
 * s) just before; block R-GCN's pairs too).  Synchronous.
 */
int kg_gnn_dgraph_upload(struct kg_backend *be, struct kg_gnn_dgraph *dg,
    const struct kg_gnn *m, const struct kg_gnn_graph *g, uint64_t n_src,
    const struct kg_gnn_state *s);
void kg_gnn_dgraph_release(struct kg_backend *be, struct kg_gnn_dgraph *dg);

/* Device scratch of the layer passes (grown as needed). */
struct kg_gnn_dwork {
	float *a, *b, *c, *d;		/* products, their gradients */
	float *coef, *dots;		/* per basis and message */
	float *part;			/* kg_be_seg_sum_split's parts */
	size_t cap_a, cap_b, cap_c, cap_d, cap_coef, cap_dots, cap_part;
};

#define KG_GNN_DWORK_INIT { 0 }

/* Size wk for layer l of m over dg, so that the passes allocate
 * nothing; they call it themselves. */
int kg_gnn_dwork_reserve(struct kg_backend *be, struct kg_gnn_dwork *wk,
    const struct kg_gnn *m, uint32_t l, const struct kg_gnn_dgraph *dg);
void kg_gnn_dwork_release(struct kg_backend *be, struct kg_gnn_dwork *wk);

/*
 * R-GCN layer l of m (parameters dw on the device, m->w unused) over
 * dg: forward out [n_dst, dout] from x [n_src, din]; backward from G =
 * dL/dout [n_dst, dout], dx [n_src, din] overwritten and the parameter
 * gradients ADDED to dgrad (m->n_params floats).  As layers.h's
 * kg_gnn_rgcn_forward and kg_gnn_rgcn_backward, without activation or
 * dropout: basis R-GCN aggregates its inputs first on blocks (n_src >
 * n_dst), multiplies its sources first otherwise; block-diagonal sums
 * each (destination, type) pair's inputs and multiplies them type by
 * type with one strided-batched GEMM over the blocks.
 */
int kg_gnn_drgcn_forward(struct kg_backend *be, const struct kg_gnn *m,
    uint32_t l, const float *dw, const struct kg_gnn_dgraph *dg,
    const float *x, float *out, struct kg_gnn_dwork *wk);
int kg_gnn_drgcn_backward(struct kg_backend *be, const struct kg_gnn *m,
    uint32_t l, const float *dw, const struct kg_gnn_dgraph *dg,
    const float *x, const float *G, float *dx, struct kg_gnn_dwork *wk,
    float *dgrad);

/*
 * The relation-aware attention layer l (gnn.h's RelGNN; layers_attn.c)
 * on the device, as kg_gnn_attn_forward and kg_gnn_attn_backward: z = x
 * W by GEMM, then each destination's scores, softmax and weighted sum,
 * and the backward's passes (backend.h's kg_be_attn), the attention
 * vectors' gradients as single-segment sums in parts.  u and al (device,
 * dg->n_msgs floats each) get the forward's scores and weights, which
 * the backward of the same layer and graph reads.  Otherwise as the
 * R-GCN functions above.
 */
int kg_gnn_dattn_forward(struct kg_backend *be, const struct kg_gnn *m,
    uint32_t l, const float *dw, const struct kg_gnn_dgraph *dg,
    const float *x, float *out, struct kg_gnn_dwork *wk, float *u,
    float *al);
int kg_gnn_dattn_backward(struct kg_backend *be, const struct kg_gnn *m,
    uint32_t l, const float *dw, const struct kg_gnn_dgraph *dg,
    const float *x, const float *G, float *dx, struct kg_gnn_dwork *wk,
    float *u, float *al, float *dgrad);

/* Shared by both layer kinds: the self-connection's forward (out =
 * bias + x W0 over n rows) and backward (layers.h's kg_gnn_self_backward
 * over dg's destinations, the bias's rows summed in parts); the parts
 * kg_be_seg_sum_split takes for n_seg segments of items items in all. */
int kg_gnn_dself_forward(struct kg_backend *be, const struct kg_gnn *m,
    uint32_t l, const float *dw, uint64_t n, const float *x, float *out);
int kg_gnn_dself_backward(struct kg_backend *be, const struct kg_gnn *m,
    uint32_t l, const float *dw, const struct kg_gnn_dgraph *dg,
    const float *x, const float *G, float *dx, struct kg_gnn_dwork *wk,
    float *dgrad);
size_t kg_gnn_split_parts(uint64_t items, uint64_t n_seg);

#endif
