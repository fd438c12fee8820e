/*
 * gnn: graph encoders over node-attribute embeddings, with hand-written
 * backward passes (the Ray paper's models: an attribute layer, then R-GCN
 * or relation-aware attention layers, then a shallow decoder).
 *
 * Graph: gnn/graph.h (messages by destination, 2 * n_relations types,
 * R-GCN normalisers).  Features: attrs/features.h (the feature directory
 * kg-encode-attrs writes, read into struct kg_features).
 *
 * Attribute layer (layer 0).  Each attribute has its own matrix: index
 * kinds (one-hot, multi-hot) [slots, d0] whose rows are looked up, text
 * kinds [dim, d0] that multiply the entity's vector.  An entity's input
 * embedding is the mean of the embeddings of its attribute values (one per
 * index of every attribute it has, has_OUT = 1, and one per text attribute
 * it has): a 1-hop GCN-like layer without self-loop.  An entity with no
 * attribute value, or every entity when the model uses learned embeddings
 * only, takes its row of a learned table [n_learned, d0].
 *
 * R-GCN layer (Schlichtkrull et al.):
 *   out_i = W0 h_i + b + sum_r sum_{j in N_r(i)} (1 / c_{i,r}) W_r h_j
 * with W_r = sum_b A[r, b] V_b (basis decomposition, B bases) or W_r =
 * diag(Q_{r,1}, .., Q_{r,B}) (block-diagonal, B blocks of (din / B) x
 * (dout / B)).  Row vectors: h W, weights stored [din, dout].
 *
 * Attention layer (in the spirit of RelGNN, Qin et al.): z = h W, s = h Ws,
 *   u_ij = a_dst . z_i + a_src . z_j + a_rel . e_r,   l_ij = LeakyReLU(u_ij)
 *   alpha_ij = softmax over the messages into i of l_ij,
 *   out_i = s_i + b + sum_j alpha_ij (z_j + e_r)
 * with per-layer relation embeddings e [2 n_relations, dout] trained with
 * the rest (the message carries the relation, as in CompGCN's composition).
 * LeakyReLU slope 0.2.
 *
 * Between layers ReLU, none after the last; dropout (inverted, rate p) on
 * every graph layer's input while training.
 *
 * Every parameter lives in one flat float array (kg_gnn.w), so one Adam
 * update, one all-reduce and one finite-difference loop cover them all
 * (and a model dir stores it as gnn_weights.npy); training alone keeps
 * the learned table's rows apart (kg_gnn.lw) and writes them into the
 * array at the end.  Its order, T = 2 *
 * n_relations message types, matrices row-major [rows, cols]:
 *   learned table [n_learned, d0];
 *   per attribute, in feature order: [width, d0] (absent when learned
 *   only);
 *   per graph layer l (din = d_l, dout = d_{l+1}): W0 [din, dout],
 *   bias [dout], then
 *     R-GCN basis:  V [B, din, dout], A [T, B];
 *     R-GCN block:  Q [T, B, din / B, dout / B];
 *     attention:    W [din, dout], a_dst, a_src, a_rel [dout each],
 *                   e [T, dout].
 * (W0 is Ws for attention.)  Nothing here reports errors except
 * kg_gnn_init, which returns -1 after kg_error().
 *
 * Files: init.c (parameters), attr_layer.c, layers_rgcn.c, layers_attn.c
 * (each layer's passes), state.c (buffers and message orders), forward.c (the
 * passes over all layers); kernels.h and layers.h are internal.
 */
#ifndef KG_GNN_H
#define KG_GNN_H

#include <stddef.h>
#include <stdint.h>

#include "attrs/features.h"
#include "core/util.h"
#include "gnn/graph.h"

#define KG_GNN_MAX_LAYERS 3

enum kg_gnn_encoder { KG_GNN_RGCN, KG_GNN_RELGNN };
enum kg_gnn_decomp { KG_GNN_BASIS, KG_GNN_BLOCK };

struct kg_gnn_config {
	enum kg_gnn_encoder encoder;
	enum kg_gnn_decomp decomp;	/* R-GCN */
	uint32_t n_layers;		/* graph layers, 0 .. 3 */
	uint32_t dims[KG_GNN_MAX_LAYERS + 1];	/* d0 (input), d1 .. dL */
	uint32_t n_bases;		/* bases or blocks */
	uint32_t n_relations;		/* of the dataset */
	uint64_t n_learned;		/* rows of the learned table */
	int learned_only;		/* ignore attributes */
	float dropout;
};

/* Offsets of every block in the flat parameter array. */
struct kg_gnn_layer_off {
	size_t w0, bias;		/* both encoders: self weight, bias */
	size_t v, a;			/* R-GCN basis: V [B, din, dout], A [T, B] */
	size_t q;			/* R-GCN block: Q [T, B, din/B, dout/B] */
	size_t w, a_dst, a_src, a_rel, rel;	/* attention */
};

