/*
 * kg-eval: link prediction (full or sampled ranking) and triple
 * classification of a trained model on a dataset split.  Option parsing
 * only; the work is in lib/app/eval_run.c.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/device_opt.h"
#include "eval/eval_device.h"
#include "cli/tool.h"
#include "core/progress.h"
#include "core/util.h"
#include "app/eval_run.h"

static void
usage(FILE *f)
{
	fputs(
"usage: kg-eval [-q] [--split valid|test] [--raw]\n"
"               [--ties realistic|optimistic|pessimistic] [--per-relation]\n"
"               [--neg-sample n [--neg-mode uniform|degree]] [--auc]\n"
"               [--auc-neg k] [--seed n] [--threads n] [--batch n]\n"
"               [--progress] [--stream] [--device cpu|cuda[:N]]\n"
"               [-o file [--force]] dataset model\n"
"       kg-eval [options] --entities file --relations file --model name\n"
"               [--gamma g] [--reciprocal] [--entity-map file]\n"
"               [--relation-map file] dataset\n"
"\n"
"Rank the true head and tail of every triple of a split among all\n"
"entities and report MRR, MR and Hits@1/3/10 as JSON on stdout and as a\n"
"table on stderr.\n"
"      --split s         valid or test (default test)\n"
"      --raw             do not filter known triples\n"
"      --ties policy     realistic (default), optimistic or pessimistic\n"
"      --per-relation    also report every relation (JSON and table)\n"
"      --neg-sample n    rank against n sampled negatives, not all entities\n"
"      --neg-mode mode   uniform (default) or degree\n"
"      --auc             ROC AUC of triple classification\n"
"      --auc-neg k       negatives per positive for --auc (default 1)\n"
"      --seed n          seed of sampled negatives (default 1)\n"
"      --threads n       OpenMP threads (default: one per core)\n"
"      --batch n         queries per block (default 1024)\n"
"      --stream          read entity rows from disk as needed (tables\n"
"                        larger than memory)\n"
"      --device d        cpu (default), or cuda, cuda:N: rank on GPU N\n"
"  -o, --output file     write the report to file, not stdout\n"
"      --force           replace an existing file\n"
"      --entities file   entity embeddings (.npy; float64 is converted to\n"
"                        float32 with a note) ...\n"
"      --relations file  ... relation parameters ...\n"
"      --model name      ... and the model: TransE_l1, TransE_l2, DistMult,\n"
"                        ComplEx, RotatE, RESCAL or TransR\n"
"      --gamma g         margin of the distance models (default 12)\n"
"      --reciprocal      the relation array holds reciprocal relations\n"
"      --entity-map file row<TAB>name lines giving each entity's row of\n"
"                        --entities (default: the dataset's ID order)\n"
"      --relation-map file  the same for --relations\n"
"  -q, --quiet           no table, no progress\n"
"      --progress        progress on stderr\n"
"  -h, --help            this help\n"
"      --version         print the version\n", f);
}

enum {
	OPT_SPLIT = 256, OPT_RAW, OPT_TIES, OPT_PER_REL, OPT_NEG, OPT_NEG_MODE,
	OPT_AUC, OPT_AUC_NEG, OPT_SEED, OPT_THREADS, OPT_BATCH, OPT_PROGRESS,
	OPT_FORCE, OPT_ENT, OPT_REL, OPT_MODEL, OPT_GAMMA, OPT_RECIP,
	OPT_EMAP, OPT_RMAP, OPT_VERSION, OPT_STREAM, OPT_DEVICE
};

static const struct option long_opts[] = {
	{ "split", required_argument, NULL, OPT_SPLIT },
	{ "raw", no_argument, NULL, OPT_RAW },
	{ "ties", required_argument, NULL, OPT_TIES },
	{ "per-relation", no_argument, NULL, OPT_PER_REL },
	{ "neg-sample", required_argument, NULL, OPT_NEG },
	{ "neg-mode", required_argument, NULL, OPT_NEG_MODE },
	{ "auc", no_argument, NULL, OPT_AUC },
	{ "auc-neg", required_argument, NULL, OPT_AUC_NEG },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "threads", required_argument, NULL, OPT_THREADS },
	{ "batch", required_argument, NULL, OPT_BATCH },
	{ "progress", no_argument, NULL, OPT_PROGRESS },
	{ "stream", no_argument, NULL, OPT_STREAM },
	{ "device", required_argument, NULL, OPT_DEVICE },
	{ "output", required_argument, NULL, 'o' },
	{ "force", no_argument, NULL, OPT_FORCE },
	{ "entities", required_argument, NULL, OPT_ENT },
	{ "relations", required_argument, NULL, OPT_REL },
	{ "model", required_argument, NULL, OPT_MODEL },
	{ "gamma", required_argument, NULL, OPT_GAMMA },
	{ "reciprocal", no_argument, NULL, OPT_RECIP },
	{ "entity-map", required_argument, NULL, OPT_EMAP },
	{ "relation-map", required_argument, NULL, OPT_RMAP },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 }
};

/* --device: where the ranking runs. */
static struct kg_device device = KG_DEVICE_INIT;

