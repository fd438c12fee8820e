/*
 * kg-encode-attrs: encode node attributes for the model's per-attribute
 * embedding matrices.  fit (once) learns bin edges, vocabularies and the
 * text encoder; transform --shard i/n encodes one contiguous range of
 * entities (independent processes); merge joins the shards; transform
 * --merge does both, alone or as the ranks of an MPI job.
 */
#include <getopt.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/attrs_run.h"
#include "cli/tool.h"
#include "compute/backend.h"
#include "compute/compute.h"
#include "core/util.h"

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: kg-encode-attrs fit -d dataset -s schema.json -o model "
	    "[--tables-dir dir]\n"
	    "           [--text-command cmd] [--max-errors n] [-f] [-q] "
	    "[--progress]\n"
	    "       kg-encode-attrs transform -d dataset -m model -o shard "
	    "[--shard i/n]\n"
	    "           [--tables-dir dir] [--text-command cmd] "
	    "[--max-errors n] [-j threads]\n"
	    "           [--device dev] [-f] [-q] [--progress]\n"
	    "       [mpirun ...] kg-encode-attrs transform --merge -d dataset "
	    "-m model\n"
	    "           -o features [--shards n] [--ship-inputs] "
	    "[--tables-dir dir]\n"
	    "           [--text-command cmd] [--max-errors n] [-j threads] "
	    "[--device dev]\n"
	    "           [-f] [-q] [--progress]\n"
	    "       kg-encode-attrs merge -m model -o features [-f] [-q] "
	    "shard ...\n"
	    "       kg-encode-attrs -h | --help | --version\n"
	    "\n"
	    "  -d, --dataset dir      dataset directory written by kg-ingest\n"
	    "  -s, --schema file      attribute schema (JSON)\n"
	    "  -m, --model dir        encoder model written by fit\n"
	    "  -o, --output dir       output directory (model, shard or "
	    "features)\n"
	    "      --tables-dir dir   resolve relative table paths here "
	    "(default: next to\n"
	    "                         the schema at fit, the fitted paths at "
	    "transform)\n"
	    "      --text-command cmd external text encoder: one text per "
	    "line in,\n"
	    "                         dim float32 per text out\n"
	    "      --max-errors n     skip up to n bad rows with a warning "
	    "(default 0)\n"
	    "      --shard i/n        encode entities [N*i/n, N*(i+1)/n) "
	    "(default 0/1)\n"
	    "      --merge            encode every shard and write the merged "
	    "features;\n"
	    "                         under mpirun the ranks share the shards "
	    "and rank 0\n"
	    "                         writes the features\n"
	    "      --shards n         --merge: encode n shards (default: one "
	    "a rank)\n"
	    "      --ship-inputs      --merge: rank 0 sends the dataset, model "
	    "and tables\n"
	    "                         to the other ranks over MPI (hosts that "
	    "share no\n"
	    "                         directory)\n"
	    "  -j, --threads n        threads for text encoding (default: "
	    "OpenMP's)\n"
	    "      --device dev       transform: where transformer text "
	    "attributes run:\n"
	    "                         cpu (default), cuda or cuda:N (a GPU)\n"
	    "  -f, --force            replace an existing output\n"
	    "  -q, --quiet            no progress messages\n"
	    "      --progress         report each stage on stderr (default when\n"
	    "                         stderr is a terminal)\n");
}

static int
parse_shard(const char *s, uint32_t *i, uint32_t *n)
{
	const char *slash = strchr(s, '/');
	char *head;
	int rc;

	if (slash == NULL) {
		kg_error("--shard: expected i/n, got '%s'", s);
		return -1;
	}
	head = kg_xasprintf("%.*s", (int)(slash - s), s);
	rc = kg_parse_u32("--shard (count)", slash + 1, 1, 1u << 16, n);
	if (rc == 0)
		rc = kg_parse_u32("--shard (index)", head, 0, *n - 1, i);
	free(head);
	return rc;
}

enum { OPT_TABLES = 256, OPT_TEXTCMD, OPT_MAXERR, OPT_SHARD, OPT_PROGRESS,
	OPT_VERSION, OPT_MERGE, OPT_SHARDS, OPT_SHIP, OPT_DEVICE };

