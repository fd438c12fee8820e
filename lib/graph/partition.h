/*
 * partition: vertex partitioning, edge assignment, relabelling and PBG
 * edge buckets of a training graph (kg-partition), and the partition book
 * that later stages read back.
 *
 * Vertex partitioning puts every entity in one of P parts:
 *   metis   METIS k-way on the simple undirected graph of the training
 *           triples (relations ignored, multi-edges merged, self-loops
 *           dropped) with two balance constraints per vertex, a weight of
 *           1 (node count) and its training degree (edge load), as
 *           DistDGL does; "imbalance" is the tolerance of both.
 *   random  a seeded shuffle cut into P equal runs (sizes differ by at
 *           most one).
 * P = 1 is the identity for both.
 *
 * Edge assignment gives every training triple exactly one part: the part
 * of its head, of its tail, or a greedy balanced vertex-cut in the spirit
 * of HDRF (Petroni et al.): triples are streamed in order and each goes to
 * the part maximising
 *     rep(h) + rep(t) + lambda * (maxload - load[p]) / (1 + maxload - minload)
 * where rep(v) = 1 + (1 - deg(v) / (deg(h) + deg(t))) when p already holds
 * a triple of v or owns v, else 0 (so low-degree vertices stay whole and
 * hubs are cut), ties to the lowest part.  It keeps a P-bit set of parts
 * per entity (n * ceil(P / 64) * 8 bytes) and costs O(P) per triple.
 *
 * Relabelling: new IDs list part 0's entities first, then part 1's, ...,
 * each part in increasing old ID, so part p owns the new IDs
 * [offsets[p], offsets[p+1]).  Buckets: triple (h, r, t) belongs to
 * bucket hp * P + tp where hp, tp are the parts of h and t (PBG);
 * bucket_hrt holds every training triple, relabelled, grouped by bucket
 * (stable within a bucket), and bucket b spans rows
 * [bucket_off[b], bucket_off[b+1]).
 *
 * Partition directory (written by kg_partition_write): node_part.npy
 * (int32 [n], by old ID), old2new.npy and new2old.npy (int32 [n]),
 * part_offsets.npy (int64 [P+1]), edge_part.npy (int32 [n_train], by
 * training row), train_buckets.npy (int32 [n_train, 3], new IDs),
 * bucket_offsets.npy (int64 [P*P+1]); the manifest holds a
 * "partition_book" object {nparts, offsets, ...} and the statistics under
 * "figures".
 */
#ifndef KG_PARTITION_H
#define KG_PARTITION_H

#include <stdint.h>
#include <stdio.h>

#include "io/manifest.h"
#include "io/npy.h"

enum kg_part_method { KG_PART_METIS, KG_PART_RANDOM };
enum kg_edge_assign { KG_EDGE_HEAD, KG_EDGE_TAIL, KG_EDGE_VERTEX_CUT };

struct kg_partition_opts {
	enum kg_part_method method;
	enum kg_edge_assign edges;
	uint32_t nparts;
	uint64_t seed;
	double imbalance;	/* METIS: allowed max/mean - 1 */
	double lambda;		/* vertex-cut balance weight */
};

#define KG_PARTITION_OPTS_INIT { .method = KG_PART_METIS, \
	.edges = KG_EDGE_HEAD, .nparts = 1, .imbalance = 0.05, .lambda = 1.0 }

/* Names used on the command line and in manifests; parse returns 0 or -1
 * (no message). */
const char *kg_part_method_name(enum kg_part_method m);
int kg_part_method_parse(const char *s, enum kg_part_method *m);
const char *kg_edge_assign_name(enum kg_edge_assign a);
int kg_edge_assign_parse(const char *s, enum kg_edge_assign *a);

