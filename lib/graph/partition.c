#include "graph/partition.h"

#include <inttypes.h>
#include <math.h>
#include <metis.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"
#include "core/util.h"

static const char *const method_names[] = { "metis", "random" };
static const char *const assign_names[] = { "head", "tail", "vertex-cut" };

const char *
kg_part_method_name(enum kg_part_method m)
{
	return (unsigned)m < KG_ARRAY_LEN(method_names) ? method_names[m] : "?";
}

int
kg_part_method_parse(const char *s, enum kg_part_method *m)
{
	size_t i;

	for (i = 0; i < KG_ARRAY_LEN(method_names); i++)
		if (strcmp(s, method_names[i]) == 0) {
			*m = (enum kg_part_method)i;
			return 0;
		}
	return -1;
}

const char *
kg_edge_assign_name(enum kg_edge_assign a)
{
	return (unsigned)a < KG_ARRAY_LEN(assign_names) ? assign_names[a] : "?";
}

int
kg_edge_assign_parse(const char *s, enum kg_edge_assign *a)
{
	size_t i;

	for (i = 0; i < KG_ARRAY_LEN(assign_names); i++)
		if (strcmp(s, assign_names[i]) == 0) {
			*a = (enum kg_edge_assign)i;
			return 0;
		}
	return -1;
}

static const char *
metis_status(int rc)
{
	switch (rc) {
	case METIS_ERROR_INPUT:
		return "erroneous input";
	case METIS_ERROR_MEMORY:
		return "out of memory";
	default:
		return "internal error";
	}
}

static int
part_metis(uint64_t n, const int32_t *hrt, uint64_t n_edges, uint32_t nparts,
    const struct kg_partition_opts *o, int32_t *part, int64_t *objval)
{
	struct kg_csr g = KG_CSR_INIT;
	idx_t nvtxs = (idx_t)n, ncon, np = (idx_t)nparts, obj = 0;
	idx_t options[METIS_NOPTIONS];
	idx_t *xadj, *adjncy, *vwgt, *where;
	real_t ubvec[2];
	uint64_t v, e, total_deg = 0;
	int rc;

	if (kg_csr_symmetric(&g, n, hrt, n_edges) < 0)
		return -1;
	xadj = kg_xmallocarray(n + 1, sizeof(*xadj));
	adjncy = kg_xmallocarray(g.off[n] ? g.off[n] : 1, sizeof(*adjncy));
	vwgt = kg_xcalloc(2 * n, sizeof(*vwgt));
	where = kg_xmallocarray(n, sizeof(*where));
	for (v = 0; v <= n; v++)
		xadj[v] = (idx_t)g.off[v];
	for (e = 0; e < g.off[n]; e++)
		adjncy[e] = (idx_t)g.adj[e];
	kg_csr_release(&g);
	/* Constraint 0 balances entities, constraint 1 the training triples
	 * (multi-edges and self-loops count: they are work for the part). */
	for (v = 0; v < n; v++)
		vwgt[2 * v] = 1;
	for (e = 0; e < n_edges; e++) {
		vwgt[2 * (uint64_t)hrt[3 * e] + 1]++;
		vwgt[2 * (uint64_t)hrt[3 * e + 2] + 1]++;
		total_deg += 2;
	}
	if (total_deg >= (1ULL << 31)) {
		kg_error("%" PRIu64 " triples overflow 32-bit METIS weights",
		    n_edges);
		rc = -1;
		goto out;
	}
	ncon = total_deg > 0 ? 2 : 1;
	if (ncon == 1)
		for (v = 0; v < n; v++)
			vwgt[v] = 1;
	ubvec[0] = ubvec[1] = (real_t)(1.0 + o->imbalance);
	METIS_SetDefaultOptions(options);
	options[METIS_OPTION_SEED] = (idx_t)(o->seed & 0x7fffffff);
	options[METIS_OPTION_NUMBERING] = 0;
	rc = METIS_PartGraphKway(&nvtxs, &ncon, xadj, adjncy, vwgt, NULL, NULL,
	    &np, NULL, ubvec, options, &obj, where);
	if (rc != METIS_OK) {
		kg_error("METIS_PartGraphKway failed: %s (code %d)",
		    metis_status(rc), rc);
		rc = -1;
		goto out;
	}
	for (v = 0; v < n; v++) {
		if (where[v] < 0 || where[v] >= np) {
			kg_error("METIS returned part %d for entity %" PRIu64,
			    (int)where[v], v);
			rc = -1;
			goto out;
		}
		part[v] = (int32_t)where[v];
	}
	*objval = obj;
	rc = 0;
out:
	free(xadj);
	free(adjncy);
	free(vwgt);
	free(where);
	return rc;
}