/*
 * Where the ranking runs (--device): the CPU evaluator, or the device
 * ranker (eval/eval_device.h) on a visible GPU for the options it takes;
 * one line and KG_EXIT_USAGE otherwise, before any work.  KG_EVAL_SEAM=cpu,
 * a test hook, runs the device ranker on the CPU backend.
 */
static int
device_ready(struct kg_eval_run_opts *o)
{
	const char *seam = getenv("KG_EVAL_SEAM");

	o->device = device;
	o->seam = device.kind == KG_DEVICE_CPU && seam != NULL &&
	    strcmp(seam, "cpu") == 0;
	if (device.kind == KG_DEVICE_CPU && !o->seam)
		return KG_EXIT_OK;
	if (kg_backend_check(&device) < 0 || kg_eval_device_check(&o->ev) < 0)
		return KG_EXIT_USAGE;
	return KG_EXIT_OK;
}

/* Index of s in names[n], or -1 after an error naming the option. */
static int
pick(const char *opt, const char *s, const char *const *names, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (strcmp(s, names[i]) == 0)
			return i;
	kg_error("%s: unknown value '%s'", opt, s);
	return -1;
}

/* The ranking's progress line (lib/core/progress.h). */
static void
show_progress(uint64_t done, uint64_t total, double secs, void *arg)
{
	struct kg_progress *p = arg;

	(void)secs;
	p->total = total;
	if (done >= total)
		kg_progress_end(p, done);
	else
		kg_progress_update(p, done);
}

/* Apply option ch (optarg) to o: 0, -1 after kg_error(), 1 for --help,
 * 2 for --version. */
