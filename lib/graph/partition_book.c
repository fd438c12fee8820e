/*
 * partition_book: a kg-partition output read back and checked (declared
 * in partition.h).
 */
#include "graph/partition.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "io/dataset.h"

static int
book_array(struct kg_partition_book *b, int slot, const char *dir,
    const char *name, enum kg_dtype dt, int ndim, uint64_t n0, uint64_t n1)
{
	char *path = kg_path_join(dir, name);
	struct kg_npy *a = &b->arr[slot];
	int rc = kg_npy_read_expect(path, dt, ndim, a);

	if (rc == 0 && (a->shape[0] != n0 ||
	    (ndim == 2 && a->shape[1] != n1))) {
		kg_error("%s: shape does not match the partition book", path);
		kg_npy_release(a);
		rc = -1;
	}
	free(path);
	return rc;
}

/* The arrays must describe one relabelling: offsets that grow from 0 to
 * n, a permutation old2new / new2old, and each part's IDs its own. */
static int
check_relabelling(const struct kg_partition_book *b)
{
	uint64_t P = b->nparts, n = b->n_nodes, i;

	if (b->offsets[0] != 0 || b->offsets[P] != (int64_t)n)
		return -1;
	for (i = 0; i < P; i++)
		if (b->offsets[i + 1] < b->offsets[i])
			return -1;
	for (i = 0; i < n; i++) {
		int32_t p = b->node_part[i], id = b->old2new[i];

		if (p < 0 || (uint64_t)p >= P || id < 0 || (uint64_t)id >= n ||
		    b->new2old[id] != (int32_t)i ||
		    id < b->offsets[p] || id >= b->offsets[p + 1])
			return -1;
	}
	return 0;
}

/*
 * Every training row has a part, and every bucket row is a triple of new
 * IDs whose head and tail parts are the bucket's (trainers index a
 * partition's rows by these IDs, so a row out of its bucket would reach
 * outside the partition held in memory).  Relation IDs are checked
 * against the dataset by kg_partition_book_check_dataset.
 */
static int
check_buckets(const struct kg_partition_book *b, const char *dir)
{
	uint64_t P = b->nparts, n = b->n_nodes, bk, i;

	for (i = 0; i < b->n_edges; i++)
		if (b->edge_part[i] < 0 || (uint64_t)b->edge_part[i] >= P) {
			kg_error("%s/edge_part.npy: row %" PRIu64 ": part %"
			    PRId32 " out of range (%" PRIu64 " parts)", dir, i,
			    b->edge_part[i], P);
			return -1;
		}
	if (b->bucket_off[0] != 0 || b->bucket_off[P * P] !=
	    (int64_t)b->n_edges)
		goto bad_offsets;
	for (bk = 0; bk < P * P; bk++)
		if (b->bucket_off[bk + 1] < b->bucket_off[bk])
			goto bad_offsets;
	for (bk = 0; bk < P * P; bk++) {
		for (i = (uint64_t)b->bucket_off[bk];
		    i < (uint64_t)b->bucket_off[bk + 1]; i++) {
			const int32_t *t = b->bucket_hrt + 3 * i;

			if (t[0] < 0 || (uint64_t)t[0] >= n || t[1] < 0 ||
			    t[2] < 0 || (uint64_t)t[2] >= n ||
			    kg_partition_of_new_id(b->offsets, b->nparts,
			    t[0]) != bk / P ||
			    kg_partition_of_new_id(b->offsets, b->nparts,
			    t[2]) != bk % P) {
				kg_error("%s/train_buckets.npy: row %" PRIu64
				    ": (%" PRId32 ", %" PRId32 ", %" PRId32
				    ") is not a triple of bucket %" PRIu64
				    " (%" PRIu64 " entities)", dir, i, t[0],
				    t[1], t[2], bk, n);
				return -1;
			}
		}
	}
	return 0;
bad_offsets:
	kg_error("%s/bucket_offsets.npy: offsets do not grow from 0 to %"
	    PRIu64, dir, b->n_edges);
	return -1;
}

