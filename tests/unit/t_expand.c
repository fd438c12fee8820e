/*
 * Unit tests for lib/expand: the k-hop expansion checked against a
 * brute-force BFS on small random graphs (every node within k hops and
 * every triple a k-layer encoder reads, nothing more), core triples
 * exactly once, fan-out caps (of every triple or of the triples to new
 * entities), determinism, P = 1, the GNN sampler never reaching outside
 * a part, and feature slicing read back from disk.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gnn/sample.h"
#include "graph/expand.h"
#include "io/manifest.h"
#include "io/npy.h"
#include "graph/partition.h"
#include "core/util.h"
#include "test.h"

static int32_t *
random_graph(uint64_t n, uint64_t m, uint32_t nrel, uint64_t seed)
{
	int32_t *hrt = kg_xmallocarray(3 * m, sizeof(*hrt));
	struct kg_rng r;
	uint64_t i;

	kg_rng_seed(&r, seed, 5);
	for (i = 0; i < m; i++) {
		double u = kg_rng_uniform(&r);

		hrt[3 * i] = (int32_t)((double)n * u * u * u);
		hrt[3 * i + 1] = (int32_t)kg_rng_below(&r, nrel);
		hrt[3 * i + 2] = (int32_t)kg_rng_below(&r, n);
	}
	return hrt;
}

/* Hop distance from the seeds of part p, by k rounds over the edge list;
 * 255 beyond k. */
static void
brute_dist(const int32_t *hrt, uint64_t n, uint64_t m,
    const int32_t *node_part, const int32_t *edge_part, uint32_t p,
    uint32_t k, uint8_t *dist)
{
	uint64_t i, e;
	uint32_t r;

	memset(dist, 255, n);
	for (i = 0; i < n; i++)
		if (node_part[i] == (int32_t)p)
			dist[i] = 0;
	for (e = 0; e < m; e++)
		if (edge_part[e] == (int32_t)p)
			dist[hrt[3 * e]] = dist[hrt[3 * e + 2]] = 0;
	for (r = 0; r < k; r++)
		for (e = 0; e < m; e++) {
			int32_t h = hrt[3 * e], t = hrt[3 * e + 2];

			if (dist[h] == r && dist[t] > r + 1)
				dist[t] = (uint8_t)(r + 1);
			if (dist[t] == r && dist[h] > r + 1)
				dist[h] = (uint8_t)(r + 1);
		}
}

/* The local triples, IDs and masks map back to the training rows. */
static void
check_local(const struct kg_expand_part *xp, const int32_t *hrt,
    const int32_t *edge_part, uint64_t n, uint64_t m)
{
	uint8_t *seen = kg_xcalloc(n > m ? n : m, 1);
	uint64_t i, core = 0;

	for (i = 0; i < xp->n_nodes; i++) {
		T_CHECK(!seen[xp->nodes[i]]);
		seen[xp->nodes[i]] = 1;
		T_CHECK(i < xp->n_seeds ? xp->hops[i] == 0 : xp->hops[i] > 0);
		if (i > 0)
			T_CHECK(xp->hops[i] > xp->hops[i - 1] ||
			    (xp->hops[i] == xp->hops[i - 1] &&
			    xp->nodes[i] > xp->nodes[i - 1]));
	}
	memset(seen, 0, n > m ? n : m);
	for (i = 0; i < xp->n_edges; i++) {
		int32_t e = xp->edge_ids[i];
		int32_t lh = xp->hrt[3 * i], lt = xp->hrt[3 * i + 2];

		T_CHECK(e >= 0 && (uint64_t)e < m && !seen[e]);
		if (e < 0 || (uint64_t)e >= m)
			break;
		seen[e] = 1;
		T_CHECK(lh >= 0 && (uint64_t)lh < xp->n_nodes && lt >= 0 &&
		    (uint64_t)lt < xp->n_nodes);
		if (lh < 0 || (uint64_t)lh >= xp->n_nodes || lt < 0 ||
		    (uint64_t)lt >= xp->n_nodes)
			break;
		T_CHECK(xp->nodes[lh] == hrt[3 * e] &&
		    xp->hrt[3 * i + 1] == hrt[3 * e + 1] &&
		    xp->nodes[lt] == hrt[3 * e + 2]);
		T_CHECK(xp->core_mask[i] == (edge_part[e] == (int32_t)xp->part));
		/* Core triples come first, each group in row order. */
		T_CHECK(xp->core_mask[i] == (i < xp->n_core));
		if (i > 0 && i != xp->n_core)
			T_CHECK(e > xp->edge_ids[i - 1]);
		core += xp->core_mask[i];
	}
	T_CHECK(core == xp->n_core);
	free(seen);
}

