#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <jansson.h>
#include <omp.h>

#include "cli/cliopts.h"
#include "cli/tool.h"
#include "cli/device_opt.h"
#include "dist/dist.h"
#include "dist/ship.h"
#include "cli/gnn_cli.h"
#include "app/gnn_run.h"
#include "io/ckpt.h"
#include "io/manifest.h"
#include "core/util.h"

/* ---- command line (kg-train --model_name RGCN|RelGNN, gnn_train) ---- */

enum {
	G_CONFIG = 256, G_MODEL, G_DIM, G_HIDDEN, G_DECODER, G_FEATURES,
	G_EXPANDED, G_LAYERS, G_FANOUT, G_DROPOUT, G_EDROP, G_BASES, G_DECOMP,
	G_LEARNED, G_LR, G_REG, G_EPOCHS, G_MAXSTEP, G_BATCH, G_NEG, G_NEGC,
	G_POOL, G_LOSS, G_GAMMA, G_ADVT, G_SEED, G_FORCE, G_CKPT, G_RESUME,
	G_NOCKPT, G_KEEPCKPT, G_THREADS, G_BPE, G_CHUNK, G_BLOCKS,
	G_PROGRESS, G_LRSCALE, G_VALID, G_PATIENCE, G_XNEG, G_BUDGET,
	G_TARGET, G_IGNORED, G_DEVICE, G_GPU, G_SHIP
};

static const struct option gnn_opts[] = {
	{ "config", required_argument, NULL, G_CONFIG },
	{ "model_name", required_argument, NULL, G_MODEL },
	{ "encoder", required_argument, NULL, G_MODEL },
	{ "hidden_dim", required_argument, NULL, G_DIM },
	{ "gnn_hidden", required_argument, NULL, G_HIDDEN },
	{ "decoder", required_argument, NULL, G_DECODER },
	{ "features", required_argument, NULL, G_FEATURES },
	{ "expanded", required_argument, NULL, G_EXPANDED },
	{ "layers", required_argument, NULL, G_LAYERS },
	{ "fanout", required_argument, NULL, G_FANOUT },
	{ "dropout", required_argument, NULL, G_DROPOUT },
	{ "edge_dropout", required_argument, NULL, G_EDROP },
	{ "num_bases", required_argument, NULL, G_BASES },
	{ "decomposition", required_argument, NULL, G_DECOMP },
	{ "learned_only", no_argument, NULL, G_LEARNED },
	{ "lr", required_argument, NULL, G_LR },
	{ "regularization_coef", required_argument, NULL, G_REG },
	{ "epochs", required_argument, NULL, G_EPOCHS },
	{ "max_step", required_argument, NULL, G_MAXSTEP },
	{ "batch_size", required_argument, NULL, G_BATCH },
	{ "neg_sample_size", required_argument, NULL, G_NEG },
	{ "neg_candidates", required_argument, NULL, G_NEGC },
	{ "neg_pool_seeds", no_argument, NULL, G_POOL },
	{ "neg_exchange", no_argument, NULL, G_XNEG },
	{ "loss", required_argument, NULL, G_LOSS },
	{ "gamma", required_argument, NULL, G_GAMMA },
	{ "adversarial_temperature", required_argument, NULL, G_ADVT },
	{ "seed", required_argument, NULL, G_SEED },
	{ "force", no_argument, NULL, G_FORCE },
	{ "checkpoint_dir", required_argument, NULL, G_CKPT },
	{ "resume", no_argument, NULL, G_RESUME },
	{ "no_checkpoint", no_argument, NULL, G_NOCKPT },
	{ "keep_checkpoint", no_argument, NULL, G_KEEPCKPT },
	{ "num_thread", required_argument, NULL, G_THREADS },
	{ "device", required_argument, NULL, G_DEVICE },
	{ "gpu", required_argument, NULL, G_GPU },
	{ "batches_per_epoch", required_argument, NULL, G_BPE },
	{ "neg_chunk_size", required_argument, NULL, G_CHUNK },
	{ "blocks", no_argument, NULL, G_BLOCKS },
	{ "lr_scale_ranks", required_argument, NULL, G_LRSCALE },
	{ "progress", no_argument, NULL, G_PROGRESS },
	{ "valid_every", required_argument, NULL, G_VALID },
	{ "patience", required_argument, NULL, G_PATIENCE },
	{ "time_budget", required_argument, NULL, G_BUDGET },
	{ "ship_inputs", no_argument, NULL, G_SHIP },
	{ "target_mrr", required_argument, NULL, G_TARGET },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 }
};

