/*
 * gnn/forward_device: the R-GCN or RelGNN encoder's passes over all layers
 * (gnn.h's kg_gnn_forward_blocks and kg_gnn_backward) as backend calls,
 * for an encoder that reads learned embeddings only: the learned rows
 * gathered, then each graph layer (layers_device.h) with dropout and
 * ReLU between layers.
 *
 * The graph (or the blocks: n_dst as kg_gnn_forward_blocks) and its
 * message orders are built on the host, in a struct kg_gnn_state the
 * caller keeps, and uploaded by the forward pass, layer by layer on
 * blocks, once for a whole graph.  Dropout masks are drawn on the host
 * from the caller's stream in kg_gnn_forward's order and uploaded, so
 * both passes drop the same elements.
 *
 * Memory: a struct kg_gnn_dpass owns device memory of the backend it
 * was used with, grown when a graph needs more; release it with that
 * backend.  Functions return 0, or -1 after kg_error().
 */
#ifndef KG_GNN_FORWARD_DEVICE_H
#define KG_GNN_FORWARD_DEVICE_H

#include "core/rng.h"
#include "gnn/layers_device.h"

struct kg_gnn_dpass {
	uint32_t L;
	uint64_t rows[KG_GNN_MAX_LAYERS + 1];
	int dropped[KG_GNN_MAX_LAYERS];		/* masks drawn this pass */
	/* Device: h[l] the input of layer l, hd[l] its dropped-out copy
	 * (h[l] itself without dropout), pre[l] layer l's output before
	 * ReLU (the encoder's output: pre[L - 1]), mask[l], the backward's
	 * two gradients; gin: after the backward pass, the gradient of the
	 * input rows h[0] (dh or dh2, or the caller's dout). */
	float *h[KG_GNN_MAX_LAYERS + 1], *hdrop[KG_GNN_MAX_LAYERS];
	float *mask[KG_GNN_MAX_LAYERS], *pre[KG_GNN_MAX_LAYERS];
	float *dh, *dh2;
	float *in[KG_GNN_MAX_LAYERS];	/* hdrop[l] or h[l] (not owned) */
	/* Attention layers: each layer's scores and weights per message. */
	float *u[KG_GNN_MAX_LAYERS], *al[KG_GNN_MAX_LAYERS];
	uint64_t cap_u[KG_GNN_MAX_LAYERS], cap_al[KG_GNN_MAX_LAYERS];
	float *gin;			/* not owned */
	uint64_t cap[KG_GNN_MAX_LAYERS + 1], cap_dh;
	/* One graph per layer on blocks; layer 0's for all on a graph. */
	struct kg_gnn_dgraph dg[KG_GNN_MAX_LAYERS];
	int blocks;
	struct kg_gnn_dwork wk;
	/* Host staging: masks. */
	float *hmask;
	uint64_t cap_hmask;
};

#define KG_GNN_DPASS_INIT { 0 }

/* Whether m can run on the device passes: 0, or -1 after kg_error()
 * naming what they lack (attribute features). */
int kg_gnn_device_check(const struct kg_gnn *m);

/*
 * Forward over g (on blocks when n_dst is not NULL): h0 (host memory,
 * g->n_nodes x d0) holds node i's input row (its learned row); rng !=
 * NULL turns dropout on.  dw: m's parameters on the device (m->w is not
 * read; the learned table's part of dw neither).  s: host state for the
 * message orders.  The output, rows[L] x dL, is kg_gnn_dpass_output(p).
 */
int kg_gnn_dforward(struct kg_backend *be, const struct kg_gnn *m,
    const float *dw, const struct kg_gnn_graph *g, const uint64_t *n_dst,
    const float *h0, struct kg_rng *rng, struct kg_gnn_state *s,
    struct kg_gnn_dpass *p);

/* The same with node i's input row dtab[didx[i]] (device memory: the
 * learned table and g->n_nodes row numbers), gathered on the device. */
int kg_gnn_dforward_rows(struct kg_backend *be, const struct kg_gnn *m,
    const float *dw, const struct kg_gnn_graph *g, const uint64_t *n_dst,
    const float *dtab, const int64_t *didx, struct kg_rng *rng,
    struct kg_gnn_state *s, struct kg_gnn_dpass *p);

/* The encoder's output after kg_gnn_dforward (device memory of p). */
float *kg_gnn_dpass_output(const struct kg_gnn_dpass *p);

/* Backward after kg_gnn_dforward: dout = dL/d(output) on the device
 * (rows[L] x dL, overwritten); the layers' parameter gradients are ADDED
 * to dgrad (device, m->n_params floats; the learned table's part is not
 * touched), and p->gin gets the input rows' gradient (rows[0] x d0, in
 * device memory of p or dout). */
int kg_gnn_dbackward(struct kg_backend *be, const struct kg_gnn *m,
    const float *dw, struct kg_gnn_dpass *p, float *dout, float *dgrad);

void kg_gnn_dpass_release(struct kg_backend *be, struct kg_gnn_dpass *p);

#endif
