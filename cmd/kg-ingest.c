/*
 * kg-ingest: read triples (TSV, CSV, N-Triples, N-Quads or Turtle, plain
 * or gzip, files or stdin) and write a kgpipe dataset directory.  Option
 * parsing only; the work is in lib/ingest and lib/app/ingest_run.c.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/tool.h"
#include "core/progress.h"
#include "core/util.h"
#include "ingest/dglke.h"
#include "ingest/rdf.h"
#include "app/ingest_run.h"

enum {
	OPT_VERSION = 256, OPT_PROGRESS, OPT_FORMAT, OPT_COLUMNS, OPT_HEADER,
	OPT_NO_COMMENTS, OPT_TRAIN, OPT_VALID, OPT_TEST, OPT_SPLIT, OPT_SEED,
	OPT_UNSEEN, OPT_DEDUP, OPT_TYPES, OPT_MAX_ERRORS, OPT_DATA_PATH,
	OPT_DATASET, OPT_DGLKE, OPT_COMMENT, OPT_BASE, OPT_GRAPH, OPT_LANG,
	OPT_RDF_TYPES, OPT_PREDICATES, OPT_EXCLUDE_PREDICATES, OPT_PREFIX,
	OPT_COMPACT, OPT_EXTEND
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
	{ "comment", required_argument, NULL, OPT_COMMENT },
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
	{ "base", required_argument, NULL, OPT_BASE },
	{ "graph", required_argument, NULL, OPT_GRAPH },
	{ "lang", required_argument, NULL, OPT_LANG },
	{ "rdf-types", required_argument, NULL, OPT_RDF_TYPES },
	{ "predicates", required_argument, NULL, OPT_PREDICATES },
	{ "exclude-predicates", required_argument, NULL,
	    OPT_EXCLUDE_PREDICATES },
	{ "prefix", required_argument, NULL, OPT_PREFIX },
	{ "compact", no_argument, NULL, OPT_COMPACT },
	/* DGL-KE's spellings (--data_files is taken out of argv first). */
	{ "data_path", required_argument, NULL, OPT_DATA_PATH },
	{ "data-path", required_argument, NULL, OPT_DATA_PATH },
	{ "dataset", required_argument, NULL, OPT_DATASET },
	{ "dglke", required_argument, NULL, OPT_DGLKE },
	{ "extend", required_argument, NULL, OPT_EXTEND },
	{ NULL, 0, NULL, 0 }
};

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: kg-ingest [-fhq] [--progress] [--version] -o dir\n"
	    "                 [--format tsv|csv|ntriples|nquads|turtle] [-d char]\n"
	    "                 [--columns order] [--header]\n"
	    "                 [--comment char | --no-comments]\n"
	    "                 [--unseen keep|drop|error] [--dedup] [--types file]\n"
	    "                 [--max-errors n] [--extend old]\n"
	    "                 [--base iri] [--graph iri]\n"
	    "                 [--lang list] [--rdf-types edge|types|attribute]\n"
	    "                 [--predicates file] [--exclude-predicates file]\n"
	    "                 [--compact [--prefix name=iri ...]]\n"
	    "                 --train file [--valid file] [--test file]\n"
	    "       kg-ingest [options] -o dir [--split p,p,p] [--seed n] [file ...]\n"
	    "       kg-ingest [-fq] [--progress] [-d char] -o dir --dglke folder\n"
	    "       kg-ingest [options] -o dir [--data_path dir] --format f\n"
	    "                 [--dataset name] [--data_files file ...]\n"
	    "       kg-ingest [options] -o dir [--data_path dir] --dataset name\n"
	    "\n"
	    "Read triples from split files, or from files or stdin (\"-\", the\n"
	    "default) split at random, and write a dataset directory.\n"
	    "  -o, --output dir      output directory (must not exist)\n"
	    "  -f, --force           replace an existing output directory\n"
	    "      --format fmt      tsv (default) or csv; ntriples, nquads or\n"
	    "                        turtle (by default for files named .nt,\n"
	    "                        .nq, .ttl, also .gz); gzip is detected; or\n"
	    "                        DGL-KE's raw_udd_hrt (names; any order of h,\n"
	    "                        r, t), udd_hrt (IDs, with dictionaries) or\n"
	    "                        built_in (DATA_PATH/DATASET folder)\n"
	    "  -d, --delimiter char  field delimiter (default tab, or comma for\n"
	    "                        csv; \"\\t\" or \"tab\" for a tab)\n"
	    "      --columns order   order of head, relation, tail (default hrt)\n"
	    "      --header          skip the first record of each file\n"
	    "      --comment char    skip every line starting with char (by\n"
	    "                        default a line starting with '#' is\n"
	    "                        skipped only when it is not a record)\n"
	    "      --no-comments     skip no line as a comment\n"
	    "      --train file      training triples (then --valid, --test)\n"
	    "      --split p,p,p     train,valid,test fractions summing to 1\n"
	    "      --seed n          seed of the random split (default 0)\n"
	    "      --unseen policy   valid/test triples with names absent from\n"
	    "                        train: keep (default), drop or error\n"
	    "      --dedup           drop repeated triples\n"
	    "      --extend old      keep the IDs and splits of dataset old and\n"
	    "                        add these triples to it (implies --dedup)\n"
	    "      --types file      node types, one \"entity<SEP>type\" a line\n"
	    "      --max-errors n    skip up to n bad lines (default 0)\n"
	    "      --base iri        base IRI of relative IRIs (Turtle)\n"
	    "      --graph iri       N-Quads: keep only this graph's statements\n"
	    "      --lang list       keep literals tagged with these languages\n"
	    "                        (\"en,de\"; untagged ones are kept)\n"
	    "      --rdf-types how   rdf:type statements: edge (default), types\n"
	    "                        (node types) or attribute (multi_label)\n"
	    "      --predicates file keep only these predicate IRIs (one a line)\n"
	    "      --exclude-predicates file\n"
	    "                        drop statements with these predicates\n"
	    "      --compact         name IRIs by the prefixes of --prefix and\n"
	    "                        the Turtle inputs' own\n"
	    "      --prefix name=iri a prefix for --compact (repeatable)\n"
	    "      --dglke folder    a DGL-KE dataset folder: entities.dict,\n"
	    "                        relations.dict, train.tsv or .txt (IDs or\n"
	    "                        names), valid and test; keeps its IDs\n"
	    "      --data_path dir   DGL-KE: where --data_files are (default data)\n"
	    "      --dataset name    DGL-KE: the folder of built_in (alone,\n"
	    "                        it means --format built_in)\n"
	    "      --data_files f... DGL-KE: raw_udd: train [valid test];\n"
	    "                        udd: entities.dict relations.dict train\n"
	    "                        [valid test]\n"
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

