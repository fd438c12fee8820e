/*
 * gnn/layers: the passes of each layer kind and the state helpers they
 * share (internal to lib/gnn; gnn.h's kg_gnn_forward and kg_gnn_backward
 * drive them).
 *
 * Layer l reads x = the dropped-out input [n, dims[l]] and writes out
 * [n, dims[l + 1]]; backward passes take G = dL/d(out), overwrite dx =
 * dL/dx and ADD the parameter gradients to grad.  Every pass needs the
 * message orders of its graph in s (kg_gnn_index_build) and writes each
 * output row or gradient element from one thread, in an order fixed by
 * the graph (see gnn.h, Threads).
 */
#ifndef KG_GNN_LAYERS_H
#define KG_GNN_LAYERS_H

#include "gnn/gnn.h"

/* The largest layer width. */
uint32_t kg_gnn_max_dim(const struct kg_gnn *m);

/* The message orders of g (by type; by source over n_src sources;
 * block R-GCN's pairs) into s, which kg_gnn_state_reserve has sized. */
void kg_gnn_index_build(const struct kg_gnn *m, const struct kg_gnn_graph *g,
    uint64_t n_src, struct kg_gnn_state *s);
/* Scratch of per_thread floats for each of omp_get_max_threads()
 * threads; thread t's is s->tscr + t * per_thread. */
void kg_gnn_tscr_reserve(struct kg_gnn_state *s, size_t per_thread);

/* Attribute layer (layer 0): out [n, d0]; frow and lrow as in gnn.h. */
void kg_gnn_attr_forward(const struct kg_gnn *m,
    const struct kg_features *f, const int32_t *frow, const int32_t *lrow,
    uint64_t n, float *out);
void kg_gnn_attr_backward(const struct kg_gnn *m,
    const struct kg_features *f, const int32_t *frow, const int32_t *lrow,
    uint64_t n, const float *dout, float *grad, struct kg_gnn_state *s);
/* Free the attribute layer's buffers in s. */
void kg_gnn_attr_release(struct kg_gnn_state *s);

/*
 * Graph layer l over the destinations of g (g->n_nodes of them) whose
 * messages come from the first n_src >= g->n_nodes rows of x; the
 * destinations are the first rows, so destination i's own input is row
 * i of x.  Forward: out [g->n_nodes, dout].  Backward: G [g->n_nodes,
 * dout], dx [n_src, din] overwritten.  n_src == g->n_nodes is the plain
 * whole-graph layer.
 */
void kg_gnn_rgcn_forward(const struct kg_gnn *m, uint32_t l,
    const struct kg_gnn_graph *g, uint64_t n_src, const float *x,
    float *out, struct kg_gnn_state *s);
void kg_gnn_rgcn_backward(const struct kg_gnn *m, uint32_t l,
    const struct kg_gnn_graph *g, uint64_t n_src, const float *x,
    const float *G, float *dx, struct kg_gnn_state *s, float *grad);
void kg_gnn_attn_forward(const struct kg_gnn *m, uint32_t l,
    const struct kg_gnn_graph *g, uint64_t n_src, const float *x,
    float *out, struct kg_gnn_state *s);
void kg_gnn_attn_backward(const struct kg_gnn *m, uint32_t l,
    const struct kg_gnn_graph *g, uint64_t n_src, const float *x,
    const float *G, float *dx, struct kg_gnn_state *s, float *grad);

/*
 * The pieces of the forwards, shared with the inference pass (embed.c),
 * so both compute the same bits:
 *   self_forward   out[i] = bias + xs[i] W0 for n rows;
 *   src_products   the products of the n_src source rows of x that the
 *                  messages read (R-GCN basis: x V_b, basis b at t1 + b
 *                  n_src dout; attention: z = x W), none for block R-GCN;
 *   basis_msgs     adds to out[i] the messages of g's destination i, from
 *                  t1 of n_src rows;
 *   block_msgs     the same for block R-GCN, from x (s holds g's index);
 *   attn_msgs      the same for attention: destination i is source row
 *                  dst0 + i of z; u (may be NULL) and al get each
 *                  message's score and weight, indexed like g's messages.
 * self_backward is the gradient of self_forward over n_dst rows, with dx
 * [n_src, din] overwritten (zero past n_dst).
 */
void kg_gnn_self_forward(const struct kg_gnn *m, uint32_t l, uint64_t n,
    const float *xs, float *out);
void kg_gnn_src_products(const struct kg_gnn *m, uint32_t l, uint64_t n_src,
    const float *x, float *t1);
void kg_gnn_basis_msgs(const struct kg_gnn *m, uint32_t l,
    const struct kg_gnn_graph *g, uint64_t n_src, const float *t1,
    float *out);
void kg_gnn_block_msgs(const struct kg_gnn *m, uint32_t l,
    const struct kg_gnn_graph *g, const float *x, float *out,
    struct kg_gnn_state *s);
void kg_gnn_attn_msgs(const struct kg_gnn *m, uint32_t l,
    const struct kg_gnn_graph *g, uint64_t dst0, const float *z, float *u,
    float *al, float *out);
void kg_gnn_self_backward(const struct kg_gnn *m, uint32_t l, uint64_t n_dst,
    uint64_t n_src, const float *x, const float *G, float *dx, float *grad);

#endif