struct gnn_cli {
	struct kg_gnn_train_opts o;
	struct kg_gnn_run r;
	uint32_t hidden, dim;
	uint32_t threads;	/* 0: OpenMP's default */
	int model_set;
	int progress;		/* --progress */
	struct kg_device device;	/* --device, --gpu */
	int ship;		/* --ship_inputs */
};

/* --fanout A,B: one whole number per graph layer. */
static int
parse_fanout(const char *arg, struct kg_gnn_train_opts *o)
{
	double fan[KG_GNN_MAX_LAYERS];
	size_t nf, k;

	if (kg_parse_double_list("--fanout", arg, 1, 1e6, fan,
	    KG_GNN_MAX_LAYERS, &nf) < 0)
		return -1;
	for (k = 0; k < nf; k++)
		if (fan[k] != floor(fan[k])) {
			kg_error("--fanout: %g is not a whole number", fan[k]);
			return -1;
		}
	o->nfanout = (uint32_t)nf;
	for (k = 0; k < nf; k++)
		o->fanout[k] = (uint32_t)fan[k];
	return 0;
}

static int
parse_decomp(const char *arg, enum kg_gnn_decomp *dc)
{
	if (strcmp(arg, "basis") == 0 || strcmp(arg, "block") == 0) {
		*dc = arg[1] == 'a' ? KG_GNN_BASIS : KG_GNN_BLOCK;
		return 0;
	}
	kg_error("--decomposition: unknown value '%s' (expected basis or "
	    "block)", arg);
	return -1;
}

static int
parse_lr_scale(const char *arg, enum kg_gnn_lr_scale *sc)
{
	if (strcmp(arg, "none") == 0)
		*sc = KG_GNN_LR_SCALE_NONE;
	else if (strcmp(arg, "sqrt") == 0)
		*sc = KG_GNN_LR_SCALE_SQRT;
	else if (strcmp(arg, "linear") == 0)
		*sc = KG_GNN_LR_SCALE_LINEAR;
	else {
		kg_error("--lr_scale_ranks: unknown value '%s' (expected none, "
		    "sqrt or linear)", arg);
		return -1;
	}
	return 0;
}