static int
parse_comment(const char *s, char *out)
{
	if (strlen(s) != 1 || s[0] == '\n' || s[0] == '\r') {
		kg_error("--comment: '%s' is not one character", s);
		return -1;
	}
	*out = s[0];
	return 0;
}

/* How the input is laid out. */
enum layout { L_TRIPLES, L_RAW_UDD, L_UDD, L_BUILT_IN, L_FOLDER };

struct cli {
	struct kg_ingest_opts o;
	enum layout layout;
	double split[3];
	int quiet, progress, delim_set;
	const char *format;	/* --format as given, or NULL */
	const char *data_path;	/* DGL-KE: where data_files are */
	const char *dataset;	/* DGL-KE: the built_in folder's name */
	const char *folder;	/* --dglke */
	char **files;		/* --data_files */
	const char **prefixes;	/* --prefix, argc of them at most */
	int nfiles;
	char *paths[5];		/* data_path joined with the files */
};

/*
 * --format: tsv, csv, or DGL-KE's raw_udd_XYZ, udd_XYZ (XYZ the order of
 * h, r, t) and built_in.  0 or -1.
 */
static int
parse_format(const char *arg, struct cli *c)
{
	if (strcmp(arg, "tsv") == 0 || strcmp(arg, "csv") == 0) {
		c->o.tab.format = arg[0] == 'c' ? KG_TAB_CSV : KG_TAB_TSV;
		c->o.rdf.tabular = 1;
		c->o.rdf.syntax = KG_RDF_NONE;
		return 0;
	}
	if (kg_rdf_parse_syntax(arg) != KG_RDF_NONE) {
		c->o.rdf.syntax = kg_rdf_parse_syntax(arg);
		c->o.rdf.tabular = 0;
		return 0;
	}
	if (strcmp(arg, "built_in") == 0) {
		c->layout = L_BUILT_IN;
		return 0;
	}
	if (strncmp(arg, "raw_udd_", 8) == 0 || strncmp(arg, "udd_", 4) == 0) {
		const char *cols = arg + (arg[0] == 'r' ? 8 : 4);

		if (kg_ingest_check_columns(cols) < 0)
			return -1;
		memcpy(c->o.columns, cols, 4);
		c->layout = arg[0] == 'r' ? L_RAW_UDD : L_UDD;
		return 0;
	}
	kg_error("--format: '%s' is not tsv, csv, ntriples, nquads, turtle, "
	    "raw_udd_hrt, udd_hrt (or another order of h, r, t) or built_in",
	    arg);
	return -1;
}

