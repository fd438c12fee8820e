/*
 * kg-expand: turn each part of a kg-partition output into a
 * self-sufficient subgraph: its core triples plus the k-hop neighbourhood
 * a k-layer GNN encoder reads, with local IDs and sliced node features.
 * The work is in lib/graph/expand.c.
 */
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "io/dataset.h"
#include "graph/expand.h"
#include "io/manifest.h"
#include "io/outdir.h"
#include "graph/partition.h"
#include "core/util.h"

static void
usage(FILE *fp)
{
	fprintf(fp,
	    "usage: kg-expand [-fq] [--progress] [-c fanout] [-F features] "
	    "[-k hops] [-s seed]\n"
	    "                 -p partitions -o outdir dataset\n"
	    "  -p, --partitions DIR   kg-partition output for the dataset\n"
	    "  -o, --output DIR       directory to write (part-000/ ...)\n"
	    "  -k, --hops K           neighbourhood depth, 0..%d (default 1)\n"
	    "  -c, --fanout LIST      per-hop caps on triples taken per "
	    "entity (25,10)\n"
	    "  -F, --features DIR     feature directory to slice per part\n"
	    "  -s, --seed N           random seed for the fan-out sampler "
	    "(default 0)\n"
	    "  -f, --force            replace an existing output directory\n"
	    "  -q, --quiet            no statistics on stderr\n"
	    "      --progress         report each part on stderr\n"
	    "  -h, --help             this help\n"
	    "      --version          print the version\n", KG_EXPAND_MAX_HOPS);
}

static const struct option long_opts[] = {
	{ "partitions", required_argument, NULL, 'p' },
	{ "output", required_argument, NULL, 'o' },
	{ "hops", required_argument, NULL, 'k' },
	{ "fanout", required_argument, NULL, 'c' },
	{ "features", required_argument, NULL, 'F' },
	{ "seed", required_argument, NULL, 's' },
	{ "force", no_argument, NULL, 'f' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "progress", no_argument, NULL, 'P' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 }
};

struct args {
	struct kg_expand_opts o;
	const char *dataset, *parts, *out, *features, *fanout;
	int force, quiet, progress;
};

static int
parse_fanout(struct args *a)
{
	double v[KG_EXPAND_MAX_HOPS];
	size_t n, i;

	if (kg_parse_double_list("--fanout", a->fanout, 1, 1e9, v,
	    KG_EXPAND_MAX_HOPS, &n) < 0)
		return -1;
	if (n != a->o.hops) {
		kg_error("--fanout: %zu values for %" PRIu32 " hops", n,
		    a->o.hops);
		return -1;
	}
	for (i = 0; i < n; i++) {
		if (v[i] != floor(v[i])) {
			kg_error("--fanout: %g is not a whole number", v[i]);
			return -1;
		}
		a->o.fanout[i] = (uint32_t)v[i];
	}
	a->o.nfanout = (uint32_t)n;
	return 0;
}

/* The partition directory must have been made from this very dataset. */
static int
check_same_dataset(const struct kg_partition_book *b,
    const struct kg_dataset *ds, const char *pdir)
{
	json_t *inputs = kg_manifest_get(&b->manifest, "inputs"), *in;
	char *path = kg_path_join(ds->dir, "manifest.json");
	char sum[32];
	size_t i;
	int rc = -1;

	if (kg_checksum_file(path, sum) < 0)
		goto out;
	json_array_foreach(inputs, i, in) {
		const char *role, *cs;

		role = json_string_value(json_object_get(in, "role"));
		cs = json_string_value(json_object_get(in, "checksum"));

		if (role && cs && strcmp(role, "dataset") == 0 &&
		    strcmp(cs, sum) == 0)
			rc = 0;
	}
	if (rc < 0)
		kg_error("'%s' was not made from dataset '%s'", pdir, ds->dir);
	else if (b->n_nodes != ds->n_entities ||
	    b->n_edges != ds->split[KG_SPLIT_TRAIN].n) {
		kg_error("'%s' does not match the size of dataset '%s'", pdir,
		    ds->dir);
		rc = -1;
	}
out:
	free(path);
	return rc;
}