/* Without caps the expansion is exactly the brute-force set. */
static void
check_exact(const struct kg_expand_part *xp, const int32_t *hrt, uint64_t n,
    uint64_t m, const int32_t *node_part, const int32_t *edge_part,
    uint32_t k)
{
	uint8_t *dist = kg_xmalloc(n);
	uint64_t i, want_nodes = 0, want_edges = 0;

	brute_dist(hrt, n, m, node_part, edge_part, xp->part, k, dist);
	for (i = 0; i < n; i++)
		want_nodes += dist[i] <= k;
	for (i = 0; i < m; i++) {
		uint8_t a = dist[hrt[3 * i]], b = dist[hrt[3 * i + 2]];

		want_edges += edge_part[i] == (int32_t)xp->part ||
		    (k > 0 && (a < k || b < k));
	}
	T_CHECKF(xp->n_nodes == want_nodes, "part %u k %u: %" PRIu64
	    " nodes, want %" PRIu64, xp->part, k, xp->n_nodes, want_nodes);
	T_CHECKF(xp->n_edges == want_edges, "part %u k %u: %" PRIu64
	    " edges, want %" PRIu64, xp->part, k, xp->n_edges, want_edges);
	for (i = 0; i < xp->n_nodes; i++)
		T_CHECK(xp->hops[i] == dist[xp->nodes[i]]);
	for (i = 0; i < xp->n_edges; i++) {
		int32_t e = xp->edge_ids[i];
		uint8_t a = dist[hrt[3 * e]], b = dist[hrt[3 * e + 2]];

		T_CHECK(edge_part[e] == (int32_t)xp->part ||
		    (k > 0 && (a < k || b < k)));
	}
	free(dist);
}

static void
test_exact_khop(void)
{
	uint64_t n = 400, m = 900;
	int32_t *hrt = random_graph(n, m, 4, 1);
	int method, edges;
	uint32_t k, p, P;

	for (method = 0; method < 2; method++)
		for (edges = 0; edges < 3; edges++) {
			struct kg_partition_opts o = KG_PARTITION_OPTS_INIT;
			struct kg_partition pt = KG_PARTITION_INIT;
			struct kg_expand x = KG_EXPAND_INIT;
			struct kg_expand_part xp = KG_EXPAND_PART_INIT;
			uint32_t *core = kg_xcalloc(m, sizeof(*core));
			uint64_t i;

			o.method = (enum kg_part_method)method;
			o.edges = (enum kg_edge_assign)edges;
			o.nparts = P = 3 + (uint32_t)edges;
			T_CHECK(kg_partition_compute(&pt, n, hrt, m, &o) == 0);
			T_CHECK(kg_expand_init(&x, n, hrt, m, pt.node_part,
			    pt.edge_part, P) == 0);
			for (k = 0; k <= 3; k++) {
				struct kg_expand_opts eo = KG_EXPAND_OPTS_INIT;

				eo.hops = k;
				for (p = 0; p < P; p++) {
					T_CHECK(kg_expand_part(&x, p, &eo,
					    &xp) == 0);
					check_local(&xp, hrt, pt.edge_part, n, m);
					check_exact(&xp, hrt, n, m, pt.node_part,
					    pt.edge_part, k);
					for (i = 0; i < xp.n_core; i++)
						core[xp.edge_ids[i]]++;
				}
			}
			/* Core in exactly one part, for each of 4 k. */
			for (i = 0; i < m; i++)
				T_CHECK(core[i] == 4);
			free(core);
			kg_expand_part_release(&xp);
			kg_expand_release(&x);
			kg_partition_release(&pt);
		}
	free(hrt);
}

