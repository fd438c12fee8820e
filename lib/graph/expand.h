/*
 * expand: self-sufficient partitions for GNN training (kg-expand), after
 * the Ray paper's scheme: each part gets its core triples plus the k-hop
 * neighbourhood that a k-layer encoder reads.
 *
 * For part p, with the training triples as an undirected multigraph
 * (messages flow along in- and out-edges):
 *   seeds (hop 0)  the entities p owns (node_part == p) and the endpoints
 *                  of p's core triples (edge_part == p);
 *   hop i + 1      every entity reached from a hop-i entity through one of
 *                  the triples taken at hop i;
 *   triples        the core triples, plus the triples taken at hops 0 ..
 *                  k-1: without fan-out caps all triples incident to an
 *                  entity at hop < k, which is exactly what k rounds of
 *                  message passing towards the seeds read; with a cap c_i
 *                  for hop i, at most c_i triples drawn without
 *                  replacement among each hop-i entity's incident triples
 *                  (all of them when it has no more than c_i); with
 *                  cap_new the cap counts only the triples that would
 *                  add an entity: a hop-i entity takes every triple to
 *                  an entity the part holds already (seeds, or entities
 *                  reached so far, in order of (hop, global ID)) and at
 *                  most c_i of the others.
 * Sampling uses one RNG stream per part, seeded from (seed, part), so the
 * result depends on the seed only.
 *
 * Local numbering: entities in order of (hop, global ID); the seeds are
 * local IDs [0, n_seeds) and form the part's negative-sampling pool.
 * Triples: the core triples first in training-row order, then the others
 * in training-row order.
 *
 * Output (kg_expand_write_all), one directory part-NNN/ per part holding
 * nodes.npy (int32 [n]: local -> global entity ID of the dataset),
 * hops.npy (uint8 [n]), owner.npy (int32 [n]: the part owning each
 * entity, for synchronising replicated entities), neg_pool.npy (int32
 * [n_seeds] local IDs),
 * edges.npy (int32 [m, 3] local head, relation, local tail),
 * edge_ids.npy (int32 [m] training row), core_mask.npy (uint8 [m], 1 for
 * core triples), features/ (see below) and its own manifest.json.
 *
 * Features: the feature directory is read by attrs/features.h's
 * kg_features_dir_open; every .npy of it whose first dimension is
 * n_entities is sliced by row (row i of the slice is the row of local
 * entity i); every CSR group X_offsets.npy (int32/int64 [n_entities + 1])
 * + X_indices.npy, plus any X_*.npy whose first dimension is the number of
 * stored entries, is sliced into a local CSR group of the same names.
 * Other files are skipped with a warning.
 */
#ifndef KG_EXPAND_H
#define KG_EXPAND_H

#include <stdint.h>
#include <stdio.h>

#include "graph/graph.h"
#include "io/manifest.h"

#define KG_EXPAND_MAX_HOPS 8

struct kg_expand_opts {
	uint32_t hops;
	uint32_t nfanout;	/* 0: no caps, else == hops */
	uint32_t fanout[KG_EXPAND_MAX_HOPS];
	uint64_t seed;
	int cap_new;		/* caps count triples to new entities only */
};

#define KG_EXPAND_OPTS_INIT { .hops = 1 }

/* Shared read-only inputs plus scratch space reused for every part. */
struct kg_expand {
	uint64_t n_nodes;
	uint64_t n_edges;
	uint32_t nparts;
	const int32_t *hrt;
	const int32_t *node_part;
	const int32_t *edge_part;
	struct kg_incidence inc;
	uint64_t *core_off;	/* [nparts + 1] into core */
	uint32_t *core;		/* training rows grouped by edge_part */
	uint64_t *own_off;	/* [nparts + 1] into own */
	uint32_t *own;		/* entities grouped by node_part */
	uint8_t *dist;		/* [n_nodes] hop, 255 = not reached */
	int32_t *local;		/* [n_nodes] local ID or -1 */
	uint8_t *taken;		/* [n_edges] triple already selected */
	uint32_t *sample;	/* scratch for sampling an incidence list */
	uint64_t sample_cap;
	uint64_t *radix;	/* [65536] counters for sorting IDs */
	int32_t *radix_tmp;	/* scratch for sorting IDs */
	uint64_t radix_cap;
};

#define KG_EXPAND_INIT { 0 }

/* One expanded part; arrays are owned and reused across calls. */
struct kg_expand_part {
	uint32_t part;
	uint64_t n_nodes;
	uint64_t n_seeds;
	uint64_t n_edges;
	uint64_t n_core;
	int32_t *nodes;		/* [n_nodes] global IDs */
	uint8_t *hops;		/* [n_nodes] */
	int32_t *hrt;		/* [n_edges * 3] local triples */
	int32_t *edge_ids;	/* [n_edges] training rows */
	uint8_t *core_mask;	/* [n_edges] */
	uint64_t cap_nodes, cap_edges;
};

#define KG_EXPAND_PART_INIT { 0 }

/*
 * Prepare for n_edges training triples hrt over n_nodes entities with
 * their parts (node_part, edge_part in [0, nparts)).  The arrays are
 * borrowed and must outlive x.  0, or -1 after kg_error().
 */
int kg_expand_init(struct kg_expand *x, uint64_t n_nodes, const int32_t *hrt,
    uint64_t n_edges, const int32_t *node_part, const int32_t *edge_part,
    uint32_t nparts);
void kg_expand_release(struct kg_expand *x);

/* Expand part "part" into *out.  0, or -1 after kg_error() (bad opts). */
int kg_expand_part(struct kg_expand *x, uint32_t part,
    const struct kg_expand_opts *o, struct kg_expand_part *out);
void kg_expand_part_release(struct kg_expand_part *xp);

/* Totals over all parts, filled by kg_expand_write_all. */
struct kg_expand_stats {
	uint32_t nparts;
	uint64_t *part_nodes, *part_edges, *part_core, *part_seeds;
	uint64_t sum_nodes, sum_edges;
	double node_replication;	/* sum_nodes / n_entities */
	double edge_replication;	/* sum_edges / n_train */
	double node_max_over_mean;
	double edge_max_over_mean;
	double seconds;
};

#define KG_EXPAND_STATS_INIT { 0 }

void kg_expand_stats_release(struct kg_expand_stats *st);

/*
 * Expand every part and write part-NNN/ directories into "dir" (an
 * outdir's temporary), slicing the feature directory "features" when not
 * NULL.  Every file is recorded in m (as "part-NNN/name"); the statistics
 * go to *st and m's figures.  "progress" prints one line per part on
 * stderr.  0 or -1 after kg_error().
 */
int kg_expand_write_all(struct kg_expand *x, const struct kg_expand_opts *o,
    const char *dir, const char *features, struct kg_manifest *m,
    int argc, char *const argv[], int progress, struct kg_expand_stats *st);

/* Print the statistics as a small table (for stderr). */
void kg_expand_print_stats(const struct kg_expand_stats *st, FILE *fp);

#endif
