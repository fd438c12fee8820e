/*
 * partition_write: a computed partitioning written as a partition
 * directory with its manifest figures, and printed as a table (declared
 * in partition.h).
 */
#include "graph/partition.h"

#include <inttypes.h>

#include "core/util.h"

/* Largest bucket matrix kept in the manifest; bucket_offsets.npy has all. */
#define KG_MANIFEST_MAX_BUCKET_PARTS 32

/* The smallest and largest bucket, and the number of empty ones. */
static void
bucket_range(const struct kg_partition *pt, uint64_t *bmin, uint64_t *bmax,
    uint64_t *empty)
{
	uint64_t nb = (uint64_t)pt->nparts * pt->nparts, b;

	*bmin = UINT64_MAX;
	*bmax = *empty = 0;
	for (b = 0; b < nb; b++) {
		uint64_t s = (uint64_t)(pt->bucket_off[b + 1] -
		    pt->bucket_off[b]);

		*bmin = s < *bmin ? s : *bmin;
		*bmax = s > *bmax ? s : *bmax;
		*empty += s == 0;
	}
}

static void
set_figures(const struct kg_partition *pt, struct kg_manifest *m)
{
	uint32_t P = pt->nparts;
	uint64_t b, bmin, bmax, empty;
	json_t *book, *off, *sizes;

	bucket_range(pt, &bmin, &bmax, &empty);
	kg_manifest_set_figure_u64(m, "entities", pt->n_nodes);
	kg_manifest_set_figure_u64(m, "train_triples", pt->n_edges);
	kg_manifest_set_figure(m, "nparts", json_integer(P));
	kg_manifest_set_figure(m, "nodes_per_part",
	    kg_json_u64_array(pt->part_nodes, P));
	kg_manifest_set_figure(m, "edges_per_part",
	    kg_json_u64_array(pt->part_edges, P));
	kg_manifest_set_figure(m, "node_balance", json_real(pt->node_balance));
	kg_manifest_set_figure(m, "edge_balance", json_real(pt->edge_balance));
	kg_manifest_set_figure_u64(m, "edge_cut", pt->edge_cut);
	kg_manifest_set_figure(m, "inside_fraction",
	    json_real(pt->inside_fraction));
	if (pt->metis_objval >= 0)
		kg_manifest_set_figure(m, "metis_edge_cut",
		    json_integer(pt->metis_objval));
	kg_manifest_set_figure_u64(m, "bucket_min", bmin);
	kg_manifest_set_figure_u64(m, "bucket_max", bmax);
	kg_manifest_set_figure_u64(m, "buckets_empty", empty);
	if (P <= KG_MANIFEST_MAX_BUCKET_PARTS) {
		uint32_t i, j;

		sizes = json_array();
		for (i = 0; i < P; i++) {
			json_t *row = json_array();

			for (j = 0; j < P; j++) {
				b = (uint64_t)i * P + j;
				json_array_append_new(row, json_integer(
				    pt->bucket_off[b + 1] - pt->bucket_off[b]));
			}
			json_array_append_new(sizes, row);
		}
		kg_manifest_set_figure(m, "bucket_sizes", sizes);
	}
	kg_manifest_set_figure(m, "seconds_vertex_partition",
	    json_real(pt->seconds_vertex));
	kg_manifest_set_figure(m, "seconds", json_real(pt->seconds_total));

	book = json_object();
	off = json_array();
	for (b = 0; b <= P; b++)
		json_array_append_new(off, json_integer(pt->offsets[b]));
	json_object_set_new(book, "nparts", json_integer(P));
	json_object_set_new(book, "offsets", off);
	json_object_set_new(book, "node_part", json_string("node_part.npy"));
	json_object_set_new(book, "new2old", json_string("new2old.npy"));
	json_object_set_new(book, "old2new", json_string("old2new.npy"));
	json_object_set_new(book, "edge_part", json_string("edge_part.npy"));
	json_object_set_new(book, "buckets", json_string("train_buckets.npy"));
	json_object_set_new(book, "bucket_offsets",
	    json_string("bucket_offsets.npy"));
	json_object_set_new(m->root, "partition_book", book);
}

int
kg_partition_write(const struct kg_partition *pt, const char *dir,
    struct kg_manifest *m)
{
	uint64_t n[1] = { pt->n_nodes }, p1[1] = { pt->nparts + 1ULL };
	uint64_t ne[1] = { pt->n_edges }, tri[2] = { pt->n_edges, 3 };
	uint64_t nb[1] = { (uint64_t)pt->nparts * pt->nparts + 1 };

	if (kg_manifest_put_npy(m, dir, "node_part.npy", KG_DT_I4, 1, n,
	    pt->node_part) < 0 ||
	    kg_manifest_put_npy(m, dir, "old2new.npy", KG_DT_I4, 1, n,
	    pt->old2new) < 0 ||
	    kg_manifest_put_npy(m, dir, "new2old.npy", KG_DT_I4, 1, n,
	    pt->new2old) < 0 ||
	    kg_manifest_put_npy(m, dir, "part_offsets.npy", KG_DT_I8, 1, p1,
	    pt->offsets) < 0 ||
	    kg_manifest_put_npy(m, dir, "edge_part.npy", KG_DT_I4, 1, ne,
	    pt->edge_part) < 0 ||
	    kg_manifest_put_npy(m, dir, "train_buckets.npy", KG_DT_I4, 2, tri,
	    pt->bucket_hrt) < 0 ||
	    kg_manifest_put_npy(m, dir, "bucket_offsets.npy", KG_DT_I8, 1, nb,
	    pt->bucket_off) < 0)
		return -1;
	set_figures(pt, m);
	return 0;
}

void
kg_partition_print_stats(const struct kg_partition *pt, FILE *fp)
{
	uint64_t bmin, bmax, empty;
	uint32_t p;

	fprintf(fp, "%-6s %12s %12s\n", "part", "entities", "triples");
	for (p = 0; p < pt->nparts; p++)
		fprintf(fp, "%-6" PRIu32 " %12" PRIu64 " %12" PRIu64 "\n", p,
		    pt->part_nodes[p], pt->part_edges[p]);
	fprintf(fp, "balance (max/mean): entities %.4f, triples %.4f\n",
	    pt->node_balance, pt->edge_balance);
	fprintf(fp, "edge cut: %" PRIu64 " of %" PRIu64 " triples (%.2f%% "
	    "inside a part)\n", pt->edge_cut, pt->n_edges,
	    100.0 * pt->inside_fraction);
	/* What METIS minimised: its graph links two entities once, whatever
	 * the relations, directions and number of triples between them. */
	if (pt->metis_objval >= 0)
		fprintf(fp, "linked entity pairs split between parts: %" PRId64
		    " (what METIS minimised: a pair counts once, however many "
		    "triples link it)\n", pt->metis_objval);
	bucket_range(pt, &bmin, &bmax, &empty);
	fprintf(fp, "buckets: %" PRIu64 ", sizes %" PRIu64 " to %" PRIu64
	    "\n", (uint64_t)pt->nparts * pt->nparts, bmin, bmax);
	fprintf(fp, "time: %.3f s (vertex partitioning %.3f s)\n",
	    pt->seconds_total, pt->seconds_vertex);
}
