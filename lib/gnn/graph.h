/*
 * gnn/graph: the message graph a GNN encoder runs over (gnn.h).
 *
 * Messages run along both directions of every training triple (h, r, t):
 * h -> t with type r and t -> h with type r + n_relations, so there are
 * 2 * n_relations message types.  The graph is stored by destination
 * (CSR): the messages into node i are off[i] .. off[i + 1], in triple
 * order, each with its source, type and R-GCN normaliser 1 / c_{i,r}
 * (c_{i,r} = the number of messages of type r into i).
 *
 * Why not graph/graph.h's kg_incidence: it lists a row once per
 * endpoint (a self-loop once) without direction, type or normaliser, and
 * in 32-bit row numbers; building this graph from it would hold both at
 * once for no shared code beyond a counting sort.
 */
#ifndef KG_GNN_GRAPH_H
#define KG_GNN_GRAPH_H

#include <stdint.h>

struct kg_gnn_graph {
	uint64_t n_nodes;
	uint32_t n_types;	/* 2 * n_relations */
	uint64_t n_msgs;
	uint64_t *off;		/* [n_nodes + 1] */
	int32_t *src;		/* [n_msgs] */
	int32_t *type;		/* [n_msgs] */
	float *norm;		/* [n_msgs] 1 / c_{i,r} */
};

#define KG_GNN_GRAPH_INIT { 0 }

/* Build the message graph of n triples hrt (IDs < n_nodes, relations <
 * n_relations, checked by the caller).  Never fails (aborts on OOM). */
void kg_gnn_graph_build(struct kg_gnn_graph *g, uint64_t n_nodes,
    uint32_t n_relations, const int32_t *hrt, uint64_t n);
void kg_gnn_graph_release(struct kg_gnn_graph *g);
/* Set every norm of g to 1 / c_{i,r} from its messages (for a graph whose
 * messages were sampled or dropped).  cnt: g->n_types zeroed counters,
 * left zeroed. */
void kg_gnn_graph_normalise(struct kg_gnn_graph *g, uint32_t *cnt);

#endif