/* --rdf-types: edge, types or attribute; 0 or -1. */
static int
parse_rdf_types(const char *arg, enum kg_rdf_types *out)
{
	if (strcmp(arg, "edge") == 0)
		*out = KG_RDF_TYPES_EDGE;
	else if (strcmp(arg, "types") == 0)
		*out = KG_RDF_TYPES_TYPES;
	else if (strcmp(arg, "attribute") == 0)
		*out = KG_RDF_TYPES_ATTRIBUTE;
	else {
		kg_error("--rdf-types: '%s' is not edge, types or attribute",
		    arg);
		return -1;
	}
	return 0;
}

/*
 * DGL-KE's --data_files takes several values (argparse nargs='+'): take
 * "--data_files" (or --data-files) and the arguments after it that do
 * not start with '-' out of av into c->files.  Returns the new argc.
 */
static int
take_data_files(int argc, char **av, struct cli *c)
{
	int i, j, k = 1;

	/* k <= i throughout, so av[i..] is read before it is written. */
	for (i = 1; i < argc; i++) {
		if (strcmp(av[i], "--") == 0) {
			while (i < argc)
				av[k++] = av[i++];
			break;
		}
		if (strcmp(av[i], "--data_files") != 0 &&
		    strcmp(av[i], "--data-files") != 0) {
			av[k++] = av[i];
			continue;
		}
		if (c->files == NULL)
			c->files = kg_xcalloc((size_t)argc, sizeof(char *));
		for (j = i + 1; j < argc && av[j][0] != '-'; j++)
			c->files[c->nfiles++] = av[j];
		i = j - 1;
	}
	av[k] = NULL;
	return k;
}

static int
apply(int ch, const char *arg, struct cli *c)
{
	struct kg_ingest_opts *o = &c->o;
	size_t nsplit;

	switch (ch) {
	case 'q': c->quiet = 1; return 0;
	case OPT_PROGRESS: c->progress = 1; return 0;
	case 'o': o->output = arg; return 0;
	case 'f': o->force = 1; return 0;
	case OPT_FORMAT:
		c->format = arg;
		return parse_format(arg, c);
	case 'd':
		c->delim_set = 1;
		return parse_delim(arg, &o->tab.delim);
	case OPT_COLUMNS:
		if (kg_ingest_check_columns(arg) < 0)
			return -1;
		memcpy(o->columns, arg, 4);
		return 0;
	case OPT_HEADER: o->tab.header = 1; return 0;
	case OPT_COMMENT:
		o->all_comments = 1;
		return parse_comment(arg, &o->tab.comment);
	case OPT_NO_COMMENTS:
		o->tab.comment = '\0';
		o->all_comments = 0;
		return 0;
	case OPT_TRAIN: o->train = arg; return 0;
	case OPT_VALID: o->valid = arg; return 0;
	case OPT_TEST: o->test = arg; return 0;
	case OPT_SPLIT:
		if (kg_parse_double_list("--split", arg, 0, 1, c->split, 3,
		    &nsplit) < 0)
			return -1;
		if (nsplit < 2) {
			kg_error("--split: give train,valid[,test] fractions");
			return -1;
		}
		o->use_split = 1;
		return 0;
	case OPT_SEED: return kg_parse_u64("--seed", arg, 0, UINT64_MAX,
	    &o->seed);
	case OPT_UNSEEN: return kg_ingest_parse_unseen(arg, &o->unseen);
	case OPT_DEDUP: o->dedup = 1; return 0;
	case OPT_EXTEND: o->extend = arg; o->dedup = 1; return 0;
	case OPT_TYPES: o->types = arg; return 0;
	case OPT_MAX_ERRORS: return kg_parse_u64("--max-errors", arg, 0,
	    UINT64_MAX, &o->max_errors);
	case OPT_BASE: o->rdf.base = arg; return 0;
	case OPT_GRAPH: o->rdf.graph = arg; return 0;
	case OPT_LANG: o->rdf.lang = arg; return 0;
	case OPT_RDF_TYPES: return parse_rdf_types(arg, &o->rdf.types);
	case OPT_PREDICATES: o->rdf.predicates = arg; return 0;
	case OPT_EXCLUDE_PREDICATES: o->rdf.exclude_predicates = arg; return 0;
	case OPT_PREFIX:
		c->prefixes[o->rdf.n_prefixes++] = arg;
		o->rdf.prefixes = c->prefixes;
		return 0;
	case OPT_COMPACT: o->rdf.compact = 1; return 0;
	case OPT_DATA_PATH: c->data_path = arg; return 0;
	case OPT_DATASET: c->dataset = arg; return 0;
	case OPT_DGLKE:
		c->folder = arg;
		c->layout = L_FOLDER;
		return 0;
	}
	return -1;
}

