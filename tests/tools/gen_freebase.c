/*
 * gen_freebase: a seeded synthetic graph of Freebase86m's shape, written
 * straight as a kg-ingest dataset or as kg-ingest's TSV input.
 *
 * usage: gen_freebase [-f] [--scale S] [--seed N] [--clusters K]
 *                     [--noise P] [--ent_skew A] [--rel_skew B] -o DATASET
 *        gen_freebase [options] --tsv train|valid|test     (to stdout)
 *
 * At --scale 1 the counts are those of Freebase86m in Marius's split:
 * 86,054,151 entities, 14,824 relations, 304,727,650 train, 16,929,318
 * valid and 16,929,308 test edges.  The totals are those of Marius's
 * preprocessing (marius-team/marius, the Freebase86m dataset class of
 * marius/tools/preprocess: "86054151 nodes, 338586276 edges, 14824
 * relations"); the three split sizes, as quoted for Marius's split, add up
 * to that edge total but were not found in a source searched here.  Every
 * count is multiplied by S and rounded (at least 1), so the proportions
 * stay.
 *
 * The shape: entities and relations are ranked, and rank x of n is drawn
 * with weight (x + 1)^-a (a Zipf law, drawn by inverting its continuous
 * CDF, so no table is kept): heads with a = --ent_skew (default 0.8, a
 * degree tail of exponent 1 + 1/a = 2.25, as web-scale graphs show),
 * relations with a = --rel_skew (default 1.1: the most frequent
 * relations of Freebase hold most of its edges).  A rank becomes an ID
 * through a fixed bijection (multiplication by a unit modulo n), so IDs
 * carry neither degree nor cluster.
 *
 * The planted structure: the entity of rank x lies in cluster x mod K
 * (--clusters, default 64); relation r shifts clusters by s_r (a hash of
 * the seed and r).  A tail is, with probability 1 - P (--noise, default
 * 0.25), an entity of cluster (c_head + s_r) mod K drawn by the same
 * Zipf law within the cluster, otherwise any entity drawn by the global
 * law.  A model that learns the clusters and the shifts ranks the true
 * tail above most negatives (ComplEx represents a cyclic shift exactly),
 * so MRR measures learning, not chance.
 *
 * Streaming: edges are drawn one at a time from one random stream per
 * split and written through kg_npy_writer; memory is O(1) in the edge
 * count.  The degree figures of the manifest (endpoint share of the top
 * 1% of entities and relations, entities of degree 0) take one uint32
 * counter per entity and relation.  The same options give the same bytes.
 * Duplicates are left in (finding them would need the edges in memory);
 * the manifest counts none, as kg-ingest without --dedup.
 *
 * The dataset directory has kg-ingest's layout and manifest (tool
 * "kg-ingest", which readers check, and "generator": "gen_freebase"
 * with its options under config): entity and relation names are their
 * decimal IDs, the names the TSV output uses.
 */
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "core/rng.h"
#include "core/util.h"
#include "io/npy.h"
#include "io/stage.h"

#define CHUNK_ROWS 65536

static const char *const split_names[3] = { "train", "valid", "test" };
static const uint64_t fb_counts[5] = { 86054151, 14824, 304727650,
    16929318, 16929308 };

struct zipf {
	uint64_t n;
	double a, span;	/* (n + 1)^(1 - a) - 1, or log(n + 1) for a = 1 */
};

struct gen {
	uint64_t n_ent, n_rel, n_edges[3], seed, k;
	uint64_t ent_mul, rel_mul;	/* units modulo n_ent, n_rel */
	double noise, ent_skew, rel_skew;
	struct zipf ent, rel;
	uint32_t *deg_ent, *deg_rel;	/* NULL: not counted */
};

static void
zipf_init(struct zipf *z, uint64_t n, double a)
{
	z->n = n;
	z->a = a;
	z->span = fabs(a - 1) < 1e-12 ? log((double)n + 1) :
	    pow((double)n + 1, 1 - a) - 1;
}

/* Rank in [0, n) with weight (x + 1)^-a, from uniform u in [0, 1). */
static uint64_t
zipf_rank(const struct zipf *z, uint64_t n, double u)
{
	double x, span = z->span;

	if (n != z->n)
		span = fabs(z->a - 1) < 1e-12 ? log((double)n + 1) :
		    pow((double)n + 1, 1 - z->a) - 1;
	if (fabs(z->a - 1) < 1e-12)
		x = exp(u * span) - 1;
	else
		x = pow(1 + u * span, 1 / (1 - z->a)) - 1;
	return x >= (double)n ? n - 1 : (uint64_t)x;
}

