/*
 * gnn/state: the buffers of a pass (struct kg_gnn_state) and the message
 * orders the backward passes sum in; see gnn.h and layers.h.
 */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "gnn/layers.h"

void
kg_gnn_state_release(struct kg_gnn_state *s)
{
	int l;

	for (l = 0; l <= KG_GNN_MAX_LAYERS; l++)
		free(s->h[l]);
	for (l = 0; l < KG_GNN_MAX_LAYERS; l++) {
		free(s->hd[l]);
		free(s->mask[l]);
		free(s->pre[l]);
		free(s->u[l]);
		free(s->alpha[l]);
	}
	free(s->t1);
	free(s->dh);
	free(s->dh2);
	free(s->dt);
	free(s->da);
	free(s->nsum);
	free(s->by_type);
	free(s->toff);
	free(s->by_src);
	free(s->soff);
	free(s->dst);
	free(s->fill);
	free(s->poff);
	free(s->tpoff);
	free(s->msg_pair);
	free(s->dpair);
	free(s->dpoff);
	free(s->pdst);
	free(s->py);
	free(s->tscr);
	kg_gnn_attr_release(s);
	memset(s, 0, sizeof(*s));
}

uint32_t
kg_gnn_max_dim(const struct kg_gnn *m)
{
	uint32_t l, d = 0;

	for (l = 0; l <= m->c.n_layers; l++)
		if (m->c.dims[l] > d)
			d = m->c.dims[l];
	return d;
}

/* Replace *p by an array of n elements of size sz (contents lost). */
static void
regrow(void *pp, uint64_t n, size_t sz)
{
	void **p = pp;

	free(*p);
	*p = kg_xmallocarray(n ? n : 1, sz);
}

/* The per-node rows of every layer: rows[l] nodes at level l (the input
 * of graph layer l, and rows[L] the output).  The backward scratch
 * follows the sources of each layer, at most rows[0]; so do the
 * per-source products (attention's z and dz), except basis R-GCN's,
 * which have one row per destination on blocks (layers_rgcn.c) and
 * never more than rows[1]. */
static void
reserve_nodes(const struct kg_gnn *m, struct kg_gnn_state *s,
    const uint64_t *rows)
{
	size_t md = kg_gnn_max_dim(m), B = m->c.n_bases;
	uint32_t l, L = m->c.n_layers;
	int basis = m->c.encoder == KG_GNN_RGCN && m->c.decomp == KG_GNN_BASIS;
	uint64_t nt = (basis && L > 0 ? rows[1] : rows[0]) * md * B;

	for (l = 0; l <= L; l++)
		if (rows[l] > s->cap_rows[l]) {
			regrow(&s->h[l], rows[l] * md, sizeof(float));
			if (l < L) {
				regrow(&s->hd[l], rows[l] * md, sizeof(float));
				regrow(&s->mask[l], rows[l] * md,
				    sizeof(float));
			}
			if (l > 0)
				regrow(&s->pre[l - 1], rows[l] * md,
				    sizeof(float));
			s->cap_rows[l] = rows[l];
		}
	if (nt > s->cap_t1) {
		regrow(&s->t1, nt, sizeof(float));
		regrow(&s->dt, nt, sizeof(float));
		s->cap_t1 = nt;
	}
	if (rows[0] <= s->cap_n)
		return;
	regrow(&s->dh, rows[0] * md, sizeof(float));
	regrow(&s->dh2, rows[0] * md, sizeof(float));
	regrow(&s->nsum, rows[0], sizeof(float));
	s->cap_n = rows[0];
}

/* The message orders (see kg_gnn_index_build) and, for attention, the
 * per-message scores. */
static void
reserve_msgs(const struct kg_gnn *m, struct kg_gnn_state *s, uint64_t n,
    uint64_t M, uint64_t T)
{
	uint64_t nf = (n > T ? n : T) + 1;
	uint32_t l;

	if (M + 1 > s->cap_idx) {
		s->cap_idx = M + 1;
		regrow(&s->by_type, s->cap_idx, sizeof(*s->by_type));
		regrow(&s->by_src, s->cap_idx, sizeof(*s->by_src));
		regrow(&s->dst, s->cap_idx, sizeof(*s->dst));
		regrow(&s->poff, s->cap_idx, sizeof(*s->poff));
		regrow(&s->msg_pair, s->cap_idx, sizeof(*s->msg_pair));
		regrow(&s->dpair, s->cap_idx, sizeof(*s->dpair));
		regrow(&s->pdst, s->cap_idx, sizeof(*s->pdst));
	}
	if (n + 1 > s->cap_nidx) {
		s->cap_nidx = n + 1;
		regrow(&s->soff, s->cap_nidx, sizeof(*s->soff));
		regrow(&s->dpoff, s->cap_nidx, sizeof(*s->dpoff));
	}
	if (T + 1 > s->cap_t) {
		s->cap_t = T + 1;
		regrow(&s->toff, s->cap_t, sizeof(*s->toff));
		regrow(&s->tpoff, s->cap_t, sizeof(*s->tpoff));
	}
	if (nf > s->cap_fill) {
		s->cap_fill = nf;
		regrow(&s->fill, s->cap_fill, sizeof(*s->fill));
	}
	if (m->c.encoder == KG_GNN_RELGNN && M > s->cap_m) {
		for (l = 0; l < m->c.n_layers; l++) {
			regrow(&s->u[l], M, sizeof(float));
			regrow(&s->alpha[l], M, sizeof(float));
		}
		regrow(&s->da, M, sizeof(float));
		s->cap_m = M;
	}
}