static int
run(const struct args *a, int argc, char *argv[])
{
	struct kg_dataset ds = KG_DATASET_INIT;
	struct kg_partition_book b = KG_PARTITION_BOOK_INIT;
	struct kg_expand x = KG_EXPAND_INIT;
	struct kg_expand_stats st = KG_EXPAND_STATS_INIT;
	struct kg_outdir od = KG_OUTDIR_INIT;
	struct kg_manifest m = KG_MANIFEST_INIT;
	const struct kg_triples *tr;
	json_t *fan;
	uint32_t i;
	int rc;

	rc = kg_dataset_load(&ds, a->dataset);
	if (rc == 0)
		rc = kg_partition_book_load(&b, a->parts);
	if (rc < 0) {
		rc = rc == KG_ERR_VERSION ? KG_EXIT_VERSION : KG_EXIT_FAIL;
		goto out;
	}
	rc = KG_EXIT_FAIL;
	tr = &ds.split[KG_SPLIT_TRAIN];
	if (check_same_dataset(&b, &ds, a->parts) < 0 ||
	    kg_outdir_begin(&od, a->out, a->force) < 0)
		goto out;
	kg_manifest_init(&m, argc, argv);
	if (kg_manifest_add_input(&m, "dataset", a->dataset) < 0 ||
	    kg_manifest_add_input(&m, "partitions", a->parts) < 0)
		goto out;
	if (a->features != NULL) {
		char *fm = kg_path_join(a->features, "manifest.json");
		int has = kg_path_exists(fm);

		free(fm);
		if (has && kg_manifest_add_input(&m, "features",
		    a->features) < 0)
			goto out;
		kg_manifest_set_config(&m, "features",
		    json_string(a->features));
	}
	kg_manifest_set_config(&m, "hops", json_integer(a->o.hops));
	kg_manifest_set_config(&m, "seed", json_integer((json_int_t)a->o.seed));
	fan = json_array();
	for (i = 0; i < a->o.nfanout; i++)
		json_array_append_new(fan, json_integer(a->o.fanout[i]));
	kg_manifest_set_config(&m, "fanout", fan);
	if (kg_expand_init(&x, ds.n_entities, tr->hrt, tr->n, b.node_part,
	    b.edge_part, b.nparts) < 0 ||
	    kg_expand_write_all(&x, &a->o, od.tmp, a->features, &m, argc, argv,
	    a->progress, &st) < 0 ||
	    kg_manifest_write(&m, od.tmp) < 0 || kg_outdir_commit(&od) < 0)
		goto out;
	if (!a->quiet)
		kg_expand_print_stats(&st, stderr);
	rc = KG_EXIT_OK;
out:
	kg_outdir_abort(&od);
	kg_manifest_release(&m);
	kg_expand_stats_release(&st);
	kg_expand_release(&x);
	kg_partition_book_release(&b);
	kg_dataset_release(&ds);
	return rc;
}

int
main(int argc, char *argv[])
{
	struct args a;
	int ch, rc;

	kg_setprogname(argv[0]);
	memset(&a, 0, sizeof(a));
	a.o.hops = 1;
	while ((ch = getopt_long(argc, argv, "p:o:k:c:F:s:fqh", long_opts,
	    NULL)) != -1) {
		switch (ch) {
		case 'p':
			a.parts = optarg;
			break;
		case 'o':
			a.out = optarg;
			break;
		case 'k':
			if (kg_parse_u32("--hops", optarg, 0,
			    KG_EXPAND_MAX_HOPS, &a.o.hops) < 0)
				return KG_EXIT_USAGE;
			break;
		case 'c':
			a.fanout = optarg;
			break;
		case 'F':
			a.features = optarg;
			break;
		case 's':
			if (kg_parse_u64("--seed", optarg, 0, UINT64_MAX,
			    &a.o.seed) < 0)
				return KG_EXIT_USAGE;
			break;
		case 'f':
			a.force = 1;
			break;
		case 'q':
			a.quiet = 1;
			break;
		case 'P':
			a.progress = 1;
			break;
		case 'h':
			usage(stdout);
			return kg_close_stdout() < 0 ? KG_EXIT_FAIL :
			    KG_EXIT_OK;
		case 'V':
			printf("kg-expand %s\n", KG_VERSION);
			return kg_close_stdout() < 0 ? KG_EXIT_FAIL :
			    KG_EXIT_OK;
		default:
			usage(stderr);
			return KG_EXIT_USAGE;
		}
	}
	if (argc - optind != 1 || a.out == NULL || a.parts == NULL) {
		kg_error("%s", a.parts == NULL ? "no partition directory (-p)" :
		    a.out == NULL ? "no output directory (-o)" :
		    "expected one dataset directory");
		usage(stderr);
		return KG_EXIT_USAGE;
	}
	if (a.fanout != NULL && parse_fanout(&a) < 0)
		return KG_EXIT_USAGE;
	a.dataset = argv[optind];
	if (!a.quiet && isatty(STDERR_FILENO))
		a.progress = 1;
	rc = run(&a, argc, argv);
	if (kg_close_stdout() < 0 && rc == KG_EXIT_OK)
		rc = KG_EXIT_FAIL;
	return rc;
}
