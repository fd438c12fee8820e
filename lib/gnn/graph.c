/*
 * gnn/graph: the message graph; see graph.h.
 */
#include "gnn/graph.h"

#include <stdlib.h>
#include <string.h>

#include "core/util.h"

void
kg_gnn_graph_build(struct kg_gnn_graph *g, uint64_t n_nodes,
    uint32_t n_relations, const int32_t *hrt, uint64_t n)
{
	uint64_t i, k, *fill;
	uint32_t *cnt;
	uint32_t T = 2 * n_relations;

	memset(g, 0, sizeof(*g));
	g->n_nodes = n_nodes;
	g->n_types = T;
	g->n_msgs = 2 * n;
	g->off = kg_xcalloc(n_nodes + 1, sizeof(*g->off));
	g->src = kg_xmallocarray(g->n_msgs + 1, sizeof(*g->src));
	g->type = kg_xmallocarray(g->n_msgs + 1, sizeof(*g->type));
	g->norm = kg_xmallocarray(g->n_msgs + 1, sizeof(*g->norm));
	for (i = 0; i < n; i++) {
		g->off[hrt[3 * i + 2] + 1]++;
		g->off[hrt[3 * i] + 1]++;
	}
	for (i = 0; i < n_nodes; i++)
		g->off[i + 1] += g->off[i];
	fill = kg_xmallocarray(n_nodes + 1, sizeof(*fill));
	memcpy(fill, g->off, (n_nodes + 1) * sizeof(*fill));
	for (i = 0; i < n; i++) {
		int32_t h = hrt[3 * i], r = hrt[3 * i + 1], t = hrt[3 * i + 2];

		k = fill[t]++;
		g->src[k] = h;
		g->type[k] = r;
		k = fill[h]++;
		g->src[k] = t;
		g->type[k] = r + (int32_t)n_relations;
	}
	free(fill);
	cnt = kg_xcalloc(T ? T : 1, sizeof(*cnt));
	kg_gnn_graph_normalise(g, cnt);
	free(cnt);
}

void
kg_gnn_graph_normalise(struct kg_gnn_graph *g, uint32_t *cnt)
{
	uint64_t i, k;

	/* c_{i,r}: count each type among i's messages (lists are short, so a
	 * quadratic count per node would do, but hubs make it costly: count
	 * with a per-type scratch array instead). */
	for (i = 0; i < g->n_nodes; i++) {
		for (k = g->off[i]; k < g->off[i + 1]; k++)
			cnt[g->type[k]]++;
		for (k = g->off[i]; k < g->off[i + 1]; k++)
			g->norm[k] = 1.0f / (float)cnt[g->type[k]];
		for (k = g->off[i]; k < g->off[i + 1]; k++)
			cnt[g->type[k]] = 0;
	}
}

void
kg_gnn_graph_release(struct kg_gnn_graph *g)
{
	free(g->off);
	free(g->src);
	free(g->type);
	free(g->norm);
	memset(g, 0, sizeof(*g));
}