int
kg_partition_book_load(struct kg_partition_book *b, const char *dir)
{
	const struct kg_manifest *m;
	uint64_t n, ne, P;
	int rc;

	memset(b, 0, sizeof(*b));
	rc = kg_manifest_load(&b->manifest, dir, "kg-partition");
	if (rc < 0)
		return rc;
	if (kg_manifest_verify(&b->manifest, dir, 0) < 0)
		goto fail;
	m = &b->manifest;
	if (kg_manifest_get_u64(m, "partition_book.nparts", &P) < 0 ||
	    kg_manifest_get_u64(m, "figures.entities", &n) < 0 ||
	    kg_manifest_get_u64(m, "figures.train_triples", &ne) < 0 ||
	    P < 1 || P > n || P > UINT32_MAX || n > (uint64_t)INT32_MAX + 1 ||
	    P * P > UINT32_MAX) {
		kg_error("%s: manifest lacks a valid partition book", dir);
		goto fail;
	}
	if (book_array(b, 0, dir, "node_part.npy", KG_DT_I4, 1, n, 0) < 0 ||
	    book_array(b, 1, dir, "part_offsets.npy", KG_DT_I8, 1, P + 1,
	    0) < 0 ||
	    book_array(b, 2, dir, "old2new.npy", KG_DT_I4, 1, n, 0) < 0 ||
	    book_array(b, 3, dir, "new2old.npy", KG_DT_I4, 1, n, 0) < 0 ||
	    book_array(b, 4, dir, "edge_part.npy", KG_DT_I4, 1, ne, 0) < 0 ||
	    book_array(b, 5, dir, "bucket_offsets.npy", KG_DT_I8, 1,
	    P * P + 1, 0) < 0 ||
	    book_array(b, 6, dir, "train_buckets.npy", KG_DT_I4, 2, ne, 3) < 0)
		goto fail;
	b->nparts = (uint32_t)P;
	b->n_nodes = n;
	b->n_edges = ne;
	b->node_part = b->arr[0].data;
	b->offsets = b->arr[1].data;
	b->old2new = b->arr[2].data;
	b->new2old = b->arr[3].data;
	b->edge_part = b->arr[4].data;
	b->bucket_off = b->arr[5].data;
	b->bucket_hrt = b->arr[6].data;
	if (check_relabelling(b) < 0) {
		kg_error("%s: inconsistent partition arrays", dir);
		goto fail;
	}
	if (check_buckets(b, dir) < 0)
		goto fail;
	return 0;
fail:
	kg_partition_book_release(b);
	return -1;
}

int
kg_partition_book_check_dataset(const struct kg_partition_book *b,
    const struct kg_dataset *ds, const char *pdir)
{
	json_t *inputs = kg_manifest_get(&b->manifest, "inputs"), *in;
	char *path = kg_path_join(ds->dir, "manifest.json");
	char sum[32];
	uint64_t i;
	size_t k;
	int rc = -1;

	if (kg_checksum_file(path, sum) < 0)
		goto out;
	json_array_foreach(inputs, k, in) {
		const char *role, *cs;

		role = json_string_value(json_object_get(in, "role"));
		cs = json_string_value(json_object_get(in, "checksum"));
		if (role && cs && strcmp(role, "dataset") == 0 &&
		    strcmp(cs, sum) == 0)
			rc = 0;
	}
	if (rc < 0) {
		kg_error("'%s' was not made from dataset '%s'", pdir, ds->dir);
		goto out;
	}
	rc = -1;
	if (b->n_nodes != ds->n_entities ||
	    b->n_edges != ds->split[KG_SPLIT_TRAIN].n) {
		kg_error("'%s' does not match the size of dataset '%s'", pdir,
		    ds->dir);
		goto out;
	}
	for (i = 0; i < b->n_edges; i++)
		if ((uint64_t)b->bucket_hrt[3 * i + 1] >= ds->n_relations) {
			kg_error("%s/train_buckets.npy: row %" PRIu64 ": "
			    "relation %" PRId32 " out of range (%" PRIu64
			    " relations in '%s')", pdir, i,
			    b->bucket_hrt[3 * i + 1], ds->n_relations,
			    ds->dir);
			goto out;
		}
	rc = 0;
out:
	free(path);
	return rc;
}

void
kg_partition_book_release(struct kg_partition_book *b)
{
	size_t i;

	kg_manifest_release(&b->manifest);
	for (i = 0; i < KG_ARRAY_LEN(b->arr); i++)
		kg_npy_release(&b->arr[i]);
	memset(b, 0, sizeof(*b));
}
