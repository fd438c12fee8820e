/*
 * gnn/embed: every node's final embedding (gnn_train.h's kg_gnn_embed),
 * layer by layer over the whole graph.
 *
 * A training pass keeps every layer's input, dropout mask, pre-activation
 * and backward scratch, and the message orders (48 bytes a message): at
 * 2.8 million nodes and 46 million messages, some 13 GB.  Inference needs
 * none of them: each layer reads its input rows and writes its output
 * rows, and the input is freed before the next layer's output is made.
 * The peak is one layer's input and output, the products of its source
 * rows (R-GCN basis: B of them; attention: z), and the graph; the
 * attention weights and block R-GCN's pairs live per chunk of
 * destinations.  The arithmetic is the training forward's own pieces
 * (gnn/layers.h), called in the same order on the same rows, so the
 * result is the bits kg_gnn_forward gives without dropout.  Threads as
 * in gnn.h.
 */
#include <stdlib.h>
#include <string.h>

#include "gnn/gnn.h"
#include "gnn/layers.h"


/* Destinations [a, b) of g as a graph of their own (its sources still
 * numbered as g's); off gets the rebased offsets (b - a + 1). */
static struct kg_gnn_graph
chunk_view(const struct kg_gnn_graph *g, uint64_t a, uint64_t b, uint64_t *off)
{
	struct kg_gnn_graph v = *g;
	uint64_t i, base = g->off[a];

	for (i = a; i <= b; i++)
		off[i - a] = g->off[i] - base;
	v.n_nodes = b - a;
	v.n_msgs = off[b - a];
	v.off = off;
	v.src = g->src + base;
	v.type = g->type + base;
	v.norm = g->norm + base;
	return v;
}

/* Messages of layer l over the whole graph, chunk by chunk: attention
 * (z = the source products) or block R-GCN (from x). */
static void
chunked_msgs(const struct kg_gnn *m, uint32_t l, const struct kg_gnn_graph *g,
    const float *x, const float *z, float *out, uint64_t chunk)
{
	struct kg_gnn_state st = KG_GNN_STATE_INIT;
	uint64_t *off = kg_xmallocarray(chunk + 1, sizeof(*off));
	uint64_t a, b, n = g->n_nodes, cap = 0;
	size_t dout = m->c.dims[l + 1];
	float *al = NULL;

	for (a = 0; a < n; a = b) {
		struct kg_gnn_graph v;

		b = n - a > chunk ? a + chunk : n;
		v = chunk_view(g, a, b, off);
		if (m->c.encoder == KG_GNN_RELGNN) {
			if (v.n_msgs + 1 > cap) {
				cap = v.n_msgs + 1;
				free(al);
				al = kg_xmallocarray(cap, sizeof(*al));
			}
			kg_gnn_attn_msgs(m, l, &v, a, z, NULL, al,
			    out + a * dout);
			continue;
		}
		kg_gnn_state_reserve(m, &st, n, v.n_msgs);
		kg_gnn_index_build(m, &v, n, &st);
		kg_gnn_block_msgs(m, l, &v, x, out + a * dout, &st);
	}
	free(al);
	free(off);
	kg_gnn_state_release(&st);
}

/* Graph layer l: x [n, din] in, the returned [n, dout] out. */
static float *
embed_layer(const struct kg_gnn *m, uint32_t l, const struct kg_gnn_graph *g,
    const float *x, uint64_t chunk)
{
	size_t dout = m->c.dims[l + 1], B = m->c.n_bases;
	uint64_t n = g->n_nodes;
	float *out = kg_xmallocarray(n * dout + 1, sizeof(float)), *t1 = NULL;
	long k;

	kg_gnn_self_forward(m, l, n, x, out);
	if (m->c.encoder == KG_GNN_RELGNN)
		t1 = kg_xmallocarray(n * dout + 1, sizeof(float));
	else if (m->c.decomp == KG_GNN_BASIS)
		t1 = kg_xmallocarray(B * n * dout + 1, sizeof(float));
	if (t1 != NULL)
		kg_gnn_src_products(m, l, n, x, t1);
	if (m->c.encoder == KG_GNN_RGCN && m->c.decomp == KG_GNN_BASIS)
		kg_gnn_basis_msgs(m, l, g, n, t1, out);
	else
		chunked_msgs(m, l, g, x, t1, out, chunk);
	free(t1);
	if (l + 1 < m->c.n_layers) {
#pragma omp parallel for schedule(static)
		for (k = 0; k < (long)(n * dout); k++)
			if (out[k] < 0.0f)
				out[k] = 0.0f;
	}
	return out;
}

float *
kg_gnn_embed(const struct kg_gnn *m, const struct kg_features *f,
    uint64_t n_nodes, const int32_t *hrt, uint64_t n)
{
	return kg_gnn_embed_chunks(m, f, n_nodes, hrt, n, 65536);
}

float *
kg_gnn_embed_chunks(const struct kg_gnn *m, const struct kg_features *f,
    uint64_t n_nodes, const int32_t *hrt, uint64_t n, uint64_t chunk)
{
	struct kg_gnn_graph g = KG_GNN_GRAPH_INIT;
	float *x = kg_xmallocarray(n_nodes * m->c.dims[0] + 1, sizeof(float));
	uint32_t l;

	kg_gnn_attr_forward(m, f, NULL, NULL, n_nodes, x);
	if (m->c.n_layers > 0)
		kg_gnn_graph_build(&g, n_nodes, m->c.n_relations, hrt, n);
	for (l = 0; l < m->c.n_layers; l++) {
		float *y = embed_layer(m, l, &g, x, chunk ? chunk : 1);

		free(x);
		x = y;
	}
	kg_gnn_graph_release(&g);
	return x;
}