static int
gnn_apply(struct gnn_cli *c, int ch, const char *arg)
{
	struct kg_gnn_train_opts *o = &c->o;
	double x;

	switch (ch) {
	case G_MODEL:
		c->model_set = 1;
		return kg_gnn_encoder_parse(arg, &o->enc.encoder);
	case G_DIM: return kg_parse_u32("--hidden_dim", arg, 1, 1u << 14,
	    &c->dim);
	case G_HIDDEN: return kg_parse_u32("--gnn_hidden", arg, 1, 1u << 14,
	    &c->hidden);
	case G_DECODER: return kg_model_parse(arg, &o->decoder);
	case G_FEATURES: c->r.features = arg; return 0;
	case G_EXPANDED: c->r.expanded = arg; return 0;
	case G_LAYERS: return kg_parse_u32("--layers", arg, 0,
	    KG_GNN_MAX_LAYERS, &o->enc.n_layers);
	case G_FANOUT: return parse_fanout(arg, o);
	case G_DROPOUT:
		if (kg_parse_double("--dropout", arg, 0.0, 0.99, &x) < 0)
			return -1;
		o->enc.dropout = (float)x;
		return 0;
	case G_EDROP: return kg_parse_double("--edge_dropout", arg, 0.0, 0.99,
	    &o->edge_dropout);
	case G_BASES: return kg_parse_u32("--num_bases", arg, 1, 1u << 12,
	    &o->enc.n_bases);
	case G_DECOMP: return parse_decomp(arg, &o->enc.decomp);
	case G_LEARNED: o->enc.learned_only = 1; return 0;
	case G_LR: return kg_parse_double("--lr", arg, 1e-12, 10.0, &o->lr);
	case G_REG: return kg_parse_double("--regularization_coef", arg, 0.0,
	    10.0, &o->reg);
	case G_EPOCHS: return kg_parse_u32("--epochs", arg, 1, 1u << 24,
	    &o->epochs);
	case G_MAXSTEP: return kg_parse_u64("--max_step", arg, 1, UINT64_MAX,
	    &o->max_step);
	case G_BATCH: return kg_parse_u32("--batch_size", arg, 1, 1u << 24,
	    &o->batch_size);
	case G_NEG: return kg_parse_u32("--neg_sample_size", arg, 1, 1u << 16,
	    &o->neg);
	case G_NEGC: return kg_parse_u32("--neg_candidates", arg, 1, 64,
	    &o->neg_candidates);
	case G_POOL: o->pool_seeds = 1; return 0;
	case G_XNEG: o->neg_exchange = 1; return 0;
	case G_LOSS:
		if (strcasecmp(arg, "Logsigmoid") == 0)
			arg = "logistic";
		return kg_loss_parse(arg, &o->loss.kind);
	case G_GAMMA: return kg_parse_double("--gamma", arg, -1e6, 1e6,
	    &o->gamma);
	case G_ADVT: return kg_parse_double("--adversarial_temperature", arg,
	    0.0, 1e6, &o->loss.adv_temp);
	case G_SEED: return kg_parse_u64("--seed", arg, 0, UINT64_MAX,
	    &o->seed);
	case 'f':
	case G_FORCE: c->r.force = 1; return 0;
	case G_CKPT: c->r.checkpoint_dir = arg; return 0;
	case G_RESUME: c->r.resume = 1; return 0;
	case G_NOCKPT: c->r.no_checkpoint = 1; return 0;
	case G_KEEPCKPT: c->r.keep_checkpoint = 1; return 0;
	case G_THREADS: return kg_parse_u32("--num_thread", arg, 1, 1024,
	    &c->threads);
	case G_DEVICE: return kg_cli_device(arg, &c->device);
	case G_GPU: return kg_cli_gpu(arg, &c->device);
	case G_BPE: return kg_parse_u32("--batches_per_epoch", arg, 1,
	    1u << 30, &o->batches_per_epoch);
	case G_CHUNK: return kg_parse_u32("--neg_chunk_size", arg, 1,
	    1u << 24, &o->neg_chunk);
	case G_BLOCKS: o->blocks = 1; return 0;
	case G_LRSCALE: return parse_lr_scale(arg, &o->lr_scale);
	case G_PROGRESS: c->progress = 1; return 0;
	case G_SHIP: c->ship = 1; return 0;
	case G_VALID: return kg_parse_u32("--valid_every", arg, 0, 1u << 24,
	    &o->valid_every);
	case G_PATIENCE: return kg_parse_u32("--patience", arg, 0, 1u << 24,
	    &o->patience);
	case G_BUDGET: return kg_parse_double("--time_budget", arg, 0, 1e9,
	    &o->time_budget);
	case G_TARGET: return kg_parse_double("--target_mrr", arg, 0, 1,
	    &o->target_mrr);
	case 'q': o->quiet = 1; return 0;
	case G_IGNORED: return 0;
	}
	return -1;
}

/* gnn_apply() for kg_cli_config. */
static int
gnn_apply_key(void *ctx, int ch, const char *arg)
{
	return gnn_apply(ctx, ch, arg);
}

/*
 * Whether a is --model_name as getopt_long takes it: spelled with '-' or
 * '_', or shortened to any prefix ("--mo": no other option of kg-train
 * begins so); *eq: the length of its name part (a[*eq] is '=' or '\0').
 */
static int
model_name_opt(const char *a, size_t *eq)
{
	static const char full[] = "model_name";
	size_t n, k;

	if (strncmp(a, "--", 2) != 0)
		return 0;
	n = strcspn(a + 2, "=");
	if (n < 2 || n > sizeof(full) - 1)
		return 0;
	for (k = 0; k < n; k++)
		if (a[2 + k] != full[k] && !(full[k] == '_' && a[2 + k] == '-'))
			return 0;
	*eq = n + 2;
	return 1;
}

