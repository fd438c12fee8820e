/*
 * gen_graph: write a seeded random knowledge graph as a dataset directory
 * in the layout kg-ingest produces (train/valid/test.npy and a manifest
 * whose tool is "kg-ingest", marked with config.generator = "gen_graph"),
 * for tests and benchmarks of kg-partition and kg-expand.
 *
 * Graph: n entities in c communities; a triple's head is drawn with a
 * skewed (power-law-like) popularity, its tail from the head's community
 * with probability "locality" and from anywhere otherwise, its relation
 * uniformly.  Self-loops and repeated triples can occur, as in real data.
 *
 * usage: gen_graph -n entities -m train [-r relations] [-c communities]
 *                  [-l locality] [-v valid] [-t test] [-s seed] -o dir
 *
 * Two more modes help the shell tests read outputs back:
 *   gen_graph features DIR N       write a feature directory for N
 *                                  entities: dense.npy (f4 [N, 2], row i
 *                                  = (i, -i)), tags_offsets.npy (i8),
 *                                  tags_indices.npy (i4, row i holds
 *                                  i % 3 entries equal to i)
 *   gen_graph check DATASET PARTS [EXPANDED]
 *                                  verify a kg-partition output (and a
 *                                  kg-expand output) against the dataset
 *                                  by brute force; silent and exit 0 when
 *                                  every invariant holds, else a message
 *                                  and exit 1
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "io/dataset.h"
#include "io/manifest.h"
#include "io/npy.h"
#include "graph/partition.h"
#include "core/util.h"

struct gen {
	uint64_t n, m, nrel, ncomm, nvalid, ntest, seed;
	double locality;
	uint32_t *perm;		/* popularity rank -> entity ID */
};

/* A popularity rank in [0, k): rank = k * u^3 favours small ranks. */
static uint64_t
skewed(struct kg_rng *r, uint64_t k)
{
	double u = kg_rng_uniform(r);
	uint64_t x = (uint64_t)((double)k * u * u * u);

	return x < k ? x : k - 1;
}

static void
fill(const struct gen *g, struct kg_rng *r, int32_t *hrt, uint64_t rows)
{
	uint64_t i, csize = (g->n + g->ncomm - 1) / g->ncomm;

	for (i = 0; i < rows; i++) {
		uint64_t h = g->perm[skewed(r, g->n)], t;

		if (kg_rng_uniform(r) < g->locality) {
			uint64_t c0 = h / csize * csize;
			uint64_t len = c0 + csize <= g->n ? csize : g->n - c0;

			t = c0 + kg_rng_below(r, len);
		} else {
			t = g->perm[skewed(r, g->n)];
		}
		hrt[3 * i] = (int32_t)h;
		hrt[3 * i + 1] = (int32_t)kg_rng_below(r, g->nrel);
		hrt[3 * i + 2] = (int32_t)t;
	}
}

static int
write_split(struct kg_manifest *man, const char *dir, const char *name,
    const struct gen *g, struct kg_rng *r, uint64_t rows)
{
	int32_t *hrt = kg_xmallocarray(rows ? 3 * rows : 1, sizeof(*hrt));
	uint64_t shape[2] = { rows, 3 };
	char *path = kg_path_join(dir, name);
	int rc;

	fill(g, r, hrt, rows);
	rc = kg_npy_write(path, KG_DT_I4, 2, shape, hrt);
	free(path);
	free(hrt);
	if (rc == 0)
		rc = kg_manifest_add_file(man, dir, name);
	return rc;
}

static void
usage(FILE *fp)
{
	fputs("usage: gen_graph -n entities -m train [-r relations] "
	    "[-c communities]\n"
	    "                 [-l locality] [-v valid] [-t test] [-s seed] "
	    "-o dir\n", fp);
}

