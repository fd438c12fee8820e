/*
 * kg-export: a trained model's embeddings with their names, as TSV,
 * word2vec text or the TensorBoard Embedding Projector's pair of files.
 * Option parsing only; the work is in lib/predict/export.c.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/modelsrc_opts.h"
#include "cli/tool.h"
#include "core/util.h"
#include "predict/export.h"

static void
usage(FILE *f)
{
	fputs(
"usage: kg-export [-q] [--format tsv|word2vec|projector] [--table t]\n"
"                 [-o out [--force]] dataset model\n"
"       kg-export [options] --entities file --relations file --model name\n"
"                 [--reciprocal] [--entity-map file] [--relation-map file]\n"
"                 dataset\n"
"\n"
"Write the embeddings of a model with the names of the dataset.\n"
"      --format f        tsv (default): name<TAB>v1<TAB>...; word2vec: a\n"
"                        \"count dim\" line, then \"name v1 ...\" (spaces in\n"
"                        names become '_'); projector: a directory (-o)\n"
"                        with vectors.tsv and metadata.tsv for the\n"
"                        TensorBoard Embedding Projector\n"
"      --table t         entities (default) or relations\n"
"  -o, --output out      file (directory for projector); default stdout\n"
"      --force           replace an existing output\n"
"      --entities file   entity embeddings (.npy, float32 or float64) ...\n"
"      --relations file  ... relation parameters ...\n"
"      --model name      ... and the model: TransE_l1, TransE_l2, DistMult,\n"
"                        ComplEx, RotatE, RESCAL or TransR\n"
"      --reciprocal      the relation array holds reciprocal relations\n"
"      --entity-map file row<TAB>name lines: the row of each entity\n"
"      --relation-map file  the same for relations\n"
"  -q, --quiet           no notes\n"
"  -h, --help            this help\n"
"      --version         print the version\n", f);
}

enum {
	OPT_FORMAT = 256, OPT_TABLE, OPT_FORCE, OPT_VERSION
};

static const struct option long_opts[] = {
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "table", required_argument, NULL, OPT_TABLE },
	{ "output", required_argument, NULL, 'o' },
	{ "force", no_argument, NULL, OPT_FORCE },
	KG_MODELSRC_LONG_OPTS,
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 }
};

static int
apply(int ch, const char *arg, struct kg_export_opts *o)
{
	switch (ch) {
	case OPT_FORMAT: return kg_export_format_parse(arg, &o->format);
	case OPT_TABLE:
		if (strcmp(arg, "entities") != 0 &&
		    strcmp(arg, "relations") != 0) {
			kg_error("--table: '%s' is not entities or relations",
			    arg);
			return -1;
		}
		o->relations = arg[0] == 'r';
		return 0;
	case 'o': o->output = arg; return 0;
	case OPT_FORCE: o->force = 1; return 0;
	case 'q': o->src.quiet = 1; return 0;
	}
	return kg_modelsrc_opt(ch, arg, &o->src) > 0 ? 0 : -1;
}

static int
check(int argc, char **argv, struct kg_export_opts *o)
{
	struct kg_modelsrc *s = &o->src;
	int arrays = s->entities || s->relations || s->model;

	if (arrays && (!s->entities || !s->relations || !s->model)) {
		kg_error("--entities, --relations and --model go together");
		return -1;
	}
	if (!arrays && (s->entity_map || s->relation_map)) {
		kg_error("--entity-map and --relation-map apply to "
		    "--entities and --relations");
		return -1;
	}
	if (argc != (arrays ? 1 : 2)) {
		kg_error("expected DATASET_DIR%s", arrays ? "" : " MODEL_DIR");
		return -1;
	}
	if (o->format == KG_EXPORT_PROJECTOR && (o->output == NULL ||
	    strcmp(o->output, "-") == 0)) {
		kg_error("--format projector writes a directory: give -o DIR");
		return -1;
	}
	if (o->force && o->output == NULL) {
		kg_error("--force applies to -o");
		return -1;
	}
	o->dataset = argv[0];
	if (!arrays)
		s->modeldir = argv[1];
	return 0;
}

int
main(int argc, char *argv[])
{
	struct kg_export_opts o = KG_EXPORT_OPTS_INIT;
	int ch;

	kg_setprogname(argv[0]);
	o.argc = argc;
	o.argv = argv;
	while ((ch = kg_tool_getopt(argc, argv, "ho:q", long_opts, NULL)) != -1) {
		if (ch == 'h')
			return kg_tool_help(usage);
		if (ch == OPT_VERSION)
			return kg_tool_version("kg-export");
		if (ch == '?' || apply(ch, optarg, &o) < 0) {
			return kg_tool_usage_error();
		}
	}
	if (check(argc - optind, argv + optind, &o) < 0) {
		return kg_tool_usage_error();
	}
	return kg_tool_exit(kg_export_run(&o));
}
