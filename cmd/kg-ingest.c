/*
 * kg-ingest: read triples (TSV or CSV, plain or gzip, files or stdin) and
 * write a kgpipe dataset directory.  Option parsing only; the work is in
 * lib/ingest/ingest.c.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/tool.h"
#include "core/util.h"
#include "ingest/ingest.h"

enum {
	OPT_VERSION = 256, OPT_PROGRESS, OPT_FORMAT, OPT_COLUMNS, OPT_HEADER,
	OPT_NO_COMMENTS, OPT_TRAIN, OPT_VALID, OPT_TEST, OPT_SPLIT, OPT_SEED,
	OPT_UNSEEN, OPT_DEDUP, OPT_TYPES, OPT_MAX_ERRORS
};

static const struct option long_opts[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "quiet", no_argument, NULL, 'q' },
	{ "progress", no_argument, NULL, OPT_PROGRESS },
	{ "output", required_argument, NULL, 'o' },
	{ "force", no_argument, NULL, 'f' },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "delimiter", required_argument, NULL, 'd' },
	{ "columns", required_argument, NULL, OPT_COLUMNS },
	{ "header", no_argument, NULL, OPT_HEADER },
	{ "no-comments", no_argument, NULL, OPT_NO_COMMENTS },
	{ "train", required_argument, NULL, OPT_TRAIN },
	{ "valid", required_argument, NULL, OPT_VALID },
	{ "test", required_argument, NULL, OPT_TEST },
	{ "split", required_argument, NULL, OPT_SPLIT },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "unseen", required_argument, NULL, OPT_UNSEEN },
	{ "dedup", no_argument, NULL, OPT_DEDUP },
	{ "types", required_argument, NULL, OPT_TYPES },
	{ "max-errors", required_argument, NULL, OPT_MAX_ERRORS },
	{ NULL, 0, NULL, 0 }
};

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: kg-ingest [-fhq] [--progress] [--version] -o dir\n"
	    "                 [--format tsv|csv] [-d char] [--columns order]\n"
	    "                 [--header] [--no-comments] [--unseen keep|drop|error]\n"
	    "                 [--dedup] [--types file] [--max-errors n]\n"
	    "                 --train file [--valid file] [--test file]\n"
	    "       kg-ingest [options] -o dir [--split p,p,p] [--seed n] [file ...]\n"
	    "\n"
	    "Read triples from split files, or from files or stdin (\"-\", the\n"
	    "default) split at random, and write a dataset directory.\n"
	    "  -o, --output dir      output directory (must not exist)\n"
	    "  -f, --force           replace an existing output directory\n"
	    "      --format fmt      tsv (default) or csv; gzip is detected\n"
	    "  -d, --delimiter char  field delimiter (default tab, or comma for\n"
	    "                        csv; \"\\t\" or \"tab\" for a tab)\n"
	    "      --columns order   order of head, relation, tail (default hrt)\n"
	    "      --header          skip the first record of each file\n"
	    "      --no-comments     do not skip lines starting with '#'\n"
	    "      --train file      training triples (then --valid, --test)\n"
	    "      --split p,p,p     train,valid,test fractions summing to 1\n"
	    "      --seed n          seed of the random split (default 0)\n"
	    "      --unseen policy   valid/test triples with names absent from\n"
	    "                        train: keep (default), drop or error\n"
	    "      --dedup           drop repeated triples\n"
	    "      --types file      node types, one \"entity<SEP>type\" a line\n"
	    "      --max-errors n    skip up to n bad lines (default 0)\n"
	    "  -q, --quiet           no progress, even on a terminal\n"
	    "      --progress        progress on stderr\n"
	    "  -h, --help            this help\n"
	    "      --version         print the version\n");
}

static int
parse_delim(const char *s, char *out)
{
	if (strcmp(s, "\\t") == 0 || strcmp(s, "tab") == 0)
		*out = '\t';
	else if (strlen(s) == 1 && s[0] != '\n' && s[0] != '\r' &&
	    s[0] != '"')
		*out = s[0];
	else {
		kg_error("--delimiter: '%s' is not one character (or \\t)", s);
		return -1;
	}
	return 0;
}

int
main(int argc, char *argv[])
{
	struct kg_ingest_opts o = KG_INGEST_OPTS_INIT;
	static const char *const stdin_only[] = { "-" };
	double split[3] = { 0, 0, 0 };
	size_t nsplit;
	int ch, quiet = 0, progress = 0, delim_set = 0;

	kg_setprogname(argv[0]);
	o.argc = argc;		/* the whole command line, for the manifest */
	o.argv = argv;
	while ((ch = getopt_long(argc, argv, "hqo:fd:", long_opts,
	    NULL)) != -1) {
		switch (ch) {
		case 'h':
			return kg_tool_help(usage);
		case OPT_VERSION:
			return kg_tool_version("kg-ingest");
		case 'q':
			quiet = 1;
			break;
		case OPT_PROGRESS:
			progress = 1;
			break;
		case 'o':
			o.output = optarg;
			break;
		case 'f':
			o.force = 1;
			break;
		case OPT_FORMAT:
			if (strcmp(optarg, "tsv") == 0)
				o.tab.format = KG_TAB_TSV;
			else if (strcmp(optarg, "csv") == 0)
				o.tab.format = KG_TAB_CSV;
			else {
				kg_error("--format: '%s' is not tsv or csv",
				    optarg);
				return KG_EXIT_USAGE;
			}
			break;
		case 'd':
			if (parse_delim(optarg, &o.tab.delim) < 0)
				return KG_EXIT_USAGE;
			delim_set = 1;
			break;
		case OPT_COLUMNS:
			if (kg_ingest_check_columns(optarg) < 0)
				return KG_EXIT_USAGE;
			memcpy(o.columns, optarg, 4);
			break;
		case OPT_HEADER:
			o.tab.header = 1;
			break;
		case OPT_NO_COMMENTS:
			o.tab.comments = 0;
			break;
		case OPT_TRAIN:
			o.train = optarg;
			break;
		case OPT_VALID:
			o.valid = optarg;
			break;
		case OPT_TEST:
			o.test = optarg;
			break;
		case OPT_SPLIT:
			if (kg_parse_double_list("--split", optarg, 0, 1, split,
			    3, &nsplit) < 0)
				return KG_EXIT_USAGE;
			if (nsplit < 2) {
				kg_error("--split: give train,valid[,test] "
				    "fractions");
				return KG_EXIT_USAGE;
			}
			o.use_split = 1;
			break;
		case OPT_SEED:
			if (kg_parse_u64("--seed", optarg, 0, UINT64_MAX,
			    &o.seed) < 0)
				return KG_EXIT_USAGE;
			break;
		case OPT_UNSEEN:
			if (kg_ingest_parse_unseen(optarg, &o.unseen) < 0)
				return KG_EXIT_USAGE;
			break;
		case OPT_DEDUP:
			o.dedup = 1;
			break;
		case OPT_TYPES:
			o.types = optarg;
			break;
		case OPT_MAX_ERRORS:
			if (kg_parse_u64("--max-errors", optarg, 0, UINT64_MAX,
			    &o.max_errors) < 0)
				return KG_EXIT_USAGE;
			break;
		default:
			usage(stderr);
			return KG_EXIT_USAGE;
		}
	}
	argc -= optind;
	argv += optind;
	if (o.output == NULL) {
		kg_error("no output directory (-o)");
		usage(stderr);
		return KG_EXIT_USAGE;
	}
	if (o.train == NULL && (o.valid != NULL || o.test != NULL)) {
		kg_error("--valid and --test need --train");
		return KG_EXIT_USAGE;
	}
	if (o.train != NULL && (argc > 0 || o.use_split)) {
		kg_error("--train cannot be combined with %s",
		    o.use_split ? "--split" : "input files");
		return KG_EXIT_USAGE;
	}
	if (o.tab.format == KG_TAB_CSV && !delim_set)
		o.tab.delim = ',';
	if (o.use_split) {
		memcpy(o.split, split, sizeof(split));
		if (kg_ingest_check_split(o.split) < 0)
			return KG_EXIT_USAGE;
	}
	if (o.train == NULL) {
		o.inputs = argc > 0 ? (const char *const *)argv : stdin_only;
		o.n_inputs = argc > 0 ? (size_t)argc : 1;
	}
	o.progress = !quiet && (progress || isatty(STDERR_FILENO));
	return kg_tool_exit(kg_ingest_run(&o));
}