static uint64_t
gcd_u64(uint64_t a, uint64_t b)
{
	while (b != 0) {
		uint64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/* A unit modulo n near 0.618 n: rank -> ID is then a bijection that
 * scatters neighbouring ranks. */
static uint64_t
unit_mod(uint64_t n)
{
	uint64_t m = (uint64_t)((double)n * 0.6180339887) | 1;

	if (n <= 2)
		return 1;
	while (gcd_u64(m, n) != 1)
		m += 2;
	return m % n;
}

static uint64_t
rank_id(uint64_t x, uint64_t mul, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)x * mul) % n);
}

/* The cluster shift of relation r (its ID). */
static uint64_t
shift_of(const struct gen *g, uint64_t r)
{
	uint64_t s = g->seed ^ (r * 0x9e3779b97f4a7c15ULL);

	return kg_splitmix64(&s) % g->k;
}

/* One edge (head, relation, tail) of the stream r. */
static void
draw_edge(const struct gen *g, struct kg_rng *rng, uint32_t out[3])
{
	uint64_t xh = zipf_rank(&g->ent, g->n_ent, kg_rng_uniform(rng));
	uint64_t xr = zipf_rank(&g->rel, g->n_rel, kg_rng_uniform(rng));
	uint64_t r = rank_id(xr, g->rel_mul, g->n_rel), xt;
	double u = kg_rng_uniform(rng), v = kg_rng_uniform(rng);

	if (u < g->noise || g->k >= g->n_ent)
		xt = zipf_rank(&g->ent, g->n_ent, v);
	else {
		uint64_t c = (xh % g->k + shift_of(g, r)) % g->k;
		uint64_t members = (g->n_ent - c + g->k - 1) / g->k;

		xt = c + g->k * zipf_rank(&g->ent, members, v);
	}
	out[0] = (uint32_t)rank_id(xh, g->ent_mul, g->n_ent);
	out[1] = (uint32_t)r;
	out[2] = (uint32_t)rank_id(xt, g->ent_mul, g->n_ent);
}

static void
count_edge(struct gen *g, const uint32_t e[3])
{
	if (g->deg_ent == NULL)
		return;
	g->deg_ent[e[0]]++;
	g->deg_ent[e[2]]++;
	g->deg_rel[e[1]]++;
}

/* The stream of split s: seeded from (seed, s), so the three splits are
 * independent and each is the same whichever is written. */
static void
split_rng(const struct gen *g, int s, struct kg_rng *rng)
{
	kg_rng_seed(rng, g->seed, 0x66623836ULL + (uint64_t)s);
}

static int
write_split_npy(struct gen *g, const char *dir, int s)
{
	struct kg_npy_writer w;
	struct kg_rng rng;
	uint64_t row = 3, i, k = 0;
	uint32_t *buf;
	char *name = kg_xasprintf("%s.npy", split_names[s]);
	char *path = kg_path_join(dir, name);
	int rc;

	free(name);
	rc = kg_npy_writer_open(&w, path, KG_DT_I4, 2, &row);
	free(path);
	if (rc < 0)
		return -1;
	buf = kg_xmallocarray(CHUNK_ROWS, 3 * sizeof(*buf));
	split_rng(g, s, &rng);
	for (i = 0; i < g->n_edges[s]; i++) {
		draw_edge(g, &rng, &buf[3 * k]);
		count_edge(g, &buf[3 * k]);
		if (++k == CHUNK_ROWS || i + 1 == g->n_edges[s]) {
			if (kg_npy_writer_append(&w, buf, k) < 0)
				break;
			k = 0;
		}
	}
	free(buf);
	return kg_npy_writer_close(&w);
}

/* "id<TAB>id" for ids [0, n): the names are the decimal IDs. */
static int
write_names(const char *dir, const char *file, uint64_t n)
{
	char *path;
	FILE *f = kg_wfile_open(dir, file, &path);
	uint64_t i;

	if (f == NULL)
		return -1;
	for (i = 0; i < n; i++)
		fprintf(f, "%" PRIu64 "\t%" PRIu64 "\n", i, i);
	return kg_wfile_close(f, path, 1);
}

/* Share of all counts held by the top 1% (at least one) of the n
 * counters, from a histogram of their values. */