static int
write_features(const char *dir, uint64_t n)
{
	float *dense = kg_xmallocarray(2 * n, sizeof(*dense));
	int64_t *off = kg_xmallocarray(n + 1, sizeof(*off));
	int32_t *idx = kg_xmallocarray(2 * n + 1, sizeof(*idx));
	uint64_t i, j, nnz = 0, shape[2];
	char *p;
	int rc = 0;

	if (mkdir(dir, 0755) != 0) {
		kg_error_errno("cannot create '%s'", dir);
		return 1;
	}
	for (i = 0; i < n; i++) {
		dense[2 * i] = (float)i;
		dense[2 * i + 1] = -(float)i;
		off[i] = (int64_t)nnz;
		for (j = 0; j < i % 3; j++)
			idx[nnz++] = (int32_t)i;
	}
	off[n] = (int64_t)nnz;
	shape[0] = n;
	shape[1] = 2;
	p = kg_path_join(dir, "dense.npy");
	rc |= kg_npy_write(p, KG_DT_F4, 2, shape, dense);
	free(p);
	shape[0] = n + 1;
	p = kg_path_join(dir, "tags_offsets.npy");
	rc |= kg_npy_write(p, KG_DT_I8, 1, shape, off);
	free(p);
	shape[0] = nnz;
	p = kg_path_join(dir, "tags_indices.npy");
	rc |= kg_npy_write(p, KG_DT_I4, 1, shape, idx);
	free(p);
	free(dense);
	free(off);
	free(idx);
	return rc ? 1 : 0;
}

#define FAIL(...) do { kg_error(__VA_ARGS__); goto out; } while (0)

/* Map "dir/name" expecting dtype and ndim; NULL after a message. */
static const void *
load(struct kg_npy *a, const char *dir, const char *name, enum kg_dtype dt,
    int ndim)
{
	char *p = kg_path_join(dir, name);
	int rc = kg_npy_read_expect(p, dt, ndim, a);

	free(p);
	return rc < 0 ? NULL : a->data;
}

/* Check one part of a kg-expand output: local triples, core mask, hops
 * against a brute-force BFS (exact when uncapped), features. */
