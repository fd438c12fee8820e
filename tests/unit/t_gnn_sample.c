/*
 * t_gnn_sample: neighbour sampling for GNN training (lib/gnn/sample.h).
 * The sparse partial Fisher-Yates draw equals the shuffle of a whole
 * array (same random numbers, same picks in the same order) on random
 * degrees and fan-outs, and costs O(fan-out) for any degree; a sampled
 * graph equals the one a reference sampler over whole arrays builds,
 * keeps min(degree, fan-out) distinct messages of every frontier node,
 * and stays within kg_gnn_sample_bounds without growing a buffer; edge
 * dropout keeps the messages its draws keep.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "gnn/sample.h"
#include "test.h"

/* The shuffle the sampler used before: a whole array of positions. */
static void
dense_pick(uint64_t deg, uint32_t f, struct kg_rng *rng, uint64_t *out)
{
	uint64_t *a = kg_xmallocarray(deg, sizeof(*a)), e;

	for (e = 0; e < deg; e++)
		a[e] = e;
	for (e = 0; e < f; e++) {
		uint64_t r = e + kg_rng_below(rng, deg - e), t = a[r];

		a[r] = a[e];
		a[e] = t;
		out[e] = t;
	}
	free(a);
}

static void
pick_equals_dense(void)
{
	struct kg_gnn_pickmap pm = KG_GNN_PICKMAP_INIT;
	struct kg_rng r, a, b;
	uint64_t got[64], want[64];
	int trial, bad = 0;

	kg_gnn_pickmap_init(&pm, 64);
	kg_rng_seed(&r, 5, 0);
	for (trial = 0; trial < 3000; trial++) {
		uint32_t f = 1 + (uint32_t)kg_rng_below(&r, 64);
		uint64_t deg = f + 1 + kg_rng_below(&r, trial % 3 ? 100 : 5000);

		kg_rng_seed(&a, 9, (uint64_t)trial);
		b = a;
		kg_gnn_pick(&pm, deg, f, &a, got);
		dense_pick(deg, f, &b, want);
		if (memcmp(got, want, f * sizeof(*got)) != 0 ||
		    memcmp(a.s, b.s, sizeof(a.s)) != 0)
			bad++;
		T_CHECK(pm.n_used == 0);
	}
	T_CHECKF(bad == 0, "%d of 3000 draws differ", bad);
	kg_gnn_pickmap_release(&pm);
}

/* A hub: the map stays at its few slots, exactly f random numbers are
 * drawn, and a degree no array could hold is drawn from as well. */
static void
pick_hub_costs_fanout(void)
{
	struct kg_gnn_pickmap pm = KG_GNN_PICKMAP_INIT;
	struct kg_rng a, b;
	uint64_t got[25], want[25], huge = (uint64_t)1 << 40;
	uint32_t e, k, i;

	kg_gnn_pickmap_init(&pm, 25);
	T_CHECK(pm.cap <= 64);
	kg_rng_seed(&a, 3, 1);
	b = a;
	kg_gnn_pick(&pm, 1000000, 25, &a, got);
	dense_pick(1000000, 25, &b, want);
	T_CHECK(memcmp(got, want, sizeof(got)) == 0);
	T_CHECK(memcmp(a.s, b.s, sizeof(a.s)) == 0);
	for (k = 0; k < pm.cap; k++)
		T_CHECK(pm.key[k] == 0);
	/* 2^40 positions (8 TiB as an array), 10000 times. */
	for (i = 0; i < 10000; i++) {
		b = a;
		kg_gnn_pick(&pm, huge, 25, &a, got);
		for (e = 0; e < 25; e++)
			(void)kg_rng_below(&b, huge - e);
		T_CHECK(memcmp(a.s, b.s, sizeof(a.s)) == 0);
		for (e = 0; e < 25; e++) {
			T_CHECK(got[e] < huge);
			for (k = 0; k < e; k++)
				T_CHECK(got[k] != got[e]);
		}
	}
	T_CHECK(pm.cap <= 64 && pm.n_used == 0);
	kg_gnn_pickmap_release(&pm);
}