/* Checks of plain triple input; 0 or -1. */
static int
check_triples(int argc, char **argv, struct cli *c)
{
	static const char *const stdin_only[] = { "-" };
	struct kg_ingest_opts *o = &c->o;

	if (o->train == NULL && (o->valid != NULL || o->test != NULL)) {
		kg_error("--valid and --test need --train");
		return -1;
	}
	if (o->train != NULL && (argc > 0 || o->use_split)) {
		kg_error("--train cannot be combined with %s",
		    o->use_split ? "--split" : "input files");
		return -1;
	}
	if (o->tab.format == KG_TAB_CSV && !c->delim_set)
		o->tab.delim = ',';
	if (o->use_split) {
		memcpy(o->split, c->split, sizeof(c->split));
		if (kg_ingest_check_split(o->split) < 0)
			return -1;
	}
	if (o->train == NULL) {
		o->inputs = argc > 0 ? (const char *const *)argv : stdin_only;
		o->n_inputs = argc > 0 ? (size_t)argc : 1;
	}
	return 0;
}

/* DGL-KE's data files joined with --data_path; 0 or -1. */
static int
join_files(struct cli *c, int lo, int hi)
{
	const char *dp = c->data_path ? c->data_path : "data";
	int i;

	if (c->nfiles != lo && c->nfiles != hi) {
		kg_error("--format %s takes %d or %d --data_files, got %d",
		    c->layout == L_UDD ? "udd" : "raw_udd", lo, hi, c->nfiles);
		return -1;
	}
	for (i = 0; i < c->nfiles; i++)
		c->paths[i] = kg_path_join(dp, c->files[i]);
	return 0;
}

/* Run a DGL-KE layout; the exit status. */
static int
run_dglke(struct cli *c)
{
	struct kg_dglke_opts d = KG_DGLKE_OPTS_INIT;
	char *dir = NULL;
	int rc;

	d.tab.delim = c->o.tab.delim;
	memcpy(d.columns, c->o.columns, 4);
	d.progress = kg_progress_wanted(c->quiet, c->progress);
	d.output = c->o.output;
	d.force = c->o.force;
	d.argc = c->o.argc;
	d.argv = c->o.argv;
	if (c->layout == L_UDD) {
		if (join_files(c, 3, 5) < 0)
			return KG_EXIT_USAGE;
		d.entities = c->paths[0];
		d.relations = c->paths[1];
		d.train = c->paths[2];
		d.valid = c->paths[3];
		d.test = c->paths[4];
		d.triples = KG_DGLKE_IDS;
		return kg_tool_exit(kg_dglke_run(&d));
	}
	if (c->layout == L_BUILT_IN)
		dir = kg_path_join(c->data_path ? c->data_path : "data",
		    c->dataset);
	d.triples = c->layout == L_BUILT_IN ? KG_DGLKE_NAMES :
	    KG_DGLKE_DETECT;
	rc = kg_dglke_folder(&d, dir ? dir : c->folder);
	free(dir);
	if (rc < 0)
		return kg_tool_exit(-1);
	rc = kg_tool_exit(kg_dglke_run(&d));
	kg_dglke_folder_free(&d);
	return rc;
}