static int
check_part(const struct kg_dataset *ds, const struct kg_partition_book *b,
    const char *xdir, uint32_t p, uint32_t k, int capped, uint32_t *core,
    uint8_t *dist)
{
	const int32_t *hrt = ds->split[KG_SPLIT_TRAIN].hrt, *nodes, *eh, *ids;
	const uint8_t *hops, *mask;
	uint64_t n = ds->n_entities, m = ds->split[KG_SPLIT_TRAIN].n;
	uint64_t i, e, nl, ml, want_n = 0, want_m = 0;
	struct kg_npy a[9] = { KG_NPY_INIT, KG_NPY_INIT, KG_NPY_INIT,
	    KG_NPY_INIT, KG_NPY_INIT, KG_NPY_INIT, KG_NPY_INIT, KG_NPY_INIT,
	    KG_NPY_INIT };
	const int32_t *owner;
	struct kg_manifest pm = KG_MANIFEST_INIT;
	char name[32];
	char *pdir, *fdir;
	uint32_t r;
	int rc = -1;

	snprintf(name, sizeof(name), "part-%03u", p);
	pdir = kg_path_join(xdir, name);
	fdir = kg_path_join(pdir, "features");
	if (kg_manifest_load(&pm, pdir, "kg-expand") < 0 ||
	    kg_manifest_verify(&pm, pdir, 1) < 0)
		goto out;
	if (!(nodes = load(&a[0], pdir, "nodes.npy", KG_DT_I4, 1)) ||
	    !(hops = load(&a[1], pdir, "hops.npy", KG_DT_U1, 1)) ||
	    !(eh = load(&a[2], pdir, "edges.npy", KG_DT_I4, 2)) ||
	    !(ids = load(&a[3], pdir, "edge_ids.npy", KG_DT_I4, 1)) ||
	    !(mask = load(&a[4], pdir, "core_mask.npy", KG_DT_U1, 1)) ||
	    !load(&a[5], pdir, "neg_pool.npy", KG_DT_I4, 1) ||
	    !(owner = load(&a[8], pdir, "owner.npy", KG_DT_I4, 1)))
		goto out;
	nl = a[0].shape[0];
	ml = a[2].shape[0];
	if (a[1].shape[0] != nl || a[3].shape[0] != ml ||
	    a[4].shape[0] != ml || a[8].shape[0] != nl)
		FAIL("%s: array lengths disagree", pdir);
	for (i = 0; i < nl; i++)
		if (nodes[i] < 0 || (uint64_t)nodes[i] >= n ||
		    owner[i] != b->node_part[nodes[i]])
			FAIL("%s: owner of local entity %llu wrong", pdir,
			    (unsigned long long)i);
	/* The pool is the seeds: local IDs 0 .. n_seeds - 1. */
	for (i = 0; i < nl && hops[i] == 0; i++)
		continue;
	if (a[5].shape[0] != i)
		FAIL("%s: %llu seeds but a pool of %llu", pdir,
		    (unsigned long long)i, (unsigned long long)a[5].shape[0]);
	for (i = 0; i < a[5].shape[0]; i++)
		if (((const int32_t *)a[5].data)[i] != (int32_t)i ||
		    i >= nl || hops[i] != 0)
			FAIL("%s: negative pool entry %llu wrong", pdir,
			    (unsigned long long)i);
	/* Brute-force hop distances from the seeds. */
	memset(dist, 255, n);
	for (i = 0; i < n; i++)
		if (b->node_part[i] == (int32_t)p)
			dist[i] = 0;
	for (e = 0; e < m; e++)
		if (b->edge_part[e] == (int32_t)p)
			dist[hrt[3 * e]] = dist[hrt[3 * e + 2]] = 0;
	for (r = 0; r < k; r++)
		for (e = 0; e < m; e++) {
			int32_t h = hrt[3 * e], t = hrt[3 * e + 2];

			if (dist[h] == r && dist[t] > r + 1)
				dist[t] = (uint8_t)(r + 1);
			if (dist[t] == r && dist[h] > r + 1)
				dist[h] = (uint8_t)(r + 1);
		}
	for (i = 0; i < nl; i++) {
		if (nodes[i] < 0 || (uint64_t)nodes[i] >= n ||
		    (capped ? hops[i] < dist[nodes[i]] || hops[i] > k :
		    hops[i] != dist[nodes[i]]))
			FAIL("%s: local entity %llu has a wrong hop", pdir,
			    (unsigned long long)i);
	}
	for (i = 0; i < n; i++)
		want_n += dist[i] <= k;
	for (e = 0; e < m; e++)
		want_m += b->edge_part[e] == (int32_t)p ||
		    (k > 0 && (dist[hrt[3 * e]] < k || dist[hrt[3 * e + 2]] < k));
	if (!capped && (nl != want_n || ml != want_m))
		FAIL("%s: %llu entities and %llu triples, brute force says "
		    "%llu and %llu", pdir, (unsigned long long)nl,
		    (unsigned long long)ml, (unsigned long long)want_n,
		    (unsigned long long)want_m);
	for (i = 0; i < ml; i++) {
		int32_t x = ids[i], lh = eh[3 * i], lt = eh[3 * i + 2];

		if (x < 0 || (uint64_t)x >= m || lh < 0 || (uint64_t)lh >= nl ||
		    lt < 0 || (uint64_t)lt >= nl ||
		    nodes[lh] != hrt[3 * (uint64_t)x] ||
		    eh[3 * i + 1] != hrt[3 * (uint64_t)x + 1] ||
		    nodes[lt] != hrt[3 * (uint64_t)x + 2])
			FAIL("%s: local triple %llu does not map back", pdir,
			    (unsigned long long)i);
		if (mask[i] != (b->edge_part[x] == (int32_t)p))
			FAIL("%s: core mask wrong at %llu", pdir,
			    (unsigned long long)i);
		core[x] += mask[i];
	}
	/* Features written by "gen_graph features", when sliced. */
	if (kg_path_exists(fdir)) {
		const float *d = load(&a[6], fdir, "dense.npy", KG_DT_F4, 2);
		const int64_t *off = load(&a[7], fdir, "tags_offsets.npy",
		    KG_DT_I8, 1);

		if (d == NULL || off == NULL)
			goto out;
		if (a[6].shape[0] != nl || a[7].shape[0] != nl + 1)
			FAIL("%s: feature slices have the wrong length", fdir);
		for (i = 0; i < nl; i++)
			if (d[2 * i] != (float)nodes[i] ||
			    d[2 * i + 1] != -(float)nodes[i] ||
			    off[i + 1] - off[i] != nodes[i] % 3)
				FAIL("%s: features of local entity %llu wrong",
				    fdir, (unsigned long long)i);
	}
	rc = 0;
out:
	for (i = 0; i < 9; i++)
		kg_npy_release(&a[i]);
	kg_manifest_release(&pm);
	free(pdir);
	free(fdir);
	return rc;
}