/* Parts large enough for the counting sort of IDs (>= 65536). */
static void
test_large_parts(void)
{
	uint64_t n = 90000, m = 200000;
	int32_t *hrt = random_graph(n, m, 3, 8);
	struct kg_partition_opts o = KG_PARTITION_OPTS_INIT;
	struct kg_partition pt = KG_PARTITION_INIT;
	struct kg_expand x = KG_EXPAND_INIT;
	struct kg_expand_part xp = KG_EXPAND_PART_INIT;
	struct kg_expand_opts eo = KG_EXPAND_OPTS_INIT;
	uint32_t p;

	o.method = KG_PART_RANDOM;
	o.edges = KG_EDGE_TAIL;
	o.nparts = 2;
	T_CHECK(kg_partition_compute(&pt, n, hrt, m, &o) == 0);
	T_CHECK(kg_expand_init(&x, n, hrt, m, pt.node_part, pt.edge_part,
	    2) == 0);
	eo.hops = 1;
	for (p = 0; p < 2; p++) {
		T_CHECK(kg_expand_part(&x, p, &eo, &xp) == 0);
		T_CHECK(xp.n_seeds >= 65536 && xp.n_edges - xp.n_core >= 65536);
		check_local(&xp, hrt, pt.edge_part, n, m);
		check_exact(&xp, hrt, n, m, pt.node_part, pt.edge_part, 1);
	}
	kg_expand_part_release(&xp);
	kg_expand_release(&x);
	kg_partition_release(&pt);
	free(hrt);
}

/* One part: the whole graph, every triple core. */
static void
test_one_part_whole(void)
{
	uint64_t n = 300, m = 1000, i;
	int32_t *hrt = random_graph(n, m, 3, 2);
	int32_t *zero_n = kg_xcalloc(n, sizeof(int32_t));
	int32_t *zero_m = kg_xcalloc(m, sizeof(int32_t));
	struct kg_expand x = KG_EXPAND_INIT;
	struct kg_expand_part xp = KG_EXPAND_PART_INIT;
	struct kg_expand_opts eo = KG_EXPAND_OPTS_INIT;

	eo.hops = 2;
	T_CHECK(kg_expand_init(&x, n, hrt, m, zero_n, zero_m, 1) == 0);
	T_CHECK(kg_expand_part(&x, 0, &eo, &xp) == 0);
	T_CHECK(xp.n_nodes == n && xp.n_seeds == n && xp.n_edges == m &&
	    xp.n_core == m);
	for (i = 0; i < n; i++)
		T_CHECK(xp.nodes[i] == (int32_t)i);
	for (i = 0; i < m; i++)
		T_CHECK(xp.edge_ids[i] == (int32_t)i && xp.core_mask[i]);
	T_CHECK(memcmp(xp.hrt, hrt, 3 * m * sizeof(*hrt)) == 0);
	kg_expand_part_release(&xp);
	kg_expand_release(&x);
	free(zero_n);
	free(zero_m);
	free(hrt);
}

static int
same_part(const struct kg_expand_part *a, const struct kg_expand_part *b)
{
	return a->n_nodes == b->n_nodes && a->n_edges == b->n_edges &&
	    memcmp(a->nodes, b->nodes, a->n_nodes * 4) == 0 &&
	    memcmp(a->edge_ids, b->edge_ids, a->n_edges * 4) == 0 &&
	    memcmp(a->hrt, b->hrt, a->n_edges * 12) == 0;
}

