/*
 * kg-predict: ask a trained model for the best tails, heads or relations
 * of queries given by name, or for the nearest entities of entities.
 * Option parsing only; the work is in lib/app/predict_run.c.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/device_opt.h"
#include "cli/modelsrc_opts.h"
#include "cli/tool.h"
#include "core/progress.h"
#include "core/util.h"
#include "app/predict_run.h"

static void
usage(FILE *f)
{
	fputs(
"usage: kg-predict [-q] [-k n] [--filter] [--typed] [--rank]\n"
"                  [--format tsv|json] [--no-header] [--batch n]\n"
"                  [--threads n] [--device cpu|cuda[:N]] [--progress]\n"
"                  [--stream] [-o file [--force]] dataset model [queries]\n"
"       kg-predict [--rank] [options] --head-file f --rel-file f --tail-file f\n"
"                  dataset model\n"
"       kg-predict --cartesian [-k n] [--filter] [--rank] [options]\n"
"                  [--head-file f] [--rel-file f] [--tail-file f] dataset model\n"
"       kg-predict --nearest [--sim cosine|dot|l2|l1|model] [options]\n"
"                  dataset model [names]\n"
"       kg-predict [options] --entities file --relations file --model name\n"
"                  [--gamma g] [--reciprocal] [--entity-map file]\n"
"                  [--relation-map file] dataset [queries]\n"
"\n"
"Answer queries by name with a trained model: each line of QUERIES (a file,\n"
"or stdin when absent or \"-\") is head<TAB>relation<TAB>? for the best\n"
"tails, ?<TAB>relation<TAB>tail for the best heads, or head<TAB>?<TAB>tail\n"
"for the best relations, or head<TAB>relation<TAB>tail for the triple's\n"
"score.  Writes the k best answers with their scores.\n"
"From a pipe or terminal, what has arrived is answered and flushed before\n"
"more is read (a coprocess; --batch 1: one query at a time).\n"
"  -k, --topk n          answers per query (default 10)\n"
"      --filter          leave out answers that form a known triple\n"
"                        (train, valid or test of the dataset)\n"
"      --typed           only answers of the types seen in that position of\n"
"                        the relation in the train triples (kg-ingest --types)\n"
"      --rank            with each scored triple, the filtered rank of its\n"
"                        tail and of its head among all entities\n"
"      --head-file f     triples to score: line i of the head, relation\n"
"      --rel-file f      and tail files (one name a line) ...\n"
"      --tail-file f     ...\n"
"      --cartesian       ... or every combination of them (a file left out:\n"
"                        every entity or relation); writes the k best\n"
"      --nearest         NAMES holds entities: write their nearest entities\n"
"      --sim s           similarity for --nearest: cosine (default), dot,\n"
"                        l2 (-distance), l1 (-distance), or model (the\n"
"                        model's score with the identity relation)\n"
"      --format f        tsv (default, one line per answer) or json (one\n"
"                        object per query)\n"
"      --no-header       no header line in TSV\n"
"      --batch n         queries per matrix product (default 1024)\n"
"      --threads n       OpenMP threads (default: one per core)\n"
"      --stream          read entity rows from disk as needed (tables\n"
"                        larger than memory)\n"
"      --device d        cpu (default), or cuda, cuda:N: score on GPU N\n"
"  -o, --output file     write to file, not stdout\n"
"      --force           replace an existing file\n"
"      --entities file   entity embeddings (.npy, float32 or float64) ...\n"
"      --relations file  ... relation parameters ...\n"
"      --model name      ... and the model: TransE_l1, TransE_l2, DistMult,\n"
"                        ComplEx, RotatE, RESCAL or TransR\n"
"      --gamma g         margin of the distance models (default 12)\n"
"      --reciprocal      the relation array holds reciprocal relations\n"
"      --entity-map file row<TAB>name lines: the row of each entity\n"
"      --relation-map file  the same for relations\n"
"  -q, --quiet           no progress, no notes\n"
"      --progress        progress on stderr\n"
"  -h, --help            this help\n"
"      --version         print the version\n", f);
}

enum {
	OPT_RANK = 200, OPT_HEADS, OPT_RELS, OPT_TAILS, OPT_CARTESIAN, OPT_TYPED,
	OPT_FILTER = 256, OPT_NEAREST, OPT_SIM, OPT_FORMAT, OPT_NO_HEADER,
	OPT_BATCH, OPT_THREADS, OPT_FORCE, OPT_PROGRESS, OPT_VERSION,
	OPT_DEVICE, OPT_STREAM
};

static const struct option long_opts[] = {
	{ "topk", required_argument, NULL, 'k' },
	{ "filter", no_argument, NULL, OPT_FILTER },
	{ "rank", no_argument, NULL, OPT_RANK },
	{ "typed", no_argument, NULL, OPT_TYPED },
	{ "head-file", required_argument, NULL, OPT_HEADS },
	{ "rel-file", required_argument, NULL, OPT_RELS },
	{ "tail-file", required_argument, NULL, OPT_TAILS },
	{ "cartesian", no_argument, NULL, OPT_CARTESIAN },
	{ "nearest", no_argument, NULL, OPT_NEAREST },
	{ "sim", required_argument, NULL, OPT_SIM },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "no-header", no_argument, NULL, OPT_NO_HEADER },
	{ "batch", required_argument, NULL, OPT_BATCH },
	{ "threads", required_argument, NULL, OPT_THREADS },
	{ "stream", no_argument, NULL, OPT_STREAM },
	{ "device", required_argument, NULL, OPT_DEVICE },
	{ "output", required_argument, NULL, 'o' },
	{ "force", no_argument, NULL, OPT_FORCE },
	KG_MODELSRC_LONG_OPTS,
	KG_MODELSRC_GAMMA_OPT,
	{ "quiet", no_argument, NULL, 'q' },
	{ "progress", no_argument, NULL, OPT_PROGRESS },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 }
};

/* --device: where the scoring runs. */
static struct kg_device device = KG_DEVICE_INIT;