static void
part_random(uint64_t n, uint32_t nparts, uint64_t seed, int32_t *part)
{
	struct kg_rng rng;
	uint32_t *perm = kg_xmallocarray(n, sizeof(*perm));
	uint64_t i;

	kg_rng_stream(&rng, seed, KG_STREAM_PARTITION, 0, 0, 0, 0);
	for (i = 0; i < n; i++)
		perm[i] = (uint32_t)i;
	for (i = n; i > 1; i--) {
		uint64_t j = kg_rng_below(&rng, i);
		uint32_t tmp = perm[i - 1];

		perm[i - 1] = perm[j];
		perm[j] = tmp;
	}
	/* Equal runs of the shuffled order: sizes differ by at most one. */
	for (i = 0; i < n; i++)
		part[perm[i]] = (int32_t)((unsigned __int128)i * nparts / n);
	free(perm);
}

int
kg_partition_vertices(uint64_t n_nodes, const int32_t *hrt, uint64_t n_edges,
    const struct kg_partition_opts *o, int32_t *part, int64_t *objval)
{
	*objval = -1;
	if (o->nparts < 1 || o->nparts > n_nodes) {
		kg_error("cannot cut %" PRIu64 " entities into %" PRIu32
		    " parts", n_nodes, o->nparts);
		return -1;
	}
	if (n_nodes >= INT32_MAX) {
		kg_error("%" PRIu64 " entities exceed 32-bit IDs", n_nodes);
		return -1;
	}
	if (o->nparts == 1) {
		memset(part, 0, n_nodes * sizeof(*part));
		return 0;
	}
	if (o->method == KG_PART_RANDOM) {
		part_random(n_nodes, o->nparts, o->seed, part);
		return 0;
	}
	return part_metis(n_nodes, hrt, n_edges, o->nparts, o, part, objval);
}

/* The greedy vertex-cut described in partition.h. */
static void
assign_vertex_cut(struct kg_partition *pt, const int32_t *hrt, double lambda)
{
	uint32_t P = pt->nparts, p;
	uint64_t n = pt->n_nodes, words = (P + 63) / 64, e, v;
	uint64_t *rep = kg_xcalloc(n * words, sizeof(*rep));
	uint64_t *deg = kg_xcalloc(n, sizeof(*deg));
	uint64_t *load = pt->part_edges, maxload = 0, minload;

	for (v = 0; v < n; v++)
		rep[v * words + (uint32_t)pt->node_part[v] / 64] |=
		    1ULL << ((uint32_t)pt->node_part[v] % 64);
	for (e = 0; e < pt->n_edges; e++) {
		deg[hrt[3 * e]]++;
		deg[hrt[3 * e + 2]]++;
	}
	for (e = 0; e < pt->n_edges; e++) {
		uint64_t h = (uint64_t)hrt[3 * e], t = (uint64_t)hrt[3 * e + 2];
		const uint64_t *rh = rep + h * words, *rt = rep + t * words;
		double th = (double)deg[h] / (double)(deg[h] + deg[t]);
		double gh = 2.0 - th, gt = 1.0 + th, best = -1.0;
		uint32_t arg = 0;

		minload = load[0];
		for (p = 1; p < P; p++)
			if (load[p] < minload)
				minload = load[p];
		for (p = 0; p < P; p++) {
			uint64_t bit = 1ULL << (p % 64);
			double s = lambda * (double)(maxload - load[p]) /
			    (1.0 + (double)(maxload - minload));

			if (rh[p / 64] & bit)
				s += gh;
			if (rt[p / 64] & bit)
				s += gt;
			if (s > best) {
				best = s;
				arg = p;
			}
		}
		pt->edge_part[e] = (int32_t)arg;
		if (++load[arg] > maxload)
			maxload = load[arg];
		rep[h * words + arg / 64] |= 1ULL << (arg % 64);
		rep[t * words + arg / 64] |= 1ULL << (arg % 64);
	}
	free(rep);
	free(deg);
}

static double
balance(const uint64_t *x, uint32_t n)
{
	uint64_t max = 0, sum = 0;
	uint32_t i;

	for (i = 0; i < n; i++) {
		sum += x[i];
		if (x[i] > max)
			max = x[i];
	}
	return sum ? (double)max * n / (double)sum : 1.0;
}

/* Relabel: part p owns the new IDs [offsets[p], offsets[p+1]), each part
 * in increasing old ID. */
static void
relabel(struct kg_partition *pt)
{
	uint32_t P = pt->nparts, p;
	uint64_t n_nodes = pt->n_nodes, v;
	int64_t *cursor;

	pt->part_nodes = kg_xcalloc(P, sizeof(*pt->part_nodes));
	pt->offsets = kg_xcalloc(P + 1, sizeof(*pt->offsets));
	for (v = 0; v < n_nodes; v++)
		pt->part_nodes[pt->node_part[v]]++;
	for (p = 0; p < P; p++)
		pt->offsets[p + 1] = pt->offsets[p] +
		    (int64_t)pt->part_nodes[p];
	cursor = kg_xmallocarray(P, sizeof(*cursor));
	memcpy(cursor, pt->offsets, P * sizeof(*cursor));
	pt->old2new = kg_xmallocarray(n_nodes, sizeof(*pt->old2new));
	pt->new2old = kg_xmallocarray(n_nodes, sizeof(*pt->new2old));
	for (v = 0; v < n_nodes; v++) {
		int64_t id = cursor[pt->node_part[v]]++;

		pt->old2new[v] = (int32_t)id;
		pt->new2old[id] = (int32_t)v;
	}
	free(cursor);
}