static void
test_fanout(void)
{
	uint64_t n = 2000, m = 12000, i;
	int32_t *hrt = random_graph(n, m, 5, 3);
	struct kg_partition_opts o = KG_PARTITION_OPTS_INIT;
	struct kg_partition pt = KG_PARTITION_INIT;
	struct kg_expand x = KG_EXPAND_INIT;
	struct kg_expand_part full = KG_EXPAND_PART_INIT;
	struct kg_expand_part a = KG_EXPAND_PART_INIT, b = KG_EXPAND_PART_INIT;
	struct kg_expand_opts eo = KG_EXPAND_OPTS_INIT;
	uint8_t *dist = kg_xmalloc(n);
	uint32_t p;

	o.method = KG_PART_RANDOM;
	o.nparts = 8;
	T_CHECK(kg_partition_compute(&pt, n, hrt, m, &o) == 0);
	T_CHECK(kg_expand_init(&x, n, hrt, m, pt.node_part, pt.edge_part,
	    8) == 0);
	for (p = 0; p < 8; p++) {
		uint64_t bound = 0;

		eo.hops = 2;
		eo.nfanout = 0;
		T_CHECK(kg_expand_part(&x, p, &eo, &full) == 0);
		/* Caps above every degree change nothing. */
		eo.nfanout = 2;
		eo.fanout[0] = eo.fanout[1] = (uint32_t)m;
		T_CHECK(kg_expand_part(&x, p, &eo, &a) == 0);
		T_CHECK(same_part(&full, &a));
		/* Small caps: same seed same result, another seed another. */
		eo.fanout[0] = 3;
		eo.fanout[1] = 2;
		eo.seed = 1;
		T_CHECK(kg_expand_part(&x, p, &eo, &a) == 0);
		T_CHECK(kg_expand_part(&x, p, &eo, &b) == 0);
		T_CHECK(same_part(&a, &b));
		check_local(&a, hrt, pt.edge_part, n, m);
		eo.seed = 2;
		T_CHECK(kg_expand_part(&x, p, &eo, &b) == 0);
		T_CHECK(!same_part(&a, &b));
		T_CHECK(a.n_edges < full.n_edges && a.n_nodes <= full.n_nodes);
		T_CHECK(a.n_seeds == full.n_seeds && a.n_core == full.n_core);
		/* Hops never undercut the true distance; the sampled triples
		 * stay within the caps. */
		brute_dist(hrt, n, m, pt.node_part, pt.edge_part, p, 2, dist);
		for (i = 0; i < a.n_nodes; i++) {
			T_CHECK(a.hops[i] <= 2 && a.hops[i] >= dist[a.nodes[i]]);
			if (a.hops[i] < 2)
				bound += a.hops[i] == 0 ? 3 : 2;
		}
		T_CHECK(a.n_edges - a.n_core <= bound);
		for (i = a.n_core; i < a.n_edges; i++) {
			int32_t lh = a.hrt[3 * i], lt = a.hrt[3 * i + 2];

			T_CHECK(a.hops[lh] < 2 || a.hops[lt] < 2);
		}
	}
	free(dist);
	kg_expand_part_release(&full);
	kg_expand_part_release(&a);
	kg_expand_part_release(&b);
	kg_expand_release(&x);
	kg_partition_release(&pt);
	free(hrt);
}


/*
 * What a rank's GNN sampler reads: with k = 2 hops and no caps, every
 * node the sampler can reach from the part's seeds in the whole graph
 * (fan-outs 25, 10 reach two hops: here fan-outs above every degree, the
 * worst case) is in the part, and every seed and hop-1 node has its
 * whole message list there, so sampling inside the part draws as in the
 * whole graph.  With caps (either kind) the sampler run on the part's
 * own graph reaches only the part's nodes, and every node within k - 1
 * hops keeps at least min(degree, cap) of its triples.
 */