/* Which layout, and whether the options fit it; 0 or -1. */
static int
check_layout(int argc, struct cli *c)
{
	int dglke;

	if (c->files != NULL && c->layout != L_RAW_UDD && c->layout != L_UDD) {
		kg_error("--data_files needs --format raw_udd_hrt or udd_hrt");
		return -1;
	}
	/* DGL-KE's --format defaults to built_in, so --dataset alone
	 * means it; another --format given with it is a conflict. */
	if (c->dataset != NULL && c->format == NULL && c->folder == NULL)
		c->layout = L_BUILT_IN;
	if (c->dataset != NULL && c->layout != L_BUILT_IN) {
		if (c->format != NULL)
			kg_error("--dataset goes with --format built_in, not "
			    "--format %s", c->format);
		else
			kg_error("--dataset cannot be combined with --dglke");
		return -1;
	}
	dglke = c->layout != L_TRIPLES;
	if (c->layout == L_BUILT_IN && c->dataset == NULL) {
		kg_error("--format built_in needs --dataset NAME");
		return -1;
	}
	if ((c->layout == L_RAW_UDD || c->layout == L_UDD) && c->files == NULL) {
		kg_error("--format %s needs --data_files", c->layout == L_UDD ?
		    "udd" : "raw_udd");
		return -1;
	}
	if (dglke && (argc > 0 || c->o.train || c->o.use_split)) {
		kg_error("DGL-KE layouts name their files with --data_files, "
		    "--dataset or --dglke, not --train, --split or operands");
		return -1;
	}
	if (dglke && c->o.rdf.syntax != KG_RDF_NONE) {
		kg_error("--format %s does not apply to DGL-KE layouts",
		    c->format);
		return -1;
	}
	if ((c->layout == L_UDD || c->layout == L_BUILT_IN ||
	    c->layout == L_FOLDER) && (c->o.types || c->o.dedup ||
	    c->o.unseen != KG_UNSEEN_KEEP || c->o.max_errors ||
	    c->o.tab.header || c->o.tab.format == KG_TAB_CSV)) {
		kg_error("--types, --dedup, --unseen, --max-errors, --header "
		    "and --format csv do not apply to ID dictionaries");
		return -1;
	}
	if (c->data_path != NULL && (c->layout == L_TRIPLES ||
	    c->layout == L_FOLDER)) {
		kg_error("--data_path goes with --format raw_udd, udd or "
		    "built_in");
		return -1;
	}
	return 0;
}

/* Parse argv and run; the exit status.  c owns what it holds. */
static int
run(int argc, char **av, struct cli *c)
{
	int ch, n, k;

	n = take_data_files(argc, av, c);
	while ((ch = kg_tool_getopt(n, av, "hqo:fd:", long_opts, NULL)) != -1) {
		if (ch == 'h')
			return kg_tool_help(usage);
		if (ch == OPT_VERSION)
			return kg_tool_version("kg-ingest");
		if (ch == '?' || apply(ch, optarg, c) < 0) {
			return kg_tool_usage_error();
		}
	}
	if (c->o.output == NULL) {
		kg_error("no output directory (-o)");
		return kg_tool_usage_error();
	}
	k = n - optind;
	if (check_layout(k, c) < 0)
		return KG_EXIT_USAGE;
	if (c->layout == L_UDD || c->layout == L_BUILT_IN ||
	    c->layout == L_FOLDER)
		return run_dglke(c);
	if (c->layout == L_RAW_UDD) {
		if (join_files(c, 1, 3) < 0)
			return KG_EXIT_USAGE;
		c->o.train = c->paths[0];
		c->o.valid = c->paths[1];
		c->o.test = c->paths[2];
	}
	if (check_triples(k, av + optind, c) < 0 ||
	    kg_ingest_check_opts(&c->o) < 0)
		return KG_EXIT_USAGE;
	c->o.progress = kg_progress_wanted(c->quiet, c->progress);
	c->o.quiet = c->quiet;
	return kg_tool_exit(kg_ingest_run(&c->o));
}

int
main(int argc, char *argv[])
{
	struct cli c;
	struct kg_ingest_opts z = KG_INGEST_OPTS_INIT;
	char **av = kg_xcalloc((size_t)argc + 1, sizeof(char *));
	int rc, i;

	kg_setprogname(argv[0]);
	memset(&c, 0, sizeof(c));
	c.o = z;
	c.o.argc = argc;	/* the whole command line, for the manifest */
	c.o.argv = argv;
	memcpy(av, argv, (size_t)argc * sizeof(char *));
	c.prefixes = kg_xcalloc((size_t)argc + 1, sizeof(char *));
	rc = run(argc, av, &c);
	for (i = 0; i < 5; i++)
		free(c.paths[i]);
	free(c.files);
	free(c.prefixes);
	free(av);
	return rc;
}
