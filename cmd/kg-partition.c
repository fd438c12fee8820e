/*
 * kg-partition: cut a kg-ingest dataset's entities into P parts (METIS or
 * random), assign every training triple to one part, relabel entities so
 * that each part owns a contiguous ID range, and group the training
 * triples into P x P buckets.  The work is in lib/graph/partition.c.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <unistd.h>

#include "io/dataset.h"
#include "io/manifest.h"
#include "io/outdir.h"
#include "graph/partition.h"
#include "core/util.h"

/* The bucket table has P * P entries; this keeps it within 8 MiB. */
#define MAX_PARTS 1024

static void
usage(FILE *fp)
{
	fprintf(fp,
	    "usage: kg-partition [-fq] [--progress] [-e assign] [-i imbalance] "
	    "[-l lambda]\n"
	    "                    [-m method] [-p parts] [-s seed] -o outdir "
	    "dataset\n"
	    "  -o, --output DIR       partition directory to write\n"
	    "  -p, --parts P          number of parts, 1..%d (default 2)\n"
	    "  -m, --method M         metis (default) or random\n"
	    "  -e, --edges A          edge assignment: head (default), tail or "
	    "vertex-cut\n"
	    "  -i, --imbalance X      METIS balance tolerance, max/mean - 1 "
	    "(default 0.05)\n"
	    "  -l, --lambda X         vertex-cut balance weight (default 1)\n"
	    "  -s, --seed N           random seed (default 0)\n"
	    "  -f, --force            replace an existing output directory\n"
	    "  -q, --quiet            no statistics on stderr\n"
	    "      --progress         report each step on stderr\n"
	    "  -h, --help             this help\n"
	    "      --version          print the version\n", MAX_PARTS);
}

static const struct option long_opts[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "parts", required_argument, NULL, 'p' },
	{ "method", required_argument, NULL, 'm' },
	{ "edges", required_argument, NULL, 'e' },
	{ "imbalance", required_argument, NULL, 'i' },
	{ "lambda", required_argument, NULL, 'l' },
	{ "seed", required_argument, NULL, 's' },
	{ "force", no_argument, NULL, 'f' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "progress", no_argument, NULL, 'P' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 }
};

static void
set_config(struct kg_manifest *m, const struct kg_partition_opts *o)
{
	kg_manifest_set_config(m, "method",
	    json_string(kg_part_method_name(o->method)));
	kg_manifest_set_config(m, "edges",
	    json_string(kg_edge_assign_name(o->edges)));
	kg_manifest_set_config(m, "nparts", json_integer(o->nparts));
	kg_manifest_set_config(m, "seed", json_integer((json_int_t)o->seed));
	kg_manifest_set_config(m, "imbalance", json_real(o->imbalance));
	kg_manifest_set_config(m, "lambda", json_real(o->lambda));
}

static int
run(const struct kg_partition_opts *o, const char *in, const char *out,
    int force, int quiet, int progress, int argc, char *argv[])
{
	struct kg_dataset ds = KG_DATASET_INIT;
	struct kg_partition pt = KG_PARTITION_INIT;
	struct kg_outdir od = KG_OUTDIR_INIT;
	struct kg_manifest m = KG_MANIFEST_INIT;
	const struct kg_triples *tr;
	int rc;

	rc = kg_dataset_load(&ds, in);
	if (rc < 0)
		return rc == KG_ERR_VERSION ? KG_EXIT_VERSION : KG_EXIT_FAIL;
	tr = &ds.split[KG_SPLIT_TRAIN];
	rc = KG_EXIT_FAIL;
	if (o->nparts > ds.n_entities) {
		kg_error("%s: cannot cut %" PRIu64 " entities into %" PRIu32
		    " parts", in, ds.n_entities, o->nparts);
		goto out;
	}
	if (kg_outdir_begin(&od, out, force) < 0)
		goto out;
	if (progress)
		fprintf(stderr, "kg-partition: %" PRIu64 " entities, %" PRIu64
		    " training triples, %s into %" PRIu32 " parts\n",
		    ds.n_entities, tr->n, kg_part_method_name(o->method),
		    o->nparts);
	if (kg_partition_compute(&pt, ds.n_entities, tr->hrt, tr->n, o) < 0)
		goto out;
	if (progress)
		fprintf(stderr, "kg-partition: partitioned in %.3f s, "
		    "writing '%s'\n", pt.seconds_total, out);
	kg_manifest_init(&m, argc, argv);
	if (kg_manifest_add_input(&m, "dataset", in) < 0 ||
	    kg_partition_write(&pt, od.tmp, &m) < 0)
		goto out;
	set_config(&m, o);
	if (kg_manifest_write(&m, od.tmp) < 0 || kg_outdir_commit(&od) < 0)
		goto out;
	if (!quiet)
		kg_partition_print_stats(&pt, stderr);
	rc = KG_EXIT_OK;
out:
	kg_outdir_abort(&od);
	kg_manifest_release(&m);
	kg_partition_release(&pt);
	kg_dataset_release(&ds);
	return rc;
}