static void
test_sampler_inside_part(void)
{
	static const uint32_t fan[2] = { 1000, 1000 };
	uint64_t n = 600, m = 3000, i, mn, mm;
	int32_t *hrt = random_graph(n, m, 4, 11);
	struct kg_partition_opts o = KG_PARTITION_OPTS_INIT;
	struct kg_partition pt = KG_PARTITION_INIT;
	struct kg_expand x = KG_EXPAND_INIT;
	struct kg_expand_part xp = KG_EXPAND_PART_INIT;
	struct kg_expand_opts eo = KG_EXPAND_OPTS_INIT;
	struct kg_gnn_graph whole = KG_GNN_GRAPH_INIT;
	uint8_t *in = kg_xmalloc(n);
	uint32_t p;
	int mode;

	o.method = KG_PART_RANDOM;
	o.nparts = 3;
	T_CHECK(kg_partition_compute(&pt, n, hrt, m, &o) == 0);
	T_CHECK(kg_expand_init(&x, n, hrt, m, pt.node_part, pt.edge_part,
	    3) == 0);
	kg_gnn_graph_build(&whole, n, 4, hrt, m);
	for (mode = 0; mode < 3; mode++)
		for (p = 0; p < 3; p++) {
			struct kg_gnn_graph local = KG_GNN_GRAPH_INIT;
			struct kg_gnn_sampler sb = KG_GNN_SAMPLER_INIT;
			const struct kg_gnn_graph *g;
			int32_t *seeds;
			struct kg_rng r;

			eo.hops = 2;
			eo.nfanout = mode ? 2 : 0;
			eo.fanout[0] = 4;
			eo.fanout[1] = 2;
			eo.cap_new = mode == 2;
			T_CHECK(kg_expand_part(&x, p, &eo, &xp) == 0);
			memset(in, 0, n);
			for (i = 0; i < xp.n_nodes; i++)
				in[xp.nodes[i]] = 1;
			kg_gnn_graph_build(&local, xp.n_nodes, 4, xp.hrt,
			    xp.n_edges);
			/* Uncapped: the sampler in the whole graph; capped: in
			 * the part, from the same seeds. */
			g = mode ? &local : &whole;
			seeds = kg_xmallocarray(xp.n_seeds + 1, sizeof(*seeds));
			for (i = 0; i < xp.n_seeds; i++)
				seeds[i] = mode ? (int32_t)i : xp.nodes[i];
			kg_gnn_sample_bounds(xp.n_seeds, fan, 2, g, &mn, &mm);
			kg_gnn_sampler_init(&sb, g, mn, mm, 1000);
			kg_rng_seed(&r, 5, p);
			kg_gnn_sample(&sb, g, fan, 2, NULL, seeds, xp.n_seeds,
			    &r);
			for (i = 0; i < sb.g.n_nodes; i++) {
				int32_t v = sb.nodes[i];

				T_CHECK(mode ? (uint64_t)v < xp.n_nodes :
				    in[v] != 0);
			}
			/* Message lists of the nodes within one hop. */
			for (i = 0; i < xp.n_nodes; i++) {
				uint64_t dl = local.off[i + 1] - local.off[i];
				uint64_t v = (uint64_t)xp.nodes[i];
				uint64_t dw = whole.off[v + 1] - whole.off[v];
				uint64_t cap = xp.hops[i] == 0 ? 4 : 2;

				if (xp.hops[i] >= 2)
					continue;
				if (mode == 0)
					T_CHECK(dl == dw);
				else	/* a triple is 1 or 2 messages */
					T_CHECK(dl <= dw && dl >= (dw < cap ?
					    dw : cap));
			}
			free(seeds);
			kg_gnn_sampler_release(&sb);
			kg_gnn_graph_release(&local);
		}
	kg_gnn_graph_release(&whole);
	kg_expand_part_release(&xp);
	kg_expand_release(&x);
	kg_partition_release(&pt);
	free(in);
	free(hrt);
}

/* cap_new: a triple between two entities the part holds already costs
 * no entity and is always taken (every triple between two seeds is in
 * the part), at most cap triples per node reach new entities, caps
 * above every degree change nothing, and the part is never larger than
 * the uncapped one. */
