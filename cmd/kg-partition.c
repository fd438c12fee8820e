/*
 * kg-partition: cut a kg-ingest dataset's entities into P parts (METIS or
 * random), assign every training triple to one part, relabel entities so
 * that each part owns a contiguous ID range, and group the training
 * triples into P x P buckets.  Option parsing only; the work is in
 * lib/app/partition_run.c.
 */
#include <getopt.h>
#include <stdio.h>
#include <unistd.h>

#include "cli/tool.h"
#include "core/util.h"
#include "app/partition_run.h"

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

int
main(int argc, char *argv[])
{
	struct kg_partition_run_opts o = KG_PARTITION_RUN_OPTS_INIT;
	int ch;

	kg_setprogname(argv[0]);
	o.part.nparts = 2;
	o.argc = argc;
	o.argv = argv;
	while ((ch = kg_tool_getopt(argc, argv, "o:p:m:e:i:l:s:fqh", long_opts,
	    NULL)) != -1) {
		switch (ch) {
		case 'o':
			o.output = optarg;
			break;
		case 'p':
			if (kg_parse_u32("--parts", optarg, 1, MAX_PARTS,
			    &o.part.nparts) < 0)
				return KG_EXIT_USAGE;
			break;
		case 'm':
			if (kg_part_method_parse(optarg, &o.part.method) < 0) {
				kg_error("--method: unknown method '%s' "
				    "(metis, random)", optarg);
				return KG_EXIT_USAGE;
			}
			break;
		case 'e':
			if (kg_edge_assign_parse(optarg, &o.part.edges) < 0) {
				kg_error("--edges: unknown assignment '%s' "
				    "(head, tail, vertex-cut)", optarg);
				return KG_EXIT_USAGE;
			}
			break;
		case 'i':
			if (kg_parse_double("--imbalance", optarg, 0.001, 10.0,
			    &o.part.imbalance) < 0)
				return KG_EXIT_USAGE;
			break;
		case 'l':
			if (kg_parse_double("--lambda", optarg, 0.0, 1e6,
			    &o.part.lambda) < 0)
				return KG_EXIT_USAGE;
			break;
		case 's':
			if (kg_parse_u64("--seed", optarg, 0, UINT64_MAX,
			    &o.part.seed) < 0)
				return KG_EXIT_USAGE;
			break;
		case 'f':
			o.force = 1;
			break;
		case 'q':
			o.quiet = 1;
			break;
		case 'P':
			o.progress = 1;
			break;
		case 'h':
			return kg_tool_help(usage);
		case 'V':
			return kg_tool_version("kg-partition");
		default:
			return kg_tool_usage_error();
		}
	}
	if (argc - optind != 1 || o.output == NULL) {
		kg_error("%s", o.output == NULL ? "no output directory (-o)" :
		    "expected one dataset directory");
		return kg_tool_usage_error();
	}
	o.dataset = argv[optind];
	if (!o.quiet && isatty(STDERR_FILENO))
		o.progress = 1;
	return kg_tool_exit(kg_partition_run(&o));
}
