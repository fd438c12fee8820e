/*
 * gnn/sample: neighbour sampling and edge dropout into buffers allocated
 * once; see sample.h.
 */
#include "gnn/sample.h"

#include <stdlib.h>
#include <string.h>

/* ---- drawing f of deg positions ---- */

void
kg_gnn_pickmap_init(struct kg_gnn_pickmap *pm, uint32_t max_f)
{
	uint32_t cap = 4, lg = 2;

	while (cap < 2 * (uint64_t)max_f) {
		cap *= 2;
		lg++;
	}
	pm->cap = cap;
	pm->shift = 64 - lg;
	pm->n_used = 0;
	pm->key = kg_xcalloc(cap, sizeof(*pm->key));
	pm->val = kg_xmallocarray(cap, sizeof(*pm->val));
	pm->used = kg_xmallocarray(cap, sizeof(*pm->used));
}

void
kg_gnn_pickmap_release(struct kg_gnn_pickmap *pm)
{
	free(pm->key);
	free(pm->val);
	free(pm->used);
	memset(pm, 0, sizeof(*pm));
}

/* The slot of position pos: its own, or the empty one where it would go
 * (linear probing; the map is at most half full). */
static uint32_t
pm_slot(const struct kg_gnn_pickmap *pm, uint64_t pos)
{
	uint32_t h = (uint32_t)((pos * 0x9e3779b97f4a7c15ULL) >> pm->shift);

	while (pm->key[h] != 0 && pm->key[h] != pos + 1)
		h = (h + 1) & (pm->cap - 1);
	return h;
}

/* What the shuffled array holds at pos. */
static uint64_t
pm_get(const struct kg_gnn_pickmap *pm, uint64_t pos)
{
	uint32_t h = pm_slot(pm, pos);

	return pm->key[h] != 0 ? pm->val[h] : pos;
}

static void
pm_set(struct kg_gnn_pickmap *pm, uint64_t pos, uint64_t v)
{
	uint32_t h = pm_slot(pm, pos);

	if (pm->key[h] == 0) {
		pm->key[h] = pos + 1;
		pm->used[pm->n_used++] = h;
	}
	pm->val[h] = v;
}

void
kg_gnn_pick(struct kg_gnn_pickmap *pm, uint64_t deg, uint32_t f,
    struct kg_rng *rng, uint64_t *out)
{
	uint32_t e, k;

	/* Step e swaps positions e and r; position e is never read again,
	 * so only r's new value is kept. */
	for (e = 0; e < f; e++) {
		uint64_t r = e + kg_rng_below(rng, deg - e);
		uint64_t t = pm_get(pm, r);

		pm_set(pm, r, pm_get(pm, e));
		out[e] = t;
	}
	for (k = 0; k < pm->n_used; k++)
		pm->key[pm->used[k]] = 0;
	pm->n_used = 0;
}

/* ---- neighbour sampling ---- */