static void
test_cap_new(void)
{
	uint64_t n = 8000, m = 12000, i;
	int32_t *hrt = random_graph(n, m, 5, 3);
	struct kg_partition_opts o = KG_PARTITION_OPTS_INIT;
	struct kg_partition pt = KG_PARTITION_INIT;
	struct kg_expand x = KG_EXPAND_INIT;
	struct kg_expand_part full = KG_EXPAND_PART_INIT;
	struct kg_expand_part a = KG_EXPAND_PART_INIT, b = KG_EXPAND_PART_INIT;
	struct kg_expand_opts eo = KG_EXPAND_OPTS_INIT;
	uint8_t *seed = kg_xmalloc(n), *got = kg_xmalloc(m);
	uint32_t p;

	o.method = KG_PART_RANDOM;
	o.nparts = 8;
	T_CHECK(kg_partition_compute(&pt, n, hrt, m, &o) == 0);
	T_CHECK(kg_expand_init(&x, n, hrt, m, pt.node_part, pt.edge_part,
	    8) == 0);
	for (p = 0; p < 8; p++) {
		uint64_t nseed_tri = 0, new1 = 0, new2 = 0;

		eo.hops = 2;
		eo.nfanout = 0;
		eo.cap_new = 0;
		T_CHECK(kg_expand_part(&x, p, &eo, &full) == 0);
		eo.nfanout = 2;
		eo.cap_new = 1;
		eo.fanout[0] = eo.fanout[1] = (uint32_t)m;
		T_CHECK(kg_expand_part(&x, p, &eo, &a) == 0);
		T_CHECK(same_part(&full, &a));
		eo.fanout[0] = 2;
		eo.fanout[1] = 1;
		eo.seed = 4;
		T_CHECK(kg_expand_part(&x, p, &eo, &a) == 0);
		T_CHECK(kg_expand_part(&x, p, &eo, &b) == 0);
		T_CHECK(same_part(&a, &b));
		check_local(&a, hrt, pt.edge_part, n, m);
		T_CHECK(a.n_nodes < full.n_nodes && a.n_seeds == full.n_seeds);
		memset(seed, 0, n);
		memset(got, 0, m);
		for (i = 0; i < a.n_seeds; i++)
			seed[a.nodes[i]] = 1;
		for (i = 0; i < a.n_edges; i++)
			got[a.edge_ids[i]] = 1;
		for (i = 0; i < m; i++)
			if (seed[hrt[3 * i]] && seed[hrt[3 * i + 2]]) {
				nseed_tri++;
				T_CHECK(got[i]);
			}
		T_CHECK(nseed_tri > 0);
		for (i = a.n_seeds; i < a.n_nodes; i++) {
			new1 += a.hops[i] == 1;
			new2 += a.hops[i] == 2;
		}
		T_CHECK(new1 <= 2 * a.n_seeds && new2 <= new1);
	}
	free(seed);
	free(got);
	kg_expand_part_release(&full);
	kg_expand_part_release(&a);
	kg_expand_part_release(&b);
	kg_expand_release(&x);
	kg_partition_release(&pt);
	free(hrt);
}

/* ---- writing parts and slicing features, read back ---- */

static void
put(const char *dir, const char *name, enum kg_dtype dt, int ndim,
    const uint64_t *shape, const void *data)
{
	char *path = kg_path_join(dir, name);

	T_CHECK(kg_npy_write(path, dt, ndim, shape, data) == 0);
	free(path);
}

static int
get(const char *dir, const char *name, struct kg_npy *a)
{
	char *path = kg_path_join(dir, name);
	int rc = kg_npy_read(path, a);

	free(path);
	return rc;
}