/* The options after the subcommand into o; 0, or an exit status to
 * return (usage, or 0 after --help / --version). */
static int
parse_opts(int argc, char *argv[], struct kg_attrs_opts *o,
    uint32_t *threads, int *shard_given, int *shards_given, int *done)
{
	static const struct option longopts[] = {
		{ "dataset", required_argument, NULL, 'd' },
		{ "schema", required_argument, NULL, 's' },
		{ "model", required_argument, NULL, 'm' },
		{ "output", required_argument, NULL, 'o' },
		{ "tables-dir", required_argument, NULL, OPT_TABLES },
		{ "text-command", required_argument, NULL, OPT_TEXTCMD },
		{ "max-errors", required_argument, NULL, OPT_MAXERR },
		{ "shard", required_argument, NULL, OPT_SHARD },
		{ "merge", no_argument, NULL, OPT_MERGE },
		{ "shards", required_argument, NULL, OPT_SHARDS },
		{ "ship-inputs", no_argument, NULL, OPT_SHIP },
		{ "threads", required_argument, NULL, 'j' },
		{ "device", required_argument, NULL, OPT_DEVICE },
		{ "force", no_argument, NULL, 'f' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "progress", no_argument, NULL, OPT_PROGRESS },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ NULL, 0, NULL, 0 }
	};
	int ch;

	*done = 0;
	optind = 2;
	while ((ch = kg_tool_getopt(argc, argv, "d:s:m:o:j:fqh", longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'd': o->dataset = optarg; break;
		case 's': o->schema = optarg; break;
		case 'm': o->model = optarg; break;
		case 'o': o->output = optarg; break;
		case OPT_TABLES: o->tables_dir = optarg; break;
		case OPT_TEXTCMD: o->text_command = optarg; break;
		case OPT_MAXERR:
			if (kg_parse_u64("--max-errors", optarg, 0,
			    UINT64_MAX, &o->max_errors) < 0)
				return KG_EXIT_USAGE;
			break;
		case OPT_SHARD:
			if (parse_shard(optarg, &o->shard, &o->n_shards) < 0)
				return KG_EXIT_USAGE;
			*shard_given = 1;
			break;
		case OPT_MERGE: o->merge = 1; break;
		case OPT_SHARDS:
			if (kg_parse_u32("--shards", optarg, 1, 1u << 16,
			    &o->n_shards) < 0)
				return KG_EXIT_USAGE;
			*shards_given = 1;
			break;
		case OPT_SHIP: o->ship = 1; break;
		case 'j':
			if (kg_parse_u32("--threads", optarg, 1, 4096,
			    threads) < 0)
				return KG_EXIT_USAGE;
			break;
		case OPT_DEVICE:
			if (kg_device_parse("--device", optarg,
			    &o->place.device) < 0)
				return KG_EXIT_USAGE;
			o->place.on_device = o->place.device.kind !=
			    KG_DEVICE_CPU;
			break;
		case 'f': o->force = 1; break;
		case 'q': o->quiet = 1; break;
		case OPT_PROGRESS: o->progress = 1; break;
		case 'h':
			*done = 1;
			return kg_tool_help(usage);
		case OPT_VERSION:
			*done = 1;
			return kg_tool_version("kg-encode-attrs");
		default:
			return kg_tool_usage_error();
		}
	}
	o->inputs = (const char *const *)argv + optind;
	o->n_inputs = (size_t)(argc - optind);
	return 0;
}

/* What the subcommand needs is there, and nothing it does not use;
 * 0 or KG_EXIT_USAGE after the message. */
static int
check_opts(const char *cmd, const struct kg_attrs_opts *o, int is_fit,
    int is_transform, int is_merge)
{
	if (o->output == NULL ||
	    (is_fit && (o->dataset == NULL || o->schema == NULL)) ||
	    (is_transform && (o->dataset == NULL || o->model == NULL)) ||
	    (is_merge && (o->model == NULL || o->n_inputs == 0))) {
		kg_error("%s: missing %s", cmd, is_fit ?
		    "-d, -s or -o" : is_transform ? "-d, -m or -o" :
		    "-m, -o or shard directories");
		return kg_tool_usage_error();
	}
	if ((!is_merge && o->n_inputs > 0) || (is_merge && (o->dataset ||
	    o->schema || o->tables_dir || o->text_command)) ||
	    (!is_transform && (o->n_shards != 1 || o->place.on_device)) ||
	    (is_fit && o->model) ||
	    (!is_fit && o->schema)) {
		kg_error("%s: option or argument not used by this subcommand",
		    cmd);
		return kg_tool_usage_error();
	}
	return 0;
}