int
kg_gnn_cli_wanted(int argc, char *argv[])
{
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = NULL;
		size_t eq;

		if (strcmp(a, "--") == 0)
			break;
		if (model_name_opt(a, &eq)) {
			if (a[eq] == '=')
				v = a + eq + 1;
			else if (i + 1 < argc)
				v = argv[i + 1];
		} else if ((strcmp(a, "--config") == 0 && i + 1 < argc) ||
		    strncmp(a, "--config=", 9) == 0) {
			json_t *root = json_load_file(a[8] == '=' ? a + 9 :
			    argv[i + 1], 0, NULL);
			json_t *m = json_object_get(root, "model_name");
			int gnn = json_is_string(m) && (strcasecmp(
			    json_string_value(m), "rgcn") == 0 ||
			    strcasecmp(json_string_value(m), "relgnn") == 0);

			json_decref(root);
			if (gnn)
				return 1;
			continue;
		}
		if (v != NULL && (strcasecmp(v, "rgcn") == 0 ||
		    strcasecmp(v, "relgnn") == 0))
			return 1;
	}
	return 0;
}

void
kg_gnn_cli_usage(FILE *f)
{
	fprintf(f,
"usage: kg-train --model_name RGCN|RelGNN [-q] [--config FILE]\n"
"                [--decoder DistMult|TransE_l1|TransE_l2|ComplEx]\n"
"                [--features DIR] [--learned_only] [--expanded DIR]\n"
"                [--layers N] [--gnn_hidden N] [--hidden_dim N]\n"
"                [--decomposition basis|block] [--num_bases N]\n"
"                [--dropout P] [--edge_dropout P] [--fanout N,N]\n"
"                [--loss NAME] [--gamma G]\n"
"                [--adversarial_temperature T] [--lr LR]\n"
"                [--regularization_coef C] [--batch_size N]\n"
"                [--neg_sample_size N] [--neg_chunk_size N]\n"
"                [--neg_candidates N] [--neg_pool_seeds] [--neg_exchange]\n"
"                [--blocks]\n"
"                [--epochs N] [--batches_per_epoch N]\n"
"                [--lr_scale_ranks none|sqrt|linear] [--max_step N]\n"
"                [--seed N] [--num_thread N] [--device cpu|cuda[:N]]\n"
"                [--gpu N] [--checkpoint_dir DIR]\n"
"                [--resume] [--no_checkpoint] [--keep_checkpoint]\n"
"                [--valid_every N] [--patience N] [--time_budget S]\n"
"                [--target_mrr M] [--progress] [-f | --force]\n"
"                DATASET_DIR MODEL_DIR\n");
}

/*
 * OpenMP threads when neither --num_thread nor OMP_NUM_THREADS says: the
 * cores shared out among the ranks mpirun started on this node (0: keep
 * OpenMP's default, one per core).  Every rank taking every core makes
 * the threads of several ranks spin against each other, many times
 * slower than one thread each.
 */
static uint32_t
default_threads(void)
{
	const char *v = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
	unsigned long local = v != NULL ? strtoul(v, NULL, 10) : 0;
	unsigned long n;

	if (local < 2)
		return 0;
	n = (unsigned long)omp_get_num_procs() / local;
	return n ? (uint32_t)n : 1;
}

/* --ship_inputs: a rank's expanded part and the top manifest only. */
static int
keep_part(size_t i, const char *rel, int rank)
{
	char part[32];

	if (i != 2 || strcmp(rel, "manifest.json") == 0)
		return 1;
	snprintf(part, sizeof(part), "part-%03d/", rank);
	return strncmp(rel, part, strlen(part)) == 0;
}

/*
 * --ship_inputs: rank 0's dataset, features and each rank's expanded part
 * copied to that rank's own disk over MPI (dist/ship.h), and the run
 * reading them there.  0 or -1 on every rank.
 */
static int
ship_inputs(struct kg_gnn_run *r, struct kg_dist *d, char **local,
    char *shipped[3])
{
	const char *dirs[3] = { r->dataset, r->features, r->expanded };

	if (kg_dist_ship_trees(d, dirs, 3, keep_part, local, shipped) < 0)
		return -1;
	r->dataset = shipped[0];
	if (shipped[1] != NULL)
		r->features = shipped[1];
	if (shipped[2] != NULL)
		r->expanded = shipped[2];
	return 0;
}

/* kg_gnn_cli over av, kg_cli_argv's copy of argv, which it leaves to the
 * caller to free. */