/* A computed partitioning; every array is owned. */
struct kg_partition {
	uint32_t nparts;
	uint64_t n_nodes;
	uint64_t n_edges;
	int32_t *node_part;	/* [n_nodes] part of each old ID */
	int64_t *offsets;	/* [nparts + 1] */
	int32_t *old2new;	/* [n_nodes] */
	int32_t *new2old;	/* [n_nodes] */
	int32_t *edge_part;	/* [n_edges] part of each training row */
	int64_t *bucket_off;	/* [nparts * nparts + 1] */
	int32_t *bucket_hrt;	/* [n_edges * 3] relabelled, by bucket */
	/* statistics */
	uint64_t *part_nodes;	/* [nparts] entities owned */
	uint64_t *part_edges;	/* [nparts] triples assigned */
	uint64_t edge_cut;	/* triples with ends in different parts */
	int64_t metis_objval;	/* METIS cut of the simple graph, or -1 */
	double node_balance;	/* max / mean of part_nodes */
	double edge_balance;	/* max / mean of part_edges */
	double inside_fraction;	/* 1 - edge_cut / n_edges (1 if none) */
	double seconds_vertex;	/* vertex partitioning */
	double seconds_total;
};

#define KG_PARTITION_INIT { 0 }

/*
 * Partition n_nodes entities and assign the n_edges training triples hrt
 * (int32 rows h, r, t, IDs in range).  Requires 1 <= nparts <= n_nodes.
 * Returns 0, or -1 after kg_error() (bad nparts, METIS failure, sizes
 * beyond 32-bit indices) with *pt left empty.
 */
int kg_partition_compute(struct kg_partition *pt, uint64_t n_nodes,
    const int32_t *hrt, uint64_t n_edges,
    const struct kg_partition_opts *o);
void kg_partition_release(struct kg_partition *pt);

/*
 * Vertex partitioning alone: part[v] for v < n_nodes; *objval gets the
 * METIS edge cut (or -1).  0 or -1 after kg_error().
 */
int kg_partition_vertices(uint64_t n_nodes, const int32_t *hrt,
    uint64_t n_edges, const struct kg_partition_opts *o, int32_t *part,
    int64_t *objval);

/*
 * Write the arrays of pt into "dir" (an outdir's temporary), record them
 * in m, and set m's figures (statistics) and "partition_book".  0 or -1.
 */
int kg_partition_write(const struct kg_partition *pt, const char *dir,
    struct kg_manifest *m);

/* Print the statistics as a small table (for stderr). */
void kg_partition_print_stats(const struct kg_partition *pt, FILE *fp);

/*
 * A partition directory read back (mapped).  Loading checks the manifest
 * (tool kg-partition, format version, recorded shapes) and that the
 * arrays agree with each other.
 */
struct kg_partition_book {
	struct kg_manifest manifest;
	uint32_t nparts;
	uint64_t n_nodes;
	uint64_t n_edges;
	const int32_t *node_part;
	const int64_t *offsets;
	const int32_t *old2new;
	const int32_t *new2old;
	const int32_t *edge_part;
	const int64_t *bucket_off;
	const int32_t *bucket_hrt;
	struct kg_npy arr[7];
};

#define KG_PARTITION_BOOK_INIT { .manifest = KG_MANIFEST_INIT, \
	.arr = { KG_NPY_INIT } }

/*
 * Load dir (lib/graph/partition_book.c).  Every ID array is checked
 * against the counts of the manifest before use: parts in [0, P), a
 * relabelling that is a permutation giving each part its own ID range,
 * bucket offsets that grow from 0 to the number of training triples, and
 * bucket rows of entity IDs below n whose head and tail lie in the
 * bucket's two parts.  0, -1 after kg_error(), or KG_ERR_VERSION (exit 3).
 */
int kg_partition_book_load(struct kg_partition_book *b, const char *dir);
void kg_partition_book_release(struct kg_partition_book *b);

struct kg_dataset;

/*
 * Check that book b (read from pdir) was made from dataset ds: ds's
 * manifest checksum is the book's "dataset" input, the entity and
 * training-triple counts agree, and every bucket row's relation ID is
 * below ds's relation count.  0, or -1 after kg_error().
 */
int kg_partition_book_check_dataset(const struct kg_partition_book *b,
    const struct kg_dataset *ds, const char *pdir);

/* The part owning new ID "id" given P + 1 offsets (binary search). */
static inline uint32_t
kg_partition_of_new_id(const int64_t *offsets, uint32_t nparts, int64_t id)
{
	uint32_t lo = 0, hi = nparts;

	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (offsets[mid] <= id)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

#endif