static double
top_share(const uint32_t *deg, uint64_t n, uint64_t *zeros)
{
	uint32_t max = 0;
	uint64_t i, *hist, total = 0, top = n / 100 > 0 ? n / 100 : 1, taken = 0;
	double held = 0;
	int64_t d;

	for (i = 0; i < n; i++) {
		total += deg[i];
		if (deg[i] > max)
			max = deg[i];
	}
	hist = kg_xcalloc((size_t)max + 1, sizeof(*hist));
	for (i = 0; i < n; i++)
		hist[deg[i]]++;
	*zeros = hist[0];
	for (d = max; d >= 0 && taken < top; d--) {
		uint64_t take = hist[d] < top - taken ? hist[d] : top - taken;

		taken += take;
		held += (double)take * (double)d;
	}
	free(hist);
	return total > 0 ? held / (double)total : 0;
}

static void
set_config(struct kg_manifest *m, const struct gen *g, double scale)
{
	kg_manifest_set_config(m, "generator", json_string("gen_freebase"));
	kg_manifest_set_config(m, "scale", json_real(scale));
	kg_manifest_set_config(m, "seed", json_integer((json_int_t)g->seed));
	kg_manifest_set_config(m, "clusters", json_integer((json_int_t)g->k));
	kg_manifest_set_config(m, "noise", json_real(g->noise));
	kg_manifest_set_config(m, "ent_skew", json_real(g->ent_skew));
	kg_manifest_set_config(m, "rel_skew", json_real(g->rel_skew));
	kg_manifest_set_config(m, "dedup", json_false());
	kg_manifest_set_config(m, "split", json_null());
}

static void
set_figures(struct kg_manifest *m, const struct gen *g, double secs)
{
	json_t *t = json_object();
	uint64_t zeros_e, zeros_r;
	double se = top_share(g->deg_ent, g->n_ent, &zeros_e);
	double sr = top_share(g->deg_rel, g->n_rel, &zeros_r);

	kg_manifest_set_figure_u64(m, "entities", g->n_ent);
	kg_manifest_set_figure_u64(m, "relations", g->n_rel);
	json_object_set_new(t, "train", json_integer((json_int_t)
	    g->n_edges[0]));
	json_object_set_new(t, "valid", json_integer((json_int_t)
	    g->n_edges[1]));
	json_object_set_new(t, "test", json_integer((json_int_t)
	    g->n_edges[2]));
	kg_manifest_set_figure(m, "triples", t);
	kg_manifest_set_figure_u64(m, "duplicates", 0);
	kg_manifest_set_figure(m, "id_dtype", json_string("int32"));
	kg_manifest_set_figure(m, "top1pct_entity_endpoint_share",
	    json_real(se));
	kg_manifest_set_figure(m, "top1pct_relation_edge_share",
	    json_real(sr));
	kg_manifest_set_figure_u64(m, "entities_without_edges", zeros_e);
	kg_manifest_set_figure_u64(m, "relations_without_edges", zeros_r);
	kg_manifest_set_figure(m, "seconds", json_real(secs));
	kg_manifest_set_figure_u64(m, "peak_rss_kib", kg_peak_rss_kib());
}