static uint64_t
sat_mul(uint64_t a, uint64_t b)
{
	return b != 0 && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

static uint64_t
sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

void
kg_gnn_sample_hop_bounds(uint64_t n_seeds, const uint32_t *fanout,
    uint32_t nfanout, const struct kg_gnn_graph *full, uint64_t *nodes,
    uint64_t *max_msgs)
{
	uint64_t frontier = n_seeds < full->n_nodes ? n_seeds : full->n_nodes;
	uint64_t sum = frontier, msgs = 0;
	uint32_t k;

	nodes[0] = frontier;
	for (k = 0; k < nfanout; k++) {
		frontier = sat_mul(frontier, fanout[k]);
		msgs = sat_add(msgs, frontier);
		sum = sat_add(sum, frontier);
		if (frontier > full->n_nodes)
			frontier = full->n_nodes;
		nodes[k + 1] = sum < full->n_nodes ? sum : full->n_nodes;
	}
	*max_msgs = msgs < full->n_msgs ? msgs : full->n_msgs;
}

void
kg_gnn_sample_bounds(uint64_t n_seeds, const uint32_t *fanout,
    uint32_t nfanout, const struct kg_gnn_graph *full, uint64_t *max_nodes,
    uint64_t *max_msgs)
{
	uint64_t nodes[KG_GNN_SAMPLE_MAX_HOPS + 1];

	kg_gnn_sample_hop_bounds(n_seeds, fanout, nfanout, full, nodes,
	    max_msgs);
	*max_nodes = nodes[nfanout];
}

/* Room for n nodes and m messages (only grows). */
static void
sampler_reserve(struct kg_gnn_sampler *s, uint64_t n, uint64_t m)
{
	if (n > s->cap_n) {
		s->cap_n = n;
		s->nodes = kg_xreallocarray(s->nodes, n, sizeof(*s->nodes));
		s->frow = kg_xreallocarray(s->frow, n, sizeof(*s->frow));
		s->lrow = kg_xreallocarray(s->lrow, n, sizeof(*s->lrow));
		s->g.off = kg_xreallocarray(s->g.off, n + 1,
		    sizeof(*s->g.off));
	}
	if (m > s->cap_m) {
		s->cap_m = m;
		s->g.src = kg_xreallocarray(s->g.src, m, sizeof(*s->g.src));
		s->g.type = kg_xreallocarray(s->g.type, m,
		    sizeof(*s->g.type));
		s->g.norm = kg_xreallocarray(s->g.norm, m,
		    sizeof(*s->g.norm));
	}
}

void
kg_gnn_sampler_init(struct kg_gnn_sampler *s,
    const struct kg_gnn_graph *full, uint64_t max_nodes, uint64_t max_msgs,
    uint32_t max_fanout)
{
	uint64_t i;

	memset(s, 0, sizeof(*s));
	sampler_reserve(s, max_nodes + 1, max_msgs + 1);
	s->local = kg_xmallocarray(full->n_nodes + 1, sizeof(*s->local));
	for (i = 0; i < full->n_nodes; i++)
		s->local[i] = -1;
	s->cnt = kg_xcalloc(full->n_types + 1, sizeof(*s->cnt));
	s->pick = kg_xmallocarray(max_fanout + 1, sizeof(*s->pick));
	kg_gnn_pickmap_init(&s->pm, max_fanout);
}

void
kg_gnn_sampler_release(struct kg_gnn_sampler *s)
{
	kg_gnn_graph_release(&s->g);
	free(s->nodes);
	free(s->frow);
	free(s->lrow);
	free(s->local);
	free(s->cnt);
	free(s->pick);
	kg_gnn_pickmap_release(&s->pm);
	memset(s, 0, sizeof(*s));
}

static int32_t
sub_add(struct kg_gnn_sampler *s, int32_t v)
{
	if (s->local[v] < 0) {
		if (s->g.n_nodes == s->cap_n)
			sampler_reserve(s, 2 * s->cap_n, s->cap_m);
		s->local[v] = (int32_t)s->g.n_nodes;
		s->nodes[s->g.n_nodes++] = v;
	}
	return s->local[v];
}

static void
sub_msg(struct kg_gnn_sampler *s, int32_t src, int32_t type)
{
	struct kg_gnn_graph *g = &s->g;

	if (g->n_msgs == s->cap_m)
		sampler_reserve(s, s->cap_n, 2 * s->cap_m);
	g->src[g->n_msgs] = src;
	g->type[g->n_msgs] = type;
	g->n_msgs++;
}

/* Node i's messages: all of them when it has at most f, else f drawn. */
static void
sample_node(struct kg_gnn_sampler *s, const struct kg_gnn_graph *full,
    uint64_t i, uint32_t f, struct kg_rng *rng)
{
	int32_t v = s->nodes[i];
	uint64_t e0 = full->off[v], deg = full->off[v + 1] - e0, e;

	s->g.off[i] = s->g.n_msgs;
	if (deg <= f) {
		for (e = e0; e < e0 + deg; e++)
			sub_msg(s, sub_add(s, full->src[e]), full->type[e]);
		return;
	}
	kg_gnn_pick(&s->pm, deg, f, rng, s->pick);
	for (e = 0; e < f; e++) {
		uint64_t t = e0 + s->pick[e];

		sub_msg(s, sub_add(s, full->src[t]), full->type[t]);
	}
}

void
kg_gnn_sample(struct kg_gnn_sampler *s, const struct kg_gnn_graph *full,
    const uint32_t *fanout, uint32_t nfanout, const int32_t *frow,
    int32_t *seeds, size_t n, struct kg_rng *rng)
{
	struct kg_gnn_graph *g = &s->g;
	uint64_t lo = 0, hi, i;
	uint32_t hop;
	size_t k;

	g->n_nodes = 0;
	g->n_msgs = 0;
	for (k = 0; k < n; k++)
		seeds[k] = sub_add(s, seeds[k]);
	hi = g->n_nodes;
	s->hop_end[0] = hi;
	for (hop = 0; hop < nfanout; hop++) {
		for (i = lo; i < hi; i++)
			sample_node(s, full, i, fanout[hop], rng);
		lo = hi;
		hi = g->n_nodes;
		s->hop_end[hop + 1] = hi;
	}
	/* The last frontier's nodes get empty lists. */
	for (i = lo; i <= g->n_nodes; i++)
		g->off[i] = g->n_msgs;
	g->n_types = full->n_types;
	kg_gnn_graph_normalise(g, s->cnt);
	for (i = 0; i < g->n_nodes; i++) {
		int32_t v = s->nodes[i];

		s->frow[i] = frow ? frow[v] : v;
		s->lrow[i] = v;
		s->local[v] = -1;
	}
}

/* ---- edge dropout ---- */

static void
edrop_reserve(struct kg_gnn_edrop *e, uint64_t n, uint64_t m)
{
	struct kg_gnn_graph *out = &e->g;

	if (n > e->cap_n) {
		e->cap_n = n;
		out->off = kg_xreallocarray(out->off, n, sizeof(*out->off));
	}
	if (m > e->cap_m) {
		e->cap_m = m;
		out->src = kg_xreallocarray(out->src, m, sizeof(*out->src));
		out->type = kg_xreallocarray(out->type, m,
		    sizeof(*out->type));
		out->norm = kg_xreallocarray(out->norm, m,
		    sizeof(*out->norm));
	}
}

void
kg_gnn_edrop_init(struct kg_gnn_edrop *e, uint64_t max_nodes,
    uint64_t max_msgs, uint32_t n_types)
{
	memset(e, 0, sizeof(*e));
	edrop_reserve(e, max_nodes + 1, max_msgs + 1);
	e->cnt = kg_xcalloc((size_t)n_types + 1, sizeof(*e->cnt));
}

void
kg_gnn_edrop_release(struct kg_gnn_edrop *e)
{
	kg_gnn_graph_release(&e->g);
	free(e->cnt);
	memset(e, 0, sizeof(*e));
}

const struct kg_gnn_graph *
kg_gnn_edge_drop(struct kg_gnn_edrop *e, const struct kg_gnn_graph *g,
    double p, struct kg_rng *rng)
{
	struct kg_gnn_graph *out = &e->g;
	uint64_t i, k, m = 0;

	edrop_reserve(e, g->n_nodes + 1, g->n_msgs + 1);
	out->n_nodes = g->n_nodes;
	out->n_types = g->n_types;
	out->off[0] = 0;
	for (i = 0; i < g->n_nodes; i++) {
		for (k = g->off[i]; k < g->off[i + 1]; k++)
			if (kg_rng_uniform(rng) >= p) {
				out->src[m] = g->src[k];
				out->type[m] = g->type[k];
				m++;
			}
		out->off[i + 1] = m;
	}
	out->n_msgs = m;
	kg_gnn_graph_normalise(out, e->cnt);
	return out;
}