static void
test_write_features(void)
{
	uint64_t n = 120, m = 500, i, j, nnz = 0;
	int32_t *hrt = random_graph(n, m, 3, 4);
	const char *tmp = t_tmpdir();
	char *fdir = kg_path_join(tmp, "feat"), *odir = kg_path_join(tmp, "x");
	float *dense = kg_xmallocarray(n * 3, sizeof(float));
	int64_t *off = kg_xmallocarray(n + 1, sizeof(int64_t));
	int32_t *off32 = kg_xmallocarray(n + 1, sizeof(int32_t));
	int32_t *idx = kg_xmallocarray(3 * n, sizeof(int32_t));
	float *val = kg_xmallocarray(3 * n, sizeof(float));
	int32_t junk[7] = { 0 };
	uint64_t s[2];
	struct kg_partition_opts o = KG_PARTITION_OPTS_INIT;
	struct kg_partition pt = KG_PARTITION_INIT;
	struct kg_expand x = KG_EXPAND_INIT;
	struct kg_expand_opts eo = KG_EXPAND_OPTS_INIT;
	struct kg_expand_stats st = KG_EXPAND_STATS_INIT;
	struct kg_manifest man = KG_MANIFEST_INIT;
	uint64_t sum_nodes = 0;
	uint32_t p;

	T_CHECK(mkdir(fdir, 0755) == 0 && mkdir(odir, 0755) == 0);
	for (i = 0; i < n; i++) {
		for (j = 0; j < 3; j++)
			dense[3 * i + j] = (float)(10 * i + j);
		off[i] = (int64_t)nnz;
		for (j = 0; j < i % 4; j++) {
			idx[nnz] = (int32_t)(i * 7 + j);
			val[nnz++] = (float)i + 0.5f;
		}
	}
	off[n] = (int64_t)nnz;
	for (i = 0; i <= n; i++)
		off32[i] = (int32_t)off[i];
	s[0] = n;
	s[1] = 3;
	put(fdir, "dense.npy", KG_DT_F4, 2, s, dense);
	s[0] = n + 1;
	put(fdir, "cat_offsets.npy", KG_DT_I8, 1, s, off);
	put(fdir, "tag_offsets.npy", KG_DT_I4, 1, s, off32);
	s[0] = nnz;
	put(fdir, "cat_indices.npy", KG_DT_I4, 1, s, idx);
	put(fdir, "cat_values.npy", KG_DT_F4, 1, s, val);
	put(fdir, "tag_indices.npy", KG_DT_I4, 1, s, idx);
	s[0] = 7;
	put(fdir, "vocab_sizes.npy", KG_DT_I4, 1, s, junk);

	o.nparts = 3;
	T_CHECK(kg_partition_compute(&pt, n, hrt, m, &o) == 0);
	T_CHECK(kg_expand_init(&x, n, hrt, m, pt.node_part, pt.edge_part,
	    3) == 0);
	eo.hops = 1;
	kg_setprogname("kg-expand");
	kg_manifest_init(&man, 0, NULL);
	kg_error_mute(1);
	T_CHECK(kg_expand_write_all(&x, &eo, odir, fdir, &man, 0, NULL, 0,
	    &st) == 0);
	kg_error_mute(0);
	T_CHECK(kg_manifest_get(&man, "files.part-002/features/dense.npy") ==
	    NULL);	/* dotted lookup cannot see it; check via object */
	T_CHECK(json_object_get(json_object_get(man.root, "files"),
	    "part-002/features/cat_values.npy") != NULL);
	T_CHECK(json_object_get(json_object_get(man.root, "files"),
	    "part-000/features/vocab_sizes.npy") == NULL);
	for (p = 0; p < 3; p++) {
		char name[64];
		char *pdir, *pf;
		struct kg_npy nodes = KG_NPY_INIT, d = KG_NPY_INIT;
		struct kg_npy co = KG_NPY_INIT, ci = KG_NPY_INIT;
		struct kg_npy cv = KG_NPY_INIT, to = KG_NPY_INIT;
		struct kg_manifest pm = KG_MANIFEST_INIT;
		uint64_t nl;

		snprintf(name, sizeof(name), "part-%03u", p);
		pdir = kg_path_join(odir, name);
		pf = kg_path_join(pdir, "features");
		T_CHECK(kg_manifest_load(&pm, pdir, "kg-expand") == 0);
		T_CHECK(kg_manifest_verify(&pm, pdir, 1) == 0);
		kg_manifest_release(&pm);
		T_CHECK(get(pdir, "nodes.npy", &nodes) == 0);
		T_CHECK(get(pf, "dense.npy", &d) == 0);
		T_CHECK(get(pf, "cat_offsets.npy", &co) == 0);
		T_CHECK(get(pf, "cat_indices.npy", &ci) == 0);
		T_CHECK(get(pf, "cat_values.npy", &cv) == 0);
		T_CHECK(get(pf, "tag_offsets.npy", &to) == 0);
		nl = nodes.shape[0];
		sum_nodes += nl;
		T_CHECK(nl == st.part_nodes[p]);
		T_CHECK(d.shape[0] == nl && d.shape[1] == 3 &&
		    d.dtype == KG_DT_F4);
		T_CHECK(co.shape[0] == nl + 1 && co.dtype == KG_DT_I8);
		T_CHECK(to.shape[0] == nl + 1 && to.dtype == KG_DT_I4);
		if (d.shape[0] == nl && co.shape[0] == nl + 1 &&
		    to.shape[0] == nl + 1) {
			const int32_t *g = nodes.data;
			const float *df = d.data, *vf = cv.data;
			const int64_t *lo = co.data;
			const int32_t *li = ci.data, *lo32 = to.data;

			for (i = 0; i < nl; i++) {
				int64_t len = off[g[i] + 1] - off[g[i]];

				for (j = 0; j < 3; j++)
					T_CHECK(df[3 * i + j] ==
					    dense[3 * g[i] + j]);
				T_CHECK(lo[i + 1] - lo[i] == len);
				T_CHECK(lo32[i] == (int32_t)lo[i]);
				for (j = 0; (int64_t)j < len; j++) {
					T_CHECK(li[lo[i] + j] ==
					    idx[off[g[i]] + j]);
					T_CHECK(vf[lo[i] + j] ==
					    val[off[g[i]] + j]);
				}
			}
			T_CHECK((uint64_t)lo[nl] == ci.shape[0] &&
			    ci.shape[0] == cv.shape[0]);
		}
		kg_npy_release(&nodes);
		kg_npy_release(&d);
		kg_npy_release(&co);
		kg_npy_release(&ci);
		kg_npy_release(&cv);
		kg_npy_release(&to);
		free(pdir);
		free(pf);
	}
	T_CHECK(sum_nodes == st.sum_nodes);
	T_NEAR(st.node_replication, (double)sum_nodes / (double)n, 1e-12);
	kg_manifest_release(&man);
	kg_expand_stats_release(&st);
	kg_expand_release(&x);
	kg_partition_release(&pt);
	free(dense);
	free(off);
	free(off32);
	free(idx);
	free(val);
	free(fdir);
	free(odir);
	free(hrt);
}