/* One option into o; 0, or -1 after a message. */
static int
apply(int ch, const char *arg, struct kg_predict_run_opts *o, int *asked)
{
	uint64_t u;
	uint32_t v;

	switch (ch) {
	case 'k':
		if (kg_parse_u64("--topk", arg, 1, 1u << 20, &u) < 0)
			return -1;
		o->k = (size_t)u;
		return 0;
	case OPT_FILTER: o->filter = 1; return 0;
	case OPT_RANK: o->rank = 1; return 0;
	case OPT_TYPED: o->typed = 1; return 0;
	case OPT_HEADS: o->lists[0] = arg; return 0;
	case OPT_RELS: o->lists[1] = arg; return 0;
	case OPT_TAILS: o->lists[2] = arg; return 0;
	case OPT_CARTESIAN: o->cartesian = 1; return 0;
	case OPT_NEAREST: o->nearest = 1; return 0;
	case OPT_SIM:
		*asked |= 2;
		return kg_sim_parse(arg, &o->sim);
	case OPT_FORMAT:
		if (strcmp(arg, "tsv") != 0 && strcmp(arg, "json") != 0) {
			kg_error("--format: '%s' is not tsv or json", arg);
			return -1;
		}
		o->json = arg[0] == 'j';
		return 0;
	case OPT_NO_HEADER: o->no_header = 1; return 0;
	case OPT_BATCH:
		if (kg_parse_u32("--batch", arg, 1, 1u << 16, &v) < 0)
			return -1;
		o->batch = v;
		return 0;
	case OPT_THREADS:
		if (kg_parse_u32("--threads", arg, 1, 1024, &v) < 0)
			return -1;
		o->threads = (int)v;
		return 0;
	case 'o': o->output = arg; return 0;
	case OPT_FORCE: o->force = 1; return 0;
	case OPT_STREAM: o->stream = 1; return 0;
	case 'q': o->quiet = 1; return 0;
	case OPT_PROGRESS: *asked |= 1; return 0;
	case OPT_DEVICE: return kg_cli_device(arg, &device);
	}
	return kg_modelsrc_opt(ch, arg, &o->src) > 0 ? 0 : -1;
}