static int
check(const char *dsdir, const char *pdir, const char *xdir)
{
	struct kg_dataset ds = KG_DATASET_INIT;
	struct kg_partition_book b = KG_PARTITION_BOOK_INIT;
	struct kg_manifest xm = KG_MANIFEST_INIT;
	const int32_t *hrt;
	const char *edges;
	uint64_t m, e, k64 = 0, P;
	uint32_t *core = NULL, p;
	uint8_t *dist = NULL;
	int rc = 1;

	if (kg_dataset_load(&ds, dsdir) < 0 ||
	    kg_partition_book_load(&b, pdir) < 0)
		goto out;
	hrt = ds.split[KG_SPLIT_TRAIN].hrt;
	m = ds.split[KG_SPLIT_TRAIN].n;
	P = b.nparts;
	edges = json_string_value(kg_manifest_get(&b.manifest, "config.edges"));
	if (b.n_nodes != ds.n_entities || b.n_edges != m || edges == NULL)
		FAIL("%s does not fit %s", pdir, dsdir);
	/* (The book loader has checked the bijection and the ranges.) */
	for (e = 0; e < m; e++) {
		int32_t hp = b.node_part[hrt[3 * e]], tp = b.node_part[hrt[3 * e + 2]];
		int64_t lo = b.bucket_off[(uint64_t)hp * P + (uint64_t)tp];
		int64_t hi = b.bucket_off[(uint64_t)hp * P + (uint64_t)tp + 1];
		int64_t r;
		int found = 0;

		if ((strcmp(edges, "head") == 0 && b.edge_part[e] != hp) ||
		    (strcmp(edges, "tail") == 0 && b.edge_part[e] != tp))
			FAIL("triple %llu assigned to part %d, not by %s",
			    (unsigned long long)e, b.edge_part[e], edges);
		for (r = lo; r < hi && !found; r++)
			found = b.new2old[b.bucket_hrt[3 * r]] == hrt[3 * e] &&
			    b.bucket_hrt[3 * r + 1] == hrt[3 * e + 1] &&
			    b.new2old[b.bucket_hrt[3 * r + 2]] == hrt[3 * e + 2];
		if (!found)
			FAIL("triple %llu missing from bucket (%d, %d)",
			    (unsigned long long)e, hp, tp);
	}
	if (xdir != NULL) {
		json_t *fan;

		if (kg_manifest_load(&xm, xdir, "kg-expand") < 0 ||
		    kg_manifest_verify(&xm, xdir, 1) < 0 ||
		    kg_manifest_get_u64(&xm, "config.hops", &k64) < 0)
			goto out;
		fan = kg_manifest_get(&xm, "config.fanout");
		core = kg_xcalloc(m ? m : 1, sizeof(*core));
		dist = kg_xmalloc(ds.n_entities);
		for (p = 0; p < P; p++)
			if (check_part(&ds, &b, xdir, p, (uint32_t)k64,
			    json_array_size(fan) > 0, core, dist) < 0)
				goto out;
		for (e = 0; e < m; e++)
			if (core[e] != 1)
				FAIL("triple %llu is core in %u parts",
				    (unsigned long long)e, core[e]);
	}
	rc = 0;
out:
	free(core);
	free(dist);
	kg_manifest_release(&xm);
	kg_partition_book_release(&b);
	kg_dataset_release(&ds);
	return rc;
}

