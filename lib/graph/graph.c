#include "graph/graph.h"

#include <stdlib.h>
#include <string.h>

#include "core/util.h"

int
kg_incidence_build(struct kg_incidence *g, uint64_t n_nodes,
    const int32_t *hrt, uint64_t n_edges)
{
	uint64_t *off, *pos, e, v;
	uint32_t *edge;

	if (n_edges > UINT32_MAX) {
		kg_error("%llu edges do not fit 32-bit edge IDs",
		    (unsigned long long)n_edges);
		return -1;
	}
	off = kg_xcalloc(n_nodes + 1, sizeof(*off));
	for (e = 0; e < n_edges; e++) {
		uint32_t h = (uint32_t)hrt[3 * e], t = (uint32_t)hrt[3 * e + 2];

		off[h + 1]++;
		if (t != h)
			off[t + 1]++;
	}
	for (v = 0; v < n_nodes; v++)
		off[v + 1] += off[v];
	edge = kg_xmallocarray(off[n_nodes] ? off[n_nodes] : 1,
	    sizeof(*edge));
	pos = kg_xmallocarray(n_nodes ? n_nodes : 1, sizeof(*pos));
	memcpy(pos, off, n_nodes * sizeof(*pos));
	/* Rows are visited in order, so every list comes out sorted. */
	for (e = 0; e < n_edges; e++) {
		uint32_t h = (uint32_t)hrt[3 * e], t = (uint32_t)hrt[3 * e + 2];

		edge[pos[h]++] = (uint32_t)e;
		if (t != h)
			edge[pos[t]++] = (uint32_t)e;
	}
	free(pos);
	g->n_nodes = n_nodes;
	g->n_edges = n_edges;
	g->off = off;
	g->edge = edge;
	return 0;
}

void
kg_incidence_release(struct kg_incidence *g)
{
	free(g->off);
	free(g->edge);
	memset(g, 0, sizeof(*g));
}

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

int
kg_csr_symmetric(struct kg_csr *g, uint64_t n_nodes, const int32_t *hrt,
    uint64_t n_edges)
{
	uint64_t *off, *pos, e, v, w, start;
	uint32_t *adj;

	off = kg_xcalloc(n_nodes + 1, sizeof(*off));
	for (e = 0; e < n_edges; e++) {
		uint32_t h = (uint32_t)hrt[3 * e], t = (uint32_t)hrt[3 * e + 2];

		if (h == t)
			continue;
		off[h + 1]++;
		off[t + 1]++;
	}
	for (v = 0; v < n_nodes; v++)
		off[v + 1] += off[v];
	adj = kg_xmallocarray(off[n_nodes] ? off[n_nodes] : 1, sizeof(*adj));
	pos = kg_xmallocarray(n_nodes ? n_nodes : 1, sizeof(*pos));
	memcpy(pos, off, n_nodes * sizeof(*pos));
	for (e = 0; e < n_edges; e++) {
		uint32_t h = (uint32_t)hrt[3 * e], t = (uint32_t)hrt[3 * e + 2];

		if (h == t)
			continue;
		adj[pos[h]++] = t;
		adj[pos[t]++] = h;
	}
	free(pos);
	/* Sort each row and squeeze out repeats, compacting in place. */
	w = 0;
	start = 0;
	for (v = 0; v < n_nodes; v++) {
		uint64_t end = off[v + 1], i, row = w;

		qsort(adj + start, end - start, sizeof(*adj), cmp_u32);
		for (i = start; i < end; i++)
			if (i == start || adj[i] != adj[i - 1])
				adj[w++] = adj[i];
		off[v] = row;
		start = end;
	}
	off[n_nodes] = w;
	if (w >= (1ULL << 31)) {
		kg_error("graph has %llu adjacency entries, more than 32-bit "
		    "METIS indices hold", (unsigned long long)w);
		free(off);
		free(adj);
		return -1;
	}
	g->n_nodes = n_nodes;
	g->off = off;
	g->adj = kg_xreallocarray(adj, w ? w : 1, sizeof(*adj));
	return 0;
}

void
kg_csr_release(struct kg_csr *g)
{
	free(g->off);
	free(g->adj);
	memset(g, 0, sizeof(*g));
}