/*
 * transform --merge takes --shards and --ship-inputs, not --shard;
 * nothing else takes them.  0 or KG_EXIT_USAGE after the message.
 */
static int
check_merge(struct kg_attrs_opts *o, int is_transform, int shard_given,
    int shards_given)
{
	if (o->merge && !is_transform) {
		kg_error("--merge is an option of transform (merge joins "
		    "shard directories)");
		return kg_tool_usage_error();
	}
	if (o->merge && shard_given) {
		kg_error("transform --merge encodes every shard: --shard i/n "
		    "is for one shard (--shards n sets how many)");
		return kg_tool_usage_error();
	}
	if (!o->merge && (shards_given || o->ship)) {
		kg_error("--shards and --ship-inputs need transform --merge");
		return kg_tool_usage_error();
	}
	if (o->merge && !shards_given)
		o->n_shards = 0;
	return 0;
}

/*
 * Where transformer text runs (--device): the host path for cpu, the
 * device path on the GPU for cuda once kg_backend_check says it can run
 * there (one line and KG_EXIT_USAGE when not, before any work).
 * KG_ENCODE_SEAM=cpu, a test hook, runs the device path of --device cuda
 * on the CPU backend, with or without a GPU.
 */
static int
device_ready(struct kg_attrs_place *pl)
{
	const char *seam = getenv("KG_ENCODE_SEAM");

	if (!pl->on_device)
		return 0;
	if (seam != NULL && strcmp(seam, "cpu") == 0) {
		pl->device = (struct kg_device)KG_DEVICE_INIT;
		return 0;
	}
	return kg_backend_check(&pl->device) < 0 ? KG_EXIT_USAGE : 0;
}

int
main(int argc, char *argv[])
{
	struct kg_attrs_opts o;
	const char *cmd;
	uint32_t threads = 0;
	int rc, done, is_fit, is_transform, is_merge, shard_given = 0;
	int shards_given = 0;

	kg_setprogname(argv[0]);
	/*
	 * Threaded OpenBLAS sums in an order that depends on the thread
	 * count, so the fitted text projection (and every feature made from
	 * it) would change with OPENBLAS_NUM_THREADS; the same inputs must
	 * give the same bytes.
	 */
	kg_compute_init();
	memset(&o, 0, sizeof(o));
	o.n_shards = 1;
	o.argc = argc;
	o.argv = argv;
	if (argc >= 2 && (strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "--help") == 0))
		return kg_tool_help(usage);
	if (argc >= 2 && strcmp(argv[1], "--version") == 0)
		return kg_tool_version("kg-encode-attrs");
	if (argc < 2) {
		kg_error("expected a subcommand (fit, transform, merge)");
		return kg_tool_usage_error();
	}
	cmd = argv[1];
	is_fit = strcmp(cmd, "fit") == 0;
	is_transform = strcmp(cmd, "transform") == 0;
	is_merge = strcmp(cmd, "merge") == 0;
	if (!is_fit && !is_transform && !is_merge) {
		kg_error("unknown subcommand '%s' (fit, transform, merge)",
		    cmd);
		return kg_tool_usage_error();
	}
	rc = parse_opts(argc, argv, &o, &threads, &shard_given, &shards_given,
	    &done);
	if (rc != 0 || done)
		return rc;
	rc = check_opts(cmd, &o, is_fit, is_transform, is_merge);
	if (rc == 0)
		rc = check_merge(&o, is_transform, shard_given, shards_given);
	if (rc == 0)
		rc = device_ready(&o.place);
	if (rc != 0)
		return rc;
	if (threads > 0)
		omp_set_num_threads((int)threads);
	if (o.merge)
		return kg_tool_exit(kg_attrs_run_transform_merge(&o));
	return kg_tool_exit(is_fit ? kg_attrs_run_fit(&o) : is_transform ?
	    kg_attrs_run_transform(&o) : kg_attrs_run_merge(&o));
}
