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

/* The message orders of g (by type, by source; block R-GCN's pairs)
 * into s, which kg_gnn_state_reserve has sized for g. */
void kg_gnn_index_build(const struct kg_gnn *m, const struct kg_gnn_graph *g,
    struct kg_gnn_state *s);
/* Scratch of per_thread floats for each of omp_get_max_threads()
 * threads; thread t's is s->tscr + t * per_thread. */
void kg_gnn_tscr_reserve(struct kg_gnn_state *s, size_t per_thread);

/* Attribute layer (layer 0): out [n, d0]; frow and lrow as in gnn.h. */
void kg_gnn_attr_forward(const struct kg_gnn *m,
    const struct kg_features *f, const int32_t *frow, const int32_t *lrow,
    uint64_t n, float *out);
void kg_gnn_attr_backward(const struct kg_gnn *m,
    const struct kg_features *f, const int32_t *frow, const int32_t *lrow,
    uint64_t n, const float *dout, float *grad);

/* R-GCN layer l (basis or block-diagonal weights). */
void kg_gnn_rgcn_forward(const struct kg_gnn *m, uint32_t l,
    const struct kg_gnn_graph *g, const float *x, float *out,
    struct kg_gnn_state *s);
void kg_gnn_rgcn_backward(const struct kg_gnn *m, uint32_t l,
    const struct kg_gnn_graph *g, const float *x, const float *G, float *dx,
    struct kg_gnn_state *s, float *grad);

/* Attention layer l. */
void kg_gnn_attn_forward(const struct kg_gnn *m, uint32_t l,
    const struct kg_gnn_graph *g, const float *x, float *out,
    struct kg_gnn_state *s);
void kg_gnn_attn_backward(const struct kg_gnn *m, uint32_t l,
    const struct kg_gnn_graph *g, const float *x, const float *G, float *dx,
    struct kg_gnn_state *s, float *grad);

#endif