/* A broken CSR group is refused. */
static void
test_bad_features(void)
{
	uint64_t n = 20, m = 40, s[1];
	int32_t *hrt = random_graph(n, m, 2, 6);
	const char *tmp = t_tmpdir();
	char *fdir = kg_path_join(tmp, "badfeat"), *odir = kg_path_join(tmp, "y");
	int64_t off[21];
	int32_t idx[5] = { 0 };
	int32_t *zero_n = kg_xcalloc(n, sizeof(int32_t));
	int32_t *zero_m = kg_xcalloc(m, sizeof(int32_t));
	struct kg_expand x = KG_EXPAND_INIT;
	struct kg_expand_opts eo = KG_EXPAND_OPTS_INIT;
	struct kg_expand_stats st = KG_EXPAND_STATS_INIT;
	struct kg_manifest man = KG_MANIFEST_INIT;
	uint64_t i;

	T_CHECK(mkdir(fdir, 0755) == 0 && mkdir(odir, 0755) == 0);
	for (i = 0; i <= n; i++)
		off[i] = (int64_t)(i < 10 ? i : 4);	/* decreasing */
	s[0] = n + 1;
	put(fdir, "x_offsets.npy", KG_DT_I8, 1, s, off);
	s[0] = 5;
	put(fdir, "x_indices.npy", KG_DT_I4, 1, s, idx);
	T_CHECK(kg_expand_init(&x, n, hrt, m, zero_n, zero_m, 1) == 0);
	kg_manifest_init(&man, 0, NULL);
	kg_error_mute(1);
	T_CHECK(kg_expand_write_all(&x, &eo, odir, fdir, &man, 0, NULL, 0,
	    &st) == -1);
	T_CHECK(strstr(kg_error_last(), "x_offsets.npy: offsets not "
	    "increasing") != NULL);
	kg_error_mute(0);
	kg_manifest_release(&man);
	kg_expand_stats_release(&st);
	kg_expand_release(&x);
	free(zero_n);
	free(zero_m);
	free(fdir);
	free(odir);
	free(hrt);
}

int
main(void)
{
	T_RUN(test_exact_khop);
	T_RUN(test_large_parts);
	T_RUN(test_one_part_whole);
	T_RUN(test_fanout);
	T_RUN(test_sampler_inside_part);
	T_RUN(test_cap_new);
	T_RUN(test_write_features);
	T_RUN(test_bad_features);
	return T_DONE();
}