static int
apply_opt(int ch, struct kg_eval_run_opts *o)
{
	static const char *const splits[] = { "valid", "test" };
	static const char *const ties[] = { "realistic", "optimistic",
	    "pessimistic" };
	static const char *const modes[] = { "uniform", "degree" };
	uint32_t u;
	int i;

	switch (ch) {
	case 'h': return 1;
	case OPT_VERSION: return 2;
	case OPT_SPLIT:
		if ((i = pick("--split", optarg, splits, 2)) < 0)
			return -1;
		o->split = i ? KG_SPLIT_TEST : KG_SPLIT_VALID;
		return 0;
	case OPT_RAW: o->raw = 1; return 0;
	case OPT_TIES:
		if ((i = pick("--ties", optarg, ties, 3)) < 0)
			return -1;
		o->ties = (enum kg_ties)i;
		return 0;
	case OPT_PER_REL: o->per_relation = 1; return 0;
	case OPT_NEG:
		if (kg_parse_u64("--neg-sample", optarg, 1, 1u << 24,
		    &o->ev.neg_sample) < 0)
			return -1;
		return 0;
	case OPT_NEG_MODE:
		if ((i = pick("--neg-mode", optarg, modes, 2)) < 0)
			return -1;
		o->ev.neg_mode = (enum kg_neg_mode)i;
		return 0;
	case OPT_AUC: o->auc = 1; return 0;
	case OPT_AUC_NEG:
		if (kg_parse_u64("--auc-neg", optarg, 1, 1000,
		    &o->auc_neg) < 0)
			return -1;
		return 0;
	case OPT_SEED:
		if (kg_parse_u64("--seed", optarg, 0, UINT64_MAX,
		    &o->ev.seed) < 0)
			return -1;
		return 0;
	case OPT_THREADS:
		if (kg_parse_u32("--threads", optarg, 1, 1024, &u) < 0)
			return -1;
		o->ev.threads = (int)u;
		return 0;
	case OPT_BATCH:
		if (kg_parse_u32("--batch", optarg, 1, 1u << 20, &u) < 0)
			return -1;
		o->ev.batch = u;
		return 0;
	case OPT_PROGRESS: o->ev.progress = show_progress; return 0;
	case OPT_STREAM: o->stream = 1; return 0;
	case OPT_DEVICE: return kg_cli_device(optarg, &device);
	case 'o': o->output = optarg; return 0;
	case OPT_FORCE: o->force = 1; return 0;
	case OPT_ENT: o->entities = optarg; return 0;
	case OPT_REL: o->relations = optarg; return 0;
	case OPT_MODEL: o->model = optarg; return 0;
	case OPT_GAMMA:
		if (kg_parse_double("--gamma", optarg, -1e30, 1e30,
		    &o->gamma) < 0)
			return -1;
		return 0;
	case OPT_RECIP: o->reciprocal = 1; return 0;
	case OPT_EMAP: o->entity_map = optarg; return 0;
	case OPT_RMAP: o->relation_map = optarg; return 0;
	case 'q': o->quiet = 1; return 0;
	default: return -1;
	}
}

/* The operands and the options that go together; 0 or -1 after
 * kg_error(). */
static int
check_args(int argc, char *argv[], struct kg_eval_run_opts *o)
{
	if (o->quiet)
		o->ev.progress = NULL;
	if (!o->entities && (o->entity_map || o->relation_map)) {
		kg_error("--entity-map and --relation-map apply to "
		    "--entities and --relations");
		return -1;
	}
	if (o->entities || o->relations || o->model) {
		if (!o->entities || !o->relations || !o->model || argc != 1) {
			kg_error("--entities, --relations and --model go "
			    "together, with DATASET_DIR alone");
			return -1;
		}
	} else if (argc != 2) {
		kg_error("expected DATASET_DIR MODEL_DIR");
		return -1;
	} else {
		o->modeldir = argv[1];
	}
	if (o->force && o->output == NULL) {
		kg_error("--force applies to -o FILE");
		return -1;
	}
	if (o->stream && o->entity_map) {
		kg_error("--stream reads the entity rows in the file's order; "
		    "it cannot be combined with --entity-map");
		return -1;
	}

	o->dataset = argv[0];
	return 0;
}

/* Parse the command line into o.  Returns 0, 1 for --help, 2 for
 * --version, or -1 after a message for bad usage. */
static int
parse_opts(int argc, char *argv[], struct kg_eval_run_opts *o)
{
	int ch, rc;

	while ((ch = kg_tool_getopt(argc, argv, "ho:q", long_opts, NULL)) != -1)
		if ((rc = apply_opt(ch, o)) != 0)
			return rc;
	return check_args(argc - optind, argv + optind, o);
}

int
main(int argc, char *argv[])
{
	struct kg_eval_run_opts o = KG_EVAL_RUN_OPTS_INIT;
	static struct kg_progress prog = KG_PROGRESS_INIT;
	int rc;

	kg_setprogname(argv[0]);
	kg_tool_tune_blas(argv);
	if (isatty(STDERR_FILENO))
		o.ev.progress = show_progress;
	rc = parse_opts(argc, argv, &o);
	if (o.ev.progress != NULL) {
		kg_progress_begin(&prog, 1, "ranking", "queries", 0);
		o.ev.progress_arg = &prog;
	}
	if (rc == 1)
		return kg_tool_help(usage);
	if (rc == 2)
		return kg_tool_version("kg-eval");
	if (rc < 0) {
		return kg_tool_usage_error();
	}
	if ((rc = device_ready(&o)) != KG_EXIT_OK)
		return rc;
	return kg_tool_exit(kg_eval_run(&o, &argc, &argv));
}