int
main(int argc, char *argv[])
{
	struct gen g = { 1000, 5000, 10, 10, 0, 0, 1, 0.8, NULL };
	struct kg_manifest man = KG_MANIFEST_INIT;
	struct kg_rng r;
	const char *out = NULL;
	uint64_t i;
	int ch, rc = 0;

	kg_setprogname(argv[0]);
	if (argc >= 2 && strcmp(argv[1], "features") == 0) {
		uint64_t n;

		if (argc != 4 || kg_parse_u64("N", argv[3], 1, INT32_MAX, &n) < 0)
			return 2;
		return write_features(argv[2], n);
	}
	if (argc >= 2 && strcmp(argv[1], "check") == 0) {
		if (argc != 4 && argc != 5)
			return 2;
		return check(argv[2], argv[3], argc == 5 ? argv[4] : NULL);
	}
	while ((ch = getopt(argc, argv, "n:m:r:c:l:v:t:s:o:h")) != -1) {
		switch (ch) {
		case 'n':
			rc = kg_parse_u64("-n", optarg, 1, INT32_MAX - 1, &g.n);
			break;
		case 'm':
			rc = kg_parse_u64("-m", optarg, 0, INT32_MAX - 1, &g.m);
			break;
		case 'r':
			rc = kg_parse_u64("-r", optarg, 1, 1u << 20, &g.nrel);
			break;
		case 'c':
			rc = kg_parse_u64("-c", optarg, 1, INT32_MAX, &g.ncomm);
			break;
		case 'l':
			rc = kg_parse_double("-l", optarg, 0, 1, &g.locality);
			break;
		case 'v':
			rc = kg_parse_u64("-v", optarg, 0, INT32_MAX, &g.nvalid);
			break;
		case 't':
			rc = kg_parse_u64("-t", optarg, 0, INT32_MAX, &g.ntest);
			break;
		case 's':
			rc = kg_parse_u64("-s", optarg, 0, UINT64_MAX, &g.seed);
			break;
		case 'o': out = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
		if (rc < 0)
			return 2;
	}
	rc = 1;
	if (out == NULL || optind != argc) {
		usage(stderr);
		return 2;
	}
	if (g.ncomm > g.n)
		g.ncomm = g.n;
	if (mkdir(out, 0755) != 0) {
		kg_error_errno("cannot create '%s'", out);
		return 1;
	}
	kg_rng_seed(&r, g.seed, 0);
	g.perm = kg_xmallocarray(g.n, sizeof(*g.perm));
	for (i = 0; i < g.n; i++)
		g.perm[i] = (uint32_t)i;
	for (i = g.n; i > 1; i--) {
		uint64_t j = kg_rng_below(&r, i);
		uint32_t t = g.perm[i - 1];

		g.perm[i - 1] = g.perm[j];
		g.perm[j] = t;
	}
	kg_manifest_init(&man, argc, argv);
	/* Stand in for kg-ingest so that the dataset loader accepts it. */
	json_object_set_new(man.root, "tool", json_string("kg-ingest"));
	kg_manifest_set_config(&man, "generator", json_string("gen_graph"));
	if (write_split(&man, out, "train.npy", &g, &r, g.m) < 0 ||
	    write_split(&man, out, "valid.npy", &g, &r, g.nvalid) < 0 ||
	    write_split(&man, out, "test.npy", &g, &r, g.ntest) < 0)
		goto out;
	kg_manifest_set_figure(&man, "entities", json_integer((json_int_t)g.n));
	kg_manifest_set_figure(&man, "relations",
	    json_integer((json_int_t)g.nrel));
	kg_manifest_set_figure(&man, "train", json_integer((json_int_t)g.m));
	if (kg_manifest_write(&man, out) < 0)
		goto out;
	rc = 0;
out:
	kg_manifest_release(&man);
	free(g.perm);
	return rc;
}
