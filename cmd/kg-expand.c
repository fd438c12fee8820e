/*
 * kg-expand: turn each part of a kg-partition output into a
 * self-sufficient subgraph: its core triples plus the k-hop neighbourhood
 * a k-layer GNN encoder reads, with local IDs and sliced node features.
 * Option parsing only; the work is in lib/app/expand_run.c.
 */
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <unistd.h>

#include "cli/tool.h"
#include "core/util.h"
#include "app/expand_run.h"

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

static int
parse_fanout(const char *arg, struct kg_expand_opts *x)
{
	double v[KG_EXPAND_MAX_HOPS];
	size_t n, i;

	if (kg_parse_double_list("--fanout", arg, 1, 1e9, v,
	    KG_EXPAND_MAX_HOPS, &n) < 0)
		return -1;
	if (n != x->hops) {
		kg_error("--fanout: %zu values for %" PRIu32 " hops", n,
		    x->hops);
		return -1;
	}
	for (i = 0; i < n; i++) {
		if (v[i] != floor(v[i])) {
			kg_error("--fanout: %g is not a whole number", v[i]);
			return -1;
		}
		x->fanout[i] = (uint32_t)v[i];
	}
	x->nfanout = (uint32_t)n;
	return 0;
}

int
main(int argc, char *argv[])
{
	struct kg_expand_run_opts o = KG_EXPAND_RUN_OPTS_INIT;
	const char *fanout = NULL;
	int ch;

	kg_setprogname(argv[0]);
	o.argc = argc;
	o.argv = argv;
	while ((ch = kg_tool_getopt(argc, argv, "p:o:k:c:F:s:fqh", long_opts,
	    NULL)) != -1) {
		switch (ch) {
		case 'p':
			o.partitions = optarg;
			break;
		case 'o':
			o.output = optarg;
			break;
		case 'k':
			if (kg_parse_u32("--hops", optarg, 0,
			    KG_EXPAND_MAX_HOPS, &o.x.hops) < 0)
				return KG_EXIT_USAGE;
			break;
		case 'c':
			fanout = optarg;
			break;
		case 'F':
			o.features = optarg;
			break;
		case 's':
			if (kg_parse_u64("--seed", optarg, 0, UINT64_MAX,
			    &o.x.seed) < 0)
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
			return kg_tool_version("kg-expand");
		default:
			return kg_tool_usage_error();
		}
	}
	if (argc - optind != 1 || o.output == NULL || o.partitions == NULL) {
		kg_error("%s", o.partitions == NULL ?
		    "no partition directory (-p)" : o.output == NULL ?
		    "no output directory (-o)" :
		    "expected one dataset directory");
		return kg_tool_usage_error();
	}
	if (fanout != NULL && parse_fanout(fanout, &o.x) < 0)
		return KG_EXIT_USAGE;
	o.dataset = argv[optind];
	if (!o.quiet && isatty(STDERR_FILENO))
		o.progress = 1;
	return kg_tool_exit(kg_expand_run(&o));
}