static int
gnn_cli_run(int argc, char *argv[], char **av)
{
	struct gnn_cli c;
	struct kg_gnn_train_opts z = KG_GNN_TRAIN_OPTS_INIT;
	struct kg_dist d = KG_DIST_INIT;
	const char *in[3], *seam;
	char *local = NULL, *shipped[3] = { NULL, NULL, NULL };
	int ch, rc, i;
	uint32_t k;

	memset(&c, 0, sizeof(c));
	c.o = z;
	c.hidden = 64;
	c.dim = 32;
	c.r.argc = argc;
	c.r.argv = argv;
	if (kg_cli_configs(argc, av, gnn_opts, G_CONFIG, G_IGNORED,
	    gnn_apply_key, &c) < 0)
		return KG_EXIT_USAGE;
	optind = 1;
	while ((ch = kg_tool_getopt(argc, av, "hqf", gnn_opts, NULL)) != -1) {
		if (ch == 'h') {
			kg_gnn_cli_usage(stdout);
			return KG_EXIT_OK;
		}
		if (ch == 'V') {
			printf("%s %s\n", kg_progname(), KG_VERSION);
			return KG_EXIT_OK;
		}
		if (ch == '?')
			return kg_tool_usage_error();
		if (ch != G_CONFIG && gnn_apply(&c, ch, optarg) < 0)
			return KG_EXIT_USAGE;
	}
	if (argc - optind != 2) {
		kg_error("expected DATASET_DIR MODEL_DIR, got %d operand%s",
		    argc - optind, argc - optind == 1 ? "" : "s");
		return kg_tool_usage_error();
	}
	if (!c.model_set) {
		kg_error("--model_name RGCN or RelGNN is required");
		return KG_EXIT_USAGE;
	}
	c.r.dataset = av[optind];
	c.r.output = av[optind + 1];
	c.o.enc.dims[0] = c.hidden;
	for (k = 1; k < c.o.enc.n_layers; k++)
		c.o.enc.dims[k] = c.hidden;
	c.o.enc.dims[c.o.enc.n_layers] = c.dim;
	if (kg_gnn_train_opts_check(&c.o) < 0)
		return KG_EXIT_USAGE;
	/* KG_TRAIN_SEAM=cpu, a test hook, runs the device step on the CPU
	 * backend (as kg-train's shallow models). */
	seam = getenv("KG_TRAIN_SEAM");
	c.o.seam = seam != NULL && strcmp(seam, "cpu") == 0;
	c.o.device = c.device;
	if (c.device.kind != KG_DEVICE_CPU && kg_backend_check(&c.device) < 0)
		return KG_EXIT_USAGE;
	if ((c.device.kind != KG_DEVICE_CPU || c.o.seam) &&
	    kg_gnn_train_device_check(&c.o) < 0)
		return KG_EXIT_USAGE;
	in[0] = c.r.dataset;
	in[1] = c.r.features;
	in[2] = c.r.expanded;
	if (!c.r.no_checkpoint && kg_ckpt_check_rerun(c.r.checkpoint_dir,
	    c.r.output, c.r.resume, c.r.force, in, 3) < 0)
		return KG_EXIT_USAGE;
	c.o.progress = !c.o.quiet && (c.progress || isatty(2));
	if (c.threads == 0 && getenv("OMP_NUM_THREADS") == NULL)
		c.threads = default_threads();
	if (c.threads > 0)
		omp_set_num_threads((int)c.threads);
	if (kg_dist_init(&d, &argc, &argv) < 0)
		return KG_EXIT_FAIL;
	if (c.ship && d.size > 1 && ship_inputs(&c.r, &d, &local, shipped) < 0)
		rc = -1;
	else
		rc = kg_gnn_train_run(&c.r, &c.o, &d);
	if (rc < 0 && d.size > 1)
		kg_dist_abort(&d, KG_EXIT_FAIL);
	if (local != NULL)
		kg_rmtree(local);
	free(local);
	for (i = 0; i < 3; i++)
		free(shipped[i]);
	kg_dist_finalize(&d);
	return rc == KG_ERR_VERSION ? KG_EXIT_VERSION :
	    rc < 0 ? KG_EXIT_FAIL : KG_EXIT_OK;
}

int
kg_gnn_cli(int argc, char *argv[])
{
	char **av = kg_cli_argv(argc, argv, NULL, 0);
	int rc;

	/* av's strings stay alive until the run is over: its options point
	 * into them.  (MPI_Init may change argc; av keeps its own count.) */
	rc = gnn_cli_run(argc, argv, av);
	kg_cli_argv_free(argc, av);
	return rc;
}