struct kg_gnn {
	struct kg_gnn_config c;
	size_t n_attrs;
	uint64_t *attr_width;	/* [n_attrs] */
	int *attr_text;
	size_t learned;		/* offset of the learned table */
	size_t *attr_off;	/* [n_attrs] */
	struct kg_gnn_layer_off lay[KG_GNN_MAX_LAYERS];
	size_t n_params;
	float *w;		/* [n_params] */
	/* The learned rows [n_learned, d0] the forward pass reads: NULL
	 * for w + learned; training keeps them apart, in a store
	 * (gnntrain/train_state.h), and w's block is written only when an
	 * output is (kg_gnn_learned_rows). */
	float *lw;
};

#define KG_GNN_INIT { .c = { 0 } }

/*
 * Lay out the parameters of an encoder for features f (NULL or
 * learned_only: learned embeddings only) and initialise them from seed
 * (Glorot-uniform matrices, zero biases; learned row i as
 * kg_gnn_learned_row_init(.., seed, i), the rest independent of
 * n_learned).
 * Checks the config (block decomposition needs dims divisible by the
 * blocks).  0, or -1 after kg_error().
 */
int kg_gnn_init(struct kg_gnn *m, const struct kg_gnn_config *c,
    const struct kg_features *f, uint64_t seed);
/* The same with learned row i drawn for entity gid[i] (NULL: i), and only
 * where need[i] (NULL: every row): the others stay zero and untouched
 * (calloc's pages), so a table of millions of nodes that read their
 * attributes costs no memory until written. */
int kg_gnn_init_rows(struct kg_gnn *m, const struct kg_gnn_config *c,
    const struct kg_features *f, uint64_t seed, const int32_t *gid,
    const uint8_t *need);
void kg_gnn_release(struct kg_gnn *m);
/* The learned rows the forward pass reads: m->lw, or w's block. */
static inline float *
kg_gnn_learned_rows(const struct kg_gnn *m)
{
	return m->lw != NULL ? m->lw : m->w + m->learned;
}
/* A learned row's initial value, N(0, 1/d0) drawn from (seed, id) alone:
 * every process holding entity id starts its row alike. */
void kg_gnn_learned_row_init(float *row, size_t d0, uint64_t seed,
    uint64_t id);

/*
 * Forward state of one pass over a graph of n nodes, reused across steps
 * (buffers grow as needed and are kept, so steady-state steps allocate
 * nothing).  h[l] is the input of graph layer l (h[0] the attribute
 * layer's output), h[L] the encoder output [n, dL].  Every forward pass
 * rebuilds the message orders below from the graph it is given.
 */
struct kg_gnn_state {
	uint64_t n, cap_n, cap_m;
	/* Nodes of each level: rows[l] the input rows of graph layer l,
	 * rows[L] the output's (all n unless the pass ran on blocks). */
	uint64_t rows[KG_GNN_MAX_LAYERS + 1], cap_rows[KG_GNN_MAX_LAYERS + 1];
	uint64_t cap_t1;		/* floats of t1 and dt */
	int blocks;			/* each layer has its own index */
	float *h[KG_GNN_MAX_LAYERS + 1];
	float *hd[KG_GNN_MAX_LAYERS];	/* dropped-out inputs */
	float *mask[KG_GNN_MAX_LAYERS];	/* dropout scale per element */
	float *pre[KG_GNN_MAX_LAYERS];	/* pre-activation outputs */
	float *t1;			/* scratch: per-basis products, z */
	float *u[KG_GNN_MAX_LAYERS], *alpha[KG_GNN_MAX_LAYERS];
	float *da;			/* attention backward, per message */
	float *nsum;			/* attention backward, per node */
	float *dh, *dh2, *dt;		/* backward scratch */
	/* Message orders (both stable, i.e. in CSR order within a group). */
	uint64_t cap_idx, cap_nidx, cap_t, cap_fill;
	uint64_t *by_type, *toff;	/* messages by type */
	uint64_t *by_src, *soff;	/* messages by source */
	int32_t *dst;			/* destination of each message */
	uint64_t *fill;
	/* Block R-GCN: the (destination, type) pairs, by type; poff: their
	 * messages in by_type, dpair/dpoff: the pairs of each destination. */
	uint64_t n_pairs, max_tpairs;
	uint64_t *poff, *tpoff, *msg_pair, *dpair, *dpoff;
	int32_t *pdst;
	float *py;			/* one row per pair */
	float *tscr;			/* per-thread scratch */
	uint64_t cap_py, cap_tscr;
	/* The attribute layer's backward: each node's terms ato[i] ..
	 * ato[i + 1] (table offset, coefficient); amax: the most terms of
	 * an entity of afeat. */
	const struct kg_features *afeat;
	uint64_t *ato, *aoff, amax, cap_ato, cap_aterm;
	float *acoef;
};

#define KG_GNN_STATE_INIT { 0 }

/*
 * Size s for graphs of up to n nodes and n_msgs messages, so that passes
 * over such graphs allocate nothing (but the per-pair and per-thread
 * scratch of block R-GCN, which grows with headroom).  The passes call
 * it themselves with their graph's sizes; a caller that knows bounds
 * calls it once beforehand.
 */
