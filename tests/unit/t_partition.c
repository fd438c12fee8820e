/*
 * Unit tests for lib/partition: invariants checked by brute force on
 * small random graphs, determinism, bad input, the on-disk round trip,
 * and METIS against random on FB15k-237 and WN18RR when shared data is
 * present.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "io/dataset.h"
#include "io/manifest.h"
#include "io/npy.h"
#include "graph/partition.h"
#include "core/util.h"
#include "test.h"

/* A random multigraph with self-loops and repeats; heads skewed so that
 * some entities are hubs. */
static int32_t *
random_graph(uint64_t n, uint64_t m, uint32_t nrel, uint64_t seed)
{
	int32_t *hrt = kg_xmallocarray(3 * m, sizeof(*hrt));
	struct kg_rng r;
	uint64_t i;

	kg_rng_seed(&r, seed, 99);
	for (i = 0; i < m; i++) {
		double u = kg_rng_uniform(&r);

		hrt[3 * i] = (int32_t)((double)n * u * u);
		hrt[3 * i + 1] = (int32_t)kg_rng_below(&r, nrel);
		hrt[3 * i + 2] = (int32_t)kg_rng_below(&r, n);
	}
	return hrt;
}

/* Planted communities: most triples stay inside blocks of n / c IDs. */
static int32_t *
community_graph(uint64_t n, uint64_t m, uint64_t c, uint64_t seed)
{
	int32_t *hrt = kg_xmallocarray(3 * m, sizeof(*hrt));
	struct kg_rng r;
	uint64_t i, size = n / c;

	kg_rng_seed(&r, seed, 7);
	for (i = 0; i < m; i++) {
		uint64_t h = kg_rng_below(&r, n), t;

		if (kg_rng_uniform(&r) < 0.9)
			t = h / size * size + kg_rng_below(&r, size);
		else
			t = kg_rng_below(&r, n);
		hrt[3 * i] = (int32_t)h;
		hrt[3 * i + 1] = 0;
		hrt[3 * i + 2] = (int32_t)(t < n ? t : n - 1);
	}
	return hrt;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static uint64_t
triple_key(int32_t h, int32_t r, int32_t t, uint64_t n, uint32_t nrel)
{
	return ((uint64_t)h * nrel + (uint64_t)r) * n + (uint64_t)t;
}

/* Every invariant of a partitioning, by brute force. */
static void
check_partition(const struct kg_partition *pt, const int32_t *hrt,
    uint64_t n, uint64_t m, uint32_t nrel, const struct kg_partition_opts *o)
{
	uint32_t P = o->nparts, p;
	uint64_t *cnt = kg_xcalloc(P, sizeof(*cnt));
	uint64_t *ecnt = kg_xcalloc(P, sizeof(*ecnt));
	uint64_t *a = kg_xmallocarray(m, sizeof(*a));
	uint64_t *b = kg_xmallocarray(m, sizeof(*b));
	uint8_t *seen = kg_xcalloc(n, 1);
	uint64_t i, cut = 0, maxc = 0, maxe = 0;
	int ok;

	T_CHECK(pt->nparts == P && pt->n_nodes == n && pt->n_edges == m);
	for (i = 0; i < n; i++) {
		int32_t q = pt->node_part[i];

		T_CHECK(q >= 0 && (uint32_t)q < P);
		if (q < 0 || (uint32_t)q >= P)
			goto out;
		cnt[q]++;
	}
	/* Relabelling is a bijection onto contiguous, stable ranges. */
	T_CHECK(pt->offsets[0] == 0 && pt->offsets[P] == (int64_t)n);
	for (p = 0; p < P; p++) {
		T_CHECK(pt->offsets[p + 1] - pt->offsets[p] == (int64_t)cnt[p]);
		T_CHECK(pt->part_nodes[p] == cnt[p]);
		maxc = cnt[p] > maxc ? cnt[p] : maxc;
	}
	ok = 1;
	for (i = 0; i < n; i++) {
		int32_t id = pt->old2new[i];

		if (id < 0 || (uint64_t)id >= n || seen[id] ||
		    pt->new2old[id] != (int32_t)i ||
		    id < pt->offsets[pt->node_part[i]] ||
		    id >= pt->offsets[pt->node_part[i] + 1])
			ok = 0;
		else
			seen[id] = 1;
	}
	T_CHECK(ok);
	for (i = 1; i < n; i++) {
		int32_t x = pt->new2old[i - 1], y = pt->new2old[i];

		if (pt->node_part[x] == pt->node_part[y])
			T_CHECK(x < y);
	}
	/* Every training edge has exactly one part, as asked. */
	for (i = 0; i < m; i++) {
		int32_t q = pt->edge_part[i];
		int32_t hp = pt->node_part[hrt[3 * i]];
		int32_t tp = pt->node_part[hrt[3 * i + 2]];

		T_CHECK(q >= 0 && (uint32_t)q < P);
		if (q < 0 || (uint32_t)q >= P)
			goto out;
		ecnt[q]++;
		cut += hp != tp;
		if (o->edges == KG_EDGE_HEAD || P == 1)
			T_CHECK(q == hp);
		else if (o->edges == KG_EDGE_TAIL)
			T_CHECK(q == tp);
	}
	for (p = 0; p < P; p++) {
		T_CHECK(pt->part_edges[p] == ecnt[p]);
		maxe = ecnt[p] > maxe ? ecnt[p] : maxe;
	}
	T_CHECK(pt->edge_cut == cut);
	T_NEAR(pt->inside_fraction, 1.0 - (double)cut / (double)m, 1e-12);
	T_NEAR(pt->node_balance, (double)maxc * P / (double)n, 1e-12);
	T_NEAR(pt->edge_balance, (double)maxe * P / (double)m, 1e-12);
	/* Buckets: relabelled triples map back to the same multiset, each
	 * in the bucket of its (head part, tail part). */
	T_CHECK(pt->bucket_off[0] == 0 &&
	    pt->bucket_off[(uint64_t)P * P] == (int64_t)m);
	for (i = 0; i < (uint64_t)P * P; i++) {
		int64_t r;

		for (r = pt->bucket_off[i]; r < pt->bucket_off[i + 1]; r++) {
			int32_t h = pt->new2old[pt->bucket_hrt[3 * r]];
			int32_t t = pt->new2old[pt->bucket_hrt[3 * r + 2]];

			T_CHECK((uint64_t)pt->node_part[h] * P +
			    (uint64_t)pt->node_part[t] == i);
		}
	}
	for (i = 0; i < m; i++) {
		a[i] = triple_key(hrt[3 * i], hrt[3 * i + 1], hrt[3 * i + 2], n,
		    nrel);
		b[i] = triple_key(pt->new2old[pt->bucket_hrt[3 * i]],
		    pt->bucket_hrt[3 * i + 1],
		    pt->new2old[pt->bucket_hrt[3 * i + 2]], n, nrel);
	}
	qsort(a, m, sizeof(*a), cmp_u64);
	qsort(b, m, sizeof(*b), cmp_u64);
	T_CHECK(memcmp(a, b, m * sizeof(*a)) == 0);
out:
	free(cnt);
	free(ecnt);
	free(a);
	free(b);
	free(seen);
}

static void
test_invariants(void)
{
	static const uint32_t parts[] = { 1, 2, 3, 7 };
	uint64_t n = 300, m = 2500;
	uint32_t nrel = 5;
	int32_t *hrt = random_graph(n, m, nrel, 1);
	int method, edges;
	size_t k;

	for (method = 0; method < 2; method++)
		for (edges = 0; edges < 3; edges++)
			for (k = 0; k < KG_ARRAY_LEN(parts); k++) {
				struct kg_partition_opts o =
				    KG_PARTITION_OPTS_INIT;
				struct kg_partition pt = KG_PARTITION_INIT;

				o.method = (enum kg_part_method)method;
				o.edges = (enum kg_edge_assign)edges;
				o.nparts = parts[k];
				o.seed = 3;
				T_CHECK(kg_partition_compute(&pt, n, hrt, m,
				    &o) == 0);
				check_partition(&pt, hrt, n, m, nrel, &o);
				kg_partition_release(&pt);
			}
	free(hrt);
}

/* P = 1 is the identity: same IDs, same triple order. */
static void
test_one_part_identity(void)
{
	uint64_t n = 50, m = 400, i;
	int32_t *hrt = random_graph(n, m, 3, 2);
	int method;

	for (method = 0; method < 2; method++) {
		struct kg_partition_opts o = KG_PARTITION_OPTS_INIT;
		struct kg_partition pt = KG_PARTITION_INIT;

		o.method = (enum kg_part_method)method;
		o.edges = KG_EDGE_VERTEX_CUT;
		T_CHECK(kg_partition_compute(&pt, n, hrt, m, &o) == 0);
		for (i = 0; i < n; i++)
			T_CHECK(pt.old2new[i] == (int32_t)i &&
			    pt.node_part[i] == 0);
		for (i = 0; i < m; i++)
			T_CHECK(pt.edge_part[i] == 0);
		T_CHECK(memcmp(pt.bucket_hrt, hrt, 3 * m * sizeof(*hrt)) == 0);
		T_CHECK(pt.edge_cut == 0 && pt.inside_fraction == 1.0);
		kg_partition_release(&pt);
	}
	free(hrt);
}

static int
same_partition(const struct kg_partition *a, const struct kg_partition *b)
{
	uint64_t n = a->n_nodes, m = a->n_edges, P = a->nparts;

	return memcmp(a->node_part, b->node_part, n * 4) == 0 &&
	    memcmp(a->old2new, b->old2new, n * 4) == 0 &&
	    memcmp(a->edge_part, b->edge_part, m * 4) == 0 &&
	    memcmp(a->bucket_off, b->bucket_off, (P * P + 1) * 8) == 0 &&
	    memcmp(a->bucket_hrt, b->bucket_hrt, 3 * m * 4) == 0;
}

static void
test_deterministic(void)
{
	uint64_t n = 400, m = 3000;
	int32_t *hrt = random_graph(n, m, 4, 4);
	int method;

	for (method = 0; method < 2; method++) {
		struct kg_partition_opts o = KG_PARTITION_OPTS_INIT;
		struct kg_partition a = KG_PARTITION_INIT, b = KG_PARTITION_INIT;

		o.method = (enum kg_part_method)method;
		o.edges = KG_EDGE_VERTEX_CUT;
		o.nparts = 4;
		o.seed = 11;
		T_CHECK(kg_partition_compute(&a, n, hrt, m, &o) == 0);
		T_CHECK(kg_partition_compute(&b, n, hrt, m, &o) == 0);
		T_CHECK(same_partition(&a, &b));
		kg_partition_release(&b);
		if (o.method == KG_PART_RANDOM) {
			o.seed = 12;
			T_CHECK(kg_partition_compute(&b, n, hrt, m, &o) == 0);
			T_CHECK(memcmp(a.node_part, b.node_part, n * 4) != 0);
			kg_partition_release(&b);
		}
		kg_partition_release(&a);
	}
	free(hrt);
}

/* Random parts differ in size by at most one entity. */
static void
test_random_sizes(void)
{
	uint64_t n = 1001, m = 10;
	int32_t *hrt = random_graph(n, m, 1, 5);
	struct kg_partition_opts o = KG_PARTITION_OPTS_INIT;
	struct kg_partition pt = KG_PARTITION_INIT;
	uint32_t p;

	o.method = KG_PART_RANDOM;
	o.nparts = 7;
	T_CHECK(kg_partition_compute(&pt, n, hrt, m, &o) == 0);
	for (p = 0; p < 7; p++)
		T_CHECK(pt.part_nodes[p] == 143);
	kg_partition_release(&pt);
	o.nparts = 10;
	T_CHECK(kg_partition_compute(&pt, n, hrt, m, &o) == 0);
	for (p = 0; p < 10; p++)
		T_CHECK(pt.part_nodes[p] == 100 || pt.part_nodes[p] == 101);
	kg_partition_release(&pt);
	free(hrt);
}

/* On a skewed graph, assignment by head is unbalanced; the vertex-cut
 * evens the triple counts out. */
static void
test_vertex_cut_balance(void)
{
	uint64_t n = 2000, m = 40000;
	int32_t *hrt = random_graph(n, m, 3, 6);
	struct kg_partition_opts o = KG_PARTITION_OPTS_INIT;
	struct kg_partition head = KG_PARTITION_INIT, vc = KG_PARTITION_INIT;

	o.method = KG_PART_RANDOM;
	o.nparts = 8;
	T_CHECK(kg_partition_compute(&head, n, hrt, m, &o) == 0);
	o.edges = KG_EDGE_VERTEX_CUT;
	T_CHECK(kg_partition_compute(&vc, n, hrt, m, &o) == 0);
	T_CHECKF(head.edge_balance > 1.1, "head balance %g",
	    head.edge_balance);
	T_CHECKF(vc.edge_balance < 1.01, "vertex-cut balance %g",
	    vc.edge_balance);
	kg_partition_release(&head);
	kg_partition_release(&vc);
	free(hrt);
}

static void
test_metis_beats_random(void)
{
	uint64_t n = 3000, m = 30000;
	int32_t *hrt = community_graph(n, m, 6, 8);
	struct kg_partition_opts o = KG_PARTITION_OPTS_INIT;
	struct kg_partition me = KG_PARTITION_INIT, ra = KG_PARTITION_INIT;

	o.nparts = 6;
	T_CHECK(kg_partition_compute(&me, n, hrt, m, &o) == 0);
	o.method = KG_PART_RANDOM;
	T_CHECK(kg_partition_compute(&ra, n, hrt, m, &o) == 0);
	T_CHECKF(me.edge_cut * 3 < ra.edge_cut, "metis %" PRIu64
	    ", random %" PRIu64, me.edge_cut, ra.edge_cut);
	T_CHECKF(me.node_balance <= 1.05 + 1e-9, "node balance %g",
	    me.node_balance);
	T_CHECK(me.metis_objval >= 0 && ra.metis_objval == -1);
	kg_partition_release(&me);
	kg_partition_release(&ra);
	free(hrt);
}

static void
test_bad_nparts(void)
{
	int32_t *hrt = random_graph(10, 20, 2, 9);
	struct kg_partition_opts o = KG_PARTITION_OPTS_INIT;
	struct kg_partition pt = KG_PARTITION_INIT;

	kg_error_mute(1);
	o.nparts = 0;
	T_CHECK(kg_partition_compute(&pt, 10, hrt, 20, &o) == -1);
	T_CHECK(strstr(kg_error_last(), "into 0 parts") != NULL);
	o.nparts = 11;
	T_CHECK(kg_partition_compute(&pt, 10, hrt, 20, &o) == -1);
	T_CHECK(strstr(kg_error_last(), "10 entities into 11 parts") != NULL);
	T_CHECK(pt.node_part == NULL);
	o.nparts = 10;
	T_CHECK(kg_partition_compute(&pt, 10, hrt, 20, &o) == 0);
	T_CHECK(pt.node_balance == 1.0);
	kg_partition_release(&pt);
	kg_error_mute(0);
	free(hrt);
}

/* A METIS error is reported, not fatal: a tolerance below 1 is refused
 * by METIS itself (the CLI never passes one). */
static void
test_metis_failure(void)
{
	int32_t *hrt = random_graph(40, 200, 2, 12);
	struct kg_partition_opts o = KG_PARTITION_OPTS_INIT;
	struct kg_partition pt = KG_PARTITION_INIT;

	o.nparts = 3;
	o.imbalance = -0.5;
	kg_error_mute(1);
	fflush(stdout);
	T_CHECK(kg_partition_compute(&pt, 40, hrt, 200, &o) == -1);
	T_CHECK(strstr(kg_error_last(), "METIS_PartGraphKway failed: "
	    "erroneous input") != NULL);
	T_CHECK(pt.node_part == NULL && pt.bucket_hrt == NULL);
	kg_error_mute(0);
	free(hrt);
}

/* Write, read back through the partition book, compare; a tampered
 * array is refused. */
static void
test_write_load(void)
{
	uint64_t n = 200, m = 1500, shape[1] = { 200 };
	int32_t *hrt = random_graph(n, m, 4, 10);
	struct kg_partition_opts o = KG_PARTITION_OPTS_INIT;
	struct kg_partition pt = KG_PARTITION_INIT;
	struct kg_partition_book b = KG_PARTITION_BOOK_INIT;
	struct kg_manifest man = KG_MANIFEST_INIT;
	char *dir = kg_path_join(t_tmpdir(), "parts"), *path;
	int32_t *np;
	json_t *off;
	uint64_t i;

	T_CHECK(mkdir(dir, 0755) == 0);
	o.nparts = 3;
	o.edges = KG_EDGE_TAIL;
	T_CHECK(kg_partition_compute(&pt, n, hrt, m, &o) == 0);
	kg_setprogname("kg-partition");
	kg_manifest_init(&man, 0, NULL);
	T_CHECK(kg_partition_write(&pt, dir, &man) == 0);
	T_CHECK(kg_manifest_write(&man, dir) == 0);
	kg_manifest_release(&man);
	T_CHECK(kg_partition_book_load(&b, dir) == 0);
	T_CHECK(b.nparts == 3 && b.n_nodes == n && b.n_edges == m);
	if (b.node_part != NULL) {
		T_CHECK(memcmp(b.node_part, pt.node_part, n * 4) == 0);
		T_CHECK(memcmp(b.new2old, pt.new2old, n * 4) == 0);
		T_CHECK(memcmp(b.old2new, pt.old2new, n * 4) == 0);
		T_CHECK(memcmp(b.offsets, pt.offsets, 4 * 8) == 0);
		T_CHECK(memcmp(b.edge_part, pt.edge_part, m * 4) == 0);
		T_CHECK(memcmp(b.bucket_off, pt.bucket_off, 10 * 8) == 0);
		T_CHECK(memcmp(b.bucket_hrt, pt.bucket_hrt, 3 * m * 4) == 0);
		off = kg_manifest_get(&b.manifest, "partition_book.offsets");
		T_CHECK(json_array_size(off) == 4);
		for (i = 0; i < 4; i++)
			T_CHECK(json_integer_value(json_array_get(off, i)) ==
			    pt.offsets[i]);
		for (i = 0; i < n; i++)
			T_CHECK(kg_partition_of_new_id(b.offsets, 3,
			    pt.old2new[i]) == (uint32_t)pt.node_part[i]);
	}
	kg_partition_book_release(&b);
	/* Move one entity to another part: same shape, inconsistent book. */
	np = kg_xmallocarray(n, sizeof(*np));
	memcpy(np, pt.node_part, n * sizeof(*np));
	np[0] = (np[0] + 1) % 3;
	path = kg_path_join(dir, "node_part.npy");
	T_CHECK(kg_npy_write(path, KG_DT_I4, 1, shape, np) == 0);
	kg_error_mute(1);
	T_CHECK(kg_partition_book_load(&b, dir) == -1);
	T_CHECK(strstr(kg_error_last(), "inconsistent") != NULL);
	T_CHECK(b.node_part == NULL);
	kg_error_mute(0);
	free(path);
	free(np);
	free(dir);
	kg_partition_release(&pt);
	free(hrt);
}

/* Write a array into dir/name, load the book, restore the array; the
 * load's result. */
static int
load_with(const char *dir, const char *name, enum kg_dtype dt, int ndim,
    const uint64_t *shape, const void *bad, const void *good)
{
	struct kg_partition_book b = KG_PARTITION_BOOK_INIT;
	char *path = kg_path_join(dir, name);
	int rc;

	T_CHECK(kg_npy_write(path, dt, ndim, shape, bad) == 0);
	rc = kg_partition_book_load(&b, dir);
	kg_partition_book_release(&b);
	T_CHECK(kg_npy_write(path, dt, ndim, shape, good) == 0);
	free(path);
	return rc;
}

/*
 * Every ID array of the book is range-checked before use (issue 12, item
 * 3): parts, bucket rows (entity IDs, and heads and tails in the bucket's
 * parts) and, against the dataset, relation IDs.
 */
static void
test_book_checks(void)
{
	uint64_t n = 120, m = 900, tri[2] = { 900, 3 }, ne[1] = { 900 };
	int32_t *hrt = random_graph(n, m, 4, 11), *bad;
	struct kg_partition_opts o = KG_PARTITION_OPTS_INIT;
	struct kg_partition pt = KG_PARTITION_INIT;
	struct kg_partition_book b = KG_PARTITION_BOOK_INIT;
	struct kg_manifest man = KG_MANIFEST_INIT, dm = KG_MANIFEST_INIT;
	struct kg_dataset ds;
	char *dir = kg_path_join(t_tmpdir(), "book");
	char *dsdir = kg_path_join(t_tmpdir(), "bookds");
	uint64_t i;

	T_CHECK(mkdir(dir, 0755) == 0 && mkdir(dsdir, 0755) == 0);
	o.nparts = 3;
	o.method = KG_PART_RANDOM;
	T_CHECK(kg_partition_compute(&pt, n, hrt, m, &o) == 0);
	kg_setprogname("kg-ingest");
	kg_manifest_init(&dm, 0, NULL);
	T_CHECK(kg_manifest_write(&dm, dsdir) == 0);
	kg_manifest_release(&dm);
	kg_setprogname("kg-partition");
	kg_manifest_init(&man, 0, NULL);
	T_CHECK(kg_manifest_add_input(&man, "dataset", dsdir) == 0);
	T_CHECK(kg_partition_write(&pt, dir, &man) == 0);
	T_CHECK(kg_manifest_write(&man, dir) == 0);
	kg_manifest_release(&man);
	kg_setprogname("t_partition");

	bad = kg_xmallocarray(3 * m, sizeof(*bad));
	kg_error_mute(1);
	/* A head moved to a part that is not its bucket's. */
	memcpy(bad, pt.bucket_hrt, 3 * m * sizeof(*bad));
	bad[0] = (int32_t)pt.offsets[2];	/* row 0 is in bucket 0 */
	T_CHECK(pt.bucket_off[1] > 0);
	T_CHECK(load_with(dir, "train_buckets.npy", KG_DT_I4, 2, tri, bad,
	    pt.bucket_hrt) < 0);
	T_CHECK(strstr(kg_error_last(), "train_buckets.npy: row 0: (") !=
	    NULL && strstr(kg_error_last(), "is not a triple of bucket 0") !=
	    NULL);
	/* An entity ID past the count. */
	memcpy(bad, pt.bucket_hrt, 3 * m * sizeof(*bad));
	bad[3 * (m - 1) + 2] = (int32_t)n;
	T_CHECK(load_with(dir, "train_buckets.npy", KG_DT_I4, 2, tri, bad,
	    pt.bucket_hrt) < 0);
	T_CHECK(strstr(kg_error_last(), "(120 entities)") != NULL);
	/* A negative relation. */
	memcpy(bad, pt.bucket_hrt, 3 * m * sizeof(*bad));
	bad[1] = -1;
	T_CHECK(load_with(dir, "train_buckets.npy", KG_DT_I4, 2, tri, bad,
	    pt.bucket_hrt) < 0);
	/* A training row in part P. */
	memcpy(bad, pt.edge_part, m * sizeof(*bad));
	bad[5] = 3;
	T_CHECK(load_with(dir, "edge_part.npy", KG_DT_I4, 1, ne, bad,
	    pt.edge_part) < 0);
	T_CHECK(strstr(kg_error_last(), "edge_part.npy: row 5: part 3 out of "
	    "range (3 parts)") != NULL);
	kg_error_mute(0);

	/* Against the dataset: made from it, sizes, relation IDs. */
	T_CHECK(kg_partition_book_load(&b, dir) == 0);
	memset(&ds, 0, sizeof(ds));
	ds.dir = dsdir;
	ds.n_entities = n;
	ds.n_relations = 4;
	ds.split[KG_SPLIT_TRAIN].n = m;
	T_CHECK(kg_partition_book_check_dataset(&b, &ds, dir) == 0);
	kg_error_mute(1);
	for (i = 0; i < m && pt.bucket_hrt[3 * i + 1] != 3; i++)
		;
	T_CHECK(i < m);
	ds.n_relations = 3;
	T_CHECK(kg_partition_book_check_dataset(&b, &ds, dir) < 0);
	T_CHECK(strstr(kg_error_last(), "relation 3 out of range (3 "
	    "relations") != NULL);
	ds.n_relations = 4;
	ds.split[KG_SPLIT_TRAIN].n = m - 1;
	T_CHECK(kg_partition_book_check_dataset(&b, &ds, dir) < 0);
	T_CHECK(strstr(kg_error_last(), "does not match the size") != NULL);
	ds.dir = dir;	/* another manifest: not the book's dataset */
	T_CHECK(kg_partition_book_check_dataset(&b, &ds, dir) < 0);
	T_CHECK(strstr(kg_error_last(), "was not made from dataset") != NULL);
	kg_error_mute(0);
	kg_partition_book_release(&b);
	free(bad);
	free(dir);
	free(dsdir);
	kg_partition_release(&pt);
	free(hrt);
}

/* ---- real data: a minimal reader of the gzip TSV splits ---- */

struct intern {
	char **key;
	int32_t *id;
	uint64_t cap, n;
};

static int32_t
intern_id(struct intern *t, const char *s)
{
	uint64_t h = 1469598103934665603ULL, i;
	const char *p;

	for (p = s; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	for (i = h & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
		if (t->key[i] == NULL) {
			t->key[i] = kg_xstrdup(s);
			t->id[i] = (int32_t)t->n++;
			return t->id[i];
		}
		if (strcmp(t->key[i], s) == 0)
			return t->id[i];
	}
}

/* Train triples of a shared dataset with entity IDs in first-seen order;
 * NULL if unreadable. */
static int32_t *
read_train(const char *dir, uint64_t *n_entities, uint64_t *m)
{
	struct intern ents = { NULL, NULL, 1 << 17, 0 };
	char *path = kg_xasprintf("%s/train.txt.gz", dir);
	gzFile f = gzopen(path, "rb");
	char line[4096];
	int32_t *hrt = NULL;
	uint64_t cap = 0, rows = 0, i;

	free(path);
	if (f == NULL)
		return NULL;
	ents.key = kg_xcalloc(ents.cap, sizeof(char *));
	ents.id = kg_xcalloc(ents.cap, sizeof(int32_t));
	while (gzgets(f, line, sizeof(line)) != NULL) {
		char *h = line, *r = strchr(h, '\t'), *t, *nl;

		if (r == NULL || (t = strchr(r + 1, '\t')) == NULL)
			continue;
		*r++ = '\0';
		*t++ = '\0';
		if ((nl = strchr(t, '\n')) != NULL)
			*nl = '\0';
		if (rows == cap) {
			cap = cap ? 2 * cap : 1 << 16;
			hrt = kg_xreallocarray(hrt, 3 * cap, sizeof(*hrt));
		}
		hrt[3 * rows] = intern_id(&ents, h);
		hrt[3 * rows + 1] = 0;
		hrt[3 * rows + 2] = intern_id(&ents, t);
		rows++;
	}
	gzclose(f);
	for (i = 0; i < ents.cap; i++)
		free(ents.key[i]);
	free(ents.key);
	free(ents.id);
	*n_entities = ents.n;
	*m = rows;
	return hrt;
}

static void
real_dataset(const char *name)
{
	const char *base = t_shared_data();
	char *dir;
	uint64_t n, m;
	int32_t *hrt;
	uint32_t P;

	if (base == NULL)
		T_SKIP("KG_SHARED_DATA is empty; no %s", name);
	dir = kg_path_join(base, name);
	hrt = read_train(dir, &n, &m);
	free(dir);
	if (hrt == NULL)
		T_SKIP("%s/%s/train.txt.gz not readable", base, name);
	for (P = 4; P <= 8; P += 4) {
		struct kg_partition_opts o = KG_PARTITION_OPTS_INIT;
		struct kg_partition me = KG_PARTITION_INIT;
		struct kg_partition ra = KG_PARTITION_INIT;

		o.nparts = P;
		T_CHECK(kg_partition_compute(&me, n, hrt, m, &o) == 0);
		o.method = KG_PART_RANDOM;
		T_CHECK(kg_partition_compute(&ra, n, hrt, m, &o) == 0);
		printf("# %s P=%u: metis balance %.4f cut %.4f, random "
		    "balance %.4f cut %.4f\n", name, P, me.node_balance,
		    1 - me.inside_fraction, ra.node_balance,
		    1 - ra.inside_fraction);
		T_CHECKF(me.node_balance < 1.1, "%s P=%u: max/mean %g", name,
		    P, me.node_balance);
		T_CHECKF(me.edge_cut < ra.edge_cut, "%s P=%u: cut %" PRIu64
		    " vs random %" PRIu64, name, P, me.edge_cut, ra.edge_cut);
		kg_partition_release(&me);
		kg_partition_release(&ra);
	}
	free(hrt);
}

static void
test_metis_fb15k237(void)
{
	real_dataset("fb15k-237");
}

static void
test_metis_wn18rr(void)
{
	real_dataset("wn18rr");
}

int
main(void)
{
	T_RUN(test_invariants);
	T_RUN(test_one_part_identity);
	T_RUN(test_deterministic);
	T_RUN(test_random_sizes);
	T_RUN(test_vertex_cut_balance);
	T_RUN(test_metis_beats_random);
	T_RUN(test_bad_nparts);
	T_RUN(test_metis_failure);
	T_RUN(test_write_load);
	T_RUN(test_book_checks);
	T_RUN(test_metis_fb15k237);
	T_RUN(test_metis_wn18rr);
	return T_DONE();
}