static int
write_dataset(struct gen *g, const char *out, int force, double scale,
    int argc, char *argv[])
{
	static const char *const files[] = { "entities.tsv", "relations.tsv",
	    "train.npy", "valid.npy", "test.npy" };
	struct kg_stage st = KG_STAGE_INIT;
	struct timespec t0, t1;
	int s, rc = -1;
	size_t i;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (kg_stage_begin(&st, out, force, NULL, 0, argc, argv) < 0)
		goto out;
	/* Readers check the tool that wrote a dataset: the layout is
	 * kg-ingest's; config.generator names the writer. */
	json_object_set_new(st.manifest.root, "tool", json_string("kg-ingest"));
	g->deg_ent = kg_xcalloc(g->n_ent, sizeof(*g->deg_ent));
	g->deg_rel = kg_xcalloc(g->n_rel, sizeof(*g->deg_rel));
	if (write_names(st.dir, "entities.tsv", g->n_ent) < 0 ||
	    write_names(st.dir, "relations.tsv", g->n_rel) < 0)
		goto out;
	for (s = 0; s < 3; s++)
		if (write_split_npy(g, st.dir, s) < 0)
			goto out;
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if (kg_stage_add_file(&st, files[i]) < 0)
			goto out;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	set_config(&st.manifest, g, scale);
	set_figures(&st.manifest, g, (double)(t1.tv_sec - t0.tv_sec) +
	    (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9);
	rc = kg_stage_commit(&st);
out:
	kg_stage_release(&st);
	free(g->deg_ent);
	free(g->deg_rel);
	g->deg_ent = g->deg_rel = NULL;
	return rc;
}

/* Split s as "head<TAB>relation<TAB>tail" lines of decimal IDs. */
static int
write_tsv(const struct gen *g, int s)
{
	struct kg_rng rng;
	uint32_t e[3];
	uint64_t i;

	split_rng(g, s, &rng);
	for (i = 0; i < g->n_edges[s]; i++) {
		draw_edge(g, &rng, e);
		if (printf("%" PRIu32 "\t%" PRIu32 "\t%" PRIu32 "\n", e[0],
		    e[1], e[2]) < 0)
			break;
	}
	return kg_close_stdout();
}

static void
usage(FILE *f)
{
	fprintf(f, "usage: gen_freebase [-f] [--scale S] [--seed N] "
	    "[--clusters K] [--noise P]\n"
	    "                    [--ent_skew A] [--rel_skew B] -o DATASET\n"
	    "       gen_freebase [options] --tsv train|valid|test\n");
}

static uint64_t
scaled(uint64_t n, double scale)
{
	double x = floor((double)n * scale + 0.5);

	return x < 1 ? 1 : (uint64_t)x;
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "scale", required_argument, NULL, 'S' },
		{ "seed", required_argument, NULL, 's' },
		{ "clusters", required_argument, NULL, 'k' },
		{ "noise", required_argument, NULL, 'n' },
		{ "ent_skew", required_argument, NULL, 'a' },
		{ "rel_skew", required_argument, NULL, 'b' },
		{ "tsv", required_argument, NULL, 't' },
		{ "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct gen g = { .seed = 1, .k = 64, .noise = 0.25, .ent_skew = 0.8,
	    .rel_skew = 1.1 };
	const char *out = NULL;
	double scale = 1;
	int ch, force = 0, tsv = -1, s;

	kg_setprogname(argv[0]);
	while ((ch = getopt_long(argc, argv, "fho:", longopts, NULL)) != -1) {
		switch (ch) {
		case 'S':
			if (kg_parse_double("--scale", optarg, 1e-9, 1.5,
			    &scale) < 0)
				return KG_EXIT_USAGE;
			break;
		case 's':
			if (kg_parse_u64("--seed", optarg, 0, UINT64_MAX,
			    &g.seed) < 0)
				return KG_EXIT_USAGE;
			break;
		case 'k':
			if (kg_parse_u64("--clusters", optarg, 1, 1u << 30,
			    &g.k) < 0)
				return KG_EXIT_USAGE;
			break;
		case 'n':
			if (kg_parse_double("--noise", optarg, 0, 1,
			    &g.noise) < 0)
				return KG_EXIT_USAGE;
			break;
		case 'a':
			if (kg_parse_double("--ent_skew", optarg, 0, 4,
			    &g.ent_skew) < 0)
				return KG_EXIT_USAGE;
			break;
		case 'b':
			if (kg_parse_double("--rel_skew", optarg, 0, 4,
			    &g.rel_skew) < 0)
				return KG_EXIT_USAGE;
			break;
		case 't':
			for (s = 0; s < 3 && strcmp(optarg,
			    split_names[s]) != 0; s++)
				;
			if (s == 3) {
				kg_error("--tsv: expected train, valid or "
				    "test, not '%s'", optarg);
				return KG_EXIT_USAGE;
			}
			tsv = s;
			break;
		case 'o':
			out = optarg;
			break;
		case 'f':
			force = 1;
			break;
		case 'h':
			usage(stdout);
			return KG_EXIT_OK;
		default:
			usage(stderr);
			return KG_EXIT_USAGE;
		}
	}
	if (optind != argc || (out == NULL) == (tsv < 0)) {
		usage(stderr);
		return KG_EXIT_USAGE;
	}
	g.n_ent = scaled(fb_counts[0], scale);
	g.n_rel = scaled(fb_counts[1], scale);
	for (s = 0; s < 3; s++)
		g.n_edges[s] = scaled(fb_counts[2 + s], scale);
	g.ent_mul = unit_mod(g.n_ent);
	g.rel_mul = unit_mod(g.n_rel);
	zipf_init(&g.ent, g.n_ent, g.ent_skew);
	zipf_init(&g.rel, g.n_rel, g.rel_skew);
	if (tsv >= 0)
		return write_tsv(&g, tsv) < 0 ? KG_EXIT_FAIL : KG_EXIT_OK;
	return write_dataset(&g, out, force, scale, argc, argv) < 0 ?
	    KG_EXIT_FAIL : KG_EXIT_OK;
}