/* ---- whole samples ---- */

enum { N = 3000, M = 20000, R = 3 };

static int32_t hrt[3 * M];

static void
random_graph(struct kg_gnn_graph *g)
{
	struct kg_rng r;
	uint64_t i;

	kg_rng_seed(&r, 21, 0);
	for (i = 0; i < M; i++) {
		/* A few hubs with degrees in the thousands. */
		uint64_t hub = kg_rng_below(&r, 4) == 0;

		hrt[3 * i] = (int32_t)kg_rng_below(&r, hub ? 5 : N);
		hrt[3 * i + 1] = (int32_t)kg_rng_below(&r, R);
		hrt[3 * i + 2] = (int32_t)kg_rng_below(&r, N);
	}
	kg_gnn_graph_build(g, N, R, hrt, M);
}

/* The old sampler, over whole arrays: nodes by first reach, messages
 * drawn with dense_pick. */
static void
ref_sample(const struct kg_gnn_graph *full, const uint32_t *fan,
    uint32_t nf, const int32_t *seeds, size_t ns, struct kg_rng *rng,
    int32_t *nodes, uint64_t *n_nodes, int32_t *src, uint64_t *n_msgs)
{
	int32_t *local = kg_xmallocarray(N, sizeof(*local));
	uint64_t n = 0, m = 0, lo = 0, hi, i, e, pick[64];
	uint32_t hop;
	size_t k;

	for (i = 0; i < N; i++)
		local[i] = -1;
#define ADD(v) (local[v] < 0 ? (nodes[n] = (v), local[v] = (int32_t)n++) \
	: local[v])
	for (k = 0; k < ns; k++)
		(void)ADD(seeds[k]);
	hi = n;
	for (hop = 0; hop < nf; hop++) {
		for (i = lo; i < hi; i++) {
			uint64_t e0 = full->off[nodes[i]];
			uint64_t deg = full->off[nodes[i] + 1] - e0;

			if (deg <= fan[hop]) {
				for (e = e0; e < e0 + deg; e++)
					src[m++] = ADD(full->src[e]);
				continue;
			}
			dense_pick(deg, fan[hop], rng, pick);
			for (e = 0; e < fan[hop]; e++)
				src[m++] = ADD(full->src[e0 + pick[e]]);
		}
		lo = hi;
		hi = n;
	}
#undef ADD
	*n_nodes = n;
	*n_msgs = m;
	free(local);
}