/* The list files of triples to score; 0, or -1 after a message. */
static int
check_lists(int argc, int need, const struct kg_predict_run_opts *o)
{
	int n = !!o->lists[0] + !!o->lists[1] + !!o->lists[2];

	if (o->cartesian && n == 0) {
		kg_error("--cartesian needs --head-file, --rel-file or "
		    "--tail-file");
		return -1;
	}
	if (n == 0)
		return 0;
	if (!o->cartesian && n != 3) {
		kg_error("--head-file, --rel-file and --tail-file go together "
		    "(or use --cartesian)");
		return -1;
	}
	if (o->nearest) {
		kg_error("--nearest takes names, not --head-file, --rel-file "
		    "or --tail-file");
		return -1;
	}
	if (argc > need) {
		kg_error("no QUERIES operand with --head-file, --rel-file or "
		    "--tail-file");
		return -1;
	}
	return 0;
}

/* The operands and the combinations; 0, or -1 after a message. */
static int
check(int argc, char **argv, struct kg_predict_run_opts *o)
{
	struct kg_modelsrc *s = &o->src;
	int arrays = s->entities || s->relations || s->model, need;

	if (arrays && (!s->entities || !s->relations || !s->model)) {
		kg_error("--entities, --relations and --model go together");
		return -1;
	}
	if (!arrays && (s->entity_map || s->relation_map)) {
		kg_error("--entity-map and --relation-map apply to "
		    "--entities and --relations");
		return -1;
	}
	need = arrays ? 1 : 2;
	if (check_lists(argc, need, o) < 0)
		return -1;
	if (argc < need || argc > need + 1) {
		kg_error("expected DATASET_DIR %s[QUERIES]", arrays ? "" :
		    "MODEL_DIR ");
		return -1;
	}
	o->dataset = argv[0];
	if (!arrays)
		s->modeldir = argv[1];
	if (argc == need + 1)
		o->queries = argv[need];
	if (o->force && o->output == NULL) {
		kg_error("--force applies to -o FILE");
		return -1;
	}
	return 0;
}

int
main(int argc, char *argv[])
{
	struct kg_predict_run_opts o = KG_PREDICT_RUN_OPTS_INIT;
	const char *seam;
	int ch, asked = 0;

	kg_setprogname(argv[0]);
	kg_tool_tune_blas(argv);
	while ((ch = kg_tool_getopt(argc, argv, "hk:o:q", long_opts, NULL)) !=
	    -1) {
		if (ch == 'h')
			return kg_tool_help(usage);
		if (ch == OPT_VERSION)
			return kg_tool_version("kg-predict");
		if (ch == '?' || apply(ch, optarg, &o, &asked) < 0) {
			return kg_tool_usage_error();
		}
	}
	if (o.typed && o.nearest) {
		kg_error("--typed applies to triple queries, not --nearest");
		usage(stderr);
		return KG_EXIT_USAGE;
	}
	if ((asked & 2) && !o.nearest) {
		kg_error("--sim applies to --nearest");
		return kg_tool_usage_error();
	}
	if (check(argc - optind, argv + optind, &o) < 0) {
		return kg_tool_usage_error();
	}
	/* --device: entity queries scored on the device (KG_PREDICT_SEAM=cpu,
	 * a test hook: on the CPU backend through the same path). */
	seam = getenv("KG_PREDICT_SEAM");
	o.device = device;
	o.seam = device.kind == KG_DEVICE_CPU && seam != NULL &&
	    strcmp(seam, "cpu") == 0;
	if (device.kind != KG_DEVICE_CPU && kg_backend_check(&device) < 0)
		return KG_EXIT_USAGE;
	o.src.quiet = o.quiet;
	o.progress = kg_progress_wanted(o.quiet, asked & 1);
	return kg_tool_exit(kg_predict_run(&o, &argc, &argv));
}