void kg_gnn_state_reserve(const struct kg_gnn *m, struct kg_gnn_state *s,
    uint64_t n, uint64_t n_msgs);
/* The same for passes on blocks (kg_gnn_forward_blocks): rows[l] nodes
 * at level l, rows[0] = the graph's. */
void kg_gnn_state_reserve_rows(const struct kg_gnn *m, struct kg_gnn_state *s,
    const uint64_t *rows, uint64_t n_msgs);
/* Size the attribute layer's backward buffers in s for up to n input
 * nodes reading rows of f (at most n times the most terms a row of f
 * has), so that backward passes allocate nothing; a no-op without
 * attributes. */
void kg_gnn_state_reserve_attrs(const struct kg_gnn *m,
    const struct kg_features *f, uint64_t n, struct kg_gnn_state *s);
void kg_gnn_state_release(struct kg_gnn_state *s);

/*
 * Forward pass over graph g: node i reads feature row frow[i] and learned
 * row lrow[i] (NULL: row i for both).  rng != NULL turns dropout on.
 * Output in s->h[L] (n x dL).
 */
void kg_gnn_forward(const struct kg_gnn *m, const struct kg_gnn_graph *g,
    const struct kg_features *f, const int32_t *frow,
    const int32_t *lrow, struct kg_rng *rng, struct kg_gnn_state *s);

/*
 * Forward pass on blocks (DGL's message-flow graphs): graph layer l is
 * computed only for the first n_dst[l] nodes of g, n_dst non-increasing
 * (n_dst[l] <= n_dst[l - 1] <= g->n_nodes), reading its messages from
 * the rows layer l - 1 computed.  For a sampled graph whose nodes are
 * numbered by hop (gnn/sample.h: the seeds first, then the nodes first
 * reached at hop 1, ...), layer l is needed only within L - 1 - l hops
 * of the seeds: n_dst[l] = the nodes within those hops, and the output
 * h[L] holds the seeds' rows alone.  The values of those rows are the
 * whole-graph pass's (the rows left out feed no row kept); only the
 * dropout masks, drawn for the rows computed, differ.  n_dst NULL is
 * kg_gnn_forward.
 */
void kg_gnn_forward_blocks(const struct kg_gnn *m,
    const struct kg_gnn_graph *g, const uint64_t *n_dst,
    const struct kg_features *f, const int32_t *frow, const int32_t *lrow,
    struct kg_rng *rng, struct kg_gnn_state *s);

/*
 * Backward pass after kg_gnn_forward (or kg_gnn_forward_blocks) with the
 * same arguments: dout is dL/d(output) (s->rows[L] x dL, overwritten),
 * and the parameter gradients are ADDED to grad (n_params floats).
 *
 * Threads.  Both passes use omp_get_max_threads() OpenMP threads and give
 * the same bits whatever that number: every output row or gradient
 * element is summed by one thread in an order fixed by the graph alone
 * (by destination, by source or by message type; global vectors such as
 * biases are split by columns).  The dense products go to OpenBLAS as
 * whole matrices, and the small per-type products of block R-GCN are
 * called from inside the OpenMP threads: run OpenBLAS single-threaded
 * (openblas_set_num_threads(1) or OPENBLAS_NUM_THREADS=1) when using
 * several OpenMP threads, or the two pools oversubscribe the cores.
 */
void kg_gnn_backward(const struct kg_gnn *m, const struct kg_gnn_graph *g,
    const struct kg_features *f, const int32_t *frow,
    const int32_t *lrow, struct kg_gnn_state *s, float *dout, float *grad);

/* 1 when a node whose feature row is frow takes its input from the
 * learned table (no attribute values, or learned only). */
int kg_gnn_uses_learned(const struct kg_gnn *m,
    const struct kg_features *f, uint64_t frow);

/* "rgcn"/"RGCN", "relgnn"/"RelGNN"; 0 or -1 after kg_error(). */
int kg_gnn_encoder_parse(const char *name, enum kg_gnn_encoder *e);
const char *kg_gnn_encoder_name(enum kg_gnn_encoder e);

/*
 * Every node's final embedding: a full-graph forward pass without dropout
 * over the n triples hrt of n_nodes nodes (global numbering, feature row
 * = learned row = node), the bits of kg_gnn_forward's output.  It runs
 * layer by layer (gnn/embed.c): the peak is one layer's input and output,
 * the products of its sources (R-GCN basis: n_bases of them) and the
 * graph, without the dropout masks, pre-activations, backward scratch
 * and message orders a training pass keeps for every layer (README's
 * paper-scale section has the figures); attention and block
 * R-GCN take their per-message scratch for chunk destinations at a time
 * (kg_gnn_embed: 65536).  OpenMP threads as gnn.h.  Returns n_nodes x dL
 * floats (caller frees).
 */
float *kg_gnn_embed(const struct kg_gnn *m, const struct kg_features *f,
    uint64_t n_nodes, const int32_t *hrt, uint64_t n);
float *kg_gnn_embed_chunks(const struct kg_gnn *m, const struct kg_features *f,
    uint64_t n_nodes, const int32_t *hrt, uint64_t n, uint64_t chunk);

#endif
