/*
 * graph: compressed adjacency (CSR) views of a triple list, shared by
 * kg-partition and kg-expand.
 *
 * Triples are int32 rows (head, relation, tail) with entity IDs in
 * [0, n_nodes); edges are identified by their row number, which must fit
 * in 32 bits.  Both structures own their arrays; release them with the
 * matching _release function (safe on the zero initialiser).
 */
#ifndef KG_GRAPH_H
#define KG_GRAPH_H

#include <stdint.h>

/*
 * Incidence lists: for every node v, edge[off[v] .. off[v+1]) lists the
 * rows in which v is the head or the tail, in increasing row order.  A
 * self-loop is listed once.  The other endpoint of row e seen from v is
 * kg_incidence_other(hrt, e, v).
 */
struct kg_incidence {
	uint64_t n_nodes;
	uint64_t n_edges;
	uint64_t *off;		/* n_nodes + 1 */
	uint32_t *edge;		/* off[n_nodes] row numbers */
};

#define KG_INCIDENCE_INIT { 0 }

/*
 * Build the incidence lists of n_edges rows of hrt.  IDs must already be
 * in range (the dataset loader checks them).  Returns 0, or -1 after
 * kg_error() when n_edges does not fit in 32 bits.
 */
int kg_incidence_build(struct kg_incidence *g, uint64_t n_nodes,
    const int32_t *hrt, uint64_t n_edges);
void kg_incidence_release(struct kg_incidence *g);

static inline uint32_t
kg_incidence_other(const int32_t *hrt, uint32_t e, uint32_t v)
{
	uint32_t h = (uint32_t)hrt[3 * (uint64_t)e];
	uint32_t t = (uint32_t)hrt[3 * (uint64_t)e + 2];

	return h == v ? t : h;
}

/*
 * The simple undirected graph of the triples: relation types ignored,
 * both directions present, multi-edges merged and self-loops dropped.
 * adj[off[v] .. off[v+1]) holds v's neighbours in increasing order.
 * Returns 0, or -1 after kg_error() when the adjacency would not fit the
 * 32-bit indices METIS uses (2 * unique pairs >= 2^31).
 */
struct kg_csr {
	uint64_t n_nodes;
	uint64_t *off;		/* n_nodes + 1 */
	uint32_t *adj;		/* off[n_nodes] neighbours */
};

#define KG_CSR_INIT { 0 }

int kg_csr_symmetric(struct kg_csr *g, uint64_t n_nodes, const int32_t *hrt,
    uint64_t n_edges);
void kg_csr_release(struct kg_csr *g);

#endif