void
kg_gnn_state_reserve(const struct kg_gnn *m, struct kg_gnn_state *s,
    uint64_t n, uint64_t n_msgs)
{
	uint64_t rows[KG_GNN_MAX_LAYERS + 1];
	uint32_t l;

	for (l = 0; l <= m->c.n_layers; l++)
		rows[l] = n;
	kg_gnn_state_reserve_rows(m, s, rows, n_msgs);
}

void
kg_gnn_state_reserve_rows(const struct kg_gnn *m, struct kg_gnn_state *s,
    const uint64_t *rows, uint64_t n_msgs)
{
	uint32_t l;

	for (l = 0; l <= m->c.n_layers; l++)
		s->rows[l] = rows[l];
	s->n = rows[0];
	reserve_nodes(m, s, rows);
	if (m->c.n_layers > 0)
		reserve_msgs(m, s, rows[0], n_msgs,
		    2 * (uint64_t)m->c.n_relations);
}

/* ---- message orders ---- */

/*
 * The backward passes scatter to message sources and sum per message
 * type; to give every such sum to one thread, in an order that depends
 * on the graph only, the messages are also listed by type and by source
 * (counting sorts, stable: CSR order within a type or a source, which
 * is the order the single-threaded loops used to add them in).
 *
 * Block R-GCN works on (destination, type) pairs: since W_r is shared by
 * the messages of type r into i, sum_j (1 / c) h_j W_r = (sum_j (1 / c)
 * h_j) W_r, so the pair's inputs are summed first and multiplied once
 * (FB15k-237: 150k pairs for 544k messages).  Within a type, by_type
 * lists the messages by destination, so a pair is a run of by_type.
 */

/* A stable order of items 0 .. m - 1 by key[i] < nk: off [nk + 1] gets
 * each key's start in out, fill (nk + 1 entries) is scratch. */
static void
bucket_order(const int32_t *key, uint64_t m, uint64_t nk, uint64_t *off,
    uint64_t *fill, uint64_t *out)
{
	uint64_t i;

	memset(off, 0, (nk + 1) * sizeof(*off));
	for (i = 0; i < m; i++)
		off[key[i] + 1]++;
	for (i = 0; i < nk; i++)
		off[i + 1] += off[i];
	memcpy(fill, off, (nk + 1) * sizeof(*fill));
	for (i = 0; i < m; i++)
		out[fill[key[i]]++] = i;
}

/* Grow-only with headroom: these follow the pairs of each graph, which
 * no cheap bound keeps small. */
static void
grow(void *pp, uint64_t *cap, uint64_t need, size_t sz)
{
	if (need <= *cap)
		return;
	*cap = need + need / 2;
	regrow(pp, *cap, sz);
}

/* Block R-GCN's (destination, type) pairs, by type. */
static void
pairs_build(const struct kg_gnn *m, const struct kg_gnn_graph *g,
    struct kg_gnn_state *s)
{
	uint64_t T = g->n_types, M = g->n_msgs, k, p = 0, e;

	for (k = 0; k < T; k++) {
		uint64_t q;

		s->tpoff[k] = p;
		for (q = s->toff[k]; q < s->toff[k + 1]; q++) {
			e = s->by_type[q];
			if (q == s->toff[k] ||
			    s->dst[e] != s->dst[s->by_type[q - 1]]) {
				s->poff[p] = q;
				s->pdst[p] = s->dst[e];
				p++;
			}
			s->msg_pair[e] = p - 1;
		}
		if (p - s->tpoff[k] > s->max_tpairs)
			s->max_tpairs = p - s->tpoff[k];
	}
	s->tpoff[T] = p;
	s->poff[p] = M;
	s->n_pairs = p;
	bucket_order(s->pdst, p, g->n_nodes, s->dpoff, s->fill, s->dpair);
	grow(&s->py, &s->cap_py, s->n_pairs * kg_gnn_max_dim(m),
	    sizeof(float));
}

void
kg_gnn_index_build(const struct kg_gnn *m, const struct kg_gnn_graph *g,
    uint64_t n_src, struct kg_gnn_state *s)
{
	uint64_t i, e;

	reserve_msgs(m, s, n_src, g->n_msgs, g->n_types);
	for (i = 0; i < g->n_nodes; i++)
		for (e = g->off[i]; e < g->off[i + 1]; e++)
			s->dst[e] = (int32_t)i;
	bucket_order(g->type, g->n_msgs, g->n_types, s->toff, s->fill,
	    s->by_type);
	bucket_order(g->src, g->n_msgs, n_src, s->soff, s->fill, s->by_src);
	s->n_pairs = s->max_tpairs = 0;
	if (m->c.encoder == KG_GNN_RGCN && m->c.decomp == KG_GNN_BLOCK)
		pairs_build(m, g, s);
}

void
kg_gnn_tscr_reserve(struct kg_gnn_state *s, size_t per_thread)
{
	grow(&s->tscr, &s->cap_tscr,
	    (uint64_t)omp_get_max_threads() * per_thread, sizeof(float));
}