/* Edge assignment and the edge cut. */
static void
assign_edges(struct kg_partition *pt, const int32_t *hrt,
    const struct kg_partition_opts *o)
{
	uint64_t n_edges = pt->n_edges, e;

	pt->part_edges = kg_xcalloc(pt->nparts, sizeof(*pt->part_edges));
	pt->edge_part = kg_xmallocarray(n_edges ? n_edges : 1,
	    sizeof(*pt->edge_part));
	for (e = 0; e < n_edges; e++)
		if (pt->node_part[hrt[3 * e]] != pt->node_part[hrt[3 * e + 2]])
			pt->edge_cut++;
	if (o->edges == KG_EDGE_VERTEX_CUT && pt->nparts > 1) {
		assign_vertex_cut(pt, hrt, o->lambda);
	} else {
		int col = o->edges == KG_EDGE_TAIL ? 2 : 0;

		for (e = 0; e < n_edges; e++) {
			pt->edge_part[e] = pt->node_part[hrt[3 * e + col]];
			pt->part_edges[pt->edge_part[e]]++;
		}
	}
}

/* PBG buckets by (head part, tail part), a stable counting sort. */
static void
make_buckets(struct kg_partition *pt, const int32_t *hrt)
{
	uint32_t P = pt->nparts;
	uint64_t n_edges = pt->n_edges, nb = (uint64_t)P * P, e, v;
	int64_t *cursor;

	pt->bucket_off = kg_xcalloc(nb + 1, sizeof(*pt->bucket_off));
	for (e = 0; e < n_edges; e++) {
		uint64_t b = (uint64_t)pt->node_part[hrt[3 * e]] * P +
		    (uint64_t)pt->node_part[hrt[3 * e + 2]];

		pt->bucket_off[b + 1]++;
	}
	for (v = 0; v < nb; v++)
		pt->bucket_off[v + 1] += pt->bucket_off[v];
	cursor = kg_xmallocarray(nb, sizeof(*cursor));
	memcpy(cursor, pt->bucket_off, nb * sizeof(*cursor));
	pt->bucket_hrt = kg_xmallocarray(n_edges ? 3 * n_edges : 1,
	    sizeof(*pt->bucket_hrt));
	for (e = 0; e < n_edges; e++) {
		int32_t h = hrt[3 * e], t = hrt[3 * e + 2];
		uint64_t b = (uint64_t)pt->node_part[h] * P +
		    (uint64_t)pt->node_part[t];
		int64_t row = cursor[b]++;

		pt->bucket_hrt[3 * row] = pt->old2new[h];
		pt->bucket_hrt[3 * row + 1] = hrt[3 * e + 1];
		pt->bucket_hrt[3 * row + 2] = pt->old2new[t];
	}
	free(cursor);
}

int
kg_partition_compute(struct kg_partition *pt, uint64_t n_nodes,
    const int32_t *hrt, uint64_t n_edges, const struct kg_partition_opts *o)
{
	uint32_t P = o->nparts;
	double t0 = kg_now();

	memset(pt, 0, sizeof(*pt));
	if (P < 1 || P > n_nodes) {
		kg_error("cannot cut %" PRIu64 " entities into %" PRIu32
		    " parts", n_nodes, P);
		return -1;
	}
	if (n_edges > INT32_MAX) {
		kg_error("%" PRIu64 " training triples exceed 32-bit row IDs",
		    n_edges);
		return -1;
	}
	pt->nparts = P;
	pt->n_nodes = n_nodes;
	pt->n_edges = n_edges;
	pt->node_part = kg_xmallocarray(n_nodes, sizeof(*pt->node_part));
	if (kg_partition_vertices(n_nodes, hrt, n_edges, o, pt->node_part,
	    &pt->metis_objval) < 0) {
		kg_partition_release(pt);
		return -1;
	}
	pt->seconds_vertex = kg_now() - t0;
	relabel(pt);
	assign_edges(pt, hrt, o);
	make_buckets(pt, hrt);
	pt->node_balance = balance(pt->part_nodes, P);
	pt->edge_balance = balance(pt->part_edges, P);
	pt->inside_fraction = n_edges ?
	    1.0 - (double)pt->edge_cut / (double)n_edges : 1.0;
	pt->seconds_total = kg_now() - t0;
	return 0;
}

void
kg_partition_release(struct kg_partition *pt)
{
	free(pt->node_part);
	free(pt->offsets);
	free(pt->old2new);
	free(pt->new2old);
	free(pt->edge_part);
	free(pt->bucket_off);
	free(pt->bucket_hrt);
	free(pt->part_nodes);
	free(pt->part_edges);
	memset(pt, 0, sizeof(*pt));
}