static void
sample_equals_reference_within_bounds(void)
{
	struct kg_gnn_graph full = KG_GNN_GRAPH_INIT;
	struct kg_gnn_sampler s = KG_GNN_SAMPLER_INIT;
	uint32_t fan[2] = { 4, 3 };
	uint64_t max_n, max_m, cap_n, cap_m, rn, rm, i, e;
	int32_t seeds[40], seeds2[40], *nodes, *src;
	struct kg_rng r, a, b;
	int trial, bad = 0;

	random_graph(&full);
	kg_gnn_sample_bounds(40, fan, 2, &full, &max_n, &max_m);
	T_CHECK(max_n == 40 + 160 + 480 && max_m == 160 + 480);
	kg_gnn_sampler_init(&s, &full, max_n, max_m, 4);
	cap_n = s.cap_n;
	cap_m = s.cap_m;
	nodes = kg_xmallocarray(N, sizeof(*nodes));
	src = kg_xmallocarray(2 * M, sizeof(*src));
	kg_rng_seed(&r, 8, 0);
	for (trial = 0; trial < 200; trial++) {
		for (i = 0; i < 40; i++)
			seeds[i] = seeds2[i] = (int32_t)kg_rng_below(&r,
			    trial % 2 ? 5 : N);
		kg_rng_seed(&a, 4, (uint64_t)trial);
		b = a;
		kg_gnn_sample(&s, &full, fan, 2, NULL, seeds, 40, &a);
		ref_sample(&full, fan, 2, seeds2, 40, &b, nodes, &rn, src,
		    &rm);
		T_CHECK(s.g.n_nodes <= max_n && s.g.n_msgs <= max_m);
		if (s.g.n_nodes != rn || s.g.n_msgs != rm ||
		    memcmp(s.nodes, nodes, rn * sizeof(*nodes)) != 0 ||
		    memcmp(s.g.src, src, rm * sizeof(*src)) != 0 ||
		    memcmp(a.s, b.s, sizeof(a.s)) != 0)
			bad++;
		for (i = 0; i < 40; i++)
			T_CHECK(s.nodes[seeds[i]] == seeds2[i]);
		/* Every kept message is one of the node's, once. */
		for (i = 0; i < s.g.n_nodes; i++) {
			int32_t v = s.nodes[i];
			uint64_t deg = full.off[v + 1] - full.off[v];
			uint64_t kept = s.g.off[i + 1] - s.g.off[i];

			T_CHECK(kept == 0 || kept == (deg < 4 ? deg : 4) ||
			    kept == (deg < 3 ? deg : 3));
			for (e = s.g.off[i]; e < s.g.off[i + 1]; e++) {
				uint64_t q = full.off[v];

				while (q < full.off[v + 1] && (full.src[q] !=
				    s.nodes[s.g.src[e]] ||
				    full.type[q] != s.g.type[e]))
					q++;
				T_CHECK(q < full.off[v + 1]);
			}
		}
	}
	T_CHECKF(bad == 0, "%d of 200 samples differ from the reference", bad);
	T_CHECK(s.cap_n == cap_n && s.cap_m == cap_m);
	for (i = 0; i < N; i++)
		T_CHECK(s.local[i] == -1);
	free(nodes);
	free(src);
	kg_gnn_sampler_release(&s);
	kg_gnn_graph_release(&full);
}

/* Edge dropout keeps message k exactly when its draw is >= p, and
 * recounts the normalisers over what it kept. */
static void
edge_drop_keeps_its_draws(void)
{
	struct kg_gnn_graph full = KG_GNN_GRAPH_INIT;
	struct kg_gnn_edrop ed = KG_GNN_EDROP_INIT;
	const struct kg_gnn_graph *g;
	struct kg_rng a, b;
	uint64_t i, k, m = 0;
	uint32_t cnt[2 * R];

	random_graph(&full);
	kg_gnn_edrop_init(&ed, full.n_nodes, full.n_msgs, full.n_types);
	kg_rng_seed(&a, 6, 0);
	b = a;
	g = kg_gnn_edge_drop(&ed, &full, 0.3, &a);
	T_CHECK(g->n_nodes == full.n_nodes);
	for (i = 0; i < full.n_nodes; i++) {
		memset(cnt, 0, sizeof(cnt));
		for (k = full.off[i]; k < full.off[i + 1]; k++)
			if (kg_rng_uniform(&b) >= 0.3) {
				T_CHECK(g->src[m] == full.src[k] &&
				    g->type[m] == full.type[k]);
				cnt[full.type[k]]++;
				m++;
			}
		T_CHECK(g->off[i + 1] == m);
		for (k = g->off[i]; k < g->off[i + 1]; k++)
			T_CHECK(g->norm[k] == 1.0f / (float)cnt[g->type[k]]);
	}
	T_CHECK(g->n_msgs == m && m > full.n_msgs / 2 && m < full.n_msgs);
	kg_gnn_edrop_release(&ed);
	kg_gnn_graph_release(&full);
}

int
main(void)
{
	T_RUN(pick_equals_dense);
	T_RUN(pick_hub_costs_fanout);
	T_RUN(sample_equals_reference_within_bounds);
	T_RUN(edge_drop_keeps_its_draws);
	return T_DONE();
}
