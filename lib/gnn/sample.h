/*
 * gnn/sample: the graphs a GNN training step encodes, built into buffers
 * allocated once (gnn_train.h describes the sampling).
 *
 * Neighbour sampling (struct kg_gnn_sampler): the seeds are the batch's
 * entities; for layer L .. 1 every frontier node keeps at most fanout[k]
 * of its incoming messages, drawn without replacement, whose sources
 * form the next frontier.  Nodes get local IDs in the order they are
 * reached and have their messages sampled in that order, so the kept
 * messages come grouped by destination; the R-GCN normalisers are
 * counted over the kept messages.
 *
 * The draw of f among deg > f messages is the partial Fisher-Yates
 * shuffle of the positions 0 .. deg - 1 (f steps: swap position e with a
 * uniform position in [e, deg)), taking the first f.  kg_gnn_pick does it
 * in O(f) time and memory whatever deg: the positions the shuffle has
 * moved live in a small open-addressing map (struct kg_gnn_pickmap),
 * every other position holds its own index.  It draws the same random
 * numbers and picks the same positions in the same order as a shuffle of
 * a full array would.
 *
 * Edge dropout (struct kg_gnn_edrop): every message kept with
 * probability 1 - p, normalisers recounted over the kept ones (the R-GCN
 * paper's edge dropout).
 *
 * Bounds: for S seeds, a frontier never grows by more than its size
 * times the fan-out, so the sampled graph has at most S + sum_k F_k
 * nodes and sum_k F_k messages, F_0 = S f_0, F_{k+1} = F_k f_{k+1}
 * (kg_gnn_sample_bounds, capped by the graph's own sizes).  Buffers
 * sized to the bounds never grow; a sample past them would grow them
 * rather than overrun (a safety net that no sample reaches).
 *
 * Not thread-safe: one sampler per training process.
 */
#ifndef KG_GNN_SAMPLE_H
#define KG_GNN_SAMPLE_H

#include <stddef.h>
#include <stdint.h>

#include "core/util.h"
#include "gnn/graph.h"

struct kg_gnn_pickmap {
	uint32_t cap;		/* slots, a power of two */
	uint32_t shift;		/* 64 - log2(cap) */
	uint32_t n_used;
	uint64_t *key;		/* [cap] position + 1; 0: empty */
	uint64_t *val;		/* [cap] the position's value */
	uint32_t *used;		/* [cap] slots in use, for an O(f) reset */
};

#define KG_GNN_PICKMAP_INIT { 0 }

/* A map for draws of at most max_f positions (cap >= 2 max_f). */
void kg_gnn_pickmap_init(struct kg_gnn_pickmap *pm, uint32_t max_f);
void kg_gnn_pickmap_release(struct kg_gnn_pickmap *pm);

/*
 * Draw f (<= the map's max_f, < deg) distinct positions of [0, deg) as
 * the partial Fisher-Yates shuffle above, in order, into out[0 .. f).
 * O(f) time, f random numbers; leaves the map empty.
 */
void kg_gnn_pick(struct kg_gnn_pickmap *pm, uint64_t deg, uint32_t f,
    struct kg_rng *rng, uint64_t *out);

#define KG_GNN_SAMPLE_MAX_HOPS 3

/* Bounds of a sampled graph (see above); nfanout <= KG_GNN_SAMPLE_MAX_HOPS. */
void kg_gnn_sample_bounds(uint64_t n_seeds, const uint32_t *fanout,
    uint32_t nfanout, const struct kg_gnn_graph *full, uint64_t *max_nodes,
    uint64_t *max_msgs);

/* The same per hop: nodes[k] bounds the nodes within k hops of the seeds
 * (k = 0 .. nfanout), *max_msgs the messages. */
void kg_gnn_sample_hop_bounds(uint64_t n_seeds, const uint32_t *fanout,
    uint32_t nfanout, const struct kg_gnn_graph *full, uint64_t *nodes,
    uint64_t *max_msgs);

struct kg_gnn_sampler {
	struct kg_gnn_graph g;	/* the sampled graph, local numbering */
	/* Nodes are numbered by the hop that reached them: hop_end[k] is
	 * the number within k hops (the seeds: hop_end[0]). */
	uint64_t hop_end[KG_GNN_SAMPLE_MAX_HOPS + 1];
	uint64_t cap_n, cap_m;
	int32_t *nodes;		/* local -> full-graph node */
	int32_t *frow;		/* feature row of each local node */
	int32_t *lrow;		/* its learned row: the full-graph node */
	int32_t *local;		/* full-graph node -> local, or -1 */
	uint32_t *cnt;		/* per type, zero between calls */
	uint64_t *pick;		/* [max fan-out] drawn positions */
	struct kg_gnn_pickmap pm;
};

#define KG_GNN_SAMPLER_INIT { .g = KG_GNN_GRAPH_INIT, \
	.pm = KG_GNN_PICKMAP_INIT }

/* Buffers for samples of full of up to max_nodes nodes and max_msgs
 * messages, with fan-outs up to max_fanout. */
void kg_gnn_sampler_init(struct kg_gnn_sampler *s,
    const struct kg_gnn_graph *full, uint64_t max_nodes, uint64_t max_msgs,
    uint32_t max_fanout);
void kg_gnn_sampler_release(struct kg_gnn_sampler *s);

/*
 * Sample the neighbourhood of the n seeds (full-graph nodes, rewritten
 * to local IDs) into s->g, s->frow (frow[v] of each node v, or v when
 * frow is NULL) and s->lrow.
 */
void kg_gnn_sample(struct kg_gnn_sampler *s, const struct kg_gnn_graph *full,
    const uint32_t *fanout, uint32_t nfanout, const int32_t *frow,
    int32_t *seeds, size_t n, struct kg_rng *rng);

struct kg_gnn_edrop {
	struct kg_gnn_graph g;
	uint64_t cap_n, cap_m;
	uint32_t *cnt;		/* per type, zero between calls */
};

#define KG_GNN_EDROP_INIT { .g = KG_GNN_GRAPH_INIT }

/* Buffers for graphs of up to max_nodes nodes, max_msgs messages and
 * n_types types. */
void kg_gnn_edrop_init(struct kg_gnn_edrop *e, uint64_t max_nodes,
    uint64_t max_msgs, uint32_t n_types);
void kg_gnn_edrop_release(struct kg_gnn_edrop *e);
/* e->g = g with each message dropped with probability p (one uniform
 * draw per message, in CSR order); returns &e->g. */
const struct kg_gnn_graph *kg_gnn_edge_drop(struct kg_gnn_edrop *e,
    const struct kg_gnn_graph *g, double p, struct kg_rng *rng);

#endif