int
main(int argc, char *argv[])
{
	struct kg_partition_opts o = KG_PARTITION_OPTS_INIT;
	const char *out = NULL;
	int ch, force = 0, quiet = 0, progress = 0, rc;

	kg_setprogname(argv[0]);
	o.nparts = 2;
	while ((ch = getopt_long(argc, argv, "o:p:m:e:i:l:s:fqh", long_opts,
	    NULL)) != -1) {
		switch (ch) {
		case 'o':
			out = optarg;
			break;
		case 'p':
			if (kg_parse_u32("--parts", optarg, 1, MAX_PARTS,
			    &o.nparts) < 0)
				return KG_EXIT_USAGE;
			break;
		case 'm':
			if (kg_part_method_parse(optarg, &o.method) < 0) {
				kg_error("--method: unknown method '%s' "
				    "(metis, random)", optarg);
				return KG_EXIT_USAGE;
			}
			break;
		case 'e':
			if (kg_edge_assign_parse(optarg, &o.edges) < 0) {
				kg_error("--edges: unknown assignment '%s' "
				    "(head, tail, vertex-cut)", optarg);
				return KG_EXIT_USAGE;
			}
			break;
		case 'i':
			if (kg_parse_double("--imbalance", optarg, 0.001, 10.0,
			    &o.imbalance) < 0)
				return KG_EXIT_USAGE;
			break;
		case 'l':
			if (kg_parse_double("--lambda", optarg, 0.0, 1e6,
			    &o.lambda) < 0)
				return KG_EXIT_USAGE;
			break;
		case 's':
			if (kg_parse_u64("--seed", optarg, 0, UINT64_MAX,
			    &o.seed) < 0)
				return KG_EXIT_USAGE;
			break;
		case 'f':
			force = 1;
			break;
		case 'q':
			quiet = 1;
			break;
		case 'P':
			progress = 1;
			break;
		case 'h':
			usage(stdout);
			return kg_close_stdout() < 0 ? KG_EXIT_FAIL :
			    KG_EXIT_OK;
		case 'V':
			printf("kg-partition %s\n", KG_VERSION);
			return kg_close_stdout() < 0 ? KG_EXIT_FAIL :
			    KG_EXIT_OK;
		default:
			usage(stderr);
			return KG_EXIT_USAGE;
		}
	}
	if (argc - optind != 1 || out == NULL) {
		if (out == NULL)
			kg_error("no output directory (-o)");
		else
			kg_error("expected one dataset directory");
		usage(stderr);
		return KG_EXIT_USAGE;
	}
	if (!quiet && isatty(STDERR_FILENO))
		progress = 1;
	rc = run(&o, argv[optind], out, force, quiet, progress, argc, argv);
	if (kg_close_stdout() < 0 && rc == KG_EXIT_OK)
		rc = KG_EXIT_FAIL;
	return rc;
}
